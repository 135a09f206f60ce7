//! The control ABI beyond creation and attachment, as real clients and
//! iproute2 use it (issue "Drop-in tun"), each test run against tun and
//! rust_tun with the same expectations: the link's identity (sysfs
//! `tun_flags`/`owner`/`group`, the `IFLA_TUN_*` attributes, fdinfo,
//! ethtool), send-buffer accounting, carrier, link type, ifindex, network
//! namespace fds, the TAP address filter, classic BPF filters, the
//! notifications, `header_ops`, flag masking, hardware addresses. Where
//! the drivers differ on purpose the test says so (and the rst lists it).

use super::*;
use crate::nl::{ifindex, Nl};

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

/// `TUNGETSNDBUF`/`TUNSETSNDBUF`, and the accounting they control: in
/// flight past the send buffer, a non-blocking writer gets `EAGAIN` (not a
/// drop), `POLLOUT` comes back when space is freed, and a blocking writer
/// waits instead, until space is freed (tun.c: until a poller comes by).
/// Packets stay in flight on the other CPU's RPS backlog.
pub fn t_sndbuf(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-sb0", IFF_TUN | IFF_NO_PI, 1)?;
    let t = &q[0];
    check!(get_int(t.fd(), TUNGETSNDBUF) == Ok(i32::MAX), "default {:?}", get_int(t.fd(), TUNGETSNDBUF));
    expect_errno!(ioctl_int(t.fd(), TUNSETSNDBUF, 0), libc::EINVAL, "TUNSETSNDBUF 0");
    expect_errno!(ioctl_int(t.fd(), TUNSETSNDBUF, -5), libc::EINVAL, "TUNSETSNDBUF -5");
    expect_errno!(ioctl_ptr(t.fd(), TUNSETSNDBUF, 8usize as *mut i32), libc::EFAULT, "TUNSETSNDBUF from a bad pointer");
    expect_errno!(ioctl_ptr(t.fd(), TUNGETSNDBUF, 8usize as *mut i32), libc::EFAULT, "TUNGETSNDBUF to a bad pointer");
    ioctl_int(t.fd(), TUNSETSNDBUF, 1).map_err(|e| format!("TUNSETSNDBUF: {e}"))?;
    check!(get_int(t.fd(), TUNGETSNDBUF) == Ok(1), "after set {:?}", get_int(t.fd(), TUNGETSNDBUF));
    // tun.c 6.12 hands the device's send buffer to the files attached at
    // TUNSETSNDBUF time only: a file attached later keeps its own.
    let late = Tun::create(n.path, "rt-sb0", IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE).map_err(|e| format!("second queue: {e}"))?;
    check!(get_int(late.fd(), TUNGETSNDBUF) == Ok(i32::MAX), "late file {:?}", get_int(late.fd(), TUNGETSNDBUF));
    drop(late);

    // A few packets' worth: a write is admitted while less than this is in
    // flight, POLLOUT needs less than half (`sock_writeable()`).
    ioctl_int(t.fd(), TUNSETSNDBUF, 4096).map_err(|e| format!("TUNSETSNDBUF: {e}"))?;
    ptp_up("rt-sb0", "10.81.0.1", "10.81.0.2")?;
    write_file("/sys/class/net/rt-sb0/queues/rx-0/rps_cpus", "2")?;
    pin_to_cpu(0)?;
    // SAFETY: Our fd.
    unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    let pkt = udp_pkt([10, 81, 0, 2], 5000, [10, 81, 0, 1], 9);
    let before = counters("rt-sb0")?;
    let (mut ok, mut again, mut polled) = (0u64, 0u64, 0u64);
    // The longest wait for POLLOUT: how long the packets in flight take to
    // give their send-buffer space back in this boot, under this load.
    let mut space_back = Duration::ZERO;
    let t0 = Instant::now();
    for _ in 0..3000 {
        match t.write(&pkt) {
            Ok(_) => ok += 1,
            Err(libc::EAGAIN) => {
                again += 1;
                let p0 = Instant::now();
                if poll_fd(t.fd(), libc::POLLOUT, Duration::from_secs(10)).is_ok_and(|ev| ev & libc::POLLOUT != 0) {
                    polled += 1;
                }
                space_back = space_back.max(p0.elapsed());
            }
            Err(e) => return Err(format!("non-blocking write: errno {e}")),
        }
        if t0.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
    let after = counters("rt-sb0")?;
    write_file("/sys/class/net/rt-sb0/queues/rx-0/rps_cpus", "0")?;
    println!("# {}: {ok} written, {again} EAGAIN, POLLOUT back after {polled} (the longest wait {space_back:?})", n.driver);
    check!(again > 0, "3000 writes with a 4 KB send buffer and packets in flight: no EAGAIN");
    check!(polled == again, "POLLOUT came back after {polled} of {again} EAGAINs");
    check!(after.rx_packets - before.rx_packets == ok, "rx_packets +{}, {ok} written", after.rx_packets - before.rx_packets);
    check!(after.rx_dropped == before.rx_dropped, "EAGAIN counted as drops: {} -> {}", before.rx_dropped, after.rx_dropped);
    // Blocking: every write completes (a writer stuck past 10 s is
    // interrupted and reported).
    // SAFETY: Our fd.
    unsafe { libc::fcntl(t.fd(), libc::F_SETFL, 0) };
    write_file("/sys/class/net/rt-sb0/queues/rx-0/rps_cpus", "2")?;
    println!("# {}: blocking writer starts", n.driver);
    let fd = t.fd();
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let tid = Arc::new(std::sync::atomic::AtomicI32::new(0));
    let tid2 = tid.clone();
    let progress = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let p2 = progress.clone();
    let w = thread::spawn(move || {
        tid2.store(gettid(), Ordering::SeqCst);
        let mut n = 0;
        for _ in 0..1000 {
            if fd_write(fd, &pkt).is_err() {
                break;
            }
            n += 1;
            p2.store(n, Ordering::SeqCst);
        }
        d2.store(true, Ordering::SeqCst);
        n
    });
    // Stuck: no write completed for twenty times the longest wait for
    // space seen above (at least 1 s): space that comes back at all comes
    // back within that wait, on this boot and under this load.
    let stuck_after = (space_back * 20).max(Duration::from_secs(1));
    println!("# {}: stuck means no write completes for {stuck_after:?}", n.driver);
    let (mut last, mut since) = (0, Instant::now());
    while !done.load(Ordering::SeqCst) && since.elapsed() < stuck_after {
        thread::sleep(Duration::from_millis(20));
        let p = progress.load(Ordering::SeqCst);
        if p != last {
            (last, since) = (p, Instant::now());
        }
    }
    let stuck = !done.load(Ordering::SeqCst);
    if stuck {
        // Free it: no limit any more, and signals until it has seen so
        // (each wake-up re-checks the space).
        ioctl_int(t.fd(), TUNSETSNDBUF, i32::MAX).map_err(|e| format!("TUNSETSNDBUF: {e}"))?;
        while !done.load(Ordering::SeqCst) {
            interrupt_thread(tid.load(Ordering::SeqCst));
            thread::sleep(Duration::from_millis(50));
        }
    }
    let written = w.join().map_err(|_| "writer panicked".to_string())?;
    write_file("/sys/class/net/rt-sb0/queues/rx-0/rps_cpus", "0")?;
    println!("# {}: blocking writer wrote {written} of 1000{}", n.driver, if stuck { ", stuck until freed" } else { "" });
    if n.module == "tun" {
        // tun.c 6.12 wakes a writer waiting for send-buffer space only if
        // a poller flagged SOCKWQ_ASYNC_NOSPACE (tun_sock_write_space()):
        // a blocking writer that does not poll sleeps on. Deliberate
        // difference: rust_tun wakes it.
        check!(stuck, "tun.c's blocking writer was woken without a poller");
    } else {
        check!(!stuck && written == 1000, "blocking writer: {written} of 1000 written{}", if stuck { ", stuck in write" } else { "" });
    }
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

/// `struct tun_filter` with `addrs`.
fn tun_filter(flags: u16, addrs: &[[u8; 6]]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&flags.to_ne_bytes());
    b.extend_from_slice(&(addrs.len() as u16).to_ne_bytes());
    for a in addrs {
        b.extend_from_slice(a);
    }
    b
}

/// `TUNSETTXFILTER`: a TAP passes frames to the listed addresses (and, past
/// eight, multicast ones by hash, or all with `TUN_FLT_ALLMULTI`) and drops
/// the rest; a unicast address past eight, or none, turns it off.
pub fn t_txfilter(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-tf0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-tf0 up")?;
    drain(&t);
    let pk = Packet::open("rt-tf0")?;
    let src = [2, 0xaa, 0, 0, 0, 1];
    let frame = |dst: [u8; 6]| pkt::eth(dst, src, 0x88b5, &[0x5a; 46]);
    // Which of `dsts` the reader gets, in order.
    let passes = |dsts: &[[u8; 6]]| -> Result<Vec<bool>, String> {
        let mut out = Vec::new();
        for d in dsts {
            pk.send(&frame(*d))?;
            let got = drain(&t);
            out.push(got.iter().any(|f| f.get(..6) == Some(&d[..])));
        }
        Ok(out)
    };
    let set = |flags: u16, addrs: &[[u8; 6]]| {
        let mut b = tun_filter(flags, addrs);
        ioctl_ptr(t.fd(), TUNSETTXFILTER, b.as_mut_ptr())
    };
    let a = [2, 0, 0, 0, 0, 1];
    let b = [2, 0, 0, 0, 0, 2];
    let m1 = [0x33, 0x33, 0, 0, 0, 1];
    let m2 = [1, 0, 0x5e, 0, 0, 1];
    check!(passes(&[a, b, m1])? == [true, true, true], "no filter: all pass");
    let drops0 = stat("rt-tf0", "tx_dropped")?;
    check!(set(0, &[a]) == Ok(1), "one exact address: {:?}", set(0, &[a]));
    check!(passes(&[a, b, m1])? == [true, false, false], "exact filter");
    check!(stat("rt-tf0", "tx_dropped")? == drops0 + 2, "filtered frames are drops");
    let mut nine: Vec<[u8; 6]> = (0..8).map(|i| [2, 0, 0, 0, 1, i]).collect();
    nine[0] = a;
    nine.push(m1);
    check!(set(0, &nine) == Ok(8), "eight exact and a multicast: {:?}", set(0, &nine));
    check!(passes(&[a, b, m1, m2])? == [true, false, true, false], "multicast by hash");
    check!(set(TUN_FLT_ALLMULTI, &nine) == Ok(8), "allmulti");
    check!(passes(&[a, b, m1, m2])? == [true, false, true, true], "allmulti passes every group");
    let mut uni = nine.clone();
    uni[8] = b;
    check!(set(0, &uni) == Ok(0), "unicast past eight: {:?}", set(0, &uni));
    check!(passes(&[a, b, m1])? == [true, true, true], "unicast past eight turns the filter off");
    check!(set(0, &[a]) == Ok(1) && set(0, &[]) == Ok(0), "count 0");
    check!(passes(&[b])? == [true], "count 0 turns the filter off");
    expect_errno!(ioctl_ptr(t.fd(), TUNSETTXFILTER, 8usize as *mut u8), libc::EFAULT, "TUNSETTXFILTER from a bad pointer");
    // A header claiming more addresses than are mapped.
    let page = map_one_page()?;
    let hdr = tun_filter(0, &[]);
    let at = page + 4096 - 4;
    // SAFETY: The last 4 bytes of our page; the addresses would follow
    // past its end, which is unmapped.
    unsafe {
        std::ptr::copy_nonoverlapping(hdr.as_ptr(), at as *mut u8, 2);
        std::ptr::write_unaligned((at + 2) as *mut u16, 3);
    }
    expect_errno!(ioctl_ptr(t.fd(), TUNSETTXFILTER, at as *mut u8), libc::EFAULT, "TUNSETTXFILTER with addresses past the mapping");
    let u = Tun::create(n.path, "rt-tf1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut f = tun_filter(0, &[a]);
    expect_errno!(ioctl_ptr(u.fd(), TUNSETTXFILTER, f.as_mut_ptr()), libc::EINVAL, "TUNSETTXFILTER on a TUN device");
    Ok(())
}

/// One readable, writable page followed by an unmapped one; its address.
fn map_one_page() -> Result<usize, String> {
    // SAFETY: Anonymous mappings; the second page is unmapped right away.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), 8192, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if p == libc::MAP_FAILED {
            return Err(format!("mmap: errno {}", errno()));
        }
        libc::munmap((p as usize + 4096) as *mut libc::c_void, 4096);
        Ok(p as usize)
    }
}

fn attach_prog(fd: RawFd, prog: &[SockFilter]) -> Result<i32, i32> {
    let mut f = SockFprog { len: prog.len() as u16, filter: prog.as_ptr() };
    ioctl_ptr(fd, TUNATTACHFILTER, &mut f)
}

/// `TUNATTACHFILTER`/`TUNGETFILTER`/`TUNDETACHFILTER`: a classic BPF program
/// the kernel runs on every frame a TAP transmits to the file (0: drop, n:
/// keep n bytes); `TUNGETIFF` drops `IFF_NOFILTER` while one is attached.
pub fn t_attach_filter(n: Node) -> TestResult {
    // With tun_pi: IFF_NOFILTER is IFF_NO_PI's bit.
    let t = Tun::create(n.path, "rt-bf0", IFF_TAP).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-bf0 up")?;
    drain(&t);
    let nofilter = |t: &Tun| t.getiff().map(|(_, f)| f & IFF_NOFILTER != 0);
    check!(nofilter(&t) == Ok(true), "IFF_NOFILTER without a filter");
    let pk = Packet::open("rt-bf0")?;
    let frame = pkt::eth([2, 0, 0, 0, 0, 1], [2, 0xbb, 0, 0, 0, 1], 0x88b5, &[0x5a; 86]);
    attach_prog(t.fd(), &[bpf_ret(0)]).map_err(|e| format!("TUNATTACHFILTER drop-all: {e}"))?;
    check!(nofilter(&t) == Ok(false), "IFF_NOFILTER with a filter");
    let mut got = SockFprog { len: 0, filter: std::ptr::null() };
    ioctl_ptr(t.fd(), TUNGETFILTER, &mut got).map_err(|e| format!("TUNGETFILTER: {e}"))?;
    check!(got.len == 1, "TUNGETFILTER len {}", got.len);
    let drops0 = stat("rt-bf0", "tx_dropped")?;
    pk.send(&frame)?;
    check!(drain(&t).is_empty(), "drop-all filter: the frame reached the reader");
    check!(stat("rt-bf0", "tx_dropped")? == drops0 + 1, "filtered frame not counted as a drop");
    attach_prog(t.fd(), &[bpf_ret(20)]).map_err(|e| format!("TUNATTACHFILTER trim: {e}"))?;
    pk.send(&frame)?;
    let f = drain(&t);
    check!(f.len() == 1 && f[0].len() == 4 + 20, "trim to 20: {:?}", f.iter().map(|f| f.len()).collect::<Vec<_>>());
    ioctl_val(t.fd(), TUNDETACHFILTER, 0).map_err(|e| format!("TUNDETACHFILTER: {e}"))?;
    check!(nofilter(&t) == Ok(true), "IFF_NOFILTER after detach");
    pk.send(&frame)?;
    check!(drain(&t).len() == 1, "no filter: the frame passes");
    // Hostile programs.
    expect_errno!(ioctl_ptr(t.fd(), TUNATTACHFILTER, 8usize as *mut SockFprog), libc::EFAULT, "TUNATTACHFILTER from a bad pointer");
    let mut bad = SockFprog { len: 1, filter: 8usize as *const SockFilter };
    expect_errno!(ioctl_ptr(t.fd(), TUNATTACHFILTER, &mut bad), libc::EFAULT, "program at a bad pointer");
    expect_errno!(attach_prog(t.fd(), &[]), libc::EINVAL, "empty program");
    expect_errno!(attach_prog(t.fd(), &[SockFilter { code: 0xffff, jt: 0, jf: 0, k: 0 }]), libc::EINVAL, "invalid instruction");
    expect_errno!(ioctl_ptr(t.fd(), TUNGETFILTER, 8usize as *mut SockFprog), libc::EFAULT, "TUNGETFILTER to a bad pointer");
    check!(nofilter(&t) == Ok(true), "a failed attach left a filter");
    let u = Tun::create(n.path, "rt-bf1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    expect_errno!(attach_prog(u.fd(), &[bpf_ret(0)]), libc::EINVAL, "TUNATTACHFILTER on TUN");
    expect_errno!(ioctl_val(u.fd(), TUNDETACHFILTER, 0), libc::EINVAL, "TUNDETACHFILTER on TUN");
    expect_errno!(ioctl_ptr(u.fd(), TUNGETFILTER, &mut got), libc::EINVAL, "TUNGETFILTER on TUN");

    // A persistent device keeps its filter for the next file: tun.c keeps
    // the `sock_fprog` as given, and the file attaching re-attaches the
    // program read from that user address, in its own address space.
    static DROP_ALL: [SockFilter; 1] = [SockFilter { code: 0x06, jt: 0, jf: 0, k: 0 }];
    let mut prog = SockFprog { len: 1, filter: DROP_ALL.as_ptr() };
    ioctl_ptr(t.fd(), TUNATTACHFILTER, &mut prog).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    drop(t);
    // With IFF_NOFILTER (IFF_NO_PI's bit) the file does without.
    let nf = Tun::create(n.path, "rt-bf0", IFF_TAP | IFF_NOFILTER).map_err(|e| format!("re-attach with IFF_NOFILTER: {e}"))?;
    check!(nf.getiff().is_ok(), "IFF_NOFILTER re-attach: TUNGETIFF {:?}", nf.getiff());
    drop(nf);
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut ifr = IfReq::new("rt-bf0", IFF_TAP);
    ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("re-attach: {e}"))?;
    let mut out = IfReq::new("", 0);
    let r = ioctl_ptr(f.as_raw_fd(), TUNGETIFF, &mut out);
    let keeper = if n.module == "tun" {
        // tun.c 6.12's tun_attach() returns right after re-attaching the
        // filter successfully (`if (!err) goto out`): TUNSETIFF succeeds,
        // the file is not attached. Deliberate difference: rust_tun
        // attaches it, with the filter.
        expect_errno!(r, libc::EBADFD, "tun.c: a re-attached filter leaves the file unattached");
        Tun::create(n.path, "rt-bf0", IFF_TAP | IFF_NOFILTER).map_err(|e| format!("attach: {e}"))?
    } else {
        check!(r.is_ok() && out.flags & IFF_NOFILTER == 0, "re-attach with the device's filter: {r:?} flags {:#x}", out.flags);
        Tun { file: f, name: "rt-bf0".into() }
    };
    // The program's memory gone by then: the re-attach fails, and the file
    // attaches without a filter (tun.c ignores the error).
    let page = map_one_page()?;
    // SAFETY: Our page; one instruction fits.
    unsafe { std::ptr::write(page as *mut SockFilter, bpf_ret(0)) };
    let mut prog = SockFprog { len: 1, filter: page as *const SockFilter };
    ioctl_ptr(keeper.fd(), TUNATTACHFILTER, &mut prog).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    drop(keeper);
    // SAFETY: Unmapping our page.
    unsafe { libc::munmap(page as *mut libc::c_void, 4096) };
    let g = Tun::create(n.path, "rt-bf0", IFF_TAP).map_err(|e| format!("re-attach, program unmapped: {e}"))?;
    let got = g.getiff();
    check!(got.as_ref().is_ok_and(|(_, fl)| fl & IFF_NOFILTER != 0), "re-attach with the program unmapped: {got:?}");
    ioctl_val(g.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
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
    #[repr(C)]
    struct IfReqAddr {
        name: [u8; 16],
        family: u16,
        data: [u8; 14],
        pad: [u8; 8],
    }
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
    Ok(())
}

extern "C" fn ignore_signal(_: i32) {}

/// Interrupts thread `tid`'s blocking system call: SIGUSR2 with a handler
/// installed without `SA_RESTART` (the call fails with `EINTR`).
fn interrupt_thread(tid: i32) {
    // SAFETY: Installing a handler that does nothing, then signalling a
    // thread of ours.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = ignore_signal as *const () as usize;
        libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut());
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, libc::SIGUSR2);
    }
}

/// `TUNSETSNDBUF` on any queue of a multi-queue device sets the send
/// buffer of every attached queue (tun.c's `tun_set_sndbuf()`); a queue
/// detached at the time keeps its own, also once re-attached (tun.c 6.12
/// hands the device's value to no file at attach).
pub fn t_sndbuf_all_queues(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-sbq", IFF_TUN | IFF_NO_PI, 3)?;
    let all = |q: &[Tun]| q.iter().map(|t| get_int(t.fd(), TUNGETSNDBUF)).collect::<Vec<_>>();
    ioctl_int(q[2].fd(), TUNSETSNDBUF, 4096).map_err(|e| format!("TUNSETSNDBUF on queue 2: {e}"))?;
    check!(all(&q) == [Ok(4096); 3], "after TUNSETSNDBUF 4096 on queue 2: {:?}", all(&q));
    ioctl_int(q[0].fd(), TUNSETSNDBUF, 20000).map_err(|e| format!("TUNSETSNDBUF on queue 0: {e}"))?;
    check!(all(&q) == [Ok(20000); 3], "after TUNSETSNDBUF 20000 on queue 0: {:?}", all(&q));
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
    ioctl_int(q[2].fd(), TUNSETSNDBUF, 8192).map_err(|e| format!("TUNSETSNDBUF with queue 1 detached: {e}"))?;
    check!(all(&q) == [Ok(8192), Ok(20000), Ok(8192)], "with queue 1 detached: {:?}", all(&q));
    setqueue(&q[1], IFF_ATTACH_QUEUE).map_err(|e| format!("attach: {e}"))?;
    check!(all(&q) == [Ok(8192), Ok(20000), Ok(8192)], "queue 1 re-attached: {:?}", all(&q));
    ioctl_int(q[1].fd(), TUNSETSNDBUF, 6000).map_err(|e| format!("TUNSETSNDBUF on queue 1: {e}"))?;
    check!(all(&q) == [Ok(6000); 3], "after TUNSETSNDBUF 6000 on queue 1: {:?}", all(&q));
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

/// `TUNSETTXFILTER` with the most addresses a `struct tun_filter` can
/// name (65535: 384 KiB, which tun.c copies with `memdup_user()`): eight
/// exact, the rest multicast by hash; the same filter one byte short of
/// its mapping is `EFAULT` and leaves the filter as it was. On the debug
/// kernel, rust_tun must take the largest filter with no page of order 1
/// or more to be had: it reads the addresses in bounded pieces and
/// allocates nothing (a deliberate difference: tun.c's copy fails there
/// with `ENOMEM`).
pub fn t_txfilter_largest(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-tl0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-tl0 up")?;
    drain(&t);
    let a = [2, 0, 0, 0, 0, 1];
    let b = [2, 0, 0, 0, 0, 2];
    let mut addrs: Vec<[u8; 6]> = (0..8).map(|i| [2, 0, 0, 0, 1, i]).collect();
    addrs[0] = a;
    addrs.extend((0..65535u32 - 8).map(|i| [1, 0, 0x5e, 0x7f & (i >> 16) as u8, (i >> 8) as u8, i as u8]));
    let mut f = tun_filter(0, &addrs);
    check!(f.len() == 4 + 6 * 65535, "filter of {} bytes", f.len());
    check!(ioctl_ptr(t.fd(), TUNSETTXFILTER, f.as_mut_ptr()) == Ok(8), "65535 addresses: {:?}", ioctl_ptr(t.fd(), TUNSETTXFILTER, f.as_mut_ptr()));
    let pk = Packet::open("rt-tl0")?;
    let src = [2, 0xaa, 0, 0, 0, 1];
    let passes = |d: [u8; 6]| -> Result<bool, String> {
        pk.send(&pkt::eth(d, src, 0x88b5, &[0x5a; 46]))?;
        Ok(drain(&t).iter().any(|f| f.get(..6) == Some(&d[..])))
    };
    check!(passes(a)? && !passes(b)?, "the largest filter does not filter");
    check!(passes([1, 0, 0x5e, 0, 0x12, 0x34])?, "a listed multicast address was dropped");

    // The same, one byte short of its mapping.
    let len = f.len();
    let pages = len.div_ceil(4096) + 1;
    // SAFETY: Anonymous mapping; its last page is unmapped right away.
    let map = unsafe {
        libc::mmap(std::ptr::null_mut(), pages * 4096, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
    };
    check!(map != libc::MAP_FAILED, "mmap: errno {}", errno());
    let end = map as usize + (pages - 1) * 4096;
    // SAFETY: Ours; the last page goes, the rest stays mapped.
    unsafe { libc::munmap(end as *mut libc::c_void, 4096) };
    let at = end - (len - 1);
    // SAFETY: `len - 1` bytes before the unmapped page, all mapped.
    unsafe { std::ptr::copy_nonoverlapping(f.as_ptr(), at as *mut u8, len - 1) };
    let mut one = tun_filter(0, &[b]);
    check!(ioctl_ptr(t.fd(), TUNSETTXFILTER, one.as_mut_ptr()) == Ok(1), "filter of b");
    expect_errno!(ioctl_ptr(t.fd(), TUNSETTXFILTER, at as *mut u8), libc::EFAULT, "65535 addresses, the last one byte short");
    check!(passes(b)? && !passes(a)?, "a failed TUNSETTXFILTER changed the filter");
    // SAFETY: The rest of our mapping.
    unsafe { libc::munmap(map, (pages - 1) * 4096) };

    if n.module == "rust_tun" && std::path::Path::new(crate::hardening::FAIL_PAGE_ALLOC).exists() {
        let r = {
            let _fail = crate::hardening::FailHighOrder::new(1)?;
            ioctl_ptr(t.fd(), TUNSETTXFILTER, f.as_mut_ptr())
        };
        check!(r == Ok(8), "65535 addresses without pages of order >= 1: {r:?}");
        check!(passes(a)? && !passes(b)?, "the filter set without high-order pages does not filter");
    }
    Ok(())
}

/// `TUNGETFILTER` gives back the `struct sock_fprog` that `TUNATTACHFILTER`
/// was given, all 16 bytes of it (tun.c copies the struct in and out
/// whole, padding included), and zeroes before any was attached.
pub fn t_getfilter_bytes(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-gf0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut got = [0x5au8; 16];
    ioctl_ptr(t.fd(), TUNGETFILTER, got.as_mut_ptr()).map_err(|e| format!("TUNGETFILTER before: {e}"))?;
    check!(got == [0; 16], "TUNGETFILTER before any filter: {got:02x?}");
    static PROG: [SockFilter; 1] = [SockFilter { code: 0x06, jt: 0, jf: 0, k: 0xffff }];
    let mut given = [0xa5u8; 16];
    given[..2].copy_from_slice(&1u16.to_ne_bytes());
    given[8..].copy_from_slice(&(PROG.as_ptr() as usize).to_ne_bytes());
    ioctl_ptr(t.fd(), TUNATTACHFILTER, given.as_mut_ptr()).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    let mut got = [0x5au8; 16];
    ioctl_ptr(t.fd(), TUNGETFILTER, got.as_mut_ptr()).map_err(|e| format!("TUNGETFILTER: {e}"))?;
    check!(got == given, "TUNGETFILTER gave {got:02x?}, TUNATTACHFILTER was given {given:02x?}");
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
