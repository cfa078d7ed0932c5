# bench/attn_ab.py: the attention forward against cuDNN SDPA and FA2 (SDPA flash) in rotated rounds, one
# process (bench.py's bench_rounds: cuDNN warmed to a steady clock first, then each round times every fn once,
# the order rotated), so the ratio to cuDNN is the median of per-round ratios, not of two back-to-back medians
# (bench.py's attn section: the H100 moved one kernel by up to 5 % between neighbouring timings, bench/RESULTS.md
# "twenty-sixth session").  bench.py's shapes: H = 2048 / D, Z = 16384 / S.  Every tilec form checked against
# float32 SDPA first (rel. err printed).  --interleave 1 (the default since the twenty-eighth session): bench.py's
# bench_interleaved (launch by launch in a round, each launch between its own events after an L2 flush); on the
# forward (H100, bench/pending_remeasure.sh) its rounds spread +-0.3 % where the blocks' (--interleave 0) spread
# -8..+14 % on the same cases, the medians within 1 % at S1k and 4 % at S16k (bench/RESULTS.md twenty-eighth session).
# --triton 1 (the default since the thirtieth session): bench.py's plain FA2-form Triton kernel (triton_attn, at the tile
# the anchors found best) in the same rounds, for issue 11's ">= 1.2x Triton" (S a multiple of 128; else "-").
#   python3 bench/attn_ab.py --lib LIB [--cases D:S:CAUSAL,...] [--forms default,NAME@VAR=VAL...] [--rounds 7] [--triton 0]
import argparse, os, sys, statistics

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--cases", default=",".join(f"{d}:{s}:{c}" for d in (64, 128) for s in (1024, 4096, 16384) for c in (0, 1)))
ap.add_argument("--forms", default="default",
                help="default, or tokens joined by @: TILEC_X=V (a switch), NAME=V (a tile constant), warps=N / stages=N")
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--warm-ms", type=int, default=300)
ap.add_argument("--triton", type=int, default=1, help="1 (default): a plain Triton kernel in the rounds too (x Triton column)")
ap.add_argument("--interleave", type=int, default=1,
                help="1 (default): bench.py's bench_interleaved (the fns launch by launch in each round); 0: bench_rounds")
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
os.environ["BENCH_INTERLEAVE"] = str(a.interleave)  # (bench_rounds reads it: 1 bench_interleaved)
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, ex, bench_rounds, relerr, torch
from torch.nn.attention import sdpa_kernel, SDPBackend
import torch.nn.functional as F

forms = a.forms.split(",")
print("| case | form | tilec ms | TFLOP/s | x cuDNN (rounds) | x FA2 | rel.err | x Triton |\n|---|---|---|---|---|---|---|---|",
      flush=True)
for case in a.cases.split(","):
    D, S, causal = (int(x) for x in case.split(":"))
    H = 2048 // D; Z = max(1, 16384 // S)
    q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
    kk = torch.randn_like(q); v = torch.randn_like(q)
    ref = F.scaled_dot_product_attention(q.float(), kk.float(), v.float(), is_causal=bool(causal))
    def sdpa(be):
        def f():
            with sdpa_kernel(be):
                F.scaled_dot_product_attention(q, kk, v, is_causal=bool(causal))
        return f
    fns, errs = [sdpa(SDPBackend.CUDNN_ATTENTION), sdpa(SDPBackend.FLASH_ATTENTION)], []
    if a.triton and S % 128 == 0:  # (bench.py's attn section: BM 128; BN 128 at D128 full, else 64; 4 warps at D64 causal;
        # D256: 2 stages, so its slots fit; a kernel Triton cannot build gives no column)
        tbn, tw, to = 128 if (D == 128 and not causal) else 64, 4 if (D == 64 and causal) else 8, torch.empty_like(q)
        tst = 2 if D > 128 else 3
        tf = lambda: triton_attn[(S // 128, Z * H)](q, kk, v, to, D ** -0.5, S, H, q.stride(0), q.stride(1), q.stride(2),
                                                    BM=128, BN=tbn, D=D, CAUSAL=bool(causal), num_warps=tw, num_stages=tst)
        try:
            tf(); torch.cuda.synchronize()
            print(f"  (Triton D{D} S{S} causal={causal}: BN {tbn}, {tw} warps, {tst} stages, rel. err {relerr(to, ref):.1e})",
                  flush=True)
            fns.append(tf)
        except Exception as e:
            print(f"  (Triton D{D} S{S} causal={causal}: not built: {str(e).splitlines()[0][:120]})", flush=True)
    base = len(fns)  # (the tilec forms' first index)
    for form in forms:
        # a form's tokens (joined by "@"): TILEC_X=V an environment switch, NAME=V in capitals a tile constant
        # (-D), warps=N / stages=N an option
        toks = [x.split("=", 1) for x in form.split("@") if "=" in x]
        env = {n_: v_ for n_, v_ in toks if n_.startswith("TILEC_")}
        defs = {n_: int(v_) for n_, v_ in toks if not n_.startswith("TILEC_") and n_.isupper()}
        opts = {n_: v_ for n_, v_ in toks if n_.islower()}
        os.environ.update(env)
        try:  # (through the first launch: a form picked at launch compiles then, reading the switches)
            k = Kernel(ex("attn.tile"), {"D": D, "CAUSAL": causal, **defs}, kernel="cutlass_attn_fwd",
                       options=opts or None)
            o = torch.full_like(q, float("nan"))
            f = k.bind(q, kk, v, o, D ** -0.5)
            f(); torch.cuda.synchronize()
        finally:
            for e in env: os.environ.pop(e, None)
        errs.append(relerr(o, ref)); fns.append(f)
    t = bench_rounds(fns, a.rounds, a.warm_ms)
    fl = 4 * Z * H * S * S * D / (2 if causal else 1)
    for i, form in enumerate(forms):
        r = [t[0][j] / t[base + i][j] for j in range(a.rounds)]
        r2 = [t[1][j] / t[base + i][j] for j in range(a.rounds)]
        r3 = [t[2][j] / t[base + i][j] for j in range(a.rounds)] if base > 2 else None
        ms = statistics.median(t[base + i])
        print(f"| D{D} S{S} {'causal' if causal else 'full'} | {form} | {ms:.3f} | {fl / ms / 1e9:.1f} | "
              f"{statistics.median(r):.3f} ({min(r):.3f}..{max(r):.3f}) | {statistics.median(r2):.3f} | {errs[i]:.1e} | "
              f"{'%.3f' % statistics.median(r3) if r3 else '-'} |", flush=True)
