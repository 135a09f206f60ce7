#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the instructions go, per function, rust_tun against C tun: boots
# the test kernel under -icount with scripts/prof/insn-count.c (a QEMU TCG
# plugin counting every kernel instruction executed) and runs COUNT GSO
# payloads through each driver (scripts/guest/profile-gso.sh); prints, per
# function (kernel and both modules), instructions per payload for each
# driver and the difference, largest first. A development tool, not part
# of the tests or the benchmarks.
#
# usage: scripts/profile.sh [write|read] [COUNT] [NAPI] [CHUNK]
# (CHUNK: the drivers take turns every CHUNK payloads, as in the benchmark;
# default COUNT, one turn each)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir=${1:-write}
count=${2:-200}
napi=${3:-0}
chunk=${4:-$count}
kdir=$(bash "$RT_TOP/scripts/build-kernel.sh" --print-kdir test)
work=$(mktemp -d /tmp/rtun-prof.XXXXXX)
trap 'rm -rf "$work"' EXIT
gcc -O2 -shared -fPIC -o "$work/insn-count.so" "$RT_TOP/scripts/prof/insn-count.c"
trigger=$(awk '$3 == "ksys_sync" { print $1 }' "$kdir/System.map")
RTUN_QEMU_ARGS="-plugin $work/insn-count.so,trigger=$trigger,out=$work/count" \
	bash "$RT_TOP/scripts/run-guest.sh" --icount --timeout 1800 --log "$work/console.log" \
	"$RT_TOP/scripts/guest/profile-gso.sh" "$dir" "$count" "$napi" "$chunk" >/dev/null
python3 - "$kdir" "$work" "$count" "$chunk" <<'PY'
import bisect, glob, os, re, subprocess, sys
kdir, work, count, chunk = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
syms = []
for line in open(os.path.join(kdir, "System.map")):
    a, t, n = line.split()[:3]
    if t in "tTwW":
        syms.append((int(a, 16), n))
log = open(os.path.join(work, "console.log")).read()
for m, base in re.findall(r"PROFILE module (\S+) (0x[0-9a-f]+)", log):
    ko = os.path.join(os.environ.get("RT_TOP", "."), "rust_tun.ko") if m == "rust_tun" else \
        os.path.join(kdir, "drivers/net/tun.ko")
    out = subprocess.run(["llvm-nm-19", "--defined-only", ko], capture_output=True, text=True).stdout
    for l in out.splitlines():
        a, t, n = l.split()[:3]
        if t in "tT":
            syms.append((int(base, 16) + int(a, 16), "%s:%s" % (m, n)))
syms.sort()
addrs = [a for a, _ in syms]
def load(i, per):
    for l in open(os.path.join(work, "count.%d" % i)):
        a, c = l.split()
        a = int(a, 16)
        k = bisect.bisect_right(addrs, a) - 1
        name = "[user space]" if a < 1 << 47 else syms[k][1] if k >= 0 else "?"
        per[name] = per.get(name, 0) + int(c)
# count.0: up to the first mark; then each turn (2k + 1) and what came
# between turns (2k + 2). Turns alternate as bench_gso's: rust_tun first in
# even rounds of two turns, C tun first in odd ones.
rust, c = {}, {}
for k in range(2 * (count // chunk)):
    first_rust = (k // 2) % 2 == 0
    load(2 * k + 1, rust if (k % 2 == 0) == first_rust else c)
tot_r, tot_c = sum(rust.values()) / count, sum(c.values()) / count
print("instructions per payload: rust_tun %.1f, tun %.1f, difference %+.1f" % (tot_r, tot_c, tot_r - tot_c))
rows = []
for n in set(rust) | set(c):
    r, k = rust.get(n, 0) / count, c.get(n, 0) / count
    rows.append((r - k, n, r, k))
rows.sort(key=lambda x: -abs(x[0]))
print("%-60s %10s %10s %9s" % ("function", "rust_tun", "tun", "diff"))
for d, n, r, k in rows[:60]:
    if abs(d) < 0.5 and r + k < 1:
        continue
    print("%-60s %10.1f %10.1f %+9.1f" % (n[:60], r, k, d))
PY
