# bench/rows64_ab.py (thirty-ninth session): route_pipeline's rows-64 rule -- a cutlass GEMM on sm_90a whose dots have
# 64 rows gets one warpgroup (wgmma.m64n256) where 8 warps fell to mma.sync -- on (TILEC_ROWS64=1, opt-in until this
# runs) and off (the option warps=8, what the rule replaces), beside cuBLAS (torch.matmul; fp8: torch._scaled_mm, fast accumulation off) and the
# plain 128x256 cutlass_gemm of examples/gemm.tile, interleaved rounds (bench.py bench_interleaved; ratios the median of
# per-round ratios).  Outputs poisoned with NaN and checked against fp32 torch first.
#   python3 bench/rows64_ab.py --lib LIB [--sizes 8192x8192x8192,4096x4096x4096,512x4096x14336] [--rounds 5]
import argparse, os, sys, statistics
ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--sizes", default="8192x8192x8192,4096x4096x4096,512x4096x14336")
ap.add_argument("--rounds", type=int, default=5)
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, bench_interleaved, relerr, torch
F = os.path.join(here, "variants", "gemm_rows64.tile")
bf, f8 = torch.bfloat16, torch.float8_e4m3fn
print("| dtype | MxNxK | 4 warps (rule) ms | TFLOP/s | rule / 8 warps | rule x cuBLAS | rel. err 4 / 8 warps |")
print("|---|---|---|---|---|---|---|", flush=True)
for size in a.sizes.split(","):
    M, N, K = (int(x) for x in size.split("x"))
    for dt in ("bf16", "fp8"):
        A = torch.randn(M, K, device="cuda")
        B = torch.randn(N, K, device="cuda")
        if dt == "fp8":
            A, B = (A * 0.5).to(f8), (B * 0.5).to(f8)
            one = torch.ones((), device="cuda")
            ref = A.float() @ B.float().t()
            cb = lambda: torch._scaled_mm(A, B.t(), scale_a=one, scale_b=one, out_dtype=bf)
        else:
            A, B = A.to(bf), B.to(bf)
            ref = A.float() @ B.float().t()
            cout = torch.empty(M, N, device="cuda", dtype=bf)
            cb = lambda: torch.matmul(A, B.t(), out=cout)
        outs = [torch.full((M, N), float("nan"), device="cuda", dtype=bf) for _ in range(2)]
        fns = []
        for i, opt in enumerate((None, {"warps": 8})):
            kern = with_env("TILEC_ROWS64=1", lambda: Kernel(F, kernel=f"cutlass_rows64_{dt}", options=opt))
            fns.append(kern.bind(A, B, outs[i]))
        fns.append(cb)
        for fn in fns: fn()
        torch.cuda.synchronize()
        e = [relerr(o.float(), ref) for o in outs]
        t = bench_interleaved(fns, a.rounds, 300)
        med = lambda i: statistics.median(t[i])
        rat = lambda i: statistics.median([x / y for x, y in zip(t[i], t[0])])  # time of i / time of the rule
        print(f"| {dt} | {size} | {med(0):.3f} | {2 * M * N * K / med(0) / 1e9:.0f} | {rat(1):.3f} | {rat(2):.3f} | "
              f"{e[0]:.1e} / {e[1]:.1e} |", flush=True)
