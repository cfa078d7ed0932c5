#!/bin/sh
# tests/gpu/lang_corners.sh: every kernel of tests/lang_corners (less-used corners of the language: integer edge
# cases, casts, literals and constant folding, gathers / scatters, atomics, rand, sorts / scans, axes and tile
# shapes, float math, loops, data movement, scalars, 8-bit floats; README there) on the GPU against the
# interpreter (`tilec run --device`) at two ragged sizes (kernels of fixed shapes: two sets of scalars, or once).
# python/tests/test_lang_corners.py checks the interpreter against NumPy on the same files.  Fresh random data
# per run (--seed; TILEC_SEED=S reproduces a run).  fp8 casts and comparisons, the f8e4m3 scalar parameter and
# bf16 atomics need sm_89 / sm_90: an H100 or H200.
#   usage (repo root): tests/gpu/lang_corners.sh BUILD_DIR [--device|--interp]
#     --device (the default): exit 0 all PASS, 1 a FAIL, 77 no GPU
#     --interp: the interpreter alone (no GPU needed: a dry run of the script, every kernel compiled and run)
set -u
B=${1:-build}
MODE=${2:---device}
T="$B/tilec"
D=$(dirname "$0")/../lang_corners
SEED=${TILEC_SEED:-$(date +%s)}
echo "lang_corners.sh: seed $SEED ($MODE)"
fail=0 n=0
one() { # FILE KERNEL ARGS...  (FILE: under tests/lang_corners, without .tile)
  f=$1 k=$2; shift 2
  out=$(timeout 120 "$T" run "$D/$f.tile" --kernel "$k" "$MODE" --seed "$SEED" "$@" 2>&1); rc=$?
  [ $rc = 77 ] && { echo "lang_corners.sh: no GPU"; exit 77; }
  n=$((n + 1))
  # --device: rc 0 must come with the kernel's PASS line
  if [ $rc = 0 ] && [ "$MODE" = --device ] && ! echo "$out" | grep -q "^$k: PASS"; then rc=1; fi
  if [ $rc != 0 ]; then fail=$((fail + 1)); echo "FAIL $f $k $* (rc $rc)"; echo "$out" | tail -5
  else echo "PASS $f $k $*"; fi
}
# int_ops, casts: elementwise, N ragged (tilec run's integers lie in [-8, 8]: divisors and shift amounts of 0,
# negative and >= the width of i8 come up)
for N in 37 1000; do
  for k in int32_ops int8_ops int16_ops int64_ops u8_ops; do one int_ops $k --size N=$N; done
  for k in cast_from_f32 cast_to_f32 cast_ints cast_small; do one casts $k --size N=$N; done
done
# literals
one literals const_fold --scalar a=-7 --scalar b=2
one literals const_fold --scalar a=-2147483648 --scalar b=-1
one literals const_casts
one literals runtime_casts --scalar m129=-129 --scalar k40000=40000 --scalar k256=256 --scalar big=4294967301
for N in 10 300; do
  one literals literal_convert --size N=$N
  one literals lit_adopt --size N=$N; done
# gathers and scatters (scatter2d is left out: its random indices name elements twice, whose result is unspecified
# on the GPU; scatter2d_strided's indices are distinct)
for sz in "5 7" "20 40"; do set -- $sz
  one gather_scatter gather2d --size R=$1 --size C=$2
  one gather_scatter scatter2d_strided --size R=$1 --size C=$2 --scalar si=-1 --scalar oi=3 --scalar sj=2 --scalar oj=-1
  one gather_scatter gather_idx_types --size R=$1 --size C=$2 --scalar r=2; done
one gather_scatter scatter2d_strided --size R=33 --size C=9 --scalar si=2 --scalar oi=-2 --scalar sj=-1 --scalar oj=8
one gather_scatter histogram --size N=100 --size NB=7
one gather_scatter histogram --size N=5000 --size NB=9
# atomics: f32 sums in another order (tilec run's f32 tolerance); f16 / bf16 sums of a few hundred values in
# another order differ by a few of their ulps at |sum| ~ 10: atol 0.25
for N in 33 1000; do
  one atomics atomics_all --size N=$N
  one atomics atomics_narrow --size N=$N --atol 0.25; done
one atomics atomics_scalar --size M=5 --scalar v=0.25 --scalar k=4
one atomics atomics_scalar --size M=40 --scalar v=-1.5 --scalar k=17
one atomics fetch_add_tickets --size P=7
one atomics fetch_add_tickets --size P=300
one atomics last_program --size N=100 --size NP=2
one atomics last_program --size N=4000 --size NP=64
for sz in "13 20 5" "300 33 3"; do set -- $sz
  one atomics scatter_rows --size N=$1 --size D=$2 --size NB=$3
  one atomics scatter_rows_bf16 --size N=$1 --size D=$2 --size NB=$3 --atol 0.25; done
# rand: bit for bit
one rng rng_all --size N=77 --scalar seed=12345
one rng rng_all --size N=1000 --scalar seed=-1
one rng rng_shapes --size R=5 --size C=13 --scalar seed=977 --scalar base=8589934597
one rng rng_shapes --size R=9 --size C=8 --scalar seed=-3 --scalar base=-1
one rng dropout --size R=3 --size C=200 --scalar p=0.3 --scalar seed=99
one rng dropout --size R=7 --size C=1000 --scalar p=0.1 --scalar seed=-5
# sorts and scans
for sz in "3 5" "6 40"; do set -- $sz
  one sort_scan sort_f32 --size R=$1 --size C=$2
  one sort_scan sort_cols --size R=$1 --size C=$2
  one sort_scan scans --size R=$1 --size C=$2; done
for C in 7 100; do
  one sort_scan sort_ints --size C=$C; done
for C in 9 64; do
  one sort_scan scans_narrow --size C=$C
  one sort_scan i64red --size C=$C; done
# axes and shapes
one shapes axes3 --size A=4 --size B=2 --size C=8
one shapes axes3 --size A=3 --size B=1 --size C=5
one shapes tiny --size R=1 --size C=1
one shapes tiny --size R=9 --size C=20
one shapes big_scan --size R=300 --size C=100
one shapes big_scan --size R=17 --size C=5
one shapes sort_chain --size R=32 --size C=32
one shapes sort_chain --size R=17 --size C=29
# float math (the GPU's approximate functions: within tilec run's f32 / f16 / bf16 tolerances)
for N in 37 1000; do
  one fmath fmath --size N=$N
  one fmath fmath16 --size N=$N; done
# loops
one loops loops --size R=2 --size C=40 --scalar lo=-3 --scalar hi=7 --scalar st=2
one loops loops --size R=3 --size C=16 --scalar lo=5 --scalar hi=2 --scalar st=3
one loops loop_const_bounds
one loops loop_trips --scalar lo=2147483640 --scalar hi=2147483647 --scalar st=5
one loops loop_trips --scalar lo=-2147483648 --scalar hi=2147483647 --scalar st=2147483647
# data movement
one movement move_types
one movement move_types --seed $((SEED + 1))
one movement where_mix --size N=20 --scalar s=2.5 --scalar k=5
one movement where_mix --size N=33 --scalar s=-1.0 --scalar k=1
# scalars (an all-index view in and out of range)
one scalars scalar_ld --size R=3 --size C=4 --scalar i=2 --scalar j=3
one scalars scalar_ld --size R=3 --size C=4 --scalar i=-1 --scalar j=4
one scalars scalar_params --scalar b=1.0039062509313226 --scalar h=1.0004882812509095 --scalar e=1.0625000000291038 --scalar f=0.1
one scalars scalar_params --scalar b=3.6e38 --scalar h=-65519.99 --scalar e=-500.0 --scalar f=1e-50
one scalars scalar_promo --scalar a8=-100 --scalar u=200 --scalar h=3.0 --scalar bb=0.1 --scalar n=7 --scalar x=2.5 --scalar big=1099511627779
one scalars scalar_promo --scalar a8=-1 --scalar u=255 --scalar h=-0.5 --scalar bb=-3.0 --scalar n=-9 --scalar x=-7.25 --scalar big=-5
# 8-bit floats
one fp8 f8ops --size N=300 --scalar s=0.5
one fp8 f8ops --size N=4097 --scalar s=-1.25
one fp8 f8_where --size N=100 --scalar c=17
one fp8 f8_where --size N=1000 --scalar c=70
echo "lang_corners.sh: $n run, $fail failed ($MODE)"
[ $fail = 0 ]
