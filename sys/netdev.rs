// SPDX-License-Identifier: GPL-2.0

//! Net devices: `NetDevice`, `DevRef`, `RcuDev`, `NetDeviceBuilder`, the
//! `net_device_ops`/`ethtool_ops`/`rtnl_link_ops` tables and their
//! callbacks, and the netdevice notifier.

use super::*;

// ---------------------------------------------------------------------------
// net_device.

/// A network device created by this module.
///
/// # Invariants
///
/// The device was allocated by [`NetDeviceBuilder::alloc`], so its private
/// area holds an initialised `crate::Tun` until `priv_destructor` runs, and
/// its `netdev_ops` is one of ours. References to it are only handed out
/// while it is alive: in callbacks, under rtnl while registered, or under a
/// [`DevRef`].
#[repr(transparent)]
pub(crate) struct NetDevice(Opaque<bindings::net_device>);

// SAFETY: `net_device` is shared between CPUs by design; every access goes
// through the kernel's own synchronisation or atomics.
unsafe impl Sync for NetDevice {}
// SAFETY: As above.
unsafe impl Send for NetDevice {}

/// Net device flags read by the driver.
pub(crate) const IFF_UP: u32 = bindings::RTUN_IFF_UP;

impl NetDevice {
    /// # Safety
    ///
    /// `ptr` must be a device of ours (see the type invariants), alive for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `NetDevice` is transparent over `net_device`.
        unsafe { &*ptr.cast() }
    }

    pub(super) fn as_ptr(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The driver state in the private area (`netdev_priv()`, which is
    /// `dev->priv`: computed inline).
    #[inline(always)]
    pub(crate) fn tun(&self) -> &crate::Tun {
        // SAFETY: By the type invariants the private area, at
        // `offsetof(struct net_device, priv)`, holds an initialised `Tun`
        // while the device is alive.
        unsafe {
            &*self
                .as_ptr()
                .cast::<u8>()
                .add(bindings::RTUN_NETDEV_PRIV as usize)
                .cast::<crate::Tun>()
        }
    }

    /// `dev->name`.
    pub(crate) fn name(&self) -> [u8; bindings::IFNAMSIZ as usize] {
        // SAFETY: `name` is a fixed array written under rtnl; a racy read of
        // a renaming device gives some bytes of a name, as in C.
        let name = unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).name)) };
        name.map(|c| c as u8)
    }

    /// `dev->flags` (`IFF_UP`, ...).
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: A plain integer field; READ_ONCE semantics.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).flags)) }
    }

    /// Whether the device is in the initial network namespace.
    pub(crate) fn net_is_init(&self) -> bool {
        // SAFETY: Valid device; `dev_net` is stable while we are called
        // under rtnl (moves happen under rtnl) and a plain read otherwise.
        unsafe { bindings::rtun_dev_net_is_init(self.as_ptr()) }
    }

    /// The inode number of the device's network namespace (`ip netns
    /// identify`, `/proc/PID/ns/net`).
    pub(crate) fn net_inum(&self) -> u32 {
        // SAFETY: As for `net_is_init`.
        unsafe { bindings::rtun_dev_net_inum(self.as_ptr()) }
    }

    /// `txq_trans_cond_update()` of transmit queue `txq`: lockless
    /// transmit (`dev->lltx`) updates `trans_start` itself, as tun.c does.
    #[inline(always)]
    pub(crate) fn txq_trans_cond_update(&self, txq: u16) {
        // SAFETY: Valid device; `txq` is the queue the core called us for
        // (`skb->queue_mapping < real_num_tx_queues`).
        unsafe { bindings::rtun_txq_trans_cond_update(self.as_ptr(), txq) }
    }

    /// `dev->tx_queue_len`.
    pub(crate) fn tx_queue_len(&self) -> u32 {
        // SAFETY: A plain integer field; READ_ONCE semantics.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).tx_queue_len)) }
    }

    /// `dev->reg_state == NETREG_REGISTERED`.
    pub(crate) fn is_registered(&self) -> bool {
        // SAFETY: A plain field written under rtnl; READ_ONCE semantics.
        let s = unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).reg_state)) };
        s as u32 == bindings::RTUN_NETREG_REGISTERED
    }

    /// `netif_running()`.
    pub(crate) fn is_running(&self) -> bool {
        // SAFETY: Valid device.
        unsafe { bindings::rtun_netif_running(self.as_ptr()) }
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
        unsafe { bindings::rtun_netif_tx_start_all_queues(self.as_ptr()) }
    }

    /// `netif_tx_stop_all_queues()`.
    pub(crate) fn tx_stop_all_queues(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::rtun_netif_tx_stop_all_queues(self.as_ptr()) }
    }

    /// `netif_tx_wake_all_queues()`.
    pub(crate) fn tx_wake_all_queues(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::rtun_netif_tx_wake_all_queues(self.as_ptr()) }
    }

    /// `tun_set_real_num_queues()`: `netif_set_real_num_{tx,rx}_queues()`.
    pub(crate) fn set_real_num_queues(&self, n: u32, _rtnl: &Rtnl<'_>) {
        // SAFETY: Valid device; rtnl held. Like tun.c, a failure (n == 0)
        // leaves the old numbers, which is harmless.
        unsafe {
            bindings::netif_set_real_num_tx_queues(self.as_ptr(), n);
            bindings::netif_set_real_num_rx_queues(self.as_ptr(), n);
        }
    }

    /// `netdev_state_change()` (notifiers run, ours among them: `&mut`).
    pub(crate) fn state_change(&self, _rtnl: &mut Rtnl<'_>) {
        // SAFETY: Valid device; rtnl held.
        unsafe { bindings::netdev_state_change(self.as_ptr()) }
    }

    /// `unregister_netdevice()`: `ndo_uninit` runs now (hence `&mut`); the
    /// device is freed later, in `rtnl_unlock()`, after its
    /// `priv_destructor`, once all references are gone.
    pub(crate) fn unregister(&self, _rtnl: &mut Rtnl<'_>) {
        // SAFETY: A registered device of ours; rtnl held.
        unsafe { bindings::unregister_netdevice_queue(self.as_ptr(), ptr::null_mut()) }
    }

    /// Takes a reference (`dev_hold()`).
    #[inline(always)]
    pub(crate) fn hold(&self) -> DevRef {
        self.refcnt_add::<true>();
        // INVARIANT: The reference just taken.
        DevRef(NonNull::from(self))
    }

    /// `dev_hold()` (`INC`) or `dev_put()`: with per-CPU device refcounts
    /// and no refcount tracker, C's inline `this_cpu_inc/dec(*dev->pcpu_refcnt)`,
    /// one `%gs`-relative instruction; otherwise the C shims.
    #[inline(always)]
    fn refcnt_add<const INC: bool>(&self) {
        #[cfg(all(CONFIG_PCPU_DEV_REFCNT, not(CONFIG_NET_DEV_REFCNT_TRACKER)))]
        {
            // SAFETY: `pcpu_refcnt` is the device's `int __percpu *`, valid
            // while the device is (this is a live device or a reference we
            // own); per-CPU pointers are offsets from %gs on x86_64.
            unsafe {
                let pcpu = ptr::read(
                    self.as_ptr()
                        .cast::<u8>()
                        .add(bindings::RTUN_NETDEV_PCPU_REFCNT as usize)
                        .cast::<*mut i32>(),
                );
                if INC {
                    ::core::arch::asm!("incl %gs:({0})", in(reg) pcpu, options(att_syntax, nostack));
                } else {
                    ::core::arch::asm!("decl %gs:({0})", in(reg) pcpu, options(att_syntax, nostack));
                }
            }
        }
        // The debug kernel's refcount tracker builds and runs this one.
        #[cfg(not(all(CONFIG_PCPU_DEV_REFCNT, not(CONFIG_NET_DEV_REFCNT_TRACKER))))]
        // SAFETY: Valid device.
        unsafe {
            if INC {
                bindings::rtun_dev_hold(self.as_ptr())
            } else {
                bindings::rtun_dev_put(self.as_ptr())
            }
        }
    }

    /// `__dev_get_by_name()`, if the device found is one of ours. It stays
    /// valid for the whole rtnl section `'g` (see [`Rtnl`]).
    pub(crate) fn get_by_name<'g>(
        net: &NetNs,
        name: &CStr,
        _rtnl: &Rtnl<'g>,
    ) -> Option<Result<&'g NetDevice>> {
        // SAFETY: rtnl held; `name` is NUL-terminated.
        let p = unsafe { bindings::__dev_get_by_name(net.0.as_ptr(), name.as_char_ptr().cast()) };
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is a registered device, alive while rtnl is held.
        let ops = unsafe { (*p).netdev_ops };
        if is_our_ops(ops) {
            // SAFETY: One of ours (its ops are ours), registered now: even
            // if the section unregisters it, it is freed only in
            // `rtnl_unlock()`, after `'g`.
            Some(Ok(unsafe { NetDevice::from_raw(p) }))
        } else {
            Some(Err(EINVAL))
        }
    }
}

/// A counted reference to one of our devices (`dev_hold`/`dev_put`).
///
/// # Invariants
///
/// Owns one reference, which keeps the device and its private area alive.
pub(crate) struct DevRef(NonNull<NetDevice>);

// SAFETY: Device references can be dropped on any thread.
unsafe impl Send for DevRef {}

impl core::ops::Deref for DevRef {
    type Target = NetDevice;
    fn deref(&self) -> &NetDevice {
        // SAFETY: The reference we own keeps the device alive.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for DevRef {
    #[inline(always)]
    fn drop(&mut self) {
        // Gives back the reference we own (type invariants).
        self.refcnt_add::<false>();
    }
}

/// A device pointer that readers take references from under RCU
/// (`tun_file->tun` in tun.c).
pub(crate) struct RcuDev(AtomicPtr<bindings::net_device>);

impl RcuDev {
    /// No device.
    pub(crate) const fn null() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
    }

    /// `tun_get()`: a counted reference to the device, if any.
    pub(crate) fn get(&self) -> Option<DevRef> {
        let _rcu = RcuReadGuard::new();
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: `p` was published by `set` while the device was
        // registered, and read inside `_rcu`. A device is freed only after
        // the `synchronize_net()` that `unregister_netdevice` runs after
        // `ndo_uninit`, and `ndo_uninit` unpublishes every pointer to it
        // (`tun_net_uninit`); pointers unpublished earlier (detach, close)
        // belong to a device still registered at that moment, so the same
        // holds. Either way the device outlives `_rcu`, which spans the
        // `dev_hold`; from there the reference keeps it.
        (!p.is_null()).then(|| unsafe { NetDevice::from_raw(p) }.hold())
    }

    /// The device, under rtnl, valid for the whole rtnl section `'g`.
    pub(crate) fn get_rtnl<'g>(&self, _rtnl: &Rtnl<'g>) -> Option<&'g NetDevice> {
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: Devices are published and unpublished under rtnl, and
        // `ndo_uninit` unpublishes a device before its unregistration
        // completes, so a pointer read under rtnl is a device registered
        // at the start of this section: freed, if at all, only in
        // `rtnl_unlock()`, after `'g`.
        (!p.is_null()).then(|| unsafe { NetDevice::from_raw(p) })
    }

    /// Whether a device is set (a racy snapshot, for the data path).
    pub(crate) fn is_set(&self) -> bool {
        !self.0.load(Ordering::Relaxed).is_null()
    }

    /// Publishes `dev` (or none). Readers may hold the old device until the
    /// next grace period (see `get`).
    pub(crate) fn set(&self, dev: Option<&NetDevice>, _rtnl: &Rtnl<'_>) {
        self.0.store(
            dev.map_or(ptr::null_mut(), |d| d.as_ptr()),
            Ordering::Release,
        );
    }
}

/// What kind of device to create (`IFF_TUN` or `IFF_TAP`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DevKind {
    /// Point-to-point L3 device (`IFF_TUN`).
    Tun,
    /// Ethernet device (`IFF_TAP`).
    Tap,
}

// The private area is aligned to `NETDEV_ALIGN` (32 bytes).
const _: () = assert!(core::mem::align_of::<crate::Tun>() <= 32);

/// A device allocated but not registered yet. Dropping it frees it.
pub(crate) struct NetDeviceBuilder(NonNull<bindings::net_device>);

impl NetDeviceBuilder {
    /// `alloc_netdev_mqs()` with `tun_setup()` and, per kind,
    /// `tun_net_initialize()`: a device of ours with `tun` in its private area.
    pub(crate) fn alloc(
        name: &CStr,
        kind: DevKind,
        queues: u32,
        net: &NetNs,
        tun: impl PinInit<crate::Tun, Error>,
    ) -> Result<Self> {
        // SAFETY: `name` is NUL-terminated; `tun_setup` matches the
        // expected signature.
        let p = unsafe {
            bindings::alloc_netdev_mqs(
                core::mem::size_of::<crate::Tun>() as c_int,
                name.as_char_ptr().cast(),
                bindings::NET_NAME_UNKNOWN as u8,
                Some(tun_setup),
                queues,
                queues,
            )
        };
        let p = NonNull::new(p).ok_or(ENOMEM)?;
        // SAFETY: The private area is at least `size_of::<Tun>()` bytes,
        // aligned to `NETDEV_ALIGN` (32, checked below), unused, and never
        // moves: the right place to pin-initialise the `Tun`.
        let priv_ = unsafe { bindings::rtun_netdev_priv(p.as_ptr()).cast::<crate::Tun>() };
        // SAFETY: As above.
        if let Err(e) = unsafe { tun.__pinned_init(priv_) } {
            // SAFETY: Ours, never registered, nothing in the private area.
            unsafe { bindings::free_netdev(p.as_ptr()) };
            return Err(e);
        }
        // SAFETY: We own the unregistered device; the `Tun` is initialised.
        let unguarded = unsafe {
            (*p.as_ptr()).rtnl_link_ops = TUN_LINK_OPS.get();
            bindings::rtun_dev_net_set(p.as_ptr(), net.0.as_ptr());
            (*priv_).unguarded
        };
        // INVARIANT: From here the private area holds a `Tun`; the builder
        // drops it until registration hands that job to `priv_destructor`.
        let builder = Self(p);
        // SAFETY: We own the unregistered device exclusively.
        unsafe { tun_net_initialize(p.as_ptr(), kind, unguarded) };
        Ok(builder)
    }

    /// `register_netdevice()`.
    ///
    /// `priv_destructor` is set only once registration succeeded: on
    /// failure `register_netdevice()` runs it on some paths and not on
    /// others (not when the name is invalid), so the caller could not tell
    /// whether the `Tun` was dropped. Unset, it never runs, and the failure
    /// path below drops the `Tun` itself. (tun.c allocates its flow table
    /// in `ndo_init`, after the name checks, and so has nothing to leak.)
    pub(crate) fn register<'g>(self, _rtnl: &mut Rtnl<'g>) -> Result<&'g NetDevice> {
        let p = core::mem::ManuallyDrop::new(self).0;
        // SAFETY: rtnl held; the device is fully set up.
        let err = unsafe { bindings::register_netdevice(p.as_ptr()) };
        if err < 0 {
            // SAFETY: Unregistered and ours; no destructor ran (none was
            // set), so drop the `Tun` and free the memory.
            unsafe {
                tun_free_netdev(p.as_ptr());
                bindings::free_netdev(p.as_ptr());
            }
            return Err(Error::from_errno(err));
        }
        // SAFETY: Registered, and rtnl is held, so nobody can unregister
        // the device before its destructor is in place.
        unsafe { (*p.as_ptr()).priv_destructor = Some(tun_free_netdev) };
        // SAFETY: Registered now: freed, if at all, only in
        // `rtnl_unlock()`, after `'g`.
        Ok(unsafe { NetDevice::from_raw(p.as_ptr()) })
    }
}

impl Drop for NetDeviceBuilder {
    fn drop(&mut self) {
        // SAFETY: Never registered: run our destructor, then free.
        unsafe {
            tun_free_netdev(self.0.as_ptr());
            bindings::free_netdev(self.0.as_ptr());
        }
    }
}

/// `tun_setup()`: what every device of ours gets before its kind is known.
///
/// # Safety
///
/// Called by `alloc_netdev_mqs` or rtnl with a fresh, unregistered device.
unsafe extern "C" fn tun_setup(dev: *mut bindings::net_device) {
    // SAFETY: Called by `alloc_netdev_mqs`/rtnl on a fresh device.
    unsafe {
        (*dev).ethtool_ops = &TUN_ETHTOOL_OPS;
        // Lockless transmit, as tun.c: `tun_net_xmit` only needs its ring's
        // lock. (tun.c then updates the queue's `trans_start` itself, for a
        // watchdog that needs `ndo_tx_timeout`, which neither driver has.)
        bindings::rtun_netdev_set_lltx(dev);
        (*dev).needs_free_netdev = true;
        (*dev).tx_queue_len = crate::TUN_READQ_SIZE;
    }
}

/// `priv_destructor`: drops the `Tun` in the private area.
///
/// # Safety
///
/// Called once per device of ours, when nothing references its `Tun` any
/// more: after unregistration, by a failing `register_netdevice`, or by
/// [`NetDeviceBuilder`]'s drop.
unsafe extern "C" fn tun_free_netdev(dev: *mut bindings::net_device) {
    // SAFETY: Called once, when the device is done with (after unregister,
    // or by `register_netdevice` failing, or by the builder), so nothing
    // references the `Tun` any more.
    unsafe { ptr::drop_in_place(bindings::rtun_netdev_priv(dev).cast::<crate::Tun>()) }
}

/// `tun_net_initialize()`: type-specific device set-up.
///
/// # Safety
///
/// `dev` must be a fresh, unregistered device owned by the caller.
unsafe fn tun_net_initialize(dev: *mut bindings::net_device, kind: DevKind, unguarded: bool) {
    // SAFETY: The caller owns the device.
    unsafe {
        match kind {
            DevKind::Tun => {
                (*dev).netdev_ops = &NETDEV_OPS[usize::from(unguarded)];
                (*dev).hard_header_len = 0;
                (*dev).addr_len = 0;
                (*dev).mtu = 1500;
                (*dev).type_ = bindings::ARPHRD_NONE as u16;
                (*dev).flags = bindings::RTUN_IFF_POINTOPOINT
                    | bindings::RTUN_IFF_NOARP
                    | bindings::RTUN_IFF_MULTICAST;
            }
            DevKind::Tap => {
                (*dev).netdev_ops = &NETDEV_OPS[2 + usize::from(unguarded)];
                bindings::ether_setup(dev);
                bindings::rtun_netdev_priv_flags_update(
                    dev,
                    bindings::RTUN_IFF_TX_SKB_SHARING,
                    bindings::RTUN_IFF_LIVE_ADDR_CHANGE,
                );
                bindings::rtun_eth_hw_addr_random(dev);
            }
        }
        (*dev).min_mtu = crate::MIN_MTU;
        (*dev).max_mtu = crate::MAX_MTU - u32::from((*dev).hard_header_len);
    }
}

/// Network namespace reference (`get_net`/`put_net`).
///
/// # Invariants
///
/// Owns one reference to the namespace.
pub(crate) struct NetNs(NonNull<bindings::net>);

// SAFETY: Namespace references can move between threads.
unsafe impl Send for NetNs {}
// SAFETY: Only compared and passed to the kernel.
unsafe impl Sync for NetNs {}

impl NetNs {
    /// The calling task's network namespace.
    pub(crate) fn current() -> Self {
        // SAFETY: Process context; `current->nsproxy` is valid for the task.
        let p = unsafe { bindings::rtun_get_current_net() };
        // INVARIANT: `get_net` took a reference. It never returns null.
        Self(NonNull::new(p).expect("get_net returned null"))
    }

    /// `ns_capable(net->user_ns, CAP_NET_ADMIN)`.
    pub(crate) fn capable_net_admin(&self) -> bool {
        // SAFETY: Valid namespace; process context.
        unsafe { bindings::rtun_ns_capable_net_admin(self.0.as_ptr()) }
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // SAFETY: Gives back our reference.
        unsafe { bindings::rtun_put_net(self.0.as_ptr()) }
    }
}

/// Takes a reference on this module (`__module_get(THIS_MODULE)`), as tun
/// does for each persistent device.
pub(crate) fn module_get() {
    // SAFETY: The module is live while any of its code runs.
    unsafe { bindings::__module_get(crate::THIS_MODULE.as_ptr().cast()) }
}

/// Drops a reference taken with [`module_get`].
pub(crate) fn module_put() {
    // SAFETY: Balances an earlier `module_get`.
    unsafe { bindings::module_put(crate::THIS_MODULE.as_ptr().cast()) }
}

// ---------------------------------------------------------------------------
// Net device and ethtool callbacks.

/// The device ops: TUN guarded, TUN unguarded, TAP guarded, TAP unguarded.
/// The mode is fixed per device by its ops, so the transmit path pays
/// nothing to know it (see `crate::tun_net_xmit`).
static NETDEV_OPS: [bindings::net_device_ops; 4] = [
    tun_netdev_ops::<false>(),
    tun_netdev_ops::<true>(),
    tap_netdev_ops::<false>(),
    tap_netdev_ops::<true>(),
];

const fn tun_netdev_ops<const UNGUARDED: bool>() -> bindings::net_device_ops {
    bindings::net_device_ops {
        ndo_uninit: Some(tun_net_uninit),
        ndo_open: Some(tun_net_open),
        ndo_stop: Some(tun_net_close),
        ndo_start_xmit: Some(tun_net_xmit::<UNGUARDED>),
        ndo_select_queue: Some(tun_select_queue),
        ndo_get_stats64: Some(tun_net_get_stats64),
        ..zeroed()
    }
}

const fn tap_netdev_ops<const UNGUARDED: bool>() -> bindings::net_device_ops {
    bindings::net_device_ops {
        ndo_set_mac_address: Some(bindings::eth_mac_addr),
        ndo_validate_addr: Some(bindings::eth_validate_addr),
        ..tun_netdev_ops::<UNGUARDED>()
    }
}

fn is_our_ops(ops: *const bindings::net_device_ops) -> bool {
    NETDEV_OPS.iter().any(|o| ptr::eq(ops, o))
}

static TUN_ETHTOOL_OPS: bindings::ethtool_ops = bindings::ethtool_ops {
    get_drvinfo: Some(tun_get_drvinfo),
    get_link: Some(bindings::ethtool_op_get_link),
    ..zeroed()
};

/// `ndo_uninit`.
///
/// # Safety
///
/// Called by the core, under rtnl, on a device of ours.
unsafe extern "C" fn tun_net_uninit(dev: *mut bindings::net_device) {
    // SAFETY: The core calls `ndo_uninit` under rtnl on a device of ours,
    // from `register_netdevice` (failing) or `unregister_netdevice*`:
    // reached from this module only through `NetDeviceBuilder::register`
    // and `NetDevice::unregister`, which hold our token mutably borrowed.
    unsafe { Rtnl::assume_held(|rtnl| crate::tun_net_uninit(NetDevice::from_raw(dev), rtnl)) };
}

/// `ndo_open`.
///
/// # Safety
///
/// Called by the core, under rtnl, on a registered device of ours.
unsafe extern "C" fn tun_net_open(dev: *mut bindings::net_device) -> c_int {
    // SAFETY: Called under rtnl on a registered device of ours.
    crate::tun_net_open(unsafe { NetDevice::from_raw(dev) });
    0
}

/// `ndo_stop`.
///
/// # Safety
///
/// Called by the core, under rtnl, on a registered device of ours.
unsafe extern "C" fn tun_net_close(dev: *mut bindings::net_device) -> c_int {
    // SAFETY: Called under rtnl on a registered device of ours.
    crate::tun_net_close(unsafe { NetDevice::from_raw(dev) });
    0
}

/// `ndo_start_xmit`.
///
/// # Safety
///
/// Called by the core with a valid skb it hands over and a registered
/// device of ours.
unsafe extern "C" fn tun_net_xmit<const UNGUARDED: bool>(
    skb: *mut bindings::sk_buff,
    dev: *mut bindings::net_device,
) -> bindings::netdev_tx_t {
    // SAFETY: The core hands us ownership of a valid skb and calls us on a
    // registered device of ours, which stays alive during the call.
    let (skb, dev) = unsafe {
        (
            SkBuff(NonNull::new_unchecked(skb)),
            NetDevice::from_raw(dev),
        )
    };
    // `ndo_start_xmit` always runs with bottom halves off.
    crate::tun_net_xmit::<UNGUARDED>(skb, dev, &BhOff(PhantomData))
}

/// `ndo_select_queue`.
///
/// # Safety
///
/// Called by the core with a valid skb on a registered device of ours.
unsafe extern "C" fn tun_select_queue(
    dev: *mut bindings::net_device,
    skb: *mut bindings::sk_buff,
    _sb_dev: *mut bindings::net_device,
) -> u16 {
    // SAFETY: We only borrow the skb: it is not ours to free, so it is
    // wrapped without ownership.
    let (dev, skb) = unsafe {
        (
            NetDevice::from_raw(dev),
            core::mem::ManuallyDrop::new(SkBuff(NonNull::new_unchecked(skb))),
        )
    };
    crate::tun_select_queue(dev, &skb)
}

/// `ndo_get_stats64`.
///
/// # Safety
///
/// Called by the core on a device of ours with a valid `stats`.
unsafe extern "C" fn tun_net_get_stats64(
    dev: *mut bindings::net_device,
    stats: *mut bindings::rtnl_link_stats64,
) {
    // SAFETY: Called on a device of ours with a valid, writable `stats`.
    let (dev, stats) = unsafe { (NetDevice::from_raw(dev), &mut *stats) };
    let s = crate::tun_net_get_stats64(dev);
    stats.rx_packets = s.rx_packets;
    stats.rx_bytes = s.rx_bytes;
    stats.tx_packets = s.tx_packets;
    stats.tx_bytes = s.tx_bytes;
    stats.rx_dropped = s.rx_dropped;
    stats.tx_dropped = s.tx_dropped;
    stats.rx_frame_errors = s.rx_frame_errors;
}

/// `ethtool_ops.get_drvinfo`.
///
/// # Safety
///
/// Called by the ethtool core with a valid, writable `info`.
unsafe extern "C" fn tun_get_drvinfo(
    _dev: *mut bindings::net_device,
    info: *mut bindings::ethtool_drvinfo,
) {
    // SAFETY: `info` is valid and writable for the call.
    let info = unsafe { &mut *info };
    strscpy(&mut info.driver, crate::DRV_NAME);
    strscpy(&mut info.version, crate::DRV_VERSION);
    strscpy(&mut info.bus_info, b"tun");
}

fn strscpy(dst: &mut [core::ffi::c_char], src: &[u8]) {
    let n = src.len().min(dst.len() - 1);
    for (d, s) in dst.iter_mut().zip(&src[..n]) {
        *d = *s as core::ffi::c_char;
    }
    dst[n] = 0;
}

/// Netdev tx return value.
pub(crate) const NETDEV_TX_OK: bindings::netdev_tx_t = bindings::netdev_tx_NETDEV_TX_OK;
/// `NET_XMIT_DROP`, tun's return for a dropped packet.
pub(crate) const NET_XMIT_DROP: bindings::netdev_tx_t = bindings::NET_XMIT_DROP as _;

// ---------------------------------------------------------------------------
// rtnl link ops: `ip -d link` shows our kind, `ip link del` works, and
// module unload deletes what is left, as `rtnl_link_unregister` does for tun.

static TUN_LINK_OPS: KernelStatic<bindings::rtnl_link_ops> =
    KernelStatic::new(bindings::rtnl_link_ops {
        kind: crate::DRV_KIND.as_ptr().cast(),
        priv_size: core::mem::size_of::<crate::Tun>(),
        setup: Some(tun_setup),
        validate: Some(tun_validate),
        ..zeroed()
    });

/// `rtnl_link_ops.validate`: creation through rtnetlink is not supported
/// (as in tun.c).
///
/// # Safety
///
/// Called by rtnetlink; the arguments are not used.
unsafe extern "C" fn tun_validate(
    _tb: *mut *mut bindings::nlattr,
    _data: *mut *mut bindings::nlattr,
    _extack: *mut bindings::netlink_ext_ack,
) -> c_int {
    errno::EOPNOTSUPP().to_errno()
}

/// Registration of the rtnl link ops, undone on drop.
pub(crate) struct LinkOpsRegistration(());

impl LinkOpsRegistration {
    /// `rtnl_link_register()`.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: The ops are static; registered once (module init).
        to_result(unsafe { bindings::rtnl_link_register(TUN_LINK_OPS.get()) })?;
        Ok(Self(()))
    }
}

impl Drop for LinkOpsRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`; this also unregisters every
        // device left of ours.
        unsafe { bindings::rtnl_link_unregister(TUN_LINK_OPS.get()) }
    }
}

// ---------------------------------------------------------------------------
// Netdevice notifier: the rings follow `tx_queue_len` (`tun_device_event()`).

static TUN_NOTIFIER: KernelStatic<bindings::notifier_block> =
    KernelStatic::new(bindings::notifier_block {
        notifier_call: Some(tun_device_event),
        next: ptr::null_mut(),
        priority: 0,
    });

/// The netdevice events the driver handles (`tun_device_event()`, and
/// the debugfs directory following the device).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DevEvent {
    /// `NETDEV_CHANGE_TX_QUEUE_LEN`: the rings follow.
    ChangeTxQueueLen,
    /// `NETDEV_UP`: writers waiting for the device wake.
    Up,
    /// `NETDEV_REGISTER` (also at the end of a namespace move).
    Register,
    /// `NETDEV_UNREGISTER` (also at the start of a namespace move).
    Unregister,
    /// `NETDEV_CHANGENAME`.
    ChangeName,
}

/// `tun_device_event()`.
///
/// # Safety
///
/// Called by the netdevice notifier chain, under rtnl, with a valid `ptr`.
unsafe extern "C" fn tun_device_event(
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
    let dev = unsafe { bindings::rtun_netdev_notifier_info_to_dev(ptr) };
    // SAFETY: A live device; reading its ops pointer.
    let ops = unsafe { (*dev).netdev_ops };
    if !is_our_ops(ops) {
        return bindings::RTUN_NOTIFY_DONE;
    }
    // SAFETY: One of ours (its ops say so), alive for the call. The chain
    // runs under rtnl; this module raises these events under its own token
    // only through `&mut Rtnl` methods (state change, register,
    // unregister), so the token made here is the only one in use.
    let r = unsafe {
        Rtnl::assume_held(|rtnl| crate::tun_device_event(NetDevice::from_raw(dev), ev, rtnl))
    };
    match r {
        Ok(()) => bindings::RTUN_NOTIFY_DONE,
        // tun.c answers `NOTIFY_BAD` (the caller sees EPERM), whatever
        // went wrong.
        Err(_) => bindings::RTUN_NOTIFY_BAD,
    }
}

/// Registration of the netdevice notifier, undone on drop.
pub(crate) struct NotifierRegistration(());

impl NotifierRegistration {
    /// `register_netdevice_notifier()`.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: A static notifier block, registered once.
        to_result(unsafe { bindings::register_netdevice_notifier(TUN_NOTIFIER.get()) })?;
        Ok(Self(()))
    }
}

impl Drop for NotifierRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`.
        unsafe { bindings::unregister_netdevice_notifier(TUN_NOTIFIER.get()) };
    }
}
