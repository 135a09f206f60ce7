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
    /// `tun_alloc_skb()`: an skb for a `len`-byte write, `prepad` bytes of
    /// headroom, built as tun.c builds it (`sock_alloc_send_pskb()`, which
    /// is `alloc_skb_with_frags()` with the socket's `GFP_KERNEL`): all
    /// linear under a page, else `linear` bytes in the head and the rest in
    /// page fragments of up to `PAGE_ALLOC_COSTLY_ORDER`, so a large write
    /// needs no high-order allocation. May sleep.
    ///
    /// The bytes are not initialised: [`SkBuff::copy_from_iter`] fills
    /// them, and until it has succeeded the skb is only good for dropping.
    pub(crate) fn alloc_for_write(prepad: usize, len: usize, linear: usize) -> Result<Unfilled> {
        let page = bindings::RTUN_PAGE_SIZE as usize;
        let max_frags = bindings::RTUN_MAX_SKB_FRAGS as usize
            * (page << bindings::RTUN_PAGE_ALLOC_COSTLY_ORDER);
        let mut linear = if prepad + len < page {
            len
        } else {
            linear.min(len)
        };
        if len - linear > max_frags {
            linear = len - max_frags;
        }
        let mut err: c_int = 0;
        // SAFETY: Plain allocation; `err` is valid for writes.
        let p = unsafe {
            bindings::alloc_skb_with_frags(
                (prepad + linear) as c_ulong,
                (len - linear) as c_ulong,
                bindings::RTUN_PAGE_ALLOC_COSTLY_ORDER as c_int,
                &mut err,
                bindings::RTUN_GFP_KERNEL,
            )
        };
        let Some(p) = NonNull::new(p) else {
            return Err(Error::from_errno(err));
        };
        // INVARIANT: A fresh skb is ours alone.
        let mut skb = SkBuff(p);
        // SAFETY: A fresh skb with `prepad + linear` bytes of head room and
        // `len - linear` bytes of page fragments: reserve the pad, claim
        // the linear part, account the fragments (the tail of
        // `tun_alloc_skb()`). `data_len` and `len` are `unsigned int`s.
        unsafe {
            bindings::rtun_skb_reserve(p.as_ptr(), prepad as c_int);
            bindings::skb_put(p.as_ptr(), linear as c_uint);
            let frags = (len - linear) as u32;
            skb.write_field::<u32>(bindings::RTUN_SKB_DATA_LEN, frags);
            skb.write_field::<u32>(bindings::RTUN_SKB_LEN, len as u32);
        }
        Ok(Unfilled(skb))
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

    /// Writes a field of the skb at a C `offsetof`.
    ///
    /// # Safety
    ///
    /// `off` must be the offset of a field of type `T` in `struct sk_buff`,
    /// and writing `v` there must keep the skb consistent.
    #[inline(always)]
    unsafe fn write_field<T: Copy>(&mut self, off: core::ffi::c_ulong, v: T) {
        // SAFETY: Valid skb we own; the caller vouches for the rest.
        unsafe {
            ptr::write(
                self.0.as_ptr().cast::<u8>().add(off as usize).cast::<T>(),
                v,
            )
        }
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

    /// `skb->protocol = eth_type_trans(skb, dev)`, after `pskb_may_pull()`
    /// of the Ethernet header; `false` (nothing done) if it cannot be pulled.
    pub(crate) fn eth_type_trans(&mut self, dev: &NetDevice) -> bool {
        if !self.may_pull(ETH_HLEN) {
            return false;
        }
        // SAFETY: Valid skb we own with `ETH_HLEN` linear bytes.
        unsafe {
            let proto = bindings::eth_type_trans(self.0.as_ptr(), dev.as_ptr());
            bindings::rtun_skb_set_protocol(self.0.as_ptr(), proto);
        }
        true
    }

    /// `netif_receive_skb()`: hands the packet to the stack, now, in this
    /// context (bottom halves off, as the receive path needs).
    pub(crate) fn netif_receive_skb(self, _bh: &BhDisabled) {
        let p = core::mem::ManuallyDrop::new(self).0;
        // SAFETY: We own the skb and give it away; bottom halves are off.
        unsafe { bindings::netif_receive_skb(p.as_ptr()) };
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

/// An skb from [`SkBuff::alloc_for_write`] whose bytes are not written yet.
pub(crate) struct Unfilled(SkBuff);

impl Unfilled {
    /// `skb_copy_datagram_from_iter()` of the whole packet: the skb, now
    /// initialised, or `EFAULT` (the skb is dropped).
    pub(crate) fn copy_from_iter(self, from: &mut IovIter) -> Result<SkBuff> {
        let skb = self.0;
        // SAFETY: The skb is ours; `len()` bytes of head and fragments are
        // there to be written; the iterator is valid for the call.
        let err = unsafe {
            bindings::skb_copy_datagram_from_iter(skb.0.as_ptr(), 0, from.0, skb.len() as c_int)
        };
        if err == 0 {
            Ok(skb)
        } else {
            Err(EFAULT)
        }
    }
}

impl SkBuff {
    /// `pskb_may_pull()`: at least `len` bytes in the linear part.
    pub(crate) fn may_pull(&mut self, len: u32) -> bool {
        // SAFETY: Valid skb we own.
        unsafe { bindings::rtun_pskb_may_pull(self.0.as_ptr(), len) }
    }

    /// The first byte of the packet data, if any is linear.
    pub(crate) fn first_byte(&self) -> Option<u8> {
        // SAFETY: `len` and `data_len` are `unsigned int`s, `data` a
        // pointer; `skb_headlen() = len - data_len` bytes at `data` are
        // initialised (a `SkBuff` is always filled).
        unsafe {
            let len: u32 = self.field(bindings::RTUN_SKB_LEN);
            let data_len: u32 = self.field(bindings::RTUN_SKB_DATA_LEN);
            if len == data_len {
                return None;
            }
            let data: *const u8 = self.field(bindings::RTUN_SKB_DATA);
            Some(ptr::read(data))
        }
    }

    /// `skb_reset_network_header()` and `skb_probe_transport_header()`,
    /// as `tun_get_user()` does before handing the packet on.
    pub(crate) fn reset_network_probe_transport(&mut self) {
        // SAFETY: Valid skb we own.
        unsafe {
            bindings::rtun_skb_reset_network_header(self.0.as_ptr());
            bindings::rtun_skb_probe_transport_header(self.0.as_ptr());
        }
    }

    /// `skb_shinfo(skb)`: `skb->head + skb->end` (64-bit: `end` is an offset).
    #[inline(always)]
    fn shinfo(&self) -> *const u8 {
        // SAFETY: `head` is a pointer field, `end` a `sk_buff_data_t`
        // (`unsigned int` with `NET_SKBUFF_DATA_USES_OFFSET`, always so on
        // 64-bit), at their `offsetof`s; the result is the skb's
        // `skb_shared_info`.
        unsafe {
            let head: *const u8 = self.field(bindings::RTUN_SKB_HEAD);
            let end: u32 = self.field(bindings::RTUN_SKB_END);
            head.add(end as usize)
        }
    }

    /// `skb_orphan_frags_rx()`: pages a zerocopy sender lent us are copied
    /// and the sender's completion runs now, not when a reader gets round
    /// to the packet. `ENOMEM` if the copy fails (the caller drops).
    #[inline(always)]
    pub(crate) fn orphan_frags_rx(&mut self) -> Result {
        // SAFETY: `flags` is a `__u8` of `skb_shared_info`; `skb_zcopy()`
        // tests `SKBFL_ZEROCOPY_ENABLE` in it, inline as in C.
        let flags = unsafe { ptr::read(self.shinfo().add(bindings::RTUN_SHINFO_FLAGS as usize)) };
        if flags & bindings::RTUN_SKBFL_ZEROCOPY_ENABLE as u8 == 0 {
            return Ok(());
        }
        // SAFETY: Valid skb we own; the gfp of `ndo_start_xmit` context.
        let err = unsafe { bindings::skb_copy_ubufs(self.0.as_ptr(), bindings::RTUN_GFP_ATOMIC) };
        if err == 0 {
            Ok(())
        } else {
            Err(ENOMEM)
        }
    }

    /// `skb_tx_timestamp()`: the software transmit timestamp a socket may
    /// have asked for (before `skb_orphan()`, which forgets the socket).
    #[inline(always)]
    pub(crate) fn tx_timestamp(&mut self) {
        #[cfg(CONFIG_NETWORK_PHY_TIMESTAMPING)]
        // SAFETY: Valid skb we own.
        unsafe {
            bindings::skb_clone_tx_timestamp(self.0.as_ptr())
        };
        // SAFETY: `tx_flags` is a `__u8` of `skb_shared_info`, read inline
        // as C's `skb_tx_timestamp()` does.
        let tx_flags =
            unsafe { ptr::read(self.shinfo().add(bindings::RTUN_SHINFO_TX_FLAGS as usize)) };
        if tx_flags & bindings::RTUN_SKBTX_SW_TSTAMP as u8 != 0 {
            // SAFETY: Valid skb we own; no hardware time.
            unsafe { bindings::skb_tstamp_tx(self.0.as_ptr(), ptr::null_mut()) };
        }
    }

    /// `nf_reset_ct()`: the packet leaves the host; it keeps no conntrack
    /// reference (without `CONFIG_NF_CONNTRACK` there is none to drop).
    #[inline(always)]
    pub(crate) fn nf_reset_ct(&mut self) {
        #[cfg(CONFIG_NF_CONNTRACK)]
        // SAFETY: Valid skb we own.
        unsafe {
            bindings::rtun_nf_reset_ct(self.0.as_ptr())
        };
    }

    /// `skb_tx_error()` then `kfree_skb()`: a transmit drop; a zerocopy
    /// sender learns that its data did not go out.
    pub(crate) fn tx_error_drop(self) {
        // SAFETY: Valid skb we own (freed right after by `drop`).
        unsafe { bindings::skb_tx_error(self.0.as_ptr()) };
        drop(self);
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

/// `spin_lock()`: on x86_64 without `CONFIG_PREEMPT_RT` spinlocks are out
/// of line (`!CONFIG_INLINE_SPIN_LOCK`; `tun.rs` refuses other
/// configurations), so C's inline `spin_lock()` is a call of
/// `_raw_spin_lock(&lock->rlock)`: make the same call rather than go
/// through the `kernel` crate's helper.
///
/// # Safety
///
/// `lock` is an initialised spinlock; the caller follows its context rules.
#[inline(always)]
unsafe fn spin_lock(lock: *mut kernel::bindings::spinlock_t) {
    // CAST: `rlock` is the first member of `spinlock_t` without PREEMPT_RT.
    // SAFETY: As the caller guarantees.
    unsafe { kernel::bindings::_raw_spin_lock(lock.cast()) };
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
    #[cfg(CONFIG_UNINLINE_SPIN_UNLOCK)]
    // CAST: As in `spin_lock`.
    // SAFETY: As the caller guarantees.
    unsafe {
        kernel::bindings::_raw_spin_unlock(lock.cast())
    };
    #[cfg(not(CONFIG_UNINLINE_SPIN_UNLOCK))]
    // SAFETY: As the caller guarantees.
    unsafe {
        kernel::bindings::spin_unlock(lock)
    };
}

/// `ETH_HLEN`.
const ETH_HLEN: u32 = bindings::ETH_HLEN;

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
    slots: UnsafeCell<KVVec<AtomicPtr<bindings::sk_buff>>>,
    producer: UnsafeCell<usize>,
    consumer: UnsafeCell<usize>,
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
            slots: UnsafeCell::new(KVVec::new()),
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
fn free_slots(slots: KVVec<AtomicPtr<bindings::sk_buff>>) -> u64 {
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
        let slots = unsafe { core::mem::replace(&mut *self.slots.get(), KVVec::new()) };
        free_slots(slots);
    }
}
