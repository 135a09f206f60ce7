# SPDX-License-Identifier: GPL-2.0
# Guest side of the memory table: what COUNT idle persistent TAP devices of
# DRIVER cost, single-queue and 4-queue (queues attached, then closed).
# One boot per driver (bench.sh), prepared identically: 200 dummy devices
# created and deleted first, so the core's caches for net devices are warm
# before either driver is measured. MemFree is read after sync and
# dropping the page cache.
# usage: bench-mem.sh DRIVER [COUNT]
set -u
DRIVER=$1
COUNT=${2:-200}
case $DRIVER in
rust_tun) node=/dev/net/rust_tun ;;
tun) node=/dev/net/tun ;;
*) echo "bench-mem: unknown driver $DRIVER"; exit 1 ;;
esac
insmod /lib/modules/$DRIVER.ko && insmod /lib/modules/dummy.ko numdummies=0 || exit 1

memfree() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	awk '/^MemFree:/ { print $2 }' /proc/meminfo
}

# Warm-up: the core's own allocations for COUNT devices.
i=0
while [ $i -lt "$COUNT" ]; do ip link add wd$i type dummy || exit 1; i=$((i + 1)); done
i=0
while [ $i -lt "$COUNT" ]; do ip link del wd$i || exit 1; i=$((i + 1)); done

rc=0
for queues in 1 4; do
	before=$(memfree)
	out=$(rtun mkdevs "$node" m$queues- "$COUNT" $queues) || { echo "bench-mem: $out"; rc=1; continue; }
	after=$(memfree)
	echo "BENCH mem driver=$DRIVER queues=$queues devices=$COUNT memfree_before_kb=$before memfree_after_kb=$after kb_per_device=$(((before - after) / COUNT))"
done
exit $rc
