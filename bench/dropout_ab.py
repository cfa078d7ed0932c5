# bench/dropout_ab.py (thirty-seventh session): TILEC_RAND_FOLLOW=1 (the default since then; layout_assign: dropout's
# keep mask in the accumulator layout, P into the value dot from registers by wgmma, two lanes sharing a Philox block)
# against =0 (the mask's blocked layout, P converted through shared memory, the value dot on mma.sync) on
# tests/attn_variants/dropout.tile: the forward cutlass_attn_dropout (causal) and the dK / dV backward
# cutlass_attn_bwd_dropout, D 64 / 128, S 4096 (bench.py's shapes: H = 2048 / D, Z = 16384 / S), interleaved rounds
# (bench.py bench_interleaved), the ratio the median of per-round ratios; the two outputs compared (rel. err).
#   python3 bench/dropout_ab.py --lib LIB [--rounds 7] [--s 4096]
import argparse, os, sys, statistics
ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--s", type=int, default=4096)
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["bench.py", "--lib", a.lib, "--only", "none", "--quick"]
_bp = os.path.join(here, "bench.py")
exec(compile(open(_bp).read(), _bp, "exec"))  # Kernel, with_env, bench_interleaved, relerr, torch
src = os.path.join(here, "..", "tests", "attn_variants", "dropout.tile")
S = a.s
print("| kernel | D | off ms | on ms | on / off (rounds) | rel. diff |\n|---|---|---|---|---|---|", flush=True)
for kname in ("cutlass_attn_dropout", "cutlass_attn_bwd_dropout"):
    for D in (64, 128):
        H = 2048 // D; Z = max(1, 16384 // S)
        g = lambda: torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
        q, k, v = g(), g(), g()
        if kname == "cutlass_attn_dropout":
            outs = [torch.full_like(q, float("nan")) for _ in range(2)]
            args = lambda o: (q, k, v, o, 0.125 if D == 64 else 0.0884, 0.1, ("i64", 1234))
        else:
            do = g()
            lse = torch.full((Z, H, S), 12.0, device="cuda") + torch.rand(Z, H, S, device="cuda")
            dl = torch.randn(Z, H, S, device="cuda")
            outs = [(torch.full_like(q, float("nan")), torch.full_like(q, float("nan"))) for _ in range(2)]
            args = lambda o: (q, k, v, do, lse, dl, o[0], o[1], 0.125 if D == 64 else 0.0884, 0.1, ("i64", 1234))
        fns = []
        try:
            for i, f in enumerate(("0", "1")):
                kern = with_env(f"TILEC_RAND_FOLLOW={f}", lambda: Kernel(src, defines={"D": D}, kernel=kname))
                fns.append(kern.bind(*args(outs[i])))
        except Exception as e:  # (one of the two does not compile or load: say so, go on)
            print(f"| {kname} | {D} | - | - | {str(e)[:80]} | - |", flush=True)
            continue
        for fn in fns: fn()
        torch.cuda.synchronize()
        o0 = outs[0] if isinstance(outs[0], torch.Tensor) else torch.cat(outs[0])
        o1 = outs[1] if isinstance(outs[1], torch.Tensor) else torch.cat(outs[1])
        err = relerr(o1.float(), o0.float())
        t = bench_interleaved(fns, a.rounds, 300)
        r = statistics.median([b / x for x, b in zip(t[0], t[1])])
        print(f"| {kname} | {D} | {statistics.median(t[0]):.3f} | {statistics.median(t[1]):.3f} | {r:.3f} | {err:.2e} |",
              flush=True)
