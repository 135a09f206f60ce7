# SPDX-License-Identifier: GPL-2.0
# Guest side of the XDP benchmark table (xdp): `rtun bench-xdp` writes
# COUNT 60-byte frames from CPU 1, non-blocking, into a TAP whose native
# XDP program decides their fate; rows, for rust_tun (guarded) and C tun:
# drop (XDP_DROP), tx (XDP_TX, each frame read back by the writer) and
# redirect (bpf_redirect() into a second TAP of the same driver, through
# its ndo_xdp_xmit, each frame read back from it). The drivers take turns,
# ROUNDS rounds (bench-report.py takes each row's median over the boots
# bench.sh runs this in).
# usage: bench-xdp.sh [COUNT] [ROUNDS]
set -u
COUNT=${1:-50000}
ROUNDS=${2:-1}
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko || exit 1
# The state every measurement starts from (bench-settle.sh).
. /lib/rtun-bench-settle.sh
bench_settle
rc=0
for round in $(seq 1 "$ROUNDS"); do
	for row in drop tx redirect; do
		for d in rust_tun:/dev/net/rust_tun tun:/dev/net/tun; do
			driver=${d%%:*} node=${d#*:}
			out=$(rtun bench-xdp "$node" "$row" "$COUNT") || { echo "bench: $driver $row: $out"; rc=1; continue; }
			echo "$out" | sed "s/^BENCH xdp /BENCH xdp driver=$driver round=$round /"
		done
	done
done
exit $rc
