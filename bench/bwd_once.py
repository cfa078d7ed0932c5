#!/usr/bin/env python3
"""bwd_once.py: one launch of the one-pass attention backward (bench/variants/attn_bwd_fused.tile:
attn_bwd_pre_dq, attn_bwd_fused, attn_bwd_dq_cast) at one case, for a profiler (bench/pending_bwd7.sh
runs it under ncu with `--kernel-name regex:attn_bwd_fused`).  The switches (TILEC_ATOMIC_TMA,
TILEC_WGMMA_LAZY, ...) come from the environment, read when the kernels compile.  Prints the dQ / dK /
dV relative error against float64 autograd (tests/gpu/test_attn_bwd.py's reference) so a profiled
launch is also a checked one.

  python3 bench/bwd_once.py [--lib build/libtilec.so] [D:S:CAUSAL] [--bn128] [--stages N]
  --default: the default three kernels instead (examples/attn_bwd.tile: attn_bwd_pre, attn_bwd_dkdv,
  attn_bwd_dq), then cuDNN's backward once (SDPA, the cuDNN backend), for a profiler beside it.
Exit 0 (error <= 1e-2), 1 otherwise, 77 without a GPU."""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
if "--lib" in sys.argv:
    os.environ["TILEC_LIBRARY"] = os.path.abspath(sys.argv[sys.argv.index("--lib") + 1])


def once(torch, launch, D, S, causal, Z, H, label, reference_grads, rel_error):
    """Fresh inputs (seeded), dQ / dK / dV poisoned with NaN, launch(q, k, v, do, o, lse, dl, dq, dk, dv, scale)
    once, the three checked against float64 autograd on a slice; prints "once LABEL: rel. err ...".  Returns
    (ok, q, k, v, do, scale)."""
    torch.manual_seed(20261205)
    q, k, v, do = (torch.randn(Z, H, S, D, device="cuda").to(torch.bfloat16) for _ in range(4))
    scale = 1.0 / math.sqrt(D)
    o = torch.empty_like(q)
    lse, dl = (torch.empty(Z, H, S, device="cuda") for _ in range(2))
    dq, dk, dv = (torch.full_like(q, float("nan")) for _ in range(3))
    launch(q, k, v, do, o, lse, dl, dq, dk, dv, scale)
    torch.cuda.synchronize()
    _, dq64, dk64, dv64 = reference_grads(torch, q[:1, :2], k[:1, :2], v[:1, :2], do[:1, :2], scale, causal)
    errs = [rel_error(torch, got[:1, :2], ref, do[:1, :2], scale) for got, ref in ((dq, dq64), (dk, dk64), (dv, dv64))]
    ok = all(e[1] for e in errs)
    print("once %s: rel. err dQ %.1e dK %.1e dV %.1e: %s" % (
        label, errs[0][0], errs[1][0], errs[2][0], "PASS" if ok else "FAIL"), flush=True)
    return ok, q, k, v, do, scale


def default_once(torch, ex, D, S, causal, Z, H, reference_grads, rel_error):
    """The default three-kernel backward once, checked; then cuDNN's (SDPA) once."""
    def launch(q, k, v, do, o, lse, dl, dq, dk, dv, scale):
        ex["attn_fwd_lse"](q, k, v, o, lse, scale)
        ex["attn_bwd_pre"](o, do, dl)
        ex["attn_bwd_dkdv"](q, k, v, do, lse, dl, dk, dv, scale)
        ex["attn_bwd_dq"](q, k, v, do, lse, dl, dq, scale)
    ok, q, k, v, do, scale = once(torch, launch, D, S, causal, Z, H, "default D%d S%d causal=%d" % (D, S, causal),
                                  reference_grads, rel_error)
    from torch.nn.attention import sdpa_kernel, SDPBackend
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        qb, kb, vb = (t.detach().clone().requires_grad_() for t in (q, k, v))
        ob = torch.nn.functional.scaled_dot_product_attention(qb, kb, vb, is_causal=bool(causal), scale=scale)
        torch.autograd.grad(ob, (qb, kb, vb), do)
    torch.cuda.synchronize()
    return 0 if ok else 1


def main():
    try:
        import torch
    except ImportError:
        return 77
    if not torch.cuda.is_available():
        return 77
    import tilec
    from test_attn_bwd import reference_grads, rel_error
    case = [a for a in sys.argv[1:] if a.count(":") == 2]
    D, S, causal = (int(x) for x in (case[0] if case else "64:4096:0").split(":"))
    bn128 = "--bn128" in sys.argv
    Z, H = 4, 16
    defs = {"D": D, "CAUSAL": causal}
    var = os.path.join(ROOT, "bench", "variants", "attn_bwd_fused.tile")
    ex = tilec.compile(os.path.join(ROOT, "examples", "attn_bwd.tile"), defines=defs)
    fwd = ex["attn_fwd_lse"]
    if "--default" in sys.argv:
        return default_once(torch, ex, D, S, causal, Z, H, reference_grads, rel_error)
    vp = tilec.compile(var, defines=defs)
    stages = int(sys.argv[sys.argv.index("--stages") + 1]) if "--stages" in sys.argv else 0
    fp = tilec.compile(var, defines={**defs, "BN": 128}, warps=8, kernel="attn_bwd_fused") if bn128 else \
        tilec.compile(var, defines=defs, stages=stages, kernel="attn_bwd_fused") if stages else vp
    acc = torch.full((Z, H, S, D), float("nan"), device="cuda")

    def launch(q, k, v, do, o, lse, dl, dq, dk, dv, scale):
        fwd(q, k, v, o, lse, scale)
        vp["attn_bwd_pre_dq"](o, do, dl, acc)
        fp["attn_bwd_fused"](q, k, v, do, lse, dl, dk, dv, acc, scale)
        vp["attn_bwd_dq_cast"](acc, dq)
    label = "D%d S%d causal=%d%s%s %s" % (
        D, S, causal, " bn128" if bn128 else "", " stages %d" % stages if stages else "", " ".join("%s=%s" % (n, os.environ.get(n, "-"))
        for n in ("TILEC_ATOMIC_TMA", "TILEC_WGMMA_LAZY", "TILEC_WGMMA_STAGED_A", "TILEC_LOOP_SPLIT_LOAD")))
    ok = once(torch, launch, D, S, causal, Z, H, label, reference_grads, rel_error)[0]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
