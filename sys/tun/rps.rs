// SPDX-License-Identifier: GPL-2.0

//! RFS tables: recording a flow's CPU (`rps_record_sock_flow()`, the work
//! of C's inline `sock_rps_record_flow_hash()`) in the global table
//! (`net_hotdata.rps_sock_flow_table`) or in a private one of the same
//! layout (the micro-benchmark's, `sys/bench/flow_table.rs`), and reading
//! an entry of the global one back.

use crate::bindings;
use crate::sys::rcu;

pub(in crate::sys) mod private {
    /// Only `sys` says where a record step finds its table.
    pub(crate) trait Sealed {}
}

/// An RFS table as helpers/rps.c passes it: 6.12's pointer, 7.3's tagged
/// pointer (`rps_tag_ptr`); 0 is none. Only the helpers look inside.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub(crate) struct RawTable(pub(in crate::sys) core::ffi::c_ulong);

impl RawTable {
    pub(in crate::sys) fn is_none(self) -> bool {
        self.0 == 0
    }
}

/// A table a record step can write: [`GlobalFlowTable`], the live one
/// whose entries steer received flows, or the micro-benchmark's
/// `PrivateFlowTable`.
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
