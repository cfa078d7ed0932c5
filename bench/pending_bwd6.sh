#!/bin/sh
# bench/pending_bwd6.sh CARRY (branch bwd6, eighteenth session; ~90 s, <= 145 s): TILEC_LOOP_SPLIT_LOAD=1
# (lib/codegen/emit_memory.c loop_split_load): attn_bwd_dkdv's per-step LSE and Dl row loads in the
# split form (one uniform branch, one predicated ld.global.v2 a group) instead of the combined form
# (vector + scalar fallbacks, five predicates a group): the D64 step 394 -> 302 SASS instructions,
# D128 711 -> 545 (bench/RESULTS.md "bwd6").  Here: `sh tools/carry.sh build`; on the device:
#   run command="sh bench/pending_bwd6.sh .carry" carry=[".carry"]
# 1. correctness under the switch: `tilec run --device` (GPU against the interpreter) of dK/dV at S 301
#    (odd: the split's fallback side) and 1000 (even: its vector side, a ragged last block), D 64/128,
#    causal and not; then tests/gpu/test_attn_bwd.py (fp64 autograd, S 1/127/129/1000/4097, outputs
#    NaN-poisoned; every pipeline: the wgmma TMA loop and the multistage cp.async loop both change)
# 2. bench.py --only attnbwd --quick, S4096 Z4 H16, default, split-load and rows-probe (a timing probe,
#    wrong dK / dV by design: dK/dV without its row loads, bench/variants/attn_bwd_rows_probe.tile; its
#    err column is meaningless) beside FA2 and cuDNN, two processes with the order reversed; a short
#    table last (x cuDNN per process; time default / split-load, dK/dV default / probe).
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/cbwd6
echo "== 1. correctness, TILEC_LOOP_SPLIT_LOAD=1 [$(el) s]"
# (the eight runs in parallel: 10 s each in a row was 80 of the script's 150)
for D in 64 128; do for C in 0 1; do for S in 301 1000; do
  ( TILEC_LOOP_SPLIT_LOAD=1 timeout -k 10 20 $B/tilec run examples/attn_bwd.tile --kernel=attn_bwd_dkdv -D D=$D -D CAUSAL=$C \
      --size Z=1 --size H=3 --size S=$S --scalar scale=0.1 --device > $L/run_${D}_${C}_$S.log 2>&1
    echo "dkdv D$D causal=$C S$S vs interpreter: rc $? $(grep -cE 'PASS' $L/run_${D}_${C}_$S.log) PASS $(grep -cE 'FAIL' $L/run_${D}_${C}_$S.log) FAIL" \
      > $L/run_${D}_${C}_$S.txt ) &
done; done; done
wait
cat $L/run_*.txt
TILEC_LOOP_SPLIT_LOAD=1 timeout -k 10 40 python3 tests/gpu/test_attn_bwd.py --lib $B/libtilec.so.0.1 > $L/test_on.log 2>&1
echo "test_attn_bwd (switch on) rc $? [$(el) s]: $(tail -1 $L/test_on.log)"
grep -E "^FAIL" $L/test_on.log | head -8
echo "== 2. bench [$(el) s]"
r=0
for order in default,split-load,rows-probe rows-probe,split-load,default; do
  r=$((r + 1))
  timeout -k 10 40 python3 bench/bench.py --lib $B/libtilec.so.0.1 --only attnbwd --quick \
    --attnbwd-cases 64:4096:0,64:4096:1,128:4096:0,128:4096:1 --attnbwd-variants $order > $L/bench_$r.log 2>&1
  echo "bench round $r ($order) rc $? [$(el) s]"
  grep -E "^attn bwd D.*(default|split-load|rows-probe): dK/dV" $L/bench_$r.log | sed "s/^/  r$r /"
done
echo "== table (x cuDNN of the same process; time off / on) [$(el) s]"
for r in 1 2; do
  grep -E "^attn bwd .*\| cuDNN SDPA \|" $L/bench_$r.log | awk -F' [|] ' -v r=$r '{printf "r%s %-40s %8s ms x cuDNN %s err %s\n", r, $2, $3, $7, $8}'
done
for r in 1 2; do
  awk -v r=$r '/: dK\/dV kernel/ {c=$3" "$4" "$5; v=$6; sub(":","",v); t[c" "v]=$(NF-1); k2[c" "v]=$9}
    END {for (k in t) if (k ~ / default$/) {b=k; sub(/ default$/,"",b); o=b" split-load"; if (o in t)
      printf "r%s %s time off/on: all %.3f (%s / %s ms), dK/dV kernel %.3f (%s / %s ms); dK/dV off/probe %.3f\n", r, b, t[k]/t[o], t[k], t[o], k2[k]/k2[o], k2[k], k2[o], k2[k]/k2[b" rows-probe"]}}' $L/bench_$r.log | sort
done
echo "[all: $(el) s]"
