//! The syscall fuzzer, stateful: it keeps devices attached and up, sends
//! valid and mutated packets through them, reads (plainly, through
//! iovecs, with `RWF_NOWAIT`), polls, detaches and re-attaches queues,
//! changes MTU, txqueuelen, carrier and the RPS/RFS knobs, issues the real
//! tun ioctls (the ones the driver lacks too), and in chaos mode shares
//! descriptors between threads and forked processes and opens the module's
//! own files. Two modes:
//!
//! - `rtun fuzz NODE SEED ITERS PROCS`: chaos, against one driver; fails on
//!   an outcome no operation of its kind may have;
//! - `rtun fuzz-diff SEED ITERS`: one seeded, deterministic sequence run
//!   against tun, then against rust_tun; every return value and errno is
//!   compared, and the first divergence reported. Divergences in what
//!   rust_tun does not implement yet (`GAP`) are counted separately.
//!
//! Both report how many operations got past the driver's validation
//! (succeeded, or were refused only for the state of the device).

use crate::harness::ifreq_ioctl;
use crate::stress::Rng;
use crate::tun::*;
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// More tun ioctls (`include/uapi/linux/if_tun.h`).
const fn ioc(dir: u64, nr: u64, size: u64) -> u64 {
    (dir << 30) | (size << 16) | ((b'T' as u64) << 8) | nr
}
const TUNSETNOCSUM: u64 = ioc(1, 200, 4);
const TUNSETDEBUG: u64 = ioc(1, 201, 4);
const TUNSETLINK: u64 = ioc(1, 205, 4);
const TUNSETOFFLOAD: u64 = ioc(1, 208, 4);
const TUNSETTXFILTER: u64 = ioc(1, 209, 4);
const TUNGETSNDBUF: u64 = ioc(2, 211, 4);
const TUNSETSNDBUF: u64 = ioc(1, 212, 4);
const TUNATTACHFILTER: u64 = ioc(1, 213, 16);
const TUNDETACHFILTER: u64 = ioc(1, 214, 16);
const TUNSETVNETHDRSZ: u64 = ioc(1, 216, 4);
const TUNSETIFINDEX: u64 = ioc(1, 218, 4);
const TUNGETFILTER: u64 = ioc(2, 219, 16);
const TUNSETVNETLE: u64 = ioc(1, 220, 4);
const TUNGETVNETLE: u64 = ioc(2, 221, 4);
const TUNSETSTEERINGEBPF: u64 = ioc(2, 224, 4);
const TUNSETFILTEREBPF: u64 = ioc(2, 225, 4);
const TUNSETCARRIER: u64 = ioc(1, 226, 4);
const TUNGETDEVNETNS: u64 = ioc(0, 227, 0);

/// Marks a read or poll of a queue of a device that has had several
/// queues: which queue the stack's packets take follows the flow table,
/// whose ageing depends on time and whose handling of a departing queue is
/// a deliberate difference, so `fuzz-diff` does not compare those results
/// one by one: what such reads return goes into the device's multiset
/// (`World::mq_acc`), compared whole at the next drain (`drain`).
const STEERED: &str = " [steered]";

/// One device of the fuzzer's world.
#[derive(Clone, Copy)]
struct DevSpec {
    suffix: &'static str,
    tap: bool,
    pi: bool,
    mq: bool,
    vnet: bool,
    /// `IFF_NAPI | IFF_NAPI_FRAGS`.
    frags: bool,
    /// Its /24: 10.NET.IDX.0.
    idx: u8,
}

/// The devices of the initial namespace, then (`NS_DEV`, chaos only) the
/// one created in a namespace of its own.
const DEVS: [DevSpec; 7] = [
    DevSpec { suffix: "0", tap: false, pi: false, mq: true, vnet: false, frags: false, idx: 0 },
    DevSpec { suffix: "1", tap: true, pi: false, mq: false, vnet: false, frags: false, idx: 1 },
    DevSpec { suffix: "2", tap: false, pi: true, mq: false, vnet: false, frags: false, idx: 2 },
    DevSpec { suffix: "3", tap: true, pi: false, mq: true, vnet: true, frags: false, idx: 3 },
    DevSpec { suffix: "4", tap: false, pi: true, mq: false, vnet: true, frags: false, idx: 4 },
    DevSpec { suffix: "5", tap: true, pi: false, mq: false, vnet: false, frags: true, idx: 5 },
    DevSpec { suffix: "n", tap: true, pi: false, mq: true, vnet: true, frags: false, idx: 6 },
];
/// How many of `DEVS` live in the initial namespace.
const HOME: usize = 6;
/// The device created in another network namespace (chaos).
const NS_DEV: usize = 6;

impl DevSpec {
    fn flags(&self) -> u16 {
        (if self.tap { IFF_TAP } else { IFF_TUN })
            | if self.pi { 0 } else { IFF_NO_PI }
            | if self.mq { IFF_MULTI_QUEUE } else { 0 }
            | if self.vnet { IFF_VNET_HDR } else { 0 }
            | if self.frags { IFF_NAPI | IFF_NAPI_FRAGS } else { 0 }
    }

    /// Where the IP header starts in a frame of this device (after
    /// `tun_pi`, the vnet header of `hdrsz` bytes and Ethernet's).
    fn l3(&self, hdrsz: usize) -> usize {
        (if self.pi { 4 } else { 0 }) + (if self.vnet { hdrsz } else { 0 }) + if self.tap { 14 } else { 0 }
    }
}

/// An attached queue.
#[derive(Clone)]
struct Queue {
    file: Arc<File>,
    dev: usize,
    detached: bool,
}

/// What the operations work on.
struct World {
    prefix: String,
    net: u8,
    queues: Vec<Queue>,
    mfiles: Vec<File>,
    /// Up or down, as last set.
    up: [bool; 7],
    /// Devices configured (addressed) already.
    configured: [bool; 7],
    /// Devices that have had more than one queue (see `STEERED`).
    steered: [bool; 7],
    /// Each device's vnet header size, as last set (`TUNSETVNETHDRSZ`).
    hdrsz: [usize; 7],
    /// Devices whose last `TUNATTACHFILTER` succeeded (`tun->filter_attached`).
    filtered: [bool; 7],
    chaos: bool,
    /// What the last operation read (normalised, `norm`), for `fuzz-diff`.
    out: Vec<u8>,
    /// The device's link settings after the operation (`link_settings`).
    gap_out: String,
    /// `fuzz-diff`: a steered device's multiset, drained (`drain`).
    mq_out: Vec<Vec<u8>>,
    /// `fuzz-diff`: whether `mq_out` is of a device a queue has left.
    mq_loose: bool,
    /// Devices a queue has left (closed or detached) since they were
    /// created: see `fuzz_diff`'s multisets.
    departed: [bool; 7],
    /// `fuzz-diff`: what reads of a steered device's queues returned since
    /// its last drain.
    mq_acc: [Vec<Vec<u8>>; 7],
    /// Chaos: the network namespace `NS_DEV` lives in.
    ns: Option<Arc<File>>,
    /// Chaos: the namespace operations done so far (see `NS_BUDGET`).
    ns_ops: u32,
}

/// How many namespaces a chaos process makes (each creation and cleanup
/// takes rtnl many times: on the debug kernel, seconds).
const NS_BUDGET: u32 = 2;

impl World {
    fn new(prefix: &str, net: u8, chaos: bool) -> World {
        World {
            prefix: prefix.into(),
            net,
            queues: Vec::new(),
            mfiles: Vec::new(),
            up: [false; 7],
            configured: [false; 7],
            steered: [false; 7],
            hdrsz: [VNET_HDR_LEN; 7],
            filtered: [false; 7],
            chaos,
            out: Vec::new(),
            gap_out: String::new(),
            mq_out: Vec::new(),
            mq_loose: false,
            departed: [false; 7],
            mq_acc: Default::default(),
            ns: None,
            ns_ops: 0,
        }
    }

    fn name(&self, dev: usize) -> String {
        format!("{}{}", self.prefix, DEVS[dev].suffix)
    }

    /// The TAP device's MAC, set by `configure` (the same in both runs of
    /// `fuzz-diff`).
    fn mac(&self, dev: usize) -> [u8; 6] {
        [2, 0, 0, self.net, DEVS[dev].idx, 1]
    }

    /// The MAC of the TAP device's peer (the writer's frames come from it).
    fn peer_mac(&self, dev: usize) -> [u8; 6] {
        [2, 0, 0, self.net, DEVS[dev].idx, 2]
    }
}

/// Outcome classes: success, refused for the device's state, refused as
/// invalid.
#[derive(Default)]
struct Counts {
    ops: u64,
    ok: u64,
    state: u64,
    invalid: u64,
}

impl Counts {
    fn add(&mut self, r: &Result<i64, i32>) {
        self.ops += 1;
        match r {
            Ok(_) => self.ok += 1,
            Err(libc::EAGAIN | libc::EBUSY | libc::EIO | libc::EINTR | libc::ENOMEM) => self.state += 1,
            Err(_) => self.invalid += 1,
        }
    }

    fn report(&self) -> String {
        let pct = |n: u64| 100.0 * n as f64 / self.ops.max(1) as f64;
        format!(
            "ops={} ok={:.1}% state-refused={:.1}% invalid={:.1}% past-validation={:.1}%",
            self.ops,
            pct(self.ok),
            pct(self.state),
            pct(self.invalid),
            pct(self.ok + self.state)
        )
    }
}

fn ret(r: isize) -> Result<i64, i32> {
    if r < 0 { Err(errno()) } else { Ok(r as i64) }
}


/// Brings `name` up or down (SIOCGIFFLAGS, SIOCSIFFLAGS).
fn set_up(name: &str, up: bool) -> Result<i64, i32> {
    #[repr(C)]
    struct IfReqFlags {
        name: [u8; 16],
        flags: i16,
        pad: [u8; 22],
    }
    let mut ifr = IfReqFlags { name: [0; 16], flags: 0, pad: [0; 22] };
    ifr.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: Plain socket for interface ioctls.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    let r = ioctl_ptr(s, libc::SIOCGIFFLAGS, &mut ifr).and_then(|_| {
        if up {
            ifr.flags |= libc::IFF_UP as i16;
        } else {
            ifr.flags &= !(libc::IFF_UP as i16);
        }
        ioctl_ptr(s, libc::SIOCSIFFLAGS, &mut ifr)
    });
    // SAFETY: Our socket.
    unsafe { libc::close(s) };
    r.map(i64::from)
}

/// A permanent ARP entry for the TAP device's peer (`SIOCSARP`,
/// `ATF_PERM | ATF_COM`): the stack's packets to the peer go out at once,
/// with no ARP request and no timed retransmissions or probes, which
/// would land between the fuzzer's operations at moments that differ from
/// run to run. A device going down flushes it: `bring_up` puts it back.
fn peer_arp(w: &World, dev: usize) {
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
fn bring_up(w: &mut World, dev: usize) -> Result<i64, i32> {
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
const VNET_HDR_LEN: usize = 10;
const VNET_F_NEEDS_CSUM: u8 = 1;
const VNET_F_DATA_VALID: u8 = 2;

fn vnet_bytes(flags: u8, gso_type: u8, hdr_len: u16, gso_size: u16, csum_start: u16, csum_offset: u16) -> [u8; VNET_HDR_LEN] {
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
fn vnet_hdr(p: &[u8], l3: usize, hdrsz: usize, rng: &mut Rng) -> (Vec<u8>, &'static str) {
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
fn valid_packet(w: &World, dev: usize, rng: &mut Rng) -> Vec<u8> {
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
fn mutate(mut p: Vec<u8>, chaos: bool, rng: &mut Rng) -> (Vec<u8>, &'static str) {
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
fn build_write(w: &World, dev: usize, rng: &mut Rng) -> (Vec<u8>, String) {
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
fn configure(w: &mut World, dev: usize) {
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
fn norm(w: &World, dev: usize, data: &[u8]) -> Vec<u8> {
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

/// One record of compared data: length, then the bytes.
fn record(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
}

/// `fuzz-diff`: reads every queue of `dev` until it is empty, so that
/// what follows (a close or detach purging a ring, a ring resized, the
/// counters read) finds nothing queued. What a steered device's queues
/// held goes into its multiset, which is then compared whole (sorted:
/// which queue held which packet is the flow table's business); what a
/// single queue held is compared in order.
fn drain(w: &mut World, dev: usize) {
    if w.chaos {
        return;
    }
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
fn link_settings(name: &str) -> String {
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
fn snapshot(name: &str, tap: bool, steered: bool) -> String {
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
fn bpf_prog(tap: bool, rng: &mut Rng) -> (Vec<SockFilter>, &'static str) {
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
fn tx_filter(w: &World, dev: usize, rng: &mut Rng) -> (Vec<u8>, String) {
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
fn in_netns<T>(ns: Option<&File>, f: impl FnOnce() -> T) -> Result<(T, File), i32> {
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

/// One operation: generated from the RNG against the world, run, and
/// accounted. Returns (description, result, whether a divergence in it is
/// a known gap); what it read is in `World::out` (`fuzz-diff`).
fn step(w: &Mutex<World>, node: &str, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let kind = rng.below(100);
    // Pick a queue (and what we need of it) under the lock.
    let pick = |w: &World, rng: &mut Rng| -> Option<Queue> {
        (!w.queues.is_empty()).then(|| w.queues[rng.below(w.queues.len() as u64) as usize].clone())
    };
    let (snap, name_of, prefix, chaos) = {
        let g = w.lock().unwrap_or_else(|e| e.into_inner());
        (pick(&g, rng), (0..DEVS.len()).map(|d| g.name(d)).collect::<Vec<_>>(), g.prefix.clone(), g.chaos)
    };
    // With no queue to work on, queue operations become attaches.
    let kind = if snap.is_none() && (13..96).contains(&kind) && !(82..=91).contains(&kind) { kind % 13 } else { kind };
    match kind {
        // Attach: open the node and TUNSETIFF, mostly valid.
        0..=12 => {
            let dev = rng.below(HOME as u64) as usize;
            let d = DEVS[dev];
            // The differential run makes wrong-kind attaches only to a
            // device that exists (one it has a queue of): on a missing one
            // they would create a device of another kind, whose packets
            // the run then steers by a flow table (see `STEERED`).
            let exists = w.lock().unwrap_or_else(|e| e.into_inner()).queues.iter().any(|q| q.dev == dev);
            let variant = rng.below(12);
            let variant = if !chaos && !exists && variant <= 2 { 11 } else { variant };
            let (name, flags, what) = match variant {
                0 => (name_of[dev].clone(), d.flags() ^ (IFF_TUN | IFF_TAP), "wrong type"),
                1 => (name_of[dev].clone(), d.flags() ^ IFF_MULTI_QUEUE, "wrong queueing"),
                2 => (name_of[dev].clone(), d.flags() & !(IFF_TUN | IFF_TAP), "no type"),
                3 => (format!("{prefix}/x"), d.flags(), "bad name"),
                4 => (name_of[dev].clone(), d.flags() | IFF_TUN_EXCL, "exclusive"),
                5 if chaos => (name_of[dev].clone(), d.flags() ^ IFF_VNET_HDR, "vnet flipped"),
                _ => (name_of[dev].clone(), d.flags(), "valid"),
            };
            // Chaos mode opens some blocking (a signal interrupts their
            // reads); the differential mode never blocks.
            let nonblock = !chaos || rng.below(3) != 0;
            let file = match File::options().read(true).write(true).custom_flags_nonblock(nonblock).open(node) {
                Ok(f) => f,
                Err(e) => return (format!("open {node}"), Err(e.raw_os_error().unwrap_or(0)), false),
            };
            // A device this attach creates gets its addresses anew.
            let existed = link_exists(&name);
            let mut ifr = IfReq::new(&name, flags);
            let r = if rng.below(20) == 0 {
                ioctl_ptr(file.as_raw_fd(), TUNSETIFF, 16usize as *mut IfReq).map(i64::from)
            } else {
                ioctl_ptr(file.as_raw_fd(), TUNSETIFF, &mut ifr).map(i64::from)
            };
            if r.is_ok() && what != "bad name" {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                if !existed {
                    g.departed[dev] = false;
                    g.configured[dev] = false;
                    g.filtered[dev] = false;
                    g.hdrsz[dev] = VNET_HDR_LEN;
                }
                configure(&mut g, dev);
                g.queues.push(Queue { file: Arc::new(file), dev, detached: false });
                // Once a device has had two queues, which of them holds the
                // stack's packets is the flow table's business from then on.
                if g.queues.iter().filter(|x| x.dev == dev).count() > 1 {
                    g.steered[dev] = true;
                }
            }
            (format!("TUNSETIFF {name} {flags:#x} ({what})"), r, false)
        }
        // Writes.
        13..=41 => {
            let Some(q) = snap else { return ("write (no queue)".into(), Err(libc::EBADF), false) };
            let (p, what) = {
                let g = w.lock().unwrap_or_else(|e| e.into_inner());
                build_write(&g, q.dev, rng)
            };
            let fd = q.file.as_raw_fd();
            let r = match rng.below(6) {
                // writev in small pieces, with empty ones.
                0 | 1 if p.len() > 2 => {
                    let mut iovs = Vec::new();
                    let mut off = 0;
                    while off < p.len() {
                        let n = (1 + rng.below(64) as usize).min(p.len() - off);
                        iovs.push(libc::iovec { iov_base: p[off..].as_ptr() as *mut _, iov_len: n });
                        if rng.below(4) == 0 {
                            iovs.push(libc::iovec { iov_base: p.as_ptr() as *mut _, iov_len: 0 });
                        }
                        off += n;
                    }
                    iovs.truncate(1024);
                    // SAFETY: Each iovec points into `p`.
                    ret(unsafe { libc::writev(fd, iovs.as_ptr(), iovs.len() as i32) })
                }
                // writev in two to four large pieces: the headers, then
                // page fragments (IFF_NAPI_FRAGS' layout), cut anywhere.
                2 if p.len() > 2 => {
                    let mut cuts: Vec<usize> = (0..1 + rng.below(3)).map(|_| 1 + rng.below(p.len() as u64 - 1) as usize).collect();
                    if rng.below(2) == 0 {
                        cuts.push(DEVS[q.dev].l3(0).min(p.len()));
                    }
                    cuts.push(0);
                    cuts.push(p.len());
                    cuts.sort_unstable();
                    cuts.dedup();
                    let iovs: Vec<libc::iovec> =
                        cuts.windows(2).map(|c| libc::iovec { iov_base: p[c[0]..].as_ptr() as *mut _, iov_len: c[1] - c[0] }).collect();
                    // SAFETY: Each iovec points into `p`.
                    ret(unsafe { libc::writev(fd, iovs.as_ptr(), iovs.len() as i32) })
                }
                _ => fd_write(fd, &p).map(|n| n as i64),
            };
            let bytes = if std::env::var("RTUN_FUZZ_TRACE").is_ok() { format!(" {p:02x?}") } else { String::new() };
            (format!("write {} bytes ({what}) to {}{bytes}", p.len(), DEVS[q.dev].suffix), r, what.starts_with("oversized"))
        }
        // Reads.
        42..=60 => {
            let Some(q) = snap else { return ("read (no queue)".into(), Err(libc::EBADF), false) };
            let fd = q.file.as_raw_fd();
            if chaos && rng.below(3) == 0 {
                // Wait a little for something to read.
                let _ = poll_fd(fd, libc::POLLIN, Duration::from_millis(rng.below(30)));
            }
            let steered = !chaos && w.lock().unwrap_or_else(|e| e.into_inner()).steered[q.dev];
            // A steered read must take whole packets: a short buffer would
            // cut a different packet in each run.
            let lens: &[usize] = if steered { &[2048, 65536] } else { &[0, 3, 10, 64, 1500, 2048, 65536] };
            let len = lens[rng.below(lens.len() as u64) as usize];
            let mut buf = vec![0u8; len];
            let (r, how) = match rng.below(3) {
                0 => {
                    let half = len / 2;
                    let iovs = [
                        libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: half },
                        // SAFETY: Within `buf`.
                        libc::iovec { iov_base: unsafe { buf.as_mut_ptr().add(half) }.cast(), iov_len: len - half },
                    ];
                    // SAFETY: Two iovecs into `buf`.
                    (ret(unsafe { libc::readv(fd, iovs.as_ptr(), 2) }), "readv")
                }
                1 => {
                    let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: len };
                    // SAFETY: One iovec into `buf`.
                    (ret(unsafe { libc::preadv2(fd, &iov, 1, -1, libc::RWF_NOWAIT) }), "preadv2 nowait")
                }
                _ => (fd_read(fd, &mut buf).map(|n| n as i64), "read"),
            };
            if !chaos {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                if let Ok(n) = r {
                    let data = norm(&g, q.dev, &buf[..(n as usize).min(len)]);
                    if steered {
                        g.mq_acc[q.dev].push(data);
                    } else {
                        record(&mut g.out, &data);
                    }
                }
            }
            (format!("{how} {len} from {}{}", DEVS[q.dev].suffix, if steered { STEERED } else { "" }), r, false)
        }
        // Polls.
        61..=64 => {
            let Some(q) = snap else { return ("poll (no queue)".into(), Err(libc::EBADF), false) };
            let t = if chaos { rng.below(30) } else { 0 };
            let r = poll_fd(q.file.as_raw_fd(), libc::POLLIN | libc::POLLOUT, Duration::from_millis(t)).map(i64::from);
            let steered = !chaos && w.lock().unwrap_or_else(|e| e.into_inner()).steered[q.dev];
            (format!("poll {} ({t} ms){}", DEVS[q.dev].suffix, if steered { STEERED } else { "" }), r, false)
        }
        // The tun ioctls.
        65..=81 => ioctl_step(w, &snap, rng),
        // Device administration.
        82..=91 => {
            let dev = rng.below(HOME as u64) as usize;
            let name = name_of[dev].clone();
            match rng.below(6) {
                0 => {
                    let up = rng.below(3) != 0;
                    let r = if up {
                        bring_up(&mut w.lock().unwrap_or_else(|e| e.into_inner()), dev)
                    } else {
                        let r = set_up(&name, false);
                        if r.is_ok() {
                            w.lock().unwrap_or_else(|e| e.into_inner()).up[dev] = false;
                        }
                        r
                    };
                    (format!("{name} {}", if up { "up" } else { "down" }), r, false)
                }
                1 => {
                    let mtu = [67, 68, 576, 1280, 1500, 9000, 65521, 65535, 65536][rng.below(9) as usize];
                    (format!("{name} mtu {mtu}"), ifreq_ioctl(libc::SIOCSIFMTU, &name, mtu), false)
                }
                2 => {
                    // The differential run resizes a multi-queue device's
                    // rings only to sizes its traffic cannot fill: which
                    // queue overflows would follow the flow table.
                    let q = if !chaos && DEVS[dev].mq {
                        [500, 1000, 4096][rng.below(3) as usize]
                    } else {
                        [0, 1, 4, 64, 500, 1000, 1 << 20][rng.below(7) as usize]
                    };
                    drain(&mut w.lock().unwrap_or_else(|e| e.into_inner()), dev);
                    (format!("{name} txqueuelen {q}"), ifreq_ioctl(libc::SIOCSIFTXQLEN, &name, q), false)
                }
                3 | 4 => stack_send(w, dev, rng),
                // (Not in the differential run: with RPS on, tun.c records
                // a detached queue's stale index and get_rps_cpu() warns --
                // tun's bug, documented, which would fail the run.)
                _ if !chaos => (format!("{name} up (again)"), bring_up(&mut w.lock().unwrap_or_else(|e| e.into_inner()), dev), false),
                _ => {
                    let v = ["0", "4096"][rng.below(2) as usize];
                    let r = std::fs::write("/proc/sys/net/core/rps_sock_flow_entries", v).map(|_| 0).map_err(|e| e.raw_os_error().unwrap_or(0));
                    (format!("rps_sock_flow_entries {v}"), r, false)
                }
            }
        }
        // Close.
        92..=95 => {
            let Some(q) = snap else { return ("close (no queue)".into(), Ok(0), false) };
            let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
            drain(&mut g, q.dev);
            if !chaos && DEVS[q.dev].pi {
                // Deliberate difference (rst, "A persistent device's filter
                // re-attached to a new file"): tun.c does not attach a file
                // that re-attaches a device's filter. The differential run
                // takes the filter off before a file of a tun_pi device
                // (which does not skip it: IFF_NOFILTER is IFF_NO_PI's bit)
                // goes.
                if ioctl_val(q.file.as_raw_fd(), TUNDETACHFILTER, 0).is_ok() {
                    g.filtered[q.dev] = false;
                }
            }
            if let Some(i) = g.queues.iter().position(|x| Arc::ptr_eq(&x.file, &q.file)) {
                g.queues.swap_remove(i);
            }
            g.departed[q.dev] = true;
            (format!("close a queue of {}", DEVS[q.dev].suffix), Ok(0), false)
        }
        // Chaos only: the module's files, rmmod, fork, namespaces.
        _ if chaos => chaos_step(w, node, rng),
        // The differential run: the device's attributes and counters.
        _ => {
            let dev = rng.below(HOME as u64) as usize;
            let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
            drain(&mut g, dev);
            let s = snapshot(&g.name(dev), DEVS[dev].tap, g.steered[dev]);
            g.out.extend_from_slice(s.as_bytes());
            g.gap_out = link_settings(&g.name(dev));
            (format!("sysfs and statistics of {}", DEVS[dev].suffix), Ok(0), false)
        }
    }
}

/// The stack sends UDP out through device `dev` to its peer (port 9):
/// small, up to the MTU, or a GSO super-packet (`UDP_SEGMENT`), which
/// reaches the reader whole, with its vnet header, once `TUNSETOFFLOAD`
/// allows USO. Sent from an unconnected socket, whose packets carry IP ID
/// 0 (DF), from a port the RNG picks: the same in both runs.
fn stack_send(w: &Mutex<World>, dev: usize, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let (net, chaos, d) = {
        let g = w.lock().unwrap_or_else(|e| e.into_inner());
        (g.net, g.chaos, DEVS[dev])
    };
    let gso = [0u16, 0, 536, 1000, 1400][rng.below(5) as usize];
    // The differential run sends single datagrams: the segments of a
    // super-packet the device cannot take whole reached its queue in one
    // run and not (yet) in the other.
    let gso = if chaos { gso } else { 0 };
    let len = if gso != 0 { 1 + rng.below(8000) as usize } else { rng.below(1500) as usize };
    // A port of our choosing: an ephemeral one is random.
    let sport = 6000 + rng.below(1000);
    let sock = match std::net::UdpSocket::bind(format!("10.{net}.{}.1:{sport}", d.idx)) {
        Ok(s) => s,
        Err(e) => return (format!("udp bind to {}", d.suffix), Err(e.raw_os_error().unwrap_or(0)), false),
    };
    if gso != 0 {
        let v = i32::from(gso);
        // SAFETY: An int option of its size.
        unsafe {
            libc::setsockopt(sock.as_raw_fd(), libc::SOL_UDP, 103, (&v as *const i32).cast(), 4);
        }
    }
    let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(7)).collect();
    let r = sock.send_to(&data, format!("10.{net}.{}.2:9", d.idx)).map(|n| n as i64).map_err(|e| e.raw_os_error().unwrap_or(0));

    (format!("udp {len} bytes (gso {gso}) out through {}", d.suffix), r, false)
}

/// The tun ioctls, with the values that change state taken from what is
/// valid and what is not.
fn ioctl_step(w: &Mutex<World>, snap: &Option<Queue>, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let Some(q) = snap.clone() else { return ("ioctl (no queue)".into(), Err(libc::EBADF), false) };
    let d = DEVS[q.dev];
    let fd = q.file.as_raw_fd();
    let mut int: i32 = 0;
    let mut ifr = IfReq::new("", 0);
    let (desc, r, gap): (String, Result<i64, i32>, bool) = match rng.below(24) {
        0 => ("TUNGETIFF".into(), ioctl_ptr(fd, TUNGETIFF, &mut ifr).map(|_| i64::from(ifr.flags)), false),
        1 | 2 => {
            let f = if q.detached { IFF_ATTACH_QUEUE } else { IFF_DETACH_QUEUE };
            let f = if rng.below(5) == 0 { rng.next() as u16 } else { f };
            // Deliberate difference (Documentation/rust_tun.rst, "A
            // persistent device's filter re-attached"): re-attaching a queue
            // of a device with a filter, tun.c reads the program again from
            // the user address `TUNATTACHFILTER` gave (here freed since) and
            // returns its error, or 0 without attaching the queue; rust_tun
            // attaches it with its copy. The differential run leaves such
            // attaches out (both runs decide alike: `filtered` is the same
            // in both until here).
            if f & IFF_ATTACH_QUEUE != 0 && { let g = w.lock().unwrap_or_else(|e| e.into_inner()); !g.chaos && g.filtered[q.dev] } {
                return ("TUNSETQUEUE attach with a filter (left out)".into(), Ok(0), false);
            }
            if f & IFF_DETACH_QUEUE != 0 {
                // A detach purges the queue's ring.
                drain(&mut w.lock().unwrap_or_else(|e| e.into_inner()), q.dev);
            }
            let mut ifr = IfReq::new("", f);
            let r = ioctl_ptr(fd, TUNSETQUEUE, &mut ifr).map(i64::from);
            if r.is_ok() {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                for x in g.queues.iter_mut().filter(|x| Arc::ptr_eq(&x.file, &q.file)) {
                    x.detached = f & IFF_DETACH_QUEUE != 0;
                }
                if f & IFF_DETACH_QUEUE != 0 {
                    g.departed[q.dev] = true;
                }
            }
            (format!("TUNSETQUEUE {f:#x}"), r, false)
        }
        3 => {
            let v = rng.below(2);
            (format!("TUNSETPERSIST {v}"), ioctl_val(fd, TUNSETPERSIST, v as libc::c_ulong).map(i64::from), false)
        }
        4 => {
            let v = [0u64, 1000, 2000, u32::MAX as u64][rng.below(4) as usize];
            (format!("TUNSETOWNER {v}"), ioctl_val(fd, TUNSETOWNER, v as libc::c_ulong).map(i64::from), false)
        }
        5 => {
            let v = [0u64, 1000, u32::MAX as u64][rng.below(3) as usize];
            (format!("TUNSETGROUP {v}"), ioctl_val(fd, TUNSETGROUP, v as libc::c_ulong).map(i64::from), false)
        }
        6 => ("TUNGETFEATURES".into(), ioctl_ptr(fd, TUNGETFEATURES, &mut int).map(|_| i64::from(int)), true),
        7 | 8 => {
            // Small send buffers make writes wait (chaos: blocking ones,
            // until a signal) or fail with EAGAIN.
            int = [0, -1, 1, 512, 2048, 4096, 16384, 65536, i32::MAX][rng.below(9) as usize];
            (format!("TUNSETSNDBUF {int}"), ioctl_ptr(fd, TUNSETSNDBUF, &mut int).map(i64::from), false)
        }
        9 => ("TUNGETSNDBUF".into(), ioctl_ptr(fd, TUNGETSNDBUF, &mut int).map(|_| i64::from(int)), false),
        10 | 11 => {
            // TUN_F_CSUM, TSO4, TSO6, TSO_ECN, UFO, USO4, USO6; or any bits.
            let v = if rng.below(4) == 0 { rng.next() as u32 } else { (rng.next() as u32) & 0x7f };
            (format!("TUNSETOFFLOAD {v:#x}"), ioctl_val(fd, TUNSETOFFLOAD, libc::c_ulong::from(v)).map(i64::from), false)
        }
        12 => ("TUNGETVNETHDRSZ".into(), ioctl_ptr(fd, TUNGETVNETHDRSZ, &mut int).map(|_| i64::from(int)), false),
        13 | 14 => {
            int = [-1, 0, 8, 10, 10, 12, 12, 16, 20, 64, 100][rng.below(11) as usize];
            let r = ioctl_ptr(fd, TUNSETVNETHDRSZ, &mut int).map(i64::from);
            if r.is_ok() {
                w.lock().unwrap_or_else(|e| e.into_inner()).hdrsz[q.dev] = int as usize;
            }
            (format!("TUNSETVNETHDRSZ {int}"), r, false)
        }
        15 | 16 => {
            let (mut f, what) = tx_filter(&w.lock().unwrap_or_else(|e| e.into_inner()), q.dev, rng);
            (what, ioctl_ptr(fd, TUNSETTXFILTER, f.as_mut_ptr()).map(i64::from), false)
        }
        17 | 18 => {
            let (prog, what) = bpf_prog(d.tap, rng);
            let mut fprog = SockFprog { len: prog.len() as u16, filter: prog.as_ptr() };
            let r = ioctl_ptr(fd, TUNATTACHFILTER, &mut fprog).map(i64::from);
            // Both drivers keep a filter only if every queue took it.
            w.lock().unwrap_or_else(|e| e.into_inner()).filtered[q.dev] = r.is_ok();
            (format!("TUNATTACHFILTER {what}"), r, false)
        }
        19 => {
            int = rng.below(2) as i32;
            (format!("TUNSETCARRIER {int}"), ioctl_ptr(fd, TUNSETCARRIER, &mut int).map(i64::from), false)
        }
        20 => {
            let r = ioctl_val(fd, TUNGETDEVNETNS, 0);
            if let Ok(nsfd) = r {
                // SAFETY: The namespace fd it returned.
                unsafe { libc::close(nsfd) };
            }
            ("TUNGETDEVNETNS".into(), r.map(|_| 0), false)
        }
        21 => {
            // ARPHRD_ETHER, _NONE, _LOOPBACK, _VOID, any: only while down.
            // The differential run keeps the device's own type: another
            // one loses the peer's ARP entry, and the stack's ARP
            // requests then come on its timers, not the fuzzer's steps.
            let own = if d.tap { 1 } else { 65534 };
            let ty = [1u64, 65534, 772, 0xffff, rng.below(1000)][rng.below(5) as usize];
            let ty = if w.lock().unwrap_or_else(|e| e.into_inner()).chaos { ty } else { own };
            (format!("TUNSETLINK {ty}"), ioctl_val(fd, TUNSETLINK, ty as libc::c_ulong).map(i64::from), false)
        }
        22 => match rng.below(8) {
            0 => ("TUNGETVNETLE".into(), ioctl_ptr(fd, TUNGETVNETLE, &mut int).map(|_| i64::from(int)), false),
            1 => {
                int = rng.below(2) as i32;
                (format!("TUNSETVNETLE {int}"), ioctl_ptr(fd, TUNSETVNETLE, &mut int).map(i64::from), false)
            }
            2 => ("TUNSETNOCSUM 0".into(), ioctl_val(fd, TUNSETNOCSUM, 0).map(i64::from), false),
            3 => ("TUNSETDEBUG 0".into(), ioctl_val(fd, TUNSETDEBUG, 0).map(i64::from), false),
            4 => {
                let r = ioctl_val(fd, TUNDETACHFILTER, 0).map(i64::from);
                if r.is_ok() {
                    w.lock().unwrap_or_else(|e| e.into_inner()).filtered[q.dev] = false;
                }
                ("TUNDETACHFILTER".into(), r, false)
            }
            5 => {
                let mut prog = [0u64; 2];
                ("TUNGETFILTER".into(), ioctl_ptr(fd, TUNGETFILTER, prog.as_mut_ptr()).map(i64::from), false)
            }
            6 => {
                int = [12345, -1, 0][rng.below(3) as usize];
                (format!("TUNSETIFINDEX {int}"), ioctl_ptr(fd, TUNSETIFINDEX, &mut int).map(i64::from), false)
            }
            _ => {
                int = -1;
                let cmd = if rng.below(2) == 0 { TUNSETSTEERINGEBPF } else { TUNSETFILTEREBPF };
                ("TUNSET*EBPF -1".into(), ioctl_ptr(fd, cmd, &mut int).map(i64::from), true)
            }
        },
        _ => {
            // An unknown command; or a known one with a bad pointer.
            let cmd = [0x54ffu64, TUNGETIFF, TUNSETQUEUE, TUNGETFEATURES, TUNSETTXFILTER, TUNATTACHFILTER][rng.below(6) as usize];
            (format!("ioctl {cmd:#x} bad pointer"), ioctl_ptr(fd, cmd, 8usize as *mut u8).map(i64::from), cmd == TUNGETFEATURES)
        }
    };
    (format!("{desc} on {}", d.suffix), r, gap)
}

/// Chaos-only operations: the module's own files (open, read, poll,
/// close), rmmod with whatever is open, a forked child working on
/// inherited descriptors, and network namespaces: a device created in one
/// of its own (its queues then worked on from the initial namespace), a
/// device of the initial namespace moved into a namespace that dies at
/// once (its queues still open here), the namespace's last handle let go.
fn chaos_step(w: &Mutex<World>, node: &str, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let op = rng.below(8);
    // A namespace costs its creation and its cleanup (a work item that
    // takes rtnl for each of its steps): a few per process.
    let op = if (5..=6).contains(&op) && {
        let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
        g.ns_ops += 1;
        g.ns_ops > NS_BUDGET
    } {
        3
    } else {
        op
    };
    match op {
        5 => {
            let (ns, name) = {
                let g = w.lock().unwrap_or_else(|e| e.into_inner());
                (g.ns.clone(), g.name(NS_DEV))
            };
            let ns = ns.filter(|_| rng.below(3) != 0);
            let fresh = ns.is_none();
            let nonblock = rng.below(3) != 0;
            let frame = crate::pkt::eth([0xff; 6], [2, 0, 0, 0, 0, 7], crate::pkt::ETH_P_ARP, &crate::pkt::arp(1, [2, 0, 0, 0, 0, 7], [10, 1, 1, 2], [0; 6], [10, 1, 1, 1]));
            let r = in_netns(ns.as_deref(), || -> Result<File, i32> {
                let file = File::options().read(true).write(true).custom_flags_nonblock(nonblock).open(node).map_err(|e| e.raw_os_error().unwrap_or(0))?;
                let mut ifr = IfReq::new(&name, DEVS[NS_DEV].flags());
                ioctl_ptr(file.as_raw_fd(), TUNSETIFF, &mut ifr)?;
                let _ = set_up(&name, true);
                let _ = fd_write(file.as_raw_fd(), &frame);
                Ok(file)
            });
            let desc = format!("netns: attach to {name} in {} namespace", if fresh { "a new" } else { "its" });
            match r {
                Err(e) => (format!("netns setup for {desc}"), Err(e), false),
                Ok((Err(e), _)) => (desc, Err(e), false),
                Ok((Ok(file), nsfile)) => {
                    let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                    g.queues.push(Queue { file: Arc::new(file), dev: NS_DEV, detached: false });
                    g.ns = Some(Arc::new(nsfile));
                    (desc, Ok(0), false)
                }
            }
        }
        6 => {
            let dev = rng.below(HOME as u64) as usize;
            let name = w.lock().unwrap_or_else(|e| e.into_inner()).name(dev);
            let ns = match in_netns(None, || ()) {
                Ok(((), ns)) => ns,
                Err(e) => return (format!("netns setup for moving {name}"), Err(e), false),
            };
            let r = crate::nl::Nl::open(0)
                .map_err(|e| e.raw_os_error().unwrap_or(0))
                .and_then(|nl| nl.set_netns_fd(crate::nl::ifindex(&name), ns.as_raw_fd()));
            // The namespace's only reference goes: it dies, and the device
            // with it (tun's devices are deleted, not sent home), while the
            // queues here stay open.
            drop(ns);
            if r.is_ok() {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                g.configured[dev] = false;
                    g.filtered[dev] = false;
                g.up[dev] = false;
            }
            (format!("netns: move {name} into a namespace that dies"), r.map(|_| 0), false)
        }
        7 => {
            w.lock().unwrap_or_else(|e| e.into_inner()).ns = None;
            ("netns: let go of the namespace's handle".into(), Ok(0), false)
        }
        0 | 1 => {
            let paths = crate::stress::module_files(&["rt-f0", "rt-f1", "rt-f2", "rt-f3", "rt-f4", "rt-f5"]);
            let Some(p) = paths.get(rng.below(paths.len().max(1) as u64) as usize).filter(|p| !p.ends_with("/micro_bench")) else {
                return ("module file (none)".into(), Ok(0), false);
            };
            match File::open(p) {
                Ok(f) => {
                    let mut buf = vec![0u8; rng.below(4096) as usize];
                    let r = fd_read(f.as_raw_fd(), &mut buf).map(|n| n as i64);
                    let _ = poll_fd(f.as_raw_fd(), libc::POLLIN, Duration::from_millis(rng.below(5)));
                    let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                    if g.mfiles.len() < 8 {
                        g.mfiles.push(f);
                    } else {
                        let i = rng.below(8) as usize;
                        g.mfiles.swap_remove(i);
                    }
                    // Sysfs attributes the device does not support answer
                    // ENODEV or EOPNOTSUPP; a removed debugfs file EIO.
                    let r = r.or_else(|e| {
                        if matches!(e, libc::EIO | libc::EINVAL | libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP) {
                            Ok(0)
                        } else {
                            Err(e)
                        }
                    });
                    (format!("read {p}"), r, false)
                }
                Err(e) => (format!("open {p}"), if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EACCES | libc::ENXIO | libc::EPERM)) { Ok(0) } else { Err(e.raw_os_error().unwrap_or(0)) }, false),
            }
        }
        2 => {
            let r = match crate::hardening::delete_module("rust_tun") {
                Ok(()) => crate::hardening::finit_module("rust_tun").map(|_| 1),
                Err(libc::EAGAIN | libc::EBUSY | libc::ENOENT) => Ok(0),
                Err(e) => Err(e),
            };
            ("rmmod rust_tun".into(), r, false)
        }
        _ => {
            // A child inherits every descriptor and works on them for a while.
            let fds: Vec<RawFd> = w.lock().unwrap_or_else(|e| e.into_inner()).queues.iter().map(|q| q.file.as_raw_fd()).collect();
            let seed = rng.next();
            // SAFETY: The child only makes raw syscalls on inherited fds and
            // leaves with `_exit`.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let mut r = Rng::new(seed);
                let mut buf = [0u8; 2048];
                for _ in 0..40 {
                    if let Some(&fd) = fds.get(r.below(fds.len().max(1) as u64) as usize) {
                        match r.below(3) {
                            0 => {
                                // Never blocking: no signal reaches the
                                // child, and its parent waits for it.
                                let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
                                // SAFETY: One iovec into `buf`.
                                let _ = unsafe { libc::preadv2(fd, &iov, 1, -1, libc::RWF_NOWAIT) };
                            }
                            1 => {
                                let p = [0x45u8; 28];
                                let iov = libc::iovec { iov_base: p.as_ptr() as *mut _, iov_len: p.len() };
                                // SAFETY: One iovec into `p`.
                                let _ = unsafe { libc::pwritev2(fd, &iov, 1, -1, libc::RWF_NOWAIT) };
                            }
                            _ => {
                                let _ = poll_fd(fd, libc::POLLIN, Duration::from_millis(1));
                            }
                        }
                    }
                }
                // SAFETY: Leave without running the parent's destructors.
                unsafe { libc::_exit(0) };
            }
            let mut status = 0;
            if pid > 0 {
                // SAFETY: Our child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            }
            let ok = pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            ("fork a child working on the queues".into(), if ok { Ok(0) } else { Err(libc::ECHILD) }, false)
        }
    }
}

extern "C" fn nothing(_: i32) {}

/// Extension for non-blocking opens.
trait NonblockOpen {
    fn custom_flags_nonblock(&mut self, on: bool) -> &mut Self;
}

impl NonblockOpen for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self, on: bool) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(if on { libc::O_NONBLOCK } else { 0 })
    }
}

/// Whether `r` is an outcome an operation described as `desc` may have
/// in chaos mode (anything else fails the run).
fn plausible(desc: &str, r: &Result<i64, i32>) -> bool {
    let Err(e) = *r else { return true };
    let e = e as i32;
    if desc.starts_with("fork") {
        return false;
    }
    if desc.starts_with("rmmod") || desc.starts_with("read /") || desc.starts_with("open /") || desc.starts_with("netns setup") {
        return false;
    }
    // The stack's own sends: no address (moved, MTU below IPv4's), no
    // route, a datagram past the MTU, no buffer.
    if desc.starts_with("udp") {
        return matches!(
            e,
            libc::EADDRNOTAVAIL | libc::ENETUNREACH | libc::EHOSTUNREACH | libc::EMSGSIZE | libc::ENOBUFS | libc::EINVAL
                | libc::EIO | libc::ENETDOWN | libc::EPERM | libc::EAGAIN | libc::ENODEV | libc::ECONNREFUSED
        );
    }
    // Pointers the fuzzer makes bad on purpose fault; so does a read that
    // was waiting on a queue whose device was unregistered under it (a
    // namespace gone, the last attached queue closed: tun.c's
    // `RCV_SHUTDOWN` in `tun_ring_recv()`); nothing else may.
    if e == libc::EFAULT {
        let queue_read = ["read ", "readv ", "preadv2 "].iter().any(|r| desc.starts_with(r)) && !desc.starts_with("read /");
        return desc.contains("bad pointer") || desc.starts_with("TUNSETIFF") || queue_read;
    }
    // The device may be gone (last queue closed, persist off) under any
    // queue operation; the rest are the validation and state errnos tun
    // uses.
    matches!(
        e,
        libc::EINVAL | libc::EBADFD | libc::EAGAIN | libc::EIO | libc::EBUSY | libc::EPERM | libc::EEXIST | libc::ERANGE
            | libc::E2BIG | libc::EMSGSIZE | libc::ENOTTY | libc::EOPNOTSUPP | libc::ENODEV | libc::EBADF
            | libc::ENOMEM | libc::EINTR | libc::EFAULT
    )
}

/// Deletes the fuzzer's devices.
fn cleanup(prefix: &str) {
    if let Ok(dir) = std::fs::read_dir("/sys/class/net") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(prefix) {
                let _ = std::process::Command::new("/bin/sh").arg("-c").arg(format!("ip link del {name}")).output();
            }
        }
    }
}

/// No ICMP rate limits: the stack's replies are the same on every run.
fn deterministic_stack() {
    let _ = std::fs::write("/proc/sys/net/ipv4/icmp_ratelimit", "0");
    let _ = std::fs::write("/proc/sys/net/ipv4/icmp_msgs_per_sec", "1000000");
    let _ = std::fs::write("/proc/sys/net/ipv4/icmp_msgs_burst", "1000000");
}

/// Chaos mode: `procs` processes of two threads each.
pub fn fuzz(node: &str, seed: u64, iters: u64, procs: u64) -> Result<String, String> {
    deterministic_stack();
    let mut children = Vec::new();
    for p in 0..procs {
        // SAFETY: fork in a single-threaded process (the test runner runs
        // `rtun fuzz` as a process of its own).
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let code = match fuzz_proc(node, seed.wrapping_add(p), iters, p as u8) {
                Ok(line) => {
                    println!("fuzz[{p}]: {line}");
                    0
                }
                Err(e) => {
                    println!("fuzz[{p}]: FAILED: {e}");
                    1
                }
            };
            // SAFETY: Leave without running parent destructors.
            unsafe { libc::_exit(code) };
        }
        if pid < 0 {
            return Err(format!("fork: errno {}", errno()));
        }
        children.push(pid);
    }
    let mut failed = 0;
    for pid in children {
        let mut status = 0;
        // SAFETY: Waiting for our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            failed += 1;
        }
    }
    cleanup("rt-f");
    // The namespaces the processes made die with their last files, in a
    // work item: wait for their devices' module references.
    let t0 = std::time::Instant::now();
    while std::fs::read_to_string("/sys/module/rust_tun/refcnt").is_ok_and(|r| r.trim() != "0") && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if failed != 0 {
        return Err(format!("{failed} fuzz processes failed"));
    }
    Ok(format!("seed={seed} procs={procs} iterations={}", iters * procs))
}

fn fuzz_proc(node: &str, seed: u64, iters: u64, p: u8) -> Result<String, String> {
    // Devices shared by all processes; addresses per process.
    let world = Arc::new(Mutex::new(World::new("rt-f", 90 + p, true)));
    let _listener = std::net::UdpSocket::bind(format!("10.{}.0.1:7000", 90 + p)).ok();
    // SIGUSR1, without SA_RESTART, every 40 ms to each worker: blocked
    // reads (and polls) end with EINTR.
    // SAFETY: A zeroed sigaction with an empty handler.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = nothing as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut());
    }
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<libc::pthread_t>();
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let workers: Vec<libc::pthread_t> = rx.iter().take(2).collect();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(40));
                for &w in &workers {
                    // SAFETY: Live worker threads (joined only after `done`).
                    unsafe { libc::pthread_kill(w, libc::SIGUSR1) };
                }
            }
        })
    };
    let threads: Vec<_> = (0..2u64)
        .map(|t| {
            let (world, node, tx) = (world.clone(), node.to_string(), tx.clone());
            std::thread::spawn(move || -> Result<Counts, String> {
                // SAFETY: No preconditions.
                let _ = tx.send(unsafe { libc::pthread_self() });
                let mut rng = Rng::new(seed.wrapping_mul(31).wrapping_add(t));
                let mut counts = Counts::default();
                for i in 0..iters / 2 {
                    let (desc, r, _) = step(&world, &node, &mut rng);
                    if !plausible(&desc, &r) {
                        return Err(format!("op {i} of thread {t}: {desc}: {r:?}"));
                    }
                    counts.add(&r);
                }
                Ok(counts)
            })
        })
        .collect();
    let mut total = Counts::default();
    let results: Vec<_> = threads.into_iter().map(|t| t.join()).collect();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = watchdog.join();
    for r in results {
        let c = r.map_err(|_| "a fuzz thread panicked")??;
        total.ops += c.ops;
        total.ok += c.ok;
        total.state += c.state;
        total.invalid += c.invalid;
    }
    Ok(total.report())
}

/// Differential mode: the same seeded sequence against tun, then rust_tun.
pub fn fuzz_diff(seed: u64, iters: u64) -> Result<String, String> {
    deterministic_stack();
    // One ARP request per unresolved neighbour (a mutated packet's source
    // the stack answers), sent at once, and no retransmissions or probes,
    // which would come on the neighbour timers, between operations that
    // differ from run to run. Put back at the end.
    // And no ICMP error rate limit: icmp_global_allow() refuses for the
    // rest of a 20 ms window once its credit is spent, which depends on
    // time.
    const NEIGH: [(&str, &str); 4] = [
        ("/proc/sys/net/ipv4/neigh/default/mcast_solicit", "1"),
        ("/proc/sys/net/ipv4/neigh/default/ucast_solicit", "0"),
        ("/proc/sys/net/ipv4/neigh/default/app_solicit", "0"),
        ("/proc/sys/net/ipv4/icmp_ratemask", "0"),
    ];
    let saved: Vec<String> = NEIGH.iter().map(|(f, _)| std::fs::read_to_string(f).unwrap_or_default()).collect();
    for (f, v) in NEIGH {
        let _ = std::fs::write(f, v);
    }
    // A driver's difference comes back on every run of the same sequence;
    // what the stack does on its own timers (the fuzzer keeps it out as
    // far as it can, but a loaded host stretches every step) moves from
    // run to run. A divergence is run again, twice, and fails the test
    // only if the same one comes back both times. (Seen at seed 1: op
    // 1449, a TUN queue's drain at close holding the stack's ICMP replies,
    // differs in either direction, tun or rust_tun missing one, in about
    // half the first runs and came back once in about six: not yet
    // explained, see Documentation/rust_tun.rst.)
    let again_same = |op: usize, d: &str| -> Result<(), (usize, String)> {
        for _ in 0..2 {
            match fuzz_diff_run(seed, iters) {
                Err((op2, d2, _)) if op2 == op && d2 == d => {}
                Err((op2, d2, _)) => return Err((op2, d2)),
                Ok(_) => return Err((usize::MAX, "none".to_string())),
            }
        }
        Ok(())
    };
    let r = match fuzz_diff_run(seed, iters) {
        Err((op, d, summary)) => match again_same(op, &d) {
            Ok(()) => Err(format!("first divergence from tun (three times): {d}; {summary}")),
            Err((op2, d2)) => Ok(format!(
                "no reproducible divergence from tun: the first run's at op {op} ({d}) did not come back (a rerun: {}); {summary}",
                if op2 == usize::MAX { d2 } else { format!("op {op2}: {d2}") }
            )),
        },
        Ok(summary) => Ok(format!("no divergence from tun; {summary}")),
    };
    for ((f, _), v) in NEIGH.iter().zip(&saved) {
        let _ = std::fs::write(f, v.trim());
    }
    r
}

/// One run of the sequence on each driver: the summary, or the first
/// divergence (its operation, what differs) and the summary.
fn fuzz_diff_run(seed: u64, iters: u64) -> Result<String, (usize, String, String)> {
    type Op = (String, Result<i64, i32>, bool, Vec<u8>, String, (Vec<Vec<u8>>, bool));
    let run = |node: &str| -> Vec<Op> {
        cleanup("rt-d");
        let world = Mutex::new(World::new("rt-d", 98, false));
        let _listener = std::net::UdpSocket::bind("10.98.0.1:7000").ok();
        let mut rng = Rng::new(seed);
        let mut out = Vec::new();
        for _ in 0..iters {
            let (d, r, gap) = step(&world, node, &mut rng);
            let mut g = world.lock().unwrap_or_else(|e| e.into_inner());
            let (data, gap_data) = (std::mem::take(&mut g.out), std::mem::take(&mut g.gap_out));
            let mq = (std::mem::take(&mut g.mq_out), std::mem::take(&mut g.mq_loose));
            drop(g);
            out.push((d, r, gap, data, gap_data, mq));
        }
        // At the end, what every queue still holds and every device's
        // attributes and counters.
        let mut g = world.lock().unwrap_or_else(|e| e.into_inner());
        for dev in 0..HOME {
            drain(&mut g, dev);
            let name = g.name(dev);
            let mut gap_data = String::new();
            if link_exists(&name) {
                let s = snapshot(&name, DEVS[dev].tap, g.steered[dev]);
                g.out.extend_from_slice(s.as_bytes());
                gap_data = link_settings(&name);
            }
            let (data, mq) = (std::mem::take(&mut g.out), (std::mem::take(&mut g.mq_out), std::mem::take(&mut g.mq_loose)));
            out.push((format!("at the end: {name}"), Ok(0), false, data, gap_data, mq));
        }
        drop(g);
        // Persistent devices outlive the queues: delete them.
        drop(world);
        cleanup("rt-d");
        out
    };
    let tun = run("/dev/net/tun");
    let rust = run("/dev/net/rust_tun");
    let mut counts = Counts::default();
    let mut first: Option<String> = None;
    let mut first_op = 0;
    let mut gaps = std::collections::BTreeMap::<String, u64>::new();
    let (mut steered, mut records, mut bytes) = (0, 0, 0);
    let (mut multisets, mut mq_packets, mut mq_loose, mut mq_loose_diff) = (0, 0, 0, 0);
    for (i, ((dt, rt, gap, xt, gt, mt), (dr, rr, _, xr, gr, mr))) in tun.iter().zip(&rust).enumerate() {
        counts.add(rr);
        if dt != dr {
            // The sequences themselves part ways only after a divergence.
            first.get_or_insert_with(|| format!("op {i}: the operations differ: tun {dt}, rust_tun {dr}"));
            break;
        }
        if xt != xr && first.is_none() {
            // What was read (or the attributes) differ: show both from a
            // little before the first byte that differs.
            let at = xt.iter().zip(xr).position(|(a, b)| a != b).unwrap_or(xt.len().min(xr.len()));
            let show = |x: &[u8]| {
                let from = at.saturating_sub(32);
                let part = &x[from.min(x.len())..(at + 96).min(x.len())];
                format!("{} bytes, from byte {from}: {:02x?} {:?}", x.len(), part, String::from_utf8_lossy(part))
            };
            first = Some(format!("op {i}: {dt}: {rt:?}: the data differ: tun {}; rust_tun {}", show(xt), show(xr)));
        }
        let ((mt, loose), (mr, _)) = (mt, mr);
        if !mt.is_empty() || !mr.is_empty() {
            // A multi-queue device's multiset: what all its queues read.
            // Until a queue leaves the device, the same in both drivers.
            // Deliberate difference (rst, "Flows on detach"): after that,
            // tun.c's flows keep naming the departed queue's index, and
            // what they steer there is dropped or lands elsewhere until
            // the flow ages (3 s, so the moment differs from run to run):
            // those multisets are counted, not compared.
            multisets += 1;
            mq_packets += mt.len();
            if *loose {
                mq_loose += 1;
                mq_loose_diff += usize::from(mt != mr);
            } else if mt != mr && first.is_none() {
                let missing = mt.iter().find(|p| !mr.contains(p)).or_else(|| mr.iter().find(|p| !mt.contains(p)));
                first = Some(format!(
                    "op {i}: {dt}: a multi-queue device's queues read {} packets on tun, {} on rust_tun; one only one driver read: {:02x?}",
                    mt.len(),
                    mr.len(),
                    missing.map(|p| &p[..p.len().min(96)])
                ));
            }
        }
        if gt != gr && first.is_none() {
            first = Some(format!("op {i}: {dt}: ethtool link settings: tun {gt}, rust_tun {gr}"));
        }
        if !xt.is_empty() {
            records += 1;
            bytes += xt.len();
        }
        if dt.ends_with(STEERED) {
            steered += 1;
            continue;
        }
        if rt != rr {
            if *gap {
                let key = dt.split(' ').next().unwrap_or("").to_string();
                *gaps.entry(format!("{key} (tun {rt:?}, rust_tun {rr:?})")).or_default() += 1;
            } else if first.is_none() {
                first = Some(format!("op {i}: {dt}: tun {rt:?}, rust_tun {rr:?}"));
            }
        }
    }
    if std::env::var("RTUN_FUZZ_TRACE").is_ok() {
        for (i, ((dt, rt, _, _, _, _), (_, rr, _, _, _, _))) in tun.iter().zip(&rust).enumerate() {
            println!("trace {i}: {dt}: tun {rt:?} rust_tun {rr:?}");
        }
    }
    let gap_list: Vec<String> = gaps.iter().map(|(k, n)| format!("{k} x{n}")).collect();
    let summary = format!(
        "seed={seed} {}; {records} operations' data compared ({bytes} bytes: reads, drains, multisets of multi-queue reads, sysfs and counters); {steered} reads/polls of a multi-queue device's queues compared only as multisets: {multisets} multisets of {mq_packets} packets, {mq_loose} of them after a queue left (not compared; {mq_loose_diff} differ); known gaps: {}",
        counts.report(),
        if gap_list.is_empty() { "none".into() } else { gap_list.join(", ") }
    );
    match first {
        Some(d) => {
            first_op = d.strip_prefix("op ").and_then(|r| r.split(':').next()).and_then(|n| n.parse().ok()).unwrap_or(first_op);
            Err((first_op, d, summary))
        }
        None => Ok(summary),
    }
}
