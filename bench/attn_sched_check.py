#!/usr/bin/env python3
"""bench/attn_sched_check.py: causal attention with tiles from a global atomic counter (one a stream)
(TILEC_ATTN_SCHED, lib/codegen/attn_sched.c) launched many times back to back, against torch's f32
SDPA.  The counter must be back at zero after every launch (the last CTA to finish taking resets it):
one left non-zero would make the next launch skip its first tiles (their NaN-poisoned rows stay NaN).

  TILEC_ATTN_SCHED=1 TILEC_ATTN_FORM_MIN_S=1 python3 bench/attn_sched_check.py [--launches 12]

Per case (attn.tile's cutlass_attn_fwd, its fa3 form at every S; llama/attn_gqa.tile's cutlass_attn_gqa):
`--launches` launches on one stream without a sync between them, S changing from one to the next
(ragged sizes: 1, 127, 1000, 4097 and the bench's 1024 / 4096), each output poisoned and checked after;
then the same launches alternating over two streams with no sync (each stream its own counter, branch
attnsched2: lib/api/sched_slot.c; with TILEC_PERSIST_CTAS=7 many run at once); then one launch captured
in a CUDA graph and replayed three times (the reset is inside the kernel).
Prints a line per case and `ALL PASS` or `FAIL` last.
"""
import argparse, os, sys

ap = argparse.ArgumentParser()
ap.add_argument("--launches", type=int, default=12)
args = ap.parse_args()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch, tilec  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.manual_seed(7)
ok = True


def ref_of(q, k, v):
    g = q.shape[1] // k.shape[1]
    kr, vr = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    return F.scaled_dot_product_attention(q.float(), kr.float(), vr.float(), is_causal=True)


def err_of(o, ref):
    if torch.isnan(o).any():
        return float("inf")
    return ((o.float() - ref).norm() / ref.norm()).item()


def case(name, kern, D, H, HKV, seqs, Z=1):
    global ok
    bufs = []
    for i in range(args.launches):
        S = seqs[i % len(seqs)]
        q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        o = torch.full_like(q, float("nan"))
        bufs.append((q, k, v, o))
    for q, k, v, o in bufs:  # back to back, one stream, no sync
        kern(q, k, v, o, D ** -0.5)
    torch.cuda.synchronize()
    worst = 0.0
    for q, k, v, o in bufs:
        worst = max(worst, err_of(o, ref_of(q, k, v)))
    # the same launches alternating over two streams at once: each stream its own counter (lib/api/sched_slot.c);
    # a shared one skips tiles or runs them twice (NaN rows, wrong sums)
    for q, k, v, o in bufs:
        o.fill_(float("nan"))
    s2 = [torch.cuda.Stream(), torch.cuda.Stream()]
    for s in s2:
        s.wait_stream(torch.cuda.current_stream())
    for i, (q, k, v, o) in enumerate(bufs):
        with torch.cuda.stream(s2[i % 2]):
            kern(q, k, v, o, D ** -0.5)
    torch.cuda.synchronize()
    worst2 = 0.0
    for q, k, v, o in bufs:
        worst2 = max(worst2, err_of(o, ref_of(q, k, v)))
    # one launch in a CUDA graph, replayed: the counter's reset is part of the kernel
    q, k, v, o = bufs[0]
    gw, gnote = 0.0, ""
    try:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            kern(q, k, v, o, D ** -0.5)  # (the load and the forms outside the capture)
            torch.cuda.synchronize()
            with torch.cuda.graph(g, stream=s):
                kern(q, k, v, o, D ** -0.5)
        r = ref_of(q, k, v)
        for _ in range(3):
            o.fill_(float("nan"))
            g.replay()
            torch.cuda.synchronize()
            gw = max(gw, err_of(o, r))
    except Exception as e:  # (a capture the Python launcher cannot make says so; the launches above stand)
        gnote = f" (graph not captured: {str(e).splitlines()[0][:100]})"
    good = worst < 2e-2 and worst2 < 2e-2 and gw < 2e-2
    ok = ok and good
    print(f"{'PASS' if good else 'FAIL'} {name}: {args.launches} launches S {seqs}, worst rel.err {worst:.1e}; "
          f"on 2 streams {worst2:.1e}; graph x3 {gw:.1e}{gnote}", flush=True)


src = os.path.join(HERE, "..", "examples", "attn.tile")
gsrc = os.path.join(HERE, "..", "examples", "llama", "attn_gqa.tile")
for D in (128, 256):
    kern = tilec.compile(src, defines={"D": D, "CAUSAL": 1})["cutlass_attn_fwd"]
    case(f"attn D{D} causal", kern, D, 3, 3, [1000, 127, 4097, 1, 1024, 1100])
    case(f"attn D{D} causal H16 (bench shape)", kern, D, 2048 // D, 2048 // D, [1024, 4096], Z=4)
gk = tilec.compile(gsrc, defines={"CAUSAL": 1})["cutlass_attn_gqa"]
case("gqa D128 causal H8/HKV2", gk, 128, 8, 2, [1000, 127, 1100])
print("ALL PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
