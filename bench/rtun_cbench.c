// SPDX-License-Identifier: GPL-2.0
/*
 * rtun_cbench: the C side of rust-tun's micro-benchmark, the method of the
 * rfs_needed patch ("net: rps: Add the rfs_needed check when record flow
 * hash"): 10,000,000 calls of C's inline sock_rps_record_flow_hash() with
 * and without a static_branch_unlikely(&rfs_needed) check, and an empty loop
 * as the floor, each timed with rdtsc() with bottom halves disabled, three
 * runs. Reading <debugfs>/rtun_cbench/micro_bench runs it; the loops have
 * the shape of rust_tun's (bench.rs: micro_bench) so the two sit side by
 * side. As rust_tun's, the steps record into a private twin of the global
 * RFS table (there while the global one is, as large), not into the live
 * table, whose entries steer real flows.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/version.h>
#include <linux/log2.h>
#include <net/rps.h>
#include <asm/msr.h>

#define BENCH_CALLS 10000000
/* Calls per stretch with bottom halves off, as rust_tun's BENCH_CHUNK. */
#define BENCH_CHUNK 100000

/* Keep h in a register and the loop alive, like rust_tun's sys::hide(). */
#define HIDE(h) asm volatile("" : "+r"(h))

/*
 * One measurement: BENCH_CALLS iterations of BODY (with h hidden in a
 * register first), timed with rdtsc() in stretches of BENCH_CHUNK with
 * bottom halves disabled, rescheduling between stretches (rust_tun's
 * measure()); -EINTR in *err if a signal arrives.
 */
#define DEFINE_BENCH(name, body)				\
static noinline u64 name(u32 h, int *err)			\
{								\
	u64 t0, cycles = 0;					\
	int c, i;						\
								\
	for (c = 0; c < BENCH_CALLS / BENCH_CHUNK; c++) {	\
		local_bh_disable();				\
		t0 = rdtsc();					\
		for (i = 0; i < BENCH_CHUNK; i++) {		\
			HIDE(h);				\
			body;					\
		}						\
		cycles += rdtsc() - t0;				\
		local_bh_enable();				\
		cond_resched();					\
		if (signal_pending(current)) {			\
			*err = -EINTR;				\
			break;					\
		}						\
	}							\
	return cycles;						\
}

/*
 * The benchmark's twin of net_hotdata.rps_sock_flow_table; one reader of
 * micro_bench at a time sets it up, uses it and frees it. 6.12: a pointer
 * to { mask; ents[] }; 7.3: an rps_tag_ptr (the address of the entries
 * with ilog2 of their number in the low bits), as the global one of each.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
static rps_tag_ptr bench_table;
#else
static struct rps_sock_flow_table __rcu *bench_table;
#endif
static DEFINE_MUTEX(bench_lock);

/*
 * C's inline sock_rps_record_flow_hash() (include/net/rps.h:
 * _sock_rps_record_flow_hash()), as tun.c calls it, on bench_table.
 */
static __always_inline void bench_record_flow_hash(u32 hash)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	rps_tag_ptr tag_ptr;

	if (!hash)
		return;
	rcu_read_lock();
	tag_ptr = READ_ONCE(bench_table);
	if (tag_ptr)
		rps_record_sock_flow(tag_ptr, hash);
	rcu_read_unlock();
#else
	struct rps_sock_flow_table *table;

	if (!hash)
		return;
	rcu_read_lock();
	table = rcu_dereference(bench_table);
	if (table)
		rps_record_sock_flow(table, hash);
	rcu_read_unlock();
#endif
}

/* The floor: the loop and nothing else. */
DEFINE_BENCH(bench_floor, )
/* The record step, unguarded. */
DEFINE_BENCH(bench_unguarded, bench_record_flow_hash(h))
/* The same behind the rfs_needed static key (the rfs_needed patch). */
DEFINE_BENCH(bench_guarded,
	     if (static_branch_unlikely(&rfs_needed))
		     bench_record_flow_hash(h))

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
/*
 * bench_table as the global table is now: none, or as many entries, made
 * as 7.3's rps_sock_flow_sysctl() makes it (vmalloc'ed, so page-aligned:
 * room for the tag).
 */
static int bench_table_like_global(void)
{
	rps_tag_ptr global = READ_ONCE(net_hotdata.rps_sock_flow_table);
	struct rps_sock_flow_table *t;
	u32 entries;

	if (!global) {
		WRITE_ONCE(bench_table, 0);
		return 0;
	}
	entries = rps_tag_to_mask(global) + 1;
	t = vzalloc(entries * sizeof(*t));
	if (!t)
		return -ENOMEM;
	WRITE_ONCE(bench_table, (rps_tag_ptr)t | ilog2(entries));
	return 0;
}

static void bench_table_free(void)
{
	rps_tag_ptr t = bench_table;

	WRITE_ONCE(bench_table, 0);
	if (t)
		vfree(rps_tag_to_table(t));
}
#else
/* bench_table as the global table is now: none, or as many entries. */
static int bench_table_like_global(void)
{
	struct rps_sock_flow_table *global, *t = NULL;
	u32 mask = 0;
	bool there;

	rcu_read_lock();
	global = rcu_dereference(net_hotdata.rps_sock_flow_table);
	there = global;
	if (there)
		mask = global->mask;
	rcu_read_unlock();
	if (there) {
		t = kvzalloc(RPS_SOCK_FLOW_TABLE_SIZE(mask + 1), GFP_KERNEL);
		if (!t)
			return -ENOMEM;
		t->mask = mask;
	}
	rcu_assign_pointer(bench_table, t);
	return 0;
}

static void bench_table_free(void)
{
	struct rps_sock_flow_table *t =
		rcu_dereference_protected(bench_table, lockdep_is_held(&bench_lock));

	RCU_INIT_POINTER(bench_table, NULL);
	kvfree(t);
}
#endif

static int micro_bench_show(struct seq_file *m, void *v)
{
	int rfs = static_key_count(&rfs_needed.key);
	u32 hash = 0x9e3779b9;
	int run, err;

	mutex_lock(&bench_lock);
	err = bench_table_like_global();
	for (run = 0; run < 3 && !err; run++) {
		u64 floor = bench_floor(hash, &err);
		u64 guarded = bench_guarded(hash, &err);
		u64 unguarded = bench_unguarded(hash, &err);

		if (err)
			break;

		seq_printf(m, "impl=c variant=floor run=%d rfs_needed=%d calls=%d cycles=%llu\n",
			   run, rfs, BENCH_CALLS, floor);
		seq_printf(m, "impl=c variant=guarded run=%d rfs_needed=%d calls=%d cycles=%llu\n",
			   run, rfs, BENCH_CALLS, guarded);
		seq_printf(m, "impl=c variant=unguarded run=%d rfs_needed=%d calls=%d cycles=%llu\n",
			   run, rfs, BENCH_CALLS, unguarded);
	}
	bench_table_free();
	mutex_unlock(&bench_lock);
	return err;
}
DEFINE_SHOW_ATTRIBUTE(micro_bench);

static struct dentry *root;

static int __init rtun_cbench_init(void)
{
	root = debugfs_create_dir("rtun_cbench", NULL);
	debugfs_create_file("micro_bench", 0444, root, NULL, &micro_bench_fops);
	return 0;
}

static void __exit rtun_cbench_exit(void)
{
	debugfs_remove(root);
}

module_init(rtun_cbench_init);
module_exit(rtun_cbench_exit);
MODULE_DESCRIPTION("rust-tun micro-benchmark, C side: sock_rps_record_flow_hash with and without rfs_needed, into a private RFS table");
MODULE_LICENSE("GPL");
