// SPDX-License-Identifier: GPL-2.0

//! Credentials, for `TUNSETOWNER`, `TUNSETGROUP` and `tun_permitted()`.

use crate::bindings;
use core::ffi::c_long;

// ---------------------------------------------------------------------------
// Credentials (`TUNSETOWNER`, `TUNSETGROUP`, `tun_permitted()`).

/// `make_kuid(current_user_ns(), uid)`; `None` if invalid.
pub(crate) fn make_kuid(uid: isize) -> Option<u32> {
    // SAFETY: Process context.
    let k = unsafe { bindings::rtun_make_kuid(uid as c_long) };
    (k != u32::MAX).then_some(k)
}

/// `make_kgid(current_user_ns(), gid)`; `None` if invalid.
pub(crate) fn make_kgid(gid: isize) -> Option<u32> {
    // SAFETY: Process context.
    let k = unsafe { bindings::rtun_make_kgid(gid as c_long) };
    (k != u32::MAX).then_some(k)
}

/// `uid_eq(current_euid(), kuid)`.
pub(crate) fn current_euid_is(kuid: u32) -> bool {
    // SAFETY: Process context.
    unsafe { bindings::rtun_current_euid_is(kuid) }
}

/// `in_egroup_p(kgid)`.
pub(crate) fn in_egroup(kgid: u32) -> bool {
    // SAFETY: Process context.
    unsafe { bindings::rtun_in_egroup(kgid) }
}

/// `from_kuid_munged(current_user_ns(), kuid)`: the uid as the caller's
/// user namespace sees it (the overflow uid if unmapped).
pub(crate) fn from_kuid_munged(kuid: u32) -> u32 {
    // SAFETY: Process context.
    unsafe { bindings::rtun_from_kuid_munged(kuid) }
}

/// `from_kgid_munged(current_user_ns(), kgid)`.
pub(crate) fn from_kgid_munged(kgid: u32) -> u32 {
    // SAFETY: Process context.
    unsafe { bindings::rtun_from_kgid_munged(kgid) }
}

/// `capable(CAP_NET_ADMIN)`, in the initial user namespace.
pub(crate) fn capable_net_admin() -> bool {
    // SAFETY: Process context.
    unsafe { bindings::rtun_capable_net_admin() }
}
