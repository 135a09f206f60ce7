// SPDX-License-Identifier: GPL-2.0

//! The file's classic BPF filter on its socket (`TUNATTACHFILTER`,
//! `TUNDETACHFILTER`, `TUNGETFILTER`): the program as user space gave
//! it, attached by `sk_attach_filter()`, run on transmit by
//! `sk_filter()`.

use super::Sock;
use crate::bindings;
use crate::sys::skb::{DropReason, SkBuff};
use core::ptr;
use kernel::error::to_result;
use kernel::prelude::*;

/// `struct sock_fprog` as `TUNATTACHFILTER` copies it from user space:
/// the number of instructions and a user pointer to them. Kept as the
/// bytes user space gave, padding included, which `TUNGETFILTER` gives
/// back (tun.c keeps the struct as copied and copies it out whole); the
/// fields are read out of them at their C offsets when the program is
/// attached. Zeroes before any was given (tun.c's zeroed `tun_struct`).
#[derive(Clone, Copy, Default)]
pub(crate) struct SockFprog([u8; SOCK_FPROG_LEN]);

/// The size of `struct sock_fprog` (64-bit).
pub(crate) const SOCK_FPROG_LEN: usize = core::mem::size_of::<bindings::sock_fprog>();

/// Where `struct sock_fprog`'s fields sit, and their sizes, from C.
const FPROG_LEN_AT: usize = core::mem::offset_of!(bindings::sock_fprog, len);
const FPROG_FILTER_AT: usize = core::mem::offset_of!(bindings::sock_fprog, filter);
const FPROG_FILTER_LEN: usize = core::mem::size_of::<*mut bindings::sock_filter>();
const _: () = assert!(
    FPROG_LEN_AT + 2 <= SOCK_FPROG_LEN
        && FPROG_FILTER_AT + FPROG_FILTER_LEN <= SOCK_FPROG_LEN
        && FPROG_FILTER_LEN == core::mem::size_of::<usize>()
);

impl SockFprog {
    /// From the bytes user space passed.
    pub(crate) fn from_bytes(b: &[u8; SOCK_FPROG_LEN]) -> Self {
        Self(*b)
    }

    /// The bytes `TUNGETFILTER` copies out: those `from_bytes` was given.
    pub(crate) fn to_bytes(self) -> [u8; SOCK_FPROG_LEN] {
        self.0
    }

    /// The C struct, its fields copied out of the bytes (the padding is
    /// not part of it).
    fn to_c(self) -> bindings::sock_fprog {
        let b = &self.0;
        let len = u16::from_ne_bytes([b[FPROG_LEN_AT], b[FPROG_LEN_AT + 1]]);
        let mut p = [0u8; FPROG_FILTER_LEN];
        p.copy_from_slice(&b[FPROG_FILTER_AT..FPROG_FILTER_AT + FPROG_FILTER_LEN]);
        bindings::sock_fprog {
            len,
            // CAST: A user address, as user space gave it; only
            // `sk_attach_filter()` uses it, through `copy_from_user()`.
            filter: usize::from_ne_bytes(p) as *mut bindings::sock_filter,
        }
    }
}

impl Sock {
    /// Whether a classic BPF filter is attached.
    #[inline(always)]
    pub(crate) fn has_filter(&self) -> bool {
        // SAFETY: A live socket; a plain pointer read, as
        // `rcu_access_pointer()`.
        unsafe { !ptr::read_volatile(ptr::addr_of!((*self.sk()).sk_filter)).is_null() }
    }

    /// `sk_filter_reason()`: runs the attached filter on `skb`, which it
    /// may trim; `Err` gives back a packet the filter rejected, and why
    /// (on 6.12, whose `sk_filter()` gives no reason, tun.c's
    /// `SKB_DROP_REASON_SOCKET_FILTER`: the helper says so).
    pub(crate) fn filter(&self, skb: SkBuff) -> core::result::Result<SkBuff, (SkBuff, DropReason)> {
        // SAFETY: A live socket and an skb we own; the filter runs under
        // its own RCU read section.
        let reason = unsafe { bindings::sk_filter_reason(self.sk(), skb.as_ptr()) };
        match DropReason::from_c(reason) {
            None => Ok(skb),
            Some(reason) => Err((skb, reason)),
        }
    }

    /// `sk_attach_filter()` under the socket lock: copies the program from
    /// user space, checks and attaches it.
    pub(crate) fn attach_filter(&self, fprog: &SockFprog) -> Result {
        let mut f = fprog.to_c();
        // SAFETY: A live socket, locked as sk_attach_filter() wants; it
        // reads the program through the user pointer with copy_from_user.
        let ret = unsafe {
            bindings::lock_sock(self.sk());
            let ret = bindings::sk_attach_filter(&mut f, self.sk());
            bindings::release_sock(self.sk());
            ret
        };
        to_result(ret)
    }

    /// `sk_detach_filter()` under the socket lock.
    pub(crate) fn detach_filter(&self) {
        // SAFETY: A live socket, locked.
        unsafe {
            bindings::lock_sock(self.sk());
            bindings::sk_detach_filter(self.sk());
            bindings::release_sock(self.sk());
        }
    }
}
