//! 7.3's `drivers/net/tun_vnet.h` on both drivers, each test expecting the
//! running kernel's tun.c (7.3 or 6.12) of tun and rust_tun alike: the
//! read path's padding up to `vnet_hdr_sz` (zeroed on 7.3, left as the
//! buffer held it on 6.12), the write path's `hdr_len` bound (7.3 counts
//! the padding), and UDP-tunnel GSO (7.3: `TUNSETOFFLOAD`'s flags and the
//! device features, a tunnel GSO write segmented by the stack, a geneve
//! device's GSO packets read whole with the tunnel header; each direction
//! also with the outer UDP checksum, `VIRTIO_NET_HDR_F_UDP_TUNNEL_CSUM`,
//! and with IPv6 outer headers, `GSO_UDP_TUNNEL_IPV6`).

use super::*;

const TUN_F_TSO6: libc::c_ulong = 0x04;
const TUN_F_USO4: libc::c_ulong = 0x20;
const TUN_F_USO6: libc::c_ulong = 0x40;
const TUN_F_UDP_TUNNEL_GSO: libc::c_ulong = 0x80;
const TUN_F_UDP_TUNNEL_GSO_CSUM: libc::c_ulong = 0x100;
/// `VIRTIO_NET_HDR_GSO_UDP_TUNNEL_IPV4`, `_IPV6`.
const GSO_UDP_TUNNEL_IPV4: u8 = 0x20;
const GSO_UDP_TUNNEL_IPV6: u8 = 0x40;
/// `sizeof(struct virtio_net_hdr_v1_hash_tunnel)` (`TUN_VNET_TNL_SIZE`).
pub(crate) const TNL_SIZE: usize = 24;
pub(crate) const GENEVE_PORT: u16 = 6081;

fn set_hdr_sz(t: &Tun, sz: i32) -> TestResult {
    let mut v = sz;
    ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut v).map_err(|e| format!("TUNSETVNETHDRSZ {sz}: {e}"))?;
    Ok(())
}

fn drain(t: &Tun) {
    let mut buf = vec![0u8; 70000];
    while t.read_timeout(&mut buf, Duration::from_millis(50)).is_ok() {}
}

/// Sends `frame` out of `ifname` through an `AF_PACKET` socket: it reaches
/// the device's reader as it is.
fn packet_send(ifname: &str, frame: &[u8]) -> TestResult {
    // SAFETY: Plain data.
    let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_ifindex = crate::nl::ifindex(ifname);
    sa.sll_halen = 6;
    // SAFETY: A socket of ours and valid buffers.
    let r = unsafe {
        let s = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
        let r = libc::sendto(s, frame.as_ptr().cast(), frame.len(), 0, (&sa as *const libc::sockaddr_ll).cast(), std::mem::size_of_val(&sa) as u32);
        libc::close(s);
        r
    };
    check!(r == frame.len() as isize, "AF_PACKET send: errno {}", errno());
    Ok(())
}

pub(crate) fn no_ipv6(ifname: &str) {
    let _ = write_file(&format!("/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6"), "1");
}

/// The read path's padding: with `vnet_hdr_sz` 12 and 20 a reader whose
/// buffer holds 0xaa finds the bytes between the legacy header and the
/// frame zeroed on 7.3 (`__tun_vnet_hdr_put()`), untouched on 6.12. On
/// 7.3 with the tunnel offload on, the header filled is the tunnel one (24
/// bytes): with `vnet_hdr_sz` 24 the read is whole, with 12 it is `EFAULT`
/// and all the buffer past the header zeroed (tun.c's `sz - parsed_size`
/// wraps).
pub fn t_vnet_pad_read(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vpd0", IFF_TAP | IFF_NO_PI)?;
    no_ipv6("rt-vpd0");
    sh("ip link set rt-vpd0 up")?;
    let frame = pkt::eth([2, 0, 0, 0, 0, 1], [2, 0xcc, 0, 0, 0, 1], 0x88b5, &[0x11; 50]);
    let mut buf = vec![0xaau8; 2048];
    let zeroed = kernel_is_7_3();
    for sz in [12usize, 20] {
        set_hdr_sz(&t, sz as i32)?;
        drain(&t);
        packet_send("rt-vpd0", &frame)?;
        buf.fill(0xaa);
        let got = t.read_timeout(&mut buf, Duration::from_secs(2)).map_err(|e| format!("read, header {sz}: {e}"))?;
        check!(got == sz + frame.len(), "header {sz}: read {got} bytes");
        let want = if zeroed { 0 } else { 0xaa };
        check!(buf[VNET_HDR_LEN..sz].iter().all(|&b| b == want), "header {sz}: padding {:x?}, want {want:#x}", &buf[VNET_HDR_LEN..sz]);
        check!(Vnet::parse(&buf).gso_type == GSO_NONE, "header {sz}: {:?}", Vnet::parse(&buf));
        check!(buf[sz..got] == frame[..], "header {sz}: frame differs");
    }
    if !kernel_is_7_3() {
        expect_errno!(ioctl_val(t.fd(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_UDP_TUNNEL_GSO), libc::EINVAL, "6.12: TUNSETOFFLOAD with TUN_F_UDP_TUNNEL_GSO");
        return Ok(());
    }
    ioctl_val(t.fd(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_UDP_TUNNEL_GSO).map_err(|e| format!("TUNSETOFFLOAD: {e}"))?;
    set_hdr_sz(&t, TNL_SIZE as i32)?;
    drain(&t);
    packet_send("rt-vpd0", &frame)?;
    buf.fill(0xaa);
    let got = t.read_timeout(&mut buf, Duration::from_secs(2)).map_err(|e| format!("read, tunnel header: {e}"))?;
    check!(got == TNL_SIZE + frame.len(), "tunnel header: read {got} bytes");
    check!(buf[VNET_HDR_LEN..TNL_SIZE].iter().all(|&b| b == 0), "tunnel header: {:x?}", &buf[..TNL_SIZE]);
    check!(buf[TNL_SIZE..got] == frame[..], "tunnel header: frame differs");
    set_hdr_sz(&t, 12)?;
    packet_send("rt-vpd0", &frame)?;
    buf.fill(0xaa);
    thread::sleep(Duration::from_millis(100));
    expect_errno!(t.read(&mut buf), libc::EFAULT, "header 12 below the tunnel header");
    check!(buf.iter().all(|&b| b == 0), "after the EFAULT read: {:x?}", &buf[..64]);
    Ok(())
}

/// The write path's `hdr_len` bound, with `vnet_hdr_sz` 20: up to the
/// packet's length it is accepted on both kernels; past it by up to the
/// 10 bytes of padding it is accepted on 7.3 (`__tun_vnet_hdr_get()`
/// compares with what follows the parsed header) and `EINVAL` on 6.12;
/// beyond, and with no padding (`vnet_hdr_sz` 10), `EINVAL`; a checksum
/// place that raises `hdr_len` past the packet is `EINVAL` on both (7.3:
/// from `virtio_net_hdr_to_skb()`). Accepted writes are delivered.
pub fn t_vnet_hdr_len_bound(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vhl0", IFF_TUN | IFF_NO_PI)?;
    ptp_up("rt-vhl0", "10.97.0.1", "10.97.0.2")?;
    let sock = std::net::UdpSocket::bind("10.97.0.1:9000").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| e.to_string())?;
    let p = pkt::ipv4([10, 97, 0, 2], [10, 97, 0, 1], pkt::IPPROTO_UDP, &pkt::udp(5555, 9000, &[0x42; 100]));
    let l = p.len() as u16;
    let write = |sz: usize, h: Vnet| {
        let mut w = h.bytes().to_vec();
        w.resize(sz, 0x77);
        w.extend_from_slice(&p);
        t.write(&w).map(|m| m == w.len())
    };
    let s73 = kernel_is_7_3();
    let cases: [(&str, usize, Vnet, bool); 6] = [
        ("hdr_len = len", 20, Vnet { hdr_len: l, ..Default::default() }, true),
        ("hdr_len = len + 1", 20, Vnet { hdr_len: l + 1, ..Default::default() }, s73),
        ("hdr_len = len + padding", 20, Vnet { hdr_len: l + 10, ..Default::default() }, s73),
        ("hdr_len past the padding", 20, Vnet { hdr_len: l + 11, ..Default::default() }, false),
        ("hdr_len = len + 1, no padding", 10, Vnet { hdr_len: l + 1, ..Default::default() }, false),
        ("csum end within the padding", 20, Vnet { flags: F_NEEDS_CSUM, csum_start: 20, csum_offset: l - 20 + 2, ..Default::default() }, false),
    ];
    let mut buf = [0u8; 512];
    for (what, sz, h, ok) in cases {
        set_hdr_sz(&t, sz as i32)?;
        if ok {
            let r = write(sz, h);
            check!(r == Ok(true), "{what}: {r:?}");
            let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("{what}: datagram: {e}"))?;
            check!(m == 100 && buf[..m].iter().all(|&b| b == 0x42), "{what}: datagram of {m} bytes");
        } else {
            expect_errno!(write(sz, h), libc::EINVAL, what);
        }
    }
    Ok(())
}

/// `TUNSETOFFLOAD`'s tunnel flags (7.3's `set_offload()`): accepted only
/// with checksum offload and some plain GSO (TSO or USO), the outer
/// checksum only with the tunnel flag; they show as
/// `tx-udp_tnl-segmentation` / `tx-udp_tnl-csum-segmentation` (changeable
/// on 7.3, as `TUN_USER_FEATURES` has them). 6.12 knows neither flag.
pub fn t_vnet_tnl_offload(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vto0", IFF_TAP | IFF_NO_PI)?;
    let s73 = kernel_is_7_3();
    let feature = |name: &str| -> Result<crate::ethtool::Feature, String> {
        let f = crate::ethtool::features("rt-vto0").map_err(|e| format!("GFEATURES: errno {e}"))?;
        f.into_iter().find(|f| f.name == name).ok_or_else(|| format!("no feature {name}"))
    };
    let (tnl, tnl_csum) = ("tx-udp_tnl-segmentation", "tx-udp_tnl-csum-segmentation");
    for name in [tnl, tnl_csum] {
        let f = feature(name)?;
        check!(f.available == s73 && !f.active, "{name} at creation: {f:?}");
    }
    let cases: [(&str, libc::c_ulong, bool, bool, bool); 7] = [
        ("tunnel alone", TUN_F_UDP_TUNNEL_GSO, false, false, false),
        ("tunnel with checksum only", TUN_F_CSUM | TUN_F_UDP_TUNNEL_GSO, false, false, false),
        ("tunnel with TSO4", TUN_F_CSUM | TUN_F_TSO4 | TUN_F_UDP_TUNNEL_GSO, s73, true, false),
        ("tunnel with TSO6 and its checksum", TUN_F_CSUM | TUN_F_TSO6 | TUN_F_UDP_TUNNEL_GSO | TUN_F_UDP_TUNNEL_GSO_CSUM, s73, true, true),
        ("tunnel with USO", TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6 | TUN_F_UDP_TUNNEL_GSO, s73, true, false),
        ("tunnel checksum without the tunnel", TUN_F_CSUM | TUN_F_TSO4 | TUN_F_UDP_TUNNEL_GSO_CSUM, false, false, false),
        ("tunnel with USO4 alone", TUN_F_CSUM | TUN_F_USO4 | TUN_F_UDP_TUNNEL_GSO, false, false, false),
    ];
    for (what, arg, ok, on, csum_on) in cases {
        ioctl_val(t.fd(), TUNSETOFFLOAD, 0).map_err(|e| format!("TUNSETOFFLOAD 0: {e}"))?;
        if !ok {
            expect_errno!(ioctl_val(t.fd(), TUNSETOFFLOAD, arg), libc::EINVAL, what);
            continue;
        }
        ioctl_val(t.fd(), TUNSETOFFLOAD, arg).map_err(|e| format!("{what}: {e}"))?;
        let (f, fc) = (feature(tnl)?, feature(tnl_csum)?);
        check!(f.active == on && fc.active == csum_on, "{what}: {f:?} {fc:?}");
    }
    Ok(())
}

/// The 24-byte tunnel header as the reader gets it and a writer gives it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tnl {
    h: Vnet,
    outer_th: u16,
    inner_nh: u16,
}

impl Tnl {
    fn bytes(&self) -> [u8; TNL_SIZE] {
        let mut b = [0u8; TNL_SIZE];
        b[..VNET_HDR_LEN].copy_from_slice(&self.h.bytes());
        b[20..22].copy_from_slice(&self.outer_th.to_le_bytes());
        b[22..24].copy_from_slice(&self.inner_nh.to_le_bytes());
        b
    }

    fn parse(b: &[u8]) -> Tnl {
        Tnl { h: Vnet::parse(b), outer_th: u16::from_le_bytes([b[20], b[21]]), inner_nh: u16::from_le_bytes([b[22], b[23]]) }
    }
}

/// `VIRTIO_NET_HDR_F_UDP_TUNNEL_CSUM` (7.3's uapi virtio_net.h): the outer
/// UDP checksum is the segmentation's to complete
/// (`SKB_GSO_UDP_TUNNEL_CSUM`), its field holding the pseudo-header sum.
const F_UDP_TUNNEL_CSUM: u8 = 8;
/// 7.3's if_link.h: `IFLA_GENEVE_ID`, `_REMOTE`, `_PORT`, `_REMOTE6`,
/// `_UDP_CSUM`, `_UDP_ZERO_CSUM6_TX`.
const IFLA_GENEVE_ID: u16 = 1;
const IFLA_GENEVE_REMOTE: u16 = 2;
const IFLA_GENEVE_PORT: u16 = 5;
const IFLA_GENEVE_REMOTE6: u16 = 7;
const IFLA_GENEVE_UDP_CSUM: u16 = 8;
const IFLA_GENEVE_UDP_ZERO_CSUM6_TX: u16 = 9;
const ETH_P_IPV6: u16 = 0x86dd;
/// Geneve's header: no options, an Ethernet payload (0x6558), VNI 7.
pub(crate) const GENEVE_HDR: [u8; 8] = [0, 0, 0x65, 0x58, 0, 0, 7, 0];
/// What follows the outer UDP header: geneve's 8 bytes, the inner
/// Ethernet, IPv4 and UDP headers.
pub(crate) const TNL_INNER: usize = 8 + 14 + 20 + 8;

/// An outer IP header: its family and addresses (source, destination).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ip {
    V4([u8; 4], [u8; 4]),
    V6([u8; 16], [u8; 16]),
}

impl Ip {
    fn v6(src: &str, dst: &str) -> Ip {
        Ip::V6(v6addr(src), v6addr(dst))
    }

    fn is_v6(self) -> bool {
        matches!(self, Ip::V6(..))
    }

    fn hlen(self) -> usize {
        if self.is_v6() { 40 } else { 20 }
    }

    fn ethertype(self) -> u16 {
        if self.is_v6() { ETH_P_IPV6 } else { pkt::ETH_P_IP }
    }

    /// The vnet header's tunnel type for this outer family.
    fn tunnel(self) -> u8 {
        if self.is_v6() { GSO_UDP_TUNNEL_IPV6 } else { GSO_UDP_TUNNEL_IPV4 }
    }

    /// An IP packet of this header around `udp`, a UDP datagram.
    fn packet(self, udp: &[u8]) -> Vec<u8> {
        match self {
            Ip::V4(s, d) => pkt::ipv4(s, d, pkt::IPPROTO_UDP, udp),
            Ip::V6(s, d) => pkt::ipv6(s, d, pkt::IPPROTO_UDP, udp),
        }
    }

    /// The UDP pseudo-header of a `len`-byte datagram.
    fn pseudo(self, len: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(40);
        match self {
            Ip::V4(s, d) => {
                b.extend_from_slice(&s);
                b.extend_from_slice(&d);
                b.extend_from_slice(&[0, pkt::IPPROTO_UDP]);
                b.extend_from_slice(&(len as u16).to_be_bytes());
            }
            Ip::V6(s, d) => {
                b.extend_from_slice(&s);
                b.extend_from_slice(&d);
                b.extend_from_slice(&(len as u32).to_be_bytes());
                b.extend_from_slice(&[0, 0, 0, pkt::IPPROTO_UDP]);
            }
        }
        b
    }

    /// The pseudo-header's ones' complement sum, not inverted: what a
    /// checksum left to be completed holds (`~udp_v4_check(len, ..., 0)`).
    fn seed(self, len: usize) -> u16 {
        !pkt::csum(&self.pseudo(len))
    }

    /// `p`'s IP header and its UDP datagram, if `p` is a UDP packet (IPv4
    /// without options, or IPv6 without extension headers).
    fn of(p: &[u8]) -> Option<(Ip, &[u8])> {
        let a = |r: std::ops::Range<usize>| p.get(r);
        match p.first()? >> 4 {
            4 if p.len() >= 20 && p[0] & 0xf == 5 && p[9] == pkt::IPPROTO_UDP => {
                let total = usize::from(u16::from_be_bytes([p[2], p[3]]));
                let ip = Ip::V4(a(12..16)?.try_into().ok()?, a(16..20)?.try_into().ok()?);
                Some((ip, p.get(20..total)?))
            }
            6 if p.len() >= 40 && p[6] == pkt::IPPROTO_UDP => {
                let plen = usize::from(u16::from_be_bytes([p[4], p[5]]));
                let ip = Ip::V6(a(8..24)?.try_into().ok()?, a(24..40)?.try_into().ok()?);
                Some((ip, p.get(40..40 + plen)?))
            }
            _ => None,
        }
    }
}

fn v6addr(s: &str) -> [u8; 16] {
    s.parse::<std::net::Ipv6Addr>().map(|a| a.octets()).unwrap_or_default()
}

/// Whether `udp`'s checksum is right over `ip`'s pseudo-header.
fn udp_csum_ok(ip: Ip, udp: &[u8]) -> bool {
    let mut b = ip.pseudo(udp.len());
    b.extend_from_slice(udp);
    pkt::csum(&b) == 0
}

/// Whether `p` (from the IP header on) is UDP to the geneve port.
fn is_geneve(p: &[u8]) -> bool {
    Ip::of(p).is_some_and(|(_, u)| u.len() >= 8 && u[2..4] == GENEVE_PORT.to_be_bytes())
}

/// A geneve packet over `outer` (from port 40000) carrying `inner`, an
/// Ethernet frame. With `csum` the outer UDP checksum field holds the
/// pseudo-header sum, which the segmentation completes per segment
/// (`__skb_udp_tunnel_segment()`: it takes out the length it was summed
/// with and adds each segment's); without, zero (no checksum).
fn geneve(outer: Ip, inner: &[u8], csum: bool) -> Vec<u8> {
    let mut g = GENEVE_HDR.to_vec();
    g.extend_from_slice(inner);
    let mut u = pkt::udp(40000, GENEVE_PORT, &g);
    if csum {
        let s = outer.seed(u.len());
        u[6..8].copy_from_slice(&s.to_be_bytes());
    }
    outer.packet(&u)
}

/// The write tests' tunnel header for a geneve frame over `outer` on a
/// TAP: `GSO_UDP_L4` with `outer`'s tunnel type, 1000-byte segments,
/// `NEEDS_CSUM` at the inner UDP checksum, `F_UDP_TUNNEL_CSUM` with
/// `csum`. The outer UDP follows Ethernet and the outer IP header, the
/// inner IPv4 follows it, geneve's 8 bytes and the inner Ethernet header,
/// the inner UDP 20 bytes on.
pub(crate) fn tnl_write_hdr(outer: Ip, csum: bool) -> Tnl {
    let outer_th = (14 + outer.hlen()) as u16;
    let inner_nh = outer_th + 8 + 8 + 14;
    let flags = F_NEEDS_CSUM | if csum { F_UDP_TUNNEL_CSUM } else { 0 };
    let h = Vnet { flags, gso_type: GSO_UDP_L4 | outer.tunnel(), hdr_len: inner_nh + 28, gso_size: 1000, csum_start: inner_nh + 20, csum_offset: 6 };
    Tnl { h, outer_th, inner_nh }
}

/// A tunnel write: `h`, then an Ethernet frame to `mac` with a geneve
/// packet over `outer` (outer checksum as `csum` says) whose inner frame
/// is a UDP packet of `data` from 10.200.0.2:5555 to 10.200.0.1:9000, its
/// checksum the pseudo-header sum (`NEEDS_CSUM`).
pub(crate) fn tnl_write_frame(h: &Tnl, mac: [u8; 6], outer: Ip, csum: bool, data: &[u8]) -> Vec<u8> {
    let inner_ip = udp_partial([10, 200, 0, 2], [10, 200, 0, 1], 5555, 9000, data);
    let inner = pkt::eth([2, 0, 0, 0, 0xaa, 1], [2, 0, 0, 0, 0xbb, 1], pkt::ETH_P_IP, &inner_ip);
    let mut w = h.bytes().to_vec();
    w.extend_from_slice(&pkt::eth(mac, [2, 0, 0, 0, 0x95, 2], outer.ethertype(), &geneve(outer, &inner, csum)));
    w
}

/// IPv6 on for `ifname` (off in the guest's namespace by default), without
/// duplicate address detection (a tentative address cannot be used).
fn ipv6_on(ifname: &str) -> TestResult {
    write_file(&format!("/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6"), "0")?;
    write_file(&format!("/proc/sys/net/ipv6/conf/{ifname}/accept_dad"), "0")
}

/// Six datagrams at `sock` (bound to the geneve port), each geneve's
/// header, the inner headers and the next 1000 bytes of `data`.
fn six_datagrams(sock: &std::net::UdpSocket, data: &[u8]) -> TestResult {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 65536];
    for i in 0..6 {
        let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("datagram {i}: {e}"))?;
        check!(m == TNL_INNER + 1000, "datagram {i}: {m} bytes");
        check!(buf[..8] == GENEVE_HDR, "datagram {i}: geneve header {:x?}", &buf[..8]);
        got.extend_from_slice(&buf[TNL_INNER..m]);
    }
    check!(got == data, "the six datagrams are not the payload");
    Ok(())
}

/// One geneve packet `p` (from its outer IP header on) as the stack
/// segmented it, of the outer family `v6` says: its outer UDP checksum
/// right and not zero with `csum`, zero without; its inner UDP checksum
/// (IPv4) right. The inner payload.
fn tnl_segment<'a>(p: &'a [u8], v6: bool, csum: bool, what: &str) -> Result<&'a [u8], String> {
    let Some((outer, udp)) = Ip::of(p) else { return Err(format!("{what}: not UDP: {:x?}", &p[..p.len().min(48)])) };
    check!(outer.is_v6() == v6, "{what}: outer header {outer:?}");
    check!(udp.len() > 8 + TNL_INNER && udp[8..16] == GENEVE_HDR, "{what}: {} bytes of UDP, {:x?}", udp.len(), &udp[..udp.len().min(16)]);
    let c = u16::from_be_bytes([udp[6], udp[7]]);
    if csum {
        check!(c != 0 && udp_csum_ok(outer, udp), "{what}: outer UDP checksum {c:#06x} wrong ({outer:?}, {} bytes)", udp.len());
    } else {
        check!(c == 0, "{what}: outer UDP checksum {c:#06x}, want none");
    }
    let Some((inner, iudp)) = Ip::of(&udp[8 + 8 + 14..]) else { return Err(format!("{what}: inner packet not UDP")) };
    check!(udp_csum_ok(inner, iudp), "{what}: inner UDP checksum {:#06x} wrong", u16::from_be_bytes([iudp[6], iudp[7]]));
    Ok(&iudp[8..])
}

/// The six segments of a tunnel GSO write forwarded out of `f`, a TUN
/// without vnet header or offloads (so the stack segments and checksums in
/// software on the way out): each as [`tnl_segment`] checks it, 1000 bytes
/// of payload, all of them `data` in order; other packets skipped.
fn six_forwarded(f: &Tun, v6: bool, csum: bool, data: &[u8]) -> TestResult {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 65536];
    let t0 = Instant::now();
    let mut seen = 0;
    while seen < 6 {
        check!(t0.elapsed() < Duration::from_secs(5), "{seen} of 6 forwarded segments within 5 s");
        let Ok(m) = f.read_timeout(&mut buf, Duration::from_millis(500)) else { continue };
        if !is_geneve(&buf[..m]) {
            continue;
        }
        let payload = tnl_segment(&buf[..m], v6, csum, &format!("forwarded segment {seen}"))?;
        check!(payload.len() == 1000, "forwarded segment {seen}: {} bytes of payload", payload.len());
        got.extend_from_slice(payload);
        seen += 1;
    }
    check!(got == data, "the six forwarded segments are not the payload");
    Ok(())
}

/// A UDP-tunnel GSO write (7.3, `vnet_hdr_sz` 24, no `TUNSETOFFLOAD`
/// needed: `tun_vnet_hdr_guest_features()`): a geneve packet over IPv4
/// without outer checksum whose inner UDP payload of 6000 bytes is
/// `GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV4` with `gso_size` 1000 reaches a local
/// socket on the geneve port as six datagrams, each the tunnel's headers
/// and 1000 bytes of the payload in order. Refused with `EINVAL` on both
/// kernels: the tunnel type with a header too small for the tunnel part,
/// both tunnel types at once, an outer transport offset inside the outer
/// IP header; on 6.12 every tunnel type (unknown there). The outer
/// checksum: [`t_vnet_tnl_csum_write`]; IPv6 outer headers:
/// [`t_vnet_tnl6_write`].
pub fn t_vnet_tnl_write(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vtw0", IFF_TAP | IFF_NO_PI)?;
    no_ipv6("rt-vtw0");
    sh("ip addr add 10.95.1.1/24 dev rt-vtw0 && ip link set rt-vtw0 up")?;
    let mac = hwaddr("rt-vtw0")?;
    let sock = std::net::UdpSocket::bind(format!("10.95.1.1:{GENEVE_PORT}")).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let data: Vec<u8> = (0..6000u32).map(|i| (i * 11 + i / 253) as u8).collect();
    let outer = Ip::V4([10, 95, 1, 2], [10, 95, 1, 1]);
    let good = tnl_write_hdr(outer, false);
    let with = |sz: usize, h: &Tnl| -> Vec<u8> {
        let w = tnl_write_frame(h, mac, outer, false, &data);
        let mut v = w[..sz.min(TNL_SIZE)].to_vec();
        v.resize(sz, 0);
        v.extend_from_slice(&w[TNL_SIZE..]);
        v
    };
    let bad: [(&str, usize, Tnl); 3] = [
        ("tunnel type with a 12-byte header", 12, good),
        ("both tunnel types", TNL_SIZE, Tnl { h: Vnet { gso_type: GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV4 | GSO_UDP_TUNNEL_IPV6, ..good.h }, ..good }),
        ("outer transport inside the outer IP header", TNL_SIZE, Tnl { outer_th: 20, ..good }),
    ];
    for (what, sz, h) in bad {
        set_hdr_sz(&t, sz as i32)?;
        expect_errno!(t.write(&with(sz, &h)), libc::EINVAL, what);
    }
    set_hdr_sz(&t, TNL_SIZE as i32)?;
    let w = with(TNL_SIZE, &good);
    if !kernel_is_7_3() {
        expect_errno!(t.write(&w), libc::EINVAL, "6.12: tunnel GSO write");
        return Ok(());
    }
    check!(t.write(&w) == Ok(w.len()), "tunnel GSO write: {:?}", t.write(&w));
    six_datagrams(&sock, &data)
}

/// The outer UDP checksum on the write path (7.3): a tunnel GSO write as
/// in [`t_vnet_tnl_write`] with `F_UDP_TUNNEL_CSUM` and the outer UDP
/// pseudo-header sum in the outer checksum field (what
/// `__skb_udp_tunnel_segment()` completes per segment for
/// `SKB_GSO_UDP_TUNNEL_CSUM`) reaches a local socket on the geneve port as
/// six datagrams. A local socket cannot tell the outer checksums, as the
/// segments of a GSO packet delivered locally count as checked
/// (`udp_post_segment_fix_csum()`); so the same packet also goes to a peer
/// behind a forwarding route, out of a TUN without offloads (the stack
/// segments it there, in software): six segments whose outer UDP
/// checksums are right, and, written without the flag and with a zero
/// outer checksum, six with none; their inner checksums right, the
/// payload intact. The flag needs neither `TUNSETOFFLOAD` nor
/// `TUN_F_UDP_TUNNEL_GSO_CSUM` in it: a 24-byte header allows both tunnel
/// offloads on a write (`tun_vnet_hdr_guest_features()`), so all of this
/// holds with `TUN_F_UDP_TUNNEL_GSO` alone set as well. On a packet
/// without a tunnel type the flag is ignored (delivered) on both kernels;
/// on 6.12 a tunnel write with it is `EINVAL` (no tunnel types there).
pub fn t_vnet_tnl_csum_write(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vtc0", IFF_TAP | IFF_NO_PI)?;
    no_ipv6("rt-vtc0");
    sh("ip addr add 10.95.4.1/24 dev rt-vtc0 && ip link set rt-vtc0 up")?;
    let mac = hwaddr("rt-vtc0")?;
    set_hdr_sz(&t, TNL_SIZE as i32)?;
    // The flag on a plain packet (checksum offload, no GSO): ignored.
    let plain = std::net::UdpSocket::bind("10.95.4.1:9000").map_err(|e| e.to_string())?;
    plain.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| e.to_string())?;
    let p = udp_partial([10, 95, 4, 2], [10, 95, 4, 1], 5555, 9000, &[0x42; 100]);
    let h = Tnl { h: Vnet { flags: F_NEEDS_CSUM | F_UDP_TUNNEL_CSUM, csum_start: 34, csum_offset: 6, ..Default::default() }, ..Default::default() };
    let mut w = h.bytes().to_vec();
    w.extend_from_slice(&pkt::eth(mac, [2, 0, 0, 0, 0x95, 2], pkt::ETH_P_IP, &p));
    check!(t.write(&w) == Ok(w.len()), "the flag without a tunnel type: {:?}", t.write(&w));
    let mut buf = [0u8; 512];
    let (m, _) = plain.recv_from(&mut buf).map_err(|e| format!("the flag without a tunnel type: datagram: {e}"))?;
    check!(m == 100 && buf[..m].iter().all(|&b| b == 0x42), "the flag without a tunnel type: datagram of {m} bytes");

    let data: Vec<u8> = (0..6000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let local = Ip::V4([10, 95, 4, 2], [10, 95, 4, 1]);
    let w = tnl_write_frame(&tnl_write_hdr(local, true), mac, local, true, &data);
    if !kernel_is_7_3() {
        expect_errno!(t.write(&w), libc::EINVAL, "6.12: tunnel GSO write with the outer checksum");
        return Ok(());
    }
    let sock = std::net::UdpSocket::bind(format!("10.95.4.1:{GENEVE_PORT}")).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let f = Tun::create(n.path, "rt-vtc1", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF rt-vtc1: errno {e}"))?;
    no_ipv6("rt-vtc1");
    ptp_up("rt-vtc1", "10.95.5.1", "10.95.5.2")?;
    write_file("/proc/sys/net/ipv4/conf/rt-vtc0/forwarding", "1")?;
    let far = Ip::V4([10, 95, 4, 2], [10, 95, 5, 2]);
    let offloads: [(&str, libc::c_ulong); 2] = [
        ("no TUNSETOFFLOAD", 0),
        ("TUN_F_UDP_TUNNEL_GSO without _CSUM", TUN_F_CSUM | TUN_F_TSO4 | TUN_F_UDP_TUNNEL_GSO),
    ];
    for (what, arg) in offloads {
        ioctl_val(t.fd(), TUNSETOFFLOAD, arg).map_err(|e| format!("{what}: TUNSETOFFLOAD {arg:#x}: {e}"))?;
        check!(t.write(&w) == Ok(w.len()), "{what}: write with the outer checksum: {:?}", t.write(&w));
        six_datagrams(&sock, &data).map_err(|e| format!("{what}: {e}"))?;
        for csum in [true, false] {
            let wf = tnl_write_frame(&tnl_write_hdr(far, csum), mac, far, csum, &data);
            check!(t.write(&wf) == Ok(wf.len()), "{what}: forwarded write, outer checksum {csum}: {:?}", t.write(&wf));
            six_forwarded(&f, false, csum, &data).map_err(|e| format!("{what}, outer checksum {csum}: {e}"))?;
        }
    }
    Ok(())
}

/// IPv6 outer headers on the write path (7.3): a geneve packet over IPv6
/// on a TAP, `GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV6` with `F_UDP_TUNNEL_CSUM`
/// and the IPv6 pseudo-header sum in the outer checksum field (a plain
/// IPv6 socket drops a zero UDP checksum), reaches a local socket on the
/// geneve port at the TAP's address as six datagrams. To a peer behind a
/// forwarding route (`force_forwarding` on the TAP) it leaves a TUN
/// without offloads as six IPv6 segments with right outer checksums, and
/// written without the flag (zero outer checksum) as six with none; inner
/// checksums right, payload intact. The IPv6 type with the outer
/// transport offset where IPv4's would be (34, inside the 40-byte IPv6
/// header) is `EINVAL` on both kernels (`virtio_net_hdr_tnl_to_skb()`'s
/// outer minimum), as every tunnel write on 6.12.
pub fn t_vnet_tnl6_write(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vt6w0", IFF_TAP | IFF_NO_PI)?;
    ipv6_on("rt-vt6w0")?;
    sh("ip link set rt-vt6w0 up && ip -6 addr add fd95:6::1/64 dev rt-vt6w0")?;
    let mac = hwaddr("rt-vt6w0")?;
    set_hdr_sz(&t, TNL_SIZE as i32)?;
    let data: Vec<u8> = (0..6000u32).map(|i| (i * 3 + i / 247) as u8).collect();
    let local = Ip::v6("fd95:6::2", "fd95:6::1");
    let good = tnl_write_hdr(local, true);
    let short = tnl_write_frame(&Tnl { outer_th: 34, ..good }, mac, local, true, &data);
    expect_errno!(t.write(&short), libc::EINVAL, "the IPv6 tunnel type with the outer transport at 34");
    let w = tnl_write_frame(&good, mac, local, true, &data);
    if !kernel_is_7_3() {
        expect_errno!(t.write(&w), libc::EINVAL, "6.12: tunnel GSO write over IPv6");
        return Ok(());
    }
    let sock = settled("fd95:6::1", || std::net::UdpSocket::bind(format!("[fd95:6::1]:{GENEVE_PORT}")))?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    check!(t.write(&w) == Ok(w.len()), "tunnel GSO write over IPv6: {:?}", t.write(&w));
    six_datagrams(&sock, &data)?;
    let f = Tun::create(n.path, "rt-vt6w1", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF rt-vt6w1: errno {e}"))?;
    ipv6_on("rt-vt6w1")?;
    sh("ip link set rt-vt6w1 up && ip -6 addr add fd95:7::1/64 dev rt-vt6w1")?;
    write_file("/proc/sys/net/ipv6/conf/rt-vt6w0/force_forwarding", "1")?;
    let far = Ip::v6("fd95:6::2", "fd95:7::2");
    for csum in [true, false] {
        let wf = tnl_write_frame(&tnl_write_hdr(far, csum), mac, far, csum, &data);
        check!(t.write(&wf) == Ok(wf.len()), "forwarded write, outer checksum {csum}: {:?}", t.write(&wf));
        six_forwarded(&f, true, csum, &data).map_err(|e| format!("outer checksum {csum}: {e}"))?;
    }
    Ok(())
}

/// Loads geneve and its UDP tunnel modules; on a kernel without geneve
/// (6.12's test kernels) a skip, which 7.3's must not be.
fn geneve_modules() -> TestResult {
    if !std::path::Path::new(&format!("{MODDIR}/geneve.ko")).exists() {
        // 7.3's test kernels build geneve (linux-7.3.config), 6.12's not.
        check!(!kernel_is_7_3(), "no geneve module in the 7.3 guest");
        return Err("SKIP: the kernel has no geneve module".into());
    }
    for m in ["udp_tunnel", "ip6_udp_tunnel", "geneve"] {
        if std::path::Path::new(&format!("{MODDIR}/{m}.ko")).exists() {
            load(m)?;
        }
    }
    Ok(())
}

/// One round of a read-path tunnel test: a TUN `tun` (`vnet_hdr_sz` 24,
/// `TUNSETOFFLOAD` `offload`) at 10.95.`net`.1 (IPv4) or fd95:`net`::1
/// (`v6`), a geneve device `gnv` (10.96.`net`.1, no ARP) whose remote is
/// behind it, with outer UDP checksums as `outer_csum` says (IPv4:
/// `IFLA_GENEVE_UDP_CSUM`, off by default; IPv6: on unless
/// `IFLA_GENEVE_UDP_ZERO_CSUM6_TX`).
struct ReadRound {
    what: &'static str,
    tun: &'static str,
    gnv: &'static str,
    net: u8,
    v6: bool,
    outer_csum: bool,
    offload: libc::c_ulong,
    /// One super-packet expected, else six segments.
    whole: bool,
}

/// A read round: a 6000-byte `UDP_SEGMENT` send (1000-byte segments) into
/// the geneve device reaches the TUN's reader as one super-packet, whose
/// tunnel header says `GSO_UDP_L4` and the outer family's tunnel type,
/// `gso_size` 1000, `NEEDS_CSUM` at the inner UDP checksum and
/// `F_UDP_TUNNEL_CSUM` with the outer checksum, the outer and inner
/// offsets, and whose outer checksum field holds the outer pseudo-header
/// sum with it (zero without); or as six segments (`GSO_NONE`) whose
/// checksums are right once the one the header leaves to the reader
/// (`NEEDS_CSUM`, the inner) is completed: the outer one not zero with the
/// outer checksum, zero without. The payload intact in both.
fn tnl_read_round(n: Node, r: &ReadRound) -> TestResult {
    let _ = sh(&format!("ip link del {}", r.gnv));
    let res = tnl_read_round_in(n, r);
    let _ = sh(&format!("ip link del {}", r.gnv));
    res
}

fn tnl_read_round_in(n: Node, r: &ReadRound) -> TestResult {
    let what = r.what;
    let net = r.net;
    let t = tun_vnet(n, r.tun, IFF_TUN | IFF_NO_PI)?;
    set_hdr_sz(&t, TNL_SIZE as i32)?;
    ioctl_val(t.fd(), TUNSETOFFLOAD, r.offload).map_err(|e| format!("{what}: TUNSETOFFLOAD {:#x}: {e}", r.offload))?;
    let remote = if r.v6 {
        ipv6_on(r.tun)?;
        sh(&format!("ip link set {0} up && ip -6 addr add fd95:{net}::1/64 dev {0}", r.tun))?;
        (IFLA_GENEVE_REMOTE6, v6addr(&format!("fd95:{net}::2")).to_vec())
    } else {
        no_ipv6(r.tun);
        ptp_up(r.tun, &format!("10.95.{net}.1"), &format!("10.95.{net}.2"))?;
        (IFLA_GENEVE_REMOTE, vec![10, 95, net, 2])
    };
    let mut data = vec![(IFLA_GENEVE_ID, 7u32.to_ne_bytes().to_vec()), remote, (IFLA_GENEVE_PORT, GENEVE_PORT.to_be_bytes().to_vec())];
    match (r.v6, r.outer_csum) {
        (false, true) => data.push((IFLA_GENEVE_UDP_CSUM, vec![1])),
        (true, false) => data.push((IFLA_GENEVE_UDP_ZERO_CSUM6_TX, vec![1])),
        _ => {}
    }
    let nl = crate::nl::Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    nl.new_link_data(r.gnv, "geneve", &data).map_err(|e| format!("{what}: geneve: errno {e}"))?;
    // No ARP on the tunnel: nothing answers there.
    no_ipv6(r.gnv);
    sh(&format!("ip addr add 10.96.{net}.1/24 dev {0} && ip link set {0} arp off && ip link set {0} up", r.gnv))?;
    drain(&t);
    let sock = std::net::UdpSocket::bind(format!("10.96.{net}.1:7200")).map_err(|e| e.to_string())?;
    let seg: libc::c_int = 1000;
    // SAFETY: UDP_SEGMENT (103) at SOL_UDP (17), an int.
    let rc = unsafe { libc::setsockopt(sock.as_raw_fd(), 17, 103, (&seg as *const libc::c_int).cast(), 4) };
    check!(rc == 0, "UDP_SEGMENT: errno {}", errno());
    let payload: Vec<u8> = (0..6000u32).map(|i| (i * 5 + i / 249 + u32::from(net)) as u8).collect();
    sock.send_to(&payload, format!("10.96.{net}.2:9")).map_err(|e| format!("{what}: send: {e}"))?;
    let oh = if r.v6 { 40 } else { 20 };
    // Outer IP + UDP + geneve + inner Ethernet, IPv4, UDP.
    let hl = oh + 8 + TNL_INNER;
    let mut buf = vec![0u8; 70000];
    let mut got = Vec::new();
    let t0 = Instant::now();
    let want = if r.whole { 1 } else { 6 };
    let mut seen = 0;
    while seen < want {
        check!(t0.elapsed() < Duration::from_secs(5), "{what}: {seen} of {want} packets within 5 s");
        let Ok(m) = t.read_timeout(&mut buf, Duration::from_millis(500)) else { continue };
        if m < TNL_SIZE || !is_geneve(&buf[TNL_SIZE..m]) {
            continue;
        }
        let h = Tnl::parse(&buf);
        let ip = &mut buf[TNL_SIZE..m];
        if r.whole {
            let inner_nh = (oh + 8 + 8 + 14) as u16;
            let tunnel = if r.v6 { GSO_UDP_TUNNEL_IPV6 } else { GSO_UDP_TUNNEL_IPV4 };
            let flags = F_NEEDS_CSUM | if r.outer_csum { F_UDP_TUNNEL_CSUM } else { 0 };
            check!(ip.len() == hl + payload.len(), "{what}: super-packet of {} bytes", ip.len());
            check!(
                h.h.gso_type == GSO_UDP_L4 | tunnel && h.h.gso_size == 1000 && h.h.flags == flags
                    && h.h.csum_start == inner_nh + 20 && h.h.csum_offset == 6 && h.outer_th == oh as u16 && h.inner_nh == inner_nh,
                "{what}: tunnel header {h:?}"
            );
            let Some((outer, udp)) = Ip::of(ip) else { return Err(format!("{what}: not UDP")) };
            let c = u16::from_be_bytes([udp[6], udp[7]]);
            let want_c = if r.outer_csum { outer.seed(udp.len()) } else { 0 };
            check!(c == want_c, "{what}: outer UDP checksum field {c:#06x}, want {want_c:#06x}");
            got.extend_from_slice(&ip[hl..]);
        } else {
            check!(ip.len() == hl + 1000, "{what}: segment {seen} of {} bytes", ip.len());
            check!(h.h.gso_type == GSO_NONE && h.h.flags & !(F_NEEDS_CSUM | F_DATA_VALID) == 0, "{what}: segment {seen}: header {h:?}");
            if h.h.flags & F_NEEDS_CSUM != 0 {
                // The outer checksum counts the inner one as completed
                // (local checksum offload).
                let (s, o) = (usize::from(h.h.csum_start), usize::from(h.h.csum_start) + usize::from(h.h.csum_offset));
                check!(o + 2 <= ip.len(), "{what}: segment {seen}: checksum at {s}+{} past the packet", h.h.csum_offset);
                let c = pkt::csum(&ip[s..]);
                ip[o..o + 2].copy_from_slice(&c.to_be_bytes());
            }
            let p = tnl_segment(ip, r.v6, r.outer_csum, &format!("{what}: segment {seen}"))?;
            got.extend_from_slice(p);
        }
        seen += 1;
    }
    check!(got == payload, "{what}: the payload differs");
    Ok(())
}

const PLAIN_OFFLOAD: libc::c_ulong = TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6;

/// UDP-tunnel GSO on the read path: a geneve device (IPv4, no outer
/// checksum) whose remote is reached through a TUN device; a 6000-byte
/// `UDP_SEGMENT` send (1000-byte segments) into it reaches the reader as
/// one super-packet with the tunnel header (7.3 with
/// `TUN_F_UDP_TUNNEL_GSO`: `GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV4`, the outer
/// and inner offsets, `NEEDS_CSUM` at the inner UDP checksum, outer
/// checksum field zero; tun.c's `hw_enc_features` let it through whole),
/// and as six segments without the tunnel offload (USO only), their
/// checksums right (outer none) once the reader completes the inner one
/// (see [`tnl_read_round`]). Skipped on 6.12 (no geneve in its test
/// kernels; `TUN_F_UDP_TUNNEL_GSO` is `EINVAL` there).
pub fn t_vnet_tnl_read(n: Node) -> TestResult {
    geneve_modules()?;
    let s73 = kernel_is_7_3();
    if !s73 {
        let t = tun_vnet(n, "rt-vtr0", IFF_TUN | IFF_NO_PI)?;
        expect_errno!(ioctl_val(t.fd(), TUNSETOFFLOAD, PLAIN_OFFLOAD | TUN_F_UDP_TUNNEL_GSO), libc::EINVAL, "6.12: TUN_F_UDP_TUNNEL_GSO");
    }
    let tunnel = if s73 { PLAIN_OFFLOAD | TUN_F_UDP_TUNNEL_GSO } else { PLAIN_OFFLOAD };
    let rounds = [
        ReadRound { what: "tunnel offload", tun: "rt-vtr0", gnv: "rt-gnv0", net: 2, v6: false, outer_csum: false, offload: tunnel, whole: s73 },
        ReadRound { what: "USO only", tun: "rt-vtr1", gnv: "rt-gnv1", net: 3, v6: false, outer_csum: false, offload: PLAIN_OFFLOAD, whole: false },
    ];
    for r in &rounds {
        tnl_read_round(n, r)?;
    }
    Ok(())
}

/// The outer UDP checksum on the read path (7.3): a geneve device over
/// IPv4 with outer UDP checksums (`IFLA_GENEVE_UDP_CSUM`, `ip link ... udpcsum`:
/// `SKB_GSO_UDP_TUNNEL_CSUM`), as in [`t_vnet_tnl_read`]. With
/// `TUN_F_UDP_TUNNEL_GSO | TUN_F_UDP_TUNNEL_GSO_CSUM` the reader gets one
/// super-packet whose header has `F_UDP_TUNNEL_CSUM` beside `NEEDS_CSUM`
/// and whose outer checksum field holds the outer pseudo-header sum (what
/// the write path takes, [`t_vnet_tnl_csum_write`]); with
/// `TUN_F_UDP_TUNNEL_GSO` alone the device cannot take the outer checksum
/// (no `NETIF_F_GSO_UDP_TUNNEL_CSUM`) and the stack segments it first:
/// six packets, each with its outer checksum right once the reader
/// completes the inner one the header leaves to it. Skipped on 6.12 (no
/// geneve there).
pub fn t_vnet_tnl_csum_read(n: Node) -> TestResult {
    geneve_modules()?;
    let rounds = [
        ReadRound {
            what: "outer checksum, TUN_F_UDP_TUNNEL_GSO_CSUM",
            tun: "rt-vtr2",
            gnv: "rt-gnv2",
            net: 6,
            v6: false,
            outer_csum: true,
            offload: PLAIN_OFFLOAD | TUN_F_UDP_TUNNEL_GSO | TUN_F_UDP_TUNNEL_GSO_CSUM,
            whole: true,
        },
        ReadRound {
            what: "outer checksum, TUN_F_UDP_TUNNEL_GSO alone",
            tun: "rt-vtr3",
            gnv: "rt-gnv3",
            net: 7,
            v6: false,
            outer_csum: true,
            offload: PLAIN_OFFLOAD | TUN_F_UDP_TUNNEL_GSO,
            whole: false,
        },
    ];
    for r in &rounds {
        tnl_read_round(n, r)?;
    }
    Ok(())
}

/// IPv6 outer headers on the read path (7.3): a geneve device whose IPv6
/// remote (`IFLA_GENEVE_REMOTE6`) is behind a TUN device with IPv6 on, as
/// in [`t_vnet_tnl_read`]. Geneve over IPv6 checksums its UDP by default:
/// with `TUN_F_UDP_TUNNEL_GSO | TUN_F_UDP_TUNNEL_GSO_CSUM` one super-packet
/// with `GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV6`, `F_UDP_TUNNEL_CSUM`, the outer
/// transport at 40 and the inner network header at 70, the outer field the
/// IPv6 pseudo-header sum; with `TUN_F_UDP_TUNNEL_GSO` alone six segments
/// with right outer checksums; with the outer checksum off
/// (`IFLA_GENEVE_UDP_ZERO_CSUM6_TX`) and `TUN_F_UDP_TUNNEL_GSO` alone one
/// super-packet again, without the flag, its outer checksum zero. Skipped
/// on 6.12 (no geneve there).
pub fn t_vnet_tnl6_read(n: Node) -> TestResult {
    geneve_modules()?;
    let tnl = PLAIN_OFFLOAD | TUN_F_UDP_TUNNEL_GSO;
    let rounds = [
        ReadRound {
            what: "IPv6, outer checksum, TUN_F_UDP_TUNNEL_GSO_CSUM",
            tun: "rt-vtr4",
            gnv: "rt-gnv4",
            net: 8,
            v6: true,
            outer_csum: true,
            offload: tnl | TUN_F_UDP_TUNNEL_GSO_CSUM,
            whole: true,
        },
        ReadRound {
            what: "IPv6, outer checksum, TUN_F_UDP_TUNNEL_GSO alone",
            tun: "rt-vtr5",
            gnv: "rt-gnv5",
            net: 9,
            v6: true,
            outer_csum: true,
            offload: tnl,
            whole: false,
        },
        ReadRound {
            what: "IPv6, no outer checksum, TUN_F_UDP_TUNNEL_GSO alone",
            tun: "rt-vtr6",
            gnv: "rt-gnv6",
            net: 10,
            v6: true,
            outer_csum: false,
            offload: tnl,
            whole: true,
        },
    ];
    for r in &rounds {
        tnl_read_round(n, r)?;
    }
    Ok(())
}
