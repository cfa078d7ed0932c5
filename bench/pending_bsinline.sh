#!/bin/sh
# bench/pending_bsinline.sh: the JIT-loaded inline (tma-fallback=inline) blockscale kernel that did not finish on an
# H100 (twenty-fourth session), launch by launch at growing sizes, each process under 25 s (bench/inline_probe.py);
# its TMA form and gemm_fp8's inline TN beside it.  ~60-150 s.
#   device: run command="sh bench/pending_bsinline.sh .carry" carry=[".carry"] timeout_s=200
. bench/pending_env.sh
for fs in "bs 4096" "bs-inline 512" "bs-inline 1024" "bs-inline 2048" "bs-inline 4096" "wide-inline 4096" "tn-inline 4096"; do
  set -- $fs
  timeout -k 3 25 python3 bench/inline_probe.py --lib "$B/libtilec.so" --form $1 --size $2 > "$L/ip_$1_$2.log" 2>&1
  echo "$1 $2 rc $?: $(tail -1 "$L/ip_$1_$2.log" | cut -c1-150)"
done
echo "[all: $(el) s]"
