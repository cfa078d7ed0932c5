"""w4a16_ref.py: what the W4A16 GPU tests (test_w4a16.py, test_w4a16_packed.py, test_hoist_operand.py) share:
a GPTQ-style case (bf16 A, int4 weights eight to an int32 word along K, a bf16 scale and zero point per group
of G rows), its fp64 reference and the GEMM tolerance the unit tests state: |C - ref| <= 2^-8 |ref| + (K + 1)
2^-23 (|A| |W|) + 1e-6 (a bf16 output of an f32 accumulation over K products)."""


def gptq_case(torch, gen, M, N, K, G):
    """A [M, K] in [-1, 1), Wq [K / 8, N] random words, S in [0.01, 0.1), Z in [-0.5, 0.5), on the CPU (drawn
    from `gen` in that order)."""
    a = (torch.rand(M, K, generator=gen) * 2 - 1).to(torch.bfloat16)
    wq = torch.randint(-2 ** 31, 2 ** 31 - 1, (K // 8, N), generator=gen, dtype=torch.int32)
    s = (torch.rand(K // G, N, generator=gen) * 0.09 + 0.01).to(torch.bfloat16)
    z = (torch.rand(K // G, N, generator=gen) - 0.5).to(torch.bfloat16)
    return a, wq, s, z


def gptq_weights(torch, wq, s, z, G):
    """W [K, N] bf16, W[k, n] = bf16(q s - z) (q s - z in f32) with q nibble k % 8 of word k / 8 and (s, z) of
    group k / G, on the device of wq, s and z."""
    K = wq.shape[0] * 8
    shifts = (4 * (torch.arange(K, device=wq.device) % 8)).view(K, 1)
    q = ((wq.repeat_interleave(8, 0) >> shifts) & 15).float()
    return (q * s.float().repeat_interleave(G, 0) - z.float().repeat_interleave(G, 0)).to(torch.bfloat16)


def gptq_reference(torch, a, wq, s, z, G):
    """(A W, |A| |W|) in fp64, W = gptq_weights."""
    w = gptq_weights(torch, wq, s, z, G)
    return a.double() @ w.double(), a.double().abs() @ w.double().abs()


def gemm_within(torch, got, want, mag, K):
    """(all finite and within the tolerance above, the largest |got - want|)."""
    d = (got.double() - want).abs()
    tol = 2 ** -8 * want.abs() + (K + 1) * 2.0 ** -23 * mag + 1e-6
    return bool(torch.isfinite(got.double()).all()) and bool((d <= tol).all()), float(d.max())
