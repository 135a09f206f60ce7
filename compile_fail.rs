// SPDX-License-Identifier: GPL-2.0

//! Misuses of the unsafe layer that must not compile: `scripts/compile-fail.sh`
//! builds every case at once (`make RTUN_COMPILE_FAIL="<case> ..."`) and
//! passes only if rustc rejects each case, within the case's own lines,
//! with the error named beside it. They are the soundness rules of `sys/` written as code: a
//! reference read out of an rtnl-protected slot cannot outlive a
//! replacement of the slot, a device found under rtnl cannot leave the
//! lock's section, rtnl-locked data is never shared and mutable at once,
//! an `RcuArc` is only as thread-safe as what it holds, and a per-device
//! debugfs file reads only the kind of device it was made for, a poll
//! table takes only wait queues that live as long as the polled file, a
//! `TUN_MSG_PTR` batch is taken once and never answered with an error once
//! taken, a send header and a receive header are different things, the
//! file `open` sees does not outlive the call, a
//! device unpublished from an `RcuDev` is not used after, only `ndo_uninit`
//! unpublishes without a grace period, a timer's owner stays whole
//! while the timer may fire, an eBPF program read from its slot runs only
//! inside the RCU section that found it and only on an skb lent
//! exclusively, an XDP buffer does not outlive the receive queue its
//! program reads nor a receive queue the device it names, an XDP context does not leave the section that set it
//! up, and the driver above `sys/` has no `unsafe`.

#![allow(dead_code, unused_variables, unused_imports)]

use crate::sys::tun::{BatchOffer, BatchVerdict, RecvMsg};
use crate::sys::{
    DebugfsDevFileOps, DebugfsFileVTable, File, MiscDevice, NetDevice, NetNs, RcuArc, RcuDev, Rtnl,
    RtnlLocked, SkBuff, SkFilterProg, TextBuf, Timed, TimerCallback,
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// E0502: `replace` needs `&mut Rtnl` while the `&T` from `get_rtnl`
/// still borrows it (the `&T` would be used after the grace period freed it).
#[cfg(rtun_compile_fail = "ref_across_replace")]
fn ref_across_replace(slot: &RcuArc<AtomicU32>) {
    Rtnl::with(|rtnl| {
        let v = slot.get_rtnl(rtnl);
        drop(slot.replace(None, rtnl));
        v.map(|v| v.load(Ordering::Relaxed))
    });
}

/// E0502: shared and mutable access to rtnl-locked data at once.
#[cfg(rtun_compile_fail = "rtnl_locked_aliasing")]
fn rtnl_locked_aliasing(data: &RtnlLocked<u32>) {
    Rtnl::with(|rtnl| {
        let shared = data.get(rtnl);
        *data.get_mut(rtnl) += 1;
        *shared
    });
}

/// A device found under rtnl cannot leave the lock's section (it may be
/// freed by `rtnl_unlock()`): "borrowed data escapes" / "lifetime may not
/// live long enough".
#[cfg(rtun_compile_fail = "device_escapes_rtnl")]
fn device_escapes_rtnl(net: &NetNs) {
    let dev = Rtnl::with(|rtnl| {
        NetDevice::get_by_name(net, kernel::c_str!("x"), &crate::link::TUN_LINK_OPS, rtnl)
    });
    drop(dev);
}

/// E0277: `RcuArc<T>` is `Sync` only if `Arc<T>` is.
#[cfg(rtun_compile_fail = "rcuarc_needs_sync")]
fn rcuarc_needs_sync() {
    fn assert_sync<T: Sync>() {}
    assert_sync::<RcuArc<core::cell::Cell<u32>>>();
}

/// E0277: `RtnlLocked<T>` is `Sync` only for `T: Send`.
#[cfg(rtun_compile_fail = "rtnl_locked_needs_send")]
fn rtnl_locked_needs_send() {
    fn assert_sync<T: Sync>() {}
    assert_sync::<RtnlLocked<*mut u8>>();
}

/// E0308: a per-device debugfs file made for devices holding a `u32` cannot
/// be put on a device holding a `Tun` (its `show` would read a `Tun` as a
/// `u32`).
#[cfg(rtun_compile_fail = "dev_file_of_other_priv")]
fn dev_file_of_other_priv(dev: &crate::TunDev) {
    struct Other;
    impl DebugfsDevFileOps for Other {
        type Priv = u32;
        fn show(dev: &NetDevice<u32>, t: &mut TextBuf) -> Result {
            Ok(())
        }
    }
    static OTHER_FOPS: DebugfsFileVTable<u32> = DebugfsFileVTable::new_dev::<Other>();
    Rtnl::with(|rtnl| {
        dev.priv_().debugfs.create(
            &crate::DEBUGFS_ROOT,
            dev,
            &[(kernel::c_str!("x"), &OTHER_FOPS)],
            rtnl,
        )
    });
}

/// A wait queue that does not live as long as the polled file's private
/// data cannot be registered with its poll table: epoll keeps the entry
/// until the file's release ("lifetime may not live long enough").
#[cfg(rtun_compile_fail = "poll_wait_foreign_queue")]
fn poll_wait_foreign_queue<'f>(table: &crate::sys::PollTable<'f>, other: &crate::sys::tun::Sock) {
    table.wait(other.wq());
}

/// E0382: a batch's buffers are taken once (a second `XdpBatch` over the
/// same buffers would put each page twice).
#[cfg(rtun_compile_fail = "batch_taken_twice")]
fn batch_taken_twice<'b>(offer: BatchOffer<'b>) -> BatchVerdict<'b> {
    let (first, _) = offer.take();
    drop(first);
    let (_second, taken) = offer.take();
    Ok(taken)
}

/// E0382: once taken, a batch cannot be refused (the sender would free
/// the pages the driver already put).
#[cfg(rtun_compile_fail = "batch_refused_after_take")]
fn batch_refused_after_take<'b>(offer: BatchOffer<'b>) -> BatchVerdict<'b> {
    let (batch, _taken) = offer.take();
    drop(batch);
    Err(offer.refuse(EINVAL))
}

/// A verdict belongs to its own call: one taken from another call's
/// batch does not answer this one ("lifetime may not live long enough").
#[cfg(rtun_compile_fail = "batch_verdict_of_other_call")]
fn batch_verdict_of_other_call<'a, 'b>(
    other: BatchOffer<'a>,
    offer: BatchOffer<'b>,
) -> BatchVerdict<'b> {
    let (_batch, taken) = other.take();
    drop(offer.refuse(EINVAL));
    Ok(taken)
}

/// E0599: a receive header has no data to send (nor a sender's control
/// message: its `msg_control` is a ring entry).
#[cfg(rtun_compile_fail = "recv_header_as_sender")]
fn recv_header_as_sender(m: &mut RecvMsg<'_>) -> bool {
    m.zerocopy()
}

/// E0502: a device read out of an `RcuDev` under rtnl cannot be used
/// across its unpublish (whose reference may be the last one of a device
/// unregistered earlier: `netdev_run_todo()` frees it without rtnl).
#[cfg(rtun_compile_fail = "rcudev_ref_across_clear")]
fn rcudev_ref_across_clear(slot: &RcuDev<u32>) {
    Rtnl::with(|rtnl| {
        if let Some(dev) = slot.get_rtnl(rtnl) {
            slot.clear(rtnl);
            let _ = dev.priv_();
        }
    });
}

/// E0423: only `ndo_uninit`'s trampoline makes the proof that the device
/// is in its `ndo_uninit` (unpublishing it without a grace period is
/// sound only there).
#[cfg(rtun_compile_fail = "uninit_proof_forged")]
fn uninit_proof_forged(dev: &crate::TunDev, slot: &RcuDev<crate::Tun>) {
    Rtnl::with(|rtnl| slot.unpublish_uninit(&crate::sys::InUninit(dev), rtnl));
}

/// A timer's callback state for the cases below.
struct Ageing(AtomicU32);

impl TimerCallback for Ageing {
    fn timer_fired(this: &Timed<Self>) {
        this.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// E0277: an armed `Timed` cannot be moved out of its pinned box (and its
/// memory freed) while the timer may fire: it is not `Unpin`.
#[cfg(rtun_compile_fail = "timed_moved_while_armed")]
fn timed_moved_while_armed(t: Pin<KBox<Timed<Ageing>>>) {
    t.mod_timer(crate::sys::jiffies() + crate::sys::HZ);
    let boxed = Pin::into_inner(t);
    drop(KBox::into_inner(boxed));
}

/// E0596: the callback's state cannot be changed under it (no `&mut` into
/// a `Timed`).
#[cfg(rtun_compile_fail = "timed_state_mut")]
fn timed_state_mut(t: &mut Timed<Ageing>) {
    let state: &mut Ageing = &mut *t;
    *state = Ageing(AtomicU32::new(0));
}

/// E0277: the callback shares the state with its softirq: `Sync` only.
#[cfg(rtun_compile_fail = "timer_state_needs_sync")]
fn timer_state_needs_sync() {
    struct NotSync(core::cell::Cell<u32>);
    impl TimerCallback for NotSync {
        fn timer_fired(_this: &Timed<Self>) {}
    }
}

/// The file `FileOps::open` sees is borrowed for the call: a driver cannot
/// keep it in the file's data (nor anywhere else), where it would outlive
/// the open ("explicit lifetime required" / "lifetime may not live long
/// enough").
#[cfg(rtun_compile_fail = "file_escapes_open")]
fn file_escapes_open() {
    struct KeptFile(&'static File);
    // `FileOps::open`'s signature, the data keeping the file.
    fn open(file: &File, _misc: &MiscDevice) -> Result<Arc<KeptFile>> {
        Ok(Arc::new(KeptFile(file), GFP_KERNEL)?)
    }
}

/// E0507: nor can it copy the file out of the borrow (a `File` is only
/// ever behind `open`'s reference).
#[cfg(rtun_compile_fail = "file_copied_out")]
fn file_copied_out(file: &File) -> usize {
    let owned: File = *file;
    core::mem::size_of_val(&owned)
}

/// `unsafe_code`: the driver is safe Rust (the crate root denies the lint
/// outside sys/), so an `unsafe` block above the layer does not build.
#[cfg(rtun_compile_fail = "driver_unsafe_block")]
fn driver_unsafe_block(p: *const u32) -> u32 {
    // SAFETY: None: this must not compile.
    unsafe { *p }
}

/// `unsafe_code`: nor does a driver's `unsafe impl`.
#[cfg(rtun_compile_fail = "driver_unsafe_impl")]
fn driver_unsafe_impl() {
    struct DriverShared(*mut u32);
    // SAFETY: None: this must not compile.
    unsafe impl Send for DriverShared {}
}

/// E0505: a program found under an RCU read section runs after the
/// section ended (a replacement's grace period may have freed it).
#[cfg(rtun_compile_fail = "bpf_prog_outlives_rcu")]
fn bpf_prog_outlives_rcu(slot: &RcuArc<SkFilterProg>, skb: &mut SkBuff) -> u32 {
    let rcu = crate::sys::rcu::read_lock();
    let prog = slot.get(&rcu);
    drop(rcu);
    let again = crate::sys::rcu::read_lock();
    prog.map_or(0, |p| p.run(skb, &again))
}

/// E0308: a program runs on a shared skb (it may clear the control buffer).
#[cfg(rtun_compile_fail = "bpf_prog_on_shared_skb")]
fn bpf_prog_on_shared_skb(prog: &SkFilterProg, skb: &SkBuff) -> u32 {
    let rcu = crate::sys::rcu::read_lock();
    prog.run(skb, &rcu)
}

/// E0515: an XDP buffer outlives the receive queue its `xdp_buff` points
/// to (a program run later would read a dead stack slot).
#[cfg(rtun_compile_fail = "xdp_buff_outlives_rxq")]
fn xdp_buff_outlives_rxq<'a>(
    dev: &NetDevice<()>,
    from: &'a mut crate::sys::IovIterSource<'_>,
    slot: &'a mut crate::sys::xdp::XdpSlot,
) -> Result<crate::sys::xdp::OwnedXdpBuff<'a>> {
    let rxq = crate::sys::xdp::XdpRxq::new(dev, 0);
    crate::sys::xdp::OwnedXdpBuff::from_iter(slot, 256, 64, from, &rxq)
}

/// E0515: a packet outlives the slot on the stack its `xdp_buff` is in (a
/// program, a redirect or the skb would use a description the next call
/// overwrites).
#[cfg(rtun_compile_fail = "xdp_buff_outlives_slot")]
fn xdp_buff_outlives_slot<'a>(
    from: &'a mut crate::sys::IovIterSource<'_>,
    rxq: &'a crate::sys::xdp::XdpRxq,
) -> Result<crate::sys::xdp::OwnedXdpBuff<'a>> {
    let mut slot = crate::sys::xdp::XdpSlot::new();
    crate::sys::xdp::OwnedXdpBuff::from_iter(&mut slot, 256, 64, from, rxq)
}

/// E0505: a receive queue filled on the stack outlives the device
/// reference it names (a program run on it would read a device that may
/// be freed).
#[cfg(rtun_compile_fail = "xdp_rxq_outlives_dev")]
fn xdp_rxq_outlives_dev(dev: &NetDevice<()>) {
    let held = dev.hold();
    let rxq = crate::sys::xdp::XdpRxq::new(&held, 0);
    drop(held);
    let _ = &rxq;
}

/// E0505: a queue's own receive queue, proven to name a held device,
/// outlives the hold (its device may be freed while a program reads it).
#[cfg(rtun_compile_fail = "queue_rxq_outlives_dev")]
fn queue_rxq_outlives_dev(q: &crate::sys::xdp::QueueXdpRxq, dev: &NetDevice<()>) {
    let held = dev.hold();
    let rxq = q.get(&held);
    drop(held);
    let _ = rxq;
}

/// E0521: an XDP context escapes the section (`with_xdp_ctx`) whose
/// `bpf_net_context` it stands for (a redirect through it would use a
/// context already cleared, its frames never flushed).
#[cfg(rtun_compile_fail = "xdp_ctx_escapes")]
fn xdp_ctx_escapes() {
    let bh = crate::sys::BhDisabled::new();
    let rcu = crate::sys::rcu::read_lock();
    let mut out = None;
    crate::sys::xdp::with_xdp_ctx(&bh, &rcu, |ctx| out = Some(ctx));
}
