#!/usr/bin/env python3
"""bwd8_model.py: where the three-kernel attention backward (examples/attn_bwd.tile) loses at D128, a
per-step model of its two loop kernels, and what TILEC_WGMMA_LAZY_WIDE=1 (FlashAttention-3's order of
waits in the D128 dK/dV loop, lib/codegen/wgmma_lazy.c) and a 64-key dQ step on 2 stages (dq64) should
give (bench/RESULTS.md "bwd8").  No GPU; prints tables.

Inputs read on the CPU (ptxas 13.0 -v, nvdisasm 13.5; `build/tilec examples/attn_bwd.tile --kernel=K
--tma-fallback=form --arch=sm_90a -D D=128 [-D CAUSAL=1] [-D BN=64 --stages=2]`): tiles, warps,
registers, shared memory, the HGMMA shapes; measured (H100, twenty-first session, same process as
cuDNN): the default at 0.714 (full) / 0.726 (causal) x cuDNN and the rows' gains (all 1.14-1.19x,
dK/dV alone 1.26-1.44x), from which the kernels' shares follow.  Constants as bench/bwd_model.py's.

  python3 bench/bwd8_model.py"""

TENSOR = 4096      # dense bf16 FLOP a clock an SM: m64nNk16 = N/2 clocks (one warpgroup on all 4 sub-partitions)
SMEM_BW = 128      # shared-memory bytes a clock an SM a wgmma reads its smem operands at (assumed)
WG_TAIL = 40       # a wgmma group's fill and drain beyond its tensor clocks, to its wait (assumed)
MUFU_WARP = 8      # clocks of a warp's MUFU.EX2 on its sub-partition (16 lanes a clock an SM)
CLK = 1.755e9      # SM clock under the backward's load (bwd6)
SMS = 132
Z, H, S = 4, 16, 4096


def dot_clk(m, n, k, ss):
    """clocks of an m x n x k dot on the SM's tensor cores; both operands from shared memory (ss): at
    least the bytes a k16 slice reads at SMEM_BW (m64n32 SS: 3 KB a slice for 16 clocks -> 24)"""
    t = 2 * m * n * k / TENSOR
    if ss:
        t = max(t, (m * 16 + n * 16) * 2 * (k // 16) / SMEM_BW)
    return t


def dkdv_chain(wide, causal):
    """one step of the D128 dK/dV kernel (128 keys x 64 queries, 8 warps = 2 warpgroups in lockstep,
    one CTA an SM; 2 warps a sub-partition), clocks"""
    top, loop = 60, 20                                   # ring wait + barrier + thread 0's issue; loop
    s = dot_clk(128, 64, 128, True) + WG_TAIL            # S^T = K Q^T   (2 x m64n64k16 x 8, SS)
    dp = dot_clk(128, 64, 128, True) + WG_TAIL           # dP^T = V dO^T (SS)
    dv = dot_clk(128, 128, 64, False) + WG_TAIL          # dV += P^T dO  (RS, m64n128k16 x 4)
    dk = dot_clk(128, 128, 64, False) + WG_TAIL          # dK += dS^T Q  (RS)
    exp = 2 * 32 * MUFU_WARP + 30 + (2 * 32 if causal else 0)  # 2 warps x 32 MUFU.EX2 (+ the mask's FSEL)
    pack = 2 * 16                                        # P^T to bf16 (16 F2FP a warp)
    ds = 2 * (32 + 32 + 16)                              # dS^T = P^T (dP^T - Dl), packed
    if not wide:                                         # each dot waited for at once
        return top + s + exp + pack + dv + dp + ds + dk + loop
    # FA3's order: S^T, dP^T committed together, wait 1, exp under dP^T; dV committed, wait 1, dS under
    # dV; dK committed (the tensor pipe runs it after dV), wait 0 at the body's end
    t_dp_done = s + dot_clk(128, 64, 128, True)
    t_exp_done = s + exp + pack
    t_dv_issue = max(t_exp_done, 0)
    t_ds_done = max(t_dv_issue, t_dp_done) + ds
    t_dv_done = max(t_dv_issue, t_dp_done) + dot_clk(128, 128, 64, False)
    t_dk_done = max(t_ds_done, t_dv_done) + dot_clk(128, 128, 64, False) + WG_TAIL
    return top + t_dk_done + loop


def dq_step(bn, lazy, causal):
    """one step of the D128 dQ kernel (64 queries x bn keys, 4 warps, two CTAs an SM: 98 KB of shared
    memory at 32 keys x 4 stages and at 64 keys x 2 stages): (chain of one CTA, tensor bound an SM)"""
    top, loop = 60, 20
    s = dot_clk(64, bn, 128, True)                        # S = Q K^T  (SS: small N reads 1.5x at bn 32)
    dp = dot_clk(64, bn, 128, True)                       # dP = dO V^T
    dq = dot_clk(64, 128, bn, False)                      # dQ += dS K (RS)
    exp = (bn // 2) * MUFU_WARP + 30 + ((bn // 2) if causal else 0)
    ds = bn + bn // 4 + 20
    if not lazy:
        chain = top + s + WG_TAIL + exp + dp + WG_TAIL + ds + dq + WG_TAIL + loop
    else:  # TILEC_WGMMA_LAZY=1: S and dP committed together, the exp under dP
        chain = top + s + WG_TAIL + max(exp, dp) + ds + dq + WG_TAIL + loop
    return chain, s + dp + dq


def main():
    fl5 = 10 * Z * H * S * S * 128                        # FA2's count (5 dots)
    cudnn = {0: 513.5e12, 1: 449.2e12}                   # cuDNN D128 TFLOP/s (H200, 12th session; H100 assumed alike)
    meas = {0: 0.714, 1: 0.726}                          # default x cuDNN (H100, 21st session, mean of two rounds)
    share_dkdv, share_pre = 0.50, 0.02                   # from the rows' gains: all 1.14-1.19x, dK/dV 1.26-1.44x
    print("D128, S 4096, Z 4, H 16: the default's time split (H100 ratios; cuDNN's rate assumed the H200's)")
    print("| case | all ms | dK/dV ms, clk a step an SM | dQ ms, clk a step an SM | dK/dV tensor busy | dQ tensor busy |")
    print("|---|---|---|---|---|---|")
    stepclk = {}
    for c in (0, 1):
        T = fl5 / (2 if c else 1) / (meas[c] * cudnn[c])
        nkv = (S // 128) * (S // 64) * Z * H / SMS / (2 if c else 1)      # dK/dV steps an SM (causal ~half)
        nq = (S // 64) * (S // 32) * Z * H / SMS / (2 if c else 1)        # dQ steps an SM
        tk, tq = T * share_dkdv, T * (1 - share_dkdv - share_pre)
        ck, cq = tk * CLK / nkv, tq * CLK / nq
        stepclk[c] = (ck, cq)
        print(f"| {'causal' if c else 'full'} | {T*1e3:.2f} | {tk*1e3:.2f}, {ck:.0f} | {tq*1e3:.2f}, {cq:.0f} | "
              f"{2048/ck:.2f} | {384/cq:.2f} |")
    print()
    print("Per-step model (clocks; dK/dV one CTA an SM, dQ two):")
    print("| case | dK/dV chain default / wide | dQ 32 keys chain, tensor / 2 steps | dQ 64 keys chain, tensor | dQ 64 lazy chain |")
    print("|---|---|---|---|---|")
    for c in (0, 1):
        d0, d1 = dkdv_chain(False, c), dkdv_chain(True, c)
        q32, t32 = dq_step(32, False, c)
        q64, t64 = dq_step(64, False, c)
        q64l, _ = dq_step(64, True, c)
        print(f"| {'causal' if c else 'full'} | {d0:.0f} / {d1:.0f} ({d0/d1:.2f}x) | {q32:.0f}, {t32:.0f} / {2*q32:.0f}, {2*t32:.0f} | "
              f"{q64:.0f}, {t64:.0f} | {q64l:.0f} |")
    print()
    print("Predictions (time default / variant; 'additive': the measured step's unexplained clocks stay,")
    print("'proportional': they scale with the chain; dQ: 'chain' (its two CTAs hide nothing of each other) or")
    print("'bound' (they fill the tensor pipe up to the measured efficiency)):")
    print("| case | lazywide dK/dV | dq64 dQ | lazywide | dq64 | lazywide-dq64 | lazywide-dq64-lazy | x cuDNN: lazywide-dq64 |")
    print("|---|---|---|---|---|---|---|---|")
    for c in (0, 1):
        ck, cq = stepclk[c]
        d0, d1 = dkdv_chain(False, c), dkdv_chain(True, c)
        u = ck - d0
        rk = sorted([ck / (d1 + u), d0 / d1])
        q32, t32 = dq_step(32, False, c)
        q64, t64 = dq_step(64, False, c)
        q64l, _ = dq_step(64, True, c)
        eff = max(t32, q32 / 2) / cq                       # the measured step against the bound
        rq_chain, rq_bound = 2 * q32 / q64, 2 * max(t32, q32 / 2) / max(t64, q64 / 2)
        rq = sorted([rq_chain, rq_bound])
        rql = sorted([2 * q32 / q64l, rq_bound])
        def total(a, b):
            return 1 / (share_pre + share_dkdv / a + (1 - share_dkdv - share_pre) / b)
        lo, hi = total(rk[0], rq[0]), total(rk[1], rq[1])
        print(f"| {'causal' if c else 'full'} | {rk[0]:.2f}-{rk[1]:.2f} | {rq[0]:.2f}-{rq[1]:.2f} | "
              f"{total(rk[0], 1):.2f}-{total(rk[1], 1):.2f} | {total(1, rq[0]):.2f}-{total(1, rq[1]):.2f} | "
              f"{lo:.2f}-{hi:.2f} | {total(rk[0], rql[0]):.2f}-{total(rk[1], rql[1]):.2f} | "
              f"{meas[c]*lo:.2f}-{meas[c]*hi:.2f} |")
        _ = eff
    print()
    print("What 0.8x cuDNN needs at D128 (the three kernels' 7 dots against cuDNN's 5): the backward at")
    for c in (0, 1):
        print(f"  {'causal' if c else 'full'}: {0.8/meas[c]:.3f}x today's speed")


if __name__ == "__main__":
    main()
