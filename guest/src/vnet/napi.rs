//! NAPI queues (`IFF_NAPI`, `IFF_NAPI_FRAGS`): writes through NAPI, frags
//! and their frame limit, a device deleted during a frags write (held in a
//! userfaultfd page fault), and deletion under many writers.

use super::*;

/// `IFF_NAPI`: writes go through the queue's NAPI context (GRO) to local
/// sockets, every one delivered and counted; `TUNGETIFF` reports the flag;
/// a detached queue's writes fail with `EBUSY` (nothing delivered, not a
/// drop) and work again once it is attached; the device statistics
/// balance; closing queues with packets written leaves nothing behind.
pub fn t_napi(n: Node) -> TestResult {
    let flags = IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE | IFF_NAPI;
    let q0 = Tun::create(n.path, "rt-napi0", flags).map_err(|e| format!("TUNSETIFF IFF_NAPI: {e}"))?;
    let q1 = Tun::create(n.path, "rt-napi0", flags).map_err(|e| format!("second queue: {e}"))?;
    let (_, got) = q0.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
    check!(got & IFF_NAPI != 0, "TUNGETIFF {got:#x} lacks IFF_NAPI");
    ptp_up("rt-napi0", "10.87.0.1", "10.87.0.2")?;
    let sock = std::net::UdpSocket::bind("10.87.0.1:9000").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let rx0 = stat("rt-napi0", "rx_packets")?;
    let (me, peer) = ([10, 87, 0, 1], [10, 87, 0, 2]);
    let count = 300u32;
    let mut buf = vec![0u8; 2048];
    for i in 0..count {
        let data = i.to_be_bytes().repeat(1 + (i % 50) as usize);
        let p = pkt::ipv4(peer, me, pkt::IPPROTO_UDP, &pkt::udp(5555, 9000, &data));
        let q = if i % 2 == 0 { &q0 } else { &q1 };
        check!(q.write(&p) == Ok(p.len()), "write {i}: {:?}", q.write(&p));
        let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("datagram {i}: {e}"))?;
        check!(buf[..m] == data[..], "datagram {i}: {m} bytes, not the payload");
    }
    check!(stat("rt-napi0", "rx_packets")? - rx0 == u64::from(count), "rx_packets moved by {}", stat("rt-napi0", "rx_packets")? - rx0);

    setqueue(&q1, IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    let p = pkt::ipv4(peer, me, pkt::IPPROTO_UDP, &pkt::udp(5555, 9000, b"detached"));
    expect_errno!(q1.write(&p), libc::EBUSY, "write on a detached NAPI queue");
    check!(sock.recv_from(&mut buf).is_err(), "a datagram from the detached queue arrived");
    setqueue(&q1, IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
    check!(q1.write(&p) == Ok(p.len()), "write after re-attach");
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("datagram after re-attach: {e}"))?;
    check!(&buf[..m] == b"detached", "datagram after re-attach: {m} bytes");
    check!(stat("rt-napi0", "rx_dropped")? == 0, "rx_dropped {}", stat("rt-napi0", "rx_dropped")?);

    // A burst written faster than the socket reads, then every file closed.
    for _ in 0..100 {
        let _ = q0.write(&p);
    }
    drop((q0, q1));
    check!(!link_exists("rt-napi0"), "device left after closing both NAPI queues");
    Ok(())
}

/// `IFF_NAPI_FRAGS` (TAP, with `IFF_NAPI`, as root): each write's skb is
/// built in the queue's NAPI context as the writer's iovec is laid out
/// (the first segment linear, each further one a page fragment) and handed
/// to GRO at once. Frames written whole or split over segments reach a
/// local socket intact; an empty or over-page segment is `EINVAL`, more
/// segments than an skb has fragments `EMSGSIZE`, each counted as a drop;
/// `TUNGETIFF` reports both flags.
pub fn t_napi_frags(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-nf0", IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS)
        .map_err(|e| format!("TUNSETIFF IFF_NAPI_FRAGS: {e}"))?;
    let (_, got) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
    check!(got & (IFF_NAPI | IFF_NAPI_FRAGS) == IFF_NAPI | IFF_NAPI_FRAGS, "TUNGETIFF {got:#x}");
    sh("ip addr add 10.89.0.1/24 dev rt-nf0 && ip link set rt-nf0 up")?;
    let mac: Vec<u8> = sysfs("rt-nf0", "address").split(':').filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
    check!(mac.len() == 6, "address {:?}", sysfs("rt-nf0", "address"));
    let dst: [u8; 6] = mac[..6].try_into().unwrap();
    let sock = std::net::UdpSocket::bind("10.89.0.1:9200").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let frame = |data: &[u8]| {
        pkt::eth(dst, [2, 0, 0, 0, 0, 9], pkt::ETH_P_IP, &pkt::ipv4([10, 89, 0, 2], [10, 89, 0, 1], pkt::IPPROTO_UDP, &pkt::udp(5555, 9200, data)))
    };
    let rx0 = stat("rt-nf0", "rx_packets")?;
    let drop0 = stat("rt-nf0", "rx_dropped")?;
    let mut buf = vec![0u8; 4096];

    // Whole, in one segment.
    let data: Vec<u8> = (0..1200u32).map(|i| (i * 3) as u8).collect();
    let f = frame(&data);
    check!(t.write(&f) == Ok(f.len()), "one-segment write: {:?}", t.write(&f));
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("one-segment datagram: {e}"))?;
    check!(buf[..m] == data[..], "one-segment datagram: {m} bytes");

    // Headers, then the payload over two page fragments.
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 7 + 1) as u8).collect();
    let f = frame(&data);
    let hl = 14 + 20 + 8;
    let iov = [behaviour::iov(&f[..hl]), behaviour::iov(&f[hl..hl + 2000]), behaviour::iov(&f[hl + 2000..])];
    check!(behaviour::writev(t.fd(), &iov) == Ok(f.len()), "three-segment writev: {:?}", behaviour::writev(t.fd(), &iov));
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("three-segment datagram: {e}"))?;
    check!(buf[..m] == data[..], "three-segment datagram: {m} bytes");
    check!(stat("rt-nf0", "rx_packets")? == rx0 + 2, "rx_packets moved by {}", stat("rt-nf0", "rx_packets")? - rx0);

    // Malformed layouts.
    let empty = [behaviour::iov(&f[..hl]), behaviour::iov(&f[hl..hl]), behaviour::iov(&f[hl..])];
    expect_errno!(behaviour::writev(t.fd(), &empty), libc::EINVAL, "an empty segment");
    let big = vec![0u8; 5000];
    let over = [behaviour::iov(&f[..hl]), behaviour::iov(&big)];
    expect_errno!(behaviour::writev(t.fd(), &over), libc::EINVAL, "a segment over a page");
    let small = [1u8; 8];
    let mut many = vec![behaviour::iov(&f[..hl])];
    many.extend((0..18).map(|_| behaviour::iov(&small)));
    expect_errno!(behaviour::writev(t.fd(), &many), libc::EMSGSIZE, "19 segments");
    check!(stat("rt-nf0", "rx_dropped")? == drop0 + 3, "rx_dropped moved by {}", stat("rt-nf0", "rx_dropped")? - drop0);
    check!(sock.recv_from(&mut buf).is_err(), "a malformed write was delivered");
    // And the queue still works.
    let f = frame(b"after");
    check!(t.write(&f) == Ok(f.len()), "write after the errors");
    let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("datagram after the errors: {e}"))?;
    check!(&buf[..m] == b"after", "datagram after the errors: {m} bytes");
    Ok(())
}

/// A user page whose first touch faults until the test says so
/// (userfaultfd, `UFFDIO_REGISTER_MODE_MISSING`): a write from it sleeps in
/// the kernel's copy for as long as the test wants.
pub struct SlowPage {
    uffd: OwnedFd,
    addr: *mut u8,
}

// The `uffdio_*` structs of <linux/userfaultfd.h> and their ioctls.
#[repr(C)]
pub struct UffdioApi {
    api: u64,
    features: u64,
    ioctls: u64,
}

#[repr(C)]
pub struct UffdioRange {
    start: u64,
    len: u64,
}

#[repr(C)]
pub struct UffdioRegister {
    range: UffdioRange,
    mode: u64,
    ioctls: u64,
}

#[repr(C)]
pub struct UffdioCopy {
    dst: u64,
    src: u64,
    len: u64,
    mode: u64,
    copy: i64,
}

pub const UFFD_API: u64 = 0xaa;

pub const UFFDIO_API: u64 = 0xc018_aa3f;

pub const UFFDIO_REGISTER: u64 = 0xc020_aa00;

pub const UFFDIO_COPY: u64 = 0xc028_aa03;

pub const UFFDIO_REGISTER_MODE_MISSING: u64 = 1;

pub const UFFD_EVENT_PAGEFAULT: u8 = 0x12;

pub const PAGE: usize = 4096;

impl SlowPage {
    /// `Err("SKIP: ...")` on a kernel without userfaultfd.
    pub(crate) fn new() -> Result<SlowPage, String> {
        // SAFETY: A syscall with flags only.
        let fd = unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | libc::O_NONBLOCK) };
        if fd < 0 {
            let e = errno();
            if e == libc::ENOSYS {
                skip!("kernel without CONFIG_USERFAULTFD");
            }
            return Err(format!("userfaultfd: errno {e}"));
        }
        // SAFETY: A new fd of ours.
        let uffd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
        let mut api = UffdioApi { api: UFFD_API, features: 0, ioctls: 0 };
        ioctl_ptr(uffd.as_raw_fd(), UFFDIO_API, &mut api).map_err(|e| format!("UFFDIO_API: errno {e}"))?;
        // SAFETY: A fresh anonymous mapping of one page.
        let addr = unsafe {
            libc::mmap(std::ptr::null_mut(), PAGE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        check!(addr != libc::MAP_FAILED, "mmap: errno {}", errno());
        let mut reg = UffdioRegister {
            range: UffdioRange { start: addr as u64, len: PAGE as u64 },
            mode: UFFDIO_REGISTER_MODE_MISSING,
            ioctls: 0,
        };
        ioctl_ptr(uffd.as_raw_fd(), UFFDIO_REGISTER, &mut reg).map_err(|e| format!("UFFDIO_REGISTER: errno {e}"))?;
        Ok(SlowPage { uffd, addr: addr as *mut u8 })
    }

    /// Waits for the page's first fault (a thread is now asleep on it).
    pub(crate) fn wait_fault(&self, timeout: Duration) -> Result<(), String> {
        let r = poll_fd(self.uffd.as_raw_fd(), libc::POLLIN, timeout).map_err(|e| format!("poll uffd: errno {e}"))?;
        check!(r & libc::POLLIN != 0, "no fault on the slow page within {timeout:?}");
        let mut msg = [0u8; 32];
        let n = fd_read(self.uffd.as_raw_fd(), &mut msg).map_err(|e| format!("read uffd: errno {e}"))?;
        check!(n == 32 && msg[0] == UFFD_EVENT_PAGEFAULT, "uffd message {:?}", &msg[..n]);
        Ok(())
    }

    /// Resolves the fault with `data` (at most a page): the sleeper goes on.
    pub(crate) fn release(&self, data: &[u8]) -> Result<(), String> {
        let mut page = vec![0u8; PAGE];
        page[..data.len()].copy_from_slice(data);
        let mut c = UffdioCopy { dst: self.addr as u64, src: page.as_ptr() as u64, len: PAGE as u64, mode: 0, copy: 0 };
        ioctl_ptr(self.uffd.as_raw_fd(), UFFDIO_COPY, &mut c).map_err(|e| format!("UFFDIO_COPY: errno {e}"))?;
        Ok(())
    }
}

impl SlowPage {
    /// The page's address (its first touch faults until [`SlowPage::release`]).
    pub(crate) fn addr(&self) -> *mut u8 {
        self.addr
    }
}

impl Drop for SlowPage {
    fn drop(&mut self) {
        // SAFETY: Our mapping; nothing refers to it any more.
        unsafe { libc::munmap(self.addr as *mut _, PAGE) };
    }
}

pub fn wait_gone(path: &str, timeout: Duration) -> bool {
    let end = Instant::now() + timeout;
    while std::path::Path::new(path).exists() {
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Whether to keep tun.ko out of its own `IFF_NAPI_FRAGS` use-after-free
/// (the C node, unless `RTUN_TUN_UAF=1` asks for the upstream report's
/// reproducer): it corrupts memory where no KASAN catches it.
fn tun_uaf_guarded(n: &Node) -> bool {
    n.label == "tun" && std::env::var("RTUN_TUN_UAF").as_deref() != Ok("1")
}

/// Issue 18, bug 1: an `IFF_NAPI_FRAGS` write whose second segment faults
/// (slowly: userfaultfd) while the device is deleted. The delete runs the
/// device's `ndo_uninit` (the NAPI context's `__netif_napi_del()`, which
/// frees the context's frags skb) and then waits for the writer's device
/// reference; the fault is released only once the device's sysfs directory
/// (removed after `ndo_uninit`) is gone. The writer must then find the
/// device down or its context gone (`EIO`, `EBUSY`) and touch no freed
/// memory: on the code before the fix it copied into the skb the delete
/// had freed (KASAN: use-after-free in `skb_copy_datagram_from_iter`).
/// Needs userfaultfd (the debug kernel, and Debian's). tun.c 6.12 and
/// 7.3 have the same race: on the C node this is the upstream report's
/// reproducer (Documentation/rust_tun.rst, "IFF_NAPI_FRAGS and device
/// deletion"), which the suites do not run: without KASAN the C tun's
/// write lands in the freed skb silently (on Debian's 7.3.4 kernel, the
/// first to have userfaultfd and C tun in one suite, the write returned
/// `EIO` and an `ip` two tests later died of a NULL `NETLINK_CB(skb).sk`
/// in `netlink_ack()`). By hand: `RTUN_TUN_UAF=1` with the filter
/// `napi_frags_delete_during_write`, on the debug kernel.
pub fn t_napi_frags_delete_during_write(n: Node) -> TestResult {
    if tun_uaf_guarded(&n) {
        skip!("tun.c's own use-after-free (the upstream report): it corrupts memory; RTUN_TUN_UAF=1 runs it");
    }
    let slow = SlowPage::new()?;
    let name = "rt-nfd0";
    let t = Tun::create(n.path, name, IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS)
        .map_err(|e| format!("TUNSETIFF IFF_NAPI_FRAGS: {e}"))?;
    sh(&format!("ip addr add 10.89.1.1/24 dev {name} && ip link set {name} up"))?;
    let payload = 600usize;
    let head = pkt::eth(
        [0xff; 6],
        [2, 0, 0, 0, 0, 9],
        pkt::ETH_P_IP,
        &pkt::ipv4([10, 89, 1, 2], [10, 89, 1, 1], pkt::IPPROTO_UDP, &pkt::udp(5555, 9201, &vec![0u8; payload])),
    );
    let hl = head.len() - payload;
    let fd = t.fd();
    let (head_addr, slow_addr) = (head.as_ptr() as usize, slow.addr as usize);
    let writer = std::thread::spawn(move || {
        let iov = [
            libc::iovec { iov_base: head_addr as *mut _, iov_len: hl },
            libc::iovec { iov_base: slow_addr as *mut _, iov_len: payload },
        ];
        behaviour::writev(fd, &iov)
    });
    slow.wait_fault(Duration::from_secs(5))?;
    let del = std::thread::spawn(move || sh(&format!("ip link del {name}")));
    let gone = wait_gone(&format!("/sys/class/net/{name}"), Duration::from_secs(10));
    // Released whatever happened, so that the writer and the delete end.
    slow.release(&[0x5a; 600])?;
    let wrote = writer.join().map_err(|_| "writer panicked".to_string())?;
    del.join().map_err(|_| "ip link del panicked".to_string())??;
    check!(gone, "{name}'s sysfs directory still there 10 s after ip link del");
    check!(
        matches!(wrote, Err(libc::EIO) | Err(libc::EBUSY)),
        "the write across the delete returned {wrote:?}, expected EIO or EBUSY"
    );
    // The file is still usable for what a file without a device can do.
    expect_errno!(t.write(&head), libc::EBADFD, "a write after the delete");
    Ok(())
}

/// Issue 18, bug 2: deleting a device while writers loop on it (plain and
/// `IFF_NAPI_FRAGS` TAPs). Every write either delivers, or fails as a write
/// to a device going away fails (`EIO` while it goes down, `EBADFD` once
/// it is gone, `EBUSY` for a frags context being deleted); the writers end,
/// the device goes, nothing warns. On the old code the `IFF_UP` test came
/// before the RCU read section, so a write could deliver after
/// unregistration's `synchronize_net()`: a window too narrow to hit on
/// purpose, which this loop (under the debug kernel's lockdep, KASAN and
/// DEBUG_NET) exercises on every run.
///
/// On the C node the `IFF_NAPI_FRAGS` rounds are tun.c's own
/// use-after-free (Documentation/rust_tun.rst, "IFF_NAPI_FRAGS and device
/// deletion"): a writer holding `napi->skb` while the delete frees it. A
/// writer need not be slow to hit it, only to be inside the frags path
/// when the delete comes, which two looping writers are on every round;
/// on Debian's 7.3 kernel (no KASAN) it corrupted memory silently and the
/// suite's next tests failed (vhost-net frames with wrong bytes) until the
/// guest oopsed (CI of 2026-12-05). So the C node runs the plain rounds
/// only; `RTUN_TUN_UAF=1` runs all four, as for
/// `napi_frags_delete_during_write`. rust_tun runs all four everywhere.
pub fn t_delete_under_writers(n: Node) -> TestResult {
    let tun_uaf = tun_uaf_guarded(&n);
    if tun_uaf {
        println!("# C tun: the IFF_NAPI_FRAGS rounds are tun.c's own use-after-free (RTUN_TUN_UAF=1 runs them)");
    }
    for (round, extra) in [(0, 0u16), (1, IFF_NAPI | IFF_NAPI_FRAGS), (2, 0), (3, IFF_NAPI | IFF_NAPI_FRAGS)] {
        if tun_uaf && extra & IFF_NAPI_FRAGS != 0 {
            continue;
        }
        let name = format!("rt-duw{round}");
        let t = Tun::create(n.path, &name, IFF_TAP | IFF_NO_PI | extra).map_err(|e| format!("TUNSETIFF {name}: {e}"))?;
        sh(&format!("ip addr add 10.89.2.1/24 dev {name} && ip link set {name} up"))?;
        let frame = pkt::eth(
            [0xff; 6],
            [2, 0, 0, 0, 0, 9],
            pkt::ETH_P_IP,
            &pkt::ipv4([10, 89, 2, 2], [10, 89, 2, 1], pkt::IPPROTO_UDP, &pkt::udp(5555, 9, &[7u8; 300])),
        );
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let delivered: std::sync::Arc<[std::sync::atomic::AtomicU64; 2]> = Default::default();
        let writers: Vec<_> = (0..2)
            .map(|i| {
                let fd = t.fd();
                let f = frame.clone();
                let stop = stop.clone();
                let delivered = delivered.clone();
                std::thread::spawn(move || {
                    let (mut ok, mut bad) = (0u64, Vec::new());
                    while !stop.load(Ordering::Relaxed) {
                        let hl = 42;
                        let iov = [behaviour::iov(&f[..hl]), behaviour::iov(&f[hl..])];
                        match behaviour::writev(fd, &iov) {
                            Ok(_) => {
                                ok += 1;
                                delivered[i].store(ok, Ordering::Relaxed);
                            }
                            Err(libc::EBADFD) => break,
                            Err(libc::EIO) | Err(libc::EBUSY) => {}
                            Err(e) => {
                                bad.push(e);
                                break;
                            }
                        }
                    }
                    (ok, bad)
                })
            })
            .collect();
        // Both writers under way (each has delivered), then a little more.
        let end = Instant::now() + Duration::from_secs(3);
        while delivered.iter().any(|d| d.load(Ordering::Relaxed) == 0) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(20));
        let del = sh(&format!("ip link del {name}"));
        // The writers must see the device go on their own (EBADFD).
        let end = Instant::now() + Duration::from_secs(5);
        while writers.iter().any(|w| !w.is_finished()) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        let stuck = writers.iter().filter(|w| !w.is_finished()).count();
        stop.store(true, Ordering::Relaxed);
        del?;
        for w in writers {
            let (ok, bad) = w.join().map_err(|_| "writer panicked".to_string())?;
            check!(ok > 0, "round {round}: no write delivered before the delete");
            check!(bad.is_empty(), "round {round}: writes failed with {bad:?}");
        }
        check!(stuck == 0, "round {round}: {stuck} writer(s) still writing 5 s after the delete");
        check!(!link_exists(&name), "round {round}: {name} still exists");
        expect_errno!(t.write(&frame), libc::EBADFD, "a write after the delete");
    }
    Ok(())
}

/// `IFF_NAPI_FRAGS`'s frame limit: `ETH_MAX_MTU - NET_SKB_PAD -
/// NET_IP_ALIGN`, 65471 bytes on x86_64 (`NET_SKB_PAD` is
/// `L1_CACHE_BYTES`, 64, and `NET_IP_ALIGN` 0): a frame of that size is
/// taken, one byte more is `EMSGSIZE`.
pub fn t_napi_frags_frame_limit(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-nl0", IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS)
        .map_err(|e| format!("TUNSETIFF IFF_NAPI_FRAGS: {e}"))?;
    sh("ip link set rt-nl0 up")?;
    let frame = |len: usize| {
        let mut f = pkt::eth([2, 0, 0, 0, 0, 8], [2, 0, 0, 0, 0, 9], 0x88b5, &[]);
        f.resize(len, 0x5a);
        f
    };
    let f = frame(65471);
    check!(t.write(&f) == Ok(f.len()), "a 65471-byte frame: {:?}", t.write(&f));
    let f = frame(65472);
    expect_errno!(t.write(&f), libc::EMSGSIZE, "a 65472-byte frame");
    Ok(())
}
