# fp8_probe.py: fp8 e4m3 GEMM forms of examples/gemm_fp8.tile (cutlass_gemm_fp8_tn, B stored [N, K];
# cutlass_gemm_fp8_nn, B stored [K, N]) beside cuBLAS fp8 (torch._scaled_mm, TN, accurate and fast
# accumulation) in one process (issue 10 item 5).  Each form is (label, kernel, environment switches,
# -D defines, options, fast): checked on a NaN-poisoned bf16 output against the f32 product of the
# fp8 operands, then cuBLAS accurate, cuBLAS fast and every form timed in rotated rounds after a
# warm-up (bench.py bench_rounds); a promote form's ratio is to cuBLAS accurate, a fast form's to
# cuBLAS fast (like for like: docs/pipelines.md "fp8 accumulation").
#   python3 bench/fp8_probe.py --lib LIB [--sizes 4096,8192] [--forms NAME,...] [--rounds R]
import argparse, os, sys

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--sizes", default="4096,8192")
ap.add_argument("--forms", default="")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--warm-ms", type=float, default=1000)
ap.add_argument("--transpose", action="store_true",
                help="also time the K-major-B form's transpose kernel alone beside torch's transposed copy")
a = ap.parse_args()
os.environ["TILEC_CACHE"] = "0"  # (options are not in every cache key)
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, with_env, relerr, bench_rounds

OV = "TILEC_PROMOTE_OVERLAP=1"
W8 = {"warps": 8}
W4S3 = {"warps": 4, "stages": 3}
FORMS = {  # name: (kernel, env, defines, options, fast); "tn" = the example's default: the target's tile
           # (eighteenth session, ARCH_SPECIFIC: 128x256 x 4 stages on sm_90a; before, 128x128 x 5, 8 warps,
           # cooperative: "tn 128x128 s5", and "tn arch0" = -D ARCH_SPECIFIC=0, the same kernel; the other
           # TN forms pin BN = 128 (and S = 5) where their label says so); "tn ring 64x128 w4 s3" = the default before
    "tn": ("cutlass_gemm_fp8_tn", "", {}, {}, False),
    "tn noconv": ("cutlass_gemm_fp8_tn", "TILEC_WARP_CONVERGE=0", {}, {}, False),  # (twenty-sixth session)
    "tn 128x128 s5": ("cutlass_gemm_fp8_tn", "", {"BN": 128, "S": 5}, {}, False),
    "tn arch0": ("cutlass_gemm_fp8_tn", "", {"ARCH_SPECIFIC": 0}, {}, False),
    "tn+ov": ("cutlass_gemm_fp8_tn", OV, {"BN": 128, "S": 5}, {}, False),
    "tn ring": ("cutlass_gemm_fp8_tn", "TILEC_WS=off", {"BN": 128, "S": 5}, {}, False),
    "tn s6": ("cutlass_gemm_fp8_tn", "", {"BN": 128}, {"stages": 6}, False),
    "tn ring 64x128 w4 s3": ("cutlass_gemm_fp8_tn", "", {"BM": 64, "BN": 128}, W4S3, False),
    "tn ring 64x128 w4 s3+ov": ("cutlass_gemm_fp8_tn", OV, {"BM": 64, "BN": 128}, W4S3, False),
    "tn pingpong 64x128 w4 s3": ("cutlass_gemm_fp8_tn", "TILEC_WS=pingpong", {"BM": 64, "BN": 128}, W4S3, False),
    "tn pingpong 64x128 w4 s6": ("cutlass_gemm_fp8_tn", "TILEC_WS=pingpong", {"BM": 64, "BN": 128}, {"warps": 4, "stages": 6}, False),
    # (the TMA ring: the default route of fast on 8 warps until the eighteenth session; since fp8coop a
    # fast TN dot at 128x256 takes the cooperative kernel by default, so the ring is asked for)
    "tn fast 128x256 w8 s4": ("cutlass_gemm_fp8_tn", "TILEC_WS=off", {"BM": 128, "BN": 256}, {"fp8-acc": "fast", "warps": 8, "stages": 4}, True),
    # eighteenth session (fp8coop): the target's tile (128x256 s4 on sm_90a) by the default route --
    # fast: cooperative, promote: cooperative -- and each forced onto the TMA ring (TILEC_WS=off)
    "tn fast": ("cutlass_gemm_fp8_tn", "", {}, {"fp8-acc": "fast"}, True),
    "tn fast ring": ("cutlass_gemm_fp8_tn", "TILEC_WS=off", {}, {"fp8-acc": "fast"}, True),
    "tn ring 128x256 s4": ("cutlass_gemm_fp8_tn", "TILEC_WS=off", {}, {}, False),
    # sixteenth session (fp8p6): TILEC_PROMOTE_PARTS=1, 256x128 / 128x256 promote tiles on the
    # cooperative kernel (each warpgroup's 128 accumulator registers promoted a 64x128 part at a time,
    # a one-part temporary: 229 registers, no spills), 4 stages of 48 KiB; "tn 256x128 s4" the same
    # tile without parts (a whole-accumulator temporary: ptxas spills 456 B); the fast forms on the
    # cooperative kernel at 128x128 (what the tile alone reaches without the promotion) and 128x256
    "tn parts 256x128 s4": ("cutlass_gemm_fp8_tn", "TILEC_PROMOTE_PARTS=1", {"BM": 256, "BN": 128}, {"stages": 4}, False),
    "tn parts 128x256 s4": ("cutlass_gemm_fp8_tn", "TILEC_PROMOTE_PARTS=1", {"BN": 256}, {"stages": 4}, False),
    "tn 256x128 s4": ("cutlass_gemm_fp8_tn", "", {"BM": 256, "BN": 128}, {"stages": 4}, False),
    "tn fast 128x128 coop s5": ("cutlass_gemm_fp8_tn", "TILEC_WS=coop", {"BN": 128, "S": 5}, {"fp8-acc": "fast"}, True),
    "tn fast 128x256 coop s4": ("cutlass_gemm_fp8_tn", "TILEC_WS=coop", {"BN": 256}, {"fp8-acc": "fast", "stages": 4}, True),
    # the bytes a FLOP again: a 2-CTA cluster multicasting the larger box (256x128: A along program_id(1),
    # 1x2; 128x256: BT along program_id(0), 2x1) halves it at the CTA; fast at 256x128 (m64n128, two
    # 64-row blocks a warpgroup) beside fast 128x256 (m64n256)
    "tn parts 256x128 s4 c1x2": ("cutlass_gemm_fp8_tn", "TILEC_PROMOTE_PARTS=1+TILEC_CLUSTER=1x2", {"BM": 256, "BN": 128}, {"stages": 4}, False),
    "tn fast 256x128 coop s4": ("cutlass_gemm_fp8_tn", "TILEC_WS=coop", {"BM": 256, "BN": 128}, {"fp8-acc": "fast", "stages": 4}, True),
    # ping-pong on a 128x128 tile a warpgroup (4 warps, parts: 128 accumulator registers + 64): the
    # epilogue under the other warpgroup's main loop, but each main loop's promotion stops exposed
    "tn pingpong 128x128 w4 s6 parts": ("cutlass_gemm_fp8_tn", "TILEC_PROMOTE_PARTS=1+TILEC_WS=pingpong", {"BM": 128, "BN": 128}, {"warps": 4, "stages": 6}, False),
    "tn fast 128x256 s4 c2x1": ("cutlass_gemm_fp8_tn", "TILEC_CLUSTER=2x1", {"BN": 256}, {"fp8-acc": "fast", "stages": 4}, True),
    # twenty-eighth session: fast accumulation on the ping-pong kernel, a 128x128 tile a warpgroup (128 accumulator
    # registers, 168 at entry, 0 spills): each epilogue under the other warpgroup's main loop, where the cooperative
    # 128x256 kernel stops the tensor cores for it (~4 % of a 4096^3 tile's time by the 4096 / 8192 gap)
    "tn fast pingpong 128x128 w4 s4": ("cutlass_gemm_fp8_tn", "TILEC_WS=pingpong", {"BM": 128, "BN": 128}, {"fp8-acc": "fast", "warps": 4, "stages": 4}, True),
    "tn fast pingpong 128x128 w4 s5": ("cutlass_gemm_fp8_tn", "TILEC_WS=pingpong", {"BM": 128, "BN": 128}, {"fp8-acc": "fast", "warps": 4, "stages": 5}, True),
    # nn: the example's default (tenth session: 128x128x128, 8 warps, 4 stages, cooperative, the
    # producer warpgroup transposing B); "nn tr0" the same tile with the consumers' transpose on the
    # TMA ring; "nn old 64x128 w4 s3" the default before
    "nn": ("cutlass_gemm_fp8_nn", "", {}, {}, False),
    # the K-major-B form (fourteenth session, lib/kmajor_b.h): "nn" at M > 128 is now the transpose
    # kernel into a workspace + the form (the TN loop on it, 4 stages: the kernel's @stages);
    # "nn kview" B passed K-major (BT.t(): the form on B itself, no transpose); "nn inkernel" the
    # form off (the tenth session's default: the producer's transpose); "nn s5" the form at 5
    # stages (TN's); "nn tr nopad" / "nn tr bytes" the transpose kernel with its staging rows
    # unpadded (TILEC_TRANSFER_PAD=0) / its stores one byte each (TILEC_STORE_TRANS=0); "tn s4" TN
    # at the form's stages
    "nn kview": ("cutlass_gemm_fp8_nn", "", {}, {}, False),
    # twenty-first session (fp8nn4): the form at TN's sm_90a tile (128x256 x 4, passes/kmajor_form.c)
    # by default; "... tile0" the form at the kernel's tile as before (TILEC_KMAJOR_B_TILE=0: 128x128
    # x 4, = "tn 128x128 s4"); "nn fast" below is the fast form (the cooperative kernel at 128x256)
    "nn tile0": ("cutlass_gemm_fp8_nn", "TILEC_KMAJOR_B_TILE=0", {}, {}, False),
    "nn kview tile0": ("cutlass_gemm_fp8_nn", "TILEC_KMAJOR_B_TILE=0", {}, {}, False),
    "nn fast tile0": ("cutlass_gemm_fp8_nn", "TILEC_KMAJOR_B_TILE=0", {}, {"fp8-acc": "fast"}, True),
    "tn 128x128 s4": ("cutlass_gemm_fp8_tn", "", {"BN": 128, "S": 4}, {}, False),
    "nn inkernel": ("cutlass_gemm_fp8_nn", "TILEC_KMAJOR_B=0", {}, {}, False),
    "nn s5": ("cutlass_gemm_fp8_nn", "TILEC_KMAJOR_B_STAGES=5", {}, {}, False),
    "nn tr nopad": ("cutlass_gemm_fp8_nn", "TILEC_TRANSFER_PAD=0", {}, {}, False),
    "nn tr bytes": ("cutlass_gemm_fp8_nn", "TILEC_STORE_TRANS=0", {}, {}, False),
    "tn s4": ("cutlass_gemm_fp8_tn", "", {"BN": 128}, {"stages": 4}, False),
    # the transpose kernel at other tiles / persistent with loads ahead (TILEC_KMAJOR_B_TRANSPOSE)
    "nn t128x64": ("cutlass_gemm_fp8_nn", "TILEC_KMAJOR_B_TRANSPOSE=128x64", {}, {}, False),
    "nn t64x64/3": ("cutlass_gemm_fp8_nn", "TILEC_KMAJOR_B_TRANSPOSE=64x64/3", {}, {}, False),
    "nn t128x64/3": ("cutlass_gemm_fp8_nn", "TILEC_KMAJOR_B_TRANSPOSE=128x64/3", {}, {}, False),
    "nn tr0": ("cutlass_gemm_fp8_nn", "TILEC_WS_TRANSPOSE=0", {}, {}, False),
    "nn plain": ("cutlass_gemm_fp8_nn", "TILEC_WS_TRANSPOSE=plain", {}, {}, False),
    "nn s3": ("cutlass_gemm_fp8_nn", "", {}, {"stages": 3}, False),
    "nn old 64x128 w4 s3": ("cutlass_gemm_fp8_nn", "", {"BM": 64}, W4S3, False),
    "nn p80": ("cutlass_gemm_fp8_nn", "TILEC_WS_PRODUCER_REGS=80", {}, {}, False),
    "nn p120": ("cutlass_gemm_fp8_nn", "TILEC_WS_PRODUCER_REGS=120", {}, {}, False),
    # fast on 8 warps: the TMA ring by default (the consumers transpose), TILEC_WS=coop the producer's
    # transpose (tenth session: 1.04x / 0.98x of the ring at 4096^3 / 8192^3)
    "nn fast": ("cutlass_gemm_fp8_nn", "", {}, {"fp8-acc": "fast"}, True),
    "nn fast coop": ("cutlass_gemm_fp8_nn", "TILEC_WS=coop", {}, {"fp8-acc": "fast"}, True),
    "nn+ov": ("cutlass_gemm_fp8_nn", OV, {}, {}, False),
    "nn 128x128 w8+ov": ("cutlass_gemm_fp8_nn", OV, {"BM": 128}, W8, False),
    "nn fast 128x128 w8 s4": ("cutlass_gemm_fp8_nn", "", {"BM": 128}, {"fp8-acc": "fast", "warps": 8, "stages": 4}, True),
    # bench/variants/gemm_fp8_blockscale_128.tile (the example until the twenty-fifth session: 1x128
    # activation, 128x128 weight scales, a 128x128 tile; ratio to cuBLAS
    # accurate per-tensor, checked against the f32 sum of the scaled block products): its default
    # (64x128 on 4 warps, 3 stages, the TMA ring) and 128x128 on the cooperative kernel
    # (eleventh session: the default is 128x128 w8 s5 on the cooperative kernel, the scales loaded
    # under each k-step's wgmma group (TILEC_UNDER_WGMMA=0: after its wait), the scaled product added by
    # fma(); "bs mul" the same with `acc + p * s` (bench/variants/gemm_fp8_blockscale_mul.tile))
    "bs": ("cutlass_gemm_fp8_blockscale", "", {}, {}, False),
    "bs under0": ("cutlass_gemm_fp8_blockscale", "TILEC_UNDER_WGMMA=0", {}, {}, False),
    "bs mul": ("cutlass_gemm_fp8_blockscale", "", {}, {}, False, "bench/variants/gemm_fp8_blockscale_mul.tile"),
    "bs prefetch": ("cutlass_gemm_fp8_blockscale", "", {}, {}, False, "bench/variants/gemm_fp8_blockscale_prefetch.tile"),
    "bs ring": ("cutlass_gemm_fp8_blockscale", "", {"BM": 64}, W4S3, False),
    "bs ring mul": ("cutlass_gemm_fp8_blockscale", "", {"BM": 64}, W4S3, False, "bench/variants/gemm_fp8_blockscale_mul.tile"),
    "bs 128x128 w8 s4": ("cutlass_gemm_fp8_blockscale", "", {"BM": 128}, {"warps": 8, "stages": 4}, False),
    "bs 128x128 w8 s5": ("cutlass_gemm_fp8_blockscale", "", {"BM": 128}, {"warps": 8, "stages": 5}, False),
    # eighteenth session (scalepipe): the compiler does what "bs prefetch" does by hand -- the scale
    # loads of k-block kb + 1 issued during k-step kb and carried (TILEC_LOAD_AHEAD=1,
    # passes/load_ahead.c).  (The seventeenth session's L1 prefetch of the scales D k-steps ahead,
    # "bs pf1/4/8/16", "bs pf8 next", lost and was removed: docs/decisions.md.)
    "bs ahead": ("cutlass_gemm_fp8_blockscale", "TILEC_LOAD_AHEAD=1", {}, {}, False),
    # twenty-second session (bscale2): the blockscale GEMM on the per-tensor kernel's sm_90a tile,
    # 128x256 x 4 (examples/gemm_fp8_blockscale.tile since the twenty-fifth session: a column's weight
    # scale a gather over (n0 + iota) / 128) under TILEC_GATHER_RUNS=1 (passes/gather_runs.c: two scalar loads and a select
    # on iota, folded per register; 0 spills); "bs where" the select written by hand (the same SASS up
    # to register numbers); "bs wide off" the gather as written (64 loads a thread a k-step, spills)
    "bs wide": ("cutlass_gemm_fp8_blockscale", "TILEC_GATHER_RUNS=1", {}, {}, False, "examples/gemm_fp8_blockscale.tile"),
    "bs where": ("cutlass_gemm_fp8_blockscale", "", {}, {}, False, "bench/variants/gemm_fp8_blockscale_where.tile"),
    "bs wide off": ("cutlass_gemm_fp8_blockscale", "TILEC_GATHER_RUNS=0", {}, {}, False, "examples/gemm_fp8_blockscale.tile"),
    # timing only (a different product, so its err is large): the wide kernel with the scales loaded once
    # before the loop -- the per-tensor k-loop with 128 FFMA for 128 FADD; tn < fixed < wide splits the cost
    "bs wide fixed": ("cutlass_gemm_fp8_blockscale", "TILEC_GATHER_RUNS=1", {}, {}, False, "bench/variants/gemm_fp8_blockscale_wide_fixed.tile"),
    # twenty-fourth session: each in the CLI's offline form (`tma-fallback=inline`: the cp.async copy and the
    # register epilogue in the same kernel, what `tilec F.tile -o F.ptx` and the AOT launchers hold), where
    # ptxas 13.0 spills 212 B of the wide kernel's consumer (10 accumulator registers in its main loop) and
    # none of the 128x128 example's or of the per-tensor tile's: what those spills cost when timed
    "bs wide inline": ("cutlass_gemm_fp8_blockscale", "", {}, {"tma-fallback": "inline"}, False, "examples/gemm_fp8_blockscale.tile"),
    "bs inline": ("cutlass_gemm_fp8_blockscale", "", {}, {"tma-fallback": "inline"}, False),
    "tn inline": ("cutlass_gemm_fp8_tn", "", {}, {"tma-fallback": "inline"}, False),
}
names = [f for f in a.forms.split(",") if f] or list(FORMS)

ks = {}
for n in names:
    kn, env, d, o, fast = FORMS[n][:5]
    src = os.path.join(os.path.dirname(here), FORMS[n][5]) if len(FORMS[n]) > 5 else \
        (os.path.join(os.path.dirname(here), "bench/variants/gemm_fp8_blockscale_128.tile") if "blockscale" in kn
         else ex("gemm_fp8.tile"))
    try:
        ks[n] = with_env(env, lambda: Kernel(src, d, kernel=kn, options=o))
    except Exception as e:
        print(f"{n}: compile FAILED {str(e)[:400]}", flush=True)

out = []
for s in a.sizes.split(","):
    N = int(s)
    A = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
    BT = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)  # [N, K]
    B = BT.t().contiguous()                                          # [K, N]
    one = torch.tensor(1.0, device="cuda")
    ref = A.float() @ BT.float().t()
    fl = 2 * N ** 3
    fs = [lambda: torch._scaled_mm(A, BT.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=False),
          lambda: torch._scaled_mm(A, BT.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=True)]
    errs, done = [], []
    refbs = None
    if any("blockscale" in FORMS[n][0] for n in names):
        KB = N // 128
        SA = torch.rand(N, KB, device="cuda") + 0.5
        SW = torch.rand(N // 128, KB, device="cuda") + 0.5
        refbs = blockscale_ref(A, BT, SA, SW)
    for n in names:
        if n not in ks: continue
        kn, env, d, o, fast = FORMS[n][:5]
        Cout = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        if "blockscale" in kn:
            fs.append(ks[n].bind(A, BT, SA, SW, Cout))
        else:
            bv = BT if kn.endswith("_tn") else BT.t() if n.startswith("nn kview") else B
            fs.append(ks[n].bind(A, bv, Cout, 0.5, 2.0))
        fs[-1](); torch.cuda.synchronize()
        errs.append(relerr(Cout, refbs if "blockscale" in kn else ref)); done.append(n)
    times = bench_rounds(fs, a.rounds, a.warm_ms)
    t_ref = {False: median(times[0]), True: median(times[1])}
    for n, ts, err in zip(done, times[2:], errs):
        fast = FORMS[n][4]
        t = median(ts)
        rr = sorted(r / x for r, x in zip(times[1 if fast else 0], ts))
        out.append((f"{N}^3", n, t, fl / t / 1e9, "fast" if fast else "accurate", fl / t_ref[fast] / 1e9, err, rr[0], rr[-1]))
        print(f"{N}^3 {n}: {t*1e3:.1f} us {fl/t/1e9:.1f} TFLOP/s ({t_ref[fast]/t:.3f} cuBLAS "
              f"{'fast' if fast else 'accurate'}; rounds {rr[0]:.3f}..{rr[-1]:.3f}) err {err:.1e}", flush=True)

tr_rows = []
if a.transpose:
    # the transpose kernel alone (bench/variants/transpose_kn.tile: lib/api/forms.c's transpose_source
    # for f8e4m3) under its switches, beside torch's copy of B.t() (uint8), GB/s of 2 K N bytes
    # (and at other tiles than the form's 64x64)
    tvs = {"(default, 64x64)": ("", {}, {}), "TILEC_TRANSFER_PAD=0": ("TILEC_TRANSFER_PAD=0", {}, {}),
           "TILEC_STORE_TRANS=0": ("TILEC_STORE_TRANS=0", {}, {}), "TK 128 TN 64": ("", {"TK": 128, "TN": 64}, {}),
           "TK 64 TN 128": ("", {"TK": 64, "TN": 128}, {}), "TK 128 TN 128": ("", {"TK": 128, "TN": 128}, {}),
           "64x64 stages 2 (row_stream)": ("", {}, {"stages": 2}), "64x64 stages 3 (row_stream)": ("", {}, {"stages": 3}),
           "128x64 stages 3 (row_stream)": ("", {"TK": 128, "TN": 64}, {"stages": 3})}
    src = os.path.join(here, "variants", "transpose_kn.tile")
    trs = {lbl: with_env(env, lambda: Kernel(src, d, kernel="tilec_transpose_kn", options=o))
           for lbl, (env, d, o) in tvs.items()}
    for s in a.sizes.split(","):
        N = int(s)
        X = torch.randint(0, 256, (N, N), device="cuda", dtype=torch.uint8)
        Y = torch.zeros(N, N, device="cuda", dtype=torch.uint8)
        fs = [lambda: X.t().contiguous()]
        for env, k in trs.items():
            fs.append(k.bind(X.view(torch.float8_e4m3fn), Y.view(torch.float8_e4m3fn)))
        oks = []
        for f in fs[1:]:
            Y.zero_()
            f(); torch.cuda.synchronize()
            oks.append(torch.equal(Y, X.t()))
        times = bench_rounds(fs, a.rounds, 200)
        tt = median(times[0])
        tr_rows.append((N, "torch B.t().contiguous()", tt, 2 * N * N / tt / 1e6, 1.0, ""))
        for (env, k), ts, ok in zip(trs.items(), times[1:], oks):
            t = median(ts)
            tr_rows.append((N, "tilec_transpose_kn " + env, t, 2 * N * N / t / 1e6, tt / t,
                            "exact" if ok else "WRONG"))
    print("\n| N = K | transpose | us | GB/s | x torch | check |\n|---|---|---|---|---|---|")
    for N, n, t, gbs, r, chk in tr_rows:
        print(f"| {N} | {n} | {t*1e3:.1f} | {gbs:.0f} | {r:.3f} | {chk} |")

print("\n| shape | form | us | TFLOP/s | cuBLAS fp8 | its TFLOP/s | ratio | ratio a round | rel.err |\n|---|---|---|---|---|---|---|---|---|")
for s, n, t, v, which, r, e, lo, hi in out:
    print(f"| {s} | {n} | {t*1e3:.1f} | {v:.1f} | {which} | {r:.1f} | {v/r:.3f} | {lo:.3f}..{hi:.3f} | {e:.1e} |")
