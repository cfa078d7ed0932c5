# bench/rope_ab.py: RoPE fused into attention (examples/attn_rope.tile's cutlass_attn_rope_fwd and variant files of
# the same signature) against the plain forward on pre-rotated q, k (attn.tile's cutlass_attn_fwd) and the unfused
# pair (rope.tile on q and k, then cutlass_attn_fwd), in interleaved rounds of one process (bench.py's
# bench_rounds), every output checked against float32 SDPA on q, k rotated in float32 and rounded to bf16 first.
# bench.py's shapes: H = 2048 / D, Z = 16384 / S, q/k/v stored [Z, S, H, D] (tokens-major) and viewed [Z, H, S, D].
#   python3 bench/rope_ab.py --lib LIB [--cases D:S:CAUSAL,...] [--forms default,FILE[@stages=N],...] [--rounds 7]
import argparse, os, sys, statistics

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--cases", default="128:1024:1,128:4096:1,128:4096:0")
ap.add_argument("--forms", default="default", help="default (examples/attn_rope.tile), or a .tile path; @stages=N / @warps=N options")
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--warm-ms", type=int, default=300)
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, ex, bench_rounds, relerr, rope_case, torch
import torch.nn.functional as F

forms = a.forms.split(",")
print("| case | form | ms | x plain (rounds) | x pair | rel.err |\n|---|---|---|---|---|---|", flush=True)
for case in a.cases.split(","):
    D, S, causal = (int(x) for x in case.split(":"))
    H = 2048 // D; Z = max(1, 16384 // S)
    qs, ks, vs, q, kk, v, cs, sn, qr, kr = rope_case(Z, H, S, D)  # (bench.py's)
    ref = F.scaled_dot_product_attention(qr.float(), kr.float(), v.float(), is_causal=bool(causal))
    o0 = torch.empty_like(q)
    plain = Kernel(ex("attn.tile"), {"D": D, "CAUSAL": causal}, kernel="cutlass_attn_fwd").bind(qr, kr, v, o0, D ** -0.5)
    rk = Kernel(ex("rope.tile"), {"D": D, "HALF": D // 2}, "rope")
    q2s, k2s, o1 = torch.empty_like(qs), torch.empty_like(ks), torch.empty_like(q)
    csz, snz = cs.repeat(Z, 1), sn.repeat(Z, 1)
    ropes = [rk.bind(x.view(Z * S, H, D), csz, snz, y.view(Z * S, H, D)) for x, y in ((qs, q2s), (ks, k2s))]
    att = Kernel(ex("attn.tile"), {"D": D, "CAUSAL": causal}, kernel="cutlass_attn_fwd").bind(
        q2s.permute(0, 2, 1, 3), k2s.permute(0, 2, 1, 3), v, o1, D ** -0.5)
    def pair():
        for r in ropes: r()
        att()
    fns, errs = [plain, pair], []
    for form in forms:
        toks = form.split("@")
        path = ex("attn_rope.tile") if toks[0] == "default" else toks[0]
        opts = {x.split("=")[0]: int(x.split("=")[1]) for x in toks[1:] if "=" in x}
        o = torch.full_like(q, float("nan"))
        f = Kernel(path, {"D": D, "CAUSAL": causal}, "cutlass_attn_rope_fwd", options=opts or None).bind(
            q, kk, v, cs, sn, o, D ** -0.5)
        f(); torch.cuda.synchronize()
        errs.append(relerr(o, ref)); fns.append(f)
    plain(); pair(); torch.cuda.synchronize()
    print(f"  (D{D} S{S} causal={causal}: plain rel. err {relerr(o0, ref):.1e}, pair {relerr(o1, ref):.1e})", flush=True)
    t = bench_rounds(fns, a.rounds, a.warm_ms)
    for i, form in enumerate(forms):
        r = [t[0][j] / t[2 + i][j] for j in range(a.rounds)]
        r2 = [t[1][j] / t[2 + i][j] for j in range(a.rounds)]
        print(f"| D{D} S{S} {'causal' if causal else 'full'} | {os.path.basename(form)} | {statistics.median(t[2 + i]):.3f} | "
              f"{statistics.median(r):.3f} ({min(r):.3f}..{max(r):.3f}) | {statistics.median(r2):.3f} | {errs[i]:.1e} |",
              flush=True)
