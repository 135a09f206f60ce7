// SPDX-License-Identifier: GPL-2.0

//! Locking, RCU, rtnl, wait queues and timers: `SpinLockBh`, `RcuReadGuard`,
//! `RcuArc`, `Rtnl`, `WaitQueue`, `Timer`.

use super::*;

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
        unsafe { bindings::rtun_spin_lock_bh(ptr.cast()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &()) {
        // SAFETY: The caller guarantees it holds the lock at `ptr`.
        unsafe { bindings::rtun_spin_unlock_bh(ptr.cast()) }
    }
}

/// Creates a [`SpinLockBh`] initialiser with a static lock class.
macro_rules! new_spinlock_bh {
    ($inner:expr, $name:literal) => {
        $crate::sys::SpinLockBh::new(
            $inner,
            ::kernel::c_str!($name),
            ::kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_spinlock_bh;

/// An RCU read-side critical section (`rcu_read_lock()` .. `rcu_read_unlock()`).
pub(crate) struct RcuReadGuard(PhantomData<*mut ()>);

/// Whether `rcu_read_lock()` is only a compiler barrier in this kernel: no
/// preemptible RCU, no preempt count, no lockdep (`include/linux/rcupdate.h`
/// then reduces it to `preempt_disable()`, which is `barrier()`).
#[cfg(all(
    not(CONFIG_PREEMPT_RCU),
    not(CONFIG_PREEMPT_COUNT),
    not(CONFIG_DEBUG_LOCK_ALLOC)
))]
macro_rules! rcu_read_lock_is_barrier {
    () => {
        true
    };
}
#[cfg(not(all(
    not(CONFIG_PREEMPT_RCU),
    not(CONFIG_PREEMPT_COUNT),
    not(CONFIG_DEBUG_LOCK_ALLOC)
)))]
macro_rules! rcu_read_lock_is_barrier {
    () => {
        false
    };
}

impl RcuReadGuard {
    /// Enters a read-side critical section until the guard is dropped.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        if rcu_read_lock_is_barrier!() {
            // The inline `rcu_read_lock()` of this configuration.
            core::sync::atomic::compiler_fence(Ordering::SeqCst);
        } else {
            // SAFETY: Always allowed; balanced by `drop`.
            unsafe { bindings::rtun_rcu_read_lock() };
        }
        Self(PhantomData)
    }
}

impl Drop for RcuReadGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if rcu_read_lock_is_barrier!() {
            core::sync::atomic::compiler_fence(Ordering::SeqCst);
        } else {
            // SAFETY: Balances the `rcu_read_lock()` of `new`.
            unsafe { bindings::rtun_rcu_read_unlock() };
        }
    }
}

/// `raw_smp_processor_id()`: on x86_64 SMP, `this_cpu_read(pcpu_hot.cpu_number)`
/// inline, as C compiles it; otherwise through the C shim.
#[inline(always)]
pub(crate) fn raw_smp_processor_id() -> u32 {
    #[cfg(all(CONFIG_SMP, target_arch = "x86_64"))]
    {
        let cpu: u32;
        // SAFETY: `pcpu_hot` is a per-CPU variable (zero-based on x86_64
        // SMP, addressed through %gs); this is the `movl %gs:...` that
        // `this_cpu_read()` emits. It only reads.
        unsafe {
            ::core::arch::asm!(
                "movl %gs:{hot}+{off}, {cpu:e}",
                hot = sym bindings::pcpu_hot,
                off = const bindings::RTUN_PCPU_HOT_CPU_NUMBER,
                cpu = out(reg) cpu,
                options(att_syntax, nostack, readonly, preserves_flags),
            )
        };
        cpu
    }
    #[cfg(not(all(CONFIG_SMP, target_arch = "x86_64")))]
    {
        // SAFETY: Always allowed.
        unsafe { bindings::rtun_raw_smp_processor_id() }
    }
}

/// Waits until every RCU reader that may have seen an old pointer is done.
pub(crate) fn synchronize_net() {
    // SAFETY: Called from process context (all callers are rtnl holders).
    unsafe { bindings::synchronize_net() };
}

/// Proof that the rtnl lock is held.
pub(crate) struct Rtnl {
    owned: bool,
    _not_send: PhantomData<*mut ()>,
}

impl Rtnl {
    /// Takes the rtnl lock until the returned guard is dropped.
    pub(crate) fn lock() -> Self {
        // SAFETY: Process context; released by `drop`.
        unsafe { bindings::rtnl_lock() };
        Self {
            owned: true,
            _not_send: PhantomData,
        }
    }

    /// Vouches for an rtnl lock that the caller's caller holds.
    ///
    /// # Safety
    ///
    /// The rtnl lock must be held for the lifetime of the result.
    pub(super) unsafe fn assume_held() -> Self {
        Self {
            owned: false,
            _not_send: PhantomData,
        }
    }
}

impl Drop for Rtnl {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: `lock` took the lock.
            unsafe { bindings::rtnl_unlock() };
        }
    }
}

/// An RCU-published, reference-counted pointer (`struct foo __rcu *` holding
/// a reference), readable under [`RcuReadGuard`] and replaced under rtnl.
///
/// # Invariants
///
/// `ptr` is null or comes from `Arc::into_raw` and owns that reference.
pub(crate) struct RcuArc<T> {
    ptr: AtomicPtr<T>,
}

/// A pointer unpublished from an [`RcuArc`]: dropping it waits for a grace
/// period before dropping the reference, so readers never see freed memory.
pub(crate) struct Unpublished<T>(Arc<T>);

impl<T> Drop for Unpublished<T> {
    fn drop(&mut self) {
        synchronize_net();
    }
}

impl<T> Unpublished<T> {
    /// Waits for a grace period, then gives the reference back.
    pub(crate) fn into_arc(self) -> Arc<T> {
        let this = core::mem::ManuallyDrop::new(self);
        synchronize_net();
        // SAFETY: `this` is never used or dropped again.
        unsafe { ptr::read(&this.0) }
    }
}

impl<T> RcuArc<T> {
    /// An empty slot.
    pub(crate) const fn null() -> Self {
        Self {
            ptr: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// `rcu_dereference()`: the object, valid for the read-side section.
    pub(crate) fn get<'a>(&'a self, _rcu: &'a RcuReadGuard) -> Option<&'a T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: Non-null pointers own a reference (type invariant), and a
        // replaced pointer is only released after a grace period
        // (`Unpublished`), which cannot end while `_rcu` is alive.
        unsafe { p.as_ref() }
    }

    /// `rtnl_dereference()`: the object, while rtnl keeps writers out.
    pub(crate) fn get_rtnl<'a>(&'a self, _rtnl: &'a Rtnl) -> Option<&'a T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: Only rtnl holders replace the pointer, so the reference it
        // owns stays alive while `_rtnl` is borrowed.
        unsafe { p.as_ref() }
    }

    /// `rcu_assign_pointer()`: publishes `new`, returning the old object.
    pub(crate) fn replace(&self, new: Option<Arc<T>>, _rtnl: &Rtnl) -> Option<Unpublished<T>> {
        let newp = new.map_or(ptr::null_mut(), |a| Arc::into_raw(a).cast_mut());
        // INVARIANT: `newp` owns the reference `into_raw` gave up.
        let old = self.ptr.swap(newp, Ordering::AcqRel);
        // SAFETY: `old` owned a reference (type invariant), now ours.
        NonNull::new(old).map(|p| Unpublished(unsafe { Arc::from_raw(p.as_ptr()) }))
    }

    /// Moves the object of `other` into `self` (both under rtnl), leaving
    /// `other` empty; returns `self`'s old object. `self` and `other` must
    /// be different slots.
    pub(crate) fn take_from(&self, other: &Self, _rtnl: &Rtnl) -> Option<Unpublished<T>> {
        if ptr::eq(self, other) {
            return None;
        }
        let p = other.ptr.swap(ptr::null_mut(), Ordering::AcqRel);
        let old = self.ptr.swap(p, Ordering::AcqRel);
        // SAFETY: `old` owned a reference (type invariant), now ours.
        NonNull::new(old).map(|p| Unpublished(unsafe { Arc::from_raw(p.as_ptr()) }))
    }
}

impl<T> Drop for RcuArc<T> {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: No reader can reach a slot being dropped; the pointer
            // owns a reference (type invariant).
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}

// ---------------------------------------------------------------------------
// Wait queues and poll.

/// A `wait_queue_head` that readers sleep on and `poll` registers with.
#[pin_data]
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
            bindings::rtun_init_waitqueue_entry_current(entry.get());
            bindings::add_wait_queue(self.head.get(), entry.get());
        }
        let ret = loop {
            // SAFETY: Always allowed; `set_current_state` orders the state
            // write before `cond`'s reads (it has a full barrier).
            unsafe { bindings::rtun_set_current_state_interruptible() };
            if let Some(v) = cond() {
                break Ok(v);
            }
            // SAFETY: Always allowed.
            if unsafe { bindings::rtun_signal_pending() } {
                break Err(ERESTARTSYS);
            }
            // SAFETY: Process context, no spinlock held (the caller's `cond`
            // takes and releases its locks).
            unsafe { bindings::schedule() };
        };
        // SAFETY: Back to running; `entry` leaves the queue before it dies.
        unsafe {
            bindings::rtun_set_current_state_running();
            bindings::remove_wait_queue(self.head.get(), entry.get());
        }
        ret
    }

    /// `wake_up_interruptible_poll()`; callable from any context.
    pub(crate) fn wake_up_poll(&self, mask: u32) {
        // SAFETY: `head` is initialised.
        unsafe { bindings::rtun_wake_up_interruptible_poll(self.head.get(), mask) };
    }

    /// `wake_up_interruptible_poll()` only if someone waits or polls
    /// (`wq_has_sleeper()`), as `sock_def_readable()` does for tun.c: the
    /// common case of a busy reader costs a fence and a load, not the
    /// wait queue's lock. The caller has published what the sleeper waits
    /// for; the full fence pairs with the one in `prepare_to_wait()`.
    #[inline(always)]
    pub(crate) fn wake_up_poll_if_sleeper(&self, mask: u32) {
        core::sync::atomic::fence(Ordering::SeqCst);
        // SAFETY: `head` is initialised; its list head sits at
        // `offsetof(struct wait_queue_head, head)`. `waitqueue_active()` is a
        // racy `list_empty()`: READ_ONCE of `next`.
        let active = unsafe {
            let list = self
                .head
                .get()
                .cast::<u8>()
                .add(bindings::RTUN_WQ_HEAD as usize);
            ptr::read_volatile(list.cast::<*mut u8>()) != list
        };
        if active {
            // SAFETY: `head` is initialised. The sync variant, as
            // `sock_def_readable()` (tun.c's `sk_data_ready`) uses.
            unsafe { bindings::rtun_wake_up_interruptible_sync_poll(self.head.get(), mask) };
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

/// The `poll_table` of one `poll()` call.
pub(crate) struct PollTable {
    pub(super) file: *mut bindings::file,
    pub(super) table: *mut bindings::poll_table_struct,
}

impl PollTable {
    /// `poll_wait()`: registers `wq` with the caller of `poll()`.
    pub(crate) fn wait(&self, wq: &WaitQueue) {
        // SAFETY: `file` and `table` come from the `poll` callback and are
        // valid during it; `wq` lives as long as the file (it belongs to the
        // file's `TunFile`), and poll tables are torn down before release.
        unsafe { bindings::rtun_poll_wait(self.file, wq.head.get(), self.table) };
    }
}

// ---------------------------------------------------------------------------
// Time and timers.

/// `jiffies`, read inline (READ_ONCE of the exported counter).
#[inline(always)]
pub(crate) fn jiffies() -> u64 {
    // SAFETY: `jiffies` is a live, exported `volatile unsigned long`.
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

/// A kernel timer embedded in an object that never moves (a net device's
/// private area). Shut down on drop.
pub(crate) struct Timer {
    timer: Opaque<bindings::timer_list>,
    ready: core::sync::atomic::AtomicBool,
}

// SAFETY: The kernel's timer code synchronises its own state.
unsafe impl Send for Timer {}
// SAFETY: As above.
unsafe impl Sync for Timer {}

impl Timer {
    /// An unset timer; [`Timer::setup`] must run before any other use.
    pub(crate) const fn new() -> Self {
        Self {
            timer: Opaque::uninit(),
            ready: core::sync::atomic::AtomicBool::new(false),
        }
    }

    /// `timer_setup()`.
    ///
    /// # Safety
    ///
    /// `self` must not move from here on, and `f` must be valid for a
    /// timer embedded where `self` is.
    pub(super) unsafe fn setup(&self, f: unsafe extern "C" fn(*mut bindings::timer_list)) {
        // SAFETY: `self.timer` is valid for writes and stays put.
        unsafe { bindings::rtun_timer_setup(self.timer.get(), Some(f)) };
        self.ready.store(true, Ordering::Release);
    }

    /// `timer_pending()`.
    pub(crate) fn pending(&self) -> bool {
        // SAFETY: Set up (the only way to reach a timer of ours).
        unsafe { bindings::rtun_timer_pending(self.timer.get()) }
    }

    /// `mod_timer()`.
    pub(crate) fn mod_timer(&self, expires: u64) {
        // SAFETY: Set up; `mod_timer` may be called from any context.
        unsafe { bindings::mod_timer(self.timer.get(), expires as c_ulong) };
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if *self.ready.get_mut() {
            // SAFETY: Set up; dropped in process context (the net device's
            // destructor), so waiting for a running callback is fine.
            unsafe { bindings::timer_shutdown_sync(self.timer.get()) };
        }
    }
}

/// `tun_flow_cleanup()` timer callback.
///
/// # Safety
///
/// Called by the timer code for the flow table timer of a `Tun`.
pub(super) unsafe extern "C" fn tun_flow_cleanup_timer(t: *mut bindings::timer_list) {
    let off = core::mem::offset_of!(crate::Tun, flows)
        + core::mem::offset_of!(crate::flow_table::FlowTable, gc_timer);
    // CAST: `Timer` starts with its `Opaque<timer_list>`, at offset 0.
    // SAFETY: The timer is embedded in a live `Tun` (it is shut down before
    // the `Tun` is dropped), so stepping back to the `Tun` is in bounds.
    let tun = unsafe { &*t.cast::<u8>().sub(off).cast::<crate::Tun>() };
    crate::flow_table::tun_flow_cleanup(&tun.flows);
}

/// RCU grace-period cookies, for reusing flow entries only once no reader
/// can still see them.
pub(crate) mod rcu_cookie {
    use crate::bindings;

    /// `get_state_synchronize_rcu()`: a cookie for "a grace period from now".
    pub(crate) fn get() -> usize {
        // SAFETY: Always allowed.
        unsafe { bindings::get_state_synchronize_rcu() as usize }
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
