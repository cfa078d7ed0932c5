#!/usr/bin/env python3
# tools/sass_converge.py: after every thread-0 TMA store / reduce (UTMASTG, UTMAREDG) of a kernel's SASS, does
# each path reconverge the warp (BSYNC or WARPSYNC) before a warp-collective instruction (HGMMA, WARPGROUP.*,
# BAR.SYNC, USETMAXREG) or EXIT?  A path that does not is the twenty-sixth session's inline-form failure (warp 0
# diverged into the next tile's wgmma: bench/RESULTS.md "twenty-sixth session").  Branches are followed (both
# sides of a predicated one), 40 instructions a path at most.  --loads: the same from every TMA load (an issuing
# lane's exit is no hazard there).  Exit 1 when any has such a path.
#   tools/sass_converge.py [--ptxas P] [--nvdisasm N] [--loads] KERNEL.ptx ...
import argparse, re, subprocess, sys, tempfile, os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_copy_path import parse  # (nvdisasm -c text -> instructions, label -> index)

ap = argparse.ArgumentParser()
ap.add_argument("--ptxas", default="ptxas")
ap.add_argument("--nvdisasm", default="nvdisasm")
ap.add_argument("--loads", action="store_true", help="also every path from a TMA load (UTMALDG, UBLKCP, UTMAPF)")
ap.add_argument("ptx", nargs="+")
a = ap.parse_args()
COLLECTIVE = re.compile(r"HGMMA|WARPGROUP|BAR\.SYNC|EXIT|USETMAXREG")
# after a TMA load (thread 0 of a ring's issuer) the exit is no hazard: a producer warp's other lanes have
# exited already, and the issuing lane leaves alone
COLLECTIVE_LOAD = re.compile(r"HGMMA|WARPGROUP|BAR\.SYNC|USETMAXREG")


def unconverged(ins, labels, start=re.compile(r"UTMASTG|UTMAREDG"), collective=COLLECTIVE):
    stores = bad = 0
    for i, t in enumerate(ins):
        if not start.search(t):
            continue
        stores += 1
        stack, seen, ok = [i + 1], set(), True
        while stack and ok:
            j = stack.pop()
            for _ in range(40):
                if j is None or j in seen or j >= len(ins):
                    break
                seen.add(j)
                s = ins[j]
                if s.startswith("BSYNC") or "WARPSYNC" in s:
                    break
                # ptxas's ELECT loop around a uniform instruction with a per-lane predicate: the warp runs the
                # TMA op as a whole and leaves the loop together (`@P BRA.U.ANY` back to a head at or before it)
                m = re.search(r"BRA\.U\.ANY `\((\.L_x_\d+)\)", s)
                if m and labels.get(m.group(1), len(ins)) <= i:
                    break
                if s.startswith("EXIT") and collective is COLLECTIVE_LOAD:
                    break
                if collective.search(s) and not s.startswith("@"):
                    ok = False
                    break
                m = re.search(r"BRA `\((\.L_x_\d+)\)", s)
                if m and s.startswith("@"):
                    stack.append(labels.get(m.group(1)))
                elif m:
                    j = labels.get(m.group(1))
                    continue
                j += 1
        bad += not ok
    return stores, bad


fail = 0
with tempfile.TemporaryDirectory() as d:
    for p in a.ptx:
        cubin = os.path.join(d, "k.cubin")
        subprocess.run([a.ptxas, "-arch=sm_90a", p, "-o", cubin], check=True)
        sass = os.path.join(d, "k.sass")
        with open(sass, "w") as out:
            subprocess.run([a.nvdisasm, "-c", cubin], stdout=out, check=True)
        ins, labels = parse(sass)
        n, bad = unconverged(ins, labels)
        print(f"{os.path.basename(p)}: {n} TMA stores, {bad} reach a collective op diverged")
        fail |= bad > 0
        if a.loads:
            n, bad = unconverged(ins, labels, re.compile(r"UTMALDG|UBLKCP|UTMAPF"), COLLECTIVE_LOAD)
            print(f"{os.path.basename(p)}: {n} TMA loads, {bad} reach a collective op diverged")
            fail |= bad > 0
sys.exit(1 if fail else 0)
