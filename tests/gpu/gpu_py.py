"""gpu_py.py: the start the Python GPU tests share (test_decode, test_dot_types, test_w4a16).

`start(name)` gives (torch, tilec) with libtilec taken from `--lib`, else TILEC_LIBRARY, else
build/libtilec.so; or prints why the test is skipped (no torch, no GPU) and gives None (exit 77).
`examples_dir()` is `--examples`, else TILEC_EXAMPLES, else the repository's examples/.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def start(name):
    try:
        import torch
    except ImportError:
        print(f"{name}: no torch: skipped")
        return None
    if not torch.cuda.is_available():
        print(f"{name}: no GPU: skipped")
        return None
    lib = arg("--lib", os.environ.get("TILEC_LIBRARY", os.path.join(ROOT, "build", "libtilec.so")))
    os.environ["TILEC_LIBRARY"] = os.path.abspath(lib)
    import tilec
    return torch, tilec


def examples_dir():
    return arg("--examples", os.environ.get("TILEC_EXAMPLES", os.path.join(ROOT, "examples")))
