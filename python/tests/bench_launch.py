"""CPU time per launch from Python on the GPU machine, every launch path of the package in one process
beside Triton's launch of the same trivial kernel on the same tensors; best of 5 runs of N launches,
no sync inside a run.  Each path is a Kernel made under its TILEC_PY_LAUNCH (python/tilec/_fastcall.py):
  generic       the generic path alone (the package before the fast paths: its torch branch in _pack)
  ctypes-attrs  generated code reading data_ptr/get_device/shape/stride, one struct.pack_into
  ctypes        generated code, torch's DLPack C exchange API writing the DLTensors (when torch has it)
  tvm-ffi       apache-tvm-ffi's converters into tilec_ffi_launch (when tvm_ffi imports)
    python3 python/tests/bench_launch.py [N]"""
import os
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0])
import tilec  # noqa: E402
from tilec import _fastcall  # noqa: E402

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

    def __dlpack__(self, stream=None, **kw):
        return self.t.__dlpack__(stream=stream, **kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


prog = tilec.compile(SRC)
x, y, z = (torch.randn(4096, device="cuda") for _ in range(3))
rows = []


def kernel_for(mode):
    """A Kernel of `prog` whose fast path is made under TILEC_PY_LAUNCH=mode (after its first call)."""
    os.environ["TILEC_PY_LAUNCH"] = mode
    k = tilec.Kernel(prog, 0, "vadd")
    z.fill_(float("nan"))
    k(x, y, z, 1.5)   # the generic path: loads, makes the fast path
    torch.testing.assert_close(z, x * 1.5 + y)
    return k


exchange = _fastcall.torch_exchange(torch.Tensor) is not None
print(f"torch {torch.__version__}: DLPack C exchange API {'found' if exchange else 'absent'}")
try:
    import tvm_ffi
    have_ffi = True
    print(f"apache-tvm-ffi {tvm_ffi.__version__}")
except ImportError as e:
    have_ffi = False
    print(f"apache-tvm-ffi: not importable ({e})")
modes = ["generic", "ctypes-attrs"] + (["ctypes"] if exchange else []) + (["tvm-ffi"] if have_ffi else [])
for mode in modes:
    k = kernel_for(mode)
    what = {"generic": "generic path (before: torch branch of _pack)", "ctypes-attrs": "ctypes, attributes read",
            "ctypes": "ctypes, torch's DLPack C exchange API", "tvm-ffi": "tvm-ffi -> tilec_ffi_launch"}[mode]
    rows.append((f"torch tensors: {what}", best_us(lambda: k(x, y, z, 1.5))))
    z.fill_(float("nan"))
    k(x, y, z, 2.5)  # the fast path's result
    torch.cuda.synchronize()
    torch.testing.assert_close(z, x * 2.5 + y)
px, py, pz = Producer(x), Producer(y), Producer(z)
for mode in ["generic"] + (["tvm-ffi"] if have_ffi else []):
    k = kernel_for(mode)
    rows.append((f"DLPack producers: {mode}", best_us(lambda: k(px, py, pz, 1.5))))
k = kernel_for("generic")
h, addr, launch = k.load(0), k._buf.addr, tilec.lib.tilec_kernel_launch
vals, _, keep = k._pack((x, y, z, 1.5), None)
k._buf.struct.pack_into(k._buf.buf, 0, *vals)
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
print(f"\n{'launch from Python (CPU time, best of 5 x %d)' % N:60s} {'us/call':>8s}")
for name, us in rows:
    print(f"{name:60s} {us:8.2f}")
