// SPDX-License-Identifier: GPL-2.0

//! The modules' parameters, declared with `module_param()` in each
//! module's own C file (`tun_params.c`, `dummy_params.c`: 6.12's `module!`
//! has no parameters) and read through their accessors. Not part of the
//! layer's core: each driver's parameters are its own.

/// The `unguarded` parameter, READ_ONCE.
pub(crate) fn param_unguarded() -> bool {
    // SAFETY: Reads a module parameter with READ_ONCE.
    unsafe { crate::bindings::rtun_param_unguarded() }
}

/// The `dropin` parameter (read-only after load).
pub(crate) fn param_dropin() -> bool {
    // SAFETY: Reads a module parameter with READ_ONCE.
    unsafe { crate::bindings::rtun_param_dropin() }
}

/// The `flow_ageing_ms` parameter, READ_ONCE, in jiffies (`msecs_to_jiffies`).
pub(crate) fn param_flow_ageing() -> u64 {
    // SAFETY: Reads a module parameter with READ_ONCE.
    unsafe { crate::bindings::rtun_param_flow_ageing() as u64 }
}

/// The `micro_bench_calls` parameter, READ_ONCE (100,000 to 100,000,000).
pub(crate) fn param_micro_bench_calls() -> u32 {
    // SAFETY: Reads a module parameter with READ_ONCE.
    unsafe { crate::bindings::rtun_param_micro_bench_calls() }
}

/// rust_dummy's `numdummies` parameter (read at load).
// Used by rust_dummy (dummy.rs), not by rust_tun.
#[allow(dead_code)]
pub(crate) fn param_numdummies() -> i32 {
    // SAFETY: Reads a module parameter with READ_ONCE.
    unsafe { crate::bindings::rtun_param_numdummies() }
}
