//! The harness's helpers, shared by the tests: the drivers under test
//! ([`Node`]: rust_tun, C tun, rust_tun as the drop-in), modules, shell
//! commands, and the small steps most tests take (a point-to-point link up,
//! a multi-queue device, UDP traffic, waiting for a thread or a sysfs value).

use super::*;

/// The rust_tun device node.
pub const RUST_NODE: &str = "/dev/net/rust_tun";

/// The C tun device node.
pub const C_NODE: &str = "/dev/net/tun";

/// Where the initramfs keeps modules.
pub const MODDIR: &str = "/lib/modules";

pub type TestResult = Result<(), String>;

pub fn errname(e: i32) -> &'static str {
    match e {
        libc::EPERM => "EPERM",
        libc::EINVAL => "EINVAL",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EAGAIN => "EAGAIN",
        libc::EBADFD => "EBADFD",
        libc::EIO => "EIO",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ENOENT => "ENOENT",
        libc::E2BIG => "E2BIG",
        libc::EACCES => "EACCES",
        libc::ENOMEM => "ENOMEM",
        libc::ENOBUFS => "ENOBUFS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENXIO => "ENXIO",
        libc::ENODEV => "ENODEV",
        libc::EINTR => "EINTR",
        _ => "?",
    }
}

/// A finished subcommand's stdout followed by its stderr, as one text
/// (what a test reports or searches; the subcommands print their results
/// on stdout and their diagnostics on stderr).
pub fn output_text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Runs a command; Ok(stdout) on exit status 0.
pub fn sh(cmd: &str) -> Result<String, String> {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{cmd}` failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A number that grows over the suite's tests, for what must differ from
/// one run of a test to the next (a port the previous run's connection may
/// still hold). Each test runs in a process of its own (runner.rs), so a
/// static counter would start again at 0: this one lives in /tmp.
pub fn suite_serial() -> u16 {
    const FILE: &str = "/tmp/rtun-suite-serial";
    let n = std::fs::read_to_string(FILE).ok().and_then(|s| s.trim().parse::<u16>().ok()).unwrap_or(0);
    let _ = std::fs::write(FILE, (n.wrapping_add(1) % 1000).to_string());
    n
}

/// The booted kernel's flavour (`test`, `debug`, `debian`), as
/// `run-guest.sh` wrote it to `/etc/rtun-flavor`.
pub fn kernel_flavor() -> Result<String, String> {
    std::fs::read_to_string("/etc/rtun-flavor").map(|f| f.trim().to_string()).map_err(|e| format!("/etc/rtun-flavor: {e}"))
}

/// A device's MAC address, from sysfs.
pub fn hwaddr(ifname: &str) -> Result<[u8; 6], String> {
    let mac = std::fs::read_to_string(format!("/sys/class/net/{ifname}/address")).map_err(|e| e.to_string())?;
    let mac: Vec<u8> = mac.trim().split(':').map(|x| u8::from_str_radix(x, 16).unwrap_or(0)).collect();
    mac.try_into().map_err(|_| format!("{ifname}: bad address"))
}

pub fn module_loaded(name: &str) -> bool {
    std::fs::read_to_string("/proc/modules")
        .map(|m| m.lines().any(|l| l.split(' ').next() == Some(name)))
        .unwrap_or(false)
}

pub fn load(name: &str) -> TestResult {
    if !module_loaded(name) {
        sh(&format!("insmod {MODDIR}/{name}.ko"))?;
    }
    Ok(())
}

pub fn unload(name: &str) -> TestResult {
    if module_loaded(name) {
        sh(&format!("rmmod {name}"))?;
    }
    Ok(())
}

/// A device node under test: rust_tun, or C tun for the side-by-side ABI
/// runs; or, with an empty `path`, a net-device driver under test (the
/// dummy tests: [`DUMMY`], [`RUST_DUMMY`]), whose tests load and unload
/// `module` themselves.
#[derive(Clone, Copy)]
pub struct Node {
    pub path: &'static str,
    pub module: &'static str,
    /// The tests' name prefix: `rust_tun`, `tun`, or `dropin` (rust_tun
    /// standing in for tun.ko).
    pub label: &'static str,
    pub tun_prefix: &'static str,
    pub tap_prefix: &'static str,
    pub driver: &'static str,
    /// What `TUNGETFEATURES` must say: exactly what the driver implements.
    pub features: u32,
}

pub const RUST: Node = Node {
    path: RUST_NODE,
    module: "rust_tun",
    label: "rust_tun",
    tun_prefix: "rtun",
    tap_prefix: "rtap",
    driver: "rust_tun",
    features: (IFF_TUN | IFF_TAP | IFF_NO_CARRIER | IFF_NO_PI | IFF_ONE_QUEUE | IFF_MULTI_QUEUE | IFF_VNET_HDR | IFF_NAPI | IFF_NAPI_FRAGS)
        as u32,
};

pub const C: Node = Node {
    path: C_NODE,
    module: "tun",
    label: "tun",
    tun_prefix: "tun",
    tap_prefix: "tap",
    driver: "tun",
    features: (IFF_TUN | IFF_TAP | IFF_NO_CARRIER | IFF_NO_PI | IFF_ONE_QUEUE | IFF_MULTI_QUEUE | IFF_VNET_HDR | IFF_NAPI | IFF_NAPI_FRAGS)
        as u32,
};

/// rust_tun loaded with `dropin=1`, as `/dev/net/tun` with tun's identity
/// (the drop-in run: `RTUN_DROPIN=1`, tun.ko absent). It runs every test
/// written for the C tun, with the C tun's expectations.
pub const DROPIN: Node = Node {
    path: C_NODE,
    module: "rust_tun",
    label: "dropin",
    tun_prefix: "tun",
    tap_prefix: "tap",
    driver: "tun",
    features: RUST.features,
};

/// The C dummy (drivers/net/dummy.c, from the kernel build): the reference
/// of the dummy tests.
pub const DUMMY: Node = Node {
    path: "",
    module: "dummy",
    label: "dummy",
    tun_prefix: "",
    tap_prefix: "",
    driver: "dummy",
    features: 0,
};

/// rust_dummy.ko, the Rust copy of dummy.c on the project's `sys/` layer
/// (scripts/run-guest.sh copies it from the tree root when it is built):
/// the dummy tests with the C dummy's expectations, its own name as the
/// driver's.
pub const RUST_DUMMY: Node = Node {
    path: "",
    module: "rust_dummy",
    label: "rust_dummy",
    tun_prefix: "",
    tap_prefix: "",
    driver: "rust_dummy",
    features: 0,
};

impl Node {
    /// Whether this is a net-device driver's node (the dummy tests).
    pub fn is_netdev(&self) -> bool {
        self.path.is_empty()
    }

    /// Before each test: the driver's module loaded (tun), or, for a
    /// net-device driver, its module present and none of the drivers that
    /// share its link kind loaded (the test loads the one it tests).
    pub fn setup(&self) -> TestResult {
        if self.is_netdev() {
            let ko = format!("{MODDIR}/{}.ko", self.module);
            check!(
                std::path::Path::new(&ko).exists(),
                "{ko} missing: the {} tests need {}.ko built at the tree root (scripts/run-guest.sh copies it)",
                self.label,
                self.module
            );
            for m in [DUMMY.module, RUST_DUMMY.module] {
                check!(!module_loaded(m), "{m} is loaded before the test (both register the link kind dummy)");
            }
            return Ok(());
        }
        if self.label == "dropin" {
            check!(module_loaded("rust_tun"), "the drop-in run needs rust_tun loaded with dropin=1");
            return Ok(());
        }
        load(self.module)
    }
}

/// Whether this is the drop-in run (`RTUN_DROPIN=1`).
pub fn dropin_run() -> bool {
    std::env::var("RTUN_DROPIN").is_ok_and(|v| v == "1")
}

/// Configures a TUN device as a point-to-point link `local` <-> `peer`, up.
pub fn ptp_up(name: &str, local: &str, peer: &str) -> TestResult {
    sh(&format!("ip addr add {local} peer {peer} dev {name} && ip link set {name} up"))?;
    Ok(())
}

/// Reads packets until `pred` accepts one or `timeout` passes.
pub fn read_until(t: &Tun, timeout: Duration, mut pred: impl FnMut(&[u8]) -> bool) -> Result<Vec<u8>, String> {
    let deadline = Instant::now() + timeout;
    let mut buf = vec![0u8; 65536];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        check!(!left.is_zero(), "no matching packet within {timeout:?}");
        match t.read_timeout(&mut buf, left) {
            Ok(n) => {
                if pred(&buf[..n]) {
                    return Ok(buf[..n].to_vec());
                }
            }
            Err(libc::ETIMEDOUT) => {}
            Err(e) => return Err(format!("read: errno {e} ({})", errname(e))),
        }
    }
}

/// Sends `count` UDP datagrams to `dst`:9.
pub fn udp_send(dst: &str, count: usize) -> TestResult {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    for i in 0..count {
        s.send_to(&(i as u32).to_be_bytes(), format!("{dst}:9")).map_err(|e| format!("send {i}: {e}"))?;
    }
    Ok(())
}

/// Sends one UDP datagram to `dst`:9000+i for each i (drain_ports then
/// reads 9000+i back).
pub fn udp_send_ports(dst: &str, ports: std::ops::Range<u16>) -> TestResult {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    for i in ports {
        s.send_to(b"p", format!("{dst}:{}", 9000 + i)).map_err(|e| format!("send {i}: {e}"))?;
    }
    Ok(())
}

/// The calling thread's id.
pub fn gettid() -> i32 {
    // SAFETY: No arguments, always succeeds.
    unsafe { libc::gettid() }
}

/// Waits until thread `tid` of this process sleeps (state `S` in
/// /proc/self/task/TID/stat): it is blocked, not merely slow to start.
pub fn wait_blocked(tid: i32) -> TestResult {
    wait_sleeping(&format!("/proc/self/task/{tid}/stat"), &format!("thread {tid}"))
}

/// Waits until the task whose `stat` file is `stat` (a thread of ours,
/// `/proc/self/task/TID/stat`, or another process, `/proc/PID/stat`) sleeps
/// (state `S`); `what` names it in the error.
pub fn wait_sleeping(stat: &str, what: &str) -> TestResult {
    let t0 = Instant::now();
    loop {
        let s = std::fs::read_to_string(stat).unwrap_or_default();
        // The state follows the parenthesised command name.
        let state = s.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next());
        if state == Some("S") {
            return Ok(());
        }
        check!(t0.elapsed() < Duration::from_secs(5), "{what} never blocked (state {state:?})");
        thread::sleep(Duration::from_millis(10));
    }
}

/// Waits for /sys/class/net/NAME/ATTR to read `want` (operstate follows
/// carrier through the linkwatch work, not at once), returning as soon as
/// it does. The bound only catches a state that never comes: it was 2 s,
/// and on a host slowed 2.1x (a CPU quota, 2026-12-06) the linkwatch
/// work of a re-attached device ran later than that
/// (`backpressure_persist_reattach`, operstate still "unknown").
pub fn wait_sysfs(name: &str, attr: &str, want: &str) -> bool {
    let t0 = Instant::now();
    while sysfs(name, attr) != want {
        if t0.elapsed() > Duration::from_secs(15) {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
    true
}

/// The tracefs directory holding `file` (e.g. `kprobe_events`,
/// `events/skb/kfree_skb/enable`), mounting tracefs if neither place has
/// it; `None` if this kernel has no such file (the test kernels have no
/// tracing).
pub fn tracefs_with(file: &str) -> Option<String> {
    let has = |d: &str| std::path::Path::new(&format!("{d}/{file}")).exists();
    if let Some(d) = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"].into_iter().find(|d| has(d)) {
        return Some(d.to_string());
    }
    let _ = sh("mount -t tracefs tracefs /sys/kernel/tracing");
    has("/sys/kernel/tracing").then(|| "/sys/kernel/tracing".to_string())
}

/// Expects `r` to fail with `errno` (`expect_errno!` as a function, for
/// closures that return a `TestResult`).
pub fn fails<T>(r: Result<T, i32>, errno: i32, what: &str) -> TestResult {
    match r {
        Err(e) if e == errno => Ok(()),
        Err(e) => Err(format!("{what}: errno {e} ({}), expected {errno} ({})", errname(e), errname(errno))),
        Ok(_) => Err(format!("{what}: succeeded, expected {errno} ({})", errname(errno))),
    }
}

pub fn write_file(path: &str, val: &str) -> TestResult {
    std::fs::write(path, val).map_err(|e| format!("write {val} to {path}: {e}"))
}

/// Opens `n` queues of a multi-queue device.
pub fn mq_open(node: &str, name: &str, flags: u16, n: usize) -> Result<Vec<Tun>, String> {
    (0..n)
        .map(|i| Tun::create(node, name, flags | IFF_MULTI_QUEUE).map_err(|e| format!("queue {i}: TUNSETIFF: {e}")))
        .collect()
}

pub fn tx_queues(name: &str) -> usize {
    std::fs::read_dir(format!("/sys/class/net/{name}/queues"))
        .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("tx-")).count())
        .unwrap_or(0)
}

pub fn setqueue(t: &Tun, flags: u16) -> Result<i32, i32> {
    let mut ifr = IfReq::new("", flags);
    ioctl_ptr(t.fd(), TUNSETQUEUE, &mut ifr)
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> TestResult {
    // SAFETY: A zeroed cpu_set_t is an empty set; CPU_SET fills it in.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: Valid set for the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    check!(r == 0, "sched_setaffinity: errno {}", errno());
    Ok(())
}

/// A UDP/IPv4 packet from `src`:`sport` to `dst`:`dport`.
pub fn udp_pkt(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> Vec<u8> {
    pkt::ipv4(src, dst, pkt::IPPROTO_UDP, &pkt::udp(sport, dport, b"flow"))
}

/// Reads everything queued on a non-blocking queue: the UDP destination ports.
pub fn drain_ports(t: &Tun) -> Vec<u16> {
    let mut buf = [0u8; 2048];
    let mut ports = Vec::new();
    while let Ok(n) = t.read(&mut buf) {
        if let Some((_, d)) = pkt::udp_ports(&buf[..n]) {
            ports.push(d);
        }
    }
    ports
}

/// The seed of the stress run and the fuzzer (`RTUN_SEED`, default 1).
pub fn seed() -> u64 {
    std::env::var("RTUN_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1)
}

pub type TestFn = fn(Node) -> TestResult;

/// Brings `name` up or down (SIOCGIFFLAGS, SIOCSIFFLAGS; no fork per
/// flip), for the fuzzer and the stress test.
pub fn set_up(name: &str, up: bool) -> Result<i64, i32> {
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

/// An interface ioctl `req` (`SIOCSIFMTU`, `SIOCSIFFLAGS`, ...) on `name`
/// with an `int` argument, through a UDP socket.
pub fn ifreq_ioctl(req: u64, name: &str, val: i32) -> Result<i64, i32> {
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
    r
}
