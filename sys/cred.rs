// SPDX-License-Identifier: GPL-2.0

//! Credentials, for `TUNSETOWNER`, `TUNSETGROUP` and `tun_permitted()`.

use crate::bindings;
use core::ffi::c_int;

// ---------------------------------------------------------------------------
// Credentials (`TUNSETOWNER`, `TUNSETGROUP`, `tun_permitted()`).

/// `make_kuid(current_user_ns(), uid)`; `None` if invalid.
pub(crate) fn make_kuid(uid: isize) -> Option<u32> {
    // SAFETY: Process context.
    let k = unsafe { bindings::make_kuid(bindings::current_user_ns(), uid as bindings::uid_t) };
    // SAFETY: Only compares.
    unsafe { bindings::uid_valid(k) }.then_some(k.val)
}

/// `make_kgid(current_user_ns(), gid)`; `None` if invalid.
pub(crate) fn make_kgid(gid: isize) -> Option<u32> {
    // SAFETY: Process context.
    let k = unsafe { bindings::make_kgid(bindings::current_user_ns(), gid as bindings::gid_t) };
    // SAFETY: Only compares.
    unsafe { bindings::gid_valid(k) }.then_some(k.val)
}

/// `uid_eq(current_euid(), kuid)`.
pub(crate) fn current_euid_is(kuid: u32) -> bool {
    // SAFETY: Process context.
    unsafe { bindings::uid_eq(bindings::current_euid(), bindings::kuid_t { val: kuid }) }
}

/// `in_egroup_p(kgid)`.
pub(crate) fn in_egroup(kgid: u32) -> bool {
    // SAFETY: Process context.
    unsafe { bindings::in_egroup_p(bindings::kgid_t { val: kgid }) != 0 }
}

/// `from_kuid_munged(current_user_ns(), kuid)`: the uid as the caller's
/// user namespace sees it (the overflow uid if unmapped).
pub(crate) fn from_kuid_munged(kuid: u32) -> u32 {
    // SAFETY: Process context.
    unsafe {
        bindings::from_kuid_munged(bindings::current_user_ns(), bindings::kuid_t { val: kuid })
    }
}

/// `from_kgid_munged(current_user_ns(), kgid)`.
pub(crate) fn from_kgid_munged(kgid: u32) -> u32 {
    // SAFETY: Process context.
    unsafe {
        bindings::from_kgid_munged(bindings::current_user_ns(), bindings::kgid_t { val: kgid })
    }
}

/// `capable(CAP_NET_ADMIN)`, in the initial user namespace.
pub(crate) fn capable_net_admin() -> bool {
    // SAFETY: Process context.
    unsafe { bindings::capable(bindings::CAP_NET_ADMIN as c_int) }
}
