// SPDX-License-Identifier: GPL-2.0

//! Misuses of the unsafe layer that must not compile: each case is built
//! alone by `scripts/compile-fail.sh` (`make RTUN_COMPILE_FAIL=<case>`),
//! which passes only if rustc rejects it with the error named beside the
//! case. They are the soundness rules of `sys/` written as code: a
//! reference read out of an rtnl-protected slot cannot outlive a
//! replacement of the slot, a device found under rtnl cannot leave the
//! lock's section, rtnl-locked data is never shared and mutable at once,
//! and an `RcuArc` is only as thread-safe as what it holds.

#![allow(dead_code, unused_variables, unused_imports)]

use crate::sys::{NetDevice, NetNs, RcuArc, Rtnl, RtnlLocked};
use core::sync::atomic::{AtomicU32, Ordering};

/// E0502: `replace` needs `&mut Rtnl` while the `&T` from `get_rtnl`
/// still borrows it (the `&T` would be used after the grace period freed it).
#[cfg(rtun_compile_fail = "ref_across_replace")]
fn ref_across_replace(slot: &RcuArc<AtomicU32>) {
    Rtnl::with(|rtnl| {
        let v = slot.get_rtnl(rtnl);
        drop(slot.replace(None, rtnl));
        v.map(|v| v.load(Ordering::Relaxed))
    });
}

/// E0502: shared and mutable access to rtnl-locked data at once.
#[cfg(rtun_compile_fail = "rtnl_locked_aliasing")]
fn rtnl_locked_aliasing(data: &RtnlLocked<u32>) {
    Rtnl::with(|rtnl| {
        let shared = data.get(rtnl);
        *data.get_mut(rtnl) += 1;
        *shared
    });
}

/// A device found under rtnl cannot leave the lock's section (it may be
/// freed by `rtnl_unlock()`): "borrowed data escapes" / "lifetime may not
/// live long enough".
#[cfg(rtun_compile_fail = "device_escapes_rtnl")]
fn device_escapes_rtnl(net: &NetNs) {
    let dev = Rtnl::with(|rtnl| NetDevice::get_by_name(net, kernel::c_str!("x"), rtnl));
    drop(dev);
}

/// E0277: `RcuArc<T>` is `Sync` only if `Arc<T>` is.
#[cfg(rtun_compile_fail = "rcuarc_needs_sync")]
fn rcuarc_needs_sync() {
    fn assert_sync<T: Sync>() {}
    assert_sync::<RcuArc<core::cell::Cell<u32>>>();
}

/// E0277: `RtnlLocked<T>` is `Sync` only for `T: Send`.
#[cfg(rtun_compile_fail = "rtnl_locked_needs_send")]
fn rtnl_locked_needs_send() {
    fn assert_sync<T: Sync>() {}
    assert_sync::<RtnlLocked<*mut u8>>();
}
