#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest programs (guest/, statically linked) and run their host tests.
# usage: scripts/build-guest.sh [--test]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RT_TOP/guest"
if [ "${1:-}" = --test ]; then
	RUSTC=$RT_RUSTC "$RT_CARGO" test --locked
fi
RUSTC=$RT_RUSTC RUSTFLAGS="-C target-feature=+crt-static" \
	"$RT_CARGO" build --locked --release --target x86_64-unknown-linux-gnu
file "$(rt_guest_bin)" | grep -qE 'statically linked|static-pie linked' || rt_die "$(rt_guest_bin) is not static"
