#!/bin/sh
# bench/pending_bsinline4.sh (twenty-sixth session; <= 120 s): bsinline3 found that the 128x128 block-scaled
# spelling's inline form runs at 2048^3 with the epilogue from registers (TILEC_EPI=regs) or without warp
# specialization (TILEC_WS=off), and fails (illegal instruction) with both, as at the default.  Which shape
# starts it: more output tiles than the 132 CTAs (a second tile a CTA) or more k-steps (K 2048 = 16 of them,
# three turns of the 5-stage ring)?  One launch a shape, M,N,K; each under a 12 s limit (a hang is rc 124).
#   device: run command="sh bench/pending_bsinline4.sh .carry" carry=[".carry"] timeout_s=150
. bench/pending_env.sh
for s in 1024,1024,1024 1024,1024,2048 1024,1024,4096 1408,1408,1024 2048,1024,1024 2048,1152,1024 2048,2048,1024 2048,2048,512; do
  TILEC_CACHE=0 timeout -k 3 12 python3 bench/inline_probe.py --lib $B/libtilec.so --form bs-inline --size 0 --mnk $s \
    > $L/bsi4_$s.log 2>&1
  rc=$?; msg=$(grep -o "done; C finite: [A-Za-z]*\|cudaError[A-Za-z]*" $L/bsi4_$s.log | head -1)
  echo "bs-inline $s: rc $rc $msg [$(el) s]"
done
