// SPDX-License-Identifier: GPL-2.0

#include <linux/if_vlan.h>
#include <linux/skbuff.h>
#include <linux/if_tun.h>
#include <linux/version.h>
#include <net/xdp.h>

__rtun_helper void rtun_helper_kfree_skb(struct sk_buff *skb)
{
	kfree_skb(skb);
}

__rtun_helper void rtun_helper_kfree_skb_reason(struct sk_buff *skb,
						enum skb_drop_reason reason)
{
	kfree_skb_reason(skb, reason);
}

/* An exported function with CONFIG_TRACEPOINTS, kfree_skb() without. */
__rtun_helper void rtun_helper_consume_skb(struct sk_buff *skb)
{
	consume_skb(skb);
}

__rtun_helper unsigned int rtun_helper_skb_headlen(const struct sk_buff *skb)
{
	return skb_headlen(skb);
}

__rtun_helper bool rtun_helper_pskb_may_pull(struct sk_buff *skb, unsigned int len)
{
	return pskb_may_pull(skb, len);
}

__rtun_helper void rtun_helper_skb_reserve(struct sk_buff *skb, int len)
{
	skb_reserve(skb, len);
}

__rtun_helper int rtun_helper___skb_grow(struct sk_buff *skb, unsigned int len)
{
	return __skb_grow(skb, len);
}

__rtun_helper void rtun_helper_skb_reset_mac_header(struct sk_buff *skb)
{
	skb_reset_mac_header(skb);
}

__rtun_helper void rtun_helper_skb_reset_network_header(struct sk_buff *skb)
{
	skb_reset_network_header(skb);
}

__rtun_helper void rtun_helper_skb_set_network_header(struct sk_buff *skb, const int offset)
{
	skb_set_network_header(skb, offset);
}

__rtun_helper void rtun_helper_skb_probe_transport_header(struct sk_buff *skb)
{
	skb_probe_transport_header(skb);
}

__rtun_helper void rtun_helper_skb_record_rx_queue(struct sk_buff *skb, u16 rx_queue)
{
	skb_record_rx_queue(skb, rx_queue);
}

__rtun_helper u16 rtun_helper_skb_get_queue_mapping(const struct sk_buff *skb)
{
	return skb_get_queue_mapping(skb);
}

__rtun_helper u32 rtun_helper___skb_get_hash_symmetric(const struct sk_buff *skb)
{
	return __skb_get_hash_symmetric(skb);
}

__rtun_helper bool rtun_helper_skb_vlan_tag_present(const struct sk_buff *skb)
{
	return skb_vlan_tag_present(skb);
}

__rtun_helper u16 rtun_helper_skb_vlan_tag_get(const struct sk_buff *skb)
{
	return skb_vlan_tag_get(skb);
}

__rtun_helper void rtun_helper_skb_orphan(struct sk_buff *skb)
{
	skb_orphan(skb);
}

__rtun_helper int rtun_helper_skb_orphan_frags_rx(struct sk_buff *skb, gfp_t gfp_mask)
{
	return skb_orphan_frags_rx(skb, gfp_mask);
}

__rtun_helper void rtun_helper_skb_tx_timestamp(struct sk_buff *skb)
{
	skb_tx_timestamp(skb);
}

__rtun_helper void rtun_helper_nf_reset_ct(struct sk_buff *skb)
{
	nf_reset_ct(skb);
}

__rtun_helper void *rtun_helper_netdev_alloc_frag(unsigned int fragsz)
{
	return netdev_alloc_frag(fragsz);
}

__rtun_helper void rtun_helper_skb_fill_page_desc(struct sk_buff *skb, int i, struct page *page,
						 int off, int size)
{
	skb_fill_page_desc(skb, i, page, off, size);
}

/* skb lists (struct sk_buff_head) */

__rtun_helper void rtun_helper___skb_queue_head_init(struct sk_buff_head *list)
{
	__skb_queue_head_init(list);
}

__rtun_helper u32 rtun_helper_skb_queue_len(const struct sk_buff_head *list)
{
	return skb_queue_len(list);
}

__rtun_helper int rtun_helper_skb_queue_empty(const struct sk_buff_head *list)
{
	return skb_queue_empty(list);
}

__rtun_helper void rtun_helper___skb_queue_tail(struct sk_buff_head *list, struct sk_buff *newsk)
{
	__skb_queue_tail(list, newsk);
}

__rtun_helper struct sk_buff *rtun_helper___skb_dequeue(struct sk_buff_head *list)
{
	return __skb_dequeue(list);
}

__rtun_helper void rtun_helper_skb_queue_splice(const struct sk_buff_head *list,
					       struct sk_buff_head *head)
{
	skb_queue_splice(list, head);
}

__rtun_helper void rtun_helper_skb_queue_splice_tail_init(struct sk_buff_head *list,
							 struct sk_buff_head *head)
{
	skb_queue_splice_tail_init(list, head);
}

__rtun_helper void rtun_helper_skb_queue_purge(struct sk_buff_head *list)
{
	skb_queue_purge(list);
}

__rtun_helper void rtun_helper_skb_metadata_set(struct sk_buff *skb, u8 meta_len)
{
	skb_metadata_set(skb, meta_len);
}

/*
 * Where a vhost-net TUN_MSG_PTR buffer keeps its virtio-net header and its
 * size (tun_xdp_one()): 6.12 puts a struct tun_xdp_hdr (buflen, then the
 * header) at data_hard_start; 7.3 the header itself, its size in frame_sz.
 */
__rtun_helper void *rtun_helper_tun_xdp_gso(const struct xdp_buff *xdp)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return xdp->data_hard_start;
#else
	return &((struct tun_xdp_hdr *)xdp->data_hard_start)->gso;
#endif
}

__rtun_helper int rtun_helper_tun_xdp_buflen(const struct xdp_buff *xdp)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return xdp->frame_sz;
#else
	return ((struct tun_xdp_hdr *)xdp->data_hard_start)->buflen;
#endif
}

__rtun_helper int rtun_helper_pskb_trim(struct sk_buff *skb, unsigned int len)
{
	return pskb_trim(skb, len);
}

__rtun_helper unsigned int rtun_helper_skb_data_align(unsigned int x)
{
	return SKB_DATA_ALIGN(x);
}
