#!/bin/sh
# tests/gpu/kernels.sh: kernels that are not examples but exercise one compiler mechanism each
# (tests/gpu/kernels/*.tile, and lit inputs whose kernels run), on the GPU against the interpreter
# (`tilec run --device`) at ragged sizes, with the mechanism on (the default) and off.  Fresh random
# data per run (--seed).  Today: passes/convert_hoist.c (loop conversions moved before the loop; off:
# TILEC_CONVERT_HOIST=0) on tests/gpu/kernels/convert_hoist.tile and two gathered-B kernels of the lit tests.
#   usage (repo root): tests/gpu/kernels.sh BUILD_DIR      exit 0 all PASS, 1 a FAIL, 77 no GPU
set -u
B=${1:-build}
T="$B/tilec"
SEED=${TILEC_SEED:-$(date +%s)}
echo "kernels.sh: seed $SEED"
fail=0 n=0
one() { # ENV FILE KERNEL ARGS...  (ENV: NAME=VALUE or -)
  e=$1 f=$2 k=$3; shift 3
  if [ "$e" = - ]; then out=$("$T" run "$f" --kernel "$k" --device --seed "$SEED" "$@" 2>&1); rc=$?
  else out=$(env "$e" "$T" run "$f" --kernel "$k" --device --seed "$SEED" "$@" 2>&1); rc=$?; fi
  [ $rc = 77 ] && { echo "kernels.sh: no GPU"; exit 77; }
  n=$((n + 1))
  if [ $rc != 0 ]; then fail=$((fail + 1)); echo "FAIL $k ($e) $*"; echo "$out" | tail -5; else echo "PASS $k ($e) $*"; fi
}
for e in - TILEC_CONVERT_HOIST=0; do
  # (M 333 runs hoist_form's materialize-once form of the kernels with a B computed in the loop: M >= 256)
  for sz in "200 130 190" "64 64 64" "333 77 1000" "1 1 1"; do set -- $sz
    for k in fires cutlass_fires invariant; do
      one $e tests/gpu/kernels/convert_hoist.tile $k --size M=$1 --size N=$2 --size K=$3
    done
    one $e tests/lit/codegen/prologue.tile indexed_b --size M=$1 --size N=$2 --size K=$3 --size R=61
    one $e tests/lit/passes/hoist_form.tile gathered --size M=$1 --size N=$2 --size K=$3 --size R=61
  done
done
echo "kernels.sh: $n run, $fail failed"
[ $fail = 0 ]
