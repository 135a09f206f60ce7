// SPDX-License-Identifier: GPL-2.0

//! rust_tun's measuring apparatus, apart from the layer proper and built
//! into rust_tun only: what its micro-benchmark needs (the cycle counter,
//! a way to keep the optimiser from folding a loop away, an RFS table of
//! its own: [`PrivateFlowTable`]), the report of the module's
//! jump-label sites ([`for_each_jump_site`]) that the guards' tests read,
//! and on a GCC-built kernel with inlined helpers the comparison of the
//! per-CPU helpers with GCC's copies ([`oracle::compare`]).

#![warn(dead_code, unused_imports, unused_macros)]

mod flow_table;
mod jump_sites;
#[cfg(rtun_helpers_oracle)]
pub(crate) mod oracle;

pub(crate) use flow_table::PrivateFlowTable;
pub(crate) use jump_sites::{for_each_jump_site, rfs_needed_count, SiteInsn};

/// The time-stamp counter (`rdtsc()`); under QEMU's `-icount shift=0` one
/// tick is one guest instruction.
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    // SAFETY: `rdtsc` has no preconditions in kernel mode.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Hides `v` from the optimiser, in a register (C's `asm volatile("" :
/// "+r"(v))`), so a loop around it is neither removed nor folded.
#[inline(always)]
pub(crate) fn hide(mut v: u32) -> u32 {
    // SAFETY: An empty asm statement.
    unsafe {
        ::core::arch::asm!("/* {0:e} */", inout(reg) v, options(nomem, nostack, preserves_flags))
    };
    v
}
