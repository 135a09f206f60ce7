// SPDX-License-Identifier: GPL-2.0

//! The micro-benchmark of the rfs_needed patch, as a debugfs file:
//! `<debugfs>/rust_tun/micro_bench` times the guarded and the unguarded
//! RFS record step (`rps.rs`) and an empty loop, at open. The steps record
//! into a private twin of the global table (`sys::bench::PrivateFlowTable`:
//! there while the global one is, as large), not into the live table,
//! whose entries steer real flows.
//! `scripts/guest/bench-micro.sh` reads it under `-icount`, where a cycle
//! is an instruction; `bench/` holds the C side of the comparison.

use crate::params;
use crate::rps::{sock_rps_record_flow_hash, sock_rps_record_flow_hash_guarded};
use crate::sys::{self, DebugfsFileOps, TextBuf};
use core::fmt::Write;
use kernel::prelude::*;

/// Calls per stretch with bottom halves off: a measurement is the sum of
/// `micro_bench_calls / BENCH_CHUNK` timed stretches, with bottom halves back on
/// and a chance to reschedule between them, so reading the file never
/// holds a CPU for long (a debug kernel runs 10M calls for tens of
/// seconds, and the soft-lockup watchdog would fire).
const BENCH_CHUNK: u32 = 100_000;

/// Cycles of `stretches` stretches of `BENCH_CHUNK` calls of `f`, each
/// timed with bottom halves disabled; `EINTR` if a signal arrives between
/// stretches.
#[inline(always)]
fn measure(stretches: u32, mut f: impl FnMut(u32)) -> Result<u64> {
    let mut cycles = 0u64;
    for _ in 0..stretches {
        {
            let _bh = sys::BhDisabled::new();
            let t0 = sys::bench::rdtsc();
            f(BENCH_CHUNK);
            cycles = cycles.wrapping_add(sys::bench::rdtsc().wrapping_sub(t0));
        }
        sys::cond_resched();
        if sys::signal_pending() {
            return Err(EINTR);
        }
    }
    Ok(cycles)
}

/// The micro-benchmark of the rfs_needed patch, at open of
/// `<debugfs>/rust_tun/micro_bench`: `micro_bench_calls` (default
/// 10,000,000, the patch's) calls of the guarded record step, of the
/// unguarded one, and an empty loop as the floor, each timed with the cycle
/// counter with bottom halves disabled; three runs. One line per
/// measurement.
fn micro_bench(t: &mut TextBuf) -> Result {
    let hash = 0x9e37_79b9u32;
    // The parameter is read once: every measurement counts the same calls.
    let stretches = params::micro_bench_calls() / BENCH_CHUNK;
    let calls = stretches * BENCH_CHUNK;
    let rfs = sys::bench::rfs_needed_count();
    // The global table's twin: there when it is, as large.
    let table = sys::bench::PrivateFlowTable::like_global()?;
    for run in 0..3 {
        let floor = measure(stretches, |n| {
            for _ in 0..n {
                sys::bench::hide(hash);
            }
        })?;
        let guarded = measure(stretches, |n| {
            for _ in 0..n {
                let _ = sock_rps_record_flow_hash_guarded(&table, sys::bench::hide(hash));
            }
        })?;
        let unguarded = measure(stretches, |n| {
            for _ in 0..n {
                let _ = sock_rps_record_flow_hash(&table, sys::bench::hide(hash));
            }
        })?;
        for (variant, cycles) in [
            ("floor", floor),
            ("guarded", guarded),
            ("unguarded", unguarded),
        ] {
            writeln!(
                t,
                "impl=rust variant={} run={} rfs_needed={} calls={} cycles={}",
                variant, run, rfs, calls, cycles
            )
            .map_err(|_| ENOMEM)?;
        }
    }
    Ok(())
}

/// `micro_bench`.
pub(crate) struct MicroBench;

impl DebugfsFileOps for MicroBench {
    fn show(t: &mut TextBuf) -> Result {
        micro_bench(t)
    }
}
