// SPDX-License-Identifier: GPL-2.0

#include <linux/version.h>
#include <linux/virtio_net.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
/*
 * 7.3's tun.c applies and fills the vnet header through tun_vnet.h's
 * tun_vnet_hdr_tnl_to_skb() and tun_vnet_hdr_tnl_from_skb(): these two,
 * which handle the plain header too (no tunnel GSO type, or an skb without
 * one).
 */
__rtun_helper int
rtun_helper_virtio_net_hdr_tnl_to_skb(struct sk_buff *skb,
				      const struct virtio_net_hdr_v1_hash_tunnel *vhdr,
				      bool tnl_hdr_negotiated, bool tnl_csum_negotiated,
				      bool little_endian)
{
	return virtio_net_hdr_tnl_to_skb(skb, vhdr, tnl_hdr_negotiated, tnl_csum_negotiated,
					 little_endian);
}

__rtun_helper int
rtun_helper_virtio_net_hdr_tnl_from_skb(const struct sk_buff *skb,
					struct virtio_net_hdr_v1_hash_tunnel *vhdr,
					bool tnl_hdr_negotiated, bool little_endian, int vlan_hlen,
					bool has_data_valid, bool feature_hdrlen)
{
	return virtio_net_hdr_tnl_from_skb(skb, vhdr, tnl_hdr_negotiated, little_endian, vlan_hlen,
					   has_data_valid, feature_hdrlen);
}
#else
/*
 * 6.12 has no tunnel header (bindings_helper.h's rtun_vnet_hdr_tnl is the
 * legacy one there) and its tun.c calls the plain two; the tunnel arguments
 * are never true on 6.12 (no TUN_F_UDP_TUNNEL_GSO) and unused.
 */
__rtun_helper int rtun_helper_virtio_net_hdr_tnl_to_skb(struct sk_buff *skb,
						       const struct virtio_net_hdr *vhdr,
						       bool tnl_hdr_negotiated,
						       bool tnl_csum_negotiated,
						       bool little_endian)
{
	return virtio_net_hdr_to_skb(skb, vhdr, little_endian);
}

__rtun_helper int rtun_helper_virtio_net_hdr_tnl_from_skb(const struct sk_buff *skb,
							 struct virtio_net_hdr *vhdr,
							 bool tnl_hdr_negotiated,
							 bool little_endian, int vlan_hlen,
							 bool has_data_valid,
							 bool feature_hdrlen)
{
	return virtio_net_hdr_from_skb(skb, vhdr, little_endian, has_data_valid, vlan_hlen);
}
#endif
