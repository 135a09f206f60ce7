#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# clang-config.sh KDIR OUT.h
#
# On a kernel built with GCC, derive the header that makes clang see the
# kernel's configuration as the kernel's own Kconfig would have set it for
# clang: re-run KDIR's scripts/kconfig/conf on KDIR's .config twice in a
# scratch objtree (KDIR is only read), once with the kernel's compiler (a
# control, which must reproduce KDIR's .config exactly: otherwise this
# environment's tools are not the kernel's and no difference below could
# be blamed on the compiler) and once with CC=$RTUN_CLANG, the clang whose
# LLVM major is rustc's. Every symbol that differs between the two runs
# must be on the reviewed list (clang-config.list, beside this script);
# any other difference fails, naming the symbol. OUT.h gets, per macro of
# autoconf.h that differs, an #undef and (when clang's run sets it) a
# #define, after <linux/kconfig.h>: compiled with -include OUT.h, the
# helpers see clang's view of the compiler-probed symbols (e.g. no
# CONFIG_CC_HAS_NAMED_AS, under which clang 19 drops the %gs of per-CPU
# asm operands, LLVM issue 187893) and the kernel's view of all others.
#
# Environment: RTUN_CLANG (default clang-<major of CONFIG_RUSTC_LLVM_VERSION>),
# KCC (default: the first word of CONFIG_CC_VERSION_TEXT), CROSS_COMPILE,
# LD, AR, NM, OBJCOPY, RUSTC, BINDGEN, PAHOLE, PYTHON3 (the top Makefile's
# defaults), RTUN_CLANG_CONFIG_LIST (default: clang-config.list here),
# RTUN_KEEP=1 keeps the scratch objtree.
set -eu

die() { echo "clang-config.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: clang-config.sh KDIR OUT.h"
kdir=$(cd "$1" && pwd) || die "no directory $1"
out=$2
here=$(cd "$(dirname "$0")" && pwd)
list=${RTUN_CLANG_CONFIG_LIST:-$here/clang-config.list}
[ -r "$list" ] || die "no reviewed list $list"
for f in .config scripts/kconfig/conf Kconfig Makefile; do
	[ -e "$kdir/$f" ] || die "$kdir/$f missing: not a prepared kernel tree"
done

cfg() { sed -n "s/^CONFIG_$1=//p" "$kdir/.config" | sed 's/^"\(.*\)"$/\1/'; }
[ "$(cfg CC_IS_GCC)" = y ] || die "$kdir is not built with GCC (CONFIG_CC_IS_GCC unset): nothing to derive"
for s in CFI KASAN; do
	[ "$(cfg $s)" != y ] || die "CONFIG_$s=y: helpers are not cross-compiled on a GCC kernel with $s"
done

llvm=$(cfg RUSTC_LLVM_VERSION)
[ -n "$llvm" ] || die "no CONFIG_RUSTC_LLVM_VERSION in $kdir/.config"
major=$((llvm / 10000))
clang=${RTUN_CLANG:-clang-$major}
command -v "$clang" >/dev/null || die "$clang not found (the clang of rustc's LLVM major $major)"
cmajor=$("$clang" -dM -E -x c /dev/null | sed -n 's/^#define __clang_major__ //p')
[ "$cmajor" = "$major" ] || die "$clang is LLVM $cmajor, rustc's is $major"
kcc=${KCC:-$(cfg CC_VERSION_TEXT | cut -d' ' -f1)}
command -v "$kcc" >/dev/null || die "the kernel's compiler $kcc not found (set KCC)"

xc=${CROSS_COMPILE:-}
: "${LD:=${xc}ld}" "${AR:=${xc}ar}" "${NM:=${xc}nm}" "${OBJCOPY:=${xc}objcopy}"
: "${RUSTC:=rustc}" "${BINDGEN:=bindgen}" "${PAHOLE:=pahole}" "${PYTHON3:=python3}"
mkv() { sed -n "s/^$1 *= *//p" "$kdir/Makefile" | head -1; }
kver=$(mkv VERSION).$(mkv PATCHLEVEL).$(mkv SUBLEVEL)$(mkv EXTRAVERSION)
srcarch=x86
case "$(cfg X86_64)" in y) ;; *) die "x86_64 kernels only";; esac
# scripts/Makefile.clang's CLANG_FLAGS for x86 with the integrated assembler
# (they take part in every cc-option probe).
clang_flags="--target=x86_64-linux-gnu -fintegrated-as -Werror=unknown-warning-option \
-Werror=ignored-optimization-argument -Werror=option-ignored -Werror=unused-command-line-argument"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rtun-clang-config.XXXXXX")
[ "${RTUN_KEEP:-}" = 1 ] || trap 'rm -rf "$scratch"' EXIT

# run_conf DIR CC CLANG_FLAGS: the top Makefile's olddefconfig and
# syncconfig with the environment it exports to Kconfig.
run_conf() {
	mkdir -p "$1"
	cp "$kdir/.config" "$1/.config"
	(
		cd "$1"
		export srctree="$kdir" ARCH=$srcarch SRCARCH=$srcarch SUBARCH=$srcarch \
			KERNELVERSION="$kver" CC="$2" CLANG_FLAGS="$3" LD AR NM OBJCOPY \
			RUSTC BINDGEN PAHOLE PYTHON3 CROSS_COMPILE="$xc" \
			USERCFLAGS= USERLDFLAGS= LC_ALL=C
		CC_VERSION_TEXT=$(LC_ALL=C $2 --version 2>/dev/null | head -n 1 | tr -d '#')
		RUSTC_VERSION_TEXT=$($RUSTC --version 2>/dev/null | tr -d '#')
		PAHOLE_VERSION=$("$kdir/scripts/pahole-version.sh" "$PAHOLE")
		export CC_VERSION_TEXT RUSTC_VERSION_TEXT PAHOLE_VERSION
		"$kdir/scripts/kconfig/conf" --olddefconfig Kconfig >conf.log 2>&1 &&
			"$kdir/scripts/kconfig/conf" --syncconfig Kconfig >>conf.log 2>&1
	) || { cat "$1/conf.log" >&2; die "Kconfig failed with CC=$2"; }
}

# symbols FILE: "NAME<tab>VALUE" per symbol set in a .config. "is not set"
# and absent (invisible) are the same to autoconf.h and auto.conf: both
# left out.
tab=$(printf '\t')
symbols() {
	sed -n -e "s/^CONFIG_\([A-Za-z0-9_]*\)=\(.*\)\$/\1$tab\2/p" "$1" | LC_ALL=C sort -t "$tab" -k1,1
}

run_conf "$scratch/gcc" "$kcc" ""
if ! cmp -s "$scratch/gcc/.config" "$kdir/.config"; then
	diff "$kdir/.config" "$scratch/gcc/.config" | grep '^[<>]' | head -40 >&2 || :
	die "a re-run of Kconfig with the kernel's own CC=$kcc does not reproduce $kdir/.config (above: < kernel, > re-run): this environment's tools are not the kernel's, so no difference could be blamed on the compiler"
fi
run_conf "$scratch/clang" "$clang" "$clang_flags"

symbols "$scratch/gcc/.config" >"$scratch/gcc.sym"
symbols "$scratch/clang/.config" >"$scratch/clang.sym"
# NAME GCC-VALUE CLANG-VALUE for each symbol that differs (absent: -).
LC_ALL=C join -t "$tab" -a1 -a2 -e - -o 0,1.2,2.2 "$scratch/gcc.sym" "$scratch/clang.sym" |
	awk -F "$tab" '$2 != $3' >"$scratch/delta"

# The reviewed list: NAME, then a comment.
reviewed=$(sed -e 's/#.*//' "$list" | awk 'NF { print $1 }')
bad=0
while IFS=$tab read -r name g c; do
	if printf '%s\n' "$reviewed" | grep -qx "$name"; then
		continue
	fi
	bad=1
	case $name in
	CC_*|GCC_*|CLANG_*|AS_*|LD_*|RUSTC_*|TOOLS_*|HAVE_*_COMPILER|*_USE_CC|*_USE_OBJTOOL|HAVE_CFI_*)
		echo "clang-config.sh: compiler symbol CONFIG_$name (gcc: $g, clang: $c) is not on the reviewed list $list: review what it changes in headers, then add it" >&2;;
	*)
		echo "clang-config.sh: non-compiler symbol CONFIG_$name differs (gcc: $g, clang: $c): the configuration itself changes under $clang" >&2;;
	esac
done <"$scratch/delta"
[ $bad = 0 ] || die "refusing to derive $out"

# The header: per autoconf.h macro that differs, #undef, then clang's
# #define if clang's run has one.
ag=$scratch/gcc/include/generated/autoconf.h
ac=$scratch/clang/include/generated/autoconf.h
tmp=$out.tmp.$$
{
	echo "/* Generated by scripts/gcc-kernel/clang-config.sh: do not edit."
	echo " * $kdir/.config ($(cfg CC_VERSION_TEXT)) re-run through the kernel's"
	echo " * Kconfig with CC=$clang ($("$clang" --version | head -1)):"
	echo " * the compiler-probed symbols that differ, as clang's run sets them. */"
	# Headers read the config as they are included: one included before
	# this (compiler_types.h, which c_flags -include, includes
	# asm/percpu_types.h) would keep GCC's view of it.
	echo "#ifdef __LINUX_COMPILER_TYPES_H"
	echo "#error \"-include this header before the c_flags' -include of compiler_types.h\""
	echo "#endif"
	echo "#include <linux/kconfig.h>"
	awk -v clangfile="$ac" '
		FNR == NR { if ($1 == "#define") g[$2] = $0; next }
		$1 == "#define" { c[$2] = $0 }
		END {
			for (m in g) all[m] = 1
			for (m in c) all[m] = 1
			for (m in all) {
				ing = m in g; inc = m in c
				if (ing && inc && g[m] == c[m]) continue
				print "#undef " m
				if (inc) print c[m]
			}
		}' "$ag" "$ac" | awk '{ k = $2; print k "\t" $0 }' | LC_ALL=C sort -s -k1,1 | cut -f2-
} >"$tmp"
mv "$tmp" "$out"
n=$(wc -l <"$scratch/delta")
echo "clang-config.sh: $out: $n compiler symbols differ under $clang (all reviewed):" >&2
awk -F "$tab" '{ printf "  CONFIG_%s: %s -> %s\n", $1, $2, $3 }' "$scratch/delta" >&2
