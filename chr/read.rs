// SPDX-License-Identifier: GPL-2.0

//! The read path (tun.c's `tun_chr_read_iter`, `tun_do_read`,
//! `tun_ring_recv`, `tun_put_user`, and 7.3's `tun_ring_consume` and
//! `__tun_wake_queue`), which `recvmsg` (`chr/sock.rs`) shares.

use super::*;

/// 7.3's `__tun_wake_queue()`, with the consumer lock held (`ring`): with
/// `IFF_BACKPRESSURE`, wakes the queue the producer stopped on a full ring
/// once the reader has taken `size / 2` packets since, or emptied it --
/// unless the device is going down (a stop from `tun_net_close()` is not
/// backpressure) or the file no longer owns the queue's slot.
#[inline(always)]
pub(super) fn __tun_wake_queue(
    dev: &TunDev,
    tfile: &TunFile,
    ring: &mut RingConsumer<'_>,
    consumed: u32,
) {
    let tun = dev.priv_();
    if !crate::tun_backpressure(tun.flags()) {
        return;
    }
    let queue_index = tfile.queue_index.load(Ordering::Relaxed);
    // A stop from `tun_net_close()` is not backpressure, leave it alone.
    if !dev.is_running() {
        return;
    }
    // Only the current owner of the slot may wake its subqueue.
    let owner = tun.tfiles.get(usize::from(queue_index));
    if !owner.is_some_and(|slot| slot.is(tfile)) {
        return;
    }
    let Some(txq) = dev.tx_queue(queue_index) else {
        return;
    };
    // Paired with `smp_mb__after_atomic()` in `tun_net_xmit()`.
    sys::smp_mb();
    if txq.is_stopped() {
        *ring.cons_cnt() += consumed;
        if *ring.cons_cnt() as usize >= ring.size() / 2 || ring.is_empty() {
            txq.wake();
            *ring.cons_cnt() = 0;
        }
    }
}

/// 7.3's `tun_ring_consume()`: `ptr_ring_consume()`, and with a packet
/// taken, `__tun_wake_queue()` under the same consumer lock. Inlined into
/// its two callers, as tun.c's `ptr_ring_consume()` is into
/// `tun_ring_recv()`.
#[inline(always)]
pub(super) fn tun_ring_consume(dev: &TunDev, tfile: &TunFile) -> Option<TunPtr> {
    let mut ring = tfile.ring.lock_consumer();
    let entry = ring.consume();
    if entry.is_some() {
        __tun_wake_queue(dev, tfile, &mut ring, 1);
    }
    entry
}

/// `tun_ring_recv()`: the next packet, waiting for one unless `noblock`.
#[inline(always)]
pub(super) fn tun_ring_recv(dev: &TunDev, tfile: &TunFile, noblock: bool) -> Result<TunPtr> {
    if let Some(skb) = tun_ring_consume(dev, tfile) {
        return Ok(skb);
    }
    if noblock {
        return Err(EAGAIN);
    }
    tfile.sock.wq().wait_interruptible(|| {
        if let Some(skb) = tun_ring_consume(dev, tfile) {
            return Some(Ok(skb));
        }
        if tfile.shutdown.load(Ordering::Relaxed) {
            return Some(Err(EFAULT));
        }
        None
    })?
}

/// `tun_put_user()`: copies one packet to the reader, with a `tun_pi`
/// header unless `IFF_NO_PI`, a vnet header with `IFF_VNET_HDR`, and the
/// VLAN tag the stack kept out of band put back in the frame. Returns the
/// packet's full size, as tun does.
#[inline(always)]
pub(super) fn tun_put_user(dev: &TunDev, skb: SkBuff, to: &mut IovIterDest<'_>) -> Result<usize> {
    let tun = dev.priv_();
    // Read once (an atomic load each time otherwise; ioctls of other
    // files of the device change some flags meanwhile).
    let flags = tun.flags();
    let len = skb.len() as usize;
    let vlan = skb.vlan_tag();
    let vlan_hlen = if vlan.is_some() { VLAN_HLEN } else { 0 };
    let vnet_hdr_sz = if flags & IFF_VNET_HDR != 0 {
        tun.vnet_hdr_size()
    } else {
        0
    };
    let mut total = len + vlan_hlen + vnet_hdr_sz;

    if flags & IFF_NO_PI == 0 {
        if to.len() < TUN_PI_LEN {
            return Err(EINVAL);
        }
        total += TUN_PI_LEN;
        let flags = if to.len() < total { TUN_PKT_STRIP } else { 0 };
        let mut pi = [0u8; TUN_PI_LEN];
        pi[..2].copy_from_slice(&flags.to_ne_bytes());
        pi[2..].copy_from_slice(&skb.protocol().to_ne_bytes());
        to.copy_to_iter_full(&pi)?;
    }

    if vnet_hdr_sz != 0 {
        // `tun_vnet_hdr_tnl_from_skb()`, the tunnel header with the
        // device's UDP-tunnel offload. Deliberate difference: a GSO type
        // the header cannot express is `EINVAL` (the packet is dropped)
        // without tun.c's WARN.
        // 6.12 has no UDP tunnel GSO: no features to read per packet.
        let features = if kver::HAS_UDP_TUNNEL_GSO {
            dev.features()
        } else {
            0
        };
        let gso = skb
            .vnet_hdr_tnl_from_skb(features & NETIF_F_GSO_UDP_TUNNEL != 0, vlan_hlen as u16)
            .inspect_err(|_| dev.core_stats_tx_dropped_inc())?;
        // The header, as much of it as the device's offloads fill, then
        // the padding up to `vnet_hdr_sz` (zeroed on 7.3).
        __tun_vnet_hdr_put(vnet_hdr_sz, features, to, &gso)?;
    }

    // Deliberate difference: tun.c ignores a fault in the middle of the
    // copy and reports success; we report EFAULT.
    let mut offset = 0;
    if let Some((proto, tci)) = vlan {
        // The frame up to the addresses, the tag, then the rest.
        let n = VLAN_OFFSET.min(len).min(to.len());
        to.skb_copy_datagram_iter(&skb, 0, n as u32)?;
        if !to.is_empty() && n == VLAN_OFFSET {
            let mut veth = [0u8; VLAN_HLEN];
            veth[..2].copy_from_slice(&proto.to_ne_bytes());
            veth[2..].copy_from_slice(&tci.to_be_bytes());
            let m = VLAN_HLEN.min(to.len());
            to.copy_to_iter_full(&veth[..m])?;
        }
        offset = n;
    }
    // `offset <= len`: 0, or a part of the frame.
    let n = (len - offset).min(to.len());
    if n != 0 {
        to.skb_copy_datagram_iter(&skb, offset as u32, n as u32)?;
    }

    dev.sw_netstats_tx_add((len + vlan_hlen) as u32);
    skb.consume();
    Ok(total)
}

/// `tun_do_read()`: the next packet (`entry`, if the caller took it from
/// the ring already) into `to`; returns its full size.
#[inline(always)]
pub(super) fn tun_do_read(
    dev: &TunDev,
    tfile: &TunFile,
    to: &mut IovIterDest<'_>,
    noblock: bool,
    entry: Option<TunPtr>,
) -> Result<usize> {
    if to.is_empty() {
        // `tun_ptr_free(ptr)`: a packet given and no room is dropped.
        drop(entry);
        return Ok(0);
    }
    let entry = match entry {
        Some(entry) => entry,
        None => tun_ring_recv(dev, tfile, noblock)?,
    };
    match entry {
        TunPtr::Skb(skb) => tun_put_user(dev, skb, to),
        TunPtr::Frame(frame) => xdp::tun_put_user_xdp(dev, frame, to),
    }
}

/// `tun_chr_read_iter()`: `tun_do_read()` without a given packet, written
/// out (the read path stays one function, as before `recvmsg` shared it).
#[inline]
pub(super) fn tun_chr_read_iter(
    tfile: &TunFile,
    to: &mut IovIterDest<'_>,
    noblock: bool,
) -> Result<usize> {
    let dev = tfile.tun.get().ok_or(EBADFD)?;
    let len = to.len();
    if len == 0 {
        return Ok(0);
    }
    let ret = match tun_ring_recv(&dev, tfile, noblock)? {
        TunPtr::Skb(skb) => tun_put_user(&dev, skb, to)?,
        TunPtr::Frame(frame) => xdp::tun_put_user_xdp(&dev, frame, to)?,
    };
    Ok(ret.min(len))
}
