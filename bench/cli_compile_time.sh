#!/bin/sh
# bench/cli_compile_time.sh: the CLI's compile time of TMA files, two builds compared on the CPU (no
# device): hyperfine -N, ROUNDS rounds of 5 runs of each of three commands -- OLD's tilec, NEW's, NEW's
# with TILEC_CODEGEN_THREADS=1 -- interleaved, their order rotated per round (a shared machine's load
# drifts), for `tilec examples/F.tile --tma-fallback=entry|form -o X.ptx`; prints the medians of all
# runs and the mean CPU time (user + sys).  Twenty-fifth session, branch cthreads (bench/RESULTS.md).
#
#   sh bench/cli_compile_time.sh OLD_BUILD NEW_BUILD [ROUNDS] [FILES]
#
# OLD_BUILD / NEW_BUILD: build directories (their tilec runs on their own libtilec.so); a copy of a
# build works (LD_LIBRARY_PATH points each at its own directory).  FILES: example names (default
# "attn gemm gemm_fp8 attn_bwd").  Needs hyperfine and python3.
set -eu
old=$(cd "${1:?usage: sh bench/cli_compile_time.sh OLD_BUILD NEW_BUILD [ROUNDS] [FILES]}" && pwd)
new=$(cd "${2:?usage}" && pwd)
rounds=${3:-6}
files=${4:-"attn gemm gemm_fp8 attn_bwd"}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
B="env LD_LIBRARY_PATH=$old $old/tilec"
A="env LD_LIBRARY_PATH=$new $new/tilec"
S="env LD_LIBRARY_PATH=$new TILEC_CODEGEN_THREADS=1 $new/tilec"
uptime
r=1
while [ "$r" -le "$rounds" ]; do
  for f in $files; do
    for mode in entry form; do
      cb="$B $root/examples/$f.tile --tma-fallback=$mode -o $out/b.ptx"
      ca="$A $root/examples/$f.tile --tma-fallback=$mode -o $out/a.ptx"
      cs="$S $root/examples/$f.tile --tma-fallback=$mode -o $out/s.ptx"
      j="$out/$f.$mode.$r.json"
      case $((r % 3)) in
      1) hyperfine -N --warmup 1 --runs 5 --export-json "$j" -n before "$cb" -n after "$ca" -n serial "$cs" ;;
      2) hyperfine -N --warmup 1 --runs 5 --export-json "$j" -n after "$ca" -n serial "$cs" -n before "$cb" ;;
      *) hyperfine -N --warmup 1 --runs 5 --export-json "$j" -n serial "$cs" -n before "$cb" -n after "$ca" ;;
      esac >/dev/null 2>&1
    done
  done
  r=$((r + 1))
done
uptime
python3 - "$out" <<'PY'
import collections, glob, json, statistics, sys
t = collections.defaultdict(list); cpu = collections.defaultdict(list)
for f in glob.glob(sys.argv[1] + "/*.json"):
    name = f.split("/")[-1].rsplit(".", 2)[0]
    for r in json.load(open(f))["results"]:
        t[(name, r["command"])] += r["times"]
        cpu[(name, r["command"])].append(r["user"] + r["system"])
print("%-16s %20s %20s %20s" % ("file.mode", "old", "new", "new, THREADS=1"))
for name in sorted({k[0] for k in t}):
    m = {c: statistics.median(t[(name, c)]) * 1e3 for c in ("before", "after", "serial")}
    u = {c: statistics.mean(cpu[(name, c)]) * 1e3 for c in ("before", "after", "serial")}
    print("%-16s %7.1f ms (cpu %4.0f) %7.1f ms (cpu %4.0f) %7.1f ms (cpu %4.0f)  new/old %+4.0f %%  n=%d" % (
        name, m["before"], u["before"], m["after"], u["after"], m["serial"], u["serial"],
        (m["after"] / m["before"] - 1) * 100, len(t[(name, "before")])))
PY
rm -rf "$out"
