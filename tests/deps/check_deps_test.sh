#!/bin/sh
# The guard of tools/check_deps.py can fail: with the real package list it passes, and with each
# package it needs left out of tools/deps.sh it fails, naming that package.  Skips (77) where
# there is no dpkg (not a Debian machine).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v dpkg-query >/dev/null 2>&1 || { echo "no dpkg: skipped"; exit 77; }
py=/usr/bin/python3
fuzz=""
dpkg-query -W -f='${db:Status-Status}' clang-19 2>/dev/null | grep -q '^installed' && fuzz=--fuzz
out=$("$py" "$root/tools/check_deps.py" $fuzz 2>&1) || { echo "$out"; echo "FAIL: the guard fails with the real list"; exit 1; }
fails=0
checked=0
for pkg in llvm-19-dev libcriterion-dev libdlpack-dev ${fuzz:+libclang-rt-19-dev}; do
  checked=$((checked + 1))
  out=$("$py" "$root/tools/check_deps.py" $fuzz --omit "$pkg" 2>&1)
  rc=$?
  if [ $rc -ne 1 ] || ! printf '%s\n' "$out" | grep -q "add $pkg to tools/deps.sh"; then
    echo "$out"; echo "FAIL: leaving $pkg out of tools/deps.sh was not caught (exit $rc)"; fails=$((fails + 1))
  else
    echo "ok: leaving $pkg out fails: $(printf '%s\n' "$out" | grep -m1 "add $pkg")"
  fi
done
echo "$((checked - fails)) passed, $fails failed"
[ $fails -eq 0 ]
