#!/usr/bin/env python3
"""bench/gqa_probe.py: examples/llama/attn_gqa.tile (causal GQA attention, 32 query heads on 8 KV
heads, D = 128) at its tile choices, beside cuDNN / FA2 SDPA on the same GQA shapes (issue 11):
BN 64 on two programs an SM (attn.tile's D128 default since the tenth session) against BN 128.

  python3 bench/gqa_probe.py [--seqs 2048,4096] [--batch 1] [--bns 64,128] [--rounds 3]

Every output is NaN-poisoned and checked against torch's f32 SDPA (K and V repeated per group)
before timing; medians of do_bench in --rounds rotated rounds, the references in each round.
"""
import argparse, os, statistics, sys

ap = argparse.ArgumentParser()
ap.add_argument("--seqs", default="2048,4096")
ap.add_argument("--batch", type=int, default=1)
ap.add_argument("--bns", default="64,128")
ap.add_argument("--rounds", type=int, default=3)
args = ap.parse_args()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch, tilec  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import sdpa_kernel, SDPBackend  # noqa: E402
from triton.testing import do_bench  # noqa: E402

H, HKV, D = 32, 8, 128
src = os.path.join(HERE, "..", "examples", "llama", "attn_gqa.tile")
kern = {bn: tilec.compile(src, defines={"BN": bn})["cutlass_attn_gqa"] for bn in (int(b) for b in args.bns.split(","))}
print("| S | form | ms | TFLOP/s | x cuDNN | x FA2 | rel.err |\n|---|---|---|---|---|---|---|")
for S in (int(s) for s in args.seqs.split(",")):
    Z = args.batch
    q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    kr, vr = k.repeat_interleave(H // HKV, 1), v.repeat_interleave(H // HKV, 1)
    ref = F.scaled_dot_product_attention(q.float(), kr.float(), vr.float(), is_causal=True)
    fl = 4 * Z * H * S * S * D / 2
    fs, names, errs = [], [], {}
    for nm, be in (("cuDNN", SDPBackend.CUDNN_ATTENTION), ("FA2", SDPBackend.FLASH_ATTENTION)):
        def f(be=be):
            with sdpa_kernel(be):
                return F.scaled_dot_product_attention(q, kr, vr, is_causal=True)
        f(); fs.append(f); names.append(nm)
    for bn, kk in kern.items():
        o = torch.full_like(q, float("nan"))
        f = lambda kk=kk, o=o: kk(q, k, v, o, D ** -0.5)
        f(); torch.cuda.synchronize()
        errs[f"BN{bn}"] = ((o.float() - ref).norm() / ref.norm()).item()
        fs.append(f); names.append(f"BN{bn}")
    times = {n: [] for n in names}
    for r in range(args.rounds):
        order = list(range(len(fs)))
        order = order[r % len(order):] + order[:r % len(order)]
        for i in order:
            times[names[i]].append(do_bench(fs[i], warmup=25, rep=100))
    med = {n: statistics.median(t) for n, t in times.items()}
    for n in names[2:]:
        print(f"| {S} | {n} | {med[n]:.3f} | {fl / med[n] / 1e9:.1f} | {med['cuDNN'] / med[n]:.3f} | "
              f"{med['FA2'] / med[n]:.3f} | {errs[n]:.1e} |", flush=True)
