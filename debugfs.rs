// SPDX-License-Identifier: GPL-2.0

//! The debugfs files (tun.c has none; see `Documentation/rust_tun.rst`):
//!
//! - `<debugfs>/rust_tun/jump_sites`: whether the guards are jump-label
//!   sites, then each site of this module with its key and instruction;
//! - `<debugfs>/rust_tun/helpers_oracle` (GCC-built kernels whose helpers
//!   are inlined): the inlined per-CPU helpers against GCC's copies;
//! - `<debugfs>/rust_tun/<ifname>/flows`: the device's flow table;
//! - `<debugfs>/rust_tun/<ifname>/stats`: its mode and counters.
//!
//! The micro-benchmark's file is in `bench.rs`. Each file's text is made
//! at open, so a reader sees one snapshot however it reads.

use crate::rps::show_jump_sites;
use crate::sys::{self, DebugfsDevFileOps, DebugfsFileOps, TextBuf};
use crate::{Tun, TunDev};
use core::fmt::Write;
use kernel::prelude::*;

fn fmt_err(_: core::fmt::Error) -> Error {
    ENOMEM
}

/// `jump_sites`.
pub(crate) struct JumpSites;

impl DebugfsFileOps for JumpSites {
    fn show(t: &mut TextBuf) -> Result {
        show_jump_sites(t).map_err(fmt_err)
    }
}

/// `helpers_oracle` (GCC-built kernels with inlined helpers): the inlined
/// per-CPU helpers against GCC's copies, one row each.
#[cfg(rtun_helpers_oracle)]
pub(crate) struct HelpersOracle;

#[cfg(rtun_helpers_oracle)]
impl DebugfsFileOps for HelpersOracle {
    fn show(t: &mut TextBuf) -> Result {
        sys::bench::oracle::compare(t).map_err(fmt_err)
    }
}

/// `<ifname>/flows`: the flow count, then one line per flow with its RFS
/// entry.
pub(crate) struct Flows;

impl DebugfsDevFileOps for Flows {
    type Priv = Tun;

    fn show(dev: &TunDev, t: &mut TextBuf) -> Result {
        tun_show_flows(dev.priv_(), t).map_err(fmt_err)
    }
}

fn tun_show_flows(tun: &Tun, t: &mut TextBuf) -> core::fmt::Result {
    let flows = tun.flows.snapshot().map_err(|_| core::fmt::Error)?;
    writeln!(t, "flow_count {}", flows.len())?;
    for f in flows.iter() {
        write!(
            t,
            "rxhash={:08x} rps_rxhash={:08x} queue={} age_ms={}",
            f.rxhash, f.rps_rxhash, f.queue_index, f.age_ms
        )?;
        match (f.rps_rxhash, sys::tun::rps_sock_flow_entry(f.rps_rxhash)) {
            (0, _) | (_, None) => writeln!(t, " rfs_ent=none")?,
            (_, Some(ent)) => writeln!(t, " rfs_ent={:08x}", ent)?,
        }
    }
    Ok(())
}

/// `<ifname>/stats`: the mode, the queues, the flow table and the driver's
/// own counters (the device's statistics add the core's).
pub(crate) struct Stats;

impl DebugfsDevFileOps for Stats {
    type Priv = Tun;

    fn show(dev: &TunDev, t: &mut TextBuf) -> Result {
        tun_show_stats(dev, t).map_err(fmt_err)
    }
}

fn tun_show_stats(dev: &TunDev, t: &mut TextBuf) -> core::fmt::Result {
    let tun = dev.priv_();
    let mode = if tun.unguarded {
        "unguarded"
    } else {
        "guarded"
    };
    writeln!(t, "mode {}", mode)?;
    writeln!(t, "numqueues {}", tun.numqueues())?;
    writeln!(t, "numdisabled {}", tun.numdisabled())?;
    writeln!(t, "flow_count {}", tun.flows.flow_count())?;
    let pool = if tun.flows.has_pool() {
        "allocated"
    } else {
        "none"
    };
    writeln!(t, "flow_table {}", pool)?;
    // The device's statistics (`dev_get_stats()`, as `ip -s link`).
    let s = dev.stats();
    writeln!(t, "rx_packets {}", s.rx_packets)?;
    writeln!(t, "rx_bytes {}", s.rx_bytes)?;
    writeln!(t, "rx_dropped {}", s.rx_dropped)?;
    writeln!(t, "tx_packets {}", s.tx_packets)?;
    writeln!(t, "tx_bytes {}", s.tx_bytes)?;
    writeln!(t, "tx_dropped {}", s.tx_dropped)?;
    let (rps_hashes, rfs_records, write_drops) = tun.stats.pcpu_sums();
    writeln!(t, "rps_hashes {}", rps_hashes)?;
    writeln!(t, "rfs_records {}", rfs_records)?;
    // Of rx_dropped, the writes the driver dropped (the rest, the stack's
    // drops of written packets: a full backlog, a device gone down).
    writeln!(t, "write_drops {}", write_drops)
}
