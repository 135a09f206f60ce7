// SPDX-License-Identifier: GPL-2.0

//! Misuses of the unsafe layer that must not compile: `scripts/compile-fail.sh`
//! builds every case at once (`make RTUN_COMPILE_FAIL="<case> ..."`) and
//! passes only if rustc rejects each case, within the case's own lines,
//! with the error named beside it. They are the soundness rules of `sys/` written as code: a
//! reference read out of an rtnl-protected slot cannot outlive a
//! replacement of the slot, a device found under rtnl cannot leave the
//! lock's section, rtnl-locked data is never shared and mutable at once,
//! an `RcuArc` is only as thread-safe as what it holds, and a per-device
//! debugfs file reads only the kind of device it was made for, and a poll
//! table takes only wait queues that live as long as the polled file.

#![allow(dead_code, unused_variables, unused_imports)]

use crate::sys::{DebugfsFops, DevTextFile, NetDevice, NetNs, RcuArc, Rtnl, RtnlLocked, TextBuf};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;

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
    let dev = Rtnl::with(|rtnl| {
        NetDevice::get_by_name(net, kernel::c_str!("x"), &crate::link::TUN_LINK_OPS, rtnl)
    });
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

/// E0308: a per-device debugfs file made for devices holding a `u32` cannot
/// be put on a device holding a `Tun` (its `show` would read a `Tun` as a
/// `u32`).
#[cfg(rtun_compile_fail = "dev_file_of_other_priv")]
fn dev_file_of_other_priv(dev: &crate::TunDev) {
    struct Other;
    impl DevTextFile for Other {
        type Priv = u32;
        fn show(dev: &NetDevice<u32>, t: &mut TextBuf) -> Result {
            Ok(())
        }
    }
    static OTHER_FOPS: DebugfsFops<u32> = DebugfsFops::dev_text::<Other>();
    Rtnl::with(|rtnl| {
        dev.priv_().debugfs.create(
            &crate::DEBUGFS_ROOT,
            dev,
            &[(kernel::c_str!("x"), &OTHER_FOPS)],
            rtnl,
        )
    });
}

/// A wait queue that does not live as long as the polled file's private
/// data cannot be registered with its poll table: epoll keeps the entry
/// until the file's release ("lifetime may not live long enough").
#[cfg(rtun_compile_fail = "poll_wait_foreign_queue")]
fn poll_wait_foreign_queue<'f>(table: &crate::sys::PollTable<'f>, other: &crate::sys::Sock) {
    table.wait(other.wq());
}
