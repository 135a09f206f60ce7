//! The basic device tests: load and unload, TUN/TAP creation, the feature
//! set, round trips, ping, the packet-info header, poll and blocking reads,
//! the full ring, ethtool's driver, persistence and ownership, deletion
//! under a reader, rmmod with open files.

use super::*;

pub fn t_load_unload(_: Node) -> TestResult {
    unload("rust_tun")?;
    check!(!std::path::Path::new(RUST_NODE).exists(), "{RUST_NODE} exists before load");
    load("rust_tun")?;
    let meta = std::fs::metadata(RUST_NODE).map_err(|e| format!("{RUST_NODE}: {e}"))?;
    use std::os::unix::fs::FileTypeExt;
    check!(meta.file_type().is_char_device(), "{RUST_NODE} is not a character device");
    let misc = std::fs::read_to_string("/proc/misc").unwrap_or_default();
    check!(misc.contains("rust_tun"), "rust_tun not in /proc/misc: {misc}");
    unload("rust_tun")?;
    check!(!std::path::Path::new(RUST_NODE).exists(), "{RUST_NODE} left after rmmod");
    load("rust_tun")
}

pub fn t_create_tun(n: Node) -> TestResult {
    let t = Tun::create(n.path, "", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(t.name.starts_with(n.tun_prefix), "default name {} lacks {}", t.name, n.tun_prefix);
    check!(link_exists(&t.name), "no /sys/class/net/{}", t.name);
    check!(sysfs(&t.name, "type") == "65534", "type {} != ARPHRD_NONE", sysfs(&t.name, "type"));
    check!(sysfs(&t.name, "mtu") == "1500", "mtu {}", sysfs(&t.name, "mtu"));
    check!(sysfs(&t.name, "tx_queue_len") == "500", "tx_queue_len {}", sysfs(&t.name, "tx_queue_len"));
    let (name, flags) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
    check!(name == t.name, "TUNGETIFF name {name} != {}", t.name);
    check!(flags & (IFF_TUN | IFF_TAP | IFF_NO_PI) == IFF_TUN | IFF_NO_PI, "TUNGETIFF flags {flags:#x}");
    let name = t.name.clone();
    drop(t);
    check!(!link_exists(&name), "{name} left after close");
    Ok(())
}

pub fn t_create_tap(n: Node) -> TestResult {
    let t = Tun::create(n.path, "", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(t.name.starts_with(n.tap_prefix), "default name {} lacks {}", t.name, n.tap_prefix);
    check!(sysfs(&t.name, "type") == "1", "type {} != ARPHRD_ETHER", sysfs(&t.name, "type"));
    let mac = sysfs(&t.name, "address");
    check!(mac.len() == 17 && mac != "00:00:00:00:00:00", "address {mac}");
    let first = u8::from_str_radix(&mac[..2], 16).unwrap_or(1);
    check!(first & 1 == 0 && first & 2 == 2, "address {mac} not a local unicast");
    let (_, flags) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
    check!(flags & (IFF_TUN | IFF_TAP) == IFF_TAP, "TUNGETIFF flags {flags:#x}");
    Ok(())
}

pub fn t_create_named(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-named0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(t.name == "rt-named0", "name {}", t.name);
    check!(link_exists("rt-named0"), "rt-named0 missing");
    let t2 = Tun::create(n.path, "rt-fmt%d", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(t2.name == "rt-fmt0", "name {}", t2.name);
    Ok(())
}

/// `TUNGETFEATURES` says exactly what the driver implements, and each
/// feature it claims works: a device created with it reports it in
/// `TUNGETIFF` and behaves accordingly; a flag it does not claim is masked.
pub fn t_features(n: Node) -> TestResult {
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut feat: u32 = 0;
    ioctl_ptr(f.as_raw_fd(), TUNGETFEATURES, &mut feat).map_err(|e| format!("TUNGETFEATURES: {e}"))?;
    // 7.3 adds IFF_BACKPRESSURE; 6.12's tun.c does not know it.
    let expected = if kernel_has_backpressure() { n.features | u32::from(IFF_BACKPRESSURE) } else { n.features };
    check!(feat == expected, "TUNGETFEATURES {feat:#x}, expected {expected:#x}");
    expect_errno!(ioctl_ptr(f.as_raw_fd(), TUNGETFEATURES, 8usize as *mut u32), libc::EFAULT, "TUNGETFEATURES to a bad pointer");
    let settable = [IFF_NO_PI, IFF_ONE_QUEUE, IFF_MULTI_QUEUE, IFF_VNET_HDR, IFF_NAPI, IFF_NAPI_FRAGS, IFF_BACKPRESSURE];
    for bit in settable {
        let name = format!("rt-ft{bit:x}");
        // tun.c takes IFF_NAPI_FRAGS only with IFF_NAPI.
        let with = if bit == IFF_NAPI_FRAGS { bit | IFF_NAPI } else { bit };
        let t = Tun::create(n.path, &name, IFF_TAP | with).map_err(|e| format!("TUNSETIFF with {with:#x}: {e}"))?;
        let (_, got) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
        let claimed = feat & u32::from(bit) != 0;
        let reported = got & bit != 0;
        // IFF_ONE_QUEUE is accepted and has meant nothing since 3.8; both
        // report it back as given.
        if bit == IFF_ONE_QUEUE {
            continue;
        }
        check!(reported == claimed, "{bit:#x}: claimed {claimed}, reported by TUNGETIFF {reported}");
        if !claimed {
            continue;
        }
        match bit {
            IFF_NO_PI => {
                sh(&format!("ip link set {name} up"))?;
                let frame = pkt::eth([0xff; 6], [2, 0, 0, 0, 0, 1], pkt::ETH_P_ARP, &[0u8; 28]);
                check!(t.write(&frame) == Ok(frame.len()), "IFF_NO_PI: a frame without tun_pi");
            }
            IFF_MULTI_QUEUE => {
                let t2 = Tun::create(n.path, &name, IFF_TAP | bit).map_err(|e| format!("second queue: {e}"))?;
                check!(tx_queues(&name) == 2, "IFF_MULTI_QUEUE: {} queues", tx_queues(&name));
                drop(t2);
            }
            IFF_VNET_HDR => {
                let mut sz: i32 = 0;
                ioctl_ptr(t.fd(), TUNGETVNETHDRSZ, &mut sz).map_err(|e| format!("TUNGETVNETHDRSZ: {e}"))?;
                check!(sz == 10, "IFF_VNET_HDR: header size {sz}");
            }
            IFF_NAPI => {
                // A frame written goes through the NAPI context and counts.
                sh(&format!("ip link set {name} up"))?;
                let rx0 = stat(&name, "rx_packets")?;
                let mut frame = vec![0u8; 4];
                frame.extend_from_slice(&pkt::eth([0xff; 6], [2, 0, 0, 0, 0, 1], pkt::ETH_P_ARP, &[0u8; 28]));
                frame[2..4].copy_from_slice(&pkt::ETH_P_ARP.to_be_bytes());
                check!(t.write(&frame) == Ok(frame.len()), "IFF_NAPI: write {:?}", t.write(&frame));
                check!(stat(&name, "rx_packets")? == rx0 + 1, "IFF_NAPI: rx_packets {} after one write", stat(&name, "rx_packets")?);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Write an ICMP echo request into a TUN device; the stack's reply is read
/// back; the counters move by exactly that.
pub fn t_tun_round_trip(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-rt0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.10.0.1", "10.10.0.2")?;
    let c0 = counters(&t.name)?;
    let req = pkt::ipv4([10, 10, 0, 2], [10, 10, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 0x4242, 1, b"rust-tun round trip"));
    let w = t.write(&req).map_err(|e| format!("write: {e}"))?;
    check!(w == req.len(), "write returned {w}, expected {}", req.len());
    let mut buf = vec![0u8; 2048];
    let got = t.read_timeout(&mut buf, Duration::from_secs(3)).map_err(|e| format!("read: {e}"))?;
    let rep = &buf[..got];
    let ok = pkt::parse_ipv4(rep)
        .and_then(|ip| pkt::parse_icmp_echo(ip.payload).map(|e| (ip.src, e)))
        .is_some_and(|(src, (ty, id, seq, data))| {
            src == [10, 10, 0, 1] && ty == 0 && id == 0x4242 && seq == 1 && data == b"rust-tun round trip"
        });
    check!(ok, "the first packet read is not the reply: {:02x?}", &rep[..rep.len().min(40)]);
    let c1 = counters(&t.name)?;
    check!(c1.rx_packets == c0.rx_packets + 1 && c1.rx_bytes == c0.rx_bytes + req.len() as u64, "rx: {c0:?} -> {c1:?}");
    check!(c1.tx_packets == c0.tx_packets + 1 && c1.tx_bytes == c0.tx_bytes + got as u64, "tx: {c0:?} -> {c1:?}");
    check!(c1.rx_dropped == c0.rx_dropped && c1.tx_dropped == c0.tx_dropped, "drops: {c0:?} -> {c1:?}");
    Ok(())
}

/// ARP and ICMP through a TAP device: Ethernet frames both ways.
pub fn t_tap_round_trip(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-tap0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip addr add 10.11.0.1/24 dev rt-tap0 && ip link set rt-tap0 up")?;
    let me = [0x02, 0, 0, 0, 0, 0x22];
    let arp = pkt::arp(1, me, [10, 11, 0, 2], [0; 6], [10, 11, 0, 1]);
    t.write(&pkt::eth([0xff; 6], me, pkt::ETH_P_ARP, &arp)).map_err(|e| format!("write arp: {e}"))?;
    let reply = read_until(&t, Duration::from_secs(3), |f| {
        pkt::parse_eth(f).is_some_and(|(dst, _, ty, p)| {
            dst == me && ty == pkt::ETH_P_ARP && pkt::parse_arp(p).is_some_and(|a| a.0 == 2 && a.2 == [10, 11, 0, 1])
        })
    })?;
    let (_, devmac, _, _) = pkt::parse_eth(&reply).ok_or("bad frame")?;
    let mac = sysfs("rt-tap0", "address");
    let want = devmac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
    check!(mac == want, "ARP reply from {want}, device address {mac}");
    let req = pkt::ipv4([10, 11, 0, 2], [10, 11, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 7, 9, b"tap"));
    t.write(&pkt::eth(devmac, me, pkt::ETH_P_IP, &req)).map_err(|e| format!("write icmp: {e}"))?;
    read_until(&t, Duration::from_secs(3), |f| {
        pkt::parse_eth(f).is_some_and(|(dst, _, ty, p)| {
            dst == me
                && ty == pkt::ETH_P_IP
                && pkt::parse_ipv4(p).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.1 == 7 && e.2 == 9)
        })
    })?;
    Ok(())
}

/// `ping` from the stack through the device, answered by a user-space responder.
pub fn t_ping(n: Node) -> TestResult {
    let t = Arc::new(Tun::create(n.path, "rt-ping0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    ptp_up(&t.name, "10.12.0.1", "10.12.0.2")?;
    let stop = Arc::new(AtomicBool::new(false));
    let (t2, stop2) = (t.clone(), stop.clone());
    let responder = thread::spawn(move || {
        let mut answered = 0u32;
        let mut buf = vec![0u8; 65536];
        while !stop2.load(Ordering::Relaxed) {
            if let Ok(n) = t2.read_timeout(&mut buf, Duration::from_millis(100)) {
                if let Some(rep) = pkt::echo_reply_for(&buf[..n]) {
                    if t2.write(&rep).is_ok() {
                        answered += 1;
                    }
                }
            }
        }
        answered
    });
    let r = sh("ping -c 3 -W 2 10.12.0.2");
    stop.store(true, Ordering::Relaxed);
    let answered = responder.join().map_err(|_| "responder panicked")?;
    let out = r?;
    check!(out.contains("3 packets received"), "ping output: {out}");
    check!(answered == 3, "responder answered {answered} requests");
    Ok(())
}

/// Without IFF_NO_PI every packet carries a 4-byte `struct tun_pi`: its
/// protocol says what the write is, and reads carry it; a short read strips
/// the packet (TUN_PKT_STRIP) and the next read returns the next packet.
pub fn t_tun_pi(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-pi0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.14.0.1", "10.14.0.2")?;
    let req = |seq: u16| pkt::ipv4([10, 14, 0, 2], [10, 14, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 5, seq, b"pi"));
    let with_pi = |proto: [u8; 2], p: &[u8]| {
        let mut w = vec![0, 0, proto[0], proto[1]];
        w.extend_from_slice(p);
        w
    };
    let mut buf = vec![0u8; 2048];
    // The protocol field decides: an IPv4 packet labelled IPv6 gets no answer.
    let w = with_pi([0x86, 0xdd], &req(1));
    check!(t.write(&w) == Ok(w.len()), "write labelled IPv6");
    expect_errno!(t.read_timeout(&mut buf, Duration::from_millis(300)), libc::ETIMEDOUT, "reply to a packet labelled IPv6");
    let w = with_pi([0x08, 0x00], &req(2));
    check!(t.write(&w) == Ok(w.len()), "write labelled IPv4");
    let got = t.read_timeout(&mut buf, Duration::from_secs(3)).map_err(|e| format!("read: {e}"))?;
    check!(buf[0..4] == [0, 0, 0x08, 0x00], "tun_pi {:02x?}", &buf[..4]);
    check!(pkt::parse_ipv4(&buf[4..got]).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.2 == 2), "not the reply to seq 2");
    // Two replies queued; a 10-byte read strips the first (flag set, 10
    // bytes returned), the next read returns the second, whole.
    for seq in [3, 4] {
        t.write(&with_pi([8, 0], &req(seq))).map_err(|e| format!("write: {e}"))?;
    }
    thread::sleep(Duration::from_millis(200));
    let mut small = [0u8; 10];
    check!(t.read(&mut small) == Ok(10), "short read");
    check!(u16::from_ne_bytes([small[0], small[1]]) & TUN_PKT_STRIP != 0, "TUN_PKT_STRIP not set: {:02x?}", &small[..4]);
    check!(small[2..4] == [0x08, 0x00] && small[4] >> 4 == 4, "short read: {small:02x?}");
    let got = t.read(&mut buf).map_err(|e| format!("read after the short one: {e}"))?;
    check!(u16::from_ne_bytes([buf[0], buf[1]]) == 0, "flags on a whole read: {:02x?}", &buf[..4]);
    check!(pkt::parse_ipv4(&buf[4..got]).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.2 == 4), "the read after a short one is not the next packet");
    // A buffer shorter than tun_pi itself is EINVAL (and the packet is lost).
    t.write(&with_pi([8, 0], &req(5))).map_err(|e| format!("write: {e}"))?;
    thread::sleep(Duration::from_millis(200));
    let mut tiny = [0u8; 3];
    expect_errno!(t.read(&mut tiny), libc::EINVAL, "read into 3 bytes with tun_pi");
    expect_errno!(t.read_timeout(&mut buf, Duration::from_millis(200)), libc::ETIMEDOUT, "read after the EINVAL one");
    expect_errno!(t.write(&[0, 0, 8]), libc::EINVAL, "write of 3 bytes with tun_pi");
    Ok(())
}

pub fn t_nonblock_poll(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-nb0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut buf = [0u8; 2048];
    expect_errno!(t.read(&mut buf), libc::EAGAIN, "non-blocking read of an empty queue");
    // Down: neither readable nor writable.
    let ev = poll_fd(t.fd(), libc::POLLIN | libc::POLLOUT, Duration::ZERO).map_err(|e| format!("poll: {e}"))?;
    check!(ev & (libc::POLLIN | libc::POLLOUT) == 0, "poll of a down device: {ev:#x}");
    ptp_up(&t.name, "10.16.0.1", "10.16.0.2")?;
    let ev = poll_fd(t.fd(), libc::POLLOUT, Duration::ZERO).map_err(|e| format!("poll: {e}"))?;
    check!(ev & libc::POLLOUT != 0, "poll of an up device lacks POLLOUT: {ev:#x}");
    // A packet from the stack makes it readable; a sleeping poll wakes.
    let t0 = Instant::now();
    let sender = thread::spawn(|| {
        thread::sleep(Duration::from_millis(200));
        udp_send("10.16.0.2", 1)
    });
    let ev = poll_fd(t.fd(), libc::POLLIN, Duration::from_secs(5)).map_err(|e| format!("poll: {e}"))?;
    sender.join().map_err(|_| "sender panicked")??;
    check!(ev & libc::POLLIN != 0, "no POLLIN after a packet: {ev:#x}");
    check!(t0.elapsed() < Duration::from_secs(4), "poll woke late");
    let got = t.read(&mut buf).map_err(|e| format!("read: {e}"))?;
    check!(pkt::parse_ipv4(&buf[..got]).is_some_and(|ip| ip.proto == pkt::IPPROTO_UDP), "not the UDP packet");
    Ok(())
}

/// A blocked reader wakes for a packet.
pub fn t_blocking_read(n: Node) -> TestResult {
    let t = Arc::new(Tun::create(n.path, "rt-blk0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    ptp_up(&t.name, "10.17.0.1", "10.17.0.2")?;
    let t2 = t.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = thread::spawn(move || {
        let _ = tx.send(gettid());
        let mut buf = [0u8; 2048];
        t2.read(&mut buf)
    });
    let tid = rx.recv().map_err(|e| e.to_string())?;
    wait_blocked(tid)?;
    udp_send("10.17.0.2", 1)?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !reader.is_finished() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    check!(reader.is_finished(), "blocked reader not woken");
    let n = reader.join().map_err(|_| "reader panicked")?.map_err(|e| format!("read: {e}"))?;
    check!(n == 20 + 8 + 4, "read {n} bytes");
    Ok(())
}

/// The ring holds tx_queue_len packets; the rest are dropped and counted.
pub fn t_ring_full(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-ring0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.18.0.1", "10.18.0.2")?;
    let d0 = stat(&t.name, "tx_dropped")?;
    udp_send("10.18.0.2", 600)?;
    let mut buf = [0u8; 2048];
    let mut queued = 0;
    loop {
        match t.read(&mut buf) {
            Ok(_) => queued += 1,
            Err(libc::EAGAIN) => break,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let dropped = stat(&t.name, "tx_dropped")? - d0;
    check!(queued == 500, "{queued} packets queued, expected tx_queue_len 500");
    check!(dropped == 100, "{dropped} counted as tx_dropped, expected 100");
    check!(stat(&t.name, "tx_packets")? == 500, "tx_packets {}", stat(&t.name, "tx_packets")?);
    Ok(())
}

pub fn t_ethtool(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-eth0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let (driver, _) = ethtool_info(&t.name).map_err(|e| format!("SIOCETHTOOL: {e}"))?;
    check!(driver == n.driver, "driver {driver}, expected {}", n.driver);
    sh(&format!("ip link set {} up", t.name))?;
    let (_, link) = ethtool_info(&t.name).map_err(|e| format!("SIOCETHTOOL: {e}"))?;
    check!(link == 1, "link {link} on an up device with carrier");
    check!(sysfs(&t.name, "carrier") == "1", "carrier {}", sysfs(&t.name, "carrier"));
    Ok(())
}

/// TUNSETPERSIST keeps a device without files (up, it has no carrier),
/// pins the module, and the device can be re-attached by name.
pub fn t_persist(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-per0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    check!(t.getiff().is_ok_and(|(_, f)| f & IFF_PERSIST != 0), "IFF_PERSIST not reported");
    drop(t);
    check!(link_exists("rt-per0"), "persistent device gone after close");
    sh("ip link set rt-per0 up")?;
    check!(sysfs("rt-per0", "carrier") == "0", "carrier {:?} with no file attached", sysfs("rt-per0", "carrier"));
    check!(wait_sysfs("rt-per0", "operstate", "down"), "operstate {:?} with no file attached", sysfs("rt-per0", "operstate"));
    check!(sh(&format!("rmmod {}", n.module)).is_err(), "rmmod succeeded with a persistent device");
    check!(link_exists("rt-per0"), "device gone after refused rmmod");
    let t = Tun::create(n.path, "rt-per0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("re-attach: {e}"))?;
    check!(sysfs("rt-per0", "carrier") == "1", "carrier {:?} with a file attached", sysfs("rt-per0", "carrier"));
    check!(wait_sysfs("rt-per0", "operstate", "up"), "operstate {:?} with a file attached", sysfs("rt-per0", "operstate"));
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    drop(t);
    check!(!link_exists("rt-per0"), "non-persistent device left after close");
    Ok(())
}

/// Deleting a persistent device under an attached reader wakes the reader
/// with EFAULT (tun: `RCV_SHUTDOWN`), and the file then reports EBADFD.
pub fn t_delete_under_reader(n: Node) -> TestResult {
    let t = Arc::new(Tun::create(n.path, "rt-del0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    let t2 = t.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = thread::spawn(move || {
        let _ = tx.send(gettid());
        let mut buf = [0u8; 2048];
        t2.read(&mut buf)
    });
    wait_blocked(rx.recv().map_err(|e| e.to_string())?)?;
    sh("ip link del rt-del0")?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !reader.is_finished() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    check!(reader.is_finished(), "reader not woken by device deletion");
    expect_errno!(reader.join().map_err(|_| "reader panicked")?, libc::EFAULT, "the blocked read");
    check!(!link_exists("rt-del0"), "device still there");
    expect_errno!(t.getiff(), libc::EBADFD, "TUNGETIFF after deletion");
    expect_errno!(t.write(&[0x45; 20]), libc::EBADFD, "write after deletion");
    let mut buf = [0u8; 64];
    expect_errno!(t.read(&mut buf), libc::EBADFD, "read after deletion");
    Ok(())
}

/// rmmod with an open fd is refused and harmless; after close it works.
pub fn t_unload_with_open_fd(_: Node) -> TestResult {
    load("rust_tun")?;
    let t = Tun::create(RUST_NODE, "rt-unl0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let f = Tun::open_node(RUST_NODE).map_err(|e| e.to_string())?;
    check!(sh("rmmod rust_tun").is_err(), "rmmod succeeded with open files");
    check!(module_loaded("rust_tun"), "module gone");
    check!(t.getiff().is_ok(), "device broken after refused rmmod");
    ptp_up(&t.name, "10.19.0.1", "10.19.0.2")?;
    let req = pkt::ipv4([10, 19, 0, 2], [10, 19, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 1, 1, b"x"));
    t.write(&req).map_err(|e| format!("write: {e}"))?;
    read_until(&t, Duration::from_secs(3), |p| pkt::parse_ipv4(p).is_some_and(|ip| ip.proto == pkt::IPPROTO_ICMP))?;
    drop(t);
    drop(f);
    sh("rmmod rust_tun")?;
    check!(!module_loaded("rust_tun"), "module still loaded");
    check!(!link_exists("rt-unl0"), "device left after unload");
    load("rust_tun")
}

/// TUNSETOWNER/TUNSETGROUP and tun's permission rules, with unprivileged
/// callers (another uid, no capabilities).
pub fn t_owner_group(n: Node) -> TestResult {
    let as_user = |uid: u32, gid: u32, name: &str| -> i32 {
        use std::os::unix::process::CommandExt;
        Command::new("/bin/rtun")
            .args(["attach", n.path, name])
            .uid(uid)
            .gid(gid)
            .status()
            .map(|s| s.code().unwrap_or(-1))
            .unwrap_or(-1)
    };
    // As distributions' udev rules do for /dev/net/tun (rust_tun's node is
    // created 0666 already).
    sh(&format!("chmod 0666 {}", n.path))?;
    let t = Tun::create(n.path, "rt-own0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    ioctl_val(t.fd(), TUNSETOWNER, 1000).map_err(|e| format!("TUNSETOWNER: {e}"))?;
    expect_errno!(ioctl_val(t.fd(), TUNSETOWNER, u32::MAX as libc::c_ulong), libc::EINVAL, "TUNSETOWNER -1");
    drop(t);
    let code = as_user(1000, 1000, "rt-own0");
    check!(code == 0, "the owner could not attach: {code} ({})", errname(code));
    check!(as_user(1001, 1001, "rt-own0") == libc::EPERM, "another user attached");
    check!(as_user(1001, 1001, "rt-own-new") == libc::EPERM, "an unprivileged user created a device");
    check!(!link_exists("rt-own-new"), "device created");
    let t = Tun::create(n.path, "rt-own0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("re-attach: {e}"))?;
    ioctl_val(t.fd(), TUNSETGROUP, 2000).map_err(|e| format!("TUNSETGROUP: {e}"))?;
    drop(t);
    // With both set, both must match.
    let code = as_user(1000, 2000, "rt-own0");
    check!(code == 0, "owner in the group could not attach: {code} ({})", errname(code));
    check!(as_user(1001, 2000, "rt-own0") == libc::EPERM, "a group member that is not the owner attached");
    check!(as_user(1000, 1000, "rt-own0") == libc::EPERM, "the owner outside the group attached");
    let t = Tun::create(n.path, "rt-own0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("re-attach: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    Ok(())
}
