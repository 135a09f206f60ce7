//! ethtool (issue 18): what tun.c's `tun_ethtool_ops` answers beyond the
//! driver's identity -- the link settings (`ethtool DEV`, sysfs `speed` and
//! `duplex`, what bonding, the bridge's STP port cost and NetworkManager
//! read), channels (`ethtool -l`), time stamping (`ethtool -T`) and rx
//! coalescing (`ethtool -c`/`-C rx-frames`, tun's `rx_batched`) -- and the
//! TAP's `ndo_features_check` (double-tagged frames keep their offloads).
//! Each test runs on tun and rust_tun with the same expectations; the
//! guest has no ethtool binary, so the tests speak `SIOCETHTOOL`.

use super::*;

const ETHTOOL_GCOALESCE: u32 = 0x0e;
const ETHTOOL_SCOALESCE: u32 = 0x0f;
const ETHTOOL_GCHANNELS: u32 = 0x3c;
const ETHTOOL_SCHANNELS: u32 = 0x3d;
const ETHTOOL_GET_TS_INFO: u32 = 0x41;
const ETHTOOL_GLINKSETTINGS: u32 = 0x4c;
const ETHTOOL_SLINKSETTINGS: u32 = 0x4d;
/// `SOF_TIMESTAMPING_TX_SOFTWARE | RX_SOFTWARE | SOFTWARE`.
pub const SOF_SOFTWARE_ALL: u32 = (1 << 1) | (1 << 3) | (1 << 4);
/// `NAPI_POLL_WEIGHT`: the most `rx-frames` tun keeps.
const NAPI_POLL_WEIGHT: u32 = 64;

/// `struct ethtool_link_settings` with room for the link-mode masks.
#[repr(C)]
#[derive(Clone, Copy)]
struct LinkSettings {
    cmd: u32,
    speed: u32,
    duplex: u8,
    port: u8,
    phy_address: u8,
    autoneg: u8,
    mdio_support: u8,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    link_mode_masks_nwords: i8,
    transceiver: u8,
    master_slave_cfg: u8,
    master_slave_state: u8,
    rate_matching: u8,
    reserved: [u32; 7],
    masks: [u32; 48],
}

/// `ETHTOOL_GLINKSETTINGS`, with its handshake on the masks' size.
fn glinksettings(ifname: &str) -> Result<LinkSettings, i32> {
    // SAFETY: Plain data.
    let mut ls: LinkSettings = unsafe { std::mem::zeroed() };
    ls.cmd = ETHTOOL_GLINKSETTINGS;
    ethtool_cmd(ifname, (&mut ls as *mut LinkSettings).cast())?;
    let nwords = -ls.link_mode_masks_nwords;
    if nwords <= 0 || nwords as usize * 3 > ls.masks.len() {
        return Err(libc::EPROTO);
    }
    // SAFETY: Plain data.
    ls = unsafe { std::mem::zeroed() };
    ls.cmd = ETHTOOL_GLINKSETTINGS;
    ls.link_mode_masks_nwords = nwords;
    ethtool_cmd(ifname, (&mut ls as *mut LinkSettings).cast())?;
    Ok(ls)
}

/// `ETHTOOL_SLINKSETTINGS` of `ls` (as read back, with changes).
fn slinksettings(ifname: &str, mut ls: LinkSettings) -> Result<(), i32> {
    ls.cmd = ETHTOOL_SLINKSETTINGS;
    ethtool_cmd(ifname, (&mut ls as *mut LinkSettings).cast())
}

/// Link settings: tun reports 10000 Mb/s, full duplex, twisted pair, no
/// autonegotiation, on TUN and TAP alike, through the ioctl and through
/// sysfs (`/sys/class/net/DEV/speed`, `duplex`: what bonding, the bridge's
/// STP port cost and NetworkManager read); `ethtool -s DEV speed 1000
/// duplex half` is stored as given and read back, per device.
pub fn t_ethtool_link_ksettings(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-lk0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let p = Tun::create(n.path, "rt-lk1", IFF_TAP).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-lk0 up && ip link set rt-lk1 up")?;
    for name in ["rt-lk0", "rt-lk1"] {
        let ls = glinksettings(name).map_err(|e| format!("{name}: GLINKSETTINGS: errno {e} ({})", errname(e)))?;
        check!(ls.speed == 10000 && ls.duplex == 1, "{name}: speed {} duplex {}", ls.speed, ls.duplex);
        check!(ls.port == 0 && ls.autoneg == 0 && ls.phy_address == 0, "{name}: port {} autoneg {} phy {}", ls.port, ls.autoneg, ls.phy_address);
        let nw = ls.link_mode_masks_nwords as usize;
        check!(ls.masks[..3 * nw].iter().all(|&w| w == 0), "{name}: link modes {:?}", &ls.masks[..3 * nw]);
        check!(sysfs(name, "speed") == "10000", "{name}: sysfs speed {:?}", sysfs(name, "speed"));
        check!(sysfs(name, "duplex") == "full", "{name}: sysfs duplex {:?}", sysfs(name, "duplex"));
    }
    let mut ls = glinksettings("rt-lk1").map_err(|e| format!("GLINKSETTINGS: {e}"))?;
    ls.speed = 1000;
    ls.duplex = 0;
    ls.autoneg = 1;
    let nw = ls.link_mode_masks_nwords as usize;
    ls.masks[nw] = 0x20; // advertising: 1000baseT/Full
    slinksettings("rt-lk1", ls).map_err(|e| format!("SLINKSETTINGS: errno {e} ({})", errname(e)))?;
    let got = glinksettings("rt-lk1").map_err(|e| format!("GLINKSETTINGS: {e}"))?;
    check!(got.speed == 1000 && got.duplex == 0 && got.autoneg == 1, "after set: speed {} duplex {} autoneg {}", got.speed, got.duplex, got.autoneg);
    check!(got.masks[0] == 0 && got.masks[nw] == 0x20, "after set: supported {:#x} advertising {:#x}", got.masks[0], got.masks[nw]);
    check!(sysfs("rt-lk1", "speed") == "1000" && sysfs("rt-lk1", "duplex") == "half", "after set: sysfs {:?} {:?}", sysfs("rt-lk1", "speed"), sysfs("rt-lk1", "duplex"));
    check!(sysfs("rt-lk0", "speed") == "10000", "the other device changed: {:?}", sysfs("rt-lk0", "speed"));
    drop((t, p));
    Ok(())
}

/// `struct ethtool_channels`.
#[repr(C)]
#[derive(Default, Debug)]
struct Channels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

fn gchannels(ifname: &str) -> Result<Channels, i32> {
    let mut c = Channels { cmd: ETHTOOL_GCHANNELS, ..Default::default() };
    ethtool_cmd(ifname, (&mut c as *mut Channels).cast())?;
    Ok(c)
}

/// Channels (`ethtool -l`): one combined channel per attached queue, at
/// most 1 for a single-queue device and `MAX_TAP_QUEUES` (256) for a
/// multi-queue one; a detached queue is not counted; `ethtool -L` is not
/// supported.
pub fn t_ethtool_channels(n: Node) -> TestResult {
    let one = Tun::create(n.path, "rt-ch0", IFF_TAP).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let c = gchannels("rt-ch0").map_err(|e| format!("GCHANNELS: errno {e} ({})", errname(e)))?;
    check!(c.max_combined == 1 && c.combined_count == 1, "single queue: {c:?}");
    check!(c.max_rx == 0 && c.max_tx == 0 && c.rx_count == 0 && c.tx_count == 0, "single queue: {c:?}");
    let q = mq_open(n.path, "rt-ch1", IFF_TAP, 3)?;
    let c = gchannels("rt-ch1").map_err(|e| format!("GCHANNELS: {e}"))?;
    check!(c.max_combined == 256 && c.combined_count == 3, "three queues: {c:?}");
    let mut ifr = IfReq::new("", IFF_DETACH_QUEUE);
    ioctl_ptr(q[1].fd(), TUNSETQUEUE, &mut ifr).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    let c = gchannels("rt-ch1").map_err(|e| format!("GCHANNELS: {e}"))?;
    check!(c.max_combined == 256 && c.combined_count == 2, "one detached: {c:?}");
    let mut s = Channels { cmd: ETHTOOL_SCHANNELS, combined_count: 1, ..Default::default() };
    expect_errno!(ethtool_cmd("rt-ch1", (&mut s as *mut Channels).cast()), libc::EOPNOTSUPP, "SCHANNELS");
    drop((one, q));
    Ok(())
}

/// `struct ethtool_ts_info`.
#[repr(C)]
#[derive(Default, Debug)]
pub struct TsInfo {
    cmd: u32,
    pub so_timestamping: u32,
    pub phc_index: i32,
    pub tx_types: u32,
    tx_reserved: [u32; 3],
    pub rx_filters: u32,
    rx_reserved: [u32; 3],
}

/// `ETHTOOL_GET_TS_INFO` (`ethtool -T`).
pub fn ts_info(ifname: &str) -> Result<TsInfo, i32> {
    let mut ts = TsInfo { cmd: ETHTOOL_GET_TS_INFO, ..Default::default() };
    ethtool_cmd(ifname, (&mut ts as *mut TsInfo).cast())?;
    Ok(ts)
}

/// Time stamping (`ethtool -T`): software time stamps on both paths
/// (`ethtool_op_get_ts_info`: the transmit path stamps with
/// `skb_tx_timestamp()`), no hardware clock, no hardware stamping.
pub fn t_ethtool_ts_info(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-ts0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let ts = ts_info(&t.name).map_err(|e| format!("GET_TS_INFO: errno {e}"))?;
    check!(ts.so_timestamping == SOF_SOFTWARE_ALL, "so_timestamping {:#x}, expected {SOF_SOFTWARE_ALL:#x}", ts.so_timestamping);
    check!(ts.phc_index == -1 && ts.tx_types == 0 && ts.rx_filters == 0, "{ts:?}");
    Ok(())
}

/// `struct ethtool_coalesce`: the command and 22 parameters.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
struct Coalesce {
    cmd: u32,
    rx_coalesce_usecs: u32,
    rx_max_coalesced_frames: u32,
    rest: [u32; 20],
}

fn gcoalesce(ifname: &str) -> Result<Coalesce, i32> {
    let mut c = Coalesce { cmd: ETHTOOL_GCOALESCE, ..Default::default() };
    ethtool_cmd(ifname, (&mut c as *mut Coalesce).cast())?;
    Ok(c)
}

fn scoalesce(ifname: &str, mut c: Coalesce) -> Result<(), i32> {
    c.cmd = ETHTOOL_SCOALESCE;
    ethtool_cmd(ifname, (&mut c as *mut Coalesce).cast())
}

/// Sets `rx-frames` (`ethtool -C DEV rx-frames N`) and reads it back.
fn set_rx_frames(ifname: &str, frames: u32) -> Result<u32, String> {
    let mut c = gcoalesce(ifname).map_err(|e| format!("GCOALESCE: errno {e} ({})", errname(e)))?;
    c.rx_max_coalesced_frames = frames;
    scoalesce(ifname, c).map_err(|e| format!("SCOALESCE rx-frames {frames}: errno {e} ({})", errname(e)))?;
    Ok(gcoalesce(ifname).map_err(|e| format!("GCOALESCE: {e}"))?.rx_max_coalesced_frames)
}

/// rx coalescing (`ethtool -c`/`-C`): `rx-frames` is tun's `rx_batched`,
/// 0 on a new device, stored as set up to `NAPI_POLL_WEIGHT` and clamped
/// there; it is the only parameter (another is `EOPNOTSUPP`, the value
/// stays); per device.
pub fn t_ethtool_coalesce(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-co0", IFF_TAP).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let u = Tun::create(n.path, "rt-co1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let c = gcoalesce("rt-co0").map_err(|e| format!("GCOALESCE: errno {e} ({})", errname(e)))?;
    check!(c.rx_max_coalesced_frames == 0 && c.rx_coalesce_usecs == 0 && c.rest == [0; 20], "new device: {c:?}");
    check!(set_rx_frames("rt-co0", 8)? == 8, "rx-frames 8 not kept");
    check!(set_rx_frames("rt-co0", 1000)? == NAPI_POLL_WEIGHT, "rx-frames 1000 not clamped to {NAPI_POLL_WEIGHT}");
    let mut c = gcoalesce("rt-co0").map_err(|e| format!("GCOALESCE: {e}"))?;
    c.rx_coalesce_usecs = 10;
    expect_errno!(scoalesce("rt-co0", c), libc::EOPNOTSUPP, "SCOALESCE rx-usecs");
    let c = gcoalesce("rt-co0").map_err(|e| format!("GCOALESCE: {e}"))?;
    check!(c.rx_max_coalesced_frames == NAPI_POLL_WEIGHT && c.rx_coalesce_usecs == 0, "after a refused set: {c:?}");
    check!(gcoalesce("rt-co1").is_ok_and(|c| c.rx_max_coalesced_frames == 0), "the other device changed");
    check!(set_rx_frames("rt-co1", 0)? == 0, "rx-frames 0");
    drop((t, u));
    Ok(())
}

/// Writes with `rx-frames` set (tun's `rx_batched`, `tun_rx_batched()`):
/// a `write(2)` never says more is coming (tun.c's `more` is false there;
/// only `sendmsg(MSG_MORE)` from vhost-net sets it), so each packet
/// reaches the stack before the write returns, in order, and is counted --
/// the same as with batching off.
pub fn t_rx_batched_writes(n: Node) -> TestResult {
    const N: u16 = 40;
    let t = Tun::create(n.path, "rt-rb0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up("rt-rb0", "10.88.0.1", "10.88.0.2")?;
    check!(set_rx_frames("rt-rb0", 16)? == 16, "rx-frames 16 not kept");
    let sock = std::net::UdpSocket::bind("10.88.0.1:7100").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| e.to_string())?;
    let before = counters("rt-rb0")?;
    let mut bytes = 0u64;
    let mut buf = [0u8; 64];
    for i in 0..N {
        let p = pkt::ipv4([10, 88, 0, 2], [10, 88, 0, 1], pkt::IPPROTO_UDP, &pkt::udp(7200, 7100, &i.to_be_bytes()));
        check!(t.write(&p) == Ok(p.len()), "write {i}: {:?}", t.write(&p));
        bytes += p.len() as u64;
        let got = sock.recv(&mut buf).map_err(|e| format!("datagram {i} not delivered: {e}"))?;
        check!(got == 2 && buf[..2] == i.to_be_bytes(), "datagram {i}: got {:?}", &buf[..got]);
    }
    let after = counters("rt-rb0")?;
    check!(after.rx_packets - before.rx_packets == u64::from(N), "rx_packets +{}", after.rx_packets - before.rx_packets);
    check!(after.rx_bytes - before.rx_bytes == bytes, "rx_bytes +{}, expected {bytes}", after.rx_bytes - before.rx_bytes);
    check!(after.rx_dropped == before.rx_dropped, "rx_dropped +{}", after.rx_dropped - before.rx_dropped);
    Ok(())
}

/// A TAP's `ndo_features_check` is `passthru_features_check`: a
/// double-tagged (802.1ad + 802.1Q) TCP frame sent as one GSO packet
/// (`AF_PACKET` with `PACKET_VNET_HDR`) reaches a reader that allowed
/// TSO (`TUNSETOFFLOAD`) as one super-packet with its GSO header; the
/// core's default check (`vlan_features_check()`) would strip the
/// offloads of a multi-tagged frame and segment it first.
pub fn t_tap_qinq_gso(n: Node) -> TestResult {
    const VNET_HDR_LEN: usize = 10;
    const ETH_P_8021AD: u16 = 0x88a8;
    const MSS: u16 = 1000;
    let t = Tun::create(n.path, "rt-qq0", IFF_TAP | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETOFFLOAD, 0x01 | 0x02).map_err(|e| format!("TUNSETOFFLOAD: {e}"))?;
    sh("ip link set rt-qq0 up")?;
    // The frame: addresses, S-tag 100, C-tag 200, IPv4/TCP with 3000
    // bytes; the TCP checksum field holds the pseudo-header sum.
    let (src, dst) = ([10, 89, 0, 1], [10, 89, 0, 2]);
    let data = vec![0x5a; 3000];
    let mut tcp = vec![0u8; 20];
    tcp[0..2].copy_from_slice(&5000u16.to_be_bytes());
    tcp[2..4].copy_from_slice(&80u16.to_be_bytes());
    tcp[4..8].copy_from_slice(&1u32.to_be_bytes());
    tcp[12] = 5 << 4;
    tcp[13] = 0x18;
    tcp[14..16].copy_from_slice(&65535u16.to_be_bytes());
    tcp.extend_from_slice(&data);
    let mut ph = Vec::new();
    ph.extend_from_slice(&src);
    ph.extend_from_slice(&dst);
    ph.extend_from_slice(&[0, 6]);
    ph.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
    let sum = !pkt::csum(&ph);
    tcp[16..18].copy_from_slice(&sum.to_be_bytes());
    let ip = pkt::ipv4(src, dst, 6, &tcp);
    let mut tags = Vec::new();
    tags.extend_from_slice(&100u16.to_be_bytes());
    tags.extend_from_slice(&0x8100u16.to_be_bytes());
    tags.extend_from_slice(&200u16.to_be_bytes());
    tags.extend_from_slice(&0x0800u16.to_be_bytes());
    tags.extend_from_slice(&ip);
    let frame = pkt::eth([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], ETH_P_8021AD, &tags);
    let l4 = 14 + 8 + 20;
    let mut w = vec![0u8; VNET_HDR_LEN];
    w[0] = 1; // NEEDS_CSUM
    w[1] = 1; // GSO_TCPV4
    w[2..4].copy_from_slice(&((l4 + 20) as u16).to_le_bytes());
    w[4..6].copy_from_slice(&MSS.to_le_bytes());
    w[6..8].copy_from_slice(&(l4 as u16).to_le_bytes());
    w[8..10].copy_from_slice(&16u16.to_le_bytes());
    w.extend_from_slice(&frame);
    // SAFETY: Plain data.
    let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_protocol = ETH_P_8021AD.to_be();
    sa.sll_ifindex = crate::nl::ifindex("rt-qq0");
    sa.sll_halen = 6;
    // SAFETY: A socket of ours, a valid option value and buffers.
    let (r, e) = unsafe {
        let s = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
        let one: libc::c_int = 1;
        // SOL_PACKET, PACKET_VNET_HDR.
        let o = libc::setsockopt(s, 263, 15, (&one as *const libc::c_int).cast(), 4);
        let r = if o == 0 {
            libc::sendto(s, w.as_ptr().cast(), w.len(), 0, (&sa as *const libc::sockaddr_ll).cast(), std::mem::size_of_val(&sa) as u32)
        } else {
            -1
        };
        let e = errno();
        libc::close(s);
        (r, e)
    };
    check!(r == w.len() as isize, "AF_PACKET send: {r}, errno {e}");
    let is_ours = |p: &[u8]| p.len() > VNET_HDR_LEN + 14 && p[VNET_HDR_LEN + 12..VNET_HDR_LEN + 14] == ETH_P_8021AD.to_be_bytes();
    let got = read_until(&t, Duration::from_secs(3), is_ours)?;
    let (gso_type, gso_size) = (got[1], u16::from_le_bytes([got[4], got[5]]));
    check!(gso_type == 1 && gso_size == MSS, "first packet: {} bytes, gso_type {gso_type} gso_size {gso_size} (segmented?)", got.len());
    check!(got[VNET_HDR_LEN..] == frame[..], "super-packet of {} bytes is not the frame sent ({} bytes)", got.len() - VNET_HDR_LEN, frame.len());
    Ok(())
}

const ETHTOOL_GDRVINFO: u32 = 0x03;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETHTOOL_GFEATURES: u32 = 0x3a;
/// `ETH_SS_FEATURES`: the feature names' string set.
const ETH_SS_FEATURES: u32 = 4;
const ETH_GSTRING_LEN: usize = 32;

/// `ETHTOOL_GDRVINFO` (`ethtool -i`), every field.
pub fn drvinfo(ifname: &str) -> Result<EthtoolDrvinfo, i32> {
    // SAFETY: Plain data.
    let mut info: EthtoolDrvinfo = unsafe { std::mem::zeroed() };
    info.cmd = ETHTOOL_GDRVINFO;
    ethtool_cmd(ifname, (&mut info as *mut EthtoolDrvinfo).cast())?;
    Ok(info)
}

/// A NUL-padded string field of an ethtool structure.
pub fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// One device feature as `ETHTOOL_GFEATURES` reports it (`ethtool -k`):
/// its name (`ETH_SS_FEATURES`), whether it is on (`active`: the device's
/// `features`), changeable (`available`: `hw_features`), requested
/// (`wanted_features`) and never changeable (`never_changed`, what
/// `ethtool -k` prints as `[fixed]` with the unavailable ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    pub name: String,
    pub active: bool,
    pub available: bool,
    pub requested: bool,
    pub never_changed: bool,
}

/// Every named feature of `ifname` (`ETHTOOL_GSSET_INFO`, `ETHTOOL_GSTRINGS`,
/// `ETHTOOL_GFEATURES`: what `ethtool -k` asks).
pub fn features(ifname: &str) -> Result<Vec<Feature>, i32> {
    // struct ethtool_sset_info: cmd, reserved, sset_mask, data[1].
    let mut sset = [0u32; 5];
    sset[0] = ETHTOOL_GSSET_INFO;
    sset[2] = 1 << ETH_SS_FEATURES;
    ethtool_cmd(ifname, sset.as_mut_ptr().cast())?;
    if sset[2] != 1 << ETH_SS_FEATURES {
        return Err(libc::EPROTO);
    }
    let count = sset[4] as usize;
    // struct ethtool_gstrings: cmd, string_set, len, data[len][32].
    let mut strings = vec![0u32; 3 + count * ETH_GSTRING_LEN / 4];
    strings[..3].copy_from_slice(&[ETHTOOL_GSTRINGS, ETH_SS_FEATURES, count as u32]);
    ethtool_cmd(ifname, strings.as_mut_ptr().cast())?;
    let bytes: Vec<u8> = strings[3..].iter().flat_map(|w| w.to_ne_bytes()).collect();
    // struct ethtool_gfeatures: cmd, size, features[size] of (available,
    // requested, active, never_changed).
    let words = count.div_ceil(32);
    let mut g = vec![0u32; 2 + 4 * words];
    g[..2].copy_from_slice(&[ETHTOOL_GFEATURES, words as u32]);
    ethtool_cmd(ifname, g.as_mut_ptr().cast())?;
    let bit = |i: usize, k: usize| g[2 + 4 * (i / 32) + k] & (1 << (i % 32)) != 0;
    Ok((0..count)
        .map(|i| Feature {
            name: cstr(&bytes[i * ETH_GSTRING_LEN..(i + 1) * ETH_GSTRING_LEN]),
            available: bit(i, 0),
            requested: bit(i, 1),
            active: bit(i, 2),
            never_changed: bit(i, 3),
        })
        .filter(|f| !f.name.is_empty())
        .collect())
}
