// SPDX-License-Identifier: GPL-2.0

//! Static keys as jump-label sites (`static_branch_unlikely!`), and a
//! report of the module's jump entries as its text holds them now.

use super::this_module;
use crate::bindings;
use core::ffi::c_void;
use core::ptr;

// ---------------------------------------------------------------------------
// Static keys.

/// `static_branch_unlikely(&KEY.FIELD)`, its key typed as Linux 7.3's
/// (`rust/kernel/jump_label.rs`): `$key` the static holding the key,
/// `$keytyp` its type, `$field` the member of it that is the `struct
/// static_key_false`; or `static_branch_unlikely(&KEY)` for a static that
/// is itself a `static_key_false` (`DEFINE_STATIC_KEY_FALSE()`, as
/// `rps_needed`). Anything else (a `static_key_true`, a plain variable)
/// does not compile.
///
/// On x86_64 with `CONFIG_JUMP_LABEL` a jump-label site: a 5-byte NOP that
/// the kernel patches into a `JMP` to the "yes" path while the key is
/// enabled, registered in this module's `__jump_table` (x86's
/// `arch_static_branch()` and `JUMP_TABLE_ENTRY`; 6.12 has no
/// `ARCH_STATIC_BRANCH_ASM` string to take them from, as 7.3 does). Each
/// expansion is its own site. Without jump labels, a read of the key's
/// enable count, as C's fallback.
macro_rules! static_branch_unlikely {
    ($key:path, $keytyp:ty, $field:ident) => {{
        let _key: *const $keytyp = ::core::ptr::addr_of!($key);
        // SAFETY: Only the field's address is computed, in bounds of the
        // static.
        let _key: *const $crate::bindings::static_key_false =
            unsafe { ::core::ptr::addr_of!((*_key).$field) };
        $crate::sys::static_branch_unlikely!(@site _key, $key, ::core::mem::offset_of!($keytyp, $field))
    }};
    ($key:path) => {{
        let _key: *const $crate::bindings::static_key_false = ::core::ptr::addr_of!($key);
        $crate::sys::static_branch_unlikely!(@site _key, $key, 0)
    }};
    (@site $keyptr:ident, $key:path, $off:expr) => {{
        // The driver denies `unsafe_code`: this expansion's `unsafe` is
        // sys/'s, justified below.
        #[cfg(CONFIG_JUMP_LABEL)]
        #[allow(unsafe_code)]
        let yes = 'site: {
            let _ = $keyptr;
            // SAFETY: The asm only emits a NOP and a `__jump_table` entry
            // (code, target, key), laid out as `struct jump_entry` with
            // relative offsets; the key (`sym` plus the field's offset) is
            // a `static_key_false` (branch bit 0), so the kernel leaves the
            // NOP while it is disabled and patches a `JMP yes` while
            // enabled. Neither path touches registers, memory or the stack.
            unsafe {
                ::core::arch::asm!(
                    "772: .byte 0x0f,0x1f,0x44,0x00,0x00",
                    ".pushsection __jump_table, \"aw\"",
                    ".balign 8",
                    ".long 772b - .",
                    ".long {yes} - .",
                    ".quad {key} + {off} - .",
                    ".popsection",
                    key = sym $key,
                    off = const $off,
                    yes = label { break 'site true; },
                    options(att_syntax, nostack),
                );
            }
            false
        };
        #[cfg(not(CONFIG_JUMP_LABEL))]
        #[allow(unsafe_code)]
        // SAFETY: A `static_key_false` (typed above), whose count
        // `static_key_count()` reads atomically.
        let yes = unsafe {
            $crate::bindings::static_key_count(::core::ptr::addr_of_mut!((*$keyptr.cast_mut()).key)) > 0
        };
        yes
    }};
}
pub(crate) use static_branch_unlikely;

// Keys of another type than `static_key_false` must not compile
// (`scripts/compile-fail.sh`): a plain variable, and a field of a struct
// that is not a key.
#[cfg(rtun_compile_fail = "static_key_of_other_type")]
fn static_key_of_other_type() -> bool {
    static_branch_unlikely!(bindings::jiffies)
}
#[cfg(rtun_compile_fail = "static_key_field_of_other_type")]
fn static_key_field_of_other_type() -> bool {
    static_branch_unlikely!(bindings::net_hotdata, bindings::net_hotdata, rps_cpu_mask)
}

/// Whether the guards are jump-label sites in this build
/// (`CONFIG_JUMP_LABEL`); otherwise they read the keys' counts.
pub(crate) const JUMP_LABELS: bool = cfg!(CONFIG_JUMP_LABEL);

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
