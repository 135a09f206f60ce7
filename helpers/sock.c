// SPDX-License-Identifier: GPL-2.0

#include <linux/filter.h>
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

__rtun_helper int rtun_helper_sk_filter(struct sock *sk, struct sk_buff *skb)
{
	return sk_filter(sk, skb);
}
