// SPDX-License-Identifier: GPL-2.0

//! The TAP transmit filter (`TUNSETTXFILTER`; tun.c's `struct tap_filter`,
//! `update_filter`, `run_filter`, `check_filter`): up to eight exact
//! destination addresses, and a 64-bit hash of multicast ones. Updated
//! without a lock, as tun.c: the filter is disabled (`count = 0`) while it
//! changes, so a transmit racing with an update at worst lets a few
//! packets through.
//!
//! `core`-only Rust: the host tests (`hosttest/`) compile this file too.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `ETH_ALEN`.
pub(crate) const ETH_ALEN: usize = 6;
/// `FLT_EXACT_COUNT`.
pub(crate) const FLT_EXACT_COUNT: usize = 8;
/// `TUN_FLT_ALLMULTI`: accept every multicast address.
pub(crate) const TUN_FLT_ALLMULTI: u16 = 0x0001;

/// `crc32_le(~0, addr, ETH_ALEN)` bit-reversed: `ether_crc()`
/// (include/linux/etherdevice.h).
pub(crate) fn ether_crc(addr: &[u8; ETH_ALEN]) -> u32 {
    let mut crc = !0u32;
    for &b in addr {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    crc.reverse_bits()
}

/// The bit of the 64-bit multicast mask that `addr` hashes to
/// (`addr_hash_set()`/`addr_hash_test()`).
pub(crate) fn addr_hash_bit(addr: &[u8; ETH_ALEN]) -> u32 {
    ether_crc(addr) >> 26
}

/// `is_multicast_ether_addr()`.
pub(crate) fn is_multicast(addr: &[u8; ETH_ALEN]) -> bool {
    addr[0] & 1 != 0
}

fn pack(addr: &[u8; ETH_ALEN]) -> u64 {
    let mut b = [0u8; 8];
    b[..ETH_ALEN].copy_from_slice(addr);
    u64::from_le_bytes(b)
}

/// What `update_filter()` makes of a `struct tun_filter`'s addresses,
/// gathered one at a time as they are copied from user space, so that
/// nothing holds all of them (up to 65535, 384 KiB) at once: the first
/// eight, exact; the multicast ones after them, hashed; whether a unicast
/// one came after them (which turns the filter off).
pub(crate) struct FilterUpdate {
    /// Addresses seen.
    n: usize,
    /// The first `FLT_EXACT_COUNT` of them.
    addr: [[u8; ETH_ALEN]; FLT_EXACT_COUNT],
    /// The 64-bit hash of the multicast ones past those.
    mask: [u32; 2],
    /// A unicast address came past those.
    unicast: bool,
}

impl FilterUpdate {
    /// No address yet.
    pub(crate) const fn new() -> Self {
        Self {
            n: 0,
            addr: [[0; ETH_ALEN]; FLT_EXACT_COUNT],
            mask: [0; 2],
            unicast: false,
        }
    }

    /// The next address (`update_filter()`'s two loops, one step).
    pub(crate) fn push(&mut self, a: &[u8; ETH_ALEN]) {
        if self.n < FLT_EXACT_COUNT {
            self.addr[self.n] = *a;
        } else if !is_multicast(a) {
            self.unicast = true;
        } else {
            let n = addr_hash_bit(a);
            self.mask[(n >> 5) as usize] |= 1 << (n & 31);
        }
        self.n = self.n.saturating_add(1);
    }
}

/// `struct tap_filter`.
pub(crate) struct TxFilter {
    /// Exact addresses in use (0: the filter is off).
    count: AtomicU32,
    /// The 64-bit multicast hash.
    mask: [AtomicU32; 2],
    /// The exact addresses, six bytes each in the low bytes.
    addr: [AtomicU64; FLT_EXACT_COUNT],
}

impl TxFilter {
    /// An empty, disabled filter.
    pub(crate) const fn new() -> Self {
        Self {
            count: AtomicU32::new(0),
            mask: [const { AtomicU32::new(0) }; 2],
            addr: [const { AtomicU64::new(0) }; FLT_EXACT_COUNT],
        }
    }

    /// `update_filter()`'s last step: the filter becomes what `update`
    /// gathered from the addresses of a `struct tun_filter` with `flags`
    /// (none means "disable"). Returns the number of exact addresses, as
    /// `TUNSETTXFILTER` does; a unicast address past the first eight
    /// leaves the filter disabled and returns 0, as tun.c.
    pub(crate) fn apply(&self, flags: u16, update: &FilterUpdate) -> u32 {
        // Disabled while it changes.
        self.count.store(0, Ordering::Release);
        if update.n == 0 {
            return 0;
        }
        let nexact = update.n.min(FLT_EXACT_COUNT);
        for (slot, a) in self.addr.iter().zip(&update.addr[..nexact]) {
            slot.store(pack(a), Ordering::Relaxed);
        }
        if update.unicast {
            // Unicast past the exact ones: no filter (tun.c leaves the
            // mask half-written, which nobody reads while count is 0).
            return 0;
        }
        let mask = if flags & TUN_FLT_ALLMULTI != 0 {
            [!0; 2]
        } else {
            update.mask
        };
        self.mask[0].store(mask[0], Ordering::Relaxed);
        self.mask[1].store(mask[1], Ordering::Relaxed);
        // Enabled again, with everything above visible first.
        self.count.store(nexact as u32, Ordering::Release);
        nexact as u32
    }

    /// Whether the filter is on (a load, for the transmit fast path).
    #[inline(always)]
    pub(crate) fn is_on(&self) -> bool {
        self.count.load(Ordering::Relaxed) != 0
    }

    /// `check_filter()`: whether a frame to `dest` may pass (`None`: the
    /// frame is too short to have a destination).
    pub(crate) fn check(&self, dest: Option<&[u8; ETH_ALEN]>) -> bool {
        let count = self.count.load(Ordering::Acquire) as usize;
        if count == 0 {
            return true;
        }
        let Some(dest) = dest else {
            return false;
        };
        let d = pack(dest);
        if self.addr[..count.min(FLT_EXACT_COUNT)]
            .iter()
            .any(|a| a.load(Ordering::Relaxed) == d)
        {
            return true;
        }
        if is_multicast(dest) {
            let n = addr_hash_bit(dest);
            return self.mask[(n >> 5) as usize].load(Ordering::Relaxed) & (1 << (n & 31)) != 0;
        }
        false
    }
}
