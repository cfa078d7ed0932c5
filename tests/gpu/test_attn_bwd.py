#!/usr/bin/env python3
"""test_attn_bwd.py: examples/attn_bwd.tile on the GPU (forward with LSE, then the three backward
kernels) against float64 autograd of softmax(q k^T * scale) v, at ragged lengths (1, 127, 129,
1000, 4097), D 64 and 128, causal and not, the backward kernels on the default pipeline and on cutlass; outputs and scratch poisoned with NaN first.

Tolerance: ||x - ref|| / ||ref|| <= 1e-2 for O, dQ, dK, dV (at S = 1, where dQ = dK = 0, against
||dO|| * scale) (bf16 inputs and outputs, P and dS rounded
to bf16 before their products, as FlashAttention-2 does), and every element finite.  Self-test:
the check rejects dK computed without the softmax scale.

  python3 tests/gpu/test_attn_bwd.py [--lib build/libtilec.so]
  ATTN_BWD_PIPES=default,dq-bn64 ATTN_BWD_D=128 python3 tests/gpu/test_attn_bwd.py   (a subset; dq-bn64:
  the default dK/dV with dQ at 64 keys a step on 2 stages, the D128 tile of bench/RESULTS.md "bwd8")
Exit 0 pass, 1 fail, 77 no GPU / no torch.
"""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
if "--lib" in sys.argv:
    os.environ["TILEC_LIBRARY"] = os.path.abspath(sys.argv[sys.argv.index("--lib") + 1])


def reference_grads(torch, q, k, v, do, scale, causal):
    """float64 autograd of softmax(q k^T * scale) v (causal: keys after the query masked):
    (O, dQ, dK, dV)."""
    S = q.shape[2]
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    s = (q64 @ k64.transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    o64 = torch.softmax(s, -1) @ v64
    o64.backward(do.double())
    return o64.detach(), q64.grad, k64.grad, v64.grad


def rel_error(torch, got, ref, do, scale):
    """(||got - ref|| / ||ref||, passes): passes = every element finite and the error <= 1e-2.  S = 1:
    the softmax of one key is 1 whatever the score, so dQ = dK = 0 exactly; the error is then taken
    against the size of dO (an absolute bound)."""
    scale_ref = ref.norm() if ref.norm() > 0 else do.double().norm() * scale
    err = float((got.double() - ref).norm() / scale_ref)
    return err, bool(torch.isfinite(got).all()) and err <= 1e-2


def main():
    try:
        import torch
    except ImportError:
        print("test_attn_bwd: no torch: skipped")
        return 77
    if not torch.cuda.is_available():
        print("test_attn_bwd: no GPU: skipped")
        return 77
    import tilec
    src = os.path.join(os.environ.get("TILEC_EXAMPLES", os.path.join(ROOT, "examples")), "attn_bwd.tile")
    torch.manual_seed(int(os.environ.get("TILEC_SEED", "20261201")))
    nan, bf = float("nan"), torch.bfloat16
    fails = checks = 0
    pipes = os.environ.get("ATTN_BWD_PIPES", "default,multistage,cutlass,cutlass-8w").split(",")
    dims = [int(x) for x in os.environ.get("ATTN_BWD_D", "64,128").split(",")]
    for D in dims:
        for causal in (0, 1):
            prog = tilec.compile(src, defines={"D": D, "CAUSAL": causal})
            fwd, pre = prog["attn_fwd_lse"], prog["attn_bwd_pre"]
            # the backward kernels on their default pipeline (multistage: mma.sync, the shared K / Q / dO
            # slots) and on cutlass (wgmma on sm_90a)
            # and dK/dV on cutlass with 128 keys a program on 8 warps
            cut = None
            for pipe in pipes:
                defs = {"D": D, "CAUSAL": causal}
                if pipe == "dq-bn64":
                    dkdv = prog["attn_bwd_dkdv"]
                    dq_prog = tilec.compile(src, defines={**defs, "BN": 64}, stages=2, kernel="attn_bwd_dq")
                elif pipe == "cutlass-8w":
                    big = tilec.compile(src, defines={**defs, "BN": 128, "BM": 64 if D == 128 else 32},
                                        pipeline="cutlass", warps=8, kernel="attn_bwd_dkdv")
                    dkdv = big["attn_bwd_dkdv"]
                    dq_prog = cut or tilec.compile(src, defines=defs, pipeline="cutlass")  # dQ as on cutlass
                else:
                    bprog = prog if pipe == "default" else tilec.compile(src, defines=defs, pipeline=pipe)
                    dkdv = bprog["attn_bwd_dkdv"]
                    dq_prog = bprog
                    if pipe == "cutlass":
                        cut = bprog
                dq = dq_prog["attn_bwd_dq"]
                for Z, H, S in ((1, 2, 1), (2, 3, 127), (1, 2, 129), (1, 4, 1000), (1, 2, 4097)):
                    q, k, v, do = (torch.randn(Z, H, S, D, device="cuda").to(bf) for _ in range(4))
                    scale = 1.0 / math.sqrt(D)
                    o = torch.full_like(q, nan)
                    lse = torch.full((Z, H, S), nan, device="cuda")
                    dl = torch.full((Z, H, S), nan, device="cuda")
                    dq_, dk_, dv_ = (torch.full_like(q, nan) for _ in range(3))
                    fwd(q, k, v, o, lse, scale)
                    pre(o, do, dl)
                    dkdv(q, k, v, do, lse, dl, dk_, dv_, scale)
                    dq(q, k, v, do, lse, dl, dq_, scale)
                    torch.cuda.synchronize()
                    o64, dq64, dk64, dv64 = reference_grads(torch, q, k, v, do, scale, causal)
                    name = "%s D=%d causal=%d Z=%d H=%d S=%d" % (pipe, D, causal, Z, H, S)
                    for what, got, ref in (("O", o, o64), ("dQ", dq_, dq64), ("dK", dk_, dk64), ("dV", dv_, dv64)):
                        err, ok = rel_error(torch, got, ref, do, scale)
                        checks += 1
                        fails += not ok
                        if not ok or S == 1000:
                            print("%s %s %s: rel. error %.2e" % ("ok" if ok else "FAIL", name, what, err))
                    if S == 127 and causal == 0:  # self-test: dK without the scale must be rejected
                        bad = float((dk_.double() / scale - dk64).norm() / dk64.norm())
                        checks += 1
                        caught = bad > 1e-2
                        fails += not caught
                        print("%s self-test %s: dK without the scale is %.2e off: %s" %
                              ("ok" if caught else "FAIL", name, bad, "rejected" if caught else "NOT rejected"))
    print("test_attn_bwd: %d passed, %d failed" % (checks - fails, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
