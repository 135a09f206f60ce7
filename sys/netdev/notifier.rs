// SPDX-License-Identifier: GPL-2.0

//! The netdevice notifier: the [`NetDeviceNotifierOps`] a driver implements, of
//! [`DevEvent`]s, and the [`NetDeviceNotifierVTable`] that turns them into a
//! `notifier_block`.

use super::device::NetDevice;
use super::link::RtnlLinkVTable;
use crate::bindings;
use crate::sys::sync::rtnl::Rtnl;
use core::ffi::{c_int, c_ulong, c_void};
use core::ptr;
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::types::Opaque;

/// The netdevice events a driver hears of, for its own devices.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DevEvent {
    /// `NETDEV_CHANGE_TX_QUEUE_LEN`.
    ChangeTxQueueLen,
    /// `NETDEV_UP`.
    Up,
    /// `NETDEV_REGISTER` (also at the end of a namespace move).
    Register,
    /// `NETDEV_UNREGISTER` (also at the start of a namespace move).
    Unregister,
    /// `NETDEV_CHANGENAME`.
    ChangeName,
}

/// A driver's netdevice notifier: events of its own devices.
pub(crate) trait NetDeviceNotifierOps: 'static {
    /// The private area.
    type Priv: Sync + 'static;
    /// The link ops whose devices are the driver's.
    fn link() -> &'static RtnlLinkVTable<Self::Priv>;
    /// An event, under rtnl. An error vetoes it (`NOTIFY_BAD`, which the
    /// caller sees as `EPERM`, as tun.c answers).
    fn event<'g>(dev: &'g NetDevice<Self::Priv>, ev: DevEvent, rtnl: &mut Rtnl<'g>) -> Result;
}

/// A `notifier_block` for a [`NetDeviceNotifierOps`], built at compile time: a
/// `static` of the driver's.
pub(crate) struct NetDeviceNotifierVTable(Opaque<bindings::notifier_block>);

// SAFETY: `NetDeviceNotifierVTable` has no method that reads or writes the
// `notifier_block`: its address goes to
// `(un)register_netdevice_notifier` only, and the kernel links it into its
// chain under rtnl.
unsafe impl Sync for NetDeviceNotifierVTable {}

impl NetDeviceNotifierVTable {
    pub(crate) const fn new<T: NetDeviceNotifierOps>() -> Self {
        Self(Opaque::new(bindings::notifier_block {
            notifier_call: Some(notifier_call::<T>),
            next: ptr::null_mut(),
            priority: 0,
        }))
    }
}

/// The notifier's C callback.
///
/// # Safety
///
/// Called by the netdevice notifier chain, under rtnl, with a valid `ptr`.
unsafe extern "C" fn notifier_call<T: NetDeviceNotifierOps>(
    _nb: *mut bindings::notifier_block,
    event: c_ulong,
    ptr: *mut c_void,
) -> c_int {
    let ev = match event {
        e if e == bindings::RTUN_NETDEV_CHANGE_TX_QUEUE_LEN as c_ulong => {
            DevEvent::ChangeTxQueueLen
        }
        e if e == bindings::RTUN_NETDEV_UP as c_ulong => DevEvent::Up,
        e if e == bindings::RTUN_NETDEV_REGISTER as c_ulong => DevEvent::Register,
        e if e == bindings::RTUN_NETDEV_UNREGISTER as c_ulong => DevEvent::Unregister,
        e if e == bindings::RTUN_NETDEV_CHANGENAME as c_ulong => DevEvent::ChangeName,
        _ => return bindings::RTUN_NOTIFY_DONE,
    };
    // SAFETY: `ptr` is a `netdev_notifier_info` of a live device.
    let dev = unsafe { bindings::netdev_notifier_info_to_dev(ptr.cast()) };
    if !T::link().owns(dev) {
        return bindings::RTUN_NOTIFY_DONE;
    }
    // SAFETY: The driver's (its link ops say so), alive for the call. The
    // chain runs under rtnl; the driver raises these events under its own
    // token only through `&mut Rtnl` methods (state change, register,
    // unregister), so the token made here is the only one in use.
    let r = unsafe { Rtnl::assume_held(|rtnl| T::event(NetDevice::from_raw(dev), ev, rtnl)) };
    match r {
        Ok(()) => bindings::RTUN_NOTIFY_DONE,
        Err(_) => bindings::RTUN_NOTIFY_BAD,
    }
}

/// Registration of a netdevice notifier, undone on drop.
pub(crate) struct NetDeviceNotifierRegistration(&'static NetDeviceNotifierVTable);

impl NetDeviceNotifierRegistration {
    /// `register_netdevice_notifier()`.
    pub(crate) fn register(n: &'static NetDeviceNotifierVTable) -> Result<Self> {
        // SAFETY: A static notifier block, registered once.
        to_result(unsafe { bindings::register_netdevice_notifier(n.0.get()) })?;
        Ok(Self(n))
    }
}

impl Drop for NetDeviceNotifierRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`.
        unsafe { bindings::unregister_netdevice_notifier(self.0 .0.get()) };
    }
}
