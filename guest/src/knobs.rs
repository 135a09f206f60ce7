//! rust_tun's debugfs files (per-device stats and flows, the jump-label
//! sites) and the RPS/RFS knobs that flip its static keys, as the tests read
//! and set them.

use super::*;

pub const DEBUGFS: &str = "/sys/kernel/debug/rust_tun";

pub const RPS_SOCK_FLOW_ENTRIES: &str = "/proc/sys/net/core/rps_sock_flow_entries";

pub const LO_RPS_CPUS: &str = "/sys/class/net/lo/queues/rx-0/rps_cpus";

pub const UNGUARDED_PARAM: &str = "/sys/module/rust_tun/parameters/unguarded";

pub const FLOW_AGEING_PARAM: &str = "/sys/module/rust_tun/parameters/flow_ageing_ms";
pub const MICRO_BENCH_CALLS_PARAM: &str = "/sys/module/rust_tun/parameters/micro_bench_calls";

/// A module parameter at `path` holds `value` (its default), and every
/// `(bad, errno)` written to it is refused with that errno and leaves it
/// at `value`.
pub fn param_refuses(path: &str, value: &str, bad: &[(&str, i32)]) -> TestResult {
    let read = || std::fs::read_to_string(path).map(|s| s.trim().to_string()).map_err(|e| format!("{path}: {e}"));
    check!(read()? == value, "{path}: {}, expected {value}", read()?);
    for &(bad, want) in bad {
        let r = std::fs::write(path, bad);
        check!(r.as_ref().is_err_and(|e| e.raw_os_error() == Some(want)), "writing {bad:?} to {path}: {r:?}, expected errno {want}");
        check!(read()? == value, "after writing {bad:?} to {path}: {}", read()?);
    }
    Ok(())
}

/// Puts the RPS/RFS knobs back to off (both static keys disabled).
pub fn keys_off() -> TestResult {
    write_file(RPS_SOCK_FLOW_ENTRIES, "0")?;
    write_file(LO_RPS_CPUS, "0")
}

/// `<debugfs>/rust_tun/DEV/stats` as (key, value) pairs.
pub fn dbg_stat(dev: &str, key: &str) -> Result<String, String> {
    let path = format!("{DEBUGFS}/{dev}/stats");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix(' ')).map(str::to_string))
        .ok_or_else(|| format!("{key} not in {path}: {text}"))
}

pub fn dbg_count(dev: &str, key: &str) -> Result<u64, String> {
    dbg_stat(dev, key)?.parse().map_err(|e| format!("{key}: {e}"))
}

/// One line of `<debugfs>/rust_tun/DEV/flows`.
#[derive(Debug)]
pub struct FlowLine {
    pub rps_rxhash: u32,
    pub queue: u16,
    pub rfs_ent: Option<u32>,
}

pub fn dbg_flows(dev: &str) -> Result<(usize, Vec<FlowLine>), String> {
    let path = format!("{DEBUGFS}/{dev}/flows");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut lines = text.lines();
    let count = lines
        .next()
        .and_then(|l| l.strip_prefix("flow_count "))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("bad {path}"))?;
    let mut flows = Vec::new();
    for l in lines {
        let field = |k: &str| {
            l.split(' ')
                .find_map(|f| f.strip_prefix(k))
                .ok_or_else(|| format!("no {k} in {l}"))
        };
        let hex = |v: &str| u32::from_str_radix(v, 16).map_err(|e| format!("{l}: {e}"));
        let rfs = field("rfs_ent=")?;
        flows.push(FlowLine {
            rps_rxhash: hex(field("rps_rxhash=")?)?,
            queue: field("queue=")?.parse().map_err(|e| format!("{l}: {e}"))?,
            rfs_ent: if rfs == "none" { None } else { Some(hex(rfs)?) },
        });
    }
    Ok((count, flows))
}

/// Whether the loaded module's guards are jump-label sites.
pub fn jump_labels() -> Result<bool, String> {
    let path = format!("{DEBUGFS}/jump_sites");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    match text.lines().next() {
        Some("jump_labels=1") => Ok(true),
        Some("jump_labels=0") => Ok(false),
        other => Err(format!("{path}: first line {other:?}")),
    }
}

/// `<debugfs>/rust_tun/jump_sites` as (key, insn) pairs.
pub fn jump_sites() -> Result<Vec<(String, String)>, String> {
    let path = format!("{DEBUGFS}/jump_sites");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    Ok(text
        .lines()
        .skip(1)
        .map(|l| {
            let get = |k: &str| l.split(' ').find_map(|f| f.strip_prefix(k)).unwrap_or("").to_string();
            (get("key="), get("insn="))
        })
        .collect())
}

/// Checks that every site of `key` holds `insn`, and that there is one.
pub fn sites_are(key: &str, insn: &str) -> TestResult {
    let sites = jump_sites()?;
    let mine: Vec<_> = sites.iter().filter(|(k, _)| k == key).collect();
    check!(!mine.is_empty(), "no jump site for {key}: {sites:?}");
    check!(mine.iter().all(|(_, i)| i == insn), "{key} sites are not all {insn}: {sites:?}");
    Ok(())
}
