#!/bin/sh
# tools/carry.sh [BUILD_DIR]: fill .carry/ (ignored by git) with what a device call needs from a
# build made here: the stripped libtilec.so.0.1 (+ the libtilec.so link), the CLI and every
# gpu_test_* binary, and the apache-tvm-ffi wheel when .whl/ holds one.  Then, on the device:
#   run command="sh bench/pending.sh .carry" carry=[".carry"]   (or tests/gpu/run.sh .carry/b)
set -eu
BUILD=${1:-build}
C=.carry; B=$C/b
rm -rf "$C"; mkdir -p "$B/tests"
strip -o "$B/libtilec.so.0.1" "$BUILD/libtilec.so.0.1"; ln -s libtilec.so.0.1 "$B/libtilec.so"
strip -o "$B/tilec" "$BUILD/tilec"
for t in "$BUILD"/tests/gpu_test_*; do strip -o "$B/tests/$(basename "$t")" "$t"; done
if ls .whl/apache_tvm_ffi-*.whl >/dev/null 2>&1; then mkdir -p "$C/whl"; cp .whl/apache_tvm_ffi-*.whl "$C/whl/"; fi
du -sh "$C"
