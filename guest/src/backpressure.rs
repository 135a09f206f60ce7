//! 7.3's `IFF_BACKPRESSURE`, against tun.c with the same expectations: a
//! queue whose ring fills is stopped (tun.c's `tun_net_xmit()`), so what
//! comes next waits in the qdisc instead of being dropped at the ring; a
//! reader that has taken half the ring wakes it (`tun_ring_consume()`,
//! `__tun_wake_queue()`); attach, detach, `TUNSETIFF`, a resize and the
//! link going down and up leave no queue stopped for good
//! (`tun_force_wake_queue()`, `__tun_detach()`, `tun_net_close()`); closing
//! and deleting a stopped device frees what it held. 6.12's tun.c has no
//! such flag: every test here is skipped there.
//!
//! The test kernel has no `NET_SCHED`, only the default qdiscs of
//! sch_generic.c and sch_mq.c: `pfifo_fast` on a single-queue device, `mq`
//! with a `pfifo_fast` per queue on a multi-queue one, each band holding
//! `txqueuelen` packets. What a qdisc holds is seen from the sending UDP
//! socket: its skbs are charged to the socket (`SIOCOUTQ`, the socket's
//! `sk_wmem_alloc`) until `tun_net_xmit()` orphans them into the ring or
//! they are freed; what reaches the ring is what the reader gets, in order
//! (each datagram carries its sequence number).

use super::*;

/// The devices' `txqueuelen`: the size of each ring and of each
/// `pfifo_fast` band.
const QLEN: u32 = 32;
/// What a flood of `QLEN + HELD` datagrams leaves in the qdisc once the
/// ring is full (well below the band's `QLEN`).
const HELD: u32 = 16;
/// How long a test waits before it says that nothing happened.
const SETTLE: Duration = Duration::from_millis(300);
/// How long a test waits for something that must happen.
const WAIT: Duration = Duration::from_secs(3);

const DEFAULT_QDISC: &str = "/proc/sys/net/core/default_qdisc";

/// The kernel's default qdisc set to `pfifo_fast` for as long as it lives,
/// then put back. The tests' expectations are `pfifo_fast`'s (the test
/// kernels have no `NET_SCHED` and no other); a kernel with `NET_SCHED` may
/// default to another (Debian's: `fq_codel`, which holds 10240 packets
/// whatever `txqueuelen` is, and never becomes `noqueue`).
pub(crate) struct PfifoFastDefault(Option<String>);

impl Drop for PfifoFastDefault {
    fn drop(&mut self) {
        if let Some(old) = &self.0 {
            let _ = std::fs::write(DEFAULT_QDISC, old);
        }
    }
}

/// Skips the test where tun.c has no `IFF_BACKPRESSURE` (6.12); else makes
/// `pfifo_fast` the default qdisc of the devices the test brings up.
pub(crate) fn need_backpressure() -> Result<PfifoFastDefault, String> {
    if !kernel_has_backpressure() {
        skip!("IFF_BACKPRESSURE is 7.3's: this kernel's tun.c has no such flag");
    }
    match std::fs::read_to_string(DEFAULT_QDISC) {
        Ok(old) if old.trim() != "pfifo_fast" => {
            std::fs::write(DEFAULT_QDISC, "pfifo_fast").map_err(|e| format!("{DEFAULT_QDISC}: {e}"))?;
            Ok(PfifoFastDefault(Some(old.trim().to_string())))
        }
        _ => Ok(PfifoFastDefault(None)),
    }
}

/// Opens a non-blocking queue file of TUN device `name` (no packet
/// information) with `flags` added.
fn open_q(n: Node, name: &str, flags: u16) -> Result<Tun, String> {
    Tun::create_nonblock(n.path, name, IFF_TUN | IFF_NO_PI | flags).map_err(|e| format!("TUNSETIFF {name}: errno {e} ({})", errname(e)))
}

/// Gives `name` the `txqueuelen` `QLEN` (with it its rings and, as it is
/// still down, its qdisc when it comes up) and brings it up as the
/// point-to-point link 10.NET.0.1 <-> 10.NET.0.2.
fn link_up(name: &str, net: u8) -> TestResult {
    sh(&format!("ip link set {name} qlen {QLEN}"))?;
    ptp_up(name, &format!("10.{net}.0.1"), &format!("10.{net}.0.2"))
}

/// A UDP flow to the peer's port 9 from a socket of its own (non-blocking:
/// a full send buffer is an error, not a hang); each datagram carries the
/// next sequence number.
struct Flow {
    s: std::net::UdpSocket,
    dst: String,
    next: u32,
}

impl Flow {
    fn new(peer: &str) -> Result<Flow, String> {
        let s = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| format!("bind: {e}"))?;
        s.set_nonblocking(true).map_err(|e| format!("O_NONBLOCK: {e}"))?;
        Ok(Flow { s, dst: format!("{peer}:9"), next: 0 })
    }

    fn port(&self) -> u16 {
        self.s.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    /// Sends the next `count` datagrams.
    fn send(&mut self, count: u32) -> TestResult {
        for _ in 0..count {
            let seq = self.next;
            self.s.send_to(&seq.to_be_bytes(), &self.dst).map_err(|e| format!("send {seq} to {}: {e}", self.dst))?;
            self.next += 1;
        }
        Ok(())
    }

    /// `SIOCOUTQ`: the bytes of this socket's skbs not yet orphaned or
    /// freed -- what the qdisc holds.
    fn outq(&self) -> Result<i32, String> {
        let mut v: libc::c_int = 0;
        ioctl_ptr(self.s.as_raw_fd(), libc::TIOCOUTQ, &mut v).map_err(|e| format!("SIOCOUTQ: errno {e}"))?;
        Ok(v)
    }

    /// Waits until the qdisc holds nothing of this flow.
    fn wait_outq_empty(&self, what: &str) -> TestResult {
        let deadline = Instant::now() + WAIT;
        loop {
            let q = self.outq()?;
            if q == 0 {
                return Ok(());
            }
            check!(Instant::now() < deadline, "{what}: the qdisc still holds {q} bytes of the flow after {WAIT:?}");
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// After `SETTLE`: the qdisc holds some of this flow (the queue is
    /// stopped); its bytes.
    fn held(&self, what: &str) -> Result<i32, String> {
        thread::sleep(SETTLE);
        let q = self.outq()?;
        check!(q > 0, "{what}: the qdisc holds nothing of the flow (the queue was not stopped, or was woken)");
        Ok(q)
    }
}

/// The sequence number of a datagram of flow `port` in an IPv4 packet.
fn seq_of(p: &[u8], port: u16) -> Option<u32> {
    let ip = pkt::parse_ipv4(p)?;
    let (sport, dport) = pkt::udp_ports(p)?;
    (sport == port && dport == 9 && ip.payload.len() == 12).then(|| u32::from_be_bytes(ip.payload[8..12].try_into().unwrap()))
}

/// Reads `count` datagrams of `f` from `t` (waiting up to `WAIT` for each,
/// as a wake refills the ring from a softirq); their sequence numbers.
fn read_n(t: &Tun, f: &Flow, count: u32) -> Result<Vec<u32>, String> {
    let mut buf = [0u8; 2048];
    let mut seqs = Vec::new();
    while seqs.len() < count as usize {
        match t.read_timeout(&mut buf, WAIT) {
            Ok(len) => {
                let seq = seq_of(&buf[..len], f.port());
                check!(seq.is_some(), "a packet not of the flow: {:02x?}", &buf[..len.min(40)]);
                seqs.extend(seq);
            }
            Err(e) => return Err(format!("{} of {count} datagrams read, then errno {e} ({}) (got {seqs:?})", seqs.len(), errname(e))),
        }
    }
    Ok(seqs)
}

/// After `SETTLE`, `t` has nothing more to read.
fn check_empty(t: &Tun, what: &str) -> TestResult {
    thread::sleep(SETTLE);
    let mut buf = [0u8; 2048];
    match t.read(&mut buf) {
        Err(libc::EAGAIN) => Ok(()),
        Ok(len) => Err(format!("{what}: one more packet to read: {:02x?}", &buf[..len.min(40)])),
        Err(e) => Err(format!("{what}: read: errno {e} ({})", errname(e))),
    }
}

fn range(r: std::ops::Range<u32>) -> Vec<u32> {
    r.collect()
}

/// A flood of three times `txqueuelen` with nobody reading. Without the
/// flag, the ring takes `QLEN` and drops the rest (`tx_dropped`), the
/// qdisc holds nothing. With it, the ring takes `QLEN` and stops the queue;
/// the device drops nothing, the qdisc holds what comes next up to its own
/// limit and drops the rest itself (silently for UDP); the reader then
/// gets everything the qdisc held, in order, still with no drop at the
/// device.
pub fn t_bp_flood(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let t = open_q(n, "rt-bp0", 0)?;
    link_up("rt-bp0", 120)?;
    let mut f = Flow::new("10.120.0.2")?;
    f.send(3 * QLEN)?;
    f.wait_outq_empty("without IFF_BACKPRESSURE")?;
    check!(stat("rt-bp0", "tx_dropped")? == u64::from(2 * QLEN), "without IFF_BACKPRESSURE: tx_dropped {}, expected {}", stat("rt-bp0", "tx_dropped")?, 2 * QLEN);
    let got = read_n(&t, &f, QLEN)?;
    check!(got == range(0..QLEN), "without IFF_BACKPRESSURE: read {got:?}");
    check_empty(&t, "without IFF_BACKPRESSURE")?;
    drop(t);

    let t = open_q(n, "rt-bp1", IFF_BACKPRESSURE)?;
    check!(t.getiff().is_ok_and(|(_, fl)| fl & IFF_BACKPRESSURE != 0), "TUNGETIFF {:?}: no IFF_BACKPRESSURE", t.getiff());
    link_up("rt-bp1", 121)?;
    let mut f = Flow::new("10.121.0.2")?;
    f.send(3 * QLEN)?;
    f.held("ring full, nobody reading")?;
    check!(stat("rt-bp1", "tx_dropped")? == 0, "with IFF_BACKPRESSURE: tx_dropped {} with the ring full", stat("rt-bp1", "tx_dropped")?);
    // Read until the flow's datagrams stop coming: the ring's, then what
    // the qdisc held, a prefix of what was sent.
    let mut got = read_n(&t, &f, QLEN + HELD)?;
    let mut buf = [0u8; 2048];
    while let Ok(len) = t.read_timeout(&mut buf, SETTLE) {
        got.extend(seq_of(&buf[..len], f.port()));
    }
    let k = got.len() as u32;
    check!(got == range(0..k), "with IFF_BACKPRESSURE: read {got:?}, expected 0..{k}");
    check!(k < 3 * QLEN, "with IFF_BACKPRESSURE: all {k} datagrams read: the qdisc (limit {QLEN}) dropped none");
    check!(stat("rt-bp1", "tx_dropped")? == 0, "with IFF_BACKPRESSURE: tx_dropped {}", stat("rt-bp1", "tx_dropped")?);
    f.wait_outq_empty("after the reader took everything")?;
    Ok(())
}

/// The stopped queue is woken when the reader has taken half the ring
/// (`cons_cnt >= size / 2`), not before: after `QLEN / 2 - 1` reads the
/// qdisc still holds the flow, one more read and it sends it on, and the
/// reader gets every datagram in order with no drop.
pub fn t_bp_wake_half_ring(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let t = open_q(n, "rt-bpw0", IFF_BACKPRESSURE)?;
    link_up("rt-bpw0", 122)?;
    let mut f = Flow::new("10.122.0.2")?;
    f.send(QLEN + HELD)?;
    let held = f.held("ring full, nobody reading")?;
    let got = read_n(&t, &f, QLEN / 2 - 1)?;
    check!(got == range(0..QLEN / 2 - 1), "read {got:?}");
    let still = f.held(&format!("after {} reads of a ring of {QLEN}", QLEN / 2 - 1))?;
    check!(still == held, "the qdisc held {held} bytes, {still} after {} reads: it sent some on before half the ring was read", QLEN / 2 - 1);
    let got = read_n(&t, &f, 1)?;
    check!(got == [QLEN / 2 - 1], "read {got:?}");
    f.wait_outq_empty(&format!("after {} reads of a ring of {QLEN}", QLEN / 2))?;
    let got = read_n(&t, &f, QLEN / 2 + HELD)?;
    check!(got == range(QLEN / 2..QLEN + HELD), "after the wake: read {got:?}");
    check_empty(&t, "after the wake")?;
    check!(stat("rt-bpw0", "tx_dropped")? == 0, "tx_dropped {}", stat("rt-bpw0", "tx_dropped")?);
    Ok(())
}

/// A two-queue device `name` with the flag, up as 10.NET.0.1 <-> 10.NET.0.2
/// with the default `txqueuelen`, and a flow to each of its queues (their
/// probes read); then `txqueuelen` becomes `QLEN`, which gives every ring
/// and qdisc band fresh slots. (tun.c's `ptr_ring` zeroes the slots a
/// reader took in batches of 16: after the one probe read, a ring of 32
/// would stop its queue at 31 more packets, rust_tun's ring, without the
/// batching, at 32; see "IFF_BACKPRESSURE (7.3)".)
fn two_queues(n: Node, name: &str, net: u8) -> Result<([Tun; 2], [Flow; 2]), String> {
    let q = [open_q(n, name, IFF_MULTI_QUEUE | IFF_BACKPRESSURE)?, open_q(n, name, IFF_MULTI_QUEUE | IFF_BACKPRESSURE)?];
    let peer = format!("10.{net}.0.2");
    ptp_up(name, &format!("10.{net}.0.1"), &peer)?;
    let flows = [flow_to(&q, &peer, 0)?, flow_to(&q, &peer, 1)?];
    sh(&format!("ip link set {name} qlen {QLEN}"))?;
    Ok((q, flows))
}

/// Opens `peer`'s flows until one goes to queue `want` of the two queues
/// `q` (the device's flow table is empty, so the queue is the flow hash's,
/// random per boot); its probe datagram is read.
fn flow_to(q: &[Tun; 2], peer: &str, want: usize) -> Result<Flow, String> {
    for _ in 0..64 {
        let mut f = Flow::new(peer)?;
        f.send(1)?;
        let mut buf = [0u8; 2048];
        let deadline = Instant::now() + WAIT;
        let hit = loop {
            if let Some(i) = (0..2).find(|&i| q[i].read(&mut buf).is_ok_and(|len| seq_of(&buf[..len], f.port()) == Some(0))) {
                break i;
            }
            check!(Instant::now() < deadline, "probe of flow {} read on neither queue", f.port());
            thread::sleep(Duration::from_millis(5));
        };
        if hit == want {
            return Ok(f);
        }
    }
    Err(format!("no flow to queue {want} in 64 tries"))
}

/// The two-queue device of the re-attach tests: files A and B with the
/// flag, up; a flow to B's queue (1) flooded until its ring is full and
/// the qdisc holds the rest; then A leaves queue 0 (closed with `close`,
/// else detached: returned), B moves into its slot, and queue 1 -- stopped,
/// its qdisc reset as the device has one queue less -- has no file.
/// Returns A if detached, B and the flow.
fn stopped_queue_without_file(n: Node, name: &str, net: u8, close: bool) -> Result<(Option<Tun>, Tun, Flow), String> {
    let ([a, b], [_, mut f]) = two_queues(n, name, net)?;
    f.send(QLEN + HELD)?;
    f.held("queue 1's ring full")?;
    let a = if close {
        drop(a);
        None
    } else {
        setqueue(&a, IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: errno {e}"))?;
        Some(a)
    };
    // Queue 1 is gone from the real ones: the core reset its qdisc.
    f.wait_outq_empty("queue 1 without a file")?;
    check!(tx_queues(name) == 1, "{} tx queues after A left, expected 1", tx_queues(name));
    Ok((a, b, f))
}

/// After the file at queue 1's slot is gone, B (moved to slot 0) still has
/// its full ring; the file that now attaches takes queue 1, stopped when B
/// had it: attaching wakes it (`tun_force_wake_queue()` in `tun_attach()`),
/// so the flow's next datagrams reach the new file instead of waiting in
/// the qdisc.
fn check_reattached(name: &str, b: &Tun, c: &Tun, f: &mut Flow) -> TestResult {
    check!(tx_queues(name) == 2, "{} tx queues after the attach, expected 2", tx_queues(name));
    let first = f.next;
    f.send(4)?;
    f.wait_outq_empty("the attached file's queue")?;
    let got = read_n(c, f, 4)?;
    check!(got == range(first..first + 4), "the attached file read {got:?}");
    let got = read_n(b, f, QLEN)?;
    check!(got == range(1..QLEN + 1), "B read {got:?}");
    check_empty(b, "B")?;
    check!(stat(name, "tx_dropped")? == 0, "tx_dropped {}", stat(name, "tx_dropped")?);
    Ok(())
}

/// `TUNSETQUEUE`: A detaches (`IFF_DETACH_QUEUE`) and re-attaches
/// (`IFF_ATTACH_QUEUE`) as queue 1, which B's full ring had stopped; the
/// attach wakes it.
pub fn t_bp_reattach_queue(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let (a, b, mut f) = stopped_queue_without_file(n, "rt-bpq0", 123, false)?;
    let a = a.ok_or("A not returned")?;
    setqueue(&a, IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: errno {e}"))?;
    check_reattached("rt-bpq0", &b, &a, &mut f)
}

/// `TUNSETIFF`: A closes, a new file attaches by name as queue 1, which
/// B's full ring had stopped; the attach wakes it.
pub fn t_bp_reattach_setiff(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let (_, b, mut f) = stopped_queue_without_file(n, "rt-bpq1", 124, true)?;
    let c = open_q(n, "rt-bpq1", IFF_MULTI_QUEUE | IFF_BACKPRESSURE)?;
    check_reattached("rt-bpq1", &b, &c, &mut f)
}

/// The file whose full ring stopped queue 0 detaches (`IFF_DETACH_QUEUE`)
/// and B, whose ring is empty, moves into its slot: `__tun_detach()` wakes
/// queue 0 for it, and what the qdisc held reaches B.
pub fn t_bp_detach_wakes(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let ([a, b], [mut f, _]) = two_queues(n, "rt-bpd0", 125)?;
    f.send(QLEN + HELD)?;
    let held = f.held("queue 0's ring full")?;
    setqueue(&a, IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: errno {e}"))?;
    f.wait_outq_empty(&format!("after A detached (the qdisc held {held} bytes)"))?;
    let got = read_n(&b, &f, HELD)?;
    check!(got == range(QLEN + 1..QLEN + HELD + 1), "B read {got:?}");
    check_empty(&b, "B")?;
    // A's ring was purged: rust_tun counts that as drops (a deliberate
    // difference, see `t_txqlen`), tun.c does not.
    let want = if n.module == "rust_tun" { u64::from(QLEN) } else { 0 };
    check!(stat("rt-bpd0", "tx_dropped")? == want, "tx_dropped {}, expected {want}", stat("rt-bpd0", "tx_dropped")?);
    Ok(())
}

/// The link goes down and up while the queue is stopped and the reader
/// has taken `READ` (less than half the ring): down stops every queue and
/// forgets those reads (`tun_net_close()`), the core frees what the qdisc
/// held; reads while the link is down count for nothing (`__tun_wake_queue()`
/// leaves a stop by close alone); up starts the queues again and traffic
/// resumes: the next flood fills the ring and stops the queue as before
/// (the qdisc holds as much as the first time), and the wake needs half a
/// ring of reads counted afresh. (Down, the reader takes the ring to half
/// before it comes up: tun.c's `ptr_ring` has then zeroed the slots read,
/// and both rings have the same room.)
pub fn t_bp_link_down_up(n: Node) -> TestResult {
    const READ: u32 = 10;
    const HALF: u32 = QLEN / 2;
    let _qdisc = need_backpressure()?;
    let t = open_q(n, "rt-bpl0", IFF_BACKPRESSURE)?;
    link_up("rt-bpl0", 126)?;
    let mut f = Flow::new("10.126.0.2")?;
    f.send(QLEN + HELD)?;
    let held = f.held("ring full")?;
    check!(read_n(&t, &f, READ)? == range(0..READ), "first reads");
    let still = f.held(&format!("after {READ} reads"))?;
    check!(still == held, "the qdisc held {held} bytes, {still} after {READ} reads");
    sh("ip link set rt-bpl0 down")?;
    f.wait_outq_empty("down")?;
    check!(read_n(&t, &f, HALF - READ)? == range(READ..HALF), "reads while down");
    sh("ip link set rt-bpl0 up")?;
    // The ring holds HALF: HALF more fill it, HELD wait again.
    let next = f.next;
    f.send(HALF + HELD)?;
    let again = f.held("up again, ring full")?;
    check!(again == held, "the qdisc holds {again} bytes, expected {held} as before the link went down");
    let got = read_n(&t, &f, HALF - 1)?;
    check!(got == range(HALF..QLEN - 1), "read {got:?}");
    let still = f.held(&format!("{} reads after the link came up", HALF - 1))?;
    check!(still == held, "the qdisc holds {still} bytes after {} reads, expected {held}: reads from before the link went down were counted", HALF - 1);
    check!(read_n(&t, &f, 1)? == [QLEN - 1], "the read that wakes");
    f.wait_outq_empty("half the ring read")?;
    let got = read_n(&t, &f, HALF + HELD)?;
    check!(got == range(next..next + HALF + HELD), "read {got:?}");
    check_empty(&t, "the end")?;
    check!(stat("rt-bpl0", "tx_dropped")? == 0, "tx_dropped {}", stat("rt-bpl0", "tx_dropped")?);
    Ok(())
}

/// `txqueuelen` grows while the queue is stopped: the resize
/// (`tun_queue_resize()`) wakes the queue, whose qdisc sends what it held
/// into the larger ring; then the flow's next datagrams go straight to the
/// ring too. The reader gets all of them in order, nothing dropped.
pub fn t_bp_resize_wakes(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let t = open_q(n, "rt-bpr0", IFF_BACKPRESSURE)?;
    link_up("rt-bpr0", 127)?;
    let mut f = Flow::new("10.127.0.2")?;
    f.send(QLEN + HELD)?;
    f.held("ring full")?;
    sh(&format!("ip link set rt-bpr0 qlen {}", 2 * QLEN))?;
    f.wait_outq_empty("after the resize")?;
    f.send(8)?;
    thread::sleep(SETTLE);
    check!(f.outq()? == 0, "the qdisc holds {} bytes of datagrams sent after the resize: the queue stayed stopped", f.outq()?);
    let got = read_n(&t, &f, QLEN + HELD + 8)?;
    check!(got == range(0..QLEN + HELD + 8), "read {got:?}");
    check_empty(&t, "the end")?;
    check!(stat("rt-bpr0", "tx_dropped")? == 0, "tx_dropped {}", stat("rt-bpr0", "tx_dropped")?);
    Ok(())
}

/// A stopped device without readers goes: its only file is closed (the
/// device with it), then a two-queue one is deleted with both queues
/// stopped (`ip link del`, files open). Either way what the qdisc held is
/// freed (the flows' sockets are charged nothing), the files of the
/// deleted device report `EBADFD`, and a new device of the same name
/// works (the harness checks the log for WARN/BUG; the debug kernel's
/// kmemleak for leaks; the module must unload at the end).
pub fn t_bp_close_delete_stopped(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let t = open_q(n, "rt-bpc0", IFF_BACKPRESSURE)?;
    link_up("rt-bpc0", 128)?;
    let mut f = Flow::new("10.128.0.2")?;
    f.send(QLEN + HELD)?;
    f.held("ring full")?;
    drop(t);
    check!(!link_exists("rt-bpc0"), "device left after its only file closed");
    f.wait_outq_empty("device closed")?;

    let (q, mut flows) = two_queues(n, "rt-bpc0", 128)?;
    for f in &mut flows {
        f.send(QLEN + HELD)?;
    }
    for (i, f) in flows.iter().enumerate() {
        f.held(&format!("queue {i}'s ring full"))?;
    }
    sh("ip link del rt-bpc0")?;
    check!(!link_exists("rt-bpc0"), "device left after ip link del");
    for (i, f) in flows.iter().enumerate() {
        f.wait_outq_empty(&format!("queue {i}, device deleted"))?;
    }
    let mut buf = [0u8; 2048];
    for (i, t) in q.iter().enumerate() {
        expect_errno!(t.read(&mut buf), libc::EBADFD, format!("read on file {i} of the deleted device"));
    }
    drop(q);

    let t = open_q(n, "rt-bpc0", IFF_BACKPRESSURE)?;
    link_up("rt-bpc0", 128)?;
    let mut f = Flow::new("10.128.0.2")?;
    f.send(4)?;
    check!(read_n(&t, &f, 4)? == range(0..4), "the new device");
    Ok(())
}

/// A persistent device's only file closes while its queue is stopped:
/// `__tun_detach()` wakes the queue (the ring, purged, is empty) and the
/// qdisc sends what it held on, to be dropped (no file). A file that
/// attaches again (`TUNSETIFF`) sets the device's flags: without
/// `IFF_BACKPRESSURE` a flood drops at the ring, with it the queue stops.
pub fn t_bp_persist_reattach(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let t = open_q(n, "rt-bpp0", IFF_BACKPRESSURE)?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: errno {e}"))?;
    link_up("rt-bpp0", 129)?;
    let mut f = Flow::new("10.129.0.2")?;
    f.send(QLEN + HELD)?;
    f.held("ring full")?;
    drop(t);
    f.wait_outq_empty("the only file closed")?;
    // rust_tun counts the purged ring as drops too (see `t_txqlen`).
    let want = u64::from(HELD) + if n.module == "rust_tun" { u64::from(QLEN) } else { 0 };
    check!(stat("rt-bpp0", "tx_dropped")? == want, "tx_dropped {} after the close, expected {want}: the qdisc's datagrams were not sent on to be dropped", stat("rt-bpp0", "tx_dropped")?);

    let attach = |flags: u16| -> Result<Tun, String> {
        let t = open_q(n, "rt-bpp0", flags)?;
        check!(t.getiff().is_ok_and(|(_, fl)| fl & IFF_BACKPRESSURE == flags & IFF_BACKPRESSURE), "TUNGETIFF {:?} after attaching with {flags:#x}", t.getiff());
        // The carrier came back: wait for the core to give the device its
        // qdisc again (linkwatch), or the next datagrams meet noop's.
        check!(wait_sysfs("rt-bpp0", "operstate", "up"), "operstate {:?}", sysfs("rt-bpp0", "operstate"));
        thread::sleep(SETTLE);
        Ok(t)
    };
    let t = attach(0)?;
    let d0 = stat("rt-bpp0", "tx_dropped")?;
    let first = f.next;
    f.send(QLEN + HELD)?;
    f.wait_outq_empty("re-attached without IFF_BACKPRESSURE")?;
    check!(stat("rt-bpp0", "tx_dropped")? == d0 + u64::from(HELD), "without IFF_BACKPRESSURE: tx_dropped +{}, expected +{HELD}", stat("rt-bpp0", "tx_dropped")? - d0);
    check!(read_n(&t, &f, QLEN)? == range(first..first + QLEN), "without IFF_BACKPRESSURE");
    check_empty(&t, "without IFF_BACKPRESSURE")?;
    drop(t);

    let t = attach(IFF_BACKPRESSURE)?;
    let d0 = stat("rt-bpp0", "tx_dropped")?;
    let first = f.next;
    f.send(QLEN + HELD)?;
    f.held("re-attached with IFF_BACKPRESSURE, ring full")?;
    check!(read_n(&t, &f, QLEN + HELD)? == range(first..first + QLEN + HELD), "with IFF_BACKPRESSURE");
    check_empty(&t, "with IFF_BACKPRESSURE")?;
    check!(stat("rt-bpp0", "tx_dropped")? == d0, "with IFF_BACKPRESSURE: tx_dropped +{}", stat("rt-bpp0", "tx_dropped")? - d0);
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: errno {e}"))?;
    drop(t);
    check!(!link_exists("rt-bpp0"), "device left");
    Ok(())
}

/// Without a qdisc to hold packets (`noqueue`, which the core gives a
/// device brought up with `txqueuelen` 0), the queue is not stopped
/// (`qdisc_txq_has_no_queue()`): a stopped queue there would make the core
/// refuse the sender (`ENETDOWN`, "Virtual device asks to queue packet").
/// The ring drops what does not fit, as without the flag, and every send
/// succeeds.
pub fn t_bp_noqueue(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    let t = open_q(n, "rt-bpn0", IFF_BACKPRESSURE)?;
    sh("ip link set rt-bpn0 qlen 0")?;
    ptp_up("rt-bpn0", "10.130.0.1", "10.130.0.2")?;
    // The qdisc stays noqueue when the length changes on an up device.
    sh(&format!("ip link set rt-bpn0 qlen {QLEN}"))?;
    let mut f = Flow::new("10.130.0.2")?;
    f.send(QLEN + HELD)?;
    f.wait_outq_empty("noqueue")?;
    check!(stat("rt-bpn0", "tx_dropped")? == u64::from(HELD), "tx_dropped {}, expected {HELD}", stat("rt-bpn0", "tx_dropped")?);
    check!(read_n(&t, &f, QLEN)? == range(0..QLEN), "noqueue");
    check_empty(&t, "noqueue")?;
    Ok(())
}

/// The wake after the first stop/wake cycle, not only from a fresh queue.
/// Every read count here is a multiple of 16, so tun.c's `ptr_ring`
/// (which zeroes the slots read in batches of 16) and rust_tun's ring have
/// the same room at each flood.
///
/// 1. A flood of `QLEN + HELD` stops the queue (the qdisc holds `HELD`);
///    half the ring read wakes it, and the qdisc's datagrams refill the
///    ring, whose last slot stops the queue a second time.
/// 2. `HELD` more wait in the qdisc (they would be dropped at the ring if
///    the queue were not stopped again); `QLEN / 2 - 1` reads do not wake
///    it (the count of reads started again at the first wake), the next
///    one does.
/// 3. The reader drains everything; the ring, empty again, is flooded
///    again and stops and wakes a third time.
///
/// Every datagram is read once, in order; the device drops nothing and
/// counts every packet read (`tx_packets`), as tun.c does.
pub fn t_bp_second_stop(n: Node) -> TestResult {
    const HALF: u32 = QLEN / 2;
    let _qdisc = need_backpressure()?;
    let t = open_q(n, "rt-bp2", IFF_BACKPRESSURE)?;
    link_up("rt-bp2", 131)?;
    let c0 = counters("rt-bp2")?;
    let mut f = Flow::new("10.131.0.2")?;

    // 1. The first stop, woken by half the ring read.
    f.send(QLEN + HELD)?;
    let held = f.held("first flood, ring full")?;
    check!(read_n(&t, &f, HALF - 1)? == range(0..HALF - 1), "first cycle, reads before the wake");
    let still = f.held(&format!("first cycle, after {} reads", HALF - 1))?;
    check!(still == held, "first cycle: the qdisc held {held} bytes, {still} after {} reads", HALF - 1);
    check!(read_n(&t, &f, 1)? == [HALF - 1], "first cycle, the read that wakes");
    f.wait_outq_empty("first wake")?;

    // 2. The ring is full again (HALF..QLEN + HELD): the queue stopped a
    // second time, so what comes next waits in the qdisc.
    let next = f.next;
    f.send(HELD)?;
    let again = f.held("second stop (the ring refilled by the qdisc after the first wake)")?;
    check!(again == held, "second stop: the qdisc holds {again} bytes, expected {held} as at the first stop");
    check!(stat("rt-bp2", "tx_dropped")? == 0, "second stop: tx_dropped {}: the queue was not stopped again", stat("rt-bp2", "tx_dropped")?);
    check!(read_n(&t, &f, HALF - 1)? == range(HALF..QLEN - 1), "second cycle, reads before the wake");
    let still = f.held(&format!("second cycle, after {} reads", HALF - 1))?;
    check!(still == held, "second cycle: the qdisc held {held} bytes, {still} after {} reads: woken early (reads of the first cycle counted?)", HALF - 1);
    check!(read_n(&t, &f, 1)? == [QLEN - 1], "second cycle, the read that wakes");
    f.wait_outq_empty("second wake")?;

    // 3. Drain (the ring holds QLEN..next + HELD), then a fresh flood.
    let got = read_n(&t, &f, QLEN)?;
    check!(got == range(QLEN..next + HELD), "drain: read {got:?}");
    check_empty(&t, "drained")?;
    let first = f.next;
    f.send(QLEN + HELD)?;
    let third = f.held("third flood after the drain")?;
    check!(third == held, "third stop: the qdisc holds {third} bytes, expected {held}");
    check!(read_n(&t, &f, HALF)? == range(first..first + HALF), "third cycle, half the ring");
    f.wait_outq_empty("third wake")?;
    let got = read_n(&t, &f, HALF + HELD)?;
    check!(got == range(first + HALF..f.next), "third cycle, the rest: read {got:?}");
    check_empty(&t, "the end")?;

    let c1 = counters("rt-bp2")?;
    let sent = u64::from(f.next);
    check!(c1.tx_dropped == c0.tx_dropped, "tx_dropped {} -> {}", c0.tx_dropped, c1.tx_dropped);
    check!(c1.tx_packets - c0.tx_packets == sent, "tx_packets +{}, expected +{sent} (every datagram read)", c1.tx_packets - c0.tx_packets);
    // 20 bytes of IP, 8 of UDP, 4 of sequence number each.
    check!(c1.tx_bytes - c0.tx_bytes == sent * 32, "tx_bytes +{}, expected +{}", c1.tx_bytes - c0.tx_bytes, sent * 32);
    Ok(())
}

/// Rings of 1, 2, 3, 5 and 8 slots: the wake threshold is tun.c's
/// `cons_cnt >= tx_ring.size / 2`, integer division, so the first read
/// wakes a ring of up to 3 slots (a ring of 1 at once, as `size / 2` is
/// 0), the second a ring of 5, the fourth a ring of 8. (tun.c's
/// `ptr_ring` zeroes each slot as it is read in rings this small, its
/// batch being 1, so both drivers' rings have the same room.) Each ring
/// is flooded with twice its size (the qdisc, whose bands hold
/// `txqueuelen`, keeps the second half), read one short of the wake (the
/// qdisc still holds all it held), then once more (it sends on as many as
/// were read, the ring is full again); then every datagram is read, in
/// order, none dropped.
pub fn t_bp_small_rings(n: Node) -> TestResult {
    let _qdisc = need_backpressure()?;
    for (i, q) in [1u32, 2, 3, 5, 8].into_iter().enumerate() {
        let name = format!("rt-bps{q}");
        let net = 132 + i as u8;
        let t = open_q(n, &name, IFF_BACKPRESSURE)?;
        sh(&format!("ip link set {name} qlen {q}"))?;
        ptp_up(&name, &format!("10.{net}.0.1"), &format!("10.{net}.0.2"))?;
        let mut f = Flow::new(&format!("10.{net}.0.2"))?;
        f.send(2 * q)?;
        let held = f.held(&format!("ring of {q}, full"))?;
        let wake = (q / 2).max(1);
        if wake > 1 {
            check!(read_n(&t, &f, wake - 1)? == range(0..wake - 1), "ring of {q}: reads before the wake");
            let still = f.held(&format!("ring of {q}, after {} reads", wake - 1))?;
            check!(still == held, "ring of {q}: the qdisc held {held} bytes, {still} after {} reads: woken before size / 2 = {wake} reads", wake - 1);
        }
        check!(read_n(&t, &f, 1)? == [wake - 1], "ring of {q}: the read that wakes");
        // The wake sends on as many as were read (the ring's room); the
        // rest wait again, the ring full (the datagrams' skbs are all of
        // one size).
        let left = held / q as i32 * (q - wake) as i32;
        let deadline = Instant::now() + WAIT;
        while f.outq()? != left {
            check!(Instant::now() < deadline, "ring of {q}: the qdisc holds {} bytes {WAIT:?} after the wake, expected {left} ({} of {q} datagrams)", f.outq()?, q - wake);
            thread::sleep(Duration::from_millis(10));
        }
        let got = read_n(&t, &f, 2 * q - wake)?;
        check!(got == range(wake..2 * q), "ring of {q}: read {got:?}");
        check_empty(&t, &format!("ring of {q}"))?;
        check!(stat(&name, "tx_dropped")? == 0, "ring of {q}: tx_dropped {}", stat(&name, "tx_dropped")?);
    }
    Ok(())
}
