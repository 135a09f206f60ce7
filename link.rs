// SPDX-License-Identifier: GPL-2.0

//! The device as the net device core sees it, beside tun.c's `tun_setup()`,
//! `tun_validate()`, `tun_get_size()`, `tun_fill_info()` (`tun_link_ops`),
//! `tun_ethtool_ops` and the sysfs attributes (`tun_attr_group`): the
//! driver's [`RtnlLinkOps`] and [`EthtoolOps`], which `sys/` turns into the C
//! tables at compile time.

use crate::sys::errno::EOPNOTSUPP;
use crate::sys::{
    nla_total_size, AttrGroup, AttrList, Channels, DevSetup, DeviceAttributeOps,
    DeviceAttributeVTable, DrvInfo, EthtoolOps, EthtoolVTable, LinkAttrs, LinkKsettings, NlMsg,
    Rtnl, RtnlLinkOps, RtnlLinkVTable, SysfsBuf,
};
use crate::{
    bindings, dropin, iff, sys, DevKind, Tun, TunDev, IFF_MULTI_QUEUE, IFF_NO_PI, IFF_PERSIST,
    IFF_VNET_HDR, INVALID_ID, MAX_TAP_QUEUES, TUN_READQ_SIZE, TUN_TYPE_MASK,
};
use core::fmt::Write;
use core::sync::atomic::Ordering;
use kernel::c_str;
use kernel::prelude::*;

/// The driver, as rtnetlink sees it (`tun_link_ops`): of kind `rust_tun`
/// beside tun.ko, `tun` in drop-in mode (`DROPIN`).
pub(crate) struct TunDriver<const DROPIN: bool>;

#[vtable]
impl<const DROPIN: bool> RtnlLinkOps for TunDriver<DROPIN> {
    type Priv = Tun;
    const KIND: &'static CStr = if DROPIN {
        c_str!("tun")
    } else {
        c_str!("rust_tun")
    };

    /// `tun_setup()`: tun's ethtool ops, lockless transmit, the default
    /// `tx_queue_len` (TUN/TAP specifics come with `tun_net_initialize()`,
    /// `iff::tun_net_initialize`).
    fn setup(dev: &mut DevSetup<Tun>) {
        dev.set_ethtool_ops(&TUN_ETHTOOL_OPS);
        dev.set_lltx();
        dev.set_tx_queue_len(TUN_READQ_SIZE);
    }

    /// `tun_validate()`: devices are made with `TUNSETIFF`, not through
    /// rtnetlink (`ip link add ... type tun` fails, `EOPNOTSUPP`).
    fn validate(_attrs: &LinkAttrs<'_>) -> Result {
        Err(EOPNOTSUPP)
    }

    /// `tun_get_size()`: owner, group, type, pi, vnet_hdr, persist,
    /// multi_queue, numqueues, numdisabled.
    fn get_size(_dev: &TunDev) -> usize {
        2 * nla_total_size(4) + 5 * nla_total_size(1) + 2 * nla_total_size(4)
    }

    /// `tun_fill_info()`.
    fn fill_info(dev: &TunDev, msg: &mut NlMsg) -> Result {
        let tun = dev.priv_();
        let flags = tun.flags();
        msg.put_u8(bindings::IFLA_TUN_TYPE, (flags & TUN_TYPE_MASK) as u8)?;
        let owner = tun.owner.load(Ordering::Relaxed);
        if owner != INVALID_ID {
            msg.put_u32(bindings::IFLA_TUN_OWNER, sys::from_kuid_munged(owner))?;
        }
        let group = tun.group.load(Ordering::Relaxed);
        if group != INVALID_ID {
            msg.put_u32(bindings::IFLA_TUN_GROUP, sys::from_kgid_munged(group))?;
        }
        msg.put_u8(bindings::IFLA_TUN_PI, u8::from(flags & IFF_NO_PI == 0))?;
        msg.put_u8(
            bindings::IFLA_TUN_VNET_HDR,
            u8::from(flags & IFF_VNET_HDR != 0),
        )?;
        msg.put_u8(
            bindings::IFLA_TUN_PERSIST,
            u8::from(flags & IFF_PERSIST != 0),
        )?;
        msg.put_u8(
            bindings::IFLA_TUN_MULTI_QUEUE,
            u8::from(flags & IFF_MULTI_QUEUE != 0),
        )?;
        if flags & IFF_MULTI_QUEUE != 0 {
            msg.put_u32(bindings::IFLA_TUN_NUM_QUEUES, tun.numqueues())?;
            msg.put_u32(bindings::IFLA_TUN_NUM_DISABLED_QUEUES, tun.numdisabled())?;
        }
        Ok(())
    }
}

/// `tun_ethtool_ops`.
pub(crate) struct TunEthtool;

#[vtable]
impl EthtoolOps for TunEthtool {
    type Priv = Tun;
    const GET_LINK: bool = true;
    const GET_TS_INFO: bool = true;

    /// `tun_get_drvinfo()`: in drop-in mode tun's own identity, `tun` 1.6;
    /// `bus_info` tells TUN from TAP, as tun.c.
    fn get_drvinfo(dev: &TunDev) -> DrvInfo {
        let (driver, version): (&'static [u8], &'static [u8]) = if dropin() {
            (b"tun", b"1.6")
        } else {
            (b"rust_tun", b"0.2")
        };
        DrvInfo {
            driver,
            version,
            bus_info: match dev.priv_().kind() {
                DevKind::Tun => b"tun",
                DevKind::Tap => b"tap",
            },
        }
    }

    /// `tun_get_msglevel()`.
    fn get_msglevel(dev: &TunDev) -> u32 {
        dev.priv_().msg_enable.load(Ordering::Relaxed)
    }

    /// `tun_set_msglevel()`.
    fn set_msglevel(dev: &TunDev, level: u32) {
        dev.priv_().msg_enable.store(level, Ordering::Relaxed)
    }

    /// `tun_get_link_ksettings()`.
    fn get_link_ksettings<'a>(dev: &'a TunDev, rtnl: &'a Rtnl<'_>) -> &'a LinkKsettings {
        dev.priv_().link_ksettings.get(rtnl)
    }

    /// `tun_set_link_ksettings()`: stored as given, as tun.c.
    fn set_link_ksettings(dev: &TunDev, ks: &LinkKsettings, rtnl: &mut Rtnl<'_>) {
        *dev.priv_().link_ksettings.get_mut(rtnl) = ks.clone();
    }

    /// `tun_get_channels()`: a combined channel per attached queue.
    fn get_channels(dev: &TunDev) -> Channels {
        let tun = dev.priv_();
        Channels {
            combined_count: tun.numqueues(),
            max_combined: if tun.flags() & IFF_MULTI_QUEUE != 0 {
                MAX_TAP_QUEUES as u32
            } else {
                1
            },
        }
    }

    /// `tun_get_coalesce()`.
    fn get_coalesce(dev: &TunDev) -> u32 {
        dev.priv_().rx_batched.load(Ordering::Relaxed)
    }

    /// `tun_set_coalesce()`: at most `NAPI_POLL_WEIGHT`.
    fn set_coalesce(dev: &TunDev, frames: u32) {
        dev.priv_()
            .rx_batched
            .store(frames.min(bindings::NAPI_POLL_WEIGHT), Ordering::Relaxed)
    }
}

static TUN_ETHTOOL_OPS: EthtoolVTable<Tun> = EthtoolVTable::new::<TunEthtool>();

/// `tun_default_link_ksettings()`: 10 Gb/s, full duplex, twisted pair,
/// no autonegotiation, no link modes.
pub(crate) const fn tun_default_link_ksettings() -> LinkKsettings {
    LinkKsettings::new(
        bindings::SPEED_10000,
        bindings::DUPLEX_FULL as u8,
        bindings::PORT_TP as u8,
        bindings::AUTONEG_DISABLE as u8,
    )
}

/// The rtnl link ops: `ip -d link` shows the kind and tun's attributes,
/// `ip link del` works, module unload deletes what is left; they also mark
/// a device as ours. Kind `rust_tun` beside tun.ko, `tun` in drop-in mode
/// (what `ip tuntap show` lists).
pub(crate) static TUN_LINK_OPS: RtnlLinkVTable<Tun> = RtnlLinkVTable::new::<TunDriver<false>>();
static DROPIN_LINK_OPS: RtnlLinkVTable<Tun> = RtnlLinkVTable::new::<TunDriver<true>>();

/// This mode's link ops.
pub(crate) fn link_ops() -> &'static RtnlLinkVTable<Tun> {
    if dropin() {
        &DROPIN_LINK_OPS
    } else {
        &TUN_LINK_OPS
    }
}

/// `/sys/class/net/<dev>/tun_flags` (tun.c's `tun_attr_group`, read by
/// `ip tuntap show` with `owner` and `group`).
struct TunFlagsAttr;

impl DeviceAttributeOps for TunFlagsAttr {
    type Priv = Tun;

    /// `tun_flags_show()`.
    fn show(dev: &TunDev, out: &mut SysfsBuf<'_>) -> core::fmt::Result {
        writeln!(out, "0x{:x}", iff::tun_flags(dev.priv_()))
    }
}

/// `/sys/class/net/<dev>/owner`.
struct OwnerAttr;

impl DeviceAttributeOps for OwnerAttr {
    type Priv = Tun;

    /// `owner_show()`: the owner in the reader's user namespace, or -1.
    fn show(dev: &TunDev, out: &mut SysfsBuf<'_>) -> core::fmt::Result {
        match dev.priv_().owner.load(Ordering::Relaxed) {
            INVALID_ID => writeln!(out, "-1"),
            kuid => writeln!(out, "{}", sys::from_kuid_munged(kuid)),
        }
    }
}

/// `/sys/class/net/<dev>/group`.
struct GroupAttr;

impl DeviceAttributeOps for GroupAttr {
    type Priv = Tun;

    /// `group_show()`.
    fn show(dev: &TunDev, out: &mut SysfsBuf<'_>) -> core::fmt::Result {
        match dev.priv_().group.load(Ordering::Relaxed) {
            INVALID_ID => writeln!(out, "-1"),
            kgid => writeln!(out, "{}", sys::from_kgid_munged(kgid)),
        }
    }
}

static TUN_FLAGS_ATTR: DeviceAttributeVTable<Tun> =
    DeviceAttributeVTable::new::<TunFlagsAttr>(c_str!("tun_flags"));
static OWNER_ATTR: DeviceAttributeVTable<Tun> =
    DeviceAttributeVTable::new::<OwnerAttr>(c_str!("owner"));
static GROUP_ATTR: DeviceAttributeVTable<Tun> =
    DeviceAttributeVTable::new::<GroupAttr>(c_str!("group"));
static TUN_DEV_ATTRS: AttrList<Tun, 4> = AttrList::new([
    Some(&TUN_FLAGS_ATTR),
    Some(&OWNER_ATTR),
    Some(&GROUP_ATTR),
    None,
]);
/// `tun_attr_group`.
pub(crate) static TUN_ATTR_GROUP: AttrGroup<Tun> = AttrGroup::new(&TUN_DEV_ATTRS);
