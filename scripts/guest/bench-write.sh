# SPDX-License-Identifier: GPL-2.0
# Guest side of benchmark table 2 (write path, the rfs_needed patch's
# table): `rtun bench-write` pushes PACKETS writes over FLOWS flows through a
# two-queue TUN device whose flows have rps_rxhash set; rows: rust_tun
# guarded, unguarded, C tun, each with rps_sock_flow_entries 0 and 32768.
# usage: bench-write.sh [PACKETS] [FLOWS]
set -u
PACKETS=${1:-100000}
FLOWS=${2:-1024}
SFE=/proc/sys/net/core/rps_sock_flow_entries
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko || exit 1
# The state every measurement starts from (bench-settle.sh).
. /lib/rtun-bench-settle.sh
bench_settle
rc=0
for row in rust_tun:guarded:/dev/net/rust_tun rust_tun:unguarded:/dev/net/rust_tun tun:guarded:/dev/net/tun; do
	driver=${row%%:*} rest=${row#*:} mode=${rest%%:*} node=${rest#*:}
	for sfe in 0 32768; do
		echo $sfe >$SFE
		[ "$driver" = rust_tun ] && { [ "$mode" = unguarded ] && echo 1 || echo 0; } \
			>/sys/module/rust_tun/parameters/unguarded
		out=$(rtun bench-write "$node" bw0 "$FLOWS" "$PACKETS") || { echo "bench: $out"; rc=1; continue; }
		echo "$out" | sed "s/^BENCH write /BENCH write driver=$driver mode=$mode rps_sock_flow_entries=$sfe /"
	done
done
echo 0 >$SFE
echo 0 >/sys/module/rust_tun/parameters/unguarded
exit $rc
