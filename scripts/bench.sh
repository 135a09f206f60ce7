#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks (not part of the tests' pass/fail): boots the test kernel
# in QEMU with -icount shift=0,sleep=off (guest time = instructions, so the
# figures repeat), one boot per table:
#   1. xmit path: pktgen into a single-queue TAP (rps_needed patch's table)
#   7. steering: pktgen (queue_xmit) into a four-queue TAP, the queues picked
#      by a steering eBPF program or by the flow table, in five boots as 1
#   2. write path: writers over many flows of a 2-queue TUN (rfs_needed's)
#   3. micro-benchmark: 10M calls of the record step, Rust and C
#   5. GSO: 64 KB UDP GSO writes and reads with the virtio-net header, both
#      drivers taking turns in one process, in five boots as table 1
#   8. XDP: non-blocking writes into a TAP whose native program drops
#      them, sends them back (XDP_TX) or redirects them into a second TAP
#      (ndo_xdp_xmit), in five boots as table 1 (and vhost-net's transmit
#      through an XDP_PASS program, a row of table 6)
#   4. memory: idle persistent devices, rust_tun and C tun (one plain TCG
#      boot for both, rounds alternating which goes first: memory does not
#      depend on time)
# on each kernel series (7.3 and 6.12, each against its own tun.ko), and
# writes Documentation/benchmarks/linux-SERIES/{xmit,write,micro,mem,gso,vhost,steer,xdp}.json,
# results.md and chart.svg, then prints each results.md.
#
# usage: scripts/bench.sh [--kernel SERIES] [XMIT_PACKETS] [WRITE_PACKETS]
#   --kernel: only that series (default: both, 7.3 first); 7.3-debian is
#   Debian's own kernel against its own tun.ko (scripts/build-debian.sh),
#   written to Documentation/benchmarks/linux-7.3-debian/, not a default
set -euo pipefail
. "$(dirname "$0")/lib.sh"
series_list=("${RT_SERIES_ALL[@]}")
if [ "${1:-}" = --kernel ]; then
	[ "$2" = 7.3-debian ] || rt_check_series "$2"
	series_list=("$2")
	shift 2
fi
xmit_count=${1:-200000}
write_count=${2:-100000}

bash "$RT_TOP/scripts/install-toolchain.sh" >&2
bash "$RT_TOP/scripts/build-guest.sh" >&2
logs=$(mktemp -d /tmp/rtun-bench.XXXXXX)
trap 'rm -rf "$logs"' EXIT
bench_series() { # bench_series SERIES: every table on one kernel
local series=$1 kdir mod=$logs/mod logs=$logs/$1
mkdir -p "$logs"
local kernel=$series-test
rm -rf "$mod"
if [ "$series" = 7.3-debian ]; then
	# Debian's kernel: the module as its users build it, and the C
	# micro-benchmark module, both built in the trixie userland.
	kernel=7.3-debian
	kdir=$(bash "$RT_TOP/scripts/build-debian.sh" --bench-into "$mod")
else
	kdir=$(bash "$RT_TOP/scripts/build-kernel.sh" "$kernel")
	# The module and the C micro-benchmark module, built in a copy for this
	# kernel (the work tree's build stays as it is).
	rt_copy_module_sources "$mod"
	cp -r "$RT_TOP/bench" "$mod/" 2>/dev/null || true
	make -C "$mod" KDIR="$kdir" >&2
	make -C "$mod" KDIR="$kdir" bench >&2
fi
run() { RTUN_BENCH_DIR=$mod/bench bash "$RT_TOP/scripts/run-guest.sh" --kernel "$kernel" --module "$mod/rust_tun.ko" "$@"; }
# The xmit table's figures repeat to 0.05 % between boots of one guest
# image, but move by up to 1 % -- C tun's as much as rust_tun's -- when
# anything in the image changes (its memory layout decides where slab
# refills and page allocations fall). So it runs in five boots, each with a
# padding file of another size in the initramfs (run-guest.sh's
# RTUN_PAD_KB), and each row's median is reported.
padded_boots() { # padded_boots TABLE COUNT: bench-TABLE.sh COUNT 1 in five padded boots
	local table=$1 boot
	for boot in 1 2 3 4 5; do
		rt_log "table $table, boot $boot"
		RTUN_PAD_KB=$(((boot - 1) * 397)) \
			run --icount --timeout 1800 --log "$logs/$table-$boot.log" \
			"$RT_TOP/scripts/guest/bench-$table.sh" "$2" 1 >/dev/null
		sed "s/^BENCH $table \(.*\) round=1 /BENCH $table \1 round=$boot /" "$logs/$table-$boot.log" >>"$logs/$table.log"
	done
}
padded_boots xmit "$xmit_count"
# The steering table likewise: pktgen (queue_xmit) into a four-queue TAP of
# each driver (bench-steer.sh).
padded_boots steer "$xmit_count"
# The XDP table likewise: both drivers' TAPs taking turns (bench-xdp.sh).
padded_boots xdp 50000
# The GSO table likewise: five boots with the same paddings, both drivers
# taking turns in each (bench-gso.sh).
for boot in 1 2 3 4 5; do
	rt_log "table gso, boot $boot"
	RTUN_PAD_KB=$(((boot - 1) * 397)) \
		run --icount --timeout 1800 --log "$logs/gso-$boot.log" \
		"$RT_TOP/scripts/guest/bench-gso.sh" 1200 20 "$boot" >/dev/null
	cat "$logs/gso-$boot.log" >>"$logs/gso.log"
done
for table in write micro; do
	case $table in
	write) args=("$write_count" 1024) ;;
	micro) args=() ;;
	esac
	rt_log "table $table"
	run --icount --timeout 1800 --log "$logs/$table.log" \
		"$RT_TOP/scripts/guest/bench-$table.sh" "${args[@]}" >/dev/null
done
# vhost-net: on one vCPU (see bench-vhost.sh), the drivers taking turns,
# three rounds in each of five boots with the xmit table's paddings, each
# row's median over the fifteen rounds. (Until 2026-12-06 one boot: its rx
# rows moved by up to 0.4 % between paddings, both drivers alike, and
# 6.12's rx read 0.9993 in one image and 0.9981-1.0018 in five.)
for boot in 1 2 3 4 5; do
	rt_log "table vhost, boot $boot"
	RTUN_PAD_KB=$(((boot - 1) * 397)) \
		run --icount --smp 1 --timeout 1800 --log "$logs/vhost-$boot.log" \
		"$RT_TOP/scripts/guest/bench-vhost.sh" 19200 3 >/dev/null
	awk -v b="$boot" '/^BENCH vhost / { match($0, / round=[0-9]+ /); r = substr($0, RSTART + 7, RLENGTH - 8)
		sub(/ round=[0-9]+ /, " round=" ((b - 1) * 3 + r) " ") } { print }' "$logs/vhost-$boot.log" >>"$logs/vhost.log"
done
rt_log "table mem"
run --timeout 3600 --log "$logs/mem.log" \
	"$RT_TOP/scripts/guest/bench-mem.sh" >/dev/null
python3 "$RT_TOP/scripts/bench-report.py" "$RT_TOP/Documentation/benchmarks/linux-$series" \
	"$logs/xmit.log" "$logs/write.log" "$logs/micro.log" "$logs/mem.log" "$logs/gso.log" "$series" \
	"$logs/vhost.log" "$logs/steer.log" "$logs/xdp.log"
}
for series in "${series_list[@]}"; do
	rt_log "benchmarks on Linux $series"
	bench_series "$series"
done
