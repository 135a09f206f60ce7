# SPDX-License-Identifier: GPL-2.0
# Guest side of the main job: pktgen (xmit_mode start_xmit, 64-byte UDP)
# into a TAP device of rust_tun, then of the C tun, each drained by a reader.
# usage: pktgen.sh [COUNT]
set -u
COUNT=${1:-100000}
PG=/proc/net/pktgen

insmod /lib/modules/rust_tun.ko || exit 1
insmod /lib/modules/tun.ko || exit 1
insmod /lib/modules/pktgen.ko || exit 1

pg_set() { # pg_set FILE CMD: like samples/pktgen/functions.sh
	echo "$2" >"$1"
	if ! grep -q "Result: OK:" "$1"; then
		echo "pktgen: '$2' on $1 failed: $(grep Result: "$1")"
		return 1
	fi
}

run_one() { # run_one NODE IFNAME
	node=$1 dev=$2
	rtun tap-drain "$node" "$dev" &
	drain=$!
	i=0
	until [ "$(cat /sys/class/net/$dev/operstate 2>/dev/null)" = up ] ||
		[ "$(cat /sys/class/net/$dev/operstate 2>/dev/null)" = unknown ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "pktgen: $dev did not come up"; return 1; }
		sleep 0.1
	done
	pg_set $PG/kpktgend_0 "rem_device_all" || return 1
	pg_set $PG/kpktgend_0 "add_device $dev" || return 1
	for cmd in "count $COUNT" "clone_skb 0" "burst 1" "pkt_size 64" \
		"xmit_mode start_xmit" "delay 0" "dst 10.99.0.2" \
		"dst_mac 02:00:00:00:00:02"; do
		pg_set $PG/$dev "$cmd" || return 1
	done
	echo start >$PG/pgctrl
	echo "pktgen $dev ($node):"
	grep -A2 "Result:" $PG/$dev
	grep -q "Result: OK:" $PG/$dev || return 1
	echo "pktgen: $dev tx_packets=$(cat /sys/class/net/$dev/statistics/tx_packets) tx_dropped=$(cat /sys/class/net/$dev/statistics/tx_dropped)"
	pg_set $PG/kpktgend_0 "rem_device_all"
	kill $drain
	wait $drain 2>/dev/null
	return 0
}

rc=0
run_one /dev/net/rust_tun rtap0 || rc=1
run_one /dev/net/tun tap0 || rc=1
rmmod pktgen rust_tun tun || rc=1
exit $rc
