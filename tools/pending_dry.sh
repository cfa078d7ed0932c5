#!/bin/sh
# tools/pending_dry.sh NAME:SECONDS ...: the owed pending scripts run on this machine, without a GPU,
# through bench/owed.sh (as the device call runs them) on the fake driver (tests/fakecuda, target
# fakecuda_gpu: a libcuda.so.1 beside the carried library).  Every gpu_test_* and `tilec run --device`
# then compiles, loads and runs its interpreter for real and FAILs its comparisons (launches compute
# nothing); the Python tests skip (77) without torch, bench.py stops at its import; nvidia-smi and
# compute-sanitizer are stubs (the sanitizer runs its command).  What it finds before a device call
# does: a script that does not reach its table, a bad usage (exit 2), a missing file or command
# (127), a flag a tool does not take, and the time the CPU parts take (a limit too short for the
# interpreter).  NAME "pending" runs bench/pending.sh itself (PENDING_STEPS as set).
#   here: sh tools/carry.sh build && cmake --build build --target fakecuda_gpu &&
#         sh tools/pending_dry.sh order18:200 archtile:150 ...
set -u
BUILD=${BUILD:-build}
FAKE=$BUILD/tests/fakecuda-gpu/libcuda.so.1
[ -f "$FAKE" ] || { echo "no $FAKE: cmake --build $BUILD --target fakecuda_gpu"; exit 2; }
[ -d .carry/b ] || { echo "no .carry/b: sh tools/carry.sh $BUILD"; exit 2; }
D=${DRY_DIR:-/tmp/pending_dry.$$}
mkdir -p "$D/carry/b/tests" "$D/bin" "$D/out"
for f in .carry/b/*; do [ -d "$f" ] || ln -sf "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$D/carry/b/"; done
for f in .carry/b/tests/*; do ln -sf "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$D/carry/b/tests/"; done
ln -sf "$(cd "$(dirname "$FAKE")" && pwd)/libcuda.so.1" "$D/carry/b/libcuda.so.1"
cat > "$D/bin/nvidia-smi" << 'EOF'
#!/bin/sh
echo "fake GPU (tools/pending_dry.sh), 0, 0 MHz"
EOF
cat > "$D/bin/compute-sanitizer" << 'EOF'
#!/bin/sh
# (the dry run's stub: the options dropped, the command run, no checking)
while [ $# -gt 0 ]; do
  case "$1" in --tool|--print-limit|--log-file) shift 2 ;; -*) shift ;; *) break ;; esac
done
"$@"; rc=$?
echo "========= ERROR SUMMARY: 0 errors (dry-run stub: nothing checked)"
exit $rc
EOF
chmod +x "$D/bin/nvidia-smi" "$D/bin/compute-sanitizer"
export PATH="$D/bin:$PATH"
items=""
trap 'rm -f bench/pending_dryfull.sh' EXIT INT TERM
for it in "$@"; do
  case "$it" in
  pending|pending:*)  # bench/pending.sh itself, through a one-line wrapper owed.sh can name
    printf '#!/bin/sh\nexec sh bench/pending.sh "$@"\n' > bench/pending_dryfull.sh
    items="$items dryfull:${it#pending:}" ;;
  *) items="$items $it" ;;
  esac
done
OUT=$D/out OWED_TAIL=${OWED_TAIL:-12} OWED_BUDGET=${OWED_BUDGET:-100000} OWED="$items" sh bench/owed.sh "$D/carry"
echo
echo "######## pending_dry: what looks like a script bug (logs: $D/out/owed.tgz)"
mkdir -p "$D/logs" && tar xzf "$D/out/owed.tgz" -C "$D/logs"
grep -rnE "exit 2\b|rc 2\b|rc 127|exit 127|[Uu]sage:|unrecognized|invalid option|[Nn]o such file|not found|[Ee]rror: unknown|syntax error|unexpected|bad substitution" \
  "$D/logs" 2> /dev/null | grep -vE "no torch|libcuda|ModuleNotFoundError: No module named '(torch|triton|numpy)'" | cut -c1-220 | head -60
