/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C shims for rust_tun: static inline functions and macros that Rust
 * cannot call directly, one line each, grouped by subsystem as
 * rust/helpers/ is. Each is named after what it wraps, with an rtun_
 * prefix. No logic lives here.
 */
#ifndef RUST_TUN_HELPERS_H
#define RUST_TUN_HELPERS_H

#include <linux/types.h>
#include <linux/uidgid_types.h>
#include <net/sock.h>

/*
 * One open file's socket, as tun.c's struct tun_file begins: the struct
 * sock first (sk_alloc() allocates the whole, proto.obj_size), then the
 * struct socket that sock_init_data_uid() links it to.
 */
struct rtun_sock {
	struct sock sk;
	struct socket socket;
	/*
	 * IFF_NAPI (tun.c: tfile->napi): the socket's write queue is the NAPI
	 * context's receive queue. Used only through sys/napi.rs.
	 */
	struct napi_struct napi;
	/* IFF_NAPI_FRAGS: held while a write fills napi.skb (tun.c: napi_mutex). */
	struct mutex napi_mutex;
};

struct attribute_group;
struct virtio_net_hdr;
struct dentry;
struct device;
struct seq_file;
struct fasync_struct;
struct file;
struct iov_iter;
struct jump_entry;
struct net;
struct net_device;
struct pid;
struct poll_table_struct;
struct sk_buff;
struct spinlock;
struct static_key;
struct timer_list;
struct wait_queue_entry;
struct wait_queue_head;

/* net_device (include/linux/netdevice.h, etherdevice.h) */
void rtun_dev_hold(struct net_device *dev);
void rtun_dev_put(struct net_device *dev);
void rtun_dev_net_set(struct net_device *dev, struct net *net);
unsigned int rtun_dev_net_inum(const struct net_device *dev);
bool rtun_dev_net_is_init(const struct net_device *dev);
bool rtun_netif_running(const struct net_device *dev);
void rtun_netif_tx_start_all_queues(struct net_device *dev);
void rtun_netif_tx_stop_all_queues(struct net_device *dev);
void rtun_netif_tx_wake_all_queues(struct net_device *dev);
void rtun_eth_hw_addr_random(struct net_device *dev);
bool rtun_is_valid_ether_addr(const u8 *addr);
void rtun_netdev_priv_flags_clear(struct net_device *dev, u32 flags);
void rtun_netdev_priv_flags_set(struct net_device *dev, u32 flags);
void rtun_netdev_set_lltx(struct net_device *dev);
struct net_device *rtun_netdev_notifier_info_to_dev(void *ptr);
struct net *rtun_dev_net(const struct net_device *dev);
struct net_device *rtun_to_net_dev(struct device *d);
void rtun_netdev_set_sysfs_group(struct net_device *dev, const struct attribute_group *group);
void rtun_netdev_set_ip_tunnel_header_ops(struct net_device *dev);
int rtun_notifier_to_errno(int ret);
void rtun_netdev_set_pcpu_stat_tstats(struct net_device *dev);
void rtun_dev_core_stats_rx_dropped_inc(struct net_device *dev);
void rtun_dev_core_stats_tx_dropped_inc(struct net_device *dev);

/* per-CPU data (include/linux/percpu-defs.h, cpumask.h) */
void __percpu *rtun___alloc_percpu(size_t size, size_t align);
void *rtun_per_cpu_ptr(void __percpu *p, int cpu);
int rtun_cpumask_next_possible(int cpu);

/* NAPI (include/linux/netdevice.h) */
void rtun_netif_napi_add_tx(struct net_device *dev, struct napi_struct *napi, int (*poll)(struct napi_struct *, int));
void rtun_napi_free_frags(struct napi_struct *napi);
bool rtun_napi_complete(struct napi_struct *napi);
struct mutex *rtun_sock_napi_mutex(struct rtun_sock *rs);
void rtun_mutex_lock(struct mutex *lock);
void rtun_mutex_unlock(struct mutex *lock);
int rtun___skb_grow(struct sk_buff *skb, unsigned int len);
void *rtun_netdev_alloc_frag(unsigned int fragsz);
void rtun_skb_fill_frag(struct sk_buff *skb, int i, void *frag, unsigned int size);
void rtun_skb_add_truesize(struct sk_buff *skb, unsigned int n);
unsigned int rtun_skb_headlen(const struct sk_buff *skb);
void *rtun_skb_data(const struct sk_buff *skb);
bool rtun_iter_is_iovec_or_ubuf(const struct iov_iter *i);
unsigned long rtun_iter_nr_segs(const struct iov_iter *i);
size_t rtun_iter_iov_len(const struct iov_iter *i, unsigned long n);

/* skb queues (include/linux/skbuff.h) */
u32 rtun_skb_queue_len(const struct sk_buff_head *list);
void rtun_skb_queue_purge(struct sk_buff_head *list);

/* netlink attributes (include/net/netlink.h) */
int rtun_nla_put_u8(struct sk_buff *skb, int attrtype, u8 value);
int rtun_nla_put_u32(struct sk_buff *skb, int attrtype, u32 value);
int rtun_nla_len(const struct nlattr *nla);
void *rtun_nla_data(const struct nlattr *nla);

/* sockets (include/net/sock.h, linux/net.h) */
struct napi_struct *rtun_sock_napi(struct rtun_sock *rs);
struct socket *rtun_sock_socket(struct rtun_sock *rs);
struct wait_queue_head *rtun_socket_wait(struct socket *sock);
void rtun_sk_set_write_space(struct sock *sk, void (*fn)(struct sock *));
int rtun_sk_sndbuf(const struct sock *sk);
void rtun_sk_set_sndbuf(struct sock *sk, int v);
bool rtun_sk_test_and_set_nospace(struct sock *sk);
bool rtun_sk_test_nospace(struct sock *sk);
bool rtun_sk_test_and_clear_nospace(struct sock *sk);
struct fasync_struct **rtun_socket_fasync_list(struct socket *sock);
void rtun_sk_callback_write_lock_bh(struct sock *sk);
void rtun_sk_callback_write_unlock_bh(struct sock *sk);
void rtun_sock_put(struct sock *sk);
void rtun_lock_sock(struct sock *sk);
int rtun_sk_filter(struct sock *sk, struct sk_buff *skb);
struct net *rtun_sock_net(const struct sock *sk);

/* sk_buff (include/linux/skbuff.h, net/netfilter) */
void rtun_kfree_skb(struct sk_buff *skb);
bool rtun_pskb_may_pull(struct sk_buff *skb, unsigned int len);
void rtun_skb_reset_mac_header(struct sk_buff *skb);
void rtun_skb_reset_network_header(struct sk_buff *skb);
void rtun_skb_probe_transport_header(struct sk_buff *skb);
void rtun_skb_orphan(struct sk_buff *skb);
void rtun_nf_reset_ct(struct sk_buff *skb);

/* virtio-net headers (include/linux/virtio_net.h) */
int rtun_virtio_net_hdr_to_skb_le(struct sk_buff *skb, const struct virtio_net_hdr *hdr);
#ifdef CONFIG_DEBUG_NET
void rtun_virtio_net_hdr_from_skb_check(const struct sk_buff *skb, const struct virtio_net_hdr *hdr, bool ok, int vlan_hlen);
#endif

/* locking, RCU, bottom halves (include/linux/spinlock.h, rcupdate.h, bottom_half.h) */
void rtun_spin_lock_bh(struct spinlock *lock);
void rtun_spin_unlock_bh(struct spinlock *lock);
void rtun_rcu_read_lock(void);
void rtun_rcu_read_unlock(void);
void rtun_local_bh_disable(void);
void rtun_local_bh_enable(void);

/* scheduler, wait queues, poll (include/linux/sched*.h, wait.h, poll.h) */
void rtun_init_waitqueue_entry_current(struct wait_queue_entry *wq_entry);
void rtun_set_current_state_interruptible(void);
void rtun_set_current_state_running(void);
bool rtun_signal_pending(void);
struct pid *rtun_task_pid_current(void);
void rtun_cond_resched(void);
void rtun_wake_up_interruptible_poll(struct wait_queue_head *wq, __poll_t mask);
void rtun_wake_up_interruptible_sync_poll(struct wait_queue_head *wq, __poll_t mask);
void rtun_poll_wait(struct file *filp, struct wait_queue_head *wq, struct poll_table_struct *p);

/* timers (include/linux/timer.h) */
void rtun_timer_setup(struct timer_list *timer, void (*fn)(struct timer_list *));
bool rtun_timer_pending(const struct timer_list *timer);

/* namespaces, credentials (include/net/net_namespace.h, linux/cred.h) */
struct net *rtun_get_current_net(void);
void rtun_put_net(struct net *net);
bool rtun_ns_capable_net_admin(const struct net *net);
bool rtun_capable_net_admin(void);
u32 rtun_make_kuid(long uid);
u32 rtun_make_kgid(long gid);
bool rtun_current_euid_is(u32 kuid);
bool rtun_in_egroup(u32 kgid);
kuid_t rtun_current_fsuid(void);
u32 rtun_from_kuid_munged(u32 kuid);
u32 rtun_from_kgid_munged(u32 kgid);
int rtun_open_related_net_ns(struct net *net);

/* LSM hooks (include/linux/security.h) */
int rtun_security_tun_dev_create(void);
int rtun_security_tun_dev_alloc_security(void **security);
void rtun_security_tun_dev_free_security(void *security);
int rtun_security_tun_dev_open(void *security);
int rtun_security_tun_dev_attach(struct sock *sk, void *security);
int rtun_security_tun_dev_attach_queue(void *security);

/* static keys, jump labels (include/linux/jump_label.h, module.h) */
int rtun_static_key_count(struct static_key *key);
const struct jump_entry *rtun_module_jump_entries(void);
unsigned int rtun_module_num_jump_entries(void);
unsigned long rtun_jump_entry_code(const struct jump_entry *entry);
unsigned long rtun_jump_entry_target(const struct jump_entry *entry);
struct static_key *rtun_jump_entry_key(const struct jump_entry *entry);

/* RFS tables (include/net/rps.h) */
size_t rtun_rps_sock_flow_table_size(u32 entries);

/* files, notifiers (include/linux/fs.h, notifier.h) */
void *rtun_file_inode_private(const struct file *file);

/* the modules' parameters: rust_tun's (tun_params.c), rust_dummy's (dummy_params.c) */
bool rtun_param_unguarded(void);
bool rtun_param_dropin(void);
unsigned long rtun_param_flow_ageing(void);
int rtun_param_numdummies(void);

#endif /* RUST_TUN_HELPERS_H */
