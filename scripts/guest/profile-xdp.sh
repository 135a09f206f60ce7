# SPDX-License-Identifier: GPL-2.0
# Guest side of `scripts/profile.sh xdp`: one `rtun bench-xdp` run of ROW
# per driver (rust_tun first, then C tun), marked by sync() around the
# measured loop; prints where the modules' text is.
# usage: profile-xdp.sh ROW COUNT
set -u
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko || exit 1
# As the benchmark: the state every measurement starts from.
. /lib/rtun-bench-settle.sh
bench_settle
echo "PROFILE module rust_tun $(cat /sys/module/rust_tun/sections/.text)"
echo "PROFILE module tun $(cat /sys/module/tun/sections/.text)"
for node in /dev/net/rust_tun /dev/net/tun; do
	RTUN_PROF_SYNC=1 rtun bench-xdp "$node" "$1" "$2" || exit 1
done
