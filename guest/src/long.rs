//! The long randomized tests: the stress run, the fuzzer, and the
//! differential fuzzer against C tun (the work is in stress.rs and
//! fuzz.rs; these are their entries in the suite).

use super::*;

/// Seconds of the stress run (`RTUN_STRESS_SECS`, default 10).
pub fn stress_secs() -> u64 {
    std::env::var("RTUN_STRESS_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(10)
}

/// `text` on one line: the suite's summary of failures (scripts/test.sh)
/// shows a failed test's last diagnostic line, which must carry the cause.
fn one_line(text: &str) -> String {
    text.replace('\n', " | ")
}

pub fn t_stress(n: Node) -> TestResult {
    load("pktgen")?;
    let out = Command::new("/bin/rtun")
        .args(["stress", n.path, &seed().to_string(), &stress_secs().to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    let text = output_text(&out).trim().to_string();
    println!("# stress: {text}");
    check!(out.status.success(), "stress failed: {}", one_line(&text));
    check!(!link_exists("rt-st0"), "stress device left behind");
    Ok(())
}

/// The differential fuzzer: one seeded sequence of operations against tun,
/// then rust_tun; every result must agree (divergences in what rust_tun
/// does not implement yet are listed, not failed).
pub fn t_fuzz_diff(_: Node) -> TestResult {
    load("tun")?;
    let iters = std::env::var("RTUN_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20000u64) / 10;
    let out = Command::new("/bin/rtun")
        .args(["fuzz-diff", &seed().to_string(), &iters.to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    let text = output_text(&out).trim().to_string();
    println!("# fuzz-diff: {text}");
    check!(out.status.success(), "fuzz-diff: {}", one_line(&text));
    Ok(())
}

pub fn t_fuzz(n: Node) -> TestResult {
    let iters = std::env::var("RTUN_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20000u64);
    let out = Command::new("/bin/rtun")
        .args(["fuzz", n.path, &seed().to_string(), &iters.to_string(), "3"])
        .output()
        .map_err(|e| e.to_string())?;
    let text = output_text(&out).trim().to_string();
    println!("# fuzz: {text}");
    check!(out.status.success(), "fuzz failed: {}", one_line(&text));
    // Whatever the fuzzer left (it may have unloaded the module), the
    // driver still works.
    runner::teardown();
    load("rust_tun")?;
    let t = Tun::create(n.path, "rt-afz", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF after fuzz: {e}"))?;
    ptp_up(&t.name, "10.51.0.1", "10.51.0.2")?;
    let req = pkt::ipv4([10, 51, 0, 2], [10, 51, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 3, 3, b"after"));
    t.write(&req).map_err(|e| format!("write: {e}"))?;
    read_until(&t, Duration::from_secs(3), |p| pkt::parse_ipv4(p).is_some_and(|ip| ip.proto == pkt::IPPROTO_ICMP))?;
    Ok(())
}
