/* wgmma_lazy.c: requires the main-loop plan (dot_plan.c) and a loop body emitted op by op
 * (codegen.c cg_emit_region); keeps program semantics (a group's result registers are read only
 * after a wait that completes it, and every group of an iteration is complete at the body's end);
 * with TILEC_WGMMA_LAZY=1, in a loop whose wgmma dots would each wait for their own group
 * (wait_group 0 right after the commit), commits each dot's group without a wait and waits for it
 * only before the first op that reads its result, with wait_group N (N: the groups committed
 * after it), so the tensor cores run a dot while the warps do the work between its commit and
 * that op.  docs/pipelines.md "Lazy wgmma waits".
 *
 * Why: the one-pass attention backward (bench/variants/attn_bwd_fused.tile) is one warpgroup
 * that alternates tensor work (S^T, dP^T, dV, dK) and CUDA-core work (exp, dS, dQ's staging),
 * each dot waited for at once: nothing overlaps (bench/RESULTS.md "bwd7").  With dP^T issued
 * next to S^T (early issue, below), the exp of P runs under dP^T's group, dS under dV's, dQ's
 * staging and mma.sync under dK's (FlashAttention-3's order of waits in its backward step).
 *
 * Which loops: TILEC_WGMMA_LAZY=1, a ring not warp-specialized without lag or late refill, at
 * least three wgmma dots in the body itself (the forward's two gain nothing: 8-12 more bytes of
 * spills in attn.tile and attn_gqa.tile with two), none in flight across iterations, deferred, chained,
 * a step late, promoting, or with a B staged each step (their own wait rules stay theirs), and
 * the register budget below.
 * What ends a pending group: an op reading its result (wait_group N, then the operand fence of
 * every completed result), an op with regions, the yield and the body's end (wait_group 0).
 * Each wait sits in a block of its own behind a branch neither LLVM nor ptxas folds, and again
 * at the join (emit_overlap.c's lesson: ptxas moved a bare wait to its block's top).
 *
 * Early issue: after a dot's commit, the first later wgmma dot of the body (before any store,
 * atomic, region or mma.sync dot) whose operands need nothing the ops between compute (A and B
 * from a ring slot or a resident slot, the accumulator zeros or a value defined before) is issued
 * right away instead of at its place (the backward's dP^T = V dO^T, past dV = P^T dO, after
 * S^T = K Q^T: the exp of P then runs under dP^T's group).
 *
 * Registers: a pending group keeps its accumulators and its register A live longer, and the early
 * dot's accumulators live beside the first one's.  Only loops whose wgmma accumulators take at
 * most CG_LAZY_REGS (160) registers a thread qualify: the backward at D64 (4 x 32: 174 -> 211
 * registers, 0 spills, two CTAs an SM still; with TILEC_WGMMA_STAGED_A=1's fifth dot, dQ, 5 x 32:
 * 195 -> 217) does, D128 (32 + 64 + 32 + 64 = 192, at 255 already)
 * does not: lazy waits there spilled 56-68 bytes with early issue or without it, and 60-68 with only
 * the carried accumulators' dots (dV, dK) lazy (ptxas 13.0).
 *
 * Wide loops: a loop whose accumulators take more than CG_LAZY_REGS but at most CG_LAZY_WIDE_REGS (192)
 * registers a thread takes the same waits when it is one warpgroup (128 threads: 255 registers still
 * leave two CTAs an SM, and a loop past 160 accumulator registers has more than 170 and no room for
 * three) -- by default since the twenty-seventh session, TILEC_WGMMA_LAZY_WIDE=0 off -- and, with
 * TILEC_WGMMA_LAZY_WIDE=1, also when its kernel's shared memory already holds it to one CTA an SM (more
 * than half of sm_90a's 227 KB persistent: the longer live ranges cost no CTAs) with at most 256
 * threads (255 registers each).
 * The D128 dK/dV loop of examples/attn_bwd.tile (32 + 64 + 32 + 64): on its old tile (128 keys x 64
 * queries, two warpgroups, 198784 B) since its LSE and Dl rows come from the ring (emit_ring_rows.c)
 * the waits of FA3's order fit, 255 registers and 0 spills full, 12 bytes causal; on the sm_90a tile of
 * the twenty-sixth session (64 x 64, one warpgroup, two CTAs an SM) 238 -> 255 registers, 0 spills full
 * and causal, the whole backward 1.035 / 1.059x by interleaved rounds (ptxas 13.0; bench/RESULTS.md "bwd8",
 * "twenty-seventh session"). */
#include <stdio.h>

#include "code_env.h"
#include "ring.h"

#ifndef CG_LAZY_REGS
#define CG_LAZY_REGS 160
#endif
#ifndef CG_LAZY_WIDE_REGS
#define CG_LAZY_WIDE_REGS 192
#endif
#define CG_LAZY_SM90_SMEM (227 * 1024)

/* Wide lazy waits for a loop of `regs` accumulator registers a thread above CG_LAZY_REGS (the header's
 * "Wide loops"): mode 1 (the default) a loop of one warpgroup, mode 2 (TILEC_WGMMA_LAZY_WIDE=1) also
 * one of two warpgroups whose kernel its shared memory holds to one CTA an SM, mode 0 (=0) none. */
static bool wide_ok(const cg *g, int regs, int mode) {
  return mode > 0 && regs > CG_LAZY_REGS && regs <= CG_LAZY_WIDE_REGS &&
         (g->threads <= 128 || (mode == 2 && g->threads <= 256 && 2 * g->smem_persist > CG_LAZY_SM90_SMEM));
}

bool cg_lazy_wait_loop(cg *g, int32_t L) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  bool narrow = tl_code_env_on("TILEC_WGMMA_LAZY");
  int wide_mode = tl_code_env_off("TILEC_WGMMA_LAZY_WIDE") ? 0 : tl_code_env_on("TILEC_WGMMA_LAZY_WIDE") ? 2 : 1;
  if (!p || L < 0 || (!narrow && !wide_mode)) return false;
  if (p->ws || p->rope || p->q_tma || tl_op_at(f, L)->opc != TL_OP_for) return false;
  cg_ring *R = NULL;
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == L) R = &p->rings[i];
  if (!R || R->ws || R->lag || R->late) return false;
  int n = 0, regs = 0;
  for (int k = 0; k < p->nwg; k++) {
    tl_op *o = tl_op_at(f, p->wg_dots[k]);
    if (!tl_op_inside(f, p->wg_dots[k], L)) continue;
    if (o->parent != L || p->wg_defer[k] || p->wg_chain[k] || p->wg_sink[k] || p->wg_staged_b[k] ||
        cg_dot_promotes(g, o))
      return false;
    n++;
    regs += tl_layout_nregs(cg_layout(g, o->res[0]));
  }
  if (n < 3) return false; /* (attention's forward, two dots: its softmax reads S at once, P V ends the body) */
  bool wide = wide_ok(g, regs, wide_mode), on = (narrow && regs <= CG_LAZY_REGS) || wide;
  /* --explain (the tma line): what the loop got, and why not when a switch asked for it */
  if (!p->lazy_note && (on || narrow || tl_code_env("TILEC_WGMMA_LAZY_WIDE"))) {
    char note[240];
    if (on)
      snprintf(note, sizeof note, "lazy wgmma waits%s: the loop's %d wgmma dots wait before their results' first readers "
               "(%d accumulator registers a thread)",
               !wide ? "" : g->threads <= 128 ? " (wide: one warpgroup; TILEC_WGMMA_LAZY_WIDE=0 off)"
                                              : " (wide: TILEC_WGMMA_LAZY_WIDE, one CTA an SM by shared memory)",
               n, regs);
    else if (regs <= CG_LAZY_REGS)
      snprintf(note, sizeof note, "lazy wgmma waits off: the loop's %d wgmma dots take %d accumulator registers a thread "
               "(TILEC_WGMMA_LAZY_WIDE takes only more than %d)", n, regs, CG_LAZY_REGS);
    else
      snprintf(note, sizeof note, "lazy wgmma waits off: the loop's %d wgmma dots take %d accumulator registers a thread "
               "(more than %d); %s %d%s", n, regs, CG_LAZY_REGS,
               wide_mode == 2 ? "not wide: more than" : "TILEC_WGMMA_LAZY_WIDE=1 takes up to",
               CG_LAZY_WIDE_REGS,
               wide_mode == 2 ? ", or two warpgroups with room for two CTAs an SM"
               : wide_mode == 1 ? " at one CTA an SM (one warpgroup: by default)" : " at one CTA an SM or one warpgroup");
    p->lazy_note = tl_strdup(&g->ctx->arena, note);
  }
  return on;
}

void cg_lazy_wait_push(cg *g, int32_t res) {
  cg_plan *p = g->plan;
  if (p->nlazy >= (int)(sizeof p->lazy_res / sizeof p->lazy_res[0]))
    TL_INTERNAL(g->ctx, "codegen: more than %d wgmma groups pending", p->nlazy);
  p->lazy_res[p->nlazy++] = res;
}

/* wait_group n, in a block of its own and again at the join; then the first `done` pending
 * results are complete: their operand fence, and they leave the list */
static void wait_for(cg *g, int done) {
  cg_plan *p = g->plan;
  int n = p->nlazy - done;
  char text[64];
  snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %d;", n);
  LLVMValueRef tid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
  LLVMBasicBlockRef wb = LLVMAppendBasicBlockInContext(g->C, g->fn, "lazy.wait");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "lazy.waited");
  cg_cond_br_likely(g, LLVMBuildICmp(g->B, LLVMIntULT, tid, cg_i32(g, 1024), ""), wb, jb);
  LLVMPositionBuilderAtEnd(g->B, wb);
  cg_asm_void(g, text, "~{memory}", NULL, 0);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
  cg_asm_void(g, text, "~{memory}", NULL, 0);
  for (int i = 0; i < done; i++) cg_wgmma_fence_val(g, p->lazy_res[i]);
  for (int i = done; i < p->nlazy; i++) p->lazy_res[i - done] = p->lazy_res[i];
  p->nlazy = n;
}

void cg_lazy_wait_flush(cg *g) {
  if (g->plan && g->plan_f == g->f && g->plan->nlazy) wait_for(g, g->plan->nlazy);
}

void cg_lazy_wait_before_op(cg *g, int32_t id) {
  cg_plan *p = g->plan;
  if (!p || g->plan_f != g->f || !p->nlazy) return;
  tl_op *o = tl_op_at(g->f, id);
  if (o->nregions > 0) {
    wait_for(g, p->nlazy);
    return;
  }
  int done = 0; /* the oldest pending results up to the last this op reads */
  for (int i = 0; i < p->nlazy; i++)
    for (int k = 0; k < o->nopnd; k++)
      if (o->opnd[k] == p->lazy_res[i] && i + 1 > done) done = i + 1;
  if (done) wait_for(g, done);
}

void cg_lazy_issue_next(cg *g, tl_op *dot) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int32_t L = dot->parent;
  tl_region *r = &tl_op_at(f, L)->regions[0];
  if (g->early && g->early[dot - f->ops.data]) return; /* itself issued early: positions after it are not here yet */
  int32_t *pos;
  int at = cg_body_positions(g, r, dot, &pos);
  if (at < 0) return;
  for (int i = at + 1; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(f, id);
    if (o->flags & TL_OPF_DEAD) continue;
    if (cg_body_scan_stops(o)) return;
    if (o->opc != TL_OP_dot || (g->early && g->early[id])) continue;
    if (cg_wg_index(p, id) < 0) return; /* an mma.sync dot: the scan ends */
    int32_t a = o->opnd[0], b = o->opnd[1], acc = o->opnd[2];
    bool slots = (p->vkind[a] == SRC_STREAM || cg_resident_slot(g, a, id)) &&
                 (p->vkind[b] == SRC_STREAM || cg_resident_slot(g, b, id));
    int32_t zd = tl_val(f, acc)->def;
    bool zero_here = zd >= 0 && tl_op_at(f, zd)->opc == TL_OP_const && tl_op_at(f, zd)->parent == L && pos[zd] > at;
    if (!slots || (!zero_here && (!cg_body_ready(g, r, pos, at, acc) || !g->vals[acc].r)))
      continue; /* (dV's P from registers: past it) */
    if (!g->early) {
      g->early = tl_alloc(&g->ctx->arena, (size_t)f->ops.len + 1);
      for (int j = 0; j <= f->ops.len; j++) g->early[j] = 0;
    }
    if (zero_here && !g->vals[acc].r) { /* its zeros first (a constant: nothing else to wait for) */
      cg_emit_op(g, zd);
      g->early[zd] = 1;
    }
    g->early[id] = 1; /* (before: the dot's own lazy path looks past it) */
    cg_emit_dot(g, o);
    return;
  }
}
