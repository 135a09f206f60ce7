// SPDX-License-Identifier: GPL-2.0

#include <net/hotdata.h>
#include <net/rps.h>

#ifdef CONFIG_RPS
__rtun_helper void rtun_helper_rps_record_sock_flow(struct rps_sock_flow_table *table, u32 hash)
{
	rps_record_sock_flow(table, hash);
}

__rtun_helper size_t rtun_helper_RPS_SOCK_FLOW_TABLE_SIZE(u32 entries)
{
	return RPS_SOCK_FLOW_TABLE_SIZE(entries);
}
#endif
