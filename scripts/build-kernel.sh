#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test kernel (tinyconfig + scripts/kconfig/rust-tun.config, plus
# scripts/kconfig/FLAVOR.config for other flavours) into a cache outside the
# repo, keyed by the source version, the fragments, the toolchain and this
# script. A matching cached tree is reused. Prints the tree's path last.
#
# usage: scripts/build-kernel.sh [--print-kdir] [test|debug]
#   --print-kdir: only print the cached tree, failing if it is not built.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

print_only=0
if [ "${1:-}" = --print-kdir ]; then
	print_only=1
	shift
fi
flavor=${1:-test}
[ "$flavor" = test ] || [ -f "$RT_TOP/scripts/kconfig/$flavor.config" ] ||
	rt_die "unknown kernel flavour '$flavor'"
kdir=$(rt_kdir "$flavor")
root=$(dirname "$kdir")

if [ -f "$root/built" ]; then
	[ $print_only = 1 ] || rt_log "cached $flavor kernel: $kdir"
	echo "$kdir"
	exit 0
fi
[ $print_only = 0 ] || exit 1

# Trees of this flavour under other keys are stale: drop them (disk space).
for old in "$RT_CACHE"/kernel-"$flavor"-*; do
	[ "$old" = "$root" ] || [ ! -e "$old" ] || { rt_log "removing stale $old"; rm -rf "$old"; }
done

# A configured tree left by an interrupted build is resumed (make is
# incremental); anything less is unpacked again.
if [ ! -f "$root/configured" ]; then
	rt_log "stage unpack: $kdir"
	rm -rf "$root"
	mkdir -p "$root"
	tar -C "$root" -xf /usr/src/linux-source-6.12.tar.xz
	mv "$root/linux-source-6.12" "$kdir"

	cd "$kdir"
	rt_log "stage config"
	frags=("$RT_TOP/scripts/kconfig/rust-tun.config")
	[ "$flavor" = test ] || frags+=("$RT_TOP/scripts/kconfig/$flavor.config")
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

rt_log "stage build: bzImage and modules with $(nproc) jobs (on 2 cores: test kernel about 5 min, debug about 7 min)"
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
rt_log "stage done: $flavor kernel built in $((SECONDS - start)) s"
echo "$kdir"
