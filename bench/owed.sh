#!/bin/sh
# bench/owed.sh: several owed pending scripts in one device call, so a session pays one machine
# start for them.  Each script runs with $OUT set to /tmp/owed.T.PID/NAME, in a process session of its own
# (setsid), under its own time limit; at the limit, or when it ends, every process left in that
# session is killed (TERM, then KILL after 10 s) -- the inner `timeout`s' process groups and orphaned
# children too, so a hung kernel's process cannot run on into the next script.  A script whose limit
# (+ 15 s for the kill) no longer fits in the call's budget is skipped and named at the end.
# What each printed is kept in that folder's NAME.txt; its last lines are printed as soon as it ends,
# and $OUT/owed.tgz (everything, a call returns at most 8 files) and $OUT/owed_summary.txt (a line a
# script) are rewritten after each script and every 30 s during one, so a call cut short (the 600 s
# limit, a lost machine) still returns what ran.
#   usage (device): run command="OWED='w4a16d:150 rope3:150' sh bench/owed.sh .carry" carry=[".carry"]
#   OWED: NAME:SECONDS ... for bench/pending_NAME.sh (SECONDS: that script's limit);
#   OWED_BUDGET: seconds for the whole call (default 570, under the 600 s a call may run);
#   OWED_TAIL: lines of each script's output printed when it ends (default 20).
set -u
CARRY=${1:-.carry}
BUDGET=${OWED_BUDGET:-570}
TAIL=${OWED_TAIL:-20}
T0=$(date +%s)
TOP=/tmp/owed.$T0.$$  # (a warm machine keeps /tmp between calls: this call's logs alone)
mkdir -p "$TOP"
el() { echo $(($(date +%s) - T0)); }
SETSID=
if command -v setsid > /dev/null 2>&1; then
  SETSID=setsid
  setsid -w true > /dev/null 2>&1 && SETSID="setsid -w"
fi
summary=""
skipped=""
ran=""

# The state of process $1 (R, S, D, Z, ...), empty when it is gone.
pstate() {
  { read -r _l < "/proc/$1/stat"; } 2> /dev/null || return 0
  _l=${_l##*) }
  echo "${_l%% *}"
}

# The live processes of session $1 (/proc/PID/stat after the command: state ppid pgrp session).
members() {
  for _f in /proc/[0-9]*/stat; do
    { read -r _l < "$_f"; } 2> /dev/null || continue
    _l=${_l##*) }
    # shellcheck disable=SC2086
    set -- $_l
    [ "${4:-}" = "$sid" ] && [ "$1" != Z ] && { _p=${_f#/proc/}; echo "${_p%/stat}"; }
  done
}

# Every process left in session $sid: TERM, up to 10 s for them to go, then KILL.  Prints how many.
kill_session() {
  left=$(members)
  [ -n "$left" ] || { echo 0; return; }
  n=$(echo "$left" | wc -l)
  # shellcheck disable=SC2086
  kill -TERM $left 2> /dev/null
  i=0
  while [ $i -lt 10 ] && [ -n "$(members)" ]; do sleep 1; i=$((i + 1)); done
  left=$(members)
  # shellcheck disable=SC2086
  [ -n "$left" ] && kill -KILL $left 2> /dev/null
  echo "$n"
}

save() { # the logs so far to $OUT
  [ -n "${OUT:-}" ] || return 0
  mkdir -p "$OUT"
  printf '%s' "$summary" > "$OUT/owed_summary.txt"
  tar czf "$OUT/owed.tgz.part" -C "$TOP" . 2> /dev/null && mv "$OUT/owed.tgz.part" "$OUT/owed.tgz"
}

for item in ${OWED:?OWED=NAME:SECONDS ... names the pending scripts}; do
  name=${item%%:*}
  limit=${item#*:}
  [ "$limit" = "$item" ] && limit=120
  script=bench/pending_$name.sh
  left=$((BUDGET - $(el)))
  if [ ! -f "$script" ]; then
    echo "== $name: no $script"
    skipped="$skipped $name(missing)"
    continue
  fi
  if [ $((limit + 15)) -gt "$left" ]; then
    echo "== $name: needs $limit s (+ 15 s), $left s left: skipped"
    skipped="$skipped $name"
    continue
  fi
  echo "== $name ($limit s at most; $left s left) [$(el) s]"
  mkdir -p "$TOP/$name"
  log=$TOP/$name.txt
  pf=$TOP/$name.pid
  rm -f "$pf"
  s0=$(date +%s)
  # shellcheck disable=SC2016
  OUT="$TOP/$name" $SETSID sh -c 'echo $$ > "$0"; exec sh "$1" "$2"' "$pf" "$script" "$CARRY" > "$log" 2>&1 &
  bg=$!
  i=0
  while [ ! -s "$pf" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  sid=$(cat "$pf" 2> /dev/null)
  [ -n "$sid" ] || sid=$bg
  to=""
  next=$((s0 + 30))
  while :; do
    st=$(pstate "$sid")
    { [ -z "$st" ] || [ "$st" = Z ]; } && break
    if [ $(($(date +%s) - s0)) -ge "$limit" ]; then
      to=" (time limit: killed)"
      break
    fi
    sleep 1
    if [ "$(date +%s)" -ge "$next" ]; then save; next=$((next + 30)); fi
  done
  # (with no setsid the script shares this session: only its own process is stopped)
  if [ -n "$SETSID" ]; then
    [ -n "$to" ] && kill -TERM "$sid" 2> /dev/null
    nk=$(kill_session)
  else
    [ -n "$to" ] && kill -TERM "$bg" 2> /dev/null
    nk=0
  fi
  wait "$bg"
  rc=$?
  [ "$nk" -gt 0 ] && to="$to ($nk processes left in its session killed)"
  line="$name: exit $rc, $(($(date +%s) - s0)) s of $limit$to [$(el) s]"
  echo "$line" >> "$log"
  summary="$summary$line
"
  ran="$ran $name"
  echo "######## $line; its last $TAIL lines:"
  tail -n "$TAIL" "$log"
  save
done
echo
echo "######## owed.sh: ran:${ran:- none}; skipped:${skipped:- none}; $(el) s of $BUDGET"
printf '%s' "$summary"
save
