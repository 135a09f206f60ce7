//! The LSM hooks of tun devices (issue 18, item 3): the same operations
//! must reach the same `security_tun_dev_*()` hooks, as often, on rust_tun
//! as on the C tun, or an LSM's `tun_socket` policy (SELinux: libvirt's
//! sVirt, container-selinux) is bypassed in drop-in mode. Counted with a
//! kprobe on each hook (`kprobe_profile`'s hit counts), per operation, both
//! drivers in one test on one kernel: the debug kernel, whose
//! `CONFIG_SECURITY_NETWORK=y` makes the hooks real functions (with it off
//! they are empty inlines, and the test skips). A policy that refuses is
//! deny.rs's, with the BPF LSM programs of bpf.rs.

use super::*;

mod bpf;
mod deny;

pub use deny::{t_lsm_deny_attach_queue, t_lsm_deny_create, t_lsm_deny_open};

/// The six hooks tun.c 6.12 calls, in tun.c's order of first use.
const HOOKS: [&str; 6] = [
    "security_tun_dev_create",
    "security_tun_dev_alloc_security",
    "security_tun_dev_attach",
    "security_tun_dev_open",
    "security_tun_dev_attach_queue",
    "security_tun_dev_free_security",
];

/// The kprobe event group the test's probes live in.
const GROUP: &str = "rtun_lsm";

/// Hits per hook, in [`HOOKS`]' order.
type Counts = [u64; 6];

/// A kprobe on each of [`HOOKS`], enabled; removed on drop.
struct HookProbes {
    tracing: String,
}

impl HookProbes {
    fn new(tracing: String) -> Result<Self, String> {
        let p = HookProbes { tracing };
        // A killed earlier run may have left its probes.
        p.remove();
        for h in HOOKS {
            p.append("kprobe_events", &format!("p:{GROUP}/{h} {h}"))?;
        }
        write_file(&format!("{}/events/{GROUP}/enable", p.tracing), "1")?;
        Ok(p)
    }

    fn append(&self, file: &str, line: &str) -> TestResult {
        use std::io::Write;
        let path = format!("{}/{file}", self.tracing);
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).map_err(|e| format!("{path}: {e}"))?;
        writeln!(f, "{line}").map_err(|e| format!("{path}: {line:?}: {e}"))
    }

    fn remove(&self) {
        let _ = std::fs::write(format!("{}/events/{GROUP}/enable", self.tracing), "0");
        for h in HOOKS {
            let _ = self.append("kprobe_events", &format!("-:{GROUP}/{h}"));
        }
    }

    /// The hit counts now (`kprobe_profile`: event, hits, misses).
    fn counts(&self) -> Result<Counts, String> {
        let path = format!("{}/kprobe_profile", self.tracing);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        let mut c = [u64::MAX; 6];
        for line in text.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            if let (Some(i), Some(hits)) = (w.first().and_then(|e| HOOKS.iter().position(|h| h == e)), w.get(1)) {
                c[i] = hits.parse().map_err(|_| format!("{path}: {line:?}"))?;
            }
        }
        check!(!c.contains(&u64::MAX), "{path} lacks some of the probes: {text}");
        Ok(c)
    }

    /// The hooks `op` reaches.
    fn during(&self, op: impl FnOnce() -> TestResult) -> Result<Counts, String> {
        let before = self.counts()?;
        op()?;
        let after = self.counts()?;
        Ok(std::array::from_fn(|i| after[i] - before[i]))
    }
}

impl Drop for HookProbes {
    fn drop(&mut self) {
        self.remove();
    }
}

/// `counts` as `hook=N` for the hooks reached.
fn show(c: &Counts) -> String {
    let s: Vec<String> =
        HOOKS.iter().zip(c).filter(|(_, &n)| n != 0).map(|(h, n)| format!("{}={n}", &h["security_tun_dev_".len()..])).collect();
    if s.is_empty() { "none".into() } else { s.join(" ") }
}

/// The operations, each measured alone on `n`: (what, hooks reached).
fn operations(n: Node, p: &HookProbes) -> Result<Vec<(&'static str, Counts)>, String> {
    let mut out = Vec::new();
    let e = |e: i32| format!("errno {e} ({})", errname(e));
    let tunsetiff = |f: &std::fs::File, name: &str, flags: u16| {
        let mut ifr = IfReq::new(name, flags);
        ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr)
    };

    // A TUN device: created with the file's TUNSETIFF, gone with its close.
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    out.push(("create TUN", p.during(|| tunsetiff(&f, "rt-lsm0", IFF_TUN).map(drop).map_err(e))?));
    out.push(("close: the device goes", p.during(|| Ok(drop(f)))?));

    // A persistent TAP device, closed, re-attached (open + attach), a
    // second file refused (single queue: EBUSY after both hooks), deleted.
    let mut t = None;
    out.push(("create TAP", p.during(|| Ok(t = Some(Tun::create(n.path, "rt-lsm1", IFF_TAP).map_err(e)?)))?));
    let t = t.ok_or("no TAP")?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    out.push(("close a persistent device", p.during(|| Ok(drop(t)))?));
    let mut t = None;
    out.push((
        "TUNSETIFF on the persistent device",
        p.during(|| Ok(t = Some(Tun::create(n.path, "rt-lsm1", IFF_TAP).map_err(e)?)))?,
    ));
    out.push((
        "TUNSETIFF on it from a second file (EBUSY)",
        p.during(|| fails(Tun::create(n.path, "rt-lsm1", IFF_TAP), libc::EBUSY, "second file"))?,
    ));
    drop(t);
    out.push(("ip link del of the persistent device", p.during(|| sh("ip link del rt-lsm1").map(drop))?));

    // Multi-queue: a second queue (open + attach), TUNSETQUEUE detach and
    // attach (attach_queue + attach), a refused attach (EINVAL, no hook).
    let mut q = Vec::new();
    out.push((
        "create multi-queue TAP",
        p.during(|| Ok(q.push(Tun::create(n.path, "rt-lsm2", IFF_TAP | IFF_MULTI_QUEUE).map_err(e)?)))?,
    ));
    out.push((
        "TUNSETIFF: a second queue",
        p.during(|| Ok(q.push(Tun::create(n.path, "rt-lsm2", IFF_TAP | IFF_MULTI_QUEUE).map_err(e)?)))?,
    ));
    let setqueue = |t: &Tun, flags: u16| {
        let mut ifr = IfReq::new("", flags);
        ioctl_ptr(t.fd(), TUNSETQUEUE, &mut ifr)
    };
    out.push(("TUNSETQUEUE IFF_DETACH_QUEUE", p.during(|| setqueue(&q[1], IFF_DETACH_QUEUE).map(drop).map_err(e))?));
    out.push(("TUNSETQUEUE IFF_ATTACH_QUEUE", p.during(|| setqueue(&q[1], IFF_ATTACH_QUEUE).map(drop).map_err(e))?));
    out.push((
        "TUNSETQUEUE IFF_ATTACH_QUEUE, attached (EINVAL)",
        p.during(|| fails(setqueue(&q[1], IFF_ATTACH_QUEUE), libc::EINVAL, "attach of an attached queue"))?,
    ));
    out.push(("close both queues: the device goes", p.during(|| Ok(drop(q)))?));

    // Creations that fail: before the type is known (EINVAL), in
    // register_netdevice() before ndo_init (an invalid name, EINVAL), after
    // it (the index TUNSETIFINDEX asked for is lo's: EBUSY).
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    out.push((
        "TUNSETIFF without IFF_TUN/IFF_TAP (EINVAL)",
        p.during(|| fails(tunsetiff(&f, "rt-lsm3", IFF_NO_PI), libc::EINVAL, "no type"))?,
    ));
    out.push(("TUNSETIFF named '.' (EINVAL)", p.during(|| fails(tunsetiff(&f, ".", IFF_TUN), libc::EINVAL, "name '.'"))?));
    let mut one = 1i32;
    ioctl_ptr(f.as_raw_fd(), TUNSETIFINDEX, &mut one).map_err(|e| format!("TUNSETIFINDEX: {e}"))?;
    out.push((
        "TUNSETIFF with lo's index (EBUSY)",
        p.during(|| fails(tunsetiff(&f, "rt-lsm3", IFF_TUN), libc::EBUSY, "taken index"))?,
    ));
    check!(!link_exists("rt-lsm3"), "rt-lsm3 exists after the failed creations");
    Ok(out)
}

/// Where rust_tun reaches a hook a different number of times than tun, on
/// purpose (`Documentation/rust_tun.rst`, "Deliberate differences"):
/// (operation, hook, rust_tun's count less tun's).
/// None now: the creating file is attached in `ndo_init` as in tun.c (it
/// was attached after `register_netdevice()`, which reached no
/// `security_tun_dev_attach()` when registration failed after `ndo_init`).
const DIFFERENCES: &[(&str, &str, i64)] = &[];

/// Each operation reaches the same hooks as often on both drivers (C tun
/// the reference, on the same kernel), but for [`DIFFERENCES`]; every blob
/// allocated is freed; and tun reached every hook (the probes work).
pub fn t_lsm_hooks(_: Node) -> TestResult {
    let Some(tracing) = tracefs_with("kprobe_events") else {
        skip!("no kprobe_events (CONFIG_KPROBE_EVENTS=n): the LSM hooks cannot be counted here");
    };
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").map_err(|e| e.to_string())?;
    if !kallsyms.lines().any(|l| l.split_whitespace().nth(2) == Some("security_tun_dev_create")) {
        skip!("security_tun_dev_create is no function (CONFIG_SECURITY_NETWORK=n: the hooks are empty inlines)");
    }
    load("tun")?;
    let probes = HookProbes::new(tracing)?;
    let rust = operations(RUST, &probes)?;
    runner::teardown();
    let c = operations(C, &probes)?;
    let mut problems = Vec::new();
    let mut totals = [[0u64; 6]; 2];
    for ((op, r), (_, t)) in rust.iter().zip(&c) {
        println!("# {op}: tun {} | rust_tun {}", show(t), show(r));
        for i in 0..6 {
            totals[0][i] += r[i];
            totals[1][i] += t[i];
            let want = t[i] as i64
                + DIFFERENCES.iter().find(|(o, h, _)| o == op && *h == HOOKS[i]).map_or(0, |(_, _, d)| *d);
            if r[i] as i64 != want {
                problems.push(format!("{op}: {} {} times, expected {want} (tun: {})", HOOKS[i], r[i], t[i]));
            }
        }
    }
    for (d, tot) in ["rust_tun", "tun"].iter().zip(&totals) {
        if tot[1] != tot[5] {
            problems.push(format!("{d}: {} blobs allocated, {} freed", tot[1], tot[5]));
        }
    }
    if let Some(i) = (0..6).find(|&i| totals[1][i] == 0) {
        problems.push(format!("tun never reached {}: the probes count nothing", HOOKS[i]));
    }
    check!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(())
}
