#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the instructions go, per function, rust_tun against C tun: boots
# the test kernel under -icount with scripts/prof/insn-count.c (a QEMU TCG
# plugin counting every instruction executed, kernel and user space) and
# prints, per function (kernel and both modules), instructions per packet
# or payload for each driver and the difference, largest first. A
# development tool, not part of the tests or the benchmarks.
#
# usage: scripts/profile.sh [--debian|--6.12] gso [write|read] [COUNT] [NAPI] [CHUNK]
#        scripts/profile.sh [--debian|--6.12] xmit [COUNT]
#        scripts/profile.sh [--debian|--6.12] vhost [tx|rx] [COUNT]
#        scripts/profile.sh [--debian|--6.12] xdp [drop|tx|redirect] [COUNT]
# --debian: on Debian's own kernel (booted with nokaslr: the symbols are
# System.map's), rust_tun as scripts/build-debian.sh built it. --6.12: on
# the 6.12 test kernel, with the tree's rust_tun.ko built for it (make
# KDIR=$(scripts/build-kernel.sh --print-kdir 6.12-test)).
# RTUN_PROF_ANNOTATE=STRING: also, for each function whose name holds
# STRING, the instructions executed per packet at each of its offsets
# (to read beside objdump -d of the module).
# gso: COUNT 64 KB GSO payloads per driver through scripts/guest/
# profile-gso.sh (the drivers take turns every CHUNK payloads, as in the
# benchmark; default one turn each). xmit: one round of the xmit benchmark
# (pktgen, COUNT packets per row); the guarded rust_tun rows against C tun's,
# for each RPS mode. vhost: COUNT frames through vhost-net per driver
# (scripts/guest/profile-vhost.sh, one CPU as the benchmark). xdp: COUNT
# writes of one row of the XDP benchmark per driver (profile-xdp.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kernel=test
case "${1:-}" in
--debian) kernel=7.3-debian && shift ;;
--6.12) kernel=6.12-test && shift ;;
esac
what=${1:-gso}
kdir=$(bash "$RT_TOP/scripts/build-kernel.sh" --print-kdir "$kernel")
work=$(mktemp -d /tmp/rtun-prof.XXXXXX)
trap 'rm -rf "$work"' EXIT
ko=$RT_TOP/rust_tun.ko sysmap=$kdir/System.map ctun=$kdir/drivers/net/tun.ko
if [ "$kernel" != 7.3-debian ]; then
	vermagic() { objcopy -O binary --only-section=.modinfo "$1" /dev/stdout | tr '\0' '\n' | sed -n 's/^vermagic=//p'; }
	[ "$(vermagic "$ko")" = "$(vermagic "$ctun")" ] ||
		rt_die "$ko is not built for $kdir: make KDIR=$kdir"
fi
if [ "$kernel" = 7.3-debian ]; then
	mdir=$(rt_debian_moddir)
	ko=$(rt_debian_pkgdir)/modules/rust_tun.ko ctun=$work/tun.ko
	xz -dc "$mdir/kernel/drivers/net/tun.ko.xz" >"$ctun"
	# Debian's System.map is a stub (the real one is in the 1.2 GB -dbg
	# package): the kernel's own text symbols are read once from
	# /proc/kallsyms in a boot with nokaslr (the profile's boot has it too,
	# so the addresses are the same), and kept beside the kernel.
	sysmap=$(dirname "$kdir")/System.map.kallsyms
	if [ ! -s "$sysmap" ]; then
		cat >"$work/kallsyms.sh" <<-'EOF'
			echo KALLSYMS-BEGIN
			grep -E '^[0-9a-f]+ [tTwW] [^ ]+$' /proc/kallsyms | gzip -c | base64
			echo KALLSYMS-END
		EOF
		RTUN_KERNEL_ARGS="nokaslr quiet" bash "$RT_TOP/scripts/run-guest.sh" --kernel "$kernel" --module "$ko" \
			--timeout 300 --log "$work/kallsyms.log" "$work/kallsyms.sh" >/dev/null ||
			rt_die "the kallsyms boot failed"
		sed -n '/^KALLSYMS-BEGIN$/,/^KALLSYMS-END$/p' "$work/kallsyms.log" | sed '1d;$d' |
			base64 -d | gunzip >"$sysmap.tmp" && mv "$sysmap.tmp" "$sysmap"
	fi
	export RTUN_KERNEL_ARGS=nokaslr
fi
gcc -O2 -shared -fPIC -o "$work/insn-count.so" "$RT_TOP/scripts/prof/insn-count.c"
trigger=$(awk '$3 == "ksys_sync" { print $1 }' "$sysmap")
export RTUN_QEMU_ARGS="-plugin $work/insn-count.so,trigger=$trigger,out=$work/count"
case $what in
gso)
	dir=${2:-write} count=${3:-200} napi=${4:-0}
	chunk=${5:-$count}
	bash "$RT_TOP/scripts/run-guest.sh" --kernel "$kernel" --module "$ko" --icount --timeout 1800 --log "$work/console.log" \
		"$RT_TOP/scripts/guest/profile-gso.sh" "$dir" "$count" "$napi" "$chunk" >/dev/null
	# count.0: up to the first mark; then each turn (2k + 1) and what came
	# between turns (2k + 2). Turns alternate as bench_gso's: rust_tun
	# first in even rounds of two turns, C tun first in odd ones.
	turns=$(python3 -c "
n = 2 * ($count // $chunk)
print(' '.join('%d:%s' % (2 * k + 1, 'rust' if (k % 2 == 0) == ((k // 2) % 2 == 0) else 'c') for k in range(n)))")
	compare="gso:rust:c"
	;;
xmit)
	count=${2:-50000}
	bash "$RT_TOP/scripts/run-guest.sh" --kernel "$kernel" --module "$ko" --icount --timeout 1800 \
		--log "$work/console.log" "$RT_TOP/scripts/guest/bench-xmit.sh" "$count" 1 prof >/dev/null
	# Turns in bench-xmit.sh's order: rust_tun guarded, unguarded, C tun,
	# each RPS off, rps_cpus, rfs.
	turns=
	k=0
	for row in rg ru c; do
		for rps in off rps_cpus rfs; do
			turns="$turns $((2 * k + 1)):$row-$rps"
			k=$((k + 1))
		done
	done
	compare="off:rg-off:c-off rps_cpus:rg-rps_cpus:c-rps_cpus rfs:rg-rfs:c-rfs"
	;;
vhost)
	dir=${2:-tx} count=${3:-6400}
	RTUN_PROF_SYNC=1 bash "$RT_TOP/scripts/run-guest.sh" --kernel "$kernel" --module "$ko" --icount --smp 1 \
		--timeout 1800 --log "$work/console.log" "$RT_TOP/scripts/guest/profile-vhost.sh" "$dir" "$count" >/dev/null
	# bench-vhost marks its measured loop: rust_tun's turn, then C tun's.
	turns="1:rust 3:c"
	compare="vhost-$dir:rust:c"
	;;
xdp)
	row=${2:-drop} count=${3:-5000}
	bash "$RT_TOP/scripts/run-guest.sh" --kernel "$kernel" --module "$ko" --icount --timeout 1800 \
		--log "$work/console.log" "$RT_TOP/scripts/guest/profile-xdp.sh" "$row" "$count" >/dev/null
	# bench-xdp marks its measured loop: rust_tun's turn, then C tun's.
	turns="1:rust 3:c"
	compare="xdp-$row:rust:c"
	;;
*) rt_die "usage: $0 gso|xmit|vhost|xdp ..." ;;
esac
python3 - "$ko" "$ctun" "$sysmap" "$work" "$count" "$turns" "$compare" "$(dirname "$ctun")/../vhost" "${RTUN_PROF_ANNOTATE:-}" <<'PY'
import bisect, os, re, subprocess, sys
ko_rust, ko_c, sysmap, work, turns, compare = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[6], sys.argv[7]
vhost_dir = sys.argv[8]
annotate = sys.argv[9]
count = int(sys.argv[5])
syms = []
for line in open(sysmap):
    a, t, n = line.split()[:3]
    if t in "tTwW":
        syms.append((int(a, 16), n))
log = open(os.path.join(work, "console.log")).read()
def ko_of(m):
    if m == "rust_tun":
        return ko_rust
    if m == "rust_tun_vhost":
        return os.path.join(os.path.dirname(ko_rust), "rust_tun_vhost.ko")
    if m.startswith("vhost"):
        return os.path.join(vhost_dir, m + ".ko")
    return ko_c
def module_syms(m, base):
    out = subprocess.run(["llvm-nm-19", "--defined-only", ko_of(m)], capture_output=True, text=True).stdout
    for l in out.splitlines():
        a, t, n = l.split()[:3]
        if t in "tT":
            yield (int(base, 16) + int(a, 16), "%s:%s" % (m, n))
# "PROFILE module NAME BASE": for every turn; "PROFILE module@I NAME
# BASE": a module loaded for turn I only (profile-vhost.sh).
for m, base in re.findall(r"PROFILE module (\S+) (0x[0-9a-f]+)", log):
    syms.extend(module_syms(m, base))
per_turn = {}
for i, m, base in re.findall(r"PROFILE module@(\d+) (\S+) (0x[0-9a-f]+)", log):
    per_turn.setdefault(i, []).extend(module_syms(m, base))
base_syms = syms
groups = {}
for t in turns.split():
    i, label = t.split(":")
    syms = sorted(base_syms + per_turn.get(i, []))
    addrs = [a for a, _ in syms]
    per = groups.setdefault(label, {})
    for l in open(os.path.join(work, "count.%s" % i)):
        a, c = l.split()
        a = int(a, 16)
        k = bisect.bisect_right(addrs, a) - 1
        name = "[user space]" if a < 1 << 47 else syms[k][1] if k >= 0 else "?"
        per[name] = per.get(name, 0) + int(c)
        if annotate and annotate in name:
            per.setdefault(("annotate", name), {})[a - syms[k][0]] = int(c)
for cmp in compare.split():
    title, ra, rb = cmp.split(":")
    a, b = groups[ra], groups[rb]
    ta, tb = (sum(v for k, v in g.items() if isinstance(k, str)) / count for g in (a, b))
    print("== %s: per packet/payload: rust_tun %.1f, tun %.1f, difference %+.1f" % (title, ta, tb, ta - tb))
    names = [n for n in set(a) | set(b) if isinstance(n, str)]
    rows = sorted(((a.get(n, 0) - b.get(n, 0)) / count, n, a.get(n, 0) / count, b.get(n, 0) / count)
                  for n in names)
    rows.sort(key=lambda x: -abs(x[0]))
    print("%-60s %10s %10s %9s" % ("function", "rust_tun", "tun", "diff"))
    for d, n, x, y in rows[:40]:
        if abs(d) >= 0.05:
            print("%-60s %10.1f %10.1f %+9.1f" % (n[:60], x, y, d))
    for label, g in ((ra, a), (rb, b)):
        for key in sorted(k for k in g if not isinstance(k, str)):
            print("-- %s %s: offset, instructions executed per packet" % (label, key[1]))
            for off, c in sorted(g[key].items()):
                print("%8x %8.2f" % (off, c / count))
PY
