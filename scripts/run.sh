#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: install the toolchain, build (or reuse) the test kernel,
# build rust_tun.ko and the guest programs, boot the guest under QEMU's
# -icount, insmod, create TAP devices, drive them with pktgen and print a
# table of pps, guest instructions per packet and rust_tun / C tun -- for
# rust_tun (guarded, and unguarded: tun before the two RPS/RFS patches) and,
# side by side, the C tun, with RPS off, RPS on (rps_cpus) and RPS+RFS on
# (rps_sock_flow_entries).
#
# The figures are deterministic: under -icount shift=0,sleep=off a guest
# nanosecond is one executed instruction, so they do not depend on the
# host's speed or load (plain TCG's pps move by 20 % and more between runs
# of one build, and are not printed). Three boots, each with another
# initramfs padding (the guest's memory layout moves instruction counts by
# up to 1 %, C tun's as much as rust_tun's); each row is the median.
#
# The kernel is the default series' test kernel, 7.3 (the one distributions
# build with Rust); RUST_TUN_KERNEL=6.12 picks 6.12 LTS. C tun is that
# tree's tun.ko: on 7.3 it is guarded on both paths (both seed patches are
# upstream there), on 6.12 on the transmit path only.
#
# --debian: the same on Debian's own kernel (7.3.4+deb13-amd64, its tun.ko
# and pktgen.ko), rust_tun built for it by scripts/build-debian.sh.
#
# usage: scripts/run.sh [--debian] [COUNT]   (packets per row and boot, default 200000)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kernel=$RT_SERIES-test title="Linux $RT_SERIES"
if [ "${1:-}" = --debian ]; then
	kernel=7.3-debian title="Debian's own kernel $RT_DEBIAN_KREL"
	shift
fi
count=${1:-200000}
boots=3

bash "$RT_TOP/scripts/install-toolchain.sh" >&2
if [ "$kernel" = 7.3-debian ]; then
	kdir=$(bash "$RT_TOP/scripts/build-debian.sh")
	ko=$(rt_debian_pkgdir)/modules/rust_tun.ko
else
	kdir=$(bash "$RT_TOP/scripts/build-kernel.sh" "$kernel")
	make -C "$RT_TOP" KDIR="$kdir" >&2
	ko=$RT_TOP/rust_tun.ko
fi
bash "$RT_TOP/scripts/build-guest.sh" >&2
logs=$(mktemp -d /tmp/rtun-run.XXXXXX)
trap 'rm -rf "$logs"' EXIT
# The boots run at once: under -icount a guest's figures count its own
# instructions, so a guest beside it on the host changes its wall time,
# not its numbers (each -icount guest is one host thread: three boots on
# two cores take about half the time of three in a row).
rt_log "pktgen under -icount: $boots boots at once"
pids=()
for boot in $(seq $boots); do
	RTUN_PAD_KB=$(((boot - 1) * 397)) \
		bash "$RT_TOP/scripts/run-guest.sh" --kernel "$kernel" --module "$ko" --icount --timeout 900 --log "$logs/$boot.log" \
		"$RT_TOP/scripts/guest/bench-xmit.sh" "$count" 1 >"$logs/$boot.out" 2>&1 &
	pids+=($!)
done
for boot in $(seq $boots); do
	wait "${pids[boot - 1]}" ||
		{ cat "$logs/$boot.out" >&2; tail -40 "$logs/$boot.log" >&2; rt_die "boot $boot failed (its console is above)"; }
	grep '^BENCH xmit ' "$logs/$boot.log" >>"$logs/bench"
done

echo "== $title: rust_tun and C tun (tun.ko of the same tree): pktgen (xmit_mode start_xmit, 64-byte UDP, $count packets) into a single-queue TAP, a reader on CPU 1 =="
echo "These are guest instructions, not host time: QEMU -icount shift=0 makes a guest nanosecond one instruction,"
echo "so pps = 1e9 / instructions per packet (both vCPUs: pktgen's transmit and the reader's read), the same on any"
echo "host. Median of $boots boots. The full benchmarks (write path, RFS record step, GSO, memory): scripts/bench.sh,"
echo "Documentation/benchmarks/linux-$RT_SERIES/results.md; where the instructions go: scripts/profile.sh."
awk '
	{
		for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["errors"] != 0) { bad = bad " " f["driver"] "/" f["mode"] "/" f["rps"] "(errors " f["errors"] ")" }
		key = f["driver"] " " f["mode"] " " f["rps"]
		if (!(key in n)) order[++rows] = key
		v[key, ++n[key]] = f["pps"]
	}
	function median(key,   m, i, j, t, a) {
		m = n[key]
		for (i = 1; i <= m; i++) a[i] = v[key, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		printf "%-9s %-10s %-9s %10s %12s %14s\n", "driver", "mode", "RPS", "pps", "instr/pkt", "rust_tun/tun"
		for (r = 1; r <= rows; r++) { split(order[r], k, " "); if (k[1] == "tun") ref[k[3]] = median(order[r]) }
		for (r = 1; r <= rows; r++) {
			split(order[r], k, " ")
			p = median(order[r])
			ratio = (k[1] == "tun" || !(k[3] in ref)) ? "" : sprintf("%.4f", p / ref[k[3]])
			printf "%-9s %-10s %-9s %10d %12.1f %14s\n", k[1], k[2], k[3], p, 1e9 / p, ratio
		}
		print "rust_tun/tun: pps ratio (> 1: rust_tun spends fewer instructions per packet). unguarded: tun before the patches."
		if (bad != "") { print "pktgen reported errors:" bad; exit 1 }
	}' "$logs/bench"
