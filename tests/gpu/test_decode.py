#!/usr/bin/env python3
"""test_decode.py: examples/attn_decode.tile (split-KV decode attention over a paged KV cache) on
the GPU, against an fp64 reference of softmax(q k^T * scale) v over each sequence's own keys, and
against tilec's CPU interpreter on the smallest case.

Every case: random bf16 q, k, v (never zero); pages placed in random physical order; the rows of a
page past its sequence's end and the spare pages hold NaN (a kernel that reads them without masking
fails); every output and scratch buffer poisoned with NaN before the launch; lengths ragged (0, 1,
page - 1, page + 1, primes, 4097), GQA groups of 1..8, page sizes 16..256.

Tolerances (bf16 inputs, p rounded to bf16 before the p.v product as in FlashAttention, bf16
output): ||O - ref|| / ||ref|| <= 1e-2 and max |O - ref| <= 3e-2 max |ref|.  Interpreter (f32
scratch): ||gpu - interp|| / ||interp|| <= 2e-3 (exp2.approx against exp2 rounded from double).
Self-test: the last key of each sequence dominates one query head's scores, and the check must
reject the reference of the same inputs without it.  attn_decode_fused (one launch) on every case,
launched 20 times (TEST_DECODE_REPS) on re-poisoned scratch: within the tolerance, bit-identical,
its counts back to 0.

  python3 tests/gpu/test_decode.py [--lib build/libtilec.so] [--examples examples]
Exit 0 pass, 1 fail, 77 no GPU / no torch.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_py import examples_dir, start  # noqa: E402


def main():
    env = start("test_decode")
    if env is None:
        return 77
    torch, tilec = env
    src = os.path.join(examples_dir(),
                       "attn_decode.tile")

    def load(kernel, defines):
        return tilec.compile(src, defines=defines)[kernel]

    def launch(k, vals):
        k(*vals)
        torch.cuda.synchronize()

    def interpret(k, vals):
        tilec.interpret(k, *vals)

    nan = float("nan")
    gen = torch.Generator(device="cpu").manual_seed(int(os.environ.get("TILEC_SEED", "20261201")))
    print("test_decode: seed", gen.initial_seed())
    D = 128
    # (B, HKV, G, PAGE, BT, lens, NS)
    cases = [
        (3, 2, 4, 64, 64, [1, 63, 65], 2),
        (4, 8, 4, 64, 64, [0, 127, 1000, 129], 8),
        (2, 1, 8, 128, 64, [4097, 131], 16),
        (3, 2, 2, 16, 16, [17, 1, 300], 4),
        (2, 4, 1, 256, 64, [2999, 256], 5),
        (2, 8, 4, 64, 64, [4096, 3001], 64),  # one page a split: 128 programs merging through one count each
    ]
    fails = 0
    kernels = {}
    for ci, (B, HKV, G, PAGE, BT, lens, NS) in enumerate(cases):
        if BT not in kernels:
            kernels[BT] = (load("attn_decode_paged", {"BT": BT}), load("attn_decode_combine", {}),
                           load("attn_decode_contig", {"BT": BT}), load("attn_decode_fused", {"BT": BT}))
        kdec, kcomb, kcont, kfused = kernels[BT]
        npages = [math.ceil(L / PAGE) for L in lens]
        MAXP, NP = max(1, max(npages)), sum(npages) + 3
        phys = torch.randperm(NP, generator=gen).tolist()
        Kc = torch.full((NP, HKV, PAGE, D), nan, dtype=torch.bfloat16)
        Vc = torch.full((NP, HKV, PAGE, D), nan, dtype=torch.bfloat16)
        table = torch.full((B, MAXP), -1, dtype=torch.int32)
        q = (torch.randn(B, HKV, G, D, generator=gen) * 0.5).to(torch.bfloat16)
        nxt = 0
        for b, L in enumerate(lens):
            for j in range(npages[b]):
                p, valid = phys[nxt], min(PAGE, L - j * PAGE)
                nxt += 1
                table[b, j] = p
                Kc[p, :, :valid] = torch.randn(HKV, valid, D, generator=gen).to(torch.bfloat16)
                Vc[p, :, :valid] = torch.randn(HKV, valid, D, generator=gen).to(torch.bfloat16)
        # the last key of each sequence is made to dominate query head 0's scores (k = 3 q): a kernel
        # that drops it (an off-by-one at a tile, page or split edge) moves the output far outside
        # the tolerance, whatever the length (the self-test below checks that it would)
        for b, L in enumerate(lens):
            if L:
                p = int(table[b, (L - 1) // PAGE])
                Kc[p, :, (L - 1) % PAGE] = (q[b, :, 0].float() * 3).to(torch.bfloat16)
        scale = 1.0 / math.sqrt(D)
        chunk = max(BT, math.ceil(math.ceil(max(lens) / NS) / BT) * BT)

        def reference(lens_used):
            out = torch.zeros(B, HKV, G, D, dtype=torch.float64)
            for b, L in enumerate(lens_used):
                if L == 0:
                    continue
                pg = table[b, :math.ceil(L / PAGE)].long()
                k = Kc[pg].double().permute(1, 0, 2, 3).reshape(HKV, -1, D)[:, :L]
                v = Vc[pg].double().permute(1, 0, 2, 3).reshape(HKV, -1, D)[:, :L]
                s = torch.einsum("hgd,hld->hgl", q[b].double(), k) * scale
                out[b] = torch.einsum("hgl,hld->hgd", torch.softmax(s, -1), v)
            return out

        ref = reference(lens)
        dev = lambda t: t.cuda()
        dq, dK, dV, dT = dev(q), dev(Kc), dev(Vc), dev(table)
        dL = dev(torch.tensor(lens, dtype=torch.int32))
        opart = torch.full((B * HKV, NS, G, D), nan, device="cuda")
        lse = torch.full((B * HKV, NS, G), nan, device="cuda")
        o = torch.full((B, HKV, G, D), nan, dtype=torch.bfloat16, device="cuda")
        launch(kdec, [dq, dK, dV, dT, dL, opart, lse, scale, chunk])
        launch(kcomb, [opart, lse, o])
        got = o.double().cpu()
        name = "case %d B=%d HKV=%d G=%d PAGE=%d BT=%d lens=%s NS=%d chunk=%d" % (ci, B, HKV, G, PAGE, BT, lens, NS, chunk)

        def within(want):
            rn = (got - want).norm() / max(want.norm(), 1e-30)
            ma = (got - want).abs().max() / max(want.abs().max(), 1e-30)
            return bool(torch.isfinite(got).all()) and rn <= 1e-2 and ma <= 3e-2, float(rn), float(ma)

        ok, rn, ma = within(ref)
        mutated = [max(0, L - 1) for L in lens]
        caught = not within(reference(mutated))[0]
        print("%s %s: relerr %.2e, max err %.2e of max |ref|; without the last key caught: %s"
              % ("ok" if ok and caught else "FAIL", name, rn, ma, caught))
        fails += not (ok and caught)
        # the contiguous-cache kernel on the same keys and values, [B, HKV, S, D], NaN past the ends
        S = max(lens) + 5
        kk = torch.full((B, HKV, S, D), nan, dtype=torch.bfloat16)
        vv = torch.full((B, HKV, S, D), nan, dtype=torch.bfloat16)
        for b, L in enumerate(lens):
            if L:
                pg = table[b, :math.ceil(L / PAGE)].long()
                kk[b, :, :L] = Kc[pg].permute(1, 0, 2, 3).reshape(HKV, -1, D)[:, :L]
                vv[b, :, :L] = Vc[pg].permute(1, 0, 2, 3).reshape(HKV, -1, D)[:, :L]
        paged_opart, paged_lse = opart.cpu(), lse.cpu()
        opart.fill_(nan); lse.fill_(nan); o.fill_(nan)
        launch(kcont, [dq, dev(kk), dev(vv), dL, opart, lse, scale, chunk])
        launch(kcomb, [opart, lse, o])
        got = o.double().cpu()
        okc, rnc, mac = within(ref)
        print("%s %s contig: relerr %.2e, max err %.2e of max |ref|" % ("ok" if okc else "FAIL", name, rnc, mac))
        fails += not okc
        # attn_decode_fused: one launch, the last program of a head merging (atomic_fetch_add); the
        # scratch poisoned before every launch (a merge that read a partial before it was visible
        # would read NaN), launched REPS times on the same counts (each launch leaves them 0) and
        # bit-identical every time (the merge order is the splits', whichever program is last)
        fop = torch.empty((B * HKV, NS, G, D), device="cuda")
        flse = torch.empty((B * HKV, NS, G), device="cuda")
        count = torch.zeros(B * HKV, dtype=torch.int32, device="cuda")
        first, same, okf = None, True, True
        for rep in range(int(os.environ.get("TEST_DECODE_REPS", "20"))):
            fop.fill_(nan); flse.fill_(nan); o.fill_(nan)
            launch(kfused, [dq, dK, dV, dT, dL, fop, flse, o, count, scale, chunk])
            got = o.double().cpu()
            first = got if first is None else first
            same = same and bool(torch.equal(got, first))
            okr, rnf, maf = within(ref)
            okf = okf and okr
        zero = int(count.abs().sum()) == 0
        print("%s %s fused: relerr %.2e, max err %.2e of max |ref|, bit-identical over the launches %s, counts 0 %s"
              % ("ok" if okf and same and zero else "FAIL", name, rnf, maf, same, zero))
        fails += not (okf and same and zero)
        if ci == 0:  # the interpreter, the project's oracle, on the smallest case
            iopart = torch.full((B * HKV, NS, G, D), nan)
            ilse = torch.full((B * HKV, NS, G), nan)
            interpret(kdec, [q, Kc, Vc, table, torch.tensor(lens, dtype=torch.int32), iopart, ilse, scale, chunk])
            fin = torch.isfinite(ilse)  # -inf for empty splits on both
            e1 = float((paged_opart - iopart).norm() / iopart.norm())
            same_inf = bool((torch.isfinite(paged_lse) == fin).all())
            e2 = float((paged_lse[fin] - ilse[fin]).norm() / max(ilse[fin].norm(), 1e-30))
            iok = e1 <= 2e-3 and e2 <= 2e-3 and same_inf
            print("%s interpreter vs GPU, case 0: Opart %.2e, Lse %.2e, same empty splits %s"
                  % ("ok" if iok else "FAIL", e1, e2, same_inf))
            fails += not iok
    print("test_decode: %d passed, %d failed" % (3 * len(cases) + 1 - fails, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
