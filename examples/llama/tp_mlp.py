#!/usr/bin/env python3
"""tp_mlp.py: the Llama-3-70B MLP, tensor-parallel over the GPUs of one host, with tilec kernels for the
GEMMs and SwiGLU and an NCCL all-reduce (torch.distributed, one process a GPU), checked against the
one-GPU PyTorch MLP and timed beside PyTorch's own tensor-parallel MLP with the same sharding.

    gate/up: column-parallel (rank r holds columns r*F/P .. (r+1)*F/P of W_gate and of W_up)
    down:    row-parallel    (rank r holds the same rows of W_down); partial outputs all-reduced
    y = all_reduce( swiglu(x @ W_gu[r]) @ W_d[r] )      x [T, 8192], F = 28672

    python3 -m torch.distributed.run --nproc_per_node=P examples/llama/tp_mlp.py [--tokens 4096]
    (P = 1 runs the same code on one GPU: a check of the code path, no communication)

Leave NVLink multicast off (NCCL_NVLS_ENABLE=0; the lent machines set it).  Rank 0 prints a table:
the step time of tilec TP and of PyTorch TP, tokens/s, and the error against the one-GPU MLP in
float32.  Exit 0 when the error is within 2x PyTorch TP's (and < 3e-2); 77 without GPUs.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

ap = argparse.ArgumentParser()
ap.add_argument("--tokens", type=int, default=4096)
ap.add_argument("--dim", type=int, default=8192)
ap.add_argument("--ffn", type=int, default=28672)
args = ap.parse_args()
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("tp_mlp: no torch: skipped")
    sys.exit(77)
if not torch.cuda.is_available():
    print("tp_mlp: no GPU: skipped")
    sys.exit(77)
import tilec  # noqa: E402
from triton.testing import do_bench  # noqa: E402

rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
local = int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local)
if "MASTER_ADDR" not in os.environ:  # run without a launcher: one process
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
T, DIM, FF = args.tokens, args.dim, args.ffn
assert FF % world == 0, "the FFN width must split evenly over the ranks"
F = FF // world
dev, bf = torch.device("cuda", local), torch.bfloat16

# The same full weights on every rank (seeded), each rank keeps its shard.
g = torch.Generator(device=dev).manual_seed(0)
x = torch.randn(T, DIM, device=dev, generator=g).to(bf)
w_gate = (torch.randn(DIM, FF, device=dev, generator=g) / DIM ** 0.5).to(bf)
w_up = (torch.randn(DIM, FF, device=dev, generator=g) / DIM ** 0.5).to(bf)
w_down = (torch.randn(FF, DIM, device=dev, generator=g) / FF ** 0.5).to(bf)
cols = slice(rank * F, (rank + 1) * F)
w_gu_r = torch.cat([w_gate[:, cols], w_up[:, cols]], 1).contiguous()   # [DIM, 2F]: gate | up
w_d_r = w_down[cols].contiguous()                                     # [F, DIM]

gemm = tilec.compile(os.path.join(ROOT, "examples", "gemm.tile"))["cutlass_gemm"]
swiglu = tilec.compile(os.path.join(ROOT, "examples", "swiglu.tile"))["swiglu"]
gu = torch.empty(T, 2 * F, device=dev, dtype=bf)
a = torch.empty(T, F, device=dev, dtype=bf)
y = torch.empty(T, DIM, device=dev, dtype=bf)


def mlp_tilec():
    gemm(x, w_gu_r, gu)
    swiglu(gu[:, :F], gu[:, F:], a)
    gemm(a, w_d_r, y)
    dist.all_reduce(y)
    return y


def mlp_torch_tp():
    h = x @ w_gu_r
    p = (torch.nn.functional.silu(h[:, :F].float()) * h[:, F:].float()).to(bf) @ w_d_r
    dist.all_reduce(p)
    return p


with torch.no_grad():
    ref = ((torch.nn.functional.silu(x.float() @ w_gate.float()) * (x.float() @ w_up.float())) @ w_down.float())
    del w_gate, w_up, w_down
    y_t = mlp_tilec().clone()
    y_p = mlp_torch_tp()
    err = lambda z: float((z.float() - ref).norm() / ref.norm())
    e_t, e_p = err(y_t), err(y_p)
    ms_t = do_bench(mlp_tilec, warmup=10, rep=100, return_mode="median")
    ms_p = do_bench(mlp_torch_tp, warmup=10, rep=100, return_mode="median")
    ok = e_t < 3e-2 and e_t <= 2 * e_p + 1e-3
    if rank == 0:
        print(f"tp_mlp: {world} GPU(s), T={T}, dim {DIM}, ffn {FF} ({F} a rank); rel. error vs float32 one-GPU: "
              f"tilec {e_t:.2e}, PyTorch TP {e_p:.2e}")
        print("| TP MLP | GPUs | ms | tokens/s | tilec speed-up |")
        print("|---|---|---|---|---|")
        for name, ms in (("tilec", ms_t), ("PyTorch", ms_p)):
            print(f"| {name} | {world} | {ms:.3f} | {T / ms * 1e3:,.0f} | {ms / ms_t:.3f}x |")
        print("tp_mlp:", "PASS" if ok else "FAIL (error)")
dist.destroy_process_group()
sys.exit(0 if ok else 1)
