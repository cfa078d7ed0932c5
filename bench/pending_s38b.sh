# bench/pending_s38b.sh (thirty-eighth session): the 41 kernels of the computed-A hunt (tests/prologue_a/more) on the
# GPU against the interpreter, the A-fragment rule on (sm_90a: wgmma, A from registers) and as sm_80 code (~2-3 min).
#   here: sh tools/carry.sh build     device: run command="sh bench/pending_s38b.sh .carry" carry=[".carry"] timeout_s=400
. bench/pending_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
PROLOGUE_A_FILES="tests/prologue_a/more/*.tile" PROLOGUE_A_CFGS="on sm80" TILEC_CACHE_DIR=/tmp/c38m timeout -k 10 360 \
  sh tests/gpu/prologue_a.sh $B > $L/pam.log 2>&1; echo "prologue_a.sh (more) rc $?: $(tail -1 $L/pam.log) [$(el) s]"
grep -A4 FAIL $L/pam.log | head -30
