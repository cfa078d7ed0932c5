#!/usr/bin/env python3
"""test_w4a16_packed.py: examples/gemm_w4a16_packed.tile on the GPU (nineteenth session, branch w4a16e):
w4a16_repack (GPTQ words -> the fragment order) against the same permutation in torch, bit for bit;
gemm_w4a16_packed (unsplit, bf16 C) and gemm_w4a16_packed_merge (split-K, the last program of a tile
merging the partials: bf16 C, no zeroed output) against an fp64 reference computed from the GPTQ words
and, on the smaller cases, against tilec's CPU interpreter; and gemm_w4a16_packed_merge_sz (S and Z as one
word, packed by w4a16_pack_sz, checked bit for bit), in five forms:

  halves     TILEC_DEQUANT_BF16X2=1: a pair by `word >> 4p`, lop3 and two bf16x2 fmas (the halves form)
  shift      TILEC_DEQUANT_BF16X2=1 TILEC_DEQUANT_HALVES=0: the same pair by two shifts and a prmt
  f32        the default (I2F, FFMA, F2F pack)
  staged-sz  as halves without TILEC_FRAG_SHARED_LOAD: the _sz kernel's B staged through shared memory
  off        TILEC_PROLOGUE=0 (no operand prologue: the loads in the loop)
(halves, shift and f32 with TILEC_FRAG_SHARED_LOAD=1: the _sz kernel's B in its fragments; the other
kernels' code does not depend on it.)

Cases as tests/gpu/test_w4a16.py's: the shipped tiles and small ones (BM 16, BN 16, BK 32, G 64, SPLIT 4),
M = 1, 17, 33 (ragged rows), N = 64, 37, 130 (rows not 16-byte aligned), K of 1 to 41 K steps, splits
without a K step.  Random inputs (every nibble 0..15), C and the scratch P poisoned with NaN, Count zeros
once per case: the merge kernel runs twice on the same Count (the first launch must leave it zeros) and
must give the same bits both times (the partials are summed in split order).

Tolerances (test_w4a16.py's): |C - ref| <= 2^-8 |ref| + (K + 1) 2^-23 sum_k |a w| elementwise; the
reference with the last group's zero points moved by 4 must fail (the check can fail).

  python3 tests/gpu/test_w4a16_packed.py [--lib build/libtilec.so] [--examples examples]
Exit 0 pass, 1 fail, 77 no GPU / no torch.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_py import examples_dir, start  # noqa: E402
from w4a16_ref import gemm_within, gptq_case, gptq_reference  # noqa: E402

FORMS = {
    "halves": {"TILEC_DEQUANT_BF16X2": "1", "TILEC_FRAG_SHARED_LOAD": "1"},
    "shift": {"TILEC_DEQUANT_BF16X2": "1", "TILEC_DEQUANT_HALVES": "0", "TILEC_FRAG_SHARED_LOAD": "1"},
    "f32": {"TILEC_FRAG_SHARED_LOAD": "1"},
    "staged-sz": {"TILEC_DEQUANT_BF16X2": "1"},  # the _sz kernel's B staged (TILEC_FRAG_SHARED_LOAD unset)
    "off": {"TILEC_PROLOGUE": "0"},
}


def repack(torch, wq):
    """GPTQ words [K / 8, N] -> the packed order (gemm_w4a16_packed.tile's header), in torch."""
    KW, N = wq.shape
    K = KW * 8
    k = torch.arange(K)
    nib = (wq.repeat_interleave(8, 0) >> (4 * (k % 8)).view(K, 1)) & 15          # q[k, n]
    row = 4 * (k // 32) + (k % 8) // 2
    sh = 4 * ((k // 8) % 4) + 16 * (k % 2)
    out = torch.zeros(KW, N, dtype=torch.int64)
    out.index_add_(0, row, nib.long() << sh.view(K, 1))
    out = out & 0xFFFFFFFF
    return torch.where(out >= 2 ** 31, out - 2 ** 32, out).to(torch.int32)


def main():
    env = start("test_w4a16_packed")
    if env is None:
        return 77
    torch, tilec = env
    src = os.path.join(examples_dir(), "gemm_w4a16_packed.tile")
    gen = torch.Generator(device="cpu").manual_seed(int(os.environ.get("TILEC_SEED", "20261205")))
    print("test_w4a16_packed: seed", gen.initial_seed())

    def load(defines, form):
        sw = FORMS[form]
        os.environ.update(sw)
        try:
            prog = tilec.compile(src, defines=defines)
            ks = {n: prog[n] for n in ("w4a16_repack", "gemm_w4a16_packed", "gemm_w4a16_packed_merge", "w4a16_pack_sz",
                                       "gemm_w4a16_packed_merge_sz")}
            for k in ks.values():
                k.load()  # compiled now, while the switches are set (they are in the kernel cache key)
            return ks, prog.explain()
        finally:
            for n in sw:
                os.environ.pop(n, None)

    shipped = {}
    small = {"BM": 16, "BN": 16, "BK": 32, "G": 64, "SPLIT": 4, "BR": 8}
    # (tiles, G, M, N, K, interpreter too)
    cases = [
        (shipped, 128, 1, 64, 128, True),
        (shipped, 128, 17, 130, 640, True),
        (shipped, 128, 16, 4096, 5248, False),
        (shipped, 128, 33, 37, 1024, True),
        (shipped, 128, 1, 256, 4096, False),
        (small, 64, 1, 37, 128, True),
        (small, 64, 17, 15, 1344, True),
        (small, 64, 5, 64, 64, True),
        (small, 64, 3, 130, 2624, False),
    ]
    fails = 0
    kernels = {}
    for form in FORMS:
        for ci, (tiles, G, M, N, K, interp) in enumerate(cases):
            key = (tuple(sorted(tiles.items())), form)
            if key not in kernels:
                kernels[key] = load(tiles, form)
                ex = kernels[key][1]
                streams = ex.count("b computed from 3 streamed loads") == 2
                print("tiles %s %s: route_pipeline says %s" % (tiles or "shipped", form, "a prologue" if streams else "no prologue"))
                if streams != (form != "off") or (ex.count("b computed from 2 streamed loads") == 1) != (form != "off"):
                    print("FAIL: --explain does not match TILEC_PROLOGUE\n" + ex)
                    fails += 1
            ks = kernels[key][0]
            BM, BN = tiles.get("BM", 16), tiles.get("BN", 128)
            SPLIT = tiles.get("SPLIT", 8)
            KW, NG = K // 8, K // G
            a, wq, s, z = gptq_case(torch, gen, M, N, K, G)
            name = "%s case %d tiles %s G=%d M=%d N=%d K=%d" % (form, ci, tiles or "shipped", G, M, N, K)

            # 1. the repack on the GPU, bit for bit
            wp_ref = repack(torch, wq)
            wp = torch.full((KW, N), 0x5A5A5A5A, dtype=torch.int32, device="cuda")
            ks["w4a16_repack"](wq.cuda(), wp)
            torch.cuda.synchronize()
            rok = bool((wp.cpu() == wp_ref).all())
            fails += not rok
            print("%s repack %s" % ("ok" if rok else "FAIL", name), flush=True)

            ref, mag = gptq_reference(torch, a, wq, s, z, G)
            z2 = z.clone()
            z2[-1] += 4.0
            ref2 = gptq_reference(torch, a, wq, s, z2, G)[0]

            def within(got, want):
                return gemm_within(torch, got, want, mag, K)

            # 2. the unsplit kernel
            ad, wpd, sd, zd = a.cuda(), wp_ref.cuda(), s.cuda(), z.cuda()
            c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            ks["gemm_w4a16_packed"](ad, wpd, sd, zd, c)
            torch.cuda.synchronize()
            got = c.cpu()
            ok, err = within(got, ref)
            caught = not within(got, ref2)[0]
            msg = "%s unsplit %s: max err %.2e; changed zero points caught: %s" % ("ok" if ok and caught else "FAIL", name, err, caught)
            fails += not (ok and caught)
            if interp and form != "off":
                ci_ = torch.full((M, N), float("nan"), dtype=torch.bfloat16)
                tilec.interpret(ks["gemm_w4a16_packed"], a, wp_ref, s, z, ci_)
                iok, ierr = within(ci_, ref)
                msg += "; interpreter %s (max err %.2e, max |gpu - interpreter| %.2e)" % (
                    "ok" if iok else "FAIL", ierr, float((got.double() - ci_.double()).abs().max()))
                fails += not iok
            print(msg, flush=True)

            # 3. the merge kernel: twice on one Count, the same bits both times, Count left zeros
            T = -(-M // BM) * -(-N // BN)
            P = torch.full((SPLIT, M, N), float("nan"), dtype=torch.float32, device="cuda")
            cnt = torch.zeros(T, dtype=torch.int32, device="cuda")
            outs = []
            for _ in range(2):
                cm = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                ks["gemm_w4a16_packed_merge"](ad, wpd, sd, zd, P, cm, cnt)
                torch.cuda.synchronize()
                outs.append(cm.cpu())
            mok, merr = within(outs[0], ref)
            mcaught = not within(outs[0], ref2)[0]
            same = bool((outs[0].view(torch.int16) == outs[1].view(torch.int16)).all())
            zeros = bool((cnt.cpu() == 0).all())
            good = mok and mcaught and same and zeros
            msg = "%s merge %s SPLIT %d: max err %.2e; changed zero points caught: %s; second launch same bits: %s; Count left zeros: %s" % (
                "ok" if good else "FAIL", name, SPLIT, merr, mcaught, same, zeros)
            fails += not good
            if interp and form != "off":
                ci_ = torch.full((M, N), float("nan"), dtype=torch.bfloat16)
                Pi = torch.full((SPLIT, M, N), float("nan"), dtype=torch.float32)
                ci0 = torch.zeros(T, dtype=torch.int32)
                tilec.interpret(ks["gemm_w4a16_packed_merge"], a, wp_ref, s, z, Pi, ci_, ci0)
                iok, ierr = within(ci_, ref)
                iok = iok and bool((ci0 == 0).all())
                msg += "; interpreter %s (max err %.2e, max |gpu - interpreter| %.2e)" % (
                    "ok" if iok else "FAIL", ierr, float((outs[0].double() - ci_.double()).abs().max()))
                fails += not iok
            print(msg, flush=True)

            # 4. the _sz merge: (s, z) packed into one word on the GPU, then the same checks; its bits
            # against the merge kernel's (the same arithmetic in the same order: reported, not required)
            szt = torch.full((NG, N), 0x5A5A5A5A, dtype=torch.int32, device="cuda")
            ks["w4a16_pack_sz"](sd, zd, szt)
            torch.cuda.synchronize()
            sz_ref = (s.view(torch.int16).int() & 0xFFFF) | (z.view(torch.int16).int() << 16)
            zok = bool((szt.cpu() == sz_ref).all())
            fails += not zok
            P.fill_(float("nan"))
            zouts = []
            for _ in range(2):
                cm = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                ks["gemm_w4a16_packed_merge_sz"](ad, wpd, szt, P, cm, cnt)
                torch.cuda.synchronize()
                zouts.append(cm.cpu())
            mok, merr = within(zouts[0], ref)
            mcaught = not within(zouts[0], ref2)[0]
            same = bool((zouts[0].view(torch.int16) == zouts[1].view(torch.int16)).all())
            zeros = bool((cnt.cpu() == 0).all())
            as_merge = bool((zouts[0].view(torch.int16) == outs[0].view(torch.int16)).all())
            good = zok and mok and mcaught and same and zeros
            print("%s merge_sz %s SPLIT %d: pack_sz bit for bit: %s; max err %.2e; changed zero points caught: %s; second "
                  "launch same bits: %s; Count left zeros: %s; the merge kernel's bits: %s" % (
                      "ok" if good else "FAIL", name, SPLIT, zok, merr, mcaught, same, zeros, as_merge), flush=True)
            fails += not good
    print("test_w4a16_packed: %s" % ("PASS" if not fails else "%d FAILED" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
