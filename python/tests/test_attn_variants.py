"""Attention-kernel variants (tests/attn_variants/*.tile; tests/attn_variants/README.md): sliding windows,
offset causal masks, masks from tensors, score modifications (soft-capping, ALiBi, sink logits), GQA / PackGQA /
tied K = V / MLA, varlen and paged KV, other layouts and element types, the LSE, fp8, dropout, and the kernels of
the attention bug hunt's repros.  Each kernel -- the plain attn_X and its cutlass_attn_X twin with the same body
-- on the interpreter at ragged small sizes (S 1, 127, 129 around the BM = 128 / BN = 64 or 128 tiles, SQ != SK
where the kernel takes both, 300 where a third query block or a block mask matters) against float64 NumPy.
Fresh random data each run from a seeded Generator: the seed is $TILEC_SEED or drawn, and a failure prints it
(TILEC_SEED=S reproduces).  Outputs are filled with NaN first (bf16 0x7fc0, f16 / f32 NaN) so that an element a
kernel fails to write fails the check.  tests/gpu/attn_variants.sh runs the cutlass_ kernels on a GPU against
the interpreter at the sizes where sm_90a takes the launch-time forms.

Inputs: q, k, v uniform in [-1, 1) rounded to bf16 (the reference takes the rounded values), scale 0.3 (scores
of standard deviation ~0.6 .. 1.1 at D 64 .. 256: the softmax is far from uniform, a wrong mask moves the output).

Tolerances, |got - ref| <= atol + rtol |ref| (NaN only where ref is NaN), by the output's type:
  bf16 outputs: atol 1e-2, rtol 1.6e-2 (the bf16 rounding of P for the value dot and of O, f32 order);
  f32 O (f32out): atol 4e-3, rtol 1e-2 (P is rounded to bf16 for the value dot, the reference does not round);
  f16 O: atol 1e-3, rtol 4e-3 (P rounded to f16);
  f32 LSE: atol 1e-4, rtol 1e-5 (f32 sums of exp2 terms and one log2);
  fp8 attention's bf16 O: atol 3e-2, rtol 3e-2 (P is quantized to e4m3 relative to the running max, key block by
    key block, in f32 in the kernel and in float64 in the reference: a value near an e4m3 rounding boundary may
    land one e4m3 ulp, 2^-3 relative, apart);
  dropout: bf16's, with the keep mask from an independent Philox4x32-10 (the one test_lang_corners.py checks
    against the Random123 known-answer vectors) and rand's f32 uniform (language.md 8.5).
"""
import os
import zlib

import numpy as np
import pytest

import tilec
from refs import check_close  # python/tests/refs.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

KERNELS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "attn_variants")
SEED = int(os.environ.get("TILEC_SEED") or np.random.SeedSequence().entropy % 2**31)
SCALE = 0.3
BF16_TOL = (1e-2, 1.6e-2)
LSE_TOL = (1e-4, 1e-5)


@pytest.fixture
def rng(request):
    """A Generator per test, seeded by SEED and the test's id (each test reproducible alone)."""
    return np.random.default_rng([SEED, zlib.crc32(request.node.name.encode())])


_programs = {}


def prog(name, **defines):
    """tests/attn_variants/NAME.tile compiled once per set of -D defines (sm_90a: the cutlass_ kernels take
    their wgmma forms)"""
    key = (name, tuple(sorted(defines.items())))
    if key not in _programs:
        _programs[key] = tilec.compile(os.path.join(KERNELS, name + ".tile"), defines=defines or None,
                                       arch="sm_90a")
    return _programs[key]


def run(file, kernel, *args, **defines):
    with np.errstate(all="ignore"):
        tilec.interpret(prog(file, **defines)[kernel], *args)


def bf(x):  # f32 values -> bf16 bits (uint16)
    return tilec.f32_to_bf16(np.ascontiguousarray(x, dtype=np.float32))


def unbf(b):  # bf16 bits -> f32
    return tilec.bf16_to_f32(b)


def rbf(x):  # values rounded to bf16 (as float64)
    return unbf(bf(x)).astype(np.float64)


def poisoned(shape, dtype):
    """an output buffer filled with NaN (bf16: 0x7fc0)"""
    if dtype == "bf16":
        return np.full(shape, 0x7FC0, np.uint16)
    return np.full(shape, np.nan, dtype)


def check(what, got, ref, atol, rtol):
    check_close(what, got, ref, atol, rtol, SEED)


def check_bf16(what, O, ref):
    check(what, unbf(O), ref, *BF16_TOL)


def uni(rng, *shape):
    """uniform [-1, 1) rounded to bf16, as float64"""
    return rbf(rng.uniform(-1, 1, shape))


def qkv(rng, qshape, kshape):
    return uni(rng, *qshape), uni(rng, *kshape), uni(rng, *kshape)


def attention(q, k, v, scale, mask=None, bias=None, cap=None, sink=None):
    """float64 softmax attention.  q [..., SQ, D], k / v [..., SK, D]; mask bool [..., SQ, SK] (True: visible);
    bias added to the (capped) scores; sink: a logit in the denominator only.  Returns (out, natural-log LSE);
    a row that sees no key (and has no sink) gives 0."""
    s = np.einsum("...qd,...kd->...qk", q, k) * scale
    if cap is not None:
        s = cap * np.tanh(s / cap)
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = s.max(-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, sink)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m_safe)
    l = p.sum(-1, keepdims=True)
    if sink is not None:
        l = l + np.exp(sink - m_safe)
    out = np.einsum("...qk,...kd->...qd", p, v) / np.where(l > 0, l, 1.0)
    out = np.where(l > 0, out, 0.0)
    with np.errstate(divide="ignore"):
        lse = (np.log(l) + m_safe)[..., 0]
    return out, lse


def causal(SQ, SK, off=0):
    """bottom-right aligned for off = SK - SQ: query i sees key j iff j <= i + off"""
    return np.arange(SK)[None, :] <= np.arange(SQ)[:, None] + off


def both(base):
    """the plain kernel and its cutlass_ twin"""
    return pytest.mark.parametrize("kernel", [f"attn_{base}", f"cutlass_attn_{base}"])


def sizes(names, *cases):
    return pytest.mark.parametrize(names, [pytest.param(*c, id="-".join(map(str, c))) for c in cases])


# ---------------------------------------------------------------------------------------------- window.tile

@both("swa")
@sizes("D,S,win", (64, 1, 1), (64, 127, 100), (64, 129, 1), (64, 300, 100), (128, 129, 64), (128, 300, 1000))
def test_swa(rng, kernel, D, S, win):
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    i = np.arange(S)
    ref, _ = attention(q, k, v, SCALE, (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < win))
    O = poisoned((Z, H, S, D), "bf16")
    run("window", kernel, bf(q), bf(k), bf(v), O, SCALE, win, D=D)
    check_bf16(f"{kernel} D{D} S{S} window {win}", O, ref)


@both("sink_tokens")
@sizes("S,nsink,win", (1, 4, 64), (127, 4, 64), (129, 1, 30), (300, 4, 64), (300, 0, 1000), (300, 70, 1))
def test_sink_tokens(rng, kernel, S, nsink, win):
    Z, H, D = 1, 2, 64
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    i = np.arange(S)
    mask = (i[None, :] <= i[:, None]) & ((i[None, :] < nsink) | (i[:, None] - i[None, :] < win))
    ref, _ = attention(q, k, v, SCALE, mask)
    O = poisoned((Z, H, S, D), "bf16")
    run("window", kernel, bf(q), bf(k), bf(v), O, SCALE, nsink, win)
    check_bf16(f"{kernel} S{S} nsink {nsink} window {win}", O, ref)


@pytest.mark.parametrize("S", [1, 64, 129, 300])
def test_local_repro_10(rng, S):
    """cutlass_attn_local: the window is the tile constant WIN = 64 (the launch-time form once ran it at 128)"""
    Z, H, D = 1, 2, 128
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    i = np.arange(S)
    ref, _ = attention(q, k, v, SCALE, (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < 64))
    O = poisoned((Z, H, S, D), "bf16")
    run("window", "cutlass_attn_local", bf(q), bf(k), bf(v), O, SCALE)
    check_bf16(f"cutlass_attn_local S{S}", O, ref)


# ---------------------------------------------------------------------------------------------- offset.tile

@both("cross")
@sizes("D,SQ,SK", (64, 1, 300), (64, 127, 1), (64, 129, 300), (128, 300, 129), (64, 16, 1000))
def test_cross(rng, kernel, D, SQ, SK):
    Z, H = 2, 1
    q, k, v = qkv(rng, (Z, H, SQ, D), (Z, H, SK, D))
    ref, _ = attention(q, k, v, SCALE)
    O = poisoned((Z, H, SQ, D), "bf16")
    run("offset", kernel, bf(q), bf(k), bf(v), O, SCALE, D=D)
    check_bf16(f"{kernel} D{D} SQ{SQ} SK{SK}", O, ref)


@both("causal_off")
@sizes("D,SQ,SK", (128, 1, 1), (128, 1, 300), (128, 127, 300), (128, 129, 129), (128, 300, 129), (64, 129, 1000))
def test_causal_off(rng, kernel, D, SQ, SK):
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, SQ, D), (Z, H, SK, D))
    ref, _ = attention(q, k, v, SCALE, causal(SQ, SK, SK - SQ))  # SQ > SK: the first rows see nothing: 0
    O = poisoned((Z, H, SQ, D), "bf16")
    run("offset", kernel, bf(q), bf(k), bf(v), O, SCALE, D=D)
    check_bf16(f"{kernel} D{D} SQ{SQ} SK{SK}", O, ref)


@both("prescale")
@sizes("D,SQ,SK", (64, 1, 300), (64, 127, 129), (128, 300, 129))
def test_prescale(rng, kernel, D, SQ, SK):
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, SQ, D), (Z, H, SK, D))
    qs = rbf(q * float(np.float32(SCALE) * np.float32(1.4426950408889634)))  # bf16(q scale log2 e), as the kernel
    s = np.einsum("...qd,...kd->...qk", qs, k)
    p = np.exp2(s - s.max(-1, keepdims=True))
    ref = (p @ v) / p.sum(-1, keepdims=True)
    O = poisoned((Z, H, SQ, D), "bf16")
    run("offset", kernel, bf(q), bf(k), bf(v), O, SCALE, D=D)
    check_bf16(f"{kernel} D{D} SQ{SQ} SK{SK}", O, ref)


# -------------------------------------------------------------------------------------------- datamask.tile

@both("prefix_lm")
@pytest.mark.parametrize("S", [1, 127, 129, 300])
def test_prefix_lm(rng, kernel, S):
    Z, H, D = 3, 1, 64
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    P = np.array([0, S // 2 + 1, S + 5], np.int32)  # no prefix, inside S, past S
    i = np.arange(S)
    mask = (i[None, None, :] < P[:, None, None]) | (i[None, None, :] <= i[None, :, None])
    ref, _ = attention(q, k, v, SCALE, mask[:, None])
    O = poisoned((Z, H, S, D), "bf16")
    run("datamask", kernel, bf(q), bf(k), bf(v), O, P, SCALE)
    check_bf16(f"{kernel} S{S} prefixes {P.tolist()}", O, ref)


@both("docmask")
@sizes("D,CAUSAL,S", (64, 1, 1), (64, 1, 127), (64, 0, 129), (128, 1, 300), (64, 0, 300))
def test_docmask(rng, kernel, D, CAUSAL, S):
    Z, H = 2, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    doc = np.sort(rng.integers(0, 5, (Z, S)), axis=1).astype(np.int32)
    mask = doc[:, :, None] == doc[:, None, :]
    if CAUSAL:
        mask = mask & causal(S, S)[None]
    ref, _ = attention(q, k, v, SCALE, mask[:, None])
    O = poisoned((Z, H, S, D), "bf16")
    run("datamask", kernel, bf(q), bf(k), bf(v), O, doc, SCALE, D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} S{S}", O, ref)


@both("keypad")
@sizes("D,S", (64, 1), (64, 127), (64, 129), (128, 300))
def test_keypad(rng, kernel, D, S):
    Z, H = 2, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    keep = rng.uniform(0, 1, (Z, S)) < 0.7
    if S > 1:
        keep[1, :] = False  # a batch with no key kept: its rows store 0
    ref, _ = attention(q, k, v, SCALE, np.broadcast_to(keep[:, None, None, :], (Z, H, S, S)))
    O = poisoned((Z, H, S, D), "bf16")
    run("datamask", kernel, bf(q), bf(k), bf(v), O, keep, SCALE, D=D)
    check_bf16(f"{kernel} D{D} S{S}", O, ref)


# --------------------------------------------------------------------------------------------- maskmat.tile

@both("addmask")
@sizes("D,S", (64, 1), (64, 127), (64, 129), (128, 129))
def test_addmask(rng, kernel, D, S):
    Z, H = 2, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    m = rbf(rng.uniform(-2, 2, (Z, S, S)))
    m = np.where(rng.uniform(0, 1, (Z, S, S)) < 0.3, -np.inf, m)
    m[0, 0, :] = -np.inf  # a fully masked row: 0
    ref, _ = attention(q, k, v, SCALE, bias=m[:, None])
    O = poisoned((Z, H, S, D), "bf16")
    run("maskmat", kernel, bf(q), bf(k), bf(v), O, bf(m), SCALE, D=D)
    check_bf16(f"{kernel} D{D} S{S}", O, ref)


@both("blocksparse")
@pytest.mark.parametrize("S", [1, 129, 300])
def test_blocksparse_repro_01(rng, kernel, S):
    """block i x j of BM = 128 queries x BN = 64 keys visible iff BlockMask[z, h, i, j] (cutlass_: repro_01)"""
    Z, H, D, BM, BN = 1, 2, 128, 128, 64
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    NQB, NKB = -(-S // BM), -(-S // BN)
    bm = (rng.uniform(0, 1, (Z, H, NQB, NKB)) < 0.5).astype(np.int32)
    bm[0, 0, 0, :] = 0  # a query block that sees nothing: 0
    i = np.arange(S)
    mask = bm[:, :, i // BM][:, :, :, i // BN].astype(bool)
    ref, _ = attention(q, k, v, SCALE, mask)
    O = poisoned((Z, H, S, D), "bf16")
    run("maskmat", kernel, bf(q), bf(k), bf(v), O, bm, SCALE)
    check_bf16(f"{kernel} S{S}", O, ref)


# -------------------------------------------------------------------------------------------- scoremod.tile

@both("softcap")
@sizes("D,CAUSAL,S", (128, 1, 1), (128, 1, 129), (128, 0, 127), (64, 1, 300), (256, 0, 129))
def test_softcap(rng, kernel, D, CAUSAL, S):
    Z, H, cap = 1, 1, 2.0
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    q = rbf(q * 4)  # scores past the cap
    ref, _ = attention(q, k, v, D ** -0.5, causal(S, S) if CAUSAL else None, cap=cap)
    O = poisoned((Z, H, S, D), "bf16")
    run("scoremod", kernel, bf(q), bf(k), bf(v), O, D ** -0.5, cap, D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} S{S}", O, ref)


def alibi_slopes(H):
    return (2.0 ** (-8.0 * np.arange(1, H + 1) / H)).astype(np.float32)


@both("alibi")
@sizes("D,CAUSAL,S", (64, 1, 1), (64, 1, 129), (64, 0, 127), (128, 1, 300), (128, 0, 129))
def test_alibi(rng, kernel, D, CAUSAL, S):
    Z, H = 1, 4
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    slopes = alibi_slopes(H)
    i = np.arange(S)
    bias = slopes.astype(np.float64)[None, :, None, None] * (i[None, :] - i[:, None])[None, None]
    ref, _ = attention(q, k, v, SCALE, causal(S, S) if CAUSAL else None, bias=bias)
    O = poisoned((Z, H, S, D), "bf16")
    run("scoremod", kernel, bf(q), bf(k), bf(v), O, slopes, SCALE, D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} S{S}", O, ref)


@both("sink_logit")
@sizes("D,CAUSAL,S", (64, 1, 1), (64, 1, 129), (64, 0, 127), (128, 1, 300), (128, 0, 129))
def test_sink_logit(rng, kernel, D, CAUSAL, S):
    Z, H = 1, 3
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    sinks = np.array([-3.0, 0.5, 6.0], np.float32)  # negligible, comparable, dominant
    ref, _ = attention(q, k, v, SCALE, causal(S, S) if CAUSAL else None,
                       sink=sinks.astype(np.float64)[None, :, None, None])
    O = poisoned((Z, H, S, D), "bf16")
    run("scoremod", kernel, bf(q), bf(k), bf(v), O, sinks, SCALE, D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} S{S}", O, ref)


# ----------------------------------------------------------------------------------------------- combo.tile

@both("combo")
@sizes("D,SQ,SK,win", (128, 1, 1, 1), (128, 1, 300, 100), (128, 127, 129, 4096), (128, 129, 129, 1),
       (64, 129, 300, 100), (256, 127, 300, 100))
def test_combo(rng, kernel, D, SQ, SK, win):
    Z, H, HKV, cap = 1, 4, 2, 20.0
    q, k, v = qkv(rng, (Z, H, SQ, D), (Z, HKV, SK, D))
    q = rbf(q * 3)
    slopes = alibi_slopes(H)
    sinks = np.array([-2.0, 0.0, 1.0, 5.0], np.float32)
    kk, vv = np.repeat(k, H // HKV, 1), np.repeat(v, H // HKV, 1)
    i = np.arange(SQ)[:, None] + (SK - SQ)
    j = np.arange(SK)[None, :]
    bias = slopes.astype(np.float64)[None, :, None, None] * (j - i)[None, None]
    ref, lse = attention(q, kk, vv, D ** -0.5, (j <= i) & (i - j < win), bias=bias, cap=cap,
                         sink=sinks.astype(np.float64)[None, :, None, None])
    O, L = poisoned((Z, H, SQ, D), "bf16"), poisoned((Z, H, SQ), np.float32)
    run("combo", kernel, bf(q), bf(k), bf(v), O, L, slopes, sinks, D ** -0.5, cap, win, D=D)
    check_bf16(f"{kernel} O D{D} SQ{SQ} SK{SK} window {win}", O, ref)
    check(f"{kernel} LSE D{D} SQ{SQ} SK{SK} window {win}", L, lse, *LSE_TOL)


# ----------------------------------------------------------------------------------------------- heads.tile

@both("gqa")
@sizes("D,CAUSAL,H,HKV,S", (128, 0, 4, 1, 1), (128, 1, 4, 2, 129), (128, 0, 6, 3, 127), (64, 1, 4, 1, 300),
       (256, 0, 2, 2, 129))
def test_gqa(rng, kernel, D, CAUSAL, H, HKV, S):
    Z = 1
    q, k, v = qkv(rng, (Z, H, S, D), (Z, HKV, S, D))
    kk, vv = np.repeat(k, H // HKV, axis=1), np.repeat(v, H // HKV, axis=1)
    ref, _ = attention(q, kk, vv, SCALE, causal(S, S) if CAUSAL else None)
    O = poisoned((Z, H, S, D), "bf16")
    run("heads", kernel, bf(q), bf(k), bf(v), O, SCALE, D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} H{H}/{HKV} S{S}", O, ref)


@both("packgqa")
@sizes("CAUSAL,S", (1, 1), (1, 31), (0, 33), (1, 129), (0, 127))
def test_packgqa(rng, kernel, CAUSAL, S):
    ZK, GP, D = 2, 4, 128
    q = uni(rng, ZK, GP, S, D)
    k, v = uni(rng, ZK, S, D), uni(rng, ZK, S, D)
    ref, _ = attention(q, k[:, None], v[:, None], SCALE, causal(S, S) if CAUSAL else None)
    O = poisoned((ZK, GP, S, D), "bf16")
    run("heads", kernel, bf(q), bf(k), bf(v), O, SCALE, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} CAUSAL{CAUSAL} S{S}", O, ref)


@both("tiedkv")
@sizes("D,CAUSAL,S", (128, 1, 1), (128, 1, 129), (128, 0, 127), (64, 1, 300), (256, 0, 129))
def test_tiedkv(rng, kernel, D, CAUSAL, S):
    Z, H = 1, 2
    q, c = uni(rng, Z, H, S, D), uni(rng, Z, S, D)
    ref, _ = attention(q, c[:, None], c[:, None], SCALE, causal(S, S) if CAUSAL else None)
    O = poisoned((Z, H, S, D), "bf16")
    run("heads", kernel, bf(q), bf(c), O, SCALE, D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} S{S}", O, ref)


# ------------------------------------------------------------------------------------------------- mla.tile

@both("mla")
@sizes("DL,CAUSAL,S", (128, 1, 1), (128, 1, 129), (128, 0, 127), (256, 1, 300), (256, 0, 129))
def test_mla(rng, kernel, DL, CAUSAL, S):
    Z, H, DR = 1, 2, 64
    qn, qp = uni(rng, Z, H, S, DL), uni(rng, Z, H, S, DR)
    c, kp = uni(rng, Z, S, DL), uni(rng, Z, S, DR)
    q = np.concatenate([qn, qp], -1)
    k = np.concatenate([c, kp], -1)[:, None]
    ref, _ = attention(q, k, c[:, None], SCALE, causal(S, S) if CAUSAL else None)
    O = poisoned((Z, H, S, DL), "bf16")
    run("mla", kernel, bf(qn), bf(qp), bf(c), bf(kp), O, SCALE, DL=DL, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} DL{DL} CAUSAL{CAUSAL} S{S}", O, ref)


# ---------------------------------------------------------------------------------------------- ragged.tile

@both("varlen")
@sizes("D,CAUSAL,lens", (64, 1, (1,)), (64, 1, (127, 129, 1)), (64, 0, (300, 0, 5, 129)), (128, 1, (128, 200)))
def test_varlen(rng, kernel, D, CAUSAL, lens):
    H = 2
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    T = int(cu[-1])
    q, k, v = qkv(rng, (T, H, D), (T, H, D))
    ref = np.zeros((T, H, D))
    for b, L in enumerate(lens):
        if L:
            sl = slice(cu[b], cu[b + 1])
            r, _ = attention(*(x[sl].transpose(1, 0, 2) for x in (q, k, v)), SCALE, causal(L, L) if CAUSAL else None)
            ref[sl] = r.transpose(1, 0, 2)
    O = poisoned((T, H, D), "bf16")
    run("ragged", kernel, bf(q), bf(k), bf(v), O, cu, SCALE, max(lens), D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} lens {list(lens)}", O, ref)


@both("paged")
@sizes("S,lens", (1, (1, 700)), (127, (127, 300)), (129, (200, 129)))
def test_paged(rng, kernel, S, lens):
    Z, H, D, PAGE = 2, 2, 128, 128
    MAXP = -(-max(lens) // PAGE)
    NP = Z * MAXP + 3  # unused pages too
    table = rng.permutation(NP)[: Z * MAXP].reshape(Z, MAXP).astype(np.int32)
    kc, vc = uni(rng, NP, H, PAGE, D), uni(rng, NP, H, PAGE, D)
    q = uni(rng, Z, H, S, D)
    ref = np.zeros((Z, H, S, D))
    for z in range(Z):
        L = lens[z]
        kk = np.concatenate([kc[table[z, j]] for j in range(MAXP)], axis=1)[:, :L]
        vv = np.concatenate([vc[table[z, j]] for j in range(MAXP)], axis=1)[:, :L]
        ref[z], _ = attention(q[z], kk, vv, SCALE, causal(S, L, L - S))
    O = poisoned((Z, H, S, D), "bf16")
    run("ragged", kernel, bf(q), bf(kc), bf(vc), table, np.array(lens, np.int32), O, SCALE)
    check_bf16(f"{kernel} S{S} lens {list(lens)}", O, ref)


# ---------------------------------------------------------------------------------------------- layout.tile

def bhsd(x):
    return x.transpose(0, 2, 1, 3)


@sizes("D,CAUSAL,S", (128, 0, 1), (128, 0, 129), (128, 1, 127), (64, 1, 300), (64, 0, 129))
def test_bshd_repro_02(rng, D, CAUSAL, S):
    """[B, S, H, D]: the key length is dimension 1 (repro_02: attn_form once took H for it)"""
    B, H = 2, 3
    q, k, v = qkv(rng, (B, S, H, D), (B, S, H, D))
    ref, _ = attention(bhsd(q), bhsd(k), bhsd(v), SCALE, causal(S, S) if CAUSAL else None)
    O = poisoned((B, S, H, D), "bf16")
    run("layout", "cutlass_attn_bshd", bf(q), bf(k), bf(v), O, SCALE, D=D, CAUSAL=CAUSAL)
    check_bf16(f"cutlass_attn_bshd D{D} CAUSAL{CAUSAL} S{S}", O, bhsd(ref))


@pytest.mark.parametrize("S", [1, 129])
def test_bshd_strided_views(rng, S):
    """Q / K / V as views into one packed [B, S, 3, H, D] qkv tensor, O every other slot of a bigger buffer"""
    B, H, D = 2, 3, 128
    qkv_ = uni(rng, B, S, 3, H, D)
    bits = bf(qkv_)
    ref, _ = attention(*(bhsd(qkv_[:, :, t]) for t in range(3)), SCALE)
    Ob = poisoned((B, S, 2, H, D), "bf16")
    run("layout", "cutlass_attn_bshd", bits[:, :, 0], bits[:, :, 1], bits[:, :, 2], Ob[:, :, 1], SCALE)
    check_bf16(f"cutlass_attn_bshd strided S{S}", np.ascontiguousarray(Ob[:, :, 1]), bhsd(ref))
    assert np.all(Ob[:, :, 0] == 0x7FC0), "cutlass_attn_bshd wrote outside O's view"


@both("kt")
@sizes("D,CAUSAL,S", (64, 0, 1), (64, 0, 129), (64, 1, 127), (128, 1, 300), (128, 0, 129))
def test_kt(rng, kernel, D, CAUSAL, S):
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    ref, _ = attention(q, k, v, SCALE, causal(S, S) if CAUSAL else None)
    O = poisoned((Z, H, S, D), "bf16")
    run("layout", kernel, bf(q), bf(np.ascontiguousarray(k.transpose(0, 1, 3, 2))), bf(v), O, SCALE,
        D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} S{S}", O, ref)


@both("dpad")
@sizes("D,CAUSAL,S", (72, 1, 1), (80, 1, 129), (96, 0, 127), (72, 0, 300), (128, 1, 129))
def test_dpad(rng, kernel, D, CAUSAL, S):
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    ref, _ = attention(q, k, v, D ** -0.5, causal(S, S) if CAUSAL else None)
    O = poisoned((Z, H, S, D), "bf16")
    run("layout", kernel, bf(q), bf(k), bf(v), O, D ** -0.5, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} D{D} CAUSAL{CAUSAL} S{S}", O, ref)


# --------------------------------------------------------------------------------------------- outputs.tile

@both("lse")
@sizes("D,CAUSAL,S", (128, 1, 1), (128, 1, 129), (128, 0, 127), (64, 1, 300), (256, 0, 129))
def test_lse(rng, kernel, D, CAUSAL, S):
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    ref, lse = attention(q, k, v, SCALE, causal(S, S) if CAUSAL else None)
    O, L = poisoned((Z, H, S, D), "bf16"), poisoned((Z, H, S), np.float32)
    run("outputs", kernel, bf(q), bf(k), bf(v), O, L, SCALE, D=D, CAUSAL=CAUSAL)
    check_bf16(f"{kernel} O D{D} CAUSAL{CAUSAL} S{S}", O, ref)
    check(f"{kernel} LSE D{D} CAUSAL{CAUSAL} S{S}", L, lse, *LSE_TOL)


@both("f32out")
@sizes("D,CAUSAL,S", (64, 0, 1), (64, 0, 129), (64, 1, 127), (128, 1, 300), (256, 0, 129))
def test_f32out(rng, kernel, D, CAUSAL, S):
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    ref, _ = attention(q, k, v, SCALE, causal(S, S) if CAUSAL else None)
    O = poisoned((Z, H, S, D), np.float32)
    run("outputs", kernel, bf(q), bf(k), bf(v), O, SCALE, D=D, CAUSAL=CAUSAL)
    check(f"{kernel} D{D} CAUSAL{CAUSAL} S{S}", O, ref, 4e-3, 1e-2)


@both("f16")
@sizes("D,CAUSAL,S", (128, 1, 1), (128, 1, 129), (128, 0, 127), (64, 1, 300))
def test_f16(rng, kernel, D, CAUSAL, S):
    Z, H = 1, 2
    q, k, v = (rng.uniform(-1, 1, (Z, H, S, D)).astype(np.float16) for _ in range(3))
    ref, lse = attention(*(x.astype(np.float64) for x in (q, k, v)), SCALE, causal(S, S) if CAUSAL else None)
    O, L = poisoned((Z, H, S, D), np.float16), poisoned((Z, H, S), np.float32)
    run("outputs", kernel, q, k, v, O, L, SCALE, D=D, CAUSAL=CAUSAL)
    check(f"{kernel} O D{D} CAUSAL{CAUSAL} S{S}", O, ref, 1e-3, 4e-3)
    check(f"{kernel} LSE D{D} CAUSAL{CAUSAL} S{S}", L, lse, *LSE_TOL)


# ------------------------------------------------------------------------------------------------- fp8.tile

def _e4m3_table():
    t = np.zeros(256)
    for c in range(256):
        s = -1.0 if c & 0x80 else 1.0
        e, m = (c >> 3) & 15, c & 7
        t[c] = np.nan if (e == 15 and m == 7) else s * (m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return t


E4M3 = _e4m3_table()


def e4m3_round(x):
    """x rounded to the nearest e4m3fn value (ties to the even code), saturated at 448"""
    vals = E4M3[:0x7F]  # the non-negative finite values, ascending
    a = np.minimum(np.abs(x), 448.0)
    idx = np.clip(np.searchsorted(vals, a), 1, 0x7E)
    lo, hi = vals[idx - 1], vals[idx]
    pick_hi = (hi - a < a - lo) | ((hi - a == a - lo) & (idx % 2 == 0))
    return np.sign(x) * np.where(pick_hi, hi, lo)


@both("fp8")
@sizes("CAUSAL,S", (0, 1), (0, 127), (1, 129), (1, 300))
def test_fp8(rng, kernel, CAUSAL, S):
    Z, H, D = 1, 1, 128
    dq, dk, dv = 0.5, 0.25, 2.0
    # codes of |value| in [2^-3, 2]: exponent fields 4 .. 8, either sign
    codes = [(rng.integers(32, 72, (Z, H, S, D)) | (rng.integers(0, 2, (Z, H, S, D)) << 7)).astype(np.uint8)
             for _ in range(3)]
    q, k, v = (E4M3[c] for c in codes)
    s = np.einsum("...qd,...kd->...qk", q * dq, k * dk) * SCALE
    if CAUSAL:
        s = np.where(causal(S, S), s, -np.inf)
    # the kernel quantizes p relative to the running max of the key blocks seen so far (BN = 128 keys a block)
    # and rescales the accumulator when the max grows: the reference does the same, block by block
    m = s.max(-1, keepdims=True)
    l = np.exp(s - m).sum(-1, keepdims=True)
    acc = np.zeros(q.shape)
    for n0 in range(0, S, 128):
        m_b = s[..., : n0 + 128].max(-1, keepdims=True)
        m_b = np.where(np.isfinite(m_b), m_b, m)  # a causal row whose keys start later: no terms yet
        pq = e4m3_round(np.exp(s[..., n0 : n0 + 128] - m_b) * 448.0)
        acc += np.einsum("...qk,...kd->...qd", pq, v[..., n0 : n0 + 128, :]) * np.exp(m_b - m)
    ref = acc * dv / 448.0 / l
    O = poisoned((Z, H, S, D), "bf16")
    run("fp8", kernel, *codes, O, SCALE, dq, dk, dv, CAUSAL=CAUSAL)
    check(f"{kernel} CAUSAL{CAUSAL} S{S}", unbf(O), ref, 3e-2, 3e-2)


# ----------------------------------------------------------------------------------------------- loops.tile

@both("twostage")
@sizes("D,S", (64, 1), (64, 127), (64, 129), (64, 300), (128, 129))
def test_twostage(rng, kernel, D, S):
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    ref, _ = attention(q, k, v, SCALE, causal(S, S))
    O = poisoned((Z, H, S, D), "bf16")
    run("loops", kernel, bf(q), bf(k), bf(v), O, SCALE, D=D)
    check_bf16(f"{kernel} D{D} S{S}", O, ref)


@both("sink3")
@sizes("D,S", (64, 1), (64, 129), (64, 300), (128, 77), (128, 700))
def test_sink3(rng, kernel, D, S):
    """three loops: a sink of 64 keys, a window of 4 blocks of 64 below the query block, the diagonal block"""
    Z, H = 1, 2
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    i, j = np.arange(S)[:, None], np.arange(S)[None, :]
    m0 = i // 128 * 128
    mask = (j < np.minimum(64, m0)) | ((j >= np.maximum(64, m0 - 256)) & (j < m0)) | ((j >= m0) & (j <= i))
    ref, _ = attention(q, k, v, SCALE, mask)
    O = poisoned((Z, H, S, D), "bf16")
    run("loops", kernel, bf(q), bf(k), bf(v), O, SCALE, D=D)
    check_bf16(f"{kernel} D{D} S{S}", O, ref)


@pytest.mark.parametrize("S", [64, 128, 192, 320])
def test_nomask_repro_12(rng, S):
    """require(S % BN == 0) with BN = 64: S 192 and 320 are valid (repro_12: the form's BN = 128 refused them)"""
    Z, H, D = 1, 2, 128
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    ref, _ = attention(q, k, v, SCALE)
    O = poisoned((Z, H, S, D), "bf16")
    run("loops", "cutlass_attn_nomask", bf(q), bf(k), bf(v), O, SCALE)
    check_bf16(f"cutlass_attn_nomask S{S}", O, ref)


def test_nomask_require():
    """S 100 is not a multiple of BN = 64: the launch is refused, naming the kernel's BN"""
    Z, H, S, D = 1, 1, 100, 128
    x = np.zeros((Z, H, S, D), np.uint16)
    with pytest.raises(tilec.TilecError) as e:
        run("loops", "cutlass_attn_nomask", x, x, x, poisoned((Z, H, S, D), "bf16"), SCALE)
    assert "BN = 64" in str(e.value) + "".join(str(d) for d in getattr(e.value, "diagnostics", []) or []), \
        f"the require's message does not name BN = 64: {e.value}"


# --------------------------------------------------------------------------------------------- dropout.tile

from refs import U32, philox as philox4  # noqa: E402  (python/tests/refs.py)


def philox(c0, k0, k1):
    """Philox4x32-10 blocks for counters (c0, 0, 0, 0), key (k0, k1)"""
    return philox4(c0, 0, k0, k1)


def ref_rand(seed, offs):
    """rand(seed, offs) (language.md 8.5): word o % 4 of the block of counter o / 4, top 24 bits, in [0, 1)"""
    s = int(seed) & (2 ** 64 - 1)
    o = np.asarray(offs, np.int64).astype(np.uint64) & U32
    w = philox(o // np.uint64(4), s & 0xFFFFFFFF, s >> 32)
    bits = np.choose((o % np.uint64(4)).astype(np.int64), w).astype(np.uint32)
    return ((bits >> np.uint32(8)).astype(np.float64) * 2.0 ** -24).astype(np.float32)


@both("dropout")
@sizes("S,pdrop", (1, 0.0), (129, 0.0), (1, 0.3), (127, 0.3), (129, 0.5), (300, 0.1))
def test_dropout_repro_11(rng, kernel, S, pdrop):
    """causal attention with dropout on P (cutlass_: repro_11); the keep mask from an independent Philox"""
    Z, H, D = 1, 2, 64
    seed = int(rng.integers(1, 2 ** 40))
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    i = np.arange(S)
    zh = np.arange(Z * H).reshape(Z, H)
    offs = (zh[:, :, None, None] * S + i[:, None]) * S + i[None, :]  # ((program_id(1) S + row) S + col)
    keep = ref_rand(seed, offs) >= np.float32(pdrop)
    mask = causal(S, S)
    s = np.where(mask, np.einsum("...qd,...kd->...qk", q, k) * SCALE, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = np.einsum("...qk,...kd->...qd", np.where(keep, p, 0.0), v) / (1 - pdrop) / p.sum(-1, keepdims=True)
    O = poisoned((Z, H, S, D), "bf16")
    run("dropout", kernel, bf(q), bf(k), bf(v), O, SCALE, pdrop, seed)
    check_bf16(f"{kernel} S{S} pdrop {pdrop} seed {seed}", O, ref)


@both("bwd_dropout")
@sizes("D,S,pdrop", (64, 1, 0.0), (64, 127, 0.3), (64, 129, 0.0), (64, 300, 0.1), (128, 129, 0.5), (128, 65, 0.2))
def test_bwd_dropout(rng, kernel, D, S, pdrop):
    """dK, dV of non-causal attention with dropout on P, the forward's keep mask (same offsets) from an
    independent Philox; LSE (base 2) and Dl = rowsum(dO O) of the float64 forward"""
    Z, H = 1, 2
    seed = int(rng.integers(1, 2 ** 40))
    q, k, v = qkv(rng, (Z, H, S, D), (Z, H, S, D))
    do = uni(rng, Z, H, S, D)
    i = np.arange(S)
    zh = np.arange(Z * H).reshape(Z, H)
    offs = (zh[:, :, None, None] * S + i[:, None]) * S + i[None, :]  # [.., query, key]
    keep = ref_rand(seed, offs) >= np.float32(pdrop)
    s2 = np.einsum("...qd,...kd->...qk", q, k) * SCALE * np.log2(np.e)
    lse = np.log2(np.exp2(s2 - s2.max(-1, keepdims=True)).sum(-1)) + s2.max(-1)
    p = np.exp2(s2 - lse[..., None])
    pd = np.where(keep, p, 0.0) / (1 - pdrop)
    o = np.einsum("...qk,...kd->...qd", pd, v)
    dl = (do * o).sum(-1)
    dv = np.einsum("...qk,...qd->...kd", pd, do)
    dp = np.where(keep, np.einsum("...qd,...kd->...qk", do, v), 0.0) / (1 - pdrop)
    ds = p * (dp - dl[..., None])
    dk = np.einsum("...qk,...qd->...kd", ds, q) * SCALE
    dK, dV = poisoned((Z, H, S, D), "bf16"), poisoned((Z, H, S, D), "bf16")
    run("dropout", kernel, bf(q), bf(k), bf(v), bf(do), lse.astype(np.float32), dl.astype(np.float32), dK, dV,
        SCALE, pdrop, seed, D=D)
    check_bf16(f"{kernel} dV D{D} S{S} pdrop {pdrop} seed {seed}", dV, dv)
    check_bf16(f"{kernel} dK D{D} S{S} pdrop {pdrop} seed {seed}", dK, dk)
