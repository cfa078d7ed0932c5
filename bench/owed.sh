#!/bin/sh
# bench/owed.sh: several owed pending scripts in one device call, so a session pays one machine
# start for them.  Each script runs with $OUT set to /tmp/owed/NAME and its own time limit; a
# script whose limit no longer fits in the call's budget is skipped and named at the end, for the
# next call.  What each printed is kept in /tmp/owed/NAME.txt, its last lines printed again at the
# end, in order; everything comes back as one file, $OUT/owed.tgz (a call returns at most 8 files).
#   usage (device): run command="OWED='w4a16d:150 rope3:150' sh bench/owed.sh .carry" carry=[".carry"]
#   OWED: NAME:SECONDS ... for bench/pending_NAME.sh (SECONDS: that script's limit);
#   OWED_BUDGET: seconds for the whole call (default 570, under the 600 s a call may run).
set -u
CARRY=${1:-.carry}
BUDGET=${OWED_BUDGET:-570}
T0=$(date +%s)
TOP=/tmp/owed
mkdir -p "$TOP"
skipped=""
ran=""
for item in ${OWED:?OWED=NAME:SECONDS ... names the pending scripts}; do
  name=${item%%:*}
  limit=${item#*:}
  [ "$limit" = "$item" ] && limit=120
  script=bench/pending_$name.sh
  left=$((BUDGET - ($(date +%s) - T0)))
  if [ ! -f "$script" ]; then
    echo "== $name: no $script"
    skipped="$skipped $name(missing)"
    continue
  fi
  if [ "$limit" -gt "$left" ]; then
    echo "== $name: needs $limit s, $left s left: skipped"
    skipped="$skipped $name"
    continue
  fi
  echo "== $name ($limit s at most; $left s left) [$(($(date +%s) - T0)) s]"
  mkdir -p "$TOP/$name"
  OUT="$TOP/$name" timeout "$limit" sh "$script" "$CARRY" > "$TOP/$name.txt" 2>&1
  echo "exit $? [$(($(date +%s) - T0)) s]" >> "$TOP/$name.txt"
  ran="$ran $name"
done
for name in $ran; do
  echo
  echo "######## $name: the last 25 lines"
  tail -25 "$TOP/$name.txt"
done
[ -n "${OUT:-}" ] && tar czf "$OUT/owed.tgz" -C "$TOP" . 2>/dev/null
echo
echo "owed.sh: ran:$ran; skipped:${skipped:- none}; $(($(date +%s) - T0)) s"
