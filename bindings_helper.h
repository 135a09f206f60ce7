/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rust_tun binds with its own bindgen run: the parts of the kernel that
 * 6.12's `kernel` crate does not bind (netdevice, skbuff, rps, miscdevice,
 * if_tun, ethtool), the one C struct of the module's own (struct rtun_sock)
 * and its parameters (params.h). The helpers of helpers/ are bound from
 * their definitions (Kbuild), their types from here.
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
#include <linux/proc_fs.h>
#include <linux/ptr_ring.h>
#include <linux/signal.h>
#include <linux/skbuff.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <net/hotdata.h>
#include <net/ip_tunnels.h>
#include <net/rps.h>
#include <net/rtnetlink.h>
#include <net/xdp.h>

#include "params.h"

/*
 * One open file's socket, as tun.c's struct tun_file begins: the struct
 * sock first (sk_alloc() allocates the whole, proto.obj_size), then the
 * struct socket that sock_init_data_uid() links it to.
 */
struct rtun_sock {
	struct sock sk;
	struct socket socket;
	/*
	 * IFF_NAPI (tun.c: tfile->napi): the socket's NAPI context, handed
	 * out by sys/sock.rs (Sock::napi); the driver (napi.rs) makes the
	 * socket's write queue its receive queue.
	 */
	struct napi_struct napi;
	/* IFF_NAPI_FRAGS: held while a write fills napi.skb (tun.c: napi_mutex). */
	struct mutex napi_mutex;
};

/*
 * The alignment of an RFS table's memory (helpers/rps.c): 7.3 keeps
 * ilog2(size) in the low five bits of its address (rps_tag_to_log()'s
 * mask, 31), 6.12 a struct rps_sock_flow_table.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
const unsigned long RTUN_RPS_TABLE_ALIGN = 31UL + 1;
#else
const unsigned long RTUN_RPS_TABLE_ALIGN = __alignof__(struct rps_sock_flow_table);
#endif

/*
 * A full-width RCU grace-period cookie (get_state_synchronize_rcu_full()):
 * struct rcu_gp_oldstate on 6.12, struct rcu_gp_seq on 7.3.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
typedef struct rcu_gp_seq rtun_rcu_gp_state;
#else
typedef struct rcu_gp_oldstate rtun_rcu_gp_state;
#endif

/*
 * TUNSETIFF's IFF_BACKPRESSURE (7.3's uapi; 6.12's tun.c has no such flag and
 * ignores the bit): 0 where the kernel lacks it, so that ORing it into
 * TUN_FEATURES and testing it change nothing there.
 */
#ifdef IFF_BACKPRESSURE
const unsigned int RTUN_IFF_BACKPRESSURE = IFF_BACKPRESSURE;
#else
const unsigned int RTUN_IFF_BACKPRESSURE = 0;
#endif


/*
 * Layout facts as clang lays the structs out for C (bindgen evaluates these
 * initialisers with clang; it does not compute them from its own Rust
 * types): sys/layout.rs asserts at compile time that bindgen's types have
 * the same size and field offsets. bindgen 0.71.1 drops a tagged struct
 * used as an anonymous member (-fms-extensions, e.g. socket_lock_t's
 * struct slock_owned): under lockdep its union is 64 bytes larger in C
 * than in Rust, which moved every struct sock field behind sk_lock. One
 * line per type rust_tun embeds, allocates or reads fields of, and per
 * field it reads or writes through bindgen's types.
 */
#define RTUN_SIZEOF(name, type) const unsigned long RTUN_SIZEOF_##name = sizeof(type)
#define RTUN_OFFSETOF(name, type, field) \
	const unsigned long RTUN_OFFSETOF_##name##_##field = offsetof(type, field)
RTUN_SIZEOF(sock, struct sock);
RTUN_SIZEOF(socket, struct socket);
RTUN_SIZEOF(rtun_sock, struct rtun_sock);
RTUN_SIZEOF(socket_lock_t, socket_lock_t);
RTUN_SIZEOF(sk_buff, struct sk_buff);
RTUN_SIZEOF(sk_buff_head, struct sk_buff_head);
RTUN_SIZEOF(net_device, struct net_device);
RTUN_SIZEOF(netdev_queue, struct netdev_queue);
RTUN_SIZEOF(napi_struct, struct napi_struct);
RTUN_SIZEOF(mutex, struct mutex);
RTUN_SIZEOF(wait_queue_head_t, wait_queue_head_t);
RTUN_SIZEOF(wait_queue_entry, struct wait_queue_entry);
RTUN_SIZEOF(rwlock_t, rwlock_t);
RTUN_SIZEOF(spinlock_t, spinlock_t);
RTUN_SIZEOF(timer_list, struct timer_list);
RTUN_SIZEOF(file, struct file);
RTUN_SIZEOF(file_operations, struct file_operations);
RTUN_SIZEOF(miscdevice, struct miscdevice);
RTUN_SIZEOF(proto, struct proto);
RTUN_SIZEOF(proto_ops, struct proto_ops);
RTUN_SIZEOF(net_device_ops, struct net_device_ops);
RTUN_SIZEOF(ethtool_ops, struct ethtool_ops);
RTUN_SIZEOF(rtnl_link_ops, struct rtnl_link_ops);
RTUN_SIZEOF(rtnl_link_stats64, struct rtnl_link_stats64);
RTUN_SIZEOF(ethtool_drvinfo, struct ethtool_drvinfo);
RTUN_SIZEOF(ethtool_link_ksettings, struct ethtool_link_ksettings);
RTUN_SIZEOF(device_attribute, struct device_attribute);
RTUN_SIZEOF(attribute_group, struct attribute_group);
RTUN_SIZEOF(notifier_block, struct notifier_block);
RTUN_SIZEOF(ifreq, struct ifreq);
RTUN_SIZEOF(sockaddr, struct sockaddr);
RTUN_SIZEOF(sock_fprog, struct sock_fprog);
RTUN_SIZEOF(virtio_net_hdr, struct virtio_net_hdr);
RTUN_SIZEOF(tun_pi, struct tun_pi);
RTUN_SIZEOF(iovec, struct iovec);
RTUN_SIZEOF(cpumask, struct cpumask);
RTUN_SIZEOF(ptr_ring, struct ptr_ring);
RTUN_SIZEOF(msghdr, struct msghdr);
RTUN_SIZEOF(tun_msg_ctl, struct tun_msg_ctl);
RTUN_SIZEOF(xdp_buff, struct xdp_buff);
RTUN_OFFSETOF(xdp_buff, struct xdp_buff, data);
RTUN_OFFSETOF(xdp_buff, struct xdp_buff, data_end);
RTUN_OFFSETOF(xdp_buff, struct xdp_buff, data_meta);
RTUN_OFFSETOF(xdp_buff, struct xdp_buff, data_hard_start);
RTUN_OFFSETOF(tun_msg_ctl, struct tun_msg_ctl, ptr);
RTUN_OFFSETOF(ptr_ring, struct ptr_ring, producer_lock);
RTUN_OFFSETOF(ptr_ring, struct ptr_ring, consumer_lock);
RTUN_OFFSETOF(ptr_ring, struct ptr_ring, size);
RTUN_OFFSETOF(msghdr, struct msghdr, msg_iter);
RTUN_OFFSETOF(msghdr, struct msghdr, msg_controllen);
RTUN_OFFSETOF(msghdr, struct msghdr, msg_flags);
RTUN_OFFSETOF(sock, struct sock, sk_socket);
RTUN_OFFSETOF(sock, struct sock, sk_write_queue);
RTUN_OFFSETOF(sock, struct sock, sk_sndbuf);
RTUN_OFFSETOF(sock, struct sock, sk_callback_lock);
RTUN_OFFSETOF(sock, struct sock, sk_write_space);
RTUN_OFFSETOF(sock, struct sock, sk_filter);
RTUN_OFFSETOF(socket, struct socket, file);
RTUN_OFFSETOF(socket, struct socket, ops);
RTUN_OFFSETOF(socket, struct socket, wq);
RTUN_OFFSETOF(rtun_sock, struct rtun_sock, socket);
RTUN_OFFSETOF(rtun_sock, struct rtun_sock, napi);
RTUN_OFFSETOF(rtun_sock, struct rtun_sock, napi_mutex);
RTUN_OFFSETOF(sk_buff, struct sk_buff, len);
RTUN_OFFSETOF(sk_buff, struct sk_buff, data_len);
RTUN_OFFSETOF(sk_buff, struct sk_buff, data);
RTUN_OFFSETOF(sk_buff, struct sk_buff, truesize);
RTUN_OFFSETOF(net_device, struct net_device, flags);
RTUN_OFFSETOF(net_device, struct net_device, mtu);
RTUN_OFFSETOF(net_device, struct net_device, tx_queue_len);
RTUN_OFFSETOF(net_device, struct net_device, netdev_ops);
RTUN_OFFSETOF(net_device, struct net_device, ethtool_ops);
RTUN_OFFSETOF(net_device, struct net_device, header_ops);
RTUN_OFFSETOF(net_device, struct net_device, hard_header_len);
RTUN_OFFSETOF(net_device, struct net_device, hw_enc_features);
RTUN_OFFSETOF(net_device, struct net_device, features);
RTUN_OFFSETOF(net_device, struct net_device, wanted_features);
RTUN_OFFSETOF(net_device, struct net_device, ifindex);
RTUN_OFFSETOF(net_device, struct net_device, sysfs_groups);
RTUN_OFFSETOF(net_device, struct net_device, addr_len);
RTUN_OFFSETOF(net_device, struct net_device, num_tx_queues);
RTUN_OFFSETOF(net_device, struct net_device, name);
RTUN_OFFSETOF(net_device, struct net_device, rtnl_link_ops);
RTUN_OFFSETOF(napi_struct, struct napi_struct, skb);
RTUN_OFFSETOF(file, struct file, private_data);
/*
 * 7.3's UDP-tunnel GSO (tun_vnet.h): the vnet header tun.c parses and fills
 * once a tunnel offload is in play (TUN_VNET_TNL_SIZE is its size), which
 * begins with a struct virtio_net_hdr, and TUNSETOFFLOAD's two flags. 6.12
 * has neither: there the header is the legacy one (its size, 10, is then
 * every parse size) and the flags are 0, so that they are never accepted
 * (an unknown TUNSETOFFLOAD bit is EINVAL, as 6.12's tun.c has it).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
typedef struct virtio_net_hdr_v1_hash_tunnel rtun_vnet_hdr_tnl;
const unsigned int RTUN_TUN_F_UDP_TUNNEL_GSO = TUN_F_UDP_TUNNEL_GSO;
const unsigned int RTUN_TUN_F_UDP_TUNNEL_GSO_CSUM = TUN_F_UDP_TUNNEL_GSO_CSUM;
#else
typedef struct virtio_net_hdr rtun_vnet_hdr_tnl;
const unsigned int RTUN_TUN_F_UDP_TUNNEL_GSO = 0;
const unsigned int RTUN_TUN_F_UDP_TUNNEL_GSO_CSUM = 0;
#endif
/* Its size as clang lays it out (sys/layout.rs). */
RTUN_SIZEOF(rtun_vnet_hdr_tnl, rtun_vnet_hdr_tnl);

/* Constants bindgen cannot evaluate from function-like macros. */
const __poll_t RTUN_EPOLLIN = EPOLLIN;
/* proto_ops.sendmsg/recvmsg flags (tun_sendmsg(), tun_recvmsg()). */
const unsigned int RTUN_MSG_DONTWAIT = MSG_DONTWAIT;
const unsigned int RTUN_MSG_TRUNC = MSG_TRUNC;
const unsigned int RTUN_MSG_ERRQUEUE = MSG_ERRQUEUE;
const unsigned int RTUN_MSG_MORE = MSG_MORE;
const int RTUN_SOL_PACKET = SOL_PACKET;
const int RTUN_TUN_TX_TIMESTAMP = TUN_TX_TIMESTAMP;
const unsigned short RTUN_TUN_MSG_UBUF = TUN_MSG_UBUF;
const unsigned short RTUN_TUN_MSG_PTR = TUN_MSG_PTR;
const __poll_t RTUN_EPOLLRDNORM = EPOLLRDNORM;
const __poll_t RTUN_EPOLLOUT = EPOLLOUT;
const __poll_t RTUN_EPOLLWRNORM = EPOLLWRNORM;
const __poll_t RTUN_EPOLLERR = EPOLLERR;
const __poll_t RTUN_EPOLLWRBAND = EPOLLWRBAND;
const int RTUN_TUN_MINOR = TUN_MINOR;
/* O_ASYNC: the signal and its si_code bands (kill_fasync), the owner type. */
const int RTUN_SIGIO = SIGIO;
/* An enumerator of enum socket_flags on 7.3 (of an anonymous enum on 6.12). */
const unsigned long RTUN_SOCKWQ_ASYNC_NOSPACE = SOCKWQ_ASYNC_NOSPACE;
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
const u64 RTUN_NETIF_F_GSO_UDP_TUNNEL = NETIF_F_GSO_UDP_TUNNEL;
const u64 RTUN_NETIF_F_GSO_UDP_TUNNEL_CSUM = NETIF_F_GSO_UDP_TUNNEL_CSUM;
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
const unsigned int RTUN_NETREG_UNREGISTERING = NETREG_UNREGISTERING;
const unsigned int RTUN_TASK_INTERRUPTIBLE = TASK_INTERRUPTIBLE;
const unsigned int RTUN_TASK_RUNNING = TASK_RUNNING;
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
const unsigned long RTUN_NETDEV_ALIGN = NETDEV_ALIGN;
const unsigned long RTUN_SKB_SHINFO_SIZE = SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
const unsigned int RTUN_NET_IP_ALIGN = NET_IP_ALIGN;
const unsigned int RTUN_XDP_PACKET_HEADROOM = XDP_PACKET_HEADROOM;
const u32 RTUN_XDP_ABORTED = XDP_ABORTED;
const u32 RTUN_XDP_DROP = XDP_DROP;
const u32 RTUN_XDP_PASS = XDP_PASS;
const u32 RTUN_XDP_TX = XDP_TX;
const u32 RTUN_XDP_REDIRECT = XDP_REDIRECT;
const int RTUN_XDP_SETUP_PROG = XDP_SETUP_PROG;
const u32 RTUN_NETDEV_XDP_ACT_BASIC = NETDEV_XDP_ACT_BASIC;
const u32 RTUN_NETDEV_XDP_ACT_REDIRECT = NETDEV_XDP_ACT_REDIRECT;
const u32 RTUN_NETDEV_XDP_ACT_NDO_XMIT = NETDEV_XDP_ACT_NDO_XMIT;
const int RTUN_SOCK_XDP = SOCK_XDP;
const u32 RTUN_XDP_XMIT_FLUSH = XDP_XMIT_FLUSH;
const u32 RTUN_XDP_XMIT_FLAGS_MASK = XDP_XMIT_FLAGS_MASK;
/*
 * NET_SKB_PAD (skbuff.h, unless the architecture defines its own) is
 * max(32, L1_CACHE_BYTES), and max() a statement expression, which a
 * constant cannot hold: evaluated here, last, with max() as minmax.h's
 * constant-expression MAX().
 */
#undef max
#define max(x, y) MAX(x, y)
const unsigned int RTUN_NET_SKB_PAD = NET_SKB_PAD;
