// SPDX-License-Identifier: GPL-2.0

//! The arithmetic of tun's flow table and automq queue selection, in plain
//! `core`-only Rust so that a host `cargo test` (`hosttest/`) checks it as
//! well as the kernel build uses it: bucket selection (`tun_hashfn`), queue
//! selection on a miss (`reciprocal_scale`), and the ageing decisions of
//! `tun_flow_cleanup` with jiffies wrap-around (`time_before_eq`).

/// `TUN_NUM_FLOW_ENTRIES`: buckets of the flow table.
pub(crate) const TUN_NUM_FLOW_ENTRIES: usize = 1024;
/// `TUN_MASK_FLOW_ENTRIES`.
pub(crate) const TUN_MASK_FLOW_ENTRIES: u32 = TUN_NUM_FLOW_ENTRIES as u32 - 1;
/// `MAX_TAP_FLOWS`: at most this many flows per device.
pub(crate) const MAX_TAP_FLOWS: usize = 4096;

/// `tun_hashfn()`: the bucket of a flow hash.
pub(crate) const fn tun_hashfn(rxhash: u32) -> usize {
    (rxhash & TUN_MASK_FLOW_ENTRIES) as usize
}

/// `reciprocal_scale()`: maps a hash onto `0..ep_ro` without a division.
pub(crate) const fn reciprocal_scale(val: u32, ep_ro: u32) -> u32 {
    ((val as u64 * ep_ro as u64) >> 32) as u32
}

/// `time_before_eq(a, b)` on jiffies, correct across wrap-around.
pub(crate) const fn time_before_eq(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) >= 0
}

/// `time_before(a, b)` on jiffies, correct across wrap-around.
pub(crate) const fn time_before(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) > 0
}

/// What `tun_flow_cleanup` does with one entry at time `now`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ageing {
    /// The entry expired: delete it.
    Expire,
    /// The entry lives until this jiffy.
    KeepUntil(u64),
}

/// `tun_flow_cleanup`'s decision for an entry last `updated` at that jiffy,
/// with ageing time `delay` (`TUN_FLOW_EXPIRE` by default).
pub(crate) const fn flow_ageing(updated: u64, delay: u64, now: u64) -> Ageing {
    let this_timer = updated.wrapping_add(delay);
    if time_before_eq(this_timer, now) {
        Ageing::Expire
    } else {
        Ageing::KeepUntil(this_timer)
    }
}

/// Milliseconds from jiffy `updated` to jiffy `now` at `hz` ticks per
/// second, for reports. `updated` may be newer than `now` (a writer
/// refreshed the entry after the reader read the clock): that is age 0, not
/// a wrapped-around eternity. Saturates rather than overflows.
pub(crate) const fn age_ms(updated: u64, now: u64, hz: u64) -> u64 {
    if time_before(now, updated) {
        return 0;
    }
    now.wrapping_sub(updated).saturating_mul(1000) / hz
}
