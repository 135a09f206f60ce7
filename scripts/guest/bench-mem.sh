# SPDX-License-Identifier: GPL-2.0
# Guest side of the memory table: what COUNT idle persistent TAP devices
# cost, single-queue and 4-queue (queues attached, then closed), rust_tun
# and C tun in one boot. MemFree moves for reasons of its own (per-CPU page
# lists, RCU-deferred frees, slabs grown by whatever ran before; memfree()
# counts the per-CPU lists back in), so each
# measurement is preceded by a warm-up with the same driver and queue count
# (COUNT devices created and deleted: the caches the devices need exist),
# the drivers alternate which goes first, and ROUNDS rounds are printed:
# bench-report.py takes each row's median.
# usage: bench-mem.sh [COUNT] [ROUNDS]
set -u
COUNT=${1:-200}
ROUNDS=${2:-5}
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko || exit 1

# Free memory in kB: MemFree plus the pages on the per-CPU page lists.
# A page on a per-CPU list is not counted free (NR_FREE_PAGES drops when
# the list takes it from the buddy allocator), and how full the lists are
# is the allocator's business: on this 1 GB guest they hold up to a few
# MB, as much as the whole measurement (rounds spread 19-42 kB per device
# at 200 devices when MemFree alone was read). stat_refresh first folds
# every CPU's pending counter deltas into the totals that meminfo prints.
memfree() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	echo 1 >/proc/sys/vm/stat_refresh
	free=$(awk '/^MemFree:/ { print $2 }' /proc/meminfo)
	pcp=$(awk '$1 == "count:" { n += $2 } END { print n + 0 }' /proc/zoneinfo)
	echo $((free + pcp * 4))	# 4 kB pages (x86_64)
}

# Deletes every device whose name starts with $1, then waits for the
# deferred frees (RCU callbacks) to land.
del() {
	for d in $(ls /sys/class/net | grep "^$1"); do ip link del "$d" || return 1; done
	sleep 3
}

node_of() {
	case $1 in
	rust_tun) echo /dev/net/rust_tun ;;
	tun) echo /dev/net/tun ;;
	esac
}

rc=0
round=1
while [ $round -le "$ROUNDS" ]; do
	if [ $((round % 2)) = 1 ]; then order="rust_tun tun"; else order="tun rust_tun"; fi
	for queues in 1 4; do
		for driver in $order; do
			node=$(node_of $driver)
			out=$(rtun mkdevs "$node" w- "$COUNT" $queues) || { echo "bench-mem: $out"; rc=1; continue; }
			del w- || rc=1
			before=$(memfree)
			out=$(rtun mkdevs "$node" m- "$COUNT" $queues) || { echo "bench-mem: $out"; rc=1; continue; }
			after=$(memfree)
			echo "BENCH mem driver=$driver queues=$queues devices=$COUNT round=$round memfree_before_kb=$before memfree_after_kb=$after kb_per_device=$(((before - after) / COUNT))"
			del m- || rc=1
		done
	done
	round=$((round + 1))
done
exit $rc
