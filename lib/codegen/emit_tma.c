/* emit_tma.c: requires the main-loop plan (dot_plan.c cg_make_plan, its
 * streams and rings); decides which rings TMA feeds (tensor maps as hidden
 * parameters, one mbarrier per stage) and emits their kernel prologue, the
 * bulk tensor copies and the mbarrier waits.  docs/pipelines.md "TMA ring". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "axisinfo.h"
#include "code_env.h"

/* ---- TMA (docs/pipelines.md "TMA ring") -------------------------------------------- */

/* Why ring R cannot be fed by TMA, or NULL.  Every slot is a sequence of
 * boxes in the layout TMA writes: a K-major slot with rows of 32/64/128
 * bytes is one box whose XOR swizzle (emit_dot's swizzle_of) is the TMA
 * 32/64/128-byte mode on a 1024-byte aligned slot; an atom slot
 * ([N/64][K][64] or [K/64][rows][64]) is one box of 128-byte rows per atom. */
static const char *tma_unfit(cg *g, cg_ring *R, int *nmaps) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  const char *env = tl_code_env("TILEC_TMA"); /* measuring: 0 = the cp.async ring */
  if (env && *env == '0') return "TILEC_TMA=0";
  if (!cg_arch_is_90a(g)) return "the target is not sm_90a";
  if (f->pipeline != TL_PIPE_CUTLASS) return "the pipeline is not cutlass";
  if (cg_tma_mode(g) == TL_TMA_OFF) return "this is the kernel's no-TMA form (for tensors a tensor map cannot take)";
  if (!R->wgmma) return "the ring does not feed wgmma";
  if (R->stages < 2) return "the ring has one stage";
  *nmaps = 0;
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != R->for_op) continue;
    tl_op *lo = tl_op_at(f, s->load_op);
    tl_value *tv = tl_val(f, lo->opnd[0]);
    int rb = s->cols * s->eb, rank = tv->type.rank;
    /* an operand prologue's load (attn_rope's k halves and table rows): a box of whole rows into
     * its plain row-major slot, unswizzled (TMA's no-swizzle mode writes exactly that), read
     * back by ld.shared after the mbarrier wait; TILEC_PROLOGUE_TMA=0 keeps the cp.async ring */
    /* (an A read back in its fragment layout: the prologue's slot in swizzled atoms, dot_plan.c plan_prologue) */
    bool atoms = s->prologue && s->wg_atoms && !tl_code_env_off("TILEC_PROLOGUE_TMA");
    bool plain = s->prologue && s->row_base < 0 && !s->wg && !atoms && !tl_code_env_off("TILEC_PROLOGUE_TMA");
    if (plain) {
      for (int d = 0; d < rank; d++)
        if (tl_val(f, lo->opnd[1 + d])->type.kind == TL_KIND_TILE) plain = false;
      if (rb % 16 || s->cols > 256 || s->pitch != rb || s->offset % 128 || s->stage_bytes % 128) plain = false;
    }
    if (s->prologue && !plain && tl_code_env_off("TILEC_PROLOGUE_TMA")) return "an operand prologue's load, TILEC_PROLOGUE_TMA=0";
    if (s->prologue && !plain && !atoms) return "an operand prologue's load is not a plain box TMA can write";
    if (!plain && !atoms && (!s->wg || s->kn8)) return "an operand is not a wgmma slot";
    /* rank R > 2: a rank-R map, box 1 in the dims indexed by scalars
     * (attention's z, h); the tile must be the last two dims */
    if (rank < 2 || rank > 5) return "an operand tensor's rank is not 2..5";
    for (int d = 0; d < rank; d++)
      if ((lo->dims[d] != 0) != (d >= rank - 2)) return "a tile is not the last two dims of its tensor";
    if (s->rows > 256) return "a tile has more than 256 rows (the TMA box limit)";
    /* a box's start along the contiguous dimension must be a multiple of 16 bytes (measured on an H100: an 8-bit
     * box at column 72 faulted, at 64 ran; a 16-bit one at 72, 144 bytes, ran): a loop from a run-time start
     * (range(ks, K, BK)) proves nothing, so its ring stays cp.async (align_check's divisibility of the start) */
    const tl_access_facts *af = tl_access_facts_get(f, s->load_op);
    if (!af || (af->len > 0 && af->start_div < 16 && (af->start_div * s->eb) % 16 != 0)) /* (start_div: 2^62 for 0) */
      return "a box's start along the contiguous dimension is not provably a multiple of 16 bytes (TMA's coordinates "
             "need it: a loop from a run-time start, say)";
    if (!plain && (s->wg_atoms ? rb % 128 != 0 : !(rb == 32 || rb == 64 || rb == 128))) return "a slot layout TMA cannot write";
    ++*nmaps;
  }
  if (p->ntma + *nmaps > TL_MAX_TMA) return "more tensor maps than the launcher takes";
  return NULL;
}

/* Decide TMA per ring (after the stream offsets): tensor maps and the
 * mbarriers (8 bytes per stage, persistent shared memory from `persist`).
 * Returns the new end of the persistent part. */
int cg_plan_tma(cg *g, int persist) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  tl_sbuf note = {0};
  for (int r = 0; r < p->nring; r++) {
    cg_ring *R = &p->rings[r];
    int nmaps = 0;
    const char *why = tma_unfit(g, R, &nmaps);
    if (why) {
      tl_sbuf_printf(&note, "%sring of %d stages fed by cp.async (no TMA: %s)%s", note.len ? "; " : "", R->stages, why,
                     R->late ? "; stage i+1 copied after the staged B's barrier, the deferred dot of step i-1 running "
                               "under step i's wait and staging (TILEC_LATE_REFILL=0 off)"
                             : "");
      if (cg_narrow_on())
        tl_sbuf_printf(&note, "; a tensor whose base and row pitch are 8- or 4-byte aligned, not 16: 8- or 4-byte "
                              "cp.async.ca into the same slots (TILEC_NARROW_COPY=1), else the element copy");
      continue;
    }
    R->tma = true;
    persist = (persist + 7) / 8 * 8;
    R->mbar_off = persist;
    persist += 8 * R->stages;
    R->tx_bytes = 0;
    /* TILEC_ROW_STREAM (default on; emit_ring_rows.c): the loop's 1-D row loads become boxes of this ring */
    tl_sbuf rows = {0};
    persist = cg_plan_ring_rows(g, R, persist, nmaps, &rows);
    /* (f->ws: the producer warpgroup issues them, emit_ws.c; its note follows) */
    bool ws = cg_ws_wanted(g, R);
    if (ws)
      tl_sbuf_printf(&note, "%sring of %d stages fed by TMA (a full mbarrier per stage", note.len ? "; " : "", R->stages);
    else
      tl_sbuf_printf(&note, "%sring of %d stages fed by TMA (one mbarrier per stage; thread 0 issues stage i+%d%s",
                     note.len ? "; " : "", R->stages, R->stages - 1 - (R->lag - R->kv_lag2), /* (kv_lag2: undone, not ws) */
                     R->late ? " after the staged B's barrier, the deferred dot of step i-1 running under step i's "
                               "wait and staging (TILEC_LATE_REFILL=0: at the ring's barrier, the deferred dot waited)"
                             : "");
    if (!ws && R->staged2)
      tl_sbuf_printf(&note, "; two staged B slots, the read slot's: no ring barrier when the body has no barrier but the "
                            "staged B's (TILEC_STAGED_DOUBLE=1)");
    for (int i = 0; i < p->nstream; i++) {
      cg_stream *s = &p->streams[i];
      if (s->for_op != R->for_op) continue;
      int rb = s->cols * s->eb;
      tl_value *tv = tl_val(f, tl_op_at(f, s->load_op)->opnd[0]);
      s->tma = p->ntma;
      bool plain = s->prologue && !s->wg_atoms; /* (tma_unfit: a plain box, unswizzled; else swizzled atoms) */
      s->tma_inner = plain ? s->cols : (rb > 128 ? 128 : rb) / s->eb;
      s->tma_boxes = s->cols / s->tma_inner;
      int swz = plain ? 0 : rb > 128 ? 128 : rb;
      R->tx_bytes += s->tma_boxes * s->rows * s->tma_inner * s->eb;
      cg_tma_map_add(p, tv->index, s->tma_inner, s->rows, swz, tv->type.dtype);
      if (s->ring_row)
        tl_sbuf_printf(&note, "; %s: a row of %d (a row stream, TILEC_ROW_STREAM; =0 off)", f->params.data[tv->index].name,
                       s->cols);
      else if (plain)
        tl_sbuf_printf(&note, "; %s: 1 box of %dx%d, unswizzled (an operand prologue's load)",
                       f->params.data[tv->index].name, s->rows, s->tma_inner);
      else
        tl_sbuf_printf(&note, "; %s: %d box%s of %dx%d, %d-byte swizzle%s", f->params.data[tv->index].name,
                       s->tma_boxes, s->tma_boxes > 1 ? "es" : "", s->rows, s->tma_inner, swz,
                       s->prologue ? " (an operand prologue's load, read back in A's fragment layout)" : "");
      if (tv->type.rank > 2) tl_sbuf_printf(&note, ", rank-%d map (box 1 in the indexed dims)", tv->type.rank);
    }
    if (rows.len) tl_sbuf_printf(&note, "%s", rows.data);
    tl_sbuf_free(&rows);
    /* (TILEC_PITCH_REPACK, on unless =0, is the JIT launcher's, lib/api/pitch_repack.c: it changes no
     * code, only this text, so it is not in lib/code_env.c's table) */
    const char *repack = getenv("TILEC_PITCH_REPACK");
    if (cg_tma_mode(g) == TL_TMA_FORM)
      tl_sbuf_printf(&note, "; %d bytes per stage; a TMA form: launches whose tensors fail the map test run the "
                            "kernel's no-TMA form%s%s)", R->tx_bytes,
                     cg_narrow_on() ? ", whose copies of a tensor 8- or 4-byte aligned, not 16, are 8- or 4-byte "
                                      "cp.async.ca (TILEC_NARROW_COPY=1)" : "",
                     !(repack && !strcmp(repack, "0"))
                         ? ", unless each such tensor is only read with a last stride of 1: the launcher then copies "
                           "it into rows padded to 16 bytes and runs this form on the copy (TILEC_PITCH_REPACK=0: off)"
                         : "");
    else
      tl_sbuf_printf(&note, "; %d bytes per stage; %s when a tensor fails the map test at run time)", R->tx_bytes,
                     ws ? (cg_narrow_on() ? "an element copy, or 8- or 4-byte cp.async.ca for a tensor that aligned "
                                            "(TILEC_NARROW_COPY=1)"
                                          : "an element copy")
                        : "the cp.async ring");
  }
  /* (--explain tells it for the cutlass pipeline, the one that asks for TMA) */
  if (note.len && f->pipeline == TL_PIPE_CUTLASS) p->tma_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  return persist;
}

int cg_tma_count(cg *g) { return g->plan && g->plan_f == g->f ? g->plan->ntma : 0; }

int cg_tma_mode(cg *g) {
  int m = g->o ? g->o->tma : TL_TMA_FORM;
  return m == TL_TMA_FORM && tl_code_env_off("TILEC_TMA_FORM") ? TL_TMA_INLINE : m;
}

/* The map test `ok` (i1, in the kernel prologue) as the kernel's code sees it: itself where the
 * fallback is inline; in a TMA form (tl_tma_mode) true, after a `trap` for a launch that fails
 * it anyway (the launcher runs the no-TMA form for such arguments: the trap only stops a
 * launcher that does not know the ABI's rule from reading a map it did not encode). */
LLVMValueRef cg_tma_assume(cg *g, LLVMValueRef ok) {
  if (cg_tma_mode(g) != TL_TMA_FORM) return ok;
  LLVMValueRef a = LLVMBuildZExt(g->B, ok, g->i32, "");
  cg_asm_void(g, "{ .reg .pred p; setp.eq.u32 p, $0, 0; @p trap; } // " TL_TMA_FORM_MARK, "r,~{memory}", &a, 1);
  return LLVMConstInt(g->i1, 1, 0);
}

void cg_tma_info(cg *g, tl_kernel_info *ki) {
  ki->ntma = 0;
  ki->tma_form = false;
  ki->tma_note = NULL;
  ki->epi_note = NULL;
  ki->persist = false;
  ki->cluster = 0;
  ki->sched_ctr = false;
  if (!g->plan || g->plan_f != g->f) return;
  ki->epi_note = g->plan->epi_note;
  ki->ntma = g->plan->ntma;
  ki->tma_form = ki->ntma > 0 && cg_tma_mode(g) == TL_TMA_FORM;
  memcpy(ki->tma, g->plan->tma, sizeof ki->tma);
  ki->tma_note = g->plan->tma_note;
  ki->persist = g->plan->persist;
  ki->cluster = g->plan->cluster;
  ki->sched_ctr = g->plan->sched_dyn;
  const char *more[9] = {g->plan->ws_note, g->plan->sink_note, g->plan->q_note, g->plan->sched_note, g->plan->o_note,
                         g->plan->atma_note, g->plan->rope_note, g->plan->lazy_note, g->plan->dot_note};
  for (int i = 0; i < 9; i++)
    if (more[i]) {
      tl_sbuf b = {0};
      tl_sbuf_printf(&b, "%s%s%s", ki->tma_note ? ki->tma_note : "", ki->tma_note ? "; " : "", more[i]);
      if (b.data) ki->tma_note = tl_strdup(&g->ctx->arena, b.data);
      tl_sbuf_free(&b);
    }
}

/* ---- the TMA ring ---------------------------------------------------------------------- */

static LLVMValueRef and1(cg *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildAnd(g->B, a, b, ""); }

/* Kernel prologue of TMA ring R (once): tma_ok, the maps' generic addresses
 * (`mov` of the parameter's address, cvta.param), the phase bits, and the
 * mbarriers initialized by thread 0 (count 1: its arrive.expect_tx),
 * fenced, then a barrier.  Built in the prologue block (dominates all). */
/* Thread 0 (tid == 0) initializes n mbarriers at shared offset off, 8 bytes apart, to `count` arrivals. */
static void init_mbarriers(cg *g, int off, int n, LLVMValueRef tid, int count) {
  char txt[128];
  snprintf(txt, sizeof txt, "{ .reg .pred p; setp.eq.u32 p, $1, 0; @p mbarrier.init.shared::cta.b64 [$0], %d; }", count);
  for (int st = 0; st < n; st++) {
    LLVMValueRef args[2] = {LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, off + 8 * st), ""), tid};
    cg_asm_void(g, txt, "r,r,~{memory}", args, 2);
  }
}

LLVMValueRef cg_tma_map_test(cg *g, LLVMValueRef ok, const cg_tensor *t, int rank, int eb) {
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, t->ptr, g->i64, "");
  LLVMValueRef sb[TL_MAX_RANK];
  for (int d = 0; d + 1 < rank; d++) sb[d] = LLVMBuildMul(g->B, t->stride[d], cg_i64(g, eb), "");
  ok = and1(g, ok, LLVMBuildICmp(g->B, LLVMIntEQ, t->stride[rank - 1], cg_i64(g, 1), ""));
  LLVMValueRef any = base;
  for (int d = rank - 2; d >= 0; d--) any = LLVMBuildOr(g->B, any, sb[d], "");
  LLVMValueRef mis = LLVMBuildAnd(g->B, any, cg_i64(g, 15), "");
  ok = and1(g, ok, LLVMBuildICmp(g->B, LLVMIntEQ, mis, cg_i64(g, 0), ""));
  for (int d = rank - 2; d >= 0; d--) {
    ok = and1(g, ok, LLVMBuildICmp(g->B, LLVMIntSGT, sb[d], cg_i64(g, 0), ""));
    ok = and1(g, ok, LLVMBuildICmp(g->B, LLVMIntSLT, sb[d], cg_i64(g, 1LL << 40), ""));
  }
  for (int d = 0; d < rank; d++) ok = and1(g, ok, LLVMBuildICmp(g->B, LLVMIntNE, t->size[d], cg_i32(g, 0), ""));
  return ok;
}

LLVMValueRef cg_tma_map_addr(cg *g, int map) {
  char txt[400];
  snprintf(txt, sizeof txt, "mov.u64 $0, %s_param_%d; cvta.param.u64 $0, $0;", g->entry, g->tma_param0 + map);
  return cg_asm(g, g->i64, txt, "=l", NULL, 0, false);
}

void cg_thread0_asm(cg *g, const char *body, LLVMValueRef *args, int n, const char *cons) {
  char txt[512];
  snprintf(txt, sizeof txt, "{ .reg .pred p; setp.eq.u32 p, $0, 0; %s }", body);
  LLVMValueRef a[16];
  if (n > 15) TL_INTERNAL(g->ctx, "codegen: thread-0 asm with %d operands", n);
  a[0] = cg_tid32(g);
  for (int i = 0; i < n; i++) a[1 + i] = args[i];
  cg_asm_void(g, txt, cons, a, n + 1);
}

/* Every lane of the warp together again after a thread-0 block whose asm ptxas turns into a branch
 * around a uniform-datapath instruction (UTMASTG, UTMAREDG): ptxas need not reconverge the warp at the
 * join (it did not where the join also merges another path: the inline form's element stores), and the
 * warp then meets the next tile's wgmma (.sync.aligned) diverged: an illegal instruction or a hang
 * (bench/RESULTS.md "twenty-sixth session").  Only where all 32 lanes of each warp run the code.  TILEC_WARP_CONVERGE=0
 * (measuring, in the cache key) leaves it out. */
void cg_warp_converge(cg *g) {
  if (tl_code_env_off("TILEC_WARP_CONVERGE")) return;
  cg_asm_void(g, "bar.warp.sync -1;", "~{memory}", NULL, 0);
}

void cg_tma_kernel_prologue(cg *g, cg_ring *R) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  LLVMBuilderRef save = g->B;
  g->B = g->PB;
  LLVMValueRef ok = LLVMConstInt(g->i1, 1, 0);
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != R->for_op) continue;
    tl_value *tv = tl_val(f, tl_op_at(f, s->load_op)->opnd[0]);
    cg_tensor *t = &g->tensors[tv->index];
    ok = cg_tma_map_test(g, ok, t, tv->type.rank, s->eb);
    if (!p->tmap[s->tma]) p->tmap[s->tma] = cg_tma_map_addr(g, s->tma);
  }
  LLVMValueRef tid = cg_ws_pingpong(g) ? cg_sreg(g, "tid", 0) : cg_tid32(g);
  if (R->ws || p->q_plain) ok = cg_q_tma_prologue(g, tid, ok); /* (q by TMA: its map, its mbarriers) */
  R->tma_ok = cg_tma_assume(g, ok);
  R->phasev = LLVMBuildAlloca(g->PB, g->i32, "tma.phase");
  LLVMBuildStore(g->B, cg_i32(g, 0), R->phasev);
  /* a stream the producer transposes (ws_tr): the full mbarriers take two
   * arrivals (A's arrive.expect_tx, the transpose's arrive), and its staging
   * slots have "loaded" mbarriers of their own (count 1) */
  int full_count = 1;
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != R->for_op || !s->ws_tr || !R->ws) continue;
    full_count = 2;
    init_mbarriers(g, s->trm_off, R->stages, tid, 1);
  }
  /* TILEC_ROPE_PRODUCER=1 (emit_rope.c): k's boxes on "loaded" (count 1), "full" counts V's
   * arrive.expect_tx and the producer's arrive after the rotation */
  if (p->rope && R->ws) {
    full_count = 2;
    init_mbarriers(g, p->rope_mbar_off, R->stages, tid, 1);
  }
  init_mbarriers(g, R->mbar_off, R->stages, tid, full_count);
  /* warp-specialized: the empty mbarriers, one arrival per consumer warp
   * (of both CTAs of a cluster: emit_cluster.c) */
  for (int st = 0; R->ws && st < R->stages; st++) {
    LLVMValueRef args[3] = {LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, R->empty_off + 8 * st), ""), tid,
                            cg_i32(g, g->f->warps * (p->cluster ? 2 : 1))};
    cg_asm_void(g, "{ .reg .pred p; setp.eq.u32 p, $1, 0; @p mbarrier.init.shared::cta.b64 [$0], $2; }", "r,r,r,~{memory}",
                args, 3);
  }
  /* K and V apart (TILEC_ATTN_KV_SPLIT=1, emit_ws.c): V's full (count 1) and empty mbarriers */
  if (R->ws && R->kv_split) {
    init_mbarriers(g, R->vfull_off, R->stages, tid, 1);
    init_mbarriers(g, R->vempty_off, R->stages, tid, g->f->warps);
  }
  cg_asm_void(g, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0);
  /* a cluster: the peer's mbarriers are initialized before any copy or arrive reaches them */
  if (p->cluster) cg_cluster_sync(g);
  else cg_barrier(g);
  g->B = save;
}

/* i1: the iteration with iv x (i64) runs: x < hi (step > 0), x > hi (step < 0). */
LLVMValueRef cg_iv_in_range(cg *g, int32_t L, LLVMValueRef x, LLVMValueRef step64) {
  tl_op *lo = tl_op_at(g->f, L);
  LLVMValueRef hi = cg_to_i64(g, cg_get(g, lo->opnd[1])->r[0]);
  LLVMValueRef up = LLVMBuildICmp(g->B, LLVMIntSLT, x, hi, "");
  if (LLVMIsAConstantInt(step64) && LLVMConstIntGetSExtValue(step64) > 0) return up;
  LLVMValueRef down = LLVMBuildICmp(g->B, LLVMIntSGT, x, hi, "");
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, step64, cg_i64(g, 0), ""), up, down, "");
}

LLVMValueRef cg_mbar_addr(cg *g, cg_ring *R, LLVMValueRef slot) {
  return LLVMBuildAdd(g->B, cg_smem_base32(g), LLVMBuildAdd(g->B, cg_i32(g, R->mbar_off), LLVMBuildShl(g->B, slot, cg_i32(g, 3), ""), ""), "");
}

/* Thread 0, when the iteration with iv `ivs` (the iv's register type) runs
 * (`in`): arrive.expect_tx on slot's mbarrier with the stage's bytes, then
 * one cp.async.bulk.tensor per box into the slot (out-of-bounds elements
 * are zeros, and count: the transaction is always the whole box). */
void cg_tma_issue(cg *g, cg_ring *R, LLVMValueRef ivs, LLVMValueRef in, LLVMValueRef slot) {
  LLVMValueRef tid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
  LLVMValueRef c = and1(g, LLVMBuildICmp(g->B, LLVMIntEQ, tid, cg_i32(g, 0), ""), in);
  LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.issue");
  LLVMBasicBlockRef nb = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.issued");
  LLVMBuildCondBr(g->B, c, ib, nb);
  LLVMPositionBuilderAtEnd(g->B, ib);
  cg_tma_issue_boxes(g, R, ivs, slot);
  LLVMBuildBr(g->B, nb);
  LLVMPositionBuilderAtEnd(g->B, nb);
}

void cg_mbar_expect_tx(cg *g, LLVMValueRef mb, int bytes) {
  LLVMValueRef xa[2] = {mb, cg_i32(g, bytes)};
  cg_asm_void(g, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}", xa, 2);
}

void cg_tma_issue_boxes(cg *g, cg_ring *R, LLVMValueRef ivs, LLVMValueRef slot) {
  cg_plan *p = g->plan;
  LLVMValueRef mb = cg_mbar_addr(g, R, slot);
  cg_mbar_expect_tx(g, mb, R->tx_bytes);
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == R->for_op) cg_tma_issue_stream(g, &p->streams[i], ivs, slot, mb);
}

int cg_tma_stream_bytes(const cg_stream *s) { return s->tma_boxes * s->rows * s->tma_inner * s->eb; }

void cg_tma_issue_stream(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, LLVMValueRef mb) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  {
    tl_op *o = tl_op_at(f, s->load_op);
    int rank = tl_val(f, o->opnd[0])->type.rank;
    /* coordinates innermost first: column, row, then the indexed dims
     * (attention's {d0, n0, h, z}); an index out of its dim reads zeros,
     * as the load's bounds test does */
    LLVMValueRef st[TL_MAX_RANK];
    for (int d = 0; d < rank; d++) {
      st[d] = cg_remat(g, o->opnd[1 + d], s->for_op, ivs);
      if (LLVMTypeOf(st[d]) != g->i32) st[d] = LLVMBuildTrunc(g->B, st[d], g->i32, "");
    }
    LLVMValueRef sbase = LLVMBuildAdd(g->B, cg_smem_base32(g),
                                      LLVMBuildAdd(g->B, cg_i32(g, s->offset), LLVMBuildMul(g->B, slot, cg_i32(g, s->stage_bytes), ""), ""), "");
    if (s->mcast) { /* shared by a cluster's pair: half of it, to both CTAs (emit_cluster.c) */
      cg_cluster_issue_boxes(g, s, rank, st, sbase, mb);
      return;
    }
    char txt[200], cons[64];
    snprintf(txt, sizeof txt, "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2", rank);
    snprintf(cons, sizeof cons, "r,l");
    for (int d = 1; d < rank; d++) snprintf(txt + strlen(txt), sizeof txt - strlen(txt), ", $%d", 2 + d);
    snprintf(txt + strlen(txt), sizeof txt - strlen(txt), "}], [$%d];", 2 + rank);
    for (int d = 0; d <= rank; d++) snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",r");
    snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",~{memory}");
    for (int b = 0; b < s->tma_boxes; b++) {
      LLVMValueRef args[2 + TL_MAX_RANK + 1];
      args[0] = cg_add_c(g, sbase, (int64_t)b * s->rows * 128);
      args[1] = p->tmap[s->tma];
      args[2] = cg_add_c(g, st[rank - 1], (int64_t)b * s->tma_inner);
      for (int d = 1; d < rank; d++) args[2 + d] = st[rank - 1 - d];
      args[2 + rank] = mb;
      cg_asm_void(g, txt, cons, args, 3 + rank);
    }
  }
}

/* Every thread: wait for slot's mbarrier to complete the phase of parity
 * bit `slot` of the phase bits (try_wait in a loop), then flip that bit. */
void cg_tma_wait(cg *g, cg_ring *R, LLVMValueRef slot) {
  LLVMValueRef ph = LLVMBuildLoad2(g->B, g->i32, R->phasev, "");
  LLVMValueRef par = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, ph, slot, ""), cg_i32(g, 1), "");
  cg_mbar_wait(g, cg_mbar_addr(g, R, slot), par);
  LLVMBuildStore(g->B, LLVMBuildXor(g->B, ph, LLVMBuildShl(g->B, cg_i32(g, 1), slot, ""), ""), R->phasev);
}

static void mbar_wait(cg *g, LLVMValueRef mb, LLVMValueRef par, const char *txt) {
  LLVMBasicBlockRef wb = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.wait");
  LLVMBasicBlockRef db = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.ready");
  LLVMBuildBr(g->B, wb);
  LLVMPositionBuilderAtEnd(g->B, wb);
  LLVMValueRef args[2] = {mb, par};
  LLVMValueRef done = cg_asm(g, g->i32, txt, "=r,r,r,~{memory}", args, 2, true);
  cg_cond_br_likely(g, LLVMBuildICmp(g->B, LLVMIntNE, done, cg_i32(g, 0), ""), db, wb);
  LLVMPositionBuilderAtEnd(g->B, db);
}

void cg_mbar_wait(cg *g, LLVMValueRef mb, LLVMValueRef par) {
  mbar_wait(g, mb, par, "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }");
}

void cg_mbar_wait_cluster(cg *g, LLVMValueRef mb, LLVMValueRef par) {
  mbar_wait(g, mb, par,
            "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }");
}
