#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the C tun clients the guest runs beside the Debian ones
# (scripts/run-guest.sh --clients), statically linked so that the guest
# needs no C library for them:
#   tun-selftest  the kernel's own tools/testing/selftests/net/tun.c from KDIR
#   tun32         scripts/clients/tun32.c, 32-bit (gcc -m32): every ioctl goes
#                 through the driver's compat_ioctl
# Both see only KDIR's uapi headers (installed from the tree with `make
# headers`), never the host's linux-libc-dev ones: the ioctl numbers and
# structs are those of the kernel under test.
#
# 7.3's selftest (through tuntap_helpers.h) uses YNL, the netlink library of
# tools/net/ynl, and the rtnetlink families it generates from
# Documentation/netlink/specs (rt-link for the geneve device, rt-addr,
# rt-neigh, rt-route). The selftests' ynl.mk builds them inside the kernel
# tree; here they are generated and compiled in the scratch directory from
# KDIR's sources (never writing to KDIR): ynl_gen_c.py on /usr/bin/python3
# (python3-yaml, python3-jsonschema: scripts/install-toolchain.sh),
# lib/ynl.c and the families named by the selftest's "FAMILY-user.h"
# includes, into a static libynl.a. 6.12's selftest has no YNL.
#
# The output goes to a cache directory outside the repo, keyed by everything
# that changes it (the kernel tree, this script, the sources, the compiler
# and C libraries); a matching one is reused. Prints the directory on stdout.
#
# usage: scripts/build-clients.sh KDIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || rt_die "usage: $0 KDIR"
kdir=$(cd "$1" && pwd)
[ -f "$kdir/include/config/kernel.release" ] || rt_die "$kdir is not a built kernel tree"
selftests=$kdir/tools/testing/selftests
srcs=("$RT_TOP/scripts/clients/tun32.c" "$selftests/net/tun.c"
	"$selftests/kselftest_harness.h" "$selftests/kselftest.h")
# The selftest's local headers (7.3: tuntap_helpers.h).
for h in "$selftests"/net/*.h; do
	[ ! -f "$h" ] || srcs+=("$h")
done

# YNL families the selftest includes ("rt-link-user.h": rt-link); none on
# 6.12.
ynl=$kdir/tools/net/ynl
specs=$kdir/Documentation/netlink
ynl_fams=$(grep -ho '"[a-z0-9_-]*-user\.h"' "$selftests/net/tun.c" "$selftests"/net/*.h 2>/dev/null |
	tr -d '"' | sed 's/-user\.h$//' | sort -u || true)
ynl_pkgs=()
if [ -n "$ynl_fams" ]; then
	[ -f "$ynl/lib/ynl.c" ] || rt_die "the selftest uses YNL families ($ynl_fams) but $ynl/lib has no ynl.c"
	# Every input of the generator and the library: its Python code, the
	# netlink schemas it validates against, the families' specs.
	while IFS= read -r -d '' f; do
		srcs+=("$f")
	done < <(find "$ynl/lib" "$ynl/pyynl" \( -name '*.[ch]' -o -name '*.py' \) -print0 | sort -z)
	for f in "$specs"/*.yaml; do
		srcs+=("$f")
	done
	for f in $ynl_fams; do
		[ -f "$specs/specs/$f.yaml" ] || rt_die "no YNL spec $specs/specs/$f.yaml"
		srcs+=("$specs/specs/$f.yaml")
	done
	ynl_pkgs=(python3 python3-yaml python3-jsonschema)
	for p in "${ynl_pkgs[@]}"; do
		dpkg-query -W "$p" >/dev/null 2>&1 || rt_die "no $p: run scripts/install-toolchain.sh"
	done
fi

key=$(
	{
		echo "$kdir"
		cat "$kdir/include/config/kernel.release"
		cat "${BASH_SOURCE[0]}" "${srcs[@]}"
		gcc --version | head -1
		dpkg-query -W -f='${Package} ${Version}\n' libc6-dev libc6-dev-i386 binutils "${ynl_pkgs[@]}"
		[ -z "$ynl_fams" ] || /usr/bin/python3 --version
	} | sha256sum | cut -c1-16
)
out=$RT_CACHE/clients-$key

mkdir -p "$RT_CACHE"
# Two runs at once (two worktrees, two guests) build once.
exec 9>"$RT_CACHE/clients.lock"
flock 9
if [ -f "$out/built" ]; then
	echo "$out"
	exit 0
fi

rt_log "building the tun clients into $out"
tmp=$out.tmp.$$
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"

# `make headers` fills KDIR/usr/include (incremental: a no-op once done;
# headers_install would also want rsync); copy only the headers out of it.
make -s -C "$kdir" "${RT_KMAKE[@]}" headers >&2
(cd "$kdir/usr" && find include -name '*.h' -print0 | cpio -0pdm --quiet "$tmp/uapi")
inc=(-I"$tmp/uapi/include")

# Fail if any linux/ or asm/ header came from the host instead of KDIR.
only_kdir_headers() { # only_kdir_headers GCC-ARGS...: checks one compile's deps
	local host
	host=$(gcc -M "$@" | tr ' \\' '\n\n' | grep -E '^/usr/include/(.*/)?(linux|asm|asm-generic)/' || true)
	[ -z "$host" ] || rt_die "host uapi headers used: $host"
}

# YNL: the generated families and the library, as the tools/net/ynl
# Makefiles build them (their CFLAGS), against KDIR's installed uapi
# headers (the Makefiles' -include tricks only make the tree's uapi headers
# win over the host's, which the -isystem path does already).
ynl_inc=() ynl_lib=()
if [ -n "$ynl_fams" ]; then
	mkdir -p "$tmp/ynl"
	# -isystem, as the Makefiles' -idirafter: no warnings from the uapi
	# headers' macros (NLMSG_NEXT's unused value), still before the host's.
	ynl_cc=(-std=gnu11 -O2 -W -Wall -Wextra -Wno-unused-parameter -Wshadow
		-isystem "$tmp/uapi/include" -I"$ynl/lib" -I"$tmp/ynl")
	for f in $ynl_fams; do
		for m in header source; do
			sfx=h
			[ $m = header ] || sfx=c
			/usr/bin/python3 "$ynl/pyynl/ynl_gen_c.py" --mode user --$m \
				--spec "$specs/specs/$f.yaml" -o "$tmp/ynl/$f-user.$sfx" >&2
		done
	done
	objs=()
	for c in "$ynl/lib/ynl.c" "$tmp"/ynl/*-user.c; do
		o=$tmp/ynl/$(basename "${c%.c}").o
		only_kdir_headers "${ynl_cc[@]}" "$c"
		gcc "${ynl_cc[@]}" -c "$c" -o "$o" >&2
		objs+=("$o")
	done
	ar rcs "$tmp/ynl/libynl.a" "${objs[@]}"
	ynl_inc=(-I"$ynl/lib" -I"$tmp/ynl")
	ynl_lib=("$tmp/ynl/libynl.a")
fi

# The selftest includes "../kselftest_harness.h" relative to itself; the
# -I makes the harness's own includes independent of where it is compiled.
st=("${inc[@]}" "${ynl_inc[@]}" -I"$selftests" "$selftests/net/tun.c")
only_kdir_headers "${st[@]}"
gcc -static -O2 -Wall "${st[@]}" "${ynl_lib[@]}" -o "$tmp/tun-selftest" >&2

t32=("${inc[@]}" -m32 "$RT_TOP/scripts/clients/tun32.c")
only_kdir_headers "${t32[@]}"
gcc -static -O2 -Wall -Wextra -Werror "${t32[@]}" -o "$tmp/tun32" >&2

file "$tmp/tun-selftest" | grep -q 'ELF 64-bit .*statically linked' ||
	rt_die "tun-selftest is not a static 64-bit ELF: $(file "$tmp/tun-selftest")"
file "$tmp/tun32" | grep -q 'ELF 32-bit .*statically linked' ||
	rt_die "tun32 is not a static 32-bit ELF: $(file "$tmp/tun32")"

touch "$tmp/built"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
rt_log "built $(cd "$out" && echo tun-selftest tun32)"
echo "$out"
