// SPDX-License-Identifier: GPL-2.0

#include <linux/log2.h>
#include <linux/version.h>
#include <net/hotdata.h>
#include <net/rps.h>

#ifdef CONFIG_RPS
/*
 * An RFS table (struct rps_sock_flow_table) as one unsigned long, the
 * form 7.3 keeps it in: 6.12's net_hotdata.rps_sock_flow_table is a
 * pointer to { mask; ents[] }; 7.3's is an rps_tag_ptr, the address of a
 * plain u32 array with ilog2 of its size in the low five bits. 0 is no
 * table. Rust only passes the value between these helpers.
 */

/* The global table, inside the caller's RCU read-side section. */
__rtun_helper unsigned long rtun_helper_rps_sock_flow_table_get(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return READ_ONCE(net_hotdata.rps_sock_flow_table);
#else
	return (unsigned long)rcu_dereference(net_hotdata.rps_sock_flow_table);
#endif
}

/* rps_record_sock_flow() on a table of either kind. */
__rtun_helper void rtun_helper_rps_table_record(unsigned long table, u32 hash)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	rps_record_sock_flow(table, hash);
#else
	rps_record_sock_flow((struct rps_sock_flow_table *)table, hash);
#endif
}

/* The number of entries of a table. */
__rtun_helper u32 rtun_helper_rps_table_entries(unsigned long table)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return rps_tag_to_mask(table) + 1;
#else
	return ((struct rps_sock_flow_table *)table)->mask + 1;
#endif
}

/* The entry of a table that hash selects (READ_ONCE, as get_rps_cpu()). */
__rtun_helper u32 rtun_helper_rps_table_entry(unsigned long table, u32 hash)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	struct rps_sock_flow_table *t = rps_tag_to_table(table);

	return READ_ONCE(t[hash & rps_tag_to_mask(table)].ent);
#else
	struct rps_sock_flow_table *t = (struct rps_sock_flow_table *)table;

	return READ_ONCE(t->ents[hash & t->mask]);
#endif
}

/* The bytes a table of entries (a power of two) takes. */
__rtun_helper size_t rtun_helper_rps_table_size(u32 entries)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return entries * sizeof(struct rps_sock_flow_table);
#else
	return RPS_SOCK_FLOW_TABLE_SIZE(entries);
#endif
}

/*
 * A table of entries (a power of two) in zeroed memory of
 * rps_table_size(entries) bytes, aligned to RTUN_RPS_TABLE_ALIGN, as the
 * sysctl makes the global one: its value for the helpers above.
 */
__rtun_helper unsigned long rtun_helper_rps_table_init(void *mem, u32 entries)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return (unsigned long)mem | ilog2(entries);
#else
	((struct rps_sock_flow_table *)mem)->mask = entries - 1;
	return (unsigned long)mem;
#endif
}
#endif
