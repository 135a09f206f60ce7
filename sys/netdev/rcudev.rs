// SPDX-License-Identifier: GPL-2.0

//! [`RcuDev`], a device pointer that readers take references from under
//! RCU (`tun_file->tun`), and [`InUninit`], the proof that a device is in
//! its `ndo_uninit`, which lets one be unpublished without a grace period.

use super::device::NetDevice;
use crate::bindings;
use crate::sys::compat::ARef;
use crate::sys::rcu;
use crate::sys::sync::lock::synchronize_net;
use crate::sys::sync::rtnl::Rtnl;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;

/// A device pointer that readers take references from under RCU
/// (`tun_file->tun` in tun.c).
///
/// While a device is published here the `RcuDev` holds a reference on it
/// (`dev_hold`), given back when it is unpublished: a device cannot be
/// freed while an `RcuDev` points at it, whatever the driver does. A driver
/// that forgets to unpublish a device makes its unregistration wait
/// ("unregister_netdevice: waiting for ..."): a bug, not a use-after-free.
/// (tun.c's `tfile->tun` holds no reference; it relies on `tun_detach_all()`
/// clearing every pointer in `ndo_uninit`, which the driver still does.)
/// Dropping an `RcuDev` that still publishes a device leaks the reference.
///
/// Only registered devices are published ([`RcuDev::publish`]): one that never
/// was can be freed at once, whatever its references.
pub(crate) struct RcuDev<P>(AtomicPtr<bindings::net_device>, PhantomData<P>);

/// A device whose `ndo_uninit` is running in this rtnl section
/// ([`NetDeviceOps::uninit`](super::NetDeviceOps::uninit)'s argument, made only
/// by its trampoline): unregistration's `synchronize_net()` comes after
/// it, before the device can be freed, so unpublishing it here needs no
/// grace period of its own ([`RcuDev::unpublish_uninit`]). (On a failed
/// registration's `ndo_uninit` the device was never registered, so never
/// published.)
pub(crate) struct InUninit<'g, P>(&'g NetDevice<P>);

impl<'g, P> InUninit<'g, P> {
    /// # Safety
    ///
    /// `dev`'s `ndo_uninit` is running, under rtnl, for `'g`.
    pub(super) unsafe fn new(dev: &'g NetDevice<P>) -> Self {
        Self(dev)
    }

    /// The device.
    pub(crate) fn dev(&self) -> &'g NetDevice<P> {
        self.0
    }
}

impl<P> core::ops::Deref for InUninit<'_, P> {
    type Target = NetDevice<P>;
    fn deref(&self) -> &NetDevice<P> {
        self.0
    }
}

impl<P> RcuDev<P> {
    /// No device.
    pub(crate) const fn null() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()), PhantomData)
    }

    /// `tun_get()`: a counted reference to the device, if any.
    #[inline]
    pub(crate) fn get(&self) -> Option<ARef<NetDevice<P>>> {
        let _rcu = rcu::read_lock();
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: `p` was read inside `_rcu`. While it is published the
        // `RcuDev`'s reference keeps the device; once it is unpublished,
        // `clear` gives that reference back only when a grace period will
        // pass before the device can be freed (see there). Either way the
        // device outlives `_rcu`, which spans the `dev_hold`; from there
        // our reference keeps it.
        (!p.is_null()).then(|| unsafe { NetDevice::from_raw(p) }.hold())
    }

    /// The device, under rtnl, for as long as the token is borrowed: an
    /// unpublish ([`RcuDev::clear`]) needs the token mutably, so it cannot
    /// give back the reference that keeps the device while this one is
    /// used (a device unregistered in an earlier section is freed by
    /// `netdev_run_todo()`, without rtnl, as soon as its last reference
    /// goes). [`NetDevice::hold`] keeps it longer.
    pub(crate) fn get_rtnl<'r>(&self, _rtnl: &'r Rtnl<'_>) -> Option<&'r NetDevice<P>> {
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: Devices are published and unpublished under rtnl with
        // the token mutably borrowed, so a pointer read under rtnl is of a
        // device this `RcuDev` holds a reference on while `'r` borrows the
        // token.
        (!p.is_null()).then(|| unsafe { NetDevice::from_raw(p) })
    }

    /// Whether a device is set (a racy snapshot, for the data path).
    pub(crate) fn is_set(&self) -> bool {
        !self.0.load(Ordering::Relaxed).is_null()
    }

    /// Publishes `dev`, taking a reference on it, in place of the device
    /// published before ([`RcuDev::clear`]). `EINVAL`, and nothing
    /// changes, if `dev` is not registered: one that never was can be
    /// freed at once, references or not, and one past its `ndo_uninit`
    /// would never be unpublished.
    pub(crate) fn publish(&self, dev: &NetDevice<P>, rtnl: &mut Rtnl<'_>) -> Result {
        if !dev.is_registered() {
            return Err(EINVAL);
        }
        // SAFETY: A live device (borrowed); the reference is this
        // `RcuDev`'s while `dev` is published.
        unsafe { bindings::dev_hold(dev.as_ptr()) };
        let old = self.0.swap(dev.as_ptr(), Ordering::AcqRel);
        Self::put_old(old, rtnl);
        Ok(())
    }

    /// Unpublishes the device, giving back its reference. Readers may
    /// still see it until the next grace period (see `get`): the reference
    /// goes at once when the device is registered (unregistration's
    /// `synchronize_net()` after `ndo_uninit` comes before it can be
    /// freed), and after a `synchronize_net()` here otherwise (unpublished
    /// only after its unregistration: may sleep). In `ndo_uninit`,
    /// [`RcuDev::unpublish_uninit`] spares that wait.
    pub(crate) fn clear(&self, rtnl: &mut Rtnl<'_>) {
        let old = self.0.swap(ptr::null_mut(), Ordering::AcqRel);
        Self::put_old(old, rtnl);
    }

    /// Gives back the reference on `old`, a device just unpublished (if
    /// any), once no RCU reader can take a new one from it.
    fn put_old(old: *mut bindings::net_device, _rtnl: &mut Rtnl<'_>) {
        if old.is_null() {
            return;
        }
        // SAFETY: `old` was published, so we hold a reference on it: live.
        if !unsafe { NetDevice::<P>::from_raw(old) }.is_registered() {
            synchronize_net();
        }
        // SAFETY: Gives back the reference taken when `old` was published;
        // no RCU reader that loaded `old` can take a new one after the
        // grace period that comes before the device may be freed.
        unsafe { bindings::dev_put(old) };
    }

    /// Unpublishes the device whose `ndo_uninit` is running, if it is the
    /// one published: its reference goes at once, as unregistration's
    /// `synchronize_net()` comes after `ndo_uninit`. Another device is
    /// left published.
    pub(crate) fn unpublish_uninit(&self, dev: &InUninit<'_, P>, _rtnl: &mut Rtnl<'_>) {
        if self
            .0
            .compare_exchange(
                dev.as_ptr(),
                ptr::null_mut(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            // SAFETY: Gives back the reference taken when `dev` was
            // published; the grace period that comes after `ndo_uninit`
            // (`InUninit`) comes before the device can be freed.
            unsafe { bindings::dev_put(dev.as_ptr()) };
        }
    }
}
