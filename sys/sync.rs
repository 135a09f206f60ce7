// SPDX-License-Identifier: GPL-2.0

//! Locking, RCU, rtnl, wait queues and timers: `SpinLockBh`,
//! `RcuArc`, `Rtnl`, `WaitQueue`, `Timer`.

use super::rcu;
use crate::bindings;
use core::cell::UnsafeCell;
use core::ffi::c_ulong;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::lock::{Backend, Lock};
use kernel::sync::{Arc, LockClassKey};
use kernel::types::Opaque;

// ---------------------------------------------------------------------------
// Locks, RCU, rtnl.

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
    pub(super) unsafe fn assume() -> Self {
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

impl Drop for BhDisabled {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: Balances `new`.
        unsafe { bindings::local_bh_enable() };
    }
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

/// Proof that the rtnl lock is held, for the lock's critical section `'g`.
///
/// `'g` is a brand: [`Rtnl::with`] makes a fresh one per critical section,
/// and nothing outside that call can name it. Devices found under the lock
/// are `&'g NetDevice`: a device unregistered inside the section is only
/// freed by `netdev_run_todo()` in `rtnl_unlock()`, so it stays valid for
/// the whole section, whatever else the section does.
///
/// Writers of rtnl-protected slots ([`RcuArc::replace`],
/// [`RtnlLocked::get_mut`]) need `&mut Rtnl`, readers `&Rtnl`, so a
/// reference read out of a slot cannot outlive a replacement of it. Calls
/// into the kernel that can come back into this module's callbacks under
/// the same lock (register, unregister, state change notifications) also
/// take `&mut Rtnl`: that is what makes the callbacks' own tokens
/// ([`Rtnl::assume_held`]) exclusive.
pub(crate) struct Rtnl<'g> {
    _brand: PhantomData<fn(&'g ()) -> &'g ()>,
    _not_send: PhantomData<*mut ()>,
}

impl Rtnl<'_> {
    /// Runs `f` with the rtnl lock held.
    pub(crate) fn with<R>(f: impl for<'g> FnOnce(&mut Rtnl<'g>) -> R) -> R {
        // SAFETY: Process context; released below.
        unsafe { bindings::rtnl_lock() };
        let mut rtnl = Rtnl {
            _brand: PhantomData,
            _not_send: PhantomData,
        };
        let r = f(&mut rtnl);
        // SAFETY: Taken above. `rtnl` and everything branded with its
        // section are unreachable from here (the brand cannot escape `f`).
        unsafe { bindings::rtnl_unlock() };
        r
    }

    /// Runs `f` with a token for an rtnl lock that the caller's caller
    /// holds: a kernel callback of this module (`ndo_uninit`, the
    /// netdevice notifier).
    ///
    /// # Safety
    ///
    /// The rtnl lock is held for the duration of `f`, and no reference
    /// derived from another token of this thread is live. The latter holds
    /// for callbacks: this module enters the kernel under its own token
    /// only through `&mut Rtnl` methods (see the type's documentation), so
    /// while such a call runs, nothing borrowed from that token is.
    pub(super) unsafe fn assume_held<R>(f: impl for<'g> FnOnce(&mut Rtnl<'g>) -> R) -> R {
        f(&mut Rtnl {
            _brand: PhantomData,
            _not_send: PhantomData,
        })
    }
}

/// Data that only rtnl holders touch: `&Rtnl` reads it, `&mut Rtnl`
/// writes it (`rust/kernel/sync/locked_by.rs`, with the lock's token as
/// the owner).
pub(crate) struct RtnlLocked<T>(UnsafeCell<T>);

// SAFETY: Shared access is only given to rtnl holders, one thread at a
// time, and `T: Send` lets the value be used from whichever thread holds
// rtnl.
unsafe impl<T: Send> Sync for RtnlLocked<T> {}
// SAFETY: Moving the container moves the `T`.
unsafe impl<T: Send> Send for RtnlLocked<T> {}

impl<T> RtnlLocked<T> {
    /// Wraps `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self(UnsafeCell::new(value))
    }

    /// The value, while the borrowed token holds rtnl.
    pub(crate) fn get<'a>(&'a self, _rtnl: &'a Rtnl<'_>) -> &'a T {
        // SAFETY: rtnl is held (the token), so no other thread accesses
        // the value; in this thread, mutable access needs `&mut Rtnl`,
        // which cannot coexist with the `&'a Rtnl` borrowed here, and
        // callbacks' tokens are exclusive (see `Rtnl::assume_held`).
        unsafe { &*self.0.get() }
    }

    /// The value, mutably.
    pub(crate) fn get_mut<'a>(&'a self, _rtnl: &'a mut Rtnl<'_>) -> &'a mut T {
        // SAFETY: As in `get`; the token is borrowed mutably for `'a`, so
        // no other reference obtained through it is live.
        unsafe { &mut *self.0.get() }
    }
}

/// An RCU-published, reference-counted pointer (`struct foo __rcu *` holding
/// a reference), readable under [`rcu::Guard`] and replaced under rtnl.
///
/// # Invariants
///
/// `ptr` is null or comes from `Arc::into_raw` and owns that reference.
pub(crate) struct RcuArc<T> {
    ptr: AtomicPtr<T>,
    /// Sent and shared as the `Arc<T>` it holds.
    _owns: PhantomData<Arc<T>>,
}

/// A pointer unpublished from an [`RcuArc`]: dropping it waits for a grace
/// period before dropping the reference, so readers never see freed memory.
pub(crate) struct Unpublished<T>(core::mem::ManuallyDrop<Arc<T>>);

impl<T> Drop for Unpublished<T> {
    fn drop(&mut self) {
        synchronize_net();
        // SAFETY: Dropped once, here, after the grace period.
        unsafe { core::mem::ManuallyDrop::drop(&mut self.0) };
    }
}

impl<T> Unpublished<T> {
    /// Waits for a grace period, then gives the reference back.
    pub(crate) fn into_arc(self) -> Arc<T> {
        let mut this = core::mem::ManuallyDrop::new(self);
        synchronize_net();
        // SAFETY: `this` is never used or dropped again.
        unsafe { core::mem::ManuallyDrop::take(&mut this.0) }
    }
}

/// Objects unpublished together, released after one shared grace period
/// (tun.c's `tun_detach_all()`: one `synchronize_net()` for every queue).
pub(crate) struct UnpublishedBatch<T> {
    /// Unpublished objects, each waiting for the grace period.
    pending: KVec<Arc<T>>,
    /// Objects already past a grace period of their own (when `pending`
    /// could not grow).
    done: KVec<Arc<T>>,
}

impl<T> UnpublishedBatch<T> {
    /// An empty batch with room for `n` objects (allocating is only an
    /// optimisation: without room, each object waits for its own period).
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            pending: KVec::with_capacity(n, GFP_KERNEL).unwrap_or_default(),
            done: KVec::new(),
        }
    }

    /// Adds an unpublished object.
    pub(crate) fn push(&mut self, u: Unpublished<T>) {
        if self.pending.reserve(1, GFP_KERNEL).is_err() {
            // No room: wait for this one alone (dropping `u` does).
            let arc = u.into_arc();
            if self.done.reserve(1, GFP_KERNEL).is_ok() {
                // Cannot fail: room was reserved.
                let _ = self.done.push(arc, GFP_KERNEL);
            }
            return;
        }
        let mut u = core::mem::ManuallyDrop::new(u);
        // SAFETY: `u` is never used or dropped again; its reference waits
        // in `pending` for `finish` (or drop) to pass a grace period.
        let arc = unsafe { core::mem::ManuallyDrop::take(&mut u.0) };
        // Cannot fail (room was reserved), so `arc` is not dropped here.
        let _ = self.pending.push(arc, GFP_KERNEL);
    }

    /// Waits for one grace period (if anything is pending) and calls `f` on
    /// every object, which readers can no longer see.
    pub(crate) fn finish(mut self, mut f: impl FnMut(Arc<T>)) {
        let pending = core::mem::take(&mut self.pending);
        let done = core::mem::take(&mut self.done);
        if !pending.is_empty() {
            synchronize_net();
        }
        for arc in Iterator::chain(pending.into_iter(), done) {
            f(arc);
        }
    }
}

impl<T> Drop for UnpublishedBatch<T> {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            synchronize_net();
        }
    }
}

impl<T> RcuArc<T> {
    /// An empty slot.
    pub(crate) const fn null() -> Self {
        Self {
            ptr: AtomicPtr::new(ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// `rcu_dereference()`: the object, valid for the read-side section.
    pub(crate) fn get<'a>(&'a self, _rcu: &'a rcu::Guard) -> Option<&'a T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: Non-null pointers own a reference (type invariant), and a
        // replaced pointer is only released after a grace period
        // (`Unpublished`), which cannot end while `_rcu` is alive.
        unsafe { p.as_ref() }
    }

    /// `rtnl_dereference()`: the object, while the borrowed token holds rtnl.
    pub(crate) fn get_rtnl<'a>(&'a self, _rtnl: &'a Rtnl<'_>) -> Option<&'a T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: Only `replace`/`take_from` release the reference the slot
        // owns, and they need `&mut Rtnl`: not while `_rtnl` is borrowed
        // here (nor in another thread, which cannot hold rtnl now).
        unsafe { p.as_ref() }
    }

    /// `rcu_assign_pointer()`: publishes `new`, returning the old object.
    pub(crate) fn replace(
        &self,
        new: Option<Arc<T>>,
        _rtnl: &mut Rtnl<'_>,
    ) -> Option<Unpublished<T>> {
        let newp = new.map_or(ptr::null_mut(), |a| Arc::into_raw(a).cast_mut());
        // INVARIANT: `newp` owns the reference `into_raw` gave up.
        let old = self.ptr.swap(newp, Ordering::AcqRel);
        Self::unpublished(old)
    }

    /// The reference an unpublished pointer owned, waiting for its grace
    /// period.
    fn unpublished(old: *mut T) -> Option<Unpublished<T>> {
        let old = NonNull::new(old)?;
        // SAFETY: `old` was in a slot, so it owned a reference (type
        // invariant); swapped out, that reference is ours.
        let arc = unsafe { Arc::from_raw(old.as_ptr()) };
        Some(Unpublished(core::mem::ManuallyDrop::new(arc)))
    }

    /// Moves the object of `other` into `self` (both under rtnl), leaving
    /// `other` empty; returns `self`'s old object. `self` and `other` must
    /// be different slots.
    pub(crate) fn take_from(&self, other: &Self, _rtnl: &mut Rtnl<'_>) -> Option<Unpublished<T>> {
        if ptr::eq(self, other) {
            return None;
        }
        let p = other.ptr.swap(ptr::null_mut(), Ordering::AcqRel);
        let old = self.ptr.swap(p, Ordering::AcqRel);
        Self::unpublished(old)
    }
}

impl<T> Drop for RcuArc<T> {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: No reader can reach a slot being dropped (its owner
            // is going away after its readers); the pointer owns a
            // reference (type invariant).
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}

/// A `Pin<KBox<T>>` set at most once and read locklessly: the flow table's
/// entries, allocated when a device first needs them.
///
/// # Invariants
///
/// `ptr` is null or comes from `KBox::into_raw` of a pinned box, owned
/// here, never changed again until drop.
pub(crate) struct OncePin<T> {
    ptr: AtomicPtr<T>,
    _owns: PhantomData<Pin<KBox<T>>>,
}

impl<T> OncePin<T> {
    /// Not set.
    pub(crate) const fn new() -> Self {
        Self {
            ptr: AtomicPtr::new(ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// The value, once set.
    #[inline(always)]
    pub(crate) fn get(&self) -> Option<Pin<&T>> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: Set once from a pinned box and kept until drop (type
        // invariant); `Acquire` pairs with `set`'s `Release`.
        unsafe { p.as_ref().map(|r| Pin::new_unchecked(r)) }
    }

    /// Sets the value unless it is set; gives `value` back if it was.
    pub(crate) fn set(&self, value: Pin<KBox<T>>) -> core::result::Result<(), Pin<KBox<T>>> {
        // SAFETY: The box stays pinned: it is only turned back into a
        // `Pin<KBox>` (on failure below, or on drop).
        let p = KBox::into_raw(unsafe { Pin::into_inner_unchecked(value) });
        match self
            .ptr
            .compare_exchange(ptr::null_mut(), p, Ordering::Release, Ordering::Relaxed)
        {
            // INVARIANT: Set once, from a pinned box.
            Ok(_) => Ok(()),
            // SAFETY: Not published; ours again.
            Err(_) => Err(unsafe { Pin::new_unchecked(KBox::from_raw(p)) }),
        }
    }
}

impl<T> Drop for OncePin<T> {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: Owned (type invariant); nothing can reach it any more.
            drop(unsafe { KBox::from_raw(p) });
        }
    }
}

// ---------------------------------------------------------------------------
// Wait queues and poll.

/// A `wait_queue_head` that readers sleep on and `poll` registers with.
#[pin_data]
#[repr(transparent)]
pub(crate) struct WaitQueue {
    #[pin]
    head: Opaque<bindings::wait_queue_head>,
}

// SAFETY: A wait queue head is designed for use from any thread.
unsafe impl Send for WaitQueue {}
// SAFETY: A wait queue head has its own lock.
unsafe impl Sync for WaitQueue {}

impl WaitQueue {
    /// Creates an initialiser with a static lock class.
    pub(crate) fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        pin_init!(Self {
            // CAST: `LockClassKey` is a transparent wrapper of `lock_class_key`.
            // SAFETY: `slot` is valid for writes; `name` and `key` are static.
            head <- Opaque::ffi_init(|slot| unsafe {
                bindings::__init_waitqueue_head(
                    slot,
                    name.as_char_ptr().cast(),
                    ptr::from_ref(key).cast_mut().cast(),
                )
            }),
        })
    }

    /// Sleeps until `cond` gives a value; `ERESTARTSYS` if a signal
    /// arrives first. The loop of tun.c's `tun_ring_recv()`: the entry is
    /// added once (`add_wait_queue`, default wake function) and stays on
    /// the queue across wake-ups, so a wake-up costs no re-queueing.
    pub(crate) fn wait_interruptible<R>(&self, mut cond: impl FnMut() -> Option<R>) -> Result<R> {
        let entry = Opaque::<bindings::wait_queue_entry>::uninit();
        // SAFETY: `entry` is valid for writes; `head` is initialised and
        // pinned; `entry` stays on the queue only until `remove_wait_queue`
        // below, within this frame.
        unsafe {
            bindings::init_waitqueue_entry(entry.get(), bindings::get_current());
            bindings::add_wait_queue(self.head.get(), entry.get());
        }
        let ret = loop {
            // SAFETY: Always allowed; `set_current_state` orders the state
            // write before `cond`'s reads (it has a full barrier).
            unsafe { bindings::set_current_state(bindings::RTUN_TASK_INTERRUPTIBLE) };
            if let Some(v) = cond() {
                break Ok(v);
            }
            // SAFETY: Always allowed.
            if unsafe { bindings::signal_pending(bindings::get_current()) } != 0 {
                break Err(ERESTARTSYS);
            }
            // SAFETY: Process context, no spinlock held (the caller's `cond`
            // takes and releases its locks).
            unsafe { bindings::schedule() };
        };
        // SAFETY: Back to running; `entry` leaves the queue before it dies.
        unsafe {
            bindings::__set_current_state(bindings::RTUN_TASK_RUNNING);
            bindings::remove_wait_queue(self.head.get(), entry.get());
        }
        ret
    }

    /// `wake_up_interruptible_poll()`; callable from any context.
    pub(crate) fn wake_up_poll(&self, mask: u32) {
        // SAFETY: `head` is initialised.
        unsafe { bindings::wake_up_interruptible_poll(self.head.get(), mask) };
    }

    /// `wake_up_interruptible_poll()` only if someone waits or polls
    /// (`wq_has_sleeper()`), as `sock_def_readable()` does for tun.c: the
    /// common case of a busy reader costs a fence and a load, not the
    /// wait queue's lock. The caller has published what the sleeper waits
    /// for; the full fence pairs with the one in `prepare_to_wait()`.
    #[inline(always)]
    pub(crate) fn wake_up_poll_if_sleeper(&self, mask: u32) {
        core::sync::atomic::fence(Ordering::SeqCst);
        // SAFETY: `head` is initialised.
        if unsafe { bindings::waitqueue_active(self.head.get()) } != 0 {
            // SAFETY: `head` is initialised. The sync variant, as
            // `sock_def_readable()` (tun.c's `sk_data_ready`) uses.
            unsafe { bindings::wake_up_interruptible_sync_poll(self.head.get(), mask) };
        }
    }
}

/// Poll event bits.
pub(crate) mod poll {
    use crate::bindings;
    /// `EPOLLIN | EPOLLRDNORM`.
    pub(crate) const IN: u32 = bindings::RTUN_EPOLLIN | bindings::RTUN_EPOLLRDNORM;
    /// `EPOLLOUT | EPOLLWRNORM`.
    pub(crate) const OUT: u32 = bindings::RTUN_EPOLLOUT | bindings::RTUN_EPOLLWRNORM;
    /// `EPOLLERR`.
    pub(crate) const ERR: u32 = bindings::RTUN_EPOLLERR;
}

/// The `poll_table` of one `poll()` call on a file whose private data is
/// borrowed for `'f`.
///
/// `'f` is a brand: invariant, and the lifetime of the `&'f` borrow of the
/// file's private data that the `poll` callback gets, which the file keeps
/// until its release. A wait queue registered with [`PollTable::wait`] must
/// live that long, because epoll keeps its entry on the queue until the
/// polled file is released (`eventpoll_release()` in `__fput()`), not until
/// `poll()` returns: only a queue reached from the private data (or a
/// `'static` one) is `&'f`. One reached from a device, or any other object
/// borrowed for less, does not compile.
pub(crate) struct PollTable<'f> {
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
    _brand: PhantomData<fn(&'f ()) -> &'f ()>,
}

impl<'f> PollTable<'f> {
    /// # Safety
    ///
    /// `file` and `table` are the `poll` callback's, valid for the call;
    /// the file's private data lives for `'f`, until the file's release.
    pub(super) unsafe fn new(
        file: *mut bindings::file,
        table: *mut bindings::poll_table_struct,
    ) -> Self {
        Self {
            file,
            table,
            _brand: PhantomData,
        }
    }

    /// `poll_wait()`: registers `wq` with the caller of `poll()`.
    pub(crate) fn wait(&self, wq: &'f WaitQueue) {
        // SAFETY: `file` and `table` are valid during the callback (`new`'s
        // contract); `wq` lives for `'f`, until the file's release, after
        // which the poll tables' entries are gone (`eventpoll_release()`;
        // `poll()`/`select()` remove theirs before they return).
        unsafe { bindings::poll_wait(self.file, wq.head.get(), self.table) };
    }
}

// ---------------------------------------------------------------------------
// Time and timers.

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
        unsafe { bindings::poll_state_synchronize_rcu(cookie as _) }
    }
}
