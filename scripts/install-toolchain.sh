#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything rust-tun needs on a fresh Debian bookworm machine.
# Idempotent: a no-op (apart from quick version checks) when all is present.
# Runs as root; uses apt and cargo only.
set -euo pipefail

# One version set, installed as a set: these packages replace each other.
RUST_DEB_VERSION=1.85.0+dfsg3-1~deb12u3
BINDGEN_VERSION=0.71.1
TOOLS_ROOT=${RUST_TUN_TOOLS:-/opt/rust-tun}

APT_PKGS=(
	linux-source-6.12
	"rustc-web=$RUST_DEB_VERSION" "cargo-web=$RUST_DEB_VERSION"
	"libstd-rust-web-dev=$RUST_DEB_VERSION" "rust-web-src=$RUST_DEB_VERSION"
	"rustfmt-web=$RUST_DEB_VERSION" "rust-web-clippy=$RUST_DEB_VERSION"
	clang-19 lld-19 llvm-19 libclang-19-dev
	flex bison bc libelf-dev libssl-dev cpio xz-utils make
	qemu-system-x86 busybox-static libc6-dev file
	# Real tun clients for the guest (run-guest.sh --clients): iproute2's ip
	# (busybox's has no tuntap or netns), socat, openvpn, wireguard-go + wg,
	# strace (lists each client's calls on its tun fd); gcc-multilib for the
	# 32-bit static compat-ioctl client (gcc -m32 -static) and the kernel's
	# tun selftest (gcc -static).
	iproute2 socat openvpn wireguard-go wireguard-tools strace gcc gcc-multilib
	# 7.3's tun selftest needs YNL (tools/net/ynl): its C code generator
	# (ynl_gen_c.py) runs on the distribution's python3 with PyYAML and
	# jsonschema (it validates each spec); build-clients.sh calls
	# /usr/bin/python3, not whatever python3 comes first in PATH.
	python3 python3-yaml python3-jsonschema
)

log() { printf '[install-toolchain] %s\n' "$*"; }

missing=()
for p in "${APT_PKGS[@]}"; do
	name=${p%%=*}
	want=${p#*=}
	have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
	case "$have" in
	"install ok installed "*)
		if [ "$want" != "$p" ] && [ "${have##* }" != "$want" ]; then
			missing+=("$p")
		fi
		;;
	*) missing+=("$p") ;;
	esac
done

if [ ${#missing[@]} -gt 0 ]; then
	log "apt: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends --allow-downgrades "${missing[@]}"
else
	log "apt: all packages present"
fi

# bindgen: bookworm's 0.60 is older than 6.12's minimum (0.65.1).
BINDGEN=$TOOLS_ROOT/bin/bindgen
if [ -x "$BINDGEN" ] && "$BINDGEN" --version 2>/dev/null | grep -q "$BINDGEN_VERSION"; then
	log "bindgen $BINDGEN_VERSION present"
else
	log "cargo: installing bindgen-cli $BINDGEN_VERSION into $TOOLS_ROOT"
	# Any cargo will do for a host tool; prefer the machine's rustup one.
	CARGO=$(command -v cargo || echo /usr/bin/cargo)
	"$CARGO" install --locked --root "$TOOLS_ROOT" "bindgen-cli@$BINDGEN_VERSION"
fi

/usr/bin/rustc --version
/usr/bin/clang-19 --version | head -1
LIBCLANG_PATH=/usr/lib/llvm-19/lib "$BINDGEN" --version
log "done"
