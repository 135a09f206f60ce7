// SPDX-License-Identifier: GPL-2.0

//! RFS tables: recording a flow's CPU (`rps_record_sock_flow()`, the work
//! of C's inline `sock_rps_record_flow_hash()`) in the global table
//! (`net_hotdata.rps_sock_flow_table`) or in a private one of the same
//! layout, and reading an entry of the global one back.

use super::rcu;
use crate::bindings;
use core::alloc::Layout;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::alloc::{allocator::KVmalloc, Allocator};
use kernel::prelude::*;

mod private {
    /// Only `sys` says where a record step finds its table.
    pub(crate) trait Sealed {}
}

/// A table a record step can write: [`GlobalFlowTable`], the live one
/// whose entries steer received flows, or a [`PrivateFlowTable`].
pub(crate) trait SockFlowTable: private::Sealed {
    /// The table, or null: the step's `rcu_dereference()`, inside its RCU
    /// read-side section. A non-null table is valid until `_rcu` ends.
    #[doc(hidden)]
    fn table(&self, _rcu: &rcu::Guard) -> *mut bindings::rps_sock_flow_table;
}

/// The global RFS table, `net_hotdata.rps_sock_flow_table` (set while
/// `rps_sock_flow_entries` is not 0).
pub(crate) struct GlobalFlowTable;

impl private::Sealed for GlobalFlowTable {}

impl SockFlowTable for GlobalFlowTable {
    #[inline(always)]
    fn table(&self, _rcu: &rcu::Guard) -> *mut bindings::rps_sock_flow_table {
        // SAFETY: Inside `_rcu`; a published table stays valid until the
        // section ends (the sysctl frees a replaced one after a grace
        // period). `rcu_dereference()` of the field is a READ_ONCE.
        unsafe { ptr::read_volatile(ptr::addr_of!(bindings::net_hotdata.rps_sock_flow_table)) }
    }
}

/// An RFS table of the global one's layout (`struct rps_sock_flow_table`)
/// that nobody else reads: what the micro-benchmark records into, so that
/// timing the record step does not overwrite entries of the live table,
/// which steer real flows. It exists when the global table does, with as
/// many entries ([`PrivateFlowTable::like_global`]), and is read as the
/// global one is (one load of the table pointer inside the step's RCU
/// section), so the step costs what it costs on the global table.
///
/// # Invariants
///
/// The pointer is null, or a zeroed `KVmalloc` allocation of `layout`, at
/// least `RPS_SOCK_FLOW_TABLE_SIZE(mask + 1)` bytes, owned here, whose
/// `mask` is one less than its number of entries (a power of two).
pub(crate) struct PrivateFlowTable(AtomicPtr<bindings::rps_sock_flow_table>, Layout);

// SAFETY: The table's entries are only accessed with volatile (READ_ONCE/
// WRITE_ONCE) loads and stores, as the global table's, from any CPU.
unsafe impl Send for PrivateFlowTable {}
// SAFETY: As above.
unsafe impl Sync for PrivateFlowTable {}

impl PrivateFlowTable {
    /// A table with as many entries as the global one has now, all zero;
    /// none (null, as the global pointer is) while there is no global one.
    pub(crate) fn like_global() -> Result<Self> {
        let mask = {
            let rcu = rcu::read_lock();
            let table = GlobalFlowTable.table(&rcu);
            if table.is_null() {
                // INVARIANT: Null.
                return Ok(Self(AtomicPtr::new(ptr::null_mut()), Layout::new::<u8>()));
            }
            // SAFETY: Valid inside `rcu` (`SockFlowTable::table`).
            unsafe { (*table).mask }
        };
        let entries = mask.checked_add(1).ok_or(EINVAL)?;
        // SAFETY: Only arithmetic.
        let size = unsafe { bindings::RPS_SOCK_FLOW_TABLE_SIZE(entries) };
        let layout =
            Layout::from_size_align(size, core::mem::align_of::<bindings::rps_sock_flow_table>())
                .map_err(|_| EINVAL)?;
        let p = KVmalloc::alloc(layout, GFP_KERNEL | __GFP_ZERO)?;
        let table = p.cast::<bindings::rps_sock_flow_table>().as_ptr();
        // SAFETY: A fresh allocation of ours, large and aligned enough for
        // the header.
        unsafe { (*table).mask = mask };
        // INVARIANT: As allocated, with its mask set.
        Ok(Self(AtomicPtr::new(table), layout))
    }
}

impl private::Sealed for PrivateFlowTable {}

impl SockFlowTable for PrivateFlowTable {
    #[inline(always)]
    fn table(&self, _rcu: &rcu::Guard) -> *mut bindings::rps_sock_flow_table {
        // A READ_ONCE() of the pointer, as the global table's is read.
        self.0.load(Ordering::Relaxed)
    }
}

impl Drop for PrivateFlowTable {
    fn drop(&mut self) {
        let table = self.0.load(Ordering::Relaxed);
        if let Some(p) = NonNull::new(table.cast::<u8>()) {
            // SAFETY: Allocated by `KVmalloc` with `self.1` (type
            // invariants); nobody else holds it.
            unsafe { KVmalloc::free(p, self.1) };
        }
    }
}

/// `rps_record_sock_flow()` on `t`'s table, under RCU: sets the entry of
/// `hash` to the hash's upper bits and the current CPU. Returns whether a
/// table was there. The work of C's inline `sock_rps_record_flow_hash()`
/// past its zero-hash check (include/net/rps.h), on a table of the
/// caller's choice.
#[inline(always)]
pub(crate) fn rps_record_sock_flow(t: &impl SockFlowTable, hash: u32) -> bool {
    let rcu = rcu::read_lock();
    let table = t.table(&rcu);
    if table.is_null() {
        return false;
    }
    // SAFETY: A table `t` gave is valid during the RCU read section
    // (`SockFlowTable::table`), with `mask + 1` entries.
    unsafe { bindings::rps_record_sock_flow(table, hash) };
    true
}

/// Reads the global RFS table's entry for `hash`, if there is a table.
pub(crate) fn rps_sock_flow_entry(hash: u32) -> Option<u32> {
    let rcu = rcu::read_lock();
    let table = GlobalFlowTable.table(&rcu);
    if table.is_null() {
        return None;
    }
    // SAFETY: As in `rps_record_sock_flow`.
    unsafe {
        let index = (hash & (*table).mask) as usize;
        Some(ptr::read_volatile((*table).ents.as_ptr().add(index)))
    }
}
