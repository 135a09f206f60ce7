#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# rust_dummy.ko is built on the core of sys/ alone: after a build (make
# all), check that none of the tun part's helpers (helpers/tun/*.c) is
# declared to rust_dummy's crate (dummy_helpers_generated.rs) or present in
# rust_dummy.ko, and that no item of sys::tun or sys::bench is compiled
# into it; and, so that the check can fail, that rust_tun's build has the
# same helpers declared.
#
# usage: scripts/layer-check.sh [DIR]   (DIR: the built tree, default the
#        repository)
set -euo pipefail
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$dir"
fail=0
mapfile -t tun_helpers < <(sed -n 's/^__rtun_helper .*\brtun_helper_\([A-Za-z0-9_]*\)(.*/\1/p' helpers/tun/*.c | sort -u)
[ ${#tun_helpers[@]} -gt 0 ] || { echo "layer-check: no helpers found in helpers/tun/" >&2; exit 1; }
for h in "${tun_helpers[@]}"; do
	grep -q "link_name=\"rtun_helper_$h\"" tun_helpers_generated.rs ||
		{ echo "layer-check: rust_tun's bindings lack rtun_helper_$h" >&2; fail=1; }
	if grep -q "link_name=\"rtun_helper_$h\"" dummy_helpers_generated.rs; then
		echo "layer-check: rust_dummy's bindings declare the tun helper rtun_helper_$h" >&2
		fail=1
	fi
done
syms=$(nm rust_dummy.ko)
if grep -E "rtun_helper_($(IFS='|'; echo "${tun_helpers[*]}"))\$" <<<"$syms"; then
	echo "layer-check: rust_dummy.ko has tun helpers (above)" >&2
	fail=1
fi
# Rust symbols of sys::tun / sys::bench, legacy or v0 mangling.
if grep -E '3sys(3tun|5bench)' <<<"$syms"; then
	echo "layer-check: rust_dummy.ko has items of sys::tun or sys::bench (above)" >&2
	fail=1
fi
[ $fail = 0 ] && echo "layer-check: rust_dummy.ko is built on the core alone (${#tun_helpers[@]} tun helpers absent)"
exit $fail
