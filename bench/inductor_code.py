"""bench/inductor_code.py OUTDIR: what torch.compile runs for SwiGLU (8192 x 14336 bf16) and the MoE
token permutation (X[src], 32768 rows of 4096 from 16384), the bench's fused rows (docs/rows.md "rows6"):
its Triton source (TORCH_LOGS=output_code, to stderr), and, from a profiler trace, every kernel's grid,
block, registers a thread and time; the Triton cache (TRITON_CACHE_DIR) keeps the PTX."""
import json, os, sys, torch
out = sys.argv[1] if len(sys.argv) > 1 else "."
F = torch.nn.functional
bf = torch.bfloat16
a = torch.randn(8192, 14336, device="cuda", dtype=bf); b = torch.randn_like(a)
X = torch.randn(16384, 4096, device="cuda", dtype=bf); src = torch.randint(0, 16384, (32768,), device="cuda").long()
sw = torch.compile(lambda: F.silu(a) * b)
mp = torch.compile(lambda: X[src])
for _ in range(3): sw(); mp()
torch.cuda.synchronize()
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for _ in range(3): sw(); mp()
    torch.cuda.synchronize()
trace = os.path.join(out, "inductor_trace.json")
prof.export_chrome_trace(trace)
ev = json.load(open(trace))["traceEvents"]
seen = set()
for e in ev:
    if e.get("cat") != "kernel": continue
    g = e.get("args", {})
    key = (e["name"], str(g.get("grid")), str(g.get("block")))
    if key in seen: continue
    seen.add(key)
    print(f"inductor kernel {e['name']}: grid {g.get('grid')} block {g.get('block')} registers {g.get('registers per thread')} "
          f"smem {g.get('shared memory')} {e.get('dur')} us", flush=True)
os.remove(trace)
