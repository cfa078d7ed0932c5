# bench/bwd_ab.py: the attention backward's variants timed against each other in one process, rotated
# round by round (bench.py's bench_interleaved since the twenty-seventh session: the first fn warmed to a
# steady clock, each round every fn launch by launch, the order rotated; --interleave 0 bench_rounds' whole
# do_bench block a fn, whose rounds spread +-8 % on an H100 where these spread +-0.5 %), so a few-percent
# difference is read from the median of per-round ratios
# rather than from two back-to-back medians (bench.py --only attnbwd times each variant once, and the
# H100 moved the same kernel by up to 5 % between variants: bench/RESULTS.md "bwd9").  Every variant
# is checked against fp64-free torch autograd (float32 SDPA) first: max relative error printed.
#   python3 bench/bwd_ab.py --lib LIB --cases 64:4096:0,64:4096:1 --variants default,dq64 --rounds 9
# Variants: default (the example as it is), dq64 / dq128 (the dQ kernel on 64 / 128 queries: 4 / 8 warps,
# 64 keys a step), lazywide (TILEC_WGMMA_LAZY_WIDE=1 at compile), nowide (=0), lazy (TILEC_WGMMA_LAZY=1), kvBN.BM.W.S (the dK/dV kernel's keys,
# queries, warps, stages), qBM.BN.W.S (the dQ kernel's), and parts joined by "+".  Output: one line per (case,
# variant): median ms of the whole (pre + dK/dV + dQ) and of each kernel, and the median ratio of the
# variant's whole to the first variant's, round by round; with --refs 1 (the default) also its speed x cuDNN's and
# FA2's backward (SDPA, timed in the same rotation).
import argparse, os, sys, statistics

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--cases", default="64:4096:0,64:4096:1")
ap.add_argument("--variants", default="default,dq128")
ap.add_argument("--rounds", type=int, default=9)
ap.add_argument("--warm-ms", type=int, default=300)
ap.add_argument("--interleave", type=int, default=1,
                help="1: bench.py's bench_interleaved (the fns launch by launch in each round) instead of bench_rounds")
ap.add_argument("--refs", type=int, default=1, help="1: cuDNN's and FA2's backward (SDPA) in the same rounds")
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
os.environ["BENCH_INTERLEAVE"] = str(a.interleave)  # (bench_rounds reads it: 1 bench_interleaved)
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, ex, bench_rounds, relerr, torch


def tile(spec):
    """"BN.BM.W.S" (dK/dV) or "BM.BN.W.S" (dQ): the defines and options of one kernel's tile"""
    a_, b_, w_, s_ = (int(x) for x in spec.split("."))
    return a_, b_, {"warps": w_, "stages": s_}


def variant(name, D):
    """(dK/dV options, defines), (dQ options, defines), compile-time environment"""
    if "+" in name:  # parts combined, e.g. kv128.64.8.4+lazywide
        kv, q, env = ({}, {}), ({}, {}), {}
        for part in name.split("+"):
            k2, q2, e2 = variant(part, D)
            kv = k2 if k2 != ({}, {}) else kv
            q = q2 if q2 != ({}, {}) else q
            env.update(e2)
        return kv, q, env
    if name.startswith("kv"):  # kvBN.BM.W.S: the dK/dV kernel's tile
        bn, bm, o = tile(name[2:])
        return (o, {"BN": bn, "BM": bm}), ({}, {}), {}
    if name.startswith("q") and "." in name:  # qBM.BN.W.S: the dQ kernel's tile
        bm, bn, o = tile(name[1:])
        return ({}, {}), (o, {"BM": bm, "BN": bn}), {}
    if name == "default":
        return ({}, {}), ({}, {}), {}
    if name in ("dq64", "dq128"):
        bm = 64 if name == "dq64" else 128
        stages = (2 if bm == 64 else 3) if D == 128 else 4
        return ({}, {}), ({"warps": 4 if bm == 64 else 8, "stages": stages}, {"BM": bm, "BN": 64}), {}
    if name == "nowide":  # the wide lazy waits off (the D128 dK/dV loop's default since the twenty-seventh session)
        return ({}, {}), ({}, {}), {"TILEC_WGMMA_LAZY_WIDE": "0"}
    if name == "lazywide":
        return ({}, {}), ({}, {}), {"TILEC_WGMMA_LAZY_WIDE": "1"}
    if name == "lazy":  # each wgmma dot waited for before its result's first reader (D128: the dQ loop)
        return ({}, {}), ({}, {}), {"TILEC_WGMMA_LAZY": "1"}
    raise SystemExit(f"unknown variant {name}")


Z, H = 4, 16
P = ex("attn_bwd.tile")
names = a.variants.split(",")
for case in a.cases.split(","):
    D, S, causal = (int(x) for x in case.split(":"))
    q, k, v, do = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    qr, kr, vr = (t.detach().clone().requires_grad_() for t in (q, k, v))
    ref_o = torch.nn.functional.scaled_dot_product_attention(qr.float(), kr.float(), vr.float(), is_causal=bool(causal))
    ref_o.backward(do.float())
    whole, parts = [], []
    for name in names:
        (o2, d2), (o3, d3), env = variant(name, D)
        base = {"D": D, "CAUSAL": causal}
        os.environ.update(env)
        try:
            kf = Kernel(P, base, "attn_fwd_lse")
            kp = Kernel(P, base, "attn_bwd_pre")
            k2 = Kernel(P, {**base, **d2}, "attn_bwd_dkdv", options=o2 or None)
            k3 = Kernel(P, {**base, **d3}, "attn_bwd_dq", options=o3 or None)
        finally:
            for e in env: os.environ.pop(e, None)
        o = torch.empty_like(q); lse = torch.empty(Z, H, S, device="cuda"); dl = torch.empty_like(lse)
        dq, dk, dv = (torch.full_like(q, float("nan")) for _ in range(3))
        sc = D ** -0.5
        kf.bind(q, k, v, o, lse, sc)(); torch.cuda.synchronize()
        f1, f2, f3 = kp.bind(o, do, dl), k2.bind(q, k, v, do, lse, dl, dk, dv, sc), k3.bind(q, k, v, do, lse, dl, dq, sc)
        def f(f1=f1, f2=f2, f3=f3):
            f1(); f2(); f3()
        f(); torch.cuda.synchronize()
        err = max(relerr(dq, qr.grad), relerr(dk, kr.grad), relerr(dv, vr.grad))
        print(f"D{D} S{S} causal={causal} {name}: rel. err {err:.1e}", flush=True)
        whole.append(f); parts += [f2, f3]
    # the references in the same rotation (after the variants, so the first variant stays the warmed one):
    # SDPA's backward on cuDNN and on FA2, the forward run once under each backend (its backward is the one
    # the forward chose), then autograd.grad timed as bench.py's attnbwd section does
    refs = []
    if a.refs:
        from torch.nn.attention import sdpa_kernel, SDPBackend
        for rname, backend in (("cuDNN", SDPBackend.CUDNN_ATTENTION), ("FA2", SDPBackend.FLASH_ATTENTION)):
            try:
                with sdpa_kernel(backend):
                    qb, kb, vb = (t_.detach().clone().requires_grad_() for t_ in (q, k, v))
                    ob = torch.nn.functional.scaled_dot_product_attention(qb, kb, vb, is_causal=bool(causal))
                    g = lambda ob=ob, qb=qb, kb=kb, vb=vb: torch.autograd.grad(ob, (qb, kb, vb), do, retain_graph=True)
                    g(); torch.cuda.synchronize()
                refs.append((rname, g))
            except Exception as e:
                print(f"D{D} S{S} causal={causal} {rname}: {str(e)[:200]}", flush=True)
    t = bench_rounds(whole + parts + [g for _, g in refs], a.rounds, a.warm_ms)
    for i, name in enumerate(names):
        ratio = statistics.median(t[0][r] / t[i][r] for r in range(a.rounds))
        lo, hi = min(t[0][r] / t[i][r] for r in range(a.rounds)), max(t[0][r] / t[i][r] for r in range(a.rounds))
        print(f"ab D{D} S{S} causal={causal} {name}: all {statistics.median(t[i]):.3f} ms, dK/dV "
              f"{statistics.median(t[len(names) + 2 * i]):.3f}, dQ {statistics.median(t[len(names) + 2 * i + 1]):.3f}; "
              f"speed x {names[0]} {ratio:.3f} (rounds {lo:.3f}..{hi:.3f})", flush=True)
        for j, (rname, _) in enumerate(refs):
            tr = t[3 * len(names) + j]
            rr = [tr[r] / t[i][r] for r in range(a.rounds)]
            print(f"ref D{D} S{S} causal={causal} {name}: x {rname} {statistics.median(rr):.3f} "
                  f"(rounds {min(rr):.3f}..{max(rr):.3f}; {rname} {statistics.median(tr):.3f} ms)", flush=True)
