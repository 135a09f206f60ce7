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

/* Functions on 6.12, inlines on 7.3. */
__rtun_helper gro_result_t rtun_helper_napi_gro_receive(struct napi_struct *napi,
							struct sk_buff *skb)
{
	return napi_gro_receive(napi, skb);
}

__rtun_helper void rtun_helper___netif_napi_del(struct napi_struct *napi)
{
	__netif_napi_del(napi);
}
