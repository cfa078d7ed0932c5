#!/usr/bin/env python3
"""w4a16_halves_emul.py: the rounding of W4A16's bf16x2 dequantization forms against the interpreter's
semantics, emulated exactly on the CPU (pure Python, no GPU; nineteenth session, branch w4a16e).

The interpreter (and the f32 form) computes w = bf16(f32(f32(q * s) - z)) with q the nibble n (0..15)
plus a constant c, s and z bf16.  The forms:
  halves   (TILEC_DEQUANT_BF16X2=1 on the packed order; the shift / byte forms share its two fmas):
           u = lop3(word >> 4p, 0x000F000F, 0x43004300) has the bf16 128 + n in each half (exact);
           q = fma.rn.bf16x2(u, 1, c - 128) = n + c (exact: |n + c| < 2^8);
           w = fma.rn.bf16x2(q, s, -z) = bf16(q s - z), the exact value rounded once.
  onefma   the one-instruction form the brief asked about (Marlin-class kernels' fp16 trick carried to
           bf16): w = fma.rn.bf16x2(u, s, b) with b = bf16(-(128 - c) s - z) made once per group.  b is
           rounded to bf16's 8 bits, and (128 - c) s needs up to 16: the error of b is up to 2^-9 |128 s|,
           i.e. up to a quarter of a quantization step s, in every weight of the group.
  The extraction is checked too: for random words, lop3(word >> 4p) holds 0x4300 | nibble(4p) in the low
  half and 0x4300 | nibble(4p + 16) in the high half, p = 0..3.

Exactness of the emulation: q s has at most 16 significant bits and z 8, and the cases keep
|exponent(q s) - exponent(z)| <= 40, so every q s - z here is exact in a double; f32 rounding through
struct (round to nearest even), bf16 rounding by frexp and round() (ties to even) on exact doubles.

  python3 bench/w4a16_halves_emul.py [CASES]   (default 300000 a z distribution)
"""
import math
import random
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def bf16(x):
    """x (a double) rounded to bf16, ties to even (normal range)."""
    if x == 0:
        return x
    m, e = math.frexp(x)  # x = m 2^e, 0.5 <= |m| < 1
    return math.ldexp(round(m * 256), e - 8)  # 8 significant bits; round() of an exact double: ties to even


def rand_bf16(lo, hi, rng):
    return bf16(rng.uniform(lo, hi))


def bits_bf16(x):
    return struct.unpack("I", struct.pack("f", x))[0] >> 16


def from_bits_bf16(h):
    return struct.unpack("f", struct.pack("I", h << 16))[0]


def main():
    n_cases = int(sys.argv[1]) if len(sys.argv) > 1 else 300000
    rng = random.Random(20261205)
    # 1. the extraction, bit for bit
    for _ in range(20000):
        w = rng.getrandbits(32)
        for p in range(4):
            u = ((w >> (4 * p)) & 0x000F000F) | 0x43004300
            lo, hi = u & 0xFFFF, u >> 16
            assert lo == 0x4300 | ((w >> (4 * p)) & 15) and hi == 0x4300 | ((w >> (4 * p + 16)) & 15)
            assert from_bits_bf16(lo) == 128 + ((w >> (4 * p)) & 15)
    print("extraction: 80000 pairs of 20000 random words: lop3(word >> 4p) = bf16 128 + nibble in both halves")
    # 2. the rounding
    dists = [
        ("z = zero_point * s (GPTQ / AWQ / Marlin)", lambda s, r: bf16(r.randrange(16) * s)),
        ("z uniform in [-0.5, 0.5] (tests/gpu/test_w4a16*.py)", lambda s, r: rand_bf16(-0.5, 0.5, r)),
        ("|z| ~ 2^-20", lambda s, r: rand_bf16(0.5, 1, r) * 2.0 ** -20 * r.choice((-1, 1))),
        ("|z| ~ 2^-30", lambda s, r: rand_bf16(0.5, 1, r) * 2.0 ** -30 * r.choice((-1, 1))),
    ]
    for c in (0, -8):
        for name, zf in dists:
            d_halves = d_one = 0
            worst_one = 0.0
            for _ in range(n_cases):
                n = rng.randrange(16)
                s = rand_bf16(0.001, 0.1, rng)
                z = zf(s, rng)
                q = n + c
                interp = bf16(f32(f32(q * s) - z))  # the interpreter: f32 product, f32 subtract, bf16
                u = 128.0 + n
                qq = bf16(u * 1.0 + (c - 128))  # first fma: exact
                assert qq == q
                halves = bf16(qq * s - z)  # second fma: exact q s - z rounded once
                b = bf16(-(128 - c) * s - z)
                one = bf16(u * s + b)
                d_halves += halves != interp
                if one != interp:
                    d_one += 1
                    worst_one = max(worst_one, abs(one - interp) / s)
            print("c = %3d, %-52s %d cases: halves != interpreter %6d; onefma != interpreter %6d (%.1f %%), "
                  "worst |onefma - interpreter| = %.3f s" % (c, name, n_cases, d_halves, d_one, 100.0 * d_one / n_cases,
                                                             worst_one))


if __name__ == "__main__":
    main()
