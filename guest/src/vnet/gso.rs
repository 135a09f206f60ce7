//! GSO through the virtio-net header: UDP and TCP super-packets written
//! (segmented by the stack, IPv4 and IPv6), TCP and UDP read as
//! super-packets, and `rtun bench-gso`.

use super::*;

/// Checksum offload and UDP GSO on the write path: one write of a 6000
/// byte UDP payload with `gso_size` 1000 arrives as six datagrams of 1000
/// bytes at a local socket, every byte intact; a single datagram with a
/// partial checksum is delivered too.
pub fn t_vnet_gso_udp_write(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vg0", IFF_TUN | IFF_NO_PI)?;
    ptp_up("rt-vg0", "10.86.0.1", "10.86.0.2")?;
    let sock = std::net::UdpSocket::bind("10.86.0.1:9000").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let (me, peer) = ([10, 86, 0, 1], [10, 86, 0, 2]);
    let data: Vec<u8> = (0..6000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let p = udp_partial(peer, me, 5555, 9000, &data);
    let h = Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_UDP_L4, hdr_len: 28, gso_size: 1000, csum_start: 20, csum_offset: 6 };
    gso_write_six(&t, &with_hdr(&h, &p), &sock, &data)?;
    // One datagram, checksum left partial.
    let mut buf = vec![0u8; 65536];
    let one = udp_partial(peer, me, 5555, 9000, &data[..1200]);
    let h = Vnet { flags: F_NEEDS_CSUM, csum_start: 20, csum_offset: 6, ..Default::default() };
    check!(t.write(&with_hdr(&h, &one)).is_ok(), "checksum-offload write");
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("partial-checksum datagram: {e}"))?;
    check!(m == 1200 && buf[..m] == data[..1200], "partial-checksum datagram: {m} bytes");
    Ok(())
}

/// Writes `w`, one UDP GSO packet of `data` in 1000-byte segments, and
/// checks that `sock` receives it as six datagrams with the bytes intact.
pub fn gso_write_six(t: &Tun, w: &[u8], sock: &std::net::UdpSocket, data: &[u8]) -> TestResult {
    check!(t.write(w) == Ok(w.len()), "GSO write: {:?}", t.write(w));
    let mut got = Vec::new();
    let mut buf = vec![0u8; 65536];
    for i in 0..6 {
        let (m, from) = sock.recv_from(&mut buf).map_err(|e| format!("datagram {i}: {e}"))?;
        check!(m == 1000, "datagram {i}: {m} bytes from {from}");
        got.extend_from_slice(&buf[..m]);
    }
    check!(got == data, "the six datagrams are not the payload");
    Ok(())
}

/// GSO on the read path: with `TUNSETOFFLOAD(TUN_F_CSUM | TUN_F_TSO4)` a
/// local TCP sender's first flight reaches the reader as one super-packet
/// whose header says TCPv4, the peer's MSS, `NEEDS_CSUM` at the TCP
/// checksum; without offloads, only MTU-sized packets and no GSO type.
pub fn t_vnet_gso_tcp_read(n: Node) -> TestResult {
    for offload in [true, false] {
        let name = if offload { "rt-vr0" } else { "rt-vr1" };
        let t = tun_vnet(n, name, IFF_TUN | IFF_NO_PI)?;
        if offload {
            ioctl_val(t.fd(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4).map_err(|e| format!("TUNSETOFFLOAD: {e}"))?;
        }
        let (me, peer) = ([10, 87, 0, u8::from(offload) + 1], [10, 87, 1, u8::from(offload) + 1]);
        ptp_up(name, &format!("10.87.0.{}", me[3]), &format!("10.87.1.{}", peer[3]))?;
        let mut buf = vec![0u8; 70000];
        let dst = format!("10.87.1.{}:80", peer[3]);
        // The sender hands a handle of its connection back, so that it can
        // be shut down (its peer, this test, never acknowledges the data).
        let (tx, rx) = std::sync::mpsc::channel();
        let sender = thread::spawn(move || -> Result<(), String> {
            let mut s = std::net::TcpStream::connect_timeout(&dst.parse().unwrap(), Duration::from_secs(5)).map_err(|e| format!("connect: {e}"))?;
            let _ = tx.send(s.try_clone().map_err(|e| e.to_string())?);
            use std::io::Write;
            let _ = s.write_all(&[0x5a; 60000]);
            Ok(())
        });
        // The SYN.
        let syn = read_until(&t, Duration::from_secs(5), |p| p.len() > VNET_HDR_LEN + 33 && p[VNET_HDR_LEN + 9] == 6 && p[VNET_HDR_LEN + 33] & 0x02 != 0)?;
        let ip = &syn[VNET_HDR_LEN..];
        let sport = u16::from_be_bytes([ip[20], ip[21]]);
        let iss = u32::from_be_bytes([ip[24], ip[25], ip[26], ip[27]]);
        // SYN-ACK with MSS 1400, a large window.
        let synack = tcp_seg(peer, me, 80, sport, 1000, iss.wrapping_add(1), 0x12, &[2, 4, 0x05, 0x78], &[]);
        t.write(&with_hdr(&Vnet::default(), &synack)).map_err(|e| format!("SYN-ACK: {e}"))?;
        // Data: the first packet carrying payload.
        let mut biggest = 0usize;
        let mut header = Vnet::default();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            let Ok(m) = t.read_timeout(&mut buf, Duration::from_millis(500)) else { break };
            let ip = &buf[VNET_HDR_LEN..m];
            if ip.len() < 40 || ip[9] != 6 {
                continue;
            }
            let payload = ip.len() - 20 - usize::from(ip[32] >> 4) * 4;
            if payload > biggest {
                biggest = payload;
                header = Vnet::parse(&buf);
            }
            if biggest > 0 && !offload && t0.elapsed() > Duration::from_millis(1500) {
                break;
            }
        }
        if let Ok(s) = rx.recv_timeout(Duration::from_secs(1)) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        drop(t);
        let _ = sender.join();
        if offload {
            check!(biggest > 1400, "offload: largest segment carried {biggest} bytes, no super-packet");
            check!(header.gso_type == GSO_TCPV4 && header.gso_size == 1400, "offload: header {header:?}");
            check!(header.flags & F_NEEDS_CSUM != 0 && header.csum_start == 20 && header.csum_offset == 16, "offload: header {header:?}");
        } else {
            check!(biggest > 0 && biggest <= 1400, "no offload: largest segment {biggest} bytes");
            check!(header.gso_type == GSO_NONE && header.gso_size == 0, "no offload: header {header:?}");
        }
    }
    Ok(())
}

/// One driver's side of `rtun bench-gso`: a TUN device with the vnet
/// header on its own /24, the local socket, what a payload needs, and the
/// guest nanoseconds its payloads took so far.
pub struct GsoSide {
    driver: &'static str,
    t: Tun,
    sock: std::net::UdpSocket,
    /// write: the GSO packet written; read: the payload sent.
    data: Vec<u8>,
    dst: String,
    ns: u128,
    count: u32,
}

pub const GSO_PAYLOAD: usize = 64000;

pub const GSO_SEG: usize = 1400;

impl GsoSide {
    fn new(driver: &'static str, node: &str, name: &str, net: u8, dir: &str) -> Result<GsoSide, String> {
        let t = Tun::create(node, name, IFF_TUN | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("{driver}: TUNSETIFF: {e}"))?;
        let (me, peer) = ([10, net, 0, 1], [10, net, 0, 2]);
        ptp_up(name, &format!("10.{net}.0.1"), &format!("10.{net}.0.2"))?;
        let payload: Vec<u8> = (0..GSO_PAYLOAD).map(|i| i as u8).collect();
        let (sock, data) = match dir {
            "write" => {
                let sock = std::net::UdpSocket::bind(format!("10.{net}.0.1:7000")).map_err(|e| e.to_string())?;
                sock.set_read_timeout(Some(Duration::from_secs(5))).map_err(|e| e.to_string())?;
                let p = udp_partial(peer, me, 5555, 7000, &payload);
                let h = Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_UDP_L4, hdr_len: 28, gso_size: GSO_SEG as u16, csum_start: 20, csum_offset: 6 };
                (sock, with_hdr(&h, &p))
            }
            "read" => {
                ioctl_val(t.fd(), TUNSETOFFLOAD, TUN_F_CSUM | 0x20 | 0x40).map_err(|e| format!("{driver}: TUNSETOFFLOAD: {e}"))?;
                let sock = std::net::UdpSocket::bind(format!("10.{net}.0.1:7001")).map_err(|e| e.to_string())?;
                let seg: libc::c_int = GSO_SEG as libc::c_int;
                // SAFETY: UDP_SEGMENT (103) at SOL_UDP (17), an int.
                let r = unsafe { libc::setsockopt(sock.as_raw_fd(), 17, 103, (&seg as *const libc::c_int).cast(), 4) };
                check!(r == 0, "UDP_SEGMENT: errno {}", errno());
                (sock, payload)
            }
            _ => return Err(format!("unknown direction {dir}")),
        };
        let mut buf = vec![0u8; 70000];
        while t.read_timeout(&mut buf, Duration::from_millis(50)).is_ok() {}
        Ok(GsoSide { driver, t, sock, data, dst: format!("10.{net}.0.2:9"), ns: 0, count: 0 })
    }

    /// Moves `n` payloads, checking each; adds their time if `timed`.
    fn run(&mut self, dir: &str, n: u32, buf: &mut [u8], timed: bool) -> Result<(), String> {
        let segs = GSO_PAYLOAD.div_ceil(GSO_SEG);
        let t0 = Instant::now();
        for i in 0..n {
            if dir == "write" {
                check!(self.t.write(&self.data) == Ok(self.data.len()), "{}: write {i}", self.driver);
                for s in 0..segs {
                    let m = self.sock.recv(buf).map_err(|e| format!("{}: write {i}, datagram {s}: {e}", self.driver))?;
                    check!(m == GSO_SEG.min(GSO_PAYLOAD - s * GSO_SEG), "{}: write {i}, datagram {s}: {m} bytes", self.driver);
                }
            } else {
                self.sock.send_to(&self.data, &self.dst).map_err(|e| format!("{}: send {i}: {e}", self.driver))?;
                let m = self.t.read(buf).map_err(|e| format!("{}: read {i}: {e}", self.driver))?;
                let h = Vnet::parse(buf);
                check!(m == VNET_HDR_LEN + 28 + GSO_PAYLOAD && h.gso_type == GSO_UDP_L4, "{}: read {i}: {m} bytes, {h:?}", self.driver);
            }
        }
        if timed {
            self.ns += t0.elapsed().as_nanos();
            self.count += n;
        }
        Ok(())
    }
}

/// `rtun bench-gso DIR COUNT CHUNK`: bytes per guest-second through a TUN
/// device with the vnet header, 64000-byte UDP payloads as single GSO
/// packets (gso_size 1400), rust_tun and C tun side by side in one process.
/// `write`: each write is one UDP GSO packet, segmented by the stack and
/// received (46 datagrams) by a local socket before the next. `read`: a
/// local socket sends each payload with `UDP_SEGMENT` 1400 through the
/// device (USO on), and the reader takes it as one super-packet.
///
/// The drivers take turns every CHUNK payloads (alternating which goes
/// first), COUNT payloads each: a 64 KB payload's cost depends on the page
/// allocator's state (whether its high-order pages come from the per-CPU
/// lists), which drifts between a few levels about 0.7 % apart and stays
/// for hundreds of payloads; turns this short give both drivers the same
/// states. One thread, on CPU 1; prints one `BENCH gso` line per driver.
pub fn bench_gso(dir: &str, count: u32, chunk: u32) -> Result<String, String> {
    check!(chunk > 0 && count % chunk == 0, "COUNT must be a multiple of CHUNK");
    pin_to_cpu(1)?;
    let mut sides = [
        GsoSide::new("rust_tun", "/dev/net/rust_tun", "bgr0", 45, dir)?,
        GsoSide::new("tun", "/dev/net/tun", "bgc0", 46, dir)?,
    ];
    let mut buf = vec![0u8; 70000];
    // Warm-up, untimed: caches and slabs grow on the first payloads.
    for side in sides.iter_mut() {
        side.run(dir, 2 * chunk, &mut buf, false)?;
    }
    // scripts/profile.sh: a `sync()` around each turn marks it for the
    // instruction-counting plugin.
    let marks = std::env::var_os("RTUN_PROF_SYNC").is_some();
    for c in 0..count / chunk {
        let order = if c % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            if marks {
                // SAFETY: No arguments.
                unsafe { libc::sync() };
            }
            sides[i].run(dir, chunk, &mut buf, true)?;
            if marks {
                // SAFETY: No arguments.
                unsafe { libc::sync() };
            }
        }
    }
    let lines: Vec<String> = sides
        .iter()
        .map(|s| {
            let bytes = GSO_PAYLOAD as f64 * f64::from(s.count);
            let ns = s.ns as f64;
            format!(
                "BENCH gso driver={} dir={dir} count={} bytes={bytes:.0} ns={ns:.0} bytes_per_sec={:.0}",
                s.driver,
                s.count,
                bytes * 1e9 / ns
            )
        })
        .collect();
    Ok(lines.join("\n"))
}

/// Stack-to-reader UDP GSO: a local `UDP_SEGMENT` sender's datagram reaches
/// the reader as one USO super-packet with `virtio_net_hdr_from_skb()`'s
/// header, bytes intact, over IPv4 and IPv6 (`NEEDS_CSUM` from the
/// transport header). (A VLAN device on a TAP, where `csum_start` would
/// count the tag put back in the frame, needs `CONFIG_VLAN_8021Q`, which
/// the test kernels do not build.)
pub fn t_vnet_gso_udp_read(n: Node) -> TestResult {
    const SEG: u16 = 1200;
    const TUN_F_USO4: libc::c_ulong = 0x20;
    const TUN_F_USO6: libc::c_ulong = 0x40;
    let data: Vec<u8> = (0..6000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    // Sends `data` in one `UDP_SEGMENT` send, reads the super-packet; checks
    // the header and returns the frame after it.
    let one = |t: &Tun, sock: &std::net::UdpSocket, dst: &str, l3: usize| -> Result<(), String> {
        let seg: libc::c_int = SEG.into();
        // SAFETY: UDP_SEGMENT (103) at SOL_UDP (17), an int.
        let r = unsafe { libc::setsockopt(sock.as_raw_fd(), 17, 103, (&seg as *const libc::c_int).cast(), 4) };
        check!(r == 0, "UDP_SEGMENT: errno {}", errno());
        sock.send_to(&data, dst).map_err(|e| format!("send: {e}"))?;
        let mut buf = vec![0u8; 70000];
        let want = VNET_HDR_LEN + l3 + 8 + data.len();
        let t0 = Instant::now();
        loop {
            check!(t0.elapsed() < Duration::from_secs(5), "no {want}-byte super-packet within 5 s");
            let Ok(m) = t.read_timeout(&mut buf, Duration::from_millis(500)) else { continue };
            if m != want {
                continue; // neighbour discovery, router solicitations
            }
            let h = Vnet::parse(&buf);
            let csum_start = l3 as u16;
            check!(
                h.gso_type == GSO_UDP_L4 && h.gso_size == SEG && h.flags == F_NEEDS_CSUM
                    && h.csum_start == csum_start && h.csum_offset == 6,
                "header {h:?}: want UDP_L4, gso_size {SEG}, NEEDS_CSUM at {csum_start}+6"
            );
            check!(usize::from(h.hdr_len) >= l3 + 8 && usize::from(h.hdr_len) <= m - VNET_HDR_LEN, "hdr_len {} out of the frame", h.hdr_len);
            check!(buf[m - data.len()..m] == data[..], "payload differs");
            return Ok(());
        }
    };

    let t = tun_vnet(n, "rt-vu0", IFF_TUN | IFF_NO_PI)?;
    ioctl_val(t.fd(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6).map_err(|e| format!("TUNSETOFFLOAD: {e}"))?;
    ptp_up("rt-vu0", "10.89.0.1", "10.89.0.2")?;
    let sock = std::net::UdpSocket::bind("10.89.0.1:7100").map_err(|e| e.to_string())?;
    one(&t, &sock, "10.89.0.2:9", 20).map_err(|e| format!("IPv4: {e}"))?;

    write_file("/proc/sys/net/ipv6/conf/rt-vu0/disable_ipv6", "0")?;
    write_file("/proc/sys/net/ipv6/conf/rt-vu0/accept_dad", "0")?;
    sh("ip -6 addr add fd89::1/64 dev rt-vu0")?;
    let sock6 = settled("fd89::1", || std::net::UdpSocket::bind("[fd89::1]:7100"))?;
    one(&t, &sock6, "[fd89::2]:9", 40).map_err(|e| format!("IPv6: {e}"))?;
    Ok(())
}

/// GSO writes over IPv6: one UDP GSO packet (`GSO_UDP_L4`, `NEEDS_CSUM`
/// with the IPv6 pseudo-header sum) reaches a local IPv6 socket as six
/// datagrams with the bytes intact.
pub fn t_vnet_gso_udp6_write(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-v6g0", IFF_TUN | IFF_NO_PI)?;
    // IPv6 on, then no duplicate address detection (a tentative address
    // cannot be bound); binds still retry while the address settles.
    write_file("/proc/sys/net/ipv6/conf/rt-v6g0/disable_ipv6", "0")?;
    write_file("/proc/sys/net/ipv6/conf/rt-v6g0/accept_dad", "0")?;
    sh("ip -6 addr add fd87::1/64 dev rt-v6g0 && ip link set rt-v6g0 up")?;
    let sock = settled("fd87::1", || std::net::UdpSocket::bind("[fd87::1]:9000"))?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let me: [u8; 16] = "fd87::1".parse::<std::net::Ipv6Addr>().unwrap().octets();
    let peer: [u8; 16] = "fd87::2".parse::<std::net::Ipv6Addr>().unwrap().octets();
    let data: Vec<u8> = (0..6000u32).map(|i| (i * 13 + i / 97) as u8).collect();
    let mut u = pkt::udp(5555, 9000, &data);
    // The IPv6 pseudo-header: addresses, upper-layer length, next header.
    let mut ph = Vec::with_capacity(40);
    ph.extend_from_slice(&peer);
    ph.extend_from_slice(&me);
    ph.extend_from_slice(&(u.len() as u32).to_be_bytes());
    ph.extend_from_slice(&[0, 0, 0, pkt::IPPROTO_UDP]);
    let s = !pkt::csum(&ph);
    u[6..8].copy_from_slice(&s.to_be_bytes());
    let p = pkt::ipv6(peer, me, pkt::IPPROTO_UDP, &u);
    let h = Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_UDP_L4, hdr_len: 48, gso_size: 1000, csum_start: 40, csum_offset: 6 };
    gso_write_six(&t, &with_hdr(&h, &p), &sock, &data)?;
    Ok(())
}

/// TCP GSO writes: after a handshake written through the device, one
/// `GSO_TCPV4` write of 5000 bytes (`gso_size` 1000, `NEEDS_CSUM`) is read
/// whole from the accepted local socket, bytes intact; the TCP state
/// machine takes it as the stack takes a GRO super-packet.
pub fn t_vnet_gso_tcp_write(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vt0", IFF_TUN | IFF_NO_PI)?;
    ptp_up("rt-vt0", "10.88.0.1", "10.88.0.2")?;
    let (me, peer) = ([10, 88, 0, 1], [10, 88, 0, 2]);
    let listener = std::net::TcpListener::bind("10.88.0.1:9100").map_err(|e| e.to_string())?;
    // A port of its own per run: the previous run's connection may still
    // be closing (no peer answers its FIN).
    let sport = 40000 + suite_serial();
    // SYN with MSS 1000.
    let syn = tcp_seg(peer, me, sport, 9100, 5000, 0, 0x02, &[2, 4, 0x03, 0xe8], &[]);
    check!(t.write(&with_hdr(&Vnet::default(), &syn)).is_ok(), "SYN write");
    let synack = read_until(&t, Duration::from_secs(5), |p| {
        p.len() >= VNET_HDR_LEN + 40 && p[VNET_HDR_LEN + 9] == 6 && p[VNET_HDR_LEN + 33] & 0x12 == 0x12
    })?;
    let ip = &synack[VNET_HDR_LEN..];
    let isn = u32::from_be_bytes([ip[24], ip[25], ip[26], ip[27]]);
    let ack = tcp_seg(peer, me, sport, 9100, 5001, isn.wrapping_add(1), 0x10, &[], &[]);
    check!(t.write(&with_hdr(&Vnet::default(), &ack)).is_ok(), "ACK write");
    listener.set_nonblocking(false).map_err(|e| e.to_string())?;
    let (conn, _) = listener.accept().map_err(|e| format!("accept: {e}"))?;
    conn.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;

    let data: Vec<u8> = (0..5000u32).map(|i| (i * 31 + i / 7) as u8).collect();
    let mut seg = tcp_seg(peer, me, sport, 9100, 5001, isn.wrapping_add(1), 0x18, &[], &data);
    // NEEDS_CSUM: the checksum field holds the pseudo-header sum.
    let s = pseudo_sum(peer, me, 6, 20 + data.len());
    seg[36..38].copy_from_slice(&s.to_be_bytes());
    let h = Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_TCPV4, hdr_len: 40, gso_size: 1000, csum_start: 20, csum_offset: 16 };
    tso_write_read(&t, &with_hdr(&h, &seg), conn, &data)
}

/// Writes `w`, one TCP GSO packet of `data`, and reads it whole from the
/// accepted connection `conn`, bytes intact, and nothing after it (no
/// duplicate segments: the next read times out).
pub fn tso_write_read(t: &Tun, w: &[u8], mut conn: std::net::TcpStream, data: &[u8]) -> TestResult {
    check!(t.write(w) == Ok(w.len()), "TSO write: {:?}", t.write(w));
    let mut got = vec![0u8; data.len()];
    use std::io::Read;
    conn.read_exact(&mut got).map_err(|e| format!("read from the accepted socket: {e}"))?;
    check!(got == data, "the bytes read are not the payload");
    let mut more = [0u8; 16];
    check!(conn.read(&mut more).is_err(), "more data after the payload");
    Ok(())
}

/// TCP GSO writes over IPv6 (`GSO_TCPV6`), as [`t_vnet_gso_tcp_write`].
pub fn t_vnet_gso_tcp6_write(n: Node) -> TestResult {
    const GSO_TCPV6: u8 = 4;
    let t = tun_vnet(n, "rt-vt6", IFF_TUN | IFF_NO_PI)?;
    // IPv6 on, then no duplicate address detection (a tentative address
    // cannot be bound); binds still retry while the address settles.
    write_file("/proc/sys/net/ipv6/conf/rt-vt6/disable_ipv6", "0")?;
    write_file("/proc/sys/net/ipv6/conf/rt-vt6/accept_dad", "0")?;
    sh("ip -6 addr add fd88::1/64 dev rt-vt6 && ip link set rt-vt6 up")?;
    let me: [u8; 16] = "fd88::1".parse::<std::net::Ipv6Addr>().unwrap().octets();
    let peer: [u8; 16] = "fd88::2".parse::<std::net::Ipv6Addr>().unwrap().octets();
    let listener = settled("fd88::1", || std::net::TcpListener::bind("[fd88::1]:9100"))?;
    let sport = 41000 + suite_serial();
    let syn = tcp6_seg(peer, me, sport, 9100, 5000, 0, 0x02, &[2, 4, 0x03, 0xe8], &[], false);
    check!(t.write(&with_hdr(&Vnet::default(), &syn)).is_ok(), "SYN write");
    let synack = read_until(&t, Duration::from_secs(5), |p| {
        p.len() >= VNET_HDR_LEN + 60 && p[VNET_HDR_LEN] >> 4 == 6 && p[VNET_HDR_LEN + 6] == 6 && p[VNET_HDR_LEN + 53] & 0x12 == 0x12
    })?;
    let tcp = &synack[VNET_HDR_LEN + 40..];
    let isn = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]);
    let ack = tcp6_seg(peer, me, sport, 9100, 5001, isn.wrapping_add(1), 0x10, &[], &[], false);
    check!(t.write(&with_hdr(&Vnet::default(), &ack)).is_ok(), "ACK write");
    let (conn, _) = listener.accept().map_err(|e| format!("accept: {e}"))?;
    conn.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;

    let data: Vec<u8> = (0..5000u32).map(|i| (i * 17 + i / 11) as u8).collect();
    let seg = tcp6_seg(peer, me, sport, 9100, 5001, isn.wrapping_add(1), 0x18, &[], &data, true);
    let h = Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_TCPV6, hdr_len: 60, gso_size: 1000, csum_start: 40, csum_offset: 16 };
    tso_write_read(&t, &with_hdr(&h, &seg), conn, &data)
}
