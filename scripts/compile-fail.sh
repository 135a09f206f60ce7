#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The unsafe layer's soundness rules, checked by the compiler: every case of
# compile_fail.rs must be rejected, with its expected error. Builds a copy
# of the module per case (the work tree's build is left alone).
#
# usage: scripts/compile-fail.sh KDIR
set -uo pipefail
. "$(dirname "$0")/lib.sh"
kdir=$1
cases=(
	"ref_across_replace:E0502"
	"rtnl_locked_aliasing:E0502"
	"device_escapes_rtnl:lifetime may not live long enough|borrowed data escapes"
	"rcuarc_needs_sync:E0277"
	"rtnl_locked_needs_send:E0277"
	"dev_file_of_other_priv:E0308"
	"poll_wait_foreign_queue:E0621|lifetime may not live long enough"
	# In sys/static_key.rs (the jump-label site's key is typed).
	"static_key_of_other_type:E0308:sys/static_key.rs"
	"static_key_field_of_other_type:E0308:sys/static_key.rs"
	# In sys/layout.rs (bindgen's layouts are checked against C's).
	"layout_size_mismatch:differs in size from C's:sys/layout.rs"
)
work=$(mktemp -d /tmp/rtun-compile-fail.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Two workers (this machine kind has two cores), each with its own copy of
# the sources, each building its share of the cases one after another:
# only the crate is rebuilt between cases (Kbuild sees the cfg change), the
# bindings and helpers are built once per copy.
check_case() { # check_case DIR CASE: 0 if the case is rejected as it must be
	local dir=$1 c=$2 name want file=compile_fail.rs out
	name=${c%%:*} want=${c#*:}
	case $want in *:*) file=${want##*:} want=${want%:*} ;; esac
	out=$(make -C "$dir" KDIR="$kdir" RTUN_COMPILE_FAIL="$name" 2>&1)
	if [ $? = 0 ]; then
		echo "compile-fail: $name compiled; it must not" >&2
		return 1
	elif ! grep -qE "$want" <<<"$out" || ! grep -qF "$file" <<<"$out"; then
		echo "compile-fail: $name failed, but not with '$want' in $file:" >&2
		grep -E '^error' -A6 <<<"$out" | head -20 >&2
		return 1
	fi
	echo "compile-fail: $name rejected ($(grep -oE "$want" <<<"$out" | head -1))" >&2
}
worker() { # worker I: cases I, I+2, ...; then (worker 0) the tree without a case
	local i=$1 dir=$work/w$1 j fail=0
	rt_copy_module_sources "$dir" || return 1
	for ((j = i; j < ${#cases[@]}; j += 2)); do
		check_case "$dir" "${cases[$j]}" || fail=1
	done
	# The same tree without a case builds: the failures above are the cases'.
	if [ "$i" = 0 ] && ! make -C "$dir" KDIR="$kdir" >/dev/null 2>&1; then
		echo "compile-fail: the tree does not build without a case" >&2
		fail=1
	fi
	return $fail
}
worker 0 &
w0=$!
worker 1
fail=$?
wait $w0 || fail=1
exit $fail
