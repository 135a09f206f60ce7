//! Flow steering: flows follow the queue they are written on, move with a
//! queue, are limited in number and age out (the `flow_ageing_ms`
//! parameter).

use super::*;

/// Flows written on queue k map to k; the reverse traffic of a flow is read
/// on k; detach drops the queue's flows; idle flows age out after 3 s.
pub fn t_mq_flows(n: Node) -> TestResult {
    keys_off()?;
    let q = mq_open(n.path, "rt-mqf", IFF_TUN | IFF_NO_PI, 2)?;
    for t in &q {
        // SAFETY: Setting O_NONBLOCK on our fd.
        unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }
    ptp_up("rt-mqf", "10.31.0.1", "10.31.0.2")?;
    let sock = std::net::UdpSocket::bind("10.31.0.1:7000").map_err(|e| e.to_string())?;
    let port = |k: usize, f: usize| (1000 + 100 * k + f) as u16;
    for k in 0..2 {
        for f in 0..5 {
            q[k].write(&udp_pkt([10, 31, 0, 2], port(k, f), [10, 31, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
        }
    }
    let (count, flows) = dbg_flows("rt-mqf")?;
    check!(count == 10, "flow_count {count}, expected 10");
    for k in 0..2u16 {
        let on_k = flows.iter().filter(|f| f.queue == k).count();
        check!(on_k == 5, "{on_k} flows on queue {k}: {flows:?}");
    }
    for t in &q {
        drain_ports(t);
    }
    // The stack's replies follow their flow's queue.
    for k in 0..2 {
        for f in 0..5 {
            sock.send_to(b"back", format!("10.31.0.2:{}", port(k, f))).map_err(|e| e.to_string())?;
        }
    }
    thread::sleep(Duration::from_millis(100));
    for k in 0..2 {
        let mut got = drain_ports(&q[k]);
        got.sort();
        let want: Vec<u16> = (0..5).map(|f| port(k, f)).collect();
        check!(got == want, "queue {k} read ports {got:?}, expected {want:?}");
    }
    let (_, flows) = dbg_flows("rt-mqf")?;
    check!(flows.iter().all(|f| f.rps_rxhash != 0), "transmit did not save rps_rxhash: {flows:?}");

    // Detaching queue 1 drops its flows; re-attaching brings no flows back.
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
    let (count, flows) = dbg_flows("rt-mqf")?;
    check!(count == 5 && flows.iter().all(|f| f.queue == 0), "after detach: {count} {flows:?}");
    setqueue(&q[1], IFF_ATTACH_QUEUE).map_err(|e| format!("attach: {e}"))?;
    q[1].write(&udp_pkt([10, 31, 0, 2], 4242, [10, 31, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
    let (count, _) = dbg_flows("rt-mqf")?;
    check!(count == 6, "flow_count {count} after re-attach and a new flow");

    // Ageing: 3 s after the last write, by a timer that rounds up to a
    // second (round_jiffies_up, plus its per-CPU skew of 3 jiffies) and that
    // the timer wheel fires up to one granule late: a 3-4 s timer sits on
    // the wheel's level of 64-jiffy granules, up to 1/8 of its timeout. So
    // gone within 3 + 1 + 3/8 s of the last write on an idle guest: 4.5 s,
    // plus ten times the polls' own timer lateness (wait_flows_aged). A
    // 4 s bound failed once in CI (4.07 s). Flows are never gone early:
    // the guest's clock and jiffies move together.
    // On a host slower than the reference one (RTUN_SLOWDOWN, percent:
    // scripts/test.sh) the guest is starved in bursts its polls do not
    // see (a host slowed 2.1x took 4.80 s against 4.78), so the bound
    // grows with it.
    let idle = Instant::now();
    let slow = std::env::var("RTUN_SLOWDOWN").ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(100).max(100);
    let late = wait_flows_aged("rt-mqf", idle, Duration::from_millis(4500) * slow / 100, Duration::from_millis(200))?;
    println!("# flows aged out {:?} after the last write (timer lateness up to {late:?})", idle.elapsed());
    check!(idle.elapsed() >= Duration::from_secs(3), "flows aged out after only {:?}", idle.elapsed());
    Ok(())
}

/// A queue leaving from the middle: the last queue takes its index (as in
/// tun.c), the departed queue's flows go, and the moved queue's flows
/// follow it to its new index, so the replies of its flows still reach its
/// file (rust_tun's deliberate difference: tun.c deletes the flows of an
/// index no queue has and leaves the moved queue's flows pointing at its
/// old index).
pub fn t_mq_flows_move(n: Node) -> TestResult {
    keys_off()?;
    let q = mq_open(n.path, "rt-mqm", IFF_TUN | IFF_NO_PI, 3)?;
    for t in &q {
        // SAFETY: Setting O_NONBLOCK on our fd.
        unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }
    ptp_up("rt-mqm", "10.36.0.1", "10.36.0.2")?;
    let sock = std::net::UdpSocket::bind("10.36.0.1:7000").map_err(|e| e.to_string())?;
    let port = |k: usize, f: usize| (2000 + 100 * k + f) as u16;
    for (k, t) in q.iter().enumerate() {
        for f in 0..4 {
            t.write(&udp_pkt([10, 36, 0, 2], port(k, f), [10, 36, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
        }
    }
    check!(dbg_flows("rt-mqm")?.0 == 12, "flow_count {}", dbg_flows("rt-mqm")?.0);
    // Queue 0 leaves; queue 2 takes index 0.
    setqueue(&q[0], IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
    let (count, flows) = dbg_flows("rt-mqm")?;
    check!(count == 8, "flow_count {count} after queue 0 left");
    let on = |i: u16| flows.iter().filter(|f| f.queue == i).count();
    check!(on(0) == 4 && on(1) == 4 && on(2) == 0, "flows per queue 0/1/2: {}/{}/{}", on(0), on(1), on(2));
    for t in &q {
        drain_ports(t);
    }
    for f in 0..4 {
        sock.send_to(b"back", format!("10.36.0.2:{}", port(2, f))).map_err(|e| e.to_string())?;
    }
    thread::sleep(Duration::from_millis(100));
    let mut got = drain_ports(&q[2]);
    got.sort();
    check!(got == (0..4).map(|f| port(2, f)).collect::<Vec<_>>(), "the moved queue read {got:?}");
    Ok(())
}

/// `mq_open()` of a device created while `flow_ageing_ms` is `ms`: its
/// flows age after `ms` (the parameter is read at creation). The parameter
/// goes back to its default whatever the open did.
pub fn mq_open_ageing(n: Node, name: &str, flags: u16, queues: usize, ms: u32) -> Result<Vec<Tun>, String> {
    write_file(FLOW_AGEING_PARAM, &ms.to_string())?;
    let q = mq_open(n.path, name, flags, queues);
    write_file(FLOW_AGEING_PARAM, "3000")?;
    q
}

/// Waits for `dev`'s flows to age out, polling every `step`; fails once
/// `since` is `bound` old plus ten times the worst lateness of the polls'
/// own sleeps (a loaded host delays the guest's timers alike: the same
/// boot's timers, the same load). Returns the worst lateness.
pub fn wait_flows_aged(dev: &str, since: Instant, bound: Duration, step: Duration) -> Result<Duration, String> {
    let mut late = Duration::ZERO;
    loop {
        let (count, _) = dbg_flows(dev)?;
        if count == 0 {
            return Ok(late);
        }
        let bound = bound + late * 10;
        check!(since.elapsed() < bound, "{count} flows left after {:?} (bound {bound:?})", since.elapsed());
        let t0 = Instant::now();
        thread::sleep(step);
        late = late.max(t0.elapsed().saturating_sub(step));
    }
}

pub fn t_flow_limit(n: Node) -> TestResult {
    keys_off()?;
    // Flows of a device created now live 10 min without a packet, so the
    // table fills however slowly this kernel writes (a debug kernel takes
    // longer than the default 3 s for 4097 writes).
    let q = mq_open_ageing(n, "rt-flim", IFF_TUN | IFF_NO_PI, 2, 600_000)?;
    ptp_up("rt-flim", "10.32.0.1", "10.32.0.2")?;
    let _sink = std::net::UdpSocket::bind("10.32.0.1:7000").map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    for i in 0..4097u32 {
        let src = [10, 32, (i >> 8) as u8 + 1, i as u8];
        q[0].write(&udp_pkt(src, 5000, [10, 32, 0, 1], 7000)).map_err(|e| format!("write {i}: {e}"))?;
    }
    println!("# 4097 flows written in {:?}", t0.elapsed());
    let (count, flows) = dbg_flows("rt-flim")?;
    check!(count == 4096, "flow_count {count}, expected MAX_TAP_FLOWS 4096");
    check!(flows.len() == 4096, "{} flow lines", flows.len());
    check!(dbg_count("rt-flim", "flow_count")? == 4096, "stats flow_count disagrees");
    Ok(())
}

/// The `flow_ageing_ms` parameter: values outside 100 ms .. 10 min and
/// garbage are refused with EINVAL (one too large for 32 bits with
/// ERANGE, kstrtouint's) and leave it as it was; a device ages
/// its flows with the value it was created with.
pub fn t_flow_ageing_param(n: Node) -> TestResult {
    keys_off()?;
    param_refuses(
        FLOW_AGEING_PARAM,
        "3000",
        &[("0", libc::EINVAL), ("99", libc::EINVAL), ("600001", libc::EINVAL), ("-1", libc::EINVAL), ("abc", libc::EINVAL), ("1000x", libc::EINVAL), ("4294967296", libc::ERANGE)],
    )?;
    let q = mq_open_ageing(n, "rt-fage", IFF_TUN | IFF_NO_PI, 2, 500)?;
    // A device of the default 3 s beside it, its flow written at the same
    // moment: the reference the 500 ms device is measured against.
    let d = mq_open(n.path, "rt-fdef", IFF_TUN | IFF_NO_PI, 2)?;
    ptp_up("rt-fage", "10.37.0.1", "10.37.0.2")?;
    ptp_up("rt-fdef", "10.37.1.1", "10.37.1.2")?;
    let _sink = std::net::UdpSocket::bind("10.37.0.1:7000").map_err(|e| e.to_string())?;
    let _sink_d = std::net::UdpSocket::bind("10.37.1.1:7000").map_err(|e| e.to_string())?;
    q[0].write(&udp_pkt([10, 37, 0, 2], 5000, [10, 37, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
    d[0].write(&udp_pkt([10, 37, 1, 2], 5000, [10, 37, 1, 1], 7000)).map_err(|e| format!("write: {e}"))?;
    let written = Instant::now();
    check!(dbg_flows("rt-fage")?.0 == 1 && dbg_flows("rt-fdef")?.0 == 1, "no flow after a write");
    // 500 ms, rounded up to a second by the timer: gone while the default
    // device, written at the same moment, still holds its flow (3 s, and
    // its timer's first run at 3-4 s). A loaded host delays both devices'
    // timers alike, so the order is what is checked, not a wall-clock
    // bound (2.5 s until 2026-12-06, when a host slowed 2.1x took 2.86 s);
    // the bound below only catches a flow that never ages.
    loop {
        let (aged, default) = (dbg_flows("rt-fage")?.0, dbg_flows("rt-fdef")?.0);
        if aged == 0 {
            check!(default == 1, "the default device's flow aged first ({:?} after the writes)", written.elapsed());
            break;
        }
        check!(written.elapsed() < Duration::from_secs(60), "the 500 ms device's flow did not age in 60 s");
        thread::sleep(Duration::from_millis(50));
    }
    let aged = written.elapsed();
    println!("# a 500 ms device aged its flow after {aged:?}, the default device's flow still there");
    check!(aged >= Duration::from_millis(500), "aged after only {aged:?}");
    Ok(())
}
