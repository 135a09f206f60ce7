# SPDX-License-Identifier: GPL-2.0
# Guest side of the steering benchmark table (steer): pktgen (queue_xmit,
# 64-byte UDP, COUNT packets, clone_skb 0, burst 1, UDP source ports 9 to
# 1031 in sequence: pktgen's udp_src_max is exclusive) on CPU 0 into a
# four-queue TAP device drained by `rtun steer-drain` (one reader thread
# per queue) on CPU 1; rows: rust_tun (guarded) and C tun, each with a
# steering eBPF program (prog=bpf: the low byte of the UDP source port,
# modulo the four queues, picks the queue) and without one (prog=none: the
# flow table's automq path). queue_xmit, not start_xmit: dev_queue_xmit()
# calls the device's ndo_select_queue, where the program runs; start_xmit
# hands the packet to a queue pktgen picked.
# ROUNDS rounds of all rows (bench-report.py takes each row's median). Each
# row's line also gives the frames each queue's reader got (queues=N0/..);
# with the program a queue left empty fails the run.
# usage: bench-steer.sh [COUNT] [ROUNDS]
set -u
COUNT=${1:-200000}
ROUNDS=${2:-3}
QUEUES=4
PG=/proc/net/pktgen
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko && insmod /lib/modules/pktgen.ko || exit 1
# The state every measurement starts from (bench-settle.sh).
. /lib/rtun-bench-settle.sh
bench_settle

pg_set() {
	echo "$2" >"$1"
	grep -q "Result: OK:" "$1" || { echo "pktgen: '$2' on $1: $(grep Result: "$1")"; return 1; }
}

rc=0
row() { # row DRIVER PROG NODE DEV
	driver=$1 prog=$2 node=$3 dev=$4
	[ "$driver" = rust_tun ] && echo 0 >/sys/module/rust_tun/parameters/unguarded
	out=/tmp/steer-$dev.out
	taskset -c 1 rtun steer-drain "$node" "$dev" $QUEUES "$prog" >"$out" &
	drain=$!
	i=0
	until [ -e /sys/class/net/$dev ] && [ "$(cat /sys/class/net/$dev/carrier 2>/dev/null)" = 1 ]; do
		i=$((i + 1)); [ $i -lt 200 ] || { echo "bench: $dev not up"; rc=1; kill $drain; wait $drain; return; }
		sleep 0.05
	done
	ok=1
	pg_set $PG/kpktgend_0 "rem_device_all" || ok=0
	[ $ok = 1 ] && pg_set $PG/kpktgend_0 "add_device $dev" || ok=0
	for cmd in "count $COUNT" "clone_skb 0" "burst 1" "pkt_size 64" \
		"xmit_mode queue_xmit" "delay 0" "dst 10.99.0.2" \
		"dst_mac 02:00:00:00:00:02" "udp_src_min 9" "udp_src_max 1032"; do
		[ $ok = 1 ] && pg_set $PG/$dev "$cmd" || ok=0
	done
	if [ $ok = 1 ]; then
		drops0=$(cat /sys/class/net/$dev/statistics/tx_dropped)
		echo start >$PG/pgctrl
		res=$(grep -A1 "Result:" $PG/$dev | tr '\n' ' ')
		echo "$res" | grep -q "Result: OK:" || { echo "bench: $dev: $res"; rc=1; }
		pps=$(echo "$res" | sed -n 's/.* \([0-9]*\)pps.*/\1/p')
		usec=$(echo "$res" | sed -n 's/.*OK: \([0-9]*\)(.*/\1/p')
		err=$(echo "$res" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
		drops=$(($(cat /sys/class/net/$dev/statistics/tx_dropped) - drops0))
		pg_set $PG/kpktgend_0 "rem_device_all"
	else
		rc=1
	fi
	# The readers' last frames, then their counts (printed on SIGTERM).
	sleep 0.1
	kill $drain
	wait $drain 2>/dev/null
	[ $ok = 1 ] || return
	queues=$(sed -n 's/^STEER queues=//p' "$out")
	[ -n "$queues" ] || { echo "bench: $dev: no per-queue counts: $(cat "$out")"; rc=1; queues=-; }
	# With the program every queue must have had its share.
	if [ "$prog" = bpf ] && echo "/$queues/" | grep -q '/0/'; then
		echo "bench: $dev: prog=bpf left a queue empty: $queues"; rc=1
	fi
	echo "BENCH steer driver=$driver prog=$prog round=$round count=$COUNT usec=$usec pps=$pps errors=$err dropped=$drops queues=$queues"
}

round=1
while [ $round -le "$ROUNDS" ]; do
	row rust_tun bpf /dev/net/rust_tun rsteer0
	row rust_tun none /dev/net/rust_tun rsteer1
	row tun bpf /dev/net/tun steer0
	row tun none /dev/net/tun steer1
	round=$((round + 1))
done
exit $rc
