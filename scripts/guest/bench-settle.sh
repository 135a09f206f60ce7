# SPDX-License-Identifier: GPL-2.0
# Sourced by the benchmarks' and profiles' guest scripts (run-guest.sh puts
# it at /lib/rtun-bench-settle.sh): the state every measurement starts from.

# bench_settle: call once, after the modules are loaded, before the first
# measurement.
bench_settle() {
	# Let the boot's asynchronous work (deferred probes, the first
	# workqueue and RCU rounds) finish first: it would land in the first
	# measurement. Under -icount sleep=off idle guest time is skipped, so
	# this costs no wall time.
	sleep 2
}
