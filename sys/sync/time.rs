// SPDX-License-Identifier: GPL-2.0

//! Time and timers: `jiffies`, [`HZ`], [`Timer`] (embedded in a [`HasTimer`]),
//! RCU grace-period cookies ([`rcu_cookie`]).

use crate::bindings;
use core::ffi::c_ulong;
use core::marker::PhantomData;
use core::ptr;
use kernel::prelude::*;
use kernel::types::Opaque;

/// `jiffies`.
#[inline(always)]
pub(crate) fn jiffies() -> u64 {
    // SAFETY: `jiffies` is a live, exported `volatile unsigned long`, read
    // as C reads it.
    unsafe { ptr::read_volatile(ptr::addr_of!(bindings::jiffies)) as u64 }
}

/// `HZ`.
#[allow(clippy::unnecessary_cast)] // `unsigned long` is `u64` only on 64-bit.
pub(crate) const HZ: u64 = bindings::RTUN_HZ as u64;

/// `round_jiffies_up()`.
pub(crate) fn round_jiffies_up(j: u64) -> u64 {
    // SAFETY: Pure computation.
    unsafe { bindings::round_jiffies_up(j as c_ulong) as u64 }
}

/// Objects with an embedded [`Timer`] that fires [`HasTimer::timer_fired`]
/// (the shape of `rust/kernel/workqueue.rs`' `HasWork`).
///
/// # Safety
///
/// `OFFSET` is the offset of a `Timer<Self>` field of `Self` (use
/// [`impl_has_timer!`]), and the implementor shuts the timer down
/// ([`Timer::shutdown`]) before any part of it is dropped.
pub(crate) unsafe trait HasTimer: Sync + Sized {
    /// `offset_of!(Self, <timer field>)`.
    const OFFSET: usize;

    /// The timer callback (softirq context).
    fn timer_fired(&self);
}

/// Implements [`HasTimer`] for `$ty` with its timer in `$field`, calling
/// `$fired` (the caller has `HasTimer` in scope).
macro_rules! impl_has_timer {
    ($ty:ty, $field:ident, $fired:path) => {
        // SAFETY: `OFFSET` is the offset of the `Timer<Self>` field
        // `$field`; the type shuts it down in its `PinnedDrop` before its
        // fields drop.
        unsafe impl HasTimer for $ty {
            const OFFSET: usize = ::core::mem::offset_of!($ty, $field);

            fn timer_fired(&self) {
                $fired(self)
            }
        }
    };
}
pub(crate) use impl_has_timer;

/// A kernel timer embedded in a pinned `T`, firing `T::timer_fired`.
#[repr(C)]
#[pin_data]
pub(crate) struct Timer<T: HasTimer> {
    #[pin]
    timer: Opaque<bindings::timer_list>,
    _owner: PhantomData<T>,
}

// SAFETY: The kernel's timer code synchronises its own state; `T: Sync`
// is what the callback gets to share.
unsafe impl<T: HasTimer> Send for Timer<T> {}
// SAFETY: As above.
unsafe impl<T: HasTimer> Sync for Timer<T> {}

impl<T: HasTimer> Timer<T> {
    /// `timer_setup()` in place, with [`Self::run`] as the callback.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `slot` is valid for writes and pinned (it is
            // initialised in place and never moves).
            timer <- Opaque::ffi_init(|slot| unsafe {
                bindings::timer_setup(slot, Some(Self::run), 0)
            }),
            _owner: PhantomData,
        })
    }

    /// The C callback: back from the `timer_list` to the `T` around it.
    ///
    /// # Safety
    ///
    /// Called by the timer code for a timer set up by [`Self::new`].
    unsafe extern "C" fn run(t: *mut bindings::timer_list) {
        // CAST: `Timer` is `repr(C)` with the `timer_list` (in a
        // transparent `Opaque`) first, and it sits at `T::OFFSET` in `T`.
        // SAFETY: The timer fires only while the `T` around it is whole:
        // `HasTimer` implementors shut the timer down before dropping
        // anything of it.
        let owner = unsafe { &*t.cast::<u8>().sub(T::OFFSET).cast::<T>() };
        owner.timer_fired();
    }

    /// `timer_pending()`.
    pub(crate) fn pending(&self) -> bool {
        // SAFETY: Set up by `new`.
        unsafe { bindings::timer_pending(self.timer.get()) != 0 }
    }

    /// `mod_timer()`: a no-op once shut down.
    pub(crate) fn mod_timer(&self, expires: u64) {
        // SAFETY: Set up; `mod_timer` may be called from any context.
        unsafe { bindings::mod_timer(self.timer.get(), expires as c_ulong) };
    }

    /// `timer_shutdown_sync()`: waits for a running callback; the timer
    /// never fires again. Process context.
    pub(crate) fn shutdown(&self) {
        // SAFETY: Set up; the caller is in process context (the owner's drop).
        unsafe { bindings::timer_shutdown_sync(self.timer.get()) };
    }
}

/// RCU grace-period cookies, for reusing flow entries only once no reader
/// can still see them.
pub(crate) mod rcu_cookie {
    use crate::bindings;

    /// `start_poll_synchronize_rcu()`: a cookie for "a grace period from
    /// now", making sure that grace period starts (a cookie from
    /// `get_state_synchronize_rcu()` would wait for someone else to start
    /// one, which an idle system may never do). Interrupts must be on.
    pub(crate) fn start() -> usize {
        // SAFETY: Callable with interrupts on, from any other context.
        unsafe { bindings::start_poll_synchronize_rcu() as usize }
    }

    /// `get_completed_synchronize_rcu()`: a cookie that is already done.
    pub(crate) fn completed() -> usize {
        // SAFETY: Always allowed.
        unsafe { bindings::get_completed_synchronize_rcu() as usize }
    }

    /// `poll_state_synchronize_rcu()`: has that grace period passed?
    pub(crate) fn done(cookie: usize) -> bool {
        // SAFETY: Always allowed.
        unsafe { bindings::poll_state_synchronize_rcu(cookie as core::ffi::c_ulong) }
    }
}
