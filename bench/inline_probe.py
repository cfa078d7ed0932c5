# bench/inline_probe.py: which launch of a JIT-loaded `tma-fallback=inline` kernel does not finish (twenty-fourth
# session: fp8_probe's "bs inline", examples/gemm_fp8_blockscale.tile at 4096^3, printed nothing in 50-280 s on an
# H100, where its TMA form, "tn inline" and the wide variant's inline AOT launcher ran).  One form and size a
# process (bench/pending_bsinline.sh runs each under a timeout), a line flushed before and after every step.
#   python3 bench/inline_probe.py --lib LIB --form bs|bs-inline|wide|wide-inline|tn-inline --size N
import argparse, os, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--form", required=True)
ap.add_argument("--size", type=int, required=True)
ap.add_argument("--mnk", default="", help="M,N,K instead of --size cubed (the block-scaled forms)")
a = ap.parse_args()
os.environ["TILEC_CACHE"] = "0"
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, ex, and C = ctypes (so the output is Cout)
t0 = time.time()
say = lambda m: print(f"[{time.time() - t0:6.2f} s] {a.form} {a.size}: {m}", flush=True)
bs = a.form.startswith(("bs", "wide"))
opts = {"tma-fallback": "inline"} if a.form.endswith("inline") else {}
say("compile")
# bs: the 128x128 spelling the hang was seen on (the example until the twenty-fifth session); wide: the example now
src = os.path.join(os.path.dirname(here), "bench/variants/gemm_fp8_blockscale_128.tile") if a.form.startswith("bs") \
    else ex("gemm_fp8_blockscale.tile" if bs else "gemm_fp8.tile")
k = Kernel(src, {}, kernel="cutlass_gemm_fp8_blockscale" if bs else "cutlass_gemm_fp8_tn", options=opts)
N = a.size
M_, N_, K_ = (int(x) for x in a.mnk.split(",")) if a.mnk else (N, N, N)
A = torch.randn(M_, K_, device="cuda").to(torch.float8_e4m3fn)
BT = torch.randn(N_, K_, device="cuda").to(torch.float8_e4m3fn)
Cout = torch.full((M_, N_), float("nan"), device="cuda", dtype=torch.bfloat16)
if bs:
    SA = torch.rand(M_, K_ // 128, device="cuda") + 0.5
    SW = torch.rand(N_ // 128, K_ // 128, device="cuda") + 0.5
    f = k.bind(A, BT, SA, SW, Cout)
else:
    f = k.bind(A, BT, Cout, 0.5, 2.0)
say("first launch (loads the kernel)")
f()
say("launched; synchronizing")
torch.cuda.synchronize()
say(f"done; C finite: {bool(torch.isfinite(Cout.float()).all())}")
for i in range(3):
    f()
torch.cuda.synchronize()
say("3 more launches done")
