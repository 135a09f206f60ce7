// SPDX-License-Identifier: GPL-2.0

//! A socket's send buffer: what a writer has in flight is charged to it
//! (`sock_alloc_send_pskb()`, `skb_set_owner_w()`), and past `sk_sndbuf`
//! the writer waits, or gets `EAGAIN`, until packets are freed.

use super::Sock;
use crate::bindings;
use crate::sys::skb::{SkBuff, Unfilled};
use core::ffi::{c_int, c_ulong};
use core::ptr::{self, NonNull};
use kernel::prelude::*;

impl Sock {
    /// `sk->sk_sndbuf`.
    pub(crate) fn sndbuf(&self) -> i32 {
        // SAFETY: A live socket; READ_ONCE.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.sk()).sk_sndbuf)) }
    }

    /// Sets `sk->sk_sndbuf`, as `tun_set_sndbuf()` (WRITE_ONCE).
    pub(crate) fn set_sndbuf(&self, v: i32) {
        // SAFETY: A live socket; WRITE_ONCE.
        unsafe { ptr::write_volatile(ptr::addr_of_mut!((*self.sk()).sk_sndbuf), v) }
    }

    /// `sock_writeable()`: in-flight bytes below half the send buffer.
    pub(crate) fn writeable(&self) -> bool {
        // SAFETY: A live socket.
        unsafe { bindings::sock_writeable(self.sk()) }
    }

    /// Flags that a poller waits for space (`SOCKWQ_ASYNC_NOSPACE`), so the
    /// next freed packet wakes it; whether it was flagged already.
    pub(crate) fn test_and_set_nospace(&self) -> bool {
        // SAFETY: A live socket with its `struct socket`.
        unsafe {
            bindings::test_and_set_bit(bindings::RTUN_SOCKWQ_ASYNC_NOSPACE, nospace_word(self.sk()))
        }
    }

    /// `skb_set_owner_w()`: `skb` charged to this socket's send buffer
    /// until freed (an skb the write path built itself).
    pub(crate) fn set_owner_w(&self, skb: &mut SkBuff) {
        // SAFETY: A live socket of ours and an skb we own that has no
        // owner yet (freshly built).
        unsafe { bindings::skb_set_owner_w(skb.as_ptr(), self.sk()) }
    }

    /// `sock_alloc_send_pskb()`: an skb for a write of `len` bytes with
    /// `prepad` bytes of headroom and `linear` bytes in the head (the rest
    /// in page fragments of up to `PAGE_ALLOC_COSTLY_ORDER`), charged to
    /// this socket's send buffer until freed. Past the buffer it waits for
    /// space, or fails with `EAGAIN` if `noblock`. May sleep.
    pub(crate) fn alloc_send_skb(
        &self,
        prepad: usize,
        len: usize,
        linear: usize,
        noblock: bool,
    ) -> Result<Unfilled> {
        // Under a page? Don't bother with a paged skb. Never more fragments
        // than an skb holds.
        let page = bindings::RTUN_PAGE_SIZE as usize;
        let max_frags = bindings::RTUN_MAX_SKB_FRAGS as usize
            * (page << bindings::RTUN_PAGE_ALLOC_COSTLY_ORDER);
        let mut linear = if prepad + len < page {
            len
        } else {
            linear.min(len)
        };
        if len - linear > max_frags {
            linear = len - max_frags;
        }
        let mut err: c_int = 0;
        // SAFETY: A live socket of ours; `err` is valid for writes.
        let p = unsafe {
            bindings::sock_alloc_send_pskb(
                self.sk(),
                (prepad + linear) as c_ulong,
                (len - linear) as c_ulong,
                c_int::from(noblock),
                &mut err,
                bindings::RTUN_PAGE_ALLOC_COSTLY_ORDER as c_int,
            )
        };
        let p = NonNull::new(p).ok_or_else(|| Error::from_errno(err))?;
        // SAFETY: A fresh skb as `Unfilled::claim` wants it.
        Ok(unsafe { Unfilled::claim(p, prepad, len, linear) })
    }
}

/// `&sk->sk_socket->flags`, the word of `SOCKWQ_ASYNC_NOSPACE`.
///
/// # Safety
///
/// `sk` is a live socket with its `struct socket`.
pub(super) unsafe fn nospace_word(sk: *mut bindings::sock) -> *mut c_ulong {
    // SAFETY: As the caller guarantees.
    unsafe { ptr::addr_of_mut!((*(*sk).sk_socket).flags) }
}
