/* schedule.c: the table of main-loop scheduling decisions (lib/schedule.h). */
#include "schedule.h"
#include "rope_producer.h"
#include "code_env.h"

#include <stdlib.h>
#include <string.h>

tl_dot_sched *tl_sched_dot(tl_func *f, int32_t op, bool create) {
  tl_sched *s = f->sched;
  if (s)
    for (int i = 0; i < s->dots.len; i++)
      if (s->dots.data[i].op == op) return &s->dots.data[i];
  if (!create) return NULL;
  if (!s) {
    s = tl_alloc(&f->ctx->arena, sizeof *s);
    f->sched = s;
  }
  tl_dot_sched d = {0};
  d.op = op;
  d.stages = 1;
  tl_vec_push(&f->ctx->arena, &s->dots, d);
  return &s->dots.data[s->dots.len - 1];
}

/* Does any store or atomic of f write tensor value t? */
static bool tensor_written(tl_func *f, int32_t t) {
  for (int i = 0; i < f->ops.len; i++) {
    const tl_op *o = &f->ops.data[i];
    if ((o->opc == TL_OP_store || o->opc == TL_OP_atomic) && !(o->flags & TL_OPF_DEAD) && o->opnd[0] == t) return true;
  }
  return false;
}

static bool from_iv(tl_func *f, int32_t v, int32_t L, int depth) {
  if (depth > 16) return false;
  if (v == tl_op_at(f, L)->regions[0].args.data[0] || tl_defined_outside(f, v, L)) return true;
  tl_value *x = tl_val(f, v);
  if (x->def < 0 || x->type.kind != TL_KIND_SCALAR) return false;
  tl_op *d = tl_op_at(f, x->def);
  if (d->opc == TL_OP_const) return !tl_dtype_is_float((tl_dtype)x->type.dtype);
  if (d->opc == TL_OP_load) {
    /* a scalar load (a page table, a block index) of a tensor the kernel never writes: it can be
     * read again for a later iteration ahead of time (codegen's remat reloads it) */
    if (tensor_written(f, d->opnd[0])) return false;
    for (int i = 1; i < d->nopnd; i++)
      if (!from_iv(f, d->opnd[i], L, depth + 1)) return false;
    return true;
  }
  if (!(tl_opinfo_table[d->opc].flags & TL_EW) || d->nres != 1) return false;
  for (int i = 0; i < d->nopnd; i++)
    if (!from_iv(f, d->opnd[i], L, depth + 1)) return false;
  return true;
}

bool tl_scalar_from_iv(tl_func *f, int32_t v, int32_t L) { return from_iv(f, v, L, 0); }

bool tl_dot_wgmma_kn8(tl_func *f, int32_t D) {
  tl_op *o = tl_op_at(f, D);
  tl_value *b = tl_val(f, o->opnd[1]);
  if (tl_dtype_bytes((tl_dtype)b->type.dtype) != 1 || tl_dtype_bytes((tl_dtype)tl_val(f, o->opnd[0])->type.dtype) != 1)
    return false;
  if (b->def >= 0 && tl_op_at(f, b->def)->opc == TL_OP_trans) return false;
  tl_dot_sched *d = f->sched ? tl_sched_dot(f, D, false) : NULL;
  return d && d->remapped && d->instr == TL_SCHED_MMA_WGMMA;
}

/* Is every use of value v (a 16-bit tile loaded in loop L) an operand of a
 * dot of L, directly (A, or a [K][N] B) or through a trans of L whose every
 * use is a dot's B (a K-major B)?  Then one ring slot serves all of them: a
 * slot holds the loaded tile row-major (swizzled), which every reader's
 * fragment loads take as it is (the attention backward's K, Q and dO). */
static bool only_dots_read(tl_func *f, int32_t v, int32_t L, int depth) {
  for (int32_t i = 0; i < f->ops.len; i++) {
    const tl_op *u = &f->ops.data[i];
    if (u->flags & TL_OPF_DEAD) continue;
    for (int j = 0; j < u->nopnd; j++) {
      if (u->opnd[j] != v) continue;
      if (u->parent != L) return false;
      if (u->opc == TL_OP_dot && j < 2) continue;
      if (u->opc == TL_OP_trans && depth == 0 && only_dots_read(f, u->res[0], L, 1)) {
        /* a trans feeds a B only (wgmma and ldmatrix take no transposed A) */
        for (int32_t k = 0; k < f->ops.len; k++) {
          const tl_op *w = &f->ops.data[k];
          if (!(w->flags & TL_OPF_DEAD) && w->opc == TL_OP_dot && w->opnd[0] == u->res[0]) return false;
        }
        continue;
      }
      return false;
    }
  }
  return true;
}

int32_t tl_stream_source(tl_func *f, int32_t D, int which, const int32_t *uses, bool allow_kn8,
                         bool *k_contiguous, const char **why) {
  int32_t L = tl_op_at(f, D)->parent;
  int32_t x = tl_op_at(f, D)->opnd[which], y = x;
  tl_value *xv = tl_val(f, x);
  bool transposed = false;
  /* a dot outside every loop (a second dot after a GEMM's main loop), or in an `if` (before, after or inside a
   * loop), has no ring to stream from: a ring is a loop body's */
  if (L < 0 || tl_op_at(f, L)->opc != TL_OP_for) return *why = "the dot is not directly in a loop's body", -1;
  /* TILEC_ROPE_PRODUCER=1: a score dot's B rotated by fa3's producer streams its key half (rope_producer.h) */
  int32_t rope = tl_rope_stream_load(f, D, which);
  if (rope >= 0) {
    *k_contiguous = true;
    *why = NULL;
    return rope;
  }
  *why = "not a load";
  if (xv->def < 0) return -1;
  tl_op *d = tl_op_at(f, xv->def);
  int32_t loaded = d->opc == TL_OP_trans ? d->opnd[0] : x;
  int eb0 = tl_dtype_bytes((tl_dtype)tl_val(f, loaded)->type.dtype);
  /* several readers share one slot only for 16-bit tiles (an 8-bit [K][N]
   * B has a slot layout of its own) */
  const char *env = tl_code_env("TILEC_SHARED_SLOTS"); /* measuring only: 0 = one reader per slot */
  bool shared = !(env && *env == '0') && eb0 == 2 && tl_val(f, loaded)->def >= 0 && tl_op_at(f, tl_val(f, loaded)->def)->opc == TL_OP_load &&
                only_dots_read(f, loaded, L, 0);
  if (uses[x] != 1 && !shared) return *why = "used by more than the dot", -1;
  if (d->opc == TL_OP_trans) {
    if (which == 0) return *why = "a transposed A", -1;
    y = d->opnd[0];
    if (tl_val(f, y)->def < 0) return -1;
    if (uses[y] != 1 && !shared) return *why = "used by more than the dot", -1;
    if (d->parent != L) return *why = "defined outside the dot's loop", -1;
    d = tl_op_at(f, tl_val(f, y)->def);
    transposed = true;
  }
  if (d->opc != TL_OP_load) return -1;
  if (d->parent != L) return *why = "loaded outside the dot's loop", -1;
  tl_value *t = tl_val(f, d->opnd[0]);
  if (t->def >= 0 || t->region_owner >= 0 || t->type.kind != TL_KIND_TENSOR) return *why = "not a parameter tensor", -1;
  int rank = t->type.rank;
  if (d->nopnd != 1 + rank) return *why = "a load with `other`", -1;
  int sliced[TL_MAX_RANK], ns = 0;
  for (int k = 0; k < rank; k++) {
    if (d->dims[k] != 0) sliced[ns++] = k;
    if (tl_val(f, d->opnd[1 + k])->type.kind != TL_KIND_SCALAR) return *why = "a gather (an index tile)", -1;
    if (!tl_scalar_from_iv(f, d->opnd[1 + k], L)) return *why = "indices not computable from the induction variable", -1;
  }
  if (ns != 2 || sliced[1] != rank - 1) return *why = "not a 2-D view along the last dimension", -1;
  const tl_type *lt = &tl_val(f, y)->type;
  int eb = tl_dtype_bytes((tl_dtype)lt->dtype);
  /* A: [M][K], K contiguous.  B: trans of [N][K] (K contiguous), or kept
   * [K][N], read with ldmatrix .trans: 16-bit, or 8-bit byte pairs + prmt */
  *k_contiguous = which == 0 || transposed;
  if (!*k_contiguous && eb == 4) return *why = "an f32 [K][N] B (no ldmatrix .trans of 32-bit elements)", -1;
  if (!*k_contiguous && eb != 2 && !(eb == 1 && allow_kn8)) return *why = "an 8-bit [K][N] B (no ldmatrix .trans)", -1;
  int threads = (f->warps > 0 ? f->warps : 4) * 32;
  if ((lt->shape[1] * eb) % 16) return *why = "rows not whole 16-byte chunks", -1;
  if (((int64_t)lt->shape[0] * lt->shape[1] * eb / 16) % threads) return *why = "chunks not a multiple of the threads", -1;
  return (int32_t)(d - f->ops.data);
}

int64_t tl_arch_smem_budget(const char *arch) {
  if (!arch || strncmp(arch, "sm_90", 5) == 0 || strncmp(arch, "sm_10", 5) == 0) return 227 * 1024;
  if (strcmp(arch, "sm_80") == 0 || strcmp(arch, "sm_87") == 0) return 163 * 1024;
  return 99 * 1024;
}

/* ---- operand prologues ------------------------------------------------------------ */

/* Range [*lo, *hi] of every element of integer tile (or scalar) v when it is
 * computed from iota and integer constants alone (no iteration dependence),
 * through add, mul, div, rem, shr, and by non-negative constants and shape
 * ops; false otherwise. */
static bool const_range(tl_func *f, int32_t v, int64_t *lo, int64_t *hi, int depth) {
  tl_value *x = tl_val(f, v);
  if (depth > 16 || x->def < 0 || tl_dtype_is_float((tl_dtype)x->type.dtype)) return false;
  tl_op *d = tl_op_at(f, x->def);
  int64_t a0, a1, b0, b1;
  switch (d->opc) {
  case TL_OP_const: *lo = *hi = d->ival; return true;
  case TL_OP_iota: *lo = 0, *hi = x->type.shape[0] - 1; return true;
  case TL_OP_splat:
  case TL_OP_broadcast:
  case TL_OP_expand_dims: return const_range(f, d->opnd[0], lo, hi, depth + 1);
  default: break;
  }
  if (d->nopnd != 2 || !const_range(f, d->opnd[0], &a0, &a1, depth + 1) || !const_range(f, d->opnd[1], &b0, &b1, depth + 1))
    return false;
  if (a0 < 0 || b0 < 0 || a1 > (1 << 20) || b1 > (1 << 20)) return false; /* non-negative, no overflow */
  switch (d->opc) {
  case TL_OP_add: *lo = a0 + b0, *hi = a1 + b1; return true;
  case TL_OP_mul: *lo = a0 * b0, *hi = a1 * b1; return true;
  case TL_OP_div: if (b0 < 1) return false; *lo = a0 / b1, *hi = a1 / b0; return true;
  case TL_OP_rem: if (b0 < 1) return false; *lo = 0, *hi = a1 < b1 - 1 ? a1 : b1 - 1; return true;
  case TL_OP_shr: if (b1 > 30) return false; *lo = a0 >> b1, *hi = a1 >> b0; return true;
  case TL_OP_and: *lo = 0, *hi = a1 < b1 ? a1 : b1; return true;
  default: return false;
  }
}

bool tl_gather_box(tl_func *f, int32_t v, int32_t L, int32_t *base, int32_t *rows) {
  /* through the front-end's broadcast of a rank-1 index to the view's shape */
  for (;;) {
    tl_value *x = tl_val(f, v);
    if (x->def < 0) return false;
    tl_op *d = tl_op_at(f, x->def);
    if (d->opc != TL_OP_broadcast && d->opc != TL_OP_expand_dims) break;
    v = d->opnd[0];
  }
  tl_value *x = tl_val(f, v);
  tl_op *d = tl_op_at(f, x->def);
  if (d->opc != TL_OP_add || tl_dtype_is_float((tl_dtype)x->type.dtype)) return false;
  for (int s = 0; s < 2; s++) {
    int32_t sp = d->opnd[s], off = d->opnd[1 - s];
    tl_value *sv = tl_val(f, sp);
    if (sv->def < 0 || tl_op_at(f, sv->def)->opc != TL_OP_splat) continue;
    int32_t sc = tl_op_at(f, sv->def)->opnd[0];
    int64_t lo, hi;
    if (!tl_scalar_from_iv(f, sc, L) || !const_range(f, off, &lo, &hi, 0) || lo < 0 || hi >= 256) continue;
    *base = sc;
    *rows = (int32_t)hi + 1;
    return true;
  }
  return false;
}

bool tl_prologue_view(tl_func *f, int32_t ld, int32_t L, int threads, int32_t *box_rows, int32_t *row_base,
                      const char **why) {
  tl_op *d = tl_op_at(f, ld);
  *why = "not a load";
  if (d->opc != TL_OP_load) return false;
  if (d->parent != L) return *why = "loaded outside the dot's loop", false;
  tl_value *t = tl_val(f, d->opnd[0]);
  if (t->def >= 0 || t->region_owner >= 0 || t->type.kind != TL_KIND_TENSOR) return *why = "not a parameter tensor", false;
  if (tensor_written(f, d->opnd[0])) return *why = "a tensor the kernel writes", false;
  int rank = t->type.rank;
  if (d->nopnd != 1 + rank) return *why = "a load with `other`", false;
  const tl_type *lt = &tl_val(f, d->res[0])->type;
  if (lt->kind != TL_KIND_TILE || lt->rank != 2) return *why = "not a 2-D tile", false;
  int sliced[TL_MAX_RANK], ns = 0;
  *row_base = -1;
  *box_rows = lt->shape[0];
  for (int k = 0; k < rank; k++) {
    if (d->dims[k] != 0) sliced[ns++] = k;
    int32_t ix = d->opnd[1 + k];
    if (tl_val(f, ix)->type.kind != TL_KIND_SCALAR) {
      /* a gather along the row dim whose rows lie in a box [x, x + R) with
       * x from the iv: the box streams, the rows are picked in shared memory */
      if (k == rank - 1 || !tl_gather_box(f, ix, L, row_base, box_rows))
        return *why = "a gather (an index tile) outside a box computable from the induction variable", false;
      continue;
    }
    if (!tl_scalar_from_iv(f, ix, L)) return *why = "indices not computable from the induction variable", false;
  }
  if (ns != 2 || sliced[1] != rank - 1) return *why = "not a 2-D view along the last dimension", false;
  int eb = tl_dtype_bytes((tl_dtype)lt->dtype);
  if (eb > 8 || (lt->shape[1] * eb) % 16) return *why = "rows not whole 16-byte chunks", false;
  int64_t chunks = (int64_t)*box_rows * lt->shape[1] * eb / 16;
  if (chunks > threads ? chunks % threads : threads % chunks) return *why = "chunks neither a multiple nor a divisor of the threads", false;
  return true;
}

bool tl_row_stream_view(tl_func *f, int32_t ld, int32_t L, const char **why) {
  tl_op *d = tl_op_at(f, ld);
  *why = "not a load";
  if (d->opc != TL_OP_load || (d->flags & TL_OPF_DEAD)) return false;
  if (d->parent != L) return *why = "not a top-level op of the loop's body", false;
  tl_value *t = tl_val(f, d->opnd[0]);
  if (t->def >= 0 || t->region_owner >= 0 || t->type.kind != TL_KIND_TENSOR) return *why = "not a parameter tensor", false;
  if (tensor_written(f, d->opnd[0])) return *why = "a tensor the kernel writes", false;
  int rank = t->type.rank;
  if (d->nopnd != 1 + rank && d->nopnd != 2 + rank) return *why = "not a plain view", false;
  /* (a tile `other` is in the load's layout, not in a convert's that reads the slot again) */
  if (d->nopnd == 2 + rank && tl_val(f, d->opnd[1 + rank])->type.kind != TL_KIND_SCALAR)
    return *why = "an `other` that is a tile, not a scalar", false;
  const tl_type *lt = &tl_val(f, d->res[0])->type;
  if (lt->kind != TL_KIND_TILE || lt->rank != 1) return *why = "not a 1-D tile", false;
  for (int k = 0; k < rank; k++) {
    if ((d->dims[k] != 0) != (k == rank - 1)) return *why = "not a view along the last dimension alone", false;
    int32_t ix = d->opnd[1 + k];
    if (tl_val(f, ix)->type.kind != TL_KIND_SCALAR) return *why = "a gather (an index tile)", false;
    if (!tl_scalar_from_iv(f, ix, L)) return *why = "indices not computable from the induction variable", false;
  }
  int eb = tl_dtype_bytes((tl_dtype)t->type.dtype);
  if ((eb != 2 && eb != 4) || (lt->shape[0] * eb) % 16) return *why = "not whole 16-byte units of 2- or 4-byte elements", false;
  if (lt->shape[0] > 256) return *why = "more than 256 elements (the TMA box limit)", false;
  return true;
}

/* Is op d one the prologue's elementwise code may contain?  (convert_layout:
 * layout_assign's, after swpipe; codegen reads a prologue load's slot again
 * in the converted layout, emit_prologue.c) */
static bool prologue_op(const tl_op *d) {
  return (tl_opinfo_table[d->opc].flags & TL_EW) || d->opc == TL_OP_splat || d->opc == TL_OP_broadcast ||
         d->opc == TL_OP_expand_dims || d->opc == TL_OP_iota || d->opc == TL_OP_const ||
         d->opc == TL_OP_convert_layout;
}

static int prologue_walk(tl_func *f, int32_t v, int32_t L, int threads, uint8_t *seen, int32_t *loads, int n, int max,
                         const char **why, int32_t *stop, bool a_rows, int depth) {
  if (n < 0) return n;
  *stop = tl_val(f, v)->def; /* (where a refusal below stops: the op that defines v) */
  if (depth > 64) return *why = "elementwise code too deep", -1;
  if (v == tl_op_at(f, L)->regions[0].args.data[0] || tl_defined_outside(f, v, L)) return n;
  tl_value *x = tl_val(f, v);
  if (x->def < 0) return *why = "computed from a loop-carried value", -1;
  if (seen[x->def]) return n;
  seen[x->def] = 1;
  tl_op *d = tl_op_at(f, x->def);
  if (d->parent != L) return *why = "computed in a nested region", -1;
  if (d->opc == TL_OP_load && x->type.kind == TL_KIND_SCALAR) {
    if (!tl_scalar_from_iv(f, v, L)) return *why = "a scalar load not computable from the induction variable", -1;
    return n;
  }
  /* an A's 1-D row along the tensor's last dim advancing with the loop (a per-column scale `load(S[k0 : k0 + BK])`,
   * LayerNorm's weight): not a box of the prologue; loaded in the loop as it is, or a row of the loop's TMA ring
   * (emit_ring_rows.c).  (a_rows: A's prologue only, the form checked on a GPU: a B's is refused as before) */
  const char *row_why;
  if (a_rows && d->opc == TL_OP_load && x->type.kind == TL_KIND_TILE && x->type.rank == 1 &&
      tl_row_stream_view(f, x->def, L, &row_why))
    return n;
  if (d->opc == TL_OP_load) {
    int32_t rows, base;
    if (!tl_prologue_view(f, x->def, L, threads, &rows, &base, why)) return -1;
    if (n == max) return *why = "too many loads", -1;
    loads[n++] = x->def;
    /* (a gather's index tile is computed in registers as before) */
    for (int i = 1; i < d->nopnd; i++)
      if (tl_val(f, d->opnd[i])->type.kind == TL_KIND_TILE)
        n = prologue_walk(f, d->opnd[i], L, threads, seen, loads, n, max, why, stop, a_rows, depth + 1);
    return n;
  }
  if (!prologue_op(d)) return *why = "computed by an op that is not elementwise", -1;
  for (int i = 0; i < d->nopnd && n >= 0; i++)
    n = prologue_walk(f, d->opnd[i], L, threads, seen, loads, n, max, why, stop, a_rows, depth + 1);
  if (n >= 0) *stop = -1;
  return n;
}

bool tl_ws_transposes_b(const tl_func *f) {
  return f->ws == TL_WS_COOP && f->cluster == TL_CLUSTER_1X1 && !tl_code_env_off("TILEC_WS_TRANSPOSE");
}

bool tl_prologue_a_frag_on(void) {
  return tl_code_env_on("TILEC_PROLOGUE_A_FRAG");
}

int tl_prologue_loads(tl_func *f, int32_t D, int which, int32_t *loads, int max, const char **why) {
  int32_t stop;
  return tl_prologue_refusal(f, D, which, loads, max, why, &stop);
}

int tl_prologue_refusal(tl_func *f, int32_t D, int which, int32_t *loads, int max, const char **why, int32_t *stop) {
  *stop = -1;
  int32_t L = tl_op_at(f, D)->parent;
  int32_t x = tl_op_at(f, D)->opnd[which];
  *why = "not in a loop";
  if (L < 0 || tl_op_at(f, L)->opc != TL_OP_for) return -1;
  tl_value *xv = tl_val(f, x);
  *why = "not computed in the loop";
  if (xv->def < 0 || tl_defined_outside(f, x, L)) return -1;
  tl_op *d = tl_op_at(f, xv->def);
  /* a K-major B computed in registers (attention's rotated k: trans(rope(k))) */
  if (d->opc == TL_OP_trans && which == 1 && tl_val(f, d->opnd[0])->def >= 0 &&
      tl_op_at(f, tl_val(f, d->opnd[0])->def)->opc != TL_OP_load && !tl_defined_outside(f, d->opnd[0], L)) {
    x = d->opnd[0];
    d = tl_op_at(f, tl_val(f, x)->def);
  }
  *why = d->opc == TL_OP_trans ? "a transposed tile (a K-major operand computed in registers is a prologue only as a B)"
                                : "a load (the stream rule's)";
  if (d->opc == TL_OP_load || d->opc == TL_OP_trans) return *stop = xv->def, -1;
  /* the default since the H200 run of the seventh session (W4A16 2.5x, attn_rope 1.8x faster,
   * every example matching the interpreter); TILEC_PROLOGUE=0 turns them off (measuring) */
  const char *env = tl_code_env("TILEC_PROLOGUE");
  *why = "operand prologues are off (TILEC_PROLOGUE=0)";
  if (env && *env == '0') return -1;
  uint8_t *seen = tl_alloc(&f->ctx->arena, (size_t)f->ops.len + 1);
  memset(seen, 0, (size_t)f->ops.len + 1);
  int threads = (f->warps > 0 ? f->warps : 4) * 32;
  int n = prologue_walk(f, x, L, threads, seen, loads, 0, max, why, stop, which == 0, 0);
  if (n == 0) return *why = "computed from no load of the loop", -1;
  if (n > 0) *stop = -1;
  return n;
}
