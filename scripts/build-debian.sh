#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's own kernel (linux-image-7.3.4+deb13-amd64, trixie-backports) as a
# test target: a Debian trixie userland made from Debian's packages
# (debootstrap; the machine stays on bookworm) holding exactly the
# toolchain Debian built that kernel with, its headers, source and modules;
# rust_tun.ko built in it by scripts/debian/rust-tun-dkms.sh (the command a
# user of that kernel runs: prepared tree, crate-hash check, build, vermagic
# check, `install` into /lib/modules/KREL/updates); and Debian's vmlinuz
# for QEMU. The userland is cached under $RT_CACHE keyed by everything it is
# made from; the module is rebuilt on every call (its tree is cached).
#
# Prints the prepared kernel tree last (its ../vmlinuz is Debian's kernel,
# its ../root the userland, whose /lib/modules/KREL has Debian's modules
# and updates/rust_tun.ko).
#
# usage: scripts/build-debian.sh [--print-kdir] [--bench-into DIR]
#   --bench-into DIR: also build the micro-benchmark's C module
#   (bench/rtun_cbench.ko) in the userland, and copy it and the modules
#   into DIR (scripts/bench.sh --kernel 7.3-debian)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

print_only=0 bench=
while [ $# -gt 0 ]; do
	case $1 in
	--print-kdir) print_only=1 ;;
	--bench-into) bench=$2; shift ;;
	*) rt_die "unknown argument $1" ;;
	esac
	shift
done

krel=$RT_DEBIAN_KREL
base=$(dirname "$(rt_kdir 7.3-debian)")
root=$base/root
kdir=$base/linux
# The tree rust-tun-dkms.sh prepares, as the userland sees it.
tree=/var/cache/rust-tun-dkms/$krel/linux
if [ $print_only = 1 ]; then
	[ -f "$base/built" ] || exit 1
	echo "$kdir"
	exit 0
fi
mkdir -p "$RT_CACHE"
exec 9>"$RT_CACHE/kernel-7.3-debian.lock"
flock 9

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
# /proc for the builds (nproc, make's jobserver); unmounted on exit.
mounted=0
mount_proc() { mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc" && mounted=1; }; }
trap '[ $mounted = 0 ] || umount "$root/proc" 2>/dev/null || true' EXIT

if [ ! -f "$base/built" ]; then
	for old in "$RT_CACHE"/kernel-7.3-debian-*; do
		[ "$old" = "$base" ] || [ ! -e "$old" ] || { rt_log "removing stale $old"; umount "$old/root/proc" 2>/dev/null || true; rm -rf "$old"; }
	done
	command -v debootstrap >/dev/null || {
		rt_log "apt: installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
	}
	if [ ! -f "$base/bootstrapped" ]; then
		rt_log "stage userland: debootstrap trixie into $root"
		rm -rf "$root"
		mkdir -p "$base"
		debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian >"$base/debootstrap.log" 2>&1 ||
			{ tail -20 "$base/debootstrap.log" >&2; rt_die "debootstrap failed (log: $base/debootstrap.log)"; }
		touch "$base/bootstrapped"
	fi
	cat >"$root/etc/apt/sources.list" <<-'EOF'
		deb http://deb.debian.org/debian trixie main
		deb http://deb.debian.org/debian trixie-updates main
		deb http://deb.debian.org/debian-security trixie-security main
		deb http://deb.debian.org/debian trixie-backports main
	EOF
	mount_proc
	rt_log "stage packages: ${RT_DEBIAN_PKGS[*]}"
	in_root apt-get update -q >"$base/apt.log" 2>&1 || { tail -20 "$base/apt.log" >&2; rt_die "apt-get update failed"; }
	in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		--allow-downgrades "${RT_DEBIAN_PKGS[@]}" >>"$base/apt.log" 2>&1 ||
		{ tail -20 "$base/apt.log" >&2; rt_die "apt-get install failed (log: $base/apt.log)"; }
	# Debian's kernel itself, unpacked beside the userland (not installed).
	rm -rf "$base/deb"
	mkdir -p "$root/tmp/deb"
	in_root sh -c "cd /tmp/deb && apt-get download -q linux-binary-$krel/trixie-backports" >>"$base/apt.log" 2>&1 ||
		rt_die "downloading linux-binary-$krel failed (log: $base/apt.log)"
	dpkg -x "$root"/tmp/deb/linux-binary-"$krel"_*.deb "$base/deb"
	rm -rf "$root/tmp/deb"
	cp "$base/deb/usr/lib/modules/$krel/vmlinuz" "$base/vmlinuz"
	in_root apt-get clean
	touch "$base/built"
fi

mount_proc
# The module's sources (and the scripts the build uses) into the userland.
rm -rf "$root/usr/src/rust-tun"
rt_copy_module_sources "$root/usr/src/rust-tun"
mkdir -p "$root/usr/src/rust-tun/scripts"
cp -r "$RT_TOP/scripts/debian" "$root/usr/src/rust-tun/scripts/"
# Signed as a Secure Boot user signs it (README), with a throwaway key
# made here: the kernel trusts neither that key nor none, so the guest
# sees the same unsigned-module taint, and the signing path is tested.
in_root sh -c 'cd /root && [ -f MOK.der ] || openssl req -new -x509 -newkey rsa:2048 -nodes -days 36500 \
	-outform DER -subj "/CN=rust-tun test signing/" -keyout MOK.priv -out MOK.der' >/dev/null 2>&1 ||
	rt_die "making a signing key failed"
rt_log "stage module: rust-tun-dkms.sh --kernel $krel --sign MOK.priv MOK.der install (in the trixie userland)"
in_root bash /usr/src/rust-tun/scripts/debian/rust-tun-dkms.sh --kernel "$krel" \
	--sign /root/MOK.priv /root/MOK.der install >&2 ||
	rt_die "building rust_tun.ko for $krel failed"
signer=$(in_root modinfo -F signer "/lib/modules/$krel/updates/rust_tun.ko")
[ "$signer" = "rust-tun test signing" ] || rt_die "the installed rust_tun.ko is not signed (signer '$signer')"
rt_log "installed rust_tun.ko signed by '$signer'"
# How `modprobe vhost_net` finds rust_tun on a system where it stands in
# for tun.ko (README, "vhost-net"): depmod resolves tun.ko's symbols to
# updates/rust_tun_vhost.ko (updates/ is searched first), whose
# modules.dep entry brings rust_tun with its options; and the install
# command, which kmod runs for every module it loads, dependencies
# included, turns a request for tun into rust_tun_vhost. Checked with
# kmod's modprobe in the trixie userland, in a config directory of its own.
in_root sh -c 'mkdir -p /tmp/rtun-modprobe.d && printf "%s\n" "options rust_tun dropin=1" \
	"install tun /sbin/modprobe rust_tun_vhost" >/tmp/rtun-modprobe.d/rust_tun.conf'
deps=$(in_root modprobe -C /tmp/rtun-modprobe.d -S "$krel" --show-depends vhost_net) ||
	rt_die "modprobe --show-depends vhost_net failed"
printf '%s\n' "$deps" | sed 's/^/[modprobe vhost_net] /' >&2
printf '%s\n' "$deps" | grep -q 'rust_tun_vhost' ||
	rt_die "modprobe vhost_net would not load rust_tun_vhost (above)"
! printf '%s\n' "$deps" | grep -q 'kernel/drivers/net/tun.ko' ||
	rt_die "modprobe vhost_net would load tun.ko (above)"
# And `modprobe tun` (a client that asks for it) loads the stand-in too.
in_root modprobe -C /tmp/rtun-modprobe.d -S "$krel" --show-depends tun | grep -q 'rust_tun_vhost' ||
	rt_die "modprobe tun would not load rust_tun_vhost"
if [ -n "$bench" ]; then
	mount_proc
	rm -rf "$root/usr/src/rust-tun-bench"
	cp -r "$RT_TOP/bench" "$root/usr/src/rust-tun-bench"
	# With the kernel's compiler, as rust-tun-dkms.sh reads it.
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\).*/\1/p' "$root/usr/src/linux-headers-$krel/.config")
	in_root make -C "$tree" M=/usr/src/rust-tun-bench ARCH=x86 "CC=$cc" modules >&2 ||
		rt_die "building rtun_cbench.ko failed"
	mkdir -p "$bench/bench"
	cp "$(rt_debian_moddir)/updates/rust_tun.ko" "$(rt_debian_moddir)/updates/rust_dummy.ko" \
		"$(rt_debian_moddir)/updates/rust_tun_vhost.ko" "$bench/"
	cp "$root/usr/src/rust-tun-bench/rtun_cbench.ko" "$bench/bench/"
fi
ln -sfn "root$tree" "$kdir"
echo "$kdir"
