#!/usr/bin/env python3
"""bench/attn_tile_model.py: the per-tile boundary model of the persistent fa3 form (branch attnshort2,
bench/RESULTS.md "branch attnshort2"): what a tile pays between its last step and the next tile's first
score dot with O in q's slot (the default: "q empty" after both O stores' reads, then q's TMA) and with O
through the last ring stage (TILEC_ATTN_O_SLOT=1: q's TMA from the later warpgroup's loop exit, under its
last value dot and epilogue), and the ratio it predicts at S 1k / 4k / 16k.  CPU only, no inputs.

Clocks at 1.98 GHz.  From the later warpgroup's loop exit (its last softmax done):
  default: pv + epi + wake + q                      (the next q's load starts after both epilogues)
  O_SLOT:  max(pv + epi, wake + q)                  (q issued at the exit; bar.sync 9 costs the earlier
                                                     warpgroup a wait that is under q's load)
pv: the last value dot (512 tensor clocks a warpgroup + latency); epi: the epilogue after it (FMUL, F2FP,
STS, fence, the warpgroup's barrier, the UTMASTG boxes and their read), from the SASS's instruction counts;
q: q's TMA from DRAM (32 KiB at D128, 64 KiB at D256: q is read once); wake: the producer's spin on "q
empty".  Steps and the fixed cost a tile today from the H200 fits (RESULTS "attnd128", "attnd256b",
"twenty-first session")."""

STEP_US = {128: 1.82, 256: 1.657}          # in-loop step (BN 128 at D128, BN 64 at D256)
BN = {128: 128, 256: 64}
FIXED_US = {128: (2.5, 2.5), 256: (3.9, 6.9)}  # a tile outside its steps today (low / high fit)
PV = (500, 700)
EPI = {128: (1100, 1500), 256: (1800, 2200)}
QLAT = {128: (1200, 2000), 256: (1500, 2800)}
WAKE = (50, 150)
CLK = 1980.0  # per us


def saving(d, lo):
    pv, epi, q, wake = (x[0] if lo else x[1] for x in (PV, EPI[d], QLAT[d], WAKE))
    a = pv + epi + wake + q
    b = max(pv + epi, wake + q)
    return (a - b) / CLK


def main():
    print("D   S      steps  tile today (us)   saved a tile (us)   B / A")
    for d in (128, 256):
        for s in (1024, 4096, 16384):
            steps = s // BN[d]
            rows = []
            for lo in (True, False):
                for fx in FIXED_US[d]:
                    t = steps * STEP_US[d] + fx
                    sv = saving(d, lo)
                    rows.append((t, sv, t / (t - sv)))
            t0, t1 = min(r[0] for r in rows), max(r[0] for r in rows)
            s0, s1 = min(r[1] for r in rows), max(r[1] for r in rows)
            g0, g1 = min(r[2] for r in rows), max(r[2] for r in rows)
            print(f"{d:<3} {s:<6} {steps:<6} {t0:6.1f}-{t1:<6.1f}      {s0:4.2f}-{s1:<4.2f}           {g0:.3f}-{g1:.3f}")


if __name__ == "__main__":
    main()
