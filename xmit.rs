// SPDX-License-Identifier: GPL-2.0

//! The net device ops (tun.c's `tun_netdev_ops`/`tap_netdev_ops`): transmit
//! (`tun_net_xmit`, `tun_automq_xmit`, `run_ebpf_filter`), queue selection
//! (`tun_select_queue`, `tun_ebpf_select_queue`), open/close, statistics, `ndo_init` and
//! `ndo_uninit`.

use crate::flow_logic::reciprocal_scale;
use crate::flow_table::FlowTable;
use crate::kver;
use crate::sys::tun::{FasyncBand, TunSecurity};
use crate::sys::xdp::{XdpProg, XdpXmitFrames};
use crate::sys::{
    poll, rcu, smp_mb__after_atomic, BhOff, DropReason, InUninit, NetDeviceOps, Rtnl, SkBuff,
    SkFilterProg, Stats64, TxResult,
};
use crate::txfilter::ETH_ALEN;
use crate::{ioctl, queue, rps, xdp, Tun, TunDev, TunFile};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// The ops of a device in one mode: guarded (`UNGUARDED == false`: the
/// RPS/RFS steps behind the static keys) or unguarded (as tun before the
/// two patches). The mode is a type, so the transmit path is compiled once
/// per mode and pays nothing to know it.
pub(crate) struct TunNetDev<const UNGUARDED: bool>;

#[vtable]
impl<const UNGUARDED: bool> NetDeviceOps for TunNetDev<UNGUARDED> {
    type Priv = Tun;

    /// `tun_net_init()`: the device's LSM blob, then the attach of the
    /// creating file as the first queue (on an error the blob goes with the
    /// `Tun`, which the failed registration drops). (Features and flags are
    /// set before registration, `tun_net_initialize()`.)
    fn init<'g>(dev: &'g TunDev, rtnl: &mut Rtnl<'g>) -> Result {
        *dev.priv_().security.get_mut(rtnl) = TunSecurity::alloc()?;
        queue::tun_net_init(dev, rtnl)
    }

    /// `tun_net_uninit()`.
    fn uninit<'g>(dev: &InUninit<'g, Tun>, rtnl: &mut Rtnl<'g>) {
        queue::tun_net_uninit(dev, rtnl);
    }

    /// `tun_net_open()`.
    fn open(dev: &TunDev) -> Result {
        dev.tx_start_all_queues();
        Ok(())
    }

    /// `tun_net_close()`.
    fn stop<'g>(dev: &'g TunDev, rtnl: &Rtnl<'g>) {
        tun_net_close(dev, rtnl);
    }

    fn start_xmit(skb: SkBuff, dev: &TunDev, bh: &BhOff) -> TxResult {
        tun_net_xmit::<UNGUARDED>(skb, dev, bh)
    }

    #[inline(always)]
    fn select_queue(dev: &TunDev, skb: &mut SkBuff) -> u16 {
        tun_select_queue(dev, skb)
    }

    /// `tun_net_get_stats64()`: what the per-CPU counters do not hold
    /// (`sys` adds these to `dev_get_tstats64()`'s).
    fn get_stats64(dev: &TunDev) -> Stats64 {
        dev.priv_().stats.stats64()
    }

    /// `tun_net_change_carrier()`.
    fn change_carrier(dev: &TunDev, on: bool) -> Result {
        ioctl::tun_net_change_carrier(dev, on)
    }

    /// `tun_xdp()`'s `XDP_SETUP_PROG` (TAP only: the TUN tables have no
    /// `ndo_bpf`).
    fn xdp_setup<'g>(dev: &'g TunDev, prog: Option<XdpProg>, rtnl: &mut Rtnl<'g>) -> Result {
        xdp::tun_xdp_set(dev, prog, rtnl)
    }

    /// `tun_xdp_xmit()`, inlined into the ops table's entry point.
    #[inline(always)]
    fn xdp_xmit(dev: &TunDev, frames: &mut XdpXmitFrames<'_>, flush: bool, bh: &BhOff) -> Result {
        xdp::tun_xdp_xmit(dev, frames, flush, bh)
    }

    /// `tun_net_fix_features()`: of the offloads `TUNSETOFFLOAD` controls,
    /// only those it set.
    fn fix_features(dev: &TunDev, features: u64) -> u64 {
        let set = dev.priv_().set_features.load(Ordering::Relaxed);
        (features & set) | (features & !crate::TUN_USER_FEATURES.bits())
    }
}

/// `tun_net_close()`: stops every queue. On 7.3 first, with
/// `netif_running()` already false, each queue's two ring locks are taken
/// (and `cons_cnt` reset) so that no wake site (`tun_net_xmit()`'s
/// re-check, `__tun_wake_queue()`, `tun_force_wake_queue()`) is between
/// its running test and its wake: the stop below is the last write to the
/// queues' `__QUEUE_STATE_DRV_XOFF`.
fn tun_net_close(dev: &TunDev, rtnl: &Rtnl<'_>) {
    if kver::HAS_BACKPRESSURE {
        let tun = dev.priv_();
        let n = tun.numqueues() as usize;
        for slot in &tun.tfiles[..n] {
            if let Some(tfile) = slot.get_rtnl(rtnl) {
                let mut ring = tfile.ring.lock_both();
                *ring.consumer.cons_cnt() = 0;
            }
        }
    }
    dev.tx_stop_all_queues();
}

/// `tun_select_queue()` (`ndo_select_queue`, multi-queue only: the core
/// skips it with one queue): the steering program's queue if one is
/// attached, else the flow table's. Inlined into the ops table's entry
/// point: a call less per packet of a multi-queue device.
#[inline(always)]
fn tun_select_queue(dev: &TunDev, skb: &mut SkBuff) -> u16 {
    let tun = dev.priv_();
    let rcu = rcu::read_lock();
    match tun.steering_prog.get(&rcu) {
        Some(prog) => tun_ebpf_select_queue(tun, prog, skb, &rcu),
        None => tun_automq_select_queue(tun, skb, &rcu),
    }
}

/// `tun_ebpf_select_queue()`: the program's value modulo the number of
/// queues -- cut to 16 bits first, as tun.c's `u16 ret` cuts it -- or 0
/// without queues.
fn tun_ebpf_select_queue(
    tun: &Tun,
    prog: &SkFilterProg,
    skb: &mut SkBuff,
    rcu: &rcu::Guard,
) -> u16 {
    let numqueues = tun.numqueues();
    if numqueues == 0 {
        return 0;
    }
    let ret = prog.run(skb, rcu) as u16;
    (u32::from(ret) % numqueues) as u16
}

/// `tun_automq_select_queue()`: the flow's queue on a flow-table hit
/// (saving the hash for RFS), else `reciprocal_scale(hash, numqueues)`.
#[inline(always)]
fn tun_automq_select_queue(tun: &Tun, skb: &SkBuff, rcu: &rcu::Guard) -> u16 {
    let numqueues = tun.numqueues();
    let txq = skb.hash_symmetric();
    match tun.flows.find(txq, rcu) {
        Some(e) => {
            FlowTable::save_rps_rxhash(e, txq);
            e.queue_index.load(Ordering::Relaxed)
        }
        None => reciprocal_scale(txq, numqueues) as u16,
    }
}

/// `tun_automq_xmit()`: with one queue, `ndo_select_queue` did not run, so
/// save the flow's RPS hash here -- only while RPS is in use (`rps_needed`),
/// unless the device is unguarded -- and only without a steering program
/// (tun.c's `tun_net_xmit()` skips the step while one is attached).
///
/// Deliberate difference: the static key is tested before `numqueues` and
/// the steering program, so with RPS off the whole step is one NOP (tun.c
/// loads `steering_prog` and `numqueues` first).
#[inline(always)]
fn tun_automq_xmit<const UNGUARDED: bool>(tun: &Tun, skb: &SkBuff, rcu: &rcu::Guard) {
    // An unguarded device skips the key (and its jump site) altogether.
    let rps = UNGUARDED || rps::rps_needed();
    if rps && tun.numqueues() == 1 && !tun.steering_prog.is_some() {
        let rxhash = skb.hash_symmetric();
        tun.stats.rps_hashes_inc();
        if let Some(e) = tun.flows.find(rxhash, rcu) {
            FlowTable::save_rps_rxhash(e, rxhash);
        }
    }
}

/// `tun_net_xmit()`: queue the packet on the ring of its queue and wake the
/// reader; drop it when no file is attached or the ring is full. The steps
/// before queueing are tun.c's, in its order: release a zerocopy sender's
/// pages (the reader may take its time), timestamp, orphan, forget
/// conntrack.
#[inline(always)]
fn tun_net_xmit<const UNGUARDED: bool>(mut skb: SkBuff, dev: &TunDev, bh: &BhOff) -> TxResult {
    let tun = dev.priv_();
    let txq = skb.queue_mapping();
    let rcu = rcu::read_lock();
    let Some(tfile) = tun
        .tfiles
        .get(usize::from(txq))
        .and_then(|slot| slot.get(&rcu))
    else {
        // Drop the packet if no file is attached.
        return tun_net_xmit_drop(dev, skb, DropReason::DEV_READY);
    };

    tun_automq_xmit::<UNGUARDED>(tun, &skb, &rcu);

    // The filters, in tun.c's order: the TAP filter (`TUNSETTXFILTER`),
    // the file's classic BPF filter (`TUNATTACHFILTER`), the device's eBPF
    // filter (`TUNSETFILTEREBPF`). While neither of the device's is on,
    // one load tests both (`tx_filters`).
    if !tun.tx_filters.load(Ordering::Relaxed) {
        if tfile.sock.has_filter() {
            skb = match tfile.sock.filter(skb) {
                Ok(skb) => skb,
                Err((skb, reason)) => return tun_net_xmit_drop(dev, skb, reason),
            };
        }
    } else {
        skb = match tun_net_xmit_filters(dev, tfile, skb, &rcu) {
            Ok(skb) => skb,
            Err((skb, reason)) => return tun_net_xmit_drop(dev, skb, reason),
        };
    }

    if skb.orphan_frags_rx().is_err() {
        return tun_net_xmit_drop(dev, skb, DropReason::SKB_UCOPY_FAULT);
    }
    skb.tx_timestamp();
    // Orphan the skb: we may hold it for an indefinite time.
    skb.orphan();
    skb.nf_reset_ct();

    // Without `IFF_BACKPRESSURE` (always on 6.12, where the flag is 0 and
    // this test is compiled out) the lock-and-produce of `ptr_ring_produce()`.
    let ret = if !crate::tun_backpressure(tun.flags()) {
        tfile.ring.produce(skb, bh)
    } else {
        tun_ring_produce_backpressure(dev, tfile, txq, skb, bh)
    };
    if let Err(skb) = ret {
        // A rare case with `IFF_BACKPRESSURE` and a qdisc, but it can
        // happen (`lltx`); the skb was changed above (timestamp, orphan,
        // filter trim), so it is dropped, not given back (`NETDEV_TX_BUSY`).
        return tun_net_xmit_drop(dev, skb, DropReason::FULL_RING);
    }
    // `dev->lltx`: we update the queue's `trans_start` ourselves.
    dev.txq_trans_cond_update(txq);
    // Notify and wake up the reader process.
    if tfile.fasync.load(Ordering::Relaxed) {
        tfile.sock.kill_fasync(FasyncBand::In);
    }
    tfile.sock.wq().wake_up_poll_if_sleeper(poll::IN);
    TxResult::Ok
}

/// `tun_net_xmit()`'s filters while the device has one of its own on:
/// the TAP filter drops what it does not like (only TAPs can turn it on),
/// the file's classic filter may drop or trim, the eBPF filter's value is
/// the length to keep (`run_ebpf_filter()`: 0 drops).
#[inline(never)]
fn tun_net_xmit_filters(
    dev: &TunDev,
    tfile: &TunFile,
    mut skb: SkBuff,
    rcu: &rcu::Guard,
) -> Result<SkBuff, (SkBuff, DropReason)> {
    let tun = dev.priv_();
    if tun.txflt.is_on() && !tun.txflt.check(skb.head::<ETH_ALEN>().as_ref()) {
        return Err((skb, DropReason::TAP_TXFILTER));
    }
    if tfile.sock.has_filter() {
        skb = tfile.sock.filter(skb)?;
    }
    if let Some(prog) = tun.filter_prog.get(rcu) {
        let len = prog.run(&mut skb, rcu);
        if len == 0 {
            return Err((skb, DropReason::TAP_FILTER));
        }
        if skb.trim(len).is_err() {
            return Err((skb, DropReason::NOMEM));
        }
    }
    Ok(skb)
}

/// 7.3's `tun_net_xmit()` with `IFF_BACKPRESSURE`: under the producer
/// lock, produce, then stop the queue if the ring is now full -- only on a
/// running device (do not touch the queue state of a device going down)
/// whose queue has a qdisc to hold what comes next -- and wake it again if
/// a reader made room meanwhile (`__tun_wake_queue()` may have looked
/// before the stop).
#[inline(never)]
fn tun_ring_produce_backpressure(
    dev: &TunDev,
    tfile: &TunFile,
    txq: u16,
    skb: SkBuff,
    bh: &BhOff,
) -> Result<(), SkBuff> {
    let Some(queue) = dev.tx_queue(txq) else {
        return tfile.ring.produce(skb, bh);
    };
    let mut ring = tfile.ring.lock_producer(bh);
    let ret = ring.produce(skb);
    if dev.is_running() && !queue.has_no_queue(bh) && ring.check_produce() == Err(ENOSPC) {
        queue.stop();
        // Paired with `smp_mb()` in `__tun_wake_queue()`.
        smp_mb__after_atomic();
        if ring.check_produce().is_ok() {
            queue.wake();
        }
    }
    ret
}

/// The drop path of `tun_net_xmit()`: counted, `skb_tx_error()` tells a
/// zerocopy sender its data did not go out, and the skb is freed with
/// tun.c's reason for the drop (`kfree_skb_reason()`).
#[cold]
fn tun_net_xmit_drop(dev: &TunDev, skb: SkBuff, reason: DropReason) -> TxResult {
    dev.core_stats_tx_dropped_inc();
    skb.tx_error_drop(reason);
    TxResult::Dropped
}
