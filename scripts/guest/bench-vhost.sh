# SPDX-License-Identifier: GPL-2.0
# Guest side of benchmark table 6 (vhost-net): `rtun bench-vhost NODE DIR
# COUNT` moves COUNT frames through vhost-net and a TAP of each driver,
# `tx` (vhost-net's transmit queue into the stack: the sendmsg of
# TUN_MSG_PTR batches) and `rx` (the stack into vhost-net's receive
# buffers: the ring consumed by vhost-net, recvmsg) and `tx-xdp` (`tx` with
# an XDP_PASS program on the TAP: SOCK_XDP, and each buffer of the batch
# through the program, tun_xdp_one()). vhost_net.ko binds to
# one provider of tun.ko's exports at a time, so each driver has its turn
# with vhost_net.ko loaded over its provider (tun.ko; rust_tun_vhost.ko),
# in ROUNDS rounds: rust_tun, tun, rust_tun, tun, ...
# usage: bench-vhost.sh [COUNT] [ROUNDS]
set -u
COUNT=${1:-20000}
ROUNDS=${2:-2}
M=/lib/modules
insmod $M/rust_tun.ko || exit 1
# As the other tables: the state every measurement starts from.
. /lib/rtun-bench-settle.sh
bench_settle
vhost_up() {
	for m in vhost_iotlb vhost tap vhost_net; do
		[ ! -f $M/$m.ko ] || insmod $M/$m.ko || return 1
	done
}
vhost_down() {
	for m in vhost_net tap vhost vhost_iotlb; do
		! grep -q "^$m " /proc/modules || rmmod $m
	done
}
rc=0
for round in $(seq 1 "$ROUNDS"); do
	for row in rust_tun:rust_tun_vhost:/dev/net/rust_tun tun:tun:/dev/net/tun; do
		driver=${row%%:*} rest=${row#*:} provider=${rest%%:*} node=${rest#*:}
		insmod $M/$provider.ko && vhost_up || { echo "bench: loading $provider and vhost_net failed"; rc=1; continue; }
		for dir in tx rx tx-xdp; do
			out=$(rtun bench-vhost "$node" "$dir" "$COUNT") || { echo "bench: $out"; rc=1; continue; }
			echo "$out" | sed "s/^BENCH vhost /BENCH vhost driver=$driver round=$round /"
		done
		vhost_down
		rmmod "$provider" || rc=1
	done
done
exit $rc
