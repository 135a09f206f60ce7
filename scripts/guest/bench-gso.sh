# SPDX-License-Identifier: GPL-2.0
# Guest side of benchmark table 5 (the virtio-net header's throughput):
# `rtun bench-gso` moves COUNT 64000-byte UDP payloads as GSO packets
# through a TUN device with IFF_VNET_HDR, writes (segmented by the stack
# for a local socket) and reads (USO super-packets from a local sender);
# rows: rust_tun and C tun, each direction, without and with IFF_NAPI
# (RTUN_NAPI=1: the device is created with it, so writes go through its
# NAPI context and GRO). ROUNDS rounds, alternating which driver goes
# first; bench-report.py takes each row's median, and C tun's own spread
# across the rounds as the noise of the comparison.
# usage: bench-gso.sh [COUNT] [ROUNDS]
set -u
COUNT=${1:-300}
ROUNDS=${2:-3}
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko || exit 1
rc=0
# Warm-up, not reported: the first run of a boot pays for caches and slabs
# growing, whichever driver it is.
for napi in 0 1; do
	for node in /dev/net/rust_tun /dev/net/tun; do
		for dir in write read; do
			RTUN_NAPI=$napi rtun bench-gso "$node" bg0 "$dir" 30 >/dev/null || rc=1
		done
	done
done
round=1
while [ $round -le "$ROUNDS" ]; do
	if [ $((round % 2)) = 1 ]; then
		rows="rust_tun:/dev/net/rust_tun tun:/dev/net/tun"
	else
		rows="tun:/dev/net/tun rust_tun:/dev/net/rust_tun"
	fi
	for napi in 0 1; do
		for row in $rows; do
			driver=${row%%:*} node=${row#*:}
			for dir in write read; do
				out=$(RTUN_NAPI=$napi rtun bench-gso "$node" bg0 "$dir" "$COUNT") ||
					{ echo "bench: $out"; rc=1; continue; }
				echo "$out" | sed "s/^BENCH gso /BENCH gso driver=$driver napi=$napi round=$round /"
			done
		done
	done
	round=$((round + 1))
done
exit $rc
