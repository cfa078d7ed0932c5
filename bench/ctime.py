#!/usr/bin/env python3
"""ctime.py: compile time of tilec, per kernel, as whole-process medians.

  python3 bench/ctime.py [--runs N] [--env NAME=VALUE]... [--flag=--tma-fallback=form]... [--compiles F.tile:K,...]
                         [--variant NAME=VALUE]... TILEC [TILEC2 ...]

For each compile (examples/F.tile [--kernel=K] -o /dev/null, sm_90a) and each
tilec binary given (with its own directory as LD_LIBRARY_PATH, where
its libtilec.so.0.1 is): one run to warm the page cache, then N runs; prints the
median wall and CPU (user + system of the child) milliseconds, and the split
`--time-passes` reports (llvm-build / llvm-opt / ptx) from one more run.  `--flag=X` adds X to every
compile: `--flag=--tma-fallback=form` compiles what libtilec's JIT compiles (TMA forms), where the
CLI's own default writes self-contained PTX (docs/cli.md).
Needs no GPU (tilec compiles to PTX without one).  docs/codegen.md "Round 8".
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

COMPILES = [
    ("attn.tile", "attn_fwd"),
    ("attn.tile", "cutlass_attn_fwd"),
    ("attn.tile", None),
    ("gemm.tile", "cutlass_gemm"),
    ("gemm_fp8.tile", "gemm_fp8_tensor"),
    ("gemm_fp8.tile", "gemm_fp8_rowcol"),
    ("gemm_fp8.tile", "cutlass_gemm_fp8_tn"),
    ("gemm_fp8.tile", "cutlass_gemm_fp8_nn"),
    ("gemm_fp8.tile", None),
    ("gemm_bias_gelu.tile", "cutlass_linear_bias_gelu"),
    ("attn_bwd.tile", "attn_bwd_dq"),
    ("layernorm.tile", "layernorm"),
]


def one(tilec, args, env):
    t0 = time.perf_counter()
    r0 = os.wait4  # (keeps the child's rusage apart from earlier children)
    p = subprocess.Popen([tilec] + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = r0(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1e3
    err = p.stderr.read().decode()
    p.stderr.close()
    if status != 0:
        sys.exit(f"ctime.py: {tilec} {' '.join(args)} failed:\n{err}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1e3, err


def variant_env(v):
    """NAME=VALUE, or several separated by spaces ("TILEC_A=0 TILEC_B=0": every mechanism off at once)."""
    parts = v.split(" ")
    if len(parts) > 1 and all(re.match(r"^[A-Z_][A-Z0-9_]*=", q) for q in parts):
        return dict(q.split("=", 1) for q in parts)
    return {v.split("=", 1)[0]: v.split("=", 1)[1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--examples", default="examples")
    ap.add_argument("--flag", action="append", default=[])
    ap.add_argument("--compiles", default="", help="F.tile:KERNEL,... instead of the default list (F.tile: the whole file)")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=VALUE (or several separated by spaces): one more row per compile and tilec with that "
                         "environment, its runs interleaved with the plain row's (a switch measured on / off in one run)")
    ap.add_argument("tilec", nargs="+")
    a = ap.parse_args()
    compiles = [(c.split(":")[0], c.split(":")[1] if ":" in c else None) for c in a.compiles.split(",") if c] or COMPILES
    env = dict(os.environ)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    print(f"# host: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; median of {a.runs} runs after 1 warm-up"
          + (f"; flags {' '.join(a.flag)}" if a.flag else ""))
    print("| compile | tilec | wall ms | CPU ms | llvm-build / llvm-opt / ptx ms (--time-passes) |")
    print("|---|---|---|---|---|")
    for f, k in compiles:
        args = [os.path.join(a.examples, f), "--arch=sm_90a", "-o", "/dev/null"] + ([f"--kernel={k}"] if k else []) + a.flag
        for t in a.tilec:
            rows = [("", dict(env))] + [(v, dict(env, **variant_env(v))) for v in a.variant]
            for _, e in rows:
                e["LD_LIBRARY_PATH"] = os.path.dirname(os.path.abspath(t))  # its own libtilec.so.0.1
                one(t, args, e)
            walls, cpus = [[] for _ in rows], [[] for _ in rows]
            for _ in range(a.runs):
                for i, (_, e) in enumerate(rows):
                    w, c, _ = one(t, args, e)
                    walls[i].append(w)
                    cpus[i].append(c)
            for i, (v, e) in enumerate(rows):
                _, _, tp = one(t, args + ["--time-passes"], e)
                split = "/".join(
                    (m.group(1) if m else "?")
                    for m in (re.search(rf"time codegen\.{s}: ([0-9.]+) ms", tp) for s in ("llvm-build", "llvm-opt", "ptx")))
                name = (f"{f} --kernel={k}" if k else f"{f} (whole file)") + (f" [{v}]" if v else "")
                print(f"| {name} | {t} | {statistics.median(walls[i]):.1f} (min {min(walls[i]):.1f}) | "
                      f"{statistics.median(cpus[i]):.1f} | {split} |", flush=True)


if __name__ == "__main__":
    main()
