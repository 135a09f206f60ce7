//! Drop reasons: every packet tun drops is freed with `kfree_skb_reason()`
//! and tun.c's reason for it (`SKB_DROP_REASON_*`: 6.12's `tun_net_xmit()`
//! and `tun_get_user()`, 7.3's `sk_filter_reason()`), which is what
//! `perf trace`, `dropwatch`, bpftrace and the `skb:kfree_skb` tracepoint
//! show. The same operations must free the same packets for the same
//! reasons on rust_tun as on the C tun. Read off the tracepoint (the
//! debug kernel has event tracing; the test kernels do not, and the test
//! skips there), per operation, both drivers in one test on one kernel.

use super::filter::{attach_prog, map_one_page, tun_filter};
use super::*;
use std::collections::BTreeMap;

/// `(reason, count)` of the drops an operation caused in the driver.
type Reasons = BTreeMap<String, u32>;

/// The `skb:kfree_skb` tracepoint, enabled; disabled on drop.
struct KfreeSkbTrace {
    dir: String,
}

impl KfreeSkbTrace {
    /// `None` if this kernel has no such event.
    fn open() -> Option<Self> {
        tracefs_with("events/skb/kfree_skb/enable").map(|dir| KfreeSkbTrace { dir })
    }

    fn enable(&self, on: bool) -> TestResult {
        write_file(&format!("{}/events/skb/kfree_skb/enable", self.dir), if on { "1" } else { "0" })
    }

    /// The reasons of the drops `op` caused whose `location` (the caller of
    /// `kfree_skb_reason()`) is in `module`: the trace is emptied before,
    /// read after (before `op`'s files close, whose ring purges are not
    /// drops of interest).
    fn during(&self, module: &str, op: impl FnOnce() -> TestResult) -> Result<Reasons, String> {
        let trace = format!("{}/trace", self.dir);
        write_file(&trace, "")?;
        op()?;
        let text = std::fs::read_to_string(&trace).map_err(|e| format!("{trace}: {e}"))?;
        let tag = format!(" [{module}]");
        let mut out = Reasons::new();
        for line in text.lines().filter(|l| l.contains(" kfree_skb: ")) {
            let Some(loc) = line.split(" location=").nth(1) else { continue };
            if !loc.split(" reason: ").next().is_some_and(|l| l.ends_with(&tag)) {
                continue;
            }
            let reason = line.rsplit(" reason: ").next().unwrap_or("?").trim();
            *out.entry(reason.to_string()).or_default() += 1;
        }
        Ok(out)
    }
}

impl Drop for KfreeSkbTrace {
    fn drop(&mut self) {
        let _ = self.enable(false);
        let _ = std::fs::write(format!("{}/trace", self.dir), "");
    }
}

fn show(r: &Reasons) -> String {
    if r.is_empty() {
        return "none".into();
    }
    r.iter().map(|(k, v)| format!("{k}x{v}")).collect::<Vec<_>>().join(" ")
}

/// `writev(2)` of `iov` (address, length) pairs; the errno on failure.
fn writev(fd: RawFd, iov: &[(usize, usize)]) -> Result<usize, i32> {
    let v: Vec<libc::iovec> = iov.iter().map(|&(b, l)| libc::iovec { iov_base: b as *mut libc::c_void, iov_len: l }).collect();
    // SAFETY: The kernel validates each segment; user space reads none.
    let r = unsafe { libc::writev(fd, v.as_ptr(), v.len() as i32) };
    if r < 0 { Err(errno()) } else { Ok(r as usize) }
}

/// An operation, what it must drop, and why (tun.c's reasons).
type Op = (&'static str, &'static [(&'static str, u32)]);

const OPS: &[Op] = &[
    ("write to a TUN device that is down (EIO)", &[("DEV_READY", 1)]),
    ("write of IP version 5 without tun_pi (EINVAL)", &[("NOT_SPECIFIED", 1)]),
    ("writev whose packet segment is unmapped (EFAULT)", &[("SKB_UCOPY_FAULT", 1)]),
    ("write with an unknown vnet gso_type (EINVAL)", &[("NOT_SPECIFIED", 1)]),
    ("transmit to an address TUNSETTXFILTER refuses", &[("TAP_TXFILTER", 1)]),
    ("transmit through a TUNATTACHFILTER returning 0", &[("SOCKET_FILTER", 1)]),
    ("transmit through a TUNSETFILTEREBPF program returning 0", &[("TAP_FILTER", 1)]),
    ("transmit of 6 frames into a ring of 4", &[("FULL_RING", 2)]),
];

/// Runs [`OPS`] on `n`, each measured alone: the reasons of each.
fn operations(n: Node, tr: &KfreeSkbTrace) -> Result<Vec<Reasons>, String> {
    let m = n.module;
    let mut out = Vec::new();
    let ip = pkt::ipv4([10, 9, 0, 1], [10, 9, 0, 2], 17, &pkt::udp(9, 9, &[0x5a; 32]));

    let t = Tun::create(n.path, "rt-dr0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    out.push(tr.during(m, || fails(t.write(&ip), libc::EIO, "write while down"))?);
    sh("ip link set rt-dr0 up")?;
    let mut bad = ip.clone();
    bad[0] = 0x55;
    out.push(tr.during(m, || fails(t.write(&bad), libc::EINVAL, "IP version 5"))?);
    drop(t);
    let t = Tun::create(n.path, "rt-dr1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-dr1 up")?;
    let page = map_one_page()?;
    let pi: [u8; 4] = [0, 0, 0x08, 0x00];
    let iov = [(pi.as_ptr() as usize, 4), (page + 4096, 64)];
    out.push(tr.during(m, || fails(writev(t.fd(), &iov), libc::EFAULT, "writev"))?);
    drop(t);

    let v = Tun::create(n.path, "rt-dr2", IFF_TAP | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-dr2 up")?;
    // struct virtio_net_hdr: flags 0, gso_type 7 (none such), hdr_len 0,
    // gso_size 100, csum_start 0, csum_offset 0; then a frame.
    let mut w = vec![0u8, 7, 0, 0, 100, 0, 0, 0, 0, 0];
    w.extend(pkt::eth([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0x0800, &ip));
    out.push(tr.during(m, || fails(v.write(&w), libc::EINVAL, "unknown gso_type"))?);
    drop(v);

    let src = [2, 0xdd, 0, 0, 0, 1];
    let frame = |dst: [u8; 6]| pkt::eth(dst, src, 0x88b5, &[0x5a; 46]);
    let t = Tun::create(n.path, "rt-dr3", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    // No IPv6 chatter (router solicitations, MLD) into the ring.
    let _ = std::fs::write("/proc/sys/net/ipv6/conf/rt-dr3/disable_ipv6", "1");
    sh("ip link set rt-dr3 up")?;
    drain(&t);
    let pk = Packet::open("rt-dr3")?;
    let mut f = tun_filter(0, &[[2, 0, 0, 0, 0, 1]]);
    ioctl_ptr(t.fd(), TUNSETTXFILTER, f.as_mut_ptr()).map_err(|e| format!("TUNSETTXFILTER: {e}"))?;
    out.push(tr.during(m, || pk.send(&frame([2, 0, 0, 0, 0, 9])))?);
    let mut off = tun_filter(0, &[]);
    ioctl_ptr(t.fd(), TUNSETTXFILTER, off.as_mut_ptr()).map_err(|e| format!("TUNSETTXFILTER off: {e}"))?;
    attach_prog(t.fd(), &[bpf_ret(0)]).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    out.push(tr.during(m, || pk.send(&frame([2, 0, 0, 0, 0, 1])))?);
    ioctl_val(t.fd(), TUNDETACHFILTER, 0).map_err(|e| format!("TUNDETACHFILTER: {e}"))?;
    let drop_all = crate::bpf::socket_filter(&crate::bpf::ret(0))?;
    let mut fd = drop_all.as_raw_fd();
    ioctl_ptr(t.fd(), TUNSETFILTEREBPF, &mut fd).map_err(|e| format!("TUNSETFILTEREBPF: {e}"))?;
    out.push(tr.during(m, || pk.send(&frame([2, 0, 0, 0, 0, 1])))?);
    let mut detach = -1;
    ioctl_ptr(t.fd(), TUNSETFILTEREBPF, &mut detach).map_err(|e| format!("TUNSETFILTEREBPF -1: {e}"))?;
    sh("ip link set rt-dr3 qlen 4")?;
    drain(&t);
    out.push(tr.during(m, || (0..6).try_for_each(|_| pk.send(&frame([2, 0, 0, 0, 0, 1]))))?);
    let queued = drain(&t).len();
    check!(queued == 4, "{}: {queued} frames queued in a ring of 4", n.module);
    Ok(out)
}

/// Each operation frees the same packets for the same reasons on both
/// drivers, and those are tun.c's (C tun checked too: the trace works).
pub fn t_drop_reasons(_: Node) -> TestResult {
    let Some(tr) = KfreeSkbTrace::open() else {
        skip!("no skb:kfree_skb trace event here (no CONFIG_FTRACE): the drop reasons cannot be read");
    };
    load("tun")?;
    tr.enable(true)?;
    let rust = operations(RUST, &tr)?;
    runner::teardown();
    let c = operations(C, &tr)?;
    let mut problems = Vec::new();
    for (((op, want), r), t) in OPS.iter().zip(&rust).zip(&c) {
        println!("# {op}: tun {} | rust_tun {}", show(t), show(r));
        let want: Reasons = want.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        if *t != want {
            problems.push(format!("{op}: tun dropped {}, expected {}", show(t), show(&want)));
        }
        if r != t {
            problems.push(format!("{op}: rust_tun dropped {}, tun {}", show(r), show(t)));
        }
    }
    check!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(())
}
