#!/usr/bin/env python3
"""bench/attn_sched_protocol_sim.py: TILEC_ATTN_SCHED=1's tile counter and hand-over (lib/codegen/
attn_sched.c), simulated on the CPU under random interleavings (branch attnsched; no GPU this session).
Agents: per CTA the producer's thread and the two consumer warpgroups; per CTA the "q full" (count 1, a
transaction the TMA completes later) and "q empty" (count 2: one arrival a warpgroup, after its O store)
mbarriers with parity waits; the shared word of the hand-over; the global counter's two words with
atomics.  Launches run one after the other (stream order: every CTA of a launch ends before the next
starts), with a different tile count and CTA count each, CTAs starting at random times.  Checks: every
tile of a launch runs exactly once, both consumer warpgroups of a CTA see the producer's tiles in the
producer's order (the K/V ring's trip counts then agree), nothing deadlocks, and the counter is zero
after every launch.  The model follows attn_sched.c and emit_q_tma.c as their comments and the PTX
describe them; it is a model, not the code.

  python3 bench/attn_sched_protocol_sim.py [RUNS]             (exit 1 on a finding)
  python3 bench/attn_sched_protocol_sim.py [RUNS] --mutants   (four deliberate errors, each must be found)
"""
import random
import sys


class Fail(Exception):
    pass


class Mbar:
    def __init__(self, count):
        self.count, self.left, self.tx, self.phase = count, count, 0, 0

    def arrive(self, tx=0):
        self.left -= 1
        self.tx += tx
        self.check()

    def tx_done(self, n):
        self.tx -= n
        self.check()

    def check(self):
        if self.left == 0 and self.tx == 0:
            self.phase += 1
            self.left = self.count

    def passes(self, par):  # try_wait.parity par: the phase of that parity completed
        return (self.phase & 1) != par


def run(rng, mutant=""):
    ctr = [0, 0]  # the stream's pair (lib/api/sched_slot.c): zeroed before its first launch
    for launch in range(rng.randint(2, 5)):
        ntiles = rng.randint(1, 40)
        nct = min(ntiles, rng.randint(1, 9))
        seen = {}
        ctas = []
        for c in range(nct):
            cta = {"full": Mbar(1), "empty": Mbar(2), "word": None, "order": [], "got": [[], []]}

            def producer(cta=cta, c=c):
                t = c
                emptyph = 0
                while t < ntiles:
                    yield  # (the tile's first K/V stage)
                    if mutant != "publish_early":
                        while not cta["empty"].passes(emptyph ^ 1):
                            yield
                    cta["word"] = t
                    if mutant == "publish_early":
                        while not cta["empty"].passes(emptyph ^ 1):
                            yield
                    emptyph ^= 1
                    cta["order"].append(t)
                    cta["full"].arrive(tx=1)  # arrive.expect_tx, then q's boxes
                    pend.append(cta["full"])
                    yield  # (the tile's other K/V stages)
                    old = ctr[0]
                    ctr[0] += 1  # atom.relaxed.gpu.add, after the tile's last stage
                    t = old + (0 if mutant == "no_nctaid" else nct)
                    yield
                while not cta["empty"].passes(emptyph ^ 1):
                    yield
                cta["word"] = t
                cta["full"].arrive()  # the end: no transaction
                yield
                old = ctr[1]
                ctr[1] += 1  # atom.acq_rel.gpu.add
                last = (old == 0) if mutant == "reset_first" else (old + 1 == nct)
                if last and mutant != "no_reset":
                    ctr[0] = ctr[1] = 0

            def consumer(w, cta=cta, c=c):
                fullph = 0
                while True:
                    while not cta["full"].passes(fullph):
                        yield
                    fullph ^= 1
                    t = cta["word"]
                    if t >= ntiles:
                        return
                    cta["got"][w].append(t)
                    if w == 0:
                        seen[t] = seen.get(t, 0) + 1
                    for _ in range(rng.randint(0, 3)):  # the tile's loop, its O store
                        yield
                    cta["empty"].arrive()

            ctas.append(cta)
            cta["agents"] = [producer(), consumer(0), consumer(1)]
            cta["start"] = rng.randint(0, 12)
        pend = []
        live = [(cta, a) for cta in ctas for a in cta["agents"]]
        step = 0
        while live:
            step += 1
            if step > 100000:
                raise Fail(f"launch {launch}: deadlock ({ntiles} tiles, {nct} CTAs)")
            if pend and rng.random() < 0.3:  # a TMA transaction completes
                pend.pop(rng.randrange(len(pend))).tx_done(1)
                continue
            cta, a = live[rng.randrange(len(live))]
            if step < cta["start"]:
                continue
            try:
                next(a)
            except StopIteration:
                live.remove((cta, a))
        for t in range(ntiles):
            if seen.get(t, 0) != 1:
                raise Fail(f"launch {launch}: tile {t} ran {seen.get(t, 0)} times ({ntiles} tiles, {nct} CTAs)")
        for cta in ctas:
            if cta["got"][0] != cta["order"] or cta["got"][1] != cta["order"]:
                raise Fail(f"launch {launch}: a consumer saw {cta['got']} for the producer's {cta['order']}")
        if ctr != [0, 0]:
            raise Fail(f"launch {launch}: counter {ctr} after the launch")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2000
    rng = random.Random(1)
    if "--mutants" in sys.argv:
        bad = 0
        for m in ("reset_first", "no_reset", "publish_early", "no_nctaid"):
            found = None
            for _ in range(runs):
                try:
                    run(rng, m)
                except Fail as e:
                    found = e
                    break
            print(f"mutant {m}: {'found: ' + str(found) if found else 'NOT FOUND'}")
            bad += found is None
        sys.exit(1 if bad else 0)
    for i in range(runs):
        try:
            run(rng)
        except Fail as e:
            print(f"run {i}: FAIL: {e}")
            sys.exit(1)
    print(f"{runs} runs (2-5 launches each, 1-40 tiles on 1-9 CTAs): every tile once, the producer's order, "
          "no deadlock, the counter zero after every launch")


main()
