// SPDX-License-Identifier: GPL-2.0

#include <linux/filter.h>
#include <linux/version.h>
#include <net/sock.h>

__rtun_helper void rtun_helper_sock_put(struct sock *sk)
{
	sock_put(sk);
}

__rtun_helper void rtun_helper_lock_sock(struct sock *sk)
{
	lock_sock(sk);
}

__rtun_helper struct net *rtun_helper_sock_net(const struct sock *sk)
{
	return sock_net(sk);
}

__rtun_helper bool rtun_helper_sock_writeable(const struct sock *sk)
{
	return sock_writeable(sk);
}

__rtun_helper wait_queue_head_t *rtun_helper_sk_sleep(struct sock *sk)
{
	return sk_sleep(sk);
}

/*
 * 7.3's sk_filter_reason(): why the socket's filter refuses the packet
 * (SKB_DROP_REASON_SOCKET_FILTER, _PFMEMALLOC or _SECURITY_HOOK), or
 * SKB_NOT_DROPPED_YET. 6.12 has only sk_filter(), whose refusals 6.12's
 * tun_net_xmit() calls SKB_DROP_REASON_SOCKET_FILTER.
 */
__rtun_helper enum skb_drop_reason rtun_helper_sk_filter_reason(struct sock *sk,
								 struct sk_buff *skb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return sk_filter_reason(sk, skb);
#else
	return sk_filter(sk, skb) ? SKB_DROP_REASON_SOCKET_FILTER : SKB_NOT_DROPPED_YET;
#endif
}

__rtun_helper void rtun_helper_sock_valbool_flag(struct sock *sk, enum sock_flags bit,
						 int valbool)
{
	sock_valbool_flag(sk, bit, valbool);
}
