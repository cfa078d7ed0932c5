#!/bin/sh
# run.sh BUILD_DIR WORK_DIR CC: install tilec into a temporary prefix, then
# build and run the consumer in this directory twice: with find_package(tilec)
# and with pkg-config (tilec.pc).
set -eu
build=$1 work=$2 cc=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(dirname "$(find "$prefix" -name 'libtilec.so' | head -1)")
[ -f "$prefix/include/tilec.h" ] || { echo "FAIL: tilec.h not installed"; exit 1; }
[ -f "$libdir/pkgconfig/tilec.pc" ] || { echo "FAIL: tilec.pc not installed"; exit 1; }

# A sanitizer build of the library needs its runtime first in the consumer too.
san=""
if readelf -d "$libdir/libtilec.so" | grep -q 'libasan'; then san="-fsanitize=address,undefined"; fi

# 1. CMake: find_package(tilec CONFIG)
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_C_FLAGS="$san" >"$work/configure.log"
cmake --build "$work/cmake-build" >"$work/build.log"
LD_LIBRARY_PATH=$libdir "$work/cmake-build/consumer"

# 2. pkg-config; the .pc file must point into the prefix it was installed in
PKG_CONFIG_PATH=$libdir/pkgconfig
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs tilec)
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Werror $san -o "$work/consumer-pc" "$here/consumer.c" $flags
LD_LIBRARY_PATH=$libdir "$work/consumer-pc"
echo "ok: installed tilec works through find_package and pkg-config"
