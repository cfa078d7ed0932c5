# bench/switch_ab.py (thirty-seventh session): one attention-shaped kernel (Q, K, V, O: [Z, H, S, D] bf16, then
# scale) with a code switch =0 against =1 (each compiled under its value), interleaved rounds (bench.py
# bench_interleaved), the ratio the median of per-round ratios (time on / off); the two outputs compared (rel. diff).
# bench.py's shapes: H = 2048 / D, Z = 16384 / S.
#   python3 bench/switch_ab.py --lib LIB --file F --kernel K --switch TILEC_X [--d 64,128] [--s 4096] [--rounds 7]
import argparse, os, sys, statistics
ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--file", required=True)
ap.add_argument("--kernel", required=True)
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
print(f"| {a.kernel} | D | {a.switch}=0 ms | =1 ms | 1 / 0 (rounds) | rel. diff |\n|---|---|---|---|---|---|", flush=True)
for D in (int(x) for x in a.d.split(",")):
    H = 2048 // D; Z = max(1, 16384 // S)
    q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    outs = [torch.full_like(q, float("nan")) for _ in range(2)]
    fns = []
    try:
        for i in range(2):
            kern = with_env(f"{a.switch}={i}", lambda: Kernel(a.file, defines={"D": D}, kernel=a.kernel))
            fns.append(kern.bind(q, k, v, outs[i], D ** -0.5))
    except Exception as e:
        print(f"| {a.kernel} | {D} | - | - | {str(e)[:80]} | - |", flush=True)
        continue
    for fn in fns: fn()
    torch.cuda.synchronize()
    err = relerr(outs[1].float(), outs[0].float())
    t = bench_interleaved(fns, a.rounds, 300)
    r = statistics.median([b / x for x, b in zip(t[0], t[1])])
    print(f"| {a.kernel} | {D} | {statistics.median(t[0]):.3f} | {statistics.median(t[1]):.3f} | {r:.3f} | {err:.2e} |",
          flush=True)
