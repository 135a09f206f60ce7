// SPDX-License-Identifier: GPL-2.0

//! The operations of a driver's sockets for in-kernel users holding the
//! socket's file (tun.c's `tun_socket_ops`, which vhost-net calls):
//! [`SockOps`], the `msghdr`s they see ([`SendMsg`], [`RecvMsg`]), a
//! `TUN_MSG_PTR` batch offered ([`BatchOffer`]), and the `proto_ops`
//! built from them ([`Proto`](super::Proto)'s).

use super::sock::Sock;
use super::xdp::XdpBatch;
use crate::bindings;
use crate::sys::chrdev::FileOps;
use crate::sys::ring::TunPtr;
use crate::sys::skb::{IovIterDest, IovIterSource};
use crate::sys::zeroed;
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
    /// `sendmsg` of a packet in `msg`'s iterator, as a write (what every
    /// sender but a `TUN_MSG_PTR` batch sends).
    fn sendmsg(data: &Self::Data, msg: &mut SendMsg<'_>, total_len: usize) -> Result<usize>;
    /// `sendmsg` of a `TUN_MSG_PTR` batch (vhost-net's): the driver refuses
    /// it ([`BatchOffer::refuse`]: the sender keeps its buffers and frees
    /// them) or takes it ([`BatchOffer::take`]: the buffers are the
    /// driver's, and the call returns the sender's `total_len` whatever
    /// became of each). Nothing else makes a [`BatchVerdict`]: a batch
    /// taken cannot be answered with an error, whose sender would free its
    /// pages a second time.
    fn sendmsg_batch<'b>(data: &Self::Data, batch: BatchOffer<'b>) -> BatchVerdict<'b>;
    /// `recvmsg`: a packet into `msg`'s iterator -- `entry`, the one the
    /// caller took from the file's ring (`msg_control`), if it passed one;
    /// returns its full size, of which `total_len` bytes fit.
    fn recvmsg(
        data: &Self::Data,
        msg: &mut RecvMsg<'_>,
        entry: Option<TunPtr>,
        total_len: usize,
        flags: u32,
    ) -> Result<usize>;
    /// `peek_len`: the length of the next packet, 0 if none.
    fn peek_len(data: &Self::Data) -> i32;
}

/// A `struct msghdr` handed to [`SockOps::sendmsg`] by an in-kernel
/// sender: the data to send, its flags and whether it came with zerocopy
/// buffers. Its `msg_control` is not reachable: the adapter read it, and a
/// `TUN_MSG_PTR` batch went to [`SockOps::sendmsg_batch`] instead.
///
/// # Invariants
///
/// Points to a live `msghdr` whose `msg_iter` is initialised, for `'a`.
pub(crate) struct SendMsg<'a> {
    msg: *mut bindings::msghdr,
    zerocopy: bool,
    _p: PhantomData<&'a mut bindings::msghdr>,
}

/// A `struct msghdr` handed to [`SockOps::recvmsg`] by an in-kernel
/// receiver (its `msg_control`, a ring entry, was taken by the adapter).
///
/// # Invariants
///
/// Points to a live `msghdr` whose `msg_iter` is initialised, for `'a`.
pub(crate) struct RecvMsg<'a>(*mut bindings::msghdr, PhantomData<&'a mut bindings::msghdr>);

/// An invariant lifetime: a batch's verdict belongs to its own call.
type Brand<'b> = PhantomData<fn(&'b ()) -> &'b ()>;

/// A `TUN_MSG_PTR` batch offered to [`SockOps::sendmsg_batch`]: `num`
/// `xdp_buff`s, each with a page reference the sender gives up only if
/// the driver takes the batch. Dropping the offer unanswered is not
/// possible: the verdict is made from it.
///
/// # Invariants
///
/// `bufs` points to `num` `xdp_buff`s as `vhost_net_build_xdp()` fills
/// them, live for the call `'b`, each owning one page reference that is
/// the sender's while the offer stands.
pub(crate) struct BatchOffer<'b> {
    bufs: *mut bindings::xdp_buff,
    num: usize,
    _brand: Brand<'b>,
}

/// A batch taken ([`BatchOffer::take`]): `sendmsg` returns its `total_len`.
pub(crate) struct BatchTaken<'b>(Brand<'b>);

/// A batch refused ([`BatchOffer::refuse`]): `sendmsg` returns the error,
/// and the sender frees its buffers.
pub(crate) struct BatchRefused<'b>(Error, Brand<'b>);

/// The driver's answer to a [`BatchOffer`], made only from the offer.
pub(crate) type BatchVerdict<'b> = core::result::Result<BatchTaken<'b>, BatchRefused<'b>>;

impl<'b> BatchOffer<'b> {
    /// Takes the buffers: each is the driver's now, to build an skb around
    /// or to give back ([`XdpBatch`] puts those it did not hand out).
    pub(crate) fn take(self) -> (XdpBatch<'b>, BatchTaken<'b>) {
        // SAFETY: The buffers of the type invariants, live for `'b`; their
        // page references pass to the batch here, once: `self` is consumed.
        let batch = unsafe { XdpBatch::new(self.bufs, self.num) };
        (batch, BatchTaken(PhantomData))
    }

    /// Refuses the batch with `e`: its buffers stay the sender's.
    pub(crate) fn refuse(self, e: Error) -> BatchRefused<'b> {
        BatchRefused(e, PhantomData)
    }
}

impl SendMsg<'_> {
    /// `msg->msg_flags`.
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: A live msghdr (type invariants).
        unsafe { (*self.msg).msg_flags }
    }

    /// Whether the sender passed zerocopy buffers (a `msg_control` other
    /// than a `TUN_MSG_PTR` batch, with a `ptr`: what vhost-net sends only
    /// to a socket with `SOCK_ZEROCOPY`).
    pub(crate) fn zerocopy(&self) -> bool {
        self.zerocopy
    }

    /// The data to send (`msg->msg_iter`).
    pub(crate) fn source(&mut self) -> IovIterSource<'_> {
        // SAFETY: An initialised iterator of the sender's (type
        // invariants), borrowed with `self`.
        unsafe { IovIterSource::from_raw(ptr::addr_of_mut!((*self.msg).msg_iter)) }
    }
}

impl RecvMsg<'_> {
    /// Sets `MSG_TRUNC` in `msg->msg_flags` (the packet was longer than
    /// the room for it).
    pub(crate) fn set_trunc(&mut self) {
        // SAFETY: A live msghdr (type invariants), ours to write for the
        // call.
        unsafe { (*self.0).msg_flags |= bindings::RTUN_MSG_TRUNC };
    }

    /// The room to receive into (`msg->msg_iter`).
    pub(crate) fn dest(&mut self) -> IovIterDest<'_> {
        // SAFETY: An initialised iterator of the receiver's (type
        // invariants), borrowed with `self`.
        unsafe { IovIterDest::from_raw(ptr::addr_of_mut!((*self.0).msg_iter)) }
    }
}

/// What a sender's `msg_control` carries (tun.c's `tun_sendmsg()`: a
/// `struct tun_msg_ctl` of `TUN_MSG_PTR` is a batch of `xdp_buff`s;
/// otherwise its `ptr`, if any, is zerocopy buffers).
enum SendCtl {
    /// Nothing, or zerocopy buffers (`true`): the packet is `msg_iter`.
    Iter(bool),
    /// `TUN_MSG_PTR`: `num` buffers at the pointer.
    Batch(*mut bindings::xdp_buff, usize),
}

/// Reads a sender's `msg_control`.
///
/// # Safety
///
/// `m` is a live `msghdr` of an in-kernel sender, whose `msg_control`, if
/// not null, is a `struct tun_msg_ctl` (tun.c reads it so whatever
/// `msg_controllen` says).
unsafe fn send_ctl(m: *mut bindings::msghdr) -> SendCtl {
    // SAFETY: A live msghdr (the caller).
    let (ctl, len) = unsafe {
        (
            (*m).__bindgen_anon_1
                .msg_control
                .cast::<bindings::tun_msg_ctl>(),
            (*m).msg_controllen,
        )
    };
    if ctl.is_null() {
        return SendCtl::Iter(false);
    }
    // SAFETY: A `tun_msg_ctl` (the caller).
    let (ty, num, ptr) = unsafe { ((*ctl).type_, (*ctl).num, (*ctl).ptr) };
    if len == core::mem::size_of::<bindings::tun_msg_ctl>() && ty == bindings::RTUN_TUN_MSG_PTR {
        return SendCtl::Batch(ptr.cast(), num.into());
    }
    SendCtl::Iter(!ptr.is_null())
}

/// recvmsg's `msg_control`: the packet the caller consumed from the
/// file's ring (`vhost_net_buf_consume()`), now ours; `None` if it
/// passed none.
///
/// # Safety
///
/// `m` is a live `msghdr`; a non-null `msg_control` is an entry the caller
/// took from a ring of this driver's (an owned skb or frame, in tun's
/// encoding), given to this call.
unsafe fn take_ring_entry(m: *mut bindings::msghdr) -> Option<TunPtr> {
    // SAFETY: A live msghdr (the caller).
    let p = unsafe { (*m).__bindgen_anon_1.msg_control };
    // SAFETY: As the caller guarantees.
    NonNull::new(p).map(|p| unsafe { TunPtr::from_raw(p) })
}

impl Sock {
    /// `sock_recv_errqueue(sk, msg, len, SOL_PACKET, TUN_TX_TIMESTAMP)`:
    /// tun.c's `recvmsg` with `MSG_ERRQUEUE`.
    pub(crate) fn recv_errqueue(&self, msg: &mut RecvMsg<'_>, len: usize) -> Result<usize> {
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

    /// `proto_ops.sendmsg`: a `TUN_MSG_PTR` batch to
    /// [`SockOps::sendmsg_batch`], anything else to [`SockOps::sendmsg`].
    ///
    /// # Safety
    ///
    /// The socket layer's call on one of `T`'s sockets, by an in-kernel
    /// caller that holds the file it stands for; `m` is a live `msghdr`
    /// whose `msg_control`, if any, is a `struct tun_msg_ctl` (tun.c's
    /// contract with vhost-net, the one sender that passes one).
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
        // SAFETY: The caller's live msghdr, whose control is a
        // `tun_msg_ctl` if any.
        match unsafe { send_ctl(m) } {
            SendCtl::Batch(bufs, num) => {
                // INVARIANT: `num` buffers the sender filled for this
                // call, their pages still its own.
                let offer = BatchOffer {
                    bufs,
                    num,
                    _brand: PhantomData,
                };
                match T::sendmsg_batch(data, offer) {
                    Ok(BatchTaken(_)) => total_len as c_int,
                    Err(BatchRefused(e, _)) => e.to_errno(),
                }
            }
            SendCtl::Iter(zerocopy) => {
                // INVARIANT: The caller's live msghdr.
                let mut msg = SendMsg {
                    msg: m,
                    zerocopy,
                    _p: PhantomData,
                };
                match T::sendmsg(data, &mut msg, total_len) {
                    Ok(n) => n as c_int,
                    Err(e) => e.to_errno(),
                }
            }
        }
    }

    /// `proto_ops.recvmsg`.
    ///
    /// # Safety
    ///
    /// The socket layer's call on one of `T`'s sockets, by a caller that
    /// holds the file it stands for; `m` is a live `msghdr`.
    unsafe extern "C" fn recvmsg(
        sock: *mut bindings::socket,
        m: *mut bindings::msghdr,
        total_len: usize,
        flags: c_int,
    ) -> c_int {
        // SAFETY: A recvmsg caller's `msg_control` is null or an entry it
        // consumed from this socket's ring (tun.c's `tun_recvmsg()`
        // contract, which vhost-net keeps: `vhost_net_buf_consume()`); it
        // is ours now, freed if unused.
        let entry = unsafe { take_ring_entry(m) };
        // SAFETY: As in `sendmsg`.
        let Some(data) = (unsafe { Self::data(sock) }) else {
            drop(entry);
            return -(bindings::EBADFD as c_int);
        };
        // INVARIANT: The caller's live msghdr.
        let mut msg = RecvMsg(m, PhantomData);
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
