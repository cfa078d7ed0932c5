#!/usr/bin/env python3
"""bench/attn_order_sim.py: the list-schedule simulation behind TILEC_ATTN_ORDER (bench/RESULTS.md,
seventeenth session, branch attnshort).  No GPU, no torch.

bench.py's attention rows: H = 2048 / D, Z = 16384 / S, grid (S / 128, Z H), ctaid.x fastest.  A CTA's
time is a fixed cost plus its steps times the per-step time, both fitted to the full rows of the H200
runs (t = A + B S: the fixed cost is A over the waves, the step B's share); causal row block i (0 = the
top) has (i + 1) 128 / BN steps, attn.tile runs program_id(0) = 0 as the heaviest.  132 SMs with 1 or 2
slots; the hardware starts CTAs in launch order on the first free slot; at two programs an SM one
program alone runs `alone` times faster (a guess: 1.4).  Prints, per row, today's order against the
ideal (total work / slots) and the gain of the tail-only order at span 2 waves (=1), 264 and 4096 CTAs.

    python3 bench/attn_order_sim.py
"""


def simulate(works, nsm, per, alone):
    sms = [[] for _ in range(nsm)]
    it = iter(works)
    nxt = next(it, None)
    for _ in range(per):
        for i in range(nsm):
            if nxt is None:
                break
            sms[i].append(nxt)
            nxt = next(it, None)
    rate = lambda k: 1.0 if k >= per else alone
    t = 0.0
    while True:
        best = None
        for sm in sms:
            if sm:
                dt = min(sm) / rate(len(sm))
                best = dt if best is None or dt < best else best
        if best is None:
            return t
        t += best
        for i, sm in enumerate(sms):
            if not sm:
                continue
            left = [w - best * rate(len(sm)) for w in sm]
            sms[i] = [w for w in left if w > 1e-9]
            for _ in range(len(left) - len(sms[i])):
                if nxt is not None:
                    sms[i].append(nxt)
                    nxt = next(it, None)


def launch_order(zh, nb):
    return [(h, p) for h in range(zh) for p in range(nb)]


def tail_order(zh, nb, span):
    """lib/codegen/attn_order.c: the last G = min(zh, ceil(span / nb)) heads program_id(1) fastest."""
    g = min(zh, max(1, -(-span // nb)))
    out = [(h, p) for h in range(zh - g) for p in range(nb)]
    out += [(zh - g + r % g, r // g) for r in range(g * nb)]
    assert sorted(out) == sorted(launch_order(zh, nb))
    return out


# (row, D, S, programs an SM, BN, fixed us, us a step, alone, the default span)
ROWS = [("D64 S1k", 64, 1024, 2, 128, 1.8, 2.25, 1.4, 528), ("D64 S4k", 64, 4096, 2, 128, 1.8, 2.25, 1.4, 528),
        ("D128 S1k", 128, 1024, 2, 64, 6.5, 1.83, 1.4, 528),
        ("D128 S4k (fa3 form)", 128, 4096, 1, 128, 5.8, 1.80, 1.0, 264),
        ("D256 S1k", 256, 1024, 1, 64, 9.4, 1.79, 1.0, 264), ("D256 S4k", 256, 4096, 1, 64, 9.4, 1.79, 1.0, 264),
        ("D256 S16k", 256, 16384, 1, 64, 9.4, 1.79, 1.0, 264)]

if __name__ == "__main__":
    for name, D, S, per, BN, fixed, step, alone, span in ROWS:
        H, Z, nb = 2048 // D, max(1, 16384 // S), S // 128
        zh = Z * H
        work = lambda p0: fixed + step * ((nb - p0) * 128 // BN)
        run = lambda order: simulate([work(p0) for _, p0 in order], 132, per, alone)
        a = run(launch_order(zh, nb))
        ideal = sum(work(p0) for p0 in range(nb)) * zh / (132 * per)
        full = simulate([work(0)] * (zh * nb), 132, per, alone)
        gains = " ".join(f"span {sp}: x{a / run(tail_order(zh, nb, sp)):.3f}" for sp in (span, 264, 4096))
        print(f"{name}: causal today {a:.0f} us (x{a / ideal:.3f} the ideal), full {full:.0f} us; {gains}")
