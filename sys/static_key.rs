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
