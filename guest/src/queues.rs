//! Queues: attach and detach (`TUNSETQUEUE`), the 256-queue limit,
//! `txqueuelen` resizing the ring; and the queue life cycle against tun.c
//! (issue 18): a device deleted while some of its files are detached, the
//! uevents and queue counts of a new multi-queue device, and `txqueuelen`
//! reaching every ring, detached ones included.

use super::*;
use crate::nl::{ifindex, Nl, RTMGRP_LINK};

/// `/sys/kernel/uevent_seqnum`: how many uevents the kernel has sent.
fn uevent_seqnum() -> Result<u64, String> {
    let s = std::fs::read_to_string("/sys/kernel/uevent_seqnum").map_err(|e| format!("uevent_seqnum: {e}"))?;
    s.trim().parse().map_err(|e| format!("uevent_seqnum {s:?}: {e}"))
}

/// The queue directories in sysfs: (rx, tx), the real queue counts.
fn sysfs_queues(name: &str) -> (usize, usize) {
    let count = |prefix: &str| {
        std::fs::read_dir(format!("/sys/class/net/{name}/queues"))
            .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().starts_with(prefix)).count())
            .unwrap_or(0)
    };
    (count("rx-"), count("tx-"))
}

/// The `iff:` value of `/proc/self/fdinfo/FD`, as bytes.
pub fn fdinfo_iff(fd: RawFd) -> Option<Vec<u8>> {
    let b = std::fs::read(format!("/proc/self/fdinfo/{fd}")).ok()?;
    b.split(|&c| c == b'\n').find_map(|l| l.strip_prefix(b"iff:\t").map(<[u8]>::to_vec))
}

/// A multi-queue device deleted while two of its four files are detached
/// (tun.c's `tun_detach_all` walks the disabled list in place): every file,
/// attached or detached, is left without a device (`EBADFD` for reads,
/// writes and `TUNGETIFF`, `EINVAL` for `TUNSETQUEUE`, an empty `iff:`),
/// under KASAN on the debug kernel; a formerly detached file can make a new
/// device, which works and goes with it.
pub fn t_delete_with_detached(n: Node) -> TestResult {
    let q = (0..4)
        .map(|i| {
            Tun::create_nonblock(n.path, "rt-dd0", IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE)
                .map_err(|e| format!("queue {i}: TUNSETIFF: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach 1: {e}"))?;
    setqueue(&q[3], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach 3: {e}"))?;
    sh("ip link set rt-dd0 up")?;
    sh("ip link del rt-dd0")?;
    check!(!link_exists("rt-dd0"), "device still there");
    let frame = pkt::eth([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0x88b5, &[0x5a; 46]);
    let mut buf = [0u8; 2048];
    for (i, t) in q.iter().enumerate() {
        expect_errno!(t.getiff(), libc::EBADFD, format!("TUNGETIFF on file {i}"));
        expect_errno!(t.write(&frame), libc::EBADFD, format!("write on file {i}"));
        expect_errno!(t.read(&mut buf), libc::EBADFD, format!("read on file {i}"));
        expect_errno!(setqueue(t, IFF_ATTACH_QUEUE), libc::EINVAL, format!("TUNSETQUEUE attach on file {i}"));
        expect_errno!(setqueue(t, IFF_DETACH_QUEUE), libc::EINVAL, format!("TUNSETQUEUE detach on file {i}"));
        check!(fdinfo_iff(t.fd()).as_deref() == Some(&b""[..]), "file {i}: fdinfo iff {:?}", fdinfo_iff(t.fd()));
    }
    // A formerly detached file is a fresh one again. (In tun.c its
    // `ifindex` shares a union with `queue_index`, so without this the new
    // device would ask for index 1, lo's, and fail with EBUSY: a tun.c
    // quirk rust_tun does not have.)
    let mut zero = 0i32;
    ioctl_ptr(q[1].fd(), TUNSETIFINDEX, &mut zero).map_err(|e| format!("TUNSETIFINDEX 0: {e}"))?;
    let mut ifr = IfReq::new("rt-dd1", IFF_TAP | IFF_NO_PI);
    ioctl_ptr(q[1].fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("TUNSETIFF on a formerly detached file: {e}"))?;
    check!(link_exists("rt-dd1"), "no device from the formerly detached file");
    sh("ip link set rt-dd1 up")?;
    check!(q[1].write(&frame) == Ok(frame.len()), "write on the new device: {:?}", q[1].write(&frame));
    drop(q);
    check!(!link_exists("rt-dd1"), "device left after its only file closed");
    Ok(())
}

/// Creating a multi-queue device registers one real queue, as tun.c (which
/// attaches the first file in `ndo_init`, before the queues' sysfs
/// objects exist): one uevent for the device and one per queue object, not
/// 256 added and 255 removed; the first RTM_NEWLINK already reports the
/// attached queue; each further queue adds its two objects; netlink's
/// allocated counts stay 256.
pub fn t_mq_create_uevents(n: Node) -> TestResult {
    let nl = Nl::open(RTMGRP_LINK).map_err(|e| e.to_string())?;
    nl.set_timeout_ms(1000);
    let s0 = uevent_seqnum()?;
    let q0 = Tun::create(n.path, "rt-mu0", IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let uevents = uevent_seqnum()? - s0;
    let (rx, tx) = sysfs_queues("rt-mu0");
    check!((rx, tx) == (1, 1), "{rx} rx and {tx} tx queues in sysfs with one file, expected 1 and 1");
    check!(uevents == 1 + (rx + tx) as u64, "{uevents} uevents for creating the device, expected {} (the device and its {} queue objects)", 1 + rx + tx, rx + tx);
    let first = nl.first_newlink("rt-mu0").ok_or("no RTM_NEWLINK for the new device")?;
    check!(first.tun.num_queues == Some(1), "the first RTM_NEWLINK reports {:?} queues, expected 1", first.tun.num_queues);
    check!(first.num_tx_queues == Some(256) && first.num_rx_queues == Some(256), "the first RTM_NEWLINK: numtxqueues {:?} numrxqueues {:?}, expected 256", first.num_tx_queues, first.num_rx_queues);

    let s1 = uevent_seqnum()?;
    let more = (1..4)
        .map(|i| {
            Tun::create(n.path, "rt-mu0", IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE).map_err(|e| format!("queue {i}: TUNSETIFF: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let uevents = uevent_seqnum()? - s1;
    check!(sysfs_queues("rt-mu0") == (4, 4), "sysfs queues {:?} with four files", sysfs_queues("rt-mu0"));
    check!(uevents == 6, "{uevents} uevents for three more queues, expected 6 (an rx and a tx object each)");
    let l = nl.link_queues(ifindex("rt-mu0")).map_err(|e| format!("RTM_GETLINK: {e}"))?;
    check!(l.tun.num_queues == Some(4), "RTM_GETLINK: {:?} queues, expected 4", l.tun.num_queues);
    check!(l.num_tx_queues == Some(256) && l.num_rx_queues == Some(256), "RTM_GETLINK: numtxqueues {:?} numrxqueues {:?}", l.num_tx_queues, l.num_rx_queues);
    drop(more);
    drop(q0);
    check!(!link_exists("rt-mu0"), "device left");
    Ok(())
}

/// A `txqueuelen` change resizes every ring, the detached queues' too
/// (tun.c's `tun_queue_resize` takes the disabled list's rings with the
/// attached ones): each queue, made the only attached one in turn, holds
/// 1000 packets after a change from 500 to 1000 made while it was
/// detached (attaching a detached queue does not resize it).
pub fn t_txqlen_every_ring(n: Node) -> TestResult {
    let q = (0..3)
        .map(|i| {
            Tun::create_nonblock(n.path, "rt-qr0", IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE)
                .map_err(|e| format!("queue {i}: TUNSETIFF: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    ptp_up("rt-qr0", "10.71.0.1", "10.71.0.2")?;
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach 1: {e}"))?;
    setqueue(&q[2], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach 2: {e}"))?;
    sh("ip link set rt-qr0 qlen 1000")?;
    for i in 0..3 {
        if i > 0 {
            setqueue(&q[i], IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach {i}: {e}"))?;
            setqueue(&q[i - 1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach {}: {e}", i - 1))?;
        }
        check!(tx_queues("rt-qr0") == 1, "{} queues attached", tx_queues("rt-qr0"));
        udp_send("10.71.0.2", 1200)?;
        let queued = drain_ports(&q[i]).len();
        check!(queued == 1000, "queue {i}: {queued} of 1200 packets queued after txqueuelen 1000 (detached during the change: {})", i > 0);
    }
    Ok(())
}

pub fn t_mq_attach_detach(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-mq0", IFF_TAP | IFF_NO_PI, 4)?;
    check!(tx_queues("rt-mq0") == 4, "{} tx queues with 4 files", tx_queues("rt-mq0"));
    let sq = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut ifr = IfReq::new("rt-mq0", IFF_TAP | IFF_NO_PI);
    expect_errno!(ioctl_ptr(sq.as_raw_fd(), TUNSETIFF, &mut ifr), libc::EINVAL, "single-queue attach to a multi-queue device");

    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    check!(tx_queues("rt-mq0") == 3, "{} tx queues after a detach", tx_queues("rt-mq0"));
    check!(q[1].getiff().is_ok_and(|(_, f)| f & IFF_DETACH_QUEUE != 0), "IFF_DETACH_QUEUE not reported");
    check!(q[0].getiff().is_ok_and(|(_, f)| f & IFF_DETACH_QUEUE == 0), "IFF_DETACH_QUEUE on an attached queue");
    expect_errno!(setqueue(&q[1], IFF_DETACH_QUEUE), libc::EINVAL, "detaching a detached queue");
    setqueue(&q[1], IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
    check!(tx_queues("rt-mq0") == 4, "{} tx queues after re-attach", tx_queues("rt-mq0"));
    expect_errno!(setqueue(&q[0], IFF_ATTACH_QUEUE), libc::EINVAL, "attaching an attached queue");
    expect_errno!(setqueue(&q[0], 0), libc::EINVAL, "TUNSETQUEUE without a flag");

    // Closing a detached queue, then the rest, removes the device.
    setqueue(&q[3], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    drop(q);
    check!(!link_exists("rt-mq0"), "device left after closing every queue");

    let single = Tun::create(n.path, "rt-sq0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    expect_errno!(setqueue(&single, IFF_DETACH_QUEUE), libc::EINVAL, "detaching a single-queue device");
    Ok(())
}

pub fn t_mq_queue_limit(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-mq1", IFF_TUN | IFF_NO_PI, 256)?;
    check!(tx_queues("rt-mq1") == 256, "{} tx queues", tx_queues("rt-mq1"));
    expect_errno!(
        Tun::create(n.path, "rt-mq1", IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE),
        libc::E2BIG,
        "the 257th queue"
    );
    drop(q);
    check!(!link_exists("rt-mq1"), "device left");
    Ok(())
}

/// `tx_queue_len` is the ring's size: shrinking a ring that holds packets
/// keeps the oldest that fit (ptr_ring_resize) and frees the rest; growing
/// it keeps them all.
pub fn t_txqlen(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-ql0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.33.0.1", "10.33.0.2")?;
    sh("ip link set rt-ql0 qlen 10")?;
    udp_send("10.33.0.2", 25)?;
    check!(drain_ports(&t).len() == 10, "queued with txqueuelen 10");
    check!(stat("rt-ql0", "tx_dropped")? == 15, "tx_dropped {}", stat("rt-ql0", "tx_dropped")?);
    // 10 packets queued (ports 0..9 in payload order), then shrink to 4.
    udp_send_ports("10.33.0.2", 0..10)?;
    let d0 = stat("rt-ql0", "tx_dropped")?;
    sh("ip link set rt-ql0 qlen 4")?;
    let kept = drain_ports(&t);
    check!(kept == [9000, 9001, 9002, 9003], "kept {kept:?} after shrinking to 4");
    if n.module == "rust_tun" {
        // Deliberate difference: tun.c frees them without counting.
        check!(stat("rt-ql0", "tx_dropped")? == d0 + 6, "tx_dropped +{}", stat("rt-ql0", "tx_dropped")? - d0);
    }
    // Grow with packets queued: all stay, in order.
    udp_send_ports("10.33.0.2", 0..4)?;
    sh("ip link set rt-ql0 qlen 100")?;
    udp_send_ports("10.33.0.2", 4..8)?;
    let kept = drain_ports(&t);
    check!(kept == (9000..9008).collect::<Vec<_>>(), "after growing: {kept:?}");
    Ok(())
}
