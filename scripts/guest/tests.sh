# SPDX-License-Identifier: GPL-2.0
# Guest side of the test suite: load the modules and run every guest test.
# Arguments: NAME=VALUE settings exported to the tests (RTUN_SEED,
# RTUN_STRESS_SECS, RTUN_FUZZ_ITERS, RTUN_TEST_TIMEOUT, RTUN_DRIVERS=rust,
# RTUN_SHARD=I/N, RTUN_SELFTEST=1: guest/src/runner.rs), `dropin` for the
# drop-in run, `napi`
# for the NAPI run (RTUN_NAPI=1: every device the tests create asks for
# IFF_NAPI), then an optional test-name filter.
#
# The drop-in run: tun.ko is moved out of modprobe's sight (nothing can load
# it behind the tests' back), rust_tun is loaded with dropin=1 as
# /dev/net/tun, and RTUN_DROPIN=1 makes `rtun test` run every test written
# for the C tun against it, the real clients among them, plus the drop-in
# tests.
set -u
filter=
dropin=0
for a in "$@"; do
	case $a in
	*=*) export "$a" ;;
	dropin) dropin=1 ;;
	napi) export RTUN_NAPI=1 ;;
	*) filter=$a ;;
	esac
done
params=
if [ $dropin = 1 ]; then
	mkdir -p /lib/modules/.hidden
	mv /lib/modules/tun.ko /lib/modules/.hidden/tun.ko || exit 1
	rm -f /lib/modules/$(uname -r)/tun.ko
	depmod
	params=dropin=1
	export RTUN_DROPIN=1
fi
# The debug kernel (kmemleak) runs a longer stress by default: leaks and
# races that need time show there.
if [ -z "${RTUN_STRESS_SECS:-}" ] && [ -e /sys/kernel/debug/kmemleak ]; then
	export RTUN_STRESS_SECS=60
fi
# The debug kernel's fuzzer: each of its operations costs about three
# times the old fuzzer's there (vnet, NAPI frags, namespaces), so fewer of
# them keep it well inside its timeout (README: measured durations).
if [ -z "${RTUN_FUZZ_ITERS:-}" ] && [ "$(cat /etc/rtun-flavor)" = debug ]; then
	export RTUN_FUZZ_ITERS=4000
fi
# Each test's timeout (the runner's watchdog), above the slowest test on
# each kernel: on the test kernel about four times its fuzzer's ~50 s;
# on the debug kernel the fuzzer has taken 400-585 s of its 600 s; on
# Debian's kernel C tun's `clients` (7.3's own tun selftest and the
# bridge, VLAN and wireguard topologies) takes 200-225 s quiet, and went
# past 240 s once with a benchmark running beside the suite.
# On a host slower than the one these were measured on (RTUN_SLOWDOWN,
# percent: scripts/test.sh), every test takes that much longer. The runner
# counts them in uncontended time: what the host reports its vCPU waited
# for a host CPU during a test does not count (guest/src/runner.rs).
if [ -z "${RTUN_TEST_TIMEOUT:-}" ]; then
	case $(cat /etc/rtun-flavor) in
	debug) t=600 ;;
	debian) t=480 ;;
	*) t=240 ;;
	esac
	export RTUN_TEST_TIMEOUT=$((t * ${RTUN_SLOWDOWN:-100} / 100))
fi
# Debian's kernel: the packages' modules as DKMS installed them, through
# kmod, before the suite and after it (debian-pkg.sh).
pkg=0
if [ -f /lib/rtun-debian-pkg.sh ]; then
	. /lib/rtun-debian-pkg.sh
	pkg=1
	pkg_before $([ $dropin = 0 ] || echo dropin) || pkg=2
fi
insmod /lib/modules/rust_tun.ko $params || exit 1
echo "RTUN-GUEST: modinfo:"
modinfo rust_tun || exit 1
rtun test $filter
rc=$?
# Everything must unload cleanly at the end.
rmmod rust_tun || rc=1
lsmod | grep -q '^tun ' && { rmmod tun || rc=1; }
lsmod | grep -q '^pktgen ' && { rmmod pktgen || rc=1; }
if [ $pkg != 0 ]; then
	[ $pkg = 1 ] || rc=1
	pkg_after $([ $dropin = 0 ] || echo dropin) || rc=1
fi
# On a kmemleak kernel: scan after unload; any report fails the run.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 1
	echo scan >/sys/kernel/debug/kmemleak
	leaks=$(cat /sys/kernel/debug/kmemleak)
	if [ -n "$leaks" ]; then
		echo "RTUN-GUEST: kmemleak found leaks:"
		echo "$leaks" | head -60
		rc=1
	else
		echo "RTUN-GUEST: kmemleak: no leaks"
	fi
fi
exit $rc
