// SPDX-License-Identifier: GPL-2.0

//! The packet `tun_get_user()` builds: an skb of its own or the
//! `IFF_NAPI_FRAGS` context's, read as an [`SkBuff`] either way, and
//! dropped with tun.c's reason.

use crate::sys::tun::{NapiFrags, NapiFragsLocked};
use crate::sys::{DropReason, SkBuff};

/// A written packet: an skb of our own, or (`IFF_NAPI_FRAGS`) one taken
/// from the NAPI context, which must go back through it. Both read as
/// [`SkBuff`].
pub(super) enum Pkt<'a> {
    Skb(SkBuff),
    Frags(NapiFrags<'a>),
}

/// A written packet ready for delivery: the `IFF_NAPI_FRAGS` one with its
/// context's mutex held.
pub(super) enum Locked<'a> {
    Skb(SkBuff),
    Frags(NapiFragsLocked<'a>),
}

impl core::ops::Deref for Locked<'_> {
    type Target = SkBuff;
    fn deref(&self) -> &SkBuff {
        match self {
            Locked::Skb(s) => s,
            Locked::Frags(f) => f,
        }
    }
}

impl core::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut SkBuff {
        match self {
            Locked::Skb(s) => s,
            Locked::Frags(f) => f,
        }
    }
}

impl Pkt<'_> {
    /// `kfree_skb_reason()`: a drop, and why.
    pub(super) fn drop_reason(self, reason: DropReason) {
        match self {
            Pkt::Skb(s) => s.drop_reason(reason),
            Pkt::Frags(f) => f.drop_reason(reason),
        }
    }
}

impl Locked<'_> {
    /// `kfree_skb_reason()`: a drop, and why (the frags mutex goes too).
    pub(super) fn drop_reason(self, reason: DropReason) {
        match self {
            Locked::Skb(s) => s.drop_reason(reason),
            Locked::Frags(f) => f.drop_reason(reason),
        }
    }
}

impl core::ops::Deref for Pkt<'_> {
    type Target = SkBuff;
    fn deref(&self) -> &SkBuff {
        match self {
            Pkt::Skb(s) => s,
            Pkt::Frags(f) => f,
        }
    }
}

impl core::ops::DerefMut for Pkt<'_> {
    fn deref_mut(&mut self) -> &mut SkBuff {
        match self {
            Pkt::Skb(s) => s,
            Pkt::Frags(f) => f,
        }
    }
}
