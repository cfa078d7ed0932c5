# bench/pending_env.sh: the start every bench/pending_NAME.sh shares, sourced from the repository
# root as `. bench/pending_env.sh` (it reads the script's $1, the carried folder, default .carry):
# B, the carried build's b/ (or a build folder given instead); L, the logs' folder ($OUT, else
# /tmp/L); T0 and el (seconds since the start); the library on the loader path and for Python.
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
L=${OUT:-/tmp/L}
mkdir -p "$L"
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1
# attn_variants TAG WORDS LIMIT: gpu_test_examples on examples/attn.tile alone, only the attention variants whose
# switch or value contains one of WORDS (comma-separated; "default" the variant without switches), under LIMIT
# seconds; its log $L/ex.log, a line "examples rc ..." and its first FAILs printed.
attn_variants() {
  _p=/tmp/$1; mkdir -p $_p/ex; ln -sf "$(pwd)/examples/attn.tile" $_p/ex/
  GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=$2 TILEC_EXAMPLES="$(pwd)/examples" timeout -k 10 $3 \
    $B/tests/gpu_test_examples $_p/ex > $L/ex.log 2>&1; echo "examples rc $?: $(tail -1 $L/ex.log) [$(el) s]"
  grep -E "FAIL" $L/ex.log | head -5
}
# attn_runs VAR=VALUE [SIZES [GQA_CAUSAL]]: `tilec run --device` against the interpreter with the switch set, at each
# S of SIZES (default 1000 4097): attn.tile's D128 causal kernel (through its launch forms) and llama/attn_gqa.tile's
# GQA kernel (full, or causal with GQA_CAUSAL=1); a line each.
attn_runs() {
  _gc=${3:-0}; _gw=full; [ "$_gc" = 1 ] && _gw=causal
  for _s in ${2:-1000 4097}; do
    env "$1" TILEC_CACHE_DIR=/tmp/car$_s timeout -k 10 60 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd \
      -D D=128 -D CAUSAL=1 --size Z=2 --size H=3 --size S=$_s --scalar scale=0.0884 --device > $L/a$_s.log 2>&1
    echo "attn causal S$_s rc $?: $(grep -E 'PASS|FAIL' $L/a$_s.log | tr '\n' ' ' | cut -c1-100)"
    env "$1" TILEC_CACHE_DIR=/tmp/carg$_s timeout -k 10 60 $B/tilec run examples/llama/attn_gqa.tile --kernel cutlass_attn_gqa \
      -D D=128 -D CAUSAL=$_gc --size Z=2 --size H=4 --size HKV=1 --size S=$_s --scalar scale=0.0625 --device > $L/g$_s.log 2>&1
    echo "gqa $_gw S$_s rc $?: $(grep -E 'PASS|FAIL' $L/g$_s.log | tr '\n' ' ' | cut -c1-100)"
  done
}
# h200_only: print the card's name; on any card but an H200 exit 77 at once (the call cost only its start), unless
# H200_ANY=1 (then the script runs there too, its card named in its output).
h200_only() {
  _gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); echo "$_gpu"
  case "$_gpu" in *H200*) ;; *) [ -n "${H200_ANY:-}" ] || { echo "not an H200: nothing run (H200_ANY=1 runs it anyway)"; exit 77; };; esac
}
