// SPDX-License-Identifier: GPL-2.0

//! tun's flow table (`tun->flows` in tun.c): which queue a flow (a
//! symmetric flow hash) was last written on, and the hash to record for RFS.
//!
//! 1024 buckets (`tun_hashfn`), at most 4096 flows (`MAX_TAP_FLOWS`),
//! lookups on the RCU read side, creation and deletion under a BH spinlock,
//! ageing after `ageing_time` (`TUN_FLOW_EXPIRE`, 3 s) by a timer that
//! re-arms only while entries remain.
//!
//! Deliberate difference from tun.c: `ageing_time` is the module parameter
//! `flow_ageing_ms` at the device's creation (default 3000, tun.c's fixed
//! value), so that a test can fill the table on a kernel too slow to write
//! 4096 flows within 3 s (the guest's `flow_limit` on the debug kernel).
//!
//! Deliberate difference from tun.c: the 4096 entries are allocated in one
//! pool, with the buckets, when the device's first flow is created (flows
//! exist only on devices with two queues or more; an idle device pays for a
//! pointer), instead of `kmalloc(GFP_ATOMIC)` per flow and `kfree_rcu`
//! per deletion. The data
//! path never allocates, a full table is the only reason a flow is not
//! created, and a deleted entry is reused only after an RCU grace period
//! that its deletion started (`start_poll_synchronize_rcu` cookies), so a
//! reader walking a chain never sees an entry change identity under it.

use crate::flow_logic::{
    age_ms, flow_ageing, time_before, tun_hashfn, Ageing, MAX_TAP_FLOWS, TUN_NUM_FLOW_ENTRIES,
};
use crate::sys::{
    self, new_spinlock_bh, rcu, rcu_cookie, OncePin, SpinLockBh, Timed, TimerCallback,
};
use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;

/// The end of a bucket chain.
const NIL: u16 = u16::MAX;

// Entry indices must fit in a `u16` with `NIL` left over.
const _: () = assert!(MAX_TAP_FLOWS < NIL as usize);

/// `struct tun_flow_entry`.
pub(crate) struct FlowEntry {
    /// Next entry in the bucket (`hash_link`); written under the lock,
    /// read under RCU.
    next: AtomicU16,
    /// The flow's symmetric hash.
    pub(crate) rxhash: AtomicU32,
    /// The hash to record in the RFS table (set by transmit).
    pub(crate) rps_rxhash: AtomicU32,
    /// The queue the flow was last written on.
    pub(crate) queue_index: AtomicU16,
    /// When the flow was last written (jiffies).
    pub(crate) updated: AtomicU64,
}

impl FlowEntry {
    fn new() -> Self {
        Self {
            next: AtomicU16::new(NIL),
            rxhash: AtomicU32::new(0),
            rps_rxhash: AtomicU32::new(0),
            queue_index: AtomicU16::new(0),
            updated: AtomicU64::new(0),
        }
    }
}

/// Free entries in the order they were freed, each with the RCU cookie of
/// its deletion; and the number of entries in use (`tun->flow_count`).
struct FlowAlloc {
    free: KVVec<(u16, usize)>,
    head: usize,
    len: usize,
    /// Entries pushed since the last `seal`, still without their cookie.
    unsealed: usize,
    flow_count: usize,
}

impl FlowAlloc {
    /// An entry whose deletion is a grace period old, if any. Cookies are
    /// in order, so only the oldest needs checking.
    fn pop(&mut self) -> Option<u16> {
        if self.len == self.unsealed {
            return None;
        }
        let (idx, cookie) = self.free[self.head];
        if !rcu_cookie::done(cookie) {
            return None;
        }
        self.head = (self.head + 1) % MAX_TAP_FLOWS;
        self.len -= 1;
        Some(idx)
    }

    /// Frees entry `idx`, unlinked already; [`FlowAlloc::seal`] gives it
    /// its cookie once the whole batch is unlinked.
    fn push(&mut self, idx: u16) {
        // Entries in use plus free ones are `MAX_TAP_FLOWS`: never full.
        let tail = (self.head + self.len) % MAX_TAP_FLOWS;
        self.free[tail] = (idx, 0);
        self.len += 1;
        self.unsealed += 1;
    }

    /// Starts the grace period after which the entries pushed since the
    /// last seal may be reused (one per batch of deletions: the cookie is
    /// taken after every entry of the batch was unlinked).
    fn seal(&mut self) {
        if self.unsealed == 0 {
            return;
        }
        let cookie = rcu_cookie::start();
        for k in self.len - self.unsealed..self.len {
            self.free[(self.head + k) % MAX_TAP_FLOWS].1 = cookie;
        }
        self.unsealed = 0;
    }
}

/// A copy of one entry, for debugfs.
pub(crate) struct FlowInfo {
    pub(crate) rxhash: u32,
    pub(crate) rps_rxhash: u32,
    pub(crate) queue_index: u16,
    /// Milliseconds since the flow was last written (0 if a writer
    /// refreshed it after the snapshot's clock was read).
    pub(crate) age_ms: u64,
}

/// The buckets and entries of a table, allocated when first needed.
#[pin_data]
struct FlowPool {
    heads: [AtomicU16; TUN_NUM_FLOW_ENTRIES],
    entries: KVVec<FlowEntry>,
    #[pin]
    alloc: SpinLockBh<FlowAlloc>,
}

impl FlowPool {
    fn new() -> impl PinInit<Self, Error> {
        let mut entries = KVVec::with_capacity(MAX_TAP_FLOWS, GFP_KERNEL);
        let mut free = KVVec::with_capacity(MAX_TAP_FLOWS, GFP_KERNEL);
        let filled = match (&mut entries, &mut free) {
            (Ok(entries), Ok(free)) => (0..MAX_TAP_FLOWS).try_for_each(|i| {
                entries.push(FlowEntry::new(), GFP_KERNEL)?;
                free.push((i as u16, rcu_cookie::completed()), GFP_KERNEL)
            }),
            _ => Err(kernel::alloc::AllocError),
        };
        try_pin_init!(Self {
            heads: [const { AtomicU16::new(NIL) }; TUN_NUM_FLOW_ENTRIES],
            entries: { filled?; entries? },
            alloc <- new_spinlock_bh!(
                FlowAlloc {
                    free: free?,
                    head: 0,
                    len: MAX_TAP_FLOWS,
                    unsealed: 0,
                    flow_count: 0,
                },
                "FlowPool::alloc"
            ),
        }? Error)
    }

    fn entry(&self, idx: u16) -> &FlowEntry {
        &self.entries[usize::from(idx)]
    }
}

/// The flow table of one device, with its ageing timer around it
/// (`flow_gc_timer`: `tun_flow_cleanup`, shut down when the table goes,
/// before anything its callback walks).
pub(crate) type Flows = Timed<FlowTable>;

/// The flow table of one device ([`Flows`] holds it with its timer).
#[pin_data]
pub(crate) struct FlowTable {
    pool: OncePin<FlowPool>,
    /// `ageing_time`, in jiffies: tun.c's is `TUN_FLOW_EXPIRE` (3 s),
    /// rust_tun's the `flow_ageing_ms` parameter at the device's creation
    /// (default 3 s).
    ageing_time: AtomicU64,
}

impl TimerCallback for FlowTable {
    fn timer_fired(flows: &Flows) {
        tun_flow_cleanup(flows)
    }
}

impl FlowTable {
    /// `tun_flow_init()`: an empty table, ageing its flows after
    /// `ageing_time` jiffies; its entries come with the first flow.
    pub(crate) fn new(ageing_time: u64) -> impl PinInit<Flows> {
        Timed::new(pin_init!(Self {
            pool: OncePin::new(),
            ageing_time: AtomicU64::new(ageing_time),
        }))
    }

    /// The entries, allocated now if this is the first flow (process
    /// context: it may sleep). `None` if that allocation fails: the flow is
    /// then not tracked, as when tun.c's `GFP_ATOMIC` allocation fails.
    fn pool_or_alloc(&self) -> Option<&FlowPool> {
        if self.pool.get().is_none() {
            let pool = KBox::pin_init(FlowPool::new(), GFP_KERNEL).ok()?;
            // Losing a race only means another writer's pool is in place.
            let _ = self.pool.set(pool);
        }
        self.pool.get().map(Pin::get_ref)
    }

    /// Whether the entries are allocated.
    pub(crate) fn has_pool(&self) -> bool {
        self.pool.get().is_some()
    }

    /// `tun_flow_find()`: the entry of `rxhash`, valid for the RCU section.
    /// Inline, as C's (a `static` function the compiler inlines into the
    /// transmit path).
    #[inline]
    pub(crate) fn find<'a>(&'a self, rxhash: u32, _rcu: &'a rcu::Guard) -> Option<&'a FlowEntry> {
        let pool = self.pool.get()?.get_ref();
        self.find_idx(pool, rxhash).map(|i| pool.entry(i))
    }

    /// The chain walk of `tun_flow_find()`, by index. Entries are never
    /// freed and are reused only a grace period after deletion, so any
    /// caller inside an RCU section or holding the lock sees whole chains.
    #[inline]
    fn find_idx(&self, pool: &FlowPool, rxhash: u32) -> Option<u16> {
        let mut idx = pool.heads[tun_hashfn(rxhash)].load(Ordering::Acquire);
        while idx != NIL {
            let e = pool.entry(idx);
            if e.rxhash.load(Ordering::Relaxed) == rxhash {
                return Some(idx);
            }
            idx = e.next.load(Ordering::Acquire);
        }
        None
    }

    /// `tun_flow_create()`, under the lock. Nothing happens when no entry
    /// is free (the table is full, or the free ones are not a grace period
    /// old yet).
    fn create(&self, pool: &FlowPool, alloc: &mut FlowAlloc, rxhash: u32, queue_index: u16) {
        let Some(idx) = alloc.pop() else {
            return;
        };
        let e = pool.entry(idx);
        let head = &pool.heads[tun_hashfn(rxhash)];
        e.updated.store(sys::jiffies(), Ordering::Relaxed);
        e.rxhash.store(rxhash, Ordering::Relaxed);
        e.rps_rxhash.store(0, Ordering::Relaxed);
        e.queue_index.store(queue_index, Ordering::Relaxed);
        e.next
            .store(head.load(Ordering::Relaxed), Ordering::Relaxed);
        // `hlist_add_head_rcu()`: publish the initialised entry.
        head.store(idx, Ordering::Release);
        alloc.flow_count += 1;
    }

    /// Deletes, under the lock, every entry for which `doomed` says so
    /// (`tun_flow_delete()` on each), then starts the grace period after
    /// which they may be reused.
    fn delete_where(
        &self,
        pool: &FlowPool,
        alloc: &mut FlowAlloc,
        mut doomed: impl FnMut(&FlowEntry) -> bool,
    ) {
        for head in &pool.heads {
            let mut prev: Option<u16> = None;
            let mut idx = head.load(Ordering::Relaxed);
            while idx != NIL {
                let e = pool.entry(idx);
                let next = e.next.load(Ordering::Relaxed);
                if doomed(e) {
                    // `hlist_del_rcu()`: readers on `e` still follow
                    // `e.next`, which is left as it is.
                    match prev {
                        None => head.store(next, Ordering::Release),
                        Some(p) => pool.entry(p).next.store(next, Ordering::Release),
                    }
                    alloc.push(idx);
                    alloc.flow_count -= 1;
                } else {
                    prev = Some(idx);
                }
                idx = next;
            }
        }
        alloc.seal();
    }

    /// `tun_flow_save_rps_rxhash()`.
    pub(crate) fn save_rps_rxhash(e: &FlowEntry, hash: u32) {
        if e.rps_rxhash.load(Ordering::Relaxed) != hash {
            e.rps_rxhash.store(hash, Ordering::Relaxed);
        }
    }

    /// Queue `index` went away and queue `last` took its index (see
    /// `__tun_detach`): delete the flows of `index`, move those of `last`.
    pub(crate) fn detach_queue(&self, index: u16, last: u16) {
        let Some(pool) = self.pool.get() else {
            return;
        };
        let pool = pool.get_ref();
        let mut alloc = pool.alloc.lock();
        self.delete_where(pool, &mut alloc, |e| {
            let q = e.queue_index.load(Ordering::Relaxed);
            if q == index {
                return true;
            }
            if q == last {
                e.queue_index.store(index, Ordering::Relaxed);
            }
            false
        });
    }

    /// `tun_flow_flush()`.
    pub(crate) fn flush(&self) {
        let Some(pool) = self.pool.get() else {
            return;
        };
        let pool = pool.get_ref();
        let mut alloc = pool.alloc.lock();
        self.delete_where(pool, &mut alloc, |_| true);
    }

    /// `tun->flow_count`.
    pub(crate) fn flow_count(&self) -> usize {
        self.pool
            .get()
            .map_or(0, |pool| pool.get_ref().alloc.lock().flow_count)
    }

    /// A snapshot of the entries, for debugfs.
    pub(crate) fn snapshot(&self) -> Result<KVVec<FlowInfo>> {
        let Some(pool) = self.pool.get() else {
            return Ok(KVVec::new());
        };
        let pool = pool.get_ref();
        let mut out = KVVec::with_capacity(MAX_TAP_FLOWS, GFP_KERNEL)?;
        let _alloc = pool.alloc.lock();
        // Writers refresh `updated` without the lock, so an entry may be
        // newer than `now`: `age_ms` says 0 for those.
        let now = sys::jiffies();
        for head in &pool.heads {
            let mut idx = head.load(Ordering::Relaxed);
            while idx != NIL {
                let e = pool.entry(idx);
                // Capacity is `MAX_TAP_FLOWS`, so this never allocates.
                out.push(
                    FlowInfo {
                        rxhash: e.rxhash.load(Ordering::Relaxed),
                        rps_rxhash: e.rps_rxhash.load(Ordering::Relaxed),
                        queue_index: e.queue_index.load(Ordering::Relaxed),
                        age_ms: age_ms(e.updated.load(Ordering::Relaxed), now, sys::HZ),
                    },
                    GFP_ATOMIC,
                )?;
                idx = e.next.load(Ordering::Relaxed);
            }
        }
        Ok(out)
    }
}

/// The steps of the table that arm its ageing timer.
impl Timed<FlowTable> {
    /// The table half of `tun_flow_update()`: refresh the flow of `rxhash`
    /// and return its `rps_rxhash` for the RFS record step, or create it,
    /// make sure the ageing timer runs, and return `None`. Process context
    /// (the write path): the first flow allocates the entries.
    pub(crate) fn update(&self, rxhash: u32, queue_index: u16) -> Option<u32> {
        let pool = self.pool_or_alloc()?;
        let rcu = rcu::read_lock();
        if let Some(e) = self.find(rxhash, &rcu) {
            if e.queue_index.load(Ordering::Relaxed) != queue_index {
                e.queue_index.store(queue_index, Ordering::Relaxed);
            }
            let now = sys::jiffies();
            if e.updated.load(Ordering::Relaxed) != now {
                e.updated.store(now, Ordering::Relaxed);
            }
            return Some(e.rps_rxhash.load(Ordering::Relaxed));
        }
        let mut alloc = pool.alloc.lock();
        if self.find_idx(pool, rxhash).is_none() && alloc.flow_count < MAX_TAP_FLOWS {
            self.create(pool, &mut alloc, rxhash, queue_index);
        }
        if !self.pending() {
            let delay = self.ageing_time.load(Ordering::Relaxed);
            self.mod_timer(sys::round_jiffies_up(sys::jiffies().wrapping_add(delay)));
        }
        None
    }
}

/// `tun_flow_cleanup()`: the ageing timer. Deletes expired flows and
/// re-arms for the earliest remaining expiry while any flow remains.
fn tun_flow_cleanup(flows: &Flows) {
    let Some(pool) = flows.pool.get() else {
        return;
    };
    let pool = pool.get_ref();
    let delay = flows.ageing_time.load(Ordering::Relaxed);
    let now = sys::jiffies();
    let mut next_timer = now.wrapping_add(delay);
    let mut count = 0usize;
    let mut alloc = pool.alloc.lock();
    flows.delete_where(pool, &mut alloc, |e| {
        match flow_ageing(e.updated.load(Ordering::Relaxed), delay, now) {
            Ageing::Expire => true,
            Ageing::KeepUntil(t) => {
                count += 1;
                if time_before(t, next_timer) {
                    next_timer = t;
                }
                false
            }
        }
    });
    if count != 0 {
        flows.mod_timer(sys::round_jiffies_up(next_timer));
    }
}
