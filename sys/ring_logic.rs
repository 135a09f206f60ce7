// SPDX-License-Identifier: GPL-2.0

//! The index arithmetic of the transmit ring (`include/linux/ptr_ring.h`'s,
//! which tun.c's `tx_ring` is), in plain `core`-only Rust so that a host
//! `cargo test` (`hosttest/`) checks it as well as the kernel build uses it.
//!
//! A ring of `len` slots has a producer index and a consumer index; a slot
//! is empty or holds a packet. The producer fills the slot at its index if
//! it is empty and moves on; the consumer empties the slot at its index if
//! it is full and moves on. A ring of no slots holds nothing.

/// The slot after `i` in a ring of `len` slots.
pub(crate) const fn next(i: usize, len: usize) -> usize {
    if i + 1 == len {
        0
    } else {
        i + 1
    }
}

/// The old ring's slots in the order a resize walks them: from the
/// consumer's, once round (`__ptr_ring_swap_queue()`).
/// `consumer` is below `len` (or `len` is 0, and there is nothing to walk).
pub(crate) fn walk(consumer: usize, len: usize) -> impl Iterator<Item = usize> {
    (0..len).scan(consumer, move |i, _| {
        let cur = *i;
        *i = next(cur, len);
        Some(cur)
    })
}

/// Where the `k`-th packet a resize finds goes in a new ring of `new_len`
/// slots: slot `k`, or nowhere (it is dropped): the oldest packets stay.
pub(crate) const fn resize_slot(k: usize, new_len: usize) -> Option<usize> {
    if k < new_len {
        Some(k)
    } else {
        None
    }
}

/// The producer index of a new ring of `new_len` slots that holds `kept`
/// packets in slots `0..kept` (its consumer index is 0).
pub(crate) const fn producer_after_resize(kept: usize, new_len: usize) -> usize {
    if kept == new_len {
        0
    } else {
        kept
    }
}
