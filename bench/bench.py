# bench.py: tilec kernels beside the references a user would pick instead
# (cuBLAS, cuDNN / FlashAttention-2 SDPA, PyTorch ops), measured in ONE run on
# the same GPU, medians of triton.testing.do_bench, ratios printed last.
#
# tilec is driven through its C API (libtilec.so via ctypes): no Python is
# needed by tilec itself; PyTorch here only allocates tensors and runs the
# references.  Every tilec result is checked against a float64/f32 torch
# reference before it is timed (relative error printed beside the time).
#
#   python3 bench/bench.py --lib build/libtilec.so [--quick] [--only gemm,attn,norm]
#   --only passes: gemm 4096^3 and attn D128 S4096 with the default pipeline and with
#   each scheduling pass disabled (--disable-pass), time and ratio vs all-on.
#   --only name: the ptxas "cutlass" entry-name heuristic (same PTX but the
#   .entry name, with and without "cutlass"; ratio and run-to-run spread).
#   --only fused: the memory-bound kernels of issue 12 at LLM sizes (rmsnorm, layernorm, add_rmsnorm,
#   softmax, swiglu, rope, cross_entropy, embedding_rmsnorm, dropout_residual) beside the copy
#   bandwidth, torch eager and torch.compile, each also with the row passes off (docs/rows.md;
#   FUSED_ONLY=a,b limits the kernels; run with TILEC_CACHE=0: warps/stages are not in the cache key).
import argparse, ctypes as C, json, math, os, re, sys, time
from statistics import median

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # (also when exec'd by bench/*_probe.py)
from fp8_ref import blockscale_ref  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--rope-d", default="", help="attnrope: only these D (comma-separated), e.g. 64")
ap.add_argument("--rope-s", default="", help="attnrope --quick: these S (comma-separated) instead of 4096, e.g. 1024,4096")
ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ap.add_argument("--quick", action="store_true")
ap.add_argument("--attnbwd-cases", default="", help="attention backward: D:S:CAUSAL,... replacing the case list")
ap.add_argument("--attnbwd-variants", default="", help="attention backward: the variants to time (default, multistage, cutlass, fused, ...), comma-separated; default all")
ap.add_argument("--only", default="gemm,fp8,int8,fp8x,attn,norm")
ap.add_argument("--gemm-variants", default="",
                help="bf16 GEMM: extra rows of gemm.tile compiled under environment switches, e.g. "
                     "TILEC_WS=off,TILEC_PERSIST=0,TILEC_WS=off+TILEC_PERSIST=0 (the same cuBLAS time)")
ap.add_argument("--smallm-forms", default="64x64x64/cutlass/8/split,128x64x64/cutlass/6/split,64x128x64/cutlass/6/split,"
                "16x32x256/multistage/5/split",
                help="smallm: cutlass_gemm with one small-M form for every M <= 256 (TILEC_SMALL_M_FORMS=256=FORM), "
                     "a row each beside the default table and the forms off; '' = none")
ap.add_argument("--smallm-sizes", default="", help="smallm: MxNxK,... of the forms' rows replacing the default list")
ap.add_argument("--smallm-rounds", type=int, default=2, help="smallm: rounds of the forms' rows (bench_rounds)")
ap.add_argument("--rounds", type=int, default=0,
                help="bf16 GEMM: time cuBLAS and every form in R rounds, the order rotated each round, after "
                     "--warm-ms of cuBLAS launches; medians over the rounds (0: each once, cuBLAS first)")
ap.add_argument("--warm-ms", type=float, default=1000, help="with --rounds: ms of reference launches before timing")
ap.add_argument("--gemm-sizes", default="", help="bf16 GEMM: MxNxK,... replacing the default list")
ap.add_argument("--linear-variants", default="TILEC_EPI=0,TILEC_EPI=regs,TILEC_WS=coop,TILEC_EPI_LOAD=combined,TILEC_RCP=rn,TILEC_EPI_LOAD=combined+TILEC_RCP=rn",
                help="linear: extra rows of both tilec kernels compiled under environment switches (as --gemm-variants)")
ap.add_argument("--residual-variants", default="TILEC_EPI_LOAD=combined,TILEC_EPI=0",
                help="residual: extra rows of both tilec kernels compiled under environment switches (as --gemm-variants)")
ap.add_argument("--linear-pingpong", action="store_true",
                help="linear: also the 128x128 one-warpgroup tile (tests/gpu/pingpong) default / TILEC_WS=coop / TILEC_WS=pingpong")
ap.add_argument("--linear-sizes", default="", help="linear: MxNxK,... replacing the default list")
ap.add_argument("--linear-no-compile", action="store_true",
                help="linear: no torch.compile reference (its compile takes tens of seconds of a device call)")
ap.add_argument("--attn-cases", default="",  # D:S:CAUSAL[:WARPS[:BN[:STAGES[:BM]]]] (0 = the default)
                help="attention cases D:S:CAUSAL[:WARPS[:BN[:STAGES[:BM]]]],... (e.g. 128:4096:1,64:4096:1:8) replacing the default list")
ap.add_argument("--attn-kernels", default="attn_fwd,cutlass_attn_fwd",
                help="attention: kernels of examples/attn.tile to time, a row each per case (cutlass_attn_fwd: wgmma on sm_90a); "
                     "NAME@tma0 = NAME compiled with TILEC_TMA=0 (the cp.async ring), timed in the same process; "
                     "NAME@VAR=VALUE with that code switch; a suffix :C=N sets tile constant C (e.g. "
                     "cutlass_attn_fwd@TILEC_ATTN_WS=fa3:BN=128)")
ap.add_argument("--fp8-variants", default="",
                help="extra fp8 TN promote configurations BM:BN:BK:WARPS:STAGES,... (rows beside the default)")
ap.add_argument("--int8-variants", default="",
                help="extra int8 GEMM configurations BM:BN:BK:WARPS:STAGES,... (rows beside the default)")
ap.add_argument("--decode-waves", type=float, default=2.0,
                help="decode: splits chosen for about this many waves of programs over 132 SMs")
ap.add_argument("--decode-min-tiles", type=int, default=8,
                help="decode: at least this many key tiles a split")
ap.add_argument("--decode-variants", default="",
                help="decode: extra configurations WARPS:BT[:STAGES],... (0 = default) timed beside the default (pages of max(64, BT))")
ap.add_argument("--decode-forms-cases", default="1:4096,1:32768,8:8192,32:4096,1:131072",
                help="decodeforms: the cases B:L,... (the short ones issue 11 misses, and one long one)")
ap.add_argument("--once", action="store_true",
                help="attention: launch tilec, FA2 and cuDNN once each, no timing (for ncu: bench/ncu_attn.sh)")
ap.add_argument("--json", default=os.path.join(os.environ.get("OUT", "/tmp"), "bench.json"))
args = ap.parse_args()

import torch
from triton.testing import do_bench

# ---- libtilec through ctypes ------------------------------------------------------
class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]
class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]
class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]
class ArgU(C.Union):
    _fields_ = [("tensor", C.POINTER(DLTensor)), ("i32", C.c_int32), ("i64", C.c_int64),
                ("f32", C.c_float), ("f64", C.c_double)]
class Arg(C.Structure):
    _fields_ = [("kind", C.c_int), ("u", ArgU)]

lib = C.CDLL(args.lib)
lib.tilec_status_string.restype = C.c_char_p
lib.tilec_program_log.restype = C.c_char_p
lib.tilec_kernel_error.restype = C.c_char_p
lib.tilec_kernel_origin.restype = C.c_char_p
lib.tilec_version_string.restype = C.c_char_p
lib.tilec_program_text.restype = C.c_char_p

DL = {torch.bfloat16: (4, 16), torch.float16: (2, 16), torch.float32: (2, 32), torch.int64: (0, 64),
      torch.int32: (0, 32), torch.int8: (0, 8), torch.float8_e4m3fn: (1, 8), torch.float8_e5m2: (1, 8)}

def check(st, what, prog=None):
    if st != 0:
        log = lib.tilec_program_log(prog).decode() if prog else ""
        raise RuntimeError(f"{what}: {lib.tilec_status_string(st).decode()}\n{log[-3000:]}")

class Kernel:
    def __init__(self, path, defines=None, kernel=None, entry=None, source=None, disable=None, options=None):
        opts = C.c_void_p()
        check(lib.tilec_options_create(C.byref(opts)), "options")
        for k, v in (options or {}).items():
            check(lib.tilec_options_set(opts, k.encode(), str(v).encode()), k)
        if disable:
            check(lib.tilec_options_set(opts, b"disable-pass", disable.encode()), "disable-pass")
        for k, v in (defines or {}).items():
            check(lib.tilec_options_define(opts, k.encode(), C.c_int64(v)), "define")
        if entry:
            check(lib.tilec_options_set(opts, b"entry-name", entry.encode()), "entry-name")
        self.prog = C.c_void_p()
        t0 = time.perf_counter()
        if source is not None:
            st = lib.tilec_program_create(C.byref(self.prog), source.encode(), path.encode(), opts)
        else:
            st = lib.tilec_program_create_from_file(C.byref(self.prog), path.encode(), opts)
        lib.tilec_options_destroy(opts)
        check(st, "create " + path, self.prog)
        if entry:  # the PTX text is wanted even when the kernel comes from the disk cache
            check(lib.tilec_program_compile(self.prog, 3), "compile " + path, self.prog)
            self.ptx = lib.tilec_program_text(self.prog, 3).decode()
        self.k = C.c_void_p()
        check(lib.tilec_kernel_load(self.prog, kernel.encode() if kernel else None, 0, C.byref(self.k)),
              "load " + path, self.prog)
        self.load_s = time.perf_counter() - t0
        if os.environ.get("BENCH_LAUNCH_NOTES"):  # the launcher's choice of a row kernel's variant (docs/rows.md "rows5")
            for ln_ in lib.tilec_program_log(self.prog).decode().splitlines():
                if "launch variant" in ln_: print("  " + ln_, flush=True)
        self.origin = lib.tilec_kernel_origin(self.k).decode()
        self._keep = []

    def bind(self, *vals):
        """Pack arguments once (tensors keep their storage alive); returns a launcher."""
        arr = (Arg * len(vals))()
        keep = []
        for i, v in enumerate(vals):
            if isinstance(v, torch.Tensor):
                shp = (C.c_int64 * v.dim())(*v.shape)
                strd = (C.c_int64 * v.dim())(*v.stride())
                code, bits = DL[v.dtype]
                t = DLTensor(C.c_void_p(v.data_ptr()), DLDevice(2, v.device.index or 0), v.dim(),
                             DLDataType(code, bits, 1), shp, strd, 0)
                keep += [shp, strd, t, v]
                arr[i].kind = 0
                arr[i].u.tensor = C.pointer(t)
            elif isinstance(v, float):
                arr[i].kind = 3; arr[i].u.f32 = v
            elif isinstance(v, tuple) and v[0] == "i64":  # an i64 scalar: ("i64", value)
                arr[i].kind = 2; arr[i].u.i64 = int(v[1])
            else:
                arr[i].kind = 1; arr[i].u.i32 = int(v)
        keep.append(arr)
        stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)
        def launch():
            st = lib.tilec_kernel_launch(self.k, arr, len(vals), stream)
            if st != 0:
                raise RuntimeError("launch: " + lib.tilec_kernel_error(self.k).decode())
        launch._keep = keep
        return launch

def ex(name):
    return os.path.join(args.root, "examples", name)

def bench(f):
    f(); torch.cuda.synchronize()
    return do_bench(f, warmup=25, rep=100 if args.quick else 300, return_mode="median")

def warm_up(fns, warm_ms):
    """Every fn once (compiles, first loads), then fns[0] for warm_ms: the GPU at its steady clock and power."""
    for f in fns:
        f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    while (time.perf_counter() - t0) * 1e3 < warm_ms:
        for _ in range(20):
            fns[0]()
        torch.cuda.synchronize()


def bench_rounds(fns, rounds, warm_ms):
    """Times of fns (callables) over `rounds` rounds, fns[0] (the reference) first launched for warm_ms
    so the GPU is at its steady clock and power, then each round times every fn once (do_bench median),
    the order rotated by one each round so no fn is always first after the others; returns the
    per-fn lists of times (ms), round by round.  BENCH_INTERLEAVE=1: bench_interleaved instead (launch by
    launch inside each round; the probes that exec this file take it too)."""
    if os.environ.get("BENCH_INTERLEAVE") == "1":
        return bench_interleaved(fns, rounds, warm_ms)
    warm_up(fns, warm_ms)
    times = [[] for _ in fns]
    rep = 50 if args.quick else 100
    for r in range(rounds):
        for j in range(len(fns)):
            i = (r + j) % len(fns)
            times[i].append(do_bench(fns[i], warmup=5, rep=rep, return_mode="median"))
    return times


def bench_interleaved(fns, rounds, warm_ms, round_ms=150):
    """bench_rounds' contract (per-fn lists of per-round times, ms) with the fns interleaved launch by launch:
    after the warm-up, each round launches fn 0, 1, .., n-1, 0, 1, .. (the order rotated each round), every
    launch between two CUDA events with L2 flushed before it (as do_bench), until about round_ms per fn, and
    takes each fn's median.  Neighbouring launches of two fns are milliseconds apart, so a clock that drifts
    during a round (power, heat) moves both alike: the per-round ratios spread less than bench_rounds' whole
    do_bench blocks, each ~100 ms after the other (bench/RESULTS.md "twenty-seventh session")."""
    warm_up(fns, warm_ms)
    flush = torch.empty(int(256e6), dtype=torch.int8, device="cuda")
    # launches a fn a round: from one timed pass of every fn (at least 5, at most 200)
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in fns]
    for (a_, b_), f in zip(ev, fns):
        a_.record(); f(); b_.record()
    torch.cuda.synchronize()
    per = max(5, min(200, int(round_ms / max(1e-3, max(a_.elapsed_time(b_) for a_, b_ in ev)))))
    times = [[] for _ in fns]
    for r in range(rounds):
        order = [(r + j) % len(fns) for j in range(len(fns))]
        evs = {i: [] for i in order}
        for _ in range(per):
            for i in order:
                flush.zero_()
                a_, b_ = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a_.record(); fns[i](); b_.record()
                evs[i].append((a_, b_))
        torch.cuda.synchronize()
        for i in order:
            times[i].append(median([a_.elapsed_time(b_) for a_, b_ in evs[i]]))
    return times


def relerr(x, ref):
    x = x.double(); ref = ref.double()
    return float((x - ref).norm() / ref.norm())

rows, res = [], {"version": lib.tilec_version_string().decode(),
                 "device": torch.cuda.get_device_name(0)}
def run_poisoned(kern, ins, shape, ref, dtype=None):
    """One bf16 (or dtype) output of `shape`, poisoned with NaN, after `ins`: run once, check against
    ref, then time; gives (ms, rel. error)."""
    out = torch.full(shape, float("nan"), device="cuda", dtype=dtype or torch.bfloat16)
    f = kern.bind(*ins, out)
    f(); torch.cuda.synchronize()
    err = relerr(out, ref)
    return bench(f), err


def row(work, shape, t_ms, metric, value, ref_name, ref_value, err):
    ratio = value / ref_value if ref_value else float("nan")
    rows.append((work, shape, f"{t_ms:.3f}", f"{value:.1f} {metric}", ref_name, f"{ref_value:.1f}",
                 f"{ratio:.3f}", f"{err:.1e}"))
    res[f"{work} {shape}"] = dict(ms=t_ms, value=value, metric=metric, ref=ref_name,
                                  ref_value=ref_value, ratio=ratio, relerr=err)
    print(" | ".join(rows[-1]), flush=True)

def safe(fn, label):
    try:
        fn()
    except Exception as e:  # keep going: one failing workload must not hide the others
        print(f"{label}: FAILED: {str(e)[:2000]}", flush=True)
        res[label] = f"FAILED: {str(e)[:300]}"

only = set(args.only.split(","))
torch.manual_seed(0)

# ---- GEMM bf16 -------------------------------------------------------------------
def with_env(spec, fn):
    """fn() with the switches of spec ("A=1+B=0"; "" = none) set in the environment."""
    saved = {}
    for kv in filter(None, spec.split("+")):
        name, val = kv.split("=", 1)
        saved[name] = os.environ.get(name)
        os.environ[name] = val
    try:
        return fn()
    finally:
        for name, val in saved.items():
            if val is None: os.environ.pop(name, None)
            else: os.environ[name] = val

def gemm_bf16():
    variants = [""] + [v for v in args.gemm_variants.split(",") if v]
    ks = [with_env(v, lambda: Kernel(ex("gemm.tile"))) for v in variants]
    sizes = [(4096, 4096, 4096)] if args.quick else [(4096, 4096, 4096), (8192, 8192, 8192),
             (8192, 28672, 4096), (8192, 4096, 14336), (8192, 6144, 4096)]
    if args.gemm_sizes:
        sizes = [tuple(int(x) for x in s.split("x")) for s in args.gemm_sizes.split(",")]
    for M, N, K in sizes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ b.float()
        fl = 2 * M * N * K
        if args.rounds > 0:  # every form checked first, then all timed in rotated rounds
            fs, errs = [lambda: a @ b], []
            for k in ks:
                c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                fs.append(k.bind(a, b, c))
                fs[-1](); torch.cuda.synchronize()
                errs.append(relerr(c, ref))
            times = bench_rounds(fs, args.rounds, args.warm_ms)
            ms_ref = median(times[0])
            for v, ts, err in zip(variants, times[1:], errs):
                ratios = sorted(r / t for r, t in zip(times[0], ts))
                row("gemm bf16" + (f" [{v}]" if v else ""), f"{M}x{N}x{K}", median(ts), "TFLOP/s",
                    fl / median(ts) / 1e9, "cuBLAS", fl / ms_ref / 1e9, err)
                print(f"  {args.rounds} rounds: ratio per round {ratios[0]:.3f}..{ratios[-1]:.3f}, "
                      f"median {median(ratios):.3f}; cuBLAS {fl / max(times[0]) / 1e9:.1f}..{fl / min(times[0]) / 1e9:.1f}",
                      flush=True)
            continue
        ms_ref = bench(lambda: a @ b)
        for v, k in zip(variants, ks):
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            f = k.bind(a, b, c)
            f(); torch.cuda.synchronize()
            err = relerr(c, ref)
            ms = bench(f)
            row("gemm bf16" + (f" [{v}]" if v else ""), f"{M}x{N}x{K}", ms, "TFLOP/s", fl / ms / 1e9, "cuBLAS",
                fl / ms_ref / 1e9, err)
        ms_ref2 = bench(lambda: a @ b)  # cuBLAS again after the variants: the spread of the reference
        print(f"cuBLAS {M}x{N}x{K}: {fl / ms_ref / 1e9:.1f} before, {fl / ms_ref2 / 1e9:.1f} after the tilec rows", flush=True)

# ---- GEMM fp8 (per-tensor scales) ---------------------------------------------------
def gemm_fp8():
    # cuBLAS fp8 takes only the "TN" layout: A [M, K] and B stored K-major (torch: bt [N, K]
    # row-major passed as bt.t()).  tilec's cutlass_gemm_fp8_tn reads exactly that storage (BT [N, K]);
    # gemm_fp8_tensor (B [K, N]) is measured on a row-major [K, N] copy, for the record.
    # Accumulation is compared like for like (docs/pipelines.md "fp8 accumulation"): "promote"
    # (tilec's default, f32 adds every 128 K; 128x128 tiles on two consumer warpgroups and a producer) against cuBLAS
    # use_fast_accum=False, "fast" (the tensor core's own accumulation; 128x256 tiles on two
    # warpgroups) against use_fast_accum=True.
    ktn = Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_tn")
    ktn_fast = Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_tn", defines={"BM": 128, "BN": 256},
                      options={"fp8-acc": "fast", "warps": 8, "stages": 4})
    knn = Kernel(ex("gemm_fp8.tile"), kernel="gemm_fp8_tensor")
    # B stored [K, N] on the cutlass route: at M > 128 the launcher transposes it into a workspace
    # and runs the K-major-B form (lib/kmajor_b.h; TILEC_KMAJOR_B=0: the in-kernel transpose)
    knn_c = Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_nn")
    variants = []
    for v in filter(None, args.fp8_variants.split(",")):
        bm, bn, bk, w, st = (int(x) for x in v.split(":"))
        variants.append((f"fp8 TN promote {bm}x{bn}x{bk} w{w} s{st}",
                         Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_tn", defines={"BM": bm, "BN": bn, "BK": bk},
                                options={"warps": w, "stages": st})))
    for v in filter(None, args.gemm_variants.split(",")):  # the same switches as the bf16 rows
        variants.append((f"fp8 TN promote [{v}]", with_env(v, lambda: Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_tn"))))
    env_fast = [(f"fp8 TN fast [{v}]", with_env(v, lambda: Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_tn",
                                                                 defines={"BM": 128, "BN": 256},
                                                                 options={"fp8-acc": "fast", "warps": 8, "stages": 4})))
                for v in filter(None, args.gemm_variants.split(","))]
    for N in ([4096] if args.quick else [4096, 8192]):
        a = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
        bt = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)  # [N, K] row-major
        b = bt.t()                                                      # [K, N], K-major for cuBLAS
        one = torch.tensor(1.0, device="cuda")
        ref = {fast: bench(lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=fast))
               for fast in (False, True)}
        fl = 2 * N ** 3
        for name, k, bb, fast in (("fp8 TN promote", ktn, bt, False), ("fp8 TN fast", ktn_fast, bt, True),
                                  ("fp8 NN promote, gemm_fp8_tensor (multistage: not the cutlass route)", knn, b.contiguous(), False),
                                  ("fp8 NN promote, cutlass_gemm_fp8_nn (B [K, N]: transpose + K-major-B form)", knn_c,
                                   b.contiguous(), False)) + \
                                 tuple((nm, kv, bt, False) for nm, kv in variants) + \
                                 tuple((nm, kv, bt, True) for nm, kv in env_fast):
            c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            f = k.bind(a, bb, c, 0.5, 2.0)
            f(); torch.cuda.synchronize()
            err = relerr(c, a.float() @ b.float())
            ms = bench(f)
            row(name, f"{N}^3", ms, "TFLOP/s", fl / ms / 1e9, "cuBLAS fp8 " + ("fast" if fast else "accurate"),
                fl / ref[fast] / 1e9, err)

# ---- int8 GEMM (per-row / per-column scales) and tf32 ----------------------------------
def gemm_int8():
    # examples/quant_int8_gemm.tile cutlass_quant_int8_gemm: Y = (A W^T) * sa[:, None] * sw[None, :],
    # int8 A [M, K], int8 W [N, K] (K-major, the layout cuBLAS's int8 GEMM takes), bf16 Y.  Beside:
    # torch._int_mm + the scales in eager torch (what a torch user writes), torch._int_mm alone (i32
    # out: the cuBLAS int8 kernel), and the bf16 cuBLAS GEMM of the same shape (the goal: >= 1.5x it).
    variants = [""] + [v for v in args.gemm_variants.split(",") if v]
    ks = [with_env(v, lambda: Kernel(ex("quant_int8_gemm.tile"), kernel="cutlass_quant_int8_gemm")) for v in variants]
    for v in filter(None, args.int8_variants.split(",")):
        bm, bn, bk, w, st = (int(x) for x in v.split(":"))
        variants.append(f"{bm}x{bn}x{bk} w{w} s{st}")
        ks.append(Kernel(ex("quant_int8_gemm.tile"), kernel="cutlass_quant_int8_gemm", defines={"BM": bm, "BN": bn, "BK": bk},
                         options={"warps": w, "stages": st}))
    sizes = [(4096, 4096, 4096)] if args.quick else [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 28672, 4096),
                                                     (8192, 4096, 14336)]
    if args.gemm_sizes:
        sizes = [tuple(int(x) for x in s.split("x")) for s in args.gemm_sizes.split(",")]
    for M, N, K in sizes:
        a = torch.randint(-128, 128, (M, K), device="cuda", dtype=torch.int8)
        w = torch.randint(-128, 128, (N, K), device="cuda", dtype=torch.int8)
        sa = torch.rand(M, device="cuda") * 0.02 + 1e-3
        sw = torch.rand(N, device="cuda") * 0.02 + 1e-3
        fl = 2 * M * N * K
        ab, wb = a.to(torch.bfloat16), w.to(torch.bfloat16)
        ms_bf16 = bench(lambda: ab @ wb.t())
        ms_im = bench(lambda: torch._int_mm(a, w.t()))
        ms_ims = bench(lambda: (torch._int_mm(a, w.t()).float() * sa[:, None] * sw[None, :]).to(torch.bfloat16))
        ref = (torch._int_mm(a, w.t()).float() * sa[:, None] * sw[None, :]).to(torch.bfloat16)
        for v, k in zip(variants, ks):
            y = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            f = k.bind(a, w, sa, sw, y)
            f(); torch.cuda.synchronize()
            exact = bool(torch.equal(y.view(torch.int16), ref.view(torch.int16)))
            err = relerr(y, ref)
            ms = bench(f)
            tag = "int8 GEMM row/col scales" + (f" [{v}]" if v else "")
            row(tag, f"{M}x{N}x{K}", ms, "TOP/s", fl / ms / 1e9, "torch._int_mm + scales", fl / ms_ims / 1e9, err)
            row(tag, f"{M}x{N}x{K}", ms, "TOP/s", fl / ms / 1e9, "torch._int_mm (i32 out)", fl / ms_im / 1e9, err)
            row(tag, f"{M}x{N}x{K}", ms, "TOP/s", fl / ms / 1e9, "cuBLAS bf16 GEMM", fl / ms_bf16 / 1e9, err)
            print(f"int8 {M}x{N}x{K}{' ' + v if v else ''}: bit-identical to torch: {exact}", flush=True)

def gemm_fp8x():
    # fp8 beyond TN: B kept [K, N] on wgmma (cutlass_gemm_fp8_nn: each k-step's [K][N] slot transposed
    # through shared memory into a K-major buffer) against cuBLAS TN (cuBLAS takes only TN for fp8), and
    # DeepSeek-V3 block scales (gemm_fp8_blockscale.tile: 1x128 activation, 128x128 weight scales, per
    # k-block code, on cutlass_gemm_fp8_tn's tile since the twenty-fifth session; bench/variants/
    # gemm_fp8_blockscale_128.tile the 128x128 spelling it replaced) against tilec's per-tensor
    # cutlass_gemm_fp8_tn at its default tile (issue 10's goal: within 10 %).
    knn = Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_nn")
    knn_fast = Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_nn", defines={"BM": 128},
                      options={"fp8-acc": "fast", "warps": 8, "stages": 4})
    ktn = Kernel(ex("gemm_fp8.tile"), kernel="cutlass_gemm_fp8_tn")
    kbs = Kernel(ex("gemm_fp8_blockscale.tile"), kernel="cutlass_gemm_fp8_blockscale")
    kbs128 = Kernel(os.path.join(os.path.dirname(os.path.abspath(__file__)), "variants", "gemm_fp8_blockscale_128.tile"),
                    kernel="cutlass_gemm_fp8_blockscale")
    for N in ([4096] if args.quick else [4096, 8192]):
        a = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
        bt = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)  # [N, K]
        b = bt.t().contiguous()                                           # [K, N] row-major
        one = torch.tensor(1.0, device="cuda")
        ref = {fast: bench(lambda: torch._scaled_mm(a, bt.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=fast))
               for fast in (False, True)}
        fl = 2 * N ** 3
        exact = a.float() @ bt.float().t()
        c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        ftn = ktn.bind(a, bt, c, 1.0, 1.0)
        ftn(); torch.cuda.synchronize()
        ms_tn = bench(ftn)
        for name, k, fast in (("fp8 NN promote (wgmma, B [K,N] transposed in smem)", knn, False),
                              ("fp8 NN fast 128x128 w8 s4", knn_fast, True)):
            c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            f = k.bind(a, b, c, 0.5, 2.0)
            f(); torch.cuda.synchronize()
            err = relerr(c, exact)
            ms = bench(f)
            row(name, f"{N}^3", ms, "TFLOP/s", fl / ms / 1e9, "cuBLAS fp8 TN " + ("fast" if fast else "accurate"),
                fl / ref[fast] / 1e9, err)
        KB = N // 128
        sa = torch.rand(N, KB, device="cuda") + 0.5
        sw = torch.rand(N // 128, KB, device="cuda") + 0.5
        refbs = blockscale_ref(a, bt, sa, sw)
        for name, k in (("fp8 blockscale 1x128/128x128", kbs), ("fp8 blockscale, 128x128 tile (_128 variant)", kbs128)):
            c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            f = k.bind(a, bt, sa, sw, c)
            f(); torch.cuda.synchronize()
            err = relerr(c, refbs)
            ms = bench(f)
            row(name, f"{N}^3", ms, "TFLOP/s", fl / ms / 1e9, "tilec fp8 TN per-tensor", fl / ms_tn / 1e9, err)
            row(name, f"{N}^3", ms, "TFLOP/s", fl / ms / 1e9, "cuBLAS fp8 TN accurate", fl / ref[False] / 1e9, err)
        del refbs

def gemm_tf32():
    # examples/gemm_tf32.tile cutlass_gemm_tf32_tn (BT [N, K]) against torch f32 matmul with TF32 allowed
    k = Kernel(ex("gemm_tf32.tile"), kernel="cutlass_gemm_tf32_tn")
    for N in ([4096] if args.quick else [4096, 8192]):
        a = torch.randn(N, N, device="cuda")
        bt = torch.randn(N, N, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = True
        ms_ref = bench(lambda: a @ bt.t())
        torch.backends.cuda.matmul.allow_tf32 = False
        c = torch.full((N, N), float("nan"), device="cuda")
        f = k.bind(a, bt, c)
        f(); torch.cuda.synchronize()
        err = relerr(c, a.double() @ bt.double().t())
        ms = bench(f)
        fl = 2 * N ** 3
        row("tf32 GEMM TN", f"{N}^3", ms, "TFLOP/s", fl / ms / 1e9, "cuBLAS tf32", fl / ms_ref / 1e9, err)

# ---- attention forward ----------------------------------------------------------------
import triton, triton.language as tl

@triton.jit
def triton_attn(Q, K, V, O, sm_scale, S, H, sb, sh, ss,
                BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr, CAUSAL: tl.constexpr):
    # the attention reference in plain Triton: online softmax in base 2, S a multiple of BM
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = (bh // H) * sb + (bh % H) * sh
    rows = pid_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(Q + base + rows[:, None] * ss + dims[None, :])
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    scale2 = sm_scale * 1.4426950408889634
    end = (pid_m + 1) * BM if CAUSAL else S
    for n0 in range(0, end, BN):
        cols = n0 + tl.arange(0, BN)
        kt = tl.load(K + base + cols[None, :] * ss + dims[:, None])
        s = tl.dot(q, kt) * scale2
        if CAUSAL:
            s = tl.where(rows[:, None] >= cols[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        vt = tl.load(V + base + cols[:, None] * ss + dims[None, :])
        acc = tl.dot(p.to(tl.bfloat16), vt, acc * alpha[:, None])
        m_i = m_new
    tl.store(O + base + rows[:, None] * ss + dims[None, :], (acc / l_i[:, None]).to(tl.bfloat16))

def attn():
    from torch.nn.attention import sdpa_kernel, SDPBackend
    import torch.nn.functional as F
    cases = [(128, 4096, False)] if args.quick else [(d, s, c) for d in (64, 128) for s in (1024, 4096, 16384) for c in (False, True)]
    if args.attn_cases:
        cases = [tuple(int(y) for y in x.split(":")) for x in args.attn_cases.split(",")]
    attn_warps, attn_bn, attn_st, attn_bm = {}, {}, {}, {}
    for i, c in enumerate(cases):
        if len(c) > 3 and c[3]: attn_warps[i] = c[3]
        if len(c) > 4 and c[4]: attn_bn[i] = c[4]
        if len(c) > 5 and c[5]: attn_st[i] = c[5]
        if len(c) > 6 and c[6]: attn_bm[i] = c[6]
        cases[i] = (c[0], c[1], bool(c[2]))
    kernels = {}
    names = [n for n in args.attn_kernels.split(",") if n]
    for i, (D, S, causal) in enumerate(cases):
        w, bn, st, bm = attn_warps.get(i), attn_bn.get(i), attn_st.get(i), attn_bm.get(i)
        H = 2048 // D; Z = max(1, 16384 // S)
        q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
        kk = torch.randn_like(q); v = torch.randn_like(q)
        ref = F.scaled_dot_product_attention(q.float(), kk.float(), v.float(), is_causal=causal)
        refs = {}
        for kname in names:
            key = (kname, D, causal, w, bn, st, bm)
            if key not in kernels:
                defs = {"D": D, "CAUSAL": int(causal)}
                if bn: defs["BN"] = bn
                if bm: defs["BM"] = bm
                opts = dict(([("warps", w)] if w else []) + ([("stages", st)] if st else []))
                # NAME...:BN=128 (a suffix): this kernel at that tile constant, beside the others at theirs
                kfull, kdefs = kname.split(":")[0], [x.split("=") for x in kname.split(":")[1:]]
                defs.update({x[0]: int(x[1]) for x in kdefs})
                base, *variants = kfull.split("@")
                # NAME@tma0 = TILEC_TMA=0; NAME@VAR=VALUE sets VAR (read by codegen at load time; in the cache key),
                # several @VAR=VALUE all of them
                envs = [v.partition("=")[::2] if "=" in v else ("TILEC_TMA", "0") for v in variants if v]
                old_env = {e: os.environ.get(e) for e, _ in envs}
                for e, val in envs: os.environ[e] = val
                try:
                    kernels[key] = Kernel(ex("attn.tile"), defs, kernel=base, options=opts or None)
                finally:
                    for e, old in old_env.items():
                        if old is None: del os.environ[e]
                        else: os.environ[e] = old
            k = kernels[key]
            o = torch.full_like(q, float("nan"))
            f = k.bind(q, kk, v, o, D ** -0.5)
            f(); torch.cuda.synchronize()
            err = relerr(o, ref)
            if args.once:
                for be in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
                    with sdpa_kernel(be):
                        F.scaled_dot_product_attention(q, kk, v, is_causal=causal)
                torch.cuda.synchronize()
                print(f"once: D{D} S{S} causal={int(causal)} rel.err {err:.1e}")
                continue
            ms = bench(f)
            fl = 4 * Z * H * S * S * D / (2 if causal else 1)
            for nm, be in (("FA2", SDPBackend.FLASH_ATTENTION), ("cuDNN", SDPBackend.CUDNN_ATTENTION)):
                if nm not in refs:
                    try:  # a backend without this head size (cuDNN or FA2 at D 256 on some builds) gives no row
                        with sdpa_kernel(be):
                            refs[nm] = fl / bench(lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=causal)) / 1e9
                    except RuntimeError as e:
                        print(f"  ({nm} SDPA D{D} S{S} causal={int(causal)}: not available: {str(e).splitlines()[0][:120]})")
                        refs[nm] = None
            if "Triton" not in refs and S % 128 == 0 and not os.environ.get("BENCH_ATTN_NO_TRITON"):
                # a plain FA2-form Triton kernel (triton_attn below) at the tile the anchors found best
                # on the H200 (../shared/anchors: BM 128, BN 128 for D128 full, else 64; 4 warps for
                # D64 causal, else 8; 3 stages)
                tbn = 128 if (D == 128 and not causal) else 64
                tw = 4 if (D == 64 and causal) else 8
                to = torch.empty_like(q)
                tf = lambda: triton_attn[(S // 128, Z * H)](q, kk, v, to, D ** -0.5, S, H, q.stride(0), q.stride(1),
                                                            q.stride(2), BM=128, BN=tbn, D=D, CAUSAL=causal,
                                                            num_warps=tw, num_stages=3)
                tf(); torch.cuda.synchronize()
                terr = relerr(to, ref)
                refs["Triton"] = fl / bench(tf) / 1e9
                print(f"  (Triton attention D{D} S{S} causal={int(causal)}: BN {tbn}, {tw} warps, rel. err {terr:.1e})")
            shape = f"D{D} S{S} {'causal' if causal else 'full'}" + (f" w{w}" if w else "") + (f" BN{bn}" if bn else "") + (f" st{st}" if st else "") + (f" BM{bm}" if bm else "")
            what = "attn fwd" if kname == "attn_fwd" else kname.replace("@tma0", " (TILEC_TMA=0)").replace("@", " ")
            for nm in ("FA2", "cuDNN"):
                if refs[nm]: row(what, shape, ms, "TFLOP/s", fl / ms / 1e9, nm, refs[nm], err)
            if "Triton" in refs: row(what, shape, ms, "TFLOP/s", fl / ms / 1e9, "Triton", refs["Triton"], err)

# ---- memory-bound: rmsnorm, softmax (bytes read + written over time) -------------------------
def norms():
    R, Cn = (8192, 4096)
    x = torch.randn(R, Cn, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(Cn, device="cuda", dtype=torch.bfloat16)
    y = torch.full_like(x, float("nan"))
    k = Kernel(ex("rmsnorm.tile"))
    f = k.bind(x, w, y, 1e-6)
    f(); torch.cuda.synchronize()
    xf = x.float(); ref = xf * torch.rsqrt((xf * xf).mean(1, keepdim=True) + 1e-6) * w.float()
    err = relerr(y, ref)
    ms = bench(f)
    ms_ref = bench(lambda: torch.nn.functional.rms_norm(x, (Cn,), w, 1e-6))
    by = 2 * x.numel() * 2
    row("rmsnorm bf16", f"{R}x{Cn}", ms, "GB/s", by / ms / 1e6, "torch", by / ms_ref / 1e6, err)
    Cl = 2048
    xl = torch.randn(R, Cl, device="cuda", dtype=torch.bfloat16)
    wl = torch.randn(Cl, device="cuda", dtype=torch.bfloat16)
    bl = torch.randn(Cl, device="cuda", dtype=torch.bfloat16)
    yl = torch.full_like(xl, float("nan"))
    fl_ = Kernel(ex("layernorm.tile")).bind(xl, wl, bl, yl, 1e-5)
    fl_(); torch.cuda.synchronize()
    err = relerr(yl, torch.nn.functional.layer_norm(xl.float(), (Cl,), wl.float(), bl.float(), 1e-5))
    ms = bench(fl_)
    ms_ref = bench(lambda: torch.nn.functional.layer_norm(xl, (Cl,), wl, bl, 1e-5))
    by = 2 * xl.numel() * 2
    row("layernorm bf16", f"{R}x{Cl}", ms, "GB/s", by / ms / 1e6, "torch", by / ms_ref / 1e6, err)

    xs = torch.randn(R, 1024, device="cuda", dtype=torch.float32)
    ys = torch.full_like(xs, float("nan"))
    k2 = Kernel(ex("softmax.tile"))
    f2 = k2.bind(xs, ys)
    f2(); torch.cuda.synchronize()
    err = relerr(ys, torch.softmax(xs.double(), 1))
    ms = bench(f2)
    ms_ref = bench(lambda: torch.softmax(xs, 1))
    by = 2 * xs.numel() * 4
    row("softmax f32", f"{R}x1024", ms, "GB/s", by / ms / 1e6, "torch", by / ms_ref / 1e6, err)

# ---- the ptxas "cutlass" name heuristic -----------------------------------------------------
# Same kernel, same PTX except the .entry name: one name contains "cutlass",
# the other does not.  Timed in the same run, alternating, several repeats;
# ratio = time(with "cutlass") / time(without): < 1 means the name helps.
def one_kernel_source(path, kernel):
    # entry-name applies to single-kernel programs: keep only `kernel`'s text, from its
    # declaration line (attributes such as `@warps(4)` may precede `kernel` on it) to the next
    import re
    lines = open(path).read().split("\n")
    decl = re.compile(r"^\s*(@\w+\([^)]*\)\s*)*kernel\s+(\w+)\s*\(")
    starts = [(i, m.group(2)) for i, l in enumerate(lines) for m in [decl.match(l)] if m]
    for j, (i, name) in enumerate(starts):
        if name == kernel:
            end = starts[j + 1][0] if j + 1 < len(starts) else len(lines)
            return "\n".join(lines[i:end])
    raise RuntimeError(f"no kernel {kernel} in {path}")

def name_heuristic():
    import statistics
    reps = 3 if args.quick else 7
    def gemm_args(N):
        a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
        c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        return (a, b, c), (c, lambda: a.float() @ b.float())
    def fp8_args(N):  # cutlass_gemm_fp8_tn: B stored K-major as BT [N, K]
        a = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
        bt = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
        c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        return (a, bt, c, 0.5, 2.0), (c, lambda: a.float() @ bt.float().t())
    def attn_args(S, D=128):
        H = 2048 // D; Z = max(1, 16384 // S)
        q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn_like(q); v = torch.randn_like(q)
        o = torch.full_like(q, float("nan"))
        ref = lambda: torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
        return (q, k, v, o, D ** -0.5), (o, ref)
    G = 4096 if args.quick else 8192
    cases = [(f"gemm bf16 {G}^3", "gemm.tile", "cutlass_gemm", {}, lambda: gemm_args(G)),
             (f"gemm fp8 TN {G}^3", "gemm_fp8.tile", "cutlass_gemm_fp8_tn", {}, lambda: fp8_args(G)),
             ("attn D128 S4096", "attn.tile", "attn_fwd", {"D": 128}, lambda: attn_args(4096))]
    print("\n## ptxas name heuristic: time(entry name with 'cutlass') / time(without), same PTX otherwise")
    for label, file, kernel, defines, make in cases:
        path = ex(file)
        src = one_kernel_source(path, kernel)
        with_k = Kernel(path, defines, kernel, entry="cutlass_tilec_" + kernel, source=src)
        without_k = Kernel(path, defines, kernel, entry="tilec_" + kernel.replace("cutlass", "cutl4ss"), source=src)
        a, b = with_k.ptx, without_k.ptx
        assert a != b, "the entry names must differ"
        assert a.replace("cutlass_tilec_" + kernel, "@ENTRY@") == \
               b.replace("tilec_" + kernel.replace("cutlass", "cutl4ss"), "@ENTRY@"), \
               f"{label}: the two PTX texts differ in more than the entry name"
        vals, (out, ref) = make()
        fw, fo = with_k.bind(*vals), without_k.bind(*vals)
        errs = []
        for f in (fw, fo):
            out.fill_(float("nan")); f(); torch.cuda.synchronize()
            errs.append(relerr(out, ref()))
        tw, to = [], []
        for r in range(reps):  # alternate, starting with each side in turn
            order = [(fw, tw), (fo, to)] if r % 2 == 0 else [(fo, to), (fw, tw)]
            for f, acc in order:
                acc.append(bench(f))
        ratios = [x / y for x, y in zip(tw, to)]
        med = statistics.median(ratios)
        spread_w = (max(tw) - min(tw)) / statistics.median(tw)
        spread_o = (max(to) - min(to)) / statistics.median(to)
        line = (f"{label}: with 'cutlass' {statistics.median(tw):.4f} ms, without {statistics.median(to):.4f} ms, "
                f"ratio {med:.3f} (min {min(ratios):.3f}, max {max(ratios):.3f} over {reps} alternating repeats; "
                f"run-to-run spread {100 * spread_w:.1f}% / {100 * spread_o:.1f}%); rel.err {errs[0]:.1e} / {errs[1]:.1e}")
        print(line, flush=True)
        res[f"name {label}"] = dict(with_ms=tw, without_ms=to, ratios=ratios, median_ratio=med,
                                    spread_with=spread_w, spread_without=spread_o, relerr=errs)

# ---- scheduling passes on/off (--only passes) -------------------------------------------
def sched_passes():
    # Compile every variant afresh (the cache key includes disable-pass; this times nothing cached).
    os.environ["TILEC_CACHE"] = "0"
    import statistics
    reps = 3 if args.quick else 5
    def gemm_case():
        N = 4096
        a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
        c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        return (a, b, c), c, (lambda: a.float() @ b.float()), 2 * N ** 3
    def attn_case():
        D, S = 128, 4096
        H = 2048 // D; Z = max(1, 16384 // S)
        q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn_like(q); v = torch.randn_like(q)
        o = torch.full_like(q, float("nan"))
        ref = lambda: torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
        return (q, k, v, o, D ** -0.5), o, ref, 4 * Z * H * S * S * D
    def fp8_case():
        N = 4096
        a = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
        bt = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
        c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        return (a, bt, c, 0.5, 2.0), c, (lambda: a.float() @ bt.float().t()), 2 * N ** 3
    variants = [None, "route_pipeline", "align_check", "mma_remap", "smem_swizzle", "swpipe", "ldmatrix_sched"]
    cases = [("gemm bf16 4096^3", "gemm.tile", {}, None, gemm_case),
             ("gemm fp8 TN 4096^3", "gemm_fp8.tile", {}, "cutlass_gemm_fp8_tn", fp8_case),
             ("attn D128 S4096", "attn.tile", {"D": 128}, None, attn_case)]
    print("\n## scheduling passes: time with each pass disabled / time with all on (same run, medians)")
    print("| workload | pipeline | ms | TFLOP/s | ratio vs all-on | rel.err |")
    print("|---|---|---|---|---|---|")
    for label, file, defines, kname, make in cases:
        vals, out, ref, flops = make()
        ks = [Kernel(ex(file), defines, kernel=kname, disable=d) for d in variants]
        fs = [k.bind(*vals) for k in ks]
        errs = []
        for f in fs:
            out.fill_(float("nan")); f(); torch.cuda.synchronize()
            errs.append(relerr(out, ref()))
        times = [[] for _ in fs]
        for r in range(reps):  # interleave the variants, rotating the start
            for i in range(len(fs)):
                j = (i + r) % len(fs)
                times[j].append(bench(fs[j]))
        med = [statistics.median(t) for t in times]
        for name, m, e in zip(variants, med, errs):
            what = "all on" if name is None else f"--disable-pass={name}"
            print(f"| {label} | {what} | {m:.4f} | {flops / m / 1e9:.1f} | {m / med[0]:.3f} | {e:.1e} |", flush=True)
            res[f"passes {label} {what}"] = dict(ms=times[variants.index(name)], median_ms=m,
                                                  ratio=m / med[0], relerr=e)

# ---- one launch per kernel for ncu (--only banks; bench/ncu_banks.sh) --------------------
def banks():
    # Each dot kernel twice: with smem_swizzle (entry swz_on_K) and without (swz_off_K), one
    # checked launch each, for ncu's shared-memory bank-conflict counters (bench/ncu_banks.sh).
    os.environ["TILEC_CACHE"] = "0"
    N, S, D = 2048, 2048, 128
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    a8 = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
    bt8 = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn)
    H, Z = 2048 // D, 2
    q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn_like(q); v = torch.randn_like(q); o = torch.full_like(q, float("nan"))
    cases = [("gemm.tile", "cutlass_gemm", {}, (a, b, c), c, lambda: a.float() @ b.float()),
             ("gemm_fp8.tile", "cutlass_gemm_fp8_tn", {}, (a8, bt8, c, 0.5, 2.0), c, lambda: a8.float() @ bt8.float().t()),
             ("attn.tile", "attn_fwd", {"D": D}, (q, k, v, o, D ** -0.5), o,
              lambda: torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float()))]
    for file, kname, defines, vals, out, ref in cases:
        src = one_kernel_source(ex(file), kname)
        for tag, disable in (("on", None), ("off", "smem_swizzle")):
            kk = Kernel(ex(file), defines, kname, entry=f"swz_{tag}_{kname}", source=src, disable=disable)
            out.fill_(float("nan")); kk.bind(*vals)(); torch.cuda.synchronize()
            print(f"banks: launched swz_{tag}_{kname}: rel.err {relerr(out, ref()):.1e}", flush=True)

# ---- memory-bound rows at LLM sizes, against the copy bandwidth, torch and torch.compile -------------
def rows_bw():
    bw = copy_bandwidth()
    print(f"rows: copy bandwidth {bw:.0f} GB/s (read + write)", flush=True)
    comp = torch.compile(lambda x, w: torch.nn.functional.rms_norm(x, (x.shape[1],), w, 1e-6))
    variants = [("rmsnorm", {}, {}), ("rmsnorm_rows", {"BR": 2}, {}), ("rmsnorm_rows", {"BR": 4}, {"warps": 8}),
                ("rmsnorm_rows", {"BR": 2}, {"warps": 8})]
    for R, Cn in ([(16384, 4096)] if args.quick else [(16384, 4096), (16384, 8192)]):
        x = torch.randn(R, Cn, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(Cn, device="cuda", dtype=torch.bfloat16)
        xf = x.float(); ref = xf * torch.rsqrt((xf * xf).mean(1, keepdim=True) + 1e-6) * w.float()
        by = 2 * x.numel() * 2
        ms_c = bench(lambda: comp(x, w))
        ms_t = bench(lambda: torch.nn.functional.rms_norm(x, (Cn,), w, 1e-6))
        for name, d, o in variants:
            y = torch.full_like(x, float("nan"))
            f = Kernel(ex("rmsnorm.tile"), {"BC": Cn, **d}, name, options=o).bind(x, w, y, 1e-6)
            f(); torch.cuda.synchronize()
            err = relerr(y, ref)
            ms = bench(f)
            tag = name + "".join(f" {k}={v}" for k, v in {**d, **o}.items())
            row("rmsnorm bf16", f"{R}x{Cn} {tag}", ms, "GB/s", by / ms / 1e6, "torch.compile", by / ms_c / 1e6, err)
            print(f"rows {R}x{Cn} {tag}: {by / ms / 1e6 / bw:.3f} of the copy bandwidth; torch eager "
                  f"{by / ms_t / 1e6 / bw:.3f}, torch.compile {by / ms_c / 1e6 / bw:.3f}", flush=True)


# ---- fused memory-bound kernels at LLM sizes (issue 12): bytes moved / time, beside the copy
# bandwidth, torch eager and torch.compile, in one run; each kernel also with the row passes off
# (docs/rows.md): "before" = row_warps, access_split, row_stream all disabled.
# "before": the mechanisms of the seventh session off (row_loads, the row layout rules, bf16 casts
# from the loaded words, one Philox block per 4 offsets: docs/rows.md), each also off alone per kernel
BEFORE7 = {"disable": "row_loads", "env": "TILEC_ROW_LAYOUT=0+TILEC_BF16_WORDS=0+TILEC_RAND_BLOCK=0"}
ROW_VARIANTS = {"default": None, "before (row_loads, row layouts, word casts, rand blocks off)": BEFORE7,
                # a reduce's own shared slots and one barrier (emit_reduce.c, twelfth session) off
                "TILEC_RED_SLOTS=0 (two barriers a reduce)": {"env": "TILEC_RED_SLOTS=0"}}
# the mechanisms of branch rows4 (docs/rows.md "rows4"): partial sums, fma in a reduction, the fallback's groups in
# blocks, the grid walked along the contiguous axis first
ROWS4_OFF = "TILEC_REDUCE_ILP=0+TILEC_REDUCE_FMA=0+TILEC_FALLBACK_BLOCKS=0+TILEC_GRID_ORDER=0"
VARIANT = lambda name: os.path.join("..", "bench", "variants", name)  # ex() joins examples/
# the launch variant's forms (docs/rows.md "rows6"), every row kernel: forced straight-line, forced with the branch
# kept, the rows5 rule (the variant straight-line wherever the launcher takes it), the default kernel alone
ROWS6_FORMS = [("TILEC_VEC_ONLY=1", {"env": "TILEC_VEC_ONLY=1"}), ("TILEC_VEC_ONLY=2 (the branch kept)", {"env": "TILEC_VEC_ONLY=2"}),
               ("TILEC_VARIANT_FORM=1 (rows5: the variant straight-line)", {"env": "TILEC_VARIANT_FORM=1"}),
               ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"})]

# the mechanisms of branch rows8 (docs/rows.md "rows8"; both off by default after the H200 run): the L2 prefetch of a
# later CTA's rows (TILEC_ROW_PREFETCH=cap in MB) and the cache hints of streaming accesses (TILEC_ROW_HINTS letters);
# every case takes ROWS8_FORMS, a case named in FUSED_SWEEP (with FUSED_SWEEP_TAGS) also ROWS8_SWEEP
ROWS8_FORMS = [("TILEC_ROW_PREFETCH=16 (L2 prefetch of a later CTA's rows)", {"env": "TILEC_ROW_PREFETCH=16"}),
               ("TILEC_ROW_HINTS=nS (loads L1::no_allocate, stores evict-first)", {"env": "TILEC_ROW_HINTS=nS"})]
# branch embrms (nineteenth session; docs/rows.md "embrms"): passes/row_reload.c, a row load used across a reduce read
# again after it (fewer registers, more CTAs an SM), off by default; every case takes it (FUSED_TAGS=ROW_RELOAD: alone)
EMBRMS_FORMS = [("TILEC_ROW_RELOAD=1 (the row read again after the reduce)", {"env": "TILEC_ROW_RELOAD=1"})]
ROWS8_SWEEP = [("TILEC_ROW_PREFETCH=8", {"env": "TILEC_ROW_PREFETCH=8"}), ("TILEC_ROW_PREFETCH=32", {"env": "TILEC_ROW_PREFETCH=32"}),
               ("TILEC_ROW_PREFETCH=16, TILEC_ROW_HINTS=S (stores evict-first)", {"env": "TILEC_ROW_PREFETCH=16+TILEC_ROW_HINTS=S"}),
               ("TILEC_ROW_PREFETCH=16, TILEC_ROW_HINTS=nS", {"env": "TILEC_ROW_PREFETCH=16+TILEC_ROW_HINTS=nS"}),
               ("TILEC_ROW_HINTS=S (stores evict-first)", {"env": "TILEC_ROW_HINTS=S"}),
               ("TILEC_ROW_HINTS=s (stores .cs)", {"env": "TILEC_ROW_HINTS=s"}),
               ("TILEC_ROW_HINTS=n (loads L1::no_allocate)", {"env": "TILEC_ROW_HINTS=n"}),
               ("TILEC_ROW_HINTS=f (loads evict-first)", {"env": "TILEC_ROW_HINTS=f"}),
               ("TILEC_ROW_HINTS=p (loads L2::256B)", {"env": "TILEC_ROW_HINTS=p"}),
               ("stages=2 (row_stream: persistent CTAs, a tile ahead in registers)", {"stages": 2}),
               ("stages=2, TILEC_ROW_STREAM_L2=1 (persistent CTAs, the next tile into L2)", {"stages": 2, "env": "TILEC_ROW_STREAM_L2=1"}),
               ("stages=2, TILEC_ROW_STREAM_L2=1, TILEC_MAXNREG=72", {"stages": 2, "env": "TILEC_ROW_STREAM_L2=1+TILEC_MAXNREG=72"})]

def embrms_forms(R, D, V, ids, E, w, y, bw, table):
    """Branch embrms (FUSED_EMBRMS=1; bench/RESULTS.md nineteenth session): why embedding + RMSNorm is below
    rmsnorm.  The example, one row a program with a scalar id (variants/embedding_rmsnorm_row.tile: rmsnorm's
    kernel plus the id round trip) and persistent programs with the next id loaded a step ahead
    (variants/embedding_rmsnorm_ahead.tile, P = SMs x k programs), each with four id patterns: the bench's
    random ids over V rows, the same ids sorted, ids = 0..R-1 (the contiguous rows rmsnorm reads), random ids
    below R (a table of R rows: the page footprint of the 'arange' pattern, random order); rmsnorm on E[:R]
    (the same bytes as 'arange') and torch.index_select (the gather alone) for reference; the row read twice
    (variants/embedding_rmsnorm_reload.tile, row_loads off: fewer registers, more CTAs an SM).  Rows
    'embrms D... ids=...: ... of copy BW'."""
    nsm = torch.cuda.get_device_properties(0).multi_processor_count
    F = torch.nn.functional
    def mk(file, *, kname="embedding_rmsnorm", env="", **o):  # keyword-only: an env string is never taken for kname
        return lambda: with_env(env, lambda: Kernel(ex(file), {"BD": D}, kname, disable=o.pop("disable", None), options=o))
    AH, RL = VARIANT("embedding_rmsnorm_ahead.tile"), VARIANT("embedding_rmsnorm_reload.tile")
    # P = SMs x (CTAs an SM of the form the launcher runs, by ptxas 13.0 -v; the launcher's note is printed)
    k_w8, k_w4, k_cap = {4096: 5, 8192: 3}[D], {4096: 7, 8192: 3}[D], {4096: 5, 8192: 4}[D]
    forms = [("example BM=2", mk("embedding_rmsnorm.tile"), None, True),
             ("example BM=2, TILEC_ROW_RELOAD=1", mk("embedding_rmsnorm.tile", env="TILEC_ROW_RELOAD=1"), None, True),
             ("row (BM=1, scalar id)", mk(VARIANT("embedding_rmsnorm_row.tile")), None, True),
             (f"ahead warps=8 P=SMs*{k_w8}", mk(AH, warps=8), nsm * k_w8, False),
             (f"ahead warps=4 P=SMs*{k_w4}", mk(AH), nsm * k_w4, False),
             (f"ahead warps=8 VEC_ONLY=v MAXNREG=64 P=SMs*{k_cap}", mk(AH, env="TILEC_VEC_ONLY=v+TILEC_MAXNREG=64", warps=8), nsm * k_cap, True),
             ("reload (BM=1, row_loads off)", mk(RL, disable="row_loads"), None, True),
             ("reload warps=8 VEC_ONLY=v (BM=1, row_loads off)", mk(RL, env="TILEC_VEC_ONLY=v", disable="row_loads", warps=8), None, False),
             ("reload rows BM=2 (row_loads off)", mk(RL, kname="embedding_rmsnorm_rows", disable="row_loads"), None, False)]
    rand_ids = ids.clone()
    pats = [("random", rand_ids), ("sorted", torch.sort(rand_ids).values),
            ("arange", torch.arange(R, device="cuda", dtype=torch.int32)),
            (f"random<{R}", torch.randint(0, R, (R,), device="cuda", dtype=torch.int32))]
    nbytes = 2 * R * D * 2
    kcache = {}
    xs = E[:R]; ys = torch.empty_like(xs)
    rk = Kernel(ex("rmsnorm.tile"), {"BC": D}, "rmsnorm")
    f = rk.bind(xs, w, ys, 1e-6); ys.fill_(float("nan")); f(); torch.cuda.synchronize()
    err = relerr(ys, F.rms_norm(xs.float(), (D,), w.float(), 1e-6))
    ms = bench(f)
    print(f"embrms D{D} rmsnorm on E[:R] (the arange rows): {nbytes / ms / 1e6 / bw:.3f} of copy BW; err {err:.1e}", flush=True)
    table.append((f"embrms D{D} rmsnorm E[:R]", "default", nbytes / ms / 1e6 / bw, 0, 0, 0, err))
    for pname, pid in pats:
        ids.copy_(pid)
        ref = (lambda xf: xf * torch.rsqrt((xf * xf).mean(1, keepdim=True) + 1e-6) * w.float())(E[ids.long()].float())
        i64 = ids.long(); g = torch.empty_like(y)  # the rows alone: torch's gather copy of the same bytes
        ms = bench(lambda: torch.index_select(E, 0, i64, out=g))
        print(f"embrms D{D} ids={pname} [torch.index_select, the gather alone]: {nbytes / ms / 1e6 / bw:.3f} of copy BW", flush=True)
        table.append((f"embrms D{D} ids={pname}", "torch.index_select (gather alone)", nbytes / ms / 1e6 / bw, 0, 0, 0, 0.0))
        del g
        for fname, make, P, all_pats in forms:
            if pname != "random" and not all_pats: continue
            try:
                if fname not in kcache:
                    kcache[fname] = make()
                    for ln_ in lib.tilec_program_log(kcache[fname].prog).decode().splitlines():
                        if "launch variant" in ln_: print(f"  [{fname}] " + ln_.strip(), flush=True)
                a = (ids, E, w, y, 1e-6) + ((P,) if P else ())
                f = kcache[fname].bind(*a)
                y.fill_(float("nan")); f(); torch.cuda.synchronize()
                err = relerr(y, ref)
                ms = bench(f)
            except Exception as e_:  # a form that does not compile or launch here: say so, go on
                why = [ln_ for ln_ in str(e_).splitlines() if "error:" in ln_][:1]  # the library's own message (the log)
                print(f"embrms D{D} ids={pname} [{fname}]: FAILED {' | '.join(str(e_).splitlines()[:1] + why)[:400]}", flush=True)
                continue
            print(f"embrms D{D} ids={pname} [{fname}]: {nbytes / ms / 1e6 / bw:.3f} of copy BW ({ms * 1e3:.1f} us); err {err:.1e}"
                  + ("  ERR" if not err < 1e-2 else ""), flush=True)
            table.append((f"embrms D{D} ids={pname}", fname, nbytes / ms / 1e6 / bw, 0, 0, 0, err))
    ids.copy_(rand_ids)

def fused():
    bw = copy_bandwidth()
    print(f"fused: copy bandwidth {bw:.0f} GB/s (read + write)", flush=True)
    F = torch.nn.functional
    bf = torch.bfloat16
    table = []
    same_bw = {}
    def same_size_copy_bw(nbytes):
        """GB/s of a device copy moving the kernel's own bytes (nbytes / 2 read, nbytes / 2 written): the
        ceiling for a launch of that size, its start and tail included (the 4 GB copy above has none)"""
        if nbytes not in same_bw:
            x = torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
            same_bw[nbytes] = 2 * (nbytes // 2) / bench(lambda: y.copy_(x)) / 1e6
            del x, y
        return same_bw[nbytes]
    def case(name, file, kname, defines, args, outs, ref_fn, torch_fn, nbytes, extra=(), variants=None, errf=None):
        """args: the kernel's arguments (outputs among them, poisoned each time); ref_fn() -> reference of outs[0]"""
        comp = torch.compile(torch_fn)
        ms_t = bench(torch_fn)
        ms_c = bench(comp)
        vs = list((variants or ROW_VARIANTS).items()) + list(extra)
        # (the other form than the launcher's own: docs/rows.md "rows6", emit_memory.c variant_form)
        ew = name.split()[0] in ("swiglu", "rope", "moe_permute", "dropout_residual")
        vs += [v for v in ROWS6_FORMS if v[0] not in {t for t, _ in vs} and
               not (ew and v[0].startswith("TILEC_VEC_ONLY=2")) and not (not ew and v[0].startswith("TILEC_VARIANT_FORM"))]
        vs += [v for v in ROWS8_FORMS if v[0] not in {t for t, _ in vs}]
        vs += [v for v in EMBRMS_FORMS if v[0] not in {t for t, _ in vs}]
        swept = any(name.startswith(c) for c in os.environ.get("FUSED_SWEEP", "").split(";") if c)
        vs += [v for v in ROWS8_SWEEP if swept and v[0] not in {t for t, _ in vs}]
        # FUSED_TAGS=a,b: only the default and the variants whose tag holds one of the words (one run, fewer launches)
        tags = list(filter(None, os.environ.get("FUSED_TAGS", "").split(",")))
        # FUSED_SWEEP=a;b: these cases (their names' start) also take ROWS8_SWEEP and every variant whose tag holds a
        # word of FUSED_SWEEP_TAGS
        stags = list(filter(None, os.environ.get("FUSED_SWEEP_TAGS", "").split(","))) if swept else []
        if tags: vs = [v for v in vs if v[0] == "default" or any(t in v[0] for t in tags + stags)]
        for tag, dis in vs:
            opts, env, defs, fl = {}, "", dict(defines), file
            if isinstance(dis, dict):  # "file": another source of the same kernel (bench/variants/)
                opts = dict(dis); dis = opts.pop("disable", None); env = opts.pop("env", ""); defs.update(opts.pop("defines", {}))
                fl = opts.pop("file", file)
            for o in outs: o.fill_(float("nan"))
            k = with_env(env, lambda: Kernel(ex(fl), defs, kname, disable=dis, options=opts))
            f = k.bind(*args)
            f(); torch.cuda.synchronize()
            err = errf() if errf else relerr(outs[0], ref_fn())
            ms = bench(f)
            gbs = nbytes / ms / 1e6
            sbw = same_size_copy_bw(nbytes)
            row(name, f"{tag}", ms, "GB/s", gbs, "torch.compile", nbytes / ms_c / 1e6, err)
            table.append((name, tag, gbs / bw, gbs / sbw, ms_t / ms, ms_c / ms, err))
            print(f"fused {name} [{tag}]: {gbs / bw:.3f} of copy BW ({gbs / sbw:.3f} of a same-size copy, {sbw:.0f} GB/s); "
                  f"{ms_t / ms:.3f}x torch eager, {ms_c / ms:.3f}x torch.compile "
                  f"(eager {nbytes / ms_t / 1e6 / bw:.3f}, compile {nbytes / ms_c / 1e6 / bw:.3f} of copy BW); err {err:.1e}", flush=True)
    R = 16384
    only_k = set(filter(None, os.environ.get("FUSED_ONLY", "").split(",")))
    want = lambda n: not only_k or n in only_k
    # rows of 4096 and of 8192 (issue 12's range; FUSED_COLS=4096 for one end): the row kernels at both
    COLS = tuple(int(c) for c in os.environ.get("FUSED_COLS", "4096,8192").split(",") if c)
    for C in COLS:
        if not want("rmsnorm"): break
        x = torch.randn(R, C, device="cuda", dtype=bf); w = torch.randn(C, device="cuda", dtype=bf)
        y = torch.empty_like(x)
        extra = [("rows4 off", {"env": ROWS4_OFF}), ("no fallback blocks", {"env": "TILEC_FALLBACK_BLOCKS=0"}),
                 ("no reduce ILP / FMA", {"env": "TILEC_REDUCE_ILP=0+TILEC_REDUCE_FMA=0"}), ("TILEC_VEC_ONLY=1", {"env": "TILEC_VEC_ONLY=1"}), ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"})]
        case(f"rmsnorm {R}x{C}", "rmsnorm.tile", "rmsnorm", {"BC": C}, (x, w, y, 1e-6), (y,),
             lambda: (lambda xf: xf * torch.rsqrt((xf * xf).mean(1, keepdim=True) + 1e-6) * w.float())(x.float()),
             lambda: F.rms_norm(x, (C,), w, 1e-6), 2 * x.numel() * 2, extra)
        del x, y
    for C in COLS:
        if not want("layernorm"): break
        x = torch.randn(R, C, device="cuda", dtype=bf); w = torch.randn(C, device="cuda", dtype=bf); b = torch.randn(C, device="cuda", dtype=bf)
        y = torch.empty_like(x)
        case(f"layernorm {R}x{C}", "layernorm.tile", "layernorm", {"BC": C}, (x, w, b, y, 1e-5), (y,),
             lambda: F.layer_norm(x.float(), (C,), w.float(), b.float(), 1e-5), lambda: F.layer_norm(x, (C,), w, b, 1e-5),
             2 * x.numel() * 2, [("rows4 off (TILEC_REDUCE_ILP=0 TILEC_REDUCE_FMA=0 TILEC_FALLBACK_BLOCKS=0)", {"env": ROWS4_OFF}),
                                 ("no fallback blocks", {"env": "TILEC_FALLBACK_BLOCKS=0"}),
                                 ("no reduce ILP / FMA", {"env": "TILEC_REDUCE_ILP=0+TILEC_REDUCE_FMA=0"}),
                                 ("warps=8", {"warps": 8}), ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"}),
                                 # the driver's JIT gives the variant 79 registers (ptxas -v: 56): 6 CTAs an SM, not 9
                                 ("TILEC_VEC_ONLY=v (the variant alone)", {"env": "TILEC_VEC_ONLY=v"}),
                                 ("TILEC_VEC_ONLY=v, TILEC_MAXNREG=64", {"env": "TILEC_VEC_ONLY=v+TILEC_MAXNREG=64"}),
                                 ("TILEC_VEC_ONLY=v, TILEC_MAXNREG=72", {"env": "TILEC_VEC_ONLY=v+TILEC_MAXNREG=72"}),
                                 ("W, B first (variants/layernorm_early.tile: before rows5)", {"file": VARIANT("layernorm_early.tile")}),
                                 ("W, B first, TILEC_LAUNCH_VARIANTS=0 (the eighth session's default)", {"file": VARIANT("layernorm_early.tile"), "env": "TILEC_LAUNCH_VARIANTS=0"}),
                                 ("W, B first, TILEC_VEC_ONLY=1", {"file": VARIANT("layernorm_early.tile"), "env": "TILEC_VEC_ONLY=1"})])
        del x, y
    for C in COLS:
        if not want("add_rmsnorm"): break
        x = torch.randn(R, C, device="cuda", dtype=bf); res = torch.randn(R, C, device="cuda", dtype=bf)
        w = torch.randn(C, device="cuda", dtype=bf); sm = torch.empty_like(x); y = torch.empty_like(x)
        def t_add_rms():
            s_ = x + res
            return s_, F.rms_norm(s_, (C,), w, 1e-6)
        case(f"add_rmsnorm {R}x{C}", "add_rmsnorm.tile", "add_rmsnorm", {"BC": C}, (x, res, w, sm, y, 1e-6), (y, sm),
             lambda: (lambda sf: sf * torch.rsqrt((sf * sf).mean(1, keepdim=True) + 1e-6) * w.float())((x.float() + res.float()).bfloat16().float()),
             t_add_rms, 4 * x.numel() * 2, [("TILEC_VEC_ONLY=1", {"env": "TILEC_VEC_ONLY=1"}), ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"})])
        del x, res, sm, y
    for C in COLS:  # examples/add_rmsnorm_fp8.tile: + e4m3 with a scale per row
        if not want("add_rmsnorm_fp8"): break
        x = torch.randn(R, C, device="cuda", dtype=bf); res = torch.randn(R, C, device="cuda", dtype=bf)
        w = torch.randn(C, device="cuda", dtype=bf); sm = torch.empty_like(x)
        q = torch.empty(R, C, device="cuda", dtype=torch.float8_e4m3fn); qs = torch.empty(R, device="cuda")
        def t_add_rms_fp8():
            s_ = x + res
            y_ = F.rms_norm(s_.float(), (C,), w.float(), 1e-6)
            sc = y_.abs().amax(1, keepdim=True).clamp_min(1e-12) / 448
            return s_, (y_ / sc).to(torch.float8_e4m3fn), sc
        def ref_q():  # the kernel's own scales (checked by errf's second term): q within e4m3's rounding
            sf = (x.float() + res.float()).bfloat16().float()
            y_ = sf * torch.rsqrt((sf * sf).mean(1, keepdim=True) + 1e-6) * w.float()
            return y_ / (y_.abs().amax(1, keepdim=True).clamp_min(1e-12) / 448)
        case(f"add_rmsnorm_fp8 {R}x{C}", "add_rmsnorm_fp8.tile", "add_rmsnorm_fp8", {"BC": C}, (x, res, w, sm, q, qs, 1e-6),
             (q, sm, qs), ref_q, t_add_rms_fp8, (2 + 2 + 2 + 1) * x.numel() + 4 * R,
             [("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"})])
        del x, res, sm, q, qs
    for Cs in sorted(set(COLS) | {32768}):
        if not want("softmax"): break
        Rs = R if Cs <= 8192 else 2048
        xs = torch.randn(Rs, Cs, device="cuda", dtype=torch.float32); ys = torch.empty_like(xs)
        # long rows: the whole row in one program's registers (the default, one program an SM) against
        # two passes over column chunks (bench/variants/softmax_online.tile: the second read from L2)
        long_rows = [("warps=8", {"warps": 8}), ("div: e / sum (the example before)", {"file": VARIANT("softmax_div.tile"), "defines": {"BC": Cs}}),
                     ("online, 2 passes, BC=4096", {"file": VARIANT("softmax_online.tile"), "defines": {"BC": 4096}}),
                     ("online, 2 passes, BC=8192", {"file": VARIANT("softmax_online.tile"), "defines": {"BC": 8192}}),
                     ("online, 2 passes, BC=2048", {"file": VARIANT("softmax_online.tile"), "defines": {"BC": 2048}})] \
            if Cs > 8192 else []
        case(f"softmax f32 {Rs}x{Cs}", "softmax.tile", "softmax", {"BC": Cs}, (xs, ys), (ys,),
             lambda: torch.softmax(xs.double(), 1), lambda: torch.softmax(xs, 1), 2 * xs.numel() * 4, long_rows)
        del xs, ys
    if want("swiglu"):
        Rw, Cw = 8192, 14336
        a = torch.randn(Rw, Cw, device="cuda", dtype=bf); b2 = torch.randn(Rw, Cw, device="cuda", dtype=bf); y = torch.empty_like(a)
        case(f"swiglu {Rw}x{Cw}", "swiglu.tile", "swiglu", {}, (a, b2, y), (y,),
             lambda: F.silu(a.float()) * b2.float(), lambda: F.silu(a) * b2, 3 * a.numel() * 2,
             [("rows4 off", {"env": ROWS4_OFF}), ("BR=2 BC=2048", {"defines": {"BR": 2, "BC": 2048}}),
              ("grid column blocks first", {"file": VARIANT("swiglu_colfirst.tile")}),
              ("grid column blocks first, BR=2 BC=2048", {"file": VARIANT("swiglu_colfirst.tile"), "defines": {"BR": 2, "BC": 2048}}),
              ("grid column blocks first, rows4 off", {"file": VARIANT("swiglu_colfirst.tile"), "env": ROWS4_OFF}),
              ("TILEC_GRID_ORDER=0 (rows first)", {"env": "TILEC_GRID_ORDER=0"}),
              ("no fallback blocks", {"env": "TILEC_FALLBACK_BLOCKS=0"}), ("TILEC_VEC_ONLY=1", {"env": "TILEC_VEC_ONLY=1"}), ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"}),
              ("TILEC_VEC_ONLY=2 (the branch kept)", {"env": "TILEC_VEC_ONLY=2"})])
        del a, b2, y
    for H in sorted({C // 128 for C in COLS}):  # a token's row of H heads: 4096 or 8192 columns
        if not want("rope"): break
        T, D = 16384, 128
        xr = torch.randn(T, H, D, device="cuda", dtype=bf); yr = torch.empty_like(xr)
        ang = torch.rand(T, D // 2, device="cuda") * 6.28
        cs_, sn_ = torch.cos(ang), torch.sin(ang)
        def t_rope():
            x1, x2 = xr[..., : D // 2].float(), xr[..., D // 2:].float()
            c, s_ = cs_[:, None, :], sn_[:, None, :]
            return torch.cat((x1 * c - x2 * s_, x2 * c + x1 * s_), -1).to(bf)
        heads8 = {"BT": 4, "BH": 8}  # 8 heads a program (the tables read once for them)
        case(f"rope {T}x{H}x{D}", "rope.tile", "rope", {}, (xr, cs_, sn_, yr), (yr,), lambda: t_rope().float(), t_rope,
             2 * xr.numel() * 2 + 2 * cs_.numel() * 4,
             [("rows4 off", {"env": ROWS4_OFF}), ("BT=4 BH=8", {"defines": heads8}),
              ("BT=16 BH=1 (the old tiles)", {"defines": {"BT": 16, "BH": 1}}),
              ("BT=16 BH=1, TILEC_GRID_ORDER=0", {"defines": {"BT": 16, "BH": 1}, "env": "TILEC_GRID_ORDER=0"}),
              ("BT=2 BH=16", {"defines": {"BT": 2, "BH": 16}}),
              ("grid heads first", {"file": VARIANT("rope_headfirst.tile")}),
              ("grid heads first, rows4 off", {"file": VARIANT("rope_headfirst.tile"), "env": ROWS4_OFF}),
              ("grid heads first, BT=8 BH=2", {"file": VARIANT("rope_headfirst.tile"), "defines": {"BT": 8, "BH": 2}}),
              ("TILEC_GRID_ORDER=0", {"env": "TILEC_GRID_ORDER=0"}),
              ("grid heads first, no fallback blocks", {"file": VARIANT("rope_headfirst.tile"), "env": "TILEC_FALLBACK_BLOCKS=0"}), ("TILEC_VEC_ONLY=1", {"env": "TILEC_VEC_ONLY=1"}), ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"})])
        del xr, yr
    if want("cross_entropy"):
        Rc, V = 4096, 128256
        xl = torch.randn(Rc, V, device="cuda", dtype=bf) * 3; tg = torch.randint(0, V, (Rc,), device="cuda", dtype=torch.int32)
        tg[::17] = -100
        lo = torch.empty(Rc, device="cuda", dtype=torch.float32)
        tl64 = tg.long()
        case(f"cross_entropy {Rc}x{V}", "cross_entropy.tile", "cross_entropy", {}, (xl, tg, lo), (lo,),
             lambda: F.cross_entropy(xl.double(), tl64, reduction="none", ignore_index=-100),
             lambda: F.cross_entropy(xl, tl64, reduction="none", ignore_index=-100), xl.numel() * 2,
             [("loop_prefetch off", {"disable": "loop_prefetch"}), ("TILEC_BF16_WORDS=0 (a select and a widening an element)", {"env": "TILEC_BF16_WORDS=0"}),
              ("BV=8192", {"defines": {"BV": 8192}}),
              ("BV=2048", {"defines": {"BV": 2048}})])
        del xl
    for D in COLS:
        if not want("embedding_rmsnorm"): break
        V = 128256
        E = torch.randn(V, D, device="cuda", dtype=bf); w = torch.randn(D, device="cuda", dtype=bf)
        ids = torch.randint(0, V, (R,), device="cuda", dtype=torch.int32); y = torch.empty(R, D, device="cuda", dtype=bf)
        ids64 = ids.long()
        case(f"embedding_rmsnorm {R}x{D} (V {V})", "embedding_rmsnorm.tile", "embedding_rmsnorm", {"BD": D}, (ids, E, w, y, 1e-6), (y,),
             lambda: (lambda xf: xf * torch.rsqrt((xf * xf).mean(1, keepdim=True) + 1e-6) * w.float())(E[ids64].float()),
             lambda: F.rms_norm(F.embedding(ids64, E), (D,), w, 1e-6), 2 * R * D * 2,
             [("no gather layout (TILEC_GATHER_LAYOUT=0)", {"env": "TILEC_GATHER_LAYOUT=0"}),
              ("BM=1", {"defines": {"BM": 1}}), ("BM=4", {"defines": {"BM": 4}}), ("TILEC_VEC_ONLY=1", {"env": "TILEC_VEC_ONLY=1"}), ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"}),
              ("BM=1, TILEC_VEC_ONLY=1", {"defines": {"BM": 1}, "env": "TILEC_VEC_ONLY=1"}),
              ("TILEC_VEC_ONLY=v (the variant alone)", {"env": "TILEC_VEC_ONLY=v"}),
              ("TILEC_VEC_ONLY=v, TILEC_MAXNREG=80", {"env": "TILEC_VEC_ONLY=v+TILEC_MAXNREG=80"})])
        if os.environ.get("FUSED_EMBRMS"):
            embrms_forms(R, D, V, ids, E, w, y, bw, table)
        del E, y
    if want("moe_permute"):  # top-2 token permutation: Y[j] = X[src[j]] (a gather of whole rows)
        Dm = 4096; N = 2 * R
        X = torch.randn(R, Dm, device="cuda", dtype=bf); src = torch.randint(0, R, (N,), device="cuda", dtype=torch.int32)
        Y = torch.empty(N, Dm, device="cuda", dtype=bf); src64 = src.long()
        case(f"moe_permute {N}x{Dm} (T {R})", "moe_permute.tile", "moe_permute", {}, (X, src, Y), (Y,),
             lambda: X[src64].float(), lambda: X[src64], 2 * N * Dm * 2,
             [("no gather layout (TILEC_GATHER_LAYOUT=0)", {"env": "TILEC_GATHER_LAYOUT=0"}), ("TILEC_VEC_ONLY=1", {"env": "TILEC_VEC_ONLY=1"}), ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"}),
              ("moe rows BM=2", {"defines": {"BM": 2}}), ("moe rows BM=8", {"defines": {"BM": 8}}),
              # the gathered rows' L2 prefetch holds the ids across the kernel: 64 -> 67 registers by ptxas -v, 4 -> 3 CTAs an SM
              ("TILEC_ROW_PREFETCH=16, TILEC_MAXNREG=64", {"env": "TILEC_ROW_PREFETCH=16+TILEC_MAXNREG=64"})])
        del X, Y
    C = 4096
    if want("dropout_residual"):
        x = torch.randn(R, C, device="cuda", dtype=bf); res = torch.randn(R, C, device="cuda", dtype=bf); y = torch.empty_like(x)
        p = 0.1
        def err_drop():  # every element is res, or res + x / (1 - p) (the mask itself: gpu_test_examples, bit-exact)
            d = (y.float() - res.float()); keep = (d - x.float() / (1 - p)).abs() <= 0.02 * (x.float().abs() / (1 - p) + res.float().abs()) + 1e-2
            drop = d.abs() <= 1e-2 * (res.float().abs() + 1e-2)
            frac = keep.float().mean().item()
            return float((~(keep | drop)).float().mean().item()) + abs(frac - (1 - p)) * (abs(frac - (1 - p)) > 0.01)
        case(f"dropout_residual {R}x{C}", "dropout_residual.tile", "dropout_residual", {}, (x, res, y, p, 1234), (y,),
             None, lambda: res + F.dropout(x, p), 3 * x.numel() * 2,
             [("a Philox block per element", {"env": "TILEC_RAND_BLOCK=0"}), ("no row layouts", {"env": "TILEC_ROW_LAYOUT=0"}),
              ("no row_loads", "row_loads"), ("no Philox asm (TILEC_PHILOX_ASM=0)", {"env": "TILEC_PHILOX_ASM=0"}),
              ("BR=4", {"defines": {"BR": 4}}), ("TILEC_VEC_ONLY=1", {"env": "TILEC_VEC_ONLY=1"}), ("TILEC_LAUNCH_VARIANTS=0", {"env": "TILEC_LAUNCH_VARIANTS=0"}), ("BR=4, TILEC_VEC_ONLY=1", {"defines": {"BR": 4}, "env": "TILEC_VEC_ONLY=1"}),
              ("TILEC_RAND_CMP=0 (the uniform compared as a float: rows5)", {"env": "TILEC_RAND_CMP=0"}),
              # the driver's JIT gives it 136 registers (ptxas -v: 96): 3 CTAs an SM, not 5
              ("TILEC_VEC_ONLY=v (the variant alone)", {"env": "TILEC_VEC_ONLY=v"}),
              ("TILEC_VEC_ONLY=v, TILEC_MAXNREG=96", {"env": "TILEC_VEC_ONLY=v+TILEC_MAXNREG=96"}),
              ("TILEC_VEC_ONLY=v, TILEC_MAXNREG=128", {"env": "TILEC_VEC_ONLY=v+TILEC_MAXNREG=128"})], errf=err_drop)
        del x, res, y
    print("\n## fused kernels (ratios in this run; copy bandwidth %.0f GB/s)" % bw)
    print("| kernel | variant | of copy BW | of a same-size copy | vs torch eager | vs torch.compile | rel. err |")
    print("|---|---|---|---|---|---|---|")
    for n, t, fb, fs, re_, rc, e in table:
        print(f"| {n} | {t} | {fb:.3f} | {fs:.3f} | {re_:.3f} | {rc:.3f} | {e:.1e} |")

# ---- the launch variants of row kernels (docs/rows.md "rows5"): the variant without the fallback against the default
# kernel (TILEC_LAUNCH_VARIANTS=0) bit for bit at sizes where it runs, the default where not; TILEC_VEC_ONLY=1 refusals
def vec_only_check():
    bf = torch.bfloat16
    F = torch.nn.functional
    def ln(x, w, b): return F.layer_norm(x.float(), (x.shape[1],), w.float(), b.float(), 1e-5)
    def arms(x, r, w):
        sf = (x.float() + r.float()).bfloat16().float()
        return sf * torch.rsqrt((sf * sf).mean(1, keepdim=True) + 1e-6) * w.float()
    big = torch.randn(301, 4097, device="cuda", dtype=bf)
    shapes = [("1000x4096", (1000, 4096)), ("333x1000", (333, 1000)), ("301x1001 (ragged)", (301, 1001)),
              ("64x4095 view at column 1 (misaligned)", None)]
    for name, shp in shapes:
        if shp: x = torch.randn(*shp, device="cuda", dtype=bf)
        else: x = big[:64, 1:]
        R, Cn = x.shape
        w = torch.randn(Cn, device="cuda", dtype=bf); b = torch.randn(Cn, device="cuda", dtype=bf)
        res = torch.randn(R, Cn, device="cuda", dtype=bf)
        outs = {}
        for tag, env in (("variants", ""), ("off", "TILEC_LAUNCH_VARIANTS=0")):
            y = torch.full((R, Cn), float("nan"), device="cuda", dtype=bf)
            k = with_env(env, lambda: Kernel(ex("layernorm.tile"), {"BC": 4096}, "layernorm"))
            k.bind(x, w, b, y, 1e-5)(); torch.cuda.synchronize()
            y2 = torch.full((R, Cn), float("nan"), device="cuda", dtype=bf); s2 = torch.full_like(y2, float("nan"))
            k2 = with_env(env, lambda: Kernel(ex("add_rmsnorm.tile"), {"BC": 4096}, "add_rmsnorm"))
            k2.bind(x, res, w, s2, y2, 1e-6)(); torch.cuda.synchronize()
            y3 = torch.full((R, Cn), float("nan"), device="cuda", dtype=bf)
            k3 = with_env(env, lambda: Kernel(ex("swiglu.tile"), {}, "swiglu"))
            k3.bind(x, res, y3)(); torch.cuda.synchronize()
            outs[tag] = (y.clone(), y2.clone(), s2.clone(), y3.clone())
        e1, e2 = relerr(outs["variants"][0], ln(x, w, b)), relerr(outs["variants"][1], arms(x, res, w))
        e3 = relerr(outs["variants"][3], F.silu(x.float()) * res.float())
        same = all(torch.equal(u, v) for u, v in zip(outs["variants"], outs["off"]))
        ok = e1 < 1e-2 and e2 < 1e-2 and e3 < 1e-2 and same
        print(f"variants {name}: layernorm rel.err {e1:.1e}, add_rmsnorm {e2:.1e}, swiglu {e3:.1e}, bit-identical to "
              f"TILEC_LAUNCH_VARIANTS=0: {same}: {'PASS' if ok else 'FAIL'}", flush=True)
    os.environ["TILEC_VEC_ONLY"] = "1"
    try:
        # refused: a last size that is not a multiple of 8, a view starting at column 1, a row stride of 4097
        w = torch.randn(4096, device="cuda", dtype=bf)
        for what, xv in (("C=4095", big[:, :4095]), ("view at column 1", big[:, 1:]), ("row stride 4097", big[:, :4096])):
            wv = w[: xv.shape[1]]
            yv = torch.full((xv.shape[0], xv.shape[1]), float("nan"), device="cuda", dtype=bf)
            k2 = Kernel(ex("rmsnorm.tile"), {"BC": 4096}, "rmsnorm")
            try:
                k2.bind(xv, wv, yv, 1e-6)(); torch.cuda.synchronize()
                print(f"veconly refuse {what}: FAIL (launched)", flush=True)
            except RuntimeError as e:
                ok = "TILEC_VEC_ONLY" in str(e) and bool(torch.isnan(yv.float()).all())
                print(f"veconly refuse {what}: {'PASS' if ok else 'FAIL'} ({str(e)[:90]})", flush=True)
    finally:
        os.environ.pop("TILEC_VEC_ONLY", None)

# ---- attention backward (examples/attn_bwd.tile: pre + dK/dV + dQ) beside SDPA's backward --------
def attn_bwd():
    from torch.nn.attention import sdpa_kernel, SDPBackend
    cases = [(64, 4096, 1)] if args.quick else [(64, 4096, 0), (64, 4096, 1), (128, 4096, 0), (128, 4096, 1)]
    if args.attnbwd_cases:
        cases = [tuple(int(x) for x in c.split(":")) for c in args.attnbwd_cases.split(",")]
    Z, H = 4, 16
    for D, S, causal in cases:
        q, k, v, do = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        qr, kr, vr = (t.detach().clone().requires_grad_() for t in (q, k, v))
        ref_o = torch.nn.functional.scaled_dot_product_attention(qr.float(), kr.float(), vr.float(), is_causal=bool(causal))
        ref_o.backward(do.float())
        fl = 10 * Z * H * S * S * D // (2 if causal else 1)  # FA2's count: 2.5x the forward's 4 S^2 D
        refs = {}
        for name, backend in (("FA2 (SDPA flash)", SDPBackend.FLASH_ATTENTION), ("cuDNN SDPA", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel(backend):
                    qb, kb, vb = (t.detach().clone().requires_grad_() for t in (q, k, v))
                    ob = torch.nn.functional.scaled_dot_product_attention(qb, kb, vb, is_causal=bool(causal))
                    refs[name] = bench(lambda: torch.autograd.grad(ob, (qb, kb, vb), do, retain_graph=True))
            except Exception as e:
                print(f"attn bwd {name}: {str(e)[:200]}", flush=True)
        # variants (name, file, options and defines of dK/dV, of dQ, TILEC_SHARED_SLOTS): the example
        # as routed (its @pipeline attributes), on multistage (mma.sync: one ring slot per K / Q / dO
        # tile that two dots read), the same with TILEC_SHARED_SLOTS=0 (each dot its own operand: the
        # shared tiles staged), on cutlass (wgmma), on cutlass with a 128-key dK/dV tile on 8 warps;
        # TILEC_BWD_OLD=FILE adds the earlier FA2-form kernels of FILE (multistage, slots not shared)
        P = ex("attn_bwd.tile")
        ms_, cu_ = {"pipeline": "multistage"}, {"pipeline": "cutlass"}
        big = ({"pipeline": "cutlass", "warps": 8, "kernel": "attn_bwd_dkdv"}, {"BM": 64 if D == 128 else 32, "BN": 128})
        variants = [("default", P, ({}, {}), ({}, {}), None),
                    ("multistage", P, (ms_, {}), (ms_, {}), None),
                    ("multistage shared-slots-off", P, (ms_, {}), (ms_, {}), "0"),
                    ("cutlass", P, (cu_, {}), (cu_, {}), None),
                    ("cutlass dkdv 128 keys 8 warps", P, big, (cu_, {}), None)]
        # split-load: the default kernels with TILEC_LOOP_SPLIT_LOAD=1 (emit_memory.c: dK/dV's per-step LSE and
        # Dl rows in the split form; bench/RESULTS.md "bwd6"); only with --attnbwd-variants ...,split-load
        variants += [("split-load", P, ({}, {}), ({}, {}), {"TILEC_LOOP_SPLIT_LOAD": "1", "TILEC_ROW_STREAM": "0"})]
        # lazy: the default kernels with TILEC_WGMMA_LAZY=1 (wgmma_lazy.c: each wgmma dot waited for before its
        # result's first reader, dP issued under S's group; D64's dK/dV and dQ, D128's dQ; bench/RESULTS.md "bwd7");
        # only with --attnbwd-variants ...,lazy
        variants += [("lazy", P, ({}, {}), ({}, {}), {"TILEC_WGMMA_LAZY": "1"})]
        # rows: the default kernels with TILEC_ROW_STREAM=1 (emit_ring_rows.c: dK/dV's per-step LSE and Dl rows
        # as boxes of its TMA ring, read from shared memory; bench/RESULTS.md "bwdrows"; the default since the
        # twenty-first session, so "rows" = "default" and "norows" is the mechanism off); only with
        # --attnbwd-variants ...,rows / norows
        variants += [("rows", P, ({}, {}), ({}, {}), {"TILEC_ROW_STREAM": "1"})]
        variants += [("norows", P, ({}, {}), ({}, {}), {"TILEC_ROW_STREAM": "0"})]
        # lazywide: TILEC_WGMMA_LAZY_WIDE=1 (wgmma_lazy.c "Wide loops": the D128 dK/dV loop, 192 accumulator
        # registers at one CTA an SM, with FlashAttention-3's order of waits; D64's kernels unchanged); dq64: dQ at
        # D128 with 64 keys a step on 2 stages (two CTAs an SM; the default 32 keys on 4); lazy-wide-dq64: both;
        # lazy-wide-dq64-lazy: and TILEC_WGMMA_LAZY=1 (the dQ loop's waits too); bench/RESULTS.md "bwd8".
        # dq64 is the example's own D128 tile on sm_90a since the twenty-third session; dq32 is the old one
        # (32 keys on 4 stages), the mechanism off
        dq64 = ({"stages": 2}, {"BN": 64}) if D == 128 else ({}, {})
        dq32 = ({"stages": 4}, {"BN": 32}) if D == 128 else ({}, {})
        variants += [("dq32", P, ({}, {}), dq32, None)]
        variants += [("lazywide", P, ({}, {}), ({}, {}), {"TILEC_WGMMA_LAZY_WIDE": "1"}),
                     ("dq64", P, ({}, {}), dq64, None),
                     ("lazywide-dq64", P, ({}, {}), dq64, {"TILEC_WGMMA_LAZY_WIDE": "1"}),
                     ("lazywide-dq64-lazy", P, ({}, {}), dq64, {"TILEC_WGMMA_LAZY_WIDE": "1", "TILEC_WGMMA_LAZY": "1"})]
        # dq128: the dQ kernel on 128 queries and two warpgroups (8 warps, 64 keys a step; D128 3 stages, one CTA an
        # SM at 202 registers, 164 KB; D64 4 stages, two CTAs an SM at 127 registers, 98 KB) against the example's
        # 64 queries on one warpgroup; lazywide-dq128: with TILEC_WGMMA_LAZY_WIDE=1 (bench/RESULTS.md "bwd9")
        dq128 = ({"warps": 8, "stages": 3 if D == 128 else 4}, {"BM": 128, "BN": 64})
        variants += [("dq128", P, ({}, {}), dq128, None),
                     ("lazywide-dq128", P, ({}, {}), dq128, {"TILEC_WGMMA_LAZY_WIDE": "1"})]
        # rows-probe: a timing probe, wrong dK / dV by design (bench/variants/attn_bwd_rows_probe.tile: dK/dV
        # without its per-step row loads, the floor of their cost); only with --attnbwd-variants ...,rows-probe
        variants += [("rows-probe", os.path.join(args.root, "bench", "variants", "attn_bwd_rows_probe.tile"),
                      ({}, {}), ({}, {}), None)]
        if os.environ.get("TILEC_BWD_OLD"):
            variants += [("old multistage", os.environ["TILEC_BWD_OLD"], (ms_, {}), (ms_, {}), "0")]
        # the one-pass form (bench/variants/attn_bwd_fused.tile; see its header): attn_bwd_pre_dq (Dl, the
        # f32 dQ accumulator zeroed), attn_bwd_fused (dK, dV and dQ partials into the accumulator by
        # atomic_add: five dots a block instead of seven), attn_bwd_dq_cast; only with --attnbwd-variants
        # ...,fused (the dQ adds by red per element, TILEC_ATOMIC_TMA=0) and / or ...,fused-tma (by one
        # TMA bulk reduce-add a block, TILEC_ATOMIC_TMA=1: emit_atomic_tma.c); ...,fused-tma-bn128: at
        # D64, 128-key blocks on 8 warps (half the reduce bytes a FLOP, FlashAttention-3's hdim-64 tile);
        # ...,fused-tma2: TILEC_ATOMIC_TMA=2 (two staging buffers, one barrier a step instead of two);
        # ...,fused-tma-lazy: fused-tma with TILEC_WGMMA_LAZY=1 (wgmma_lazy.c, bench/RESULTS.md "bwd7": S^T and dP^T
        # issued together, each group waited for before its result's first reader; D64 only, D128 refuses it:
        # its kernel is fused-tma's); ...,fused-tma-lazy-split: and TILEC_LOOP_SPLIT_LOAD=1 (the row loads' split form);
        # ...,fused-tma[-lazy]-probe-nodq: timing probes without the dQ path (below); ...,fused-tma2[-lazy]-s3:
        # TILEC_ATOMIC_TMA=2 at 3 stages (107520 B at D64: two CTAs an SM, as =1 at 4): the reduce's wait and one
        # barrier of the dQ path off the step at equal occupancy; ...,fused-tma[-lazy]-sa: TILEC_WGMMA_STAGED_A=1 (dQ = dS K
        # on wgmma, dS^T staged MN-major: emit_dot.c stage_wgmma_a; D64 only, D128 keeps mma.sync); ...,fused-tma-rows,
        # ...,fused-tma-lazy-sa-rows: with TILEC_ROW_STREAM=1 (the LSE and Dl rows through the ring, emit_ring_rows.c)
        want = args.attnbwd_variants.split(",") if args.attnbwd_variants else []
        lazy = {"TILEC_ATOMIC_TMA": "1", "TILEC_WGMMA_LAZY": "1"}
        for fname, fenv, flabel in (("fused", "0", "fused (dQ red per element)"), ("fused-tma", "1", "fused (dQ TMA reduce-add)"),
                                    ("fused-tma-bn128", "1", "fused (dQ TMA reduce-add, 128 keys, 8 warps)"),
                                    ("fused-tma2", "2", "fused (dQ TMA reduce-add, 2 buffers, 1 barrier)"),
                                    ("fused-tma-lazy", lazy, "fused (dQ TMA reduce-add, lazy wgmma waits)"),
                                    ("fused-tma-lazy-split", {**lazy, "TILEC_LOOP_SPLIT_LOAD": "1"},
                                     "fused (dQ TMA reduce-add, lazy wgmma waits, split row loads)"),
                                    ("fused-tma-lazy-bn128", lazy, "fused (dQ TMA reduce-add, lazy wgmma waits, 128 keys, 8 warps)"),
                                    ("fused-tma-sa", {"TILEC_ATOMIC_TMA": "1", "TILEC_WGMMA_STAGED_A": "1"},
                                     "fused (dQ TMA reduce-add, dQ on wgmma)"),
                                    ("fused-tma-lazy-sa", {**lazy, "TILEC_WGMMA_STAGED_A": "1"},
                                     "fused (dQ TMA reduce-add, dQ on wgmma, lazy wgmma waits)"),
                                    ("fused-tma-rows", {"TILEC_ATOMIC_TMA": "1", "TILEC_ROW_STREAM": "1"},
                                     "fused (dQ TMA reduce-add, rows through the ring)"),
                                    ("fused-tma-lazy-sa-rows", {**lazy, "TILEC_WGMMA_STAGED_A": "1", "TILEC_ROW_STREAM": "1"},
                                     "fused (dQ TMA reduce-add, dQ on wgmma, lazy wgmma waits, rows through the ring)"),
                                    ("fused-tma-lazy-rows", {**lazy, "TILEC_ROW_STREAM": "1"},
                                     "fused (dQ TMA reduce-add, lazy wgmma waits, rows through the ring)"),
                                    ("fused-tma-rows-wide", {"TILEC_ATOMIC_TMA": "1", "TILEC_ROW_STREAM": "1", "TILEC_WGMMA_LAZY_WIDE": "1"},
                                     "fused (dQ TMA reduce-add, rows through the ring, wide lazy waits: D128)"),
                                    ("fused-tma2-s3", "2", "fused (dQ TMA reduce-add, 2 buffers, 1 barrier, 3 stages)"),
                                    ("fused-tma2-lazy-s3", {**lazy, "TILEC_ATOMIC_TMA": "2"},
                                     "fused (dQ TMA reduce-add, 2 buffers, 1 barrier, 3 stages, lazy wgmma waits)"),
                                    ("fused-tma-probe-nodq", "1", "PROBE fused without its dQ path (dQ wrong by design)"),
                                    ("fused-tma-lazy-probe-nodq", lazy, "PROBE fused lazy without its dQ path (dQ wrong by design)")):
            if fname not in want or ("bn128" in fname and D != 64):
                continue
            fenv = fenv if isinstance(fenv, dict) else {"TILEC_ATOMIC_TMA": fenv}
            if "rows" not in fname:  # (the ring rows are the default since the twenty-first session)
                fenv = {"TILEC_ROW_STREAM": "0", **fenv}
            os.environ.update(fenv)
            try:
                base = {"D": D, "CAUSAL": causal}
                # (...-probe-nodq: bench/variants/attn_bwd_fused_nodq_probe.tile, a timing probe: the one-pass
                # kernel without its dQ path, bench/RESULTS.md "bwd7"; its err column is meaningless)
                PF = os.path.join(args.root, "bench", "variants",
                                  "attn_bwd_fused_nodq_probe.tile" if "probe-nodq" in fname else "attn_bwd_fused.tile")
                kp, kc = (Kernel(PF, base, n) for n in ("attn_bwd_pre_dq", "attn_bwd_dq_cast"))
                # (...-s3: 3 ring stages, so TILEC_ATOMIC_TMA=2's second staging buffer keeps two CTAs an SM at D64)
                kf = Kernel(PF, {**base, "BN": 128}, "attn_bwd_fused", options={"warps": 8}) if "bn128" in fname \
                    else Kernel(PF, base, "attn_bwd_fused", options={"stages": 3} if fname.endswith("-s3") else None)
                o = torch.empty_like(q); lse = torch.empty(Z, H, S, device="cuda"); dl = torch.empty_like(lse)
                dq, dk, dv = (torch.full_like(q, float("nan")) for _ in range(3))
                acc = torch.full((Z, H, S, D), float("nan"), device="cuda")
                sc = D ** -0.5
                Kernel(P, base, "attn_fwd_lse").bind(q, k, v, o, lse, sc)(); torch.cuda.synchronize()
                f1, f2, f3 = kp.bind(o, do, dl, acc), kf.bind(q, k, v, do, lse, dl, dk, dv, acc, sc), kc.bind(acc, dq)
                def f():
                    f1(); f2(); f3()
                f(); torch.cuda.synchronize()
                err = max(relerr(dq, qr.grad), relerr(dk, kr.grad), relerr(dv, vr.grad))
                ms = bench(f)
                print(f"attn bwd D{D} S{S} causal={causal} {fname}: pre+zero {bench(f1):.3f} ms, fused kernel {bench(f2):.3f} ms, "
                      f"cast {bench(f3):.3f} ms, all {ms:.3f} ms", flush=True)
                for name, ms_ref in refs.items():
                    row("attn bwd", f"D{D} S{S} causal={causal} {flabel}", ms, "TFLOP/s", fl / ms / 1e9, name, fl / ms_ref / 1e9, err)
            except Exception as e:
                print(f"attn bwd {fname}: {str(e)[:300]}", flush=True)
            finally:
                for e_ in fenv: os.environ.pop(e_, None)
        if args.attnbwd_variants:  # in the order given (rounds rotate it)
            keep = args.attnbwd_variants.split(",")
            variants = [v for k in keep for v in variants if v[0] == k]
        else:
            variants = [v for v in variants if v[0] not in ("split-load", "rows-probe", "lazy", "rows", "lazywide", "dq32",
                                                            "dq64", "lazywide-dq64", "lazywide-dq64-lazy", "dq128",
                                                            "lazywide-dq128")]
        for pipe, path, (o2, d2), (o3, d3), shared in variants:
            envs = shared if isinstance(shared, dict) else {} if shared is None else {"TILEC_SHARED_SLOTS": shared}
            os.environ.update(envs)
            try:
                base = {"D": D, "CAUSAL": causal}
                prog = {"attn_fwd_lse": Kernel(path, base, "attn_fwd_lse"), "attn_bwd_pre": Kernel(path, base, "attn_bwd_pre"),
                        "attn_bwd_dkdv": Kernel(path, {**base, **d2}, "attn_bwd_dkdv", options=o2),
                        "attn_bwd_dq": Kernel(path, {**base, **d3}, "attn_bwd_dq", options=o3)}
            finally:
                for e in envs: os.environ.pop(e, None)
            o = torch.empty_like(q); lse = torch.empty(Z, H, S, device="cuda"); dl = torch.empty_like(lse)
            dq, dk, dv = (torch.full_like(q, float("nan")) for _ in range(3))
            sc = D ** -0.5
            prog["attn_fwd_lse"].bind(q, k, v, o, lse, sc)(); torch.cuda.synchronize()
            f1 = prog["attn_bwd_pre"].bind(o, do, dl)
            f2 = prog["attn_bwd_dkdv"].bind(q, k, v, do, lse, dl, dk, dv, sc)
            f3 = prog["attn_bwd_dq"].bind(q, k, v, do, lse, dl, dq, sc)
            def f():
                f1(); f2(); f3()
            f(); torch.cuda.synchronize()
            err = max(relerr(dq, qr.grad), relerr(dk, kr.grad), relerr(dv, vr.grad))
            ms = bench(f)
            ms2, ms3 = bench(f2), bench(f3)
            print(f"attn bwd D{D} S{S} causal={causal} {pipe}: dK/dV kernel {ms2:.3f} ms, dQ kernel {ms3:.3f} ms, "
                  f"all {ms:.3f} ms", flush=True)
            for name, ms_ref in refs.items():
                row("attn bwd", f"D{D} S{S} causal={causal} {pipe}", ms, "TFLOP/s", fl / ms / 1e9, name, fl / ms_ref / 1e9, err)

# ---- small-M GEMM (decode, small batches): examples/gemm_small_m.tile ---------------------------
def gemm_small_m():
    configs = [({}, {}), ({"BN": 32, "BK": 256}, {"stages": 3}), ({"BN": 64, "BK": 128}, {"stages": 4}),
               ({"BM": 64}, {})]
    ks = [Kernel(ex("gemm_small_m.tile"), d, "gemm_small_m", options=o) for d, o in configs]
    kc = Kernel(ex("gemm.tile"))
    ksplit = {sp: Kernel(ex("splitk_gemm.tile"), {"BM": 16, "BN": 64, "BK": 128, "SPLIT": sp}) for sp in (4, 8)}
    shapes = [(16, 4096, 4096), (16, 4096, 14336)] if args.quick else \
        [(1, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (16, 14336, 4096),
         (16, 4096, 14336), (64, 28672, 4096), (128, 14336, 4096)]
    for M, N, K in shapes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) / K ** 0.5
        ref = a.float() @ b.float()
        ms_ref = bench(lambda: a @ b)
        best = None
        for (d, o), k in list(zip(configs, ks)) + [(({}, {}), None)]:
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            f = (k or kc).bind(a, b, c)
            f(); torch.cuda.synchronize()
            err = relerr(c, ref)
            ms = bench(f)
            wbytes = K * N * 2
            name = "cutlass_gemm" if k is None else "small_m " + (",".join(f"{x}={y}" for x, y in {**d, **o}.items()) or "default")
            row("gemm small M", f"{M}x{N}x{K} {name}", ms, "GB/s(B)", wbytes / ms / 1e6, "cuBLAS", wbytes / ms_ref / 1e6, err)
        # split-K (examples/splitk_gemm.tile, f32 atomics into a zeroed C; the zeroing is timed too)
        for split, kspl in ksplit.items():
            c32 = torch.full((M, N), float("nan"), device="cuda")
            f = kspl.bind(a, b, c32)
            def g():
                c32.zero_(); f()
            g(); torch.cuda.synchronize()
            err = relerr(c32, ref)
            ms = bench(g)
            row("gemm small M", f"{M}x{N}x{K} splitk BM=16,BN=64,BK=128,SPLIT={split}", ms, "GB/s(B)",
                K * N * 2 / ms / 1e6, "cuBLAS", K * N * 2 / ms_ref / 1e6, err)

# ---- issue 12's split-K goal: "split-K GEMM beats the plain GEMM at M = 16 and K = 14336" ------------
def splitk():
    """examples/splitk_gemm.tile (f32 atomics into C, its zeroing timed with it) against the plain GEMM
    a user writes (gemm.tile's cutlass_gemm: the launch picks its small-M form at M = 16) and cuBLAS,
    M = 16, N = 4096, K = 14336 (and N = K = 4096), timed in rounds with the order rotated."""
    forms = [(4, 64), (8, 64), (4, 128), (2, 64)]
    ks = {f"splitk BM=16,BN={bn},BK=128,SPLIT={sp}": Kernel(ex("splitk_gemm.tile"), {"BM": 16, "BN": bn, "BK": 128, "SPLIT": sp})
          for sp, bn in forms}
    kc = Kernel(ex("gemm.tile"))
    for M, N, K in ((16, 4096, 14336), (16, 4096, 4096)):
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) / K ** 0.5
        ref = a.float() @ b.float()
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        fc = kc.bind(a, b, c)
        fc(); torch.cuda.synchronize()
        names, fns, errs = ["cutlass_gemm (the plain GEMM, small-M form)"], [lambda: a @ b, fc], [relerr(c, ref)]
        for name, k in ks.items():
            c32 = torch.full((M, N), float("nan"), device="cuda")
            f = k.bind(a, b, c32)
            def g(f=f, c32=c32):
                c32.zero_(); f()
            g(); torch.cuda.synchronize()
            errs.append(relerr(c32, ref))
            names.append(name + " (+ C.zero_())"); fns.append(g)
        times = bench_rounds(fns, 3, 300)
        t_ref, t_plain = median(times[0]), median(times[1])
        wbytes = K * N * 2
        for name, t, err in zip(names, times[1:], errs):
            tm = median(t)
            row("splitk", f"{M}x{N}x{K} {name}", tm, "GB/s(B)", wbytes / tm / 1e6, "cuBLAS", wbytes / t_ref / 1e6, err)
            print(f"splitk {M}x{N}x{K} {name}: {tm * 1e3:.1f} us, {t_ref / tm:.3f}x cuBLAS, {t_plain / tm:.3f}x the plain GEMM", flush=True)

# ---- the small-M forms of one cutlass kernel (passes/small_m.c, docs/small_m.md) ----------------
def gemm_small_m_forms():
    """cutlass_gemm (gemm.tile, B [K, N]) and cutlass_linear (nn.Linear storage, W [N, K]) as a user
    loads them: the launch picks the small-M form by M (the default table), the same with the forms
    off (disable-pass small_m: the 128x256 kernel at every M), and each --smallm-forms form alone for
    every M <= 256; beside cuBLAS (a @ b, F.linear) timed in rounds, the order rotated."""
    F = torch.nn.functional
    forms = [f for f in args.smallm_forms.split(",") if f]
    kg = {"on": Kernel(ex("gemm.tile")), "off": Kernel(ex("gemm.tile"), disable="small_m")}
    for f in forms:
        try:
            kg[f] = with_env("TILEC_SMALL_M_FORMS=256=" + f, lambda: Kernel(ex("gemm.tile")))
        except Exception as e:
            print(f"smallm form {f}: FAILED to load: {str(e)[:600]}", flush=True)
    kl = {"on": Kernel("linear_plain.tile", source=LINEAR_PLAIN),
          "off": Kernel("linear_plain.tile", source=LINEAR_PLAIN, disable="small_m")}
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.smallm_sizes.split(",")] if args.smallm_sizes else \
        [(16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (256, 4096, 4096), (16, 4096, 14336),
         (128, 4096, 14336)]
    for M, N, K in sizes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) / K ** 0.5
        w = b.t().contiguous()
        ref = a.float() @ b.float()
        wbytes = K * N * 2
        for what, ks, refn, reff, bw in (("gemm", kg, "cuBLAS a@b", lambda: a @ b, b),
                                          ("linear", kl, "cuBLAS F.linear", lambda: F.linear(a, w), w)):
            names, fns, errs = [], [reff], []
            for name, k in ks.items():
                c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                f = k.bind(a, bw, c)
                f(); torch.cuda.synchronize()
                errs.append(relerr(c, ref))
                names.append(name); fns.append(f)
            times = bench_rounds(fns, args.smallm_rounds, 300)
            t_ref = median(times[0])
            for name, t, err in zip(names, times[1:], errs):
                tm = median(t)
                label = {"on": "forms on (default table)", "off": "forms off (128x256 kernel)"}.get(name, "form " + name)
                row(f"small-M {what}", f"{M}x{N}x{K} {label}", tm, "GB/s(B)", wbytes / tm / 1e6, refn,
                    wbytes / t_ref / 1e6, err)

# ---- decode attention, paged KV cache, split-KV (examples/attn_decode.tile) -------------
def copy_bandwidth():
    """GB/s of a device-to-device copy, counting bytes read plus written (the ceiling)."""
    x = torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
    ms = bench(lambda: y.copy_(x))
    del x, y
    return 2 * (2 << 30) / ms / 1e6

def bench_graph(make, n=20):
    """ms a call of the launches `make()` returns (a callable; bound to the current stream when made),
    captured n times in one CUDA graph and timed by replaying it: the time without the CPU's
    launch gaps, as a serving stack's decode step runs."""
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        f = make()
        f(); f()
        s.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            for _ in range(n):
                f()
    torch.cuda.synchronize()
    return bench(g.replay) / n

def paged_cache(B, L, PAGE, HKV, G, D):
    """A paged bf16 KV cache of B sequences of L tokens (pages of PAGE tokens in a shuffled block
    table), their lengths and one query token each: (K pages, V pages, table [B, L // PAGE], lens, q)."""
    npg = L // PAGE
    NP = B * npg
    Kc = torch.randn(NP, HKV, PAGE, D, device="cuda", dtype=torch.bfloat16)
    Vc = torch.randn(NP, HKV, PAGE, D, device="cuda", dtype=torch.bfloat16)
    table = torch.randperm(NP, device="cuda", dtype=torch.int32).view(B, npg)
    lens = torch.full((B,), L, device="cuda", dtype=torch.int32)
    q = torch.randn(B, HKV, G, D, device="cuda", dtype=torch.bfloat16)
    return Kc, Vc, table, lens, q


def decode():
    D, HKV, G = 128, 8, 4  # Llama-3-8B: 32 query heads, 8 KV heads
    variants = [(0, 64, 0)] + [tuple((int(x) for x in (v + ":0").split(":")[:3])) for v in args.decode_variants.split(",") if v]
    kernels = {}
    for w, bt, st in variants:
        opt = {"warps": w} if w else {}
        if st:
            opt["stages"] = st
        kernels[(w, bt, st)] = (Kernel(ex("attn_decode.tile"), {"BT": bt}, "attn_decode_paged", options=opt),
                                Kernel(ex("attn_decode.tile"), kernel="attn_decode_combine"))
    kcontig = Kernel(ex("attn_decode.tile"), kernel="attn_decode_contig")
    bw = copy_bandwidth()
    print(f"decode: copy bandwidth {bw:.0f} GB/s (read + write)", flush=True)
    cases = [(1, 4096), (1, 131072), (8, 32768)] if args.quick else \
        [(1, 4096), (1, 32768), (1, 131072), (8, 8192), (8, 32768), (32, 4096), (32, 16384), (64, 4096), (64, 8192)]
    for B, L in cases:
        for (w, bt, st), (kd, kc) in kernels.items():
            PAGE = max(64, bt)
            Kc, Vc, table, lens, q = paged_cache(B, L, PAGE, HKV, G, D)
            # splits: about two waves of programs over 132 SMs, a whole number of pages each,
            NS = max(1, min(64, -(-int(132 * args.decode_waves) * 2 // (B * HKV)), L // (args.decode_min_tiles * bt)))  # and >= 8 key tiles a split
            chunk = -(-(-(-L // NS)) // PAGE) * PAGE
            NS = -(-L // chunk)
            opart = torch.full((B * HKV, NS, G, D), float("nan"), device="cuda")
            lse = torch.full((B * HKV, NS, G), float("nan"), device="cuda")
            o = torch.full((B, HKV, G, D), float("nan"), device="cuda", dtype=torch.bfloat16)
            f1 = kd.bind(q, Kc, Vc, table, lens, opart, lse, D ** -0.5, chunk)
            f2 = kc.bind(opart, lse, o)
            def f():
                f1(); f2()
            f(); torch.cuda.synchronize()
            # references on the same cache made contiguous: SDPA (flash / cuDNN picks) with GQA
            kk = Kc[table.long()].permute(0, 2, 1, 3, 4).reshape(B, HKV, L, D)
            vv = Vc[table.long()].permute(0, 2, 1, 3, 4).reshape(B, HKV, L, D)
            qq = q.reshape(B, HKV * G, 1, D)
            sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, enable_gqa=True)
            refo = torch.nn.functional.scaled_dot_product_attention(qq.float(), kk.float(), vv.float(), enable_gqa=True)
            err = relerr(o.reshape(B, HKV * G, 1, D), refo)
            ms = bench(f)
            ms1 = bench(f1)
            ms_ref = bench(sdpa)
            kv = 2 * B * L * HKV * D * 2
            tag = f"w{w or 'def'} BT{bt} S{st or 'def'} " if len(kernels) > 1 else ""
            row("decode paged", f"{tag}B{B} L{L} NS{NS}", ms, "GB/s", kv / ms / 1e6, "SDPA contiguous", kv / ms_ref / 1e6, err)
            print(f"decode {tag}B{B} L{L}: {kv / ms / 1e6 / bw:.3f} of the copy bandwidth "
                  f"(split kernel alone {kv / ms1 / 1e6 / bw:.3f})", flush=True)
            res[f"decode paged {tag}B{B} L{L} NS{NS}"]["of_copy_bw"] = kv / ms / 1e6 / bw
            def make_pair():
                b1 = kd.bind(q, Kc, Vc, table, lens, opart, lse, D ** -0.5, chunk)
                b2 = kc.bind(opart, lse, o)
                return lambda: (b1(), b2())
            msg = bench_graph(make_pair)
            msg_ref = bench_graph(lambda: sdpa)
            print(f"decode {tag}B{B} L{L} in a CUDA graph: {kv / msg / 1e6 / bw:.3f} of the copy bandwidth "
                  f"({msg * 1e3:.1f} us; SDPA on the contiguous cache {kv / msg_ref / 1e6 / bw:.3f}, {msg_ref * 1e3:.1f} us)", flush=True)
            res[f"decode paged {tag}B{B} L{L} NS{NS}"]["of_copy_bw_graph"] = kv / msg / 1e6 / bw
            if w == 0 and bt == 64 and st == 0:  # the same kernel on an identity page table (pages in order)
                ident = torch.arange(table.numel(), device="cuda", dtype=torch.int32).view(table.shape)
                h1 = kd.bind(q, Kc, Vc, ident, lens, opart, lse, D ** -0.5, chunk)
                msi = bench(lambda: (h1(), f2()))
                print(f"decode B{B} L{L}: identity page table {kv / msi / 1e6 / bw:.3f} of the copy bandwidth "
                      f"(scrambled {kv / ms / 1e6 / bw:.3f})", flush=True)
                # the contiguous-cache kernel on SDPA's own tensors (streamed loads)
                o.fill_(float("nan"))
                g1 = kcontig.bind(q, kk, vv, lens, opart, lse, D ** -0.5, chunk)
                def g():
                    g1(); f2()
                g(); torch.cuda.synchronize()
                errc = relerr(o.reshape(B, HKV * G, 1, D), refo)
                msc = bench(g)
                row("decode contig", f"B{B} L{L} NS{NS}", msc, "GB/s", kv / msc / 1e6, "SDPA contiguous", kv / ms_ref / 1e6, errc)
                print(f"decode contig B{B} L{L}: {kv / msc / 1e6 / bw:.3f} of the copy bandwidth", flush=True)
            del Kc, Vc, kk, vv

def decode_splits(B, HKV, L, page, rule, programs_an_sm):
    """(NS, chunk) of a decode launch.  'waves' (the default rows above): about --decode-waves waves
    of programs, at least --decode-min-tiles key tiles a split.  'fill' (branch decode5): one wave,
    as many splits as keep every program slot busy, floor(slots / (B * HKV)) (so never a second,
    part-empty wave), at least one page a split; slots = 132 SMs x the programs an SM holds."""
    if rule == "waves":
        NS = max(1, min(64, -(-int(132 * args.decode_waves) * 2 // (B * HKV)), L // (args.decode_min_tiles * 64)))
    else:
        NS = max(1, min(64, 132 * programs_an_sm // (B * HKV), L // page))
    chunk = -(-(-(-L // NS)) // page) * page
    return -(-L // chunk), chunk

def decode_forms():
    """The short decode cases under each form, in one process (branch decode5): 'pair' = attn_decode_paged
    + attn_decode_combine (two launches) and 'fused' = attn_decode_fused (one launch: the last program of a
    head merges, atomic_fetch_add); split rule 'waves' (the old default) or 'fill' (one full wave);
    ring = TILEC_SCRATCH_OVER_RING (the peeled tile's staging over the drained ring: 102 KiB a program,
    two an SM, against 120 KiB and one).  Each form checked against SDPA in fp32 (rel. err), timed back
    to back and in a CUDA graph; fractions of the copy bandwidth; a table last."""
    D, HKV, G, PAGE = 128, 8, 4, 64
    forms = [("pair waves ring0", "pair", "waves", "0"), ("pair fill ring1", "pair", "fill", "1"),
             ("fused fill ring1", "fused", "fill", "1"), ("fused fill ring0", "fused", "fill", "0"),
             ("fused waves ring0", "fused", "waves", "0")]
    ks = {}
    for ring in ("0", "1"):
        ks[ring] = with_env(f"TILEC_SCRATCH_OVER_RING={ring}", lambda: (
            Kernel(ex("attn_decode.tile"), kernel="attn_decode_paged"),
            Kernel(ex("attn_decode.tile"), kernel="attn_decode_combine"),
            Kernel(ex("attn_decode.tile"), kernel="attn_decode_fused")))
    bw = copy_bandwidth()
    print(f"decodeforms: copy bandwidth {bw:.0f} GB/s (read + write)", flush=True)
    table = []
    for case in args.decode_forms_cases.split(","):
        B, L = (int(x) for x in case.split(":"))
        Kc, Vc, table_, lens, q = paged_cache(B, L, PAGE, HKV, G, D)
        kk = Kc[table_.long()].permute(0, 2, 1, 3, 4).reshape(B, HKV, L, D)
        vv = Vc[table_.long()].permute(0, 2, 1, 3, 4).reshape(B, HKV, L, D)
        refo = torch.nn.functional.scaled_dot_product_attention(q.reshape(B, HKV * G, 1, D).float(), kk.float(),
                                                                vv.float(), enable_gqa=True)
        del kk, vv
        kv = 2 * B * L * HKV * D * 2
        row_ = [f"B{B} L{L}"]
        for name, kind, rule, ring in forms:
            NS, chunk = decode_splits(B, HKV, L, PAGE, rule, 2 if ring == "1" else 1)
            kd, kc, kf = ks[ring]
            o = torch.full((B, HKV, G, D), float("nan"), device="cuda", dtype=torch.bfloat16)
            if kind == "pair":
                opart = torch.full((B * HKV, NS, G, D), float("nan"), device="cuda")
                lse = torch.full((B * HKV, NS, G), float("nan"), device="cuda")
                def make(opart=opart, lse=lse, o=o, chunk=chunk):
                    b1 = kd.bind(q, Kc, Vc, table_, lens, opart, lse, D ** -0.5, chunk)
                    b2 = kc.bind(opart, lse, o)
                    return lambda: (b1(), b2())
            else:
                opart = torch.full((B * HKV, NS, G, D), float("nan"), device="cuda")
                lse = torch.full((B * HKV, NS, G), float("nan"), device="cuda")
                count = torch.zeros(B * HKV, device="cuda", dtype=torch.int32)
                def make(opart=opart, lse=lse, o=o, count=count, chunk=chunk):
                    return kf.bind(q, Kc, Vc, table_, lens, opart, lse, o, count, D ** -0.5, chunk)
            f = make()
            f(); f(); torch.cuda.synchronize()
            err = relerr(o.reshape(B, HKV * G, 1, D), refo)
            bad = "" if err < 2e-2 else " WRONG"
            if kind == "fused" and int(count.abs().sum()) != 0: bad += " COUNTS"
            ms = bench(f)
            msg = bench_graph(make)
            fe, fg = kv / ms / 1e6 / bw, kv / msg / 1e6 / bw
            print(f"decodeforms B{B} L{L} {name} NS{NS}: {fe:.3f} / graph {fg:.3f} of the copy bandwidth "
                  f"({ms * 1e3:.1f} / {msg * 1e3:.1f} us), rel.err {err:.1e}{bad}", flush=True)
            res[f"decodeforms B{B} L{L} {name}"] = {"NS": NS, "us": ms * 1e3, "us_graph": msg * 1e3,
                                                      "of_copy_bw": fe, "of_copy_bw_graph": fg, "relerr": err}
            row_.append(f"{fe:.3f} / {fg:.3f} NS{NS}{bad}")
        table.append(row_)
        del Kc, Vc
    print("\n## decode forms: of the copy bandwidth, back to back / CUDA graph (NS = splits)")
    print("| case | " + " | ".join(n for n, *_ in forms) + " |")
    print("|---" * (len(forms) + 1) + "|")
    for r in table:
        print("| " + " | ".join(r) + " |", flush=True)

# ---- linear + bias + GELU (examples/gemm_bias_gelu.tile), nn.Linear storage of W -------------
# The same kernel without its epilogue (the plain GEMM it costs against).
LINEAR_PLAIN = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "variants", "linear_plain.tile")).read()

def linear_gelu():
    import torch.nn.functional as F
    variants = [""] + [v for v in args.linear_variants.split(",") if v]
    kg = [with_env(v, lambda: Kernel(ex("gemm_bias_gelu.tile"))) for v in variants]
    # (with --rounds only the default plain linear: every GELU form is timed against it in the same rounds)
    kp = [with_env(v, lambda: Kernel("linear_plain.tile", source=LINEAR_PLAIN))
          for v in (variants[:1] if args.rounds > 0 else variants)]
    kp += kp[:1] * (len(variants) - len(kp))
    # the tanh form of the same GELU (the example's first version), one more row
    src = open(ex("gemm_bias_gelu.tile")).read()
    tanh_src = re.sub(r"y = x \* sigmoid\(1\.5957691216 \* (\(.*\))\);",
                      r"y = 0.5 * x * (1.0 + tanh(0.7978845608 * \1));", src)
    if tanh_src != src:
        variants.append("tanh form")
        kg.append(Kernel("gemm_bias_gelu_tanh.tile", source=tanh_src))
        kp.append(kp[0])
    # the argument as x * fma(x^2, c3, c1) (7 FP32 ops an element instead of 9; gelu6), by default and under
    # TILEC_TANH_APPROX=1 (one MUFU.TANH an element; with the packed staging words)
    fma_src = re.sub(r"y = x \* sigmoid\(1\.5957691216 \* \(.*\)\);",
                     "y = x * sigmoid(x * fma(x * x, 0.0713548162726, 1.5957691216));", src)
    if fma_src != src:
        for v in ["", "TILEC_TANH_APPROX=1+TILEC_EPI_PACK=1"]:
            variants.append("fma form" + (" " + v if v else ""))
            kg.append(with_env(v, lambda: Kernel("gemm_bias_gelu_fma.tile", source=fma_src)))
            kp.append(kp[0])
    if args.linear_pingpong:  # the one-warpgroup tile the ping-pong schedule takes (emit_ws.c)
        pp_src = os.path.join(args.root, "tests", "gpu", "pingpong", "gemm_bias_gelu.tile")
        for v in ["", "TILEC_WS=coop", "TILEC_WS=pingpong"]:
            variants.append("128x128 4 warps" + (" " + v if v else ""))
            kg.append(with_env(v, lambda: Kernel(pp_src)))
            kp.append(kp[0])
    def torch_fn(x, w, b):
        return F.gelu(F.linear(x, w, b), approximate="tanh")
    compiled = None if args.linear_no_compile else torch.compile(torch_fn)
    sizes = [(8192, 4096, 4096)] if args.quick else [(8192, 4096, 4096), (8192, 14336, 4096), (4096, 4096, 4096)]
    if args.linear_sizes:
        sizes = [tuple(int(x) for x in s.split("x")) for s in args.linear_sizes.split(",")]
    for M, N, K in sizes:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
        b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        ref = F.gelu(x.float() @ w.float().t() + b.float(), approximate="tanh")
        fl = 2 * M * N * K
        ms_eager = bench(lambda: torch_fn(x, w, b))
        ms_comp, err_comp = float("nan"), float("nan")
        if compiled is not None:
            compiled(x, w, b)
            ms_comp = bench(lambda: compiled(x, w, b))
            err_comp = relerr(compiled(x, w, b), ref)
        ms_cublas = bench(lambda: F.linear(x, w))
        print(f"linear {M}x{N}x{K}: torch eager {fl / ms_eager / 1e9:.1f}, torch.compile {fl / ms_comp / 1e9:.1f} "
              f"(rel.err {err_comp:.1e}), cuBLAS plain {fl / ms_cublas / 1e9:.1f} TFLOP/s", flush=True)
        for v, k1, k2 in zip(variants, kg, kp):
            if args.rounds > 0:
                break  # timed in the rounds below
            tag = f" [{v}]" if v else ""
            ms, err = run_poisoned(k1, (x, w, b), (M, N), ref)
            msp, errp = run_poisoned(k2, (x, w), (M, N), x.float() @ w.float().t())
            if compiled is not None:
                row("linear+bias+gelu" + tag, f"{M}x{N}x{K}", ms, "TFLOP/s", fl / ms / 1e9, "torch.compile", fl / ms_comp / 1e9, err)
            row("linear+bias+gelu" + tag, f"{M}x{N}x{K}", ms, "TFLOP/s", fl / ms / 1e9, "torch eager", fl / ms_eager / 1e9, err)
            row("linear+bias+gelu" + tag, f"{M}x{N}x{K}", ms, "TFLOP/s", fl / ms / 1e9, "tilec plain linear", fl / msp / 1e9, err)
            row("linear plain" + tag, f"{M}x{N}x{K}", msp, "TFLOP/s", fl / msp / 1e9, "cuBLAS", fl / ms_cublas / 1e9, errp)
        if args.rounds > 0:  # every GELU kernel, the default plain linear, cuBLAS and torch.compile in rotated rounds
            outs = [torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16) for _ in kg]
            yp = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            fs = [kp[0].bind(x, w, yp), lambda: F.linear(x, w)] + ([lambda: compiled(x, w, b)] if compiled is not None else [])
            nref = len(fs)
            fs += [k.bind(x, w, b, o) for k, o in zip(kg, outs)]
            times = bench_rounds(fs, args.rounds, args.warm_ms)
            print(f"linear {M}x{N}x{K}, {args.rounds} rotated rounds (medians; ratio per round min..max):", flush=True)
            print(f"  tilec plain linear {median(times[0]):.4f} ms, x cuBLAS plain {median(times[1]) / median(times[0]):.3f}", flush=True)
            for v, o, ts in zip(variants, outs, times[nref:]):
                rp = sorted(a / t for a, t in zip(times[0], ts))
                msg = (f"  gelu [{v or 'default'}] {median(ts):.4f} ms: x plain linear {median(rp):.3f} "
                       f"({rp[0]:.3f}..{rp[-1]:.3f})")
                if compiled is not None:
                    rc = sorted(a / t for a, t in zip(times[2], ts))
                    msg += f", x torch.compile {median(rc):.3f} ({rc[0]:.3f}..{rc[-1]:.3f})"
                print(msg + f", rel.err {relerr(o, ref):.1e}", flush=True)
# ---- GEMM + residual (examples/llama/gemm_residual.tile) beside the plain GEMM and cuBLAS's addmm ----
def gemm_residual():
    variants = [""] + [v for v in args.residual_variants.split(",") if v]
    kr = [with_env(v, lambda: Kernel(ex("llama/gemm_residual.tile"))) for v in variants]
    kp = [with_env(v, lambda: Kernel(ex("gemm.tile"))) for v in variants]
    sizes = [(8192, 4096, 4096)] if args.quick else [(8192, 4096, 4096), (8192, 4096, 14336)]
    if args.linear_sizes:
        sizes = [tuple(int(x) for x in s.split("x")) for s in args.linear_sizes.split(",")]
    for M, N, K in sizes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16) * K ** -0.5
        r = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ b.float() + r.float()
        fl = 2 * M * N * K
        ms_addmm = bench(lambda: torch.addmm(r, a, b))
        for v, k1, k2 in zip(variants, kr, kp):
            tag = f" [{v}]" if v else ""
            ms, err = run_poisoned(k1, (a, b, r), (M, N), ref)
            msp, _ = run_poisoned(k2, (a, b), (M, N), a.float() @ b.float())
            row("gemm+residual" + tag, f"{M}x{N}x{K}", ms, "TFLOP/s", fl / ms / 1e9, "cuBLAS addmm (beta 1)", fl / ms_addmm / 1e9, err)
            row("gemm+residual" + tag, f"{M}x{N}x{K}", ms, "TFLOP/s", fl / ms / 1e9, "tilec plain gemm", fl / msp / 1e9, err)

# ---- MoE grouped GEMM (examples/moe_gemm.tile) against the dense GEMM of the same total size ----------
def moe_gemm():
    k = Kernel(ex("moe_gemm.tile"))
    BM = 128
    cases = [(8, 4096, 2, 14336, 4096)] if args.quick else \
        [(8, 4096, 2, 14336, 4096), (8, 4096, 2, 4096, 14336), (64, 4096, 8, 2048, 7168), (8, 512, 2, 14336, 4096)]
    for E, T, TOPK, N, K in cases:  # Mixtral-8x7B (gate/up, down), DeepSeek-V3-like, a small batch
        g = torch.Generator(device="cuda"); g.manual_seed(E * T)
        choice = torch.stack([torch.randperm(E, device="cuda", generator=g)[:TOPK] for _ in range(T)])
        counts = torch.bincount(choice.flatten(), minlength=E).tolist()
        padded = [-(-c // BM) * BM for c in counts]
        M = sum(padded)
        x = torch.zeros(M, K, device="cuda", dtype=torch.bfloat16)
        starts = [sum(padded[:e]) for e in range(E)]
        for e in range(E):
            x[starts[e]:starts[e] + counts[e]] = torch.randn(counts[e], K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(E, N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
        te = torch.cat([torch.full((p // BM,), e, dtype=torch.int32) for e, p in enumerate(padded)]).cuda()
        y = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        f = k.bind(x, w, te, y)
        f(); torch.cuda.synchronize()
        ref = torch.cat([x[starts[e]:starts[e] + padded[e]].float() @ w[e].float().t() for e in range(E)])
        err = relerr(y, ref)
        ms = bench(f)
        loop = lambda: [x[starts[e]:starts[e] + padded[e]] @ w[e].t() for e in range(E)]
        ms_loop = bench(loop)
        wd = w[0]  # the dense GEMM of the same total size: M x N x K with one weight
        ms_dense = bench(lambda: x @ wd.t())
        fl = 2 * M * N * K
        shape = f"E{E} T{T} top{TOPK} M{M} N{N} K{K}"
        row("moe grouped gemm", shape, ms, "TFLOP/s", fl / ms / 1e9, "dense cuBLAS same size", fl / ms_dense / 1e9, err)
        row("moe grouped gemm", shape, ms, "TFLOP/s", fl / ms / 1e9, "torch per-expert loop", fl / ms_loop / 1e9, err)

# ---- top-k / top-p sampling over a Llama-3 vocabulary (examples/topk_sample.tile) ----------------------
def topk_sample():
    k1 = Kernel(ex("topk_sample.tile"), kernel="topk_candidates")
    k2 = Kernel(ex("topk_sample.tile"), kernel="topk_sample")
    V, TOPK, TOPP, TEMP = 128256, 50, 0.9, 0.8
    def torch_sample(logits):
        v, i = torch.topk(logits, TOPK, dim=-1)
        p = torch.softmax(v / TEMP, dim=-1)
        keep = (torch.cumsum(p, -1) - p) < TOPP
        p = torch.where(keep, p, 0.0)
        p = p / p.sum(-1, keepdim=True)
        return i.gather(-1, torch.multinomial(p, 1)), p
    compiled = torch.compile(torch_sample)
    for B in ([1, 64] if args.quick else [1, 16, 64, 256]):
        logits = torch.randn(B, V, device="cuda") * 3
        NC = -(-V // 4096) * 64
        cand = torch.empty(B, NC, device="cuda", dtype=torch.int64)
        out = torch.full((B,), -1, device="cuda", dtype=torch.int32)
        prob = torch.full((B,), float("nan"), device="cuda")
        f1 = k1.bind(logits, cand)
        f2 = k2.bind(cand, out, prob, TOPK, TOPP, TEMP, 1234)
        def f():
            f1(); f2()
        f(); torch.cuda.synchronize()
        # the token must be one torch keeps, with torch's renormalised probability
        v, i = torch.topk(logits.double(), TOPK, dim=-1)
        p = torch.softmax(v / TEMP, dim=-1)
        keep = (torch.cumsum(p, -1) - p) < TOPP
        p = torch.where(keep, p, 0.0); p = p / p.sum(-1, keepdim=True)
        hit = (i == out.long()[:, None])
        ok = bool((hit & keep).any(-1).all())
        want = (p * hit).sum(-1)
        err = float((prob.double() - want).abs().max()) if ok else float("inf")
        ms = bench(f)
        compiled(logits); torch.cuda.synchronize()
        ms_eager = bench(lambda: torch_sample(logits))
        ms_comp = bench(lambda: compiled(logits))
        # rows sampled per millisecond (higher is better, so the ratio reads like the others)
        row("topk sample", f"B{B} V{V} k{TOPK} p{TOPP}", ms, "rows/ms", B / ms, "torch eager", B / ms_eager, err)
        row("topk sample", f"B{B} V{V} k{TOPK} p{TOPP}", ms, "rows/ms", B / ms, "torch.compile", B / ms_comp, err)
        print(f"topk B{B}: tilec {ms * 1e3:.1f} us, eager {ms_eager * 1e3:.1f}, torch.compile {ms_comp * 1e3:.1f} "
              f"(speed-up {ms_eager / ms:.2f}x / {ms_comp / ms:.2f}x); token in torch's kept set: {ok}", flush=True)

# ---- W4A16: int4 weights, group-wise scales (examples/gemm_w4a16.tile) beside the bf16 cuBLAS GEMM ---------
# Variants: the operand prologue on (the words and scales stream through the cp.async ring, the
# dequantization runs between shared memory and the staging; the default) and off (TILEC_PROLOGUE=0: the kernel
# of before, `simple`, every K step waiting for its loads), B computed in its mma.sync fragments (the default)
# or staged through shared memory ("staged": TILEC_PROLOGUE_FRAG=0), and BN 32 / 64 / 128 at small M (the grid
# is N / BN programs: 64 at BN 64 for 132 SMs).
def gemm_w4a16():
    G = 128
    shapes = [(1, 4096, 4096), (16, 4096, 4096), (4096, 4096, 4096)] if args.quick else \
        [(1, 4096, 4096), (16, 4096, 4096), (16, 14336, 4096), (16, 4096, 14336), (64, 4096, 4096), (4096, 4096, 4096)]
    if os.environ.get("W4A16_SHAPES"):  # e.g. 1x4096x4096,16x4096x4096
        shapes = [tuple(int(x) for x in t.split("x")) for t in os.environ["W4A16_SHAPES"].split(",")]

    # code switches of a variant (prologue "env:NAME=V,NAME=V": the default form with those set)
    def env_of(prologue):
        return dict(kv.split("=") for kv in prologue[4:].split(",")) if isinstance(prologue, str) and \
            prologue.startswith("env:") else {}
    def kern(defines, prologue, split):
        sw = {"TILEC_PROLOGUE": "1" if prologue else "0", **env_of(prologue)}  # on by default; both forms measured
        if prologue == "staged": sw["TILEC_PROLOGUE_FRAG"] = "0"  # B staged (default: in its fragments)
        opts = {"stages": sw.pop("STAGES")} if "STAGES" in sw else None  # the ring's depth (@stages(4))
        os.environ.update(sw)
        try:
            return Kernel(ex("gemm_w4a16.tile"), defines, "gemm_w4a16_splitk" if split else "gemm_w4a16", options=opts)
        finally:
            for k_ in sw: os.environ.pop(k_, None)
    # examples/gemm_w4a16_packed.tile (nineteenth session, w4a16e): the words repacked into the mma fragment
    # order (w4a16_repack, once per weight), unsplit ("packed BN..") and split-K with the last program of a
    # tile merging the partials ("packed merge BN.. SPLIT..": bf16 C, no zeroing kernel; P and Count made once)
    def kern_packed(defines, sw, name):
        os.environ.update(sw)
        try:
            return Kernel(ex("gemm_w4a16_packed.tile"), defines, name)
        finally:
            for k_ in sw: os.environ.pop(k_, None)
    def repack(wq):  # GPTQ order -> the packed order (the .tile file's header), on the GPU
        KW_, N_ = wq.shape
        k_ = torch.arange(KW_ * 8, device="cuda")
        nib = (wq.repeat_interleave(8, 0) >> (4 * (k_ % 8)).view(-1, 1)) & 15
        out = torch.zeros(KW_, N_, dtype=torch.int64, device="cuda")
        out.index_add_(0, 4 * (k_ // 32) + (k_ % 8) // 2, nib.long() << (4 * ((k_ // 8) % 4) + 16 * (k_ % 2)).view(-1, 1))
        out = out & 0xFFFFFFFF
        return torch.where(out >= 2 ** 31, out - 2 ** 32, out).to(torch.int32)
    # W4A16_GRAPH=1: each variant (and cuBLAS) also timed as a CUDA graph of n launches, launch i on weight
    # copy i (n copies >= 256 MB together, so no launch finds its weights in the 50 MB L2, as a model's
    # layers do not): the kernels back to back, without the launcher's CPU time or do_bench's fixed cost
    # of one timed launch (4.5 us, eighth session); time = one replay / n
    graph_on = os.environ.get("W4A16_GRAPH") == "1"
    def graph_time(make, n):
        st_ = torch.cuda.Stream()
        with torch.cuda.stream(st_):
            fs = [make(i) for i in range(n)]  # bound to st_ (tilec's launchers take the current stream)
            for _ in range(2):
                for f_ in fs: f_()
            st_.synchronize()
            g_ = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g_, stream=st_):
                for f_ in fs: f_()
        torch.cuda.synchronize()
        return bench(g_.replay) / n
    cache = {}
    for M, N, K in shapes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        wq = torch.randint(-2 ** 31, 2 ** 31 - 1, (K // 8, N), device="cuda", dtype=torch.int32)
        sc = (torch.rand(K // G, N, device="cuda") * 0.02 + 0.01).to(torch.bfloat16)
        zs = (sc.float() * 8).to(torch.bfloat16)
        shifts = (4 * (torch.arange(K, device="cuda") % 8)).view(K, 1)
        q = (wq.repeat_interleave(8, 0) >> shifts) & 15
        w = (q.float() * sc.float().repeat_interleave(G, 0) - zs.float().repeat_interleave(G, 0)).to(torch.bfloat16)
        ref = a.float() @ w.float()
        ms_ref = bench(lambda: a @ w)
        fl = 2 * M * N * K
        if graph_on:
            nb = max(2, -(-(256 << 20) // (K * N * 2)))
            wcs = [w] + [w.clone() for _ in range(nb - 1)]
            cref = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            ms_ref_g = graph_time(lambda i: (lambda: torch.matmul(a, wcs[i], out=cref)), nb)
            del wcs
            nq = max(2, -(-(256 << 20) // (K * N // 2 + 4 * (K // G) * N)))
            qcs = [(wq, sc, zs)] + [(wq.clone(), sc.clone(), zs.clone()) for _ in range(nq - 1)]
            print(f"w4a16 {M}x{N}x{K}: cuBLAS bf16 in a graph of {nb} launches on {nb} weight copies: "
                  f"{ms_ref_g * 1e3:.1f} us (one timed launch: {ms_ref * 1e3:.1f} us); tilec graphs of {nq}", flush=True)
        def report(name, ms, err, make):
            """a variant's row (one timed launch), then, with W4A16_GRAPH=1, its graph row (make(i): the
            launch on weight copy i)"""
            row("w4a16 gemm", f"{M}x{N}x{K} G{G} {name}", ms, "TFLOP/s", fl / ms / 1e9, "cuBLAS bf16 same shape",
                fl / ms_ref / 1e9, err)
            print(f"w4a16 {M}x{N}x{K} {name}: {ms * 1e3:.1f} us, cuBLAS bf16 {ms_ref * 1e3:.1f} us: "
                  f"{ms_ref / ms:.2f}x faster", flush=True)
            if not graph_on: return
            try:
                ms_g = graph_time(make, nq)
            except Exception as e:
                print(f"w4a16 graph {name}: {str(e)[:300]}", flush=True)
                return
            row("w4a16 gemm graph", f"{M}x{N}x{K} G{G} {name}", ms_g, "TFLOP/s", fl / ms_g / 1e9,
                "cuBLAS bf16 same shape, graph", fl / ms_ref_g / 1e9, err)
            print(f"w4a16graph {M}x{N}x{K} {name}: {ms_g * 1e3:.1f} us, cuBLAS bf16 {ms_ref_g * 1e3:.1f} us: "
                  f"{ms_ref_g / ms_g:.2f}x faster", flush=True)
        bm = 16 if M <= 16 else 64
        tiles = [(bm, bn) for bn in (32, 64, 128)] if M <= 16 else [(64, 64), (64, 128), (128, 128)]
        variants = [(f"BM{m_} BN{bn}{'' if pro else ' prologue off'}", {"BM": m_, "BN": bn}, pro)
                    for m_, bn in tiles for pro in (True, False) if pro or bn == 64]
        # split-K (gemm_w4a16_splitk, C f32 zeroed in the timed call: C.zero_() then the kernel)
        if M <= 64:
            variants += [(f"splitk BM{bm} BN{bn} SPLIT{sp}", {"BM": bm, "BN": bn, "SPLIT": sp}, True)
                         for bn, sp in ((64, 2), (64, 4), (64, 8), (128, 4), (128, 8))]
        # more programs (split x16: 1024 at N 4096, BN 64), and the eighth session's switches off
        # (TILEC_SLOT_CSE=0: every fragment element reads its word; TILEC_EXACT_FMA=0: q * s - z as
        # a multiply and a subtract) and TILEC_I2F=magic; "nozero": the same kernel timed without
        # the C.zero_() kernel before it (what the zeroing costs; C checked on the first call only)
        if M <= 64:
            variants += [(f"splitk BM{bm} BN{bn} SPLIT{sp}", {"BM": bm, "BN": bn, "SPLIT": sp}, True)
                         for bn, sp in ((32, 8), (32, 16), (64, 16), (128, 16))]
            sk = {"BM": bm, "BN": 64, "SPLIT": 8}
            variants += [(f"splitk BM{bm} BN64 SPLIT8 {e}", sk, "env:" + e) for e in
                         ("TILEC_SLOT_CSE=0", "TILEC_EXACT_FMA=0", "TILEC_SLOT_CSE=0,TILEC_EXACT_FMA=0", "TILEC_I2F=magic")]
            variants += [(f"BM{bm} BN64 {e}", {"BM": bm, "BN": 64}, "env:" + e) for e in
                         ("TILEC_SLOT_CSE=0,TILEC_EXACT_FMA=0", "TILEC_I2F=magic")]
            variants += [(f"splitk BM{bm} BN{bn} SPLIT{sp} nozero", {"BM": bm, "BN": bn, "SPLIT": sp}, True)
                         for bn, sp in ((64, 8), (64, 16))]
            # split x16 = 2 K steps a program: 2 stages hold them all (17 KB of shared memory, not 34:
            # 8 programs an SM by registers, all 1024 resident at once); x8 with 4 stages as shipped
            variants += [(f"splitk BM{bm} BN64 SPLIT16 stages2{' ' + e if e else ''}", {"BM": bm, "BN": 64, "SPLIT": 16},
                          "env:STAGES=2" + ("," + e if e else "")) for e in ("", "TILEC_I2F=magic")]
            variants += [(f"splitk BM{bm} BN64 SPLIT16 stages2 nozero", {"BM": bm, "BN": 64, "SPLIT": 16}, "env:STAGES=2")]
            # TILEC_MAXNREG=64: the driver's JIT gave the split kernel 94 registers (ptxas -v: 63),
            # 5 programs an SM; capped, 8 (x16 with 2 stages: all 1024 resident)
            variants += [(f"splitk BM{bm} BN64 SPLIT{sp}{' stages2' if sp == 16 else ''} maxnreg64{z}",
                          {"BM": bm, "BN": 64, "SPLIT": sp}, "env:TILEC_MAXNREG=64" + (",STAGES=2" if sp == 16 else ""))
                         for sp in (8, 16) for z in ("", " nozero")]
            variants += [(f"BM{bm} BN32 maxnreg64", {"BM": bm, "BN": 32}, "env:TILEC_MAXNREG=64")]
        # "bf16x2": TILEC_DEQUANT_BF16X2=1, the magic-number unpack and two bf16x2 fmas a pair instead
        # of the f32 dequantization (I2F, FFMA, F2F pack; the default until a GPU has run the form);
        # "byteoff": the same with TILEC_DEQUANT_BYTE=0 (the two shifts a pair, not the byte form)
        for tag, e in (("byteoff", "TILEC_DEQUANT_BF16X2=1,TILEC_DEQUANT_BYTE=0"), ("bf16x2", "TILEC_DEQUANT_BF16X2=1")):
            if M <= 64:
                variants += [(f"splitk BM{bm} BN{bn} SPLIT{sp} {tag}", {"BM": bm, "BN": bn, "SPLIT": sp}, "env:" + e)
                             for bn, sp in ((64, 8), (128, 4), (128, 8), (128, 16))]
                variants += [(f"BM{bm} BN32 {tag}", {"BM": bm, "BN": 32}, "env:" + e)]
            else:
                variants += [(f"BM{m_} BN{bn_} {tag}", {"BM": m_, "BN": bn_}, "env:" + e) for m_, bn_ in ((64, 128), (128, 128))]
        # "range": TILEC_RING_IN_RANGE=1 (twenty-fifth session, branch w4small): the cp.async ring copies a
        # stage only when its iteration runs (a split-K program of 4 K steps on the 4-stage ring copied 7:
        # the next split's tiles, a third of the copy issue and L2 traffic); beside the same tiles unset
        if M <= 64:
            variants += [(f"splitk BM{bm} BN{bn} SPLIT{sp} range", {"BM": bm, "BN": bn, "SPLIT": sp},
                          "env:TILEC_RING_IN_RANGE=1") for bn, sp in ((128, 4), (128, 8), (128, 16))]
        # "terms": TILEC_ALIGN_TERMS=1 (thirtieth session; lib/codegen/emit_copy_issue.c aligned_by_terms): each
        # stage's 16-byte test term by term, so only the last start's term moves with the loop (and the axis
        # facts drop it): the four streams' tests leave the loop (235 -> 212 SASS a stage); "once": with it
        # TILEC_WHOLE_ONCE=1 (cg_stream_whole_once): the whole-tile bounds test once a program (-> 187)
        if M <= 64:
            variants += [(f"splitk BM{bm} BN{bn} SPLIT{sp} {tag}", {"BM": bm, "BN": bn, "SPLIT": sp}, e)
                         for bn, sp in ((128, 4), (128, 8), (128, 16))
                         for tag, e in (("terms", "env:TILEC_ALIGN_TERMS=1"),
                                        ("once", "env:TILEC_ALIGN_TERMS=1,TILEC_WHOLE_ONCE=1"))]
        # TILEC_PROLOGUE_FRAG=0: B staged through shared memory (a store, a barrier, ldmatrix of B)
        if M <= 64:
            variants += [(f"BM{bm} BN{bn} staged", {"BM": bm, "BN": bn}, "staged") for bn in (64, 128)]
            variants += [(f"splitk BM{bm} BN64 SPLIT{sp} staged", {"BM": bm, "BN": 64, "SPLIT": sp}, "staged") for sp in (4, 8)]
        skip = [w for w in os.environ.get("W4A16_SKIP", "").split(",") if w]  # e.g. staged,prologue off
        for name, defs, pro in variants:
            if any(w in name for w in skip): continue
            only_ = os.environ.get("W4A16_ONLY")  # e.g. maxnreg: only the variants naming it
            if only_ and not any(w in name for w in only_.split(",")): continue
            key = (tuple(sorted(defs.items())), pro, "SPLIT" in defs)
            try:
                if key not in cache: cache[key] = kern(defs, pro, "SPLIT" in defs)
                k = cache[key]
                if "SPLIT" in defs:
                    c = torch.zeros((M, N), device="cuda", dtype=torch.float32)
                    g = k.bind(a, wq, sc, zs, c)
                    f = g if "nozero" in name else (lambda: (c.zero_(), g()))
                else:
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                    f = k.bind(a, wq, sc, zs, c)
                f(); torch.cuda.synchronize()
                err = relerr(c, ref)
                ms = bench(f)
            except Exception as e:
                print(f"w4a16 {name}: {str(e)[:300]}", flush=True)
                continue
            def make(i, k=k, defs=defs, name=name):
                q_, s_, z_ = qcs[i]
                if "SPLIT" in defs:
                    cg_ = torch.zeros((M, N), device="cuda", dtype=torch.float32)
                    g_ = k.bind(a, q_, s_, z_, cg_)
                    return g_ if "nozero" in name else (lambda: (cg_.zero_(), g_()))
                return k.bind(a, q_, s_, z_, torch.empty((M, N), device="cuda", dtype=torch.bfloat16))
            report(name, ms, err, make)
        # "dequant + cutlass_gemm" (twentieth session, branch w4a16big; docs/pipelines.md "W4A16 at large M"):
        # examples/w4a16_dequant.tile writes W = dequant(Wq) as bf16 [K, N] once (memory-bound: K N / 2 bytes
        # of words read, 2 K N written), then examples/gemm.tile's cutlass_gemm (TMA + wgmma) multiplies; timed
        # as the two launches back to back (W kept between them, as a prefill would not: the dequantized copy
        # is made every call).  Beside it: cutlass_gemm alone on W (the split of the time) and the dequant
        # alone against torch's dequantization of the same formula (GB/s of words + scales read and W
        # written), with ROUND=1 (rounded once, gemm_w4a16's bf16x2 bits; the default) and ROUND=0 (twice)
        # At 256 < M <= 1024 also with cutlass_gemm's small-M table extended by a 128x128 form ("forms1024",
        # TILEC_SMALL_M_FORMS at its load): M 512 runs 64 CTAs of its 128x256 tile on 132 SMs otherwise.
        dq_bytes = K * N // 2 + 2 * 2 * (K // G) * N + 2 * K * N
        wbits, ms_t = w.view(torch.int16), None
        forms1024 = "16=16x32x256/multistage/5,128=64x64x128/cutlass/6,256=64x128x128/cutlass/4,1024=128x128x64/cutlass/4"
        dvars = [(1, 512, ""), (0, 512, ""), (1, 256, "")] + ([(1, 512, " forms1024")] if 256 < M <= 1024 else [])
        for rnd, bn_, gform in dvars:
            tag = f"dequant BN{bn_}{'' if rnd else ' ROUND0'}"
            if any(w_ in tag + gform for w_ in skip): continue
            only_ = os.environ.get("W4A16_ONLY")
            if only_ and not any(w_ in tag + gform for w_ in only_.split(",")): continue
            try:
                key = ("dequant", rnd, bn_, G)
                if key not in cache:
                    cache[key] = Kernel(ex("w4a16_dequant.tile"), {"BN": bn_, "G": G, "ROUND": rnd})
                if "cutlass_gemm" + gform not in cache:
                    if gform: os.environ["TILEC_SMALL_M_FORMS"] = forms1024
                    try:
                        cache["cutlass_gemm" + gform] = Kernel(ex("gemm.tile"))
                    finally:
                        os.environ.pop("TILEC_SMALL_M_FORMS", None)
                kd, kg = cache[key], cache["cutlass_gemm" + gform]
                wd = torch.full((K, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                fd = kd.bind(wq, sc, zs, wd.view(K // 8, 8, N))
                fd(); torch.cuda.synchronize()
                ndiff = int((wd.view(torch.int16) != wbits).sum())  # NaN poison left = not written = differs
                ms_d = bench(fd)
                if ms_t is None:  # torch's dequantization of the same formula, timed once a shape
                    ms_t = bench(lambda: (((wq.repeat_interleave(8, 0) >> shifts) & 15).float() *
                                          sc.float().repeat_interleave(G, 0) - zs.float().repeat_interleave(G, 0)).to(torch.bfloat16))
                if not gform:
                    row("w4a16 dequant", f"{K}x{N} G{G} {tag}", ms_d, "GB/s", dq_bytes / ms_d / 1e6,
                        "torch dequant, same formula", dq_bytes / ms_t / 1e6, ndiff / (K * N))
                    print(f"w4a16 {tag} {K}x{N}: {ms_d * 1e3:.1f} us ({dq_bytes / ms_d / 1e9:.2f} TB/s), torch "
                          f"{ms_t * 1e3:.1f} us; W differs from torch's bits in {ndiff} of {K * N}", flush=True)
                if bn_ != 512: continue
                c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                fg = kg.bind(a, wd, c)
                f = lambda fd=fd, fg=fg: (fd(), fg())
                f(); torch.cuda.synchronize()
                err = relerr(c, ref)
                ms = bench(f)
                ms_g = bench(fg)
            except Exception as e:
                print(f"w4a16 {tag}{gform}: {str(e)[:300]}", flush=True)
                continue
            def make(i, kd=kd, kg=kg, wd=wd):
                _, s_, z_ = qcs[i]
                fd_ = kd.bind(qcs[i][0], s_, z_, wd.view(K // 8, 8, N))
                fg_ = kg.bind(a, wd, torch.empty((M, N), device="cuda", dtype=torch.bfloat16))
                return lambda: (fd_(), fg_())
            report(f"{tag} + cutlass_gemm{gform}", ms, err, make)
            if rnd:
                row("w4a16 gemm", f"{M}x{N}x{K} G{G} cutlass_gemm{gform} on W (dequant not timed)", ms_g, "TFLOP/s",
                    fl / ms_g / 1e9, "cuBLAS bf16 same shape", fl / ms_ref / 1e9, err)
                print(f"w4a16 {M}x{N}x{K}{gform}: dequant {ms_d * 1e3:.1f} us + cutlass_gemm {ms_g * 1e3:.1f} us = "
                      f"{(ms_d + ms_g) * 1e3:.1f} us, back to back {ms * 1e3:.1f} us; cuBLAS bf16 {ms_ref * 1e3:.1f} us",
                      flush=True)
        # the packed kernels: unsplit BN 64 / 128, merge BN 128 x 4 / 8 / 16 (M <= 64), each in three forms:
        # halves (TILEC_DEQUANT_BF16X2=1), shift (the same with TILEC_DEQUANT_HALVES=0), f32 (the default)
        wp = repack(wq)
        pack_sz = lambda s_, z_: (s_.view(torch.int16).int() & 0xFFFF) | (z_.view(torch.int16).int() << 16)
        szw = pack_sz(sc, zs)  # (s, z) as one word (w4a16_pack_sz's layout), for the _sz kernel
        if graph_on:
            wps = [wp] + [repack(q_) for q_, _, _ in qcs[1:]]
            szs = [szw] + [pack_sz(s_, z_) for _, s_, z_ in qcs[1:]]
        pforms = (("halves", {"TILEC_DEQUANT_BF16X2": "1"}),
                  ("shift", {"TILEC_DEQUANT_BF16X2": "1", "TILEC_DEQUANT_HALVES": "0"}), ("f32", {}))
        # merge_sz: (s, z) one word, one stream fewer; its B in the fragments needs TILEC_FRAG_SHARED_LOAD=1
        # ("halves" / "f32" here), "staged" without it
        szforms = (("halves", {"TILEC_DEQUANT_BF16X2": "1", "TILEC_FRAG_SHARED_LOAD": "1"}),
                   ("f32", {"TILEC_FRAG_SHARED_LOAD": "1"}), ("staged", {"TILEC_DEQUANT_BF16X2": "1"}))
        pvars = [(f"packed BM{bm} BN{bn}", {"BM": bm, "BN": bn}, None, False) for bn in ((64, 128) if M <= 64 else (128,))]
        if M <= 64:
            pvars += [(f"packed merge BM{bm} BN128 SPLIT{sp}", {"BM": bm, "BN": 128, "SPLIT": sp}, sp, False) for sp in (4, 8, 16)]
            pvars += [(f"packed merge_sz BM{bm} BN128 SPLIT{sp}", {"BM": bm, "BN": 128, "SPLIT": sp}, sp, True) for sp in (4, 8)]
        for base, defs, sp, two in pvars:
            for tag, sw in (szforms if two else pforms):
                name = f"{base} {tag}"
                if any(w_ in name for w_ in skip): continue
                only_ = os.environ.get("W4A16_ONLY")
                if only_ and not any(w_ in name for w_ in only_.split(",")): continue
                try:
                    key = ("packed", tuple(sorted(defs.items())), tag, two)
                    if key not in cache:
                        cache[key] = kern_packed(defs, sw, ("gemm_w4a16_packed_merge_sz" if two else "gemm_w4a16_packed_merge")
                                                 if sp else "gemm_w4a16_packed")
                    k = cache[key]
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                    if sp:
                        P = torch.empty((sp, M, N), device="cuda", dtype=torch.float32)
                        cnt = torch.zeros(-(-M // defs["BM"]) * -(-N // 128), device="cuda", dtype=torch.int32)
                        f = k.bind(a, wp, szw, P, c, cnt) if two else k.bind(a, wp, sc, zs, P, c, cnt)
                    else:
                        f = k.bind(a, wp, sc, zs, c)
                    f(); torch.cuda.synchronize()
                    err = relerr(c, ref)
                    ms = bench(f)
                except Exception as e:
                    print(f"w4a16 {name}: {str(e)[:300]}", flush=True)
                    continue
                def make(i, k=k, sp=sp, two=two, P=P if sp else None, c=c, cnt=cnt if sp else None):
                    _, s_, z_ = qcs[i]
                    if sp and two:
                        return k.bind(a, wps[i], szs[i], P, c, cnt)
                    if sp:  # P, C and Count shared by the launches: one after the other on the stream
                        return k.bind(a, wps[i], s_, z_, P, c, cnt)
                    return k.bind(a, wps[i], s_, z_, c)
                report(name, ms, err, make)

# ---- attention with RoPE fused (examples/attn_rope.tile) beside the plain forward, the unfused pair
# (rope.tile on q and k, then attn.tile's attn_fwd) and torch RoPE + cuDNN SDPA; every ratio in one run.
# The fused kernel with its operand prologue (k's halves and table rows streamed; the default) and
# without it (TILEC_PROLOGUE=0: k loaded in the loop).  D128 on 8 warps; multistage, mma.sync.
def rope_t(x, c, s):  # [Z, H, S, D] rotated in f32, rounded to bf16 (rope.tile's rounding)
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h].float(), x[..., h:].float()
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).to(torch.bfloat16)

def rope_case(Z, H, S, D):
    """q, k, v stored [Z, S, H, D] (tokens-major, as a QKV projection writes them; rope.tile then rotates each tensor
    in one launch over its [Z*S, H, D] rows) and viewed [Z, H, S, D]; the [S, D/2] f32 tables; q and k rotated."""
    qs = torch.randn(Z, S, H, D, device="cuda", dtype=torch.bfloat16)
    ks = torch.randn_like(qs); vs = torch.randn_like(qs)
    q, kk, v = (t.permute(0, 2, 1, 3) for t in (qs, ks, vs))
    th = torch.arange(S, device="cuda", dtype=torch.float64)[:, None] * \
        10000.0 ** (-2 * torch.arange(D // 2, device="cuda", dtype=torch.float64) / D)
    cs, sn = th.cos().float().contiguous(), th.sin().float().contiguous()
    return qs, ks, vs, q, kk, v, cs, sn, rope_t(q, cs, sn), rope_t(kk, cs, sn)

def attn_rope():
    from torch.nn.attention import sdpa_kernel, SDPBackend
    import torch.nn.functional as F
    qs_ = [int(x) for x in args.rope_s.split(",")] if args.rope_s else [4096]
    cases = [(d, s, c) for s in qs_ for c in (True, False) for d in (64, 128)] if args.quick else \
        [(d, s, c) for d in (64, 128) for s in (1024, 4096, 16384) for c in (True, False)]
    if args.rope_d:
        cases = [c for c in cases if str(c[0]) in args.rope_d.split(",")]

    kern = {}
    for D, S, causal in cases:
        H = 2048 // D; Z = max(1, 16384 // S)
        qs, ks, vs, q, kk, v, cs, sn, qr, kr = rope_case(Z, H, S, D)
        ref = F.scaled_dot_product_attention(qr.float(), kr.float(), v.float(), is_causal=causal)
        fl = 4 * Z * H * S * S * D / (2 if causal else 1)
        opts = {"warps": 8} if D == 128 else None
        fused_forms = (("fused", True),) if args.quick else (("fused", True), ("fused prologue off", False))
        no_mma = bool(os.environ.get("BENCH_ROPE_NO_MMA"))  # only the cutlass (wgmma) forms and their references
        if no_mma: fused_forms = ()
        for name, pro in fused_forms:
            key = (name, D, causal)
            if key not in kern:
                os.environ["TILEC_PROLOGUE"] = "1" if pro else "0"
                try:
                    kern[key] = Kernel(ex("attn_rope.tile"), {"D": D, "CAUSAL": int(causal)}, "attn_rope_fwd", options=opts)
                finally:
                    os.environ.pop("TILEC_PROLOGUE", None)
        # the cutlass (wgmma) forms: cutlass_attn_rope_fwd with the rotated k staged for wgmma
        # (default) and on mma.sync (TILEC_STAGED_WGMMA=0), beside attn.tile's cutlass_attn_fwd
        # (and its prologue loads on the cp.async ring: TILEC_PROLOGUE_TMA=0; at D64 also 4 stages,
        # one program an SM)
        cforms = [("cutlass fused", {}, None), ("cutlass fused prologue-tma off", {"TILEC_PROLOGUE_TMA": "0"}, None),
                  ("cutlass fused staged-wgmma off", {"TILEC_STAGED_WGMMA": "0"}, None),
                  # the ring's refill at its own barrier and O += P V waited each step (dot_plan.c
                  # late_refill_fits), or the refill after the score dot's issue
                  ("cutlass fused late-refill off", {"TILEC_LATE_REFILL": "0"}, None),
                  ("cutlass fused late-refill 2", {"TILEC_LATE_REFILL": "2"}, None),
                  # two staged slots, no ring barrier in the TMA form (dot_plan.c, emit_ring.c)
                  ("cutlass fused staged-double", {"TILEC_STAGED_DOUBLE": "1"}, None),
                  # k rotated by fa3's producer warpgroup, the consumers' turn the plain fa3 kernel's
                  # (emit_rope.c; D128 only, at BN 128)
                  ("cutlass fused rope-producer", {"TILEC_ROPE_PRODUCER": "1", "TILEC_ATTN_WS": "fa3"}, None)]
        # its table loads A half rows ahead of their use (TILEC_ROPE_AHEAD, default 2; 0 = each row's loads
        # in its own iteration, the form before; 3 spills a few bytes at the producer's 56 registers)
        cforms += [(f"cutlass fused rope-producer ahead-{a}", {"TILEC_ROPE_PRODUCER": "1", "TILEC_ATTN_WS": "fa3",
                                                               "TILEC_ROPE_AHEAD": str(a)}, None) for a in (0, 1, 3)]
        if D != 128: cforms = [c for c in cforms if "rope-producer" not in c[0]]
        if os.environ.get("BENCH_ROPE_FORMS"):  # e.g. "late-refill,staged": the default and the forms naming one
            words = os.environ["BENCH_ROPE_FORMS"].split(",")
            cforms = [c for c in cforms if c[0] == "cutlass fused" or any(w in c[0] for w in words)]
        if D == 64:  # (the default since: @stages(2), two programs an SM by .minnctapersm 2)
            cforms.append(("cutlass fused 4 stages", {}, {"stages": 4}))
        for name, envs, copts in cforms:
            key = (name, D, causal)
            if key not in kern:
                os.environ.update(envs)
                try:
                    defs = {"D": D, "CAUSAL": int(causal)}
                    if "rope-producer" in name: defs["BN"] = 128
                    kern[key] = Kernel(ex("attn_rope.tile"), defs, "cutlass_attn_rope_fwd", options=copts)
                finally:
                    for e in envs: os.environ.pop(e, None)
        if ("cplain", D, causal) not in kern:
            kern[("cplain", D, causal)] = Kernel(ex("attn.tile"), {"D": D, "CAUSAL": int(causal)}, "cutlass_attn_fwd")
        if ("plain", D, causal) not in kern:
            kern[("plain", D, causal)] = Kernel(ex("attn.tile"), {"D": D, "CAUSAL": int(causal)}, "attn_fwd")
            kern[("rope", D)] = Kernel(ex("rope.tile"), {"D": D, "HALF": D // 2}, "rope")
        o = torch.full_like(q, float("nan"))
        plain = kern[("plain", D, causal)].bind(qr, kr, v, o, D ** -0.5)
        ms_plain = bench(plain) if not no_mma else float("nan")
        # the unfused pair: rope.tile over the [Z*S, H, D] rows of q and of k (the tables repeated
        # per z), then attn_fwd
        q2s, k2s = torch.empty_like(qs), torch.empty_like(ks)
        rk = kern[("rope", D)]
        csz, snz = cs.repeat(Z, 1), sn.repeat(Z, 1)
        ropes = [rk.bind(x.view(Z * S, H, D), csz, snz, y.view(Z * S, H, D)) for x, y in ((qs, q2s), (ks, k2s))]
        att = kern[("plain", D, causal)].bind(q2s.permute(0, 2, 1, 3), k2s.permute(0, 2, 1, 3), v, o, D ** -0.5)
        def pair():
            for r in ropes: r()
            att()
        pair(); torch.cuda.synchronize()
        err_pair = relerr(o, ref)
        ms_pair = bench(pair) if not no_mma else float("nan")
        cplain = kern[("cplain", D, causal)].bind(qr, kr, v, o, D ** -0.5)
        ms_cplain = bench(cplain)
        catt = kern[("cplain", D, causal)].bind(q2s.permute(0, 2, 1, 3), k2s.permute(0, 2, 1, 3), v, o, D ** -0.5)
        def cpair():
            for r in ropes: r()
            catt()
        cpair(); torch.cuda.synchronize()
        err_cpair = relerr(o, ref)
        ms_cpair = bench(cpair)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            ms_cudnn = bench(lambda: F.scaled_dot_product_attention(rope_t(q, cs, sn), rope_t(kk, cs, sn), v, is_causal=causal))
        shape = f"D{D} S{S} {'causal' if causal else 'full'}"
        def time_form(name, plain_row, pair_row, ms_p, ms_pr):
            """The fused form `name` checked and timed, beside its plain kernel, the pair and cuDNN."""
            o = torch.full_like(q, float("nan"))
            f = kern[(name, D, causal)].bind(q, kk, v, cs, sn, o, D ** -0.5)
            f(); torch.cuda.synchronize()
            err = relerr(o, ref)
            ms = bench(f)
            what = "attn rope " + name
            row(what, shape, ms, "TFLOP/s", fl / ms / 1e9, plain_row, fl / ms_p / 1e9, err)
            row(what, shape, ms, "TFLOP/s", fl / ms / 1e9, pair_row, fl / ms_pr / 1e9, err)
            row(what, shape, ms, "TFLOP/s", fl / ms / 1e9, "torch RoPE + cuDNN SDPA", fl / ms_cudnn / 1e9, err)
            return ms, err
        for name, _ in fused_forms:
            time_form(name, "plain attn_fwd (pre-rotated q, k)", "rope.tile + attn_fwd", ms_plain, ms_pair)
        for name, _, _ in cforms:
            ms, err = time_form(name, "cutlass_attn_fwd (pre-rotated q, k)", "rope.tile + cutlass_attn_fwd", ms_cplain,
                                ms_cpair)
            print(f"attn rope {name} {shape}: {ms:.3f} ms; cutlass_attn_fwd {ms_cplain:.3f}, rope.tile + cutlass_attn_fwd "
                  f"{ms_cpair:.3f}, torch RoPE + cuDNN {ms_cudnn:.3f}, rel.err {err:.1e}", flush=True)
        print(f"attn rope {shape}: pair rel.err {err_pair:.1e}, cutlass pair {err_cpair:.1e}", flush=True)

if "banks" in only: safe(banks, "banks")
if "passes" in only: safe(sched_passes, "passes")
if "name" in only: safe(name_heuristic, "name")
if "gemm" in only: safe(gemm_bf16, "gemm bf16")
if "linear" in only: safe(linear_gelu, "linear")
if "residual" in only: safe(gemm_residual, "gemm residual")
if "fp8" in only: safe(gemm_fp8, "gemm fp8")
if "int8" in only: safe(gemm_int8, "gemm int8")
if "fp8x" in only: safe(gemm_fp8x, "gemm fp8x")
if "tf32" in only: safe(gemm_tf32, "gemm tf32")
if "attn" in only: safe(attn, "attn")
if "norm" in only: safe(norms, "norms")
if "decode" in only: safe(decode, "decode")
if "decodeforms" in only: safe(decode_forms, "decode forms")
if "smallm" in only: safe(gemm_small_m, "gemm small M")
if "splitk" in only: safe(splitk, "splitk")
if "smallm" in only or "smallmforms" in only: safe(gemm_small_m_forms, "small-M forms")
if "attnbwd" in only: safe(attn_bwd, "attn bwd")
if "rows" in only: safe(rows_bw, "rows")
if "moe" in only: safe(moe_gemm, "moe gemm")
if "topk" in only: safe(topk_sample, "topk sample")
if "w4a16" in only: safe(gemm_w4a16, "w4a16")
if "attnrope" in only: safe(attn_rope, "attn rope")
if "fused" in only: safe(fused, "fused")
if "veconly" in only: safe(vec_only_check, "veconly")

print("\n## tilec vs references (same run, medians; ratio = tilec / reference)")
print("| workload | shape | tilec ms | tilec | reference | ref | ratio | rel.err |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
json.dump(res, open(args.json, "w"), indent=1)
