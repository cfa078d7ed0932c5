# bench/embrms_interp_check.py (branch embrms): run from the repository root with TILEC_LIBRARY set; no GPU.
# CPU check (interpreter): the two variants against the example and a float64 reference, ids with
# out-of-range values, T not a multiple of P, D not a multiple of 8 (ragged)
import sys, numpy as np
sys.path.insert(0, "python")
import tilec
rng = np.random.default_rng(7)
def ref(ids, E, w, eps):
    V = E.shape[0]; x = np.zeros((len(ids), E.shape[1]))
    ok = (ids >= 0) & (ids < V); x[ok] = E[ids[ok]]
    return x / np.sqrt((x * x).mean(1, keepdims=True) + eps) * w
def bf(a): return tilec.f32_to_bf16(a.astype(np.float32))
def f(u): return (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
worst = 0
for (T, V, D, BD) in [(37, 101, 64, 64), (50, 9, 40, 64), (1, 5, 128, 128), (129, 300, 96, 128)]:
    ids = rng.integers(-3, V + 3, T).astype(np.int32)
    E = bf(rng.standard_normal((V, D))); w = bf(rng.standard_normal(D))
    r = ref(ids, f(E), f(w), 1e-5)
    outs = {}
    for name, path, extra in [("example", "examples/embedding_rmsnorm.tile", ()),
                              ("row", "bench/variants/embedding_rmsnorm_row.tile", ()),
                              ("ahead P=1", "bench/variants/embedding_rmsnorm_ahead.tile", (1,)),
                              ("ahead P=7", "bench/variants/embedding_rmsnorm_ahead.tile", (7,)),
                              ("ahead P=T+5", "bench/variants/embedding_rmsnorm_ahead.tile", (T + 5,)),
                              ("reload", "bench/variants/embedding_rmsnorm_reload.tile", ()),
                              ("reload rows", "bench/variants/embedding_rmsnorm_reload.tile:rows", ())]:
        path, _, kn = path.partition(":")
        k = tilec.compile(path, {"BD": BD}, disable_pass="row_loads")["embedding_rmsnorm" + ("_" + kn if kn else "")]
        y = np.full((T, D), 0x7FC0, np.uint16)
        tilec.interpret(k, ids, E, w, y, 1e-5, *extra)
        yy = f(y); outs[name] = y
        err = np.nanmax(np.abs(yy - r)) if not np.isnan(yy).any() else float("inf")
        worst = max(worst, err)
        print(f"T{T} V{V} D{D} {name}: max abs err vs f64 {err:.3g}, bit-identical to the example: {np.array_equal(y, outs['example'])}")
print("worst", worst)
