// SPDX-License-Identifier: GPL-2.0

//! [`SkbRing`], the per-queue transmit ring: `include/linux/ptr_ring.h`
//! (which tun.c's `tx_ring` is), without its batching, over two
//! [`RawSpinLock`]s; its index arithmetic is `ring_logic.rs`, host-tested.

use super::skb::SkBuff;
use super::sync::lock::{BhDisabled, BhOff};
use crate::bindings;
use core::cell::UnsafeCell;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::lock::{Backend, Guard, Lock};

#[path = "ring_logic.rs"]
mod ring_logic;
use ring_logic::{next, producer_after_resize, resize_slot, walk};

/// A `spinlock_t` taken with plain `spin_lock()`: the caller provides the
/// context (bottom halves off where they must be). A
/// `kernel::sync::Lock` backend over the inline `spin_lock()`.
pub(crate) struct RawSpinLockBackend;

/// A spinlock taken with plain `spin_lock()`.
pub(crate) type RawSpinLock<T> = Lock<T, RawSpinLockBackend>;

// SAFETY: `spin_lock` ensures mutual exclusion; `relock` uses the default,
// which calls `lock` again.
unsafe impl Backend for RawSpinLockBackend {
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

    #[inline(always)]
    unsafe fn lock(ptr: *mut Self::State) {
        // CAST: The kernel crate's binding of `spinlock_t` and ours are
        // the same C type.
        // SAFETY: The caller guarantees `ptr` is an initialised spinlock.
        unsafe { bindings::spin_lock(ptr.cast()) }
    }

    #[inline(always)]
    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &()) {
        // CAST: As in `lock`.
        // SAFETY: The caller guarantees it holds the lock at `ptr`.
        unsafe { bindings::spin_unlock(ptr.cast()) }
    }

    crate::sys::compat::backend_since_7_3! {
        unsafe fn try_lock(ptr: *mut Self::State) -> Option<()> {
            // CAST: As in `lock`.
            // SAFETY: The caller guarantees `ptr` is an initialised spinlock.
            (unsafe { bindings::spin_trylock(ptr.cast()) } != 0).then_some(())
        }

        unsafe fn assert_is_held(ptr: *mut Self::State) {
            // CAST: As in `lock`.
            // SAFETY: The caller guarantees `ptr` is an initialised spinlock.
            unsafe { bindings::spin_assert_is_held(ptr.cast()) }
        }
    }
}

/// A bounded FIFO of owned skbs with separate producer and consumer locks.
/// A slot is empty when null; the producer fills the slot at its index if
/// it is empty, the consumer empties the slot at its index if it is full,
/// so the two sides only meet through the slots.
///
/// The producer lock is taken with bottom halves off (the transmit path's
/// [`BhOff`], or [`BhDisabled`] from process context); the consumer lock
/// only in process context, so the reader pays no bottom-half toggling.
///
/// The consumer lock also guards tun.c's `tfile->cons_cnt` (7.3's
/// `IFF_BACKPRESSURE`: "Protected by tx_ring.consumer_lock"), kept here
/// beside the consumer index so that the lock owns what it protects.
///
/// # Invariants
///
/// The producer index is the producer lock's data, the consumer index the
/// consumer lock's. `slots` (the vector itself) is read with either lock
/// held and replaced only with both held. A non-null slot owns its skb.
#[pin_data(PinnedDrop)]
pub(crate) struct SkbRing {
    #[pin]
    producer: RawSpinLock<usize>,
    #[pin]
    consumer: RawSpinLock<ConsumerState>,
    slots: UnsafeCell<KVVec<AtomicPtr<bindings::sk_buff>>>,
}

/// What the consumer lock guards.
struct ConsumerState {
    /// The consumer index.
    index: usize,
    /// tun.c 7.3's `tfile->cons_cnt`: packets consumed since the queue
    /// was stopped (`__tun_wake_queue()`).
    cons_cnt: u32,
}

/// The ring with its consumer lock held (`spin_lock(&r->consumer_lock)`):
/// `__ptr_ring_consume()`, `__ptr_ring_empty()` and `cons_cnt`.
pub(crate) struct RingConsumer<'a> {
    ring: &'a SkbRing,
    state: Guard<'a, ConsumerState, RawSpinLockBackend>,
}

impl RingConsumer<'_> {
    /// `__ptr_ring_consume()`.
    #[inline]
    pub(crate) fn consume(&mut self) -> Option<SkBuff> {
        // SAFETY: The consumer lock is held.
        let slots = unsafe { self.ring.slots() };
        let i = self.state.index;
        let slot = slots.get(i)?;
        let p = slot.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // Emptying the slot hands it back to the producer.
        slot.store(ptr::null_mut(), Ordering::Release);
        self.state.index = next(i, slots.len());
        // SAFETY: The slot owned the skb; it left the ring and is ours.
        Some(unsafe { SkBuff::from_raw(p) })
    }

    /// `__ptr_ring_empty()`.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        // SAFETY: The consumer lock is held.
        let slots = unsafe { self.ring.slots() };
        match slots.get(self.state.index) {
            None => true,
            Some(slot) => slot.load(Ordering::Acquire).is_null(),
        }
    }

    /// `r->size`.
    #[inline]
    pub(crate) fn size(&self) -> usize {
        // SAFETY: The consumer lock is held.
        unsafe { self.ring.slots() }.len()
    }

    /// tun.c's `tfile->cons_cnt`, which the consumer lock protects.
    #[inline]
    pub(crate) fn cons_cnt(&mut self) -> &mut u32 {
        &mut self.state.cons_cnt
    }
}

/// The ring with its producer lock held (`spin_lock(&r->producer_lock)`,
/// bottom halves off): `__ptr_ring_produce()`, `__ptr_ring_check_produce()`.
pub(crate) struct RingProducer<'a> {
    ring: &'a SkbRing,
    index: Guard<'a, usize, RawSpinLockBackend>,
}

impl RingProducer<'_> {
    /// `__ptr_ring_produce()`; gives the packet back when the ring is full.
    #[inline(always)]
    pub(crate) fn produce(&mut self, skb: SkBuff) -> core::result::Result<(), SkBuff> {
        // SAFETY: The producer lock is held.
        let slots = unsafe { self.ring.slots() };
        produce_locked(slots, &mut self.index, skb)
    }

    /// `__ptr_ring_check_produce()`: `Ok` if a produce would succeed now,
    /// `EINVAL` for a ring of no slots, `ENOSPC` for a full one.
    #[inline(always)]
    pub(crate) fn check_produce(&self) -> Result {
        // SAFETY: The producer lock is held.
        let slots = unsafe { self.ring.slots() };
        match slots.get(*self.index) {
            None => Err(EINVAL),
            Some(slot) if !slot.load(Ordering::Acquire).is_null() => Err(ENOSPC),
            Some(_) => Ok(()),
        }
    }
}

/// The ring with both its locks held, consumer then producer, bottom
/// halves off (tun.c 7.3: `spin_lock_bh(&r->consumer_lock);
/// spin_lock(&r->producer_lock)`). The fields drop in order: producer,
/// consumer, then bottom halves back on.
pub(crate) struct RingLocked<'a> {
    /// The producer side, held (nothing of tun.c's reads it under both).
    _producer: RingProducer<'a>,
    /// The consumer side.
    pub(crate) consumer: RingConsumer<'a>,
    _bh: BhDisabled,
}

/// `__ptr_ring_produce()` on `slots`, whose producer index is `producer`
/// (the caller holds the producer lock).
#[inline(always)]
fn produce_locked(
    slots: &[AtomicPtr<bindings::sk_buff>],
    producer: &mut usize,
    skb: SkBuff,
) -> core::result::Result<(), SkBuff> {
    let i = *producer;
    match slots.get(i) {
        Some(slot) if slot.load(Ordering::Acquire).is_null() => {
            // INVARIANT: The slot now owns the skb.
            slot.store(skb.into_raw(), Ordering::Release);
            *producer = next(i, slots.len());
            Ok(())
        }
        _ => Err(skb),
    }
}

// SAFETY: Every field is accessed under the lock the invariants name, and
// skbs may be freed from any thread.
unsafe impl Send for SkbRing {}
// SAFETY: As above.
unsafe impl Sync for SkbRing {}

/// Storage for an [`SkbRing`], allocated outside its locks.
pub(crate) struct RingSlots(KVVec<AtomicPtr<bindings::sk_buff>>);

impl RingSlots {
    /// The most slots a ring can have: `ptr_ring`'s limit
    /// (`KMALLOC_MAX_SIZE / sizeof(void *)`), beyond which tun.c's
    /// `ptr_ring_resize` fails with `ENOMEM`.
    pub(crate) const MAX: usize =
        bindings::RTUN_KMALLOC_MAX_SIZE as usize / core::mem::size_of::<*mut u8>();

    /// Room for `len` packets, from `kvmalloc` (tun.c's `ptr_ring` uses
    /// `kvmalloc_array`: a large ring falls back to vmalloc instead of
    /// failing for want of contiguous memory). `len` 0 is a ring that
    /// holds nothing, as `ptr_ring` of size 0: every packet is dropped.
    pub(crate) fn new(len: usize) -> Result<Self> {
        if len > Self::MAX {
            return Err(ENOMEM);
        }
        let mut v = KVVec::with_capacity(len, GFP_KERNEL)?;
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
            producer <- Lock::new(0, kernel::c_str!("SkbRing::producer"), kernel::static_lock_class!()),
            consumer <- Lock::new(
                ConsumerState { index: 0, cons_cnt: 0 },
                kernel::c_str!("SkbRing::consumer"),
                kernel::static_lock_class!()
            ),
            slots: UnsafeCell::new(KVVec::new()),
        })
    }

    /// The slots, while the caller holds either lock.
    ///
    /// # Safety
    ///
    /// The caller holds this ring's producer or consumer lock for `'a`.
    unsafe fn slots<'a>(&'a self) -> &'a [AtomicPtr<bindings::sk_buff>] {
        // SAFETY: Replaced only with both locks held (type invariants), and
        // the caller holds one.
        unsafe { &*self.slots.get() }
    }

    /// `ptr_ring_produce()` from a context with bottom halves off; gives
    /// the packet back when the ring is full.
    #[inline]
    pub(crate) fn produce(&self, skb: SkBuff, _bh: &BhOff) -> core::result::Result<(), SkBuff> {
        let mut producer = self.producer.lock();
        // SAFETY: The producer lock is held.
        let slots = unsafe { self.slots() };
        produce_locked(slots, &mut producer, skb)
    }

    /// Takes the producer lock (`spin_lock(&r->producer_lock)`) from a
    /// context with bottom halves off.
    #[inline(always)]
    pub(crate) fn lock_producer(&self, _bh: &BhOff) -> RingProducer<'_> {
        RingProducer {
            ring: self,
            index: self.producer.lock(),
        }
    }

    /// Takes the consumer lock (`spin_lock(&r->consumer_lock)`), from
    /// process context.
    #[inline(always)]
    pub(crate) fn lock_consumer(&self) -> RingConsumer<'_> {
        RingConsumer {
            ring: self,
            state: self.consumer.lock(),
        }
    }

    /// Takes both locks, consumer then producer, with bottom halves off.
    pub(crate) fn lock_both(&self) -> RingLocked<'_> {
        let bh = BhDisabled::new();
        let consumer = self.lock_consumer();
        let producer = RingProducer {
            ring: self,
            index: self.producer.lock(),
        };
        RingLocked {
            _producer: producer,
            consumer,
            _bh: bh,
        }
    }

    /// `ptr_ring_consume()`, from process context.
    #[inline]
    pub(crate) fn consume(&self) -> Option<SkBuff> {
        self.lock_consumer().consume()
    }

    /// `ptr_ring_empty()`.
    pub(crate) fn is_empty(&self) -> bool {
        self.lock_consumer().is_empty()
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
        let old = {
            // Lock order as ptr_ring's: consumer, then producer with bottom
            // halves off.
            let mut consumer = self.consumer.lock();
            let _bh = BhDisabled::new();
            let mut producer = self.producer.lock();
            // SAFETY: Both locks are held: the slots are ours to replace.
            let old = unsafe { &mut *self.slots.get() };
            let mut kept = 0;
            for i in walk(consumer.index, old.len()) {
                let p = old[i].swap(ptr::null_mut(), Ordering::Relaxed);
                if p.is_null() {
                    continue;
                }
                match resize_slot(kept, new.len()) {
                    Some(j) => {
                        new[j].store(p, Ordering::Relaxed);
                        kept += 1;
                    }
                    // Left in the old storage, to be freed below.
                    None => old[i].store(p, Ordering::Relaxed),
                }
            }
            consumer.index = 0;
            *producer = producer_after_resize(kept, new.len());
            core::mem::swap(old, &mut new);
            new
        };
        free_slots(old)
    }
}

/// Frees the skbs left in `slots`; returns how many there were.
fn free_slots(slots: KVVec<AtomicPtr<bindings::sk_buff>>) -> u64 {
    let mut n = 0;
    for slot in slots.iter() {
        let p = slot.load(Ordering::Relaxed);
        if !p.is_null() {
            // SAFETY: A non-null slot owned its skb; nothing else refers to
            // this storage any more.
            drop(unsafe { SkBuff::from_raw(p) });
            n += 1;
        }
    }
    n
}

#[pinned_drop]
impl PinnedDrop for SkbRing {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Dropping: no other reference exists, so no lock is needed.
        let slots = unsafe { core::mem::replace(&mut *self.slots.get(), KVVec::new()) };
        free_slots(slots);
    }
}
