# ncu_bscale.py: cutlass_gemm_fp8_blockscale at 4096^3 for ncu (the seventeenth session profiled its L1
# prefetch of the scales this way, since removed): its default and TILEC_LOAD_AHEAD=1 (the scales
# loaded one k-step ahead, passes/load_ahead.c), two launches each (ncu reads the scale loads' L1 hits and
# misses, the long-scoreboard stall and the tensor pipe); a "form:" line before each pair.
#   ncu ... python3 bench/ncu_bscale.py [--lib LIB] [--examples DIR]
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from gpu_py import examples_dir, start  # noqa: E402

env = start("ncu_bscale")
if env is None:
    sys.exit(77)
torch, tilec = env
N = 4096
f8 = torch.float8_e4m3fn
a = torch.randn(N, N, device="cuda").to(f8)
w = torch.randn(N, N, device="cuda").to(f8)
sa = torch.rand(N, N // 128, device="cuda") + 0.5
sw = torch.rand(N // 128, N // 128, device="cuda") + 0.5
c = torch.empty(N, N, dtype=torch.bfloat16, device="cuda")
for form, on in (("bs", None), ("bs ahead", "1")):
    if on: os.environ["TILEC_LOAD_AHEAD"] = on
    else: os.environ.pop("TILEC_LOAD_AHEAD", None)
    k = tilec.compile(os.path.join(examples_dir(), "gemm_fp8_blockscale.tile"))["cutlass_gemm_fp8_blockscale"]
    k.load(0)
    print("form:", form, flush=True)
    for _ in range(2):
        k(a, w, sa, sw, c)
        torch.cuda.synchronize()
