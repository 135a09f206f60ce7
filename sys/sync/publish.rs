// SPDX-License-Identifier: GPL-2.0

//! Pointers published to lockless readers: [`RcuArc`] (RCU-published,
//! reference-counted), what unpublishing it gives ([`Unpublished`],
//! [`UnpublishedBatch`]), and [`OncePin`] (set at most once).

use super::lock::synchronize_net;
use super::rtnl::Rtnl;
use crate::sys::rcu;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

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

/// Objects unpublished together, each given to `F` after one shared
/// grace period (tun.c's `tun_detach_all()`: one `synchronize_net()` for
/// every queue, then each queue's ring purged). Every object pushed is
/// given to `F` exactly once: at [`UnpublishedBatch::finish`] (or drop),
/// or at once after a grace period of its own if the batch could not
/// grow.
pub(crate) struct UnpublishedBatch<T, F: FnMut(Arc<T>)> {
    /// Unpublished objects, each waiting for the grace period.
    pending: KVec<Arc<T>>,
    /// What becomes of each object once readers can no longer see it.
    f: F,
}

impl<T, F: FnMut(Arc<T>)> UnpublishedBatch<T, F> {
    /// An empty batch with room for `n` objects (allocating is only an
    /// optimisation: without room, each object waits for its own period),
    /// giving each object to `f` once no reader can see it.
    pub(crate) fn with_capacity(n: usize, f: F) -> Self {
        Self {
            pending: KVec::with_capacity(n, GFP_KERNEL).unwrap_or_default(),
            f,
        }
    }

    /// Adds an unpublished object.
    pub(crate) fn push(&mut self, u: Unpublished<T>) {
        if self.pending.reserve(1, GFP_KERNEL).is_err() {
            // No room: this one waits alone, and is done.
            (self.f)(u.into_arc());
            return;
        }
        let mut u = core::mem::ManuallyDrop::new(u);
        // SAFETY: `u` is never used or dropped again; its reference waits
        // in `pending` for `finish` (or drop) to pass a grace period.
        let arc = unsafe { core::mem::ManuallyDrop::take(&mut u.0) };
        // Cannot fail (room was reserved), so `arc` is not dropped here.
        let _ = self.pending.push(arc, GFP_KERNEL);
    }

    /// Waits for one grace period (if anything is pending) and gives every
    /// pending object to `f`.
    pub(crate) fn finish(self) {
        drop(self);
    }
}

impl<T, F: FnMut(Arc<T>)> Drop for UnpublishedBatch<T, F> {
    fn drop(&mut self) {
        let pending = core::mem::take(&mut self.pending);
        if !pending.is_empty() {
            synchronize_net();
        }
        for arc in pending {
            (self.f)(arc);
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

    /// `rcu_access_pointer(slot) == obj`: whether the slot holds `obj` now
    /// (no dereference, so no read-side section or rtnl is needed).
    #[inline(always)]
    pub(crate) fn is(&self, obj: &T) -> bool {
        ptr::eq(self.ptr.load(Ordering::Relaxed).cast_const(), obj)
    }

    /// `rcu_access_pointer(slot) != NULL`: whether the slot holds an
    /// object now (no dereference, so no read-side section is needed).
    #[inline(always)]
    pub(crate) fn is_some(&self) -> bool {
        !self.ptr.load(Ordering::Relaxed).is_null()
    }

    /// `rtnl_dereference()`: the object, while the borrowed token holds rtnl.
    pub(crate) fn get_rtnl<'a>(&'a self, _rtnl: &'a Rtnl<'_>) -> Option<&'a T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: Only `replace`/`take_from` release the reference the slot
        // owns, and they need `&mut Rtnl`: not while `_rtnl` is borrowed
        // here (nor in another thread, which cannot hold rtnl now).
        unsafe { p.as_ref() }
    }

    /// A counted reference to the object, under rtnl: it stays valid when
    /// the token is then lent mutably (to a replacement, say).
    pub(crate) fn get_arc_rtnl(&self, _rtnl: &Rtnl<'_>) -> Option<Arc<T>> {
        let p = NonNull::new(self.ptr.load(Ordering::Acquire))?;
        // SAFETY: As in `get_rtnl`: the slot owns a reference on `p`, which
        // cannot go while `_rtnl` is borrowed. Borrowed, never dropped
        // (`ManuallyDrop`): the slot keeps its reference, the clone is a
        // new one.
        let slot = core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(p.as_ptr()) });
        Some(Arc::clone(&slot))
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
