//! Send-buffer accounting (`TUNGETSNDBUF`/`TUNSETSNDBUF`): in flight past
//! the buffer, `EAGAIN`, `POLLOUT` and blocking writers, on every queue.

use super::*;

/// `TUNGETSNDBUF`/`TUNSETSNDBUF`, and the accounting they control: in
/// flight past the send buffer, a non-blocking writer gets `EAGAIN` (not a
/// drop), `POLLOUT` comes back when space is freed, and a blocking writer
/// waits instead, until space is freed (tun.c: until a poller comes by).
/// Packets stay in flight on the other CPU's RPS backlog.
pub fn t_sndbuf(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-sb0", IFF_TUN | IFF_NO_PI, 1)?;
    let t = &q[0];
    check!(get_int(t.fd(), TUNGETSNDBUF) == Ok(i32::MAX), "default {:?}", get_int(t.fd(), TUNGETSNDBUF));
    expect_errno!(ioctl_int(t.fd(), TUNSETSNDBUF, 0), libc::EINVAL, "TUNSETSNDBUF 0");
    expect_errno!(ioctl_int(t.fd(), TUNSETSNDBUF, -5), libc::EINVAL, "TUNSETSNDBUF -5");
    expect_errno!(ioctl_ptr(t.fd(), TUNSETSNDBUF, 8usize as *mut i32), libc::EFAULT, "TUNSETSNDBUF from a bad pointer");
    expect_errno!(ioctl_ptr(t.fd(), TUNGETSNDBUF, 8usize as *mut i32), libc::EFAULT, "TUNGETSNDBUF to a bad pointer");
    ioctl_int(t.fd(), TUNSETSNDBUF, 1).map_err(|e| format!("TUNSETSNDBUF: {e}"))?;
    check!(get_int(t.fd(), TUNGETSNDBUF) == Ok(1), "after set {:?}", get_int(t.fd(), TUNGETSNDBUF));
    // tun.c 6.12 hands the device's send buffer to the files attached at
    // TUNSETSNDBUF time only: a file attached later keeps its own.
    let late = Tun::create(n.path, "rt-sb0", IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE).map_err(|e| format!("second queue: {e}"))?;
    check!(get_int(late.fd(), TUNGETSNDBUF) == Ok(i32::MAX), "late file {:?}", get_int(late.fd(), TUNGETSNDBUF));
    drop(late);

    // A few packets' worth: a write is admitted while less than this is in
    // flight, POLLOUT needs less than half (`sock_writeable()`).
    ioctl_int(t.fd(), TUNSETSNDBUF, 4096).map_err(|e| format!("TUNSETSNDBUF: {e}"))?;
    ptp_up("rt-sb0", "10.81.0.1", "10.81.0.2")?;
    write_file("/sys/class/net/rt-sb0/queues/rx-0/rps_cpus", "2")?;
    pin_to_cpu(0)?;
    // SAFETY: Our fd.
    unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    let pkt = udp_pkt([10, 81, 0, 2], 5000, [10, 81, 0, 1], 9);
    let before = counters("rt-sb0")?;
    let (mut ok, mut again, mut polled) = (0u64, 0u64, 0u64);
    // The longest wait for POLLOUT: how long the packets in flight take to
    // give their send-buffer space back in this boot, under this load.
    let mut space_back = Duration::ZERO;
    let t0 = Instant::now();
    for _ in 0..3000 {
        match t.write(&pkt) {
            Ok(_) => ok += 1,
            Err(libc::EAGAIN) => {
                again += 1;
                let p0 = Instant::now();
                if poll_fd(t.fd(), libc::POLLOUT, Duration::from_secs(10)).is_ok_and(|ev| ev & libc::POLLOUT != 0) {
                    polled += 1;
                }
                space_back = space_back.max(p0.elapsed());
            }
            Err(e) => return Err(format!("non-blocking write: errno {e}")),
        }
        if t0.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
    let after = counters("rt-sb0")?;
    write_file("/sys/class/net/rt-sb0/queues/rx-0/rps_cpus", "0")?;
    println!("# {}: {ok} written, {again} EAGAIN, POLLOUT back after {polled} (the longest wait {space_back:?})", n.driver);
    check!(again > 0, "3000 writes with a 4 KB send buffer and packets in flight: no EAGAIN");
    check!(polled == again, "POLLOUT came back after {polled} of {again} EAGAINs");
    check!(after.rx_packets - before.rx_packets == ok, "rx_packets +{}, {ok} written", after.rx_packets - before.rx_packets);
    check!(after.rx_dropped == before.rx_dropped, "EAGAIN counted as drops: {} -> {}", before.rx_dropped, after.rx_dropped);
    // Blocking: every write completes (a writer stuck past 10 s is
    // interrupted and reported).
    // SAFETY: Our fd.
    unsafe { libc::fcntl(t.fd(), libc::F_SETFL, 0) };
    write_file("/sys/class/net/rt-sb0/queues/rx-0/rps_cpus", "2")?;
    println!("# {}: blocking writer starts", n.driver);
    let fd = t.fd();
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let tid = Arc::new(std::sync::atomic::AtomicI32::new(0));
    let tid2 = tid.clone();
    let progress = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let p2 = progress.clone();
    let w = thread::spawn(move || {
        tid2.store(gettid(), Ordering::SeqCst);
        let mut n = 0;
        for _ in 0..1000 {
            if fd_write(fd, &pkt).is_err() {
                break;
            }
            n += 1;
            p2.store(n, Ordering::SeqCst);
        }
        d2.store(true, Ordering::SeqCst);
        n
    });
    // Stuck: no write completed for twenty times the longest wait for
    // space seen above (at least 1 s): space that comes back at all comes
    // back within that wait, on this boot and under this load.
    let stuck_after = (space_back * 20).max(Duration::from_secs(1));
    println!("# {}: stuck means no write completes for {stuck_after:?}", n.driver);
    let (mut last, mut since) = (0, Instant::now());
    while !done.load(Ordering::SeqCst) && since.elapsed() < stuck_after {
        thread::sleep(Duration::from_millis(20));
        let p = progress.load(Ordering::SeqCst);
        if p != last {
            (last, since) = (p, Instant::now());
        }
    }
    let stuck = !done.load(Ordering::SeqCst);
    if stuck {
        // Free it: no limit any more, and signals until it has seen so
        // (each wake-up re-checks the space).
        ioctl_int(t.fd(), TUNSETSNDBUF, i32::MAX).map_err(|e| format!("TUNSETSNDBUF: {e}"))?;
        while !done.load(Ordering::SeqCst) {
            interrupt_thread(tid.load(Ordering::SeqCst));
            thread::sleep(Duration::from_millis(50));
        }
    }
    let written = w.join().map_err(|_| "writer panicked".to_string())?;
    write_file("/sys/class/net/rt-sb0/queues/rx-0/rps_cpus", "0")?;
    println!("# {}: blocking writer wrote {written} of 1000{}", n.driver, if stuck { ", stuck until freed" } else { "" });
    if n.module == "tun" {
        // tun.c 6.12 wakes a writer waiting for send-buffer space only if
        // a poller flagged SOCKWQ_ASYNC_NOSPACE (tun_sock_write_space()):
        // a blocking writer that does not poll sleeps on. Deliberate
        // difference: rust_tun wakes it.
        check!(stuck, "tun.c's blocking writer was woken without a poller");
    } else {
        check!(!stuck && written == 1000, "blocking writer: {written} of 1000 written{}", if stuck { ", stuck in write" } else { "" });
    }
    Ok(())
}

pub extern "C" fn ignore_signal(_: i32) {}

/// Interrupts thread `tid`'s blocking system call: SIGUSR2 with a handler
/// installed without `SA_RESTART` (the call fails with `EINTR`).
pub fn interrupt_thread(tid: i32) {
    // SAFETY: Installing a handler that does nothing, then signalling a
    // thread of ours.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = ignore_signal as *const () as usize;
        libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut());
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, libc::SIGUSR2);
    }
}

/// `TUNSETSNDBUF` on any queue of a multi-queue device sets the send
/// buffer of every attached queue (tun.c's `tun_set_sndbuf()`); a queue
/// detached at the time keeps its own, also once re-attached (tun.c 6.12
/// hands the device's value to no file at attach).
pub fn t_sndbuf_all_queues(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-sbq", IFF_TUN | IFF_NO_PI, 3)?;
    let all = |q: &[Tun]| q.iter().map(|t| get_int(t.fd(), TUNGETSNDBUF)).collect::<Vec<_>>();
    ioctl_int(q[2].fd(), TUNSETSNDBUF, 4096).map_err(|e| format!("TUNSETSNDBUF on queue 2: {e}"))?;
    check!(all(&q) == [Ok(4096); 3], "after TUNSETSNDBUF 4096 on queue 2: {:?}", all(&q));
    ioctl_int(q[0].fd(), TUNSETSNDBUF, 20000).map_err(|e| format!("TUNSETSNDBUF on queue 0: {e}"))?;
    check!(all(&q) == [Ok(20000); 3], "after TUNSETSNDBUF 20000 on queue 0: {:?}", all(&q));
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
    ioctl_int(q[2].fd(), TUNSETSNDBUF, 8192).map_err(|e| format!("TUNSETSNDBUF with queue 1 detached: {e}"))?;
    check!(all(&q) == [Ok(8192), Ok(20000), Ok(8192)], "with queue 1 detached: {:?}", all(&q));
    setqueue(&q[1], IFF_ATTACH_QUEUE).map_err(|e| format!("attach: {e}"))?;
    check!(all(&q) == [Ok(8192), Ok(20000), Ok(8192)], "queue 1 re-attached: {:?}", all(&q));
    ioctl_int(q[1].fd(), TUNSETSNDBUF, 6000).map_err(|e| format!("TUNSETSNDBUF on queue 1: {e}"))?;
    check!(all(&q) == [Ok(6000); 3], "after TUNSETSNDBUF 6000 on queue 1: {:?}", all(&q));
    Ok(())
}
