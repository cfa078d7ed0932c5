/* emit_row_prefetch.c: requires the row plan (lib/rows.h) and the kernel's prologue; in a row
 * kernel launched one CTA per program (not row_stream's persistent CTAs), emits at the program's
 * start an L2 prefetch (`cp.async.bulk.prefetch.L2`, one bulk request a 4 KB+ chunk, from the
 * first threads) of the bytes the program D CTAs later in the launch order reads by its
 * program-id loads, D about the CTAs resident on the GPU.  docs/rows.md "rows8".
 *
 * Why: a row program loads its rows, then reduces, then stores; while it reduces, it has nothing
 * in flight, and the CTAs an SM holds (registers) are what keeps DRAM busy.  The CTA that starts
 * in its slot later finds its rows in L2 (requested a CTA lifetime early, holding no registers),
 * so DRAM streams the next rows under every CTA's reductions and stores, and the last CTAs of
 * the launch (the tail) read L2.  With D = the resident CTAs the CTA u = c + D starts about when
 * c ends (the hardware starts CTAs in order as slots free); any D from a third to twice that is
 * early enough and leaves the bytes in L2 for less than two CTA lifetimes.
 *
 * Which loads: the plan's AHEAD loads of level 0 (a tensor the kernel never writes, indices from
 * program ids, parameters and scalar math: lib/rows.h), and a gather of whole rows by the ids such
 * a load gives (`E[ids, 0 : BD]`, ids = load(Ids[t0 : t0 + BM]): embedding, MoE permutation): its
 * BM ids of CTA u are loaded at the start, one a thread, and each row prefetched at the end of
 * the program (the ids have arrived by then; the rows are needed by CTA u, which starts about
 * D - resident CTAs after this one ends).  Per tensor the bounding
 * byte range of its loads' views (first element to last in bounds), prefetched when it is at
 * most twice the views' bytes (a dense row or block of rows: not a column block of a wide
 * matrix), trimmed inward to 16 bytes, and only inside the tensor (a view past the tensor's end,
 * a CTA index past the launch: nothing).  D = min(%nsmid * CTAs an SM at most (2048 threads, 32
 * CTAs), CAP / the program's bytes) with CAP = `TILEC_ROW_PREFETCH` MB (0 or unset: off): the bytes
 * waiting in L2 stay well below its 50 MB.
 *
 * Off by default: on the H200 every kernel that prefetched ran at 0.66-0.78 of the copy bandwidth
 * against 0.87-0.95 without (about the time of reading the prefetched bytes twice: the lines were not
 * in L2 for the CTA that read them; bench/RESULTS.md "rows8").  A measuring switch. */
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "code_env.h"
#include "rows.h"

#ifndef CG_ROW_PREFETCH_MB
#define CG_ROW_PREFETCH_MB 0
#endif

enum { CHUNK_MIN = 4096, CHUNKS_MAX = 32 };

static int prefetch_cap_mb(void) {
  const char *e = tl_code_env("TILEC_ROW_PREFETCH");
  if (!e) return CG_ROW_PREFETCH_MB;
  int v = atoi(e);
  return v < 0 ? 0 : v > 40 ? 40 : v;
}

static LLVMValueRef i64_of(cg *g, LLVMValueRef x) {
  return LLVMTypeOf(x) == g->i64 ? x : LLVMBuildSExt(g->B, x, g->i64, "");
}

static LLVMValueRef smin64(cg *g, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, a, b, ""), a, b, "");
}

/* One load's view at the current program ids: its first element's address, one past its last
 * (in bounds) element's, and whether the range is usable (every start inside the tensor, the kept
 * dims' strides positive). */
typedef struct view_range {
  int param;
  LLVMValueRef first, end, ok;
  int64_t bytes; /* the view's bytes (compile time) */
} view_range;

/* The range of load o's view whose start along dim d is starts[d] (i64), spanning o->dims[d]
 * elements where spans[d], one element elsewhere (a gathered row's index): ok where every start is
 * inside the tensor (unsigned: a negative one is not) and the spanned dims' strides are positive. */
static void range_of(cg *g, tl_op *o, LLVMValueRef *starts, const bool *spans, view_range *v) {
  tl_func *f = g->f;
  tl_value *tv = tl_val(f, o->opnd[0]);
  v->param = tv->index;
  tl_param *prm = &f->params.data[v->param];
  cg_tensor *T = &g->tensors[v->param];
  int bytes = tl_dtype_bytes(prm->dtype);
  LLVMValueRef first = cg_i64(g, 0), last = cg_i64(g, 0), ok = LLVMConstInt(g->i1, 1, 0);
  int64_t numel = 1;
  for (int d = 0; d < prm->rank; d++) {
    LLVMValueRef st = starts[d];
    LLVMValueRef sz = LLVMBuildZExt(g->B, T->size[d], g->i64, "");
    LLVMValueRef stride = T->stride[d];
    ok = LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntULT, st, sz, ""), "");
    LLVMValueRef lastix = st;
    if (spans[d]) {
      numel *= o->dims[d];
      lastix = LLVMBuildSub(g->B, smin64(g, LLVMBuildAdd(g->B, st, cg_i64(g, o->dims[d]), ""), sz), cg_i64(g, 1), "");
      ok = LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntSGT, stride, cg_i64(g, 0), ""), "");
    }
    first = LLVMBuildAdd(g->B, first, LLVMBuildMul(g->B, st, stride, ""), "");
    last = LLVMBuildAdd(g->B, last, LLVMBuildMul(g->B, lastix, stride, ""), "");
  }
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, T->ptr, g->i64, "");
  LLVMValueRef eb = cg_i64(g, bytes);
  v->first = LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, first, eb, ""), "pf.first");
  v->end = LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, LLVMBuildAdd(g->B, last, cg_i64(g, 1), ""), eb, ""), "pf.end");
  v->ok = ok;
  v->bytes = numel * bytes;
}

static void view_range_of(cg *g, tl_op *o, view_range *v) {
  LLVMValueRef starts[TL_MAX_RANK];
  bool spans[TL_MAX_RANK];
  int rank = tl_val(g->f, o->opnd[0])->type.rank;
  for (int d = 0; d < rank; d++) {
    starts[d] = i64_of(g, cg_get(g, o->opnd[1 + d])->r[0]);
    spans[d] = o->dims[d] > 1;
  }
  range_of(g, o, starts, spans, v);
}

/* The program ids of the CTA with linear launch index l (i32, ctaid.x fastest), as the body
 * sees them: the launch's own ids decomposed, or grid_order's (tile_sched.c) where it remaps. */
static void pids_of_cta(cg *g, LLVMValueRef l, LLVMValueRef n[3], LLVMValueRef pid[3]) {
  int a = cg_grid_order_axis(g);
  LLVMValueRef one_d = LLVMBuildICmp(g->B, LLVMIntEQ, LLVMBuildMul(g->B, n[1], n[2], ""), cg_i32(g, 1), "");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef multi = LLVMAppendBasicBlockInContext(g->C, g->fn, "pf.pids");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->C, g->fn, "pf.pids.join");
  LLVMBuildCondBr(g->B, one_d, join, multi);
  LLVMPositionBuilderAtEnd(g->B, multi);
  LLVMValueRef q[3];
  q[0] = LLVMBuildURem(g->B, l, n[0], "");
  LLVMValueRef rest = LLVMBuildUDiv(g->B, l, n[0], "");
  q[1] = LLVMBuildURem(g->B, rest, n[1], "");
  q[2] = LLVMBuildUDiv(g->B, rest, n[1], "");
  if (a > 0) { /* grid_order: axis a fastest, the others after it in order, unless n[a] == 1 */
    int order[3] = {a, a == 0 ? 1 : 0, a == 2 ? 1 : 2};
    LLVMValueRef r[3], x = l;
    r[order[0]] = LLVMBuildURem(g->B, x, n[order[0]], "");
    x = LLVMBuildUDiv(g->B, x, n[order[0]], "");
    r[order[1]] = LLVMBuildURem(g->B, x, n[order[1]], "");
    r[order[2]] = LLVMBuildUDiv(g->B, x, n[order[1]], "");
    LLVMValueRef plain = LLVMBuildICmp(g->B, LLVMIntEQ, n[a], cg_i32(g, 1), "");
    for (int d = 0; d < 3; d++) q[d] = LLVMBuildSelect(g->B, plain, q[d], r[d], "");
  }
  LLVMBasicBlockRef mend = LLVMGetInsertBlock(g->B);
  LLVMBuildBr(g->B, join);
  LLVMPositionBuilderAtEnd(g->B, join);
  LLVMValueRef lin[3] = {l, cg_i32(g, 0), cg_i32(g, 0)};
  for (int d = 0; d < 3; d++) {
    pid[d] = LLVMBuildPhi(g->B, g->i32, "pf.pid");
    LLVMValueRef in[2] = {lin[d], q[d]};
    LLVMBasicBlockRef bb[2] = {from, mend};
    LLVMAddIncoming(pid[d], in, bb, 2);
  }
}

/* A function-level load `E[ids', i.., c0 : c0 + BD]` whose one gather index is the [BM] result of
 * planned level-0 load `idl` made [BM, BD] by expand_dims(1) and broadcast (and layout changes):
 * the index load's op, or -1. */
static int32_t row_gather_ids(tl_func *f, const tl_row_plan *p, tl_op *o) {
  if (o->opc != TL_OP_load || o->parent >= 0 || (o->flags & TL_OPF_DEAD)) return -1;
  int rank = tl_val(f, o->opnd[0])->type.rank, ng = 0, gd = -1, kept = 0, gk = -1;
  if (tl_val(f, o->opnd[0])->def >= 0) return -1;
  for (int d = 0; d < rank; d++) {
    bool tile = tl_val(f, o->opnd[1 + d])->type.kind == TL_KIND_TILE;
    if (tile) ng++, gd = d, gk = kept;
    if (o->dims[d] != 0) kept++;
  }
  if (ng != 1 || gk != 0 || kept != 2) return -1;
  int32_t v = o->opnd[1 + gd];
  int expands = 0;
  for (;;) {
    int32_t def = tl_val(f, v)->def;
    if (def < 0) return -1;
    tl_op *d = tl_op_at(f, def);
    if (d->opc == TL_OP_broadcast || d->opc == TL_OP_convert_layout) {
      v = d->opnd[0];
      continue;
    }
    if (d->opc == TL_OP_expand_dims) {
      if (d->axis != 1 || expands++) return -1;
      v = d->opnd[0];
      continue;
    }
    if (d->opc != TL_OP_load || p->role[def] != TL_ROW_AHEAD || p->level[def] != 0 || expands != 1) return -1;
    const tl_type *t = &tl_val(f, d->res[0])->type;
    if (t->kind != TL_KIND_TILE || t->rank != 1 || tl_val(f, d->opnd[0])->type.rank != 1) return -1;
    if (t->dtype != TL_I32 && t->dtype != TL_I64) return -1;
    return def;
  }
}

/* The gathers' state from the program's start to its end. */
typedef struct gather_pf {
  int32_t op;       /* the gather */
  LLVMValueRef id;  /* i32 or i64: this thread's id of CTA u (thread i: row i), or -1 (none) */
  LLVMValueRef starts[TL_MAX_RANK]; /* i64: the gather's other starts for CTA u */
} gather_pf;

typedef struct cg_row_pf {
  int n;
  gather_pf *g;
} cg_row_pf;

/* Thread i's id of CTA u: Ids[start + i] (start of the index load for CTA u: its slice emitted). */
static void gather_begin(cg *g, tl_op *o, tl_op *idl, LLVMValueRef go, LLVMValueRef tid, gather_pf *q) {
  tl_func *f = g->f;
  int bm = tl_val(f, idl->res[0])->type.shape[0];
  cg_tensor *I = &g->tensors[tl_val(f, idl->opnd[0])->index];
  tl_dtype idt = tl_val(f, idl->opnd[0])->type.dtype;
  LLVMValueRef st = i64_of(g, cg_get(g, idl->opnd[1])->r[0]);
  LLVMValueRef ix = LLVMBuildAdd(g->B, st, LLVMBuildZExt(g->B, tid, g->i64, ""), "");
  LLVMValueRef in = LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntULT, ix, LLVMBuildZExt(g->B, I->size[0], g->i64, ""), ""),
                                 LLVMBuildICmp(g->B, LLVMIntULT, tid, cg_i32(g, bm), ""), "");
  in = LLVMBuildAnd(g->B, in, go, "");
  int eb = tl_dtype_bytes(idt);
  LLVMValueRef addr = LLVMBuildAdd(g->B, LLVMBuildPtrToInt(g->B, I->ptr, g->i64, ""),
                                   LLVMBuildMul(g->B, LLVMBuildMul(g->B, ix, I->stride[0], ""), cg_i64(g, eb), ""), "");
  LLVMValueRef args[2] = {addr, LLVMBuildZExt(g->B, in, g->i32, "")};
  /* (-1 where thread i has no row: one register kept to the end) */
  q->id = eb == 8 ? cg_asm(g, g->i64, "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b64 $0, -1; @p ld.global.b64 $0, [$1]; }",
                           "=l,l,r", args, 2, true)
                  : cg_asm(g, g->i32, "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b32 $0, -1; @p ld.global.b32 $0, [$1]; }",
                           "=r,l,r", args, 2, true);
  q->op = (int32_t)(o - f->ops.data);
  int rank = tl_val(f, o->opnd[0])->type.rank;
  for (int d = 0; d < rank; d++)
    q->starts[d] = tl_val(f, o->opnd[1 + d])->type.kind == TL_KIND_TILE ? NULL : i64_of(g, cg_get(g, o->opnd[1 + d])->r[0]);
}

/* Thread i prefetches gathered row i of CTA u: E[id, starts.., c0 : min(c0 + BD, size)). */
static void gather_end(cg *g, gather_pf *q) {
  tl_op *o = tl_op_at(g->f, q->op);
  LLVMValueRef starts[TL_MAX_RANK];
  bool spans[TL_MAX_RANK];
  int rank = tl_val(g->f, o->opnd[0])->type.rank;
  for (int d = 0; d < rank; d++) {
    starts[d] = q->starts[d] ? q->starts[d] : i64_of(g, q->id); /* (-1: past every size, unsigned) */
    spans[d] = q->starts[d] && o->dims[d] > 1;
  }
  view_range v;
  range_of(g, o, starts, spans, &v);
  LLVMValueRef fa = v.first, ea = v.end, ok = v.ok;
  int64_t view_bytes = v.bytes;
  LLVMValueRef a0 = LLVMBuildAnd(g->B, LLVMBuildAdd(g->B, fa, cg_i64(g, 15), ""), cg_i64(g, ~15LL), "");
  LLVMValueRef e0 = LLVMBuildAnd(g->B, ea, cg_i64(g, ~15LL), "");
  ok = LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntUGT, e0, a0, ""), "");
  ok = LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntULE, LLVMBuildSub(g->B, ea, fa, ""), cg_i64(g, 2 * view_bytes), ""), "");
  LLVMValueRef args[3] = {a0, LLVMBuildTrunc(g->B, LLVMBuildSub(g->B, e0, a0, ""), g->i32, ""), LLVMBuildZExt(g->B, ok, g->i32, "")};
  cg_asm(g, g->vd, "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p cp.async.bulk.prefetch.L2.global [$0], $1; }",
         "l,r,r,~{memory}", args, 3, true);
}

/* The dense byte range of each tensor's loads among `loads` (their operands emitted for the tile
 * wanted), prefetched into L2 where `go`: chunks of at least 4 KB, at most 32, one a thread. */
void cg_prefetch_loads(cg *g, const int32_t *loads, int nl, LLVMValueRef go) {
  tl_func *f = g->f;
  view_range *R = tl_alloc(&g->ctx->arena, sizeof *R * (size_t)(nl + 1));
  for (int i = 0; i < nl; i++) view_range_of(g, tl_op_at(f, loads[i]), &R[i]);
  LLVMValueRef tid = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, g->warp, cg_i32(g, 32), ""), g->lane, "");
  LLVMValueRef tid64 = LLVMBuildZExt(g->B, tid, g->i64, "");
  for (int i = 0; i < nl; i++) {
    if (R[i].param < 0) continue;
    view_range m = R[i]; /* the union of the tensor's views */
    for (int j = i + 1; j < nl; j++) {
      if (R[j].param != m.param) continue;
      m.first = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, R[j].first, m.first, ""), R[j].first, m.first, "");
      m.end = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntUGT, R[j].end, m.end, ""), R[j].end, m.end, "");
      m.ok = LLVMBuildAnd(g->B, m.ok, R[j].ok, "");
      m.bytes += R[j].bytes;
      R[j].param = -1;
    }
    LLVMValueRef a0 = LLVMBuildAnd(g->B, LLVMBuildAdd(g->B, m.first, cg_i64(g, 15), ""), cg_i64(g, ~15LL), "");
    LLVMValueRef e0 = LLVMBuildAnd(g->B, m.end, cg_i64(g, ~15LL), "");
    LLVMValueRef span = LLVMBuildSub(g->B, m.end, m.first, "");
    LLVMValueRef ok = LLVMBuildAnd(g->B, go, m.ok, "");
    ok = LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntUGT, e0, a0, ""), "");
    ok = LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntULE, span, cg_i64(g, 2 * m.bytes), ""), "");
    /* chunks of at least 4 KB, at most 32 of them, one a thread */
    LLVMValueRef total = LLVMBuildSub(g->B, e0, a0, "");
    LLVMValueRef per = LLVMBuildUDiv(g->B, LLVMBuildAdd(g->B, total, cg_i64(g, CHUNKS_MAX * 16 - 1), ""), cg_i64(g, CHUNKS_MAX * 16), "");
    per = LLVMBuildMul(g->B, per, cg_i64(g, 16), "");
    LLVMValueRef chunk = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, per, cg_i64(g, CHUNK_MIN), ""),
                                         cg_i64(g, CHUNK_MIN), per, "pf.chunk");
    LLVMValueRef off = LLVMBuildMul(g->B, tid64, chunk, "");
    ok = LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntULT, off, total, ""), "");
    LLVMValueRef left = LLVMBuildSub(g->B, total, off, "");
    LLVMValueRef sz = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, left, chunk, ""), left, chunk, "");
    LLVMValueRef args[3] = {LLVMBuildAdd(g->B, a0, off, ""), LLVMBuildTrunc(g->B, sz, g->i32, ""),
                            LLVMBuildZExt(g->B, ok, g->i32, "")};
    cg_asm(g, g->vd, "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p cp.async.bulk.prefetch.L2.global [$0], $1; }",
           "l,r,r,~{memory}", args, 3, true);
  }
}

void cg_row_prefetch_end(cg *g) {
  cg_row_pf *s = g->row_pf;
  g->row_pf = NULL;
  for (int i = 0; s && i < s->n; i++) gather_end(g, &s->g[i]);
}

void cg_row_prefetch(cg *g) {
  tl_func *f = g->f;
  if (!f->access_split || f->persist || g->sm < 90 || cg_rows_active(g) || g->bar_threads) return;
  int cap_mb = prefetch_cap_mb();
  if (cap_mb <= 0) return;
  tl_row_plan p;
  const char *why;
  if (!tl_row_plan_make(f, &p, &why)) return;
  int nl = 0;
  int32_t *loads = tl_alloc(&g->ctx->arena, sizeof(int32_t) * (size_t)(f->body.ops.len + 1));
  int64_t tile_bytes = 0;
  uint8_t *mark = tl_alloc(&g->ctx->arena, (size_t)f->ops.len + 1);
  memset(mark, 0, (size_t)f->ops.len + 1);
  for (int i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    if (p.role[id] != TL_ROW_AHEAD || p.level[id] != 0) continue;
    const tl_type *t = &tl_val(f, tl_op_at(f, id)->res[0])->type;
    tile_bytes += tl_type_numel(t) * tl_dtype_bytes((tl_dtype)t->dtype);
    loads[nl++] = id;
    tl_row_slice(f, &p, id, mark);
  }
  /* gathers of rows by such a load's ids (their index loads' slices are marked already) */
  int32_t *gath = tl_alloc(&g->ctx->arena, sizeof(int32_t) * 2 * (size_t)(f->body.ops.len + 1));
  int ngath = 0;
  for (int i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    int32_t idl = row_gather_ids(f, &p, tl_op_at(f, id));
    if (idl < 0) continue;
    const tl_type *t = &tl_val(f, tl_op_at(f, id)->res[0])->type;
    tile_bytes += tl_type_numel(t) * tl_dtype_bytes((tl_dtype)t->dtype);
    gath[2 * ngath] = id;
    gath[2 * ngath + 1] = idl;
    ngath++;
    uint8_t *m2 = tl_alloc(&g->ctx->arena, (size_t)f->ops.len + 1);
    memset(m2, 0, (size_t)f->ops.len + 1);
    tl_row_slice(f, &p, id, m2);
    for (int k = 0; k < f->ops.len; k++) /* (its index chain's layout ops are not wanted: tile work) */
      if (m2[k] && tl_val(f, tl_op_at(f, k)->res[0])->type.kind != TL_KIND_TILE) mark[k] = 1;
  }
  if (!nl || tile_bytes <= 0) return;
  int64_t dcap = ((int64_t)cap_mb << 20) / tile_bytes;
  if (dcap < 1) return;
  int per_sm = 2048 / (g->threads > 0 ? g->threads : 128);
  if (per_sm > 32) per_sm = 32;
  if (per_sm < 1) per_sm = 1;
  /* D: the CTAs resident at most, within the cap */
  LLVMValueRef nsm = cg_asm(g, g->i32, "mov.u32 $0, %nsmid;", "=r", NULL, 0, false);
  LLVMValueRef D = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, nsm, g->i64, ""), cg_i64(g, per_sm), "");
  D = smin64(g, D, cg_i64(g, dcap));
  LLVMValueRef n[3], c[3];
  for (int d = 0; d < 3; d++) n[d] = cg_sreg(g, "nctaid", d), c[d] = cg_sreg(g, "ctaid", d);
  LLVMValueRef n64[3], c64[3];
  for (int d = 0; d < 3; d++) {
    n64[d] = LLVMBuildZExt(g->B, n[d], g->i64, "");
    c64[d] = LLVMBuildZExt(g->B, c[d], g->i64, "");
  }
  LLVMValueRef L = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, c64[2], n64[1], ""), c64[1], "");
  L = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, L, n64[0], ""), c64[0], "pf.cta");
  LLVMValueRef N = LLVMBuildMul(g->B, LLVMBuildMul(g->B, n64[0], n64[1], ""), n64[2], "");
  LLVMValueRef u = LLVMBuildAdd(g->B, L, D, "");
  LLVMValueRef go = LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntULT, u, N, ""),
                                 LLVMBuildICmp(g->B, LLVMIntULE, N, cg_i64(g, 0x7fffffffLL), ""), "pf.go");
  LLVMValueRef uc = LLVMBuildTrunc(g->B, LLVMBuildSelect(g->B, go, u, L, ""), g->i32, "");
  /* the index math of the loads for CTA uc's program ids (the body emits it again for its own) */
  LLVMValueRef save[3] = {g->pid[0], g->pid[1], g->pid[2]};
  pids_of_cta(g, uc, n, g->pid);
  for (int i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    if (mark[id] && !(tl_op_at(f, id)->flags & TL_OPF_DEAD)) cg_emit_op(g, id);
  }
  cg_prefetch_loads(g, loads, nl, go);
  LLVMValueRef tid = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, g->warp, cg_i32(g, 32), ""), g->lane, "");
  if (ngath) {
    cg_row_pf *st = tl_alloc(&g->ctx->arena, sizeof *st);
    st->n = ngath;
    st->g = tl_alloc(&g->ctx->arena, sizeof *st->g * (size_t)ngath);
    for (int i = 0; i < ngath; i++) gather_begin(g, tl_op_at(f, gath[2 * i]), tl_op_at(f, gath[2 * i + 1]), go, tid, &st->g[i]);
    g->row_pf = st;
  }
  for (int d = 0; d < 3; d++) g->pid[d] = save[d];
}

