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


def attn(z, hh, s, d, kptr=2 * A, ctas=((0, 0), (1, 1), (1, 0))):
    sh = [z, hh, s, d]
    return {"attn_fwd": {"tensors": [t(A, sh), t(kptr, sh), t(3 * A, sh), t(4 * A, sh)], "scalars": [F],
                         "ctas": ctas, "grid": [(s + 127) // 128, z * hh]}}


# CTAs traced (program_id 0, 1): the first, and tails (the last along M, N)
C3 = ((0, 0), (2, 2), (1, 2))  # grid 3 x 3 (M 300 / 128, N 520 / 256)
C5 = ((0, 0), (2, 4), (1, 3))  # grid 3 x 5 (M 300 / 128, N 520 / 128)


def gemm(k, n=520):
    return {"cutlass_gemm": {"tensors": [t(A, [300, k]), t(2 * A, [k, n]), t(3 * A, [300, n])], "ctas": C3}}


def fp8(k, n, bstride=None, btstride=None):
    return {"gemm_fp8_tensor": {"tensors": [t(A, [300, k]), t(2 * A, [k, n], bstride), t(3 * A, [300, n])],
                                "scalars": [F, F], "ctas": C5},
            "gemm_fp8_rowcol": {"tensors": [t(A, [300, k]), t(2 * A, [k, n], bstride), t(3 * A, [300, n]),
                                            t(4 * A, [300]), t(5 * A, [n])], "ctas": C5},
            "cutlass_gemm_fp8_tn": {"tensors": [t(A, [300, k]), t(2 * A, [n, k], btstride), t(3 * A, [300, n])],
                                    "scalars": [F, F], "ctas": C3}}


CFG = {
    "attn": attn(1, 2, 200, 64),  # S ragged: 3 full key blocks and a partial one; row block 1 a tail
    "attn_slow": attn(1, 2, 200, 64, kptr=2 * A + 2),  # K misaligned: the slow copy path
    "attn_s70": attn(2, 1, 70, 64, ctas=((0, 0), (0, 1))),
    "attn_s256": attn(1, 2, 256, 64),  # no tail: every block whole
    "attn_d128": attn(1, 2, 200, 128),
    "gemm": gemm(96),
    "gemm_rag": gemm(100),  # K ragged, rows of 200 bytes: the slow copy path
    "gemm_k104": gemm(104),  # K ragged for BK 64 and 32, rows 16-byte aligned: cp.async whole and partial
    "gemm_fp8": fp8(256, 520),
    "gemm_fp8_rag": fp8(200, 520),
    "gemm_fp8_kmaj": fp8(256, 520, [1, 256], [1, 520]),  # B K-major, BT N-major (strided)
}
if __name__ == "__main__":
    json.dump({"kernels": CFG[sys.argv[1]]}, open(sys.argv[2], "w"))
