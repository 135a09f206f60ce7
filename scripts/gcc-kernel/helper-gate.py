#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""helper-gate.py GCC.o CLANG.o: the differential gate of the C helpers.

On a kernel built with GCC, the helpers (tun_helpers.c) are compiled twice:
by the kernel's GCC (the oracle, and the out-of-line fallback) and by the
clang of rustc's LLVM major from the same source with bindgen's flags and
the header of clang-config.sh (that copy is what gets inlined into Rust).
This compares the two objects, helper by helper, in what a miscompile of
C semantics would change and code generation choices would not:

  per helper (the helper's own code plus every local function it reaches,
  e.g. GCC's .cold parts or a static inline clang kept out of line):
    - the %gs-relative memory references (per-CPU data, current, the
      preempt count), keyed by symbol, "reg" (through a register) or
      "abs:<disp>" (a fixed %gs offset);
    - the symbols referenced (called, jumped to, read, written), section
      symbols by section name;
    - the entries in the special sections (__jump_table, .altinstructions,
      .static_call_sites, __ex_table, __bug_table) that point into it;
  per object: the special sections' sizes and the non-code symbols their
  entries reference (static keys, static call keys).

Hardening and instrumentation that Rust code has no equivalent of either
are allowlisted (ALLOW_SYMS, ALLOW_GS): ftrace's __fentry__, return/indirect-branch
thunks, the stack protector (__stack_chk_fail, %gs:__ref_stack_chk_guard)
and UBSAN's handlers. Such differences are reported ("hardening") but do
not fail. So is the rename the clang view of the config implies:
const_current_task (USE_X86_SEG_SUPPORT) reads as current_task.

Prints a table; exits 1 naming every helper that differs (or on an object
level difference), 0 otherwise. --fail-out FILE also writes the helpers
that differ, one a line (Kbuild keeps them out of line), or ALL.
Needs llvm-objdump and llvm-readelf (LLVM_SUFFIX, default -19).
"""

import argparse
import collections
import os
import re
import subprocess
import sys

SPECIAL = ("__jump_table", ".altinstructions", ".static_call_sites",
           "__ex_table", "__bug_table")
HELPER_PREFIX = "rtun_helper_"

# Allowlisted: hardening/instrumentation (symbol regexes).
ALLOW_SYMS = [
    r"__fentry__",
    r"__x86_return_thunk",
    r"__x86_indirect_thunk_\w+",
    r"__x86_indirect_call_thunk_\w+",
    r"__x86_indirect_jump_thunk_\w+",
    r"__stack_chk_fail",
    r"__ref_stack_chk_guard",
    r"__stack_chk_guard",
    r"__ubsan_handle_\w+",
    # A function's name as a string (C's __func__, as XDP_WARN() passes
    # it): GCC names the literal __func__.<n>, clang emits it as anonymous
    # string data. The same bytes either way.
    r"__func__",
]
# Allowlisted %gs references (keys as computed below).
ALLOW_GS = [r"sym:__ref_stack_chk_guard", r"sym:__stack_chk_guard"]
# (GCC's canary: %gs:__ref_stack_chk_guard. clang's default one, when the
# guard flags are lost, is %gs:0x28 = "abs:0x28": not allowed.)
# The renames clang's view of the config implies (GCC name -> clang name).
RENAMES = {"const_current_task": "current_task"}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True,
                          text=True).stdout


class Obj:
    """One relocatable object: functions, their references, specials."""

    def __init__(self, path, tool_suffix):
        self.path = path
        self.sfx = tool_suffix
        self.sections = {}   # index -> name
        self.secsize = {}    # name -> size
        self.funcs = []      # (section, start, end, name, bind)
        self.read_sections()
        self.read_symbols()
        self.code = collections.defaultdict(
            lambda: {"gs": set(), "syms": set(), "calls": set()})
        self.read_code()
        self.special = collections.defaultdict(collections.Counter)
        self.special_syms = collections.defaultdict(collections.Counter)
        self.read_special()

    def read_sections(self):
        out = run(["llvm-readelf" + self.sfx, "-SW", self.path])
        for m in re.finditer(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+"
                             r"[0-9a-f]+\s+([0-9a-f]+)", out, re.M):
            idx, name, size = int(m.group(1)), m.group(2), int(m.group(3), 16)
            self.sections[idx] = name
            self.secsize[name] = size

    def read_symbols(self):
        out = run(["llvm-readelf" + self.sfx, "-sW", self.path])
        self.symsec = {}     # symbol name -> section name
        self.data = []       # (section, start, end, name) of data symbols
        for line in out.splitlines():
            f = line.split()
            # Num: Value Size Type Bind Vis Ndx Name
            if len(f) < 8 or not f[6].isdigit():
                continue
            self.symsec[f[7]] = self.sections.get(int(f[6]), "?")
            if f[3] == "OBJECT":
                a = int(f[1], 16)
                self.data.append((self.symsec[f[7]], a, a + int(f[2], 0),
                                  f[7]))
            if f[3] != "FUNC":
                continue
            start, size = int(f[1], 16), int(f[2], 0)
            sec = self.sections.get(int(f[6]), "?")
            self.funcs.append((sec, start, start + size, f[7], f[4]))
        # An alias (tun_helpers.c's rtun_oracle_* second names of GCC's
        # copies) is the same code: the helper's name stands for it.
        seen = {}
        for fn in self.funcs:
            k = fn[:3]
            if k not in seen or fn[3].startswith(HELPER_PREFIX):
                seen[k] = fn
        self.alias = {fn[3]: seen[fn[:3]][3] for fn in self.funcs}
        self.funcs = list(seen.values())

    def func_at(self, sec, off):
        for s, a, b, name, _ in self.funcs:
            if s == sec and a <= off < max(b, a + 1):
                return name
        return None

    def owner(self, name):
        """The helper a function belongs to: its own name, or None for
        a local function (closure)."""
        return name if name.startswith(HELPER_PREFIX) and "." not in name \
            else None

    @staticmethod
    def norm(sym):
        sym = re.sub(r"[-+]0x[0-9a-f]+$", "", sym)
        sym = RENAMES.get(sym, sym)
        # GCC's and clang's names of function-local statics.
        sym = re.sub(r"\.\d+$", "", sym)
        sym = re.sub(r"^rtun_helper_\w+\.", "", sym)
        return sym

    def target(self, sym, addend, pcrel):
        """A relocation target as a name: a function if it is code of this
        object, else the symbol, or [section] for a section symbol."""
        base = self.alias.get(sym, sym)
        if base in self.secsize:   # a section symbol
            if self.secsize and base.startswith(".text") or base in (
                    ".noinstr.text", ".init.text", ".exit.text"):
                off = addend + (4 if pcrel else 0)
                f = self.func_at(base, off)
                if f:
                    return ("func", f)
            off = addend + (4 if pcrel else 0)
            for s, a, b, name in self.data:
                if s == base and a <= off < b:
                    return ("sym", self.norm(name))
            # Anonymous data: string literals, UBSAN's source locations.
            return ("sym", "[" + re.sub(r"\.\d+$", "", base) + "]")
        for s, a, b, name, _ in self.funcs:
            if name == base:
                return ("func", name)
        if base.startswith(".L") and base in self.symsec:
            # an assembler-local label kept as a symbol (GCC's .LC<n>
            # strings in __bug_table): anonymous data of its section
            return ("sym", "[" + re.sub(r"\.\d+$", "", self.symsec[base])
                    + "]")
        return ("sym", self.norm(base))

    def read_code(self):
        out = run(["llvm-objdump" + self.sfx, "-dr", "--no-show-raw-insn",
                   self.path])
        cur = None
        pending = None   # [func, %gs operand, resolved] of the last insn

        def flush():
            # A %gs operand without a relocation: through a register, or
            # a fixed offset (e.g. clang's default stack canary %gs:0x28).
            if pending and not pending[2]:
                op = pending[1]
                if "(" in op and "(%rip)" not in op:
                    self.code[pending[0]]["gs"].add("reg")
                elif "(" not in op:
                    self.code[pending[0]]["gs"].add("abs:" + op)

        for line in out.splitlines():
            m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
            if m:
                flush()
                pending = None
                cur = self.alias.get(m.group(1), m.group(1))
                continue
            m = re.match(r"^\s+[0-9a-f]+:\s+R_X86_64_(\w+)\s+(\S+)$", line)
            if m and cur:
                rtype, t = m.group(1), m.group(2)
                sm = re.match(r"^(.*?)([-+]0x[0-9a-f]+)?$", t)
                add = int(sm.group(2), 16) if sm.group(2) else 0
                kind, name = self.target(
                    sm.group(1), add, rtype in ("PC32", "PLT32", "GOTPCREL",
                                                "REX_GOTPCRELX", "GOTPCRELX"))
                owner = pending[0] if pending else cur
                entry = self.code[owner]
                if kind == "func":
                    if name != owner:
                        entry["calls"].add(name)
                else:
                    entry["syms"].add(name)
                if pending and not pending[2]:
                    entry["gs"].add("sym:" + name)
                    pending[2] = True
                continue
            m = re.match(r"^\s+[0-9a-f]+:\s+(\S.*)$", line)
            if m and cur:
                flush()
                ins = m.group(1)
                g = re.search(r"%gs:([^,\s]*)", ins)
                pending = [cur, g.group(1), False] if g else None
                self.code[cur]   # every function has an entry
                b = re.match(r"^(j\w+|call\w*)\s+0x[0-9a-f]+ <([^>+]+)", ins)
                if b and b.group(2) != cur:
                    self.code[cur]["calls"].add(b.group(2))
        flush()

    def read_special(self):
        out = run(["llvm-readelf" + self.sfx, "-rW", self.path])
        sec = None
        for line in out.splitlines():
            m = re.match(r"^Relocation section '\.rela(\S+)'", line)
            if m:
                sec = m.group(1)
                continue
            if sec not in SPECIAL:
                continue
            f = line.split()
            # Offset Info Type SymValue SymName + Addend
            if len(f) < 5 or not f[2].startswith("R_X86_64"):
                continue
            name = f[4]
            add = int(f[6], 16) * (-1 if f[5] == "-" else 1) \
                if len(f) >= 7 else 0
            kind, t = self.target(name, add, False)
            if kind == "func":
                self.special[t][sec] += 1
            else:
                self.special_syms[sec][t] += 1

    def helpers(self):
        return sorted(n for _, _, _, n, b in self.funcs
                      if n.startswith(HELPER_PREFIX) and "." not in n
                      and b == "GLOBAL")

    def closure(self, fn):
        """gs, syms and special entries of fn and every local function it
        reaches (not other helpers: those are compared on their own)."""
        seen, todo = set(), [fn]
        gs, syms = set(), set()
        spec = collections.Counter()
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            e = self.code.get(f)
            if e:
                gs |= e["gs"]
                syms |= e["syms"]
                for c in e["calls"]:
                    if self.owner(c) and c != fn:
                        syms.add(c)   # a call to another helper
                    else:
                        todo.append(c)
            for s, n in self.special.get(f, {}).items():
                spec[s] += n
        return gs, syms, spec


def allowed(x, pats):
    return any(re.fullmatch(p, x) for p in pats)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gcc_o")
    ap.add_argument("clang_o")
    ap.add_argument("--fail-out", metavar="FILE",
                    help="also write the helpers that differ to FILE, one "
                    "a line, or ALL when the objects as a whole differ")
    ap.add_argument("--all", action="store_true",
                    help="table rows for every helper, not only differing")
    ap.add_argument("--llvm-suffix", default=os.environ.get("LLVM_SUFFIX",
                                                            "-19"))
    a = ap.parse_args()

    g = Obj(a.gcc_o, a.llvm_suffix)
    c = Obj(a.clang_o, a.llvm_suffix)
    hg, hc = set(g.helpers()), set(c.helpers())
    rows, fails, passes, hardening = [], [], [], []
    allow_count = collections.Counter()
    for h in sorted(hg | hc):
        if h not in hg or h not in hc:
            rows.append((h, "MISSING", "only in " +
                         ("gcc" if h in hg else "clang"), ""))
            fails.append(h)
            continue
        ggs, gsy, gsp = g.closure(h)
        cgs, csy, csp = c.closure(h)
        why, soft = [], []
        # UBSAN's source-location data is anonymous .data: allowed on the
        # side whose UBSAN handler calls the other side lacks.
        ug = {x for x in gsy if x.startswith("__ubsan_handle_")}
        uc = {x for x in csy if x.startswith("__ubsan_handle_")}
        pats_g = ALLOW_SYMS + ([r"\[\.data\]"] if ug - uc else [])
        pats_c = ALLOW_SYMS + ([r"\[\.data\]"] if uc - ug else [])
        for kind, x, y, pats in (("gs", ggs, cgs, ALLOW_GS),
                                 ("sym", gsy, csy, None)):
            for sign, vs, p in (("-", x - y, pats or pats_g),
                                ("+", y - x, pats or pats_c)):
                for v in sorted(vs):
                    ok = allowed(v, p)
                    (soft if ok else why).append(f"{kind} {sign}{v}")
                    if ok:
                        allow_count[f"{kind} {sign}{v}"] += 1
        for s in SPECIAL:
            if gsp[s] != csp[s]:
                why.append(f"{s} {gsp[s]}->{csp[s]}")
        name = h[len(HELPER_PREFIX):]
        if why:
            fails.append(h)
            rows.append((name, "DIFF", "; ".join(why), "; ".join(soft)))
        else:
            passes.append(h)
            if soft:
                hardening.append(h)
            if a.all:
                rows.append((name, "ok", "", "; ".join(soft)))

    objdiff = []
    for s in SPECIAL:
        if g.secsize.get(s, 0) != c.secsize.get(s, 0):
            objdiff.append(f"{s}: size {g.secsize.get(s, 0)} (gcc) "
                           f"{c.secsize.get(s, 0)} (clang)")
        if g.special_syms[s] != c.special_syms[s]:
            d = (g.special_syms[s] - c.special_syms[s]) + \
                (c.special_syms[s] - g.special_syms[s])
            objdiff.append(f"{s}: referenced symbols differ: "
                           + ", ".join(sorted(d)))

    if a.fail_out:
        with open(a.fail_out, "w") as f:
            f.write("ALL\n" if objdiff else "".join(h + "\n" for h in fails))
    w = max([len(r[0]) for r in rows] + [6])
    print(f"{'helper':<{w}}  {'verdict':<9}  semantic differences "
          "(gcc -, clang +) | allowlisted")
    for name, v, why, soft in rows:
        print(f"{name:<{w}}  {v:<9}  {why or '-'} | {soft or '-'}")
    print("\nallowlisted differences (hardening/instrumentation; "
          "gcc -, clang +), helpers each:")
    for k, n in sorted(allow_count.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {k}: {n}")
    print(f"\n{len(hg | hc)} helpers: {len(passes)} pass "
          f"({len(hardening)} of them with allowlisted differences), "
          f"{len(fails)} differ")
    # What the comparison saw, so that an empty extraction cannot pass.
    for tag, o, hs in (("gcc", g, hg), ("clang", c, hc)):
        cl = [o.closure(h) for h in hs]
        ngs = sum(1 for x in cl if x[0])
        nsp = collections.Counter()
        for x in cl:
            nsp.update(x[2])
        print(f"{tag}: {ngs} helpers with %gs references, "
              f"{len(set().union(*[x[1] for x in cl]))} symbols referenced, "
              "special-section entries in helpers: "
              + (", ".join(f"{k} {v}" for k, v in sorted(nsp.items()))
                 or "none"))
    print("special sections (per object): " +
          ("; ".join(objdiff) if objdiff else "same sizes and keys: " +
           ", ".join(f"{s} {g.secsize.get(s, 0)}" for s in SPECIAL)))
    if fails:
        print("helper-gate: differing helpers (keep them out of line): "
              + " ".join(h[len(HELPER_PREFIX):] for h in fails),
              file=sys.stderr)
    if objdiff:
        print("helper-gate: the objects' special sections differ",
              file=sys.stderr)
    return 1 if (fails or objdiff) else 0


if __name__ == "__main__":
    sys.exit(main())
