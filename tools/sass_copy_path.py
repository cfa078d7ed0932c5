#!/usr/bin/env python3
"""tools/sass_copy_path.py SASS: the executed fast path of a cp.async-ring kernel's copy issue, counted on its
SASS (nvdisasm -c text): the kernel's start to the main loop's first `DEPBAR.LE` (setup and the prologue's
stages), the loop head to its `LDGDEPBAR` (one stage's copy issue; with TILEC_RING_IN_RANGE=1 also the
skipped stage), the compute block (that `LDGDEPBAR` to the loop's back edge).  At a branch the path takes
the side that reaches a plain 16-byte `LDGSTS` soonest without an element copy (`LDG`, `STS`) or a
bounded chunk (`LDGSTS ... ZFILL`): the tile wholly inside the tensor, aligned (bench/RESULTS.md "branch
w4small").  A heuristic for reading, not a simulator; predicated-off instructions count (they issue).

  build/tilec examples/gemm_w4a16.tile --kernel=gemm_w4a16_splitk -D BN=128 -D SPLIT=8 --arch=sm_90a -o x.ptx
  ptxas -arch=sm_90a x.ptx -o x.cubin && nvdisasm -c x.cubin > x.sass && python3 tools/sass_copy_path.py x.sass"""
import functools
import re
import sys

PRED = r"^(@!?U?P\w+\s+)"


def parse(path):
    ins, labels = [], {}
    for line in open(path):
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.match(r"^\s+/\*[0-9a-f]+\*/\s+(.*?)\s*;", line)
        if m:
            ins.append(m.group(1))
    return ins, labels


def main(path):
    ins, labels = parse(path)
    target = lambda s: labels[re.search(r"`\((\.L_x_\d+)\)", s).group(1)]
    bad = re.compile(PRED + r"?(LDG\.|STS|LDGSTS.*ZFILL|EXIT)")
    sys.setrecursionlimit(100000)

    @functools.lru_cache(None)
    def cost(i, good, depth=0):
        n = 0
        while i < len(ins) and depth < 60:
            s = ins[i]
            if re.match(PRED + "?" + good, s):
                return n
            if bad.match(s):
                return float("inf")
            if s.startswith("BRA "):
                return n + 1 + cost(target(s), good, depth + 1)
            if re.match(PRED + "BRA", s):
                return n + 1 + min(cost(target(s), good, depth + 1), cost(i + 1, good, depth + 1))
            i, n = i + 1, n + 1
        return float("inf")

    def walk(i, stop, good, first_taken=None):
        """instructions from i to the first matching `stop` (not counted); first_taken: the first
        conditional branch goes that way (True: taken)"""
        n = 0
        while not (n and re.search(stop, ins[i])):
            s = ins[i]
            n += 1
            if s.startswith("BRA "):
                i = target(s)
            elif re.match(PRED + "BRA", s):
                if first_taken is not None:
                    i, first_taken = (target(s) if first_taken else i + 1), None
                else:
                    i = target(s) if cost(target(s), good) < cost(i + 1, good) else i + 1
            else:
                i += 1
        return n, i

    # the main loop: the back edge after the last HMMA
    last_mma = max(i for i, s in enumerate(ins) if "HMMA" in s)
    back = next(i for i in range(last_mma, len(ins)) if re.match(PRED + "BRA", ins[i]))
    head = target(ins[back])
    pre, _ = walk(0, r"DEPBAR\.LE", r"LDGSTS")
    stage, dep = walk(head, r"^LDGDEPBAR", r"LDGSTS")
    print("%s: setup + prologue stages %d; a stage's copy issue in the loop %d" % (path, pre, stage))
    # TILEC_RING_IN_RANGE=1: the loop head's first conditional branch jumps to the LDGDEPBAR, no copy between
    br = next(i for i in range(head, len(ins)) if re.match(PRED + "BRA", ins[i]))
    skipped, end = walk(head, r"^(LDGDEPBAR|LDGSTS)", r"LDGDEPBAR", first_taken=True)
    if ins[end].startswith("LDGDEPBAR") and skipped < 40:
        print("  a skipped stage (TILEC_RING_IN_RANGE=1) %d (its branch at +%d)" % (skipped, br - head))
    print("  the compute block (LDGDEPBAR to the back edge) %d" % (back - dep + 1))


if __name__ == "__main__":
    main(sys.argv[1])
