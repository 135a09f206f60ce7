// SPDX-License-Identifier: GPL-2.0

//! eBPF programs a driver is given by file descriptor: [`SkFilterProg`], a
//! reference on a `BPF_PROG_TYPE_SOCKET_FILTER` program (tun's steering and
//! filter programs, `TUNSETSTEERINGEBPF` and `TUNSETFILTEREBPF`).

use super::rcu;
use super::skb::SkBuff;
use crate::bindings;
use core::ptr::NonNull;
use kernel::prelude::*;

/// A counted reference on a loaded socket-filter program.
///
/// # Invariants
///
/// The pointer is a live `struct bpf_prog` of type
/// `BPF_PROG_TYPE_SOCKET_FILTER` on which this value owns one reference.
pub(crate) struct SkFilterProg(NonNull<bindings::bpf_prog>);

// SAFETY: A program reference may be dropped from any thread
// (`bpf_prog_put()` defers the free to a work item where it must).
unsafe impl Send for SkFilterProg {}
// SAFETY: Running a program reads the program only; any number of CPUs
// run one at once, as every attach point does.
unsafe impl Sync for SkFilterProg {}

impl SkFilterProg {
    /// `bpf_prog_get_type(fd, BPF_PROG_TYPE_SOCKET_FILTER)`: the program
    /// behind the caller's file descriptor `fd`. `EBADF` if `fd` is not an
    /// open file, `EINVAL` if it is not a program of this type,
    /// `EOPNOTSUPP` without `CONFIG_BPF_SYSCALL`.
    pub(crate) fn from_fd(fd: i32) -> Result<Self> {
        // SAFETY: Any descriptor may be passed: the fd table is the
        // caller's (process context), and the type is checked.
        let p = unsafe {
            bindings::bpf_prog_get_type(
                fd as u32,
                bindings::bpf_prog_type_BPF_PROG_TYPE_SOCKET_FILTER,
            )
        };
        let p = kernel::error::from_err_ptr(p)?;
        // INVARIANT: A program of the type, and its reference is ours.
        NonNull::new(p).map(Self).ok_or(EINVAL)
    }

    /// `bpf_prog_run_clear_cb()`: runs the program on `skb` (which it
    /// reads, and whose control buffer it clears first if it uses it),
    /// returning the program's value.
    #[inline(always)]
    pub(crate) fn run(&self, skb: &mut SkBuff, _rcu: &rcu::Guard) -> u32 {
        // SAFETY: A live program (type invariant) of the socket-filter
        // type, run on an skb lent to us exclusively, under an RCU read
        // section as the program's maps expect (the run pins the CPU).
        unsafe { bindings::bpf_prog_run_clear_cb(self.0.as_ptr(), skb.as_ptr()) }
    }
}

impl Drop for SkFilterProg {
    fn drop(&mut self) {
        // SAFETY: Our reference, given back once (tun.c's
        // `tun_prog_free()`).
        unsafe { bindings::bpf_prog_destroy(self.0.as_ptr()) };
    }
}
