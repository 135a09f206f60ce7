// SPDX-License-Identifier: GPL-2.0
/*
 * rust_dummy's module parameter, as drivers/net/dummy.c declares it (6.12's
 * Rust module! has no parameters), read by the driver through
 * rtun_param_numdummies() (params.h).
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/version.h>

#include "params.h"

/* Number of dummy devices to be set up by this module. */
static int numdummies = 1;
module_param(numdummies, int, 0);
MODULE_PARM_DESC(numdummies, "Number of dummy pseudo devices");
int rtun_param_numdummies(void) { return READ_ONCE(numdummies); }

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
/*
 * netif_get_mac_address() (SIOCGIFHWADDR, helpers/netdevice.c) is in the
 * NETDEV_INTERNAL namespace on 7.3 (dev_get_mac_address() on 6.12).
 */
MODULE_IMPORT_NS("NETDEV_INTERNAL");
#endif
