#!/usr/bin/env python3
"""w4a16_probe.py: where W4A16's small-M time goes (eighth session).  The split-K kernel (BN 64 x 8)
and cuBLAS bf16 at M = 1 / 16, N = K = 4096, timed three ways: do_bench with its L2 flush (bench.py's
number), back to back with L2 warm (the weights, 8 MB, stay in L2: what is left is the kernel's own
latency and compute), and an empty-ish tilec kernel under do_bench (the fixed cost of one timed call).
  LD_LIBRARY_PATH=B TILEC_LIBRARY=B/libtilec.so python3 bench/w4a16_probe.py EXAMPLES_DIR [ncu]
(ncu: one launch of the split kernel at M = 16 only, for `ncu --launch-count 1`)."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch, tilec
from triton.testing import do_bench

ex = sys.argv[1]
G, N, K = 128, 4096, 4096
if len(sys.argv) > 2:  # ncu: one launch of the split kernel at M = 16 (run under ncu --launch-count 1)
    M = 16
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    wq = torch.randint(-2 ** 31, 2 ** 31 - 1, (K // 8, N), device="cuda", dtype=torch.int32)
    sc = (torch.rand(K // G, N, device="cuda") * 0.02 + 0.01).to(torch.bfloat16)
    k = tilec.compile(os.path.join(ex, "gemm_w4a16.tile"), defines={"BN": 64, "SPLIT": 8})["gemm_w4a16_splitk"]
    c = torch.zeros(M, N, device="cuda")
    k(a, wq, sc, sc, c); torch.cuda.synchronize()
    sys.exit(0)
def warm(f, n=200):
    f(); torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n): f()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / n
def flush(f): return do_bench(f, warmup=25, rep=100, return_mode="median")
big = torch.ones(64 * 2 ** 20, device="cuda")  # 256 MB
def clean(f, n=50):
    """L2 flushed by reading 256 MB (clean lines), not by do_bench's zeroing (dirty lines, written
    back while the timed kernel reads): median of n."""
    ts = []
    for _ in range(n):
        big.sum()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record()
        ts.append((s, e))
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) for s, e in ts)[n // 2]

tiny = tilec.compile("kernel vadd(X: tensor<f32>[N], Z: tensor<f32>[N]) tiles(B = 256) grid(cdiv(N, B))\n"
                     "{ i = program_id(0) * B; store(Z[i : i + B], load(X[i : i + B]) + 1.0); }")["vadd"]
x = torch.zeros(256, device="cuda"); y = torch.zeros(256, device="cuda")
print(f"probe vadd N=256: flush {flush(lambda: tiny(x, y)) * 1e3:.1f} us, clean {clean(lambda: tiny(x, y)) * 1e3:.1f} us, warm {warm(lambda: tiny(x, y)) * 1e3:.1f} us")
z0 = torch.zeros(16, N, device="cuda")
print(f"probe C.zero_() 16x4096 f32: flush {flush(lambda: z0.zero_()) * 1e3:.1f} us, warm {warm(lambda: z0.zero_()) * 1e3:.1f} us")
for M in (1, 16):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    wq = torch.randint(-2 ** 31, 2 ** 31 - 1, (K // 8, N), device="cuda", dtype=torch.int32)
    sc = (torch.rand(K // G, N, device="cuda") * 0.02 + 0.01).to(torch.bfloat16)
    zs = (sc.float() * 8).to(torch.bfloat16)
    w = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    print(f"probe M={M} cuBLAS bf16: flush {flush(lambda: a @ w) * 1e3:.1f} us, clean {clean(lambda: a @ w) * 1e3:.1f} us, warm {warm(lambda: a @ w) * 1e3:.1f} us")
    for name, defs, kn in (("splitk BN64 x8", {"BN": 64, "SPLIT": 8}, "gemm_w4a16_splitk"),
                           ("splitk BN64 x16 stages2", {"BN": 64, "SPLIT": 16}, "gemm_w4a16_splitk"),
                           ("unsplit BN32", {"BN": 32}, "gemm_w4a16")):
        opts = {"stages": 2} if "stages2" in name else {}
        k = tilec.compile(os.path.join(ex, "gemm_w4a16.tile"), defines=defs, **opts)[kn]
        c = torch.zeros(M, N, device="cuda", dtype=torch.float32 if name.startswith("splitk") else torch.bfloat16)
        f = lambda: k(a, wq, sc, zs, c)
        print(f"probe M={M} {name} (no zeroing): flush {flush(f) * 1e3:.1f} us, clean {clean(f) * 1e3:.1f} us, warm {warm(f) * 1e3:.1f} us")
