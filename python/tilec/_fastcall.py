"""The fast launch of a Kernel: a function made for its parameter list, tried before the generic path.

Two ways (docs/python.md "Launch cost"), chosen by $TILEC_PY_LAUNCH:
  "ctypes"   Python code generated per kernel, then one ctypes call of tilec_kernel_launch without
             argtypes (pre-made c_void_p handle, buffer and stream).  Where torch has DLPack's C exchange
             API (torch.Tensor.__dlpack_c_exchange_api__, torch >= 2.10) each torch tensor is written
             as a DLTensor straight into the argument buffer by torch's dltensor_from_py_object_no_sync
             (one ctypes call a tensor, no Python object made); else ("ctypes-attrs" forces this) the
             tensors are read with data_ptr/get_device/shape/stride and the whole buffer written by one
             struct.pack_into whose constants are literals;
  "tvm-ffi"  apache-tvm-ffi's C converters (DLPack's C exchange API) hand the tensors to
             tilec_ffi_launch (lib/api/ffi_tvm.c); any DLPack producer, not only torch;
  "generic"  no fast path (the generic path alone: what each mechanism is measured against);
  "auto"     (default) tvm-ffi where it is installed and torch has the exchange API, else ctypes
             (mode() says why; the H200 numbers are in bench/RESULTS.md).
A fast function returns False, before any side effect, whenever it does not take the call (not all
tensors on one CUDA device of its kind, a rank or dtype it cannot map, the kernel not loaded there
yet, a scalar of another type); the generic path then runs the call and gives the diagnostics."""
from __future__ import annotations

import ctypes as C
import os
from typing import Any, Callable, Dict, List, Optional

from . import _lib

_TENSOR, _I64, _F64 = 0, 2, 4  # tilec_arg_kind
_kDLCUDA = 2
_MAX_DEVICES = 64  # TILEC_FFI_MAX_DEVICES

# tilec_kernel_launch without argtypes: the caller passes c_void_p objects, so ctypes converts nothing
_raw_launch = _lib.lib._FuncPtr(("tilec_kernel_launch", _lib.lib))
_raw_launch.restype = C.c_int


def mode(torch_tensor: Optional[type]) -> str:
    """The fast path to make: $TILEC_PY_LAUNCH, or for "auto" tvm-ffi where apache-tvm-ffi is installed
    and torch has DLPack's C exchange API (tvm-ffi then reads torch tensors in C: 4.4 us a launch on
    the H200 against 6.1 for the ctypes path, bench/RESULTS.md; without the API tvm-ffi would go
    through torch's Python DLPack export, or compile an extension at import), else ctypes."""
    m = os.environ.get("TILEC_PY_LAUNCH", "auto")
    if m not in ("auto", "ctypes", "ctypes-attrs", "tvm-ffi", "generic"):
        raise ValueError(f"TILEC_PY_LAUNCH={m!r}: one of auto, ctypes, ctypes-attrs, tvm-ffi, generic")
    if m != "auto":
        return m
    if torch_tensor is not None and torch_exchange(torch_tensor) is not None and _have_tvm_ffi():
        return "tvm-ffi"
    return "ctypes"


def _have_tvm_ffi() -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec("tvm_ffi") is not None
    except (ImportError, ValueError):
        return False


class _Streams(dict):
    """CUstream int -> c_void_p, made once per stream (a ctypes call without argtypes takes an int as a
    C int, so a 64-bit stream must come as a c_void_p)."""

    def __missing__(self, s: int) -> C.c_void_p:
        if len(self) > 256:
            self.clear()
        v = self[s] = C.c_void_p(s)
        return v


def torch_launcher(kernel: Any, torch_tensor: type, dtype_words: Dict[Any, int], current_stream: Callable[[int], int],
                   fail: Callable[[Any, int], None]) -> Callable[[tuple, Optional[int]], bool]:
    """The generated ctypes fast path of `kernel` for torch tensors on a CUDA device."""
    params, buf = kernel.params, kernel._buf
    n = len(params)
    names = [f"a{k}" for k in range(n)]
    tens = [k for k, p in enumerate(params) if p.is_tensor]
    body: List[str] = [f"def fast(args, stream):", "    try:", f"        {', '.join(names)}{',' if n == 1 else ''} = args"]
    if tens:
        body.append("        if " + " or ".join(f"type(a{k}) is not T" for k in tens) + ": return False")
        for k in tens:
            body.append(f"        d{k} = a{k}.get_device()")
        body.append("        if (" + " | ".join(f"d{k}" for k in tens) + ") < 0: return False")
    for k in tens:
        r = params[k].rank
        if r:
            sh = ", ".join(f"s{k}_{d}" for d in range(r))
            st = ", ".join(f"t{k}_{d}" for d in range(r))
            comma = "," if r == 1 else ""
            body.append(f"        {sh}{comma} = a{k}.shape")
            body.append(f"        {st}{comma} = a{k}.stride()")
        else:
            body.append(f"        if a{k}.dim() != 0: return False")
        body.append(f"        w{k} = DTW[a{k}.dtype]")
    for k, p in enumerate(params):
        if p.is_tensor:
            continue
        if _is_float(p):
            body.append(f"        if type(a{k}) is not float: a{k} = float(a{k})")
        else:
            body.append(f"        if type(a{k}) is not int: return False")
    body.append("    except (ValueError, TypeError, KeyError):")
    body.append("        return False")
    dev = f"d{tens[0]}" if tens else "0"
    body.append(f"    h = handles.get({dev})")
    body.append("    if h is None: return False")
    body.append(f"    if stream is None: stream = cur({dev})")
    # the values of the whole buffer in its order (the layout of _ArgBuffer, with the dtype as one u32)
    fmt = ["<"]
    vals: List[str] = []
    narg = 16 * n
    base_t = buf.addr + narg
    base_i = base_t + 48 * len(tens)
    ti = 0
    for k, p in enumerate(params):
        if p.is_tensor:
            fmt.append("i4xQ")
            vals += [str(_TENSOR), str(base_t + 48 * ti)]
            ti += 1
        else:
            fmt.append("i4xd" if _is_float(p) else "i4xq")
            vals += [str(_F64 if _is_float(p) else _I64), f"a{k}"]
    ii = 0
    for k in tens:
        r = params[k].rank
        fmt.append("QiiiIQQQ")
        vals += [f"a{k}.data_ptr()", str(_kDLCUDA), f"d{k}", str(r), f"w{k}", str(base_i + 8 * ii),
                 str(base_i + 8 * (ii + r)), "0"]
        ii += 2 * r
    nint = 0
    for k in tens:
        r = params[k].rank
        fmt.append(f"{2 * r}q")
        vals += [f"s{k}_{d}" for d in range(r)] + [f"t{k}_{d}" for d in range(r)]
        nint += 2 * r
    body.append(f"    pack(BUF, 0, {', '.join(vals)})")
    body.append(f"    st = launch(h, ADDR, {n}, STREAMS[stream] if stream else None)")
    body.append("    if st: fail(h, st)")
    body.append("    return True")
    import struct
    s = struct.Struct("".join(fmt))
    assert s.size == buf.struct.size, (s.size, buf.struct.size)
    env: Dict[str, Any] = {"T": torch_tensor, "DTW": dtype_words, "handles": kernel._handles, "cur": current_stream,
                           "pack": s.pack_into, "BUF": buf.buf, "ADDR": C.c_void_p(buf.addr), "launch": _raw_launch,
                           "STREAMS": _Streams(), "fail": fail}
    exec("\n".join(body), env)  # noqa: S102 - the source is made above from the parameter list alone
    fast = env["fast"]
    fast.source = "\n".join(body)  # type: ignore[attr-defined]
    return fast


# ---- torch's DLPack C exchange API -----------------------------------------------------------------
_DLTensorFromPyObject = C.PYFUNCTYPE(C.c_int, C.py_object, C.c_void_p)  # holds the GIL: it reads the object
_exchange: Dict[type, Any] = {}


def torch_exchange(torch_tensor: type) -> Any:
    """torch's dltensor_from_py_object_no_sync as a ctypes function, or None where torch has no
    DLPack C exchange API (DLPackExchangeAPI of dlpack.h 1.3: a header {version, prev_api}, then the
    allocator, managed_tensor_from / to_py_object_no_sync, dltensor_from_py_object_no_sync)."""
    if torch_tensor in _exchange:
        return _exchange[torch_tensor]
    fn = None
    try:
        api = getattr(torch_tensor, "__dlpack_c_exchange_api__", None)
        if api is not None and type(api).__name__ == "PyCapsule":
            get = C.pythonapi.PyCapsule_GetPointer
            get.restype, get.argtypes = C.c_void_p, [C.py_object, C.c_char_p]
            addr = get(api, b"dlpack_exchange_api")
        else:
            addr = getattr(torch_tensor, "__c_dlpack_exchange_api__", None)  # torch 2.9: an int
            addr = addr if isinstance(addr, int) else None
        if addr:
            major = C.c_uint32.from_address(addr).value
            f = C.c_void_p.from_address(addr + 40).value
            if major == 1 and f:
                fn = _DLTensorFromPyObject(f)
    except (AttributeError, ValueError, OSError):  # no usable API: the attribute path
        fn = None
    _exchange[torch_tensor] = fn
    return fn


def torch_exchange_launcher(kernel: Any, torch_tensor: type, to_dltensor: Any, current_stream: Callable[[int], int]
                            ) -> Callable[[tuple, Optional[int]], bool]:
    """The ctypes fast path through torch's exchange API: the tensors' DLTensors written in place by
    torch, the scalars set through ctypes views of their slots; every other byte of the buffer fixed."""
    params, buf = kernel.params, kernel._buf
    n = len(params)
    tens = [k for k, p in enumerate(params) if p.is_tensor]
    narg = 16 * n
    # a buffer of its own: the arg array (kinds, tensor pointers) written once
    size = narg + 48 * len(tens)
    mem = C.create_string_buffer(max(size, 16))
    base = C.addressof(mem)
    env: Dict[str, Any] = {"T": torch_tensor, "handles": kernel._handles, "cur": current_stream, "to_dl": to_dltensor,
                           "ADDR": C.c_void_p(base), "launch": _raw_launch, "STREAMS": _Streams()}
    lines = ["def fast(args, stream):", "    try:", f"        {', '.join(f'a{k}' for k in range(n))}{',' if n == 1 else ''} = args",
             "    except ValueError:", "        return False"]
    if tens:
        lines.append("    if " + " or ".join(f"type(a{k}) is not T" for k in tens) + ": return False")
        lines.append(f"    d = a{tens[0]}.get_device()")
    else:
        lines.append("    d = 0")
    lines += ["    h = handles.get(d)", "    if h is None: return False", "    try:"]
    ti = 0
    for k, p in enumerate(params):
        kind = C.c_int.from_address(base + 16 * k)
        if p.is_tensor:
            kind.value = _TENSOR
            C.c_void_p.from_address(base + 16 * k + 8).value = base + narg + 48 * ti
            lines.append(f"        if to_dl(a{k}, D{k}): return False")
            env[f"D{k}"] = C.c_void_p(base + narg + 48 * ti)
            ti += 1
        else:
            is_f = _is_float(p)
            kind.value = _F64 if is_f else _I64
            env[f"V{k}"] = (C.c_double if is_f else C.c_int64).from_address(base + 16 * k + 8)
            lines.append(f"        V{k}.value = a{k}")  # TypeError: a float for an int, a non-number
    lines += ["    except (TypeError, ValueError, RuntimeError, BufferError):", "        return False",
              "    if stream is None: stream = cur(d)",
              f"    return not launch(h, ADDR, {n}, STREAMS[stream] if stream else None)"]
    src = "\n".join(lines)
    exec(src, env)  # noqa: S102 - the source is made above from the parameter list alone
    fast = env["fast"]
    fast.source, fast.mem = src, mem  # type: ignore[attr-defined]  # the buffer lives with the function
    return fast


def _is_float(p: Any) -> bool:
    return p.dtype.startswith(("f", "bf"))


# ---- tvm-ffi ---------------------------------------------------------------------------------------
_ffi_fn: Any = None


def _ffi_function() -> Any:
    """tilec_ffi_launch as a tvm_ffi.Function (imports tvm_ffi: ImportError when it is not installed)."""
    global _ffi_fn
    if _ffi_fn is None:
        import tvm_ffi
        addr = C.cast(_lib.lib.tilec_ffi_launch, C.c_void_p).value
        _ffi_fn = tvm_ffi.Function.__from_extern_c__(addr)
    return _ffi_fn


class _FfiTable(C.Structure):
    _fields_ = [("float_params", C.c_uint64), ("kernel", C.c_void_p * _MAX_DEVICES)]


def ffi_launcher(kernel: Any, torch_tensor: Optional[type]) -> Callable[[tuple, Optional[int]], bool]:
    """The tvm-ffi fast path of `kernel` (its table of handles is made anew when a device is loaded).
    Without a stream given it takes only calls whose first tensor is a torch tensor: tvm-ffi then
    launches on torch's current stream (DLPack's exchange API); for other producers tvm-ffi sets no
    stream, and the generic path keeps their current stream (CuPy's)."""
    f = _ffi_function()
    first = next((k for k, p in enumerate(kernel.params) if p.is_tensor), -1)
    table = _FfiTable()
    for k, p in enumerate(kernel.params):
        if not p.is_tensor and _is_float(p):
            table.float_params |= 1 << k
    for dev, h in kernel._handles.items():
        if 0 <= dev < _MAX_DEVICES:
            table.kernel[dev] = h.value
    addr = C.addressof(table)

    def fast(args: tuple, stream: Optional[int]) -> bool:
        if stream is None and (first < 0 or len(args) <= first or type(args[first]) is not torch_tensor):
            return False
        try:
            return f(addr, stream, *args) == 0
        except (TypeError, ValueError, BufferError):  # an argument tvm-ffi cannot convert
            return False

    fast.table = table  # type: ignore[attr-defined]  # kept alive with the function
    return fast
