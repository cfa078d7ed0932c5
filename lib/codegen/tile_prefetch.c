/* tile_prefetch.c: requires the main-loop plan (a persistent kernel, no warp
 * specialization, one ring fed by TMA); at the main loop's exit issues the
 * next tile's first ring stages, so their loads run under this tile's
 * epilogue, and the next tile's ring prologue issues none.  Opt-in:
 * TILEC_TILE_PREFETCH=1, and for wgmma attention without a producer
 * TILEC_ATTN_PERSIST=1 (route_pipeline's f->attn_persist).  docs/pipelines.md "Persistent CTAs".
 *
 * Why it is safe: after the drain (every warp's wgmma groups complete) and
 * a CTA barrier no warp reads a slot, and every stage this tile issued was
 * waited for (a stage is issued only when its iteration runs), so the
 * mbarriers of slots 0 .. S-2-lag are at rest and the next tile may arm
 * them.  The next tile's coordinates come from the body's scalars before
 * the loop, emitted again with that tile's program ids (the producer of the
 * warp-specialized kernel does the same, emit_ws.c), their bindings put
 * back for this tile's epilogue.  A flag (uniform: the test of the next
 * tile is the same in every thread) tells the next tile's prologue. */
#include <string.h>

#include "ring.h"
#include "code_env.h"

const char *cg_tile_prefetch_plan(cg *g, cg_ring *R) {
  cg_plan *p = g->plan;
  bool attn = g->f->attn_persist; /* (route_pipeline: TILEC_ATTN_PERSIST / attn-persist = 1..3) */
  if (!attn && !tl_code_env_on("TILEC_TILE_PREFETCH")) return ""; /* (off: nothing to say) */
  if (g->f->attn_persist == 2) return "TILEC_ATTN_PERSIST=2: persistent alone";
  if (p->ws) return "the producer warpgroup runs ahead already";
  if (p->cluster) return "a cluster";
  /* attention's dots wait for their groups in the loop (a 2-stage ring); the prefetch comes after
   * the exit's drain, so only the ring's shape and the scalars matter */
  const char *why = attn ? cg_ws_unfit_after_drain(g, R) : cg_ws_unfit(g, R);
  if (why) return why;
  R->prefetch = true;
  return NULL;
}

void cg_tile_prefetch_flag(cg *g, cg_ring *R) {
  if (R->pfv) return; /* (0 in the kernel's entry) */
  R->pfv = LLVMBuildAlloca(g->PB, g->i32, "tile.prefetched");
  LLVMBuildStore(g->PB, cg_i32(g, 0), R->pfv);
}

void cg_tile_prefetch(cg *g, cg_ring *R) {
  tl_func *f = g->f;
  const cg_tiles *T = R->pf_tiles;
  cg_tile_prefetch_flag(g, R);
  cg_barrier(g); /* every warp has drained its groups: no slot is read */
  LLVMValueRef t = LLVMBuildLoad2(g->B, g->i32, T->tv, "");
  LLVMValueRef tn = LLVMBuildAdd(g->B, t, cg_sreg(g, "nctaid", 0), "tile.next");
  LLVMValueRef go = LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntULT, tn, T->ntiles, ""), R->tma_ok, "");
  LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "tile.prefetch");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "tile.prefetched");
  LLVMBuildCondBr(g->B, go, ib, jb);
  LLVMPositionBuilderAtEnd(g->B, ib);
  /* the next tile's scalars before the loop, this tile's bindings kept */
  LLVMValueRef pid_now[3] = {g->pid[0], g->pid[1], g->pid[2]}, pid_next[3];
  cg_tile_pids(g, tn, pid_next);
  for (int d = 0; d < 3; d++) g->pid[d] = pid_next[d];
  tl_region *body = &f->body;
  int n = 0;
  while (n < body->ops.len && body->ops.data[n] != R->for_op) n++;
  cg_val *saved = tl_alloc(&g->ctx->arena, sizeof *saved * (size_t)(n + 1));
  bool *redone = tl_alloc(&g->ctx->arena, sizeof *redone * (size_t)(n + 1));
  memset(redone, 0, sizeof *redone * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    tl_op *o = tl_op_at(f, body->ops.data[i]);
    if ((o->flags & TL_OPF_DEAD) || o->nres != 1 || !cg_ws_scalar(f, o->res[0])) continue;
    saved[i] = g->vals[o->res[0]];
    redone[i] = true;
    cg_emit_op(g, body->ops.data[i]);
  }
  tl_op *lo = tl_op_at(f, R->for_op);
  LLVMValueRef lo64 = cg_to_i64(g, cg_get(g, lo->opnd[0])->r[0]);
  LLVMValueRef step64 = cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]);
  LLVMTypeRef ivty = cg_iv_type(g, R->for_op);
  for (int k = 0; k + 1 + R->lag < R->stages; k++) {
    LLVMValueRef x = LLVMBuildAdd(g->B, lo64, LLVMBuildMul(g->B, step64, cg_i64(g, k), ""), "");
    LLVMValueRef ivs = ivty == g->i64 ? x : LLVMBuildTrunc(g->B, x, ivty, "");
    cg_tma_issue(g, R, ivs, cg_iv_in_range(g, R->for_op, x, step64), cg_i32(g, k));
  }
  cg_q_tma_plain_prefetch(g); /* (TILEC_ATTN_PERSIST=1: the next tile's q into its free slot, emit_q_tma.c) */
  for (int i = n - 1; i >= 0; i--)
    if (redone[i]) g->vals[tl_op_at(f, body->ops.data[i])->res[0]] = saved[i];
  for (int d = 0; d < 3; d++) g->pid[d] = pid_now[d];
  LLVMBuildStore(g->B, cg_i32(g, 1), R->pfv);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}
