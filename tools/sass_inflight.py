#!/usr/bin/env python3
"""tools/sass_inflight.py CUBIN...: in each cubin's main loop (the backward branch holding the most HGMMA), every
wgmma group's accumulator and register-A registers are in flight from its first HGMMA until the
WARPGROUP.DEPBAR that completes it; prints each other instruction that names one of them meanwhile and
exits 1 if any does (a lazy wait placed too late; bench/RESULTS.md "bwd7", "bwd8").  --selftest: the same
check with every DEPBAR completing one group too few must report (the check can fail).  Needs nvdisasm
($NVDISASM, else /tmp/nvd/nvidia/cu13/bin/nvdisasm, else PATH).

  build/tilec examples/attn_bwd.tile --kernel=attn_bwd_dkdv -D D=128 --tma-fallback=form --arch=sm_90a -o x.ptx
  ptxas -arch=sm_90a x.ptx -o x.cubin && python3 tools/sass_inflight.py x.cubin"""
import os
import re
import shutil
import subprocess
import sys


def nvdisasm():
    for p in (os.environ.get("NVDISASM"), "/tmp/nvd/nvidia/cu13/bin/nvdisasm", shutil.which("nvdisasm")):
        if p and os.path.exists(p):
            return p
    sys.exit("sass_inflight: no nvdisasm")


def check(cubin, slack=0):
    out = subprocess.run([nvdisasm(), "-c", cubin], capture_output=True, text=True, check=True).stdout
    ins, labels, lab = [], {}, None
    for line in out.splitlines():
        m = re.match(r"\s*\.L_x_(\d+):", line)
        if m:
            lab = m.group(1)
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            a = int(m.group(1), 16)
            ins.append((a, m.group(2).strip()))
            if lab is not None:
                labels[lab], lab = a, None
    loops = []
    for a, t in ins:
        m = re.search(r"BRA[^`]*`\(\.L_x_(\d+)\)", t)
        if m and m.group(1) in labels and labels[m.group(1)] <= a:
            lo, hi = labels[m.group(1)], a
            loops.append((sum(1 for b, u in ins if lo <= b <= hi and "HGMMA" in u), lo - hi, lo, hi))
    if not loops or loops and max(loops)[0] == 0:
        print(f"{cubin}: no loop with wgmma")
        return 0
    _, _, lo, hi = max(loops)
    groups, cur, bad, n = [], set(), 0, 0
    for a, t in ins:
        if not lo <= a <= hi:
            continue
        body = re.sub(r"^@!?U?P\w+\s+", "", t)
        op = body.split()[0]
        if op.startswith("HGMMA"):
            m = re.match(r"HGMMA\.64x(\d+)x\d+\S*\s+R(\d+),\s*(\S+)", body)
            regs = set(range(int(m.group(2)), int(m.group(2)) + int(m.group(1)) // 2))
            if m.group(3).startswith("R"):
                r = int(m.group(3).rstrip(",")[1:])
                regs |= set(range(r, r + 4))
            cur |= regs
            if "gsb0" in body:
                groups.append(cur)
                cur, n = set(), n + 1
            continue
        if op.startswith("WARPGROUP.DEPBAR"):
            k = int(re.search(r"0x([0-9a-f]+)", body).group(1), 16) + slack
            while len(groups) > k:
                groups.pop(0)
            continue
        if op.startswith("WARPGROUP.ARRIVE"):
            continue
        hit = {int(x) for x in re.findall(r"\bR(\d+)\b", body)} & set().union(cur, *groups)
        if hit:
            bad += 1
            if bad <= 8:
                print(f"  {a:#x}: {t}   <- in flight: R{sorted(hit)}")
    print(f"{cubin}: loop {lo:#x}-{hi:#x}, {n} groups, {bad} instructions naming registers in flight")
    return bad


def main():
    args = [a for a in sys.argv[1:] if a != "--selftest"]
    if "--selftest" in sys.argv:
        return 0 if all(check(c, slack=1) > 0 for c in args) else 1
    return 1 if sum(check(c) for c in args) else 0


if __name__ == "__main__":
    sys.exit(main())
