# bench/ncu_rows.py LIB: launch the row kernels furthest from the copy bandwidth at bench.py's
# fused sizes, each form twice, for ncu (bench/ncu_rows.sh; docs/rows.md "rows7"): cross-entropy
# (default, loop_prefetch off), softmax over 32768 f32 columns (default, the launch variant forced),
# layernorm, embedding + RMSNorm, dropout + residual.  Prints the forms in launch order.
import os, runpy, sys
lib = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [os.path.join(here, "bench.py"), "--lib", lib, "--only", "none", "--json", "/tmp/ncu_rows.json"]
ns = runpy.run_path(sys.argv[0], run_name="bench")
torch, Kernel, with_env, ex = ns["torch"], ns["Kernel"], ns["with_env"], ns["ex"]
bf = torch.bfloat16
def run(tag, env, file, kname, defines, args, disable=None):
    k = with_env(env, lambda: Kernel(ex(file), defines, kname, disable=disable))
    f = with_env(env, lambda: k.bind(*args))
    f(); f(); torch.cuda.synchronize()
    print(f"form: {kname} [{tag}] launched twice", flush=True)
R, V = 4096, 128256
xl = torch.randn(R, V, device="cuda", dtype=bf); tg = torch.randint(0, V, (R,), device="cuda", dtype=torch.int32)
lo = torch.empty(R, device="cuda", dtype=torch.float32)
run("default", "", "cross_entropy.tile", "cross_entropy", {}, (xl, tg, lo))
run("loop_prefetch off", "", "cross_entropy.tile", "cross_entropy", {}, (xl, tg, lo), disable="loop_prefetch")
del xl
xs = torch.randn(2048, 32768, device="cuda"); ys = torch.empty_like(xs)
run("default", "", "softmax.tile", "softmax", {"BC": 32768}, (xs, ys))
run("straight-line variant (TILEC_VEC_ONLY=v)", "TILEC_VEC_ONLY=v", "softmax.tile", "softmax", {"BC": 32768}, (xs, ys))
del xs, ys
x = torch.randn(16384, 4096, device="cuda", dtype=bf); w = torch.randn(4096, device="cuda", dtype=bf)
b = torch.randn(4096, device="cuda", dtype=bf); y = torch.empty_like(x)
run("default", "", "layernorm.tile", "layernorm", {"BC": 4096}, (x, w, b, y, 1e-5))
E = torch.randn(128256, 4096, device="cuda", dtype=bf); ids = torch.randint(0, 128256, (16384,), device="cuda", dtype=torch.int32)
run("default", "", "embedding_rmsnorm.tile", "embedding_rmsnorm", {"BD": 4096}, (ids, E, w, y, 1e-6))
del E
res = torch.randn_like(x)
run("default", "", "dropout_residual.tile", "dropout_residual", {}, (x, res, y, 0.1, 1234))
