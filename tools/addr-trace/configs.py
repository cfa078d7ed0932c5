#!/usr/bin/env python3
"""configs.py NAME OUT.json: tensor sizes/strides/fake pointers and scalars of a
named run (per kernel name) for xform.py.  Ragged sizes on purpose."""
import json
import sys


def t(ptr, size, stride=None):
    if stride is None:  # contiguous
        stride, acc = [], 1
        for s in reversed(size):
            stride.insert(0, acc)
            acc *= s
    return {"ptr": ptr, "size": size, "stride": stride}


F = "5.000000e-01"
A = 0x10000000


def attn(z, hh, s, d, kptr=2 * A):
    sh = [z, hh, s, d]
    return {"attn_fwd": {"tensors": [t(A, sh), t(kptr, sh), t(3 * A, sh), t(4 * A, sh)], "scalars": [F]}}


def fp8(k, n, bstride=None):
    return {"gemm_fp8_tensor": {"tensors": [t(A, [300, k]), t(2 * A, [k, n], bstride), t(3 * A, [300, n])],
                                "scalars": [F, F]},
            "gemm_fp8_rowcol": {"tensors": [t(A, [300, k]), t(2 * A, [k, n], bstride), t(3 * A, [300, n]),
                                            t(4 * A, [300]), t(5 * A, [n])]}}


CFG = {
    "attn": attn(1, 2, 200, 64),
    "attn_slow": attn(1, 2, 200, 64, kptr=2 * A + 2),  # K misaligned: the slow copy path
    "attn_s70": attn(2, 1, 70, 64),
    "attn_d128": attn(1, 2, 200, 128),
    "gemm": {"cutlass_gemm": {"tensors": [t(A, [300, 96]), t(2 * A, [96, 520]), t(3 * A, [300, 520])]}},
    "gemm_rag": {"cutlass_gemm": {"tensors": [t(A, [300, 100]), t(2 * A, [100, 520]), t(3 * A, [300, 520])]}},
    "gemm_fp8": fp8(256, 200),
    "gemm_fp8_kmaj": fp8(256, 200, [1, 256]),  # B K-major
}
if __name__ == "__main__":
    json.dump({"kernels": CFG[sys.argv[1]]}, open(sys.argv[2], "w"))
