#!/bin/sh
# tests/gpu/run.sh: run every GPU test on a GPU machine, plainly and under
# compute-sanitizer (memcheck, racecheck), then print a table.
#
#   usage (from the repo root): tests/gpu/run.sh BUILD_DIR     (or BUILD=... tests/gpu/run.sh)
#
# Needs only what was carried: BUILD_DIR/libtilec.so*, BUILD_DIR/tilec (the CLI,
# for gpu_test_cli_ptx; or $TILEC_CLI), BUILD_DIR/tests/gpu_test_* (and
# test_back_runtime_gpu when its Criterion library is there), and the repo's
# examples/.  Nothing is built here.  The table is the last thing printed.
#   GPU_SANITIZE=0   skip the compute-sanitizer runs
#   TILEC_SEED=N     reproduce a run's random data (each test prints its seed)
# Exit status: 0 when nothing failed (skips are not failures), else 1.
set -u
BUILD=${1:-${BUILD:-build}}
BUILD=$(cd "$BUILD" && pwd) || { echo "run.sh: no build directory $BUILD" >&2; exit 2; }
ROOT=$(pwd)
EXAMPLES=${TILEC_EXAMPLES:-$ROOT/examples}
export LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TILEC_EXAMPLES="$EXAMPLES"
[ -n "${TILEC_CLI:-}" ] || export TILEC_CLI="$BUILD/tilec"
CACHE=$(mktemp -d /tmp/tilec-run-cache-XXXXXX)
export TILEC_CACHE_DIR="$CACHE"
LOGDIR=${LOGDIR:-$(mktemp -d /tmp/tilec-gpu-logs-XXXXXX)}
mkdir -p "$LOGDIR" || { echo "run.sh: cannot create $LOGDIR" >&2; exit 2; }

SAN=""
if [ "${GPU_SANITIZE:-1}" != 0 ]; then
  for c in compute-sanitizer /usr/local/cuda/bin/compute-sanitizer; do
    if command -v "$c" >/dev/null 2>&1; then SAN=$(command -v "$c"); break; fi
  done
  [ -n "$SAN" ] || echo "run.sh: compute-sanitizer not found; sanitizer runs skipped"
fi

TESTS=""
for t in "$BUILD"/tests/gpu_test_*; do [ -x "$t" ] && TESTS="$TESTS $t"; done
t="$BUILD/tests/test_back_runtime_gpu"
if [ -x "$t" ] && ! ldd "$t" 2>/dev/null | grep -q "not found"; then TESTS="$TESTS $t"; fi
[ -n "$TESTS" ] || { echo "run.sh: no GPU test binaries under $BUILD/tests" >&2; exit 2; }

TABLE=""
FAILED=0
now() { date +%s.%N; }
run_one() { # name mode command...
  name=$1; mode=$2; shift 2
  log="$LOGDIR/$name.$mode.log"
  echo "=== $name ($mode)"
  t0=$(now)
  "$@" >"$log" 2>&1
  rc=$?
  t1=$(now)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  case $rc in
    0) res=PASS ;;
    77) res=SKIP ;;
    *) res="FAIL($rc)"; FAILED=1 ;;
  esac
  tail -n 25 "$log"
  TABLE="$TABLE$(printf '%-28s %-10s %-9s %8s' "$name" "$mode" "$res" "$secs")
"
}

for t in $TESTS; do
  name=$(basename "$t")
  case $name in test_back_*) args="--jobs 1" ;; *) args="" ;; esac
  run_one "$name" plain "$t" $args
  if [ -n "$SAN" ]; then
    run_one "$name" memcheck env TILEC_GPU_SANITIZER_RUN=1 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 "$t" $args
    run_one "$name" racecheck env TILEC_GPU_SANITIZER_RUN=1 "$SAN" --tool racecheck --racecheck-report hazard --error-exitcode 99 --print-limit 20 "$t" $args
  fi
done

# GPU tests written in Python (torch on the GPU machine): plain runs only
for t in "$ROOT"/tests/gpu/test_*.py; do
  [ -f "$t" ] || continue
  run_one "$(basename "$t" .py)" plain python3 "$t" --lib "$BUILD/libtilec.so"
done

# kernels that exercise one compiler mechanism each, against the interpreter (tests/gpu/kernels.sh)
run_one kernels_sh plain sh "$ROOT/tests/gpu/kernels.sh" "$BUILD"
# kernels written the way LLM code fuses ops (tests/user_kernels), against the interpreter (tests/gpu/user_kernels.sh)
run_one user_kernels_sh plain sh "$ROOT/tests/gpu/user_kernels.sh" "$BUILD"
# GEMM-like kernels on the cutlass pipeline in the shapes users write them (tests/cutlass_variants), against the interpreter
run_one cutlass_variants_sh plain sh "$ROOT/tests/gpu/cutlass_variants.sh" "$BUILD"
# the language's less-used corners (tests/lang_corners: integers, casts, literals, gathers, atomics, rand, sorts), against the interpreter
run_one lang_corners_sh plain sh "$ROOT/tests/gpu/lang_corners.sh" "$BUILD"
# attention variants users write (tests/attn_variants: masks, score mods, GQA / MLA, layouts, fp8, dropout) at S that pick the launch-time forms
run_one attn_variants_sh plain sh "$ROOT/tests/gpu/attn_variants.sh" "$BUILD"
# kernels of unusual structure (tests/multi_loop: several main loops sharing operands, loops in ifs, nested loops), sm_90a and sm_80 code
run_one multi_loop_sh plain sh "$ROOT/tests/gpu/multi_loop.sh" "$BUILD"
# random numbers in kernels with a dot (tests/rand_dot: masks in the accumulator layout, lane-shared Philox blocks), bit-exact against the interpreter
run_one rand_dot_sh plain sh "$ROOT/tests/gpu/rand_dot.sh" "$BUILD"
# GEMMs whose A is computed in the loop (tests/prologue_a and more/): the A-fragment rule on (opt-in) / off / two stages, sm_80
run_one prologue_a_sh plain sh "$ROOT/tests/gpu/prologue_a.sh" "$BUILD"

rm -rf "$CACHE"
echo
echo "logs: $LOGDIR"
printf '%-28s %-10s %-9s %8s\n' test mode result seconds
printf '%s' "$TABLE"
exit $FAILED
