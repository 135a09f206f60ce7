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
//! And tun.c's, which the driver branches on: [`HAS_BACKPRESSURE`]
//! (7.3's `IFF_BACKPRESSURE` and the transmit-queue wakes that came with
//! it), [`VNET_AFTER_NETWORK_HEADER`], [`VNET_HDR_PAD_ZEROED`],
//! [`VNET_HDR_LEN_BOUND_HAS_PAD`] and [`HAS_UDP_TUNNEL_GSO`] (7.3's
//! `tun_vnet.h`).

/// Whether `tun_get_user()` sets `skb->dev` and the network header before
/// the vnet header's step (7.3: its `virtio_net_hdr_to_skb()` reads both
/// for GSO without NEEDS_CSUM), or after it (6.12: there the step, seeing
/// a network header, would also dissect the protocol, which 6.12's tun.c
/// never lets it do; `fuzz_vs_tun` found writes that 6.12's tun accepts
/// and the 7.3 order refuses).
pub(crate) const VNET_AFTER_NETWORK_HEADER: bool = cfg!(rtun_kernel = "7.3");

/// Whether `tun_put_user()` zero-fills the vnet header's bytes past what
/// it fills, up to `vnet_hdr_sz` (7.3's `__tun_vnet_hdr_put()`:
/// `iov_iter_zero()`), or skips them, leaving what the reader's buffer
/// held (6.12: `iov_iter_advance()`).
pub(crate) const VNET_HDR_PAD_ZEROED: bool = cfg!(rtun_kernel = "7.3");

/// Whether `tun_get_user()` bounds the vnet header's `hdr_len` by what
/// follows the parsed header, its padding included (7.3's
/// `__tun_vnet_hdr_get()`: `iov_iter_count()` before skipping the
/// padding), or by the packet alone (6.12: the length less
/// `vnet_hdr_sz`).
pub(crate) const VNET_HDR_LEN_BOUND_HAS_PAD: bool = cfg!(rtun_kernel = "7.3");

/// Whether this kernel's tun.c has UDP-tunnel GSO (7.3): `TUNSETOFFLOAD`'s
/// `TUN_F_UDP_TUNNEL_GSO(_CSUM)`, `NETIF_F_GSO_UDP_TUNNEL(_CSUM)` in
/// `TUN_USER_FEATURES`, `hw_enc_features`, and the
/// `virtio_net_hdr_v1_hash_tunnel` header. Taken from the uapi
/// (`RTUN_TUN_F_UDP_TUNNEL_GSO` is 0 where the kernel lacks it).
pub(crate) const HAS_UDP_TUNNEL_GSO: bool = crate::bindings::RTUN_TUN_F_UDP_TUNNEL_GSO != 0;

/// The kernel series this build is for, as `Kbuild` set it.
#[cfg(rtun_kernel = "6.12")]
pub(crate) const KERNEL: &str = "6.12";
/// The kernel series this build is for, as `Kbuild` set it.
#[cfg(rtun_kernel = "7.3")]
pub(crate) const KERNEL: &str = "7.3";

/// Whether this kernel's tun.c has `IFF_BACKPRESSURE` (7.3) and with it
/// `tun_force_wake_queue()` at attach, `TUNSETIFF`, a resize and
/// `__tun_detach()`, and `tun_net_close()`'s pass over the ring locks.
/// Taken from the uapi (`RTUN_IFF_BACKPRESSURE` is 0 where the kernel
/// lacks the flag), so it follows the headers, not a version number.
pub(crate) const HAS_BACKPRESSURE: bool = crate::bindings::RTUN_IFF_BACKPRESSURE != 0;

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
// Used by rust_dummy (dummy.rs), not by rust_tun.
#[allow(dead_code)]
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
