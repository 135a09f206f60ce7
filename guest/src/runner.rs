//! The guest test runner: runs the plan, prints KTAP, and after every test
//! checks what the test left behind, failing that test on
//! - a kernel splat in the log since the test started (/dev/kmsg),
//! - a kmemleak report (kmemleak kernels), named after the test during
//!   which the leaked object was allocated,
//! - a device the test left behind,
//! - a module reference the test did not give back (what would make the
//!   final `rmmod` fail).

use super::*;
use std::io::Read;

/// What in a kernel log line is a splat (the host runner's patterns).
const SPLATS: &[&str] = &[
    "WARNING:",
    "BUG:",
    "Oops",
    "Kernel panic",
    "kernel BUG",
    "general protection fault",
    "UBSAN:",
    "KASAN:",
    "Call Trace:",
    "RIP: ",
    "unreferenced object",
    "soft lockup",
    "hard LOCKUP",
    "blocked for more than",
    "detected stall",
];

/// The kernel log from a point on (`/dev/kmsg`, non-blocking).
struct KernelLog(Option<std::fs::File>);

impl KernelLog {
    /// Opens the log, positioned at its end.
    fn open() -> Self {
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/dev/kmsg")
            .ok();
        if let Some(f) = &f {
            // SAFETY: Our fd; /dev/kmsg supports SEEK_END (skip what is there).
            unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_END) };
        }
        KernelLog(f)
    }

    /// The splat lines logged since the last call.
    fn new_splats(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        let Some(f) = &self.0 else { return out };
        let mut buf = vec![0u8; 8192];
        loop {
            match fd_read(f.as_raw_fd(), &mut buf) {
                Ok(0) | Err(libc::EAGAIN) => break,
                // EPIPE: records were overwritten; go on from the next.
                Err(libc::EPIPE) => continue,
                Err(_) => break,
                Ok(n) => {
                    let rec = String::from_utf8_lossy(&buf[..n]);
                    let msg = rec.split_once(';').map_or(&*rec, |(_, m)| m);
                    let first = msg.lines().next().unwrap_or("").trim();
                    // pktgen's own "WARNING: Requested queue_map_max ..." is
                    // a message, not a splat (the host runner agrees).
                    if first.starts_with("pktgen: ") {
                        continue;
                    }
                    if SPLATS.iter().any(|p| first.contains(p)) {
                        out.push(first.to_string());
                    }
                }
            }
        }
        out
    }
}

/// Seconds since boot (`/proc/uptime`).
fn uptime() -> f64 {
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

/// kmemleak, on kernels that have it: each call scans, reports what is new
/// and clears it.
struct Kmemleak {
    /// `CONFIG_HZ`, for the objects' allocation times (the host runner
    /// writes it to /etc/rtun-hz).
    hz: u64,
}

impl Kmemleak {
    const FILE: &'static str = "/sys/kernel/debug/kmemleak";

    fn open() -> Option<Self> {
        if std::fs::metadata(Self::FILE).is_err() {
            return None;
        }
        let hz = std::fs::read_to_string("/etc/rtun-hz").ok()?.trim().parse().ok()?;
        Some(Kmemleak { hz })
    }

    /// New reports: (allocation time in seconds since boot, first lines).
    fn scan(&self) -> Vec<(f64, String)> {
        if std::fs::write(Self::FILE, "scan").is_err() {
            return Vec::new();
        }
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(Self::FILE) {
            let _ = f.read_to_string(&mut text);
        }
        let _ = std::fs::write(Self::FILE, "clear");
        // `INITIAL_JIFFIES`: jiffies start 300 s before wrapping 32 bits.
        let initial = (1u64 << 32) - 300 * self.hz;
        let mut out = Vec::new();
        for report in text.split("unreferenced object").skip(1) {
            let jiffies = report
                .split_whitespace()
                .skip_while(|w| *w != "jiffies")
                .nth(1)
                .and_then(|j| j.trim_end_matches(|c: char| !c.is_ascii_digit()).parse::<u64>().ok());
            let at = jiffies.map_or(-1.0, |j| j.wrapping_sub(initial) as f64 / self.hz as f64);
            let summary: Vec<&str> = report.lines().take(6).map(str::trim).collect();
            out.push((at, format!("unreferenced object{}", summary.join(" | "))));
        }
        out
    }
}

/// The module references held now (`/sys/module/NAME/refcnt`), if loaded.
fn refcnt(module: &str) -> Option<i64> {
    std::fs::read_to_string(format!("/sys/module/{module}/refcnt"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Deletes devices a test left behind (persistent ones survive the test's
/// files) and puts the knobs back; returns the names deleted.
pub fn teardown() -> Vec<String> {
    let _ = keys_off();
    let _ = std::fs::write(UNGUARDED_PARAM, "0");
    let _ = std::fs::write("/sys/kernel/rcu_normal", "0");
    let mut left = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/class/net") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if ["rt-", "rtun", "rtap"].iter().any(|p| name.starts_with(p)) {
                let _ = sh(&format!("ip link del {name}"));
                left.push(name);
            }
        }
    }
    left
}

/// What a test left behind that it must not have: each item fails it.
fn leftovers(log: &mut KernelLog) -> Vec<String> {
    let mut problems = Vec::new();
    let left = teardown();
    if !left.is_empty() {
        problems.push(format!("left devices behind (deleted now): {}", left.join(" ")));
    }
    // Module references come back once files close and devices go; some
    // of that (namespace cleanup, RCU callbacks) is asynchronous.
    for m in ["rust_tun", "tun"] {
        let t0 = Instant::now();
        while refcnt(m).is_some_and(|r| r != 0) && t0.elapsed() < Duration::from_secs(3) {
            thread::sleep(Duration::from_millis(20));
        }
        if let Some(r) = refcnt(m).filter(|&r| r != 0) {
            problems.push(format!("{m} still has {r} references after the test (rmmod would fail)"));
        }
    }
    for s in log.new_splats() {
        problems.push(format!("kernel: {s}"));
    }
    problems
}

/// Runs the tests whose name contains `filter` (or one of its
/// comma-separated parts); KTAP on stdout. Returns the exit code.
pub fn run_tests(filter: Option<&str>) -> i32 {
    let mut plan = Vec::new();
    let dropin = dropin_run();
    for (name, f, nodes) in TESTS {
        for node in nodes.iter() {
            // The drop-in run: the C tun's tests against rust_tun as
            // /dev/net/tun, and the drop-in tests; the other runs: the rest.
            let node = match (dropin, node.label) {
                (true, "tun") => &DROPIN,
                (true, "dropin") | (false, "rust_tun" | "tun") => node,
                _ => continue,
            };
            let full = format!("{}_{}", node.label, name);
            if filter.is_none_or(|flt| flt.split(',').any(|f| full.contains(f))) {
                plan.push((full, *f, *node));
            }
        }
    }
    println!("KTAP version 1");
    println!("1..{}", plan.len());
    let mut log = KernelLog::open();
    let kmemleak = Kmemleak::open();
    // (start, end, name) of every test run, for kmemleak's allocation times.
    let mut spans: Vec<(f64, f64, String)> = Vec::new();
    let (mut failed, mut skipped) = (0, 0);
    for (i, (name, f, node)) in plan.iter().enumerate() {
        let start = uptime();
        let r = node.setup().and_then(|_| f(*node));
        let mut problems = leftovers(&mut log);
        let end = uptime();
        spans.push((start, end, name.clone()));
        if let Some(k) = &kmemleak {
            for (at, what) in k.scan() {
                let during = spans
                    .iter()
                    .find(|(s, e, _)| *s - 0.05 <= at && at <= *e + 0.05)
                    .map_or("before the tests", |(_, _, n)| n.as_str());
                problems.push(format!("kmemleak (allocated at {at:.2} s, during {during}): {what}"));
            }
        }
        let r = match (r, problems.is_empty()) {
            (r, true) => r,
            (Err(e), false) if !e.starts_with("SKIP: ") => Err(format!("{e}; and {}", problems.join("; "))),
            (_, false) => Err(problems.join("; ")),
        };
        match r {
            Ok(()) => println!("ok {} {}", i + 1, name),
            Err(e) if e.starts_with("SKIP: ") => {
                skipped += 1;
                println!("ok {} {} # SKIP {}", i + 1, name, &e[6..]);
            }
            Err(e) => {
                failed += 1;
                for line in e.lines() {
                    println!("# {name}: {line}");
                }
                println!("not ok {} {}", i + 1, name);
            }
        }
    }
    println!("# guest: {} passed, {} failed, {} skipped", plan.len() - failed - skipped, failed, skipped);
    i32::from(failed != 0)
}
