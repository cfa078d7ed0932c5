#!/bin/sh
# Fill /work/main/.carry-prologue for the coordinator's GPU call (the prologue helper's branch):
# the stripped library and CLI, gpu_test_examples / gpu_test_alignment, this worktree's examples,
# bench, python module, the w4a16 GPU test and the prologue lit kernels.  Not part of CI.
set -eu
W=$(cd "$(dirname "$0")/.." && pwd); C=/work/main/.carry-prologue; B=$C/b
rm -rf "$C"; mkdir -p "$B/tests" "$C/tests/gpu" "$C/lit"
strip -o "$B/libtilec.so.0.1" "$W/build/libtilec.so.0.1.0"; ln -s libtilec.so.0.1 "$B/libtilec.so"
strip -o "$B/tilec" "$W/build/tilec"
for t in gpu_test_examples gpu_test_alignment; do strip -o "$B/tests/$t" "$W/build/tests/$t"; done
cp -r "$W/examples" "$W/bench" "$W/python" "$C/"
cp "$W/tests/gpu/test_w4a16.py" "$C/tests/gpu/"
cp "$W/tests/lit/codegen/prologue.tile" "$C/lit/"
cp "$W/tools/go-prologue.sh" "$C/go.sh"
du -sh "$C"
