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
