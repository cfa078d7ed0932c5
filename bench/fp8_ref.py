"""bench/fp8_ref.py: references shared by bench.py and fp8_probe.py (torch imported when called)."""


def blockscale_ref(a, bt, sa, sw):
    """DeepSeek-V3-style block-scaled fp8 product in f32: A [M, K] e4m3 with scales sa [M, K/128]
    (1x128 blocks), BT [N, K] e4m3 with scales sw [N/128, K/128] (128x128 blocks); the sum over k-blocks
    of the block product times its scales, without TF32 (fp8 products are exact in f32; 128-term sums
    are far below the bf16 output's rounding)."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    ref = torch.zeros(a.shape[0], bt.shape[0], device=a.device, dtype=torch.float32)
    for kb in range(a.shape[1] // 128):
        blk = a[:, kb * 128:(kb + 1) * 128].float() @ bt[:, kb * 128:(kb + 1) * 128].float().t()
        ref += blk * sa[:, kb][:, None] * sw[:, kb].repeat_interleave(128)[None, :]
    return ref
