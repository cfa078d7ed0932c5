# bench/ncu_cluster.py LIB SIZE VARIANT...: launch examples/gemm.tile at SIZE^3 twice under each
# environment variant (bench.py's Kernel / with_env), for ncu (docs/pipelines.md "Clusters"):
#   ncu -k regex:cutlass_gemm --section LaunchStats --section Occupancy python3 bench/ncu_cluster.py ...
import os, runpy, sys
lib, n, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [os.path.join(here, "bench.py"), "--lib", lib, "--only", "none", "--json", "/tmp/ncu_cluster.json"]
ns = runpy.run_path(sys.argv[0], run_name="bench")
torch, Kernel, with_env, ex = ns["torch"], ns["Kernel"], ns["with_env"], ns["ex"]
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
for v in variants:
    k = with_env(v, lambda: Kernel(ex("gemm.tile")))
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    f = k.bind(a, b, c)
    f(); f(); torch.cuda.synchronize()
    print(f"{v}: launched twice", flush=True)
