/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rust_tun binds with its own bindgen run: the parts of the kernel that
 * 6.12's `kernel` crate does not bind (netdevice, skbuff, rps, miscdevice,
 * if_tun, ethtool) and the C shims in tun_helpers.h.
 */
#include <linux/debugfs.h>
#include <linux/slab.h>
#include <linux/etherdevice.h>
#include <linux/jump_label.h>
#include <linux/timer.h>
#include <linux/ethtool.h>
#include <linux/fs.h>
#include <linux/if_arp.h>
#include <linux/if_tun.h>
#include <linux/miscdevice.h>
#include <linux/netdevice.h>
#include <linux/poll.h>
#include <linux/skbuff.h>
#include <linux/uio.h>
#include <net/hotdata.h>
#include <net/rps.h>
#include <net/rtnetlink.h>

#include "tun_helpers.h"

/* Constants bindgen cannot evaluate from function-like macros. */
const __poll_t RTUN_EPOLLIN = EPOLLIN;
const __poll_t RTUN_EPOLLRDNORM = EPOLLRDNORM;
const __poll_t RTUN_EPOLLOUT = EPOLLOUT;
const __poll_t RTUN_EPOLLWRNORM = EPOLLWRNORM;
const __poll_t RTUN_EPOLLERR = EPOLLERR;
const unsigned int RTUN_IFF_UP = IFF_UP;
const unsigned int RTUN_IFF_POINTOPOINT = IFF_POINTOPOINT;
const unsigned int RTUN_IFF_NOARP = IFF_NOARP;
const unsigned int RTUN_IFF_MULTICAST = IFF_MULTICAST;
const unsigned int RTUN_IFF_TX_SKB_SHARING = IFF_TX_SKB_SHARING;
const unsigned int RTUN_IFF_LIVE_ADDR_CHANGE = IFF_LIVE_ADDR_CHANGE;
const int RTUN_IOCB_NOWAIT = IOCB_NOWAIT;
const unsigned int RTUN_NETREG_REGISTERED = NETREG_REGISTERED;
const int RTUN_TASK_INTERRUPTIBLE = TASK_INTERRUPTIBLE;
const gfp_t RTUN_GFP_KERNEL = GFP_KERNEL;
const unsigned long RTUN_HZ = HZ;
const unsigned long RTUN_NETDEV_CHANGE_TX_QUEUE_LEN = NETDEV_CHANGE_TX_QUEUE_LEN;
const int RTUN_NOTIFY_DONE = NOTIFY_DONE;
const int RTUN_NOTIFY_BAD = NOTIFY_BAD;
const unsigned long RTUN_NETDEV_UP = NETDEV_UP;
const unsigned long RTUN_NETDEV_REGISTER = NETDEV_REGISTER;
const unsigned long RTUN_NETDEV_UNREGISTER = NETDEV_UNREGISTER;
const unsigned long RTUN_NETDEV_CHANGENAME = NETDEV_CHANGENAME;
const gfp_t RTUN_GFP_ATOMIC = GFP_ATOMIC;
const fmode_t RTUN_FMODE_NOWAIT = FMODE_NOWAIT;
const unsigned long RTUN_KMALLOC_MAX_SIZE = KMALLOC_MAX_SIZE;
const unsigned long RTUN_PAGE_SIZE = PAGE_SIZE;
const unsigned int RTUN_PAGE_ALLOC_COSTLY_ORDER = PAGE_ALLOC_COSTLY_ORDER;
const unsigned int RTUN_MAX_SKB_FRAGS = MAX_SKB_FRAGS;
/* NET_SKB_PAD is max(32, L1_CACHE_BYTES), a statement expression bindgen
 * cannot take at file scope; rtun_skb_reserve() asserts the two agree. */
const unsigned int RTUN_NET_SKB_PAD = L1_CACHE_BYTES > 32 ? L1_CACHE_BYTES : 32;
const unsigned long RTUN_SKB_SHINFO_SIZE = SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
const unsigned int RTUN_NET_IP_ALIGN = NET_IP_ALIGN;
const unsigned int RTUN_SKBFL_ZEROCOPY_ENABLE = SKBFL_ZEROCOPY_ENABLE;
const unsigned int RTUN_SKBTX_SW_TSTAMP = SKBTX_SW_TSTAMP;
/* Field offsets for the inline readers in sys.rs (C reads these inline). */
const unsigned long RTUN_NETDEV_PRIV = offsetof(struct net_device, priv);
#ifdef CONFIG_PCPU_DEV_REFCNT
const unsigned long RTUN_NETDEV_PCPU_REFCNT = offsetof(struct net_device, pcpu_refcnt);
#endif
const unsigned long RTUN_SKB_DESTRUCTOR = offsetof(struct sk_buff, destructor);
const unsigned int RTUN_SKB_DROP_REASON_NOT_SPECIFIED = SKB_DROP_REASON_NOT_SPECIFIED;
const unsigned long RTUN_SKB_LEN = offsetof(struct sk_buff, len);
const unsigned long RTUN_SKB_DATA_LEN = offsetof(struct sk_buff, data_len);
const unsigned long RTUN_SKB_DATA = offsetof(struct sk_buff, data);
const unsigned long RTUN_SKB_HEAD = offsetof(struct sk_buff, head);
const unsigned long RTUN_SKB_END = offsetof(struct sk_buff, end);
const unsigned long RTUN_SHINFO_FLAGS = offsetof(struct skb_shared_info, flags);
const unsigned long RTUN_SHINFO_TX_FLAGS = offsetof(struct skb_shared_info, tx_flags);
const unsigned long RTUN_SKB_QUEUE_MAPPING = offsetof(struct sk_buff, queue_mapping);
const unsigned long RTUN_SKB_PROTOCOL = offsetof(struct sk_buff, protocol);
const unsigned long RTUN_IOV_ITER_COUNT = offsetof(struct iov_iter, count);
const unsigned long RTUN_WQ_HEAD = offsetof(struct wait_queue_head, head);
#ifdef CONFIG_X86_64
const unsigned long RTUN_PCPU_HOT_CPU_NUMBER = offsetof(struct pcpu_hot, cpu_number);
#endif
#ifdef CONFIG_RPS
const unsigned long RTUN_NET_HOTDATA_RPS_SOCK_FLOW_TABLE =
	offsetof(struct net_hotdata, rps_sock_flow_table);
const unsigned long RTUN_NET_HOTDATA_RPS_CPU_MASK = offsetof(struct net_hotdata, rps_cpu_mask);
#endif
