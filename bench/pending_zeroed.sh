#!/bin/sh
# bench/pending_zeroed.sh: the call zeroed owes (seventeenth session, no device): @zeroed(NAME) on the GPU,
# predicted in bench/RESULTS.md "2026-12-05 (seventeenth session), branch zeroed".  About 40 s warm.
#   1. gpu_test_examples on attn_decode.tile: attn_decode_fused's Count zeroed through the attribute
#      (TILEC_PARAM_ZEROED) instead of by name; every kernel against the interpreter, outputs poisoned;
#      gpu_test_cli_ptx on it: the CLI's PTX and the JIT's bit-identical, now with the merge running;
#   2. tilec run --device attn_decode_fused: Count gets zeros (before: random), GPU == interpreter;
#   3. tilec tune attn_decode_fused over BT, the zeroing before every launch on (default: a memset and
#      an event pair a launch) and off (TILEC_TUNE_ZERO=0: the back-to-back event chain), same run.
#   here:   tools/carry.sh build
#   device: run command="sh bench/pending_zeroed.sh .carry" carry=[".carry"] timeout_s=180
. bench/pending_env.sh
SZ="--size B=4 --size HKV=8 --size G=4 --size NP=64 --size PAGE=64 --size MAXP=16 --size BH=32 --size NS=8"
SC="--scalar scale=0.1 --scalar chunk=128"
echo "== 1. correctness: attn_decode.tile's kernels against the interpreter at ragged sizes (gpu_test_examples)"
mkdir -p /tmp/zeroedex && cp examples/attn_decode.tile /tmp/zeroedex/
timeout -k 10 45 "$B/tests/gpu_test_examples" /tmp/zeroedex > "$L/ex.log" 2>&1
EX="gpu_test_examples exit $?: $(tail -1 "$L/ex.log")"; echo "$EX"; grep -m3 FAIL "$L/ex.log"
TILEC_CLI=$B/tilec timeout -k 10 30 "$B/tests/gpu_test_cli_ptx" /tmp/zeroedex > "$L/cli.log" 2>&1
CLI="gpu_test_cli_ptx exit $?: $(tail -1 "$L/cli.log")"; echo "$CLI"; grep -m3 FAIL "$L/cli.log"
echo "== 2. tilec run --device attn_decode_fused (Count: zeros by @zeroed) [$(el) s]"
# shellcheck disable=SC2086
timeout -k 10 20 "$B/tilec" run examples/attn_decode.tile --kernel attn_decode_fused $SZ $SC --device > "$L/run.log" 2>&1
RUN="tilec run exit $?: $(tail -1 "$L/run.log")"; cat "$L/run.log"
echo "== 3. tilec tune attn_decode_fused, zeroing on / off (TILEC_TUNE_ZERO=0) [$(el) s]"
for z in 1 0 1 0; do
  # shellcheck disable=SC2086
  TILEC_TUNE_ZERO=$z timeout -k 10 15 "$B/tilec" tune examples/attn_decode.tile --kernel attn_decode_fused $SZ $SC \
    --space BT=32,64 --no-cache > "$L/tune$z.log" 2>&1
  echo "TILEC_TUNE_ZERO=$z exit $?"; grep -E "^\[|best" "$L/tune$z.log" | sed "s/^/  zero=$z /"
done
echo "== table: config, ms with zeroing (1), ms without (0), last pair of runs"
for bt in 32 64; do
  on=$(grep -m1 "] BT=$bt:" "$L/tune1.log" | sed 's/.*: \([0-9.]*\) ms.*/\1/')
  off=$(grep -m1 "] BT=$bt:" "$L/tune0.log" | sed 's/.*: \([0-9.]*\) ms.*/\1/')
  echo "BT=$bt  on ${on:-?} ms  off ${off:-?} ms"
done
echo "correctness: $EX"
echo "cli ptx: $CLI"
echo "run: $RUN"
echo "[all: $(el) s]"
