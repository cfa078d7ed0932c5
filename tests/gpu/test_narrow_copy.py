#!/usr/bin/env python3
"""test_narrow_copy.py: the cp.async ring's 8- and 4-byte copies (TILEC_NARROW_COPY=1,
lib/codegen/emit_narrow_copy.c, docs/pipelines.md "Narrow copies") on the GPU, against an fp64
reference, with the switch on and off (the element copy) in one process.

A bf16 A (and nn.Linear's W [N, K]) whose row pitch is 8- or 4-byte aligned, not 16, fails the
tensor-map test, so each launch runs the kernel's no-TMA form (compiled at the first such launch,
under the switch as set then: each mode's kernel is launched with its own setting).  The cases cross
the alignments: K = 4100 (rows of 8200 bytes: 8-byte copies), 4098 (8196: 4-byte), 4097 (8194: the
element copy with the switch on too), a view offset by 4 / 2 elements in a wider pitch (the base 8- /
4-byte aligned, the pitch 16- / 8-byte), K = 4097 / 4099 in rows of 8200 bytes (the last 8-byte piece
of a row partly inside: 2 / 6 bytes read, the rest zero-filled), K = 100 (one ragged k-step), an aligned control (K = 4096:
TMA), and N = 4098 (B [K, N]'s rows 4-byte aligned); M = 5, 61, 130, 300 (the 16-row multistage form,
the 64x64 and 64x128 wgmma forms, the 128x256 kernel).  Views live in NaN-poisoned storage (padding
and the gap before an offset view too), outputs are NaN-poisoned.
Tolerance (bf16 output of an f32 accumulation; GELU 2^-7): |C - ref| <= 2^-8 |ref| +
(K + 1) 2^-23 sum_k |a b| + 1e-6 elementwise.  Self-test: each result against the reference without
the last K column must fail (the K tail is summed, not dropped or read from the next row).

  python3 tests/gpu/test_narrow_copy.py [--lib build/libtilec.so] [--examples examples] [--quick]
Exit 0 pass, 1 fail, 77 no GPU / no torch.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_py import examples_dir, start  # noqa: E402

# (K, pitch of A / W in elements, offset of the view in elements, N): what each case exercises
CASES = [
    (4100, 4100, 0, 520),   # rows 8200 B: 8-byte copies
    (4098, 4098, 0, 520),   # rows 8196 B: 4-byte copies
    (4097, 4097, 0, 520),   # rows 8194 B: the element copy (on and off)
    (4100, 4104, 4, 520),   # pitch 8208 B (16-aligned), base + 8 B: 8-byte copies
    (4098, 4100, 2, 520),   # pitch 8200 B, base + 4 B: 4-byte copies
    (4097, 4100, 0, 520),   # pitch 8200 B, rows end inside an 8-byte piece (2 of its 8 bytes)
    (4099, 4100, 0, 520),   # the same, 6 of 8 bytes
    (100, 100, 0, 520),     # one ragged k-step of 200 B rows: 8-byte copies
    (4096, 4096, 0, 520),   # aligned: the TMA form (control)
    (4100, 4100, 0, 4098),  # B [K, N] rows of 8196 B too: A 8-byte, B 4-byte copies
]
MS = [5, 61, 130, 300]


def main():
    env = start("test_narrow_copy")
    if env is None:
        return 77
    torch, tilec = env
    quick = "--quick" in sys.argv
    gen = torch.Generator(device="cuda").manual_seed(int(os.environ.get("TILEC_SEED", "20261205")))
    print("test_narrow_copy: seed", gen.initial_seed())
    ex = examples_dir()
    kern = {}
    for name, file, kname in (("gemm", "gemm.tile", "cutlass_gemm"),
                              ("linear_gelu", "gemm_bias_gelu.tile", "cutlass_linear_bias_gelu")):
        for mode in ("on", "off"):
            k = tilec.compile(os.path.join(ex, file))[kname]
            with switch(mode):
                k.load()
            kern[(name, mode)] = k

    def view(rows, cols, pitch, off):
        """rows x cols bf16 in NaN-poisoned storage: row pitch `pitch`, `off` elements in."""
        st = torch.full((off + rows * pitch,), float("nan"), dtype=torch.bfloat16, device="cuda")
        v = st[off:].as_strided((rows, cols), (pitch, 1))
        v.copy_((torch.rand(rows, cols, generator=gen, device="cuda") * 2 - 1).to(torch.bfloat16))
        return v

    def gelu64(x):
        return x / (1 + torch.exp(-1.5957691216 * (x + 0.044715 * x ** 3)))

    fails = runs = 0
    for K, pitch, off, N in CASES:
        for M in (MS if not quick else [61, 300]):
            a = view(M, K, pitch, off)
            b = view(K, N, N, 0)
            w = view(N, K, pitch, off)
            bias = view(1, N, N, 0)[0]
            for name in ("gemm", "linear_gelu"):
                if name == "gemm":
                    ref = a.double() @ b.double()
                    mag = a.double().abs() @ b.double().abs()
                    short = a[:, :-1].double() @ b[:-1, :].double()
                    args, rel = [a, b], 2 ** -8
                else:
                    ref = gelu64(a.double() @ w.double().t() + bias.double())
                    mag = a.double().abs() @ w.double().abs().t() + bias.double().abs()
                    short = gelu64(a[:, :-1].double() @ w[:, :-1].double().t() + bias.double())
                    args, rel = [a, w, bias], 2 ** -7
                tol = rel * ref.abs() + (K + 1) * 2.0 ** -23 * mag + 1e-6

                def within(got, want):
                    d = (got.double() - want).abs()
                    return bool(torch.isfinite(got.double()).all()) and bool((d <= tol).all()), float(d.max())

                for mode in ("on", "off"):
                    c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                    with switch(mode):  # (the first launch that needs it compiles the no-TMA form)
                        kern[(name, mode)](*args, c)
                    torch.cuda.synchronize()
                    ok, err = within(c, ref)
                    caught = not within(c, short)[0]
                    good = ok and caught
                    fails += not good
                    runs += 1
                    if not good or M == 61:
                        print("%s %s %s M=%d N=%d K=%d pitch=%d offset=%d: max err %.2e; K tail caught: %s"
                              % ("ok" if good else "FAIL", name, mode, M, N, K, pitch, off, err, caught), flush=True)
    print("test_narrow_copy: %d runs, %s" % (runs, "PASS" if not fails else "%d FAILED" % fails))
    return 1 if fails else 0


class switch:
    """TILEC_NARROW_COPY=1 (mode "on") or unset while the block runs."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self.old = os.environ.get("TILEC_NARROW_COPY")
        if self.mode == "on":
            os.environ["TILEC_NARROW_COPY"] = "1"
        else:
            os.environ.pop("TILEC_NARROW_COPY", None)

    def __exit__(self, *exc):
        if self.old is None:
            os.environ.pop("TILEC_NARROW_COPY", None)
        else:
            os.environ["TILEC_NARROW_COPY"] = self.old


if __name__ == "__main__":
    sys.exit(main())
