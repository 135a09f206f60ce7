#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The unsafe layer's soundness rules, checked by the compiler: every case of
# compile_fail.rs (and the cases in sys/) must be rejected, with its
# expected error, where the case is written.
#
# All cases are built at once, in one copy of the module (the work tree's
# build is left alone): rustc goes on after an error and reports every
# case's (type errors, borrow-check errors in other functions, failed
# constants alike), so one build of the crate does what one build per case
# did, in a tenth of the time. Each error is given to the case whose lines
# hold its primary span (`--> FILE:LINE`). A case passes only if an error
# of its own names what it must; an error outside every case (the tree
# itself does not build) fails the check, as does a case that compiled.
# A case that another case's error hid would fail too, never pass: rustc
# skips only the borrow check of a body that has a type error, and no
# case's body holds another case.
#
# usage: scripts/compile-fail.sh KDIR
set -uo pipefail
. "$(dirname "$0")/lib.sh"
kdir=$1
# CASE:PATTERN[:FILE] (FILE default compile_fail.rs). PATTERN, an extended
# regular expression, must match the error's text (its header or notes).
cases=(
	"ref_across_replace:E0502"
	"rtnl_locked_aliasing:E0502"
	"device_escapes_rtnl:lifetime may not live long enough|borrowed data escapes"
	"rcuarc_needs_sync:E0277"
	"rtnl_locked_needs_send:E0277"
	"dev_file_of_other_priv:E0308"
	"poll_wait_foreign_queue:E0621|lifetime may not live long enough"
	"batch_taken_twice:E0382"
	"batch_refused_after_take:E0382"
	"batch_verdict_of_other_call:lifetime may not live long enough|E0308"
	"recv_header_as_sender:E0599"
	"rcudev_ref_across_clear:E0502"
	"uninit_proof_forged:E0423|E0603"
	"timed_moved_while_armed:E0277"
	"timed_state_mut:E0596"
	"timer_state_needs_sync:E0277"
	"file_escapes_open:E0621|lifetime may not live long enough|borrowed data escapes"
	"file_copied_out:E0507"
	"bpf_prog_outlives_rcu:E0505"
	"bpf_prog_on_shared_skb:E0308"
	"xdp_buff_outlives_rxq:E0515"
	"xdp_buff_outlives_slot:E0515"
	"xdp_rxq_outlives_dev:E0505"
	"queue_rxq_outlives_dev:E0505"
	"xdp_ctx_escapes:E0521|borrowed data escapes|lifetime may not live long enough"
	"driver_unsafe_block:usage of an .unsafe. block"
	"driver_unsafe_impl:implementation of an .unsafe. trait"
	# In sys/static_key.rs (the jump-label site's key is typed).
	"static_key_of_other_type:E0308:sys/static_key.rs"
	"static_key_field_of_other_type:E0308:sys/static_key.rs"
	# In sys/layout.rs (bindgen's layouts are checked against C's).
	"layout_size_mismatch:differs in size from C's:sys/layout.rs"
)
work=$(mktemp -d /tmp/rtun-compile-fail.XXXXXX)
trap 'rm -rf "$work"' EXIT
rt_copy_module_sources "$work/m" || exit 1

# Where each case is: from its #[cfg] line to the next case's in the same
# file (or the file's end). "NAME FILE FIRST LAST" per case.
names=()
for c in "${cases[@]}"; do names+=("${c%%:*}"); done
ranges=$(cd "$work/m" && for f in $(printf '%s\n' "${cases[@]}" | awk -F: '{print (NF > 2 ? $3 : "compile_fail.rs")}' | sort -u); do
	awk -v f="$f" '
		match($0, /#\[cfg\(rtun_compile_fail = "[a-z0-9_]+"\)\]/) {
			if (name != "") print name, f, first, NR - 1
			name = substr($0, RSTART + 27, RLENGTH - 30); first = NR
		}
		END { if (name != "") print name, f, first, NR }' "$f"
done)
fail=0
for n in "${names[@]}"; do
	grep -q "^$n " <<<"$ranges" || { echo "compile-fail: no #[cfg(rtun_compile_fail = \"$n\")] in the sources" >&2; fail=1; }
done
[ $fail = 0 ] || exit 1

out=$(make -C "$work/m" KDIR="$kdir" RTUN_COMPILE_FAIL="${names[*]}" 2>&1)
if [ $? = 0 ]; then
	echo "compile-fail: the tree with every case compiled; no case may" >&2
	exit 1
fi
# Split rustc's output into errors: "FILE LINE<TAB>TEXT" per error, TEXT
# its lines joined, FILE:LINE its primary span (the first `-->`).
errors=$(awk '
	function flush() { if (hdr != "") print (span == "" ? "? 0" : span) "\t" text; hdr = ""; span = ""; text = "" }
	/^error(\[E[0-9]+\])?: / && !/^error: (aborting due to|could not compile)/ { flush(); hdr = $0; text = $0; next }
	/^(warning|make(\[[0-9]+\])?): / { flush(); next }
	hdr != "" {
		text = text " " $0
		if (span == "" && match($0, /--> [^ ]+:[0-9]+:[0-9]+/)) {
			split(substr($0, RSTART + 4, RLENGTH - 4), p, ":"); span = p[1] " " p[2]
		}
	}
	END { flush() }' <<<"$out")
[ -n "$errors" ] || { echo "compile-fail: the build failed without a rustc error:" >&2; tail -20 <<<"$out" >&2; exit 1; }

declare -A got
while IFS=$'\t' read -r span text; do
	file=${span% *} line=${span#* } owner=
	while read -r name f first last; do
		[ "$f" = "$file" ] && [ "$line" -ge "$first" ] && [ "$line" -le "$last" ] && owner=$name
	done <<<"$ranges"
	if [ -z "$owner" ]; then
		echo "compile-fail: an error outside every case (the tree does not build): ${text:0:300}" >&2
		fail=1
	else
		got[$owner]+="$text"$'\n'
	fi
done <<<"$errors"
for c in "${cases[@]}"; do
	name=${c%%:*} want=${c#*:}
	case $want in *:*) want=${want%:*} ;; esac
	if [ -z "${got[$name]:-}" ]; then
		echo "compile-fail: $name compiled; it must not" >&2
		fail=1
	elif ! grep -qE "$want" <<<"${got[$name]}"; then
		echo "compile-fail: $name failed, but not with '$want':" >&2
		head -c 600 <<<"${got[$name]}" >&2
		fail=1
	else
		echo "compile-fail: $name rejected ($(grep -oE "$want" <<<"${got[$name]}" | head -1))" >&2
	fi
done
exit $fail
