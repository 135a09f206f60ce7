// SPDX-License-Identifier: GPL-2.0

//! Allocation and registration: [`NetDeviceBuilder`] (how a device is
//! allocated: its link ops, name, queues, namespace, with a named setter
//! each), [`UnregisteredNetDevice`] (a device allocated but not registered
//! yet), [`DevSetup`] (a device being set up), [`NameAssign`].

use super::device::NetDevice;
use super::ethtool::EthtoolVTable;
use super::flags::{DevFlags, Features, PrivFlags};
use super::link::RtnlLinkVTable;
use super::netns::NetNs;
use super::ops::NetDeviceVTable;
use crate::bindings;
use crate::sys::sync::rtnl::Rtnl;
use crate::sys::sysfs::AttrGroup;
use core::ffi::{c_int, c_ulong};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::c_str;
use kernel::prelude::*;
use kernel::types::Opaque;

/// How to allocate a device of the link ops `link` (whose devices hold a
/// `P`): `alloc_netdev_mqs()`'s arguments, each with a named setter, then
/// [`NetDeviceBuilder::alloc`]. By default, as `alloc_etherdev()`: named
/// `eth%d` ([`NameAssign::Unknown`]), one queue each way, in the initial
/// network namespace.
///
/// ```ignore
/// let dev = NetDeviceBuilder::new(&DUMMY_LINK_OPS)
///     .name(c_str!("dummy%d"))
///     .name_assign(NameAssign::Enum)
///     .alloc(init)?;
/// dev.register(rtnl)?;
/// ```
pub(crate) struct NetDeviceBuilder<'a, P: 'static> {
    link: &'static RtnlLinkVTable<P>,
    name: &'a CStr,
    assign: NameAssign,
    queues: u32,
    net: Option<&'a NetNs>,
}

impl<'a, P: Sync> NetDeviceBuilder<'a, P> {
    /// A device of `link`'s, set up by its driver's
    /// [`RtnlLinkOps::setup`](super::link::RtnlLinkOps::setup).
    pub(crate) const fn new(link: &'static RtnlLinkVTable<P>) -> Self {
        Self {
            link,
            name: c_str!("eth%d"),
            assign: NameAssign::Unknown,
            queues: 1,
            net: None,
        }
    }

    /// The name, or a pattern with one `%d` the core numbers.
    pub(crate) const fn name(mut self, name: &'a CStr) -> Self {
        self.name = name;
        self
    }

    /// How the name was chosen (`name_assign_type`).
    pub(crate) const fn name_assign(mut self, assign: NameAssign) -> Self {
        self.assign = assign;
        self
    }

    /// The number of transmit and of receive queues.
    pub(crate) const fn queues(mut self, queues: u32) -> Self {
        self.queues = queues;
        self
    }

    /// The network namespace (by default the initial one).
    pub(crate) const fn netns(mut self, net: &'a NetNs) -> Self {
        self.net = Some(net);
        self
    }

    /// `alloc_netdev_mqs()` with the link ops' set-up, then `init` in the
    /// private area: a device to finish setting up and register.
    pub(crate) fn alloc(self, init: impl PinInit<P, Error>) -> Result<UnregisteredNetDevice<P>> {
        const { assert!(core::mem::align_of::<P>() <= bindings::RTUN_NETDEV_ALIGN as usize) };
        let link = self.link;
        // SAFETY: `name` is NUL-terminated; the set-up function fits.
        let p = unsafe {
            bindings::alloc_netdev_mqs(
                core::mem::size_of::<P>() as c_int,
                crate::sys::compat::cstr_ptr(self.name).cast(),
                self.assign as u8,
                Some(link.1),
                self.queues,
                self.queues,
            )
        };
        let p = NonNull::new(p).ok_or(ENOMEM)?;
        // SAFETY: The private area is at least `size_of::<P>()` bytes,
        // aligned to `NETDEV_ALIGN` (checked above), unused, and never
        // moves: the right place to pin-initialise the `P`.
        let priv_ = unsafe { bindings::netdev_priv(p.as_ptr()).cast::<P>() };
        // SAFETY: As above.
        if let Err(e) = unsafe { crate::sys::compat::pin_init_in_place(init, priv_) } {
            // SAFETY: Ours, never registered, nothing in the private area.
            unsafe { bindings::free_netdev(p.as_ptr()) };
            return Err(e);
        }
        // SAFETY: We own the unregistered device; the `P` is initialised,
        // so `link` (whose devices hold a `P`) may claim it.
        unsafe {
            (*p.as_ptr()).rtnl_link_ops = link.as_ptr();
            if let Some(net) = self.net {
                bindings::dev_net_set(p.as_ptr(), net.0.as_ptr());
            }
        }
        // INVARIANT: From here the private area holds a `P`; the device
        // drops it until registration hands that job to `priv_destructor`.
        Ok(UnregisteredNetDevice(p, PhantomData))
    }
}

/// A device allocated but not registered yet. Dropping it frees it. It
/// derefs to the [`DevSetup`] of the device, to finish its set-up.
///
/// # Invariants
///
/// The device's private area holds an initialised `P`; it is not
/// registered; it is owned here alone.
pub(crate) struct UnregisteredNetDevice<P>(NonNull<bindings::net_device>, PhantomData<P>);

impl<P> core::ops::Deref for UnregisteredNetDevice<P> {
    type Target = DevSetup<P>;

    fn deref(&self) -> &DevSetup<P> {
        // SAFETY: The unregistered device we own (type invariants).
        unsafe { &*self.0.as_ptr().cast::<DevSetup<P>>() }
    }
}

impl<P> core::ops::DerefMut for UnregisteredNetDevice<P> {
    fn deref_mut(&mut self) -> &mut DevSetup<P> {
        // SAFETY: The unregistered device we own alone (type invariants),
        // borrowed mutably with it.
        unsafe { DevSetup::from_raw(self.0.as_ptr()) }
    }
}

/// How a device's name was chosen (`NET_NAME_*`, sysfs `name_assign_type`).
#[derive(Clone, Copy)]
#[repr(u8)]
pub(crate) enum NameAssign {
    /// `NET_NAME_UNKNOWN`.
    Unknown = bindings::NET_NAME_UNKNOWN as u8,
    /// `NET_NAME_ENUM`: enumerated by the kernel (`dummy%d`).
    Enum = bindings::NET_NAME_ENUM as u8,
}

impl<P: Sync> UnregisteredNetDevice<P> {
    /// `register_netdevice()`, which calls the ops' `ndo_init` (see
    /// [`NetDeviceOps::init`]).
    pub(crate) fn register<'g>(self, _rtnl: &mut Rtnl<'g>) -> Result<&'g NetDevice<P>> {
        let p = core::mem::ManuallyDrop::new(self).0;
        // SAFETY: rtnl held; the device is fully set up, its private area
        // holds a `P` and is ours (the builder's, given up above); on
        // failure `register_raw` dropped the `P` (or left it to the
        // destructor), and the device is freed (or marked to be).
        unsafe {
            if let Err(e) = register_raw::<P>(p.as_ptr()) {
                bindings::free_netdev(p.as_ptr());
                return Err(e);
            }
        }
        // SAFETY: Registered now: freed, if at all, only in
        // `rtnl_unlock()`, after `'g`.
        Ok(unsafe { NetDevice::from_raw(p.as_ptr()) })
    }
}

/// A device being set up: the argument of [`RtnlLinkOps::setup`], and what an
/// [`UnregisteredNetDevice`] derefs to. Its private area is not reachable from
/// here (during `setup` it does not exist yet).
///
/// # Invariants
///
/// An unregistered device that the holder of the `&mut DevSetup` sets up
/// alone; its ops, once set through this, are for devices holding a `P`.
#[repr(transparent)]
pub(crate) struct DevSetup<P>(Opaque<bindings::net_device>, PhantomData<P>);

impl<P> DevSetup<P> {
    /// # Safety
    ///
    /// `dev` is an unregistered device that nobody else touches for `'a`,
    /// which will hold a `P` (its link ops or builder are for a `P`).
    pub(super) unsafe fn from_raw<'a>(dev: *mut bindings::net_device) -> &'a mut Self {
        // SAFETY: `DevSetup` is transparent over `net_device`; as the
        // caller guarantees.
        unsafe { &mut *dev.cast() }
    }

    fn dev(&mut self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// Sets the device's `net_device_ops` (for devices holding a `P`).
    pub(crate) fn set_ops(&mut self, ops: &'static NetDeviceVTable<P>) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).netdev_ops = &ops.0 };
    }

    /// Sets the device's `ethtool_ops` (for devices holding a `P`); without
    /// them the core's defaults apply (`default_ethtool_ops`).
    pub(crate) fn set_ethtool_ops(&mut self, ops: &'static EthtoolVTable<P>) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).ethtool_ops = &ops.0 };
    }

    /// `ether_setup()`: an Ethernet device (link header, address length,
    /// MTU 1500, `ARPHRD_ETHER`, `IFF_BROADCAST | IFF_MULTICAST`,
    /// `IFF_TX_SKB_SHARING`, `tx_queue_len` 1000).
    pub(crate) fn ether_setup(&mut self) {
        // SAFETY: We own the unregistered device.
        unsafe { bindings::ether_setup(self.dev()) }
    }

    /// `eth_hw_addr_random()`: a random locally administered address
    /// (`NET_ADDR_RANDOM`).
    pub(crate) fn eth_hw_addr_random(&mut self) {
        // SAFETY: We own the unregistered device.
        unsafe { bindings::eth_hw_addr_random(self.dev()) }
    }

    /// The link layer: `dev->type` (`ARPHRD_*`), `hard_header_len`,
    /// `addr_len`.
    pub(crate) fn set_link_layer(&mut self, type_: u32, hard_header_len: u16, addr_len: u8) {
        let dev = self.dev();
        // SAFETY: We own the unregistered device.
        unsafe {
            (*dev).type_ = type_ as u16;
            (*dev).hard_header_len = hard_header_len;
            (*dev).addr_len = addr_len;
        }
    }

    /// `dev->hard_header_len`.
    pub(crate) fn hard_header_len(&mut self) -> u16 {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).hard_header_len }
    }

    /// `dev->mtu`.
    pub(crate) fn set_mtu(&mut self, mtu: u32) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).mtu = mtu };
    }

    /// `dev->flags`.
    pub(crate) fn flags(&mut self) -> DevFlags {
        // SAFETY: We own the unregistered device.
        DevFlags::from_bits(unsafe { (*self.dev()).flags })
    }

    /// Sets `dev->flags`.
    pub(crate) fn set_flags(&mut self, flags: DevFlags) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).flags = flags.bits() };
    }

    /// Sets `flags` in `dev->priv_flags`.
    pub(crate) fn priv_flags_set(&mut self, flags: PrivFlags) {
        // SAFETY: We own the unregistered device; `priv_flags` is a
        // bitfield of its fast-path group (bindgen's accessors).
        unsafe {
            let fast = &mut (*self.dev()).__bindgen_anon_1.__bindgen_anon_1;
            fast.set_priv_flags(fast.priv_flags() | c_ulong::from(flags.bits()));
        }
    }

    /// Clears `flags` in `dev->priv_flags`.
    pub(crate) fn priv_flags_clear(&mut self, flags: PrivFlags) {
        // SAFETY: As in `priv_flags_set`.
        unsafe {
            let fast = &mut (*self.dev()).__bindgen_anon_1.__bindgen_anon_1;
            fast.set_priv_flags(fast.priv_flags() & !c_ulong::from(flags.bits()));
        }
    }

    /// `dev->lltx = true`: lockless transmit, `ndo_start_xmit` runs
    /// without the queue's lock (the driver updates `trans_start` itself,
    /// [`NetDevice::txq_trans_cond_update`]).
    pub(crate) fn set_lltx(&mut self) {
        // SAFETY: We own the unregistered device; `lltx` is a bitfield of
        // its fast-path group (bindgen's accessor).
        unsafe { (*self.dev()).__bindgen_anon_1.__bindgen_anon_1.set_lltx(1) }
    }

    /// `dev->xdp_features`: the XDP the device offers (`NETDEV_XDP_ACT_*`,
    /// [`crate::sys::xdp::NETDEV_XDP_ACT_BASIC`] and its kin).
    pub(crate) fn set_xdp_features(&mut self, features: u32) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).xdp_features = features };
    }

    /// `dev->tx_queue_len`.
    pub(crate) fn set_tx_queue_len(&mut self, len: u32) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).tx_queue_len = len };
    }

    /// `dev->features`: the offloads the device starts with
    /// (`wanted_features` follow at registration).
    pub(crate) fn set_features(&mut self, features: Features) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).features = features.bits() };
    }

    /// `dev->hw_features`: the offloads user space may turn on and off.
    pub(crate) fn set_hw_features(&mut self, features: Features) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).hw_features = features.bits() };
    }

    /// `dev->vlan_features`: the offloads VLAN devices on it inherit.
    pub(crate) fn set_vlan_features(&mut self, features: Features) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).vlan_features = features.bits() };
    }

    /// `dev->hw_enc_features`: the offloads of encapsulated packets.
    pub(crate) fn set_hw_enc_features(&mut self, features: Features) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).hw_enc_features = features.bits() };
    }

    /// `dev->ifindex`: the index the driver asks for (0: any; tun's
    /// `TUNSETIFINDEX`).
    pub(crate) fn set_ifindex(&mut self, ifindex: i32) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).ifindex = ifindex };
    }

    /// The device's own sysfs attributes (`dev->sysfs_groups[0]`), for
    /// devices holding a `P`.
    pub(crate) fn set_sysfs_group(&mut self, group: &'static AttrGroup<P>) {
        // SAFETY: We own the unregistered device; the group is static and
        // its `show`s expect devices holding a `P`.
        unsafe { (*self.dev()).sysfs_groups[0] = group.as_ptr() };
    }

    /// `ip_tunnel_header_ops` (IP tunnels and tun.c's TUN devices):
    /// `AF_PACKET` senders' packets get their protocol from the IP version.
    pub(crate) fn ip_tunnel_header_ops(&mut self) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).header_ops = ptr::addr_of!(bindings::ip_tunnel_header_ops) };
    }

    /// The MTU range, `min_mtu` and `max_mtu` (0: no limit).
    pub(crate) fn set_mtu_range(&mut self, min: u32, max: u32) {
        let dev = self.dev();
        // SAFETY: We own the unregistered device.
        unsafe {
            (*dev).min_mtu = min;
            (*dev).max_mtu = max;
        }
    }
}

/// `register_netdevice()` of a device whose private area holds a `P`,
/// then its `priv_destructor`; on failure the `P` is dropped, now or once
/// the device is freed (the caller frees the device).
///
/// `priv_destructor` is set only once registration succeeded: on failure
/// `register_netdevice()` runs it on some paths and not on others (not
/// when the name is invalid), so the caller could not tell whether the `P`
/// was dropped. Unset, it never runs, and the failure path drops the `P`
/// -- at once, unless a notifier vetoed `NETDEV_REGISTER`: the device was
/// listed, so `register_netdevice()` unregistered it (`ndo_uninit`,
/// notifiers) and it is freed by `netdev_run_todo()` once every reference
/// is gone, which may rebroadcast `NETDEV_UNREGISTER` to notifiers that
/// reach the `P` until then. There the `P` goes with the device, as
/// tun.c's private data does (its `priv_destructor`, set in `tun_setup`).
///
/// # Safety
///
/// rtnl is held; `dev` is a fully set up, unregistered device of the
/// caller's whose private area holds a `P`, which this takes over.
pub(super) unsafe fn register_raw<P>(dev: *mut bindings::net_device) -> Result {
    // SAFETY: As the caller guarantees.
    let err = unsafe { bindings::register_netdevice(dev) };
    if err < 0 {
        // SAFETY: Ours (the caller's), rtnl held.
        let state = unsafe { ptr::read_volatile(ptr::addr_of!((*dev).reg_state)) };
        if u32::from(state) == bindings::RTUN_NETREG_UNREGISTERING {
            // SAFETY: Vetoed after it was listed: unregistered in this rtnl
            // section, freed in `rtnl_unlock()`'s `netdev_run_todo()`,
            // which runs the destructor first (the caller's `free_netdev`
            // only marks it `needs_free_netdev`); no destructor ran, so the
            // `P` is still there.
            unsafe { (*dev).priv_destructor = Some(free_priv::<P>) };
        } else {
            // SAFETY: Never listed; no destructor ran (none was set), so
            // the `P` is still there: drop it.
            unsafe { free_priv::<P>(dev) };
        }
        return Err(Error::from_errno(err));
    }
    // SAFETY: Registered, and rtnl is held, so nobody can unregister the
    // device before its destructor is in place.
    unsafe { (*dev).priv_destructor = Some(free_priv::<P>) };
    Ok(())
}

impl<P> Drop for UnregisteredNetDevice<P> {
    fn drop(&mut self) {
        // SAFETY: Never registered: drop the `P`, then free.
        unsafe {
            free_priv::<P>(self.0.as_ptr());
            bindings::free_netdev(self.0.as_ptr());
        }
    }
}

/// `priv_destructor`: drops the `P` in the private area.
///
/// # Safety
///
/// Called once per device holding a `P`, when nothing references it any
/// more: after unregistration, by a failing `register_netdevice`, or by
/// [`UnregisteredNetDevice`]'s drop.
unsafe extern "C" fn free_priv<P>(dev: *mut bindings::net_device) {
    // SAFETY: As the caller guarantees.
    unsafe { ptr::drop_in_place(bindings::netdev_priv(dev).cast::<P>()) }
}
