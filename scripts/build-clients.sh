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

key=$(
	{
		echo "$kdir"
		cat "$kdir/include/config/kernel.release"
		cat "${BASH_SOURCE[0]}" "${srcs[@]}"
		gcc --version | head -1
		dpkg-query -W -f='${Package} ${Version}\n' libc6-dev libc6-dev-i386
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

# The selftest includes "../kselftest_harness.h" relative to itself; the
# -I makes the harness's own includes independent of where it is compiled.
st=("${inc[@]}" -I"$selftests" "$selftests/net/tun.c")
only_kdir_headers "${st[@]}"
gcc -static -O2 -Wall "${st[@]}" -o "$tmp/tun-selftest" >&2

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
