#!/bin/sh
# check-lib.sh CHECK LIBRARY: properties of the shipped libtilec.so.
#   exports     every defined dynamic symbol is tilec_* (LLVM and tilec internals hidden)
#   soname      the library has a SONAME (libtilec.so.MAJOR.MINOR)
#   no-libllvm  no libLLVM at run time (LLVM is linked statically inside)
set -eu
check=$1 lib=$2
case $check in
exports)
  syms=$(nm -D --defined-only "$lib" | awk '{print $NF}')
  n=$(printf '%s\n' "$syms" | grep -c '^tilec_' || true)
  bad=$(printf '%s\n' "$syms" | grep -v '^tilec_' | grep -v '^$' || true)
  if [ -n "$bad" ]; then
    echo "FAIL: $lib exports symbols other than tilec_*:"; printf '%s\n' "$bad" | head -50; exit 1
  fi
  [ "$n" -ge 10 ] || { echo "FAIL: only $n tilec_* symbols exported"; exit 1; }
  echo "ok: $n symbols, all tilec_*" ;;
soname)
  so=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  case $so in
    libtilec.so.[0-9]*) echo "ok: SONAME $so" ;;
    *) echo "FAIL: SONAME is '$so'"; exit 1 ;;
  esac ;;
no-libllvm)
  deps=$(ldd "$lib")
  if printf '%s\n' "$deps" | grep -i 'llvm'; then echo "FAIL: $lib needs libLLVM at run time"; exit 1; fi
  [ "$(stat -c %s "$lib")" -gt 5000000 ] || { echo "FAIL: $lib is too small to hold LLVM"; exit 1; }
  echo "ok: no libLLVM dependency" ;;
*) echo "usage: check-lib.sh exports|soname|no-libllvm LIB"; exit 2 ;;
esac
