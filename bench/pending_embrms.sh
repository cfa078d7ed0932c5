#!/bin/sh
# bench/pending_embrms.sh (branch embrms, nineteenth session; not run: no device that session): why
# embedding + RMSNorm is at 0.86 of the copy bandwidth where rmsnorm is at 0.93 (rows of 8192), predicted in
# bench/RESULTS.md "2026-12-05 (nineteenth session), branch embrms".  One opt-in pass, TILEC_ROW_RELOAD=1
# (passes/row_reload.c: a row load used across a reduce read again after it; off: every PTX unchanged), three
# kernel variants (bench/variants/embedding_rmsnorm_{row,ahead,reload}.tile) and four id patterns, timed by
# bench.py (FUSED_EMBRMS=1: bench.py embrms_forms) beside the example, rmsnorm on the same bytes, the 4 GB copy
# and torch.compile.  About 130 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_embrms.sh .carry" carry=[".carry"] timeout_s=300
. bench/pending_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>/dev/null
V=bench/variants
echo "== 1. correctness: the variants against the interpreter (tilec run --device: fresh random data, ids in"
echo "   [-8, 8], aligned and ragged D, T not a multiple of P), each in the form the bench times [$(el) s]"
pass=0 fail=0
one() { # ENV FILE KERNEL ARGS...
  env_=$1 f=$2 k=$3; shift 3
  out=$(env $env_ TILEC_CACHE_DIR=/tmp/cembrms "$B/tilec" run "$f" --kernel "$k" --device "$@" 2>&1); rc=$?
  [ $rc = 77 ] && { echo "no GPU"; exit 77; }
  if [ $rc = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL [$env_] $f $k $*"; echo "$out" | tail -4; fi
}
for sz in "600 8192" "300 4096" "301 8000" "7 4000"; do set -- $sz
  T=$1 D=$2 BD=$(( $2 > 4096 ? 8192 : 4096 ))
  c="--size T=$T --size V=3001 --size D=$D --scalar eps=1e-5 -D BD=$BD"
  one X= $V/embedding_rmsnorm_row.tile embedding_rmsnorm $c
  one X= $V/embedding_rmsnorm_ahead.tile embedding_rmsnorm $c --scalar P=7 --warps=8
  one X= $V/embedding_rmsnorm_ahead.tile embedding_rmsnorm $c --scalar P=396
  one X= $V/embedding_rmsnorm_reload.tile embedding_rmsnorm $c --disable-pass=row_loads
  one X= $V/embedding_rmsnorm_reload.tile embedding_rmsnorm_rows $c --disable-pass=row_loads
  if [ $((D % 8)) = 0 ]; then  # the variant alone refuses arguments without its key bits: aligned sizes only
    one "TILEC_VEC_ONLY=v TILEC_MAXNREG=64" $V/embedding_rmsnorm_ahead.tile embedding_rmsnorm $c --scalar P=528 --warps=8
    one TILEC_VEC_ONLY=v $V/embedding_rmsnorm_reload.tile embedding_rmsnorm $c --disable-pass=row_loads --warps=8
  fi
done
echo "tilec run: $pass passed, $fail failed"
rm -rf /tmp/gembrms /tmp/gembrms2; mkdir -p /tmp/gembrms /tmp/gembrms2
cp $V/embedding_rmsnorm_*.tile examples/embedding_rmsnorm.tile /tmp/gembrms/
# TILEC_ROW_RELOAD=1 changes the PTX of exactly these (tools/ptxsnap.sh, 23 of 140 files over the 4 configurations)
cp examples/embedding_rmsnorm.tile examples/rmsnorm.tile examples/layernorm.tile examples/softmax.tile \
   examples/rmsnorm_bwd.tile examples/attn_decode.tile examples/llama/fp8_layer.tile /tmp/gembrms2/
TILEC_CACHE_DIR=/tmp/cembrms timeout -k 10 60 "$B/tests/gpu_test_examples" /tmp/gembrms > "$L/ex.log" 2>&1 &
P1=$!
TILEC_ROW_RELOAD=1 TILEC_CACHE_DIR=/tmp/cembrms2 timeout -k 10 80 "$B/tests/gpu_test_examples" /tmp/gembrms2 > "$L/ex2.log" 2>&1 &
P2=$!
# the row examples at LLM-ish and ragged sizes under the switch (stage 1: the default launch)
TILEC_ROW_RELOAD=1 TILEC_CACHE_DIR=/tmp/cembrms3 ROWS_STAGE_LIST=1 timeout -k 10 80 sh tests/gpu/rows.sh "$B" > "$L/rows.log" 2>&1
RR=$?
wait $P1; R1=$?; wait $P2; R2=$?
EX="gpu_test_examples (the example + the 3 variant files, default forms, P 1..8): exit $R1, $(tail -1 "$L/ex.log")"
EX2="gpu_test_examples, TILEC_ROW_RELOAD=1, the 7 files it changes: exit $R2, $(tail -1 "$L/ex2.log")"
ROWS="rows.sh stage 1, TILEC_ROW_RELOAD=1: exit $RR, $(grep -c '^PASS' "$L/rows.log") PASS, $(grep -c '^FAIL' "$L/rows.log") FAIL"
echo "$EX"; echo "$EX2"; echo "$ROWS"; grep -h -m5 FAIL "$L/ex.log" "$L/ex2.log" "$L/rows.log"
echo "== 2. bench.py --only fused: rmsnorm, layernorm, embedding + RMSNorm 16384 x 4096 / x 8192 (V 128256), default and"
echo "   TILEC_ROW_RELOAD=1 beside the copy and torch.compile, then the variants and id patterns (FUSED_EMBRMS=1) [$(el) s]"
FUSED_ONLY=rmsnorm,layernorm,embedding_rmsnorm FUSED_TAGS=ROW_RELOAD FUSED_EMBRMS=1 BENCH_LAUNCH_NOTES=1 TILEC_CACHE_DIR=/tmp/cembrms timeout -k 10 150 \
  python3 bench/bench.py --lib "$B/libtilec.so" --only fused --quick > "$L/fused.log" 2>&1
echo "bench.py exit $?"; grep -E "Error|FAILED|ERR" "$L/fused.log" | head -5
echo "== table [$(el) s]"
echo "tilec run: $pass passed, $fail failed"; echo "$EX"; echo "$EX2"; echo "$ROWS"
grep -E "^fused: copy|^fused (rmsnorm|layernorm|embedding_rmsnorm) |launch variant" "$L/fused.log" | sed 's/ (eager .*//' 
grep -E "^embrms " "$L/fused.log" | sed 's/ (the arange rows)//'
echo "[all: $(el) s]"
