// SPDX-License-Identifier: GPL-2.0
/*
 * C shims for rust_tun: see tun_helpers.h. Each body is the one inline
 * function or macro it wraps, nothing more.
 */
#include <linux/cred.h>
#include <linux/etherdevice.h>
#include <linux/filter.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/uio.h>
#include <linux/virtio_net.h>
#include <linux/wait.h>
#include <linux/proc_fs.h>
#include <net/hotdata.h>
#include <net/ip_tunnels.h>
#include <net/netlink.h>
#include <net/net_namespace.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/rps.h>

#include "tun_helpers.h"

/* net_device */

void rtun_dev_hold(struct net_device *dev) { dev_hold(dev); }
void rtun_dev_put(struct net_device *dev) { dev_put(dev); }
void rtun_dev_net_set(struct net_device *dev, struct net *net) { dev_net_set(dev, net); }
unsigned int rtun_dev_net_inum(const struct net_device *dev) { return dev_net(dev)->ns.inum; }
bool rtun_dev_net_is_init(const struct net_device *dev) { return net_eq(dev_net(dev), &init_net); }
bool rtun_netif_running(const struct net_device *dev) { return netif_running(dev); }
void rtun_netif_tx_start_all_queues(struct net_device *dev) { netif_tx_start_all_queues(dev); }
void rtun_netif_tx_stop_all_queues(struct net_device *dev) { netif_tx_stop_all_queues(dev); }
void rtun_netif_tx_wake_all_queues(struct net_device *dev) { netif_tx_wake_all_queues(dev); }
void rtun_eth_hw_addr_random(struct net_device *dev) { eth_hw_addr_random(dev); }
bool rtun_is_valid_ether_addr(const u8 *addr) { return is_valid_ether_addr(addr); }
void rtun_netdev_priv_flags_clear(struct net_device *dev, u32 flags) { dev->priv_flags &= ~flags; }
void rtun_netdev_priv_flags_set(struct net_device *dev, u32 flags) { dev->priv_flags |= flags; }
void rtun_netdev_set_lltx(struct net_device *dev) { dev->lltx = true; }
struct net_device *rtun_netdev_notifier_info_to_dev(void *ptr) { return netdev_notifier_info_to_dev(ptr); }
struct net *rtun_dev_net(const struct net_device *dev) { return dev_net(dev); }
struct net_device *rtun_to_net_dev(struct device *d) { return to_net_dev(d); }
void rtun_netdev_set_sysfs_group(struct net_device *dev, const struct attribute_group *group) { dev->sysfs_groups[0] = group; }
void rtun_netdev_set_ip_tunnel_header_ops(struct net_device *dev) { dev->header_ops = &ip_tunnel_header_ops; }
int rtun_notifier_to_errno(int ret) { return notifier_to_errno(ret); }
void rtun_netdev_set_pcpu_stat_tstats(struct net_device *dev) { dev->pcpu_stat_type = NETDEV_PCPU_STAT_TSTATS; }
void rtun_dev_core_stats_rx_dropped_inc(struct net_device *dev) { dev_core_stats_rx_dropped_inc(dev); }
void rtun_dev_core_stats_tx_dropped_inc(struct net_device *dev) { dev_core_stats_tx_dropped_inc(dev); }

/* per-CPU data */

void __percpu *rtun___alloc_percpu(size_t size, size_t align) { return __alloc_percpu(size, align); }
void *rtun_per_cpu_ptr(void __percpu *p, int cpu) { return per_cpu_ptr(p, cpu); }
int rtun_cpumask_next_possible(int cpu) { return cpumask_next(cpu, cpu_possible_mask); }

/* NAPI */

void rtun_netif_napi_add_tx(struct net_device *dev, struct napi_struct *napi, int (*poll)(struct napi_struct *, int)) { netif_napi_add_tx(dev, napi, poll); }
void rtun_napi_free_frags(struct napi_struct *napi) { napi_free_frags(napi); }
bool rtun_napi_complete(struct napi_struct *napi) { return napi_complete(napi); }
struct mutex *rtun_sock_napi_mutex(struct rtun_sock *rs) { return &rs->napi_mutex; }
void rtun_mutex_lock(struct mutex *lock) { mutex_lock(lock); }
void rtun_mutex_unlock(struct mutex *lock) { mutex_unlock(lock); }
int rtun___skb_grow(struct sk_buff *skb, unsigned int len) { return __skb_grow(skb, len); }
void *rtun_netdev_alloc_frag(unsigned int fragsz) { return netdev_alloc_frag(fragsz); }
void rtun_skb_fill_frag(struct sk_buff *skb, int i, void *frag, unsigned int size) { skb_fill_page_desc(skb, i, virt_to_head_page(frag), frag - page_address(virt_to_head_page(frag)), size); }
void rtun_skb_add_truesize(struct sk_buff *skb, unsigned int n) { skb->truesize += n; }
unsigned int rtun_skb_headlen(const struct sk_buff *skb) { return skb_headlen(skb); }
void *rtun_skb_data(const struct sk_buff *skb) { return skb->data; }
bool rtun_iter_is_iovec_or_ubuf(const struct iov_iter *i) { return iter_is_iovec(i) || iter_is_ubuf(i); }
unsigned long rtun_iter_nr_segs(const struct iov_iter *i) { return i->nr_segs; }
size_t rtun_iter_iov_len(const struct iov_iter *i, unsigned long n) { return iter_iov(i)[n].iov_len; }

/* skb queues */

u32 rtun_skb_queue_len(const struct sk_buff_head *list) { return skb_queue_len(list); }
void rtun_skb_queue_purge(struct sk_buff_head *list) { skb_queue_purge(list); }

/* netlink attributes */

int rtun_nla_put_u8(struct sk_buff *skb, int attrtype, u8 value) { return nla_put_u8(skb, attrtype, value); }
int rtun_nla_put_u32(struct sk_buff *skb, int attrtype, u32 value) { return nla_put_u32(skb, attrtype, value); }
int rtun_nla_len(const struct nlattr *nla) { return nla_len(nla); }
void *rtun_nla_data(const struct nlattr *nla) { return nla_data(nla); }

/* sockets */

struct napi_struct *rtun_sock_napi(struct rtun_sock *rs) { return &rs->napi; }
struct socket *rtun_sock_socket(struct rtun_sock *rs) { return &rs->socket; }
struct wait_queue_head *rtun_socket_wait(struct socket *sock) { return &sock->wq.wait; }
void rtun_sk_set_write_space(struct sock *sk, void (*fn)(struct sock *)) { sk->sk_write_space = fn; }
int rtun_sk_sndbuf(const struct sock *sk) { return READ_ONCE(sk->sk_sndbuf); }
void rtun_sk_set_sndbuf(struct sock *sk, int v) { WRITE_ONCE(sk->sk_sndbuf, v); }
bool rtun_sk_test_and_set_nospace(struct sock *sk) { return test_and_set_bit(SOCKWQ_ASYNC_NOSPACE, &sk->sk_socket->flags); }
bool rtun_sk_test_nospace(struct sock *sk) { return test_bit(SOCKWQ_ASYNC_NOSPACE, &sk->sk_socket->flags); }
bool rtun_sk_test_and_clear_nospace(struct sock *sk) { return test_and_clear_bit(SOCKWQ_ASYNC_NOSPACE, &sk->sk_socket->flags); }
struct fasync_struct **rtun_socket_fasync_list(struct socket *sock) { return &sock->wq.fasync_list; }
void rtun_sk_callback_write_lock_bh(struct sock *sk) { write_lock_bh(&sk->sk_callback_lock); }
void rtun_sk_callback_write_unlock_bh(struct sock *sk) { write_unlock_bh(&sk->sk_callback_lock); }
void rtun_sock_put(struct sock *sk) { sock_put(sk); }
void rtun_lock_sock(struct sock *sk) { lock_sock(sk); }
int rtun_sk_filter(struct sock *sk, struct sk_buff *skb) { return sk_filter(sk, skb); }
struct net *rtun_sock_net(const struct sock *sk) { return sock_net(sk); }

/* sk_buff */

void rtun_kfree_skb(struct sk_buff *skb) { kfree_skb(skb); }
bool rtun_pskb_may_pull(struct sk_buff *skb, unsigned int len) { return pskb_may_pull(skb, len); }
void rtun_skb_reset_mac_header(struct sk_buff *skb) { skb_reset_mac_header(skb); }
void rtun_skb_reset_network_header(struct sk_buff *skb) { skb_reset_network_header(skb); }
void rtun_skb_probe_transport_header(struct sk_buff *skb) { skb_probe_transport_header(skb); }
void rtun_skb_orphan(struct sk_buff *skb) { skb_orphan(skb); }
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
void rtun_nf_reset_ct(struct sk_buff *skb) { nf_reset_ct(skb); }
#endif

/* virtio-net headers */

/* Little-endian, a constant as in tun.c on x86_64 (tun_is_little_endian():
 * TUN_VNET_LE or the legacy header, little-endian there), so the compiler
 * folds the byte-order tests away as it does in tun_get_user(). */
int rtun_virtio_net_hdr_to_skb_le(struct sk_buff *skb, const struct virtio_net_hdr *hdr) { return virtio_net_hdr_to_skb(skb, hdr, true); }
#ifdef CONFIG_DEBUG_NET
/*
 * sys/inline.rs writes virtio_net_hdr_from_skb() out in Rust for the read
 * path; with CONFIG_DEBUG_NET (the debug test kernel) every result is
 * compared with C's, and a difference WARNs (the test runner fails on it).
 */
void rtun_virtio_net_hdr_from_skb_check(const struct sk_buff *skb, const struct virtio_net_hdr *hdr, bool ok, int vlan_hlen)
{
	struct virtio_net_hdr c;
	bool c_ok = !virtio_net_hdr_from_skb(skb, &c, true, true, vlan_hlen);

	WARN_ONCE(c_ok != ok || (ok && memcmp(&c, hdr, sizeof(c))),
		  "rust_tun: virtio_net_hdr_from_skb differs from C's: %d %*ph, C: %d %*ph\n",
		  ok, (int)sizeof(c), hdr, c_ok, (int)sizeof(c), &c);
}
#endif

/* locking, RCU, bottom halves */

void rtun_spin_lock_bh(spinlock_t *lock) { spin_lock_bh(lock); }
void rtun_spin_unlock_bh(spinlock_t *lock) { spin_unlock_bh(lock); }
void rtun_rcu_read_lock(void) { rcu_read_lock(); }
void rtun_rcu_read_unlock(void) { rcu_read_unlock(); }
void rtun_local_bh_disable(void) { local_bh_disable(); }
void rtun_local_bh_enable(void) { local_bh_enable(); }

/* scheduler, wait queues, poll */

void rtun_init_waitqueue_entry_current(struct wait_queue_entry *wq_entry) { init_waitqueue_entry(wq_entry, current); }
void rtun_set_current_state_interruptible(void) { set_current_state(TASK_INTERRUPTIBLE); }
void rtun_set_current_state_running(void) { __set_current_state(TASK_RUNNING); }
bool rtun_signal_pending(void) { return signal_pending(current); }
struct pid *rtun_task_pid_current(void) { return task_pid(current); }
void rtun_cond_resched(void) { cond_resched(); }
void rtun_wake_up_interruptible_poll(struct wait_queue_head *wq, __poll_t mask) { wake_up_interruptible_poll(wq, mask); }
void rtun_wake_up_interruptible_sync_poll(struct wait_queue_head *wq, __poll_t mask) { wake_up_interruptible_sync_poll(wq, mask); }
void rtun_poll_wait(struct file *filp, struct wait_queue_head *wq, struct poll_table_struct *p) { poll_wait(filp, wq, p); }

/* timers */

void rtun_timer_setup(struct timer_list *timer, void (*fn)(struct timer_list *)) { timer_setup(timer, fn, 0); }
bool rtun_timer_pending(const struct timer_list *timer) { return timer_pending(timer); }

/* namespaces, credentials */

struct net *rtun_get_current_net(void) { return get_net(current->nsproxy->net_ns); }
void rtun_put_net(struct net *net) { put_net(net); }
bool rtun_ns_capable_net_admin(const struct net *net) { return ns_capable(net->user_ns, CAP_NET_ADMIN); }
bool rtun_capable_net_admin(void) { return capable(CAP_NET_ADMIN); }
u32 rtun_make_kuid(long uid) { return __kuid_val(make_kuid(current_user_ns(), uid)); }
u32 rtun_make_kgid(long gid) { return __kgid_val(make_kgid(current_user_ns(), gid)); }
bool rtun_current_euid_is(u32 kuid) { return uid_eq(current_euid(), KUIDT_INIT(kuid)); }
bool rtun_in_egroup(u32 kgid) { return in_egroup_p(KGIDT_INIT(kgid)); }
kuid_t rtun_current_fsuid(void) { return current_fsuid(); }
u32 rtun_from_kuid_munged(u32 kuid) { return from_kuid_munged(current_user_ns(), KUIDT_INIT(kuid)); }
u32 rtun_from_kgid_munged(u32 kgid) { return from_kgid_munged(current_user_ns(), KGIDT_INIT(kgid)); }
int rtun_open_related_net_ns(struct net *net) { return open_related_ns(&net->ns, get_net_ns); }

/* LSM hooks: exported functions with CONFIG_SECURITY_NETWORK, empty inlines without */

int rtun_security_tun_dev_create(void) { return security_tun_dev_create(); }
int rtun_security_tun_dev_alloc_security(void **security) { return security_tun_dev_alloc_security(security); }
void rtun_security_tun_dev_free_security(void *security) { security_tun_dev_free_security(security); }
int rtun_security_tun_dev_open(void *security) { return security_tun_dev_open(security); }
int rtun_security_tun_dev_attach(struct sock *sk, void *security) { return security_tun_dev_attach(sk, security); }
int rtun_security_tun_dev_attach_queue(void *security) { return security_tun_dev_attach_queue(security); }

/* static keys, jump labels */

int rtun_static_key_count(struct static_key *key) { return static_key_count(key); }
#ifdef CONFIG_JUMP_LABEL
const struct jump_entry *rtun_module_jump_entries(void) { return THIS_MODULE->jump_entries; }
unsigned int rtun_module_num_jump_entries(void) { return THIS_MODULE->num_jump_entries; }
unsigned long rtun_jump_entry_code(const struct jump_entry *entry) { return jump_entry_code(entry); }
unsigned long rtun_jump_entry_target(const struct jump_entry *entry) { return jump_entry_target(entry); }
struct static_key *rtun_jump_entry_key(const struct jump_entry *entry) { return jump_entry_key(entry); }
#endif

/* RFS tables */

size_t rtun_rps_sock_flow_table_size(u32 entries) { return RPS_SOCK_FLOW_TABLE_SIZE(entries); }

/* files, notifiers */

void *rtun_file_inode_private(const struct file *file) { return file_inode(file)->i_private; }
