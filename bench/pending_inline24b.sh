#!/bin/sh
# bench/pending_inline24b.sh: pending_inline24.sh's forms a pair at a time, each pair under its own limit
# (its first call printed nothing in 280 s on an H100: one form hung or ran slow; this names which).
#   device: run command="sh bench/pending_inline24b.sh .carry" carry=[".carry"] timeout_s=260
. bench/pending_env.sh
for pair in "bs wide,bs wide inline" "tn,tn inline" "bs,bs inline"; do
  timeout -k 5 55 python3 bench/fp8_probe.py --lib "$B/libtilec.so" --sizes 4096,8192 --rounds 2 --warm-ms 300 \
    --forms "$pair" > "$L/probe.log" 2>&1
  echo "pair '$pair' rc $? [$(el) s]"
  grep -E "\^3 |FAILED|Error|error" "$L/probe.log" | head -6 | sed 's/^/  /'
done
echo "== test_w4a16 two-kernel part (the A = I check: the fused form rounds once, the materialize-once form as the source) [$(el) s]"
TEST_W4A16_PART=two TILEC_CACHE_DIR=/tmp/c-w4b timeout -k 5 60 python3 tests/gpu/test_w4a16.py --lib "$B/libtilec.so" \
  --examples examples > "$L/w4.log" 2>&1
echo "test_w4a16 two rc $?: $(grep -c '^ok' "$L/w4.log") ok, $(grep -c '^FAIL' "$L/w4.log") FAIL"; grep -m6 "^FAIL" "$L/w4.log"
echo "[all: $(el) s]"
