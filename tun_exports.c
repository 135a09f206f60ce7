// SPDX-License-Identifier: GPL-2.0
/*
 * rust_tun's side of tun.ko's exports (sys/vhost.rs): exported under names
 * that no other module has, so that rust_tun loads beside tun.ko; only
 * rust_tun_vhost.ko, which stands in for tun.ko, uses them.
 */
#include <linux/export.h>
#include "tun_exports.h"

EXPORT_SYMBOL_GPL(rtun_get_socket);
EXPORT_SYMBOL_GPL(rtun_get_tx_ring);
EXPORT_SYMBOL_GPL(rtun_wake_queue);
