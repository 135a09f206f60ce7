//! The RPS/RFS guards as static keys: the jump-label sites follow the keys,
//! the sysctl and `rps_cpus` flip them, the micro-benchmark against a
//! private table, `unguarded=1`, and the module's parameters (modinfo).

use super::*;

/// The guard sites in the loaded module are NOPs while the keys are off and
/// JMPs to their targets while on, following both sysctls without reload.
pub fn t_jump_sites(_: Node) -> TestResult {
    keys_off()?;
    // What the kernel was built with decides (the host runner reads it from
    // the booted kernel's .config), not what the module says of itself.
    let flavor = kernel_flavor()?;
    let want = std::fs::read_to_string("/etc/rtun-jump-label").map_err(|e| e.to_string())?.trim() == "y";
    check!(jump_labels()? == want, "module reports jump_labels={}, the {} kernel has them: {want}", jump_labels()?, flavor);
    if !want {
        // A kernel without jump labels: the guards read the keys' counts
        // (the guards tests check they still follow the sysctls), and the
        // module has no jump entries at all.
        let sites = jump_sites()?;
        check!(sites.is_empty(), "jump sites without jump labels: {sites:?}");
        println!("# no jump labels in this kernel: guards read the key counts");
        return Ok(());
    }
    sites_are("rps_needed", "nop")?;
    sites_are("rfs_needed", "nop")?;
    let sites = jump_sites()?;
    // The guards' sites, and C's: the kernel headers' own static branches
    // inlined into the C helpers (Debian's kernel: tracepoints, feature
    // keys), each a valid patched instruction.
    check!(
        sites.iter().all(|(k, i)| k == "rps_needed" || k == "rfs_needed" || (k == "other" && (i == "nop" || i == "jmp"))),
        "unknown sites: {sites:?}"
    );
    let other = sites.iter().filter(|(k, _)| k == "other").count();
    if other > 0 {
        println!("# {other} sites of other keys (static branches of the C helpers' inlines)");
    }
    write_file(RPS_SOCK_FLOW_ENTRIES, "32768")?;
    sites_are("rps_needed", "jmp")?;
    sites_are("rfs_needed", "jmp")?;
    write_file(RPS_SOCK_FLOW_ENTRIES, "0")?;
    sites_are("rps_needed", "nop")?;
    sites_are("rfs_needed", "nop")?;
    write_file(LO_RPS_CPUS, "1")?;
    sites_are("rps_needed", "jmp")?;
    sites_are("rfs_needed", "nop")?;
    keys_off()?;
    sites_are("rps_needed", "nop")?;
    sites_are("rfs_needed", "nop")
}

/// A single-queue device's transmit path and a multi-queue device's write
/// path, with a flow whose rps_rxhash is set. Returns (rps_hashes of the
/// single-queue device, rfs_records of the multi-queue device) after one
/// round of traffic, the flow written from CPU 1.
pub struct GuardRig {
    sq: Tun,
    mq: Vec<Tun>,
    sock: std::net::UdpSocket,
}

impl GuardRig {
    fn new(node: &str) -> Result<Self, String> {
        let sq = Tun::create_nonblock(node, "rt-gsq", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
        ptp_up("rt-gsq", "10.35.0.1", "10.35.0.2")?;
        let mq = mq_open(node, "rt-gmq", IFF_TUN | IFF_NO_PI, 2)?;
        for t in &mq {
            // SAFETY: Setting O_NONBLOCK on our fd.
            unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
        }
        ptp_up("rt-gmq", "10.34.0.1", "10.34.0.2")?;
        let sock = std::net::UdpSocket::bind("10.34.0.1:7000").map_err(|e| e.to_string())?;
        let rig = GuardRig { sq, mq, sock };
        // Create the flow, then let the reply direction set its rps_rxhash.
        rig.write_flow(1)?;
        rig.sock.send_to(b"back", "10.34.0.2:5000").map_err(|e| e.to_string())?;
        thread::sleep(Duration::from_millis(50));
        check!(drain_ports(&rig.mq[1]) == [5000], "the reply did not come back on queue 1");
        let (_, flows) = dbg_flows("rt-gmq")?;
        check!(flows.len() == 1 && flows[0].rps_rxhash != 0 && flows[0].queue == 1, "flow: {flows:?}");
        Ok(rig)
    }

    /// Writes `count` packets of the flow on queue 1 from a thread on CPU 1.
    fn write_flow(&self, count: usize) -> TestResult {
        let fd = self.mq[1].fd();
        thread::scope(|s| {
            s.spawn(|| {
                pin_to_cpu(1)?;
                for _ in 0..count {
                    fd_write(fd, &udp_pkt([10, 34, 0, 2], 5000, [10, 34, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
                }
                Ok(())
            })
            .join()
            .map_err(|_| "writer panicked".to_string())?
        })
    }

    /// One round: 10 packets out of the single-queue device, 10 written
    /// into the flow. Returns (rps_hashes, rfs_records).
    fn round(&self) -> Result<(u64, u64), String> {
        udp_send("10.35.0.2", 10)?;
        drain_ports(&self.sq);
        self.write_flow(10)?;
        let mut buf = [0u8; 2048];
        while self.sock.set_nonblocking(true).is_ok() && self.sock.recv(&mut buf).is_ok() {}
        Ok((dbg_count("rt-gsq", "rps_hashes")?, dbg_count("rt-gmq", "rfs_records")?))
    }
}

/// The micro-benchmark (`<debugfs>/rust_tun/micro_bench`) records into a
/// table of its own, not into the live RFS table, whose entries steer
/// received flows: with a global table of one entry (every hash shares it),
/// the entry a flow recorded is still there after a benchmark run (which
/// records hash 0x9e3779b9 tens of millions of times). The devices are
/// created with `flow_ageing_ms=600000`: the run takes longer than the
/// flow's 3 s on the debug kernel. The benchmark runs 100,000 calls per
/// measurement (`micro_bench_calls`, the least it takes), not the default
/// 10,000,000: what is checked is where it records, not its figures nor
/// how often (one record into the live table would overwrite the flow's
/// entry); the parameter's bounds are checked on the way. With 1,000,000
/// the test took 22 s on the debug kernel, 0.5 s on the test kernel.
pub fn t_micro_bench_private_table(n: Node) -> TestResult {
    keys_off()?;
    param_refuses(
        MICRO_BENCH_CALLS_PARAM,
        "10000000",
        &[("0", libc::EINVAL), ("99999", libc::EINVAL), ("100000001", libc::EINVAL), ("-1", libc::EINVAL), ("1e6", libc::EINVAL), ("4294967296", libc::ERANGE)],
    )?;
    write_file(MICRO_BENCH_CALLS_PARAM, "100000")?;
    let r = micro_bench_private_table(n);
    write_file(MICRO_BENCH_CALLS_PARAM, "10000000")?;
    r
}

fn micro_bench_private_table(n: Node) -> TestResult {
    write_file(FLOW_AGEING_PARAM, "600000")?;
    let rig = GuardRig::new(n.path);
    write_file(FLOW_AGEING_PARAM, "3000")?;
    let rig = rig?;
    write_file(RPS_SOCK_FLOW_ENTRIES, "1")?;
    let r = (|| {
        rig.round()?;
        let (_, flows) = dbg_flows("rt-gmq")?;
        let before = flows.first().and_then(|f| f.rfs_ent);
        check!(before.is_some(), "no RFS entry for the flow: {flows:?}");
        let out = std::fs::read_to_string(format!("{DEBUGFS}/micro_bench")).map_err(|e| format!("micro_bench: {e}"))?;
        check!(out.lines().filter(|l| l.starts_with("impl=rust ") && l.contains(" calls=100000 ")).count() == 9, "micro_bench: {out}");
        let (_, flows) = dbg_flows("rt-gmq")?;
        let after = flows.first().and_then(|f| f.rfs_ent);
        check!(after == before, "the live RFS entry went from {before:08x?} to {after:08x?} during micro_bench (its hash: 9e3779b9)");
        Ok(())
    })();
    write_file(RPS_SOCK_FLOW_ENTRIES, "0")?;
    r
}

pub fn t_guards_rfs(n: Node) -> TestResult {
    keys_off()?;
    let rig = GuardRig::new(n.path)?;
    let (h, r) = rig.round()?;
    check!((h, r) == (0, 0), "keys off: rps_hashes {h}, rfs_records {r}");

    write_file(RPS_SOCK_FLOW_ENTRIES, "32768")?;
    let (h1, r1) = rig.round()?;
    check!(h1 >= 10, "rps_sock_flow_entries on: rps_hashes {h1}");
    check!(r1 == 10, "rps_sock_flow_entries on: rfs_records {r1}, expected 10");
    let (_, flows) = dbg_flows("rt-gmq")?;
    let f = &flows[0];
    // rps_cpu_mask is 1 with 2 CPUs: the entry is the hash with the
    // writer's CPU (1) in its low bit.
    check!(f.rfs_ent == Some((f.rps_rxhash & !1) | 1), "RFS entry {:x?} for hash {:08x} written on CPU 1", f.rfs_ent, f.rps_rxhash);

    write_file(RPS_SOCK_FLOW_ENTRIES, "0")?;
    let (h2, r2) = rig.round()?;
    check!((h2, r2) == (h1, r1), "keys off again: counters moved from ({h1}, {r1}) to ({h2}, {r2})");
    Ok(())
}

/// A steering program (`TUNSETSTEERINGEBPF`) takes the queue choice from
/// the flow table: while one is attached, the single-queue device's
/// transmit path computes no RPS hash and the multi-queue device's writes
/// record no flow, with both keys on (guarded) and with both off
/// (unguarded), as tun.c skips both steps; detached, both come back.
pub fn t_guards_ebpf_steering(n: Node) -> TestResult {
    keys_off()?;
    for unguarded in [false, true] {
        write_file(UNGUARDED_PARAM, if unguarded { "1" } else { "0" })?;
        let rig = GuardRig::new(n.path);
        write_file(UNGUARDED_PARAM, "0")?;
        let rig = rig?;
        if !unguarded {
            write_file(RPS_SOCK_FLOW_ENTRIES, "32768")?;
        }
        let r = (|| {
            let mode = if unguarded { "unguarded, keys off" } else { "guarded, keys on" };
            let (h0, r0) = rig.round()?;
            check!(h0 >= 10 && r0 == 10, "{mode}: rps_hashes {h0}, rfs_records {r0}");
            let p = crate::bpf::socket_filter(&crate::bpf::ret(1))?;
            let set = |fd: RawFd, prog: i32| {
                let mut v = prog;
                ioctl_ptr(fd, TUNSETSTEERINGEBPF, &mut v).map_err(|e| format!("TUNSETSTEERINGEBPF {prog}: errno {e}"))
            };
            set(rig.sq.fd(), p.as_raw_fd())?;
            set(rig.mq[0].fd(), p.as_raw_fd())?;
            let (h1, r1) = rig.round()?;
            check!((h1, r1) == (h0, r0), "{mode}, steering program: counters moved from ({h0}, {r0}) to ({h1}, {r1})");
            set(rig.sq.fd(), -1)?;
            set(rig.mq[0].fd(), -1)?;
            let (h2, r2) = rig.round()?;
            check!(h2 >= h1 + 10 && r2 == r1 + 10, "{mode}, detached: ({h1}, {r1}) to ({h2}, {r2})");
            Ok(())
        })();
        keys_off()?;
        r?;
    }
    Ok(())
}

pub fn t_guards_rps_cpus(n: Node) -> TestResult {
    keys_off()?;
    let rig = GuardRig::new(n.path)?;
    write_file(LO_RPS_CPUS, "1")?;
    let (h1, r1) = rig.round()?;
    check!(h1 >= 10 && r1 == 0, "rps_cpus only: rps_hashes {h1}, rfs_records {r1}");
    write_file(LO_RPS_CPUS, "0")?;
    let (h2, r2) = rig.round()?;
    check!((h2, r2) == (h1, r1), "rps_cpus off again: counters moved to ({h2}, {r2})");
    Ok(())
}

pub fn t_unguarded(n: Node) -> TestResult {
    keys_off()?;
    write_file(UNGUARDED_PARAM, "1")?;
    let rig = GuardRig::new(n.path);
    write_file(UNGUARDED_PARAM, "0")?;
    let rig = rig?;
    check!(dbg_stat("rt-gsq", "mode")? == "unguarded", "mode {}", dbg_stat("rt-gsq", "mode")?);
    let (h, r) = rig.round()?;
    check!(h >= 10 && r == 10, "unguarded, keys off: rps_hashes {h}, rfs_records {r}");
    let g = Tun::create(n.path, "rt-gd0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(dbg_stat(&g.name, "mode")? == "guarded", "a device created after the reset is not guarded");
    Ok(())
}

pub fn t_modinfo(_: Node) -> TestResult {
    let out = sh("modinfo rust_tun")?;
    check!(out.contains("parm:") && out.contains("unguarded:") && out.contains("rps_needed"), "modinfo: {out}");
    check!(out.contains("flow_ageing_ms:") && out.contains("TUN_FLOW_EXPIRE"), "modinfo: {out}");
    check!(out.contains("description:") && out.contains("license:"), "modinfo: {out}");
    // None of tun.ko's aliases: static, they would hold without dropin=1,
    // and with both modules installed modprobe would load both (the rst,
    // "Module aliases"; modprobe.d chooses: dropin_on_demand).
    for alias in ["char-major-10-200", "devname:net/tun", "rtnl-link-tun"] {
        check!(!out.contains(alias), "modinfo declares {alias}: {out}");
    }
    Ok(())
}

/// On Debian's GCC-built kernel the C helpers are clang's, inlined through
/// bitcode after Kbuild's gate (`Documentation/gcc-kernel-helpers.rst`);
/// the module then has GCC's copies of the per-CPU helpers too, and
/// `helpers_oracle` does each operation through both copies, reading the
/// state (preempt count, the loopback device's references, a per-CPU
/// counter) through both and the kernel's own functions. Every row must
/// agree. Elsewhere (clang-built kernels: one compiler) there is no such
/// file and modinfo says so.
pub fn t_helpers_oracle(_: Node) -> TestResult {
    let helpers = sh("modinfo -F helpers rust_tun")?;
    let file = format!("{DEBUGFS}/helpers_oracle");
    if kernel_flavor()? != "debian" {
        check!(helpers.starts_with("inlined through LLVM bitcode (rustc LLVM"), "modinfo helpers: {helpers}");
        check!(!std::path::Path::new(&file).exists(), "{file} on a clang-built kernel");
        skip!("clang-built kernel: helpers from the kernel's own compiler, nothing to compare ({})", helpers.trim());
    }
    check!(
        helpers.trim() == "inlined through LLVM bitcode of clang-19 (GCC-built kernel; gated against the GCC-built helpers)",
        "modinfo helpers: {helpers}"
    );
    // On each CPU (per-CPU state, and a %gs base, of its own).
    let ncpu = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(8);
    for round in 0..ncpu {
        // SAFETY: A zeroed cpu_set_t with one CPU set, for this thread.
        let pinned = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(round, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        };
        check!(pinned, "sched_setaffinity(cpu {round}) failed");
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
        for want in [
            "preempt_count",
            "preempt_disable",
            "preempt_enable",
            "preempt_disable readers",
            "local_bh_disable",
            "local_bh_enable",
            "local_bh_disable readers",
            "dev_hold",
            "dev_put",
            "this_cpu_inc_u64",
        ] {
            let row = text.lines().find(|l| {
                l.strip_prefix(want).is_some_and(|r| r.starts_with(' ') && (want.ends_with("readers") || !r.starts_with(" readers")))
            });
            check!(row.is_some_and(|r| r.ends_with(" ok")), "round {round}: {want}: {row:?} in\n{text}");
        }
        check!(!text.contains("DIFF"), "round {round}:\n{text}");
        println!("# cpu {round}: {}", text.lines().collect::<Vec<_>>().join("; "));
    }
    // SAFETY: A cpu_set_t with every CPU this test may have used.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (0..ncpu).for_each(|c| libc::CPU_SET(c, &mut set));
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    Ok(())
}

/// Debian's fallback: the rust_tun.ko that DKMS built with clang-19 hidden
/// (scripts/build-debian.sh, "fallback"), its helpers called in GCC's
/// tun_helpers.o. It loads in place of the inlined module, says so in
/// modinfo, and moves packets both ways through TUN and TAP devices.
pub fn t_helpers_fallback(n: Node) -> TestResult {
    if kernel_flavor()? != "debian" {
        skip!("the fallback build is Debian's kernel's (scripts/build-debian.sh)");
    }
    if n.label == "dropin" {
        skip!("run once, beside tun.ko (the debian suite)");
    }
    let ko = format!("{MODDIR}/rust_tun-fallback.ko");
    check!(std::path::Path::new(&ko).exists(), "no {ko}");
    let helpers = sh(&format!("modinfo -F helpers {ko}"))?;
    check!(
        helpers.trim() == "out of line (GCC-built kernel; not found: clang-19; install clang-19 llvm-19 to inline them)",
        "modinfo helpers: {helpers}"
    );
    unload(n.module)?;
    sh(&format!("insmod {ko}"))?;
    let r = (|| {
        // The inlined build has the oracle file (helpers_oracle): this one not.
        check!(std::path::Path::new(DEBUGFS).exists(), "no {DEBUGFS}");
        check!(!std::path::Path::new(&format!("{DEBUGFS}/helpers_oracle")).exists(), "helpers_oracle: not the fallback build");
        crate::basics::t_tun_round_trip(n)?;
        crate::basics::t_tap_round_trip(n)?;
        crate::basics::t_ping(n)
    })();
    unload(n.module)?;
    load(n.module)?;
    r
}
