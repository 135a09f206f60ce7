#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""clang-helpers.py: compile the helpers with clang as Kbuild would inline them.

Prototype of the compile step of the GCC-kernel inlining path (not used by
Kbuild yet). Reads the kernel's GCC command for the helpers object from its
.cmd file (make V=1 ... tun_helpers.o wrote it), and builds the clang
command Kbuild's rtun_bindgen_c_flags gives bindgen: the GCC flags minus the
kernel's own bindgen_skip_c_flags (KDIR/rust/Makefile) and minus
CFLAGS_REMOVE_tun_helpers.o, plus --target=x86_64-linux-gnu; then
-fno-stack-protector (rustc has no canary, and clang without the guard
flags bindgen drops would read one at %gs:0x28), -include the header of
clang-config.sh (before the c_flags' own -include of compiler_types.h),
and -DRTUN_HELPERS_BITCODE -emit-llvm -g0. The bitcode is
then compiled to an object (-O2, as the Kbuild link step compiles the
linked crate) for helper-gate.py.

  clang-helpers.py --kdir KDIR --cmd .tun_helpers.o.cmd --header H.h -o OUT
      writes OUT.bc and OUT.o
  --no-header             mutation: without the derived header
  --keep-stack-protector  mutation: without the -fno-stack-protector
                          translation
  -n                      print the commands only
"""

import argparse
import fnmatch
import os
import re
import shlex
import subprocess
import sys

# Kbuild: CFLAGS_REMOVE_tun_helpers.o
CFLAGS_REMOVE = ["-Wmissing-prototypes", "-Wmissing-declarations"]


def skip_flags(kdir):
    """rust/Makefile's bindgen_skip_c_flags, as Kbuild's sed reads them."""
    txt = open(os.path.join(kdir, "rust/Makefile")).read()
    m = re.search(r"^bindgen_skip_c_flags :=((?:.*\\\n)*.*)$", txt, re.M)
    if not m:
        sys.exit(f"no bindgen_skip_c_flags in {kdir}/rust/Makefile")
    return m.group(1).replace("\\\n", " ").split()


def filtered_out(flag, pats):
    # make's filter-out: one % matches any string.
    return any(fnmatch.fnmatchcase(flag, p.replace("%", "*")) for p in pats)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kdir", required=True)
    ap.add_argument("--cmd", required=True,
                    help="the .cmd file of the GCC-built helpers object")
    ap.add_argument("--header")
    ap.add_argument("--clang", default="clang-19")
    ap.add_argument("--no-header", action="store_true")
    ap.add_argument("--keep-stack-protector", action="store_true")
    ap.add_argument("-o", required=True, help="output stem")
    ap.add_argument("-n", action="store_true")
    a = ap.parse_args()

    saved = None
    for line in open(a.cmd):
        if line.startswith("savedcmd_"):
            saved = line.split(":=", 1)[1].strip()
    if not saved:
        sys.exit(f"no savedcmd_ in {a.cmd}")
    argv = shlex.split(saved)
    # compiler, ..., -c -o X.o SRC
    src = argv[-1]
    flags, i = [], 1
    while i < len(argv) - 1:
        f = argv[i]
        if f == "-o":
            i += 2
            continue
        if f == "-c" or f.startswith("-Wp,-MMD"):
            i += 1
            continue
        flags.append(f)
        i += 1
    pats = skip_flags(a.kdir) + CFLAGS_REMOVE
    cflags = [f for f in flags if not filtered_out(f, pats)]
    dropped = [f for f in flags if filtered_out(f, pats)]
    cflags.append("--target=x86_64-linux-gnu")
    if not a.keep_stack_protector:
        cflags.append("-fno-stack-protector")
    if not a.no_header:
        if not a.header:
            sys.exit("--header or --no-header")
        # First: the c_flags' own -include of compiler_types.h pulls in
        # asm/percpu_types.h, which reads CONFIG_CC_HAS_NAMED_AS; a header
        # included after it would give the helpers a mixed view (GCC's
        # __seg_gs qualifiers, clang's percpu.h: 811 "multiple identical
        # address spaces" warnings on Debian's 7.3). The header includes
        # <linux/kconfig.h> itself; the c_flags' -include of it is then a
        # no-op.
        cflags = ["-include", os.path.abspath(a.header)] + cflags
    bc, obj = a.o + ".bc", a.o + ".o"
    cmd1 = [a.clang] + cflags + ["-DRTUN_HELPERS_BITCODE", "-c", "-g0",
                                 "-Wno-unknown-warning-option",
                                 src, "-emit-llvm", "-o", bc]
    cmd2 = [a.clang, "--target=x86_64-linux-gnu", "-O2", "-fno-PIE",
            "-mcmodel=kernel", "-Wno-override-module", "-c", bc, "-o", obj]
    print("dropped (bindgen_skip_c_flags, CFLAGS_REMOVE): " + " ".join(dropped),
          file=sys.stderr)
    for c in (cmd1, cmd2):
        print(shlex.join(c), file=sys.stderr)
        if not a.n:
            subprocess.run(c, check=True,
                           cwd=os.path.dirname(os.path.abspath(a.cmd)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
