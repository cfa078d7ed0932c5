# bench/prologue_a_ab.py (thirty-eighth session): GEMMs whose A is computed in the loop (tests/prologue_a) with
# layout_assign's A-fragment rule on (the default: wgmma with A from registers, the loads through the TMA ring) and
# off (TILEC_PROLOGUE_A_FRAG=0: mma.sync, A staged through shared memory each k-step), on with 2 ring stages (the
# option stages=2: two CTAs an SM where registers allow, one's prologue under the other's wgmma; 'stages=2 / on' is time
# on / time stages=2), beside cuBLAS's plain GEMM on
# the A computed beforehand (what the prologue costs), torch eager of the same expression and torch.compile of it, in
# interleaved rounds (bench.py bench_interleaved; ratios the median of per-round ratios).  Every output is checked
# against the fp32 torch result first (rel. err).
#   python3 bench/prologue_a_ab.py --lib LIB [--sizes 4096x4096x4096,8192x4096x14336] [--rounds 7] [--compile 1]
#   (torch.compile at the first size only)
import argparse, os, sys, statistics
ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--sizes", default="4096x4096x4096,8192x4096x14336")
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--compile", type=int, default=1)
ap.add_argument("--cases", default="cast_f32,col_scale_nt,rmsnorm,sum_a,layernorm")
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, with_env, bench_interleaved, relerr, torch
T = os.path.join(here, "..", "tests", "prologue_a")
bf = torch.bfloat16


def case(name, M, N, K):
    """file, kernel, inputs, the output's shape and dtype, the torch expression (inputs -> C), A computed (for cuBLAS)"""
    r = lambda *s: torch.randn(*s, device="cuda")
    if name == "cast_f32":
        A, B = r(M, K), r(K, N).to(bf)
        return ("cast_f32.tile", "cutlass_cast_f32", (A, B), torch.float32,
                lambda A, B: (A.to(bf) @ B).float(), lambda: (A.to(bf), B))
    if name == "col_scale_nt":
        A, S, W = r(M, K).to(bf), (torch.rand(1, K, device="cuda") + 0.5), r(N, K).to(bf)
        return ("col_scale.tile", "cutlass_col_scale_nt", (A, S, W), bf,
                lambda A, S, W: (A.float() * S).to(bf) @ W.t(), lambda: ((A.float() * S).to(bf), W.t()))
    if name == "rmsnorm":
        X, G, W = r(M, K).to(bf), (torch.rand(1, K, device="cuda") + 0.5).to(bf), r(N, K).to(bf)
        R = torch.rsqrt(X.float().pow(2).mean(1) + 1e-6)
        return ("rmsnorm_a.tile", "cutlass_rmsnorm_linear", (X, R, G, W), bf,
                lambda X, R, G, W: (X.float() * R[:, None] * G.float()).to(bf) @ W.t(),
                lambda: ((X.float() * R[:, None] * G.float()).to(bf), W.t()))
    if name == "layernorm":  # the statistics from a first loop over K in the kernel; torch: F.layer_norm then the GEMM
        X, G, W = r(M, K).to(bf), (torch.rand(K, device="cuda") + 0.5).to(bf), r(N, K).to(bf)
        ln = lambda X, G: torch.nn.functional.layer_norm(X.float(), (K,), G.float(), None, 1e-5).to(bf)
        return ("scale_1d.tile", "cutlass_layernorm_linear", (X, G, W), bf, lambda X, G, W: ln(X, G) @ W.t(),
                lambda: (ln(X, G), W.t()))
    X, Rr, B = r(M, K).to(bf), r(M, K).to(bf), r(K, N).to(bf)
    return ("sum_a.tile", "cutlass_sum_a", (X, Rr, B), torch.float32, lambda X, R, B: ((X + R) @ B).float(),
            lambda: (X + Rr, B))


print("| case | MxNxK | on ms | off ms | on / off (rounds) | stages=2 / on | cuBLAS plain GEMM ms | on x plain | x eager | x torch.compile | rel. err on / off / stages=2 |")
print("|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
for si, size in enumerate(a.sizes.split(",")):
    M, N, K = (int(x) for x in size.split("x"))
    use_compile = a.compile and si == 0  # (torch.compile's compile of each case costs 10-30 s of a device call: the first size)
    for name in a.cases.split(","):
        f, kname, ins, odt, expr, pre = case(name, M, N, K)
        outs = [torch.full((M, N), float("nan"), device="cuda", dtype=odt) for _ in range(2)]
        fns = []
        outs.append(torch.full((M, N), float("nan"), device="cuda", dtype=odt))
        for i, (env, opt) in enumerate((("TILEC_PROLOGUE_A_FRAG=1", None), ("TILEC_PROLOGUE_A_FRAG=0", None),
                                        ("TILEC_PROLOGUE_A_FRAG=1", {"stages": 2}))):
            kern = with_env(env, lambda: Kernel(os.path.join(T, f), kernel=kname, options=opt))
            fns.append(kern.bind(*ins, outs[i]))
        Ap, Bp = pre()
        cb = torch.empty(M, N, device="cuda", dtype=bf)
        fns.append(lambda: torch.matmul(Ap, Bp, out=cb))
        fns.append(lambda: expr(*ins))
        if use_compile:
            comp = torch.compile(expr)
            comp(*ins)
            fns.append(lambda: comp(*ins))
        for fn in fns[:3]: fn()
        torch.cuda.synchronize()
        ref = Ap.float() @ Bp.float()  # (A computed as torch does, the product in fp32)
        e = [relerr(o.float(), ref) for o in outs]
        t = bench_interleaved(fns, a.rounds, 300)
        med = lambda i: statistics.median(t[i])
        rat = lambda i: statistics.median([x / y for x, y in zip(t[i], t[0])])  # time of i / time of on
        comp_s = f"{rat(5):.3f}" if use_compile else "-"
        print(f"| {name} | {size} | {med(0):.3f} | {med(1):.3f} | {1 / rat(1):.3f} | {1 / rat(2):.3f} | {med(3):.3f} | "
              f"{rat(3):.3f} | {rat(4):.3f} | {comp_s} | {e[0]:.1e} / {e[1]:.1e} / {e[2]:.1e} |", flush=True)
