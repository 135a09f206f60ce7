// SPDX-License-Identifier: GPL-2.0

//! The queue socket's operations for vhost-net (tun.c's `tun_socket_ops`:
//! `tun_sendmsg`, `tun_xdp_one`, `tun_recvmsg`, `tun_peek_len`) and what
//! tun.ko's exports reach (`tun_get_tx_ring`, `tun_wake_queue`); the read
//! and write paths they share are the parent's.

use super::*;
use crate::kver;
use crate::sys::xdp::{with_xdp_ctx, XdpCtx};
/// The sockets of the open files (tun.c's `tun_socket_ops`), for
/// vhost-net.
impl SockOps for TunChr {
    fn sendmsg(tfile: &TunFile, msg: &mut SendMsg<'_>, _total_len: usize) -> Result<usize> {
        tun_sendmsg(tfile, msg)
    }

    fn sendmsg_batch<'b>(tfile: &TunFile, batch: BatchOffer<'b>) -> BatchVerdict<'b> {
        tun_sendmsg_batch(tfile, batch)
    }

    // Inlined, with `tun_recvmsg()`, into the one caller, the `proto_ops`
    // function sys/sockops.rs gives vhost-net: tun.c's `tun_recvmsg()` is
    // that function itself, called once per frame, and out of line ours
    // paid a call, a second frame and a `Result` returned through memory
    // (`sendmsg` is called once per batch of 64: no need).
    #[inline(always)]
    fn recvmsg(
        tfile: &TunFile,
        msg: &mut RecvMsg<'_>,
        entry: Option<TunPtr>,
        total_len: usize,
        flags: u32,
    ) -> Result<usize> {
        tun_recvmsg(tfile, msg, entry, total_len, flags)
    }

    fn peek_len(tfile: &TunFile) -> i32 {
        tun_peek_len(tfile)
    }
}

/// What vhost-net reaches through tun.ko's exports (sys/vhost.rs).
impl sys::tun::vhost::TunFileExports for TunChr {
    fn tx_ring(tfile: &TunFile) -> &TxRing {
        &tfile.ring
    }

    fn wake_queue(tfile: &TunFile, ring: &mut RingConsumer<'_>, consumed: u32) {
        tun_wake_queue(tfile, ring, consumed)
    }
}

/// `tun_sendmsg()` of a write from the sender's buffers
/// (`MSG_DONTWAIT` as `O_NONBLOCK`).
///
/// Deliberate differences: zerocopy buffers (`TUN_MSG_UBUF`) are refused
/// with `EOPNOTSUPP`: vhost-net sends them only to a socket with
/// `SOCK_ZEROCOPY` (and its `experimental_zcopytx`), which rust_tun's
/// never have. `MSG_MORE` (tun.c: hold packets back up to `rx_batched`)
/// changes nothing: every packet goes on at once (`tun_rx_batched`).
fn tun_sendmsg(tfile: &TunFile, m: &mut SendMsg<'_>) -> Result<usize> {
    let dev = tfile.tun.get().ok_or(EBADFD)?;
    if m.zerocopy() {
        return Err(EOPNOTSUPP);
    }
    let noblock = m.flags() & bindings::RTUN_MSG_DONTWAIT != 0;
    tun_get_user(&dev, tfile, &mut m.source(), noblock)
}

/// `tun_sendmsg()` of vhost-net's transmit batch (`TUN_MSG_PTR`): each
/// buffer through `tun_xdp_one()`; the sender's length is returned
/// whatever became of each. With `IFF_NAPI` the context is scheduled once
/// the batch is queued, if any buffer was (tun.c's `queued`), whatever
/// became of the last.
fn tun_sendmsg_batch<'b>(tfile: &TunFile, offer: BatchOffer<'b>) -> BatchVerdict<'b> {
    // `EBADFD` before the batch is taken: the sender frees its buffers.
    let Some(dev) = tfile.tun.get() else {
        return Err(offer.refuse(EBADFD));
    };
    let (mut batch, taken) = offer.take();
    let mut queued = false;
    // As tun.c, bottom halves off and an RCU read section across the
    // batch, not per packet. Deliberate difference: the first flow of a
    // device (several queues) is recorded outside them, as a write's is: it
    // allocates the flow table's entries, which may sleep (tun.c allocates
    // each flow with GFP_ATOMIC there).
    loop {
        let bh = sys::BhDisabled::new();
        let rcu = rcu::read_lock();
        // The XDP section (`bpf_net_ctx_set()`), whose redirects are
        // flushed once at its end (tun.c's `flush`).
        let rxhash = with_xdp_ctx(&bh, &rcu, |ctx| {
            for xdp in batch.by_ref() {
                // As tun.c, a buffer's failure is its own (counted there).
                let Ok(one) = tun_xdp_one(&dev, tfile, xdp, &bh, &rcu, ctx) else {
                    continue;
                };
                queued |= one.queued;
                if one.rxhash == 0 {
                    continue;
                }
                // Once the table's entries exist, recording a flow
                // allocates nothing and stays in the section.
                if dev.priv_().flows.has_pool() {
                    tun_flow_update(dev.priv_(), one.rxhash, tfile);
                } else {
                    return one.rxhash;
                }
            }
            0
        });
        drop(rcu);
        drop(bh);
        if rxhash == 0 {
            break;
        }
        tun_flow_update(dev.priv_(), rxhash, tfile);
    }
    if queued {
        tun_napi_schedule(tfile);
    }
    Ok(taken)
}

/// What became of one buffer of a batch ([`tun_xdp_one`]).
struct XdpOne {
    /// The flow hash to record (`tun_flow_update()`, the caller's), 0 for
    /// none.
    rxhash: u32,
    /// It went onto the NAPI queue (tun.c's `ret` of 1), whose context the
    /// batch schedules at its end.
    queued: bool,
}

/// `tun_xdp_one()`: one of vhost-net's buffers through the device's XDP
/// program if it has one (a GSO packet through generic XDP once it is an
/// skb), then as an skb, its virtio-net header applied, into the stack
/// (or, with `IFF_NAPI`, onto the NAPI queue, scheduled by the batch at
/// its end or here past a poll's weight).
fn tun_xdp_one(
    dev: &TunDev,
    tfile: &TunFile,
    xdp: XdpBuff<'_>,
    bh: &sys::BhDisabled,
    rcu: &rcu::Guard,
    ctx: &XdpCtx<'_>,
) -> Result<XdpOne> {
    let tun = dev.priv_();
    let datasize = xdp.len();
    const NONE: XdpOne = XdpOne {
        rxhash: 0,
        queued: false,
    };
    // 6.12 has no UDP tunnel GSO: no header size to read per packet.
    let features = if kver::HAS_UDP_TUNNEL_GSO {
        tun_vnet_hdr_guest_features(tun.vnet_hdr_size())
    } else {
        0
    };
    // The header stays in the buffer, which the skb takes over: copied
    // out before (a `VnetHdr` is small and `Copy`). Deliberate difference:
    // tun.c reads it after the program, which may have written it.
    let gso = xdp.vnet_hdr();
    let tnl = features & NETIF_F_GSO_UDP_TUNNEL != 0;
    let tnl_csum = features & NETIF_F_GSO_UDP_TUNNEL_CSUM != 0;
    let mut skb_xdp = None;
    // `EINVAL` below an Ethernet header.
    let mut frame = match tun.xdp_prog.get(rcu) {
        None => xdp.build_skb()?,
        Some(prog) if gso.gso_type() != 0 => {
            skb_xdp = Some(prog);
            xdp.build_skb()?
        }
        Some(prog) => {
            if xdp.len() < ETH_HLEN {
                return Err(EINVAL);
            }
            match xdp::tun_xdp_one_prog(dev, tfile, prog, xdp, ctx, bh)? {
                Some(frame) => frame,
                None => return Ok(NONE),
            }
        }
    };
    // The order of each kernel's tun.c (see `tun_get_user`).
    if !kver::VNET_AFTER_NETWORK_HEADER && frame.vnet_hdr_tnl_to_skb(&gso, tnl, tnl_csum).is_err() {
        tun.stats.rx_frame_errors_inc();
        return Err(EINVAL);
    }
    // As each kernel's tun.c: 7.3 sets `skb->dev` before the header (its
    // GSO checks read the device's header_ops), 6.12 leaves it to
    // `eth_type_trans()`.
    if kver::VNET_AFTER_NETWORK_HEADER {
        frame.set_dev(dev);
        frame.set_l2_network_header();
        if frame.vnet_hdr_tnl_to_skb(&gso, tnl, tnl_csum).is_err() {
            tun.stats.rx_frame_errors_inc();
            return Err(EINVAL);
        }
    }
    let mut skb = frame.eth_type_trans(dev);
    skb.reset_network_probe_transport();
    let queue_index = tfile.queue_index.load(Ordering::Relaxed);
    // One read of the queue count for both uses (as tun.c's plain reads).
    let numqueues = tun.numqueues.load(Ordering::Acquire);
    if u32::from(queue_index) < numqueues {
        skb.record_rx_queue(queue_index);
    }
    if let Some(prog) = skb_xdp {
        match do_xdp_generic(prog, skb, bh, rcu) {
            Some(passed) => skb = passed,
            None => return Ok(NONE),
        }
    }
    let rxhash = if numqueues > 1 && !tun.steering_prog.is_some() && !tfile.detached.is_set() {
        skb.hash_symmetric()
    } else {
        0
    };
    let queued = tun_napi_enabled(tfile);
    if queued {
        tun_napi_queue(tfile, skb, true)?;
    } else {
        skb.netif_receive_skb(bh);
    }
    dev.sw_netstats_rx_add(datasize as u32);
    Ok(XdpOne { rxhash, queued })
}

/// `tun_recvmsg()`: vhost-net's receive, the packet it consumed from the
/// ring (`entry`) or the next one; past `total_len` the packet is cut and
/// `MSG_TRUNC` set, and with `MSG_TRUNC` in `flags` its full size is
/// returned. A packet given and not delivered is freed.
#[inline(always)]
fn tun_recvmsg(
    tfile: &TunFile,
    m: &mut RecvMsg<'_>,
    entry: Option<TunPtr>,
    total_len: usize,
    flags: u32,
) -> Result<usize> {
    let dev = tfile.tun.get().ok_or(EBADFD)?;
    let known =
        bindings::RTUN_MSG_DONTWAIT | bindings::RTUN_MSG_TRUNC | bindings::RTUN_MSG_ERRQUEUE;
    if flags & !known != 0 {
        return Err(EINVAL);
    }
    if flags & bindings::RTUN_MSG_ERRQUEUE != 0 {
        // Deliberate difference: tun.c keeps (leaks) a given packet here.
        drop(entry);
        return tfile.sock.recv_errqueue(m, total_len);
    }
    let noblock = flags & bindings::RTUN_MSG_DONTWAIT != 0;
    let ret = tun_do_read(&dev, tfile, &mut m.dest(), noblock, entry)?;
    if ret > total_len {
        m.set_trunc();
        return Ok(if flags & bindings::RTUN_MSG_TRUNC != 0 {
            ret
        } else {
            total_len
        });
    }
    Ok(ret)
}

/// `tun_peek_len()`: the length of the next packet on the ring (with its
/// VLAN tag), 0 if none or if the file has no device.
fn tun_peek_len(tfile: &TunFile) -> i32 {
    match tfile.tun.get() {
        Some(_dev) => tfile.ring.peek_len(),
        None => 0,
    }
}

/// 7.3's `tun_wake_queue()`: vhost-net consumed `consumed` packets from
/// `tfile`'s ring under its consumer lock (`ring`); with
/// `IFF_BACKPRESSURE`, the stopped queue may wake.
fn tun_wake_queue(tfile: &TunFile, ring: &mut RingConsumer<'_>, consumed: u32) {
    if let Some(dev) = tfile.tun.get() {
        __tun_wake_queue(&dev, tfile, ring, consumed);
    }
}
