// SPDX-License-Identifier: GPL-2.0
/*
 * rust_tun_vhost.ko: tun.ko's exports (include/linux/if_tun.h) for the
 * modules that link against tun.ko -- vhost_net.ko -- served by rust_tun.
 * Load it instead of tun.ko (it cannot load beside it: the names are
 * tun.ko's); vhost_net.ko then finds rust_tun's files, sockets and rings.
 * Documentation/rust_tun.rst, "vhost-net".
 */
#include <linux/if_tun.h>
#include <linux/module.h>
#include <linux/skb_array.h>
#include <linux/version.h>
#include <net/xdp.h>
#include "tun_exports.h"

struct socket *tun_get_socket(struct file *file)
{
	return rtun_get_socket(file);
}
EXPORT_SYMBOL_GPL(tun_get_socket);

struct ptr_ring *tun_get_tx_ring(struct file *file)
{
	return rtun_get_tx_ring(file);
}
EXPORT_SYMBOL_GPL(tun_get_tx_ring);

/*
 * tun.c's tun_ptr_free(): frees a ring entry its user did not hand back.
 * rust_tun queues no xdp_frame (it has no XDP), so its entries are skbs;
 * the xdp_frame case stays as tun.c has it, for the encoding's sake.
 */
void tun_ptr_free(void *ptr)
{
	if (!ptr)
		return;
	if (tun_is_xdp_frame(ptr)) {
		struct xdp_frame *xdpf = tun_ptr_to_xdp(ptr);

		xdp_return_frame(xdpf);
	} else {
		__skb_array_destroy_skb(ptr);
	}
}
EXPORT_SYMBOL_GPL(tun_ptr_free);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
/* Callers must hold the ring's consumer_lock (tun.c). */
void tun_wake_queue(struct file *file, int consumed)
{
	rtun_wake_queue(file, consumed);
}
EXPORT_SYMBOL_GPL(tun_wake_queue);
#endif

MODULE_DESCRIPTION("tun.ko's exports for vhost-net, served by rust_tun");
MODULE_LICENSE("GPL");
