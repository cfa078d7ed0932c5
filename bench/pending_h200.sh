# bench/pending_h200.sh: the issues' headline ratios on an H200, in one short call (about 3 minutes), for when a
# `run` lands on one: the sessions since the twenty-third got only H100s.  Exits at once (77) on another card so a
# call that gets an H100 costs only its start.  Each ratio against the reference of the same process:
#   the forward x cuDNN (and x FA2, x a plain Triton kernel: issue 11's ">= 1.2x Triton") by interleaved rounds (bench/attn_ab.py's default since the twenty-eighth session: D64 / D128 / D256, S 1k / 4k / 16k, full / causal);
#   the backward x cuDNN and FA2 by rotated rounds (bench/bwd_ab.py, D64 / D128, S 4k);
#   bf16 GEMM x cuBLAS by interleaved rounds (BENCH_INTERLEAVE=1) at 4096^3, 8192^3 and two Llama shapes; fp8 x cuBLAS (bench.py --only fp8).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_h200.sh .carry" carry=[".carry"] timeout_s=480
. bench/pending_env.sh
export TILEC_CACHE_DIR=/tmp/ch200 TILEC_LATE_FORMS=0
h200_only
timeout -k 10 240 python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 7 \
  --cases 64:1024:0,64:1024:1,64:4096:0,64:4096:1,64:16384:0,64:16384:1,128:1024:0,128:1024:1,128:4096:0,128:4096:1,128:16384:0,128:16384:1,256:1024:0,256:1024:1,256:4096:0,256:4096:1,256:16384:0,256:16384:1 \
  > $L/fw.log 2>&1; echo "forward rc $? [$(el) s]"
timeout -k 10 90 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 64:4096:0,64:4096:1,128:4096:0,128:4096:1 --rounds 9 \
  --variants default > $L/bw.log 2>&1; echo "backward rc $? [$(el) s]"
BENCH_INTERLEAVE=1 timeout -k 10 90 python3 bench/bench.py --lib $B/libtilec.so --only gemm --rounds 5 \
  --gemm-sizes 4096x4096x4096,8192x8192x8192,8192x28672x4096,8192x4096x14336 > $L/gemm.log 2>&1; echo "gemm rc $? [$(el) s]"
timeout -k 10 60 python3 bench/bench.py --lib $B/libtilec.so --only fp8 --quick > $L/fp8.log 2>&1; echo "fp8 rc $? [$(el) s]"
grep -E "^\||Error" $L/fw.log | cut -c1-150
grep -h "^ref \|rel. err\|Error" $L/bw.log | cut -c1-150
grep -E "^\| (gemm|fp8)|Error" $L/gemm.log $L/fp8.log | cut -c1-170 | head -24
