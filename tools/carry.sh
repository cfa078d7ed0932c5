#!/bin/sh
# tools/carry.sh [BUILD_DIR]: fill .carry/ (ignored by git) with what a device call needs from a
# build made here: the stripped libtilec.so.0.1 (+ the libtilec.so link), the CLI, every
# gpu_test_* binary and bench/launch_overhead, the apache-tvm-ffi wheel when .whl/ holds one, and OLD_LIB_XZ (an earlier
# stripped libtilec.so.0.1, xz-compressed, to show a test failing before a fix).  Then, on the device:
#   run command="sh bench/pending.sh .carry" carry=[".carry"]   (or tests/gpu/run.sh .carry/b)
set -eu
BUILD=${1:-build}
C=.carry; B=$C/b
rm -rf "$C"; mkdir -p "$B/tests"
strip -o "$B/libtilec.so.0.1" "$BUILD/libtilec.so.0.1"; ln -s libtilec.so.0.1 "$B/libtilec.so"
strip -o "$B/tilec" "$BUILD/tilec"
for t in "$BUILD"/tests/gpu_test_*; do strip -o "$B/tests/$(basename "$t")" "$t"; done
if [ -x "$BUILD/bench/launch_overhead" ]; then strip -o "$B/launch_overhead" "$BUILD/bench/launch_overhead"; fi
if [ -n "${OLD_LIB_XZ:-}" ]; then mkdir -p "$C/old"; cp "$OLD_LIB_XZ" "$C/old/libtilec.so.0.1.xz"; fi  # an earlier library, xz'd
if ls .whl/apache_tvm_ffi-*.whl >/dev/null 2>&1; then mkdir -p "$C/whl"; cp .whl/apache_tvm_ffi-*.whl "$C/whl/"; fi
du -sh "$C"
