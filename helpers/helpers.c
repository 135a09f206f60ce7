// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of the sys/ layer's core, in the shape of the kernel's
 * rust/helpers/ (Linux 7.3): static inline functions and macros that Rust
 * cannot call, each wrapped in a helper whose body is that one call,
 * named rtun_helper_<C name> (the bindings give it to Rust under the C
 * name: Kbuild renames bindgen's output with #[link_name], as
 * rust/Makefile does). One file per subsystem, sorted. The helpers of
 * sys/tun/ are in helpers/tun/ and built into rust_tun alone
 * (tun_helpers.c); rust_dummy has these only (dummy_helpers.c).
 *
 * Where rustc and clang share an LLVM major version, Kbuild compiles this
 * file to LLVM bitcode (RTUN_HELPERS_BITCODE), links it into the crate's
 * bitcode with llvm-link --internalize and compiles the result with clang,
 * so every helper is inlined into its Rust caller (7.3's
 * CONFIG_RUST_INLINE_HELPERS); otherwise it is compiled to helpers.o and
 * called out of line. Either way the C headers of the kernel being built
 * are the one source of truth, in every version and configuration.
 */

#include <linux/compiler_types.h>

#ifdef __BINDGEN__
/* bindgen ignores inline functions: plain declarations for it. */
#define __rtun_helper
#elif defined(RTUN_HELPERS_BITCODE)
/*
 * __always_inline bypasses LLVM's inlining checks, which would refuse the
 * inlining for attributes that differ between the C and the Rust side
 * without changing the ABI (7.3's rust/helpers/helpers.c): C's
 * -fno-delete-null-pointer-checks, C's -fno-builtin-wcslen, and clang's
 * target string ("+cmov,+cx8,+fxsr", always on for x86_64) against
 * rustc's.
 */
#define __rtun_helper __always_inline
#else
/* Out of line: plain functions in helpers.o. */
#define __rtun_helper
#endif

#include "barrier.c"
#include "bitops.c"
#include "bpf.c"
#include "bottom_half.c"
#include "cred.c"
#include "debugfs.c"
#include "etherdevice.c"
#include "fs.c"
#include "jump_label.c"
#include "mm.c"
#include "mutex.c"
#include "napi.c"
#include "net_namespace.c"
#include "netdevice.c"
#include "netlink.c"
#include "percpu.c"
#include "preempt.c"
#include "ptr_ring.c"
#include "rcu.c"
#include "skbuff.c"
#include "spinlock.c"
#include "task.c"
#include "timer.c"
#include "uio.c"
#include "wait.c"
#include "xdp.c"
