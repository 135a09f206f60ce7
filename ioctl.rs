// SPDX-License-Identifier: GPL-2.0

//! The ioctls (tun.c's `__tun_chr_ioctl`) and the ABI structures they
//! copy (`struct ifreq`, `struct tun_pi`: sizes from the bindings); device
//! creation and attachment (`tun_set_iff`, `tun_net_initialize`),
//! `TUNSETQUEUE` (`tun_set_queue`), permissions (`tun_permitted`).

use crate::queue::{__tun_detach, tun_attach};
use crate::sys::{self, errno, NetDeviceBuilder, Rtnl};
use crate::{
    bindings, DevKind, Tun, TunDev, TunDriver, TunFile, IFF_ATTACH_QUEUE, IFF_DETACH_QUEUE,
    IFF_MULTI_QUEUE, IFF_NO_CARRIER, IFF_PERSIST, IFF_TAP, IFF_TUN, IFF_TUN_EXCL, INVALID_ID,
    MAX_MTU, MAX_TAP_QUEUES, MIN_MTU, NETDEV_OPS, TUN_FEATURES, TUN_LINK_OPS, TUN_TYPE_MASK,
};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::ArcBorrow;
use kernel::uaccess::UserSlice;
use kernel::{c_str, ioctl};

/// The tun ioctls, same numbers as `include/uapi/linux/if_tun.h`.
const TUNSETIFF: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 202);
const TUNSETPERSIST: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 203);
const TUNGETFEATURES: u32 = ioctl::_IOR::<core::ffi::c_uint>(b'T' as u32, 207);
const TUNSETOWNER: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 204);
const TUNSETGROUP: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 206);
const TUNGETIFF: u32 = ioctl::_IOR::<core::ffi::c_uint>(b'T' as u32, 210);
const TUNSETQUEUE: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 217);

/// `sizeof(struct ifreq)`: the `ifreq_len` tun copies (64-bit).
const IFREQ_LEN: usize = core::mem::size_of::<bindings::ifreq>();
const IFNAMSIZ: usize = bindings::IFNAMSIZ as usize;
/// `sizeof(struct tun_pi)`.
pub(crate) const TUN_PI_LEN: usize = core::mem::size_of::<bindings::tun_pi>();

// What user space has relied on since 2.6: the `ifreq` is 40 bytes, its
// flags a `short` after the name, `tun_pi` 4 bytes.
const _: () = assert!(IFREQ_LEN == 40 && TUN_PI_LEN == 4);

/// A `struct ifreq` as copied from and to user space.
struct IfReq([u8; IFREQ_LEN]);

impl IfReq {
    /// `ifr_name`, cut at its NUL (the caller forced `ifr_name[IFNAMSIZ-1]`).
    fn name(&self) -> &CStr {
        let end = self.0[..IFNAMSIZ]
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(IFNAMSIZ - 1);
        CStr::from_bytes_with_nul(&self.0[..=end]).unwrap_or(c_str!(""))
    }

    fn set_name(&mut self, name: &[u8; IFNAMSIZ]) {
        self.0[..IFNAMSIZ].copy_from_slice(name);
        self.0[IFNAMSIZ - 1] = 0;
    }

    /// `ifr_flags` (a `short`).
    fn flags(&self) -> u32 {
        u32::from(u16::from_ne_bytes([self.0[IFNAMSIZ], self.0[IFNAMSIZ + 1]]))
    }

    fn set_flags(&mut self, flags: u32) {
        self.0[IFNAMSIZ..IFNAMSIZ + 2].copy_from_slice(&(flags as u16).to_ne_bytes());
    }
}

/// `tun_flags()`: the flags `TUNGETIFF` reports.
fn tun_flags(tun: &Tun) -> u32 {
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
fn tun_set_iff<'g>(tfile: ArcBorrow<'_, TunFile>, ifr: &mut IfReq, rtnl: &mut Rtnl<'g>) -> Result {
    let flags = ifr.flags();
    let dev = match TunDev::get_by_name(&tfile.net, ifr.name(), &TUN_LINK_OPS, rtnl) {
        Some(found) => {
            let dev = found?;
            if flags & IFF_TUN_EXCL != 0 {
                return Err(EBUSY);
            }
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
            tun_attach(dev, tfile, rtnl)?;
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
            let (kind, default_name) = if flags & IFF_TUN != 0 {
                (DevKind::Tun, c_str!("rtun%d"))
            } else if flags & IFF_TAP != 0 {
                (DevKind::Tap, c_str!("rtap%d"))
            } else {
                return Err(EINVAL);
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
            let unguarded = sys::param_unguarded();
            let tun = Tun::new(type_flag | (flags & TUN_FEATURES), unguarded);
            let mut b =
                NetDeviceBuilder::alloc::<TunDriver>(&TUN_LINK_OPS, name, queues, &tfile.net, tun)?;
            tun_net_initialize(&mut b, kind, unguarded);
            let dev = b.register(rtnl)?;
            // (Its debugfs directory came with `NETDEV_REGISTER`.)
            if let Err(e) = tun_attach(dev, tfile, rtnl) {
                dev.unregister(rtnl);
                return Err(e);
            }
            dev
        }
    };

    if flags & IFF_NO_CARRIER != 0 {
        dev.carrier_off();
    } else {
        dev.carrier_on();
    }
    // Make sure persistent devices do not get stuck in xoff state.
    if dev.is_running() {
        dev.tx_wake_all_queues();
    }
    ifr.set_name(&dev.name());
    Ok(())
}

/// `tun_get_iff()`.
fn tun_get_iff(dev: &TunDev, ifr: &mut IfReq) {
    ifr.set_name(&dev.name());
    ifr.set_flags(tun_flags(dev.priv_()));
}

/// `tun_set_queue()`: `TUNSETQUEUE` with `IFF_ATTACH_QUEUE` or
/// `IFF_DETACH_QUEUE`.
fn tun_set_queue(tfile: ArcBorrow<'_, TunFile>, flags: u32) -> Result {
    Rtnl::with(|rtnl| {
        let dev = if flags & IFF_ATTACH_QUEUE != 0 {
            let dev = tfile.detached.get_rtnl(rtnl).ok_or(EINVAL)?;
            tun_attach(dev, tfile, rtnl)?;
            dev
        } else if flags & IFF_DETACH_QUEUE != 0 {
            let dev = tfile.tun.get_rtnl(rtnl).ok_or(EINVAL)?;
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

/// `tun_chr_ioctl()` / `__tun_chr_ioctl()`.
pub(crate) fn tun_chr_ioctl(tfile: ArcBorrow<'_, TunFile>, cmd: u32, arg: usize) -> Result<isize> {
    let mut ifr = IfReq([0; IFREQ_LEN]);
    if cmd == TUNSETIFF || cmd == TUNSETQUEUE {
        UserSlice::new(arg, IFREQ_LEN)
            .reader()
            .read_slice(&mut ifr.0)?;
    }
    if cmd == TUNGETFEATURES {
        // "What IFF flags are valid?" (tun never checked TUNSETIFF's flags).
        let features: u32 = IFF_TUN | IFF_TAP | IFF_NO_CARRIER | TUN_FEATURES;
        let out = UserSlice::new(arg, core::mem::size_of::<u32>());
        out.writer().write_slice(&features.to_ne_bytes())?;
        return Ok(0);
    }
    if cmd == TUNSETQUEUE {
        tun_set_queue(tfile, ifr.flags())?;
        return Ok(0);
    }

    Rtnl::with(|rtnl| {
        let dev = tfile.tun.get_rtnl(rtnl);
        if cmd == TUNSETIFF {
            if dev.is_some() {
                return Err(EEXIST);
            }
            ifr.0[IFNAMSIZ - 1] = 0;
            tun_set_iff(tfile, &mut ifr, rtnl)?;
            UserSlice::new(arg, IFREQ_LEN)
                .writer()
                .write_slice(&ifr.0)?;
            return Ok(0);
        }

        let dev = dev.ok_or_else(errno::EBADFD)?;
        let tun = dev.priv_();
        match cmd {
            TUNGETIFF => {
                tun_get_iff(dev, &mut ifr);
                let mut flags = ifr.flags();
                if tfile.detached.get_rtnl(rtnl).is_some() {
                    flags |= IFF_DETACH_QUEUE;
                }
                // No socket filter can be attached: report IFF_NOFILTER, as
                // tun does for a file without one.
                flags |= bindings::IFF_NOFILTER;
                ifr.set_flags(flags);
                UserSlice::new(arg, IFREQ_LEN)
                    .writer()
                    .write_slice(&ifr.0)?;
            }
            TUNSETPERSIST => {
                let flags = tun.flags();
                if arg != 0 && flags & IFF_PERSIST == 0 {
                    tun.flags.store(flags | IFF_PERSIST, Ordering::Relaxed);
                    sys::module_get();
                } else if arg == 0 && flags & IFF_PERSIST != 0 {
                    tun.flags.store(flags & !IFF_PERSIST, Ordering::Relaxed);
                    sys::module_put();
                }
            }
            TUNSETOWNER => {
                let owner = sys::make_kuid(arg as isize).ok_or(EINVAL)?;
                tun.owner.store(owner, Ordering::Relaxed);
            }
            TUNSETGROUP => {
                let group = sys::make_kgid(arg as isize).ok_or(EINVAL)?;
                tun.group.store(group, Ordering::Relaxed);
            }
            _ => return Err(EINVAL),
        }
        Ok(0)
    })
}

/// `tun_net_initialize()`: the type-specific set-up of a new device.
fn tun_net_initialize(b: &mut NetDeviceBuilder<Tun>, kind: DevKind, unguarded: bool) {
    let mode = usize::from(unguarded);
    match kind {
        DevKind::Tun => {
            b.set_ops(&NETDEV_OPS[mode]);
            b.point_to_point();
        }
        DevKind::Tap => {
            b.set_ops(&NETDEV_OPS[2 + mode]);
            b.ether();
        }
    }
    b.set_mtu_range(MIN_MTU, MAX_MTU);
}
