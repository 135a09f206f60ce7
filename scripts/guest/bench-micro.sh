# SPDX-License-Identifier: GPL-2.0
# Guest side of benchmark table 3 (the rfs_needed patch's own method): the
# micro-benchmarks of rust_tun (Rust) and rtun_cbench (C), each 3 runs of
# 10,000,000 calls of the guarded and unguarded record step and a floor,
# with RFS off and on.
set -u
SFE=/proc/sys/net/core/rps_sock_flow_entries
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/rtun_cbench.ko || exit 1
# The state every measurement starts from (bench-settle.sh).
. /lib/rtun-bench-settle.sh
bench_settle
for sfe in 0 32768; do
	echo $sfe >$SFE
	# Each reader runs on CPU 1, so the RFS entries it writes stay put.
	taskset -c 1 cat /sys/kernel/debug/rust_tun/micro_bench | sed 's/^/BENCH micro /'
	taskset -c 1 cat /sys/kernel/debug/rtun_cbench/micro_bench | sed 's/^/BENCH micro /'
done
echo 0 >$SFE
rmmod rtun_cbench rust_tun
