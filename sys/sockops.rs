// SPDX-License-Identifier: GPL-2.0

//! The operations of a driver's sockets for in-kernel users holding the
//! socket's file (tun.c's `tun_socket_ops`, which vhost-net calls):
//! [`SockOps`], the `msghdr` they see ([`MsgHdr`]), and the `proto_ops`
//! built from them ([`Proto`](super::Proto)'s).

use super::chrdev::FileOps;
use super::skb::{IovIterDest, IovIterSource, SkBuff};
use super::sock::Sock;
use super::xdp::XdpBatch;
use super::zeroed;
use crate::bindings;
use core::ffi::c_int;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::error::to_result;
use kernel::prelude::*;

/// What a driver's sockets do for an in-kernel user that holds the file
/// the socket stands for (tun.c's `tun_socket_ops`): the file's data is
/// found through `sock->file`, which is the file from open to release
/// ([`FileSocket`](super::FileSocket)), and the caller's reference on the
/// file keeps it alive (`tun_get_socket()`'s contract).
pub(crate) trait SockOps: FileOps {
    /// `sendmsg`: a packet from `msg`'s iterator, as a write.
    fn sendmsg(data: &Self::Data, msg: &mut MsgHdr<'_>, total_len: usize) -> Result<usize>;
    /// `recvmsg`: a packet into `msg`'s iterator -- `entry`, the one the
    /// caller took from the file's ring (`msg_control`), if it passed one;
    /// returns its full size, of which `total_len` bytes fit.
    fn recvmsg(
        data: &Self::Data,
        msg: &mut MsgHdr<'_>,
        entry: Option<SkBuff>,
        total_len: usize,
        flags: u32,
    ) -> Result<usize>;
    /// `peek_len`: the length of the next packet, 0 if none.
    fn peek_len(data: &Self::Data) -> i32;
}

/// A `struct msghdr` handed to [`SockOps`] by an in-kernel caller.
///
/// # Invariants
///
/// Points to a live `msghdr` whose `msg_iter` is initialised, for `'a`.
pub(crate) struct MsgHdr<'a>(*mut bindings::msghdr, PhantomData<&'a mut bindings::msghdr>);

/// What a sender's `msg_control` carries (tun.c's `struct tun_msg_ctl`).
pub(crate) enum TunMsgCtl<'a> {
    /// Nothing: the packet is `msg_iter`.
    None,
    /// `TUN_MSG_PTR`: a batch of `xdp_buff`s, vhost-net's transmit batch
    /// (it builds one whenever the socket's send buffer is unlimited).
    XdpBatch(XdpBatch<'a>),
    /// Zerocopy buffers (`ctl->ptr` of any other type): what vhost-net
    /// sends only to a socket with `SOCK_ZEROCOPY`.
    Zerocopy,
}

impl MsgHdr<'_> {
    /// `msg->msg_flags`.
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: A live msghdr (type invariants).
        unsafe { (*self.0).msg_flags }
    }

    /// Sets `MSG_TRUNC` in `msg->msg_flags` (recvmsg: the packet was
    /// longer than the room for it).
    pub(crate) fn set_trunc(&mut self) {
        // SAFETY: A live msghdr (type invariants), ours to write for the
        // call.
        unsafe { (*self.0).msg_flags |= bindings::RTUN_MSG_TRUNC };
    }

    /// The data to send (`msg->msg_iter`).
    pub(crate) fn source(&mut self) -> IovIterSource<'_> {
        // SAFETY: An initialised iterator of the sender's (type
        // invariants), borrowed with `self`.
        unsafe { IovIterSource::from_raw(ptr::addr_of_mut!((*self.0).msg_iter)) }
    }

    /// The room to receive into (`msg->msg_iter`).
    pub(crate) fn dest(&mut self) -> IovIterDest<'_> {
        // SAFETY: As in `source`.
        unsafe { IovIterDest::from_raw(ptr::addr_of_mut!((*self.0).msg_iter)) }
    }

    /// A sender's `msg_control` (tun.c's `tun_sendmsg()`: a `struct
    /// tun_msg_ctl` of `TUN_MSG_PTR` is a batch of `xdp_buff`s; otherwise
    /// its `ptr`, if any, is zerocopy buffers).
    pub(crate) fn tun_ctl(&mut self) -> TunMsgCtl<'_> {
        // SAFETY: A live msghdr (type invariants).
        let (ctl, len) = unsafe {
            (
                (*self.0)
                    .__bindgen_anon_1
                    .msg_control
                    .cast::<bindings::tun_msg_ctl>(),
                (*self.0).msg_controllen,
            )
        };
        if ctl.is_null() {
            return TunMsgCtl::None;
        }
        // SAFETY: An in-kernel sender's `msg_control` is its `tun_msg_ctl`
        // (tun.c reads it so whatever `msg_controllen` says).
        let (ty, num, ptr) = unsafe { ((*ctl).type_, (*ctl).num, (*ctl).ptr) };
        if len == core::mem::size_of::<bindings::tun_msg_ctl>() && ty == bindings::RTUN_TUN_MSG_PTR
        {
            // SAFETY: `TUN_MSG_PTR`: `ptr` is an array of `num` `xdp_buff`s
            // the sender filled and hands over for this call (vhost-net's
            // `vhost_tx_batch()`), each owning a page reference.
            return TunMsgCtl::XdpBatch(unsafe { XdpBatch::new(ptr.cast(), num.into()) });
        }
        if ptr.is_null() {
            TunMsgCtl::None
        } else {
            TunMsgCtl::Zerocopy
        }
    }

    /// recvmsg's `msg_control`: the packet the caller consumed from the
    /// file's ring (`vhost_net_buf_consume()`), now ours; `None` if it
    /// passed none.
    ///
    /// # Safety
    ///
    /// A non-null `msg_control` is an entry the caller took from a ring of
    /// this driver's (an owned skb), given to this call.
    unsafe fn take_ring_entry(&mut self) -> Option<SkBuff> {
        // SAFETY: A live msghdr (type invariants).
        let p = unsafe { (*self.0).__bindgen_anon_1.msg_control };
        // SAFETY: As the caller guarantees.
        NonNull::new(p.cast::<bindings::sk_buff>()).map(|p| unsafe { SkBuff::from_raw(p.as_ptr()) })
    }
}

impl Sock {
    /// `sock_recv_errqueue(sk, msg, len, SOL_PACKET, TUN_TX_TIMESTAMP)`:
    /// tun.c's `recvmsg` with `MSG_ERRQUEUE`.
    pub(crate) fn recv_errqueue(&self, msg: &mut MsgHdr<'_>, len: usize) -> Result<usize> {
        // SAFETY: A live socket; a live msghdr.
        let r = unsafe {
            bindings::sock_recv_errqueue(
                self.sk(),
                msg.0,
                len as c_int,
                bindings::RTUN_SOL_PACKET,
                bindings::RTUN_TUN_TX_TIMESTAMP,
            )
        };
        to_result(r)?;
        Ok(r as usize)
    }
}

/// The `proto_ops` of [`SockOps`] `T`.
pub(super) struct SockOpsAdapter<T>(PhantomData<T>);

impl<T: SockOps> SockOpsAdapter<T> {
    /// The `proto_ops` (tun.c's `tun_socket_ops`: `family` `AF_UNSPEC`).
    pub(super) const OPS: bindings::proto_ops = bindings::proto_ops {
        family: bindings::AF_UNSPEC as c_int,
        sendmsg: Some(Self::sendmsg),
        recvmsg: Some(Self::recvmsg),
        peek_len: Some(Self::peek_len),
        ..zeroed()
    };

    /// The data of the file `sock` stands for.
    ///
    /// # Safety
    ///
    /// `sock` is one of `T`'s sockets, and the caller holds a reference
    /// on the file it stands for (`tun_get_socket()`'s contract) for `'a`.
    unsafe fn data<'a>(sock: *mut bindings::socket) -> Option<&'a T::Data> {
        // SAFETY: As the caller guarantees: `sock->file` is the open file,
        // whose private data is its `T::Data` until release.
        unsafe {
            let file = (*sock).file;
            if file.is_null() {
                return None;
            }
            Some(&*(*file).private_data.cast::<T::Data>())
        }
    }

    /// `proto_ops.sendmsg`.
    ///
    /// # Safety
    ///
    /// The socket layer's call on one of `T`'s sockets, by a caller that
    /// holds the file it stands for; `m` (if any) is a live `msghdr`.
    unsafe extern "C" fn sendmsg(
        sock: *mut bindings::socket,
        m: *mut bindings::msghdr,
        total_len: usize,
    ) -> c_int {
        // SAFETY: The socket layer's call on our socket, by a caller that
        // holds its file.
        let Some(data) = (unsafe { Self::data(sock) }) else {
            return -(bindings::EBADFD as c_int);
        };
        // INVARIANT: The caller's live msghdr.
        let mut msg = MsgHdr(m, PhantomData);
        match T::sendmsg(data, &mut msg, total_len) {
            Ok(n) => n as c_int,
            Err(e) => e.to_errno(),
        }
    }

    /// `proto_ops.recvmsg`.
    ///
    /// # Safety
    ///
    /// The socket layer's call on one of `T`'s sockets, by a caller that
    /// holds the file it stands for; `m` (if any) is a live `msghdr`.
    unsafe extern "C" fn recvmsg(
        sock: *mut bindings::socket,
        m: *mut bindings::msghdr,
        total_len: usize,
        flags: c_int,
    ) -> c_int {
        // INVARIANT: The caller's live msghdr.
        let mut msg = MsgHdr(m, PhantomData);
        // SAFETY: A recvmsg caller's `msg_control` is null or an entry it
        // consumed from this socket's ring (tun.c's `tun_recvmsg()`
        // contract, which vhost-net keeps: `vhost_net_buf_consume()`); it
        // is ours now, freed if unused.
        let entry = unsafe { msg.take_ring_entry() };
        // SAFETY: As in `sendmsg`.
        let Some(data) = (unsafe { Self::data(sock) }) else {
            drop(entry);
            return -(bindings::EBADFD as c_int);
        };
        match T::recvmsg(data, &mut msg, entry, total_len, flags as u32) {
            Ok(n) => n as c_int,
            Err(e) => e.to_errno(),
        }
    }

    /// `proto_ops.peek_len`.
    ///
    /// # Safety
    ///
    /// The socket layer's call on one of `T`'s sockets, by a caller that
    /// holds the file it stands for; `m` (if any) is a live `msghdr`.
    unsafe extern "C" fn peek_len(sock: *mut bindings::socket) -> c_int {
        // SAFETY: As in `sendmsg`.
        match unsafe { Self::data(sock) } {
            Some(data) => T::peek_len(data),
            None => 0,
        }
    }
}
