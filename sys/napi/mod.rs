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

use super::netdev::device::NetDevice;
use super::skb::SkBuff;
use super::sock::Sock;
use super::sync::rtnl::Rtnl;
use super::NET_SKB_PAD;
use crate::bindings;
use core::cell::UnsafeCell;
use core::ffi::c_int;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
use kernel::prelude::*;

pub(super) mod frags;

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
