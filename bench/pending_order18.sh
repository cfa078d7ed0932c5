#!/bin/sh
# bench/pending_order18.sh (eighteenth session): TILEC_ATTN_ORDER made the default for causal attention
# (bench/RESULTS.md "eighteenth session"): the causal kernels whose PTX it changes, against the
# interpreter at ragged sizes with outputs poisoned, at the defaults: attn.tile's and attn_rope.tile's
# default variants (D 64 / 128 (/ 256) x causal 0 / 1) and llama/attn_gqa.tile; then the block-scaled
# fp8 GEMM at 1100x1800x1040 against the interpreter at the default (no prefetch: the seventeenth
# session's prefetch run failed 79 of 1.98M elements; prefetch cannot change a value, so the default
# should fail the same way if the tolerance is the cause) and at --rtol 0.03.  About 150 s warm.
#   here:   tools/carry.sh build        device: run command="sh bench/pending_order18.sh .carry" carry=[".carry"]
. bench/pending_env.sh
for f in attn attn_rope; do mkdir -p /tmp/o18_$f && cp examples/$f.tile /tmp/o18_$f/; done
mkdir -p /tmp/o18_gqa && cp examples/llama/attn_gqa.tile /tmp/o18_gqa/
for f in attn attn_rope gqa; do
  ( GPU_TEST_ATTN_VARIANTS=default TILEC_CACHE_DIR=/tmp/c18$f timeout -k 10 170 "$B/tests/gpu_test_examples" /tmp/o18_$f \
      > "$L/ex_$f.log" 2>&1; echo "exit $?" >> "$L/ex_$f.log" ) &
done
SZ="--size M=1100 --size N=1800 --size K=1040 --size KB=9 --size NB=15"
TILEC_CACHE_DIR=/tmp/c18bs timeout -k 10 60 "$B/tilec" run examples/gemm_fp8_blockscale.tile $SZ --device > "$L/bs_default.log" 2>&1
echo "blockscale default rc $?: $(grep -E 'PASS|FAIL' "$L/bs_default.log" | tr '\n' ' ' | cut -c1-220)"
TILEC_CACHE_DIR=/tmp/c18bs timeout -k 10 60 "$B/tilec" run examples/gemm_fp8_blockscale.tile $SZ --rtol 0.03 --device > "$L/bs_rtol.log" 2>&1
echo "blockscale default --rtol 0.03 rc $?: $(grep -E 'PASS|FAIL' "$L/bs_rtol.log" | tr '\n' ' ' | cut -c1-220)"
wait
echo "== table [$(el) s]"
for f in attn attn_rope gqa; do
  echo "examples $f (default variants): $(grep -c '^PASS' "$L/ex_$f.log") PASS, $(grep -c '^FAIL' "$L/ex_$f.log") FAIL, $(tail -1 "$L/ex_$f.log"); $(tail -2 "$L/ex_$f.log" | head -1 | cut -c1-100)"
  grep -m3 '^FAIL' "$L/ex_$f.log"
done
echo "[all: $(el) s]"
