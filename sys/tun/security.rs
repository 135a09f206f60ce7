// SPDX-License-Identifier: GPL-2.0

//! The LSM hooks of TUN devices (`security_tun_dev_*()`,
//! `include/linux/security.h`): the permission check before a device is
//! created, and a device's security blob ([`TunSecurity`], tun.c's
//! `tun->security`) with the hooks that take it. With
//! `CONFIG_SECURITY_NETWORK` these are the LSM framework's functions (the
//! blob is what the active LSMs asked for, null if none; SELinux checks its
//! `tun_socket` permissions in them); without it they are empty inlines.
//! Either way they are called through the one-line helpers of
//! `helpers/security.c`.

use super::sock::Sock;
use crate::bindings;
use core::ffi::c_void;
use core::ptr;
use kernel::error::to_result;
use kernel::prelude::*;

/// `security_tun_dev_create()`: may the caller create a device? The LSM's
/// errno if not.
pub(crate) fn security_tun_dev_create() -> Result {
    // SAFETY: Process context; the hook takes no arguments.
    to_result(unsafe { bindings::security_tun_dev_create() })
}

/// A device's LSM blob (tun.c's `tun->security`): allocated by
/// [`TunSecurity::alloc`], freed when dropped.
///
/// # Invariants
///
/// `Some(p)`: `p` is the blob `security_tun_dev_alloc_security()` gave
/// (null if no LSM wants one), owned here alone. `None`: none was
/// allocated, and the hooks get a null blob, as tun.c's zeroed
/// `tun->security` is before `ndo_init`.
pub(crate) struct TunSecurity(Option<*mut c_void>);

// SAFETY: The blob is the LSM's: its hooks synchronise what they share, and
// it may be freed from any thread.
unsafe impl Send for TunSecurity {}

impl TunSecurity {
    /// No blob yet.
    pub(crate) const fn none() -> Self {
        Self(None)
    }

    /// `security_tun_dev_alloc_security()`: a new blob (the LSM's errno if
    /// it cannot be had).
    pub(crate) fn alloc() -> Result<Self> {
        let mut blob = ptr::null_mut();
        // SAFETY: Process context; `blob` is written on success, left or
        // reset to null on failure (when nothing is ours to free).
        to_result(unsafe { bindings::security_tun_dev_alloc_security(&mut blob) })?;
        // INVARIANT: The blob just allocated, ours.
        Ok(Self(Some(blob)))
    }

    fn blob(&self) -> *mut c_void {
        self.0.unwrap_or(ptr::null_mut())
    }

    /// `security_tun_dev_open()`: may the caller attach to the existing
    /// device (SELinux: relabel it to the caller)?
    pub(crate) fn open(&self) -> Result {
        // SAFETY: Process context; the blob is ours (or null) and alive.
        to_result(unsafe { bindings::security_tun_dev_open(self.blob()) })
    }

    /// `security_tun_dev_attach()`: a file's socket is being attached to
    /// the device (SELinux: the socket takes the device's label).
    pub(crate) fn attach(&self, sock: &Sock) -> Result {
        // SAFETY: Process context; the socket is live (`sock` holds it) and
        // the blob ours (or null) and alive.
        to_result(unsafe { bindings::security_tun_dev_attach(sock.sk(), self.blob()) })
    }

    /// `security_tun_dev_attach_queue()`: may the caller re-attach a
    /// detached queue (`TUNSETQUEUE`)?
    pub(crate) fn attach_queue(&self) -> Result {
        // SAFETY: Process context; the blob is ours (or null) and alive.
        to_result(unsafe { bindings::security_tun_dev_attach_queue(self.blob()) })
    }
}

impl Drop for TunSecurity {
    /// `security_tun_dev_free_security()`, if a blob was allocated.
    fn drop(&mut self) {
        if let Some(blob) = self.0 {
            // SAFETY: Our blob (type invariants), freed once: it goes with
            // `self`.
            unsafe { bindings::security_tun_dev_free_security(blob) };
        }
    }
}
