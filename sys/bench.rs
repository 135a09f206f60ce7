// SPDX-License-Identifier: GPL-2.0

//! What a micro-benchmark needs: the cycle counter, and a way to keep the
//! optimiser from folding a loop away.

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
