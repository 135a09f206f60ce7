//! What the fuzzer's operations do to its devices: bring-up (with the
//! peer's ARP entry), valid and mutated packets with their virtio-net
//! headers, configuration, draining, the normalised snapshots the
//! differential run compares, BPF and transmit filters, the namespace
//! switch.

use super::*;

/// A permanent ARP entry for the TAP device's peer (`SIOCSARP`,
/// `ATF_PERM | ATF_COM`): the stack's packets to the peer go out at once,
/// with no ARP request and no timed retransmissions or probes, which
/// would land between the fuzzer's operations at moments that differ from
/// run to run. A device going down flushes it: `bring_up` puts it back.
pub fn peer_arp(w: &World, dev: usize) {
    #[repr(C)]
    struct ArpReq {
        pa: libc::sockaddr_in,
        ha: libc::sockaddr,
        flags: i32,
        netmask: libc::sockaddr,
        dev: [u8; 16],
    }
    // SAFETY: Plain data.
    let mut req: ArpReq = unsafe { std::mem::zeroed() };
    req.pa.sin_family = libc::AF_INET as u16;
    req.pa.sin_addr.s_addr = u32::from_ne_bytes([10, w.net, DEVS[dev].idx, 2]);
    req.ha.sa_family = 1; // ARPHRD_ETHER
    for (d, s) in req.ha.sa_data.iter_mut().zip(w.peer_mac(dev)) {
        *d = s as libc::c_char;
    }
    req.flags = 0x02 | 0x04; // ATF_COM | ATF_PERM
    let name = w.name(dev);
    req.dev[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: Plain socket for the ARP ioctl.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    let _ = ioctl_ptr(s, 0x8955, &mut req); // SIOCSARP
    // SAFETY: Our socket.
    unsafe { libc::close(s) };
}

/// `set_up(true)`, and the peer's ARP entry on a TAP.
pub fn bring_up(w: &mut World, dev: usize) -> Result<i64, i32> {
    let r = set_up(&w.name(dev), true);
    if r.is_ok() {
        w.up[dev] = true;
        if DEVS[dev].tap {
            peer_arp(w, dev);
        }
    }
    r
}

/// The `virtio_net_hdr` fields (little-endian, as on x86_64).
pub const VNET_HDR_LEN: usize = 10;

pub const VNET_F_NEEDS_CSUM: u8 = 1;

pub const VNET_F_DATA_VALID: u8 = 2;

pub fn vnet_bytes(flags: u8, gso_type: u8, hdr_len: u16, gso_size: u16, csum_start: u16, csum_offset: u16) -> [u8; VNET_HDR_LEN] {
    let mut b = [0u8; VNET_HDR_LEN];
    b[0] = flags;
    b[1] = gso_type;
    b[2..4].copy_from_slice(&hdr_len.to_le_bytes());
    b[4..6].copy_from_slice(&gso_size.to_le_bytes());
    b[6..8].copy_from_slice(&csum_start.to_le_bytes());
    b[8..10].copy_from_slice(&csum_offset.to_le_bytes());
    b
}

/// A vnet header of `hdrsz` bytes for packet `p` (its IP header at `l3`),
/// valid or not: none (all zero), a checksum to complete (`NEEDS_CSUM`
/// at the L4 checksum, or anywhere), `DATA_VALID`, a GSO type (TCPv4, UDP,
/// TCPv6, UDP L4, ECN, unknown) with sizes sensible or not, random bytes.
pub fn vnet_hdr(p: &[u8], l3: usize, hdrsz: usize, rng: &mut Rng) -> (Vec<u8>, &'static str) {
    let proto = p.get(l3 + 9).copied().unwrap_or(0);
    let l4 = (l3 + 20) as u16;
    let csum_off = match proto {
        17 => 6,
        6 => 16,
        _ => 2,
    };
    let len = p.len() as u16;
    let (h, what) = match rng.below(10) {
        0..=2 => ([0u8; VNET_HDR_LEN], "vnet none"),
        3 | 4 => (vnet_bytes(VNET_F_NEEDS_CSUM, 0, 0, 0, l4, csum_off), "vnet csum"),
        5 => (vnet_bytes(VNET_F_DATA_VALID, 0, 0, 0, 0, 0), "vnet data-valid"),
        6 | 7 => {
            let gso = [1u8, 3, 4, 5, 0x81, rng.next() as u8][rng.below(6) as usize];
            let size = [0u16, 1, 100, 536, 1400, 65535][rng.below(6) as usize];
            let hdr_len = [0u16, l4 + 8, l4 + 20, len, len.wrapping_add(1), 65535][rng.below(6) as usize];
            let flags = if rng.below(3) == 0 { 0 } else { VNET_F_NEEDS_CSUM };
            (vnet_bytes(flags, gso, hdr_len, size, l4, csum_off), "vnet gso")
        }
        8 => {
            // A checksum start or offset past the packet, an odd offset.
            let start = [len, len.wrapping_sub(1), 65535, l4][rng.below(4) as usize];
            let off = [1u16, 3, 65535, len][rng.below(4) as usize];
            (vnet_bytes(VNET_F_NEEDS_CSUM, 0, 0, 0, start, off), "vnet bad csum")
        }
        _ => {
            let mut b = [0u8; VNET_HDR_LEN];
            for x in b.iter_mut() {
                *x = rng.next() as u8;
            }
            (b, "vnet random")
        }
    };
    let mut v = h.to_vec();
    // The bytes past the legacy header of a larger TUNSETVNETHDRSZ; now
    // and then a header of the wrong size.
    let size = if rng.below(20) == 0 { [VNET_HDR_LEN, 12, 0][rng.below(3) as usize] } else { hdrsz };
    v.resize(size, 0);
    (v, what)
}

/// A valid packet for device `dev`, from its peer: ICMP echo or UDP (TUN,
/// and in Ethernet on a TAP), an ARP request for the device's address
/// (TAP). Without the vnet header (`build_write` adds it).
pub fn valid_packet(w: &World, dev: usize, rng: &mut Rng) -> Vec<u8> {
    let d = DEVS[dev];
    let (me, peer) = ([10, w.net, d.idx, 1], [10, w.net, d.idx, 2]);
    // Not in the differential run: the stack's ARP reply to a request
    // came in one run and not in the other (seed 1, ops 1694 and 2615 on
    // the TAP; the neighbour entry's timed state, cause not pinned down).
    if d.tap && rng.below(2) == 0 && w.chaos {
        let arp = crate::pkt::arp(1, w.peer_mac(dev), peer, [0; 6], me);
        let dst = if rng.below(2) == 0 { [0xff; 6] } else { w.mac(dev) };
        return crate::pkt::eth(dst, w.peer_mac(dev), crate::pkt::ETH_P_ARP, &arp);
    }
    let p = match rng.below(3) {
        0 => crate::pkt::ipv4(peer, me, crate::pkt::IPPROTO_ICMP, &crate::pkt::icmp_echo(8, 1, rng.below(1000) as u16, &[7u8; 32])),
        // The fuzzer's listener (port 7000), or nobody's (an ICMP error
        // comes back).
        1 => crate::pkt::ipv4(peer, me, crate::pkt::IPPROTO_UDP, &crate::pkt::udp(5000 + rng.below(64) as u16, 7000, &[1u8; 40])),
        _ => crate::pkt::ipv4(peer, me, crate::pkt::IPPROTO_UDP, &crate::pkt::udp(5000, 9, &vec![2u8; rng.below(if d.frags { 4000 } else { 1400 }) as usize])),
    };
    if d.tap {
        crate::pkt::eth(w.mac(dev), w.peer_mac(dev), crate::pkt::ETH_P_IP, &p)
    } else if d.pi {
        let mut w = vec![0, 0, 0x08, 0x00];
        w.extend_from_slice(&p);
        w
    } else {
        p
    }
}

/// Mutates a packet (or not): truncation, extension, a flipped byte, a
/// wrong tun_pi protocol, an empty or (chaos only) an oversized write.
pub fn mutate(mut p: Vec<u8>, chaos: bool, rng: &mut Rng) -> (Vec<u8>, &'static str) {
    match rng.below(10) {
        0 => {
            let n = rng.below(p.len() as u64 + 1) as usize;
            p.truncate(n);
            (p, "truncated")
        }
        1 => {
            for _ in 0..rng.below(200) {
                p.push(rng.next() as u8);
            }
            (p, "extended")
        }
        2 if !p.is_empty() => {
            let i = rng.below(p.len() as u64) as usize;
            p[i] ^= 1 << rng.below(8);
            (p, "flipped")
        }
        3 if p.len() > 4 => {
            p[2] = rng.next() as u8;
            p[3] = rng.next() as u8;
            (p, "header-garbled")
        }
        4 => (Vec::new(), "empty"),
        // Deliberate difference (rst, "Writes"): rust_tun refuses writes
        // larger than a frame with EMSGSIZE where tun.c takes them, so the
        // two drivers' receive counters part after each; the differential
        // run leaves them out to compare the counters exactly.
        5 if chaos => (vec![0x45; 65536 + rng.below(5000) as usize], "oversized"),
        _ => (p, "valid"),
    }
}

/// A write for device `dev`: a valid or mutated packet behind the device's
/// headers (`tun_pi` in the packet, then a valid or malformed vnet header).
pub fn build_write(w: &World, dev: usize, rng: &mut Rng) -> (Vec<u8>, String) {
    let d = DEVS[dev];
    let p = valid_packet(w, dev, rng);
    let (p, what) = mutate(p, w.chaos, rng);
    if !d.vnet {
        return (p, what.into());
    }
    let pi = if d.pi { 4.min(p.len()) } else { 0 };
    let (h, hw) = vnet_hdr(&p[pi..], d.l3(0) - pi, w.hdrsz[dev], rng);
    let mut out = p[..pi].to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&p[pi..]);
    (out, format!("{what}, {hw}"))
}

/// Configures a device the first time it is attached: its MAC (TAP), its
/// address (TUN: point to point to .2; TAP: a /24), up, and the peer's
/// ARP entry.
pub fn configure(w: &mut World, dev: usize) {
    if w.configured[dev] {
        return;
    }
    w.configured[dev] = true;
    let name = w.name(dev);
    let d = DEVS[dev];
    let cmd = if d.tap {
        let m = w.mac(dev);
        format!(
            "ip link set dev {name} address {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}; ip addr add 10.{}.{}.1/24 dev {name}",
            m[0], m[1], m[2], m[3], m[4], m[5], w.net, d.idx
        )
    } else {
        format!("ip addr add 10.{}.{}.1 peer 10.{}.{}.2 dev {name}", w.net, d.idx, w.net, d.idx)
    };
    let _ = std::process::Command::new("/bin/sh").arg("-c").arg(&cmd).output();
    let _ = bring_up(w, dev);
}

/// What a read of device `dev` returned, as `fuzz-diff` compares it: the
/// bytes, with the IPv4 header's identification and checksum zeroed. The
/// stack's replies (ICMP sockets set no DF) take their IP ID from
/// `ip_select_ident()`'s generator, which adds a random step per jiffy:
/// the two runs differ there whatever the driver does.
pub fn norm(w: &World, dev: usize, data: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    let l3 = DEVS[dev].l3(w.hdrsz[dev]);
    let ipv4 = v.get(l3).is_some_and(|b| b >> 4 == 4) && (!DEVS[dev].tap || v.get(l3 - 2..l3) == Some(&[8u8, 0][..]));
    if ipv4 {
        // As much of the two fields as a short read holds.
        for i in (l3 + 4..l3 + 6).chain(l3 + 10..l3 + 12) {
            if let Some(b) = v.get_mut(i) {
                *b = 0;
            }
        }
    }
    v
}

/// `fuzz-diff`: waits until the stack has finished what the last write
/// started. A write's packet usually goes up the stack, and the stack's
/// replies out to the device's ring, before `write()` returns (softirqs
/// run at `local_bh_enable()`). But softirq work past its budget -- 2 ms
/// of `net_rx_action()`, a qdisc run that sees `need_resched()`, ten
/// restarts -- goes to the CPU's ksoftirqd, and under TCG a guest's 2 ms
/// are short: the reply then lands after the next operation, or not,
/// from run to run and driver to driver (seen: seed 1's op 1449, a
/// drain at close with or without the stack's ICMP echo reply, on
/// either driver, three runs in a row on 6.12-napi). So after each
/// write and before each drain the fuzzer sleeps a millisecond at a
/// time, which lets ksoftirqd run, until no ksoftirqd is runnable (at
/// most 200 ms).
pub fn settle_stack() {
    static KSOFTIRQD: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let stats = KSOFTIRQD.get_or_init(|| {
        let mut v = Vec::new();
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let stat = format!("{}/stat", e.path().display());
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            if comm.starts_with("ksoftirqd/") {
                v.push(stat);
            }
        }
        v
    });
    // The state is the field after the parenthesised command name.
    let runnable = |path: &String| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| rest.starts_with('R')))
            .unwrap_or(false)
    };
    for _ in 0..200 {
        std::thread::sleep(Duration::from_millis(1));
        if !stats.iter().any(runnable) {
            return;
        }
    }
}

/// One record of compared data: length, then the bytes.
pub fn record(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
}

/// `fuzz-diff`: reads every queue of `dev` until it is empty, so that
/// what follows (a close or detach purging a ring, a ring resized, the
/// counters read) finds nothing queued. What a steered device's queues
/// held goes into its multiset, which is then compared whole (sorted:
/// which queue held which packet is the flow table's business); what a
/// single queue held is compared in order.
pub fn drain(w: &mut World, dev: usize) {
    if w.chaos {
        return;
    }
    settle_stack();
    let mut buf = vec![0u8; 65536];
    let files: Vec<Arc<File>> = w.queues.iter().filter(|q| q.dev == dev).map(|q| q.file.clone()).collect();
    let mut got = Vec::new();
    for f in files {
        while let Ok(n) = fd_read(f.as_raw_fd(), &mut buf) {
            got.push(norm(w, dev, &buf[..n.min(buf.len())]));
        }
    }
    if w.steered[dev] {
        let mut all = std::mem::take(&mut w.mq_acc[dev]);
        all.extend(got);
        all.sort();
        w.mq_out.extend(all);
        w.mq_loose |= w.departed[dev];
    } else {
        for p in &got {
            record(&mut w.out, p);
        }
    }
}

/// The device's ethtool link settings as sysfs shows them (tun.c: 10000
/// Mb/s, full duplex, or what `ETHTOOL_SLINKSETTINGS` stored): `fuzz-diff`
/// fails on a difference.
pub fn link_settings(name: &str) -> String {
    ["speed", "duplex"]
        .iter()
        .map(|a| {
            std::fs::read_to_string(format!("/sys/class/net/{name}/{a}"))
                .map(|v| format!("{a}={}", v.trim()))
                .unwrap_or_else(|e| format!("{a}=E{}", e.raw_os_error().unwrap_or(0)))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The device's sysfs attributes and statistics, and its tun attributes
/// over rtnetlink (`IFLA_TUN_*`), as one string; a file that cannot be
/// read shows its errno. Not `operstate`, `dormant` or the flags' running
/// bit: link watch sets those later, from a work item.
pub fn snapshot(name: &str, tap: bool, steered: bool) -> String {
    const ATTRS: &[&str] = &[
        "mtu", "tx_queue_len", "flags", "type", "carrier", "tun_flags", "owner", "group", "address", "addr_len",
        "broadcast", "carrier_changes", "carrier_up_count", "carrier_down_count",
        "statistics/rx_packets", "statistics/rx_bytes", "statistics/rx_dropped", "statistics/rx_errors",
        "statistics/rx_frame_errors", "statistics/rx_length_errors", "statistics/rx_missed_errors",
        "statistics/tx_packets", "statistics/tx_bytes", "statistics/tx_dropped", "statistics/tx_errors",
        "statistics/multicast", "statistics/collisions",
    ];
    let mut s = String::new();
    for a in ATTRS {
        // Deliberate difference (rst, "Frame errors on a TAP"): tun.c's
        // TAP devices never show `rx_frame_errors` (their ops have no
        // `ndo_get_stats64`); rust_tun's do.
        if tap && *a == "statistics/rx_frame_errors" {
            continue;
        }
        // Deliberate difference (rst, "Flows on detach"): tun.c's flows
        // keep naming a departed queue, and the packets they steer there
        // are dropped; which of a multi-queue device's packets are read
        // or dropped then differs (see `drain`).
        if steered && a.starts_with("statistics/tx_") {
            continue;
        }
        let v = std::fs::read_to_string(format!("/sys/class/net/{name}/{a}"))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|e| format!("E{}", e.raw_os_error().unwrap_or(0)));
        s += &format!("{a}={v} ");
    }
    let mut queues: Vec<String> = std::fs::read_dir(format!("/sys/class/net/{name}/queues"))
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    queues.sort();
    s += &format!("queues={} ", queues.join(","));
    let mut info = crate::nl::Nl::open(0).ok().and_then(|nl| nl.tun_info(crate::nl::ifindex(name)).ok());
    // Deliberate difference (rst, "Device names"): the link kind is
    // rust_tun's own, `rust_tun`, beside the C driver's `tun`.
    if let Some(i) = info.as_mut() {
        i.kind = i.kind.replace("rust_tun", "tun");
    }
    s += &format!("link={info:?}");
    s
}

/// A classic BPF program for `TUNATTACHFILTER`: small and valid (return
/// a length, accept by EtherType or IP protocol), or invalid (empty, an
/// unknown opcode, a jump past the end, no return).
pub fn bpf_prog(tap: bool, rng: &mut Rng) -> (Vec<SockFilter>, &'static str) {
    let ins = |code: u16, jt: u8, jf: u8, k: u32| SockFilter { code, jt, jf, k };
    const LDB_ABS: u16 = 0x30;
    const LDH_ABS: u16 = 0x28;
    const JEQ_K: u16 = 0x15;
    match rng.below(8) {
        0 => (vec![bpf_ret(0)], "drop all"),
        1 => (vec![bpf_ret([1, 14, 20, 60, 0xffff][rng.below(5) as usize])], "keep n bytes"),
        2 | 3 => {
            // Accept IPv4 (TAP: by EtherType; TUN: by the version nibble's
            // byte) or only ICMP.
            let (load, off, val) = if tap {
                if rng.below(2) == 0 { (LDH_ABS, 12, 0x0800) } else { (LDH_ABS, 12, 0x0806) }
            } else if rng.below(2) == 0 {
                (LDB_ABS, 9, 1)
            } else {
                (LDB_ABS, 9, 17)
            };
            (vec![ins(load, 0, 0, off), ins(JEQ_K, 0, 1, val), bpf_ret(0xffff), bpf_ret(0)], "match")
        }
        4 => (Vec::new(), "empty"),
        5 => (vec![ins(0xffff, 0, 0, 0), bpf_ret(0xffff)], "bad opcode"),
        6 => (vec![ins(JEQ_K, 5, 5, 0), bpf_ret(0xffff)], "jump out"),
        _ => (vec![ins(LDB_ABS, 0, 0, 0)], "no return"),
    }
}

/// A `struct tun_filter` for `TUNSETTXFILTER`: flags (`TUN_FLT_ALLMULTI`
/// or not), a count of addresses (up to 12: past 8 tun hashes them), the
/// addresses: the peer's, broadcast, multicast, random; or a count larger
/// than the addresses given.
pub fn tx_filter(w: &World, dev: usize, rng: &mut Rng) -> (Vec<u8>, String) {
    let flags = if rng.below(3) == 0 { TUN_FLT_ALLMULTI } else { 0 };
    let n = rng.below(13) as usize;
    let mut v = Vec::new();
    v.extend_from_slice(&flags.to_ne_bytes());
    let count = if rng.below(10) == 0 { n as u16 + 1 + rng.below(3) as u16 } else { n as u16 };
    v.extend_from_slice(&count.to_ne_bytes());
    for _ in 0..n {
        let a = match rng.below(4) {
            0 => w.peer_mac(dev),
            1 => [0xff; 6],
            2 => [0x01, 0x00, 0x5e, 0, 0, rng.next() as u8],
            _ => [rng.next() as u8 & 0xfe, rng.next() as u8, 0, 0, 0, rng.next() as u8],
        };
        v.extend_from_slice(&a);
    }
    // The past-the-end addresses of an inflated count: zeros, readable.
    v.resize(4 + 6 * usize::from(count), 0);
    (v, format!("TUNSETTXFILTER flags {flags} count {count} of {n}"))
}

/// Chaos: runs `f` in network namespace `ns` (a new one if `None`), then
/// returns this thread to the namespace it was in. Returns what `f`
/// returned and the namespace (a file that keeps it alive). Namespaces are
/// per thread: `unshare`/`setns` here move only the calling thread.
pub fn in_netns<T>(ns: Option<&File>, f: impl FnOnce() -> T) -> Result<(T, File), i32> {
    let home = File::open("/proc/thread-self/ns/net").map_err(|e| e.raw_os_error().unwrap_or(0))?;
    // SAFETY: Namespace syscalls on this thread and fds we own.
    let r = match ns {
        Some(ns) => unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) },
        None => unsafe { libc::unshare(libc::CLONE_NEWNET) },
    };
    if r != 0 {
        return Err(errno());
    }
    let out = f();
    let this = File::open("/proc/thread-self/ns/net");
    // SAFETY: Back to the namespace this thread came from.
    let back = unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) };
    assert!(back == 0, "setns back to the initial network namespace: errno {}", errno());
    Ok((out, this.map_err(|e| e.raw_os_error().unwrap_or(0))?))
}
