#!/bin/sh
# tests/gpu/multi_loop.sh: every kernel of tests/multi_loop (README there: multi-loop and other unusual structures) on
# the GPU against the interpreter (`tilec run --device`), the sizes of each file's second line, for sm_90a (the card's
# default) and as sm_80 code (cp.async rings, mma.sync).  Fresh random data per run (TILEC_SEED=S reproduces).
#   usage (repo root): tests/gpu/multi_loop.sh BUILD_DIR [--device|--interp]   (exit 0 all PASS, 1 a FAIL, 77 no GPU)
set -u
NAME=multi_loop.sh D=$(dirname "$0")/../multi_loop
. "$(dirname "$0")/corpus_run.sh"
for f in "$D"/*.tile; do
  args=$(sed -n 2p "$f" | sed 's/^.*--kernel [a-z_0-9]* //; s/ *(.*$//')
  for k in $(grep -oE '^kernel [a-z_0-9]+' "$f" | cut -d' ' -f2); do
    for arch in "" --arch=sm_80; do
      corpus_run "$(basename "$f") $k $arch" - "$f" "$k" $arch $args
    done
  done
done
corpus_end
