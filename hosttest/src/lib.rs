//! Host tests of the module's `core`-only source files, compiled here from
//! the very files the kernel build uses.

#![allow(dead_code)]

#[path = "../../flow_logic.rs"]
mod flow_logic;

#[path = "../../sys/ring_logic.rs"]
mod ring_logic;

#[path = "../../txfilter.rs"]
mod txfilter;

#[cfg(test)]
mod tests {
    use super::flow_logic::*;

    #[test]
    fn hashfn_takes_the_low_ten_bits() {
        assert_eq!(tun_hashfn(0), 0);
        assert_eq!(tun_hashfn(1023), 1023);
        assert_eq!(tun_hashfn(1024), 0);
        assert_eq!(tun_hashfn(0xdead_beef), 0x2ef);
        for h in [1u32, 77, 1 << 20, u32::MAX] {
            assert!(tun_hashfn(h) < TUN_NUM_FLOW_ENTRIES);
        }
    }

    #[test]
    fn reciprocal_scale_covers_every_queue_evenly() {
        for n in [1u32, 2, 3, 7, 256] {
            let mut seen = vec![0u32; n as usize];
            // Hashes spread over the whole u32 range.
            for i in 0..(n * 1000) {
                let h = (u64::from(i) * (u64::from(u32::MAX) + 1) / u64::from(n * 1000)) as u32;
                let q = reciprocal_scale(h, n);
                assert!(q < n, "queue {q} of {n}");
                seen[q as usize] += 1;
            }
            // Evenly spread hashes land evenly, give or take one.
            assert!(seen.iter().all(|&c| c.abs_diff(1000) <= 1), "{n} queues: {seen:?}");
        }
        assert_eq!(reciprocal_scale(u32::MAX, 256), 255);
        assert_eq!(reciprocal_scale(0, 256), 0);
    }

    #[test]
    fn ageing_expires_at_exactly_updated_plus_delay() {
        let hz = 250;
        let delay = 3 * hz;
        assert_eq!(flow_ageing(1000, delay, 1000), Ageing::KeepUntil(1000 + delay));
        assert_eq!(flow_ageing(1000, delay, 1000 + delay - 1), Ageing::KeepUntil(1000 + delay));
        assert_eq!(flow_ageing(1000, delay, 1000 + delay), Ageing::Expire);
        assert_eq!(flow_ageing(1000, delay, 1000 + delay + 1), Ageing::Expire);
    }

    #[test]
    fn ageing_survives_jiffies_wrap() {
        let delay = 750;
        let updated = u64::MAX - 100;
        // Not expired just after the wrap ...
        assert_eq!(
            flow_ageing(updated, delay, 5),
            Ageing::KeepUntil(updated.wrapping_add(delay))
        );
        // ... expired once updated + delay has passed, across the wrap.
        assert_eq!(flow_ageing(updated, delay, updated.wrapping_add(delay)), Ageing::Expire);
        assert!(time_before(u64::MAX, 0));
        assert!(!time_before(0, u64::MAX));
        assert!(time_before_eq(7, 7));
    }

    #[test]
    fn age_of_a_flow_refreshed_after_the_clock_read_is_zero() {
        // The reader read `now`, then a writer stored a newer `updated`.
        assert_eq!(age_ms(1001, 1000, 100), 0);
        assert_eq!(age_ms(u64::MAX, u64::MAX - 5, 1000), 0);
        // Across the wrap, a newer `updated` is still newer.
        assert_eq!(age_ms(3, u64::MAX, 1000), 0);
    }

    #[test]
    fn age_counts_milliseconds_across_wrap_and_saturates() {
        assert_eq!(age_ms(1000, 1000, 100), 0);
        assert_eq!(age_ms(1000, 1250, 100), 2500);
        assert_eq!(age_ms(u64::MAX - 9, 10, 1000), 20);
        // The oldest possible age (half the jiffies range) does not overflow.
        assert_eq!(age_ms(0, i64::MAX as u64, 1), u64::MAX);
    }
}

/// `SkbRing` (sys/ring.rs) with its storage as plain values: the same
/// index and resize arithmetic, driven against a queue model.
#[cfg(test)]
mod ring_tests {
    use super::ring_logic::*;
    use std::collections::VecDeque;

    struct Ring {
        slots: Vec<Option<u32>>,
        producer: usize,
        consumer: usize,
    }

    impl Ring {
        fn new() -> Self {
            Ring { slots: Vec::new(), producer: 0, consumer: 0 }
        }

        // As SkbRing::produce.
        fn produce(&mut self, v: u32) -> Result<(), u32> {
            let i = self.producer;
            match self.slots.get_mut(i) {
                Some(slot) if slot.is_none() => {
                    *slot = Some(v);
                    self.producer = next(i, self.slots.len());
                    Ok(())
                }
                _ => Err(v),
            }
        }

        // As SkbRing::consume.
        fn consume(&mut self) -> Option<u32> {
            let i = self.consumer;
            let v = self.slots.get_mut(i)?.take()?;
            self.consumer = next(i, self.slots.len());
            Some(v)
        }

        // As SkbRing::resize; returns the dropped values in walk order.
        fn resize(&mut self, new_len: usize) -> Vec<u32> {
            let mut new = vec![None; new_len];
            let mut kept = 0;
            let mut left = Vec::new();
            for i in walk(self.consumer, self.slots.len()) {
                let Some(v) = self.slots[i].take() else { continue };
                match resize_slot(kept, new_len) {
                    Some(j) => {
                        new[j] = Some(v);
                        kept += 1;
                    }
                    None => left.push(v),
                }
            }
            self.consumer = 0;
            self.producer = producer_after_resize(kept, new_len);
            self.slots = new;
            left
        }
    }

    #[test]
    fn next_wraps_at_len() {
        assert_eq!(next(0, 1), 0);
        assert_eq!(next(0, 3), 1);
        assert_eq!(next(2, 3), 0);
    }

    #[test]
    fn walk_visits_every_slot_once_from_the_consumer() {
        assert_eq!(walk(0, 0).count(), 0);
        assert_eq!(walk(2, 4).collect::<Vec<_>>(), [2, 3, 0, 1]);
        for len in 1..20 {
            for c in 0..len {
                let mut v: Vec<_> = walk(c, len).collect();
                assert_eq!(v[0], c);
                v.sort();
                assert_eq!(v, (0..len).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn a_ring_of_no_slots_holds_nothing() {
        let mut r = Ring::new();
        assert_eq!(r.produce(1), Err(1));
        assert_eq!(r.consume(), None);
        assert!(r.resize(0).is_empty());
        assert_eq!(r.produce(2), Err(2));
    }

    #[test]
    fn full_ring_refuses_and_resize_to_full_size_keeps_it_full() {
        let mut r = Ring::new();
        r.resize(3);
        for v in 0..3 {
            r.produce(v).unwrap();
        }
        assert_eq!(r.produce(9), Err(9));
        assert!(r.resize(3).is_empty());
        assert_eq!(r.producer, 0);
        assert_eq!(r.produce(9), Err(9));
        assert_eq!((r.consume(), r.consume(), r.consume(), r.consume()), (Some(0), Some(1), Some(2), None));
    }

    #[test]
    fn shrinking_keeps_the_oldest_and_drops_the_rest_in_order() {
        let mut r = Ring::new();
        r.resize(4);
        // Wrap the indices first.
        for v in 0..3 {
            r.produce(v).unwrap();
        }
        r.consume();
        r.consume();
        for v in 3..6 {
            r.produce(v).unwrap();
        }
        // Queued: 2 3 4 5, consumer at slot 2.
        assert_eq!(r.resize(2), [4, 5]);
        assert_eq!((r.consume(), r.consume(), r.consume()), (Some(2), Some(3), None));
    }

    /// Random produce/consume/resize sequences against a bounded FIFO.
    #[test]
    fn matches_a_bounded_fifo() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let mut r = Ring::new();
            let mut model: VecDeque<u32> = VecDeque::new();
            let mut cap = 0usize;
            let mut v = 0u32;
            for _ in 0..2000 {
                match rand() % 8 {
                    0..=3 => {
                        v += 1;
                        let res = r.produce(v);
                        if model.len() < cap {
                            assert_eq!(res, Ok(()));
                            model.push_back(v);
                        } else {
                            assert_eq!(res, Err(v));
                        }
                    }
                    4..=6 => assert_eq!(r.consume(), model.pop_front()),
                    _ => {
                        cap = (rand() % 9) as usize;
                        let dropped = r.resize(cap);
                        let expect: Vec<u32> = model.drain(cap.min(model.len())..).collect();
                        assert_eq!(dropped, expect);
                    }
                }
                assert!(r.consumer < r.slots.len().max(1));
                assert!(r.producer < r.slots.len().max(1));
                assert_eq!(r.slots.iter().flatten().count(), model.len());
            }
        }
    }
}

/// The TAP transmit filter (txfilter.rs) against tun.c's rules.
#[cfg(test)]
mod txfilter_tests {
    use super::txfilter::*;

    /// `update_filter()` as `TUNSETTXFILTER` runs it: the addresses one
    /// at a time, then the filter.
    fn update(f: &TxFilter, flags: u16, addrs: &[[u8; 6]]) -> u32 {
        let mut u = FilterUpdate::new();
        for a in addrs {
            u.push(a);
        }
        f.apply(flags, &u)
    }

    #[test]
    fn ether_crc_matches_the_kernels() {
        // bitrev32(crc32_le(~0, addr, 6)), computed independently with
        // Python's zlib: ~zlib.crc32(addr), bit-reversed.
        assert_eq!(ether_crc(&[1, 0, 0x5e, 0, 0, 1]), 0x7fa3_2d9b);
        assert_eq!(ether_crc(&[0x33, 0x33, 0, 0, 0, 1]), 0xf99b_aaba);
        assert_eq!(ether_crc(&[0xff; 6]), 0xff48_647d);
        assert_eq!(ether_crc(&[2, 0x11, 0x22, 0x33, 0x44, 0x55]), 0xc64a_eebf);
        assert_eq!(addr_hash_bit(&[0x33, 0x33, 0, 0, 0, 1]), 62);
    }

    #[test]
    fn off_passes_everything() {
        let f = TxFilter::new();
        assert!(f.check(Some(&[2, 0, 0, 0, 0, 1])));
        assert!(f.check(None));
        assert_eq!(update(&f, 0, &[]), 0);
        assert!(f.check(Some(&[2, 0, 0, 0, 0, 1])));
    }

    #[test]
    fn exact_addresses_pass_and_others_drop() {
        let f = TxFilter::new();
        let a = [2, 0, 0, 0, 0, 1];
        let b = [2, 0, 0, 0, 0, 2];
        assert_eq!(update(&f, 0, &[a, b]), 2);
        assert!(f.check(Some(&a)));
        assert!(f.check(Some(&b)));
        assert!(!f.check(Some(&[2, 0, 0, 0, 0, 3])));
        assert!(!f.check(None));
        // Multicast not in the (empty) hash drops too.
        assert!(!f.check(Some(&[0x33, 0x33, 0, 0, 0, 1])));
    }

    #[test]
    fn multicast_past_eight_is_hashed_and_allmulti_takes_all() {
        let f = TxFilter::new();
        let mut addrs: Vec<[u8; 6]> = (0..8).map(|i| [2, 0, 0, 0, 0, i]).collect();
        let m = [0x33, 0x33, 0, 0, 0, 1];
        addrs.push(m);
        assert_eq!(update(&f, 0, &addrs), 8);
        assert!(f.check(Some(&m)));
        // Another group hashing elsewhere drops (bit 31 vs 62).
        assert!(!f.check(Some(&[1, 0, 0x5e, 0, 0, 1])));
        assert_eq!(update(&f, TUN_FLT_ALLMULTI, &addrs), 8);
        assert!(f.check(Some(&[1, 0, 0x5e, 0, 0, 1])));
        assert!(!f.check(Some(&[2, 0, 0, 0, 1, 0])));
    }

    #[test]
    fn unicast_past_eight_disables_the_filter() {
        let f = TxFilter::new();
        let mut addrs: Vec<[u8; 6]> = (0..9).map(|i| [2, 0, 0, 0, 0, i]).collect();
        assert_eq!(update(&f, 0, &addrs[..8]), 8);
        assert!(!f.check(Some(&[2, 0, 0, 0, 0, 8])));
        addrs[8] = [2, 0, 0, 0, 0, 8];
        assert_eq!(update(&f, 0, &addrs), 0);
        assert!(f.check(Some(&[2, 0, 0, 0, 9, 9])));
    }
}
