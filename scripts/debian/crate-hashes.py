#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the Rust crate hashes a module would link against.

A Rust module calls the kernel crate's exports by their v0-mangled names,
and each name embeds its crate's disambiguator (`Cs<hash>_<len><crate>`),
which rustc derives from the crate's name, its metadata and the rustc
version string. A module whose rust/ build has other hashes than the
running kernel's links against symbols that kernel does not export.

usage: crate-hashes.py MODULE_SYMVERS RUST_OBJECT...
Reads the crate hashes of the Rust exports in the kernel's Module.symvers
and the global symbols of the objects (`nm`), prints both per crate, and
exits 1 if a crate exported by the kernel has another hash (or none) in the
objects, 2 if the kernel exports no Rust symbol at all.
"""
import re
import subprocess
import sys

CRATE = re.compile(r"Cs([0-9A-Za-z]+)_([0-9]+)")


def crates(symbol):
    """Yields (crate, hash) for each crate root in a v0-mangled symbol."""
    if not symbol.startswith("_R"):
        return
    for m in CRATE.finditer(symbol):
        n = int(m.group(2))
        name = symbol[m.end():m.end() + n]
        if len(name) == n and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            yield name, m.group(1)


def collect(symbols):
    out = {}
    for s in symbols:
        for name, h in crates(s):
            out.setdefault(name, set()).add(h)
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        kernel = collect(line.split("\t")[1] for line in f if "\t" in line)
    nm = subprocess.run(["nm", "-g", "--defined-only", *sys.argv[2:]],
                        check=True, capture_output=True, text=True).stdout
    ours = collect(line.split()[-1] for line in nm.splitlines()
                   if len(line.split()) == 3)
    if not kernel:
        print("crate hashes: the kernel's Module.symvers exports no Rust symbol")
        return 2
    bad = 0
    for name in sorted(kernel):
        k, o = sorted(kernel[name]), sorted(ours.get(name, ()))
        same = k == o
        bad |= not same
        print(f"crate hashes: {name:16} kernel {','.join(k):16} rust/ build "
              f"{','.join(o) or '(none)':16} {'same' if same else 'DIFFERENT'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
