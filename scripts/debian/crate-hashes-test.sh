#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host check of crate-hashes.py (scripts/test.sh: host crate-hashes): objects
# whose v0-mangled symbols carry the kernel's crate hashes pass; one crate's
# hash changed, or missing from the objects, fails with DIFFERENT; a
# Module.symvers without Rust exports is refused.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# Rust exports as Module.symvers lists them (CRC, name, module, export).
printf '0x00000000\t%s\tvmlinux\tEXPORT_SYMBOL_GPL\t\n' \
	_RNvNtCs2lKf6AS60Zg_4core3fmt5write \
	_RNvMs_NtCsb5MLIFMWygY_6kernel5allocNtB4_5Flags3new \
	_RNvNtCs2lKf6AS60Zg_4core3str9from_utf8 >"$t/Module.symvers"
printf '0x00000000\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n' >"$t/c-only.symvers"
obj() { # obj NAME SYMBOL...: an object defining each SYMBOL
	local s
	for s in "${@:2}"; do echo "void $s(void) {}"; done >"$t/$1.c"
	gcc -c -o "$t/$1.o" "$t/$1.c"
}
obj same _RNvNtCs2lKf6AS60Zg_4core3fmt5write _RNvNtCsb5MLIFMWygY_6kernel4sync4init
obj other _RNvNtCs2lKf6AS60Zg_4core3fmt5write _RNvNtCsZZZZZZZZZZZ_6kernel4sync4init
obj nokernel _RNvNtCs2lKf6AS60Zg_4core3fmt5write
check() { # check WANT_RC WHAT ARGS...
	local rc=0 out
	out=$(python3 "$here/crate-hashes.py" "${@:3}") || rc=$?
	if [ "$rc" != "$1" ]; then
		echo "crate-hashes.py on $2: exit $rc, expected $1:"
		echo "$out"
		return 1
	fi
	echo "$out" | sed "s/^/# $2: /"
}
check 0 "the same hashes" "$t/Module.symvers" "$t/same.o"
check 1 "another kernel hash" "$t/Module.symvers" "$t/other.o"
check 1 "no kernel crate" "$t/Module.symvers" "$t/nokernel.o"
check 2 "no Rust exports" "$t/c-only.symvers" "$t/same.o"
{ python3 "$here/crate-hashes.py" "$t/Module.symvers" "$t/other.o" || true; } | grep -q '^crate hashes: kernel .*DIFFERENT$' ||
	{ echo "the differing crate is not named"; exit 1; }
echo "crate-hashes.py: 5 cases as expected"
