# bench/pending_oslotmax2.sh: the bounded O_SLOT default (twenty-eighth session) beyond gpu_test_examples:
# compute-sanitizer racecheck of the default kernel's fa3 form on 1 CTA (3 tiles of 3 steps at S 300) with the bound
# above (every tile through the last stage) and below the tiles' steps (every tile through q's slot, "q empty" of 8
# arrivals), then `tilec run --device` against the interpreter: GQA's form (llama/attn_gqa.tile) at S 1000 / 1100 and
# attn.tile at S 1000 / 4097 on 5 persistent CTAs, both at the default (unset).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_oslotmax2.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
san() { # tag MAX: racecheck, 1 CTA, S 300
  t=$1 m=$2
  env TILEC_ATTN_O_SLOT_MAX=$m TILEC_ATTN_FORM_MIN_S=1 TILEC_PERSIST_CTAS=1 TILEC_CACHE_DIR=/tmp/tms$t timeout -k 10 120 \
    compute-sanitizer --tool racecheck $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd -D D=128 -D CAUSAL=0 \
    --size Z=1 --size H=1 --size S=300 --scalar scale=0.0625 --device > $L/san_$t.log 2>&1
  echo "racecheck D128 full S300 1 CTA O_SLOT_MAX=$m: rc $? $(grep -E 'SUMMARY|FAIL' $L/san_$t.log | tr '\n' ' ' | cut -c1-140)" \
    > $L/san_$t.txt
}
trun() { # tag file kernel "sizes" [env...]: the default kernel's form (every S), tilec run --device
  t=$1 f=$2 k=$3 sz=$4; shift 4
  # shellcheck disable=SC2086
  env TILEC_ATTN_FORM_MIN_S=1 "$@" TILEC_CACHE_DIR=/tmp/tmr$t timeout -k 10 120 $B/tilec run examples/$f \
    --kernel $k -D D=128 -D CAUSAL=0 $sz --scalar scale=0.0625 --device > $L/run_$t.log 2>&1
  echo "tilec run $t $k ($sz) $*: rc $? $(grep -E 'PASS|FAIL' $L/run_$t.log | tr '\n' ' ' | cut -c1-120)" > $L/run_$t.txt
}
san in 3 & S1=$!
san out 2 & S2=$!
trun g1000 llama/attn_gqa.tile cutlass_attn_gqa "--size Z=1 --size H=8 --size HKV=2 --size S=1000" TILEC_PERSIST_CTAS=5 & R1=$!
trun g1100 llama/attn_gqa.tile cutlass_attn_gqa "--size Z=2 --size H=4 --size HKV=1 --size S=1100" & R2=$!
trun a1000 attn.tile cutlass_attn_fwd "--size Z=1 --size H=3 --size S=1000" TILEC_PERSIST_CTAS=5 & R3=$!
trun a4097 attn.tile cutlass_attn_fwd "--size Z=1 --size H=1 --size S=4097" TILEC_PERSIST_CTAS=5 & R4=$!
wait $S1 $S2 $R1 $R2 $R3 $R4; cat $L/run_*.txt $L/san_*.txt; echo "[$(el) s]"
