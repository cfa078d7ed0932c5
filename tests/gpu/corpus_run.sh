# tests/gpu/corpus_run.sh: sourced by the corpus GPU scripts (multi_loop.sh, prologue_a.sh) after they set NAME (the
# script's name for messages); reads their $1 (the build folder, default build) and $2 (--device, the default, or
# --interp), sets B, T (the tilec binary), MODE, SEED (TILEC_SEED, else the time) and the counters n, fail.
#   corpus_run LABEL ENV FILE KERNEL ARGS...   ENV: NAME=VALUE (or "-" for none) for the run's environment
# One line PASS / FAIL LABEL (FAIL: the output's last 4 lines under it); exit 77 at once where no GPU is found.
#   corpus_end   the count line; exit status 0 when nothing failed
B=${1:-build}
MODE=${2:---device}
T=$B/tilec
SEED=${TILEC_SEED:-$(date +%s)}
echo "$NAME: seed $SEED ($MODE)"
fail=0 n=0
corpus_run() {
  _label=$1 _env=$2 _f=$3 _k=$4; shift 4
  [ "$_env" = - ] && _env=TILEC_CORPUS_RUN=1
  _out=$(env "$_env" timeout 120 "$T" run "$_f" --kernel "$_k" "$MODE" --seed "$SEED" "$@" 2>&1); _rc=$?
  [ $_rc = 77 ] && { echo "$NAME: no GPU"; exit 77; }
  n=$((n + 1))
  # --device: rc 0 must come with the kernel's PASS line
  if [ $_rc = 0 ] && [ "$MODE" = --device ] && ! echo "$_out" | grep -q "^$_k: PASS"; then _rc=1; fi
  if [ $_rc != 0 ]; then fail=$((fail + 1)); echo "FAIL $_label $* (rc $_rc)"; echo "$_out" | tail -4
  else echo "PASS $_label"; fi
}

corpus_end() {
  echo "$NAME: $n run, $fail failed ($MODE)"
  [ $fail = 0 ]
}
