#!/bin/sh
# bench/pending.sh: the GPU call that checks a merged main: every GPU test at the defaults (in
# parallel), then the measurements PENDING_STEPS names (default all: san smallm rows fp8 fp8probe
# attnbwd).  Logs go to /tmp/pending.PID/L and come back as one file, $OUT/logs.tgz (a call returns at most 8
# files); the test table and the measured tables are printed last, short.
#   twelfth session (all measured, nothing owed): loop_prefetch, a reduce's own slots, softmax by a
#   reciprocal, the variant rule, the chunk in words, @maxnreg on dropout: the calls were
#   PENDING_STEPS="sanrows rows" / "ncurows rows" / "rows" with FUSED_ONLY / FUSED_TAGS (bench/RESULTS.md).
#   PENDING_STEPS="ncurows" profiles the rows still below 0.9 (bench/ncu_rows.sh).
#   thirteenth session (all measured, nothing owed): PENDING_STEPS=asm (ASM_ONLY=fused / attnbwd,decode,...:
#   bench.py sections) times the default assembler against TILEC_ASSEMBLER=link (cuLink's relocatable
#   code), a process each; PENDING_STEPS=coldload (bench/coldload.py) the cold loads by assembler.
#   fifteenth session (OWED: the device was withdrawn before the merged main ran on it): first this
#   script at the defaults with PENDING_STEPS="attn fp8" (every GPU test at the merged defaults: the
#   cooperative GEMM default, attn7's FlashAttention-3 form by S, rope3's late refill, late forms, one
#   asm a wgmma group; then the twelve attention cases and fp8), then bench/pending_w4a16d.sh (the
#   bf16x2 dequantization, opt-in until it passes), pending_rope3.sh (staged double), pending_ctime5.sh
#   (compile time, cold loads), pending_attn7_handles.sh, pending_ctime6.sh (compile time of the
#   staging pack in asm, ~60 s), pending_attn8.sh (fa3's q by TMA, opt-in until it passes).
#
#   sixteenth session (OWED as well: no device was lent at all): six more mechanisms, all opt-in, each
#   with its bench/pending_NAME.sh (correctness first, then on / off beside the reference).  After
#   call 1 above, bench/owed.sh runs several scripts in one call (one machine start); in order of
#   what each could flip to a default, so that 30 minutes of device time cover the first three:
#     call 2: OWED="mask5:130 gelu6:170 fp8p6:150 attn8:110" sh bench/owed.sh .carry
#     call 3: OWED="decode5:130 ropefa3:170 bwd5:130 w4a16d:140" sh bench/owed.sh .carry
#     call 4: OWED="rope3:150 attn7_handles:110 ctime7:200 ctime6:100" (compile time: no new code)
#   mask5 TILEC_MASK_DIFF (D64 causal 0 spills), gelu6 TILEC_TANH_APPROX (+EPI_PACK), fp8p6
#   TILEC_PROMOTE_PARTS (256x128 promote), decode5 TILEC_SCRATCH_OVER_RING + attn_decode_fused + the
#   fill split rule, ropefa3 TILEC_ROPE_PRODUCER, bwd5 TILEC_ATOMIC_TMA (the one-pass backward);
#   ctime7's two mechanisms are on by default (PTX byte-identical).  Predictions: bench/RESULTS.md.
#   seventeenth session: calls 1-4 ran (bench/RESULTS.md): the merged main correct at the defaults;
#   mask5, gelu6, fp8p6, bwd5, decode5 measured; MASK_DIFF (two-program attention) and PROMOTE_PARTS
#   made defaults.  OWED now, in order (each its bench/pending_NAME.sh, several a call by owed.sh):
#     call A: this script with PENDING_STEPS="attn fp8" (the new defaults; five example processes)
#     call B: OWED="attnshort:120 attnpersist:120 bscale:150 kpitch:120" (this session's opt-in mechanisms)
#     call C: OWED="ropefa3:170 attn8:110 zeroed:60 w4a16d:140"; then rope3, attn7_handles, ctime7,
#             ctime6; and gpu_test_examples over every example with TILEC_TANH_APPROX=1, then with
#             TILEC_SCRATCH_OVER_RING=1 (the two measured wins not yet defaults).
#   eighteenth session: calls A and B ran (bench/RESULTS.md): main correct at the defaults; attnshort,
#   attnpersist, bscale, kpitch measured; TILEC_ATTN_ORDER made the default.  Call C was lost (the
#   machine stopped answering), then the device was paused.  Four defaults changed without a GPU run
#   of all they change: ATTN_ORDER (attn_rope / attn_gqa causal), gemm_fp8's TN tile by ARCH_SPECIFIC,
#   D256 full attention's persistent form by S <= 2048, fp8 TN fast at 128x256 on the cooperative kernel.
#   nineteenth session (branch pendcheck, no device): call C's loss explained -- TILEC_ROPE_PRODUCER's
#   setmaxnreg split (48 / 232) asked the CTA's register pool for more than it holds, so every launch of
#   that kernel hung (ropefa3 ran first in call C; gpu_test_examples' attn_rope process "ran past 420 s"
#   twice for the same reason, its last 4 KB of output lost in the stdout buffer).  Fixed (48 / 224,
#   emit_ws.c fit_pool); the scripts' limits made to fit their owed shares; owed.sh kills a script's
#   whole process session at its limit and returns its logs progressively.  Every script was run here
#   on the fake driver (tools/pending_dry.sh): each reaches its table.
#   OWED now: one queue in this order, the defaults' correctness first, then what could flip a default
#   (NAME:LIMIT, each its bench/pending_NAME.sh; realistic times are about half the limits):
#     defaults: order18:200 archtile:150 persistform:130 fp8coop:110 zeroed:90 fp8tol:90
#     flips:    repack:120 gelu7:185 scalepipe:150 bwd6:150 attn8:170 w4a16d:110 rope3:165
#     then:     attn7_handles:150 (a measurement question); ctime7 / ctime6 are compile time (PTX
#               identical, defaults already): measure them here, not on the device
#   and ropefa3:150 in a call of its own, last (if its kernel still hangs, only that call is lost).
#   Added later in the nineteenth session (all opt-in, each dry-run here on the fake driver):
#     attnd128:200 (TILEC_ATTN_KV_SPLIT: fa3 at D256, predicted +5-35 % on the D256 rows: the first
#     flip), w4a16e:240 (packed int4 order, halves dequantization, merge split-K), bwd7:175 (lazy
#     wgmma waits, dQ on wgmma), embrms:300 (TILEC_ROW_RELOAD, embedding + RMSNorm), ctime8:300
#     (compile time on the host's CPU; defaults, PTX byte-identical).
#   The queue as OWED (each limit covers its script's own limits on their serial path):
#     order18:200 archtile:150 persistform:130 fp8coop:110 zeroed:90 fp8tol:90 attnd128:200
#     repack:120 gelu7:185 scalepipe:150 bwd6:150 attn8:170 w4a16d:110 w4a16e:240 rope3:165 bwd7:175
#     embrms:300 attn7_handles:150 ctime8:300
#   Three calls, 1800 s of device time with the cold start (~150 s) and the warm gaps (~30 s):
#     call 1 (cold):  OWED="<the queue>" OWED_BUDGET=560 sh bench/owed.sh .carry        timeout_s=590
#     call 2 (warm):  OWED="<what call 1 did not run, in order>" OWED_BUDGET=560 ...      timeout_s=590
#     call 3 (warm):  OWED="ropefa3:150" OWED_BUDGET=170 sh bench/owed.sh .carry          timeout_s=200
#   150 + 590 + 30 + 590 + 30 + 200 + 30 = 1620 s; owed.sh runs a script only if its limit + 15 s fits
#   what is left of OWED_BUDGET (the worst case of the first three defaults, 525 s, fits call 1 alone)
#   and names what it skipped ("owed.sh: ... skipped: ..."): that, in order, is the next call's OWED.
#   With >= 200 s left after call 2 (status), a call of OWED_BUDGET=150 takes the queue's next short
#   item before call 3.  If this session's merges change a default's PTX, call 1 is this script at the
#   defaults instead (PENDING_STEPS="attn fp8" sh bench/pending.sh .carry, timeout_s=590: every GPU
#   test, ~300-450 s) and the queue moves one call later.  Then: gpu_test_examples over every example
#   with TILEC_SCRATCH_OVER_RING=1 (decode5's measured win, not yet a default).
#   twentieth session: the whole queue above ran (four calls, bench/RESULTS.md "twentieth session"), main
#   correct at ef9f57f; seven defaults made from it (docs/decisions.md) that never ran together.  OWED
#   now, in this order (each its bench/pending_NAME.sh; realistic times about half the limits):
#     call 1 (cold):  OWED="defaults20:300 ropefa3:180 w4a16big:150" OWED_BUDGET=560 sh bench/owed.sh .carry
#                     (timeout_s=590) -- defaults20: every GPU test at the new defaults at once, the pitch
#                     test, and TILEC_LOOP_SPLIT_LOAD's D128 S1000 dK beside the default (makes or keeps
#                     bwd6's default); ropefa3: the rounding fix (the failing round replayed first) and
#                     the producer's rows ahead (branch ropefa4, if merged); w4a16big: dequant + GEMM
#     call 2 (warm):  PENDING_STEPS="attn fp8" sh bench/pending.sh .carry (timeout_s=590): attention and
#                     fp8 at the new defaults beside cuDNN / FA2 / cuBLAS (the numbers README quotes)
#     call 3 (warm):  OWED="attnd256b:180 attnepi:180 embrms:300" OWED_BUDGET=560 (TILEC_ATTN_TURNS=0
#                     with TILEC_ATTN_OVERLAP=3 at D256; fa3's O by TMA store, TILEC_ATTN_O_TMA=1;
#                     embrms' variants, now loading what they say)
#     then:           ctime8:300 (compile time on the host; PTX identical, defaults already), and
#                     gpu_test_examples with TILEC_SCRATCH_OVER_RING=1 (decode5's win, not a default)
#   twenty-first session: calls 1-3 and ctime8 ran on the H200 (bench/RESULTS.md "twenty-first session"):
#   the seven defaults correct together; fa3's O by TMA made the default; then bwdrows ran on an H100 (the
#   H200 refused three starts) and the backward's ring rows became the default.  OWED now, in this order:
#     call 1 (cold):  PENDING_STEPS="attn attnbwd fp8" sh bench/pending.sh .carry (timeout_s=590): every GPU
#                     test at the two new defaults (O by TMA, ring rows; H100-checked only for the rows),
#                     then attention forward / backward and fp8 beside cuDNN / FA2 / cuBLAS on the H200
#     call 2 (warm):  OWED="fp8nn4:130 smallm512:120 hoistop:120 lsl:200" OWED_BUDGET=560 sh bench/owed.sh .carry
#                     (fp8 NN's K-major-B form at TN's tile, a default already but never run; the wave
#                     model's 128x128 form above M 256, TILEC_SMALL_M_WAVES=1; W4A16's materialize-once
#                     form at M >= 128, TILEC_HOIST_OPERAND=1; TILEC_LOOP_SPLIT_LOAD's three other kernels)
#     then:           gpu_test_examples with TILEC_SCRATCH_OVER_RING=1 (decode5's win, not a default)
#   twenty-fourth session: six calls on an H100 (bench/RESULTS.md "twenty-fourth session"): the four defaults pass
#   together; every GPU test passed but test_w4a16 (its A = I check predated the materialize-once default: fixed,
#   then passed) and gpu_test_examples_3 (past its 330 s limit on the H100, passing to the cut); branch aot2's
#   two-image AOT launchers checked (gpu_test_aot PASS, memcheck clean, 1.000x the JIT).  Then branches require
#   (require(cond, "msg")) and ptx2 (the CLI's .ptx / .cubin: KERNEL and KERNEL__notma, the new default) merged
#   without a GPU.  OWED now, one queue (NAME:LIMIT, each bench/pending_NAME.sh; several a call by owed.sh):
#     call 1: OWED="ptx2:180 require:200 bsinline:160" sh bench/owed.sh .carry -- the two merged defaults' device
#             checks first (gpu_test_cli_ptx both entries against the interpreter and the JIT, the wide
#             blockscale's file at 4096^3; gpu_test_examples over the files with a require, the launch cost),
#             then whether the JIT-loaded inline form of gemm_fp8_blockscale hangs at 4096^3
#     call 2: PENDING_STEPS="attn attnbwd fp8" sh bench/pending.sh .carry (every GPU test at the defaults, on
#             the H200), then dq64 beside dq32 on the H200 (bench/pending_defaults23.sh .carry), then
#             gpu_test_examples with TILEC_SCRATCH_OVER_RING=1
#   twenty-fifth session: calls 1 and 2 ran on an H100 (bench/RESULTS.md "twenty-fifth session"; 27 example files
#   passed with TILEC_SCRATCH_OVER_RING=1).  OWED now:
#     call 1: OWED="bsswap:200 sor:240 lw:150 bsinline:100" sh bench/owed.sh .carry -- the blockscale example's
#             new spelling on its tests and beside the per-tensor kernel; SCRATCH_OVER_RING over attn.tile and
#             examples/llama (the default if they pass); LAZY_WIDE on the whole D128 backward (the default if
#             >= 1 % in both rounds); the inline probe, fixed
#     then: every GPU test at the defaults on the H200 (PENDING_STEPS="attn attnbwd fp8")
#   twenty-fifth session, later: call 1 ran (and w4small, rr, a fixed gpu_test_cli_ptx; all H100).  New defaults:
#   SCRATCH_OVER_RING, TILEC_RING_IN_RANGE scoped to split loops, the wide blockscale example.  OWED now:
#     call 1: PENDING_STEPS="attn attnbwd fp8 rows" sh bench/pending.sh .carry -- every GPU test at these
#             defaults together, on the H200 if one is lent (none of this session's calls got one)
#     then:   the 128x128 blockscale's inline form (bench/pending_bsinline2.sh: launch failure from 1536, not
#             the persistent loop) -- an opt-out path; cuobjdump of the JIT's cubin would name the instruction
#   twenty-fifth session's helpers (no device): OWED="w4small:240" sh bench/owed.sh .carry (branch w4small:
#             TILEC_RING_IN_RANGE=1, the cp.async ring's stages past the loop not copied; W4A16 split-K on / off
#             beside cuBLAS, timed launch and CUDA graph; ~120-170 s, dry-run here on the fake driver)
#   twenty-sixth session (all H100): owed call 1 ran at bce274e (every GPU test passed); the inline failure
#   found (a diverged warp after thread 0's TMA store) and fixed everywhere (cg_warp_converge); new sm_90a
#   attention-backward tiles (dQ 128 queries at D64, dK/dV 64 x 64 on 2 stages at D64 and D128), each checked by
#   test_attn_bwd and attn_bwd.tile's rounds, the 16 moved GEMM files by gpu_test_examples (cut at 230 s in
#   quant_int8_gemm, 863 rounds passed).  OWED now:
#     call 1: PENDING_STEPS="attn attnbwd fp8 rows" sh bench/pending.sh .carry -- every GPU test at these
#             defaults together, on the H200 if one is lent (no call of the last two sessions got one)
#     then:   OWED="bwdtiles:200 attnab:130 attnforms:200 attntiles:240" sh bench/owed.sh .carry on the H200 -- the backward tiles were chosen
#             on the H100 (bench/bwd_ab.py rounds); the forward's ratios to cuDNN by rotated rounds there
#   twenty-seventh session (all H100): both owed calls ran at d15164c (every GPU test passed; the tables and the
#   rounds in bench/RESULTS.md "twenty-seventh session"); branch aregs measured and not merged (no gain; ptxas 13.0
#   reuses a loop-invariant wgmma A's registers: wrong at D64); wide lazy waits on the one-warpgroup D128 dK/dV tile
#   by default (bench.py bench_interleaved: +3.5 / +5.9 % the whole backward); ncu of the D128 backward beside cuDNN
#   (bench/pending_ncubwd.sh: 70 % tensor against cuDNN's 66 %, seven GEMMs to five).  OWED now, in order:
#     call 1: PENDING_STEPS="attn attnbwd fp8 rows" sh bench/pending.sh .carry -- on the H200 when one is lent
#             (four sessions have had only H100s); on an H100 it adds nothing to the twenty-seventh's call 1
#     first:  sh bench/pending_lazydef.sh .carry -- the wide lazy waits by default on the D128 dK/dV loop (decided by
#             interleaved rounds on the H100, its PTX the one test_attn_bwd ran under =1): test_attn_bwd at the
#             defaults, default x TILEC_WGMMA_LAZY_WIDE=0 by bwd_ab's interleaved rounds (expected 1.03-1.06)
#     then:   sh bench/pending_remeasure.sh .carry (~8 min) -- the instrument on the forward (interleave 1 beside 0),
#             then the mechanisms left opt-in on 1-5 % readings measured launch by launch (forward O_SLOT, SCHED,
#             KV_SPLIT, RED_CHAINS, FORM_MIN_S; backward lazy, dq128, D64 3 stages; GEMM TILE_PREFETCH; fp8 fast forms)
#     and:    sh bench/pending_skip0.sh .carry (~5 min) -- TILEC_ATTN_SKIP0=1 (fa3's iteration 0 without its value dot
#             of P = 0: predicted D128 S1k full +3-6 %), correctness (gpu_test_examples' two SKIP0 variants) first
#     and on an H200 when one is lent: sh bench/pending_h200.sh .carry (exits at once on another card)
#   twenty-eighth session (all H100): the three owed calls ran (the lazy default held, 1.034 / 1.060; SKIP0 missed;
#   the remeasure: attn_ab interleaves by default, nothing else at the rule); O through the last stage by default on
#   tiles of at most 10 steps (bench/pending_oslotmax.sh, pending_oslotmax2.sh: measured and checked, D128 S1k 1.031x).
#   OWED now: first sh bench/pending_causal28.sh .carry (~4 min; causal fa3 tiles from the counter with the slot on
#             every tile, TILEC_ATTN_SCHED=1: ragged sizes, GQA, then against the default; a default if it holds:
#             predicted 1.10 / 1.07 / 1.04x at D128 causal S 1k / 2k / 4k); on an H200 when one is lent,
#             sh bench/pending_h200.sh .carry, then
#             PENDING_STEPS="attn attnbwd fp8 rows" sh bench/pending.sh .carry (every GPU test at the defaults there)
#   twenty-ninth session (all H100): pending_causal28.sh ran (the counter held: 1.11 / 1.07 / 1.05x at D128, merged
#   as the causal default, then narrowed to D128: D256's S8k / 16k lost 1.4-2.1 %); pending_d64fa3.sh ran (D64's fa3
#   form 0.76-0.83x: branch d64fa3 not merged); every GPU test passed at the counter default (PENDING_STEPS="attn").
#   OWED now, in order: sh bench/pending_shorts.sh .carry (~60 s: the fa3 forms below S 1024, D128 / D256, full and
#             causal, by interleaved rounds: a bound moves only where every row gains); sh bench/pending_oslotk.sh
#             .carry (~200 s: TILEC_ATTN_O_SLOT_K=1, O into the K slot after q empty, correctness then x the
#             default; predicted +1-2.5 % at D128 S1k full, +1-3 % causal) -- both in one call:
#             run command="(OUT=$OUT/s sh bench/pending_shorts.sh .carry); (OUT=$OUT/o sh bench/pending_oslotk.sh .carry)"
#             carry=[".carry"] timeout_s=420 kind=nvidia-h100-x1 (either card will do); on an H200 when one is lent,
#             sh bench/pending_h200.sh .carry, then PENDING_STEPS="attn attnbwd fp8 rows" sh bench/pending.sh .carry
#   thirtieth session (H100): owed call 1 ran (the fa3 forms from S 256 / 512, O into K's slot for full attention:
#             defaults), pending_aterms.sh ran (TILEC_ALIGN_TERMS / TILEC_WHOLE_ONCE: correct, not faster, opt-in).
#             Then on an H200: pending_defaults30.sh (the new defaults correct, 1.03-1.31x the old; the form also wins
#             at S 128-384: bounds 128 at D128, 256 at D256), pending_h200.sh (the headline ratios) and every GPU test
#             at the defaults (PENDING_STEPS=" ": all passed).  Nothing owed; next, optional: the same three at the
#             128 / 256 bounds (the form at those S was tested only through the FORM_MIN_S=1 variants).
#   thirty-first session (H100 twice, then five refused starts): pending_h200.sh and pending_h200b.sh ran on an H100
#             (H200_ANY=1: the first x Triton column, rows, block-scaled fp8).  OWED, in this order:
#             sh bench/pending_qpf.sh .carry (TILEC_ATTN_Q_PREFETCH, any card; QPF_QUICK=1 the timing alone), then on
#             an H200: sh bench/pending_h200.sh .carry; sh bench/pending_h200b.sh .carry (block-scaled x per-tensor).
#   thirty-second session (H100): pending_qpf.sh ran (q prefetch missed: opt-in) and pending_kslot.sh (the short causal
#             form, default).  OWED: sh bench/pending_ropeangle.sh .carry (any card: k's RoPE tables by angle
#             addition, rule in it), sh bench/pending_explore32.sh .carry (exploration: D64 tiles / forms, D256 causal
#             counter by S); on an H200, sh bench/pending_h200.sh .carry; sh bench/pending_h200b.sh .carry.
#   thirty-third session (no device: 168 s of budget left, under a start's 240): passes/convert_hoist.c made (default
#             on, every example's PTX unchanged).  OWED, in this order: sh bench/pending_ropeangle.sh .carry (any card,
#             timeout_s=420: the pass's kernels and the generated seeds it changes against the interpreter first, then
#             the angle variant with the pass on and off), sh bench/pending_explore32.sh .carry; on an H200,
#             sh bench/pending_h200.sh .carry; sh bench/pending_h200b.sh .carry.
#   here:   tools/carry.sh (fills .carry/ from build/: stripped lib, CLI, GPU tests)
#   device: run command="sh bench/pending.sh .carry" carry=[".carry"] timeout_s=...
set -u
B=$(cd "${1:-.carry}" && pwd)/b
[ -d "$B" ] || B=$(cd "${1:-build}" && pwd)
# (this run's logs and example folders in a folder of its own: a warm machine keeps /tmp)
R=$(pwd); P=${PENDING_TMP:-/tmp/pending.$$}; L=$P/L; mkdir -p $L; T0=$(date +%s)
STEPS=" ${PENDING_STEPS:-san smallm rows fp8 fp8probe attnbwd} "
el() { echo $(( $(date +%s) - T0 )); }
# the logs so far to $OUT/logs.tgz (before every step and at the end: a call cut short keeps them)
save() { cp $P/*.log $L/ 2>/dev/null; [ -n "${OUT:-}" ] && tar czf $OUT/logs.tgz -C $P L 2>/dev/null; return 0; }
step() { case "$STEPS" in *" $1 "*) save; return 0;; esac; return 1; }
# a step's time limit: $1, or what PENDING_BUDGET (default 560 s of the 600 a call may run) leaves less
# 20 s (at least 5: `timeout 0` would mean none)
lim() { l=$(( ${PENDING_BUDGET:-560} - $(el) - 20 )); [ $l -lt 5 ] && l=5; [ $l -lt $1 ] && echo $l || echo $1; }
export LD_LIBRARY_PATH=$B TILEC_LIBRARY=$B/libtilec.so PYTHONUNBUFFERED=1 TILEC_EXAMPLES=$R/examples TILEC_CLI=$B/tilec
W=$(dirname "$B")/whl
if ls "$W"/*.whl >/dev/null 2>&1; then  # apache-tvm-ffi, for the Python launch path (optional)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$W"/*.whl 2>&1 | tail -1
  export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
if [ "${PENDING_TESTS:-all}" = all ]; then
echo "== 1. GPU tests at the defaults"
for t in $B/tests/gpu_test_*; do n=$(basename $t); case $n in gpu_test_random|gpu_test_examples) continue;; esac
  (TILEC_CACHE_DIR=/tmp/c-$n timeout -k 10 ${PENDING_TEST_LIMIT:-330} $t > $P/$n.log 2>&1; echo "exit $?" >> $P/$n.log) & done
# gpu_test_examples in five processes (one process beside every other test ran past the timeout):
# attn.tile (~140 s of interpreter alone) and attn_rope.tile each in their own (together they ran past
# 420 s in the seventeenth session's first call), the other files round-robin into three, each its log
i=0; for f in $R/examples/*.tile; do
  case $(basename "$f") in attn.tile) k=3;; attn_rope.tile) k=4;; *) k=$((i % 3)); i=$((i + 1));; esac
  mkdir -p $P/ex$k; ln -sf "$f" $P/ex$k/; done
# (attn_rope.tile's variants in two processes, the default and the first four switches in the fifth,
# staged-double in a sixth; not TILEC_ROPE_PRODUCER, opt-in and bench/pending_ropefa3.sh's, whose
# kernel hung at every launch until branch pendcheck: that hang, not the interpreter, is where
# attn_rope.tile's process "ran past 420 s at the staged-double variant" twice, its last ~4 KB of
# output lost in the stdout buffer; gpu tests are line-buffered since)
# (attn.tile in two: its plain rounds and the first variants in the fourth process, the last three
# switches' variant rounds alone in a seventh; in one process it ran past 330 s on every H100 run, in the
# O_SLOT rounds, so SCHED's never ran there)
for k in 0 1 2 3 4 5 6; do n=gpu_test_examples_$k; d=$P/ex$k; v=; vo=
  case $k in 3) v=default,TILEC_ATTN_WS,TILEC_ATTN_OVERLAP,TILEC_ATTN_TWO,TILEC_ATTN_FORM_MIN_S,TILEC_ATTN_ORDER,TILEC_ATTN_PERSIST;;
    4) v=default,PROLOGUE_TMA,STAGED_WGMMA,LATE_REFILL;; 5) v=STAGED_DOUBLE; d=$P/ex4;;
    6) v=TILEC_ATTN_KV_SPLIT,TILEC_ATTN_O_SLOT,TILEC_ATTN_SCHED; vo=1; d=$P/ex3;; esac
  (GPU_TEST_VARIANTS_ONLY=$vo GPU_TEST_ATTN_VARIANTS=$v TILEC_CACHE_DIR=/tmp/c-$n timeout -k 10 ${PENDING_TEST_LIMIT:-330} $B/tests/gpu_test_examples $d > $P/$n.log 2>&1; echo "exit $?" >> $P/$n.log) & done
for p in tests/gpu/test_decode.py tests/gpu/test_attn_bwd.py tests/gpu/test_dot_types.py tests/gpu/test_small_m.py; do n=$(basename $p .py)
  (TILEC_CACHE_DIR=/tmp/c-$n timeout -k 10 220 python3 $p --lib $B/libtilec.so > $P/$n.log 2>&1; echo "exit $?" >> $P/$n.log) & done
# the proposed small-M table (64x128x128/4 at M = 129..256: +3-4 % measured, bench/RESULTS.md tenth session)
(TILEC_SMALL_M_FORMS="16=16x32x256/multistage/5,128=64x64x128/cutlass/6,256=64x128x128/cutlass/4" TILEC_CACHE_DIR=/tmp/c-smprop \
  timeout -k 10 220 python3 tests/gpu/test_small_m.py --lib $B/libtilec.so > $P/test_small_m_proposed.log 2>&1; echo "exit $?" >> $P/test_small_m_proposed.log) &
(TILEC_CACHE_DIR=/tmp/c-w4 timeout -k 10 200 python3 tests/gpu/test_w4a16.py --lib $B/libtilec.so --examples $R/examples > $P/test_w4a16.log 2>&1; echo "exit $?" >> $P/test_w4a16.log) &
(TILEC_CACHE_DIR=/tmp/c-rows timeout -k 10 300 sh tests/gpu/rows.sh $B > $P/rows_sh.log 2>&1; echo "exit $?" >> $P/rows_sh.log) &
(TILEC_CACHE_DIR=/tmp/c-kern timeout -k 10 300 sh tests/gpu/kernels.sh $B > $P/kernels_sh.log 2>&1; echo "exit $?" >> $P/kernels_sh.log) &
(TILEC_CACHE_DIR=/tmp/c-ukern timeout -k 10 300 sh tests/gpu/user_kernels.sh $B > $P/user_kernels_sh.log 2>&1; echo "exit $?" >> $P/user_kernels_sh.log) &
(TILEC_CACHE_DIR=/tmp/c-cvar timeout -k 10 300 sh tests/gpu/cutlass_variants.sh $B > $P/cutlass_variants_sh.log 2>&1; echo "exit $?" >> $P/cutlass_variants_sh.log) &
(TILEC_CACHE_DIR=/tmp/c-lang timeout -k 10 300 sh tests/gpu/lang_corners.sh $B > $P/lang_corners_sh.log 2>&1; echo "exit $?" >> $P/lang_corners_sh.log) &
(TILEC_CACHE_DIR=/tmp/c-avar timeout -k 10 300 sh tests/gpu/attn_variants.sh $B > $P/attn_variants_sh.log 2>&1; echo "exit $?" >> $P/attn_variants_sh.log) &
(TILEC_CACHE_DIR=/tmp/c-mloop timeout -k 10 300 sh tests/gpu/multi_loop.sh $B > $P/multi_loop_sh.log 2>&1; echo "exit $?" >> $P/multi_loop_sh.log) &
(TILEC_CACHE_DIR=/tmp/c-rdot timeout -k 10 300 sh tests/gpu/rand_dot.sh $B > $P/rand_dot_sh.log 2>&1; echo "exit $?" >> $P/rand_dot_sh.log) &
(PROLOGUE_A_FILES="tests/prologue_a/*.tile" TILEC_CACHE_DIR=/tmp/c-proa timeout -k 10 300 sh tests/gpu/prologue_a.sh $B > $P/prologue_a_sh.log 2>&1; echo "exit $?" >> $P/prologue_a_sh.log) &
(cd python/tests && TILEC_CACHE_DIR=/tmp/c-pyt timeout -k 10 200 python3 -m pytest -q -p no:cacheprovider test_gpu.py > $P/pytest_gpu.log 2>&1; echo "exit $?" >> $P/pytest_gpu.log) &
(TILEC_CACHE_DIR=/tmp/c-rr timeout -k 10 200 $B/tests/gpu_test_random --seeds 61000:61299 > $P/random.log 2>&1; echo "exit $?" >> $P/random.log) &
(for i in 1 2 3; do TILEC_CACHE_DIR=/tmp/c-r153 timeout -k 10 60 $B/tests/gpu_test_random --seeds 60153:60153 --transcendental half | tail -1; done > $P/random_60153.log 2>&1; echo "exit 0" >> $P/random_60153.log) &
wait
else  # PENDING_TESTS="tests/gpu/x.py ...": only these Python tests
for p in $PENDING_TESTS; do n=$(basename $p .py)
  (TILEC_CACHE_DIR=/tmp/c-$n timeout -k 10 220 python3 $p --lib $B/libtilec.so > $P/$n.log 2>&1; echo "exit $?" >> $P/$n.log) & done
[ -n "${PENDING_RANDOM:-}" ] && (TILEC_CACHE_DIR=/tmp/c-rr timeout -k 10 200 $B/tests/gpu_test_random --seeds $PENDING_RANDOM > $P/random.log 2>&1; echo "exit $?" >> $P/random.log) &
wait
fi
echo "[tests: $(el) s]"
cat $P/*.log > $L/tests.log
grep -hE '^FAIL' $P/*.log | head -20
for f in $P/gpu_test_*.log $P/test_*.log $P/rows_sh.log $P/kernels_sh.log $P/user_kernels_sh.log $P/cutlass_variants_sh.log $P/lang_corners_sh.log $P/attn_variants_sh.log $P/multi_loop_sh.log $P/rand_dot_sh.log $P/prologue_a_sh.log $P/pytest_gpu.log $P/random.log $P/random_60153.log; do
  [ -f "$f" ] || continue
  printf '%-26s %s | %s\n' "$(basename $f .log)" "$(tail -1 $f | cut -c1-60)" "$(grep -E 'passed|failed|PASS|FAIL|hazard|ERROR SUMMARY' $f | tail -1 | cut -c1-100)"; done > $L/table.txt
cat $L/table.txt
save
if step san; then
echo "== 1b. compute-sanitizer: attention D128, blockscale (cooperative, scales under the group) [$(el) s]"
for c in "racecheck 0" "racecheck 1" "memcheck 1"; do set -- $c
  TILEC_CACHE_DIR=/tmp/c-san timeout -k 10 90 compute-sanitizer --tool $1 $B/tilec run examples/attn.tile --kernel cutlass_attn_fwd \
    -D D=128 -D CAUSAL=$2 --size Z=1 --size H=2 --size S=300 --scalar scale=0.088 --device > $L/san_$1_$2.log 2>&1
  echo "$1 causal $2: rc $? $(grep -E 'SUMMARY|PASS|FAIL' $L/san_$1_$2.log | tr '\n' ' ' | cut -c1-200)"
done | tee $L/san_table.txt
for t in racecheck memcheck; do
  TILEC_CACHE_DIR=/tmp/c-san timeout -k 10 90 compute-sanitizer --tool $t $B/tilec run examples/gemm_fp8_blockscale.tile \
    --size M=200 --size N=304 --size K=512 --size KB=4 --size NB=3 --device > $L/san_bs_$t.log 2>&1
  echo "blockscale $t: rc $? $(grep -E 'SUMMARY|PASS|FAIL' $L/san_bs_$t.log | tr '\n' ' ' | cut -c1-200)"
done | tee -a $L/san_table.txt
fi
if step sanrows; then
echo "== 1c. compute-sanitizer racecheck: row kernels with one barrier a reduce [$(el) s]"
for c in "examples/cross_entropy.tile --size R=5 --size V=20000" "examples/cross_entropy.tile -D BV=1024 --size R=3 --size V=5000" \
         "examples/softmax.tile -D BC=32768 --size R=3 --size C=30000" "examples/layernorm.tile --size R=7 --size C=2000 --scalar eps=1e-5" \
         "examples/rmsnorm.tile --kernel rmsnorm_rows --size R=9 --size C=4096 --scalar eps=1e-6" \
         "bench/variants/softmax_online.tile --size R=3 --size C=20000" "examples/rmsnorm.tile --kernel rmsnorm --size R=5 --size C=3000 --scalar eps=1e-6"; do
  n=$(echo "$c" | tr -c 'a-zA-Z0-9' _ | cut -c1-60)
  TILEC_CACHE_DIR=/tmp/c-sanr timeout -k 10 60 compute-sanitizer --tool racecheck $B/tilec run $c --device > $L/sanr_$n.log 2>&1
  echo "racecheck $c: rc $? $(grep -E 'SUMMARY|PASS|FAIL' $L/sanr_$n.log | tr '\n' ' ' | cut -c1-160)"
done | tee $L/sanrows_table.txt
fi
if step ncurows; then
echo "== 1d. ncu: the row kernels below the copy bandwidth (bench/ncu_rows.sh) [$(el) s]"
OUT=$L timeout -k 10 240 sh bench/ncu_rows.sh $B > $L/ncurows_table.txt 2>&1; tail -14 $L/ncurows_table.txt
fi
if step smallm; then
echo "== 2. the small-M default against the ninth session's split table [$(el) s]"
SPLIT="TILEC_SMALL_M_FORMS=16=16x32x256/multistage/5,64=64x64x64/cutlass/8/split,128=64x128x64/cutlass/6/split,256=64x128x64/cutlass/6"
TILEC_CACHE_DIR=/tmp/c-smp timeout -k 10 90 python3 bench/smallm_probe.py --sizes 32x4096x4096,64x4096x4096,100x4096x4096,128x4096x4096,64x4096x14336,128x4096x14336,200x4096x4096 \
  --rounds 2 --forms "default=|split table=$SPLIT|64x32x128=TILEC_SMALL_M_FORMS=256=64x32x128/cutlass/8" > $L/smallm.log 2>&1
grep -E "^\||FAIL" $L/smallm.log > $L/smallm_table.txt; cat $L/smallm_table.txt
fi
if step rows; then
echo "== 2b. the row kernels at the defaults [$(el) s]"
FUSED_TAGS=${FUSED_TAGS:-LAUNCH_VARIANTS=0} FUSED_ONLY=${FUSED_ONLY:-rmsnorm,layernorm,add_rmsnorm,add_rmsnorm_fp8,swiglu,rope,embedding_rmsnorm,dropout_residual,moe_permute,softmax,cross_entropy} \
timeout -k 10 ${ROWS_TIMEOUT:-300} python3 bench/bench.py --lib $B/libtilec.so --only fused --quick --json $L/fused.json > $L/fused.log 2>&1
grep -A60 "^## fused kernels" $L/fused.log | head -60 > $L/rows_table.txt
cat $L/rows_table.txt
fi
if step fp8; then
echo "== 2c. fp8 (NN on the producer's transpose) [$(el) s]"
timeout -k 10 $(lim 60) python3 bench/bench.py --lib $B/libtilec.so --only fp8 --quick > $L/fp8.log 2>&1
grep -E "^\| fp8" $L/fp8.log > $L/fp8_table.txt; cat $L/fp8_table.txt
fi
if step fp8probe; then
echo "== 2d. fp8 blockscale forms (fma / mul, under / after the wait, cooperative / ring) [$(el) s]"
TILEC_CACHE_DIR=/tmp/c-f8p timeout -k 10 150 python3 bench/fp8_probe.py --lib $B/libtilec.so --sizes 4096,8192 --rounds 3 \
  --forms "${FP8PROBE_FORMS:-tn,bs,bs prefetch,bs under0,bs mul,bs ring,bs ring mul}" > $L/fp8probe.log 2>&1
grep -E "^\||FAIL" $L/fp8probe.log > $L/fp8probe_table.txt; cat $L/fp8probe_table.txt
fi
if step attn64; then
echo "== 2f. attention D64: BN 128 (two programs an SM, 2 stages each) against the default BN 64, all six cases [$(el) s]"
C=""; for sc in 1024:0 4096:0 16384:0 1024:1 4096:1 16384:1; do S=${sc%:*}; c=${sc#*:}; C="$C,64:$S:$c,64:$S:$c:0:128"; done
BENCH_ATTN_NO_TRITON=1 timeout -k 10 150 python3 bench/bench.py --lib $B/libtilec.so --only attn --quick --attn-kernels cutlass_attn_fwd \
  --attn-cases ${C#,} > $L/attn64.log 2>&1
grep -E "cutlass_attn_fwd.*cuDNN" $L/attn64.log | sort -u > $L/attn64_table.txt; cat $L/attn64_table.txt
fi
if step layer; then
echo "== 2g. the Llama-3-8B layer, prefill batch 1 x 2048 (examples/llama/layer.py) [$(el) s]"
TILEC_CACHE_DIR=/tmp/c-layer timeout -k 10 ${LAYER_TIMEOUT:-150} python3 examples/llama/layer.py --lib $B/libtilec.so > $L/layer.log 2>&1
echo "layer.py exit $?" >> $L/layer.log; grep -E "^\||tok|ms|err|exit" $L/layer.log | tail -12 > $L/layer_table.txt; cat $L/layer_table.txt
fi
if step attnbwd; then
echo "== 2e. attention backward beside cuDNN / FA2: the default (rows through the TMA ring) and TILEC_ROW_STREAM=0 [$(el) s]"
TILEC_CACHE=0 timeout -k 10 120 python3 bench/bench.py --lib $B/libtilec.so --only attnbwd --quick \
  --attnbwd-cases 64:4096:0,64:4096:1,128:4096:0,128:4096:1 --attnbwd-variants default,norows > $L/attnbwd.log 2>&1
grep -E "attn bwd.*TFLOP" $L/attnbwd.log | sort -u > $L/attnbwd_table.txt; cat $L/attnbwd_table.txt
# (PENDING_AB=1: the ratios to cuDNN / FA2 again by rotated rounds, bench/bwd_ab.py, ~70 s: back-to-back
# medians move by ~5 %; not by default: the all-tests call is near the 600 s a call already)
if [ "${PENDING_AB:-0}" = 1 ]; then
timeout -k 10 90 python3 bench/bwd_ab.py --lib $B/libtilec.so --cases 64:4096:0,64:4096:1,128:4096:0,128:4096:1 \
  --variants default --rounds 5 > $L/attnbwd_ab.log 2>&1; grep -E "^ref |Error" $L/attnbwd_ab.log | cut -c1-150; fi
fi
if step asm; then
echo "== 2h. the assembler: the default (ptxas where found, else the driver compiling the PTX whole) against cuLink's relocatable code, a process each [$(el) s]"
echo "ptxas: $(command -v ptxas || echo 'not on PATH') $(ls /usr/local/cuda/bin/ptxas 2>/dev/null) $(ptxas --version 2>/dev/null | tail -1)"
for a in ${ASM_MODES:-auto link}; do
  TILEC_ASSEMBLER=$a BENCH_LAUNCH_NOTES=1 FUSED_TAGS=${FUSED_TAGS:-no-variants} FUSED_ONLY=${FUSED_ONLY:-rmsnorm,layernorm,add_rmsnorm,add_rmsnorm_fp8,swiglu,rope,embedding_rmsnorm,dropout_residual,moe_permute,softmax,cross_entropy} \
    TILEC_CACHE_DIR=/tmp/c-asm-$a timeout -k 10 ${ASM_TIMEOUT:-150} python3 bench/bench.py --lib $B/libtilec.so --only ${ASM_ONLY:-fused} --quick \
    --attnbwd-cases 64:4096:0,128:4096:0 --attnbwd-variants default > $L/asm_$a.log 2>&1
  echo "bench exit $?" >> $L/asm_$a.log
  grep -E "^fused .*\[default\]|^(attn bwd|decode paged|decode contig|gemm small M|w4a16 gemm) \||bench exit" $L/asm_$a.log | sort -u | sed "s/^/$a: /" | cut -c1-200
done | tee $L/asm_table.txt
fi
if step attn; then
echo "== 2j. attention forward: the twelve cases and D 256, beside cuDNN / FA2 [$(el) s]"
C=""; for d in 64 128 256; do for sc in 1024:0 4096:0 16384:0 1024:1 4096:1 16384:1; do C="$C,$d:${sc%:*}:${sc#*:}"; done; done
BENCH_ATTN_NO_TRITON=${ATTN_NO_TRITON:-1} timeout -k 10 $(lim ${ATTN_TIMEOUT:-200}) python3 bench/bench.py --lib $B/libtilec.so --only attn --quick \
  --attn-kernels ${ATTN_KERNELS:-cutlass_attn_fwd} --attn-cases ${ATTN_CASES:-${C#,}} > $L/attn.log 2>&1
echo "bench exit $?" >> $L/attn.log; grep -E "\| (cuDNN|FA2) \||bench exit" $L/attn.log | sort -u > $L/attn_table.txt; cat $L/attn_table.txt
# (PENDING_AB=1: the ratios to cuDNN again by rotated rounds, bench/attn_ab.py, ~60 s)
if [ "${PENDING_AB:-0}" = 1 ]; then
timeout -k 10 $(lim 140) python3 bench/attn_ab.py --lib $B/libtilec.so --rounds 5 --cases ${ATTN_CASES:-${C#,}} > $L/attn_ab.log 2>&1
grep -E "^\| D|Error" $L/attn_ab.log | cut -c1-150; fi
fi
if step decode; then
echo "== 2k. decode: paged split-KV against the copy bandwidth, B 1-64, L 4k-128k, and the variants of DECODE_VARIANTS [$(el) s]"
timeout -k 10 ${DECODE_TIMEOUT:-200} python3 bench/bench.py --lib $B/libtilec.so --only decode --decode-variants "${DECODE_VARIANTS:-}" ${DECODE_ARGS:-} > $L/decode.log 2>&1
echo "bench exit $?" >> $L/decode.log; grep -E "copy bandwidth|bench exit" $L/decode.log > $L/decode_table.txt; cat $L/decode_table.txt
fi
if step coldload; then
echo "== 2i. cold loads by assembler against ptxas alone (bench/coldload.py) [$(el) s]"
timeout -k 10 ${COLDLOAD_TIMEOUT:-200} python3 bench/coldload.py --lib $B/libtilec.so --runs 3 > $L/coldload.log 2>&1; echo "coldload exit $?" >> $L/coldload.log
grep -E "^\||FAIL|exit" $L/coldload.log > $L/coldload_table.txt; cat $L/coldload_table.txt
fi
echo "== 3. the branches' items [$(el) s]"
for p in ${PENDING_ITEMS:-}; do [ -f "$p" ] || continue
  left=$(( ${PENDING_BUDGET:-560} - $(el) )); [ $left -gt 20 ] || { echo "no time left for $p"; continue; }
  n=$(basename $p .sh); mkdir -p $L/$n
  echo "-- $p ($left s left)"
  OUT=$L/$n timeout -k 10 $left sh $p "$(dirname "$B")" > $L/$n.log 2>&1; echo "$p exit $?"
  tail -25 $L/$n.log
done
echo "[all: $(el) s]"
cat $L/asm_table.txt $L/coldload_table.txt $L/san_table.txt $L/sanrows_table.txt $L/ncurows_table.txt $L/smallm_table.txt $L/rows_table.txt $L/fp8_table.txt $L/fp8probe_table.txt $L/attn64_table.txt $L/attn_table.txt $L/decode_table.txt $L/attnbwd_table.txt $L/layer_table.txt 2>/dev/null | cut -c1-160
save
echo "== tests"; cat $L/table.txt
