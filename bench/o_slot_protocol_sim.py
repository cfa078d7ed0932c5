#!/usr/bin/env python3
"""bench/o_slot_protocol_sim.py: the persistent fa3 form's shared-memory protocol, simulated on the CPU
under random interleavings (branch attnshort2; no GPU this session): the producer, two consumer
warpgroups, the ring's full / empty mbarriers (parity waits, arrival counts), q full / q empty, the named
barriers (turns 5 / 6, bar.sync 9), the TMA loads and O's TMA store as asynchronous agents.  It checks
that no write (a TMA load, O's st.shared) lands on shared memory a dot or a store still reads, that every
read sees the data of its own tile and step, and that nothing deadlocks; for the default protocol (O in
q's slot, "q empty" after each store's read, count 2) and TILEC_ATTN_O_SLOT=1's (O in the last stage's V
slot and, when O is larger, a region of its own; "q empty" at the loop's exit, count 8; the stage released
by the store's thread with count 4 a warpgroup), and the bounded default of the twenty-eighth session (that
protocol for a tile of at most N steps, q's slot with the store's count-4 arrive and the tile-end release for a
longer one, chosen per tile, so both paths alternate in one CTA's tiles), and TILEC_ATTN_O_SLOT_K=1's (twenty-ninth
session: O into the last stage's K slot, the epilogue waiting for "q empty" -- both warpgroups' last score dots,
the only readers of K -- instead of bar.sync 9 on both last value dots), at 2 and 3 stages, K and V released together or apart,
trip counts 0..9 a tile.  The model follows lib/codegen/emit_ws.c, emit_overlap.c, emit_q_tma.c,
emit_o_tma.c and emit_o_slot.c as their comments and the PTX describe them; it is a model, not the code.

  python3 bench/o_slot_protocol_sim.py [RUNS]             (exit 1 on a finding)
  python3 bench/o_slot_protocol_sim.py [RUNS] --mutants   (four deliberate protocol errors, each must be found)
"""
import random
import sys


class Fail(Exception):
    pass


class Sim:
    def __init__(self, rng, stages, kv_split, o_slot, extra, trips, mutant="", slot_max=None, o_k=False):
        self.rng, self.S, self.kv, self.o_slot, self.extra, self.trips = rng, stages, kv_split, o_slot, extra, trips
        self.slot_max = slot_max  # the default's bound (emit_o_slot.c cg_o_slot_taken): None = every tile
        self.o_k = o_k  # O into the last stage's K slot after "q empty" (TILEC_ATTN_O_SLOT_K=1)
        self.mutant = mutant  # a deliberate protocol error the checks must find (--mutants)
        self.mb = {}
        self.bars = {}
        self.readers = {}   # region -> set of reader tags
        self.data = {}      # region -> content tag
        self.agents = []

    # mbarriers: [expected, pending, phase]; try_wait.parity(p) passes once the phase of parity p completed
    def mbar(self, name, count):
        self.mb[name] = [count, count, 0]

    def arrive(self, name, n=1):
        m = self.mb[name]
        m[1] -= n
        if m[1] < 0:
            raise Fail(f"{name}: more arrivals than its count")
        if m[1] == 0:
            m[1], m[2] = m[0], m[2] ^ 1

    def passed(self, name, parity):
        return lambda: self.mb[name][2] != parity

    # named barriers of 256 threads = 2 warpgroup agents
    def bar_arrive(self, b):
        st = self.bars.setdefault(b, [0, 0])
        st[0] += 1
        if st[0] == 2:
            st[0], st[1] = 0, st[1] + 1
        return st[1]

    def bar_sync(self, b):
        gen = self.bars.setdefault(b, [0, 0])[1]
        self.bar_arrive(b)
        return lambda: self.bars[b][1] > gen

    # regions: "K{s}", "V{s}", "q", "X" as two row halves ".0" / ".1" (warpgroup w's 64 rows of O, and of
    # q: its score dots read only those); a name without a half means both
    @staticmethod
    def parts(region):
        return [region] if region[-2:-1] == "." else [region + ".0", region + ".1"]

    def read_begin(self, region, tag, want):
        for r in self.parts(region):
            if self.data.get(r) != want:
                raise Fail(f"{tag} reads {r}: holds {self.data.get(r)}, wants {want}")
            self.readers.setdefault(r, set()).add(tag)

    def read_end(self, region, tag):
        for r in self.parts(region):
            self.readers[r].discard(tag)

    def write(self, region, tag, what):
        for r in self.parts(region):
            rs = self.readers.get(r)
            if rs:
                raise Fail(f"{tag} writes {r} while {sorted(rs)} read it")
            self.data[r] = what

    def spawn(self, gen):
        self.agents.append(gen)

    def run(self):
        waits = {}
        steps = 0
        while self.agents:
            steps += 1
            if steps > 2000000:
                raise Fail("no end")
            ready = [a for a in self.agents if a not in waits or waits[a]()]
            if not ready:
                raise Fail("deadlock")
            a = self.rng.choice(ready)
            try:
                cond = next(a)
                if cond is None:
                    waits.pop(a, None)
                else:
                    waits[a] = cond
            except StopIteration:
                self.agents.remove(a)
                waits.pop(a, None)

    def delay(self, n=3):
        for _ in range(self.rng.randint(0, n)):
            yield None


def q_region(w):
    return f"q.{w}"  # each warpgroup's 64 rows of q's slot


def producer(sim):
    S = sim.S
    eph = [0] * S  # parity bits of the empty mbarriers, the producer's
    vph = [0] * S
    qe = 0
    wr = 0
    for t, T in enumerate(sim.trips):
        def issue_q(t=t):
            nonlocal qe
            yield sim.passed("qempty", qe ^ 1)
            qe ^= 1
            sim.spawn(load_q(sim, t))
        for j in range(T):
            yield sim.passed(f"empty{wr}", eph[wr] ^ 1)
            eph[wr] ^= 1
            if sim.kv:
                sim.spawn(load(sim, f"K{wr}", (t, j), f"full{wr}"))
                yield sim.passed(f"vempty{wr}", vph[wr] ^ 1)
                vph[wr] ^= 1
                sim.spawn(load(sim, f"V{wr}", (t, j), f"vfull{wr}"))
            else:
                sim.spawn(load2(sim, wr, (t, j)))
            if j == 0:
                yield from issue_q()
            wr = (wr + 1) % S
            yield None
        if T == 0:
            yield from issue_q()


def load(sim, region, what, full):
    yield from sim.delay(6)
    sim.write(region, "tma", what)
    sim.arrive(full)


def load2(sim, s, what):
    yield from sim.delay(6)
    sim.write(f"K{s}", "tma", what)
    sim.write(f"V{s}", "tma", what)
    sim.arrive(f"full{s}")


def load_q(sim, t):
    yield from sim.delay(8)
    sim.write("q", "tma q", ("q", t))
    sim.arrive("qfull")


def o_store(sim, w, regions, t, release):
    yield from sim.delay(6)
    for r in regions:
        if sim.data.get(r) != ("O", t, w):
            raise Fail(f"O store of tile {t} warpgroup {w} reads {r}: holds {sim.data.get(r)}")
        sim.read_end(r, f"store{w}")
    release()


def consumer(sim, w):
    S = sim.S
    fph = [0] * S
    vph = [0] * S
    qf = 0
    rd = 0
    tag = f"wg{w}"
    for t, T in enumerate(sim.trips):
        if w == 1:
            sim.bar_arrive(5)
        yield sim.passed("qfull", qf)
        qf ^= 1
        prev = None
        for j in range(T):
            yield sim.bar_sync(5 + w)
            s = rd
            rd = (rd + 1) % S
            yield sim.passed(f"full{s}", fph[s])
            fph[s] ^= 1
            pv_slot = prev if j > 0 else s
            if sim.kv:  # V of step j-1 (iteration 0: V_0 without taking its phase)
                yield sim.passed(f"vfull{pv_slot}", vph[pv_slot])
                if j > 0:
                    vph[pv_slot] ^= 1
            sim.read_begin(q_region(w), tag + " S", ("q", t))
            sim.read_begin(f"K{s}", tag + " S", (t, j))
            sim.read_begin(f"V{pv_slot}", tag + " PV", (t, j - 1 if j > 0 else 0))
            sim.bar_arrive(6 - w)
            if sim.mutant == "q empty before the last score dot's wait" and j == T - 1:
                sim.arrive("qempty", 4)
            yield from sim.delay()
            sim.read_end(q_region(w), tag + " S")      # wait_group 1: S_j done
            sim.read_end(f"K{s}", tag + " S")
            if sim.kv:
                sim.arrive(f"empty{s}", 4)               # K released after the score dot
            yield from sim.delay()                      # the softmax
            sim.read_end(f"V{pv_slot}", tag + " PV")   # wait_group 0
            if j > 0:
                sim.arrive(f"vempty{prev}" if sim.kv else f"empty{prev}", 4)
            prev = s
        ran = T > 0
        slot = ran and (sim.slot_max is None or T <= sim.slot_max)  # this tile's O through the last stage
        if sim.o_slot and slot and sim.mutant != "q empty before the last score dot's wait":
            sim.arrive("qempty", 4)                     # at the loop's exit (lane 0 of 4 warps)
        # the last value dot's turn
        yield sim.bar_sync(5 + w)
        if w == 0 and not ran:
            sim.bar_arrive(6)
        if ran:
            if sim.kv:
                yield sim.passed(f"vfull{prev}", vph[prev])
                vph[prev] ^= 1
            sim.read_begin(f"V{prev}", tag + " PV", (t, T - 1))
            if w == 0:
                sim.bar_arrive(6)
            yield from sim.delay()
            sim.read_end(f"V{prev}", tag + " PV")
        # the epilogue
        if sim.o_slot and sim.o_k:
            if slot and sim.mutant != "O into K without q empty's wait":
                yield sim.passed("qempty", t & 1)       # both warpgroups' last score dots done (tile t's phase)
            regions = [f"K{prev}.{w}"] if slot else [q_region(w)]
        elif sim.o_slot:
            if sim.mutant != "no bar.sync 9" and (slot or sim.slot_max is None):  # (bounded: a uniform predicate)
                yield sim.bar_sync(9)
            regions = [f"V{prev}.{w}"] if slot else [q_region(w)]
            if slot and sim.extra:
                regions.append(f"X.{w}")
        else:
            regions = [q_region(w)]
        for r in regions:
            if sim.o_slot and slot:  # O's rows overlay the whole V (K) slot's bytes: no dot may read either half
                other = f"{r[:-1]}{1 - w}"
                busy = {x for x in sim.readers.get(other, set()) if not x.startswith("store")}
                if busy:
                    raise Fail(f"{tag} writes O into {r} while {sorted(busy)} read {other}")
            sim.write(r, tag + " O", ("O", t, w))
            sim.readers.setdefault(r, set()).add(f"store{w}")
        done = []

        def release(slot=slot, prev=prev):
            if sim.o_slot:
                if slot:
                    sim.arrive(f"vempty{prev}" if sim.kv else f"empty{prev}", 4)
                else:
                    sim.arrive("qempty", 4)
            else:
                sim.arrive("qempty", 1)
            done.append(1)
        if sim.mutant == "release before the read" and slot:
            release()
            release = lambda: None
        sim.spawn(o_store(sim, w, regions, t, release))
        yield lambda: bool(done) or sim.mutant == "release before the read"  # the store thread's wait_group.read
        if ran and not (sim.o_slot and slot) and sim.mutant != "no tile-end release past the bound":
            sim.arrive(f"vempty{prev}" if sim.kv else f"empty{prev}", 4)   # release_last at the tile's end


def one(seed, stages, kv, o_slot, extra, mutant="", slot_max=None, o_k=False):
    rng = random.Random(seed)
    trips = [rng.choice([0, 1, 1, 2, 3, 4, 5, 8, 9]) for _ in range(rng.randint(1, 7))]
    sim = Sim(rng, stages, kv, o_slot, extra, trips, mutant, slot_max, o_k)
    for s in range(stages):
        sim.mbar(f"full{s}", 1)
        sim.mbar(f"empty{s}", 8)
        if kv:
            sim.mbar(f"vfull{s}", 1)
            sim.mbar(f"vempty{s}", 8)
    sim.mbar("qfull", 1)
    sim.mbar("qempty", 8 if o_slot else 2)
    sim.spawn(producer(sim))
    sim.spawn(consumer(sim, 0))
    sim.spawn(consumer(sim, 1))
    sim.run()
    return trips


MUTANTS = ["no bar.sync 9", "release before the read", "q empty before the last score dot's wait",
           "no tile-end release past the bound", "O into K without q empty's wait"]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 3000
    bad = 0
    if "--mutants" in sys.argv:  # each deliberate error must be found (the checks can fail)
        for m in MUTANTS:
            found = None
            for seed in range(runs):
                try:
                    if m == "O into K without q empty's wait":  # (K and V together: the form O_SLOT_K takes)
                        one(seed, 3, False, True, False, m, 3, True)
                    else:
                        one(seed, 2, True, True, True, m, 3)  # (the default's bound at 3 steps: both paths)
                except Fail as e:
                    found = f"seed {seed}: {e}"
                    break
            print(f"mutant '{m}': {'found, ' + found if found else 'NOT FOUND'}")
            bad += not found
        sys.exit(1 if bad else 0)
    for cfg in [(3, False, True, False, None, 3), (2, True, True, True, None, 3), (3, True, True, False, None, 2),
                (3, False, False, False), (3, False, True, False), (2, True, False, False), (2, True, True, True),
                (3, True, True, False), (2, False, True, True), (3, False, True, False, "", 3, True),
                (2, False, True, False, "", None, True), (3, False, True, False, "", None, True)]:
        fails = 0
        for seed in range(runs):
            try:
                one(seed, *cfg)
            except Fail as e:
                fails += 1
                if fails <= 2:
                    print(f"  stages {cfg[0]} kv_split {cfg[1]} o_slot {cfg[2]} extra {cfg[3]} seed {seed}: {e}")
        bound = (f" bound {cfg[5]} steps" if len(cfg) > 5 and cfg[5] else "") + (" O into K" if len(cfg) > 6 else "")
        print(f"stages {cfg[0]} kv_split {int(cfg[1])} o_slot {int(cfg[2])} extra region {int(cfg[3])}{bound}: "
              f"{runs - fails} / {runs} interleavings clean")
        bad += fails
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
