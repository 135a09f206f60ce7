// SPDX-License-Identifier: GPL-2.0
/*
 * rust_tun.ko's helpers: the core's (helpers/helpers.c) and those of the
 * tun part of sys/ (helpers/tun/), compiled to bitcode inlined into tun.o
 * or to tun_helpers.o, as Kbuild chooses (helpers/helpers.c says how).
 */
#include "helpers/helpers.c"

#include "helpers/tun/rps.c"
#include "helpers/tun/security.c"
#include "helpers/tun/sock.c"
#include "helpers/tun/virtio_net.c"

/*
 * On a GCC-built kernel whose helpers are inlined from clang's bitcode
 * (Kbuild's gcc path), this file's GCC object is linked too, as the gate's
 * oracle and the fallback; these second names of GCC's copies of the
 * per-CPU helpers let sys/bench/oracle.rs compare the inlined copies with
 * them (debugfs helpers_oracle).
 */
#if defined(RTUN_HELPERS_ORACLE) && !defined(RTUN_HELPERS_BITCODE) && !defined(__BINDGEN__)
#define RTUN_ORACLE(name) \
	extern typeof(rtun_helper_##name) rtun_oracle_##name __alias(rtun_helper_##name)
RTUN_ORACLE(preempt_count);
RTUN_ORACLE(preempt_disable);
RTUN_ORACLE(preempt_enable);
RTUN_ORACLE(local_bh_disable);
RTUN_ORACLE(local_bh_enable);
RTUN_ORACLE(dev_hold);
RTUN_ORACLE(dev_put);
RTUN_ORACLE(this_cpu_inc_u64);
#endif
