//! Bad input from user space: ioctls and writes that must fail with an
//! errno (or be dropped and counted), hostile device names, writes and an
//! oversized write.

use super::*;

pub fn t_bad_ioctls(n: Node) -> TestResult {
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let fd = f.as_raw_fd();
    let mut ifr = IfReq::new("", IFF_NO_PI);
    expect_errno!(ioctl_ptr(fd, TUNSETIFF, &mut ifr), libc::EINVAL, "TUNSETIFF without IFF_TUN/IFF_TAP");
    expect_errno!(ioctl_ptr(fd, TUNSETIFF, 16usize as *mut IfReq), libc::EFAULT, "TUNSETIFF from an unmapped pointer");
    let mut out = IfReq::new("", 0);
    expect_errno!(ioctl_ptr(fd, TUNGETIFF, &mut out), libc::EBADFD, "TUNGETIFF before TUNSETIFF");
    expect_errno!(ioctl_val(fd, TUNSETPERSIST, 1), libc::EBADFD, "TUNSETPERSIST before TUNSETIFF");
    expect_errno!(fd_write(fd, &[0x45; 20]), libc::EBADFD, "write before TUNSETIFF");
    let mut buf = [0u8; 64];
    expect_errno!(fd_read(fd, &mut buf), libc::EBADFD, "read before TUNSETIFF");
    let mut lo = IfReq::new("lo", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(fd, TUNSETIFF, &mut lo), libc::EINVAL, "TUNSETIFF on lo (not ours)");
    let mut slash = IfReq::new("a/b", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(fd, TUNSETIFF, &mut slash), libc::EINVAL, "TUNSETIFF with an invalid name");

    let t = Tun::create(n.path, "rt-bad0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut again = IfReq::new("rt-bad1", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(t.fd(), TUNSETIFF, &mut again), libc::EEXIST, "TUNSETIFF twice on one fd");
    expect_errno!(ioctl_ptr(t.fd(), TUNGETIFF, 16usize as *mut IfReq), libc::EFAULT, "TUNGETIFF to an unmapped pointer");
    expect_errno!(ioctl_val(t.fd(), 0x54ff, 0), libc::EINVAL, "unknown ioctl");
    // The device still works after all that.
    check!(t.getiff().is_ok_and(|(name, _)| name == "rt-bad0"), "TUNGETIFF after bad ioctls");

    let f2 = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut tap_on_tun = IfReq::new("rt-bad0", IFF_TAP | IFF_NO_PI);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut tap_on_tun), libc::EINVAL, "IFF_TAP on a TUN device");
    let mut excl = IfReq::new("rt-bad0", IFF_TUN | IFF_NO_PI | IFF_TUN_EXCL);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut excl), libc::EBUSY, "IFF_TUN_EXCL on an existing device");
    let mut second = IfReq::new("rt-bad0", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut second), libc::EBUSY, "second queue on a single-queue device");
    Ok(())
}

pub fn t_bad_writes(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-bw0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.15.0.1", "10.15.0.2")?;
    let d0 = stat(&t.name, "rx_dropped")?;
    expect_errno!(t.write(&[0x55; 20]), libc::EINVAL, "TUN write with IP version 5");
    expect_errno!(t.write(&[]), libc::EINVAL, "zero-length TUN write");
    check!(stat(&t.name, "rx_dropped")? == d0 + 2, "rx_dropped {} after two bad writes", stat(&t.name, "rx_dropped")?);
    expect_errno!(fd_write_raw(t.fd(), 16usize as *const u8, 40), libc::EFAULT, "write from an unmapped buffer");

    let tap = Tun::create(n.path, "rt-bw1", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-bw1 up")?;
    expect_errno!(tap.write(&[0u8; 13]), libc::EINVAL, "TAP write shorter than an Ethernet header");
    // Down device: EIO.
    sh("ip link set rt-bw1 down")?;
    let frame = pkt::eth([0xff; 6], [2, 0, 0, 0, 0, 1], pkt::ETH_P_IP, &[0x45; 28]);
    expect_errno!(tap.write(&frame), libc::EIO, "write to a down device");
    Ok(())
}

/// IP header and truncation errors so far (/proc/net/snmp).
pub fn ip_in_errors() -> Result<u64, String> {
    let text = std::fs::read_to_string("/proc/net/snmp").map_err(|e| e.to_string())?;
    let mut ip = text.lines().filter(|l| l.starts_with("Ip:"));
    let (names, values) = (ip.next().ok_or("no Ip: header")?, ip.next().ok_or("no Ip: values")?);
    let mut sum = 0;
    for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
        if n == "InHdrErrors" || n == "InTruncatedPkts" {
            sum += v.parse::<u64>().map_err(|e| e.to_string())?;
        }
    }
    Ok(sum)
}

/// Hostile input: over-long and non-NUL-terminated names, bad name
/// formats, writes of odd sizes and garbage headers; each gets tun's errno
/// (or is accepted and dropped by the stack, as with tun) and the device
/// keeps working.
pub fn t_hostile_names(n: Node) -> TestResult {
    // 16 bytes, no NUL: tun forces ifr_name[15] = 0.
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut ifr = IfReq::new("", IFF_TUN | IFF_NO_PI);
    ifr.name = *b"rt-0123456789abc";
    ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("TUNSETIFF 16-byte name: {e}"))?;
    check!(ifr.name() == "rt-0123456789ab", "name {:?}", ifr.name());
    check!(link_exists("rt-0123456789ab"), "truncated device missing");
    let f2 = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut bad = IfReq::new("rt-%d%d", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut bad), libc::EINVAL, "name with two %d");
    let mut dot = IfReq::new(".", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut dot), libc::EINVAL, "name '.'");
    Ok(())
}

pub fn t_hostile_writes(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-hw0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.52.0.1", "10.52.0.2")?;
    let ping = pkt::ipv4([10, 52, 0, 2], [10, 52, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 9, 9, b"ok?"));
    let with_pi = |proto: [u8; 2], p: &[u8]| {
        let mut w = vec![0, 0, proto[0], proto[1]];
        w.extend_from_slice(p);
        w
    };
    // A tun_pi naming a protocol nobody handles, a garbage IP header, a
    // length field that lies: the driver takes each whole (the write
    // returns its length, rx_packets counts it), the stack drops it (the
    // core counts the unknown protocol in rx_dropped, IP the other two).
    let c0 = counters(&t.name)?;
    let ip0 = ip_in_errors()?;
    let w = with_pi([0x12, 0x34], &ping);
    check!(t.write(&w) == Ok(w.len()), "write with an unknown tun_pi protocol");
    let mut garbage = ping.clone();
    garbage[0] = 0x4f; // IHL 15 with a 20-byte header
    let w = with_pi([8, 0], &garbage);
    check!(t.write(&w) == Ok(w.len()), "write with a garbage header");
    let mut liar = ping.clone();
    liar[2] = 0xff;
    let w = with_pi([8, 0], &liar);
    check!(t.write(&w) == Ok(w.len()), "write with a lying length");
    let c1 = counters(&t.name)?;
    check!(c1.rx_packets == c0.rx_packets + 3 && c1.rx_dropped == c0.rx_dropped + 1, "counters {c0:?} -> {c1:?}");
    check!(ip_in_errors()? == ip0 + 2, "IP header/truncation errors +{}, expected 2", ip_in_errors()? - ip0);
    expect_errno!(t.write(&[0, 0]), libc::EINVAL, "write shorter than tun_pi");
    // An MTU-sized packet is fine.
    let big = pkt::ipv4([10, 52, 0, 2], [10, 52, 0, 1], pkt::IPPROTO_UDP, &pkt::udp(1, 9, &[0u8; 1472]));
    check!(t.write(&with_pi([8, 0], &big)) == Ok(1504), "MTU-sized write");
    // The device still answers.
    t.write(&with_pi([8, 0], &ping)).map_err(|e| format!("write: {e}"))?;
    read_until(&t, Duration::from_secs(3), |p| {
        p.len() > 4 && pkt::parse_ipv4(&p[4..]).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.1 == 9)
    })?;
    Ok(())
}

/// Writes larger than any frame: EMSGSIZE (rust_tun's documented
/// difference: tun.c builds a paged skb and lets the stack drop it). The
/// largest frame is taken whole.
pub fn t_oversized_write(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-big0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-big0 up")?;
    let c0 = counters("rt-big0")?;
    let huge = vec![0u8; 70000];
    expect_errno!(t.write(&huge), libc::EMSGSIZE, "70000-byte write");
    // Ethertype 0x88b5 (local experimental): nobody's. (A zero-filled
    // frame is an 802.3 length, which LLC takes where the kernel has it:
    // a bridge selects it.)
    let mut max = vec![0u8; 65535 + 14 + 4];
    max[12..14].copy_from_slice(&[0x88, 0xb5]);
    check!(t.write(&max) == Ok(max.len()), "a 65553-byte frame");
    let c1 = counters("rt-big0")?;
    check!(c1.rx_packets == c0.rx_packets + 1 && c1.rx_bytes == c0.rx_bytes + max.len() as u64, "{c0:?} -> {c1:?}");
    // The refused write is no packet; the frame (nobody's ethertype) is
    // dropped by the core, which counts it.
    check!(c1.rx_dropped == c0.rx_dropped + 1, "rx_dropped: {c0:?} -> {c1:?}");
    check!(t.getiff().is_ok(), "device broken");
    Ok(())
}
