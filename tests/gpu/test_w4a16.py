#!/usr/bin/env python3
"""test_w4a16.py: examples/gemm_w4a16.tile (int4 weights, group-wise scale and zero) on the GPU, with
its operand prologue (the packed words and the scale/zero rows streamed through the cp.async ring,
dequantized between shared memory and the staging; docs/pipelines.md "Operand prologues"), the same
with B computed in its mma.sync fragments (the default since the eighth session; TILEC_PROLOGUE_FRAG=0 off: no staging store, barrier
or ldmatrix of B; docs/pipelines.md "B in its fragments"; its pairs dequantized by the magic-number unpack and bf16x2 fmas, the default
since the fifteenth session (a word's byte a pair; with its two shifts, TILEC_DEQUANT_BYTE=0), and in f32 with
TILEC_DEQUANT_BF16X2=0), the default with the cp.async ring's stages past the loop not copied ("frag-range":
TILEC_RING_IN_RANGE=1, twenty-fifth session), and without the prologue (TILEC_PROLOGUE=0), against an fp64 reference and, on the
smaller cases, against tilec's CPU interpreter; the split-K kernel of the same file (gemm_w4a16_splitk) on the same cases
(at the bench's BN 128 x8 too: programs of 0, 1, 2 and 4 K steps).
Then the two-kernel path for large M (two_kernels below): examples/w4a16_dequant.tile writing W bf16 [K, N],
then examples/gemm.tile's cutlass_gemm on it.

Cases: the shipped tiles (BM 16, BN 64, BK 128, G 128) and small ones (BM 16, BN 16, BK 32, G 64:
boxes of fewer 16-byte chunks than threads), K of 1 to 41 K steps (the ring wraps many times), M =
1, 17, 33 (ragged rows), N = 64, 37, 130 (rows of Wq / S / Z not 16-byte aligned: the element copy of
the ring), the last K group partly outside (K % G != 0 is not allowed by the kernel, K = G * groups).
Random inputs (every nibble 0..15), outputs poisoned with NaN.

Tolerances: the reference dequantizes exactly as the kernel (q * s - z in f32, rounded to bf16, as the
interpreter's unit test does), the product in fp64; the kernel accumulates in f32 and rounds C to
bf16: |C - ref| <= 2^-8 |ref| + (K + 1) 2^-23 sum_k |a w| elementwise (split-K, f32 C: without the
first term).  Interpreter: the same bound.
Self-test: the reference of the same inputs with the last K group's zero points moved by 4 must fail.

  [TEST_W4A16_PART=two|fused] [TEST_W4A16_MODES=frag,frag-range] python3 tests/gpu/test_w4a16.py [--lib build/libtilec.so]
      [--examples examples]
Exit 0 pass, 1 fail, 77 no GPU / no torch.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_py import examples_dir, start  # noqa: E402
from w4a16_ref import gemm_within, gptq_case, gptq_reference  # noqa: E402


def main():
    env = start("test_w4a16")
    if env is None:
        return 77
    torch, tilec = env
    src = os.path.join(examples_dir(),
                       "gemm_w4a16.tile")
    gen = torch.Generator(device="cpu").manual_seed(int(os.environ.get("TILEC_SEED", "20261201")))
    print("test_w4a16: seed", gen.initial_seed())

    def load(defines, mode):
        os.environ["TILEC_PROLOGUE"] = "0" if mode == "off" else "1"  # on by default; every form tested
        # the default: B computed in its mma.sync fragments (no staging, tests/lit w4a16-frag.test);
        # "prologue" is the staged form (TILEC_PROLOGUE_FRAG=0)
        os.environ["TILEC_PROLOGUE_FRAG"] = "1" if mode.startswith("frag") else "0"
        # "frag" dequantizes each B pair by the magic-number unpack and bf16x2 fmas (opt-in, TILEC_DEQUANT_BF16X2=1,
        # tests/lit w4a16-bf16x2.test); "frag-f32" in f32 (=0, as the default)
        os.environ["TILEC_DEQUANT_BF16X2"] = "0" if mode == "frag-f32" else "1"
        # "frag-shift": bf16x2 with the two shifts a pair (TILEC_DEQUANT_BYTE=0), not the byte form
        os.environ["TILEC_DEQUANT_BYTE"] = "0" if mode == "frag-shift" else "1"
        # "frag-range": the default form with the cp.async ring's stages past the loop not copied
        # (TILEC_RING_IN_RANGE=1, tests/lit ring-in-range.test): split-K programs of 0..few K steps
        os.environ["TILEC_RING_IN_RANGE"] = "1" if mode == "frag-range" else "0"
        try:
            prog = tilec.compile(src, defines=defines)
            k, ks = prog["gemm_w4a16"], prog["gemm_w4a16_splitk"]
            k.load()  # compiled now, while the switch is set (it is in the kernel cache key)
            ks.load()
            return k, prog.explain(), ks
        finally:
            os.environ.pop("TILEC_PROLOGUE", None)
            os.environ.pop("TILEC_PROLOGUE_FRAG", None)
            os.environ.pop("TILEC_DEQUANT_BF16X2", None)
            os.environ.pop("TILEC_DEQUANT_BYTE", None)
            os.environ.pop("TILEC_RING_IN_RANGE", None)

    shipped = {}
    small = {"BM": 16, "BN": 16, "BK": 32, "G": 64}
    bm32 = {"BM": 32}  # warps 2 x 2: the frag form's B fragments replicated over the warps along M
    # the bench's split-K tile (BN 128, x8): at K = 640 programs of 1 K step and 3 of none (k_lo >= K), at
    # K = 4096 4 K steps on the 4-stage ring, at K = 1408 (11 steps) 2 and 1
    sk8 = {"BN": 128, "SPLIT": 8}
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
        (bm32, 128, 33, 130, 640, True),
        (bm32, 128, 7, 200, 1408, True),
        (sk8, 128, 5, 200, 640, True),
        (sk8, 128, 16, 4096, 4096, False),
        (sk8, 128, 1, 130, 1408, True),
    ]
    fails = 0
    kernels = {}
    # TEST_W4A16_PART=two: the two-kernel path alone (a pending script's short run); =fused: the fused kernels alone
    part = os.environ.get("TEST_W4A16_PART", "")
    # TEST_W4A16_MODES=frag,frag-range: those forms alone (a pending script's short run)
    modes = [m for m in os.environ.get("TEST_W4A16_MODES", "").split(",") if m] or \
        ["prologue", "frag", "frag-shift", "frag-f32", "frag-range", "off"]
    for mode in modes if part != "two" else ():
        prologue = mode != "off"
        for ci, (tiles, G, M, N, K, interp) in enumerate(cases):
            key = (tuple(sorted(tiles.items())), mode)
            if key not in kernels:
                kernels[key] = load(tiles, mode)
                ex = kernels[key][1]
                streams = ex.count("b computed from 3 streamed loads") == 2
                print("tiles %s %s: route_pipeline says %s" % (tiles or "shipped", mode,
                      "a prologue" if streams else "no prologue"))
                if streams != prologue:
                    print("FAIL: --explain does not match TILEC_PROLOGUE\n" + ex)
                    fails += 1
            k = kernels[key][0]
            a, wq, s, z = gptq_case(torch, gen, M, N, K, G)

            def reference(zz):
                return gptq_reference(torch, a, wq, s, zz, G)

            ref, mag = reference(z)
            acc_tol = (K + 1) * 2.0 ** -23  # f32 accumulation over K products (the unit test's bound)

            def within(got, want):
                return gemm_within(torch, got, want, mag, K)

            c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            k(a.cuda(), wq.cuda(), s.cuda(), z.cuda(), c)
            torch.cuda.synchronize()
            got = c.cpu()
            ok, err = within(got, ref)
            z2 = z.clone()
            z2[-1] += 4.0
            caught = not within(got, reference(z2)[0])[0]
            name = "%s case %d tiles %s G=%d M=%d N=%d K=%d" % (mode, ci, tiles or "shipped", G, M, N, K)
            msg = "%s %s: max err %.2e; changed zero points caught: %s" % ("ok" if ok and caught else "FAIL", name, err, caught)
            fails += not (ok and caught)
            if interp and prologue:
                ci_ = torch.full((M, N), float("nan"), dtype=torch.bfloat16)
                tilec.interpret(k, a, wq, s, z, ci_)
                iok, ierr = within(ci_, ref)
                same = float((got.double() - ci_.double()).abs().max())
                msg += "; interpreter %s (max err %.2e, max |gpu - interpreter| %.2e)" % ("ok" if iok else "FAIL", ierr, same)
                fails += not iok
            print(msg, flush=True)
            # the split-K kernel (C f32, zeros on entry, partial sums added atomically)
            ks = kernels[key][2]
            cs = torch.zeros((M, N), dtype=torch.float32, device="cuda")
            ks(a.cuda(), wq.cuda(), s.cuda(), z.cuda(), cs)
            torch.cuda.synchronize()
            d = (cs.cpu().double() - ref).abs()
            sok = bool(torch.isfinite(cs).all()) and bool((d <= acc_tol * mag + 1e-6).all())
            d2 = (cs.cpu().double() - reference(z2)[0]).abs()
            scaught = not bool((d2 <= acc_tol * mag + 1e-6).all())
            print("%s splitk %s: max err %.2e; changed zero points caught: %s" % ("ok" if sok and scaught else "FAIL", name,
                  float(d.max()), scaught), flush=True)
            fails += not (sok and scaught)
    if part != "fused":
        fails += two_kernels(torch, tilec, gen)
    print("test_w4a16: %s" % ("PASS" if not fails else "%d FAILED" % fails))
    return 1 if fails else 0


def round_once_bf16(torch, r):
    """The bf16 nearest to each f64 value of r (ties to even), as f32: one rounding, independent of the code
    under test (r = q s - z is exact in f64; torch's f64 -> bf16 may go through f32)."""
    m, e = torch.frexp(r)  # r = m 2^e, 0.5 <= |m| < 1: 8 significant bits are round(m 2^8) (half to even)
    return (torch.round(m * 256.0) * torch.pow(2.0, (e - 8).double())).float()  # exact: a power of two times 8 bits


def two_kernels(torch, tilec, gen):
    """The path for large M (docs/pipelines.md "W4A16 at large M"): w4a16_dequant writes W = dequant(Wq) as bf16
    [K, N] (viewed [K / 8, 8, N]), cutlass_gemm multiplies A @ W.  Checks, on random data plus crafted ties (columns
    3 and 4 mod 32: q = 3, s = 1 + 2^-7, z = +-2^-40, where rounding q s - z once and rounding it through f32 differ
    in column 3):
    * W (ROUND=1, the default) bit for bit against the correctly rounded q s - z (round_once_bf16, from f64), and
      against torch's formula (q s - z in f32, then bf16) everywhere but the crafted ties;
    * W bit for bit against what gemm_w4a16 (its default dequantization, bf16x2, and the BM128 BN128 tile of large M)
      feeds its mma: gemm_w4a16 with A = the identity (M = K) gives C = W exactly, the fused form at every M; at
      M >= 256 the default (the materialize-once form) gives ROUND=0's W, the source's f32 rounding;
    * ROUND=0 equal to torch's formula bit for bit, and different from the single rounding on the crafted column (the
      self-test: the data reach the case the nudge is for);
    * C = cutlass_gemm(A, W) against the fp64 product within the bound of the fused kernel's checks, and a zero point
      moved by 4 in the last group caught.
    Poisoned outputs (NaN); N ragged (37, 130: rows of Wq / S / Z / W not 16-byte aligned), K not a multiple of G."""
    fails = 0
    src = os.path.join(examples_dir(), "w4a16_dequant.tile")
    gemm = tilec.compile(os.path.join(examples_dir(), "gemm.tile"))["cutlass_gemm"]
    fsrc = os.path.join(examples_dir(), "gemm_w4a16.tile")
    # (each twice: "fused" loaded with TILEC_HOIST_OPERAND_MIN_M out of reach, so every M runs the kernel itself
    # and its bf16x2 dequantization; the default, whose launches at M >= 256 run the materialize-once form)
    fused = {(G, tag, form): tilec.compile(fsrc, defines=dict(d, G=G, BK=min(G, 128)))["gemm_w4a16"]
             for G in (64, 128) for tag, d in (("shipped tiles", {}), ("BM128 BN128", {"BM": 128, "BN": 128}))
             for form in ("fused", "default")}
    deq = {}
    # (G, M, N, K): K % G != 0 in the fourth (gemm_w4a16 takes no partial group: no identity check there)
    for G, M, N, K in ((128, 1, 64, 128), (128, 17, 130, 640), (64, 33, 37, 1344), (128, 300, 512, 680),
                       (128, 257, 1024, 2048), (64, 64, 4096, 512)):
        NG = -(-K // G)
        for rnd in (1, 0):
            if (G, rnd) not in deq:
                deq[(G, rnd)] = tilec.compile(src, defines={"G": G, "ROUND": rnd})["w4a16_dequant"]
        a = (torch.rand(M, K, generator=gen) * 2 - 1).to(torch.bfloat16)
        wq = torch.randint(-2 ** 31, 2 ** 31 - 1, (K // 8, N), generator=gen, dtype=torch.int32)
        s = (torch.rand(NG, N, generator=gen) * 0.09 + 0.01).to(torch.bfloat16)
        z = (torch.rand(NG, N, generator=gen) - 0.5).to(torch.bfloat16)
        tie = torch.zeros(N, dtype=torch.bool)
        for j in range(3, N, 32):
            for t in range(2):
                if j + t < N:
                    s[:, j + t] = 1.0078125
                    z[:, j + t] = -2.0 ** -40 if t else 2.0 ** -40
                    wq[:, j + t] = 0x33333333
                    tie[j + t] = True
        shifts = (4 * (torch.arange(K) % 8)).view(K, 1)
        q = (wq.repeat_interleave(8, 0) >> shifts) & 15
        srep, zrep = s.repeat_interleave(G, 0)[:K], z.repeat_interleave(G, 0)[:K]
        once = round_once_bf16(torch, q.double() * srep.double() - zrep.double()).to(torch.bfloat16)
        twice = (q.float() * srep.float() - zrep.float()).to(torch.bfloat16)
        name = "two-kernel G=%d M=%d N=%d K=%d" % (G, M, N, K)
        w = {}
        for rnd in (1, 0):
            wd = torch.full((K, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            deq[(G, rnd)](wq.cuda(), s.cuda(), z.cuda(), wd.view(K // 8, 8, N))
            torch.cuda.synchronize()
            w[rnd] = wd.cpu()
        bits = lambda x: x.view(torch.int16)
        d_once = int((bits(w[1]) != bits(once)).sum())
        d_torch = int((bits(w[1]) != bits(twice))[:, ~tie].sum())
        d_r0 = int((bits(w[0]) != bits(twice)).sum())
        crafted = int((bits(w[0]) != bits(once)).sum())
        ok = d_once == 0 and d_torch == 0 and d_r0 == 0 and (N <= 3 or crafted >= K)
        print("%s %s: W ROUND=1 vs once-rounded %d differ, vs torch's formula off the ties %d; ROUND=0 vs torch %d; "
              "ROUND=0 vs once %d (crafted ties, >= %d wanted)" % ("ok" if ok else "FAIL", name, d_once, d_torch, d_r0,
                                                                 crafted, K if N > 3 else 0), flush=True)
        fails += not ok
        if K % G == 0:  # what gemm_w4a16 feeds its mma: A = I gives C = W (one product a sum, exact)
            eye = torch.eye(K, dtype=torch.bfloat16).cuda()
            for tag in ("shipped tiles", "BM128 BN128"):
                for form in ("fused", "default"):
                    kf = fused[(G, tag, form)]
                    # the fused kernel rounds q s - z once (bf16x2 fma: W ROUND=1); the materialize-once form's
                    # pre-kernel (M = K >= 256 by default) computes the source's f32 expression, rounded twice as
                    # the interpreter rounds it (W ROUND=0): the two differ only on the crafted ties
                    # (docs/decisions.md "The materialize-once form's W")
                    want, wname = (w[0], "ROUND=0") if form == "default" and K >= 256 else (w[1], "ROUND=1")
                    if form == "fused":
                        os.environ["TILEC_HOIST_OPERAND_MIN_M"] = str(2 ** 40)  # (read at the kernel's load)
                    cf = torch.full((K, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                    try:
                        kf(eye, wq.cuda(), s.cuda(), z.cuda(), cf)
                    finally:
                        os.environ.pop("TILEC_HOIST_OPERAND_MIN_M", None)
                    torch.cuda.synchronize()
                    dd = int((bits(cf.cpu()) != bits(want)).sum())
                    print("%s %s: W %s vs gemm_w4a16 (%s, %s) with A = I: %d differ" % (
                        "ok" if dd == 0 else "FAIL", name, wname, tag, form, dd), flush=True)
                    fails += dd != 0
        ref = a.double() @ once.double()
        mag = a.double().abs() @ once.double().abs()
        acc_tol = (K + 1) * 2.0 ** -23
        c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
        gemm(a.cuda(), w[1].cuda(), c)
        torch.cuda.synchronize()
        got = c.cpu().double()
        d = (got - ref).abs()
        cok = bool(torch.isfinite(got).all()) and bool((d <= 2 ** -8 * ref.abs() + acc_tol * mag + 1e-6).all())
        z2 = zrep.double().clone()
        z2[(NG - 1) * G:] += 4.0
        ref2 = a.double() @ round_once_bf16(torch, q.double() * srep.double() - z2).to(torch.bfloat16).double()
        caught = not bool(((got - ref2).abs() <= 2 ** -8 * ref2.abs() + acc_tol * mag + 1e-6).all())
        print("%s %s: C = cutlass_gemm(A, W) max err %.2e; changed zero points caught: %s" % (
            "ok" if cok and caught else "FAIL", name, float(d.max()), caught), flush=True)
        fails += not (cok and caught)
    return fails


if __name__ == "__main__":
    sys.exit(main())
