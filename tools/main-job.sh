#!/bin/sh
# main-job.sh: build tilec (Release), compile examples/attn.tile to PTX, and
# where an NVIDIA GPU is present run it and check it against the CPU
# interpreter (tilec run ... --device).  Installs missing packages first.
set -eu
cd "$(dirname "$0")/.."
tools/deps.sh
/usr/bin/python3 tools/check_deps.py
jobs=${TILEC_JOBS:-$(nproc)}
build=${TILEC_MAIN_BUILD:-build-main}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTILEC_TESTS=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target tilec-cli
tilec=$build/tilec

echo "== compile examples/attn.tile -> $build/attn.ptx"
"$tilec" examples/attn.tile --time-passes -o "$build/attn.ptx"
grep -m1 '^\.entry\|^\.visible \.entry' "$build/attn.ptx" || true
echo "ok: $(wc -l < "$build/attn.ptx") lines of PTX"

echo "== run on the GPU and compare with the interpreter"
set +e
# Ragged sequence length (S = 300 is not a multiple of the 128-row tiles).
"$tilec" run examples/attn.tile --device --size Z=1 --size H=2 --size S=300 \
  --scalar scale=0.08838834764831845 --seed 7
rc=$?
set -e
if [ $rc -eq 77 ]; then
  echo "main-job: no GPU here: compiled only (run skipped)"
  exit 0
fi
exit $rc
