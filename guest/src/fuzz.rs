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
/// a deliberate difference, so `fuzz-diff` does not compare those results.
const STEERED: &str = " [steered]";

/// One device of the fuzzer's world.
#[derive(Clone, Copy)]
struct DevSpec {
    suffix: &'static str,
    tap: bool,
    pi: bool,
    mq: bool,
    /// Its /24: 10.NET.IDX.0.
    idx: u8,
}

const DEVS: [DevSpec; 3] = [
    DevSpec { suffix: "0", tap: false, pi: false, mq: true, idx: 0 },
    DevSpec { suffix: "1", tap: true, pi: false, mq: false, idx: 1 },
    DevSpec { suffix: "2", tap: false, pi: true, mq: false, idx: 2 },
];

impl DevSpec {
    fn flags(&self) -> u16 {
        (if self.tap { IFF_TAP } else { IFF_TUN })
            | if self.pi { 0 } else { IFF_NO_PI }
            | if self.mq { IFF_MULTI_QUEUE } else { 0 }
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
    up: [bool; 3],
    /// Devices configured (addressed) already.
    configured: [bool; 3],
    /// Devices that have had more than one queue (see `STEERED`).
    steered: [bool; 3],
    /// The TAP device's MAC (read when it is first attached).
    mac: [u8; 6],
    chaos: bool,
}

impl World {
    fn name(&self, dev: usize) -> String {
        format!("{}{}", self.prefix, DEVS[dev].suffix)
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

fn ifreq_ioctl(fd: RawFd, req: u64, name: &str, val: i32) -> Result<i64, i32> {
    #[repr(C)]
    struct IfReqInt {
        name: [u8; 16],
        val: i32,
        pad: [u8; 20],
    }
    let mut ifr = IfReqInt { name: [0; 16], val, pad: [0; 20] };
    ifr.name[..name.len().min(15)].copy_from_slice(&name.as_bytes()[..name.len().min(15)]);
    // SAFETY: Plain socket for interface ioctls.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    let r = ioctl_ptr(s, req, &mut ifr).map(i64::from);
    // SAFETY: Our socket.
    unsafe { libc::close(s) };
    let _ = fd;
    r
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

/// A valid packet for device `dev`, from its peer: ICMP echo or UDP (TUN),
/// an ARP request for the device's address (TAP).
fn valid_packet(w: &World, dev: usize, rng: &mut Rng) -> Vec<u8> {
    let d = DEVS[dev];
    let (me, peer) = ([10, w.net, d.idx, 1], [10, w.net, d.idx, 2]);
    if d.tap {
        let src = [2, 0, 0, 0, w.net, 2];
        let arp = crate::pkt::arp(1, src, peer, [0; 6], me);
        let dst = if rng.below(2) == 0 { [0xff; 6] } else { w.mac };
        return crate::pkt::eth(dst, src, crate::pkt::ETH_P_ARP, &arp);
    }
    let p = match rng.below(3) {
        0 => crate::pkt::ipv4(peer, me, crate::pkt::IPPROTO_ICMP, &crate::pkt::icmp_echo(8, 1, rng.below(1000) as u16, &[7u8; 32])),
        // The fuzzer's listener (port 7000), or nobody's (an ICMP error
        // comes back).
        1 => crate::pkt::ipv4(peer, me, crate::pkt::IPPROTO_UDP, &crate::pkt::udp(5000 + rng.below(64) as u16, 7000, &[1u8; 40])),
        _ => crate::pkt::ipv4(peer, me, crate::pkt::IPPROTO_UDP, &crate::pkt::udp(5000, 9, &vec![2u8; rng.below(1400) as usize])),
    };
    if d.pi {
        let mut w = vec![0, 0, 0x08, 0x00];
        w.extend_from_slice(&p);
        w
    } else {
        p
    }
}

/// Mutates a packet (or not): truncation, extension, a flipped byte, a
/// wrong tun_pi protocol, an empty or an oversized write.
fn mutate(mut p: Vec<u8>, rng: &mut Rng) -> (Vec<u8>, &'static str) {
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
        5 => (vec![0x45; 65536 + rng.below(5000) as usize], "oversized"),
        _ => (p, "valid"),
    }
}

/// Configures a device the first time it is attached: its address (TUN:
/// point to point to .2; TAP: a /24), and up.
fn configure(w: &mut World, dev: usize) {
    if w.configured[dev] {
        return;
    }
    w.configured[dev] = true;
    let name = w.name(dev);
    let d = DEVS[dev];
    let cmd = if d.tap {
        format!("ip addr add 10.{}.{}.1/24 dev {name}", w.net, d.idx)
    } else {
        format!("ip addr add 10.{}.{}.1 peer 10.{}.{}.2 dev {name}", w.net, d.idx, w.net, d.idx)
    };
    let _ = std::process::Command::new("/bin/sh").arg("-c").arg(&cmd).output();
    let _ = set_up(&name, true);
    w.up[dev] = true;
    if d.tap {
        let mac = sysfs(&name, "address");
        let bytes: Vec<u8> = mac.split(':').filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
        if let Ok(m) = bytes.try_into() {
            w.mac = m;
        }
    }
}

/// One operation: generated from the RNG against the world, run, and
/// accounted. Returns (description, result, whether a divergence in it is
/// a known gap).
fn step(w: &Mutex<World>, node: &str, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let kind = rng.below(100);
    // Pick a queue (and what we need of it) under the lock.
    let pick = |w: &World, rng: &mut Rng| -> Option<Queue> {
        (!w.queues.is_empty()).then(|| w.queues[rng.below(w.queues.len() as u64) as usize].clone())
    };
    let (snap, name_of, prefix, chaos) = {
        let g = w.lock().unwrap_or_else(|e| e.into_inner());
        (pick(&g, rng), [g.name(0), g.name(1), g.name(2)], g.prefix.clone(), g.chaos)
    };
    // With no queue to work on, queue operations become attaches.
    let kind = if snap.is_none() && (15..98).contains(&kind) && !(85..=93).contains(&kind) { kind % 15 } else { kind };
    match kind {
        // Attach: open the node and TUNSETIFF, mostly valid.
        0..=14 => {
            let dev = rng.below(3) as usize;
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
                _ => (name_of[dev].clone(), d.flags(), "valid"),
            };
            // Chaos mode opens some blocking (a signal interrupts their
            // reads); the differential mode never blocks.
            let nonblock = !chaos || rng.below(3) != 0;
            let file = match File::options().read(true).write(true).custom_flags_nonblock(nonblock).open(node) {
                Ok(f) => f,
                Err(e) => return (format!("open {node}"), Err(e.raw_os_error().unwrap_or(0)), false),
            };
            let mut ifr = IfReq::new(&name, flags);
            let r = if rng.below(20) == 0 {
                ioctl_ptr(file.as_raw_fd(), TUNSETIFF, 16usize as *mut IfReq).map(i64::from)
            } else {
                ioctl_ptr(file.as_raw_fd(), TUNSETIFF, &mut ifr).map(i64::from)
            };
            if r.is_ok() && what != "bad name" {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
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
        15..=44 => {
            let Some(q) = snap else { return ("write (no queue)".into(), Err(libc::EBADF), false) };
            let (p, what) = {
                let g = w.lock().unwrap_or_else(|e| e.into_inner());
                let p = valid_packet(&g, q.dev, rng);
                mutate(p, rng)
            };
            let fd = q.file.as_raw_fd();
            let r = if rng.below(3) == 0 && p.len() > 2 {
                // writev in pieces, with empty ones.
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
            } else {
                fd_write(fd, &p).map(|n| n as i64)
            };
            (format!("write {} bytes ({what}) to {}", p.len(), DEVS[q.dev].suffix), r, what == "oversized")
        }
        // Reads.
        45..=64 => {
            let Some(q) = snap else { return ("read (no queue)".into(), Err(libc::EBADF), false) };
            let fd = q.file.as_raw_fd();
            if chaos && rng.below(3) == 0 {
                // Wait a little for something to read.
                let _ = poll_fd(fd, libc::POLLIN, Duration::from_millis(rng.below(30)));
            }
            let len = [0usize, 3, 10, 64, 1500, 2048, 65536][rng.below(7) as usize];
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
            let steered = !chaos && w.lock().unwrap_or_else(|e| e.into_inner()).steered[q.dev];
            (format!("{how} {len} from {}{}", DEVS[q.dev].suffix, if steered { STEERED } else { "" }), r, false)
        }
        // Polls.
        65..=69 => {
            let Some(q) = snap else { return ("poll (no queue)".into(), Err(libc::EBADF), false) };
            let t = if chaos { rng.below(30) } else { 0 };
            let r = poll_fd(q.file.as_raw_fd(), libc::POLLIN | libc::POLLOUT, Duration::from_millis(t)).map(i64::from);
            let steered = !chaos && w.lock().unwrap_or_else(|e| e.into_inner()).steered[q.dev];
            (format!("poll {} ({t} ms){}", DEVS[q.dev].suffix, if steered { STEERED } else { "" }), r, false)
        }
        // The tun ioctls.
        70..=84 => {
            let Some(q) = snap else { return ("ioctl (no queue)".into(), Err(libc::EBADF), false) };
            let fd = q.file.as_raw_fd();
            let mut int: i32 = 0;
            let mut ifr = IfReq::new("", 0);
            let (desc, r, gap): (String, Result<i64, i32>, bool) = match rng.below(18) {
                0 => ("TUNGETIFF".into(), ioctl_ptr(fd, TUNGETIFF, &mut ifr).map(|_| i64::from(ifr.flags)), false),
                1 => {
                    let f = if q.detached { IFF_ATTACH_QUEUE } else { IFF_DETACH_QUEUE };
                    let f = if rng.below(5) == 0 { rng.next() as u16 } else { f };
                    let mut ifr = IfReq::new("", f);
                    let r = ioctl_ptr(fd, TUNSETQUEUE, &mut ifr).map(i64::from);
                    if r.is_ok() {
                        let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                        for x in g.queues.iter_mut().filter(|x| Arc::ptr_eq(&x.file, &q.file)) {
                            x.detached = f & IFF_DETACH_QUEUE != 0;
                        }
                    }
                    (format!("TUNSETQUEUE {f:#x}"), r, false)
                }
                2 => {
                    let v = rng.below(2);
                    (format!("TUNSETPERSIST {v}"), ioctl_val(fd, TUNSETPERSIST, v as libc::c_ulong).map(i64::from), false)
                }
                3 => {
                    let v = [0u64, 1000, 2000, u32::MAX as u64][rng.below(4) as usize];
                    (format!("TUNSETOWNER {v}"), ioctl_val(fd, TUNSETOWNER, v as libc::c_ulong).map(i64::from), false)
                }
                4 => {
                    let v = [0u64, 1000, u32::MAX as u64][rng.below(3) as usize];
                    (format!("TUNSETGROUP {v}"), ioctl_val(fd, TUNSETGROUP, v as libc::c_ulong).map(i64::from), false)
                }
                5 => ("TUNGETFEATURES".into(), ioctl_ptr(fd, TUNGETFEATURES, &mut int).map(|_| i64::from(int)), true),
                6 => {
                    int = i32::MAX;
                    ("TUNSETSNDBUF".into(), ioctl_ptr(fd, TUNSETSNDBUF, &mut int).map(i64::from), false)
                }
                7 => ("TUNGETSNDBUF".into(), ioctl_ptr(fd, TUNGETSNDBUF, &mut int).map(|_| i64::from(int)), false),
                8 => ("TUNSETOFFLOAD 0".into(), ioctl_val(fd, TUNSETOFFLOAD, 0).map(i64::from), false),
                9 => ("TUNGETVNETHDRSZ".into(), ioctl_ptr(fd, TUNGETVNETHDRSZ, &mut int).map(|_| i64::from(int)), false),
                10 => {
                    int = 10;
                    ("TUNSETVNETHDRSZ 10".into(), ioctl_ptr(fd, TUNSETVNETHDRSZ, &mut int).map(i64::from), false)
                }
                11 => {
                    // struct tun_filter { flags, count } = accept everything.
                    let mut f = [0u16; 2];
                    ("TUNSETTXFILTER none".into(), ioctl_ptr(fd, TUNSETTXFILTER, f.as_mut_ptr()).map(i64::from), false)
                }
                12 => ("TUNSETNOCSUM 0".into(), ioctl_val(fd, TUNSETNOCSUM, 0).map(i64::from), false),
                13 => ("TUNSETDEBUG 0".into(), ioctl_val(fd, TUNSETDEBUG, 0).map(i64::from), false),
                14 => {
                    int = 1;
                    ("TUNSETCARRIER 1".into(), ioctl_ptr(fd, TUNSETCARRIER, &mut int).map(i64::from), false)
                }
                15 => {
                    let r = ioctl_val(fd, TUNGETDEVNETNS, 0);
                    if let Ok(nsfd) = r {
                        // SAFETY: The namespace fd it returned.
                        unsafe { libc::close(nsfd) };
                    }
                    ("TUNGETDEVNETNS".into(), r.map(|_| 0), false)
                }
                16 => match rng.below(8) {
                    0 => ("TUNGETVNETLE".into(), ioctl_ptr(fd, TUNGETVNETLE, &mut int).map(|_| i64::from(int)), false),
                    1 => {
                        int = 0;
                        ("TUNSETVNETLE 0".into(), ioctl_ptr(fd, TUNSETVNETLE, &mut int).map(i64::from), false)
                    }
                    2 => {
                        // The device's own type: no change.
                        let ty = if DEVS[q.dev].tap { 1 } else { 65534 };
                        (format!("TUNSETLINK {ty}"), ioctl_val(fd, TUNSETLINK, ty).map(i64::from), false)
                    }
                    3 => {
                        // A classic BPF program that accepts everything:
                        // { BPF_RET | BPF_K, 0, 0, 0xffff }.
                        #[repr(C)]
                        struct SockFprog {
                            len: u16,
                            filter: *const u16,
                        }
                        let insn: [u16; 4] = [0x06, 0, 0xffff, 0];
                        let mut prog = SockFprog { len: 1, filter: insn.as_ptr() };
                        let r = ioctl_ptr(fd, TUNATTACHFILTER, &mut prog).map(i64::from);
                        ("TUNATTACHFILTER accept-all".into(), r, false)
                    }
                    4 => ("TUNDETACHFILTER".into(), ioctl_val(fd, TUNDETACHFILTER, 0).map(i64::from), false),
                    5 => {
                        let mut prog = [0u64; 2];
                        ("TUNGETFILTER".into(), ioctl_ptr(fd, TUNGETFILTER, prog.as_mut_ptr()).map(i64::from), false)
                    }
                    6 => {
                        int = 12345;
                        ("TUNSETIFINDEX".into(), ioctl_ptr(fd, TUNSETIFINDEX, &mut int).map(i64::from), false)
                    }
                    _ => {
                        int = -1;
                        let cmd = if rng.below(2) == 0 { TUNSETSTEERINGEBPF } else { TUNSETFILTEREBPF };
                        ("TUNSET*EBPF -1".into(), ioctl_ptr(fd, cmd, &mut int).map(i64::from), true)
                    }
                },
                _ => {
                    // An unknown command; or a known one with a bad pointer.
                    let cmd = [0x54ffu64, TUNGETIFF, TUNSETQUEUE, TUNGETFEATURES][rng.below(4) as usize];
                    (format!("ioctl {cmd:#x} bad pointer"), ioctl_ptr(fd, cmd, 8usize as *mut u8).map(i64::from), cmd == TUNGETFEATURES)
                }
            };
            (format!("{desc} on {}", DEVS[q.dev].suffix), r, gap)
        }
        // Device administration.
        85..=93 => {
            let dev = rng.below(3) as usize;
            let name = name_of[dev].clone();
            match rng.below(4) {
                0 => {
                    let up = rng.below(3) != 0;
                    let r = set_up(&name, up);
                    if r.is_ok() {
                        w.lock().unwrap_or_else(|e| e.into_inner()).up[dev] = up;
                    }
                    (format!("{name} {}", if up { "up" } else { "down" }), r, false)
                }
                1 => {
                    let mtu = [67, 68, 576, 1280, 1500, 9000, 65521, 65535, 65536][rng.below(9) as usize];
                    (format!("{name} mtu {mtu}"), ifreq_ioctl(0, libc::SIOCSIFMTU, &name, mtu), false)
                }
                2 => {
                    let q = [0, 1, 4, 64, 500, 1000, 1 << 20][rng.below(7) as usize];
                    (format!("{name} txqueuelen {q}"), ifreq_ioctl(0, libc::SIOCSIFTXQLEN, &name, q), false)
                }
                // (Not in the differential run: with RPS on, tun.c records
                // a detached queue's stale index and get_rps_cpu() warns --
                // tun's bug, documented, which would fail the run.)
                _ if !chaos => (format!("{name} up (again)"), set_up(&name, true), false),
                _ => {
                    let v = ["0", "4096"][rng.below(2) as usize];
                    let r = std::fs::write("/proc/sys/net/core/rps_sock_flow_entries", v).map(|_| 0).map_err(|e| e.raw_os_error().unwrap_or(0));
                    (format!("rps_sock_flow_entries {v}"), r, false)
                }
            }
        }
        // Close.
        94..=97 => {
            let Some(q) = snap else { return ("close (no queue)".into(), Ok(0), false) };
            let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = g.queues.iter().position(|x| Arc::ptr_eq(&x.file, &q.file)) {
                g.queues.swap_remove(i);
            }
            (format!("close a queue of {}", DEVS[q.dev].suffix), Ok(0), false)
        }
        // Chaos only: the module's files, rmmod, fork.
        _ if chaos => chaos_step(w, rng),
        _ => ("nothing".into(), Ok(0), false),
    }
}

/// Chaos-only operations: the module's own files (open, read, poll,
/// close), rmmod with whatever is open, and a forked child working on
/// inherited descriptors.
fn chaos_step(w: &Mutex<World>, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    match rng.below(5) {
        0 | 1 => {
            let paths = crate::stress::module_files(&["rt-f0", "rt-f1", "rt-f2"]);
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
                                let _ = fd_read(fd, &mut buf);
                            }
                            1 => {
                                let _ = fd_write(fd, &[0x45; 28]);
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
    if desc.starts_with("rmmod") || desc.starts_with("read /") || desc.starts_with("open /") {
        return false;
    }
    // Pointers the fuzzer makes bad on purpose fault; nothing else may.
    if e == libc::EFAULT {
        return desc.contains("bad pointer") || desc.starts_with("TUNSETIFF");
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
    if failed != 0 {
        return Err(format!("{failed} fuzz processes failed"));
    }
    Ok(format!("seed={seed} procs={procs} iterations={}", iters * procs))
}

fn fuzz_proc(node: &str, seed: u64, iters: u64, p: u8) -> Result<String, String> {
    let world = Arc::new(Mutex::new(World {
        // Devices shared by all processes; addresses per process.
        prefix: "rt-f".into(),
        net: 90 + p,
        queues: Vec::new(),
        mfiles: Vec::new(),
        up: [false; 3],
        configured: [false; 3],
        steered: [false; 3],
        mac: [0; 6],
        chaos: true,
    }));
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
    let run = |node: &str| -> Vec<(String, Result<i64, i32>, bool)> {
        cleanup("rt-d");
        let world = Mutex::new(World {
            prefix: "rt-d".into(),
            net: 98,
            queues: Vec::new(),
            mfiles: Vec::new(),
            up: [false; 3],
            configured: [false; 3],
            steered: [false; 3],
            mac: [0; 6],
            chaos: false,
        });
        let _listener = std::net::UdpSocket::bind("10.98.0.1:7000").ok();
        let mut rng = Rng::new(seed);
        let mut out = Vec::new();
        for _ in 0..iters {
            out.push(step(&world, node, &mut rng));
        }
        // Persistent devices outlive the queues: delete them.
        drop(world);
        cleanup("rt-d");
        out
    };
    let tun = run("/dev/net/tun");
    let rust = run("/dev/net/rust_tun");
    let mut counts = Counts::default();
    let mut first: Option<String> = None;
    let mut gaps = std::collections::BTreeMap::<String, u64>::new();
    let mut steered = 0;
    for (i, ((dt, rt, gap), (dr, rr, _))) in tun.iter().zip(&rust).enumerate() {
        counts.add(rr);
        if dt != dr {
            // The sequences themselves part ways only after a divergence.
            first.get_or_insert_with(|| format!("op {i}: the operations differ: tun {dt}, rust_tun {dr}"));
            break;
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
        for (i, ((dt, rt, _), (_, rr, _))) in tun.iter().zip(&rust).enumerate() {
            println!("trace {i}: {dt}: tun {rt:?} rust_tun {rr:?}");
        }
    }
    let gap_list: Vec<String> = gaps.iter().map(|(k, n)| format!("{k} x{n}")).collect();
    let summary = format!(
        "seed={seed} {}; {steered} reads/polls of a multi-queue device's queues not compared; known gaps (not implemented yet): {}",
        counts.report(),
        if gap_list.is_empty() { "none".into() } else { gap_list.join(", ") }
    );
    match first {
        Some(d) => Err(format!("first divergence from tun: {d}; {summary}")),
        None => Ok(format!("no divergence from tun; {summary}")),
    }
}
