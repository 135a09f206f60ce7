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
//!
//! Here: the world (devices, queues, counts) and the two drivers of the
//! runs; one operation is in step.rs (chaos.rs: the chaos mode's own),
//! what operations do to the devices in dev.rs, the differential run in
//! diff.rs.

use crate::harness::{ifreq_ioctl, set_up};
use crate::stress::Rng;
use crate::tun::*;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod dev;
mod step;
mod chaos;
pub mod diff;

use dev::*;
use step::*;
use chaos::*;

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
    // route, a datagram past the MTU, no buffer. Their sockets bind a port
    // the RNG picks: two chaos threads may pick the same device and port
    // at once (stack_send()).
    if desc.starts_with("udp bind") && e == libc::EADDRINUSE {
        return true;
    }
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

/// A signal handler that does nothing (the chaos mode's signals interrupt
/// blocking calls).
extern "C" fn nothing(_: i32) {}

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
