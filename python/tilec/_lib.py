"""libtilec.so through ctypes: finding the library, the C structs of include/tilec.h."""
from __future__ import annotations

import ctypes as C
import glob
import os

__all__ = ["lib", "library_path", "DLDevice", "DLDataType", "DLTensor", "Arg", "ParamInfo", "Diag",
           "TuneParam", "TuneSpace", "TuneConfig", "TuneResult", "PROGRESS_FN"]


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class _ArgU(C.Union):
    _fields_ = [("tensor", C.c_void_p), ("i32", C.c_int32), ("i64", C.c_int64), ("f32", C.c_float),
                ("f64", C.c_double)]


class Arg(C.Structure):
    _fields_ = [("kind", C.c_int), ("u", _ArgU)]


class ParamInfo(C.Structure):
    _fields_ = [("name", C.c_char_p), ("is_tensor", C.c_int), ("dtype", C.c_char_p), ("dl_dtype", DLDataType),
                ("rank", C.c_int), ("dim_symbol", C.c_char_p * 4), ("dim_value", C.c_int64 * 4),
                ("written", C.c_int)]


class Diag(C.Structure):
    _fields_ = [("severity", C.c_int), ("file", C.c_char_p), ("line", C.c_int), ("column", C.c_int),
                ("message", C.c_char_p), ("rendered", C.c_char_p)]


class TuneParam(C.Structure):
    _fields_ = [("name", C.c_char_p), ("values", C.POINTER(C.c_int64)), ("nvalues", C.c_int)]


class TuneSpace(C.Structure):
    _fields_ = [("params", C.POINTER(TuneParam)), ("nparams", C.c_int), ("target_ms", C.c_double),
                ("no_cache", C.c_int)]


class TuneConfig(C.Structure):
    _fields_ = [("index", C.c_int), ("count", C.c_int), ("desc", C.c_char_p), ("ms", C.c_double),
                ("runs", C.c_int), ("skip_reason", C.c_char_p)]


class TuneResult(C.Structure):
    _fields_ = [("nparams", C.c_int), ("names", (C.c_char * 64) * 16), ("values", C.c_int64 * 16),
                ("ms", C.c_double), ("worst_ms", C.c_double), ("nconfigs", C.c_int), ("nvalid", C.c_int),
                ("from_cache", C.c_int), ("shape_class", C.c_char * 256), ("summary", C.c_char * 512),
                ("log", C.c_char * 2048)]


PROGRESS_FN = C.CFUNCTYPE(C.c_int, C.POINTER(TuneConfig), C.c_void_p)


def _candidates() -> list[str]:
    """Where libtilec.so is looked for, in order (docs/python.md "Finding libtilec.so")."""
    env = os.environ.get("TILEC_LIBRARY")
    if env:
        return [env]  # explicit: nothing else is tried, so a wrong path is an error, not a silent fallback
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "libtilec.so*")), key=len)
    return found + ["libtilec.so", "libtilec.so.0.1"]  # the system loader's path last


def _load() -> tuple[C.CDLL, str]:
    errors = []
    for path in _candidates():
        try:
            return C.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("tilec: cannot load libtilec.so (set TILEC_LIBRARY to its path, or install the package "
                      "with the library next to it: docs/python.md):\n  " + "\n  ".join(errors))


lib, library_path = _load()

_P = C.c_void_p
_sigs = {
    "tilec_status_string": (C.c_char_p, [C.c_int]),
    "tilec_version_string": (C.c_char_p, []),
    "tilec_free": (None, [_P]),
    "tilec_options_create": (C.c_int, [C.POINTER(_P)]),
    "tilec_options_destroy": (None, [_P]),
    "tilec_options_define": (C.c_int, [_P, C.c_char_p, C.c_int64]),
    "tilec_options_set_arch": (C.c_int, [_P, C.c_char_p]),
    "tilec_options_set_opt_level": (C.c_int, [_P, C.c_int]),
    "tilec_options_set_line_info": (C.c_int, [_P, C.c_int]),
    "tilec_options_set_pipeline": (C.c_int, [_P, C.c_char_p]),
    "tilec_options_set": (C.c_int, [_P, C.c_char_p, C.c_char_p]),
    "tilec_options_key": (C.c_char_p, [C.c_int]),
    "tilec_options_takes": (C.c_char_p, [C.c_char_p]),
    "tilec_options_example": (C.c_char_p, [C.c_char_p]),
    "tilec_program_create": (C.c_int, [C.POINTER(_P), C.c_char_p, C.c_char_p, _P]),
    "tilec_program_create_from_file": (C.c_int, [C.POINTER(_P), C.c_char_p, _P]),
    "tilec_program_destroy": (None, [_P]),
    "tilec_program_compile": (C.c_int, [_P, C.c_int]),
    "tilec_program_text": (C.c_char_p, [_P, C.c_int]),
    "tilec_program_log": (C.c_char_p, [_P]),
    "tilec_program_num_diagnostics": (C.c_int, [_P]),
    "tilec_program_diagnostic": (C.c_int, [_P, C.c_int, C.POINTER(Diag)]),
    "tilec_program_num_kernels": (C.c_int, [_P]),
    "tilec_program_kernel_name": (C.c_char_p, [_P, C.c_int]),
    "tilec_program_get_binary": (C.c_int, [_P, C.c_int, C.POINTER(_P), C.POINTER(C.c_size_t)]),
    "tilec_program_num_params": (C.c_int, [_P, C.c_int]),
    "tilec_program_param": (C.c_int, [_P, C.c_int, C.c_int, C.POINTER(ParamInfo)]),
    "tilec_program_param_flags": (C.c_int, [_P, C.c_int, C.c_int]),
    "tilec_program_emit_c": (C.c_int, [_P, C.c_char_p, C.POINTER(_P), C.POINTER(_P)]),
    "tilec_interpret": (C.c_int, [_P, C.c_char_p, _P, C.c_int]),
    "tilec_device_init": (C.c_int, [C.c_int]),
    "tilec_kernel_load": (C.c_int, [_P, C.c_char_p, C.c_int, C.POINTER(_P)]),
    "tilec_kernel_destroy": (None, [_P]),
    "tilec_kernel_launch": (C.c_int, [_P, _P, C.c_int, _P]),
    "tilec_kernel_launch_grid": (C.c_int, [_P, _P, C.c_int, C.POINTER(C.c_int64), _P]),
    "tilec_kernel_error": (C.c_char_p, [_P]),
    "tilec_kernel_origin": (C.c_char_p, [_P]),
    "tilec_kernel_config": (C.c_int, [_P, C.POINTER(C.c_int), C.POINTER(C.c_int), C.POINTER(C.c_char_p)]),
    "tilec_autotune": (C.c_int, [C.c_char_p, C.c_int, _P, C.c_char_p, C.POINTER(TuneSpace), _P, C.c_int, C.c_int,
                                 PROGRESS_FN, _P, C.POINTER(TuneResult)]),
    "tilec_tune_apply": (C.c_int, [C.POINTER(TuneResult), _P]),
}
for _name, (_res, _args) in _sigs.items():
    try:
        _fn = getattr(lib, _name)
    except AttributeError as e:  # an older libtilec: say which entry point is missing
        raise ImportError(f"tilec: {library_path} has no {_name} (a libtilec older than this package)") from e
    _fn.restype = _res
    _fn.argtypes = _args
