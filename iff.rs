// SPDX-License-Identifier: GPL-2.0

//! `TUNSETIFF` and its kin, beside tun.c: the `struct ifreq` they copy
//! ([`IfReq`]), device creation and attachment (`tun_set_iff`,
//! `tun_net_initialize`), `TUNGETIFF` (`tun_get_iff`), `TUNSETQUEUE`
//! (`tun_set_queue`) and permissions (`tun_permitted`).

use crate::ioctl::{IFNAMSIZ, IFREQ_LEN};
use crate::kver;
use crate::link::{link_ops, TUN_ATTR_GROUP};
use crate::params;
use crate::queue::{__tun_detach, tun_attach, tun_force_wake_queue};
use crate::sys::xdp;
use crate::sys::{
    self, DevFlags, DevSetup, Features, NameAssign, NetDevice, NetDeviceBuilder, PrivFlags, Rtnl,
};
use crate::{
    bindings, dropin, DevKind, Tun, TunDev, TunFile, IFF_ATTACH_QUEUE, IFF_DETACH_QUEUE,
    IFF_MULTI_QUEUE, IFF_NAPI, IFF_NAPI_FRAGS, IFF_NOFILTER, IFF_NO_CARRIER, IFF_PERSIST, IFF_TAP,
    IFF_TUN, IFF_TUN_EXCL, INVALID_ID, MAX_MTU, MAX_TAP_QUEUES, MIN_MTU, NETDEV_OPS, TUN_FEATURES,
    TUN_TYPE_MASK, TUN_USER_FEATURES,
};
use core::sync::atomic::Ordering;
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::ArcBorrow;

/// A `struct ifreq` as copied from and to user space.
pub(crate) struct IfReq(pub(crate) [u8; IFREQ_LEN]);

impl IfReq {
    /// `ifr_name`, cut at its NUL (the caller forced `ifr_name[IFNAMSIZ-1]`).
    pub(crate) fn name(&self) -> &CStr {
        let end = self.0[..IFNAMSIZ]
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(IFNAMSIZ - 1);
        CStr::from_bytes_with_nul(&self.0[..=end]).unwrap_or(c_str!(""))
    }

    pub(crate) fn set_name(&mut self, name: &[u8; IFNAMSIZ]) {
        self.0[..IFNAMSIZ].copy_from_slice(name);
        self.0[IFNAMSIZ - 1] = 0;
    }

    /// `ifr_flags` (a `short`).
    pub(crate) fn flags(&self) -> u32 {
        u32::from(u16::from_ne_bytes([self.0[IFNAMSIZ], self.0[IFNAMSIZ + 1]]))
    }

    pub(crate) fn set_flags(&mut self, flags: u32) {
        self.0[IFNAMSIZ..IFNAMSIZ + 2].copy_from_slice(&(flags as u16).to_ne_bytes());
    }
}

/// `tun_flags()`: the flags `TUNGETIFF` and `tun_flags` in sysfs report.
pub(crate) fn tun_flags(tun: &Tun) -> u32 {
    tun.flags() & (TUN_FEATURES | IFF_PERSIST | TUN_TYPE_MASK)
}

/// `tun_permitted()`: may the caller attach to `tun`? If an owner or a
/// group is set and the caller matches what is set (both, if both are),
/// or with `CAP_NET_ADMIN` in the device's namespace.
fn tun_permitted(tun: &Tun, tfile: &TunFile) -> bool {
    let owner = tun.owner.load(Ordering::Relaxed);
    let group = tun.group.load(Ordering::Relaxed);
    if (owner != INVALID_ID || group != INVALID_ID)
        && (owner == INVALID_ID || sys::current_euid_is(owner))
        && (group == INVALID_ID || sys::in_egroup(group))
    {
        return true;
    }
    tfile.net.capable_net_admin()
}

/// `tun_set_iff()`: attaches the file to the named device, creating it if
/// it does not exist.
pub(crate) fn tun_set_iff<'g>(
    tfile: ArcBorrow<'_, TunFile>,
    ifr: &mut IfReq,
    rtnl: &mut Rtnl<'g>,
) -> Result {
    let flags = ifr.flags();
    if tfile.detached.get_rtnl(rtnl).is_some() {
        return Err(EINVAL);
    }
    if flags & IFF_NAPI_FRAGS != 0 {
        if !sys::capable_net_admin() {
            return Err(EPERM);
        }
        if flags & IFF_NAPI == 0 || flags & TUN_TYPE_MASK != IFF_TAP {
            return Err(EINVAL);
        }
    }
    let skip_filter = flags & IFF_NOFILTER != 0;
    let dev = match TunDev::get_by_name(&tfile.net, ifr.name(), link_ops(), rtnl) {
        Some(found) => {
            // First, as tun.c: even a device of another driver is busy.
            if flags & IFF_TUN_EXCL != 0 {
                return Err(EBUSY);
            }
            let dev = found?;
            let tun = dev.priv_();
            let kind_ok = match tun.kind() {
                DevKind::Tun => flags & IFF_TUN != 0,
                DevKind::Tap => flags & IFF_TAP != 0,
            };
            if !kind_ok {
                return Err(EINVAL);
            }
            if (flags & IFF_MULTI_QUEUE != 0) != (tun.flags() & IFF_MULTI_QUEUE != 0) {
                return Err(EINVAL);
            }
            if !tun_permitted(tun, &tfile) {
                return Err(EPERM);
            }
            tun.security.get(rtnl).open()?;
            tun_attach(dev, tfile, skip_filter, flags, true, rtnl)?;
            if tun.flags() & IFF_MULTI_QUEUE != 0 && tun.numqueues() + tun.numdisabled() > 1 {
                // More queues were there: the device is set up already.
                dev.state_change(rtnl);
                ifr.set_name(&dev.name());
                return Ok(());
            }
            let keep = tun.flags() & !TUN_FEATURES;
            tun.flags
                .store(keep | (flags & TUN_FEATURES), Ordering::Relaxed);
            dev.state_change(rtnl);
            dev
        }
        None => {
            if !tfile.net.capable_net_admin() {
                return Err(EPERM);
            }
            // Before the type is known, as tun.c.
            sys::tun::security_tun_dev_create()?;
            let (kind, default_name) = match (flags & IFF_TUN != 0, flags & IFF_TAP != 0, dropin())
            {
                (true, _, false) => (DevKind::Tun, c_str!("rtun%d")),
                (true, _, true) => (DevKind::Tun, c_str!("tun%d")),
                (false, true, false) => (DevKind::Tap, c_str!("rtap%d")),
                (false, true, true) => (DevKind::Tap, c_str!("tap%d")),
                (false, false, _) => return Err(EINVAL),
            };
            let queues = if flags & IFF_MULTI_QUEUE != 0 {
                MAX_TAP_QUEUES as u32
            } else {
                1
            };
            let name = if ifr.name().is_empty() {
                default_name
            } else {
                ifr.name()
            };
            let type_flag = if kind == DevKind::Tun {
                IFF_TUN
            } else {
                IFF_TAP
            };
            let unguarded = params::unguarded();
            let tun = Tun::new(
                type_flag | (flags & TUN_FEATURES),
                unguarded,
                tfile.sock.sndbuf(),
                (tfile.into(), flags),
            );
            let mut b = NetDeviceBuilder::new(link_ops())
                .name(name)
                .name_assign(NameAssign::Unknown)
                .queues(queues)
                .netns(&tfile.net)
                .alloc(tun)?;
            b.set_ifindex(tfile.ifindex.load(Ordering::Relaxed));
            b.set_sysfs_group(&TUN_ATTR_GROUP);
            tun_net_initialize(&mut b, kind, unguarded);
            // `ndo_init` (`tun_net_init()`) allocates the LSM blob and
            // attaches the file as the first queue (any failure from there
            // on frees the blob with the `Tun`); the debugfs directory
            // comes with `NETDEV_REGISTER`.
            let dev = b.register(rtnl)?;
            // `free_netdev()` of a device whose registration failed does
            // not wait for references: as tun.c, the file learns of the
            // device only once it is registered (just now: this cannot
            // fail).
            tfile.tun.publish(dev, rtnl)?;
            dev
        }
    };

    if flags & IFF_NO_CARRIER != 0 {
        dev.carrier_off();
    } else {
        dev.carrier_on();
    }
    // Make sure persistent devices do not get stuck in xoff state (7.3:
    // queue by queue, under the ring locks, `tun_force_wake_queue()`).
    if kver::HAS_BACKPRESSURE {
        let tun = dev.priv_();
        let n = tun.numqueues() as usize;
        for slot in &tun.tfiles[..n] {
            if let Some(ntfile) = slot.get_rtnl(rtnl) {
                tun_force_wake_queue(dev, ntfile);
            }
        }
    } else if dev.is_running() {
        dev.tx_wake_all_queues();
    }
    ifr.set_name(&dev.name());
    Ok(())
}

/// `tun_get_iff()`.
pub(crate) fn tun_get_iff(dev: &TunDev, ifr: &mut IfReq) {
    ifr.set_name(&dev.name());
    ifr.set_flags(tun_flags(dev.priv_()));
}

/// `tun_set_queue()`: `TUNSETQUEUE` with `IFF_ATTACH_QUEUE` or
/// `IFF_DETACH_QUEUE`.
pub(crate) fn tun_set_queue(tfile: ArcBorrow<'_, TunFile>, flags: u32) -> Result {
    Rtnl::with(|rtnl| {
        // A counted reference (tun.c's `tun_get()`): the file's pointer to
        // the device changes under the token below.
        let dev = if flags & IFF_ATTACH_QUEUE != 0 {
            let dev = tfile
                .detached
                .get_rtnl(rtnl)
                .map(NetDevice::hold)
                .ok_or(EINVAL)?;
            dev.priv_().security.get(rtnl).attach_queue()?;
            tun_attach(&dev, tfile, false, dev.priv_().flags(), true, rtnl)?;
            dev
        } else if flags & IFF_DETACH_QUEUE != 0 {
            let dev = tfile
                .tun
                .get_rtnl(rtnl)
                .map(NetDevice::hold)
                .ok_or(EINVAL)?;
            if dev.priv_().flags() & IFF_MULTI_QUEUE == 0 || tfile.detached.get_rtnl(rtnl).is_some()
            {
                return Err(EINVAL);
            }
            __tun_detach(&tfile, false, rtnl);
            dev
        } else {
            return Err(EINVAL);
        };
        dev.state_change(rtnl);
        Ok(())
    })
}

/// `tun_net_initialize()` and `tun_net_init()`'s features: the
/// type-specific set-up of a new device.
fn tun_net_initialize(b: &mut DevSetup<Tun>, kind: DevKind, unguarded: bool) {
    let vlan_tx = Features::HW_VLAN_CTAG_TX | Features::HW_VLAN_STAG_TX;
    let hw = Features::SG | Features::FRAGLIST | TUN_USER_FEATURES | vlan_tx;
    b.set_hw_features(hw);
    b.set_features(hw);
    b.set_vlan_features(hw - vlan_tx);
    // 7.3 (with UDP-tunnel GSO): encapsulated packets get the same
    // offloads, so that a tunnel's GSO packets reach the reader whole;
    // 6.12's tun.c leaves `hw_enc_features` empty.
    if kver::HAS_UDP_TUNNEL_GSO {
        b.set_hw_enc_features(hw);
    }
    let mode = usize::from(unguarded);
    match kind {
        DevKind::Tun => {
            // A point-to-point L3 device: no link header or address.
            b.set_ops(&NETDEV_OPS[mode]);
            b.ip_tunnel_header_ops();
            b.set_link_layer(bindings::ARPHRD_NONE, 0, 0);
            b.set_mtu(1500);
            b.set_flags(DevFlags::POINTOPOINT | DevFlags::NOARP | DevFlags::MULTICAST);
        }
        DevKind::Tap => {
            // An Ethernet device with a random address, which may change
            // while up and does not share transmitted skbs.
            b.set_ops(&NETDEV_OPS[2 + mode]);
            b.ether_setup();
            b.priv_flags_clear(PrivFlags::TX_SKB_SHARING);
            b.priv_flags_set(PrivFlags::LIVE_ADDR_CHANGE);
            b.eth_hw_addr_random();
            // XDP: a program's verdicts, redirects from it and to it.
            b.set_xdp_features(
                xdp::NETDEV_XDP_ACT_BASIC
                    | xdp::NETDEV_XDP_ACT_REDIRECT
                    | xdp::NETDEV_XDP_ACT_NDO_XMIT,
            );
        }
    }
    let max_mtu = MAX_MTU - u32::from(b.hard_header_len());
    b.set_mtu_range(MIN_MTU, max_mtu);
}
