#!/usr/bin/env python3
"""check_deps.py: every file from outside the tree that the README's commands link or run is
owned by a Debian package that tools/deps.sh installs (itself, or through the Depends /
Pre-Depends of one it names: deps.sh installs with --no-install-recommends, so a Recommends
does not count).  Run by tools/test.sh and tools/main-job.sh after deps.sh, before the build.

  tools/check_deps.py [--fuzz] [--omit PKG]...

--fuzz adds what the libFuzzer build uses (clang-19 and its runtimes).  --omit PKG checks as if
deps.sh did not name PKG (the guard's own test: removing a needed package must fail, naming it).
Exit 0: all owned.  Exit 1: a file is missing or owned by a package deps.sh does not install;
each such file is printed with its owner.  Optional tools (ptxas) are reported, never required.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def deps_packages(fuzz):
    args = [os.path.join(ROOT, "tools", "deps.sh"), "--list"] + (["--fuzz"] if fuzz else [])
    r = run(args)
    if r.returncode != 0:
        sys.exit("check_deps: tools/deps.sh --list failed: " + r.stderr.strip())
    return r.stdout.split()


def installed_fields():
    """package -> (Depends + Pre-Depends text) and virtual name -> providers, for installed ones."""
    r = run(["dpkg-query", "-W", "-f=${Package}\t${db:Status-Status}\t${Depends}, ${Pre-Depends}\t${Provides}\n"])
    deps, provides = {}, {}
    for line in r.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 4 or parts[1] != "installed":
            continue
        deps[parts[0]] = parts[2]
        for prov in parts[3].split(","):
            name = prov.strip().split(" ")[0].split(":")[0]
            if name:
                provides.setdefault(name, []).append(parts[0])
    return deps, provides


def closure(roots, deps, provides):
    """The installed packages reached from roots through Depends / Pre-Depends."""
    seen, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for clause in deps.get(p, "").split(","):
            for alt in clause.split("|"):  # any installed alternative satisfies the clause
                name = alt.strip().split(" ")[0].split(":")[0]
                if not name:
                    continue
                cands = [name] if name in deps else provides.get(name, [])
                todo.extend(c for c in cands if c not in seen)
    return seen


def which(name, hints=()):
    for h in hints:
        p = os.path.join(h, name)
        if os.access(p, os.X_OK):
            return p
    return shutil.which(name)


def llvm_files():
    """What CMakeLists.txt takes from llvm-config: the config tool, its static libraries, headers."""
    cfg = which("llvm-config-19", ["/usr/lib/llvm-19/bin"]) or which("llvm-config")
    if not cfg:
        return [("llvm-config-19", None)]
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        m = re.search(r"set\(TILEC_LLVM_COMPONENTS([^)]*)\)", f.read())
    comps = m.group(1).split() if m else []
    out = [("llvm-config", cfg)]
    libs = run([cfg, "--link-static", "--libfiles"] + comps).stdout.split()
    out += [("LLVM static library", p) for p in libs]
    inc = run([cfg, "--includedir"]).stdout.strip()
    out.append(("LLVM-C header", os.path.join(inc, "llvm-c", "Core.h")))
    return out


def header(cc, name):
    r = run([cc, "-M", "-x", "c", "-"], input="#include <%s>\n" % name)
    for tok in r.stdout.replace("\\\n", " ").split():
        if tok.endswith(name):
            return tok
    return None


def lib(cc, name):
    p = run([cc, "-print-file-name=" + name]).stdout.strip()
    return p if os.path.isabs(p) else None


def clang_link_files(clang):
    """The runtime files clang links into a fuzzer + ASan + UBSan program (its own -### line)."""
    r = run([clang, "-fsanitize=fuzzer,address,undefined", "-###", "-x", "c", "/dev/null", "-o", "/tmp/x"])
    files = []
    for tok in r.stderr.split():
        tok = tok.strip('"')
        if tok.startswith("/") and "/tmp/" not in tok and re.search(r"\.(a|so|o)$", tok):
            files.append(("clang runtime", tok))
    return files


def wanted(fuzz):
    cc = which("gcc") or "gcc"
    files = [("gcc", which("gcc")), ("g++", which("g++")), ("cmake", which("cmake")),
             ("make", which("make")), ("python3 (the build's)", "/usr/bin/python3")]
    files += llvm_files()
    for n in ("libz.so", "libzstd.so", "libstdc++.so", "libasan.so", "libubsan.so", "libcriterion.so"):
        files.append((n, lib(cc, n)))
    files.append(("Criterion header", header(cc, "criterion/criterion.h")))
    files.append(("DLPack header", header(cc, "dlpack/dlpack.h")))
    files.append(("FileCheck", which("FileCheck-19", ["/usr/lib/llvm-19/bin"])))
    files.append(("lit", "/usr/lib/llvm-19/build/utils/lit/lit.py"))
    if fuzz:
        clang = which("clang-19")
        files.append(("clang-19", clang))
        if clang:
            files += clang_link_files(clang)
    return files


def owners(paths):
    """path -> owning packages: of the path as named (a -dev package's .so link), else of the file it
    resolves to.  Merged /usr: dpkg may record /lib/... for /usr/lib/..., so both are asked.  One
    dpkg-query call for all of them."""
    def forms(c):
        return [c, c[4:]] if c.startswith(("/usr/lib/", "/usr/bin/")) else [c]
    named = {p: os.path.normpath(p) for p in paths}
    real = {p: os.path.realpath(p) for p in paths}
    queries = sorted({q for p in paths for c in (named[p], real[p]) for q in forms(c)})
    found = {}
    for line in run(["dpkg-query", "-S"] + queries).stdout.splitlines() if queries else []:
        pk, sep, path = line.partition(": ")
        if sep and path in queries:
            found.setdefault(path, set()).update(x.strip().split(":")[0] for x in pk.split(","))
    def ask(c):
        return sorted(set().union(*(found.get(q, set()) for q in forms(c))))
    return {p: ask(named[p]) or ask(real[p]) for p in paths}


def main(argv):
    fuzz = "--fuzz" in argv
    omit = [argv[i + 1] for i, a in enumerate(argv) if a == "--omit" and i + 1 < len(argv)]
    pkgs = [p for p in deps_packages(fuzz) if p not in omit]
    deps, provides = installed_fields()
    have = closure(pkgs, deps, provides)
    files = wanted(fuzz)
    own = owners([p for _, p in files if p and os.path.exists(p)])
    bad = 0
    for what, p in files:
        if not p or not os.path.exists(p):
            print("check_deps: MISSING %s (%s): install the package that ships it and name it in tools/deps.sh"
                  % (what, p or "not found"))
            bad += 1
            continue
        o = own.get(p, [])
        if not o:
            print("check_deps: %s %s belongs to no package: tools/deps.sh cannot install it" % (what, p))
            bad += 1
        elif not any(x in have for x in o):
            print("check_deps: %s %s is owned by %s, which tools/deps.sh does not install: add %s to tools/deps.sh"
                  % (what, p, ", ".join(o), o[0]))
            bad += 1
    ptxas = which("ptxas", ["/usr/local/cuda/bin"])
    if ptxas:
        o = owners([ptxas])[ptxas]
        print("check_deps: optional ptxas %s (%s): tests that assemble PTX run; without it they skip"
              % (ptxas, "package " + o[0] if o else "CUDA toolkit, not a Debian package"))
    else:
        print("check_deps: optional ptxas not found: tests that assemble PTX are skipped")
    if bad:
        print("check_deps: FAILED: %d file(s) the build needs are not installed by tools/deps.sh" % bad)
        return 1
    print("check_deps: ok: %d files, each owned by a package tools/deps.sh installs (%s)"
          % (len(files), "with --fuzz" if fuzz else "main job"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
