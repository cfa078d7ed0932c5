# bench/pending_s37d.sh (thirty-seventh session): TILEC_RING_OVERLAP (dot_plan.c: the rings of main loops that run one
# after another share one region; a CTA barrier before each later loop's prologue), in one call (~3 minutes, any sm_90
# card):
#   - correctness against the interpreter: the causal split (loops.tile cutlass_attn_twostage) at D 64 / 128, S 77 /
#     300 / 1100, on sm_90a (TMA rings) and sm_80 code (cp.async rings); the three-loop cutlass_attn_sink3 (gave up
#     streaming before); tests/lit/codegen/resident-two-loops.tile's two kernels; tests/cutlass_variants' two-loop
#     GEMMs h1 / h11 and cutlass_loopdot_after_bf16 on sm_90a and sm_80 code; tests/gpu/multi_loop.sh (60 runs);
#   - timing (bench/switch_ab.py): cutlass_attn_twostage (causal) at D 64 / 128, S 4096, =0 against =1.
#     Rule written before: on by default if both D are <= 1.00 (time on / off) and every run PASSes.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s37d.sh .carry" carry=[".carry"] timeout_s=560
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
tr1() { # FILE KERNEL ARGS...: tilec run --device against the interpreter, its last line
  _f=$1 _k=$2; shift 2
  echo "$_k $*: $(TILEC_CACHE_DIR=/tmp/c37d timeout 90 $B/tilec run $_f --kernel $_k --device --seed 11 "$@" 2>&1 | grep -E "PASS|FAIL|rror" | tail -2 | tr '\n' ' ' | cut -c1-200)"
}
A="--size Z=2 --size H=3 --scalar scale=0.1"
for arch in sm_90a sm_80; do for d in 64 128; do for s in 77 300 1100; do
  tr1 tests/attn_variants/loops.tile cutlass_attn_twostage --arch=$arch -D D=$d --size S=$s $A
done; done; done
for d in 64 128; do for s in 77 300 1100; do tr1 tests/attn_variants/loops.tile cutlass_attn_sink3 -D D=$d --size S=$s $A; done; done
for k in cutlass_split cutlass_split_if; do tr1 tests/lit/codegen/resident-two-loops.tile $k -D D=128 --size S=300 $A; done
for arch in sm_90a sm_80; do
  tr1 tests/cutlass_variants/h1.tile cutlass_twoloops --arch=$arch --size M=300 --size N=200 --size K=264 --scalar s=1
  tr1 tests/cutlass_variants/h11.tile cutlass_secondacc --arch=$arch --size M=300 --size N=200 --size K=264 --scalar s=1
  tr1 tests/cutlass_variants/cutlass_loopdot_after_bf16.tile cutlass_loopdot_after_bf16 --arch=$arch --size M=300 --size N=200 --size K=264 --scalar s=1
done
timeout 240 sh tests/gpu/multi_loop.sh $B > $L/mloop.log 2>&1; echo "multi_loop.sh rc $?: $(tail -1 $L/mloop.log)"
grep -A3 "^FAIL" $L/mloop.log | head -12
echo "[$(el) s]"
TILEC_CACHE_DIR=/tmp/c37t timeout 150 python3 bench/switch_ab.py --lib $B/libtilec.so --file tests/attn_variants/loops.tile \
  --kernels cutlass_attn_twostage --switch TILEC_RING_OVERLAP --rounds 7 2>&1 | grep -E "^\||Error|error" | grep -v "workload\|^|---|---|---|---|---|---|---|---|$" | head -8
echo "[$(el) s]"
