// SPDX-License-Identifier: GPL-2.0

//! The RPS/RFS bookkeeping of tun's hot path, guarded by the kernel's
//! static keys `rps_needed` and `rfs_needed`.
//!
//! - [`rps_needed`] guards the transmit side (`tun_automq_xmit`): computing
//!   a flow hash to save for RPS is pointless while no RPS map exists
//!   ("tuntap: calculate rps hash only when needed").
//! - [`rfs_needed`] guards the write side (`tun_flow_update` ->
//!   [`sock_rps_record_flow_hash`]): recording a flow in the global RFS
//!   table is pointless while the table does not exist ("net: rps: Add the
//!   rfs_needed check when record flow hash").
//!
//! On x86_64 with `CONFIG_JUMP_LABEL` each guard is a jump-label site in
//! this module's text (`sys::static_branch_unlikely!`): a 5-byte NOP while
//! the key is off, patched by the kernel into a JMP while it is on, for
//! every flip of `rps_sock_flow_entries` or `rps_cpus`, without reloading.
//! [`show_jump_sites`] prints the sites as they are, which is how the tests
//! prove it. Without `CONFIG_JUMP_LABEL` they read the keys' counts.

use crate::sys::bench::SiteInsn;
use crate::sys::tun::SockFlowTable;
use crate::sys::{self, TextBuf};
use core::fmt::Write;

/// `static_branch_unlikely(&rps_needed)`.
#[inline(always)]
pub(crate) fn rps_needed() -> bool {
    sys::static_branch_unlikely!(crate::bindings::rps_needed)
}

/// `static_branch_unlikely(&rfs_needed)`.
#[inline(always)]
pub(crate) fn rfs_needed() -> bool {
    sys::static_branch_unlikely!(crate::bindings::rfs_needed)
}

/// `sock_rps_record_flow_hash()` (`include/net/rps.h`), unguarded, as
/// tun.c calls it: records `hash` with this CPU in `table` (tun.c's is
/// always the global RFS table, [`sys::tun::GlobalFlowTable`]) if the hash is
/// set and the table exists. Returns whether it recorded.
#[inline(always)]
pub(crate) fn sock_rps_record_flow_hash(table: &impl SockFlowTable, hash: u32) -> bool {
    if hash == 0 {
        return false;
    }
    sys::tun::rps_record_sock_flow(table, hash)
}

/// The record step behind the `rfs_needed` guard: what the rfs_needed patch
/// makes of `sock_rps_record_flow_hash()`. `None` when the guard is off
/// (nothing was even looked at).
#[inline(always)]
pub(crate) fn sock_rps_record_flow_hash_guarded(
    table: &impl SockFlowTable,
    hash: u32,
) -> Option<bool> {
    if rfs_needed() {
        Some(sock_rps_record_flow_hash(table, hash))
    } else {
        None
    }
}

/// Prints whether the guards are jump-label sites, then this module's
/// jump-label sites: one line per site with its key, the key's enable count
/// and the instruction at the site now.
pub(crate) fn show_jump_sites(t: &mut TextBuf) -> core::fmt::Result {
    writeln!(t, "jump_labels={}", u8::from(sys::JUMP_LABELS))?;
    let mut res = Ok(());
    sys::bench::for_each_jump_site(|i, site| {
        let insn = match site.insn {
            SiteInsn::Nop => "nop",
            SiteInsn::Jmp { to_target: true } => "jmp",
            SiteInsn::Jmp { to_target: false } => "jmp-elsewhere",
            SiteInsn::Other(_) => "unknown",
        };
        if res.is_ok() {
            res = writeln!(
                t,
                "site={} key={} enabled={} insn={}",
                i, site.key, site.key_count, insn
            );
        }
    });
    res
}
