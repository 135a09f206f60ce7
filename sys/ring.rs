// SPDX-License-Identifier: GPL-2.0

//! [`TxRing`], the per-queue transmit ring: the kernel's `struct ptr_ring`
//! (`include/linux/ptr_ring.h`), as tun.c's `tfile->tx_ring` is, so that
//! vhost-net can consume it directly (`tun_get_tx_ring()`: see
//! `sys/vhost.rs`). Every operation is ptr_ring.h's own, through a
//! one-line helper (`helpers/ptr_ring.c`); the entries are [`TunPtr`]s,
//! owned `sk_buff`s and `xdp_frame`s in tun's encoding (`TUN_XDP_FLAG`,
//! `<linux/if_tun.h>`), which vhost-net decodes too.

use super::skb::SkBuff;
use super::sync::lock::{BhDisabled, BhOff};
use super::xdp::XdpFrame;
use crate::bindings;
use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A bounded FIFO of owned packets ([`TunPtr`]): a `struct ptr_ring`,
/// with tun.c 7.3's `tfile->cons_cnt` beside it.
///
/// The producer lock is taken with bottom halves off (the transmit path's
/// [`BhOff`], or [`BhDisabled`] from process context); the consumer lock
/// in process context, by us and by vhost-net (`vhost_net_buf_produce()`),
/// so the reader pays no bottom-half toggling -- tun.c's discipline.
///
/// # Invariants
///
/// `ring` was initialised by `ptr_ring_init()` and is cleaned up once, on
/// drop. Every entry is an owned [`TunPtr`] in tun's encoding. `cons_cnt` is accessed only
/// with the consumer lock held ("Protected by tx_ring.consumer_lock").
#[pin_data(PinnedDrop)]
pub(crate) struct TxRing {
    #[pin]
    ring: Opaque<bindings::ptr_ring>,
    cons_cnt: UnsafeCell<u32>,
}

// SAFETY: The ring is the kernel's, used under its own locks; `cons_cnt`
// under the consumer lock (type invariants); skbs may be freed anywhere.
unsafe impl Send for TxRing {}
// SAFETY: As above.
unsafe impl Sync for TxRing {}

/// An entry of a [`TxRing`]: a packet the stack transmitted, or a frame
/// redirected to the device (`ndo_xdp_xmit`) or sent back by its program
/// (`XDP_TX`).
pub(crate) enum TunPtr {
    /// An skb.
    Skb(SkBuff),
    /// An `xdp_frame` (`tun_is_xdp_frame()`).
    Frame(XdpFrame),
}

impl TunPtr {
    /// Decodes an entry (`tun_is_xdp_frame()`, `tun_ptr_to_xdp()`).
    ///
    /// # Safety
    ///
    /// `p` is an entry of a [`TxRing`] that left it, given up.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(p: NonNull<c_void>) -> Self {
        // SAFETY: An owned entry in tun's encoding (the caller).
        unsafe {
            if bindings::tun_is_xdp_frame(p.as_ptr()) {
                let f = bindings::tun_ptr_to_xdp(p.as_ptr());
                TunPtr::Frame(XdpFrame::from_raw(NonNull::new_unchecked(f)))
            } else {
                TunPtr::Skb(SkBuff::from_raw(p.as_ptr().cast()))
            }
        }
    }
}

/// `tun_ptr_free()` for the entries `ptr_ring_cleanup()` destroys.
///
/// # Safety
///
/// `ptr` is null or an entry of a [`TxRing`], given up.
unsafe extern "C" fn ring_destroy(ptr: *mut c_void) {
    if let Some(p) = NonNull::new(ptr) {
        // SAFETY: Every entry is owned (type invariants), which the ring
        // hands to its destructor and forgets.
        drop(unsafe { TunPtr::from_raw(p) });
    }
}

/// `tun_ptr_free()` for the entries a resize's `__ptr_ring_swap_queue()`
/// has no room for: also counts them in [`RESIZE_DROPS`].
///
/// # Safety
///
/// As [`ring_destroy`].
unsafe extern "C" fn ring_resize_destroy(ptr: *mut c_void) {
    RESIZE_DROPS.fetch_add(1, Ordering::Relaxed);
    // SAFETY: As the caller (`__ptr_ring_swap_queue()`) guarantees.
    unsafe { ring_destroy(ptr) };
}

/// Entries `ring_destroy` freed. A resize reads it before and after its
/// swap; resizes run under rtnl, one at a time, so the difference is its
/// own.
static RESIZE_DROPS: AtomicU64 = AtomicU64::new(0);

/// The ring with its consumer lock held (`spin_lock(&r->consumer_lock)`).
///
/// # Invariants
///
/// The consumer lock of `ring` is held for `'a`; released on drop.
pub(crate) struct RingConsumer<'a> {
    ring: &'a TxRing,
}

impl RingConsumer<'_> {
    /// `__ptr_ring_consume()`.
    #[inline]
    pub(crate) fn consume(&mut self) -> Option<TunPtr> {
        // SAFETY: The consumer lock is held (type invariants).
        let p = unsafe { bindings::__ptr_ring_consume(self.ring.raw()) };
        // SAFETY: A non-null entry is owned and left the ring.
        NonNull::new(p).map(|p| unsafe { TunPtr::from_raw(p) })
    }

    /// `__ptr_ring_empty()`.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        // SAFETY: The consumer lock is held (type invariants).
        unsafe { bindings::__ptr_ring_empty(self.ring.raw()) }
    }

    /// `PTR_RING_PEEK_CALL(r, tun_ptr_peek_len)` with the lock held: the
    /// length of the next packet (an skb's with its VLAN tag, a frame's),
    /// 0 if there is none.
    #[inline]
    pub(crate) fn peek_len(&self) -> i32 {
        // SAFETY: The consumer lock is held (type invariants).
        let p = unsafe { bindings::__ptr_ring_peek(self.ring.raw()) };
        if p.is_null() {
            return 0;
        }
        // SAFETY: A non-null entry is live, owned by the ring, and stays
        // in it while we hold the consumer lock: read, not taken.
        unsafe {
            if bindings::tun_is_xdp_frame(p) {
                (*bindings::tun_ptr_to_xdp(p)).len as i32
            } else {
                bindings::__skb_array_len_with_tag(p.cast())
            }
        }
    }

    /// `r->size`.
    #[inline]
    pub(crate) fn size(&self) -> usize {
        // SAFETY: The consumer lock is held (type invariants); `size`
        // changes only with both locks held.
        let size = unsafe { (*self.ring.raw()).size };
        size as usize
    }

    /// tun.c's `tfile->cons_cnt`, which the consumer lock protects.
    #[inline]
    pub(crate) fn cons_cnt(&mut self) -> &mut u32 {
        // SAFETY: The consumer lock is held, and `&mut self` makes this
        // the only reference through this guard.
        unsafe { &mut *self.ring.cons_cnt.get() }
    }
}

impl Drop for RingConsumer<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: We hold the consumer lock (type invariants).
        unsafe { bindings::spin_unlock(self.ring.consumer_lock()) };
    }
}

/// The ring with its producer lock held (`spin_lock(&r->producer_lock)`,
/// bottom halves off).
///
/// # Invariants
///
/// The producer lock of `ring` is held for `'a`; released on drop.
pub(crate) struct RingProducer<'a> {
    ring: &'a TxRing,
}

impl RingProducer<'_> {
    /// `__ptr_ring_produce()`; gives the packet back when the ring is full.
    #[inline(always)]
    pub(crate) fn produce(&mut self, skb: SkBuff) -> core::result::Result<(), SkBuff> {
        let p = skb.into_raw();
        // SAFETY: The producer lock is held (type invariants); the ring
        // owns the skb if this succeeds.
        if unsafe { bindings::__ptr_ring_produce(self.ring.raw(), p.cast()) } == 0 {
            Ok(())
        } else {
            // SAFETY: Refused: the skb is still ours.
            Err(unsafe { SkBuff::from_raw(p) })
        }
    }

    /// `__ptr_ring_produce()` of a frame (`tun_xdp_to_ptr()`); gives it
    /// back when the ring is full.
    #[inline]
    pub(crate) fn produce_frame(&mut self, frame: XdpFrame) -> core::result::Result<(), XdpFrame> {
        let f = frame.into_raw();
        // SAFETY: The producer lock is held (type invariants); the ring
        // owns the frame, encoded, if this succeeds.
        let ret = unsafe {
            bindings::__ptr_ring_produce(self.ring.raw(), bindings::tun_xdp_to_ptr(f.as_ptr()))
        };
        if ret == 0 {
            Ok(())
        } else {
            // SAFETY: Refused: the frame is still ours.
            Err(unsafe { XdpFrame::from_raw(f) })
        }
    }

    /// `__ptr_ring_check_produce()` (7.3): `Ok` if a produce would succeed
    /// now, `EINVAL` for a ring of no slots, `ENOSPC` for a full one.
    #[inline(always)]
    pub(crate) fn check_produce(&self) -> Result {
        // SAFETY: The producer lock is held (type invariants).
        to_result(unsafe { check_produce(self.ring.raw()) })
    }
}

/// `__ptr_ring_check_produce()`, 7.3's.
///
/// # Safety
///
/// The caller holds the producer lock of `r`.
#[cfg(rtun_kernel = "7.3")]
#[inline(always)]
unsafe fn check_produce(r: *mut bindings::ptr_ring) -> core::ffi::c_int {
    // SAFETY: As the caller guarantees.
    unsafe { bindings::__ptr_ring_check_produce(r) }
}

/// 6.12 has no `__ptr_ring_check_produce()`, and no `IFF_BACKPRESSURE`,
/// whose transmit path is its only caller: never called there.
///
/// # Safety
///
/// The caller holds the producer lock of `r`.
#[cfg(rtun_kernel = "6.12")]
#[inline(always)]
unsafe fn check_produce(_r: *mut bindings::ptr_ring) -> core::ffi::c_int {
    -(bindings::EOPNOTSUPP as core::ffi::c_int)
}

impl Drop for RingProducer<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: We hold the producer lock (type invariants).
        unsafe { bindings::spin_unlock(self.ring.producer_lock()) };
    }
}

/// The ring with both its locks held, consumer then producer, bottom
/// halves off (tun.c 7.3: `spin_lock_bh(&r->consumer_lock);
/// spin_lock(&r->producer_lock)`, as `ptr_ring_resize_multiple_bh()`). The
/// fields drop in order: producer, consumer, then bottom halves back on.
pub(crate) struct RingLocked<'a> {
    /// The producer side, held.
    _producer: RingProducer<'a>,
    /// The consumer side.
    pub(crate) consumer: RingConsumer<'a>,
    _bh: BhDisabled,
}

/// Storage for an [`TxRing`], allocated outside its locks
/// (`__ptr_ring_init_queue_alloc()`, `kvmalloc_array` of `len` slots).
///
/// # Invariants
///
/// `queue` is a zeroed allocation of `len` pointers, ours until swapped
/// into a ring, freed with `kvfree` on drop.
pub(crate) struct RingSlots {
    queue: NonNull<*mut c_void>,
    len: usize,
}

impl RingSlots {
    /// Room for `len` packets. `len` 0 is a ring that holds nothing, as a
    /// `ptr_ring` of size 0: every packet is dropped. Beyond ptr_ring's
    /// limit (`KMALLOC_MAX_SIZE / sizeof(void *)`), `ENOMEM` as tun.c's
    /// `ptr_ring_resize`.
    pub(crate) fn new(len: usize) -> Result<Self> {
        let n = u32::try_from(len).map_err(|_| ENOMEM)?;
        if i32::try_from(n).is_err() {
            return Err(ENOMEM);
        }
        // SAFETY: Any size and flags; NULL on failure.
        let q = unsafe { bindings::__ptr_ring_init_queue_alloc(n, bindings::RTUN_GFP_KERNEL) };
        let queue = NonNull::new(q).ok_or(ENOMEM)?;
        // INVARIANT: A fresh zeroed allocation of `len` slots.
        Ok(Self { queue, len })
    }
}

impl Drop for RingSlots {
    fn drop(&mut self) {
        // SAFETY: Ours (type invariants), from kvmalloc.
        unsafe { bindings::kvfree(self.queue.as_ptr().cast()) };
    }
}

// SAFETY: A plain allocation.
unsafe impl Send for RingSlots {}

impl TxRing {
    /// An empty ring with no storage (`ptr_ring_init(0)`, as
    /// `tun_chr_open()`); every produce fails until [`TxRing::resize`].
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        // SAFETY: `slot` is valid for writes; on failure nothing was
        // initialised that needs dropping (`ptr_ring_init` frees nothing
        // it did not allocate), on success every field is.
        let ring = unsafe {
            crate::sys::compat::pin_init_from_closure(
                move |slot: *mut Opaque<bindings::ptr_ring>| {
                    // CAST: `Opaque<T>` is `repr(transparent)` over `T`.
                    to_result(bindings::ptr_ring_init(
                        slot.cast(),
                        0,
                        bindings::RTUN_GFP_KERNEL,
                    ))
                },
            )
        };
        try_pin_init!(Self {
            ring <- ring,
            cons_cnt: UnsafeCell::new(0),
        })
    }

    /// The `struct ptr_ring`: what `tun_get_tx_ring()` hands vhost-net.
    #[inline(always)]
    pub(crate) fn raw(&self) -> *mut bindings::ptr_ring {
        self.ring.get()
    }

    fn consumer_lock(&self) -> *mut bindings::spinlock_t {
        // SAFETY: An initialised ring (type invariants); no reference made.
        unsafe { ptr::addr_of_mut!((*self.raw()).consumer_lock) }
    }

    fn producer_lock(&self) -> *mut bindings::spinlock_t {
        // SAFETY: As in `consumer_lock`.
        unsafe { ptr::addr_of_mut!((*self.raw()).producer_lock) }
    }

    /// `ptr_ring_produce()` from a context with bottom halves off; gives
    /// the packet back when the ring is full.
    #[inline]
    pub(crate) fn produce(&self, skb: SkBuff, _bh: &BhOff) -> core::result::Result<(), SkBuff> {
        let p = skb.into_raw();
        // SAFETY: An initialised ring; bottom halves are off (`_bh`), as
        // the producer lock's nesting in the consumer lock requires.
        if unsafe { bindings::ptr_ring_produce(self.raw(), p.cast()) } == 0 {
            Ok(())
        } else {
            // SAFETY: Refused: the skb is still ours.
            Err(unsafe { SkBuff::from_raw(p) })
        }
    }

    /// Takes the producer lock (`spin_lock(&r->producer_lock)`) from a
    /// context with bottom halves off.
    #[inline(always)]
    pub(crate) fn lock_producer(&self, _bh: &BhOff) -> RingProducer<'_> {
        // SAFETY: An initialised lock.
        unsafe { bindings::spin_lock(self.producer_lock()) };
        // INVARIANT: Locked just above.
        RingProducer { ring: self }
    }

    /// Takes the consumer lock (`spin_lock(&r->consumer_lock)`), from
    /// process context.
    #[inline(always)]
    pub(crate) fn lock_consumer(&self) -> RingConsumer<'_> {
        // SAFETY: An initialised lock.
        unsafe { bindings::spin_lock(self.consumer_lock()) };
        // INVARIANT: Locked just above, released on drop.
        RingConsumer { ring: self }
    }

    /// The consumer side of a ring whose consumer lock the caller already
    /// holds (vhost-net's `tun_wake_queue()` call): never dropped, so the
    /// lock stays the caller's.
    ///
    /// # Safety
    ///
    /// The caller holds this ring's consumer lock for the result's life.
    pub(crate) unsafe fn consumer_held(&self) -> core::mem::ManuallyDrop<RingConsumer<'_>> {
        // INVARIANT: As the caller guarantees; never dropped, not released.
        core::mem::ManuallyDrop::new(RingConsumer { ring: self })
    }

    /// Takes both locks, consumer then producer, with bottom halves off.
    pub(crate) fn lock_both(&self) -> RingLocked<'_> {
        let bh = BhDisabled::new();
        let consumer = self.lock_consumer();
        // SAFETY: An initialised lock, nested in the consumer lock.
        unsafe { bindings::spin_lock(self.producer_lock()) };
        RingLocked {
            // INVARIANT: Locked just above.
            _producer: RingProducer { ring: self },
            consumer,
            _bh: bh,
        }
    }

    /// `ptr_ring_consume()`, from process context.
    #[inline]
    pub(crate) fn consume(&self) -> Option<TunPtr> {
        self.lock_consumer().consume()
    }

    /// `ptr_ring_empty()`.
    pub(crate) fn is_empty(&self) -> bool {
        self.lock_consumer().is_empty()
    }

    /// `tun_peek_len()`'s `PTR_RING_PEEK_CALL(.., tun_ptr_peek_len)`.
    pub(crate) fn peek_len(&self) -> i32 {
        self.lock_consumer().peek_len()
    }

    /// Drops every queued packet (`tun_queue_purge()`); returns how many.
    pub(crate) fn purge(&self) -> u64 {
        let mut n = 0;
        while let Some(entry) = self.consume() {
            drop(entry);
            n += 1;
        }
        n
    }

    /// `ptr_ring_resize()` into `slots` allocated beforehand (as
    /// `ptr_ring_resize_multiple_bh()` allocates every ring's before it
    /// swaps any): `__ptr_ring_swap_queue()` under both locks moves the
    /// queued packets, in order; those that do not fit are dropped.
    /// Returns how many were. Called under rtnl (see [`RESIZE_DROPS`]).
    pub(crate) fn resize(&self, slots: RingSlots) -> u64 {
        let before = RESIZE_DROPS.load(Ordering::Relaxed);
        let slots = core::mem::ManuallyDrop::new(slots);
        let old = {
            let _both = self.lock_both();
            // SAFETY: Both locks are held; `slots.queue` is a zeroed
            // allocation of `slots.len` (< 2^31) slots, which the ring owns
            // from here; it returns the old one, ours to free.
            unsafe {
                bindings::__ptr_ring_swap_queue(
                    self.raw(),
                    slots.queue.as_ptr(),
                    slots.len as i32,
                    bindings::RTUN_GFP_KERNEL,
                    Some(ring_resize_destroy),
                )
            }
        };
        // SAFETY: The old queue left the ring under its locks; nothing
        // refers to it any more.
        unsafe { bindings::kvfree(old.cast()) };
        RESIZE_DROPS.load(Ordering::Relaxed) - before
    }
}

#[pinned_drop]
impl PinnedDrop for TxRing {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Dropping: no other user of the ring exists (vhost-net's
        // reference is a file reference, which keeps us alive); cleaned up
        // once (type invariants).
        unsafe { bindings::ptr_ring_cleanup(self.raw(), Some(ring_destroy)) };
    }
}
