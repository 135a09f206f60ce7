//! 802.1Q tags the stack keeps out of band (`skb->vlan_tci`), which tun's
//! read path (`tun_put_user()`) puts back in the frame at offset 12, after
//! the vnet header and before the rest: a VLAN device (8021q) on a TAP,
//! and a VLAN-aware bridge with TAPs as tagged and untagged ports. The
//! frames read are compared byte for byte with what tun.c gives (the
//! expectations below, which the C run checks), with plain reads, with
//! `IFF_VNET_HDR` (where `csum_start` counts the tag) and with read buffers
//! that end before, inside and after the tag; and the counters
//! (`tx_bytes` counts the tag). `t_vlan_on_tap` (link.rs) covers tags in
//! band both ways through an `AF_PACKET` socket on the TAP itself; the
//! Debian topology test (clients-smoke.sh) pings over VLAN 42.

use super::*;
use crate::hardening::{packet_socket, setsockopt_int};
use crate::nl::{ifindex, Nl};

/// `IFLA_VLAN_ID` in a `vlan` link's `IFLA_INFO_DATA`.
const IFLA_VLAN_ID: u16 = 1;
/// `IFLA_VLAN_PROTOCOL` (big-endian TPID).
const IFLA_VLAN_PROTOCOL: u16 = 5;
/// `ETH_P_8021AD`: the S-tag's TPID.
const ETH_P_8021AD: u16 = 0x88a8;
/// `IFLA_BR_VLAN_FILTERING` in a `bridge` link's `IFLA_INFO_DATA`.
const IFLA_BR_VLAN_FILTERING: u16 = 7;
const BRIDGE_VLAN_INFO_PVID: u16 = 2;
const BRIDGE_VLAN_INFO_UNTAGGED: u16 = 4;
/// `PACKET_VNET_HDR`: the packet socket's sends start with a
/// `virtio_net_hdr`.
const PACKET_VNET_HDR: i32 = 15;
const TUN_F_CSUM: libc::c_ulong = 1;
const TUN_F_TSO4: libc::c_ulong = 2;
/// The frames' destination: nobody's unicast address.
const PEER: [u8; 6] = [2, 0, 0, 0, 0x5e, 0x42];
const WAIT: Duration = Duration::from_secs(3);

/// Skips the test on a kernel without 802.1Q and the VLAN-aware bridge.
fn need_vlan() -> TestResult {
    if !std::path::Path::new("/proc/net/vlan/config").exists() {
        skip!("no CONFIG_VLAN_8021Q in this kernel");
    }
    Ok(())
}

/// No IPv6 on `name` (no router solicitations or MLD reports among the
/// frames the tests read).
fn no_ipv6(name: &str) {
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
}

/// The payload of the tests' IPv4 frames: `mark` then a pattern.
fn payload(mark: u8, len: usize) -> Vec<u8> {
    let mut p: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    p[0] = 0x45;
    p[1] = mark;
    p
}

/// An Ethernet frame with one tag per `(TPID, TCI)` of `tags`, outermost
/// first, before `ethertype` and `payload`.
fn eth_tags(dst: [u8; 6], src: [u8; 6], tags: &[(u16, u16)], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&src);
    for (tpid, tci) in tags {
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Sends `frame` as is through a (qdisc-bypassing) `AF_PACKET` socket.
fn packet_send(s: &crate::hardening::Sock, frame: &[u8]) -> TestResult {
    // SAFETY: Valid buffer.
    let r = unsafe { libc::send(s.0, frame.as_ptr().cast(), frame.len(), 0) };
    check!(r == frame.len() as isize, "AF_PACKET send: {r}, errno {}", errno());
    Ok(())
}

/// The next frame an `AF_PACKET` socket receives within `timeout`.
fn packet_recv(s: &crate::hardening::Sock, timeout: Duration) -> Option<Vec<u8>> {
    let ev = poll_fd(s.0, libc::POLLIN, timeout).ok()?;
    if ev & libc::POLLIN == 0 {
        return None;
    }
    let mut buf = vec![0u8; 2048];
    // SAFETY: Valid buffer.
    let r = unsafe { libc::recv(s.0, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
    (r >= 0).then(|| buf[..r as usize].to_vec())
}

/// One read of at most `size` bytes: (what `read` returned, the bytes).
fn read_sized(t: &Tun, size: usize) -> Result<(usize, Vec<u8>), String> {
    let mut buf = vec![0u8; size];
    let r = t.read_timeout(&mut buf, WAIT).map_err(|e| format!("read of {size}: errno {e} ({})", errname(e)))?;
    let got = buf[..r.min(size)].to_vec();
    Ok((r, got))
}

/// TAP `tap` (`IFF_TAP | IFF_NO_PI | flags`, non-blocking) with VLAN
/// device `vlan` (VLAN `vid`) on it, both up, neither with IPv6.
fn tap_with_vlan(n: Node, tap: &str, vlan: &str, vid: u16, flags: u16, offload: libc::c_ulong) -> Result<Tun, String> {
    let t = Tun::create_nonblock(n.path, tap, IFF_TAP | IFF_NO_PI | flags).map_err(|e| format!("TUNSETIFF {tap}: errno {e}"))?;
    if offload != 0 {
        ioctl_val(t.fd(), TUNSETOFFLOAD, offload).map_err(|e| format!("TUNSETOFFLOAD {offload:#x}: errno {e}"))?;
    }
    no_ipv6(tap);
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    nl.new_link_on(vlan, ifindex(tap), "vlan", &[(IFLA_VLAN_ID, vid.to_ne_bytes().to_vec())])
        .map_err(|e| format!("ip link add link {tap} name {vlan} type vlan id {vid}: errno {e} ({})", errname(e)))?;
    no_ipv6(vlan);
    sh(&format!("ip link set {tap} up && ip link set {vlan} up"))?;
    // The TAP takes the tag out of band (else the core pushes it into the
    // frame before tun sees it, and the read path's insertion is not
    // what is tested); with `TUN_F_CSUM` the VLAN device inherits the
    // checksum offload, so a partial checksum reaches tun as such.
    let feature = |dev: &str, name: &str| -> Result<bool, String> {
        let f = crate::ethtool::features(dev).map_err(|e| format!("{dev}: GFEATURES: errno {e}"))?;
        f.into_iter().find(|f| f.name == name).map(|f| f.active).ok_or_else(|| format!("{dev}: no feature {name}"))
    };
    check!(feature(tap, "tx-vlan-hw-insert")?, "{tap}: tx-vlan-hw-insert off");
    if offload & TUN_F_CSUM != 0 {
        check!(feature(vlan, "tx-checksum-ip-generic")?, "{vlan}: tx-checksum-ip-generic off");
    }
    Ok(t)
}

/// A VLAN device on a TAP: a frame sent through the VLAN device (the tag
/// out of band, as `vlan_dev_hard_start_xmit()` leaves it for a device
/// with `NETIF_F_HW_VLAN_CTAG_TX`) is read from the TAP with the tag at
/// offset 12; a read buffer ending before, inside or just after the tag
/// gets that much of the tagged frame (`read` returns the buffer's
/// length; the rest of the frame is gone), as tun.c does. An 802.1ad
/// VLAN device's frames get an S-tag (the skb's `vlan_proto`). `tx_packets`/`tx_bytes` count the
/// frames read, the tag included.
pub fn t_vlan_dev_read(n: Node) -> TestResult {
    need_vlan()?;
    const VID: u16 = 5;
    let t = tap_with_vlan(n, "rt-vd0", "rt-vd0v", VID, 0, 0)?;
    let mac = hwaddr("rt-vd0")?;
    let s = packet_socket("rt-vd0v")?;
    let c0 = counters("rt-vd0")?;
    let mut want_bytes = 0u64;
    let mut reads = 0u64;
    for (i, size) in [2048usize, 6, 12, 13, 14, 16, 17, 40].into_iter().enumerate() {
        let p = payload(i as u8, 46);
        let frame = pkt::eth(PEER, mac, pkt::ETH_P_IP, &p);
        let want = pkt::eth_vlan(PEER, mac, VID, pkt::ETH_P_IP, &p);
        packet_send(&s, &frame)?;
        let (r, got) = read_sized(&t, size)?;
        check!(r == want.len().min(size), "read of {size}: returned {r}, expected {} (the tagged frame's {})", want.len().min(size), want.len());
        let k = size.min(want.len());
        check!(got == want[..k], "read of {size}: {got:02x?}, expected {:02x?}", &want[..k]);
        want_bytes += want.len() as u64;
        reads += 1;
    }
    // An 802.1ad (S-tag) VLAN device on the same TAP: the tag put back
    // has the skb's `vlan_proto`.
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    nl.new_link_on("rt-vd0s", ifindex("rt-vd0"), "vlan", &[(IFLA_VLAN_ID, 9u16.to_ne_bytes().to_vec()), (IFLA_VLAN_PROTOCOL, ETH_P_8021AD.to_be_bytes().to_vec())])
        .map_err(|e| format!("ip link add link rt-vd0 name rt-vd0s type vlan proto 802.1ad id 9: errno {e} ({})", errname(e)))?;
    no_ipv6("rt-vd0s");
    sh("ip link set rt-vd0s up")?;
    let s_ad = packet_socket("rt-vd0s")?;
    for size in [2048usize, 14] {
        let p = payload(0x50, 46);
        packet_send(&s_ad, &pkt::eth(PEER, mac, pkt::ETH_P_IP, &p))?;
        let want = eth_tags(PEER, mac, &[(ETH_P_8021AD, 9)], pkt::ETH_P_IP, &p);
        let (r, got) = read_sized(&t, size)?;
        let k = size.min(want.len());
        check!(r == k && got == want[..k], "802.1ad, read of {size}: {got:02x?} ({r}), expected {:02x?}", &want[..k]);
        want_bytes += want.len() as u64;
        reads += 1;
    }
    check!(t.getiff().is_ok_and(|(name, f)| name == "rt-vd0" && f & (IFF_TAP | IFF_NO_PI) == IFF_TAP | IFF_NO_PI), "TUNGETIFF {:?}", t.getiff());
    let mut buf = [0u8; 64];
    check!(t.read(&mut buf) == Err(libc::EAGAIN), "a frame more to read");
    let c1 = counters("rt-vd0")?;
    check!(c1.tx_packets - c0.tx_packets == reads, "tx_packets +{}, expected +{reads}", c1.tx_packets - c0.tx_packets);
    check!(c1.tx_bytes - c0.tx_bytes == want_bytes, "tx_bytes +{}, expected +{want_bytes} (the tags counted)", c1.tx_bytes - c0.tx_bytes);
    check!(c1.tx_dropped == c0.tx_dropped, "tx_dropped {} -> {}", c0.tx_dropped, c1.tx_dropped);
    Ok(())
}

/// The same with `IFF_VNET_HDR`: the 10-byte header, then the tagged
/// frame. A frame sent through the VLAN device with a partial checksum
/// (`PACKET_VNET_HDR`, `NEEDS_CSUM` at the UDP checksum) on a TAP with
/// `TUN_F_CSUM` keeps it: `csum_start` counts the tag put back (14 + 4 +
/// 20 = 38), and so does a TCP GSO packet's (`TUN_F_TSO4`). Read
/// buffers: the header alone, ending inside the addresses, inside the
/// tag, after it; one shorter than the header is `EINVAL` and the frame
/// is gone.
pub fn t_vlan_dev_read_vnet(n: Node) -> TestResult {
    need_vlan()?;
    const VID: u16 = 6;
    const HDR: usize = 10;
    let t = tap_with_vlan(n, "rt-vd1", "rt-vd1v", VID, IFF_VNET_HDR, TUN_F_CSUM | TUN_F_TSO4)?;
    let mac = hwaddr("rt-vd1")?;
    let s = packet_socket("rt-vd1v")?;
    let c0 = counters("rt-vd1")?;
    let (mut reads, mut bytes) = (0u64, 0u64);
    // Without a checksum to finish: a zero header.
    for (i, size) in [2048usize, HDR, HDR + 6, HDR + 12, HDR + 14, HDR + 17].into_iter().enumerate() {
        let p = payload(0x10 + i as u8, 46);
        packet_send(&s, &pkt::eth(PEER, mac, pkt::ETH_P_IP, &p))?;
        let mut want = vec![0u8; HDR];
        let tagged = pkt::eth_vlan(PEER, mac, VID, pkt::ETH_P_IP, &p);
        want.extend_from_slice(&tagged);
        let (r, got) = read_sized(&t, size)?;
        check!(r == want.len().min(size), "read of {size}: returned {r}, expected {}", want.len().min(size));
        let k = size.min(want.len());
        check!(got == want[..k], "read of {size}: {got:02x?}, expected {:02x?}", &want[..k]);
        reads += 1;
        bytes += tagged.len() as u64;
    }
    // Shorter than the vnet header.
    packet_send(&s, &pkt::eth(PEER, mac, pkt::ETH_P_IP, &payload(0x20, 46)))?;
    let mut small = [0u8; HDR - 1];
    check!(poll_fd(t.fd(), libc::POLLIN, WAIT).is_ok_and(|e| e & libc::POLLIN != 0), "no frame to read");
    expect_errno!(t.read(&mut small), libc::EINVAL, "a read shorter than the vnet header");
    let mut buf = [0u8; 2048];
    check!(t.read(&mut buf) == Err(libc::EAGAIN), "the frame of the short read is still there");

    // A partial checksum (UDP in IPv4: csum_start 34, csum_offset 6).
    let v = packet_socket("rt-vd1v")?;
    setsockopt_int(v.0, libc::SOL_PACKET, PACKET_VNET_HDR, 1)?;
    let udp = pkt::ipv4([10, 61, 0, 1], [10, 61, 0, 2], pkt::IPPROTO_UDP, &pkt::udp(4000, 4001, &[0x77; 32]));
    let frame = pkt::eth(PEER, mac, pkt::ETH_P_IP, &udp);
    let mut send = vec![1u8, 0, 0, 0, 0, 0];
    send.extend_from_slice(&34u16.to_le_bytes());
    send.extend_from_slice(&6u16.to_le_bytes());
    send.extend_from_slice(&frame);
    packet_send(&v, &send)?;
    let (r, got) = read_sized(&t, 2048)?;
    let mut want = vec![1u8, 0, 0, 0, 0, 0];
    want.extend_from_slice(&38u16.to_le_bytes());
    want.extend_from_slice(&6u16.to_le_bytes());
    let tagged = pkt::eth_vlan(PEER, mac, VID, pkt::ETH_P_IP, &udp);
    want.extend_from_slice(&tagged);
    check!(r == want.len(), "NEEDS_CSUM: read returned {r}, expected {}", want.len());
    check!(got[..HDR] == want[..HDR], "NEEDS_CSUM: vnet header {:02x?}, expected {:02x?}", &got[..HDR], &want[..HDR]);
    check!(got == want, "NEEDS_CSUM: frame {:02x?}, expected {:02x?}", &got[HDR..], &want[HDR..]);
    reads += 1;
    bytes += tagged.len() as u64;

    // A TCP GSO packet (`TUN_F_TSO4`): its header says what the stack's
    // skb says, `csum_start` counting the tag, `hdr_len` the skb's linear
    // part (`skb_headlen()`: the packet socket's skb of a frame this
    // small is linear, so the whole frame, without the tag); the frame
    // follows whole, tagged.
    let mut tcp = Vec::with_capacity(20 + 3000);
    tcp.extend_from_slice(&4000u16.to_be_bytes());
    tcp.extend_from_slice(&4001u16.to_be_bytes());
    tcp.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    tcp.extend((0..3000u32).map(|i| (i * 13 + i / 256) as u8));
    let ip = pkt::ipv4([10, 61, 0, 1], [10, 61, 0, 2], 6, &tcp);
    let frame = pkt::eth(PEER, mac, pkt::ETH_P_IP, &ip);
    let vhdr = |csum_start: u16, hdr_len: u16| {
        let mut h = vec![1u8, 1];
        for v in [hdr_len, 1000, csum_start, 16] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h
    };
    let mut send = vhdr(34, 54);
    send.extend_from_slice(&frame);
    packet_send(&v, &send)?;
    let (r, got) = read_sized(&t, 65536)?;
    let mut want = vhdr(38, frame.len() as u16);
    let tagged = pkt::eth_vlan(PEER, mac, VID, pkt::ETH_P_IP, &ip);
    want.extend_from_slice(&tagged);
    check!(r == want.len(), "TSO: read returned {r}, expected {}", want.len());
    check!(got[..HDR] == want[..HDR], "TSO: vnet header {:02x?}, expected {:02x?}", &got[..HDR], &want[..HDR]);
    check!(got == want, "TSO: the frame differs (first 64 bytes {:02x?}, expected {:02x?})", &got[HDR..HDR + 64], &want[HDR..HDR + 64]);
    reads += 1;
    bytes += tagged.len() as u64;

    let c1 = counters("rt-vd1")?;
    check!(c1.tx_packets - c0.tx_packets == reads, "tx_packets +{}, expected +{reads}", c1.tx_packets - c0.tx_packets);
    check!(c1.tx_bytes - c0.tx_bytes == bytes, "tx_bytes +{}, expected +{bytes}", c1.tx_bytes - c0.tx_bytes);
    Ok(())
}

/// Tagged frames written to the TAP reach the VLAN device of their VLAN,
/// untagged (an `AF_PACKET` socket on it receives them; its `rx_packets`
/// counts them); a frame of another VLAN and an untagged one do not.
pub fn t_vlan_dev_write(n: Node) -> TestResult {
    need_vlan()?;
    const VID: u16 = 7;
    let t = tap_with_vlan(n, "rt-vd2", "rt-vd2v", VID, 0, 0)?;
    let mac = hwaddr("rt-vd2")?;
    let s = packet_socket("rt-vd2v")?;
    let r0 = stat("rt-vd2v", "rx_packets")?;
    let p = payload(0x30, 46);
    let tagged = pkt::eth_vlan(mac, PEER, VID, pkt::ETH_P_IP, &p);
    check!(t.write(&tagged) == Ok(tagged.len()), "write of a frame tagged {VID}");
    let got = packet_recv(&s, WAIT).ok_or("the VLAN device received nothing")?;
    let want = pkt::eth(mac, PEER, pkt::ETH_P_IP, &p);
    check!(got == want, "the VLAN device received {got:02x?}, expected {want:02x?}");
    for (what, frame) in [
        ("another VLAN's", pkt::eth_vlan(mac, PEER, VID + 1, pkt::ETH_P_IP, &payload(0x31, 46))),
        ("an untagged", pkt::eth(mac, PEER, pkt::ETH_P_IP, &payload(0x32, 46))),
    ] {
        check!(t.write(&frame) == Ok(frame.len()), "write of {what} frame");
        if let Some(f) = packet_recv(&s, Duration::from_millis(300)) {
            return Err(format!("{what} frame reached the VLAN device: {f:02x?}"));
        }
    }
    check!(stat("rt-vd2v", "rx_packets")? == r0 + 1, "the VLAN device's rx_packets +{}, expected +1", stat("rt-vd2v", "rx_packets")? - r0);
    Ok(())
}

/// A VLAN-aware bridge (`vlan_filtering 1`) with two TAP ports: A has
/// VLANs 10 and 20 tagged; B has 10 tagged and 20 as its untagged PVID.
/// - A frame written to B tagged 10 is read from A with the same tag
///   (untagged at B's ingress into `vlan_tci`, kept out of band on A's
///   egress, put back by the read), priority and DEI bits included; one
///   with a second, inner tag keeps that one in the frame.
/// - An untagged one written to B is read from A tagged 20: a tag the
///   frame never had in band, the bridge's.
/// - One written to A tagged 20 is read from B untagged.
/// - One of a VLAN neither has (30) goes nowhere.
///
/// A's reads, also with a buffer ending inside the tag, and A's counters
/// (the tags counted) are tun.c's.
pub fn t_vlan_bridge(n: Node) -> TestResult {
    need_vlan()?;
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let _ = sh("ip link del rt-vbr");
    nl.new_link_data("rt-vbr", "bridge", &[(IFLA_BR_VLAN_FILTERING, vec![1])])
        .map_err(|e| format!("ip link add rt-vbr type bridge vlan_filtering 1: errno {e} ({})", errname(e)))?;
    let r = bridge_body(n, &nl);
    let _ = sh("ip link del rt-vbr");
    r
}

fn bridge_body(n: Node, nl: &Nl) -> TestResult {
    no_ipv6("rt-vbr");
    let br = ifindex("rt-vbr");
    let a = Tun::create_nonblock(n.path, "rt-vba", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF A: errno {e}"))?;
    let b = Tun::create_nonblock(n.path, "rt-vbb", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF B: errno {e}"))?;
    for (name, vlans) in [("rt-vba", [(10, 0), (20, 0)]), ("rt-vbb", [(10, 0), (20, BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED)])] {
        no_ipv6(name);
        nl.set_master(ifindex(name), br).map_err(|e| format!("ip link set {name} master rt-vbr: errno {e}"))?;
        for (vid, flags) in vlans {
            nl.bridge_vlan_add(ifindex(name), vid, flags, false)
                .map_err(|e| format!("bridge vlan add dev {name} vid {vid} flags {flags:#x}: errno {e} ({})", errname(e)))?;
        }
    }
    sh("ip link set rt-vbr up && ip link set rt-vba up && ip link set rt-vbb up")?;
    for name in ["rt-vba", "rt-vbb"] {
        check!(wait_sysfs(name, "brport/state", "3"), "{name}: port state {} (3: forwarding)", sysfs(name, "brport/state"));
    }
    let src: [u8; 6] = [2, 0, 0, 0, 0xb0, 0x0b];
    let ca0 = counters("rt-vba")?;
    let mut bytes = 0u64;

    // Tagged 10 with priority 5 and DEI: the whole TCI crosses; then
    // with a second (inner) tag, which stays in the frame.
    for (what, tags) in [("tagged 10, PCP 5, DEI", vec![(pkt::ETH_P_8021Q, 0xb00a)]), ("double-tagged 10/77", vec![(pkt::ETH_P_8021Q, 10), (pkt::ETH_P_8021Q, 77)])] {
        let w = eth_tags(PEER, src, &tags, pkt::ETH_P_IP, &payload(0x40 + tags.len() as u8, 46));
        check!(b.write(&w) == Ok(w.len()), "write to B {what}");
        let (r, got) = read_sized(&a, 2048)?;
        check!(r == w.len() && got == w, "{what}: A read {got:02x?} ({r}), expected the frame B was given {w:02x?}");
        bytes += w.len() as u64;
    }

    let p = payload(0x41, 46);
    let w = pkt::eth(PEER, src, pkt::ETH_P_IP, &p);
    let want = pkt::eth_vlan(PEER, src, 20, pkt::ETH_P_IP, &p);
    check!(b.write(&w) == Ok(w.len()), "write to B untagged");
    let (r, got) = read_sized(&a, 2048)?;
    check!(r == want.len() && got == want, "A read {got:02x?} ({r}), expected it tagged 20: {want:02x?}");
    bytes += want.len() as u64;

    // Again, into a buffer that ends inside the tag.
    let p = payload(0x42, 46);
    let w = pkt::eth(PEER, src, pkt::ETH_P_IP, &p);
    let want = pkt::eth_vlan(PEER, src, 20, pkt::ETH_P_IP, &p);
    check!(b.write(&w) == Ok(w.len()), "write to B untagged");
    let (r, got) = read_sized(&a, 14)?;
    check!(r == 14 && got == want[..14], "A read of 14: {got:02x?} ({r}), expected {:02x?} (14)", &want[..14]);
    bytes += want.len() as u64;

    let p = payload(0x43, 46);
    let w = pkt::eth_vlan(PEER, [2, 0, 0, 0, 0xa0, 0x0a], 20, pkt::ETH_P_IP, &p);
    let want = pkt::eth(PEER, [2, 0, 0, 0, 0xa0, 0x0a], pkt::ETH_P_IP, &p);
    check!(a.write(&w) == Ok(w.len()), "write to A tagged 20");
    let (r, got) = read_sized(&b, 2048)?;
    check!(r == want.len() && got == want, "B read {got:02x?} ({r}), expected it untagged: {want:02x?}");

    let w = pkt::eth_vlan(PEER, src, 30, pkt::ETH_P_IP, &payload(0x44, 46));
    check!(b.write(&w) == Ok(w.len()), "write to B tagged 30");
    thread::sleep(Duration::from_millis(300));
    let mut buf = [0u8; 2048];
    for (name, t) in [("A", &a), ("B", &b)] {
        if let Ok(len) = t.read(&mut buf) {
            return Err(format!("{name} read a frame: {:02x?}", &buf[..len]));
        }
    }
    let ca1 = counters("rt-vba")?;
    check!(ca1.tx_packets - ca0.tx_packets == 4, "A: tx_packets +{}, expected +4", ca1.tx_packets - ca0.tx_packets);
    check!(ca1.tx_bytes - ca0.tx_bytes == bytes, "A: tx_bytes +{}, expected +{bytes}", ca1.tx_bytes - ca0.tx_bytes);
    check!(a.getiff().is_ok_and(|(name, _)| name == "rt-vba"), "TUNGETIFF {:?}", a.getiff());
    Ok(())
}
