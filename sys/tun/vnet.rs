// SPDX-License-Identifier: GPL-2.0

//! The vnet header: [`VnetHdr`] (7.3's `struct
//! virtio_net_hdr_v1_hash_tunnel`, 6.12's `struct virtio_net_hdr`) and the
//! two [`SkBuff`] methods that apply it to a written skb and describe a
//! read one with it, through C's `virtio_net_hdr_tnl_to_skb()` /
//! `virtio_net_hdr_tnl_from_skb()` (`helpers/virtio_net.c`).

use crate::bindings;
use crate::sys::skb::SkBuff;
use core::ffi::c_int;
use core::ptr;
use kernel::prelude::*;

/// The vnet header as tun.c parses and fills it: 7.3's `struct
/// virtio_net_hdr_v1_hash_tunnel` (`TUN_VNET_TNL_SIZE`, 24 bytes), which
/// begins with the legacy `struct virtio_net_hdr` (10 bytes, what a header
/// without tunnel offload is); 6.12's legacy header alone
/// (`bindings_helper.h`'s `rtun_vnet_hdr_tnl`). In the device's byte order.
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub(crate) struct VnetHdr(bindings::rtun_vnet_hdr_tnl);

/// `sizeof(struct virtio_net_hdr)`.
pub(crate) const VNET_HDR_LEN: usize = core::mem::size_of::<bindings::virtio_net_hdr>();
const _: () = assert!(VNET_HDR_LEN == 10);

/// `TUN_VNET_TNL_SIZE`: `sizeof(struct virtio_net_hdr_v1_hash_tunnel)` on
/// 7.3; the legacy header's size on 6.12, which has no tunnel header.
pub(crate) const VNET_HDR_TNL_SIZE: usize = core::mem::size_of::<bindings::rtun_vnet_hdr_tnl>();
const _: () = assert!(VNET_HDR_TNL_SIZE >= VNET_HDR_LEN);

/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`.
pub(crate) const VNET_F_NEEDS_CSUM: u8 = bindings::VIRTIO_NET_HDR_F_NEEDS_CSUM as u8;

impl VnetHdr {
    /// The legacy header at the start (tun.c's `(struct virtio_net_hdr
    /// *)&hdr`).
    fn hdr(&self) -> &bindings::virtio_net_hdr {
        // CAST: `virtio_net_hdr_v1_hash_tunnel` begins with a
        // `virtio_net_hdr_v1`, whose first ten bytes are a `virtio_net_hdr`
        // (on 6.12 the type is that header itself).
        // SAFETY: In bounds (`VNET_HDR_TNL_SIZE >= VNET_HDR_LEN`), aligned
        // (both are 2-byte aligned) and initialised: plain integers.
        unsafe { &*ptr::from_ref(&self.0).cast::<bindings::virtio_net_hdr>() }
    }

    /// As [`Self::hdr`], to write.
    fn hdr_mut(&mut self) -> &mut bindings::virtio_net_hdr {
        // CAST: As in `hdr`.
        // SAFETY: As in `hdr`; the borrow of `self` is exclusive.
        unsafe { &mut *ptr::from_mut(&mut self.0).cast::<bindings::virtio_net_hdr>() }
    }

    /// The first `n` bytes of the header (at most all of it), as the
    /// writer's bytes are copied in (`copy_from_iter_full(hdr,
    /// parsed_size, from)`).
    pub(crate) fn as_bytes_mut(&mut self, n: usize) -> &mut [u8] {
        let n = n.min(VNET_HDR_TNL_SIZE);
        // SAFETY: The header is plain integers without padding, any bytes
        // are a valid value; `n` is within it; the borrow is exclusive.
        unsafe { core::slice::from_raw_parts_mut(ptr::from_mut(&mut self.0).cast::<u8>(), n) }
    }

    /// The first `n` bytes of the header (at most all of it), for the
    /// reader (`copy_to_iter(hdr, parsed_size, iter)`).
    pub(crate) fn as_bytes(&self, n: usize) -> &[u8] {
        let n = n.min(VNET_HDR_TNL_SIZE);
        // SAFETY: As in `as_bytes_mut`, read only.
        unsafe { core::slice::from_raw_parts(ptr::from_ref(&self.0).cast::<u8>(), n) }
    }

    /// `flags`.
    pub(crate) fn flags(&self) -> u8 {
        self.hdr().flags
    }

    /// `gso_type`.
    pub(crate) fn gso_type(&self) -> u8 {
        self.hdr().gso_type
    }

    /// `hdr_len`, `csum_start`, `csum_offset` (little-endian: x86_64, and
    /// tun's legacy header is little-endian there with or without
    /// `TUNSETVNETLE`).
    pub(crate) fn hdr_len(&self) -> u16 {
        u16::from_le(self.hdr().hdr_len)
    }

    pub(crate) fn set_hdr_len(&mut self, v: u16) {
        self.hdr_mut().hdr_len = v.to_le();
    }

    pub(crate) fn csum_start(&self) -> u16 {
        u16::from_le(self.hdr().csum_start)
    }

    pub(crate) fn csum_offset(&self) -> u16 {
        u16::from_le(self.hdr().csum_offset)
    }
}

impl SkBuff {
    /// `virtio_net_hdr_tnl_to_skb()` (7.3's `tun_vnet_hdr_tnl_to_skb()`;
    /// 6.12: `virtio_net_hdr_to_skb()`): applies a writer's vnet header
    /// (checksum offload, GSO type and size, and with `tnl` a UDP tunnel's
    /// offsets, its outer checksum with `tnl_csum`), checked as the kernel
    /// checks it; `EINVAL` for a header it rejects.
    pub(crate) fn vnet_hdr_tnl_to_skb(
        &mut self,
        hdr: &VnetHdr,
        tnl: bool,
        tnl_csum: bool,
    ) -> Result {
        // SAFETY: An skb we own, filled; `hdr` is a valid header. Little-
        // endian, a constant as in tun.c on x86_64 (`tun_is_little_endian()`:
        // `TUN_VNET_LE` or the legacy header, little-endian there), so the
        // byte-order tests fold away as they do in `tun_get_user()`.
        let r = unsafe {
            bindings::virtio_net_hdr_tnl_to_skb(self.as_ptr(), &hdr.0, tnl, tnl_csum, true)
        };
        if r == 0 {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }

    /// `virtio_net_hdr_tnl_from_skb()` with `has_data_valid` (7.3's
    /// `tun_vnet_hdr_tnl_from_skb()`; 6.12: `virtio_net_hdr_from_skb()`):
    /// the vnet header describing this skb to a reader (`tnl`: the device
    /// has UDP-tunnel GSO; `vlan_hlen`: a VLAN tag the copy inserts);
    /// `EINVAL` for a GSO type the header cannot express. Inline, as the
    /// C helper it wraps is in its one caller (`tun_put_user()`).
    #[inline(always)]
    pub(crate) fn vnet_hdr_tnl_from_skb(&self, tnl: bool, vlan_hlen: u16) -> Result<VnetHdr> {
        let mut hdr = VnetHdr::default();
        // SAFETY: A valid skb, ours; `hdr` is ours to write (zeroed, as
        // tun.c's `memset`). Little-endian, as in `vnet_hdr_tnl_to_skb`.
        let r = unsafe {
            bindings::virtio_net_hdr_tnl_from_skb(
                self.as_ptr(),
                &mut hdr.0,
                tnl,
                true,
                c_int::from(vlan_hlen),
                true,
                false,
            )
        };
        if r == 0 {
            Ok(hdr)
        } else {
            Err(EINVAL)
        }
    }
}
