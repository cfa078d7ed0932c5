#!/bin/sh
# tests/gpu/rand_dot.sh: the random-number-in-dot-kernel tests of tests/rand_dot on the GPU against the interpreter.
# Every kernel reads random inputs (tilec run --seed 5) and uses rand / randn / randint in a kernel with a dot;
# since the thirty-seventh session their masks follow the accumulator's layout (TILEC_RAND_FOLLOW) and two lanes
# share a Philox block behind a vote.all (emit_random.c rand_lane_pairs).  Each cutlass_ kernel runs twice, with
# the default switches and with TILEC_RAND_FOLLOW=0; a few runs add TILEC_WS=coop / pingpong or
# TILEC_RAND_LANES=0.  One line a run (PASS / FAIL NAME ENV ARGS), a count last.
#   usage (from the repository root): sh tests/gpu/rand_dot.sh BUILD_DIR [--device|--interp]
#     --device (default): PASS needs "KERNEL: PASS" in the output; exit 0 all PASS, 1 a FAIL, 77 no GPU
#     --interp: the interpreter alone (a dry run: sizes and scalars checked, no GPU)
#     --ptx: compile each run's kernel for sm_90a only (--explain; its -D and switches, no sizes): vote.sync count,
#       threads, registers, spills
#   RAND_DOT_JOBS=N runs N at a time (default 4 with --device, 1 otherwise); outputs print in order.
#   RAND_DOT_VERBOSE=1 prints every run's output under its line.
set -u
B=${1:?usage: tests/gpu/rand_dot.sh BUILD_DIR [--device|--interp|--ptx]}
MODE=${2:---device}
T="$B/tilec"
D=tests/rand_dot
case "$MODE" in --device) JOBS=${RAND_DOT_JOBS:-4} ;; *) JOBS=${RAND_DOT_JOBS:-1} ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rand_dot.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
START=$(date +%s)
echo "rand_dot.sh: $T $MODE (jobs $JOBS)"
n=0 fail=0 nogpu=0 running=0 done_upto=0

# report the runs started so far (after a wait)
report() {
  i=$((done_upto + 1))
  while [ $i -le $n ]; do
    desc=$(cat "$TMP/$i.desc"); rc=$(cat "$TMP/$i.rc" 2>/dev/null || echo 255)
    k=$(cat "$TMP/$i.k")
    ok=1
    if [ "$rc" = 77 ] && [ "$MODE" = --device ]; then nogpu=1; i=$((i + 1)); continue; fi
    [ "$rc" != 0 ] && ok=0
    if [ "$MODE" = --device ] && ! grep -q "^$k: PASS" "$TMP/$i.out"; then ok=0; fi
    if [ $ok = 1 ]; then
      extra=; [ "$MODE" = --ptx ] && extra=" (vote.sync, resources: $(cat "$TMP/$i.votes"))"
      echo "PASS $desc$extra"
      [ "${RAND_DOT_VERBOSE:-0}" = 1 ] && sed 's/^/    /' "$TMP/$i.out"
    else
      fail=$((fail + 1)); echo "FAIL $desc (rc $rc)"; tail -6 "$TMP/$i.out" | sed 's/^/    /'
    fi
    i=$((i + 1))
  done
  done_upto=$n
}

# exec1 I ENV FILE KERNEL ARGS...: one run into $TMP/I.*
exec1() {
  i=$1 e=$2 f=$3 k=$4; shift 4
  if [ "$MODE" = --ptx ]; then
    defs=
    while [ $# -gt 0 ]; do case $1 in -D) defs="$defs -D $2"; shift 2 ;; *) shift ;; esac; done
    # shellcheck disable=SC2086
    env $e timeout 300 "$T" "$D/$f.tile" --arch=sm_90a --explain --kernel="$k" $defs -o "$TMP/$i.ptx" >"$TMP/$i.out" 2>&1
    rc=$?
    { grep -c 'vote.sync' "$TMP/$i.ptx"; grep '^resources' "$TMP/$i.out" | sed 's/.*: \([0-9]* threads, [0-9]* regs, [0-9]* B spills\).*/\1/'; } 2>/dev/null | tr '\n' ' ' >"$TMP/$i.votes"
    grep -q -i -E 'error|internal' "$TMP/$i.out" && rc=1
    echo $rc >"$TMP/$i.rc"
  else
    env $e timeout 300 "$T" run "$D/$f.tile" --kernel "$k" "$MODE" --seed 5 "$@" >"$TMP/$i.out" 2>&1
    echo $? >"$TMP/$i.rc"
  fi
}

# one ENV FILE KERNEL ARGS...  (ENV: "-" or VAR=VALUE[,VAR=VALUE]; FILE under tests/rand_dot, without .tile)
one() {
  e=$1 f=$2 k=$3; shift 3
  n=$((n + 1))
  [ "$e" = - ] && e= || e=$(echo "$e" | tr ',' ' ')
  echo "$f $k${e:+ [$e]} $*" >"$TMP/$n.desc"
  echo "$k" >"$TMP/$n.k"
  if [ "$JOBS" -le 1 ]; then exec1 $n "$e" "$f" "$k" "$@"; report
  else
    exec1 $n "$e" "$f" "$k" "$@" &
    running=$((running + 1))
    if [ $running -ge "$JOBS" ]; then wait; running=0; report; fi
  fi
  if [ $nogpu = 1 ]; then echo "rand_dot.sh: no GPU (exit 77)"; exit 77; fi
}
# cu FILE KERNEL ARGS...: the cutlass_ kernel with the default switches and with TILEC_RAND_FOLLOW=0
cu() { f=$1 k=$2; shift 2; one - "$f" "$k" "$@"; one TILEC_RAND_FOLLOW=0 "$f" "$k" "$@"; }

# --- GEMM epilogues ---
G="--scalar p=0.3 --scalar seed=-123"
cu gemm_drop_rm cutlass_gemm_drop_rm --size M=300 --size N=256 --size K=192 $G
cu gemm_drop_rm cutlass_gemm_drop_rm -D BM=64 -D BN=64 --size M=77 --size N=77 --size K=64 $G
cu gemm_drop_rm cutlass_gemm_drop_rm -D BM=128 -D BN=64 --size M=129 --size N=299 --size K=100 $G
cu gemm_drop_rm cutlass_gemm_drop_rm -D BM=64 -D BN=128 --size M=200 --size N=300 --size K=64 $G
one TILEC_WS=coop gemm_drop_rm cutlass_gemm_drop_rm --size M=300 --size N=256 --size K=192 $G
one TILEC_WS=pingpong gemm_drop_rm cutlass_gemm_drop_rm --size M=300 --size N=256 --size K=192 $G
one TILEC_RAND_LANES=0 gemm_drop_rm cutlass_gemm_drop_rm --size M=300 --size N=256 --size K=192 $G
one - gemm_drop_rm gemm_drop_rm --size M=300 --size N=256 --size K=192 $G
one - gemm_drop_rm gemm_drop_rm -D BM=64 -D BN=64 --size M=77 --size N=77 --size K=64 $G

G="--scalar p=0.25 --scalar seed=9"
cu gemm_drop_cm cutlass_linear_drop_cm --size M=200 --size N=136 --size K=96 $G
cu gemm_drop_cm cutlass_linear_drop_cm -D BM=64 -D BN=128 --size M=77 --size N=300 --size K=64 $G
one - gemm_drop_cm linear_drop_cm --size M=200 --size N=136 --size K=96 $G

G="--scalar p=0.4 --scalar seed=78187493520"
cu bmm_drop_base cutlass_bmm_drop_base --size Bt=3 --size M=150 --size N=128 --size K=80 $G --scalar off0=0
cu bmm_drop_base cutlass_bmm_drop_base --size Bt=3 --size M=150 --size N=128 --size K=80 $G --scalar off0=2
cu bmm_drop_base cutlass_bmm_drop_base -D BM=64 --size Bt=2 --size M=64 --size N=97 --size K=64 $G --scalar off0=5
one - bmm_drop_base bmm_drop_base --size Bt=3 --size M=150 --size N=128 --size K=80 $G --scalar off0=0

G="--scalar p=0.5 --scalar seed=7"
cu gemm_drop_shift cutlass_gemm_drop_shift --size M=256 --size N=256 --size K=128 --size NB=2 $G
cu gemm_drop_shift cutlass_gemm_drop_shift -D BM=64 -D BN=64 --size M=100 --size N=77 --size K=64 --size NB=2 $G
one - gemm_drop_shift gemm_drop_shift --size M=256 --size N=256 --size K=128 --size NB=2 $G

G="--scalar seed=31 --scalar seed2=-5"
cu igemm_randint cutlass_igemm_randint --size M=192 --size N=256 --size K=128 $G
cu igemm_randint cutlass_igemm_randint -D BM=64 -D BN=128 --size M=77 --size N=131 --size K=64 $G
one - igemm_randint igemm_randint --size M=192 --size N=256 --size K=128 $G

G="--scalar sigma=0.5 --scalar seed=2024"
cu gemm_randn cutlass_gemm_randn --size M=128 --size N=192 --size K=64 $G
cu gemm_randn cutlass_gemm_randn -D BN=64 --size M=99 --size N=77 --size K=48 $G
one - gemm_randn gemm_randn --size M=128 --size N=192 --size K=64 $G

G="--scalar p_in=0.1 --scalar p_out=0.2 --scalar seed=11"
cu gemm_drop_inout cutlass_gemm_drop_inout --size M=256 --size N=128 --size K=192 $G
one - gemm_drop_inout gemm_drop_inout --size M=77 --size N=100 --size K=72 $G

G="--scalar seed=-41"
cu gemm_drop_rowp cutlass_gemm_drop_rowp --size M=256 --size N=192 --size K=64 $G
cu gemm_drop_rowp cutlass_gemm_drop_rowp -D BM=64 -D BN=128 --size M=65 --size N=130 --size K=80 $G
one - gemm_drop_rowp gemm_drop_rowp --size M=256 --size N=192 --size K=64 $G

G="--scalar p=0.2 --scalar seed=5"
cu gemm_drop_bcast cutlass_gemm_drop_bcast --size M=200 --size N=264 --size K=64 $G
cu gemm_drop_bcast cutlass_gemm_drop_bcast -D BM=64 -D BN=64 --size M=64 --size N=63 --size K=32 $G
one - gemm_drop_bcast gemm_drop_bcast --size M=200 --size N=264 --size K=64 $G

G="--scalar p=0.3 --scalar seed=3"
cu gemm_drop_gather cutlass_gemm_drop_gather --size M=130 --size N=128 --size K=64 --size T=50 $G
cu gemm_drop_gather cutlass_gemm_drop_gather -D BN=64 --size M=64 --size N=77 --size K=96 --size T=300 $G
one - gemm_drop_gather gemm_drop_gather --size M=130 --size N=128 --size K=64 --size T=50 $G

G="--scalar p=0.2 --scalar seed=8"
# (Y is f32 from the bf16 hidden tile: where the GPU's and the interpreter's f32 sums of X W1 round to neighbouring
# bf16 values, Y moves by a bf16 ulp of h times W2's row -- H100: 44 of 51 200 elements up to 7.8e-3 at tilec run's f32
# 1e-4, the plain kernel and either mask layout alike; Hd, the masked hidden tile, passed at bf16 tolerances)
cu mlp_drop cutlass_mlp_drop --size M=200 --size K=128 --size N=256 --size H=64 $G --atol 0.02 --rtol 0.02
cu mlp_drop cutlass_mlp_drop -D BH=128 --size M=77 --size K=64 --size N=96 --size H=128 $G --atol 0.02 --rtol 0.02
one - mlp_drop mlp_drop --size M=200 --size K=128 --size N=256 --size H=64 $G --atol 0.02 --rtol 0.02

G="--scalar p=0.15 --scalar seed=21"
cu gemm_two_loops cutlass_gemm_two_loops --size M=150 --size N=128 --size K1=128 --size K2=64 $G
cu gemm_two_loops cutlass_gemm_two_loops -D BM=64 -D BN=128 --size M=64 --size N=100 --size K1=50 --size K2=200 $G
one - gemm_two_loops gemm_two_loops --size M=150 --size N=128 --size K1=128 --size K2=64 $G

G="--scalar p=0.1 --scalar seed=99999999999"
cu linear_drop_res cutlass_linear_drop_res --size M=256 --size N=256 --size K=128 $G
cu linear_drop_res cutlass_linear_drop_res -D BN=256 --size M=256 --size N=256 --size K=128 $G
cu linear_drop_res cutlass_linear_drop_res --size M=100 --size N=300 --size K=64 $G
one TILEC_WS=coop linear_drop_res cutlass_linear_drop_res --size M=256 --size N=256 --size K=128 $G
one - linear_drop_res linear_drop_res --size M=256 --size N=256 --size K=128 $G

# --- attention ---
A="--scalar scale=0.1 --scalar pdrop=0.2"
cu attn_drop_rows cutlass_attn_drop_rows --size Z=2 --size H=2 --size S=256 $A --scalar seed=-77 --scalar off0=0
cu attn_drop_rows cutlass_attn_drop_rows -D D=128 --size Z=2 --size H=2 --size S=300 $A --scalar seed=77 --scalar off0=1
cu attn_drop_rows cutlass_attn_drop_rows -D CAUSAL=0 -D BN=128 --size Z=2 --size H=2 --size S=77 $A --scalar seed=77 --scalar off0=0
cu attn_drop_rows cutlass_attn_drop_rows -D D=128 -D BN=128 -D CAUSAL=0 --size Z=1 --size H=2 --size S=256 $A --scalar seed=4294967297 --scalar off0=4
one - attn_drop_rows attn_drop_rows --size Z=2 --size H=2 --size S=256 $A --scalar seed=-77 --scalar off0=0

cu attn_drop_cols cutlass_attn_drop_cols --size Z=1 --size H=3 --size S=100 $A --scalar seed=-12
cu attn_drop_cols cutlass_attn_drop_cols -D CAUSAL=1 -D D=128 -D BN=64 --size Z=1 --size H=3 --size S=300 $A --scalar seed=-12
one - attn_drop_cols attn_drop_cols --size Z=1 --size H=3 --size S=256 $A --scalar seed=-12

cu attn_bwd_dq_drop cutlass_attn_bwd_dq_drop --size Z=1 --size H=2 --size S=192 $A --scalar seed=-1234
cu attn_bwd_dq_drop cutlass_attn_bwd_dq_drop -D CAUSAL=1 -D D=128 --size Z=1 --size H=2 --size S=300 $A --scalar seed=-1234
cu attn_bwd_dq_drop cutlass_attn_bwd_dq_drop -D KEYMAJOR=1 --size Z=1 --size H=2 --size S=100 $A --scalar seed=-1234
one - attn_bwd_dq_drop attn_bwd_dq_drop --size Z=1 --size H=2 --size S=300 $A --scalar seed=-1234

cu attn_bwd_dkdv_drop cutlass_attn_bwd_dkdv_drop --size Z=1 --size H=2 --size S=192 $A --scalar seed=-1234
cu attn_bwd_dkdv_drop cutlass_attn_bwd_dkdv_drop -D KEYMAJOR=1 -D CAUSAL=1 --size Z=1 --size H=2 --size S=300 $A --scalar seed=-1234
cu attn_bwd_dkdv_drop cutlass_attn_bwd_dkdv_drop -D D=128 -D KEYMAJOR=1 --size Z=1 --size H=2 --size S=256 $A --scalar seed=-1234
one - attn_bwd_dkdv_drop attn_bwd_dkdv_drop --size Z=1 --size H=2 --size S=300 $A --scalar seed=-1234

N="--scalar scale=0.1 --scalar sigma=0.5 --scalar thr=16384 --scalar seed=606"
cu attn_noise cutlass_attn_noise --size Z=2 --size H=1 --size S=256 $N
cu attn_noise cutlass_attn_noise -D CAUSAL=1 -D D=128 --size Z=2 --size H=1 --size S=300 $N
cu attn_noise cutlass_attn_noise -D BN=128 --size Z=2 --size H=1 --size S=80 $N
cu attn_noise cutlass_attn_noise -D BITSUM=0 --size Z=2 --size H=1 --size S=256 $N
cu attn_noise cutlass_attn_noise -D BITSUM=0 -D CAUSAL=1 -D D=128 --size Z=2 --size H=1 --size S=300 $N
one - attn_noise attn_noise --size Z=2 --size H=1 --size S=256 $N

cu attn_twoloop_drop cutlass_attn_twoloop_drop --size Z=1 --size H=2 --size S=300 $A --scalar seed=5
cu attn_twoloop_drop cutlass_attn_twoloop_drop -D D=128 --size Z=1 --size H=2 --size S=129 $A --scalar seed=5
cu attn_twoloop_drop cutlass_attn_twoloop_drop --size Z=1 --size H=2 --size S=1 $A --scalar seed=5
one - attn_twoloop_drop attn_twoloop_drop --size Z=1 --size H=2 --size S=256 $A --scalar seed=5

cu attn_drop_stride cutlass_attn_drop_stride --size Z=1 --size H=2 --size S=300 $A --scalar seed=8 --scalar rs=300 --scalar off0=0
cu attn_drop_stride cutlass_attn_drop_stride --size Z=1 --size H=2 --size S=300 $A --scalar seed=8 --scalar rs=301 --scalar off0=0
cu attn_drop_stride cutlass_attn_drop_stride -D D=128 -D BN=64 --size Z=1 --size H=2 --size S=200 $A --scalar seed=8 --scalar rs=304 --scalar off0=3
one - attn_drop_stride attn_drop_stride --size Z=1 --size H=2 --size S=300 $A --scalar seed=8 --scalar rs=301 --scalar off0=0

V="--scalar scale=0.1 --scalar pk=0.1 --scalar pdrop=0.2 --scalar pv=0.1 --scalar seed=44"
cu attn_drop_vkey cutlass_attn_drop_vkey --size Z=1 --size H=2 --size S=256 $V
cu attn_drop_vkey cutlass_attn_drop_vkey -D D=128 --size Z=1 --size H=2 --size S=300 $V
one - attn_drop_vkey attn_drop_vkey --size Z=1 --size H=2 --size S=96 $V

# --- no dot: i64 offsets take the lane-pair path in a blocked layout ---
R="--scalar p=0.3 --scalar seed=-3"
one - rand_i64_nodot drop_i64 --size R=37 --size C=300 $R --scalar off0=0
one - rand_i64_nodot drop_i64 --size R=37 --size C=299 $R --scalar off0=4294967299
one TILEC_RAND_LANES=0 rand_i64_nodot drop_i64 --size R=37 --size C=300 $R --scalar off0=0

wait; report
echo "rand_dot.sh: $((n - fail)) of $n PASS, $fail FAIL ($(( $(date +%s) - START )) s)"
[ $fail = 0 ]
