// SPDX-License-Identifier: GPL-2.0

#include <net/netlink.h>

__rtun_helper int rtun_helper_nla_put_u8(struct sk_buff *skb, int attrtype, u8 value)
{
	return nla_put_u8(skb, attrtype, value);
}

__rtun_helper int rtun_helper_nla_put_u32(struct sk_buff *skb, int attrtype, u32 value)
{
	return nla_put_u32(skb, attrtype, value);
}

__rtun_helper int rtun_helper_nla_len(const struct nlattr *nla)
{
	return nla_len(nla);
}

__rtun_helper void *rtun_helper_nla_data(const struct nlattr *nla)
{
	return nla_data(nla);
}
