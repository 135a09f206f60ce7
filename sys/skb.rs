// SPDX-License-Identifier: GPL-2.0

//! Packets and user buffers: [`SkBuff`] (an owned `sk_buff`), [`Unfilled`]
//! (one whose bytes are not written yet), [`IovIterSource`] and
//! [`IovIterDest`] (7.3's `kernel::iov` shapes).
//!
//! The iterators are the module's own on 7.3 too, a deliberate difference
//! from `kernel::iov::{IovIterSource, IovIterDest}`, whose API would fit:
//! their `len`, `is_empty` and `advance` are these, their public `as_raw`
//! lets `sys/` add the rest as extension traits (`copy_from_iter_full`,
//! `copy_to_iter_full` through C's inline `copy_to_iter()`, `zero`,
//! `skb_copy_datagram_iter`, `skb_copy_datagram_from_iter`, the frags
//! path's `iter_is_iovec()` and `nr_segs`), and their `&mut` shape is the
//! driver's already. What they would add is a check per packet: their
//! `from_raw` asserts the direction (`assert_eq!(data_source,
//! ITER_SOURCE)`), which 7.3's tun.o then has in `write_iter`,
//! `read_iter`, `sendmsg` and `recvmsg`: a load, a test and a branch to
//! `call core::panicking::assert_failed::<bool, bool>`, one more call in
//! each of those functions (never taken: the VFS and vhost-net pass the
//! right direction, which is `from_raw`'s safety condition anyway). The
//! call counts of the per-packet paths stay as they are, so the checked
//! constructor stays out of them. 6.12 has no `kernel::iov`.

use super::netdev::device::NetDevice;
use super::sync::lock::BhDisabled;
use crate::bindings;
use core::ffi::{c_int, c_uint};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::prelude::*;

// ---------------------------------------------------------------------------
// iov_iter.

/// The user buffer of one `write`/`writev` call, which data is copied from
/// (7.3's `kernel::iov::IovIterSource`).
///
/// # Invariants
///
/// A valid `iov_iter` of direction `ITER_SOURCE`, usable for `'data`.
pub(crate) struct IovIterSource<'data>(
    *mut bindings::iov_iter,
    PhantomData<&'data mut bindings::iov_iter>,
);

/// The user buffer of one `read`/`readv` call, which data is copied to
/// (7.3's `kernel::iov::IovIterDest`).
///
/// # Invariants
///
/// A valid `iov_iter` of direction `ITER_DEST`, usable for `'data`.
pub(crate) struct IovIterDest<'data>(
    *mut bindings::iov_iter,
    PhantomData<&'data mut bindings::iov_iter>,
);

impl IovIterSource<'_> {
    /// # Safety
    ///
    /// `i` is a valid `ITER_SOURCE` iterator for as long as the result is
    /// used (a file operation's iterator, during the operation).
    pub(super) unsafe fn from_raw(i: *mut bindings::iov_iter) -> Self {
        // INVARIANT: As the caller guarantees.
        Self(i, PhantomData)
    }

    /// The `iov_iter`.
    pub(super) fn as_raw(&mut self) -> *mut bindings::iov_iter {
        self.0
    }

    /// `iov_iter_count()`: bytes left.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        // SAFETY: Valid for the call (type invariant of `from_raw`).
        unsafe { bindings::iov_iter_count(self.0) }
    }

    /// `copy_from_iter_full()`: fills `buf` entirely or fails with `EFAULT`
    /// (leaving the iterator as it was).
    #[inline(always)]
    pub(crate) fn copy_from_iter_full(&mut self, buf: &mut [u8]) -> Result {
        // SAFETY: `buf` is valid for `buf.len()` bytes of writes; the
        // iterator is valid for the call.
        if unsafe { bindings::copy_from_iter_full(buf.as_mut_ptr().cast(), buf.len(), self.0) } {
            Ok(())
        } else {
            Err(EFAULT)
        }
    }

    /// `iov_iter_advance()`: skips `n` bytes.
    pub(crate) fn advance(&mut self, n: usize) {
        // SAFETY: A valid iterator; advancing past its end stops at it.
        unsafe { bindings::iov_iter_advance(self.0, n) }
    }
}

impl IovIterDest<'_> {
    /// # Safety
    ///
    /// `i` is a valid `ITER_DEST` iterator for as long as the result is
    /// used (a file operation's iterator, during the operation).
    pub(super) unsafe fn from_raw(i: *mut bindings::iov_iter) -> Self {
        // INVARIANT: As the caller guarantees.
        Self(i, PhantomData)
    }

    /// `iov_iter_count()`: room left.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        // SAFETY: Valid for the call (type invariant of `from_raw`).
        unsafe { bindings::iov_iter_count(self.0) }
    }

    /// Whether no room is left.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `copy_to_iter()` of all of `buf`, or `EFAULT`.
    pub(crate) fn copy_to_iter_full(&mut self, buf: &[u8]) -> Result {
        // SAFETY: `buf` is valid for `buf.len()` bytes of reads.
        let n = unsafe { bindings::copy_to_iter(buf.as_ptr().cast(), buf.len(), self.0) };
        if n == buf.len() {
            Ok(())
        } else {
            Err(EFAULT)
        }
    }

    /// `iov_iter_advance()`: skips `n` bytes.
    pub(crate) fn advance(&mut self, n: usize) {
        // SAFETY: A valid iterator; advancing past its end stops at it.
        unsafe { bindings::iov_iter_advance(self.0, n) }
    }

    /// `iov_iter_zero()`: writes `n` zero bytes (at most the room left);
    /// returns how many it wrote (fewer on a fault).
    pub(crate) fn zero(&mut self, n: usize) -> usize {
        // SAFETY: A valid iterator; it stops at its end or a fault.
        unsafe { bindings::iov_iter_zero(n, self.0) }
    }

    /// `skb_copy_datagram_iter()`: `len` bytes of `skb` from `offset`;
    /// `EFAULT` if user memory faults.
    pub(crate) fn skb_copy_datagram_iter(&mut self, skb: &SkBuff, offset: u32, len: u32) -> Result {
        // SAFETY: `skb` is a valid skb we own; `offset + len <= skb.len()`
        // is checked by `skb_copy_datagram_iter` itself.
        let err = unsafe {
            bindings::skb_copy_datagram_iter(skb.0.as_ptr(), offset as c_int, self.0, len as c_int)
        };
        if err == 0 {
            Ok(())
        } else {
            Err(EFAULT)
        }
    }
}

// ---------------------------------------------------------------------------
// sk_buff.

#[cfg(not(target_endian = "little"))]
compile_error!(
    "the vnet header's byte order assumes a little-endian host (no CONFIG_TUN_VNET_CROSS_LE)"
);

/// `enum skb_drop_reason`: why a packet is dropped, as `kfree_skb_reason()`
/// reports it (the `skb:kfree_skb` tracepoint, drop monitor, BPF). Only
/// the reasons tun.c gives; its default, `NOT_SPECIFIED`, is what an
/// [`SkBuff`] dropped without one reports (`kfree_skb()`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct DropReason(bindings::skb_drop_reason);

impl DropReason {
    /// No file behind the queue, or the device is down.
    pub(crate) const DEV_READY: Self = Self(bindings::skb_drop_reason_SKB_DROP_REASON_DEV_READY);
    /// The TAP address filter (`TUNSETTXFILTER`) refused the frame.
    pub(crate) const TAP_TXFILTER: Self =
        Self(bindings::skb_drop_reason_SKB_DROP_REASON_TAP_TXFILTER);
    /// The queue's ring is full.
    pub(crate) const FULL_RING: Self = Self(bindings::skb_drop_reason_SKB_DROP_REASON_FULL_RING);
    /// Copying from (or orphaning the pages of) user memory failed.
    pub(crate) const SKB_UCOPY_FAULT: Self =
        Self(bindings::skb_drop_reason_SKB_DROP_REASON_SKB_UCOPY_FAULT);
    /// The device's eBPF filter (`TUNSETFILTEREBPF`) returned 0.
    pub(crate) const TAP_FILTER: Self = Self(bindings::skb_drop_reason_SKB_DROP_REASON_TAP_FILTER);
    /// No memory to trim the packet to the length a filter returned.
    pub(crate) const NOMEM: Self = Self(bindings::skb_drop_reason_SKB_DROP_REASON_NOMEM);
    /// The link-layer header could not be pulled into the linear part.
    pub(crate) const HDR_TRUNC: Self = Self(bindings::skb_drop_reason_SKB_DROP_REASON_HDR_TRUNC);

    /// A reason C returned: `None` for `SKB_NOT_DROPPED_YET` (0).
    pub(super) fn from_c(reason: bindings::skb_drop_reason) -> Option<Self> {
        (reason != bindings::skb_drop_reason_SKB_NOT_DROPPED_YET).then_some(Self(reason))
    }
}

/// An owned `struct sk_buff`: freed with `kfree_skb` (a drop) unless handed
/// on ([`SkBuff::netif_receive_skb`], [`SkBuff::consume`], a ring).
///
/// # Invariants
///
/// The pointer is a valid skb that nobody else references, whose bytes are
/// initialised.
pub(crate) struct SkBuff(NonNull<bindings::sk_buff>);

// SAFETY: An skb we own can be freed or handed on from any thread.
unsafe impl Send for SkBuff {}

/// `ETH_HLEN`.
const ETH_HLEN: u32 = bindings::ETH_HLEN;

/// `&skb->headers`: the `struct_group` of `struct sk_buff` that holds
/// `protocol`, the header offsets and the VLAN tag, as bindgen lays it out.
///
/// # Safety
///
/// `skb` is a live skb.
#[inline(always)]
unsafe fn skb_headers(
    skb: *mut bindings::sk_buff,
) -> *mut bindings::sk_buff__bindgen_ty_4__bindgen_ty_2 {
    // CAST: `headers` is a member of the anonymous union at
    // `__bindgen_anon_4`; bindgen's `__BindgenUnionField` marks its place,
    // the start of the union.
    // SAFETY: In bounds of the live skb.
    unsafe { ptr::addr_of_mut!((*skb).__bindgen_anon_4.headers).cast() }
}

impl SkBuff {
    /// # Safety
    ///
    /// `skb` is a valid, filled skb the caller owns and gives up.
    pub(super) unsafe fn from_raw(skb: *mut bindings::sk_buff) -> Self {
        // SAFETY: Non-null by the caller's guarantee.
        Self(unsafe { NonNull::new_unchecked(skb) })
    }

    /// Gives up ownership: the raw skb.
    pub(super) fn into_raw(self) -> *mut bindings::sk_buff {
        core::mem::ManuallyDrop::new(self).0.as_ptr()
    }

    pub(super) fn as_ptr(&self) -> *mut bindings::sk_buff {
        self.0.as_ptr()
    }

    /// `skb->len`.
    #[inline(always)]
    pub(crate) fn len(&self) -> u32 {
        // SAFETY: A valid skb (type invariants).
        unsafe { (*self.as_ptr()).len }
    }

    /// `skb->protocol`, in network byte order.
    #[inline(always)]
    pub(crate) fn protocol(&self) -> u16 {
        // SAFETY: A valid skb.
        unsafe { (*skb_headers(self.as_ptr())).protocol }
    }

    /// `skb_get_queue_mapping()`.
    #[inline(always)]
    pub(crate) fn queue_mapping(&self) -> u16 {
        // SAFETY: A valid skb.
        unsafe { bindings::skb_get_queue_mapping(self.as_ptr()) }
    }

    /// `__skb_get_hash_symmetric()`: the flow hash, the same for both
    /// directions of a flow.
    #[inline(always)]
    pub(crate) fn hash_symmetric(&self) -> u32 {
        // SAFETY: A valid skb; the flow dissector only reads it.
        unsafe { bindings::__skb_get_hash_symmetric(self.as_ptr()) }
    }

    /// `skb_record_rx_queue()`.
    #[inline(always)]
    pub(crate) fn record_rx_queue(&mut self, queue: u16) {
        // SAFETY: An skb we own.
        unsafe { bindings::skb_record_rx_queue(self.as_ptr(), queue) }
    }

    /// `skb_orphan()`: drops the owning socket's claim, as tun does before
    /// holding an skb indefinitely.
    #[inline(always)]
    pub(crate) fn orphan(&mut self) {
        // SAFETY: An skb we own.
        unsafe { bindings::skb_orphan(self.as_ptr()) }
    }

    /// `pskb_may_pull()`: at least `len` bytes in the linear part.
    pub(crate) fn may_pull(&mut self, len: u32) -> bool {
        // SAFETY: An skb we own.
        unsafe { bindings::pskb_may_pull(self.as_ptr(), len) }
    }

    /// The skb's VLAN tag kept out of band (`skb_vlan_tag_present()`):
    /// its protocol (network byte order) and TCI.
    pub(crate) fn vlan_tag(&self) -> Option<(u16, u16)> {
        // SAFETY: A valid skb; `vlan_proto` is a plain field of its
        // `headers` group (tun.c reads `skb->vlan_proto`).
        unsafe {
            bindings::skb_vlan_tag_present(self.as_ptr()).then(|| {
                (
                    (*skb_headers(self.as_ptr()))
                        .__bindgen_anon_2
                        .__bindgen_anon_1
                        .vlan_proto,
                    bindings::skb_vlan_tag_get(self.as_ptr()),
                )
            })
        }
    }

    /// The first byte of the packet data, if any is linear.
    pub(crate) fn first_byte(&self) -> Option<u8> {
        // SAFETY: A valid skb; `skb_headlen()` bytes at `data` are
        // initialised (type invariants).
        unsafe {
            (bindings::skb_headlen(self.as_ptr()) != 0).then(|| ptr::read((*self.as_ptr()).data))
        }
    }

    /// The first `N` bytes of the packet data, if that many are linear
    /// (a TAP frame's destination address: tun.c's `run_filter()` reads
    /// `skb->data`).
    pub(crate) fn head<const N: usize>(&self) -> Option<[u8; N]> {
        // SAFETY: A valid skb; `skb_headlen()` bytes at `data` are
        // initialised, and we read `N` only if that many are there.
        unsafe {
            (bindings::skb_headlen(self.as_ptr()) as usize >= N)
                .then(|| ptr::read_unaligned((*self.as_ptr()).data.cast::<[u8; N]>()))
        }
    }

    /// `skb->dev = dev`: the device the packet arrives on, set before
    /// anything that reads it (7.3's `virtio_net_hdr_to_skb()` dissects
    /// GSO headers through `dev_parse_header_protocol()`, which reads
    /// `skb->dev->header_ops`).
    pub(crate) fn set_dev<P>(&mut self, dev: &NetDevice<P>) {
        // SAFETY: An skb we own; `dev` is a live device, which outlives the
        // packet's delivery (the caller holds a reference).
        unsafe {
            (*self.as_ptr())
                .__bindgen_anon_1
                .__bindgen_anon_1
                .__bindgen_anon_1
                .dev = dev.as_ptr();
        }
    }

    /// An L3 packet: `skb_reset_mac_header()`, `skb_reset_network_header()`
    /// (both at the data: a TUN packet has no link-layer header) and
    /// `skb->protocol` (network byte order).
    pub(crate) fn set_l3(&mut self, protocol_be: u16) {
        // SAFETY: An skb we own.
        unsafe {
            let skb = self.as_ptr();
            bindings::skb_reset_mac_header(skb);
            bindings::skb_reset_network_header(skb);
            (*skb_headers(skb)).protocol = protocol_be;
        }
    }

    /// A link-layer frame: `pskb_may_pull()` of the Ethernet header, then
    /// `skb_set_network_header(skb, ETH_HLEN)`, so that the vnet header's
    /// step finds the network header where it will be; `false` (nothing
    /// done) if the header cannot be pulled.
    #[inline]
    pub(crate) fn set_l2_network_header(&mut self) -> bool {
        if !self.may_pull(ETH_HLEN) {
            return false;
        }
        // SAFETY: An skb we own with `ETH_HLEN` linear bytes.
        unsafe { bindings::skb_set_network_header(self.as_ptr(), ETH_HLEN as i32) };
        true
    }

    /// `skb->protocol = eth_type_trans(skb, dev)`, after `pskb_may_pull()`
    /// of the Ethernet header; `false` (nothing done) if it cannot be pulled.
    #[inline]
    pub(crate) fn eth_type_trans<P>(&mut self, dev: &NetDevice<P>) -> bool {
        if !self.may_pull(ETH_HLEN) {
            return false;
        }
        // SAFETY: An skb we own with `ETH_HLEN` linear bytes.
        unsafe {
            let proto = bindings::eth_type_trans(self.as_ptr(), dev.as_ptr());
            set_protocol(self.as_ptr(), proto);
        }
        true
    }

    /// `skb_reset_network_header()` and `skb_probe_transport_header()`,
    /// as `tun_get_user()` does before handing the packet on.
    pub(crate) fn reset_network_probe_transport(&mut self) {
        // SAFETY: An skb we own.
        unsafe {
            bindings::skb_reset_network_header(self.as_ptr());
            bindings::skb_probe_transport_header(self.as_ptr());
        }
    }

    /// `skb_orphan_frags_rx()`: pages a zerocopy sender lent us are copied
    /// and the sender's completion runs now, not when a reader gets round
    /// to the packet. `ENOMEM` if the copy fails (the caller drops).
    #[inline(always)]
    pub(crate) fn orphan_frags_rx(&mut self) -> Result {
        // SAFETY: An skb we own; the gfp of `ndo_start_xmit` context.
        let err =
            unsafe { bindings::skb_orphan_frags_rx(self.as_ptr(), bindings::RTUN_GFP_ATOMIC) };
        if err == 0 {
            Ok(())
        } else {
            Err(ENOMEM)
        }
    }

    /// `pskb_trim()`: the packet cut to `len` bytes (nothing happens if it
    /// is not longer); `ENOMEM` if a shared or paged packet could not be
    /// made private to cut it (the caller drops).
    pub(crate) fn trim(&mut self, len: u32) -> Result {
        // SAFETY: An skb we own; the trim allocates with GFP_ATOMIC only.
        let err = unsafe { bindings::pskb_trim(self.as_ptr(), len) };
        if err == 0 {
            Ok(())
        } else {
            Err(ENOMEM)
        }
    }

    /// `skb_tx_timestamp()`: the software transmit timestamp a socket may
    /// have asked for (before `skb_orphan()`, which forgets the socket).
    #[inline(always)]
    pub(crate) fn tx_timestamp(&mut self) {
        // SAFETY: An skb we own.
        unsafe { bindings::skb_tx_timestamp(self.as_ptr()) }
    }

    /// `nf_reset_ct()`: the packet leaves the host; it keeps no conntrack
    /// reference (without `CONFIG_NF_CONNTRACK` there is none to drop).
    #[inline(always)]
    pub(crate) fn nf_reset_ct(&mut self) {
        // SAFETY: An skb we own.
        unsafe { bindings::nf_reset_ct(self.as_ptr()) }
    }

    /// `skb_tx_error()` then `kfree_skb_reason()`: a transmit drop; a
    /// zerocopy sender learns that its data did not go out.
    pub(crate) fn tx_error_drop(self, reason: DropReason) {
        // SAFETY: An skb we own (freed right after).
        unsafe { bindings::skb_tx_error(self.as_ptr()) };
        self.drop_reason(reason);
    }

    /// `kfree_skb_reason()`: a drop, and why.
    pub(crate) fn drop_reason(self, reason: DropReason) {
        // SAFETY: We own the skb and free it.
        unsafe { bindings::kfree_skb_reason(self.into_raw(), reason.0) };
    }

    /// `netif_receive_skb()`: hands the packet to the stack, now, in this
    /// context (bottom halves off, as the receive path needs).
    pub(crate) fn netif_receive_skb(self, _bh: &BhDisabled) {
        // SAFETY: We own the skb and give it away; bottom halves are off.
        unsafe { bindings::netif_receive_skb(self.into_raw()) };
    }

    /// `consume_skb()`: frees a packet that was delivered (not a drop).
    #[inline(always)]
    pub(crate) fn consume(self) {
        // SAFETY: We own the skb and free it.
        unsafe { bindings::consume_skb(self.into_raw()) };
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: We own the skb; a drop is a drop (`kfree_skb`).
        unsafe { bindings::kfree_skb(self.as_ptr()) };
    }
}

/// An skb from [`Sock::alloc_send_skb`] whose bytes are not written yet:
/// no safe code sees them until [`Unfilled::copy_from_iter`] has.
///
/// # Invariants
///
/// A valid skb nobody else references.
pub(crate) struct Unfilled(NonNull<bindings::sk_buff>);

impl Unfilled {
    /// Claims a fresh skb from `sock_alloc_send_pskb()` with `prepad +
    /// linear` bytes of head room and `len - linear` bytes of page
    /// fragments: reserves the pad, claims the linear part, accounts the
    /// fragments (the tail of tun.c's `tun_alloc_skb()`).
    ///
    /// # Safety
    ///
    /// `p` is such an skb, and the caller's alone.
    pub(super) unsafe fn claim(
        p: NonNull<bindings::sk_buff>,
        prepad: usize,
        len: usize,
        linear: usize,
    ) -> Self {
        // SAFETY: As the caller guarantees.
        unsafe {
            let skb = p.as_ptr();
            bindings::skb_reserve(skb, prepad as c_int);
            bindings::skb_put(skb, linear as c_uint);
            (*skb).data_len = (len - linear) as c_uint;
            (*skb).len = len as c_uint;
        }
        // INVARIANT: Ours alone; not filled yet.
        Self(p)
    }

    /// `skb_copy_datagram_from_iter()` of the whole packet: the skb, now
    /// filled, or `EFAULT` (the skb is dropped, `SKB_UCOPY_FAULT`).
    pub(crate) fn copy_from_iter(self, from: &mut IovIterSource<'_>) -> Result<SkBuff> {
        let p = core::mem::ManuallyDrop::new(self).0.as_ptr();
        // SAFETY: The skb is ours; `len` bytes of head and fragments are
        // there to be written; the iterator is valid for the call.
        let err = unsafe {
            bindings::skb_copy_datagram_from_iter(p, 0, from.as_raw(), (*p).len as c_int)
        };
        // SAFETY: Ours; filled if the copy succeeded, and dropped unread
        // otherwise (a `SkBuff`'s drop only frees it).
        let skb = unsafe { SkBuff::from_raw(p) };
        if err == 0 {
            Ok(skb)
        } else {
            skb.drop_reason(DropReason::SKB_UCOPY_FAULT);
            Err(EFAULT)
        }
    }
}

impl Drop for Unfilled {
    fn drop(&mut self) {
        // SAFETY: Ours; freeing reads no packet bytes.
        unsafe { bindings::kfree_skb(self.0.as_ptr()) };
    }
}

/// `skb->protocol = proto`.
///
/// # Safety
///
/// `skb` is a live skb the caller owns.
#[inline(always)]
pub(super) unsafe fn set_protocol(skb: *mut bindings::sk_buff, proto: u16) {
    // SAFETY: As the caller guarantees.
    unsafe { (*skb_headers(skb)).protocol = proto };
}
