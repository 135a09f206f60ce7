// SPDX-License-Identifier: GPL-2.0

//! The module's parameters (declared with `module_param()` in
//! `params.c`: 6.12's `module!` has no parameters).

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
