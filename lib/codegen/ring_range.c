/* ring_range.c: requires the ring (emit_ring.c) and cg_iv_in_range (emit_tma.c); keeps the ring's
 * wait_group counts; the cp.async ring copies a stage only when its iteration runs, the TMA ring's rule
 * (by default for split loops, cg_ring_range_on; TILEC_RING_IN_RANGE=1 every ring, =0 none).
 * Without it the ring's refill of stage i + S-1 and the prologue's stages are issued whatever the
 * loop's bound, so every loop copies S-1 stages past its end, which matters where loops are short:
 * real loads of the next split's tiles in a split-K program (gemm_w4a16_splitk BN128 x8 at K = 4096:
 * 7 stages copied for 4 used), zero-fills past the tensor.  Here a uniform branch skips the stage's
 * copies; its commit group stays (empty), so the ring's wait_group counts do not change (emit_ring.c
 * nests the prologue's stages: stage k+1 inside stage k's branch).  docs/pipelines.md "Where W4A16's
 * time goes at M = 1..16". */
#include "code_env.h"
#include "ring.h"

/* =1 every cp.async ring, =0 none; unset (the default since the twenty-fifth session): the rings of loops
 * whose range starts at a program's own offset (a split-K / split-KV program's `range(ks * KS, ...)`: short,
 * and the stages past its end are the next program's tiles: W4A16 split-K x8 at M 1..16 +4-12 %, H100). */
bool cg_ring_range_on(cg *g, int32_t L) {
  if (tl_code_env_on("TILEC_RING_IN_RANGE")) return true;
  if (tl_code_env_off("TILEC_RING_IN_RANGE")) return false;
  return L >= 0 && tl_from_program_id(g->f, tl_op_at(g->f, L)->opnd[0], -1);
}

LLVMBasicBlockRef cg_ring_range_begin(cg *g, int32_t L, LLVMValueRef x64, LLVMValueRef step64, LLVMBasicBlockRef *skip) {
  LLVMValueRef in = cg_iv_in_range(g, L, x64, step64);
  LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.stage.in");
  LLVMBasicBlockRef sb = skip ? LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.stage.skip") : NULL;
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.stage.done");
  if (skip) *skip = sb;
  LLVMBuildCondBr(g->B, in, ib, sb ? sb : jb);
  LLVMPositionBuilderAtEnd(g->B, ib);
  return jb;
}

void cg_ring_range_end(cg *g, LLVMBasicBlockRef jb) {
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}
