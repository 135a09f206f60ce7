// SPDX-License-Identifier: GPL-2.0
/*
 * rust_dummy.ko's helpers: the core's (helpers/helpers.c) alone, without
 * the tun part's (helpers/tun/), compiled once per module (a Kbuild object
 * belongs to one module, and KBUILD_MODNAME is this one's): to bitcode
 * inlined into dummy.o, or to dummy_helpers.o, as Kbuild chooses for
 * rust_tun.ko's (tun_helpers.c).
 */
#include "helpers/helpers.c"
