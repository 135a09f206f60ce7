# SPDX-License-Identifier: GPL-2.0
# Guest side of benchmark table 5 (the virtio-net header's throughput):
# `rtun bench-gso DIR COUNT CHUNK` moves COUNT 64000-byte UDP payloads per
# driver as GSO packets through a TUN device with IFF_VNET_HDR, rust_tun
# and C tun side by side in one process, taking turns every CHUNK payloads:
# writes (segmented by the stack for a local socket) and reads (USO
# super-packets from a local sender); without and with IFF_NAPI
# (RTUN_NAPI=1: the devices are created with it, so writes go through
# their NAPI context and GRO). bench.sh boots this several times with
# different memory layouts; `round` is the boot.
# usage: bench-gso.sh [COUNT] [CHUNK] [ROUND]
set -u
COUNT=${1:-600}
CHUNK=${2:-20}
ROUND=${3:-1}
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko || exit 1
# The state every measurement starts from (bench-settle.sh).
. /lib/rtun-bench-settle.sh
bench_settle
rc=0
for napi in 0 1; do
	for dir in write read; do
		out=$(RTUN_NAPI=$napi rtun bench-gso "$dir" "$COUNT" "$CHUNK") ||
			{ echo "bench: $out"; rc=1; continue; }
		echo "$out" | sed "s/^BENCH gso /BENCH gso napi=$napi round=$ROUND /"
	done
done
exit $rc
