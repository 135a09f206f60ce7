// SPDX-License-Identifier: GPL-2.0

//! The thin `unsafe` layer of rust_tun: safe wrappers over the C objects the
//! driver touches (`net_device`, `sk_buff`, `iov_iter`, wait queues, RCU,
//! rtnl, the misc device and the rtnl link ops) and the `extern "C"`
//! trampolines that the kernel calls. Every `unsafe` block of the module
//! lives in this file; the driver logic in `tun.rs` is safe Rust. Where tun.c
//! calls an inline function, we call it through the one-line C shims in
//! `tun_helpers.c`.

use crate::bindings;
use core::cell::UnsafeCell;
use core::ffi::{c_int, c_long, c_uint, c_ulong, c_void};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::{code::*, from_result, to_result};
use kernel::init::PinInit;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::lock::{Backend, Lock};
use kernel::sync::{Arc, ArcBorrow, LockClassKey};
use kernel::types::Opaque;

/// Errno values that `kernel::error::code` does not name.
#[allow(non_snake_case)]
pub(crate) mod errno {
    use crate::bindings;
    use kernel::error::Error;

    /// `EBADFD`: the file is not attached to a device.
    pub(crate) fn EBADFD() -> Error {
        Error::from_errno(-(bindings::EBADFD as i32))
    }

    /// `EMSGSIZE`: a write larger than any frame.
    pub(crate) fn EMSGSIZE() -> Error {
        Error::from_errno(-(bindings::EMSGSIZE as i32))
    }

    /// `EOPNOTSUPP`.
    pub(crate) fn EOPNOTSUPP() -> Error {
        Error::from_errno(-(bindings::EOPNOTSUPP as i32))
    }
}

/// A `static` that the kernel writes to (for example, a `miscdevice` whose
/// list head `misc_register` links in).
///
/// # Invariants
///
/// Rust code only hands out the raw pointer; the kernel serialises its own
/// writes (under `misc_mtx` or the rtnl lock).
pub(crate) struct KernelStatic<T>(UnsafeCell<T>);

// SAFETY: Rust never creates references into the cell (see the type
// invariant); the kernel synchronises its own accesses.
unsafe impl<T> Sync for KernelStatic<T> {}

impl<T> KernelStatic<T> {
    /// Wraps `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self(UnsafeCell::new(value))
    }

    fn get(&self) -> *mut T {
        self.0.get()
    }
}

/// Returns an all-zero `T`: the "unset" value of a C ops table or struct.
const fn zeroed<T: ZeroIsValid>() -> T {
    // SAFETY: `ZeroIsValid` is only implemented for C structs made of
    // integers, raw pointers and `Option`s of function pointers, for which
    // the all-zero bit pattern is valid (it is what C's `{ 0 }` gives).
    unsafe { core::mem::zeroed() }
}

/// C structs for which all-zero bytes are a valid value.
///
/// # Safety
///
/// Implementors must be valid when all their bytes are zero.
unsafe trait ZeroIsValid {}
// SAFETY: Integers, pointers and optional function pointers only.
unsafe impl ZeroIsValid for bindings::net_device_ops {}
// SAFETY: Integers, pointers and optional function pointers only.
unsafe impl ZeroIsValid for bindings::ethtool_ops {}
// SAFETY: Integers, pointers and optional function pointers only.
unsafe impl ZeroIsValid for bindings::file_operations {}
// SAFETY: Integers, pointers, a list head and optional function pointers.
unsafe impl ZeroIsValid for bindings::miscdevice {}
// SAFETY: Integers, pointers, a list head and optional function pointers.
unsafe impl ZeroIsValid for bindings::rtnl_link_ops {}

// ---------------------------------------------------------------------------
// Locks, RCU, rtnl.

/// A `spinlock_t` taken with `spin_lock_bh`: usable from process context and
/// from the transmit path (softirq) alike, like the ring locks of tun.c.
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
    unsafe fn assume_held() -> Self {
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
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
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
// iov_iter.

/// The user buffer of one `read`/`write`/`readv`/`writev` call.
pub(crate) struct IovIter(*mut bindings::iov_iter);

impl IovIter {
    /// `iov_iter_count()`: bytes left (`i->count`, read inline).
    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        // SAFETY: The pointer is valid for the duration of the callback;
        // `count` is at `offsetof(struct iov_iter, count)`.
        unsafe {
            ptr::read(
                self.0
                    .cast::<u8>()
                    .add(bindings::RTUN_IOV_ITER_COUNT as usize)
                    .cast::<usize>(),
            )
        }
    }

    /// `copy_from_iter_full()`: fills `buf` entirely or fails with `EFAULT`
    /// (leaving the iterator as it was), inline over `_copy_from_iter()`.
    #[inline(always)]
    pub(crate) fn copy_from(&mut self, buf: &mut [u8]) -> Result {
        // SAFETY: `buf` is valid for `buf.len()` bytes of writes; the
        // iterator is valid for the call.
        let copied =
            unsafe { bindings::_copy_from_iter(buf.as_mut_ptr().cast(), buf.len(), self.0) };
        if copied == buf.len() {
            return Ok(());
        }
        // SAFETY: Gives back what was consumed, as `copy_from_iter_full()`.
        unsafe { bindings::iov_iter_revert(self.0, copied) };
        Err(EFAULT)
    }

    /// `copy_to_iter()` of all of `buf`, or `EFAULT`.
    pub(crate) fn copy_to(&mut self, buf: &[u8]) -> Result {
        // SAFETY: `buf` is valid for `buf.len()` bytes of reads.
        let n = unsafe { bindings::rtun_copy_to_iter(buf.as_ptr().cast(), buf.len(), self.0) };
        if n == buf.len() {
            Ok(())
        } else {
            Err(EFAULT)
        }
    }

    /// `skb_copy_datagram_iter()`: `len` bytes of `skb` from offset 0;
    /// `EFAULT` if user memory faults.
    pub(crate) fn copy_skb(&mut self, skb: &SkBuff, len: u32) -> Result {
        // SAFETY: `skb` is a valid skb we own; `len <= skb.len()` is
        // checked by `skb_copy_datagram_iter` itself.
        let err =
            unsafe { bindings::skb_copy_datagram_iter(skb.0.as_ptr(), 0, self.0, len as c_int) };
        if err == 0 {
            Ok(())
        } else {
            Err(EFAULT)
        }
    }
}

// ---------------------------------------------------------------------------
// sk_buff.

/// An owned `struct sk_buff`: freed with `kfree_skb` (a drop) unless handed
/// on with [`SkBuff::netif_rx`] or [`SkBuff::consume`].
///
/// # Invariants
///
/// The pointer is a valid skb that nobody else references.
pub(crate) struct SkBuff(NonNull<bindings::sk_buff>);

// SAFETY: An skb we own can be freed or handed on from any thread.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// `netdev_alloc_skb_ip_align()`: an empty skb with room for `len` bytes.
    pub(crate) fn alloc(dev: &NetDevice, len: u32) -> Result<Self> {
        // SAFETY: `dev` is a valid device.
        let p = unsafe { bindings::rtun_netdev_alloc_skb_ip_align(dev.as_ptr(), len) };
        // INVARIANT: A fresh skb is ours alone.
        NonNull::new(p).map(Self).ok_or(ENOMEM)
    }

    /// `skb_put()` of `len` bytes, returned for filling in.
    pub(crate) fn put(&mut self, len: u32) -> &mut [u8] {
        // SAFETY: The caller allocated the skb with room for `len` bytes;
        // `skb_put` panics (BUG) rather than overrun.
        let p = unsafe { bindings::skb_put(self.0.as_ptr(), len) };
        // SAFETY: `skb_put` returned `len` writable bytes inside the skb.
        unsafe { core::slice::from_raw_parts_mut(p.cast::<u8>(), len as usize) }
    }

    /// Reads a field of the skb at a C `offsetof`, inline.
    ///
    /// # Safety
    ///
    /// `off` must be the offset of a field of type `T` in `struct sk_buff`.
    #[inline(always)]
    unsafe fn field<T: Copy>(&self, off: core::ffi::c_ulong) -> T {
        // SAFETY: Valid skb; the caller vouches for the offset and type.
        unsafe { ptr::read(self.0.as_ptr().cast::<u8>().add(off as usize).cast::<T>()) }
    }

    /// `skb->len`.
    #[inline(always)]
    pub(crate) fn len(&self) -> u32 {
        // SAFETY: `len` is an `unsigned int`.
        unsafe { self.field(bindings::RTUN_SKB_LEN) }
    }

    /// `skb->protocol`, in network byte order.
    #[inline(always)]
    pub(crate) fn protocol(&self) -> u16 {
        // SAFETY: `protocol` is a `__be16`.
        unsafe { self.field(bindings::RTUN_SKB_PROTOCOL) }
    }

    /// `skb_get_queue_mapping()`.
    #[inline(always)]
    pub(crate) fn queue_mapping(&self) -> u16 {
        // SAFETY: `queue_mapping` is a `__u16`.
        unsafe { self.field(bindings::RTUN_SKB_QUEUE_MAPPING) }
    }

    /// `__skb_get_hash_symmetric()`: the flow hash, the same for both
    /// directions of a flow.
    pub(crate) fn hash_symmetric(&self) -> u32 {
        // SAFETY: Valid skb; the flow dissector only reads it.
        unsafe { bindings::rtun_skb_get_hash_symmetric(self.0.as_ptr()) }
    }

    /// `skb_record_rx_queue()`: `skb->queue_mapping = queue + 1`, inline.
    #[inline(always)]
    pub(crate) fn record_rx_queue(&mut self, queue: u16) {
        // SAFETY: Valid skb we own; `queue_mapping` is a `__u16` at its
        // `offsetof`.
        unsafe {
            ptr::write(
                self.0
                    .as_ptr()
                    .cast::<u8>()
                    .add(bindings::RTUN_SKB_QUEUE_MAPPING as usize)
                    .cast::<u16>(),
                queue.wrapping_add(1),
            )
        }
    }

    /// `skb_orphan()`: drops the owning socket's claim, as tun does before
    /// holding an skb indefinitely.
    #[inline(always)]
    pub(crate) fn orphan(&mut self) {
        // SAFETY: `destructor` is a function pointer field; an skb without
        // one has nothing to orphan (the common case, tested inline as C's
        // inline `skb_orphan()` does).
        let destructor: *const c_void = unsafe { self.field(bindings::RTUN_SKB_DESTRUCTOR) };
        if !destructor.is_null() {
            // SAFETY: Valid skb we own.
            unsafe { bindings::rtun_skb_orphan(self.0.as_ptr()) }
        }
    }

    /// Makes an L3 packet from `dev`: `skb_reset_mac_header()`, `skb->protocol`
    /// (network byte order) and `skb->dev`.
    pub(crate) fn set_l3(&mut self, protocol_be: u16, dev: &NetDevice) {
        // SAFETY: Valid skb we own; `dev` is a valid device.
        unsafe { bindings::rtun_skb_set_l3(self.0.as_ptr(), protocol_be, dev.as_ptr()) }
    }

    /// `skb->protocol = eth_type_trans(skb, dev)` (needs `ETH_HLEN` bytes).
    pub(crate) fn eth_type_trans(&mut self, dev: &NetDevice) {
        // SAFETY: Valid skb we own holding at least `ETH_HLEN` linear bytes
        // (the caller checked the length it put).
        unsafe {
            let proto = bindings::eth_type_trans(self.0.as_ptr(), dev.as_ptr());
            bindings::rtun_skb_set_protocol(self.0.as_ptr(), proto);
            bindings::rtun_skb_reset_network_header(self.0.as_ptr());
        }
    }

    /// `netif_rx()`: hands the packet to the stack.
    pub(crate) fn netif_rx(self) {
        let p = core::mem::ManuallyDrop::new(self).0;
        // SAFETY: We own the skb and give it away.
        unsafe { bindings::netif_rx(p.as_ptr()) };
    }

    /// `consume_skb()`: frees a packet that was delivered (not a drop).
    /// Without tracepoints C's `consume_skb()` is the inline `kfree_skb()`,
    /// i.e. `sk_skb_reason_drop(NULL, skb, NOT_SPECIFIED)`: call that.
    #[inline(always)]
    pub(crate) fn consume(self) {
        let p = core::mem::ManuallyDrop::new(self).0;
        #[cfg(CONFIG_TRACEPOINTS)]
        // SAFETY: We own the skb and free it.
        unsafe {
            bindings::consume_skb(p.as_ptr())
        };
        #[cfg(not(CONFIG_TRACEPOINTS))]
        // SAFETY: We own the skb and free it.
        unsafe {
            bindings::sk_skb_reason_drop(
                ptr::null_mut(),
                p.as_ptr(),
                bindings::RTUN_SKB_DROP_REASON_NOT_SPECIFIED,
            )
        };
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: We own the skb; a drop is a drop (`kfree_skb`).
        unsafe { bindings::rtun_kfree_skb(self.0.as_ptr()) };
    }
}

// ---------------------------------------------------------------------------
// net_device.

/// A network device created by this module.
///
/// # Invariants
///
/// The device was allocated by [`NetDeviceBuilder::alloc`], so its private
/// area holds an initialised `crate::Tun` until `priv_destructor` runs, and
/// its `netdev_ops` is one of ours. References to it are only handed out
/// while it is alive: in callbacks, under rtnl while registered, or under a
/// [`DevRef`].
#[repr(transparent)]
pub(crate) struct NetDevice(Opaque<bindings::net_device>);

// SAFETY: `net_device` is shared between CPUs by design; every access goes
// through the kernel's own synchronisation or atomics.
unsafe impl Sync for NetDevice {}
// SAFETY: As above.
unsafe impl Send for NetDevice {}

/// Net device flags read by the driver.
pub(crate) const IFF_UP: u32 = bindings::RTUN_IFF_UP;

impl NetDevice {
    /// # Safety
    ///
    /// `ptr` must be a device of ours (see the type invariants), alive for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `NetDevice` is transparent over `net_device`.
        unsafe { &*ptr.cast() }
    }

    fn as_ptr(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The driver state in the private area (`netdev_priv()`, which is
    /// `dev->priv`: computed inline).
    #[inline(always)]
    pub(crate) fn tun(&self) -> &crate::Tun {
        // SAFETY: By the type invariants the private area, at
        // `offsetof(struct net_device, priv)`, holds an initialised `Tun`
        // while the device is alive.
        unsafe {
            &*self
                .as_ptr()
                .cast::<u8>()
                .add(bindings::RTUN_NETDEV_PRIV as usize)
                .cast::<crate::Tun>()
        }
    }

    /// `dev->name`.
    pub(crate) fn name(&self) -> [u8; bindings::IFNAMSIZ as usize] {
        // SAFETY: `name` is a fixed array written under rtnl; a racy read of
        // a renaming device gives some bytes of a name, as in C.
        let name = unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).name)) };
        name.map(|c| c as u8)
    }

    /// `dev->flags` (`IFF_UP`, ...).
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: A plain integer field; READ_ONCE semantics.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).flags)) }
    }

    /// `dev->tx_queue_len`.
    pub(crate) fn tx_queue_len(&self) -> u32 {
        // SAFETY: A plain integer field; READ_ONCE semantics.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).tx_queue_len)) }
    }

    /// `dev->reg_state == NETREG_REGISTERED`.
    pub(crate) fn is_registered(&self) -> bool {
        // SAFETY: A plain field written under rtnl; READ_ONCE semantics.
        let s = unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).reg_state)) };
        s as u32 == bindings::RTUN_NETREG_REGISTERED
    }

    /// `netif_running()`.
    pub(crate) fn is_running(&self) -> bool {
        // SAFETY: Valid device.
        unsafe { bindings::rtun_netif_running(self.as_ptr()) }
    }

    /// `netif_carrier_on()`.
    pub(crate) fn carrier_on(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::netif_carrier_on(self.as_ptr()) }
    }

    /// `netif_carrier_off()`.
    pub(crate) fn carrier_off(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::netif_carrier_off(self.as_ptr()) }
    }

    /// `netif_tx_start_all_queues()`.
    pub(crate) fn tx_start_all_queues(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::rtun_netif_tx_start_all_queues(self.as_ptr()) }
    }

    /// `netif_tx_stop_all_queues()`.
    pub(crate) fn tx_stop_all_queues(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::rtun_netif_tx_stop_all_queues(self.as_ptr()) }
    }

    /// `netif_tx_wake_all_queues()`.
    pub(crate) fn tx_wake_all_queues(&self) {
        // SAFETY: Valid device.
        unsafe { bindings::rtun_netif_tx_wake_all_queues(self.as_ptr()) }
    }

    /// `tun_set_real_num_queues()`: `netif_set_real_num_{tx,rx}_queues()`.
    pub(crate) fn set_real_num_queues(&self, n: u32, _rtnl: &Rtnl) {
        // SAFETY: Valid device; rtnl held. Like tun.c, a failure (n == 0)
        // leaves the old numbers, which is harmless.
        unsafe {
            bindings::netif_set_real_num_tx_queues(self.as_ptr(), n);
            bindings::netif_set_real_num_rx_queues(self.as_ptr(), n);
        }
    }

    /// `netdev_state_change()`.
    pub(crate) fn state_change(&self, _rtnl: &Rtnl) {
        // SAFETY: Valid device; rtnl held.
        unsafe { bindings::netdev_state_change(self.as_ptr()) }
    }

    /// `unregister_netdevice()`: the device is freed later, after its
    /// `priv_destructor`, once all references are gone.
    pub(crate) fn unregister(&self, _rtnl: &Rtnl) {
        // SAFETY: A registered device of ours; rtnl held.
        unsafe { bindings::unregister_netdevice_queue(self.as_ptr(), ptr::null_mut()) }
    }

    /// Takes a reference (`dev_hold()`).
    #[inline(always)]
    pub(crate) fn hold(&self) -> DevRef {
        self.refcnt_add::<true>();
        // INVARIANT: The reference just taken.
        DevRef(NonNull::from(self))
    }

    /// `dev_hold()` (`INC`) or `dev_put()`: with per-CPU device refcounts
    /// and no refcount tracker, C's inline `this_cpu_inc/dec(*dev->pcpu_refcnt)`,
    /// one `%gs`-relative instruction; otherwise the C shims.
    #[inline(always)]
    fn refcnt_add<const INC: bool>(&self) {
        #[cfg(all(
            CONFIG_PCPU_DEV_REFCNT,
            not(CONFIG_NET_DEV_REFCNT_TRACKER),
            target_arch = "x86_64"
        ))]
        {
            // SAFETY: `pcpu_refcnt` is the device's `int __percpu *`, valid
            // while the device is (this is a live device or a reference we
            // own); per-CPU pointers are offsets from %gs on x86_64.
            unsafe {
                let pcpu = ptr::read(
                    self.as_ptr()
                        .cast::<u8>()
                        .add(bindings::RTUN_NETDEV_PCPU_REFCNT as usize)
                        .cast::<*mut i32>(),
                );
                if INC {
                    ::core::arch::asm!("incl %gs:({0})", in(reg) pcpu, options(att_syntax, nostack));
                } else {
                    ::core::arch::asm!("decl %gs:({0})", in(reg) pcpu, options(att_syntax, nostack));
                }
            }
        }
        #[cfg(not(all(
            CONFIG_PCPU_DEV_REFCNT,
            not(CONFIG_NET_DEV_REFCNT_TRACKER),
            target_arch = "x86_64"
        )))]
        // SAFETY: Valid device.
        unsafe {
            if INC {
                bindings::rtun_dev_hold(self.as_ptr())
            } else {
                bindings::rtun_dev_put(self.as_ptr())
            }
        }
    }

    /// `__dev_get_by_name()`, if the device found is one of ours.
    pub(crate) fn get_by_name<'a>(
        net: &NetNs,
        name: &CStr,
        rtnl: &'a Rtnl,
    ) -> Option<Result<&'a NetDevice>> {
        let _ = rtnl;
        // SAFETY: rtnl held; `name` is NUL-terminated.
        let p = unsafe { bindings::__dev_get_by_name(net.0.as_ptr(), name.as_char_ptr().cast()) };
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is a registered device, alive while rtnl is held.
        let ops = unsafe { (*p).netdev_ops };
        if is_our_ops(ops) {
            // SAFETY: One of ours (its ops are ours); rtnl keeps it alive.
            Some(Ok(unsafe { NetDevice::from_raw(p) }))
        } else {
            Some(Err(EINVAL))
        }
    }
}

/// A counted reference to one of our devices (`dev_hold`/`dev_put`).
///
/// # Invariants
///
/// Owns one reference, which keeps the device and its private area alive.
pub(crate) struct DevRef(NonNull<NetDevice>);

// SAFETY: Device references can be dropped on any thread.
unsafe impl Send for DevRef {}

impl core::ops::Deref for DevRef {
    type Target = NetDevice;
    fn deref(&self) -> &NetDevice {
        // SAFETY: The reference we own keeps the device alive.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for DevRef {
    #[inline(always)]
    fn drop(&mut self) {
        // Gives back the reference we own (type invariants).
        self.refcnt_add::<false>();
    }
}

/// A device pointer that readers take references from under RCU
/// (`tun_file->tun` in tun.c).
pub(crate) struct RcuDev(AtomicPtr<bindings::net_device>);

impl RcuDev {
    /// No device.
    pub(crate) const fn null() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
    }

    /// `tun_get()`: a counted reference to the device, if any.
    pub(crate) fn get(&self) -> Option<DevRef> {
        let _rcu = RcuReadGuard::new();
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: A published device stays alive until a grace period after
        // it is unpublished (`set` callers run `synchronize_net()` before the
        // device can go away), and `_rcu` spans the `dev_hold`.
        (!p.is_null()).then(|| unsafe { NetDevice::from_raw(p) }.hold())
    }

    /// The device, under rtnl (which is what keeps it alive here).
    pub(crate) fn get_rtnl<'a>(&self, _rtnl: &'a Rtnl) -> Option<&'a NetDevice> {
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: Devices are published and unpublished under rtnl, and a
        // published device is registered, hence alive while rtnl is held.
        (!p.is_null()).then(|| unsafe { NetDevice::from_raw(p) })
    }

    /// Whether a device is set (a racy snapshot, for the data path).
    pub(crate) fn is_set(&self) -> bool {
        !self.0.load(Ordering::Relaxed).is_null()
    }

    /// Publishes `dev` (or none). Readers may hold the old device until the
    /// next grace period.
    pub(crate) fn set(&self, dev: Option<&NetDevice>, _rtnl: &Rtnl) {
        self.0.store(
            dev.map_or(ptr::null_mut(), |d| d.as_ptr()),
            Ordering::Release,
        );
    }
}

/// What kind of device to create (`IFF_TUN` or `IFF_TAP`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DevKind {
    /// Point-to-point L3 device (`IFF_TUN`).
    Tun,
    /// Ethernet device (`IFF_TAP`).
    Tap,
}

// The private area is aligned to `NETDEV_ALIGN` (32 bytes).
const _: () = assert!(core::mem::align_of::<crate::Tun>() <= 32);

/// A device allocated but not registered yet. Dropping it frees it.
pub(crate) struct NetDeviceBuilder(NonNull<bindings::net_device>);

impl NetDeviceBuilder {
    /// `alloc_netdev_mqs()` with `tun_setup()` and, per kind,
    /// `tun_net_initialize()`: a device of ours with `tun` in its private area.
    pub(crate) fn alloc(
        name: &CStr,
        kind: DevKind,
        queues: u32,
        net: &NetNs,
        tun: impl PinInit<crate::Tun, Error>,
    ) -> Result<Self> {
        // SAFETY: `name` is NUL-terminated; `tun_setup` matches the
        // expected signature.
        let p = unsafe {
            bindings::alloc_netdev_mqs(
                core::mem::size_of::<crate::Tun>() as c_int,
                name.as_char_ptr().cast(),
                bindings::NET_NAME_UNKNOWN as u8,
                Some(tun_setup),
                queues,
                queues,
            )
        };
        let p = NonNull::new(p).ok_or(ENOMEM)?;
        // SAFETY: The private area is at least `size_of::<Tun>()` bytes,
        // aligned to `NETDEV_ALIGN` (32, checked below), unused, and never
        // moves: the right place to pin-initialise the `Tun`.
        let priv_ = unsafe { bindings::rtun_netdev_priv(p.as_ptr()).cast::<crate::Tun>() };
        // SAFETY: As above.
        if let Err(e) = unsafe { tun.__pinned_init(priv_) } {
            // SAFETY: Ours, never registered, nothing in the private area.
            unsafe { bindings::free_netdev(p.as_ptr()) };
            return Err(e);
        }
        // SAFETY: We own the unregistered device; the `Tun` is initialised.
        let unguarded = unsafe {
            (*p.as_ptr()).rtnl_link_ops = TUN_LINK_OPS.get();
            bindings::rtun_dev_net_set(p.as_ptr(), net.0.as_ptr());
            (*priv_).flows.gc_timer.setup(tun_flow_cleanup_timer);
            (*priv_).unguarded
        };
        // INVARIANT: From here the private area holds a `Tun`; the builder
        // drops it until registration hands that job to `priv_destructor`.
        let builder = Self(p);
        // SAFETY: We own the unregistered device exclusively.
        unsafe { tun_net_initialize(p.as_ptr(), kind, unguarded) };
        Ok(builder)
    }

    /// `register_netdevice()`.
    ///
    /// `priv_destructor` is set only once registration succeeded: on
    /// failure `register_netdevice()` runs it on some paths and not on
    /// others (not when the name is invalid), so the caller could not tell
    /// whether the `Tun` was dropped. Unset, it never runs, and the failure
    /// path below drops the `Tun` itself. (tun.c allocates its flow table
    /// in `ndo_init`, after the name checks, and so has nothing to leak.)
    pub(crate) fn register(self, _rtnl: &Rtnl) -> Result<&NetDevice> {
        let p = core::mem::ManuallyDrop::new(self).0;
        // SAFETY: rtnl held; the device is fully set up.
        let err = unsafe { bindings::register_netdevice(p.as_ptr()) };
        if err < 0 {
            // SAFETY: Unregistered and ours; no destructor ran (none was
            // set), so drop the `Tun` and free the memory.
            unsafe {
                tun_free_netdev(p.as_ptr());
                bindings::free_netdev(p.as_ptr());
            }
            return Err(Error::from_errno(err));
        }
        // SAFETY: Registered, and rtnl is held, so nobody can unregister
        // the device before its destructor is in place.
        unsafe { (*p.as_ptr()).priv_destructor = Some(tun_free_netdev) };
        // SAFETY: Registered now, so alive while rtnl is held.
        Ok(unsafe { NetDevice::from_raw(p.as_ptr()) })
    }
}

impl Drop for NetDeviceBuilder {
    fn drop(&mut self) {
        // SAFETY: Never registered: run our destructor, then free.
        unsafe {
            tun_free_netdev(self.0.as_ptr());
            bindings::free_netdev(self.0.as_ptr());
        }
    }
}

/// `tun_setup()`: what every device of ours gets before its kind is known.
///
/// # Safety
///
/// Called by `alloc_netdev_mqs` or rtnl with a fresh, unregistered device.
unsafe extern "C" fn tun_setup(dev: *mut bindings::net_device) {
    // SAFETY: Called by `alloc_netdev_mqs`/rtnl on a fresh device.
    unsafe {
        (*dev).ethtool_ops = &TUN_ETHTOOL_OPS;
        // Lockless transmit, as tun.c: `tun_net_xmit` only needs its ring's
        // lock. (tun.c then updates the queue's `trans_start` itself, for a
        // watchdog that needs `ndo_tx_timeout`, which neither driver has.)
        bindings::rtun_netdev_set_lltx(dev);
        (*dev).needs_free_netdev = true;
        (*dev).tx_queue_len = crate::TUN_READQ_SIZE;
    }
}

/// `priv_destructor`: drops the `Tun` in the private area.
///
/// # Safety
///
/// Called once per device of ours, when nothing references its `Tun` any
/// more: after unregistration, by a failing `register_netdevice`, or by
/// [`NetDeviceBuilder`]'s drop.
unsafe extern "C" fn tun_free_netdev(dev: *mut bindings::net_device) {
    // SAFETY: Called once, when the device is done with (after unregister,
    // or by `register_netdevice` failing, or by the builder), so nothing
    // references the `Tun` any more.
    unsafe { ptr::drop_in_place(bindings::rtun_netdev_priv(dev).cast::<crate::Tun>()) }
}

/// `tun_net_initialize()`: type-specific device set-up.
///
/// # Safety
///
/// `dev` must be a fresh, unregistered device owned by the caller.
unsafe fn tun_net_initialize(dev: *mut bindings::net_device, kind: DevKind, unguarded: bool) {
    // SAFETY: The caller owns the device.
    unsafe {
        match kind {
            DevKind::Tun => {
                (*dev).netdev_ops = &NETDEV_OPS[usize::from(unguarded)];
                (*dev).hard_header_len = 0;
                (*dev).addr_len = 0;
                (*dev).mtu = 1500;
                (*dev).type_ = bindings::ARPHRD_NONE as u16;
                (*dev).flags = bindings::RTUN_IFF_POINTOPOINT
                    | bindings::RTUN_IFF_NOARP
                    | bindings::RTUN_IFF_MULTICAST;
            }
            DevKind::Tap => {
                (*dev).netdev_ops = &NETDEV_OPS[2 + usize::from(unguarded)];
                bindings::ether_setup(dev);
                bindings::rtun_netdev_priv_flags_update(
                    dev,
                    bindings::RTUN_IFF_TX_SKB_SHARING,
                    bindings::RTUN_IFF_LIVE_ADDR_CHANGE,
                );
                bindings::rtun_eth_hw_addr_random(dev);
            }
        }
        (*dev).min_mtu = crate::MIN_MTU;
        (*dev).max_mtu = crate::MAX_MTU - u32::from((*dev).hard_header_len);
    }
}

/// Network namespace reference (`get_net`/`put_net`).
///
/// # Invariants
///
/// Owns one reference to the namespace.
pub(crate) struct NetNs(NonNull<bindings::net>);

// SAFETY: Namespace references can move between threads.
unsafe impl Send for NetNs {}
// SAFETY: Only compared and passed to the kernel.
unsafe impl Sync for NetNs {}

impl NetNs {
    /// The calling task's network namespace.
    pub(crate) fn current() -> Self {
        // SAFETY: Process context; `current->nsproxy` is valid for the task.
        let p = unsafe { bindings::rtun_get_current_net() };
        // INVARIANT: `get_net` took a reference. It never returns null.
        Self(NonNull::new(p).expect("get_net returned null"))
    }

    /// `ns_capable(net->user_ns, CAP_NET_ADMIN)`.
    pub(crate) fn capable_net_admin(&self) -> bool {
        // SAFETY: Valid namespace; process context.
        unsafe { bindings::rtun_ns_capable_net_admin(self.0.as_ptr()) }
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // SAFETY: Gives back our reference.
        unsafe { bindings::rtun_put_net(self.0.as_ptr()) }
    }
}

/// Takes a reference on this module (`__module_get(THIS_MODULE)`), as tun
/// does for each persistent device.
pub(crate) fn module_get() {
    // SAFETY: The module is live while any of its code runs.
    unsafe { bindings::__module_get(crate::THIS_MODULE.as_ptr().cast()) }
}

/// Drops a reference taken with [`module_get`].
pub(crate) fn module_put() {
    // SAFETY: Balances an earlier `module_get`.
    unsafe { bindings::module_put(crate::THIS_MODULE.as_ptr().cast()) }
}

// ---------------------------------------------------------------------------
// Net device and ethtool callbacks.

/// The device ops: TUN guarded, TUN unguarded, TAP guarded, TAP unguarded.
/// The mode is fixed per device by its ops, so the transmit path pays
/// nothing to know it (see `crate::tun_net_xmit`).
static NETDEV_OPS: [bindings::net_device_ops; 4] = [
    tun_netdev_ops::<false>(),
    tun_netdev_ops::<true>(),
    tap_netdev_ops::<false>(),
    tap_netdev_ops::<true>(),
];

const fn tun_netdev_ops<const UNGUARDED: bool>() -> bindings::net_device_ops {
    bindings::net_device_ops {
        ndo_uninit: Some(tun_net_uninit),
        ndo_open: Some(tun_net_open),
        ndo_stop: Some(tun_net_close),
        ndo_start_xmit: Some(tun_net_xmit::<UNGUARDED>),
        ndo_select_queue: Some(tun_select_queue),
        ndo_get_stats64: Some(tun_net_get_stats64),
        ..zeroed()
    }
}

const fn tap_netdev_ops<const UNGUARDED: bool>() -> bindings::net_device_ops {
    bindings::net_device_ops {
        ndo_set_mac_address: Some(bindings::eth_mac_addr),
        ndo_validate_addr: Some(bindings::eth_validate_addr),
        ..tun_netdev_ops::<UNGUARDED>()
    }
}

fn is_our_ops(ops: *const bindings::net_device_ops) -> bool {
    NETDEV_OPS.iter().any(|o| ptr::eq(ops, o))
}

static TUN_ETHTOOL_OPS: bindings::ethtool_ops = bindings::ethtool_ops {
    get_drvinfo: Some(tun_get_drvinfo),
    get_link: Some(bindings::ethtool_op_get_link),
    ..zeroed()
};

/// `ndo_uninit`.
///
/// # Safety
///
/// Called by the core, under rtnl, on a device of ours.
unsafe extern "C" fn tun_net_uninit(dev: *mut bindings::net_device) {
    // SAFETY: The core calls `ndo_uninit` under rtnl on a device of ours.
    let (dev, rtnl) = unsafe { (NetDevice::from_raw(dev), Rtnl::assume_held()) };
    crate::tun_net_uninit(dev, &rtnl);
}

/// `ndo_open`.
///
/// # Safety
///
/// Called by the core, under rtnl, on a registered device of ours.
unsafe extern "C" fn tun_net_open(dev: *mut bindings::net_device) -> c_int {
    // SAFETY: Called under rtnl on a registered device of ours.
    crate::tun_net_open(unsafe { NetDevice::from_raw(dev) });
    0
}

/// `ndo_stop`.
///
/// # Safety
///
/// Called by the core, under rtnl, on a registered device of ours.
unsafe extern "C" fn tun_net_close(dev: *mut bindings::net_device) -> c_int {
    // SAFETY: Called under rtnl on a registered device of ours.
    crate::tun_net_close(unsafe { NetDevice::from_raw(dev) });
    0
}

/// `ndo_start_xmit`.
///
/// # Safety
///
/// Called by the core with a valid skb it hands over and a registered
/// device of ours.
unsafe extern "C" fn tun_net_xmit<const UNGUARDED: bool>(
    skb: *mut bindings::sk_buff,
    dev: *mut bindings::net_device,
) -> bindings::netdev_tx_t {
    // SAFETY: The core hands us ownership of a valid skb and calls us on a
    // registered device of ours, which stays alive during the call.
    let (skb, dev) = unsafe {
        (
            SkBuff(NonNull::new_unchecked(skb)),
            NetDevice::from_raw(dev),
        )
    };
    // `ndo_start_xmit` always runs with bottom halves off.
    crate::tun_net_xmit::<UNGUARDED>(skb, dev, &BhOff(PhantomData))
}

/// `ndo_select_queue`.
///
/// # Safety
///
/// Called by the core with a valid skb on a registered device of ours.
unsafe extern "C" fn tun_select_queue(
    dev: *mut bindings::net_device,
    skb: *mut bindings::sk_buff,
    _sb_dev: *mut bindings::net_device,
) -> u16 {
    // SAFETY: We only borrow the skb: it is not ours to free, so it is
    // wrapped without ownership.
    let (dev, skb) = unsafe {
        (
            NetDevice::from_raw(dev),
            core::mem::ManuallyDrop::new(SkBuff(NonNull::new_unchecked(skb))),
        )
    };
    crate::tun_select_queue(dev, &skb)
}

/// `ndo_get_stats64`.
///
/// # Safety
///
/// Called by the core on a device of ours with a valid `stats`.
unsafe extern "C" fn tun_net_get_stats64(
    dev: *mut bindings::net_device,
    stats: *mut bindings::rtnl_link_stats64,
) {
    // SAFETY: Called on a device of ours with a valid, writable `stats`.
    let (dev, stats) = unsafe { (NetDevice::from_raw(dev), &mut *stats) };
    let s = crate::tun_net_get_stats64(dev);
    stats.rx_packets = s.rx_packets;
    stats.rx_bytes = s.rx_bytes;
    stats.tx_packets = s.tx_packets;
    stats.tx_bytes = s.tx_bytes;
    stats.rx_dropped = s.rx_dropped;
    stats.tx_dropped = s.tx_dropped;
    stats.rx_frame_errors = s.rx_frame_errors;
}

/// `ethtool_ops.get_drvinfo`.
///
/// # Safety
///
/// Called by the ethtool core with a valid, writable `info`.
unsafe extern "C" fn tun_get_drvinfo(
    _dev: *mut bindings::net_device,
    info: *mut bindings::ethtool_drvinfo,
) {
    // SAFETY: `info` is valid and writable for the call.
    let info = unsafe { &mut *info };
    strscpy(&mut info.driver, crate::DRV_NAME);
    strscpy(&mut info.version, crate::DRV_VERSION);
    strscpy(&mut info.bus_info, b"tun");
}

fn strscpy(dst: &mut [core::ffi::c_char], src: &[u8]) {
    let n = src.len().min(dst.len() - 1);
    for (d, s) in dst.iter_mut().zip(&src[..n]) {
        *d = *s as core::ffi::c_char;
    }
    dst[n] = 0;
}

/// Netdev tx return value.
pub(crate) const NETDEV_TX_OK: bindings::netdev_tx_t = bindings::netdev_tx_NETDEV_TX_OK;
/// `NET_XMIT_DROP`, tun's return for a dropped packet.
pub(crate) const NET_XMIT_DROP: bindings::netdev_tx_t = bindings::NET_XMIT_DROP as _;

// ---------------------------------------------------------------------------
// rtnl link ops: `ip -d link` shows our kind, `ip link del` works, and
// module unload deletes what is left, as `rtnl_link_unregister` does for tun.

static TUN_LINK_OPS: KernelStatic<bindings::rtnl_link_ops> =
    KernelStatic::new(bindings::rtnl_link_ops {
        kind: crate::DRV_KIND.as_ptr().cast(),
        priv_size: core::mem::size_of::<crate::Tun>(),
        setup: Some(tun_setup),
        validate: Some(tun_validate),
        ..zeroed()
    });

/// `rtnl_link_ops.validate`: creation through rtnetlink is not supported
/// (as in tun.c).
///
/// # Safety
///
/// Called by rtnetlink; the arguments are not used.
unsafe extern "C" fn tun_validate(
    _tb: *mut *mut bindings::nlattr,
    _data: *mut *mut bindings::nlattr,
    _extack: *mut bindings::netlink_ext_ack,
) -> c_int {
    errno::EOPNOTSUPP().to_errno()
}

/// Registration of the rtnl link ops, undone on drop.
pub(crate) struct LinkOpsRegistration(());

impl LinkOpsRegistration {
    /// `rtnl_link_register()`.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: The ops are static; registered once (module init).
        to_result(unsafe { bindings::rtnl_link_register(TUN_LINK_OPS.get()) })?;
        Ok(Self(()))
    }
}

impl Drop for LinkOpsRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`; this also unregisters every
        // device left of ours.
        unsafe { bindings::rtnl_link_unregister(TUN_LINK_OPS.get()) }
    }
}

// ---------------------------------------------------------------------------
// The character device.

static TUN_FOPS: KernelStatic<bindings::file_operations> =
    KernelStatic::new(bindings::file_operations {
        read_iter: Some(tun_chr_read_iter),
        write_iter: Some(tun_chr_write_iter),
        poll: Some(tun_chr_poll),
        unlocked_ioctl: Some(tun_chr_ioctl),
        open: Some(tun_chr_open),
        release: Some(tun_chr_close),
        ..zeroed()
    });

static TUN_MISCDEV: KernelStatic<bindings::miscdevice> = KernelStatic::new(bindings::miscdevice {
    minor: bindings::MISC_DYNAMIC_MINOR as c_int,
    name: crate::DRV_KIND.as_ptr().cast(),
    nodename: crate::DEV_NODENAME.as_ptr().cast(),
    mode: 0o666,
    fops: TUN_FOPS.0.get().cast_const(),
    ..zeroed()
});

/// Registration of the misc device `/dev/net/rust_tun`, undone on drop.
pub(crate) struct MiscRegistration(());

impl MiscRegistration {
    /// `misc_register()`.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: Before registration nothing else reads the fops, so this
        // write races with nobody. Open files pin the module through `owner`.
        unsafe { (*TUN_FOPS.get()).owner = crate::THIS_MODULE.as_ptr().cast() };
        // SAFETY: The miscdevice and fops are static; registered once.
        to_result(unsafe { bindings::misc_register(TUN_MISCDEV.get()) })?;
        Ok(Self(()))
    }
}

impl Drop for MiscRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`.
        unsafe { bindings::misc_deregister(TUN_MISCDEV.get()) }
    }
}

/// The `TunFile` behind `file->private_data`.
///
/// # Safety
///
/// `file` must be a file of our device between `open` and `release`.
unsafe fn tfile_of<'a>(file: *mut bindings::file) -> ArcBorrow<'a, crate::TunFile> {
    // SAFETY: `open` stored an `Arc<TunFile>` there, released only by
    // `release`, which runs after every other file operation.
    unsafe { ArcBorrow::from_raw((*file).private_data.cast::<crate::TunFile>()) }
}

/// The `TunFile` behind `file->private_data`, by plain reference (the data
/// path needs no new `Arc`; `ArcBorrow::from_raw` costs an out-of-line
/// layout computation per call).
///
/// # Safety
///
/// As for [`tfile_of`].
#[inline(always)]
unsafe fn tfile_ref<'a>(file: *mut bindings::file) -> &'a crate::TunFile {
    // SAFETY: See `tfile_of`; `Arc::into_raw` points at the `TunFile`.
    unsafe { &*(*file).private_data.cast::<crate::TunFile>() }
}

/// Whether the call must not block.
///
/// # Safety
///
/// `iocb` must be valid.
unsafe fn noblock(iocb: *mut bindings::kiocb) -> bool {
    // SAFETY: Valid `iocb` and its file.
    unsafe {
        ((*(*iocb).ki_filp).f_flags & bindings::O_NONBLOCK) != 0
            || ((*iocb).ki_flags & bindings::RTUN_IOCB_NOWAIT) != 0
    }
}

/// `file_operations.open`.
///
/// # Safety
///
/// Called by the VFS with a file being opened on our misc device.
unsafe extern "C" fn tun_chr_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    from_result(|| {
        let tfile = crate::tun_chr_open()?;
        // SAFETY: `file` is being opened; its private data is ours.
        unsafe { (*file).private_data = Arc::into_raw(tfile).cast_mut().cast() };
        Ok(0)
    })
}

/// `file_operations.release`.
///
/// # Safety
///
/// Called by the VFS once per opened file, after every other operation.
unsafe extern "C" fn tun_chr_close(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `open` stored the reference; this is the last use.
    let tfile = unsafe { Arc::from_raw((*file).private_data.cast::<crate::TunFile>()) };
    crate::tun_chr_close(tfile);
    0
}

/// `file_operations.read_iter`.
///
/// # Safety
///
/// Called by the VFS with a valid `iocb` of an open file of ours and a
/// valid `to`.
unsafe extern "C" fn tun_chr_read_iter(
    iocb: *mut bindings::kiocb,
    to: *mut bindings::iov_iter,
) -> isize {
    // SAFETY: Valid `iocb` of an open file of ours; `to` valid for the call.
    let (tfile, nb) = unsafe { (tfile_ref((*iocb).ki_filp), noblock(iocb)) };
    let mut to = IovIter(to);
    match crate::tun_chr_read_iter(tfile, &mut to, nb) {
        Ok(n) => n as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// `file_operations.write_iter`.
///
/// # Safety
///
/// Called by the VFS with a valid `iocb` of an open file of ours and a
/// valid `from`.
unsafe extern "C" fn tun_chr_write_iter(
    iocb: *mut bindings::kiocb,
    from: *mut bindings::iov_iter,
) -> isize {
    // SAFETY: Valid `iocb` of an open file of ours; `from` valid for the call.
    let (tfile, nb) = unsafe { (tfile_ref((*iocb).ki_filp), noblock(iocb)) };
    let mut from = IovIter(from);
    match crate::tun_chr_write_iter(tfile, &mut from, nb) {
        Ok(n) => n as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// `file_operations.poll`.
///
/// # Safety
///
/// Called by the VFS with an open file of ours and a valid poll table.
unsafe extern "C" fn tun_chr_poll(
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
) -> c_uint {
    // SAFETY: An open file of ours.
    let tfile = unsafe { tfile_ref(file) };
    crate::tun_chr_poll(tfile, &PollTable { file, table })
}

/// `file_operations.unlocked_ioctl`.
///
/// # Safety
///
/// Called by the VFS with an open file of ours.
unsafe extern "C" fn tun_chr_ioctl(file: *mut bindings::file, cmd: c_uint, arg: c_ulong) -> c_long {
    // SAFETY: An open file of ours.
    let tfile = unsafe { tfile_of(file) };
    match crate::tun_chr_ioctl(tfile, cmd, arg as usize) {
        Ok(v) => v as c_long,
        Err(e) => e.to_errno() as c_long,
    }
}

/// Keeps `c_void` in use for platforms where the ops use it.
#[allow(dead_code)]
type Void = c_void;

// ---------------------------------------------------------------------------
// Static keys.

/// `static_branch_unlikely(&KEY)` for a `struct static_key_false` KEY, as a
/// jump-label site: on x86_64 with `CONFIG_JUMP_LABEL` a 5-byte NOP that the
/// kernel patches into a `JMP` to the "yes" path while the key is enabled,
/// registered in this module's `__jump_table` (x86's non-objtool
/// `arch_static_branch()`). Each expansion is its own site.
#[cfg(all(CONFIG_JUMP_LABEL, target_arch = "x86_64"))]
macro_rules! static_branch_unlikely {
    ($key:path) => {
        'site: {
            // SAFETY: The asm only emits a NOP and a `__jump_table` entry
            // (code, target, key), laid out as `struct jump_entry` with
            // relative offsets; the key is a `static_key_false` (branch bit
            // 0), so the kernel leaves the NOP while it is disabled and
            // patches a `JMP yes` while enabled. Neither path touches
            // registers, memory or the stack.
            unsafe {
                ::core::arch::asm!(
                    "772: .byte 0x0f,0x1f,0x44,0x00,0x00",
                    ".pushsection __jump_table, \"aw\"",
                    ".balign 8",
                    ".long 772b - .",
                    ".long {yes} - .",
                    ".quad {key} - .",
                    ".popsection",
                    key = sym $key,
                    yes = label { break 'site true; },
                    options(att_syntax, nostack),
                );
            }
            false
        }
    };
}

/// `static_branch_unlikely(&KEY)` without jump labels: a read of the key's
/// enable count, as C's fallback does.
#[cfg(not(all(CONFIG_JUMP_LABEL, target_arch = "x86_64")))]
macro_rules! static_branch_unlikely {
    ($key:path) => {
        // SAFETY: `static_key_count` reads the key's atomic count.
        unsafe {
            $crate::bindings::rtun_static_key_count(::core::ptr::addr_of_mut!($key).cast()) > 0
        }
    };
}
pub(crate) use static_branch_unlikely;

/// Whether the guards are jump-label sites in this build (x86_64 with
/// `CONFIG_JUMP_LABEL`); otherwise they read the keys' counts.
pub(crate) const JUMP_LABELS: bool = cfg!(all(CONFIG_JUMP_LABEL, target_arch = "x86_64"));

/// What a jump-label site of this module currently holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SiteInsn {
    /// The 5-byte NOP: the branch is not taken.
    Nop,
    /// A `JMP`; `to_target` says whether it lands on the entry's target.
    Jmp { to_target: bool },
    /// Anything else (a bug): its first byte.
    Other(u8),
}

/// One entry of this module's `__jump_table`.
pub(crate) struct JumpSite {
    /// The key's name, if it is one this module knows.
    pub(crate) key: &'static str,
    /// The key's enable count (`static_key_count()`).
    pub(crate) key_count: i32,
    /// The instruction at the site now.
    pub(crate) insn: SiteInsn,
}

/// Calls `f` on every jump-label site of this module, in table order.
pub(crate) fn for_each_jump_site(mut f: impl FnMut(usize, JumpSite)) {
    let mut start: *const bindings::jump_entry = ptr::null();
    // SAFETY: Reads this module's `jump_entries`/`num_jump_entries`.
    let n = unsafe { bindings::rtun_jump_entries(&mut start) } as usize;
    for i in 0..n {
        #[cfg(CONFIG_JUMP_LABEL)]
        {
            // SAFETY: `i < n` entries of the module's table; the table and
            // the module text live as long as the module.
            let (code, target, key) = unsafe {
                let e = start.add(i);
                (
                    bindings::rtun_jump_entry_code(e) as usize,
                    bindings::rtun_jump_entry_target(e) as usize,
                    bindings::rtun_jump_entry_key(e),
                )
            };
            // SAFETY: `code` is a site in our loaded text, at least five
            // bytes long; text is readable, and patching keeps every byte
            // valid, so a racy read sees some valid byte.
            let bytes = unsafe { ptr::read_volatile(code as *const [u8; 5]) };
            let insn = match bytes {
                [0x0f, 0x1f, 0x44, 0x00, 0x00] => SiteInsn::Nop,
                [0xe9, a, b, c, d] => SiteInsn::Jmp {
                    to_target: code
                        .wrapping_add(5)
                        .wrapping_add(i32::from_le_bytes([a, b, c, d]) as isize as usize)
                        == target,
                },
                [0xeb, rel, ..] => SiteInsn::Jmp {
                    to_target: code
                        .wrapping_add(2)
                        .wrapping_add(rel as i8 as isize as usize)
                        == target,
                },
                [b, ..] => SiteInsn::Other(b),
            };
            let name = key_name(key.cast());
            // SAFETY: The key of a live jump entry is a live static key.
            let key_count = unsafe { bindings::rtun_static_key_count(key) };
            f(
                i,
                JumpSite {
                    key: name,
                    key_count,
                    insn,
                },
            );
        }
    }
    let _ = (&mut f, start);
}

/// The name of a static key this module uses.
fn key_name(key: *const c_void) -> &'static str {
    #[cfg(CONFIG_RPS)]
    {
        if ptr::eq(key, ptr::addr_of!(bindings::rps_needed).cast()) {
            return "rps_needed";
        }
        if ptr::eq(key, ptr::addr_of!(bindings::rfs_needed).cast()) {
            return "rfs_needed";
        }
    }
    let _ = key;
    "?"
}

// ---------------------------------------------------------------------------
// RPS/RFS.

/// The `unguarded` module parameter.
pub(crate) fn param_unguarded() -> bool {
    // SAFETY: Reads a module parameter with READ_ONCE.
    unsafe { bindings::rtun_param_unguarded() }
}

/// `rps_record_sock_flow()` on the global RFS table
/// (`net_hotdata.rps_sock_flow_table`), under RCU: sets the entry of `hash`
/// to the hash's upper bits and the current CPU. Returns whether a table
/// was there. The job of C's inline `sock_rps_record_flow_hash()` past its
/// zero-hash check.
#[cfg(CONFIG_RPS)]
#[inline(always)]
pub(crate) fn rps_record_sock_flow(hash: u32) -> bool {
    let _rcu = RcuReadGuard::new();
    let table = rps_sock_flow_table();
    if table.is_null() {
        return false;
    }
    // SAFETY: A published table stays valid during the RCU read section;
    // `mask + 1` entries follow the header, so `hash & mask` is in bounds.
    // Racy accesses are READ_ONCE/WRITE_ONCE, as in C.
    unsafe {
        let index = (hash & (*table).mask) as usize;
        let val = (hash & !rps_cpu_mask()) | raw_smp_processor_id();
        let ent = (*table).ents.as_mut_ptr().add(index);
        if ptr::read_volatile(ent) != val {
            ptr::write_volatile(ent, val);
        }
    }
    true
}

/// `rcu_dereference(net_hotdata.rps_sock_flow_table)`, read inline.
#[cfg(CONFIG_RPS)]
#[inline(always)]
fn rps_sock_flow_table() -> *mut bindings::rps_sock_flow_table {
    // SAFETY: `net_hotdata` is a live kernel object; the offset is
    // `offsetof(struct net_hotdata, rps_sock_flow_table)`; READ_ONCE.
    unsafe {
        ptr::read_volatile(
            ptr::addr_of!(bindings::net_hotdata)
                .cast::<u8>()
                .add(bindings::RTUN_NET_HOTDATA_RPS_SOCK_FLOW_TABLE as usize)
                .cast::<*mut bindings::rps_sock_flow_table>(),
        )
    }
}

/// `net_hotdata.rps_cpu_mask`, read inline.
#[cfg(CONFIG_RPS)]
#[inline(always)]
fn rps_cpu_mask() -> u32 {
    // SAFETY: As above, `offsetof(struct net_hotdata, rps_cpu_mask)`; a
    // plain read, as in C.
    unsafe {
        ptr::read(
            ptr::addr_of!(bindings::net_hotdata)
                .cast::<u8>()
                .add(bindings::RTUN_NET_HOTDATA_RPS_CPU_MASK as usize)
                .cast::<u32>(),
        )
    }
}

/// Reads the global RFS table's entry for `hash`, if there is a table.
#[cfg(not(CONFIG_RPS))]
pub(crate) fn rps_sock_flow_entry(_hash: u32) -> Option<u32> {
    None
}

/// Reads the global RFS table's entry for `hash`, if there is a table.
#[cfg(CONFIG_RPS)]
pub(crate) fn rps_sock_flow_entry(hash: u32) -> Option<u32> {
    let _rcu = RcuReadGuard::new();
    let table = rps_sock_flow_table();
    // SAFETY: As in `rps_record_sock_flow`.
    unsafe {
        if table.is_null() {
            return None;
        }
        let index = (hash & (*table).mask) as usize;
        Some(ptr::read_volatile((*table).ents.as_ptr().add(index)))
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
    unsafe fn setup(&self, f: unsafe extern "C" fn(*mut bindings::timer_list)) {
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
unsafe extern "C" fn tun_flow_cleanup_timer(t: *mut bindings::timer_list) {
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

// ---------------------------------------------------------------------------
// debugfs.

/// A debugfs directory, removed (recursively) on drop.
pub(crate) struct Dentry(NonNull<bindings::dentry>);

// SAFETY: debugfs dentries may be removed from any thread.
unsafe impl Send for Dentry {}
// SAFETY: Only passed to debugfs.
unsafe impl Sync for Dentry {}

impl Dentry {
    /// `debugfs_create_dir()`; `None` if debugfs is unavailable.
    pub(crate) fn dir(name: &CStr, parent: Option<&Dentry>) -> Option<Dentry> {
        let parent = parent.map_or(ptr::null_mut(), |d| d.0.as_ptr());
        // SAFETY: `name` is NUL-terminated; `parent` is null or a live dir.
        let d = unsafe { bindings::debugfs_create_dir(name.as_char_ptr().cast(), parent) };
        // debugfs returns an ERR_PTR on failure.
        if d.is_null() || (d as usize) >= (-4095isize) as usize {
            return None;
        }
        NonNull::new(d).map(Dentry)
    }

    /// A read-only file whose contents `show` writes; `data` is what
    /// `show` gets back.
    ///
    /// # Safety
    ///
    /// `data` must stay valid until this directory is removed.
    unsafe fn file(&self, name: &CStr, fops: &'static DebugfsFops, data: *const c_void) {
        // SAFETY: `self` is a live directory; `fops` is static; the caller
        // keeps `data` alive until removal, which waits for readers.
        unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr().cast(),
                0o444,
                self.0.as_ptr(),
                data.cast_mut(),
                fops.0.get().cast_const(),
            )
        };
    }

    /// A module-wide file (no per-object data).
    pub(crate) fn module_file(&self, name: &CStr, fops: &'static DebugfsFops) {
        // SAFETY: No data.
        unsafe { self.file(name, fops, ptr::null()) };
    }
}

impl Drop for Dentry {
    fn drop(&mut self) {
        // SAFETY: A live directory of ours; removal waits for readers.
        unsafe { bindings::debugfs_remove(self.0.as_ptr()) };
    }
}

/// A `file_operations` for a generated-text debugfs file: the text is
/// generated once at open (so a reader sees one consistent snapshot across
/// its reads) and freed at release.
pub(crate) struct DebugfsFops(KernelStatic<bindings::file_operations>);

impl DebugfsFops {
    const fn new(
        open: unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int,
    ) -> Self {
        Self(KernelStatic::new(bindings::file_operations {
            open: Some(open),
            read: Some(text_read),
            release: Some(text_release),
            ..zeroed()
        }))
    }
}

/// A text buffer for debugfs contents.
pub(crate) struct TextBuf(KVec<u8>);

impl core::fmt::Write for TextBuf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| core::fmt::Error)
    }
}

/// Generates the text with `show` and keeps it in `file->private_data`.
///
/// # Safety
///
/// `file` is a debugfs file being opened with one of our [`DebugfsFops`].
unsafe fn open_text(
    file: *mut bindings::file,
    show: impl FnOnce(&mut TextBuf) -> core::fmt::Result,
) -> c_int {
    let mut text = TextBuf(KVec::new());
    if show(&mut text).is_err() {
        return ENOMEM.to_errno();
    }
    match KBox::new(text.0, GFP_KERNEL) {
        // SAFETY: The file is being opened; its private data is ours until
        // `text_release`.
        Ok(b) => unsafe {
            (*file).private_data = KBox::into_raw(b).cast();
            0
        },
        Err(_) => ENOMEM.to_errno(),
    }
}

/// `read` of a generated-text debugfs file (`simple_read_from_buffer()`).
///
/// # Safety
///
/// Called by the VFS on a file opened by [`open_text`].
unsafe extern "C" fn text_read(
    file: *mut bindings::file,
    buf: *mut core::ffi::c_char,
    count: usize,
    ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `open_text` stored the text; it lives until release.
    let text = unsafe { &*(*file).private_data.cast::<KVec<u8>>() };
    // SAFETY: The `read` arguments are valid; `text` is a kernel buffer.
    unsafe {
        bindings::simple_read_from_buffer(buf.cast(), count, ppos, text.as_ptr().cast(), text.len())
    }
}

/// `release` of a generated-text debugfs file.
///
/// # Safety
///
/// Called by the VFS once, on a file opened by [`open_text`].
unsafe extern "C" fn text_release(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `open_text` stored a `KBox<KVec<u8>>`; this is its last use.
    drop(unsafe { KBox::from_raw((*file).private_data.cast::<KVec<u8>>()) });
    0
}

/// `open` of `<debugfs>/rust_tun/jump_sites`.
///
/// # Safety
///
/// Called by debugfs on a file being opened.
unsafe extern "C" fn jump_sites_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { open_text(file, crate::rps::show_jump_sites) }
}

/// `open` of a per-device debugfs file.
///
/// # Safety
///
/// Called by debugfs for a file created by [`DevDebugfs::create`], whose
/// data is the device.
unsafe fn dev_open(
    file: *mut bindings::file,
    show: fn(&NetDevice, &mut TextBuf) -> core::fmt::Result,
) -> c_int {
    // SAFETY: The data is a device of ours, alive until its files are
    // removed in `ndo_uninit` (removal waits for this open).
    let dev = unsafe { NetDevice::from_raw(bindings::rtun_file_inode_private(file).cast()) };
    // SAFETY: Forwarded.
    unsafe { open_text(file, |t| show(dev, t)) }
}

/// `open` of `<debugfs>/rust_tun/<dev>/flows`.
///
/// # Safety
///
/// See [`dev_open`].
unsafe extern "C" fn dev_flows_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { dev_open(file, crate::tun_show_flows) }
}

/// `open` of `<debugfs>/rust_tun/<dev>/stats`.
///
/// # Safety
///
/// See [`dev_open`].
unsafe extern "C" fn dev_stats_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { dev_open(file, crate::tun_show_stats) }
}

/// The fops of `jump_sites`.
pub(crate) static JUMP_SITES_FOPS: DebugfsFops = DebugfsFops::new(jump_sites_open);
static DEV_FLOWS_FOPS: DebugfsFops = DebugfsFops::new(dev_flows_open);
static DEV_STATS_FOPS: DebugfsFops = DebugfsFops::new(dev_stats_open);

/// The module's debugfs root, `<debugfs>/rust_tun`, for per-device dirs.
static DEBUGFS_ROOT: AtomicPtr<bindings::dentry> = AtomicPtr::new(ptr::null_mut());

/// Creates `<debugfs>/rust_tun` (kept by the module until unload).
pub(crate) fn debugfs_root_create() -> Option<Dentry> {
    let root = Dentry::dir(kernel::c_str!("rust_tun"), None)?;
    DEBUGFS_ROOT.store(root.0.as_ptr(), Ordering::Release);
    Some(root)
}

/// The per-device debugfs directory, `<debugfs>/rust_tun/<ifname>`.
pub(crate) struct DevDebugfs(AtomicPtr<bindings::dentry>);

impl DevDebugfs {
    /// No directory.
    pub(crate) const fn new() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
    }

    /// Creates the directory and its files for `dev` (under rtnl).
    pub(crate) fn create(&self, dev: &NetDevice, _rtnl: &Rtnl) {
        let root = DEBUGFS_ROOT.load(Ordering::Acquire);
        let Some(root) = NonNull::new(root) else {
            return;
        };
        let name = dev.name();
        let Some(end) = name.iter().position(|&c| c == 0) else {
            return;
        };
        let Ok(name) = CStr::from_bytes_with_nul(&name[..=end]) else {
            return;
        };
        let root = core::mem::ManuallyDrop::new(Dentry(root));
        let Some(dir) = Dentry::dir(name, Some(&root)) else {
            return;
        };
        let data = ptr::from_ref(dev).cast::<c_void>();
        // SAFETY: The device outlives its directory: `remove` runs in
        // `ndo_uninit`, before the device can be freed.
        unsafe {
            dir.file(kernel::c_str!("flows"), &DEV_FLOWS_FOPS, data);
            dir.file(kernel::c_str!("stats"), &DEV_STATS_FOPS, data);
        }
        let old = self.0.swap(
            core::mem::ManuallyDrop::new(dir).0.as_ptr(),
            Ordering::AcqRel,
        );
        // INVARIANT: at most one directory is owned at a time.
        if let Some(old) = NonNull::new(old) {
            drop(Dentry(old));
        }
    }

    /// Removes the directory, waiting for readers.
    pub(crate) fn remove(&self) {
        if let Some(d) = NonNull::new(self.0.swap(ptr::null_mut(), Ordering::AcqRel)) {
            drop(Dentry(d));
        }
    }
}

// ---------------------------------------------------------------------------
// Credentials (`TUNSETOWNER`, `TUNSETGROUP`, `tun_permitted()`).

/// `make_kuid(current_user_ns(), uid)`; `None` if invalid.
pub(crate) fn make_kuid(uid: isize) -> Option<u32> {
    // SAFETY: Process context.
    let k = unsafe { bindings::rtun_make_kuid(uid as c_long) };
    (k != u32::MAX).then_some(k)
}

/// `make_kgid(current_user_ns(), gid)`; `None` if invalid.
pub(crate) fn make_kgid(gid: isize) -> Option<u32> {
    // SAFETY: Process context.
    let k = unsafe { bindings::rtun_make_kgid(gid as c_long) };
    (k != u32::MAX).then_some(k)
}

/// `uid_eq(current_euid(), kuid)`.
pub(crate) fn current_euid_is(kuid: u32) -> bool {
    // SAFETY: Process context.
    unsafe { bindings::rtun_current_euid_is(kuid) }
}

/// `in_egroup_p(kgid)`.
pub(crate) fn in_egroup(kgid: u32) -> bool {
    // SAFETY: Process context.
    unsafe { bindings::rtun_in_egroup(kgid) }
}

// ---------------------------------------------------------------------------
// Netdevice notifier: the rings follow `tx_queue_len` (`tun_device_event()`).

static TUN_NOTIFIER: KernelStatic<bindings::notifier_block> =
    KernelStatic::new(bindings::notifier_block {
        notifier_call: Some(tun_device_event),
        next: ptr::null_mut(),
        priority: 0,
    });

/// `tun_device_event()`.
///
/// # Safety
///
/// Called by the netdevice notifier chain, under rtnl, with a valid `ptr`.
unsafe extern "C" fn tun_device_event(
    _nb: *mut bindings::notifier_block,
    event: c_ulong,
    ptr: *mut c_void,
) -> c_int {
    // SAFETY: `ptr` is a `netdev_notifier_info` of a live device.
    let dev = unsafe { bindings::rtun_netdev_notifier_info_to_dev(ptr) };
    // SAFETY: A live device; reading its ops pointer.
    let ops = unsafe { (*dev).netdev_ops };
    if event != bindings::RTUN_NETDEV_CHANGE_TX_QUEUE_LEN as c_ulong || !is_our_ops(ops) {
        return bindings::RTUN_NOTIFY_DONE;
    }
    // SAFETY: One of ours (its ops say so); the chain runs under rtnl.
    let (dev, rtnl) = unsafe { (NetDevice::from_raw(dev), Rtnl::assume_held()) };
    match crate::tun_queue_resize(dev, &rtnl) {
        Ok(()) => bindings::RTUN_NOTIFY_DONE,
        // SAFETY: Pure computation.
        Err(e) => unsafe { bindings::rtun_notifier_from_errno(e.to_errno()) },
    }
}

/// Registration of the netdevice notifier, undone on drop.
pub(crate) struct NotifierRegistration(());

impl NotifierRegistration {
    /// `register_netdevice_notifier()`.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: A static notifier block, registered once.
        to_result(unsafe { bindings::register_netdevice_notifier(TUN_NOTIFIER.get()) })?;
        Ok(Self(()))
    }
}

impl Drop for NotifierRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`.
        unsafe { bindings::unregister_netdevice_notifier(TUN_NOTIFIER.get()) };
    }
}

// ---------------------------------------------------------------------------
// Micro-benchmark support.

/// Bottom halves disabled until dropped (`local_bh_disable()`).
pub(crate) struct BhDisabled(PhantomData<*mut ()>);

impl BhDisabled {
    /// `local_bh_disable()`.
    pub(crate) fn new() -> Self {
        // SAFETY: Process context; balanced by `drop`.
        unsafe { bindings::rtun_local_bh_disable() };
        Self(PhantomData)
    }
}

impl Drop for BhDisabled {
    fn drop(&mut self) {
        // SAFETY: Balances `new`.
        unsafe { bindings::rtun_local_bh_enable() };
    }
}

/// The time-stamp counter (`rdtsc()`); under QEMU's `-icount shift=0` one
/// tick is one guest instruction.
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    // SAFETY: `rdtsc` has no preconditions in kernel mode.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Hides `v` from the optimiser, in a register (C's `asm volatile("" :
/// "+r"(v))`), so a loop around it is neither removed nor folded.
#[inline(always)]
pub(crate) fn hide(mut v: u32) -> u32 {
    // SAFETY: An empty asm statement.
    unsafe {
        ::core::arch::asm!("/* {0:e} */", inout(reg) v, options(nomem, nostack, preserves_flags))
    };
    v
}

/// The enable count of `rfs_needed` (not a jump site: for reports only).
pub(crate) fn rfs_needed_count() -> i32 {
    #[cfg(CONFIG_RPS)]
    {
        // SAFETY: Reads the key's atomic count.
        unsafe { bindings::rtun_static_key_count(ptr::addr_of_mut!(bindings::rfs_needed).cast()) }
    }
    #[cfg(not(CONFIG_RPS))]
    {
        0
    }
}

/// `open` of `<debugfs>/rust_tun/micro_bench`: runs the micro-benchmark.
///
/// # Safety
///
/// Called by debugfs on a file being opened.
unsafe extern "C" fn micro_bench_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { open_text(file, crate::rps::micro_bench) }
}

/// The fops of `micro_bench`.
pub(crate) static MICRO_BENCH_FOPS: DebugfsFops = DebugfsFops::new(micro_bench_open);

// ---------------------------------------------------------------------------
// The transmit ring.

/// `spin_lock()`: with out-of-line spinlocks (`!CONFIG_INLINE_SPIN_LOCK`)
/// C's inline `spin_lock()` is a call of `_raw_spin_lock(&lock->rlock)`;
/// make the same call rather than go through the `kernel` crate's helper.
///
/// # Safety
///
/// `lock` is an initialised spinlock; the caller follows its context rules.
#[inline(always)]
unsafe fn spin_lock(lock: *mut kernel::bindings::spinlock_t) {
    #[cfg(not(any(CONFIG_INLINE_SPIN_LOCK, CONFIG_PREEMPT_RT)))]
    // CAST: `rlock` is the first member of `spinlock_t` without PREEMPT_RT.
    // SAFETY: As the caller guarantees.
    unsafe {
        kernel::bindings::_raw_spin_lock(lock.cast())
    };
    #[cfg(any(CONFIG_INLINE_SPIN_LOCK, CONFIG_PREEMPT_RT))]
    // SAFETY: As the caller guarantees.
    unsafe {
        kernel::bindings::spin_lock(lock)
    };
}

/// `spin_unlock()`: out of line only with `CONFIG_UNINLINE_SPIN_UNLOCK`
/// (C then calls `_raw_spin_unlock()`); otherwise C inlines the release
/// store, and we go through the `kernel` crate's helper.
///
/// # Safety
///
/// The caller holds `lock`.
#[inline(always)]
unsafe fn spin_unlock(lock: *mut kernel::bindings::spinlock_t) {
    #[cfg(all(CONFIG_UNINLINE_SPIN_UNLOCK, not(CONFIG_PREEMPT_RT)))]
    // CAST: As in `spin_lock`.
    // SAFETY: As the caller guarantees.
    unsafe {
        kernel::bindings::_raw_spin_unlock(lock.cast())
    };
    #[cfg(not(all(CONFIG_UNINLINE_SPIN_UNLOCK, not(CONFIG_PREEMPT_RT))))]
    // SAFETY: As the caller guarantees.
    unsafe {
        kernel::bindings::spin_unlock(lock)
    };
}

/// Proof that bottom halves are off: only `ndo_start_xmit` makes one.
pub(crate) struct BhOff(PhantomData<*mut ()>);

/// A bounded FIFO of owned skbs with separate producer and consumer locks:
/// `include/linux/ptr_ring.h` (which tun.c's `tx_ring` is), without its
/// batching. A slot is empty when null; the producer fills the slot at its
/// index if it is empty, the consumer empties the slot at its index if it
/// is full, so the two sides only meet through the slots.
///
/// The producer lock is taken with bottom halves off (the transmit path,
/// or `_bh` from process context); the consumer lock only in process
/// context, so the reader pays no BH toggling.
///
/// # Invariants
///
/// `slots` (the vector itself) changes only with both locks held;
/// `producer` only under the producer lock; `consumer` only under the
/// consumer lock. A non-null slot owns its skb.
#[pin_data(PinnedDrop)]
pub(crate) struct SkbRing {
    #[pin]
    producer_lock: Opaque<kernel::bindings::spinlock_t>,
    #[pin]
    consumer_lock: Opaque<kernel::bindings::spinlock_t>,
    slots: UnsafeCell<KVec<AtomicPtr<bindings::sk_buff>>>,
    producer: UnsafeCell<usize>,
    consumer: UnsafeCell<usize>,
}

// SAFETY: Every field is accessed under the lock the invariants name, and
// skbs may be freed from any thread.
unsafe impl Send for SkbRing {}
// SAFETY: As above.
unsafe impl Sync for SkbRing {}

/// Storage for an [`SkbRing`], allocated outside its locks.
pub(crate) struct RingSlots(KVec<AtomicPtr<bindings::sk_buff>>);

impl RingSlots {
    /// Room for `len` packets (at least one).
    pub(crate) fn new(len: usize) -> Result<Self> {
        let len = len.max(1);
        let mut v = KVec::with_capacity(len, GFP_KERNEL)?;
        for _ in 0..len {
            v.push(AtomicPtr::new(ptr::null_mut()), GFP_KERNEL)?;
        }
        Ok(Self(v))
    }
}

impl SkbRing {
    /// An empty ring with no storage (`ptr_ring_init(0)`); every produce
    /// fails until [`SkbRing::resize`].
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `slot` is valid for writes; name and key are static.
            producer_lock <- Opaque::ffi_init(|slot| unsafe {
                kernel::bindings::__spin_lock_init(
                    slot,
                    kernel::c_str!("SkbRing::producer").as_char_ptr(),
                    // CAST: `LockClassKey` is a transparent `lock_class_key`.
                    ptr::from_ref(kernel::static_lock_class!()).cast_mut().cast(),
                )
            }),
            // SAFETY: As above.
            consumer_lock <- Opaque::ffi_init(|slot| unsafe {
                kernel::bindings::__spin_lock_init(
                    slot,
                    kernel::c_str!("SkbRing::consumer").as_char_ptr(),
                    // CAST: `LockClassKey` is a transparent `lock_class_key`.
                    ptr::from_ref(kernel::static_lock_class!()).cast_mut().cast(),
                )
            }),
            slots: UnsafeCell::new(KVec::new()),
            producer: UnsafeCell::new(0),
            consumer: UnsafeCell::new(0),
        })
    }

    /// `ptr_ring_produce()` from the transmit path; gives the packet back
    /// when the ring is full.
    #[inline]
    pub(crate) fn produce(&self, skb: SkBuff, _bh: &BhOff) -> core::result::Result<(), SkBuff> {
        // SAFETY: Bottom halves are off (`_bh`), as the producer lock needs.
        unsafe { spin_lock(self.producer_lock.get()) };
        // SAFETY: The producer lock is held: `slots` cannot change and
        // `producer` is ours (type invariants).
        let ret = unsafe {
            let slots = &*self.slots.get();
            let i = *self.producer.get();
            match slots.get(i) {
                Some(slot) if slot.load(Ordering::Acquire).is_null() => {
                    // INVARIANT: The slot now owns the skb.
                    slot.store(
                        core::mem::ManuallyDrop::new(skb).0.as_ptr(),
                        Ordering::Release,
                    );
                    *self.producer.get() = if i + 1 == slots.len() { 0 } else { i + 1 };
                    Ok(())
                }
                _ => Err(skb),
            }
        };
        // SAFETY: Taken above.
        unsafe { spin_unlock(self.producer_lock.get()) };
        ret
    }

    /// `ptr_ring_consume()`, from process context.
    #[inline]
    pub(crate) fn consume(&self) -> Option<SkBuff> {
        // SAFETY: Process context; the consumer lock is never taken from a
        // bottom half.
        unsafe { spin_lock(self.consumer_lock.get()) };
        // SAFETY: The consumer lock is held: `slots` cannot change and
        // `consumer` is ours (type invariants).
        let ret = unsafe {
            let slots = &*self.slots.get();
            let i = *self.consumer.get();
            slots.get(i).and_then(|slot| {
                let p = slot.load(Ordering::Acquire);
                let skb = NonNull::new(p)?;
                // Emptying the slot hands it back to the producer.
                slot.store(ptr::null_mut(), Ordering::Release);
                *self.consumer.get() = if i + 1 == slots.len() { 0 } else { i + 1 };
                // INVARIANT: The skb left the ring; it is ours.
                Some(SkBuff(skb))
            })
        };
        // SAFETY: Taken above.
        unsafe { spin_unlock(self.consumer_lock.get()) };
        ret
    }

    /// `ptr_ring_empty()`.
    pub(crate) fn is_empty(&self) -> bool {
        // SAFETY: Process context (poll).
        unsafe { spin_lock(self.consumer_lock.get()) };
        // SAFETY: The consumer lock is held (type invariants).
        let empty = unsafe {
            let slots = &*self.slots.get();
            slots
                .get(*self.consumer.get())
                .map_or(true, |slot| slot.load(Ordering::Acquire).is_null())
        };
        // SAFETY: Taken above.
        unsafe { spin_unlock(self.consumer_lock.get()) };
        empty
    }

    /// Drops every queued packet (`tun_queue_purge()`); returns how many.
    pub(crate) fn purge(&self) -> u64 {
        let mut n = 0;
        while let Some(skb) = self.consume() {
            drop(skb);
            n += 1;
        }
        n
    }

    /// `ptr_ring_resize()`: moves the queued packets, in order, into
    /// `slots`; those that do not fit are dropped. Returns how many were.
    pub(crate) fn resize(&self, slots: RingSlots) -> u64 {
        let mut new = slots.0;
        // SAFETY: Process context. Lock order as ptr_ring's: consumer, then
        // producer; bottom halves off for the producer lock.
        unsafe {
            bindings::rtun_local_bh_disable();
            spin_lock(self.consumer_lock.get());
            spin_lock(self.producer_lock.get());
        }
        // SAFETY: Both locks are held: everything is ours (type invariants).
        let old = unsafe {
            let mut n = 0;
            let slots = &*self.slots.get();
            let mut i = *self.consumer.get();
            for _ in 0..slots.len() {
                let p = slots[i].swap(ptr::null_mut(), Ordering::Relaxed);
                if !p.is_null() && n < new.len() {
                    new[n].store(p, Ordering::Relaxed);
                    n += 1;
                } else if !p.is_null() {
                    // Left in the old storage, to be freed below.
                    slots[i].store(p, Ordering::Relaxed);
                }
                i = if i + 1 == slots.len() { 0 } else { i + 1 };
            }
            *self.consumer.get() = 0;
            *self.producer.get() = if n == new.len() { 0 } else { n };
            ptr::swap(self.slots.get(), &mut new);
            new
        };
        // SAFETY: Taken above, released in reverse order.
        unsafe {
            spin_unlock(self.producer_lock.get());
            spin_unlock(self.consumer_lock.get());
            bindings::rtun_local_bh_enable();
        }
        free_slots(old)
    }
}

/// Frees the skbs left in `slots`; returns how many there were.
fn free_slots(slots: KVec<AtomicPtr<bindings::sk_buff>>) -> u64 {
    let mut n = 0;
    for slot in slots.iter() {
        if let Some(p) = NonNull::new(slot.load(Ordering::Relaxed)) {
            // INVARIANT: A non-null slot owned its skb; nothing else refers
            // to this storage any more.
            drop(SkBuff(p));
            n += 1;
        }
    }
    n
}

#[pinned_drop]
impl PinnedDrop for SkbRing {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Dropping: no other reference exists.
        let slots = unsafe { core::mem::take(&mut *self.slots.get()) };
        free_slots(slots);
    }
}
