# SPDX-License-Identifier: GPL-2.0
# Guest side of the test suite: load the modules and run every guest test.
# Arguments are passed to `rtun test` (an optional name filter).
set -u
insmod /lib/modules/rust_tun.ko || exit 1
echo "RTUN-GUEST: modinfo:"
modinfo rust_tun || exit 1
rtun test "$@"
rc=$?
# Everything must unload cleanly at the end.
rmmod rust_tun || rc=1
lsmod | grep -q '^tun ' && { rmmod tun || rc=1; }
exit $rc
