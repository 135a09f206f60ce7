//! The control ABI beyond creation and attachment, as real clients and
//! iproute2 use it (issue "Drop-in tun"), each test run against tun and
//! rust_tun with the same expectations: the link's identity (sysfs
//! `tun_flags`/`owner`/`group`, the `IFLA_TUN_*` attributes, fdinfo,
//! ethtool), send-buffer accounting, carrier, link type, ifindex, network
//! namespace fds, the TAP address filter, classic BPF filters, the
//! notifications, `header_ops`, flag masking, hardware addresses. Where
//! the drivers differ on purpose the test says so (and the rst lists it).
//!
//! The filters are in abi/filter.rs, send-buffer accounting in
//! abi/sndbuf.rs.

use super::*;
use crate::nl::{ifindex, Nl};

pub mod args;
pub mod drops;
pub mod ebpf;
pub mod filter;
pub mod sndbuf;
pub mod xdp;

fn ioctl_int(fd: RawFd, cmd: u64, v: i32) -> Result<i32, i32> {
    let mut v = v;
    ioctl_ptr(fd, cmd, &mut v)
}

fn get_int(fd: RawFd, cmd: u64) -> Result<i32, i32> {
    let mut v = 0i32;
    ioctl_ptr(fd, cmd, &mut v)?;
    Ok(v)
}

/// An `AF_PACKET` `SOCK_RAW` socket for sending on `ifname`.
struct Packet {
    fd: OwnedFd,
    ifindex: i32,
}

impl Packet {
    fn open(ifname: &str) -> Result<Packet, String> {
        // SAFETY: Plain socket call.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(format!("AF_PACKET socket: errno {}", errno()));
        }
        // SAFETY: A fresh fd of ours.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Packet { fd, ifindex: ifindex(ifname) })
    }

    /// Sends `frame` as is (with `protocol` 0: the device's `header_ops`,
    /// if any, say what it is).
    fn send(&self, frame: &[u8]) -> Result<(), String> {
        // SAFETY: Plain data.
        let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sa.sll_family = libc::AF_PACKET as u16;
        sa.sll_ifindex = self.ifindex;
        sa.sll_halen = 6;
        // SAFETY: Valid buffer and address.
        let r = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                0,
                (&sa as *const libc::sockaddr_ll).cast(),
                std::mem::size_of_val(&sa) as u32,
            )
        };
        if r < 0 {
            return Err(format!("AF_PACKET send: errno {}", errno()));
        }
        Ok(())
    }
}

/// Reads everything queued on `t` (non-blocking with a short wait).
fn drain(t: &Tun) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 2048];
    while let Ok(n) = t.read_timeout(&mut buf, Duration::from_millis(100)) {
        out.push(buf[..n].to_vec());
    }
    out
}

/// `readlink()` of a path, for namespace identities.
fn readlink(p: &str) -> String {
    std::fs::read_link(p).map(|l| l.display().to_string()).unwrap_or_default()
}

/// sysfs `tun_flags`, `owner` and `group`, as `ip tuntap show` reads them:
/// the flags `TUNGETIFF` reports, owner and group or -1.
pub fn t_sysfs_identity(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-id0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let want = format!("{:#x}", IFF_TAP | IFF_NO_PI | napi_bit());
    check!(sysfs("rt-id0", "tun_flags") == want, "tun_flags {:?}", sysfs("rt-id0", "tun_flags"));
    check!(sysfs("rt-id0", "owner") == "-1", "owner {:?}", sysfs("rt-id0", "owner"));
    check!(sysfs("rt-id0", "group") == "-1", "group {:?}", sysfs("rt-id0", "group"));
    ioctl_val(t.fd(), TUNSETOWNER, 1234).map_err(|e| format!("TUNSETOWNER: {e}"))?;
    ioctl_val(t.fd(), TUNSETGROUP, 4321).map_err(|e| format!("TUNSETGROUP: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    check!(sysfs("rt-id0", "owner") == "1234", "owner {:?}", sysfs("rt-id0", "owner"));
    check!(sysfs("rt-id0", "group") == "4321", "group {:?}", sysfs("rt-id0", "group"));
    let want = format!("{:#x}", IFF_TAP | IFF_NO_PI | IFF_PERSIST | napi_bit());
    check!(sysfs("rt-id0", "tun_flags") == want, "persistent tun_flags {:?}", sysfs("rt-id0", "tun_flags"));
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    let m = Tun::create(n.path, "rt-id1", IFF_TUN | IFF_MULTI_QUEUE | IFF_ONE_QUEUE).map_err(|e| format!("TUNSETIFF mq: {e}"))?;
    let want = format!("{:#x}", IFF_TUN | IFF_MULTI_QUEUE | IFF_ONE_QUEUE | napi_bit());
    check!(sysfs("rt-id1", "tun_flags") == want, "mq tun_flags {:?}", sysfs("rt-id1", "tun_flags"));
    drop(m);
    Ok(())
}

/// `ip -d link show`'s data: the link kind and tun.c's `IFLA_TUN_*`
/// attributes, read with RTM_GETLINK.
pub fn t_link_info(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let q = mq_open(n.path, "rt-li0", IFF_TAP | IFF_NO_PI, 2)?;
    ioctl_val(q[0].fd(), TUNSETOWNER, 1234).map_err(|e| format!("TUNSETOWNER: {e}"))?;
    ioctl_val(q[0].fd(), TUNSETGROUP, 4321).map_err(|e| format!("TUNSETGROUP: {e}"))?;
    ioctl_val(q[0].fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    let info = nl.tun_info(ifindex("rt-li0")).map_err(|e| format!("RTM_GETLINK: {e}"))?;
    let want = crate::nl::TunInfo {
        kind: n.driver.to_string(),
        owner: Some(1234),
        group: Some(4321),
        type_: Some(IFF_TAP as u8),
        pi: Some(0),
        vnet_hdr: Some(0),
        persist: Some(1),
        multi_queue: Some(1),
        num_queues: Some(1),
        num_disabled_queues: Some(1),
    };
    check!(info == want, "multi-queue TAP: {info:?}, expected {want:?}");
    ioctl_val(q[0].fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    drop(q);

    let _t = Tun::create(n.path, "rt-li1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let info = nl.tun_info(ifindex("rt-li1")).map_err(|e| format!("RTM_GETLINK: {e}"))?;
    let want = crate::nl::TunInfo {
        kind: n.driver.to_string(),
        type_: Some(IFF_TUN as u8),
        pi: Some(1),
        vnet_hdr: Some(0),
        persist: Some(0),
        multi_queue: Some(0),
        ..Default::default()
    };
    check!(info == want, "single-queue TUN: {info:?}, expected {want:?}");
    Ok(())
}

/// `/proc/PID/fdinfo/FD` has tun.c's `iff:` line, which `ip -d tuntap
/// show` reads to list the processes of a device.
pub fn t_fdinfo_iff(n: Node) -> TestResult {
    let fdinfo = |fd: RawFd| std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    check!(fdinfo(f.as_raw_fd()).lines().any(|l| l == "iff:\t"), "unattached: {:?}", fdinfo(f.as_raw_fd()));
    let t = Tun::create(n.path, "rt-fi0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(fdinfo(t.fd()).lines().any(|l| l == "iff:\trt-fi0"), "attached: {:?}", fdinfo(t.fd()));
    Ok(())
}

/// ethtool: `bus_info` tells TUN from TAP; the message level follows
/// `TUNSETDEBUG`.
pub fn t_ethtool_identity(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-ei0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let p = Tun::create(n.path, "rt-ei1", IFF_TAP).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let (drv, _, bus) = ethtool_drvinfo("rt-ei0").map_err(|e| format!("GDRVINFO: {e}"))?;
    check!(drv == n.driver && bus == "tun", "TUN: driver {drv} bus_info {bus}");
    let (_, _, bus) = ethtool_drvinfo("rt-ei1").map_err(|e| format!("GDRVINFO: {e}"))?;
    check!(bus == "tap", "TAP: bus_info {bus}");
    ioctl_val(p.fd(), TUNSETDEBUG, 7).map_err(|e| format!("TUNSETDEBUG: {e}"))?;
    check!(ethtool_msglvl("rt-ei1") == Ok(7), "msglvl {:?}", ethtool_msglvl("rt-ei1"));
    drop(t);
    Ok(())
}

/// Carrier: `TUNSETCARRIER` and `ndo_change_carrier` (`ip link set DEV
/// carrier on|off`); carrier on needs an attached queue (`EPERM`).
pub fn t_carrier_abi(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let t = Tun::create(n.path, "rt-ca0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-ca0 up")?;
    let idx = ifindex("rt-ca0");
    ioctl_int(t.fd(), TUNSETCARRIER, 0).map_err(|e| format!("TUNSETCARRIER 0: {e}"))?;
    check!(wait_sysfs("rt-ca0", "carrier", "0"), "TUNSETCARRIER 0: carrier {}", sysfs("rt-ca0", "carrier"));
    ioctl_int(t.fd(), TUNSETCARRIER, 1).map_err(|e| format!("TUNSETCARRIER 1: {e}"))?;
    check!(wait_sysfs("rt-ca0", "carrier", "1"), "TUNSETCARRIER 1: carrier {}", sysfs("rt-ca0", "carrier"));
    nl.set_carrier(idx, false).map_err(|e| format!("carrier off: {e}"))?;
    check!(wait_sysfs("rt-ca0", "carrier", "0"), "carrier off: {}", sysfs("rt-ca0", "carrier"));
    nl.set_carrier(idx, true).map_err(|e| format!("carrier on: {e}"))?;
    check!(wait_sysfs("rt-ca0", "carrier", "1"), "carrier on: {}", sysfs("rt-ca0", "carrier"));
    expect_errno!(ioctl_ptr(t.fd(), TUNSETCARRIER, 8usize as *mut i32), libc::EFAULT, "TUNSETCARRIER from a bad pointer");
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    let p = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    drop(t);
    expect_errno!(nl.set_carrier(idx, true), libc::EPERM, "carrier on without a queue");
    nl.set_carrier(idx, false).map_err(|e| format!("carrier off without a queue: {e}"))?;
    let mut ifr = IfReq::new("rt-ca0", IFF_TAP | IFF_NO_PI);
    ioctl_ptr(p.as_raw_fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("re-attach: {e}"))?;
    ioctl_val(p.as_raw_fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    Ok(())
}

/// `TUNSETLINK`: the link type (and address length) of a down device;
/// `EBUSY` while up.
pub fn t_setlink(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-sl0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETLINK, 1).map_err(|e| format!("TUNSETLINK ether: {e}"))?;
    check!(sysfs("rt-sl0", "type") == "1" && sysfs("rt-sl0", "addr_len") == "6", "type {} addr_len {}", sysfs("rt-sl0", "type"), sysfs("rt-sl0", "addr_len"));
    ioctl_val(t.fd(), TUNSETLINK, 768).map_err(|e| format!("TUNSETLINK ipip: {e}"))?;
    check!(sysfs("rt-sl0", "type") == "768" && sysfs("rt-sl0", "addr_len") == "4", "type {} addr_len {}", sysfs("rt-sl0", "type"), sysfs("rt-sl0", "addr_len"));
    // The type is an unsigned short: tun.c truncates.
    ioctl_val(t.fd(), TUNSETLINK, 0x1fffe).map_err(|e| format!("TUNSETLINK 0x1fffe: {e}"))?;
    check!(sysfs("rt-sl0", "type") == "65534" && sysfs("rt-sl0", "addr_len") == "0", "type {}", sysfs("rt-sl0", "type"));
    sh("ip link set rt-sl0 up")?;
    expect_errno!(ioctl_val(t.fd(), TUNSETLINK, 1), libc::EBUSY, "TUNSETLINK while up");
    Ok(())
}

/// `TUNSETIFINDEX`: the index the next device created gets; only before
/// `TUNSETIFF`.
pub fn t_setifindex(n: Node) -> TestResult {
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    expect_errno!(ioctl_int(f.as_raw_fd(), TUNSETIFINDEX, -1), libc::EINVAL, "TUNSETIFINDEX -1");
    expect_errno!(ioctl_ptr(f.as_raw_fd(), TUNSETIFINDEX, 8usize as *mut i32), libc::EFAULT, "TUNSETIFINDEX from a bad pointer");
    ioctl_int(f.as_raw_fd(), TUNSETIFINDEX, 4242).map_err(|e| format!("TUNSETIFINDEX: {e}"))?;
    let mut ifr = IfReq::new("rt-ix0", IFF_TUN);
    ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(sysfs("rt-ix0", "ifindex") == "4242", "ifindex {}", sysfs("rt-ix0", "ifindex"));
    expect_errno!(ioctl_int(f.as_raw_fd(), TUNSETIFINDEX, 5), libc::EPERM, "TUNSETIFINDEX after TUNSETIFF");
    // The index is taken: a second device asking for it fails.
    let g = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    ioctl_int(g.as_raw_fd(), TUNSETIFINDEX, 4242).map_err(|e| format!("TUNSETIFINDEX: {e}"))?;
    let mut ifr = IfReq::new("rt-ix1", IFF_TUN);
    expect_errno!(ioctl_ptr(g.as_raw_fd(), TUNSETIFF, &mut ifr), libc::EBUSY, "TUNSETIFF with a taken index");
    check!(!link_exists("rt-ix1"), "rt-ix1 exists after the failed creation");
    Ok(())
}

/// `TUNGETDEVNETNS` (the device's namespace) and `SIOCGSKNS` (the file's):
/// new fds for the namespace.
pub fn t_netns_fds(n: Node) -> TestResult {
    let me = readlink("/proc/self/ns/net");
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    expect_errno!(ioctl_val(f.as_raw_fd(), TUNGETDEVNETNS, 0), libc::EBADFD, "TUNGETDEVNETNS without a device");
    let fd = ioctl_val(f.as_raw_fd(), SIOCGSKNS, 0).map_err(|e| format!("SIOCGSKNS: {e}"))?;
    check!(readlink(&format!("/proc/self/fd/{fd}")) == me, "SIOCGSKNS gave {}", readlink(&format!("/proc/self/fd/{fd}")));
    // SAFETY: The fd just returned.
    unsafe { libc::close(fd) };
    let t = Tun::create(n.path, "rt-ns0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let fd = ioctl_val(t.fd(), TUNGETDEVNETNS, 0).map_err(|e| format!("TUNGETDEVNETNS: {e}"))?;
    check!(readlink(&format!("/proc/self/fd/{fd}")) == me, "TUNGETDEVNETNS gave {}", readlink(&format!("/proc/self/fd/{fd}")));
    // SAFETY: The fd just returned.
    unsafe { libc::close(fd) };
    Ok(())
}

/// The ioctls tun.c accepts and stores: `TUNSETNOCSUM`, `TUNSETDEBUG`, the
/// vnet header size and endianness (without `CONFIG_TUN_VNET_CROSS_LE`,
/// big-endian is `EINVAL`), `TUNSETOFFLOAD`'s flag check.
pub fn t_misc_ioctls(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-mi0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(ioctl_val(t.fd(), TUNSETNOCSUM, 1) == Ok(0), "TUNSETNOCSUM");
    check!(ioctl_val(t.fd(), TUNSETDEBUG, 3) == Ok(0), "TUNSETDEBUG");
    expect_errno!(ioctl_int(t.fd(), TUNSETVNETHDRSZ, 9), libc::EINVAL, "TUNSETVNETHDRSZ 9");
    ioctl_int(t.fd(), TUNSETVNETHDRSZ, 12).map_err(|e| format!("TUNSETVNETHDRSZ 12: {e}"))?;
    check!(get_int(t.fd(), TUNGETVNETHDRSZ) == Ok(12), "vnet header size {:?}", get_int(t.fd(), TUNGETVNETHDRSZ));
    check!(get_int(t.fd(), TUNGETVNETLE) == Ok(0), "vnet LE default");
    ioctl_int(t.fd(), TUNSETVNETLE, 1).map_err(|e| format!("TUNSETVNETLE: {e}"))?;
    check!(get_int(t.fd(), TUNGETVNETLE) == Ok(1), "vnet LE {:?}", get_int(t.fd(), TUNGETVNETLE));
    expect_errno!(get_int(t.fd(), TUNGETVNETBE), libc::EINVAL, "TUNGETVNETBE");
    expect_errno!(ioctl_int(t.fd(), TUNSETVNETBE, 1), libc::EINVAL, "TUNSETVNETBE");
    expect_errno!(ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, 8usize as *mut i32), libc::EFAULT, "TUNSETVNETHDRSZ from a bad pointer");
    check!(ioctl_val(t.fd(), TUNSETOFFLOAD, 0) == Ok(0), "TUNSETOFFLOAD 0");
    expect_errno!(ioctl_val(t.fd(), TUNSETOFFLOAD, 0x80), libc::EINVAL, "TUNSETOFFLOAD with an unknown flag");
    // The flags sysfs reports did not change.
    let want = format!("{:#x}", IFF_TAP | IFF_NO_PI | napi_bit());
    check!(sysfs("rt-mi0", "tun_flags") == want, "tun_flags {}", sysfs("rt-mi0", "tun_flags"));
    Ok(())
}

/// tun.c's `do_notify`: `TUNSETOWNER`, `TUNSETGROUP` and a change of
/// `TUNSETPERSIST` each send an RTM_NEWLINK (`netdev_state_change()`, for
/// an up device).
pub fn t_state_notify(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-no0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    // `netdev_state_change()` tells rtnetlink only about an up device.
    sh("ip link set rt-no0 up")?;
    let mon = Nl::open(crate::nl::RTMGRP_LINK).map_err(|e| e.to_string())?;
    mon.set_timeout_ms(300);
    let _ = mon.count_newlink("rt-no0");
    for (what, cmd, arg, want) in [
        ("TUNSETOWNER", TUNSETOWNER, 1, true),
        ("TUNSETGROUP", TUNSETGROUP, 1, true),
        ("TUNSETPERSIST 1", TUNSETPERSIST, 1, true),
        ("TUNSETPERSIST 1 again", TUNSETPERSIST, 1, false),
        ("TUNSETPERSIST 0", TUNSETPERSIST, 0, true),
    ] {
        ioctl_val(t.fd(), cmd, arg).map_err(|e| format!("{what}: {e}"))?;
        let got = mon.count_newlink("rt-no0");
        check!((got > 0) == want, "{what}: {got} RTM_NEWLINK");
    }
    Ok(())
}

/// `IFF_TUN_EXCL` naming any existing device, even another driver's, is
/// `EBUSY` (checked before the device's kind).
pub fn t_excl_foreign(n: Node) -> TestResult {
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut ifr = IfReq::new("lo", IFF_TUN | IFF_TUN_EXCL);
    expect_errno!(ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr), libc::EBUSY, "IFF_TUN_EXCL on lo");
    Ok(())
}

/// TUN devices have `ip_tunnel_header_ops`: an IPv4 packet sent with an
/// `AF_PACKET` raw socket and no protocol reaches the reader as IPv4.
pub fn t_header_ops(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-ho0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-ho0 up")?;
    drain(&t);
    let pk = Packet::open("rt-ho0")?;
    let ip = pkt::ipv4([10, 82, 0, 1], [10, 82, 0, 2], pkt::IPPROTO_UDP, &pkt::udp(1, 2, b"hdr"));
    pk.send(&ip)?;
    let got = drain(&t);
    check!(got.len() == 1, "{} packets", got.len());
    let proto = u16::from_be_bytes([got[0][2], got[0][3]]);
    check!(proto == pkt::ETH_P_IP, "tun_pi protocol {proto:#06x}");
    check!(got[0][4..] == ip[..], "payload differs");
    Ok(())
}

/// Flags clients pass: `IFF_NAPI`/`IFF_NAPI_FRAGS` are checked as tun.c
/// checks them, and `TUNGETIFF` never claims what `TUNGETFEATURES` does not.
pub fn t_napi_flags(n: Node) -> TestResult {
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut feat = 0u32;
    ioctl_ptr(f.as_raw_fd(), TUNGETFEATURES, &mut feat).map_err(|e| format!("TUNGETFEATURES: {e}"))?;
    let mut ifr = IfReq::new("rt-na0", IFF_TUN | IFF_NAPI | IFF_NAPI_FRAGS);
    expect_errno!(ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr), libc::EINVAL, "IFF_NAPI_FRAGS on TUN");
    let mut ifr = IfReq::new("rt-na0", IFF_TAP | IFF_NAPI_FRAGS);
    expect_errno!(ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr), libc::EINVAL, "IFF_NAPI_FRAGS without IFF_NAPI");
    for flags in [IFF_TAP | IFF_NAPI | IFF_NAPI_FRAGS | IFF_VNET_HDR, IFF_TUN | IFF_NAPI | IFF_ONE_QUEUE | IFF_NO_PI] {
        let t = Tun::create(n.path, "rt-na0", flags).map_err(|e| format!("TUNSETIFF {flags:#x}: {e}"))?;
        let (_, got) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
        // IFF_NOFILTER is a read-only flag on IFF_NO_PI's bit.
        let claimed = u32::from(got & !IFF_NOFILTER & !IFF_PERSIST);
        check!(claimed & !feat == 0, "TUNGETIFF {got:#x} claims more than TUNGETFEATURES {feat:#x}");
    }
    Ok(())
}

/// `SIOCSIFHWADDR`/`SIOCGIFHWADDR` on the tun fd.
pub fn t_hwaddr(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-hw0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut r = IfReqAddr { name: [0; 16], family: 1, data: [0; 14], pad: [0; 8] };
    r.data[..6].copy_from_slice(&[2, 0x11, 0x22, 0x33, 0x44, 0x55]);
    ioctl_ptr(t.fd(), SIOCSIFHWADDR, &mut r).map_err(|e| format!("SIOCSIFHWADDR: {e}"))?;
    check!(sysfs("rt-hw0", "address") == "02:11:22:33:44:55", "address {}", sysfs("rt-hw0", "address"));
    let mut g = IfReqAddr { name: [0; 16], family: 0, data: [0; 14], pad: [0; 8] };
    ioctl_ptr(t.fd(), SIOCGIFHWADDR, &mut g).map_err(|e| format!("SIOCGIFHWADDR: {e}"))?;
    check!(g.family == 1 && g.data[..6] == [2, 0x11, 0x22, 0x33, 0x44, 0x55], "SIOCGIFHWADDR family {} {:?}", g.family, &g.data[..6]);
    let mut m = IfReqAddr { name: [0; 16], family: 1, data: [0; 14], pad: [0; 8] };
    m.data[0] = 1;
    expect_errno!(ioctl_ptr(t.fd(), SIOCSIFHWADDR, &mut m), libc::EADDRNOTAVAIL, "a multicast address");
    expect_errno!(ioctl_ptr(t.fd(), SIOCGIFHWADDR, 8usize as *mut IfReqAddr), libc::EFAULT, "SIOCGIFHWADDR to a bad pointer");
    let u = Tun::create(n.path, "rt-hw1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_ptr(u.fd(), SIOCGIFHWADDR, &mut g).map_err(|e| format!("SIOCGIFHWADDR on TUN: {e}"))?;
    check!(g.family == 0xfffe, "TUN: family {:#x}", g.family);
    // 7.3's addr_len check refuses only an address longer than the
    // sockaddr (16 bytes); TUNSETLINK's longest, ARPHRD_TUNNEL6's 16, is
    // still set (the TAP's eth_mac_addr() writes the first 6 bytes).
    const ARPHRD_TUNNEL6: u16 = 769;
    ioctl_val(t.fd(), TUNSETLINK, ARPHRD_TUNNEL6.into()).map_err(|e| format!("TUNSETLINK TUNNEL6: {e}"))?;
    check!(sysfs("rt-hw0", "addr_len") == "16", "addr_len {} after TUNSETLINK TUNNEL6", sysfs("rt-hw0", "addr_len"));
    let mut r = IfReqAddr { name: [0; 16], family: ARPHRD_TUNNEL6, data: [0; 14], pad: [0; 8] };
    r.data[..6].copy_from_slice(&[2, 0x66, 0x77, 0x88, 0x99, 0xaa]);
    ioctl_ptr(t.fd(), SIOCSIFHWADDR, &mut r).map_err(|e| format!("SIOCSIFHWADDR with addr_len 16: {e}"))?;
    let want = "02:66:77:88:99:aa:00:00:00:00:00:00:00:00:00:00";
    check!(sysfs("rt-hw0", "address") == want, "address {} with addr_len 16, want {want}", sysfs("rt-hw0", "address"));
    Ok(())
}

/// `dev->addr_len` after `TUNSETLINK` of each link type
/// `tun_get_addr_len()` names, and of a few it does not (0), as sysfs
/// `type` and `addr_len` show them.
pub fn t_setlink_addr_len(n: Node) -> TestResult {
    // (ARPHRD_*, addr_len): <uapi/linux/if_arp.h> and tun.c 6.12.
    const TYPES: &[(u32, &str, u32)] = &[
        (0, "NETROM", 7),
        (1, "ETHER", 6),
        (3, "AX25", 0),
        (6, "IEEE802", 6),
        (32, "INFINIBAND", 0),
        (270, "ROSE", 5),
        (512, "PPP", 0),
        (768, "TUNNEL", 4),
        (769, "TUNNEL6", 16),
        (772, "LOOPBACK", 0),
        (773, "LOCALTLK", 1),
        (774, "FDDI", 6),
        (776, "SIT", 4),
        (778, "IPGRE", 4),
        (780, "HIPPI", 6),
        (801, "IEEE80211", 0),
        (804, "IEEE802154", 8),
        (805, "IEEE802154_MONITOR", 8),
        (821, "PHONET_PIPE", 0),
        (823, "IP6GRE", 16),
        (825, "6LOWPAN", 8),
        (0xfffe, "NONE", 0),
    ];
    for kind in [IFF_TUN, IFF_TAP] {
        let t = Tun::create(n.path, "rt-sla", kind | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
        for &(ty, what, len) in TYPES {
            ioctl_val(t.fd(), TUNSETLINK, ty.into()).map_err(|e| format!("TUNSETLINK {what}: {e}"))?;
            let (got_ty, got_len) = (sysfs("rt-sla", "type"), sysfs("rt-sla", "addr_len"));
            check!(got_ty == ty.to_string() && got_len == len.to_string(), "{kind:#x}: ARPHRD_{what} ({ty}): type {got_ty}, addr_len {got_len}, want {len}");
        }
    }
    Ok(())
}

/// A device name is bytes: one with bytes >= 0x80 (valid UTF-8 or not)
/// shows in fdinfo's `iff:` as it is, as tun.c's `%s` prints it.
pub fn t_fdinfo_bytes_name(n: Node) -> TestResult {
    for name in [&b"rt-\xff\xfe0"[..], &b"rt-\xc3\xa90"[..]] {
        let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
        let mut ifr = IfReq::new("", IFF_TUN | IFF_NO_PI);
        ifr.name[..name.len()].copy_from_slice(name);
        ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("TUNSETIFF {name:02x?}: {e}"))?;
        check!(&ifr.name[..name.len()] == name && ifr.name[name.len()] == 0, "TUNSETIFF returned the name {:02x?}", ifr.name);
        let iff = crate::queues::fdinfo_iff(f.as_raw_fd());
        check!(iff.as_deref() == Some(name), "fdinfo iff {iff:02x?}, expected {name:02x?}");
    }
    Ok(())
}

/// `SIOCSIFHWADDR` on a TAP retyped `ARPHRD_TUNNEL6` (`addr_len` 16):
/// tun.c hands `dev_set_mac_address_user()` the `sockaddr` inside its
/// whole `struct ifreq` copy, and `netif_set_mac_address()` compares
/// `addr_len` bytes from `sa_data`, so the two bytes of the `ifr_ifru`
/// union after the 16-byte `sockaddr` take part: with them equal to
/// `dev_addr[14..16]` the address is unchanged and `ndo_set_mac_address`
/// is not called, with them different it is (`eth_mac_addr()`, which
/// writes 6 bytes). Either way the call succeeds, `IFLA_ADDRESS` (all 16
/// bytes) stays what it was, and the core sends its `NETDEV_CHANGEADDR`
/// RTM_NEWLINK (it does so whether the compare differed or not), the same
/// number on both drivers. A `sa_data` whose first 6 bytes differ is set,
/// the tail bytes not stored.
pub fn t_hwaddr_union_tail(n: Node) -> TestResult {
    const ARPHRD_TUNNEL6: u16 = 769;
    let t = Tun::create(n.path, "rt-ht0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETLINK, ARPHRD_TUNNEL6.into()).map_err(|e| format!("TUNSETLINK TUNNEL6: {e}"))?;
    check!(sysfs("rt-ht0", "addr_len") == "16", "addr_len {}", sysfs("rt-ht0", "addr_len"));
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let idx = ifindex("rt-ht0");
    let address = || -> Result<Vec<u8>, String> {
        nl.link_queues(idx).map_err(|e| format!("RTM_GETLINK: {e}"))?.address.ok_or_else(|| "no IFLA_ADDRESS".to_string())
    };
    let addr = address()?;
    check!(addr.len() == 16 && addr[6..] == [0; 10], "IFLA_ADDRESS {addr:02x?}, expected the MAC and 10 zero bytes");
    let mon = Nl::open(crate::nl::RTMGRP_LINK).map_err(|e| e.to_string())?;
    mon.set_timeout_ms(300);
    let _ = mon.count_newlink("rt-ht0");
    let mut counts = Vec::new();
    for (what, tail) in [("tail equal to dev_addr[14..16]", [addr[14], addr[15]]), ("tail different", [0xab, 0xcd]), ("tail equal again", [addr[14], addr[15]])] {
        let mut r = IfReqAddr { name: [0; 16], family: ARPHRD_TUNNEL6, data: [0; 14], pad: [0x5a; 8] };
        r.data.copy_from_slice(&addr[..14]);
        r.pad[..2].copy_from_slice(&tail);
        ioctl_ptr(t.fd(), SIOCSIFHWADDR, &mut r).map_err(|e| format!("SIOCSIFHWADDR, {what}: errno {e} ({})", errname(e)))?;
        let got = address()?;
        check!(got == addr, "{what}: IFLA_ADDRESS {got:02x?}, expected {addr:02x?} unchanged");
        let c = mon.count_newlink("rt-ht0");
        println!("# {what}: {c} RTM_NEWLINK");
        counts.push(c);
    }
    check!(counts.iter().all(|&c| c == counts[0]) && counts[0] > 0, "RTM_NEWLINK per SIOCSIFHWADDR {counts:?}: expected one (NETDEV_CHANGEADDR) each");
    // New first bytes: set; the tail is not stored.
    let mut r = IfReqAddr { name: [0; 16], family: ARPHRD_TUNNEL6, data: [0x77; 14], pad: [0xee; 8] };
    r.data[..6].copy_from_slice(&[2, 0x16, 0x16, 0x16, 0x16, 0x16]);
    ioctl_ptr(t.fd(), SIOCSIFHWADDR, &mut r).map_err(|e| format!("SIOCSIFHWADDR new address: errno {e} ({})", errname(e)))?;
    let got = address()?;
    let mut want = vec![0u8; 16];
    want[..6].copy_from_slice(&[2, 0x16, 0x16, 0x16, 0x16, 0x16]);
    check!(got == want, "new address: IFLA_ADDRESS {got:02x?}, expected {want:02x?}");
    check!(mon.count_newlink("rt-ht0") > 0, "no RTM_NEWLINK for the new address");
    Ok(())
}
