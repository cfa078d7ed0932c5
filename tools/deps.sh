#!/bin/sh
# deps.sh: install, with apt-get, the Debian 12 packages tilec needs that are
# missing (nothing is fetched when all are present).  Needs root or sudo.
#   tools/deps.sh [--fuzz]          install (--fuzz: also what the libFuzzer build needs)
#   tools/deps.sh --list [--fuzz]   print the package names only (tools/check_deps.py reads them)
# Installs with --no-install-recommends: a package that is only a Recommends of one named here
# (libclang-rt-19-dev is one of clang-19) must be named here itself.  tools/check_deps.py checks
# that every file the build links or runs is owned by a package reached from this list.
set -eu
list=0
fuzz=0
for a in "$@"; do
  case "$a" in
    --list) list=1 ;;
    --fuzz) fuzz=1 ;;
    *) echo "deps.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
# python3-numpy and python3-pytest: the Python package's tests (ctest -L python), run by Debian's
# /usr/bin/python3 (the build's Python3_EXECUTABLE, tools/test.sh).
pkgs="cmake make gcc g++ llvm-19-dev llvm-19-tools libcriterion-dev libdlpack-dev python3 python3-numpy python3-pytest zlib1g-dev libzstd-dev pkg-config binutils"
# clang-19 compiles the fuzzers; libclang-rt-19-dev has their runtimes (libclang_rt.fuzzer.a, asan, ubsan).
[ "$fuzz" = 1 ] && pkgs="$pkgs clang-19 libclang-rt-19-dev"
if [ "$list" = 1 ]; then echo $pkgs; exit 0; fi
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps.sh: installing:$missing"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
# All of them are in Debian 12 (bookworm) main since 12.10 (llvm-19, clang-19).
$sudo apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
