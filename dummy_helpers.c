// SPDX-License-Identifier: GPL-2.0
/*
 * rust_dummy.ko's copy of the helpers that sys/ calls: helpers/helpers.c
 * again, compiled once per module (a Kbuild object belongs to one module,
 * and KBUILD_MODNAME is this one's): to bitcode inlined into dummy.o, or to
 * dummy_helpers.o, as Kbuild chooses for rust_tun.ko's.
 */
#include "helpers/helpers.c"
