#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test kernel in QEMU (TCG) with an initramfs holding busybox, the
# modules (rust_tun.ko, rust_dummy.ko, rust_tun_vhost.ko and testmod/rtun_veto.ko beside it if built, and the C
# tun/pktgen/dummy from the same build, geneve and its UDP tunnel modules, veth
# when the kernel builds them), the guest programs and
# GUEST_SCRIPT; stream the console to the terminal and to a log; exit with
# the guest's verdict.
#
# Fails on a guest the watchdog stopped, on a missing verdict, on the wrong
# CPU count, and on a kernel oops/BUG/WARNING/panic/taint (other than the
# out-of-tree taint).
#
# usage: scripts/run-guest.sh [--icount] [--mttcg] [--smp N] [--timeout S]
#                             [--progress SLACK] [--selftest]
#                             [--log FILE] [--kernel [SERIES-]FLAVOR] [--module KO]
#                             [--clients] GUEST_SCRIPT [ARGS...]
#
# The console goes through scripts/guest-watchdog.py, which stops QEMU
# (the verdict says which bound fired and after what):
# --timeout S: the backstop, S seconds of wall time whatever the guest
# prints (default 900).
# --progress SLACK: for guests that run the test runner (KTAP): the guest
# is also stopped when no test has made progress (no `ok`/`not ok` line)
# for the runner's per-test timeout (its `# per-test timeout N s` header)
# plus SLACK seconds, or for 2 * SLACK from the start to that header (boot,
# module load). Those bounds count uncontended time: wall time minus what
# QEMU's threads waited for a host CPU. The same total reaches the guest
# through a second serial port (ttyS1, named in /etc/rtun-ctl), and its
# runner counts each test's timeout the same way (guest/src/runner.rs), so
# a loaded host makes a run slower, not red.
# --selftest: the runner suite's check of that channel (the guest's
# `RTUN-SELFTEST: contention` line makes the host claim contention).
#
# --kernel: test (default) or debug of the default series (7.3;
# RUST_TUN_KERNEL), or of a series named first: 6.12-test, 7.3-debug.
# --module: the rust_tun.ko to load (default: the work tree's, built for the
# default test kernel; scripts/test.sh builds one per kernel).
#
# --clients adds real tun clients under /usr/bin (the guest's PATH stays
# /bin, busybox: call them by full path): the host's iproute2 ip and bridge, socat,
# openvpn, wireguard-go, wg and strace with the shared libraries they load,
# and tun-selftest and tun32 from scripts/build-clients.sh (built against the
# booted kernel's tree), and scripts/guest/clients-smoke.sh as
# /usr/bin/clients-smoke.
#
# RTUN_PAD_KB=N in the environment adds an N KB file to the initramfs: the
# benchmarks vary it between boots so that their medians sample how the
# guest's memory layout moves instruction counts (slab refills, page
# allocator paths), instead of measuring one layout. RTUN_BENCH_DIR: where
# the benchmark modules (*.ko) come from (default bench/). RTUN_QEMU_ARGS adds
# arguments to QEMU's command line (scripts/profile.sh's plugin),
# RTUN_KERNEL_ARGS to the kernel's (profile.sh: nokaslr on Debian's kernel).
#
# TCG runs single-threaded by default (both vCPUs on one host thread): with
# multi-threaded TCG (--mttcg), QEMU 7.2 lets a vCPU execute the int3 of a
# finished text_poke_bp() while static keys flip under load, and the guest
# dies with "Oops: int3" in core code -- reproduced with the C tun alone
# (rust_tun not loaded). --icount implies single-threaded TCG.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

icount=0 smp=2 timeout=900 progress= selftest=0 log= flavor=test tcg=tcg,thread=single clients=0 ko=$RT_TOP/rust_tun.ko
while [ $# -gt 0 ]; do
	case "$1" in
	--icount) icount=1 ;;
	--mttcg) tcg=tcg ;;
	--smp) smp=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--progress) progress=$2; shift ;;
	--selftest) selftest=1 ;;
	--log) log=$2; shift ;;
	--kernel) flavor=$2; shift ;;
	--module) ko=$2; shift ;;
	--clients) clients=1 ;;
	-*) rt_die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || rt_die "usage: $0 [options] GUEST_SCRIPT [ARGS...]"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || rt_die "--timeout takes seconds, not '$timeout'"
[ -z "$progress" ] || [[ $progress =~ ^[1-9][0-9]*$ ]] || rt_die "--progress takes seconds, not '$progress'"
kernel=$(rt_kernel_name "$flavor")
flavor=$(rt_kernel_flavor "$kernel")
script=$1
shift

kdir=$(bash "$RT_TOP/scripts/build-kernel.sh" --print-kdir "$kernel") ||
	rt_die "no built $kernel kernel: run scripts/build-kernel.sh $kernel"
[ -f "$ko" ] || rt_die "no $ko: run make"
rtun=$(rt_guest_bin)
[ -x "$rtun" ] || rt_die "no guest programs: run scripts/build-guest.sh"

cdir=
if [ $clients = 1 ]; then
	cdir=$(bash "$RT_TOP/scripts/build-clients.sh" "$kdir") || rt_die "building the C clients failed"
fi

# Copy the host binary NAME to the guest's /usr/bin with every shared library
# ldd resolves for it (and the loader), at the host's paths: the guest's
# loader finds them in its default multiarch directories.
add_host_client() { # add_host_client ROOT NAME
	local root=$1 name=$2 bin lib
	bin=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin type -P "$name") ||
		rt_die "no $name on the host: run scripts/install-toolchain.sh"
	cp -L "$bin" "$root/usr/bin/$name"
	# A static binary has no libraries (ldd then fails).
	{ ldd "$bin" || true; } | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			[ -e "$root$lib" ] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
}

# The clients' files: binaries under /usr/bin, the /etc files glibc and the
# clients read (users and groups by name, NSS from files only, iproute2's
# tables), and /run (iproute2's netns bind mounts in /var/run/netns,
# wireguard-go's UAPI sockets in /var/run/wireguard).
add_clients() { # add_clients ROOT
	local root=$1 name
	mkdir -p "$root/usr/bin" "$root/run" "$root/var" "$root/root"
	ln -s ../run "$root/var/run"
	for name in ip bridge socat openvpn wireguard-go wg strace; do
		add_host_client "$root" "$name"
	done
	# busybox's ip has no tuntap or netns: make sure this one is iproute2.
	"$root/usr/bin/ip" -V 2>&1 | grep -q iproute2 || rt_die "the host's ip is not iproute2's"
	cp "$cdir/tun-selftest" "$cdir/tun32" "$root/usr/bin/"
	cp "$RT_TOP/scripts/guest/clients-smoke.sh" "$root/usr/bin/clients-smoke"
	cat >"$root/etc/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
	EOF
	cat >"$root/etc/group" <<-'EOF'
		root:x:0:
		nogroup:x:65534:
	EOF
	printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'hosts: files' \
		'networks: files' 'protocols: files' 'services: files' >"$root/etc/nsswitch.conf"
	echo '127.0.0.1 localhost' >"$root/etc/hosts"
	[ ! -d /etc/iproute2 ] || cp -r /etc/iproute2 "$root/etc/"
}

work=$(mktemp -d /tmp/rtun-guest.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,lib/modules}
cp /bin/busybox "$root/bin/busybox"
cp "$RT_TOP/scripts/guest/init" "$root/init"
cp "$script" "$root/test.sh"
# What the benchmarks' guest scripts source.
cp "$RT_TOP/scripts/guest/bench-settle.sh" "$root/lib/rtun-bench-settle.sh"
chmod +x "$root/init"
cp "$rtun" "$root/bin/rtun"
cp "$ko" "$root/lib/modules/"
for m in rust_dummy rust_tun_vhost testmod/rtun_veto rust_tun-fallback; do
	[ ! -f "$(dirname "$ko")/$m.ko" ] || cp "$(dirname "$ko")/$m.ko" "$root/lib/modules/"
done
if [ "$flavor" = debian ]; then
	# Debian's own modules, from its linux-modules package in the userland
	# (scripts/build-debian.sh), with what they depend on (modules.dep),
	# decompressed for busybox's insmod; the topologies users build need
	# the bridge, veth and 8021q; the vhost_net test, vhost_net (and tap, vhost).
	kimage=$(dirname "$kdir")/vmlinuz
	mdir=$(rt_debian_moddir)
	# dep_closure MODULE...: the modules' files and those they depend on,
	# relative to $mdir, one per line (modules.dep lists a module's whole
	# closure on its line).
	dep_closure() {
		local m
		for m in "$@"; do
			sed -n "s#^\([^:]*/$m\.ko\.xz\):\(.*\)#\1\2#p" "$mdir/modules.dep"
		done | tr ' ' '\n' | sed '/^$/d' | sort -u
	}
	dep_closure tun pktgen dummy geneve bridge veth 8021q vhost_net | while read -r m; do
		# Ours (updates/*.ko: depmod makes vhost_net.ko depend on
		# rust_tun_vhost.ko) were copied above.
		case $m in *.ko.xz) xz -dc "$mdir/$m" >"$root/lib/modules/$(basename "$m" .xz)" ;; esac
	done
	[ -f "$root/lib/modules/tun.ko" ] || rt_die "no tun.ko in $mdir"
	# The test suite's package checks (debian-pkg.sh): the module trees the
	# Debian packages left (scripts/build-debian.sh), with Debian's own
	# modules the checks load (tun, vhost_net and theirs) at their places,
	# and Debian's kmod, run by its own loader and libraries (the guest's
	# are the host's).
	pkgdir=$(rt_debian_pkgdir)
	if [ "$(basename "$script")" = tests.sh ] && [ -d "$pkgdir/beside" ]; then
		uroot=$(dirname "$kdir")/root
		mkdir -p "$root/pkg"
		for t in beside dropin fallback; do
			cp -a "$pkgdir/$t" "$root/pkg/"
			dep_closure tun vhost_net | while read -r m; do
				mkdir -p "$root/pkg/$t/lib/modules/$RT_DEBIAN_KREL/$(dirname "$m")"
				cp "$mdir/$m" "$root/pkg/$t/lib/modules/$RT_DEBIAN_KREL/$m"
			done
		done
		mkdir -p "$root/pkg/kmod/bin" "$root/pkg/kmod/lib"
		cp "$uroot/usr/bin/kmod" "$root/pkg/kmod/kmod"
		for lib in ld-linux-x86-64.so.2 libc.so.6 libcrypto.so.3 libz.so.1 libzstd.so.1 liblzma.so.5; do
			cp -L "$uroot/lib/x86_64-linux-gnu/$lib" "$root/pkg/kmod/lib/" ||
				rt_die "no $lib in Debian's userland"
		done
		for tool in kmod modprobe modinfo depmod lsmod; do
			printf '#!/bin/sh\nexec /pkg/kmod/lib/ld-linux-x86-64.so.2 --library-path /pkg/kmod/lib --argv0 %s /pkg/kmod/kmod "$@"\n' \
				"$tool" >"$root/pkg/kmod/bin/$tool"
			chmod +x "$root/pkg/kmod/bin/$tool"
		done
		cp "$RT_TOP/scripts/guest/debian-pkg.sh" "$root/lib/rtun-debian-pkg.sh"
	fi
else
	kimage=$kdir/arch/x86/boot/bzImage
	for m in drivers/net/tun.ko net/core/pktgen.ko drivers/net/dummy.ko; do
		cp "$kdir/$m" "$root/lib/modules/"
	done
	# 7.3's tun selftest creates a geneve device over the tap (GENEVE=m in
	# linux-7.3.config) and needs its UDP tunnel modules; clients-smoke.sh loads
	# them (and vnet_tnl_read's tunnel). 6.12's kernels build none of them.
	# vhost-net (rust-tun.config), for the vhost_net test: vhost_net.ko and
	# what it needs (vhost.ko, vhost_iotlb.ko; tap.ko where the kernel builds it).
	# veth (VETH=m), whose native XDP redirects into a TAP (xdp_redirect_veth,
	# vhost_net_xdp) and which the clients' wg-veth topology runs over.
	for m in drivers/net/geneve.ko net/ipv4/udp_tunnel.ko net/ipv6/ip6_udp_tunnel.ko \
		drivers/vhost/vhost_net.ko drivers/vhost/vhost.ko drivers/vhost/vhost_iotlb.ko drivers/net/tap.ko \
		drivers/net/veth.ko; do
		[ ! -f "$kdir/$m" ] || cp "$kdir/$m" "$root/lib/modules/"
	done
fi
for extra in "${RTUN_BENCH_DIR:-$RT_TOP/bench}"/*.ko; do
	[ -f "$extra" ] && cp "$extra" "$root/lib/modules/"
done
echo "$smp" >"$root/etc/rtun-smp"
echo "$flavor" >"$root/etc/rtun-flavor"
rt_kernel_series "$kernel" >"$root/etc/rtun-kernel"
sed -n 's/^CONFIG_HZ=//p' "$kdir/.config" >"$root/etc/rtun-hz"
# Whether the kernel has jump labels (the guards' sites, or their fallback).
if grep -qx 'CONFIG_JUMP_LABEL=y' "$kdir/.config"; then echo y; else echo n; fi >"$root/etc/rtun-jump-label"
echo "$*" >"$root/etc/rtun-args"
# The host's contention reaches the runner on the second serial port.
[ -z "$progress" ] || echo /dev/ttyS1 >"$root/etc/rtun-ctl"
[ $clients = 0 ] || add_clients "$root"
[ -z "${RTUN_PAD_KB:-}" ] || head -c $((RTUN_PAD_KB * 1024)) /dev/zero >"$root/pad"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initramfs.gz"

[ -n "$log" ] || log=$work/console.log
accel=(-accel "$tcg")
# no_timer_check: at boot the kernel checks that the IO-APIC timer
# interrupt arrives within a busy loop, and panics ("IO-APIC + timer
# doesn't work!") if it does not; a guest starved by a loaded host fails
# that check (seen on a host slowed 2.1x by a CPU quota, 2026-12-06).
# Virtual machines commonly boot with it. Not under -icount, where guest
# time is instructions and the check cannot fail: the benchmark boots
# stay as they were.
kargs="console=ttyS0 panic=-1 oops=panic rdinit=/init"
[ $icount = 1 ] || kargs="$kargs no_timer_check"
[ $icount = 0 ] || accel=(-accel tcg -icount shift=0,sleep=off)
# The watchdog's arguments, and the second serial port: QEMU's pipe
# chardev reads what the host writes to ctl.in (a FIFO it opens read-write,
# so it never sees an end) and writes what the guest sends to ctl.out (a
# file: nothing is sent, the runner's raw mode has no echo).
dog=(--log "$log" --pidfile "$work/qemu.pid" --verdict "$work/verdict" --backstop "$timeout")
ctl=()
if [ -n "$progress" ]; then
	mkfifo "$work/ctl.in"
	: >"$work/ctl.out"
	ctl=(-serial "pipe:$work/ctl")
	dog+=(--slack "$progress" --ctl "$work/ctl.in")
	[ $selftest = 0 ] || dog+=(--selftest-contention 0.5)
fi
rt_log "booting $kernel kernel, -smp $smp$([ $icount = 0 ] || echo ', icount'), $(basename "$script") $*"
rt_log "watchdog: backstop ${timeout} s$([ -z "$progress" ] || echo "; no progress: the runner's per-test timeout + $progress s without a test's result, $((2 * progress)) s before its header (uncontended time)")"
set +e
mem=1024
[ "$flavor" = test ] || mem=3072
# timeout(1) is the last resort, should the watchdog itself fail.
timeout --foreground $((timeout + 60)) qemu-system-x86_64 "${accel[@]}" -m "$mem" -smp "$smp" \
	-nographic -no-reboot -nodefaults -serial stdio "${ctl[@]}" -pidfile "$work/qemu.pid" \
	-kernel "$kimage" -initrd "$work/initramfs.gz" \
	-append "$kargs ${RTUN_KERNEL_ARGS:-}" ${RTUN_QEMU_ARGS:-} </dev/null 2>&1 |
	python3 "$RT_TOP/scripts/guest-watchdog.py" "${dog[@]}"
qrc=${PIPESTATUS[0]} wrc=${PIPESTATUS[1]}
set -e
# The serial console ends lines with CR.
sed -i 's/\r$//' "$log"

fail=0
stopped=$(cat "$work/verdict" 2>/dev/null || true)
if [ -n "$stopped" ]; then
	rt_log "FAIL: unfinished guest, stopped by the watchdog: $stopped"
	fail=1
elif [ "$wrc" != 0 ]; then
	rt_log "FAIL: the console's watchdog failed (exit $wrc)"
	fail=1
fi
if [ "$qrc" = 124 ]; then
	rt_log "FAIL: guest timed out after $((timeout + 60)) s (timeout(1): the watchdog did not stop it)"
	fail=1
fi
# Kernel splats: WARN/BUG/lockdep/KASAN reports start their message with
# these words (a driver's own "pktgen: WARNING: ..." message does not count).
# Watchdogs: soft/hard lockups, hung tasks, RCU stalls. Device references
# never given back (netdev_wait_allrefs) and the reference trackers' reports.
bad=$(grep -nE '(^|\] )(WARNING:|BUG:|Oops|Kernel panic|kernel BUG|general protection fault|UBSAN:|KASAN:)|Call Trace:|RIP: |unreferenced object|watchdog: BUG:|soft lockup|hard LOCKUP|INFO: task .* blocked for more than|rcu: INFO: .*detected stall|rcu_(sched|preempt) (self-)?detected stall|unregister_netdevice: waiting for|ref_tracker: ' "$log" || true)
# Debian's kernel signs its modules (MODULE_SIG, not forced): ours, unsigned
# (no key of Debian's), load with the E taint and this one message.
taint=$(grep -niE 'taint' "$log" | grep -v 'loading out-of-tree module taints kernel' |
	{ if [ "$flavor" = debian ]; then grep -v 'module verification failed: signature and/or required key missing - tainting kernel'; else cat; fi } || true)
if [ -n "$bad$taint" ]; then
	rt_log "FAIL: kernel problems in the guest log:"
	printf '%s\n' "$bad" "$taint" | grep -v '^$' | head -20 >&2
	fail=1
fi
verdict=$(sed -n 's/^RTUN-VERDICT: rc=\([0-9]*\)$/\1/p' "$log" | tail -1)
if [ -z "$verdict" ]; then
	rt_log "FAIL: the guest gave no verdict"
	fail=1
elif [ "$verdict" != 0 ]; then
	rt_log "FAIL: the guest script exited $verdict"
	fail=1
fi
exit $fail
