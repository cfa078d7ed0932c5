/* emit_dot.c: requires the accumulator and result in the mma layout
 * (layout_assign); lowers dot(a[M,K], b[K,N], acc) to tensor cores
 * (mma.sync, sm_80+) and plans the main loop around it.  docs/pipelines.md.
 *
 * Where an operand's fragments come from (decided per function by cg_plan):
 *   - STREAM: the operand is a load (or trans of a load) used only by the
 *     dot, inside the dot's `for`, its indices computable from the induction
 *     variable: it never goes through registers.  16-byte cp.async.cg copies
 *     write it into a ring of f->stages shared-memory slots (rows XOR-
 *     swizzled by 16-byte chunk, so the copies and ldmatrix are conflict-free),
 *     src_bytes < 16 zero-fills ragged edges.  Software pipeline: the loop's
 *     preheader issues stages 0..S-2; each iteration waits for its stage
 *     (cp.async.wait_group S-2), one barrier, issues stage i+S-1 into the slot
 *     freed by iteration i-1, then computes.  A run-time check (unit last
 *     stride, 16-byte alignment) picks cp.async, else a scalar copy (uniform
 *     branch); in the loop a second one (the tile wholly inside the tensor,
 *     weighted likely) takes copies without per-chunk bounds (lean_chunks).
 *   - INVARIANT: defined outside the dot's loop (attention's q): staged once
 *     in the preheader; its fragments are loaded there too when they fit in
 *     32 registers.
 *   - REGS: the A operand is an mma accumulator cast to 16 bits with the
 *     result's warp rows (attention's p): the accumulator fragment c0..c3 of
 *     n-blocks 2k, 2k+1 packed in bf16x2 pairs IS the A fragment of k-slice k
 *     (all slices packed before the first mma; pack_regs_a).
 *   - STAGED (anything else): stored to scratch shared memory every time,
 *     rows padded by 16 bytes.
 * Schedule table (lib/schedule.h): with f->sched NULL the heuristics above
 * decide; with a table codegen follows it per dot: streamed[]/stages
 * (swpipe; stages 1 = copy, wait, compute), swizzle_bytes/pad_bytes
 * (smem_swizzle; also for staged and invariant operands), lookahead
 * (ldmatrix_sched), warps (mma_remap, via layout_assign); a pass that did
 * not run gives the plain behaviour: nothing streamed, rows padded by 16
 * bytes, no lookahead, warps over M first.  The ring prologue is issued by
 * cg_loop_preheader (real branches: the slow copy is an element loop, so
 * it adds no register pressure) and the loop exit drains the copies.
 * Fragments: ldmatrix.sync.aligned.m8n8.x4 (.trans for a [K][N] B), the
 * fragments of k-slice k+1 loaded before the mma of slice k.  Warp tiling is
 * the mma layout's: warp bits over M (16-row blocks), then N (8 columns). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "schedule.h"

#include "ring.h"

/* The schedule entry of dot D when the table is followed, else NULL. */
static tl_dot_sched *dot_sched(cg *g, int32_t D) {
  return g->plan && g->plan->follow ? tl_sched_dot(g->f, D, false) : NULL;
}

/* Row padding of operand w of dot D (not swizzled): the table's, rounded up
 * to 16 bytes (ldmatrix rows and cp.async chunks are 16-byte aligned). */
static int dot_pad(cg *g, int32_t D, int w) {
  tl_dot_sched *e = dot_sched(g, D);
  if (!e || !e->swizzled) return 16;
  return (e->pad_bytes[w] + 15) / 16 * 16;
}

/* Operand w of dot D is XOR-swizzled in shared memory: always without a
 * table; with one only when smem_swizzle chose a mode for it. */
static bool dot_swz(cg *g, int32_t D, int w) {
  if (!g->plan || !g->plan->follow) return true;
  tl_dot_sched *e = tl_sched_dot(g->f, D, false);
  return e && e->swizzled && e->swizzle_bytes[w] != 0;
}

/* Row pitch of a staged (from registers) or invariant operand: padded by 16
 * bytes without a table (today's), else as smem_swizzle decided. */
static int staged_pitch(cg *g, int32_t D, int w, int32_t cols, int eb, bool *swz) {
  *swz = g->plan && g->plan->follow && dot_swz(g, D, w) && (cols * eb) % 16 == 0;
  return cols * eb + (*swz ? 0 : dot_pad(g, D, w));
}

/* ---- the plan ------------------------------------------------------------------- */

bool cg_dot_promotes(cg *g, const tl_op *o) {
  if (g->o && g->o->fp8_acc_fast) return false;
  int da = tl_val(g->f, o->opnd[0])->type.dtype, db = tl_val(g->f, o->opnd[1])->type.dtype;
  return (da == TL_F8E4M3 || da == TL_F8E5M2) && (db == TL_F8E4M3 || db == TL_F8E5M2);
}

/* Streamed operand `which` of dot D: the load op, else -1 (the stream rule
 * of lib/schedule.c; an 8-bit [K][N] B needs the column-paired accumulator,
 * which layout_assign gives only when it streams). */
static int32_t stream_candidate(cg *g, int32_t D, int which, const int32_t *uses, bool *kcontig) {
  const char *why;
  bool paired = cg_layout(g, tl_op_at(g->f, D)->res[0])->mma_npair != 0;
  return tl_stream_source(g->f, D, which, uses, paired, kcontig, &why);
}

/* The operands of dot D both stream into swizzled slots that wgmma can read
 * (docs/pipelines.md "Hopper wgmma") and its table entry chose wgmma: record
 * it; B kept [K][N] gets the atom slot layout, the ring the proxy fence,
 * and slots are kept 1024-byte aligned (swizzle atoms).  Else mma.sync. */
static bool a_from_regs(cg *g, int32_t a, const tl_layout *lc, int eb);

/* Index in loop L's body of the top-level op holding op id (nested ops
 * count as their ancestor), or INT32_MAX. */
static int32_t body_pos(tl_func *f, int32_t L, int32_t id) {
  while (id >= 0 && tl_op_at(f, id)->parent != L) id = tl_op_at(f, id)->parent;
  tl_region *body = &tl_op_at(f, L)->regions[0];
  for (int32_t i = 0; id >= 0 && i < body->ops.len; i++)
    if (body->ops.data[i] == id) return i;
  return INT32_MAX;
}

/* The first body position (body_pos) of an op of loop L using value v. */
static int32_t body_pos_first_use(tl_func *f, int32_t L, int32_t v) {
  int32_t first = INT32_MAX;
  for (int32_t id = 0; id < f->ops.len; id++) {
    tl_op *u = tl_op_at(f, id);
    if (u->flags & TL_OPF_DEAD) continue;
    for (int j = 0; j < u->nopnd; j++)
      if (u->opnd[j] == v) {
        int32_t pos = body_pos(f, L, id);
        if (pos < first) first = pos;
      }
  }
  return first;
}

static bool row_ok(int bytes) { return bytes == 32 || bytes == 64 || bytes == 128; }

static void plan_wgmma(cg *g, int32_t D) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, D);
  tl_dot_sched *e = dot_sched(g, D);
  if (!e || !e->remapped || e->instr != TL_SCHED_MMA_WGMMA || p->nwg == 4 || !cg_wgmma_fits(g, D)) return;
  int32_t a = o->opnd[0], b = o->opnd[1];
  if (p->vkind[b] != SRC_STREAM) return;
  cg_stream *sa = p->vkind[a] == SRC_STREAM ? &p->streams[p->vstream[a]] : NULL, *sb = &p->streams[p->vstream[b]];
  tl_type *at = &tl_val(f, a)->type;
  int aeb = tl_dtype_bytes((tl_dtype)at->dtype), ra = at->shape[1] * aeb;
  /* A: streamed (rows of one swizzle atom), resident (staged once, swizzled:
   * one atom or [K/64][M][64] atoms, 16-bit), or registers (16-bit, the
   * accumulator fragments of an mma-layout tile: attention's p) */
  if (sa) {
    if (!sa->swz || !row_ok(ra) || sa->stage_bytes % 1024) return;
  } else if (p->vkind[a] == SRC_INVARIANT) {
    if (!dot_swz(g, D, 0) || ra % 16 || !(row_ok(ra) || (aeb == 2 && ra % 128 == 0)) || p->vstream[a] % 1024) return;
  } else if (p->vkind[a] != SRC_STAGED || aeb != 2 || !a_from_regs(g, a, cg_layout(g, o->res[0]), aeb)) {
    return;
  }
  bool bk = tl_val(f, b)->def >= 0 && tl_op_at(f, tl_val(f, b)->def)->opc == TL_OP_trans;
  int rb = sb->cols * sb->eb;
  if (!sb->swz) return;
  if (bk ? !row_ok(rb) && !(sb->eb == 2 && rb % 128 == 0) : rb % 128 != 0) return;
  if (aeb == 1 && (!bk || sb->kn8)) return; /* wgmma takes 8-bit operands only K-major */
  if (sb->stage_bytes % 1024) return;
  sb->wg_atoms = !bk || rb > 128;
  sb->wg_kmajor = bk;
  if (sa) sa->wg = true;
  sb->wg = true;
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == o->parent) p->rings[i].wgmma = true;
  /* a group may stay in flight into the next iteration when nothing but
   * the next wgmma touches the accumulator in the loop: acc is a carried
   * value used only by the dot, the result only yielded (same slot) */
  tl_region *body = &tl_op_at(f, o->parent)->regions[0];
  int32_t *uses = tl_count_uses(f);
  tl_op *y = body->ops.len ? tl_op_at(f, body->ops.data[body->ops.len - 1]) : NULL;
  bool inflight = false;
  for (int i = 1; y && y->opc == TL_OP_yield && i < body->args.len; i++)
    if (body->args.data[i] == o->opnd[2] && i - 1 < y->nopnd && y->opnd[i - 1] == o->res[0])
      inflight = uses[o->opnd[2]] == 1 && uses[o->res[0]] == 1;
  const char *env = getenv("TILEC_WGMMA_INFLIGHT"); /* measuring only: 0 = wait for every group */
  if (env && *env == '0') inflight = false;
  /* a promoting dot adds its temporary right after the wait: no group of it
   * outlives the dot (one temporary; see cg_emit_wgmma) */
  if (cg_dot_promotes(g, o)) inflight = false;
  /* deferred: the result is only yielded, and its carried value is first
   * used after an earlier wgmma dot of the loop that waits for all groups
   * (attention: acc * alpha comes after the score dot), so that wait also
   * covers this group; the ring then needs its lag (plan_lag) */
  int32_t carried = -1;
  for (int i = 1; y && y->opc == TL_OP_yield && i < body->args.len; i++)
    if (i - 1 < y->nopnd && y->opnd[i - 1] == o->res[0] && uses[o->res[0]] == 1) carried = body->args.data[i];
  bool defer = false;
  if (!inflight && carried >= 0 && !cg_dot_promotes(g, o) && !(env && *env == '0')) {
    int first = body_pos_first_use(f, o->parent, carried);
    for (int k = 0; k < p->nwg; k++)
      if (tl_op_at(f, p->wg_dots[k])->parent == o->parent && !p->wg_inflight[k] && !p->wg_defer[k] &&
          body_pos(f, o->parent, p->wg_dots[k]) < first)
        defer = true;
  }
  p->wg_inflight[p->nwg] = inflight;
  p->wg_defer[p->nwg] = defer;
  p->wg_carried[p->nwg] = inflight ? o->opnd[2] : defer ? carried : -1;
  p->wg_dots[p->nwg++] = D;
  LLVMSetAlignment(g->smem, 1024);
}

/* Ring lag: 1 when every wgmma dot reading the ring's loop keeps a group in
 * flight, or one defers its wait, and the ring has at least 3 stages (the
 * issue distance S-2 >= 1); without it no dot defers. */
static void plan_lag(cg_plan *p, tl_func *f) {
  for (int r = 0; r < p->nring; r++) {
    cg_ring *R = &p->rings[r];
    bool any = false, all = true, defer = false;
    for (int i = 0; i < p->nwg; i++)
      if (tl_op_at(f, p->wg_dots[i])->parent == R->for_op) {
        any = true;
        all = all && p->wg_inflight[i];
        defer = defer || p->wg_defer[i];
      }
    R->lag = ((any && all) || defer) && R->stages >= 3 ? 1 : 0;
    for (int i = 0; i < p->nwg && !R->lag; i++)
      if (tl_op_at(f, p->wg_dots[i])->parent == R->for_op) p->wg_defer[i] = false, p->wg_carried[i] = -1;
  }
}

/* Index of dot D in p->wg_dots, or -1. */
static int wg_index(cg_plan *p, int32_t D) {
  for (int i = 0; i < p->nwg; i++)
    if (p->wg_dots[i] == D) return i;
  return -1;
}

static bool dot_is_wgmma(cg_plan *p, int32_t D) {
  for (int i = 0; i < p->nwg; i++)
    if (p->wg_dots[i] == D) return true;
  return false;
}

/* Byte offset in a slot of 16-byte chunk ch (i32) of tile row r (i32). */
static LLVMValueRef slot_off(cg *g, const cg_stream *s, LLVMValueRef r, LLVMValueRef ch);

void cg_make_plan(cg *g) {
  if (g->plan_f == g->f) return;
  tl_func *f = g->f;
  g->plan_f = f;
  g->smem_persist = 0;
  cg_plan *p = tl_alloc(&g->ctx->arena, sizeof *p);
  memset(p, 0, sizeof *p);
  g->plan = p;
  p->vkind = tl_alloc(&g->ctx->arena, (size_t)f->values.len + 1);
  memset(p->vkind, 0, (size_t)f->values.len + 1);
  p->vstream = tl_alloc(&g->ctx->arena, sizeof(int32_t) * ((size_t)f->values.len + 1));
  p->inv_done = tl_alloc(&g->ctx->arena, (size_t)f->values.len + 1);
  p->inv_loop = tl_alloc(&g->ctx->arena, sizeof(int32_t) * ((size_t)f->values.len + 1));
  memset(p->inv_done, 0, (size_t)f->values.len + 1);
  p->follow = f->sched != NULL;
  if (!f->layouts || (!p->follow && f->pipeline == TL_PIPE_SIMPLE)) return;
  int32_t *uses = tl_count_uses(f);
  /* no table: today's heuristic (route_pipeline's stages, 2..4, cut to fit);
   * a table: swpipe's stages per dot, which already fit */
  int stages = f->stages >= 2 ? f->stages : 3;
  if (stages > 4) stages = 4;
  int table_stages = 0;
  int persist = 0;
  for (int32_t D = 0; D < f->ops.len; D++) {
    tl_op *o = tl_op_at(f, D);
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_dot) continue;
    int32_t L = o->parent;
    if (L < 0 || tl_op_at(f, L)->opc != TL_OP_for) continue;
    for (int which = 0; which < 2; which++) {
      int32_t x = o->opnd[which];
      tl_type *xt = &tl_val(f, x)->type;
      if (xt->kind != TL_KIND_TILE || xt->rank != 2) continue;
      bool kc = true;
      tl_dot_sched *e = p->follow ? tl_sched_dot(f, D, false) : NULL;
      bool may_stream = !p->follow || (e && e->pipelined && e->streamed[which] && e->stages >= 1);
      int32_t ld = p->nstream < 16 && may_stream ? stream_candidate(g, D, which, uses, &kc) : -1;
      if (ld >= 0) {
        if (e && e->stages > table_stages) table_stages = e->stages;
        int ri = 0;
        while (ri < p->nring && p->rings[ri].for_op != L) ri++;
        if (ri == p->nring) {
          if (p->nring == 4) continue;
          p->rings[p->nring++] = (cg_ring){.for_op = L, .stages = stages};
        }
        tl_type *lt = &tl_val(f, tl_op_at(f, ld)->res[0])->type;
        cg_stream *s = &p->streams[p->nstream];
        s->load_op = ld;
        s->for_op = L;
        s->rows = lt->shape[0];
        s->cols = lt->shape[1];
        s->eb = tl_dtype_bytes((tl_dtype)lt->dtype);
        s->swz = dot_swz(g, D, which);
        s->pitch = s->cols * s->eb + (s->swz ? 0 : dot_pad(g, D, which));
        s->stage_bytes = s->rows * s->pitch;
        s->kn8 = which == 1 && !kc && s->eb == 1;
        if (s->kn8) {
          s->nk_pitch = s->rows * s->eb + (s->swz ? 0 : dot_pad(g, D, which));
          if (s->cols * s->nk_pitch > s->stage_bytes) s->stage_bytes = s->cols * s->nk_pitch;
        }
        p->vkind[x] = SRC_STREAM;
        p->vstream[x] = p->nstream;
        p->vkind[tl_op_at(f, ld)->res[0]] = SRC_STREAM;
        p->vstream[tl_op_at(f, ld)->res[0]] = p->nstream;
        (void)kc;
        p->nstream++;
      } else if (tl_defined_outside(f, x, L) && p->vkind[x] == SRC_STAGED) {
        const tl_layout *lx = cg_layout(g, x);
        int eb = tl_dtype_bytes((tl_dtype)xt->dtype);
        bool kn = which == 1 && eb == 2 && lx->nreg > 0 && lx->reg[0][1] != 0;
        int32_t rows = which == 0 ? xt->shape[0] : kn ? xt->shape[0] : xt->shape[1];
        int32_t cols = which == 0 ? xt->shape[1] : kn ? xt->shape[1] : xt->shape[0];
        bool swz;
        int bytes = rows * staged_pitch(g, D, which, cols, eb, &swz);
        /* a wgmma A reads it by descriptor: 1024-byte aligned (swizzle atoms) */
        if (which == 0 && e && e->remapped && e->instr == TL_SCHED_MMA_WGMMA) persist = (persist + 1023) / 1024 * 1024;
        p->vkind[x] = SRC_INVARIANT;
        p->vstream[x] = persist;
        p->inv_loop[x] = L;
        persist += (bytes + 127) / 128 * 128;
      }
    }
    plan_wgmma(g, D);
  }
  /* rings after the invariant operands; fewer stages when they do not fit */
  int ring_bytes = 0;
  for (int i = 0; i < p->nstream; i++) ring_bytes += p->streams[i].stage_bytes;
  if (p->follow) stages = table_stages < 1 ? 1 : table_stages;
  else while (stages > 2 && persist + stages * ring_bytes > 160 * 1024) stages--;
  /* (with a table: swpipe sized the rings against the arch's budget) */
  int64_t limit = p->follow ? tl_arch_smem_budget(g->o ? g->o->arch : NULL) : 180 * 1024;
  if (persist + stages * ring_bytes > limit) { /* give up streaming */
    for (int v = 0; v < f->values.len; v++)
      if (p->vkind[v] == SRC_STREAM) p->vkind[v] = SRC_STAGED;
    p->nstream = p->nring = 0;
    p->nwg = 0; /* wgmma reads only streamed slots: mma.sync */
  }
  for (int i = 0; i < p->nring; i++) p->rings[i].stages = stages;
  plan_lag(p, f);
  for (int i = 0; i < p->nstream; i++) {
    if (p->streams[i].wg) persist = (persist + 1023) / 1024 * 1024; /* wgmma swizzle atoms */
    p->streams[i].offset = persist;
    persist += stages * p->streams[i].stage_bytes;
  }
  persist = cg_plan_tma(g, persist);
  cg_ws_plan(g, persist, &persist);
  g->smem_persist = persist;
  cg_use_smem(g, persist);
}

void cg_scratch_use(cg *g, int bytes) { cg_use_smem(g, g->smem_persist + bytes); }

LLVMValueRef cg_scratch_ptr(cg *g, LLVMValueRef byte_off) {
  return cg_smem_ptr(g, LLVMBuildAdd(g->B, byte_off, cg_i32(g, g->smem_persist), ""));
}

bool cg_val_streamed(cg *g, int32_t v) { return g->plan && g->plan->vkind[v] == SRC_STREAM; }

/* ---- LLVM helpers ------------------------------------------------------------------ */

LLVMValueRef cg_smem_base32(cg *g) {
  LLVMValueRef z = cg_i32(g, 0);
  return LLVMBuildTrunc(g->B, LLVMBuildPtrToInt(g->B, cg_smem_ptr(g, z), g->i64, ""), g->i32, "");
}

static bool is_zero(LLVMValueRef v) { return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0; }

LLVMValueRef cg_to_i64(cg *g, LLVMValueRef v) {
  return LLVMTypeOf(v) == g->i64 ? v : LLVMBuildSExt(g->B, v, g->i64, "");
}

LLVMValueRef cg_tid32(cg *g) {
  return LLVMBuildAdd(g->B, LLVMBuildShl(g->B, g->warp, cg_i32(g, 5), ""), g->lane, "");
}

/* XOR applied to the 16-byte chunk index of a row of nch chunks: rows of 128
 * bytes and more use row % 8, narrower rows pack 8 / nch rows per 128 bytes. */
static LLVMValueRef swizzle_of(cg *g, LLVMValueRef row, int nch) {
  if (nch >= 8) return LLVMBuildAnd(g->B, row, cg_i32(g, 7), "");
  if (nch == 4) return LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, row, cg_i32(g, 1), ""), cg_i32(g, 3), "");
  if (nch == 2) return LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, row, cg_i32(g, 2), ""), cg_i32(g, 1), "");
  return cg_i32(g, 0);
}

static LLVMValueRef slot_off(cg *g, const cg_stream *s, LLVMValueRef r, LLVMValueRef ch) {
  int nch = s->cols * s->eb / 16;
  if (s->wg_atoms) {
    LLVMValueRef atom = LLVMBuildLShr(g->B, ch, cg_i32(g, 3), "");
    LLVMValueRef pc = LLVMBuildXor(g->B, LLVMBuildAnd(g->B, ch, cg_i32(g, 7), ""), LLVMBuildAnd(g->B, r, cg_i32(g, 7), ""), "");
    LLVMValueRef o = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, atom, cg_i32(g, s->rows * 128), ""),
                                  LLVMBuildMul(g->B, r, cg_i32(g, 128), ""), "");
    return LLVMBuildAdd(g->B, o, LLVMBuildShl(g->B, pc, cg_i32(g, 4), ""), "");
  }
  LLVMValueRef pc = s->swz ? LLVMBuildXor(g->B, ch, swizzle_of(g, r, nch), "") : ch;
  return LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r, cg_i32(g, s->pitch), ""), LLVMBuildShl(g->B, pc, cg_i32(g, 4), ""), "");
}

/* swizzle_of of a constant row. */
static int swizzle_const(int row, int nch) {
  return nch >= 8 ? row & 7 : nch == 4 ? (row >> 1) & 3 : nch == 2 ? (row >> 2) & 1 : 0;
}

/* i32 x + c and x * c without the identities (the builder folds only constants). */
LLVMValueRef cg_add_c(cg *g, LLVMValueRef x, int64_t c) {
  return c ? LLVMBuildAdd(g->B, x, cg_i32(g, c), "") : x;
}
static LLVMValueRef mul_c(cg *g, LLVMValueRef x, int64_t c) {
  if (c == 1) return x;
  if (c > 0 && (c & (c - 1)) == 0) {
    int sh = 0;
    while ((1LL << sh) != c) sh++;
    return LLVMBuildShl(g->B, x, cg_i32(g, sh), "");
  }
  return LLVMBuildMul(g->B, x, cg_i32(g, c), "");
}

/* Shared byte offsets base + row*pitch + F(row, cb), F = cb ^ (swizzle(row) << 4)
 * when swizzled (the 16-byte chunk XOR-ed, bytes within it kept), else cb,
 * computed as a per-lane part plus constants.  row = row_l + row_c and
 * cb = cb_l + cb_c, the per-lane parts (_l, i32) and the constant parts (_c)
 * having disjoint bits (a layout's lane/warp and register parts; lane-derived
 * fields and slice/block steps above them).  Then + is ^ on each pair, and
 * swizzle (bits of row) is linear over ^, so
 *   off = row_l*pitch + row_c*pitch + (F_l ^ F_c),   F_x = F(row_x, cb_x);
 * and since the low 4 bits of F_l ^ F_c are cb_l ^ cb_c (disjoint: a sum),
 *   F_l ^ F_c = (F_l ^ (F_c & ~15)) + (F_c & 15).
 * So an offset is one add to a per-lane value that depends only on F_c & ~15
 * (cached: one xor and one add per distinct key), all else one constant.
 * Moreover F_l < 2^b for a known b (cb_l <= cb_max, swizzle(row) < 8), so
 * the key bits at and above b are disjoint from F_l: F_l ^ key =
 * (F_l ^ (key & (2^b - 1))) + (key & -2^b), and only the low key bits need
 * an xor (k-slices 8 chunks apart share one per-lane value).  Values are
 * identical to the direct formula; the cached values are built at the first
 * use, which must dominate the later ones. */
typedef struct soff {
  LLVMValueRef base;     /* i32: base + row_l*pitch */
  LLVMValueRef fl;       /* i32: F_l */
  int flmask;            /* 2^b - 1 >= every F_l */
  int pitch, nch;
  bool swz;
  int nkey;
  int key[32];
  LLVMValueRef val[32];  /* base + (F_l ^ key) */
} soff;

static void soff_init(cg *g, soff *s, LLVMValueRef base, int pitch, int nch, bool swz, LLVMValueRef row_l,
                      LLVMValueRef cb_l, int cb_max) {
  int bound = cb_max | (swz ? 7 << 4 : 0);
  s->flmask = 0;
  while (s->flmask < bound) s->flmask = s->flmask << 1 | 1;
  s->pitch = pitch;
  s->nch = nch;
  s->swz = swz;
  s->nkey = 0;
  bool row0 = is_zero(row_l);
  s->base = row0 ? base : LLVMBuildAdd(g->B, base, mul_c(g, row_l, pitch), "");
  s->fl = cb_l;
  if (swz && !row0 && nch >= 2)
    s->fl = LLVMBuildXor(g->B, cb_l, LLVMBuildShl(g->B, swizzle_of(g, row_l, nch), cg_i32(g, 4), ""), "");
}

static LLVMValueRef soff_at(cg *g, soff *s, int row_c, int cb_c) {
  int fc = s->swz ? cb_c ^ (swizzle_const(row_c, s->nch) << 4) : cb_c;
  int key = s->swz ? fc & ~15 & s->flmask : 0; /* unswizzled: F_l + cb_c, all constant */
  int k = 0;
  while (k < s->nkey && s->key[k] != key) k++;
  LLVMValueRef v = k < s->nkey ? s->val[k] : NULL;
  if (!v) {
    LLVMValueRef x = key ? LLVMBuildXor(g->B, s->fl, cg_i32(g, key), "") : s->fl;
    v = is_zero(x) ? s->base : LLVMBuildAdd(g->B, s->base, x, "");
    if (k < 32) { /* else uncached */
      s->key[k] = key;
      s->val[k] = v;
      s->nkey++;
    }
  }
  int64_t c = (int64_t)row_c * s->pitch + (s->swz ? (fc & 15) + (fc & ~15 & ~s->flmask) : cb_c);
  return cg_add_c(g, v, c);
}

/* The value of scalar v at an iteration whose induction variable is iv_sub
 * (same LLVM type as the iv's register), emitted at the builder's position. */
LLVMValueRef cg_remat(cg *g, int32_t v, int32_t L, LLVMValueRef iv_sub) {
  tl_func *f = g->f;
  if (v == tl_op_at(f, L)->regions[0].args.data[0]) return iv_sub;
  if (tl_defined_outside(f, v, L)) return cg_get(g, v)->r[0];
  tl_value *x = tl_val(f, v);
  tl_op *d = tl_op_at(f, x->def);
  if (d->opc == TL_OP_const) return LLVMConstInt(cg_reg_type(g, (tl_dtype)x->type.dtype), (unsigned long long)d->ival, 1);
  LLVMValueRef ops[8];
  cg_val saved[9];
  if (d->nopnd > 8) TL_INTERNAL(g->ctx, "codegen: rematerialized op with %d operands", d->nopnd);
  /* a scalar load (schedule.c from_iv: of a tensor the kernel never writes) is read again at the
   * later iteration's indices; the tensor operand stays as it is */
  int first = d->opc == TL_OP_load ? 1 : 0;
  for (int i = first; i < d->nopnd; i++) ops[i] = cg_remat(g, d->opnd[i], L, iv_sub);
  for (int i = first; i < d->nopnd; i++) saved[i] = g->vals[d->opnd[i]];
  saved[8] = g->vals[d->res[0]];
  for (int i = first; i < d->nopnd; i++) {
    g->vals[d->opnd[i]].r = &ops[i];
    g->vals[d->opnd[i]].n = 1;
  }
  if (d->opc == TL_OP_load) {
    cg_emit_load(g, d);
    LLVMValueRef r = g->vals[d->res[0]].r[0];
    for (int i = d->nopnd - 1; i >= first; i--) g->vals[d->opnd[i]] = saved[i];
    g->vals[d->res[0]] = saved[8];
    return r;
  }
  cg_emit_ew(g, d);
  LLVMValueRef r = g->vals[d->res[0]].r[0];
  for (int i = d->nopnd - 1; i >= 0; i--) g->vals[d->opnd[i]] = saved[i];
  g->vals[d->res[0]] = saved[8];
  return r;
}

/* The loop's iv phi (i64) and the iv's register (maybe a trunc of it). */
static LLVMValueRef iv_phi(cg *g, int32_t L, LLVMValueRef *reg) {
  *reg = cg_get(g, tl_op_at(g->f, L)->regions[0].args.data[0])->r[0];
  return LLVMIsAPHINode(*reg) ? *reg : LLVMGetOperand(*reg, 0);
}

static LLVMValueRef iv_at(cg *g, LLVMValueRef base64, int k, LLVMValueRef step64, LLVMValueRef reg) {
  LLVMValueRef x = LLVMBuildAdd(g->B, base64, LLVMBuildMul(g->B, step64, cg_i64(g, k), ""), "");
  return LLVMTypeOf(reg) == g->i64 ? x : LLVMBuildTrunc(g->B, x, LLVMTypeOf(reg), "");
}

void cg_asm_void(cg *g, const char *text, const char *cons, LLVMValueRef *args, int n) {
  cg_asm(g, g->vd, text, cons, args, n, true);
}

/* Slow copy of element (r, c) (i32) of stream s's tile: a predicated global
 * load (zero outside the tensor) and a shared store where `on` (i32) != 0. */
static void slow_copy_elem(cg *g, cg_stream *s, cg_tensor *t, LLVMValueRef *start, int rowd, LLVMValueRef ok,
                           LLVMValueRef gaddr0, LLVMValueRef base, LLVMValueRef sbase, LLVMValueRef rows_sz,
                           LLVMValueRef cols_sz, LLVMValueRef r, LLVMValueRef c, LLVMValueRef on,
                           LLVMValueRef kmaj) {
  int rank = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0])->type.rank;
  int eb = s->eb;
  LLVMValueRef r64 = LLVMBuildZExt(g->B, r, g->i64, ""), c64 = LLVMBuildZExt(g->B, c, g->i64, "");
  LLVMValueRef rin = LLVMBuildICmp(g->B, LLVMIntULT, LLVMBuildAdd(g->B, start[rowd], r64, ""), rows_sz, "");
  if (ok) rin = LLVMBuildAnd(g->B, rin, ok, "");
  LLVMValueRef gc = LLVMBuildAdd(g->B, start[rank - 1], c64, "");
  LLVMValueRef in = LLVMBuildAnd(g->B, rin, LLVMBuildICmp(g->B, LLVMIntULT, gc, cols_sz, ""), "");
  in = LLVMBuildAnd(g->B, in, LLVMBuildICmp(g->B, LLVMIntNE, on, cg_i32(g, 0), ""), "");
  LLVMValueRef eoff = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r64, t->stride[rowd], ""),
                                   LLVMBuildMul(g->B, c64, t->stride[rank - 1], ""), "");
  LLVMValueRef a = LLVMBuildAdd(g->B, gaddr0, LLVMBuildMul(g->B, eoff, cg_i64(g, eb), ""), "");
  a = LLVMBuildSelect(g->B, in, a, base, "");
  LLVMValueRef args[2] = {a, LLVMBuildZExt(g->B, in, g->i32, "")};
  const char *txt = eb == 1 ? "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b16 $0, 0; @p ld.global.u8 $0, [$1]; }"
                            : "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b16 $0, 0; @p ld.global.b16 $0, [$1]; }";
  LLVMValueRef x = cg_asm(g, g->i16, txt, "=h,l,r", args, 2, true);
  LLVMValueRef cb = LLVMBuildMul(g->B, c, cg_i32(g, eb), "");
  LLVMValueRef ch = LLVMBuildLShr(g->B, cb, cg_i32(g, 4), "");
  LLVMValueRef sa = LLVMBuildOr(g->B, slot_off(g, s, r, ch), LLVMBuildAnd(g->B, cb, cg_i32(g, 15), ""), "");
  if (kmaj) { /* the [N][K] slot layout: element (r, c) at row c, byte r */
    int nk_nch = s->rows * eb / 16;
    LLVMValueRef rb = LLVMBuildMul(g->B, r, cg_i32(g, eb), "");
    LLVMValueRef kch = LLVMBuildLShr(g->B, rb, cg_i32(g, 4), "");
    if (s->swz) kch = LLVMBuildXor(g->B, kch, swizzle_of(g, c, nk_nch), "");
    LLVMValueRef sa_nk = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, c, cg_i32(g, s->nk_pitch), ""),
                                      LLVMBuildOr(g->B, LLVMBuildShl(g->B, kch, cg_i32(g, 4), ""),
                                                  LLVMBuildAnd(g->B, rb, cg_i32(g, 15), ""), ""), "");
    sa = LLVMBuildSelect(g->B, kmaj, sa_nk, sa, "");
  }
  LLVMValueRef sargs[3] = {LLVMBuildAdd(g->B, sbase, sa, ""), x, on};
  cg_asm_void(g, eb == 1 ? "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p st.shared.u8 [$0], $1; }"
                      : "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p st.shared.b16 [$0], $1; }",
           "r,h,r,~{memory}", sargs, 3);
}

/* Stream s (an 8-bit [K][N] B) is K-major in global memory (K stride 1, N
 * stride not 1): its slots hold it [N][K].  i1, loop-invariant. */
static LLVMValueRef stream_kmajor(cg *g, cg_stream *s) {
  tl_op *o = tl_op_at(g->f, s->load_op);
  tl_value *tv = tl_val(g->f, o->opnd[0]);
  int rank = tv->type.rank, rowd = -1;
  for (int d = 0; d < rank - 1; d++)
    if (o->dims[d] != 0) rowd = d;
  cg_tensor *t = &g->tensors[tv->index];
  return LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, t->stride[rowd], cg_i64(g, 1), ""),
                      LLVMBuildICmp(g->B, LLVMIntNE, t->stride[rank - 1], cg_i64(g, 1), ""), "");
}

/* Bytes (i32) of a 16-byte chunk that lie inside a row of `size` elements
 * when the chunk starts at element `at`: the elements left, clamped to
 * [0, epc] (signed: at < 0 is outside), times eb. */
static LLVMValueRef chunk_bytes_in_row(cg *g, LLVMValueRef size, LLVMValueRef at, int epc, int eb) {
  LLVMValueRef left = LLVMBuildSub(g->B, size, at, "");
  left = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, left, cg_i64(g, 0), ""), cg_i64(g, 0), left, "");
  left = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, left, cg_i64(g, epc), ""), cg_i64(g, epc), left, "");
  left = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, at, cg_i64(g, 0), ""), cg_i64(g, 0), left, "");
  return LLVMBuildTrunc(g->B, LLVMBuildMul(g->B, left, cg_i64(g, eb), ""), g->i32, "");
}

/* cp.async of a K-major 8-bit B tile into the [N][K] slot layout: chunk j of
 * a thread is row n (a column of the tile), 16 bytes along K. */
static void issue_nk(cg *g, cg_stream *s, cg_tensor *t, LLVMValueRef *start, int rowd, LLVMValueRef ok,
                     LLVMValueRef gaddr0, LLVMValueRef base, LLVMValueRef sbase, LLVMValueRef rows_sz,
                     LLVMValueRef cols_sz, LLVMValueRef tid, int threads, int per) {
  int rank = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0])->type.rank;
  int eb = s->eb, epc = 16 / eb, nch = s->rows * eb / 16;
  for (int j = 0; j < per; j++) {
    LLVMValueRef idx = LLVMBuildAdd(g->B, tid, cg_i32(g, j * threads), "");
    LLVMValueRef n = LLVMBuildUDiv(g->B, idx, cg_i32(g, nch), "");
    LLVMValueRef kc = LLVMBuildURem(g->B, idx, cg_i32(g, nch), "");
    LLVMValueRef pc = s->swz ? LLVMBuildXor(g->B, kc, swizzle_of(g, n, nch), "") : kc;
    LLVMValueRef dst = LLVMBuildAdd(g->B, sbase, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, n, cg_i32(g, s->nk_pitch), ""),
                                                             LLVMBuildShl(g->B, pc, cg_i32(g, 4), ""), ""), "");
    LLVMValueRef n64 = LLVMBuildZExt(g->B, n, g->i64, "");
    LLVMValueRef k64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, kc, g->i64, ""), cg_i64(g, epc), "");
    LLVMValueRef gn = LLVMBuildAdd(g->B, start[rank - 1], n64, "");
    LLVMValueRef gk = LLVMBuildAdd(g->B, start[rowd], k64, "");
    LLVMValueRef nok = LLVMBuildICmp(g->B, LLVMIntULT, gn, cols_sz, "");
    if (ok) nok = LLVMBuildAnd(g->B, nok, ok, "");
    LLVMValueRef nbytes = LLVMBuildSelect(g->B, nok, chunk_bytes_in_row(g, rows_sz, gk, epc, eb), cg_i32(g, 0), "");
    LLVMValueRef eoff = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, n64, t->stride[rank - 1], ""), k64, "");
    LLVMValueRef src = LLVMBuildAdd(g->B, gaddr0, LLVMBuildMul(g->B, eoff, cg_i64(g, eb), ""), "");
    src = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, nbytes, cg_i32(g, 0), ""), base, src, "");
    LLVMValueRef args[4] = {dst, src, nbytes, cg_i32(g, 1)};
    cg_asm_void(g, "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p cp.async.cg.shared.global [$0], [$1], 16, $2; }",
             "r,l,r,r,~{memory}", args, 4);
  }
}

/* Issue the copies of stream s for the iteration with iv `ivs` into `slot`. */
/* Per-thread geometry of a streamed tile copied in the register-lean form
 * (issue_stream): chunk j of thread tid is row tid / nch + j*R, chunk
 * column tid % nch. */
typedef struct lean_geo {
  cg_stream *s;
  LLVMValueRef tid;
  int R, nch, epc, eb, rank, rowd;
  LLVMValueRef *start, ok, rows_sz, cols_sz, sbase, gaddr0, base, rowstride;
} lean_geo;

/* Bytes between rows r and r + 1 of a slot (the same chunk column): the row
 * pitch, or 128 inside the 128-byte-row atoms of a wgmma [K][N] B slot. */
static int slot_row_bytes(const cg_stream *s) { return s->wg_atoms ? 128 : s->pitch; }

/* Shared (i32) and global (i64) addresses of the thread's chunk 0. */
static void lean_base(cg *g, const lean_geo *l, LLVMValueRef *dst0, LLVMValueRef *src0) {
  LLVMValueRef r0 = LLVMBuildUDiv(g->B, l->tid, cg_i32(g, l->nch), "");
  LLVMValueRef c = LLVMBuildURem(g->B, l->tid, cg_i32(g, l->nch), "");
  *dst0 = LLVMBuildAdd(g->B, l->sbase, slot_off(g, l->s, r0, c), "");
  LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c, g->i64, ""), cg_i64(g, l->epc), "");
  LLVMValueRef eoff = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, LLVMBuildZExt(g->B, r0, g->i64, ""), l->rowstride, ""), c64, "");
  *src0 = LLVMBuildAdd(g->B, l->gaddr0, LLVMBuildMul(g->B, eoff, cg_i64(g, l->eb), ""), "");
}

/* Chunks 0..per-1 in the lean form with bounds: addresses, bytes in bounds
 * (0: a row outside, or the clamped column remainder), empty copies pointed
 * at the tensor's base. */
static void lean_chunks(cg *g, const lean_geo *l, int per, LLVMValueRef *dst, LLVMValueRef *src, LLVMValueRef *nbytes) {
  LLVMValueRef d0, s0;
  lean_base(g, l, &d0, &s0);
  LLVMValueRef c = LLVMBuildURem(g->B, l->tid, cg_i32(g, l->nch), "");
  LLVMValueRef r064 = LLVMBuildZExt(g->B, LLVMBuildUDiv(g->B, l->tid, cg_i32(g, l->nch), ""), g->i64, "");
  LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c, g->i64, ""), cg_i64(g, l->epc), "");
  LLVMValueRef gcol = LLVMBuildAdd(g->B, l->start[l->rank - 1], c64, "");
  LLVMValueRef colbytes = chunk_bytes_in_row(g, l->cols_sz, gcol, l->epc, l->eb);
  LLVMValueRef step = LLVMBuildMul(g->B, l->rowstride, cg_i64(g, (int64_t)l->R * l->eb), "");
  LLVMValueRef g0 = LLVMBuildAdd(g->B, l->start[l->rowd], r064, "");
  for (int j = 0; j < per; j++) {
    dst[j] = LLVMBuildAdd(g->B, d0, cg_i32(g, j * l->R * slot_row_bytes(l->s)), "");
    src[j] = j ? LLVMBuildAdd(g->B, src[j - 1], step, "") : s0;
    LLVMValueRef grow = LLVMBuildAdd(g->B, g0, cg_i64(g, (int64_t)j * l->R), "");
    LLVMValueRef rok = LLVMBuildICmp(g->B, LLVMIntULT, grow, l->rows_sz, "");
    if (l->ok) rok = LLVMBuildAnd(g->B, rok, l->ok, "");
    nbytes[j] = LLVMBuildSelect(g->B, rok, colbytes, cg_i32(g, 0), "");
  }
  for (int j = 0; j < per; j++)
    src[j] = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, nbytes[j], cg_i32(g, 0), ""), l->base, src[j], "");
}

/* A compact element loop (this path is rare: unaligned or strided tensors),
 * so that it adds no register pressure to the main loop: i = tid, tid +
 * threads, ... < rows*cols (tid < threads), all addresses from i. */
static void copy_slow_loop(cg *g, cg_stream *s, cg_tensor *t, LLVMValueRef *start, int rowd, LLVMValueRef ok,
                           LLVMValueRef gaddr0, LLVMValueRef base, LLVMValueRef sbase, LLVMValueRef rows_sz,
                           LLVMValueRef cols_sz, LLVMValueRef kmaj, LLVMValueRef tid, int threads) {
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef lb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.slow.loop");
  LLVMBasicBlockRef xb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.slow.done");
  LLVMBuildBr(g->B, lb);
  LLVMPositionBuilderAtEnd(g->B, lb);
  LLVMValueRef i = LLVMBuildPhi(g->B, g->i32, "cp.i");
  LLVMValueRef r = LLVMBuildUDiv(g->B, i, cg_i32(g, s->cols), "");
  LLVMValueRef c = LLVMBuildURem(g->B, i, cg_i32(g, s->cols), "");
  slow_copy_elem(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, r, c, cg_i32(g, 1), kmaj);
  LLVMValueRef inext = LLVMBuildAdd(g->B, i, cg_i32(g, threads), "");
  LLVMBasicBlockRef lend = LLVMGetInsertBlock(g->B);
  LLVMAddIncoming(i, &tid, &entry, 1);
  LLVMAddIncoming(i, &inext, &lend, 1);
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntULT, inext, cg_i32(g, s->rows * s->cols), ""), lb, xb);
  LLVMPositionBuilderAtEnd(g->B, xb);
}

/* The tile start of stream s at iv `ivs` (i64 per dim), its row dim, the
 * in-range test of the scalar-indexed dims (NULL: none) and the global
 * address of element (start) (i64). */
static int stream_start(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef *start, LLVMValueRef *ok, LLVMValueRef *gaddr0) {
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, s->load_op);
  tl_value *tv = tl_val(f, o->opnd[0]);
  int rank = tv->type.rank, rowd = -1;
  cg_tensor *t = &g->tensors[tv->index];
  LLVMValueRef base_off = cg_i64(g, 0);
  *ok = NULL;
  for (int d = 0; d < rank; d++) {
    start[d] = cg_to_i64(g, cg_remat(g, o->opnd[1 + d], s->for_op, ivs));
    if (!is_zero(start[d])) {
      LLVMValueRef x = LLVMBuildMul(g->B, start[d], t->stride[d], "");
      base_off = is_zero(base_off) ? x : LLVMBuildAdd(g->B, base_off, x, "");
    }
    if (o->dims[d] == 0) {
      LLVMValueRef sz = LLVMBuildZExt(g->B, t->size[d], g->i64, "");
      LLVMValueRef c = LLVMBuildICmp(g->B, LLVMIntULT, start[d], sz, "");
      *ok = *ok ? LLVMBuildAnd(g->B, *ok, c, "") : c;
    } else if (d != rank - 1) {
      rowd = d;
    }
  }
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, t->ptr, g->i64, "");
  *gaddr0 = is_zero(base_off) ? base : LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, base_off, cg_i64(g, s->eb), ""), "");
  return rowd;
}

void cg_copy_slow(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, LLVMValueRef tid, int threads) {
  tl_value *tv = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0]);
  cg_tensor *t = &g->tensors[tv->index];
  int rank = tv->type.rank;
  LLVMValueRef start[TL_MAX_RANK], ok, gaddr0;
  int rowd = stream_start(g, s, ivs, start, &ok, &gaddr0);
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, t->ptr, g->i64, "");
  LLVMValueRef rows_sz = LLVMBuildZExt(g->B, t->size[rowd], g->i64, "");
  LLVMValueRef cols_sz = LLVMBuildZExt(g->B, t->size[rank - 1], g->i64, "");
  LLVMValueRef sbase = LLVMBuildAdd(g->B, cg_smem_base32(g),
                                    LLVMBuildAdd(g->B, cg_i32(g, s->offset),
                                                 LLVMBuildMul(g->B, slot, cg_i32(g, s->stage_bytes), ""), ""), "");
  copy_slow_loop(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, s->kn8 ? stream_kmajor(g, s) : NULL,
                 tid, threads);
}

static void issue_stream(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, bool branchy) {
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, s->load_op);
  tl_value *tv = tl_val(f, o->opnd[0]);
  int rank = tv->type.rank;
  cg_tensor *t = &g->tensors[tv->index];
  LLVMValueRef start[TL_MAX_RANK], ok = NULL, base_off = cg_i64(g, 0);
  int rowd = -1;
  for (int d = 0; d < rank; d++) {
    start[d] = cg_to_i64(g, cg_remat(g, o->opnd[1 + d], s->for_op, ivs));
    if (!is_zero(start[d])) { /* (the builder folds only constants) */
      LLVMValueRef x = LLVMBuildMul(g->B, start[d], t->stride[d], "");
      base_off = is_zero(base_off) ? x : LLVMBuildAdd(g->B, base_off, x, "");
    }
    if (o->dims[d] == 0) {
      LLVMValueRef sz = LLVMBuildZExt(g->B, t->size[d], g->i64, "");
      LLVMValueRef c = LLVMBuildICmp(g->B, LLVMIntULT, start[d], sz, "");
      ok = ok ? LLVMBuildAnd(g->B, ok, c, "") : c;
    } else if (d != rank - 1) {
      rowd = d;
    }
  }
  int eb = s->eb, epc = 16 / eb, nch = s->cols * eb / 16;
  int threads = f->warps * 32, per = s->rows * nch / threads;
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, t->ptr, g->i64, "");
  LLVMValueRef gaddr0 = is_zero(base_off) ? base : LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, base_off, cg_i64(g, eb), ""), "");
  LLVMValueRef rowstride = t->stride[rowd];
  LLVMValueRef rowbytes = LLVMBuildMul(g->B, rowstride, cg_i64(g, eb), "");
  LLVMValueRef fast = LLVMBuildICmp(g->B, LLVMIntEQ, t->stride[rank - 1], cg_i64(g, 1), "");
  LLVMValueRef mis = LLVMBuildOr(g->B, gaddr0, rowbytes, "");
  mis = LLVMBuildAnd(g->B, mis, cg_i64(g, 15), "");
  fast = LLVMBuildAnd(g->B, fast, LLVMBuildICmp(g->B, LLVMIntEQ, mis, cg_i64(g, 0), ""), "");
  LLVMValueRef kmaj = NULL, fast_nk = NULL;
  if (s->kn8) {
    kmaj = stream_kmajor(g, s);
    fast = LLVMBuildAnd(g->B, fast, LLVMBuildNot(g->B, kmaj, ""), "");
    LLVMValueRef mis_nk = LLVMBuildOr(g->B, gaddr0, LLVMBuildMul(g->B, t->stride[rank - 1], cg_i64(g, eb), ""), "");
    mis_nk = LLVMBuildAnd(g->B, mis_nk, cg_i64(g, 15), "");
    fast_nk = branchy ? LLVMBuildAnd(g->B, kmaj, LLVMBuildICmp(g->B, LLVMIntEQ, mis_nk, cg_i64(g, 0), ""), "") : NULL;
  }
  LLVMValueRef rows_sz = LLVMBuildZExt(g->B, t->size[rowd], g->i64, "");
  LLVMValueRef cols_sz = LLVMBuildZExt(g->B, t->size[rank - 1], g->i64, "");
  LLVMValueRef sbase = LLVMBuildAdd(g->B, cg_smem_base32(g),
                                    LLVMBuildAdd(g->B, cg_i32(g, s->offset),
                                                 LLVMBuildMul(g->B, slot, cg_i32(g, s->stage_bytes), ""), ""), "");
  LLVMValueRef tid = cg_tid32(g);
  /* per chunk: row, column, shared address, bytes in bounds */
  LLVMValueRef dst[64], src[64], nbytes[64];
  if (per > 64) cg_unsupported(g, "streamed operand of %d chunks per thread", per);
  /* Register-lean form when a thread's chunks share their column: chunk j is
   * row r0 + j*R (R = threads / nch), column c, and the XOR swizzle of row
   * r0 + j*R is that of r0 (R % 8 == 0).  Then the shared address is one
   * base + constants, the global one a chain src += R*rowstride*eb, and only
   * the row test is per chunk (lean_chunks).  Every per-chunk term depends on
   * this iteration's values, so nothing per chunk is hoisted out of the loop
   * (the general form below left ~5 registers per chunk live across it). */
  int R = nch <= threads && threads % nch == 0 ? threads / nch : 0;
  bool lean = R && (!(s->swz || s->wg_atoms) || R % 8 == 0);
  /* in the loop, a tile wholly inside the tensor (uniform test) takes plain
   * 16-byte copies: no per-chunk bounds, sizes or address selects */
  bool whole_path = lean && branchy && !s->kn8;
  /* the thread index read here (side effect: not hoisted), so the per-thread
   * offsets are recomputed each iteration (a few integer ops) instead of
   * living in registers across the loop */
  LLVMValueRef ltid = branchy ? cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true) : tid;
  lean_geo lg = {s, ltid, R, nch, epc, eb, rank, rowd, start, ok, rows_sz, cols_sz, sbase, gaddr0, base, rowstride};
  if (lean && !whole_path) lean_chunks(g, &lg, per, dst, src, nbytes);
  /* The general form (chunks of a thread in different columns, or rows
   * whose swizzle differs), split when nch and threads are powers of two.
   * Chunk j of a thread is idx = tid + j*threads, row idx / nch, column
   * idx % nch; with nch and threads powers of two (tid < threads) that is
   * row r_l + R_j, column c_l + C_j: r_l = tid / nch, c_l = tid % nch per
   * lane, and the constants R_j = (j*threads) / nch, C_j = (j*threads) % nch,
   * with bits disjoint from the lane parts.  So the per-lane part is computed
   * once and each chunk adds constants (soff for the swizzled shared address;
   * 64-bit source address lane part + R_j*rowstride*eb + C_j*16; the row
   * bound per chunk, the column clamp per distinct C_j): the same values as
   * the direct per-chunk formula, a fraction of the instructions. */
  bool split = !lean && !(nch & (nch - 1)) && !(threads & (threads - 1));
  if (split) {
    int lgn = 0;
    while ((1 << lgn) < nch) lgn++;
    LLVMValueRef r_l = threads > nch ? LLVMBuildLShr(g->B, tid, cg_i32(g, lgn), "") : cg_i32(g, 0);
    LLVMValueRef c_l = threads > nch ? LLVMBuildAnd(g->B, tid, cg_i32(g, nch - 1), "") : tid;
    soff so = {0};
    if (!s->wg_atoms)
      soff_init(g, &so, sbase, s->pitch, nch, s->swz, r_l, LLVMBuildShl(g->B, c_l, cg_i32(g, 4), ""),
                ((threads < nch ? threads : nch) - 1) * 16);
    LLVMValueRef r64 = LLVMBuildZExt(g->B, r_l, g->i64, "");
    LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c_l, g->i64, ""), cg_i64(g, epc), "");
    LLVMValueRef grow_l = LLVMBuildAdd(g->B, start[rowd], r64, "");
    LLVMValueRef gcol_l = LLVMBuildAdd(g->B, start[rank - 1], c64, "");
    LLVMValueRef src_l = LLVMBuildAdd(g->B, gaddr0, LLVMBuildMul(g->B, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r64, rowstride, ""), c64, ""),
                                                                  cg_i64(g, eb), ""), "");
    LLVMValueRef colnb[64];
    int colkey[64], ncol = 0;
    for (int j = 0; j < per; j++) {
      int Rj = (int)(((int64_t)j * threads) >> lgn), Cj = (int)(((int64_t)j * threads) & (nch - 1));
      /* (a wgmma atom slot: its own offsets, on the same row and column) */
      dst[j] = s->wg_atoms ? LLVMBuildAdd(g->B, sbase, slot_off(g, s, cg_add_c(g, r_l, Rj), cg_add_c(g, c_l, Cj)), "")
                           : soff_at(g, &so, Rj, Cj * 16);
      LLVMValueRef grow = Rj ? LLVMBuildAdd(g->B, grow_l, cg_i64(g, Rj), "") : grow_l;
      LLVMValueRef rok = LLVMBuildICmp(g->B, LLVMIntULT, grow, rows_sz, "");
      if (ok) rok = LLVMBuildAnd(g->B, rok, ok, "");
      int k = 0;
      while (k < ncol && colkey[k] != Cj) k++;
      if (k == ncol) {
        LLVMValueRef gcol = Cj ? LLVMBuildAdd(g->B, gcol_l, cg_i64(g, (int64_t)Cj * epc), "") : gcol_l;
        colkey[ncol] = Cj;
        colnb[ncol++] = chunk_bytes_in_row(g, cols_sz, gcol, epc, eb);
      }
      nbytes[j] = LLVMBuildSelect(g->B, rok, colnb[k], cg_i32(g, 0), "");
      src[j] = src_l;
      if (Rj) src[j] = LLVMBuildAdd(g->B, src[j], LLVMBuildMul(g->B, rowbytes, cg_i64(g, Rj), ""), "");
      if (Cj) src[j] = LLVMBuildAdd(g->B, src[j], cg_i64(g, (int64_t)Cj * 16), "");
      /* never form an address outside the tensor: point empty copies at its base */
      src[j] = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, nbytes[j], cg_i32(g, 0), ""), base, src[j], "");
    }
  }
  for (int j = 0; !lean && !split && j < per; j++) {
    LLVMValueRef idx = LLVMBuildAdd(g->B, tid, cg_i32(g, j * threads), "");
    LLVMValueRef r = LLVMBuildUDiv(g->B, idx, cg_i32(g, nch), "");
    LLVMValueRef c = LLVMBuildURem(g->B, idx, cg_i32(g, nch), "");
    dst[j] = LLVMBuildAdd(g->B, sbase, slot_off(g, s, r, c), "");
    LLVMValueRef r64 = LLVMBuildZExt(g->B, r, g->i64, "");
    LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c, g->i64, ""), cg_i64(g, epc), "");
    LLVMValueRef grow = LLVMBuildAdd(g->B, start[rowd], r64, "");
    LLVMValueRef gcol = LLVMBuildAdd(g->B, start[rank - 1], c64, "");
    LLVMValueRef rok = LLVMBuildICmp(g->B, LLVMIntULT, grow, rows_sz, "");
    if (ok) rok = LLVMBuildAnd(g->B, rok, ok, "");
    nbytes[j] = LLVMBuildSelect(g->B, rok, chunk_bytes_in_row(g, cols_sz, gcol, epc, eb), cg_i32(g, 0), "");
    LLVMValueRef eoff = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r64, rowstride, ""), c64, "");
    src[j] = LLVMBuildAdd(g->B, gaddr0, LLVMBuildMul(g->B, eoff, cg_i64(g, eb), ""), "");
    /* never form an address outside the tensor: point empty copies at its base */
    src[j] = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, nbytes[j], cg_i32(g, 0), ""), base, src[j], "");
  }
  /* fast: cp.async; slow (any stride or alignment): element by element, zeros
   * outside.  In the loop a uniform branch picks one; in the preheader (no
   * new blocks there) both are emitted, predicated. */
  LLVMValueRef slow = LLVMBuildNot(g->B, fast, "");
  LLVMBasicBlockRef fb = NULL, sb = NULL, jb = NULL;
  if (branchy) {
    fb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.fast");
    sb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.slow");
    jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.join");
    if (fast_nk) { /* K-major 8-bit B: cp.async of [N][K] rows (chunks along K) */
      LLVMBasicBlockRef nb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.fast.nk");
      LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.check");
      LLVMBuildCondBr(g->B, fast_nk, nb, cb);
      LLVMPositionBuilderAtEnd(g->B, nb);
      issue_nk(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, tid, threads, per);
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, cb);
    }
    LLVMBuildCondBr(g->B, fast, fb, sb);
    LLVMPositionBuilderAtEnd(g->B, fb);
    if (whole_path) {
      LLVMBasicBlockRef wb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.whole");
      LLVMBasicBlockRef pb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.part");
      LLVMValueRef r_lo = start[rowd], c_lo = start[rank - 1];
      LLVMValueRef in = LLVMBuildAnd(
          g->B, LLVMBuildICmp(g->B, LLVMIntSGE, r_lo, cg_i64(g, 0), ""),
          LLVMBuildICmp(g->B, LLVMIntSLE, LLVMBuildAdd(g->B, r_lo, cg_i64(g, s->rows), ""), rows_sz, ""), "");
      in = LLVMBuildAnd(g->B, in, LLVMBuildICmp(g->B, LLVMIntSGE, c_lo, cg_i64(g, 0), ""), "");
      in = LLVMBuildAnd(g->B, in, LLVMBuildICmp(g->B, LLVMIntSLE, LLVMBuildAdd(g->B, c_lo, cg_i64(g, s->cols), ""), cols_sz, ""), "");
      if (ok) in = LLVMBuildAnd(g->B, in, ok, "");
      cg_cond_br_likely(g, in, wb, pb);
      LLVMPositionBuilderAtEnd(g->B, wb);
      LLVMValueRef d0, s0;
      lean_base(g, &lg, &d0, &s0);
      LLVMValueRef step = LLVMBuildMul(g->B, rowstride, cg_i64(g, (int64_t)R * eb), "");
      for (int j = 0; j < per; j++) {
        LLVMValueRef args[2] = {LLVMBuildAdd(g->B, d0, cg_i32(g, j * R * slot_row_bytes(s)), ""), s0};
        cg_asm_void(g, "cp.async.cg.shared.global [$0], [$1], 16;", "r,l,~{memory}", args, 2);
        s0 = LLVMBuildAdd(g->B, s0, step, "");
      }
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, pb);
      lean_chunks(g, &lg, per, dst, src, nbytes);
    }
  }
  for (int j = 0; j < per; j++) {
    LLVMValueRef args[4] = {dst[j], src[j], nbytes[j], branchy ? cg_i32(g, 1) : LLVMBuildZExt(g->B, fast, g->i32, "")};
    cg_asm_void(g, "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p cp.async.cg.shared.global [$0], [$1], 16, $2; }",
             "r,l,r,r,~{memory}", args, 4);
  }
  if (branchy) {
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, sb);
  }
  if (branchy) {
    LLVMValueRef stid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
    copy_slow_loop(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, kmaj, stid, threads);
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, jb);
    return;
  }
  /* no blocks (fallback prologue): every element, predicated on !fast */
  LLVMValueRef st_on = LLVMBuildZExt(g->B, slow, g->i32, "");
  for (int j = 0; j < per; j++)
    for (int e = 0; e < epc; e++) {
      LLVMValueRef idx = LLVMBuildAdd(g->B, tid, cg_i32(g, j * threads), "");
      LLVMValueRef r = LLVMBuildUDiv(g->B, idx, cg_i32(g, nch), "");
      LLVMValueRef c = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, LLVMBuildURem(g->B, idx, cg_i32(g, nch), ""), cg_i32(g, epc), ""),
                                    cg_i32(g, e), "");
      slow_copy_elem(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, r, c, st_on, kmaj);
    }
}

static void commit(cg *g) { cg_asm_void(g, "cp.async.commit_group;", "~{memory}", NULL, 0); }

LLVMValueRef cg_slot_next(cg *g, LLVMValueRef s, int stages) {
  LLVMValueRef n = LLVMBuildAdd(g->B, s, cg_i32(g, 1), "");
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, n, cg_i32(g, stages), ""), cg_i32(g, 0), n, "");
}

/* iv + k*step as the iv's register type (`wide`: i64, else ivty). */
static LLVMValueRef iv_plus(cg *g, LLVMValueRef lo64, int k, LLVMValueRef step64, LLVMTypeRef ivty) {
  LLVMValueRef x = LLVMBuildAdd(g->B, lo64, LLVMBuildMul(g->B, step64, cg_i64(g, k), ""), "");
  return ivty == g->i64 ? x : LLVMBuildTrunc(g->B, x, ivty, "");
}

/* Ring prologue: stages 0..S-2 issued at the builder's position, before
 * the loop (branchy: real branches for the slow copies); slot counters. */
static void ring_prologue(cg *g, cg_ring *R, LLVMValueRef lo64, LLVMValueRef step64, LLVMTypeRef ivty, bool branchy) {
  cg_plan *p = g->plan;
  int S = R->stages;
  R->rdv = LLVMBuildAlloca(g->PB, g->i32, "ring.rd");
  R->wrv = LLVMBuildAlloca(g->PB, g->i32, "ring.wr");
  for (int k = 0; k + 1 + R->lag < S; k++) {
    LLVMValueRef ivs = iv_plus(g, lo64, k, step64, ivty);
    for (int i = 0; i < p->nstream; i++)
      if (p->streams[i].for_op == R->for_op) issue_stream(g, &p->streams[i], ivs, cg_i32(g, k), branchy);
    commit(g);
  }
  LLVMBuildStore(g->B, cg_i32(g, 0), R->rdv);
  LLVMBuildStore(g->B, cg_i32(g, S > 1 ? S - 1 - R->lag : 0), R->wrv);
  R->pre_done = true;
}

LLVMTypeRef cg_iv_type(cg *g, int32_t L) {
  tl_op *lo = tl_op_at(g->f, L);
  tl_type *ivt = &tl_val(g->f, lo->regions[0].args.data[0])->type;
  return LLVMTypeOf(cg_get(g, lo->opnd[0])->r[0]) == g->i64 || ivt->dtype == TL_I64 ? g->i64
                                                                                   : cg_reg_type(g, (tl_dtype)ivt->dtype);
}

/* The ring prologue of a TMA ring: stages 0..S-2-lag by TMA when the maps
 * hold (uniform branch), else the cp.async prologue. */
static void ring_prologue_tma(cg *g, cg_ring *R, LLVMValueRef lo64, LLVMValueRef step64, LLVMTypeRef ivty) {
  if (!R->tma_ok) cg_tma_kernel_prologue(g, R);
  int S = R->stages;
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.pro");
  LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cpa.pro");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "ring.pro");
  cg_cond_br_likely(g, R->tma_ok, tb, cb);
  LLVMPositionBuilderAtEnd(g->B, tb);
  for (int k = 0; k + 1 + R->lag < S; k++) {
    LLVMValueRef x = LLVMBuildAdd(g->B, lo64, LLVMBuildMul(g->B, step64, cg_i64(g, k), ""), "");
    cg_tma_issue(g, R, iv_plus(g, lo64, k, step64, ivty), cg_iv_in_range(g, R->for_op, x, step64), cg_i32(g, k));
  }
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, cb);
  ring_prologue(g, R, lo64, step64, ivty, true);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
  LLVMBuildStore(g->B, cg_i32(g, 0), R->rdv);
  LLVMBuildStore(g->B, cg_i32(g, S - 1 - R->lag), R->wrv);
}

void cg_loop_preheader(cg *g, int32_t for_op) {
  cg_make_plan(g);
  cg_plan *p = g->plan;
  tl_op *lo = tl_op_at(g->f, for_op);
  for (int i = 0; i < p->nring; i++) {
    cg_ring *R = &p->rings[i];
    if (R->for_op != for_op || (R->pre_done && !R->ws)) continue;
    if (R->ws) /* warp-specialized: the producer warpgroup fills the ring (emit_ws.c) */
      cg_ws_preheader(g, R);
    else if (R->tma)
      ring_prologue_tma(g, R, cg_to_i64(g, cg_get(g, lo->opnd[0])->r[0]), cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]),
                        cg_iv_type(g, for_op));
    else
      ring_prologue(g, R, cg_to_i64(g, cg_get(g, lo->opnd[0])->r[0]), cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]),
                    cg_iv_type(g, for_op), true);
  }
}

void cg_loop_exit(cg *g, int32_t for_op) {
  cg_plan *p = g->plan;
  if (!p || g->plan_f != g->f) return;
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == for_op && p->rings[i].pre_done) {
      if (p->rings[i].lag) {
        /* no wgmma may still be writing the accumulators.  ptxas (13.0)
         * serializes every wgmma (C7514) unless this wait is the first
         * instruction of its block, so it gets a block of its own behind a
         * branch LLVM cannot fold (the epilogue's address math, sunk to its
         * first use, would otherwise land in front of it) */
        LLVMValueRef one = cg_asm(g, g->i32, "mov.u32 $0, 1;", "=r", NULL, 0, true);
        LLVMBasicBlockRef db = LLVMAppendBasicBlockInContext(g->C, g->fn, "wgmma.drain");
        LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "wgmma.drained");
        LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntNE, one, cg_i32(g, 0), ""), db, cb);
        LLVMPositionBuilderAtEnd(g->B, db);
        cg_asm_void(g, "wgmma.wait_group.sync.aligned 0;", "~{memory}", NULL, 0);
        LLVMBuildBr(g->B, cb);
        LLVMPositionBuilderAtEnd(g->B, cb);
        cg_asm_void(g, "wgmma.wait_group.sync.aligned 0;", "~{memory}", NULL, 0);
        for (int k = 0; k < p->nwg; k++)
          if (tl_op_at(g->f, p->wg_dots[k])->parent == for_op && p->wg_carried[k] >= 0)
            cg_wgmma_fence_val(g, p->wg_carried[k]);
      }
      if (p->rings[i].ws) { /* the last slot's reads are done */
        cg_ws_loop_exit(g, &p->rings[i]);
        return;
      }
      /* drain: no copy may still be writing shared memory after the loop */
      cg_asm_void(g, "cp.async.wait_group 0;", "~{memory}", NULL, 0);
      return;
    }
}

/* At the first streamed load of a loop body: this iteration's wait, barrier
 * and the issue of stage i + S - 1 (the prologue is normally issued by
 * cg_loop_preheader; else here, predicated, before the preheader's branch).
 * One stage: free the slot, copy this iteration's tile, wait for it. */
static void emit_ring(cg *g, cg_ring *R) {
  cg_plan *p = g->plan;
  int S = R->stages;
  int32_t L = R->for_op;
  tl_op *lo = tl_op_at(g->f, L);
  LLVMValueRef reg, phi = iv_phi(g, L, &reg);
  LLVMValueRef step64 = cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]);
  if (R->ws) { /* warp-specialized: wait until the producer filled this slot */
    cg_ws_ring_wait(g, R);
    return;
  }
  if (!R->pre_done) {
    R->tma = false; /* (the predicated prologue has no blocks: the cp.async ring) */
    LLVMBasicBlockRef here = LLVMGetInsertBlock(g->B);
    LLVMPositionBuilderBefore(g->B, LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(phi, 0)));
    ring_prologue(g, R, LLVMGetIncomingValue(phi, 0), step64, LLVMTypeOf(reg), false);
    LLVMPositionBuilderAtEnd(g->B, here);
  }
  if (S == 1) {
    cg_barrier(g);
    for (int i = 0; i < p->nstream; i++)
      if (p->streams[i].for_op == L) issue_stream(g, &p->streams[i], reg, cg_i32(g, 0), true);
    commit(g);
    cg_asm_void(g, "cp.async.wait_group 0;", "~{memory}", NULL, 0);
    if (R->wgmma) cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
    cg_barrier(g);
    R->rd_slot = cg_i32(g, 0);
    return;
  }
  LLVMBasicBlockRef jb = NULL;
  LLVMValueRef rd0 = NULL, wr0 = NULL;
  if (R->tma) {
    /* TMA: a barrier (every warp is done reading the slot refilled next:
     * its wgmma groups of that stage were waited for), thread 0 issues
     * stage i + S-1-lag, everyone waits for stage i's mbarrier */
    rd0 = LLVMBuildLoad2(g->B, g->i32, R->rdv, "");
    wr0 = LLVMBuildLoad2(g->B, g->i32, R->wrv, "");
    LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.ring");
    LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cpa.ring");
    jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "ring.join");
    cg_cond_br_likely(g, R->tma_ok, tb, cb);
    LLVMPositionBuilderAtEnd(g->B, tb);
    cg_barrier(g);
    LLVMValueRef x = LLVMBuildAdd(g->B, phi, LLVMBuildMul(g->B, step64, cg_i64(g, S - 1 - R->lag), ""), "");
    cg_tma_issue(g, R, iv_at(g, phi, S - 1 - R->lag, step64, reg), cg_iv_in_range(g, L, x, step64), wr0);
    cg_tma_wait(g, R, rd0);
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, cb);
  }
  char w[64];
  snprintf(w, sizeof w, "cp.async.wait_group %d;", S - 2 - R->lag);
  cg_asm_void(g, w, "~{memory}", NULL, 0);
  /* cp.async and st.shared write through the generic proxy, wgmma reads
   * through the async proxy: each writer fences before the barrier */
  if (R->wgmma) cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  cg_barrier(g);
  LLVMValueRef rd = rd0 ? rd0 : LLVMBuildLoad2(g->B, g->i32, R->rdv, "");
  LLVMValueRef wr = wr0 ? wr0 : LLVMBuildLoad2(g->B, g->i32, R->wrv, "");
  R->rd_slot = rd;
  LLVMValueRef ivs = iv_at(g, phi, S - 1 - R->lag, step64, reg);
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == L) issue_stream(g, &p->streams[i], ivs, wr, true);
  commit(g);
  if (jb) {
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, jb);
  }
  LLVMBuildStore(g->B, cg_slot_next(g, rd, S), R->rdv);
  LLVMBuildStore(g->B, cg_slot_next(g, wr, S), R->wrv);
}

bool cg_load_streamed(cg *g, tl_op *o) {
  cg_plan *p = g->plan;
  if (!p || p->vkind[o->res[0]] != SRC_STREAM) return false;
  cg_stream *s = &p->streams[p->vstream[o->res[0]]];
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == s->for_op && !p->rings[i].emitted) {
      p->rings[i].emitted = true;
      emit_ring(g, &p->rings[i]);
    }
  return true;
}

/* ---- operands ------------------------------------------------------------------------ */

/* Where ldmatrix reads an operand: rows of `rowbytes` at byte offset `base`
 * (i32, may vary per iteration); `kcontig`: rows are M (A) or N (B) and K is
 * contiguous, else rows are K (B only, read with .trans). */
typedef struct opsrc {
  int kind;
  LLVMValueRef base;
  int rowbytes, nch;
  bool swz, kcontig;
  LLVMValueRef kmaj;      /* 8-bit [K][N] B stream: i1, the slot holds [N][K] (cg_stream.kn8) */
  int nk_rowbytes, nk_nch;
  LLVMValueRef *pk;       /* SRC_REGS: the packed fragments (pack_regs_a) */
  soff so;                /* ldmatrix addresses: per-lane part + constants (cg_emit_dot) */
  bool use_so;
} opsrc;

/* Shared address (i32) of the 16-byte row segment (row, colbyte), colbyte a multiple of 16. */
static LLVMValueRef src_addr(cg *g, const opsrc *s, LLVMValueRef row, LLVMValueRef colbyte) {
  LLVMValueRef cb = colbyte;
  if (s->swz) {
    LLVMValueRef ch = LLVMBuildXor(g->B, LLVMBuildLShr(g->B, colbyte, cg_i32(g, 4), ""), swizzle_of(g, row, s->nch), "");
    cb = LLVMBuildShl(g->B, ch, cg_i32(g, 4), "");
  }
  LLVMValueRef o = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, row, cg_i32(g, s->rowbytes), ""), cb, "");
  return LLVMBuildAdd(g->B, s->base, o, "");
}

/* Store every element of tile v at (row, col) -> off + row*pitch + col*eb
 * (the 16-byte chunk XOR-swizzled when s->swz), where (row, col) are the tile
 * coords, swapped when `swap`. */
static void stage(cg *g, int32_t v, LLVMValueRef off, const struct opsrc *s, int eb, bool swap) {
  tl_type *t = &tl_val(g->f, v)->type;
  const tl_layout *l = cg_layout(g, v);
  cg_val *x = cg_get(g, v);
  /* lane/warp part once, a constant per register (soff: same offsets) */
  int rd = swap ? 1 : 0, cd = swap ? 0 : 1;
  int cb_max = 0; /* the largest lane/warp part of the column: all its bases */
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++) cb_max += l->lane[j][cd] * eb;
  for (int j = 0; j < l->nwarp; j++) cb_max += l->warp[j][cd] * eb;
  soff so;
  soff_init(g, &so, off, s->rowbytes, s->nch, s->swz, cg_lane_warp(g, t->layout, rd),
            mul_c(g, cg_lane_warp(g, t->layout, cd), eb), cb_max);
  /* the alignment of the lane part, explicit (known bits of the split form
   * are too deep for InstCombine, and adjacent stores merge only when aligned):
   * the lowest bit any lane/warp basis moves the offset by; the swizzle moves
   * it by multiples of 16, the smem array and `off` are 16-aligned */
  int64_t lal = 16;
  if (!LLVMIsAConstantInt(off)) lal = 1;
  else if (LLVMConstIntGetZExtValue(off) % 16) lal = LLVMConstIntGetZExtValue(off) & -LLVMConstIntGetZExtValue(off);
  for (int src = 0; src < 2; src++)
    for (int j = 0; j < (src ? l->nwarp : TL_LAYOUT_LANE_BITS); j++) {
      int32_t br = src ? l->warp[j][rd] : l->lane[j][rd], bc = src ? l->warp[j][cd] : l->lane[j][cd];
      int64_t m = (int64_t)br * s->rowbytes | (int64_t)bc * eb;
      if (m && (m & -m) < lal) lal = m & -m;
    }
  for (int32_t r = 0; r < tl_layout_nregs(l); r++) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, c);
    int64_t k = (int64_t)c[rd] * s->rowbytes + (int64_t)c[cd] * eb, al = lal;
    if (k & (al - 1)) al = k & -k;
    LLVMValueRef st = LLVMBuildStore(g->B, x->r[r], cg_smem_ptr(g, soff_at(g, &so, c[rd], c[cd] * eb)));
    if (al > eb) LLVMSetAlignment(st, (unsigned)al);
  }
}

/* Store every element of the [rows][K] 16-bit tile v as wgmma's K-major
 * [K/64][rows][64] atoms at off: 64 columns = one 128-byte row of an atom
 * column of rows*128 bytes, 16-byte chunk c of row r at c ^ (r % 8) (the
 * 128-byte swizzle).  Once per program (a resident operand): plain math. */
static void stage_atoms(cg *g, int32_t v, int off, int32_t rows, int eb) {
  tl_type *t = &tl_val(g->f, v)->type;
  const tl_layout *l = cg_layout(g, v);
  cg_val *x = cg_get(g, v);
  LLVMValueRef row_l = cg_lane_warp(g, t->layout, 0), b_l = mul_c(g, cg_lane_warp(g, t->layout, 1), eb);
  for (int32_t r = 0; r < tl_layout_nregs(l); r++) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, c);
    LLVMValueRef row = cg_add_c(g, row_l, c[0]), b = cg_add_c(g, b_l, (int64_t)c[1] * eb);
    LLVMValueRef atom = LLVMBuildLShr(g->B, b, cg_i32(g, 7), "");
    LLVMValueRef ch = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, b, cg_i32(g, 4), ""), cg_i32(g, 7), "");
    ch = LLVMBuildXor(g->B, ch, LLVMBuildAnd(g->B, row, cg_i32(g, 7), ""), "");
    LLVMValueRef a = LLVMBuildAdd(g->B, mul_c(g, atom, (int64_t)rows * 128), mul_c(g, row, 128), "");
    a = LLVMBuildAdd(g->B, a, LLVMBuildShl(g->B, ch, cg_i32(g, 4), ""), "");
    a = LLVMBuildAdd(g->B, a, LLVMBuildAnd(g->B, b, cg_i32(g, 15), ""), "");
    LLVMBuildStore(g->B, x->r[r], cg_smem_ptr(g, cg_add_c(g, a, off)));
  }
}

/* ldmatrix .x4 (or .x2): returns the i32 registers in out[]. */
static void ldmatrix(cg *g, LLVMValueRef addr32, int nmat, bool trans, LLVMValueRef *out) {
  char text[128];
  snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [$%d];", nmat,
           trans ? ".trans" : "", nmat == 4 ? "$0,$1,$2,$3" : "$0,$1", nmat);
  const char *cons = nmat == 4 ? "=r,=r,=r,=r,r" : "=r,=r,r";
  LLVMTypeRef w[4] = {g->i32, g->i32, g->i32, g->i32};
  LLVMTypeRef st = LLVMStructTypeInContext(g->C, w, (unsigned)nmat, 0);
  LLVMValueRef r = cg_asm(g, st, text, cons, &addr32, 1, true);
  for (int i = 0; i < nmat; i++) out[i] = LLVMBuildExtractValue(g->B, r, (unsigned)i, "");
}

/* Two 16-bit values (low = x) packed in an i32. */
static LLVMValueRef pack2(cg *g, LLVMValueRef x, LLVMValueRef y) {
  /* integer ops: a <2 x bfloat> bitcast goes through local memory in NVPTX */
  LLVMValueRef xi = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, x, g->i16, ""), g->i32, "");
  LLVMValueRef yi = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, y, g->i16, ""), g->i32, "");
  return LLVMBuildOr(g->B, xi, LLVMBuildShl(g->B, yi, cg_i32(g, 16), ""), "");
}

typedef struct dotgeo {
  int M, N, K, eb, kstep, mk, wm, wn, mrep, nrep, lognrep;
  bool pairs; /* column-paired accumulator (layout.h tl_layout_mma_pairs) */
  LLVMValueRef row8, m_lo, m_hi, wmi, wni;
} dotgeo;

#define MAXREP 32 /* 32: wgmma's all-warps-along-M tiling on 128x256 (mma.sync fallback) */
typedef struct frags {
  LLVMValueRef a[MAXREP][4];
  LLVMValueRef b[MAXREP][2];
} frags;

/* The A fragments of an operand kept in registers (SRC_REGS), all k-slices
 * at once (pk[(mi * nk + kk) * 4 + i]): the accumulator registers of the
 * m16n8 blocks 2kk, 2kk+1 of row block mi, packed in pairs.  When A is
 * cast<16-bit>(f32 tile), each pair is converted and packed by one
 * cvt.rn.{bf16,f16}x2.f32 (the same rounding; the per-element casts are
 * then unused and deleted by LLVM).  Packing everything before the first
 * mma keeps 32-bit pairs, not the f32 values, live across the dot. */
static LLVMValueRef *pack_regs_a(cg *g, const dotgeo *q, int32_t a) {
  cg_val *x = cg_get(g, a);
  tl_value *av = tl_val(g->f, a);
  tl_op *cv = av->def >= 0 ? tl_op_at(g->f, av->def) : NULL;
  cg_val *wide = NULL;
  if (cv && cv->opc == TL_OP_cast && tl_val(g->f, cv->opnd[0])->type.dtype == TL_F32 &&
      tl_val(g->f, cv->opnd[0])->type.layout == av->type.layout)
    wide = cg_get(g, cv->opnd[0]);
  const char *cvt = av->type.dtype == TL_BF16 ? "cvt.rn.bf16x2.f32 $0, $2, $1;" : "cvt.rn.f16x2.f32 $0, $2, $1;";
  int nk = q->K / q->kstep, lognk = 0;
  while ((1 << lognk) < q->K / 8) lognk++;
  LLVMValueRef *pk = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)(q->mrep * nk * 4));
  for (int mi = 0; mi < q->mrep; mi++)
    for (int kk = 0; kk < nk; kk++) {
      int32_t b0 = (mi << (2 + lognk)) | ((2 * kk) << 2), b1 = (mi << (2 + lognk)) | ((2 * kk + 1) << 2);
      int32_t lo[4] = {b0, b0 + 2, b1, b1 + 2};
      for (int i = 0; i < 4; i++) {
        LLVMValueRef *dst = &pk[(mi * nk + kk) * 4 + i];
        if (wide) {
          LLVMValueRef xy[2] = {wide->r[lo[i]], wide->r[lo[i] + 1]};
          *dst = cg_asm(g, g->i32, cvt, "=r,f,f", xy, 2, false);
        } else {
          *dst = pack2(g, x->r[lo[i]], x->r[lo[i] + 1]);
        }
      }
    }
  return pk;
}

static void load_a(cg *g, const dotgeo *q, opsrc *sa, int32_t a, int kk, frags *fr) {
  (void)a;
  if (sa->kind == SRC_REGS) {
    int nk = q->K / q->kstep;
    for (int mi = 0; mi < q->mrep; mi++)
      for (int i = 0; i < 4; i++) fr->a[mi][i] = sa->pk[(mi * nk + kk) * 4 + i];
    return;
  }
  /* row wmi*16 + row8 + m_lo*8 (lane) + mi*16*wm, byte (m_hi*mk + kk*kstep)*eb */
  for (int mi = 0; mi < q->mrep; mi++) {
    if (sa->use_so) {
      ldmatrix(g, soff_at(g, &sa->so, mi * 16 * q->wm, kk * q->kstep * q->eb), 4, false, fr->a[mi]);
      continue;
    }
    LLVMValueRef row = LLVMBuildAdd(g->B, mul_c(g, q->wmi, 16), cg_i32(g, mi * 16 * q->wm), "");
    row = LLVMBuildAdd(g->B, row, LLVMBuildAdd(g->B, q->row8, mul_c(g, q->m_lo, 8), ""), "");
    LLVMValueRef col = LLVMBuildAdd(g->B, cg_i32(g, kk * q->kstep), mul_c(g, q->m_hi, q->mk), "");
    ldmatrix(g, src_addr(g, sa, row, mul_c(g, col, q->eb)), 4, false, fr->a[mi]);
  }
}

/* prmt.b32: bytes of {y:x} picked by the selector's nibbles (i32). */
static LLVMValueRef prmt(cg *g, LLVMValueRef x, LLVMValueRef y, LLVMValueRef sel) {
  LLVMValueRef args[3] = {x, y, sel};
  return cg_asm(g, g->i32, "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", args, 3, false);
}

/* 8-bit B kept [K][N] (column-paired accumulator): one ldmatrix.x4.trans of
 * byte pairs reads the 16-column segment of n-blocks ni, ni+1.  Matrix X
 * has k rows 0,1,4,5,8,9,12,13, Y the same + 2 (then both + 16 for the
 * second register): lane (c = lane/4, q = lane%4) gets X = bytes (k 4q, n
 * 2c), (4q, 2c+1), (4q+1, 2c), (4q+1, 2c+1) and Y the same for k 4q+2, 4q+3,
 * so prmt 0x6420 gives k 4q..4q+3 of column 2c (n-block ni: mma column c is
 * real column 2c) and 0x7531 those of column 2c+1 (n-block ni+1). */
static void load_b_kn8(cg *g, const dotgeo *q, const opsrc *sb, int kk, frags *fr) {
  /* K-major global B ([N][K] slots, sb->kmaj): plain ldmatrix of matrices
   * (ni, k lo), (ni+1, k lo), (ni, k hi), (ni+1, k hi), n-block ni + p
   * reading rows n = segment + 2*row + p; the prmt selectors then just pick
   * r0 / r1 (0x3210 / 0x7654), so one instruction sequence serves both */
  LLVMValueRef sel_e = LLVMBuildSelect(g->B, sb->kmaj, cg_i32(g, 0x3210), cg_i32(g, 0x6420), "");
  LLVMValueRef sel_o = LLVMBuildSelect(g->B, sb->kmaj, cg_i32(g, 0x7654), cg_i32(g, 0x7531), "");
  opsrc nk = *sb;
  nk.rowbytes = sb->nk_rowbytes;
  nk.nch = sb->nk_nch;
  for (int ni = 0; ni < q->nrep; ni += 2) {
    LLVMValueRef seg = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, q->wni, cg_i32(g, 16), ""),
                                    cg_i32(g, (ni >> 1) * 16 * q->wn), "");
    LLVMValueRef k = LLVMBuildAdd(g->B, LLVMBuildShl(g->B, LLVMBuildLShr(g->B, q->row8, cg_i32(g, 1), ""), cg_i32(g, 2), ""),
                                  LLVMBuildAnd(g->B, q->row8, cg_i32(g, 1), ""), "");
    k = LLVMBuildAdd(g->B, k, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, q->m_hi, cg_i32(g, 16), ""),
                                           LLVMBuildMul(g->B, q->m_lo, cg_i32(g, 2), ""), ""), "");
    k = LLVMBuildAdd(g->B, k, cg_i32(g, kk * q->kstep), "");
    LLVMValueRef n = LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, seg, LLVMBuildShl(g->B, q->row8, cg_i32(g, 1), ""), ""), q->m_lo, "");
    LLVMValueRef kb = LLVMBuildAdd(g->B, cg_i32(g, kk * q->kstep), LLVMBuildMul(g->B, q->m_hi, cg_i32(g, 16), ""), "");
    LLVMValueRef addr;
    if (nk.rowbytes == sb->rowbytes && nk.nch == sb->nch) /* square slots: one address, fewer registers */
      addr = src_addr(g, sb, LLVMBuildSelect(g->B, sb->kmaj, n, k, ""), LLVMBuildSelect(g->B, sb->kmaj, kb, seg, ""));
    else
      addr = LLVMBuildSelect(g->B, sb->kmaj, src_addr(g, &nk, n, kb), src_addr(g, sb, k, seg), "");
    LLVMValueRef r[4];
    {
      LLVMValueRef args[2] = {addr, LLVMBuildZExt(g->B, sb->kmaj, g->i32, "")};
      LLVMTypeRef w[4] = {g->i32, g->i32, g->i32, g->i32};
      LLVMValueRef st = cg_asm(g, LLVMStructTypeInContext(g->C, w, 4, 0),
                               "{ .reg .pred p; setp.ne.b32 p, $5, 0; "
                               "@p ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0,$1,$2,$3}, [$4]; "
                               "@!p ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0,$1,$2,$3}, [$4]; }",
                               "=r,=r,=r,=r,r,r", args, 2, true);
      for (int i = 0; i < 4; i++) r[i] = LLVMBuildExtractValue(g->B, st, (unsigned)i, "");
    }
    fr->b[ni][0] = prmt(g, r[0], r[1], sel_e);
    fr->b[ni][1] = prmt(g, r[2], r[3], sel_e);
    fr->b[ni + 1][0] = prmt(g, r[0], r[1], sel_o);
    fr->b[ni + 1][1] = prmt(g, r[2], r[3], sel_o);
  }
}

/* B's ldmatrix address without a per-lane split (pairs read through .trans). */
static LLVMValueRef b_addr_direct(cg *g, const dotgeo *q, const opsrc *sb, int kk, int ni) {
  /* matrices: (ni, k lo), (ni, k hi), (ni+1, k lo), (ni+1, k hi) */
  LLVMValueRef nblk = LLVMBuildAdd(g->B, cg_i32(g, ni), q->m_hi, "");
  LLVMValueRef n0 = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, q->wni, cg_i32(g, 8), ""),
                                 LLVMBuildMul(g->B, nblk, cg_i32(g, 8 * q->wn), ""), "");
  if (q->pairs) /* n-blocks ni, ni+1: the even / odd columns of one 16-column segment */
    n0 = LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, q->wni, cg_i32(g, 16), ""),
                                         cg_i32(g, (ni >> 1) * 16 * q->wn), ""), q->m_hi, "");
  if (sb->kcontig) {
    LLVMValueRef n = LLVMBuildAdd(g->B, n0, q->pairs ? LLVMBuildShl(g->B, q->row8, cg_i32(g, 1), "") : q->row8, "");
    LLVMValueRef k = LLVMBuildAdd(g->B, cg_i32(g, kk * q->kstep), LLVMBuildMul(g->B, q->m_lo, cg_i32(g, q->mk), ""), "");
    return src_addr(g, sb, n, LLVMBuildMul(g->B, k, cg_i32(g, q->eb), ""));
  }
  LLVMValueRef k = LLVMBuildAdd(g->B, cg_i32(g, kk * q->kstep),
                                LLVMBuildAdd(g->B, q->row8, LLVMBuildMul(g->B, q->m_lo, cg_i32(g, 8), ""), ""), "");
  return src_addr(g, sb, k, LLVMBuildMul(g->B, n0, cg_i32(g, q->eb), ""));
}

static void load_b(cg *g, const dotgeo *q, opsrc *sb, int kk, frags *fr) {
  if (!sb->kcontig && q->eb == 1) {
    load_b_kn8(g, q, sb, kk, fr);
    return;
  }
  for (int ni = 0; ni < q->nrep; ni += 2) {
    int nmat = ni + 1 < q->nrep ? 4 : 2;
    LLVMValueRef addr;
    if (sb->use_so) {
      /* the per-lane part is in sb->so (cg_emit_dot); here the n-block and
       * k-slice steps: rows n (kcontig) or k, bytes along k or n */
      int nstep = q->pairs ? (ni >> 1) * 16 * q->wn : ni * 8 * q->wn;
      addr = sb->kcontig ? soff_at(g, &sb->so, nstep, kk * q->kstep * q->eb)
                         : soff_at(g, &sb->so, kk * q->kstep, nstep * q->eb);
    } else {
      addr = b_addr_direct(g, q, sb, kk, ni);
    }
    LLVMValueRef r[4];
    ldmatrix(g, addr, nmat, !sb->kcontig, r);
    fr->b[ni][0] = r[0];
    fr->b[ni][1] = r[1];
    if (nmat == 4) {
      fr->b[ni + 1][0] = r[2];
      fr->b[ni + 1][1] = r[3];
    }
  }
}

/* A operand p (attention's P) usable as registers: an mma layout over [M, K]
 * with whole rows per warp and the result's row blocks. */
static bool a_from_regs(cg *g, int32_t a, const tl_layout *lc, int eb) {
  tl_type *at = &tl_val(g->f, a)->type;
  const tl_layout *la = cg_layout(g, a);
  return eb == 2 && la->kind == TL_LAYOUT_MMA && !la->mma_npair && la->mma_wn == 1 && lc->mma_wm == la->mma_wm &&
         la->nwarp == lc->nwarp && at->shape[0] == lc->shape[0] && at->shape[1] % 16 == 0;
}

void cg_emit_dot(cg *g, tl_op *o) {
  tl_func *f = g->f;
  cg_make_plan(g);
  cg_plan *p = g->plan;
  int32_t D = (int32_t)(o - f->ops.data);
  tl_dot_sched *e = dot_sched(g, D);
  int32_t a = o->opnd[0], b = o->opnd[1], accv = o->opnd[2], res = o->res[0];
  tl_type *at = &tl_val(f, a)->type, *bt = &tl_val(f, b)->type, *rt = &tl_val(f, res)->type;
  if (at->kind != TL_KIND_TILE || bt->kind != TL_KIND_TILE || at->rank != 2 || bt->rank != 2)
    cg_unsupported(g, "dot of operands that are not 2-D tiles");
  dotgeo q;
  memset(&q, 0, sizeof q);
  int32_t M = q.M = at->shape[0], K = q.K = at->shape[1], N = q.N = bt->shape[1];
  tl_dtype adt = (tl_dtype)at->dtype, bdt = (tl_dtype)bt->dtype;
  const char *ty, *tyb;
  int eb, kstep;
  bool fp8 = (adt == TL_F8E4M3 || adt == TL_F8E5M2) && (bdt == TL_F8E4M3 || bdt == TL_F8E5M2);
  if (adt != bdt && !fp8) cg_unsupported(g, "dot of %s by %s (cast one operand)", tl_dtype_name(adt), tl_dtype_name(bdt));
  tyb = bdt == TL_F8E4M3 ? "e4m3" : "e5m2";
  if (adt == TL_BF16 || adt == TL_F16) {
    ty = tyb = adt == TL_BF16 ? "bf16" : "f16";
    eb = 2;
    kstep = 16;
  } else if (adt == TL_F8E4M3 || adt == TL_F8E5M2) {
    if (g->sm < 89) cg_unsupported(g, "dot on %s needs sm_89 or newer (mma.sync m16n8k32)", tl_dtype_name(adt));
    ty = adt == TL_F8E4M3 ? "e4m3" : "e5m2";
    eb = 1;
    kstep = 32;
  } else {
    cg_unsupported(g, "dot on %s operands (tensor cores take bf16, f16, f8e4m3, f8e5m2)", tl_dtype_name(adt));
  }
  /* wgmma's warp tiling is also an mma.sync one: the fallback when the
   * operands do not stream */
  if (e && e->remapped && e->instr != TL_SCHED_INSTR_NONE && e->instr != TL_SCHED_MMA_WGMMA &&
      e->instr != (kstep == 32 ? TL_SCHED_MMA_M16N8K32 : TL_SCHED_MMA_M16N8K16))
    cg_unsupported(g, "dot scheduled on mma instruction %d, not the %s one", e->instr, kstep == 32 ? "m16n8k32" : "m16n8k16");
  if (rt->dtype != TL_F32) cg_unsupported(g, "dot accumulating in %s (only f32)", tl_dtype_name((tl_dtype)rt->dtype));
  if (M < 16 || N < 8 || K < kstep)
    cg_unsupported(g, "dot of shape %dx%dx%d (needs M >= 16, N >= 8, K >= %d)", M, N, K, kstep);
  const tl_layout *lc = cg_layout(g, res);
  if (lc->kind != TL_LAYOUT_MMA || tl_val(f, accv)->type.layout != rt->layout)
    TL_INTERNAL(g->ctx, "codegen: dot result/accumulator not in the mma layout");
  q.eb = eb;
  q.kstep = kstep;
  q.mk = 16 / eb;
  q.wm = lc->mma_wm;
  q.wn = lc->mma_wn;
  q.pairs = lc->mma_npair != 0;
  q.mrep = M / (16 * q.wm);
  q.nrep = N / (8 * q.wn);
  while ((1 << q.lognrep) < q.nrep) q.lognrep++;
  int logwm = 0;
  while ((1 << logwm) < q.wm) logwm++;
  if (!dot_is_wgmma(p, D) && (q.mrep > MAXREP || q.nrep > MAXREP))
    cg_unsupported(g, "dot with %d x %d m16n8 blocks per warp (at most %d x %d)", q.mrep, q.nrep, MAXREP, MAXREP);

  /* where the operands come from */
  opsrc sa = {0}, sb = {0};
  int32_t L = o->parent;
  const tl_layout *lb = p->vkind[b] == SRC_STREAM ? NULL : cg_layout(g, b);
  bool b_kn_staged = eb == 2 && lb && lb->nreg > 0 && lb->reg[0][1] != 0;
  int kinds[2] = {p->vkind[a], p->vkind[b]};
  /* vkind is per value: an operand staged once before another loop (a dot outside that loop, or
   * in a second loop, shares it) is staged here like any other (random test, seed 12869) */
  for (int w = 0; w < 2; w++)
    if (kinds[w] == SRC_INVARIANT && p->inv_loop[w ? b : a] != L) kinds[w] = SRC_STAGED;
  if (kinds[0] == SRC_STAGED && a_from_regs(g, a, lc, eb)) kinds[0] = SRC_REGS;
  int scratch = 0;
  bool need_stage = false;
  for (int w = 0; w < 2; w++) {
    opsrc *s = w ? &sb : &sa;
    int32_t x = w ? b : a;
    s->kind = kinds[w];
    if (s->kind == SRC_REGS) continue;
    if (s->kind == SRC_STREAM) {
      cg_stream *st = &p->streams[p->vstream[x]];
      cg_ring *R = NULL;
      for (int i = 0; i < p->nring; i++)
        if (p->rings[i].for_op == st->for_op) R = &p->rings[i];
      if (!R || !R->rd_slot) TL_INTERNAL(g->ctx, "codegen: streamed operand before its ring");
      s->base = LLVMBuildAdd(g->B, cg_smem_base32(g),
                             LLVMBuildAdd(g->B, cg_i32(g, st->offset),
                                          LLVMBuildMul(g->B, R->rd_slot, cg_i32(g, st->stage_bytes), ""), ""), "");
      s->rowbytes = st->pitch;
      s->nch = st->cols * st->eb / 16;
      s->swz = st->swz;
      /* A is always [M][K]; B streamed natural is [K][N], through trans [N][K] */
      s->kcontig = w == 0 || tl_val(f, x)->def < 0 || tl_op_at(f, tl_val(f, x)->def)->opc == TL_OP_trans;
      if (st->kn8) {
        s->kmaj = stream_kmajor(g, st);
        s->nk_rowbytes = st->nk_pitch;
        s->nk_nch = st->rows * st->eb / 16;
      }
      continue;
    }
    bool kn = w == 1 && b_kn_staged;
    int32_t rows = w == 0 ? M : kn ? K : N;
    int32_t cols = w == 0 ? K : kn ? N : K;
    s->rowbytes = staged_pitch(g, D, w, cols, eb, &s->swz);
    s->nch = cols * eb / 16;
    s->kcontig = !kn;
    if (s->kind == SRC_INVARIANT) {
      int off = p->vstream[x];
      if (!p->inv_done[x]) {
        /* once, in the loop's preheader */
        p->inv_done[x] = true;
        LLVMValueRef reg, phi = iv_phi(g, L, &reg);
        LLVMBasicBlockRef here = LLVMGetInsertBlock(g->B);
        LLVMPositionBuilderBefore(g->B, LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(phi, 0)));
        cg_barrier(g);
        bool wg = w == 0 && dot_is_wgmma(p, D);
        if (wg && s->rowbytes > 128) stage_atoms(g, x, off, M, eb);
        else stage(g, x, cg_i32(g, off), s, eb, w == 1 && !kn);
        /* st.shared writes through the generic proxy, wgmma reads through the async one */
        if (wg) cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
        cg_barrier(g);
        LLVMPositionBuilderAtEnd(g->B, here);
      }
      s->base = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, off), "");
      continue;
    }
    s->base = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, g->smem_persist + scratch), "");
    scratch += rows * s->rowbytes;
    need_stage = true;
  }
  if (dot_is_wgmma(p, D)) {
    cg_stream *st_b = &p->streams[p->vstream[b]];
    cg_wgmma_src wa = {.base = sa.base, .kmajor = true, .rowbytes = sa.rowbytes, .krows = 0};
    if (sa.kind == SRC_REGS) wa.regs = pack_regs_a(g, &q, a);
    else if (sa.rowbytes > 128) wa.rowbytes = 128, wa.katom = M * 128; /* resident [K/64][M][64] atoms */
    cg_wgmma_src wb = {.base = sb.base, .kmajor = st_b->wg_kmajor, .rowbytes = sb.rowbytes, .krows = st_b->rows};
    if (wb.kmajor && sb.rowbytes > 128) wb.rowbytes = 128, wb.katom = st_b->rows * 128; /* [K/64][N][64] atoms */
    int lag = 0, wi = wg_index(p, D);
    for (int i = 0; i < p->nring; i++)
      if (p->rings[i].for_op == L) lag = p->rings[i].lag;
    int mode = p->wg_defer[wi] ? 2 : lag && p->wg_inflight[wi] ? 1 : 0;
    cg_emit_wgmma(g, o, &wa, &wb, mode);
    for (int i = 0; i < p->nring; i++) /* warp-specialized: the slot(s) read are free */
      if (p->rings[i].for_op == L && p->rings[i].ws) cg_ws_after_dot(g, &p->rings[i], mode == 1);
    /* this dot waited for every group: the deferred dots' results (their
     * carried values) are complete from here on */
    for (int k = 0; mode == 0 && k < p->nwg; k++)
      if (p->wg_defer[k] && tl_op_at(f, p->wg_dots[k])->parent == L) cg_wgmma_fence_val(g, p->wg_carried[k]);
    return;
  }
  if (need_stage) {
    if (g->smem_persist + scratch > 227 * 1024) cg_unsupported(g, "dot staging needs %d bytes of shared memory", g->smem_persist + scratch);
    cg_scratch_use(g, scratch);
    cg_barrier(g);
    int off = 0;
    if (sa.kind == SRC_STAGED) {
      stage(g, a, cg_i32(g, g->smem_persist), &sa, eb, false);
      off = M * sa.rowbytes;
    }
    if (sb.kind == SRC_STAGED) stage(g, b, cg_i32(g, g->smem_persist + off), &sb, eb, sb.kcontig);
    cg_barrier(g);
  }

  /* per-lane parts of the ldmatrix addresses: matrix m = lane / 8, row r = lane % 8 */
  /* read %laneid here (side effect: not hoisted), so that the per-slice
   * fragment addresses are recomputed in the loop (a few integer ops)
   * instead of living in registers across it */
  LLVMValueRef lane = cg_asm(g, g->i32, "mov.u32 $0, %laneid;", "=r", NULL, 0, true);
  LLVMValueRef mat = LLVMBuildLShr(g->B, lane, cg_i32(g, 3), "");
  q.row8 = LLVMBuildAnd(g->B, lane, cg_i32(g, 7), "");
  q.m_lo = LLVMBuildAnd(g->B, mat, cg_i32(g, 1), "");
  q.m_hi = LLVMBuildLShr(g->B, mat, cg_i32(g, 1), "");
  q.wmi = LLVMBuildAnd(g->B, g->warp, cg_i32(g, q.wm - 1), "");
  q.wni = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, g->warp, cg_i32(g, logwm), ""), cg_i32(g, q.wn - 1), "");
  /* the per-lane parts of the fragment addresses, once per dot (load_a / load_b
   * add the m/n-block and k-slice steps: constants, see soff) */
  /* (a loop-invariant A, attention's Q, keeps the direct form: measured,
   * the split one costs attn CAUSAL a register and D=128 CAUSAL 24 bytes of
   * spills; a streamed A saves registers with it: docs/codegen.md; an mma.sync
   * dot under fp8-acc=promote also keeps it: with its temporary accumulator the
   * split form costs 28 bytes of spills on gemm_fp8_tensor/_rowcol) */
  sa.use_so = sa.kind != SRC_REGS && sa.kind != SRC_INVARIANT && !cg_dot_promotes(g, o);
  if (sa.use_so) {
    LLVMValueRef row_l = LLVMBuildAdd(g->B, mul_c(g, q.wmi, 16), LLVMBuildAdd(g->B, q.row8, mul_c(g, q.m_lo, 8), ""), "");
    soff_init(g, &sa.so, sa.base, sa.rowbytes, sa.nch, sa.swz, row_l, mul_c(g, q.m_hi, 16), 16);
  }
  if (sb.kcontig || (eb == 2 && !q.pairs)) {
    LLVMValueRef row_l, cb_l;
    int cb_max = 16;
    if (sb.kcontig) {
      row_l = q.pairs ? LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, mul_c(g, q.wni, 16), q.m_hi, ""), mul_c(g, q.row8, 2), "")
                      : LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, mul_c(g, q.wni, 8), mul_c(g, q.m_hi, 8 * q.wn), ""), q.row8, "");
      cb_l = mul_c(g, q.m_lo, 16);
    } else {
      row_l = LLVMBuildAdd(g->B, q.row8, mul_c(g, q.m_lo, 8), "");
      cb_l = mul_c(g, LLVMBuildAdd(g->B, mul_c(g, q.wni, 8), mul_c(g, q.m_hi, 8 * q.wn), ""), eb);
      cb_max = ((q.wn - 1) * 8 + 8 * q.wn) * eb;
    }
    soff_init(g, &sb.so, sb.base, sb.rowbytes, sb.nch, sb.swz, row_l, cb_l, cb_max);
    sb.use_so = true;
  }

  cg_val *acc = cg_get(g, accv);
  int32_t nregs = tl_layout_nregs(lc);
  cg_val *d = cg_new_val(g, res, nregs);
  for (int32_t r = 0; r < nregs; r++) d->r[r] = acc->r[r];

  int nk = K / kstep;
  /* fragments of slice kk+1 are loaded before the mmas of slice kk */
  /* (no table: always; a table: when ldmatrix_sched chose it) */
  bool lookahead = !p->follow || (e && e->scheduled && e->lookahead);
  /* the run-time choice of B's slot layout (8-bit [K][N] B) costs the
   * registers of the second fragment set: no lookahead (0 spills) */
  if (sb.kmaj) lookahead = false;
  /* promote's temporary costs as many registers as the accumulator: the
   * second fragment set goes (0 spills on 128x128 over 8 warps) */
  if (cg_dot_promotes(g, o)) lookahead = false;
  if (sa.kind == SRC_REGS) sa.pk = pack_regs_a(g, &q, a);
  frags *fr = tl_alloc(&g->ctx->arena, sizeof(frags) * 2);
  load_a(g, &q, &sa, a, 0, &fr[0]);
  load_b(g, &q, &sb, 0, &fr[0]);
  /* fp8-acc=promote: the mmas of at most CG_PROMOTE_K / kstep slices chain
   * through the temporary t (the first from a zero C), then f32 adds put t
   * into d; otherwise they chain through d itself */
  bool promote = cg_dot_promotes(g, o);
  int per = promote ? CG_PROMOTE_K / kstep : nk;
  LLVMValueRef *t = promote ? tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)nregs) : d->r;
  LLVMValueRef fzero = LLVMConstReal(g->f32, 0.0);
  for (int32_t r = 0; promote && r < nregs; r++) t[r] = fzero;
  for (int kk = 0; kk < nk; kk++) {
    frags *cur = lookahead ? &fr[kk & 1] : &fr[0], *nxt = &fr[(kk + 1) & 1];
    if (!lookahead && kk > 0) {
      load_a(g, &q, &sa, a, kk, cur);
      load_b(g, &q, &sb, kk, cur);
    }
    if (lookahead && kk + 1 < nk) {
      load_a(g, &q, &sa, a, kk + 1, nxt);
      load_b(g, &q, &sb, kk + 1, nxt);
    }
    for (int nj = 0; nj < q.nrep; nj++)
      for (int mi = 0; mi < q.mrep; mi++) {
        /* serpentine over mi keeps one operand in place */
        int m = nj & 1 ? q.mrep - 1 - mi : mi;
        int32_t base = (m << (2 + q.lognrep)) | (nj << 2);
        LLVMValueRef args[14];
        for (int k = 0; k < 4; k++) args[k] = cur->a[m][k];
        args[4] = cur->b[nj][0];
        args[5] = cur->b[nj][1];
        for (int k = 0; k < 4; k++) args[6 + k] = promote && kk % per == 0 ? fzero : t[base + k];
        LLVMValueRef out = cg_mma_sync(g, kstep, ty, tyb, args);
        for (int k = 0; k < 4; k++) t[base + k] = LLVMBuildExtractValue(g->B, out, (unsigned)k, "");
      }
    if (promote && (kk % per == per - 1 || kk == nk - 1))
      for (int32_t r = 0; r < nregs; r++) d->r[r] = LLVMBuildFAdd(g->B, d->r[r], t[r], "");
  }
}
