// SPDX-License-Identifier: GPL-2.0

//! Queues: attaching a file to a device and detaching it (`tun_attach`,
//! `__tun_detach`, `tun_enable_queue`, `tun_disable_queue`), the device's
//! teardown (`tun_net_uninit`, tun.c's `tun_detach_all`), the rings
//! following `tx_queue_len` (`tun_queue_resize`) and the netdevice notifier
//! (`tun_device_event`).

use crate::kver;
use crate::napi::{tun_napi_del, tun_napi_disable, tun_napi_enable, tun_napi_init};
use crate::sys::{
    self, poll, DevEvent, InUninit, NetDevice, NetDeviceNotifierOps, RingSlots, Rtnl,
    RtnlLinkVTable, UnpublishedBatch,
};
use crate::{
    link_ops, Tun, TunDev, TunFile, DEBUGFS_ROOT, DEV_FLOWS_FOPS, DEV_STATS_FOPS, IFF_MULTI_QUEUE,
    IFF_NAPI, IFF_NAPI_FRAGS, IFF_PERSIST, MAX_TAP_QUEUES,
};
use core::sync::atomic::Ordering;
use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

/// Calls `f` on each detached file of `tun`, in list order, walking the
/// list in place (tun.c's `list_for_each_entry` over `tun->disabled`):
/// nothing is allocated, so nothing can fail.
pub(crate) fn for_each_disabled<'a>(
    tun: &'a Tun,
    rtnl: &'a Rtnl<'_>,
    mut f: impl FnMut(&'a TunFile),
) {
    let mut cur = tun.disabled.get(rtnl).as_deref();
    while let Some(tfile) = cur {
        f(tfile);
        cur = tfile.next_disabled.get(rtnl).as_deref();
    }
}

/// Gives `tfile`'s ring room for `len` packets (`ptr_ring_resize`), keeping
/// what fits; what does not is dropped and counted in `tx_dropped`.
fn tun_ring_resize(tun: &Tun, tfile: &TunFile, len: u32) -> Result {
    tun_ring_swap(tun, tfile, RingSlots::new(len as usize)?);
    Ok(())
}

/// Moves `tfile`'s packets into `slots`, which become its ring; what does
/// not fit is dropped and counted in `tx_dropped`.
fn tun_ring_swap(tun: &Tun, tfile: &TunFile, slots: RingSlots) {
    let lost = tfile.ring.resize(slots);
    tun.stats.tx_purged_add(lost);
}

/// `tun_queue_purge()`'s other half: packets written to an `IFF_NAPI`
/// queue that no poll will take. As tun.c, they were counted as received
/// when written (the write succeeded) and are freed uncounted.
fn tun_napi_purge(tfile: &TunFile) {
    tfile.sock.write_queue().purge();
}

/// `tun_enable_queue()`: takes `tfile` off the device's disabled list.
/// Nobody reads that list without rtnl, so no grace period is needed
/// (tun.c: `list_del_init`).
fn tun_enable_queue(tun: &Tun, tfile: &TunFile, rtnl: &mut Rtnl<'_>) {
    let is_me = |f: &Option<Arc<TunFile>>| f.as_deref().is_some_and(|f| core::ptr::eq(f, tfile));
    let me = if is_me(tun.disabled.get(rtnl)) {
        let me = tun.disabled.get_mut(rtnl).take();
        *tun.disabled.get_mut(rtnl) = tfile.next_disabled.get_mut(rtnl).take();
        me
    } else {
        // Walk to the file before ours (`list_del_init`).
        let mut cur = tun.disabled.get(rtnl).clone();
        loop {
            let Some(prev) = cur else {
                return;
            };
            if is_me(prev.next_disabled.get(rtnl)) {
                let me = prev.next_disabled.get_mut(rtnl).take();
                *prev.next_disabled.get_mut(rtnl) = tfile.next_disabled.get_mut(rtnl).take();
                break me;
            }
            cur = prev.next_disabled.get(rtnl).clone();
        }
    };
    tun.numdisabled.fetch_sub(1, Ordering::Relaxed);
    tfile.detached.clear(rtnl);
    drop(me);
}

/// `tun_disable_queue()`: puts `tfile` on the device's disabled list.
fn tun_disable_queue(tun: &Tun, tfile: Arc<TunFile>, rtnl: &mut Rtnl<'_>) {
    let head = tun.disabled.get_mut(rtnl).take();
    *tfile.next_disabled.get_mut(rtnl) = head;
    *tun.disabled.get_mut(rtnl) = Some(tfile);
    tun.numdisabled.fetch_add(1, Ordering::Relaxed);
}

/// 7.3's `tun_force_wake_queue()`: wakes `tfile`'s queue if the device is
/// running, whatever stopped it, and forgets the reads counted since
/// (`cons_cnt`). Both ring locks are held so that the producer cannot stop
/// the queue meanwhile; and the running test is made under the locks that
/// `tun_net_close()` takes, so this cannot undo its stop (`tun_net_open()`
/// wakes the queues of a device that comes back up).
pub(crate) fn tun_force_wake_queue(dev: &TunDev, tfile: &TunFile) {
    let mut ring = tfile.ring.lock_both();
    *ring.consumer.cons_cnt() = 0;
    if dev.is_running() {
        dev.wake_subqueue(tfile.queue_index.load(Ordering::Relaxed));
    }
}

/// `tun_attach()`: makes `tfile` queue `numqueues` of `dev`; unless
/// `skip_filter` (`IFF_NOFILTER`), the file gets the device's filter; with
/// `IFF_NAPI` in `napi_flags` a file attached for the first time gets a NAPI
/// context, which with `IFF_NAPI_FRAGS` its writes fill themselves (a
/// detached file keeps the one it had). tun.c passes the two flags as
/// booleans taken from the same word at every call. With `publish_tun`
/// the file learns of the device (`tfile->tun`); without, from `ndo_init`,
/// the caller publishes it once the device is registered.
pub(crate) fn tun_attach(
    dev: &TunDev,
    tfile: ArcBorrow<'_, TunFile>,
    skip_filter: bool,
    napi_flags: u32,
    publish_tun: bool,
    rtnl: &mut Rtnl<'_>,
) -> Result {
    let tun = dev.priv_();
    // The LSM first, before any check, as tun.c.
    tun.security.get(rtnl).attach(&tfile.sock)?;
    // Only a registered device is published (`RcuDev::publish`): checked
    // before anything changes.
    if publish_tun && !dev.is_registered() {
        return Err(EINVAL);
    }
    let detached = tfile.detached.get_rtnl(rtnl).is_some();
    if tfile.tun.get_rtnl(rtnl).is_some() && !detached {
        return Err(EINVAL);
    }
    let n = tun.numqueues() as usize;
    if tun.flags() & IFF_MULTI_QUEUE == 0 && n == 1 {
        return Err(EBUSY);
    }
    if !detached && n + tun.numdisabled() as usize == MAX_TAP_QUEUES {
        return Err(E2BIG);
    }
    // Re-attach the filter of a persistent device: the program is read
    // again from the user address `TUNATTACHFILTER` gave, in the attaching
    // process. As tun.c, a failure leaves the file without a filter and
    // is not an error. Deliberate difference: tun.c returns right after a
    // successful re-attach, with the file not attached at all (`if (!err)
    // goto out`); we go on attaching it.
    if !skip_filter && tun.filter_attached.load(Ordering::Relaxed) {
        let _ = tfile.sock.attach_filter(tun.fprog.get(rtnl));
    }
    // `SOCK_XDP` says whether the device has an XDP program (vhost-net
    // reads it).
    tfile.sock.set_xdp(tun.xdp_prog.get_rtnl(rtnl).is_some());
    // The ring follows the device's tx_queue_len (a detached file keeps its own).
    if !detached {
        tun_ring_resize(tun, &tfile, dev.tx_queue_len())?;
    }

    // As tun.c 6.12, the file keeps its own send buffer: only
    // `TUNSETSNDBUF` hands the device's down, to the files attached then.
    // (7.3: under the consumer lock, which `__tun_wake_queue()` reads it
    // under.)
    {
        let _ring = tfile.ring.lock_consumer();
        tfile.queue_index.store(n as u16, Ordering::Relaxed);
    }
    // tun.c registers the queue's `xdp_rxq` for a file attached for the
    // first time, and sets its index on a detached one's return.
    tfile.xdp_rxq.bind(dev, n as u16);
    tfile.shutdown.store(false, Ordering::Relaxed);
    if kver::HAS_BACKPRESSURE {
        tun_force_wake_queue(dev, &tfile);
    }
    // Slot `n` is empty: nothing is unpublished, no grace period.
    drop(tun.tfiles[n].replace(Some(tfile.into()), rtnl));
    if detached {
        tun_enable_queue(tun, &tfile, rtnl);
        tun_napi_enable(&tfile, rtnl);
    } else if napi_flags & IFF_NAPI != 0 {
        tun_napi_init(&tfile, dev, napi_flags & IFF_NAPI_FRAGS != 0, rtnl);
    }
    if publish_tun {
        tfile.tun.publish(dev, rtnl)?;
    }
    // The core learns of the queue before writers may record it (see
    // `tun_get_user`).
    dev.set_real_num_queues(n as u32 + 1, rtnl);
    tun.numqueues.store(n as u32 + 1, Ordering::Release);
    Ok(())
}

/// `__tun_detach()`: takes `tfile`'s queue away; with `clean` the file is
/// being closed, without it the queue is disabled (`TUNSETQUEUE`).
pub(crate) fn __tun_detach<'g>(tfile: &TunFile, clean: bool, rtnl: &mut Rtnl<'g>) {
    // Counted references: the file unpublishes them below.
    let dev = tfile.tun.get_rtnl(rtnl).map(NetDevice::hold);
    let detached = tfile.detached.get_rtnl(rtnl).map(NetDevice::hold);

    // The NAPI context goes with the file (`tun_napi_disable`,
    // `tun_napi_del`); a detached queue's is only disabled.
    if dev.is_some() && clean {
        tun_napi_del(tfile, rtnl);
    }

    if let (Some(dev), None) = (&dev, &detached) {
        let tun = dev.priv_();
        let index = tfile.queue_index.load(Ordering::Relaxed) as usize;
        let last = tun.numqueues() as usize - 1;
        // Move the last queue into our slot, as tun.c does; 7.3 moves it
        // under our consumer lock, then gives the moved file (`ntfile`)
        // its index under its own, so that `__tun_wake_queue()` on either
        // side sees slot and index agree.
        let me = if index == last {
            *tfile.ring.lock_consumer().cons_cnt() = 0;
            tun.tfiles[index].replace(None, rtnl)
        } else {
            let me = {
                let _ring = tfile.ring.lock_consumer();
                tun.tfiles[index].take_from(&tun.tfiles[last], rtnl)
            };
            if let Some(moved) = tun.tfiles[index].get_rtnl(rtnl) {
                let mut ring = moved.ring.lock_consumer();
                moved.queue_index.store(index as u16, Ordering::Relaxed);
                moved.xdp_rxq.set_queue_index(index as u16);
                *ring.cons_cnt() = 0;
            }
            me
        };
        tun.numqueues.store(last as u32, Ordering::Release);
        if clean {
            tfile.tun.clear(rtnl);
        }
        // Waits for a grace period (tun.c's `synchronize_net()`): no
        // transmitter sees this queue after it.
        let me = me.map(sys::Unpublished::into_arc);
        if !clean {
            if let Some(me) = me {
                tun_disable_queue(tun, me, rtnl);
            }
            // The device is registered (its `ndo_uninit` detaches every
            // file first), so this cannot fail; if it did, the file would
            // stay on the disabled list, purged with the device.
            let _ = tfile.detached.publish(dev, rtnl);
            tun_napi_disable(tfile, rtnl);
        } else {
            drop(me);
        }
        // Deliberate difference: tun.c deletes the flows of queue
        // `numqueues + 1`, which no queue has; we delete the departed
        // queue's flows and move the moved queue's flows with it.
        tun.flows.detach_queue(index as u16, last as u16);
        // Packets the reader will never see are drops, as far as the
        // counters go: sent = read + dropped.
        let purged = tfile.ring.purge();
        tun.stats.tx_purged_add(purged);
        tun_napi_purge(tfile);
        // 7.3: the queue now in our slot may have been stopped for the
        // ring of the file that had it: wake it if its own ring is empty
        // (`ntfile`: the moved file, or ours if we were the last).
        if kver::HAS_BACKPRESSURE {
            let ntfile = if index == last {
                Some(tfile)
            } else {
                tun.tfiles[index].get_rtnl(rtnl)
            };
            if let Some(ntfile) = ntfile {
                let mut ring = ntfile.ring.lock_both();
                *ring.consumer.cons_cnt() = 0;
                if dev.is_running() && ring.consumer.is_empty() {
                    dev.wake_subqueue(index as u16);
                }
            }
        }
        dev.set_real_num_queues(last as u32, rtnl);
    } else if let (true, Some(dev)) = (clean, &detached) {
        tun_enable_queue(dev.priv_(), tfile, rtnl);
        tfile.tun.clear(rtnl);
    }

    if clean {
        if let Some(dev) = dev.as_ref().or(detached.as_ref()) {
            let tun = dev.priv_();
            if tun.numqueues() == 0 && tun.numdisabled() == 0 {
                dev.carrier_off();
                if tun.flags() & IFF_PERSIST == 0 && dev.is_registered() {
                    dev.unregister(rtnl);
                }
            }
        }
        // A detached file's ring (tun.c: ptr_ring_cleanup).
        let purged = tfile.ring.purge();
        if let Some(dev) = dev.as_ref().or(detached.as_ref()) {
            dev.priv_().stats.tx_purged_add(purged);
        }
    }
}

/// `tun_detach()`.
pub(crate) fn tun_detach(tfile: &TunFile, clean: bool) {
    Rtnl::with(|rtnl| {
        let dev = tfile
            .tun
            .get_rtnl(rtnl)
            .or(tfile.detached.get_rtnl(rtnl))
            .map(NetDevice::hold);
        __tun_detach(tfile, clean, rtnl);
        if let Some(dev) = dev {
            if dev.is_registered() {
                dev.state_change(rtnl);
            }
        }
    })
}

/// `tun_net_init()`'s attach (`ndo_init`): the file creating the device
/// becomes its first queue before `register_netdevice()` creates the
/// queues' sysfs objects and announces the device, so both see one real
/// queue (and `IFLA_TUN_NUM_QUEUES` 1), not `MAX_TAP_QUEUES` added then
/// removed. As tun.c (`publish_tun` false), the file learns of the device
/// only once it is registered (`tun_set_iff`). If registration fails after
/// this, the core calls `ndo_uninit`, which detaches the file again.
pub(crate) fn tun_net_init<'g>(dev: &'g TunDev, rtnl: &mut Rtnl<'g>) -> Result {
    let (tfile, flags) = dev.priv_().file.get_mut(rtnl).take().ok_or(EINVAL)?;
    tun_attach(dev, tfile.as_arc_borrow(), false, flags, false, rtnl)
}

/// `tun_net_uninit()` / `tun_detach_all()`: the device is being
/// unregistered; detach every queue, attached or disabled, wake readers,
/// and after one grace period for all of them, purge their rings.
pub(crate) fn tun_net_uninit<'g>(dev: &InUninit<'g, Tun>, rtnl: &mut Rtnl<'g>) {
    let tun = dev.dev().priv_();
    tun.debugfs.remove();
    let n = tun.numqueues() as usize;
    let shut = |tfile: &TunFile, rtnl: &mut Rtnl<'g>| {
        // The NAPI context goes now; the grace period below is the one its
        // memory waits for (tun.c: `netif_napi_del()`, one each, after it).
        tun_napi_del(tfile, rtnl);
        tfile.shutdown.store(true, Ordering::Relaxed);
        tfile.tun.unpublish_uninit(dev, rtnl);
        tfile.detached.unpublish_uninit(dev, rtnl);
        tfile.sock.wq().wake_up_poll(poll::IN | poll::ERR);
    };
    for slot in &tun.tfiles[..n] {
        // A counted reference: the token is lent mutably below.
        if let Some(tfile) = slot.get_arc_rtnl(rtnl) {
            shut(&tfile, rtnl);
        }
    }
    // Counted references, one at a time, as above.
    let mut cur = tun.disabled.get(rtnl).clone();
    while let Some(tfile) = cur {
        shut(&tfile, rtnl);
        cur = tfile.next_disabled.get(rtnl).clone();
    }
    tun.numqueues.store(0, Ordering::Release);
    tun.numdisabled.store(0, Ordering::Relaxed);
    // One `synchronize_net()` for every queue, as tun.c. (The NAPI queues
    // were purged by `napi_del()` in `shut`: nothing can be queued after.)
    let mut batch = UnpublishedBatch::with_capacity(n, |tfile: Arc<TunFile>| {
        tun.stats.tx_purged_add(tfile.ring.purge())
    });
    for slot in &tun.tfiles[..n] {
        if let Some(old) = slot.replace(None, rtnl) {
            batch.push(old);
        }
    }
    batch.finish();
    // Disabled files were out of the transmitters' reach already; the list
    // comes apart one link at a time (no recursive drop of the chain).
    let mut cur = tun.disabled.get_mut(rtnl).take();
    while let Some(tfile) = cur {
        cur = tfile.next_disabled.get_mut(rtnl).take();
        tun.stats.tx_purged_add(tfile.ring.purge());
    }
    // `tun_flow_flush()`: no queue is left to steer to.
    tun.flows.flush();
    if tun.flags() & IFF_PERSIST != 0 {
        sys::module_put();
    }
}

/// `tun_queue_resize()`: `tx_queue_len` changed; resize every ring, the
/// attached queues' and the detached ones', all or none
/// (`ptr_ring_resize_multiple_bh()`): every new ring is allocated before
/// any is swapped in, so a failed allocation changes nothing.
fn tun_queue_resize(dev: &TunDev, rtnl: &Rtnl<'_>) -> Result {
    let tun = dev.priv_();
    let n = tun.numqueues() as usize;
    let len = dev.tx_queue_len() as usize;
    let total = n + tun.numdisabled() as usize;
    let mut rings = KVec::with_capacity(total, GFP_KERNEL)?;
    for _ in 0..total {
        // Within the capacity reserved above: `push` does not allocate.
        rings.push(RingSlots::new(len)?, GFP_KERNEL)?;
    }
    let mut rings = rings.into_iter();
    for slot in &tun.tfiles[..n] {
        if let (Some(tfile), Some(slots)) = (slot.get_rtnl(rtnl), rings.next()) {
            tun_ring_swap(tun, tfile, slots);
        }
    }
    for_each_disabled(tun, rtnl, |tfile| {
        if let Some(slots) = rings.next() {
            tun_ring_swap(tun, tfile, slots);
        }
    });
    // 7.3: a queue stopped on a full ring may have room now.
    if kver::HAS_BACKPRESSURE {
        for slot in &tun.tfiles[..n] {
            if let Some(tfile) = slot.get_rtnl(rtnl) {
                tun_force_wake_queue(dev, tfile);
            }
        }
    }
    Ok(())
}

/// The netdevice notifier (`tun_device_event()`).
pub(crate) struct TunEvents;

impl NetDeviceNotifierOps for TunEvents {
    type Priv = Tun;

    fn link() -> &'static RtnlLinkVTable<Tun> {
        link_ops()
    }

    /// `tun_device_event()`: the rings follow `tx_queue_len`; writers
    /// waiting for a device to come up wake (tun.c: `sk_write_space` on
    /// `NETDEV_UP`); and, ours only, the debugfs directory follows the
    /// device's name and namespace.
    fn event<'g>(dev: &'g TunDev, ev: DevEvent, rtnl: &mut Rtnl<'g>) -> Result {
        let tun = dev.priv_();
        match ev {
            DevEvent::ChangeTxQueueLen => return tun_queue_resize(dev, rtnl),
            DevEvent::Up => {
                let n = tun.numqueues() as usize;
                for slot in &tun.tfiles[..n] {
                    if let Some(tfile) = slot.get_rtnl(rtnl) {
                        tfile.sock.wq().wake_up_poll(poll::OUT);
                    }
                }
            }
            DevEvent::Register | DevEvent::ChangeName => tun.debugfs.create(
                &DEBUGFS_ROOT,
                dev,
                &[
                    (c_str!("flows"), &DEV_FLOWS_FOPS),
                    (c_str!("stats"), &DEV_STATS_FOPS),
                ],
                rtnl,
            ),
            DevEvent::Unregister => tun.debugfs.remove(),
        }
        Ok(())
    }
}
