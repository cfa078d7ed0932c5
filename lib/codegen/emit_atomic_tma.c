/* emit_atomic_tma.c: requires the main-loop plan (dot_plan.c cg_make_plan) and layouts; lowers
 * `atomic_add(view, tile)` of an f32 tile into a box of an f32 tensor (the view's last two dims
 * sliced, the others indexed by scalars) to a staging buffer in shared memory and one TMA bulk
 * reduce-add (cp.reduce.async.bulk.tensor ... .add.tile.bulk_group), sm_90a, when
 * TILEC_ATOMIC_TMA=1 (default off until measured).  docs/pipelines.md "dQ by a TMA reduce-add".
 *
 * The buffer is [cols/32][rows][32] f32: boxes of 32 columns (128-byte rows, the TMA 128-byte
 * swizzle: a warp's 8-byte writes from a wgmma or mma.sync accumulator land in 8 different
 * 16-byte chunks of 8 rows, no bank conflict).  Per atomic, in program order (one buffer):
 *   thread 0: cp.async.bulk.wait_group.read 0            the buffer's previous reduce has read it
 *   barrier                                              ... and every thread knows
 *   every thread: st.shared of its registers (pairs of columns as .v2)
 *   fence.proxy.async.shared::cta                        generic-proxy writes seen by the TMA unit
 *   barrier
 *   thread 0: one reduce-add a box, commit_group
 * and before the kernel returns, thread 0 waits for every group (wait_group 0: the reads of shared
 * memory and the writes to global both done).  TILEC_ATOMIC_TMA=2: two buffers taking turns and one
 * barrier (thread 0's wait for the other buffer's reduce moves before the second barrier).  The reduce adds
 * each element atomically, rows and columns past the tensor's end clipped by the copy engine (the
 * per-element path's bounds test).  A tensor that fails the map test at run time takes the
 * per-element path (a uniform branch; in a TMA form the launcher runs the no-TMA form instead). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "code_env.h"

#define ATMA_MAX 2
#define ATMA_BOX_COLS 32 /* f32 columns of one box: 128-byte rows */

typedef struct cg_atma {
  int32_t op;                    /* the atomic op */
  int map;                       /* its tensor map (index among the hidden parameters) */
  int rows, cols, boxes, rank;
  int stage_off, stage_bytes, nbuf;
  LLVMValueRef ok, map_addr, bufv; /* kernel prologue: the map test, the map's address, the buffer index */
} cg_atma;

static bool is_tile(tl_func *f, int32_t v) { return tl_val(f, v)->type.kind == TL_KIND_TILE; }

/* Why atomic o cannot go by a TMA reduce-add (plan p), or NULL. */
static const char *atma_unfit(cg *g, cg_plan *p, tl_op *o) {
  tl_func *f = g->f;
  const char *env = tl_code_env("TILEC_ATOMIC_TMA");
  if (!env || (env[0] != '1' && env[0] != '2')) return "TILEC_ATOMIC_TMA is not 1 (default off)";
  if (!cg_arch_is_90a(g)) return "the target is not sm_90a";
  if (f->pipeline != TL_PIPE_CUTLASS) return "the pipeline is not cutlass";
  if (cg_tma_mode(g) == TL_TMA_OFF) return "this is the kernel's no-TMA form (for tensors a tensor map cannot take)";
  if (p->ws || f->ws) return "a warp-specialized kernel (its consumers' barriers)";
  if (o->kind != TL_ATOMIC_ADD) return "not an add";
  tl_value *tv = tl_val(f, o->opnd[0]);
  if (tv->def >= 0 || tv->type.kind != TL_KIND_TENSOR) return "not a tensor parameter";
  if (f->params.data[tv->index].dtype != TL_F32) return "the tensor is not f32";
  int32_t v = o->opnd[o->nopnd - 1];
  if (!is_tile(f, v)) return "the value is not a tile";
  const tl_type *t = &tl_val(f, v)->type;
  if (t->dtype != TL_F32) return "the tile is not f32";
  int rank = tv->type.rank;
  if (rank < 2 || rank > 5) return "the tensor's rank is not 2..5";
  for (int d = 0; d < rank; d++) {
    if ((o->dims[d] != 0) != (d >= rank - 2)) return "the tile is not the last two dims of its tensor";
    if (is_tile(f, o->opnd[1 + d])) return "a scattered view";
  }
  if (t->rank != 2) return "the tile is not rank 2";
  if (t->shape[0] > 256) return "the tile has more than 256 rows (the TMA box limit)";
  if (t->shape[0] % 8) return "the tile's rows are not a multiple of 8 (boxes 1024-byte aligned for the swizzle)";
  if (t->shape[1] % ATMA_BOX_COLS || t->shape[1] > 8 * ATMA_BOX_COLS) return "the tile's columns are not 32..256 in 32s";
  const tl_layout *l = tl_layout_at(f, t->layout);
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++)
    if (l->lane[j][1] >= ATMA_BOX_COLS) return "a layout spreads one box's columns over lanes";
  for (int j = 0; j < l->nwarp; j++)
    if (l->warp[j][1] >= ATMA_BOX_COLS) return "a layout spreads one box's columns over warps";
  if (p->ntma >= TL_MAX_TMA) return "more tensor maps than the launcher takes";
  return NULL;
}

/* Staging buffers an atomic asks for: one; TILEC_ATOMIC_TMA=2 two (and one barrier fewer). */
static int wanted_buffers(void) {
  const char *env = tl_code_env("TILEC_ATOMIC_TMA");
  return env && env[0] == '2' ? 2 : 1;
}

static void plan_region(cg *g, cg_plan *p, tl_region *r, int *persist, tl_sbuf *note) {
  tl_func *f = g->f;
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nregions; k++) plan_region(g, p, &o->regions[k], persist, note);
    if (o->opc != TL_OP_atomic) continue;
    tl_value *tv = tl_val(f, o->opnd[0]);
    const char *name = tv->def < 0 && tv->type.kind == TL_KIND_TENSOR ? f->params.data[tv->index].name : "?";
    const char *why = p->natma >= ATMA_MAX ? "more than two such atomics" : atma_unfit(g, p, o);
    if (!why) {
      const tl_type *t = &tl_val(f, o->opnd[o->nopnd - 1])->type;
      int rows = t->shape[0], cols = t->shape[1], bytes = rows * cols * 4;
      int at1k = (*persist + 1023) / 1024 * 1024;
      int64_t budget = tl_arch_smem_budget(g->o ? g->o->arch : NULL);
      /* one buffer: its previous reduce was issued a whole loop step before (five dots in the
       * attention backward), so the wait before it is written is all but free, but it costs a
       * barrier; TILEC_ATOMIC_TMA=2 asks for two buffers and one barrier (measuring) */
      int want = wanted_buffers();
      int nbuf = want == 2 && at1k + 2 * bytes <= budget ? 2 : at1k + bytes <= budget ? 1 : 0;
      if (!nbuf) why = "no room in shared memory for a staging buffer";
      else {
        cg_atma *a = &p->atma[p->natma++];
        memset(a, 0, sizeof *a);
        a->op = r->ops.data[i];
        a->rows = rows;
        a->cols = cols;
        a->boxes = cols / ATMA_BOX_COLS;
        a->rank = tv->type.rank;
        a->stage_off = at1k;
        a->stage_bytes = bytes;
        a->nbuf = nbuf;
        *persist = at1k + nbuf * bytes;
        a->map = cg_tma_map_add(p, tv->index, ATMA_BOX_COLS, rows, 128, TL_F32);
        tl_sbuf_printf(note, "%satomic_add into %s by a TMA bulk reduce-add (%d box%s of %dx%d f32, 128-byte "
                             "swizzle, %d staging buffer%s of %d bytes; red.add per element when %s fails the map "
                             "test; TILEC_ATOMIC_TMA=0 off)",
                       note->len ? "; " : "", name, a->boxes, a->boxes > 1 ? "es" : "", rows, ATMA_BOX_COLS, nbuf,
                       nbuf > 1 ? "s" : "", bytes, name);
        continue;
      }
    }
    /* (silent when off: the default) */
    if (strncmp(why, "TILEC_ATOMIC_TMA", 16))
      tl_sbuf_printf(note, "%satomic into %s by red per element (no TMA reduce: %s)", note->len ? "; " : "", name, why);
  }
}

/* The planner's fit test without the map count (the plan's rings are not laid out yet). */
static int reserve_region(cg *g, tl_region *r) {
  tl_func *f = g->f;
  int bytes = 0;
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nregions; k++) bytes += reserve_region(g, &o->regions[k]);
    if (o->opc != TL_OP_atomic || atma_unfit(g, g->plan, o)) continue;
    const tl_type *t = &tl_val(f, o->opnd[o->nopnd - 1])->type;
    bytes += t->shape[0] * t->shape[1] * 4 * wanted_buffers();
  }
  return bytes;
}

int cg_atomic_tma_reserve(cg *g) { return reserve_region(g, &g->f->body); }

int cg_plan_atomic_tma(cg *g, int persist) {
  cg_plan *p = g->plan;
  p->natma = 0;
  p->atma = tl_alloc(&g->ctx->arena, ATMA_MAX * sizeof *p->atma);
  tl_sbuf note = {0};
  plan_region(g, p, &g->f->body, &persist, &note);
  if (note.len) p->atma_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  return persist;
}

static cg_atma *atma_of(cg *g, tl_op *o) {
  cg_plan *p = g->plan && g->plan_f == g->f ? g->plan : NULL;
  for (int i = 0; p && i < p->natma; i++)
    if (tl_op_at(g->f, p->atma[i].op) == o) return &p->atma[i];
  return NULL;
}

/* The map test of codegen.h's ABI (the launcher repeats it: the last stride 1, the base and every
 * other byte stride 16-byte aligned and in (0, 2^40), no size 0), the map's address and the
 * buffer index, once in the kernel prologue. */
void cg_atomic_tma_prologue(cg *g) {
  cg_plan *p = g->plan && g->plan_f == g->f ? g->plan : NULL;
  for (int i = 0; p && i < p->natma; i++) {
    cg_atma *a = &p->atma[i];
    if (a->ok) continue;
    LLVMBuilderRef save = g->B;
    g->B = g->PB;
    tl_op *o = tl_op_at(g->f, a->op);
    tl_value *tv = tl_val(g->f, o->opnd[0]);
    cg_tensor *t = &g->tensors[tv->index];
    a->ok = cg_tma_assume(g, cg_tma_map_test(g, LLVMConstInt(g->i1, 1, 0), t, tv->type.rank, 4));
    a->map_addr = cg_tma_map_addr(g, a->map);
    a->bufv = LLVMBuildAlloca(g->PB, g->i32, "atma.buf");
    LLVMBuildStore(g->B, cg_i32(g, 0), a->bufv);
    g->B = save;
  }
}

bool cg_atomic_tma(cg *g, tl_op *o, void (*red)(cg *g, tl_op *o)) {
  cg_atma *a = atma_of(g, o);
  if (!a) return false;
  tl_func *f = g->f;
  LLVMBasicBlockRef jb = cg_tma_or_fallback(g, a->ok, o, red, "atma");
  int32_t v = o->opnd[o->nopnd - 1];
  int32_t lid = tl_val(f, v)->type.layout;
  const tl_layout *l = tl_layout_at(f, lid);
  cg_val *sv = cg_get(g, v);
  /* the buffer: alternate between two (each thread keeps the same index) */
  LLVMValueRef buf = cg_i32(g, 0);
  if (a->nbuf > 1) {
    buf = LLVMBuildLoad2(g->B, g->i32, a->bufv, "");
    LLVMBuildStore(g->B, LLVMBuildXor(g->B, buf, cg_i32(g, 1), ""), a->bufv);
  }
  /* one buffer: its previous reduce has read it (thread 0), and every thread knows */
  if (a->nbuf == 1) {
    cg_thread0_asm(g, "@p cp.async.bulk.wait_group.read 0;", NULL, 0, "r,~{memory}");
    cg_barrier(g);
  }
  LLVMValueRef base = cg_add_c(g, cg_smem_base32(g), a->stage_off);
  if (a->nbuf > 1) base = LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, buf, cg_i32(g, a->stage_bytes), ""), "");
  /* one address cache a box (rows of 128 bytes, the 128-byte swizzle: 16-byte chunk ^ row % 8) */
  cg_soff so[8];
  LLVMValueRef row_l = cg_lane_warp(g, lid, 0), col_l = cg_lane_warp(g, lid, 1);
  for (int b = 0; b < a->boxes; b++)
    cg_soff_init(g, &so[b], cg_add_c(g, base, (int64_t)b * a->rows * 128), 128, 8, true, row_l, cg_mul_c(g, col_l, 4), 127);
  bool pairs = l->nreg >= 1 && l->reg[0][0] == 0 && l->reg[0][1] == 1;
  for (int32_t r = 0; r < tl_layout_nregs(l); r += pairs ? 2 : 1) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, c);
    LLVMValueRef addr = cg_soff_at(g, &so[c[1] / ATMA_BOX_COLS], c[0], (c[1] % ATMA_BOX_COLS) * 4);
    if (pairs) {
      LLVMValueRef args[3] = {addr, sv->r[r], sv->r[r + 1]};
      cg_asm_void(g, "st.shared.v2.f32 [$0], {$1, $2};", "r,f,f,~{memory}", args, 3);
    } else {
      LLVMValueRef args[2] = {addr, sv->r[r]};
      cg_asm_void(g, "st.shared.f32 [$0], $1;", "r,f,~{memory}", args, 2);
    }
  }
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  /* two buffers: thread 0 waits here for the previous reduce (the other buffer's) to have read it,
   * so once every thread is past this barrier the buffer the next execution writes is free: one
   * barrier an execution instead of two */
  if (a->nbuf == 2) cg_thread0_asm(g, "@p cp.async.bulk.wait_group.read 0;", NULL, 0, "r,~{memory}");
  cg_barrier(g);
  /* thread 0: a reduce-add a box, coordinates innermost first (column, row, then the indexed dims) */
  int rank = a->rank;
  LLVMValueRef st[TL_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    st[d] = cg_get(g, o->opnd[1 + d])->r[0];
    if (LLVMTypeOf(st[d]) != g->i32) st[d] = LLVMBuildTrunc(g->B, st[d], g->i32, "");
  }
  /* one asm a box ($1 the map, $2 the box's shared address, then its coordinates), then the commit */
  char body[256], cons[64];
  snprintf(body, sizeof body, "@p cp.reduce.async.bulk.tensor.%dd.global.shared::cta.add.tile.bulk_group [$1, {", rank);
  snprintf(cons, sizeof cons, "r,l,r");
  for (int d = 0; d < rank; d++) {
    snprintf(body + strlen(body), sizeof body - strlen(body), "%s$%d", d ? ", " : "", 3 + d);
    snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",r");
  }
  snprintf(body + strlen(body), sizeof body - strlen(body), "}], [$2];");
  snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",~{memory}");
  for (int b = 0; b < a->boxes; b++) {
    LLVMValueRef args[2 + TL_MAX_RANK];
    args[0] = a->map_addr;
    args[1] = cg_add_c(g, base, (int64_t)b * a->rows * 128);
    args[2] = cg_add_c(g, st[rank - 1], (int64_t)b * ATMA_BOX_COLS);
    for (int d = 1; d < rank; d++) args[2 + d] = st[rank - 1 - d];
    cg_thread0_asm(g, body, args, 2 + rank, cons);
  }
  cg_thread0_asm(g, "@p cp.async.bulk.commit_group;", NULL, 0, "r,~{memory}");
  cg_warp_converge(g);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
  return true;
}

void cg_atomic_tma_kernel_end(cg *g) {
  cg_plan *p = g->plan && g->plan_f == g->f ? g->plan : NULL;
  if (!p || !p->natma) return;
  /* every reduce done (reads of shared memory, writes to global) before the CTA exits */
  cg_thread0_asm(g, "@p cp.async.bulk.wait_group 0;", NULL, 0, "r,~{memory}");
}
