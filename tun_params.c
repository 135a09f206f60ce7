// SPDX-License-Identifier: GPL-2.0
/*
 * rust_tun's module parameters (6.12's Rust module! has none), read by the
 * driver through the accessors declared in params.h. Linked into
 * rust_tun.ko only: rust_dummy.ko has its own (dummy_params.c).
 */
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/version.h>

#include "params.h"

/*
 * How the helpers were built (Kbuild's RTUN helpers line, with the helpers
 * the GCC-kernel gate kept out of line): modinfo -F helpers rust_tun.
 */
MODULE_INFO(helpers, RTUN_HELPERS_PATH);

static bool unguarded;
module_param(unguarded, bool, 0644);
MODULE_PARM_DESC(unguarded,
		 "Devices created while this is set behave like tun before the rps_needed/rfs_needed patches: they compute the RPS flow hash on every transmit and record every RFS flow, whatever the static keys say (for side-by-side benchmarks; default: off)");
bool rtun_param_unguarded(void) { return READ_ONCE(unguarded); }

static bool dropin;
module_param(dropin, bool, 0444);
MODULE_PARM_DESC(dropin,
		 "Stand in for tun.ko: register /dev/net/tun (misc minor 200), the rtnl link kind \"tun\" and tun's device names and identity, so unmodified clients and `ip tuntap` use rust_tun. Loading fails (EBUSY/EEXIST) while tun.ko holds them (default: off, side by side with tun.ko as /dev/net/rust_tun, kind rust_tun)");
bool rtun_param_dropin(void) { return READ_ONCE(dropin); }

/*
 * A writable unsigned parameter NAME (a static unsigned int of that name)
 * that takes only MIN..MAX: anything else is refused with EINVAL, or
 * ERANGE past 32 bits (kstrtouint's), and the value stays.
 */
#define RTUN_PARAM_UINT_MINMAX(name, min, max)					\
	static int rtun_set_##name(const char *val, const struct kernel_param *kp) \
	{									\
		return param_set_uint_minmax(val, kp, min, max);		\
	}									\
	static const struct kernel_param_ops rtun_##name##_ops = {		\
		.set = rtun_set_##name,						\
		.get = param_get_uint,						\
	};									\
	module_param_cb(name, &rtun_##name##_ops, &name, 0644)

/*
 * tun.c's ageing_time is TUN_FLOW_EXPIRE (3 s), fixed. rust_tun takes it
 * from this parameter at device creation (default the same 3 s); a value
 * outside 100 ms .. 10 min is refused with EINVAL and the old one stays.
 */
static unsigned int flow_ageing_ms = 3000;
RTUN_PARAM_UINT_MINMAX(flow_ageing_ms, 100, 600000);
MODULE_PARM_DESC(flow_ageing_ms,
		 "Devices created while this is N age out their flow-table entries N ms after a flow's last packet (tun.c's ageing_time, TUN_FLOW_EXPIRE: default 3000; 100 to 600000)");
unsigned long rtun_param_flow_ageing(void) { return msecs_to_jiffies(READ_ONCE(flow_ageing_ms)); }

/*
 * Calls per measurement of <debugfs>/rust_tun/micro_bench (bench.rs): the
 * rfs_needed patch's 10,000,000 by default, as scripts/guest/bench-micro.sh
 * reads it. Tests that check what the benchmark touches, not its figures,
 * set fewer (a debug kernel runs the default's 90,000,000 calls for about
 * a minute). Counted in stretches of 100,000 calls: 100,000 to 100,000,000,
 * rounded down to a whole stretch; anything else is refused with EINVAL.
 */
static unsigned int micro_bench_calls = 10000000;
RTUN_PARAM_UINT_MINMAX(micro_bench_calls, 100000, 100000000);
MODULE_PARM_DESC(micro_bench_calls,
		 "Calls per measurement of the debugfs micro_bench (default 10000000, the rfs_needed patch's; 100000 to 100000000, in stretches of 100000)");
unsigned int rtun_param_micro_bench_calls(void) { return READ_ONCE(micro_bench_calls); }

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
/*
 * netif_get_mac_address() (SIOCGIFHWADDR, helpers/netdevice.c) is in the
 * NETDEV_INTERNAL namespace on 7.3 (dev_get_mac_address() on 6.12).
 */
MODULE_IMPORT_NS("NETDEV_INTERNAL");
#endif
