// SPDX-License-Identifier: GPL-2.0
/*
 * rust_tun.ko's helpers: the core's (helpers/helpers.c) and those of the
 * tun part of sys/ (helpers/tun/), compiled to bitcode inlined into tun.o
 * or to tun_helpers.o, as Kbuild chooses (helpers/helpers.c says how).
 */
#include "helpers/helpers.c"

#include "helpers/tun/rps.c"
#include "helpers/tun/security.c"
#include "helpers/tun/sock.c"
#include "helpers/tun/virtio_net.c"
