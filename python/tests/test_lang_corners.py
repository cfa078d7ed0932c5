"""Less-used corners of the language (tests/lang_corners/*.tile; tests/lang_corners/README.md): integer edge
cases, casts, constant folding and literals, gathers / scatters, atomics, rand, sorts / scans, axes and tile
shapes, float math at extremes, loops, data movement, scalars, 8-bit floats.  Each file's kernels on the
interpreter at ragged sizes against independent NumPy / Python references (float64, or exact integer /
Fraction arithmetic), one test function per file (parametrized by kernel and size).  Fresh random data each
run from a seeded Generator: the seed is $TILEC_SEED or drawn, and a failure prints it (TILEC_SEED=S
reproduces).  Every output is poisoned before the run with a value that differs from its reference at every
element (NaN, or a finite value where the reference is NaN; integers: the reference with its low bits
flipped; i1: the negated reference), so an element the kernel fails to write fails the check.
tests/gpu/lang_corners.sh runs the same kernels on a GPU against the interpreter.

Tolerances, |got - ref| <= atol + rtol |ref| (NaN only where ref is NaN), by output:
  exact, -0.0 and +0.0 told apart (atol 0, rtol 0): every integer and i1 output; data movement, gathers,
    scatters, sorts, arg-reductions, cummax; casts and constant folds (the reference rounds the exact value
    once: Fraction arithmetic, or NumPy's correctly rounded double -> half); rand and randint (an independent
    Philox4x32-10, checked against the Random123 known-answer vectors); fmath's f32 and 16-bit outputs (the
    interpreter rounds the exact value once, the reference is the float64 math function rounded: a one-ulp
    difference would need the float64 result to sit within 2^-29 ulp of a tie); sequential f32 sums with the
    interpreter's order reproduced (cumsum, atomics in grid order, loops, scans of f16 / bf16 in f32);
  randn: atol 3e-5, rtol 1e-5 (Box-Muller in float64 vs the interpreter's f32 log / cos / sqrt);
  f32 reduce_sum (tree order unspecified): atol 1e-5 of the row length, rtol 1e-5;
  last_program's total (a reduce_sum of partial reduce_sums): atol 1e-5 sqrt(N), rtol 1e-5.
"""
import math
import os
import zlib
from fractions import Fraction

import numpy as np
import pytest

import tilec

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

KERNELS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "lang_corners")
SEED = int(os.environ.get("TILEC_SEED") or np.random.SeedSequence().entropy % 2**31)


@pytest.fixture
def rng(request):
    """A Generator per test, seeded by SEED and the test's id (each test reproducible alone)."""
    return np.random.default_rng([SEED, zlib.crc32(request.node.name.encode())])


_programs = {}


def prog(name):
    """tests/lang_corners/NAME.tile compiled once (sm_90a: the fp8 and bf16-atomic kernels need it)."""
    if name not in _programs:
        _programs[name] = tilec.compile(os.path.join(KERNELS, name + ".tile"), arch="sm_90a")
    return _programs[name]


def run(file, kernel, *args):
    with np.errstate(all="ignore"):
        tilec.interpret(prog(file)[kernel], *args)


def cases(table):
    """(kernel, size) parametrize cases: ids 'kernel-size'"""
    return [pytest.param(k, c, id=f"{k}-{c}") for k, cs in table.items() for c in cs]


# ---- number formats (independent of tilec: exact rational rounding) ----------------------------------------

def round_float(v, mbits, emin, maxval, sat=False):
    """v (int, float or Fraction) rounded once to a binary float of mbits fraction bits, minimum normal
    exponent emin, largest finite maxval (nearest, ties to even); overflow gives +-inf, or +-maxval if sat."""
    if isinstance(v, float) and math.isnan(v):
        return math.nan
    if isinstance(v, float) and math.isinf(v):
        return math.copysign(float(maxval), v) if sat else v
    f = Fraction(v)
    if f == 0:
        return math.copysign(0.0, v) if isinstance(v, float) else 0.0
    s = -1 if f < 0 else 1
    a = abs(f)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    q = a / Fraction(2) ** (e - mbits)
    n = q.numerator // q.denominator
    r = q - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1):
        n += 1
    val = Fraction(n) * Fraction(2) ** (e - mbits)
    if val > maxval:
        return s * float(maxval) if sat else s * math.inf
    return s * float(val)


F32_MAX = Fraction(2 - Fraction(1, 2 ** 23)) * Fraction(2) ** 127
BF16_MAX = Fraction(2 - Fraction(1, 128)) * Fraction(2) ** 127


def f32_of(v): return round_float(v, 23, -126, F32_MAX)
def bf16_of(v): return round_float(v, 7, -126, BF16_MAX)
def f16_of(v): return round_float(v, 10, -14, Fraction(65504))
def e4m3_of(v): return round_float(v, 3, -6, Fraction(448), sat=True)
def e5m2_of(v): return round_float(v, 2, -14, Fraction(57344), sat=True)


def vec(fn, xs):
    return np.array([fn(x) for x in xs], np.float64)


def bf16_bits(x):
    """f32 values -> bf16 bits, nearest even (NaN: 0x7fc0)"""
    a = np.ascontiguousarray(x, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), r)


def unbf(b):
    """bf16 bits -> f32"""
    return (np.asarray(b, np.uint16).astype(np.uint32) << 16).view(np.float32)


from refs import E4M3, E5M2, fp8_table  # noqa: E402,F401  (the tables: python/tests/refs.py)


def wrap(v, bits, signed=True):
    """Python ints (an object array or a list) wrapped to `bits` (two's complement if signed), as int64"""
    out = []
    for x in v:
        x = int(x) & ((1 << bits) - 1)
        if signed and x >= 1 << (bits - 1):
            x -= 1 << bits
        out.append(x)
    return np.array(out, dtype=np.int64 if (signed or bits < 64) else np.uint64)


def tdiv(x, y):
    """C division of Python ints (toward zero); x / 0 = 0"""
    if y == 0:
        return 0
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


# ---- poison and compare -------------------------------------------------------------------------------------

def poison(ref, dtype):
    """an output buffer whose every element differs from ref: NaN (a finite value where ref is NaN) for floats;
    bf16 / fp8 (dtype 'bf16' / 'e4m3' / 'e5m2', ref the values) the NaN code or 1.0; integers ref ^ 0x55; i1 !ref"""
    ref = np.asarray(ref)
    if dtype == "bf16":
        return np.where(np.isnan(ref.astype(np.float64)), np.uint16(0x3F80), np.uint16(0x7FC0)).astype(np.uint16)
    if dtype in ("e4m3", "e5m2"):
        return np.where(np.isnan(ref.astype(np.float64)), np.uint8(0x38), np.uint8(0x7F)).astype(np.uint8)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return ~ref.astype(bool)
    if np.issubdtype(dtype, np.floating):
        return np.where(np.isnan(ref.astype(np.float64)), -7777.0, np.nan).astype(dtype)
    return (ref.astype(np.int64) ^ 0x55).astype(dtype)


def check(what, got, ref, atol=0.0, rtol=0.0):
    """elementwise; exact (atol = rtol = 0) also tells -0.0 from +0.0; integers compared as integers"""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, f"{what}: shape {got.shape}, expected {ref.shape}"
    if got.dtype.kind in "iub" and ref.dtype.kind in "iubO":
        bad = np.array([int(a) != int(b) for a, b in zip(got.ravel(), ref.ravel())], bool).reshape(got.shape)
    else:
        g, r = got.astype(np.float64), ref.astype(np.float64)
        same = (g == r) | (np.isnan(g) & np.isnan(r))
        if atol == 0 and rtol == 0:  # exact: the same value and sign (NaN where ref is NaN)
            bad = ~(same & ((np.signbit(g) == np.signbit(r)) | np.isnan(g)))
        else:
            with np.errstate(invalid="ignore"):
                bad = ~same & ~(np.abs(g - r) <= atol + rtol * np.abs(r))
    if bad.any():
        idx = [tuple(i) for i in np.argwhere(bad)[:4]]
        pytest.fail(f"{what}: {int(bad.sum())} of {bad.size} elements off (atol {atol:g}, rtol {rtol:g}); "
                    + "; ".join(f"at {i}: got {got[i]!r}, expected {ref[i]!r}" for i in idx)
                    + f" (TILEC_SEED={SEED} reproduces)")


# ---- Philox4x32-10 (Salmon et al. 2011; the Random123 constants), vectorized ------------------------------

from refs import M0, M1, U32, W0, W1, philox  # noqa: E402,F401  (python/tests/refs.py)


def philox_full(ctr, key):
    """scalar Philox with all four counter words (the known-answer vectors)"""
    c = [int(v) for v in ctr]
    k = list(key)
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ k[1], p0 & 0xFFFFFFFF]
        k = [(k[0] + W0) & 0xFFFFFFFF, (k[1] + W1) & 0xFFFFFFFF]
    return c


def test_philox_reference():
    """the reference Philox against Random123's known-answer vectors (kat_vectors: philox4x32 10)"""
    assert philox_full([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox_full([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    assert philox_full([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0]) == \
        [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]
    w = philox(np.array([0, 0xFFFFFFFF], np.uint64), 0, 0, 0)
    assert [int(x[0]) for x in w] == philox_full([0, 0, 0, 0], [0, 0])
    assert [int(x[1]) for x in w] == philox_full([0xFFFFFFFF, 0, 0, 0], [0, 0])


def _seed_key(seed):
    s = int(seed) & (2 ** 64 - 1)
    return s & 0xFFFFFFFF, s >> 32


def ref_randint(seed, offs):
    """language.md 8.5: word o % 4 of the block of counter (o / 4, 0, 0, 0), o the offset as u32"""
    o = np.asarray(offs, np.int64).astype(np.uint64) & U32
    w = philox(o // np.uint64(4), 0, *_seed_key(seed))
    return np.choose((o % np.uint64(4)).astype(np.int64), w).astype(np.uint32)


def ref_rand(seed, offs):
    return ((ref_randint(seed, offs) >> np.uint32(8)).astype(np.float64) * 2.0 ** -24).astype(np.float32)


def ref_randn(seed, offs):
    """Box-Muller on the block of counter (o / 2, 1, 0, 0): words 2 (o % 2), 2 (o % 2) + 1"""
    o = np.asarray(offs, np.int64).astype(np.uint64) & U32
    w = philox(o // np.uint64(2), 1, *_seed_key(seed))
    odd = (o % np.uint64(2)).astype(bool)
    wa, wb = np.where(odd, w[2], w[0]), np.where(odd, w[3], w[1])
    u1 = ((wa >> np.uint64(8)) + np.uint64(1)).astype(np.float64) * 2.0 ** -24
    u2 = (wb >> np.uint64(8)).astype(np.float64) * 2.0 ** -24
    return np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)


# ============================================================================================== int_ops.tile

INT_KERNELS = {"int32_ops": (np.int32, 32, True), "int8_ops": (np.int8, 8, True), "int16_ops": (np.int16, 16, True),
               "int64_ops": (np.int64, 64, True), "u8_ops": (np.uint8, 8, False)}


@pytest.mark.parametrize("kernel,N", cases({k: (1, 37, 200) for k in INT_KERNELS}))
def test_int_ops(rng, kernel, N):
    dt, bits, signed = INT_KERNELS[kernel]
    info = np.iinfo(dt)
    a = rng.integers(int(info.min), int(info.max), N, dtype=dt, endpoint=True)
    b = rng.integers(int(info.min), int(info.max), N, dtype=dt, endpoint=True)
    if N > 50:  # crafted pairs: MIN / -1, x / 0, signs of / and %, shifts at and past the width
        lo = int(info.min)
        pairs = [(lo, -1), (lo, 1), (-7, 2), (7, -2), (-7, -2), (5, 0), (lo, 0), (-1, 1), (-128, 3), (1, bits - 1),
                 (1, bits), (-1, bits + 5), (int(info.max), 1), (-5, 31), (-5, 0), (-5, -1), (3, -bits)]
        for i, (x, y) in enumerate(pairs):
            a[i] = np.array(x).astype(dt)
            b[i] = np.array(y).astype(dt)
        b[20:60] = np.arange(-3 if signed else 0, bits + 3).astype(dt)[rng.integers(0, bits + (6 if signed else 3), 40)]
    A, B = [int(v) for v in a], [int(v) for v in b]
    W = lambda v: wrap(v, bits, signed)
    q = W([tdiv(x, y) for x, y in zip(A, B)])
    m = W([x - tdiv(x, y) * y if y else 0 for x, y in zip(A, B)])
    shl = W([0 if (y < 0 or y >= bits) else x << y for x, y in zip(A, B)])
    shr = np.array([((-1 if x < 0 else 0) if (y < 0 or y >= bits) else x >> y) for x, y in zip(A, B)], object)
    refs = [q, m, shl, shr]
    if kernel == "int32_ops":
        refs += [W([(x ^ y) | ((x & 255) + x * y) for x, y in zip(A, B)]), W([abs(x) - y for x, y in zip(A, B)])]
    elif kernel in ("u8_ops", "int16_ops"):
        refs += [W([x * y - x for x, y in zip(A, B)])]
    else:
        refs += [W([x * y + x for x, y in zip(A, B)])]
    names = ["div", "rem", "shl", "shr", "arith"] + (["abs-b"] if kernel == "int32_ops" else [])
    outs = [poison(np.array([int(v) for v in r], object).astype(np.int64), dt) for r in refs]
    if kernel == "u8_ops":
        outs.append(poison(a < b, np.bool_))
        refs.append(a < b)
        names.append("lt")
    run("int_ops", kernel, a, b, *outs)
    for name, got, ref in zip(names, outs, refs):
        check(f"{kernel} N={N} {name}", got, ref)


# ================================================================================================ casts.tile

CAST_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 448, 449, 464, 465, 480, -500, 1e10, -1e10, 2.0 ** 31, -2.0 ** 31,
                 2.0 ** 31 * 1.5, -2.0 ** 31 - 256, 2.0 ** 63, -2.0 ** 63, 1e30, 2.5, -2.5, 255.5, 256, -0.9, 0.99, 1e-40,
                 -1e-40, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504, 65519.99, 65520, -65520, 57344,
                 57345, 61440, 61439.996, 1e-8, 2 ** -10, 2 ** -9 * 1.5, 2.0 ** -16, 2 ** -17, 2 ** -25, 2 ** -24 * 1.5,
                 3.3895314e38, 3.4028235e38, 127.5, 128.0, -128.5, -129.0, 32767.5, 32768.0, -32769.0, 2 ** -7 * 1.0625,
                 0.0078125 * 1.5, 2.0 ** -133, 1.5 * 2.0 ** -133, 2.0 ** -149]


def _f32_to_int(x, dt):
    info = np.iinfo(dt)
    out = []
    for v in x.astype(np.float64):
        out.append(0 if np.isnan(v) else int(info.max) if v >= int(info.max) else int(info.min) if v <= int(info.min)
                   else int(v))
    return np.array(out, object)


@pytest.mark.parametrize("N", [0, 1, 37, 300])  # 0: the special values
def test_cast_from_f32(rng, N):
    if N == 0:
        x = np.array(CAST_SPECIALS, np.float32)
    else:
        x = (rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))).astype(np.float32)
        m = rng.random(N) < 0.2
        x[m] = rng.choice(np.array(CAST_SPECIALS, np.float32), int(m.sum()))
    n = len(x)
    xs = [float(v) for v in x]
    ints = {k: _f32_to_int(x, dt) for k, dt in [("I8", np.int8), ("I16", np.int16), ("I32", np.int32),
                                                  ("I64", np.int64), ("U8", np.uint8)]}
    rH, rB, r4, r5 = vec(f16_of, xs), vec(bf16_of, xs), vec(e4m3_of, xs), vec(e5m2_of, xs)
    rB1 = (x != 0) & ~np.isnan(x)
    outs = [poison(ints["I8"].astype(np.int64), np.int8), poison(ints["I16"].astype(np.int64), np.int16),
            poison(ints["I32"].astype(np.int64), np.int32), poison(ints["I64"].astype(np.int64), np.int64),
            poison(ints["U8"].astype(np.int64), np.uint8), poison(rB1, np.bool_), poison(rH, np.float16),
            poison(rB, "bf16"), poison(r4, "e4m3"), poison(r5, "e5m2")]
    run("casts", "cast_from_f32", x, *outs)
    for k, got in zip(["I8", "I16", "I32", "I64", "U8"], outs):
        check(f"f32->{k} n={n}", got, ints[k])
    check(f"f32->i1 n={n}", outs[5], rB1)
    check(f"f32->f16 n={n}", outs[6], rH)
    check(f"f32->bf16 n={n}", unbf(outs[7]), rB)
    check(f"f32->e4m3 n={n}", E4M3[outs[8]], r4)
    check(f"f32->e5m2 n={n}", E5M2[outs[9]], r5)


@pytest.mark.parametrize("N", [1, 77, 519])
def test_cast_to_f32(rng, N):
    h = rng.integers(0, 2 ** 16, N).astype(np.uint16)
    b = rng.integers(0, 2 ** 16, N).astype(np.uint16)
    e4 = rng.integers(0, 256, N).astype(np.uint8)
    e5 = rng.integers(0, 256, N).astype(np.uint8)
    if N > 256:  # every fp8 code; f16 / bf16 infinities, NaNs, -0.0, denormals
        e4[:256] = np.arange(256)
        e5[:256] = np.arange(256)[::-1]
        h[:7] = [0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x8000, 0x0001, 0x03FF]
        b[:7] = [0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x8000, 0x0001, 0xFFFF]
    rh = h.view(np.float16).astype(np.float64)
    rb = unbf(b).astype(np.float64)
    ys = [poison(r, np.float32) for r in (rh, rb, E4M3[e4], E5M2[e5])]
    run("casts", "cast_to_f32", h.view(np.float16), b, e4, e5, *ys)
    check("f16->f32", ys[0], rh)
    check("bf16->f32", ys[1], rb)
    check("e4m3->f32", ys[2], E4M3[e4])
    check("e5m2->f32", ys[3], E5M2[e5])


INT_SPECIALS = [0, 1, -1, 127, 128, -128, -129, 255, 256, 2 ** 31 - 1, 2 ** 31, -2 ** 31, -2 ** 31 - 1, 2 ** 63 - 1, -2 ** 63,
                2 ** 24 + 1, 2 ** 25 + 2 ** 17 + 1, 2 ** 25 + 2 ** 17, 2 ** 25 + 3 * 2 ** 17, 2 ** 24 + 3, 272, 273, 65519, 65520,
                2049, 2051, 16777217, 2 ** 40 + 2 ** 16 + 1, 449, 465, 1000, 2 ** 53 + 1, 2 ** 60 + 2 ** 36 + 1, 300, -300, 4097,
                4098]


@pytest.mark.parametrize("N", [0, 1, 100])  # 0: the special values
def test_cast_ints(rng, N):
    if N == 0:
        a = np.array(INT_SPECIALS, np.int64)
    else:
        a = (rng.integers(-2 ** 62, 2 ** 62, N) >> rng.integers(0, 62, N)).astype(np.int64)
    A = [int(v) for v in a]
    refs = [vec(f32_of, A), vec(f16_of, A), vec(bf16_of, A), wrap(A, 8), wrap(A, 8, False), wrap(A, 32), a != 0,
            vec(e4m3_of, A)]
    outs = [poison(refs[0], np.float32), poison(refs[1], np.float16), poison(refs[2], "bf16"), poison(refs[3], np.int8),
            poison(refs[4], np.uint8), poison(refs[5], np.int32), poison(refs[6], np.bool_), poison(refs[7], "e4m3")]
    run("casts", "cast_ints", a, *outs)
    for name, got, ref in zip(["f32", "f16"], outs[:2], refs[:2]):
        check(f"i64->{name}", got, ref)
    check("i64->bf16", unbf(outs[2]), refs[2])
    for name, got, ref in zip(["i8", "u8", "i32", "i1"], outs[3:7], refs[3:7]):
        check(f"i64->{name}", got, ref)
    check("i64->e4m3", E4M3[outs[7]], refs[7])


@pytest.mark.parametrize("N", [1, 256, 300])
def test_cast_small(rng, N):
    u = rng.integers(0, 256, N).astype(np.uint8)
    s = rng.integers(-128, 128, N).astype(np.int8)
    if N >= 256:
        u[:256] = np.arange(256)
        s[:256] = np.arange(256) - 128
    refs = [u.astype(np.float64), s.astype(np.float64), u.astype(np.int64) - 256 * (u >= 128), s.astype(np.int64) % 256,
            (u != 0).astype(np.int64) + u.astype(np.int64) * 2 + s.astype(np.int64) * 1000]
    outs = [poison(refs[0], np.float32), poison(refs[1], np.float32), poison(refs[2], np.int8), poison(refs[3], np.uint8),
            poison(refs[4], np.int32)]
    run("casts", "cast_small", u, s, *outs)
    for name, got, ref in zip(["u8->f32", "i8->f32", "u8->i8", "i8->u8", "u8->i1 and sums"], outs, refs):
        check(name, got, ref)


# ============================================================================================= literals.tile

@pytest.mark.parametrize("a,b", [(-7, 2), (7, -2), (-2 ** 31, -1), (5, 0), (-9, 4), (-1, 3), (2 ** 31 - 1, 7)])
def test_const_fold(a, b):
    w = lambda v: wrap([v], 32)[0]
    ref = np.array([-3, -1, 1, -4, 2 ** 30, 0x70, w(tdiv(a, b)), w(a - tdiv(a, b) * b if b else 0), -2 ** 31, -2 ** 31, -3, -1,
                    w(w(a << 3) >> 1), -3, w(tdiv(w(a + b - 1), b)), -1 if a < 0 else 0], np.int64)
    Y = poison(ref, np.int32)
    run("literals", "const_fold", Y, a, b)
    check(f"const_fold a={a} b={b}", Y, ref)


def test_const_casts():
    refB = [1.0, bf16_of(1.01171875), bf16_of(3.4e38), 1.0]
    refH = [1.0, math.inf, 65504.0, 0.0]
    refE, refF = [448.0, -448.0, e4m3_of(0.001), 448.0], [57344.0, 57344.0]
    refI = [2 ** 31 - 1, -2, 2 ** 31 - 1, -2 ** 31, 255, 1, 0, 127, -25536, 0, 0, 0, 1, 0x4B800000]
    refL = [2 ** 63 - 1, -2 ** 63, 9007199254740993, 9007199254740992]
    B, H, E, F = np.full(16, 0x7FC0, np.uint16), np.full(16, np.nan, np.float16), np.full(16, 0x7F, np.uint8), \
        np.full(16, 0x7F, np.uint8)
    I, L = np.full(16, -12345, np.int32), np.full(16, -12345, np.int64)
    run("literals", "const_casts", B, H, E, F, I, L)
    check("bf16 folds", unbf(B[:4]), np.array(refB))
    check("f16 folds", H[:4], np.array(refH))
    check("e4m3 folds", E4M3[E[:4]], np.array(refE))
    check("e5m2 folds", E5M2[F[:2]], np.array(refF))
    check("int folds", I[:14], np.array(refI, np.int64))
    check("i64 folds", L[:4], np.array(refL, np.int64))
    # the same narrowing casts of run-time values agree with the folded ones
    R = np.full(8, -12345, np.int32)
    run("literals", "runtime_casts", R, -129, 40000, 256, 2 ** 32 + 5)
    check("run-time narrowing casts", R[:5], np.array([127, -25536, 0, 5, 127], np.int64))
    check("folded = run-time", I[7:10], R[:3])


@pytest.mark.parametrize("N", [1, 10, 16])
def test_literal_convert(rng, N):
    X8 = rng.integers(-128, 128, N).astype(np.int8)
    XU = rng.integers(0, 256, N).astype(np.uint8)
    XH = rng.standard_normal(N).astype(np.float16)
    XE = rng.integers(0, 0x7F, N).astype(np.uint8)
    pad = 16 - N
    rO8 = np.concatenate([X8, np.full(pad, 127)]).astype(np.int64)        # other = -129: cast<i8> keeps the low bits
    rOU = np.concatenate([XU, np.full(pad, 255)]).astype(np.int64)        # other = -1
    rOH = np.concatenate([XH.astype(np.float64), np.full(pad, np.inf)])    # other = 1e10 rounds to inf
    rOE = np.concatenate([E4M3[XE], np.full(pad, -448.0)])                 # other = -inf saturates
    x8 = np.concatenate([X8, np.zeros(pad, np.int8)]).astype(np.int64)
    xu = np.concatenate([XU, np.zeros(pad, np.uint8)]).astype(np.int64)
    refs = dict(O8=rO8, OU=rOU, OH=rOH, OE=rOE, FU=np.full(16, 255), F8=np.full(16, -56), FH=np.full(16, np.inf),
                SU=np.array([255, 3]), S8=np.array([-56]), IU=np.arange(512) % 256, I8=(np.arange(256) + 128) % 256 - 128,
                IH=vec(f16_of, range(4096)), IB=vec(bf16_of, range(512)),
                R8=np.array(list(wrap([x8.sum()], 8)) + [x8.max()]),
                RU=np.array([xu.sum() % 256, XU.min()]))
    outs = dict(O8=poison(rO8, np.int8), OU=poison(rOU, np.uint8), OH=poison(rOH, np.float16), OE=poison(rOE, "e4m3"),
                FU=poison(refs["FU"], np.uint8), F8=poison(refs["F8"], np.int8), FH=poison(refs["FH"], np.float16),
                SU=np.full(4, 0x55, np.uint8), S8=np.full(4, 0x55, np.int8), IU=poison(refs["IU"], np.uint8),
                I8=poison(refs["I8"], np.int8), IH=poison(refs["IH"], np.float16), IB=poison(refs["IB"], "bf16"),
                R8=np.full(4, 0x55, np.int8), RU=np.full(4, 0x55, np.uint8))
    run("literals", "literal_convert", X8, XU, XH, XE, *outs.values())
    got = dict(outs, OE=E4M3[outs["OE"]], IB=unbf(outs["IB"]), SU=outs["SU"][:2], S8=outs["S8"][:1],
               R8=outs["R8"][:2], RU=outs["RU"][:2])
    for k, ref in refs.items():
        check(f"literal_convert {k} N={N}", got[k], ref)


@pytest.mark.parametrize("N", [1, 70, 256])
def test_lit_adopt(rng, N):
    u = rng.integers(0, 256, N).astype(np.uint8)
    b = rng.integers(-128, 128, N).astype(np.int8)
    h = rng.integers(-2 ** 15, 2 ** 15, N).astype(np.int16)
    if N >= 256:
        u[:256] = np.arange(256)
        b[:256] = np.arange(256) - 128
    U, B, H = u.astype(np.int64), b.astype(np.int64), h.astype(np.int64)
    refs = [(U - 1) % 256, (U * 255) % 256, np.minimum(U, 200), wrap(B + 200, 8), wrap(np.maximum(B, -128) * -128, 8),
            wrap(H + 65535, 16), U > 254, B >= -128, U != 255]
    dts = [np.uint8] * 3 + [np.int8] * 2 + [np.int16] + [np.bool_] * 3
    outs = [poison(r, d) for r, d in zip(refs, dts)]
    run("literals", "lit_adopt", u, b, h, *outs)
    for name, got, ref in zip(["u + -1", "u * 255", "min(u, 200)", "b + 200", "max(b, -128) * -128", "h + 65535",
                               "u > 254", "b >= -128", "u != 255"], outs, refs):
        check(f"{name} N={N}", got, ref)


# ======================================================================================= gather_scatter.tile

@pytest.mark.parametrize("R,C", [(5, 7), (1, 1), (20, 40)])
def test_gather_scatter(rng, R, C):
    X = rng.standard_normal((R, C)).astype(np.float32)
    I = rng.integers(-3, R + 3, 16).astype(np.int32)
    I[:4] = [-2 ** 31, 2 ** 31 - 1, R, -1]
    J = rng.integers(-3, C + 3, 8).astype(np.int32)
    J[:2] = [C, -1]
    inI, inJ = (I >= 0) & (I < R), (J >= 0) & (J < C)
    refY = np.where(inI[:, None] & inJ[None, :], X[np.clip(I, 0, R - 1)][:, np.clip(J, 0, C - 1)], -7.0)
    cols = np.arange(32)
    refZ = np.where(inI[:, None] & (cols < C)[None, :], X[np.clip(I, 0, R - 1)][:, np.clip(cols, 0, C - 1)], 3.5)
    Y, Z = poison(refY, np.float32), poison(refZ, np.float32)
    run("gather_scatter", "gather2d", X, I, J, Y, Z)
    check(f"gather2d {R}x{C} Y", Y, refY)
    check(f"gather2d {R}x{C} Z", Z, refZ)

    # scatter with duplicate indices: the interpreter keeps the last in row-major order
    V = rng.standard_normal((16, 8)).astype(np.float32)
    I = rng.integers(-2, R + 2, 16).astype(np.int32)
    J = rng.integers(-2, C + 2, 8).astype(np.int32)
    I[0] = -2 ** 31
    Yo = np.full((R, C), 9.0, np.float32)
    ref = Yo.astype(np.float64)
    for a in range(16):
        for b in range(8):
            if 0 <= I[a] < R and 0 <= J[b] < C:
                ref[I[a], J[b]] = V[a, b]
    run("gather_scatter", "scatter2d", V, I, J, Yo)
    check(f"scatter2d {R}x{C}", Yo, ref)

    # distinct strided indices, reversed columns, some out of range
    si, oi, sj, oj = int(rng.choice([-2, -1, 1, 3])), int(rng.integers(-3, R + 1)), int(rng.choice([-1, 1, 2])), \
        int(rng.integers(-2, C + 2))
    Yo = np.full((R, C), 9.0, np.float32)
    ref = Yo.astype(np.float64)
    for a in range(16):
        for b in range(8):
            i, j = a * si + oi, (7 - b) * sj + oj
            if 0 <= i < R and 0 <= j < C:
                ref[i, j] = V[a, b]
    run("gather_scatter", "scatter2d_strided", V, Yo, si, oi, sj, oj)
    check(f"scatter2d_strided {R}x{C} ({si} {oi} {sj} {oj})", Yo, ref)

    # i8 / i64 / u8 index tiles (i64 converted to i32: its low bits), a scalar row index
    I8 = rng.integers(-128, 128, 32).astype(np.int8)
    I64 = rng.integers(-5, C + 5, 32).astype(np.int64)
    I64[:3] = [2 ** 32 + 1, -2 ** 32 + 2, 2 ** 40]
    U = rng.integers(0, 256, 32).astype(np.uint8)
    U[:3] = [255, 0, min(R - 1, 255)]
    r = int(rng.integers(0, min(R, C)))
    g = lambda row, col, oth: float(X[row, col]) if (0 <= row < R and 0 <= col < C) else oth
    refs = [np.array([g(r, int(c), 0.0) for c in I8]),
            np.array([g(r, int(wrap([c], 32)[0]), -1.0) for c in I64]),
            np.array([g(int(c), r, 0.0) for c in U])]
    ys = [poison(x, np.float32) for x in refs]
    run("gather_scatter", "gather_idx_types", X, I8, I64, U, *ys, r)
    for name, got, ref in zip(["i8", "i64", "u8"], ys, refs):
        check(f"gather {name} index {R}x{C}", got, ref)


@pytest.mark.parametrize("N,NB", [(1, 1), (100, 7), (1000, 33)])
def test_histogram(rng, N, NB):
    X = rng.integers(-3, NB + 3, N).astype(np.int32)
    H = rng.integers(0, 5, NB).astype(np.int32)
    HF = np.full(NB, 0.25, np.float32)
    inb = X[(X >= 0) & (X < NB)]
    refH = H + np.bincount(inb, minlength=NB)
    refF = 0.25 + 0.5 * np.bincount(inb, minlength=NB)
    run("gather_scatter", "histogram", X, H, HF)
    check(f"histogram N={N} NB={NB}", H, refH.astype(np.int64))
    check(f"histogram f32 N={N} NB={NB}", HF, refF)


# ============================================================================================== atomics.tile

def fmax0(a, b):  # max with -0.0 < +0.0
    return b if (b > a or (b == a and not np.signbit(b))) else a


def fmin0(a, b):
    return b if (b < a or (b == a and np.signbit(b))) else a


@pytest.mark.parametrize("N", [1, 31, 33, 200])
def test_atomics(rng, N):
    P = -(-N // 32)
    X = rng.standard_normal(N).astype(np.float32)
    if N >= 33:
        X[[3, 7, 5, 9]] = [-0.0, 0.0, 1e30, -1e30]
    XI = rng.integers(-2 ** 31, 2 ** 31, N).astype(np.int32)
    S = np.full(4, 0.5, np.float32)
    MX = np.full(4, -np.inf, np.float32)
    MX[1] = 0.0 if N >= 33 else -0.0
    MN = np.full(4, np.inf, np.float32)
    MN[3] = -0.0 if N >= 33 else 0.0
    SI = np.arange(4, dtype=np.int32)
    MXI, MNI = np.full(4, -2 ** 31, np.int32), np.full(4, 2 ** 31 - 1, np.int32)
    rS, rMX, rMN = S.copy(), MX.copy(), MN.copy()
    rSI = [int(v) for v in SI]
    rMXI, rMNI = MXI.astype(np.int64), MNI.astype(np.int64)
    for pid in range(P):  # the interpreter adds in grid order, a program's lanes in order
        for e in range(32):
            n, s = pid * 32 + e, e % 4
            x = X[n] if n < N else np.float32(0)
            rS[s] = np.float32(rS[s] + x)
            if n < N:
                rMX[s], rMN[s] = fmax0(rMX[s], x), fmin0(rMN[s], x)
                rMXI[s], rMNI[s] = max(rMXI[s], XI[n]), min(rMNI[s], XI[n])
                rSI[s] += int(XI[n])
    run("atomics", "atomics_all", X, XI, S, MX, MN, SI, MXI, MNI)
    check(f"atomic_add f32 N={N}", S, rS)
    check(f"atomic_max f32 N={N}", MX, rMX)
    check(f"atomic_min f32 N={N}", MN, rMN)
    check(f"atomic_add i32 (wrapping) N={N}", SI, wrap(rSI, 32))
    check(f"atomic_max i32 N={N}", MXI, rMXI)
    check(f"atomic_min i32 N={N}", MNI, rMNI)

    # f16 / bf16 adds, each rounded once to the type
    H, BF = np.zeros(4, np.float16), np.zeros(4, np.uint16)
    rH, rB = [0.0] * 4, [0.0] * 4
    for pid in range(P):
        for e in range(32):
            n, s = pid * 32 + e, e % 4
            x = float(X[n]) if n < N else 0.0
            rH[s] = f16_of(rH[s] + f16_of(x))
            rB[s] = bf16_of(rB[s] + bf16_of(x))
    run("atomics", "atomics_narrow", X, H, BF)
    check(f"atomic_add f16 N={N}", H, np.array(rH))
    check(f"atomic_add bf16 N={N}", unbf(BF), np.array(rB))


@pytest.mark.parametrize("M", [1, 5, 40])
def test_atomics_scalar(rng, M):
    v = float(rng.integers(1, 8)) / 4
    S, I = np.zeros(M, np.float32), np.full(M, 3, np.int32)
    rS, rI = np.zeros(M), np.full(M, 3, np.int64)
    for pid in range(3):
        rS[M - 1] += v
        rI[M - 1] = max(rI[M - 1], pid - 1)
        rS[:16] += 1.0
        rI[1:17] = np.minimum(rI[1:17], -pid)
    run("atomics", "atomics_scalar", S, I, v, M - 1)
    check(f"atomics_scalar S M={M}", S, rS)
    check(f"atomics_scalar I M={M}", I, rI)


@pytest.mark.parametrize("P", [1, 7, 40])
def test_fetch_add(rng, P):
    c0 = int(rng.integers(-3, 3))
    Cnt = np.array([c0, 77], np.int32)
    Seen = np.zeros(P, np.int32)
    Sum, Out = np.zeros(1, np.int32), np.array([-50, 50], np.int32)
    tickets = np.arange(c0, c0 + P)
    refSeen = np.bincount(tickets[(tickets >= 0) & (tickets < P)], minlength=P)
    run("atomics", "fetch_add_tickets", Cnt, Seen, Sum, Out)
    check(f"tickets counter P={P}", Cnt, np.array([c0 + P, 77]))
    check(f"tickets seen P={P}", Seen, refSeen)
    check(f"tickets sum P={P}", Sum, np.array([tickets.sum()]))
    check(f"fetch_add outside the tensor gives 0 P={P}", Out, np.array([0, 0]))

    N = 64 * P - int(rng.integers(0, 64))
    X = rng.standard_normal(N).astype(np.float32)
    NP = 64
    Part = np.full(NP, np.nan, np.float32)
    Cnt, Tot = np.zeros(1, np.int32), np.full(1, np.nan, np.float32)
    run("atomics", "last_program", X, Part, Cnt, Tot)
    Xp = np.concatenate([X, np.zeros(64 * P - N, np.float32)]).astype(np.float64)
    check(f"last_program partial sums P={P}", Part[:P], Xp.reshape(P, 64).sum(1), 1e-5 * 8, 1e-5)
    check(f"last_program untouched P={P}", Part[P:], np.full(NP - P, np.nan))
    check(f"last_program total P={P}", Tot, np.array([X.astype(np.float64).sum()]), 1e-5 * math.sqrt(N), 1e-5)
    check(f"last_program counter back to 0 P={P}", Cnt, np.array([0]))


@pytest.mark.parametrize("N,D,NB", [(1, 1, 1), (13, 20, 5), (40, 33, 3)])
def test_scatter_rows(rng, N, D, NB):
    X = rng.standard_normal((N, D)).astype(np.float32)
    Bin = rng.integers(-2, NB + 2, N).astype(np.int32)
    O, Cnt, OB = np.zeros((NB, D), np.float32), np.zeros((NB, 3), np.int32), np.zeros((NB, D), np.uint16)
    rO, rC, rOB = np.zeros((NB, D), np.float32), np.zeros((NB, 3), np.int64), np.zeros((NB, D))
    gx, gy = -(-N // 8), -(-D // 16)
    for z in range(2):  # grid order: x fastest, then y, then z
        for py in range(gy):
            for px in range(gx):
                for i in range(px * 8, min(N, px * 8 + 8)):
                    b = Bin[i]
                    if not 0 <= b < NB:
                        continue
                    for d in range(py * 16, min(D, py * 16 + 16)):
                        rO[b, d] = np.float32(rO[b, d] + np.float32(X[i, d] * np.float32(z + 1)))
                        if z == 0:
                            rOB[b, d] = bf16_of(rOB[b, d] + bf16_of(float(X[i, d])))
                    if py == 0:
                        rC[b, z] += 1
                    rC[b, 2] = max(rC[b, 2], gy * 100 + py)
    run("atomics", "scatter_rows", X, Bin, O, Cnt)
    run("atomics", "scatter_rows_bf16", X, Bin, OB)
    check(f"scatter_rows O {N}x{D} NB={NB}", O, rO)
    check(f"scatter_rows Cnt {N}x{D} NB={NB}", Cnt, rC)
    check(f"scatter_rows_bf16 {N}x{D} NB={NB}", unbf(OB), rOB)


# ================================================================================================== rng.tile

@pytest.mark.parametrize("N,seed", [(1, 0), (77, 12345), (300, -1), (130, 2 ** 40 + 17), (64, -2 ** 63), (200, None)])
def test_rng_all(rng, N, seed):
    if seed is None:
        seed = int(rng.integers(-2 ** 63, 2 ** 63 - 1))
    O = rng.integers(-2 ** 31, 2 ** 31, N).astype(np.int32)
    O[: min(N, 8)] = np.array([0, 1, 2, 3, 4, -1, 2 ** 31 - 1, -2 ** 31])[: min(N, 8)]
    rI = ref_randint(seed, O).view(np.int32).astype(np.int64)
    rU, rG = ref_rand(seed, O), ref_randn(seed, O)
    U, G, I = poison(rU, np.float32), poison(rG, np.float32), poison(rI, np.int32)
    run("rng", "rng_all", O, U, G, I, seed)
    check(f"randint N={N} seed={seed}", I, rI)
    check(f"rand N={N} seed={seed}", U, rU)
    check(f"randn N={N} seed={seed}", G, rG, 3e-5, 1e-5)
    U2, G2, I2 = poison(rU, np.float32), poison(rG, np.float32), poison(rI, np.int32)
    run("rng", "rng_all", O, U2, G2, I2, seed)
    check("the same again (randn)", G2, G)


@pytest.mark.parametrize("R,C", [(1, 1), (5, 13), (9, 8)])
def test_rng_shapes(rng, R, C):
    seed = int(rng.integers(-2 ** 31, 2 ** 31))
    base = int(rng.integers(-2 ** 40, 2 ** 40))
    offs = np.arange(R)[:, None] * C + np.arange(C)[None, :]
    ref = ref_rand(seed, offs)
    refS = np.array([ref_rand(seed, [7])[0], ref_randn(seed, [wrap([base], 32)[0]])[0],
                     float(np.float32(ref_randint(seed, [wrap([base], 8)[0]]).view(np.int32)[0]))])
    U2, S = poison(ref, np.float32), poison(refS, np.float32)
    run("rng", "rng_shapes", U2, S, seed, base)
    check(f"rand 2-D {R}x{C} seed={seed}", U2, ref)
    check(f"rand scalar seed={seed}", S[[0, 2]], refS[[0, 2]])
    check(f"randn at an i64 offset seed={seed} base={base}", S[1:2], refS[1:2], 3e-5, 1e-5)


@pytest.mark.parametrize("R,C", [(1, 1), (3, 200), (2, 300)])
def test_dropout(rng, R, C):
    X = rng.standard_normal((R, C)).astype(np.float32)
    pr, seed = float(rng.choice([0.1, 0.3, 0.5])), int(rng.integers(0, 2 ** 62))
    keep = ref_rand(seed, np.arange(R * C).reshape(R, C)) >= np.float32(pr)
    refY = np.where(keep, X / (np.float32(1) - np.float32(pr)), 0).astype(np.float32)
    Y, M = poison(refY, np.float32), poison(keep, np.uint8)
    run("rng", "dropout", X, Y, M, pr, seed)
    check(f"dropout mask {R}x{C}", M, keep.astype(np.int64))
    check(f"dropout Y {R}x{C}", Y, refY)


# ============================================================================================ sort_scan.tile

def fkey(v):
    """the sort order: -inf < ... < -0.0 < +0.0 < ... < inf < NaN"""
    v = float(v)
    return (1, 0.0, 0) if math.isnan(v) else (0, v, 0 if math.copysign(1, v) < 0 else 1)


def fsort(row, desc=False):
    return np.array(sorted(row, key=fkey, reverse=desc), dtype=row.dtype)


def nasty(rng, n):
    """normal values, 35% of them NaN (with payloads, negative), +-inf, +-0.0 or +-1.0"""
    x = rng.standard_normal(n).astype(np.float32)
    pool = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0, -1.0], np.float32)
    m = rng.random(n) < 0.35
    x[m] = rng.choice(pool, int(m.sum()))
    if n > 3:
        x[:2] = np.array([0x7F800001, 0xFFC00123], np.uint32).view(np.float32)
    return x


@pytest.mark.parametrize("R,C", [(1, 1), (3, 5), (4, 64), (6, 40), (16, 9)])
def test_sort_f32(rng, R, C):
    X = nasty(rng, R * C).reshape(R, C)
    refA = np.stack([fsort(np.concatenate([X[r], np.full(64 - C, np.inf, np.float32)]))[:C] for r in range(R)])
    refD = np.stack([fsort(np.concatenate([X[r], np.full(64 - C, -np.inf, np.float32)]), True)[:C] for r in range(R)])
    refC = np.stack([fsort(np.concatenate([X[:, c], np.full(16 - R, np.inf, np.float32)]))[:R] for c in range(C)], 1)
    A, D, Ac = poison(refA, np.float32), poison(refD, np.float32), poison(refC, np.float32)
    run("sort_scan", "sort_f32", X, A, D)
    run("sort_scan", "sort_cols", X, Ac)
    check(f"sort ascending {R}x{C}", A, refA)
    check(f"sort descending {R}x{C}", D, refD)
    check(f"sort axis 0 {R}x{C}", Ac, refC)
    for name, got in [("ascending", A), ("descending", D), ("axis 0", Ac)]:
        nan_bits = got.view(np.uint32)[np.isnan(got)]
        assert np.all(nan_bits == 0x7FC00000), f"sort {name}: NaN not canonical: {[hex(v) for v in nan_bits[:4]]}"


@pytest.mark.parametrize("C", [1, 7, 100, 128])
def test_sort_ints(rng, C):
    X8 = rng.integers(-128, 128, C).astype(np.int8)
    X16 = rng.integers(-2 ** 15, 2 ** 15, C).astype(np.int16)
    X64 = rng.integers(-2 ** 63, 2 ** 63 - 1, C, dtype=np.int64)
    XU = rng.integers(0, 256, C).astype(np.uint8)
    XH = rng.standard_normal(C).astype(np.float16)
    XB = bf16_bits(nasty(rng, C))
    if C > 5:
        XH[:4] = [np.nan, -0.0, 0.0, -np.inf]
        X8[:2] = [-128, 127]
        X64[:2] = [-2 ** 63, 2 ** 63 - 1]
    rH = fsort(np.concatenate([XH, np.full(128 - C, np.inf, np.float16)]))[:C]
    rB = fsort(unbf(XB), True)
    refs = [np.sort(X8), np.sort(X16)[::-1], np.sort(X64), np.sort(XU), rH, rB]
    ys = [poison(refs[0], np.int8), poison(refs[1], np.int16), poison(refs[2], np.int64), poison(refs[3], np.uint8),
          poison(rH, np.float16), poison(rB, "bf16")]
    run("sort_scan", "sort_ints", X8, X16, X64, XU, XH, XB, *ys)
    for name, got, ref in zip(["i8", "i16 descending", "i64", "u8", "f16"], ys, refs):
        check(f"sort {name} C={C}", got, ref)
    check(f"sort bf16 descending C={C}", unbf(ys[5]), rB)
    assert np.all(ys[5][np.isnan(unbf(ys[5]))] == 0x7FC0), "sort bf16: NaN not canonical"
    assert np.all(ys[4].view(np.uint16)[np.isnan(ys[4])] == 0x7E00), "sort f16: NaN not canonical"


def cummax_ref(row):
    out, m = [], None
    for v in row.astype(np.float32):
        if m is None or (not np.isnan(m) and (np.isnan(v) or v > m or (v == m and not np.signbit(v)))):
            m = v
        out.append(m)
    return np.array(out, np.float32)


def argext(row, mx):
    """first extremum; the first NaN wins; -0.0 == +0.0"""
    best = None
    for i, v in enumerate(row):
        if np.isnan(v):
            return i
        if best is None or (v > row[best] if mx else v < row[best]):
            best = i
    return best


def rext(row, mx):
    """reduce_max / reduce_min: NaN if any; -0.0 < +0.0"""
    if np.isnan(row).any():
        return np.float32(np.nan)
    m = row[0]
    for v in row[1:]:
        m = fmax0(m, v) if mx else fmin0(m, v)
    return m


@pytest.mark.parametrize("R,C,kind", [(1, 1, "nasty"), (4, 17, "nasty"), (5, 32, "ints"), (3, 32, "ties"), (2, 29, "ties")])
def test_scans(rng, R, C, kind):
    if kind == "nasty":
        X = nasty(rng, R * C).reshape(R, C)
    elif kind == "ints":  # ties and one NaN
        X = rng.integers(-3, 4, (R, C)).astype(np.float32)
        X[0, 7] = np.nan
    else:  # ties between -0.0 and +0.0, no NaN; row 1's maximum is a zero, -0.0 first
        X = rng.choice(np.array([-0.0, 0.0, 1.0, -1.0, 2.0], np.float32), (R, C))
        X[0, :4] = [-1.0, -0.0, -1.0, 0.0]
        X[1] = rng.choice(np.array([-0.0, 0.0, -1.0], np.float32), C)
        X[1, :2] = [-0.0, 0.0]
    pad = lambda r, v: np.concatenate([X[r], np.full(32 - C, v, np.float32)])
    refs = [np.stack([np.cumsum(X[r], dtype=np.float32) for r in range(R)]),
            np.stack([cummax_ref(X[r]) for r in range(R)]),
            np.array([argext(pad(r, -np.inf), True) for r in range(R)]),
            np.array([argext(pad(r, np.inf), False) for r in range(R)]),
            np.array([rext(pad(r, -np.inf), True) for r in range(R)]),
            np.array([rext(pad(r, np.inf), False) for r in range(R)]),
            X.astype(np.float64).sum(1)]
    dts = [np.float32, np.float32, np.int32, np.int32, np.float32, np.float32, np.float32]
    outs = [poison(r, d) for r, d in zip(refs, dts)]
    run("sort_scan", "scans", X, *outs)
    for name, got, ref in zip(["cumsum", "cummax", "argmax", "argmin", "reduce_max", "reduce_min"], outs, refs):
        check(f"{name} {R}x{C} {kind}", got, ref)
    check(f"reduce_sum {R}x{C} {kind}", outs[6], refs[6], 1e-5 * 32, 1e-5)


@pytest.mark.parametrize("C", [1, 9, 64])
def test_scans_narrow(rng, C):
    XH = (rng.standard_normal(C) * 100).astype(np.float16)
    XB = bf16_bits(rng.standard_normal(C).astype(np.float32) * 50)
    X8 = rng.integers(-128, 128, C).astype(np.int8)
    XU = rng.integers(0, 256, C).astype(np.uint8)
    X64 = rng.integers(-2 ** 62, 2 ** 62, C, dtype=np.int64)
    if C > 5:
        X8[:2] = [127, 100]
        if C == 9:
            XH[3] = np.nan
    # f16 / bf16: an f32 running sum, each output rounded once
    rYH = vec(f16_of, np.cumsum(XH.astype(np.float32), dtype=np.float32).astype(np.float64))
    rYB = vec(bf16_of, np.cumsum(unbf(XB), dtype=np.float32).astype(np.float64))
    xu = np.concatenate([XU, np.zeros(64 - C, np.uint8)])
    x8 = np.concatenate([X8, np.full(64 - C, 127, np.int8)])
    refs = [rYH, rYB, wrap(np.cumsum(X8.astype(np.int64)), 8), np.cumsum(XU.astype(np.int64)) % 256,
            wrap(np.cumsum(X64.astype(object)), 64), cummax_ref(XH.astype(np.float32)),
            np.maximum.accumulate(X8), np.maximum.accumulate(XU), np.array([np.argmax(xu), np.argmin(x8)])]
    outs = [poison(refs[0], np.float16), poison(refs[1], "bf16"), poison(refs[2], np.int8), poison(refs[3], np.uint8),
            poison(refs[4], np.int64), poison(refs[5], np.float16), poison(refs[6], np.int8), poison(refs[7], np.uint8),
            poison(refs[8], np.int32)]
    run("sort_scan", "scans_narrow", XH, XB, X8, XU, X64, *outs)
    got = list(outs)
    got[1] = unbf(outs[1])
    for name, g, ref in zip(["cumsum f16", "cumsum bf16", "cumsum i8", "cumsum u8", "cumsum i64", "cummax f16",
                             "cummax i8", "cummax u8", "argmax u8 / argmin i8"], got, refs):
        check(f"{name} C={C}", g, ref)


@pytest.mark.parametrize("C", [1, 10, 64])
def test_i64red(rng, C):
    L = rng.integers(-2 ** 63, 2 ** 63 - 1, C, dtype=np.int64)
    L[rng.random(C) < 0.3] = 2 ** 63 - 1
    U = rng.integers(250, 256, C).astype(np.uint8)  # ties
    up = np.concatenate([U, np.zeros(64 - C, np.uint8)])
    refs = [np.sort(L)[::-1], np.sort(U)[::-1], np.maximum.accumulate(L),
            np.array(list(wrap([sum(int(v) for v in L)], 64)) + [L.max(), L.min()], np.int64),
            np.array([np.argmax(L), np.argmin(U), np.argmax(up)])]
    SD, UD, CM = poison(refs[0], np.int64), poison(refs[1], np.uint8), poison(refs[2], np.int64)
    R, A = np.full(4, 0x55, np.int64), np.full(4, 0x55, np.int32)
    R[:3], A[:3] = poison(refs[3], np.int64), poison(refs[4], np.int32)
    run("sort_scan", "i64red", L, U, SD, UD, CM, R, A)
    check(f"i64 sort descending C={C}", SD, refs[0])
    check(f"u8 sort descending C={C}", UD, refs[1])
    check(f"i64 cummax C={C}", CM, refs[2])
    check(f"i64 reduce_sum (wrapping) / max / min C={C}", R[:3], refs[3])
    check(f"argmax i64 / argmin u8 / argmax u8 (ties) C={C}", A[:3], refs[4])


# =============================================================================================== shapes.tile

@pytest.mark.parametrize("A,B,C", [(4, 2, 8), (3, 1, 5), (1, 2, 7)])
def test_axes3(rng, A, B, C):
    Xf = rng.integers(-4, 5, (4, 2, 8)).astype(np.float32)  # ties
    Xf[1, 0, 3] = -0.0
    X = np.ascontiguousarray(Xf[:A, :B, :C])
    Xp = np.zeros((4, 2, 8), np.float32)
    Xp[:A, :B, :C] = X  # the tile, padded with 0
    with np.errstate(all="ignore"):
        cm2 = np.stack([np.stack([cummax_ref(Xp[a, b]) for b in range(2)]) for a in range(4)])
    refs = [np.cumsum(Xp, 0), np.cumsum(Xp, 1), cm2, -np.sort(-Xp, 0), np.sort(Xp, 1), np.argmax(Xp, 0), np.argmin(Xp, 1),
            Xp.astype(np.float64).sum(2), np.array([[rext(Xp[:, b, c], True) for c in range(8)] for b in range(2)])]
    refs = [r[:A, :B, :C] for r in refs[:5]] + [refs[5][:B, :C], refs[6][:A, :C], refs[7][:A, :B], refs[8][:B, :C]]
    dts = [np.float32] * 5 + [np.int32] * 2 + [np.float32] * 2
    outs = [poison(r, d) for r, d in zip(refs, dts)]
    run("shapes", "axes3", X, *outs)
    names = ["cumsum axis -3", "cumsum axis 1", "cummax axis -1", "sort axis 0 descending", "sort axis -2",
             "argmax axis 0", "argmin axis -2", "reduce_sum axis 2", "reduce_max axis -3"]
    for name, got, ref in zip(names, outs, refs):
        if name.startswith("sort"):  # NumPy's sort leaves -0.0 / +0.0 ties in any order: values only
            check(f"{name} {A}x{B}x{C}", got + 0.0, ref + 0.0)
        else:
            check(f"{name} {A}x{B}x{C}", got, ref, *((1e-6, 0) if name.startswith("reduce_sum") else (0, 0)))


@pytest.mark.parametrize("R,C", [(1, 1), (4, 8), (2, 3), (9, 20)])
def test_tiny(rng, R, C):
    X = rng.standard_normal((R, C)).astype(np.float32)
    Xp = np.zeros((4, 8), np.float32)
    Xp[:min(R, 4), :min(C, 8)] = X[:4, :8]
    x = Xp[0, 0]
    refS, refT = np.array([x, x, x, x]), (Xp[:, 0:1] + Xp[0:1, :] * x).astype(np.float32)
    S, T, I = poison(refS, np.float32), poison(refT, np.float32), poison(np.array([0, 0]), np.int32)
    run("shapes", "tiny", X, S, T, I)
    check(f"tiny S {R}x{C}", S, refS)
    check(f"tiny I {R}x{C}", I, np.array([0, 0]))
    check(f"tiny T {R}x{C}", T, refT)


@pytest.mark.parametrize("R,C", [(300, 100), (256, 128), (17, 5)])
def test_big_scan(rng, R, C):
    X = rng.standard_normal((R, C)).astype(np.float32)
    Xp = np.zeros((max(R, 256), 128), np.float32)
    Xp[:R, :C] = X
    ref = (np.cumsum(Xp[:256], 0, dtype=np.float32) + np.maximum.accumulate(Xp[:256], 1))[:min(R, 256), :C]
    Y = np.full((R, C), np.nan, np.float32)
    run("shapes", "big_scan", X, Y)
    check(f"big_scan {R}x{C}", Y[:256], ref)  # the cumsum's order is defined: exact
    check(f"big_scan {R}x{C}: rows past the tile untouched", Y[256:], np.full((max(R - 256, 0), C), np.nan))


@pytest.mark.parametrize("R,C", [(32, 32), (17, 29), (1, 3)])
def test_sort_chain(rng, R, C):
    X = rng.standard_normal((R, C)).astype(np.float32)
    Xp = np.zeros((32, 32), np.float32)
    Xp[:R, :C] = X
    ref = np.sort(-np.sort(-np.sort(Xp, 0).T, 1), 0)[:R, :C]
    Y = poison(ref, np.float32)
    run("shapes", "sort_chain", X, Y)
    check(f"sort_chain {R}x{C}", Y, ref)


# =============================================================================================== fmath.tile

FMATH_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 88.72283, 88.7229, 89.0, -87.33654, -103.97208, -104.0,
                  -150.0, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, 20.0, -20.0, 9.0, -9.0, 1e-8, -1e-8, 0.0625, 0.06249, -0.0625,
                  128.0, -149.0, -126.0, 127.99, 1e30, 4096.0, 1e6, 0.5, 2.5, -2.5, 1.5, 1.17549435e-38, 7.0, 1e-30, 100.0]


def _safe(fn):
    def g(v):
        try:
            return fn(v)
        except OverflowError:
            return math.inf
        except ValueError:
            return math.nan
    return g


def _fmin(a, b):
    return math.nan if (math.isnan(a) or math.isnan(b)) else float(fmin0(np.float64(a), np.float64(b)))


def _fmax(a, b):
    return math.nan if (math.isnan(a) or math.isnan(b)) else float(fmax0(np.float64(a), np.float64(b)))


def _fmod(a, b):
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return math.nan
    return a if math.isinf(b) else math.fmod(a, b)


def _nan_or(fn, bad):
    return lambda v: math.nan if (math.isnan(v) or bad(v)) else fn(v)


FMATH_REFS = {  # output name: the float64 reference of x (the interpreter rounds the exact value once)
    "EX": _safe(math.exp),
    "LG": _nan_or(lambda v: -math.inf if v == 0 else math.log(v), lambda v: v < 0),
    "TH": _safe(math.tanh),
    "SG": _nan_or(lambda v: 0.0 if v < -745 else 1 / (1 + math.exp(-v)) if v > -700 else math.exp(v), lambda v: False),
    "SQ": _nan_or(lambda v: v if v == 0 else math.sqrt(v), lambda v: v < 0),
    "RS": _nan_or(lambda v: math.copysign(math.inf, v) if v == 0 else 1 / math.sqrt(v), lambda v: v < 0),
    "FL": lambda v: v if (math.isnan(v) or math.isinf(v) or v == 0) else math.copysign(math.floor(v), v),
    "AB": abs,
    "E2": _safe(lambda v: 2.0 ** v),
    "L2": _nan_or(lambda v: -math.inf if v == 0 else math.log2(v), lambda v: v < 0),
    "SN": _nan_or(math.sin, math.isinf),
    "CS": _nan_or(math.cos, math.isinf),
    "CE": lambda v: v if (math.isnan(v) or math.isinf(v) or v == 0) else math.copysign(math.ceil(v), v),
}


@pytest.mark.parametrize("N", [0, 1, 200])  # 0: the special values
def test_fmath(rng, N):
    if N == 0:
        x = np.array(FMATH_SPECIALS, np.float32)
        y = np.roll(x, 3)
    else:
        x = (rng.standard_normal(N) * np.exp2(rng.integers(-10, 8, N))).astype(np.float32)
        y = rng.standard_normal(N).astype(np.float32)
    xs, ys = x.astype(np.float64), y.astype(np.float64)
    refs = {"MN": [_fmin(a, b) for a, b in zip(xs, ys)], "MX": [_fmax(a, b) for a, b in zip(xs, ys)],
            "W": np.where(x > y, x, y), "C": x != y}
    for k in ["EX", "LG", "TH", "SG", "SQ", "RS", "FL"]:
        refs[k] = [FMATH_REFS[k](v) for v in xs]
    refs["RM"] = [_fmod(a, b) for a, b in zip(xs, ys)]
    for k in ["AB", "E2", "L2", "SN", "CS", "CE"]:
        refs[k] = [FMATH_REFS[k](v) for v in xs]
    with np.errstate(all="ignore"):
        refs["FM"] = [f32_of(Fraction(a) * Fraction(b) + Fraction(a)) if all(map(math.isfinite, (a, b))) else a * b + a
                      for a, b in zip(xs, ys)]  # fma: one rounding of the exact a b + a
        refs["DV"] = x / y
    refs = {k: (np.asarray(v) if k == "C" else np.asarray(v, np.float64).astype(np.float32)) for k, v in refs.items()}
    outs = {k: poison(v, np.bool_ if k == "C" else np.float32) for k, v in refs.items()}
    run("fmath", "fmath", x, y, *outs.values())
    for k, ref in refs.items():
        check(f"fmath {k} N={len(x)}", outs[k], ref)


@pytest.mark.parametrize("N", [6, 50, 130])
def test_fmath16(rng, N):
    xf = (rng.standard_normal(N) * 4).astype(np.float32)
    xf[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 88.0]
    X = bf16_bits(xf)
    xb = unbf(X).astype(np.float64)
    Y = (rng.standard_normal(N) * 3).astype(np.float16)
    Y[:4] = [np.nan, -0.0, 65504, -4]
    yy = Y.astype(np.float64)
    refs = [vec(lambda v: _fmin(v, -0.0), xb), vec(lambda v: bf16_of(_safe(math.exp)(v)), xb),
            vec(lambda v: f16_of(_safe(math.tanh)(v)), yy),
            vec(lambda v: v if v == 0 else f16_of(_nan_or(math.sqrt, lambda u: u < 0)(v)), yy),
            vec(lambda v: bf16_of(float(np.float32(v) / np.float32(3))), xb),
            vec(lambda v: f16_of(float(np.float32(f16_of(v * v)) + np.float32(v))), yy)]
    outs = [poison(refs[0], "bf16"), poison(refs[1], "bf16"), poison(refs[2], np.float16), poison(refs[3], np.float16),
            poison(refs[4], "bf16"), poison(refs[5], np.float16)]
    run("fmath", "fmath16", X, Y, *outs)
    got = [unbf(outs[0]), unbf(outs[1]), outs[2], outs[3], unbf(outs[4]), outs[5]]
    for name, g, ref in zip(["bf16 min(x, -0.0)", "bf16 exp", "f16 tanh", "f16 sqrt", "bf16 x / 3", "f16 y * y + y"], got, refs):
        check(f"{name} N={N}", g, ref)


# =============================================================================================== loops.tile

@pytest.mark.parametrize("R,C,lo,hi,st", [(1, 1, 0, 0, 1), (2, 40, -3, 7, 2), (3, 16, 5, 2, 3), (1, 5, 0, 10, 100),
                                          (2, 33, -5, 5, 1), (4, 0, -2, 3, 4)])
def test_loops(rng, R, C, lo, hi, st):
    X = rng.standard_normal((R, C)).astype(np.float32)
    n = -(-C // 16)
    for i in range(lo, hi, st):
        for j in range(i, hi):
            n += 1 if j % 2 == 0 else 100
    refY = []
    for r in range(R):
        acc = np.zeros(16, np.float32)
        for c0 in range(0, C, 16):
            blk = np.zeros(16, np.float32)
            blk[: min(16, C - c0)] = X[r, c0: c0 + 16]
            acc = acc + blk
        refY.append(acc.astype(np.float64).sum() + n)
    z = max(0, lo - hi) + 1000 * len(range(2147483640, 2147483647, 5)) + 1000000 * 3
    Y, K = poison(np.array(refY), np.float32), np.full(8, 0x55, np.int32)
    K[:2] = poison(np.array([z, n]), np.int32)
    run("loops", "loops", X, Y, K, lo, hi, st)
    check(f"loops Y {R}x{C} range({lo}, {hi}, {st})", Y, np.array(refY), 1e-5, 1e-5)  # the reduce_sum's order
    check(f"loops K {R}x{C} range({lo}, {hi}, {st})", K[:2], np.array([z, n]))


def test_loop_const_bounds():
    K = np.full(4, -7, np.int32)
    run("loops", "loop_const_bounds", K)
    check("range(2147483640, 2147483647, 5): trips, last i", K[:2], np.array([2, 2147483645]))


@pytest.mark.parametrize("lo,hi,st", [(2147483640, 2147483647, 5), (0, 2147483647, 1 << 30), (-2 ** 31, 2 ** 31 - 1, 2 ** 31 - 1),
                                      (-2 ** 31, -2 ** 31 + 2, 1), (10, -10, 1), (0, 0, 7), (-7, 5, 3), (0, 1000, 1)])
def test_loop_trips(lo, hi, st):
    r = range(lo, hi, st)
    ref = np.array([len(r), r[-1] if len(r) else -1, wrap([sum(r)], 32)[0], 0x55])
    K = np.full(4, 0x55, np.int32)
    K[:3] = poison(ref[:3], np.int32)
    run("loops", "loop_trips", K, lo, hi, st)
    check(f"loop_trips range({lo}, {hi}, {st})", K, ref)


@pytest.mark.parametrize("st", [0, -1])
def test_loop_step_not_positive(st):
    with pytest.raises(tilec.TilecError, match="step must be positive"):
        run("loops", "loop_trips", np.zeros(4, np.int32), 0, 10, st)


# ============================================================================================ movement.tile

def test_move_types(rng):
    B = rng.random((4, 8)) < 0.5
    U = rng.integers(0, 256, (4, 8)).astype(np.uint8)
    L = rng.integers(-2 ** 63, 2 ** 63 - 1, (4, 8), dtype=np.int64)
    E = rng.integers(0, 256, (4, 8)).astype(np.uint8)
    E[(E & 0x7F) == 0x7F] = 1  # no NaN codes: a NaN copy need not keep its bits
    H = bf16_bits(rng.standard_normal((4, 8)).astype(np.float32))
    H[0, 1] = 0xFF80  # -inf
    refs = [B.T, U.T, L.reshape(2, 16), E.T, np.concatenate([H, H], 0), H.view(np.int16), L[:, 4:8],
            (~B & (U > 3)) | (B == (L < 0)), (B ^ (U < 100)) | B]
    dts = [np.bool_, np.uint8, np.int64, np.uint8, np.uint16, np.int16, np.int64, np.bool_, np.bool_]
    outs = [poison(r, d) for r, d in zip(refs, dts)]
    run("movement", "move_types", B, U, L, E, H, *outs)
    for name, got, ref in zip(["trans i1", "permute u8", "reshape i64", "trans f8 bits", "cat bf16 bits",
                               "bitcast bf16->i16", "slice i64", "i1 logic", "i1 xor / or / and"], outs, refs):
        check(name, got, ref)


@pytest.mark.parametrize("N", [1, 20, 33])
def test_where_mix(rng, N):
    Bv = rng.random(N) < 0.5
    X = rng.standard_normal(N).astype(np.float32)
    X[0] = np.nan
    for s, k in [(2.5, 5), (-1.0, 1)]:
        refY = np.where(Bv, X, np.float32(s)) + np.where(np.isnan(X), 100, 0)
        refZ = np.where(Bv, k, 7) + (np.arange(N) % 16 if k > 2 else -1)
        Y, Z = poison(refY, np.float32), poison(refZ, np.int32)
        run("movement", "where_mix", Bv, X, Y, Z, s, k)
        check(f"where_mix Y N={N} k={k}", Y, refY)
        check(f"where_mix Z N={N} k={k}", Z, refZ)


# ============================================================================================= scalars.tile

@pytest.mark.parametrize("i,j", [(0, 0), (2, 3), (-1, 0), (0, 4), (3, -1), (1, 2), (2, 0)])
def test_scalar_ld(rng, i, j):
    R, C = 3, 4
    X = rng.standard_normal((R, C)).astype(np.float32)
    Bv = rng.random(C) < 0.5
    U = rng.integers(0, 256, C).astype(np.uint8)
    E = rng.integers(0, 0x7B, C).astype(np.uint8)
    A = np.arange(4, dtype=np.int32) * 10
    inX, inC = 0 <= i < R and 0 <= j < C, 0 <= j < C
    rY = np.full(8, np.nan)
    rY[0] = X[i, j] if inX else -5.0
    rY[1] = X[i, j] if inX else 0.0
    rY[2] = E5M2[E[j]] if inC else -57344.0  # other = -inf saturates to e5m2's largest finite
    rY[3] = U[j] if inC else 7
    if 0 <= i + 4 < 8:
        rY[i + 4] = 1.5
    rI = np.full(8, -9)
    rI[0] = int(Bv[j]) if inC else 1
    rA = A.astype(np.int64)
    rI[1] = rA[i] if 0 <= i < 4 else 0  # fetch_add outside the tensor: 0
    if 0 <= i < 4:
        rA[i] += 5
    if 0 <= j < 4:
        rA[j] += 1
    if 0 <= j - 1 < 4:
        rA[j - 1] = max(rA[j - 1], 1000)
    rX = X.astype(np.float64)
    if inX:
        rX[i, j] = 2.5
    Y = np.where(np.isnan(rY), np.nan, poison(rY, np.float32)).astype(np.float32)  # unwritten elements: NaN
    I = np.full(8, -9, np.int32)
    I[:2] = poison(rI[:2], np.int32)
    run("scalars", "scalar_ld", X, Bv, U, E, A, Y, I, i, j)
    check(f"scalar_ld Y i={i} j={j}", Y, rY)
    check(f"scalar_ld I i={i} j={j}", I, rI)
    check(f"scalar_ld A i={i} j={j}", A, rA)
    check(f"scalar_ld X i={i} j={j}", X, rX)


@pytest.mark.parametrize("v", [1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -4 + 2 ** -35, 1 + 2 ** -24 + 2 ** -60,
                               3.0e38 * 1.2, 1e-50, -448.5, 2 ** -9 * 1.5 + 2 ** -40, None])
def test_scalar_params(rng, v):
    if v is None:
        v = float(rng.standard_normal() * 2.0 ** rng.integers(-20, 20))
    refs = [bf16_of(v), f16_of(v), e4m3_of(v), f32_of(v)]
    B, H = poison([refs[0]] * 4, "bf16"), poison([refs[1]] * 4, np.float16)
    E, F = poison([refs[2]] * 4, "e4m3"), poison([refs[3]] * 4, np.float32)
    run("scalars", "scalar_params", B, H, E, F, v, v, v, v)  # a Python float (double) rounded once to each type
    check(f"bf16 parameter {v!r}", unbf(B[:1]), np.array(refs[:1]))
    check(f"f16 parameter {v!r}", H[:1], np.array(refs[1:2]))
    check(f"f8e4m3 parameter {v!r}", E4M3[E[:1]], np.array(refs[2:3]))
    check(f"f32 parameter {v!r}", F[:1], np.array(refs[3:]))


def test_scalar_promo(rng):
    a8, u, n = int(rng.integers(-128, 0)), int(rng.integers(128, 256)), int(rng.integers(-100, 100))
    h, x = float(np.float16(rng.standard_normal() * 8)), float(np.float32(rng.standard_normal() * 8))
    bbv = bf16_of(float(rng.standard_normal()))
    big = int(rng.integers(2 ** 33, 2 ** 50))
    refI = wrap([a8 + u, wrap([a8 * u], 16)[0], big + n, big >> 32, u - 1, wrap([a8 - a8 - u], 16)[0], 0, 0], 32)
    refY = np.array([f32_of(h + bbv), f32_of(n + x), f16_of(h * h), bf16_of(bbv * bbv), math.nan, x,
                     math.fmod(-x, 3.0), math.inf if u else math.nan])
    Y, I = poison(refY, np.float32), poison(refI, np.int32)
    run("scalars", "scalar_promo", Y, I, a8, u, h, bbv, n, x, big)
    check(f"scalar_promo I (a8={a8} u={u} n={n} big={big})", I, refI)
    check(f"scalar_promo Y (h={h} bb={bbv} x={x})", Y, refY)


# ================================================================================================ fp8.tile

def test_f8ops(rng):
    a = np.repeat(np.arange(256, dtype=np.uint8), 256)  # every pair of codes
    b = np.tile(np.arange(256, dtype=np.uint8), 256)
    c = rng.permutation(a)
    s_code = int(rng.integers(0, 0x7F))
    av, bv, cv, sv = E4M3[a], E4M3[b], E5M2[c], E4M3[s_code]
    with np.errstate(invalid="ignore"):
        refs = dict(LT=av < bv, EQ=av == bv, NE=av != bv, W=np.where(av < bv, av, bv), X45=vec(e5m2_of, av),
                    X54=vec(e4m3_of, cv), XB=cv, XB8=vec(e4m3_of, cv), GT=av > sv)
    kinds = dict(LT=np.bool_, EQ=np.bool_, NE=np.bool_, W="e4m3", X45="e5m2", X54="e4m3", XB="bf16", XB8="e4m3", GT=np.bool_)
    outs = {k: poison(v, kinds[k]) for k, v in refs.items()}
    run("fp8", "f8ops", a, b, c, *outs.values(), float(sv))
    table = {"e4m3": E4M3, "e5m2": E5M2}
    for k, ref in refs.items():
        got = unbf(outs[k]) if kinds[k] == "bf16" else table[kinds[k]][outs[k]] if kinds[k] in table else outs[k]
        check(f"f8ops {k}", got, ref)


@pytest.mark.parametrize("N,c", [(1, 0), (100, 17), (300, 64), (129, -3)])
def test_f8_where(rng, N, c):
    A = rng.integers(0, 256, N).astype(np.uint8)
    B = rng.integers(0, 256, N).astype(np.uint8)
    ref = np.where(np.arange(N) % 64 < c, A, B)  # the bytes: where moves them (NaN codes included)
    W = (ref ^ 0x55).astype(np.uint8)
    run("fp8", "f8_where", A, B, W, c)
    check(f"f8_where N={N} c={c}", W, ref)
