#!/usr/bin/env python3
"""test_attn_bwd_fused.py: the one-pass attention backward (bench/variants/attn_bwd_fused.tile:
attn_bwd_pre_dq, attn_bwd_fused with dQ partials by atomic_add into an f32 accumulator,
attn_bwd_dq_cast) on the GPU against float64 autograd of softmax(q k^T * scale) v, at ragged
lengths (1, 127, 129, 1000, 4097), D 64 and 128 (and D 64 with 128-key blocks on 8 warps), causal
and not, the dQ atomics by a TMA bulk reduce-add (TILEC_ATOMIC_TMA=1; =2 two staging buffers, one barrier) and by red per element (=0); outputs and scratch poisoned with NaN
first (the accumulator is zeroed by attn_bwd_pre_dq, as the variant does).

Tolerance as tests/gpu/test_attn_bwd.py: ||x - ref|| / ||ref|| <= 1e-2 for dQ, dK, dV (at S = 1
against ||dO|| * scale), every element finite.  Self-test: dQ from a half-updated accumulator (the
cast kernel run before the fused one) must be rejected.

  python3 tests/gpu/test_attn_bwd_fused.py [--lib build/libtilec.so] [--modes 1,2,0]
Exit 0 pass, 1 fail, 77 no GPU / no torch.
"""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
if "--lib" in sys.argv:
    os.environ["TILEC_LIBRARY"] = os.path.abspath(sys.argv[sys.argv.index("--lib") + 1])

from test_attn_bwd import reference_grads, rel_error  # noqa: E402 (the same reference and tolerance)


def main():
    try:
        import torch
    except ImportError:
        print("test_attn_bwd_fused: no torch: skipped")
        return 77
    if not torch.cuda.is_available():
        print("test_attn_bwd_fused: no GPU: skipped")
        return 77
    import tilec
    ex = os.environ.get("TILEC_EXAMPLES", os.path.join(ROOT, "examples"))
    src = os.path.join(ex, "attn_bwd.tile")
    var = os.environ.get("TILEC_BWD_FUSED", os.path.join(os.path.dirname(ex), "bench", "variants", "attn_bwd_fused.tile"))
    modes = sys.argv[sys.argv.index("--modes") + 1].split(",") if "--modes" in sys.argv else ["1", "2", "0"]
    torch.manual_seed(int(os.environ.get("TILEC_SEED", "20261205")))
    nan, bf = float("nan"), torch.bfloat16
    fails = checks = 0
    for mode in modes:
        os.environ["TILEC_ATOMIC_TMA"] = mode  # read at compile time (and in the kernel cache key)
        tag = {"0": "red", "2": "tma-reduce-2buf"}.get(mode, "tma-reduce")
        # D64 also with 128-key blocks on 8 warps (bench.py's fused-tma-bn128), TMA mode only
        configs = [(64, False), (128, False)] + ([(64, True)] if mode == "1" else [])
        for D, bn128 in configs:
            for causal in (0, 1):
                defs = {"D": D, "CAUSAL": causal}
                fwd = tilec.compile(src, defines=defs)["attn_fwd_lse"]
                try:
                    vp = tilec.compile(var, defines=defs)
                    fp = tilec.compile(var, defines={**defs, "BN": 128}, warps=8, kernel="attn_bwd_fused") if bn128 else vp
                except Exception as e:
                    print("FAIL %s D=%d causal=%d: compile: %s" % (tag, D, causal, str(e)[:300]))
                    fails += 1
                    checks += 1
                    continue
                pre, fused, cast = vp["attn_bwd_pre_dq"], fp["attn_bwd_fused"], vp["attn_bwd_dq_cast"]
                for Z, H, S in ((1, 2, 1), (2, 3, 127), (1, 2, 129), (1, 4, 1000), (1, 2, 4097)):
                    q, k, v, do = (torch.randn(Z, H, S, D, device="cuda").to(bf) for _ in range(4))
                    scale = 1.0 / math.sqrt(D)
                    o = torch.full_like(q, nan)
                    lse = torch.full((Z, H, S), nan, device="cuda")
                    dl = torch.full((Z, H, S), nan, device="cuda")
                    acc = torch.full((Z, H, S, D), nan, device="cuda")
                    dq_, dk_, dv_ = (torch.full_like(q, nan) for _ in range(3))
                    fwd(q, k, v, o, lse, scale)
                    pre(o, do, dl, acc)
                    fused(q, k, v, do, lse, dl, dk_, dv_, acc, scale)
                    cast(acc, dq_)
                    torch.cuda.synchronize()
                    _, dq64, dk64, dv64 = reference_grads(torch, q, k, v, do, scale, causal)
                    name = "%s%s D=%d causal=%d Z=%d H=%d S=%d" % (tag, " bn128" if bn128 else "", D, causal, Z, H, S)
                    for what, got, ref in (("dQ", dq_, dq64), ("dK", dk_, dk64), ("dV", dv_, dv64)):
                        err, ok = rel_error(torch, got, ref, do, scale)
                        checks += 1
                        fails += not ok
                        if not ok or S == 1000:
                            print("%s %s %s: rel. error %.2e" % ("ok" if ok else "FAIL", name, what, err))
                    if S == 1000 and causal == 0:  # self-test: the accumulator before the fused kernel's adds
                        pre(o, do, dl, acc)
                        cast(acc, dq_)
                        torch.cuda.synchronize()
                        bad = float((dq_.double() - dq64).norm() / dq64.norm())
                        checks += 1
                        caught = bad > 1e-2
                        fails += not caught
                        print("%s self-test %s: dQ without the fused kernel's adds is %.2e off: %s" %
                              ("ok" if caught else "FAIL", name, bad, "rejected" if caught else "NOT rejected"))
    os.environ.pop("TILEC_ATOMIC_TMA", None)
    print("test_attn_bwd_fused: %d passed, %d failed" % (checks - fails, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
