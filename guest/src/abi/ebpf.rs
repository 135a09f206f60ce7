//! eBPF programs on a device (issue "XDP and eBPF"): the steering program
//! (`TUNSETSTEERINGEBPF`), whose value picks each transmitted packet's
//! queue, and the filter (`TUNSETFILTEREBPF`), whose value drops (0) or
//! trims what the stack transmits; their replace and detach semantics,
//! hostile attach calls, and the programs' lifetimes. The programs are
//! socket filters of raw instructions (crate::bpf).

use super::*;
use crate::bpf::{self, raw};
use std::sync::atomic::AtomicU32;

/// `ioctl(fd, cmd, &prog_fd)`.
fn set_prog(fd: RawFd, cmd: u64, prog: i32) -> Result<i32, i32> {
    ioctl_int(fd, cmd, prog)
}

/// An Ethernet frame whose first payload byte (offset 14) is `v`, the
/// value the byte programs return, and whose second is `seq`.
fn frame(v: u8, seq: u8, len: usize) -> Vec<u8> {
    let mut payload = vec![0x5a; len - 14];
    payload[0] = v;
    payload[1] = seq;
    pkt::eth([2, 0, 0, 0, 0, 1], [2, 0xcc, 0, 0, 0, 1], 0x88b5, &payload)
}

/// Sends a frame for each value of `vs` and reads every queue: the queue
/// each frame reached, in order (`None`: dropped).
fn queues_of(pk: &Packet, q: &[Tun], vs: &[u8]) -> Result<Vec<Option<usize>>, String> {
    for (i, v) in vs.iter().enumerate() {
        pk.send(&frame(*v, i as u8, 60))?;
    }
    let mut out = vec![None; vs.len()];
    for (qi, t) in q.iter().enumerate() {
        for f in drain(t) {
            if f.len() < 16 || f[12..14] != [0x88, 0xb5] {
                continue;
            }
            let seq = usize::from(f[15]);
            check!(seq < out.len() && out[seq].is_none(), "frame {seq} read twice (queue {qi}), {out:?}");
            out[seq] = Some(qi);
        }
    }
    Ok(out)
}

/// `TUNSETSTEERINGEBPF` on a four-queue TAP: the program's value, cut to
/// 16 bits, modulo the number of attached queues, is the queue (values
/// past the queue count wrap, as tun.c's `tun_ebpf_select_queue()` does);
/// a detached queue shrinks the modulus; a replacement takes over; -1 gives
/// the queues back to the flow table; programs swapped and removed under
/// traffic.
pub fn t_ebpf_steering(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-es0", IFF_TAP | IFF_NO_PI, 4)?;
    sh("ip link set rt-es0 up")?;
    for t in &q {
        drain(t);
    }
    let pk = Packet::open("rt-es0")?;
    // The byte plus 0x10000: the same queue as the byte alone if the value
    // is cut to 16 bits before the modulus, not with 3 queues otherwise.
    let by_byte = bpf::socket_filter(&bpf::byte_plus(14, 0x10000))?;
    set_prog(q[0].fd(), TUNSETSTEERINGEBPF, raw(&by_byte)).map_err(|e| format!("TUNSETSTEERINGEBPF: {e}"))?;
    let vs = [0u8, 1, 2, 3, 4, 5, 7, 255];
    let got = queues_of(&pk, &q, &vs)?;
    let want: Vec<_> = vs.iter().map(|v| Some(usize::from(*v) % 4)).collect();
    check!(got == want, "4 queues: {got:?}, want {want:?}");

    // Queue 3 detached: 3 queues.
    setqueue(&q[3], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    let vs = [0u8, 1, 2, 3, 4, 5];
    let got = queues_of(&pk, &q, &vs)?;
    let want: Vec<_> = vs.iter().map(|v| Some(usize::from(*v) % 3)).collect();
    check!(got == want, "3 queues: {got:?}, want {want:?}");
    setqueue(&q[3], IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;

    // Any file of the device sets it; a replacement takes over; the
    // program's fd may be closed (the device holds the program).
    let two = bpf::socket_filter(&bpf::ret(2))?;
    set_prog(q[3].fd(), TUNSETSTEERINGEBPF, raw(&two)).map_err(|e| format!("replace: {e}"))?;
    drop(two);
    let got = queues_of(&pk, &q, &[0, 1, 3])?;
    check!(got == [Some(2); 3], "ret 2: {got:?}");
    let wide = bpf::socket_filter(&bpf::ret(0xffff_fffd))?;
    set_prog(q[1].fd(), TUNSETSTEERINGEBPF, raw(&wide)).map_err(|e| format!("replace: {e}"))?;
    let got = queues_of(&pk, &q, &[0])?;
    check!(got == [Some(0xfffd % 4)], "ret 0xfffffffd: {got:?}");

    // Detached: the flow table picks, each frame reaches one queue.
    set_prog(q[0].fd(), TUNSETSTEERINGEBPF, -1).map_err(|e| format!("detach: {e}"))?;
    set_prog(q[0].fd(), TUNSETSTEERINGEBPF, -1).map_err(|e| format!("detach twice: {e}"))?;
    let got = queues_of(&pk, &q, &[0, 1, 2, 3])?;
    check!(got.iter().all(Option::is_some), "without a program: {got:?}");

    // Swapped and removed under traffic, from another file than the
    // sender's device's first.
    let progs = [bpf::socket_filter(&bpf::ret(1))?, bpf::socket_filter(&bpf::ret(3))?, by_byte];
    let stop = AtomicBool::new(false);
    let sent = AtomicU32::new(0);
    let read = AtomicU32::new(0);
    thread::scope(|s| -> TestResult {
        let sender = s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let n = sent.load(Ordering::Relaxed);
                if pk.send(&frame(n as u8, 0, 60)).is_ok() {
                    sent.store(n + 1, Ordering::Relaxed);
                }
            }
        });
        for t in &q {
            s.spawn(|| {
                let mut buf = [0u8; 2048];
                while !stop.load(Ordering::Relaxed) {
                    if t.read_timeout(&mut buf, Duration::from_millis(20)).is_ok() {
                        read.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        // Traffic first: frames sent and read (the flow table picks their
        // queue) before the first swap.
        let start = Instant::now();
        while read.load(Ordering::Relaxed) < 100 && start.elapsed() < Duration::from_secs(10) {
            thread::sleep(Duration::from_millis(5));
        }
        let (sent0, read0) = (sent.load(Ordering::Relaxed), read.load(Ordering::Relaxed));
        // At least 300 swaps, and on until 1000 more frames went (or 10 s).
        let mut r = Ok(());
        let start = Instant::now();
        let mut i = 0;
        while i < 300 || (sent.load(Ordering::Relaxed) < sent0 + 1000 && start.elapsed() < Duration::from_secs(10)) {
            let p = if i % 4 == 3 { -1 } else { raw(&progs[i % 3]) };
            if let Err(e) = set_prog(q[i % 4].fd(), TUNSETSTEERINGEBPF, p) {
                r = Err(format!("swap {i}: errno {e}"));
                break;
            }
            i += 1;
        }
        let during = sent.load(Ordering::Relaxed) - sent0;
        stop.store(true, Ordering::Relaxed);
        sender.join().map_err(|_| "sender panicked")?;
        println!("# before the swaps: {sent0} frames sent, {read0} read; during {i} swaps: {during} sent");
        check!(read0 > 0, "no frame read before the swaps");
        check!(during > 0, "no frame sent during the swaps");
        r
    })?;
    set_prog(q[0].fd(), TUNSETSTEERINGEBPF, raw(&progs[0])).map_err(|e| format!("after the swaps: {e}"))?;
    for t in &q {
        drain(t);
    }
    let got = queues_of(&pk, &q, &[0, 2])?;
    check!(got == [Some(1); 2], "ret 1 after the swaps: {got:?}");
    Ok(())
}

/// `TUNSETFILTEREBPF`: the program's value is the length the reader gets
/// (0 drops, counted as `tx_dropped`; past the frame's length, or
/// negative as an `int`, nothing is cut), after the classic filter's cut;
/// on TAP and TUN, with a vnet header; -1 detaches.
pub fn t_ebpf_filter(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-ef0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    // No IPv6 chatter (router solicitations, MLD) among the drops counted.
    let _ = std::fs::write("/proc/sys/net/ipv6/conf/rt-ef0/disable_ipv6", "1");
    sh("ip link set rt-ef0 up")?;
    drain(&t);
    let pk = Packet::open("rt-ef0")?;
    let set = |insns: &[bpf::Insn]| -> TestResult {
        let p = bpf::socket_filter(insns)?;
        set_prog(t.fd(), TUNSETFILTEREBPF, raw(&p)).map_err(|e| format!("TUNSETFILTEREBPF: {e}"))?;
        Ok(())
    };
    // The lengths of the test frames read back for each of `vs`.
    let lens = |vs: &[u8]| -> Result<Vec<usize>, String> {
        for (i, v) in vs.iter().enumerate() {
            pk.send(&frame(*v, i as u8, 114))?;
        }
        Ok(drain(&t).iter().filter(|f| f.len() < 14 || f[12..14] == [0x88, 0xb5]).map(Vec::len).collect())
    };
    check!(lens(&[1])? == [114], "no program: {:?}", lens(&[1]));
    set(&bpf::ret(0))?;
    let drops0 = stat("rt-ef0", "tx_dropped")?;
    check!(lens(&[1, 2])?.is_empty(), "ret 0 let frames through");
    check!(stat("rt-ef0", "tx_dropped")? == drops0 + 2, "dropped frames not counted: {} -> {}", drops0, stat("rt-ef0", "tx_dropped")?);
    set(&bpf::ret(20))?;
    pk.send(&frame(7, 0, 114))?;
    let f = drain(&t);
    check!(f.len() == 1 && f[0] == frame(7, 0, 114)[..20], "ret 20: {f:?}");
    for k in [114, 115, 0xffff_ffff, 0x8000_0000] {
        set(&bpf::ret(k))?;
        check!(lens(&[1])? == [114], "ret {k:#x}: {:?}", lens(&[1]));
    }
    // The packet picks: its byte 14 is the length, 0 drops.
    set(&bpf::byte_plus(14, 0))?;
    check!(lens(&[0, 30, 15, 200])? == [30, 15, 114], "byte 14 as the length: {:?}", lens(&[0, 30, 15, 200]));
    // After the classic filter (TUNATTACHFILTER): the shorter cut wins.
    filter::attach_prog(t.fd(), &[bpf_ret(40)]).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    check!(lens(&[60, 30])? == [40, 30], "classic 40, eBPF 60/30: {:?}", lens(&[60, 30]));
    ioctl_val(t.fd(), TUNDETACHFILTER, 0).map_err(|e| format!("TUNDETACHFILTER: {e}"))?;
    set_prog(t.fd(), TUNSETFILTEREBPF, -1).map_err(|e| format!("detach: {e}"))?;
    check!(lens(&[0, 30])? == [114, 114], "detached: {:?}", lens(&[0, 30]));
    drop(t);

    // A TAP with a vnet header: the header comes on top of the cut.
    let v = Tun::create(n.path, "rt-ef1", IFF_TAP | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF vnet: {e}"))?;
    sh("ip link set rt-ef1 up")?;
    drain(&v);
    let p = bpf::socket_filter(&bpf::ret(20))?;
    set_prog(v.fd(), TUNSETFILTEREBPF, raw(&p)).map_err(|e| format!("TUNSETFILTEREBPF vnet: {e}"))?;
    Packet::open("rt-ef1")?.send(&frame(1, 0, 114))?;
    let f = drain(&v);
    check!(f.len() == 1 && f[0].len() == 10 + 20 && f[0][10..] == frame(1, 0, 114)[..20], "vnet header and 20: {:?}", f.iter().map(Vec::len).collect::<Vec<_>>());

    // A TUN device: the IP packets the stack sends, cut.
    let u = Tun::create(n.path, "rt-ef2", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF tun: {e}"))?;
    ptp_up("rt-ef2", "10.37.0.1", "10.37.0.2")?;
    drain(&u);
    set_prog(u.fd(), TUNSETFILTEREBPF, raw(&p)).map_err(|e| format!("TUNSETFILTEREBPF tun: {e}"))?;
    udp_send("10.37.0.2", 3)?;
    let f = drain(&u);
    check!(f.len() >= 3 && f.iter().all(|p| p.len() == 20), "TUN, ret 20: {:?}", f.iter().map(Vec::len).collect::<Vec<_>>());
    Ok(())
}

/// Hostile attach calls, each with tun.c's errno and the device's program
/// untouched: no device, a bad pointer, the tun fd, -2, a closed number,
/// a map, a program of another type (XDP); detach twice. A program lives
/// while a device holds it (its fd closed), and is freed when the device
/// is deleted with programs attached, persistent or not.
pub fn t_ebpf_attach_errors(n: Node) -> TestResult {
    let drop_all = bpf::socket_filter(&bpf::ret(0))?;
    let map = bpf::array_map()?;
    let xdp = bpf::load(bpf::BPF_PROG_TYPE_XDP, &bpf::ret(2)).map_err(|e| format!("BPF_PROG_LOAD xdp: errno {e}"))?;
    let unattached = Tun::open_node(n.path).map_err(|e| format!("{}: {e}", n.path))?;
    let t = Tun::create(n.path, "rt-eb0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-eb0 up")?;
    drain(&t);
    let pk = Packet::open("rt-eb0")?;
    for (cmd, what) in [(TUNSETSTEERINGEBPF, "TUNSETSTEERINGEBPF"), (TUNSETFILTEREBPF, "TUNSETFILTEREBPF")] {
        expect_errno!(set_prog(unattached.as_raw_fd(), cmd, raw(&drop_all)), libc::EBADFD, format!("{what} without a device"));
        check!(set_prog(t.fd(), cmd, -1) == Ok(0), "{what} -1 without a program");
        check!(set_prog(t.fd(), cmd, -1) == Ok(0), "{what} -1 twice");
        set_prog(t.fd(), cmd, raw(&drop_all)).map_err(|e| format!("{what}: {e}"))?;
        expect_errno!(ioctl_ptr(t.fd(), cmd, 8usize as *mut i32), libc::EFAULT, format!("{what} bad pointer"));
        expect_errno!(set_prog(t.fd(), cmd, t.fd()), libc::EINVAL, format!("{what} the tun fd"));
        expect_errno!(set_prog(t.fd(), cmd, -2), libc::EBADF, format!("{what} -2"));
        expect_errno!(set_prog(t.fd(), cmd, 1_000_000), libc::EBADF, format!("{what} a closed fd"));
        expect_errno!(set_prog(t.fd(), cmd, raw(&map)), libc::EINVAL, format!("{what} a map"));
        expect_errno!(set_prog(t.fd(), cmd, raw(&xdp)), libc::EINVAL, format!("{what} an XDP program"));
    }
    // Both drop-all programs still attached: the filter drops every frame.
    pk.send(&frame(1, 0, 60))?;
    check!(drain(&t).is_empty(), "a failed attach replaced the filter");
    set_prog(t.fd(), TUNSETFILTEREBPF, -1).map_err(|e| format!("detach: {e}"))?;
    pk.send(&frame(1, 0, 60))?;
    check!(drain(&t).len() == 1, "detached filter still drops");

    // Lifetimes: the device's reference keeps a program whose fd is closed.
    let id = bpf::prog_id(raw(&drop_all))?;
    drop(drop_all);
    check!(bpf::prog_exists(id), "the attached steering program was freed with its fd");
    set_prog(t.fd(), TUNSETSTEERINGEBPF, -1).map_err(|e| format!("detach: {e}"))?;
    check!(bpf::wait_prog_freed(id), "a detached program was not freed");
    // Deleted with both attached: closed, and as a persistent device.
    for persist in [false, true] {
        let p = bpf::socket_filter(&bpf::ret(1000))?;
        let id = bpf::prog_id(raw(&p))?;
        let d = Tun::create(n.path, "rt-eb1", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
        set_prog(d.fd(), TUNSETSTEERINGEBPF, raw(&p)).map_err(|e| format!("steering: {e}"))?;
        set_prog(d.fd(), TUNSETFILTEREBPF, raw(&p)).map_err(|e| format!("filter: {e}"))?;
        drop(p);
        if persist {
            ioctl_val(d.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
            drop(d);
            check!(bpf::prog_exists(id), "a persistent device's program was freed with its file");
            sh("ip link del rt-eb1")?;
        } else {
            drop(d);
        }
        check!(!link_exists("rt-eb1"), "device left (persist {persist})");
        check!(bpf::wait_prog_freed(id), "programs of a deleted device not freed (persist {persist})");
    }
    Ok(())
}

/// `rmmod` with programs attached to a persistent device: the device
/// pins the module (`TUNSETPERSIST`, as tun.c), so rmmod is refused and
/// the programs stay; deleting the device frees them, and the module then
/// unloads (nothing of the programs outlives it) and loads again.
pub fn t_ebpf_progs_across_rmmod(_: Node) -> TestResult {
    load("rust_tun")?;
    let p = bpf::socket_filter(&bpf::ret(1000))?;
    let id = bpf::prog_id(raw(&p))?;
    let q = mq_open(RUST_NODE, "rt-erm0", IFF_TAP | IFF_NO_PI, 2)?;
    set_prog(q[0].fd(), TUNSETSTEERINGEBPF, raw(&p)).map_err(|e| format!("steering: {e}"))?;
    set_prog(q[1].fd(), TUNSETFILTEREBPF, raw(&p)).map_err(|e| format!("filter: {e}"))?;
    ioctl_val(q[0].fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    drop((p, q));
    let r = crate::hardening::delete_module("rust_tun");
    check!(matches!(r, Err(e) if e == libc::EAGAIN || e == libc::EBUSY), "rmmod with a persistent device: {r:?}");
    check!(bpf::prog_exists(id), "program freed while the device holds it");
    sh("ip link del rt-erm0")?;
    check!(bpf::wait_prog_freed(id), "programs of the deleted device not freed");
    crate::hardening::delete_module("rust_tun").map_err(|e| format!("rmmod: errno {e} ({})", errname(e)))?;
    crate::hardening::finit_module("rust_tun").map_err(|e| format!("reload: errno {e}"))?;
    Ok(())
}
