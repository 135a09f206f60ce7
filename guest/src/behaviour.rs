//! Behaviours of the tun ABI that clients rely on, each run against tun
//! and rust_tun with the same expectations (where they differ on purpose,
//! the test says so and `Documentation/rust_tun.rst` lists it): many
//! producers against blocking and edge-triggered readers, signals, iovecs,
//! short reads, device removal under pktgen, carrier and operstate, MTU,
//! IPv6, VLAN tags, file descriptors passed and inherited.
//!
//! The link under traffic (carrier, MTU, IPv6, VLAN) is in
//! behaviour/link.rs, passed and inherited files in behaviour/fdpass.rs,
//! flows in behaviour/flows.rs.

use super::*;
use std::os::fd::RawFd;
use std::process::Stdio;
use std::sync::atomic::AtomicU32;
use std::sync::Mutex;

pub mod link;
pub mod fdpass;
pub mod flows;
pub mod vlan;

use flows::*;

/// `PRODUCERS` threads each send `PER` UDP datagrams tagged (producer,
/// sequence) through a TUN device to its peer.
const PRODUCERS: u32 = 4;
const PER: u32 = 400;

fn produce(dst: &'static str) -> Vec<thread::JoinHandle<Result<(), String>>> {
    (0..PRODUCERS)
        .map(|p| {
            thread::spawn(move || {
                let s = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
                for i in 0..PER {
                    let tag = (p << 16 | i).to_be_bytes();
                    s.send_to(&tag, dst).map_err(|e| format!("producer {p}: send {i}: {e}"))?;
                }
                Ok(())
            })
        })
        .collect()
}

/// The (producer, sequence) tag of a datagram the producers sent.
fn tag_of(p: &[u8]) -> Option<u32> {
    let ip = pkt::parse_ipv4(p)?;
    let data = ip.payload.get(8..12)?;
    (ip.proto == pkt::IPPROTO_UDP).then(|| u32::from_be_bytes(data.try_into().unwrap_or_default()))
}

/// Checks that `tags` is every (producer, sequence) exactly once.
fn check_all_once(mut tags: Vec<u32>, what: &str) -> TestResult {
    let n = tags.len();
    tags.sort_unstable();
    tags.dedup();
    check!(n == tags.len(), "{what}: {} duplicates", n - tags.len());
    let want: Vec<u32> = (0..PRODUCERS).flat_map(|p| (0..PER).map(move |i| p << 16 | i)).collect();
    check!(tags == want, "{what}: {} of {} packets delivered", tags.len(), want.len());
    Ok(())
}

/// Two blocking readers on one queue against four producers: every packet
/// reaches exactly one reader, none is lost or duplicated.
pub fn t_blocking_readers_many_producers(n: Node) -> TestResult {
    let t = Arc::new(Tun::create(n.path, "rt-mp0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    sh("ip link set rt-mp0 qlen 5000")?;
    ptp_up("rt-mp0", "10.80.0.1", "10.80.0.2")?;
    let got = Arc::new(Mutex::new(Vec::new()));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (t, got) = (t.clone(), got.clone());
            thread::spawn(move || {
                let mut buf = [0u8; 2048];
                loop {
                    match t.read(&mut buf) {
                        // A 5-byte datagram is the stop marker.
                        Ok(n) if n == 20 + 8 + 5 => return Ok(()),
                        Ok(n) => got.lock().map_err(|_| "poisoned")?.extend(tag_of(&buf[..n])),
                        Err(e) => return Err(format!("read: errno {e}")),
                    }
                }
            })
        })
        .collect();
    for p in produce("10.80.0.2:9") {
        p.join().map_err(|_| "producer panicked")??;
    }
    let s = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    for _ in 0..2 {
        s.send_to(b"stop!", "10.80.0.2:9").map_err(|e| e.to_string())?;
    }
    for r in readers {
        r.join().map_err(|_| "reader panicked")??;
    }
    check!(stat("rt-mp0", "tx_dropped")? == 0, "tx_dropped {}", stat("rt-mp0", "tx_dropped")?);
    let tags = std::mem::take(&mut *got.lock().map_err(|_| "poisoned")?);
    check_all_once(tags, "blocking readers")
}

/// An edge-triggered epoll reader (read until EAGAIN on each event)
/// against four producers: it misses no wake-up and no packet.
pub fn t_epollet_reader_many_producers(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-ep0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-ep0 qlen 5000")?;
    ptp_up("rt-ep0", "10.81.0.1", "10.81.0.2")?;
    // SAFETY: Plain epoll calls on our fds.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    check!(ep >= 0, "epoll_create1: errno {}", errno());
    let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLET) as u32, u64: 1 };
    // SAFETY: Valid epoll fd, our fd, valid event.
    let r = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, t.fd(), &mut ev) };
    check!(r == 0, "epoll_ctl: errno {}", errno());
    let producers = produce("10.81.0.2:9");
    let mut tags = Vec::new();
    let mut buf = [0u8; 2048];
    let total = (PRODUCERS * PER) as usize;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 4];
    let mut wakeups = 0;
    while tags.len() < total && Instant::now() < deadline {
        // SAFETY: Valid epoll fd and buffer.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), 4, 1000) };
        if n <= 0 {
            continue;
        }
        wakeups += 1;
        loop {
            match t.read(&mut buf) {
                Ok(n) => tags.extend(tag_of(&buf[..n])),
                Err(libc::EAGAIN) => break,
                Err(e) => {
                    // SAFETY: Our epoll fd.
                    unsafe { libc::close(ep) };
                    return Err(format!("read: errno {e}"));
                }
            }
        }
    }
    // SAFETY: Our epoll fd.
    unsafe { libc::close(ep) };
    for p in producers {
        p.join().map_err(|_| "producer panicked")??;
    }
    println!("# {} packets in {wakeups} edge-triggered wake-ups", tags.len());
    check!(stat("rt-ep0", "tx_dropped")? == 0, "tx_dropped {}", stat("rt-ep0", "tx_dropped")?);
    check_all_once(tags, "EPOLLET reader")
}

static SIGNALS: AtomicU32 = AtomicU32::new(0);

extern "C" fn count_signal(_: i32) {
    SIGNALS.fetch_add(1, Ordering::SeqCst);
}

/// Installs `count_signal` for SIGUSR1, with or without SA_RESTART.
fn on_sigusr1(restart: bool) -> TestResult {
    // SAFETY: A zeroed sigaction, then filled in; the handler only touches
    // an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = count_signal as usize;
        sa.sa_flags = if restart { libc::SA_RESTART } else { 0 };
        libc::sigemptyset(&mut sa.sa_mask);
        check!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()) == 0, "sigaction: errno {}", errno());
    }
    Ok(())
}

/// A signal interrupts a blocked read: EINTR without SA_RESTART; with it
/// the read goes on and returns the next packet; SIGKILL ends a process
/// blocked in a read, and the device loses only that queue.
pub fn t_signals_interrupt_read(n: Node) -> TestResult {
    let t = Arc::new(Tun::create(n.path, "rt-sig0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    ptp_up("rt-sig0", "10.82.0.1", "10.82.0.2")?;
    for restart in [false, true] {
        on_sigusr1(restart)?;
        let before = SIGNALS.load(Ordering::SeqCst);
        let t2 = t.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = thread::spawn(move || {
            // SAFETY: `pthread_self` has no preconditions.
            let _ = tx.send((gettid(), unsafe { libc::pthread_self() }));
            let mut buf = [0u8; 2048];
            t2.read(&mut buf)
        });
        let (tid, pt) = rx.recv().map_err(|e| e.to_string())?;
        wait_blocked(tid)?;
        // SAFETY: A live thread of ours.
        unsafe { libc::pthread_kill(pt, libc::SIGUSR1) };
        let t0 = Instant::now();
        while SIGNALS.load(Ordering::SeqCst) == before && t0.elapsed() < Duration::from_secs(3) {
            thread::sleep(Duration::from_millis(5));
        }
        check!(SIGNALS.load(Ordering::SeqCst) > before, "the signal was not delivered");
        if restart {
            // Restarted: blocked again until a packet comes.
            wait_blocked(tid)?;
            check!(!reader.is_finished(), "SA_RESTART: the read returned");
            udp_send("10.82.0.2", 1)?;
            let r = reader.join().map_err(|_| "reader panicked")?;
            check!(r == Ok(20 + 8 + 4), "SA_RESTART: read {r:?}");
        } else {
            let r = reader.join().map_err(|_| "reader panicked")?;
            expect_errno!(r, libc::EINTR, "a read interrupted without SA_RESTART");
        }
    }
    // SAFETY: Back to the default disposition.
    unsafe { libc::signal(libc::SIGUSR1, libc::SIG_DFL) };

    // SIGKILL of a process blocked in a read on a second queue.
    let mq = mq_open(n.path, "rt-sig1", IFF_TUN | IFF_NO_PI, 1)?;
    let mut child = Command::new("/bin/rtun").args(["block-read", n.path, "rt-sig1"]).spawn().map_err(|e| e.to_string())?;
    let pid = child.id() as i32;
    let t0 = Instant::now();
    while tx_queues("rt-sig1") != 2 || !proc_sleeping(pid) {
        check!(t0.elapsed() < Duration::from_secs(5), "the child did not block in its read");
        thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: Our child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let status = child.wait().map_err(|e| e.to_string())?;
    use std::os::unix::process::ExitStatusExt;
    check!(status.signal() == Some(libc::SIGKILL), "child: {status}");
    check!(tx_queues("rt-sig1") == 1, "{} queues after the child died", tx_queues("rt-sig1"));
    check!(mq[0].getiff().is_ok(), "the remaining queue");
    Ok(())
}

/// Whether process `pid` sleeps (state S).
fn proc_sleeping(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next()) == Some("S")
}

pub(crate) fn iov(buf: &[u8]) -> libc::iovec {
    libc::iovec { iov_base: buf.as_ptr() as *mut _, iov_len: buf.len() }
}

pub(crate) fn writev(fd: RawFd, iovs: &[libc::iovec]) -> Result<usize, i32> {
    // SAFETY: Each iovec describes a buffer (or, on purpose, an unmapped
    // address the kernel must refuse).
    let r = unsafe { libc::writev(fd, iovs.as_ptr(), iovs.len() as i32) };
    if r < 0 { Err(errno()) } else { Ok(r as usize) }
}

fn readv(fd: RawFd, iovs: &[libc::iovec]) -> Result<usize, i32> {
    // SAFETY: As for `writev`; the buffers are writable.
    let r = unsafe { libc::readv(fd, iovs.as_ptr(), iovs.len() as i32) };
    if r < 0 { Err(errno()) } else { Ok(r as usize) }
}

/// `writev`/`readv` with many, zero-length and faulting iovecs, and
/// `tun_pi` split across them.
pub fn t_iovecs(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-iov0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up("rt-iov0", "10.83.0.1", "10.83.0.2")?;
    let data: Vec<u8> = (0..64).map(|i| b'a' + (i % 26) as u8).collect();
    let req = pkt::ipv4([10, 83, 0, 2], [10, 83, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 3, 1, &data));
    let pi = [0u8, 0, 8, 0];
    let empty: [u8; 0] = [];
    // tun_pi in two pieces, an empty iovec, the header in two, then the
    // rest one byte per iovec with empty ones between.
    let mut iovs = vec![iov(&pi[..2]), iov(&empty), iov(&pi[2..]), iov(&req[..7]), iov(&req[7..20])];
    for b in req[20..].chunks(1) {
        iovs.push(iov(b));
        iovs.push(iov(&empty));
    }
    check!(iovs.len() > 100, "{} iovecs", iovs.len());
    let w = writev(t.fd(), &iovs).map_err(|e| format!("writev of {} iovecs: errno {e}", iovs.len()))?;
    check!(w == 4 + req.len(), "writev returned {w}");
    // The reply, read into pieces with tun_pi split.
    let (mut a, b, c, mut d) = ([0u8; 1], [0u8; 3], [0u8; 10], vec![0u8; 2048]);
    poll_fd(t.fd(), libc::POLLIN, Duration::from_secs(3)).map_err(|e| format!("poll: {e}"))?;
    let r = readv(t.fd(), &[iov(&a), iov(&empty), iov(&b), iov(&c), iov(&d)]).map_err(|e| format!("readv: errno {e}"))?;
    let mut whole = Vec::new();
    for part in [&a[..], &b[..], &c[..], &d[..]] {
        whole.extend_from_slice(part);
    }
    whole.truncate(r);
    check!(whole[..4] == pi, "tun_pi {:02x?}", &whole[..4]);
    let ok = pkt::parse_ipv4(&whole[4..])
        .and_then(|ip| pkt::parse_icmp_echo(ip.payload))
        .is_some_and(|(ty, id, seq, got)| ty == 0 && id == 3 && seq == 1 && got == &data[..]);
    check!(ok, "the reply read through iovecs is not the echo reply");

    // A faulting iovec in the middle of the packet: EFAULT, counted as a drop.
    let d0 = stat("rt-iov0", "rx_dropped")?;
    let bad = libc::iovec { iov_base: 16 as *mut _, iov_len: 8 };
    expect_errno!(writev(t.fd(), &[iov(&pi), iov(&req[..20]), bad, iov(&req[20..])]), libc::EFAULT, "writev with a faulting iovec");
    check!(stat("rt-iov0", "rx_dropped")? == d0 + 1, "rx_dropped +{}", stat("rt-iov0", "rx_dropped")? - d0);
    // Faulting in tun_pi itself: EFAULT before any packet exists.
    expect_errno!(writev(t.fd(), &[iov(&pi[..2]), bad, iov(&req)]), libc::EFAULT, "writev faulting in tun_pi");
    check!(stat("rt-iov0", "rx_dropped")? == d0 + 1, "a fault in tun_pi counted as a drop");

    // A faulting iovec on read: rust_tun answers EFAULT; tun.c ignores the
    // fault and returns the length (a documented difference). Either way
    // the packet is consumed and the next read gets the next packet.
    for seq in [2, 3] {
        let req = pkt::ipv4([10, 83, 0, 2], [10, 83, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 3, seq, &data));
        writev(t.fd(), &[iov(&pi), iov(&req)]).map_err(|e| format!("writev: errno {e}"))?;
    }
    thread::sleep(Duration::from_millis(200));
    let r = readv(t.fd(), &[iov(&c), libc::iovec { iov_base: 16 as *mut _, iov_len: 200 }]);
    if n.module == "rust_tun" {
        expect_errno!(r, libc::EFAULT, "readv into a faulting iovec");
    } else {
        check!(r == Ok(4 + req.len()), "tun: readv into a faulting iovec: {r:?}");
    }
    a[0] = 0;
    let got = t.read(&mut d).map_err(|e| format!("read: errno {e}"))?;
    check!(pkt::parse_ipv4(&d[4..got]).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.2 == 3), "the read after the faulting one is not the next packet");
    Ok(())
}

/// Short reads without tun_pi: the read returns the buffer's length (the
/// start of the packet); the rest is gone; the next read is the next packet.
pub fn t_short_read_no_pi(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-sr0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up("rt-sr0", "10.84.0.1", "10.84.0.2")?;
    udp_send_ports("10.84.0.2", 0..2)?;
    let mut small = [0u8; 10];
    check!(t.read(&mut small) == Ok(10), "short read");
    check!(small[0] == 0x45 && small[9] == pkt::IPPROTO_UDP, "the start of the first packet: {small:02x?}");
    let mut buf = [0u8; 2048];
    let got = t.read(&mut buf).map_err(|e| format!("read: errno {e}"))?;
    check!(pkt::udp_ports(&buf[..got]).is_some_and(|(_, d)| d == 9001), "the next read is not the second packet");
    expect_errno!(t.read(&mut buf), libc::EAGAIN, "a third read");
    Ok(())
}

/// pktgen transmitting into a TAP device while: rmmod is tried (refused,
/// traffic goes on); the last file closes (the device goes, pktgen lets
/// go of it); a persistent device is deleted with `ip link del`.
pub fn t_remove_under_pktgen(n: Node) -> TestResult {
    load("pktgen")?;
    for how in ["close", "ip link del"] {
        let t = Arc::new(Tun::create_nonblock(n.path, "rt-pgr0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
        if how == "ip link del" {
            ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
        }
        sh("ip link set rt-pgr0 up")?;
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (t, stop) = (t.clone(), stop.clone());
            thread::spawn(move || {
                let mut buf = [0u8; 2048];
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if t.read(&mut buf).is_ok() {
                        n += 1;
                    } else {
                        thread::sleep(Duration::from_micros(200));
                    }
                }
                n
            })
        };
        stress::pktgen_setup("rt-pgr0", 0)?;
        let run = thread::spawn(|| std::fs::write("/proc/net/pktgen/pgctrl", "start\n"));
        let t0 = Instant::now();
        while stat("rt-pgr0", "tx_packets")? < 100 {
            check!(t0.elapsed() < Duration::from_secs(10), "pktgen did not get going");
            thread::sleep(Duration::from_millis(10));
        }
        match hardening::delete_module(n.module) {
            Err(e) if e == libc::EAGAIN || e == libc::EBUSY => {}
            r => return Err(format!("rmmod {} while pktgen runs: {r:?}", n.module)),
        }
        let sent = stat("rt-pgr0", "tx_packets")?;
        thread::sleep(Duration::from_millis(100));
        check!(stat("rt-pgr0", "tx_packets")? > sent, "traffic stopped after the refused rmmod");
        stop.store(true, Ordering::Relaxed);
        let read = reader.join().map_err(|_| "reader panicked")?;
        if how == "close" {
            drop(t);
        } else {
            sh("ip link del rt-pgr0")?;
        }
        let t0 = Instant::now();
        while !run.is_finished() {
            check!(t0.elapsed() < Duration::from_secs(10), "{how}: pktgen did not stop");
            thread::sleep(Duration::from_millis(20));
        }
        let _ = run.join();
        check!(!link_exists("rt-pgr0"), "{how}: the device is still there");
        println!("# {how} under pktgen: {read} packets read first");
    }
    let _ = std::fs::write("/proc/net/pktgen/kpktgend_0", "rem_device_all\n");
    Ok(())
}

/// `txqueuelen` changed while a queue is detached resizes that queue's
/// ring too (tun_queue_resize covers `tun->disabled`; the re-attach does
/// not resize): after qlen 4 set while queue 1 was detached, queue 1
/// re-attached holds 4 of 10 packets steered to it, the rest dropped.
pub fn t_txqlen_detached(n: Node) -> TestResult {
    let net = 95;
    let (q, sock) = flow_dev(n, "rt-tqd", net)?;
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
    sh("ip link set rt-tqd qlen 4")?;
    setqueue(&q[1], IFF_ATTACH_QUEUE).map_err(|e| format!("attach: {e}"))?;
    let port = 3200u16;
    // The flow is queue 1's: the replies go there.
    q[1].write(&udp_pkt([10, net, 0, 2], port, [10, net, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
    for t in &q {
        drain_ports(t);
    }
    let d0 = stat("rt-tqd", "tx_dropped")?;
    let got = replies_per_queue(&q, &sock, net, port, 10)?;
    check!(got == [0, 4], "10 replies to queue 1 after qlen 4: per queue {got:?}, want [0, 4]");
    check!(stat("rt-tqd", "tx_dropped")? == d0 + 6, "tx_dropped +{}", stat("rt-tqd", "tx_dropped")? - d0);
    Ok(())
}

/// A read buffer of exactly `tun_pi` + packet takes it whole (flags 0,
/// that length); one byte less strips it (`TUN_PKT_STRIP`, the buffer's
/// length); just `tun_pi` is a stripped read of 4 bytes; less is `EINVAL`.
/// The same with the vnet header between (`tun_pi` + 10 + packet), where a
/// buffer past `tun_pi` but short of the header is `EINVAL`.
pub fn t_read_exact_pi(n: Node) -> TestResult {
    for (vnet, name, net) in [(0, "rt-rxp0", 96u8), (10, "rt-rxp1", 97)] {
        let flags = IFF_TUN | if vnet != 0 { IFF_VNET_HDR } else { 0 };
        let t = Tun::create_nonblock(n.path, name, flags).map_err(|e| format!("TUNSETIFF {flags:#x}: {e}"))?;
        ptp_up(name, &format!("10.{net}.0.1"), &format!("10.{net}.0.2"))?;
        let sock = std::net::UdpSocket::bind(format!("10.{net}.0.1:0")).map_err(|e| e.to_string())?;
        let data = [0x3cu8; 100];
        let whole = 4 + vnet + 20 + 8 + data.len();
        let mut sent = 0u8;
        // Queues one datagram (its first byte numbers it), reads it with a
        // `size`-byte buffer: (result, tun_pi flags, the bytes).
        let mut read = |size: usize| -> Result<(Result<usize, i32>, u16, Vec<u8>), String> {
            let mut d = data;
            d[0] = sent;
            sent += 1;
            sock.send_to(&d, format!("10.{net}.0.2:9")).map_err(|e| e.to_string())?;
            poll_fd(t.fd(), libc::POLLIN, Duration::from_secs(2)).map_err(|e| format!("poll: {e}"))?;
            let mut buf = vec![0xeeu8; size];
            let r = t.read(&mut buf);
            let flags = if size >= 2 { u16::from_ne_bytes([buf[0], buf[1]]) } else { 0 };
            Ok((r, flags, buf))
        };
        let (r, flags, buf) = read(whole)?;
        check!(r == Ok(whole) && flags == 0, "vnet {vnet}: a {whole}-byte buffer: {r:?}, flags {flags:#x}");
        check!(buf[4 + vnet] == 0x45 && buf[whole - data.len()] == 0, "vnet {vnet}: the packet read whole is not the first");
        let (r, flags, buf) = read(whole - 1)?;
        check!(r == Ok(whole - 1) && flags & TUN_PKT_STRIP != 0, "vnet {vnet}: a {}-byte buffer: {r:?}, flags {flags:#x}", whole - 1);
        check!(buf[4 + vnet] == 0x45 && buf[whole - data.len()] == 1, "vnet {vnet}: the stripped read is not the second packet");
        let (r, flags, _) = read(4 + vnet)?;
        check!(r == Ok(4 + vnet) && flags & TUN_PKT_STRIP != 0, "vnet {vnet}: a {}-byte buffer: {r:?}, flags {flags:#x}", 4 + vnet);
        let short = if vnet != 0 { 4 + vnet - 1 } else { 3 };
        let (r, _, _) = read(short)?;
        expect_errno!(r, libc::EINVAL, format!("vnet {vnet}: a {short}-byte read"));
        // Each read consumed its packet.
        let mut buf = [0u8; 2048];
        expect_errno!(t.read(&mut buf), libc::EAGAIN, format!("vnet {vnet}: a read after the last"));
    }
    Ok(())
}
