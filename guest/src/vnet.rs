//! The virtio-net header and offloads (issue "virtio-net header"), each
//! test against tun and rust_tun with the same expectations: the header on
//! both paths and its size, malformed headers, checksum offload and GSO
//! writes delivered to local sockets with the bytes intact, and GSO
//! super-packets from the stack to the reader once `TUNSETOFFLOAD` allows
//! them.
//!
//! Here: the header, its helpers and the basic and malformed cases; GSO in
//! vnet/gso.rs, TSO reads beyond IPv4 in vnet/tso.rs, NAPI in
//! vnet/napi.rs.

use super::*;

pub mod gso;
pub mod napi;
pub mod tnl;
pub mod tso;

const VNET_HDR_LEN: usize = 10;
pub(crate) const F_NEEDS_CSUM: u8 = 1;
pub(crate) const F_DATA_VALID: u8 = 2;
const GSO_NONE: u8 = 0;
pub(crate) const GSO_TCPV4: u8 = 1;
const GSO_UDP_L4: u8 = 5;
const TUN_F_CSUM: libc::c_ulong = 0x01;
const TUN_F_TSO4: libc::c_ulong = 0x02;

/// A `struct virtio_net_hdr` (little-endian fields, as on x86_64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Vnet {
    pub(crate) flags: u8,
    pub(crate) gso_type: u8,
    pub(crate) hdr_len: u16,
    pub(crate) gso_size: u16,
    pub(crate) csum_start: u16,
    pub(crate) csum_offset: u16,
}

impl Vnet {
    pub(crate) fn bytes(&self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
        b
    }

    pub(crate) fn parse(b: &[u8]) -> Vnet {
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
pub(crate) fn pseudo_sum(src: [u8; 4], dst: [u8; 4], proto: u8, len: usize) -> u16 {
    let mut b = Vec::with_capacity(12);
    b.extend_from_slice(&src);
    b.extend_from_slice(&dst);
    b.extend_from_slice(&[0, proto]);
    b.extend_from_slice(&(len as u16).to_be_bytes());
    !pkt::csum(&b)
}

/// A UDP/IPv4 packet whose UDP checksum is left to the receiver's side
/// (`NEEDS_CSUM`: the field holds the pseudo-header sum).
pub(crate) fn udp_partial(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, data: &[u8]) -> Vec<u8> {
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
/// header are skipped on a write and, on a read, zeroed (7.3) or skipped
/// (6.12); a read buffer shorter than the header is `EINVAL`.
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
    // 7.3 zero-fills them (`__tun_vnet_hdr_put()`), 6.12 skipped them.
    let pad = if kernel_is_7_3() { 0 } else { 0xaa };
    check!(buf[10..12] == [pad, pad], "the 2 bytes past the legacy header: {:?}, want {pad:#x}", &buf[10..12]);
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
pub(crate) fn tcp_seg(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, opts: &[u8], data: &[u8]) -> Vec<u8> {
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

/// Retries `bind` for up to 3 s while it fails with `EADDRNOTAVAIL` (an
/// IPv6 address just added may not be usable yet), then waits as long
/// again for `addr`'s local route: addrconf clears the address's
/// `IFA_F_TENTATIVE` (and a bind succeeds) before it inserts that route
/// (`addrconf_dad_begin()`, then `addrconf_dad_completed()` ->
/// `ip6_ins_rt()`), and a packet written to the device for `addr` in
/// between is not delivered (6.12-test once lost `vnet_gso_udp6_write`'s
/// datagrams so, on C tun, with three guests at once).
fn settled<T>(addr: &str, mut bind: impl FnMut() -> std::io::Result<T>) -> Result<T, String> {
    let t0 = Instant::now();
    let sock = loop {
        match bind() {
            Ok(s) => break s,
            Err(e) if e.raw_os_error() == Some(libc::EADDRNOTAVAIL) && t0.elapsed() < Duration::from_secs(3) => {
                thread::sleep(Duration::from_millis(50))
            }
            Err(e) => return Err(format!("bind: {e}")),
        }
    };
    let t0 = Instant::now();
    while sh(&format!("ip -6 route show table local {addr}"))?.trim().is_empty() {
        check!(t0.elapsed() < Duration::from_secs(3), "no local route for {addr} within 3 s of its bind");
        thread::sleep(Duration::from_millis(20));
    }
    Ok(sock)
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
