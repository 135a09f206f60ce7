// SPDX-License-Identifier: GPL-2.0

//! Net devices: [`NetDevice`] (a device whose private area holds a `P`),
//! [`DevRef`], [`RcuDev`], [`NetDeviceBuilder`]; the traits a driver
//! implements -- [`NetDriver`] (set-up, ethtool), [`NetDevOps`] (the
//! `net_device_ops`), [`NetdevEvents`] (the netdevice notifier) -- and the
//! adapters that turn them into C tables at compile time ([`LinkOps`],
//! [`DevOps`], [`Notifier`]; the shape of `rust/kernel/net/phy.rs`'
//! `Adapter<T>`). A device is the driver's when its `rtnl_link_ops` is the
//! driver's [`LinkOps`], as tun.c decides it.

use super::rcu;
use super::skb::SkBuff;
use super::sock::open_netns;
use super::sync::{synchronize_net, BhOff, Rtnl};
use super::sysfs::AttrGroup;
use super::{errno, this_module, zeroed, KernelStatic};
use crate::bindings;
use core::ffi::{c_int, c_uint, c_ulong, c_void};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::build_error;
use kernel::error::{from_result, to_result, VTABLE_DEFAULT_ERROR};
use kernel::prelude::*;
use kernel::types::Opaque;

// ---------------------------------------------------------------------------
// net_device.

/// A network device whose private area holds a `P`.
///
/// # Invariants
///
/// The device was allocated by [`NetDeviceBuilder::alloc`] for a `P` (its
/// `rtnl_link_ops` is a [`LinkOps<P>`]), so its private area holds an
/// initialised `P` until `priv_destructor` runs. References to it are only
/// handed out while it is alive: in callbacks, under rtnl while registered
/// (see [`Rtnl`]), or under a [`DevRef`].
#[repr(transparent)]
pub(crate) struct NetDevice<P>(Opaque<bindings::net_device>, PhantomData<P>);

// SAFETY: `net_device` is shared between CPUs by design; every access goes
// through the kernel's own synchronisation or atomics, and `P: Sync` is what
// the private area shares.
unsafe impl<P: Sync> Sync for NetDevice<P> {}
// SAFETY: As above.
unsafe impl<P: Sync> Send for NetDevice<P> {}

/// Net device flags read by drivers.
pub(crate) const IFF_UP: u32 = bindings::RTUN_IFF_UP;

impl<P> NetDevice<P> {
    /// # Safety
    ///
    /// `ptr` is a device whose private area holds a `P` (see the type
    /// invariants), alive for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `NetDevice` is transparent over `net_device`.
        unsafe { &*ptr.cast() }
    }

    pub(super) fn as_ptr(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The private area (`netdev_priv()`).
    #[inline(always)]
    pub(crate) fn priv_(&self) -> &P {
        // SAFETY: By the type invariants the private area holds an
        // initialised `P` while the device is alive.
        unsafe { &*bindings::netdev_priv(self.as_ptr()).cast::<P>() }
    }

    /// `dev->name`.
    pub(crate) fn name(&self) -> [u8; bindings::IFNAMSIZ as usize] {
        // SAFETY: A fixed array written under rtnl; a racy read of a
        // renaming device gives some bytes of a name, as in C.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).name).cast()) }
    }

    /// `dev->flags` (`IFF_UP`, ...), READ_ONCE.
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: A live device.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).flags)) }
    }

    /// `dev->tx_queue_len`, READ_ONCE.
    pub(crate) fn tx_queue_len(&self) -> u32 {
        // SAFETY: A live device.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).tx_queue_len)) }
    }

    /// `dev_sw_netstats_rx_add()`: one packet of `len` bytes received, on
    /// this CPU's counters (every device of a [`NetDriver`] has per-CPU
    /// counters, `NETDEV_PCPU_STAT_TSTATS`, from registration on; before,
    /// `dev->tstats` is null and nothing is counted).
    #[inline(always)]
    pub(crate) fn sw_netstats_rx_add(&self, len: u32) {
        // SAFETY: A live device set up by `setup()` (per-CPU counters), of
        // which the caller holds a reference or runs a callback (`&self`);
        // the counters, once allocated, live until after the last reference.
        unsafe {
            if !(*self.as_ptr()).__bindgen_anon_2.tstats.is_null() {
                bindings::dev_sw_netstats_rx_add(self.as_ptr(), len)
            }
        }
    }

    /// `dev_sw_netstats_tx_add()` of one packet of `len` bytes sent (the
    /// driver never sends several at once), on this CPU's counters.
    #[inline(always)]
    pub(crate) fn sw_netstats_tx_add(&self, len: u32) {
        // SAFETY: As `sw_netstats_rx_add`.
        unsafe {
            if !(*self.as_ptr()).__bindgen_anon_2.tstats.is_null() {
                bindings::dev_sw_netstats_tx_add(self.as_ptr(), 1, len)
            }
        }
    }

    /// `dev_core_stats_rx_dropped_inc()`: the core's per-CPU drop counter
    /// (allocated on first use; `dev_get_stats()` adds it).
    pub(crate) fn core_stats_rx_dropped_inc(&self) {
        // SAFETY: A live device.
        unsafe { bindings::dev_core_stats_rx_dropped_inc(self.as_ptr()) }
    }

    /// `dev_core_stats_tx_dropped_inc()`.
    pub(crate) fn core_stats_tx_dropped_inc(&self) {
        // SAFETY: A live device.
        unsafe { bindings::dev_core_stats_tx_dropped_inc(self.as_ptr()) }
    }

    /// `dev_get_stats()`: the device's counters as `ip -s link` shows them
    /// (the driver's, the per-CPU ones and the core's drops).
    pub(crate) fn stats(&self) -> Stats64 {
        let mut st = core::mem::MaybeUninit::<bindings::rtnl_link_stats64>::zeroed();
        // SAFETY: A live device; `st` is writable and zeroed, as
        // `dev_get_stats()` wants (it fills what the driver does not).
        let st = unsafe {
            bindings::dev_get_stats(self.as_ptr(), st.as_mut_ptr());
            st.assume_init()
        };
        Stats64 {
            rx_packets: st.rx_packets,
            rx_bytes: st.rx_bytes,
            tx_packets: st.tx_packets,
            tx_bytes: st.tx_bytes,
            rx_dropped: st.rx_dropped,
            tx_dropped: st.tx_dropped,
            rx_frame_errors: st.rx_frame_errors,
        }
    }

    /// `dev->reg_state == NETREG_REGISTERED`.
    pub(crate) fn is_registered(&self) -> bool {
        // SAFETY: A live device.
        let s = unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).reg_state)) };
        u32::from(s) == bindings::RTUN_NETREG_REGISTERED
    }

    /// `netif_running()`.
    pub(crate) fn is_running(&self) -> bool {
        // SAFETY: Valid device.
        unsafe { bindings::netif_running(self.as_ptr()) }
    }

    /// `netif_carrier_on()`.
    pub(crate) fn carrier_on(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::netif_carrier_on(self.as_ptr()) }
    }

    /// `netif_carrier_off()`.
    pub(crate) fn carrier_off(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::netif_carrier_off(self.as_ptr()) }
    }

    /// `netif_tx_start_all_queues()`.
    pub(crate) fn tx_start_all_queues(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::netif_tx_start_all_queues(self.as_ptr()) }
    }

    /// `netif_tx_stop_all_queues()`.
    pub(crate) fn tx_stop_all_queues(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::netif_tx_stop_all_queues(self.as_ptr()) }
    }

    /// `netif_tx_wake_all_queues()`.
    pub(crate) fn tx_wake_all_queues(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::netif_tx_wake_all_queues(self.as_ptr()) }
    }

    /// `netif_set_real_num_{tx,rx}_queues()`. Like tun.c, a failure (n == 0)
    /// leaves the old numbers, which is harmless.
    pub(crate) fn set_real_num_queues(&self, n: u32, _rtnl: &Rtnl<'_>) {
        // SAFETY: Valid device; rtnl held.
        unsafe {
            bindings::netif_set_real_num_tx_queues(self.as_ptr(), n);
            bindings::netif_set_real_num_rx_queues(self.as_ptr(), n);
        }
    }

    /// `netdev_state_change()` (notifiers run, the driver's among them:
    /// `&mut`).
    pub(crate) fn state_change(&self, _rtnl: &mut Rtnl<'_>) {
        // SAFETY: Valid device; rtnl held.
        unsafe { bindings::netdev_state_change(self.as_ptr()) }
    }

    /// `unregister_netdevice()`: `ndo_uninit` runs now (hence `&mut`); the
    /// device is freed later, in `rtnl_unlock()`, after its
    /// `priv_destructor`, once all references are gone.
    pub(crate) fn unregister(&self, _rtnl: &mut Rtnl<'_>) {
        // SAFETY: A registered device; rtnl held.
        unsafe { bindings::unregister_netdevice_queue(self.as_ptr(), ptr::null_mut()) }
    }

    /// Whether the device is in the initial network namespace.
    pub(crate) fn net_is_init(&self) -> bool {
        // SAFETY: Valid device; `dev_net` is stable under rtnl (moves
        // happen under rtnl) and a plain read otherwise.
        unsafe {
            bindings::net_eq(
                bindings::dev_net(self.as_ptr()),
                ptr::addr_of!(bindings::init_net),
            )
        }
    }

    /// The inode number of the device's network namespace (`ip netns
    /// identify`, `/proc/PID/ns/net`).
    pub(crate) fn net_inum(&self) -> u32 {
        // SAFETY: As for `net_is_init`.
        unsafe { (*bindings::dev_net(self.as_ptr())).ns.inum }
    }

    /// `TUNGETDEVNETNS`: a new file descriptor for the device's network
    /// namespace, if the caller has `CAP_NET_ADMIN` there (else `EPERM`).
    pub(crate) fn open_netns(&self, _rtnl: &Rtnl<'_>) -> Result<isize> {
        // SAFETY: Valid device; its namespace is stable under rtnl and
        // alive while the device is in it.
        open_netns(unsafe { bindings::dev_net(self.as_ptr()) })
    }

    /// Replaces the bits of `mask` in `dev->wanted_features` by `features`
    /// and lets the core recompute the device's features
    /// (`netdev_update_features()`, which asks `ndo_fix_features`).
    pub(crate) fn update_wanted_features(&self, mask: u64, features: u64, _rtnl: &mut Rtnl<'_>) {
        // SAFETY: rtnl held; a registered device.
        unsafe {
            let dev = self.as_ptr();
            (*dev).wanted_features = ((*dev).wanted_features & !mask) | features;
            bindings::netdev_update_features(self.as_ptr());
        }
    }

    /// `TUNSETLINK` on a down device: asks the notifier chain
    /// (`NETDEV_PRE_TYPE_CHANGE`, whose veto is the errno), sets
    /// `dev->type` and `dev->addr_len`, tells the chain
    /// (`NETDEV_POST_TYPE_CHANGE`).
    pub(crate) fn change_type(&self, type_: u16, addr_len: u8, _rtnl: &mut Rtnl<'_>) -> Result {
        // SAFETY: rtnl held (the token), a registered device.
        unsafe {
            let ret = bindings::call_netdevice_notifiers(
                bindings::RTUN_NETDEV_PRE_TYPE_CHANGE,
                self.as_ptr(),
            );
            to_result(bindings::notifier_to_errno(ret))?;
            (*self.as_ptr()).type_ = type_;
            (*self.as_ptr()).addr_len = addr_len;
            bindings::call_netdevice_notifiers(
                bindings::RTUN_NETDEV_POST_TYPE_CHANGE,
                self.as_ptr(),
            );
        }
        Ok(())
    }

    /// `netdev_info()`: logs `args` at `KERN_INFO`, prefixed with the
    /// device's name as the kernel's netdev messages are.
    pub(crate) fn info(&self, args: core::fmt::Arguments<'_>) {
        // SAFETY: A live device; `%pA` formats the `fmt::Arguments` the
        // pointer points to, which lives through the call.
        unsafe {
            bindings::netdev_info(
                self.as_ptr(),
                kernel::c_str!("%pA").as_char_ptr().cast(),
                ptr::from_ref(&args).cast::<c_void>(),
            )
        }
    }

    /// `SIOCGIFHWADDR`: `dev_get_mac_address()` into the `sockaddr` of an
    /// `ifreq` (`ifr_hwaddr`, 16 bytes after the name): the family and
    /// `addr_len` bytes of `sa_data` (all 14 zeroed without an address);
    /// the rest of `sa` keeps what it held, as the caller's `ifreq` does
    /// in tun.c.
    pub(crate) fn get_mac_address(&self, sa: &mut [u8; SOCKADDR_LEN], _rtnl: &Rtnl<'_>) -> Result {
        // SAFETY: `sockaddr` is plain data of this size; any bytes will do.
        let mut addr =
            unsafe { core::mem::transmute_copy::<[u8; SOCKADDR_LEN], bindings::sockaddr>(sa) };
        let name = self.name();
        // SAFETY: rtnl held; `addr` is writable; `name` is NUL-terminated
        // (IFNAMSIZ with its last byte 0); the device's namespace is live.
        to_result(unsafe {
            bindings::dev_get_mac_address(
                &mut addr,
                bindings::dev_net(self.as_ptr()),
                name.as_ptr().cast_mut().cast(),
            )
        })?;
        // SAFETY: `sockaddr` is plain data of this size.
        *sa = unsafe { core::mem::transmute_copy::<bindings::sockaddr, [u8; SOCKADDR_LEN]>(&addr) };
        Ok(())
    }

    /// `SIOCSIFHWADDR`: `dev_set_mac_address_user()` from a `sockaddr`.
    pub(crate) fn set_mac_address_user(
        &self,
        sa: &[u8; SOCKADDR_LEN],
        _rtnl: &mut Rtnl<'_>,
    ) -> Result {
        // SAFETY: `sockaddr` is plain data of this size; any bytes will do.
        let mut addr =
            unsafe { core::mem::transmute_copy::<[u8; SOCKADDR_LEN], bindings::sockaddr>(sa) };
        // SAFETY: rtnl held, registered device, `addr` valid for the call.
        to_result(unsafe {
            bindings::dev_set_mac_address_user(self.as_ptr(), &mut addr, ptr::null_mut())
        })
    }

    /// `txq_trans_cond_update()` of transmit queue `txq`: lockless
    /// transmit (`dev->lltx`) updates `trans_start` itself.
    #[inline(always)]
    pub(crate) fn txq_trans_cond_update(&self, txq: u16) {
        // SAFETY: Valid device; `txq` is the queue the core called the
        // driver for (`skb->queue_mapping < real_num_tx_queues`).
        unsafe {
            bindings::txq_trans_cond_update(bindings::netdev_get_tx_queue(
                self.as_ptr(),
                c_uint::from(txq),
            ))
        }
    }

    /// Takes a reference (`dev_hold()`).
    #[inline(always)]
    pub(crate) fn hold(&self) -> DevRef<P> {
        // SAFETY: A live device.
        unsafe { bindings::dev_hold(self.as_ptr()) };
        // INVARIANT: The reference just taken.
        DevRef(NonNull::from(self))
    }

    /// `__dev_get_by_name()`, if the device found is `link`'s. It stays
    /// valid for the whole rtnl section `'g` (see [`Rtnl`]).
    pub(crate) fn get_by_name<'g>(
        net: &NetNs,
        name: &CStr,
        link: &'static LinkOps<P>,
        _rtnl: &Rtnl<'g>,
    ) -> Option<Result<&'g NetDevice<P>>> {
        // SAFETY: rtnl held; `name` is NUL-terminated.
        let p = unsafe { bindings::__dev_get_by_name(net.0.as_ptr(), name.as_char_ptr().cast()) };
        if p.is_null() {
            return None;
        }
        if !link.owns(p) {
            return Some(Err(EINVAL));
        }
        // SAFETY: `link`'s, so its private area holds a `P`; registered now:
        // even if the section unregisters it, it is freed only in
        // `rtnl_unlock()`, after `'g`.
        Some(Ok(unsafe { NetDevice::from_raw(p) }))
    }
}

/// `sizeof(struct sockaddr)`.
pub(crate) const SOCKADDR_LEN: usize = core::mem::size_of::<bindings::sockaddr>();

/// A counted reference to a device (`dev_hold`/`dev_put`).
///
/// # Invariants
///
/// Owns one reference, which keeps the device and its private area alive.
pub(crate) struct DevRef<P>(NonNull<NetDevice<P>>);

// SAFETY: Device references can be dropped on any thread.
unsafe impl<P: Sync> Send for DevRef<P> {}

impl<P> core::ops::Deref for DevRef<P> {
    type Target = NetDevice<P>;
    fn deref(&self) -> &NetDevice<P> {
        // SAFETY: The reference we own keeps the device alive.
        unsafe { self.0.as_ref() }
    }
}

impl<P> Drop for DevRef<P> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: Gives back the reference we own (type invariants).
        unsafe { bindings::dev_put(self.as_ptr()) };
    }
}

/// A device pointer that readers take references from under RCU
/// (`tun_file->tun` in tun.c).
///
/// While a device is published here the `RcuDev` holds a reference on it
/// (`dev_hold`), given back when it is unpublished: a device cannot be
/// freed while an `RcuDev` points at it, whatever the driver does. A driver
/// that forgets to unpublish a device makes its unregistration wait
/// ("unregister_netdevice: waiting for ..."): a bug, not a use-after-free.
/// (tun.c's `tfile->tun` holds no reference; it relies on `tun_detach_all()`
/// clearing every pointer in `ndo_uninit`, which the driver still does.)
/// Dropping an `RcuDev` that still publishes a device leaks the reference.
pub(crate) struct RcuDev<P>(AtomicPtr<bindings::net_device>, PhantomData<P>);

/// The device whose `ndo_uninit` is running (set by [`Adapter::uninit`],
/// under rtnl), for [`RcuDev::set`].
static UNINIT_DEV: AtomicPtr<bindings::net_device> = AtomicPtr::new(ptr::null_mut());

impl<P> RcuDev<P> {
    /// No device.
    pub(crate) const fn null() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()), PhantomData)
    }

    /// `tun_get()`: a counted reference to the device, if any.
    pub(crate) fn get(&self) -> Option<DevRef<P>> {
        let _rcu = rcu::read_lock();
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: `p` was read inside `_rcu`. While it is published the
        // `RcuDev`'s reference keeps the device; once it is unpublished,
        // `set` gives that reference back only when a grace period will
        // pass before the device can be freed (see there). Either way the
        // device outlives `_rcu`, which spans the `dev_hold`; from there
        // our reference keeps it.
        (!p.is_null()).then(|| unsafe { NetDevice::from_raw(p) }.hold())
    }

    /// The device, under rtnl, valid for the whole rtnl section `'g`.
    pub(crate) fn get_rtnl<'g>(&self, _rtnl: &Rtnl<'g>) -> Option<&'g NetDevice<P>> {
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: Devices are published and unpublished under rtnl, so a
        // pointer read under rtnl is of a device this `RcuDev` holds a
        // reference on until at least the end of the section `'g` (an
        // unpublish needs `&Rtnl` and the reference only goes with it; the
        // device is then freed, if at all, only after `rtnl_unlock()`).
        (!p.is_null()).then(|| unsafe { NetDevice::from_raw(p) })
    }

    /// Whether a device is set (a racy snapshot, for the data path).
    pub(crate) fn is_set(&self) -> bool {
        !self.0.load(Ordering::Relaxed).is_null()
    }

    /// Publishes `dev` (or none), taking a reference on it and giving back
    /// the one on the device published before. Readers may still see the
    /// old device until the next grace period (see `get`): its reference
    /// goes at once when the device is registered or in its `ndo_uninit`
    /// (unregistration's `synchronize_net()` after `ndo_uninit` comes
    /// before the device can be freed), and after a `synchronize_net()`
    /// here otherwise (unpublished only after its unregistration: may
    /// sleep).
    pub(crate) fn set(&self, dev: Option<&NetDevice<P>>, _rtnl: &Rtnl<'_>) {
        let new = dev.map_or(ptr::null_mut(), |d| {
            // SAFETY: A live device (borrowed); the reference is this
            // `RcuDev`'s while `d` is published.
            unsafe { bindings::dev_hold(d.as_ptr()) };
            d.as_ptr()
        });
        let old = self.0.swap(new, Ordering::AcqRel);
        if old.is_null() {
            return;
        }
        // SAFETY: `old` was published, so we hold a reference on it: live.
        let old_dev = unsafe { NetDevice::<P>::from_raw(old) };
        if !old_dev.is_registered() && UNINIT_DEV.load(Ordering::Relaxed) != old {
            synchronize_net();
        }
        // SAFETY: Gives back the reference taken when `old` was published;
        // no RCU reader that loaded `old` can take a new one after the
        // grace period that comes before the device may be freed.
        unsafe { bindings::dev_put(old) };
    }
}

// ---------------------------------------------------------------------------
// Set-up, ethtool, rtnl link ops.

/// What `ethtool -i` says of a device.
pub(crate) struct DrvInfo {
    pub(crate) driver: &'static [u8],
    pub(crate) version: &'static [u8],
    pub(crate) bus_info: &'static [u8],
}

/// What `ethtool DEV` says of a device's link and `ethtool -s` sets
/// (`struct ethtool_link_ksettings`: speed, duplex, port,
/// autonegotiation, link modes); what sysfs `speed`/`duplex`, bonding and
/// the bridge's STP port cost read.
#[repr(transparent)]
pub(crate) struct LinkKsettings(bindings::ethtool_link_ksettings);

impl LinkKsettings {
    /// A link without link modes (each mask zero, as
    /// `ethtool_link_ksettings_zero_link_mode()` leaves it) at `speed` Mb/s
    /// (`SPEED_*`), `duplex` (`DUPLEX_*`), `port` (`PORT_*`), `autoneg`
    /// (`AUTONEG_*`), PHY address 0.
    pub(crate) const fn new(speed: u32, duplex: u8, port: u8, autoneg: u8) -> Self {
        let mut ks: bindings::ethtool_link_ksettings = zeroed();
        ks.base.speed = speed;
        ks.base.duplex = duplex;
        ks.base.port = port;
        ks.base.autoneg = autoneg;
        Self(ks)
    }
}

impl Clone for LinkKsettings {
    fn clone(&self) -> Self {
        // SAFETY: Integers and bitmaps only (the user ABI's flexible array
        // of masks is empty in the kernel's struct): a bitwise copy is the
        // `memcpy()` C copies it with.
        Self(unsafe { ptr::read(&self.0) })
    }
}

/// What `ethtool -l` says of a device's channels: its combined (rx and tx)
/// channels, now and at most.
pub(crate) struct Channels {
    pub(crate) combined_count: u32,
    pub(crate) max_combined: u32,
}

/// The rtnl link ops of a net device driver (`struct rtnl_link_ops`), whose
/// devices' private areas hold a `Priv`: [`LinkOps::new`] builds the C table
/// at compile time. An optional op the driver does not implement stays
/// `NULL` there (`#[vtable]`'s `HAS_*`), so the core's default applies.
#[vtable]
pub(crate) trait NetDriver: 'static {
    /// The private area.
    type Priv: Sync + 'static;

    /// `rtnl_link_ops.setup`, also `alloc_netdev()`'s: fills in a fresh
    /// device, before its private area exists (it is not reachable from a
    /// [`DevSetup`]). The layer has set `needs_free_netdev` and per-CPU
    /// counters (`NETDEV_PCPU_STAT_TSTATS`, see [`NetDevice::tstats`]).
    fn setup(dev: &mut DevSetup<Self::Priv>);

    /// `rtnl_link_ops.validate`: checks the attributes of an `ip link add
    /// ... type KIND` request before a device is allocated. Without it,
    /// every request goes on to [`NetDriver::newlink`].
    fn validate(_attrs: &LinkAttrs<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `rtnl_link_ops.newlink`: the private area of a device that `ip link
    /// add ... type KIND` creates (allocated and set up by the core with
    /// [`NetDriver::setup`], the request's attributes applied); the layer
    /// then registers it. Without it, creating a device through rtnetlink
    /// fails with `EOPNOTSUPP`: the layer cannot make a `Priv` from nothing.
    fn newlink(_attrs: &LinkAttrs<'_>) -> Result<Self::Priv> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `rtnl_link_ops.get_size`: the most [`NetDriver::fill_info`] puts.
    fn get_size(_dev: &NetDevice<Self::Priv>) -> usize {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `rtnl_link_ops.fill_info`: the driver's `IFLA_INFO_DATA` attributes.
    fn fill_info(_dev: &NetDevice<Self::Priv>, _msg: &mut NlMsg) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// The ethtool ops of a net device driver (`struct ethtool_ops`), whose
/// devices' private areas hold a `Priv`: [`EthtoolTable::new`] builds the C
/// table. An op the driver does not implement stays `NULL` (`HAS_*`), so
/// the ethtool core's default applies (for `get_drvinfo`: the link kind as
/// the driver's name and the kernel release as its version).
#[vtable]
pub(crate) trait EthtoolOps: 'static {
    /// The private area.
    type Priv: Sync + 'static;

    /// `get_link = ethtool_op_get_link`: the link is up while the carrier
    /// is (`ethtool DEV`'s "Link detected").
    const GET_LINK: bool = false;

    /// `get_ts_info = ethtool_op_get_ts_info`: software time stamps on both
    /// paths, no hardware clock (what a device without ethtool ops gets
    /// from the core's `default_ethtool_ops`).
    const GET_TS_INFO: bool = false;

    /// `get_drvinfo` (`ethtool -i`).
    fn get_drvinfo(_dev: &NetDevice<Self::Priv>) -> DrvInfo {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `get_msglevel`.
    fn get_msglevel(_dev: &NetDevice<Self::Priv>) -> u32 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `set_msglevel`, under rtnl.
    fn set_msglevel(_dev: &NetDevice<Self::Priv>, _level: u32) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `get_link_ksettings`, under rtnl.
    fn get_link_ksettings<'a>(
        _dev: &'a NetDevice<Self::Priv>,
        _rtnl: &'a Rtnl<'_>,
    ) -> &'a LinkKsettings {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `set_link_ksettings`, under rtnl.
    fn set_link_ksettings(_dev: &NetDevice<Self::Priv>, _ks: &LinkKsettings, _rtnl: &mut Rtnl<'_>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `get_channels`, under rtnl.
    fn get_channels(_dev: &NetDevice<Self::Priv>) -> Channels {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `get_coalesce`'s `rx_max_coalesced_frames` (`ethtool -c`
    /// `rx-frames`), the one coalescing parameter the layer passes on
    /// (`supported_coalesce_params`: the ethtool core refuses to set
    /// others, `EOPNOTSUPP`, and reports them 0).
    fn get_coalesce(_dev: &NetDevice<Self::Priv>) -> u32 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `set_coalesce`'s `rx_max_coalesced_frames`, under rtnl.
    fn set_coalesce(_dev: &NetDevice<Self::Priv>, _frames: u32) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// `nla_total_size()`: an attribute's size with header and padding.
pub(crate) const fn nla_total_size(payload: usize) -> usize {
    (4 + payload + 3) & !3
}

/// The message `rtnl_link_ops.fill_info` adds attributes to.
pub(crate) struct NlMsg(*mut bindings::sk_buff);

impl NlMsg {
    /// `nla_put_u8()`; `EMSGSIZE` when the message is full.
    pub(crate) fn put_u8(&mut self, attr: u32, v: u8) -> Result {
        // SAFETY: The message skb of the fill_info call.
        to_result(unsafe { bindings::nla_put_u8(self.0, attr as c_int, v) })
            .map_err(|_| errno::EMSGSIZE())
    }

    /// `nla_put_u32()`; `EMSGSIZE` when the message is full.
    pub(crate) fn put_u32(&mut self, attr: u32, v: u32) -> Result {
        // SAFETY: The message skb of the fill_info call.
        to_result(unsafe { bindings::nla_put_u32(self.0, attr as c_int, v) })
            .map_err(|_| errno::EMSGSIZE())
    }
}

/// The attributes of an `RTM_NEWLINK` request (`validate`'s and
/// `newlink`'s `tb[]`, indexed by `IFLA_*`), borrowed for the call.
///
/// # Invariants
///
/// `tb` has `IFLA_MAX + 1` entries, each null or a valid attribute, alive
/// for `'a`.
pub(crate) struct LinkAttrs<'a> {
    // Read by `address`, which only rust_dummy uses.
    #[allow(dead_code)]
    tb: *mut *mut bindings::nlattr,
    _call: PhantomData<&'a bindings::nlattr>,
}

impl LinkAttrs<'_> {
    /// `tb[IFLA_ADDRESS]`'s payload (`nla_data()`, `nla_len()` bytes): the
    /// hardware address asked for, if any.
    // Used by rust_dummy (dummy.rs), not by rust_tun.
    #[allow(dead_code)]
    pub(crate) fn address(&self) -> Option<&[u8]> {
        // SAFETY: `tb` has `IFLA_MAX + 1` entries (type invariants).
        let nla = unsafe { *self.tb.add(bindings::IFLA_ADDRESS as usize) };
        if nla.is_null() {
            return None;
        }
        // SAFETY: A valid attribute, alive for the call: `nla_len()` bytes
        // at `nla_data()` (rtnetlink checked them against the message).
        Some(unsafe {
            let len = bindings::nla_len(nla);
            core::slice::from_raw_parts(
                bindings::nla_data(nla).cast::<u8>(),
                len.max(0) as usize,
            )
        })
    }
}

/// `is_valid_ether_addr()`: neither multicast nor all zeroes.
// Used by rust_dummy (dummy.rs), not by rust_tun.
#[allow(dead_code)]
pub(crate) fn is_valid_ether_addr(addr: &[u8; ETH_ALEN]) -> bool {
    // SAFETY: `addr` is `ETH_ALEN` readable bytes, as the C function reads.
    unsafe { bindings::is_valid_ether_addr(addr.as_ptr()) }
}

/// `ETH_ALEN`.
// Used by rust_dummy (dummy.rs), not by rust_tun.
#[allow(dead_code)]
pub(crate) const ETH_ALEN: usize = bindings::ETH_ALEN as usize;

/// The `rtnl_link_ops` of a driver (`kind`, set-up, private size, the
/// optional ops of its [`NetDriver`]), built at compile time: a `static`
/// of the driver's.
pub(crate) struct LinkOps<P>(KernelStatic<bindings::rtnl_link_ops>, PhantomData<P>);

// SAFETY: Rust only hands out the raw pointer; the kernel serialises its
// writes to the ops (under rtnl).
unsafe impl<P> Sync for LinkOps<P> {}

impl<P> LinkOps<P> {
    /// The link ops of driver `D`, kind `kind`.
    pub(crate) const fn new<D: NetDriver<Priv = P>>(kind: &'static CStr) -> Self {
        Self(
            KernelStatic::new(bindings::rtnl_link_ops {
                kind: kind.as_char_ptr().cast(),
                priv_size: core::mem::size_of::<P>(),
                setup: Some(setup::<D>),
                validate: if D::HAS_VALIDATE {
                    Some(link_validate::<D>)
                } else {
                    None
                },
                // Always the layer's: it initialises the private area (or
                // refuses), which C's default, a plain
                // `register_netdevice()`, would leave zeroed.
                newlink: Some(link_newlink::<D>),
                get_size: if D::HAS_GET_SIZE {
                    Some(link_get_size::<D>)
                } else {
                    None
                },
                fill_info: if D::HAS_FILL_INFO {
                    Some(link_fill_info::<D>)
                } else {
                    None
                },
                ..zeroed()
            }),
            PhantomData,
        )
    }

    fn as_ptr(&self) -> *mut bindings::rtnl_link_ops {
        self.0.get()
    }

    /// Whether `dev` is one of these ops' devices (its `rtnl_link_ops`).
    fn owns(&self, dev: *mut bindings::net_device) -> bool {
        // SAFETY: A live device; reading a pointer field written before
        // registration.
        ptr::eq(unsafe { (*dev).rtnl_link_ops }, self.as_ptr())
    }
}

/// `setup` of a driver's devices: the layer's part, then the driver's.
///
/// # Safety
///
/// Called by `alloc_netdev_mqs` (from [`NetDeviceBuilder::alloc`] or
/// rtnetlink) with a fresh, unregistered device.
unsafe extern "C" fn setup<D: NetDriver>(dev: *mut bindings::net_device) {
    // SAFETY: A fresh device, ours to set up.
    unsafe {
        // The layer's memory model: the core frees an unregistered device
        // after its last reference (`priv_destructor` first drops the
        // private area), see `NetDevice::unregister`.
        (*dev).needs_free_netdev = true;
        // Per-CPU packet and byte counters (`dev->tstats`), which the core
        // allocates at registration and frees after the last reference:
        // every device of this layer has them (`NetDevice::tstats`).
        (*dev).set_pcpu_stat_type(bindings::netdev_stat_type_NETDEV_PCPU_STAT_TSTATS);
        D::setup(DevSetup::from_raw(dev));
    }
}

/// `rtnl_link_ops.validate`.
///
/// # Safety
///
/// Called by rtnetlink with the request's `tb[]` (`IFLA_MAX + 1` entries).
unsafe extern "C" fn link_validate<D: NetDriver>(
    tb: *mut *mut bindings::nlattr,
    _data: *mut *mut bindings::nlattr,
    _extack: *mut bindings::netlink_ext_ack,
) -> c_int {
    // INVARIANT: rtnetlink's parsed attributes, alive for the call.
    let attrs = LinkAttrs {
        tb,
        _call: PhantomData,
    };
    from_result(|| D::validate(&attrs).map(|()| 0))
}

/// `rtnl_link_ops.newlink`: the driver's private area in the device
/// rtnetlink allocated, then its registration.
///
/// # Safety
///
/// Called by rtnetlink, under rtnl, with a fresh unregistered device of
/// these ops (`priv_size` bytes of private area, set up by `setup::<D>`)
/// and the request's `tb[]`.
unsafe extern "C" fn link_newlink<D: NetDriver>(
    _src_net: *mut bindings::net,
    dev: *mut bindings::net_device,
    tb: *mut *mut bindings::nlattr,
    _data: *mut *mut bindings::nlattr,
    _extack: *mut bindings::netlink_ext_ack,
) -> c_int {
    const { assert!(core::mem::align_of::<D::Priv>() <= bindings::RTUN_NETDEV_ALIGN as usize) };
    if !D::HAS_NEWLINK {
        return errno::EOPNOTSUPP().to_errno();
    }
    // INVARIANT: rtnetlink's parsed attributes, alive for the call.
    let attrs = LinkAttrs {
        tb,
        _call: PhantomData,
    };
    from_result(|| {
        let p = D::newlink(&attrs)?;
        // SAFETY: The private area is `size_of::<D::Priv>()` bytes, aligned
        // to `NETDEV_ALIGN` (checked above), unused: the `P` goes there.
        // From here it holds a `P`, which `register_raw` drops if
        // registration fails (rtnetlink then frees the device).
        unsafe {
            bindings::netdev_priv(dev).cast::<D::Priv>().write(p);
            register_raw::<D::Priv>(dev)?;
        }
        Ok(0)
    })
}

/// `rtnl_link_ops.get_size`.
///
/// # Safety
///
/// Called by rtnetlink, under rtnl, on a device of `D`'s (its link ops).
unsafe extern "C" fn link_get_size<D: NetDriver>(dev: *const bindings::net_device) -> usize {
    // SAFETY: A registered device of `D`'s.
    D::get_size(unsafe { NetDevice::from_raw(dev.cast_mut()) })
}

/// `rtnl_link_ops.fill_info`.
///
/// # Safety
///
/// Called by rtnetlink, under rtnl, on a device of `D`'s with the message
/// being built.
unsafe extern "C" fn link_fill_info<D: NetDriver>(
    skb: *mut bindings::sk_buff,
    dev: *const bindings::net_device,
) -> c_int {
    // SAFETY: A registered device of `D`'s; `skb` is the message.
    let dev = unsafe { NetDevice::from_raw(dev.cast_mut()) };
    from_result(|| D::fill_info(dev, &mut NlMsg(skb)).map(|()| 0))
}

/// The `ethtool_ops` of devices holding a `P`, built at compile time from
/// an [`EthtoolOps`]: a `static` of the driver's, which its
/// [`NetDriver::setup`] installs ([`DevSetup::set_ethtool_ops`]).
pub(crate) struct EthtoolTable<P>(bindings::ethtool_ops, PhantomData<P>);

// SAFETY: Integers and function pointers, read by the kernel.
unsafe impl<P> Sync for EthtoolTable<P> {}

impl<P> EthtoolTable<P> {
    /// The ethtool ops of `T`.
    pub(crate) const fn new<T: EthtoolOps<Priv = P>>() -> Self {
        type A<T> = EthtoolAdapter<T>;
        Self(
            bindings::ethtool_ops {
                supported_coalesce_params: if T::HAS_GET_COALESCE || T::HAS_SET_COALESCE {
                    bindings::RTUN_ETHTOOL_COALESCE_RX_MAX_FRAMES
                } else {
                    0
                },
                get_drvinfo: if T::HAS_GET_DRVINFO {
                    Some(A::<T>::get_drvinfo)
                } else {
                    None
                },
                get_msglevel: if T::HAS_GET_MSGLEVEL {
                    Some(A::<T>::get_msglevel)
                } else {
                    None
                },
                set_msglevel: if T::HAS_SET_MSGLEVEL {
                    Some(A::<T>::set_msglevel)
                } else {
                    None
                },
                get_link: if T::GET_LINK {
                    Some(bindings::ethtool_op_get_link)
                } else {
                    None
                },
                get_channels: if T::HAS_GET_CHANNELS {
                    Some(A::<T>::get_channels)
                } else {
                    None
                },
                get_ts_info: if T::GET_TS_INFO {
                    Some(bindings::ethtool_op_get_ts_info)
                } else {
                    None
                },
                get_coalesce: if T::HAS_GET_COALESCE {
                    Some(A::<T>::get_coalesce)
                } else {
                    None
                },
                set_coalesce: if T::HAS_SET_COALESCE {
                    Some(A::<T>::set_coalesce)
                } else {
                    None
                },
                get_link_ksettings: if T::HAS_GET_LINK_KSETTINGS {
                    Some(A::<T>::get_link_ksettings)
                } else {
                    None
                },
                set_link_ksettings: if T::HAS_SET_LINK_KSETTINGS {
                    Some(A::<T>::set_link_ksettings)
                } else {
                    None
                },
                ..zeroed()
            },
            PhantomData,
        )
    }
}

/// The C trampolines of an [`EthtoolOps`].
struct EthtoolAdapter<T>(PhantomData<T>);

impl<T: EthtoolOps> EthtoolAdapter<T> {
    /// # Safety
    ///
    /// Called by the ethtool core, under rtnl (`__ethtool_get_link_ksettings()`
    /// asserts it), on a device of `T`'s with a valid, writable `cmd`.
    unsafe extern "C" fn get_link_ksettings(
        dev: *mut bindings::net_device,
        cmd: *mut bindings::ethtool_link_ksettings,
    ) -> c_int {
        // SAFETY: A device of `T`'s; rtnl is held, and the ethtool core
        // calls no op of ours while this module is inside a call under its
        // own token (see `Rtnl::assume_held`); `cmd` is valid and writable
        // for the call.
        unsafe {
            Rtnl::assume_held(|rtnl| {
                let ks = T::get_link_ksettings(NetDevice::from_raw(dev), rtnl);
                ptr::write(cmd, ks.clone().0);
            })
        };
        0
    }

    /// # Safety
    ///
    /// Called by the ethtool core, under rtnl (ioctl and netlink alike),
    /// on a device of `T`'s with a valid `cmd`.
    unsafe extern "C" fn set_link_ksettings(
        dev: *mut bindings::net_device,
        cmd: *const bindings::ethtool_link_ksettings,
    ) -> c_int {
        // CAST: `LinkKsettings` is transparent over the C struct.
        let ks = cmd.cast::<LinkKsettings>();
        // SAFETY: As `get_link_ksettings`; `cmd` is valid for reads for the
        // call.
        unsafe {
            Rtnl::assume_held(|rtnl| T::set_link_ksettings(NetDevice::from_raw(dev), &*ks, rtnl))
        };
        0
    }

    /// # Safety
    ///
    /// Called by the ethtool core on a device of `T`'s with a valid,
    /// writable `channels` (zeroed but for `cmd`).
    unsafe extern "C" fn get_channels(
        dev: *mut bindings::net_device,
        channels: *mut bindings::ethtool_channels,
    ) {
        // SAFETY: A device of `T`'s; `channels` is valid and writable for
        // the call.
        let (dev, channels) = unsafe { (NetDevice::<T::Priv>::from_raw(dev), &mut *channels) };
        let c = T::get_channels(dev);
        channels.combined_count = c.combined_count;
        channels.max_combined = c.max_combined;
    }

    /// # Safety
    ///
    /// Called by the ethtool core on a device of `T`'s with a valid,
    /// writable `ec` (zeroed but for `cmd`).
    unsafe extern "C" fn get_coalesce(
        dev: *mut bindings::net_device,
        ec: *mut bindings::ethtool_coalesce,
        _kernel_coal: *mut bindings::kernel_ethtool_coalesce,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: A device of `T`'s; `ec` is valid and writable for the
        // call.
        let (dev, ec) = unsafe { (NetDevice::<T::Priv>::from_raw(dev), &mut *ec) };
        ec.rx_max_coalesced_frames = T::get_coalesce(dev);
        0
    }

    /// # Safety
    ///
    /// Called by the ethtool core, under rtnl, on a device of `T`'s with a
    /// valid `ec` whose parameters other than `supported_coalesce_params`'
    /// are unchanged (the core checks).
    unsafe extern "C" fn set_coalesce(
        dev: *mut bindings::net_device,
        ec: *mut bindings::ethtool_coalesce,
        _kernel_coal: *mut bindings::kernel_ethtool_coalesce,
        _extack: *mut bindings::netlink_ext_ack,
    ) -> c_int {
        // SAFETY: A device of `T`'s; `ec` is valid for reads for the call.
        let (dev, frames) = unsafe {
            (
                NetDevice::<T::Priv>::from_raw(dev),
                (*ec).rx_max_coalesced_frames,
            )
        };
        T::set_coalesce(dev, frames);
        0
    }

    /// # Safety
    ///
    /// Called by the ethtool core on a device of `T`'s.
    unsafe extern "C" fn get_msglevel(dev: *mut bindings::net_device) -> u32 {
        // SAFETY: A device of `T`'s.
        T::get_msglevel(unsafe { NetDevice::from_raw(dev) })
    }

    /// # Safety
    ///
    /// Called by the ethtool core, under rtnl, on a device of `T`'s.
    unsafe extern "C" fn set_msglevel(dev: *mut bindings::net_device, level: u32) {
        // SAFETY: A device of `T`'s.
        T::set_msglevel(unsafe { NetDevice::from_raw(dev) }, level)
    }

    /// `ethtool_ops.get_drvinfo`.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core on a device of `T`'s with a valid,
    /// writable `info`.
    unsafe extern "C" fn get_drvinfo(
        dev: *mut bindings::net_device,
        info: *mut bindings::ethtool_drvinfo,
    ) {
        // SAFETY: A device of `T`'s (only `T`'s set-up installs these ops);
        // `info` is valid and writable for the call.
        let (dev, info) = unsafe { (NetDevice::<T::Priv>::from_raw(dev), &mut *info) };
        let d = T::get_drvinfo(dev);
        strscpy(&mut info.driver, d.driver);
        strscpy(&mut info.version, d.version);
        strscpy(&mut info.bus_info, d.bus_info);
    }
}

fn strscpy(dst: &mut [core::ffi::c_char], src: &[u8]) {
    let n = src.len().min(dst.len() - 1);
    for (d, s) in dst.iter_mut().zip(&src[..n]) {
        *d = *s as core::ffi::c_char;
    }
    dst[n] = 0;
}

/// Registration of link ops, undone on drop.
pub(crate) struct LinkOpsRegistration<P: 'static>(&'static LinkOps<P>);

impl<P> LinkOpsRegistration<P> {
    /// `rtnl_link_register()`.
    pub(crate) fn register(ops: &'static LinkOps<P>) -> Result<Self> {
        // SAFETY: Static ops, registered once.
        to_result(unsafe { bindings::rtnl_link_register(ops.as_ptr()) })?;
        Ok(Self(ops))
    }
}

impl<P> Drop for LinkOpsRegistration<P> {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`; this also unregisters every
        // device of these ops left.
        unsafe { bindings::rtnl_link_unregister(self.0.as_ptr()) }
    }
}

// ---------------------------------------------------------------------------
// net_device_ops.

/// What a transmit did with the packet it was given (which it consumed
/// either way: the skb is the driver's from `ndo_start_xmit` on).
pub(crate) enum TxResult {
    /// Sent, or queued (`NETDEV_TX_OK`).
    Ok,
    /// Dropped (`NET_XMIT_DROP`): `dev_queue_xmit()` returns the drop to
    /// the sender; the core counts the packet as consumed all the same.
    Dropped,
}

/// Device counters: what `ndo_get_stats64` adds to the per-CPU counters
/// (`dev_get_tstats64()`), or what [`NetDevice::stats`] reads.
#[derive(Default)]
pub(crate) struct Stats64 {
    pub(crate) rx_packets: u64,
    pub(crate) rx_bytes: u64,
    pub(crate) tx_packets: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) rx_dropped: u64,
    pub(crate) tx_dropped: u64,
    pub(crate) rx_frame_errors: u64,
}

/// The `net_device_ops` of a driver's devices, whose private areas hold a
/// `Priv`: [`DevOps::new`] builds the C table at compile time. An optional
/// op the driver does not implement stays `NULL` (`#[vtable]`'s `HAS_*`),
/// so the core's default applies; `ndo_start_xmit` is required, as in C.
#[vtable]
pub(crate) trait NetDevOps: 'static {
    /// The private area.
    type Priv: Sync + 'static;

    /// `ndo_init`: under rtnl, from `register_netdevice()` (through
    /// [`NetDeviceBuilder::register`] or rtnetlink's `newlink`) once the
    /// name is valid, before the device's queues get their sysfs objects
    /// and the device is announced. The device is not registered yet: it
    /// must not be published in an [`RcuDev`]. On failure registration
    /// fails and `ndo_uninit` is not called (the private area is dropped),
    /// so nothing may be left behind that the private area's drop does not
    /// undo; after success, a later failure of registration calls
    /// `ndo_uninit`.
    fn init<'g>(_dev: &'g NetDevice<Self::Priv>, _rtnl: &mut Rtnl<'g>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_uninit`: under rtnl, the device is being unregistered (or its
    /// registration failed after `ndo_init`). A driver that publishes its
    /// devices in [`RcuDev`]s unpublishes them here.
    fn uninit<'g>(_dev: &'g NetDevice<Self::Priv>, _rtnl: &mut Rtnl<'g>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_open`, under rtnl; an error keeps the device down.
    fn open(_dev: &NetDevice<Self::Priv>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_stop`, under rtnl.
    fn stop(_dev: &NetDevice<Self::Priv>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_start_xmit`, with bottom halves off.
    fn start_xmit(skb: SkBuff, dev: &NetDevice<Self::Priv>, bh: &BhOff) -> TxResult;

    /// `ndo_select_queue`.
    fn select_queue(_dev: &NetDevice<Self::Priv>, _skb: &SkBuff) -> u16 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_get_stats64`: the counters the driver keeps itself, which are
    /// added to the per-CPU ones (`dev_get_tstats64()`). Without it the
    /// core reads the per-CPU counters alone (its default for a device with
    /// `NETDEV_PCPU_STAT_TSTATS`, which every device of the layer has).
    fn get_stats64(_dev: &NetDevice<Self::Priv>) -> Stats64 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_change_carrier`, under rtnl (`ip link set DEV carrier on|off`);
    /// without it the core refuses (`EOPNOTSUPP`).
    fn change_carrier(_dev: &NetDevice<Self::Priv>, _on: bool) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_fix_features`, under rtnl: the features the device may have of
    /// `features` (a `netdev_features_t`).
    fn fix_features(_dev: &NetDevice<Self::Priv>, _features: u64) -> u64 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_set_rx_mode`, under the device's address lock (bottom halves
    /// off): the unicast and multicast address lists or the
    /// promiscuous/allmulti flags changed.
    fn set_rx_mode(_dev: &NetDevice<Self::Priv>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// A `net_device_ops` table for devices holding a `P`, built at compile
/// time from a [`NetDevOps`], and optionally some of C's library ops: a
/// `static` of the driver's.
pub(crate) struct DevOps<P>(bindings::net_device_ops, PhantomData<P>);

// SAFETY: Only function pointers, read by the kernel.
unsafe impl<P> Sync for DevOps<P> {}

impl<P> DevOps<P> {
    /// The ops of `T`.
    pub(crate) const fn new<T: NetDevOps<Priv = P>>() -> Self {
        type A<T> = Adapter<T>;
        Self(
            bindings::net_device_ops {
                ndo_init: if T::HAS_INIT {
                    Some(A::<T>::init)
                } else {
                    None
                },
                ndo_uninit: if T::HAS_UNINIT {
                    Some(A::<T>::uninit)
                } else {
                    None
                },
                ndo_open: if T::HAS_OPEN {
                    Some(A::<T>::open)
                } else {
                    None
                },
                ndo_stop: if T::HAS_STOP {
                    Some(A::<T>::stop)
                } else {
                    None
                },
                ndo_start_xmit: Some(A::<T>::start_xmit),
                ndo_select_queue: if T::HAS_SELECT_QUEUE {
                    Some(A::<T>::select_queue)
                } else {
                    None
                },
                ndo_get_stats64: if T::HAS_GET_STATS64 {
                    Some(A::<T>::get_stats64)
                } else {
                    None
                },
                ndo_change_carrier: if T::HAS_CHANGE_CARRIER {
                    Some(A::<T>::change_carrier)
                } else {
                    None
                },
                ndo_fix_features: if T::HAS_FIX_FEATURES {
                    Some(A::<T>::fix_features)
                } else {
                    None
                },
                ndo_set_rx_mode: if T::HAS_SET_RX_MODE {
                    Some(A::<T>::set_rx_mode)
                } else {
                    None
                },
                ..zeroed()
            },
            PhantomData,
        )
    }

    /// With an Ethernet device's address ops: `ndo_set_mac_address =
    /// eth_mac_addr` (a valid unicast address, while down unless the device
    /// has `IFF_LIVE_ADDR_CHANGE`) and `ndo_validate_addr =
    /// eth_validate_addr` (`EADDRNOTAVAIL` on open without one).
    pub(crate) const fn eth_addr(mut self) -> Self {
        self.0.ndo_set_mac_address = Some(bindings::eth_mac_addr);
        self.0.ndo_validate_addr = Some(bindings::eth_validate_addr);
        self
    }

    /// With `ndo_features_check = passthru_features_check`: the device
    /// hands frames on as they are, so a frame with several VLAN tags keeps
    /// its offloads, where the core's default, `vlan_features_check()`,
    /// would strip them and segment it first.
    pub(crate) const fn passthru_features_check(mut self) -> Self {
        self.0.ndo_features_check = Some(bindings::passthru_features_check);
        self
    }
}

/// The C trampolines of a [`NetDevOps`].
struct Adapter<T>(PhantomData<T>);

impl<T: NetDevOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by `register_netdevice()`, under rtnl, on a device whose ops
    /// are `T`'s.
    unsafe extern "C" fn init(dev: *mut bindings::net_device) -> c_int {
        // SAFETY: `register_netdevice()` calls `ndo_init` under rtnl on a
        // device of `T`'s whose private area holds an initialised `P`
        // (`NetDeviceBuilder::alloc`), alive for the call: reached from the
        // driver only through `NetDeviceBuilder::register`, which holds its
        // token mutably borrowed.
        from_result(|| unsafe {
            Rtnl::assume_held(|rtnl| T::init(NetDevice::from_raw(dev), rtnl)).map(|()| 0)
        })
    }

    /// # Safety
    ///
    /// Called by the core, under rtnl, on a device whose ops are `T`'s.
    unsafe extern "C" fn uninit(dev: *mut bindings::net_device) {
        // SAFETY: The core calls `ndo_uninit` under rtnl on a device of
        // `T`'s, from `register_netdevice` (failing) or
        // `unregister_netdevice*`: reached from the driver only through
        // `NetDeviceBuilder::register` and `NetDevice::unregister`, which
        // hold its token mutably borrowed.
        unsafe {
            UNINIT_DEV.store(dev, Ordering::Relaxed);
            Rtnl::assume_held(|rtnl| T::uninit(NetDevice::from_raw(dev), rtnl));
            UNINIT_DEV.store(ptr::null_mut(), Ordering::Relaxed);
        }
    }

    /// # Safety
    ///
    /// Called by the core, under rtnl, on a registered device of `T`'s.
    unsafe extern "C" fn open(dev: *mut bindings::net_device) -> c_int {
        // SAFETY: A registered device of `T`'s.
        from_result(|| T::open(unsafe { NetDevice::from_raw(dev) }).map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by the core, under rtnl, on a registered device of `T`'s.
    unsafe extern "C" fn stop(dev: *mut bindings::net_device) -> c_int {
        // SAFETY: A registered device of `T`'s.
        T::stop(unsafe { NetDevice::from_raw(dev) });
        0
    }

    /// # Safety
    ///
    /// Called by the core with bottom halves off, a valid skb it hands
    /// over, and a registered device of `T`'s.
    unsafe extern "C" fn start_xmit(
        skb: *mut bindings::sk_buff,
        dev: *mut bindings::net_device,
    ) -> bindings::netdev_tx_t {
        // SAFETY: The core hands us ownership of a valid skb and calls us on
        // a registered device of `T`'s, alive during the call;
        // `ndo_start_xmit` always runs with bottom halves off.
        let (skb, dev, bh) = unsafe {
            (
                SkBuff::from_raw(skb),
                NetDevice::from_raw(dev),
                BhOff::assume(),
            )
        };
        match T::start_xmit(skb, dev, &bh) {
            TxResult::Ok => bindings::netdev_tx_NETDEV_TX_OK,
            TxResult::Dropped => bindings::NET_XMIT_DROP as _,
        }
    }

    /// # Safety
    ///
    /// Called by the core with a valid skb on a registered device of `T`'s.
    unsafe extern "C" fn select_queue(
        dev: *mut bindings::net_device,
        skb: *mut bindings::sk_buff,
        _sb_dev: *mut bindings::net_device,
    ) -> u16 {
        // SAFETY: We only borrow the skb: it is not ours to free, so it is
        // wrapped without ownership.
        let (dev, skb) = unsafe {
            (
                NetDevice::from_raw(dev),
                core::mem::ManuallyDrop::new(SkBuff::from_raw(skb)),
            )
        };
        T::select_queue(dev, &skb)
    }

    /// # Safety
    ///
    /// Called by the core, under rtnl, on a registered device of `T`'s.
    unsafe extern "C" fn change_carrier(dev: *mut bindings::net_device, on: bool) -> c_int {
        // SAFETY: A registered device of `T`'s.
        from_result(|| T::change_carrier(unsafe { NetDevice::from_raw(dev) }, on).map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by the core, under rtnl, on a device of `T`'s.
    unsafe extern "C" fn fix_features(dev: *mut bindings::net_device, features: u64) -> u64 {
        // SAFETY: A device of `T`'s.
        T::fix_features(unsafe { NetDevice::from_raw(dev) }, features)
    }

    /// # Safety
    ///
    /// Called by the core, under the device's address lock, on a
    /// registered device of `T`'s.
    unsafe extern "C" fn set_rx_mode(dev: *mut bindings::net_device) {
        // SAFETY: A registered device of `T`'s.
        T::set_rx_mode(unsafe { NetDevice::from_raw(dev) })
    }

    /// # Safety
    ///
    /// Called by the core on a device of `T`'s with a valid `stats`.
    unsafe extern "C" fn get_stats64(
        dev: *mut bindings::net_device,
        stats: *mut bindings::rtnl_link_stats64,
    ) {
        // SAFETY: A device of `T`'s (per-CPU counters, from `setup()`);
        // `stats` is valid and writable.
        let (dev, stats) = unsafe {
            bindings::dev_get_tstats64(dev, stats);
            (NetDevice::from_raw(dev), &mut *stats)
        };
        let s = T::get_stats64(dev);
        stats.rx_packets += s.rx_packets;
        stats.rx_bytes += s.rx_bytes;
        stats.tx_packets += s.tx_packets;
        stats.tx_bytes += s.tx_bytes;
        stats.rx_dropped += s.rx_dropped;
        stats.tx_dropped += s.tx_dropped;
        stats.rx_frame_errors += s.rx_frame_errors;
    }
}

// ---------------------------------------------------------------------------
// Allocation and registration.

/// A device allocated but not registered yet. Dropping it frees it. It
/// derefs to the [`DevSetup`] of the device, to finish its set-up.
///
/// # Invariants
///
/// The device's private area holds an initialised `P`; it is not
/// registered; it is owned here alone.
pub(crate) struct NetDeviceBuilder<P>(NonNull<bindings::net_device>, PhantomData<P>);

impl<P> core::ops::Deref for NetDeviceBuilder<P> {
    type Target = DevSetup<P>;

    fn deref(&self) -> &DevSetup<P> {
        // SAFETY: The unregistered device we own (type invariants).
        unsafe { &*self.0.as_ptr().cast::<DevSetup<P>>() }
    }
}

impl<P> core::ops::DerefMut for NetDeviceBuilder<P> {
    fn deref_mut(&mut self) -> &mut DevSetup<P> {
        // SAFETY: The unregistered device we own alone (type invariants),
        // borrowed mutably with the builder.
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
    // Used by rust_dummy (dummy.rs), not by rust_tun.
    #[allow(dead_code)]
    Enum = bindings::NET_NAME_ENUM as u8,
}

impl<P: Sync> NetDeviceBuilder<P> {
    /// `alloc_netdev_mqs()` with `D`'s set-up, `init` in the private area,
    /// `link`'s ops, in namespace `net` (`None`: the initial one).
    pub(crate) fn alloc<D: NetDriver<Priv = P>>(
        link: &'static LinkOps<P>,
        name: &CStr,
        assign: NameAssign,
        queues: u32,
        net: Option<&NetNs>,
        init: impl PinInit<P, Error>,
    ) -> Result<Self> {
        const { assert!(core::mem::align_of::<P>() <= bindings::RTUN_NETDEV_ALIGN as usize) };
        // SAFETY: `name` is NUL-terminated; the set-up function fits.
        let p = unsafe {
            bindings::alloc_netdev_mqs(
                core::mem::size_of::<P>() as c_int,
                name.as_char_ptr().cast(),
                assign as u8,
                Some(setup::<D>),
                queues,
                queues,
            )
        };
        let p = NonNull::new(p).ok_or(ENOMEM)?;
        // SAFETY: The private area is at least `size_of::<P>()` bytes,
        // aligned to `NETDEV_ALIGN` (checked above), unused, and never
        // moves: the right place to pin-initialise the `P`.
        let priv_ = unsafe { bindings::netdev_priv(p.as_ptr()).cast::<P>() };
        // SAFETY: As above.
        if let Err(e) = unsafe { init.__pinned_init(priv_) } {
            // SAFETY: Ours, never registered, nothing in the private area.
            unsafe { bindings::free_netdev(p.as_ptr()) };
            return Err(e);
        }
        // SAFETY: We own the unregistered device; the `P` is initialised,
        // so `link` (whose devices hold a `P`) may claim it.
        unsafe {
            (*p.as_ptr()).rtnl_link_ops = link.as_ptr();
            if let Some(net) = net {
                bindings::dev_net_set(p.as_ptr(), net.0.as_ptr());
            }
        }
        // INVARIANT: From here the private area holds a `P`; the builder
        // drops it until registration hands that job to `priv_destructor`.
        Ok(Self(p, PhantomData))
    }

    /// `register_netdevice()`, which calls the ops' `ndo_init` (see
    /// [`NetDevOps::init`]).
    pub(crate) fn register<'g>(self, _rtnl: &mut Rtnl<'g>) -> Result<&'g NetDevice<P>> {
        let p = core::mem::ManuallyDrop::new(self).0;
        // SAFETY: rtnl held; the device is fully set up, its private area
        // holds a `P` and is ours (the builder's, given up above); on
        // failure `register_raw` dropped the `P`, and the device is freed.
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

/// A device being set up: the argument of [`NetDriver::setup`], and what a
/// [`NetDeviceBuilder`] derefs to. Its private area is not reachable from
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
    unsafe fn from_raw<'a>(dev: *mut bindings::net_device) -> &'a mut Self {
        // SAFETY: `DevSetup` is transparent over `net_device`; as the
        // caller guarantees.
        unsafe { &mut *dev.cast() }
    }

    fn dev(&mut self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// Sets the device's `net_device_ops` (for devices holding a `P`).
    pub(crate) fn set_ops(&mut self, ops: &'static DevOps<P>) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).netdev_ops = &ops.0 };
    }

    /// Sets the device's `ethtool_ops` (for devices holding a `P`); without
    /// them the core's defaults apply (`default_ethtool_ops`).
    pub(crate) fn set_ethtool_ops(&mut self, ops: &'static EthtoolTable<P>) {
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

    /// `dev->flags` (`IFF_*`).
    // Used by rust_dummy (dummy.rs), not by rust_tun.
    #[allow(dead_code)]
    pub(crate) fn flags(&mut self) -> u32 {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).flags }
    }

    /// Sets `dev->flags` (`IFF_*`).
    pub(crate) fn set_flags(&mut self, flags: u32) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).flags = flags };
    }

    /// Sets the bits of `flags` in `dev->priv_flags` (`IFF_LIVE_ADDR_CHANGE`,
    /// `IFF_NO_QUEUE`, ...).
    pub(crate) fn priv_flags_set(&mut self, flags: u32) {
        // SAFETY: We own the unregistered device; `priv_flags` is a
        // bitfield of its fast-path group (bindgen's accessors).
        unsafe {
            let fast = &mut (*self.dev()).__bindgen_anon_1.__bindgen_anon_1;
            fast.set_priv_flags(fast.priv_flags() | c_ulong::from(flags));
        }
    }

    /// Clears the bits of `flags` in `dev->priv_flags`.
    pub(crate) fn priv_flags_clear(&mut self, flags: u32) {
        // SAFETY: As in `priv_flags_set`.
        unsafe {
            let fast = &mut (*self.dev()).__bindgen_anon_1.__bindgen_anon_1;
            fast.set_priv_flags(fast.priv_flags() & !c_ulong::from(flags));
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

    /// `dev->tx_queue_len`.
    pub(crate) fn set_tx_queue_len(&mut self, len: u32) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).tx_queue_len = len };
    }

    /// `dev->hw_enc_features`: the offloads of encapsulated packets.
    // Used by rust_dummy (dummy.rs), not by rust_tun.
    #[allow(dead_code)]
    pub(crate) fn set_hw_enc_features(&mut self, features: u64) {
        // SAFETY: We own the unregistered device.
        unsafe { (*self.dev()).hw_enc_features = features };
    }

    /// The device's offload features: what it may have (`hw_features`),
    /// what it starts with (`features`, `wanted_features` follow at
    /// registration) and what VLAN devices on it inherit.
    pub(crate) fn set_features(&mut self, hw: u64, features: u64, vlan: u64) {
        // SAFETY: We own the unregistered device.
        unsafe {
            let dev = self.dev();
            (*dev).hw_features = hw;
            (*dev).features = features;
            (*dev).vlan_features = vlan;
        }
    }

    /// `dev->ifindex`: the index `TUNSETIFINDEX` asked for (0: any).
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

    /// `ip_tunnel_header_ops` (tun.c's TUN devices): `AF_PACKET` senders'
    /// packets get their protocol from the IP version.
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
/// then its `priv_destructor`; on failure the `P` is dropped (the caller
/// frees the device).
///
/// `priv_destructor` is set only once registration succeeded: on failure
/// `register_netdevice()` runs it on some paths and not on others (not
/// when the name is invalid), so the caller could not tell whether the `P`
/// was dropped. Unset, it never runs, and the failure path drops the `P`.
///
/// # Safety
///
/// rtnl is held; `dev` is a fully set up, unregistered device of the
/// caller's whose private area holds a `P`, which this takes over.
unsafe fn register_raw<P>(dev: *mut bindings::net_device) -> Result {
    // SAFETY: As the caller guarantees.
    let err = unsafe { bindings::register_netdevice(dev) };
    if err < 0 {
        // SAFETY: Unregistered; no destructor ran (none was set), so the
        // `P` is still there: drop it.
        unsafe { free_priv::<P>(dev) };
        return Err(Error::from_errno(err));
    }
    // SAFETY: Registered, and rtnl is held, so nobody can unregister the
    // device before its destructor is in place.
    unsafe { (*dev).priv_destructor = Some(free_priv::<P>) };
    Ok(())
}

impl<P> Drop for NetDeviceBuilder<P> {
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
/// [`NetDeviceBuilder`]'s drop.
unsafe extern "C" fn free_priv<P>(dev: *mut bindings::net_device) {
    // SAFETY: As the caller guarantees.
    unsafe { ptr::drop_in_place(bindings::netdev_priv(dev).cast::<P>()) }
}

// ---------------------------------------------------------------------------
// Network namespaces, module references.

/// Network namespace reference (`get_net`/`put_net`).
///
/// # Invariants
///
/// Owns one reference to the namespace.
pub(crate) struct NetNs(pub(super) NonNull<bindings::net>);

// SAFETY: Namespace references can move between threads.
unsafe impl Send for NetNs {}
// SAFETY: Only compared and passed to the kernel.
unsafe impl Sync for NetNs {}

impl NetNs {
    /// The calling task's network namespace.
    pub(crate) fn current() -> Self {
        // SAFETY: Process context; `current->nsproxy` is valid for the task
        // (`get_net(current->nsproxy->net_ns)`).
        let p = unsafe { bindings::get_net((*(*bindings::get_current()).nsproxy).net_ns) };
        // INVARIANT: `get_net` took a reference. It never returns null.
        Self(NonNull::new(p).expect("get_net returned null"))
    }

    /// `ns_capable(net->user_ns, CAP_NET_ADMIN)`.
    pub(crate) fn capable_net_admin(&self) -> bool {
        // SAFETY: Valid namespace; process context.
        unsafe {
            bindings::ns_capable((*self.0.as_ptr()).user_ns, bindings::CAP_NET_ADMIN as c_int)
        }
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // SAFETY: Gives back our reference.
        unsafe { bindings::put_net(self.0.as_ptr()) }
    }
}

/// Takes a reference on this module (`__module_get(THIS_MODULE)`), as tun
/// does for each persistent device.
pub(crate) fn module_get() {
    // SAFETY: The module is live while any of its code runs.
    unsafe { bindings::__module_get(this_module()) }
}

/// Drops a reference taken with [`module_get`].
pub(crate) fn module_put() {
    // SAFETY: Balances an earlier `module_get`.
    unsafe { bindings::module_put(this_module()) }
}

// ---------------------------------------------------------------------------
// Netdevice notifier.

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
pub(crate) trait NetdevEvents: 'static {
    /// The private area.
    type Priv: Sync + 'static;
    /// The link ops whose devices are the driver's.
    fn link() -> &'static LinkOps<Self::Priv>;
    /// An event, under rtnl. An error vetoes it (`NOTIFY_BAD`, which the
    /// caller sees as `EPERM`, as tun.c answers).
    fn event<'g>(dev: &'g NetDevice<Self::Priv>, ev: DevEvent, rtnl: &mut Rtnl<'g>) -> Result;
}

/// A `notifier_block` for a [`NetdevEvents`], built at compile time: a
/// `static` of the driver's.
pub(crate) struct Notifier(KernelStatic<bindings::notifier_block>);

impl Notifier {
    pub(crate) const fn new<T: NetdevEvents>() -> Self {
        Self(KernelStatic::new(bindings::notifier_block {
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
unsafe extern "C" fn notifier_call<T: NetdevEvents>(
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
pub(crate) struct NotifierRegistration(&'static Notifier);

impl NotifierRegistration {
    /// `register_netdevice_notifier()`.
    pub(crate) fn register(n: &'static Notifier) -> Result<Self> {
        // SAFETY: A static notifier block, registered once.
        to_result(unsafe { bindings::register_netdevice_notifier(n.0.get()) })?;
        Ok(Self(n))
    }
}

impl Drop for NotifierRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`.
        unsafe { bindings::unregister_netdevice_notifier(self.0 .0.get()) };
    }
}
