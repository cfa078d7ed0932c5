# gemm_probe.py: bf16 GEMM forms of examples/gemm.tile beside cuBLAS in one process (issue 10,
# the 4096^3 gap): each form is (label, environment switches, -D defines, options), checked on a
# NaN-poisoned output against an f32 reference, then timed (medians of do_bench), cuBLAS timed
# before and after each shape's forms; the cuBLAS kernels' names and grids from torch.profiler.
# --storage nk: B stored as nn.Linear's W [N, K] (bench.py's LINEAR_PLAIN kernel, cuBLAS F.linear);
# kn,nk: both, one table.
#   python3 bench/gemm_probe.py --lib LIB [--sizes MxNxK,...] [--forms NAME,...] [--names] [--storage kn,nk]
import argparse, os, sys

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--sizes", default="4096x4096x4096")
ap.add_argument("--forms", default="")
ap.add_argument("--names", action="store_true", help="print the cuBLAS kernels (name, grid, block) per size")
ap.add_argument("--rep", type=int, default=200)
ap.add_argument("--rounds", type=int, default=5,
                help="R > 0: cuBLAS and every form timed in R rotated rounds after --warm-ms of cuBLAS "
                     "(bench.py bench_rounds; the ratio a round's); 0: each once, cuBLAS first and last")
ap.add_argument("--warm-ms", type=float, default=1000)
ap.add_argument("--storage", default="kn", help="kn (B [K, N], gemm.tile), nk (W [N, K], nn.Linear), or both")
a = ap.parse_args()
os.environ["TILEC_CACHE"] = "0"  # (options are not in every cache key)
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none"] + (["--quick"] if a.rep <= 50 else [])
_bp = os.path.join(here, "bench.py")
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, with_env, relerr (a file name: triton.jit reads the source)

FORMS = {
    "default": ("", {}, {}),
    # noconv: without the warp's reconvergence after thread 0's TMA store (TILEC_WARP_CONVERGE=0; twenty-sixth session)
    "noconv": ("TILEC_WARP_CONVERGE=0", {}, {}),
    "g2": ("TILEC_TILE_GROUP=2", {}, {}),
    "g4": ("TILEC_TILE_GROUP=4", {}, {}),
    "g16": ("TILEC_TILE_GROUP=16", {}, {}),
    "coop": ("TILEC_WS=coop", {}, {}),
    "256x128": ("", {"BM": 256, "BN": 128}, {}),
    "128x128s6": ("", {"BN": 128}, {"stages": 6}),
    "128x128w4s3e32": ("TILEC_EPI=32", {"BN": 128}, {"warps": 4, "stages": 3}),
    "inline": ("TILEC_TMA_FORM=0", {}, {}),
    "off": ("TILEC_WS=off", {}, {}),
    "pingpong": ("TILEC_WS=pingpong", {"BN": 128}, {"warps": 4, "stages": 5}),
}
for kv in filter(None, os.environ.get("PROBE_FORMS", "").split(";")):  # NAME=ENV|D1=v,D2=v|o1=v
    name, spec = kv.split("=", 1)
    env, ds, os_ = (spec.split("|") + ["", ""])[:3]
    FORMS[name] = (env, {k: int(v) for k, v in (x.split("=") for x in ds.split(",") if x)},
                   {k: v for k, v in (x.split("=") for x in os_.split(",") if x)})
names = [f for f in a.forms.split(",") if f] or list(FORMS)

def tb(f):
    f(); torch.cuda.synchronize()
    return do_bench(f, warmup=25, rep=a.rep, return_mode="median")

storages = [x for x in a.storage.split(",") if x]
ks = {}
for st in storages:
    for n in names:
        env, d, o = FORMS[n]
        try:
            if st == "kn":
                ks[st, n] = with_env(env, lambda: Kernel(ex("gemm.tile"), d, options=o))
            else:
                ks[st, n] = with_env(env, lambda: Kernel("linear_plain.tile", d, options=o, source=LINEAR_PLAIN))
        except Exception as e:
            print(f"{st} {n}: compile FAILED {str(e)[:400]}", flush=True)

out = []
import torch.nn.functional as F
for s0, st in [(x, y) for x in a.sizes.split(",") for y in storages]:
    s = s0 if st == "kn" else s0 + " nk"
    M, N, K = (int(x) for x in s0.split("x"))
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) / K ** 0.5
    if st == "nk":
        B = B.t().contiguous()  # W [N, K]
    ref = A.float() @ (B.float() if st == "kn" else B.float().t())
    fl = 2 * M * N * K
    if a.names and st == "kn":
        from torch.profiler import profile, ProfilerActivity
        import json, tempfile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3): fs0 = (A @ B) if st == "kn" else F.linear(A, B)
            torch.cuda.synchronize()
        p = tempfile.mktemp(suffix=".json"); prof.export_chrome_trace(p)
        seen = set()
        for ev in json.load(open(p))["traceEvents"]:
            if ev.get("cat") == "kernel" and ev["name"] not in seen:
                seen.add(ev["name"]); ar = ev.get("args", {})
                print(f"cuBLAS {s}: {ev['name'][:120]} grid {ar.get('grid')} block {ar.get('block')} "
                      f"regs {ar.get('registers per thread')} smem {ar.get('shared memory')} {ev.get('dur')} us", flush=True)
    fs, errs, done = [(lambda: A @ B) if st == "kn" else (lambda: F.linear(A, B))], [], []
    for n in names:
        if (st, n) not in ks: continue
        Cout = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        fs.append(ks[st, n].bind(A, B, Cout))
        fs[-1](); torch.cuda.synchronize()
        errs.append(relerr(Cout, ref)); done.append(n)
    if a.rounds > 0:
        times = bench_rounds(fs, a.rounds, a.warm_ms)
    else:
        times = [[tb(f)] for f in fs]
        times[0].append(tb(fs[0]))  # cuBLAS again after the forms: the drift of the reference
    t_ref = median(times[0])
    for n, ts, err in zip(done, times[1:], errs):
        t = median(ts)
        rr = sorted(r / x for r, x in zip(times[0], ts))
        out.append((s, n, t, fl / t / 1e9, fl / t_ref / 1e9, err, rr[0], rr[-1]))
        print(f"{s} {n}: {t*1e3:.1f} us {fl/t/1e9:.1f} TFLOP/s ({t_ref/t:.3f} cuBLAS; rounds {rr[0]:.3f}..{rr[-1]:.3f}) "
              f"err {err:.1e}", flush=True)
    print(f"cuBLAS {s}: {fl/max(times[0])/1e9:.1f}..{fl/min(times[0])/1e9:.1f} TFLOP/s over "
          f"{len(times[0])} timings, median {fl/t_ref/1e9:.1f}", flush=True)

print("\n| shape | form | us | TFLOP/s | cuBLAS | ratio | ratio a round | rel.err |\n|---|---|---|---|---|---|---|---|")
for s, n, t, v, r, e, lo, hi in out:
    print(f"| {s} | {n} | {t*1e3:.1f} | {v:.1f} | {r:.1f} | {v/r:.3f} | {lo:.3f}..{hi:.3f} | {e:.1e} |")
