"""What a first-time user coming from Triton writes in a week (docs/first_use.md): the kernels, each
written from docs/language.md alone, on the interpreter at ragged sizes against NumPy; then the
Python API's handling of what such a user passes by mistake (each case a bug or a poor message that
docs/first_use.md lists as fixed)."""
import ctypes as C

import numpy as np
import pytest

import tilec
from tilec import _lib

rng = np.random.default_rng()

MATMUL_LRELU = """
kernel matmul_lrelu(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N], slope: f32)
    tiles(BM = 64, BN = 64, BK = 32)
    grid(cdiv(M, BM), cdiv(N, BN))
{
    m0 = program_id(0) * BM;
    n0 = program_id(1) * BN;
    acc = zeros<f32>[BM, BN];
    for k in range(0, K, BK) {
        acc = dot(load(A[m0 : m0 + BM, k : k + BK]), load(B[k : k + BK, n0 : n0 + BN]), acc);
    }
    store(C[m0 : m0 + BM, n0 : n0 + BN], cast<f16>(where(acc > 0, acc, acc * slope)));
}
"""

DROPOUT = """
kernel dropout(X: tensor<f32>[N], Y: tensor<f32>[N], p: f32, seed: i64)
    tiles(B = 1024)
    grid(cdiv(N, B))
{
    off = program_id(0) * B;
    x = load(X[off : off + B]);
    keep = rand(seed, off + iota<i32>[B]) > p;
    store(Y[off : off + B], where(keep, x / (1 - p), 0.0));
}
"""

LAYERNORM = """
kernel layernorm(X: tensor<f32>[R, C], W: tensor<f32>[C], Bi: tensor<f32>[C], Y: tensor<f32>[R, C],
                 Mean: tensor<f32>[R], Rstd: tensor<f32>[R], eps: f32)
    tiles(BC = 1024)
    grid(R)
{
    r = program_id(0);
    x = load(X[r, 0 : BC]);
    mean = reduce_sum(x, 0) / C;
    d = where(iota<i32>[BC] < C, x - mean, 0.0);
    rstd = rsqrt(reduce_sum(d * d, 0) / C + eps);
    store(Y[r, 0 : BC], d * rstd * load(W[0 : BC]) + load(Bi[0 : BC]));
    store(Mean[r], mean);
    store(Rstd[r], rstd);
}
"""

ARGMAX = """
kernel row_argmax(X: tensor<f32>[R, C], Idx: tensor<i32>[R], Val: tensor<f32>[R])
    tiles(BC = 1024)
    grid(R)
{
    r = program_id(0);
    x = load(X[r, 0 : BC], other = -inf);
    store(Idx[r], argmax(x, 0));
    store(Val[r], reduce_max(x, 0));
}
"""

EMBEDDING = """
kernel embedding(Ids: tensor<i64>[T], E: tensor<f32>[V, D], Out: tensor<f32>[T, D])
    tiles(BT = 16, BD = 128)
    grid(cdiv(T, BT), cdiv(D, BD))
{
    t0 = program_id(0) * BT;
    d0 = program_id(1) * BD;
    store(Out[t0 : t0 + BT, d0 : d0 + BD], load(E[load(Ids[t0 : t0 + BT]), d0 : d0 + BD]));
}
"""

QUANT_INT8 = """
kernel quant_int8(X: tensor<f32>[R, C], Q: tensor<i8>[R, C], S: tensor<f32>[R])
    tiles(BC = 1024)
    grid(R)
{
    r = program_id(0);
    x = load(X[r, 0 : BC]);
    scale = max(reduce_max(abs(x), 0), 1e-8) / 127.0;
    store(Q[r, 0 : BC], cast<i8>(x / scale + where(x >= 0, 0.5, -0.5)));
    store(S[r], scale);
}
"""

CAUSAL_ATTN = """
kernel causal_attn(Q: tensor<f16>[H, S, D], K: tensor<f16>[H, S, D], V: tensor<f16>[H, S, D],
                   O: tensor<f16>[H, S, D], sm_scale: f32)
    tiles(BM = 64, BN = 64, D = 64)
    grid(cdiv(S, BM), H)
{
    m0 = program_id(0) * BM;
    h = program_id(1);
    q = load(Q[h, m0 : m0 + BM, :]);
    m_i = full<f32>[BM](-inf);
    l_i = zeros<f32>[BM];
    acc = zeros<f32>[BM, D];
    rows = m0 + iota<i32>[BM];
    for n0 in range(0, min(S, m0 + BM), BN) {
        s = dot(q, trans(load(K[h, n0 : n0 + BN, :]))) * sm_scale;
        cols = n0 + iota<i32>[BN];
        s = where(rows[:, None] >= cols[None, :] && cols[None, :] < S, s, -inf);
        m_new = max(m_i, reduce_max(s, 1));
        p = exp(s - m_new[:, None]);
        alpha = exp(m_i - m_new);
        l_i = l_i * alpha + reduce_sum(p, 1);
        acc = acc * alpha[:, None] + dot(cast<f16>(p), load(V[h, n0 : n0 + BN, :]));
        m_i = m_new;
    }
    store(O[h, m0 : m0 + BM, :], cast<f16>(acc / l_i[:, None]));
}
"""


def kernel(src):
    return tilec.compile(src, name="first_use.tile").__getitem__(src.split("kernel ")[1].split("(")[0])


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (100, 70, 90), (64, 33, 129)])
def test_matmul_leaky_relu(m, k, n):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    tilec.interpret(kernel(MATMUL_LRELU), a, b, c, 0.1)
    r = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), np.where(r > 0, r, 0.1 * r), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("n", [1, 1023, 5000])
def test_dropout_is_a_function_of_seed_and_offset(n):
    k = kernel(DROPOUT)
    x = rng.standard_normal(n).astype(np.float32) + 10.0  # never 0: a 0 out is a dropped element
    y1, y2, y3 = (np.full(n, np.nan, np.float32) for _ in range(3))
    tilec.interpret(k, x, y1, 0.3, 1234)
    tilec.interpret(k, x, y2, 0.3, 1234)
    tilec.interpret(k, x, y3, 0.3, 1235)
    assert (y1 == y2).all()
    kept = y1 != 0
    np.testing.assert_allclose(y1[kept], x[kept] / np.float32(0.7), rtol=1e-6)
    if n >= 1000:
        assert 0.65 < kept.mean() < 0.75
        assert (y1 != y3).any()


@pytest.mark.parametrize("r,c", [(1, 1), (5, 777), (3, 1024)])
def test_layernorm_with_mean_and_rstd(r, c):
    x = rng.standard_normal((r, c)).astype(np.float32)
    w, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    y = np.full_like(x, np.nan)
    mean, rstd = np.full(r, np.nan, np.float32), np.full(r, np.nan, np.float32)
    tilec.interpret(kernel(LAYERNORM), x, w, b, y, mean, rstd, 1e-5)
    rs = 1 / np.sqrt(x.var(1) + 1e-5)
    np.testing.assert_allclose(mean, x.mean(1), atol=1e-5)
    np.testing.assert_allclose(rstd, rs, rtol=1e-5)
    np.testing.assert_allclose(y, (x - x.mean(1, keepdims=True)) * rs[:, None] * w + b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("r,c", [(9, 513), (2, 1), (4, 1024)])
def test_row_argmax(r, c):
    x = rng.standard_normal((r, c)).astype(np.float32)
    x[0, c // 2] = x[0, 0] = 100.0  # ties: the first index
    idx, val = np.full(r, -7, np.int32), np.full(r, np.nan, np.float32)
    tilec.interpret(kernel(ARGMAX), x, idx, val)
    assert (idx == x.argmax(1)).all()
    assert (val == x.max(1)).all()


def test_embedding_gather_with_i64_ids_out_of_range_read_zero():
    t, v, d = 37, 50, 200
    ids = rng.integers(0, v, t).astype(np.int64)
    ids[3], ids[5] = v, -1  # outside the table: rows of zeros
    e = rng.standard_normal((v, d)).astype(np.float32)
    out = np.full((t, d), np.nan, np.float32)
    tilec.interpret(kernel(EMBEDDING), ids, e, out)
    ref = e[np.clip(ids, 0, v - 1)]
    ref[3] = ref[5] = 0
    assert (out == ref).all()


@pytest.mark.parametrize("r,c", [(6, 300), (1, 1024)])
def test_int8_per_row_quantization(r, c):
    x = rng.standard_normal((r, c)).astype(np.float32)
    x[0] = 0  # an all-zero row: the scale's floor
    q, s = np.zeros((r, c), np.int8), np.full(r, np.nan, np.float32)
    tilec.interpret(kernel(QUANT_INT8), x, q, s)
    sref = np.maximum(np.abs(x).max(1), np.float32(1e-8)) / np.float32(127)
    qref = np.trunc(x / sref[:, None] + np.where(x >= 0, 0.5, -0.5)).astype(np.int8)
    np.testing.assert_allclose(s, sref, rtol=1e-7)
    assert np.abs(q.astype(int) - qref).max() <= 1  # a division rounded on the other side of .5
    assert np.abs(q).max() <= 127


@pytest.mark.parametrize("h,s", [(2, 150), (1, 64), (1, 1)])
def test_causal_attention(h, s):
    d = 64
    q, k, v = (rng.standard_normal((h, s, d)).astype(np.float16) for _ in range(3))
    o = np.full_like(q, np.nan)
    tilec.interpret(kernel(CAUSAL_ATTN), q, k, v, o, 1 / np.sqrt(d))
    sc = np.einsum("hmd,hnd->hmn", q.astype(np.float64), k.astype(np.float64)) / np.sqrt(d)
    sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(o.astype(np.float64), ref, atol=3e-3, rtol=3e-3)


# ---- the Python API on a user's mistakes ----------------------------------------------------------------
SCALARS = """
kernel fill(Y: tensor<i32>[N], v: i32, w: i8, f: f32)
    tiles(B = 64) grid(cdiv(N, B))
{
    o = program_id(0) * B;
    store(Y[o : o + B], full<i32>[B](v + cast<i32>(w) + cast<i32>(f)));
}
"""


def test_an_error_shows_only_what_its_own_call_reported():
    """The program's log keeps every call's errors; TilecError showed them all, so the second bad call
    repeated the first one's error before its own."""
    k = kernel(DROPOUT)
    x = np.zeros(10, np.float32)
    with pytest.raises(tilec.TilecError, match="has no tile type"):
        tilec.interpret(k, x.astype(np.float64), x, 0.5, 1)
    with pytest.raises(tilec.TilecError, match="N = 10") as ei:
        tilec.interpret(k, x, np.zeros(11, np.float32), 0.5, 1)
    assert "has no tile type" not in str(ei.value)
    assert "has no tile type" not in ei.value.log
    assert not any("has no tile type" in d.message for d in ei.value.diagnostics)
    tilec.interpret(k, x, x, 0.5, 1)  # a good call after bad ones


def test_scalar_arguments():
    k = kernel(SCALARS)
    y = np.zeros(10, np.int32)
    for v in (5, np.int64(5), np.int32(5), np.array(5), True + 4):
        y[:] = 0
        tilec.interpret(k, y, v, 0, np.float32(0.5))
        assert (y == 5).all(), v
    for bad in (np.float32(3.7), np.float64(3.0), np.array(2.5), 3.5):  # no silent truncation
        with pytest.raises(TypeError, match="argument v: i32 parameter, got the float"):
            tilec.interpret(k, y, bad, 0, 0.0)
    for bad in (None, "3", [3]):
        with pytest.raises(TypeError, match="argument v: i32 parameter"):
            tilec.interpret(k, y, bad, 0, 0.0)
    for bad in (None, "0.5"):
        with pytest.raises(TypeError, match="argument f: f32 parameter"):
            tilec.interpret(k, y, 1, 0, bad)


def test_an_integer_that_does_not_fit_its_parameter_is_refused():
    """2**40 for an i32 used to become 0 (wrapped) without a word; -1 and 0xffffffff (all ones) still pass."""
    k = kernel(SCALARS)
    y = np.zeros(4, np.int32)
    for v, w in ((2 ** 40, 0), (-(2 ** 31) - 1, 0), (1, 300), (1, -129)):
        with pytest.raises(tilec.TilecError, match="does not fit the parameter's type"):
            tilec.interpret(k, y, v, w, 0.0)
    tilec.interpret(k, y, 0xFFFFFFFF, -128, 0.0)
    assert (y == -1 - 128).all()
    tilec.interpret(k, y, -1, 255, 0.0)
    assert (y == -1 - 1).all()


def test_f32_to_bf16_keeps_the_shape():
    assert tilec.f32_to_bf16(np.float32(1.5)).shape == ()
    assert tilec.f32_to_bf16(1.5) == 0x3FC0
    assert tilec.f32_to_bf16(np.ones((2, 3))).shape == (2, 3)
    assert (tilec.f32_to_bf16(np.ones((4, 6), np.float32)[::2, ::3]) == 0x3F80).all()


def test_dtype_messages_name_the_dtypes():
    k = kernel(DROPOUT)
    x = np.zeros(8, np.float32)
    with pytest.raises(tilec.TilecError, match=r"float64 .* the parameter is tensor<f32>"):
        tilec.interpret(k, x.astype(np.float64), x, 0.5, 1)
    bf = tilec.compile(DROPOUT.replace("X: tensor<f32>", "X: tensor<bf16>").replace("load(X[off : off + B])",
                                                                                    "cast<f32>(load(X[off : off + B]))"))
    with pytest.raises(TypeError, match=r"float32 array for a bf16 tensor.*f32_to_bf16"):
        tilec.interpret(bf["dropout"], x, x, 0.5, 1)
    tilec.interpret(bf["dropout"], tilec.f32_to_bf16(x), x, 0.5, 1)


def test_a_launch_of_host_arrays_says_so():
    """Without this, a launch of NumPy arrays loaded the kernel first and failed with "the CUDA driver is
    missing" (no GPU) or a device error, not naming the argument."""
    k = kernel(DROPOUT)
    x = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match=r"argument X: a host \(CPU\) array.*tilec.interpret"):
        k(x, x, 0.5, 1)


def test_option_errors_say_why():
    with pytest.raises(tilec.TilecError, match=r"warps takes 1, 2, 4, 8 or 16"):
        tilec.compile(DROPOUT, warps=3)
    with pytest.raises(tilec.TilecError, match=r"no option is called 'bogus' \(options: arch, opt_level"):
        tilec.compile(DROPOUT, bogus=1)


def test_the_option_keys_come_from_the_library():
    """The package's option names are the library's table (tilec_options_key), each accepted with its
    example value; the refusal of a bad value names what the key takes, from the same table."""
    from tilec import _option_keys
    keys = _option_keys()
    assert "tma-fallback" in keys and "warps" in keys and len(keys) > 20
    o = C.c_void_p()
    assert _lib.lib.tilec_options_create(C.byref(o)) == 0
    try:
        for key in keys:
            ex = _lib.lib.tilec_options_example(key.encode())
            assert _lib.lib.tilec_options_set(o, key.encode(), ex) == 0, key
        assert _lib.lib.tilec_options_set(o, b"no-such-option", b"1") != 0
    finally:
        _lib.lib.tilec_options_destroy(o)
    with pytest.raises(tilec.TilecError, match=r"tma_fallback takes form, inline, entry or notma"):
        tilec.compile(DROPOUT, tma_fallback="sometimes")


def test_interpret_takes_arguments_by_name():
    k = kernel(DROPOUT)
    x = rng.standard_normal(100).astype(np.float32) + 10
    y1, y2 = np.zeros_like(x), np.zeros_like(x)
    tilec.interpret(k, x, y1, 0.25, 9)
    tilec.interpret(k, x, Y=y2, seed=9, p=0.25)
    assert (y1 == y2).all()
    with pytest.raises(TypeError, match=r"has no parameter 'B' \(its parameters: X, Y, p, seed; a tile constant is set when compiling"):
        tilec.interpret(k, x, y1, 0.25, 9, B=512)
    # a launch's keyword, and a near miss of a parameter's name, each say so (not the tile-constant advice)
    with pytest.raises(TypeError, match=r"has no parameter 'grid' \(grid= is a launch's keyword"):
        tilec.interpret(k, x, y1, 0.25, 9, grid=(3,))
    with pytest.raises(TypeError, match=r"has no parameter 'sed' \(did you mean 'seed'\?\)"):
        tilec.interpret(k, x, y1, 0.25, sed=9)
    with pytest.raises(TypeError, match="argument 'X' given twice"):
        tilec.interpret(k, x, y1, 0.25, 9, X=x)
    with pytest.raises(TypeError, match="missing arguments p, seed"):
        tilec.interpret(k, x, Y=y1)
    with pytest.raises(TypeError, match=r"takes 4 arguments, got 2 \(missing: p, seed\)"):
        tilec.interpret(k, x, y1)


def test_an_error_message_carries_its_notes():
    """The notes after an error (a Triton name's spelling here, a previous definition) are part of it:
    str(TilecError) showed the errors alone."""
    with pytest.raises(tilec.TilecError) as ei:
        tilec.compile("kernel k(X: tensor<f32>[N]) tiles(B = 64) grid(cdiv(N, B)) {\n"
                      "    i = arange(0, B);\n}\n", name="t.tile")
    msg = str(ei.value)
    assert "t.tile:2:9: error: unknown function 'arange'" in msg
    assert "t.tile:2:9: note: Triton's tl.arange(0, N) is iota<i32>[N] here" in msg
    assert msg.index("error: unknown function") < msg.index("note: Triton's")


def test_bf16_to_f32_refuses_float_values():
    """bf16_to_f32 reads uint16 bit patterns; a float array (values, not patterns) gave denormals silently."""
    x = np.array([1.5, -2.0, 3.25], np.float32)
    np.testing.assert_array_equal(tilec.bf16_to_f32(tilec.f32_to_bf16(x)), x)
    with pytest.raises(TypeError, match="bf16_to_f32 takes bf16 bit patterns"):
        tilec.bf16_to_f32(x)


def test_register_torch_op_without_torch_says_what_it_needs():
    try:
        import torch  # noqa: F401
        pytest.skip("torch is installed")
    except ModuleNotFoundError:
        pass
    k = kernel(DROPOUT)
    with pytest.raises(ModuleNotFoundError, match=r"register_torch_op needs PyTorch"):
        tilec.register_torch_op(k)


def test_autotune_space_errors_without_a_gpu():
    """A space wrong in itself (a name that is no tile constant, warps=3) is said as such where there is no GPU
    (it said only that the CUDA driver is missing: the user could not check the request before finding a GPU)."""
    import os
    if os.environ.get("TILEC_LIBCUDA") or os.path.exists("/dev/nvidiactl"):
        pytest.skip("a driver (or the fake one) may be found: this is the no-driver path")
    x = np.zeros(100, np.float32)
    for space, msg in (({"NOPE": [1]}, r"'NOPE' is not a tile constant of kernel 'dropout'"),
                       ({"warps": [3]}, r"warps=3 is out of range")):
        with pytest.raises(tilec.TilecError, match=msg):
            tilec.autotune(DROPOUT, "dropout", space, (x, x, 0.5, 1), cache=False, progress=False)
