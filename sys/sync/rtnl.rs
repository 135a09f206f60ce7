// SPDX-License-Identifier: GPL-2.0

//! The rtnl lock: the branded token [`Rtnl`] and [`RtnlLocked`] data.

use crate::bindings;
use core::cell::UnsafeCell;
use core::marker::PhantomData;

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
    pub(in crate::sys) unsafe fn assume_held<R>(f: impl for<'g> FnOnce(&mut Rtnl<'g>) -> R) -> R {
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
