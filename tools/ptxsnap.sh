#!/bin/sh
# tools/ptxsnap.sh: the PTX of every example (examples/*.tile, examples/llama/*.tile) under the
# configurations earlier sessions compared before and after a compiler change (docs/codegen.md
# "Round 7".."Round 9"): sm_90a, sm_80, TILEC_WS=coop (sm_90a) and --pipeline=multistage (sm_90a).
# No GPU needed.
#
#   sh tools/ptxsnap.sh snap DIR [TILEC]     write DIR/<config>/<file>.ptx (TILEC: build/tilec)
#   sh tools/ptxsnap.sh diff OLD NEW         compare two snapshots: byte-identical, identical up to
#                                            register numbers (%r12 -> %r), or different; then,
#                                            where ptxas is found, the registers / spills of each
#                                            different file as ptxas -v reports them
#   sh tools/ptxsnap.sh sass OLD NEW         the files that are not byte-identical assembled by ptxas
#                                            (-O3) and disassembled by nvdisasm ($NVDISASM, PATH or
#                                            the CUDA toolkit): machine code identical or not (for a
#                                            PTX change that ptxas should not see: comments, the
#                                            grouping of inline asm, register numbers)
#
# Extra environment for the compiles: PTXSNAP_ENV="NAME=VALUE ..." (e.g. a switch measured on/off).
# A compile that fails writes DIR/<config>/<file>.err instead (compared like the PTX: the
# diagnostics must match too).
set -u
mode=${1:-}
case "$mode" in
snap)
  dir=${2:?usage: sh tools/ptxsnap.sh snap DIR [TILEC]}
  tilec=${3:-build/tilec}
  root=$(cd "$(dirname "$0")/.." && pwd)
  for cfg in sm90a sm80 ws multistage; do
    mkdir -p "$dir/$cfg"
    case $cfg in
    sm90a) args="--arch=sm_90a"; envs="" ;;
    sm80) args="--arch=sm_80"; envs="" ;;
    ws) args="--arch=sm_90a"; envs="TILEC_WS=coop" ;;
    multistage) args="--arch=sm_90a --pipeline=multistage"; envs="" ;;
    esac
    for f in "$root"/examples/*.tile "$root"/examples/llama/*.tile; do
      n=$(basename "$(dirname "$f")")_$(basename "$f" .tile)
      # shellcheck disable=SC2086
      if env ${PTXSNAP_ENV:-} $envs "$tilec" "$f" $args -o "$dir/$cfg/$n.ptx" 2>"$dir/$cfg/$n.err"; then
        rm -f "$dir/$cfg/$n.err"
      else
        rm -f "$dir/$cfg/$n.ptx"
        sed -i "s|$root/||g" "$dir/$cfg/$n.err"
      fi
    done
  done
  echo "ptxsnap: $(find "$dir" -name '*.ptx' | wc -l) PTX files, $(find "$dir" -name '*.err' | wc -l) failed compiles in $dir"
  ;;
diff)
  old=${2:?usage: sh tools/ptxsnap.sh diff OLD NEW}
  new=${3:?usage: sh tools/ptxsnap.sh diff OLD NEW}
  same=0 regs=0 differ=0
  ptxas=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
  renum() { sed -E 's/%(r|rd|f|fd|h|hh|p|rs|bf|b)[0-9]+/%\1/g' "$1"; }
  for a in $(cd "$old" && find . -type f \( -name '*.ptx' -o -name '*.err' \) | sort); do
    b="$new/$a"
    if [ ! -f "$b" ]; then echo "missing in $new: $a"; differ=$((differ + 1)); continue; fi
    if cmp -s "$old/$a" "$b"; then same=$((same + 1)); continue; fi
    if [ "$(renum "$old/$a" | md5sum)" = "$(renum "$b" | md5sum)" ]; then
      regs=$((regs + 1)); echo "registers renumbered: $a"; continue
    fi
    differ=$((differ + 1))
    line="differs: $a ($(wc -l <"$old/$a") -> $(wc -l <"$b") lines)"
    case "$a" in
    *.ptx)
      if [ -x "$ptxas" ]; then
        arch=$(sed -n 's/^\.target \([a-z0-9_]*\).*/\1/p' "$b" | head -1)
        ra=$("$ptxas" -arch="$arch" -v "$old/$a" -o /dev/null 2>&1 | sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' | tr '\n' ' ')
        rb=$("$ptxas" -arch="$arch" -v "$b" -o /dev/null 2>&1 | sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' | tr '\n' ' ')
        sa=$("$ptxas" -arch="$arch" -v "$old/$a" -o /dev/null 2>&1 | sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' | tr '\n' ' ')
        sb=$("$ptxas" -arch="$arch" -v "$b" -o /dev/null 2>&1 | sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' | tr '\n' ' ')
        line="$line; registers per entry [$ra] -> [$rb], spill stores [$sa] -> [$sb]"
      fi ;;
    esac
    echo "$line"
  done
  for b in $(cd "$new" && find . -type f \( -name '*.ptx' -o -name '*.err' \) | sort); do
    [ -f "$old/$b" ] || { echo "new in $new: $b"; differ=$((differ + 1)); }
  done
  echo "ptxsnap: $same byte-identical, $regs identical up to register numbers, $differ differ"
  [ "$differ" = 0 ]
  ;;
sass)
  old=${2:?usage: sh tools/ptxsnap.sh sass OLD NEW}
  new=${3:?usage: sh tools/ptxsnap.sh sass OLD NEW}
  ptxas=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
  nvd=${NVDISASM:-$(command -v nvdisasm || echo /usr/local/cuda/bin/nvdisasm)}
  [ -x "$ptxas" ] && [ -x "$nvd" ] || { echo "ptxsnap: sass needs ptxas and nvdisasm (NVDISASM=...)" >&2; exit 2; }
  t=$(mktemp -d)
  same=0 sass=0 differ=0
  # the instructions, without their addresses and encodings
  dis() { "$nvd" -c "$1" | sed -E 's@/\*[0-9a-f]{4,}\*/@@; s@/\*.*\*/@@; s@//.*@@' | grep -v '^[[:space:]]*$'; }
  for a in $(cd "$old" && find . -type f -name '*.ptx' | sort); do
    b="$new/$a"
    [ -f "$b" ] || { echo "missing in $new: $a"; differ=$((differ + 1)); continue; }
    if cmp -s "$old/$a" "$b"; then same=$((same + 1)); continue; fi
    arch=$(sed -n 's/^\.target \([a-z0-9_]*\).*/\1/p' "$b" | head -1)
    if "$ptxas" -arch="$arch" -O3 "$old/$a" -o "$t/a.cubin" 2>/dev/null && "$ptxas" -arch="$arch" -O3 "$b" -o "$t/b.cubin" 2>/dev/null &&
       [ "$(dis "$t/a.cubin" | md5sum)" = "$(dis "$t/b.cubin" | md5sum)" ]; then
      sass=$((sass + 1)); echo "same machine code: $a"
    else
      differ=$((differ + 1)); echo "machine code differs: $a ($(dis "$t/a.cubin" | wc -l) -> $(dis "$t/b.cubin" | wc -l) lines)"
    fi
  done
  rm -rf "$t"
  echo "ptxsnap: $same byte-identical PTX, $sass same machine code, $differ differ"
  [ "$differ" = 0 ]
  ;;
*)
  echo "usage: sh tools/ptxsnap.sh snap DIR [TILEC] | diff OLD NEW | sass OLD NEW" >&2
  exit 2 ;;
esac
