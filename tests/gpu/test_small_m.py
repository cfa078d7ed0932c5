#!/usr/bin/env python3
"""test_small_m.py: the small-M forms of a cutlass GEMM kernel (passes/small_m.c, docs/small_m.md) on
the GPU.  One kernel is loaded (examples/gemm.tile's cutlass_gemm, B [K, N]; gemm_bias_gelu.tile's
cutlass_linear_bias_gelu, nn.Linear storage W [N, K] with its fused epilogue); each launch picks the
form its M falls in (the 16-row mma.sync form, the 64x64x128 wgmma form, the 64x128 one, the kernel
itself; and, loaded under TILEC_SMALL_M_FORMS=SPLIT_FORMS, the split-K forms),
so the M list crosses every boundary of the default table: M = 1, 3, 16, 17, 63, 64, 65, 127, 128, 129,
255, 256, 257 (the split-K forms at M = 17..128: SPLIT as the launcher picks it, and forced to 7 with
TILEC_SMALL_M_SPLIT, uneven splits and an empty one, at K = 1000);
N and K are not multiples of any form's tiles (N = 328, K = 1000 and 264, one K step of a 256-K
form plus a ragged one; the split forms' workspace grows with M).  The same kernel with the forms off
(disable-pass small_m) is checked too, at K = 264.

Each output is poisoned with NaN before the launch, compared with an fp64 reference of the bf16
inputs and with tilec's CPU interpreter (which runs the kernel's source, not a form).
Tolerances (bf16 output of an f32 accumulation): |C - ref| <= 2^-8 |ref| + (K + 1) 2^-23 sum_k |a b|
+ 1e-6 elementwise (GELU: its f32 formula evaluated in fp64 on the fp64 product; 2^-7 |ref| + the
same accumulation term, the approximate sigmoid's exp2 and division add a few f32 ulps).
Self-test: each result against the reference without the last K column must fail (the K tail is
summed).

  python3 tests/gpu/test_small_m.py [--lib build/libtilec.so] [--examples examples]
Exit 0 pass, 1 fail, 77 no GPU / no torch.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_py import examples_dir, start  # noqa: E402

MS = [1, 3, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257]
# the split-K forms (no longer in the default table, tenth session): a 64x64x128 split form (a streamed A
# in [K/64][M][64] atoms) at M = 17..64 and the ninth session's 64x128x64 split form at 65..128
SPLIT_FORMS = "16=16x32x256/multistage/5,64=64x64x128/cutlass/6/split,128=64x128x64/cutlass/6/split,256=64x128x64/cutlass/6"


def main():
    env = start("test_small_m")
    if env is None:
        return 77
    torch, tilec = env
    gen = torch.Generator(device="cpu").manual_seed(int(os.environ.get("TILEC_SEED", "20261202")))
    print("test_small_m: seed", gen.initial_seed())
    ex = examples_dir()
    fails = 0
    progs = {}
    for name, file, kname in (("gemm", "gemm.tile", "cutlass_gemm"),
                              ("linear_gelu", "gemm_bias_gelu.tile", "cutlass_linear_bias_gelu")):
        for mode in ("on", "off", "split"):
            opts = {"disable_pass": "small_m"} if mode == "off" else {}
            # (the caller's TILEC_SMALL_M_FORMS, if any, is the "on" table: a proposed default is checked so)
            outer = os.environ.get("TILEC_SMALL_M_FORMS")
            if mode == "split":
                os.environ["TILEC_SMALL_M_FORMS"] = SPLIT_FORMS
            try:
                prog = tilec.compile(os.path.join(ex, file), **opts)
                k = prog[kname]
                k.load()
            finally:
                if outer is None:
                    os.environ.pop("TILEC_SMALL_M_FORMS", None)
                else:
                    os.environ["TILEC_SMALL_M_FORMS"] = outer
            if name == "gemm":  # (the PTX and ptxas -v of a copy: a second or two each)
                line = [l for l in prog.explain().splitlines() if l.startswith("small_m:")]
                has = bool(line) and "a launch picks its form by M" in line[0]
                print("%s %s: %s" % (name, mode, line[0][:300] if line else "no small_m line"))
                if has != (mode != "off"):
                    print("FAIL: the small_m line does not say the forms are %s" % mode)
                    fails += 1
            progs[(name, mode)] = k

    def gelu64(x):
        return x / (1 + torch.exp(-1.5957691216 * (x + 0.044715 * x ** 3)))

    for K in (1000, 264):
        N = 328
        for M in MS:
            a = (torch.rand(M, K, generator=gen) * 2 - 1).to(torch.bfloat16)
            b = (torch.rand(K, N, generator=gen) * 2 - 1).to(torch.bfloat16)
            w = (torch.rand(N, K, generator=gen) * 2 - 1).to(torch.bfloat16)
            bias = (torch.rand(N, generator=gen) * 2 - 1).to(torch.bfloat16)
            for name in ("gemm", "linear_gelu"):
                if name == "gemm":
                    ref = a.double() @ b.double()
                    mag = a.double().abs() @ b.double().abs()
                    short = a[:, :-1].double() @ b[:-1, :].double()
                    args = [a, b]
                    rel = 2 ** -8
                else:
                    x = a.double() @ w.double().t() + bias.double()
                    ref = gelu64(x)
                    mag = a.double().abs() @ w.double().abs().t() + bias.double().abs()
                    short = gelu64(a[:, :-1].double() @ w[:, :-1].double().t() + bias.double())
                    args = [a, w, bias]
                    rel = 2 ** -7
                tol = rel * ref.abs() + (K + 1) * 2.0 ** -23 * mag + 1e-6

                def within(got, want):
                    d = (got.double() - want).abs()
                    return bool(torch.isfinite(got.double()).all()) and bool((d <= tol).all()), float(d.max())

                ci = torch.full((M, N), float("nan"), dtype=torch.bfloat16)
                tilec.interpret(progs[(name, "on")], *args, ci)
                iok, ierr = within(ci, ref)
                # "split7": the forms with SPLIT forced to 7 at launch (K = 1000: 16 k-steps of 64 in
                # splits of 3, the seventh empty), so uneven and empty splits are summed too
                # the forms off (the 128x256 kernel at every M; other tests cover it): the gemm at K = 264
                modes = ("on", "split", "split7") if K == 1000 else ("on", "off", "split") if name == "gemm" else ("on", "split")
                for mode in modes:
                    c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                    if mode == "split7":
                        os.environ["TILEC_SMALL_M_SPLIT"] = "7"
                    try:
                        progs[(name, {"off": "off", "split": "split", "split7": "split"}.get(mode, "on"))](
                            *[t.cuda() for t in args], c)
                    finally:
                        os.environ.pop("TILEC_SMALL_M_SPLIT", None)
                    torch.cuda.synchronize()
                    got = c.cpu()
                    ok, err = within(got, ref)
                    caught = not within(got, short)[0]
                    vs_interp = float((got.double() - ci.double()).abs().max()) if iok else math.nan
                    good = ok and caught and iok
                    fails += not good
                    print("%s %s M=%d N=%d K=%d forms %s: max err %.2e (interpreter %s, %.2e; |gpu - interpreter| "
                          "%.2e); K tail caught: %s" % ("ok" if good else "FAIL", name, M, N, K, mode, err,
                                                        "ok" if iok else "FAIL", ierr, vs_interp, caught), flush=True)
    print("test_small_m: %s" % ("PASS" if not fails else "%d FAILED" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
