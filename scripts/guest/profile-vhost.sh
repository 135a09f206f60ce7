# SPDX-License-Identifier: GPL-2.0
# Guest side of `scripts/profile.sh vhost`: one `rtun bench-vhost` run per
# driver (rust_tun first, then C tun), each with vhost_net.ko over its
# provider of tun.ko's exports (bench-vhost.sh's way), marked by sync()
# around the measured loop; prints where the modules' text is.
# usage: profile-vhost.sh DIR COUNT
set -u
M=/lib/modules
insmod $M/rust_tun.ko || exit 1
# As the benchmark: the state every measurement starts from.
. /lib/rtun-bench-settle.sh
bench_settle
echo "PROFILE module rust_tun $(cat /sys/module/rust_tun/sections/.text)"
turn=1
for row in rust_tun_vhost:/dev/net/rust_tun tun:/dev/net/tun; do
	provider=${row%%:*} node=${row#*:}
	insmod $M/$provider.ko || exit 1
	for m in vhost_iotlb vhost tap vhost_net; do
		[ ! -f $M/$m.ko ] || insmod $M/$m.ko || exit 1
	done
	# Where this turn's modules are (`module@TURN`: the plugin's count
	# file of the turn; each turn is two marks).
	for m in $provider vhost_iotlb vhost vhost_net; do
		[ ! -d /sys/module/$m/sections ] || echo "PROFILE module@$turn $m $(cat /sys/module/$m/sections/.text)"
	done
	turn=$((turn + 2))
	RTUN_PROF_SYNC=1 rtun bench-vhost "$node" "$1" "$2" || exit 1
	for m in vhost_net tap vhost vhost_iotlb; do
		! grep -q "^$m " /proc/modules || rmmod $m
	done
	rmmod "$provider"
done
