#!/bin/sh
# test.sh: the whole test suite, as CI runs it (.ci/run), on a fresh Debian 12:
#   1. install missing packages (tools/deps.sh --fuzz), then check that every file the build
#      links or runs from outside the tree is owned by a package deps.sh installs
#      (tools/check_deps.py --fuzz: a package installed by hand cannot hide here);
#   2. configure with -DTILEC_WERROR=ON -DTILEC_SANITIZE=ON (ASan + UBSan), build;
#   3. ctest --output-on-failure (GPU tests skip with 77 where there is no GPU);
#   4. the libFuzzer front-end fuzzer (clang-19) for $TILEC_FUZZ_SECONDS (60),
#      seeded with tests/fuzz/corpus and examples/: zero crashes;
#   5. the libFuzzer IR fuzzer (tl_parse_ir + the default pipeline) for
#      $TILEC_FUZZ_IR_SECONDS (30), seeded with tests/fuzz/ir_corpus: zero crashes;
#   6. the libFuzzer codegen fuzzer (generated kernels through the whole compiler
#      to PTX, and ptxas where installed) for $TILEC_FUZZ_CODEGEN_SECONDS (30),
#      seeded with tests/fuzz/codegen_corpus: zero crashes, zero internal errors;
#   7. the libFuzzer compile fuzzer (source text -> PTX under the opt-in code switches bytes 0-1
#      picks) for $TILEC_FUZZ_COMPILE_SECONDS (30), seeded with tests/fuzz/compile_corpus:
#      zero crashes, zero internal errors.
# Build trees: build-test/ and build-fuzz/ (override with TILEC_TEST_BUILD).
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
tools/deps.sh --fuzz
/usr/bin/python3 tools/check_deps.py --fuzz
jobs=${TILEC_JOBS:-$(nproc)}
build=${TILEC_TEST_BUILD:-$root/build-test}
fuzz_build=$build-fuzz
seconds=${TILEC_FUZZ_SECONDS:-60}
ir_seconds=${TILEC_FUZZ_IR_SECONDS:-30}
codegen_seconds=${TILEC_FUZZ_CODEGEN_SECONDS:-30}
compile_seconds=${TILEC_FUZZ_COMPILE_SECONDS:-30}

echo "== configure + build (Werror, ASan+UBSan): $build"
# Debian's python3 (deps.sh installs it): not whichever python3 is first on PATH.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILEC_WERROR=ON -DTILEC_SANITIZE=ON \
  -DPython3_EXECUTABLE=/usr/bin/python3
cmake --build "$build" -j "$jobs"

echo "== ctest"
# LLVM's static objects are not instrumented; leak checks stay on for tilec's own code.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest_rc=0
(cd "$build" && ctest --output-on-failure -j "$jobs") || ctest_rc=$?

echo "== fuzz the front-end for ${seconds}s"
CC=clang-19 CXX=clang++-19 cmake -S . -B "$fuzz_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTILEC_FUZZ=ON -DTILEC_TESTS=OFF >/dev/null
cmake --build "$fuzz_build" -j "$jobs" --target fuzz_frontend fuzz_ir fuzz_codegen fuzz_compile
# fuzz_run TARGET PREFIX SECONDS MAX_LEN TIMEOUT RSS_MB CORPUS...: one libFuzzer run; new inputs go
# to a fresh $fuzz_build/PREFIXcorpus-work (the checked-in corpora and examples/ are read only),
# crashes to $fuzz_build/PREFIX*; a crash stops the script (set -e).
fuzz_run() {
  target=$1 prefix=$2 secs=$3 max_len=$4 timeout=$5 rss=$6
  shift 6
  fuzz_work=$fuzz_build/${prefix}corpus-work
  rm -rf "$fuzz_work" && mkdir -p "$fuzz_work"
  "$fuzz_build/$target" -max_total_time="$secs" -max_len="$max_len" -timeout="$timeout" -rss_limit_mb="$rss" \
    -artifact_prefix="$fuzz_build/$prefix" -print_final_stats=1 "$fuzz_work" "$@"
}
set -- "$root/tests/fuzz/corpus"
[ -d "$root/examples" ] && set -- "$@" "$root/examples"
fuzz_run fuzz_frontend "" "$seconds" 8192 10 2048 "$@"
echo "== fuzz: no crashes in ${seconds}s"

echo "== fuzz the IR parser + pipeline for ${ir_seconds}s"
fuzz_run fuzz_ir ir- "$ir_seconds" 8192 10 2048 "$root/tests/fuzz/ir_corpus"
echo "== fuzz IR: no crashes in ${ir_seconds}s"

echo "== fuzz codegen (generated kernels -> PTX -> ptxas) for ${codegen_seconds}s"
fuzz_run fuzz_codegen codegen- "$codegen_seconds" 1024 60 3072 "$root/tests/fuzz/codegen_corpus"
echo "== fuzz codegen: no crashes in ${codegen_seconds}s"

echo "== fuzz compile (source -> PTX under the opt-in code switches) for ${compile_seconds}s"
fuzz_run fuzz_compile compile- "$compile_seconds" 16384 60 3072 "$root/tests/fuzz/compile_corpus"
echo "== fuzz compile: no crashes in ${compile_seconds}s"
if [ "$ctest_rc" -ne 0 ]; then
  echo "test.sh: FAILED: ctest failed (see above)"
  exit 1
fi
echo "test.sh: all passed"
