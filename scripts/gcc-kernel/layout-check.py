#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""layout-check.py BINDINGS.rs GCC.s: bindgen's constants against GCC's.

On a kernel built with GCC, bindgen (libclang) evaluates
bindings_helper.h's RTUN_* constants -- among them every size and field
offset that sys/layout.rs checks bindgen's Rust types against -- as clang
lays C out. The kernel's own structs are laid out by GCC. Kbuild compiles
the same header with the kernel's GCC and flags to assembly (GCC.s, as
the kernel's asm-offsets.c is), and this compares every RTUN_* constant
defined in both: a layout (or value) where GCC and clang differ fails the
build, naming it. Every RTUN_SIZEOF_*/RTUN_OFFSETOF_* constant must be in
both, and at least one must be found, so an empty parse cannot pass.
"""

import re
import sys

SIZES = {".quad": 8, ".long": 4, ".value": 2, ".short": 2, ".byte": 1}


def gcc_consts(path):
    out, label = {}, None
    for line in open(path):
        m = re.match(r"^(RTUN_\w+):$", line)
        if m:
            label = m.group(1)
            continue
        if label:
            f = line.split()
            if f and f[0] in SIZES:
                out[label] = int(f[1], 0) % (1 << (8 * SIZES[f[0]]))
            elif f and f[0] == ".zero":
                out[label] = 0
            label = None
    return out


def bindgen_consts(path):
    out = {}
    pat = re.compile(r"^pub const (RTUN_\w+): [\w:]+ = (-?\d+);$")
    for line in open(path):
        m = pat.match(line.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n")[0])
    b, g = bindgen_consts(sys.argv[1]), gcc_consts(sys.argv[2])
    layout = lambda n: n.startswith(("RTUN_SIZEOF_", "RTUN_OFFSETOF_"))
    bad = []
    for n in sorted(set(b) | set(g)):
        if n not in b or n not in g:
            if layout(n):
                bad.append(f"{n}: only in {'bindgen' if n in b else 'GCC'}")
            continue
        if b[n] % (1 << 64) != g[n] and b[n] % (1 << 32) != g[n]:
            bad.append(f"{n}: bindgen {b[n]}, GCC {g[n]}")
    nl = sum(1 for n in b if layout(n) and n in g)
    if bad or nl == 0:
        print(f"layout-check: {sys.argv[1]} and GCC differ:", file=sys.stderr)
        for x in bad or ["no RTUN_SIZEOF_/RTUN_OFFSETOF_ constant found"]:
            print("  " + x, file=sys.stderr)
        return 1
    print(f"layout-check: {len(set(b) & set(g))} constants, {nl} of them sizes "
          "and offsets, the same in bindgen's bindings and GCC's layout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
