// SPDX-License-Identifier: GPL-2.0

//! Bindings from the module's own bindgen runs: over `bindings_helper.h`
//! (`bindings_generated.rs`) and over the crate's C helpers (rust_tun's
//! `tun_helpers_generated.rs`, the core's and the tun part's; rust_dummy's
//! `dummy_helpers_generated.rs`, the core's), all build products of
//! `Kbuild`.
//!
//! 6.12's `kernel` crate binds neither `net_device` operations nor
//! `miscdevice`, `sk_buff` helpers or `rtnl_link_ops`. The types here are
//! distinct from `kernel::bindings` types of the same C name. Each helper
//! (`rtun_helper_<name>` in C, one static inline function or macro called)
//! is here under its C name, as `kernel::bindings` has mainline's
//! `rust_helper_`s. `sys` calls the functions and uses the types; the
//! driver uses only the constants (the ABI's flags and sizes).

#![allow(
    dead_code,
    improper_ctypes,
    missing_docs,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::all,
    clippy::pedantic,
    clippy::restriction,
    clippy::nursery,
    clippy::undocumented_unsafe_blocks
)]

// `Kbuild` blocklists these, as the kernel's own bindings do, to map them to
// Rust's pointer-sized integers.
type __kernel_size_t = usize;
type __kernel_ssize_t = isize;
type __kernel_ptrdiff_t = isize;

include!("bindings_generated.rs");

/// The crate's helpers, under their C names (`#[link_name]`).
mod helpers {
    use super::*;
    #[cfg(rtun_driver = "tun")]
    include!("tun_helpers_generated.rs");
    #[cfg(rtun_driver = "dummy")]
    include!("dummy_helpers_generated.rs");
}
pub use helpers::*;
