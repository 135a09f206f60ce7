// SPDX-License-Identifier: GPL-2.0

//! Locks and bottom halves: [`SpinLockBh`] (a `kernel::sync::Lock` over
//! `spin_lock_bh()`), the bottom-half tokens [`BhOff`] and [`BhDisabled`],
//! `cond_resched()`, `signal_pending()`, `synchronize_net()`, the memory
//! barriers `smp_mb()` and `smp_mb__after_atomic()`.
//!
//! The barriers are the module's own, a deliberate difference from 7.3's
//! `kernel::sync::barrier::smp_mb(Full)` (6.12 has none): that one calls
//! `bindings::smp_mb()`, the kernel's `rust_helper_smp_mb()`, inlined
//! only with `CONFIG_RUST_INLINE_HELPERS` (off in the test kernels'
//! configs), where this one's helper is inlined through LLVM bitcode
//! (`Kbuild`) into a single `lock addl $0,-4(%rsp)`. With the kernel's,
//! 7.3's tun.o calls `rust_helper_smp_mb` (in vmlinux: that `lock addl`
//! and a `ret`) on the read path, for every packet read
//! (`__tun_wake_queue()` in `tun_ring_recv`, `read_iter`, `recvmsg`).
//! The kernel crate has no `smp_mb__after_atomic()` (on x86 a compiler
//! barrier only).

use crate::bindings;
use core::marker::PhantomData;
use kernel::sync::lock::{Backend, Lock};

/// A `spinlock_t` taken with `spin_lock_bh`: usable from process context and
/// from softirq context alike, like tun.c's `tun->lock` (the flow table's
/// writers run in both: the write path and the ageing timer).
pub(crate) struct SpinLockBhBackend;

/// A spinlock that disables bottom halves while held.
pub(crate) type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

// SAFETY: `spin_lock_bh` ensures mutual exclusion; `relock` uses the default,
// which calls `lock` again.
unsafe impl Backend for SpinLockBhBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: The caller guarantees `ptr` is valid for writes and that
        // `name` and `key` live forever.
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) {
        // CAST: `kernel::bindings::spinlock_t` and our `spinlock` are the same
        // C type, bound twice.
        // SAFETY: The caller guarantees `ptr` is an initialised spinlock.
        unsafe { bindings::spin_lock_bh(ptr.cast()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &()) {
        // SAFETY: The caller guarantees it holds the lock at `ptr`.
        unsafe { bindings::spin_unlock_bh(ptr.cast()) }
    }

    crate::sys::compat::backend_since_7_3! {
        unsafe fn try_lock(ptr: *mut Self::State) -> Option<()> {
            // CAST: As in `lock`.
            // SAFETY: The caller guarantees `ptr` is an initialised spinlock.
            (unsafe { bindings::spin_trylock_bh(ptr.cast()) } != 0).then_some(())
        }

        unsafe fn assert_is_held(ptr: *mut Self::State) {
            // CAST: As in `lock`.
            // SAFETY: The caller guarantees `ptr` is an initialised spinlock.
            unsafe { bindings::spin_assert_is_held(ptr.cast()) }
        }
    }
}

/// Creates a [`SpinLockBh`] initialiser with a static lock class (the
/// caller has `SpinLockBh` in scope).
macro_rules! new_spinlock_bh {
    ($inner:expr, $name:literal) => {
        SpinLockBh::new(
            $inner,
            ::kernel::c_str!($name),
            ::kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_spinlock_bh;

/// Proof that bottom halves are off: `ndo_start_xmit` runs so.
pub(crate) struct BhOff(PhantomData<*mut ()>);

impl BhOff {
    /// # Safety
    ///
    /// Bottom halves are off for the lifetime of the result.
    pub(in crate::sys) unsafe fn assume() -> Self {
        Self(PhantomData)
    }
}

/// Bottom halves disabled until dropped (`local_bh_disable()`).
pub(crate) struct BhDisabled(PhantomData<*mut ()>);

impl BhDisabled {
    /// `local_bh_disable()`.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        // SAFETY: Balanced by `drop`.
        unsafe { bindings::local_bh_disable() };
        Self(PhantomData)
    }
}

impl core::ops::Deref for BhDisabled {
    type Target = BhOff;

    /// Bottom halves are off for as long as this borrow.
    #[inline(always)]
    fn deref(&self) -> &BhOff {
        &BhOff(PhantomData)
    }
}

impl Drop for BhDisabled {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: Balances `new`.
        unsafe { bindings::local_bh_enable() };
    }
}

/// `smp_mb()`: a full memory barrier.
#[inline(always)]
pub(crate) fn smp_mb() {
    // SAFETY: No precondition.
    unsafe { bindings::smp_mb() };
}

/// `smp_mb__after_atomic()`: orders the atomic bit operation before it
/// (e.g. `netif_tx_stop_queue()`'s `set_bit()`) with what follows.
// C's name, as everywhere in this crate.
#[allow(non_snake_case)]
#[inline(always)]
pub(crate) fn smp_mb__after_atomic() {
    // SAFETY: No precondition.
    unsafe { bindings::smp_mb__after_atomic() };
}

/// `cond_resched()`: lets the scheduler run something else (process
/// context).
pub(crate) fn cond_resched() {
    // SAFETY: No memory-safety precondition (it may sleep).
    unsafe { bindings::cond_resched() };
}

/// `signal_pending(current)`.
pub(crate) fn signal_pending() -> bool {
    // SAFETY: Always allowed.
    unsafe { bindings::signal_pending(bindings::get_current()) != 0 }
}

/// `synchronize_net()`: waits until every RCU reader that may have seen an
/// old pointer is done (expedited when the caller holds rtnl, as the C
/// function decides for itself).
///
/// It sleeps: calling it in atomic context is a bug that `might_sleep()`
/// reports (a liveness matter, like every sleeping call from Rust; it
/// cannot make memory unsafe).
pub(crate) fn synchronize_net() {
    // SAFETY: No memory-safety precondition; it only waits.
    unsafe { bindings::synchronize_net() };
}
