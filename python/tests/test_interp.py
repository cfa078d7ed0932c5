"""The CPU interpreter path (no GPU): tilec.interpret on NumPy arrays against NumPy references, at
ragged sizes, on fresh random data, outputs poisoned with NaN first."""
import os

import numpy as np
import pytest

import tilec
from conftest import EXAMPLES

rng = np.random.default_rng()

VADD = """
kernel vadd(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N], a: f32)
    tiles(B = 128)
    grid(cdiv(N, B))
{
    i = program_id(0) * B;
    store(Z[i : i + B], load(X[i : i + B]) * a + load(Y[i : i + B]));
}
"""


@pytest.mark.parametrize("n", [1, 127, 128, 129, 1000])
def test_vadd_from_source(n):
    k = tilec.compile(VADD)["vadd"]
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    z = np.full(n, np.nan, np.float32)
    a = float(rng.uniform(0.5, 2.0))
    tilec.interpret(k, x, y, z, a)
    np.testing.assert_allclose(z, x * np.float32(a) + y, rtol=1e-6, atol=1e-6)


COUNT = """
@zeroed(Cnt)
kernel count(X: tensor<f32>[N], Y: tensor<f32>[N], Cnt: tensor<i32>[B])
    tiles(B = 128)
    grid(cdiv(N, B))
{
    i = program_id(0) * B;
    store(Y[i : i + B], load(X[i : i + B]) * 2.0);
    atomic_add(Cnt[0 : B], zeros<i32>[B] + 1);
}
"""


@pytest.mark.parametrize("n", [1, 129, 1000])
def test_zeroed_params_and_the_interpreter(n):
    """Param.zeroed names the tensors a caller must zero (@zeroed); made as it says, a counter every
    program adds 1 to ends at the number of programs.  attn_decode.tile: only attn_decode_fused's Count."""
    k = tilec.compile(COUNT)["count"]
    assert [p.zeroed for p in k.params] == [False, False, True]
    assert k.params[2].written
    args = [np.zeros(128, np.int32) if p.zeroed else rng.standard_normal(n, dtype=np.float32) for p in k.params]
    args[1][:] = np.nan
    tilec.interpret(k, *args)
    np.testing.assert_array_equal(args[2], np.full(128, -(-n // 128), np.int32))
    np.testing.assert_array_equal(args[1], args[0] * 2)
    p = tilec.compile(os.path.join(EXAMPLES, "attn_decode.tile"))
    zeroed = [(name, q.name) for name in p.kernel_names for q in p[name].params if q.zeroed]
    assert zeroed == [("attn_decode_fused", "Count")]
    with pytest.raises(tilec.TilecError, match="'n' is a scalar parameter; @zeroed names a tensor"):
        tilec.compile(COUNT.replace("@zeroed(Cnt)", "@zeroed(n)").replace("Cnt: tensor<i32>[B])", "Cnt: tensor<i32>[B], n: i32)"))


@pytest.mark.parametrize("shape", [(1, 1), (37, 300), (5, 1024), (3, 1000)])
def test_softmax_example(shape):
    k = tilec.compile(os.path.join(EXAMPLES, "softmax.tile"))["softmax"]
    x = rng.standard_normal(shape, dtype=np.float32) * 3
    y = np.full_like(x, np.nan)
    tilec.interpret(k, x, y)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7)


def test_strided_views():
    """Non-contiguous NumPy views: strides in elements reach the interpreter."""
    k = tilec.compile(os.path.join(EXAMPLES, "softmax.tile"))["softmax"]
    big = rng.standard_normal((20, 700), dtype=np.float32)
    x = big[::2, 3:503]                  # row stride 1400, offset data pointer
    out = np.full((10, 1000), np.nan, np.float32)
    y = out[:, ::2]                      # column stride 2
    tilec.interpret(k, x, y)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7)
    assert np.isnan(out[:, 1::2]).all(), "the kernel wrote outside its view"


def test_rmsnorm_bf16_as_uint16():
    k = tilec.compile(os.path.join(EXAMPLES, "rmsnorm.tile"), defines={"BC": 512})["rmsnorm"]
    R, Cn = 7, 301
    xb = tilec.f32_to_bf16(rng.standard_normal((R, Cn), dtype=np.float32))
    wb = tilec.f32_to_bf16(rng.standard_normal(Cn, dtype=np.float32))
    yb = np.full((R, Cn), 0x7FC0, np.uint16)  # bf16 NaN
    eps = 1e-5
    tilec.interpret(k, xb, wb, yb, eps)
    x, w = tilec.bf16_to_f32(xb).astype(np.float64), tilec.bf16_to_f32(wb).astype(np.float64)
    ref = x / np.sqrt((x * x).mean(1, keepdims=True) + eps) * w
    got = tilec.bf16_to_f32(yb)
    assert np.abs(got - ref).max() <= 1e-2 * np.abs(ref).max()


def test_gemm_bf16_ragged():
    k = tilec.compile(os.path.join(EXAMPLES, "gemm.tile"), defines={"BM": 32, "BN": 32, "BK": 16})["cutlass_gemm"]
    M, N, K = 37, 45, 29
    a = tilec.f32_to_bf16(rng.standard_normal((M, K), dtype=np.float32))
    b = tilec.f32_to_bf16(rng.standard_normal((K, N), dtype=np.float32))
    c = np.full((M, N), 0x7FC0, np.uint16)
    tilec.interpret(k, a, b, c)
    ref = tilec.bf16_to_f32(a).astype(np.float64) @ tilec.bf16_to_f32(b).astype(np.float64)
    got = tilec.bf16_to_f32(c)
    assert np.abs(got - ref).max() <= 1e-2 * np.abs(ref).max() + 1e-2


def test_bf16_helpers_round_to_nearest_even():
    # 1 + 2^-8 and 1 + 3 * 2^-8 are ties: to the even mantissa; 1 + 2^-8 + 2^-12 rounds up
    x = np.array([1.0, 1.00390625, 1.01171875, 1.00390625 + 2.0 ** -12, -2.5], np.float32)
    assert list(tilec.bf16_to_f32(tilec.f32_to_bf16(x))) == [1.0, 1.0, 1.015625, 1.0078125, -2.5]
    assert tilec.f32_to_bf16(np.array([np.nan], np.float32))[0] == 0x7FC0


def test_argument_errors():
    k = tilec.compile(VADD)["vadd"]
    x = np.zeros(10, np.float32)
    with pytest.raises(tilec.TilecError, match="N = 10"):
        tilec.interpret(k, x, x, np.zeros(11, np.float32), 1.0)
    with pytest.raises(tilec.TilecError, match="dtype"):
        tilec.interpret(k, x, x, np.zeros(10, np.float64), 1.0)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        tilec.interpret(k, x, x, x)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(10, np.float32)
        ro.flags.writeable = False
        tilec.interpret(k, x, x, ro, 1.0)
    with pytest.raises(TypeError, match="expected a tensor"):
        tilec.interpret(k, [1.0] * 10, x, x, 1.0)


def test_int_scalar_rejects_float():
    src = """kernel fill(Y: tensor<i32>[N], v: i32) tiles(B = 64) grid(cdiv(N, B)) {
        i = program_id(0) * B;
        store(Y[i : i + B], zeros<i32>[B] + v);
    }"""
    k = tilec.compile(src)["fill"]
    y = np.zeros(100, np.int32)
    tilec.interpret(k, y, 7)
    assert (y == 7).all()
    with pytest.raises(TypeError, match="i32 parameter"):
        tilec.interpret(k, y, 7.5)


BIAS_GELU = """
kernel bias_gelu(X: tensor<bf16>[R, C], B: tensor<bf16>[C], Y: tensor<bf16>[R, C])
    tiles(BC = 128)
    grid(R, cdiv(C, BC))
{
    r = program_id(0);
    c0 = program_id(1) * BC;
    x = cast<f32>(load(X[r, c0 : c0 + BC])) + cast<f32>(load(B[c0 : c0 + BC]));
    g = 0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
    store(Y[r, c0 : c0 + BC], cast<bf16>(g));
}
"""


def test_tutorial_kernel():
    """The fused kernel of docs/python.md's tutorial, on the interpreter."""
    k = tilec.compile(BIAS_GELU)["bias_gelu"]
    R, Cn = 6, 300
    xs = tilec.f32_to_bf16(rng.standard_normal((R, Cn), dtype=np.float32))
    bs = tilec.f32_to_bf16(rng.standard_normal(Cn, dtype=np.float32))
    ys = np.full((R, Cn), 0x7FC0, np.uint16)
    tilec.interpret(k, xs, bs, ys)
    x = tilec.bf16_to_f32(xs).astype(np.float64) + tilec.bf16_to_f32(bs).astype(np.float64)
    ref = 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(tilec.bf16_to_f32(ys), ref, rtol=1e-2, atol=1e-2)


def _bf16(a):
    """A float32 array rounded to bf16, back as float32, and its uint16 bits."""
    bits = tilec.f32_to_bf16(a.astype(np.float32))
    return tilec.bf16_to_f32(bits).astype(np.float64), bits


@pytest.mark.parametrize("m,k,f", [(1, 512, 64), (5, 768, 96), (17, 256, 40)])
@pytest.mark.parametrize("bm", [16, 64])
def test_decode_fused_kernels(m, k, f, bm):
    """examples/llama/decode_fused.tile on the interpreter, against fp64 references of the unfused
    steps (rmsnorm with the weight folded into B, SwiGLU after the GEMM), at ragged sizes (K and F
    not multiples of the tiles, M past BM), outputs poisoned.  Tolerances: bf16 output (2^-8
    relative) plus the bf16 rounding of the folded weights (2^-8 of each product)."""
    prog = tilec.compile(os.path.join(EXAMPLES, "llama", "decode_fused.tile"), defines={"BM": bm})
    eps = 1e-5
    x, xb = _bf16(3 * rng.standard_normal((m, k)))  # rms ~3: a dropped row scale cannot pass
    w = rng.uniform(0.5, 1.5, k)
    b = rng.standard_normal((k, 2 * f)) / np.sqrt(k)
    bw, bwb = _bf16(w[:, None] * b)
    r = 1.0 / np.sqrt((x * x).mean(1) + eps)
    tol = dict(rtol=2e-2, atol=2e-2)
    # the SwiGLU GEMM (no norm): silu(x @ Bg) * (x @ Bu)
    y = np.full((m, f), 0xFFFF, np.uint16)
    tilec.interpret(prog["gemm_small_m_swiglu"], xb, bwb, y)
    g, u = x @ bw[:, :f], x @ bw[:, f:]
    np.testing.assert_allclose(tilec.bf16_to_f32(y), g / (1 + np.exp(-g)) * u, **tol)
    # the norm fused into a projection
    c = np.full((m, 2 * f), 0xFFFF, np.uint16)
    tilec.interpret(prog["gemm_rms_small_m"], xb, bwb, c, eps)
    np.testing.assert_allclose(tilec.bf16_to_f32(c), r[:, None] * (x @ bw), **tol)
    # norm + GEMM + SwiGLU
    y.fill(0xFFFF)
    tilec.interpret(prog["gemm_rms_swiglu_small_m"], xb, bwb, y, eps)
    g, u = r[:, None] * g, r[:, None] * u
    np.testing.assert_allclose(tilec.bf16_to_f32(y), g / (1 + np.exp(-g)) * u, **tol)


@pytest.mark.parametrize("V", [1, 255, 256, 1000, 2049])
def test_cross_entropy_loop_prefetch(V):
    """examples/cross_entropy.tile's chunk loop with loop_prefetch (the default: each chunk loaded
    one iteration ahead, docs/rows.md) and without it: bit-identical losses, and both the fp64
    logsumexp - x[target] (targets in range, one ignored at -100)."""
    path = os.path.join(EXAMPLES, "cross_entropy.tile")
    on = tilec.compile(path, defines={"BV": 256})["cross_entropy"]
    off = tilec.compile(path, defines={"BV": 256}, disable_pass="loop_prefetch")["cross_entropy"]
    assert "for" in on.program.ir and on.program.ir.count("load %X") == off.program.ir.count("load %X") + 1
    R = 6
    xb = tilec.f32_to_bf16(rng.standard_normal((R, V), dtype=np.float32) * 4)
    t = rng.integers(0, V, R, dtype=np.int32)
    t[R // 2] = -100
    outs = []
    for k in (on, off):
        loss = np.full(R, np.nan, np.float32)
        tilec.interpret(k, xb, t, loss)
        outs.append(loss)
    np.testing.assert_array_equal(outs[0], outs[1])
    x = tilec.bf16_to_f32(xb).astype(np.float64)
    m = x.max(1)
    ref = m + np.log(np.exp(x - m[:, None]).sum(1)) - x[np.arange(R), np.clip(t, 0, V - 1)]
    ref[R // 2] = 0.0
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)


def test_require_refuses_before_any_program_runs():
    """require(C <= BC, "...") (docs/language.md "Launch-time checks"): a row kernel written for one
    tile a row refuses C > BC with a TilecError naming the kernel, the condition with its values and
    the message, at the require's place; nothing is written.  -D BC=2048 makes the same C fit."""
    src = os.path.join(EXAMPLES, "softmax.tile")
    k = tilec.compile(src)["softmax"]
    x = rng.standard_normal((3, 2000), dtype=np.float32)
    y = np.full((3, 2000), np.nan, np.float32)
    with pytest.raises(tilec.TilecError, match=r"softmax\.tile:8:5: error: require failed in kernel 'softmax': "
                       r"C <= BC \(C = 2000, BC = 1024\): \"one tile covers a row") as ei:
        tilec.interpret(k, x, y)
    assert ei.value.status == "TILEC_ERROR_LAUNCH"
    assert "    require(C <= BC," in str(ei.value)
    # the failure as a diagnostic too (launch-time text, parsed), as a compile error's .diagnostics[0] is read
    d = ei.value.diagnostics[0]
    assert (os.path.basename(d.file), d.line, d.column, d.severity) == ("softmax.tile", 8, 5, "error")
    assert d.message.startswith("require failed in kernel 'softmax'") and "^" in d.rendered
    assert np.isnan(y).all()
    k2 = tilec.compile(src, defines={"BC": 2048})["softmax"]
    tilec.interpret(k2, x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
