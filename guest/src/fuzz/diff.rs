//! `rtun fuzz-diff`: one seeded, deterministic sequence against tun, then
//! against rust_tun; every result compared, the first divergence
//! reported (and rerun before it counts).

use super::*;

/// Differential mode: the same seeded sequence against tun, then rust_tun.
pub fn fuzz_diff(seed: u64, iters: u64) -> Result<String, String> {
    deterministic_stack();
    // One ARP request per unresolved neighbour (a mutated packet's source
    // the stack answers), sent at once, and no retransmissions or probes,
    // which would come on the neighbour timers, between operations that
    // differ from run to run. Put back at the end.
    // And no ICMP error rate limit: icmp_global_allow() refuses for the
    // rest of a 20 ms window once its credit is spent, which depends on
    // time.
    const NEIGH: [(&str, &str); 4] = [
        ("/proc/sys/net/ipv4/neigh/default/mcast_solicit", "1"),
        ("/proc/sys/net/ipv4/neigh/default/ucast_solicit", "0"),
        ("/proc/sys/net/ipv4/neigh/default/app_solicit", "0"),
        ("/proc/sys/net/ipv4/icmp_ratemask", "0"),
    ];
    let saved: Vec<String> = NEIGH.iter().map(|(f, _)| std::fs::read_to_string(f).unwrap_or_default()).collect();
    for (f, v) in NEIGH {
        let _ = std::fs::write(f, v);
    }
    // A driver's difference comes back on every run of the same sequence;
    // what the stack does on its own timers (the fuzzer keeps it out as
    // far as it can, but a loaded host stretches every step) moves from
    // run to run. A divergence is run again, twice, and fails the test
    // only if the same one comes back both times. (Seen at seed 1: op
    // 1449, a TUN queue's drain at close holding the stack's ICMP replies,
    // differed in either direction, tun or rust_tun missing one, in about
    // half the first runs, and three runs in a row once on 6.12-napi;
    // since the fuzzer lets ksoftirqd finish after each write and before
    // each drain (`settle_stack`), in 2 of 32 first runs: see
    // Documentation/rust_tun.rst.)
    let again_same = |op: usize, d: &str| -> Result<(), (usize, String)> {
        for _ in 0..2 {
            match fuzz_diff_run(seed, iters) {
                Err((op2, d2, _)) if op2 == op && d2 == d => {}
                Err((op2, d2, _)) => return Err((op2, d2)),
                Ok(_) => return Err((usize::MAX, "none".to_string())),
            }
        }
        Ok(())
    };
    let r = match fuzz_diff_run(seed, iters) {
        Err((op, d, summary)) => match again_same(op, &d) {
            Ok(()) => Err(format!("first divergence from tun (three times): {d}; {summary}")),
            Err((op2, d2)) => Ok(format!(
                "no reproducible divergence from tun: the first run's at op {op} ({d}) did not come back (a rerun: {}); {summary}",
                if op2 == usize::MAX { d2 } else { format!("op {op2}: {d2}") }
            )),
        },
        Ok(summary) => Ok(format!("no divergence from tun; {summary}")),
    };
    for ((f, _), v) in NEIGH.iter().zip(&saved) {
        let _ = std::fs::write(f, v.trim());
    }
    r
}

/// One run of the sequence on each driver: the summary, or the first
/// divergence (its operation, what differs) and the summary.
pub fn fuzz_diff_run(seed: u64, iters: u64) -> Result<String, (usize, String, String)> {
    type Op = (String, Result<i64, i32>, bool, Vec<u8>, String, (Vec<Vec<u8>>, bool));
    let run = |node: &str| -> Vec<Op> {
        cleanup("rt-d");
        let world = Mutex::new(World::new("rt-d", 98, false));
        let _listener = std::net::UdpSocket::bind("10.98.0.1:7000").ok();
        let mut rng = Rng::new(seed);
        let mut out = Vec::new();
        for _ in 0..iters {
            let (d, r, gap) = step(&world, node, &mut rng);
            let mut g = world.lock().unwrap_or_else(|e| e.into_inner());
            let (data, gap_data) = (std::mem::take(&mut g.out), std::mem::take(&mut g.gap_out));
            let mq = (std::mem::take(&mut g.mq_out), std::mem::take(&mut g.mq_loose));
            drop(g);
            out.push((d, r, gap, data, gap_data, mq));
        }
        // At the end, what every queue still holds and every device's
        // attributes and counters.
        let mut g = world.lock().unwrap_or_else(|e| e.into_inner());
        for dev in 0..HOME {
            drain(&mut g, dev);
            let name = g.name(dev);
            let mut gap_data = String::new();
            if link_exists(&name) {
                let s = snapshot(&name, DEVS[dev].tap, g.steered[dev]);
                g.out.extend_from_slice(s.as_bytes());
                gap_data = link_settings(&name);
            }
            let (data, mq) = (std::mem::take(&mut g.out), (std::mem::take(&mut g.mq_out), std::mem::take(&mut g.mq_loose)));
            out.push((format!("at the end: {name}"), Ok(0), false, data, gap_data, mq));
        }
        drop(g);
        // Persistent devices outlive the queues: delete them.
        drop(world);
        cleanup("rt-d");
        out
    };
    let tun = run("/dev/net/tun");
    let rust = run("/dev/net/rust_tun");
    let mut counts = Counts::default();
    let mut first: Option<String> = None;
    let mut first_op = 0;
    let mut gaps = std::collections::BTreeMap::<String, u64>::new();
    let (mut steered, mut records, mut bytes) = (0, 0, 0);
    let (mut multisets, mut mq_packets, mut mq_loose, mut mq_loose_diff) = (0, 0, 0, 0);
    for (i, ((dt, rt, gap, xt, gt, mt), (dr, rr, _, xr, gr, mr))) in tun.iter().zip(&rust).enumerate() {
        counts.add(rr);
        if dt != dr {
            // The sequences themselves part ways only after a divergence.
            first.get_or_insert_with(|| format!("op {i}: the operations differ: tun {dt}, rust_tun {dr}"));
            break;
        }
        if xt != xr && first.is_none() {
            // What was read (or the attributes) differ: show both from a
            // little before the first byte that differs.
            let at = xt.iter().zip(xr).position(|(a, b)| a != b).unwrap_or(xt.len().min(xr.len()));
            let show = |x: &[u8]| {
                let from = at.saturating_sub(32);
                let part = &x[from.min(x.len())..(at + 96).min(x.len())];
                format!("{} bytes, from byte {from}: {:02x?} {:?}", x.len(), part, String::from_utf8_lossy(part))
            };
            first = Some(format!("op {i}: {dt}: {rt:?}: the data differ: tun {}; rust_tun {}", show(xt), show(xr)));
        }
        let ((mt, loose), (mr, _)) = (mt, mr);
        if !mt.is_empty() || !mr.is_empty() {
            // A multi-queue device's multiset: what all its queues read.
            // Until a queue leaves the device, the same in both drivers.
            // Deliberate difference (rst, "Flows on detach"): after that,
            // tun.c's flows keep naming the departed queue's index, and
            // what they steer there is dropped or lands elsewhere until
            // the flow ages (3 s, so the moment differs from run to run):
            // those multisets are counted, not compared.
            multisets += 1;
            mq_packets += mt.len();
            if *loose {
                mq_loose += 1;
                mq_loose_diff += usize::from(mt != mr);
            } else if mt != mr && first.is_none() {
                let missing = mt.iter().find(|p| !mr.contains(p)).or_else(|| mr.iter().find(|p| !mt.contains(p)));
                first = Some(format!(
                    "op {i}: {dt}: a multi-queue device's queues read {} packets on tun, {} on rust_tun; one only one driver read: {:02x?}",
                    mt.len(),
                    mr.len(),
                    missing.map(|p| &p[..p.len().min(96)])
                ));
            }
        }
        if gt != gr && first.is_none() {
            first = Some(format!("op {i}: {dt}: ethtool link settings: tun {gt}, rust_tun {gr}"));
        }
        if !xt.is_empty() {
            records += 1;
            bytes += xt.len();
        }
        if dt.ends_with(STEERED) {
            steered += 1;
            continue;
        }
        if rt != rr {
            if *gap {
                let key = dt.split(' ').next().unwrap_or("").to_string();
                *gaps.entry(format!("{key} (tun {rt:?}, rust_tun {rr:?})")).or_default() += 1;
            } else if first.is_none() {
                first = Some(format!("op {i}: {dt}: tun {rt:?}, rust_tun {rr:?}"));
            }
        }
    }
    if std::env::var("RTUN_FUZZ_TRACE").is_ok() {
        for (i, ((dt, rt, _, _, _, _), (_, rr, _, _, _, _))) in tun.iter().zip(&rust).enumerate() {
            println!("trace {i}: {dt}: tun {rt:?} rust_tun {rr:?}");
        }
    }
    let gap_list: Vec<String> = gaps.iter().map(|(k, n)| format!("{k} x{n}")).collect();
    let summary = format!(
        "seed={seed} {}; {records} operations' data compared ({bytes} bytes: reads, drains, multisets of multi-queue reads, sysfs and counters); {steered} reads/polls of a multi-queue device's queues compared only as multisets: {multisets} multisets of {mq_packets} packets, {mq_loose} of them after a queue left (not compared; {mq_loose_diff} differ); known gaps: {}",
        counts.report(),
        if gap_list.is_empty() { "none".into() } else { gap_list.join(", ") }
    );
    match first {
        Some(d) => {
            first_op = d.strip_prefix("op ").and_then(|r| r.split(':').next()).and_then(|n| n.parse().ok()).unwrap_or(first_op);
            Err((first_op, d, summary))
        }
        None => Ok(summary),
    }
}
