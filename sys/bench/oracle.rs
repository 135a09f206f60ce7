// SPDX-License-Identifier: GPL-2.0

//! The inlined per-CPU helpers against GCC's copies of them, on a
//! GCC-built kernel whose helpers Kbuild inlined from clang's bitcode (its
//! `gcc` path, `Documentation/gcc-kernel-helpers.rst`).
//!
//! There the module links the kernel's GCC's `tun_helpers.o` too (the
//! gate's oracle, and the fallback of any helper the gate rejects); Kbuild
//! gives the GCC copies of the stateful per-CPU helpers second names,
//! `rtun_oracle_<name>` (`--defsym` in the module's link, its
//! `rtun_oracle_helpers`). A helper whose clang copy lost its `%gs`
//! prefix (LLVM issue 187893) changes memory that is not this CPU's, and
//! the state that GCC's copy and the kernel's own functions read does not
//! move: [`compare`] does each operation once through each copy and reads
//! the state through both (and the kernel's `netdev_refcnt_read()`).
//! debugfs `helpers_oracle` shows its report; the Debian suites read it.

use crate::bindings;
use crate::sys::PerCpuCounters;
use core::ffi::c_int;
use core::fmt::{self, Write};

// The bindings' types, as the bindings' own extern blocks use them
// (`net_device` holds zero-sized lock_class_key members).
#[allow(improper_ctypes)]
extern "C" {
    fn rtun_oracle_preempt_count() -> c_int;
    fn rtun_oracle_preempt_disable();
    fn rtun_oracle_preempt_enable();
    fn rtun_oracle_local_bh_disable();
    fn rtun_oracle_local_bh_enable();
    fn rtun_oracle_dev_hold(dev: *mut bindings::net_device);
    fn rtun_oracle_dev_put(dev: *mut bindings::net_device);
    fn rtun_oracle_this_cpu_inc_u64(ptr: *mut u64);
}

/// One row: the state's change through the inlined copy and through GCC's;
/// `ok` when they are equal and the operation changed something.
fn row(t: &mut impl Write, what: &str, inlined: i64, gcc: i64) -> fmt::Result {
    let v = if inlined == gcc && inlined != 0 {
        "ok"
    } else {
        "DIFF"
    };
    writeln!(t, "{what} inlined {inlined:+} gcc {gcc:+} {v}")
}

/// `preempt_count()` through both copies: the GCC copy's, and whether the
/// inlined copy's agrees.
fn counts(agree: &mut bool) -> i64 {
    // SAFETY: Reads this CPU's preempt count; no preconditions.
    let (a, b) = unsafe { (bindings::preempt_count(), rtun_oracle_preempt_count()) };
    *agree &= a == b;
    b as i64
}

/// A disable/enable pair crossed: the inlined disable undone by GCC's
/// enable, then GCC's disable undone by the inlined enable, the count read
/// after each step. A copy that changed the wrong memory leaves its step's
/// change 0 (and the count unbalanced). The closures are the inlined and
/// GCC's (disable, enable); called in that order they are balanced.
fn crossed(
    t: &mut impl Write,
    names: (&str, &str),
    inlined: (impl FnOnce(), impl FnOnce()),
    gcc: (impl FnOnce(), impl FnOnce()),
) -> fmt::Result {
    let mut agree = true;
    let c0 = counts(&mut agree);
    inlined.0();
    let c1 = counts(&mut agree);
    gcc.1();
    let c2 = counts(&mut agree);
    gcc.0();
    let c3 = counts(&mut agree);
    inlined.1();
    let c = [c1, c2, c3, counts(&mut agree)];
    row(t, names.0, c[0] - c0, c[2] - c[1])?;
    row(t, names.1, c[2] - c[3], c[0] - c[1])?;
    writeln!(
        t,
        "{} readers {}",
        names.0,
        if agree { "agree ok" } else { "disagree DIFF" }
    )
}

/// Writes the comparison, one row per operation (`<what> inlined +N gcc +N
/// ok|DIFF`). Process context, as a debugfs read: it disables and enables
/// preemption and bottom halves, in balanced pairs.
pub(crate) fn compare(t: &mut impl Write) -> fmt::Result {
    let mut agree = true;
    let c = counts(&mut agree);
    writeln!(t, "preempt_count {c} {}", if agree { "ok" } else { "DIFF" })?;
    // SAFETY (the closures): crossed() calls them as disable, enable,
    // disable, enable, in process context with preemption and bottom
    // halves enabled: balanced pairs.
    crossed(
        t,
        ("preempt_disable", "preempt_enable"),
        (
            || unsafe { bindings::preempt_disable() },
            || unsafe { bindings::preempt_enable() },
        ),
        (
            || unsafe { rtun_oracle_preempt_disable() },
            || unsafe { rtun_oracle_preempt_enable() },
        ),
    )?;
    // SAFETY: As above.
    crossed(
        t,
        ("local_bh_disable", "local_bh_enable"),
        (
            || unsafe { bindings::local_bh_disable() },
            || unsafe { bindings::local_bh_enable() },
        ),
        (
            || unsafe { rtun_oracle_local_bh_disable() },
            || unsafe { rtun_oracle_local_bh_enable() },
        ),
    )?;

    // SAFETY: init_net's loopback device exists from boot until shutdown;
    // reading the pointer is a plain load of a field set once.
    let lo = unsafe { (*core::ptr::addr_of!(bindings::init_net)).loopback_dev };
    if lo.is_null() {
        writeln!(t, "dev_hold no loopback device DIFF")?;
    } else {
        // SAFETY: `lo` is a registered device for as long as the kernel
        // runs.
        let refs = || unsafe { bindings::netdev_refcnt_read(lo) } as i64;
        // Other CPUs may hold and put the device meanwhile: a few tries.
        let mut d = [0i64; 4];
        for _ in 0..5 {
            let r0 = refs();
            // SAFETY: Each hold is dropped by the put after it: the inlined
            // copy's hold by GCC's put, GCC's hold by the inlined put.
            unsafe {
                bindings::dev_hold(lo);
                let r1 = refs();
                rtun_oracle_dev_put(lo);
                let r2 = refs();
                rtun_oracle_dev_hold(lo);
                let r3 = refs();
                bindings::dev_put(lo);
                d = [r1 - r0, r1 - r2, r3 - r2, r3 - refs()];
            }
            if d == [1; 4] {
                break;
            }
        }
        row(t, "dev_hold", d[0], d[2])?;
        row(t, "dev_put", d[3], d[1])?;
    }

    // The inlined copy is PerCpuCounters::inc(); GCC's gets its counter.
    let Ok(c) = PerCpuCounters::<1>::new() else {
        return writeln!(t, "this_cpu_inc_u64 no memory DIFF");
    };
    c.inc::<0>();
    let i = c.sum::<0>() as i64;
    // SAFETY: Counter 0 of the live allocation `c`, written by a
    // this_cpu operation (preemption-safe) as PerCpuCounters' own are.
    unsafe { rtun_oracle_this_cpu_inc_u64(c.as_ptr::<0>()) };
    let g = c.sum::<0>() as i64 - i;
    row(t, "this_cpu_inc_u64", i, g)
}
