#!/usr/bin/env python3
"""bench/smallm_probe.py: the small-M forms of cutlass_gemm (passes/small_m.c, docs/small_m.md) one by
one at M = 64 / 128, beside cuBLAS, to find what bounds them (issue 10 item 6).

  python3 bench/smallm_probe.py [--sizes 64x4096x4096,...] [--forms LABEL=ENV;ENV|LABEL=...] [--once]

A form is a label and the environment it is loaded under (';'-separated NAME=VALUE pairs, e.g.
`s2=TILEC_SMALL_M_FORMS=256=64x64x64/cutlass/8/split` or `coop=TILEC_SMALL_M_FORMS=...;TILEC_WS=coop`;
`default=` the default table, `off=TILEC_SMALL_M=0`).  Every output is NaN-poisoned and checked against
torch's f32 product first (bf16: rel. err <= 1e-2).  Timing: CUDA-graph-free do_bench medians in
--rounds rounds, the order rotated, cuBLAS (a @ b) in each.  --once: one warm launch of each (for ncu).
Output: a table, GB/s of the weights (K x N x 2 bytes) and the ratio to cuBLAS in the same run.
"""
import argparse, os, sys, statistics

ap = argparse.ArgumentParser()
ap.add_argument("--sizes", default="64x4096x4096,128x4096x4096")
ap.add_argument("--forms", default="default=")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--once", action="store_true")
ap.add_argument("--examples", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
args = ap.parse_args()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch, tilec  # noqa: E402
from triton.testing import do_bench  # noqa: E402

forms = []
for item in args.forms.split("|"):
    label, _, envs = item.partition("=")
    forms.append((label, [e.split("=", 1) for e in envs.split(";") if e]))

kernels = {}
for label, envs in forms:
    old = {k: os.environ.get(k) for k, _ in envs}
    os.environ.update({k: v for k, v in envs})
    try:
        prog = tilec.compile(os.path.join(args.examples, "gemm.tile"))
        k = prog["cutlass_gemm"]
        k.load()
        kernels[label] = k
    except Exception as e:  # a form that does not load is a row that says so
        print(f"form {label}: FAILED to load: {str(e)[:400]}", flush=True)
    finally:
        for k_, v in old.items():
            if v is None: os.environ.pop(k_, None)
            else: os.environ[k_] = v

rows = []
for s in args.sizes.split(","):
    M, N, K = (int(x) for x in s.split("x"))
    torch.manual_seed(M * 7 + K)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) / K ** 0.5
    ref = a.float() @ b.float()
    fns, labels, errs = [lambda: a @ b], ["cuBLAS"], [0.0]
    for label, k in kernels.items():
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        k(a, b, c); torch.cuda.synchronize()
        err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        if not err <= 1e-2:
            print(f"FAIL {label} {s}: rel. err {err}", flush=True)
        fns.append((lambda k=k, c=c: k(a, b, c))); labels.append(label); errs.append(err)
    if args.once:
        for f in fns: f()
        torch.cuda.synchronize()
        continue
    times = [[] for _ in fns]
    for r in range(args.rounds):
        order = list(range(len(fns)))
        order = order[r % len(order):] + order[:r % len(order)]
        for i in order:
            times[i].append(do_bench(fns[i], warmup=25, rep=100))
    t_ref = statistics.median(times[0])
    wbytes = K * N * 2
    for lab, t, err in zip(labels, times, errs):
        tm = statistics.median(t)
        rows.append(f"| {s} | {lab} | {tm * 1e3:.1f} | {wbytes / tm / 1e6:.0f} | {t_ref / tm:.3f} | {err:.1e} |")
if rows:
    print("| MxNxK | form | us | GB/s (weights) | x cuBLAS | rel. err |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
