#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Every test of rust-tun, from a fresh machine: install the toolchain, build
# (or reuse) the test kernel, build the module (rustfmt check, clippy build,
# real build), build and host-test the guest programs, then boot the guest
# and run the guest suite against rust_tun and, side by side, the C tun.
#
# Prints KTAP from the guest, then the closing line "N passed, N failed";
# exits non-zero on any failure, kernel splat, or unfinished guest.
#
# usage: scripts/test.sh [--quick] [NAME=VALUE...] [FILTER]
# The guest suite runs side by side (rust_tun as /dev/net/rust_tun beside
# tun.ko) on every kernel; drop-in (rust_tun as /dev/net/tun, tun.ko absent)
# and with every device on NAPI queues (IFF_NAPI, both drivers) on the test
# kernel; each with the real clients (run-guest.sh --clients). The NAPI
# tests themselves (napi, napi_frags) are in every kernel's suite: the
# debug kernel runs them under KASAN, lockdep and kmemleak; the whole suite
# on NAPI queues there would cost CI about 25 minutes more.
#
#   --quick      run the guest suites on the test kernel only, not also on the
#                debug kernel (KASAN, lockdep, kmemleak, ...; ~7 min to build
#                once, ~38 min to run) and the no-jump-label kernel (the
#                guards' fallback; ~8 min to build once, ~3 min to run)
#   NAME=VALUE   passed to the guest tests: RTUN_SEED, RTUN_STRESS_SECS,
#                RTUN_FUZZ_ITERS
set -uo pipefail
. "$(dirname "$0")/lib.sh"
debug=1
guest_args=()
for a in "$@"; do
	case $a in
	--quick) debug=0 ;;
	*) guest_args+=("$a") ;;
	esac
done

passed=0 failed=0 skipped=0
step() { # step NAME COMMAND...: a host-side check counted as one test
	local name=$1
	shift
	rt_log "check $name"
	if "$@"; then
		passed=$((passed + 1))
		echo "ok - host $name"
	else
		failed=$((failed + 1))
		echo "not ok - host $name"
	fi
}
finish() {
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
	exit $?
}

bash "$RT_TOP/scripts/install-toolchain.sh" >&2 || { failed=$((failed + 1)); finish; }
kdir=$(bash "$RT_TOP/scripts/build-kernel.sh" test) && [ -d "$kdir" ] ||
	{ rt_log "no kernel tree: '$kdir'"; failed=$((failed + 1)); finish; }

mk() { make -C "$RT_TOP" KDIR="$kdir" "$@"; }
clippy_clean() {
	local out
	out=$(mk CLIPPY=1 2>&1) || { echo "$out"; return 1; }
	echo "$out" | grep -E '^(warning|error)' -A8 && return 1
	return 0
}
step rustfmt mk rustfmtcheck
step clippy clippy_clean
# A failed build must not let the guest suite run a stale module or
# program: both are removed first, and the guest suite runs only if both
# were built now.
rm -f "$RT_TOP/rust_tun.ko" "$(rt_guest_bin)"
step build mk
built_module=$([ -f "$RT_TOP/rust_tun.ko" ] && echo 1 || echo 0)
step guest-programs bash "$RT_TOP/scripts/build-guest.sh" --test
built_guest=$([ -x "$(rt_guest_bin)" ] && echo 1 || echo 0)
step compile-fail bash "$RT_TOP/scripts/compile-fail.sh" "$kdir"
step host-logic bash -c "cd '$RT_TOP/hosttest' && RUSTC=$RT_RUSTC $RT_CARGO test --locked"

guest_suite() { # guest_suite FLAVOR KDIR [dropin]
	local flavor=$1 kd=$2 mode=${3:-} log gp gf plan grc
	log=$(mktemp /tmp/rtun-test-log.XXXXXX)
	if [ "$flavor" != test ]; then
		# The module must be built against the kernel it runs on.
		make -C "$RT_TOP" KDIR="$kd" >/dev/null ||
			{ rt_log "module build for $flavor failed"; failed=$((failed + 1)); return; }
	fi
	bash "$RT_TOP/scripts/run-guest.sh" --kernel "$flavor" --clients --timeout 3600 --log "$log" \
		"$RT_TOP/scripts/guest/tests.sh" ${mode:+"$mode"} "${guest_args[@]}"
	grc=$?
	gp=$(grep -E '^ok [0-9]+ ' "$log" | grep -vc ' # SKIP')
	gs=$(grep -cE '^ok [0-9]+ .* # SKIP' "$log")
	gf=$(grep -cE '^not ok [0-9]+ ' "$log")
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | tail -1)
	passed=$((passed + gp))
	skipped=$((skipped + gs))
	failed=$((failed + gf))
	# A guest that did not finish its plan, or failed outside the tests
	# (kernel splat, kmemleak, verdict), is one more failure.
	if [ "${plan:-0}" = 0 ] || [ $((gp + gs + gf)) != "${plan:-0}" ]; then
		rt_log "$flavor${mode:+ $mode} guest ran $((gp + gs + gf)) of ${plan:-?} planned tests"
		failed=$((failed + 1))
	elif [ $grc != 0 ] && [ $gf = 0 ]; then
		failed=$((failed + 1))
	fi
	rm -f "$log"
}

if [ "$built_module" = 1 ] && [ "$built_guest" = 1 ]; then
	guest_suite test "$kdir"
	# rust_tun as /dev/net/tun, tun.ko absent: the C tun's tests and the
	# real clients against rust_tun.
	guest_suite test "$kdir" dropin
	# Every device with IFF_NAPI: the whole suite on NAPI queues, against
	# both drivers.
	guest_suite test "$kdir" napi
	if [ $debug = 1 ]; then
		# The drop-in run is on the test kernel only: what it adds over
		# the side-by-side run is the real clients (on the debug kernel
		# their crypto and TCP under KASAN take most of CI's budget).
		for flavor in debug nojl; do
			fkdir=$(bash "$RT_TOP/scripts/build-kernel.sh" $flavor) && [ -d "$fkdir" ] &&
				guest_suite $flavor "$fkdir" ||
				{ rt_log "$flavor kernel unavailable"; failed=$((failed + 1)); }
		done
		# Leave the module built for the test kernel.
		make -C "$RT_TOP" KDIR="$kdir" >/dev/null
	fi
else
	rt_log "guest suites not run: the module or the guest programs did not build"
	failed=$((failed + 1))
fi
if [ $debug = 0 ]; then
	echo "# --quick: the debug and no-jump-label kernels' guest suites were not run"
fi
finish
