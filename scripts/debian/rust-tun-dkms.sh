#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (and install) rust_tun.ko for a Debian kernel built with Rust
# (CONFIG_RUST=y: trixie-backports' linux-image-7.3.4+deb13-amd64), on a
# Debian trixie system, as DKMS would: once per kernel ABI, from that
# kernel's own configuration and toolchain. Run it on the machine that runs
# the kernel (as root), or in the project's trixie userland
# (scripts/build-debian.sh, which is how the test suite builds it).
#
# Debian's headers carry no Rust metadata (rust/*.rmeta, libmacros.so), so
# the kernel's rust/ is built here from linux-source-SERIES with Debian's
# exact .config and Module.symvers (`make modules_prepare`), by the rustc,
# bindgen and GCC Debian built the kernel with (the versions are checked
# against the configuration's *_VERSION_TEXT). A module links against the
# kernel crate's exports by mangled names that embed each crate's hash; the
# hashes of this rust/ build are compared with the running kernel's exports
# (crate-hashes.py) before the module is built, and the module's vermagic
# with the kernel's own modules' after.
#
# usage: rust-tun-dkms.sh [--kernel KREL] [--src DIR] [--sign KEY CERT] build|install
#   --kernel KREL  the kernel (default: the running one, uname -r)
#   --src DIR      the rust-tun sources (default: this script's tree)
#   --sign KEY CERT  sign the installed module (Secure Boot: a MOK enrolled
#                  with mokutil --import CERT), with the kernel's sign-file
#   build          build into $RUST_TUN_DKMS_CACHE/KREL (default
#                  /var/cache/rust-tun-dkms), print the module's path
#   install        build, then install rust_tun.ko, rust_dummy.ko and
#                  rust_tun_vhost.ko (tun.ko's exports for vhost_net.ko) into
#                  /lib/modules/KREL/updates/ (debug info stripped, as
#                  Debian's own modules) and run depmod
#
# Needs (apt): linux-headers-KREL linux-source-SERIES, and the toolchain
# the kernel names: rustc rust-src rustfmt bindgen gcc-14 make bc flex bison
# libelf-dev libssl-dev openssl dwarves kmod python3 xz-utils.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
krel=$(uname -r) src=$top sign_key= sign_cert= cmd=
cache=${RUST_TUN_DKMS_CACHE:-/var/cache/rust-tun-dkms}
# Bump when what this script builds changes (not its messages).
recipe=1

log() { printf '[rust-tun-dkms +%ss] %s\n' "$SECONDS" "$*" >&2; }
die() { log "error: $*"; exit 1; }

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) krel=$2; shift ;;
	--src) src=$(cd "$2" && pwd); shift ;;
	--sign) sign_key=$2 sign_cert=$3; shift 2 ;;
	build | install) cmd=$1 ;;
	*) die "unknown argument '$1' (usage: see the head of $0)" ;;
	esac
	shift
done
[ -n "$cmd" ] || die "usage: rust-tun-dkms.sh [--kernel KREL] [--src DIR] [--sign KEY CERT] build|install"

headers=/usr/src/linux-headers-$krel
[ -f "$headers/.config" ] || die "no $headers/.config: apt install linux-headers-$krel"
cfg() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$headers/.config"; }
[ "$(cfg CONFIG_RUST)" = y ] ||
	die "$krel is built without Rust (no CONFIG_RUST=y in its .config): no Rust module can load into it"
[ -f "$headers/Module.symvers" ] || die "no $headers/Module.symvers"
series=$(echo "$krel" | cut -d. -f1-2)
tarball=/usr/src/linux-source-$series.tar.xz
[ -f "$tarball" ] || die "no $tarball: apt install linux-source-$series (the same suite as the kernel)"

# The toolchain the kernel was built with, as its configuration names it:
# another rustc gives other crate hashes, another compiler other code.
cc=$(cfg CONFIG_CC_VERSION_TEXT | cut -d' ' -f1)
command -v "$cc" >/dev/null || die "no $cc: the kernel was built with '$(cfg CONFIG_CC_VERSION_TEXT)'"
check_version() { # check_version WHAT HAVE WANT PACKAGE
	[ "$2" = "$3" ] || die "$1 is '$2', the kernel was built with '$3': apt install $4"
}
check_version rustc "$(rustc --version 2>/dev/null)" "$(cfg CONFIG_RUSTC_VERSION_TEXT)" "rustc rust-src of the kernel's suite"
check_version bindgen "$(bindgen --version 2>/dev/null)" "$(cfg CONFIG_BINDGEN_VERSION_TEXT)" bindgen
check_version "$cc" "$("$cc" --version | head -1)" "$(cfg CONFIG_CC_VERSION_TEXT)" "${cc#x86_64-linux-gnu-}"
kmake=(ARCH=x86 "CC=$cc" "HOSTCC=$cc" RUSTC=rustc BINDGEN=bindgen "KERNELRELEASE=$krel")

# The prepared tree, reused while everything it was made from is the same.
dir=$cache/$krel
tree=$dir/linux
key=$({
	echo "recipe=$recipe"
	sha256sum "$headers/.config" "$headers/Module.symvers" | cut -d' ' -f1
	dpkg-query -W -f='${Version}\n' "linux-source-$series" 2>/dev/null || sha256sum "$tarball"
	rustc --version
	bindgen --version
	"$cc" --version | head -1
} | sha256sum | cut -c1-16)
if [ "$(cat "$dir/prepared" 2>/dev/null)" != "$key" ]; then
	log "preparing $tree: linux-source-$series with $krel's .config (modules_prepare builds rust/)"
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -C "$dir" -xf "$tarball"
	mv "$dir/linux-source-$series" "$tree"
	cp "$headers/.config" "$headers/Module.symvers" "$tree/"
	make -s -C "$tree" "${kmake[@]}" olddefconfig >&2
	# The configuration must be Debian's to the letter: a symbol that
	# changes (a tool's version, a feature the toolchain lacks) can change
	# structure layouts and crate hashes.
	if ! cmp -s "$headers/.config" "$tree/.config"; then
		diff "$headers/.config" "$tree/.config" | head -20 >&2
		die "olddefconfig changed $krel's configuration (above): the toolchain differs from the kernel's"
	fi
	make -C "$tree" "${kmake[@]}" -j"$(nproc)" modules_prepare >"$dir/prepare.log" 2>&1 ||
		{ tail -30 "$dir/prepare.log" >&2; die "modules_prepare failed (log: $dir/prepare.log)"; }
	# Module BTF is generated against the kernel's: Debian's headers ship
	# its vmlinux (BTF only) for that.
	[ ! -f "$headers/vmlinux" ] || cp "$headers/vmlinux" "$tree/vmlinux"
	echo "$key" >"$dir/prepared"
else
	log "prepared tree $tree reused"
fi

# The crate hashes: this rust/ build's must be the kernel's.
log "checking the Rust crate hashes against $headers/Module.symvers"
python3 "$top/scripts/debian/crate-hashes.py" "$headers/Module.symvers" "$tree"/rust/*.o >&2 ||
	die "the crate hashes of this rust/ build differ from $krel's (above): the module would not load (is rustc exactly '$(cfg CONFIG_RUSTC_VERSION_TEXT)'?)"

# The module, in a copy of its sources (the source tree stays clean).
build=$dir/rust-tun
rm -rf "$build"
mkdir -p "$build"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard -- '*.rs' '*.c' '*.h' Kbuild Makefile |
		xargs -0 cp --parents -t "$build")
else
	(cd "$src" && find . -path ./guest -prune -o -path ./hosttest -prune -o -path ./.git -prune -o \
		\( -name '*.rs' -o -name '*.c' -o -name '*.h' -o -name Kbuild -o -name Makefile \) -print0 |
		xargs -0 cp --parents -t "$build")
fi
log "building rust_tun.ko for $krel ($cc, rustc $(rustc --version | cut -d' ' -f2))"
make -C "$build" KDIR="$tree" LLVM= "CC=$cc" "HOSTCC=$cc" TOOLS=/usr >"$dir/build.log" 2>&1 ||
	{ tail -40 "$dir/build.log" >&2; die "module build failed (log: $dir/build.log)"; }
grep '^RTUN helpers:' "$dir/build.log" >&2 || true
ko=$build/rust_tun.ko

# The vermagic must be the kernel's (its own modules', where installed).
vm=$(modinfo -F vermagic "$ko")
ref=$(find "/lib/modules/$krel/kernel/drivers/net" -name 'tun.ko*' 2>/dev/null | head -1)
if [ -n "$ref" ]; then
	[ "$vm" = "$(modinfo -F vermagic "$ref")" ] ||
		die "vermagic '$vm' is not $krel's tun.ko's '$(modinfo -F vermagic "$ref")'"
	log "vermagic '$vm' = $(basename "$ref")'s"
else
	case $vm in "$krel "*) ;; *) die "vermagic '$vm' is not for $krel" ;; esac
	log "vermagic '$vm' (no installed module of $krel to compare with)"
fi

if [ "$cmd" = install ]; then
	dst=/lib/modules/$krel/updates
	mkdir -p "$dst"
	for m in rust_tun rust_dummy rust_tun_vhost; do
		install -m 0644 "$build/$m.ko" "$dst/$m.ko"
		strip --strip-debug "$dst/$m.ko"
		if [ -n "$sign_key" ]; then
			"$headers/scripts/sign-file" sha256 "$sign_key" "$sign_cert" "$dst/$m.ko" ||
				die "signing $dst/$m.ko failed"
		fi
	done
	depmod -a "$krel"
	log "installed $dst/rust_tun.ko, $dst/rust_dummy.ko, $dst/rust_tun_vhost.ko$([ -z "$sign_key" ] || echo ", signed with $sign_cert")"
	ko=$dst/rust_tun.ko
fi
echo "$ko"
