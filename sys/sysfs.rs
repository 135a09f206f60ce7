// SPDX-License-Identifier: GPL-2.0

//! A driver's own read-only sysfs attributes of its net devices
//! (`/sys/class/net/<dev>/<name>`, tun.c's `tun_attr_group`): each a
//! [`DeviceAttributeOps`] the driver implements, turned into a `device_attribute`
//! at compile time ([`DeviceAttributeVTable`]), listed in an [`AttrList`] and
//! grouped in an [`AttrGroup`] that device set-up installs
//! (`DevSetup::set_sysfs_group`). Typed by the devices' private
//! area `P`, so a group can only be installed on devices its `show`s can
//! read.

use super::netdev::device::NetDevice;
use super::{zeroed, ZeroIsValid};
use crate::bindings;
use core::marker::PhantomData;
use core::ptr;
use kernel::prelude::*;
use kernel::types::Opaque;

/// The text of one attribute: at most a page, as `sysfs_emit()` allows.
pub(crate) struct SysfsBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl core::fmt::Write for SysfsBuf<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(core::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A read-only attribute of devices holding a `Priv`.
pub(crate) trait DeviceAttributeOps: 'static {
    /// The private area of the devices.
    type Priv: 'static;
    /// Writes the attribute's text.
    fn show(dev: &NetDevice<Self::Priv>, out: &mut SysfsBuf<'_>) -> core::fmt::Result;
}

/// A `device_attribute` (mode 0444) built from a [`DeviceAttributeOps`]: a
/// `static` of the driver's.
pub(crate) struct DeviceAttributeVTable<P>(Opaque<bindings::device_attribute>, PhantomData<P>);

// SAFETY: `DeviceAttributeVTable` has no method that reads or writes the
// `device_attribute`: its address goes into an [`AttrList`] only, which
// sysfs reads once the group is installed. `P` is only a type tag.
unsafe impl<P> Sync for DeviceAttributeVTable<P> {}

// SAFETY: `ZeroIsValid` for the attribute: a name pointer, a mode, flags,
// a lock key pointer and optional function pointers.
unsafe impl ZeroIsValid for bindings::device_attribute {}
// SAFETY: Pointers, optional function pointers and integers.
unsafe impl ZeroIsValid for bindings::attribute_group {}

impl<P> DeviceAttributeVTable<P> {
    /// The attribute `name`, shown by `T`.
    pub(crate) const fn new<T: DeviceAttributeOps<Priv = P>>(name: &'static CStr) -> Self {
        let mut a: bindings::device_attribute = zeroed();
        a.attr.name = crate::sys::compat::cstr_ptr(name).cast();
        a.attr.mode = bindings::RTUN_S_IRUGO;
        crate::sys::compat::device_attribute_show!(a) = Some(show::<T>);
        Self(Opaque::new(a), PhantomData)
    }
}

/// `device_attribute.show`.
///
/// # Safety
///
/// Called by sysfs on a net device holding a `T::Priv` (only
/// `DevSetup::<T::Priv>::set_sysfs_group` installs the group), with
/// a page-sized buffer. Sysfs removes the attributes, waiting for readers,
/// before the device's private area is dropped.
unsafe extern "C" fn show<T: DeviceAttributeOps>(
    d: *mut bindings::device,
    _attr: *mut bindings::device_attribute,
    buf: *mut core::ffi::c_char,
) -> isize {
    // SAFETY: As above: the device embeds `d`, and `buf` is a page.
    let (dev, buf) = unsafe {
        (
            NetDevice::<T::Priv>::from_raw(bindings::to_net_dev(d)),
            core::slice::from_raw_parts_mut(buf.cast::<u8>(), bindings::RTUN_PAGE_SIZE as usize),
        )
    };
    let mut out = SysfsBuf { buf, len: 0 };
    match T::show(dev, &mut out) {
        Ok(()) => out.len as isize,
        Err(_) => EINVAL.to_errno() as isize,
    }
}

/// A NULL-terminated list of attributes of devices holding a `P`: a
/// `static` of the driver's, `N` being the attributes plus one.
pub(crate) struct AttrList<P, const N: usize>([*mut bindings::attribute; N], PhantomData<P>);

// SAFETY: Pointers to static attributes, read by sysfs.
unsafe impl<P, const N: usize> Sync for AttrList<P, N> {}

impl<P, const N: usize> AttrList<P, N> {
    /// The list of `attrs`, whose last entry must be `None` (checked at
    /// compile time) and no other.
    pub(crate) const fn new(attrs: [Option<&'static DeviceAttributeVTable<P>>; N]) -> Self {
        let mut list = [ptr::null_mut(); N];
        let mut i = 0;
        while i < N {
            match attrs[i] {
                // CAST: `attr` is the first field of `device_attribute`.
                Some(a) => {
                    assert!(i + 1 < N, "the last entry must be None");
                    list[i] = a.0.get().cast();
                }
                None => assert!(i + 1 == N, "only the last entry may be None"),
            }
            i += 1;
        }
        Self(list, PhantomData)
    }
}

/// An `attribute_group` of devices holding a `P`: a `static`.
pub(crate) struct AttrGroup<P>(Opaque<bindings::attribute_group>, PhantomData<P>);

// SAFETY: `AttrGroup` has no method that reads or writes the
// `attribute_group`: its address goes to the device's `sysfs_groups`
// only, which sysfs reads. `P` is only a type tag.
unsafe impl<P> Sync for AttrGroup<P> {}

impl<P> AttrGroup<P> {
    /// The unnamed group (attributes directly in the device's directory)
    /// of `list`.
    pub(crate) const fn new<const N: usize>(list: &'static AttrList<P, N>) -> Self {
        let mut g: bindings::attribute_group = zeroed();
        crate::sys::compat::attribute_group_attrs!(g) = list.0.as_ptr().cast_mut();
        Self(Opaque::new(g), PhantomData)
    }

    pub(super) fn as_ptr(&self) -> *const bindings::attribute_group {
        self.0.get()
    }
}
