# bench/diag_docmask.py (thirty-seventh session): which output rows of tests/attn_variants/datamask.tile's
# cutlass_attn_docmask (D 128, CAUSAL 0) are wrong at a given S on the GPU, against a float32 torch reference
# (the document mask from Doc of small random ids); the doc ids of the wrong rows, and whether their keys past S
# would match (TMA fills keys past S with zeros).  Env switches (TILEC_*) of the process apply.
#   python3 bench/diag_docmask.py --lib LIB [--s 300] [--ndoc 4]
import argparse, os, sys
ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True); ap.add_argument("--s", type=int, default=300)
ap.add_argument("--ndoc", type=int, default=4); ap.add_argument("--causal", type=int, default=0)
ap.add_argument("--d", type=int, default=128)
a = ap.parse_args()
os.environ["TILEC_LIBRARY"] = a.lib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch, tilec
here = os.path.dirname(os.path.abspath(__file__))
prog = tilec.compile(os.path.join(here, "..", "tests", "attn_variants", "datamask.tile"),
                     defines={"D": a.d, "CAUSAL": a.causal})
k = prog["cutlass_attn_docmask"]
Z, H, S, D = 2, 3, a.s, a.d
torch.manual_seed(1)
q, kk, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
doc = torch.randint(0, a.ndoc, (Z, S), device="cuda", dtype=torch.int32)
o = torch.full_like(q, float("nan"))
k(q, kk, v, o, doc, 0.1); torch.cuda.synchronize()
s = (q.float() @ kk.float().transpose(-1, -2)) * 0.1
mask = doc[:, None, :, None] == doc[:, None, None, :]
if a.causal: mask = mask & torch.ones(S, S, device="cuda", dtype=torch.bool).tril()
s = s.masked_fill(~mask, float("-inf"))
p = torch.softmax(s, -1).nan_to_num(0.0)
ref = p @ v.float()
bad = ((o.float() - ref).abs() > 2e-2 + 2e-2 * ref.abs()) | o.isnan()
print(f"S {S} D {D} causal {a.causal}: {int(bad.sum())} of {bad.numel()} wrong, max err {float((o.float() - ref).abs().nan_to_num(99).max()):.3g}")
rows = bad.any(-1)  # [Z, H, S]
for z in range(Z):
    for h in range(H):
        r = rows[z, h].nonzero().flatten().tolist()
        if r: print(f"z {z} h {h}: {len(r)} rows, first {r[:12]}, blocks {sorted(set(x // 128 for x in r))}, docs {sorted(set(doc[z, x].item() for x in r))}, cols bad {bad[z, h].any(0).nonzero().flatten().tolist()[:8]}...")
