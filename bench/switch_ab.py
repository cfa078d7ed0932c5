# bench/switch_ab.py (thirty-seventh session): attention-shaped kernels with a code switch =0 against =1 (each compiled
# under its value), interleaved rounds (bench.py bench_interleaved), the ratio the median of per-round ratios (time
# on / off); the two runs' outputs compared (rel. diff).  bench.py's shapes: H = 2048 / D, Z = 16384 / S, scale D^-1/2.
# Each kernel names its parameters' shape after a colon (default attn):
#   attn         Q, K, V, O [Z, H, S, D] bf16, scale                      (tests/attn_variants/loops.tile's kernels)
#   dropout      the same, then pdrop 0.1, seed 1234 (i64)               (dropout.tile's cutlass_attn_dropout)
#   bwd_dropout  Q, K, V, dO, LSE, Dl, dK, dV, scale, pdrop, seed         (dropout.tile's cutlass_attn_bwd_dropout;
#                LSE 12 + U[0, 1): P small, as a real forward's would be)
#   python3 bench/switch_ab.py --lib LIB --file F --kernels K[:SIG],... --switch TILEC_X [--d 64,128] [--s 4096]
#     [--rounds 7]
#   e.g. dropout: --file tests/attn_variants/dropout.tile --switch TILEC_RAND_FOLLOW
#        --kernels cutlass_attn_dropout:dropout,cutlass_attn_bwd_dropout:bwd_dropout
import argparse, os, sys, statistics
ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--file", required=True)
ap.add_argument("--kernels", required=True)
ap.add_argument("--switch", required=True)
ap.add_argument("--d", default="64,128")
ap.add_argument("--s", type=int, default=4096)
ap.add_argument("--rounds", type=int, default=7)
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, with_env, bench_interleaved, relerr, torch
S = a.s


def arguments(sig, Z, H, D):
    """a function of the output buffers -> the kernel's arguments, and the output buffers of two runs"""
    g = lambda: torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
    q, k, v = g(), g(), g()
    nan = lambda: torch.full_like(q, float("nan"))
    if sig == "attn":
        return (lambda o: (q, k, v, o[0], D ** -0.5)), [[nan()] for _ in range(2)]
    if sig == "dropout":
        return (lambda o: (q, k, v, o[0], D ** -0.5, 0.1, ("i64", 1234))), [[nan()] for _ in range(2)]
    do = g()
    lse = torch.full((Z, H, S), 12.0, device="cuda") + torch.rand(Z, H, S, device="cuda")
    dl = torch.randn(Z, H, S, device="cuda")
    return (lambda o: (q, k, v, do, lse, dl, o[0], o[1], D ** -0.5, 0.1, ("i64", 1234))), [[nan(), nan()] for _ in range(2)]


print(f"| kernel | D | {a.switch}=0 ms | =1 ms | 1 / 0 (rounds) | rel. diff |\n|---|---|---|---|---|---|", flush=True)
for spec in a.kernels.split(","):
    kname, _, sig = spec.partition(":")
    for D in (int(x) for x in a.d.split(",")):
        H = 2048 // D; Z = max(1, 16384 // S)
        args, outs = arguments(sig or "attn", Z, H, D)
        fns = []
        try:
            for i in range(2):
                kern = with_env(f"{a.switch}={i}", lambda: Kernel(a.file, defines={"D": D}, kernel=kname))
                fns.append(kern.bind(*args(outs[i])))
        except Exception as e:  # (one of the two does not compile or load: say so, go on)
            print(f"| {kname} | {D} | - | - | {str(e)[:80]} | - |", flush=True)
            continue
        for fn in fns: fn()
        torch.cuda.synchronize()
        err = relerr(torch.cat(outs[1]).float(), torch.cat(outs[0]).float())
        t = bench_interleaved(fns, a.rounds, 300)
        r = statistics.median([b / x for x, b in zip(t[0], t[1])])
        print(f"| {kname} | {D} | {statistics.median(t[0]):.3f} | {statistics.median(t[1]):.3f} | {r:.3f} | {err:.2e} |",
              flush=True)
