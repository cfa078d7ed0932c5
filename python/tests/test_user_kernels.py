"""Kernels written by users the way LLM training and serving code fuses ops (tests/user_kernels/*.tile and
probe/*.tile; tests/user_kernels/README.md): each file's kernels on the interpreter at ragged sizes against
NumPy (float64 references), one test function per file.  Fresh random data each run from a seeded Generator:
the seed is $TILEC_SEED or drawn, and a failure prints it (TILEC_SEED=S reproduces).  Outputs are filled
with NaN first (bf16 0x7fc0, fp8 0x7f; integer outputs a value the kernel cannot write) so that an element
a kernel fails to write fails the check.  tests/gpu/user_kernels.sh runs the same kernels on a GPU against
the interpreter.

Tolerances, |got - ref| <= atol + rtol |ref| (NaN only where ref is NaN), by the output's type:
  bf16 outputs: atol 1e-2, rtol 1.6e-2 (a bf16 rounding, 2^-8 relative, plus f32 order; tilec run's bf16);
  f16 GEMM outputs: atol 1e-3 sqrt(K), rtol 4e-3 (an f16 rounding of a K-term f32 sum);
  f32 outputs of dots: atol 1e-4 sqrt(K), rtol 1e-4 (f32 summation order over K);
  f32 outputs of f32 reductions / transcendentals: atol 1e-5 .. 1e-4 (scaled by the row length or the
    number of atomic adds where noted), rtol 1e-4 .. 1e-3;
  f32 outputs through a bf16 intermediate (mlp2, w5, v3): atol 1e-3, rtol 1e-2 (the intermediate rounded
    the same way in the reference; a one-ulp flip of it moves the output by ~2^-8 of a term);
  exact (0, 0): integer outputs, data movement (permutes, sorts, gathers, top-k), fp8 / int8 codes,
    bf16 cumsum of bf16, the bf16 residual add, fp8 scales (rtol 1e-6).
"""
import os
import zlib

import numpy as np
import pytest

import tilec
from refs import check_close  # python/tests/refs.py

KERNELS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "user_kernels")
SEED = int(os.environ.get("TILEC_SEED") or np.random.SeedSequence().entropy % 2**31)


@pytest.fixture
def rng(request):
    """A Generator per test, seeded by SEED and the test's id (each test reproducible alone)."""
    return np.random.default_rng([SEED, zlib.crc32(request.node.name.encode())])


_programs = {}


def prog(name):
    """tests/user_kernels/NAME.tile compiled once (for sm_90a: the cutlass kernels take their wgmma forms)."""
    if name not in _programs:
        _programs[name] = tilec.compile(os.path.join(KERNELS, name + ".tile"), arch="sm_90a")
    return _programs[name]


def bf(x):  # f32 values -> bf16 bits (uint16)
    return tilec.f32_to_bf16(np.ascontiguousarray(x, dtype=np.float32))


def unbf(b):  # bf16 bits -> f32
    return tilec.bf16_to_f32(b)


def rbf(x):  # values rounded to bf16 (as f32)
    return unbf(bf(x))


def bf16_ulp(x):
    """bf16's unit in the last place at |x| (8 significant bits)."""
    e = np.floor(np.log2(np.maximum(np.abs(np.asarray(x, np.float64)), 2.0 ** -126)))
    return 2.0 ** (e - 7)


from refs import E4M3, E5M2  # noqa: E402  (the code tables: python/tests/refs.py)
E4M3_MAX_CODE, E5M2_MAX_CODE = 0x7E, 0x7B  # 448, 57344


def fp8_round(x, table, max_code):
    """x rounded to the nearest fp8 value (ties to the even code), saturated at the finite maximum."""
    x = np.asarray(x, np.float64)
    vals = table[: max_code + 1]  # the non-negative finite values, ascending
    a = np.minimum(np.abs(x), vals[-1])
    idx = np.clip(np.searchsorted(vals, a), 1, max_code)
    lo, hi = vals[idx - 1], vals[idx]
    pick_hi = (hi - a < a - lo) | ((hi - a == a - lo) & (idx % 2 == 0))
    return np.sign(x) * np.where(a <= 0, 0.0, np.where(pick_hi, hi, lo))


def poisoned(shape, dtype, value=None):
    """an output buffer filled with NaN (bf16 / fp8 NaN codes), or with VALUE / -12345 for integers."""
    if dtype == "bf16":
        return np.full(shape, 0x7FC0, np.uint16)
    if dtype == "fp8":
        return np.full(shape, 0x7F, np.uint8)  # NaN in e4m3fn and in e5m2
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        return np.full(shape, np.nan, dtype)
    return np.full(shape, -12345 if value is None else value, dtype)


def check(what, got, ref, atol, rtol):
    check_close(what, got, ref, atol, rtol, SEED)


def sizes(*cases):
    """parametrize ids 'a-b-c' for the size tuples"""
    return [pytest.param(*c, id="-".join(map(str, c))) for c in cases]


def kernel_cases(table):
    """(kernel, sizes) parametrize cases of a file whose kernels take different sizes: ids 'kernel-a-b-c'"""
    return [pytest.param(k, c, id="-".join([k] + [str(v) for v in c])) for k, cs in table.items() for c in cs]


def flip_atol(h, w):
    """the error of an output y = bf16(h) @ w where one element of h rounds to the other side of a bf16 tie
    between two f32 summation orders: one bf16 ulp of max |h| times max |w|"""
    return float(bf16_ulp(np.abs(h).max()) * np.abs(w).max()) if np.size(h) else 0.0


# ---------------------------------------------------------------------------------------------- add_ln.tile

@pytest.mark.parametrize("R,C", sizes((1, 1), (3, 127), (7, 1000), (4, 2048)))
def test_add_ln(rng, R, C):
    x = rbf(rng.standard_normal((R, C)))
    res = rbf(rng.standard_normal((R, C)) * 4)
    w, b = rbf(rng.standard_normal(C)), rbf(rng.standard_normal(C))
    H, Y = poisoned((R, C), "bf16"), poisoned((R, C), "bf16")
    M, Rs = poisoned(R, np.float32), poisoned(R, np.float32)
    tilec.interpret(prog("add_ln")["add_ln"], bf(x), bf(res), bf(w), bf(b), H, Y, M, Rs, 1e-5)
    h = rbf(x + res).astype(np.float64)  # the f32 sum of two bf16 values is exact; one bf16 rounding
    mean, var = h.mean(1), h.var(1)
    rstd = 1 / np.sqrt(var + 1e-5)
    check("add_ln H", unbf(H), h, 0, 0)
    check("add_ln Y", unbf(Y), (h - mean[:, None]) * rstd[:, None] * w + b, 1e-2, 1.6e-2)
    check("add_ln Mean", M, mean, 1e-5, 1e-4)
    check("add_ln Rstd", Rs, rstd, 1e-5, 1e-3)


# ----------------------------------------------------------------------------------------------- bgemm.tile

@pytest.mark.parametrize("kernel", ["bgemm_bias_relu", "cutlass_bgemm_bias_relu"])
@pytest.mark.parametrize("Bt,M,N,K", sizes((1, 1, 1, 1), (3, 7, 129, 127), (2, 130, 70, 200), (2, 257, 129, 65)))
def test_bgemm(rng, kernel, Bt, M, N, K):
    A = rng.standard_normal((Bt, M, K)).astype(np.float16)
    B = rng.standard_normal((Bt, K, N)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float16)
    C = poisoned((Bt, M, N), np.float16)
    tilec.interpret(prog("bgemm")[kernel], A, B, bias, C)
    ref = np.maximum(A.astype(np.float64) @ B.astype(np.float64) + bias.astype(np.float64), 0)
    check(kernel, C, ref, 1e-3 * np.sqrt(K), 4e-3)


# ----------------------------------------------------------------------------------------------- ce_ls.tile

@pytest.mark.parametrize("R,V", sizes((1, 7), (5, 129), (6, 2049), (3, 5003)))
def test_ce_ls(rng, R, V):
    X = rbf(rng.standard_normal((R, V)) * 2)
    T = rng.integers(0, V, R).astype(np.int64)
    T[::3] = -100  # ignore_index: rows 0, 3, ...
    eps = 0.1
    keep = T != -100
    inv_n = 1.0 / max(1, keep.sum())
    xd = X.astype(np.float64)
    lse = np.log(np.exp(xd - xd.max(1, keepdims=True)).sum(1)) + xd.max(1)
    xt = xd[np.arange(R), np.where(keep, T, 0)]
    loss = np.where(keep, lse - (1 - eps) * xt - eps / V * xd.sum(1), 0)
    onehot = np.zeros((R, V))
    onehot[np.arange(R)[keep], T[keep]] = 1
    g = (np.exp(xd - lse[:, None]) - (1 - eps) * onehot - eps / V) * inv_n * keep[:, None]
    L, dX = poisoned(R, np.float32), poisoned((R, V), "bf16")
    tilec.interpret(prog("ce_ls")["ce_ls"], bf(X), T, L, dX, eps, -100, inv_n)
    check("ce_ls Loss", L, loss, 1e-4, 1e-3)
    check("ce_ls dX", unbf(dX), g, 1e-4, 1.6e-2)  # bf16, but the gradients are small: atol 1e-4


# ---------------------------------------------------------------------------------------------- cumsum.tile

@pytest.mark.parametrize("R,C", sizes((1, 1), (3, 511), (2, 513), (4, 4097)))
def test_cumsum(rng, R, C):
    p = prog("cumsum")
    x = rng.standard_normal((R, C)).astype(np.float32)
    Y = poisoned((R, C), np.float32)
    tilec.interpret(p["cumsum_rows"], x, Y)
    check("cumsum_rows", Y, np.cumsum(x.astype(np.float64), 1), 1e-5 * np.sqrt(C), 1e-4)
    xi = rng.integers(-1000, 1000, (R, C)).astype(np.int32)
    Y = poisoned((R, C), np.int32)
    tilec.interpret(p["excl_cumsum_i32"], xi, Y)
    check("excl_cumsum_i32", Y, np.cumsum(xi, 1) - xi, 0, 0)
    xb = rbf(x)
    Y = poisoned((R, C), np.float32)
    tilec.interpret(p["rev_cumsum"], bf(xb), Y)
    check("rev_cumsum", Y, np.cumsum(xb[:, ::-1].astype(np.float64), 1)[:, ::-1], 1e-5 * np.sqrt(C), 1e-4)


# ------------------------------------------------------------------------------------ gemm_dual_swiglu.tile

@pytest.mark.parametrize("kernel", ["dual_swiglu", "cutlass_dual_swiglu"])
@pytest.mark.parametrize("M,N,K", sizes((1, 1, 1), (7, 129, 127), (200, 130, 300)))
def test_gemm_dual_swiglu(rng, kernel, M, N, K):
    X = rbf(rng.standard_normal((M, K)))
    Wg, Wu = rbf(rng.standard_normal((K, N)) * 0.2), rbf(rng.standard_normal((K, N)) * 0.2)
    Y = poisoned((M, N), "bf16")
    tilec.interpret(prog("gemm_dual_swiglu")[kernel], bf(X), bf(Wg), bf(Wu), Y)
    g, u = X.astype(np.float64) @ Wg, X.astype(np.float64) @ Wu
    check(kernel, unbf(Y), g / (1 + np.exp(-g)) * u, 1e-2, 1.6e-2)


# --------------------------------------------------------------------------------- gemm_grouped_splitk.tile

@pytest.mark.parametrize("M,N,K", sizes((1, 1, 1), (300, 129, 127), (65, 1000, 500), (513, 64, 33)))
def test_gemm_grouped_splitk(rng, M, N, K):
    A, B = rbf(rng.standard_normal((M, K))), rbf(rng.standard_normal((K, N)))
    C0 = rng.standard_normal((M, N)).astype(np.float32)
    C = C0.copy()  # C += A @ B by atomics: starts from C0 (every element is added to)
    tilec.interpret(prog("gemm_grouped_splitk")["gemm_grouped_splitk"], bf(A), bf(B), C)
    check("gemm_grouped_splitk", C, C0 + A.astype(np.float64) @ B.astype(np.float64), 1e-4 * np.sqrt(K), 1e-4)


# ---------------------------------------------------------------------------------------- gemm_w8a16.tile

@pytest.mark.parametrize("M,N,K", sizes((1, 1, 1), (7, 129, 127), (100, 300, 1000), (65, 64, 64)))
def test_gemm_w8a16(rng, M, N, K):
    p = prog("gemm_w8a16")
    A = rbf(rng.standard_normal((M, K)))
    Bq = rng.integers(-128, 128, (K, N)).astype(np.int8)
    S = (rng.uniform(0.5, 2, N) / 128).astype(np.float32)
    ref = (A.astype(np.float64) @ Bq.astype(np.float64)) * S
    Y = poisoned((M, N), "bf16")
    tilec.interpret(p["gemm_w8a16"], bf(A), Bq, S, Y)
    check("gemm_w8a16", unbf(Y), ref, 1e-2, 1.6e-2)
    # Y is the bf16 rounding of the exact result, give or take one bf16 ulp where the f32 accumulation's error
    # (a few 2^-24 of the sum of |terms|, bounded here by 2^-22) moves it across a rounding tie
    bound = bf16_ulp(ref) + 2.0 ** -22 * (np.abs(A).astype(np.float64) @ np.abs(Bq.astype(np.float64))) * S
    check("gemm_w8a16 against bf16(exact)", unbf(Y), rbf(ref), bound, 0)
    Y = poisoned((M, N), "bf16")
    tilec.interpret(p["gemm_w8a16_nt"], bf(A), np.ascontiguousarray(Bq.T), S, Y)
    check("gemm_w8a16_nt", unbf(Y), ref, 1e-2, 1.6e-2)


# ------------------------------------------------------------------------------------------- glu_bwd.tile

@pytest.mark.parametrize("R,F", sizes((1, 1), (7, 257), (5, 1000), (3, 4097)))
def test_glu_bwd(rng, R, F):
    p = prog("glu_bwd")
    x = rbf(rng.standard_normal((R, 2, F)) * 2)
    dh = rbf(rng.standard_normal((R, F))).astype(np.float64)
    a, b = x[:, 0].astype(np.float64), x[:, 1].astype(np.float64)
    k = 0.7978845608028654
    t = np.tanh(k * (a + 0.044715 * a ** 3))
    gelu = 0.5 * a * (1 + t)
    dgelu = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * k * (1 + 3 * 0.044715 * a * a)
    s = 1 / (1 + np.exp(-a))
    for kernel, da, db in [("geglu_bwd", dh * b * dgelu, dh * gelu),
                           ("swiglu_bwd", dh * b * s * (1 + a * (1 - s)), dh * a * s)]:
        dX = poisoned((R, 2, F), "bf16")
        tilec.interpret(p[kernel], bf(x), bf(dh), dX)
        out = unbf(dX)
        check(f"{kernel} da", out[:, 0], da, 1e-2, 1.6e-2)
        check(f"{kernel} db", out[:, 1], db, 1e-2, 1.6e-2)


# ----------------------------------------------------------------------------------------- groupnorm.tile

@pytest.mark.parametrize("N,G,CG,HW", sizes((1, 1, 1, 1), (2, 4, 3, 100), (1, 8, 16, 257), (3, 2, 5, 1000)))
def test_groupnorm(rng, N, G, CG, HW):
    x = rbf(rng.standard_normal((N, G, CG, HW)) * 2 + 5)  # a mean far from 0: the shifted sums matter
    w, b = rng.standard_normal((G, CG)).astype(np.float32), rng.standard_normal((G, CG)).astype(np.float32)
    Y = poisoned((N, G, CG, HW), "bf16")
    tilec.interpret(prog("groupnorm")["groupnorm"], bf(x), w, b, Y, 1e-5)
    xd = x.astype(np.float64)
    mu, var = xd.mean((2, 3), keepdims=True), xd.var((2, 3), keepdims=True)
    ref = (xd - mu) / np.sqrt(var + 1e-5) * w[None, :, :, None] + b[None, :, :, None]
    check("groupnorm", unbf(Y), ref, 1e-2, 1.6e-2)


# -------------------------------------------------------------------------------------------- kl_jsd.tile

def _log_softmax(z):
    m = z.max(1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(1, keepdims=True))


@pytest.mark.parametrize("R,V", sizes((1, 1), (3, 1023), (4, 1025), (2, 5000)))
def test_kl_jsd(rng, R, V):
    p = prog("kl_jsd")
    S, T = rbf(rng.standard_normal((R, V)) * 3), rbf(rng.standard_normal((R, V)) * 3)
    tau = 2.0
    lps, lpt = _log_softmax(S.astype(np.float64) / tau), _log_softmax(T.astype(np.float64) / tau)
    L = poisoned(R, np.float32)
    tilec.interpret(p["kl_distill"], bf(S), bf(T), L, tau)
    check("kl_distill", L, (np.exp(lpt) * (lpt - lps)).sum(1) * tau * tau, 1e-4, 1e-3)
    LP = _log_softmax(rng.standard_normal((R, V)) * 2).astype(np.float32)
    LQ = _log_softmax(rng.standard_normal((R, V)) * 2).astype(np.float32)
    P, Q = np.exp(LP.astype(np.float64)), np.exp(LQ.astype(np.float64))
    lm = np.log(0.5 * (P + Q))
    L = poisoned(R, np.float32)
    tilec.interpret(p["jsd"], LP, LQ, L)
    check("jsd", L, 0.5 * (P * (LP - lm) + Q * (LQ - lm)).sum(1), 1e-5, 1e-3)


# -------------------------------------------------------------------------------------------- ln_bwd.tile

@pytest.mark.parametrize("R,C", sizes((1, 7), (7, 127), (13, 1000), (33, 129)))
def test_ln_bwd(rng, R, C):
    p = prog("ln_bwd")
    x = rbf(rng.standard_normal((R, C)) * 2 + 0.3)
    dy = rbf(rng.standard_normal((R, C)))
    w = rng.standard_normal(C).astype(np.float32)
    mean = x.mean(1).astype(np.float32)
    rstd = (1 / np.sqrt(x.var(1) + 1e-5)).astype(np.float32)
    xd, dyd = x.astype(np.float64), dy.astype(np.float64)
    xhat = (xd - mean[:, None]) * rstd[:, None]
    g = dyd * w
    dx = (g - (xhat * (xhat * g).mean(1, keepdims=True) + g.mean(1, keepdims=True))) * rstd[:, None]
    dw, db = (dyd * xhat).sum(0), dyd.sum(0)
    # ln_bwd: dW, dB accumulate (atomic_add) into what they hold; f32 sums of R terms: atol 1e-4 R
    dX = poisoned((R, C), "bf16")
    dW0, dB0 = rng.standard_normal(C).astype(np.float32), rng.standard_normal(C).astype(np.float32)
    dW, dB = dW0.copy(), dB0.copy()
    tilec.interpret(p["ln_bwd"], bf(x), bf(dy), w, mean, rstd, dX, dW, dB)
    check("ln_bwd dX", unbf(dX), dx, 1e-2, 1.6e-2)
    check("ln_bwd dW", dW, dW0 + dw, 1e-4 * R, 1e-4)
    check("ln_bwd dB", dB, dB0 + db, 1e-4 * R, 1e-4)
    P = -(-R // 4)  # one partial row a program of BR = 4 rows
    dX = poisoned((R, C), "bf16")
    DWp, DBp = poisoned((P, C), np.float32), poisoned((P, C), np.float32)
    tilec.interpret(p["ln_bwd_partial"], bf(x), bf(dy), w, mean, rstd, dX, DWp, DBp)
    check("ln_bwd_partial dX", unbf(dX), dx, 1e-2, 1.6e-2)
    dW, dB = poisoned(C, np.float32), poisoned(C, np.float32)
    tilec.interpret(p["ln_dw_reduce"], DWp, DBp, dW, dB)
    check("ln_dw_reduce dW", dW, dw, 1e-4 * R, 1e-4)
    check("ln_dw_reduce dB", dB, db, 1e-4 * R, 1e-4)


# ---------------------------------------------------------------------------------------- moe_router.tile

def _moe_top2(rng, T, E):
    x = rng.standard_normal((T, E)).astype(np.float32)
    Ids, Wt = poisoned((T, 2), np.int32), poisoned((T, 2), np.float32)
    cnt0 = rng.integers(0, 5, E).astype(np.int32)
    Count = cnt0.copy()  # atomic_add into what it holds
    tilec.interpret(prog("moe_router")["moe_top2"], x, Ids, Wt, Count)
    pr = np.exp(x - x.max(1, keepdims=True))
    pr /= pr.sum(1, keepdims=True)
    o = np.argsort(-pr, 1, kind="stable")[:, :2]
    w = np.take_along_axis(pr, o, 1)
    check("moe_top2 Ids", Ids, o, 0, 0)
    check("moe_top2 Wt", Wt, w / w.sum(1, keepdims=True), 1e-6, 1e-5)
    check("moe_top2 Count", Count, cnt0 + np.bincount(o.ravel(), minlength=E), 0, 0)


def _moe_topk(rng, T, E, K):
    x = rbf(rng.standard_normal((T, E)))
    x[0, :3] = x[0, 3]  # a four-way tie: the lower indices first
    Ids, Wt = poisoned((T, K), np.int32), poisoned((T, K), np.float32)
    tilec.interpret(prog("moe_router")["moe_topk"], bf(x), Ids, Wt)
    o = np.argsort(-x, 1, kind="stable")[:, :K]
    v = np.take_along_axis(x, o, 1).astype(np.float64)
    w = np.exp(v - v.max(1, keepdims=True))
    check("moe_topk Ids", Ids, o, 0, 0)
    check("moe_topk Wt", Wt, w / w.sum(1, keepdims=True), 1e-6, 1e-5)


MOE = {"moe_top2": [(1, 8), (17, 8), (100, 64), (33, 60)],  # T, E
       "moe_topk": [(1, 8, 2), (13, 64, 8), (30, 40, 6), (9, 64, 1)]}  # T, E, K


@pytest.mark.parametrize("kernel,size", kernel_cases(MOE))
def test_moe_router(rng, kernel, size):
    {"moe_top2": _moe_top2, "moe_topk": _moe_topk}[kernel](rng, *size)


# ------------------------------------------------------------------------------------------- permute.tile

@pytest.mark.parametrize("B,S,H,D", sizes((1, 1, 1, 1), (2, 37, 3, 65), (1, 129, 8, 64), (3, 17, 5, 100)))
def test_permute(rng, B, S, H, D):
    p = prog("permute")
    x = rbf(rng.standard_normal((B, S, H, D)))
    for kernel in ["bshd_to_bhsd", "bshd_to_bhsd_perm"]:
        Y = poisoned((B, H, S, D), "bf16")
        tilec.interpret(p[kernel], bf(x), Y)
        check(kernel, unbf(Y), x.transpose(0, 2, 1, 3), 0, 0)
    xf = rng.standard_normal((B, S, D)).astype(np.float32)
    Y = poisoned((B, D, S), np.float32)
    tilec.interpret(p["bsd_to_bds"], xf, Y)
    check("bsd_to_bds", Y, xf.transpose(0, 2, 1), 0, 0)


# --------------------------------------------------------------------------------------------- quant.tile

def _quant_fp8_rows(rng, R, C):
    x = rbf(rng.standard_normal((R, C)) * rng.uniform(0.01, 100, (R, 1)))  # rows of very different scales
    Q, S = poisoned((R, C), "fp8"), poisoned(R, np.float32)
    tilec.interpret(prog("quant")["quant_fp8_rows"], bf(x), Q, S)
    sc = (np.maximum(np.abs(x).max(1), 1e-12) / np.float32(448)).astype(np.float32)
    inv = (np.float32(1) / sc).astype(np.float32)
    check("quant_fp8_rows S", S, sc, 0, 1e-6)
    check("quant_fp8_rows Q", E4M3[Q], fp8_round((x * inv[:, None]).astype(np.float32), E4M3, E4M3_MAX_CODE), 0, 0)


def _quant_i8_rows(rng, R, C):
    x = (rng.standard_normal((R, C)) * 3).astype(np.float16)
    Q, S = poisoned((R, C), np.int8, -128), poisoned(R, np.float32)  # -128: |q| <= 127
    tilec.interpret(prog("quant")["quant_i8_rows"], x, Q, S)
    xf = x.astype(np.float32)
    sc = (np.maximum(np.abs(xf).max(1), np.float32(1e-8)) / np.float32(127)).astype(np.float32)
    v = (xf / sc[:, None]).astype(np.float32)
    check("quant_i8_rows S", S, sc, 0, 1e-6)
    check("quant_i8_rows Q", Q, np.where(v >= 0, np.floor(v + np.float32(0.5)), np.ceil(v - np.float32(0.5))), 0, 0)


QUANT = {"quant_fp8_rows": [(1, 1), (3, 1000), (5, 1025), (2, 4097)],  # R, C
         "quant_i8_rows": [(1, 1), (7, 127), (5, 512), (9, 300)]}


@pytest.mark.parametrize("kernel,size", kernel_cases(QUANT))
def test_quant(rng, kernel, size):
    {"quant_fp8_rows": _quant_fp8_rows, "quant_i8_rows": _quant_i8_rows}[kernel](rng, *size)


# ----------------------------------------------------------------------------------------- topk_rows.tile

def _topk_rows(rng, R, V, K):
    x = rng.standard_normal((R, V)).astype(np.float32)
    if V > 10:
        x[0, 5] = x[0, 9] = x.max() + 1  # a tie at the top: the lower index first
    Val, Idx = poisoned((R, K), np.float32), poisoned((R, K), np.int32)
    tilec.interpret(prog("topk_rows")["topk_rows"], x, Val, Idx)
    o = np.argsort(-x, 1, kind="stable")[:, :K]
    check("topk_rows Val", Val, np.take_along_axis(x, o, 1), 0, 0)
    check("topk_rows Idx", Idx, o, 0, 0)


def _topk_vals_bf16(rng, R, V, K):
    x = rbf(rng.standard_normal((R, V)))
    Val = poisoned((R, K), "bf16")
    tilec.interpret(prog("topk_rows")["topk_vals_bf16"], bf(x), Val)
    check("topk_vals_bf16", unbf(Val), -np.sort(-x, 1)[:, :K], 0, 0)


TOPK = {"topk_rows": [(1, 1, 1), (5, 1000, 16), (3, 129, 7), (4, 1024, 10)],  # R, V, K
        "topk_vals_bf16": [(1, 1, 1), (7, 300, 32), (5, 512, 5)]}


@pytest.mark.parametrize("kernel,size", kernel_cases(TOPK))
def test_topk_rows(rng, kernel, size):
    {"topk_rows": _topk_rows, "topk_vals_bf16": _topk_vals_bf16}[kernel](rng, *size)


# ------------------------------------------- cutlass_dot_after_loop, cutlass_mlp2, cutlass_computed_a (.tile)

def _pad(x, shape):
    """x zero-padded (or cut) to SHAPE: a masked tile load past the tensor's edge"""
    out = np.zeros(shape, np.float64)
    sl = tuple(slice(0, min(a, b)) for a, b in zip(x.shape, shape))
    out[sl] = x[sl]
    return out


GEMM_SIZES = sizes((1, 1, 1), (130, 70, 200), (257, 130, 65), (64, 128, 64))  # M, N, K


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_cutlass_dot_after_loop(rng, M, N, K):
    A, B = rbf(rng.standard_normal((M, K))), rbf(rng.standard_normal((K, N)))
    C = poisoned((M, N), np.float32)
    tilec.interpret(prog("cutlass_dot_after_loop")["cutlass_v4"], bf(A), bf(B), C)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    check("cutlass_v4", C, A64 @ B64 + A64[:, :64] @ B64[:64], 1e-4 * np.sqrt(K + 64), 1e-4)


@pytest.mark.parametrize("M,K,H,N", sizes((1, 1, 1, 1), (130, 100, 64, 90), (70, 48, 50, 129), (65, 200, 100, 64)))
def test_cutlass_mlp2(rng, M, K, H, N):
    X = rbf(rng.standard_normal((M, K)))
    W1, W2 = rbf(rng.standard_normal((K, H)) * 0.3), rbf(rng.standard_normal((H, N)) * 0.3)
    Y = poisoned((M, N), np.float32)
    tilec.interpret(prog("cutlass_mlp2")["cutlass_mlp2"], bf(X), bf(W1), bf(W2), Y)
    h = rbf(X.astype(np.float64) @ _pad(W1, (K, 64)))  # H past BH = 64 is not read (no require in the kernel)
    W2p = _pad(W2, (64, N))
    check("cutlass_mlp2", Y, h.astype(np.float64) @ W2p, 1e-3 + flip_atol(h, W2p), 1e-2)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_cutlass_computed_a(rng, M, N, K):
    Af = rng.standard_normal((M, K)).astype(np.float32)
    B = rbf(rng.standard_normal((K, N)))
    A, S = bf(rng.standard_normal((M, K))), rng.standard_normal(M).astype(np.float32)  # not read
    C = poisoned((M, N), np.float32)
    tilec.interpret(prog("cutlass_computed_a")["cutlass_w2"], A, bf(B), Af, C, S)
    check("cutlass_w2", C, rbf(Af).astype(np.float64) @ B, 1e-4 * np.sqrt(K), 1e-4)


# ------------------------------------------------------------------------------------------ probe/p1.tile

def _p1_cumsum_bf16_axis0(p, rng):
    R, C = 50, 70
    x = rbf(rng.standard_normal((R, C)))
    Y = poisoned((R, C), "bf16")
    tilec.interpret(p["cumsum_bf16_axis0"], bf(x), Y)
    check("cumsum_bf16_axis0", unbf(Y), rbf(np.cumsum(x, 0)), 0, 0)  # f32 running sums, rounded to bf16


def _p1_sort_axis0_f16(p, rng):
    x = rng.standard_normal((30, 20)).astype(np.float16)
    Y = poisoned((30, 20), np.float16)
    tilec.interpret(p["sort_axis0_f16"], x, Y)
    check("sort_axis0_f16", Y, np.sort(x, 0), 0, 0)


def _p1_sort_u8(p, rng):
    x = rng.integers(0, 255, (5, 100)).astype(np.uint8)
    Y = poisoned((5, 100), np.uint8, 255)  # 255: not in the data
    tilec.interpret(p["sort_u8"], x, Y)
    check("sort_u8", Y, -np.sort(-x.astype(int), 1), 0, 0)


def _p1_argmin_bf16(p, rng):
    x = rbf(rng.standard_normal((9, 200)))
    x[1, 50] = np.nan  # a NaN row: its index, and NaN
    x[2, 3] = x[2, 7] = -10  # a tie at the minimum: the lower index
    I, M = poisoned(9, np.int32), poisoned(9, "bf16")
    tilec.interpret(p["argmin_bf16"], bf(x), I, M)
    check("argmin_bf16 I", I, [np.argmax(np.isnan(r)) if np.isnan(r).any() else np.argmin(r) for r in x], 0, 0)
    check("argmin_bf16 M", unbf(M), np.min(x, 1), 0, 0)


def _p1_reshape_cat(p, rng):
    N = 600
    x = rng.standard_normal(N).astype(np.float32)
    Y = poisoned(N, np.float32)
    tilec.interpret(p["reshape_cat"], x, Y)
    xp = np.concatenate([x, np.zeros(768 - N, np.float32)]).reshape(-1, 16, 16).astype(np.float64)
    check("reshape_cat", Y, (xp + xp.sum(2, keepdims=True)).reshape(-1)[:N], 1e-5, 1e-5)


def _p1_permute4(p, rng):
    X = rng.standard_normal((2, 4, 8, 16)).astype(np.float16)
    Y = poisoned((16, 8, 2, 4), np.float16)
    tilec.interpret(p["permute4"], X, Y)
    check("permute4", Y, X.transpose(3, 2, 0, 1), 0, 0)


def _p1_mods(p, rng):
    N = 300
    xi = rng.integers(-100000, 100000, N).astype(np.int32)
    f = (rng.standard_normal(N) * 10).astype(np.float32)
    Y, G = poisoned(N, np.int32), poisoned(N, np.float32)
    tilec.interpret(p["mods"], xi, f, Y, G, -7, np.float32(-1.5))
    q = np.trunc(xi / -7).astype(np.int64)
    check("mods Y", Y, (xi - q * -7) + q * 1000 + ((xi >> 3) & 7) * 100000, 0, 0)
    check("mods G", G, np.fmod(f, np.float32(-1.5)), 0, 0)


def _p1_dot_i8(p, rng):
    M, N, K = 33, 65, 100
    A, B = rng.integers(-128, 128, (M, K)).astype(np.int8), rng.integers(-128, 128, (K, N)).astype(np.int8)
    C = poisoned((M, N), np.int32)
    tilec.interpret(p["dot_i8"], A, B, C)
    check("dot_i8", C, A.astype(np.int64) @ B.astype(np.int64), 0, 0)


def _p1_atom_mix(p, rng):
    N, H = 1000, 13
    x = rng.standard_normal(N).astype(np.float32)
    idx = rng.integers(-2, H + 2, N).astype(np.int32)  # some out of range: skipped
    mx0, mn0, s0 = np.full(H, -5, np.float32), np.full(H, 5, np.float32), np.zeros(H, np.float16)
    Mx, Mn, S16 = mx0.copy(), mn0.copy(), s0.copy()
    tilec.interpret(p["atom_mix"], x, idx, Mx, Mn, S16)
    ok = (idx >= 0) & (idx < H)
    rmx, rmn, rs = mx0.copy(), mn0.copy(), np.zeros(H)
    np.maximum.at(rmx, idx[ok], x[ok])
    np.minimum.at(rmn, idx[ok], x[ok])
    np.add.at(rs, idx[ok], x[ok].astype(np.float16).astype(np.float64))
    check("atom_mix Mx", Mx, rmx, 0, 0)
    check("atom_mix Mn", Mn, rmn, 0, 0)
    check("atom_mix S16", S16, rs, 0.05, 1e-2)  # ~80 f16 adds, each rounded to f16


def _p1_loop_if(p, rng):
    R, C = 6, 300
    x = (rng.standard_normal((R, C)) + 0.2).astype(np.float32)
    Y = poisoned(R, np.float32)
    tilec.interpret(p["loop_if"], x, Y, 1.0)
    ref = []
    for r in range(R):
        acc, cnt = 0.0, 0
        for c0 in range(0, C, 64):
            s = x[r, c0:c0 + 64].astype(np.float64).sum()
            if s > 1.0:
                acc, cnt = acc + s, cnt + 1
            elif s < -1.0:
                acc -= s
        ref.append(acc + cnt * 1000)
    check("loop_if", Y, ref, 1e-3, 1e-5)


def _p1_gather_inner(p, rng):
    R, C = 20, 100
    x = rng.standard_normal((R, C)).astype(np.float32)
    P = rng.integers(-3, C + 3, C).astype(np.int32)
    Y = poisoned((R, C), np.float32)
    tilec.interpret(p["gather_inner"], x, P, Y)
    check("gather_inner", Y, np.where((P >= 0) & (P < C), x[:, np.clip(P, 0, C - 1)], -7.0), 0, 0)


def _fp8_codes(rng, shape, mbits, emin, emax):
    """random fp8 codes of either sign with biased exponents in [emin, emax] (finite, no NaN)"""
    return ((rng.integers(0, 2, shape) << 7) | (rng.integers(emin, emax + 1, shape) << mbits)
            | rng.integers(0, 1 << mbits, shape)).astype(np.uint8)


def _p1_dot_f8mix(p, rng):
    M, N, K = 100, 70, 130
    A = _fp8_codes(rng, (M, K), 3, 0, 10)  # e4m3 from subnormals to 2^3
    B = _fp8_codes(rng, (K, N), 2, 0, 18)  # e5m2 from subnormals to 2^3
    C = poisoned((M, N), np.float32)
    tilec.interpret(p["dot_f8mix"], A, B, C)
    check("dot_f8mix", C, E4M3[A] @ E5M2[B], 1e-4 * np.sqrt(K), 1e-4)


def _p1_e5m2_cast(p, rng):
    N = 300
    x = (rng.standard_normal(N) * 1000).astype(np.float32)
    x[:8] = [1e6, -1e6, 1e-9, 57344.0, 61440.0, 2.0 ** -16 * 1.5, -3e-5, 2.0 ** -17]  # saturation, subnormals, ties
    x[8:40] *= 1e-6  # more subnormals
    Y, Z = poisoned(N, "fp8"), poisoned(N, np.float32)
    tilec.interpret(p["e5m2_cast"], x, Y, Z)
    ref = fp8_round(x, E5M2, E5M2_MAX_CODE)
    check("e5m2_cast Y", E5M2[Y], ref, 0, 0)
    check("e5m2_cast Z", Z, ref, 0, 0)


P1 = {f.__name__[4:]: f for f in [_p1_cumsum_bf16_axis0, _p1_sort_axis0_f16, _p1_sort_u8, _p1_argmin_bf16,
                                  _p1_reshape_cat, _p1_permute4, _p1_mods, _p1_dot_i8, _p1_atom_mix, _p1_loop_if,
                                  _p1_gather_inner, _p1_dot_f8mix, _p1_e5m2_cast]}


@pytest.mark.parametrize("kernel", list(P1))
def test_probe_p1(rng, kernel):
    P1[kernel](prog("probe/p1"), rng)


# ------------------------------------------------------------------------------------------ probe/p2.tile

def _tf32(a):  # f32 truncated to tf32's 10 mantissa bits
    return (a.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def _p2_dots(p, rng, M, N, K):
    """dot_tiny, dot_transA, tf32_nt, i8_bk16 at one size"""
    A, B = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    C = poisoned((M, N), np.float32)
    tilec.interpret(p["dot_tiny"], A, B, C)
    check("dot_tiny", C, A.astype(np.float64) @ B, 1e-4 * np.sqrt(K), 1e-4)
    Ab, Bb = rbf(rng.standard_normal((M, K))), rbf(rng.standard_normal((K, N)))
    C = poisoned((M, N), np.float32)
    tilec.interpret(p["dot_transA"], bf(Ab.T.copy()), bf(Bb), C)
    check("dot_transA", C, Ab.astype(np.float64) @ Bb, 1e-4 * np.sqrt(K), 1e-4)
    Af, Bf = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((N, K)).astype(np.float32)
    C = poisoned((M, N), np.float32)
    tilec.interpret(p["tf32_nt"], Af, Bf, C)
    check("tf32_nt", C, _tf32(Af).astype(np.float64) @ _tf32(Bf).T, 1e-4 * np.sqrt(K), 1e-4)
    Ai, Bi = rng.integers(-128, 128, (M, K)).astype(np.int8), rng.integers(-128, 128, (N, K)).astype(np.int8)
    C = poisoned((M, N), np.int32)
    tilec.interpret(p["i8_bk16"], Ai, Bi, C)
    check("i8_bk16", C, Ai.astype(np.int64) @ Bi.T, 0, 0)


def _p2_mlp2(p, rng, M, K, H, N):
    X = rbf(rng.standard_normal((M, K)))
    W1, W2 = rbf(rng.standard_normal((K, H)) * 0.3), rbf(rng.standard_normal((H, N)) * 0.3)
    Y = poisoned((M, N), np.float32)
    tilec.interpret(p["mlp2"], bf(X), bf(W1), bf(W2), Y)
    h = rbf(np.maximum(X.astype(np.float64) @ W1, 0))
    check("mlp2", Y, h.astype(np.float64) @ W2, 1e-3 + flip_atol(h, W2), 1e-2)


def _p2_cond_rows(p, rng, R, C):
    X = rng.standard_normal((R, C)).astype(np.float32)
    Mk = rng.integers(0, 2, R).astype(np.int32)
    Y, Cnt = poisoned((R, C), np.float32), np.zeros(2, np.int32)
    tilec.interpret(p["cond_rows"], X, Mk, Y, Cnt)
    n = R * -(-C // 128)  # programs
    check("cond_rows Y", Y, np.where(Mk[:, None] != 0, X * 2, 0), 0, 0)
    check("cond_rows Cnt", Cnt, [n, n], 0, 0)


P2 = {"dots": [(1, 1, 1), (17, 9, 33), (100, 70, 130)],  # M, N, K
      "mlp2": [(1, 1, 1, 1), (70, 100, 64, 33), (130, 48, 50, 129)],  # M, K, H, N
      "cond_rows": [(7, 300), (1, 1)]}  # R, C


@pytest.mark.parametrize("kernel,size", kernel_cases(P2))
def test_probe_p2(rng, kernel, size):
    {"dots": _p2_dots, "mlp2": _p2_mlp2, "cond_rows": _p2_cond_rows}[kernel](prog("probe/p2"), rng, *size)


# ------------------------------------------------------------------- probe/v*.tile, probe/w*.tile: cutlass shapes

def _gemm_inputs(rng, M, N, K):
    A, B, B2 = rbf(rng.standard_normal((M, K))), rbf(rng.standard_normal((K, N))), rbf(rng.standard_normal((K, N)))
    return A, B, B2, A.astype(np.float64), B.astype(np.float64), B2.astype(np.float64)


@pytest.mark.parametrize("M,K,H,N", sizes((1, 1, 1, 1), (130, 100, 64, 90), (70, 48, 50, 129), (65, 200, 100, 64)))
def test_probe_v1(rng, M, K, H, N):
    X = rbf(rng.standard_normal((M, K)))
    W1, W2 = rbf(rng.standard_normal((K, H)) * 0.3), rbf(rng.standard_normal((H, N)) * 0.3)
    Y = poisoned((M, N), np.float32)
    tilec.interpret(prog("probe/v1")["cutlass_v1"], bf(X), bf(W1), bf(W2), Y)
    h = X.astype(np.float64) @ _pad(W1, (K, 64))  # [M, 64], added to every 64-column block of the output
    ref = _pad(X, (M, 64)) @ _pad(W2, (64, N)) + np.tile(h, (1, -(-N // 64)))[:, :N]
    check("cutlass_v1", Y, ref, 1e-4 * np.sqrt(K + 64), 1e-4)


@pytest.mark.parametrize("M,K,H,N", sizes((1, 1, 1, 1), (130, 100, 64, 90), (70, 48, 50, 129)))
def test_probe_v2(rng, M, K, H, N):
    X, W2 = rbf(rng.standard_normal((M, K))), rbf(rng.standard_normal((H, N)))
    Y = poisoned((M, N), np.float32)
    tilec.interpret(prog("probe/v2")["cutlass_v2"], bf(X), bf(W2), Y)
    check("cutlass_v2", Y, _pad(X, (M, 64)) @ _pad(W2, (64, N)), 1e-4 * np.sqrt(64), 1e-4)


@pytest.mark.parametrize("M,K,H,N", sizes((1, 1, 1, 1), (130, 10, 64, 64), (70, 48, 50, 33)))  # N <= 64: no race
def test_probe_v3(rng, M, K, H, N):
    X, W2 = bf(rng.standard_normal((M, K))), rbf(rng.standard_normal((H, N)))  # X not read
    Y0 = rng.standard_normal((M, N)).astype(np.float32)
    Y = Y0.copy()  # read (its first 64 columns), then overwritten
    tilec.interpret(prog("probe/v3")["cutlass_v3"], X, bf(W2), Y)
    check("cutlass_v3", Y, _pad(rbf(Y0), (M, 64)) @ _pad(W2, (64, N)), 1e-4 * np.sqrt(64), 1e-4)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_v4a(rng, M, N, K):
    A, B, _, A64, B64, _ = _gemm_inputs(rng, M, N, K)
    C = poisoned((M, N), np.float32)
    tilec.interpret(prog("probe/v4a")["v4"], bf(A), bf(B), C)
    check("v4", C, A64 @ B64 + A64[:, :64] @ B64[:64], 1e-4 * np.sqrt(K + 64), 1e-4)


def _run_abcs(rng, name, kernel, M, N, K, Cin=None, S0=None):
    """the kernels with parameters (A, B, B2 | Af, C, S): C (and S) after a run, and the f64 inputs"""
    A, B, B2, A64, B64, B264 = _gemm_inputs(rng, M, N, K)
    # the third parameter: v*.tile's B2 [K, N] bf16, w*.tile's Af [M, K] f32 (not read by the w kernels here)
    third = bf(B2) if name.startswith("probe/v") else rng.standard_normal((M, K)).astype(np.float32)
    C = poisoned((M, N), np.float32) if Cin is None else Cin.copy()
    S = poisoned(M, np.float32) if S0 is None else S0.copy()
    tilec.interpret(prog(name)[kernel], bf(A), bf(B), third, C, S)
    return C, S, A64, B64, B264


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_v5(rng, M, N, K):
    C, _, A, B, B2 = _run_abcs(rng, "probe/v5", "cutlass_v5", M, N, K)
    g, u = A @ B, A @ B2
    check("cutlass_v5", C, g / (1 + np.exp(-g)) * u, 1e-4 * K, 1e-4)  # products of two K-term sums


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_v6(rng, M, N, K):
    C, _, A, B, B2 = _run_abcs(rng, "probe/v6", "cutlass_v6", M, N, K)
    check("cutlass_v6", C, A[:, :64] @ B2[:64] + A @ B, 1e-4 * np.sqrt(K + 64), 1e-4)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_v7(rng, M, N, K):
    C, _, A, B, B2 = _run_abcs(rng, "probe/v7", "cutlass_v7", M, N, K)
    check("cutlass_v7", C, A @ B + A @ B2, 1e-4 * np.sqrt(2 * K), 1e-4)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_v8(rng, M, N, K):
    S0 = rng.standard_normal(M).astype(np.float32)  # atomic_add into what S holds
    C, S, A, B, _ = _run_abcs(rng, "probe/v8", "cutlass_v8", M, N, K, S0=S0)
    check("cutlass_v8 C", C, A @ B, 1e-4 * np.sqrt(K), 1e-4)
    check("cutlass_v8 S", S, S0 + (A @ B).sum(1), 1e-4 * np.sqrt(K * N), 1e-4)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_v9(rng, M, N, K):
    C, _, A, B, _ = _run_abcs(rng, "probe/v9", "cutlass_v9", M, N, K)
    check("cutlass_v9", C, A @ B - A[:, :64] @ B[:64], 1e-4 * np.sqrt(K), 1e-4)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_w1(rng, M, N, K):
    C0 = rng.standard_normal((M, N)).astype(np.float32)
    C, _, A, B, _ = _run_abcs(rng, "probe/w1", "cutlass_w1", M, N, K, Cin=C0)
    check("cutlass_w1", C, C0 + A @ B, 1e-4 * np.sqrt(K), 1e-4)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_w3(rng, M, N, K):
    C, S, A, B, _ = _run_abcs(rng, "probe/w3", "cutlass_w3", M, N, K)  # S written whole (n-block 0's programs)
    check("cutlass_w3 C", C, A @ B, 1e-4 * np.sqrt(K), 1e-4)
    # n-block 0's tile is [128, 128]: its columns past N are zeros in the accumulator
    check("cutlass_w3 S", S, _pad(A @ B, (M, 128)).max(1), 1e-4 * np.sqrt(K), 1e-4)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_w4(rng, M, N, K):
    C, _, A, B, _ = _run_abcs(rng, "probe/w4", "cutlass_w4", M, N, K)
    nk = -(-K // 64)
    ref = sum(0.5 ** (nk - k) * (A[:, 64 * k:64 * k + 64] @ B[64 * k:64 * k + 64]) for k in range(nk))
    check("cutlass_w4", C, ref, 1e-4 * np.sqrt(K), 1e-4)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_w5(rng, M, N, K):
    S0 = rng.uniform(0.5, 2, M).astype(np.float32)
    C, _, A, B, _ = _run_abcs(rng, "probe/w5", "cutlass_w5", M, N, K, S0=S0)
    P = A @ B
    ref, atol = np.zeros((M, N)), 1e-3
    for n0 in range(0, N, 128):  # per n-block: bf16(P[:, block] * S) @ B[0:128, block], padded with zeros
        t = rbf(_pad(P[:, n0:], (M, 128)) * S0[:, None]).astype(np.float64)
        Bp = _pad(B[:, n0:], (128, 128))
        ref[:, n0:n0 + 128] = (t @ Bp)[:, :N - n0]
        atol = max(atol, 1e-3 + flip_atol(t, Bp))
    check("cutlass_w5", C, ref, atol, 1e-2)


@pytest.mark.parametrize("M,N,K", GEMM_SIZES)
def test_probe_w6(rng, M, N, K):
    C, _, A, B, _ = _run_abcs(rng, "probe/w6", "cutlass_w6", M, N, K)
    check("cutlass_w6", C, (A @ B) * 0.25, 1e-4 * np.sqrt(K), 1e-4)


def test_f8_constants():
    """probe/f8_const.tile fp8_fill: 8-bit float constant tiles (e4m3 1.5 = 0x3c, -3.25 = 0xc5; 500 saturates to
    448 = 0x7e; e5m2 448 = 0x5f, -0.375 = 0xb6), exact bytes, every element written (poisoned with 0xff first)."""
    k = prog("probe/f8_const")["fp8_fill"]
    for n in (1, 63, 100):
        y4, y5, z = (np.full(n, 0xFF, np.uint8) for _ in range(3))
        tilec.interpret(k, y4, y5, z)
        odd = np.arange(n) % 2 == 1
        np.testing.assert_array_equal(y4, np.where(odd, 0x3C, 0xC5).astype(np.uint8))
        np.testing.assert_array_equal(y5, np.where(odd, 0x5F, 0xB6).astype(np.uint8))
        np.testing.assert_array_equal(z, np.full(n, 0x7E, np.uint8))
