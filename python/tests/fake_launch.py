"""Run with TILEC_LIBCUDA=<fake libcuda (tests/fakecuda)> (test_fake_driver.py does): launches
through the package onto the fake driver, which records each launch, and checks what it saw: the
grid from the grid clause, the stream, the packed parameter bytes.  With --bench N it prints the
CPU time per launch, the best of 5 runs of N calls (the whole Python call path + libtilec + the fake's launch)."""
import ctypes as C
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tilec  # noqa: E402

fake = C.CDLL(os.environ["TILEC_LIBCUDA"])
fake.fake_cuda_launches.restype = C.c_long
fake.fake_cuda_last_launch.restype = C.c_size_t
fake.fake_cuda_last_launch.argtypes = [C.c_char_p, C.c_size_t]


def last():
    buf = C.create_string_buffer(16384)
    fake.fake_cuda_last_launch(buf, len(buf))
    return buf.value.decode()


_PyCapsule_New = C.pythonapi.PyCapsule_New
_PyCapsule_New.restype = C.py_object
_PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]


class FakeCudaArray:
    """A CUDA tensor as a DLPack producer sees it, at a fake device address (never dereferenced)."""

    def __init__(self, addr, shape, strides=None, dtype=(2, 32), device=0):
        self.shape = tuple(shape)
        n = len(shape)
        self._shape = (C.c_int64 * max(n, 1))(*shape)
        self._strides = (C.c_int64 * max(n, 1))(*strides) if strides else None
        self._mt = tilec._DLManagedTensor()
        t = self._mt.dl_tensor
        t.data, t.device.device_type, t.device.device_id, t.ndim = addr, 2, device, n
        t.dtype.code, t.dtype.bits, t.dtype.lanes = dtype[0], dtype[1], 1
        t.shape = C.cast(self._shape, C.POINTER(C.c_int64))
        t.strides = C.cast(self._strides, C.POINTER(C.c_int64)) if strides else None
        self._cap = _PyCapsule_New(C.addressof(self._mt), b"dltensor", None)
        self.streams = []

    def __dlpack_device__(self):
        return (2, self._mt.dl_tensor.device.device_id)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self._cap  # not consumed (tilec never renames it), so it can be handed out again


VADD = """
kernel vadd(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N], a: f32)
    tiles(B = 128)
    grid(cdiv(N, B))
{
    i = program_id(0) * B;
    store(Z[i : i + B], load(X[i : i + B]) * a + load(Y[i : i + B]));
}
"""


def params_of(line):
    return [bytes.fromhex(h) for h in line.split("params=")[1].split(":")]


def check():
    k = tilec.compile(VADD, arch="sm_90a")["vadd"]
    n = 1000
    xs = [FakeCudaArray(0x7F0000000000 + i * 0x100000, (n,)) for i in range(3)]
    k(*xs, 0.75, stream=0x1234)
    line = last()
    assert line.startswith("vadd grid=8,1,1 "), line          # cdiv(1000, 128)
    assert "stream=0x1234" in line, line
    threads, smem, entry = k.config()
    assert f"block={threads},1,1" in line and f"smem={smem}" in line, line
    p = params_of(line)
    # X: pointer, N (u32), stride (u64); Y; Z; a (f32)
    assert struct.unpack("<Q", p[0])[0] == 0x7F0000000000 and struct.unpack("<I", p[1])[0] == n
    assert struct.unpack("<q", p[2])[0] == 1
    assert struct.unpack("<Q", p[6])[0] == 0x7F0000200000
    assert struct.unpack("<f", p[9])[0] == 0.75
    assert all(x.streams[-1] == 0x1234 for x in xs), "DLPack producers were not given the launch stream"
    # no stream given: the legacy default stream (DLPack's 1 to the producer, NULL to the driver)
    k(*xs, 2.0)
    assert "stream=(nil)" in last() and xs[0].streams[-1] == 1, (last(), xs[0].streams)
    # strided view: strides reach the kernel; a grid given replaces the clause
    v = FakeCudaArray(0x7F0000400000, (300,), strides=(3,))
    w = FakeCudaArray(0x7F0000500000, (300,))
    z = FakeCudaArray(0x7F0000600000, (300,))
    k(v, w, z, 1.0, grid=(5,))
    line = last()
    assert line.startswith("vadd grid=5,1,1 "), line
    assert struct.unpack("<q", params_of(line)[2])[0] == 3
    before = fake.fake_cuda_launches()
    for bad, msg in (((xs[0], xs[1], z, 1.0), "N = 1000"),
                     ((FakeCudaArray(0x7F0000000002, (n,)), xs[1], xs[2], 1.0), "aligned"),
                     ((FakeCudaArray(0x7F0000000000, (n,), dtype=(2, 16)), xs[1], xs[2], 1.0), "dtype")):
        try:
            k(*bad)
        except tilec.TilecError as e:
            assert msg in str(e), (msg, str(e))
            assert e.status == "TILEC_ERROR_LAUNCH"
        else:
            raise AssertionError(f"not refused: {msg}")
    assert fake.fake_cuda_launches() == before, "a refused launch reached the driver"
    # a 4-D kernel with a scalar: the packing of every tensor, from examples/attn.tile
    attn = tilec.compile(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "attn.tile"), arch="sm_90a")
    ka = attn["attn_fwd"]
    Z, H, S, D = 2, 3, 257, 64
    ts = [FakeCudaArray(0x7F1000000000 + i * 0x1000000, (Z, H, S, D), dtype=(4, 16)) for i in range(4)]
    ka(*ts, 0.125)
    line = last()
    assert line.startswith(f"attn_fwd grid={(S + 127) // 128},{Z * H},1 "), line
    print("fake-driver checks: OK")


def bench(n):
    k = tilec.compile(VADD, arch="sm_90a")["vadd"]
    xs = [FakeCudaArray(0x7F0000000000 + i * 0x100000, (4096,)) for i in range(3)]
    k(*xs, 0.5, stream=0x10)
    f = fake.fake_cuda_launches()
    dt = float("inf")  # best of 5 runs: robust to a loaded machine
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            k(*xs, 0.5, stream=0x10)
        dt = min(dt, time.perf_counter() - t0)
    assert fake.fake_cuda_launches() == f + 5 * n
    # the libtilec + fake-driver part alone: the same packed buffer launched through ctypes
    h = k.load(0)
    launch = tilec.lib.tilec_kernel_launch
    addr = k._buf.addr
    dc = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            launch(h, addr, 4, 0x10)
        dc = min(dc, time.perf_counter() - t0)
    print(f"launch from Python (DLPack producers, 3 tensors + 1 scalar): {dt / n * 1e6:.2f} us per call; "
          f"of which the ctypes call into libtilec (+ fake driver): {dc / n * 1e6:.2f} us")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--bench":
        bench(int(sys.argv[2]))
    else:
        check()
