// SPDX-License-Identifier: GPL-2.0

//! The vnet header's policy, tun.c's `drivers/net/tun_vnet.h` (7.3): how
//! much of the header is parsed and filled (`tun_vnet_parse_size`), which
//! tunnel offloads a writer's header may use (`tun_vnet_hdr_guest_features`),
//! reading it from a write (`__tun_vnet_hdr_get`) and writing it to a
//! reader (`__tun_vnet_hdr_put`). The header's checks and its translation
//! to and from an skb are the kernel's own inlines
//! (`virtio_net_hdr_tnl_to_skb()`/`_from_skb()`, called through
//! `helpers/virtio_net.c`). On 6.12 the same functions give 6.12's tun.c:
//! no tunnel offloads (so the parsed size is always the legacy header's),
//! the padding skipped on reads (`kver::VNET_HDR_PAD_ZEROED`) and
//! `hdr_len` bounded by the packet alone
//! (`kver::VNET_HDR_LEN_BOUND_HAS_PAD`).

use crate::bindings;
use crate::kver;
use crate::sys::tun::{VnetHdr, VNET_F_NEEDS_CSUM, VNET_HDR_LEN, VNET_HDR_TNL_SIZE};
use crate::sys::{IovIterDest, IovIterSource};
use kernel::prelude::*;

/// `NETIF_F_GSO_UDP_TUNNEL`.
pub(crate) const NETIF_F_GSO_UDP_TUNNEL: u64 = bindings::RTUN_NETIF_F_GSO_UDP_TUNNEL;
/// `NETIF_F_GSO_UDP_TUNNEL_CSUM`.
pub(crate) const NETIF_F_GSO_UDP_TUNNEL_CSUM: u64 = bindings::RTUN_NETIF_F_GSO_UDP_TUNNEL_CSUM;

/// `tun_vnet_parse_size()`: the bytes of the header that are parsed (and
/// filled): the tunnel header's with UDP-tunnel GSO in `features`, else
/// the legacy header's.
pub(crate) fn tun_vnet_parse_size(features: u64) -> usize {
    if features & NETIF_F_GSO_UDP_TUNNEL == 0 {
        return VNET_HDR_LEN;
    }
    VNET_HDR_TNL_SIZE
}

/// `tun_vnet_hdr_guest_features()`: tun does not know what the writer
/// negotiated, so a header size that holds the tunnel header allows both
/// tunnel offloads on the write path (never on 6.12, which has none).
pub(crate) fn tun_vnet_hdr_guest_features(vnet_hdr_sz: usize) -> u64 {
    if kver::HAS_UDP_TUNNEL_GSO && vnet_hdr_sz >= VNET_HDR_TNL_SIZE {
        return NETIF_F_GSO_UDP_TUNNEL | NETIF_F_GSO_UDP_TUNNEL_CSUM;
    }
    0
}

/// `__tun_vnet_hdr_get()`: reads the writer's header of `sz` bytes into
/// `hdr` (its first `tun_vnet_parse_size(features)` bytes, the rest
/// skipped) and returns its `hdr_len`, raised to cover the checksum's place
/// with `NEEDS_CSUM` (and written back). `EINVAL` if fewer than `sz` bytes
/// are left or `hdr_len` exceeds what follows (7.3: after the parsed part,
/// the padding included; 6.12: after all `sz` bytes); `EFAULT` on a fault.
pub(crate) fn __tun_vnet_hdr_get(
    sz: usize,
    features: u64,
    from: &mut IovIterSource<'_>,
    hdr: &mut VnetHdr,
) -> Result<u16> {
    let parsed_size = tun_vnet_parse_size(features);
    if from.len() < sz {
        return Err(EINVAL);
    }
    from.copy_from_iter_full(hdr.as_bytes_mut(parsed_size))?;
    let mut hdr_len = hdr.hdr_len();
    if hdr.flags() & VNET_F_NEEDS_CSUM != 0 {
        // As C: the sum is an int, stored back into 16 bits.
        let csum_end = u32::from(hdr.csum_start()) + u32::from(hdr.csum_offset()) + 2;
        hdr_len = csum_end.max(u32::from(hdr_len)) as u16;
        hdr.set_hdr_len(hdr_len);
    }
    // `sz >= parsed_size`: `parsed_size` exceeds the legacy header only
    // when `tun_vnet_hdr_guest_features(sz)` allowed it.
    let pad = sz.saturating_sub(parsed_size);
    let bound = if kver::VNET_HDR_LEN_BOUND_HAS_PAD {
        from.len()
    } else {
        from.len().saturating_sub(pad)
    };
    if usize::from(hdr_len) > bound {
        return Err(EINVAL);
    }
    from.advance(pad);
    Ok(hdr_len)
}

/// `__tun_vnet_hdr_put()`: writes `hdr`'s first
/// `tun_vnet_parse_size(features)` bytes (`features`: the device's) to the
/// reader and (7.3) zeroes the rest up to `sz`; 6.12 skips the rest,
/// leaving what the buffer held. `EINVAL` if the reader has room for fewer
/// than `sz` bytes; `EFAULT` on a fault -- and, as 7.3's tun.c, when `sz`
/// is smaller than the parsed size (tunnel offload on with a header size
/// below the tunnel header's): C's `sz - parsed_size` wraps to a huge
/// count, so `iov_iter_zero()` zeroes all the room left and falls short
/// ("drop the packet if the configured header size is too small WRT the
/// enabled offloads").
#[inline(always)]
pub(crate) fn __tun_vnet_hdr_put(
    sz: usize,
    features: u64,
    iter: &mut IovIterDest<'_>,
    hdr: &VnetHdr,
) -> Result {
    let parsed_size = tun_vnet_parse_size(features);
    if iter.len() < sz {
        return Err(EINVAL);
    }
    iter.copy_to_iter_full(hdr.as_bytes(parsed_size))?;
    let Some(pad) = sz.checked_sub(parsed_size) else {
        let left = iter.len();
        iter.zero(left);
        return Err(EFAULT);
    };
    if !kver::VNET_HDR_PAD_ZEROED {
        iter.advance(pad);
        return Ok(());
    }
    if iter.zero(pad) != pad {
        return Err(EFAULT);
    }
    Ok(())
}
