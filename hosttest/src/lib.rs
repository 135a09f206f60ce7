//! Host tests of the module's `core`-only source files, compiled here from
//! the very files the kernel build uses.

#![allow(dead_code)]

#[path = "../../flow_logic.rs"]
mod flow_logic;

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
