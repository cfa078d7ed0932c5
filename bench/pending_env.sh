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
