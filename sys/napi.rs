// SPDX-License-Identifier: GPL-2.0

//! `IFF_NAPI`: a socket's write queue as the receive queue of a NAPI
//! context, as tun.c's `tfile->napi` (`tun_napi_init`, `tun_napi_enable`,
//! `tun_napi_disable`, `tun_napi_del`, `tun_napi_receive`, `tun_napi_poll`).
//! A writer queues its packet on the socket's `sk_write_queue` and
//! schedules the context; the poll function, in softirq context, hands the
//! queued packets to GRO (`napi_gro_receive()`), `NAPI_POLL_WEIGHT` at a
//! time.
//!
//! The `napi_struct` lives in the socket (`struct rtun_sock`), so the poll
//! function reaches its queue by `container_of` and needs nothing of the
//! driver. While the context is on its device's list the socket holds a
//! reference on the device (`dev_hold`), so the device cannot be freed
//! under it: a driver that forgot to delete the context before
//! unregistering would make unregistration wait, not free memory in use.
//!
//! Deleting a context (`__netif_napi_del()`) takes a grace-period cookie
//! instead of waiting (tun.c's `netif_napi_del()` waits for one per
//! queue): RCU readers of the device's NAPI list may still see the
//! context until a grace period has passed, so the socket's drop waits for
//! the cookie (`cond_synchronize_rcu_full()`), which the driver's own
//! `synchronize_net()` after detaching has normally satisfied. Deleting a
//! 256-queue device then waits for one grace period, not 256.

use super::netdev::NetDevice;
use super::rcu;
use super::skb::{IovIterSource, SkBuff};
use super::sock::Sock;
use super::sync::Rtnl;
use super::{errno, NET_SKB_PAD};
use crate::bindings;
use core::cell::UnsafeCell;
use core::ffi::{c_int, c_uint, c_ulong};
use core::mem::ManuallyDrop;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
use kernel::error::to_result;
use kernel::prelude::*;

/// `NAPI_POLL_WEIGHT`: the most packets one poll hands to GRO, and the
/// queue length past which a writer schedules the context even when more
/// data follows (tun.c).
pub(crate) const NAPI_POLL_WEIGHT: u32 = bindings::NAPI_POLL_WEIGHT;

/// `ETH_MAX_MTU - NET_SKB_PAD - NET_IP_ALIGN`: the largest frame an
/// `IFF_NAPI_FRAGS` write may carry (tun.c's `tun_napi_alloc_frags()`).
const FRAGS_MAX_LEN: usize =
    bindings::ETH_MAX_MTU as usize - NET_SKB_PAD - bindings::RTUN_NET_IP_ALIGN as usize;

/// The context's state, kept beside the socket; changed under rtnl only.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum State {
    /// Never set up (the file was not attached with `IFF_NAPI`), or deleted.
    None = 0,
    /// On the device's list and enabled: writers queue, polls run.
    Enabled = 1,
    /// On the device's list, disabled (the queue is detached).
    Disabled = 2,
}

/// A socket's NAPI context's state (tun.c: `tfile->napi_enabled` and
/// `tfile->detached`).
pub(crate) struct NapiState {
    state: AtomicU8,
    /// `IFF_NAPI_FRAGS` (tun.c: `tfile->napi_frags_enabled`): writes build
    /// their skb in the context (`napi_get_frags()`) and hand it to
    /// `napi_gro_frags()` themselves. Set with the context.
    frags: AtomicBool,
    /// The device the context is on, held (`dev_hold`) while it is.
    dev: AtomicPtr<bindings::net_device>,
    /// Set by a delete: the grace period after which no RCU reader of the
    /// device's NAPI list can see the context any more.
    deleted: UnsafeCell<Option<bindings::rcu_gp_oldstate>>,
}

// SAFETY: `deleted` is written under rtnl (`napi_del`) and read by the
// socket's drop, which has it exclusively.
unsafe impl Sync for NapiState {}

impl NapiState {
    pub(super) const fn new() -> Self {
        Self {
            state: AtomicU8::new(State::None as u8),
            frags: AtomicBool::new(false),
            dev: AtomicPtr::new(ptr::null_mut()),
            deleted: UnsafeCell::new(None),
        }
    }

    /// Waits, if needed, until RCU readers of a device's NAPI list can no
    /// longer see the deleted context (before its memory goes). May sleep.
    pub(super) fn wait_deleted(&mut self) {
        if let Some(mut gp) = self.deleted.get_mut().take() {
            // SAFETY: A cookie from `get_state_synchronize_rcu_full()`.
            unsafe { bindings::cond_synchronize_rcu_full(&mut gp) };
        }
    }

    fn get(&self) -> State {
        match self.state.load(Ordering::Acquire) {
            1 => State::Enabled,
            2 => State::Disabled,
            _ => State::None,
        }
    }

    fn set(&self, s: State) {
        self.state.store(s as u8, Ordering::Release)
    }
}

impl Sock {
    fn napi(&self) -> *mut bindings::napi_struct {
        // SAFETY: A live socket of ours (type invariant).
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).napi) }
    }

    fn write_queue(&self) -> *mut bindings::sk_buff_head {
        // SAFETY: A live socket; its write queue was initialised by
        // `sock_init_data_uid()`.
        unsafe { ptr::addr_of_mut!((*self.sk()).sk_write_queue) }
    }

    /// Whether the socket has a NAPI context (`tfile->napi_enabled`): set
    /// up by [`Sock::napi_init`] and not deleted.
    pub(crate) fn napi_enabled(&self) -> bool {
        self.1.get() != State::None
    }

    /// Whether writes go through `IFF_NAPI_FRAGS`
    /// ([`Sock::napi_alloc_frags`]): a context set up with it, not deleted.
    pub(crate) fn napi_frags_enabled(&self) -> bool {
        self.napi_enabled() && self.1.frags.load(Ordering::Relaxed)
    }

    /// `tun_napi_init()`: adds the socket's NAPI context to `dev` (a TX
    /// context: no busy polling, as `netif_napi_add_tx`) and enables it;
    /// with `frags`, writes will build their skbs in it
    /// (`IFF_NAPI_FRAGS`). A context already set up is left as it is.
    pub(crate) fn napi_init<P>(&self, dev: &NetDevice<P>, frags: bool, _rtnl: &Rtnl<'_>) {
        if self.1.get() != State::None {
            return;
        }
        self.1.frags.store(frags, Ordering::Relaxed);
        // SAFETY: `dev` is live (borrowed) and we hold a reference from
        // now until `napi_del`; the context is ours, not on any list (state
        // `None`), and lives in the socket, which lives at least as long
        // as this `Sock`; rtnl serialises the device's NAPI list.
        unsafe {
            bindings::dev_hold(dev.as_ptr());
            self.1.dev.store(dev.as_ptr(), Ordering::Relaxed);
            bindings::netif_napi_add_tx(dev.as_ptr(), self.napi(), Some(sock_napi_poll));
            bindings::napi_enable(self.napi());
        }
        self.1.set(State::Enabled);
    }

    /// `tun_napi_enable()`: a detached queue is attached again.
    pub(crate) fn napi_enable(&self, _rtnl: &Rtnl<'_>) {
        if self.1.get() == State::Disabled {
            // SAFETY: On its device's list and disabled (state), so
            // enabling it is valid; rtnl serialises state changes.
            unsafe { bindings::napi_enable(self.napi()) };
            self.1.set(State::Enabled);
        }
    }

    /// `tun_napi_disable()`: waits for a running poll to finish; no poll
    /// runs after it until [`Sock::napi_enable`].
    pub(crate) fn napi_disable(&self, _rtnl: &Rtnl<'_>) {
        if self.1.get() == State::Enabled {
            self.1.set(State::Disabled);
            // SAFETY: Enabled (state), so this returns (disabling twice
            // would wait forever); may sleep: process context under rtnl.
            unsafe { bindings::napi_disable(self.napi()) };
        }
    }

    /// `tun_napi_del()` (disabling first if needed) and the queue's purge:
    /// takes the context off its device's list and gives the device back.
    /// Does not wait for a grace period (see the module's comment).
    pub(crate) fn napi_del(&self, rtnl: &Rtnl<'_>) {
        self.napi_disable(rtnl);
        if self.1.get() == State::None {
            return;
        }
        // Under the frags mutex: an `IFF_NAPI_FRAGS` writer takes the
        // context's skb and gives it back under it (`napi_take_frags`,
        // `gro_frags`), and `__netif_napi_del()` frees it
        // (`napi_free_frags()`). Lock order: rtnl, then the mutex; no
        // holder of the mutex touches user memory or waits for rtnl.
        self.napi_lock();
        self.1.set(State::None);
        let dev = self.1.dev.swap(ptr::null_mut(), Ordering::Relaxed);
        let mut gp = core::mem::MaybeUninit::<bindings::rcu_gp_oldstate>::uninit();
        // SAFETY: On `dev`'s list and disabled, so no poll runs; `dev` is
        // live, held since `napi_init`; rtnl serialises the list and
        // `deleted` (see `NapiState`'s `Sync`), the mutex (taken above)
        // the context's skb. The context's memory stays until the socket's
        // drop has waited for the cookie taken here, after the list
        // removal.
        unsafe {
            bindings::__netif_napi_del(self.napi());
            self.napi_unlock();
            bindings::get_state_synchronize_rcu_full(gp.as_mut_ptr());
            *self.1.deleted.get() = Some(gp.assume_init());
            bindings::skb_queue_purge(self.write_queue());
            bindings::dev_put(dev);
        }
    }

    /// `tun_queue_purge()`'s write-queue part: frees what writers queued
    /// for a poll that will not come.
    pub(crate) fn napi_purge(&self) {
        // SAFETY: The socket's initialised write queue (`skb_queue_purge()`
        // takes its lock).
        unsafe { bindings::skb_queue_purge(self.write_queue()) }
    }

    /// tun.c's `IFF_NAPI` branch of `tun_get_user()`: queues `skb` for the
    /// context's next poll and schedules it (`more` is `MSG_MORE`: a batch
    /// waits until it ends or holds more than a poll takes). `EBUSY`, and
    /// the packet is dropped, if the context is disabled (the queue is
    /// detached).
    pub(crate) fn napi_receive(&self, skb: SkBuff, more: bool) -> Result {
        let q = self.write_queue();
        // SAFETY: The socket's write queue, whose lock `spin_lock_bh`
        // serialises writers against the poll (softirq).
        let lock = unsafe { ptr::addr_of_mut!((*q).lock) };
        // SAFETY: As above.
        unsafe { bindings::spin_lock_bh(lock) };
        if self.1.get() != State::Enabled {
            // SAFETY: Locked above, in this function (`skb` drops after).
            unsafe { bindings::spin_unlock_bh(lock) };
            return Err(EBUSY);
        }
        // SAFETY: The queue is locked and takes the packet's ownership;
        // unlocked with bottom halves still off, then the context is
        // scheduled (its device holds it until `napi_del`, which comes
        // after `napi_disable`: a disabled context ignores the schedule)
        // and bottom halves come back on, running the poll if it is due.
        unsafe {
            bindings::__skb_queue_tail(q, skb.into_raw());
            let len = bindings::skb_queue_len(q);
            bindings::spin_unlock(lock);
            if !more || len > NAPI_POLL_WEIGHT {
                bindings::napi_schedule(self.napi());
            }
            bindings::local_bh_enable();
        }
        Ok(())
    }
}

/// `tun_napi_poll()` / `tun_napi_receive()`: takes what writers queued and
/// hands up to `budget` packets to GRO; the rest goes back to the front of
/// the queue for the next poll.
///
/// # Safety
///
/// Called by the NAPI core, in softirq context, for a context that
/// [`Sock::napi_init`] set up in a live `rtun_sock` (the socket outlives
/// the context: `napi_del` runs before the socket's last reference goes,
/// or the socket is leaked; see `Sock`'s drop).
unsafe extern "C" fn sock_napi_poll(napi: *mut bindings::napi_struct, budget: c_int) -> c_int {
    let mut process = core::mem::MaybeUninit::<bindings::sk_buff_head>::uninit();
    let process = process.as_mut_ptr();
    let mut received = 0;
    // SAFETY: `napi` is inside a live `rtun_sock` (function contract), so
    // its socket's write queue is valid; `process` is a local list head
    // initialised before use and empty (every packet spliced back or
    // handed to GRO) when it goes out of scope.
    unsafe {
        let rs = kernel::container_of!(napi, bindings::rtun_sock, napi).cast_mut();
        let q = ptr::addr_of_mut!((*rs).sk.sk_write_queue);
        let lock = ptr::addr_of_mut!((*q).lock);
        bindings::__skb_queue_head_init(process);
        bindings::spin_lock(lock);
        bindings::skb_queue_splice_tail_init(q, process);
        bindings::spin_unlock(lock);

        while received < budget {
            let skb = bindings::__skb_dequeue(process);
            if skb.is_null() {
                break;
            }
            bindings::napi_gro_receive(napi, skb);
            received += 1;
        }

        if bindings::skb_queue_empty(process) == 0 {
            bindings::spin_lock(lock);
            bindings::skb_queue_splice(process, q);
            bindings::spin_unlock(lock);
        }
        if received < budget {
            bindings::napi_complete_done(napi, received);
        }
    }
    received
}

// ---------------------------------------------------------------------------
// IFF_NAPI_FRAGS: the write builds its skb in the context and hands it to
// GRO itself (tun.c's `tun_napi_alloc_frags()` and the `frags` branches of
// `tun_get_user()`).
//
// Deliberate difference: tun.c fills `napi->skb` in place, holding
// `napi_mutex` from `napi_get_frags()` to `napi_gro_frags()`, across the
// copy from user space, which can sleep on a fault for as long as the
// writer wants; the device's deletion (`tun_napi_del()` ->
// `__netif_napi_del()` -> `napi_free_frags()`) does not take the mutex
// and frees the skb under the writer. Here the write takes the skb out of
// the context (`napi->skb = NULL`, under the mutex, not across any access
// to user memory) and owns it while it fills it; it puts it back and calls
// `napi_gro_frags()` only under the mutex again, after
// `napi_schedule_prep()` succeeded on a context that is still this
// device's. The deletion takes the mutex around `__netif_napi_del()`, so
// it only ever waits for those two short sections, never for user memory.
// Documentation/rust_tun.rst, "IFF_NAPI_FRAGS and device deletion", has the
// C fix and its reproducer.

impl Sock {
    fn napi_mutex(&self) -> *mut bindings::mutex {
        // SAFETY: A live socket of ours; the mutex was initialised by
        // `Sock::new`.
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).napi_mutex) }
    }

    fn napi_lock(&self) {
        // SAFETY: The socket's initialised mutex; process context (may
        // sleep). Every holder releases it without touching user memory.
        unsafe { bindings::mutex_lock(self.napi_mutex()) }
    }

    /// # Safety
    ///
    /// The caller holds the frags mutex (taken by [`Sock::napi_lock`]).
    unsafe fn napi_unlock(&self) {
        // SAFETY: Held by the caller (contract).
        unsafe { bindings::mutex_unlock(self.napi_mutex()) }
    }

    /// Takes the context's frags skb (`napi_get_frags()`: the one a GRO
    /// call left for reuse, or a new one) out of the context: the caller
    /// owns it. `EBUSY` if the context was deleted, `ENOMEM`.
    fn napi_take_frags(&self) -> Result<SkBuff> {
        self.napi_lock();
        let skb = if self.1.get() == State::None {
            Err(EBUSY)
        } else {
            let napi = self.napi();
            // SAFETY: The context is on its device's list (state, which
            // `napi_del` changes under the mutex we hold), so `napi->dev`
            // is live; `napi->skb` is only touched under the mutex, and
            // `napi_get_frags()` wants bottom halves off. What it returns
            // is the context's skb, which we take: nobody else references
            // it once `napi->skb` is cleared.
            unsafe {
                bindings::local_bh_disable();
                let skb = bindings::napi_get_frags(napi);
                (*napi).skb = ptr::null_mut();
                bindings::local_bh_enable();
                if skb.is_null() {
                    Err(ENOMEM)
                } else {
                    Ok(SkBuff::from_raw(skb))
                }
            }
        };
        // SAFETY: Taken above, in this function.
        unsafe { self.napi_unlock() };
        skb
    }

    /// `tun_napi_alloc_frags()`: takes an skb from the context
    /// (`napi_get_frags()`) and lays it out as the writer's buffer is: the
    /// rest of its current segment in the linear part, each further
    /// segment (1 to `PAGE_SIZE` bytes) one page fragment. `len` is what
    /// `from` holds. `EMSGSIZE` for more segments than an skb has fragments
    /// or a frame larger than `ETH_MAX_MTU` allows, `EINVAL` for an empty or
    /// too large segment, `EBUSY` if the context was deleted, `ENOMEM`.
    /// May sleep.
    ///
    /// Deliberate difference: a buffer that is not a plain user iovec
    /// (tun.c reads any iterator as one) is `EINVAL`.
    pub(crate) fn napi_alloc_frags(
        &self,
        len: usize,
        from: &mut IovIterSource<'_>,
    ) -> Result<NapiFragsUnfilled<'_>> {
        let it = from.as_raw();
        // SAFETY: `from` is valid for the call; these read its type and
        // segment count.
        if !unsafe { bindings::iter_is_iovec(it) || bindings::iter_is_ubuf(it) } {
            return Err(EINVAL);
        }
        // SAFETY: As above.
        let nr_segs = unsafe { (*it).__bindgen_anon_2.nr_segs };
        if nr_segs > bindings::RTUN_MAX_SKB_FRAGS as c_ulong + 1 || len > FRAGS_MAX_LEN {
            return Err(errno::EMSGSIZE());
        }
        let skb = self.napi_take_frags()?;
        let p = skb.as_ptr();
        // SAFETY: `p` is our fresh frags skb (dropping `skb` on an error
        // frees it with its fragments); the iterator's current segment and
        // the `nr_segs - 1` after it are user iovecs (checked above), whose
        // lengths are read.
        unsafe {
            let linear = bindings::iov_iter_single_seg_count(it);
            to_result(bindings::__skb_grow(p, linear as c_uint))?;
            (*p).len = len as c_uint;
            (*p).data_len = (len - linear) as c_uint;
            (*p).truesize += (len - linear) as c_uint;
            let iov = bindings::iter_iov(it);
            for i in 1..nr_segs {
                let fragsz = (*iov.add(i as usize)).iov_len;
                if fragsz == 0 || fragsz > bindings::RTUN_PAGE_SIZE as usize {
                    return Err(EINVAL);
                }
                let frag = bindings::netdev_alloc_frag(fragsz as c_uint);
                if frag.is_null() {
                    return Err(ENOMEM);
                }
                let page = bindings::virt_to_head_page(frag);
                let base = bindings::page_address(page).cast::<u8>();
                let off = frag.cast::<u8>().offset_from(base) as c_int;
                bindings::skb_fill_page_desc(p, (i - 1) as c_int, page, off, fragsz as c_int);
            }
        }
        Ok(NapiFragsUnfilled {
            sock: self,
            skb,
            len,
        })
    }
}

/// A frags skb taken from the socket's context, laid out for a write but
/// not filled yet. Dropping it frees it.
///
/// # Invariants
///
/// `skb` is laid out for `len` bytes and nobody else references it; no
/// safe code reads its bytes before [`NapiFragsUnfilled::copy_from_iter`]
/// has written them.
pub(crate) struct NapiFragsUnfilled<'a> {
    sock: &'a Sock,
    skb: SkBuff,
    len: usize,
}

impl<'a> NapiFragsUnfilled<'a> {
    /// `skb_copy_datagram_from_iter()` of the frame: the filled skb, or
    /// `EFAULT` (the skb is freed). May sleep (a user page fault), holding
    /// nothing but the skb.
    pub(crate) fn copy_from_iter(self, from: &mut IovIterSource<'_>) -> Result<NapiFrags<'a>> {
        // SAFETY: Our skb, laid out for `len` bytes (invariant); the
        // iterator is valid for the call.
        let err = unsafe {
            bindings::skb_copy_datagram_from_iter(
                self.skb.as_ptr(),
                0,
                from.as_raw(),
                self.len as c_int,
            )
        };
        if err != 0 {
            return Err(EFAULT);
        }
        Ok(NapiFrags {
            sock: self.sock,
            skb: self.skb,
        })
    }
}

/// A filled `IFF_NAPI_FRAGS` skb, ours, for the write path's checks (it
/// derefs to [`SkBuff`]) until [`NapiFrags::lock`] and
/// [`NapiFragsLocked::gro_frags`] hand it to GRO in its context. Dropping
/// it frees it.
pub(crate) struct NapiFrags<'a> {
    sock: &'a Sock,
    skb: SkBuff,
}

impl core::ops::Deref for NapiFrags<'_> {
    type Target = SkBuff;
    fn deref(&self) -> &SkBuff {
        &self.skb
    }
}

impl core::ops::DerefMut for NapiFrags<'_> {
    fn deref_mut(&mut self) -> &mut SkBuff {
        &mut self.skb
    }
}

impl<'a> NapiFrags<'a> {
    /// Takes the socket's frags mutex (tun.c's `napi_mutex`) for the hand
    /// over to GRO. May sleep: call it before entering the RCU read
    /// section in which [`NapiFragsLocked::gro_frags`] runs.
    pub(crate) fn lock(self) -> NapiFragsLocked<'a> {
        self.sock.napi_lock();
        // INVARIANT: The mutex is held from here.
        NapiFragsLocked {
            sock: self.sock,
            skb: ManuallyDrop::new(self.skb),
        }
    }
}

/// A filled `IFF_NAPI_FRAGS` skb, ours, with the socket's frags mutex held.
/// Dropping it frees the skb and releases the mutex (neither sleeps: a
/// drop under RCU is fine).
///
/// # Invariants
///
/// The socket's frags mutex is held by this; `skb` is ours (not the
/// context's).
pub(crate) struct NapiFragsLocked<'a> {
    sock: &'a Sock,
    skb: ManuallyDrop<SkBuff>,
}

impl core::ops::Deref for NapiFragsLocked<'_> {
    type Target = SkBuff;
    fn deref(&self) -> &SkBuff {
        &self.skb
    }
}

impl core::ops::DerefMut for NapiFragsLocked<'_> {
    fn deref_mut(&mut self) -> &mut SkBuff {
        &mut self.skb
    }
}

impl NapiFragsLocked<'_> {
    /// The end of tun.c's `frags` branch: the Ethernet header back in
    /// front (`eth_type_trans()` pulled it), the headers the flow dissector
    /// finds (`eth_get_headlen()`) checked to be in the linear part, then
    /// the skb into the context and `napi_gro_frags()`, synchronously.
    /// `ENOMEM` when the headers are not linear (deliberate difference:
    /// tun.c also `WARN_ON_ONCE`s, which a user can trigger), `EBUSY` when
    /// the context is being polled, disabled, deleted or no longer `dev`'s;
    /// the skb is freed on either.
    pub(crate) fn gro_frags<P>(self, dev: &NetDevice<P>, _rcu: &rcu::Guard) -> Result {
        let sock = self.sock;
        let skb = self.skb.as_ptr();
        // SAFETY: Our filled skb; it has the headroom `napi_alloc_skb()`
        // reserved (at least `NET_SKB_PAD`, and the Ethernet header was
        // pulled from it); `dev` is live.
        let headlen_ok = unsafe {
            bindings::skb_push(skb, bindings::ETH_HLEN);
            let linear = bindings::skb_headlen(skb);
            bindings::eth_get_headlen(dev.as_ptr(), (*skb).data.cast(), linear) <= linear
        };
        if !headlen_ok {
            return Err(ENOMEM);
        }
        // The context's state and device change under rtnl and, for a
        // delete, under the mutex we hold: still on `dev`'s list.
        if sock.1.get() != State::Enabled || sock.1.dev.load(Ordering::Relaxed) != dev.as_ptr() {
            return Err(EBUSY);
        }
        let napi = sock.napi();
        let mut this = ManuallyDrop::new(self);
        // SAFETY: The context is on `dev`'s list (checked above, under the
        // mutex), so `napi_schedule_prep()` may be tried; when it succeeds
        // the context is ours for this one GRO call. `napi->skb` is only
        // touched under the mutex (or by GRO, which we run): the skb a
        // previous call left for reuse is set aside, ours goes in, and
        // `napi_gro_frags()` consumes it (or keeps it for reuse, as the
        // context's: either way no longer ours). The one set aside goes
        // back if the context has none now, else it is freed. Bottom
        // halves off as `napi_gro_frags()` wants. Then the mutex goes.
        unsafe {
            if !bindings::napi_schedule_prep(napi) {
                ManuallyDrop::drop(&mut this.skb);
                sock.napi_unlock();
                return Err(EBUSY);
            }
            let skb = ManuallyDrop::take(&mut this.skb).into_raw();
            bindings::local_bh_disable();
            let cached = (*napi).skb;
            (*napi).skb = skb;
            bindings::napi_gro_frags(napi);
            if !cached.is_null() {
                if (*napi).skb.is_null() {
                    (*napi).skb = cached;
                } else {
                    bindings::kfree_skb(cached);
                }
            }
            bindings::napi_complete(napi);
            bindings::local_bh_enable();
            sock.napi_unlock();
        }
        Ok(())
    }
}

impl Drop for NapiFragsLocked<'_> {
    fn drop(&mut self) {
        // SAFETY: The skb is ours and the mutex held (invariant); this is
        // the last use of either.
        unsafe {
            ManuallyDrop::drop(&mut self.skb);
            self.sock.napi_unlock();
        }
    }
}
