// SPDX-License-Identifier: GPL-2.0

//! Static keys as jump-label sites (`static_branch_unlikely!`), the
//! module's jump-entry report, the RFS table access, and the micro-benchmark's
//! primitives.

use super::*;

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
    let mut start: *const bindings::jump_entry = ptr::null();
    // SAFETY: Reads this module's `jump_entries`/`num_jump_entries`.
    let n = unsafe { bindings::rtun_jump_entries(&mut start) } as usize;
    for i in 0..n {
        #[cfg(CONFIG_JUMP_LABEL)]
        {
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
            let name = key_name(key.cast());
            // SAFETY: The key of a live jump entry is a live static key.
            let key_count = unsafe { bindings::rtun_static_key_count(key) };
            f(
                i,
                JumpSite {
                    key: name,
                    key_count,
                    insn,
                },
            );
        }
    }
    let _ = (&mut f, start);
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

// ---------------------------------------------------------------------------
// RPS/RFS.

/// The `unguarded` module parameter.
pub(crate) fn param_unguarded() -> bool {
    // SAFETY: Reads a module parameter with READ_ONCE.
    unsafe { bindings::rtun_param_unguarded() }
}

/// `rps_record_sock_flow()` on the global RFS table
/// (`net_hotdata.rps_sock_flow_table`), under RCU: sets the entry of `hash`
/// to the hash's upper bits and the current CPU. Returns whether a table
/// was there. The job of C's inline `sock_rps_record_flow_hash()` past its
/// zero-hash check.
#[inline(always)]
pub(crate) fn rps_record_sock_flow(hash: u32) -> bool {
    let _rcu = RcuReadGuard::new();
    let table = rps_sock_flow_table();
    if table.is_null() {
        return false;
    }
    // SAFETY: A published table stays valid during the RCU read section;
    // `mask + 1` entries follow the header, so `hash & mask` is in bounds.
    // Racy accesses are READ_ONCE/WRITE_ONCE, as in C.
    unsafe {
        let index = (hash & (*table).mask) as usize;
        let val = (hash & !rps_cpu_mask()) | raw_smp_processor_id();
        let ent = (*table).ents.as_mut_ptr().add(index);
        if ptr::read_volatile(ent) != val {
            ptr::write_volatile(ent, val);
        }
    }
    true
}

/// `rcu_dereference(net_hotdata.rps_sock_flow_table)`, read inline.
#[inline(always)]
fn rps_sock_flow_table() -> *mut bindings::rps_sock_flow_table {
    // SAFETY: `net_hotdata` is a live kernel object; the offset is
    // `offsetof(struct net_hotdata, rps_sock_flow_table)`; READ_ONCE.
    unsafe {
        ptr::read_volatile(
            ptr::addr_of!(bindings::net_hotdata)
                .cast::<u8>()
                .add(bindings::RTUN_NET_HOTDATA_RPS_SOCK_FLOW_TABLE as usize)
                .cast::<*mut bindings::rps_sock_flow_table>(),
        )
    }
}

/// `net_hotdata.rps_cpu_mask`, read inline.
#[inline(always)]
fn rps_cpu_mask() -> u32 {
    // SAFETY: As above, `offsetof(struct net_hotdata, rps_cpu_mask)`; a
    // plain read, as in C.
    unsafe {
        ptr::read(
            ptr::addr_of!(bindings::net_hotdata)
                .cast::<u8>()
                .add(bindings::RTUN_NET_HOTDATA_RPS_CPU_MASK as usize)
                .cast::<u32>(),
        )
    }
}

/// Reads the global RFS table's entry for `hash`, if there is a table.
pub(crate) fn rps_sock_flow_entry(hash: u32) -> Option<u32> {
    let _rcu = RcuReadGuard::new();
    let table = rps_sock_flow_table();
    // SAFETY: As in `rps_record_sock_flow`.
    unsafe {
        if table.is_null() {
            return None;
        }
        let index = (hash & (*table).mask) as usize;
        Some(ptr::read_volatile((*table).ents.as_ptr().add(index)))
    }
}

// ---------------------------------------------------------------------------
// Micro-benchmark support.

/// Bottom halves disabled until dropped (`local_bh_disable()`).
pub(crate) struct BhDisabled(PhantomData<*mut ()>);

impl BhDisabled {
    /// `local_bh_disable()`.
    pub(crate) fn new() -> Self {
        // SAFETY: Process context; balanced by `drop`.
        unsafe { bindings::rtun_local_bh_disable() };
        Self(PhantomData)
    }
}

impl Drop for BhDisabled {
    fn drop(&mut self) {
        // SAFETY: Balances `new`.
        unsafe { bindings::rtun_local_bh_enable() };
    }
}

/// `cond_resched()`: lets the scheduler run something else (process
/// context).
pub(crate) fn cond_resched() {
    // SAFETY: Process context (a debugfs open).
    unsafe { bindings::rtun_cond_resched() };
}

/// `signal_pending(current)`.
pub(crate) fn signal_pending() -> bool {
    // SAFETY: Always allowed.
    unsafe { bindings::rtun_signal_pending() }
}

/// The time-stamp counter (`rdtsc()`); under QEMU's `-icount shift=0` one
/// tick is one guest instruction.
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    // SAFETY: `rdtsc` has no preconditions in kernel mode.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Hides `v` from the optimiser, in a register (C's `asm volatile("" :
/// "+r"(v))`), so a loop around it is neither removed nor folded.
#[inline(always)]
pub(crate) fn hide(mut v: u32) -> u32 {
    // SAFETY: An empty asm statement.
    unsafe {
        ::core::arch::asm!("/* {0:e} */", inout(reg) v, options(nomem, nostack, preserves_flags))
    };
    v
}

/// The enable count of `rfs_needed` (not a jump site: for reports only).
pub(crate) fn rfs_needed_count() -> i32 {
    // SAFETY: Reads the key's atomic count.
    unsafe { bindings::rtun_static_key_count(ptr::addr_of_mut!(bindings::rfs_needed).cast()) }
}

/// `open` of `<debugfs>/rust_tun/micro_bench`: runs the micro-benchmark.
///
/// # Safety
///
/// Called by debugfs on a file being opened.
unsafe extern "C" fn micro_bench_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { open_text(file, crate::rps::micro_bench) }
}

/// The fops of `micro_bench`.
pub(crate) static MICRO_BENCH_FOPS: DebugfsFops = DebugfsFops::new(micro_bench_open);
