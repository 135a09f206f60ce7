// SPDX-License-Identifier: GPL-2.0

#include <linux/virtio_net.h>

__rtun_helper int rtun_helper_virtio_net_hdr_to_skb(struct sk_buff *skb,
						   const struct virtio_net_hdr *hdr,
						   bool little_endian)
{
	return virtio_net_hdr_to_skb(skb, hdr, little_endian);
}

__rtun_helper int rtun_helper_virtio_net_hdr_from_skb(const struct sk_buff *skb,
						     struct virtio_net_hdr *hdr,
						     bool little_endian, bool has_data_valid,
						     int vlan_hlen)
{
	return virtio_net_hdr_from_skb(skb, hdr, little_endian, has_data_valid, vlan_hlen);
}
