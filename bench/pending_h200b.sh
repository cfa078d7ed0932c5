# bench/pending_h200b.sh: the H200 numbers the thirtieth session's close left unmeasured there (about 3 minutes):
#   issue 12's row-kernel table (bench.py --only fused: each kernel x the copy bandwidth and x torch.compile) and
#   issue 10's block-scaled fp8 x the per-tensor kernel (bench/fp8_probe.py "tn", "tn fast" and "bs", interleaved rounds).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_h200b.sh .carry" carry=[".carry"] timeout_s=330
. bench/pending_env.sh
h200_only
PENDING_TESTS=" " PENDING_STEPS="fp8probe rows" FP8PROBE_FORMS="tn,tn fast,bs" ROWS_TIMEOUT=${ROWS_TIMEOUT:-200} exec sh bench/pending.sh "$@"
