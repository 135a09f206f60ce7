// SPDX-License-Identifier: GPL-2.0

//! A socket per open file, as tun.c's `tun_file` is one (`struct sock`
//! first, then `struct socket`): it accounts a writer's in-flight bytes
//! against its send buffer (`sock_alloc_send_pskb()`: the writer blocks or
//! gets `EAGAIN` past `sk_sndbuf`; [`sndbuf`]), carries the file's classic
//! BPF filter (`sk_attach_filter()`, run on transmit by `sk_filter()`;
//! [`filter`]), and holds the opener's network namespace for `SIOCGSKNS`.
//!
//! The socket is allocated by `sk_alloc()` with a [`Proto`] of the driver's
//! and freed by the kernel when its last reference goes: the owner's
//! ([`Sock`]'s drop) and one per packet written and still in flight. Each
//! socket pins the module (`proto.owner`), so the write-space callback
//! below stays loaded while any packet can still call it.

use super::sockops::{SockOps, SockOpsAdapter};

mod filter;
mod sndbuf;

use crate::bindings;
use crate::sys::chrdev::Fasync;
use crate::sys::napi::{HasNapi, NapiContext, NapiState};
use crate::sys::netdev::netns::{open_netns, NetNs};
use crate::sys::skb_queue::SkbQueue;
use crate::sys::sync::wait::WaitQueue;
use crate::sys::{this_module, zeroed};
use core::ffi::{c_int, c_uint};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
pub(crate) use filter::{SockFprog, SOCK_FPROG_LEN};
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::types::Opaque;
use sndbuf::nospace_word;

/// A driver's `struct proto` for its sockets, and the `struct proto_ops`
/// their `struct socket`s point to: a `static`.
///
/// The ops table has what tun.c's `tun_socket_ops` has (`family`
/// `AF_UNSPEC`): `sendmsg`, `recvmsg` and `peek_len` ([`SockOps`]), which
/// only in-kernel users holding the socket's file call (vhost-net, after
/// `tun_get_socket()`: `sys/vhost.rs`); nothing reaches these sockets
/// through a socket file, so nothing else calls `sock->ops`.
pub(crate) struct Proto(Opaque<bindings::proto>, Opaque<bindings::proto_ops>);

// SAFETY: `Proto` has no method that reads or writes the tables: their
// addresses go to `sk_alloc()` and `sock->ops` only, where the kernel
// reads them.
unsafe impl Sync for Proto {}

impl Proto {
    /// A protocol named `name` (shown nowhere: it is never registered,
    /// as tun.c's is not), for [`Sock`]s whose operations are `T`'s.
    pub(crate) const fn new<T: SockOps>(name: &[u8]) -> Self {
        let mut p = bindings::proto {
            owner: this_module(),
            obj_size: core::mem::size_of::<bindings::rtun_sock>() as c_uint,
            ..zeroed()
        };
        let mut i = 0;
        while i < name.len() && i < p.name.len() - 1 {
            p.name[i] = name[i] as core::ffi::c_char;
            i += 1;
        }
        let ops = SockOpsAdapter::<T>::OPS;
        Self(Opaque::new(p), Opaque::new(ops))
    }
}

/// A socket owned by an open file (one reference on `struct rtun_sock`).
///
/// # Invariants
///
/// Points to a live `rtun_sock` initialised by [`Sock::new`], on which this
/// holds a reference. The second field is the state of the socket's NAPI
/// context (`sys/napi/`).
pub(crate) struct Sock(
    pub(super) NonNull<bindings::rtun_sock>,
    pub(super) NapiState,
);

// SAFETY: A socket reference can move between threads; the socket's own
// locks serialise what needs it.
unsafe impl Send for Sock {}
// SAFETY: Shared use only through the kernel's socket API, which is
// thread-safe, and atomic field accesses.
unsafe impl Sync for Sock {}

/// A socket as its NAPI context's poll function sees it (the context is
/// embedded in the socket: [`Sock::napi`]).
///
/// # Invariants
///
/// A live `rtun_sock` initialised by [`Sock::new`].
#[repr(transparent)]
pub(crate) struct SockRef(Opaque<bindings::rtun_sock>);

impl SockRef {
    /// The socket's write queue (`sk_write_queue`).
    #[inline(always)]
    pub(crate) fn write_queue(&self) -> &SkbQueue {
        // SAFETY: A live socket (type invariants), whose write queue
        // `sock_init_data_uid()` initialised.
        unsafe { SkbQueue::from_raw(ptr::addr_of_mut!((*self.0.get()).sk.sk_write_queue)) }
    }
}

// SAFETY: The only contexts handed out for a `SockRef` owner are sockets'
// own (`Sock::napi`), embedded at `rtun_sock.napi`.
unsafe impl HasNapi for SockRef {
    #[inline(always)]
    unsafe fn from_napi<'a>(napi: *mut bindings::napi_struct) -> &'a Self {
        // SAFETY: `napi` is the context of a live socket, alive for `'a`
        // (the caller's contract); `SockRef` is transparent over
        // `rtun_sock`.
        unsafe { &*kernel::container_of!(napi, bindings::rtun_sock, napi).cast::<Self>() }
    }
}

/// `INT_MAX`: tun.c's default send buffer (no limit).
pub(crate) const SNDBUF_UNLIMITED: i32 = i32::MAX;

impl Sock {
    /// `sk_alloc()` + `sock_init_data_uid()`, as `tun_chr_open()`: in the
    /// caller's network namespace, owned by the caller's fsuid, with the
    /// write-space callback below and an unlimited send buffer.
    pub(crate) fn new(proto: &'static Proto) -> Result<Self> {
        let net = NetNs::current();
        // SAFETY: `net` is a live namespace (sk_alloc takes its own
        // reference); `proto` is static and describes `rtun_sock`.
        let sk = unsafe {
            bindings::sk_alloc(
                net.0.as_ptr(),
                bindings::AF_UNSPEC as c_int,
                bindings::RTUN_GFP_KERNEL,
                proto.0.get(),
                0,
            )
        };
        let rs = NonNull::new(sk.cast::<bindings::rtun_sock>()).ok_or(ENOMEM)?;
        // SAFETY: A fresh socket of `proto`'s size, ours alone: its
        // `struct socket` is set up as tun_chr_open() does.
        unsafe {
            let sock = ptr::addr_of_mut!((*rs.as_ptr()).socket);
            bindings::__init_waitqueue_head(
                ptr::addr_of_mut!((*sock).wq.wait),
                crate::sys::compat::cstr_ptr(kernel::c_str!("rust_tun sock")).cast(),
                ptr::from_ref(crate::sys::compat::static_lock_class_ref!())
                    .cast_mut()
                    .cast(),
            );
            bindings::__mutex_init(
                ptr::addr_of_mut!((*rs.as_ptr()).napi_mutex),
                crate::sys::compat::cstr_ptr(kernel::c_str!("rust_tun napi_mutex")).cast(),
                ptr::from_ref(crate::sys::compat::static_lock_class_ref!())
                    .cast_mut()
                    .cast(),
            );
            // `tfile->socket.ops = &tun_socket_ops`; `socket.file` comes
            // with the file (`graft_file`).
            (*sock).ops = proto.1.get();
            bindings::sock_init_data_uid(sock, sk, bindings::current_fsuid());
            (*sk).sk_write_space = Some(sock_write_space);
            ptr::write_volatile(ptr::addr_of_mut!((*sk).sk_sndbuf), SNDBUF_UNLIMITED);
        }
        // INVARIANT: Initialised, and the allocation's reference is ours.
        Ok(Self(rs, NapiState::new()))
    }

    pub(super) fn sk(&self) -> *mut bindings::sock {
        self.0.as_ptr().cast()
    }

    /// The socket's write queue (`sk_write_queue`).
    pub(crate) fn write_queue(&self) -> &SkbQueue {
        // SAFETY: A live socket of ours (type invariant), whose write queue
        // `sock_init_data_uid()` initialised; it lives as long as `self`.
        unsafe { SkbQueue::from_raw(ptr::addr_of_mut!((*self.sk()).sk_write_queue)) }
    }

    pub(super) fn napi_ptr(&self) -> *mut bindings::napi_struct {
        // SAFETY: A live socket of ours (type invariant).
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).napi) }
    }

    pub(super) fn napi_mutex(&self) -> *mut bindings::mutex {
        // SAFETY: A live socket of ours; the mutex was initialised by
        // `Sock::new`.
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).napi_mutex) }
    }

    /// The socket's NAPI context (tun.c's `tfile->napi`), whose poll is
    /// given the socket ([`SockRef`]).
    pub(crate) fn napi(&self) -> NapiContext<'_, SockRef> {
        // INVARIANT: The context and the mutex beside it live in the
        // socket, with the state `self.1`; the mutex was initialised by
        // `Sock::new`, and the context is on no list until `add_tx`.
        NapiContext {
            napi: self.napi_ptr(),
            mutex: self.napi_mutex(),
            state: &self.1,
            _owner: PhantomData,
        }
    }

    pub(super) fn socket(&self) -> *mut bindings::socket {
        // SAFETY: A live socket of ours (type invariant).
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).socket) }
    }

    /// `tfile->socket.file = file` (`tun_chr_open()`): the socket stands
    /// for `file`, whose opener's credentials the kernel then finds
    /// through `skb->sk->sk_socket->file` (`meta skuid`, `xt_owner`, uid
    /// logging).
    ///
    /// # Safety
    ///
    /// `file` stays valid until [`Sock::orphan_file`] is called.
    pub(crate) unsafe fn graft_file(&self, file: *mut bindings::file) {
        // SAFETY: A live socket; readers of `sk_socket->file` hold
        // `sk_callback_lock` for reading (`sock_graft()`'s lock).
        unsafe {
            let lock = ptr::addr_of_mut!((*self.sk()).sk_callback_lock);
            bindings::write_lock_bh(lock);
            (*self.socket()).file = file;
            bindings::write_unlock_bh(lock);
        }
    }

    /// The socket stands for no file any more: the file is being released,
    /// while packets in flight may still hold the socket (as
    /// `sock_orphan()` before `__sock_release()` clears `sock->file`).
    pub(crate) fn orphan_file(&self) {
        // SAFETY: A live socket; under `sk_callback_lock`, so a reader
        // that saw the file finishes with it before the file is freed.
        unsafe {
            let lock = ptr::addr_of_mut!((*self.sk()).sk_callback_lock);
            bindings::write_lock_bh(lock);
            (*self.socket()).file = ptr::null_mut();
            bindings::write_unlock_bh(lock);
        }
    }

    /// `fasync_helper()` on the socket's `wq.fasync_list` (tun.c's
    /// `tfile->fasync`): adds or removes the file's entry, after which
    /// [`Sock::kill_fasync`] signals its owner.
    pub(crate) fn fasync_helper(&self, req: &Fasync, on: bool) -> Result {
        // SAFETY: An open file in its `fasync` call; the list lives as long
        // as the socket, which outlives the file's entry (the VFS removes
        // it, `fasync(-1, file, 0)`, before `release`).
        let ret = unsafe {
            bindings::fasync_helper(
                req.fd,
                req.file,
                c_int::from(on),
                ptr::addr_of_mut!((*self.socket()).wq.fasync_list),
            )
        };
        to_result(ret.min(0))
    }

    /// `kill_fasync(&tfile->fasync, SIGIO, band)`: signals the owners of
    /// the files with `O_ASYNC` on this socket; `band` is `POLL_IN` or
    /// `POLL_OUT`. Any context.
    pub(crate) fn kill_fasync(&self, band: FasyncBand) {
        // SAFETY: A live socket; `kill_fasync` walks the list under RCU.
        unsafe { kill_fasync_sk(self.sk(), band as c_int) }
    }

    /// The socket's wait queue (`sk_sleep()`): readers, writers waiting
    /// for send-buffer space and pollers (vhost-net among them) wait here.
    pub(crate) fn wq(&self) -> &WaitQueue {
        // SAFETY: The socket's wait queue head lives as long as the socket;
        // `WaitQueue` is a transparent wrapper of `wait_queue_head`.
        unsafe { &*bindings::sk_sleep(self.sk()).cast::<WaitQueue>() }
    }

    /// `sock_valbool_flag(sk, SOCK_XDP, on)`: the device has an XDP
    /// program, which vhost-net reads to give its transmit buffers XDP's
    /// headroom (`vhost_sock_xdp()`).
    pub(crate) fn set_xdp(&self, on: bool) {
        // SAFETY: A live socket of ours; the flag bit is set atomically.
        unsafe {
            bindings::sock_valbool_flag(
                self.sk(),
                bindings::RTUN_SOCK_XDP as bindings::sock_flags,
                c_int::from(on),
            )
        }
    }

    /// `open_related_ns(&net->ns, get_net_ns)` of the socket's namespace
    /// (`SIOCGSKNS`) if the caller has `CAP_NET_ADMIN` there, else `EPERM`:
    /// a new file descriptor for the namespace.
    pub(crate) fn open_netns(&self) -> Result<isize> {
        // SAFETY: A live socket; its namespace lives as long as it does.
        let net = unsafe { bindings::sock_net(self.sk()) };
        open_netns(net)
    }
}

/// The `si_code` of an `O_ASYNC` signal: why it came.
#[derive(Clone, Copy)]
#[repr(i32)]
pub(crate) enum FasyncBand {
    /// `POLL_IN`: a packet to read.
    In = bindings::RTUN_POLL_IN,
    /// `POLL_OUT`: room to write.
    Out = bindings::RTUN_POLL_OUT,
}

/// `kill_fasync()` on `sk`'s socket's list.
///
/// # Safety
///
/// `sk` is a live socket of ours, with its `struct socket`.
unsafe fn kill_fasync_sk(sk: *mut bindings::sock, band: c_int) {
    // SAFETY: As the caller promises.
    unsafe {
        let sock = (*sk).sk_socket;
        bindings::kill_fasync(
            ptr::addr_of_mut!((*sock).wq.fasync_list),
            bindings::RTUN_SIGIO,
            band,
        )
    }
}

impl Drop for Sock {
    fn drop(&mut self) {
        if self.1.is_added() {
            // The driver did not delete the NAPI context (it must, under
            // rtnl, before it lets go of the socket): the context is on a
            // device's list, so the socket is leaked rather than freed
            // under it (the device stays held, and its unregistration
            // waits: a bug shows, memory stays safe).
            pr_warn!("rust_tun: socket dropped with its NAPI context live; leaking it\n");
            return;
        }
        // A deleted NAPI context may still be seen by RCU readers of its
        // device's list until its grace period. Sockets are dropped in
        // process context (a file's release, or under rtnl).
        self.1.wait_deleted();
        // SAFETY: Our reference; packets in flight hold theirs through
        // `sk_wmem_alloc`, and the socket is freed after the last.
        unsafe { bindings::sock_put(self.sk()) }
    }
}

/// `tun_sock_write_space()`: a written packet was freed; once the socket
/// is writable again, wake whoever waits on its queue: pollers, and writers
/// blocked in `sock_alloc_send_pskb()`; and, as tun.c, if a poller found
/// the socket full (`SOCKWQ_ASYNC_NOSPACE`), signal `O_ASYNC` owners with
/// `POLL_OUT` (once per time it was found full, not per freed packet).
///
/// Deliberate difference: tun.c also requires `SOCKWQ_ASYNC_NOSPACE` in the
/// socket's flags, which only its poll sets, so a blocking writer past the
/// send buffer that never polls sleeps until a signal (the socket core
/// flags the socket_wq's word, not the socket's, and only for `O_ASYNC`).
/// Waking on any sleeper, as `sock_def_write_space()` does, is also one
/// load instead of an atomic bit operation per freed packet; the flag is
/// read before it is cleared, so the atomic runs only after a full poll.
///
/// # Safety
///
/// Called by `sock_wfree()` on one of our sockets, which is alive (the
/// packet holds a reference through `sk_wmem_alloc`).
unsafe extern "C" fn sock_write_space(sk: *mut bindings::sock) {
    // SAFETY: A live socket of ours, with its `struct socket`.
    unsafe {
        if !bindings::sock_writeable(sk) {
            return;
        }
        let wq = bindings::sk_sleep(sk);
        // Ordered after the waiter's `prepare_to_wait()`: `sock_wfree()`
        // gave the bytes back with a locked RMW, a full barrier on x86_64
        // (the one architecture this builds for), as `skwq_has_sleeper()`'s
        // `smp_mb()` would be.
        if bindings::waitqueue_active(wq) != 0 {
            bindings::wake_up_interruptible_sync_poll(
                wq,
                bindings::RTUN_EPOLLOUT | bindings::RTUN_EPOLLWRNORM | bindings::RTUN_EPOLLWRBAND,
            );
        }
        let nospace = nospace_word(sk);
        let nr = bindings::RTUN_SOCKWQ_ASYNC_NOSPACE;
        if bindings::test_bit(nr, nospace) && bindings::test_and_clear_bit(nr, nospace) {
            kill_fasync_sk(sk, FasyncBand::Out as c_int);
        }
    }
}

/// File state that carries a socket ([`Sock`]) standing for the file, as
/// tun.c's `tun_file` carries its `struct socket`: its
/// [`FileBound`](crate::sys::FileBound) sets the socket's `file` at open
/// and clears it at release, so the kernel's users of
/// `skb->sk->sk_socket->file` (the owner match of netfilter, uid logging)
/// see the file while it exists and nothing after; and vhost-net finds the
/// socket of a file through it (`sys/tun/vhost.rs`).
///
/// # Safety
///
/// `socket` returns the same socket every time it is called on one object
/// (implement it with [`impl_file_socket!`]).
pub(crate) unsafe trait FileSocket {
    /// The socket that stands for the file.
    fn socket(&self) -> &Sock;
}

/// Implements [`FileSocket`] and [`FileBound`](crate::sys::FileBound) for
/// `$ty` with its [`Sock`] in `$field`.
macro_rules! impl_file_socket {
    ($ty:ty, $field:ident) => {
        // The driver denies `unsafe_code`: this `unsafe` is sys/'s.
        #[allow(unsafe_code)]
        // SAFETY: The socket is a field of the object: always the same one.
        unsafe impl $crate::sys::tun::FileSocket for $ty {
            fn socket(&self) -> &$crate::sys::tun::Sock {
                &self.$field
            }
        }

        // The driver denies `unsafe_code`: this `unsafe` is sys/'s.
        #[allow(unsafe_code)]
        // SAFETY: The socket keeps the file until `unbind_file` orphans it.
        unsafe impl $crate::sys::FileBound for $ty {
            unsafe fn bind_file(&self, file: *mut $crate::bindings::file) {
                // SAFETY: `file` is valid until `unbind_file` (the
                // caller's contract), which orphans the socket.
                unsafe { $crate::sys::tun::FileSocket::socket(self).graft_file(file) }
            }

            fn unbind_file(&self) {
                $crate::sys::tun::FileSocket::socket(self).orphan_file();
            }
        }
    };
}
pub(crate) use impl_file_socket;
