#!/bin/sh
# bench/pending_w4two.sh: test_w4a16's two-kernel part alone (its A = I check per form: the fused kernel
# rounds q s - z once, the materialize-once default at M >= 256 as the source, twice; twenty-fourth session).
#   device: run command="sh bench/pending_w4two.sh .carry" carry=[".carry"] timeout_s=90
. bench/pending_env.sh
TEST_W4A16_PART=two TILEC_CACHE_DIR=/tmp/c-w4two timeout -k 5 60 python3 tests/gpu/test_w4a16.py --lib "$B/libtilec.so" \
  --examples examples > "$L/w4two.log" 2>&1
echo "test_w4a16 two rc $?: $(grep -c '^ok' "$L/w4two.log") ok, $(grep -c '^FAIL' "$L/w4two.log") FAIL [$(el) s]"
grep -m8 -E "^FAIL|A = I" "$L/w4two.log" | cut -c1-160
