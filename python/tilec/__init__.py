"""tilec from Python: compile .tile kernels, launch them on PyTorch / CuPy / JAX tensors (DLPack),
run them in the CPU interpreter on NumPy arrays, autotune them, register them as torch ops.

    import tilec, torch
    prog = tilec.compile("examples/rmsnorm.tile", defines={"BC": 1024})
    prog["rmsnorm"](x, w, y, 1e-5)                # on torch.cuda.current_stream()

Everything goes through libtilec.so (ctypes; nothing to compile at install).  docs/python.md.
"""
from __future__ import annotations

import ctypes as C
import operator
import os
import re
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _fastcall, _lib
from ._lib import lib

__all__ = ["compile", "interpret", "autotune", "Program", "Kernel", "Param", "Diagnostic", "TilecError",
           "TuneResult", "register_torch_op", "emit_c", "version", "library_path", "bf16_to_f32", "f32_to_bf16"]

library_path: str = _lib.library_path

# tilec_stage
_AST, _IR, _LLVM, _PTX, _CUBIN = range(5)
# tilec_arg_kind
_TENSOR, _I32, _I64, _F32, _F64 = range(5)
# DLPack device types and dtype codes
_kDLCPU, _kDLCUDA, _kDLCUDAHost, _kDLCUDAManaged = 1, 2, 3, 13
_kDLInt, _kDLUInt, _kDLFloat, _kDLBfloat, _kDLBool = 0, 1, 2, 4, 6
_SEVERITY = ("error", "warning", "note", "remark")


def version() -> str:
    """The loaded library's version, e.g. "tilec 0.1.0 (LLVM 19.1.7)"."""
    return lib.tilec_version_string().decode()


# ---- errors --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of a compile: `rendered` is "file:line:col: error: msg" + source line + caret."""
    severity: str
    file: str
    line: int
    column: int
    message: str
    rendered: str

    def __str__(self) -> str:
        return self.rendered


class TilecError(RuntimeError):
    """A failed tilec call.  `status` is the tilec_status name ("TILEC_ERROR_INPUT", ...), `diagnostics`
    the compile's structured diagnostics (file, line, column, caret text; a launch-time error's parsed from its
    text), `log` the program log."""

    def __init__(self, message: str, status: str = "", diagnostics: Sequence[Diagnostic] = (), log: str = ""):
        super().__init__(message)
        self.status = status
        self.diagnostics: List[Diagnostic] = list(diagnostics) or _diagnostics_of_text(message)
        self.log = log


_DIAG_LINE = re.compile(r"^(.+?):(\d+):(\d+): (error|warning|note|remark): (.*)$")


def _diagnostics_of_text(message: str) -> List[Diagnostic]:
    """The diagnostics a message renders (a launch-time check's `require` failure, an interpreter error: they
    come as text, not as a compile's structured list), each with the lines up to the next one."""
    out: List[Diagnostic] = []
    for line in message.splitlines():
        m = _DIAG_LINE.match(line)
        if m:
            out.append(Diagnostic(m.group(4), m.group(1), int(m.group(2)), int(m.group(3)), m.group(5), line))
        elif out:
            out[-1] = Diagnostic(out[-1].severity, out[-1].file, out[-1].line, out[-1].column, out[-1].message,
                                 out[-1].rendered + "\n" + line)
    return out


def _status_name(st: int) -> str:
    return lib.tilec_status_string(st).decode().split(":")[0]


def _diagnostics(handle: int) -> List[Diagnostic]:
    out = []
    d = _lib.Diag()
    for i in range(lib.tilec_program_num_diagnostics(handle)):
        if lib.tilec_program_diagnostic(handle, i, C.byref(d)) == 0:
            s = lambda b: b.decode(errors="replace") if b else ""
            out.append(Diagnostic(_SEVERITY[d.severity] if 0 <= d.severity < 4 else "error", s(d.file), d.line,
                                  d.column, s(d.message), s(d.rendered)))
    return out


def _mark(handle: Any) -> Tuple[int, int]:
    """Where a program's diagnostics and log end now: an error raised after a later call shows only what
    that call added (the program keeps every earlier call's too)."""
    return lib.tilec_program_num_diagnostics(handle), len(lib.tilec_program_log(handle))


def _raise(st: int, what: str, handle: Optional[int] = None, since: Tuple[int, int] = (0, 0)) -> None:
    log = lib.tilec_program_log(handle)[since[1]:].decode(errors="replace") if handle else ""
    diags = _diagnostics(handle)[since[0]:] if handle else []
    # the errors, each with the notes after it (a note's hint: "Triton's tl.arange(0, N) is ...")
    errors, keep = [], False
    for d in diags:
        keep = d.severity == "error" or (d.severity == "note" and keep)
        if keep:
            errors.append(d)
    detail = "\n".join(d.rendered.rstrip("\n") for d in errors) if errors else log.strip()[-4000:]
    raise TilecError(f"{what}: {lib.tilec_status_string(st).decode()}" + (f"\n{detail}" if detail else ""),
                     _status_name(st), diags, log)


def _check(st: int, what: str, handle: Optional[int] = None, since: Tuple[int, int] = (0, 0)) -> None:
    if st != 0:
        _raise(st, what, handle, since)


# ---- options -------------------------------------------------------------------------------------
# The keys tilec_options_set knows and what each takes, from the library's own table (lib/api/options.c
# option_keys: tilec_options_key / tilec_options_takes), for the message of a refused option (the C call
# says only TILEC_ERROR_USAGE).
def _option_keys() -> List[str]:
    keys, i = [], 0
    while True:
        k = lib.tilec_options_key(i)
        if not k:
            return keys
        keys.append(k.decode())
        i += 1


def _make_options(defines: Optional[Mapping[str, int]], options: Mapping[str, Any]) -> C.c_void_p:
    o = C.c_void_p()
    _check(lib.tilec_options_create(C.byref(o)), "options")
    try:
        for k, v in (defines or {}).items():
            _check(lib.tilec_options_define(o, k.encode(), int(v)), f"define {k}")
        for k, v in options.items():
            if v is None:
                continue
            key = k.replace("_", "-")
            if key == "arch":
                st = lib.tilec_options_set_arch(o, str(v).encode())
            elif key == "opt-level":
                st = lib.tilec_options_set_opt_level(o, int(v))
            elif key == "line-info":
                st = lib.tilec_options_set_line_info(o, 1 if v else 0)
            elif key == "pipeline":
                st = lib.tilec_options_set_pipeline(o, str(v).encode())
            else:
                val = ("1" if v else "0") if isinstance(v, bool) else str(v)
                st = lib.tilec_options_set(o, key.encode(), val.encode())
            if st != 0:
                takes = lib.tilec_options_takes(key.encode())
                why = (f"{k} takes {takes.decode()}" if takes else
                       f"no option is called {k!r} (options: {', '.join(o.replace('-', '_') for o in _option_keys())})")
                raise TilecError(f"option {k}={v!r}: {lib.tilec_status_string(st).decode()}: {why}",
                                 _status_name(st))
    except BaseException:
        lib.tilec_options_destroy(o)
        raise
    return o


def _is_path(source_or_path: Union[str, "os.PathLike[str]"]) -> bool:
    if isinstance(source_or_path, os.PathLike):
        return True
    s = str(source_or_path)
    # (docs/python.md: a string with a newline or '{' is source text, anything else a path -- every kernel has a '{',
    # so a missing file says "cannot read", not a parse error at its name)
    return "\n" not in s and "{" not in s


# ---- parameters ----------------------------------------------------------------------------------
TILEC_PARAM_ZEROED = 1  # tilec_program_param_flags (include/tilec.h)

@dataclass(frozen=True)
class Param:
    """One kernel parameter: a tensor (dtype, dims: symbol names or constants) or a scalar."""
    name: str
    is_tensor: bool
    dtype: str
    rank: int
    dims: Tuple[Union[str, int], ...]
    written: bool
    dl_code: int
    dl_bits: int
    zeroed: bool = False  # @zeroed(NAME): the kernel needs zeros in it on entry (docs/language.md)

    def __str__(self) -> str:
        if not self.is_tensor:
            return f"{self.name}: {self.dtype}"
        return f"{self.name}: tensor<{self.dtype}>[{', '.join(str(d) for d in self.dims)}]"


# ---- programs ------------------------------------------------------------------------------------
class Program:
    """A compiled .tile file (front-end and passes run; PTX made on demand).  `program["name"]` is a
    kernel; `.ptx`, `.ir`, `.llvm`, `.cubin`, `.log`, `.explain()`."""

    def __init__(self, source_or_path: Union[str, "os.PathLike[str]"], defines: Optional[Mapping[str, int]] = None,
                 *, name: Optional[str] = None, _opts: Optional[C.c_void_p] = None, **options: Any):
        self._src = os.fspath(source_or_path)
        self._is_path = _is_path(source_or_path)
        self.defines: Dict[str, int] = dict(defines or {})
        self.options: Dict[str, Any] = dict(options)
        self._h = C.c_void_p()
        o = _opts if _opts is not None else _make_options(self.defines, self.options)
        try:
            if self._is_path:
                st = lib.tilec_program_create_from_file(C.byref(self._h), self._src.encode(), o)
                if st != 0 and not self._h:
                    raise TilecError(f"cannot read {self._src}: {lib.tilec_status_string(st).decode()}",
                                     _status_name(st))
            else:
                st = lib.tilec_program_create(C.byref(self._h), self._src.encode(), (name or "<string>").encode(), o)
        finally:
            lib.tilec_options_destroy(o)
        self.name = self._src if self._is_path else (name or "<string>")
        _check(st, f"compile {self.name}", self._h)
        _check(lib.tilec_program_compile(self._h, _IR), f"compile {self.name}", self._h)
        self._kernels: Dict[str, Kernel] = {}

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h and lib is not None:
            lib.tilec_program_destroy(h)
            self._h = None

    @property
    def kernel_names(self) -> List[str]:
        """The kernels of the file, in order."""
        return [lib.tilec_program_kernel_name(self._h, i).decode() for i in range(lib.tilec_program_num_kernels(self._h))]

    def __getitem__(self, kernel: str) -> "Kernel":
        k = self._kernels.get(kernel)
        if k is None:
            names = self.kernel_names
            if kernel not in names:
                raise KeyError(f"no kernel named {kernel!r} in {self.name} (kernels: {', '.join(names)})")
            k = self._kernels[kernel] = Kernel(self, names.index(kernel), kernel)
        return k

    def __iter__(self):
        return iter(self.kernel_names)

    def _text(self, stage: int) -> str:
        m = _mark(self._h)
        _check(lib.tilec_program_compile(self._h, stage), f"compile {self.name}", self._h, m)
        t = lib.tilec_program_text(self._h, stage)
        return t.decode() if t else ""

    @property
    def ir(self) -> str:
        """The tile IR after the pass pipeline."""
        return self._text(_IR)

    @property
    def ptx(self) -> str:
        """The PTX of every kernel (what `tilec FILE.tile -o X.ptx --tma-fallback=form` writes; with
        tma_fallback="entry", the CLI's default, each TMA form's no-TMA form follows as the entry
        KERNEL__notma, docs/cli.md "Two entries")."""
        return self._text(_PTX)

    @property
    def llvm(self) -> str:
        """The LLVM IR (NVPTX).  It is printed only on request (it costs compile time), so a program whose
        PTX was made first is compiled again, to the LLVM stage, in a copy."""
        t = lib.tilec_program_text(self._h, _LLVM)
        if t:
            return t.decode()
        return self._copy()._text(_LLVM)

    def _copy(self, **more: Any) -> "Program":
        return Program(self._src, self.defines, name=None if self._is_path else self.name, **{**self.options, **more})

    @property
    def cubin(self) -> bytes:
        """The cubin for the program's arch, by ptxas (TilecError when no ptxas is found)."""
        m = _mark(self._h)
        _check(lib.tilec_program_compile(self._h, _CUBIN), f"compile {self.name} to a cubin", self._h, m)
        data, size = C.c_void_p(), C.c_size_t()
        _check(lib.tilec_program_get_binary(self._h, _CUBIN, C.byref(data), C.byref(size)), "cubin", self._h)
        return C.string_at(data, size.value)

    @property
    def log(self) -> str:
        """Diagnostics, print-after dumps, explain lines and timings, in order."""
        return lib.tilec_program_log(self._h).decode(errors="replace")

    def explain(self) -> str:
        """Every routing / scheduling / layout decision, bank conflicts, alignment facts, registers and
        spills (ptxas, where found): what `tilec --explain` prints, for this program's options."""
        p = self._copy(explain=True)
        p._text(_PTX)
        return p.log

    def emit_c(self, name: str) -> Tuple[str, str]:
        """The AOT launchers of every kernel (docs/aot.md): (NAME.h text, NAME.c text)."""
        h, c = C.c_void_p(), C.c_void_p()
        # as this program's options compile it: a TMA form with its no-TMA form beside it (the default), or
        # one image a kernel with tma_fallback="inline" (docs/aot.md "Two images")
        _check(lib.tilec_program_emit_c(self._h, name.encode(), C.byref(h), C.byref(c)), "emit C", self._h)
        try:
            return C.string_at(h).decode(), C.string_at(c).decode()
        finally:
            lib.tilec_free(h)
            lib.tilec_free(c)

    def __repr__(self) -> str:
        return f"<tilec.Program {self.name} kernels={self.kernel_names}>"


def compile(source_or_path: Union[str, "os.PathLike[str]"], defines: Optional[Mapping[str, int]] = None,
            *, name: Optional[str] = None, **options: Any) -> Program:
    """Compile a .tile source text or file.

    defines: tile constants to override (as `-D NAME=VALUE`).  options: arch ("sm_90a"; default the GPU
    found, else sm_90a), opt_level, line_info, pipeline ("simple" | "multistage" | "cutlass"), warps,
    stages, fp8_acc ("promote" | "fast"), and any key of tilec_options_set (underscores for dashes).
    A string with a newline or a brace is source text; otherwise a path.  Errors in the source raise
    TilecError with `.diagnostics`."""
    return Program(source_or_path, defines, name=name, **options)


def emit_c(source_or_path: Union[str, "os.PathLike[str]"], name: str, defines: Optional[Mapping[str, int]] = None,
           **options: Any) -> Tuple[str, str]:
    """compile(...).emit_c(name): the AOT launcher header and source."""
    return compile(source_or_path, defines, **options).emit_c(name)


# ---- arguments ---------------------------------------------------------------------------------------
_torch_Tensor: Any = None     # torch.Tensor once torch is imported (never imported by tilec itself)
_torch_dtypes: Dict[Any, Tuple[int, int]] = {}
_torch_stream: Any = None


def _torch_ready() -> bool:
    """Bind torch's types when torch is already imported by the caller."""
    global _torch_Tensor, _torch_stream
    if _torch_Tensor is not None:
        return True
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    t = torch
    for name, code in (("bfloat16", (_kDLBfloat, 16)), ("float16", (_kDLFloat, 16)), ("float32", (_kDLFloat, 32)),
                       ("float64", (_kDLFloat, 64)), ("int8", (_kDLInt, 8)), ("int16", (_kDLInt, 16)),
                       ("int32", (_kDLInt, 32)), ("int64", (_kDLInt, 64)), ("uint8", (_kDLUInt, 8)),
                       ("bool", (_kDLBool, 8)), ("float8_e4m3fn", (_kDLUInt, 8)), ("float8_e5m2", (_kDLUInt, 8))):
        if hasattr(t, name):
            _torch_dtypes[getattr(t, name)] = code
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    _torch_stream = raw if raw is not None else (lambda dev: torch.cuda.current_stream(dev).cuda_stream)
    _torch_Tensor = torch.Tensor
    return True


class _DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", _lib.DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


_PyCapsule_GetPointer = C.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = C.c_void_p
_PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]


def _row_major(shape: Sequence[int]) -> Tuple[int, ...]:
    st, s = [], 1
    for n in reversed(shape):
        st.append(s)
        s *= max(int(n), 1)
    return tuple(reversed(st))


_NUMPY_CODES = {"f": _kDLFloat, "i": _kDLInt, "u": _kDLUInt, "b": _kDLBool}


_DLT = struct.Struct("<QiiiBBHQQQ")
_Q = [struct.Struct(f"<{n}q") for n in range(9)]
_Bytes48 = C.c_char * 48
_BytesN = [C.c_char * (8 * n) for n in range(9)]
_dlpack_fns: Dict[type, Tuple[Any, Any]] = {}


def _numpy_code(a: Any, param: Param) -> Tuple[int, int]:
    dt = a.dtype
    if dt.name == "bfloat16":  # ml_dtypes
        return (_kDLBfloat, 16)
    if dt.kind == "u" and dt.itemsize == 2 and param.dtype == "bf16":
        return (_kDLBfloat, 16)  # raw bf16 bits
    if param.dtype in ("bf16", "f8e4m3", "f8e5m2") and dt.kind == "f":
        # NumPy has no such type: the library would only say "dtype f32, expected bf16"
        how = ("tilec.f32_to_bf16(x) (uint16 bit patterns) or an ml_dtypes.bfloat16 array" if param.dtype == "bf16"
               else "its bytes as a uint8 array")
        raise TypeError(f"argument {param.name}: a {dt} array for a {param.dtype} tensor; NumPy has no {param.dtype}: "
                        f"pass {how}")
    if dt.kind in _NUMPY_CODES:
        return (_NUMPY_CODES[dt.kind], 8 * dt.itemsize)
    raise TypeError(f"argument {param.name}: NumPy dtype {dt} has no tilec dtype")


def _describe(a: Any, param: Param, stream: Optional[int]) -> Tuple[int, int, int, int, int, Tuple[int, ...],
                                                                   Tuple[int, ...], int, Any]:
    """(data, device_type, device_id, dtype code, bits, shape, strides, byte_offset, keepalive) of a
    tensor argument: torch tensors directly, NumPy arrays through their array interface (bf16 as
    uint16 or ml_dtypes.bfloat16), anything else through __dlpack__(stream=...)."""
    if _torch_Tensor is not None and isinstance(a, _torch_Tensor):
        code = _torch_dtypes.get(a.dtype)
        if code is None:
            raise TypeError(f"argument {param.name}: torch dtype {a.dtype} has no tilec dtype")
        d = a.get_device()
        return (a.data_ptr(), _kDLCUDA if d >= 0 else _kDLCPU, max(d, 0), code[0], code[1], tuple(a.shape),
                tuple(a.stride()), 0, a)
    if type(a).__module__ == "numpy" and hasattr(a, "__array_interface__"):
        code = _numpy_code(a, param)
        if param.written and not a.flags.writeable:
            raise ValueError(f"argument {param.name}: the kernel writes this tensor, but the array is read-only")
        isz = a.dtype.itemsize
        for s in a.strides:
            if s % isz:
                raise ValueError(f"argument {param.name}: strides {a.strides} are not multiples of the element size")
        return (a.__array_interface__["data"][0], _kDLCPU, 0, code[0], code[1], tuple(a.shape),
                tuple(s // isz for s in a.strides), 0, a)
    fns = _dlpack_fns.get(type(a))
    if fns is None:
        fns = _dlpack_fns[type(a)] = (getattr(type(a), "__dlpack__", None), getattr(type(a), "__dlpack_device__", None))
    dlpack, device_fn = fns
    if dlpack is None:
        raise TypeError(f"argument {param.name}: expected a tensor (an object with __dlpack__, a torch tensor or a "
                        f"NumPy array), got {type(a).__name__}")
    dev_type = device_fn(a)[0] if device_fn is not None else _kDLCPU
    if dev_type == _kDLCUDA or dev_type == _kDLCUDAManaged:
        # DLPack: the producer orders its pending work before `stream` (1 = the legacy default stream)
        cap = dlpack(a, stream=stream if stream else 1)
    else:
        cap = dlpack(a)
    ptr = _PyCapsule_GetPointer(cap, b"dltensor")
    data, dt, di, nd, code, bits, _lanes, shp, strd, off = _DLT.unpack_from(_Bytes48.from_address(ptr))
    if not 0 <= nd <= 8:
        raise ValueError(f"argument {param.name}: a DLPack tensor of rank {nd}")
    q = _Q[nd]
    shape = q.unpack_from(_BytesN[nd].from_address(shp)) if nd else ()
    strides = q.unpack_from(_BytesN[nd].from_address(strd)) if strd and nd else _row_major(shape)
    return (data, dt, di, code, bits, shape, strides, off, (cap, a))


def _scalar(a: Any, p: Param, is_float: bool) -> Union[int, float]:
    """A scalar argument as the float or int the buffer takes: a Python number, a NumPy scalar or a 0-d
    array.  No float for an integer parameter (even a NumPy one: no silent truncation), and no
    strings, None or other objects (a TypeError naming the parameter)."""
    if isinstance(a, (str, bytes)) or a is None:
        raise TypeError(f"argument {p.name}: {p.dtype} parameter, got {type(a).__name__} {a!r}")
    if is_float:
        try:
            return float(a)
        except (TypeError, ValueError):
            raise TypeError(f"argument {p.name}: {p.dtype} parameter, got {type(a).__name__}") from None
    if isinstance(a, bool) or type(a).__name__ in ("bool_", "bool"):  # NumPy's bool has no __index__
        return int(a)
    try:
        return operator.index(a)  # int, NumPy integers and 0-d integer arrays; not floats
    except TypeError:
        pass
    kind = getattr(getattr(a, "dtype", None), "kind", "")
    if isinstance(a, float) or kind == "f":
        raise TypeError(f"argument {p.name}: {p.dtype} parameter, got the float {a!r}") from None
    raise TypeError(f"argument {p.name}: {p.dtype} parameter, got {type(a).__name__}") from None


def _is_float(p: Param) -> bool:
    return p.dtype.startswith(("f", "bf"))  # f16 bf16 f32 f8e4m3 f8e5m2


class _ArgBuffer:
    """tilec_arg[n], then a DLTensor per tensor parameter, then its sizes and strides, in one buffer
    written by a single struct.pack_into per call (the pointers inside it are fixed)."""

    def __init__(self, params: Sequence[Param]):
        fmt = ["<"]
        for p in params:
            fmt.append("i4xQ" if p.is_tensor else ("i4xd" if _is_float(p) else "i4xq"))
        narg = 16 * len(params)
        ntens = sum(1 for p in params if p.is_tensor)
        nint = sum(2 * p.rank for p in params if p.is_tensor)
        size = narg + 48 * ntens + 8 * nint
        self.buf = C.create_string_buffer(max(size, 16))
        self.addr = C.addressof(self.buf)
        base_t, base_i = self.addr + narg, self.addr + narg + 48 * ntens
        template: List[Any] = []
        self.slots: List[Tuple[int, int]] = []  # per param: index of its first variable value, rank
        ti = ii = 0
        for p in params:
            if p.is_tensor:
                template += [_TENSOR, base_t + 48 * ti]
                ti += 1
            else:
                template += [_F64 if _is_float(p) else _I64, 0]
        ti = 0
        for p in params:
            if not p.is_tensor:
                continue
            fmt.append("QiiiBBHQQQ")
            shp, strd = base_i + 8 * ii, base_i + 8 * (ii + p.rank)
            template += [0, 0, 0, p.rank, 0, 0, 1, shp, strd, 0]
            ii += 2 * p.rank
            ti += 1
        fmt.append(f"{nint}q")
        template += [0] * nint
        self.struct = struct.Struct("".join(fmt))
        assert self.struct.size == size, (self.struct.size, size)
        self.template = template
        # where each parameter's variable values go in `template`
        self.index: List[Tuple[int, int, int]] = []  # (scalar slot | DLTensor first slot, shape slot, rank)
        t_first = 2 * len(params)
        i_first = t_first + 10 * ntens
        ti = ii = 0
        for k, p in enumerate(params):
            if p.is_tensor:
                self.index.append((t_first + 10 * ti, i_first + ii, p.rank))
                ti += 1
                ii += 2 * p.rank
            else:
                self.index.append((2 * k + 1, -1, 0))


class Kernel:
    """One kernel of a Program: call it with tensors and scalars in parameter order.

    `kernel(*args, grid=None, stream=None)` launches on the GPU of its tensors (loaded there at the
    first call) on `stream` (a CUstream as an int), by default the framework's current stream
    (torch.cuda.current_stream(); CuPy's current stream; else the legacy default stream).  `grid`
    (1-3 ints) replaces the kernel's grid clause.  A handle is for one thread at a time.

    From the second call on a fast path made for the parameter list takes the call when it can
    (tvm-ffi or generated ctypes code, $TILEC_PY_LAUNCH; _fastcall.py, docs/python.md "Launch
    cost"): it launches exactly what this generic path would, and leaves every other call to it."""

    def __init__(self, program: Program, index: int, name: str):
        self.program = program
        self.name = name
        self.index = index
        info = _lib.ParamInfo()
        ps = []
        for i in range(lib.tilec_program_num_params(program._h, index)):
            _check(lib.tilec_program_param(program._h, index, i, C.byref(info)), "param", program._h)
            dims = tuple(info.dim_symbol[d].decode() if info.dim_symbol[d] else int(info.dim_value[d])
                         for d in range(info.rank))
            flags = lib.tilec_program_param_flags(program._h, index, i)
            ps.append(Param(info.name.decode(), bool(info.is_tensor), info.dtype.decode(), info.rank, dims,
                            bool(info.written), info.dl_dtype.code, info.dl_dtype.bits,
                            flags > 0 and bool(flags & TILEC_PARAM_ZEROED)))
        self.params: Tuple[Param, ...] = tuple(ps)
        self._n = len(ps)
        self._buf = _ArgBuffer(ps)
        self._handles: Dict[int, C.c_void_p] = {}
        self._float = [_is_float(p) for p in ps]
        self._launch = lib.tilec_kernel_launch
        self._grid = (C.c_int64 * 3)()
        self._fast: Optional[Callable[[tuple, Optional[int]], bool]] = None  # _fastcall: made after a launch
        self._fast_for = -1  # how many devices were loaded when _fast was made

    def __repr__(self) -> str:
        return f"<tilec.Kernel {self.name}({', '.join(str(p) for p in self.params)})>"

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    def load(self, device: int = 0) -> C.c_void_p:
        """Load (compile, or take from the kernel cache) on CUDA device `device`; done by the first call."""
        h = self._handles.get(device)
        if h is None:
            h = C.c_void_p()
            m = _mark(self.program._h)
            _check(lib.tilec_kernel_load(self.program._h, self.name.encode(), device, C.byref(h)),
                   f"load {self.name}", self.program._h, m)
            self._handles[device] = h
        return h

    def origin(self, device: int = 0) -> str:
        """"compiled", "disk-cache" or "memory-cache": where the loaded code came from."""
        return lib.tilec_kernel_origin(self.load(device)).decode()

    def config(self, device: int = 0) -> Tuple[int, int, str]:
        """(threads per block, dynamic shared memory bytes, PTX entry name)."""
        t, s, e = C.c_int(), C.c_int(), C.c_char_p()
        lib.tilec_kernel_config(self.load(device), C.byref(t), C.byref(s), C.byref(e))
        return t.value, s.value, e.value.decode()

    def _pack(self, args: Sequence[Any], stream: Optional[int]) -> Tuple[List[Any], int, Any]:
        """The buffer's values for args; the device of the first tensor; what must stay alive."""
        b = self._buf
        vals = b.template[:]
        device = -1
        keep = []
        torch_t = _torch_Tensor
        for k, a in enumerate(args):
            first, shp, rank = b.index[k]
            if shp < 0:  # scalar
                vals[first] = _scalar(a, self.params[k], self._float[k])
                continue
            if torch_t is not None and type(a) is torch_t:  # the fast path: no DLPack capsule
                code = _torch_dtypes.get(a.dtype)
                if code is None:
                    raise TypeError(f"argument {self.params[k].name}: torch dtype {a.dtype} has no tilec dtype")
                d = a.get_device()
                vals[first] = a.data_ptr()
                vals[first + 1] = 2 if d >= 0 else 1
                vals[first + 2] = d if d >= 0 else 0
                vals[first + 4], vals[first + 5] = code
                if a.dim() != rank:
                    raise ValueError(f"argument {self.params[k].name}: rank {a.dim()}, expected {rank}")
                vals[shp:shp + rank] = a.shape
                vals[shp + rank:shp + 2 * rank] = a.stride()
                if device < 0:
                    device = d
                continue
            data, dt, di, code, bits, shape, strides, off, ka = _describe(a, self.params[k], stream)
            if len(shape) != rank:
                raise ValueError(f"argument {self.params[k].name}: rank {len(shape)}, expected {rank}")
            vals[first:first + 10] = [data, dt, di, rank, code, bits, 1, vals[first + 7], vals[first + 8], off]
            vals[shp:shp + rank] = shape
            vals[shp + rank:shp + 2 * rank] = strides
            keep.append(ka)
            if device < 0 and dt in (_kDLCUDA, _kDLCUDAManaged):
                device = di
        return vals, device, keep

    def __call__(self, *args: Any, grid: Optional[Sequence[int]] = None, stream: Optional[int] = None) -> None:
        if grid is None:
            fast = self._fast
            if fast is not None and fast(args, stream):
                return
        if len(args) != self._n:
            raise TypeError(f"{self.signature} takes {self._n} arguments, got {len(args)}")
        if _torch_Tensor is None:
            _torch_ready()
        if stream is None:
            stream = self._current_stream(args)
        vals, device, keep = self._pack(args, stream)
        h = self._handles.get(device if device >= 0 else 0)
        if h is None and device < 0:
            self._refuse_host(vals)
        if h is None:
            h = self.load(device if device >= 0 else 0)
        b = self._buf
        b.struct.pack_into(b.buf, 0, *vals)
        if grid is None:
            st = self._launch(h, b.addr, self._n, stream)
        else:
            g = list(grid) + [1] * (3 - len(grid))
            if not 1 <= len(grid) <= 3:
                raise ValueError(f"grid has {len(grid)} dimensions; 1 to 3")
            self._grid[0], self._grid[1], self._grid[2] = g
            st = lib.tilec_kernel_launch_grid(h, b.addr, self._n, self._grid, stream)
        if st != 0:
            raise TilecError(lib.tilec_kernel_error(h).decode(errors="replace"), _status_name(st))
        del keep
        if self._fast_for != len(self._handles):
            self._make_fast()

    def _bind(self, args: Sequence[Any], named: Mapping[str, Any]) -> Tuple[Any, ...]:
        """args then the named ones, in parameter order (tilec.interpret's keywords)."""
        names = [p.name for p in self.params]
        out: List[Any] = list(args) + [_MISSING] * max(len(names) - len(args), 0)
        for k, v in named.items():
            if k not in names:
                raise TypeError(f"{self.signature} has no parameter {k!r}" + _unknown_keyword_hint(k, names))
            i = names.index(k)
            if i < len(out) and out[i] is not _MISSING:
                raise TypeError(f"{self.signature}: argument {k!r} given twice")
            out[i] = v
        missing = [n for n, v in zip(names, out) if v is _MISSING]
        if missing:
            raise TypeError(f"{self.signature}: missing argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return tuple(out)

    def _refuse_host(self, vals: List[Any]) -> None:
        """No tensor is on a GPU: say which argument is host memory before loading the kernel (whose failure
        without a GPU, "the CUDA driver is missing", would not say what is wrong with the call)."""
        for k, p in enumerate(self.params):
            first, shp, _ = self._buf.index[k]
            if shp >= 0 and vals[first + 1] in (_kDLCPU, _kDLCUDAHost):
                raise ValueError(f"argument {p.name}: a host (CPU) array; a launch needs GPU tensors "
                                 f"(tilec.interpret(kernel, ...) runs the CPU interpreter on host arrays)")

    def _make_fast(self) -> None:
        """The fast path of this kernel's later calls (_fastcall.py), once torch or tvm-ffi can give it."""
        m = _fastcall.mode(_torch_Tensor)
        if m == "generic":
            self._fast, self._fast_for = None, len(self._handles)
        elif m == "tvm-ffi":
            self._fast, self._fast_for = _fastcall.ffi_launcher(self, _torch_Tensor), len(self._handles)
        elif _torch_Tensor is not None and m == "ctypes" and _fastcall.torch_exchange(_torch_Tensor) is not None:
            self._fast = _fastcall.torch_exchange_launcher(self, _torch_Tensor, _fastcall.torch_exchange(_torch_Tensor),
                                                           _torch_stream)
            self._fast_for = len(self._handles)
        elif _torch_Tensor is not None:
            words = {dt: code | bits << 8 | 1 << 16 for dt, (code, bits) in _torch_dtypes.items()}
            self._fast = _fastcall.torch_launcher(self, _torch_Tensor, words, _torch_stream, _launch_failed)
            self._fast_for = len(self._handles)

    def _current_stream(self, args: Sequence[Any]) -> int:
        """The current stream of the framework of the first tensor argument."""
        for a in args:
            if _torch_Tensor is not None and isinstance(a, _torch_Tensor):
                d = a.get_device()
                return _torch_stream(d) if d >= 0 else 0
            mod = type(a).__module__.split(".")[0]
            if mod == "cupy":
                return sys.modules["cupy"].cuda.get_current_stream().ptr
            if hasattr(a, "__dlpack__"):
                return 0  # JAX and others: the legacy default stream (pass stream= to choose)
        return 0


_MISSING = object()  # Kernel._bind: a parameter no argument was given for


def _launch_failed(h: Any, st: int) -> None:
    raise TilecError(lib.tilec_kernel_error(h).decode(errors="replace"), _status_name(st))


# ---- the CPU interpreter ---------------------------------------------------------------------------------
def _unknown_keyword_hint(k: str, names: Sequence[str]) -> str:
    """Why a keyword names no parameter: a launch's own keyword, a near miss of a parameter's name, or (the
    Triton habit) a tile constant, which is set when compiling."""
    if k in ("grid", "stream"):
        return (f" ({k}= is a launch's keyword, k(..., {k}=...) on GPU tensors; tilec.interpret runs the kernel's "
                f"own grid on the host)")
    import difflib
    close = difflib.get_close_matches(k, names, n=1, cutoff=0.75)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return (f" (its parameters: {', '.join(names)}; a tile constant is set when compiling: "
            f"tilec.compile(..., defines={{{k!r}: ...}}))")


def interpret(kernel: Kernel, *args: Any, **named: Any) -> None:
    """Run `kernel` in tilec's CPU interpreter (the reference every GPU result is checked against) over
    its whole grid on host arrays: NumPy arrays (bf16 as uint16 bit patterns or ml_dtypes.bfloat16; fp8
    as uint8 bytes), or CPU tensors of any DLPack framework; scalars as Python numbers.  Arguments in
    parameter order, or by parameter name after the positional ones.  Outputs are written in place.
    No GPU is needed."""
    if not isinstance(kernel, Kernel):
        raise TypeError(f"interpret: expected a tilec.Kernel (program['name']), got {type(kernel).__name__}")
    if named:
        args = kernel._bind(args, named)
    if len(args) != kernel._n:
        missing = [p.name for p in kernel.params[len(args):]]
        raise TypeError(f"{kernel.signature} takes {kernel._n} arguments, got {len(args)}"
                        + (f" (missing: {', '.join(missing)})" if missing else ""))
    _torch_ready()
    vals, _, keep = kernel._pack(args, None)
    b = kernel._buf
    b.struct.pack_into(b.buf, 0, *vals)
    m = _mark(kernel.program._h)
    st = lib.tilec_interpret(kernel.program._h, kernel.name.encode(), b.addr, kernel._n)
    del keep
    _check(st, f"interpret {kernel.name}", kernel.program._h, m)


def f32_to_bf16(x: Any) -> Any:
    """A float32 NumPy array rounded to bf16 (nearest even), as uint16 bit patterns."""
    import numpy as np
    a = np.asarray(x, dtype=np.float32)  # keeps the shape (0-d included)
    u = a.view(np.uint32)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), r)


def bf16_to_f32(x: Any) -> Any:
    """uint16 bf16 bit patterns -> float32 (a float array is refused: its values are not bit patterns)."""
    import numpy as np
    a = np.asarray(x)
    if a.dtype.kind == "f" or a.dtype.kind == "c":
        raise TypeError(f"bf16_to_f32 takes bf16 bit patterns (uint16, as tilec.f32_to_bf16 returns), got {a.dtype} "
                        f"values: they are numbers already")
    return (a.astype(np.uint16).astype(np.uint32) << 16).view(np.float32)


# ---- autotuning ------------------------------------------------------------------------------------------
@dataclass
class TuneResult:
    """The winner of tilec.autotune: `config` (name -> value), its median time, and `program`, the
    source compiled with the winner applied."""
    config: Dict[str, int]
    ms: float
    worst_ms: float
    nconfigs: int
    nvalid: int
    from_cache: bool
    shape_class: str
    summary: str
    log: str
    program: Optional[Program] = field(default=None, repr=False)


def _progress_bar(stream: Any) -> Callable[[Any, Any], int]:
    best = [float("inf")]

    def cb(cp: Any, user: Any) -> int:
        c = cp.contents
        if c.ms >= 0:
            best[0] = min(best[0], c.ms)
        n, i = max(c.count, 1), c.index + 1
        bar = "#" * (24 * i // n) + "." * (24 - 24 * i // n)
        what = f"{c.ms:.4f} ms" if c.ms >= 0 else f"skipped ({(c.skip_reason or b'').decode()[:60]})"
        best_s = f"best {best[0]:.4f} ms" if best[0] < float("inf") else ""
        stream.write(f"\rtilec autotune [{bar}] {i}/{n} {(c.desc or b'').decode()}: {what} {best_s}\x1b[K")
        if i == n:
            stream.write("\n")
        stream.flush()
        return 0
    return cb


def autotune(source_or_path: Union[str, "os.PathLike[str]"], kernel: str, space: Mapping[str, Iterable[int]],
             args: Sequence[Any], *, defines: Optional[Mapping[str, int]] = None, device: int = 0,
             target_ms: float = 0.0, cache: bool = True, progress: Union[bool, Callable[[int, int, str, float], Any]] = True,
             **options: Any) -> TuneResult:
    """Time every configuration of `space` (tile constant or "warps"/"stages" -> values; the first
    name varies slowest) for `kernel` on the GPU with `args` (its outputs are never written: scratch
    buffers stand in; the @zeroed ones, `k.params[i].zeroed`, are zeroed before every launch, outside
    the timed interval) and return the fastest, cached on disk by source, options, space, shape class and
    device (a second call returns it at once, from_cache=True).  progress: True = a bar on stderr,
    False = quiet, or a function (index, count, desc, ms) (ms < 0: skipped).  docs/autotune.md."""
    names = list(space)
    arrays = [(C.c_int64 * len(list(space[n])))(*[int(v) for v in space[n]]) for n in names]
    tp = (_lib.TuneParam * max(len(names), 1))()
    enc = [n.encode() for n in names]
    for i, n in enumerate(names):
        tp[i].name, tp[i].values, tp[i].nvalues = enc[i], C.cast(arrays[i], C.POINTER(C.c_int64)), len(arrays[i])
    sp = _lib.TuneSpace(tp, len(names), float(target_ms), 0 if cache else 1)
    is_path = _is_path(source_or_path)
    src = os.fspath(source_or_path)
    o = _make_options(defines, options)
    # the arguments, packed as for a launch (a Program gives their signature)
    prog = Program(src, defines, **options)
    k = prog[kernel]
    _torch_ready()
    vals, _, keep = k._pack(args, None)
    b = k._buf
    b.struct.pack_into(b.buf, 0, *vals)
    if progress is True:
        cb = _progress_bar(sys.stderr)
    elif progress:
        user_fn = progress
        cb = lambda cp, u: (user_fn(cp.contents.index, cp.contents.count, (cp.contents.desc or b"").decode(),
                                    cp.contents.ms), 0)[1]
    else:
        cb = lambda cp, u: 0
    cfn = _lib.PROGRESS_FN(cb)
    res = _lib.TuneResult()
    try:
        st = lib.tilec_autotune(src.encode(), 1 if is_path else 0, o, kernel.encode(), C.byref(sp), b.addr, k._n,
                                device, cfn, None, C.byref(res))
        if st != 0:
            raise TilecError(f"autotune {kernel}: {lib.tilec_status_string(st).decode()}\n{res.log.decode(errors='replace')}",
                             _status_name(st), log=res.log.decode(errors="replace"))
        _check(lib.tilec_tune_apply(C.byref(res), o), "apply the tuning result")
        winner = Program(src, defines, _opts=o, **options)
        o = None
        for i in range(res.nparams):  # what explain() and repr see
            n, v = res.names[i].value.decode(), int(res.values[i])
            (winner.options if n in ("warps", "stages") else winner.defines)[n] = v
    finally:
        if o is not None:
            lib.tilec_options_destroy(o)
    del keep
    cfg = {res.names[i].value.decode(): int(res.values[i]) for i in range(res.nparams)}
    return TuneResult(cfg, res.ms, res.worst_ms, res.nconfigs, res.nvalid, bool(res.from_cache),
                      res.shape_class.decode(), res.summary.decode(), res.log.decode(errors="replace"), winner)


def register_torch_op(kernel: Kernel, name: Optional[str] = None) -> Any:
    """Register `kernel` as a torch.library custom op "namespace::name" (default "tilec::<kernel>"),
    mutating the tensors the kernel writes and returning nothing, so it can be called inside
    torch.compile graphs and CUDA graphs.  Returns the op (call it as the kernel).  Imports torch."""
    try:
        from ._torch import register
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        raise ModuleNotFoundError("tilec.register_torch_op needs PyTorch (pip install torch); launching a kernel on "
                                  "CuPy or JAX arrays, or any DLPack tensor, does not", name="torch") from e
    return register(kernel, name)
