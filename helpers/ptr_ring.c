// SPDX-License-Identifier: GPL-2.0

#include <linux/if_tun.h>
#include <linux/ptr_ring.h>
#include <linux/skb_array.h>
#include <linux/version.h>

__rtun_helper int rtun_helper_ptr_ring_init(struct ptr_ring *r, int size, gfp_t gfp)
{
	return ptr_ring_init(r, size, gfp);
}

__rtun_helper void rtun_helper_ptr_ring_cleanup(struct ptr_ring *r, void (*destroy)(void *))
{
	ptr_ring_cleanup(r, destroy);
}

__rtun_helper int rtun_helper_ptr_ring_produce(struct ptr_ring *r, void *ptr)
{
	return ptr_ring_produce(r, ptr);
}

__rtun_helper int rtun_helper___ptr_ring_produce(struct ptr_ring *r, void *ptr)
{
	return __ptr_ring_produce(r, ptr);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
__rtun_helper int rtun_helper___ptr_ring_check_produce(struct ptr_ring *r)
{
	return __ptr_ring_check_produce(r);
}
#endif

__rtun_helper void *rtun_helper___ptr_ring_consume(struct ptr_ring *r)
{
	return __ptr_ring_consume(r);
}

__rtun_helper void *rtun_helper___ptr_ring_peek(struct ptr_ring *r)
{
	return __ptr_ring_peek(r);
}

__rtun_helper bool rtun_helper___ptr_ring_empty(struct ptr_ring *r)
{
	return __ptr_ring_empty(r);
}

__rtun_helper void **rtun_helper___ptr_ring_init_queue_alloc(unsigned int size, gfp_t gfp)
{
	return alloc_hooks(__ptr_ring_init_queue_alloc_noprof(size, gfp));
}

__rtun_helper void **rtun_helper___ptr_ring_swap_queue(struct ptr_ring *r, void **queue,
						       int size, gfp_t gfp,
						       void (*destroy)(void *))
{
	return __ptr_ring_swap_queue(r, queue, size, gfp, destroy);
}

__rtun_helper int rtun_helper___skb_array_len_with_tag(struct sk_buff *skb)
{
	return __skb_array_len_with_tag(skb);
}

/*
 * The entry encoding of tun's rings, which vhost-net decodes too
 * (<linux/if_tun.h>): an xdp_frame pointer with TUN_XDP_FLAG set, an
 * sk_buff pointer as it is.
 */
__rtun_helper bool rtun_helper_tun_is_xdp_frame(void *ptr)
{
	return tun_is_xdp_frame(ptr);
}

__rtun_helper void *rtun_helper_tun_xdp_to_ptr(struct xdp_frame *xdp)
{
	return tun_xdp_to_ptr(xdp);
}

__rtun_helper struct xdp_frame *rtun_helper_tun_ptr_to_xdp(void *ptr)
{
	return tun_ptr_to_xdp(ptr);
}
