//! XDP on a TAP (issue "XDP and eBPF"): programs attached by rtnetlink
//! (`IFLA_XDP`, what `ip link set DEV xdpdrv` sends) and by iproute2's
//! `ip` where the guest has it; each action on both of tun.c's write
//! paths (a non-blocking write builds the frame in a page and runs the
//! program natively, `tun_build_skb()`; a blocking one, or a virtio-net
//! header with `gso_type`, builds an skb and runs it through
//! `do_xdp_generic()`), with the counters tun.ko keeps for each; frames
//! redirected into a TAP's ring (`ndo_xdp_xmit`, `tun_xdp_xmit()`) from
//! another TAP and from a veth, read back byte for byte; frames left in
//! the ring when the queue, the file or the device goes, or the ring
//! shrinks; programs swapped under traffic. The programs are raw
//! instructions (crate::bpf). tun.ko is the reference: every expectation
//! here is what it does.

use super::*;
use crate::bpf::{self, raw};
use crate::nl::{Nl, XDP_ATTACHED_DRV, XDP_ATTACHED_NONE, XDP_ATTACHED_SKB, XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE, XDP_FLAGS_UPDATE_IF_NOEXIST};
use std::sync::atomic::AtomicU32;

/// The XDP actions (`enum xdp_action`).
pub(crate) const XDP_ABORTED: u32 = 0;
pub(crate) const XDP_DROP: u32 = 1;
pub(crate) const XDP_PASS: u32 = 2;
pub(crate) const XDP_TX: u32 = 3;
pub(crate) const XDP_REDIRECT: u32 = 4;

/// iproute2's `ip` (run-guest.sh `--clients`); busybox's `/bin/ip` knows
/// no XDP.
const IPROUTE2: &str = "/usr/bin/ip";

/// The test frames' ethertype (IEEE 802 Local Experimental 1: no
/// protocol takes it).
const ETH_P_XDPTEST: u16 = 0x88b5;

/// An XDP program returning `act`.
pub(crate) fn ret_prog(act: u32) -> Result<OwnedFd, String> {
    bpf::xdp(&bpf::ret(act))
}

/// An XDP program redirecting every frame to device `dev`.
pub(crate) fn redirect_prog(dev: &str) -> Result<OwnedFd, String> {
    bpf::xdp(&bpf::redirect(ifindex(dev)))
}

/// Attaches `prog` to `dev` in native mode by rtnetlink.
pub(crate) fn attach(nl: &Nl, dev: &str, prog: &OwnedFd) -> TestResult {
    nl.set_xdp(ifindex(dev), raw(prog), XDP_FLAGS_DRV_MODE).map_err(|e| format!("{dev}: IFLA_XDP native attach: errno {e} ({})", errname(e)))
}

/// Detaches `dev`'s native program by rtnetlink.
pub(crate) fn detach(nl: &Nl, dev: &str) -> TestResult {
    nl.set_xdp(ifindex(dev), -1, XDP_FLAGS_DRV_MODE).map_err(|e| format!("{dev}: IFLA_XDP native detach: errno {e} ({})", errname(e)))
}

/// `dev`'s `IFLA_XDP`: (`IFLA_XDP_ATTACHED`, `IFLA_XDP_PROG_ID` or 0).
fn xdp_state(nl: &Nl, dev: &str) -> Result<(u8, u32), String> {
    let l = nl.link_by_name(dev).map_err(|e| format!("RTM_GETLINK {dev}: {e}"))?;
    Ok((l.xdp_attached.unwrap_or(0xff), l.xdp_prog_id.unwrap_or(0)))
}

/// Test frame `seq`, `len` bytes, of `ETH_P_XDPTEST`, between addresses
/// no device has.
pub(crate) fn xframe(seq: u32, len: usize) -> Vec<u8> {
    let mut payload: Vec<u8> = (0..len - 14).map(|i| (i as u8) ^ (seq as u8) ^ 0xa5).collect();
    payload[..4].copy_from_slice(&seq.to_be_bytes());
    pkt::eth([2, 0, 0, 0, 0x58, 2], [2, 0, 0, 0, 0x58, 1], ETH_P_XDPTEST, &payload)
}

/// Sets or clears `O_NONBLOCK` on a queue file: the write path tun.c
/// takes (`tun_can_build_skb()` wants `noblock`).
fn set_nonblock(t: &Tun, on: bool) -> TestResult {
    // SAFETY: fcntl on our fd.
    let fl = unsafe { libc::fcntl(t.fd(), libc::F_GETFL) };
    check!(fl >= 0, "F_GETFL: errno {}", errno());
    let fl = if on { fl | libc::O_NONBLOCK } else { fl & !libc::O_NONBLOCK };
    // SAFETY: As above.
    let r = unsafe { libc::fcntl(t.fd(), libc::F_SETFL, fl) };
    check!(r == 0, "F_SETFL: errno {}", errno());
    Ok(())
}

/// No IPv6 on `name` (no router solicitations or MLD among the
/// counters), up.
pub(crate) fn quiet_up(name: &str) -> TestResult {
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
    sh(&format!("ip link set {name} up"))?;
    Ok(())
}

/// A TAP of `n`'s driver named `name` with `flags`, quiet and up, its
/// queue drained.
fn xtap(n: Node, name: &str, flags: u16) -> Result<Tun, String> {
    let t = Tun::create(n.path, name, flags).map_err(|e| format!("TUNSETIFF {name}: errno {e}"))?;
    quiet_up(name)?;
    drain(&t);
    Ok(t)
}

/// `after - before`, counter by counter.
pub(crate) fn delta(before: &Counters, after: &Counters) -> Counters {
    Counters {
        rx_packets: after.rx_packets.wrapping_sub(before.rx_packets),
        rx_bytes: after.rx_bytes.wrapping_sub(before.rx_bytes),
        rx_dropped: after.rx_dropped.wrapping_sub(before.rx_dropped),
        tx_packets: after.tx_packets.wrapping_sub(before.tx_packets),
        tx_bytes: after.tx_bytes.wrapping_sub(before.tx_bytes),
        tx_dropped: after.tx_dropped.wrapping_sub(before.tx_dropped),
    }
}

pub(crate) const ZERO: Counters = Counters { rx_packets: 0, rx_bytes: 0, rx_dropped: 0, tx_packets: 0, tx_bytes: 0, tx_dropped: 0 };

/// An `AF_PACKET` socket receiving the `ETH_P_XDPTEST` frames a device
/// receives: what reached the stack.
struct Rx(OwnedFd);

impl Rx {
    fn open(dev: &str) -> Result<Rx, String> {
        let proto = ETH_P_XDPTEST.to_be();
        // SAFETY: Plain socket call.
        let s = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, i32::from(proto)) };
        check!(s >= 0, "socket(AF_PACKET): errno {}", errno());
        // SAFETY: A fresh fd of ours.
        let s = unsafe { OwnedFd::from_raw_fd(s) };
        // SAFETY: An all-zero sockaddr_ll is valid.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = ifindex(dev);
        // SAFETY: A sockaddr_ll of the size given.
        let r = unsafe { libc::bind(s.as_raw_fd(), (&sll as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
        check!(r == 0, "bind(AF_PACKET {dev}): errno {}", errno());
        Ok(Rx(s))
    }

    /// The incoming frames queued, waiting `wait` for each.
    fn frames(&self, wait: Duration) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 4096];
        loop {
            let mut p = libc::pollfd { fd: self.0.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: One valid pollfd.
            if unsafe { libc::poll(&mut p, 1, wait.as_millis() as i32) } != 1 {
                return out;
            }
            // SAFETY: An all-zero sockaddr_ll is valid.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut fl = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            // SAFETY: Valid buffer and address.
            let r = unsafe {
                libc::recvfrom(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT, (&mut from as *mut libc::sockaddr_ll).cast(), &mut fl)
            };
            let Ok(n) = usize::try_from(r) else { return out };
            // Not what the device sent (PACKET_OUTGOING).
            if from.sll_pkttype != 4 {
                out.push(buf[..n].to_vec());
            }
        }
    }
}

/// Whether `ip -d link show` output names program `id`
/// (`prog/xdp id ID`).
fn ip_shows_prog(out: &str, id: u32) -> bool {
    let w: Vec<&str> = out.split_whitespace().collect();
    w.windows(3).any(|x| x[0] == "prog/xdp" && x[1] == "id" && x[2] == id.to_string())
}

/// Mounts the bpf file system on /sys/fs/bpf unless it is there.
fn bpffs() -> TestResult {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    if !mounts.lines().any(|l| l.split_whitespace().nth(1) == Some("/sys/fs/bpf")) {
        sh("mkdir -p /sys/fs/bpf && mount -t bpf bpf /sys/fs/bpf")?;
    }
    Ok(())
}

/// Attaching, replacing and detaching, by rtnetlink and by iproute2: the
/// program's id in `IFLA_XDP_PROG_ID` and `ip -d link show`; the core's
/// refusals (`XDP_FLAGS_UPDATE_IF_NOEXIST` over a program: `EBUSY`;
/// generic over native: `EEXIST`; two mode flags, a socket filter, a map,
/// the tun fd: `EINVAL`; a closed fd: `EBADF`) leaving the program in
/// place; a TUN device (no `ndo_bpf`: tun.c gives XDP to TAP only) refuses
/// native mode with `EOPNOTSUPP` and takes generic mode, and flags 0 mean
/// native on a TAP, generic on a TUN; the program freed when detached,
/// replaced, or its device deleted (closed, persistent); a TAP whose
/// queues are all detached takes a program, which runs once they are
/// back.
pub fn t_xdp_attach(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let t = xtap(n, "rt-xt0", IFF_TAP | IFF_NO_PI)?;
    let idx = ifindex("rt-xt0");
    check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_NONE, 0), "no program: {:?}", xdp_state(&nl, "rt-xt0"));
    let p1 = ret_prog(XDP_PASS)?;
    let id1 = bpf::prog_id(raw(&p1))?;
    attach(&nl, "rt-xt0", &p1)?;
    check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_DRV, id1), "attached {id1}: {:?}", xdp_state(&nl, "rt-xt0"));
    let have_ip = std::path::Path::new(IPROUTE2).exists();
    if have_ip {
        let out = sh(&format!("{IPROUTE2} -d link show dev rt-xt0"))?;
        check!(ip_shows_prog(&out, id1) && !out.contains("xdpgeneric"), "ip -d link show: no native prog/xdp id {id1}:\n{out}");
    }
    // Replaced: the old program goes once its fd is closed.
    let p2 = ret_prog(XDP_DROP)?;
    let id2 = bpf::prog_id(raw(&p2))?;
    attach(&nl, "rt-xt0", &p2)?;
    check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_DRV, id2), "replaced by {id2}: {:?}", xdp_state(&nl, "rt-xt0"));
    drop(p1);
    check!(bpf::wait_prog_freed(id1), "the replaced program {id1} was not freed");
    // Refusals, the program in place.
    let p3 = ret_prog(XDP_PASS)?;
    let id3 = bpf::prog_id(raw(&p3))?;
    let sf = bpf::socket_filter(&bpf::ret(0))?;
    let map = bpf::array_map()?;
    expect_errno!(nl.set_xdp(idx, raw(&p3), XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST), libc::EBUSY, "UPDATE_IF_NOEXIST over a program");
    expect_errno!(nl.set_xdp(idx, raw(&p3), XDP_FLAGS_SKB_MODE), libc::EEXIST, "generic over native");
    expect_errno!(nl.set_xdp(idx, raw(&p3), XDP_FLAGS_SKB_MODE | XDP_FLAGS_DRV_MODE), libc::EINVAL, "two mode flags");
    expect_errno!(nl.set_xdp(idx, raw(&sf), XDP_FLAGS_DRV_MODE), libc::EINVAL, "a socket filter");
    expect_errno!(nl.set_xdp(idx, raw(&map), XDP_FLAGS_DRV_MODE), libc::EINVAL, "a map");
    expect_errno!(nl.set_xdp(idx, t.fd(), XDP_FLAGS_DRV_MODE), libc::EINVAL, "the tun fd");
    expect_errno!(nl.set_xdp(idx, 1_000_000, XDP_FLAGS_DRV_MODE), libc::EBADF, "a closed fd");
    check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_DRV, id2), "after the refusals: {:?}", xdp_state(&nl, "rt-xt0"));
    // Detached, twice.
    detach(&nl, "rt-xt0")?;
    check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_NONE, 0), "detached: {:?}", xdp_state(&nl, "rt-xt0"));
    detach(&nl, "rt-xt0").map_err(|e| format!("detach twice: {e}"))?;
    drop(p2);
    check!(bpf::wait_prog_freed(id2), "the detached program {id2} was not freed");
    // Flags 0: native on a TAP.
    nl.set_xdp(idx, raw(&p3), 0).map_err(|e| format!("flags 0: errno {e}"))?;
    check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_DRV, id3), "flags 0 on a TAP: {:?}", xdp_state(&nl, "rt-xt0"));
    nl.set_xdp(idx, -1, 0).map_err(|e| format!("flags 0 detach: errno {e}"))?;

    // iproute2, a pinned program.
    if have_ip {
        bpffs()?;
        let pin = format!("/sys/fs/bpf/rt-xdp-{}", suite_serial());
        let _ = std::fs::remove_file(&pin);
        bpf::obj_pin(raw(&p3), &pin).map_err(|e| format!("BPF_OBJ_PIN {pin}: errno {e}"))?;
        let r = (|| -> TestResult {
            sh(&format!("{IPROUTE2} link set dev rt-xt0 xdpdrv pinned {pin}"))?;
            check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_DRV, id3), "ip xdpdrv pinned: {:?}", xdp_state(&nl, "rt-xt0"));
            let out = sh(&format!("{IPROUTE2} -d link show dev rt-xt0"))?;
            check!(ip_shows_prog(&out, id3), "ip -d link show: no prog/xdp id {id3}:\n{out}");
            sh(&format!("{IPROUTE2} link set dev rt-xt0 xdp off"))?;
            check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_NONE, 0), "ip xdp off: {:?}", xdp_state(&nl, "rt-xt0"));
            sh(&format!("{IPROUTE2} link set dev rt-xt0 xdpgeneric pinned {pin}"))?;
            check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_SKB, id3), "ip xdpgeneric pinned: {:?}", xdp_state(&nl, "rt-xt0"));
            let out = sh(&format!("{IPROUTE2} -d link show dev rt-xt0"))?;
            check!(out.contains("xdpgeneric") && ip_shows_prog(&out, id3), "ip -d link show, generic: {out}");
            sh(&format!("{IPROUTE2} link set dev rt-xt0 xdpgeneric off"))?;
            check!(xdp_state(&nl, "rt-xt0")? == (XDP_ATTACHED_NONE, 0), "ip xdpgeneric off: {:?}", xdp_state(&nl, "rt-xt0"));
            Ok(())
        })();
        let _ = std::fs::remove_file(&pin);
        r?;
    } else {
        println!("# no iproute2 ip in this guest ({IPROUTE2}): rtnetlink only");
    }

    // A TUN device: generic mode only.
    let _u = Tun::create(n.path, "rt-xt1", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF TUN: {e}"))?;
    let uidx = ifindex("rt-xt1");
    expect_errno!(nl.set_xdp(uidx, raw(&p3), XDP_FLAGS_DRV_MODE), libc::EOPNOTSUPP, "native XDP on a TUN device");
    check!(xdp_state(&nl, "rt-xt1")? == (XDP_ATTACHED_NONE, 0), "TUN after the refusal: {:?}", xdp_state(&nl, "rt-xt1"));
    nl.set_xdp(uidx, raw(&p3), XDP_FLAGS_SKB_MODE).map_err(|e| format!("generic XDP on a TUN device: errno {e} ({})", errname(e)))?;
    check!(xdp_state(&nl, "rt-xt1")? == (XDP_ATTACHED_SKB, id3), "TUN generic: {:?}", xdp_state(&nl, "rt-xt1"));
    nl.set_xdp(uidx, -1, XDP_FLAGS_SKB_MODE).map_err(|e| format!("generic detach: errno {e}"))?;
    nl.set_xdp(uidx, raw(&p3), 0).map_err(|e| format!("TUN flags 0: errno {e}"))?;
    check!(xdp_state(&nl, "rt-xt1")? == (XDP_ATTACHED_SKB, id3), "TUN flags 0: {:?}", xdp_state(&nl, "rt-xt1"));
    nl.set_xdp(uidx, -1, 0).map_err(|e| format!("TUN flags 0 detach: errno {e}"))?;
    check!(xdp_state(&nl, "rt-xt1")? == (XDP_ATTACHED_NONE, 0), "TUN detached: {:?}", xdp_state(&nl, "rt-xt1"));

    // Lifetimes: the device holds the program; deleting it frees it.
    for persist in [false, true] {
        let d = Tun::create(n.path, "rt-xt2", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
        let p = ret_prog(XDP_PASS)?;
        let id = bpf::prog_id(raw(&p))?;
        attach(&nl, "rt-xt2", &p)?;
        drop(p);
        check!(bpf::prog_exists(id), "an attached program was freed with its fd (persist {persist})");
        if persist {
            ioctl_val(d.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
            drop(d);
            check!(bpf::prog_exists(id), "a persistent device's program was freed with its file");
            sh("ip link del rt-xt2")?;
        } else {
            drop(d);
        }
        check!(!link_exists("rt-xt2"), "device left (persist {persist})");
        check!(bpf::wait_prog_freed(id), "the program of a deleted device was not freed (persist {persist})");
    }

    // Every queue detached: the program is taken, and runs on the queues
    // attached again.
    let q = mq_open(n.path, "rt-xt3", IFF_TAP | IFF_NO_PI, 2)?;
    quiet_up("rt-xt3")?;
    for t in &q {
        setqueue(t, IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    }
    let dropper = ret_prog(XDP_DROP)?;
    let did = bpf::prog_id(raw(&dropper))?;
    attach(&nl, "rt-xt3", &dropper)?;
    check!(xdp_state(&nl, "rt-xt3")? == (XDP_ATTACHED_DRV, did), "no queue attached: {:?}", xdp_state(&nl, "rt-xt3"));
    for t in &q {
        setqueue(t, IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
        set_nonblock(t, true)?;
    }
    let rx = Rx::open("rt-xt3")?;
    let c0 = counters("rt-xt3")?;
    for (i, t) in q.iter().enumerate() {
        let f = xframe(i as u32, 80);
        check!(t.write(&f) == Ok(f.len()), "queue {i}: write after re-attach");
    }
    let stack = rx.frames(Duration::from_millis(200));
    let d = delta(&c0, &counters("rt-xt3")?);
    check!(stack.is_empty() && d == Counters { rx_dropped: 2, ..ZERO }, "DROP after re-attach: {} frames at the stack, counters {d:?}", stack.len());
    // Replaced while a queue is detached; that queue's writes see it.
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    let passer = ret_prog(XDP_PASS)?;
    attach(&nl, "rt-xt3", &passer)?;
    setqueue(&q[1], IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
    let f = xframe(9, 80);
    check!(q[1].write(&f) == Ok(f.len()), "write after the replacement");
    let stack = rx.frames(Duration::from_millis(500));
    check!(stack == [f.clone()], "PASS after re-attach: {} frames at the stack", stack.len());
    drop(dropper);
    check!(bpf::wait_prog_freed(did), "the replaced program {did} was not freed");
    drop(q);
    check!(!link_exists("rt-xt3"), "rt-xt3 left");
    drop(p3);
    drop(passer);
    check!(bpf::wait_prog_freed(id3), "program {id3} not freed after its devices went");
    Ok(())
}

/// Each action on each write path of a single-queue TAP. What tun.ko
/// does (7.3 and 6.12, tun.c `tun_xdp_act()`, `do_xdp_generic()`):
///
/// - native (non-blocking write, `tun_build_skb()`): PASS delivers and
///   counts `rx_packets`; DROP, ABORTED and an unknown value count one
///   `rx_dropped`; TX and REDIRECT count `rx_packets`/`rx_bytes` on the
///   TAP (`dev_sw_netstats_rx_add()`) and queue an xdp_frame, on the TAP's
///   own ring for TX;
/// - generic (blocking write): PASS delivers and counts; DROP, ABORTED,
///   unknown count nothing at all; TX and REDIRECT count nothing on the
///   receiving side (the skb goes out through `ndo_start_xmit`);
/// - the write returns the whole length in every case; the frame read
///   back counts `tx_packets`/`tx_bytes` on the device read;
/// - REDIRECT to a device that is down or to no device: native counts
///   one `rx_dropped`, generic nothing;
/// - native XDP_TX into a full ring (`txqueuelen` 4): every frame counts
///   `rx_packets`, each one the ring refuses one `tx_dropped`.
///
/// With `IFF_VNET_HDR` (size 12) the XDP_TX frame comes back behind a
/// zeroed header (7.3 zeroes the padding, 6.12 leaves it) and `tx_bytes`
/// counts the header (`tun_put_user_xdp()`); a header with `gso_type`
/// sends a non-blocking write down the generic path (DROP: no
/// `rx_dropped`). On a two-queue TAP an XDP_TX frame lands on the queue
/// of `smp_processor_id() % numqueues` (`tun_xdp_xmit()`), whichever
/// queue wrote it.
pub fn t_xdp_actions(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let a = xtap(n, "rt-xa0", IFF_TAP | IFF_NO_PI)?;
    let b = xtap(n, "rt-xa1", IFF_TAP | IFF_NO_PI)?;
    let rx = Rx::open("rt-xa0")?;
    let len = 98usize;
    let l = len as u64;
    let mut seq = 0;
    for native in [true, false] {
        set_nonblock(&a, native)?;
        let path = if native { "native" } else { "generic" };
        for (act, what) in [(XDP_PASS, "PASS"), (XDP_DROP, "DROP"), (XDP_ABORTED, "ABORTED"), (99, "99"), (XDP_TX, "TX"), (XDP_REDIRECT, "REDIRECT")] {
            let p = if act == XDP_REDIRECT { redirect_prog("rt-xa1")? } else { ret_prog(act)? };
            attach(&nl, "rt-xa0", &p)?;
            seq += 1;
            let f = xframe(seq, len);
            let (a0, b0) = (counters("rt-xa0")?, counters("rt-xa1")?);
            let w = a.write(&f);
            check!(w == Ok(len), "{path} {what}: write {w:?}");
            let stack = rx.frames(Duration::from_millis(200));
            let back = drain(&a);
            let there = drain(&b);
            let (da, db) = (delta(&a0, &counters("rt-xa0")?), delta(&b0, &counters("rt-xa1")?));
            println!("# {path} {what}: {} at the stack, {} back, {} redirected; rt-xa0 {da:?}; rt-xa1 {db:?}", stack.len(), back.len(), there.len());
            let one = |v: bool| -> Vec<Vec<u8>> { if v { vec![f.clone()] } else { vec![] } };
            check!(stack == one(act == XDP_PASS), "{path} {what}: {} frames at the stack", stack.len());
            check!(back == one(act == XDP_TX), "{path} {what}: {} frames back on the writer's fd", back.len());
            check!(there == one(act == XDP_REDIRECT), "{path} {what}: {} frames on rt-xa1", there.len());
            let dropped = matches!(act, XDP_DROP | XDP_ABORTED | 99);
            let rx_n = u64::from(act == XDP_PASS || (native && matches!(act, XDP_TX | XDP_REDIRECT)));
            let tx_n = u64::from(act == XDP_TX);
            let want_a = Counters { rx_packets: rx_n, rx_bytes: rx_n * l, rx_dropped: u64::from(native && dropped), tx_packets: tx_n, tx_bytes: tx_n * l, tx_dropped: 0 };
            let rd = u64::from(act == XDP_REDIRECT);
            let want_b = Counters { tx_packets: rd, tx_bytes: rd * l, ..ZERO };
            check!(da == want_a, "{path} {what}: rt-xa0 counters {da:?}, expected {want_a:?}");
            check!(db == want_b, "{path} {what}: rt-xa1 counters {db:?}, expected {want_b:?}");
        }
    }
    // REDIRECT to a device that is down, and to no device: native drops
    // and counts one rx_dropped, generic drops uncounted.
    sh("ip link set rt-xa1 down")?;
    for native in [true, false] {
        set_nonblock(&a, native)?;
        let path = if native { "native" } else { "generic" };
        for (target, what) in [(ifindex("rt-xa1"), "a down device"), (0x7fff_fff0, "no device")] {
            attach(&nl, "rt-xa0", &bpf::xdp(&bpf::redirect(target))?)?;
            seq += 1;
            let f = xframe(seq, len);
            let (a0, b0) = (counters("rt-xa0")?, counters("rt-xa1")?);
            let w = a.write(&f);
            check!(w == Ok(len), "{path} REDIRECT to {what}: write {w:?}");
            let (stack, back, there) = (rx.frames(Duration::from_millis(200)), drain(&a), drain(&b));
            check!(stack.is_empty() && back.is_empty() && there.is_empty(), "{path} REDIRECT to {what}: frames at the stack {}, back {}, on rt-xa1 {}", stack.len(), back.len(), there.len());
            let (da, db) = (delta(&a0, &counters("rt-xa0")?), delta(&b0, &counters("rt-xa1")?));
            let want_a = Counters { rx_dropped: u64::from(native), ..ZERO };
            check!(da == want_a && db == ZERO, "{path} REDIRECT to {what}: rt-xa0 {da:?} (expected {want_a:?}), rt-xa1 {db:?}");
        }
    }
    detach(&nl, "rt-xa0")?;
    drop((a, b));

    // XDP_TX into a full ring (txqueuelen 4), native: each frame is
    // counted received (tun_xdp_tx() gives no error for a frame the ring
    // refused) and each refused one is a tx_dropped.
    let f4 = xtap(n, "rt-xa4", IFF_TAP | IFF_NO_PI)?;
    set_nonblock(&f4, true)?;
    sh("ip link set rt-xa4 qlen 4")?;
    attach(&nl, "rt-xa4", &ret_prog(XDP_TX)?)?;
    let c0 = counters("rt-xa4")?;
    let sent: Vec<Vec<u8>> = (0..6).map(|i| xframe(200 + i, len)).collect();
    for f in &sent {
        check!(f4.write(f) == Ok(len), "XDP_TX into a full ring: write");
    }
    read_back(&f4, &sent[..4], 0, "XDP_TX, 6 into a ring of 4")?;
    let d = delta(&c0, &counters("rt-xa4")?);
    let want = Counters { rx_packets: 6, rx_bytes: 6 * l, tx_packets: 4, tx_bytes: 4 * l, tx_dropped: 2, ..ZERO };
    check!(d == want, "XDP_TX, 6 into a ring of 4: counters {d:?}, expected {want:?}");
    drop(f4);

    // A vnet header.
    const HL: usize = 12;
    let v = xtap(n, "rt-xa2", IFF_TAP | IFF_NO_PI | IFF_VNET_HDR)?;
    ioctl_int(v.fd(), TUNSETVNETHDRSZ, HL as i32).map_err(|e| format!("TUNSETVNETHDRSZ: {e}"))?;
    set_nonblock(&v, true)?;
    let tx = ret_prog(XDP_TX)?;
    attach(&nl, "rt-xa2", &tx)?;
    let f = xframe(100, len);
    let mut w = vec![0u8; HL];
    w[0] = crate::vnet::F_DATA_VALID;
    w.extend_from_slice(&f);
    let c0 = counters("rt-xa2")?;
    check!(v.write(&w) == Ok(w.len()), "vnet TX: write");
    let mut buf = vec![0xeeu8; 2048];
    let r = v.read_timeout(&mut buf, Duration::from_secs(2)).map_err(|e| format!("vnet TX: read: errno {e}"))?;
    let pad = if kernel_is_7_3() { [0, 0] } else { [0xee, 0xee] };
    check!(r == HL + len, "vnet TX: read {r} bytes, expected {}", HL + len);
    check!(buf[..10] == [0; 10] && buf[10..HL] == pad && buf[HL..r] == f[..], "vnet TX: header {:02x?} or frame differs", &buf[..HL]);
    let d = delta(&c0, &counters("rt-xa2")?);
    let want = Counters { rx_packets: 1, rx_bytes: l, tx_packets: 1, tx_bytes: l + HL as u64, ..ZERO };
    check!(d == want, "vnet TX: counters {d:?}, expected {want:?} (tx_bytes with the header)");
    // gso_type: the generic path even without O_NONBLOCK's... with it.
    let drop_p = ret_prog(XDP_DROP)?;
    attach(&nl, "rt-xa2", &drop_p)?;
    let (src, dst) = ([10, 61, 0, 2], [10, 61, 0, 1]);
    let data: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
    let mut seg = crate::vnet::tcp_seg(src, dst, 4000, 4001, 1, 1, 0x10, &[], &data);
    let s = crate::vnet::pseudo_sum(src, dst, 6, 20 + data.len());
    seg[36..38].copy_from_slice(&s.to_be_bytes());
    let gso_frame = pkt::eth([2, 0, 0, 0, 0x58, 2], [2, 0, 0, 0, 0x58, 1], pkt::ETH_P_IP, &seg);
    let h = crate::vnet::Vnet { flags: crate::vnet::F_NEEDS_CSUM, gso_type: crate::vnet::GSO_TCPV4, hdr_len: 54, gso_size: 100, csum_start: 34, csum_offset: 16 };
    let mut gw = h.bytes().to_vec();
    gw.resize(HL, 0);
    gw.extend_from_slice(&gso_frame);
    let mut plain = vec![0u8; HL];
    plain.extend_from_slice(&gso_frame);
    for (what, wbuf, want_dropped) in [("gso_type TCPV4 (generic)", &gw, 0), ("no gso_type (native)", &plain, 1)] {
        let c0 = counters("rt-xa2")?;
        let r = v.write(wbuf);
        check!(r == Ok(wbuf.len()), "DROP, {what}: write {r:?}");
        let d = delta(&c0, &counters("rt-xa2")?);
        check!(d == Counters { rx_dropped: want_dropped, ..ZERO }, "DROP, {what}: counters {d:?}, expected rx_dropped {want_dropped}");
    }
    check!(drain(&v).is_empty(), "DROP let a frame back");
    drop(v);

    // Two queues: XDP_TX lands on the queue of the writer's CPU.
    let q = mq_open(n.path, "rt-xa3", IFF_TAP | IFF_NO_PI, 2)?;
    quiet_up("rt-xa3")?;
    for t in &q {
        drain(t);
        set_nonblock(t, true)?;
    }
    attach(&nl, "rt-xa3", &tx)?;
    let cpus = thread::available_parallelism().map(|c| c.get()).unwrap_or(1).min(4);
    let landed = |q: &[Tun], writer: usize, cpu: usize, seq: u32| -> Result<Vec<usize>, String> {
        let f = xframe(seq, 70);
        thread::scope(|s| {
            s.spawn(|| -> TestResult {
                pin_to_cpu(cpu)?;
                check!(q[writer].write(&f) == Ok(f.len()), "write on queue {writer}, CPU {cpu}");
                Ok(())
            })
            .join()
            .map_err(|_| "writer panicked".to_string())?
        })?;
        let mut at = Vec::new();
        for (i, t) in q.iter().enumerate() {
            for g in drain(t) {
                check!(g == f, "queue {i}: a frame that was not sent");
                at.push(i);
            }
        }
        Ok(at)
    };
    let mut seen = Vec::new();
    for cpu in 0..cpus {
        for writer in 0..2 {
            let at = landed(&q, writer, cpu, (cpu * 2 + writer) as u32)?;
            seen.push(format!("cpu{cpu}/q{writer}->{at:?}"));
            check!(at == [cpu % 2], "XDP_TX from queue {writer} on CPU {cpu}: landed on {at:?}, expected queue {} (CPU % 2 queues)", cpu % 2);
        }
    }
    // One queue detached: every frame on the other.
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    for cpu in 0..cpus {
        let at = landed(&q, 0, cpu, 50 + cpu as u32)?;
        check!(at == [0], "XDP_TX on CPU {cpu}, one queue attached: landed on {at:?}");
    }
    println!("# XDP_TX on two queues: {}", seen.join(" "));
    Ok(())
}

/// Reads what `dst` holds and checks it is `sent`, in order, each behind
/// a zero vnet header of `hl` bytes (0: none).
fn read_back(dst: &Tun, sent: &[Vec<u8>], hl: usize, what: &str) -> TestResult {
    let got = drain(dst);
    check!(got.len() == sent.len(), "{what}: {} frames read, {} sent", got.len(), sent.len());
    for (i, (g, f)) in got.iter().zip(sent).enumerate() {
        check!(g.len() == hl + f.len() && g[..hl].iter().all(|&b| b == 0) && g[hl..] == f[..], "{what}: frame {i} differs ({} bytes, {} sent)", g.len(), f.len());
    }
    Ok(())
}

/// Frames sent (by `send`, one a call) into a source whose XDP program
/// redirects them to the TAP `dst` (named `dst_name`, vnet header `hl`
/// bytes or 0) are read from its file byte for byte, in order; `dst`
/// counts each read as tun.ko does (`tun_put_user_xdp()`: `tx_packets`,
/// `tx_bytes` with the header), nothing else.
fn redirected_into(send: &dyn Fn(&[u8]) -> TestResult, dst: &Tun, dst_name: &str, hl: usize, count: u32, what: &str) -> TestResult {
    let c0 = counters(dst_name)?;
    let sent: Vec<Vec<u8>> = (0..count).map(|i| xframe(i, 60 + (i as usize * 7) % 400)).collect();
    for f in &sent {
        send(f)?;
    }
    read_back(dst, &sent, hl, what)?;
    let d = delta(&c0, &counters(dst_name)?);
    let bytes: u64 = sent.iter().map(|f| (f.len() + hl) as u64).sum();
    let want = Counters { tx_packets: u64::from(count), tx_bytes: bytes, ..ZERO };
    check!(d == want, "{what}: {dst_name} counters {d:?}, expected {want:?}");
    Ok(())
}

/// `ndo_xdp_xmit` into a TAP from another TAP's native XDP_REDIRECT:
/// 300 frames read back in order and byte for byte; with `IFF_VNET_HDR`
/// behind a zeroed header; the source counts each as received.
pub fn t_xdp_redirect_tap(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let src = xtap(n, "rt-xr0", IFF_TAP | IFF_NO_PI)?;
    set_nonblock(&src, true)?;
    let d1 = xtap(n, "rt-xr1", IFF_TAP | IFF_NO_PI)?;
    let d2 = xtap(n, "rt-xr2", IFF_TAP | IFF_NO_PI | IFF_VNET_HDR)?;
    let send = |f: &[u8]| -> TestResult {
        let r = src.write(f);
        check!(r == Ok(f.len()), "source write: {r:?}");
        Ok(())
    };
    for (dst, name, hl, count) in [(&d1, "rt-xr1", 0, 300), (&d2, "rt-xr2", 10, 100)] {
        attach(&nl, "rt-xr0", &redirect_prog(name)?)?;
        let c0 = counters("rt-xr0")?;
        redirected_into(&send, dst, name, hl, count, &format!("rt-xr0 -> {name}"))?;
        let d = delta(&c0, &counters("rt-xr0")?);
        let bytes: u64 = (0..count).map(|i| (60 + (i as usize * 7) % 400) as u64).sum();
        check!(d == Counters { rx_packets: u64::from(count), rx_bytes: bytes, ..ZERO }, "source counters {d:?}");
    }
    Ok(())
}

/// Creates the veth pair `a`/`b`, both quiet and up: Ok(false) where the
/// guest has no veth (scripts/run-guest.sh puts no veth.ko in the
/// initramfs; `RTUN_BENCH_DIR=DIR` with veth.ko in DIR gets it there, as
/// run-guest.sh copies that directory's modules).
pub(crate) fn veth_pair(a: &str, b: &str) -> Result<bool, String> {
    let _ = sh(&format!("ip link del {a}"));
    if !module_loaded("veth") && std::path::Path::new(&format!("{MODDIR}/veth.ko")).exists() {
        sh(&format!("insmod {MODDIR}/veth.ko"))?;
    }
    // iproute2's: busybox's ip takes `type veth` but not the peer's name.
    let ip = if std::path::Path::new(IPROUTE2).exists() { IPROUTE2 } else { "ip" };
    if sh(&format!("{ip} link add {a} type veth peer name {b}")).is_err() {
        return Ok(false);
    }
    let up = quiet_up(a).and_then(|_| quiet_up(b)).and_then(|_| {
        // Up is not yet sending: until the link watch activates a device
        // (carrier on, both ends up) its qdisc is noop, which drops what a
        // packet socket sends there and reports success. Activated, a
        // veth's is noqueue.
        let nl = Nl::open(0).map_err(|e| e.to_string())?;
        for dev in [a, b] {
            let t0 = Instant::now();
            let mut waited = false;
            while nl.link_by_name(dev).ok().and_then(|l| l.qdisc).as_deref() != Some("noqueue") {
                check!(t0.elapsed() < Duration::from_secs(15), "{dev}: qdisc still {:?} 15 s after up", nl.link_by_name(dev).ok().and_then(|l| l.qdisc));
                thread::sleep(Duration::from_millis(20));
                waited = true;
            }
            if waited {
                println!("# {dev}: activated (qdisc noqueue) {} ms after up", t0.elapsed().as_millis());
            }
        }
        Ok(())
    });
    if up.is_err() {
        let _ = sh(&format!("ip link del {a}"));
    }
    up.map(|_| true)
}

/// `ndo_xdp_xmit` from a veth: rt-v1's native program redirects to the
/// TAP, and 300 frames sent into rt-v0 arrive on the TAP's file byte for
/// byte and in order; with a vnet header (zeroed) too, `tx_bytes`
/// counting it (the xdp_frame path: an skb would be counted without).
/// Skipped where the guest has no veth (`veth_pair()`).
pub fn t_xdp_redirect_veth(n: Node) -> TestResult {
    if !veth_pair("rt-v0", "rt-v1")? {
        skip!("no veth in this guest (scripts/run-guest.sh puts no veth.ko in the initramfs; RTUN_BENCH_DIR=DIR with veth.ko in DIR does)");
    }
    let r = (|| -> TestResult {
        let nl = Nl::open(0).map_err(|e| e.to_string())?;
        let pk = Packet::open("rt-v0")?;
        let send = |f: &[u8]| pk.send(f);
        for (flags, name, hl) in [(IFF_TAP | IFF_NO_PI, "rt-xv0", 0), (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, "rt-xv1", 10)] {
            let t = xtap(n, name, flags)?;
            attach(&nl, "rt-v1", &redirect_prog(name)?)?;
            redirected_into(&send, &t, name, hl, 300, &format!("rt-v0 -> rt-v1 XDP -> {name}"))?;
            detach(&nl, "rt-v1")?;
        }
        Ok(())
    })();
    let _ = sh("ip link del rt-v0");
    r
}

/// Frames redirected into a TAP's ring and never read: the ring shrunk
/// (`txqueuelen` 4) keeps the four oldest and frees the rest, uncounted;
/// a full ring counts `tx_dropped` per frame refused; a detached queue's
/// frames are freed (none there after re-attach); frames redirected while
/// every queue is detached are dropped; the file closed, and a persistent
/// device deleted under its open file, with frames queued: the devices go
/// and their programs are freed (kmemleak checks the frames on the debug
/// kernels).
pub fn t_xdp_frames_teardown(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let src = xtap(n, "rt-xf0", IFF_TAP | IFF_NO_PI)?;
    set_nonblock(&src, true)?;
    let send = |f: &[u8]| -> TestResult {
        let r = src.write(f);
        check!(r == Ok(f.len()), "source write: {r:?}");
        Ok(())
    };
    let frames = |from: u32, k: u32| -> Vec<Vec<u8>> { (from..from + k).map(|i| xframe(i, 90)).collect() };

    // The ring shrunk under 50 frames.
    let d = xtap(n, "rt-xf1", IFF_TAP | IFF_NO_PI)?;
    attach(&nl, "rt-xf0", &redirect_prog("rt-xf1")?)?;
    let first = frames(0, 50);
    for f in &first {
        send(f)?;
    }
    let c0 = counters("rt-xf1")?;
    sh("ip link set rt-xf1 qlen 4")?;
    read_back(&d, &first[..4], 0, "after the shrink to 4")?;
    let more = frames(50, 6);
    for f in &more {
        send(f)?;
    }
    read_back(&d, &more[..4], 0, "6 into a ring of 4")?;
    let dd = delta(&c0, &counters("rt-xf1")?);
    // tun.c frees what the shrink has no room for uncounted; rust_tun
    // counts it in tx_dropped (a deliberate difference, see `t_txqlen`).
    let purged = if n.module == "rust_tun" { 46 } else { 0 };
    check!(dd == Counters { tx_packets: 8, tx_bytes: 8 * 90, tx_dropped: 2 + purged, ..ZERO }, "ring of 4: counters {dd:?} (the shrink's 46 frames: {purged} counted; each refused frame one tx_dropped)");
    sh("ip link set rt-xf1 qlen 500")?;
    drop(d);

    // A detached queue's frames; every queue detached.
    let q = mq_open(n.path, "rt-xf2", IFF_TAP | IFF_NO_PI, 2)?;
    quiet_up("rt-xf2")?;
    attach(&nl, "rt-xf0", &redirect_prog("rt-xf2")?)?;
    let pinned = |fs: &[Vec<u8>]| -> TestResult {
        thread::scope(|s| {
            s.spawn(|| -> TestResult {
                pin_to_cpu(0)?;
                for f in fs {
                    send(f)?;
                }
                Ok(())
            })
            .join()
            .map_err(|_| "sender panicked".to_string())?
        })
    };
    pinned(&frames(100, 20))?;
    let ready = poll_fd(q[0].fd(), libc::POLLIN, Duration::ZERO).unwrap_or(0);
    check!(ready & libc::POLLIN != 0, "the frames sent from CPU 0 are not on queue 0");
    setqueue(&q[0], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    setqueue(&q[0], IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
    let left: usize = q.iter().map(|t| drain(t).len()).sum();
    check!(left == 0, "{left} frames left after the queue was detached and attached again");
    for t in &q {
        setqueue(t, IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    }
    let c0 = counters("rt-xf2")?;
    pinned(&frames(200, 5))?;
    for t in &q {
        setqueue(t, IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
    }
    let left: usize = q.iter().map(|t| drain(t).len()).sum();
    let dd = delta(&c0, &counters("rt-xf2")?);
    println!("# redirected into a TAP with no queue attached: {left} read after, counters {dd:?}");
    check!(left == 0, "{left} frames from the time no queue was attached");
    pinned(&frames(300, 3))?;
    let got: usize = q.iter().map(|t| drain(t).len()).sum();
    check!(got == 3, "{got} frames of 3 after the queues came back");

    // Closed, and deleted under its file, with frames queued and a program.
    for (name, persist) in [("rt-xf3", false), ("rt-xf4", true)] {
        let t = xtap(n, name, IFF_TAP | IFF_NO_PI)?;
        let p = ret_prog(XDP_PASS)?;
        let id = bpf::prog_id(raw(&p))?;
        attach(&nl, name, &p)?;
        drop(p);
        attach(&nl, "rt-xf0", &redirect_prog(name)?)?;
        for f in frames(400, 30) {
            send(&f)?;
        }
        let ready = poll_fd(t.fd(), libc::POLLIN, Duration::ZERO).unwrap_or(0);
        check!(ready & libc::POLLIN != 0, "{name}: no frame queued");
        if persist {
            ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
            sh(&format!("ip link del {name}"))?;
            check!(!link_exists(name), "{name} left after ip link del");
            let mut buf = [0u8; 2048];
            expect_errno!(t.read(&mut buf), libc::EBADFD, "read of the deleted device's file");
            drop(t);
        } else {
            drop(t);
            check!(!link_exists(name), "{name} left after its file closed");
        }
        check!(bpf::wait_prog_freed(id), "{name}'s program was not freed");
    }
    detach(&nl, "rt-xf0")?;
    Ok(())
}

/// Programs replaced and removed 250 times and more, by rtnetlink, while
/// two writers (a non-blocking one, the native path, and a blocking one,
/// the generic path, on the two queues of a TAP) write and readers read
/// both queues and a redirect target: no write fails but with `EAGAIN`,
/// frames come back (TX) and reach the target (REDIRECT) during the
/// swaps, and after them a TX program and then none work.
pub fn t_xdp_swap_under_traffic(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let q = mq_open(n.path, "rt-xs0", IFF_TAP | IFF_NO_PI, 2)?;
    quiet_up("rt-xs0")?;
    set_nonblock(&q[0], true)?;
    for t in &q {
        drain(t);
    }
    let b = xtap(n, "rt-xs1", IFF_TAP | IFF_NO_PI)?;
    let progs = [ret_prog(XDP_PASS)?, ret_prog(XDP_DROP)?, ret_prog(XDP_TX)?, redirect_prog("rt-xs1")?, ret_prog(XDP_ABORTED)?];
    let ids: Vec<u32> = progs.iter().map(|p| bpf::prog_id(raw(p))).collect::<Result<_, _>>()?;
    let stop = AtomicBool::new(false);
    let written = AtomicU32::new(0);
    let bad = AtomicU32::new(0);
    let back = AtomicU32::new(0);
    let redirected = AtomicU32::new(0);
    let (stop, written, bad) = (&stop, &written, &bad);
    let (back, redirected) = (&back, &redirected);
    let swaps = thread::scope(|s| -> Result<usize, String> {
        for t in &q {
            s.spawn(move || {
                let mut i = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    match t.write(&xframe(i, 64 + (i as usize % 64))) {
                        Ok(_) => {
                            written.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(libc::EAGAIN) => {}
                        Err(_) => {
                            bad.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    i = i.wrapping_add(1);
                }
            });
        }
        for (t, count) in [(&q[0], back), (&q[1], back), (&b, redirected)] {
            s.spawn(move || {
                let mut buf = [0u8; 2048];
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(k) = t.read_timeout(&mut buf, Duration::from_millis(20)) {
                        if k >= 14 && buf[12..14] == ETH_P_XDPTEST.to_be_bytes() {
                            count.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
        let start = Instant::now();
        while written.load(Ordering::Relaxed) < 50 && start.elapsed() < Duration::from_secs(10) {
            thread::sleep(Duration::from_millis(5));
        }
        let w0 = written.load(Ordering::Relaxed);
        let mut r = Ok(());
        let mut i = 0;
        let start = Instant::now();
        while i < 250 || ((back.load(Ordering::Relaxed) == 0 || redirected.load(Ordering::Relaxed) == 0) && start.elapsed() < Duration::from_secs(20)) {
            let res = if i % 6 == 5 { detach(&nl, "rt-xs0") } else { attach(&nl, "rt-xs0", &progs[i % 5]) };
            if let Err(e) = res {
                r = Err(format!("swap {i}: {e}"));
                break;
            }
            i += 1;
        }
        let during = written.load(Ordering::Relaxed) - w0;
        stop.store(true, Ordering::Relaxed);
        println!("# {i} swaps; {during} frames written during them; {} back (TX), {} redirected", back.load(Ordering::Relaxed), redirected.load(Ordering::Relaxed));
        r?;
        check!(during > 0, "no frame written during the swaps");
        Ok(i)
    })?;
    check!(bad.load(Ordering::Relaxed) == 0, "{} writes failed with another errno than EAGAIN", bad.load(Ordering::Relaxed));
    check!(back.load(Ordering::Relaxed) > 0, "no XDP_TX frame came back during {swaps} swaps");
    check!(redirected.load(Ordering::Relaxed) > 0, "no frame redirected during {swaps} swaps");
    // Afterwards: TX, then no program.
    for t in q.iter().chain([&b]) {
        drain(t);
    }
    attach(&nl, "rt-xs0", &progs[2])?;
    let f = xframe(0xdead, 100);
    check!(q[0].write(&f) == Ok(f.len()), "write after the swaps");
    let got: Vec<Vec<u8>> = q.iter().flat_map(drain).collect();
    check!(got == [f.clone()], "XDP_TX after the swaps: {} frames back", got.len());
    detach(&nl, "rt-xs0")?;
    let rx = Rx::open("rt-xs0")?;
    check!(q[1].write(&f) == Ok(f.len()), "write without a program");
    let stack = rx.frames(Duration::from_millis(500));
    check!(stack == [f.clone()], "without a program: {} frames at the stack", stack.len());
    drop(progs);
    for id in ids {
        check!(bpf::wait_prog_freed(id), "program {id} not freed after the swaps");
    }
    Ok(())
}

/// The program sees the frame and changes it, on both write paths: a
/// program whose action is the frame's byte 14 (direct packet access)
/// picks PASS, DROP or TX frame by frame, on a plain TAP and behind a
/// vnet header (which the program must not see); `bpf_xdp_adjust_tail()`
/// cutting 10 bytes, then PASS (the stack gets the cut frame) or TX (it
/// comes back cut); `bpf_xdp_adjust_head()` dropping 4 bytes, then TX.
/// Counters as tun.ko keeps them: a PASS counts the length written
/// (`tun_get_user()`'s), a native TX the length after the program.
pub fn t_xdp_adjust(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let len = 120usize;
    let l = len as u64;
    for (flags, name, hl) in [(IFF_TAP | IFF_NO_PI, "rt-xj0", 0usize), (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, "rt-xj1", 10)] {
        let t = xtap(n, name, flags)?;
        let rx = Rx::open(name)?;
        for native in [true, false] {
            set_nonblock(&t, native)?;
            let path = if native { "native" } else { "generic" };
            attach(&nl, name, &bpf::xdp(&bpf::xdp_byte_action(14))?)?;
            let mut seq = 0;
            for act in [XDP_PASS, XDP_DROP, XDP_TX, XDP_PASS, XDP_TX] {
                seq += 1;
                let mut f = xframe(seq, len);
                f[14] = act as u8;
                let mut w = vec![0u8; hl];
                w.extend_from_slice(&f);
                check!(t.write(&w) == Ok(w.len()), "{path} {name}: write");
                let stack = rx.frames(Duration::from_millis(200));
                let back: Vec<Vec<u8>> = drain(&t).into_iter().map(|b| b[hl.min(b.len())..].to_vec()).collect();
                let one = |v: bool| -> Vec<Vec<u8>> { if v { vec![f.clone()] } else { vec![] } };
                check!(stack == one(act == XDP_PASS) && back == one(act == XDP_TX), "{path} {name}: byte 14 = {act}: {} at the stack, {} back", stack.len(), back.len());
            }
            // The tail cut by 10, then PASS or TX; the head moved by 4,
            // then TX.
            for (helper, by, act, what) in [
                (bpf::BPF_FUNC_XDP_ADJUST_TAIL, -10, XDP_PASS, "tail -10, PASS"),
                (bpf::BPF_FUNC_XDP_ADJUST_TAIL, -10, XDP_TX, "tail -10, TX"),
                (bpf::BPF_FUNC_XDP_ADJUST_HEAD, 4, XDP_TX, "head +4, TX"),
            ] {
                attach(&nl, name, &bpf::xdp(&bpf::xdp_adjust(helper, by, act))?)?;
                seq += 1;
                let f = xframe(seq, len);
                let want = if helper == bpf::BPF_FUNC_XDP_ADJUST_TAIL { f[..len - 10].to_vec() } else { f[4..].to_vec() };
                let mut w = vec![0u8; hl];
                w.extend_from_slice(&f);
                let c0 = counters(name)?;
                check!(t.write(&w) == Ok(w.len()), "{path} {name} {what}: write");
                let stack = rx.frames(Duration::from_millis(200));
                let back = drain(&t);
                let d = delta(&c0, &counters(name)?);
                let k = want.len() as u64;
                if act == XDP_PASS {
                    check!(stack == [want.clone()] && back.is_empty(), "{path} {name} {what}: {} at the stack ({:?} bytes), {} back", stack.len(), stack.iter().map(Vec::len).collect::<Vec<_>>(), back.len());
                    let want_c = Counters { rx_packets: 1, rx_bytes: l, ..ZERO };
                    check!(d == want_c, "{path} {name} {what}: counters {d:?}, expected {want_c:?}");
                } else {
                    check!(stack.is_empty() && back.len() == 1, "{path} {name} {what}: {} at the stack, {} back", stack.len(), back.len());
                    check!(back[0].len() == hl + want.len() && back[0][..hl].iter().all(|&b| b == 0) && back[0][hl..] == want[..], "{path} {name} {what}: {} bytes back, expected {}", back[0].len(), hl + want.len());
                    // Read back: an xdp_frame counts the header
                    // (tun_put_user_xdp()), an skb does not.
                    let tx_bytes = if native { k + hl as u64 } else { k };
                    let rx_n = u64::from(native);
                    let want_c = Counters { rx_packets: rx_n, rx_bytes: rx_n * k, tx_packets: 1, tx_bytes, ..ZERO };
                    check!(d == want_c, "{path} {name} {what}: counters {d:?}, expected {want_c:?}");
                }
            }
        }
        detach(&nl, name)?;
    }
    Ok(())
}

/// An XDP program writing what it sees of the queue into the frame:
/// `rx_queue_index` at byte 14, `ingress_ifindex` at byte 18 (native
/// endian), then `XDP_TX`; `XDP_DROP` for a frame under 22 bytes.
pub(crate) fn rxq_prog() -> Result<OwnedFd, String> {
    use bpf::{exit, insn, mov_r0};
    bpf::xdp(&[
        // r2 = ctx->data; r3 = ctx->data_end; r4 = ctx->rx_queue_index;
        // r5 = ctx->ingress_ifindex
        insn(0x61, 2, 1, 0, 0),
        insn(0x61, 3, 1, 4, 0),
        insn(0x61, 4, 1, 16, 0),
        insn(0x61, 5, 1, 12, 0),
        // r6 = r2 + 22; if r6 > r3 goto drop
        insn(0xbf, 6, 2, 0, 0),
        insn(0x07, 6, 0, 0, 22),
        insn(0x2d, 6, 3, 4, 0),
        // *(u32 *)(r2 + 14) = r4; *(u32 *)(r2 + 18) = r5; return XDP_TX
        insn(0x63, 2, 4, 14, 0),
        insn(0x63, 2, 5, 18, 0),
        mov_r0(XDP_TX as i32),
        exit(),
        // drop:
        mov_r0(XDP_DROP as i32),
        exit(),
    ])
}

/// What the queue `t` is, as the program of [`rxq_prog`] sees it on
/// each write path: (`rx_queue_index`, `ingress_ifindex`), one pair for
/// the native path (non-blocking) and one for the generic path; the
/// frames come back by `XDP_TX` on whichever of `all` the writer's CPU
/// picks.
fn seen_queue(t: &Tun, all: &[&Tun], seq: u32) -> Result<[(u32, i32); 2], String> {
    let mut out = [(0, 0); 2];
    for (i, native) in [true, false].into_iter().enumerate() {
        set_nonblock(t, native)?;
        let f = xframe(seq * 2 + i as u32, 80);
        check!(t.write(&f) == Ok(f.len()), "write");
        // The generic path's XDP_TX is transmitted by the stack.
        let deadline = Instant::now() + Duration::from_secs(2);
        let back = loop {
            let back: Vec<Vec<u8>> = all.iter().flat_map(|q| drain(q)).collect();
            if !back.is_empty() || Instant::now() > deadline {
                break back;
            }
            thread::sleep(Duration::from_millis(10));
        };
        check!(back.len() == 1 && back[0].len() == f.len() && back[0][22..] == f[22..], "{} path: {} frames back", if native { "native" } else { "generic" }, back.len());
        let b = &back[0];
        out[i] = (u32::from_ne_bytes(b[14..18].try_into().unwrap()), i32::from_ne_bytes(b[18..22].try_into().unwrap()));
    }
    Ok(out)
}

/// The receive queue a program sees (`rx_queue_index`,
/// `ingress_ifindex`: tun.c's per-file `xdp_rxq`): each queue of a
/// three-queue TAP its own index on both write paths; after a queue is
/// detached, the queue tun.c moves into its place its new index, and the
/// detached one the last index when it comes back; and a file whose
/// device was deleted, attached to a new device, that device.
pub fn t_xdp_rxq(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let q = mq_open(n.path, "rt-xq0", IFF_TAP | IFF_NO_PI, 3)?;
    quiet_up("rt-xq0")?;
    let prog = rxq_prog()?;
    attach(&nl, "rt-xq0", &prog)?;
    let idx = ifindex("rt-xq0");
    let all: Vec<&Tun> = q.iter().collect();
    for (i, t) in q.iter().enumerate() {
        drain(t);
        let seen = seen_queue(t, &all, i as u32)?;
        check!(seen == [(i as u32, idx); 2], "queue {i}: the program saw (queue, ifindex) {seen:?}, expected ({i}, {idx}) on both paths");
    }
    // Queue 0 detached: the last queue (2) takes index 0.
    setqueue(&q[0], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    let attached = [&q[1], &q[2]];
    for (t, want) in [(&q[2], 0u32), (&q[1], 1)] {
        let seen = seen_queue(t, &attached, 10 + want)?;
        check!(seen == [(want, idx); 2], "queue 0 detached: a queue saw {seen:?}, expected ({want}, {idx})");
    }
    setqueue(&q[0], IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
    let seen = seen_queue(&q[0], &all, 20)?;
    check!(seen == [(2, idx); 2], "queue 0 back: it saw {seen:?}, expected (2, {idx})");
    drop(q);

    // A file whose device is deleted under it, attached to a new one.
    let a = xtap(n, "rt-xq1", IFF_TAP | IFF_NO_PI)?;
    attach(&nl, "rt-xq1", &prog)?;
    let seen = seen_queue(&a, &[&a], 30)?;
    check!(seen == [(0, ifindex("rt-xq1")); 2], "rt-xq1: the program saw {seen:?}");
    sh("ip link del rt-xq1")?;
    let mut ifr = IfReq::new("rt-xq2", IFF_TAP | IFF_NO_PI);
    ioctl_ptr(a.fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("TUNSETIFF rt-xq2 on the file rt-xq1 had: errno {e}"))?;
    quiet_up("rt-xq2")?;
    attach(&nl, "rt-xq2", &prog)?;
    drain(&a);
    let idx2 = ifindex("rt-xq2");
    let seen = seen_queue(&a, &[&a], 40)?;
    check!(seen == [(0, idx2); 2], "the file moved to rt-xq2: the program saw {seen:?}, expected (0, {idx2})");
    detach(&nl, "rt-xq2")?;
    Ok(())
}

/// Frames redirected into `dst` (named `name`) through a fresh source
/// TAP `rt-xm0` of `n`'s driver, whose file and program are gone again
/// when this returns.
fn redirect_through_source(n: Node, name: &str, frames: &[Vec<u8>]) -> TestResult {
    let nl = Nl::open(0).map_err(|e| e.to_string())?;
    let src = xtap(n, "rt-xm0", IFF_TAP | IFF_NO_PI)?;
    set_nonblock(&src, true)?;
    let r = redirect_prog(name)?;
    let rid = bpf::prog_id(raw(&r))?;
    attach(&nl, "rt-xm0", &r)?;
    drop(r);
    for f in frames {
        let w = src.write(f);
        check!(w == Ok(f.len()), "source write: {w:?}");
    }
    drop(src);
    check!(bpf::wait_prog_freed(rid), "the source's redirect program was not freed");
    Ok(())
}

/// `rmmod` with a native program attached to a TAP and redirected
/// frames in its ring. Held by its open file, the TAP pins the module:
/// rmmod is refused, and the frames are read back byte for byte after;
/// the file closed with frames queued, the device, its frames and its
/// program go, and the module unloads and loads again. Persistent
/// (`TUNSETPERSIST`), the device pins the module without a file: rmmod
/// is refused, the program stays, and frames queued on a reattached
/// file are there until `ip link del`; then the module unloads. kmemleak
/// checks the frames on the debug kernels.
pub fn t_xdp_across_rmmod(_: Node) -> TestResult {
    load("rust_tun")?;
    let n = RUST;
    let frames: Vec<Vec<u8>> = (0..40).map(|i| xframe(i, 60 + i as usize * 11)).collect();
    let refused = |what: &str| -> TestResult {
        let r = crate::hardening::delete_module("rust_tun");
        check!(matches!(r, Err(e) if e == libc::EAGAIN || e == libc::EBUSY), "rmmod with {what}: {r:?}");
        Ok(())
    };
    let unload_load = || -> TestResult {
        crate::hardening::delete_module("rust_tun").map_err(|e| format!("rmmod: errno {e} ({})", errname(e)))?;
        crate::hardening::finit_module("rust_tun").map_err(|e| format!("reload: errno {e}"))
    };
    for persist in [false, true] {
        let nl = Nl::open(0).map_err(|e| e.to_string())?;
        let dst = xtap(n, "rt-xm1", IFF_TAP | IFF_NO_PI)?;
        let p = ret_prog(XDP_PASS)?;
        let id = bpf::prog_id(raw(&p))?;
        attach(&nl, "rt-xm1", &p)?;
        drop((p, nl));
        redirect_through_source(n, "rt-xm1", &frames)?;
        if !persist {
            refused("rt-xm1's file open, 40 frames queued")?;
            check!(bpf::prog_exists(id), "rt-xm1's program freed while its file is open");
            read_back(&dst, &frames, 0, "after the refused rmmod")?;
            redirect_through_source(n, "rt-xm1", &frames[..10])?;
            drop(dst);
        } else {
            ioctl_val(dst.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
            // The file's close frees its queue's frames (tun.c purges the
            // ring on detach).
            drop(dst);
            refused("a persistent rt-xm1 and no file")?;
            check!(bpf::prog_exists(id), "the persistent rt-xm1's program freed");
            let dst = Tun::create(n.path, "rt-xm1", IFF_TAP | IFF_NO_PI).map_err(|e| format!("reattach rt-xm1: errno {e}"))?;
            read_back(&dst, &[], 0, "reattached after the close")?;
            redirect_through_source(n, "rt-xm1", &frames[..10])?;
            sh("ip link del rt-xm1")?;
            drop(dst);
        }
        check!(!link_exists("rt-xm1"), "rt-xm1 left (persist {persist})");
        check!(bpf::wait_prog_freed(id), "rt-xm1's program not freed (persist {persist})");
        unload_load()?;
    }
    Ok(())
}
