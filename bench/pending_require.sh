#!/bin/sh
# bench/pending_require.sh (twenty-fourth session, branch require): require(cond, "msg") on a GPU
# (docs/language.md 6.1).  No codegen changes (every example's PTX the same), so no switch: what a GPU
# checks is (1) gpu_test_examples over the example files that gained a require, at its generic sizes:
# every round passes or is refused by both the launcher and the interpreter with one diagnostic (the
# decode kernels' G <= GM / PAGE % BT at odd sizes); (2) bench/launch_overhead's launch path with and
# without a require, at a repeated shape (no evaluation) and at a shape changing every launch (checks,
# grid and require evaluated each time).  Prediction (bench/RESULTS.md): (1) all pass or refused, no
# FAIL; (2) "require kernel, same shape" = "tilec_kernel_launch" within 0.02 us; "checks + grid +
# require" - "checks + grid" <= 0.1 us.  ~100-150 s warm.
#   here:   sh tools/carry.sh build     device: run command="sh bench/pending_require.sh .carry" carry=[".carry"] timeout_s=240
. bench/pending_env.sh
D=/tmp/req_ex.$$; mkdir -p $D
for f in softmax rmsnorm layernorm add_rmsnorm add_rmsnorm_fp8 rmsnorm_bwd embedding_rmsnorm moe_permute topk_sample \
         attn_decode; do cp examples/$f.tile $D/; done
for f in attn_decode_whole decode_splitk fp8_layer; do cp examples/llama/$f.tile $D/; done
TILEC_CACHE_DIR=/tmp/creq.$$ timeout -k 10 ${REQ_EX_LIMIT:-160} $B/tests/gpu_test_examples $D > $L/req_ex.log 2>&1
R=$?
grep -hE '^FAIL' $L/req_ex.log | cut -c1-200 | head -10
echo "gpu_test_examples (13 files) rc $R: $(grep -c '^PASS' $L/req_ex.log) rounds passed, $(grep -c 'refused by both' $L/req_ex.log) refused by both, $(grep -c '^FAIL' $L/req_ex.log) FAIL [$(el) s]"
if [ -x $B/launch_overhead ]; then
  TILEC_CACHE_DIR=/tmp/creq2.$$ timeout -k 5 ${REQ_LO_LIMIT:-60} $B/launch_overhead 20000 > $L/req_lo.log 2>&1
  echo "launch_overhead rc $? [$(el) s]"
  sed -n '/launch path/,/checks + grid + require/p' $L/req_lo.log
else
  echo "no $B/launch_overhead (tools/carry.sh carries it)"
fi
rm -rf $D /tmp/creq.$$ /tmp/creq2.$$
echo "[all: $(el) s]"
