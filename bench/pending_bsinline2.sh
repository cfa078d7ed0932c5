#!/bin/sh
# bench/pending_bsinline2.sh (twenty-fifth session; ~60 s): where the JIT-loaded inline form of the 128x128
# block-scaled spelling (bench/variants/gemm_fp8_blockscale_128.tile, `tma-fallback=inline`) stops: an illegal
# instruction at 2048^2 (H100, call 4), a hang at 4096^2, while 512 and 1024 run (one tile a CTA there; 2048 is
# the first size with two tiles a persistent CTA).  compute-sanitizer names the SASS offset; the same PTX
# assembled by the toolkit's ptxas here is disassembled around it.
#   device: run command="sh bench/pending_bsinline2.sh .carry" carry=[".carry"] timeout_s=120
. bench/pending_env.sh
$B/tilec bench/variants/gemm_fp8_blockscale_128.tile --arch=sm_90a --tma-fallback=inline -o $L/bs128i.ptx
PX=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas); OD=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$PX -arch=sm_90a $L/bs128i.ptx -o $L/bs128i.cubin && $OD -sass $L/bs128i.cubin > $L/bs128i.sass
for n in 2048 1536; do
  TILEC_CACHE=0 timeout -k 5 40 compute-sanitizer --tool memcheck python3 bench/inline_probe.py \
    --lib $B/libtilec.so --form bs-inline --size $n > $L/san_$n.log 2>&1
  echo "bs-inline $n under memcheck rc $?:"
  grep -E "=========" $L/san_$n.log | grep -vE "^========= *$" | head -12 | cut -c1-200
done
off=$(grep -oE "at (0x[0-9a-f]+|[a-z_]+\+0x[0-9a-f]+)" $L/san_2048.log | head -1 | grep -oE "0x[0-9a-f]+")
echo "== SASS around $off (toolkit ptxas; the JIT's may differ)"
[ -n "$off" ] && grep -n "/\*$(printf '%04x' $off)\*/" $L/bs128i.sass | head -1 | cut -d: -f1 | \
  { read ln; [ -n "$ln" ] && sed -n "$((ln - 12)),$((ln + 4))p" $L/bs128i.sass | cut -c1-120; }
echo "== one tile a CTA at 2048 (TILEC_PERSIST=0: not persistent) [$(el) s]"
TILEC_PERSIST=0 TILEC_CACHE=0 timeout -k 5 25 python3 bench/inline_probe.py --lib $B/libtilec.so --form bs-inline --size 2048 > $L/np_2048.log 2>&1
echo "rc $?: $(tail -1 $L/np_2048.log | cut -c1-150)"
echo "[$(el) s]"
