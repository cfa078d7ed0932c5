#!/bin/sh
# tests/gpu/prologue_a.sh: every kernel of tests/prologue_a (GEMMs whose A is computed in the loop: README there) on the
# GPU against the interpreter (`tilec run --device`), the sizes of each kernel's `run:` line, for sm_90a with the
# A-fragment rule on (TILEC_PROLOGUE_A_FRAG=1: wgmma, A from registers) and off (=0, the default), on with two ring
# stages (--stages=2: two CTAs an SM where registers allow), and as sm_80 code.
# Fresh random data per run (TILEC_SEED=S reproduces).  PROLOGUE_A_FILES (default: tests/prologue_a/*.tile and more/*.tile, a
# new-user hunt's kernels) and PROLOGUE_A_CFGS (default: on off st2 sm80) narrow a run.
#   usage (repo root): tests/gpu/prologue_a.sh BUILD_DIR [--device|--interp]   (exit 0 all PASS, 1 a FAIL, 77 no GPU)
set -u
NAME=prologue_a.sh D=$(dirname "$0")/../prologue_a
. "$(dirname "$0")/corpus_run.sh"
for f in ${PROLOGUE_A_FILES:-"$D"/*.tile "$D"/more/*.tile}; do
  args=$(grep -m1 '^// run:' "$f" | sed 's/^\/\/ run: --kernel [a-z_0-9]* //')
  for k in $(grep -oE '^kernel [a-z_0-9]+' "$f" | cut -d' ' -f2); do
    for cfg in ${PROLOGUE_A_CFGS:-on off st2 sm80}; do
      case $cfg in on) env=TILEC_PROLOGUE_A_FRAG=1 arch= ;; off) env=TILEC_PROLOGUE_A_FRAG=0 arch= ;;
                   st2) env=TILEC_PROLOGUE_A_FRAG=1 arch=--stages=2 ;;
                   sm80) env=TILEC_PROLOGUE_A_FRAG=1 arch=--arch=sm_80 ;; esac
      corpus_run "$(basename "$f") $k $cfg" "$env" "$f" "$k" $arch $args
    done
  done
done
corpus_end
