/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rust_tun binds with its own bindgen run: the parts of the kernel that
 * 6.12's `kernel` crate does not bind (netdevice, skbuff, rps, miscdevice,
 * if_tun, ethtool) and the C shims in tun_helpers.h.
 */
#include <linux/compat.h>
#include <linux/debugfs.h>
#include <linux/filter.h>
#include <linux/if_link.h>
#include <linux/seq_file.h>
#include <linux/sockios.h>
#include <linux/sysfs.h>
#include <net/sock.h>
#include <linux/virtio_net.h>
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
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/signal.h>
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
const __poll_t RTUN_EPOLLWRBAND = EPOLLWRBAND;
const int RTUN_TUN_MINOR = TUN_MINOR;
/* O_ASYNC: the signal and its si_code bands (kill_fasync), the owner type. */
const int RTUN_SIGIO = SIGIO;
const int RTUN_POLL_IN = POLL_IN;
const int RTUN_POLL_OUT = POLL_OUT;
const int RTUN_PIDTYPE_TGID = PIDTYPE_TGID;
#ifdef CONFIG_COMPAT
const unsigned long RTUN_COMPAT_IFREQ_SIZE = sizeof(struct compat_ifreq);
#endif
const unsigned long RTUN_NETDEV_PRE_TYPE_CHANGE = NETDEV_PRE_TYPE_CHANGE;
const unsigned long RTUN_NETDEV_POST_TYPE_CHANGE = NETDEV_POST_TYPE_CHANGE;
const unsigned int RTUN_SOCK_IOC_TYPE = SOCK_IOC_TYPE;
const unsigned short RTUN_S_IRUGO = S_IRUGO;
/* Device features (netdev_features_t bits from __NETIF_F()). */
const u64 RTUN_NETIF_F_SG = NETIF_F_SG;
const u64 RTUN_NETIF_F_FRAGLIST = NETIF_F_FRAGLIST;
const u64 RTUN_NETIF_F_HW_CSUM = NETIF_F_HW_CSUM;
const u64 RTUN_NETIF_F_TSO = NETIF_F_TSO;
const u64 RTUN_NETIF_F_TSO6 = NETIF_F_TSO6;
const u64 RTUN_NETIF_F_TSO_ECN = NETIF_F_TSO_ECN;
const u64 RTUN_NETIF_F_GSO_UDP_L4 = NETIF_F_GSO_UDP_L4;
const u64 RTUN_NETIF_F_HW_VLAN_CTAG_TX = NETIF_F_HW_VLAN_CTAG_TX;
const u64 RTUN_NETIF_F_HW_VLAN_STAG_TX = NETIF_F_HW_VLAN_STAG_TX;
const u64 RTUN_NETIF_F_HIGHDMA = NETIF_F_HIGHDMA;
const u64 RTUN_NETIF_F_GSO_SOFTWARE = NETIF_F_GSO_SOFTWARE;
const u64 RTUN_NETIF_F_GSO_ENCAP_ALL = NETIF_F_GSO_ENCAP_ALL;
/* ethtool_ops.supported_coalesce_params (BIT()). */
const u32 RTUN_ETHTOOL_COALESCE_RX_MAX_FRAMES = ETHTOOL_COALESCE_RX_MAX_FRAMES;
const unsigned int RTUN_IFF_UP = IFF_UP;
/* netif_msg_enable_bits (TUNSETDEBUG, ethtool msglvl). */
const u32 RTUN_NETIF_MSG_DRV = NETIF_MSG_DRV;
const unsigned int RTUN_IFF_POINTOPOINT = IFF_POINTOPOINT;
const unsigned int RTUN_IFF_NOARP = IFF_NOARP;
const unsigned int RTUN_IFF_MULTICAST = IFF_MULTICAST;
const unsigned int RTUN_IFF_TX_SKB_SHARING = IFF_TX_SKB_SHARING;
const unsigned int RTUN_IFF_LIVE_ADDR_CHANGE = IFF_LIVE_ADDR_CHANGE;
const unsigned int RTUN_IFF_NO_QUEUE = IFF_NO_QUEUE;
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
 * cannot take: sys/inline.rs computes it from this. */
const unsigned int RTUN_L1_CACHE_BYTES = L1_CACHE_BYTES;
const unsigned long RTUN_NETDEV_ALIGN = NETDEV_ALIGN;
const unsigned long RTUN_SKB_SHINFO_SIZE = SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
const unsigned int RTUN_NET_IP_ALIGN = NET_IP_ALIGN;
const unsigned int RTUN_SKBFL_ZEROCOPY_ENABLE = SKBFL_ZEROCOPY_ENABLE;
const unsigned int RTUN_SKBTX_SW_TSTAMP = SKBTX_SW_TSTAMP;
/*
 * The fields sys/inline.rs reads and writes in place, as C's inline functions
 * do: each one's offset and size, so that the Rust side checks the size of
 * the type it uses at compile time (sys::inline::CField).
 */
#define RTUN_FIELD(name, type, member)					\
	const unsigned long RTUN_##name = offsetof(type, member);	\
	const unsigned long RTUN_##name##_SIZE = sizeof_field(type, member)

RTUN_FIELD(SKB_LEN, struct sk_buff, len);
RTUN_FIELD(SKB_DATA_LEN, struct sk_buff, data_len);
RTUN_FIELD(SKB_DATA, struct sk_buff, data);
RTUN_FIELD(SKB_HEAD, struct sk_buff, head);
RTUN_FIELD(SKB_END, struct sk_buff, end);
RTUN_FIELD(SKB_DESTRUCTOR, struct sk_buff, destructor);
RTUN_FIELD(SKB_QUEUE_MAPPING, struct sk_buff, queue_mapping);
RTUN_FIELD(SKB_PROTOCOL, struct sk_buff, protocol);
RTUN_FIELD(SKB_DEV, struct sk_buff, dev);
RTUN_FIELD(SHINFO_FLAGS, struct skb_shared_info, flags);
RTUN_FIELD(SHINFO_TX_FLAGS, struct skb_shared_info, tx_flags);
RTUN_FIELD(IOV_ITER_COUNT, struct iov_iter, count);
RTUN_FIELD(WQ_HEAD_NEXT, struct wait_queue_head, head.next);
RTUN_FIELD(NETDEV_TX_QUEUE_LEN, struct net_device, tx_queue_len);
RTUN_FIELD(NETDEV_FLAGS, struct net_device, flags);
RTUN_FIELD(NETDEV_REG_STATE, struct net_device, reg_state);
RTUN_FIELD(NETDEV_NAME, struct net_device, name);
RTUN_FIELD(NETDEV_TYPE, struct net_device, type);
RTUN_FIELD(NETDEV_ADDR_LEN, struct net_device, addr_len);
RTUN_FIELD(NETDEV_IFINDEX, struct net_device, ifindex);
RTUN_FIELD(NETDEV_FEATURES, struct net_device, features);
RTUN_FIELD(NETDEV_HW_FEATURES, struct net_device, hw_features);
RTUN_FIELD(NETDEV_WANTED_FEATURES, struct net_device, wanted_features);
RTUN_FIELD(NETDEV_VLAN_FEATURES, struct net_device, vlan_features);
RTUN_FIELD(NETDEV_TSTATS, struct net_device, tstats);
RTUN_FIELD(NETDEV_TX, struct net_device, _tx);
RTUN_FIELD(NETDEV_QUEUE_TRANS_START, struct netdev_queue, trans_start);
const unsigned long RTUN_NETDEV_QUEUE_SIZE = sizeof(struct netdev_queue);
RTUN_FIELD(SPINLOCK_LOCKED, spinlock_t, rlock.raw_lock.locked);
RTUN_FIELD(SW_NETSTATS_RX_PACKETS, struct pcpu_sw_netstats, rx_packets);
RTUN_FIELD(SW_NETSTATS_RX_BYTES, struct pcpu_sw_netstats, rx_bytes);
RTUN_FIELD(SW_NETSTATS_TX_PACKETS, struct pcpu_sw_netstats, tx_packets);
RTUN_FIELD(SW_NETSTATS_TX_BYTES, struct pcpu_sw_netstats, tx_bytes);
/* u64_stats_sync is empty on 64-bit, so u64_stats_add() is local64_add(). */
_Static_assert(sizeof(struct u64_stats_sync) == 0, "u64_stats_sync is not empty");
RTUN_FIELD(SOCK_FILTER, struct sock, sk_filter);
RTUN_FIELD(SOCK_WQ, struct sock, sk_wq);
RTUN_FIELD(SOCK_SNDBUF, struct sock, sk_sndbuf);
RTUN_FIELD(SOCK_WMEM_ALLOC, struct sock, sk_wmem_alloc);
RTUN_FIELD(SKB_VLAN_ALL, struct sk_buff, vlan_all);
RTUN_FIELD(SKB_VLAN_PROTO, struct sk_buff, vlan_proto);
RTUN_FIELD(SKB_VLAN_TCI, struct sk_buff, vlan_tci);
/* virtio_net_hdr_from_skb(): the checksum's place, ip_summed, the shared
 * info's GSO fields. */
RTUN_FIELD(SKB_CSUM_START, struct sk_buff, csum_start);
RTUN_FIELD(SKB_TAIL, struct sk_buff, tail);
/* skb lists (struct sk_buff_head): the head's next/prev are an skb's (the
 * list is circular through the head), as skbuff.h's own cast assumes. */
RTUN_FIELD(SKB_NEXT, struct sk_buff, next);
RTUN_FIELD(SKB_PREV, struct sk_buff, prev);
RTUN_FIELD(SKB_HEAD_QLEN, struct sk_buff_head, qlen);
RTUN_FIELD(SKB_HEAD_LOCK, struct sk_buff_head, lock);
static_assert(offsetof(struct sk_buff_head, next) == offsetof(struct sk_buff, next) &&
	      offsetof(struct sk_buff_head, prev) == offsetof(struct sk_buff, prev));
RTUN_FIELD(SOCK_WRITE_QUEUE, struct sock, sk_write_queue);
RTUN_FIELD(RTUN_SOCK_NAPI, struct rtun_sock, napi);
RTUN_FIELD(SKB_MAC_HEADER, struct sk_buff, mac_header);
RTUN_FIELD(SKB_NETWORK_HEADER, struct sk_buff, network_header);
RTUN_FIELD(SKB_TRANSPORT_HEADER, struct sk_buff, transport_header);
RTUN_FIELD(PCPU_HOT_PREEMPT_COUNT, struct pcpu_hot, preempt_count);
RTUN_FIELD(SKB_CSUM_OFFSET, struct sk_buff, csum_offset);
/* ip_summed: the byte at __pkt_type_offset holds pkt_type:3, ignore_df:1,
 * dst_pending_confirm:1, ip_summed:2, ooo_okay:1, allocated from either end
 * by the bitfield order (as the kernel's PKT_TYPE_MAX); the module checks
 * this against bindgen's accessor for the headers group when it loads. */
const unsigned long RTUN_SKB_PKT_TYPE_OFFSET = offsetof(struct sk_buff, __pkt_type_offset);
#ifdef __BIG_ENDIAN_BITFIELD
const unsigned int RTUN_SKB_IP_SUMMED_SHIFT = 1;
#else
const unsigned int RTUN_SKB_IP_SUMMED_SHIFT = 5;
#endif
RTUN_FIELD(SKB_HEADERS, struct sk_buff, headers);
RTUN_FIELD(SHINFO_GSO_SIZE, struct skb_shared_info, gso_size);
RTUN_FIELD(SHINFO_GSO_TYPE, struct skb_shared_info, gso_type);
const unsigned int RTUN_SKB_GSO_TCPV4 = SKB_GSO_TCPV4;
const unsigned int RTUN_SKB_GSO_TCPV6 = SKB_GSO_TCPV6;
const unsigned int RTUN_SKB_GSO_UDP_L4 = SKB_GSO_UDP_L4;
const unsigned int RTUN_SKB_GSO_TCP_ECN = SKB_GSO_TCP_ECN;
const unsigned int RTUN_CHECKSUM_UNNECESSARY = CHECKSUM_UNNECESSARY;
const unsigned int RTUN_CHECKSUM_PARTIAL = CHECKSUM_PARTIAL;
/* socket_wq.wait: "wait MUST be first field of socket_wq" (linux/net.h). */
_Static_assert(offsetof(struct socket_wq, wait) == 0, "socket_wq.wait is not first");
#ifdef CONFIG_PCPU_DEV_REFCNT
RTUN_FIELD(NETDEV_PCPU_REFCNT, struct net_device, pcpu_refcnt);
#endif
RTUN_FIELD(PCPU_HOT_CPU_NUMBER, struct pcpu_hot, cpu_number);
RTUN_FIELD(NET_HOTDATA_RPS_SOCK_FLOW_TABLE, struct net_hotdata, rps_sock_flow_table);
RTUN_FIELD(NET_HOTDATA_RPS_CPU_MASK, struct net_hotdata, rps_cpu_mask);
/* A flexible array: its offset, and the size of an element. */
const unsigned long RTUN_NETDEV_PRIV = offsetof(struct net_device, priv);
const unsigned long RTUN_NETDEV_PRIV_SIZE = sizeof(((struct net_device *)0)->priv[0]);
const unsigned int RTUN_SKB_DROP_REASON_NOT_SPECIFIED = SKB_DROP_REASON_NOT_SPECIFIED;
const unsigned int RTUN_SOFTIRQ_DISABLE_OFFSET = SOFTIRQ_DISABLE_OFFSET;
