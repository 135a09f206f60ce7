// SPDX-License-Identifier: GPL-2.0

//! Time and timers: `jiffies`, [`HZ`], [`Timed`] (a value with a timer that
//! fires on it, shut down when it goes),
//! RCU grace-period cookies ([`rcu_cookie`]).

use crate::bindings;
use core::ffi::c_ulong;
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

/// What a [`Timed`] value does when its timer fires.
pub(crate) trait TimerCallback: Sync + Sized {
    /// The timer callback (softirq context), on the value and its timer
    /// (to re-arm it).
    fn timer_fired(this: &Timed<Self>);
}

/// A `T` with a kernel timer that fires [`TimerCallback::timer_fired`] on
/// it: the shape of tun.c's `flow_gc_timer` inside `struct tun_struct`,
/// made sound by ownership. The timer is shut down when the `Timed` is
/// dropped, before the `T` is (the `PinnedDrop` runs before any field
/// drops), and nothing gives out a `&mut T` or moves the `T` out while
/// the timer may be armed, so the callback always sees a whole `T`.
/// Pinned: the timer is linked into the kernel's timer wheel by address.
#[pin_data(PinnedDrop)]
pub(crate) struct Timed<T: TimerCallback> {
    #[pin]
    timer: Opaque<bindings::timer_list>,
    #[pin]
    inner: T,
}

// SAFETY: The kernel's timer code synchronises its own state; the `T` is
// shared with the callback (another CPU, softirq) only as `&T`, and
// `T: Sync`; sent only if `T` may be.
unsafe impl<T: TimerCallback + Send> Send for Timed<T> {}
// SAFETY: As above: `&Timed<T>` gives `&T` and the timer's own
// synchronised operations.
unsafe impl<T: TimerCallback> Sync for Timed<T> {}

impl<T: TimerCallback> Timed<T> {
    /// `timer_setup()` in place, with [`Self::run`] as the callback, around
    /// `inner`; not armed.
    pub(crate) fn new<E>(inner: impl PinInit<T, E>) -> impl PinInit<Self, E>
    where
        E: From<core::convert::Infallible>,
    {
        try_pin_init!(Self {
            // SAFETY: `slot` is valid for writes and pinned (it is
            // initialised in place and never moves).
            timer <- Opaque::ffi_init(|slot| unsafe {
                bindings::timer_setup(slot, Some(Self::run), 0)
            }),
            inner <- inner,
        }? E)
    }

    /// The C callback: back from the `timer_list` to the `Timed` around it.
    ///
    /// # Safety
    ///
    /// Called by the timer code for a timer set up by [`Self::new`].
    unsafe extern "C" fn run(t: *mut bindings::timer_list) {
        let off = core::mem::offset_of!(Self, timer);
        // CAST: `Opaque` is transparent: the `timer_list` is the field at
        // `off` of the `Timed` that set it up.
        // SAFETY: The timer fires only while the `Timed` around it is
        // whole: its drop shuts the timer down before anything of it goes.
        let this = unsafe { &*t.cast::<u8>().sub(off).cast::<Self>() };
        T::timer_fired(this);
    }

    /// `timer_pending()`.
    pub(crate) fn pending(&self) -> bool {
        // SAFETY: Set up by `new`.
        unsafe { bindings::timer_pending(self.timer.get()) != 0 }
    }

    /// `mod_timer()`: arms (or moves) the timer to fire at `expires`
    /// (jiffies).
    pub(crate) fn mod_timer(&self, expires: u64) {
        // SAFETY: Set up; `mod_timer` may be called from any context, and
        // the timer stays set up until the drop's shutdown.
        unsafe { bindings::mod_timer(self.timer.get(), expires as c_ulong) };
    }
}

impl<T: TimerCallback> core::ops::Deref for Timed<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

#[pinned_drop]
impl<T: TimerCallback> PinnedDrop for Timed<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Set up by `new`; `timer_shutdown_sync()` waits for a
        // running callback (on another CPU: the callback only borrows the
        // `Timed`, so it cannot be the one dropping it) and the timer
        // never fires again.
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
