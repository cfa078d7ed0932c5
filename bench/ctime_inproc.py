#!/usr/bin/env python3
"""bench/ctime_inproc.py: a kernel's compile to PTX inside the process, as libtilec's JIT pays it
(bench/coldload.py's "tilec to PTX" column, without the load), with switches measured on / off.

    python3 bench/ctime_inproc.py --lib build/libtilec.so [--runs 9] [--variant "NAME=V [NAME=V ...]"]...
                                  [FILE.tile:KERNEL ...]

Each measurement is a fresh process: libtilec loaded by ctypes, then tilec_program_create_from_file
with options kernel=K and arch sm_90a (no device needed) and tilec_program_compile to PTX, timed
together (the process start and the library's loading are not).  The rows (the default, then each
--variant's environment) are interleaved run by run; medians and minima in ms, the table last.
"""
import argparse, ctypes as C, os, statistics, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--lib", default=os.environ.get("TILEC_LIBRARY", "build/libtilec.so"))
ap.add_argument("--runs", type=int, default=9)
ap.add_argument("--variant", action="append", default=[], help="NAME=VALUE pairs separated by spaces: one more row")
ap.add_argument("--child", nargs=2, metavar=("FILE", "KERNEL"), help=argparse.SUPPRESS)
ap.add_argument("cases", nargs="*", default=["examples/attn.tile:cutlass_attn_fwd", "examples/attn_bwd.tile:attn_bwd_dq",
                                             "examples/gemm_bias_gelu.tile:cutlass_linear_bias_gelu",
                                             "examples/gemm.tile:cutlass_gemm", "examples/layernorm.tile:layernorm"])
args = ap.parse_args()

if args.child:
    lib = C.CDLL(args.lib)
    lib.tilec_program_log.restype = C.c_char_p
    o, p = C.c_void_p(), C.c_void_p()
    assert lib.tilec_options_create(C.byref(o)) == 0
    assert lib.tilec_options_set(o, b"kernel", args.child[1].encode()) == 0
    assert lib.tilec_options_set_arch(o, b"sm_90a") == 0
    t0 = time.perf_counter()
    st = lib.tilec_program_create_from_file(C.byref(p), args.child[0].encode(), o)
    if st == 0: st = lib.tilec_program_compile(p, 3)
    t1 = time.perf_counter()
    if st != 0:
        print(f"FAIL {args.child} status {st}: {lib.tilec_program_log(p).decode()[-600:]}", flush=True)
        sys.exit(1)
    print(f"{(t1 - t0) * 1e3:.3f}", flush=True)
    sys.exit(0)

rows = [("default", {})]
for v in args.variant:
    rows.append((v, dict(q.split("=", 1) for q in v.split(" "))))
print(f"# host: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.runs} runs a row, interleaved", flush=True)
table = []
for case in args.cases:
    path, kernel = case.split(":")
    ms = [[] for _ in rows]
    for r in range(args.runs + 1):  # the first round warms the page cache, not counted
        for i, (_, env) in enumerate(rows):
            out = subprocess.run([sys.executable, __file__, "--lib", args.lib, "--child", path, kernel],
                                 env=dict(os.environ, **env), capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{case} [{rows[i][0]}]: {out.stdout[-400:]} {out.stderr[-400:]}")
            if r: ms[i].append(float(out.stdout.split()[-1]))
    for i, (name, _) in enumerate(rows):
        med = statistics.median(ms[i])
        table.append((case, name, med, min(ms[i]), med / statistics.median(ms[0])))
print("\n| kernel | row | in-process ms, median | min | median / default's |")
print("|---|---|---|---|---|")
for case, name, med, mn, ratio in table:
    print(f"| {case} | {name} | {med:.1f} | {mn:.1f} | {ratio:.3f} |")
