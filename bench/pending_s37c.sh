# bench/pending_s37c.sh (thirty-seventh session): tests/gpu/attn_variants.sh in full (every cutlass_ attention variant
# against the interpreter at the S that pick the launch-time forms) after the session's fixes and TILEC_RAND_FOLLOW's
# default (~6-7 minutes, any sm_90 card).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s37c.sh .carry" carry=[".carry"] timeout_s=590
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 sh tests/gpu/attn_variants.sh $B > $L/avar.log 2>&1; echo "attn_variants.sh rc $? [$(el) s]"
echo "$(grep -c '^PASS' $L/avar.log) PASS, $(grep -c '^FAIL' $L/avar.log) FAIL"
grep -v "^PASS" $L/avar.log | tail -16
