// SPDX-License-Identifier: GPL-2.0

//! IFF_NAPI_FRAGS: the write builds its skb in the context and hands it to
//! GRO itself (tun.c's `tun_napi_alloc_frags()` and the `frags` branches of
//! `tun_get_user()`).
//!
//! Deliberate difference: tun.c fills `napi->skb` in place, holding
//! `napi_mutex` from `napi_get_frags()` to `napi_gro_frags()`, across the
//! copy from user space, which can sleep on a fault for as long as the
//! writer wants; the device's deletion (`tun_napi_del()` ->
//! `__netif_napi_del()` -> `napi_free_frags()`) does not take the mutex
//! and frees the skb under the writer. Here the write takes the skb out of
//! the context (`napi->skb = NULL`, under the mutex, not across any access
//! to user memory) and owns it while it fills it; it puts it back and calls
//! `napi_gro_frags()` only under the mutex again, after
//! `napi_schedule_prep()` succeeded on a context that is still this
//! device's. The deletion takes the mutex around `__netif_napi_del()`, so
//! it only ever waits for those two short sections, never for user memory.
//! Documentation/rust_tun.rst, "IFF_NAPI_FRAGS and device deletion", has the
//! C fix and its reproducer.

use super::sock::Sock;
use crate::bindings;
use crate::sys::errno::EMSGSIZE;
use crate::sys::napi::{State, FRAGS_MAX_LEN};
use crate::sys::netdev::device::NetDevice;
use crate::sys::rcu;
use crate::sys::skb::{DropReason, IovIterSource, SkBuff};
use core::ffi::{c_int, c_uint, c_ulong};
use core::mem::ManuallyDrop;
use core::ptr;
use core::sync::atomic::Ordering;
use kernel::error::to_result;
use kernel::prelude::*;

impl Sock {
    pub(super) fn napi_lock(&self) {
        // SAFETY: The socket's initialised mutex; process context (may
        // sleep). Every holder releases it without touching user memory.
        unsafe { bindings::mutex_lock(self.napi_mutex()) }
    }

    /// # Safety
    ///
    /// The caller holds the frags mutex (taken by [`Sock::napi_lock`]).
    pub(super) unsafe fn napi_unlock(&self) {
        // SAFETY: Held by the caller (contract).
        unsafe { bindings::mutex_unlock(self.napi_mutex()) }
    }

    /// Takes the context's frags skb (`napi_get_frags()`: the one a GRO
    /// call left for reuse, or a new one) out of the context: the caller
    /// owns it. `EBUSY` if the context was deleted, `ENOMEM`.
    fn napi_take_frags(&self) -> Result<SkBuff> {
        self.napi_lock();
        let skb = if self.1.get() == State::None {
            Err(EBUSY)
        } else {
            let napi = self.napi_ptr();
            // SAFETY: The context is on its device's list (state, which
            // `NapiContext::del` changes under the mutex we hold), so `napi->dev`
            // is live; `napi->skb` is only touched under the mutex, and
            // `napi_get_frags()` wants bottom halves off. What it returns
            // is the context's skb, which we take: nobody else references
            // it once `napi->skb` is cleared.
            unsafe {
                bindings::local_bh_disable();
                let skb = bindings::napi_get_frags(napi);
                (*napi).skb = ptr::null_mut();
                bindings::local_bh_enable();
                if skb.is_null() {
                    Err(ENOMEM)
                } else {
                    Ok(SkBuff::from_raw(skb))
                }
            }
        };
        // SAFETY: Taken above, in this function.
        unsafe { self.napi_unlock() };
        skb
    }

    /// `tun_napi_alloc_frags()`: takes an skb from the context
    /// (`napi_get_frags()`) and lays it out as the writer's buffer is: the
    /// rest of its current segment in the linear part, each further
    /// segment (1 to `PAGE_SIZE` bytes) one page fragment. `len` is what
    /// `from` holds. `EMSGSIZE` for more segments than an skb has fragments
    /// or a frame larger than `ETH_MAX_MTU` allows, `EINVAL` for an empty or
    /// too large segment, `EBUSY` if the context was deleted, `ENOMEM`.
    /// May sleep.
    ///
    /// Deliberate difference: a buffer that is not a plain user iovec
    /// (tun.c reads any iterator as one) is `EINVAL`.
    pub(crate) fn napi_alloc_frags(
        &self,
        len: usize,
        from: &mut IovIterSource<'_>,
    ) -> Result<NapiFragsUnfilled<'_>> {
        let it = from.as_raw();
        // SAFETY: `from` is valid for the call; these read its type and
        // segment count.
        if !unsafe { bindings::iter_is_iovec(it) || bindings::iter_is_ubuf(it) } {
            return Err(EINVAL);
        }
        // SAFETY: As above.
        let nr_segs = unsafe { (*it).__bindgen_anon_2.nr_segs };
        if nr_segs > c_ulong::from(bindings::RTUN_MAX_SKB_FRAGS) + 1 || len > FRAGS_MAX_LEN {
            return Err(EMSGSIZE);
        }
        let skb = self.napi_take_frags()?;
        let p = skb.as_ptr();
        // SAFETY: `p` is our fresh frags skb (dropping `skb` on an error
        // frees it with its fragments); the iterator's current segment and
        // the `nr_segs - 1` after it are user iovecs (checked above), whose
        // lengths are read.
        unsafe {
            let linear = bindings::iov_iter_single_seg_count(it);
            to_result(bindings::__skb_grow(p, linear as c_uint))?;
            (*p).len = len as c_uint;
            (*p).data_len = (len - linear) as c_uint;
            (*p).truesize += (len - linear) as c_uint;
            let iov = bindings::iter_iov(it);
            for i in 1..nr_segs {
                let fragsz = (*iov.add(i as usize)).iov_len;
                if fragsz == 0 || fragsz > bindings::RTUN_PAGE_SIZE as usize {
                    return Err(EINVAL);
                }
                let frag = bindings::netdev_alloc_frag(fragsz as c_uint);
                if frag.is_null() {
                    return Err(ENOMEM);
                }
                let page = bindings::virt_to_head_page(frag);
                let base = bindings::page_address(page).cast::<u8>();
                let off = frag.cast::<u8>().offset_from(base) as c_int;
                bindings::skb_fill_page_desc(p, (i - 1) as c_int, page, off, fragsz as c_int);
            }
        }
        Ok(NapiFragsUnfilled {
            sock: self,
            skb,
            len,
        })
    }
}

/// A frags skb taken from the socket's context, laid out for a write but
/// not filled yet. Dropping it frees it.
///
/// # Invariants
///
/// `skb` is laid out for `len` bytes and nobody else references it; no
/// safe code reads its bytes before [`NapiFragsUnfilled::copy_from_iter`]
/// has written them.
pub(crate) struct NapiFragsUnfilled<'a> {
    sock: &'a Sock,
    skb: SkBuff,
    len: usize,
}

impl<'a> NapiFragsUnfilled<'a> {
    /// `skb_copy_datagram_from_iter()` of the frame: the filled skb, or
    /// `EFAULT` (the skb is freed, `SKB_UCOPY_FAULT`). May sleep (a user page fault), holding
    /// nothing but the skb.
    pub(crate) fn copy_from_iter(self, from: &mut IovIterSource<'_>) -> Result<NapiFrags<'a>> {
        // SAFETY: Our skb, laid out for `len` bytes (invariant); the
        // iterator is valid for the call.
        let err = unsafe {
            bindings::skb_copy_datagram_from_iter(
                self.skb.as_ptr(),
                0,
                from.as_raw(),
                self.len as c_int,
            )
        };
        if err != 0 {
            self.skb.drop_reason(DropReason::SKB_UCOPY_FAULT);
            return Err(EFAULT);
        }
        Ok(NapiFrags {
            sock: self.sock,
            skb: self.skb,
        })
    }
}

/// A filled `IFF_NAPI_FRAGS` skb, ours, for the write path's checks (it
/// derefs to [`SkBuff`]) until [`NapiFrags::lock`] and
/// [`NapiFragsLocked::gro_frags`] hand it to GRO in its context. Dropping
/// it frees it.
pub(crate) struct NapiFrags<'a> {
    sock: &'a Sock,
    skb: SkBuff,
}

impl core::ops::Deref for NapiFrags<'_> {
    type Target = SkBuff;
    fn deref(&self) -> &SkBuff {
        &self.skb
    }
}

impl core::ops::DerefMut for NapiFrags<'_> {
    fn deref_mut(&mut self) -> &mut SkBuff {
        &mut self.skb
    }
}

impl<'a> NapiFrags<'a> {
    /// `kfree_skb_reason()`: a drop, and why.
    pub(crate) fn drop_reason(self, reason: DropReason) {
        self.skb.drop_reason(reason);
    }

    /// Takes the socket's frags mutex (tun.c's `napi_mutex`) for the hand
    /// over to GRO. May sleep: call it before entering the RCU read
    /// section in which [`NapiFragsLocked::gro_frags`] runs.
    pub(crate) fn lock(self) -> NapiFragsLocked<'a> {
        self.sock.napi_lock();
        // INVARIANT: The mutex is held from here.
        NapiFragsLocked {
            sock: self.sock,
            skb: ManuallyDrop::new(self.skb),
        }
    }
}

/// A filled `IFF_NAPI_FRAGS` skb, ours, with the socket's frags mutex held.
/// Dropping it frees the skb and releases the mutex (neither sleeps: a
/// drop under RCU is fine).
///
/// # Invariants
///
/// The socket's frags mutex is held by this; `skb` is ours (not the
/// context's).
pub(crate) struct NapiFragsLocked<'a> {
    sock: &'a Sock,
    skb: ManuallyDrop<SkBuff>,
}

impl core::ops::Deref for NapiFragsLocked<'_> {
    type Target = SkBuff;
    fn deref(&self) -> &SkBuff {
        &self.skb
    }
}

impl core::ops::DerefMut for NapiFragsLocked<'_> {
    fn deref_mut(&mut self) -> &mut SkBuff {
        &mut self.skb
    }
}

impl NapiFragsLocked<'_> {
    /// `kfree_skb_reason()`, then the mutex goes: a drop, and why.
    pub(crate) fn drop_reason(self, reason: DropReason) {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: The skb is ours and the mutex held (invariant); `this`
        // is not dropped, so this is the last use of either.
        unsafe {
            ManuallyDrop::take(&mut this.skb).drop_reason(reason);
            this.sock.napi_unlock();
        }
    }

    /// The end of tun.c's `frags` branch: the Ethernet header back in
    /// front (`eth_type_trans()` pulled it), the headers the flow dissector
    /// finds (`eth_get_headlen()`) checked to be in the linear part, then
    /// the skb into the context and `napi_gro_frags()`, synchronously.
    /// `ENOMEM` when the headers are not linear (deliberate difference:
    /// tun.c also `WARN_ON_ONCE`s, which a user can trigger), `EBUSY` when
    /// the context is being polled, disabled, deleted or no longer `dev`'s;
    /// the skb is freed on either.
    pub(crate) fn gro_frags<P>(self, dev: &NetDevice<P>, _rcu: &rcu::Guard) -> Result {
        let sock = self.sock;
        let skb = self.skb.as_ptr();
        // SAFETY: Our filled skb; it has the headroom `napi_alloc_skb()`
        // reserved (at least `NET_SKB_PAD`, and the Ethernet header was
        // pulled from it); `dev` is live.
        let headlen_ok = unsafe {
            bindings::skb_push(skb, bindings::ETH_HLEN);
            let linear = bindings::skb_headlen(skb);
            bindings::eth_get_headlen(dev.as_ptr(), (*skb).data.cast(), linear) <= linear
        };
        if !headlen_ok {
            return Err(ENOMEM);
        }
        // The context's state and device change under rtnl and, for a
        // delete, under the mutex we hold: still on `dev`'s list.
        if sock.1.get() != State::Enabled || sock.1.dev.load(Ordering::Relaxed) != dev.as_ptr() {
            return Err(EBUSY);
        }
        let napi = sock.napi_ptr();
        let mut this = ManuallyDrop::new(self);
        // SAFETY: The context is on `dev`'s list (checked above, under the
        // mutex), so `napi_schedule_prep()` may be tried; when it succeeds
        // the context is ours for this one GRO call. `napi->skb` is only
        // touched under the mutex (or by GRO, which we run): the skb a
        // previous call left for reuse is set aside, ours goes in, and
        // `napi_gro_frags()` consumes it (or keeps it for reuse, as the
        // context's: either way no longer ours). The one set aside goes
        // back if the context has none now, else it is freed. Bottom
        // halves off as `napi_gro_frags()` wants. Then the mutex goes.
        unsafe {
            if !bindings::napi_schedule_prep(napi) {
                ManuallyDrop::drop(&mut this.skb);
                sock.napi_unlock();
                return Err(EBUSY);
            }
            let skb = ManuallyDrop::take(&mut this.skb).into_raw();
            bindings::local_bh_disable();
            let cached = (*napi).skb;
            (*napi).skb = skb;
            bindings::napi_gro_frags(napi);
            if !cached.is_null() {
                if (*napi).skb.is_null() {
                    (*napi).skb = cached;
                } else {
                    bindings::kfree_skb(cached);
                }
            }
            bindings::napi_complete(napi);
            bindings::local_bh_enable();
            sock.napi_unlock();
        }
        Ok(())
    }
}

impl Drop for NapiFragsLocked<'_> {
    fn drop(&mut self) {
        // SAFETY: The skb is ours and the mutex held (invariant); this is
        // the last use of either.
        unsafe {
            ManuallyDrop::drop(&mut self.skb);
            self.sock.napi_unlock();
        }
    }
}
