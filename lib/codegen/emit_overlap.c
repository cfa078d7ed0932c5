/* emit_overlap.c: requires the main-loop plan (dot_plan.c) with its wgmma
 * dots, ring lags and warp specialization decided; under
 * TILEC_ATTN_OVERLAP=1|3|4 (opt-in, measured slower on the H200 so far:
 * bench/RESULTS.md eighth session) issues a deferred wgmma dot (attention's
 * O += P V of iteration j) one iteration late, right after the waiting dot
 * of iteration j+1 (S = q k^T), and makes that dot wait with wait_group 1,
 * so the softmax of S_{j+1} runs while the tensor cores compute
 * O += P_j V_j (FlashAttention-3's intra-warpgroup overlap).
 * docs/pipelines.md "Attention: the value dot one step late".
 *
 * Iteration j of the loop, as emitted:
 *   ring step (slot j full; the slot refilled is j-2's: with the ring's lag
 *     it is stage j+S-2, and every group reading it was waited for below)
 *   [3, 4: O = O * alpha_{j-1}, the carried scale; ptxas mixes these FMULs
 *     into the score dot's HGMMA issue]
 *   S_j = q k_j^T: fence, wgmma, commit             (no wait)
 *   [4: a CTA barrier: both warpgroups' score dots are queued first]
 *   O += P_{j-1} V_{j-1}: wgmma, commit, on the carried accumulator and the
 *     carried packed P, B from slot j-1
 *   wait_group 1: S_j complete, O += P V still running; the softmax of S_j
 *   wait_group 0 before the carried accumulator's first use (1: acc *
 *     alpha_j; 3, 4: that op, which is not emitted there), in a block of its own
 *   the dot "O += P_j V_j" itself: nothing issued; P_j packed (after the
 *     wait: packing it while the previous group runs made ptxas serialize
 *     every wgmma, C7513), its words and slot j stored for iteration j+1; its
 *     result is its accumulator operand (1) or the carried accumulator with
 *     alpha_j stored (3, 4)
 * Iteration 0 issues the value dot with P = 0 on slot 0 (V_0, finite data:
 * O stays 0), under its softmax (TILEC_ATTN_SKIP0=1: an empty group instead).  After the loop (when it ran) the last
 * value dot is issued and waited for.  No group crosses the back edge. */
#include <stdio.h>
#include <string.h>

#include "code_env.h"
#include "ring.h"

/* Index in p->wg_dots of a sunk dot of loop L, from `from` on, or -1. */
static int sink_of(cg_plan *p, tl_func *f, int32_t L, int from) {
  for (int k = from; k < p->nwg; k++)
    if (p->wg_sink[k] && tl_op_at(f, p->wg_dots[k])->parent == L) return k;
  return -1;
}

/* The ring of loop L, or NULL. */
static cg_ring *ring_of(cg_plan *p, int32_t L) {
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == L) return &p->rings[i];
  return NULL;
}

/* Why deferred dot k cannot be issued one iteration late (else NULL, its waiting dot recorded). */
static const char *sink_unfit(cg *g, int k) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int32_t D = p->wg_dots[k];
  tl_op *o = tl_op_at(f, D);
  int32_t L = o->parent;
  cg_ring *R = ring_of(p, L);
  if (!R || !R->lag) return "the ring keeps no group in flight (fewer than 3 stages)";
  /* warp-specialized: the consumers release the late dot's slot after its wait (cg_ws_release);
   * form 4's CTA barrier orders lock-stepped warpgroups, which the producer form has not */
  if (R->ws && p->sink_form == 4) return "form 4 (a CTA barrier) on a warp-specialized kernel";
  int32_t a = o->opnd[0], b = o->opnd[1];
  const tl_layout *lc = cg_layout(g, o->res[0]);
  if (p->vkind[a] != SRC_STAGED || !cg_a_from_regs(g, a, lc, 2) || tl_dtype_bytes((tl_dtype)tl_val(f, a)->type.dtype) != 2)
    return "A is not in registers";
  if (p->vkind[b] != SRC_STREAM || p->streams[p->vstream[b]].for_op != L || p->streams[p->vstream[b]].wg_tr)
    return "B does not stream through the loop's ring";
  if (cg_dot_promotes(g, o)) return "a promoting dot";
  /* the loop's wgmma dots: it and one that waits for all groups, before it in the body */
  int others = 0, waiting = -1;
  for (int i = 0; i < p->nwg; i++) {
    tl_op *w = tl_op_at(f, p->wg_dots[i]);
    if (i == k || w->parent != L) continue;
    if (p->rope && p->wg_dots[i] == p->rope->dot_first) continue; /* (chained to the waiting one: emit_rope.c) */
    others++;
    if (!p->wg_inflight[i] && !p->wg_defer[i] && cg_body_pos(f, L, p->wg_dots[i]) < cg_body_pos(f, L, D)) waiting = i;
  }
  if (others != 1 || waiting < 0) return "the loop's wgmma dots are not a waiting dot and this one";
  p->sink_waiter[k] = p->wg_dots[waiting];
  return NULL;
}

/* The fa3 note's words for TILEC_ATTN_KV_SPLIT (emit_ws.c "K and V apart"). */
static const char *kv_note(const cg_ring *R) {
  if (R && R->kv_split)
    return " for K and another for V (TILEC_ATTN_KV_SPLIT=1: K released after the score dot's wait, V after the "
           "late value dot's, so K of step j+1 loads while O += P V of step j-1 still reads the stage)";
  if (R && R->kv_lag2) return " on a 2-stage ring (TILEC_ATTN_KV_SPLIT=2: K and V of a stage released together)";
  return "";
}

void cg_plan_overlap(cg *g) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  const char *env = tl_code_env("TILEC_ATTN_OVERLAP");
  /* 1: the late dot alone; 3: also the rescale moved to its issue; 4: also both warpgroups' score
   * dots issued first (2, P packed before the wait, made ptxas serialize every wgmma: C7513) */
  int form = env && (env[0] == '1' || env[0] == '3' || env[0] == '4') && !env[1] ? env[0] - '0' : 0;
  /* fa3 (TILEC_ATTN_WS or the option attn-ws; route_pipeline sets f->attn_fa3): the turns with
   * form 1 inside them, unless a form is set (FlashAttention-3 rescales O after the wait at
   * D <= 128, as form 1 does) */
  if (!form && f->attn_fa3 && !(env && env[0] == '0')) form = 1;
  if (!form) return;
  p->sink_form = form;
  int32_t *uses = tl_count_uses(f);
  tl_sbuf note = {0};
  for (int k = 0; k < p->nwg; k++) {
    if (!p->wg_defer[k]) continue;
    const char *why = sink_unfit(g, k);
    tl_op *o = tl_op_at(f, p->wg_dots[k]);
    if (why) {
      tl_sbuf_printf(&note, "%sdot at %d:%d not issued a step late (%s)", note.len ? "; " : "", o->loc.line, o->loc.col, why);
      continue;
    }
    int32_t L = o->parent, carried = p->wg_carried[k];
    tl_region *body = &tl_op_at(f, L)->regions[0];
    int32_t firstpos = cg_body_pos_first_use(f, L, carried);
    /* (the defer rule put the first use after the waiting dot) */
    if (firstpos == INT32_MAX || firstpos <= cg_body_pos(f, L, p->sink_waiter[k])) continue;
    int32_t first = body->ops.data[firstpos];
    const tl_type *at = &tl_val(f, o->opnd[0])->type;
    const tl_layout *lc = cg_layout(g, o->res[0]);
    p->wg_sink[k] = true;
    p->sink_wait_op[k] = first;
    p->sink_mul[k] = p->sink_scale[k] = -1;
    /* form >= 3: the accumulator operand is carried * scale, the carried value's only use, one layout */
    tl_value *av = tl_val(f, o->opnd[2]);
    tl_op *mul = av->def >= 0 ? tl_op_at(f, av->def) : NULL;
    if (form >= 3 && mul && mul->opc == TL_OP_mul && av->def == first && uses[o->opnd[2]] == 1 && uses[carried] == 1 &&
        (mul->opnd[0] == carried || mul->opnd[1] == carried)) {
      int32_t sc = mul->opnd[0] == carried ? mul->opnd[1] : mul->opnd[0];
      const tl_type *st = &tl_val(f, sc)->type;
      if (st->kind == TL_KIND_TILE && st->dtype == TL_F32 && st->layout == av->type.layout &&
          st->layout == tl_val(f, carried)->type.layout)
        p->sink_mul[k] = av->def, p->sink_scale[k] = sc;
    }
    p->sink_npk[k] = at->shape[0] / (16 * lc->mma_wm) * (at->shape[1] / 16) * 4;
    cg_ring *R = ring_of(p, L);
    if (R->ws && p->ws_turns) p->turns_late = true;
    /* TILEC_ATTN_TURNS=0 (measuring, off by default): the same form without the turns' named
     * barriers, as FlashAttention-3 runs hdim 256 (UseSchedulerBarrier off above hdim 128 for 16-bit
     * types); each warpgroup waits on the ring's mbarriers itself (emit_ws.c "Turns").  Not with fa3's
     * rotating producer (p->rope, emit_rope.c: planned with the turns, never run without them) */
    if (p->turns_late && !p->rope && tl_code_env_off("TILEC_ATTN_TURNS")) p->turns_free = true;
    tl_sbuf_printf(&note,
                   "%sdot at %d:%d issued one step late: after the next step's score dot, which waits with "
                   "wait_group 1, so the softmax runs under it; its group is waited for before the carried "
                   "accumulator's first use%s%s",
                   note.len ? "; " : "", o->loc.line, o->loc.col,
                   p->sink_mul[k] >= 0 ? ", the accumulator's rescale done before the score dot that issues it" : "",
                   form == 4 ? ", a CTA barrier between the score dots and the late dots" : "");
    if (R->ws)
      tl_sbuf_printf(&note, "; warp-specialized: its slot released after that wait%s",
                     p->turns_free ? ", no turns (TILEC_ATTN_TURNS=0: no named barrier between the warpgroups, "
                                     "each issues its dots once its own waits on the ring pass)"
                     : p->turns_late ? ", each turn from the ring's wait to the late dot's commit (bar.sync 5 + w "
                                     "before the wait, bar.arrive 6 - w after the commit; the last late dot after "
                                     "the loop in a turn of its own)" : "");
  }
  if (p->turns_late) { /* (cg_ws_plan's note described the turns and releases of the in-place value dot) */
    tl_sbuf wsn = {0};
    int preg, creg;
    cg_ws_regs(g, &preg, &creg);
    tl_sbuf_printf(&wsn, "warp-specialized (attention, TILEC_ATTN_WS=fa3): 2 consumer warpgroups on one tile "
                        "(setmaxnreg.inc %d), producer warpgroup 2 (setmaxnreg.dec %d; one thread issues the TMA "
                        "boxes%s), a full and an empty mbarrier per stage%s, no CTA barrier in the main loop; %s",
                   creg, preg, cg_tma_mode(g) == TL_TMA_FORM ? "" : ", all 128 copy when a tensor fails the map test",
                   kv_note(p->nring ? &p->rings[0] : NULL), p->persist ? "persistent: min(tiles, CTAs that fit) CTAs, the producer's ring running on into the "
                                "next tile, warpgroup 1's first arrive per tile"
                   : f->persist ? "not persistent (" CG_TRIP_BY_TILE ")"
                                : "not persistent");
    p->ws_note = tl_strdup(&g->ctx->arena, wsn.data);
    tl_sbuf_free(&wsn);
  }
  if (note.len) p->sink_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
}

void cg_overlap_preheader(cg *g, int32_t L) {
  cg_plan *p = g->plan;
  for (int k = sink_of(p, g->f, L, 0); k >= 0; k = sink_of(p, g->f, L, k + 1)) {
    if (!p->sink_slot[k]) {
      p->sink_slot[k] = LLVMBuildAlloca(g->PB, g->i32, "sink.slot");
      p->sink_pk[k] = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)p->sink_npk[k]);
      for (int i = 0; i < p->sink_npk[k]; i++) p->sink_pk[k][i] = LLVMBuildAlloca(g->PB, g->i32, "sink.pk");
    }
    int nsc = p->sink_scale[k] >= 0 ? tl_layout_nregs(cg_layout(g, p->sink_scale[k])) : 0;
    if (nsc && !p->sink_sc[k]) {
      p->sink_sc[k] = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)nsc);
      for (int i = 0; i < nsc; i++) p->sink_sc[k][i] = LLVMBuildAlloca(g->PB, g->f32, "sink.scale");
    }
    LLVMBuildStore(g->B, cg_i32(g, -1), p->sink_slot[k]);
    for (int i = 0; i < p->sink_npk[k]; i++) LLVMBuildStore(g->B, cg_i32(g, 0), p->sink_pk[k][i]);
    /* (iteration 0 multiplies the zero accumulator by 0) */
    for (int i = 0; i < nsc; i++) LLVMBuildStore(g->B, LLVMConstReal(g->f32, 0.0), p->sink_sc[k][i]);
  }
}

bool cg_overlap_waiter(cg *g, int32_t D) {
  cg_plan *p = g->plan;
  for (int k = 0; p && k < p->nwg; k++)
    if (p->wg_sink[k] && p->sink_waiter[k] == D) return true;
  return false;
}

/* Form >= 3: the registers of carried value acc times the carried scale. */
static LLVMValueRef *rescaled(cg *g, int k, int32_t acc) {
  cg_plan *p = g->plan;
  cg_val *x = cg_get(g, acc);
  LLVMValueRef *r = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)x->n);
  for (int32_t i = 0; i < x->n; i++) r[i] = LLVMBuildFMul(g->B, x->r[i], LLVMBuildLoad2(g->B, g->f32, p->sink_sc[k][i], ""), "");
  return r;
}

void cg_overlap_before_waiting(cg *g, int32_t L) {
  cg_plan *p = g->plan;
  cg_ring *R = ring_of(p, L);
  for (int k = sink_of(p, g->f, L, 0); k >= 0; k = sink_of(p, g->f, L, k + 1)) {
    /* K and V apart (TILEC_ATTN_KV_SPLIT=1): the late dot's V boxes, waited for with the turn's K
     * (before any wgmma of the turn is issued: no spin loop between a group's issue and the next);
     * iteration 0's dot of P = 0 reads this step's V without taking its phase */
    if (R && R->kv_split) {
      LLVMValueRef s = LLVMBuildLoad2(g->B, g->i32, p->sink_slot[k], "");
      LLVMValueRef ran = LLVMBuildICmp(g->B, LLVMIntSGE, s, cg_i32(g, 0), "");
      cg_ws_wait_v(g, R, LLVMBuildSelect(g->B, ran, s, R->rd_slot, ""), ran);
    }
    if (p->sink_mul[k] >= 0) p->sink_scaled[k] = rescaled(g, k, p->wg_carried[k]);
  }
}

/* At a join block: per register, the phi of a[i] from block ba and b[i] from block bb. */
static LLVMValueRef *join_regs(cg *g, LLVMValueRef *a, LLVMBasicBlockRef ba, LLVMValueRef *b, LLVMBasicBlockRef bb,
                               int32_t n) {
  LLVMValueRef *r = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)n);
  for (int32_t i = 0; i < n; i++) {
    r[i] = LLVMBuildPhi(g->B, LLVMTypeOf(b[i]), "");
    LLVMAddIncoming(r[i], &a[i], &ba, 1);
    LLVMAddIncoming(r[i], &b[i], &bb, 1);
  }
  return r;
}

/* Issue sunk dot k (no wait) on the accumulator registers of carried value
 * `acc` and the stored words, B from `slot`; returns the result registers. */
static LLVMValueRef *issue(cg *g, int k, int32_t acc, LLVMValueRef slot) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, p->wg_dots[k]);
  int32_t b = o->opnd[1], accv = o->opnd[2], res = o->res[0];
  cg_stream *st = &p->streams[p->vstream[b]];
  LLVMValueRef *pk = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)p->sink_npk[k]);
  for (int i = 0; i < p->sink_npk[k]; i++) pk[i] = LLVMBuildLoad2(g->B, g->i32, p->sink_pk[k][i], "");
  cg_wgmma_src wa = {.kmajor = true, .regs = pk};
  /* as emit_dot.c's B: K-major when read through a trans */
  tl_value *bv = tl_val(f, b);
  cg_wgmma_src wb = {.kmajor = bv->def >= 0 && tl_op_at(f, bv->def)->opc == TL_OP_trans, .rowbytes = st->pitch, .krows = st->rows};
  if (wb.kmajor && st->pitch > 128) wb.rowbytes = 128, wb.katom = st->rows * 128;
  wb.base = LLVMBuildAdd(g->B, cg_smem_base32(g),
                         LLVMBuildAdd(g->B, cg_i32(g, st->offset), LLVMBuildMul(g->B, slot, cg_i32(g, st->stage_bytes), ""), ""), "");
  /* the dot's accumulator operand stands for the carried value (form >= 3: times the carried
   * scale, the op emitted here instead of in its iteration) while it is emitted */
  cg_val keep_acc = g->vals[accv], keep_res = g->vals[res];
  cg_val in = *cg_get(g, acc);
  if (p->sink_mul[k] >= 0) in.r = p->sink_scaled[k] ? p->sink_scaled[k] : rescaled(g, k, acc);
  p->sink_scaled[k] = NULL;
  g->vals[accv] = in;
  cg_emit_wgmma(g, o, &wa, &wb, 2);
  LLVMValueRef *out = g->vals[res].r;
  g->vals[accv] = keep_acc;
  g->vals[res] = keep_res;
  return out;
}

void cg_overlap_issue(cg *g, int32_t L, int32_t waiting_res) {
  cg_plan *p = g->plan;
  cg_ring *R = ring_of(p, L);
  /* form 4: every warpgroup's score dot is issued before any late dot, so the tensor cores take
   * both score dots first (else a warpgroup that reaches its issue first queues its O += P V
   * ahead of the other's scores, whose softmax then starts a dot later) */
  if (p->sink_form == 4) cg_barrier(g);
  bool skip0 = tl_code_env_on("TILEC_ATTN_SKIP0");
  for (int k = sink_of(p, g->f, L, 0); k >= 0; k = sink_of(p, g->f, L, k + 1)) {
    /* iteration 0: P is 0 and this iteration's slot holds finite data */
    LLVMValueRef s = LLVMBuildLoad2(g->B, g->i32, p->sink_slot[k], "");
    LLVMValueRef first = LLVMBuildICmp(g->B, LLVMIntSLT, s, cg_i32(g, 0), "");
    LLVMValueRef slot = LLVMBuildSelect(g->B, first, R->rd_slot, s, "");
    int32_t acc = p->wg_carried[k];
    LLVMValueRef *out;
    if (skip0) {
      /* TILEC_ATTN_SKIP0=1: iteration 0 commits an empty group instead of the dot of P = 0 (half a
       * step of tensor work: 1/17 of an S1k D128 tile's): the group count the waits below rely on is
       * the same, and the accumulator comes through unchanged (zeros).  docs/pipelines.md
       * "Iteration 0 without its value dot" */
      cg_val before = *cg_get(g, acc);
      LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "sink.issue");
      LLVMBasicBlockRef eb = LLVMAppendBasicBlockInContext(g->C, g->fn, "sink.first");
      LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "sink.issued");
      cg_cond_br_likely(g, LLVMBuildNot(g->B, first, ""), ib, eb);
      LLVMPositionBuilderAtEnd(g->B, ib);
      LLVMValueRef *o1 = issue(g, k, acc, slot);
      LLVMBasicBlockRef ib_end = LLVMGetInsertBlock(g->B);
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, eb);
      p->sink_scaled[k] = NULL;
      cg_asm_void(g, "wgmma.commit_group.sync.aligned;", "~{memory}", NULL, 0);
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, jb);
      out = join_regs(g, o1, ib_end, before.r, eb, before.n);
    } else {
      out = issue(g, k, acc, slot);
    }
    cg_val *x = cg_get(g, acc);
    LLVMValueRef *r = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)x->n);
    memcpy(r, out, sizeof(LLVMValueRef) * (size_t)x->n);
    x->r = r; /* (a new array: the loop's phis keep theirs) */
  }
  /* warp-specialized: the last slot is released at the tile's end (emit_ws.c release_last) */
  if (R->ws) R->ws_pending = true;
  /* the turn ends once both dots are issued: the other warpgroup's dots queue behind them */
  if (g->plan->turns_late) cg_ws_turn_arrive(g, NULL);
  cg_asm_void(g, "wgmma.wait_group.sync.aligned 1;", "~{memory}", NULL, 0);
  /* K and V apart: the score dot is done, its K half of the stage is free (the producer refills it
   * with K of two steps on while O += P V of the step before still reads the V half) */
  if (R->ws) cg_ws_release_k(g, R, R->rd_slot);
  if (g->plan->turns_late) cg_q_tma_release_in_loop(g, L); /* (TILEC_ATTN_Q_TMA=2, emit_q_tma.c) */
  cg_wgmma_fence_val(g, waiting_res);
}

void cg_overlap_defer(cg *g, tl_op *o, LLVMValueRef slot) {
  cg_plan *p = g->plan;
  int32_t D = (int32_t)(o - g->f->ops.data);
  int k = cg_wg_index(p, D);
  /* (packed here, after the wait: packing P_{j+1} while O += P_j V_j runs makes ptxas serialize
   * every wgmma, C7513: a non-wgmma instruction defining a wgmma input inside its pipeline stage) */
  LLVMValueRef *pk = cg_dot_pack_a(g, D);
  for (int i = 0; i < p->sink_npk[k]; i++) LLVMBuildStore(g->B, pk[i], p->sink_pk[k][i]);
  LLVMBuildStore(g->B, slot, p->sink_slot[k]);
  /* the result: the accumulator operand, or (form >= 3) the carried value, its scale kept for the issue */
  cg_val *acc = cg_get(g, p->sink_mul[k] >= 0 ? p->wg_carried[k] : o->opnd[2]);
  if (p->sink_mul[k] >= 0) {
    cg_val *sc = cg_get(g, p->sink_scale[k]);
    for (int32_t i = 0; i < sc->n; i++) LLVMBuildStore(g->B, sc->r[i], p->sink_sc[k][i]);
  }
  cg_val *d = cg_new_val(g, o->res[0], acc->n);
  memcpy(d->r, acc->r, sizeof(LLVMValueRef) * (size_t)acc->n);
}

bool cg_overlap_before_op(cg *g, int32_t id) {
  cg_plan *p = g->plan;
  bool skip = false;
  if (!p || g->plan_f != g->f) return false;
  for (int k = 0; k < p->nwg; k++)
    if (p->wg_sink[k] && p->sink_wait_op[k] == id) {
      skip = skip || p->sink_mul[k] == id;
      /* ptxas (13.0) schedules a wait like any instruction without register operands: in the
       * softmax's block it moved it to the block's top, above the row max and every exp2 (the
       * SASS), which undid the overlap.  So the wait gets a block of its own behind a branch
       * neither LLVM nor ptxas folds (tid.x < 1024, the tid read through an asm), and the join
       * waits again as its first instruction (for ptxas's own accounting of the accumulator). */
      LLVMValueRef tid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
      LLVMBasicBlockRef wb = LLVMAppendBasicBlockInContext(g->C, g->fn, "sink.wait");
      LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "sink.waited");
      cg_cond_br_likely(g, LLVMBuildICmp(g->B, LLVMIntULT, tid, cg_i32(g, 1024), ""), wb, jb);
      LLVMPositionBuilderAtEnd(g->B, wb);
      cg_asm_void(g, "wgmma.wait_group.sync.aligned 0;", "~{memory}", NULL, 0);
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, jb);
      cg_asm_void(g, "wgmma.wait_group.sync.aligned 0;", "~{memory}", NULL, 0);
      cg_wgmma_fence_val(g, p->wg_carried[k]);
      /* warp-specialized: the late dot's slot (K and V of the step before) is free; iteration 0's
       * dot of P = 0 read this step's slot, which is released a step later */
      cg_ring *R = ring_of(p, tl_op_at(g->f, p->wg_dots[k])->parent);
      if (R && R->ws) {
        LLVMValueRef s = LLVMBuildLoad2(g->B, g->i32, p->sink_slot[k], "");
        cg_ws_release_v(g, R, s, LLVMBuildICmp(g->B, LLVMIntSGE, s, cg_i32(g, 0), "")); /* (V alone when apart) */
      }
    }
  return skip;
}

void cg_overlap_exit(cg *g, int32_t L) {
  cg_plan *p = g->plan;
  for (int k = sink_of(p, g->f, L, 0); k >= 0; k = sink_of(p, g->f, L, k + 1)) {
    int32_t acc = p->wg_carried[k];
    LLVMValueRef s = LLVMBuildLoad2(g->B, g->i32, p->sink_slot[k], "");
    LLVMValueRef ran = LLVMBuildICmp(g->B, LLVMIntSGE, s, cg_i32(g, 0), "");
    /* turns: the last late dot in a turn of its own, which warpgroup 1 ends without an arrive (as
     * the first turn began without warpgroup 0's), so every bar.sync has its bar.arrive at any trip
     * count; a loop that did not run still takes the turn */
    if (p->turns_late) {
      /* every score dot of the tile is done: q's slot is free (emit_q_tma.c; once: turns have one late dot) */
      cg_q_tma_release(g, ran);
      cg_ws_turn_sync(g);
      cg_ws_turn_arrive(g, LLVMBuildAnd(g->B, cg_ws_turn_first(g), LLVMBuildNot(g->B, ran, ""), ""));
    }
    LLVMBasicBlockRef from = LLVMGetInsertBlock(g->B);
    LLVMBasicBlockRef lb = LLVMAppendBasicBlockInContext(g->C, g->fn, "sink.last");
    LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "sink.done");
    LLVMBuildCondBr(g->B, ran, lb, jb);
    LLVMPositionBuilderAtEnd(g->B, lb);
    cg_val before = *cg_get(g, acc);
    cg_ring *R = ring_of(p, L);
    if (R && R->kv_split) cg_ws_wait_v(g, R, s, LLVMConstInt(g->i1, 1, 0)); /* (the last step's V) */
    LLVMValueRef *out = issue(g, k, acc, s);
    if (p->turns_late) cg_ws_turn_arrive(g, cg_ws_turn_first(g));
    cg_asm_void(g, "wgmma.wait_group.sync.aligned 0;", "~{memory}", NULL, 0);
    cg_val *x = cg_get(g, acc);
    x->r = out;
    cg_wgmma_fence_val(g, acc);
    LLVMValueRef *done = x->r;
    LLVMBasicBlockRef lend = LLVMGetInsertBlock(g->B);
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, jb);
    x->r = join_regs(g, done, lend, before.r, from, before.n);
  }
}


