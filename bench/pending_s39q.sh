# bench/pending_s39q.sh: bench/pending_s39.sh's own parts (pending_s39 runs this, then pending_s38), for a call of ~200 s:
# the kernels whose PTX dot_acc_fold / the kn8 stages changed, the rows-64 kernels against the interpreter, and
# rows64_ab.py at two sizes, three rounds.  Prediction and rule: bench/pending_s39.sh.
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s39q.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
V=tests/cutlass_variants
r() { echo "$(echo "$@" | cut -c1-90): $(TILEC_CACHE_DIR=/tmp/c39f timeout 60 $B/tilec run "$@" --device 2>&1 | grep -E 'PASS|FAIL|rror' | tail -2 | tr '\n' ' ' | cut -c1-160)"; }
r $V/g_k0242.tile --kernel cutlass_gen_242 --size M=2100 --size N=2100 --size K=136 --scalar alpha=-1.25
r $V/cutlass_dotacc_after_f8.tile --kernel cutlass_dotacc_after_f8 --size M=300 --size N=520 --size K=200 --scalar s=1 --atol 32 --rtol 0.05
r $V/g_k0233.tile --kernel cutlass_gen_233 --size M=300 --size N=200 --size K=264
r $V/g_k0286.tile --kernel cutlass_gen_286 --size M=300 --size N=200 --size K=264 --scalar ks=72
r $V/g_k0062.tile --kernel cutlass_gen_62 --size M=300 --size N=200 --size K=264
r $V/v1_ifdot_in_loop.tile --kernel cutlass_v --size M=300 --size N=200 --size K=264 --scalar s=1
r $V/cutlass_loopdot_after_bf16.tile --kernel cutlass_loopdot_after_bf16 --size M=300 --size N=200 --size K=264
r tests/user_kernels/probe/v1.tile --kernel cutlass_v1 --size M=130 --size K=100 --size H=64 --size N=90
r tests/lit/passes/dot-acc-fold.tile --kernel cutlass_pluseq --size M=300 --size N=520 --size K=700
r tests/lit/passes/kn8-ws-stages.tile --kernel cutlass_fp8_kn --size M=300 --size N=520 --size K=700
export TILEC_ROWS64=1
for k in cutlass_rows64_bf16 cutlass_rows64_fp8; do for w in "" --warps=8; do
  r bench/variants/gemm_rows64.tile --kernel $k $w --size M=300 --size N=520 --size K=700
done; done
unset TILEC_ROWS64
echo "[$(el) s]"
TILEC_CACHE_DIR=/tmp/c39b timeout -k 5 100 python3 bench/rows64_ab.py --lib $B/libtilec.so --rounds 3 --sizes 8192x8192x8192,512x4096x14336 > $L/r64.log 2>&1
echo "rows64 bench rc $? [$(el) s]"; grep -E "^\||Error|error" $L/r64.log | cut -c1-200
