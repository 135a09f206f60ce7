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

# How much slower than the machine where the suites' expected times were
# measured (README, budgets) this host runs single-threaded CPU work now, in
# percent, never below 100: a guest's TCG vCPU is one such thread, so its
# suites take this much longer, and scripts/test.sh scales the suites' QEMU
# limits and the guests' per-test timeouts by it. The best of three runs of
# a fixed integer loop, in CPU time: the core's speed, not how busy the
# machine is at that moment (the expected times already include two guests
# and a kernel build sharing the two cores). RT_SPEED_REF_MS is that
# loop's time on the reference machine, derived (README) from a machine
# where the loop and the 7.3 test kernel's `make` were both timed quiet,
# scaled by the two machines' `make` times. RUST_TUN_SLOWDOWN overrides.
RT_SPEED_REF_MS=300
rt_host_slowdown() {
	if [ -n "${RUST_TUN_SLOWDOWN:-}" ]; then
		echo "$RUST_TUN_SLOWDOWN"
		return
	fi
	python3 -c '
import sys, time
best = None
for _ in range(3):
    t = time.process_time()
    x = 0
    for i in range(2000000):
        x = (x * 31 + i) & 0xffffffff
    d = time.process_time() - t
    best = d if best is None else min(best, d)
print(max(100, round(100 * best * 1000 / int(sys.argv[1]))))' "$RT_SPEED_REF_MS"
}

rt_log() { printf '[%s +%ss] %s\n' "$(basename "$0")" "$SECONDS" "$*" >&2; }
rt_die() { rt_log "error: $*"; exit 1; }

# The kernel series rust_tun builds for, and the default one: 7.3, the one
# distributions build with Rust (Debian's 7.2/7.3 have CONFIG_RUST=y; no
# distribution's 6.12 can load a Rust module). RUST_TUN_KERNEL picks another
# for every script (scripts/test.sh runs both).
RT_SERIES_ALL=(7.3 6.12)
RT_SERIES=${RUST_TUN_KERNEL:-7.3}
# Where each series' source comes from: 6.12 is bookworm's own package
# (install-toolchain.sh installs it); 7.3 is fetched from trixie-backports
# into the cache (fetch-kernel-source.sh), pinned to one version.
declare -A RT_SOURCE_VERSION=([6.12]="" [7.3]="7.3.4-1~bpo13+1")
declare -A RT_SOURCE_SUITE=([6.12]=bookworm [7.3]=trixie-backports)
rt_check_series() {
	[ -n "${RT_SOURCE_SUITE[$1]+x}" ] ||
		rt_die "unknown kernel series '$1' (supported: ${RT_SERIES_ALL[*]})"
}
rt_source_version() {
	rt_check_series "$1"
	if [ "$1" = 6.12 ]; then
		dpkg-query -W -f='${Version}\n' linux-source-6.12
	else
		echo "${RT_SOURCE_VERSION[$1]}"
	fi
}
rt_source_suite() { rt_check_series "$1"; echo "${RT_SOURCE_SUITE[$1]}"; }
# The source tarball of a series (7.3: fetched on first use).
rt_source_tarball() {
	rt_check_series "$1"
	if [ "$1" = 6.12 ]; then
		echo /usr/src/linux-source-6.12.tar.xz
	else
		bash "$RT_TOP/scripts/fetch-kernel-source.sh" "$1" | tail -1
	fi
}

# A kernel is named [SERIES-]FLAVOR: 7.3-test, 6.12-debug; a bare flavour
# (test, debug) is the default series' (RT_SERIES).
rt_kernel_series() { case $1 in *-*) echo "${1%%-*}" ;; *) echo "$RT_SERIES" ;; esac; }
rt_kernel_flavor() { echo "${1##*-}"; }
rt_kernel_name() { echo "$(rt_kernel_series "$1")-$(rt_kernel_flavor "$1")"; }

# Bump when scripts/build-kernel.sh changes what it builds (not its messages).
RT_KERNEL_RECIPE=2

# The configuration fragments of a kernel, in merge order: the common one,
# the series' own (what Kconfig spells differently there), the flavour's.
rt_kernel_frags() {
	local series flavor
	series=$(rt_kernel_series "$1")
	flavor=$(rt_kernel_flavor "$1")
	echo "$RT_TOP/scripts/kconfig/rust-tun.config"
	echo "$RT_TOP/scripts/kconfig/linux-$series.config"
	[ "$flavor" = test ] || echo "$RT_TOP/scripts/kconfig/$flavor.config"
}

# Debian's own kernel (scripts/build-debian.sh): the kernel 7.3-debian, a
# trixie userland with the toolchain Debian built it with (the versions its
# .config names: rustc 1.85.1, bindgen 0.71.1, GCC 14.2, binutils 2.44,
# pahole 1.30), its headers, source and modules from trixie-backports, and
# the clang and LLVM of rustc's major (19), which rust-tun-dkms recommends:
# with them its helpers are inlined (Documentation/gcc-kernel-helpers.rst).
RT_DEBIAN_KREL=7.3.4+deb13-amd64
RT_DEBIAN_KVER=7.3.4-1~bpo13+1
RT_DEBIAN_RUST=1.85.1+dfsg1-1+deb13u1
RT_DEBIAN_PKGS=(
	"linux-headers-$RT_DEBIAN_KREL=$RT_DEBIAN_KVER" "linux-source-7.3=$RT_DEBIAN_KVER"
	"linux-modules-$RT_DEBIAN_KREL=$RT_DEBIAN_KVER"
	"rustc=$RT_DEBIAN_RUST" "rust-src=$RT_DEBIAN_RUST" "rustfmt=$RT_DEBIAN_RUST"
	"libstd-rust-dev=$RT_DEBIAN_RUST" "libstd-rust-1.85=$RT_DEBIAN_RUST"
	bindgen=0.71.1-6 gcc-14=14.2.0-19 binutils=2.44-3 dwarves=1.30-1
	make bc flex bison libelf-dev libssl-dev openssl kmod python3 xz-utils cpio
	dkms dh-dkms debhelper build-essential clang-19 llvm-19
)
# Bump when scripts/build-debian.sh changes what it builds.
RT_DEBIAN_RECIPE=2
# Debian's modules in its userland (scripts/build-debian.sh): its own under
# kernel/, what DKMS installs under updates/dkms/.
rt_debian_moddir() {
	echo "$(dirname "$(rt_kdir 7.3-debian)")/root/lib/modules/$RT_DEBIAN_KREL"
}
# What scripts/build-debian.sh keeps of the packages' installation for the
# guest: modules/*.ko and the module trees beside/, dropin/, fallback/.
rt_debian_pkgdir() {
	echo "$(dirname "$(rt_kdir 7.3-debian)")/pkg"
}

# The Debian mirror this machine's apt uses (its own sources, so a local
# mirror or proxy serves the project too): the archive, or with `security`
# the security archive.
rt_apt_mirror() { # rt_apt_mirror [security]
	local want uri
	want=$(. /etc/os-release && echo "$VERSION_CODENAME")
	[ "${1:-}" != security ] || want=$want-security
	uri=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 'Created-By: Packages' 2>/dev/null |
		awk -v r="$want" '$1 == r { print $2; exit }')
	[ -n "$uri" ] || rt_die "no '$want' suite in this machine's apt sources (apt-get indextargets)"
	echo "${uri%/}"
}

# Print the cache key of a kernel: everything that changes the build.
rt_kernel_key() {
	local series f
	series=$(rt_kernel_series "$1")
	if [ "$(rt_kernel_flavor "$1")" = debian ]; then
		echo "debian $RT_DEBIAN_KREL ${RT_DEBIAN_PKGS[*]} recipe=$RT_DEBIAN_RECIPE" | sha256sum | cut -c1-16
		return
	fi
	{
		echo "series=$series $(rt_source_version "$series")"
		"$RT_RUSTC" --version
		clang-19 --version | head -1
		"$RT_BINDGEN" --version
		echo "flavor=$(rt_kernel_flavor "$1")"
		# The fragments' settings, in merge order; not their comments (a
		# comment changed in a fragment does not rebuild every kernel).
		for f in $(rt_kernel_frags "$1"); do
			echo "fragment $(basename "$f")"
			grep '^CONFIG_' "$f"
		done
		echo "recipe=$RT_KERNEL_RECIPE"
	} | sha256sum | cut -c1-16
}

# Print the kernel tree of a kernel (built or not).
rt_kdir() {
	echo "$RT_CACHE/kernel-$(rt_kernel_name "$1")-$(rt_kernel_key "$1")/linux"
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
		'*.rs' '*.c' '*.h' Kbuild testmod/Kbuild Makefile 'scripts/gcc-kernel/*' |
		xargs -0 cp --parents -t "$1")
}
