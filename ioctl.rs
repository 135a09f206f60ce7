// SPDX-License-Identifier: GPL-2.0

//! The ioctls (tun.c's `__tun_chr_ioctl`) and the sizes of the ABI
//! structures they copy (`struct ifreq`, `struct tun_pi`: from the
//! bindings); device creation and attachment are `iff.rs`.

use crate::iff::{tun_get_iff, tun_set_iff, tun_set_queue, IfReq};
use crate::kver;
use crate::sys::compat::user_slice;
use crate::sys::errno::EBADFD;
use crate::sys::tun::SockFprog;
use crate::sys::{self, IoctlAbi, NetDevice, RcuArc, Rtnl, SkFilterProg};
use crate::txfilter::{FilterUpdate, ETH_ALEN};
use crate::{
    bindings, DevKind, Tun, TunDev, TunFile, IFF_DETACH_QUEUE, IFF_NOFILTER, IFF_NO_CARRIER,
    IFF_PERSIST, IFF_TAP, IFF_TUN, TUN_FEATURES, TUN_USER_FEATURES, TUN_VNET_LE, VNET_HDR_SZ_MIN,
};
use core::ffi::{c_int, c_uint};
use core::sync::atomic::Ordering;
use kernel::ioctl;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

/// The tun ioctls, same numbers as `include/uapi/linux/if_tun.h`.
const fn iow<T>(nr: u32) -> u32 {
    ioctl::_IOW::<T>(b'T' as u32, nr)
}
const fn ior<T>(nr: u32) -> u32 {
    ioctl::_IOR::<T>(b'T' as u32, nr)
}
const TUNSETNOCSUM: u32 = iow::<c_int>(200);
const TUNSETDEBUG: u32 = iow::<c_int>(201);
const TUNSETIFF: u32 = iow::<c_int>(202);
const TUNSETPERSIST: u32 = iow::<c_int>(203);
const TUNSETOWNER: u32 = iow::<c_int>(204);
const TUNSETLINK: u32 = iow::<c_int>(205);
const TUNSETGROUP: u32 = iow::<c_int>(206);
const TUNGETFEATURES: u32 = ior::<c_uint>(207);
const TUNSETOFFLOAD: u32 = iow::<c_uint>(208);
const TUNSETTXFILTER: u32 = iow::<c_uint>(209);
const TUNGETIFF: u32 = ior::<c_uint>(210);
const TUNGETSNDBUF: u32 = ior::<c_int>(211);
const TUNSETSNDBUF: u32 = iow::<c_int>(212);
const TUNATTACHFILTER: u32 = iow::<bindings::sock_fprog>(213);
const TUNDETACHFILTER: u32 = iow::<bindings::sock_fprog>(214);
const TUNGETVNETHDRSZ: u32 = ior::<c_int>(215);
const TUNSETVNETHDRSZ: u32 = iow::<c_int>(216);
const TUNSETQUEUE: u32 = iow::<c_int>(217);
const TUNSETIFINDEX: u32 = iow::<c_uint>(218);
const TUNGETFILTER: u32 = ior::<bindings::sock_fprog>(219);
const TUNSETVNETLE: u32 = iow::<c_int>(220);
const TUNGETVNETLE: u32 = ior::<c_int>(221);
const TUNSETVNETBE: u32 = iow::<c_int>(222);
const TUNGETVNETBE: u32 = ior::<c_int>(223);
const TUNSETSTEERINGEBPF: u32 = ior::<c_int>(224);
const TUNSETFILTEREBPF: u32 = ior::<c_int>(225);
const TUNSETCARRIER: u32 = iow::<c_int>(226);
const TUNGETDEVNETNS: u32 = ioctl::_IO(b'T' as u32, 227);
const SIOCGIFHWADDR: u32 = bindings::SIOCGIFHWADDR;
const SIOCSIFHWADDR: u32 = bindings::SIOCSIFHWADDR;
const SIOCGSKNS: u32 = bindings::SIOCGSKNS;

/// `netif_info(tun, drv, dev, ...)`: logged (`netdev_info()`) while
/// `TUNSETDEBUG`/ethtool's msglvl has `NETIF_MSG_DRV` on.
macro_rules! netif_info_drv {
    ($tun:expr, $dev:expr, $($arg:tt)*) => {
        if $tun.msg_enable.load(Ordering::Relaxed) & bindings::RTUN_NETIF_MSG_DRV != 0 {
            $dev.info(format_args!($($arg)*));
        }
    };
}

/// `sizeof(struct ifreq)`: the `ifreq_len` tun copies (64-bit).
pub(crate) const IFREQ_LEN: usize = core::mem::size_of::<bindings::ifreq>();
pub(crate) const IFNAMSIZ: usize = bindings::IFNAMSIZ as usize;
/// `sizeof(struct tun_pi)`.
pub(crate) const TUN_PI_LEN: usize = core::mem::size_of::<bindings::tun_pi>();

// What user space has relied on since 2.6: the `ifreq` is 40 bytes, its
// flags a `short` after the name, `tun_pi` 4 bytes.
const _: () = assert!(IFREQ_LEN == 40 && TUN_PI_LEN == 4);

/// `tun_get_addr_len()`: `dev->addr_len` for a link type (`TUNSETLINK`).
fn tun_get_addr_len(type_: u16) -> u8 {
    use bindings as b;
    match u32::from(type_) {
        b::ARPHRD_IP6GRE | b::ARPHRD_TUNNEL6 => 16,
        b::ARPHRD_IPGRE | b::ARPHRD_TUNNEL | b::ARPHRD_SIT => 4,
        b::ARPHRD_ETHER => ETH_ALEN as u8,
        b::ARPHRD_IEEE802154 | b::ARPHRD_IEEE802154_MONITOR => 8,
        b::ARPHRD_PHONET_PIPE | b::ARPHRD_PPP | b::ARPHRD_NONE => 0,
        b::ARPHRD_6LOWPAN => 8,
        b::ARPHRD_FDDI => 6,
        b::ARPHRD_HIPPI => 6,
        b::ARPHRD_IEEE802 => 6,
        b::ARPHRD_ROSE => 5,
        b::ARPHRD_NETROM => 7,
        b::ARPHRD_LOCALTLK => 1,
        _ => 0,
    }
}

/// An `int` argument passed by pointer.
fn get_int(arg: usize) -> Result<i32> {
    let mut b = [0u8; 4];
    user_slice(arg, 4).reader().read_slice(&mut b)?;
    Ok(i32::from_ne_bytes(b))
}

/// Writes an `int` result through the argument pointer.
fn put_int(arg: usize, v: i32) -> Result {
    user_slice(arg, 4).writer().write_slice(&v.to_ne_bytes())
}

/// `update_filter()`: the `struct tun_filter` header, then `count`
/// addresses. tun.c copies the addresses whole (`memdup_user()`, up to
/// 384 KiB of contiguous memory); we copy them in pieces of
/// `TXFILTER_PIECE` on the stack into a [`FilterUpdate`], so nothing is
/// allocated. As tun.c, an address that cannot be read is `EFAULT` with
/// the filter unchanged.
fn tun_set_txfilter(tun: &Tun, arg: usize) -> Result<isize> {
    /// Addresses per copy from user space.
    const TXFILTER_PIECE: usize = 64;
    let mut hdr = [0u8; 4];
    let mut r = user_slice(arg, usize::MAX).reader();
    r.read_slice(&mut hdr)?;
    let flags = u16::from_ne_bytes([hdr[0], hdr[1]]);
    let mut left = usize::from(u16::from_ne_bytes([hdr[2], hdr[3]]));
    let mut update = FilterUpdate::new();
    let mut piece = [0u8; ETH_ALEN * TXFILTER_PIECE];
    while left > 0 {
        let k = left.min(TXFILTER_PIECE);
        let bytes = &mut piece[..k * ETH_ALEN];
        r.read_slice(bytes)?;
        for c in bytes.chunks_exact(ETH_ALEN) {
            let mut a = [0u8; ETH_ALEN];
            a.copy_from_slice(c);
            update.push(&a);
        }
        left -= k;
    }
    Ok(tun.txflt.apply(flags, &update) as isize)
}

/// `tun_attach_filter()`: the program in `tun->fprog` on every attached
/// file; on a failure, none keeps it.
fn tun_attach_filter(tun: &Tun, rtnl: &Rtnl<'_>) -> Result {
    let fprog = *tun.fprog.get(rtnl);
    let n = tun.numqueues() as usize;
    for i in 0..n {
        let Some(tfile) = tun.tfiles[i].get_rtnl(rtnl) else {
            continue;
        };
        if let Err(e) = tfile.sock.attach_filter(&fprog) {
            tun_detach_filter(tun, i, rtnl);
            return Err(e);
        }
    }
    tun.filter_attached.store(true, Ordering::Relaxed);
    Ok(())
}

/// `tun_detach_filter()`: off the first `n` attached files.
fn tun_detach_filter(tun: &Tun, n: usize, rtnl: &Rtnl<'_>) {
    for slot in &tun.tfiles[..n] {
        if let Some(tfile) = slot.get_rtnl(rtnl) {
            tfile.sock.detach_filter();
        }
    }
    tun.filter_attached.store(false, Ordering::Relaxed);
}

/// `tun_set_ebpf()`: the socket-filter program whose descriptor `arg`
/// points to replaces `slot`'s (-1 detaches); the old one is released
/// once no reader can see it.
///
/// Deliberate differences: tun.c frees the old program with `call_rcu()`;
/// here the ioctl waits for the grace period (`synchronize_net()`,
/// expedited under rtnl), as a queue's detach does in both. And where
/// tun.c's allocation of its `tun_prog` fails it keeps the program's
/// reference (a leak); here the reference is put back.
fn tun_set_ebpf(slot: &RcuArc<SkFilterProg>, arg: usize, rtnl: &mut Rtnl<'_>) -> Result<isize> {
    let fd = get_int(arg)?;
    let prog = match fd {
        -1 => None,
        fd => Some(Arc::new(SkFilterProg::from_fd(fd)?, GFP_KERNEL)?),
    };
    drop(slot.replace(prog, rtnl));
    Ok(0)
}

/// `tun_set_sndbuf()`: every attached file gets the device's send buffer.
fn tun_set_sndbuf(tun: &Tun, rtnl: &Rtnl<'_>) {
    let sndbuf = tun.sndbuf.load(Ordering::Relaxed);
    for slot in &tun.tfiles[..tun.numqueues() as usize] {
        if let Some(tfile) = slot.get_rtnl(rtnl) {
            tfile.sock.set_sndbuf(sndbuf);
        }
    }
}

/// `tun_net_change_carrier()` (`ndo_change_carrier`, `TUNSETCARRIER`):
/// carrier on needs an attached queue.
pub(crate) fn tun_net_change_carrier(dev: &TunDev, on: bool) -> Result {
    if on {
        if dev.priv_().numqueues() == 0 {
            return Err(EPERM);
        }
        dev.carrier_on();
    } else {
        dev.carrier_off();
    }
    Ok(())
}

/// Whether a TAP-only ioctl may run.
fn tap_only(tun: &Tun) -> Result {
    if tun.kind() == DevKind::Tap {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

/// `tun_chr_ioctl()` / `tun_chr_compat_ioctl()` / `__tun_chr_ioctl()`:
/// the `ifreq` copied in and out is `ifreq_len` bytes, the compat one's for
/// a 32-bit caller (the fields tun uses sit at the same offsets).
pub(crate) fn tun_chr_ioctl(
    tfile: ArcBorrow<'_, TunFile>,
    cmd: u32,
    arg: usize,
    abi: IoctlAbi,
) -> Result<isize> {
    let ifreq_len = match abi {
        IoctlAbi::Native => IFREQ_LEN,
        #[cfg(CONFIG_COMPAT)]
        IoctlAbi::Compat => sys::COMPAT_IFREQ_LEN,
        #[cfg(not(CONFIG_COMPAT))]
        IoctlAbi::Compat => return Err(EINVAL),
    };
    let mut ifr = IfReq([0; IFREQ_LEN]);
    let sock_ioc = (cmd >> 8) & 0xff == bindings::RTUN_SOCK_IOC_TYPE;
    if cmd == TUNSETIFF || cmd == TUNSETQUEUE || (sock_ioc && cmd != SIOCGSKNS) {
        user_slice(arg, ifreq_len)
            .reader()
            .read_slice(&mut ifr.0[..ifreq_len])?;
    }
    match cmd {
        TUNGETFEATURES => {
            // "What IFF flags are valid?" (tun never checked TUNSETIFF's flags).
            let features = IFF_TUN | IFF_TAP | IFF_NO_CARRIER | TUN_FEATURES;
            put_int(arg, features as i32)?;
            return Ok(0);
        }
        TUNSETQUEUE => {
            tun_set_queue(tfile, ifr.flags())?;
            return Ok(0);
        }
        SIOCGSKNS => return tfile.sock.open_netns(),
        _ => {}
    }

    Rtnl::with(|rtnl| {
        // A counted reference, as tun.c's `tun_get()`: the calls below
        // lend the token mutably (notifiers, the file's own detach).
        let dev = tfile.tun.get_rtnl(rtnl).map(NetDevice::hold);
        if cmd == TUNSETIFF {
            if dev.is_some() {
                return Err(EEXIST);
            }
            ifr.0[IFNAMSIZ - 1] = 0;
            tun_set_iff(tfile, &mut ifr, rtnl)?;
            user_slice(arg, ifreq_len)
                .writer()
                .write_slice(&ifr.0[..ifreq_len])?;
            return Ok(0);
        }
        if cmd == TUNSETIFINDEX {
            if dev.is_some() {
                return Err(EPERM);
            }
            let ifindex = get_int(arg)?;
            if ifindex < 0 {
                return Err(EINVAL);
            }
            tfile.ifindex.store(ifindex, Ordering::Relaxed);
            return Ok(0);
        }

        let dev = dev.ok_or(EBADFD)?;
        let dev: &TunDev = &dev;
        let tun = dev.priv_();
        netif_info_drv!(tun, dev, "tun_chr_ioctl cmd {}\n", cmd);
        let mut do_notify = false;
        let ret = match cmd {
            TUNGETIFF => {
                tun_get_iff(dev, &mut ifr);
                let mut flags = ifr.flags();
                if tfile.detached.get_rtnl(rtnl).is_some() {
                    flags |= IFF_DETACH_QUEUE;
                }
                if !tfile.sock.has_filter() {
                    flags |= IFF_NOFILTER;
                }
                ifr.set_flags(flags);
                user_slice(arg, ifreq_len)
                    .writer()
                    .write_slice(&ifr.0[..ifreq_len])
                    .map(|()| 0)
            }
            // Checksums are never left to the reader without a vnet
            // header; tun.c ignores this too.
            TUNSETNOCSUM => {
                netif_info_drv!(
                    tun,
                    dev,
                    "ignored: set checksum {}\n",
                    if arg != 0 { "disabled" } else { "enabled" }
                );
                Ok(0)
            }
            TUNSETPERSIST => {
                let flags = tun.flags();
                if arg != 0 && flags & IFF_PERSIST == 0 {
                    tun.flags.store(flags | IFF_PERSIST, Ordering::Relaxed);
                    sys::module_get();
                    do_notify = true;
                } else if arg == 0 && flags & IFF_PERSIST != 0 {
                    tun.flags.store(flags & !IFF_PERSIST, Ordering::Relaxed);
                    sys::module_put();
                    do_notify = true;
                }
                netif_info_drv!(
                    tun,
                    dev,
                    "persist {}\n",
                    if arg != 0 { "enabled" } else { "disabled" }
                );
                Ok(0)
            }
            // The ids logged are the kernel's (`from_kuid(&init_user_ns)`).
            TUNSETOWNER => sys::make_kuid(arg as isize).ok_or(EINVAL).map(|owner| {
                tun.owner.store(owner, Ordering::Relaxed);
                do_notify = true;
                netif_info_drv!(tun, dev, "owner set to {}\n", owner);
                0
            }),
            TUNSETGROUP => sys::make_kgid(arg as isize).ok_or(EINVAL).map(|group| {
                tun.group.store(group, Ordering::Relaxed);
                do_notify = true;
                netif_info_drv!(tun, dev, "group set to {}\n", group);
                0
            }),
            TUNSETLINK => {
                // Only while down: the stack keys much on the type.
                if dev.flags() & sys::IFF_UP != 0 {
                    netif_info_drv!(tun, dev, "Linktype set failed because interface is up\n");
                    Err(EBUSY)
                } else {
                    let type_ = arg as u16;
                    match dev.change_type(type_, tun_get_addr_len(type_), rtnl) {
                        Ok(()) => {
                            netif_info_drv!(tun, dev, "linktype set to {}\n", type_);
                            Ok(0)
                        }
                        Err(e) => {
                            netif_info_drv!(tun, dev, "Refused to change device type\n");
                            Err(e)
                        }
                    }
                }
            }
            TUNSETDEBUG => {
                tun.msg_enable.store(arg as u32, Ordering::Relaxed);
                Ok(0)
            }
            TUNSETOFFLOAD => set_offload(dev, arg, rtnl).map(|()| 0),
            TUNSETTXFILTER => {
                let ret = tap_only(tun).and_then(|()| tun_set_txfilter(tun, arg));
                tun.update_tx_filters(rtnl);
                ret
            }
            SIOCGIFHWADDR => {
                // In the caller's `ifreq` as it came, as tun.c: only what
                // `dev_get_mac_address()` writes changes.
                let mut sa = [0u8; sys::tun::SOCKADDR_LEN];
                sa.copy_from_slice(&ifr.0[IFNAMSIZ..IFNAMSIZ + sys::tun::SOCKADDR_LEN]);
                dev.get_mac_address(&mut sa, rtnl).and_then(|()| {
                    ifr.0[IFNAMSIZ..IFNAMSIZ + sys::tun::SOCKADDR_LEN].copy_from_slice(&sa);
                    user_slice(arg, ifreq_len)
                        .writer()
                        .write_slice(&ifr.0[..ifreq_len])
                        .map(|()| 0)
                })
            }
            SIOCSIFHWADDR => {
                // The whole union, as tun.c passes `&ifr.ifr_hwaddr` inside
                // its `ifreq` (a compat caller's shorter one zero-padded).
                let mut ifru = [0u8; sys::tun::IFRU_LEN];
                ifru.copy_from_slice(&ifr.0[IFNAMSIZ..]);
                dev.set_mac_address_user(&ifru, rtnl).map(|()| 0)
            }
            TUNGETSNDBUF => put_int(arg, tfile.sock.sndbuf()).map(|()| 0),
            TUNSETSNDBUF => get_int(arg).and_then(|sndbuf| {
                if sndbuf <= 0 {
                    return Err(EINVAL);
                }
                tun.sndbuf.store(sndbuf, Ordering::Relaxed);
                tun_set_sndbuf(tun, rtnl);
                Ok(0)
            }),
            TUNGETVNETHDRSZ => put_int(arg, tun.vnet_hdr_sz.load(Ordering::Relaxed)).map(|()| 0),
            TUNSETVNETHDRSZ => get_int(arg).and_then(|sz| {
                if sz < VNET_HDR_SZ_MIN {
                    return Err(EINVAL);
                }
                tun.vnet_hdr_sz.store(sz, Ordering::Relaxed);
                Ok(0)
            }),
            TUNGETVNETLE => put_int(arg, i32::from(tun.flags() & TUN_VNET_LE != 0)).map(|()| 0),
            TUNSETVNETLE => get_int(arg).map(|le| {
                if le != 0 {
                    tun.flags.fetch_or(TUN_VNET_LE, Ordering::Relaxed);
                } else {
                    tun.flags.fetch_and(!TUN_VNET_LE, Ordering::Relaxed);
                }
                0
            }),
            // Without CONFIG_TUN_VNET_CROSS_LE, as tun.c built so.
            #[cfg(not(CONFIG_TUN_VNET_CROSS_LE))]
            TUNGETVNETBE | TUNSETVNETBE => Err(EINVAL),
            TUNATTACHFILTER => tap_only(tun).and_then(|()| {
                let mut b = [0u8; sys::tun::SOCK_FPROG_LEN];
                user_slice(arg, b.len()).reader().read_slice(&mut b)?;
                *tun.fprog.get_mut(rtnl) = SockFprog::from_bytes(&b);
                tun_attach_filter(tun, rtnl).map(|()| 0)
            }),
            TUNDETACHFILTER => tap_only(tun).map(|()| {
                tun_detach_filter(tun, tun.numqueues() as usize, rtnl);
                0
            }),
            TUNGETFILTER => tap_only(tun).and_then(|()| {
                let b = tun.fprog.get(rtnl).to_bytes();
                user_slice(arg, b.len())
                    .writer()
                    .write_slice(&b)
                    .map(|()| 0)
            }),
            TUNSETCARRIER => {
                // A failed copy leaves without a notification, as tun.c.
                let carrier = get_int(arg)?;
                tun_net_change_carrier(dev, carrier != 0).map(|()| 0)
            }
            TUNGETDEVNETNS => return dev.open_netns(rtnl),
            TUNSETSTEERINGEBPF => tun_set_ebpf(&tun.steering_prog, arg, rtnl),
            TUNSETFILTEREBPF => {
                let ret = tun_set_ebpf(&tun.filter_prog, arg, rtnl);
                tun.update_tx_filters(rtnl);
                ret
            }
            _ => Err(EINVAL),
        };
        if do_notify {
            dev.state_change(rtnl);
        }
        ret
    })
}

/// `PLAIN_GSO` (7.3): the offloads UDP-tunnel GSO needs one of.
const PLAIN_GSO: u64 =
    bindings::RTUN_NETIF_F_GSO_UDP_L4 | bindings::RTUN_NETIF_F_TSO | bindings::RTUN_NETIF_F_TSO6;

/// `set_offload()`: `TUNSETOFFLOAD`'s `TUN_F_*` flags as device features.
/// Checksum offload first; TSO (with ECN) and USO only with it, USO only
/// as v4 and v6 together; UFO is accepted and ignored; on 7.3 UDP-tunnel
/// GSO (and its outer checksum) only with one of those. Any other bit is
/// `EINVAL` ("a way to test for new features").
fn set_offload(dev: &TunDev, arg: usize, rtnl: &mut Rtnl<'_>) -> Result {
    use bindings as b;
    let f = |v: u32| v as usize;
    let mut arg = arg;
    let mut features = 0u64;
    if arg & f(b::TUN_F_CSUM) != 0 {
        features |= b::RTUN_NETIF_F_HW_CSUM;
        arg &= !f(b::TUN_F_CSUM);
        if arg & f(b::TUN_F_TSO4 | b::TUN_F_TSO6) != 0 {
            if arg & f(b::TUN_F_TSO_ECN) != 0 {
                features |= b::RTUN_NETIF_F_TSO_ECN;
                arg &= !f(b::TUN_F_TSO_ECN);
            }
            if arg & f(b::TUN_F_TSO4) != 0 {
                features |= b::RTUN_NETIF_F_TSO;
            }
            if arg & f(b::TUN_F_TSO6) != 0 {
                features |= b::RTUN_NETIF_F_TSO6;
            }
            arg &= !f(b::TUN_F_TSO4 | b::TUN_F_TSO6);
        }
        arg &= !f(b::TUN_F_UFO);
        if arg & f(b::TUN_F_USO4) != 0 && arg & f(b::TUN_F_USO6) != 0 {
            features |= b::RTUN_NETIF_F_GSO_UDP_L4;
            arg &= !f(b::TUN_F_USO4 | b::TUN_F_USO6);
        }
        // 7.3: tunnel offload only with some plain offload (`PLAIN_GSO`),
        // its checksum flag only with it. On 6.12 both flags are 0 (the
        // bits are unknown there, hence `EINVAL` below).
        if kver::HAS_UDP_TUNNEL_GSO
            && features & PLAIN_GSO != 0
            && arg & f(b::RTUN_TUN_F_UDP_TUNNEL_GSO) != 0
        {
            features |= b::RTUN_NETIF_F_GSO_UDP_TUNNEL;
            if arg & f(b::RTUN_TUN_F_UDP_TUNNEL_GSO_CSUM) != 0 {
                features |= b::RTUN_NETIF_F_GSO_UDP_TUNNEL_CSUM;
            }
            arg &= !f(b::RTUN_TUN_F_UDP_TUNNEL_GSO | b::RTUN_TUN_F_UDP_TUNNEL_GSO_CSUM);
        }
    }
    if arg != 0 {
        return Err(EINVAL);
    }
    dev.priv_().set_features.store(features, Ordering::Relaxed);
    dev.update_wanted_features(TUN_USER_FEATURES.bits(), features, rtnl);
    Ok(())
}
