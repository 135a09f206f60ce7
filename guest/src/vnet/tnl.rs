//! 7.3's `drivers/net/tun_vnet.h` on both drivers, each test expecting the
//! running kernel's tun.c (7.3 or 6.12) of tun and rust_tun alike: the
//! read path's padding up to `vnet_hdr_sz` (zeroed on 7.3, left as the
//! buffer held it on 6.12), the write path's `hdr_len` bound (7.3 counts
//! the padding), and UDP-tunnel GSO (7.3: `TUNSETOFFLOAD`'s flags and the
//! device features, a tunnel GSO write segmented by the stack, a geneve
//! device's GSO packets read whole with the tunnel header).

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
const TNL_SIZE: usize = 24;
const GENEVE_PORT: u16 = 6081;

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

fn no_ipv6(ifname: &str) {
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
struct Tnl {
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

/// A geneve packet over IPv4 (no outer UDP checksum) carrying `inner`, an
/// Ethernet frame.
fn geneve_ipv4(src: [u8; 4], dst: [u8; 4], inner: &[u8]) -> Vec<u8> {
    let mut g = vec![0, 0, 0x65, 0x58, 0, 0, 7, 0];
    g.extend_from_slice(inner);
    pkt::ipv4(src, dst, pkt::IPPROTO_UDP, &pkt::udp(40000, GENEVE_PORT, &g))
}

/// A UDP-tunnel GSO write (7.3, `vnet_hdr_sz` 24, no `TUNSETOFFLOAD`
/// needed: `tun_vnet_hdr_guest_features()`): a geneve packet whose inner
/// UDP payload of 6000 bytes is `GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV4` with
/// `gso_size` 1000 reaches a local socket on the geneve port as six
/// datagrams, each the tunnel's headers and 1000 bytes of the payload in
/// order. Refused with `EINVAL` on both kernels: the tunnel type with a
/// header too small for the tunnel part, both tunnel types at once, an
/// outer transport offset inside the outer IP header; on 6.12 every
/// tunnel type (unknown there).
pub fn t_vnet_tnl_write(n: Node) -> TestResult {
    let t = tun_vnet(n, "rt-vtw0", IFF_TAP | IFF_NO_PI)?;
    no_ipv6("rt-vtw0");
    sh("ip addr add 10.95.1.1/24 dev rt-vtw0 && ip link set rt-vtw0 up")?;
    let mac = std::fs::read_to_string("/sys/class/net/rt-vtw0/address").map_err(|e| e.to_string())?;
    let mac: Vec<u8> = mac.trim().split(':').map(|x| u8::from_str_radix(x, 16).unwrap_or(0)).collect();
    let mac: [u8; 6] = mac.try_into().map_err(|_| "bad address".to_string())?;
    let sock = std::net::UdpSocket::bind(format!("10.95.1.1:{GENEVE_PORT}")).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let data: Vec<u8> = (0..6000u32).map(|i| (i * 11 + i / 253) as u8).collect();
    let inner_ip = udp_partial([10, 200, 0, 2], [10, 200, 0, 1], 5555, 9000, &data);
    let inner = pkt::eth([2, 0, 0, 0, 0xaa, 1], [2, 0, 0, 0, 0xbb, 1], pkt::ETH_P_IP, &inner_ip);
    let frame = pkt::eth(mac, [2, 0, 0, 0, 0x95, 2], pkt::ETH_P_IP, &geneve_ipv4([10, 95, 1, 2], [10, 95, 1, 1], &inner));
    // Outer Ethernet + IPv4: the outer UDP at 34, the inner IPv4 after it
    // and geneve's 8 bytes and the inner Ethernet header, the inner UDP 20
    // bytes on.
    let (outer_th, inner_nh) = (34u16, 34 + 8 + 8 + 14);
    let good = Tnl {
        h: Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV4, hdr_len: inner_nh + 28, gso_size: 1000, csum_start: inner_nh + 20, csum_offset: 6 },
        outer_th,
        inner_nh,
    };
    let with = |sz: usize, h: &Tnl| -> Vec<u8> {
        let mut w = h.bytes()[..sz.min(TNL_SIZE)].to_vec();
        w.resize(sz, 0);
        w.extend_from_slice(&frame);
        w
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
    let mut got = Vec::new();
    let mut buf = vec![0u8; 65536];
    let hl = 8 + 14 + 20 + 8;
    for i in 0..6 {
        let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("segment {i}: {e}"))?;
        check!(m == hl + 1000, "segment {i}: {m} bytes");
        check!(buf[..8] == [0, 0, 0x65, 0x58, 0, 0, 7, 0], "segment {i}: geneve header {:x?}", &buf[..8]);
        got.extend_from_slice(&buf[hl..m]);
    }
    check!(got == data, "the six segments are not the payload");
    Ok(())
}

/// UDP-tunnel GSO on the read path: a geneve device (no outer checksum)
/// whose remote is reached through a TUN device; a 6000-byte
/// `UDP_SEGMENT` send (1000-byte segments) into it reaches the reader as
/// one super-packet with the tunnel header (7.3 with
/// `TUN_F_UDP_TUNNEL_GSO`: `GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV4`, the outer
/// and inner offsets, `NEEDS_CSUM` at the inner UDP checksum; tun.c's
/// `hw_enc_features` let it through whole), and as six segments without
/// the tunnel offload (7.3 with USO only; 6.12, where the flag is
/// `EINVAL`).
pub fn t_vnet_tnl_read(n: Node) -> TestResult {
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
    let s73 = kernel_is_7_3();
    for offload in [true, false] {
        let name = if offload { "rt-vtr0" } else { "rt-vtr1" };
        let gnv = if offload { "rt-gnv0" } else { "rt-gnv1" };
        let _ = sh(&format!("ip link del {gnv}"));
        let t = tun_vnet(n, name, IFF_TUN | IFF_NO_PI)?;
        set_hdr_sz(&t, TNL_SIZE as i32)?;
        let plain = TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6;
        let tunnel = offload && s73;
        if offload && !s73 {
            expect_errno!(ioctl_val(t.fd(), TUNSETOFFLOAD, plain | TUN_F_UDP_TUNNEL_GSO), libc::EINVAL, "6.12: TUN_F_UDP_TUNNEL_GSO");
        }
        let arg = if tunnel { plain | TUN_F_UDP_TUNNEL_GSO } else { plain };
        ioctl_val(t.fd(), TUNSETOFFLOAD, arg).map_err(|e| format!("TUNSETOFFLOAD {arg:#x}: {e}"))?;
        let net = if offload { 2 } else { 3 };
        no_ipv6(name);
        ptp_up(name, &format!("10.95.{net}.1"), &format!("10.95.{net}.2"))?;
        let nl = crate::nl::Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
        // IFLA_GENEVE_ID 1, IFLA_GENEVE_REMOTE 2, IFLA_GENEVE_PORT 5.
        let data = [(1u16, 7u32.to_ne_bytes().to_vec()), (2, vec![10, 95, net, 2]), (5, GENEVE_PORT.to_be_bytes().to_vec())];
        nl.new_link_data(gnv, "geneve", &data).map_err(|e| format!("geneve: errno {e}"))?;
        // No ARP on the tunnel: nothing answers there.
        no_ipv6(gnv);
        sh(&format!("ip addr add 10.96.{net}.1/24 dev {gnv}"))?;
        sh(&format!("ip link set {gnv} arp off"))?;
        sh(&format!("ip link set {gnv} up"))?;
        drain(&t);
        let sock = std::net::UdpSocket::bind(format!("10.96.{net}.1:7200")).map_err(|e| e.to_string())?;
        let seg: libc::c_int = 1000;
        // SAFETY: UDP_SEGMENT (103) at SOL_UDP (17), an int.
        let r = unsafe { libc::setsockopt(sock.as_raw_fd(), 17, 103, (&seg as *const libc::c_int).cast(), 4) };
        check!(r == 0, "UDP_SEGMENT: errno {}", errno());
        let payload: Vec<u8> = (0..6000u32).map(|i| (i * 5 + i / 249) as u8).collect();
        sock.send_to(&payload, format!("10.96.{net}.2:9")).map_err(|e| format!("send: {e}"))?;
        // Outer IPv4 + UDP + geneve + inner Ethernet, IPv4, UDP.
        let hl = 20 + 8 + 8 + 14 + 20 + 8;
        let mut buf = vec![0u8; 70000];
        let mut got = Vec::new();
        let t0 = Instant::now();
        let want = if tunnel { 1 } else { 6 };
        let mut seen = 0;
        while seen < want {
            check!(t0.elapsed() < Duration::from_secs(5), "offload {offload}: {seen} of {want} packets within 5 s");
            let Ok(m) = t.read_timeout(&mut buf, Duration::from_millis(500)) else { continue };
            let ip = &buf[TNL_SIZE..m];
            // The geneve packets only (UDP to the geneve port).
            if ip.len() < hl || ip[9] != pkt::IPPROTO_UDP || ip[22..24] != GENEVE_PORT.to_be_bytes() {
                continue;
            }
            let h = Tnl::parse(&buf);
            if tunnel {
                let inner_nh = 20 + 8 + 8 + 14;
                check!(ip.len() == hl + payload.len(), "super-packet of {} bytes", ip.len());
                check!(
                    h.h.gso_type == GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV4 && h.h.gso_size == 1000 && h.h.flags == F_NEEDS_CSUM
                        && h.h.csum_start == inner_nh + 20 && h.h.csum_offset == 6 && h.outer_th == 20 && h.inner_nh == inner_nh,
                    "tunnel header {h:?}"
                );
            } else {
                check!(ip.len() == hl + 1000, "segment {seen} of {} bytes", ip.len());
                check!(h.h.gso_type == GSO_NONE, "segment {seen}: header {h:?}");
            }
            got.extend_from_slice(&ip[hl..]);
            seen += 1;
        }
        check!(got == payload, "offload {offload}: the payload differs");
        drop(sock);
        let _ = sh(&format!("ip link del {gnv}"));
    }
    Ok(())
}
