//! User and network namespaces: devices created in a user namespace and
//! attached from a foreign one, devices moved between network namespaces
//! and left when a namespace exits; and the helper subcommands the tests
//! run as their own processes (namespaces need a single-threaded caller).

use super::*;

/// Runs `rtun ARGS...` and returns its exit code and output.
pub fn rtun(args: &[&str]) -> Result<(i32, String), String> {
    let out = Command::new("/bin/rtun").args(args).output().map_err(|e| e.to_string())?;
    let text = output_text(&out);
    Ok((out.status.code().unwrap_or(-1), text))
}

/// An unprivileged user with `CAP_NET_ADMIN` only in its own user and
/// network namespace (`unshare -Urn` as uid 1000) creates a device there
/// and moves packets through it.
pub fn t_userns_create(n: Node) -> TestResult {
    sh(&format!("chmod 0666 {}", n.path))?;
    let (code, out) = rtun(&["userns", n.path, "create", "rt-usr0"])?;
    check!(code == 0, "in a user+net namespace: exit {code}: {out}");
    check!(!link_exists("rt-usr0"), "the device appeared in the initial namespace");
    Ok(())
}

/// In a user namespace of its own but the initial network namespace, an
/// unprivileged user can neither attach to a device there nor create one:
/// tun's EPERM.
pub fn t_userns_foreign(n: Node) -> TestResult {
    sh(&format!("chmod 0666 {}", n.path))?;
    let t = Tun::create(n.path, "rt-usr1", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    drop(t);
    let r = rtun(&["userns", n.path, "foreign", "rt-usr1"]);
    let t = Tun::create(n.path, "rt-usr1", IFF_TUN | IFF_NO_PI).map_err(|e| format!("re-attach: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    let (code, out) = r?;
    check!(code == 0, "exit {code}: {out}");
    check!(!link_exists("rt-usr-new"), "a device was created");
    Ok(())
}

/// A child network namespace, kept alive by a sleeping process.
pub struct NetNsChild(std::process::Child);

impl NetNsChild {
    fn new() -> Result<Self, String> {
        let c = Command::new("/bin/unshare").args(["-n", "/bin/sleep", "600"]).spawn().map_err(|e| e.to_string())?;
        let me = NetNsChild(c);
        // Wait until the child is in its namespace.
        let mine = std::fs::read_link("/proc/self/ns/net").map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        while std::fs::read_link(format!("/proc/{}/ns/net", me.pid())).ok().as_ref() == Some(&mine) || !me.is_sleeping() {
            check!(t0.elapsed() < Duration::from_secs(5), "unshare -n did not start");
            thread::sleep(Duration::from_millis(20));
        }
        Ok(me)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    fn is_sleeping(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/comm", self.pid())).is_ok_and(|c| c.trim() == "sleep")
    }

    /// Runs a shell command inside the namespace.
    fn sh(&self, cmd: &str) -> Result<String, String> {
        sh(&format!("nsenter -t {} -n sh -c '{cmd}'", self.pid()))
    }
}

impl Drop for NetNsChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ip link set DEV netns PID`: the device moves, works there (attach by
/// name, packets both ways), and moves back.
pub fn t_netns_move(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-mv0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    drop(t);
    let ns = NetNsChild::new()?;
    sh(&format!("ip link set rt-mv0 netns {}", ns.pid()))?;
    check!(!link_exists("rt-mv0"), "device still in the initial namespace");
    let shown = ns.sh("ip link show rt-mv0")?;
    check!(shown.contains("rt-mv0"), "not in the child namespace: {shown}");
    let out = ns.sh(&format!("rtun ns-roundtrip {} rt-mv0", n.path))?;
    println!("# in the child namespace: {}", out.trim());
    // Back to the initial namespace, still persistent and attachable.
    ns.sh("ip link set rt-mv0 netns 1")?;
    check!(link_exists("rt-mv0"), "device did not come back");
    let t = Tun::create(n.path, "rt-mv0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("re-attach: {e}"))?;
    ptp_up("rt-mv0", "10.68.0.1", "10.68.0.2")?;
    let req = pkt::ipv4([10, 68, 0, 2], [10, 68, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 4, 4, b"back"));
    t.write(&req).map_err(|e| format!("write: {e}"))?;
    read_until(&t, Duration::from_secs(3), |p| pkt::parse_ipv4(p).is_some_and(|ip| ip.proto == pkt::IPPROTO_ICMP))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    Ok(())
}

/// A network namespace holding a persistent device, an open device and a
/// device moved in from the initial namespace, with traffic running, dies
/// with its last process: every device goes, the module's references are
/// given back, nothing leaks (kmemleak at the end of the suite).
pub fn t_netns_exit(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-nsx0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    drop(t);
    let refcnt = || std::fs::read_to_string(format!("/sys/module/{}/refcnt", n.module)).map(|s| s.trim().to_string());
    let before = refcnt().map_err(|e| e.to_string())?;
    let mut child = Command::new("/bin/unshare")
        .args(["-n", "/bin/rtun", "ns-traffic", n.path, "2"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = child.id();
    // Once the child is in its namespace and set up, move a persistent
    // device of ours there too.
    let mut ready = String::new();
    if let Some(o) = child.stdout.as_mut() {
        let mut byte = [0u8; 1];
        while !ready.ends_with('\n') && o.read(&mut byte).is_ok_and(|n| n == 1) {
            ready.push(byte[0] as char);
        }
    }
    check!(ready.trim() == "ready", "ns-traffic did not get ready: {ready:?}");
    let t0 = Instant::now();
    while sh(&format!("ip link set rt-nsx0 netns {pid}")).is_err() {
        check!(t0.elapsed() < Duration::from_secs(5), "could not move rt-nsx0 into the child's namespace");
        thread::sleep(Duration::from_millis(50));
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    println!("# ns-traffic: {}", out.trim());
    check!(status.success() || status.code() == Some(7), "ns-traffic: {status}");
    // Namespace cleanup runs from a workqueue: wait for the references.
    let t0 = Instant::now();
    loop {
        let now = refcnt().map_err(|e| e.to_string())?;
        if now == before.parse::<i64>().map(|b| (b - 1).to_string()).unwrap_or_default() {
            break;
        }
        check!(t0.elapsed() < Duration::from_secs(15), "module refcnt {now} (was {before} with one persistent device)");
        thread::sleep(Duration::from_millis(100));
    }
    check!(!link_exists("rt-nsx0"), "the moved device came back");
    Ok(())
}

/// `rtun userns NODE MODE NAME`: as uid/gid 1000 with no groups, unshare a
/// user namespace (and, for `create`, a network namespace) mapping 1000 to
/// root, like `unshare -Urn` run by an unprivileged user; then
/// - `create`: create TUN device NAME there, address it, and round-trip an
///   ICMP echo through it;
/// - `foreign`: attaching to NAME (a device of the initial namespace) and
///   creating a device must both fail with EPERM.
pub fn userns(node: &str, mode: &str, name: &str) -> Result<String, String> {
    // SAFETY: Plain credential syscalls in a single-threaded process.
    unsafe {
        check!(libc::setgroups(0, std::ptr::null()) == 0, "setgroups: errno {}", errno());
        check!(libc::setgid(1000) == 0, "setgid: errno {}", errno());
        check!(libc::setuid(1000) == 0, "setuid: errno {}", errno());
        // A credential change makes the task non-dumpable, which would
        // leave /proc/self/*_map owned by root.
        check!(libc::prctl(libc::PR_SET_DUMPABLE, 1) == 0, "prctl: errno {}", errno());
    }
    let flags = libc::CLONE_NEWUSER | if mode == "create" { libc::CLONE_NEWNET } else { 0 };
    // SAFETY: Single-threaded process.
    check!(unsafe { libc::unshare(flags) } == 0, "unshare: errno {}", errno());
    write_file("/proc/self/setgroups", "deny")?;
    write_file("/proc/self/uid_map", "0 1000 1")?;
    write_file("/proc/self/gid_map", "0 1000 1")?;
    match mode {
        "create" => {
            let t = Tun::create(node, name, IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF {name}: errno {e} ({})", errname(e)))?;
            sh("ip link set lo up")?;
            ptp_up(&t.name, "10.69.0.1", "10.69.0.2")?;
            let req = pkt::ipv4([10, 69, 0, 2], [10, 69, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 6, 6, b"userns"));
            t.write(&req).map_err(|e| format!("write: errno {e}"))?;
            read_until(&t, Duration::from_secs(3), |p| {
                pkt::parse_ipv4(p).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.1 == 6)
            })?;
            Ok(format!("created {} and round-tripped an echo", t.name))
        }
        "foreign" => {
            let a = Tun::create(node, name, IFF_TUN | IFF_NO_PI).err();
            let c = Tun::create(node, "rt-usr-new", IFF_TUN | IFF_NO_PI).err();
            check!(a == Some(libc::EPERM), "attach to {name}: {a:?}, expected EPERM");
            check!(c == Some(libc::EPERM), "create: {c:?}, expected EPERM");
            Ok("attach and create: EPERM".into())
        }
        _ => Err(format!("unknown mode {mode}")),
    }
}

/// `rtun ns-roundtrip NODE NAME`: attach to persistent TUN device NAME in
/// this namespace, address it, round-trip an ICMP echo.
pub fn ns_roundtrip(node: &str, name: &str) -> Result<String, String> {
    let t = Tun::create(node, name, IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF {name}: errno {e}"))?;
    sh("ip link set lo up")?;
    ptp_up(&t.name, "10.70.0.1", "10.70.0.2")?;
    let req = pkt::ipv4([10, 70, 0, 2], [10, 70, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 8, 8, b"moved"));
    t.write(&req).map_err(|e| format!("write: errno {e}"))?;
    read_until(&t, Duration::from_secs(3), |p| pkt::parse_ipv4(p).is_some_and(|ip| ip.proto == pkt::IPPROTO_ICMP))?;
    Ok(format!("{name}: attached, echo answered"))
}

/// `rtun ns-traffic NODE SECS`: in a fresh network namespace, a persistent
/// TUN device and an open multi-queue TAP device with traffic both ways for
/// SECS seconds; then exit without closing anything (exit code 7), so the
/// namespace dies with devices busy.
pub fn ns_traffic(node: &str, secs: u64) -> Result<String, String> {
    sh("ip link set lo up")?;
    let p = Tun::create_nonblock(node, "rt-nsp0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    ioctl_val(p.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: errno {e}"))?;
    ptp_up("rt-nsp0", "10.71.0.1", "10.71.0.2")?;
    let q = mq_open(node, "rt-nsq0", IFF_TAP | IFF_NO_PI, 2)?;
    sh("ip addr add 10.72.0.1/24 dev rt-nsq0 && ip link set rt-nsq0 up")?;
    let p = Arc::new(p);
    let q: Vec<Arc<Tun>> = q.into_iter().map(Arc::new).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let mut counts = Vec::new();
    for t in [p.clone(), q[0].clone(), q[1].clone()] {
        let stop = stop.clone();
        counts.push(thread::spawn(move || {
            let mut buf = vec![0u8; 2048];
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let _ = t.read(&mut buf);
                let _ = t.write(&udp_pkt([10, 71, 0, 2], 4000, [10, 71, 0, 1], 9));
                n += 1;
            }
            n
        }));
    }
    println!("ready");
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(secs) {
        let _ = udp_send("10.71.0.2", 10);
        let _ = udp_send("10.72.0.2", 10);
        thread::sleep(Duration::from_millis(10));
    }
    println!("ns-traffic: {} loops, exiting with devices busy", counts.len());
    // Exit with the threads still in their loops and every fd open.
    std::process::exit(7);
}
