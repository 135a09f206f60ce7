// SPDX-License-Identifier: GPL-2.0

//! Packets and user buffers: `SkBuff` (an owned `sk_buff`), `IovIter`, and
//! `SkbRing`, the per-queue transmit ring (`ptr_ring` semantics).

use super::*;

// ---------------------------------------------------------------------------
// iov_iter.

/// The user buffer of one `read`/`write`/`readv`/`writev` call.
pub(crate) struct IovIter(pub(super) *mut bindings::iov_iter);

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
pub(crate) struct SkBuff(pub(super) NonNull<bindings::sk_buff>);

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
pub(crate) struct BhOff(pub(super) PhantomData<*mut ()>);

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
