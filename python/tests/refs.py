"""References the interpreter tests share (not a test file): the 8-bit float code tables and a vectorized
Philox4x32-10 (Salmon et al. 2011, the Random123 constants; test_lang_corners.py checks it against the known-answer
vectors), and the tolerance check.  Imported by the interpreter test files (pytest puts this folder on sys.path)."""
import numpy as np
import pytest


def fp8_table(ebits, mbits, fn):
    """value of each of the 256 codes; fn: e4m3fn (NaN only at S.1111.111, no inf), else IEEE-like e5m2"""
    bias = (1 << (ebits - 1)) - 1
    t = np.zeros(256)
    for c in range(256):
        s = -1.0 if c & 0x80 else 1.0
        e = (c >> mbits) & ((1 << ebits) - 1)
        m = c & ((1 << mbits) - 1)
        top = (1 << ebits) - 1
        if fn and e == top and m == (1 << mbits) - 1:
            t[c] = np.nan
        elif not fn and e == top:
            t[c] = s * np.inf if m == 0 else np.nan
        elif e == 0:
            t[c] = s * m / (1 << mbits) * 2.0 ** (1 - bias)
        else:
            t[c] = s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
    return t


E4M3 = fp8_table(4, 3, True)
E5M2 = fp8_table(5, 2, False)

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
U32 = np.uint64(0xFFFFFFFF)


def philox(c0, c1, k0, k1):
    """blocks for counters (c0, c1, 0, 0) (uint64 arrays of 32-bit values), key (k0, k1): 4 uint64 arrays"""
    c = [np.asarray(c0, np.uint64), np.asarray(c1, np.uint64) + np.zeros_like(np.asarray(c0, np.uint64)),
         np.zeros(np.shape(c0), np.uint64), np.zeros(np.shape(c0), np.uint64)]
    k = [np.uint64(k0), np.uint64(k1)]
    for _ in range(10):
        p0 = np.uint64(M0) * c[0]
        p1 = np.uint64(M1) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & U32, (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & U32]
        k = [(k[0] + np.uint64(W0)) & U32, (k[1] + np.uint64(W1)) & U32]
    return c


def check_close(what, got, ref, atol, rtol, seed):
    """|got - ref| <= atol + rtol |ref| elementwise (NaN only where ref is NaN; atol may be an array), else fail
    naming the first bad element and the seed that reproduces the data"""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    assert got.shape == ref.shape, f"{what}: shape {got.shape}, expected {ref.shape}"
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    err = np.where(same, 0.0, np.abs(got - ref))
    bad = ~same & ~(err <= atol + rtol * np.abs(ref))  # a NaN error (a NaN where ref is not) is bad
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        pytest.fail(f"{what}: {int(bad.sum())} of {bad.size} elements off (atol {np.max(atol):g}, rtol {rtol:g}), max "
                    f"error {np.nanmax(np.where(np.isnan(err), np.inf, err)):.4g}; first at {i}: got {got[i]!r}, "
                    f"expected {ref[i]!r} (TILEC_SEED={seed} reproduces)")
