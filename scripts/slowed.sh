#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command as on a machine FACTOR times slower: the command and
# everything it starts share this machine's cores capped at
# nproc / FACTOR CPUs (a CFS bandwidth quota on a cgroup of their own,
# 10 ms periods), and scripts/test.sh is told the slowdown it would read
# there (RUST_TUN_SLOWDOWN = 100 * FACTOR: rt_host_slowdown times CPU
# time, which a quota does not stretch).
#
# It is how the budgets' slow case is measured (Documentation/testing.rst, "The two commands"): the
# issue's slow machine built the 7.3 test kernel in 1,164 s of `make`,
# 2.1 times this kind's 550 s. A quota slows what runs on both cores as
# such a machine does, but a single-threaded stretch (a link, the Rust
# crates one after another) still gets a whole core's speed, so a kernel
# build is milder than on that machine: 886 s at FACTOR 2.1 (2026-12-06).
#
# usage: scripts/slowed.sh FACTOR COMMAND [ARGS...]   (as root; e.g.
#        scripts/slowed.sh 2.1 scripts/test.sh)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 2 ] || rt_die "usage: scripts/slowed.sh FACTOR COMMAND [ARGS...]"
factor=$1
shift
[[ $factor =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v f="$factor" 'BEGIN { exit !(f >= 1 && f <= 20) }' ||
	rt_die "FACTOR must be a number from 1 to 20, not '$factor'"
period=10000
quota=$(awk -v f="$factor" -v n="$(nproc)" -v p=$period 'BEGIN { printf "%d", n * p / f }')
slowdown=$(awk -v f="$factor" 'BEGIN { printf "%d", 100 * f }')
name=rust-tun-slowed.$$
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	# cgroup v2: the cpu controller must be enabled for the children.
	grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
		echo +cpu >/sys/fs/cgroup/cgroup.subtree_control ||
		rt_die "cannot enable the cpu controller in /sys/fs/cgroup"
	cg=/sys/fs/cgroup/$name
	mkdir "$cg"
	echo "$quota $period" >"$cg/cpu.max"
elif [ -d /sys/fs/cgroup/cpu ]; then
	cg=/sys/fs/cgroup/cpu/$name
	mkdir "$cg"
	echo $period >"$cg/cpu.cfs_period_us"
	echo "$quota" >"$cg/cpu.cfs_quota_us"
else
	rt_die "no cgroup cpu controller (v1 or v2) under /sys/fs/cgroup"
fi
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
rt_log "capped at $quota us per $period us ($(nproc) cores / $factor); RUST_TUN_SLOWDOWN=$slowdown"
# Into the cgroup, then the command as a child (the trap removes the
# cgroup once it and everything it started have ended).
RUST_TUN_SLOWDOWN=$slowdown \
	bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' slowed "$cg" "$@"
