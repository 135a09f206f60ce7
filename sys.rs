// SPDX-License-Identifier: GPL-2.0

//! The thin `unsafe` layer of rust_tun: safe abstractions over the C
//! objects a net driver touches (`net_device`, `sk_buff`, `iov_iter`, wait
//! queues, RCU, rtnl, timers, the misc device, debugfs, rtnl link ops, the
//! netdevice notifier, LSM hooks), in the shape of the kernel's own Rust abstractions.
//! It knows nothing of the driver: the driver implements traits
//! ([`RtnlLinkOps`], [`NetDeviceOps`], [`NetDeviceNotifierOps`], [`FileOps`],
//! [`DebugfsFileOps`], [`DebugfsDevFileOps`], [`TimerCallback`]) and generic adapters here
//! turn them into the C tables at compile time. Every `unsafe` block of the
//! module lives here (this file and `sys/`, one file per concept). C's
//! inline functions and macros are called through the one-line helpers of
//! `helpers/` (inlined into the crate through LLVM bitcode where the
//! toolchain allows, see `Kbuild`), and C structs' fields are read through
//! bindgen's types of them.

use crate::bindings;
use core::cell::UnsafeCell;
use core::ptr;

/// Errno values that `kernel::error::code` does not name.
#[allow(non_snake_case)]
pub(crate) mod errno {
    use crate::bindings;
    use kernel::error::Error;

    /// `EBADFD`: the file is not attached to a device.
    pub(crate) fn EBADFD() -> Error {
        Error::from_errno(-(bindings::EBADFD as i32))
    }

    /// `EMSGSIZE`: a write larger than any frame.
    pub(crate) fn EMSGSIZE() -> Error {
        Error::from_errno(-(bindings::EMSGSIZE as i32))
    }

    /// `EOPNOTSUPP`.
    pub(crate) fn EOPNOTSUPP() -> Error {
        Error::from_errno(-(bindings::EOPNOTSUPP as i32))
    }

    /// `EADDRNOTAVAIL`: not a usable hardware address.
    // Used by rust_dummy (dummy.rs), not by rust_tun.
    #[allow(dead_code)]
    pub(crate) fn EADDRNOTAVAIL() -> Error {
        Error::from_errno(-(bindings::EADDRNOTAVAIL as i32))
    }
}

/// A `static` that the kernel writes to (for example, a `miscdevice` whose
/// list head `misc_register` links in).
///
/// # Invariants
///
/// Rust code only hands out the raw pointer; the kernel serialises its own
/// writes (under `misc_mtx` or the rtnl lock).
pub(crate) struct KernelStatic<T>(UnsafeCell<T>);

// SAFETY: Rust never creates references into the cell (see the type
// invariant); the kernel synchronises its own accesses.
unsafe impl<T> Sync for KernelStatic<T> {}

impl<T> KernelStatic<T> {
    /// Wraps `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self(UnsafeCell::new(value))
    }

    const fn get(&self) -> *mut T {
        self.0.get()
    }
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

mod bench;
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
mod rps;
mod security;
mod skb;
mod skb_queue;
mod sock;
mod sockops;
mod static_key;
mod sync;
mod sysfs;
pub(crate) mod vhost;
mod vnet;
mod xdp;

// What the drivers use, by module (no glob re-exports: each item's home
// is one `use` away).
pub(crate) use bench::{hide, rdtsc};
#[cfg(CONFIG_COMPAT)]
pub(crate) use chrdev::COMPAT_IFREQ_LEN;
pub(crate) use chrdev::{
    impl_file_socket, Fasync, File, FileOps, FileSocket, FileVTable, IoctlAbi, MiscDevice,
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
pub(crate) use napi::frags::{NapiFrags, NapiFragsLocked};
pub(crate) use napi::{Napi, NapiPoll, NAPI_POLL_WEIGHT};
pub(crate) use netdev::builder::{DevSetup, NameAssign, NetDeviceBuilder};
pub(crate) use netdev::device::{NetDevice, IFF_UP, IFRU_LEN, SOCKADDR_LEN};
pub(crate) use netdev::ethtool::{Channels, DrvInfo, EthtoolOps, EthtoolVTable, LinkKsettings};
pub(crate) use netdev::flags::{DevFlags, Features, PrivFlags};
pub(crate) use netdev::link::{
    nla_total_size, LinkAttrs, NlMsg, RtnlLinkOps, RtnlLinkRegistration, RtnlLinkVTable,
};
pub(crate) use netdev::rcudev::{InUninit, RcuDev};
// Used by rust_dummy (dummy.rs), not by rust_tun.
#[allow(unused_imports)]
pub(crate) use netdev::link::{is_valid_ether_addr, ETH_ALEN};
pub(crate) use netdev::netns::{module_get, module_put, NetNs};
pub(crate) use netdev::notifier::{
    DevEvent, NetDeviceNotifierOps, NetDeviceNotifierRegistration, NetDeviceNotifierVTable,
};
pub(crate) use netdev::ops::{NetDeviceOps, NetDeviceVTable, Stats64, TxResult};
pub(crate) use param::{param_dropin, param_flow_ageing, param_micro_bench_calls, param_unguarded};
// Used by rust_dummy (dummy.rs), not by rust_tun.
#[allow(unused_imports)]
pub(crate) use param::param_numdummies;
pub(crate) use pcpu::PerCpuCounters;
pub(crate) use ring::{RingConsumer, RingSlots, SkbRing};
pub(crate) use rps::{
    rps_record_sock_flow, rps_sock_flow_entry, GlobalFlowTable, PrivateFlowTable, SockFlowTable,
};
pub(crate) use security::{security_tun_dev_create, TunSecurity};
pub(crate) use skb::{DropReason, IovIterDest, IovIterSource, SkBuff};
pub(crate) use sock::{FasyncBand, Proto, Sock, SockFprog, SockRef, SOCK_FPROG_LEN};
pub(crate) use sockops::{BatchOffer, BatchVerdict, RecvMsg, SendMsg, SockOps};
pub(crate) use static_key::{
    for_each_jump_site, rfs_needed_count, static_branch_unlikely, SiteInsn, JUMP_LABELS,
};
pub(crate) use sync::lock::{
    cond_resched, new_spinlock_bh, signal_pending, smp_mb, smp_mb__after_atomic, BhDisabled, BhOff,
    SpinLockBh,
};
pub(crate) use sync::publish::{OncePin, RcuArc, Unpublished, UnpublishedBatch};
pub(crate) use sync::rtnl::{Rtnl, RtnlLocked};
pub(crate) use sync::time::{jiffies, rcu_cookie, round_jiffies_up, Timed, TimerCallback, HZ};
pub(crate) use sync::wait::{poll, PollTable};
pub(crate) use sysfs::{AttrGroup, AttrList, DeviceAttributeOps, DeviceAttributeVTable, SysfsBuf};
pub(crate) use vnet::{VnetHdr, VNET_F_NEEDS_CSUM, VNET_HDR_LEN, VNET_HDR_TNL_SIZE};
pub(crate) use xdp::XdpBuff;
