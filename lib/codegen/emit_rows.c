/* emit_rows.c: requires f->row_ahead > 0 (passes/row_stream.c), layouts and the grid clause
 * computable in the kernel; emits the kernel body as a loop of persistent CTAs over the tiles
 * of the grid clause (tile t: program ids t mod g0, t / g0 mod g1, t / (g0 g1); CTA c takes
 * tiles c, c + #CTAs, ...), with the loads lib/rows.h plans:
 *  - HOISTED loads once, before the loop;
 *  - each AHEAD load through a ring of `dist` register sets (allocas; LLVM makes them phis):
 *    set s holds the load of tile t + s * #CTAs when tile t starts.  An iteration issues the
 *    AHEAD loads of tile t + dist * #CTAs first (the ops computing their indices are emitted
 *    again for that tile: program ids, scalars, the ids of a gather from the deeper ring),
 *    then runs the body for tile t with those loads taken from set 0, then shifts the rings.
 *    A tile past the last one is clamped to the last one (a load nobody uses, from L2).
 * So while tile t is reduced and stored its successor's bytes are in flight, which a CTA of one
 * row could only have by another CTA on the SM.  docs/rows.md. */
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "code_env.h"
#include "ring.h"
#include "rows.h"

typedef struct row_ring {
  int32_t op;           /* the AHEAD load */
  int dist;             /* tiles ahead it is issued */
  int32_t n;            /* registers of its result */
  int32_t nw;           /* words a set keeps: n, or n / 2 when 16-bit registers go in pairs */
  LLVMTypeRef rt;       /* the registers' type */
  LLVMValueRef *slot;   /* dist * nw allocas: set s, word i at [s * nw + i] */
  LLVMValueRef *next;   /* this iteration's new set (nw words) */
} row_ring;

/* 16-bit registers are kept two to an i32 (the words the vector load gave), so that a set
 * costs the registers of its bytes */
static bool pairs16(cg *g, LLVMTypeRef t) {
  return t == g->i16 || t == g->f16 || t == g->bf16;
}

static void ring_words(cg *g, row_ring *R, LLVMValueRef *regs, LLVMValueRef *words) {
  if (R->nw == R->n) {
    memcpy(words, regs, sizeof(LLVMValueRef) * (size_t)R->n);
    return;
  }
  LLVMTypeRef vt = LLVMVectorType(R->rt, 2);
  for (int32_t i = 0; i < R->nw; i++) {
    LLVMValueRef v = LLVMGetUndef(vt);
    v = LLVMBuildInsertElement(g->B, v, regs[2 * i], cg_i32(g, 0), "");
    v = LLVMBuildInsertElement(g->B, v, regs[2 * i + 1], cg_i32(g, 1), "");
    words[i] = LLVMBuildBitCast(g->B, v, g->i32, "");
  }
}

bool cg_rows_active(cg *g) {
  tl_func *f = g->f;
  tl_row_plan p;
  const char *why;
  return f->row_ahead > 0 && !f->persist && !f->ws && tl_row_plan_make(f, &p, &why);
}

/* program ids of tile t (i32) into g->pid */
static void set_pids(cg *g, LLVMValueRef t) {
  LLVMValueRef rest = LLVMBuildUDiv(g->B, t, g->lgrid[0], "");
  g->pid[0] = LLVMBuildURem(g->B, t, g->lgrid[0], "pid0");
  g->pid[1] = LLVMBuildURem(g->B, rest, g->lgrid[1], "pid1");
  g->pid[2] = LLVMBuildUDiv(g->B, rest, g->lgrid[1], "pid2");
}

static LLVMValueRef clamp_tile(cg *g, LLVMValueRef t, LLVMValueRef ntiles) {
  LLVMValueRef last = LLVMBuildSub(g->B, ntiles, cg_i32(g, 1), "");
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, t, ntiles, ""), t, last, "");
}

/* Unpack words (16-bit pairs, or plain registers) into value v's registers; through an empty
 * asm first when `opaque` (a HOISTED load: so LLVM keeps the words, not their unpacked or
 * converted elements, in registers across the loop). */
static void bind_words(cg *g, row_ring *R, LLVMValueRef *words, bool opaque) {
  cg_val *x = cg_new_val(g, tl_op_at(g->f, R->op)->res[0], R->n);
  for (int32_t i = 0; i < R->nw; i++) {
    LLVMValueRef w = words[i];
    if (opaque && LLVMTypeOf(w) == g->i32) w = cg_asm(g, g->i32, "mov.b32 $0, $1;", "=r,r", &w, 1, true);
    if (R->nw == R->n) {
      x->r[i] = w;
      continue;
    }
    LLVMValueRef pv = LLVMBuildBitCast(g->B, w, LLVMVectorType(R->rt, 2), "");
    x->r[2 * i] = LLVMBuildExtractElement(g->B, pv, cg_i32(g, 0), "");
    x->r[2 * i + 1] = LLVMBuildExtractElement(g->B, pv, cg_i32(g, 1), "");
  }
}

/* Make value v (the result of ring R's load) set s of R. */
static void bind_set(cg *g, row_ring *R, int s) {
  LLVMValueRef *w = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)R->nw);
  for (int32_t i = 0; i < R->nw; i++) {
    LLVMValueRef a = R->slot[s * R->nw + i];
    w[i] = LLVMBuildLoad2(g->B, LLVMGetAllocatedType(a), a, "");
  }
  bind_words(g, R, w, false);
}

static void ring_init(cg *g, row_ring *R, int32_t op, int dist) {
  tl_type *t = &tl_val(g->f, tl_op_at(g->f, op)->res[0])->type;
  R->op = op;
  R->dist = dist;
  R->n = t->kind == TL_KIND_TILE ? tl_layout_nregs(cg_layout(g, tl_op_at(g->f, op)->res[0])) : 1;
  R->nw = R->n;
  R->rt = cg_reg_type(g, (tl_dtype)t->dtype);
  if (R->n % 2 == 0 && pairs16(g, R->rt)) R->nw = R->n / 2;
  R->slot = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)((dist ? dist : 1) * R->nw));
  R->next = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)R->n);
}

/* Emit planned load `op` for tile t (program ids set): the ops of its slice, then the load. */
static void emit_for_tile(cg *g, const tl_row_plan *p, int32_t op, uint8_t *mark) {
  tl_func *f = g->f;
  memset(mark, 0, (size_t)f->ops.len);
  tl_row_slice(f, p, op, mark);
  for (int i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    if (mark[id]) cg_emit_op(g, id);
  }
  cg_emit_op(g, op);
}

/* The loop over a persistent CTA's tiles t = t0, t0 + step, ... while t < ntiles: begin leaves
 * the builder in the body with t loaded; end stores the next tile, branches back and leaves the
 * builder after the loop, with the program ids no longer overridden. */
typedef struct tile_loop {
  LLVMValueRef tv, t;
  LLVMBasicBlockRef head, exit;
} tile_loop;

static tile_loop tile_loop_begin(cg *g, LLVMValueRef t0, LLVMValueRef ntiles) {
  tile_loop L;
  L.tv = LLVMBuildAlloca(g->PB, g->i32, "row.tile");
  LLVMBuildStore(g->B, t0, L.tv);
  L.head = LLVMAppendBasicBlockInContext(g->C, g->fn, "row.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "row.body");
  L.exit = LLVMAppendBasicBlockInContext(g->C, g->fn, "row.exit");
  LLVMBuildBr(g->B, L.head);
  LLVMPositionBuilderAtEnd(g->B, L.head);
  L.t = LLVMBuildLoad2(g->B, g->i32, L.tv, "");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntULT, L.t, ntiles, ""), body, L.exit);
  LLVMPositionBuilderAtEnd(g->B, body);
  return L;
}

static void tile_loop_end(cg *g, const tile_loop *L, LLVMValueRef next) {
  LLVMBuildStore(g->B, next, L->tv);
  LLVMBuildBr(g->B, L->head);
  LLVMPositionBuilderAtEnd(g->B, L->exit);
  memset(g->pid, 0, sizeof g->pid);
  memset(g->lgrid, 0, sizeof g->lgrid);
}

/* `TILEC_ROW_STREAM_L2=1` (measuring; docs/rows.md "rows8"): the persistent CTAs keep no ring of
 * registers; at the top of tile t each issues an L2 prefetch of tile t + #CTAs's level-0 AHEAD
 * loads (its own next tile: the SM that reads them is the one that asked, so its side of the L2),
 * then runs the body with its loads as written (L2 hits from the second tile on). */
static void emit_rows_l2(cg *g, const tl_row_plan *p, uint8_t *mark) {
  tl_func *f = g->f;
  int nl = 0;
  int32_t *loads = tl_alloc(&g->ctx->arena, sizeof(int32_t) * (size_t)(f->body.ops.len + 1));
  memset(mark, 0, (size_t)f->ops.len);
  for (int i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    if (p->role[id] != TL_ROW_AHEAD || p->level[id] != 0) continue;
    loads[nl++] = id;
    tl_row_slice(f, p, id, mark);
  }
  LLVMValueRef ntiles = cg_logical_grid(g);
  LLVMValueRef t0 = cg_sreg(g, "ctaid", 0), step = cg_sreg(g, "nctaid", 0);
  tile_loop L = tile_loop_begin(g, t0, ntiles);
  LLVMValueRef t = L.t;
  LLVMValueRef u = LLVMBuildAdd(g->B, t, step, "");
  LLVMValueRef go = LLVMBuildICmp(g->B, LLVMIntULT, u, ntiles, "");
  set_pids(g, clamp_tile(g, u, ntiles));
  for (int i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    if (mark[id] && !(tl_op_at(f, id)->flags & TL_OPF_DEAD)) cg_emit_op(g, id);
  }
  cg_prefetch_loads(g, loads, nl, go);
  /* every warp is past the previous tile's shared-memory reads (reduction scratch) */
  cg_barrier(g);
  set_pids(g, t);
  cg_emit_region(g, &f->body, NULL, NULL);
  tile_loop_end(g, &L, u);
}

void cg_emit_rows(cg *g) {
  tl_func *f = g->f;
  tl_row_plan p;
  const char *why = NULL;
  if (!tl_row_plan_make(f, &p, &why)) TL_INTERNAL(g->ctx, "codegen: row_ahead set but no row plan (%s)", why);
  if (tl_code_env_on("TILEC_ROW_STREAM_L2") && g->sm >= 90) {
    emit_rows_l2(g, &p, tl_alloc(&g->ctx->arena, (size_t)f->ops.len + 1));
    return;
  }
  uint8_t *mark = tl_alloc(&g->ctx->arena, (size_t)f->ops.len + 1);
  uint8_t *skip = tl_alloc(&g->ctx->arena, (size_t)f->ops.len + 1);
  memset(skip, 0, (size_t)f->ops.len + 1);
  LLVMValueRef ntiles = cg_logical_grid(g);
  LLVMValueRef t0 = cg_sreg(g, "ctaid", 0), step = cg_sreg(g, "nctaid", 0);
  set_pids(g, t0);
  /* HOISTED loads, once: their words are kept */
  row_ring *hoist = tl_alloc(&g->ctx->arena, sizeof *hoist * (size_t)(p.nhoisted + 1));
  int nh = 0;
  for (int i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    if (p.role[id] != TL_ROW_HOISTED) continue;
    emit_for_tile(g, &p, id, mark);
    row_ring *H = &hoist[nh++];
    ring_init(g, H, id, 0);
    ring_words(g, H, cg_get(g, tl_op_at(f, id)->res[0])->r, H->next);
    skip[id] = 1;
  }
  /* the rings, deepest gathers' ids first (lower level = issued further ahead) */
  row_ring *rings = tl_alloc(&g->ctx->arena, sizeof *rings * (size_t)(p.nahead + 1));
  int nr = 0;
  for (int lv = 0; lv <= p.max_level; lv++)
    for (int i = 0; i < f->body.ops.len; i++) {
      int32_t id = f->body.ops.data[i];
      if (p.role[id] != TL_ROW_AHEAD || p.level[id] != lv) continue;
      ring_init(g, &rings[nr++], id, tl_row_distance(&p, id, f->row_ahead));
      skip[id] = 1;
    }
  /* prologue: sets 0 .. dist-1 of every ring (tiles t0 + s * step) */
  for (int k = 0; k < nr; k++) {
    row_ring *R = &rings[k];
    for (int s = 0; s < R->dist; s++) {
      LLVMValueRef t = clamp_tile(g, LLVMBuildAdd(g->B, t0, LLVMBuildMul(g->B, step, cg_i32(g, s), ""), ""), ntiles);
      for (int j = 0; j < k; j++)
        if (rings[j].dist > s) bind_set(g, &rings[j], s);
      set_pids(g, t);
      emit_for_tile(g, &p, R->op, mark);
      cg_val *x = cg_get(g, tl_op_at(f, R->op)->res[0]);
      ring_words(g, R, x->r, R->next);
      for (int32_t i = 0; i < R->nw; i++) {
        LLVMValueRef a = R->slot[s * R->nw + i] = LLVMBuildAlloca(g->PB, LLVMTypeOf(R->next[i]), "row.ring");
        LLVMBuildStore(g->B, R->next[i], a);
      }
    }
  }
  /* the loop over this CTA's tiles */
  tile_loop L = tile_loop_begin(g, t0, ntiles);
  LLVMValueRef t = L.t;
  /* the loads of tile t + dist * step, before this tile's work */
  for (int k = 0; k < nr; k++) {
    row_ring *R = &rings[k];
    LLVMValueRef u = clamp_tile(g, LLVMBuildAdd(g->B, t, LLVMBuildMul(g->B, step, cg_i32(g, R->dist), ""), ""), ntiles);
    for (int j = 0; j < k; j++)
      if (rings[j].dist > R->dist) bind_set(g, &rings[j], R->dist);
    set_pids(g, u);
    emit_for_tile(g, &p, R->op, mark);
    ring_words(g, R, cg_get(g, tl_op_at(f, R->op)->res[0])->r, R->next);
  }
  /* every warp is past the previous tile's shared-memory reads (reduction scratch) */
  cg_barrier(g);
  set_pids(g, t);
  for (int k = 0; k < nr; k++) bind_set(g, &rings[k], 0);
  for (int k = 0; k < nh; k++) bind_words(g, &hoist[k], hoist[k].next, true);
  g->skip = skip;
  cg_emit_region(g, &f->body, NULL, NULL);
  g->skip = NULL;
  for (int k = 0; k < nr; k++) {
    row_ring *R = &rings[k];
    for (int s = 0; s + 1 < R->dist; s++)
      for (int32_t i = 0; i < R->nw; i++) {
        LLVMValueRef from = R->slot[(s + 1) * R->nw + i];
        LLVMBuildStore(g->B, LLVMBuildLoad2(g->B, LLVMGetAllocatedType(from), from, ""), R->slot[s * R->nw + i]);
      }
    for (int32_t i = 0; i < R->nw; i++) LLVMBuildStore(g->B, R->next[i], R->slot[(R->dist - 1) * R->nw + i]);
  }
  tile_loop_end(g, &L, LLVMBuildAdd(g->B, t, step, ""));
}
