//! Flows follow their writer's queue, and a busy flow does not age out.

use super::*;

/// A two-queue TUN device (`IFF_NO_PI`, non-blocking queues) on
/// 10.`net`.0.1 - 10.`net`.0.2 with the RPS/RFS knobs off, and a local
/// UDP socket on port 7000: the stack's replies to the peer's port P are
/// what the flow table steers.
pub fn flow_dev(n: Node, name: &str, net: u8) -> Result<(Vec<Tun>, std::net::UdpSocket), String> {
    keys_off()?;
    let q = mq_open(n.path, name, IFF_TUN | IFF_NO_PI, 2)?;
    for t in &q {
        // SAFETY: Setting O_NONBLOCK on our fd.
        unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }
    ptp_up(name, &format!("10.{net}.0.1"), &format!("10.{net}.0.2"))?;
    let sock = std::net::UdpSocket::bind(format!("10.{net}.0.1:7000")).map_err(|e| e.to_string())?;
    Ok((q, sock))
}

/// Sends `count` replies to the peer's `port` and returns how many of them
/// each queue read, once all `count` are read or 500 ms passed (other
/// packets are drained and ignored).
pub fn replies_per_queue(q: &[Tun], sock: &std::net::UdpSocket, net: u8, port: u16, count: usize) -> Result<Vec<usize>, String> {
    for _ in 0..count {
        sock.send_to(b"back", format!("10.{net}.0.2:{port}")).map_err(|e| e.to_string())?;
    }
    let mut got = vec![0; q.len()];
    let t0 = Instant::now();
    while got.iter().sum::<usize>() < count && t0.elapsed() < Duration::from_millis(500) {
        for (k, t) in q.iter().enumerate() {
            got[k] += drain_ports(t).iter().filter(|&&p| p == port).count();
        }
        thread::sleep(Duration::from_millis(5));
    }
    Ok(got)
}

/// A known flow written from another queue moves to it (tun_flow_update's
/// `queue_index` update): the stack's replies follow the queue that wrote
/// last, back and forth, for every flow.
pub fn t_flow_follows_writer(n: Node) -> TestResult {
    let net = 93;
    let (q, sock) = flow_dev(n, "rt-ffw", net)?;
    for port in 3000..3004u16 {
        let p = udp_pkt([10, net, 0, 2], port, [10, net, 0, 1], 7000);
        for k in [0, 1, 0, 1] {
            q[k].write(&p).map_err(|e| format!("write on queue {k}: {e}"))?;
            for t in &q {
                drain_ports(t);
            }
            let got = replies_per_queue(&q, &sock, net, port, 2)?;
            let mut want = vec![0, 0];
            want[k] = 2;
            check!(got == want, "flow {port}, last written on queue {k}: replies per queue {got:?}, want {want:?}");
        }
    }
    Ok(())
}

/// A busy flow does not age out (tun_flow_update refreshes `updated`):
/// a flow written from the queue its hash would not pick, every 500 ms for
/// 2 s, is still steered to that queue 4.1 s after its first write -- past
/// the ageing timer's first run (3 s after the first write, rounded up to
/// a second), before 3 s after its last write. A flow whose `updated` kept
/// its creation time would be gone by then, its replies on the hash's
/// queue. tun's ageing time is fixed at 3 s, hence the test's 5 s.
pub fn t_busy_flow_no_ageing(n: Node) -> TestResult {
    let net = 94;
    let (q, sock) = flow_dev(n, "rt-bfa", net)?;
    let port = 3100u16;
    // Where the hash puts the flow without an entry.
    let hashq = replies_per_queue(&q, &sock, net, port, 1)?;
    check!(hashq.iter().sum::<usize>() == 1, "the first reply: per queue {hashq:?}");
    let hashed = hashq.iter().position(|&c| c == 1).unwrap_or(0);
    let writer = 1 - hashed;
    let p = udp_pkt([10, net, 0, 2], port, [10, net, 0, 1], 7000);
    // Several tries if the guest is so starved that no check falls in the
    // window; a real failure fails the first.
    for attempt in 0..3 {
        q[writer].write(&p).map_err(|e| format!("write: {e}"))?;
        let first = Instant::now();
        let mut last = first;
        for i in 1..=4u32 {
            thread::sleep((first + Duration::from_millis(500) * i).saturating_duration_since(Instant::now()));
            q[writer].write(&p).map_err(|e| format!("write: {e}"))?;
            last = Instant::now();
        }
        for t in &q {
            drain_ports(t);
        }
        thread::sleep((first + Duration::from_millis(4100)).saturating_duration_since(Instant::now()));
        let mut checked = 0;
        while last.elapsed() < Duration::from_millis(2800) {
            let sent = last.elapsed();
            let got = replies_per_queue(&q, &sock, net, port, 1)?;
            // Sent before 3 s after the last write: the flow must be there.
            if sent < Duration::from_millis(2900) {
                check!(
                    got[writer] == 1,
                    "{:?} after the first write, {:?} after the last: replies per queue {got:?}, want queue {writer}",
                    first.elapsed(),
                    last.elapsed()
                );
                checked += 1;
            }
            thread::sleep(Duration::from_millis(70));
        }
        if checked > 0 {
            println!("# {checked} checks, attempt {attempt}");
            return Ok(());
        }
        // Let it age out before the next try.
        thread::sleep(Duration::from_secs(5));
    }
    Err("the guest never checked in the window".into())
}
