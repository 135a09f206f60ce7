#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: install the toolchain, build (or reuse) the test kernel,
# build rust_tun.ko and the guest programs, boot the guest, insmod, create a
# TAP device, drive it with pktgen and print pktgen's result -- for rust_tun
# and, side by side, for the C tun.
#
# usage: scripts/run.sh [COUNT]   (packets per device, default 100000)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
count=${1:-100000}

bash "$RT_TOP/scripts/install-toolchain.sh" >&2
kdir=$(bash "$RT_TOP/scripts/build-kernel.sh" test)
make -C "$RT_TOP" KDIR="$kdir" >&2
bash "$RT_TOP/scripts/build-guest.sh" >&2
log=$(mktemp /tmp/rtun-run-log.XXXXXX)
trap 'rm -f "$log"' EXIT
rc=0
bash "$RT_TOP/scripts/run-guest.sh" --log "$log" "$RT_TOP/scripts/guest/pktgen.sh" "$count" >/dev/null || rc=$?
echo "== pktgen results ($count packets, 64 bytes, xmit_mode start_xmit) =="
grep -E '^pktgen|Result:|pps' "$log" || true
exit $rc
