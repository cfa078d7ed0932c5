# tests/gpu/corpus_run.sh: sourced by the corpus GPU scripts (multi_loop.sh, prologue_a.sh): one `tilec run` of a
# kernel against the interpreter, counted and reported.  Needs T (the tilec binary), MODE (--device | --interp), SEED,
# NAME (the script's name for messages) and the counters n, fail.
#   corpus_run LABEL ENV FILE KERNEL ARGS...   ENV: NAME=VALUE (or "-" for none) for the run's environment
# One line PASS / FAIL LABEL (FAIL: the output's last 4 lines under it); exit 77 at once where no GPU is found.
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
