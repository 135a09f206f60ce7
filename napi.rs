// SPDX-License-Identifier: GPL-2.0

//! `IFF_NAPI` (tun.c's `tun_napi_*`): a file's socket write queue is the
//! receive queue of the file's NAPI context, which lives in the socket
//! (tun.c's `tfile->napi`, `tfile->sk.sk_write_queue`). A writer queues
//! its packet and schedules the context ([`tun_napi_queue`]); the poll, in
//! softirq context, hands the queued packets to GRO, `NAPI_POLL_WEIGHT`
//! (the core's budget) at a time. `IFF_NAPI_FRAGS` writes build their skb
//! in the same context (`sys::tun::NapiFrags`, see chr.rs).

use crate::sys::tun::SockRef;
use crate::sys::{BhOff, Napi, NapiPoll, Rtnl, SkBuff, NAPI_POLL_WEIGHT};
use crate::{TunDev, TunFile};
use kernel::prelude::*;

/// tun's NAPI poll, on the file's socket.
pub(crate) struct TunNapi;

impl NapiPoll for TunNapi {
    type Owner = SockRef;

    #[inline(always)]
    fn poll(sk: &SockRef, napi: &Napi, budget: u32, bh: &BhOff) -> u32 {
        tun_napi_poll(sk, napi, budget, bh)
    }
}

/// `tun_napi_receive()`: takes what writers queued on the socket's write
/// queue and hands up to `budget` packets to GRO; the rest goes back to the
/// front of the queue for the next poll.
#[inline(always)]
fn tun_napi_receive(sk: &SockRef, napi: &Napi, budget: u32, bh: &BhOff) -> u32 {
    sk.write_queue().splice_and(bh, |process| {
        let mut received = 0;
        while received < budget {
            let Some(skb) = process.dequeue() else {
                break;
            };
            napi.gro_receive(skb);
            received += 1;
        }
        received
    })
}

/// `tun_napi_poll()`.
#[inline(always)]
fn tun_napi_poll(sk: &SockRef, napi: &Napi, budget: u32, bh: &BhOff) -> u32 {
    let received = tun_napi_receive(sk, napi, budget, bh);
    if received < budget {
        napi.complete_done(received);
    }
    received
}

/// `tun_napi_init()`: adds the file's NAPI context to `dev` (a TX context,
/// as `netif_napi_add_tx`) and enables it; with `napi_frags`, writes build
/// their skbs in it (`IFF_NAPI_FRAGS`). A context already set up is left as
/// it is.
pub(crate) fn tun_napi_init(tfile: &TunFile, dev: &TunDev, napi_frags: bool, rtnl: &Rtnl<'_>) {
    tfile
        .sock
        .napi()
        .add_tx::<TunNapi, _>(dev, napi_frags, rtnl);
}

/// `tun_napi_enable()`: a detached queue is attached again.
pub(crate) fn tun_napi_enable(tfile: &TunFile, rtnl: &Rtnl<'_>) {
    tfile.sock.napi().enable(rtnl);
}

/// `tun_napi_disable()`: waits for a running poll to finish; no poll runs
/// after it until [`tun_napi_enable`].
pub(crate) fn tun_napi_disable(tfile: &TunFile, rtnl: &Rtnl<'_>) {
    tfile.sock.napi().disable(rtnl);
}

/// `tun_napi_del()` (disabling first if needed), and the purge of what
/// writers queued for a poll that will not come (`tun_queue_purge()`'s
/// write-queue part). Does not wait for a grace period: the socket's drop
/// does, if the device's own `synchronize_net()` has not.
pub(crate) fn tun_napi_del(tfile: &TunFile, rtnl: &Rtnl<'_>) {
    tfile.sock.napi().del(rtnl);
    tfile.sock.write_queue().purge();
}

/// `tfile->napi_enabled`: the file has a NAPI context.
pub(crate) fn tun_napi_enabled(tfile: &TunFile) -> bool {
    tfile.sock.napi().is_added()
}

/// `tfile->napi_frags_enabled`: writes go through `IFF_NAPI_FRAGS`.
pub(crate) fn tun_napi_frags_enabled(tfile: &TunFile) -> bool {
    tfile.sock.napi().frags_enabled()
}

/// tun.c's `napi_schedule(&tfile->napi)` at the end of a `TUN_MSG_PTR`
/// batch that queued packets (none if the context is disabled or gone).
pub(crate) fn tun_napi_schedule(tfile: &TunFile) {
    tfile.sock.napi().schedule();
}

/// tun.c's `IFF_NAPI` branch of `tun_get_user()`: queues `skb` on the
/// socket's write queue for the context's next poll and schedules it
/// (`more` is `MSG_MORE`: a batch waits until it ends or holds more than a
/// poll takes). `EBUSY`, and the packet is dropped, if the context is
/// disabled (the queue is detached).
#[inline(always)]
pub(crate) fn tun_napi_queue(tfile: &TunFile, skb: SkBuff, more: bool) -> Result {
    tfile
        .sock
        .napi()
        .queue_tail(tfile.sock.write_queue(), skb, |len| {
            !more || len > NAPI_POLL_WEIGHT
        })
}
