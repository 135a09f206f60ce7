//! The queue file's semantics beyond read, write and the tun ioctls, each
//! run against tun and rust_tun with the same expectations (issue 18):
//! `O_ASYNC` signals (`tun_chr_fasync`, `kill_fasync` on transmit and on
//! write space), the file position a read leaves (`ki_pos`), and the
//! socket that stands for the file.

use super::*;

/// `si_code`s of an `O_ASYNC` signal sent with `F_SETSIG` (`POLL_IN`,
/// `POLL_OUT`) and its `si_band`s (`band_table` in fs/fcntl.c).
const POLL_IN: i32 = 1;
const POLL_OUT: i32 = 2;
/// `F_SETSIG` (not in the libc crate).
const F_SETSIG: i32 = 10;
const BAND_IN: i64 = (libc::POLLIN | libc::POLLRDNORM) as i64;
const BAND_OUT: i64 = (libc::POLLOUT | libc::POLLWRNORM | libc::POLLWRBAND) as i64;

/// A signal taken with `sigtimedwait()`: number, code, and for `SIGPOLL`
/// codes the band and descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sig {
    signo: i32,
    code: i32,
    band: i64,
    fd: i32,
}

/// Blocks `sigs` in this (the test's only) thread, so they stay pending
/// for [`wait_sig`] instead of killing the process (`SIGIO`'s default).
fn block(sigs: &[i32]) {
    // SAFETY: Plain signal-mask calls on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in sigs {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The next of `sigs` to arrive within `timeout`, if any.
fn wait_sig(sigs: &[i32], timeout: Duration) -> Option<Sig> {
    // SAFETY: Plain signal calls; `info` is read as the kernel's
    // `siginfo_t` for SIGPOLL codes: `si_band` (a long) at 16, `si_fd` at 24.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in sigs {
            libc::sigaddset(&mut set, s);
        }
        let ts = libc::timespec { tv_sec: timeout.as_secs() as i64, tv_nsec: timeout.subsec_nanos() as i64 };
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::sigtimedwait(&set, &mut info, &ts);
        if r < 0 {
            return None;
        }
        let raw = (&info as *const libc::siginfo_t).cast::<u8>();
        Some(Sig {
            signo: info.si_signo,
            code: info.si_code,
            band: std::ptr::read_unaligned(raw.add(16).cast::<i64>()),
            fd: std::ptr::read_unaligned(raw.add(24).cast::<i32>()),
        })
    }
}

/// Takes every pending one of `sigs`.
fn flush_sigs(sigs: &[i32]) {
    while wait_sig(sigs, Duration::ZERO).is_some() {}
}

fn fcntl(fd: RawFd, cmd: i32, arg: libc::c_long) -> Result<i32, i32> {
    // SAFETY: fcntl on our fd with an integer argument.
    let r = unsafe { libc::fcntl(fd, cmd, arg) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r)
    }
}

/// Reads whatever is queued on the (non-blocking) file.
fn drain_nb(t: &Tun) {
    let mut buf = vec![0u8; 2048];
    while t.read(&mut buf).is_ok() {}
}

/// `O_ASYNC`: with it on (`F_SETFL`, or `FIOASYNC`), each packet queued
/// for the reader signals the file's owner -- `SIGIO`, or `F_SETSIG`'s
/// signal with `si_code` `POLL_IN`, the band and the descriptor -- and with
/// it off nothing does. tun.c's `tun_chr_fasync()` makes the caller's
/// process the owner whatever `F_SETOWN` said.
pub fn t_fasync_sigio(n: Node) -> TestResult {
    let rt = libc::SIGRTMIN() + 2;
    let sigs = [libc::SIGIO, rt];
    block(&sigs);
    let t = Tun::create_nonblock(n.path, "rt-as0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up("rt-as0", "10.83.0.1", "10.83.0.2")?;
    let udp = std::net::UdpSocket::bind("10.83.0.1:0").map_err(|e| e.to_string())?;
    let send = || udp.send_to(b"sigio", "10.83.0.2:9").map(|_| ()).map_err(|e| format!("send: {e}"));
    let fd = t.fd();
    let pid = std::process::id() as libc::c_long;
    let fl = fcntl(fd, libc::F_GETFL, 0).map_err(|e| format!("F_GETFL: {e}"))? as libc::c_long;
    thread::sleep(Duration::from_millis(100));
    drain_nb(&t);
    flush_sigs(&sigs);

    // An owner but no O_ASYNC: no signal.
    fcntl(fd, libc::F_SETOWN, pid).map_err(|e| format!("F_SETOWN: {e}"))?;
    send()?;
    let got = wait_sig(&sigs, Duration::from_millis(300));
    check!(got.is_none(), "a signal without O_ASYNC: {got:?}");
    drain_nb(&t);

    // O_ASYNC: SIGIO for a queued packet.
    fcntl(fd, libc::F_SETFL, fl | libc::O_ASYNC as libc::c_long).map_err(|e| format!("F_SETFL O_ASYNC: {e}"))?;
    check!(fcntl(fd, libc::F_GETFL, 0).is_ok_and(|f| f & libc::O_ASYNC != 0), "O_ASYNC not kept");
    check!(fcntl(fd, libc::F_GETOWN, 0) == Ok(pid as i32), "owner {:?}", fcntl(fd, libc::F_GETOWN, 0));
    send()?;
    let got = wait_sig(&sigs, Duration::from_secs(3));
    check!(got.is_some_and(|s| s.signo == libc::SIGIO), "O_ASYNC: {got:?}, expected SIGIO");
    drain_nb(&t);
    flush_sigs(&sigs);

    // F_SETSIG: a queued real-time signal per packet, with the details.
    fcntl(fd, F_SETSIG, rt as libc::c_long).map_err(|e| format!("F_SETSIG: {e}"))?;
    for i in 0..3 {
        send()?;
        let got = wait_sig(&sigs, Duration::from_secs(3));
        let want = Sig { signo: rt, code: POLL_IN, band: BAND_IN, fd };
        check!(got == Some(want), "F_SETSIG, packet {i}: {got:?}, expected {want:?}");
        drain_nb(&t);
    }
    flush_sigs(&sigs);

    // O_ASYNC off (F_SETFL): none.
    fcntl(fd, libc::F_SETFL, fl).map_err(|e| format!("F_SETFL: {e}"))?;
    send()?;
    let got = wait_sig(&sigs, Duration::from_millis(300));
    check!(got.is_none(), "a signal after O_ASYNC was cleared: {got:?}");
    drain_nb(&t);

    // FIOASYNC on and off, the ioctl way to the same flag.
    let mut on: i32 = 1;
    ioctl_ptr(fd, libc::FIOASYNC, &mut on).map_err(|e| format!("FIOASYNC 1: {e}"))?;
    send()?;
    let got = wait_sig(&sigs, Duration::from_secs(3));
    check!(got.is_some_and(|s| s.signo == rt && s.code == POLL_IN), "FIOASYNC 1: {got:?}");
    drain_nb(&t);
    flush_sigs(&sigs);
    let mut off: i32 = 0;
    ioctl_ptr(fd, libc::FIOASYNC, &mut off).map_err(|e| format!("FIOASYNC 0: {e}"))?;
    send()?;
    let got = wait_sig(&sigs, Duration::from_millis(300));
    check!(got.is_none(), "a signal after FIOASYNC 0: {got:?}");

    // A file closed with O_ASYNC on leaves nothing behind (the VFS turns
    // it off first; kmemleak and KASAN watch the list entry).
    fcntl(fd, libc::F_SETFL, fl | libc::O_ASYNC as libc::c_long).map_err(|e| format!("F_SETFL O_ASYNC: {e}"))?;
    drop(t);
    Ok(())
}

/// `O_ASYNC` and write space: a poller that found the send buffer full
/// (`SOCKWQ_ASYNC_NOSPACE`) gets one `POLL_OUT` signal when the packets in
/// flight give their space back (tun.c's `tun_sock_write_space()`).
pub fn t_fasync_pollout(n: Node) -> TestResult {
    let rt = libc::SIGRTMIN() + 3;
    block(&[rt]);
    let t = Tun::create_nonblock(n.path, "rt-ao0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut sndbuf: i32 = 4096;
    ioctl_ptr(t.fd(), TUNSETSNDBUF, &mut sndbuf).map_err(|e| format!("TUNSETSNDBUF: {e}"))?;
    ptp_up("rt-ao0", "10.84.0.1", "10.84.0.2")?;
    // A listener, so the writes draw no ICMP errors back to the reader.
    let _sink = std::net::UdpSocket::bind("10.84.0.1:9").map_err(|e| e.to_string())?;
    // Packets wait in CPU 1's backlog while the writer runs on CPU 0: in
    // flight, holding send-buffer space.
    write_file("/sys/class/net/rt-ao0/queues/rx-0/rps_cpus", "2")?;
    pin_to_cpu(0)?;
    let fd = t.fd();
    let fl = fcntl(fd, libc::F_GETFL, 0).map_err(|e| format!("F_GETFL: {e}"))? as libc::c_long;
    fcntl(fd, F_SETSIG, rt as libc::c_long).map_err(|e| format!("F_SETSIG: {e}"))?;
    fcntl(fd, libc::F_SETFL, fl | libc::O_ASYNC as libc::c_long).map_err(|e| format!("F_SETFL O_ASYNC: {e}"))?;
    let pkt = udp_pkt([10, 84, 0, 2], 5000, [10, 84, 0, 1], 9);
    let (mut flagged, mut outs) = (0, 0);
    let t0 = Instant::now();
    while flagged < 5 && t0.elapsed() < Duration::from_secs(20) {
        match t.write(&pkt) {
            Ok(_) => continue,
            Err(libc::EAGAIN) => {}
            Err(e) => return Err(format!("write: errno {e}")),
        }
        // Full: a poll that finds no room flags the socket.
        if poll_fd(fd, libc::POLLOUT, Duration::ZERO).is_ok_and(|ev| ev & libc::POLLOUT != 0) {
            continue;
        }
        flagged += 1;
        match wait_sig(&[rt], Duration::from_secs(5)) {
            Some(s) if s == (Sig { signo: rt, code: POLL_OUT, band: BAND_OUT, fd }) => outs += 1,
            other => return Err(format!("after a full poll: {other:?}, expected POLL_OUT on fd {fd}")),
        }
    }
    write_file("/sys/class/net/rt-ao0/queues/rx-0/rps_cpus", "0")?;
    println!("# {}: {flagged} full polls, {outs} POLL_OUT signals", n.driver);
    check!(flagged > 0, "the send buffer never filled");
    Ok(())
}
