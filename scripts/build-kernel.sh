#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a test kernel (tinyconfig + scripts/kconfig/rust-tun.config +
# scripts/kconfig/linux-SERIES.config, plus scripts/kconfig/FLAVOR.config for
# flavours other than test) into a cache outside the repo, keyed by the
# source version, the fragments, the toolchain and this script. A matching
# cached tree is reused. Prints the tree's path last.
#
# usage: scripts/build-kernel.sh [--print-kdir] [[SERIES-]FLAVOR]
#   SERIES: 7.3 (default; RUST_TUN_KERNEL) or 6.12; FLAVOR: test or debug,
#   e.g. `test`, `6.12-test`, `7.3-debug`
#   --print-kdir: only print the cached tree, failing if it is not built.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

print_only=0
if [ "${1:-}" = --print-kdir ]; then
	print_only=1
	shift
fi
kernel=$(rt_kernel_name "${1:-test}")
series=$(rt_kernel_series "$kernel")
flavor=$(rt_kernel_flavor "$kernel")
rt_check_series "$series"
# Debian's own kernel is not built here: its userland, prepared tree and
# module come from scripts/build-debian.sh.
if [ "$flavor" = debian ]; then
	[ "$series" = 7.3 ] || rt_die "Debian's kernel is 7.3 ($RT_DEBIAN_KREL), not $series"
	exec bash "$RT_TOP/scripts/build-debian.sh" $([ $print_only = 0 ] || echo --print-kdir)
fi
[ "$flavor" = test ] || [ -f "$RT_TOP/scripts/kconfig/$flavor.config" ] ||
	rt_die "unknown kernel flavour '$flavor'"
kdir=$(rt_kdir "$kernel")
root=$(dirname "$kdir")

# One build of a kernel at a time: a second caller (another script, a
# parallel job) waits for the first and then finds the tree built.
if [ $print_only = 0 ]; then
	mkdir -p "$RT_CACHE"
	exec 9>"$RT_CACHE/kernel-$kernel.lock"
	flock 9
fi

if [ -f "$root/built" ]; then
	[ $print_only = 1 ] || rt_log "cached $kernel kernel: $kdir"
	echo "$kdir"
	exit 0
fi
[ $print_only = 0 ] || exit 1

# Trees of this kernel under other keys are stale: drop them (disk space).
for old in "$RT_CACHE"/kernel-"$kernel"-*; do
	[ "$old" = "$root" ] || [ ! -e "$old" ] || { rt_log "removing stale $old"; rm -rf "$old"; }
done

# A configured tree left by an interrupted build is resumed (make is
# incremental); anything less is unpacked again.
if [ ! -f "$root/configured" ]; then
	tarball=$(rt_source_tarball "$series") && [ -f "$tarball" ] ||
		rt_die "no linux-source-$series tarball"
	rt_log "stage unpack: $tarball -> $kdir"
	rm -rf "$root"
	mkdir -p "$root"
	tar -C "$root" -xf "$tarball"
	mv "$root/linux-source-$series" "$kdir"

	cd "$kdir"
	rt_log "stage config"
	mapfile -t frags < <(rt_kernel_frags "$kernel")
	make -s "${RT_KMAKE[@]}" rustavailable >&2
	make -s "${RT_KMAKE[@]}" tinyconfig >&2
	scripts/kconfig/merge_config.sh -m .config "${frags[@]}" >"$root/config.log" 2>&1
	make -s "${RT_KMAKE[@]}" olddefconfig >&2
	# Every setting of the fragments (the last one of each symbol) must
	# survive: Kconfig drops what it cannot honour.
	bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=n) grep -q "^${line%=n}=" .config && { rt_log "not honoured: $line"; bad=1; } ;;
		CONFIG_*) grep -qx "$line" .config || { rt_log "not honoured: $line"; bad=1; } ;;
		esac
	done < <(cat "${frags[@]}" | grep '^CONFIG_' | tac | awk -F= '!seen[$1]++' | tac)
	[ $bad = 0 ] || rt_die "config fragment not honoured (see above)"
	touch "$root/configured"
else
	rt_log "stage resume: configured tree found"
	cd "$kdir"
fi

rt_log "stage build: $kernel: bzImage and modules with $(nproc) jobs (on 2 cores: a test kernel about 5 min, a debug one about 8 min)"
start=$SECONDS
make -j"$(nproc)" "${RT_KMAKE[@]}" bzImage modules >>"$root/build.log" 2>&1 &
pid=$!
last=$SECONDS
while kill -0 $pid 2>/dev/null; do
	sleep 2
	if [ $((SECONDS - last)) -ge 60 ] && kill -0 $pid 2>/dev/null; then
		last=$SECONDS
		rt_log "building... $(((SECONDS - start) / 60)) min, last: $(tail -1 "$root/build.log" | cut -c1-80)"
	fi
done
if ! wait $pid; then
	tail -40 "$root/build.log" >&2
	rt_die "kernel build failed (log: $root/build.log)"
fi
[ -f rust/libkernel.rmeta ] || rt_die "no rust/libkernel.rmeta: Rust was not built"
touch "$root/built"
rt_log "stage done: $kernel kernel built in $((SECONDS - start)) s"
echo "$kdir"
