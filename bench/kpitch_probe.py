#!/usr/bin/env python3
"""bench/kpitch_probe.py: a bf16 GEMM whose K makes A's row pitch not 16-byte aligned (K = 4100: rows
of 8200 bytes) beside cuBLAS, with the cp.async ring's 8- / 4-byte copies on (TILEC_NARROW_COPY=1)
and off (the element copy, the default), and the alternative of docs/pipelines.md "Narrow copies":
A copied into a buffer of 16-byte aligned pitch first (a view [M, K] of [M, K + pad]), then the TMA
kernel (rows "pad: gemm" alone and "pad: copy + gemm"), and that copy made by the launcher
(TILEC_PITCH_REPACK=1, lib/api/pitch_repack.c: row "repack on", a copy into stream-ordered memory
at every launch, timed with it).

  python3 bench/kpitch_probe.py [--sizes 61x4000x4100,...] [--rounds 3] [--modes off,on,repack,pad]

Every output is NaN-poisoned and checked against torch's f32 product first (rel. err <= 1e-2).
Timing: do_bench medians in --rounds rounds, the order rotated, cuBLAS (a @ b) in each.  The no-TMA
form is compiled at the first launch that needs it, under the switch as set then: each mode's first
launch runs with its own setting.
"""
import argparse, os, statistics, sys

ap = argparse.ArgumentParser()
ap.add_argument("--sizes", default="61x4000x4100,128x4096x4100,4096x4096x4100")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--modes", default="off,on,pad", help="off / on: TILEC_NARROW_COPY; repack: TILEC_PITCH_REPACK=1; pad")
ap.add_argument("--examples", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
args = ap.parse_args()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch, tilec  # noqa: E402
from triton.testing import do_bench  # noqa: E402


SWITCH = {"off": None, "on": "TILEC_NARROW_COPY", "repack": "TILEC_PITCH_REPACK"}
LABEL = {"off": "narrow off", "on": "narrow on", "repack": "repack on"}
modes = args.modes.split(",")


def with_switch(mode, fn):
    """fn() with the mode's switch (if any) set to 1 and the others unset."""
    saved = {v: os.environ.get(v) for v in ("TILEC_NARROW_COPY", "TILEC_PITCH_REPACK")}
    for v in saved: os.environ.pop(v, None)
    if SWITCH[mode]: os.environ[SWITCH[mode]] = "1"
    try:
        return fn()
    finally:
        for v, old in saved.items():
            if old is None: os.environ.pop(v, None)
            else: os.environ[v] = old


kern = {}
for mode in ["off"] + [m for m in modes if m in ("on", "repack")]:
    k = tilec.compile(os.path.join(args.examples, "gemm.tile"))["cutlass_gemm"]
    with_switch(mode, k.load)
    kern[mode] = k

rows = []
for s in args.sizes.split(","):
    M, N, K = (int(x) for x in s.split("x"))
    torch.manual_seed(M * 7 + K)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) / K ** 0.5
    kp = (K + 7) // 8 * 8  # a pitch of 16-byte multiples
    a_pad = torch.zeros(M, kp, device="cuda", dtype=torch.bfloat16)
    a_view = a_pad[:, :K]
    a_view.copy_(a)
    ref = a.float() @ b.float()
    fns, labels, errs = [lambda: a @ b], ["cuBLAS"], [0.0]
    for mode in [m for m in modes if m in SWITCH]:
        k = kern[mode]
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        with_switch(mode, lambda: k(a, b, c)); torch.cuda.synchronize()
        err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        if not err <= 1e-2: print(f"FAIL {LABEL[mode]} {s}: rel. err {err}", flush=True)
        fns.append(lambda k=k, c=c: k(a, b, c)); labels.append(LABEL[mode]); errs.append(err)
    if "pad" in modes:
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        kern["off"](a_view, b, c); torch.cuda.synchronize()
        err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        if not err <= 1e-2: print(f"FAIL pad {s}: rel. err {err}", flush=True)
        fns.append(lambda c=c: kern["off"](a_view, b, c)); labels.append("pad: gemm"); errs.append(err)
        fns.append(lambda c=c: (a_view.copy_(a), kern["off"](a_view, b, c))); labels.append("pad: copy + gemm"); errs.append(err)
    times = [[] for _ in fns]
    for r in range(args.rounds):
        order = list(range(len(fns)))
        order = order[r % len(order):] + order[:r % len(order)]
        for i in order:
            times[i].append(do_bench(fns[i], warmup=10, rep=60))
    t_ref = statistics.median(times[0])
    for lab, t, err in zip(labels, times, errs):
        tm = statistics.median(t)
        rows.append(f"| {s} | {lab} | {tm * 1e3:.1f} | {2 * M * N * K / tm / 1e9:.0f} | {t_ref / tm:.3f} | {err:.1e} |")
print("| MxNxK | form | us | TFLOP/s | x cuBLAS | rel. err |")
print("|---|---|---|---|---|---|")
print("\n".join(rows))
