//! Queues at scale: a device with many queues deleted, and attach and
//! detach that wait for no RCU grace period.

use super::*;

/// Deleting a device with 256 attached queues (and a detached one) waits
/// for one grace period for all of them, not one per queue, under rtnl
/// (with normal grace periods, 257 of them take seconds); every file then
/// reports the device gone.
pub fn t_delete_many_queues(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-dmq0", IFF_TUN | IFF_NO_PI, 256)?;
    // A one-queue device: what deleting costs apart from the queues.
    let one = Tun::create(n.path, "rt-dmq1", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    // Normal grace periods (several ticks each) even where rtnl holders
    // ask for expedited ones, so that a grace period per queue shows.
    write_file("/sys/kernel/rcu_normal", "1")?;
    let r = (|| -> Result<(Duration, Duration, Duration, Duration), String> {
        // The calibration, in this boot and under this load: detaching a
        // queue waits for one grace period (synchronize_net), attaching
        // it for none (t_queue_attach_no_grace_period); medians of five.
        // The last queue ends detached: deleting also walks the disabled.
        let (mut det, mut att) = time_detach_attach(&q[255], 5)?;
        setqueue(&q[255], IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
        ioctl_val(q[0].fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
        let t0 = Instant::now();
        sh("ip link del rt-dmq1")?;
        let d1 = t0.elapsed();
        let t0 = Instant::now();
        sh("ip link del rt-dmq0")?;
        Ok((median(&mut det), median(&mut att), d1, t0.elapsed()))
    })();
    write_file("/sys/kernel/rcu_normal", "0")?;
    let (detach, attach, d1, d256) = r?;
    drop(one);
    let per_queue = d256.saturating_sub(d1) / 255;
    println!(
        "# ip link del: 256 queues {d256:?}, 1 queue {d1:?}: {per_queue:?} per queue; \
         one detach (a grace period) {detach:?}, one attach {attach:?}"
    );
    check!(!link_exists("rt-dmq0"), "device still there");
    for (i, t) in q.iter().enumerate() {
        expect_errno!(t.getiff(), libc::EBADFD, &format!("TUNGETIFF on queue {i}"));
    }
    if napi_run() && n.module == "tun" {
        // tun.c deletes each queue's NAPI context with `netif_napi_del()`,
        // a grace period each: not held against it here.
        println!("# tun with IFF_NAPI: a grace period per queue, as tun.c is written");
        return Ok(());
    }
    // A grace period per queue makes each queue cost about a detach; the
    // work of deleting a queue is about an attach's. The bound sits
    // between: a quarter of a detach plus four attaches.
    let bound = detach / 4 + attach * 4;
    check!(
        per_queue < bound,
        "deleting cost {per_queue:?} per queue (bound {bound:?}: a quarter of a detach {detach:?} + 4 attaches {attach:?}): a grace period per queue?"
    );
    Ok(())
}

/// Detaches and re-attaches queue `t` `n` times; how long each detach and
/// each attach took.
pub fn time_detach_attach(t: &Tun, n: usize) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    let (mut detach, mut attach) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let t0 = Instant::now();
        setqueue(t, IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
        detach.push(t0.elapsed());
        let t0 = Instant::now();
        setqueue(t, IFF_ATTACH_QUEUE).map_err(|e| format!("attach: {e}"))?;
        attach.push(t0.elapsed());
    }
    Ok((detach, attach))
}

/// The median of `v` (sorted in place); zero if empty.
pub fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Re-attaching a detached queue (`TUNSETQUEUE`) waits for no grace
/// period (tun.c takes the file off its disabled list with `list_del`);
/// detaching waits for one (no transmitter may still see the queue). With
/// normal grace periods, the attaches must take far less than the detaches.
///
/// Not on the debug kernel: there KASAN and lockdep make an attach itself
/// cost about half a grace period (16.7 ms median against 36.4 ms per
/// detach on 7.3's, beside another guest), so the ratio measures the
/// debug options, not the driver; the test kernels run it for both
/// drivers.
pub fn t_queue_attach_no_grace_period(n: Node) -> TestResult {
    if kernel_flavor().is_ok_and(|f| f == "debug") {
        skip!("a timing ratio: the debug kernel's KASAN and lockdep dominate an attach");
    }
    let q = mq_open(n.path, "rt-qa0", IFF_TAP | IFF_NO_PI, 3)?;
    write_file("/sys/kernel/rcu_normal", "1")?;
    let r = time_detach_attach(&q[1], 20);
    write_file("/sys/kernel/rcu_normal", "0")?;
    let (mut detach, mut attach) = r?;
    // Medians: one attach or detach that a loaded host delays says nothing
    // about grace periods; a grace period per attach moves the median.
    let (a, d) = (median(&mut attach), median(&mut detach));
    println!("# 20 detaches: median {d:?}, 20 attaches: median {a:?}");
    check!(a * 4 < d, "attaching took {a:?} (median), detaching {d:?}: a grace period per attach?");
    check!(tx_queues("rt-qa0") == 3, "{} tx queues", tx_queues("rt-qa0"));
    Ok(())
}
