// SPDX-License-Identifier: GPL-2.0

//! The net device ops (tun.c's `tun_netdev_ops`/`tap_netdev_ops`): transmit
//! (`tun_net_xmit`, `tun_automq_xmit`), queue selection
//! (`tun_select_queue`), open/close, statistics, `ndo_init` and
//! `ndo_uninit`.

use crate::flow_logic::reciprocal_scale;
use crate::flow_table::FlowTable;
use crate::sys::{
    poll, rcu, BhOff, FasyncBand, NetDevOps, Rtnl, SkBuff, Stats64, TunSecurity, TxResult,
};
use crate::txfilter::ETH_ALEN;
use crate::{ioctl, queue, rps, Tun, TunDev};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// The ops of a device in one mode: guarded (`UNGUARDED == false`: the
/// RPS/RFS steps behind the static keys) or unguarded (as tun before the
/// two patches). The mode is a type, so the transmit path is compiled once
/// per mode and pays nothing to know it.
pub(crate) struct TunNetDev<const UNGUARDED: bool>;

#[vtable]
impl<const UNGUARDED: bool> NetDevOps for TunNetDev<UNGUARDED> {
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
    fn uninit<'g>(dev: &'g TunDev, rtnl: &mut Rtnl<'g>) {
        queue::tun_net_uninit(dev, rtnl);
    }

    /// `tun_net_open()`.
    fn open(dev: &TunDev) -> Result {
        dev.tx_start_all_queues();
        Ok(())
    }

    /// `tun_net_close()`.
    fn stop(dev: &TunDev) {
        dev.tx_stop_all_queues();
    }

    fn start_xmit(skb: SkBuff, dev: &TunDev, bh: &BhOff) -> TxResult {
        tun_net_xmit::<UNGUARDED>(skb, dev, bh)
    }

    fn select_queue(dev: &TunDev, skb: &SkBuff) -> u16 {
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

    /// `tun_net_fix_features()`: of the offloads `TUNSETOFFLOAD` controls,
    /// only those it set.
    fn fix_features(dev: &TunDev, features: u64) -> u64 {
        let set = dev.priv_().set_features.load(Ordering::Relaxed);
        (features & set) | (features & !crate::TUN_USER_FEATURES)
    }
}

/// `tun_automq_select_queue()` (`ndo_select_queue`, multi-queue only: the
/// core skips it with one queue): the flow's queue on a flow-table hit
/// (saving the hash for RFS), else `reciprocal_scale(hash, numqueues)`.
fn tun_select_queue(dev: &TunDev, skb: &SkBuff) -> u16 {
    let tun = dev.priv_();
    let rcu = rcu::read_lock();
    let numqueues = tun.numqueues();
    let txq = skb.hash_symmetric();
    match tun.flows.find(txq, &rcu) {
        Some(e) => {
            FlowTable::save_rps_rxhash(e, txq);
            e.queue_index.load(Ordering::Relaxed)
        }
        None => reciprocal_scale(txq, numqueues) as u16,
    }
}

/// `tun_automq_xmit()`: with one queue, `ndo_select_queue` did not run, so
/// save the flow's RPS hash here -- only while RPS is in use (`rps_needed`),
/// unless the device is unguarded.
///
/// Deliberate difference: the static key is tested before `numqueues`, so
/// with RPS off the whole step is one NOP (tun.c loads `numqueues` first).
#[inline(always)]
fn tun_automq_xmit<const UNGUARDED: bool>(tun: &Tun, skb: &SkBuff, rcu: &rcu::Guard) {
    let wanted = if UNGUARDED {
        tun.numqueues() == 1
    } else {
        rps::rps_needed() && tun.numqueues() == 1
    };
    if wanted {
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
        return tun_net_xmit_drop(dev, skb);
    };

    tun_automq_xmit::<UNGUARDED>(tun, &skb, &rcu);

    // Drop if the TAP filter (`TUNSETTXFILTER`) does not like it; one load
    // while it is off (only TAPs can turn it on).
    if tun.txflt.is_on() && !tun.txflt.check(skb.head::<ETH_ALEN>().as_ref()) {
        return tun_net_xmit_drop(dev, skb);
    }
    // The file's classic BPF filter (`TUNATTACHFILTER`), which may trim.
    if tfile.sock.has_filter() {
        skb = match tfile.sock.filter(skb) {
            Ok(skb) => skb,
            Err(skb) => return tun_net_xmit_drop(dev, skb),
        };
    }

    if skb.orphan_frags_rx().is_err() {
        return tun_net_xmit_drop(dev, skb);
    }
    skb.tx_timestamp();
    // Orphan the skb: we may hold it for an indefinite time.
    skb.orphan();
    skb.nf_reset_ct();

    if let Err(skb) = tfile.ring.produce(skb, bh) {
        return tun_net_xmit_drop(dev, skb);
    }
    // `dev->lltx`: we update the queue's `trans_start` ourselves.
    dev.txq_trans_cond_update(txq);
    // Notify and wake up the reader process.
    if tfile.fasync.load(Ordering::Relaxed) {
        tfile.sock.kill_fasync(FasyncBand::In);
    }
    tfile.wq.wake_up_poll_if_sleeper(poll::IN);
    TxResult::Ok
}

/// The drop path of `tun_net_xmit()`: counted, and `skb_tx_error()` tells a
/// zerocopy sender its data did not go out.
#[cold]
fn tun_net_xmit_drop(dev: &TunDev, skb: SkBuff) -> TxResult {
    dev.core_stats_tx_dropped_inc();
    skb.tx_error_drop();
    TxResult::Dropped
}
