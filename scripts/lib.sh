# SPDX-License-Identifier: GPL-2.0
# Common settings for rust-tun's scripts. Source it; do not run it.

RT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RT_CACHE=${RUST_TUN_CACHE:-/var/cache/rust-tun}
RT_TOOLS=${RUST_TUN_TOOLS:-/opt/rust-tun}

export LIBCLANG_PATH=/usr/lib/llvm-19/lib
RT_RUSTC=/usr/bin/rustc
RT_RUSTDOC=/usr/bin/rustdoc
RT_BINDGEN=$RT_TOOLS/bin/bindgen
# The make variables every kernel and module build gets.
RT_KMAKE=(LLVM=-19 ARCH=x86_64 "RUSTC=$RT_RUSTC" "RUSTDOC=$RT_RUSTDOC"
	"BINDGEN=$RT_BINDGEN" "RUSTFMT=${RT_RUSTFMT:-rustfmt}")

rt_log() { printf '[%s +%ss] %s\n' "$(basename "$0")" "$SECONDS" "$*" >&2; }
rt_die() { rt_log "error: $*"; exit 1; }

# Bump when scripts/build-kernel.sh changes what it builds (not its messages).
RT_KERNEL_RECIPE=1

# Print the cache key of a kernel flavour: everything that changes the build.
rt_kernel_key() {
	local flavor=$1
	{
		dpkg-query -W -f='${Version}\n' linux-source-6.12
		"$RT_RUSTC" --version
		clang-19 --version | head -1
		"$RT_BINDGEN" --version
		echo "flavor=$flavor"
		cat "$RT_TOP/scripts/kconfig/rust-tun.config"
		[ "$flavor" = test ] || cat "$RT_TOP/scripts/kconfig/$flavor.config"
		echo "recipe=$RT_KERNEL_RECIPE"
	} | sha256sum | cut -c1-16
}

# Print the kernel tree of a flavour (built or not).
rt_kdir() {
	echo "$RT_CACHE/kernel-$1-$(rt_kernel_key "$1")/linux"
}

RT_CARGO=/usr/bin/cargo
# The statically linked guest program.
rt_guest_bin() {
	echo "$RT_TOP/guest/target/x86_64-unknown-linux-gnu/release/rtun"
}

# Copy the module's sources (what git tracks or would add: no build
# outputs) into DIR, to build it there against another kernel while the
# work tree's build stays as it is.
rt_copy_module_sources() { # rt_copy_module_sources DIR
	mkdir -p "$1"
	(cd "$RT_TOP" && git ls-files -z --cached --others --exclude-standard -- \
		'*.rs' '*.c' '*.h' Kbuild Makefile |
		xargs -0 cp --parents -t "$1")
}
