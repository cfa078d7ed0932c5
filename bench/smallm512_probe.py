#!/usr/bin/env python3
"""bench/smallm512_probe.py: the small-M waves form (lib/small_m_waves.c, docs/small_m.md "Waves") on the GPU:
a GEMM kernel's own 128x256 tile or a 128x128 form, picked at each launch by a wave model from M, N and the
SM count (TILEC_SMALL_M_WAVES=1), beside the choice before it (=0: the kernel above M 256) and the form
forced for every M <= 2048 (a table row "2048=128x128x64/cutlass/4": what the model turned down).

1. Correctness first, with the switch on: cutlass_gemm (B [K, N]), cutlass_linear (nn.Linear's W [N, K]),
   cutlass_linear_bias_gelu and llama's cutlass_gemm_residual at ragged M around the boundary (383, 511, 513,
   769; N 4096 and a ragged 4000; K 1000 and 264) and the forced form at M 1151 (three waves of its tiles):
   every output NaN-poisoned, against an fp64 reference of the bf16 inputs (|C - ref| <= 2^-8 |ref| + (K + 1)
   2^-23 sum |a b| + 1e-6; GELU 2^-7), a reference without the last K column must fail; and the program log's
   note for the launch says the pick a Python copy of the model makes for this device's SM count.
2. Timing: cuBLAS (a @ b, F.linear), on, off, forced, in --rounds rounds (order rotated), do_bench medians;
   each output checked against torch's f32 product first (rel. err <= 1e-2).
The last lines are a table (us, x cuBLAS = cuBLAS us / us, on / off, the pick and the model's ratio).

  python3 bench/smallm512_probe.py [--lib build/libtilec.so] [--examples examples] [--rounds 3] [--quick]
Exit 0 (correct), 1 (a check failed), 77 (no torch / no GPU).
"""
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from gpu_py import arg, examples_dir, start  # noqa: E402

TABLE = "16=16x32x256/multistage/5,128=64x64x128/cutlass/6,256=64x128x128/cutlass/4"
VARIANTS = {"on": {"TILEC_SMALL_M_WAVES": "1"},
            "off": {"TILEC_SMALL_M_WAVES": "0"},
            "forced": {"TILEC_SMALL_M_WAVES": "0", "TILEC_SMALL_M_FORMS": TABLE + ",2048=128x128x64/cutlass/4"}}
LINEAR = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "variants", "linear_plain.tile")).read()


def cdiv(a, b):
    return (a + b - 1) // b


def model(m, n, sms):
    """lib/small_m_waves.c in Python: (pick, ratio) for the 128x256 kernel against the 128x128 form."""
    cost = lambda bm, bn: bm * bn + 128 * (bm + bn)  # noqa: E731
    wk, wf = cdiv(cdiv(m, 128) * cdiv(n, 256), sms), cdiv(cdiv(m, 128) * cdiv(n, 128), sms)
    f = cost(128, 256) / 4
    r = (f + wf * cost(128, 128)) / (f + wk * cost(128, 256))
    return r <= 0.85, r


def main():
    env = start("smallm512_probe")
    if env is None:
        return 77
    torch, tilec = env
    F = torch.nn.functional
    rounds = int(arg("--rounds", "3"))
    quick = "--quick" in sys.argv
    ex = examples_dir()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"smallm512_probe: {torch.cuda.get_device_name(0)}, {sms} SMs", flush=True)
    sources = {"gemm": (os.path.join(ex, "gemm.tile"), "cutlass_gemm"),
               "linear": (LINEAR, "cutlass_linear"),
               "gelu": (os.path.join(ex, "gemm_bias_gelu.tile"), "cutlass_linear_bias_gelu"),
               "residual": (os.path.join(ex, "llama", "gemm_residual.tile"), "cutlass_gemm_residual")}
    kernels, progs = {}, {}

    def load(what, variant):
        key = (what, variant)
        if key not in kernels:
            old = {k: os.environ.get(k) for k in ("TILEC_SMALL_M_WAVES", "TILEC_SMALL_M_FORMS")}
            for k in old:
                os.environ.pop(k, None)
            os.environ.update(VARIANTS[variant])
            try:  # the switches are read where the passes run: the compile and the load
                src, kname = sources[what]
                prog = tilec.compile(src)
                k = prog[kname]
                k.load()
            finally:
                for k_, v in old.items():
                    if v is None:
                        os.environ.pop(k_, None)
                    else:
                        os.environ[k_] = v
            kernels[key], progs[key] = k, prog
        return kernels[key], progs[key]

    fails = 0
    gen = torch.Generator(device="cpu").manual_seed(int(os.environ.get("TILEC_SEED", "20261205")))

    def rnd(*shape):
        return (torch.rand(*shape, generator=gen) * 2 - 1).to(torch.bfloat16).cuda()

    def gelu64(x):
        return x / (1 + torch.exp(-1.5957691216 * (x + 0.044715 * x ** 3)))

    # ---- 1. correctness ----
    checks = [("gemm", "on", 383, 4096, 1000), ("gemm", "on", 511, 4000, 1000), ("gemm", "on", 513, 4096, 1000),
              ("gemm", "on", 769, 4096, 1000), ("gemm", "forced", 1151, 4096, 264), ("gemm", "forced", 769, 4000, 264),
              ("linear", "on", 511, 4000, 1000), ("linear", "on", 769, 4096, 264),
              ("gelu", "on", 383, 4096, 1000), ("gelu", "on", 511, 4000, 264), ("gelu", "on", 769, 4096, 264),
              ("residual", "on", 511, 4000, 1000), ("residual", "on", 513, 4096, 264)]
    for what, variant, M, N, K in checks:
        k, prog = load(what, variant)
        a = rnd(M, K)
        if what in ("gemm", "residual"):
            b = rnd(K, N)
            ref, mag = a.double() @ b.double(), a.double().abs() @ b.double().abs()
            short = a[:, :-1].double() @ b[:-1, :].double()
            args = [a, b]
            if what == "residual":
                r = rnd(M, N)
                ref, mag, short = ref + r.double(), mag + r.double().abs(), short + r.double()
                args.append(r)
        else:
            w = rnd(N, K)
            x = a.double() @ w.double().t()
            mag = a.double().abs() @ w.double().abs().t()
            xs = a[:, :-1].double() @ w[:, :-1].double().t()
            args = [a, w]
            if what == "gelu":
                bias = rnd(N)
                x, xs, mag = x + bias.double(), xs + bias.double(), mag + bias.double().abs()
                args.append(bias)
            ref, short = (gelu64(x), gelu64(xs)) if what == "gelu" else (x, xs)
        tol = (2 ** -7 if what == "gelu" else 2 ** -8) * ref.abs() + (K + 1) * 2.0 ** -23 * mag + 1e-6
        c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
        mark = len(prog.log)
        k(*args, c)
        torch.cuda.synchronize()
        d = (c.double() - ref).abs()
        ok = bool(torch.isfinite(c.double()).all()) and bool((d <= tol).all())
        caught = not bool(((c.double() - short).abs() <= tol).all())
        note = ""
        if variant == "on":
            notes = re.findall(r"M %d, N %d on (\d+) SMs: .*?: the (form|kernel) runs it" % (M, N), prog.log[mark:])
            want = "form" if model(M, N, sms)[0] else "kernel"
            note = notes[-1][1] if notes else "no note"
            ok_note = bool(notes) and notes[-1] == (str(sms), want)
        else:
            ok_note = True
        good = ok and caught and ok_note
        fails += not good
        print("%s %s %s M=%d N=%d K=%d: max err %.2e (tol ok %s), K tail caught %s, ran %s (model: %s)" % (
            "ok" if good else "FAIL", what, variant, M, N, K, float(d.max()), ok, caught, note or "the form (forced)",
            "form" if model(M, N, sms)[0] else "kernel"), flush=True)
    print("correctness: %s" % ("PASS" if not fails else "%d FAILED" % fails), flush=True)

    # ---- 2. timing ----
    from triton.testing import do_bench
    shapes = [("gemm", 384, 4096, 4096), ("gemm", 512, 4096, 4096), ("gemm", 768, 4096, 4096),
              ("gemm", 1024, 4096, 4096), ("gemm", 1152, 4096, 4096), ("gemm", 512, 14336, 4096),
              ("gemm", 512, 4096, 14336), ("linear", 512, 4096, 4096), ("linear", 1024, 4096, 4096)]
    if quick:
        shapes = [s for s in shapes if s[1] in (512, 1024) and s[2] == 4096 and s[3] == 4096]
    rows = []
    for what, M, N, K in shapes:
        torch.manual_seed(M + N + K)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) / K ** 0.5
        w = b.t().contiguous()
        ref = a.float() @ b.float()
        fns = [(lambda: a @ b) if what == "gemm" else (lambda: F.linear(a, w))]
        for variant in VARIANTS:
            k, _ = load(what, variant)
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            bw = b if what == "gemm" else w
            k(a, bw, c)
            torch.cuda.synchronize()
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            if not err <= 1e-2:
                print(f"FAIL {what} {variant} {M}x{N}x{K}: rel. err {err}", flush=True)
                fails += 1
            fns.append(lambda k=k, c=c, bw=bw: k(a, bw, c))
        times = [[] for _ in fns]
        for r in range(rounds):
            order = list(range(len(fns)))
            order = order[r % len(order):] + order[:r % len(order)]
            for i in order:
                times[i].append(do_bench(fns[i], warmup=25, rep=100))
        t = [statistics.median(x) * 1e3 for x in times]
        pick, ratio = model(M, N, sms)
        line = (f"smallm512 {what} {M}x{N}x{K}: cuBLAS {t[0]:.1f} us; on {t[1]:.1f} ({t[0] / t[1]:.3f}x); off {t[2]:.1f} "
                f"({t[0] / t[2]:.3f}x); forced {t[3]:.1f} ({t[0] / t[3]:.3f}x); on/off {t[2] / t[1]:.3f}, forced/off "
                f"{t[2] / t[3]:.3f}; pick {'form' if pick else 'kernel'} (model {ratio:.2f})")
        print(line, flush=True)
        rows.append((what, f"{M}x{N}x{K}", t, "form" if pick else "kernel", ratio))
    print("| op | MxNxK | cuBLAS us | on us (x cuB) | off us (x cuB) | forced 128x128 us (x cuB) | on/off | forced/off | pick (model) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for what, s, t, pick, ratio in rows:
        print(f"| {what} | {s} | {t[0]:.1f} | {t[1]:.1f} ({t[0] / t[1]:.3f}) | {t[2]:.1f} ({t[0] / t[2]:.3f}) | "
              f"{t[3]:.1f} ({t[0] / t[3]:.3f}) | {t[2] / t[1]:.3f} | {t[2] / t[3]:.3f} | {pick} ({ratio:.2f}) |")
    print("smallm512_probe: %s" % ("PASS" if not fails else "%d FAILED" % fails), flush=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
