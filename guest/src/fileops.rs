//! The queue file's semantics beyond read, write and the tun ioctls, each
//! run against tun and rust_tun with the same expectations (issue 18):
//! `O_ASYNC` signals (`tun_chr_fasync`, `kill_fasync` on transmit and on
//! write space), the file position a read leaves (`ki_pos`), and the
//! socket that stands for the file.
//!
//! The socket's test, through kprobes, is in fileops/sockfile.rs.

use super::*;

pub mod sockfile;

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

/// The `pos:` line of the file's `/proc/self/fdinfo` entry (`f_pos`).
fn fd_pos(fd: RawFd) -> Result<i64, String> {
    let s = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).map_err(|e| e.to_string())?;
    s.lines()
        .find_map(|l| l.strip_prefix("pos:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no pos in fdinfo: {s}"))
}

/// The file position: tun.c's `tun_chr_read_iter()` sets `iocb->ki_pos`
/// to what a read returned, so `f_pos` (fdinfo `pos:`) is the last read's
/// length, not a sum; writes leave it; `pread`/`pwrite` work (the file is
/// no stream) and leave it too; `lseek` is `ESPIPE` (no `llseek`).
pub fn t_read_pos(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-kp0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up("rt-kp0", "10.85.0.1", "10.85.0.2")?;
    let udp = std::net::UdpSocket::bind("10.85.0.1:0").map_err(|e| e.to_string())?;
    let fd = t.fd();
    thread::sleep(Duration::from_millis(100));
    drain_nb(&t);
    check!(fd_pos(fd)? == 0, "pos after open {}", fd_pos(fd)?);
    let mut buf = vec![0u8; 2048];
    // A packet of `len` payload bytes, read: tun_pi + IPv4 + UDP + payload.
    let read_one = |len: usize, buf: &mut [u8]| -> Result<usize, String> {
        udp.send_to(&vec![7u8; len], "10.85.0.2:9").map_err(|e| format!("send: {e}"))?;
        t.read_timeout(buf, Duration::from_secs(3)).map_err(|e| format!("read: errno {e}"))
    };
    let a = read_one(100, &mut buf)?;
    check!(a == 4 + 20 + 8 + 100, "read {a}");
    check!(fd_pos(fd)? == a as i64, "pos after a {a}-byte read: {}", fd_pos(fd)?);
    let b = read_one(10, &mut buf)?;
    check!(fd_pos(fd)? == b as i64, "pos after a {b}-byte read (the last read's length): {}", fd_pos(fd)?);
    // A read cut short by the buffer: the packet's size is returned (and
    // is the position), capped at the buffer.
    let c = read_one(300, &mut buf[..50])?;
    check!(c == 50 && fd_pos(fd)? == 50, "short read {c}, pos {}", fd_pos(fd)?);
    // Writes do not move it.
    let ping = pkt::ipv4([10, 85, 0, 2], [10, 85, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 3, 1, b"pos"));
    let mut w = vec![0, 0, 8, 0];
    w.extend_from_slice(&ping);
    check!(t.write(&w) == Ok(w.len()), "write");
    check!(fd_pos(fd)? == 50, "pos after a write {}", fd_pos(fd)?);
    // pread and pwrite: served, the position untouched (the drain reads
    // the echo reply: the position is that read's length).
    thread::sleep(Duration::from_millis(100));
    drain_nb(&t);
    let p = fd_pos(fd)?;
    check!(p == 35, "pos after reading the 35-byte echo reply: {p}");
    udp.send_to(&[1u8; 20], "10.85.0.2:9").map_err(|e| format!("send: {e}"))?;
    check!(poll_fd(fd, libc::POLLIN, Duration::from_secs(3)).is_ok_and(|ev| ev & libc::POLLIN != 0), "no packet to pread");
    // SAFETY: Our fd and buffer.
    let r = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 12345) };
    check!(r == (4 + 20 + 8 + 20) as isize, "pread: {r} (errno {})", errno());
    check!(fd_pos(fd)? == p, "pos after pread {}", fd_pos(fd)?);
    // SAFETY: Our fd and buffer.
    let r = unsafe { libc::pwrite(fd, w.as_ptr().cast(), w.len(), 777) };
    check!(r == w.len() as isize, "pwrite: {r} (errno {})", errno());
    check!(fd_pos(fd)? == p, "pos after pwrite {}", fd_pos(fd)?);
    // SAFETY: lseek on our fd.
    let r = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    check!(r == -1 && errno() == libc::ESPIPE, "lseek: {r} (errno {})", errno());
    Ok(())
}

/// `SIOCGIFHWADDR` on the queue file: tun.c copies back the caller's own
/// `ifreq` with `dev_get_mac_address()`'s work in `ifr_hwaddr` -- the
/// family (`dev->type`) and `addr_len` bytes of `sa_data`, or 14 zero
/// bytes for a device without an address (TUN); the name, the rest of
/// `sa_data` and the union's tail stay the caller's. A detached queue
/// still answers; a file without a device is `EBADFD`.
pub fn t_hwaddr_bytes(n: Node) -> TestResult {
    let filled = IfReqAddr { name: *b"zz-not-a-name\0\0\0", family: 0x7777, data: [0xaa; 14], pad: [0xbb; 8] };
    let get = |fd: RawFd| -> Result<IfReqAddr, i32> {
        let mut r = filled;
        ioctl_ptr(fd, SIOCGIFHWADDR, &mut r).map(|_| r)
    };
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    expect_errno!(get(f.as_raw_fd()), libc::EBADFD, "SIOCGIFHWADDR before TUNSETIFF");
    drop(f);

    let mac = [2, 0x11, 0x22, 0x33, 0x44, 0x66];
    let q = mq_open(n.path, "rt-hb0", IFF_TAP | IFF_NO_PI, 2)?;
    sh(&format!("ip link set rt-hb0 address {}", mac.map(|b| format!("{b:02x}")).join(":")))?;
    let mut want = filled;
    want.family = 1; // ARPHRD_ETHER
    want.data[..6].copy_from_slice(&mac);
    let got = get(q[0].fd());
    check!(got == Ok(want), "TAP: {got:?}, expected {want:?}");
    // A detached queue still has its device.
    let mut ifr = IfReq::new("", IFF_DETACH_QUEUE);
    ioctl_ptr(q[1].fd(), TUNSETQUEUE, &mut ifr).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    let got = get(q[1].fd());
    check!(got == Ok(want), "detached queue: {got:?}, expected {want:?}");

    let t = Tun::create(n.path, "rt-hb1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut want = filled;
    want.family = 0xfffe; // ARPHRD_NONE
    want.data = [0; 14];
    let got = get(t.fd());
    check!(got == Ok(want), "TUN: {got:?}, expected {want:?}");
    // The device deleted under the file: no device, EBADFD.
    sh("ip link del rt-hb1")?;
    expect_errno!(get(t.fd()), libc::EBADFD, "SIOCGIFHWADDR after the device went");
    Ok(())
}

/// `TUNSETQUEUE` `IFF_ATTACH_QUEUE` on a TAP with a classic BPF filter
/// (`TUNATTACHFILTER`): tun.c's `tun_attach()` re-attaches the device's
/// filter (`skip_filter` false) and, that succeeding, returns at once
/// (`if (!err) goto out`): `TUNSETQUEUE` returns 0 and the queue stays
/// detached (`TUNGETIFF` still says `IFF_DETACH_QUEUE`, the device keeps
/// one queue). Deliberate difference: rust_tun attaches it, with the
/// filter, as with `TUNSETIFF` (rst, "Deliberate differences").
pub fn t_queue_attach_filter(n: Node) -> TestResult {
    // With tun_pi: IFF_NOFILTER is IFF_NO_PI's bit.
    let q = mq_open(n.path, "rt-qf0", IFF_TAP, 2)?;
    let prog = [bpf_ret(0xffff)];
    let mut f = SockFprog { len: 1, filter: prog.as_ptr() };
    ioctl_ptr(q[0].fd(), TUNATTACHFILTER, &mut f).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    let flags = |t: &Tun| t.getiff().map(|(_, f)| f);
    check!(flags(&q[1]).is_ok_and(|f| f & (IFF_NOFILTER | IFF_DETACH_QUEUE) == 0), "queue 1 {:?}", flags(&q[1]));
    check!(setqueue(&q[1], IFF_DETACH_QUEUE) == Ok(0), "detach");
    check!(tx_queues("rt-qf0") == 1, "one queue after the detach");
    check!(setqueue(&q[1], IFF_ATTACH_QUEUE) == Ok(0), "attach: {:?}", setqueue(&q[1], IFF_ATTACH_QUEUE));
    let got = flags(&q[1]);
    if n.module == "tun" {
        check!(got.is_ok_and(|f| f & IFF_DETACH_QUEUE != 0), "tun.c: the queue stays detached: {got:?}");
        check!(tx_queues("rt-qf0") == 1, "tun.c: still one queue");
    } else {
        check!(got.is_ok_and(|f| f & (IFF_DETACH_QUEUE | IFF_NOFILTER) == 0), "attached, with the filter: {got:?}");
        check!(tx_queues("rt-qf0") == 2, "two queues after the attach");
    }
    Ok(())
}

/// `/dev/kmsg` opened at its end: the messages logged from now on.
struct Kmsg(std::fs::File);

impl Kmsg {
    fn open() -> Result<Kmsg, String> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/dev/kmsg")
            .map_err(|e| format!("/dev/kmsg: {e}"))?;
        // SAFETY: lseek on our fd.
        unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_END) };
        Ok(Kmsg(f))
    }

    /// The text of each message logged since the last call.
    fn lines(&mut self) -> Vec<String> {
        use std::io::Read;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = self.0.read(&mut buf) {
            let rec = String::from_utf8_lossy(&buf[..n]).into_owned();
            if let Some((_, text)) = rec.split_once(';') {
                out.push(text.lines().next().unwrap_or("").to_string());
            }
        }
        out
    }
}

/// `TUNSETDEBUG` sets `tun->msg_enable` (ethtool's msglvl too); with
/// `NETIF_MSG_DRV` on, tun.c logs each ioctl on the device (`netif_info`:
/// "DEV: tun_chr_ioctl cmd N") and what the control ioctls did; off, it
/// logs nothing.
pub fn t_tun_debug(n: Node) -> TestResult {
    const NETIF_MSG_DRV: libc::c_ulong = 1;
    let t = Tun::create(n.path, "rt-db0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut k = Kmsg::open()?;
    let ours = |lines: Vec<String>| -> Vec<String> { lines.into_iter().filter(|l| l.starts_with("rt-db0: ")).collect() };
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    let quiet = ours(k.lines());
    check!(quiet.is_empty(), "messages without TUNSETDEBUG: {quiet:?}");

    ioctl_val(t.fd(), TUNSETDEBUG, NETIF_MSG_DRV).map_err(|e| format!("TUNSETDEBUG: {e}"))?;
    check!(ethtool_msglvl("rt-db0") == Ok(1), "msglvl {:?}", ethtool_msglvl("rt-db0"));
    let _ = k.lines();
    ioctl_val(t.fd(), TUNSETNOCSUM, 1).map_err(|e| format!("TUNSETNOCSUM: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    ioctl_val(t.fd(), TUNSETOWNER, 1234).map_err(|e| format!("TUNSETOWNER: {e}"))?;
    ioctl_val(t.fd(), TUNSETGROUP, 4321).map_err(|e| format!("TUNSETGROUP: {e}"))?;
    ioctl_val(t.fd(), TUNSETLINK, 1).map_err(|e| format!("TUNSETLINK: {e}"))?;
    sh("ip link set rt-db0 up")?;
    expect_errno!(ioctl_val(t.fd(), TUNSETLINK, 1), libc::EBUSY, "TUNSETLINK while up");
    let cmd = |c: u64| format!("rt-db0: tun_chr_ioctl cmd {c}");
    let want = [
        cmd(TUNSETNOCSUM),
        "rt-db0: ignored: set checksum disabled".to_string(),
        cmd(TUNSETPERSIST),
        "rt-db0: persist enabled".to_string(),
        cmd(TUNSETPERSIST),
        "rt-db0: persist disabled".to_string(),
        cmd(TUNSETOWNER),
        "rt-db0: owner set to 1234".to_string(),
        cmd(TUNSETGROUP),
        "rt-db0: group set to 4321".to_string(),
        cmd(TUNSETLINK),
        "rt-db0: linktype set to 1".to_string(),
        cmd(TUNSETLINK),
        "rt-db0: Linktype set failed because interface is up".to_string(),
    ];
    let got = ours(k.lines());
    check!(got == want, "TUNSETDEBUG NETIF_MSG_DRV: logged {got:#?}, expected {want:#?}");

    // Off again: the TUNSETDEBUG itself is the last one logged.
    ioctl_val(t.fd(), TUNSETDEBUG, 0).map_err(|e| format!("TUNSETDEBUG 0: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    let got = ours(k.lines());
    check!(got == [cmd(TUNSETDEBUG)], "after TUNSETDEBUG 0: {got:?}");
    Ok(())
}
