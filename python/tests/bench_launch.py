"""CPU time per launch from Python on the GPU machine: tilec (torch fast path, the generic DLPack path
through torch's own __dlpack__, and the bare ctypes call into libtilec) beside Triton's launch of a
trivial kernel on the same tensors; best of 5 runs of N launches, no sync inside a run.
    python3 python/tests/bench_launch.py [N]"""
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0])
import tilec  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
SRC = """kernel vadd(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N], a: f32)
    tiles(B = 256) grid(cdiv(N, B)) {
    i = program_id(0) * B;
    store(Z[i : i + B], load(X[i : i + B]) * a + load(Y[i : i + B]));
}"""


def best_us(f):
    f()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(N):
            f()
        best = min(best, (time.perf_counter() - t0) / N * 1e6)
        torch.cuda.synchronize()
    return best


class Producer:
    """A torch tensor seen only through DLPack (as a CuPy or JAX array would be)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


k = tilec.compile(SRC)["vadd"]
x, y, z = (torch.randn(4096, device="cuda") for _ in range(3))
rows = [("tilec, torch tensors (fast path)", best_us(lambda: k(x, y, z, 1.5)))]
torch.testing.assert_close(z, x * 1.5 + y)
px, py, pz = Producer(x), Producer(y), Producer(z)
rows.append(("tilec, DLPack producers (torch __dlpack__)", best_us(lambda: k(px, py, pz, 1.5))))
h, addr, launch = k.load(0), k._buf.addr, tilec.lib.tilec_kernel_launch
s = torch.cuda.current_stream().cuda_stream
rows.append(("  the ctypes call into libtilec alone", best_us(lambda: launch(h, addr, 4, s))))
try:
    import triton
    import triton.language as tl

    @triton.jit
    def vadd(X, Y, Z, a, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(Z + i, tl.load(X + i, mask=m) * a + tl.load(Y + i, mask=m), mask=m)

    grid = (triton.cdiv(4096, 256),)
    rows.append((f"Triton {triton.__version__} (same kernel)", best_us(lambda: vadd[grid](x, y, z, 1.5, 4096, BLOCK=256))))
except Exception as e:  # no Triton: the tilec rows still stand
    rows.append((f"Triton: not measured ({type(e).__name__}: {e})"[:80], float("nan")))
print(f"\n{'launch from Python (CPU time, best of 5 x %d)' % N:52s} {'us/call':>8s}")
for name, us in rows:
    print(f"{name:52s} {us:8.2f}")
