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

    def __init__(self, addr, shape, strides=None, dtype=(2, 32), device=0, fresh=False):
        self.shape, self.fresh = tuple(shape), fresh
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

    def __dlpack__(self, stream=None, **kw):
        self.streams.append(stream)
        if self.fresh:  # a consumer that renames the capsule (tvm-ffi) gets a new one each time
            return _PyCapsule_New(C.addressof(self._mt), b"dltensor", None)
        return self._cap  # not consumed (tilec never renames it), so it can be handed out again


class FakeTorchTensor:
    """What tilec reads of a torch.Tensor (data_ptr, get_device, dtype, shape, stride, dim), at a fake
    CUDA address: stands in for torch (not installed on the CI machine) as a module in sys.modules."""

    def __init__(self, addr, shape, strides=None, dtype="float32", device=0):
        self._addr, self.shape, self._dev = addr, tuple(shape), device
        self._strides = tuple(strides) if strides else tilec._row_major(shape)
        self.dtype = getattr(fake_torch, dtype)

    def data_ptr(self):
        return self._addr

    def get_device(self):
        return self._dev

    def stride(self):
        return self._strides

    def dim(self):
        return len(self.shape)


_TO_DL = C.CFUNCTYPE(C.c_int, C.py_object, C.c_void_p)


class _ExchangeAPI(C.Structure):  # DLPackExchangeAPI (dlpack.h 1.3)
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32), ("prev_api", C.c_void_p),
                ("managed_tensor_allocator", C.c_void_p), ("managed_from_py", C.c_void_p),
                ("managed_to_py", C.c_void_p), ("dltensor_from_py_object_no_sync", _TO_DL),
                ("current_work_stream", C.c_void_p)]


def _fake_to_dltensor(obj, out):
    """torch's dltensor_from_py_object_no_sync for FakeTorchTensor: the DLTensor written at `out`,
    its shape and strides arrays kept by the tensor."""
    if not isinstance(obj, FakeTorchTensor):
        return -1
    t = tilec._lib.DLTensor.from_address(out)
    obj._dl_shape = (C.c_int64 * max(len(obj.shape), 1))(*obj.shape)
    obj._dl_strides = (C.c_int64 * max(len(obj.shape), 1))(*obj._strides)
    code, bits = tilec._torch_dtypes[obj.dtype]
    t.data, t.device.device_type, t.device.device_id, t.ndim = obj._addr, 2 if obj._dev >= 0 else 1, max(obj._dev, 0), len(obj.shape)
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    t.shape = C.cast(obj._dl_shape, C.POINTER(C.c_int64))
    t.strides = C.cast(obj._dl_strides, C.POINTER(C.c_int64))
    t.byte_offset = 0
    return 0


_exchange_api = _ExchangeAPI(1, 3, None, None, None, None, _TO_DL(_fake_to_dltensor), None)


def install_fake_exchange_api():
    """FakeTorchTensor.__dlpack_c_exchange_api__, as torch >= 2.10 has it (a capsule of the struct)."""
    new = C.pythonapi.PyCapsule_New
    new.restype, new.argtypes = C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p]
    FakeTorchTensor.__dlpack_c_exchange_api__ = new(C.addressof(_exchange_api), b"dlpack_exchange_api", None)


def install_fake_torch():
    """A module named torch with the dtypes, Tensor and the raw current-stream getter tilec uses."""
    import types
    t = types.ModuleType("torch")
    for name in ("bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"):
        setattr(t, name, type(name, (), {"__repr__": lambda self, n=name: f"torch.{n}"})())
    t._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: 0x5000 + dev)  # a stream per device
    t.Tensor = FakeTorchTensor
    sys.modules["torch"] = t
    return t


fake_torch = None


def check_fast_path(how):
    """The generated launch sends the driver exactly what the generic path sends, for the same torch
    tensors; it declines (the generic path then runs and diagnoses) whatever it does not map.
    how: "ctypes-attrs" (the tensors' attributes read in Python) or "ctypes-exchange" (torch's DLPack C
    exchange API, faked here through a ctypes callback)."""
    global fake_torch
    fake_torch = install_fake_torch()
    if how == "ctypes-exchange":
        install_fake_exchange_api()
    os.environ["TILEC_PY_LAUNCH"] = "ctypes" if how == "ctypes-exchange" else how
    k = tilec.compile(VADD, arch="sm_90a")["vadd"]
    n = 1000
    xs = [FakeTorchTensor(0x7F2000000000 + i * 0x100000, (n,)) for i in range(3)]
    assert k._fast is None
    k(*xs, 0.75)                      # generic path (loads), then the fast path is made
    generic = last()
    assert k._fast is not None, "no fast path after a launch"
    assert ("to_dl(" in k._fast.source) == (how == "ctypes-exchange"), k._fast.source
    before = fake.fake_cuda_launches()
    assert k._fast(tuple(xs) + (0.75,), None) is True, "the fast path did not take the call"
    assert fake.fake_cuda_launches() == before + 1 and last() == generic, (generic, last())
    assert "stream=0x5000" in generic, generic   # torch's current stream of device 0
    k(*xs, 3, stream=0x77)            # an int for a float parameter; a stream given
    assert "stream=0x77" in last() and struct.unpack("<f", params_of(last())[9])[0] == 3.0, last()
    # every declined case: the generic path's result (a launch or its diagnostic), never a wrong launch
    v = FakeTorchTensor(0x7F2000400000, (300,), strides=(3,))
    w, z = FakeTorchTensor(0x7F2000500000, (300,)), FakeTorchTensor(0x7F2000600000, (300,))
    k(v, w, z, 1.0)
    assert struct.unpack("<q", params_of(last())[2])[0] == 3 and last().startswith("vadd grid=3,1,1 "), last()
    for bad, msg in (((xs[0], xs[1], z, 1.0), "N = 1000"),
                     ((FakeTorchTensor(0x7F2000000000, (n,), dtype="float16"), xs[1], xs[2], 1.0), "dtype"),
                     ((FakeTorchTensor(0x7F2000000000, (n, 1)), xs[1], xs[2], 1.0), "rank"),
                     ((FakeTorchTensor(0x7F2000000000, (n,), device=1), xs[1], xs[2], 1.0), "device"),
                     ((FakeTorchTensor(0x7F2000000000, (n,), device=-1), xs[1], xs[2], 1.0), ""),
                     ((xs[0], xs[1], xs[2], "x"), "")):
        before = fake.fake_cuda_launches()
        try:
            k(*bad)
        except (tilec.TilecError, ValueError, TypeError) as e:
            assert msg in str(e), (msg, str(e))
        else:
            raise AssertionError(f"not refused: {msg or bad}")
        assert fake.fake_cuda_launches() == before, "a refused launch reached the driver"
    # a 4-D bf16 kernel with a scalar, and an i32 scalar: fast == generic, byte for byte
    attn = tilec.compile(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "attn.tile"), arch="sm_90a")
    ka = attn["attn_fwd"]
    Z, H, S, D = 2, 3, 257, 64
    ts = [FakeTorchTensor(0x7F3000000000 + i * 0x1000000, (Z, H, S, D), dtype="bfloat16") for i in range(4)]
    ka(*ts, 0.125)
    first = last()
    assert ka._fast(tuple(ts) + (0.125,), None) is True and last() == first, (first, last())
    ki = tilec.compile(SCALE_I32, arch="sm_90a")["scale"]
    a, b = FakeTorchTensor(0x7F4000000000, (77, 5), dtype="int32"), FakeTorchTensor(0x7F4000100000, (77, 5), dtype="int32")
    ki(a, b, 7)
    first = last()
    assert ki._fast((a, b, 7), None) is True and last() == first, (first, last())
    try:
        ki(a, b, 7.5)
    except TypeError as e:
        assert "float" in str(e), str(e)
    else:
        raise AssertionError("a float for an i32 parameter was taken")
    print(f"fast-path checks ({how}): OK")


def check_tvm_ffi():
    """TILEC_PY_LAUNCH=tvm-ffi (needs apache-tvm-ffi): tvm-ffi's converters hand DLPack producers to
    tilec_ffi_launch; the driver sees what the generic path sends; declined calls go the generic way."""
    os.environ["TILEC_PY_LAUNCH"] = "tvm-ffi"
    k = tilec.compile(VADD, arch="sm_90a")["vadd"]
    n = 1000
    xs = [FakeCudaArray(0x7F5000000000 + i * 0x100000, (n,), fresh=True) for i in range(3)]
    for stream in (0x1234, 0):
        k(*xs, 0.75, stream=stream)
        generic = last()
        before = fake.fake_cuda_launches()
        assert k._fast(tuple(xs) + (0.75,), stream) is True, "tvm-ffi did not take the call"
        assert fake.fake_cuda_launches() == before + 1 and last() == generic, (generic, last())
    # no stream given and no torch tensor: declined (tvm-ffi knows no current stream of this producer)
    assert k._fast(tuple(xs) + (0.75,), None) is False
    assert k._fast(tuple(xs) + (2,), 0x10) is True and struct.unpack("<f", params_of(last())[9])[0] == 2.0
    before = fake.fake_cuda_launches()
    assert k._fast((xs[0], xs[1], FakeCudaArray(0x7F5000600000, (300,), fresh=True), 1.0), None) is False  # N differs
    assert k._fast(tuple(xs) + ("x",), None) is False
    assert k._fast(tuple(xs[:2]) + (1.0,), None) is False
    assert fake.fake_cuda_launches() == before, "a refused launch reached the driver"
    ki = tilec.compile(SCALE_I32, arch="sm_90a")["scale"]
    a = FakeCudaArray(0x7F6000000000, (77, 5), dtype=(0, 32), fresh=True)
    b = FakeCudaArray(0x7F6000100000, (77, 5), dtype=(0, 32), fresh=True)
    ki(a, b, 7, stream=0x10)
    first = last()
    assert ki._fast((a, b, 7), 0x10) is True and last() == first, (first, last())
    assert ki._fast((a, b, 7.5), 0x10) is False  # a float for an i32: the generic path's TypeError
    print("tvm-ffi checks: OK")


class FfiAny(C.Structure):  # TVMFFIAny (tvm/ffi/c_api.h): type index, padding, 8 bytes of value
    _fields_ = [("type_index", C.c_int32), ("zero_padding", C.c_uint32), ("v", C.c_uint64)]


def check_ffi_abi():
    """tilec_ffi_launch called through ctypes with TVMFFIAny arrays made by hand (as tvm-ffi makes them:
    DLTensor pointers, ffi.Tensor objects = a 24-byte header then the DLTensor, ints, floats): the
    driver sees what the generic path sends; every case it must not take answers -1, launching
    nothing.  Needs no tvm-ffi: the C side of the tvm-ffi path, in CI."""
    from tilec import _fastcall
    fn = tilec.lib.tilec_ffi_launch
    fn.restype, fn.argtypes = C.c_int, [C.c_void_p, C.c_void_p, C.c_int32, C.c_void_p]
    k = tilec.compile(VADD, arch="sm_90a")["vadd"]
    n = 1000
    xs = [FakeCudaArray(0x7F7000000000 + i * 0x100000, (n,)) for i in range(3)]
    k(*xs, 0.75, stream=0x99)
    generic = last()
    table = _fastcall._FfiTable()
    table.float_params = 1 << 3
    table.kernel[0] = k.load(0).value

    class TensorObj(C.Structure):  # ffi.Tensor: TVMFFIObject header, then the DLTensor
        _fields_ = [("refs", C.c_uint64), ("type_index", C.c_int32), ("pad", C.c_uint32), ("deleter", C.c_void_p),
                    ("dl", tilec._lib.DLTensor)]
    objs = [TensorObj() for _ in range(3)]
    for o, x in zip(objs, xs):
        o.type_index, o.dl = 70, x._mt.dl_tensor

    def call(*vals):
        a = (FfiAny * len(vals))()
        for i, (t, v) in enumerate(vals):
            a[i].type_index = t
            a[i].v = struct.unpack("<Q", struct.pack("<d", v))[0] if t == 3 else v
        out = FfiAny()
        assert fn(None, a, len(vals), C.byref(out)) == 0
        assert out.type_index == 1, out.type_index
        return struct.unpack("<q", struct.pack("<Q", out.v))[0]
    head = [(1, C.addressof(table)), (1, 0x99)]
    ptrs = [(7, C.addressof(x._mt.dl_tensor)) for x in xs]
    before = fake.fake_cuda_launches()
    assert call(*head, *ptrs, (3, 0.75)) == 0 and last() == generic, (generic, last())
    assert call(*head, *[(70, C.addressof(o)) for o in objs], (3, 0.75)) == 0 and last() == generic
    assert call(*head, *ptrs, (1, 3)) == 0 and struct.unpack("<f", params_of(last())[9])[0] == 3.0  # int -> f32
    assert fake.fake_cuda_launches() == before + 3
    # declined, nothing launched: a float for an i32, a string, no handle on the device, no table
    before = fake.fake_cuda_launches()
    ki = tilec.compile(SCALE_I32, arch="sm_90a")["scale"]
    a, b = FakeCudaArray(0x7F8000000000, (7, 5), dtype=(0, 32)), FakeCudaArray(0x7F8000100000, (7, 5), dtype=(0, 32))
    ti = _fastcall._FfiTable()
    ti.kernel[0] = ki.load(0).value
    ab = [(7, C.addressof(a._mt.dl_tensor)), (7, C.addressof(b._mt.dl_tensor))]
    assert call((1, C.addressof(ti)), (1, 0), *ab, (3, 7.5)) == -1
    assert call((1, C.addressof(ti)), (1, 0), *ab, (8, 0)) == -1
    assert call((1, C.addressof(ti)), (1, 0), *ab, (1, 7)) == 0   # the same call with an int: taken
    ti.kernel[0] = None
    assert call((1, C.addressof(ti)), (1, 0), *ab, (1, 7)) == -1
    assert call((1, 0), (1, 0), *ab, (1, 7)) == -1
    assert fake.fake_cuda_launches() == before + 1
    # a check that fails in the launch: the tilec status (> 0), nothing launched
    bad = FakeCudaArray(0x7F7000600000, (300,))
    assert call(*head, *ptrs[:2], (7, C.addressof(bad._mt.dl_tensor)), (3, 1.0)) > 0
    assert fake.fake_cuda_launches() == before + 1
    print("ffi ABI checks: OK")


SCALE_I32 = """
kernel scale(X: tensor<i32>[R, C], Y: tensor<i32>[R, C], s: i32)
    tiles(BC = 8)
    grid(R, cdiv(C, BC))
{
    r = program_id(0);
    c0 = program_id(1) * BC;
    store(Y[r, c0 : c0 + BC], load(X[r, c0 : c0 + BC]) * s);
}
"""

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


COUNT = """
@zeroed(Cnt)
kernel count(X: tensor<f32>[N], Cnt: tensor<i32>[B])
    tiles(B = 128)
    grid(cdiv(N, B))
{
    i = program_id(0) * B;
    atomic_add(Cnt[0 : B], cast<i32>(load(X[i : i + B]) * 0.0) + 1);
}
"""


def check_autotune_zeroed(log):
    """tilec.autotune of a kernel with @zeroed(Cnt): the fake driver's log (FAKE_CUDA_LOG) shows a memset
    of zeros right before every launch, of the buffer the launch passes as Cnt (a scratch buffer, never
    the caller's), and Kernel.params says which tensor is @zeroed."""
    prog = tilec.compile(COUNT, arch="sm_90a")
    assert [p.zeroed for p in prog["count"].params] == [False, True], prog["count"].params
    assert not any(p.zeroed for p in tilec.compile(VADD, arch="sm_90a")["vadd"].params)
    x = FakeCudaArray(0x7F2000000000, (1000,))
    cnt = FakeCudaArray(0x7F2000100000, (128,), dtype=(0, 32))
    r = tilec.autotune(COUNT, "count", {"warps": [4, 8]}, (x, cnt), cache=False, progress=False, target_ms=5.0)
    assert r.nvalid == 2, r.log
    lines = open(log).read().splitlines()
    launches = [i for i, l in enumerate(lines) if l.startswith("count grid=")]
    assert len(launches) >= 2 * (1 + 3 + 1 + 5), lines  # first, estimate, warm-up, >= 5 timed: per config
    for i in launches:
        prev = lines[i - 1] if i else ""
        assert prev.startswith("memset 0x") and prev.endswith(" bytes=512 value=0"), (i, prev, lines[i])
        addr = int(prev.split()[1], 16)
        p = params_of(lines[i])
        assert struct.unpack("<Q", p[3])[0] == addr, "the memset is of the Cnt the launch takes"
        assert addr != 0x7F2000100000, "the caller's Cnt is never written"
    print("autotune zeroed checks: OK")


def check_pitch_repack(log):
    """TILEC_PITCH_REPACK=1 (set by the caller) through the package: gemm.tile's cutlass_gemm with A
    [300, 4100] bf16 (rows of 8200 bytes) copies A on the launch's stream into rows of 8208 bytes and
    launches the TMA kernel on the copy, then frees it on the stream: the same launch path as C's."""
    assert os.environ.get("TILEC_PITCH_REPACK") == "1"
    prog = tilec.compile(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gemm.tile"), arch="sm_90a")
    k = prog["cutlass_gemm"]
    a = FakeCudaArray(0x7F3000000000, (300, 4100), dtype=(4, 16))
    b = FakeCudaArray(0x7F3100000000, (4100, 520), dtype=(4, 16))
    c = FakeCudaArray(0x7F3200000000, (300, 520), dtype=(4, 16))
    k(a, b, c, stream=0x77)
    lines = [l for l in open(log).read().splitlines() if l.split()[0] in ("alloc_async", "memcpy2d", "free_async")
             or l.startswith("cutlass_gemm ")]
    kinds = [l.split()[0] for l in lines]
    assert kinds == ["alloc_async", "memcpy2d", "cutlass_gemm", "free_async"], lines
    alloc, copy, launch, free = lines
    assert all("stream=0x77" in l for l in lines), lines
    f = dict(x.split("=") for x in copy.split()[1:])
    assert f["src"] == "0x7f3000000000" and f["spitch"] == "8200" and f["dpitch"] == "8208", copy
    assert f["width"] == "8200" and f["height"] == "300", copy
    dst = int(f["dst"], 16)
    assert dst % 16 == 0 and int(alloc.split()[1], 16) <= dst, (alloc, copy)
    assert free.split()[1] == alloc.split()[1], (alloc, free)
    p = params_of(launch)
    assert struct.unpack("<Q", p[0])[0] == dst, "the kernel's A is not the copy"
    assert struct.unpack("<q", p[3])[0] == 4104 and struct.unpack("<q", p[4])[0] == 1
    assert "the launcher copies it" in prog.log, prog.log
    print("pitch repack checks: OK")


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


def bench_torch(n):
    """CPU time per launch of the same fake torch tensors: the generic path and the generated one."""
    global fake_torch
    fake_torch = install_fake_torch()
    rows = []
    for m in ("generic", "ctypes"):
        os.environ["TILEC_PY_LAUNCH"] = m
        k = tilec.compile(VADD, arch="sm_90a")["vadd"]
        xs = [FakeTorchTensor(0x7F0000000000 + i * 0x100000, (4096,)) for i in range(3)]
        k(*xs, 0.5)
        f = fake.fake_cuda_launches()
        dt = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                k(*xs, 0.5)
            dt = min(dt, time.perf_counter() - t0)
        assert fake.fake_cuda_launches() == f + 5 * n
        rows.append(f"{m} {dt / n * 1e6:.2f} us")
    print("launch from Python (fake torch tensors, 3 tensors + 1 scalar): " + ", ".join(rows))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--bench":
        bench(int(sys.argv[2]))
    elif len(sys.argv) > 2 and sys.argv[1] == "--bench-torch":
        bench_torch(int(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--ffi-abi":
        check_ffi_abi()
    elif len(sys.argv) > 1 and sys.argv[1] == "--tvm-ffi":
        check_tvm_ffi()
    elif len(sys.argv) > 2 and sys.argv[1] == "--fast":
        check_fast_path(sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "--autotune-zeroed":
        check_autotune_zeroed(sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "--pitch-repack":
        check_pitch_repack(sys.argv[2])
    else:
        check()
