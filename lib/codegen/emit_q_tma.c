/* emit_q_tma.c: requires the fa3 plan (cg_ws_plan's attention turns, cg_plan_overlap's late value
 * dot: p->turns_late) with a TMA-fed ring in a TMA form; decides and emits FlashAttention-3's q by
 * TMA (TILEC_ATTN_Q_TMA, default on since the twentieth session: H200 +2-9 % on the fa3 form at D128 and
 * D256, bench/RESULTS.md; =0 off): the producer loads the score dot's resident A (attention's
 * q) by one TMA per 64 columns into its slot, so in the persistent form the next tile's q lands
 * under this tile's last value dot and epilogue, instead of the consumers' global load, st.shared,
 * fence and two CTA barriers at each tile's start.  docs/pipelines.md "q by TMA".
 *
 * Barrier protocol (two mbarriers after the ring's, persistent shared memory q_mbar_off):
 *   q full  (+0, count 1): the producer's thread arrives once per tile with arrive.expect_tx of the
 *           q bytes, then issues the boxes, which complete its transaction; the consumers' 256
 *           threads wait for it at the tile's start, before the body (parity: bit 0 of q_fullph, 0 for the
 *           CTA's first tile, flipped per tile).
 *   q empty (+8, count f->warps = 8): lane 0 of every consumer warp arrives once per tile at the
 *           main loop's exit (every score dot of the tile waited for: the last one's wait_group 1
 *           ran in the last iteration; the last value dot does not read q); the producer waits
 *           for it before the next tile's boxes (parity: bit 0 of q_emptyph XOR 1, so the CTA's
 *           first wait passes on the fresh barrier's "previous" phase, flipped per tile).
 * One q slot: the producer is at most one tile ahead on q, the consumers at most one phase
 * behind on each barrier (a parity wait two phases ahead would pass at once). */
#include <stdio.h>
#include <string.h>

#include "ring.h"
#include "code_env.h"

/* The ring loop's wgmma dot whose A is resident (attention's score dot), or -1. */
static int32_t resident_a_dot(cg *g, const cg_ring *R) {
  cg_plan *p = g->plan;
  for (int i = 0; i < p->nwg; i++) {
    tl_op *o = tl_op_at(g->f, p->wg_dots[i]);
    if (o->parent == R->for_op && p->vkind[o->opnd[0]] == SRC_INVARIANT) return p->wg_dots[i];
  }
  return -1;
}

/* Why the kernel's q does not come by TMA, or NULL; *qv: the score dot's A; *plain: the kernel
 * without a producer (TILEC_ATTN_PERSIST=1: thread 0 issues q, tile_prefetch.c the next tile's). */
static const char *q_tma_unfit(cg *g, int32_t *qv, bool *plain) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  const char *env = tl_code_env("TILEC_ATTN_Q_TMA");
  *plain = f->attn_persist && !p->ws && p->nring == 1 && p->rings[0].prefetch;
  if (*plain && f->attn_persist != 1) *plain = false; /* (=3: the stages alone) */
  /* unset: on (=1); =0 or any other value: off */
  if (!*plain && env && ((env[0] != '1' && env[0] != '2') || env[1])) return "";
  if (!*plain && (!p->turns_late || !p->ws_attn || p->nring != 1)) return "not the fa3 form";
  cg_ring *R = &p->rings[0];
  if (!R->tma || cg_tma_mode(g) != TL_TMA_FORM) return "not a TMA form";
  if (p->cluster) return "a cluster";
  int32_t sd = *plain ? resident_a_dot(g, R) : p->turn_wait_dot;
  if (sd < 0) return "no dot of the main loop reads a resident A";
  tl_op *dot = tl_op_at(f, sd);
  int32_t a = dot->opnd[0];
  *qv = a;
  if (p->vkind[a] != SRC_INVARIANT || p->inv_loop[a] != R->for_op) return "the score dot's A is not resident";
  tl_value *av = tl_val(f, a);
  if (av->def < 0) return "the score dot's A is not a load";
  tl_op *ld = tl_op_at(f, av->def);
  if (ld->opc != TL_OP_load || ld->parent != -1) return "the score dot's A is not a load of the kernel's body";
  int32_t *uses = tl_count_uses(f);
  if (uses[a] != 1) return "the loaded q has other uses";
  tl_value *tv = tl_val(f, ld->opnd[0]);
  int rank = tv->type.rank, eb = tl_dtype_bytes((tl_dtype)av->type.dtype);
  if (ld->nopnd != 1 + rank) return "the load has an 'other' value";
  if (rank < 2 || rank > 5) return "the tensor's rank is not 2..5";
  for (int d = 0; d < rank; d++) {
    if ((ld->dims[d] != 0) != (d >= rank - 2)) return "the tile is not the last two dims of its tensor";
    if (!cg_ws_scalar(f, ld->opnd[1 + d])) return "an index is not scalar arithmetic of the parameters";
  }
  int rows = av->type.shape[0], rb = av->type.shape[1] * eb;
  if (eb != 2 || rows > 256 || rb % 128 || rb <= 128) return "not a slot of [D/64][rows][64] atoms";
  if (p->vstream[a] % 1024) return "the slot is not 1024-byte aligned";
  if (p->ntma >= TL_MAX_TMA) return "more tensor maps than the launcher takes";
  return NULL;
}

int cg_plan_q_tma(cg *g, int persist) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int32_t a = -1;
  bool plain = false;
  const char *why = q_tma_unfit(g, &a, &plain);
  if (why) {
    if (*why && (p->turns_late || plain)) {
      tl_sbuf note = {0};
      tl_sbuf_printf(&note, "q by TMA not taken (%s: %s)", plain ? "TILEC_ATTN_PERSIST=1" : "TILEC_ATTN_Q_TMA=1", why);
      p->q_note = tl_strdup(&g->ctx->arena, note.data);
      tl_sbuf_free(&note);
    }
    return persist;
  }
  tl_value *av = tl_val(f, a);
  tl_op *ld = tl_op_at(f, av->def);
  tl_value *tv = tl_val(f, ld->opnd[0]);
  p->q_tma = true;
  const char *env = tl_code_env("TILEC_ATTN_Q_TMA");
  p->q_early = !plain && env && env[0] == '2'; /* (measuring: the arrive one step earlier, inside the turn's loop) */
  p->q_l2 = !plain && tl_code_env_on("TILEC_ATTN_Q_PREFETCH");
  p->q_plain = plain;
  p->q_val = a;
  p->q_load = av->def;
  p->q_rows = av->type.shape[0];
  p->q_boxes = av->type.shape[1] / 64;
  p->q_bytes = p->q_rows * av->type.shape[1] * 2;
  p->q_map = cg_tma_map_add(p, tv->index, 64, p->q_rows, 128, tv->type.dtype);
  persist = (persist + 7) / 8 * 8;
  p->q_mbar_off = persist;
  persist += 16;
  tl_sbuf note = {0};
  if (plain)
    tl_sbuf_printf(&note, "q by TMA (TILEC_ATTN_PERSIST=1): %s: %d boxes of %dx64, 128-byte swizzle, issued by thread 0 "
                          "for the next tile after the main loop's exit (its CTA barrier: every score dot done), for "
                          "a CTA's first tile at its start; every thread waits for \"q full\" (its transaction) "
                          "before the loop",
                   f->params.data[tv->index].name, p->q_boxes, p->q_rows);
  else
  tl_sbuf_printf(&note, "q by TMA (TILEC_ATTN_Q_TMA=1): %s: %d boxes of %dx64, 128-byte swizzle, issued by the "
                        "producer into q's slot once the consumers' \"q empty\" mbarrier (8 arrivals at the main "
                        "loop's exit) completes; the consumers wait for \"q full\" (its transaction) before the first "
                        "score dot",
                 f->params.data[tv->index].name, p->q_boxes, p->q_rows);
  if (p->q_l2)
    tl_sbuf_printf(&note, "; the producer's thread asks L2 for the tile's q boxes at the tile's start "
                          "(cp.async.bulk.prefetch.tensor, TILEC_ATTN_Q_PREFETCH=1), so the load at the previous "
                          "tile's loop exit reads L2");
  p->q_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  return persist;
}

bool cg_q_tma_skips(cg *g, int32_t opid) {
  cg_plan *p = g->plan;
  return p && g->plan_f == g->f && p->q_tma && opid == p->q_load;
}

bool cg_q_tma_owns(cg *g, int32_t v) {
  cg_plan *p = g->plan;
  return p && g->plan_f == g->f && p->q_tma && v == p->q_val;
}

static LLVMValueRef q_mbar(cg *g, int which) {
  return LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, g->plan->q_mbar_off + 8 * which), "");
}

/* i32 parity bit of alloca v (XOR x), flipping it. */
static LLVMValueRef take_bit(cg *g, LLVMValueRef v, int x) {
  LLVMValueRef b = LLVMBuildLoad2(g->B, g->i32, v, "");
  LLVMBuildStore(g->B, LLVMBuildXor(g->B, b, cg_i32(g, 1), ""), v);
  return x ? LLVMBuildXor(g->B, b, cg_i32(g, 1), "") : b;
}

LLVMValueRef cg_q_tma_prologue(cg *g, LLVMValueRef tid, LLVMValueRef ok) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  if (!p->q_tma) return ok;
  tl_op *ld = tl_op_at(f, p->q_load);
  tl_value *tv = tl_val(f, ld->opnd[0]);
  cg_tensor *t = &g->tensors[tv->index];
  ok = cg_tma_map_test(g, ok, t, tv->type.rank, 2); /* q's tensor, 16-bit */
  p->tmap[p->q_map] = cg_tma_map_addr(g, p->q_map);
  ok = cg_o_tma_prologue(g, ok); /* (TILEC_ATTN_O_TMA=1: O's map, emit_o_tma.c) */
  /* q full: the producer's arrive.expect_tx; q empty: one arrival per consumer warp (O by TMA
   * through q's slot: one per consumer warpgroup, after its store read the slot) */
  for (int w = 0; w < 2; w++) {
    LLVMValueRef args[3] = {q_mbar(g, w), tid, cg_i32(g, w ? (p->o_tma && !p->o_slot ? 2 : f->warps) : 1)};
    cg_asm_void(g, "{ .reg .pred p; setp.eq.u32 p, $1, 0; @p mbarrier.init.shared::cta.b64 [$0], $2; }",
                "r,r,r,~{memory}", args, 3);
  }
  p->q_fullph = LLVMBuildAlloca(g->PB, g->i32, "q.full.phase");
  LLVMBuildStore(g->B, cg_i32(g, 0), p->q_fullph);
  p->q_emptyph = LLVMBuildAlloca(g->PB, g->i32, "q.empty.phase");
  LLVMBuildStore(g->B, cg_i32(g, 0), p->q_emptyph);
  return ok;
}

static void q_boxes(cg *g);

void cg_q_tma_empty_wait(cg *g) { cg_mbar_wait(g, q_mbar(g, 1), take_bit(g, g->plan->q_emptyph, 1)); }

void cg_q_tma_issue(cg *g) {
  if (!g->plan->q_tma) return;
  cg_q_tma_empty_wait(g);
  cg_attn_sched_publish(g); /* (TILEC_ATTN_SCHED=1: the tile for the consumers, attn_sched.c) */
  q_boxes(g);
}

/* The consumers, where `on` (uniform): wait for this tile's phase of "q empty" (the one whose "q full" they waited
 * for at the tile's start: the parity bit before that wait flipped it), without flipping anything: every score
 * dot of the tile done (emit_o_slot.c, TILEC_ATTN_O_SLOT_K=1). */
void cg_q_tma_tile_empty_wait(cg *g, LLVMValueRef on) {
  LLVMBasicBlockRef wb = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.empty.tile");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.empty.tile.done");
  LLVMBuildCondBr(g->B, on, wb, jb);
  LLVMPositionBuilderAtEnd(g->B, wb);
  LLVMValueRef par = LLVMBuildXor(g->B, LLVMBuildLoad2(g->B, g->i32, g->plan->q_fullph, ""), cg_i32(g, 1), "");
  cg_mbar_wait(g, q_mbar(g, 1), par);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}

void cg_q_tma_full_arrive(cg *g) {
  LLVMValueRef mb = q_mbar(g, 0);
  cg_asm_void(g, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}", &mb, 1);
}

/* Box b's coordinates of q as its load's indices are bound now (i32), innermost first: column (b * 64 past the
 * load's), row, then the indexed dims ({d0, m0, h, z}); returns the rank. */
static int q_box_coords(cg *g, int b, LLVMValueRef *c) {
  tl_op *ld = tl_op_at(g->f, g->plan->q_load);
  int rank = tl_val(g->f, ld->opnd[0])->type.rank;
  for (int d = 0; d < rank; d++) {
    LLVMValueRef x = cg_get(g, ld->opnd[1 + d])->r[0];
    if (LLVMTypeOf(x) != g->i32) x = LLVMBuildTrunc(g->B, x, g->i32, "");
    c[rank - 1 - d] = d == rank - 1 ? cg_add_c(g, x, (int64_t)b * 64) : x;
  }
  return rank;
}

/* TILEC_ATTN_Q_PREFETCH=1: q's boxes of the tile whose scalars are bound now into L2, by the producer's one thread
 * where the maps passed their test (`ok`, uniform).  q is read once, so its load at the previous tile's loop exit
 * is the one DRAM read on a tile's edge (~1 us, under the last value dot and the epilogue, bench/attn_tile_model.py);
 * asked at the tile's start, about the ring's depth in steps before that load, it reads L2.  No shared memory, no
 * barrier: a prefetch writes nothing the kernel reads. */
void cg_q_tma_prefetch_l2(cg *g, LLVMValueRef ok) {
  cg_plan *p = g->plan;
  if (!p->q_tma || !p->q_l2) return;
  LLVMValueRef args[1 + TL_MAX_RANK];
  int rank = q_box_coords(g, 0, args + 1);
  LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.l2");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.l2.done");
  LLVMBuildCondBr(g->B, ok, ib, jb);
  LLVMPositionBuilderAtEnd(g->B, ib);
  char txt[160], cons[64];
  snprintf(txt, sizeof txt, "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile [$0, {$1", rank);
  snprintf(cons, sizeof cons, "l");
  for (int d = 1; d < rank; d++) snprintf(txt + strlen(txt), sizeof txt - strlen(txt), ", $%d", 1 + d);
  snprintf(txt + strlen(txt), sizeof txt - strlen(txt), "}];");
  for (int d = 0; d < rank; d++) snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",r");
  snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",~{memory}");
  args[0] = p->tmap[p->q_map];
  for (int b = 0; b < p->q_boxes; b++) {
    if (b) q_box_coords(g, b, args + 1);
    cg_asm_void(g, txt, cons, args, 1 + rank);
  }
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}

/* q full's arrive.expect_tx and q's boxes (one thread), at the q load's indices as bound now. */
static void q_boxes(cg *g) {
  cg_plan *p = g->plan;
  LLVMValueRef full = q_mbar(g, 0);
  cg_mbar_expect_tx(g, full, p->q_bytes);
  LLVMValueRef args[2 + TL_MAX_RANK + 1];
  int rank = q_box_coords(g, 0, args + 2);
  char txt[200], cons[64];
  snprintf(txt, sizeof txt,
           "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2", rank);
  snprintf(cons, sizeof cons, "r,l");
  for (int d = 1; d < rank; d++) snprintf(txt + strlen(txt), sizeof txt - strlen(txt), ", $%d", 2 + d);
  snprintf(txt + strlen(txt), sizeof txt - strlen(txt), "}], [$%d];", 2 + rank);
  for (int d = 0; d <= rank; d++) snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",r");
  snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",~{memory}");
  LLVMValueRef base = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, p->vstream[p->q_val]), "");
  args[1] = p->tmap[p->q_map];
  args[2 + rank] = full;
  for (int b = 0; b < p->q_boxes; b++) {
    args[0] = cg_add_c(g, base, (int64_t)b * p->q_rows * 128); /* atom b: [rows][64] */
    if (b) q_box_coords(g, b, args + 2);
    cg_asm_void(g, txt, cons, args, 3 + rank);
  }
}

LLVMValueRef cg_q_tma_pending(cg *g) {
  if (!g->plan->q_tma) return NULL;
  LLVMValueRef v = LLVMBuildAlloca(g->PB, g->i32, "q.pending");
  LLVMBuildStore(g->B, cg_i32(g, 1), v);
  return v;
}

void cg_q_tma_issue_pending(cg *g, LLVMValueRef pend) {
  if (!pend) return;
  LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.issue");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.issued");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntNE, LLVMBuildLoad2(g->B, g->i32, pend, ""), cg_i32(g, 0), ""), ib, jb);
  LLVMPositionBuilderAtEnd(g->B, ib);
  cg_q_tma_issue(g);
  LLVMBuildStore(g->B, cg_i32(g, 0), pend);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}

void cg_q_tma_wait(cg *g) { cg_mbar_wait(g, q_mbar(g, 0), take_bit(g, g->plan->q_fullph, 0)); }

static void arrive_empty(cg *g, LLVMValueRef on) {
  LLVMValueRef c = LLVMBuildICmp(g->B, LLVMIntEQ, g->lane, cg_i32(g, 0), "");
  if (on) c = LLVMBuildAnd(g->B, c, on, "");
  LLVMValueRef args[2] = {q_mbar(g, 1), LLVMBuildZExt(g->B, c, g->i32, "")};
  cg_asm_void(g, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p mbarrier.arrive.shared::cta.b64 _, [$0]; }", "r,r,~{memory}",
              args, 2);
}

void cg_q_tma_release(cg *g, LLVMValueRef ran) {
  cg_plan *p = g->plan;
  /* (O by TMA: after its store, emit_o_tma.c; through the last stage: here when the tile takes it, emit_o_slot.c) */
  if (!p || g->plan_f != g->f || !p->q_tma || (p->o_tma && !p->o_slot)) return;
  arrive_empty(g, p->o_slot ? cg_o_slot_taken(g, ran) : p->q_early ? LLVMBuildNot(g->B, ran, "") : NULL);
}

void cg_q_tma_release_in_loop(cg *g, int32_t L) {
  cg_plan *p = g->plan;
  if (!p || g->plan_f != g->f || !p->q_tma || !p->q_early) return;
  tl_op *lo = tl_op_at(g->f, L);
  LLVMValueRef iv = cg_to_i64(g, cg_get(g, lo->regions[0].args.data[0])->r[0]);
  LLVMValueRef step64 = cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]);
  LLVMValueRef next_in = cg_iv_in_range(g, L, LLVMBuildAdd(g->B, iv, step64, ""), step64);
  arrive_empty(g, LLVMBuildNot(g->B, next_in, ""));
}

/* q's boxes by thread 0 (uniform test: one thread issues). */
static void q_boxes_thread0(cg *g) {
  LLVMValueRef tid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
  LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.tma.issue");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.tma.issued");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, tid, cg_i32(g, 0), ""), ib, jb);
  LLVMPositionBuilderAtEnd(g->B, ib);
  q_boxes(g);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}

static LLVMValueRef q_pf_flag(cg *g) {
  cg_plan *p = g->plan;
  if (!p->q_pf) { /* (0 at the kernel's entry) */
    p->q_pf = LLVMBuildAlloca(g->PB, g->i32, "q.prefetched");
    LLVMBuildStore(g->PB, cg_i32(g, 0), p->q_pf);
  }
  return p->q_pf;
}

void cg_q_tma_plain_start(cg *g) {
  cg_ring *R = &g->plan->rings[0];
  if (!R->tma_ok) cg_tma_kernel_prologue(g, R); /* (q's map and mbarriers with the ring's, in the kernel's entry) */
  LLVMValueRef pf = q_pf_flag(g);
  LLVMValueRef was = LLVMBuildLoad2(g->B, g->i32, pf, "");
  LLVMBuildStore(g->B, cg_i32(g, 0), pf);
  LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.tma.first");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "q.tma.wait");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, was, cg_i32(g, 0), ""), ib, jb);
  LLVMPositionBuilderAtEnd(g->B, ib); /* (a CTA's first tile: its slot was never read) */
  q_boxes_thread0(g);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
  cg_q_tma_wait(g);
}

void cg_q_tma_plain_prefetch(cg *g) {
  if (!g->plan->q_plain) return;
  q_boxes_thread0(g);
  LLVMBuildStore(g->B, cg_i32(g, 1), q_pf_flag(g));
}

void cg_q_tma_at_load(cg *g) {
  if (g->plan->q_plain) cg_q_tma_plain_start(g);
}
