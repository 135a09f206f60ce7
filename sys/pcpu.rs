// SPDX-License-Identifier: GPL-2.0

//! Per-CPU counters of a driver's own (`alloc_percpu()`), for counts the
//! hot paths of several CPUs would otherwise bounce between their caches:
//! each CPU adds to its own copy with one `this_cpu_add()`; a reader sums
//! the copies of every possible CPU, as `dev_fetch_sw_netstats()` does.

use crate::bindings;
use core::ffi::c_int;
use core::ptr::{self, NonNull};
use kernel::prelude::*;

/// `N` per-CPU `u64` counters.
///
/// # Invariants
///
/// `self.0` is a live `__percpu` allocation of `N` `u64`s, zeroed, freed
/// on drop, written only by `this_cpu` operations.
pub(crate) struct PerCpuCounters<const N: usize>(NonNull<u64>);

// SAFETY: Each CPU writes its own copy with single instructions; readers
// only read. The allocation itself is not tied to a thread.
unsafe impl<const N: usize> Send for PerCpuCounters<N> {}
// SAFETY: As above.
unsafe impl<const N: usize> Sync for PerCpuCounters<N> {}

impl<const N: usize> PerCpuCounters<N> {
    /// `alloc_percpu()` of `N` zeroed counters. May sleep.
    pub(crate) fn new() -> Result<Self> {
        const { assert!(N > 0) };
        let size = N * core::mem::size_of::<u64>();
        // SAFETY: A plain allocation (zeroed by the per-CPU allocator).
        let p = unsafe { bindings::__alloc_percpu(size, core::mem::align_of::<u64>()) };
        // INVARIANT: Allocated, zeroed, ours.
        Ok(Self(NonNull::new(p.cast::<u64>()).ok_or(ENOMEM)?))
    }

    /// Adds one to counter `I` on this CPU.
    #[inline(always)]
    pub(crate) fn inc<const I: usize>(&self) {
        const { assert!(I < N) };
        // SAFETY: Counter `I` of the live allocation (invariant), which
        // only `this_cpu` operations write.
        unsafe { bindings::this_cpu_inc_u64(self.0.as_ptr().add(I)) }
    }

    /// Counter `I` as the `u64 __percpu *` C's `this_cpu` operations take
    /// (sys/bench/oracle.rs gives it to GCC's copy of `this_cpu_inc_u64`).
    /// Writing through it other than by a `this_cpu` operation breaks the
    /// type's invariant; that takes `unsafe`.
    pub(crate) fn as_ptr<const I: usize>(&self) -> *mut u64 {
        const { assert!(I < N) };
        // SAFETY: Counter `I` of the allocation (invariant): in bounds.
        unsafe { self.0.as_ptr().add(I) }
    }

    /// The sum of counter `I` over every possible CPU (a racy read, as
    /// the core's per-CPU statistics: each copy is read whole).
    pub(crate) fn sum<const I: usize>(&self) -> u64 {
        const { assert!(I < N) };
        let mut total = 0u64;
        // SAFETY: `cpumask_next(-1, cpu_possible_mask)` is the first
        // possible CPU; it returns `nr_cpu_ids` or more past the last.
        let mut cpu = unsafe { bindings::cpumask_next(-1, bindings::cpu_possible_mask()) } as c_int;
        // SAFETY: Reads `nr_cpu_ids`, set at boot.
        while (cpu as u32) < unsafe { bindings::nr_cpu_ids } {
            // SAFETY: A possible CPU's copy of counter `I` of the live
            // allocation; a volatile read of an aligned `u64` (written
            // whole by single instructions).
            total = total.wrapping_add(unsafe {
                let p = bindings::per_cpu_ptr(self.0.as_ptr().add(I).cast(), cpu);
                ptr::read_volatile(p.cast::<u64>())
            });
            // SAFETY: As above.
            cpu = unsafe { bindings::cpumask_next(cpu, bindings::cpu_possible_mask()) } as c_int;
        }
        total
    }
}

impl<const N: usize> Drop for PerCpuCounters<N> {
    fn drop(&mut self) {
        // SAFETY: Ours (invariant); nobody uses it after this.
        unsafe { bindings::free_percpu(self.0.as_ptr().cast()) }
    }
}

/// `smp_processor_id()`: the CPU we run on, which cannot change while
/// bottom halves are off (`_bh`).
#[inline(always)]
pub(crate) fn smp_processor_id(_bh: &crate::sys::BhOff) -> u32 {
    // SAFETY: No precondition beyond not migrating, which `_bh` gives.
    unsafe { bindings::smp_processor_id() as u32 }
}
