# SPDX-License-Identifier: GPL-2.0
# Guest side of the test suite: load the modules and run every guest test.
# Arguments: NAME=VALUE settings exported to the tests (RTUN_SEED,
# RTUN_STRESS_SECS, RTUN_FUZZ_ITERS), then an optional test-name filter.
set -u
filter=
for a in "$@"; do
	case $a in
	*=*) export "$a" ;;
	*) filter=$a ;;
	esac
done
# The debug kernel (kmemleak) runs a longer stress by default: leaks and
# races that need time show there.
if [ -z "${RTUN_STRESS_SECS:-}" ] && [ -e /sys/kernel/debug/kmemleak ]; then
	export RTUN_STRESS_SECS=60
fi
insmod /lib/modules/rust_tun.ko || exit 1
echo "RTUN-GUEST: modinfo:"
modinfo rust_tun || exit 1
rtun test $filter
rc=$?
# Everything must unload cleanly at the end.
rmmod rust_tun || rc=1
lsmod | grep -q '^tun ' && { rmmod tun || rc=1; }
lsmod | grep -q '^pktgen ' && { rmmod pktgen || rc=1; }
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
