#!/bin/sh
# bench/run.sh: every number of bench/RESULTS.md in one call on the GPU machine.
#
#   usage (repo root): bench/run.sh BUILD_DIR [--quick]
#
# BUILD_DIR holds what was built elsewhere and carried: libtilec.so*, tilec,
# bench/launch_overhead.  Runs: cold compile time per example (per-stage split
# from --time-passes), warm start from the disk cache and launch overhead
# (bench/launch_overhead), then tilec kernels beside cuBLAS / cuDNN / FA2 /
# torch in one Python process (bench/bench.py, through libtilec's C API).
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 2
shift
ROOT=$(pwd)
OUTDIR=${OUT:-/tmp}
export LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TILEC_CACHE_DIR=$(mktemp -d /tmp/tilec-bench-cache-XXXXXX)

echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null

echo "== cold compile (.tile -> PTX), ms per stage, sm_90a"
printf '%-14s %8s %8s %8s %8s\n' example frontend passes llvm total
# compile_line NAME FILE [tilec options]: one row of the table from --time-passes
compile_line() {
  n=$1; f=$2; shift 2
  "$BUILD/tilec" "$f" --arch=sm_90a --time-passes "$@" -o /tmp/$n.ptx 2>/tmp/$n.time >/dev/null
  awk -v n="$n" '
    /^time frontend/ {fe=$(NF-1)}
    /^pass / || /^time pass/ {ps+=$(NF-1)}
    /^time codegen/ {cg+=$(NF-1)}
    /^time total/ {tt=$(NF-1)}
    END {printf "%-14s %8.2f %8.2f %8.2f %8.2f\n", n, fe, ps, cg, tt}' /tmp/$n.time
}
for f in examples/*.tile; do compile_line "$(basename "$f" .tile)" "$f"; done
# a file of several kernels, one kernel at a time (--kernel): what the JIT pays to load one
for k in attn_fwd cutlass_attn_fwd; do compile_line "attn:$k" examples/attn.tile --kernel $k; done

echo "== launch overhead and warm start"
if [ -x "$BUILD/bench/launch_overhead" ]; then "$BUILD/bench/launch_overhead"; fi

echo "== kernels vs references"
# (the cutlass GEMMs also warp-specialized and not persistent, in the same process: the switches'
# rows beside the default, docs/pipelines.md "Warp specialization", "Persistent CTAs")
PYTHONUNBUFFERED=1 python3 bench/bench.py --lib "$BUILD/libtilec.so.0.1" --json "$OUTDIR/bench.json" \
  --gemm-variants TILEC_WS=coop,TILEC_PERSIST=0 "$@"
rm -rf "$TILEC_CACHE_DIR"
