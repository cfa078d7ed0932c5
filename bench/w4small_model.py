#!/usr/bin/env python3
"""bench/w4small_model.py: where W4A16's time goes at M = 1..16 on the H200, as numbers (twenty-fifth session,
branch w4small; bench/RESULTS.md "branch w4small").  No GPU: bytes, the issue model of gemm_w4a16_splitk
(BM16 BN128, bf16x2 byte form, 4 warps, 4-stage cp.async ring) from its SASS (ptxas 13.0 sm_90a, counted
here), calibrated on the twentieth session's H200 ratios, and what TILEC_RING_IN_RANGE=1 moves.

  python3 bench/w4small_model.py
"""
import math

BW = 4.25e12       # H200 copy bandwidth measured (B/s); peak 4.8e12
CLK = 1.98e9       # SM clock under load
SMS, SMSP = 132, 4
FIXED_TIMED = 4.5  # us: one timed launch's fixed cost under do_bench (eighth session: an empty kernel)
ZERO_TIMED = 2.2   # us: C.zero_() in the timed call (eighth session, 16x4096 f32)
# SASS of one warp (ptxas 13.0 sm_90a, this branch; tools/sass_copy_path.py on the BM16 BN128 x8 kernel):
# setup + the prologue's 3 stages 714 (787 with TILEC_RING_IN_RANGE=1: the nested guards), a stage's copy
# issue in the loop 216 (235 with the switch; 21 for a stage it skips), the compute block 471 (474): 128
# HFMA2, ~80 IMAD, ~76 LOP3, 64 PRMT, 72 LDS, 32 HMMA, 8 LDSM; after the loop ~80 (the 16 REDs, estimated)
PRO_OFF, PRO_ON, STAGE_OFF, STAGE_ON, SKIP, COMPUTE_OFF, COMPUTE_ON, EPI = 714, 787, 216, 235, 21, 471, 474, 80
STAGES = 4
# H200 ratios x cuBLAS bf16 measured (twentieth session, split-K BN128 x8, bf16x2; one timed launch;
# graph: a CUDA graph of zero + kernel on rotating weight copies)
MEASURED = {(1, 4096, 4096): 1.253, (16, 4096, 4096): 1.296, (16, 14336, 4096): 1.427, (16, 4096, 14336): 1.553}
MEASURED_GRAPH = {(1, 4096, 4096): 1.337}
G = 128


def bytes_w4(M, N, K):
    w = K * N // 2
    sz = 2 * (K // G) * N * 2
    a = M * K * 2
    c = M * N * 4  # f32 C (the atomics land in L2; written back once)
    return w, sz, a, c


def bytes_bf16(M, N, K):
    return K * N * 2 + M * K * 2 + M * N * 2


def cublas_timed(M, N, K):
    """cuBLAS bf16, one timed launch under do_bench: the eighth session's 18.4 / 18.8 us at 4096^2 is
    33.7 MB at ~3.9 TB/s + 4.5 us fixed + ~5 us of the flush's dirty L2 lines written back"""
    b = bytes_bf16(M, N, K)
    return b / 3.9e12 * 1e6 + FIXED_TIMED + 5.0


def cublas_graph(M, N, K):
    b = bytes_bf16(M, N, K)
    return b / 3.9e12 * 1e6 + 1.0


def warp_instr(n, on):
    """one warp of a program of n K steps: setup and prologue, the loop's stages, compute, the REDs.  Off,
    the loop copies a stage every iteration (the last S-1 past the loop); on, only those of iterations
    that run (a prologue stage past the loop costs a skip, not its copies)"""
    pre = STAGES - 1
    if not on:
        return PRO_OFF + n * (STAGE_OFF + COMPUTE_OFF) + EPI
    pro = PRO_ON - max(0, pre - n) * (STAGE_ON - SKIP)
    return pro + max(0, n - pre) * STAGE_ON + min(n, pre) * SKIP + n * COMPUTE_ON + EPI


def split_shape(M, N, K, split, bn=128, bk=128):
    steps = K // bk
    chunk = math.ceil(math.ceil(K / split) / bk)
    ctas = math.ceil(M / 16) * math.ceil(N / bn) * split
    return chunk, ctas


def smsp_load(M, N, K, split, on):
    n, ctas = split_shape(M, N, K, split)
    per_sm = math.ceil(ctas / SMS)   # 4 resident at most (51.2 KB of shared memory each)
    return per_sm * warp_instr(n, on), n, ctas, per_sm


def main():
    print("== bytes and the copy-bandwidth time (H200, %.2f TB/s copy; 4.8 peak)" % (BW / 1e12))
    print("%-14s %8s %7s %6s %6s %8s %8s %9s %9s %8s" % ("shape", "int4 MB", "S,Z MB", "A MB", "C MB", "W4 MB",
          "W4 us", "bf16 MB", "bf16 us", "bytes x"))
    for (M, N, K) in MEASURED:
        w, sz, a, c = bytes_w4(M, N, K)
        tot = w + sz + a + c
        bb = bytes_bf16(M, N, K)
        print("%-14s %8.2f %7.2f %6.2f %6.2f %8.2f %8.2f %9.1f %9.2f %8.2f" % ("%dx%dx%d" % (M, N, K), w / 1e6, sz / 1e6,
              a / 1e6, c / 1e6, tot / 1e6, tot / BW * 1e6, bb / 1e6, bb / BW * 1e6, bb / tot))
    print()
    print("== 3x cuBLAS in us (cuBLAS estimated: bytes at 3.9 TB/s + fixed; timed = + 4.5 us launch + ~5 us dirty L2)")
    for (M, N, K), r in MEASURED.items():
        ct, cg = cublas_timed(M, N, K), cublas_graph(M, N, K)
        t = ct / r
        print("%-14s cuBLAS timed ~%5.1f us, graph ~%5.1f; tilec now timed ~%5.1f (kernel ~%5.1f after %.1f launch + %.1f "
              "zero); 3x = %5.1f us timed, %5.1f graph" % ("%dx%dx%d" % (M, N, K), ct, cg, t, t - FIXED_TIMED - ZERO_TIMED,
                                                          FIXED_TIMED, ZERO_TIMED, ct / 3, cg / 3))
    print()
    print("== the issue model: warp instructions a program (n K steps) = off %d + n x (%d + %d) + %d; on %d + "
          "(n - 3) x %d + 3 x %d + n x %d + %d" % (PRO_OFF, STAGE_OFF, COMPUTE_OFF, EPI, PRO_ON, STAGE_ON, SKIP,
                                                   COMPUTE_ON, EPI))
    print("%-14s %5s %5s %5s %6s %10s %10s %6s %10s %10s" % ("shape", "split", "steps", "CTAs", "CTA/SM", "off/SMSP",
          "on/SMSP", "on/off", "IPC (cal)", "on kernel"))
    for (M, N, K), r in MEASURED.items():
        t_kernel = cublas_timed(M, N, K) / r - FIXED_TIMED - ZERO_TIMED
        off8 = smsp_load(M, N, K, 8, False)[0]
        ipc = off8 / (t_kernel * 1e-6 * CLK)
        for split in (4, 8, 16):
            off, n, ctas, per_sm = smsp_load(M, N, K, split, False)
            on = smsp_load(M, N, K, split, True)[0]
            print("%-14s %5d %5d %5d %6d %10d %10d %6.3f %10.2f %8.1f us" % ("%dx%dx%d" % (M, N, K), split, n, ctas, per_sm,
                  off, on, on / off, ipc, on / (ipc * CLK) * 1e6))
    print()
    print("== predicted x cuBLAS bf16, split x8, TILEC_RING_IN_RANGE=1 (same IPC; the timed launch keeps its 4.5 + 2.2 us)")
    for (M, N, K), r in MEASURED.items():
        ct = cublas_timed(M, N, K)
        t = ct / r
        k = t - FIXED_TIMED - ZERO_TIMED
        f = smsp_load(M, N, K, 8, True)[0] / smsp_load(M, N, K, 8, False)[0]
        t2 = FIXED_TIMED + ZERO_TIMED + k * f
        line = "%-14s timed %.3f -> %.3f" % ("%dx%dx%d" % (M, N, K), r, ct / t2)
        if (M, N, K) in MEASURED_GRAPH:
            cg = cublas_graph(M, N, K)
            tg = cg / MEASURED_GRAPH[(M, N, K)]
            zg = 1.0  # the zeroing kernel's node in the graph
            line += "; graph %.3f -> %.3f" % (MEASURED_GRAPH[(M, N, K)], cg / (zg + (tg - zg) * f))
        print(line)
    print()
    print("== what 3x would take (graph timing, the zeroing kernel gone, IPC 0.7): warp instructions a program")
    for (M, N, K) in MEASURED:
        cg = cublas_graph(M, N, K)
        budget = cg / 3 - 1.0  # a kernel's start and tail in the graph, ~1 us
        w, sz, a, c = bytes_w4(M, N, K)
        mem = (w + sz + a) / BW * 1e6
        n, ctas = split_shape(M, N, K, 8)
        per_sm = math.ceil(ctas / SMS)
        per_warp = budget * 1e-6 * CLK * 0.7 / per_sm
        print("%-14s 3x = %5.2f us a launch; the kernel <= %5.2f us: its bytes (%5.2f us at the copy bandwidth) at "
              "%3.0f %% of it; at x8 (%d steps, %d CTAs an SM) <= %5.0f warp instructions a program (now %d: %.2fx "
              "fewer)" % ("%dx%dx%d" % (M, N, K), cg / 3, budget, mem, 100 * mem / budget, n, per_sm, per_warp,
                          warp_instr(n, False), warp_instr(n, False) / max(per_warp, 1)))


if __name__ == "__main__":
    main()
