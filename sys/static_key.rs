// SPDX-License-Identifier: GPL-2.0

//! Static keys as jump-label sites (`static_branch_unlikely!`), and a
//! report of the module's jump entries as its text holds them now.

use crate::bindings;
use core::ffi::c_void;
use core::ptr;

// ---------------------------------------------------------------------------
// Static keys.

/// `static_branch_unlikely(&KEY)` for a `struct static_key_false` KEY, as a
/// jump-label site: on x86_64 with `CONFIG_JUMP_LABEL` a 5-byte NOP that the
/// kernel patches into a `JMP` to the "yes" path while the key is enabled,
/// registered in this module's `__jump_table` (x86's non-objtool
/// `arch_static_branch()`). Each expansion is its own site.
#[cfg(CONFIG_JUMP_LABEL)]
macro_rules! static_branch_unlikely {
    ($key:path) => {
        'site: {
            // SAFETY: The asm only emits a NOP and a `__jump_table` entry
            // (code, target, key), laid out as `struct jump_entry` with
            // relative offsets; the key is a `static_key_false` (branch bit
            // 0), so the kernel leaves the NOP while it is disabled and
            // patches a `JMP yes` while enabled. Neither path touches
            // registers, memory or the stack.
            unsafe {
                ::core::arch::asm!(
                    "772: .byte 0x0f,0x1f,0x44,0x00,0x00",
                    ".pushsection __jump_table, \"aw\"",
                    ".balign 8",
                    ".long 772b - .",
                    ".long {yes} - .",
                    ".quad {key} - .",
                    ".popsection",
                    key = sym $key,
                    yes = label { break 'site true; },
                    options(att_syntax, nostack),
                );
            }
            false
        }
    };
}

/// `static_branch_unlikely(&KEY)` without jump labels: a read of the key's
/// enable count, as C's fallback does.
#[cfg(not(CONFIG_JUMP_LABEL))]
macro_rules! static_branch_unlikely {
    ($key:path) => {
        // SAFETY: `static_key_count` reads the key's atomic count.
        unsafe {
            $crate::bindings::rtun_static_key_count(::core::ptr::addr_of_mut!($key).cast()) > 0
        }
    };
}
pub(crate) use static_branch_unlikely;

/// Whether the guards are jump-label sites in this build
/// (`CONFIG_JUMP_LABEL`); otherwise they read the keys' counts.
pub(crate) const JUMP_LABELS: bool = cfg!(CONFIG_JUMP_LABEL);

/// What a jump-label site of this module currently holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SiteInsn {
    /// The 5-byte NOP: the branch is not taken.
    Nop,
    /// A `JMP`; `to_target` says whether it lands on the entry's target.
    Jmp { to_target: bool },
    /// Anything else (a bug): its first byte.
    Other(u8),
}

/// One entry of this module's `__jump_table`.
pub(crate) struct JumpSite {
    /// The key's name, if it is one this module knows.
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
        // SAFETY: This module's own table, live as long as the module.
        let (start, n) = unsafe {
            (
                bindings::rtun_module_jump_entries(),
                bindings::rtun_module_num_jump_entries(),
            )
        };
        for i in 0..n as usize {
            // SAFETY: `i < n` entries of the module's table; the table and
            // the module text live as long as the module.
            let (code, target, key) = unsafe {
                let e = start.add(i);
                (
                    bindings::rtun_jump_entry_code(e) as usize,
                    bindings::rtun_jump_entry_target(e) as usize,
                    bindings::rtun_jump_entry_key(e),
                )
            };
            // SAFETY: `code` is a site in our loaded text, at least five
            // bytes long; text is readable, and patching keeps every byte
            // valid, so a racy read sees some valid byte.
            let bytes = unsafe { ptr::read_volatile(code as *const [u8; 5]) };
            let insn = match bytes {
                [0x0f, 0x1f, 0x44, 0x00, 0x00] => SiteInsn::Nop,
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
            let key_count = unsafe { bindings::rtun_static_key_count(key) };
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
        "?"
    }
}

/// The enable count of `rfs_needed` (not a jump site: for reports only).
pub(crate) fn rfs_needed_count() -> i32 {
    // SAFETY: Reads the key's atomic count.
    unsafe { bindings::rtun_static_key_count(ptr::addr_of_mut!(bindings::rfs_needed).cast()) }
}
