#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host check of the documentation (scripts/test.sh: host docs).

The README and Documentation/*.rst name files, functions, types and tests;
each must exist:

- a relative path (``scripts/test.sh``, ``sys/ring.rs``, ``drivers/net/tun.c``)
  in this tree, or in a kernel tree given with --kernel (tun.c's side);
- a Rust file and an item after it (``queue.rs ``tun_attach``'', as the
  tun.c mapping table writes them): the item is defined in that file;
- ``sys::Name``: defined under sys/;
- a test (``test: ``napi_frags``'', ``tests: ``a``, ``b``''): a test of
  guest/src/suite.rs.

And the README and the design documents carry no history: no commit
hashes, dates, or issue and stop numbers (git has them).

usage: docs-check.py [--kernel TREE]...   (from the tree's root)
"""
import glob
import os
import re
import sys

DOCS = ["README.md"] + sorted(glob.glob("Documentation/**/*.rst", recursive=True))
# Where history must not be: the user guide and the design documents.
NO_HISTORY = ["README.md", "Documentation/rust_tun.rst", "Documentation/testing.rst",
              "Documentation/benchmarks/method.rst"]
EXTS = (".rs", ".c", ".h", ".sh", ".py", ".md", ".rst", ".config", ".json", ".svg")

kernels = []
args = sys.argv[1:]
while args:
    if args[0] == "--kernel" and len(args) > 1:
        kernels.append(args[1])
        args = args[2:]
    else:
        sys.exit(f"usage: docs-check.py [--kernel TREE]... (not {args[0]!r})")

problems = []


def report(doc, line, what):
    problems.append(f"{doc}:{line}: {what}")


def literals(text):
    """(line, literal) for every ``x`` (rst) and `x` (Markdown)."""
    for m in re.finditer(r"``([^`\n]+?)``|(?<!`)`([^`\n]+?)`(?!`)", text):
        yield text.count("\n", 0, m.start()) + 1, (m.group(1) or m.group(2)).strip()


def rust_items(path):
    try:
        src = open(path, encoding="utf-8").read()
    except OSError:
        return None
    return src


def defines(src, name, c=False):
    if c:
        return re.search(rf"\b{re.escape(name)}\s*\(", src) is not None
    pat = rf"\b(fn|struct|enum|trait|type|const|static|mod|union)\s+{re.escape(name)}\b|macro_rules!\s*{re.escape(name)}\b"
    return re.search(pat, src) is not None


def basenames(root, skip=()):
    names = set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in skip and not x.startswith(".")]
        names.update(files)
        names.update(x + "/" for x in dirs)
    return names


# A bare name (``tun.c``, ``device.rs``, ``fuzz/``) is found anywhere in the
# tree or the kernels'; a path from its root.
BASENAMES = basenames(".", skip=("target",))
# Build outputs that this build may not have made (Kbuild's GCC-kernel
# path): the literal names .gitignore lists.
BASENAMES |= {l.strip().lstrip("/") for l in open(".gitignore", encoding="utf-8")
              if l.strip() and not l.startswith("#") and not any(c in l for c in "*?[/")}
for k in kernels:
    BASENAMES |= basenames(k)


def path_exists(p):
    p = p.split(":")[0]
    if "/" not in p.rstrip("/"):
        return p in BASENAMES or p.rstrip("/") in BASENAMES
    for root in ["."] + kernels:
        if glob.glob(os.path.join(root, p.rstrip("/"))):
            return True
    return False


def sys_sources():
    out = []
    for f in sorted(glob.glob("sys/**/*.rs", recursive=True)) + ["sys.rs"]:
        out.append(open(f, encoding="utf-8").read())
    return "\n".join(out)


SYS = sys_sources()
ALL_RS = "\n".join(open(f, encoding="utf-8").read() for f in glob.glob("*.rs") + glob.glob("chr/*.rs") +
                   glob.glob("sys/**/*.rs", recursive=True))
SUITE = open("guest/src/suite.rs", encoding="utf-8").read()
TESTS = set(re.findall(r'\(\s*"([a-z0-9_]+)"\s*,', SUITE))

for doc in DOCS:
    text = open(doc, encoding="utf-8").read()
    for line, lit in literals(text):
        # A relative path of this tree or of the kernel's.
        word = lit.split()[0] if lit.split() else lit
        if ("/" in word or word.endswith(EXTS)) and not word.startswith(("/", "http", "~", "$", ".", "-")) \
                and re.fullmatch(r"[A-Za-z0-9_.*+/-]+", word) and not re.search(r"[*]{2}|\bKREL\b|\bVER\b|SERIES|FLAVOR|KEY\b", word):
            if word.endswith(EXTS) or word.endswith("/"):
                if not path_exists(word):
                    report(doc, line, f"no file {word}")
        # sys::Name (a type, function or trait of sys/).
        for m in re.finditer(r"\bsys::([A-Za-z_][A-Za-z0-9_]*)", lit):
            name = m.group(1)
            if not re.search(rf"\b(fn|struct|enum|trait|type|const|static|mod|union)\s+{name}\b|macro_rules!\s*{name}\b", SYS) \
                    and not os.path.exists(f"sys/{name}.rs") and not os.path.isdir(f"sys/{name}"):
                report(doc, line, f"sys::{name} is not defined under sys/")
    # "file.rs ``item``": the item is defined in that file.
    for m in re.finditer(r"(?<![\w/.`])([a-z_]+(?:/[a-z_]+)*\.(rs|c))[ ]+((?:``[A-Za-z_][A-Za-z0-9_]*``/?)+)(?!:)", text):
        f, ext = m.group(1), m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        src = rust_items(f)
        for item in re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", m.group(3)):
            if src is None:
                report(doc, line, f"no file {f} (for {item})")
            elif not defines(src, item, c=(ext == "c")):
                report(doc, line, f"{f} does not define {item}")
    # Tests, as the docs name them.
    for m in re.finditer(r"\btests?:\s*((?:``[a-z0-9_]+``(?:,\s*|\s+and\s+)?)+)", text):
        line = text.count("\n", 0, m.start()) + 1
        for t in re.findall(r"``([a-z0-9_]+)``", m.group(1)):
            if t not in TESTS:
                report(doc, line, f"no test {t} in guest/src/suite.rs")

for doc in NO_HISTORY:
    text = open(doc, encoding="utf-8").read()
    for i, l in enumerate(text.splitlines(), 1):
        for pat, what in ((r"\b20\d\d-\d\d-\d\d\b", "a date"),
                          (r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}(?![\w-])", "a commit hash"),
                          (r"\b(?:[Ii]ssue|stop) \d+\b", "a tracker number")):
            for m in re.finditer(pat, l):
                report(doc, i, f"{what} ({m.group(0)}): history belongs in git")

for p in problems:
    print(p)
print(f"docs-check: {len(DOCS)} documents, {len(problems)} problems")
sys.exit(1 if problems else 0)
