# bench/ncu_env.sh: the start bench/ncu_attn.sh, ncu_rope.sh and ncu_rows.sh share, sourced from the repository root
# as `. bench/ncu_env.sh` (it reads the script's $1, the build folder, default build): BUILD, the library on the
# loader path, OUTDIR ($OUT, else /tmp), NCU (exit 77 without it), and the metric lists of bench/ncu_metrics.sh.
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 2
export LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUTDIR=${OUT:-/tmp}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null) || { echo "ncu not found"; exit 77; }
. bench/ncu_metrics.sh
