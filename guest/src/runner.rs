//! The guest test runner: runs the plan, prints KTAP, and after every test
//! checks what the test left behind, failing that test on
//! - a kernel splat in the log since the test started (/dev/kmsg),
//! - a kmemleak report (kmemleak kernels), named after the test during
//!   which the leaked object was allocated,
//! - a device the test left behind,
//! - a module reference the test did not give back (what would make the
//!   final `rmmod` fail).
//!
//! Each test runs in a child process of its own, watched with a pidfd: a
//! test that does not finish within its timeout (`RTUN_TEST_TIMEOUT`
//! seconds) is reported as `not ok N NAME # TIMEOUT` with a dump of its
//! tasks (every thread's and descendant's state, wchan and kernel stack,
//! then SysRq `w`, the kernel's blocked tasks), killed with its process
//! group, and the suite goes on; if it cannot be killed (a task stuck in
//! the kernel), the suite ends there, the plan unfinished, which the host
//! runner counts as a failure. Every test's duration is printed
//! (`# duration NAME SECONDS`); a table of the slowest closes the run.
//!
//! A test's timeout counts the guest's uncontended time, not wall time.
//! Under TCG the guest clock follows the host's, so a guest whose vCPU
//! thread waits for a host CPU (other guests, a kernel build) sees its
//! tests take longer in its own clock, and nothing inside the guest can
//! tell that wait from a slow test. The host can: its watchdog
//! (scripts/guest-watchdog.py) measures how long QEMU's threads waited
//! for a CPU while they could run, and writes the running total as
//! `lost_ms N` lines to a second serial port (named in /etc/rtun-ctl,
//! written only where the host runs that watchdog). A test times out when
//! its wall time minus what the host lost during it reaches the timeout:
//! a test asleep in the driver loses only what its vCPU's wake-ups wait
//! for (about a tenth of its time on a host with twice as many runnable
//! tasks as cores) and is named nearly on time, a busy one on a loaded
//! host gets the time it was denied. Without the port the
//! timeout is plain wall time. The host's own bound on a guest without
//! progress (no result line for the longest timeout plus a slack) is
//! counted the same way, from the `# per-test timeout N s` header: N must
//! stay the longest timeout this runner applies to any test.
//!
//! `RTUN_DRIVERS=rust` plans only the Rust drivers' tests (rust_tun's,
//! rust_dummy's): on the kernel and in the mode where C tun is not the
//! reference (debug, NAPI), its tests (and the C dummy's) test the
//! kernel's code, not ours; the dummy tests stay out of the NAPI and
//! drop-in runs. `RTUN_SHARD=I/N` plans the I-th (1-based)
//! of N shards of about equal time (weighted, see [`plan`]), so that one
//! suite can run in N guests at once.

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
    // A device reference never given back (netdev_wait_allrefs), and the
    // reference tracker's reports of leaked or doubly put references.
    "unregister_netdevice: waiting for",
    "ref_tracker: ",
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
    let _ = std::fs::write(FLOW_AGEING_PARAM, "3000");
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
    // The dummy tests unload their driver: loaded, it would keep the
    // other one (the same link kind) from loading.
    for m in [DUMMY.module, RUST_DUMMY.module] {
        if module_loaded(m) {
            let gone = sh(&format!("rmmod {m}")).is_ok();
            problems.push(format!("left {m} loaded ({})", if gone { "unloaded now" } else { "rmmod failed" }));
        }
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

/// The tests only run by `RTUN_SELFTEST=1`: they check the runner itself
/// (scripts/test.sh's runner check), never part of a suite.
const SELFTESTS: &[(&str, TestFn, &[Node])] = &[
    ("selftest_hang", t_selftest_hang, &[RUST]),
    ("selftest_stretch", t_selftest_stretch, &[RUST]),
];

/// The tests of `RTUN_SELFTEST=stall`: a test that passes, then one that
/// stops the runner, so that no result comes again; the host's watchdog
/// must end the guest for want of progress after the first.
const SELFTESTS_STALL: &[(&str, TestFn, &[Node])] = &[
    ("selftest_pass", t_selftest_pass, &[RUST]),
    ("selftest_stall", t_selftest_stall, &[RUST]),
];

/// Hangs until killed: a blocking read of a TAP device nobody writes to
/// (a task asleep in the driver, as a real hang would be). The runner must
/// name it within its timeout.
fn t_selftest_hang(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-hang0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut buf = [0u8; 2048];
    loop {
        let _ = t.read(&mut buf);
    }
}

/// Sleeps one and a half timeouts while the host, asked by the marker line
/// (run-guest.sh --selftest only), claims half of that time was lost to
/// contention: the test must pass, its timeout stretched by what the host
/// reported; with plain wall time it would time out.
fn t_selftest_stretch(_n: Node) -> TestResult {
    println!("RTUN-SELFTEST: contention");
    let _ = std::io::Write::flush(&mut std::io::stdout());
    thread::sleep(test_timeout() * 3 / 2);
    Ok(())
}

/// Passes at once: the last result before the stall.
fn t_selftest_pass(_n: Node) -> TestResult {
    Ok(())
}

/// Stops the runner (SIGSTOP to the parent) and returns: the runner never
/// reports this test, and the guest idles until the host ends it.
fn t_selftest_stall(_n: Node) -> TestResult {
    // SAFETY: Signals our parent, the runner.
    unsafe { libc::kill(libc::getppid(), libc::SIGSTOP) };
    Ok(())
}

/// `RTUN_SHARD=I/N`: (I - 1, N), or (0, 1).
fn shard() -> (usize, usize) {
    std::env::var("RTUN_SHARD")
        .ok()
        .and_then(|v| {
            let (i, n) = v.split_once('/')?;
            let (i, n): (usize, usize) = (i.parse().ok()?, n.parse().ok()?);
            (1..=n).contains(&i).then_some((i - 1, n))
        })
        .unwrap_or((0, 1))
}

/// The per-test timeout: `RTUN_TEST_TIMEOUT` seconds (tests.sh sets it per
/// kernel), 300 s if unset.
fn test_timeout() -> Duration {
    let secs = std::env::var("RTUN_TEST_TIMEOUT").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(300);
    Duration::from_secs(secs.max(1))
}

/// The plan: (full name, test, node) for every test this run runs.
fn plan(filter: Option<&str>) -> Vec<(String, TestFn, Node)> {
    let mut plan = Vec::new();
    let dropin = dropin_run();
    let rust_only = std::env::var("RTUN_DRIVERS").is_ok_and(|v| v == "rust");
    let tests = match std::env::var("RTUN_SELFTEST").as_deref() {
        Ok("1") => SELFTESTS,
        Ok("stall") => SELFTESTS_STALL,
        _ => suite::TESTS,
    };
    for (name, f, nodes) in tests {
        for node in nodes.iter() {
            // The drop-in run: the C tun's tests against rust_tun as
            // /dev/net/tun, and the drop-in tests; the other runs: the rest
            // (only the Rust drivers' in a rust-only run). The dummy tests
            // run side by side in the test run, not in the NAPI run (no
            // tun device) nor the drop-in run.
            let node = match (dropin, node.label) {
                (true, "tun") => &DROPIN,
                (false, "tun" | "dummy") if rust_only => continue,
                (false, "dummy" | "rust_dummy") if napi_run() => continue,
                (true, "dropin") | (false, "rust_tun" | "tun" | "rust_dummy" | "dummy") => node,
                _ => continue,
            };
            let full = format!("{}_{}", node.label, name);
            if filter.is_none_or(|flt| flt.split(',').any(|f| full.contains(f))) {
                plan.push((full, *f, *node));
            }
        }
    }
    // Shards of about equal time: each test, in plan order, goes to the
    // shard with the least weight so far (the long tests weigh what they
    // take on the debug kernel; the rest their mean there: TEST_WEIGHTS).
    let (i, n) = shard();
    let mut load = vec![0u32; n];
    let mut mine = Vec::new();
    for t in plan {
        let w = TEST_WEIGHTS.iter().find(|(name, _)| t.0.ends_with(name)).map_or(DEFAULT_WEIGHT, |(_, w)| *w);
        let k = (0..n).min_by_key(|&k| (load[k], k)).unwrap_or(0);
        load[k] += w;
        if k == i {
            mine.push(t);
        }
    }
    mine
}

/// What the long tests take on the debug kernel, in tenths of a second,
/// for [`plan`]'s shards; any other test weighs [`DEFAULT_WEIGHT`]. Each
/// weight is the test's duration in a warm run of the whole matrix (three
/// jobs at once: the host busy, as in CI) plus 0.5 s, the runner's own
/// time between tests. The nine long tests' weights before (the fuzzer at
/// 160 s) left the shards at 575 and 720 s of test time (807 and 921 s
/// of wall time); these split the same run's tests 632 and 644 s (with
/// micro_bench_private_table at its 100,000 calls: 2.5 s).
/// `ends_with` matches: a name that ends another's comes after it.
const TEST_WEIGHTS: &[(&str, u32)] = &[
    ("_fuzz", 3428),
    ("_stress", 1249),
    ("_fuzz_vs_tun", 800),
    ("_flow_reuse_idle", 674),
    ("_faults_create_sweep", 586),
    ("_xdp_swap_under_traffic", 433),
    ("_xdp_actions", 231),
    ("_sndbuf", 195),
    ("_mq_queue_limit", 176),
    ("_vhost_net_xdp", 173),
    ("_txqlen_every_ring", 151),
    ("_mtu_under_traffic", 149),
    ("_flow_limit", 142),
    ("_xdp_adjust", 137),
    ("_guards_ebpf_steering", 130),
    ("_vhost_net", 113),
    ("_sock_file", 105),
    ("_xdp_frames_teardown", 99),
    ("_ebpf_steering", 97),
    ("_mq_flows_follow_queues", 93),
];

/// How often the runner has kmemleak scan between tests (and after the
/// last one). A scan of the debug guest takes about 10 s, longer when the
/// host is busy: once a minute that was a dozen scans in each debug
/// shard's 800-900 s, most of the runner's time between tests there (1.1 s
/// per test beside the tests' own). Less often finds the same leaks: an
/// unreferenced object stays unreferenced, is reported by the next scan
/// (the last test's, then tests.sh's two after the rmmod), and is named
/// after the test whose span holds its allocation time, whichever test
/// the scan follows.
const KMEMLEAK_EVERY: Duration = Duration::from_secs(180);

/// The weight of a test not in [`TEST_WEIGHTS`]: the others' mean in the
/// same run (2.1 s over 172 tests) plus the runner's 0.5 s.
const DEFAULT_WEIGHT: u32 = 26;

/// How a test's child process ended.
enum Outcome {
    /// It finished: the test's result.
    Done(TestResult),
    /// It ran past its timeout and was killed.
    TimedOut,
    /// It ran past its timeout and could not be killed.
    Unkillable,
}

/// Waits up to `timeout` for the process behind `pidfd` to exit.
fn pidfd_wait(pidfd: RawFd, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut p = libc::pollfd { fd: pidfd, events: libc::POLLIN, revents: 0 };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: One valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r > 0 {
            return true;
        }
        if r == 0 || (r < 0 && errno() != libc::EINTR) {
            return false;
        }
    }
}

/// The host's account of its CPUs (see the top of this file): how long, in
/// total, the guest's vCPUs waited for a host CPU, as the host's watchdog
/// writes it (`lost_ms N` lines) to the serial port /etc/rtun-ctl names.
pub(crate) struct HostContention {
    /// The port, raw and non-blocking; `None` without the host's channel.
    tty: Option<std::fs::File>,
    /// Bytes after the last complete line.
    pending: Vec<u8>,
    /// The latest total, in milliseconds.
    lost_ms: u64,
}

impl HostContention {
    /// Opens the port the host named, if any, and reads what is waiting.
    fn open() -> Self {
        let mut me = HostContention { tty: None, pending: Vec::new(), lost_ms: 0 };
        let Ok(path) = std::fs::read_to_string("/etc/rtun-ctl") else { return me };
        use std::os::unix::fs::OpenOptionsExt;
        let Ok(tty) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path.trim())
        else {
            println!("# {}: cannot open the host's port: per-test timeouts in wall time", path.trim());
            return me;
        };
        // Raw: no echo back to the host, no line editing of its lines.
        // SAFETY: A zeroed termios is a valid buffer for tcgetattr() to fill.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: Our tty's fd and a termios to fill, then to apply.
        unsafe {
            if libc::tcgetattr(tty.as_raw_fd(), &mut t) == 0 {
                libc::cfmakeraw(&mut t);
                libc::tcsetattr(tty.as_raw_fd(), libc::TCSANOW, &t);
            }
        }
        me.tty = Some(tty);
        me.settle();
        me
    }

    /// Reads what the host sent while the port was closed (during the
    /// boot): it comes in as the driver starts receiving, after the open,
    /// and the first test must not start from a stale total. Reads until
    /// the port is quiet for 100 ms (the host writes once a second), for
    /// at most 2 s.
    fn settle(&mut self) {
        let Some(fd) = self.tty.as_ref().map(|t| t.as_raw_fd()) else { return };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(2) {
            let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
            // SAFETY: One valid pollfd.
            if unsafe { libc::poll(&mut p, 1, 100) } <= 0 {
                break;
            }
            self.lost();
        }
    }

    /// The latest total the host reported (zero without the channel).
    fn lost(&mut self) -> Duration {
        if let Some(tty) = &self.tty {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = fd_read(tty.as_raw_fd(), &mut buf) {
                self.pending.extend_from_slice(&buf[..n]);
            }
            parse_lost(&mut self.pending, &mut self.lost_ms);
        }
        Duration::from_millis(self.lost_ms)
    }
}

/// Takes the complete lines out of `pending` and sets `lost_ms` to the last
/// well-formed `lost_ms N` among them. A line cut at its start (the port's
/// FIFO cleared as the guest opened it) does not match and is skipped; the
/// total only grows, so an older line never takes it back.
fn parse_lost(pending: &mut Vec<u8>, lost_ms: &mut u64) {
    let Some(end) = pending.iter().rposition(|&b| b == b'\n') else { return };
    for line in pending[..end].split(|&b| b == b'\n') {
        let ms = std::str::from_utf8(line)
            .ok()
            .and_then(|l| l.trim_end_matches('\r').strip_prefix("lost_ms "))
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(ms) = ms {
            *lost_ms = (*lost_ms).max(ms);
        }
    }
    pending.drain(..=end);
}

/// Waits for the test behind `pidfd` until it exits (true) or until its
/// wall time minus what the host lost meanwhile reaches `timeout` (false);
/// returns that and what the host lost. Checks the host's total once a
/// second.
fn wait_uncontended(pidfd: RawFd, timeout: Duration, host: &mut HostContention) -> (bool, Duration) {
    let start = Instant::now();
    let lost0 = host.lost();
    loop {
        let lost = host.lost().saturating_sub(lost0);
        let used = start.elapsed().saturating_sub(lost);
        if used >= timeout {
            return (false, lost);
        }
        if pidfd_wait(pidfd, (timeout - used).min(Duration::from_secs(1))) {
            return (true, host.lost().saturating_sub(lost0));
        }
    }
}

/// Prints what the tasks of a hung test are doing: each thread of the test
/// process and of every process in its group, with state, wchan and kernel
/// stack; then SysRq `w` (blocked tasks, to the kernel log).
fn dump_tasks(pgid: i32) {
    println!("# task dump of process group {pgid}:");
    let Ok(procs) = std::fs::read_dir("/proc") else { return };
    for p in procs.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<i32>() else { continue };
        // SAFETY: getpgid() on any pid; -1 if it is gone.
        if unsafe { libc::getpgid(pid) } != pgid {
            continue;
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
        for t in tasks.flatten() {
            let dir = t.path();
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            let stat = read("stat");
            // The state is the field after the parenthesised comm.
            let state = stat.rsplit_once(") ").map_or("?", |(_, r)| &r[..1]);
            println!(
                "#   pid {pid} tid {} {} state {state} wchan {}",
                t.file_name().to_string_lossy(),
                read("comm").trim(),
                read("wchan").trim()
            );
            for line in read("stack").lines() {
                println!("#     {line}");
            }
        }
    }
    let _ = std::fs::write("/proc/sysrq-trigger", "w");
}

/// Runs one test in a child process of its own (its own process group),
/// with `timeout` of uncontended time ([`wait_uncontended`]); returns how
/// it ended and what the host lost to contention meanwhile.
fn run_child(f: TestFn, node: Node, timeout: Duration, host: &mut HostContention) -> (Outcome, Duration) {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return (Outcome::Done(Err(format!("pipe2: errno {}", errno()))), Duration::ZERO);
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // SAFETY: The runner is single-threaded here (every test's threads
    // lived in its own child); the child only runs the test and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: In the child: a process group of its own (the watchdog
        // kills the group), then the test; the result goes through the
        // pipe, at most 32 KB (the pipe holds it without a reader).
        unsafe {
            libc::setpgid(0, 0);
            libc::close(fds[0]);
        }
        let r = node.setup().and_then(|_| f(node));
        let mut msg = match r {
            Ok(()) => "OK".to_string(),
            Err(e) => format!("ERR{e}"),
        };
        if msg.len() > 32 << 10 {
            let mut end = 32 << 10;
            while !msg.is_char_boundary(end) {
                end -= 1;
            }
            msg.truncate(end);
        }
        let _ = std::io::stdout().flush();
        let _ = fd_write(fds[1], msg.as_bytes());
        // SAFETY: Ends the child and every thread the test left.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: Closing our copy of the write end.
    unsafe { libc::close(fds[1]) };
    // SAFETY: Our read end.
    let rd = unsafe { OwnedFd::from_raw_fd(fds[0]) };
    if pid < 0 {
        return (Outcome::Done(Err(format!("fork: errno {}", errno()))), Duration::ZERO);
    }
    // SAFETY: Also set from the parent, so that a kill right away reaches
    // the group.
    unsafe { libc::setpgid(pid, pid) };
    // SAFETY: pidfd_open(2) on our child.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    if pidfd < 0 {
        let e = errno();
        // SAFETY: Ending the child we cannot watch.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let mut st = 0;
        // SAFETY: Reaping it.
        unsafe { libc::waitpid(pid, &mut st, 0) };
        return (Outcome::Done(Err(format!("pidfd_open: errno {e}"))), Duration::ZERO);
    }
    let (exited, lost) = wait_uncontended(pidfd, timeout, host);
    let outcome = if exited {
        let mut buf = Vec::new();
        let _ = std::fs::File::from(rd).read_to_end(&mut buf);
        let msg = String::from_utf8_lossy(&buf);
        if msg == "OK" {
            Outcome::Done(Ok(()))
        } else if let Some(e) = msg.strip_prefix("ERR") {
            Outcome::Done(Err(e.to_string()))
        } else {
            Outcome::Done(Err(format!("the test's process ended without a result ({} bytes)", buf.len())))
        }
    } else {
        dump_tasks(pid);
        // SAFETY: Killing the test's process group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        if pidfd_wait(pidfd, Duration::from_secs(20)) {
            Outcome::TimedOut
        } else {
            Outcome::Unkillable
        }
    };
    // SAFETY: Our pidfd.
    unsafe { libc::close(pidfd) };
    let mut st = 0;
    // SAFETY: Reaping our child (WNOHANG: an unkillable one stays).
    unsafe { libc::waitpid(pid, &mut st, if matches!(outcome, Outcome::Unkillable) { libc::WNOHANG } else { 0 }) };
    // Descendants the test left in its group are its leftovers too.
    // SAFETY: Killing what is left of the group (ESRCH if nothing).
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    (outcome, lost)
}

/// `rtun list [FILTER]`: prints the names `rtun test` would run with the
/// same environment and filter, one a line, without running them (to
/// compare plans across changes of the harness).
pub fn list_tests(filter: Option<&str>) -> i32 {
    for (name, _, _) in plan(filter) {
        println!("{name}");
    }
    0
}

/// Runs the tests whose name contains `filter` (or one of its
/// comma-separated parts); KTAP on stdout. Returns the exit code.
pub fn run_tests(filter: Option<&str>) -> i32 {
    let plan = plan(filter);
    let timeout = test_timeout();
    println!("KTAP version 1");
    println!("1..{}", plan.len());
    println!("# per-test timeout {} s", timeout.as_secs());
    let mut log = KernelLog::open();
    let kmemleak = Kmemleak::open();
    let mut host = HostContention::open();
    let lost_start = host.lost();
    // (start, end, name) of every test run, for kmemleak's allocation times.
    let mut spans: Vec<(f64, f64, String)> = Vec::new();
    let (mut failed, mut skipped) = (0, 0);
    let mut ended_early = false;
    let mut last_scan = Instant::now();
    let (mut scans, mut scan_time) = (0u32, Duration::ZERO);
    for (i, (name, f, node)) in plan.iter().enumerate() {
        let start = uptime();
        let wall = Instant::now();
        let (outcome, lost) = run_child(*f, *node, timeout, &mut host);
        // The timeout, and what stretched it: the wall time it took and
        // the host's contention during it.
        let within = format!(
            "{} s ({:.0} s of wall time, {:.0} s of it waiting for a host CPU)",
            timeout.as_secs(),
            wall.elapsed().as_secs_f64(),
            lost.as_secs_f64()
        );
        let (r, directive) = match outcome {
            Outcome::Done(r) => (r, ""),
            Outcome::TimedOut => (Err(format!("did not finish within {within}: killed")), " # TIMEOUT"),
            Outcome::Unkillable => {
                ended_early = true;
                (Err(format!("did not finish within {within} and could not be killed: the suite ends here")), " # TIMEOUT")
            }
        };
        let mut problems = if ended_early { Vec::new() } else { leftovers(&mut log) };
        let end = uptime();
        let took = wall.elapsed();
        spans.push((start, end, name.clone()));
        // kmemleak scans all memory (about 10 s on the debug guest): every
        // KMEMLEAK_EVERY and after the last test, not after every test. A
        // report names the test that allocated the object (its allocation
        // time falls in that test's span), whichever test the scan follows;
        // tests.sh scans twice more after unloading the modules.
        let scan_now = i + 1 == plan.len() || last_scan.elapsed() >= KMEMLEAK_EVERY;
        if let Some(k) = kmemleak.as_ref().filter(|_| !ended_early && scan_now) {
            if i + 1 == plan.len() {
                // kmemleak reports objects 5 s old and older: let the last
                // tests' objects come of age, so the report names them.
                thread::sleep(Duration::from_millis(5500));
            }
            last_scan = Instant::now();
            let found = k.scan();
            scans += 1;
            scan_time += last_scan.elapsed();
            for (at, what) in found {
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
        // What the host lost to contention during the test, where it
        // matters (before the duration line: a failure's last diagnostic
        // line stays its own).
        if lost >= Duration::from_secs(1) {
            println!("# contention {name} {:.2} s waiting for a host CPU", lost.as_secs_f64());
        }
        println!("# duration {name} {:.2}", took.as_secs_f64());
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
                println!("not ok {} {}{directive}", i + 1, name);
            }
        }
        if ended_early {
            break;
        }
    }
    let mut by_time: Vec<(f64, &str)> = spans.iter().map(|(s, e, n)| (e - s, n.as_str())).collect();
    by_time.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("# slowest tests (s):");
    for (t, n) in by_time.iter().take(10) {
        println!("#   {t:8.2} {n}");
    }
    if kmemleak.is_some() {
        println!("# kmemleak: {scans} scans between the tests, {:.0} s", scan_time.as_secs_f64());
    }
    let lost = host.lost().saturating_sub(lost_start);
    println!("# the host's contention: {:.0} s waiting for a host CPU in all", lost.as_secs_f64());
    println!(
        "# guest: {} passed, {} failed, {} skipped{}",
        spans.len() - failed - skipped,
        failed,
        skipped,
        if ended_early { format!(", {} not run (the suite ended early)", plan.len() - spans.len()) } else { String::new() }
    );
    i32::from(failed != 0 || ended_early)
}

#[cfg(test)]
mod tests {
    use super::parse_lost;

    #[test]
    fn lost_lines() {
        let (mut p, mut ms) = (b"3\nlost_ms 120\nlost_ms 90\nlost_".to_vec(), 7);
        parse_lost(&mut p, &mut ms);
        // The cut first line is skipped, the total never goes back, the
        // unfinished line waits for its end.
        assert_eq!((ms, &p[..]), (120, &b"lost_"[..]));
        p.extend_from_slice(b"ms 4000\r\n");
        parse_lost(&mut p, &mut ms);
        assert_eq!((ms, p.len()), (4000, 0));
    }
}
