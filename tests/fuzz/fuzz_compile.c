/* fuzz_compile.c: libFuzzer target over the whole compiler on source text: the input's source
 * goes through the public API to PTX (no ptxas) under a set of the code-changing environment
 * switches that bytes 0 and 1 pick, so the back end's opt-in mechanisms (q by TMA, the bf16x2
 * dequantization, the doubled staged ring, the cooperative / warp-specialized GEMM, the late
 * refill, the tanh.approx epilogue, scratch over a drained ring, fp8 promote parts, atomics by
 * TMA reduce, the causal mask by differences, RoPE in fa3's producer, the narrow copies) meet malformed and
 * odd-but-valid kernels alike.  A diagnostic or an unsupported
 * construct is a fine answer; a finding (__builtin_trap, so libFuzzer saves the input) is
 * TILEC_ERROR_INTERNAL, a crash or a sanitizer report.  The switches, the arch and the log are
 * printed first (stderr).
 *
 * Input layout: byte 0: bit 0 TILEC_ATTN_Q_TMA=1 (bit 0 with bit 6: =2) and TILEC_ATTN_O_TMA=0, bit 1
 * TILEC_DEQUANT_BF16X2=1, bit 2 TILEC_STAGED_DOUBLE=1, bit 3 TILEC_WS=coop, bit 4
 * TILEC_LATE_REFILL=2 and TILEC_RING_IN_RANGE=1 (the cp.async ring's stages past the loop not copied)
 * with TILEC_ALIGN_TERMS=1 and TILEC_WHOLE_ONCE=1 (a stage's alignment test by terms, the whole-tile test once
 * a program: emit_copy_issue.c), bit 5 the arch sm_80 instead of sm_90a, bit 7 -O0; byte 1 (bit 7 ignored,
 * so 0x80 is "none": inputs hold no NUL): bit 0 TILEC_TANH_APPROX=1 (with bit 6: =2), bit 1
 * TILEC_SCRATCH_OVER_RING=0 (the default turned off), bit 2 TILEC_PROMOTE_PARTS=1, TILEC_HOIST_OPERAND=0 and TILEC_GATHER_RUNS=0 (the default
 * rewrite of a rank-1 gather constant over runs, passes/gather_runs.c, turned off), bit 3 TILEC_ATOMIC_TMA=1 (with bit 6:
 * =2) and TILEC_WGMMA_LAZY_WIDE=1 (lazy wgmma waits of a loop of 161-192 accumulator registers at
 * one CTA an SM too; one warpgroup's by default), bit 4 TILEC_MASK_DIFF=1 (with bit 6: =2), bit 5 TILEC_ROPE_PRODUCER=1 with
 * TILEC_ATTN_WS=fa3, TILEC_ATTN_O_SLOT=1 (fa3's O through the last ring stage) with TILEC_ATTN_O_SLOT_K=1 (its K
 * slot after "q empty"), TILEC_ATTN_Q_PREFETCH=1 (the tile's q asked of L2 by the producer), TILEC_ATTN_SKIP0=1 (its
 * iteration 0 without the value dot of P = 0) and TILEC_ATTN_SCHED=1 (with
 * bit 6: =2; causal fa3 tiles from a global atomic counter, attn_sched.c), bit 6 also TILEC_ATTN_ORDER=2 (a causal grid's tail order, span 2 CTAs) and
 * TILEC_ATTN_PERSIST=1 (a full attention kernel without a producer persistent, the next tile's q and
 * first stage at the loop's exit);
 * byte 0's bit 6 also TILEC_LOAD_AHEAD=1 (a wgmma main loop's small loads after its dot issued one
 * iteration ahead and carried, passes/load_ahead.c); byte 0
 * bit 6 (whatever bit 0) also TILEC_NARROW_COPY=1 and TILEC_LOOP_SPLIT_LOAD=1 (a ring loop's own tile
 * loads in the split form, emit_memory.c) with TILEC_ROW_STREAM=0 (the ring rows, a default, off), and
 * the option tma-fallback=entry (the CLI's PTX: each TMA form's no-TMA form as a second entry, merged
 * into the module, lib/api/notma_entry.c); byte 1 bit 5 with byte 0 bit 2: the option attn-o-slot-k=0 (which wins
 * over the switch's =1); the rest is the source.
 * Inputs with a NUL byte or over 16 KiB are skipped. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("TILEC_CACHE", "0", 1); /* the compiler, not the disk cache, is under test */
  return 0;
}

static void set_switch(const char *name, bool on, const char *value) {
  if (on) setenv(name, value, 1);
  else unsetenv(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3 || size > 16384 || memchr(data, 0, size)) return 0;
  uint8_t sw = data[0], sw1 = data[1];
  set_switch("TILEC_ATTN_Q_TMA", sw & 1, sw & 64 ? "2" : "1");
  set_switch("TILEC_ATTN_O_TMA", sw & 1, "0"); /* (on by default: the bit turns it off) */
  set_switch("TILEC_DEQUANT_BF16X2", sw & 2, "1");
  set_switch("TILEC_STAGED_DOUBLE", sw & 4, "1");
  set_switch("TILEC_WS", sw & 8, "coop");
  set_switch("TILEC_LATE_REFILL", sw & 16, "2");
  set_switch("TILEC_RING_IN_RANGE", sw & 16, "1");
  set_switch("TILEC_ALIGN_TERMS", sw & 16, "1");
  set_switch("TILEC_WHOLE_ONCE", sw & 16, "1");
  set_switch("TILEC_TANH_APPROX", sw1 & 1, sw1 & 64 ? "2" : "1");
  set_switch("TILEC_SCRATCH_OVER_RING", sw1 & 2, "0"); /* (on by default: the bit turns it off) */
  set_switch("TILEC_PROMOTE_PARTS", sw1 & 4, "1");
  set_switch("TILEC_ATOMIC_TMA", sw1 & 8, sw1 & 64 ? "2" : "1");
  set_switch("TILEC_WGMMA_LAZY_WIDE", sw1 & 8, "1");
  set_switch("TILEC_MASK_DIFF", sw1 & 16, sw1 & 64 ? "2" : "1");
  set_switch("TILEC_ROPE_PRODUCER", sw1 & 32, "1");
  set_switch("TILEC_ATTN_WS", sw1 & 32, "fa3");
  set_switch("TILEC_ATTN_O_SLOT", sw1 & 32, "1");
  set_switch("TILEC_ATTN_O_SLOT_K", sw1 & 32, "1");
  set_switch("TILEC_ATTN_Q_PREFETCH", sw1 & 32, "1");
  set_switch("TILEC_ATTN_SCHED", sw1 & 32, sw1 & 64 ? "2" : "1");
  set_switch("TILEC_ATTN_SKIP0", sw1 & 32, "1");
  set_switch("TILEC_ATTN_ORDER", sw1 & 64, "2");
  set_switch("TILEC_ATTN_PERSIST", sw1 & 64, "1");
  set_switch("TILEC_LOAD_AHEAD", sw & 64, "1");
  set_switch("TILEC_NARROW_COPY", sw & 64, "1");
  set_switch("TILEC_LOOP_SPLIT_LOAD", sw & 64, "1");
  set_switch("TILEC_ROW_STREAM", sw & 64, "0"); /* (on by default: off, so the split form has loads) */
  set_switch("TILEC_HOIST_OPERAND", sw1 & 4, "0"); /* (on by default: the bit turns it off) */
  set_switch("TILEC_GATHER_RUNS", sw1 & 4, "0"); /* (on by default: the bit turns it off) */
  const char *arch = sw & 32 ? "sm_80" : "sm_90a";
  int opt_level = sw & 128 ? 0 : 3;
  char *src = malloc(size);
  if (!src) return 0;
  memcpy(src, data + 2, size - 2);
  src[size - 2] = 0;
  tilec_options *opts = NULL;
  tilec_program *prog = NULL;
  tilec_status st = tilec_options_create(&opts);
  if (st == TILEC_OK) st = tilec_options_set_arch(opts, arch);
  if (st == TILEC_OK) st = tilec_options_set_opt_level(opts, opt_level);
  if (st == TILEC_OK && (sw & 64)) st = tilec_options_set(opts, "tma-fallback", "entry");
  /* (the option attn-o-slot-k=0 against TILEC_ATTN_O_SLOT_K=1: the option wins, emit_o_slot.c) */
  if (st == TILEC_OK && (sw1 & 32) && (sw & 4)) st = tilec_options_set(opts, "attn-o-slot-k", "0");
  if (st == TILEC_OK) st = tilec_program_create(&prog, src, "fuzz_compile.tile", opts);
  if (st == TILEC_OK) st = tilec_program_compile(prog, TILEC_STAGE_PTX);
  if (st == TILEC_ERROR_INTERNAL) {
    fprintf(stderr, "fuzz_compile: %s (switches 0x%02x 0x%02x, arch %s, -O%d)\n--- log:\n%s\n",
            tilec_status_string(st), sw, sw1, arch, opt_level, prog ? tilec_program_log(prog) : "");
    __builtin_trap();
  }
  tilec_program_destroy(prog);
  tilec_options_destroy(opts);
  free(src);
  return 0;
}
