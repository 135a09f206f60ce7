// SPDX-License-Identifier: GPL-2.0

//! NAPI contexts: [`NapiContext`] (add to a device as a TX context,
//! enable, disable, delete with a grace-period cookie, queue a packet and
//! schedule), the poll function a driver implements ([`NapiPoll`], on the
//! context's owner, a [`HasNapi`]), and what the poll is lent ([`Napi`]:
//! hand packets to GRO, complete). tun's use of it (the socket's write
//! queue as the receive queue, `NAPI_POLL_WEIGHT`, the socket as the
//! owner) is the driver's (`napi.rs`, tun.c's `tun_napi_*`).
//!
//! While a context is on its device's list its [`NapiState`] holds a
//! reference on the device (`dev_hold`), so the device cannot be freed
//! under it: a driver that forgot to delete the context before
//! unregistering would make unregistration wait, not free memory in use.
//!
//! Deleting a context (`__netif_napi_del()`) takes a grace-period cookie
//! instead of waiting (tun.c's `netif_napi_del()` waits for one per
//! queue): RCU readers of the device's NAPI list may still see the
//! context until a grace period has passed, so the owner's drop waits for
//! the cookie ([`NapiState::wait_deleted`]), which the driver's own
//! `synchronize_net()` after detaching has normally satisfied. Deleting a
//! 256-queue device then waits for one grace period, not 256.

use super::netdev::device::NetDevice;
use super::skb::SkBuff;
use super::skb_queue::SkbQueue;
use super::sync::lock::{BhDisabled, BhOff};
use super::sync::rtnl::Rtnl;
use super::NET_SKB_PAD;
use crate::bindings;
use core::cell::UnsafeCell;
use core::ffi::c_int;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// `NAPI_POLL_WEIGHT`: the budget of one poll of a context added with
/// `netif_napi_add_tx()`.
pub(crate) const NAPI_POLL_WEIGHT: u32 = bindings::NAPI_POLL_WEIGHT;

/// `ETH_MAX_MTU - NET_SKB_PAD - NET_IP_ALIGN`: the largest frame an
/// `IFF_NAPI_FRAGS` write may carry (tun.c's `tun_napi_alloc_frags()`).
pub(in crate::sys) const FRAGS_MAX_LEN: usize =
    bindings::ETH_MAX_MTU as usize - NET_SKB_PAD - bindings::RTUN_NET_IP_ALIGN as usize;

/// The context's state, kept beside the context; changed under rtnl only.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(in crate::sys) enum State {
    /// Never set up (the file was not attached with `IFF_NAPI`), or deleted.
    None = 0,
    /// On the device's list and enabled: writers queue, polls run.
    Enabled = 1,
    /// On the device's list, disabled (the queue is detached).
    Disabled = 2,
}

/// A NAPI context's state (tun.c: `tfile->napi_enabled` and
/// `tfile->detached`).
pub(crate) struct NapiState {
    state: AtomicU8,
    /// `IFF_NAPI_FRAGS` (tun.c: `tfile->napi_frags_enabled`): writes build
    /// their skb in the context (`napi_get_frags()`) and hand it to
    /// `napi_gro_frags()` themselves. Set with the context.
    frags: AtomicBool,
    /// The device the context is on, held (`dev_hold`) while it is.
    pub(in crate::sys) dev: AtomicPtr<bindings::net_device>,
    /// Set by a delete: the grace period after which no RCU reader of the
    /// device's NAPI list can see the context any more.
    deleted: UnsafeCell<Option<bindings::rtun_rcu_gp_state>>,
}

// SAFETY: `deleted` is written under rtnl (`NapiContext::del`) and read by
// the owner's drop, which has it exclusively.
unsafe impl Sync for NapiState {}

impl NapiState {
    pub(in crate::sys) const fn new() -> Self {
        Self {
            state: AtomicU8::new(State::None as u8),
            frags: AtomicBool::new(false),
            dev: AtomicPtr::new(ptr::null_mut()),
            deleted: UnsafeCell::new(None),
        }
    }

    /// Waits, if needed, until RCU readers of a device's NAPI list can no
    /// longer see the deleted context (before its memory goes). May sleep.
    pub(in crate::sys) fn wait_deleted(&mut self) {
        if let Some(mut gp) = self.deleted.get_mut().take() {
            // SAFETY: A cookie from `get_state_synchronize_rcu_full()`.
            unsafe { bindings::cond_synchronize_rcu_full(&mut gp) };
        }
    }

    /// Whether the context is set up (added and not deleted).
    pub(in crate::sys) fn is_added(&self) -> bool {
        self.get() != State::None
    }

    pub(in crate::sys) fn get(&self) -> State {
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

/// A NAPI context as its poll function is lent it ([`NapiPoll::poll`], in
/// softirq context).
///
/// # Invariants
///
/// An added, scheduled context whose poll is running: only the NAPI core
/// lends a `&Napi`, for the call.
#[repr(transparent)]
pub(crate) struct Napi(Opaque<bindings::napi_struct>);

impl Napi {
    /// `napi_gro_receive()`: hands `skb` to GRO.
    #[inline(always)]
    pub(crate) fn gro_receive(&self, skb: SkBuff) {
        // SAFETY: The context is polling, in softirq context (type
        // invariants); GRO takes the packet's ownership.
        unsafe { bindings::napi_gro_receive(self.0.get(), skb.into_raw()) };
    }

    /// `napi_complete_done()`: the poll did less than its budget and is
    /// done (`work_done` packets); the context may be scheduled again.
    #[inline(always)]
    pub(crate) fn complete_done(&self, work_done: u32) {
        // SAFETY: The context is polling (type invariants), which
        // completing ends.
        unsafe { bindings::napi_complete_done(self.0.get(), work_done as c_int) };
    }
}

/// A type a NAPI context is embedded in, which its poll function is given.
///
/// # Safety
///
/// `from_napi` returns the `Self` a context handed out for `Self` (by its
/// [`NapiContext`]) is embedded in.
pub(crate) unsafe trait HasNapi: Sized {
    /// The owner of `napi`.
    ///
    /// # Safety
    ///
    /// `napi` is the context of a live `Self`, alive for `'a`.
    unsafe fn from_napi<'a>(napi: *mut bindings::napi_struct) -> &'a Self;
}

/// A NAPI context's poll function (`napi->poll`), the driver's.
pub(crate) trait NapiPoll: 'static {
    /// The type the context is embedded in.
    type Owner: HasNapi;

    /// In softirq context: hands up to `budget` packets up (for example
    /// [`Napi::gro_receive`]) and returns how many; one that did less than
    /// `budget` calls [`Napi::complete_done`] first.
    fn poll(owner: &Self::Owner, napi: &Napi, budget: u32, bh: &BhOff) -> u32;
}

/// The C poll function of a [`NapiPoll`].
///
/// # Safety
///
/// Called by the NAPI core, in softirq context, for a context that
/// [`NapiContext::add_tx`] added for `T` (its owner outlives the context:
/// see [`NapiContext::del`]).
unsafe extern "C" fn napi_poll<T: NapiPoll>(
    napi: *mut bindings::napi_struct,
    budget: c_int,
) -> c_int {
    // SAFETY: The context was added for `T` in a live `T::Owner`
    // (function contract); `Napi` is transparent over `napi_struct`, and
    // the context polls for the duration of the call, in softirq context
    // (bottom halves off).
    let (owner, n, bh) = unsafe {
        (
            T::Owner::from_napi(napi),
            &*napi.cast::<Napi>(),
            BhOff::assume(),
        )
    };
    T::poll(owner, n, budget as u32, &bh) as c_int
}

/// A NAPI context embedded in an `O` (a [`HasNapi`]), with its state: what
/// the owner hands out to set it up, enable, disable, delete it and
/// schedule it.
///
/// # Invariants
///
/// `napi` is the context embedded in a live `O` whose state is `state`,
/// and `mutex` the initialised mutex beside it (held while an
/// `IFF_NAPI_FRAGS` writer owns the context's skb, see `frags`), all
/// alive for `'a`; until `state` says it was added, `napi` is not on any
/// list.
pub(crate) struct NapiContext<'a, O> {
    pub(in crate::sys) napi: *mut bindings::napi_struct,
    pub(in crate::sys) mutex: *mut bindings::mutex,
    pub(in crate::sys) state: &'a NapiState,
    pub(in crate::sys) _owner: PhantomData<&'a O>,
}

impl<O: HasNapi> NapiContext<'_, O> {
    /// Whether the context is set up (`tfile->napi_enabled`): added and
    /// not deleted.
    pub(crate) fn is_added(&self) -> bool {
        self.state.is_added()
    }

    /// Whether it was added for `IFF_NAPI_FRAGS` writes (`napi_get_frags()`)
    /// and not deleted.
    pub(crate) fn frags_enabled(&self) -> bool {
        self.is_added() && self.state.frags.load(Ordering::Relaxed)
    }

    /// `netif_napi_add_tx()` + `napi_enable()`: adds the context to `dev`
    /// (a TX context: no busy polling) with `T`'s poll function and enables
    /// it; with `frags`, writes will build their skbs in it
    /// (`IFF_NAPI_FRAGS`). A context already added is left as it is.
    pub(crate) fn add_tx<T: NapiPoll<Owner = O>, P>(
        &self,
        dev: &NetDevice<P>,
        frags: bool,
        _rtnl: &Rtnl<'_>,
    ) {
        if self.state.get() != State::None {
            return;
        }
        self.state.frags.store(frags, Ordering::Relaxed);
        // SAFETY: `dev` is live (borrowed) and we hold a reference from
        // now until `del`; the context is the owner's, not on any list
        // (state `None`), and lives in the owner, which outlives it (the
        // owner's drop waits for `del`'s grace period); rtnl serialises the
        // device's NAPI list.
        unsafe {
            bindings::dev_hold(dev.as_ptr());
            self.state.dev.store(dev.as_ptr(), Ordering::Relaxed);
            bindings::netif_napi_add_tx(dev.as_ptr(), self.napi, Some(napi_poll::<T>));
            bindings::napi_enable(self.napi);
        }
        self.state.set(State::Enabled);
    }

    /// `napi_enable()` of a disabled context (tun.c's `tun_napi_enable()`).
    pub(crate) fn enable(&self, _rtnl: &Rtnl<'_>) {
        if self.state.get() == State::Disabled {
            // SAFETY: On its device's list and disabled (state), so
            // enabling it is valid; rtnl serialises state changes.
            unsafe { bindings::napi_enable(self.napi) };
            self.state.set(State::Enabled);
        }
    }

    /// `napi_disable()` of an enabled context: waits for a running poll to
    /// finish; no poll runs after it until [`NapiContext::enable`].
    pub(crate) fn disable(&self, _rtnl: &Rtnl<'_>) {
        if self.state.get() == State::Enabled {
            self.state.set(State::Disabled);
            // SAFETY: Enabled (state), so this returns (disabling twice
            // would wait forever); may sleep: process context under rtnl.
            unsafe { bindings::napi_disable(self.napi) };
        }
    }

    /// `__netif_napi_del()` (disabling first if needed): takes the context
    /// off its device's list and gives the device back. Does not wait for
    /// a grace period (see the module's comment).
    pub(crate) fn del(&self, rtnl: &Rtnl<'_>) {
        self.disable(rtnl);
        if self.state.get() == State::None {
            return;
        }
        // Under the frags mutex: an `IFF_NAPI_FRAGS` writer takes the
        // context's skb and gives it back under it (`napi_take_frags`,
        // `gro_frags`), and `__netif_napi_del()` frees it
        // (`napi_free_frags()`). Lock order: rtnl, then the mutex; no
        // holder of the mutex touches user memory or waits for rtnl.
        // SAFETY: The initialised mutex beside the context (type
        // invariants); released below.
        unsafe { bindings::mutex_lock(self.mutex) };
        self.state.set(State::None);
        let dev = self.state.dev.swap(ptr::null_mut(), Ordering::Relaxed);
        let mut gp = core::mem::MaybeUninit::<bindings::rtun_rcu_gp_state>::uninit();
        // SAFETY: On `dev`'s list and disabled, so no poll runs; `dev` is
        // live, held since `add_tx`; rtnl serialises the list and
        // `deleted` (see `NapiState`'s `Sync`), the mutex (taken above)
        // the context's skb. The context's memory stays until the owner's
        // drop has waited for the cookie taken here, after the list
        // removal.
        unsafe {
            bindings::__netif_napi_del(self.napi);
            bindings::mutex_unlock(self.mutex);
            bindings::get_state_synchronize_rcu_full(gp.as_mut_ptr());
            *self.state.deleted.get() = Some(gp.assume_init());
            bindings::dev_put(dev);
        }
    }

    /// `napi_schedule()` of the context, if it is enabled (tun.c's at the
    /// end of a batch that queued packets); a context disabled or deleted
    /// is left alone.
    pub(crate) fn schedule(&self) {
        let _bh = BhDisabled::new();
        if self.state.get() == State::Enabled {
            // SAFETY: Added (state), so `napi` is initialised; with bottom
            // halves off (an RCU read section) it stays in memory even if
            // it is disabled and deleted from here on: the owner's drop
            // waits for the grace period `del` takes its cookie for. A
            // context disabled in between ignores the schedule
            // (`NAPI_STATE_DISABLE`), as `queue_tail`'s does.
            unsafe { bindings::napi_schedule(self.napi) };
        }
    }

    /// Queues `skb` at the tail of `queue` for the context's next poll, if
    /// the context is enabled, and schedules the context when `schedule`
    /// says so of the queue's length after it (tun.c's `IFF_NAPI` branch
    /// of `tun_get_user()`). `EBUSY`, and the packet is dropped, if the
    /// context is disabled or deleted.
    #[inline(always)]
    pub(crate) fn queue_tail(
        &self,
        queue: &SkbQueue,
        skb: SkBuff,
        schedule: impl FnOnce(u32) -> bool,
    ) -> Result {
        let q = queue.as_ptr();
        // SAFETY: An initialised queue (`SkbQueue`'s invariants), whose
        // lock `spin_lock_bh` serialises writers against the poll
        // (softirq).
        let lock = unsafe { ptr::addr_of_mut!((*q).lock) };
        // SAFETY: As above.
        unsafe { bindings::spin_lock_bh(lock) };
        if self.state.get() != State::Enabled {
            // SAFETY: Locked above, in this function (`skb` drops after).
            unsafe { bindings::spin_unlock_bh(lock) };
            return Err(EBUSY);
        }
        // SAFETY: The queue is locked and takes the packet's ownership;
        // unlocked with bottom halves still off, then the context (added:
        // enabled under the lock) is scheduled (its device holds it until
        // `del`, which comes after `disable`: a disabled context ignores
        // the schedule) and bottom halves come back on, running the poll
        // if it is due.
        unsafe {
            bindings::__skb_queue_tail(q, skb.into_raw());
            let len = bindings::skb_queue_len(q);
            bindings::spin_unlock(lock);
            if schedule(len) {
                bindings::napi_schedule(self.napi);
            }
            bindings::local_bh_enable();
        }
        Ok(())
    }
}
