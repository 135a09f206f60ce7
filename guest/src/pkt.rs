//! Packet builders and parsers for the guest tests: IPv4, ICMP echo, UDP,
//! Ethernet and ARP. Pure logic, tested on the host with `cargo test`.

/// EtherType of IPv4.
pub const ETH_P_IP: u16 = 0x0800;
/// EtherType of ARP.
pub const ETH_P_ARP: u16 = 0x0806;
/// IP protocol number of ICMP.
pub const IPPROTO_ICMP: u8 = 1;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;

/// The Internet checksum (RFC 1071) of `data`.
pub fn csum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for chunk in data.chunks(2) {
        let word = if chunk.len() == 2 {
            u16::from_be_bytes([chunk[0], chunk[1]])
        } else {
            u16::from_be_bytes([chunk[0], 0])
        };
        sum += u32::from(word);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 packet with a 20-byte header around `payload`.
pub fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    let total = 20 + payload.len();
    let mut p = vec![0u8; 20];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[6] = 0x40; // DF
    p[8] = 64;
    p[9] = proto;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    let c = csum(&p);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(payload);
    p
}

/// An ICMP echo message (`ty` 8 request, 0 reply).
pub fn icmp_echo(ty: u8, id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut m = vec![ty, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(data);
    let c = csum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

/// A parsed IPv4 packet.
#[derive(Debug, PartialEq, Eq)]
pub struct Ipv4<'a> {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub proto: u8,
    pub payload: &'a [u8],
}

/// Parses an IPv4 packet, checking version, lengths and header checksum.
pub fn parse_ipv4(p: &[u8]) -> Option<Ipv4<'_>> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(p[0] & 0xf) * 4;
    let total = usize::from(u16::from_be_bytes([p[2], p[3]]));
    if ihl < 20 || total < ihl || total > p.len() || csum(&p[..ihl]) != 0 {
        return None;
    }
    Some(Ipv4 {
        src: p[12..16].try_into().ok()?,
        dst: p[16..20].try_into().ok()?,
        proto: p[9],
        payload: &p[ihl..total],
    })
}

/// A parsed ICMP echo: (type, id, seq, data), checksum verified.
pub fn parse_icmp_echo(m: &[u8]) -> Option<(u8, u16, u16, &[u8])> {
    if m.len() < 8 || csum(m) != 0 || (m[0] != 0 && m[0] != 8) {
        return None;
    }
    Some((
        m[0],
        u16::from_be_bytes([m[4], m[5]]),
        u16::from_be_bytes([m[6], m[7]]),
        &m[8..],
    ))
}

/// The echo reply to an IPv4 ICMP echo request, or `None` if `p` is not one.
pub fn echo_reply_for(p: &[u8]) -> Option<Vec<u8>> {
    let ip = parse_ipv4(p)?;
    if ip.proto != IPPROTO_ICMP {
        return None;
    }
    let (ty, id, seq, data) = parse_icmp_echo(ip.payload)?;
    if ty != 8 {
        return None;
    }
    Some(ipv4(ip.dst, ip.src, IPPROTO_ICMP, &icmp_echo(0, id, seq, data)))
}

/// A UDP datagram (checksum 0: none, allowed over IPv4).
pub fn udp(sport: u16, dport: u16, data: &[u8]) -> Vec<u8> {
    let mut d = Vec::with_capacity(8 + data.len());
    d.extend_from_slice(&sport.to_be_bytes());
    d.extend_from_slice(&dport.to_be_bytes());
    d.extend_from_slice(&((8 + data.len()) as u16).to_be_bytes());
    d.extend_from_slice(&[0, 0]);
    d.extend_from_slice(data);
    d
}

/// The (source port, destination port) of a UDP datagram in an IPv4 packet.
pub fn udp_ports(p: &[u8]) -> Option<(u16, u16)> {
    let ip = parse_ipv4(p)?;
    if ip.proto != IPPROTO_UDP || ip.payload.len() < 8 {
        return None;
    }
    Some((
        u16::from_be_bytes([ip.payload[0], ip.payload[1]]),
        u16::from_be_bytes([ip.payload[2], ip.payload[3]]),
    ))
}

/// An Ethernet frame.
pub fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + payload.len());
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A parsed Ethernet frame: (dst, src, ethertype, payload).
pub fn parse_eth(f: &[u8]) -> Option<([u8; 6], [u8; 6], u16, &[u8])> {
    if f.len() < 14 {
        return None;
    }
    Some((
        f[0..6].try_into().ok()?,
        f[6..12].try_into().ok()?,
        u16::from_be_bytes([f[12], f[13]]),
        &f[14..],
    ))
}

/// An ARP packet for IPv4 over Ethernet (`op` 1 request, 2 reply).
pub fn arp(op: u16, sha: [u8; 6], spa: [u8; 4], tha: [u8; 6], tpa: [u8; 4]) -> Vec<u8> {
    let mut a = vec![0, 1, 8, 0, 6, 4];
    a.extend_from_slice(&op.to_be_bytes());
    a.extend_from_slice(&sha);
    a.extend_from_slice(&spa);
    a.extend_from_slice(&tha);
    a.extend_from_slice(&tpa);
    a
}

/// A parsed ARP packet: (op, sha, spa, tha, tpa).
pub fn parse_arp(a: &[u8]) -> Option<(u16, [u8; 6], [u8; 4], [u8; 6], [u8; 4])> {
    if a.len() < 28 || a[0..6] != [0, 1, 8, 0, 6, 4] {
        return None;
    }
    Some((
        u16::from_be_bytes([a[6], a[7]]),
        a[8..14].try_into().ok()?,
        a[14..18].try_into().ok()?,
        a[18..24].try_into().ok()?,
        a[24..28].try_into().ok()?,
    ))
}

/// EtherType of an 802.1Q VLAN tag.
pub const ETH_P_8021Q: u16 = 0x8100;
/// IPv6 next header of ICMPv6.
pub const IPPROTO_ICMPV6: u8 = 58;

/// An IPv6 packet around `payload` (hop limit 64).
pub fn ipv6(src: [u8; 16], dst: [u8; 16], next: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    p.push(next);
    p.push(64);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(payload);
    p
}

/// An ICMPv6 echo message (`ty` 128 request, 129 reply) from `src` to
/// `dst`, its checksum over the IPv6 pseudo-header.
pub fn icmpv6_echo(src: [u8; 16], dst: [u8; 16], ty: u8, id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut m = vec![ty, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(data);
    let mut pseudo = Vec::with_capacity(40 + m.len());
    pseudo.extend_from_slice(&src);
    pseudo.extend_from_slice(&dst);
    pseudo.extend_from_slice(&(m.len() as u32).to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, IPPROTO_ICMPV6]);
    pseudo.extend_from_slice(&m);
    let c = csum(&pseudo);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

/// A parsed IPv6 packet: (source, destination, next header, payload).
pub fn parse_ipv6(p: &[u8]) -> Option<([u8; 16], [u8; 16], u8, &[u8])> {
    if p.len() < 40 || p[0] >> 4 != 6 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([p[4], p[5]]));
    let payload = p.get(40..40 + len)?;
    Some((p[8..24].try_into().ok()?, p[24..40].try_into().ok()?, p[6], payload))
}

/// An Ethernet frame with an 802.1Q tag (`vid`) in front of `ethertype`.
pub fn eth_vlan(dst: [u8; 6], src: [u8; 6], vid: u16, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut tagged = Vec::with_capacity(4 + payload.len());
    tagged.extend_from_slice(&(vid & 0xfff).to_be_bytes());
    tagged.extend_from_slice(&ethertype.to_be_bytes());
    tagged.extend_from_slice(payload);
    eth(dst, src, ETH_P_8021Q, &tagged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icmpv6_checksum_verifies() {
        let (src, dst) = ([0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        let m = icmpv6_echo(src, dst, 128, 7, 1, b"v6");
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&src);
        pseudo.extend_from_slice(&dst);
        pseudo.extend_from_slice(&(m.len() as u32).to_be_bytes());
        pseudo.extend_from_slice(&[0, 0, 0, IPPROTO_ICMPV6]);
        pseudo.extend_from_slice(&m);
        assert_eq!(csum(&pseudo), 0);
        let p = ipv6(src, dst, IPPROTO_ICMPV6, &m);
        let (s, d, nh, pl) = parse_ipv6(&p).unwrap();
        assert_eq!((s, d, nh, pl), (src, dst, IPPROTO_ICMPV6, &m[..]));
    }

    #[test]
    fn vlan_tag_sits_before_the_ethertype() {
        let f = eth_vlan([1; 6], [2; 6], 0x123, ETH_P_IP, &[9]);
        assert_eq!(&f[12..19], &[0x81, 0x00, 0x01, 0x23, 0x08, 0x00, 9]);
    }

    #[test]
    fn checksum_of_rfc1071_example() {
        // RFC 1071 section 3: 0x0001 0xf203 0xf4f5 0xf6f7 sums to 0xddf2.
        assert_eq!(csum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), !0xddf2);
        // Odd length pads with a zero byte.
        assert_eq!(csum(&[0xff]), !0xff00);
    }

    #[test]
    fn ipv4_round_trip_and_checksum() {
        let p = ipv4([10, 0, 0, 2], [10, 0, 0, 1], IPPROTO_UDP, &udp(1, 9, b"hi"));
        assert_eq!(p.len(), 20 + 8 + 2);
        let ip = parse_ipv4(&p).expect("valid");
        assert_eq!(ip.src, [10, 0, 0, 2]);
        assert_eq!(ip.dst, [10, 0, 0, 1]);
        assert_eq!(ip.proto, IPPROTO_UDP);
        assert_eq!(udp_ports(&p), Some((1, 9)));
        let mut bad = p.clone();
        bad[8] ^= 1; // TTL changed without fixing the checksum.
        assert!(parse_ipv4(&bad).is_none());
        assert!(parse_ipv4(&p[..19]).is_none());
    }

    #[test]
    fn echo_reply_swaps_addresses_and_keeps_id_seq_data() {
        let req = ipv4(
            [10, 0, 0, 2],
            [10, 0, 0, 1],
            IPPROTO_ICMP,
            &icmp_echo(8, 0x1234, 7, b"payload"),
        );
        let rep = echo_reply_for(&req).expect("a request");
        let ip = parse_ipv4(&rep).expect("valid ip");
        assert_eq!((ip.src, ip.dst), ([10, 0, 0, 1], [10, 0, 0, 2]));
        assert_eq!(
            parse_icmp_echo(ip.payload),
            Some((0, 0x1234, 7, &b"payload"[..]))
        );
        // A reply is not answered.
        assert!(echo_reply_for(&rep).is_none());
    }

    #[test]
    fn arp_and_ethernet_round_trip() {
        let a = arp(1, [2, 0, 0, 0, 0, 2], [10, 1, 0, 2], [0; 6], [10, 1, 0, 1]);
        let f = eth([0xff; 6], [2, 0, 0, 0, 0, 2], ETH_P_ARP, &a);
        let (dst, src, ty, payload) = parse_eth(&f).expect("frame");
        assert_eq!((dst, src, ty), ([0xff; 6], [2, 0, 0, 0, 0, 2], ETH_P_ARP));
        let (op, sha, spa, _tha, tpa) = parse_arp(payload).expect("arp");
        assert_eq!((op, sha, spa, tpa), (1, [2, 0, 0, 0, 0, 2], [10, 1, 0, 2], [10, 1, 0, 1]));
        assert!(parse_arp(&payload[..27]).is_none());
    }
}
