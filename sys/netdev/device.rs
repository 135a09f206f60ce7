// SPDX-License-Identifier: GPL-2.0

//! Net devices: [`NetDevice`] (a device whose private area holds a `P`),
//! reference counted (`dev_hold`/`dev_put`) as the kernel crate's
//! [`AlwaysRefCounted`], so a counted reference is an [`ARef<NetDevice<P>>`];
//! the device pointer readers take references from under RCU is
//! [`RcuDev`](super::rcudev::RcuDev).

use super::link::RtnlLinkVTable;
use super::netns::open_netns;
use super::netns::NetNs;
use super::ops::Stats64;
use crate::bindings;
use crate::sys::compat::{ARef, AlwaysRefCounted};
use crate::sys::sync::lock::BhOff;
use crate::sys::sync::rtnl::Rtnl;
use core::ffi::{c_uint, c_void};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A network device whose private area holds a `P`.
///
/// # Invariants
///
/// The device was allocated by [`NetDeviceBuilder::alloc`] for a `P` (its
/// `rtnl_link_ops` is a [`RtnlLinkVTable<P>`]), so its private area holds an
/// initialised `P` until `priv_destructor` runs. References to it are only
/// handed out while it is alive: in callbacks, under rtnl while registered
/// (see [`Rtnl`]), or under an [`ARef`].
#[repr(transparent)]
pub(crate) struct NetDevice<P>(Opaque<bindings::net_device>, PhantomData<P>);

// SAFETY: `net_device` is shared between CPUs by design; every access goes
// through the kernel's own synchronisation or atomics, and `P: Sync` is what
// the private area shares.
unsafe impl<P: Sync> Sync for NetDevice<P> {}
// SAFETY: As above.
unsafe impl<P: Sync> Send for NetDevice<P> {}

/// One transmit queue of a device (`struct netdev_queue`).
///
/// # Invariants
///
/// The pointer is a queue of a device that is alive for `'a`.
pub(crate) struct TxQueue<'a>(NonNull<bindings::netdev_queue>, PhantomData<&'a ()>);

impl TxQueue<'_> {
    /// `netif_tx_stop_queue()`.
    #[inline(always)]
    pub(crate) fn stop(&self) {
        // SAFETY: A live queue (type invariants).
        unsafe { bindings::netif_tx_stop_queue(self.0.as_ptr()) }
    }

    /// `netif_tx_wake_queue()`.
    #[inline(always)]
    pub(crate) fn wake(&self) {
        // SAFETY: A live queue (type invariants).
        unsafe { bindings::netif_tx_wake_queue(self.0.as_ptr()) }
    }

    /// `netif_tx_queue_stopped()`.
    #[inline(always)]
    pub(crate) fn is_stopped(&self) -> bool {
        // SAFETY: A live queue (type invariants).
        unsafe { bindings::netif_tx_queue_stopped(self.0.as_ptr()) }
    }

    /// `qdisc_txq_has_no_queue()`: the queue's qdisc has no queue
    /// (`noqueue`). From `ndo_start_xmit` only (`_bh`), where the core has
    /// given every queue a qdisc (`dev_init_scheduler()` at registration:
    /// `noop` at least), which the helper dereferences.
    #[inline(always)]
    pub(crate) fn has_no_queue(&self, _bh: &BhOff) -> bool {
        // SAFETY: A live queue of a registered device, whose `qdisc` is
        // never null (see above).
        unsafe { bindings::qdisc_txq_has_no_queue(self.0.as_ptr()) }
    }
}

/// Net device flags read by drivers.
pub(crate) const IFF_UP: u32 = bindings::RTUN_IFF_UP;

impl<P> NetDevice<P> {
    /// # Safety
    ///
    /// `ptr` is a device whose private area holds a `P` (see the type
    /// invariants), alive for `'a`.
    pub(in crate::sys) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `NetDevice` is transparent over `net_device`.
        unsafe { &*ptr.cast() }
    }

    pub(in crate::sys) fn as_ptr(&self) -> *mut bindings::net_device {
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

    /// `dev->features`, read once (tun.c reads it without rtnl on the read
    /// path; the core changes it under rtnl).
    pub(crate) fn features(&self) -> u64 {
        // SAFETY: A live device.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).features)) }
    }

    /// `dev->tx_queue_len`, READ_ONCE.
    pub(crate) fn tx_queue_len(&self) -> u32 {
        // SAFETY: A live device.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).tx_queue_len)) }
    }

    /// `dev_sw_netstats_rx_add()`: one packet of `len` bytes received, on
    /// this CPU's counters (every device of a [`RtnlLinkOps`] has per-CPU
    /// counters, `NETDEV_PCPU_STAT_TSTATS`, from registration on; before,
    /// `dev->tstats` is null and nothing is counted).
    #[inline(always)]
    pub(crate) fn sw_netstats_rx_add(&self, len: u32) {
        // SAFETY: A live device set up by `setup()` (per-CPU counters), of
        // which the caller holds a reference or runs a callback (`&self`);
        // the counters, once allocated, live until after the last reference.
        // `preempt_disable()` as around tun.c's adds: `this_cpu_ptr()`, then a
        // plain add through it, which a migration in between would make on
        // another CPU's counter, racing its owner (free where the kernel has
        // no preempt count: PREEMPT_NONE).
        unsafe {
            if !(*self.as_ptr()).__bindgen_anon_2.tstats.is_null() {
                bindings::preempt_disable();
                bindings::dev_sw_netstats_rx_add(self.as_ptr(), len);
                bindings::preempt_enable();
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
                bindings::preempt_disable();
                bindings::dev_sw_netstats_tx_add(self.as_ptr(), 1, len);
                bindings::preempt_enable();
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
    /// A device not registered (already being unregistered) is left
    /// alone: the core would `BUG()` on it.
    pub(crate) fn unregister(&self, _rtnl: &mut Rtnl<'_>) {
        if !self.is_registered() {
            return;
        }
        // SAFETY: A registered device (checked, under rtnl, which
        // unregistration needs); rtnl held.
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

    /// A new file descriptor for the device's network namespace, if the
    /// caller has `CAP_NET_ADMIN` there (else `EPERM`): tun's
    /// `TUNGETDEVNETNS`, as `open_related_ns()` gives it.
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
                crate::sys::compat::cstr_ptr(kernel::c_str!("%pA")).cast(),
                ptr::from_ref(&args).cast::<c_void>(),
            )
        }
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

    /// `netdev_get_tx_queue()`: transmit queue `index`, if the device has
    /// it (`index < dev->num_tx_queues`, fixed at allocation).
    #[inline(always)]
    pub(crate) fn tx_queue(&self, index: u16) -> Option<TxQueue<'_>> {
        // SAFETY: A live device; `num_tx_queues` does not change after
        // allocation.
        let n = unsafe { (*self.as_ptr()).num_tx_queues };
        if u32::from(index) >= n {
            return None;
        }
        // SAFETY: A live device and one of its queues, which live as long
        // as it does.
        let q = unsafe { bindings::netdev_get_tx_queue(self.as_ptr(), c_uint::from(index)) };
        // INVARIANT: The queue lives as long as the device, borrowed here.
        NonNull::new(q).map(|q| TxQueue(q, PhantomData))
    }

    /// `netif_wake_subqueue()`: wakes transmit queue `index` (nothing if
    /// the device has no such queue).
    pub(crate) fn wake_subqueue(&self, index: u16) {
        if self.tx_queue(index).is_some() {
            // SAFETY: A live device and, as checked, one of its queues.
            unsafe { bindings::netif_wake_subqueue(self.as_ptr(), index) }
        }
    }

    /// Takes a counted reference (`dev_hold()`): `ARef::from(self)`.
    #[inline(always)]
    pub(crate) fn hold(&self) -> ARef<Self> {
        ARef::from(self)
    }

    /// `__dev_get_by_name()`, if the device found is `link`'s. It stays
    /// valid for the whole rtnl section `'g` (see [`Rtnl`]).
    pub(crate) fn get_by_name<'g>(
        net: &NetNs,
        name: &CStr,
        link: &'static RtnlLinkVTable<P>,
        _rtnl: &Rtnl<'g>,
    ) -> Option<Result<&'g NetDevice<P>>> {
        // SAFETY: rtnl held; `name` is NUL-terminated.
        let p = unsafe {
            bindings::__dev_get_by_name(net.0.as_ptr(), crate::sys::compat::cstr_ptr(name).cast())
        };
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

// SAFETY: A `net_device` is reference counted from its allocation
// (`dev_hold()`/`dev_put()`, on `dev->pcpu_refcnt` or `dev_refcnt`), and
// the layer's devices are freed only after their last reference: a
// registered one is freed by `netdev_run_todo()`, which waits for every
// reference before `needs_free_netdev` frees it (and `priv_destructor`
// drops the private area), and `&NetDevice` is handed out only while a
// device is alive (type invariants; `RcuDev` publishes registered devices
// only). `dev_put()` may run on any CPU, in any context. One exception,
// as with the hand-made reference this replaced: a device whose
// registration fails after `ndo_init` was never listed, and
// `free_netdev()` frees it at once, references or not; `ndo_init` is the
// only callback that sees such a device, and `NetDeviceOps::init` must not
// keep a reference past it (its documented rule, which the compiler does
// not check; tun's and dummy's take none).
unsafe impl<P> AlwaysRefCounted for NetDevice<P> {
    #[inline(always)]
    fn inc_ref(&self) {
        // SAFETY: A live device (type invariants).
        unsafe { bindings::dev_hold(self.as_ptr()) };
    }

    #[inline(always)]
    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller gives back a reference it owns, so the device
        // is alive until this `dev_put()`. CAST: `NetDevice` is a
        // transparent `Opaque<net_device>`.
        unsafe { bindings::dev_put(obj.as_ptr().cast::<bindings::net_device>()) };
    }
}
