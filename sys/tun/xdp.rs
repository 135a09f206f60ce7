// SPDX-License-Identifier: GPL-2.0

//! `xdp_buff`s as vhost-net hands them to `sendmsg` in a `TUN_MSG_PTR`
//! batch (`vhost_net_build_xdp()`): each a page fragment holding the
//! virtio-net header at `data_hard_start` and the frame at `data`, room for
//! `struct skb_shared_info` at the end, and one reference on its page that
//! the receiver takes over. tun.c's `tun_xdp_one()` builds an skb around
//! it, or hands it to the device's XDP program ([`XdpBuff::into_owned`]).

use super::vnet::VnetHdr;
use crate::bindings;
use crate::sys::netdev::device::NetDevice;
use crate::sys::skb::SkBuff;
use crate::sys::xdp::{build_skb_raw, OwnedXdpBuff, XdpRxq, XdpSlot};
use kernel::prelude::*;

/// A `TUN_MSG_PTR` batch: `xdp_buff`s, each given to us.
///
/// # Invariants
///
/// `bufs` yields live `xdp_buff`s as `vhost_net_build_xdp()` fills them
/// (`data <= data_end`, both in the buffer; `data` at least
/// `NET_SKB_PAD` bytes past `data_hard_start`, vhost-net's pad being
/// `VHOST_NET_RX_PAD`, `NET_SKB_PAD` and more, rounded up; the virtio-net
/// header at `tun_xdp_gso()`, at most an `int` into the pad), each owning one page
/// reference; those not yielded yet are released on drop. (A slice
/// iterator: one pointer compare per buffer.)
pub(crate) struct XdpBatch<'a> {
    bufs: core::slice::Iter<'a, bindings::xdp_buff>,
}

impl XdpBatch<'_> {
    /// # Safety
    ///
    /// `bufs` points to `num` `xdp_buff`s as described in the type
    /// invariants, handed over for the batch's life (read only: the skb
    /// built around one takes its page, not the `xdp_buff`).
    pub(super) unsafe fn new(bufs: *mut bindings::xdp_buff, num: usize) -> Self {
        let bufs: &[bindings::xdp_buff] = if bufs.is_null() || num == 0 {
            &[]
        } else {
            // SAFETY: `num` initialised `xdp_buff`s at `bufs`, live and not
            // written by anyone else for the batch's life (the caller).
            unsafe { core::slice::from_raw_parts(bufs, num) }
        };
        // INVARIANT: As the caller guarantees.
        Self { bufs: bufs.iter() }
    }
}

impl<'a> Iterator for XdpBatch<'a> {
    type Item = XdpBuff<'a>;

    #[inline]
    fn next(&mut self) -> Option<XdpBuff<'a>> {
        // INVARIANT: Its page reference goes with it.
        self.bufs.next().map(XdpBuff)
    }
}

impl Drop for XdpBatch<'_> {
    fn drop(&mut self) {
        // The buffers not handed out give their pages back.
        for b in self.by_ref() {
            drop(b);
        }
    }
}

/// One buffer of a batch.
///
/// # Invariants
///
/// A live `xdp_buff` of vhost-net's (`data <= data_end`, `data` at least
/// `NET_SKB_PAD` bytes past `data_hard_start`, the header at most an `int`
/// into them: [`XdpBatch`]'s) that owns one
/// reference on the page of `data`, given back on drop unless
/// [`XdpBuff::build_skb`] took it.
pub(crate) struct XdpBuff<'a>(&'a bindings::xdp_buff);

impl XdpBuff<'_> {
    /// The frame's length (`data_end - data`).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        // `data <= data_end`: vhost-net's layout (type invariants), so it
        // never wraps (and needs no overflow check).
        (self.0.data_end as usize).wrapping_sub(self.0.data as usize)
    }

    /// The virtio-net header in the headroom, where each kernel's tun.c
    /// reads it (`tun_xdp_gso()`), as tun.c reads it: unchecked, the pad
    /// holds a whole [`VnetHdr`] (checked at compile time against
    /// `NET_SKB_PAD`). Past the sender's header size, its bytes are the
    /// pad's; the caller reads no field beyond the size (the features of
    /// the device's header size, as tun.c). A copy: the skb takes the
    /// buffer over.
    #[inline]
    pub(crate) fn vnet_hdr(&self) -> VnetHdr {
        const {
            assert!(
                core::mem::size_of::<core::ffi::c_int>() + core::mem::size_of::<VnetHdr>()
                    <= crate::sys::NET_SKB_PAD
            )
        };
        // SAFETY: A live xdp_buff of the sender's layout.
        let at = unsafe { bindings::tun_xdp_gso(self.0) }.cast::<u8>();
        // SAFETY: A header's worth of the pad before `data`, which holds
        // one from `at` (type invariants, and the assertion above); any
        // bytes are a valid `VnetHdr` (plain integers); read without
        // assuming alignment.
        unsafe { core::ptr::read_unaligned(at.cast::<VnetHdr>()) }
    }

    /// `build_skb()` around the buffer (tun.c's `tun_xdp_one()`): headroom
    /// up to `data`, the frame, its metadata if any; the skb owns the page
    /// reference. `EINVAL` (the page given back) for a frame shorter than
    /// an Ethernet header, `ENOMEM` if no skb can be had.
    #[inline(always)]
    pub(crate) fn build_skb(self) -> Result<EthFrame> {
        if self.len() < ETH_HLEN {
            return Err(EINVAL);
        }
        let b = self.0;
        // The page reference goes to the skb, or back in `build_skb_raw`.
        core::mem::forget(self);
        // SAFETY: The buffer and its size as the sender laid them out, with
        // room for `skb_shared_info` at the end; its page reference given.
        let skb = unsafe { build_skb_raw(b, bindings::tun_xdp_buflen(b) as u32) }?;
        // INVARIANT: All `len >= ETH_HLEN` bytes are linear.
        Ok(EthFrame(skb))
    }

    /// The buffer for the device's XDP program (`tun_xdp_one()` with one):
    /// owned, described in `slot` (vhost-net's `xdp_buff` stays as it is),
    /// its queue `rxq`, its size tun.c's `buflen`.
    pub(crate) fn into_owned<'r>(
        self,
        slot: &'r mut XdpSlot,
        rxq: &'r XdpRxq<'_>,
    ) -> OwnedXdpBuff<'r> {
        let b = self.0;
        core::mem::forget(self);
        // SAFETY: vhost-net's layout (type invariants), its page reference
        // handed over.
        unsafe { OwnedXdpBuff::from_vhost(slot, b, bindings::tun_xdp_buflen(b) as u32, rxq) }
    }
}

/// What a program passed, as a frame ([`EthFrame`]): `EINVAL` (freed) if it
/// left less than an Ethernet header.
#[inline(always)]
pub(crate) fn eth_frame(buf: OwnedXdpBuff<'_>) -> Result<EthFrame> {
    if buf.len() < ETH_HLEN {
        return Err(EINVAL);
    }
    // INVARIANT: `build_skb()` makes every byte linear, `len >= ETH_HLEN`.
    Ok(EthFrame(buf.build_skb()?))
}

/// `put_page(virt_to_head_page(data))`.
///
/// # Safety
///
/// The caller owns a reference on the page of `data`, which it gives up.
unsafe fn put_page_of(data: *mut core::ffi::c_void) {
    // SAFETY: As the caller guarantees.
    unsafe { bindings::put_page(bindings::virt_to_head_page(data)) }
}

impl Drop for XdpBuff<'_> {
    fn drop(&mut self) {
        // SAFETY: The page reference we own (type invariants).
        unsafe { put_page_of(self.0.data) };
    }
}

/// `ETH_HLEN`.
const ETH_HLEN: usize = bindings::ETH_HLEN as usize;

/// An skb built around a buffer ([`XdpBuff::build_skb`]): a frame whose
/// Ethernet header is in the linear part, so the steps of
/// `tun_xdp_one()` need no `pskb_may_pull()`, as tun.c's do not.
///
/// # Invariants
///
/// At least `ETH_HLEN` bytes of the skb are linear; only operations that
/// keep them are offered.
pub(crate) struct EthFrame(SkBuff);

impl EthFrame {
    /// `skb->dev = dev`.
    #[inline]
    pub(crate) fn set_dev<P>(&mut self, dev: &NetDevice<P>) {
        self.0.set_dev(dev)
    }

    /// `skb_set_network_header(skb, ETH_HLEN)`.
    #[inline]
    pub(crate) fn set_l2_network_header(&mut self) {
        // SAFETY: An skb we own with `ETH_HLEN` linear bytes (type
        // invariants).
        unsafe { bindings::skb_set_network_header(self.0.as_ptr(), ETH_HLEN as i32) };
    }

    /// The vnet header's step ([`SkBuff::vnet_hdr_tnl_to_skb`]: it sets
    /// offsets and GSO fields, and never shortens the linear part).
    #[inline]
    pub(crate) fn vnet_hdr_tnl_to_skb(
        &mut self,
        hdr: &VnetHdr,
        tnl: bool,
        tnl_csum: bool,
    ) -> Result {
        self.0.vnet_hdr_tnl_to_skb(hdr, tnl, tnl_csum)
    }

    /// `skb->protocol = eth_type_trans(skb, dev)`: the frame, now an skb
    /// of the device's.
    #[inline]
    pub(crate) fn eth_type_trans<P>(self, dev: &NetDevice<P>) -> SkBuff {
        // SAFETY: An skb we own with `ETH_HLEN` linear bytes (type
        // invariants); `dev` is live.
        unsafe {
            let proto = bindings::eth_type_trans(self.0.as_ptr(), dev.as_ptr());
            crate::sys::skb::set_protocol(self.0.as_ptr(), proto);
        }
        self.0
    }
}
