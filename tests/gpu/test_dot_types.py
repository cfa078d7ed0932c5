#!/usr/bin/env python3
"""test_dot_types.py: the newer tensor-core operand paths on the GPU against torch.

examples/quant_int8_gemm.tile (i8 x i8 -> i32 dot, per-row and per-column f32 scales, bf16 out):
random int8 over the whole range [-128, 127], ragged sizes (1, tile - 1, tile + 1, primes,
K = 511), outputs poisoned with NaN.  The reference is torch: the exact integer product (int64,
checked against torch._int_mm where its shape rules allow), then `acc.float() * sa[:, None] *
sw[None, :]` in f32 and the bf16 rounding: the same operations as the kernel's epilogue, so the
GPU must match it BIT FOR BIT (tolerance 0: the i32 sum is exact, two f32 multiplies and one
rounding are the same on both sides).  Each cutlass kernel also under TILEC_WS=coop.

examples/gemm_tf32.tile (dot(..., precision = "tf32")): random f32 whose low 13 mantissa bits
are random (so dropping them matters).  Reference: fp64 product of the operands truncated to
tf32 (sign, exponent, top 10 mantissa bits: what the language specifies and the interpreter
does).  Tolerance: |gpu - ref| <= 2^-17 (|A| |B|) elementwise (f32 sums of K <= 1040 exact
products, well above the f32 rounding of the sums: at most K 2^-24 in the worst case, about
sqrt(K) 2^-24 typically).  Self-test: the reference from operands ROUNDED to nearest tf32 must
fail the same check on these data (so the test tells truncation from rounding), and the distance
of the GPU result to both references is printed.

examples/gemm_fp8.tile cutlass_gemm_fp8_nn (8-bit B kept [K, N] on wgmma: each k-step transposed
through shared memory), promote (the cooperative kernel: the producer warpgroup transposes into one
K-major buffer per stage; the element copy at K = 511) and fast 128x128 on 8 warps (the TMA ring:
the consumers transpose into two buffers, a wgmma group in flight): fp8 inputs are exact in f32, so the reference is the fp64 product;
tolerance ||C - ref|| / ||ref|| <= 1e-2 and max |C - ref| <= 2e-2 max |ref| (bf16 output, the
tensor core's ~13-bit sums over 128 K (promote) or over all of K (fast)), and the same kernel
must not be closer to the product with B transposed wrongly (self-test: ref of B^T differs).
Each size with B N-major (M > 128: the K-major-B form after the transpose kernel), K-major (the
form on B itself), K-major with a K + 3 byte row pitch and contiguous along neither (the kernel),
the transpose forced at every M and the form off; where the form runs, bit-identical to
cutlass_gemm_fp8_tn at the form's tile on B^T (TN's default under promote and fast since fp8nn4;
TN at 128x128 s4 with TILEC_KMAJOR_B_TILE=0); a CUDA graph of transpose-form launches
replayed on new data.
examples/gemm_fp8_blockscale.tile (1x128 activation, 128x128 weight scales; 128x256 x 4 on sm_90a) and
its 128x128 spelling (bench/variants/gemm_fp8_blockscale_128.tile, the example until the twenty-fifth
session): fp64 reference sum_kb (A_kb W_kb^T) SA[:, kb] SW[n / 128, kb]; the same tolerance.

Section bs (--only bs): the blockscale example with TILEC_LOAD_AHEAD=1 (the scales loaded one
k-step ahead, carried), its 128x128 spelling (_128.tile) and the hand-written select (_where.tile),
each bit-identical to the example and within the same tolerance of the fp64 reference, at the
ragged sizes and three more.

examples/gemm_fp8.tile cutlass_gemm_fp8_tn: the promote forms against the default kernel (bit for
bit where the sums are the same) and the fp64 product (section fp8tn, also under fp8); the default is
the target's tile (128x256 x 4 on sm_90a), -D ARCH_SPECIFIC=0 the other targets' (128x128 x 5).
Fast accumulation at that tile: the default (cooperative on sm_90a) and TILEC_WS=off (the TMA ring)
bit-identical to each other and within the fp8 tolerance of the fp64 product.

  python3 tests/gpu/test_dot_types.py [--lib build/libtilec.so] [--examples examples] [--only int8,tf32,fp8,fp8tn,bs]
Exit 0 pass, 1 fail, 77 no GPU / no torch.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_py import examples_dir, start  # noqa: E402


SIZES = [(1, 1, 1), (127, 255, 129), (129, 257, 63), (131, 263, 511), (257, 509, 127), (1000, 1064, 1040),
         (333, 517, 4096)]


def main():
    env = start("test_dot_types")
    if env is None:
        return 77
    torch, tilec = env
    exdir = examples_dir()
    seed = int(os.environ.get("TILEC_SEED", "20261201"))
    gen = torch.Generator(device="cpu").manual_seed(seed)
    print("test_dot_types: seed", seed)
    fails = 0
    only = (sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else "int8,tf32,fp8").split(",")

    def compiled(name, kernel, env=None, defines=None, **opts):
        old = {}
        for k, v in (env or {}).items():
            old[k] = os.environ.get(k)
            os.environ[k] = v
        try:
            k = tilec.compile(os.path.join(exdir, name), defines, **opts)[kernel]
            k.load(0)  # switches read at load (TILEC_KMAJOR_B*) under env too
            return k
        finally:
            for k, v in old.items():
                if v is None: os.environ.pop(k, None)
                else: os.environ[k] = v

    # ---- int8 ---------------------------------------------------------------------------
    ks = [("quant_int8_gemm", None), ("cutlass_quant_int8_gemm", None), ("cutlass_quant_int8_gemm", {"TILEC_WS": "coop"})]
    if "int8" not in only: ks = []
    for kname, env in ks:
        k = compiled("quant_int8_gemm.tile", kname, env)
        for M, N, K in SIZES:
            a = torch.randint(-128, 128, (M, K), generator=gen, dtype=torch.int8)
            w = torch.randint(-128, 128, (N, K), generator=gen, dtype=torch.int8)
            sa = torch.rand(M, generator=gen) * 0.02 + 1e-3
            sw = torch.rand(N, generator=gen) * 0.02 + 1e-3
            acc = a.long() @ w.long().t()  # exact
            ad, wd = a.cuda(), w.cuda()
            if M > 16 and K % 8 == 0 and N % 8 == 0:  # torch._int_mm's shape rules
                im = torch._int_mm(ad, wd.t()).cpu().long()
                if not torch.equal(im, acc):
                    print(f"FAIL reference: torch._int_mm differs from the int64 product at {M}x{N}x{K}")
                    fails += 1
            ref = (acc.to(torch.int32).float() * sa[:, None] * sw[None, :]).to(torch.bfloat16)
            y = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            k(ad, wd, sa.cuda(), sw.cuda(), y)
            torch.cuda.synchronize()
            y = y.cpu()
            bad = (y.view(torch.int16) != ref.view(torch.int16)).sum().item()
            tag = f"{kname}{' ' + str(env) if env else ''} {M}x{N}x{K}"
            if bad:
                i = (y.view(torch.int16) != ref.view(torch.int16)).nonzero()[0].tolist()
                print(f"FAIL {tag}: {bad} of {M * N} bf16 outputs differ from torch; first at {i}: "
                      f"gpu {y[i[0], i[1]].item()}, torch {ref[i[0], i[1]].item()}")
                fails += 1
            else:
                print(f"ok {tag}: bit-identical to torch")

    # ---- tf32 ---------------------------------------------------------------------------
    def trunc(x):
        return (x.view(torch.int32) & -8192).view(torch.float32)

    def rn(x):  # round to nearest even at 10 mantissa bits
        i = x.view(torch.int32).long()
        i = (i + 0xFFF + ((i >> 13) & 1)) & ~0x1FFF
        return i.to(torch.int32).view(torch.float32)

    for kname in ("gemm_tf32", "cutlass_gemm_tf32_tn") if "tf32" in only else ():
        k = compiled("gemm_tf32.tile", kname)
        for M, N, K in SIZES[:6]:
            a = torch.randn(M, K, generator=gen)
            b = torch.randn(K, N, generator=gen)
            ref = trunc(a).double() @ trunc(b).double()
            ref_rn = rn(a).double() @ rn(b).double()
            scale = a.abs().double() @ b.abs().double()
            tol = 2.0 ** -17
            c = torch.full((M, N), float("nan"), device="cuda")
            bb = b.t().contiguous().cuda() if kname.endswith("_tn") else b.cuda()
            k(a.cuda(), bb, c)
            torch.cuda.synchronize()
            c = c.cpu().double()
            err = ((c - ref).abs() / scale).max().item()
            err_rn = ((c - ref_rn).abs() / scale).max().item()
            self_rn = ((ref_rn - ref).abs() / scale).max().item()
            tag = f"{kname} {M}x{N}x{K}"
            if not (err <= tol) or c.isnan().any():
                print(f"FAIL {tag}: max |gpu - ref_trunc| / (|A||B|) = {err:.3g} > {tol:.3g} "
                      f"(to the round-to-nearest reference: {err_rn:.3g})")
                fails += 1
            elif K >= 63 and not self_rn > tol:
                print(f"FAIL self-test {tag}: the rounded reference passes too ({self_rn:.3g}): the data cannot tell")
                fails += 1
            else:
                print(f"ok {tag}: max err/(|A||B|) {err:.3g} (to the rounded reference {err_rn:.3g})")
    # ---- fp8 B [K, N] on wgmma, block scales ------------------------------------------------
    def close(c, ref, tag, other=None):
        nonlocal fails
        c = c.double()
        err = ((c - ref).norm() / ref.norm()).item() if ref.norm() > 0 else (c - ref).abs().max().item()
        mx = (c - ref).abs().max().item()
        ok = err <= 1e-2 and mx <= 2e-2 * max(ref.abs().max().item(), 1e-30) and not c.isnan().any()
        if other is not None and ok:
            e2 = ((c - other).norm() / other.norm()).item()
            if e2 <= 1e-2:
                print(f"FAIL self-test {tag}: as close to the wrong reference ({e2:.3g})")
                fails += 1
                return
        print(f"{'ok' if ok else 'FAIL'} {tag}: rel err {err:.3g}, max abs err {mx:.3g}")
        if not ok:
            fails += 1

    f8 = torch.float8_e4m3fn
    # ---- fp8 TN promote forms (cutlass_gemm_fp8_tn, B stored [N, K]) ------------------------
    # TILEC_PROMOTE_PARTS=1 (emit_wgmma.c; sixteenth session): 256x128 and 128x256 tiles on the
    # cooperative kernel, each warpgroup's accumulator promoted a 64x128 part at a time through a
    # one-part temporary.  The same m64n128k32 instructions, the same 128-K groups and the same f32
    # adds in the same order as the default 128x128 kernel, so the output must be BIT-IDENTICAL to
    # it, and within the fp8 tolerance of the fp64 product; the overlapped groups
    # (TILEC_PROMOTE_OVERLAP=1, 64-K groups: other sums) only the latter.  Sizes: the ragged list,
    # K = 511 (a zero-filled last k-step), and 1537x2600 (7 x 21 = 147 tiles of 256x128 > 132 SMs:
    # a persistent CTA runs two).  --only fp8tn runs this section alone.
    if "fp8" in only or "fp8tn" in only:
        TN = "cutlass_gemm_fp8_tn"
        tn_default = compiled("gemm_fp8.tile", TN)
        PARTS = {"TILEC_PROMOTE_PARTS": "1"}
        # the default is the target's tile (ARCH_SPECIFIC: 128x256 s4 on sm_90a); -D ARCH_SPECIFIC=0
        # compiles the other targets' 128x128 s5 here, the same sums in the same order: bit-identical
        tn_forms = (("cutlass_gemm_fp8_tn 128x128 s5, the other targets' tile (-D ARCH_SPECIFIC=0)",
                     compiled("gemm_fp8.tile", TN, None, {"ARCH_SPECIFIC": 0}), True),
                    ("cutlass_gemm_fp8_tn 256x128 s4 TILEC_PROMOTE_PARTS=1",
                     compiled("gemm_fp8.tile", TN, PARTS, {"BM": 256, "BN": 128}, stages=4), True),
                    ("cutlass_gemm_fp8_tn 128x256 s4 TILEC_PROMOTE_PARTS=1",
                     compiled("gemm_fp8.tile", TN, PARTS, {"BN": 256}, stages=4), True),
                    ("cutlass_gemm_fp8_tn 256x128 s4 TILEC_PROMOTE_PARTS=1 TILEC_CLUSTER=1x2 (A multicast)",
                     compiled("gemm_fp8.tile", TN, dict(PARTS, TILEC_CLUSTER="1x2"), {"BM": 256, "BN": 128}, stages=4), True),
                    ("cutlass_gemm_fp8_tn 128x128 w4 s6 ping-pong TILEC_PROMOTE_PARTS=1",
                     compiled("gemm_fp8.tile", TN, dict(PARTS, TILEC_WS="pingpong"), {"BM": 128, "BN": 128}, warps=4, stages=6),
                     True),
                    ("cutlass_gemm_fp8_tn TILEC_PROMOTE_OVERLAP=1 (cooperative)",
                     compiled("gemm_fp8.tile", TN, {"TILEC_PROMOTE_OVERLAP": "1"}, {"BN": 128, "S": 5}), False))
        # fast accumulation at the target's tile (128x256 s4 on sm_90a): the cooperative kernel by
        # default (route_pipeline; eighteenth session, branch fp8coop), TILEC_WS=off the TMA ring.  The
        # same m64n256k32 wgmma chain over all of K in the same order, so the two must be
        # BIT-IDENTICAL, and within the fp8 tolerance of the fp64 product.  (The switch is set at the
        # launch too: K = 511 runs the no-TMA form, compiled at its first launch.)
        WS_OFF = {"TILEC_WS": "off"}
        tn_fast = compiled("gemm_fp8.tile", TN, None, None, fp8_acc="fast")
        tn_fast_ring = compiled("gemm_fp8.tile", TN, WS_OFF, None, fp8_acc="fast")
        for M, N, K in SIZES + [(256, 256, 256), (200, 304, 511), (513, 385, 300), (1537, 2600, 129)]:
            a = torch.randn(M, K, generator=gen).to(f8)
            bt = torch.randn(N, K, generator=gen).to(f8)
            ref = a.double() @ bt.double().t()
            wrong = a.double() @ bt.double() if M == N == K and M > 1 else None
            c0 = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            tn_default(a.cuda(), bt.cuda(), c0, 0.5, 2.0)
            torch.cuda.synchronize()
            close(c0.cpu(), ref, f"{TN} (default) {M}x{N}x{K}", wrong)
            for tag, k, same in tn_forms:
                c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                k(a.cuda(), bt.cuda(), c, 0.5, 2.0)
                torch.cuda.synchronize()
                close(c.cpu(), ref, f"{tag} {M}x{N}x{K}", wrong)
                if same:
                    diff = (c.view(torch.int16) != c0.view(torch.int16)).sum().item()
                    print(f"{'FAIL' if diff else 'ok'} {tag} {M}x{N}x{K}: against the default kernel: {diff} of "
                          f"{M * N} outputs differ")
                    fails += 1 if diff else 0
            cf = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            tn_fast(a.cuda(), bt.cuda(), cf, 0.5, 2.0)
            torch.cuda.synchronize()
            close(cf.cpu(), ref, f"{TN} fast (default: cooperative at 128x256 s4) {M}x{N}x{K}", wrong)
            cr = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            os.environ.update(WS_OFF)
            try:
                tn_fast_ring(a.cuda(), bt.cuda(), cr, 0.5, 2.0)
                torch.cuda.synchronize()
            finally:
                os.environ.pop("TILEC_WS", None)
            close(cr.cpu(), ref, f"{TN} fast TILEC_WS=off (the TMA ring) {M}x{N}x{K}", wrong)
            diff = (cr.view(torch.int16) != cf.view(torch.int16)).sum().item()
            print(f"{'FAIL' if diff else 'ok'} {TN} fast ring against fast cooperative {M}x{N}x{K}: {diff} of "
                  f"{M * N} outputs differ")
            fails += 1 if diff else 0
    def blockscale_case(M, N, K):
        """fresh fp8 A [M, K], W [N, K], scales SA [M, KB], SW [NB, KB] in [0.5, 1.5) and the fp64
        reference sum_kb (A_kb W_kb^T) SA[:, kb] SW[n / 128, kb]"""
        a = torch.randn(M, K, generator=gen).to(f8)
        w = torch.randn(N, K, generator=gen).to(f8)
        KB, NB = (K + 127) // 128, (N + 127) // 128
        sa = torch.rand(M, KB, generator=gen) + 0.5
        sw = torch.rand(NB, KB, generator=gen) + 0.5
        ref = torch.zeros(M, N, dtype=torch.float64)
        for kb in range(KB):
            blk = a[:, kb * 128:(kb + 1) * 128].double() @ w[:, kb * 128:(kb + 1) * 128].double().t()
            ref += blk * sa[:, kb].double()[:, None] * sw[:, kb].double().repeat_interleave(128)[:N][None, :]
        return a, w, sa, sw, ref

    # ---- block-scaled fp8 with the scales loaded one k-step ahead (--only bs) ----------------
    # TILEC_LOAD_AHEAD=1 (passes/load_ahead.c; eighteenth session): the scale loads of k-block
    # kb + 1 issued during k-step kb and carried (the first before the loop, the one past the last
    # k-block masked off by the view's bounds).  The values and the arithmetic are the default's, so
    # the output must be BIT-IDENTICAL to the default kernel's, and within the fp8 tolerance of the
    # fp64 reference.  Sizes: the ragged list (K = 63 .. 4096: one k-step, a few, many),
    # 1537x2600x1040 (9 k-blocks; 13 x 21 = 273 tiles: a persistent CTA runs several, each tile's
    # first load before its loop), 200x304x2048 and 129x257x8192 (KB 16, 64).
    if "bs" in only:
        BS = "cutlass_gemm_fp8_blockscale"
        bs_default = compiled("gemm_fp8_blockscale.tile", BS)
        bs_envs = [{"TILEC_LOAD_AHEAD": "1"}]
        bs_forms = [(f"{BS} " + " ".join(f"{n}={v}" for n, v in e.items()), compiled("gemm_fp8_blockscale.tile", BS, e), e)
                    for e in bs_envs]
        # The example is the per-tensor kernel's sm_90a tile, 128x256 x 4 (a column's weight scale a
        # gather over (n0 + iota) / 128, passes/gather_runs.c's two scalar loads and a select); the
        # 128x128 spelling (_128.tile: one scalar load) and the hand-written select (..._where.tile)
        # compute each output element by the same m64n128k32 sums, scale products and fma in the same
        # order (the 64x128 parts of the wide tile), so BIT-IDENTICAL to the example.
        vdir = os.path.abspath(os.path.join(exdir, "..", "bench", "variants"))  # (join keeps an absolute name)
        bs_forms += [(f"{BS} 128x128 (_128.tile)",
                      compiled(os.path.join(vdir, "gemm_fp8_blockscale_128.tile"), BS), {}),
                     (f"{BS} wide 128x256, the select by hand (_where)",
                      compiled(os.path.join(vdir, "gemm_fp8_blockscale_where.tile"), BS), {})]
        for M, N, K in SIZES + [(1537, 2600, 1040), (200, 304, 2048), (129, 257, 8192)]:
            a, w, sa, sw, ref = blockscale_case(M, N, K)
            args = (a.cuda(), w.cuda(), sa.cuda(), sw.cuda())
            c0 = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            bs_default(*args, c0)
            torch.cuda.synchronize()
            close(c0.cpu(), ref, f"{BS} (default) {M}x{N}x{K}")
            for tag, k, e in bs_forms:
                c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                # (the switches set at the launch too: a K whose rows TMA cannot take runs the kernel's
                # no-TMA form, compiled at its first such launch under the environment of that launch)
                os.environ.update(e)
                try:
                    k(*args, c)
                    torch.cuda.synchronize()
                finally:
                    for n in e: os.environ.pop(n, None)
                close(c.cpu(), ref, f"{tag} {M}x{N}x{K}")
                diff = (c.view(torch.int16) != c0.view(torch.int16)).sum().item()
                print(f"{'FAIL' if diff else 'ok'} {tag} {M}x{N}x{K}: against the default kernel: {diff} of "
                      f"{M * N} outputs differ")
                fails += 1 if diff else 0
    if "fp8" not in only:
        print("test_dot_types:", "FAIL" if fails else "PASS", f"({fails} failures)")
        return 1 if fails else 0

    # B's views (lib/kmajor_b.h: the launcher picks the K-major-B form by B's strides): N-major
    # (contiguous [K, N]: M > 128 the transpose kernel into the workspace, then the form; else the
    # kernel); K-major (an [N, K] weight's .t(): the form on B's memory); K-major with a row pitch
    # of K + 3 bytes (no TMA: the form's fallback copy); contiguous along neither (the kernel, its
    # element copy)
    def views(b):  # (the bytes moved as uint8: copies of fp8 tensors need no fp8 kernels)
        K, N = b.shape
        bu = b.view(torch.uint8)
        yield "N-major", b.cuda()
        yield "K-major", bu.t().contiguous().cuda().t().view(b.dtype)
        if K > 1 and N > 1:
            wide = torch.zeros(N, K + 3, dtype=torch.uint8)
            wide[:, :K] = bu.t()
            yield "K-major pitch K+3", wide.cuda()[:, :K].t().view(b.dtype)
            both = torch.zeros(K, 2 * N, dtype=torch.uint8)
            both[:, ::2] = bu
            yield "strided", both.cuda()[:, ::2].view(b.dtype)

    NN = "cutlass_gemm_fp8_nn"
    # where a kernel runs its K-major-B form (B K-major at any M, N-major at M > 128), its output must
    # be BIT-IDENTICAL to cutlass_gemm_fp8_tn on B^T at the form's tile (the same code on the same
    # values: any byte of B misplaced by the transpose or the view shows): since branch fp8nn4 TN's
    # default (128x256 x 4 on sm_90a, passes/kmajor_form.c), under promote and fast; with
    # TILEC_KMAJOR_B_TILE=0 the kernel's tile (TN at BN 128, 4 stages)
    tn_def = compiled("gemm_fp8.tile", "cutlass_gemm_fp8_tn")
    tn_fast = compiled("gemm_fp8.tile", "cutlass_gemm_fp8_tn", fp8_acc="fast")
    tn4 = compiled("gemm_fp8.tile", "cutlass_gemm_fp8_tn", None, {"BN": 128}, stages=4)
    nn_kernels = (("cutlass_gemm_fp8_nn promote", compiled("gemm_fp8.tile", NN), True, tn_def),
                  ("cutlass_gemm_fp8_nn promote, the form at the kernel's tile (TILEC_KMAJOR_B_TILE=0)",
                   compiled("gemm_fp8.tile", NN, {"TILEC_KMAJOR_B_TILE": "0"}), False, tn4),
                  ("cutlass_gemm_fp8_nn fast", compiled("gemm_fp8.tile", NN, fp8_acc="fast"), False, tn_fast),
                  ("cutlass_gemm_fp8_nn fast 128x128 w8 s4",
                   compiled("gemm_fp8.tile", NN, None, {"BM": 128}, fp8_acc="fast", warps=8, stages=4), False, None),
                  ("cutlass_gemm_fp8_nn, the transpose form at every M (TILEC_KMAJOR_B_MIN_M=0)",
                   compiled("gemm_fp8.tile", NN, {"TILEC_KMAJOR_B_MIN_M": "0"}), False, None),
                  ("cutlass_gemm_fp8_nn, no K-major-B form (TILEC_KMAJOR_B=0)",
                   compiled("gemm_fp8.tile", NN, {"TILEC_KMAJOR_B": "0"}), False, None))
    for tag, k, all_views, tn_ref in nn_kernels:
        for M, N, K in SIZES + [(256, 256, 256), (200, 304, 511)]:
            a = (torch.randn(M, K, generator=gen)).to(f8)
            b = (torch.randn(K, N, generator=gen)).to(f8)
            ref = a.double() @ b.double()
            wrong = a.double() @ b.double().t().contiguous() if M == N == K and M > 1 else None
            c_tn = None
            if tn_ref is not None:
                c_tn = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                tn_ref(a.cuda(), b.view(torch.uint8).t().contiguous().view(f8).cuda(), c_tn, 0.5, 2.0)
            for view, bd in views(b):
                if not all_views and view != "N-major" and (M, N, K) != (257, 509, 127):
                    continue
                c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                k(a.cuda(), bd, c, 0.5, 2.0)
                torch.cuda.synchronize()
                close(c.cpu(), ref, f"{tag} {M}x{N}x{K} B {view}", wrong)
                form = view.startswith("K-major") or (view == "N-major" and M > 128)
                if c_tn is not None and form:
                    diff = (c.view(torch.int16) != c_tn.view(torch.int16)).sum().item()
                    print(f"{'FAIL' if diff else 'ok'} {tag} {M}x{N}x{K} B {view}: the form against "
                          f"cutlass_gemm_fp8_tn at the form's tile on B^T: {diff} of {M * N} outputs differ")
                    fails += 1 if diff else 0
    # a CUDA graph capturing launches with the transpose form (workspace made by the launch before
    # the capture), replayed on new data written into the captured inputs, at two shapes
    k = nn_kernels[0][1]
    for M, N, K in ((257, 509, 127), (1000, 1064, 1040)):
        a = torch.empty(M, K, dtype=f8, device="cuda")
        b = torch.empty(K, N, dtype=f8, device="cuda")
        c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
        a.copy_(torch.randn(M, K, generator=gen).to(f8))
        b.copy_(torch.randn(K, N, generator=gen).to(f8))
        k(a, b, c, 0.5, 2.0)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            k(a, b, c, 0.5, 2.0)
        ah = torch.randn(M, K, generator=gen).to(f8)
        bh = torch.randn(K, N, generator=gen).to(f8)
        a.copy_(ah)
        b.copy_(bh)
        c.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        close(c.cpu(), ah.double() @ bh.double(), f"cutlass_gemm_fp8_nn CUDA graph replay {M}x{N}x{K} (transpose form)")
    for tag, kbs in (("cutlass_gemm_fp8_blockscale", compiled("gemm_fp8_blockscale.tile", "cutlass_gemm_fp8_blockscale")),
                     ("cutlass_gemm_fp8_blockscale 128x128 (bench/variants/_128)",
                      compiled(os.path.abspath(os.path.join(exdir, "..", "bench", "variants", "gemm_fp8_blockscale_128.tile")),
                               "cutlass_gemm_fp8_blockscale")),
                     ("cutlass_gemm_fp8_blockscale 128x128's 64x128 w4 s3 (the TMA ring)",
                      compiled(os.path.abspath(os.path.join(exdir, "..", "bench", "variants", "gemm_fp8_blockscale_128.tile")),
                               "cutlass_gemm_fp8_blockscale", None, {"BM": 64}, warps=4, stages=3)),
                     ("cutlass_gemm_fp8_blockscale, next k-block's scales carried (bench/variants)",
                      compiled(os.path.abspath(os.path.join(exdir, "..", "bench", "variants",
                                                            "gemm_fp8_blockscale_prefetch.tile")),  # (absolute: join keeps it)
                               "cutlass_gemm_fp8_blockscale"))):
        for M, N, K in SIZES:
            a, w, sa, sw, ref = blockscale_case(M, N, K)
            c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            kbs(a.cuda(), w.cuda(), sa.cuda(), sw.cuda(), c)
            torch.cuda.synchronize()
            close(c.cpu(), ref, f"{tag} {M}x{N}x{K}")
    print("test_dot_types:", "FAIL" if fails else "PASS", f"({fails} failures)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
