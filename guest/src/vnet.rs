//! The virtio-net header and offloads (issue "virtio-net header"), each
//! test against tun and rust_tun with the same expectations: the header on
//! both paths and its size, malformed headers, checksum offload and GSO
//! writes delivered to local sockets with the bytes intact, and GSO
//! super-packets from the stack to the reader once `TUNSETOFFLOAD` allows
//! them.

use super::*;

const VNET_HDR_LEN: usize = 10;
const F_NEEDS_CSUM: u8 = 1;
const F_DATA_VALID: u8 = 2;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_UDP_L4: u8 = 5;
const TUN_F_CSUM: libc::c_ulong = 0x01;
const TUN_F_TSO4: libc::c_ulong = 0x02;

/// A `struct virtio_net_hdr` (little-endian fields, as on x86_64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Vnet {
    flags: u8,
    gso_type: u8,
    hdr_len: u16,
    gso_size: u16,
    csum_start: u16,
    csum_offset: u16,
}

impl Vnet {
    fn bytes(&self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
        b
    }

    fn parse(b: &[u8]) -> Vnet {
        let u = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        Vnet { flags: b[0], gso_type: b[1], hdr_len: u(2), gso_size: u(4), csum_start: u(6), csum_offset: u(8) }
    }
}

fn with_hdr(h: &Vnet, p: &[u8]) -> Vec<u8> {
    let mut v = h.bytes().to_vec();
    v.extend_from_slice(p);
    v
}

/// The ones' complement sum of the IPv4 pseudo-header (not inverted):
/// what a writer puts in the L4 checksum field for `NEEDS_CSUM`.
fn pseudo_sum(src: [u8; 4], dst: [u8; 4], proto: u8, len: usize) -> u16 {
    let mut b = Vec::with_capacity(12);
    b.extend_from_slice(&src);
    b.extend_from_slice(&dst);
    b.extend_from_slice(&[0, proto]);
    b.extend_from_slice(&(len as u16).to_be_bytes());
    !pkt::csum(&b)
}

/// A UDP/IPv4 packet whose UDP checksum is left to the receiver's side
/// (`NEEDS_CSUM`: the field holds the pseudo-header sum).
fn udp_partial(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, data: &[u8]) -> Vec<u8> {
    let mut u = pkt::udp(sport, dport, data);
    let s = pseudo_sum(src, dst, pkt::IPPROTO_UDP, u.len());
    u[6..8].copy_from_slice(&s.to_be_bytes());
    pkt::ipv4(src, dst, pkt::IPPROTO_UDP, &u)
}

fn tun_vnet(n: Node, name: &str, flags: u16) -> Result<Tun, String> {
    Tun::create(n.path, name, flags | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF {flags:#x}|IFF_VNET_HDR: {e}"))
}

/// The header on both paths: a write carries one before the frame, a read
/// gets one; with a larger `TUNSETVNETHDRSZ` the bytes past the legacy
/// header are skipped, not written; a read buffer shorter than the header
/// is `EINVAL`.
pub fn t_vnet_basic(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vn0", IFF_TAP | IFF_NO_PI)?;
    check!(t.getiff().is_ok_and(|(_, f)| f & IFF_VNET_HDR != 0), "TUNGETIFF without IFF_VNET_HDR");
    sh("ip link set rt-vn0 up")?;
    let frame = pkt::eth([2, 0, 0, 0, 0, 1], [2, 0xcc, 0, 0, 0, 1], 0x88b5, &[0x11; 50]);
    let before = counters("rt-vn0")?;
    let w = with_hdr(&Vnet::default(), &frame);
    check!(t.write(&w) == Ok(w.len()), "write with a header: {:?}", t.write(&w));
    check!(counters("rt-vn0")?.rx_packets == before.rx_packets + 1, "written frame not received");
    check!(counters("rt-vn0")?.rx_bytes == before.rx_bytes + frame.len() as u64, "rx_bytes count the header");
    // A frame from the stack: a header of zeros but for DATA_VALID, then
    // the frame.
    let send = |f: &[u8]| -> TestResult {
        // SAFETY: Plain data.
        let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sa.sll_family = libc::AF_PACKET as u16;
        sa.sll_ifindex = crate::nl::ifindex("rt-vn0");
        sa.sll_halen = 6;
        // SAFETY: A socket of ours and valid buffers.
        let r = unsafe {
            let s = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
            let r = libc::sendto(s, f.as_ptr().cast(), f.len(), 0, (&sa as *const libc::sockaddr_ll).cast(), std::mem::size_of_val(&sa) as u32);
            libc::close(s);
            r
        };
        check!(r == f.len() as isize, "AF_PACKET send: errno {}", errno());
        Ok(())
    };
    let mut buf = vec![0xaau8; 2048];
    while t.read_timeout(&mut buf, Duration::from_millis(50)).is_ok() {}
    send(&frame)?;
    buf.fill(0xaa);
    let got = t.read_timeout(&mut buf, Duration::from_secs(2)).map_err(|e| format!("read: {e}"))?;
    check!(got == VNET_HDR_LEN + frame.len(), "read {got} bytes");
    let h = Vnet::parse(&buf);
    check!(h.gso_type == GSO_NONE && h.flags & !F_DATA_VALID == 0, "header {h:?}");
    check!(buf[VNET_HDR_LEN..got] == frame[..], "frame differs");
    // A 12-byte header: two bytes skipped both ways.
    let mut sz: i32 = 12;
    ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut sz).map_err(|e| format!("TUNSETVNETHDRSZ: {e}"))?;
    let mut w = Vnet::default().bytes().to_vec();
    w.extend_from_slice(&[0x77, 0x77]);
    w.extend_from_slice(&frame);
    check!(t.write(&w) == Ok(w.len()), "write with a 12-byte header");
    send(&frame)?;
    buf.fill(0xaa);
    let got = t.read_timeout(&mut buf, Duration::from_secs(2)).map_err(|e| format!("read: {e}"))?;
    check!(got == 12 + frame.len(), "read {got} bytes with a 12-byte header");
    check!(buf[10..12] == [0xaa, 0xaa], "the 2 bytes past the legacy header were written: {:?}", &buf[10..12]);
    check!(buf[12..got] == frame[..], "frame differs after a 12-byte header");
    send(&frame)?;
    let mut small = [0u8; 8];
    thread::sleep(Duration::from_millis(100));
    expect_errno!(t.read(&mut small), libc::EINVAL, "read into 8 bytes with a 12-byte header");
    // Too short a write for the header.
    expect_errno!(t.write(&[0u8; 8]), libc::EINVAL, "write shorter than the header");
    Ok(())
}

/// Malformed headers get tun's errno, count a frame error where the
/// kernel's header check refuses them, never WARN (the runner checks the
/// log), and leave the device working.
pub fn t_vnet_malformed(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vm0", IFF_TUN | IFF_NO_PI)?;
    ptp_up("rt-vm0", "10.85.0.1", "10.85.0.2")?;
    let sock = std::net::UdpSocket::bind("10.85.0.1:9000").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| e.to_string())?;
    let (me, peer) = ([10, 85, 0, 1], [10, 85, 0, 2]);
    let p = udp_partial(peer, me, 5555, 9000, &[7u8; 3000]);
    let frame_errors = || stat("rt-vm0", "rx_frame_errors");
    let cases: [(&str, Vnet, bool); 6] = [
        ("hdr_len past the packet", Vnet { hdr_len: 4000, ..Default::default() }, false),
        ("csum past the packet", Vnet { flags: F_NEEDS_CSUM, csum_start: 3030, csum_offset: 6, ..Default::default() }, false),
        ("unknown gso_type", Vnet { gso_type: 0x42, hdr_len: 28, gso_size: 1000, ..Default::default() }, true),
        (
            "UDP GSO without the checksum flag",
            Vnet { gso_type: GSO_UDP_L4, hdr_len: 28, gso_size: 1000, ..Default::default() },
            true,
        ),
        (
            "TCP GSO with the checksum at UDP's place",
            Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_TCPV4, hdr_len: 28, gso_size: 1000, csum_start: 20, csum_offset: 6 },
            true,
        ),
        (
            "gso_size GSO_BY_FRAGS",
            Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_UDP_L4, hdr_len: 28, gso_size: 0xffff, csum_start: 20, csum_offset: 6 },
            true,
        ),
    ];
    for (what, h, counted) in cases {
        let before = frame_errors()?;
        let drops = stat("rt-vm0", "rx_dropped")?;
        expect_errno!(t.write(&with_hdr(&h, &p)), libc::EINVAL, what);
        let after = frame_errors()?;
        check!(after == before + u64::from(counted), "{what}: rx_frame_errors {before} -> {after}");
        check!(stat("rt-vm0", "rx_dropped")? == drops, "{what}: counted as a drop");
    }
    // Still working: the same packet with a sound header.
    let h = Vnet { flags: F_NEEDS_CSUM, csum_start: 20, csum_offset: 6, ..Default::default() };
    let w = with_hdr(&h, &p);
    check!(t.write(&w) == Ok(w.len()), "valid write after the malformed ones");
    let mut buf = vec![0u8; 4096];
    let (got, _) = sock.recv_from(&mut buf).map_err(|e| format!("recv: {e}"))?;
    check!(got == 3000 && buf[..got].iter().all(|&b| b == 7), "datagram of {got} bytes");
    Ok(())
}

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
fn gso_write_six(t: &Tun, w: &[u8], sock: &std::net::UdpSocket, data: &[u8]) -> TestResult {
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

/// A TCP header with `opts` and `data`, its checksum field zero.
fn tcp_hdr(sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, opts: &[u8], data: &[u8]) -> Vec<u8> {
    let hl = 20 + opts.len();
    let mut s = vec![0u8; hl];
    s[0..2].copy_from_slice(&sport.to_be_bytes());
    s[2..4].copy_from_slice(&dport.to_be_bytes());
    s[4..8].copy_from_slice(&seq.to_be_bytes());
    s[8..12].copy_from_slice(&ack.to_be_bytes());
    s[12] = ((hl / 4) as u8) << 4;
    s[13] = flags;
    s[14..16].copy_from_slice(&65535u16.to_be_bytes());
    s[20..].copy_from_slice(opts);
    s.extend_from_slice(data);
    s
}

/// A TCP segment from `src:sport` to `dst:dport` with a correct checksum.
#[allow(clippy::too_many_arguments)]
fn tcp_seg(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, opts: &[u8], data: &[u8]) -> Vec<u8> {
    let mut s = tcp_hdr(sport, dport, seq, ack, flags, opts, data);
    let mut ph = Vec::new();
    ph.extend_from_slice(&src);
    ph.extend_from_slice(&dst);
    ph.extend_from_slice(&[0, 6]);
    ph.extend_from_slice(&(s.len() as u16).to_be_bytes());
    ph.extend_from_slice(&s);
    let c = pkt::csum(&ph);
    s[16..18].copy_from_slice(&c.to_be_bytes());
    pkt::ipv4(src, dst, 6, &s)
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

/// The offloads and the header size are the device's: they survive the
/// last file's detach from a persistent device, and `TUNSETOFFLOAD` checks
/// its flags as tun.c (TSO without checksum offload is refused only by
/// meaning nothing; unknown bits are `EINVAL`).
pub fn t_vnet_settings_persist(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vp0", IFF_TUN | IFF_NO_PI)?;
    let mut sz: i32 = 14;
    ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut sz).map_err(|e| format!("TUNSETVNETHDRSZ: {e}"))?;
    ioctl_val(t.fd(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4).map_err(|e| format!("TUNSETOFFLOAD: {e}"))?;
    expect_errno!(ioctl_val(t.fd(), TUNSETOFFLOAD, 0x100), libc::EINVAL, "TUNSETOFFLOAD with an unknown bit");
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    drop(t);
    let t = tun_vnet(n, "rt-vp0", IFF_TUN | IFF_NO_PI)?;
    let mut got: i32 = 0;
    ioctl_ptr(t.fd(), TUNGETVNETHDRSZ, &mut got).map_err(|e| format!("TUNGETVNETHDRSZ: {e}"))?;
    check!(got == 14, "header size after re-attach: {got}");
    // The offloads are still on: a local sender's checksum is left partial
    // (NEEDS_CSUM) in what the reader gets.
    ptp_up("rt-vp0", "10.88.0.1", "10.88.0.2")?;
    let mut buf = vec![0u8; 4096];
    while t.read_timeout(&mut buf, Duration::from_millis(50)).is_ok() {}
    let s = std::net::UdpSocket::bind("10.88.0.1:0").map_err(|e| e.to_string())?;
    s.send_to(&[1u8; 100], "10.88.0.2:9").map_err(|e| e.to_string())?;
    let p = read_until(&t, Duration::from_secs(3), |p| p.len() > 14 + 20 && p[14 + 9] == 17)?;
    let h = Vnet::parse(&p);
    check!(h.flags & F_NEEDS_CSUM != 0 && h.csum_start == 20 && h.csum_offset == 6, "header after re-attach {h:?}");
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    Ok(())
}

/// One driver's side of `rtun bench-gso`: a TUN device with the vnet
/// header on its own /24, the local socket, what a payload needs, and the
/// guest nanoseconds its payloads took so far.
struct GsoSide {
    driver: &'static str,
    t: Tun,
    sock: std::net::UdpSocket,
    /// write: the GSO packet written; read: the payload sent.
    data: Vec<u8>,
    dst: String,
    ns: u128,
    count: u32,
}

const GSO_PAYLOAD: usize = 64000;
const GSO_SEG: usize = 1400;

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
    let sock6 = settled(|| std::net::UdpSocket::bind("[fd89::1]:7100"))?;
    one(&t, &sock6, "[fd89::2]:9", 40).map_err(|e| format!("IPv6: {e}"))?;
    Ok(())
}

/// `IFF_NAPI`: writes go through the queue's NAPI context (GRO) to local
/// sockets, every one delivered and counted; `TUNGETIFF` reports the flag;
/// a detached queue's writes fail with `EBUSY` (nothing delivered, not a
/// drop) and work again once it is attached; the device statistics
/// balance; closing queues with packets written leaves nothing behind.
pub fn t_napi(n: Node) -> TestResult {
    let flags = IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE | IFF_NAPI;
    let q0 = Tun::create(n.path, "rt-napi0", flags).map_err(|e| format!("TUNSETIFF IFF_NAPI: {e}"))?;
    let q1 = Tun::create(n.path, "rt-napi0", flags).map_err(|e| format!("second queue: {e}"))?;
    let (_, got) = q0.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
    check!(got & IFF_NAPI != 0, "TUNGETIFF {got:#x} lacks IFF_NAPI");
    ptp_up("rt-napi0", "10.87.0.1", "10.87.0.2")?;
    let sock = std::net::UdpSocket::bind("10.87.0.1:9000").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let rx0 = stat("rt-napi0", "rx_packets")?;
    let (me, peer) = ([10, 87, 0, 1], [10, 87, 0, 2]);
    let count = 300u32;
    let mut buf = vec![0u8; 2048];
    for i in 0..count {
        let data = i.to_be_bytes().repeat(1 + (i % 50) as usize);
        let p = pkt::ipv4(peer, me, pkt::IPPROTO_UDP, &pkt::udp(5555, 9000, &data));
        let q = if i % 2 == 0 { &q0 } else { &q1 };
        check!(q.write(&p) == Ok(p.len()), "write {i}: {:?}", q.write(&p));
        let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("datagram {i}: {e}"))?;
        check!(buf[..m] == data[..], "datagram {i}: {m} bytes, not the payload");
    }
    check!(stat("rt-napi0", "rx_packets")? - rx0 == u64::from(count), "rx_packets moved by {}", stat("rt-napi0", "rx_packets")? - rx0);

    setqueue(&q1, IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    let p = pkt::ipv4(peer, me, pkt::IPPROTO_UDP, &pkt::udp(5555, 9000, b"detached"));
    expect_errno!(q1.write(&p), libc::EBUSY, "write on a detached NAPI queue");
    check!(sock.recv_from(&mut buf).is_err(), "a datagram from the detached queue arrived");
    setqueue(&q1, IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
    check!(q1.write(&p) == Ok(p.len()), "write after re-attach");
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("datagram after re-attach: {e}"))?;
    check!(&buf[..m] == b"detached", "datagram after re-attach: {m} bytes");
    check!(stat("rt-napi0", "rx_dropped")? == 0, "rx_dropped {}", stat("rt-napi0", "rx_dropped")?);

    // A burst written faster than the socket reads, then every file closed.
    for _ in 0..100 {
        let _ = q0.write(&p);
    }
    drop((q0, q1));
    check!(!link_exists("rt-napi0"), "device left after closing both NAPI queues");
    Ok(())
}

/// Retries `bind` for up to 3 s while it fails with `EADDRNOTAVAIL` (an
/// IPv6 address just added may not be usable yet).
fn settled<T>(mut bind: impl FnMut() -> std::io::Result<T>) -> Result<T, String> {
    let t0 = Instant::now();
    loop {
        match bind() {
            Ok(s) => return Ok(s),
            Err(e) if e.raw_os_error() == Some(libc::EADDRNOTAVAIL) && t0.elapsed() < Duration::from_secs(3) => {
                thread::sleep(Duration::from_millis(50))
            }
            Err(e) => return Err(format!("bind: {e}")),
        }
    }
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
    let sock = settled(|| std::net::UdpSocket::bind("[fd87::1]:9000"))?;
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
fn tso_write_read(t: &Tun, w: &[u8], mut conn: std::net::TcpStream, data: &[u8]) -> TestResult {
    check!(t.write(w) == Ok(w.len()), "TSO write: {:?}", t.write(w));
    let mut got = vec![0u8; data.len()];
    use std::io::Read;
    conn.read_exact(&mut got).map_err(|e| format!("read from the accepted socket: {e}"))?;
    check!(got == data, "the bytes read are not the payload");
    let mut more = [0u8; 16];
    check!(conn.read(&mut more).is_err(), "more data after the payload");
    Ok(())
}

/// A TCP segment over IPv6 from `src:sport` to `dst:dport`; its checksum
/// is the full one, or with `partial` the pseudo-header sum (`NEEDS_CSUM`).
#[allow(clippy::too_many_arguments)]
fn tcp6_seg(src: [u8; 16], dst: [u8; 16], sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, opts: &[u8], data: &[u8], partial: bool) -> Vec<u8> {
    let mut s = tcp_hdr(sport, dport, seq, ack, flags, opts, data);
    let mut ph = Vec::new();
    ph.extend_from_slice(&src);
    ph.extend_from_slice(&dst);
    ph.extend_from_slice(&(s.len() as u32).to_be_bytes());
    ph.extend_from_slice(&[0, 0, 0, 6]);
    let c = if partial {
        !pkt::csum(&ph)
    } else {
        ph.extend_from_slice(&s);
        pkt::csum(&ph)
    };
    s[16..18].copy_from_slice(&c.to_be_bytes());
    pkt::ipv6(src, dst, 6, &s)
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
    let listener = settled(|| std::net::TcpListener::bind("[fd88::1]:9100"))?;
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

/// `IFF_NAPI_FRAGS` (TAP, with `IFF_NAPI`, as root): each write's skb is
/// built in the queue's NAPI context as the writer's iovec is laid out
/// (the first segment linear, each further one a page fragment) and handed
/// to GRO at once. Frames written whole or split over segments reach a
/// local socket intact; an empty or over-page segment is `EINVAL`, more
/// segments than an skb has fragments `EMSGSIZE`, each counted as a drop;
/// `TUNGETIFF` reports both flags.
pub fn t_napi_frags(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-nf0", IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS)
        .map_err(|e| format!("TUNSETIFF IFF_NAPI_FRAGS: {e}"))?;
    let (_, got) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
    check!(got & (IFF_NAPI | IFF_NAPI_FRAGS) == IFF_NAPI | IFF_NAPI_FRAGS, "TUNGETIFF {got:#x}");
    sh("ip addr add 10.89.0.1/24 dev rt-nf0 && ip link set rt-nf0 up")?;
    let mac: Vec<u8> = sysfs("rt-nf0", "address").split(':').filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
    check!(mac.len() == 6, "address {:?}", sysfs("rt-nf0", "address"));
    let dst: [u8; 6] = mac[..6].try_into().unwrap();
    let sock = std::net::UdpSocket::bind("10.89.0.1:9200").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let frame = |data: &[u8]| {
        pkt::eth(dst, [2, 0, 0, 0, 0, 9], pkt::ETH_P_IP, &pkt::ipv4([10, 89, 0, 2], [10, 89, 0, 1], pkt::IPPROTO_UDP, &pkt::udp(5555, 9200, data)))
    };
    let rx0 = stat("rt-nf0", "rx_packets")?;
    let drop0 = stat("rt-nf0", "rx_dropped")?;
    let mut buf = vec![0u8; 4096];

    // Whole, in one segment.
    let data: Vec<u8> = (0..1200u32).map(|i| (i * 3) as u8).collect();
    let f = frame(&data);
    check!(t.write(&f) == Ok(f.len()), "one-segment write: {:?}", t.write(&f));
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("one-segment datagram: {e}"))?;
    check!(buf[..m] == data[..], "one-segment datagram: {m} bytes");

    // Headers, then the payload over two page fragments.
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 7 + 1) as u8).collect();
    let f = frame(&data);
    let hl = 14 + 20 + 8;
    let iov = [behaviour::iov(&f[..hl]), behaviour::iov(&f[hl..hl + 2000]), behaviour::iov(&f[hl + 2000..])];
    check!(behaviour::writev(t.fd(), &iov) == Ok(f.len()), "three-segment writev: {:?}", behaviour::writev(t.fd(), &iov));
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("three-segment datagram: {e}"))?;
    check!(buf[..m] == data[..], "three-segment datagram: {m} bytes");
    check!(stat("rt-nf0", "rx_packets")? == rx0 + 2, "rx_packets moved by {}", stat("rt-nf0", "rx_packets")? - rx0);

    // Malformed layouts.
    let empty = [behaviour::iov(&f[..hl]), behaviour::iov(&f[hl..hl]), behaviour::iov(&f[hl..])];
    expect_errno!(behaviour::writev(t.fd(), &empty), libc::EINVAL, "an empty segment");
    let big = vec![0u8; 5000];
    let over = [behaviour::iov(&f[..hl]), behaviour::iov(&big)];
    expect_errno!(behaviour::writev(t.fd(), &over), libc::EINVAL, "a segment over a page");
    let small = [1u8; 8];
    let mut many = vec![behaviour::iov(&f[..hl])];
    many.extend((0..18).map(|_| behaviour::iov(&small)));
    expect_errno!(behaviour::writev(t.fd(), &many), libc::EMSGSIZE, "19 segments");
    check!(stat("rt-nf0", "rx_dropped")? == drop0 + 3, "rx_dropped moved by {}", stat("rt-nf0", "rx_dropped")? - drop0);
    check!(sock.recv_from(&mut buf).is_err(), "a malformed write was delivered");
    // And the queue still works.
    let f = frame(b"after");
    check!(t.write(&f) == Ok(f.len()), "write after the errors");
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("datagram after the errors: {e}"))?;
    check!(&buf[..m] == b"after", "datagram after the errors: {m} bytes");
    Ok(())
}

/// A user page whose first touch faults until the test says so
/// (userfaultfd, `UFFDIO_REGISTER_MODE_MISSING`): a write from it sleeps in
/// the kernel's copy for as long as the test wants.
struct SlowPage {
    uffd: OwnedFd,
    addr: *mut u8,
}

// The `uffdio_*` structs of <linux/userfaultfd.h> and their ioctls.
#[repr(C)]
struct UffdioApi {
    api: u64,
    features: u64,
    ioctls: u64,
}
#[repr(C)]
struct UffdioRange {
    start: u64,
    len: u64,
}
#[repr(C)]
struct UffdioRegister {
    range: UffdioRange,
    mode: u64,
    ioctls: u64,
}
#[repr(C)]
struct UffdioCopy {
    dst: u64,
    src: u64,
    len: u64,
    mode: u64,
    copy: i64,
}
const UFFD_API: u64 = 0xaa;
const UFFDIO_API: u64 = 0xc018_aa3f;
const UFFDIO_REGISTER: u64 = 0xc020_aa00;
const UFFDIO_COPY: u64 = 0xc028_aa03;
const UFFDIO_REGISTER_MODE_MISSING: u64 = 1;
const UFFD_EVENT_PAGEFAULT: u8 = 0x12;
const PAGE: usize = 4096;

impl SlowPage {
    /// `Err("SKIP: ...")` on a kernel without userfaultfd.
    fn new() -> Result<SlowPage, String> {
        // SAFETY: A syscall with flags only.
        let fd = unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | libc::O_NONBLOCK) };
        if fd < 0 {
            let e = errno();
            if e == libc::ENOSYS {
                skip!("kernel without CONFIG_USERFAULTFD");
            }
            return Err(format!("userfaultfd: errno {e}"));
        }
        // SAFETY: A new fd of ours.
        let uffd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
        let mut api = UffdioApi { api: UFFD_API, features: 0, ioctls: 0 };
        ioctl_ptr(uffd.as_raw_fd(), UFFDIO_API, &mut api).map_err(|e| format!("UFFDIO_API: errno {e}"))?;
        // SAFETY: A fresh anonymous mapping of one page.
        let addr = unsafe {
            libc::mmap(std::ptr::null_mut(), PAGE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        check!(addr != libc::MAP_FAILED, "mmap: errno {}", errno());
        let mut reg = UffdioRegister {
            range: UffdioRange { start: addr as u64, len: PAGE as u64 },
            mode: UFFDIO_REGISTER_MODE_MISSING,
            ioctls: 0,
        };
        ioctl_ptr(uffd.as_raw_fd(), UFFDIO_REGISTER, &mut reg).map_err(|e| format!("UFFDIO_REGISTER: errno {e}"))?;
        Ok(SlowPage { uffd, addr: addr as *mut u8 })
    }

    /// Waits for the page's first fault (a thread is now asleep on it).
    fn wait_fault(&self, timeout: Duration) -> Result<(), String> {
        let r = poll_fd(self.uffd.as_raw_fd(), libc::POLLIN, timeout).map_err(|e| format!("poll uffd: errno {e}"))?;
        check!(r & libc::POLLIN != 0, "no fault on the slow page within {timeout:?}");
        let mut msg = [0u8; 32];
        let n = fd_read(self.uffd.as_raw_fd(), &mut msg).map_err(|e| format!("read uffd: errno {e}"))?;
        check!(n == 32 && msg[0] == UFFD_EVENT_PAGEFAULT, "uffd message {:?}", &msg[..n]);
        Ok(())
    }

    /// Resolves the fault with `data` (at most a page): the sleeper goes on.
    fn release(&self, data: &[u8]) -> Result<(), String> {
        let mut page = vec![0u8; PAGE];
        page[..data.len()].copy_from_slice(data);
        let mut c = UffdioCopy { dst: self.addr as u64, src: page.as_ptr() as u64, len: PAGE as u64, mode: 0, copy: 0 };
        ioctl_ptr(self.uffd.as_raw_fd(), UFFDIO_COPY, &mut c).map_err(|e| format!("UFFDIO_COPY: errno {e}"))?;
        Ok(())
    }
}

impl Drop for SlowPage {
    fn drop(&mut self) {
        // SAFETY: Our mapping; nothing refers to it any more.
        unsafe { libc::munmap(self.addr as *mut _, PAGE) };
    }
}

fn wait_gone(path: &str, timeout: Duration) -> bool {
    let end = Instant::now() + timeout;
    while std::path::Path::new(path).exists() {
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Issue 18, bug 1: an `IFF_NAPI_FRAGS` write whose second segment faults
/// (slowly: userfaultfd) while the device is deleted. The delete runs the
/// device's `ndo_uninit` (the NAPI context's `__netif_napi_del()`, which
/// frees the context's frags skb) and then waits for the writer's device
/// reference; the fault is released only once the device's sysfs directory
/// (removed after `ndo_uninit`) is gone. The writer must then find the
/// device down or its context gone (`EIO`, `EBUSY`) and touch no freed
/// memory: on the code before the fix it copied into the skb the delete
/// had freed (KASAN: use-after-free in `skb_copy_datagram_from_iter`).
/// Needs userfaultfd (the debug kernel, where the suites run rust_tun
/// only). tun.c 6.12 has the same race: on the C node this is the upstream
/// report's reproducer (Documentation/rust_tun.rst, "IFF_NAPI_FRAGS and
/// device deletion"), run by hand: `scripts/run-guest.sh --kernel debug
/// scripts/guest/tests.sh napi_frags_delete_during_write`.
pub fn t_napi_frags_delete_during_write(n: Node) -> TestResult {
    let slow = SlowPage::new()?;
    let name = "rt-nfd0";
    let t = Tun::create(n.path, name, IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS)
        .map_err(|e| format!("TUNSETIFF IFF_NAPI_FRAGS: {e}"))?;
    sh(&format!("ip addr add 10.89.1.1/24 dev {name} && ip link set {name} up"))?;
    let payload = 600usize;
    let head = pkt::eth(
        [0xff; 6],
        [2, 0, 0, 0, 0, 9],
        pkt::ETH_P_IP,
        &pkt::ipv4([10, 89, 1, 2], [10, 89, 1, 1], pkt::IPPROTO_UDP, &pkt::udp(5555, 9201, &vec![0u8; payload])),
    );
    let hl = head.len() - payload;
    let fd = t.fd();
    let (head_addr, slow_addr) = (head.as_ptr() as usize, slow.addr as usize);
    let writer = std::thread::spawn(move || {
        let iov = [
            libc::iovec { iov_base: head_addr as *mut _, iov_len: hl },
            libc::iovec { iov_base: slow_addr as *mut _, iov_len: payload },
        ];
        behaviour::writev(fd, &iov)
    });
    slow.wait_fault(Duration::from_secs(5))?;
    let del = std::thread::spawn(move || sh(&format!("ip link del {name}")));
    let gone = wait_gone(&format!("/sys/class/net/{name}"), Duration::from_secs(10));
    // Released whatever happened, so that the writer and the delete end.
    slow.release(&[0x5a; 600])?;
    let wrote = writer.join().map_err(|_| "writer panicked".to_string())?;
    del.join().map_err(|_| "ip link del panicked".to_string())??;
    check!(gone, "{name}'s sysfs directory still there 10 s after ip link del");
    check!(
        matches!(wrote, Err(libc::EIO) | Err(libc::EBUSY)),
        "the write across the delete returned {wrote:?}, expected EIO or EBUSY"
    );
    // The file is still usable for what a file without a device can do.
    expect_errno!(t.write(&head), libc::EBADFD, "a write after the delete");
    Ok(())
}

/// Issue 18, bug 2: deleting a device while writers loop on it (plain and
/// `IFF_NAPI_FRAGS` TAPs). Every write either delivers, or fails as a write
/// to a device going away fails (`EIO` while it goes down, `EBADFD` once
/// it is gone, `EBUSY` for a frags context being deleted); the writers end,
/// the device goes, nothing warns. On the old code the `IFF_UP` test came
/// before the RCU read section, so a write could deliver after
/// unregistration's `synchronize_net()`: a window too narrow to hit on
/// purpose, which this loop (under the debug kernel's lockdep, KASAN and
/// DEBUG_NET) exercises on every run.
pub fn t_delete_under_writers(n: Node) -> TestResult {
    for (round, extra) in [(0, 0u16), (1, IFF_NAPI | IFF_NAPI_FRAGS), (2, 0), (3, IFF_NAPI | IFF_NAPI_FRAGS)] {
        let name = format!("rt-duw{round}");
        let t = Tun::create(n.path, &name, IFF_TAP | IFF_NO_PI | extra).map_err(|e| format!("TUNSETIFF {name}: {e}"))?;
        sh(&format!("ip addr add 10.89.2.1/24 dev {name} && ip link set {name} up"))?;
        let frame = pkt::eth(
            [0xff; 6],
            [2, 0, 0, 0, 0, 9],
            pkt::ETH_P_IP,
            &pkt::ipv4([10, 89, 2, 2], [10, 89, 2, 1], pkt::IPPROTO_UDP, &pkt::udp(5555, 9, &[7u8; 300])),
        );
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let delivered: std::sync::Arc<[std::sync::atomic::AtomicU64; 2]> = Default::default();
        let writers: Vec<_> = (0..2)
            .map(|i| {
                let fd = t.fd();
                let f = frame.clone();
                let stop = stop.clone();
                let delivered = delivered.clone();
                std::thread::spawn(move || {
                    let (mut ok, mut bad) = (0u64, Vec::new());
                    while !stop.load(Ordering::Relaxed) {
                        let hl = 42;
                        let iov = [behaviour::iov(&f[..hl]), behaviour::iov(&f[hl..])];
                        match behaviour::writev(fd, &iov) {
                            Ok(_) => {
                                ok += 1;
                                delivered[i].store(ok, Ordering::Relaxed);
                            }
                            Err(libc::EBADFD) => break,
                            Err(libc::EIO) | Err(libc::EBUSY) => {}
                            Err(e) => {
                                bad.push(e);
                                break;
                            }
                        }
                    }
                    (ok, bad)
                })
            })
            .collect();
        // Both writers under way (each has delivered), then a little more.
        let end = Instant::now() + Duration::from_secs(3);
        while delivered.iter().any(|d| d.load(Ordering::Relaxed) == 0) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(20));
        let del = sh(&format!("ip link del {name}"));
        // The writers must see the device go on their own (EBADFD).
        let end = Instant::now() + Duration::from_secs(5);
        while writers.iter().any(|w| !w.is_finished()) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        let stuck = writers.iter().filter(|w| !w.is_finished()).count();
        stop.store(true, Ordering::Relaxed);
        del?;
        for w in writers {
            let (ok, bad) = w.join().map_err(|_| "writer panicked".to_string())?;
            check!(ok > 0, "round {round}: no write delivered before the delete");
            check!(bad.is_empty(), "round {round}: writes failed with {bad:?}");
        }
        check!(stuck == 0, "round {round}: {stuck} writer(s) still writing 5 s after the delete");
        check!(!link_exists(&name), "round {round}: {name} still exists");
        expect_errno!(t.write(&frame), libc::EBADFD, "a write after the delete");
    }
    Ok(())
}

const TUN_F_TSO6: libc::c_ulong = 0x04;
const TUN_F_TSO_ECN: libc::c_ulong = 0x08;
const GSO_TCPV6: u8 = 4;
const GSO_ECN: u8 = 0x80;
const TCP_SYN: u8 = 0x02;
const TCP_ACK: u8 = 0x10;
const TCP_ECE: u8 = 0x40;
const TCP_CWR: u8 = 0x80;

/// A TCP segment read from the device: its vnet header and what the IP
/// and TCP headers say.
#[derive(Debug)]
struct ReadSeg {
    hdr: Vnet,
    /// The bytes read, the vnet header included.
    len: usize,
    /// IP plus TCP header length.
    hlen: usize,
    payload: usize,
    seq: u32,
    flags: u8,
    sport: u16,
}

/// Parses a read of a TUN (`IFF_NO_PI`, vnet header) device: a TCP
/// segment over IPv4 or IPv6, or `None`.
fn parse_tcp_read(buf: &[u8], m: usize) -> Option<ReadSeg> {
    let ip = buf.get(VNET_HDR_LEN..m)?;
    let l3 = match ip.first()? >> 4 {
        4 if ip.len() >= 40 && ip[9] == 6 => usize::from(ip[0] & 0xf) * 4,
        6 if ip.len() >= 60 && ip[6] == 6 => 40,
        _ => return None,
    };
    let tcp = ip.get(l3..)?;
    let hlen = l3 + usize::from(tcp.get(12)? >> 4) * 4;
    Some(ReadSeg {
        hdr: Vnet::parse(buf),
        len: m,
        hlen,
        payload: ip.len().checked_sub(hlen)?,
        seq: u32::from_be_bytes(tcp[4..8].try_into().ok()?),
        flags: tcp[13],
        sport: u16::from_be_bytes([tcp[0], tcp[1]]),
    })
}

/// A local TCP sender through a TUN device with the vnet header, the test
/// playing its peer on port 80: the sending thread, a handle to shut its
/// connection down, and the device.
struct TcpSender {
    t: Tun,
    stop: Option<std::sync::mpsc::Receiver<std::net::TcpStream>>,
    thread: Option<thread::JoinHandle<Result<(), String>>>,
}

impl TcpSender {
    /// Connects to `dst` (the peer, port 80) from a thread that then
    /// writes `bytes` bytes, and returns with the SYN read.
    fn start(t: Tun, dst: String, bytes: usize) -> Result<(TcpSender, ReadSeg), String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = thread::spawn(move || -> Result<(), String> {
            let addr = dst.parse().map_err(|e| format!("{dst}: {e}"))?;
            let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| format!("connect: {e}"))?;
            let _ = tx.send(s.try_clone().map_err(|e| e.to_string())?);
            use std::io::Write;
            let _ = s.write_all(&vec![0x5a; bytes]);
            Ok(())
        });
        let mut me = TcpSender { t, stop: Some(rx), thread: Some(thread) };
        let syn = me.next(Duration::from_secs(5), |s| s.flags & TCP_SYN != 0)?;
        Ok((me, syn))
    }

    /// The next TCP segment read for which `pred` holds, within `timeout`.
    fn next(&mut self, timeout: Duration, mut pred: impl FnMut(&ReadSeg) -> bool) -> Result<ReadSeg, String> {
        let mut buf = vec![0u8; 70000];
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            let Ok(m) = self.t.read_timeout(&mut buf, Duration::from_millis(100)) else { continue };
            if let Some(s) = parse_tcp_read(&buf, m) {
                if pred(&s) {
                    return Ok(s);
                }
            }
        }
        Err(format!("no such TCP segment within {timeout:?}"))
    }

    /// Every TCP segment read until none comes for `idle`.
    fn drain(&mut self, idle: Duration) -> Vec<ReadSeg> {
        let mut buf = vec![0u8; 70000];
        let mut out = Vec::new();
        while let Ok(m) = self.t.read_timeout(&mut buf, idle) {
            out.extend(parse_tcp_read(&buf, m));
        }
        out
    }
}

impl Drop for TcpSender {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take().and_then(|rx| rx.recv_timeout(Duration::from_secs(1)).ok()) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

/// TSO6 on the read path: with `TUNSETOFFLOAD(TUN_F_CSUM | TUN_F_TSO6)` a
/// local TCPv6 sender's first flight reaches the reader as super-packets
/// whose header says `GSO_TCPV6`, `gso_size` the peer's MSS, `hdr_len` the
/// linear part (the IPv6 and TCP headers), `NEEDS_CSUM` at the TCP
/// checksum (40 + 16); with only `TUN_F_TSO4`, IPv6 gets no super-packets.
pub fn t_vnet_tso6_read(n: Node) -> TestResult {
    for (i, offload) in [TUN_F_CSUM | TUN_F_TSO6, TUN_F_CSUM | TUN_F_TSO4].into_iter().enumerate() {
        let name = format!("rt-v6r{i}");
        let t = tun_vnet(n, &name, IFF_TUN | IFF_NO_PI)?;
        ioctl_val(t.fd(), TUNSETOFFLOAD, offload).map_err(|e| format!("TUNSETOFFLOAD {offload:#x}: {e}"))?;
        write_file(&format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "0")?;
        write_file(&format!("/proc/sys/net/ipv6/conf/{name}/accept_dad"), "0")?;
        sh(&format!("ip -6 addr add fd8{i}:6::1/64 dev {name} && ip link set {name} up"))?;
        let me: [u8; 16] = format!("fd8{i}:6::1").parse::<std::net::Ipv6Addr>().unwrap().octets();
        let peer: [u8; 16] = format!("fd8{i}:6::2").parse::<std::net::Ipv6Addr>().unwrap().octets();
        // The address may take a moment to be usable as a source.
        let _probe = settled(|| std::net::UdpSocket::bind(format!("[fd8{i}:6::1]:0")))?;
        let (mut s, syn) = TcpSender::start(t, format!("[fd8{i}:6::2]:80"), 60000)?;
        // SYN-ACK with MSS 1400, a large window.
        let synack = tcp6_seg(peer, me, 80, syn.sport, 1000, syn.seq.wrapping_add(1), 0x12, &[2, 4, 0x05, 0x78], &[], false);
        s.t.write(&with_hdr(&Vnet::default(), &synack)).map_err(|e| format!("SYN-ACK: {e}"))?;
        let mut segs = vec![s.next(Duration::from_secs(5), |g| g.payload > 0)?];
        segs.extend(s.drain(Duration::from_millis(300)));
        let Some(big) = segs.iter().filter(|g| g.payload > 0).max_by_key(|g| g.payload) else {
            return Err(format!("{offload:#x}: no data segment after the first"));
        };
        if offload & TUN_F_TSO6 != 0 {
            let h = big.hdr;
            check!(big.payload > 1400, "TSO6: largest segment carried {} bytes, no super-packet", big.payload);
            check!(h.gso_type == GSO_TCPV6 && h.gso_size == 1400, "TSO6: header {h:?}, want GSO_TCPV6 with gso_size 1400");
            check!(h.flags == F_NEEDS_CSUM && h.csum_start == 40 && h.csum_offset == 16, "TSO6: header {h:?}, want NEEDS_CSUM at 40+16");
            check!(usize::from(h.hdr_len) == big.hlen, "TSO6: hdr_len {} for {} bytes of headers", h.hdr_len, big.hlen);
            check!(big.len == VNET_HDR_LEN + big.hlen + big.payload, "TSO6: {big:?}");
        } else {
            check!(big.payload <= 1400, "TSO4 only: an IPv6 segment of {} bytes", big.payload);
            check!(segs.iter().all(|g| g.hdr.gso_type == GSO_NONE && g.hdr.gso_size == 0), "TSO4 only: a GSO header on IPv6: {segs:?}");
        }
    }
    Ok(())
}

/// ECN on the read path: on an ECN connection (`tcp_ecn` 1), an ACK with
/// ECE makes the sender mark its next new data CWR, and that super-packet
/// has `SKB_GSO_TCP_ECN`. With `TUN_F_TSO_ECN` the reader gets it whole,
/// `gso_type` `GSO_TCPV4 | GSO_ECN`; without, the stack segments it (TSO
/// without ECN cannot carry CWR on one segment only): no GSO on the CWR
/// segment.
pub fn t_vnet_tso_ecn_read(n: Node) -> TestResult {
    let old = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_ecn").map_err(|e| e.to_string())?;
    write_file("/proc/sys/net/ipv4/tcp_ecn", "1")?;
    let r = tso_ecn_read(n);
    write_file("/proc/sys/net/ipv4/tcp_ecn", old.trim())?;
    r
}

fn tso_ecn_read(n: Node) -> TestResult {
    for (i, offload) in [TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN, TUN_F_CSUM | TUN_F_TSO4].into_iter().enumerate() {
        let name = format!("rt-vec{i}");
        let t = tun_vnet(n, &name, IFF_TUN | IFF_NO_PI)?;
        ioctl_val(t.fd(), TUNSETOFFLOAD, offload).map_err(|e| format!("TUNSETOFFLOAD {offload:#x}: {e}"))?;
        let (me, peer) = ([10, 90, i as u8, 1], [10, 90, i as u8, 2]);
        ptp_up(&name, &format!("10.90.{i}.1"), &format!("10.90.{i}.2"))?;
        let (mut s, syn) = TcpSender::start(t, format!("10.90.{i}.2:80"), 200000)?;
        check!(syn.flags & (TCP_ECE | TCP_CWR) == TCP_ECE | TCP_CWR, "SYN flags {:#x}: no ECN requested", syn.flags);
        let iss = syn.seq;
        // SYN-ACK with ECE (ECN agreed), MSS 1400, a 65535-byte window.
        let synack = tcp_seg(peer, me, 80, syn.sport, 1000, iss.wrapping_add(1), 0x12 | TCP_ECE, &[2, 4, 0x05, 0x78], &[]);
        s.t.write(&with_hdr(&Vnet::default(), &synack)).map_err(|e| format!("SYN-ACK: {e}"))?;
        // The first flight, then an ACK of all of it with ECE.
        let first = s.next(Duration::from_secs(5), |g| g.payload > 0)?;
        let mut end = first.seq.wrapping_add(first.payload as u32);
        for g in s.drain(Duration::from_millis(30)) {
            if g.payload > 0 && (g.seq.wrapping_add(g.payload as u32).wrapping_sub(end) as i32) > 0 {
                end = g.seq.wrapping_add(g.payload as u32);
            }
        }
        check!(first.flags & TCP_CWR == 0, "CWR before any ECE: {first:?}");
        let ack = tcp_seg(peer, me, 80, syn.sport, 1001, end, TCP_ACK | TCP_ECE, &[], &[]);
        s.t.write(&with_hdr(&Vnet::default(), &ack)).map_err(|e| format!("ECE ACK: {e}"))?;
        let cwr = s.next(Duration::from_secs(3), |g| g.payload > 0 && g.flags & TCP_CWR != 0)?;
        let h = cwr.hdr;
        if offload & TUN_F_TSO_ECN != 0 {
            check!(cwr.payload > 1400, "TSO_ECN: the CWR segment carried {} bytes, no super-packet", cwr.payload);
            check!(h.gso_type == GSO_TCPV4 | GSO_ECN && h.gso_size == 1400, "TSO_ECN: header {h:?}, want GSO_TCPV4|GSO_ECN, gso_size 1400");
            check!(h.flags == F_NEEDS_CSUM && h.csum_start == 20 && h.csum_offset == 16, "TSO_ECN: header {h:?}");
        } else {
            check!(cwr.payload <= 1400 && h.gso_type == GSO_NONE, "no TSO_ECN: CWR segment of {} bytes, header {h:?}", cwr.payload);
        }
    }
    Ok(())
}

/// `TUNSETOFFLOAD` with one USO bit: tun.c 6.12 takes USO only as v4 and
/// v6 together, so `TUN_F_USO4` or `TUN_F_USO6` alone (with checksum
/// offload) is an unknown bit left over: `EINVAL`, and the offloads stay
/// as they were (a `UDP_SEGMENT` datagram is segmented before the
/// reader, or stays whole, as before the call).
pub fn t_vnet_uso_alone(n: Node) -> TestResult {
    const TUN_F_USO4: libc::c_ulong = 0x20;
    const TUN_F_USO6: libc::c_ulong = 0x40;
    let t = tun_vnet(n, "rt-vuo", IFF_TUN | IFF_NO_PI)?;
    ptp_up("rt-vuo", "10.91.0.1", "10.91.0.2")?;
    let sock = std::net::UdpSocket::bind("10.91.0.1:7200").map_err(|e| e.to_string())?;
    let seg: libc::c_int = 1000;
    // SAFETY: UDP_SEGMENT (103) at SOL_UDP (17), an int.
    let r = unsafe { libc::setsockopt(sock.as_raw_fd(), 17, 103, (&seg as *const libc::c_int).cast(), 4) };
    check!(r == 0, "UDP_SEGMENT: errno {}", errno());
    // Sends 3000 bytes in one UDP_SEGMENT send: how many packets the
    // reader gets, and the first one's header.
    let send = |what: &str| -> Result<(usize, Vnet), String> {
        let mut buf = vec![0u8; 70000];
        while t.read_timeout(&mut buf, Duration::from_millis(20)).is_ok() {}
        sock.send_to(&[3u8; 3000], "10.91.0.2:9").map_err(|e| format!("{what}: send: {e}"))?;
        let (mut count, mut first) = (0, None);
        while let Ok(m) = t.read_timeout(&mut buf, Duration::from_millis(200)) {
            if m > VNET_HDR_LEN + 28 && buf[VNET_HDR_LEN + 9] == pkt::IPPROTO_UDP {
                count += 1;
                first.get_or_insert(Vnet::parse(&buf));
            }
        }
        first.map(|h| (count, h)).ok_or_else(|| format!("{what}: nothing read"))
    };
    for (bits, what) in [
        (TUN_F_CSUM | TUN_F_USO4, "CSUM|USO4"),
        (TUN_F_CSUM | TUN_F_USO6, "CSUM|USO6"),
        (TUN_F_USO4 | TUN_F_USO6, "USO4|USO6 without CSUM"),
        (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_USO4, "CSUM|TSO4|USO4"),
    ] {
        expect_errno!(ioctl_val(t.fd(), TUNSETOFFLOAD, bits), libc::EINVAL, what);
        let (count, h) = send(what)?;
        check!(count == 3 && h.gso_type == GSO_NONE, "after {what} (refused, no USO before): {count} packets, first header {h:?}");
    }
    ioctl_val(t.fd(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6).map_err(|e| format!("TUNSETOFFLOAD USO: {e}"))?;
    let (count, h) = send("USO4|USO6")?;
    check!(count == 1 && h.gso_type == GSO_UDP_L4 && h.gso_size == 1000, "with USO: {count} packets, first header {h:?}");
    for (bits, what) in [(TUN_F_CSUM | TUN_F_USO4, "CSUM|USO4"), (TUN_F_CSUM | TUN_F_USO6, "CSUM|USO6")] {
        expect_errno!(ioctl_val(t.fd(), TUNSETOFFLOAD, bits), libc::EINVAL, what);
        let (count, h) = send(what)?;
        check!(count == 1 && h.gso_type == GSO_UDP_L4, "after {what} (refused, USO before): {count} packets, first header {h:?}");
    }
    Ok(())
}

/// What the byte counters count with `tun_pi` and the vnet header (also a
/// larger `TUNSETVNETHDRSZ`): the packet, never the headers before it, on
/// both paths (tun.c: `rx_bytes` += the length past the headers,
/// `tx_bytes` += `skb->len`), while a read returns them all.
pub fn t_vnet_stats_headers(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vsh", IFF_TUN)?;
    ptp_up("rt-vsh", "10.92.0.1", "10.92.0.2")?;
    let sock = std::net::UdpSocket::bind("10.92.0.1:7300").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 4096];
    while t.read_timeout(&mut buf, Duration::from_millis(20)).is_ok() {}
    for hdr_sz in [VNET_HDR_LEN, 16] {
        let mut sz = hdr_sz as i32;
        ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut sz).map_err(|e| format!("TUNSETVNETHDRSZ {hdr_sz}: {e}"))?;
        // Write: tun_pi, the header (padded to its size), the packet.
        let p = pkt::ipv4([10, 92, 0, 2], [10, 92, 0, 1], pkt::IPPROTO_UDP, &pkt::udp(5555, 7300, &[9u8; 333]));
        let mut w = vec![0, 0, 8, 0];
        w.extend_from_slice(&Vnet::default().bytes());
        w.resize(4 + hdr_sz, 0);
        w.extend_from_slice(&p);
        let c0 = counters("rt-vsh")?;
        check!(t.write(&w) == Ok(w.len()), "write with tun_pi and a {hdr_sz}-byte header: {:?}", t.write(&w));
        let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("datagram: {e}"))?;
        check!(m == 333, "datagram of {m} bytes");
        let c1 = counters("rt-vsh")?;
        check!(
            c1.rx_packets == c0.rx_packets + 1 && c1.rx_bytes == c0.rx_bytes + p.len() as u64,
            "{hdr_sz}-byte header: a {}-byte write of a {}-byte packet moved rx_packets by {} and rx_bytes by {}",
            w.len(),
            p.len(),
            c1.rx_packets - c0.rx_packets,
            c1.rx_bytes - c0.rx_bytes
        );
        // Read: the same headers, the packet; tx_bytes counts the packet.
        sock.send_to(&[4u8; 444], "10.92.0.2:9").map_err(|e| format!("send: {e}"))?;
        let m = t.read_timeout(&mut buf, Duration::from_secs(2)).map_err(|e| format!("read: {e}"))?;
        let ip_len = 20 + 8 + 444;
        check!(m == 4 + hdr_sz + ip_len, "read {m} bytes, want {} (tun_pi, {hdr_sz}-byte header, packet)", 4 + hdr_sz + ip_len);
        let c2 = counters("rt-vsh")?;
        check!(
            c2.tx_packets == c1.tx_packets + 1 && c2.tx_bytes == c1.tx_bytes + ip_len as u64,
            "{hdr_sz}-byte header: a {m}-byte read of a {ip_len}-byte packet moved tx_packets by {} and tx_bytes by {}",
            c2.tx_packets - c1.tx_packets,
            c2.tx_bytes - c1.tx_bytes
        );
    }
    Ok(())
}

/// `IFF_NAPI_FRAGS`'s frame limit: `ETH_MAX_MTU - NET_SKB_PAD -
/// NET_IP_ALIGN`, 65471 bytes on x86_64 (`NET_SKB_PAD` is
/// `L1_CACHE_BYTES`, 64, and `NET_IP_ALIGN` 0): a frame of that size is
/// taken, one byte more is `EMSGSIZE`.
pub fn t_napi_frags_frame_limit(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-nl0", IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS)
        .map_err(|e| format!("TUNSETIFF IFF_NAPI_FRAGS: {e}"))?;
    sh("ip link set rt-nl0 up")?;
    let frame = |len: usize| {
        let mut f = pkt::eth([2, 0, 0, 0, 0, 8], [2, 0, 0, 0, 0, 9], 0x88b5, &[]);
        f.resize(len, 0x5a);
        f
    };
    let f = frame(65471);
    check!(t.write(&f) == Ok(f.len()), "a 65471-byte frame: {:?}", t.write(&f));
    let f = frame(65472);
    expect_errno!(t.write(&f), libc::EMSGSIZE, "a 65472-byte frame");
    Ok(())
}
/// Malformed vnet headers on a multi-queue TAP (the differential fuzzer's
/// device 3, seed 1): each write is `EINVAL`, not a drop, and those the
/// kernel's `virtio_net_hdr_to_skb()` refuses are frame errors. rust_tun
/// reports them in `rx_frame_errors`; tun.c counts them too, but its TAP
/// ops have no `ndo_get_stats64` (only `tun_netdev_ops` adds
/// `tun->rx_frame_errors`), so a TAP's count never shows (a deliberate
/// difference, rst).
pub fn t_vnet_malformed_tap(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vmt0", IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE)?;
    sh("ip link set rt-vmt0 up")?;
    let frame: Vec<u8> = {
        let icmp = pkt::icmp_echo(8, 1, 171, &[7u8; 32]);
        pkt::eth([2, 0, 0, 0x62, 3, 1], [2, 0, 0, 0x62, 3, 2], pkt::ETH_P_IP, &pkt::ipv4([10, 98, 3, 2], [10, 98, 3, 1], pkt::IPPROTO_ICMP, &icmp))
    };
    let cases: [(&str, Vnet, bool); 3] = [
        // TCPv6 GSO whose checksum starts inside the IPv4 header (fuzz-diff
        // seed 1, op 33).
        ("TCPv6 GSO, csum at 34", Vnet { flags: F_NEEDS_CSUM, gso_type: 4, hdr_len: 0, gso_size: 1400, csum_start: 34, csum_offset: 2 }, true),
        // The checksum past the packet (op 160): hdr_len raised past it.
        ("csum past the packet", Vnet { flags: F_NEEDS_CSUM, csum_start: 0x49, csum_offset: 0x4a, ..Default::default() }, false),
        ("gso_size 0", Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_TCPV4, hdr_len: 0, gso_size: 0, csum_start: 34, csum_offset: 2 }, true),
    ];
    for (what, h, counted) in cases {
        let before = stat("rt-vmt0", "rx_frame_errors")?;
        let drops = stat("rt-vmt0", "rx_dropped")?;
        expect_errno!(t.write(&with_hdr(&h, &frame)), libc::EINVAL, what);
        let after = stat("rt-vmt0", "rx_frame_errors")?;
        let shown = counted && n.module == "rust_tun";
        check!(after == before + u64::from(shown), "{what}: rx_frame_errors {before} -> {after}");
        check!(stat("rt-vmt0", "rx_dropped")? == drops, "{what}: counted as a drop");
    }
    Ok(())
}
