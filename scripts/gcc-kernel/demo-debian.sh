#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# demo-debian.sh ROOT KTREE SCRATCH: the prototype's three results on
# Debian's GCC-built kernel (Documentation/gcc-kernel-helpers.rst).
#
# ROOT: the trixie userland of scripts/build-debian.sh (only read: it is the
# lower layer of a private overlay, in a mount namespace of this script's
# own, where clang-19 and llvm-19 get installed on first use; the upper
# layer is SCRATCH/ovl). KTREE: a copy of the prepared kernel tree (e.g.
# cp -a "$(readlink -f $base/linux)" KTREE); it is bind-mounted at the
# path it was prepared under, /var/lib/rust-tun/<krel>/linux, and only
# read. Needs root (unshare, mount, chroot) and host python3 and
# llvm-readelf-19/llvm-objdump-19 for the gate.
#
# Builds tun_helpers.o with the kernel's GCC (make M=, a scratch copy of
# the module sources), derives the header (clang-config.sh), compiles the
# helpers with clang three times and runs the gate on each:
#   (a) without the header: must name exactly the six per-CPU helpers;
#   (b) with it: must pass;
#   (c) with it, without the -fno-stack-protector translation: must name
#       the helpers with a canary, each with a %gs:0x28 read.
set -eu
[ $# -eq 3 ] || { echo "usage: demo-debian.sh ROOT KTREE SCRATCH" >&2; exit 2; }
root=$(cd "$1" && pwd); ktree=$(cd "$2" && pwd); mkdir -p "$3"; s=$(cd "$3" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
krel=$(sed -n 's/^\(.*\)$/\1/p' "$ktree/include/config/kernel.release")
kin=/var/lib/rust-tun/$krel/linux
mkdir -p "$s/ovl/upper" "$s/ovl/work" "$s/ovl/merged"

# in_root CMD...: CMD in ROOT through the overlay, with KTREE at $kin, the
# sources at /rtun-src and SCRATCH at /rtun-scratch.
in_root() {
	unshare -m --propagation private sh -ec '
	root=$1 s=$2 ktree=$3 kin=$4 src=$5; shift 5
	m=$s/ovl/merged
	mount -t overlay overlay -o lowerdir=$root,upperdir=$s/ovl/upper,workdir=$s/ovl/work $m
	mkdir -p $m$kin $m/rtun-src $m/rtun-scratch
	mount --bind $ktree $m$kin
	mount --bind $src $m/rtun-src
	mount --bind $s $m/rtun-scratch
	mount -t proc proc $m/proc
	cp /etc/resolv.conf $m/etc/resolv.conf
	exec chroot $m /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' sh "$root" "$s" "$ktree" "$kin" "$src" "$@"
}

if ! in_root sh -c 'command -v clang-19 && command -v llvm-link-19' >/dev/null; then
	echo "installing clang-19 llvm-19 in the overlay" >&2
	in_root sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends clang-19 llvm-19' \
		>"$s/apt.log" 2>&1 || { tail "$s/apt.log" >&2; exit 1; }
fi
cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\).*/\1/p' "$ktree/.config")

rm -rf "$s/mod"; mkdir -p "$s/mod"
cp -a "$src/Kbuild" "$src/tun_helpers.c" "$src/dummy_helpers.c" "$src/helpers" \
	"$src/params.h" "$src/bindings_helper.h" "$src/tun_exports.h" "$s/mod/"
in_root make -s -C "$kin" M=/rtun-scratch/mod ARCH=x86 CC="$cc" HOSTCC="$cc" \
	RTUN_MODULES=rust_tun tun_helpers.o
in_root /rtun-src/scripts/gcc-kernel/clang-config.sh "$kin" /rtun-scratch/rtun_clang_config.h

clang_helpers() { # NAME ARGS...
	n=$1; shift
	in_root python3 /rtun-src/scripts/gcc-kernel/clang-helpers.py --kdir "$kin" \
		--cmd /rtun-scratch/mod/.tun_helpers.o.cmd -o "/rtun-scratch/clang-$n" "$@" \
		>"$s/clang-$n.log" 2>&1 || { tail "$s/clang-$n.log" >&2; exit 1; }
}
clang_helpers asis --no-header
clang_helpers fixed --header /rtun-scratch/rtun_clang_config.h
clang_helpers ssp --header /rtun-scratch/rtun_clang_config.h --keep-stack-protector

gate="python3 $src/scripts/gcc-kernel/helper-gate.py"
rc=0
for n in asis fixed ssp; do
	echo "=== gate: gcc tun_helpers.o vs clang-$n.o"
	$gate "$s/mod/tun_helpers.o" "$s/clang-$n.o" || :
done
want="rtun_helper_dev_hold rtun_helper_dev_put rtun_helper_local_bh_disable rtun_helper_preempt_disable rtun_helper_preempt_enable rtun_helper_this_cpu_inc_u64"
got=$($gate --fail-list "$s/mod/tun_helpers.o" "$s/clang-asis.o" | tr '\n' ' ' | sed 's/ $//') || :
[ "$got" = "$want" ] && echo "(a) ok: the six per-CPU helpers" || { echo "(a) FAILED: $got"; rc=1; }
$gate --fail-list "$s/mod/tun_helpers.o" "$s/clang-fixed.o" >/dev/null &&
	echo "(b) ok: no semantic difference" || { echo "(b) FAILED"; rc=1; }
got=$($gate --fail-list "$s/mod/tun_helpers.o" "$s/clang-ssp.o") && { echo "(c) FAILED: not caught"; rc=1; } ||
	{ n=$(printf '%s\n' "$got" | grep -c .); a=$($gate "$s/mod/tun_helpers.o" "$s/clang-ssp.o" 2>/dev/null | grep -c 'DIFF.*gs +abs:0x28 |') || :
	  [ "$n" -gt 0 ] && [ "$n" = "$a" ] && echo "(c) ok: $n helpers read a canary at %gs:0x28" ||
	  { echo "(c) FAILED: $n differ, $a with %gs:0x28"; rc=1; }; }
exit $rc
