"""Compile-side API without a GPU: errors with diagnostics, texts, kernels and parameters, explain,
options, AOT emission."""
import os

import pytest

import tilec
from conftest import EXAMPLES

BAD = "kernel k(X: tensor<f32>[N])\n    tiles(B = 128) grid(cdiv(N, B))\n{\n    y = foo(1);\n}\n"


def test_error_carries_diagnostics():
    with pytest.raises(tilec.TilecError) as ei:
        tilec.compile(BAD, name="bad.tile")
    e = ei.value
    assert e.status == "TILEC_ERROR_INPUT"
    errs = [d for d in e.diagnostics if d.severity == "error"]
    assert errs, e.diagnostics
    d = errs[0]
    assert (d.file, d.line, d.column) == ("bad.tile", 4, 9)
    assert "foo" in d.message
    assert d.rendered.startswith("bad.tile:4:9: error:")
    assert "    y = foo(1);" in d.rendered and "^" in d.rendered  # source line and caret
    assert "bad.tile:4:9" in str(e)


FP8_DOT = """
kernel f8(A: tensor<f8e4m3>[M, K], B: tensor<f8e4m3>[K, N], C: tensor<f32>[M, N])
    tiles(BM = 16, BN = 16, BK = 32)
    grid(cdiv(M, BM), cdiv(N, BN))
{
    m0 = program_id(0) * BM;
    n0 = program_id(1) * BN;
    store(C[m0 : m0 + BM, n0 : n0 + BN], dot(load(A[m0 : m0 + BM, 0 : BK]), load(B[0 : BK, n0 : n0 + BN])));
}
"""


def test_failed_codegen_keeps_the_interpreter_and_repeats_its_error():
    """A code generation that fails (an fp8 dot for sm_80) leaves the IR usable: interpret() still runs (a
    new user's hunt, thirty-ninth session: it raised a bare TILEC_ERROR_UNSUPPORTED with no diagnostics),
    and each later .ptx gives the error again, not only the first."""
    np = pytest.importorskip("numpy")
    p = tilec.compile(FP8_DOT, arch="sm_80")
    rng = np.random.default_rng(1)
    a = rng.integers(0x30, 0x40, (16, 32)).astype(np.uint8)  # e4m3 codes 0.5 .. 1.875: finite, nonzero
    b = rng.integers(0x30, 0x40, (32, 16)).astype(np.uint8)
    for attempt in range(2):
        with pytest.raises(tilec.TilecError) as ei:
            p.ptx
        assert ei.value.status == "TILEC_ERROR_UNSUPPORTED"
        assert any("needs sm_89" in d.message for d in ei.value.diagnostics), (attempt, ei.value.diagnostics)
        c = np.full((16, 16), np.nan, np.float32)
        tilec.interpret(p["f8"], a, b, c)
        assert np.isfinite(c).all() and (c > 0).all()


def test_missing_file():
    with pytest.raises(tilec.TilecError, match="cannot read"):
        tilec.compile("/nonexistent/x.tile")
    # a path without the .tile extension is a path too (docs/python.md: only a newline or '{' makes source text)
    with pytest.raises(tilec.TilecError, match="cannot read kernels/my_norm"):
        tilec.compile("kernels/my_norm")


def test_unknown_define_is_an_error():
    with pytest.raises(tilec.TilecError):
        tilec.compile(os.path.join(EXAMPLES, "softmax.tile"), defines={"NOPE": 3})


ARCH_SRC = ("kernel k(X: tensor<f32>[N])\n    tiles(B = ARCH_SPECIFIC == 90 ? 256 : 128, A = ARCH) grid(cdiv(N, B))\n"
            "{\n    i = program_id(0) * B;\n    store(X[i : i + B], load(X[i : i + B]) * 2.0);\n}\n")


def test_arch_constants_follow_the_arch_option():
    """ARCH / ARCH_SPECIFIC are the program's target's (docs/language.md 5.1); -D replaces them."""
    assert "tiles(B = 128, A = 89)" in tilec.compile(ARCH_SRC, arch="sm_89").ir
    assert "tiles(B = 128, A = 90)" in tilec.compile(ARCH_SRC, arch="sm_90").ir
    assert "tiles(B = 256, A = 90)" in tilec.compile(ARCH_SRC, arch="sm_90a").ir
    assert "tiles(B = 128, A = 90)" in tilec.compile(ARCH_SRC, {"ARCH_SPECIFIC": 0}, arch="sm_90a").ir
    with pytest.raises(tilec.TilecError, match="predefined constant"):
        tilec.compile(ARCH_SRC.replace("A = ARCH", "ARCH = 1"), arch="sm_90a")


def test_bad_option():
    with pytest.raises(tilec.TilecError, match="option arch"):
        tilec.compile(os.path.join(EXAMPLES, "softmax.tile"), arch="sm_1")


def test_kernels_params_texts():
    p = tilec.compile(os.path.join(EXAMPLES, "attn.tile"), arch="sm_90a")
    assert p.kernel_names == ["attn_fwd", "cutlass_attn_fwd"]
    k = p["attn_fwd"]
    assert [q.name for q in k.params] == ["Q", "K", "V", "O", "scale"]
    assert k.params[0].dims == ("Z", "H", "S", 64)
    assert k.params[3].written and not k.params[0].written
    assert not k.params[4].is_tensor and k.params[4].dtype == "f32"
    assert ".entry attn_fwd(" in p.ptx and ".target sm_90a" in p.ptx
    assert "kernel @attn_fwd" in p.ir
    assert "nvptx" in p.llvm.lower()
    with pytest.raises(KeyError, match="kernels: attn_fwd, cutlass_attn_fwd"):
        p["nope"]


def test_options_reach_the_compiler():
    p = tilec.compile(os.path.join(EXAMPLES, "gemm.tile"), arch="sm_80", warps=4, line_info=False)
    assert ".target sm_80" in p.ptx
    assert ".loc" not in p.ptx
    assert "warps = 4" in p.ir


def test_explain():
    text = tilec.compile(os.path.join(EXAMPLES, "gemm.tile"), arch="sm_90a").explain()
    assert "route_pipeline" in text and "cutlass_gemm" in text


def test_ws_option():
    # the option ws picks a wgmma GEMM's schedule per program (TILEC_WS for the process); a bad value is refused
    fp8 = os.path.join(EXAMPLES, "gemm_fp8.tile")
    pp = tilec.compile(fp8, {"BN": 128}, arch="sm_90a", kernel="cutlass_gemm_fp8_tn", warps=4, stages=4,
                       fp8_acc="fast", ws="pingpong")
    assert "ws=pingpong (option ws=pingpong" in pp.explain()
    off = tilec.compile(fp8, arch="sm_90a", kernel="cutlass_gemm_fp8_tn", fp8_acc="fast", ws="off")
    assert "ws=off (option ws=off" in off.explain() and off.ptx != pp.ptx
    with pytest.raises(tilec.TilecError):
        tilec.compile(fp8, arch="sm_90a", ws="ring")


def test_emit_c():
    h, c = tilec.compile(os.path.join(EXAMPLES, "rmsnorm.tile"), arch="sm_90a").emit_c("rms")
    assert "int rms_rmsnorm(const void *X, const int64_t *X_shape" in h
    assert "float eps, void *stream)" in h
    assert '#include "rms.h"' in c and "cuLaunchKernel" in c
    with pytest.raises(tilec.TilecError):
        tilec.compile(os.path.join(EXAMPLES, "rmsnorm.tile")).emit_c("not an identifier")
    # a parameter whose name the C launcher cannot take is refused with the reason
    src = """kernel k(X: tensor<f32>[N], stream: f32) tiles(B = 64) grid(cdiv(N, B)) {
        i = program_id(0) * B;
        store(X[i : i + B], load(X[i : i + B]) * stream);
    }"""
    with pytest.raises(tilec.TilecError, match="parameter 'stream'"):
        tilec.compile(src).emit_c("k")


def test_emit_c_two_images(monkeypatch):
    # a TMA kernel's launcher embeds its TMA form and its no-TMA form (docs/aot.md "Two images"), also
    # after the program was compiled; tma_fallback="inline" keeps one image
    monkeypatch.setenv("TILEC_PTXAS", "/nonexistent/ptxas")  # (PTX only: quicker)
    gemm = os.path.join(EXAMPLES, "gemm.tile")
    p = tilec.compile(gemm, arch="sm_90a")
    h, c = p.emit_c("g")
    assert "#define g_NNOTMA 1\n" in c and "g_notma_function(0, &tl_fn, &tl_ctas)" in c
    assert "runs its no-TMA image" in h and "int g_load_all(void);" in h
    h, c = tilec.compile(gemm, arch="sm_90a", tma_fallback="inline").emit_c("g")
    assert "#define g_NNOTMA 0\n" in c and "g_tma_fits(A," not in c


def test_ptx_two_entries():
    # tma_fallback="entry" (the CLI's default for .ptx / .cubin, docs/cli.md "Two entries"): the TMA form's
    # entry, then its no-TMA form as KERNEL__notma with the same parameters; "form" the first alone
    gemm = os.path.join(EXAMPLES, "gemm.tile")
    two = tilec.compile(gemm, arch="sm_90a", tma_fallback="entry").ptx
    one = tilec.compile(gemm, arch="sm_90a").ptx
    assert ".entry cutlass_gemm(" in two and ".entry cutlass_gemm__notma(" in two
    assert ".b8 cutlass_gemm__notma_param_17[128]" in two and "// tilec: no-TMA entry of cutlass_gemm:" in two
    assert "__notma" not in one and two.index(".entry cutlass_gemm__notma(") > two.index(".entry cutlass_gemm(")
    nt = tilec.compile(gemm, arch="sm_90a", tma_fallback="notma").ptx
    assert "tilec: TMA form" not in nt and "cp.async.bulk.tensor" not in nt


def test_library_found():
    assert os.path.exists(tilec.library_path) or tilec.library_path.startswith("libtilec")
    assert tilec.version().startswith("tilec ")
