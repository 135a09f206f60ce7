# SPDX-License-Identifier: GPL-2.0
# Reproducer for an upstream pktgen bug (not rust-tun's): a "start" written
# to pgctrl while a run is in progress makes the worker thread run
# pktgen_run() on the running device, which sets pkt_dev->skb = NULL without
# freeing it (kmemleak: an skb allocated by kpktgend_0) and clears the run's
# counters (the packets sent so far vanish from pkts-sofar). "start" itself
# can return before the worker has taken the request (pktgen waits a fixed
# 125 ms), so a loop of "start; read counters" on a busy machine does this
# by itself. No tun device is involved: dummy0 is the target.
# usage (debug kernel, for kmemleak):
#   scripts/run-guest.sh --kernel debug scripts/guest/pktgen-start-race.sh
set -u
PG=/proc/net/pktgen
insmod /lib/modules/dummy.ko numdummies=1 && insmod /lib/modules/pktgen.ko || exit 1
ip link set dummy0 up
echo rem_device_all >$PG/kpktgend_0
echo "add_device dummy0" >$PG/kpktgend_0
for cmd in "count 0" "clone_skb 0" "burst 1" "pkt_size 60" "xmit_mode start_xmit" \
	"delay 100000" "dst 10.99.0.2" "dst_mac 02:00:00:00:00:02"; do
	echo "$cmd" >$PG/dummy0
done
sofar() { sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p' $PG/dummy0; }
echo start >$PG/pgctrl &
first=$!
sleep 2
before=$(sofar)
# A second start while the first run is going.
echo start >$PG/pgctrl &
second=$!
sleep 1
after=$(sofar)
echo stop >$PG/pgctrl
wait $first $second
echo "pktgen-start-race: pkts-sofar $before before the second start, $after one second later"
rc=0
if [ "${after:-0}" -lt "${before:-0}" ]; then
	echo "pktgen-start-race: REPRODUCED: the second start cleared the running counters"
	rc=1
fi
echo rem_device_all >$PG/kpktgend_0
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 1
	echo scan >/sys/kernel/debug/kmemleak
	if grep -q kpktgend /sys/kernel/debug/kmemleak; then
		echo "pktgen-start-race: REPRODUCED: kmemleak reports an skb allocated by kpktgend_0:"
		head -30 /sys/kernel/debug/kmemleak
		rc=1
	fi
	# Do not let the runner count the report as ours.
	echo clear >/sys/kernel/debug/kmemleak
fi
[ $rc = 1 ] || echo "pktgen-start-race: not reproduced"
exit 0
