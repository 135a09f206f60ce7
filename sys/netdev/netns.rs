// SPDX-License-Identifier: GPL-2.0

//! Network namespaces ([`NetNs`]) and module references ([`module_get`],
//! [`module_put`]).

use crate::bindings;
use crate::sys::this_module;
use core::ffi::c_int;
use core::ptr;
use core::ptr::NonNull;
use kernel::error::to_result;
use kernel::prelude::*;

/// Network namespace reference (`get_net`/`put_net`).
///
/// # Invariants
///
/// Owns one reference to the namespace.
pub(crate) struct NetNs(pub(in crate::sys) NonNull<bindings::net>);

// SAFETY: Namespace references can move between threads.
unsafe impl Send for NetNs {}
// SAFETY: Only compared and passed to the kernel.
unsafe impl Sync for NetNs {}

impl NetNs {
    /// The calling task's network namespace.
    pub(crate) fn current() -> Self {
        // SAFETY: Process context; `current->nsproxy` is valid for the task
        // (`get_net(current->nsproxy->net_ns)`).
        let p = unsafe { bindings::get_net((*(*bindings::get_current()).nsproxy).net_ns) };
        // INVARIANT: `get_net` took a reference. It never returns null.
        Self(NonNull::new(p).expect("get_net returned null"))
    }

    /// `ns_capable(net->user_ns, CAP_NET_ADMIN)`.
    pub(crate) fn capable_net_admin(&self) -> bool {
        // SAFETY: Valid namespace; process context.
        unsafe {
            bindings::ns_capable((*self.0.as_ptr()).user_ns, bindings::CAP_NET_ADMIN as c_int)
        }
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // SAFETY: Gives back our reference.
        unsafe { bindings::put_net(self.0.as_ptr()) }
    }
}

/// Takes a reference on this module (`__module_get(THIS_MODULE)`), as tun
/// does for each persistent device.
pub(crate) fn module_get() {
    // SAFETY: The module is live while any of its code runs.
    unsafe { bindings::__module_get(this_module()) }
}

/// Drops a reference taken with [`module_get`].
pub(crate) fn module_put() {
    // SAFETY: Balances an earlier `module_get`.
    unsafe { bindings::module_put(this_module()) }
}

/// A file descriptor for `net` if the caller has `CAP_NET_ADMIN` in it.
///
/// Callers pass a live namespace.
pub(in crate::sys) fn open_netns(net: *mut bindings::net) -> Result<isize> {
    // SAFETY: Callers pass a live namespace (a socket's or a device's,
    // which they hold).
    unsafe {
        if !bindings::ns_capable((*net).user_ns, bindings::CAP_NET_ADMIN as c_int) {
            return Err(EPERM);
        }
        let fd =
            bindings::open_related_ns(ptr::addr_of_mut!((*net).ns), Some(bindings::get_net_ns));
        to_result(fd)?;
        Ok(fd as isize)
    }
}
