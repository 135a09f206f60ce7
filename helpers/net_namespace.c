// SPDX-License-Identifier: GPL-2.0

#include <net/net_namespace.h>

__rtun_helper struct net *rtun_helper_get_net(struct net *net)
{
	return get_net(net);
}

__rtun_helper void rtun_helper_put_net(struct net *net)
{
	put_net(net);
}

__rtun_helper bool rtun_helper_net_eq(const struct net *net1, const struct net *net2)
{
	return net_eq(net1, net2);
}
