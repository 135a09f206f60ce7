# SPDX-License-Identifier: GPL-2.0
# Guest side of scripts/profile.sh: one `rtun bench-gso DIR COUNT CHUNK`
# run with a sync() before and after each turn, which the
# instruction-counting plugin takes as marks; prints where the two modules'
# text is, for the symbols.
# usage: profile-gso.sh DIR COUNT [NAPI] [CHUNK]
set -u
insmod /lib/modules/rust_tun.ko && insmod /lib/modules/tun.ko || exit 1
# The state every measurement starts from (bench-settle.sh).
. /lib/rtun-bench-settle.sh
bench_settle
for m in rust_tun tun; do
	echo "PROFILE module $m $(cat /sys/module/$m/sections/.text)"
done
RTUN_NAPI=${3:-0} RTUN_PROF_SYNC=1 rtun bench-gso "$1" "$2" "${4:-$2}"
