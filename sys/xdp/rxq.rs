// SPDX-License-Identifier: GPL-2.0

//! The receive queue an XDP program sees (`struct xdp_rxq_info`): one
//! filled on the stack for a packet ([`XdpRxq`]), and a queue's own, kept
//! with it as tun.c keeps `tfile->xdp_rxq` ([`QueueXdpRxq`]).

use crate::bindings;
use crate::sys::netdev::device::NetDevice;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::types::Opaque;

/// The receive queue a program sees (`xdp_rxq_info`: its device and queue
/// index, the shared-page memory model of a driver's page fragments), for
/// as long as the device it names is borrowed (`'d`). Registers nothing:
/// the shared-page model needs no allocator (`xdp_rxq_info_reg_mem_model()`
/// with `MEM_TYPE_PAGE_SHARED` only records the type).
///
/// # Invariants
///
/// `dev` is a device that lives for `'d`; no other field is written
/// while the value is borrowed but `queue_index`, by atomic stores.
#[repr(transparent)]
pub(crate) struct XdpRxq<'d>(
    pub(super) Opaque<bindings::xdp_rxq_info>,
    PhantomData<&'d ()>,
);

impl<'d> XdpRxq<'d> {
    /// Queue `queue_index` of `dev`, filled on the caller's stack.
    #[inline]
    pub(crate) fn new<P>(dev: &'d NetDevice<P>, queue_index: u16) -> Self {
        // INVARIANT: `dev` is borrowed for `'d`. Memory model 0:
        // `MEM_TYPE_PAGE_SHARED`.
        Self(
            Opaque::new(bindings::xdp_rxq_info {
                dev: dev.as_ptr(),
                queue_index: u32::from(queue_index),
                ..Default::default()
            }),
            PhantomData,
        )
    }
}

/// A queue's own `xdp_rxq_info`, kept with it (tun.c's `tfile->xdp_rxq`)
/// so that the data path fills nothing per packet: bound to the first
/// device the queue is attached to, its index kept current by whoever
/// moves the queue ([`QueueXdpRxq::set_queue_index`]).
///
/// Deliberate difference from tun.c, which registers it again for each
/// device: the device is set once (`NULL` to a device) and never
/// changed, so that an [`XdpRxq`] the data path borrowed
/// ([`QueueXdpRxq::get`]) names a device the borrower holds for as long
/// as it borrows it. A queue attached to a second device is told `None`
/// and fills one per packet ([`XdpRxq::new`]).
///
/// # Invariants
///
/// `dev` goes from `NULL` to a device at most once; `dev` and
/// `queue_index` are written by atomic operations only, nothing else
/// after initialisation.
pub(crate) struct QueueXdpRxq(Opaque<bindings::xdp_rxq_info>);

// SAFETY: Written by atomic operations only (type invariants); the device
// pointer is only compared until it is proven to name a held device.
unsafe impl Send for QueueXdpRxq {}
// SAFETY: As above.
unsafe impl Sync for QueueXdpRxq {}

impl QueueXdpRxq {
    /// Bound to no device yet.
    pub(crate) fn new() -> Self {
        // INVARIANT: No device; memory model 0, `MEM_TYPE_PAGE_SHARED`.
        Self(Opaque::new(bindings::xdp_rxq_info::default()))
    }

    /// `dev`'s field, as an atomic.
    #[inline(always)]
    fn dev(&self) -> &AtomicPtr<bindings::net_device> {
        // SAFETY: The field is aligned, lives as long as `self`, and is
        // only accessed atomically (type invariants).
        unsafe { AtomicPtr::from_ptr(core::ptr::addr_of_mut!((*self.0.get()).dev)) }
    }

    /// Binds the queue to `dev` if it is bound to none yet (tun.c's
    /// `xdp_rxq_info_reg()` in `tun_attach()`), with index `queue_index`.
    pub(crate) fn bind<P>(&self, dev: &NetDevice<P>, queue_index: u16) {
        self.set_queue_index(queue_index);
        // INVARIANT: `NULL` to a device, once.
        let _ = self.dev().compare_exchange(
            core::ptr::null_mut(),
            dev.as_ptr(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// The queue's index as programs see it (`rx_queue_index`); tun.c's
    /// `ntfile->xdp_rxq.queue_index = index` when `tun_detach()` moves a
    /// queue.
    #[inline]
    pub(crate) fn set_queue_index(&self, queue_index: u16) {
        // SAFETY: The field is aligned, lives as long as `self`, and is
        // only written atomically (type invariants). Programs read it
        // with one aligned load, whole.
        let q =
            unsafe { AtomicU32::from_ptr(core::ptr::addr_of_mut!((*self.0.get()).queue_index)) };
        q.store(u32::from(queue_index), Ordering::Relaxed);
    }

    /// The queue's receive queue if it is bound to `dev`, for as long as
    /// `dev` is borrowed: its device cannot change any more.
    #[inline(always)]
    pub(crate) fn get<'a, P>(&'a self, dev: &'a NetDevice<P>) -> Option<&'a XdpRxq<'a>> {
        if self.dev().load(Ordering::Relaxed) != dev.as_ptr() {
            return None;
        }
        // SAFETY: `XdpRxq` is a transparent `xdp_rxq_info`. INVARIANT: Its
        // device is `dev`, borrowed for `'a`, and stays so (type
        // invariants: set once); only `queue_index` is written meanwhile,
        // atomically.
        Some(unsafe { &*self.0.get().cast::<XdpRxq<'a>>() })
    }
}
