// SPDX-License-Identifier: GPL-2.0
/*
 * C shims for rust_tun: see tun_helpers.h. Each body is the one inline
 * function or macro it wraps, nothing more.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/skbuff.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <net/net_namespace.h>

#include "tun_helpers.h"

void *rtun_netdev_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

void rtun_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void rtun_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

void rtun_dev_net_set(struct net_device *dev, struct net *net)
{
	dev_net_set(dev, net);
}

bool rtun_netif_running(const struct net_device *dev)
{
	return netif_running(dev);
}

void rtun_netif_tx_start_all_queues(struct net_device *dev)
{
	netif_tx_start_all_queues(dev);
}

void rtun_netif_tx_stop_all_queues(struct net_device *dev)
{
	netif_tx_stop_all_queues(dev);
}

void rtun_netif_tx_wake_all_queues(struct net_device *dev)
{
	netif_tx_wake_all_queues(dev);
}

void rtun_eth_hw_addr_random(struct net_device *dev)
{
	eth_hw_addr_random(dev);
}

void rtun_netdev_priv_flags_update(struct net_device *dev, u32 clear, u32 set)
{
	dev->priv_flags = (dev->priv_flags & ~clear) | set;
}

struct sk_buff *rtun_netdev_alloc_skb_ip_align(struct net_device *dev,
					       unsigned int length)
{
	return netdev_alloc_skb_ip_align(dev, length);
}

void rtun_kfree_skb(struct sk_buff *skb)
{
	kfree_skb(skb);
}

void rtun_consume_skb(struct sk_buff *skb)
{
	consume_skb(skb);
}

unsigned int rtun_skb_len(const struct sk_buff *skb)
{
	return skb->len;
}

int rtun_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

void rtun_skb_reset_mac_header(struct sk_buff *skb)
{
	skb_reset_mac_header(skb);
}

__be16 rtun_skb_protocol(const struct sk_buff *skb)
{
	return skb->protocol;
}

void rtun_skb_set_protocol(struct sk_buff *skb, __be16 protocol)
{
	skb->protocol = protocol;
}

void rtun_skb_set_dev(struct sk_buff *skb, struct net_device *dev)
{
	skb->dev = dev;
}

u16 rtun_skb_get_queue_mapping(const struct sk_buff *skb)
{
	return skb_get_queue_mapping(skb);
}

void rtun_skb_orphan(struct sk_buff *skb)
{
	skb_orphan(skb);
}

size_t rtun_iov_iter_count(const struct iov_iter *i)
{
	return iov_iter_count(i);
}

bool rtun_copy_from_iter_full(void *addr, size_t bytes, struct iov_iter *i)
{
	return copy_from_iter_full(addr, bytes, i);
}

size_t rtun_copy_to_iter(const void *addr, size_t bytes, struct iov_iter *i)
{
	return copy_to_iter(addr, bytes, i);
}

void rtun_rcu_read_lock(void)
{
	rcu_read_lock();
}

void rtun_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

void rtun_spin_lock_bh(spinlock_t *lock)
{
	spin_lock_bh(lock);
}

void rtun_spin_unlock_bh(spinlock_t *lock)
{
	spin_unlock_bh(lock);
}

void rtun_init_wait(struct wait_queue_entry *wq_entry)
{
	init_wait(wq_entry);
}

bool rtun_signal_pending(void)
{
	return signal_pending(current);
}

void rtun_wake_up_interruptible_poll(struct wait_queue_head *wq, __poll_t mask)
{
	wake_up_interruptible_poll(wq, mask);
}

void rtun_poll_wait(struct file *filp, struct wait_queue_head *wq,
		    struct poll_table_struct *p)
{
	poll_wait(filp, wq, p);
}

struct net *rtun_get_current_net(void)
{
	return get_net(current->nsproxy->net_ns);
}

void rtun_put_net(struct net *net)
{
	put_net(net);
}

bool rtun_ns_capable_net_admin(const struct net *net)
{
	return ns_capable(net->user_ns, CAP_NET_ADMIN);
}
