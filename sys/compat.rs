// SPDX-License-Identifier: GPL-2.0

//! What differs between the kernels rust_tun builds for, 6.12 and 7.3, on
//! the Rust side: the one place that names a kernel version (`Kbuild` sets
//! the `rtun_kernel` cfg from the tree's `VERSION.PATCHLEVEL` and refuses
//! any other kernel). The C side's differences are in `helpers/`, under
//! `LINUX_VERSION_CODE`; everything else builds unchanged on both.
//!
//! The differences here are the `kernel` crate's, between 6.12 and 7.3:
//! - `module!`'s author key (`author:` on 6.12, `authors: [..]` on 7.3):
//!   [`module_compat!`];
//! - C strings: 6.12's own `kernel::str::CStr`, 7.3's `core::ffi::CStr`
//!   whose `as_char_ptr` (the `CStrExt` trait's) is not `const`:
//!   [`cstr_ptr`];
//! - user pointers: a plain `usize` on 6.12, the `UserPtr` newtype on 7.3:
//!   [`user_slice`];
//! - `lock::Backend` requires `try_lock` and `assert_is_held` on 7.3:
//!   [`backend_since_7_3!`] wraps the two methods, which 6.12's trait has
//!   not;
//! - `static_lock_class!()` returns a `Pin` on 7.3: [`static_lock_class_ref!`];
//! - running a `PinInit` in place: [`pin_init_in_place`];
//! - the allocators take a NUMA node on 7.3: [`kvmalloc`];
//! - bindgen's view of C unions that 7.3 added around fields
//!   (`device_attribute.show`, `attribute_group.attrs`):
//!   [`device_attribute_show!`], [`attribute_group_attrs!`];
//! - `rtnl_link_ops.newlink`'s arguments (7.3: `rtnl_newlink_params`):
//!   [`define_newlink!`].
//!
//! What tun.c itself does differently per kernel is the driver's
//! (`kver.rs`).

/// The kernel series this build is for, as `Kbuild` set it.
#[cfg(rtun_kernel = "6.12")]
pub(crate) const KERNEL: &str = "6.12";
/// The kernel series this build is for, as `Kbuild` set it.
#[cfg(rtun_kernel = "7.3")]
pub(crate) const KERNEL: &str = "7.3";

use core::alloc::Layout;
use core::ptr::NonNull;
use kernel::alloc::{allocator::KVmalloc, AllocError, Allocator};
use kernel::prelude::*;

/// A C string: 6.12's `kernel::str::CStr`, 7.3's `core::ffi::CStr` (which
/// 7.3's `kernel::str` re-exports).
use kernel::str::CStr;

/// `s.as_char_ptr()`, also in a `const` context.
#[cfg(rtun_kernel = "6.12")]
#[inline(always)]
pub(crate) const fn cstr_ptr(s: &CStr) -> *const kernel::ffi::c_char {
    s.as_char_ptr()
}
/// `s.as_char_ptr()`, also in a `const` context.
#[cfg(rtun_kernel = "7.3")]
#[inline(always)]
pub(crate) const fn cstr_ptr(s: &CStr) -> *const kernel::ffi::c_char {
    kernel::str::as_char_ptr_in_const_context(s)
}

/// The user buffer at `addr` (an ioctl's argument), `len` bytes long.
#[cfg(rtun_kernel = "6.12")]
#[inline(always)]
pub(crate) fn user_slice(addr: usize, len: usize) -> kernel::uaccess::UserSlice {
    kernel::uaccess::UserSlice::new(addr, len)
}
/// The user buffer at `addr` (an ioctl's argument), `len` bytes long.
#[cfg(rtun_kernel = "7.3")]
#[inline(always)]
pub(crate) fn user_slice(addr: usize, len: usize) -> kernel::uaccess::UserSlice {
    kernel::uaccess::UserSlice::new(kernel::uaccess::UserPtr::from_addr(addr), len)
}

/// The `lock::Backend` methods that 7.3's trait requires and 6.12's does
/// not have (`try_lock`, `assert_is_held`): kept on 7.3, dropped on 6.12.
#[cfg(rtun_kernel = "7.3")]
macro_rules! backend_since_7_3 {
    ($($t:tt)*) => { $($t)* };
}
/// The `lock::Backend` methods that 7.3's trait requires and 6.12's does
/// not have (`try_lock`, `assert_is_held`): kept on 7.3, dropped on 6.12.
#[cfg(rtun_kernel = "6.12")]
macro_rules! backend_since_7_3 {
    ($($t:tt)*) => {};
}
pub(crate) use backend_since_7_3;

/// `module!` with one author, spelled as the kernel's macro wants it (its
/// arguments as plain token trees: 6.12's `module!` parses raw tokens and
/// does not see through `literal` fragments).
#[cfg(rtun_kernel = "6.12")]
macro_rules! module_compat {
    (type: $t:tt, name: $n:tt, author: $a:tt, description: $d:tt, license: $l:tt $(,)?) => {
        ::kernel::prelude::module! {
            type: $t,
            name: $n,
            author: $a,
            description: $d,
            license: $l,
        }
    };
}
/// `module!` with one author, spelled as the kernel's macro wants it.
#[cfg(rtun_kernel = "7.3")]
macro_rules! module_compat {
    (type: $t:tt, name: $n:tt, author: $a:tt, description: $d:tt, license: $l:tt $(,)?) => {
        ::kernel::prelude::module! {
            type: $t,
            name: $n,
            authors: [$a],
            description: $d,
            license: $l,
        }
    };
}
pub(crate) use module_compat;

/// `static_lock_class!()` as a plain `&'static LockClassKey` (7.3's macro
/// returns it pinned; a static never moves).
#[cfg(rtun_kernel = "6.12")]
macro_rules! static_lock_class_ref {
    () => {
        ::kernel::static_lock_class!()
    };
}
/// `static_lock_class!()` as a plain `&'static LockClassKey` (7.3's macro
/// returns it pinned; a static never moves).
#[cfg(rtun_kernel = "7.3")]
macro_rules! static_lock_class_ref {
    () => {
        ::core::pin::Pin::get_ref(::kernel::static_lock_class!())
    };
}
pub(crate) use static_lock_class_ref;

/// Runs a pin-initialiser in place (`PinInit::__pinned_init` on 6.12,
/// `__init` on 7.3's pin-init crate).
///
/// # Safety
///
/// As the trait method's: `slot` is valid for writes and pinned; on an
/// error it is left uninitialised.
#[inline(always)]
pub(crate) unsafe fn pin_init_in_place<T, E>(
    init: impl PinInit<T, E>,
    slot: *mut T,
) -> Result<(), E> {
    #[cfg(rtun_kernel = "6.12")]
    // SAFETY: The caller's guarantees are the method's.
    let r = unsafe { init.__pinned_init(slot) };
    #[cfg(rtun_kernel = "7.3")]
    // SAFETY: The caller's guarantees are the method's.
    let r = unsafe { init.__init(slot) };
    r
}

/// `kvmalloc()` of `layout` (7.3's allocators also take a NUMA node: any).
#[inline]
pub(crate) fn kvmalloc(
    layout: Layout,
    flags: kernel::alloc::Flags,
) -> Result<NonNull<[u8]>, AllocError> {
    #[cfg(rtun_kernel = "6.12")]
    let r = KVmalloc::alloc(layout, flags);
    #[cfg(rtun_kernel = "7.3")]
    let r = KVmalloc::alloc(layout, flags, kernel::alloc::NumaNode::NO_NODE);
    r
}

/// The place `device_attribute.show` (in an anonymous union on 7.3).
#[cfg(rtun_kernel = "6.12")]
macro_rules! device_attribute_show {
    ($a:expr) => {
        $a.show
    };
}
/// The place `device_attribute.show` (in an anonymous union on 7.3).
#[cfg(rtun_kernel = "7.3")]
macro_rules! device_attribute_show {
    ($a:expr) => {
        $a.__bindgen_anon_1.show
    };
}
pub(crate) use device_attribute_show;

/// The place `attribute_group.attrs` (in an anonymous union on 7.3).
#[cfg(rtun_kernel = "6.12")]
macro_rules! attribute_group_attrs {
    ($g:expr) => {
        $g.attrs
    };
}
/// The place `attribute_group.attrs` (in an anonymous union on 7.3).
#[cfg(rtun_kernel = "7.3")]
macro_rules! attribute_group_attrs {
    ($g:expr) => {
        $g.__bindgen_anon_2.attrs
    };
}
pub(crate) use attribute_group_attrs;

/// Defines `rtnl_link_ops.newlink` as `$name::<D>`, calling `$common::<D>(dev,
/// tb)` with the two arguments every version has (6.12 passes them
/// separately, 7.3 in `struct rtnl_newlink_params`).
#[cfg(rtun_kernel = "6.12")]
macro_rules! define_newlink {
    ($name:ident, $common:ident) => {
        /// `rtnl_link_ops.newlink` (6.12's arguments).
        ///
        /// # Safety
        ///
        /// Called by rtnetlink, as `$common` requires.
        unsafe extern "C" fn $name<D: RtnlLinkOps>(
            _src_net: *mut bindings::net,
            dev: *mut bindings::net_device,
            tb: *mut *mut bindings::nlattr,
            _data: *mut *mut bindings::nlattr,
            _extack: *mut bindings::netlink_ext_ack,
        ) -> core::ffi::c_int {
            // SAFETY: rtnetlink's arguments, as `$common` requires.
            unsafe { $common::<D>(dev, tb) }
        }
    };
}
/// Defines `rtnl_link_ops.newlink` as `$name::<D>`, calling `$common::<D>(dev,
/// tb)` with the two arguments every version has (6.12 passes them
/// separately, 7.3 in `struct rtnl_newlink_params`).
#[cfg(rtun_kernel = "7.3")]
macro_rules! define_newlink {
    ($name:ident, $common:ident) => {
        /// `rtnl_link_ops.newlink` (7.3's arguments).
        ///
        /// # Safety
        ///
        /// Called by rtnetlink, as `$common` requires.
        unsafe extern "C" fn $name<D: RtnlLinkOps>(
            dev: *mut bindings::net_device,
            params: *mut bindings::rtnl_newlink_params,
            _extack: *mut bindings::netlink_ext_ack,
        ) -> core::ffi::c_int {
            // SAFETY: rtnetlink passes valid parameters for the call.
            let tb = unsafe { (*params).tb };
            // SAFETY: rtnetlink's arguments, as `$common` requires.
            unsafe { $common::<D>(dev, tb) }
        }
    };
}
pub(crate) use define_newlink;

/// An initialiser of `()` that may fail with `Error` (a device without
/// private data): 6.12's pin-init takes any value, 7.3's a `Result`.
#[inline(always)]
pub(crate) fn unit_init() -> impl PinInit<(), Error> {
    #[cfg(rtun_kernel = "6.12")]
    let i = ();
    #[cfg(rtun_kernel = "7.3")]
    let i = Ok::<(), Error>(());
    i
}

/// `pin_init_from_closure()`: the kernel crate's on 6.12, the `pin_init`
/// crate's on 7.3.
#[cfg(rtun_kernel = "6.12")]
pub(crate) use kernel::init::pin_init_from_closure;
/// `pin_init_from_closure()`: the kernel crate's on 6.12, the `pin_init`
/// crate's on 7.3.
#[cfg(rtun_kernel = "7.3")]
pub(crate) use pin_init::pin_init_from_closure;

/// `EBADFD`, `EMSGSIZE`, `EOPNOTSUPP` and `EADDRNOTAVAIL`: consts of
/// `kernel::error::code` on 7.3, which 6.12's lacks (`errno_const`
/// makes them there). Reached as `sys::errno::*`.
#[cfg(rtun_kernel = "7.3")]
pub(crate) use kernel::error::code::{EADDRNOTAVAIL, EBADFD, EMSGSIZE, EOPNOTSUPP};

/// `EBADFD`: the file is not attached to a device (7.3's
/// `kernel::error::code::EBADFD`).
#[cfg(rtun_kernel = "6.12")]
pub(crate) const EBADFD: Error = errno_const(crate::bindings::EBADFD);
/// `EMSGSIZE`: a write larger than any frame (7.3's
/// `kernel::error::code::EMSGSIZE`).
#[cfg(rtun_kernel = "6.12")]
pub(crate) const EMSGSIZE: Error = errno_const(crate::bindings::EMSGSIZE);
/// `EOPNOTSUPP` (7.3's `kernel::error::code::EOPNOTSUPP`).
#[cfg(rtun_kernel = "6.12")]
pub(crate) const EOPNOTSUPP: Error = errno_const(crate::bindings::EOPNOTSUPP);
/// `EADDRNOTAVAIL`: not a usable hardware address (7.3's
/// `kernel::error::code::EADDRNOTAVAIL`).
#[cfg(rtun_kernel = "6.12")]
pub(crate) const EADDRNOTAVAIL: Error = errno_const(crate::bindings::EADDRNOTAVAIL);

/// The `Error` of the positive errno `errno`, in a `const` context:
/// 6.12's `kernel::error::code` consts are made by its private
/// `Error::try_from_errno`, and its public `Error::from_errno` is not
/// `const`. An errno out of range fails the build (const evaluation).
#[cfg(rtun_kernel = "6.12")]
const fn errno_const(errno: u32) -> Error {
    assert!(errno >= 1 && errno <= kernel::bindings::MAX_ERRNO);
    let Some(e) = core::num::NonZeroI32::new(-(errno as i32)) else {
        panic!("errno 0");
    };
    // SAFETY: 6.12's `Error` is `struct Error(NonZeroI32)`
    // (rust/kernel/error.rs): one field, and `transmute` checks that it is
    // as large as the whole, so it fills it and the two have the same
    // bytes and the same valid values. `Error`'s invariant
    // (`-MAX_ERRNO <= e < 0`) is checked above.
    unsafe { core::mem::transmute::<core::num::NonZeroI32, Error>(e) }
}

/// Counted references, [`NetDevice`](super::NetDevice)'s for one: the
/// kernel crate's `ARef` and `AlwaysRefCounted`, in `kernel::types` on
/// 6.12 and `kernel::sync::aref` on 7.3.
#[cfg(rtun_kernel = "7.3")]
pub(crate) use kernel::sync::aref::{ARef, AlwaysRefCounted};
/// Counted references, [`NetDevice`](super::NetDevice)'s for one: the
/// kernel crate's `ARef` and `AlwaysRefCounted`, in `kernel::types` on
/// 6.12 and `kernel::sync::aref` on 7.3.
#[cfg(rtun_kernel = "6.12")]
pub(crate) use kernel::types::{ARef, AlwaysRefCounted};
