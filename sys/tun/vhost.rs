// SPDX-License-Identifier: GPL-2.0

//! tun.ko's exports for vhost-net (`include/linux/if_tun.h`), served by a
//! driver's files: `tun_get_socket()`, `tun_get_tx_ring()` and, on 7.3,
//! `tun_wake_queue()`, with tun.c's semantics, under names of our own
//! (`rtun_*`) so that rust_tun.ko never clashes with a loaded tun.ko.
//! `rust_tun_vhost.ko` (`vhost/rust_tun_vhost.c`, a few lines of C) gives
//! them tun.ko's names, with `if_tun.h`'s prototypes checked by the
//! compiler: loaded instead of tun.ko, it is what `vhost_net.ko` links
//! against (Documentation/rust_tun.rst, "vhost-net").
//!
//! [`export_tun_files!`] makes the functions for a driver's
//! [`TunFileExports`]; `helpers/exports.c` exports them.

use super::sock::FileSocket;
use super::sockops::SockOps;
use crate::bindings;
use crate::sys::chrdev::FileVTable;
use crate::sys::ring::{RingConsumer, TxRing};

/// A driver whose open files can stand for tun.ko's: each has a socket
/// ([`SockOps`], [`FileSocket`]) and a transmit ring.
pub(crate) trait TunFileExports: SockOps {
    /// The file's transmit ring (`tfile->tx_ring`).
    fn tx_ring(data: &Self::Data) -> &TxRing;

    /// 7.3's `tun_wake_queue()`: the caller consumed `consumed` packets
    /// from the file's ring, whose consumer lock it holds (`ring`).
    fn wake_queue(data: &Self::Data, ring: &mut RingConsumer<'_>, consumed: u32);
}

/// `tun_get_socket()`: the socket behind `file`, `ERR_PTR(-EINVAL)` if it
/// is not one of `fops`' files.
///
/// # Safety
///
/// `file` is a live file the caller holds a reference on; `fops` are
/// `T`'s file operations.
pub(crate) unsafe fn get_socket<T: TunFileExports>(
    file: *mut bindings::file,
    fops: &'static FileVTable,
) -> *mut bindings::socket
where
    T::Data: FileSocket,
{
    // SAFETY: As the caller guarantees.
    match unsafe { fops.data_of::<T>(file) } {
        Ok(data) => FileSocket::socket(data).socket(),
        Err(e) => e.to_ptr(),
    }
}

/// `tun_get_tx_ring()`: the transmit ring behind `file`.
///
/// # Safety
///
/// As [`get_socket`].
pub(crate) unsafe fn get_tx_ring<T: TunFileExports>(
    file: *mut bindings::file,
    fops: &'static FileVTable,
) -> *mut bindings::ptr_ring {
    // SAFETY: As the caller guarantees.
    match unsafe { fops.data_of::<T>(file) } {
        Ok(data) => T::tx_ring(data).raw(),
        Err(e) => e.to_ptr(),
    }
}

/// `tun_wake_queue()`: nothing for a file that is not one of `fops'`.
///
/// # Safety
///
/// As [`get_socket`], and the caller holds the consumer lock of the
/// file's ring (`tun_get_tx_ring()`'s), as vhost-net does.
pub(crate) unsafe fn wake_queue<T: TunFileExports>(
    file: *mut bindings::file,
    fops: &'static FileVTable,
    consumed: core::ffi::c_int,
) {
    // SAFETY: As the caller guarantees.
    let Ok(data) = (unsafe { fops.data_of::<T>(file) }) else {
        return;
    };
    let ring = T::tx_ring(data);
    // SAFETY: The caller holds the consumer lock of this ring.
    let mut consumer = unsafe { ring.consumer_held() };
    T::wake_queue(data, &mut consumer, consumed.max(0) as u32);
}

/// Defines `rtun_get_socket()`, `rtun_get_tx_ring()`, `rtun_ptr_free()`
/// and `rtun_wake_queue()` for the files of `$fops`, the operations of
/// driver `$t` ([`TunFileExports`]); `helpers/exports.c` exports them.
macro_rules! export_tun_files {
    ($t:ty, $fops:path) => {
        /// `tun_get_socket()` for rust_tun's files.
        ///
        /// # Safety
        ///
        /// `file` is a live file the caller holds a reference on.
        #[no_mangle]
        #[allow(unsafe_code)]
        pub unsafe extern "C" fn rtun_get_socket(
            file: *mut $crate::bindings::file,
        ) -> *mut $crate::bindings::socket {
            // SAFETY: As the caller guarantees; `$fops` are `$t`'s.
            unsafe { $crate::sys::tun::vhost::get_socket::<$t>(file, &$fops) }
        }

        /// `tun_get_tx_ring()` for rust_tun's files.
        ///
        /// # Safety
        ///
        /// As `rtun_get_socket`.
        #[no_mangle]
        #[allow(unsafe_code)]
        pub unsafe extern "C" fn rtun_get_tx_ring(
            file: *mut $crate::bindings::file,
        ) -> *mut $crate::bindings::ptr_ring {
            // SAFETY: As the caller guarantees; `$fops` are `$t`'s.
            unsafe { $crate::sys::tun::vhost::get_tx_ring::<$t>(file, &$fops) }
        }

        /// `tun_wake_queue()` for rust_tun's files.
        ///
        /// # Safety
        ///
        /// As `rtun_get_socket`, with the ring's consumer lock held.
        #[no_mangle]
        #[allow(unsafe_code)]
        pub unsafe extern "C" fn rtun_wake_queue(
            file: *mut $crate::bindings::file,
            consumed: ::core::ffi::c_int,
        ) {
            // SAFETY: As the caller guarantees; `$fops` are `$t`'s.
            unsafe { $crate::sys::tun::vhost::wake_queue::<$t>(file, &$fops, consumed) }
        }
    };
}
pub(crate) use export_tun_files;
