// SPDX-License-Identifier: GPL-2.0

//! `net_device_ops`: the [`NetDeviceOps`] a driver implements, [`NetDeviceVTable`] (the
//! C table, built at compile time) and its trampolines, [`TxResult`],
//! [`Stats64`].

use super::device::NetDevice;
use super::rcudev::InUninit;
use crate::bindings;
use crate::sys::skb::SkBuff;
use crate::sys::sync::lock::BhOff;
use crate::sys::sync::rtnl::Rtnl;
use crate::sys::xdp::{XdpProg, XdpXmitFrames};
use crate::sys::zeroed;
use core::ffi::c_int;
use core::marker::PhantomData;
use kernel::build_error;
use kernel::error::{from_result, VTABLE_DEFAULT_ERROR};
use kernel::prelude::*;

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
/// `Priv`: [`NetDeviceVTable::new`] builds the C table at compile time. An optional
/// op the driver does not implement stays `NULL` (`#[vtable]`'s `HAS_*`),
/// so the core's default applies; `ndo_start_xmit` is required, as in C.
#[vtable]
pub(crate) trait NetDeviceOps: 'static {
    /// The private area.
    type Priv: Sync + 'static;

    /// `ndo_init`: under rtnl, from `register_netdevice()` (through
    /// [`UnregisteredNetDevice::register`] or rtnetlink's `newlink`) once the
    /// name is valid, before the device's queues get their sysfs objects
    /// and the device is announced. The device is not registered yet: it
    /// must not be published in an [`RcuDev`], nor a counted reference to
    /// it ([`NetDevice::hold`]) kept past the call: a registration that
    /// fails after `ndo_init` frees the device at once (`free_netdev()` of
    /// one never listed), references or not. On failure registration
    /// fails and `ndo_uninit` is not called (the private area is dropped),
    /// so nothing may be left behind that the private area's drop does not
    /// undo; after success, a later failure of registration calls
    /// `ndo_uninit`.
    fn init<'g>(_dev: &'g NetDevice<Self::Priv>, _rtnl: &mut Rtnl<'g>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_uninit`: under rtnl, the device is being unregistered (or its
    /// registration failed after `ndo_init`). A driver that publishes its
    /// devices in [`RcuDev`]s unpublishes them here
    /// ([`RcuDev::unpublish_uninit`]).
    fn uninit<'g>(_dev: &InUninit<'g, Self::Priv>, _rtnl: &mut Rtnl<'g>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_open`, under rtnl; an error keeps the device down.
    fn open(_dev: &NetDevice<Self::Priv>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_stop`, under rtnl (the token is shared: the driver may read
    /// what rtnl guards, not change it).
    fn stop<'g>(_dev: &'g NetDevice<Self::Priv>, _rtnl: &Rtnl<'g>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_start_xmit`, with bottom halves off.
    fn start_xmit(skb: SkBuff, dev: &NetDevice<Self::Priv>, bh: &BhOff) -> TxResult;

    /// `ndo_select_queue`.
    fn select_queue(_dev: &NetDevice<Self::Priv>, _skb: &mut SkBuff) -> u16 {
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

    /// `ndo_bpf`'s `XDP_SETUP_PROG`, under rtnl: the device's XDP program
    /// becomes `prog` (`None`: none). Only in tables built with
    /// [`NetDeviceVTable::xdp`]; the core answers `EOPNOTSUPP` (native
    /// mode) for the others.
    fn xdp_setup<'g>(
        _dev: &'g NetDevice<Self::Priv>,
        _prog: Option<XdpProg>,
        _rtnl: &mut Rtnl<'g>,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_xdp_xmit`, from any context with bottom halves off: queues the
    /// frames it takes from `frames` (in order; what it does not take
    /// the core frees), waking the reader if `flush`. An error takes none.
    fn xdp_xmit(
        _dev: &NetDevice<Self::Priv>,
        _frames: &mut XdpXmitFrames<'_>,
        _flush: bool,
        _bh: &BhOff,
    ) -> Result {
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
/// time from a [`NetDeviceOps`], and optionally some of C's library ops: a
/// `static` of the driver's.
pub(crate) struct NetDeviceVTable<P>(pub(super) bindings::net_device_ops, PhantomData<P>);

// SAFETY: Only function pointers, read by the kernel.
unsafe impl<P> Sync for NetDeviceVTable<P> {}

impl<P> NetDeviceVTable<P> {
    /// The ops of `T`.
    pub(crate) const fn new<T: NetDeviceOps<Priv = P>>() -> Self {
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

    /// With `T`'s XDP ops: `ndo_bpf` (`XDP_SETUP_PROG` alone, `EINVAL` for
    /// every other command) and `ndo_xdp_xmit`.
    pub(crate) const fn xdp<T: NetDeviceOps<Priv = P>>(mut self) -> Self {
        if !T::HAS_XDP_SETUP || !T::HAS_XDP_XMIT {
            build_error!("an XDP device implements xdp_setup and xdp_xmit");
        }
        self.0.ndo_bpf = Some(Adapter::<T>::bpf);
        self.0.ndo_xdp_xmit = Some(Adapter::<T>::xdp_xmit);
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

/// The C trampolines of a [`NetDeviceOps`].
struct Adapter<T>(PhantomData<T>);

impl<T: NetDeviceOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by `register_netdevice()`, under rtnl, on a device whose ops
    /// are `T`'s.
    unsafe extern "C" fn init(dev: *mut bindings::net_device) -> c_int {
        // SAFETY: `register_netdevice()` calls `ndo_init` under rtnl on a
        // device of `T`'s whose private area holds an initialised `P`
        // (`NetDeviceBuilder::alloc`), alive for the call: reached from the
        // driver only through `UnregisteredNetDevice::register`, which holds its
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
        // `UnregisteredNetDevice::register` and `NetDevice::unregister`, which
        // hold its token mutably borrowed.
        unsafe {
            Rtnl::assume_held(|rtnl| T::uninit(&InUninit::new(NetDevice::from_raw(dev)), rtnl));
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
        // SAFETY: A registered device of `T`'s. The core calls `ndo_stop`
        // under rtnl (`dev_close()` and its kin), entered from user space or
        // from one of this module's `&mut Rtnl` methods (`unregister`), as
        // `assume_held` requires; the driver gets the token shared only.
        unsafe { Rtnl::assume_held(|rtnl| T::stop(NetDevice::from_raw(dev), rtnl)) };
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
            TxResult::Dropped => bindings::NET_XMIT_DROP as bindings::netdev_tx_t,
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
        // SAFETY: We only borrow the skb, lent to us alone for the call
        // (a program run on it may write its control buffer): it is not
        // ours to free, so it is wrapped without ownership.
        let (dev, mut skb) = unsafe {
            (
                NetDevice::from_raw(dev),
                core::mem::ManuallyDrop::new(SkBuff::from_raw(skb)),
            )
        };
        T::select_queue(dev, &mut skb)
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
    /// Called by the core, under rtnl, on a registered device of `T`'s
    /// with a valid `xdp` request whose program, if any, holds a
    /// reference the core moved to us (`dev_xdp_install()`).
    unsafe extern "C" fn bpf(
        dev: *mut bindings::net_device,
        xdp: *mut bindings::netdev_bpf,
    ) -> c_int {
        // SAFETY: A valid request (the caller).
        let (command, prog) = unsafe {
            (
                (*xdp).command,
                (*xdp).__bindgen_anon_1.__bindgen_anon_1.prog,
            )
        };
        if command != bindings::RTUN_XDP_SETUP_PROG as bindings::bpf_netdev_command {
            return EINVAL.to_errno();
        }
        let prog = core::ptr::NonNull::new(prog);
        // SAFETY: A live XDP program the core holds for the call: the
        // driver gets a reference of its own.
        let ours = prog.map(|p| unsafe { XdpProg::get(p) });
        // SAFETY: A registered device of `T`'s, under rtnl: `ndo_bpf` is
        // called from `dev_xdp_install()` (netlink, bpf links, unregister),
        // none of them one of this module's `&mut Rtnl` methods.
        let ret =
            unsafe { Rtnl::assume_held(|rtnl| T::xdp_setup(NetDevice::from_raw(dev), ours, rtnl)) };
        match ret {
            Ok(()) => {
                if let Some(p) = prog {
                    // SAFETY: Success: the reference the core moved to us is
                    // ours to put (the driver holds its own).
                    unsafe { bindings::bpf_prog_put(p.as_ptr()) };
                }
                0
            }
            // The core puts its reference on failure.
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the core (`ndo_xdp_xmit`) with bottom halves off on a
    /// registered device of `T`'s, with `n` live frames at `frames` it
    /// hands over, those not taken staying its own.
    unsafe extern "C" fn xdp_xmit(
        dev: *mut bindings::net_device,
        n: c_int,
        frames: *mut *mut bindings::xdp_frame,
        flags: u32,
    ) -> c_int {
        if flags & !bindings::RTUN_XDP_XMIT_FLAGS_MASK != 0 {
            return EINVAL.to_errno();
        }
        // SAFETY: As the caller guarantees; `ndo_xdp_xmit` runs with bottom
        // halves off (NAPI, a flush of a redirect, a test run's batch).
        let (dev, mut frames, bh) = unsafe {
            (
                NetDevice::from_raw(dev),
                XdpXmitFrames::new(frames, n.max(0) as usize),
                BhOff::assume(),
            )
        };
        match T::xdp_xmit(
            dev,
            &mut frames,
            flags & bindings::RTUN_XDP_XMIT_FLUSH != 0,
            &bh,
        ) {
            Ok(()) => frames.taken() as c_int,
            Err(e) => e.to_errno(),
        }
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
