#!/bin/sh
# tests/gpu/user_kernels.sh: every kernel of tests/user_kernels (kernels written the way LLM training and serving
# code fuses ops: norms and their backward, losses, routers, quantization, fused GEMM epilogues, layout changes;
# and probe/, smaller features and cutlass-pipeline shapes; README there) on the GPU against the interpreter
# (`tilec run --device`) at ragged sizes.  python/tests/test_user_kernels.py checks the interpreter against
# NumPy on the same files.  Fresh random data per run (--seed; TILEC_SEED=S reproduces a run).
#   usage (repo root): tests/gpu/user_kernels.sh BUILD_DIR [--device|--interp]
#     --device (the default): exit 0 all PASS, 1 a FAIL, 77 no GPU
#     --interp: the interpreter alone (no GPU needed: a dry run of the script, every kernel compiled and run)
set -u
B=${1:-build}
MODE=${2:---device}
T="$B/tilec"
D=$(dirname "$0")/../user_kernels
SEED=${TILEC_SEED:-$(date +%s)}
echo "user_kernels.sh: seed $SEED ($MODE)"
fail=0 n=0
one() { # FILE KERNEL ARGS...  (FILE: under tests/user_kernels, without .tile)
  f=$1 k=$2; shift 2
  out=$(timeout 120 "$T" run "$D/$f.tile" --kernel "$k" "$MODE" --seed "$SEED" "$@" 2>&1); rc=$?
  [ $rc = 77 ] && { echo "user_kernels.sh: no GPU"; exit 77; }
  n=$((n + 1))
  # --device: rc 0 must come with the kernel's PASS line
  if [ $rc = 0 ] && [ "$MODE" = --device ] && ! echo "$out" | grep -q "^$k: PASS"; then rc=1; fi
  if [ $rc != 0 ]; then fail=$((fail + 1)); echo "FAIL $f $k $* (rc $rc)"; echo "$out" | tail -5
  else echo "PASS $f $k $*"; fi
}
for sz in "7 127" "33 1000"; do set -- $sz
  one ln_bwd ln_bwd --size R=$1 --size C=$2; done
one ln_bwd ln_bwd_partial --size R=33 --size C=1000 --size P=9
one ln_bwd ln_dw_reduce --size P=9 --size C=1000
one ln_bwd ln_dw_reduce --size P=70 --size C=129
for k in geglu_bwd swiglu_bwd; do
  one glu_bwd $k --size R=7 --size F=257
  one glu_bwd $k --size R=3 --size F=4097; done
for sz in "3 1025" "2 5000"; do set -- $sz
  one kl_jsd kl_distill --size R=$1 --size V=$2 --scalar tau=2.0
  one kl_jsd jsd --size R=$1 --size V=$2; done
for sz in "5 129" "6 2049" "3 5003"; do set -- $sz
  one ce_ls ce_ls --size R=$1 --size V=$2 --scalar eps=0.1 --scalar ignore=-100 --scalar inv_n=0.25; done
for sz in "17 8" "100 64" "33 60"; do set -- $sz
  one moe_router moe_top2 --size T=$1 --size E=$2; done
one moe_router moe_topk --size T=13 --size E=64 --size K=8
one moe_router moe_topk --size T=30 --size E=40 --size K=6
one quant quant_fp8_rows --size R=3 --size C=1000
one quant quant_fp8_rows --size R=2 --size C=4097
one quant quant_i8_rows --size R=7 --size C=127
one quant quant_i8_rows --size R=9 --size C=300
for sz in "3 127" "7 1000" "4 2048"; do set -- $sz
  one add_ln add_ln --size R=$1 --size C=$2 --scalar eps=1e-5; done
for k in bgemm_bias_relu cutlass_bgemm_bias_relu; do
  one bgemm $k --size Bt=3 --size M=7 --size N=129 --size K=127
  one bgemm $k --size Bt=2 --size M=257 --size N=129 --size K=65
  one bgemm $k --size Bt=3 --size M=300 --size N=260 --size K=200; done
for k in gemm_w8a16 gemm_w8a16_nt; do
  one gemm_w8a16 $k --size M=7 --size N=129 --size K=127
  one gemm_w8a16 $k --size M=100 --size N=300 --size K=1000; done
one gemm_grouped_splitk gemm_grouped_splitk --size M=300 --size N=129 --size K=127
one gemm_grouped_splitk gemm_grouped_splitk --size M=513 --size N=64 --size K=33
one gemm_grouped_splitk gemm_grouped_splitk --size M=65 --size N=1000 --size K=500
for sz in "2 37 3 65" "3 17 5 100"; do set -- $sz
  one permute bshd_to_bhsd --size B=$1 --size S=$2 --size H=$3 --size D=$4
  one permute bshd_to_bhsd_perm --size B=$1 --size S=$2 --size H=$3 --size D=$4
  one permute bsd_to_bds --size B=$1 --size S=$2 --size D=$4; done
one topk_rows topk_rows --size R=5 --size V=1000 --size K=16
one topk_rows topk_rows --size R=3 --size V=129 --size K=7
one topk_rows topk_vals_bf16 --size R=7 --size V=300 --size K=32
one topk_rows topk_vals_bf16 --size R=5 --size V=512 --size K=5
for sz in "3 511" "4 4097"; do set -- $sz
  for k in cumsum_rows excl_cumsum_i32 rev_cumsum; do one cumsum $k --size R=$1 --size C=$2; done; done
for sz in "2 4 3 100" "1 8 16 257" "3 2 5 1000"; do set -- $sz
  one groupnorm groupnorm --size N=$1 --size G=$2 --size CG=$3 --size HW=$4 --scalar eps=1e-5; done
for k in dual_swiglu cutlass_dual_swiglu; do
  one gemm_dual_swiglu $k --size M=7 --size N=129 --size K=127
  one gemm_dual_swiglu $k --size M=200 --size N=130 --size K=300; done
# a dot outside the cutlass main loop (after it; a second GEMM on the first's result); an A computed in the loop
for sz in "130 200 70" "257 65 129"; do set -- $sz
  one cutlass_dot_after_loop cutlass_v4 --size M=$1 --size K=$2 --size N=$3
  one cutlass_computed_a cutlass_w2 --size M=$1 --size K=$2 --size N=$3; done
# cutlass_mlp2's f32 output comes through a bf16 rounding of the first GEMM's f32 result (cast<bf16>(h)), so a
# one-ulp flip of h between the GPU's and the interpreter's summation orders moves Y by ~1.4 bf16 ulps; measured
# on an H100 the same max error (0.0156 abs, 37 of 11700 elements) with --pipeline=multistage, i.e. not the
# cutlass path
one cutlass_mlp2 cutlass_mlp2 --size M=130 --size K=100 --size H=64 --size N=90 --atol 0.05 --rtol 0.02
# probes: smaller features (probe/p1.tile, probe/p2.tile), one size each
one probe/p1 cumsum_bf16_axis0 --size R=50 --size C=70
one probe/p1 sort_axis0_f16 --size R=30 --size C=20
one probe/p1 sort_u8 --size R=5 --size C=100
one probe/p1 argmin_bf16 --size R=9 --size C=200
one probe/p1 reshape_cat --size N=600
one probe/p1 permute4 --size A=2 --size B=4 --size C=8 --size D=16
one probe/p1 mods --size N=300 --scalar d=-7 --scalar fd=-1.5
one probe/p1 dot_i8 --size M=33 --size N=65 --size K=100
one probe/p1 atom_mix --size N=1000 --size H=13 --atol 0.1  # f16 atomic adds in another order: f16 roundings
one probe/p1 loop_if --size R=6 --size C=300 --scalar thr=1.0
one probe/p1 gather_inner --size R=20 --size C=100
one probe/p1 dot_f8mix --size M=100 --size N=70 --size K=130
one probe/p1 e5m2_cast --size N=300
one probe/p2 dot_tiny --size M=17 --size N=9 --size K=33
one probe/p2 dot_transA --size M=100 --size N=70 --size K=130
# mlp2 as cutlass_mlp2 (cast<bf16>(max(h, 0)) before the second dot; on an H100 at seed 14: 0.0039 abs, 21 of 16770)
one probe/p2 mlp2 --size M=130 --size K=48 --size H=50 --size N=129 --atol 0.05 --rtol 0.02
one probe/p2 tf32_nt --size M=100 --size N=70 --size K=130
one probe/p2 i8_bk16 --size M=100 --size N=70 --size K=130
one probe/p2 cond_rows --size R=7 --size C=300
# probes: cutlass-pipeline shapes (probe/v*.tile, probe/w*.tile): dots before, after and beside the main loop
one probe/v1 cutlass_v1 --size M=130 --size K=100 --size H=64 --size N=90
one probe/v2 cutlass_v2 --size M=130 --size K=100 --size H=50 --size N=90
one probe/v3 cutlass_v3 --size M=130 --size K=10 --size H=50 --size N=64  # N <= 64: wider races on Y
one probe/v4a v4 --size M=130 --size K=200 --size N=70
for k in v5 v6 v7 v8 v9; do one probe/$k cutlass_$k --size M=200 --size K=130 --size N=70; done
for k in w1 w3 w4 w6; do one probe/$k cutlass_$k --size M=200 --size K=130 --size N=150; done
# cutlass_w5's second dot takes cast<bf16>(acc * s), a bf16 rounding of the main loop's f32 result, as cutlass_mlp2
# (above): a one-ulp flip of it between the two summation orders moves C by up to a bf16 ulp of a term (measured
# on an H100: 0.00097 and 0.0039 abs, 5 and 11 of 30000 elements, at seeds 11 and 12; the same with
# --pipeline=multistage and --pipeline=simple)
one probe/w5 cutlass_w5 --size M=200 --size K=130 --size N=150 --atol 0.05 --rtol 0.02
# 8-bit float constants (codegen refused them until the thirty-fifth session): filled tiles, and an fp8 GEMM's A masked
# to 0.0 past klim (fp8 dots: tilec run's fp8 tolerance)
one probe/f8_const fp8_fill --size N=100
one probe/f8_const cutlass_fp8_kmask --size M=200 --size K=200 --size N=150 --scalar klim=150
echo "user_kernels.sh: $n run, $fail failed ($MODE)"
[ $fail = 0 ]
