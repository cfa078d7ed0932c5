#!/usr/bin/env python3
"""bench/attn_sched_model.py: what TILEC_ATTN_SCHED=1 (causal fa3 tiles from a global atomic counter,
lib/codegen/attn_sched.c) should save against today's one tile a CTA with TILEC_ATTN_ORDER's tail
order; a list-schedule model on the CPU (branch attnsched, twenty-second session; no GPU, no torch).

bench.py's causal rows: H = 2048 / D, Z = 16384 / S, 128-row tiles, row block p0 = 0 the heaviest.  The
fa3 form: one program an SM (132), a step of 128 keys 1.82 us at D128 (BN 128), of 64 keys 1.66 us at
D256 (BN 64) -- the long-S fits of bench/RESULTS.md "branch attnshort2".
- today (one tile a CTA): every CTA pays F1 outside its loop (launch, barrier init, q and the first
  stage with the SM idle, the epilogue and exit); dispatched in TILEC_ATTN_ORDER's order (the last
  two waves' heads heaviest first, attn_order_sim.tail_order) to the first free SM.  F1 is fitted so
  that the model gives today's measured time (x cuDNN from the twenty-first session's call 2, cuDNN's
  time from the seventeenth / eighteenth sessions' absolute rows).
- counter: 132 persistent CTAs; a CTA's first tile pays F1, every later one Fp (what a persistent fa3
  tile pays outside its loop: fitted to the full rows, D128 S1k full 0.900 -> 2.5 us, D256 S1k full
  0.868 / 0.955 -> 7.9 / 4.8 us); each free CTA takes the next tile of the order: sections of G heads
  (K and V of G heads fit 32 MiB, FlashAttention-3's rule), heaviest row block first inside a section;
  a CTA takes its next tile when its producer has issued the current one's last K/V stage (about two
  steps before the tile ends), as the kernel; FlashAttention-3 takes it at the tile's start.
Prints today's model, the counter's model at the Fp range, and the ratio (the predicted speed-up); beside
it the counter with every head in one section (=2), in the launch's order (no heaviest-first: what the
counter alone gives) and with TILEC_ATTN_O_SLOT=1 (Fp less attnshort2's 0.75 / 1.0 us a tile).

    python3 bench/attn_sched_model.py
"""
import heapq
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attn_order_sim import simulate, tail_order  # noqa: E402

NSM = 132


def section_order(zh, nb, G):
    out = []
    for first in range(0, zh, G):
        gs = min(G, zh - first)
        out += [(first + r % gs, r // gs) for r in range(gs * nb)]
    assert sorted(out) == sorted((h, p) for h in range(zh) for p in range(nb))
    return out


def dynamic(order, work, f1, fp, lead=0.0):
    """132 CTAs: a CTA's first tile (ctaid.x) costs f1 + steps, later ones fp + steps.  A CTA takes its
    next tile from the counter `lead` us before its current one ends (at the latest when it starts):
    attn_sched.c takes it when the producer has issued the tile's last K/V stage, about `stages` steps
    before the consumers finish (lead = 2 steps); FlashAttention-3's prefetch_next_work takes it at the
    tile's start (lead = inf); 0: when free."""
    order = list(order)
    k = min(NSM, len(order))
    heap = []  # (the time CTA c takes, c, the time it is free)
    end = 0.0
    for c in range(k):
        done = f1 + work(order[c][1])
        end = max(end, done)
        heapq.heappush(heap, (max(0.0, done - lead), c, done))
    while heap and k < len(order):
        _, c, free = heapq.heappop(heap)
        done = free + fp + work(order[k][1])
        k += 1
        end = max(end, done)
        heapq.heappush(heap, (max(free, done - lead), c, done))
    return end


# (row, D, S, BN, us a step, today's time in us (measured x cuDNN -> us), Fp range)
ROWS = [("D128 S4k causal", 128, 4096, 128, 1.82, 539.0, (2.5, 3.5)),
        ("D128 S1k causal (fa3 form, TILEC_ATTN_FORM_MIN_S=1024; today the two-program kernel, 187 us)", 128, 1024,
         128, 1.82, None, (2.5, 3.5)),
        ("D256 S1k causal", 256, 1024, 64, 1.66, 191.0, (4.8, 7.9)),
        ("D256 S4k causal", 256, 4096, 64, 1.66, 494.0, (4.8, 7.9))]


def fit_f1(zh, nb, work, target):
    lo, hi = 0.0, 40.0
    for _ in range(50):
        mid = (lo + hi) / 2
        t = simulate([mid + work(p0) for _, p0 in tail_order(zh, nb, 264)], NSM, 1, 1.0)
        lo, hi = (mid, hi) if t < target else (lo, mid)
    return lo


if __name__ == "__main__":
    f1_128 = None
    for name, D, S, BN, step, today, fps in ROWS:
        H, Z, nb = 2048 // D, max(1, 16384 // S), S // 128
        zh = Z * H
        work = lambda p0: step * ((nb - p0) * 128 // BN)
        loop = sum(work(p0) for p0 in range(nb)) * zh / NSM
        if today is None:  # the fa3 form at S1k: F1 of the S4k fit
            f1 = None
        else:
            f1 = fit_f1(zh, nb, work, today)
        if D == 128 and f1 is not None:
            f1_128 = f1
        if f1 is None:
            f1 = f1_128 if f1_128 is not None else 8.0
        a = simulate([f1 + work(p0) for _, p0 in tail_order(zh, nb, 264)], NSM, 1, 1.0)
        G = max(1, min(zh, (32 << 20) // (8 * S * D)))
        outs = []
        for fp in fps:
            sec = section_order(zh, nb, G)
            lead = 2 * step  # (the producer's last K/V stage: 2 / 3 ring stages ahead of the consumers)
            b = dynamic(sec, work, f1, fp, lead)
            ball = dynamic(section_order(zh, nb, zh), work, f1, fp, lead)
            bl = dynamic([(h, p) for h in range(zh) for p in range(nb)], work, f1, fp, lead)
            slot = dynamic(sec, work, f1, fp - (0.75 if D == 128 else 1.0), lead)
            start = dynamic(sec, work, f1, fp, float("inf"))
            outs.append(f"Fp {fp}: {b:.0f} us (x{a / b:.3f}; every head x{a / ball:.3f}, launch order x{a / bl:.3f}; "
                        f"+ O_SLOT x{a / slot:.3f}; taken at the tile's start x{a / start:.3f})")
        print(f"{name}: loop alone {loop:.0f} us; today (one tile a CTA) F1 {f1:.1f} us -> {a:.0f} us; "
              f"counter, G {G} heads: " + "; ".join(outs))
