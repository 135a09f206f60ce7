//! Subcommands the host scripts run in the guest besides `rtun test`: the
//! write benchmark, idle devices for the memory benchmark, the
//! unprivileged attach of the permission tests, TAP drains for pktgen (one
//! queue; several, steered).

use super::*;

/// The write-path benchmark (issue 5, table 2): a two-queue TUN device on
/// `node`; `flows` distinct UDP flows, each created by a write and given an
/// `rps_rxhash` by one packet of the reverse direction; then `packets`
/// writes cycling over the flows, each on its flow's queue, from CPU 1,
/// timed with CLOCK_MONOTONIC (guest instructions under -icount). Prints
/// one `BENCH write` line.
pub fn bench_write(node: &str, name: &str, flows: u32, packets: u32) -> Result<String, String> {
    check!(flows > 0 && packets > 0, "FLOWS and PACKETS must be positive");
    let q = mq_open(node, name, IFF_TUN | IFF_NO_PI, 2)?;
    for t in &q {
        // SAFETY: Setting O_NONBLOCK on our fd.
        unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }
    ptp_up(name, "10.40.0.1", "10.40.0.2")?;
    // No ICMP errors for the writes to a closed port during the run.
    write_file("/proc/sys/net/ipv4/icmp_msgs_per_sec", "0")?;
    write_file("/proc/sys/net/ipv4/icmp_msgs_burst", "0")?;
    let sport = |f: u32| 10000 + f as u16;
    let pkts: Vec<Vec<u8>> = (0..flows).map(|f| udp_pkt([10, 40, 0, 2], sport(f), [10, 40, 0, 1], 7000)).collect();
    {
        let sock = std::net::UdpSocket::bind("10.40.0.1:7000").map_err(|e| e.to_string())?;
        for f in 0..flows {
            q[(f % 2) as usize].write(&pkts[f as usize]).map_err(|e| format!("write: {e}"))?;
        }
        for f in 0..flows {
            sock.send_to(b"back", format!("10.40.0.2:{}", sport(f))).map_err(|e| e.to_string())?;
        }
        thread::sleep(Duration::from_millis(20));
        for t in &q {
            drain_ports(t);
        }
    }
    pin_to_cpu(1)?;
    let fds = [q[0].fd(), q[1].fd()];
    let t0 = Instant::now();
    for i in 0..packets {
        let f = i % flows;
        fd_write(fds[(f % 2) as usize], &pkts[f as usize]).map_err(|e| format!("write {i}: {e}"))?;
    }
    let ns = t0.elapsed().as_nanos() as f64;
    Ok(format!(
        "BENCH write packets={packets} flows={flows} ns={ns:.0} pps={:.0} ns_per_packet={:.1}",
        f64::from(packets) * 1e9 / ns,
        ns / f64::from(packets)
    ))
}

/// `rtun mkdevs NODE PREFIX COUNT QUEUES`: creates COUNT persistent TAP
/// devices PREFIX0.. on NODE, each with QUEUES queue files (multi-queue
/// when QUEUES > 1) that are then closed, leaving them idle; for the
/// memory benchmark.
pub fn mkdevs(node: &str, prefix: &str, count: u32, queues: u32) -> Result<String, String> {
    for i in 0..count {
        let name = format!("{prefix}{i}");
        let mq = if queues > 1 { IFF_MULTI_QUEUE } else { 0 };
        let q = (0..queues.max(1))
            .map(|_| Tun::create(node, &name, IFF_TAP | IFF_NO_PI | mq).map_err(|e| format!("{name}: TUNSETIFF: errno {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        ioctl_val(q[0].fd(), TUNSETPERSIST, 1).map_err(|e| format!("{name}: TUNSETPERSIST: errno {e}"))?;
    }
    Ok(format!("created {count} persistent devices {prefix}0.. with {queues} queue(s) each"))
}

/// Attaches to (or creates) TAP device `name` on `node` and exits with 0 or
/// the errno: the unprivileged side of the permission tests.
pub fn attach(node: &str, name: &str) -> i32 {
    match Tun::create(node, name, IFF_TAP | IFF_NO_PI) {
        Ok(_) => 0,
        Err(e) => e,
    }
}

/// Creates a TAP device on `node`, brings it up and drains it until killed.
pub fn tap_drain(node: &str, name: &str) -> i32 {
    let t = match Tun::create(node, name, IFF_TAP | IFF_NO_PI) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rtun: TUNSETIFF {name} on {node}: errno {e} ({})", errname(e));
            return 1;
        }
    };
    if let Err(e) = sh(&format!("ip link set {} up", t.name)) {
        eprintln!("rtun: {e}");
        return 1;
    }
    println!("rtun: draining {} on {node}", t.name);
    let mut buf = vec![0u8; 65536];
    loop {
        if let Err(e) = t.read(&mut buf) {
            if e != libc::EINTR {
                eprintln!("rtun: read: errno {e}");
                return 1;
            }
        }
    }
}

/// The low byte of an untagged IPv4/UDP frame's source port: 14 bytes of
/// Ethernet header, 20 of IPv4 header (no options), then the port, big
/// endian.
const UDP_SPORT_LOW_BYTE: i32 = 14 + 20 + 1;

/// `rtun steer-drain NODE NAME QUEUES PROG`: the steering benchmark's
/// reader (scripts/guest/bench-steer.sh). Creates a multi-queue TAP device
/// NAME with QUEUES queues on NODE; with PROG `bpf` attaches a steering
/// program (`TUNSETSTEERINGEBPF`) returning the low byte of the frame's UDP
/// source port, so that pktgen's sequential source ports take the queues in
/// turn; with `none` attaches none (the flow table picks, `automq`). Then
/// brings the device up and reads every queue, one blocking reader thread
/// each, until SIGTERM or SIGINT, when it prints the frames each queue read
/// (`STEER queues=N0/N1/...`) and exits.
pub fn steer_drain(node: &str, name: &str, queues: &str, prog: &str) -> i32 {
    match steer_drain_run(node, name, queues, prog) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("rtun: steer-drain {name}: {e}");
            1
        }
    }
}

fn steer_drain_run(node: &str, name: &str, queues: &str, prog: &str) -> Result<(), String> {
    let n: usize = queues.parse().map_err(|_| format!("QUEUES {queues}: not a number"))?;
    check!((1..=256).contains(&n), "QUEUES {n}: 1 to 256");
    check!(prog == "bpf" || prog == "none", "PROG {prog}: bpf or none");
    let q = mq_open(node, name, IFF_TAP | IFF_NO_PI, n)?;
    if prog == "bpf" {
        let p = crate::bpf::socket_filter(&crate::bpf::byte_plus(UDP_SPORT_LOW_BYTE, 0))?;
        let mut fd = p.as_raw_fd();
        ioctl_ptr(q[0].fd(), TUNSETSTEERINGEBPF, &mut fd)
            .map_err(|e| format!("TUNSETSTEERINGEBPF: errno {e} ({})", errname(e)))?;
        // The device holds the program.
    }
    // SIGTERM and SIGINT blocked here, before the readers start (they
    // inherit the mask), and taken by sigwait below.
    // SAFETY: A sigset_t of ours, filled by sigemptyset/sigaddset; the
    // calling thread's own mask.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        check!(r == 0, "pthread_sigmask: errno {r}");
        set
    };
    let counts: Arc<Vec<std::sync::atomic::AtomicU64>> = Arc::new((0..n).map(|_| Default::default()).collect());
    for (i, t) in q.into_iter().enumerate() {
        let counts = Arc::clone(&counts);
        thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            loop {
                match t.read(&mut buf) {
                    Ok(_) => {
                        counts[i].fetch_add(1, Ordering::Relaxed);
                    }
                    Err(libc::EINTR) => {}
                    Err(e) => {
                        eprintln!("rtun: steer-drain: queue {i}: read: errno {e}");
                        std::process::exit(1);
                    }
                }
            }
        });
    }
    sh(&format!("ip link set {name} up"))?;
    println!("rtun: draining {name} on {node}, {n} queues, steering {prog}");
    let mut sig = 0;
    // SAFETY: `set` is initialised, `sig` ours.
    let r = unsafe { libc::sigwait(&set, &mut sig) };
    check!(r == 0, "sigwait: errno {r}");
    let per_queue: Vec<String> = counts.iter().map(|c| c.load(Ordering::Relaxed).to_string()).collect();
    println!("STEER queues={}", per_queue.join("/"));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // The readers are blocked in read(): exit without joining them.
    std::process::exit(0);
}

/// `rtun bench-xdp NODE ROW COUNT`: the XDP benchmark (table 8), COUNT
/// 60-byte frames written from CPU 1 into a TAP of `node`'s driver whose
/// native XDP program (attached by rtnetlink) decides their fate, the
/// writer's fd non-blocking so that both drivers run the program on the
/// page-fragment path (`tun_build_skb()`). Rows: `drop` (XDP_DROP, writes
/// only), `tx` (XDP_TX: each frame read back from the writer's fd after
/// its write), `redirect` (to a second TAP of the same driver through its
/// `ndo_xdp_xmit`, each frame read back from that TAP). Timed with
/// CLOCK_MONOTONIC (guest instructions under -icount); every frame of
/// `tx` and `redirect` must come back byte for byte. Prints one `BENCH
/// xdp` line.
pub fn bench_xdp(node: &str, row: &str, count: u32) -> Result<String, String> {
    use abi::xdp::{attach, quiet_up, redirect_prog, ret_prog, xframe, XDP_DROP, XDP_TX};
    check!(count > 0, "COUNT must be positive");
    let (src, dst) = ("bx0", "bx1");
    let a = Tun::create(node, src, IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF {src}: errno {e}"))?;
    quiet_up(src)?;
    let b = if row == "redirect" {
        let b = Tun::create(node, dst, IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF {dst}: errno {e}"))?;
        quiet_up(dst)?;
        Some(b)
    } else {
        None
    };
    let prog = match row {
        "drop" => ret_prog(XDP_DROP)?,
        "tx" => ret_prog(XDP_TX)?,
        "redirect" => redirect_prog(dst)?,
        _ => return Err(format!("ROW is drop, tx or redirect, not {row}")),
    };
    let nl = nl::Nl::open(0).map_err(|e| e.to_string())?;
    attach(&nl, src, &prog)?;
    // Non-blocking, both: the writes take tun_build_skb(), and a frame
    // sent back or redirected is on its ring when the write returns.
    for t in std::iter::once(&a).chain(b.as_ref()) {
        // SAFETY: Setting O_NONBLOCK on our fd.
        unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
        drain_ports(t);
    }
    let back = b.as_ref().map_or(a.fd(), |b| b.fd());
    let f = xframe(0, 60);
    let mut buf = vec![0u8; 2048];
    pin_to_cpu(1)?;
    // scripts/profile.sh's marks around the measured part.
    let marks = std::env::var_os("RTUN_PROF_SYNC").is_some();
    if marks {
        // SAFETY: sync(2) takes no arguments.
        unsafe { libc::sync() };
    }
    let t0 = Instant::now();
    for i in 0..count {
        fd_write(a.fd(), &f).map_err(|e| format!("write {i}: errno {e}"))?;
        if row != "drop" {
            let n = fd_read(back, &mut buf).map_err(|e| format!("read {i}: errno {e}"))?;
            check!(buf[..n] == f[..], "frame {i} came back as {n} other bytes");
        }
    }
    let ns = t0.elapsed().as_nanos() as f64;
    if marks {
        // SAFETY: As above.
        unsafe { libc::sync() };
    }
    Ok(format!(
        "BENCH xdp row={row} packets={count} ns={ns:.0} pps={:.0} ns_per_packet={:.1}",
        f64::from(count) * 1e9 / ns,
        ns / f64::from(count)
    ))
}
