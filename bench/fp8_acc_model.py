"""fp8_acc_model.py: why `tilec run --device` on gemm_fp8_blockscale.tile finds a few outputs out of
the bf16 tolerance (atol 0.01, rtol 0.016) against the interpreter (eighteenth session: 79 of 1.98M at
M 1100 N 1800 K 1040, max abs 0.5, max rel 1.12): a CPU model, no GPU.  The interpreter sums each
128-K block exactly (f32); the H200's fp8 wgmma keeps fewer bits in its accumulation (DeepSeek-V3's
report: about 14).  Modelled as the block's partial sum truncated to B fraction bits after each K=32
wgmma, on tilec run's random inputs (fp8 codes 2^-3..2^1, scales uniform in [-1, 1)), then the f32
fma into the accumulator and the bf16 store, against the same with exact sums.  Eighteenth session
(500x800x1040): B 13: 0 of 400k out of tolerance, B 12: 4 (1.0e-5), B 10: 2137 (5.3e-3); max abs 0.5-1
(one bf16 unit at |x| 64..128, inside the tolerance there).  The H200's 4.0e-5 sits at B 12..13: the
misses are near-zero outputs (cancellation; outputs' RMS 25) whose absolute error from the tensor
core's accumulation exceeds atol 0.01 -- the arithmetic, not the kernel's loads; the default does the
same (bench/pending_scalepipe.sh runs it beside TILEC_LOAD_AHEAD=1).
Second part (branch fp8tol): the tolerance tilec run uses for a kernel with an 8-bit float dot,
atol = max(atol_bf16, 2^-10 max|ref|), rtol the dtype's: at K 1040 and 4096, B 12 and 13, the largest
|gpu - ref| over max|ref| and over rms(ref), the count out of that tolerance (must be 0), and the same
for three wrong kernels (one k-block dropped, one k-block's scale applied twice, one 128x128 tile
from the wrong k-block's scales), which must fail.
    /usr/bin/python3 bench/fp8_acc_model.py [--tol-only]   (numpy; ~3 min; part 2 alone ~2 min)"""
import numpy as np
rng = np.random.default_rng(1)
M, N, K = 500, 800, 1040
KB = (K + 127) // 128
def f8(shape):  # tilec run: sign, exponent 4..8 (bias 7: 2^-3..2^1), random 3-bit mantissa
    e = rng.integers(4, 9, shape); m = rng.integers(0, 8, shape); s = rng.integers(0, 2, shape)
    return np.where(s == 1, -1.0, 1.0) * 2.0 ** (e - 7) * (1 + m / 8)
A, W = f8((M, K)), f8((N, K))
SA = rng.uniform(-1, 1, (M, KB)).astype(np.float32).astype(np.float64)
SW = rng.uniform(-1, 1, ((N + 127) // 128, KB)).astype(np.float32).astype(np.float64)
def trunc(x, bits):  # keep `bits` fraction bits, toward zero
    m, e = np.frexp(x)
    return np.ldexp(np.trunc(m * 2.0 ** (bits + 1)) / 2.0 ** (bits + 1), e)
def bf16(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)
def blockscale(A, W, SA, SW, bits, wrong=None):
    """The block-scaled GEMM as the H200 runs it: each 128-K block's sum truncated to `bits` fraction
    bits after every K=32 wgmma (0: exact), scaled into the f32 accumulator, stored bf16; `wrong`
    makes one of the wrong kernels of part 2 ("drop", "scale2", "tile")."""
    K, N, KB = A.shape[1], W.shape[0], SA.shape[1]
    swn = np.repeat(SW, 128, axis=0)[:N]
    acc = np.zeros((A.shape[0], N))
    for kb in range(KB):
        p = np.zeros((A.shape[0], N))
        for c in range(kb * 128, min(K, kb * 128 + 128), 32):
            p = p + A[:, c:c + 32] @ W[:, c:c + 32].T
            if bits: p = trunc(p, bits)
        s = SA[:, kb][:, None] * swn[:, kb][None, :]
        if wrong == "drop" and kb == KB // 2: continue
        if wrong == "scale2" and kb == KB // 2: s = s * SA[:, kb][:, None]
        if wrong == "tile":
            s = s.copy(); kw = (kb + 1) % KB
            s[128:256, 128:256] = (SA[128:256, kw][:, None] * swn[128:256, kw][None, :])
        acc = (acc + p * s.astype(np.float32)).astype(np.float32)
    return bf16(acc)
def run(bits):
    return blockscale(A, W, SA, SW, bits)
import sys
if '--tol-only' not in sys.argv[1:]:  # part 2 alone: --tol-only
    want = run(0)
    for bits in (13, 12, 10):
        got = run(bits)
        err = np.abs(got - want)
        bad = err > 0.01 + 0.016 * np.abs(want)
        print(f"trunc to {bits} fraction bits a K=32 step: {bad.sum()} of {M*N} out of tolerance "
              f"({bad.mean():.1e}; the H200 run: 79 of 1.98M = 4.0e-5), max abs {err.max():.3g}")
    print("RMS of the output", np.sqrt((want**2).mean()))

# ---- part 2: the widened tolerance for 8-bit float dots (tools/tilec.c f8_dot_tolerance) ----
def model(M, N, K, bits, wrong=None):
    KB = (K + 127) // 128
    A, W = f8((M, K)), f8((N, K))
    SA = rng.uniform(-1, 1, (M, KB)).astype(np.float32).astype(np.float64)
    SW = rng.uniform(-1, 1, ((N + 127) // 128, KB)).astype(np.float32).astype(np.float64)
    def one(bits, wrong):
        return blockscale(A, W, SA, SW, bits, wrong)
    ref = one(0, None)
    return ref, [(b, one(b, None)) for b in bits] + [(w, one(bits[0], w)) for w in (wrong or [])]
print("\ntolerance atol = max(0.01, 2^-10 max|ref|), rtol 0.016 (bf16 output):")
for K in (1040, 4096):
    ref, outs = model(384, 512, K, (13, 12), ("drop", "scale2", "tile"))
    mx, rms = np.abs(ref).max(), np.sqrt((ref ** 2).mean())
    atol = max(0.01, 2.0 ** -10 * mx)
    for name, got in outs:
        err = np.abs(got - ref)
        bad = (err > atol + 0.016 * np.abs(ref)).sum()
        need = (err - 0.016 * np.abs(ref)).max() / mx  # the atol this output needs, over max|ref|
        print(f"K {K} {str(name):6s}: max|err|/max|ref| {err.max() / mx:.2e}, needed atol/max|ref| {need:.2e} "
              f"(2^-10 = 9.8e-04), "
              f"/rms(ref) {err.max() / rms:.2e}; out of tolerance {bad} of {ref.size} "
              f"(atol {atol:.3g}, max|ref| {mx:.3g}, rms {rms:.3g}; bf16 atol alone: "
              f"{(err > 0.01 + 0.016 * np.abs(ref)).sum()})")

# ---- part 3: plain fp8 GEMMs (gemm_fp8.tile, no scales): the tensor core's chain over the whole K
# (fp8-acc=fast: every k32 step's sum truncated, the running sum included) or restarted every 128
# (promote: added into f32 every 4 k32 steps), against f32 sums; fast's bias grows with K (truncation
# toward zero of a running sum), so the CLI gives fp8-acc=fast 2^-7 of max|ref|
print("\nplain fp8 GEMM (no scales), same tolerance:")
for K in (1040, 4096):
    M, N = 256, 384
    A, W = f8((M, K)), f8((N, K))
    ref = bf16(A @ W.T)
    mx, rms = np.abs(ref).max(), np.sqrt((ref ** 2).mean())
    atol = max(0.01, 2.0 ** -10 * mx)
    for mode in ("fast", "promote"):
        for bits in (13, 12):
            acc, p = np.zeros((M, N)), np.zeros((M, N))
            for c in range(0, K, 32):
                p = trunc(p + A[:, c:c + 32] @ W[:, c:c + 32].T, bits)
                if mode == "promote" and (c // 32) % 4 == 3: acc, p = acc + p, np.zeros((M, N))
            got = bf16(acc + p)
            err = np.abs(got - ref)
            need = (err - 0.016 * np.abs(ref)).max() / mx
            bad = (err > atol + 0.016 * np.abs(ref)).sum()
            if mode == "fast": bad = (err > max(0.01, 2.0 ** -7 * mx) + 0.016 * np.abs(ref)).sum()
            print(f"K {K} {mode:7s} B {bits}: max|err| {err.max():.3g}, needed atol/max|ref| {need:.2e} "
                  f"(atol {'2^-7 = 7.8e-03' if mode == 'fast' else '2^-10 = 9.8e-04'}); out of tolerance {bad} of {ref.size} "
                  f"(max|ref| {mx:.3g}, rms {rms:.3g}; bf16 atol alone: {(err > 0.01 + 0.016 * np.abs(ref)).sum()})")
    # a subtle wrong kernel: the ragged last k-tile (K % 32 or the last 16 columns) dropped
    tail = K % 128 or 16
    err = np.abs(bf16(A[:, :K - tail] @ W[:, :K - tail].T) - ref)
    need = (err - 0.016 * np.abs(ref)).max() / mx
    print(f"K {K} last {tail} columns dropped: needed atol/max|ref| {need:.2e}: out of 2^-10's tolerance "
          f"{(err > atol + 0.016 * np.abs(ref)).sum()}, of 2^-7's {(err > 2.0 ** -7 * mx + 0.016 * np.abs(ref)).sum()}")
