/* gather_runs: requires verified IR; keeps semantics (each element still reads the tensor element its
 * gather index names: the index is one value over each run, by axisinfo's constancy, and the rewrite
 * reads it at each run's first element); unless TILEC_GATHER_RUNS=0 (on by default since the
 * twenty-third session: the H200 measured the wide block-scaled GEMM 1.12-1.19x the 128x128 one,
 * 0.915 / 0.955 of the per-tensor kernel at 4096^3 / 8192^3, every check passing) a rank-1 load
 * whose one gather entry's index is constant over aligned runs of c elements (at most GATHER_RUNS_MAX runs) becomes one scalar load a run, at the index's value at the
 * run's first element, and a select chain on iota that gives each element its run's value.
 * docs/pipelines.md "Block-scaled fp8 at 128x256: a weight scale a column block".
 *
 * Why: a block-scaled GEMM whose tile is wider than a weight-scale block (DeepSeek-V3's 128x128
 * weight blocks on gemm_fp8's sm_90a tile, 128x256) spells a column's weight scale as a gather,
 * `SW[(n0 + iota<i32>[BN]) / 128, kb]`, valid at any BN.  As a gather it is one load an element a
 * thread (64 a k-step in the wgmma accumulator's column slice; ptxas spills 4.7 KB); as two scalar
 * loads and a select on iota < 128, LLVM folds the select per accumulator register (a register's
 * column is a constant plus at most 7 inside one 8-column block), the scale product is 4 FMUL a
 * thread, load_ahead carries the two scalars as it carries the 128x128 kernel's one, and each
 * 64x128 part's FFMAs follow that part's wgmma wait: 0 spills. */
#include <string.h>

#include "axisinfo.h"
#include "code_env.h"

enum { GATHER_RUNS_MAX = 4, VALUE_DEPTH = 8 };

static int32_t insert_op(tl_func *f, tl_region *r, int *pos, int32_t id) {
  tl_region_insert(f, r, (*pos)++, id);
  return tl_op_result(f, id, 0);
}

static int32_t insert_const(tl_func *f, tl_region *r, int *pos, tl_type t, int64_t v, tl_loc loc) {
  int32_t id = tl_op_new(f, NULL, TL_OP_const, NULL, 0, &t, 1, loc);
  tl_op_at(f, id)->ival = v;
  tl_op_at(f, id)->fval = (double)v;
  return insert_op(f, r, pos, id);
}

/* The scalar value at element e of rank-1 integer tile v, built in r before *pos from v's
 * expression (iota, splats, constants and elementwise integer arithmetic of those), or -1.  With r
 * NULL nothing is built: 0 where it could be, -1 where not. */
static int32_t value_at(tl_func *f, tl_region *r, int *pos, int32_t v, int64_t e, int depth) {
  const tl_type *t = &tl_val(f, v)->type;
  if (t->kind != TL_KIND_TILE) return v; /* a scalar operand */
  int32_t d = tl_val(f, v)->def;
  if (d < 0 || depth == 0 || t->rank != 1 || !tl_dtype_is_int((tl_dtype)t->dtype)) return -1;
  tl_op src = *tl_op_at(f, d); /* (a copy: new ops may move the table) */
  tl_type st = tl_scalar_type((tl_dtype)t->dtype);
  switch (src.opc) {
  case TL_OP_iota: return r ? insert_const(f, r, pos, st, e, src.loc) : 0;
  case TL_OP_splat: return src.opnd[0];
  case TL_OP_const: return r ? insert_const(f, r, pos, st, src.ival, src.loc) : 0;
  case TL_OP_add: case TL_OP_sub: case TL_OP_mul: case TL_OP_div: case TL_OP_rem: case TL_OP_shl:
  case TL_OP_shr: case TL_OP_and: case TL_OP_or: case TL_OP_xor: case TL_OP_min: case TL_OP_max: {
    int32_t x[2];
    for (int k = 0; k < 2; k++)
      if ((x[k] = value_at(f, r, pos, src.opnd[k], e, depth - 1)) < 0) return -1;
    return r ? insert_op(f, r, pos, tl_op_clone(f, &src, x, &st)) : 0;
  }
  default: return -1;
  }
}

/* Load ld at r->ops[*at]: rewritten when it qualifies (*at then points past the new ops); returns
 * the runs it was split into, 0 when left alone. */
static int rewrite_load(tl_func *f, const tl_axis_analysis *A, tl_region *r, int *at, int32_t ld) {
  tl_op src = *tl_op_at(f, ld);
  const tl_type rt = tl_val(f, src.res[0])->type;
  if (src.nres != 1 || rt.kind != TL_KIND_TILE || rt.rank != 1) return 0;
  int rank = tl_val(f, src.opnd[0])->type.rank, gat = -1;
  for (int k = 1; k <= rank; k++) {
    if (tl_val(f, src.opnd[k])->type.kind != TL_KIND_TILE) {
      if (src.dims[k - 1] != 0) return 0; /* a range beside the gather */
      continue;
    }
    if (gat >= 0) return 0; /* (rank 1: one gather at most anyway) */
    gat = k;
  }
  if (gat < 0 || value_at(f, NULL, NULL, src.opnd[gat], 0, VALUE_DEPTH) < 0) return 0; /* (readable, nothing built) */
  int64_t L = rt.shape[0], c = tl_axis_get(A, src.opnd[gat]).constancy[0];
  if (c < 2 || c > L || L % c || L / c > GATHER_RUNS_MAX) return 0;
  int runs = (int)(L / c), pos = *at;
  int32_t *opnd = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)src.nopnd);
  tl_type st = tl_scalar_type((tl_dtype)rt.dtype), ti = tl_tile_type(TL_I32, 1, rt.shape);
  tl_type tc = tl_tile_type(TL_I1, 1, rt.shape);
  int32_t out = -1, iota = -1;
  /* from the last run back: out = select(iota < (j + 1) c, splat(run j), out) */
  for (int j = runs - 1; j >= 0; j--) {
    memcpy(opnd, src.opnd, sizeof(int32_t) * (size_t)src.nopnd);
    opnd[gat] = value_at(f, r, &pos, src.opnd[gat], (int64_t)j * c, VALUE_DEPTH);
    if (opnd[gat] < 0) return 0; /* (the check above said it would not fail) */
    int32_t one = tl_op_clone(f, &src, opnd, &st);
    for (int d = 0; d < TL_MAX_RANK; d++) tl_op_at(f, one)->dims[d] = 0; /* every entry an index */
    int32_t s = insert_op(f, r, &pos, one);
    int32_t sp = insert_op(f, r, &pos, tl_op_new(f, NULL, TL_OP_splat, &s, 1, &rt, 1, src.loc));
    if (out < 0) {
      out = sp;
      continue;
    }
    if (iota < 0) iota = insert_op(f, r, &pos, tl_op_new(f, NULL, TL_OP_iota, NULL, 0, &ti, 1, src.loc));
    int32_t bound = insert_const(f, r, &pos, ti, (int64_t)(j + 1) * c, src.loc);
    int32_t cmpo[2] = {iota, bound};
    int32_t cmp = tl_op_new(f, NULL, TL_OP_cmp, cmpo, 2, &tc, 1, src.loc);
    tl_op_at(f, cmp)->kind = TL_CMP_LT;
    int32_t cv = insert_op(f, r, &pos, cmp);
    int32_t selo[3] = {cv, sp, out};
    out = insert_op(f, r, &pos, tl_op_new(f, NULL, TL_OP_select, selo, 3, &rt, 1, src.loc));
  }
  tl_replace_uses(f, src.res[0], out);
  tl_op_erase(f, r, pos); /* the gather, now after the new ops */
  *at = pos - 1;
  return runs;
}

static void walk(tl_func *f, const tl_axis_analysis *A, tl_region *r, tl_sbuf *ex) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(f, id);
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nregions; k++) walk(f, A, &tl_op_at(f, id)->regions[k], ex);
    if (tl_op_at(f, id)->opc != TL_OP_load) continue;
    tl_loc loc = tl_op_at(f, id)->loc;
    int n = rewrite_load(f, A, r, &i, id);
    if (n && ex)
      tl_sbuf_printf(ex, "gather_runs: kernel '%s': load at %d:%d: a gather constant over %d runs, %d scalar loads and a select on iota\n",
                     f->name, loc.line, loc.col, n, n);
  }
}

static bool run_gather_runs(tl_func *f, const tl_pass_opts *o) {
  if (tl_code_env_off("TILEC_GATHER_RUNS")) return true;
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  tl_axis_analysis *A = tl_axis_analyze(f, NULL);
  walk(f, A, &f->body, ex);
  return true;
}

const tl_pass tl_pass_gather_runs = {
    "gather_runs",
    "keeps semantics (each element reads what its gather index names); unless TILEC_GATHER_RUNS=0, a rank-1 gather whose index is constant over aligned runs (axisinfo) becomes one scalar load a run and a select on iota",
    run_gather_runs,
};
