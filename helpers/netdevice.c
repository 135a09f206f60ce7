// SPDX-License-Identifier: GPL-2.0

#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/version.h>
#include <net/sch_generic.h>

__rtun_helper void rtun_helper_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

__rtun_helper void rtun_helper_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

__rtun_helper struct net *rtun_helper_dev_net(const struct net_device *dev)
{
	return dev_net(dev);
}

__rtun_helper void rtun_helper_dev_net_set(struct net_device *dev, struct net *net)
{
	dev_net_set(dev, net);
}

__rtun_helper void *rtun_helper_netdev_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

__rtun_helper bool rtun_helper_netif_running(const struct net_device *dev)
{
	return netif_running(dev);
}

__rtun_helper void rtun_helper_netif_tx_start_all_queues(struct net_device *dev)
{
	netif_tx_start_all_queues(dev);
}

__rtun_helper void rtun_helper_netif_tx_stop_all_queues(struct net_device *dev)
{
	netif_tx_stop_all_queues(dev);
}

__rtun_helper void rtun_helper_netif_tx_wake_all_queues(struct net_device *dev)
{
	netif_tx_wake_all_queues(dev);
}

__rtun_helper struct netdev_queue *rtun_helper_netdev_get_tx_queue(const struct net_device *dev,
								 unsigned int index)
{
	return netdev_get_tx_queue(dev, index);
}

__rtun_helper void rtun_helper_txq_trans_cond_update(struct netdev_queue *txq)
{
	txq_trans_cond_update(txq);
}

/*
 * IFF_BACKPRESSURE (7.3's tun_net_xmit(), __tun_wake_queue()); its
 * netif_tx_wake_queue() is an exported function, bound directly.
 */
__rtun_helper void rtun_helper_netif_tx_stop_queue(struct netdev_queue *dev_queue)
{
	netif_tx_stop_queue(dev_queue);
}

__rtun_helper bool rtun_helper_netif_tx_queue_stopped(const struct netdev_queue *dev_queue)
{
	return netif_tx_queue_stopped(dev_queue);
}

__rtun_helper void rtun_helper_netif_wake_subqueue(struct net_device *dev, u16 queue_index)
{
	netif_wake_subqueue(dev, queue_index);
}

__rtun_helper bool rtun_helper_qdisc_txq_has_no_queue(const struct netdev_queue *txq)
{
	return qdisc_txq_has_no_queue(txq);
}

__rtun_helper void rtun_helper_dev_sw_netstats_rx_add(struct net_device *dev, unsigned int len)
{
	dev_sw_netstats_rx_add(dev, len);
}

__rtun_helper void rtun_helper_dev_sw_netstats_tx_add(struct net_device *dev, unsigned int packets,
						     unsigned int len)
{
	dev_sw_netstats_tx_add(dev, packets, len);
}

__rtun_helper void rtun_helper_dev_core_stats_rx_dropped_inc(struct net_device *dev)
{
	dev_core_stats_rx_dropped_inc(dev);
}

__rtun_helper void rtun_helper_dev_core_stats_tx_dropped_inc(struct net_device *dev)
{
	dev_core_stats_tx_dropped_inc(dev);
}

__rtun_helper struct net_device *rtun_helper_netdev_notifier_info_to_dev(const struct netdev_notifier_info *info)
{
	return netdev_notifier_info_to_dev(info);
}

__rtun_helper struct net_device *rtun_helper_to_net_dev(struct device *d)
{
	return to_net_dev(d);
}

__rtun_helper int rtun_helper_notifier_to_errno(int ret)
{
	return notifier_to_errno(ret);
}

/*
 * SIOCGIFHWADDR: dev_get_mac_address() on 6.12, netif_get_mac_address()
 * (NETDEV_INTERNAL, imported in tun_params.c) on 7.3.
 */
__rtun_helper int rtun_helper_netif_get_mac_address(struct sockaddr *sa, struct net *net,
						    char *dev_name)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return netif_get_mac_address(sa, net, dev_name);
#else
	return dev_get_mac_address(sa, net, dev_name);
#endif
}

/*
 * SIOCSIFHWADDR from an ifreq's union (ifr_ifru, 24 bytes: the struct
 * sockaddr and what follows it), as tun.c passes &ifr.ifr_hwaddr inside
 * its whole ifreq: dev_set_mac_address() compares addr_len (up to 16)
 * bytes from sa_data, so the comparison reaches 2 bytes past the
 * sockaddr, into the union's rest. Copied into a zeroed sockaddr_storage,
 * which both kernels' calls can read in full (7.3 takes one; 6.12 takes a
 * struct sockaddr at its start).
 */
__rtun_helper int rtun_helper_dev_set_mac_address_user(struct net_device *dev,
						       const void *ifru, size_t len,
						       struct netlink_ext_ack *extack)
{
	struct sockaddr_storage ss = {};

	memcpy(&ss, ifru, min(len, sizeof(ss)));
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return dev_set_mac_address_user(dev, &ss, extack);
#else
	return dev_set_mac_address_user(dev, (struct sockaddr *)&ss, extack);
#endif
}
