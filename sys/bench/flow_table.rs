// SPDX-License-Identifier: GPL-2.0

//! The micro-benchmark's RFS table: one of the global table's layout that
//! nobody else reads.

use crate::bindings;
use crate::sys::rcu;
use crate::sys::tun::{private, GlobalFlowTable, RawTable, SockFlowTable};
use core::alloc::Layout;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::alloc::{allocator::KVmalloc, Allocator};
use kernel::prelude::*;

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
