# SPDX-License-Identifier: GPL-2.0
# Guest side of benchmark table 5 (the virtio-net header's throughput):
# `rtun bench-gso` moves COUNT 64000-byte UDP payloads as GSO packets
# through a TUN device with IFF_VNET_HDR, writes (segmented by the stack
# for a local socket) and reads (USO super-packets from a local sender);
# rows: rust_tun and C tun, each direction. No NAPI rows: rust_tun does not
# implement IFF_NAPI.
# usage: bench-gso.sh [COUNT]
set -u
COUNT=${1:-300}
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko || exit 1
rc=0
# Warm-up, not reported: the first run of a boot pays for caches and slabs
# growing, whichever driver it is.
for node in /dev/net/rust_tun /dev/net/tun; do
	for dir in write read; do
		rtun bench-gso "$node" bg0 "$dir" 30 >/dev/null || rc=1
	done
done
for row in rust_tun:/dev/net/rust_tun tun:/dev/net/tun; do
	driver=${row%%:*} node=${row#*:}
	for dir in write read; do
		out=$(rtun bench-gso "$node" bg0 "$dir" "$COUNT") || { echo "bench: $out"; rc=1; continue; }
		echo "$out" | sed "s/^BENCH gso /BENCH gso driver=$driver napi=0 /"
	done
done
exit $rc
