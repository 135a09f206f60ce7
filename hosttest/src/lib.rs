//! Host tests of the module's `core`-only source files, compiled here from
//! the very files the kernel build uses.

#![allow(dead_code)]

#[path = "../../flow_logic.rs"]
mod flow_logic;

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
