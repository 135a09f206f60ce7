// SPDX-License-Identifier: GPL-2.0

//! RCU read-side critical sections: [`Guard`] and [`read_lock`], the
//! names, shape and invariant of `kernel::sync::rcu::{Guard, read_lock}`
//! (6.12's and 7.3's).
//!
//! A deliberate difference: the module keeps its own, because the kernel
//! crate's costs two calls per critical section on the per-packet paths.
//! Its `Guard` calls `bindings::rcu_read_lock()`, the kernel's
//! `rust_helper_rcu_read_lock()`, which is inlined into Rust code only
//! with `CONFIG_RUST_INLINE_HELPERS` (7.3, EXPERIMENTAL; off in the test
//! kernels' configs) and never on 6.12. This one calls the module's own
//! helper (`rtun_helper_rcu_read_lock`), which `Kbuild` always inlines
//! through LLVM bitcode: without `CONFIG_PREEMPT_RCU` the section is one
//! `incq %gs:__preempt_count` and one `decq` with its `preempt_schedule`
//! check. With the kernel's `Guard`, 7.3's tun.o calls
//! `rust_helper_rcu_read_lock` and `rust_helper_rcu_read_unlock` (in
//! vmlinux: an `incq`/`decq` and a `ret`) in `tun_net_xmit`
//! (`start_xmit`), `tun_select_queue`, `tun_flow_update`, `RcuDev::get`
//! (every read, write and `sendmsg`) and `recvmsg`. Where the kernel
//! inlines its helpers the two are the same code, and this file can
//! become `pub(crate) use kernel::sync::rcu::{read_lock, Guard};`.

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
