// SPDX-License-Identifier: GPL-2.0

//! RFS tables: recording a flow's CPU (`rps_record_sock_flow()`, the work
//! of C's inline `sock_rps_record_flow_hash()`) in the global table
//! (`net_hotdata.rps_sock_flow_table`) or in a private one of the same
//! layout, and reading an entry of the global one back.

use super::rcu;
use crate::bindings;
use core::alloc::Layout;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::alloc::{allocator::KVmalloc, Allocator};
use kernel::prelude::*;

mod private {
    /// Only `sys` says where a record step finds its table.
    pub(crate) trait Sealed {}
}

/// An RFS table as helpers/rps.c passes it: 6.12's pointer, 7.3's tagged
/// pointer (`rps_tag_ptr`); 0 is none. Only the helpers look inside.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub(crate) struct RawTable(core::ffi::c_ulong);

impl RawTable {
    fn is_none(self) -> bool {
        self.0 == 0
    }
}

/// A table a record step can write: [`GlobalFlowTable`], the live one
/// whose entries steer received flows, or a [`PrivateFlowTable`].
pub(crate) trait SockFlowTable: private::Sealed {
    /// The table, or none: the step's `rcu_dereference()`, inside its RCU
    /// read-side section. A table is valid until `_rcu` ends.
    #[doc(hidden)]
    fn table(&self, _rcu: &rcu::Guard) -> RawTable;
}

/// The global RFS table, `net_hotdata.rps_sock_flow_table` (set while
/// `rps_sock_flow_entries` is not 0).
pub(crate) struct GlobalFlowTable;

impl private::Sealed for GlobalFlowTable {}

impl SockFlowTable for GlobalFlowTable {
    #[inline(always)]
    fn table(&self, _rcu: &rcu::Guard) -> RawTable {
        // SAFETY: Inside `_rcu`; a published table stays valid until the
        // section ends (the sysctl frees a replaced one after a grace
        // period). The helper's read is the `rcu_dereference()`/READ_ONCE.
        RawTable(unsafe { bindings::rps_sock_flow_table_get() })
    }
}

/// An RFS table of the global one's layout that nobody else reads: what
/// the micro-benchmark records into, so that timing the record step does
/// not overwrite entries of the live table, which steer real flows. It
/// exists when the global table does, with as many entries
/// ([`PrivateFlowTable::like_global`]), and is read as the global one is
/// (one load of the table inside the step's RCU section), so the step
/// costs what it costs on the global table.
///
/// # Invariants
///
/// The table is none (0), or a table made by `rps_table_init()` in a
/// zeroed `KVmalloc` allocation of `layout`, `rps_table_size(entries)`
/// bytes aligned to `RTUN_RPS_TABLE_ALIGN`, owned here.
pub(crate) struct PrivateFlowTable(AtomicUsize, Layout);

impl PrivateFlowTable {
    /// A table with as many entries as the global one has now, all zero;
    /// none (as the global one is) while there is no global one.
    pub(crate) fn like_global() -> Result<Self> {
        let entries = {
            let rcu = rcu::read_lock();
            let table = GlobalFlowTable.table(&rcu);
            if table.is_none() {
                // INVARIANT: None.
                return Ok(Self(AtomicUsize::new(0), Layout::new::<u8>()));
            }
            // SAFETY: Valid inside `rcu` (`SockFlowTable::table`).
            unsafe { bindings::rps_table_entries(table.0) }
        };
        // SAFETY: Only arithmetic.
        let size = unsafe { bindings::rps_table_size(entries) };
        let layout = Layout::from_size_align(size, bindings::RTUN_RPS_TABLE_ALIGN as usize)
            .map_err(|_| EINVAL)?;
        let p = crate::sys::compat::kvmalloc(layout, GFP_KERNEL | __GFP_ZERO)?;
        // SAFETY: A fresh zeroed allocation of ours, of the size and
        // alignment the helper asks for; `entries` is the global table's,
        // a power of two.
        let table = unsafe { bindings::rps_table_init(p.as_ptr().cast(), entries) };
        // INVARIANT: As allocated and made.
        Ok(Self(AtomicUsize::new(table as usize), layout))
    }
}

impl private::Sealed for PrivateFlowTable {}

impl SockFlowTable for PrivateFlowTable {
    #[inline(always)]
    fn table(&self, _rcu: &rcu::Guard) -> RawTable {
        // A READ_ONCE() of the table, as the global table's is read.
        RawTable(self.0.load(Ordering::Relaxed) as core::ffi::c_ulong)
    }
}

impl Drop for PrivateFlowTable {
    fn drop(&mut self) {
        let table = self.0.load(Ordering::Relaxed);
        if table != 0 {
            // The allocation's address: the table's, below the alignment
            // (7.3 keeps the size's log there).
            let addr = table & !(self.1.align() - 1);
            if let Some(p) = NonNull::new(addr as *mut u8) {
                // SAFETY: Allocated by `KVmalloc` with `self.1` at `addr`
                // (type invariants); nobody else holds it.
                unsafe { KVmalloc::free(p, self.1) };
            }
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
    if table.is_none() {
        return false;
    }
    // SAFETY: A table `t` gave is valid during the RCU read section
    // (`SockFlowTable::table`).
    unsafe { bindings::rps_table_record(table.0, hash) };
    true
}

/// Reads the global RFS table's entry for `hash`, if there is a table.
pub(crate) fn rps_sock_flow_entry(hash: u32) -> Option<u32> {
    let rcu = rcu::read_lock();
    let table = GlobalFlowTable.table(&rcu);
    if table.is_none() {
        return None;
    }
    // SAFETY: As in `rps_record_sock_flow`.
    Some(unsafe { bindings::rps_table_entry(table.0, hash) })
}
