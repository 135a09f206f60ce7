//! The link under traffic: carrier and operstate, MTU changes, IPv6
//! without the packet-info header, VLAN tags on a TAP.

use super::*;

/// Carrier and operstate as `ip link` shows them: a device with a file
/// attached has a carrier (brought up with it, its operstate stays
/// "unknown": no carrier event since); `IFF_NO_CARRIER` has none; with no
/// file left a persistent device has none, and says so.
pub fn t_carrier_operstate(n: Node) -> TestResult {
    let show = |name: &str| sh(&format!("ip link show {name}")).map(|o| o.replace('\n', " "));
    let t = Tun::create(n.path, "rt-cs0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-cs0 up")?;
    check!(sysfs("rt-cs0", "carrier") == "1" && sysfs("rt-cs0", "operstate") == "unknown", "attached: carrier {}, operstate {}", sysfs("rt-cs0", "carrier"), sysfs("rt-cs0", "operstate"));
    let o = show("rt-cs0")?;
    // (busybox's `ip` prints the flags, not the operstate.)
    check!(o.contains("LOWER_UP") && !o.contains("NO-CARRIER"), "ip link: {o}");
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    drop(t);
    check!(sysfs("rt-cs0", "carrier") == "0" && wait_sysfs("rt-cs0", "operstate", "down"), "no file: carrier {}, operstate {}", sysfs("rt-cs0", "carrier"), sysfs("rt-cs0", "operstate"));
    let o = show("rt-cs0")?;
    check!(o.contains("NO-CARRIER") && !o.contains("LOWER_UP"), "ip link: {o}");
    let t = Tun::create(n.path, "rt-cs0", IFF_TAP | IFF_NO_PI | IFF_NO_CARRIER).map_err(|e| format!("re-attach: {e}"))?;
    check!(sysfs("rt-cs0", "carrier") == "0", "IFF_NO_CARRIER: carrier {}", sysfs("rt-cs0", "carrier"));
    check!(show("rt-cs0")?.contains("NO-CARRIER"), "ip link: {}", show("rt-cs0")?);
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    Ok(())
}

/// MTU limits (68 up to 65535 less the link header) and MTU changes while
/// packets flow both ways: nothing fails, and afterwards the stack
/// fragments to the new MTU.
pub fn t_mtu_under_traffic(n: Node) -> TestResult {
    for (flags, name, max) in [(IFF_TUN, "rt-mtu0", 65535), (IFF_TAP, "rt-mtu1", 65535 - 14)] {
        let _t = Tun::create(n.path, name, flags | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
        check!(sh(&format!("ip link set {name} mtu 67")).is_err(), "{name}: mtu 67 accepted");
        sh(&format!("ip link set {name} mtu 68"))?;
        sh(&format!("ip link set {name} mtu {max}"))?;
        check!(sh(&format!("ip link set {name} mtu {}", max + 1)).is_err(), "{name}: mtu {} accepted", max + 1);
        check!(sysfs(name, "mtu") == max.to_string(), "{name}: mtu {}", sysfs(name, "mtu"));
    }
    let t = Arc::new(Tun::create_nonblock(n.path, "rt-mtu2", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    ptp_up("rt-mtu2", "10.85.0.1", "10.85.0.2")?;
    let _sink = std::net::UdpSocket::bind("10.85.0.1:7000").map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let (t, stop) = (t.clone(), stop.clone());
            thread::spawn(move || -> Result<u64, String> {
                let s = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
                let p = udp_pkt([10, 85, 0, 2], 5000, [10, 85, 0, 1], 7000);
                let mut buf = vec![0u8; 70000];
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    if w == 0 {
                        t.write(&p).map_err(|e| format!("write: errno {e}"))?;
                        s.send_to(&[7u8; 1400], "10.85.0.2:9").map_err(|e| format!("send: {e}"))?;
                    } else {
                        match t.read(&mut buf) {
                            Ok(_) | Err(libc::EAGAIN) => {}
                            Err(e) => return Err(format!("read: errno {e}")),
                        }
                    }
                    n += 1;
                }
                Ok(n)
            })
        })
        .collect();
    for mtu in [576, 1280, 9000, 68, 1500, 65535, 1280].iter().cycle().take(28) {
        sh(&format!("ip link set rt-mtu2 mtu {mtu}"))?;
        thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().map_err(|_| "worker panicked")??;
    }
    // MTU 1280 now: a 1400-byte datagram leaves in fragments that fit.
    drain_ports(&t);
    std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.send_to(&[7u8; 1400], "10.85.0.2:9"))
        .map_err(|e| e.to_string())?;
    thread::sleep(Duration::from_millis(100));
    let mut buf = vec![0u8; 70000];
    let mut sizes = Vec::new();
    while let Ok(n) = t.read(&mut buf) {
        sizes.push(n);
    }
    check!(sizes.len() == 2 && sizes.iter().all(|&s| s <= 1280), "fragments {sizes:?} at MTU 1280");
    Ok(())
}

/// IPv6 through a TUN device without tun_pi (the version nibble says what
/// the packet is): an ICMPv6 echo request is answered.
pub fn t_ipv6_tun_no_pi(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-v6", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    // IPv6 on, then no duplicate address detection.
    write_file("/proc/sys/net/ipv6/conf/rt-v6/disable_ipv6", "0")?;
    write_file("/proc/sys/net/ipv6/conf/rt-v6/accept_dad", "0")?;
    sh("ip -6 addr add fd00:86::1/64 dev rt-v6 && ip link set rt-v6 up")?;
    let (me, peer) = ([0xfd, 0, 0, 0x86, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0xfd, 0, 0, 0x86, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    // Up to three requests: the first can race the address and its route
    // becoming usable right after `ip link set up` (seen once, in a
    // drop-in run: no reply within 3 s); one answered is enough.
    let mut last = String::new();
    for seq in 1..=3u16 {
        let req = pkt::ipv6(peer, me, pkt::IPPROTO_ICMPV6, &pkt::icmpv6_echo(peer, me, 128, 0x66, seq, b"six"));
        check!(t.write(&req) == Ok(req.len()), "write of an IPv6 packet");
        match read_until(&t, Duration::from_millis(1500), |p| {
            pkt::parse_ipv6(p).is_some_and(|(src, dst, nh, m)| {
                src == me && dst == peer && nh == pkt::IPPROTO_ICMPV6 && m.len() >= 8 && m[0] == 129 && m[4..6] == [0, 0x66]
            })
        }) {
            Ok(_) => return Ok(()),
            Err(e) => {
                println!("# echo request {seq} unanswered (rx_dropped {:?})", stat("rt-v6", "rx_dropped"));
                last = e;
            }
        }
    }
    Err(format!("no echo reply to three requests: {last}"))
}

/// `PACKET_AUXDATA`, and its cmsg's VLAN fields.
pub const PACKET_AUXDATA: i32 = 8;

pub const TP_STATUS_VLAN_VALID: u32 = 1 << 4;

/// VLAN-tagged frames through a TAP device: written ones reach the stack
/// with their tag (an AF_PACKET socket sees it in its auxdata); ones the
/// stack sends come out tagged.
pub fn t_vlan_on_tap(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-vl0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-vl0 up")?;
    let s = hardening::packet_socket("rt-vl0")?;
    hardening::setsockopt_int(s.0, libc::SOL_PACKET, PACKET_AUXDATA, 1)?;
    let mac = sysfs("rt-vl0", "address");
    let dev: Vec<u8> = mac.split(':').filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
    let dev: [u8; 6] = dev.try_into().map_err(|_| format!("address {mac}"))?;
    let frame = pkt::eth_vlan(dev, [2, 0, 0, 0, 0, 0x42], 100, pkt::ETH_P_IP, &[0x45; 40]);
    check!(t.write(&frame) == Ok(frame.len()), "write of a tagged frame");
    // The packet socket's copy: untagged data, the tag in the auxdata.
    let mut data = [0u8; 2048];
    let mut control = [0u64; 64];
    let mut iv = libc::iovec { iov_base: data.as_mut_ptr().cast(), iov_len: data.len() };
    // SAFETY: Zeroed, then pointed at our buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iv;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    poll_fd(s.0, libc::POLLIN, Duration::from_secs(3)).map_err(|e| format!("poll: {e}"))?;
    // SAFETY: Valid msghdr.
    let r = unsafe { libc::recvmsg(s.0, &mut msg, libc::MSG_DONTWAIT) };
    check!(r > 0, "AF_PACKET recvmsg: errno {}", errno());
    let mut vlan = None;
    // SAFETY: Walking the control messages recvmsg filled in.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == PACKET_AUXDATA {
                let aux = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::tpacket_auxdata>());
                if aux.tp_status & TP_STATUS_VLAN_VALID != 0 {
                    vlan = Some(aux.tp_vlan_tci & 0xfff);
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    check!(vlan == Some(100), "VLAN of the received frame: {vlan:?}");
    check!(data[12..14] == [0x08, 0x00], "received frame's ethertype {:02x?}", &data[12..14]);
    // The other way: a tagged frame from the stack reaches the reader tagged.
    let out = pkt::eth_vlan([2, 0, 0, 0, 0, 0x42], dev, 200, pkt::ETH_P_IP, &[0x45; 40]);
    // SAFETY: Valid buffer.
    let r = unsafe { libc::send(s.0, out.as_ptr().cast(), out.len(), 0) };
    check!(r == out.len() as isize, "AF_PACKET send: errno {}", errno());
    let mut buf = [0u8; 2048];
    let got = t.read_timeout(&mut buf, Duration::from_secs(3)).map_err(|e| format!("read: {e}"))?;
    check!(buf[..got] == out[..], "the frame read is not the tagged frame sent");
    Ok(())
}
