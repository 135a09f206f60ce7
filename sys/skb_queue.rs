// SPDX-License-Identifier: GPL-2.0

//! Queues of packets: [`SkbQueue`] (a `struct sk_buff_head` with its lock,
//! embedded in a C object) and [`SkbList`] (a caller's own list, without
//! locking, for the packets taken off a queue at once).

use super::skb::SkBuff;
use super::sync::lock::BhOff;
use crate::bindings;
use kernel::types::Opaque;

/// A packet queue with its lock (`struct sk_buff_head`), embedded in a C
/// object (for example a socket's `sk_write_queue`).
///
/// # Invariants
///
/// Initialised (`skb_queue_head_init()`); every packet on it is owned by
/// the queue.
#[repr(transparent)]
pub(crate) struct SkbQueue(Opaque<bindings::sk_buff_head>);

impl SkbQueue {
    /// # Safety
    ///
    /// `q` is an initialised queue, alive for `'a`.
    pub(in crate::sys) unsafe fn from_raw<'a>(q: *mut bindings::sk_buff_head) -> &'a Self {
        // SAFETY: `SkbQueue` is transparent over `sk_buff_head`.
        unsafe { &*q.cast() }
    }

    pub(in crate::sys) fn as_ptr(&self) -> *mut bindings::sk_buff_head {
        self.0.get()
    }

    /// `skb_queue_purge()`: frees every packet on the queue.
    pub(crate) fn purge(&self) {
        // SAFETY: An initialised queue (type invariants); `skb_queue_purge()`
        // takes its lock.
        unsafe { bindings::skb_queue_purge(self.as_ptr()) }
    }

    /// Takes every packet off the queue at once (`spin_lock()`,
    /// `skb_queue_splice_tail_init()`), lets `f` consume what it wants of
    /// them from the front, and puts what it left back at the front of the
    /// queue (`skb_queue_splice()`), ahead of what came meanwhile: a NAPI
    /// poll's batch (tun.c's `tun_napi_receive()`). Bottom halves are off
    /// (`_bh`), as the queue's writers lock it with them off.
    #[inline(always)]
    pub(crate) fn splice_and<R>(&self, _bh: &BhOff, f: impl FnOnce(&mut SkbList) -> R) -> R {
        let mut list = core::mem::MaybeUninit::<bindings::sk_buff_head>::uninit();
        let process = list.as_mut_ptr();
        let q = self.as_ptr();
        // SAFETY: The queue is initialised (type invariants).
        let lock = unsafe { core::ptr::addr_of_mut!((*q).lock) };
        // SAFETY: The queue's lock is taken with bottom halves off (`_bh`),
        // as its writers take it with `spin_lock_bh()`; `process` is a
        // local list head, initialised before use, which takes the
        // packets' ownership.
        unsafe {
            bindings::__skb_queue_head_init(process);
            bindings::spin_lock(lock);
            bindings::skb_queue_splice_tail_init(q, process);
            bindings::spin_unlock(lock);
        }
        // SAFETY: `SkbList` is transparent over `sk_buff_head`; the list is
        // initialised, ours alone, and lent to `f` only.
        let r = f(unsafe { &mut *process.cast::<SkbList>() });
        // SAFETY: As above; what `f` left goes back to the queue, so the
        // local list is empty when it goes out of scope.
        unsafe {
            if bindings::skb_queue_empty(process) == 0 {
                bindings::spin_lock(lock);
                bindings::skb_queue_splice(process, q);
                bindings::spin_unlock(lock);
            }
        }
        r
    }
}

/// A caller's own list of packets, not locked (lent by
/// [`SkbQueue::splice_and`]).
///
/// # Invariants
///
/// An initialised list head that only the holder of the `&mut` touches;
/// its packets are owned by the list.
#[repr(transparent)]
pub(crate) struct SkbList(bindings::sk_buff_head);

impl SkbList {
    /// `__skb_dequeue()`: the packet at the front, now the caller's.
    #[inline(always)]
    pub(crate) fn dequeue(&mut self) -> Option<SkBuff> {
        // SAFETY: An initialised list of ours (type invariants); the packet
        // taken off it is owned by the caller from now on.
        let skb = unsafe { bindings::__skb_dequeue(&mut self.0) };
        // SAFETY: Non-null: an skb of the list, whose ownership we take.
        (!skb.is_null()).then(|| unsafe { SkBuff::from_raw(skb) })
    }
}
