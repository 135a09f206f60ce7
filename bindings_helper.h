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
#include <linux/signal.h>
#include <linux/skbuff.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <net/hotdata.h>
#include <net/ip_tunnels.h>
#include <net/rps.h>
#include <net/rtnetlink.h>

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
const unsigned long RTUN_SIZEOF_sock = sizeof(struct sock);
const unsigned long RTUN_SIZEOF_socket = sizeof(struct socket);
const unsigned long RTUN_SIZEOF_rtun_sock = sizeof(struct rtun_sock);
const unsigned long RTUN_SIZEOF_socket_lock_t = sizeof(socket_lock_t);
const unsigned long RTUN_SIZEOF_sk_buff = sizeof(struct sk_buff);
const unsigned long RTUN_SIZEOF_sk_buff_head = sizeof(struct sk_buff_head);
const unsigned long RTUN_SIZEOF_net_device = sizeof(struct net_device);
const unsigned long RTUN_SIZEOF_netdev_queue = sizeof(struct netdev_queue);
const unsigned long RTUN_SIZEOF_napi_struct = sizeof(struct napi_struct);
const unsigned long RTUN_SIZEOF_mutex = sizeof(struct mutex);
const unsigned long RTUN_SIZEOF_wait_queue_head_t = sizeof(wait_queue_head_t);
const unsigned long RTUN_SIZEOF_wait_queue_entry = sizeof(struct wait_queue_entry);
const unsigned long RTUN_SIZEOF_rwlock_t = sizeof(rwlock_t);
const unsigned long RTUN_SIZEOF_spinlock_t = sizeof(spinlock_t);
const unsigned long RTUN_SIZEOF_timer_list = sizeof(struct timer_list);
const unsigned long RTUN_SIZEOF_file = sizeof(struct file);
const unsigned long RTUN_SIZEOF_file_operations = sizeof(struct file_operations);
const unsigned long RTUN_SIZEOF_miscdevice = sizeof(struct miscdevice);
const unsigned long RTUN_SIZEOF_proto = sizeof(struct proto);
const unsigned long RTUN_SIZEOF_proto_ops = sizeof(struct proto_ops);
const unsigned long RTUN_SIZEOF_net_device_ops = sizeof(struct net_device_ops);
const unsigned long RTUN_SIZEOF_ethtool_ops = sizeof(struct ethtool_ops);
const unsigned long RTUN_SIZEOF_rtnl_link_ops = sizeof(struct rtnl_link_ops);
const unsigned long RTUN_SIZEOF_rtnl_link_stats64 = sizeof(struct rtnl_link_stats64);
const unsigned long RTUN_SIZEOF_ethtool_drvinfo = sizeof(struct ethtool_drvinfo);
const unsigned long RTUN_SIZEOF_ethtool_link_ksettings = sizeof(struct ethtool_link_ksettings);
const unsigned long RTUN_SIZEOF_device_attribute = sizeof(struct device_attribute);
const unsigned long RTUN_SIZEOF_attribute_group = sizeof(struct attribute_group);
const unsigned long RTUN_SIZEOF_notifier_block = sizeof(struct notifier_block);
const unsigned long RTUN_SIZEOF_ifreq = sizeof(struct ifreq);
const unsigned long RTUN_SIZEOF_sockaddr = sizeof(struct sockaddr);
const unsigned long RTUN_SIZEOF_sock_fprog = sizeof(struct sock_fprog);
const unsigned long RTUN_SIZEOF_virtio_net_hdr = sizeof(struct virtio_net_hdr);
const unsigned long RTUN_SIZEOF_tun_pi = sizeof(struct tun_pi);
const unsigned long RTUN_SIZEOF_iovec = sizeof(struct iovec);
const unsigned long RTUN_SIZEOF_cpumask = sizeof(struct cpumask);
const unsigned long RTUN_OFFSETOF_sock_sk_socket = offsetof(struct sock, sk_socket);
const unsigned long RTUN_OFFSETOF_sock_sk_write_queue = offsetof(struct sock, sk_write_queue);
const unsigned long RTUN_OFFSETOF_sock_sk_sndbuf = offsetof(struct sock, sk_sndbuf);
const unsigned long RTUN_OFFSETOF_sock_sk_callback_lock = offsetof(struct sock, sk_callback_lock);
const unsigned long RTUN_OFFSETOF_sock_sk_write_space = offsetof(struct sock, sk_write_space);
const unsigned long RTUN_OFFSETOF_sock_sk_filter = offsetof(struct sock, sk_filter);
const unsigned long RTUN_OFFSETOF_socket_file = offsetof(struct socket, file);
const unsigned long RTUN_OFFSETOF_socket_ops = offsetof(struct socket, ops);
const unsigned long RTUN_OFFSETOF_socket_wq = offsetof(struct socket, wq);
const unsigned long RTUN_OFFSETOF_rtun_sock_socket = offsetof(struct rtun_sock, socket);
const unsigned long RTUN_OFFSETOF_rtun_sock_napi = offsetof(struct rtun_sock, napi);
const unsigned long RTUN_OFFSETOF_rtun_sock_napi_mutex = offsetof(struct rtun_sock, napi_mutex);
const unsigned long RTUN_OFFSETOF_sk_buff_len = offsetof(struct sk_buff, len);
const unsigned long RTUN_OFFSETOF_sk_buff_data_len = offsetof(struct sk_buff, data_len);
const unsigned long RTUN_OFFSETOF_sk_buff_data = offsetof(struct sk_buff, data);
const unsigned long RTUN_OFFSETOF_sk_buff_truesize = offsetof(struct sk_buff, truesize);
const unsigned long RTUN_OFFSETOF_net_device_flags = offsetof(struct net_device, flags);
const unsigned long RTUN_OFFSETOF_net_device_mtu = offsetof(struct net_device, mtu);
const unsigned long RTUN_OFFSETOF_net_device_tx_queue_len = offsetof(struct net_device, tx_queue_len);
const unsigned long RTUN_OFFSETOF_net_device_netdev_ops = offsetof(struct net_device, netdev_ops);
const unsigned long RTUN_OFFSETOF_net_device_ethtool_ops = offsetof(struct net_device, ethtool_ops);
const unsigned long RTUN_OFFSETOF_net_device_header_ops = offsetof(struct net_device, header_ops);
const unsigned long RTUN_OFFSETOF_net_device_hard_header_len = offsetof(struct net_device, hard_header_len);
const unsigned long RTUN_OFFSETOF_net_device_hw_enc_features = offsetof(struct net_device, hw_enc_features);
const unsigned long RTUN_OFFSETOF_net_device_features = offsetof(struct net_device, features);
const unsigned long RTUN_OFFSETOF_net_device_wanted_features = offsetof(struct net_device, wanted_features);
const unsigned long RTUN_OFFSETOF_net_device_ifindex = offsetof(struct net_device, ifindex);
const unsigned long RTUN_OFFSETOF_net_device_sysfs_groups = offsetof(struct net_device, sysfs_groups);
const unsigned long RTUN_OFFSETOF_net_device_addr_len = offsetof(struct net_device, addr_len);
const unsigned long RTUN_OFFSETOF_net_device_num_tx_queues = offsetof(struct net_device, num_tx_queues);
const unsigned long RTUN_OFFSETOF_net_device_name = offsetof(struct net_device, name);
const unsigned long RTUN_OFFSETOF_net_device_rtnl_link_ops = offsetof(struct net_device, rtnl_link_ops);
const unsigned long RTUN_OFFSETOF_napi_struct_skb = offsetof(struct napi_struct, skb);
const unsigned long RTUN_OFFSETOF_file_private_data = offsetof(struct file, private_data);
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
const unsigned long RTUN_SIZEOF_rtun_vnet_hdr_tnl = sizeof(rtun_vnet_hdr_tnl);

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
/*
 * NET_SKB_PAD (skbuff.h, unless the architecture defines its own) is
 * max(32, L1_CACHE_BYTES), and max() a statement expression, which a
 * constant cannot hold: evaluated here, last, with max() as minmax.h's
 * constant-expression MAX().
 */
#undef max
#define max(x, y) MAX(x, y)
const unsigned int RTUN_NET_SKB_PAD = NET_SKB_PAD;
