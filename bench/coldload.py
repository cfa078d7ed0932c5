#!/usr/bin/env python3
"""bench/coldload.py: a kernel's cold load by each assembler against ptxas alone on its PTX (issue 13
item 3: "a cold load of the fused-epilogue GEMM under 1.2x ptxas's own time on the same PTX").

    python3 bench/coldload.py --lib build/libtilec.so [--runs 3] [FILE.tile:KERNEL ...]

Each measurement is a fresh process (the memory cache would serve a second load) with the disk cache
off (TILEC_CACHE=0) and the driver's compute cache off (CUDA_CACHE_DISABLE=1): the PTX compile (tilec_program_compile to PTX, timed apart) and then
tilec_kernel_load (PTX -> machine code -> module; a GEMM's small-M forms on threads, late: still loading
when the load returns, joined when the handle is destroyed, whose time is the "every form ready" column;
TILEC_LATE_FORMS=0 makes the load wait for them; in order as "auto-seq": TILEC_FORM_THREADS=0), for TILEC_ASSEMBLER = auto (ptxas where found),
driver (cuModuleLoadDataEx compiles the PTX whole) and link (cuLink, relocatable code).  ptxas alone:
`ptxas -arch=sm_90a -O3` on the same PTX, wall time of the process.  Medians of --runs; the table last.
"""
import argparse, ctypes as C, os, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--lib", default=os.environ.get("TILEC_LIBRARY", "build/libtilec.so"))
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--modes", default="auto,auto-wait,auto-seq,driver,link",
                help="assemblers to time (TILEC_ASSEMBLER; auto-wait: TILEC_LATE_FORMS=0; auto-seq: forms in order)")
ap.add_argument("--child", nargs=3, metavar=("FILE", "KERNEL", "PTX_OUT"), help=argparse.SUPPRESS)
ap.add_argument("cases", nargs="*", default=["examples/gemm_bias_gelu.tile:cutlass_linear_bias_gelu",
                                             "examples/gemm.tile:cutlass_gemm", "examples/attn.tile:cutlass_attn_fwd",
                                             "examples/attn_bwd.tile:attn_bwd_dq", "examples/layernorm.tile:layernorm"])
args = ap.parse_args()


def child(path, kernel, ptx_out):
    lib = C.CDLL(args.lib)
    lib.tilec_program_text.restype = C.c_char_p
    lib.tilec_program_log.restype = C.c_char_p
    lib.tilec_kernel_origin.restype = C.c_char_p
    assert lib.tilec_device_init(0) == 0
    o, p, k = C.c_void_p(), C.c_void_p(), C.c_void_p()
    assert lib.tilec_options_create(C.byref(o)) == 0
    assert lib.tilec_options_set(o, b"kernel", kernel.encode()) == 0
    t0 = time.perf_counter()
    st = lib.tilec_program_create_from_file(C.byref(p), path.encode(), o)
    if st == 0: st = lib.tilec_program_compile(p, 3)
    t1 = time.perf_counter()
    if st == 0: st = lib.tilec_kernel_load(p, kernel.encode(), 0, C.byref(k))
    t2 = time.perf_counter()
    if st != 0:
        print(f"FAIL {path}:{kernel} status {st}: {lib.tilec_program_log(p).decode()[-600:]}", flush=True)
        sys.exit(1)
    origin = lib.tilec_kernel_origin(k).decode()
    # late forms (TILEC_LATE_FORMS, lib/api/forms.c): the load returned with the small-M forms still loading on
    # their threads; destroying the handle joins them, so t3 - t1 is the load with every form ready
    lib.tilec_kernel_destroy(k)
    t3 = time.perf_counter()
    if ptx_out != "-":
        with open(ptx_out, "w") as f: f.write(lib.tilec_program_text(p, 3).decode())
    print(f"{(t1 - t0) * 1e3:.2f} {(t2 - t1) * 1e3:.2f} {(t3 - t1) * 1e3:.2f} {origin}", flush=True)


if args.child:
    child(*args.child)
    sys.exit(0)

ptxas = os.environ.get("TILEC_PTXAS") or next((os.path.join(d, "ptxas") for d in os.environ.get("PATH", "").split(":")
                                              if os.access(os.path.join(d, "ptxas"), os.X_OK)), "/usr/local/cuda/bin/ptxas")
table = []
tmp = tempfile.mkdtemp()
for case in args.cases:
    path, kernel = case.split(":")
    res = {}
    ptx = os.path.join(tmp, kernel + ".ptx")
    for mode in args.modes.split(","):
        ptx_ms, load_ms, all_ms = [], [], []
        for r in range(args.runs):
            # the driver's own compute cache off too (CUDA_CACHE_DISABLE): every run compiles
            env = dict(os.environ, TILEC_CACHE="0", CUDA_CACHE_DISABLE="1", TILEC_ASSEMBLER=mode.split("-")[0])
            if mode == "auto-seq": env["TILEC_FORM_THREADS"] = "0"  # a GEMM's small-M forms one after the other
            if mode == "auto-wait": env["TILEC_LATE_FORMS"] = "0"  # the load waits for the forms (as before late forms)
            out = subprocess.run([sys.executable, __file__, "--lib", args.lib, "--child", path, kernel,
                                  ptx if (mode == "auto" and r == 0) else "-"], env=env, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{case} {mode}: {out.stdout[-400:]} {out.stderr[-400:]}", flush=True)
                break
            a, b, c, origin = out.stdout.split()[-4:]
            ptx_ms.append(float(a)); load_ms.append(float(b)); all_ms.append(float(c))
        if load_ms:
            res[mode] = (statistics.median(ptx_ms), statistics.median(load_ms), statistics.median(all_ms))
            print(f"{case} {mode}: PTX {res[mode][0]:.1f} ms, load {res[mode][1]:.1f} ms, with every form {res[mode][2]:.1f} ms "
                  f"(runs {load_ms})", flush=True)
    pt = []
    if os.path.exists(ptx):
        for r in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run([ptxas, "-arch=sm_90a", "-O3", ptx, "-o", os.devnull], check=True)
            pt.append((time.perf_counter() - t0) * 1e3)
    pm = statistics.median(pt) if pt else float("nan")
    print(f"{case} ptxas alone: {pm:.1f} ms (runs {[round(x, 1) for x in pt]})", flush=True)
    table.append((case, res, pm))

print("\n| kernel | tilec to PTX ms | load: auto (ptxas) | auto, every form ready | auto, load waits for forms | auto, forms in order | driver (whole) | link (cuLink) | ptxas alone | auto / ptxas | auto + forms / ptxas | driver / ptxas | link / ptxas |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for case, res, pm in table:
    g = lambda m, i: res[m][i] if m in res else float("nan")
    print(f"| {case} | {g('auto', 0):.1f} | {g('auto', 1):.1f} | {g('auto', 2):.1f} | {g('auto-wait', 1):.1f} | {g('auto-seq', 1):.1f} | {g('driver', 1):.1f} | {g('link', 1):.1f} | {pm:.1f} | "
          f"{g('auto', 1) / pm:.2f} | {g('auto', 2) / pm:.2f} | {g('driver', 1) / pm:.2f} | {g('link', 1) / pm:.2f} |")
