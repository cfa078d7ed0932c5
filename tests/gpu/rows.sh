#!/bin/sh
# tests/gpu/rows.sh: the row kernels of examples/ on the GPU against the interpreter (`tilec run
# --device`) at sizes where the vector form of access_split runs (the last dim a multiple of 8) and
# at ragged sizes (a last dim not a multiple of the vector: the per-element fallback), by default and with row_stream on (--stages=2/3: each
# persistent CTA then takes several tiles, more rows than CTAs fit on the GPU); docs/rows.md.
# Fresh random data per run (--seed).
#   usage (repo root): tests/gpu/rows.sh BUILD_DIR      exit 0 all PASS, 1 a FAIL, 77 no GPU
#   (ROWS_STAGE_LIST="1 2" limits the stages; ROWS_PART=i/n runs the tests i, i + n, ... (0-based): n in parallel)
set -u
B=${1:-build}
T="$B/tilec"
SEED=${TILEC_SEED:-$(date +%s)}
echo "rows.sh: seed $SEED"
fail=0 n=0
one() { # FILE KERNEL ARGS...
  f=$1; k=$2; shift 2
  # ROWS_PART=i/n: only every n-th test from the i-th (n processes in parallel)
  if [ -n "${ROWS_PART:-}" ]; then all=$((${all:-0} + 1)); [ $(( (all - 1) % ${ROWS_PART#*/} )) = ${ROWS_PART%/*} ] || return 0; fi
  out=$("$T" run "examples/$f" --kernel "$k" --device --seed "$SEED" --stages="$ROWS_STAGES" "$@" 2>&1); rc=$?
  [ $rc = 77 ] && { echo "rows.sh: no GPU"; exit 77; }
  n=$((n + 1))
  if [ $rc != 0 ]; then fail=$((fail + 1)); echo "FAIL $k stages=$ROWS_STAGES $*"; echo "$out" | tail -5; else echo "PASS $k $*"; fi
}
for st in ${ROWS_STAGE_LIST:-1 2 3}; do
export ROWS_STAGES=$st
for sz in "1500 4096" "700 4000" "301 1001" "1 1"; do set -- $sz
  one rmsnorm.tile rmsnorm --size R=$1 --size C=$2 --scalar eps=1e-5
  one rmsnorm.tile rmsnorm_rows --size R=$(($1 + 1)) --size C=$2 --scalar eps=1e-5
  one add_rmsnorm.tile add_rmsnorm --size R=$1 --size C=$2 --scalar eps=1e-5
  one add_rmsnorm_fp8.tile add_rmsnorm_fp8 --size R=$1 --size C=$2 --scalar eps=1e-5
  one embedding_rmsnorm.tile embedding_rmsnorm --size T=$1 --size V=3001 --size D=$2 --scalar eps=1e-5
done
for sz in "1500 2048" "701 2000" "301 1001"; do set -- $sz
  one layernorm.tile layernorm --size R=$1 --size C=$2 --scalar eps=1e-5
  one swiglu.tile swiglu --size R=$1 --size C=$2
  one dropout_residual.tile dropout_residual --size R=$1 --size C=$2 --scalar p=0.1 --scalar seed=7
done
one softmax.tile softmax --size R=3000 --size C=1024
one softmax.tile softmax --size R=999 --size C=1000
one rope.tile rope --size T=1000 --size H=8
one rope.tile rope --size T=999 --size H=3
one cross_entropy.tile cross_entropy --size R=300 --size V=40000
one cross_entropy.tile cross_entropy --size R=77 --size V=4097
# a uniform's compare with a scalar as an integer compare (docs/rows.md "rows6"): every predicate, both orders
for p in -0.5 0 0.5 0.999 1 3 nan; do
  one ../tests/lit/codegen/rand-cmp.tile rand_cmp --size R=301 --size C=1001 --scalar p=$p --scalar seed=11
done
one ../tests/lit/codegen/rand-cmp.tile rand_cmp --size R=4096 --size C=4096 --scalar p=0.5 --scalar seed=3
done
echo "rows.sh: $((n - fail)) of $n PASS"
[ $fail = 0 ]
