# SPDX-License-Identifier: GPL-2.0
# Guest side of benchmark table 1 (xmit path, the rps_needed patch's table):
# pktgen (start_xmit, 64-byte UDP, COUNT packets, clone_skb 0, burst 1) on
# CPU 0 into a single-queue TAP device drained by a reader on CPU 1; rows:
# rust_tun guarded, rust_tun unguarded, C tun, each with RPS off, RPS on by
# rps_cpus, and RPS+RFS on by rps_sock_flow_entries. ROUNDS rounds of all
# rows (bench-report.py takes each row's median): with two vCPUs the
# interleaving of pktgen, the reader and RPS's backlog shifts between
# boots and rows by a few tenths of a percent.
# usage: bench-xmit.sh [COUNT] [ROUNDS] [prof]
# (prof: scripts/profile.sh's run, a sync before and after each row's run)
set -u
COUNT=${1:-200000}
ROUNDS=${2:-3}
[ "${3:-}" != prof ] || RTUN_PROF_SYNC=1
PG=/proc/net/pktgen
SFE=/proc/sys/net/core/rps_sock_flow_entries
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko && insmod /lib/modules/pktgen.ko || exit 1
# The state every measurement starts from (bench-settle.sh).
. /lib/rtun-bench-settle.sh
bench_settle
if [ -n "${RTUN_PROF_SYNC:-}" ]; then
	for m in rust_tun tun; do
		echo "PROFILE module $m $(cat /sys/module/$m/sections/.text)"
	done
fi

pg_set() {
	echo "$2" >"$1"
	grep -q "Result: OK:" "$1" || { echo "pktgen: '$2' on $1: $(grep Result: "$1")"; return 1; }
}

rps_mode() { # rps_mode DEV off|rps_cpus|rfs
	case $2 in
	off) echo 0 >$SFE; echo 0 >/sys/class/net/$1/queues/rx-0/rps_cpus ;;
	rps_cpus) echo 0 >$SFE; echo 3 >/sys/class/net/$1/queues/rx-0/rps_cpus ;;
	rfs) echo 32768 >$SFE; echo 0 >/sys/class/net/$1/queues/rx-0/rps_cpus ;;
	esac
}

rc=0
row() { # row DRIVER MODE NODE DEV
	driver=$1 mode=$2 node=$3 dev=$4
	[ "$driver" = rust_tun ] && { [ "$mode" = unguarded ] && echo 1 || echo 0; } \
		>/sys/module/rust_tun/parameters/unguarded
	taskset -c 1 rtun tap-drain "$node" "$dev" >/dev/null &
	drain=$!
	i=0
	until [ -e /sys/class/net/$dev ] && [ "$(cat /sys/class/net/$dev/carrier 2>/dev/null)" = 1 ]; do
		i=$((i + 1)); [ $i -lt 200 ] || { echo "bench: $dev not up"; rc=1; return; }
		sleep 0.05
	done
	echo 0 >/sys/module/rust_tun/parameters/unguarded
	for rps in off rps_cpus rfs; do
		rps_mode "$dev" $rps
		pg_set $PG/kpktgend_0 "rem_device_all" || { rc=1; return; }
		pg_set $PG/kpktgend_0 "add_device $dev" || { rc=1; return; }
		for cmd in "count $COUNT" "clone_skb 0" "burst 1" "pkt_size 64" \
			"xmit_mode start_xmit" "delay 0" "dst 10.99.0.2" \
			"dst_mac 02:00:00:00:00:02"; do
			pg_set $PG/$dev "$cmd" || { rc=1; return; }
		done
		hashes() { sed -n 's/^rps_hashes //p' /sys/kernel/debug/rust_tun/$dev/stats; }
		[ "$driver" = rust_tun ] && h0=$(hashes)
		# scripts/profile.sh: marks around the run for the plugin.
		[ -z "${RTUN_PROF_SYNC:-}" ] || sync
		echo start >$PG/pgctrl
		[ -z "${RTUN_PROF_SYNC:-}" ] || sync
		res=$(grep -A1 "Result:" $PG/$dev | tr '\n' ' ')
		echo "$res" | grep -q "Result: OK:" || { echo "bench: $dev: $res"; rc=1; }
		pps=$(echo "$res" | sed -n 's/.* \([0-9]*\)pps.*/\1/p')
		usec=$(echo "$res" | sed -n 's/.*OK: \([0-9]*\)(.*/\1/p')
		err=$(echo "$res" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
		extra=
		[ "$driver" = rust_tun ] && extra=" rps_hashes=$(($(hashes) - h0))"
		echo "BENCH xmit driver=$driver mode=$mode rps=$rps round=$round count=$COUNT usec=$usec pps=$pps errors=$err$extra"
		pg_set $PG/kpktgend_0 "rem_device_all"
	done
	rps_mode "$dev" off
	kill $drain
	wait $drain 2>/dev/null
}

round=1
while [ $round -le "$ROUNDS" ]; do
	row rust_tun guarded /dev/net/rust_tun rtap0
	row rust_tun unguarded /dev/net/rust_tun rtap1
	row tun guarded /dev/net/tun tap0
	round=$((round + 1))
done
exit $rc
