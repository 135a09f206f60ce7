// SPDX-License-Identifier: GPL-2.0

//! The module's own jump-label sites as they are now: what the guards'
//! tests read (debugfs `jump_sites`) to see that a guard is a NOP while
//! its key is off and a jump to its target while on.

use crate::bindings;
use crate::sys::this_module;
use core::ffi::c_void;
use core::ptr;

/// What a jump-label site of this module currently holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SiteInsn {
    /// A NOP: the branch is not taken. The 5-byte one (this module's guard
    /// sites, and C's without objtool), or the 2-byte one C's sites may be
    /// shrunk to (objtool's jump-label hack, `JUMP_LABEL_NOP_SIZE` 2: a
    /// GCC-built kernel's own static branches, inlined into the C helpers).
    Nop,
    /// A `JMP`; `to_target` says whether it lands on the entry's target.
    Jmp { to_target: bool },
    /// Anything else (a bug): its first byte.
    Other(u8),
}

/// One entry of this module's `__jump_table`.
pub(crate) struct JumpSite {
    /// The key's name if it is one of the guards' (`rps_needed`,
    /// `rfs_needed`), else `other`: a static branch of a C inline in the
    /// helpers (a tracepoint, a feature key), which a kernel configured
    /// with them compiles into this module's table too.
    pub(crate) key: &'static str,
    /// The key's enable count (`static_key_count()`).
    pub(crate) key_count: i32,
    /// The instruction at the site now.
    pub(crate) insn: SiteInsn,
}

/// Calls `f` on every jump-label site of this module, in table order.
pub(crate) fn for_each_jump_site(mut f: impl FnMut(usize, JumpSite)) {
    #[cfg(CONFIG_JUMP_LABEL)]
    {
        // SAFETY: This module's own table (`THIS_MODULE->jump_entries`),
        // live as long as the module.
        let (start, n) = unsafe {
            let m = this_module();
            ((*m).jump_entries, (*m).num_jump_entries)
        };
        for i in 0..n as usize {
            // SAFETY: `i < n` entries of the module's table; the table and
            // the module text live as long as the module.
            let (code, target, key) = unsafe {
                let e = start.add(i);
                (
                    bindings::jump_entry_code(e) as usize,
                    bindings::jump_entry_target(e) as usize,
                    bindings::jump_entry_key(e),
                )
            };
            // SAFETY: `code` is a site in our loaded text, at least five
            // bytes long; text is readable, and patching keeps every byte
            // valid, so a racy read sees some valid byte.
            let bytes = unsafe { ptr::read_volatile(code as *const [u8; 5]) };
            let insn = match bytes {
                [0x0f, 0x1f, 0x44, 0x00, 0x00] | [0x66, 0x90, ..] => SiteInsn::Nop,
                [0xe9, a, b, c, d] => SiteInsn::Jmp {
                    to_target: code
                        .wrapping_add(5)
                        .wrapping_add(i32::from_le_bytes([a, b, c, d]) as isize as usize)
                        == target,
                },
                [0xeb, rel, ..] => SiteInsn::Jmp {
                    to_target: code
                        .wrapping_add(2)
                        .wrapping_add(rel as i8 as isize as usize)
                        == target,
                },
                [b, ..] => SiteInsn::Other(b),
            };
            // SAFETY: The key of a live jump entry is a live static key.
            let key_count = unsafe { bindings::static_key_count(key) };
            f(
                i,
                JumpSite {
                    key: key_name(key.cast()),
                    key_count,
                    insn,
                },
            );
        }
    }
    let _ = &mut f;
}

/// The name of a static key this module uses.
fn key_name(key: *const c_void) -> &'static str {
    if ptr::eq(key, ptr::addr_of!(bindings::rps_needed).cast()) {
        "rps_needed"
    } else if ptr::eq(key, ptr::addr_of!(bindings::rfs_needed).cast()) {
        "rfs_needed"
    } else {
        "other"
    }
}

/// The enable count of `rfs_needed` (not a jump site: for reports only).
pub(crate) fn rfs_needed_count() -> i32 {
    // SAFETY: Reads the key's atomic count.
    unsafe { bindings::static_key_count(ptr::addr_of_mut!(bindings::rfs_needed.key)) }
}
