// SPDX-License-Identifier: GPL-2.0

#include <linux/netdevice.h>

__rtun_helper void rtun_helper_netif_napi_add_tx(struct net_device *dev, struct napi_struct *napi,
						int (*poll)(struct napi_struct *, int))
{
	netif_napi_add_tx(dev, napi, poll);
}

__rtun_helper bool rtun_helper_napi_schedule(struct napi_struct *n)
{
	return napi_schedule(n);
}

__rtun_helper bool rtun_helper_napi_complete(struct napi_struct *n)
{
	return napi_complete(n);
}
