// SPDX-License-Identifier: GPL-2.0

#include <linux/etherdevice.h>

__rtun_helper void rtun_helper_eth_hw_addr_random(struct net_device *dev)
{
	eth_hw_addr_random(dev);
}

__rtun_helper bool rtun_helper_is_valid_ether_addr(const u8 *addr)
{
	return is_valid_ether_addr(addr);
}
