// SPDX-License-Identifier: GPL-2.0

//! The `unsafe` layer of the rust-tun modules: safe abstractions over the
//! C objects a net driver touches, in the shape of the kernel's own Rust
//! abstractions. Every `unsafe` block of a module lives here (the driver
//! crates deny `unsafe_code`). In three parts:
//!
//! - the core, for any net driver: net devices and their ops tables, rtnl
//!   link ops, ethtool, the netdevice notifier, `sk_buff`s and their
//!   queues and rings, eBPF socket-filter programs, NAPI contexts, locks,
//!   RCU, rtnl, wait queues and timers, misc character devices, debugfs,
//!   sysfs attributes, per-CPU counters, credentials and module parameters
//!   (one file or directory per concept). rust_dummy is built on the core alone;
//! - [`tun`]: what is shaped by tun's ABI (the socket that stands for a
//!   file, vhost-net's `proto_ops` and exports, `IFF_NAPI_FRAGS`, the tun
//!   LSM hooks, the vnet header, the RFS record step), built into
//!   rust_tun only (the `rtun_driver` cfg, `Kbuild`);
//! - [`bench`]: rust_tun's measuring apparatus.
//!
//! The layer names no driver item: drivers implement its op traits
//! ([`RtnlLinkOps`], [`NetDeviceOps`], [`EthtoolOps`],
//! [`NetDeviceNotifierOps`], [`FileOps`], [`DebugfsFileOps`],
//! [`DebugfsDevFileOps`], [`DeviceAttributeOps`], [`TimerCallback`]) and
//! generic adapters here turn each into its C table (a `FooVTable`) at
//! compile time. C's
//! inline functions and macros are called through the one-line helpers of
//! `helpers/` (the tun part's in `helpers/tun/`; inlined into the crate
//! through LLVM bitcode where the toolchain allows, see `Kbuild`), and C
//! structs' fields are read through bindgen's types of them.

// The core is a library that drivers use parts of (rust_dummy much less
// than rust_tun): an item one driver does not use is not dead. The tun
// part and the benchmark, built for rust_tun alone, warn again.
#![allow(dead_code, unused_imports, unused_macros)]

use crate::bindings;
use core::ptr;

/// The errnos the driver returns beyond `kernel::prelude`'s on 6.12:
/// `kernel::error::code`'s consts on 7.3, [`compat`]'s shims of them on
/// 6.12 (whose `kernel::error::code` lacks them).
pub(crate) mod errno {
    pub(crate) use super::compat::{EADDRNOTAVAIL, EBADFD, EMSGSIZE, EOPNOTSUPP};
}

// `struct module` has 128-bit fields; only its address is ever used.
#[allow(improper_ctypes)]
extern "C" {
    /// This module's `struct module` (`THIS_MODULE`), which the module
    /// loader places in `.gnu.linkonce.this_module`.
    static __this_module: kernel::types::Opaque<bindings::module>;
}

/// `THIS_MODULE`: the module's own `struct module`, valid for as long as
/// any of its code is. The `owner` of every `file_operations` here, so an
/// open file pins the module (without it, closing a file after `rmmod`
/// would call freed code).
const fn this_module() -> *mut bindings::module {
    // Only the address is taken (no `unsafe` needed).
    ptr::addr_of!(__this_module).cast_mut().cast()
}

/// Returns an all-zero `T`: the "unset" value of a C ops table or struct.
const fn zeroed<T: ZeroIsValid>() -> T {
    // SAFETY: `ZeroIsValid` is only implemented for C structs made of
    // integers, raw pointers and `Option`s of function pointers, for which
    // the all-zero bit pattern is valid (it is what C's `{ 0 }` gives).
    unsafe { core::mem::zeroed() }
}

/// C structs for which all-zero bytes are a valid value.
///
/// # Safety
///
/// Implementors must be valid when all their bytes are zero.
unsafe trait ZeroIsValid {}
// SAFETY: Integers, pointers and optional function pointers only.
unsafe impl ZeroIsValid for bindings::net_device_ops {}
// SAFETY: Integers, pointers and optional function pointers only.
unsafe impl ZeroIsValid for bindings::ethtool_ops {}
// SAFETY: Integers and bitmaps only.
unsafe impl ZeroIsValid for bindings::ethtool_link_ksettings {}
// SAFETY: Integers, pointers and optional function pointers only.
unsafe impl ZeroIsValid for bindings::file_operations {}
// SAFETY: Integers, pointers, a list head and optional function pointers.
unsafe impl ZeroIsValid for bindings::miscdevice {}
// SAFETY: Integers, pointers, a list head and optional function pointers.
unsafe impl ZeroIsValid for bindings::rtnl_link_ops {}
// SAFETY: Integers, pointers, a name array and optional function pointers.
unsafe impl ZeroIsValid for bindings::proto {}
// SAFETY: Integers, a module pointer and optional function pointers only.
unsafe impl ZeroIsValid for bindings::proto_ops {}

#[cfg(rtun_driver = "tun")]
pub(crate) mod bench;
mod bpf;
mod chrdev;
pub(crate) mod compat;
mod cred;
mod debugfs;
mod layout;
mod napi;
mod netdev;
mod param;
mod pcpu;
pub(crate) mod rcu;
mod ring;
mod skb;
mod skb_queue;
mod static_key;
mod sync;
mod sysfs;
#[cfg(rtun_driver = "tun")]
pub(crate) mod tun;
pub(crate) mod xdp;

// What the drivers use, by module (no glob re-exports: each item's home
// is one `use` away; the tun part's and the benchmark's are under
// `sys::tun` and `sys::bench`).
pub(crate) use bpf::SkFilterProg;
#[cfg(CONFIG_COMPAT)]
pub(crate) use chrdev::COMPAT_IFREQ_LEN;
pub(crate) use chrdev::{
    impl_file_unbound, Fasync, File, FileBound, FileOps, FileVTable, IoctlAbi, MiscDevice,
    MiscDeviceOptions, MiscDeviceRegistration, SeqFile,
};
pub(crate) use cred::{
    capable_net_admin, current_euid_is, from_kgid_munged, from_kuid_munged, in_egroup, make_kgid,
    make_kuid,
};
pub(crate) use debugfs::{
    DebugfsDevFileOps, DebugfsFileOps, DebugfsFileVTable, DebugfsRoot, DebugfsRootRegistration,
    DevDebugfs, TextBuf,
};
/// `NET_SKB_PAD` (include/linux/skbuff.h), evaluated in `bindings_helper.h`.
pub(crate) const NET_SKB_PAD: usize = bindings::RTUN_NET_SKB_PAD as usize;
pub(crate) use napi::{Napi, NapiPoll, NAPI_POLL_WEIGHT};
pub(crate) use netdev::builder::{DevSetup, NameAssign, NetDeviceBuilder};
pub(crate) use netdev::device::{NetDevice, IFF_UP};
pub(crate) use netdev::ethtool::{Channels, DrvInfo, EthtoolOps, EthtoolVTable, LinkKsettings};
pub(crate) use netdev::flags::{DevFlags, Features, PrivFlags};
pub(crate) use netdev::link::{
    is_valid_ether_addr, nla_total_size, LinkAttrs, NlMsg, RtnlLinkOps, RtnlLinkRegistration,
    RtnlLinkVTable, ETH_ALEN,
};
pub(crate) use netdev::netns::{module_get, module_put, NetNs};
pub(crate) use netdev::notifier::{
    DevEvent, NetDeviceNotifierOps, NetDeviceNotifierRegistration, NetDeviceNotifierVTable,
};
pub(crate) use netdev::ops::{NetDeviceOps, NetDeviceVTable, Stats64, TxResult};
pub(crate) use netdev::rcudev::{InUninit, RcuDev};
pub(crate) use param::module_params;
pub(crate) use pcpu::{smp_processor_id, PerCpuCounters};
pub(crate) use ring::{RingConsumer, RingSlots, TunPtr, TxRing};
pub(crate) use skb::{DropReason, IovIterDest, IovIterSource, SkBuff};
pub(crate) use static_key::{static_branch_unlikely, JUMP_LABELS};
pub(crate) use sync::lock::{
    cond_resched, new_spinlock_bh, signal_pending, smp_mb, smp_mb__after_atomic, BhDisabled, BhOff,
    SpinLockBh,
};
pub(crate) use sync::publish::{OncePin, RcuArc, Unpublished, UnpublishedBatch};
pub(crate) use sync::rtnl::{Rtnl, RtnlLocked};
pub(crate) use sync::time::{jiffies, rcu_cookie, round_jiffies_up, Timed, TimerCallback, HZ};
pub(crate) use sync::wait::{poll, PollTable};
pub(crate) use sysfs::{AttrGroup, AttrList, DeviceAttributeOps, DeviceAttributeVTable, SysfsBuf};
