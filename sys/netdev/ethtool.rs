// SPDX-License-Identifier: GPL-2.0

//! Ethtool: the [`EthtoolOps`] a driver implements, what they answer
//! ([`DrvInfo`], [`LinkKsettings`], [`Channels`]) and the [`EthtoolVTable`]
//! that turns them into a `struct ethtool_ops` at compile time.

use super::device::NetDevice;
use crate::bindings;
use crate::sys::sync::rtnl::Rtnl;
use crate::sys::zeroed;
use core::ffi::c_int;
use core::marker::PhantomData;
use core::ptr;
use kernel::build_error;
use kernel::error::VTABLE_DEFAULT_ERROR;
use kernel::prelude::*;

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

/// The ethtool ops of a net device driver (`struct ethtool_ops`), whose
/// devices' private areas hold a `Priv`: [`EthtoolVTable::new`] builds the C
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

/// The `ethtool_ops` of devices holding a `P`, built at compile time from
/// an [`EthtoolOps`]: a `static` of the driver's, which its
/// [`RtnlLinkOps::setup`] installs ([`DevSetup::set_ethtool_ops`]).
pub(crate) struct EthtoolVTable<P>(pub(super) bindings::ethtool_ops, PhantomData<P>);

// SAFETY: Integers and function pointers, read by the kernel.
unsafe impl<P> Sync for EthtoolVTable<P> {}

impl<P> EthtoolVTable<P> {
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
