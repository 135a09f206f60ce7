#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's own kernel (linux-image-7.3.4+deb13-amd64, trixie-backports) as a
# test target, and the Debian packages (debian/) tested as a Debian admin
# uses them: a trixie userland made from Debian's packages (debootstrap;
# the machine stays on its own release) holding the toolchain Debian built
# that kernel with, its headers, source and modules, dkms and debhelper;
# and Debian's vmlinuz for QEMU. The userland is cached under $RT_CACHE
# keyed by everything it is made from.
#
# On every call, in that userland (each step fails the script):
#   build    dpkg-buildpackage: rust-tun-dkms and rust-tun-dropin, and the
#            same at a higher version (the upgrade); their contents
#   lintian  lintian --pedantic: nothing beyond debian/*.lintian-overrides
#   install  Debian's dkms-autopkgtest on rust-tun-dkms: apt installs it,
#            DKMS builds, signs (DKMS's MOK) and installs rust_tun for the
#            kernel; vermagic is tun.ko's; its helpers are inlined
#            (modinfo -F helpers: clang-19's, none kept out of line)
#   gate     the helpers' differential gate (Kbuild, RTUN_HELPER_GATE=strict)
#            on two mutations: clang's bitcode without the derived Kconfig
#            header names exactly the seven per-CPU helpers; with the
#            stack protector left on, the helpers whose canary clang
#            reads at %gs:0x28
#   skip     another series' headers installed: skipped (77), apt exits 0
#   depends  backports' newer rustc: apt would remove rust-tun-dkms
#   beside   modprobe vhost_net binds tun.ko
#   dropin   rust-tun-dropin: modprobe vhost_net loads rust_tun_vhost and
#            rust_tun (dropin=1); modprobe tun runs the install line
#   hooks    the kernel's postrm hook removes the prepared tree; with the
#            modules gone too, the headers' own hooks rebuild both
#   trigger  the upgrade to the higher version while linux-source-7.3 lags
#            the headers: skipped (77, apt exits 0); the source catches up,
#            its dpkg trigger builds the new version; the old one is gone
#   fallback clang-19 hidden (dpkg-divert): DKMS builds the helpers out of
#            line, and modinfo says why
#   purge    apt purge leaves nothing under /lib/modules, /var/lib,
#            /etc/modprobe.d, /usr/src
#   layout   rust_dummy's build (strict gate) passed Kbuild's check of
#            bindgen's sizes and offsets against GCC's; the check fails,
#            naming it, on one offset moved
# What DKMS installed is kept for the guest (scripts/run-guest.sh) in
# $(rt_debian_pkgdir): modules/ (the .ko files, decompressed, signed) and
# the module trees as DKMS left them (compressed, signed, its depmod):
# beside/ (rust-tun-dkms), dropin/ (and rust-tun-dropin, its modprobe.d
# file) and fallback/ (the drop-in file on a kernel without rust_tun).
#
# Prints the prepared kernel tree last (its ../vmlinuz is Debian's kernel,
# its ../root the userland).
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
pkgdir=$(rt_debian_pkgdir)
# The tree rust-tun-prepare makes (DKMS's PRE_BUILD), as the userland sees it.
tree=/var/lib/rust-tun/$krel/linux
if [ $print_only = 1 ]; then
	[ -f "$base/built" ] || exit 1
	echo "$kdir"
	exit 0
fi
mkdir -p "$RT_CACHE"
exec 9>"$RT_CACHE/kernel-7.3-debian.lock"
flock 9

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
	DEBIAN_FRONTEND=noninteractive "$@"; }
# /proc for the builds (nproc, make's jobserver); unmounted on exit.
mounted=0
mount_proc() { mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc" && mounted=1; }; }
# The trigger check sets linux-source-7.3's version back in dpkg's
# database: it is set right again however the script ends.
lagging=
source_caught_up() {
	[ -n "$lagging" ] || return 0
	sed -i "/^Package: linux-source-7.3\$/,/^\$/s/^Version: .*/Version: $lagging/" "$root/var/lib/dpkg/status"
	lagging=
}
# The fallback check hides clang-19: shown again however the script ends.
hidden=
clang_back() {
	[ -n "$hidden" ] || return 0
	in_root dpkg-divert --local --rename --remove /usr/bin/clang-19 >/dev/null
	hidden=
}
trap 'clang_back; source_caught_up; [ $mounted = 0 ] || umount "$root/proc" 2>/dev/null || true' EXIT

if [ ! -f "$base/built" ]; then
	for old in "$RT_CACHE"/kernel-7.3-debian-*; do
		[ "$old" = "$base" ] || [ ! -e "$old" ] || { rt_log "removing stale $old"; umount "$old/root/proc" 2>/dev/null || true; rm -rf "$old"; }
	done
	command -v debootstrap >/dev/null || {
		rt_log "apt: installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
	}
	# The mirrors this machine's apt uses (and its proxy, if any).
	mirror=$(rt_apt_mirror)
	security=$(rt_apt_mirror security)
	proxy=$(apt-config shell p Acquire::http::Proxy | sed -n "s/^p='\(.*\)'$/\1/p")
	if [ ! -f "$base/bootstrapped" ]; then
		rt_log "stage userland: debootstrap trixie from $mirror into $root"
		rm -rf "$root"
		mkdir -p "$base"
		http_proxy=$proxy debootstrap --variant=minbase trixie "$root" "$mirror" >"$base/debootstrap.log" 2>&1 ||
			{ tail -20 "$base/debootstrap.log" >&2; rt_die "debootstrap failed (log: $base/debootstrap.log)"; }
		touch "$base/bootstrapped"
	fi
	cat >"$root/etc/apt/sources.list" <<-EOF
		deb $mirror trixie main
		deb $mirror trixie-updates main
		deb $security trixie-security main
		deb $mirror trixie-backports main
	EOF
	[ -z "$proxy" ] || echo "Acquire::http::Proxy \"$proxy\";" >"$root/etc/apt/apt.conf.d/01proxy"
	mount_proc
	rt_log "stage packages: ${RT_DEBIAN_PKGS[*]}"
	in_root apt-get update -q >"$base/apt.log" 2>&1 || { tail -20 "$base/apt.log" >&2; rt_die "apt-get update failed"; }
	in_root apt-get install -y -q --no-install-recommends \
		--allow-downgrades "${RT_DEBIAN_PKGS[@]}" >>"$base/apt.log" 2>&1 ||
		{ tail -20 "$base/apt.log" >&2; rt_die "apt-get install failed (log: $base/apt.log)"; }
	# Another series' headers (the newest Debian kernel that is not 7.3),
	# kept as .debs for the skip test: installed and purged on every call.
	other=$(in_root apt-cache search --names-only '^linux-headers-[0-9.]+\+deb13-amd64$' | cut -d' ' -f1 |
		grep -v "^linux-headers-7\.3\." | sort -V | tail -1)
	[ -n "$other" ] || rt_die "no Debian kernel headers of a series other than 7.3 in trixie(-backports)"
	rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/rust-tun-test/other"
	in_root apt-get install -d -y -q --no-install-recommends "$other" >>"$base/apt.log" 2>&1 ||
		rt_die "downloading $other failed (log: $base/apt.log)"
	mkdir -p "$root/var/lib/rust-tun-test/other"
	mv "$root/var/cache/apt/archives"/*.deb "$root/var/lib/rust-tun-test/other/"
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
# Each check's verdict, one line each (scripts/test.sh counts them).
rm -rf "$pkgdir"
mkdir -p "$pkgdir/modules"
results=$pkgdir/results
: >"$results"
step() { rt_log "package: $*"; }
ok() { echo "ok - $1" >>"$results"; rt_log "package: ok - $1"; }
fail() { echo "not ok - $*" >>"$results"; rt_die "package test: $*"; }
# The prepared tree of the last call, reused when nothing it was made from
# changed: kept outside the userland while packages are purged (their
# removal deletes it).
stash() { rm -rf "$base/prepared"; mkdir -p "$base/prepared"; mv "$root/var/lib/rust-tun/$krel" "$base/prepared/"; }
unstash() { mkdir -p "$root/var/lib/rust-tun"; mv "$base/prepared/$krel" "$root/var/lib/rust-tun/"; }
[ ! -d "$root/var/lib/rust-tun/$krel" ] || stash
# What the last call left, should it have failed half-way (and the
# micro-benchmark sources a --bench-into call copied in). A call killed
# during dpkg leaves a package it was installing half-installed
# ("reinst-required"), which apt refuses to touch: dpkg removes it first.
in_root dpkg --purge --force-remove-reinstreq rust-tun-dropin rust-tun-dkms >/dev/null 2>&1 || true
in_root apt-get purge -y -q rust-tun-dropin rust-tun-dkms >/dev/null 2>&1 || true
rm -rf "$root/usr/src/rust-tun-bench"
# Another series' headers (the skip check), as packages.
other_pkgs=$(for f in "$root"/var/lib/rust-tun-test/other/*.deb; do dpkg-deb -f "$f" Package; done)
other=$(printf '%s\n' "$other_pkgs" | grep -- '-amd64$' | grep '^linux-headers-')
in_root apt-get purge -y -q $other_pkgs >/dev/null 2>&1 || true
old_source=$(in_root dpkg-query -W -f='${Version}' linux-source-7.3)
[ ! -d "$base/prepared/$krel" ] || unstash

# --- build: the packages, from the sources git knows, as a user builds them.
ver=$(dpkg-parsechangelog -l "$RT_TOP/debian/changelog" -S Version)
next=$ver+rtuntest1
src=$root/tmp/rust-tun-pkg
rm -rf "$src"
mkdir -p "$src"
for v in "$ver" "$next"; do
	# The module's sources and the packaging (not the whole tree: the host
	# checks build in it meanwhile, and Kbuild's temporary files come and go).
	rt_copy_module_sources "$src/$v"
	(cd "$RT_TOP" && git ls-files -z --cached --others --exclude-standard -- debian scripts/debian |
		xargs -0 cp --parents -t "$src/$v")
	if [ "$v" = "$next" ]; then
		{
			printf 'rust-tun (%s) unstable; urgency=medium\n\n  * The upgrade test of scripts/build-debian.sh.\n\n' "$v"
			printf ' -- rust-tun test <test@localhost>  %s\n\n' "$(date -R)"
			cat "$src/$v/debian/changelog"
		} >"$src/$v/debian/changelog.new"
		mv "$src/$v/debian/changelog.new" "$src/$v/debian/changelog"
	fi
	step "build: dpkg-buildpackage -us -uc -b ($v)"
	in_root sh -c "cd /tmp/rust-tun-pkg/$v && dpkg-buildpackage -us -uc -b" >"$base/pkg-build.log" 2>&1 ||
		{ tail -20 "$base/pkg-build.log" >&2; fail "dpkg-buildpackage failed (log: $base/pkg-build.log)"; }
done
find "$src" -mindepth 1 -maxdepth 1 ! -name '*.deb' -exec rm -rf {} +
deb() { echo "/tmp/rust-tun-pkg/$1_$2_all.deb"; } # deb PACKAGE VERSION: its path in the userland
for p in rust-tun-dkms rust-tun-dropin; do
	[ -f "$root$(deb $p "$ver")" ] || fail "no $(deb $p "$ver")"
done
contents=$(dpkg-deb -c "$root$(deb rust-tun-dkms "$ver")" | awk '{ print $6 }')
printf '%s\n' "$contents" | grep -qx "./usr/src/rust-tun-$ver/dkms.conf" || fail "rust-tun-dkms has no usr/src/rust-tun-$ver/dkms.conf"
printf '%s\n' "$contents" | grep -qx "./usr/src/rust-tun-$ver/scripts/debian/rust-tun-prepare" || fail "rust-tun-dkms has no PRE_BUILD script"
bad=$(printf '%s\n' "$contents" | grep -E "^\./usr/src/rust-tun-$ver/(guest|hosttest|bench|testmod|Documentation|debian|\.git)/|dummy|_generated\.rs\$|\.(o|ko|bc|cmd|mod)\$|Module\.symvers\$" || true)
[ -z "$bad" ] || fail "rust-tun-dkms ships what is not the module's source: $(echo $bad)"
dpkg-deb -c "$root$(deb rust-tun-dropin "$ver")" | awk '{ print $6 }' | grep -qx "./usr/src/rust-tun-vhost-$ver/dkms.conf" ||
	fail "rust-tun-dropin has no usr/src/rust-tun-vhost-$ver/dkms.conf"
ok "build: dpkg-buildpackage makes rust-tun-dkms and rust-tun-dropin $ver, with the module's sources and dkms.conf only"
# Debian's own package checker, pedantic: nothing but what debian/*.lintian-overrides
# explains.
in_root dpkg -s lintian >/dev/null 2>&1 || in_root apt-get install -y -q --no-install-recommends lintian >>"$base/apt.log" 2>&1 ||
	fail "installing lintian failed (log: $base/apt.log)"
out=$(in_root lintian --pedantic -I "$(deb rust-tun-dkms "$ver")" "$(deb rust-tun-dropin "$ver")" 2>&1 |
	grep -v '^running with root privileges' || true)
[ -z "$out" ] || { printf '%s\n' "$out" >&2; fail "lintian --pedantic: $(printf '%s\n' "$out" | head -3 | tr '\n' ' ')"; }
ok "lintian: --pedantic -I on both packages says nothing beyond their overrides"

# --- install: Debian's own test of a DKMS package, then what a user checks.
step "install: dkms-autopkgtest $(deb rust-tun-dkms "$ver")"
in_root /usr/lib/dkms/dkms-autopkgtest "$(deb rust-tun-dkms "$ver")" >"$base/pkg-autopkgtest.log" 2>&1 ||
	{ tail -30 "$base/pkg-autopkgtest.log" >&2; fail "dkms-autopkgtest failed (log: $base/pkg-autopkgtest.log)"; }
grep -qx "I: PASS rust-tun/$ver $krel" "$base/pkg-autopkgtest.log" ||
	{ tail -30 "$base/pkg-autopkgtest.log" >&2; fail "dkms-autopkgtest did not pass rust-tun/$ver for $krel"; }
in_root dpkg-query -W -f='${Status}' rust-tun-dkms | grep -q 'install ok installed' ||
	fail "rust-tun-dkms is not installed after dkms-autopkgtest"
status=$(in_root dkms status rust-tun)
[ "$status" = "rust-tun/$ver, $krel, x86_64: installed" ] || fail "dkms status: '$status'"
installed=/lib/modules/$krel/updates/dkms/rust_tun.ko.xz
[ "$(in_root modinfo -k "$krel" -n rust_tun)" = "$installed" ] || fail "modinfo -n rust_tun: not $installed"
vm=$(in_root modinfo -k "$krel" -F vermagic rust_tun)
[ "$vm" = "$(in_root modinfo -k "$krel" -F vermagic tun)" ] || fail "vermagic '$vm' is not tun.ko's"
signer=$(in_root modinfo -k "$krel" -F signer rust_tun)
[ "$signer" = "DKMS module signing key" ] || fail "rust_tun.ko's signer is '$signer', not DKMS's MOK"
[ -f "$root/var/lib/dkms/mok.pub" ] || fail "no /var/lib/dkms/mok.pub"
[ ! -e "$root/lib/modules/$krel/updates/dkms/rust_dummy.ko.xz" ] || fail "rust_dummy.ko installed"
helpers=$(in_root modinfo -k "$krel" -F helpers rust_tun)
case $helpers in
"inlined through LLVM bitcode of clang-19 (GCC-built kernel; gated against the GCC-built helpers)") ;;
*) fail "rust_tun.ko's helpers are not all inlined: '$helpers'" ;;
esac
ok "install: dkms-autopkgtest passes; DKMS installed $installed for $krel, vermagic tun.ko's, signed by DKMS's MOK, helpers inlined"

# --- gate: the helpers' differential gate catches the two known ways a
# clang copy of them goes wrong on this kernel (Documentation/
# gcc-kernel-helpers.rst): the build fails, naming the helpers.
gate_mutant() { # gate_mutant MUTATION: the helpers the strict gate names
	rm -rf "$root/tmp/rust-gate"
	rt_copy_module_sources "$root/tmp/rust-gate"
	if in_root make -C "$tree" M=/tmp/rust-gate "CC=$cc" "HOSTCC=$cc" RTUN_MODULES=rust_tun \
		RTUN_HELPER_GATE=strict "RTUN_HELPERS_MUTATE=$1" >"$base/gate-$1.log" 2>&1; then
		fail "gate: the build with the $1 mutation passed the strict gate"
	fi
	sed -n 's/^helper-gate: differing helpers (keep them out of line): //p' "$base/gate-$1.log"
}
step "gate: strict builds with the no-header and keep-ssp mutations"
install -D -m 0755 "$RT_TOP/scripts/debian/rust-tun-prepare" "$root/tmp/rust-tun-prepare"
cc=$(in_root /tmp/rust-tun-prepare --print-cc "$krel" || true)
rm -f "$root/tmp/rust-tun-prepare"
[ -n "$cc" ] || rt_die "no compiler in $krel's configuration"
got=$(gate_mutant no-header)
[ "$got" = "dev_hold dev_put local_bh_disable preempt_disable preempt_enable this_cpu_inc_u64 trace_xdp_exception" ] ||
	fail "gate: without the Kconfig header the gate named '$got', not the seven per-CPU helpers (log: $base/gate-no-header.log)"
got=$(gate_mutant keep-ssp)
n=$(grep -c 'DIFF.*gs +abs:0x28 |' "$base/gate-keep-ssp.log" || true)
[ -n "$got" ] && [ "$(echo $got | wc -w)" = "$n" ] ||
	fail "gate: with the stack protector the gate named '$got', $n helpers with a %gs:0x28 canary (log: $base/gate-keep-ssp.log)"
rm -rf "$root/tmp/rust-gate"
ok "gate: the strict gate fails the no-header build on its 7 per-CPU helpers and the keep-ssp build on its $n canary helpers"

# --- skip: another series' headers; its hooks skip rust-tun, apt is fine.
okrel=${other#linux-headers-}
step "skip: apt install $other"
out=$(in_root sh -c 'apt-get install -y -q /var/lib/rust-tun-test/other/*.deb' 2>&1) ||
	{ printf '%s\n' "$out" | tail -20 >&2; fail "apt install $other failed"; }
printf '%s\n' "$out" | grep -q "skipped for module(s) rust-tun\|Autoinstall on $okrel was skipped" ||
	{ printf '%s\n' "$out" | tail -20 >&2; fail "installing $other did not say rust-tun was skipped"; }
in_root dkms status rust-tun -k "$okrel" | grep -qv installed || [ -z "$(in_root dkms status rust-tun -k "$okrel")" ] ||
	fail "rust-tun installed for $okrel: $(in_root dkms status rust-tun -k "$okrel")"
[ ! -e "$root/lib/modules/$okrel/updates/dkms/rust_tun.ko.xz" ] || fail "rust_tun.ko installed for $okrel"
in_root apt-get purge -y -q $other_pkgs >/dev/null || fail "apt purge $other failed"
ok "skip: $other (another series) installed and purged: rust-tun skipped, apt exit 0"

# --- depends: backports' rustc is not the kernel's; apt would have to
# remove rust-tun-dkms to install it.
step "depends: apt-get -s install -t trixie-backports rustc"
out=$(in_root apt-get -s install -y -t trixie-backports rustc 2>&1 || true)
printf '%s\n' "$out" | grep -q '^Remv rust-tun-dkms\|rust-tun-dkms : Depends: rustc' ||
	{ printf '%s\n' "$out" | tail -15 >&2; fail "backports' rustc would not displace rust-tun-dkms"; }
ok "depends: backports' rustc would remove rust-tun-dkms"

# --- beside, then dropin: who serves vhost_net's tun_* symbols.
deps=$(in_root modprobe -S "$krel" --show-depends vhost_net) || fail "modprobe --show-depends vhost_net failed"
printf '%s\n' "$deps" | grep -q "kernel/drivers/net/tun.ko" && ! printf '%s\n' "$deps" | grep -q rust_tun ||
	{ printf '%s\n' "$deps" >&2; fail "without rust-tun-dropin, modprobe vhost_net would not load tun.ko (above)"; }
ok "beside: without rust-tun-dropin, modprobe vhost_net loads tun.ko"
step "dropin: apt install $(deb rust-tun-dropin "$ver")"
in_root apt-get install -y -q "$(deb rust-tun-dropin "$ver")" >"$base/pkg-dropin.log" 2>&1 ||
	{ tail -20 "$base/pkg-dropin.log" >&2; fail "apt install rust-tun-dropin failed"; }
status=$(in_root dkms status rust-tun-vhost)
[ "$status" = "rust-tun-vhost/$ver, $krel, x86_64: installed" ] || fail "dkms status rust-tun-vhost: '$status'"
deps=$(in_root modprobe -S "$krel" --show-depends vhost_net) || fail "modprobe --show-depends vhost_net failed"
printf '%s\n' "$deps" | sed 's/^/[modprobe vhost_net] /' >&2
printf '%s\n' "$deps" | grep -qx "insmod /lib/modules/$krel/updates/dkms/rust_tun_vhost.ko.xz *" &&
	printf '%s\n' "$deps" | grep -qx "insmod /lib/modules/$krel/updates/dkms/rust_tun.ko.xz dropin=1 *" &&
	! printf '%s\n' "$deps" | grep -q "drivers/net/tun.ko" ||
	fail "with rust-tun-dropin, modprobe vhost_net would not load rust_tun_vhost and rust_tun dropin=1 alone (above)"
in_root modprobe -S "$krel" --show-depends tun | grep -qx 'install /sbin/modprobe rust_tun_vhost 2>/dev/null || /sbin/modprobe --ignore-install tun $CMDLINE_OPTS *' ||
	fail "modprobe tun would not run rust-tun-dropin's install line"
[ "$(in_root modinfo -k "$krel" -F depends rust_tun_vhost)" = rust_tun ] || fail "rust_tun_vhost does not depend on rust_tun"
ok "dropin: rust-tun-dropin: modprobe vhost_net loads rust_tun_vhost and rust_tun dropin=1; modprobe tun, the install line"

# --- hooks: the kernel's postrm hook removes the prepared tree; with the
# modules gone too, the headers' own hooks (dpkg-reconfigure runs their
# postinst) prepare and build everything again: an upgrade's path.
step "hooks: /etc/kernel/postrm.d/rust-tun-dkms $krel, dkms unbuild, dpkg-reconfigure linux-headers-$krel"
in_root /etc/kernel/postrm.d/rust-tun-dkms "$krel" || fail "the kernel postrm hook failed"
[ ! -e "$root/var/lib/rust-tun/$krel" ] || fail "the kernel postrm hook left /var/lib/rust-tun/$krel"
in_root dkms unbuild "rust-tun-vhost/$ver" -k "$krel" >/dev/null || fail "dkms unbuild rust-tun-vhost failed"
in_root dkms unbuild "rust-tun/$ver" -k "$krel" >/dev/null || fail "dkms unbuild rust-tun failed"
[ ! -e "$root$installed" ] || fail "dkms unbuild left $installed"
in_root dpkg-reconfigure "linux-headers-$krel" >"$base/pkg-hooks.log" 2>&1 ||
	{ tail -20 "$base/pkg-hooks.log" >&2; fail "the headers' hooks failed (log: $base/pkg-hooks.log)"; }
for m in rust-tun rust-tun-vhost; do
	[ "$(in_root dkms status "$m")" = "$m/$ver, $krel, x86_64: installed" ] ||
		fail "the headers' hooks did not rebuild $m: '$(in_root dkms status "$m")'"
done
[ -f "$root/var/lib/rust-tun/$krel/prepared" ] || fail "the headers' hooks did not prepare the kernel tree"
ok "hooks: the kernel's postrm hook removes the prepared tree; the headers' hooks alone prepare and rebuild both modules"

# --- trigger: upgrade both packages while linux-source-7.3 lags the
# headers (its version in dpkg's database set back, and no kept tree of the
# headers' version): skipped, apt is fine; when the source catches up, its
# dpkg trigger builds the new version.
lag=7.3.0-1~bpo13+1
step "trigger: upgrade to $next with linux-source-7.3 at $lag"
stash
lagging=$old_source
sed -i "/^Package: linux-source-7.3\$/,/^\$/s/^Version: .*/Version: $lag/" "$root/var/lib/dpkg/status"
out=$(in_root apt-get install -y -q "$(deb rust-tun-dkms "$next")" "$(deb rust-tun-dropin "$next")" 2>&1) ||
	{ printf '%s\n' "$out" | tail -20 >&2; fail "the upgrade with a lagging source failed (apt)"; }
source_caught_up
grep -q "skipped for $krel: linux-source-7.3 is $lag" "$root/var/lib/dkms/rust-tun/$next/build/make.log" ||
	{ printf '%s\n' "$out" | tail -20 >&2; fail "the upgrade did not say why rust-tun was skipped (DKMS's make.log)"; }
for m in rust-tun rust-tun-vhost; do
	status=$(in_root dkms status "$m")
	[ "$status" = "$m/$next: added" ] || fail "dkms status $m after the skipped upgrade: '$status'"
done
[ ! -e "$root$installed" ] || fail "the skipped upgrade left the old $installed"
[ ! -e "$root/usr/src/rust-tun-$ver" ] || fail "the upgrade left /usr/src/rust-tun-$ver"
unstash
in_root dpkg-trigger --no-await /usr/src/linux-source-7.3.tar.xz || fail "dpkg-trigger failed"
in_root dpkg --triggers-only rust-tun-dkms >"$base/pkg-trigger.log" 2>&1 ||
	{ tail -20 "$base/pkg-trigger.log" >&2; fail "the trigger failed (log: $base/pkg-trigger.log)"; }
for m in rust-tun rust-tun-vhost; do
	status=$(in_root dkms status "$m")
	[ "$status" = "$m/$next, $krel, x86_64: installed" ] || fail "the trigger did not build $m: '$status'"
done
ok "trigger: the upgrade to $next with a lagging source is skipped (apt exit 0); linux-source-7.3's trigger builds it; $ver is gone"

# --- what the guest boots with: the module trees as DKMS left them.
keep() { # keep NAME: /lib/modules/KREL's indexes and ours, and /etc/modprobe.d/rust-tun*
	local d=$pkgdir/$1
	rm -rf "$d"
	mkdir -p "$d/lib/modules/$krel" "$d/etc/modprobe.d"
	cp -a "$root/lib/modules/$krel"/modules.* "$d/lib/modules/$krel/"
	[ ! -d "$root/lib/modules/$krel/updates" ] || cp -a "$root/lib/modules/$krel/updates" "$d/lib/modules/$krel/"
	cp -a "$root"/etc/modprobe.d/rust-tun* "$d/etc/modprobe.d/" 2>/dev/null || true
}
keep dropin
for m in rust_tun rust_tun_vhost; do
	xz -dc "$root/lib/modules/$krel/updates/dkms/$m.ko.xz" >"$pkgdir/modules/$m.ko"
done
in_root dkms uninstall "rust-tun-vhost/$next" -k "$krel" >/dev/null && in_root dkms uninstall "rust-tun/$next" -k "$krel" >/dev/null ||
	fail "dkms uninstall failed"
keep fallback
in_root dkms install "rust-tun/$next" -k "$krel" >/dev/null && in_root dkms install "rust-tun-vhost/$next" -k "$krel" >/dev/null ||
	fail "dkms install failed"
in_root apt-get purge -y -q rust-tun-dropin >/dev/null || fail "apt purge rust-tun-dropin failed"
[ -z "$(in_root dkms status rust-tun-vhost)" ] || fail "apt purge rust-tun-dropin left rust-tun-vhost in dkms"
keep beside

# --- fallback: without the clang of rustc's LLVM, DKMS still builds; the
# helpers are called out of line and modinfo says why.
step "fallback: dkms build rust-tun/$next with clang-19 hidden"
in_root dpkg-divert --local --rename --divert /usr/bin/clang-19.rtun-hidden --add /usr/bin/clang-19 >/dev/null ||
	fail "dpkg-divert of clang-19 failed"
hidden=1
in_root dkms build "rust-tun/$next" -k "$krel" --force >"$base/fallback.log" 2>&1 ||
	{ tail -20 "$base/fallback.log" >&2; fail "dkms build without clang-19 failed (log: $base/fallback.log)"; }
built=/var/lib/dkms/rust-tun/$next/$krel/x86_64/module/rust_tun.ko.xz
helpers=$(in_root modinfo -F helpers "$built")
[ "$helpers" = "out of line (GCC-built kernel; not found: clang-19; install clang-19 llvm-19 to inline them)" ] ||
	fail "without clang-19, rust_tun.ko's helpers: '$helpers'"
in_root modinfo -F vermagic "$built" | grep -q "^$krel " || fail "the fallback build's vermagic is not $krel's"
xz -dc "$root$built" >"$pkgdir/modules/rust_tun-fallback.ko"
clang_back
ok "fallback: without clang-19, DKMS builds rust_tun.ko with its helpers out of line, and modinfo says why"

# --- purge: nothing of ours is left (the prepared tree is kept aside for
# the next call first: the purge would delete it).
step "purge: apt purge rust-tun-dkms"
stash
in_root apt-get purge -y -q rust-tun-dkms >/dev/null || fail "apt purge rust-tun-dkms failed"
left=$(cd "$root" && { find lib/modules -name 'rust_tun*'; grep -l rust_tun lib/modules/*/modules.dep 2>/dev/null;
	ls -d var/lib/rust-tun var/lib/dkms/rust-tun* etc/modprobe.d/rust-tun* etc/kernel/postrm.d/rust-tun* usr/src/rust-tun* 2>/dev/null; } || true)
[ -z "$left" ] || fail "apt purge left: $(echo $left)"
[ -z "$(in_root dkms status)" ] || fail "dkms status after the purge: $(in_root dkms status)"
ok "purge: apt purge leaves nothing of rust-tun under /lib/modules, /var/lib, /etc, /usr/src, nor in dkms"
unstash
rm -rf "$src"

# rust_dummy.ko (not packaged: the suites' Rust dummy driver) against the
# same prepared tree, with the kernel's compiler.
rm -rf "$root/tmp/rust-dummy"
rt_copy_module_sources "$root/tmp/rust-dummy"
in_root make -C /tmp/rust-dummy KDIR="$tree" LLVM= TOOLS=/usr "CC=$cc" "HOSTCC=$cc" RTUN_MODULES=rust_dummy \
	RTUN_HELPER_GATE=strict >"$base/dummy-build.log" 2>&1 || { tail -20 "$base/dummy-build.log" >&2; rt_die "building rust_dummy.ko failed"; }
cp "$root/tmp/rust-dummy/rust_dummy.ko" "$pkgdir/modules/"
# The layout cross-check (Kbuild, on GCC-built kernels) passed that build;
# it must fail on a layout where GCC and bindgen differ: one offset moved.
d=$root/tmp/rust-dummy
step "layout: bindgen's constants against GCC's, and one offset moved"
grep -q '^layout-check: .* the same in' "$d/rtun_layout.checked" || fail "layout: no cross-check in rust_dummy's build"
awk '/^RTUN_OFFSETOF_sk_buff_len:$/ { print; getline; $2 += 8; print "\t" $1 "\t" $2; next } { print }' \
	"$d/rtun_layout.s" >"$d/rtun_layout.moved.s"
out=$(python3 "$RT_TOP/scripts/gcc-kernel/layout-check.py" "$d/bindings_generated.rs" "$d/rtun_layout.moved.s" 2>&1) &&
	fail "layout: layout-check.py passed a moved offset"
printf '%s\n' "$out" | grep -q "RTUN_OFFSETOF_sk_buff_len: bindgen [0-9]*, GCC [0-9]*" ||
	fail "layout: layout-check.py did not name the moved offset: $out"
ok "layout: $(sed 's/^layout-check: //' "$d/rtun_layout.checked"); a moved offset fails, named"
rm -rf "$root/tmp/rust-dummy"

if [ -n "$bench" ]; then
	rm -rf "$root/usr/src/rust-tun-bench"
	cp -r "$RT_TOP/bench" "$root/usr/src/rust-tun-bench"
	in_root make -C "$tree" M=/usr/src/rust-tun-bench ARCH=x86 "CC=$cc" modules >&2 ||
		rt_die "building rtun_cbench.ko failed"
	mkdir -p "$bench/bench"
	cp "$pkgdir"/modules/*.ko "$bench/"
	cp "$root/usr/src/rust-tun-bench/rtun_cbench.ko" "$bench/bench/"
	rm -rf "$root/usr/src/rust-tun-bench"
fi
ln -sfn "root$tree" "$kdir"
echo "$kdir"
