//! Queue files passed over a Unix socket and inherited across fork, and
//! the helper subcommands on the other side (`rtun fd-client`, `rtun
//! block-read`).

use super::*;

/// File descriptors passed over a unix socket and inherited across fork
/// and exec: the other process reads and writes the same queue, the
/// device stays while any copy is open, and goes with the last one.
pub fn t_fd_passing_fork(n: Node) -> TestResult {
    use std::os::unix::net::UnixListener;
    let path = "/tmp/rtun-fd.sock";
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path).map_err(|e| e.to_string())?;
    for how in ["scm_rights", "inherit"] {
        let t = Tun::create(n.path, "rt-fd0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
        ptp_up("rt-fd0", "10.87.0.1", "10.87.0.2")?;
        let child = if how == "scm_rights" {
            let child = Command::new("/bin/rtun")
                .args(["fd-client", "recv", path])
                .stdin(Stdio::piped())
                .spawn()
                .map_err(|e| e.to_string())?;
            let (conn, _) = listener.accept().map_err(|e| e.to_string())?;
            send_fd(conn.as_raw_fd(), t.fd())?;
            child
        } else {
            // SAFETY: Clearing FD_CLOEXEC on our fd, so the child inherits it.
            unsafe { libc::fcntl(t.fd(), libc::F_SETFD, 0) };
            Command::new("/bin/rtun")
                .args(["fd-client", "fd", &t.fd().to_string()])
                .stdin(Stdio::piped())
                .spawn()
                .map_err(|e| e.to_string())?
        };
        // Our copy closes; the child's keeps the device. (The child holds
        // its copy until its stdin closes: `wait_with_output` closes it.)
        drop(t);
        check!(link_exists("rt-fd0"), "{how}: the device went with our copy of the fd");
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        check!(out.status.success(), "{how}: the child failed: {}", out.status);
        let t0 = Instant::now();
        while link_exists("rt-fd0") {
            check!(t0.elapsed() < Duration::from_secs(3), "{how}: the device outlived the last fd");
            thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = std::fs::remove_file(path);
    Ok(())
}

/// Sends `fd` over the unix socket `sock` (SCM_RIGHTS).
pub fn send_fd(sock: RawFd, fd: RawFd) -> TestResult {
    let byte = [0u8; 1];
    let mut iv = iov(&byte);
    let mut control = [0u64; 4];
    // SAFETY: Zeroed, filled in; one cmsg carrying one fd.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iv;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(4) as usize;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(4) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<i32>(), fd);
        check!(libc::sendmsg(sock, &msg, 0) == 1, "sendmsg: errno {}", errno());
    }
    Ok(())
}

/// Receives one fd over the unix socket `sock`.
pub fn recv_fd(sock: RawFd) -> Result<RawFd, String> {
    let mut byte = [0u8; 1];
    let mut iv = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut control = [0u64; 4];
    // SAFETY: Zeroed, filled in; reading back one fd.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iv;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        check!(libc::recvmsg(sock, &mut msg, 0) == 1, "recvmsg: errno {}", errno());
        let c = libc::CMSG_FIRSTHDR(&msg);
        check!(!c.is_null() && (*c).cmsg_type == libc::SCM_RIGHTS, "no SCM_RIGHTS");
        Ok(std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<i32>()))
    }
}

/// `rtun fd-client recv SOCKET | fd N`: gets an attached queue fd (over
/// the unix socket, or inherited as fd N), checks TUNGETIFF names rt-fd0,
/// round-trips an ICMP echo through it, then holds it until its stdin
/// closes (the parent checks the device meanwhile).
pub fn fd_client(how: &str, arg: &str) -> Result<String, String> {
    let fd = if how == "recv" {
        let s = std::os::unix::net::UnixStream::connect(arg).map_err(|e| e.to_string())?;
        recv_fd(s.as_raw_fd())?
    } else {
        arg.parse().map_err(|_| format!("bad fd {arg}"))?
    };
    let mut ifr = IfReq::new("", 0);
    ioctl_ptr(fd, TUNGETIFF, &mut ifr).map_err(|e| format!("TUNGETIFF: errno {e}"))?;
    check!(ifr.name() == "rt-fd0", "TUNGETIFF: {}", ifr.name());
    let req = pkt::ipv4([10, 87, 0, 2], [10, 87, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 0x87, 1, b"fd"));
    check!(fd_write(fd, &req) == Ok(req.len()), "write");
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if poll_fd(fd, libc::POLLIN, Duration::from_millis(200)).is_ok_and(|e| e & libc::POLLIN != 0) {
            let n = fd_read(fd, &mut buf).map_err(|e| format!("read: errno {e}"))?;
            if pkt::parse_ipv4(&buf[..n]).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.1 == 0x87) {
                // Keep the fd (and so the device) until the parent closes
                // our stdin: it checks the device outlives its own copy.
                let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
                return Ok(format!("fd {fd} ({how}): echo answered"));
            }
        }
    }
    Err("no echo reply".into())
}

/// `rtun block-read NODE NAME`: attaches a queue of multi-queue TUN device
/// NAME and blocks in a read (to be killed).
pub fn block_read(node: &str, name: &str) -> Result<String, String> {
    let t = Tun::create(node, name, IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    let mut buf = [0u8; 2048];
    let r = t.read(&mut buf);
    Err(format!("the read returned: {r:?}"))
}
