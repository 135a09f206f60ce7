// SPDX-License-Identifier: GPL-2.0

//! XDP on TAP devices (tun.c's `tun_xdp_set`, `tun_xdp_xmit`,
//! `__tun_xdp_flush_tfile`, `tun_xdp_tx`, `tun_xdp_act`, the program's
//! part of `tun_build_skb`, and `tun_put_user_xdp`): the program a device
//! runs on what is written to it, and the frames redirected to it, which
//! its readers (or vhost-net) read from the queues' rings.

use crate::chr::TUN_RX_PAD;
use crate::queue::for_each_disabled;
use crate::sys::tun::{eth_frame, EthFrame, FasyncBand, XdpBuff};
use crate::sys::xdp::{
    skb_data_align, with_xdp_ctx, xdp_exception, OwnedXdpBuff, XdpCtx, XdpFrame, XdpProg, XdpRxq,
    XdpSlot, XdpXmitFrames, XDP_DROP, XDP_PACKET_HEADROOM, XDP_PASS, XDP_REDIRECT, XDP_TX,
};
use crate::sys::{
    poll, rcu, smp_processor_id, BhDisabled, BhOff, IovIterDest, IovIterSource, Rtnl, SkBuff,
};
use crate::vnet::__tun_vnet_hdr_put;
use crate::{TunDev, TunFile, IFF_VNET_HDR};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// `tun_xdp_set()` (`ndo_bpf`'s `XDP_SETUP_PROG`, TAP only): the program
/// replaces the device's, and every queue's socket, attached or detached,
/// says whether there is one (`SOCK_XDP`, which vhost-net reads to leave
/// XDP's headroom in its buffers).
///
/// Deliberate difference: the replaced program is put after a grace
/// period the call waits for (an `RcuArc` slot, as the eBPF programs'),
/// where tun.c puts it at once and `bpf_prog_put()` defers the free.
pub(crate) fn tun_xdp_set<'g>(
    dev: &'g TunDev,
    prog: Option<XdpProg>,
    rtnl: &mut Rtnl<'g>,
) -> Result {
    let tun = dev.priv_();
    let on = prog.is_some();
    let prog = match prog {
        Some(p) => Some(Arc::new(p, GFP_KERNEL)?),
        None => None,
    };
    drop(tun.xdp_prog.replace(prog, rtnl));
    for slot in &tun.tfiles[..tun.numqueues() as usize] {
        if let Some(tfile) = slot.get_rtnl(rtnl) {
            tfile.sock.set_xdp(on);
        }
    }
    for_each_disabled(tun, rtnl, |tfile| tfile.sock.set_xdp(on));
    Ok(())
}

/// `__tun_xdp_flush_tfile()`: notifies and wakes up the reader.
#[inline(always)]
fn __tun_xdp_flush_tfile(tfile: &TunFile) {
    if tfile.fasync.load(Ordering::Relaxed) {
        tfile.sock.kill_fasync(FasyncBand::In);
    }
    tfile.sock.wq().wake_up_poll_if_sleeper(poll::IN);
}

/// The queue `tun_xdp_xmit()` queues on: `smp_processor_id() %
/// numqueues`, sampled again if it was detached meanwhile; `None` without
/// a queue.
#[inline(always)]
fn tun_xdp_tfile<'a>(dev: &'a TunDev, rcu: &'a rcu::Guard, bh: &BhOff) -> Option<&'a TunFile> {
    let tun = dev.priv_();
    loop {
        let numqueues = tun.numqueues.load(Ordering::Acquire);
        if numqueues == 0 {
            return None;
        }
        let q = smp_processor_id(bh) % numqueues;
        if let Some(tfile) = tun.tfiles[q as usize].get(rcu) {
            return Some(tfile);
        }
    }
}

/// `tun_xdp_xmit()` (`ndo_xdp_xmit`): the frames, in order, onto the ring
/// of queue `smp_processor_id() % numqueues` until it is full (the rest
/// counted in `tx_dropped` and left to the caller); the reader woken if
/// `flush`. `ENXIO` without a queue (the caller frees every frame).
#[inline(always)]
pub(crate) fn tun_xdp_xmit(
    dev: &TunDev,
    frames: &mut XdpXmitFrames<'_>,
    flush: bool,
    bh: &BhOff,
) -> Result {
    let rcu = rcu::read_lock();
    let tfile = tun_xdp_tfile(dev, &rcu, bh).ok_or(ENXIO)?;
    {
        let mut ring = tfile.ring.lock_producer(bh);
        frames.take_while(|frame| {
            ring.produce_frame(frame)
                .inspect_err(|_| dev.core_stats_tx_dropped_inc())
        });
    }
    if flush {
        __tun_xdp_flush_tfile(tfile);
    }
    Ok(())
}

/// `tun_xdp_tx()`: the packet, as a frame, onto the device's own ring
/// (`XDP_TX`), as `tun_xdp_xmit()` queues one, flushed. `EINVAL` if it
/// cannot be a frame (tun.c's `EOVERFLOW`: only counted), `ENXIO` without
/// a queue; a full ring is not an error (the frame is freed and counted
/// in `tx_dropped`).
fn tun_xdp_tx(dev: &TunDev, buf: OwnedXdpBuff<'_>, bh: &BhOff) -> Result {
    let frame = buf.into_frame().ok_or(EINVAL)?;
    let rcu = rcu::read_lock();
    let tfile = tun_xdp_tfile(dev, &rcu, bh).ok_or(ENXIO)?;
    let ret = tfile.ring.lock_producer(bh).produce_frame(frame);
    if let Err(frame) = ret {
        dev.core_stats_tx_dropped_inc();
        drop(frame);
    }
    __tun_xdp_flush_tfile(tfile);
    Ok(())
}

/// `tun_xdp_act()`: what the verdict `act` makes of the packet, with
/// tun.c's counters: a redirect or an `XDP_TX` counted as received (their
/// failures in `rx_dropped`), `XDP_DROP`, `XDP_ABORTED` and unknown
/// verdicts (warned about and traced) dropped and counted. Returns the
/// packet back for `XDP_PASS`, and whether a redirect needs the batch's
/// flush otherwise (the section flushes it, [`with_xdp_ctx`]). Inlined
/// into its two callers: the buffer stays in their frames, not copied into
/// a call's.
#[inline(always)]
pub(crate) fn tun_xdp_act<'r>(
    dev: &TunDev,
    prog: &XdpProg,
    buf: OwnedXdpBuff<'r>,
    act: u32,
    ctx: &XdpCtx<'_>,
    bh: &BhOff,
) -> Option<OwnedXdpBuff<'r>> {
    match act {
        XDP_PASS => return Some(buf),
        XDP_REDIRECT => {
            let len = buf.len() as u32;
            match buf.redirect(dev, prog, ctx) {
                Ok(()) => dev.sw_netstats_rx_add(len),
                Err(_) => dev.core_stats_rx_dropped_inc(),
            }
        }
        XDP_TX => {
            let len = buf.len() as u32;
            match tun_xdp_tx(dev, buf, bh) {
                Ok(()) => dev.sw_netstats_rx_add(len),
                Err(_) => dev.core_stats_rx_dropped_inc(),
            }
        }
        XDP_DROP => dev.core_stats_rx_dropped_inc(),
        _ => {
            xdp_exception(dev, prog, act);
            dev.core_stats_rx_dropped_inc();
        }
    }
    None
}

/// Whether a write takes `tun_build_skb()`'s path with the program
/// (`tun_can_build_skb()`): a TAP, the send buffer unlimited, a
/// non-blocking write, a packet that fits a page with XDP's headroom.
/// tun.c builds every such write this way; rust_tun only while a program
/// is attached (deliberate difference: without one, the skb path it
/// otherwise takes is the same packet).
pub(crate) fn tun_can_build_skb(tfile: &TunFile, len: usize, noblock: bool) -> bool {
    let shinfo = bindings::RTUN_SKB_SHINFO_SIZE as usize;
    noblock
        && tfile.sock.sndbuf() == i32::MAX
        && skb_data_align(len + TUN_RX_PAD + XDP_PACKET_HEADROOM) + shinfo
            <= bindings::RTUN_PAGE_SIZE as usize
}

/// What became of a write `tun_build_skb()` ran the program on.
pub(crate) enum Built {
    /// `XDP_PASS`: the packet as an skb, charged to the writer's socket,
    /// for the rest of the write path.
    Pass(SkBuff),
    /// The program took it (dropped, sent back, redirected).
    Consumed,
}

/// `tun_build_skb()` with a program: the packet copied into a page
/// fragment with XDP's headroom, the program run on it with bottom halves
/// off, its verdict acted on. `ENOMEM`/`EFAULT` as the copy fails.
#[inline(always)]
pub(crate) fn tun_build_skb(
    dev: &TunDev,
    tfile: &TunFile,
    from: &mut IovIterSource<'_>,
    len: usize,
) -> Result<Built> {
    match tfile.xdp_rxq.get(dev) {
        Some(rxq) => tun_build_skb_rxq(dev, tfile, from, len, rxq),
        None => tun_build_skb_own_rxq(dev, tfile, from, len),
    }
}

/// [`tun_build_skb`] for a queue whose `xdp_rxq` is bound to another
/// device (attached to this one after its first was deleted): a queue
/// filled for the packet.
#[cold]
#[inline(never)]
fn tun_build_skb_own_rxq(
    dev: &TunDev,
    tfile: &TunFile,
    from: &mut IovIterSource<'_>,
    len: usize,
) -> Result<Built> {
    let rxq = XdpRxq::new(dev, tfile.queue_index.load(Ordering::Relaxed));
    tun_build_skb_rxq(dev, tfile, from, len, &rxq)
}

fn tun_build_skb_rxq(
    dev: &TunDev,
    tfile: &TunFile,
    from: &mut IovIterSource<'_>,
    len: usize,
    rxq: &XdpRxq<'_>,
) -> Result<Built> {
    let mut slot = XdpSlot::new();
    let buf = OwnedXdpBuff::from_iter(&mut slot, TUN_RX_PAD + XDP_PACKET_HEADROOM, len, from, rxq)?;
    let bh = BhDisabled::new();
    let rcu = rcu::read_lock();
    // There's a small window that XDP may be gone since the caller looked:
    // the packet then goes on as an skb, as tun.c's would.
    let Some(prog) = dev.priv_().xdp_prog.get(&rcu) else {
        let mut skb = buf.build_skb()?;
        tfile.sock.set_owner_w(&mut skb);
        return Ok(Built::Pass(skb));
    };
    let passed = with_xdp_ctx(&bh, &rcu, |ctx| {
        let mut buf = buf;
        let act = buf.run(prog, ctx);
        tun_xdp_act(dev, prog, buf, act, ctx, &bh)
    });
    match passed {
        Some(buf) => {
            let mut skb = buf.build_skb()?;
            tfile.sock.set_owner_w(&mut skb);
            Ok(Built::Pass(skb))
        }
        None => Ok(Built::Consumed),
    }
}

/// The program's part of `tun_xdp_one()`: one of vhost-net's buffers (of
/// an Ethernet header at least) through `prog`, its verdict acted on;
/// what the program passed, as a frame (`EINVAL` below an Ethernet
/// header).
#[inline(always)]
pub(crate) fn tun_xdp_one_prog(
    dev: &TunDev,
    tfile: &TunFile,
    prog: &XdpProg,
    xdp: XdpBuff<'_>,
    ctx: &XdpCtx<'_>,
    bh: &BhOff,
) -> Result<Option<EthFrame>> {
    match tfile.xdp_rxq.get(dev) {
        Some(rxq) => tun_xdp_one_rxq(dev, prog, xdp, rxq, ctx, bh),
        None => tun_xdp_one_own_rxq(dev, tfile, prog, xdp, ctx, bh),
    }
}

/// [`tun_xdp_one_prog`] for a queue whose `xdp_rxq` is bound to another
/// device (see [`tun_build_skb_own_rxq`]).
#[cold]
#[inline(never)]
fn tun_xdp_one_own_rxq(
    dev: &TunDev,
    tfile: &TunFile,
    prog: &XdpProg,
    xdp: XdpBuff<'_>,
    ctx: &XdpCtx<'_>,
    bh: &BhOff,
) -> Result<Option<EthFrame>> {
    let rxq = XdpRxq::new(dev, tfile.queue_index.load(Ordering::Relaxed));
    tun_xdp_one_rxq(dev, prog, xdp, &rxq, ctx, bh)
}

#[inline(always)]
fn tun_xdp_one_rxq(
    dev: &TunDev,
    prog: &XdpProg,
    xdp: XdpBuff<'_>,
    rxq: &XdpRxq<'_>,
    ctx: &XdpCtx<'_>,
    bh: &BhOff,
) -> Result<Option<EthFrame>> {
    let mut slot = XdpSlot::new();
    let mut buf = xdp.into_owned(&mut slot, rxq);
    let act = buf.run(prog, ctx);
    // `XDP_PASS` first: the buffer goes straight on as a frame, not
    // through `tun_xdp_act()`'s return.
    if act == XDP_PASS {
        let frame = eth_frame(buf)?;
        return Ok(Some(frame));
    }
    let _ = tun_xdp_act(dev, prog, buf, act, ctx, bh);
    Ok(None)
}

/// `tun_put_user_xdp()`: a frame to the reader, after a zeroed vnet
/// header with `IFF_VNET_HDR` (no `tun_pi` header: tun.c writes none for
/// frames); returns the bytes written, counted as transmitted with the
/// header (tun.c's count).
#[inline(always)]
pub(crate) fn tun_put_user_xdp(
    dev: &TunDev,
    frame: XdpFrame,
    to: &mut IovIterDest<'_>,
) -> Result<usize> {
    let tun = dev.priv_();
    let mut vnet_hdr_sz = 0;
    if tun.flags() & IFF_VNET_HDR != 0 {
        vnet_hdr_sz = tun.vnet_hdr_size();
        __tun_vnet_hdr_put(vnet_hdr_sz, 0, to, &Default::default())?;
    }
    let data = frame.data();
    let n = data.len().min(to.len());
    to.copy_to_iter_full(&data[..n])?;
    let ret = n + vnet_hdr_sz;
    dev.sw_netstats_tx_add(ret as u32);
    Ok(ret)
}

use crate::bindings;
