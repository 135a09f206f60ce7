// SPDX-License-Identifier: GPL-2.0

//! The global RFS table (`net_hotdata.rps_sock_flow_table`): recording a
//! flow's CPU (`rps_record_sock_flow()`, the work of C's inline
//! `sock_rps_record_flow_hash()`) and reading an entry back.

use super::*;

/// `rps_record_sock_flow()` on the global RFS table, under RCU: sets the
/// entry of `hash` to the hash's upper bits and the current CPU. Returns
/// whether a table was there. The work of C's inline
/// `sock_rps_record_flow_hash()` past its zero-hash check (include/net/rps.h,
/// Linux 6.12; the same with every configuration that has `CONFIG_RPS`).
#[inline(always)]
pub(crate) fn rps_record_sock_flow(hash: u32) -> bool {
    let _rcu = RcuReadGuard::new();
    // SAFETY: Inside `_rcu`.
    let table = unsafe { inline::rps_sock_flow_table() };
    if table.is_null() {
        return false;
    }
    // SAFETY: A published table stays valid during the RCU read section;
    // `mask + 1` entries follow the header, so `hash & mask` is in bounds.
    // Racy accesses are READ_ONCE/WRITE_ONCE, as in C.
    unsafe {
        let index = (hash & (*table).mask) as usize;
        let val = (hash & !inline::rps_cpu_mask()) | inline::raw_smp_processor_id();
        let ent = (*table).ents.as_mut_ptr().add(index);
        if ptr::read_volatile(ent) != val {
            ptr::write_volatile(ent, val);
        }
    }
    true
}

/// Reads the global RFS table's entry for `hash`, if there is a table.
pub(crate) fn rps_sock_flow_entry(hash: u32) -> Option<u32> {
    let _rcu = RcuReadGuard::new();
    // SAFETY: Inside `_rcu`.
    let table = unsafe { inline::rps_sock_flow_table() };
    if table.is_null() {
        return None;
    }
    // SAFETY: As in `rps_record_sock_flow`.
    unsafe {
        let index = (hash & (*table).mask) as usize;
        Some(ptr::read_volatile((*table).ents.as_ptr().add(index)))
    }
}
