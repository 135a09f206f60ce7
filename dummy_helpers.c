// SPDX-License-Identifier: GPL-2.0
/*
 * rust_dummy.ko's copy of the C shims that sys/ calls: the same source as
 * rust_tun.ko's, compiled once per module (a Kbuild object belongs to one
 * module, and KBUILD_MODNAME is this one's).
 */
#include "tun_helpers.c"
