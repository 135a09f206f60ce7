// SPDX-License-Identifier: GPL-2.0

//! RCU read-side critical sections: [`Guard`], 7.3's
//! `kernel::sync::rcu::Guard` (6.12's `kernel` crate has it too, calling
//! `rcu_read_lock()` out of line; this one inlines it).

use crate::bindings;
use core::marker::PhantomData;

/// Evidence that the RCU read-side lock is held on the current CPU
/// (`rcu_read_lock()` .. `rcu_read_unlock()`). Not `Send`: the property is
/// per CPU.
///
/// # Invariants
///
/// The RCU read-side lock is held while the guard exists.
pub(crate) struct Guard(PhantomData<*mut ()>);

impl Guard {
    /// Acquires the RCU read-side lock until the guard is dropped.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        // SAFETY: Always allowed; balanced by `drop`.
        unsafe { bindings::rcu_read_lock() };
        // INVARIANT: The lock was just acquired.
        Self(PhantomData)
    }
}

impl Default for Guard {
    #[inline(always)]
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: By the type invariants the lock is held: this balances
        // the `rcu_read_lock()` of `new`.
        unsafe { bindings::rcu_read_unlock() };
    }
}

/// Acquires the RCU read-side lock (`rcu_read_lock()`).
#[inline(always)]
pub(crate) fn read_lock() -> Guard {
    Guard::new()
}
