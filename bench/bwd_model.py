#!/usr/bin/env python3
"""bwd_model.py: the per-step cycle model of the one-pass attention backward (bench/variants/
attn_bwd_fused.tile, TILEC_ATOMIC_TMA=1) of bench/RESULTS.md "bwd7", at S 4096, Z 4, H 16 on the H200:
the chain of one step (a CTA's key block against one 64-query block) with every wgmma dot waited for
at once (the default), with TILEC_WGMMA_LAZY=1 (lib/codegen/wgmma_lazy.c) and / or TILEC_WGMMA_STAGED_A=1
(dQ on wgmma, emit_dot.c stage_wgmma_a), set beside the step
the seventeenth session measured; then what 0.8x cuDNN needs a step.  No GPU; prints a table.

Inputs read here with ptxas 13.0 -v and nvdisasm (sm_90a; `TILEC_ATOMIC_TMA=1 [TILEC_WGMMA_LAZY=1]
build/tilec bench/variants/attn_bwd_fused.tile --kernel=attn_bwd_fused --tma-fallback=form -D D=..
-D CAUSAL=.. --arch=sm_90a`): SASS instructions a warp a step, registers, CTAs an SM.  Measured (H200,
seventeenth session, same process as cuDNN): x cuDNN of fused-tma; cuDNN's TFLOP/s from the twelfth
session's call 2 (423.1 / 366.8 / 513.5 / 449.2).  Latency and rate constants are assumptions (named
below); the model's misses against the measured steps are printed, not hidden.

  python3 bench/bwd_model.py"""

CLK = 1.98e9          # SM clock of the bench runs (bench/RESULTS.md header)
SMS = 132
TENSOR = 4096         # dense bf16 FLOP a clock an SM: m64nNk16 = N/2 clocks
MMA_SYNC_EFF = 0.5    # mma.sync m16n8k16 against wgmma's rate (assumed; FA2-class kernels top out near it)
WG_TAIL = 40          # a wgmma group's fill and drain beyond its tensor clocks, to its wait (assumed)
L2_LAT = 500          # a row load (LSE, Dl) from L2 under load, issue to use (assumed)
MUFU_WARP = 8         # clocks of a warp's MUFU.EX2 on its sub-partition (16 a clock an SM)
BAR = 30              # a CTA barrier with the warps arriving together
FENCE = 50            # fence.proxy.async (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC)

# (D, causal): SASS a warp a step off / lazy (nvdisasm, the TMA path, thread 0's issue and the
# pure-FSEL mask blocks left out), registers off / lazy, CTAs an SM, measured x cuDNN (fused-tma),
# cuDNN TFLOP/s
CASES = {
    (64, 0): dict(sass=(853, 841), regs=(174, 211), ctas=2, x_cudnn=0.485, cudnn=423.1),
    (64, 1): dict(sass=(914, 934), regs=(194, 237), ctas=2, x_cudnn=0.416, cudnn=366.8),
    (128, 0): dict(sass=(988, None), regs=(255, None), ctas=1, x_cudnn=0.541, cudnn=513.5),
    (128, 1): dict(sass=(1088, None), regs=(255, None), ctas=1, x_cudnn=0.585, cudnn=449.2),
}
Z, H, S, BM = 4, 16, 4096, 64


def steps_per_sm(D, causal):
    BN = 64 if D == 64 else 128
    nb = S // BN
    per_head = sum((S - (n * BN // BM) * BM) // BM for n in range(nb)) if causal else nb * (S // BM)
    return per_head * Z * H / SMS


def side_ms(D):
    """pre (reads O, dO; writes Dl, zeroes the f32 accumulator) + cast (reads it, writes dQ) at ~4 TB/s"""
    e = Z * H * S * D
    return (2 * 2 * e + 4 * e + 4 * e + 2 * e) / 4.0e12 * 1e3


def chain(D, lazy, sa=False):
    """one step's dependency chain (clocks), one CTA alone; D64: one warpgroup; D128: two in lockstep
    sharing the tensor cores (so a dot's clocks are both warpgroups'), two warps a sub-partition"""
    wgs = 1 if D == 64 else 2
    BN = 64 * wgs
    dot = lambda m, n, k: 2 * m * n * k / TENSOR          # tensor clocks of the CTA's whole dot
    t_s = dot(BN, BM, D) + WG_TAIL                        # S^T = K Q^T
    t_dv = 16 * wgs + dot(BN, D, BM) + WG_TAIL            # pack P^T, dV += P^T dO
    t_dp = dot(BN, BM, D) + WG_TAIL                       # dP^T = V dO^T
    t_dk = dot(BN, D, BM) + WG_TAIL                       # dK += dS^T Q
    top = BAR + 100                                       # ring barrier, LSE addresses and loads issued
    lse = max(0, L2_LAT - 60 - t_s)                       # the LSE rows' latency not under S^T
    exp = 32 * MUFU_WARP * wgs + 30                       # 32 MUFU.EX2 a warp (+ scale, - lse, selects)
    ds = 80 * wgs                                         # dS^T = P^T (dP^T - Dl), packed
    tr = (16 + 16 + 32 + 16) * wgs + 2 * BAR + 30         # dS^T to shared memory for dQ's A (STS.U16, LDSM)
    mma = dot(BM, D, BN) / MMA_SYNC_EFF + 30              # dQ = dS K on mma.sync
    stage = (32 + 16) * wgs + 30 + BAR + FENCE + BAR + 20  # * scale, wait.read, staging, fence, bulk reduce
    loop = 20
    if sa:  # TILEC_WGMMA_STAGED_A=1 (D64): dS^T's rows stored as they are (16 STS.32), fence, barrier; dQ on wgmma
        tr = 16 * wgs + FENCE + BAR
        mma = dot(BM, D, BN) + WG_TAIL
    if not lazy:
        parts = dict(top=top, S=t_s, lse=lse, exp=exp, dV=t_dv, dP=t_dp, dS=ds, dK=t_dk, dQ_tr=tr, dQ_mma=mma,
                     dQ_stage=stage, loop=loop)
        return sum(parts.values()), parts
    # lazy: S^T and dP^T issued together; exp after S^T and the rows; dV issued, dS under it, dK issued;
    # dQ's transposition under dV / dK, its mma.sync after dK leaves the tensor cores; one wait at the end
    head = top + max(t_s, L2_LAT - 60) + exp
    issue_dv, issue_dk = 16 * wgs + 20, 20
    dv_end = t_dv - 16 * wgs                                 # from dV's issue
    dk_end = dv_end + dot(BN, D, BM)                         # dK queued behind dV
    t_ds = issue_dv + 10 + ds + issue_dk
    mma_start = max(t_ds + tr, dk_end)
    if sa:  # the dQ group queues behind dK's on the tensor cores; its reader waits for both
        mma_start = max(t_ds + tr, dk_end - WG_TAIL)
    tail = mma_start + mma + stage + loop
    return head + tail, dict(head=head, tail=tail)


def main():
    print("| case | steps an SM | SASS a warp a step off / lazy | tensor clk a step | chain off (model) | measured clk "
          "a CTA-step an SM | measured / chain | chain lazy (model) | lazy: fused kernel speed-up | x cuDNN off -> lazy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (D, causal), c in CASES.items():
        n = steps_per_sm(D, causal)
        fl = 10 * Z * H * S * S * D / (2 if causal else 1)
        t_all = fl / (c["x_cudnn"] * c["cudnn"] * 1e12) * 1e3      # ms, measured
        t_k = t_all - side_ms(D)
        step = t_k * 1e-3 * CLK / n                                 # clocks a CTA-step an SM
        off, parts = chain(D, False)
        wgs = 1 if D == 64 else 2
        tensor = 4 * 2 * 64 * wgs * BM * D / TENSOR + 2 * BM * D * 64 * wgs / TENSOR
        if c["sass"][1] is None:
            lazy_txt, sp, x_on = "refused (registers)", (1.0, 1.0), (c["x_cudnn"], c["x_cudnn"])
        else:
            on, _ = chain(D, True)
            # proportional: the unexplained part scales with the chain; additive: it stays, and the two
            # CTAs of an SM hide half of the saving
            sp = ((step - (off - on) / c["ctas"]) and step / (step - (off - on) / c["ctas"]), off / on)
            x_on = tuple(c["x_cudnn"] * t_all / (t_k / s + side_ms(D)) for s in sp)
            lazy_txt = f"{on:.0f}"
        print(f"| D{D} {'causal' if causal else 'full'} | {n:.0f} | {c['sass'][0]}"
              f"{' / ' + str(c['sass'][1]) if c['sass'][1] else ''} | {tensor:.0f} | {off:.0f} | {step:.0f} "
              f"({c['ctas']} CTA an SM) | {step / off:.2f} | {lazy_txt} | "
              f"{sp[0]:.2f}-{sp[1]:.2f}x | {c['x_cudnn']:.3f} -> {x_on[0]:.3f}-{x_on[1]:.3f} |")
    print()
    for causal in (0, 1):  # TILEC_WGMMA_STAGED_A=1 (D64): SASS 853 -> 738 full, 914 -> 829 causal; with lazy 747 / 843
        c = CASES[(64, causal)]
        n = steps_per_sm(64, causal)
        fl = 10 * Z * H * S * S * 64 / (2 if causal else 1)
        t_all = fl / (c["x_cudnn"] * c["cudnn"] * 1e12) * 1e3
        t_k = t_all - side_ms(64)
        step = t_k * 1e-3 * CLK / n
        off, _ = chain(64, False)
        for name, (m, _) in (("dQ on wgmma", chain(64, False, True)), ("lazy + dQ on wgmma", chain(64, True, True))):
            sp = (step / (step - (off - m) / c["ctas"]), off / m)
            x_on = tuple(c["x_cudnn"] * t_all / (t_k / v + side_ms(64)) for v in sp)
            print(f"D64 {'causal' if causal else 'full'} {name}: chain {off:.0f} -> {m:.0f}, fused kernel {sp[0]:.2f}-{sp[1]:.2f}x, "
                  f"x cuDNN {c['x_cudnn']:.3f} -> {x_on[0]:.3f}-{x_on[1]:.3f}")
    print()
    for D in (64, 128):
        off, parts = chain(D, False)
        dq = parts["dQ_tr"] + parts["dQ_mma"] + parts["dQ_stage"]
        print(f"D{D} off chain {off:.0f}: " + ", ".join(f"{k} {v:.0f}" for k, v in parts.items()) +
              f"; the dQ path {dq:.0f} ({dq / off:.0%})")
    # the D128 three-kernel dK/dV kernel has the one-pass step's tile (128 keys x 64 queries, 8 warps, one CTA
    # an SM) without the dQ path: 2.87 ms measured (bench/RESULTS.md 2026-12-01 branch attn, call 2)
    n = steps_per_sm(128, 0)
    dkdv = 2.87e-3 * CLK / n
    off, parts = chain(128, False)
    dq = parts["dQ_tr"] + parts["dQ_mma"] + parts["dQ_stage"]
    one = [l for l in [CASES[(128, 0)]]][0]
    t_k = 10 * Z * H * S * S * 128 / (one["x_cudnn"] * one["cudnn"] * 1e12) * 1e3 - side_ms(128)
    step = t_k * 1e-3 * CLK / n
    print(f"D128 full: the dK/dV kernel's step {dkdv:.0f} clk (model without the dQ path {off - dq:.0f}: x{dkdv / (off - dq):.2f}); "
          f"the one-pass step {step:.0f}: its dQ path costs {step - dkdv:.0f} clk ({(step - dkdv) / step:.0%}), "
          f"x{(step - dkdv) / dq:.1f} the model's {dq:.0f}")
    # the goal: 0.8x cuDNN
    print()
    for (D, causal), c in CASES.items():
        n = steps_per_sm(D, causal)
        fl = 10 * Z * H * S * S * D / (2 if causal else 1)
        t_goal = fl / (0.8 * c["cudnn"] * 1e12) * 1e3 - side_ms(D)
        wgs = 1 if D == 64 else 2
        tensor = 5 * 2 * 64 * wgs * BM * D / TENSOR
        goal = t_goal * 1e-3 * CLK / n
        red_tbs = BM * D * 4 * n * SMS / (t_goal * 1e-3) / 1e12
        print(f"D{D} {'causal' if causal else 'full'}: 0.8x cuDNN = {t_goal:.2f} ms of fused kernel = {goal:.0f} clk a "
              f"CTA-step an SM (tensor floor {tensor:.0f}, {tensor / goal:.0%} busy); dQ reduce-add "
              f"{red_tbs:.2f} TB/s into L2 (FA3 D128 on an H100 at 520 TFLOP/s: ~1.6 TB/s)")


if __name__ == "__main__":
    main()
