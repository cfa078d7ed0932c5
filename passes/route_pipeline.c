/* route_pipeline: requires verified tile IR; keeps every op and value (it only
 * sets kernel attributes); sets f->pipeline (option > attribute > the
 * "cutlass" name rule > default), f->stages when unset, and f->warps when
 * unset in a kernel with a dot main loop; warns when a kernel routed to
 * 'cutlass' cannot use it.  See docs/routing.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "code_env.h"

typedef enum { LOOP_NONE, LOOP_GEMM, LOOP_MULTI, LOOP_ATTENTION } loop_kind;

typedef struct main_loop {
  loop_kind kind;
  int32_t for_op;
  int32_t dots[8]; /* GEMM: dots[0]; attention: the score dot, then the value dot; multi-dot: all, in order */
  int ndots;
  int prologue[2]; /* GEMM: loads operand a / b is computed from (an operand prologue), else 0 */
} main_loop;

typedef struct router {
  tl_func *f;
  uint8_t *seen; /* per op, for the backward searches */
} router;

/* The most accumulator registers a thread of two attention programs an SM may hold (of its 128): D128 BN64's 96
 * compile without spills (ptxas 13.0) and were measured (docs/pipelines.md "Two attention programs an SM"). */
#define TWO_PROGRAMS_ACC_REGS 96

/* The cluster asked for: the option "cluster", else TILEC_CLUSTER=1x1|2x1|1x2
 * (measuring), else TL_CLUSTER_UNSET (the default, 1x1). */
static int cluster_wanted(const tl_func *f) {
  if (f->cluster_opt) return f->cluster_opt;
  const char *e = tl_code_env("TILEC_CLUSTER");
  if (!e) return TL_CLUSTER_UNSET;
  if (!strcmp(e, "2x1")) return TL_CLUSTER_2X1;
  if (!strcmp(e, "1x2")) return TL_CLUSTER_1X2;
  if (!strcmp(e, "1x1")) return TL_CLUSTER_1X1;
  return TL_CLUSTER_UNSET;
}

/* ---- shapes of the IR ------------------------------------------------------------ */

static int32_t def_op(tl_func *f, int32_t v) { return tl_val(f, v)->def; }

/* Follow v up through ops that do not change what a dot operand is. */
static int32_t strip(tl_func *f, int32_t v, bool through_trans_cast) {
  for (;;) {
    int32_t d = def_op(f, v);
    if (d < 0) return v;
    tl_op *o = tl_op_at(f, d);
    if (o->opc == TL_OP_convert_layout || (through_trans_cast && (o->opc == TL_OP_trans || o->opc == TL_OP_cast)))
      v = o->opnd[0];
    else
      return v;
  }
}

static bool is_load(tl_func *f, int32_t v) {
  int32_t d = def_op(f, v);
  return d >= 0 && tl_op_at(f, d)->opc == TL_OP_load;
}

/* Carried slot of v in `for` op F (-1 when v is not one of its carried args). */
static int carried_slot(tl_func *f, int32_t v, int32_t F) {
  tl_value *tv = tl_val(f, v);
  if (tv->def != -1 || tv->region_owner != F || tv->index < 1) return -1;
  return tv->index - 1;
}

static int32_t yielded(tl_func *f, int32_t F, int k) {
  tl_region *r = &tl_op_at(f, F)->regions[0];
  if (r->ops.len == 0) return -1;
  tl_op *y = tl_op_at(f, r->ops.data[r->ops.len - 1]);
  if (y->opc != TL_OP_yield || k < 0 || k >= y->nopnd) return -1;
  return strip(f, y->opnd[k], false);
}

typedef bool (*op_pred)(const tl_op *o);
static bool is_exp(const tl_op *o) { return o->opc == TL_OP_exp || o->opc == TL_OP_exp2; }
static bool is_reduce_max(const tl_op *o) { return o->opc == TL_OP_reduce && o->kind == TL_RED_MAX; }
static bool is_reduce_sum(const tl_op *o) { return o->opc == TL_OP_reduce && o->kind == TL_RED_SUM; }
static bool is_dot(const tl_op *o) { return o->opc == TL_OP_dot; }

/* Is an op satisfying pred (other than `except`) among the ops inside loop F
 * that v is computed from?  Returns its id or -1. */
static int32_t find_upstream(router *R, int32_t v, int32_t F, op_pred pred, int32_t except) {
  tl_func *f = R->f;
  memset(R->seen, 0, (size_t)f->ops.len);
  TL_VEC(int32_t) stack = {0};
  tl_vec_push(&f->ctx->arena, &stack, v);
  while (stack.len) {
    int32_t d = def_op(f, stack.data[--stack.len]);
    if (d < 0 || R->seen[d] || !tl_op_inside(f, d, F)) continue;
    R->seen[d] = 1;
    tl_op *o = tl_op_at(f, d);
    if (d != except && pred(o)) return d;
    for (int i = 0; i < o->nopnd; i++) tl_vec_push(&f->ctx->arena, &stack, o->opnd[i]);
  }
  return -1;
}

/* ---- recognizing the main loops ----------------------------------------------------- */

/* dot(load, load, carried) yielded back into its slot; operands possibly
 * through trans / cast; at least one load streams inside the loop. */
static bool gemm_like_dot(tl_func *f, int32_t F, int32_t dot, int *prologue) {
  tl_op *o = tl_op_at(f, dot);
  int k = carried_slot(f, strip(f, o->opnd[2], false), F);
  if (k < 0 || yielded(f, F, k) != o->res[0]) return false;
  bool inside = false;
  for (int w = 0; w < 2; w++) {
    int32_t x = strip(f, o->opnd[w], true);
    prologue[w] = 0;
    int32_t loads[16];
    const char *why;
    /* a cast of a load (an f32 A cast to bf16): a prologue too when its load qualifies */
    if (is_load(f, x) && x != strip(f, o->opnd[w], false) && o->parent == F &&
        (prologue[w] = tl_prologue_loads(f, dot, w, loads, 16, &why)) > 0) {
      inside = true;
      continue;
    }
    prologue[w] = 0;
    if (is_load(f, x)) {
      inside = inside || tl_op_inside(f, def_op(f, x), F);
      continue;
    }
    /* an operand prologue: computed by elementwise code from loads of the
     * loop that stream through the ring (docs/routing.md) */
    int n = o->parent == F ? tl_prologue_loads(f, dot, w, loads, 16, &why) : -1;
    if (n <= 0) return prologue[0] = prologue[1] = 0, false;
    prologue[w] = n;
    inside = true;
  }
  return inside;
}

/* v (through trans / cast) is operand 0 or 1 of op (a mul, an fma's product). */
static bool multiplies(tl_func *f, const tl_op *op, int32_t v) {
  return strip(f, op->opnd[0], false) == v || strip(f, op->opnd[1], false) == v;
}

/* A per-k-block scaled GEMM (block-scaled fp8, examples/gemm_fp8_blockscale.tile):
 * p = dot(load, load, constant) inside loop F, and a carried slot of p's type
 * yields `carried + p * scale` (either order of each operation) or
 * `fma(p, scale, carried)` (either order of p and scale). */
static bool scaled_gemm_dot(router *R, int32_t F, int32_t dot) {
  tl_func *f = R->f;
  tl_op *o = tl_op_at(f, dot);
  int32_t c = def_op(f, o->opnd[2]);
  if (c < 0 || tl_op_at(f, c)->opc != TL_OP_const) return false;
  int32_t a = strip(f, o->opnd[0], true), b = strip(f, o->opnd[1], true);
  if (!is_load(f, a) || !is_load(f, b) || !(tl_op_inside(f, def_op(f, a), F) || tl_op_inside(f, def_op(f, b), F)))
    return false;
  tl_region *body = &tl_op_at(f, F)->regions[0];
  for (int k = 0; k + 1 < body->args.len; k++) {
    int32_t y = yielded(f, F, k), d = y >= 0 ? def_op(f, y) : -1;
    if (d < 0 || !tl_type_eq(&tl_val(f, y)->type, &tl_val(f, o->res[0])->type)) continue;
    tl_op *upd = tl_op_at(f, d);
    if (upd->opc == TL_OP_fma && carried_slot(f, strip(f, upd->opnd[2], false), F) == k && multiplies(f, upd, o->res[0]))
      return true; /* fma(p, scale, carried), either order of p and scale */
    if (upd->opc != TL_OP_add) continue;
    for (int i = 0; i < 2; i++) {
      int32_t m = def_op(f, strip(f, upd->opnd[1 - i], false));
      if (carried_slot(f, strip(f, upd->opnd[i], false), F) != k || m < 0 || tl_op_at(f, m)->opc != TL_OP_mul) continue;
      if (multiplies(f, tl_op_at(f, m), o->res[0])) return true;
    }
  }
  (void)R;
  return false;
}

/* acc = dot(cast(exp(s - max)), V, carried * rescale) where s comes from
 * another dot of the loop, with a reduce-max before the exp and a reduce-sum
 * of the exp in the loop (the online softmax of flash attention). */
static int32_t attention_score_dot(router *R, int32_t F, int32_t dot) {
  tl_func *f = R->f;
  tl_op *o = tl_op_at(f, dot);
  int32_t acc = strip(f, o->opnd[2], false);
  int32_t m = def_op(f, acc);
  if (m < 0 || tl_op_at(f, m)->opc != TL_OP_mul) return -1;
  tl_op *mul = tl_op_at(f, m);
  int32_t x = strip(f, mul->opnd[0], false), y = strip(f, mul->opnd[1], false);
  int k = carried_slot(f, x, F);
  int32_t rescale = y;
  if (k < 0) k = carried_slot(f, y, F), rescale = x;
  if (k < 0 || yielded(f, F, k) != o->res[0]) return -1;
  if (find_upstream(R, rescale, F, is_exp, -1) < 0) return -1;
  int32_t p = find_upstream(R, o->opnd[0], F, is_exp, -1);
  if (p < 0) return -1;
  int32_t s_in = tl_op_at(f, p)->opnd[0];
  if (find_upstream(R, s_in, F, is_reduce_max, -1) < 0) return -1;
  int32_t score = find_upstream(R, s_in, F, is_dot, dot);
  if (score < 0) return -1;
  /* the running sum: a reduce-sum of an exp inside the loop */
  tl_region *body = &tl_op_at(f, F)->regions[0];
  for (int i = 0; i < body->ops.len; i++) {
    tl_op *r = tl_op_at(f, body->ops.data[i]);
    if (is_reduce_sum(r) && !(r->flags & TL_OPF_DEAD) && find_upstream(R, r->opnd[0], F, is_exp, -1) >= 0)
      return score;
  }
  return -1;
}

/* A dot accumulating into a carried value of F yielded back into its slot
 * (the operands may be computed: attention backward's dV += P^T dO). */
static bool accumulates(tl_func *f, int32_t F, int32_t dot) {
  tl_op *o = tl_op_at(f, dot);
  int k = carried_slot(f, strip(f, o->opnd[2], false), F);
  return k >= 0 && yielded(f, F, k) == o->res[0];
}

/* A multi-dot loop (attention's backward): two to eight dots in the body,
 * one accumulating into a carried value, and a dot operand loaded inside
 * the loop (through trans / cast), so something streams. */
static bool multi_dot_loop(tl_func *f, int32_t F, main_loop *ml) {
  tl_region *body = &tl_op_at(f, F)->regions[0];
  int n = 0;
  bool acc = false, streams = false;
  for (int i = 0; i < body->ops.len; i++) {
    int32_t op = body->ops.data[i];
    tl_op *o = tl_op_at(f, op);
    if (o->opc != TL_OP_dot || (o->flags & TL_OPF_DEAD)) continue;
    if (n == 8) return false;
    ml->dots[n++] = op;
    acc = acc || accumulates(f, F, op);
    for (int j = 0; j < 2; j++) {
      int32_t v = strip(f, o->opnd[j], true);
      streams = streams || (is_load(f, v) && tl_op_inside(f, def_op(f, v), F));
    }
  }
  ml->ndots = n;
  return n >= 2 && acc && streams;
}

static main_loop classify_for(router *R, int32_t F) {
  tl_func *f = R->f;
  main_loop ml = {LOOP_NONE, F, {-1, -1, -1, -1, -1, -1, -1, -1}, 0, {0, 0}};
  tl_region *body = &tl_op_at(f, F)->regions[0];
  for (int i = 0; i < body->ops.len; i++) {
    int32_t op = body->ops.data[i];
    tl_op *o = tl_op_at(f, op);
    if (o->opc != TL_OP_dot || (o->flags & TL_OPF_DEAD)) continue;
    int32_t score = attention_score_dot(R, F, op);
    if (score >= 0) {
      ml.kind = LOOP_ATTENTION;
      ml.dots[0] = score, ml.dots[1] = op, ml.ndots = 2;
      return ml;
    }
    if (ml.kind == LOOP_NONE && (gemm_like_dot(f, F, op, ml.prologue) || scaled_gemm_dot(R, F, op))) {
      ml.kind = LOOP_GEMM;
      ml.dots[0] = op, ml.ndots = 1;
    }
  }
  main_loop multi = ml;
  if (ml.kind == LOOP_NONE && multi_dot_loop(f, F, &multi)) {
    multi.kind = LOOP_MULTI;
    return multi;
  }
  return ml;
}

/* The first attention-like loop, else the first GEMM-like one. */
static void find_main_loop(router *R, tl_region *r, main_loop *best) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t op = r->ops.data[i];
    tl_op *o = tl_op_at(R->f, op);
    if (o->flags & TL_OPF_DEAD) continue;
    if (o->opc == TL_OP_for) {
      main_loop ml = classify_for(R, op);
      if (ml.kind > best->kind) *best = ml;
    }
    for (int k = 0; k < tl_op_at(R->f, op)->nregions; k++) find_main_loop(R, &tl_op_at(R->f, op)->regions[k], best);
  }
}

/* ---- fitting and choosing ---------------------------------------------------------- */

typedef struct dot_shape {
  int32_t m, n, k;
  tl_dtype dtype;
} dot_shape;

static dot_shape shape_of(tl_func *f, int32_t dot) {
  tl_op *o = tl_op_at(f, dot);
  tl_type *a = &tl_val(f, o->opnd[0])->type, *b = &tl_val(f, o->opnd[1])->type;
  dot_shape s = {a->shape[0], b->shape[1], a->shape[1], (tl_dtype)a->dtype};
  return s;
}

/* Where the cutlass pipeline can take the loop (wgmma: M in warpgroup tiles
 * of 64 rows, N a multiple of 16 up to 256, K in steps of 16 for 16-bit and
 * 32 for 8-bit operands).  Otherwise says why in `why`. */
/* Whether a live op of f takes a ticket (atomic_fetch_add). */
static bool has_fetch_add(const tl_func *f) {
  for (int32_t i = 0; i < f->ops.len; i++) {
    const tl_op *o = &f->ops.data[i];
    if (!(o->flags & TL_OPF_DEAD) && o->opc == TL_OP_atomic && o->kind == TL_ATOMIC_FETCH_ADD) return true;
  }
  return false;
}

/* The first live dot inside a for loop (*loop that loop) that accumulates there (acc: only such), or -1: what a
 * kernel without a main loop still has. */
static int32_t first_dot_in_loop(tl_func *f, tl_region *r, int32_t in_loop, bool acc, int32_t *loop) {
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if (o->flags & TL_OPF_DEAD) continue;
    if (o->opc == TL_OP_dot && in_loop >= 0 && (!acc || accumulates(f, in_loop, r->ops.data[i])))
      return *loop = in_loop, r->ops.data[i];
    for (int k = 0; k < o->nregions; k++) {
      int32_t d = first_dot_in_loop(f, &o->regions[k], o->opc == TL_OP_for ? r->ops.data[i] : in_loop, acc, loop);
      if (d >= 0) return d;
    }
  }
  return -1;
}

static bool fits_cutlass(tl_func *f, const main_loop *ml, char *why, size_t n) {
  if (ml->kind == LOOP_NONE) {
    int32_t loop = -1, d = first_dot_in_loop(f, &f->body, -1, true, &loop);
    bool acc = d >= 0;
    if (!acc) d = first_dot_in_loop(f, &f->body, -1, false, &loop);
    /* a dot whose accumulator is another dot's result: dots chained on one accumulator a step (a k loop unrolled
     * by hand), which no main loop form takes */
    bool chained = false;
    for (int32_t i = 0; d >= 0 && i < f->ops.len && !chained; i++) {
      const tl_op *o = &f->ops.data[i];
      chained = !(o->flags & TL_OPF_DEAD) && o->opc == TL_OP_dot && o->parent == loop && o->nopnd > 2 &&
                tl_val(f, o->opnd[2])->def >= 0 && tl_op_at(f, tl_val(f, o->opnd[2])->def)->opc == TL_OP_dot;
    }
    /* a dot under an `if` in the loop (blocks skipped by a condition): the main loop forms take dots in the
     * loop's own body (an attention-variant hunt: this said "does not accumulate" of the score dot) */
    bool under_if = d >= 0 && tl_op_at(f, d)->parent != loop && tl_op_at(f, tl_op_at(f, d)->parent)->opc == TL_OP_if;
    /* (a computed a beside a loaded b: a decode kernel's P V after a scores pass, a decode-variant hunt) */
    bool bt = false, at = false;
    bool b_loaded_only = d >= 0 && tl_loaded_param(f, tl_op_at(f, d)->opnd[1], &bt) >= 0 &&
                         tl_loaded_param(f, tl_op_at(f, d)->opnd[0], &at) < 0;
    /* (why a's code is no operand prologue, and where: a computed-A hunt saw only the generic text) */
    char pro[160] = "";
    if (d >= 0 && b_loaded_only && !under_if && !chained && acc) {
      int32_t loads[16], stop;
      const char *pwhy = NULL;
      if (tl_prologue_refusal(f, d, 0, loads, 16, &pwhy, &stop) < 0 && pwhy) {
        if (stop >= 0)
          snprintf(pro, sizeof pro, " (the %s at %d:%d: %s)", tl_opinfo_table[tl_op_at(f, stop)->opc].name,
                   tl_op_at(f, stop)->loc.line, tl_op_at(f, stop)->loc.col, pwhy);
        else
          snprintf(pro, sizeof pro, " (%s)", pwhy);
      }
    }
    char bl[400];
    snprintf(bl, sizeof bl, "has its a computed in the loop, not as an operand prologue a main loop takes%s, and only b "
                            "loaded there; --pipeline=multistage still streams b through a ring", pro);
    if (d >= 0) /* a dot in a loop that is not a main loop: say what a main loop's dot looks like */
      snprintf(why, n, "has no dot main loop (the dot at %d:%d in the loop at %d:%d %.300s)", tl_op_at(f, d)->loc.line,
               tl_op_at(f, d)->loc.col, tl_op_at(f, loop)->loc.line, tl_op_at(f, loop)->loc.col,
               under_if ? "is under an `if` in the loop: a main loop's dots are in the loop's own body; skip blocks "
                          "through the loop's range (two loops, or a start and end computed before it) or mask "
                          "them with where()"
               : chained ? "chains dots on one accumulator a step (a k loop unrolled by hand): write one dot a step, "
                         "acc = dot(a, b, acc); the pipeline unrolls and prefetches by itself (@stages)"
               : !acc ? "does not accumulate: a main loop's dot adds into a carried tile and its result is carried back "
                        "as it is, acc = dot(a, b, acc); scale acc after the loop or scale an operand"
                   : b_loaded_only ? bl
                                   : "has operands computed, not tiles loaded in the loop: nothing would stream through a ring");
    else
      snprintf(why, n, "has no dot main loop");
    return false;
  }
  for (int i = 0; i < ml->ndots; i++) {
    dot_shape s = shape_of(f, ml->dots[i]);
    int kstep = tl_dot_kstep(s.dtype);
    if (!kstep)
      snprintf(why, n, "has dot operands of type %s (cutlass takes bf16, f16, f8e4m3, f8e5m2, i8, f32 as tf32)",
               tl_dtype_name(s.dtype));
    else if (s.m % 64 != 0)
      snprintf(why, n, "has a dot with M = %d, not a multiple of 64 (the cutlass pipeline's rows: a warpgroup's wgmma "
                       "rows on sm_90a, the same tiling on every target)", s.m);
    else if (s.n % 16 != 0 || s.n > 256)
      snprintf(why, n, "has a dot with N = %d, not a multiple of 16 up to 256 (the cutlass pipeline's N: wgmma's on "
                       "sm_90a)", s.n);
    else if (s.k % kstep != 0)
      snprintf(why, n, "has a dot with K = %d, not a multiple of %d (the cutlass pipeline's K step for %s: wgmma's "
                       "on sm_90a)", s.k, kstep, tl_dtype_name(s.dtype));
    else
      continue;
    return false;
  }
  return true;
}

static const char *const pipe_names[] = {"auto", "simple", "multistage", "cutlass"};
static const char *pipe_name(int p) { return p >= 0 && p <= TL_PIPE_CUTLASS ? pipe_names[p] : "?"; }

/* Bytes of the dot operand tiles loaded per iteration (one ring stage), and
 * of those loaded once before the loop (resident for its whole run). */
static void operand_bytes(tl_func *f, const main_loop *ml, int64_t *per_stage, int64_t *resident,
                          int64_t *resident_rows) {
  *per_stage = *resident = *resident_rows = 0;
  int32_t seen[16];
  int nseen = 0;
  for (int i = 0; i < ml->ndots; i++)
    for (int j = 0; j < 2; j++) {
      int32_t v = strip(f, tl_op_at(f, ml->dots[i])->opnd[j], true);
      if (!is_load(f, v) || (ml->kind == LOOP_GEMM && ml->prologue[j])) {
        /* an operand prologue's loads (W4A16's words, attention's rotated k): their boxes a
         * stage, each once */
        int32_t loads[16];
        const char *why;
        int n = tl_op_at(f, ml->dots[i])->parent == ml->for_op ? tl_prologue_loads(f, ml->dots[i], j, loads, 16, &why) : -1;
        for (int k = 0; k < n; k++) {
          int q = 0;
          while (q < nseen && seen[q] != tl_op_at(f, loads[k])->res[0]) q++;
          if (q < nseen) continue;
          if (nseen < 16) seen[nseen++] = tl_op_at(f, loads[k])->res[0];
          int32_t rows, base;
          tl_prologue_view(f, loads[k], ml->for_op, (f->warps > 0 ? f->warps : 4) * 32, &rows, &base, &why);
          tl_type *t = &tl_val(f, tl_op_at(f, loads[k])->res[0])->type;
          *per_stage += (int64_t)rows * t->shape[1] * tl_dtype_bytes((tl_dtype)t->dtype);
        }
        continue;
      }
      if (!is_load(f, v)) continue;
      /* a tile several dots read is loaded (streamed) once */
      int k = 0;
      while (k < nseen && seen[k] != v) k++;
      if (k < nseen) continue;
      seen[nseen++] = v;
      tl_type *t = &tl_val(f, v)->type;
      int64_t bytes = tl_type_numel(t) * tl_dtype_bytes((tl_dtype)t->dtype);
      if (tl_op_inside(f, def_op(f, v), ml->for_op)) *per_stage += bytes;
      else *resident += bytes, *resident_rows += t->rank ? t->shape[0] : 1;
    }
}

/* Operand B of dot D is a transpose (dot(a, trans(load(BT[n, k])))): B stored
 * [N][K], K-major like A, the fp8 TN GEMM the fast cooperative default was
 * measured on (a B kept [K][N] makes the producer warpgroup transpose it). */
static bool b_k_major(tl_func *f, int32_t dot) {
  int32_t d = def_op(f, strip(f, tl_op_at(f, dot)->opnd[1], false));
  return d >= 0 && tl_op_at(f, d)->opc == TL_OP_trans;
}

/* The epilogue after GEMM loop F is the accumulator cast and stored and nothing
 * else (cast / convert_layout / store at the body's top level after F): the
 * plain GEMM the cooperative default was measured on (fifteenth session). */
static bool plain_epilogue(tl_func *f, int32_t F) {
  if (tl_op_at(f, F)->parent != -1) return false;
  bool after = false;
  for (int32_t i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    if (id == F) {
      after = true;
      continue;
    }
    const tl_op *o = tl_op_at(f, id);
    if (!after || (o->flags & TL_OPF_DEAD)) continue;
    if (o->opc != TL_OP_cast && o->opc != TL_OP_convert_layout && o->opc != TL_OP_store) return false;
  }
  return after;
}

/* Attention on cutlass gets 8 warps: sm_90a (wgmma; NULL = sm_90a) and
 * every dot's M a multiple of 128 (two warpgroups of 64-row blocks). */
static bool cutlass_attn_8(tl_func *f, const main_loop *ml, const char *arch) {
  if (arch && strcmp(arch, "sm_90a")) return false;
  for (int i = 0; i < ml->ndots; i++)
    if (shape_of(f, ml->dots[i]).m % 128) return false;
  return true;
}

/* The grid clause's dimension count (its yield's operands), 0 when it has none. */
static int grid_dims(tl_func *f) {
  if (!f->grid.ops.len) return 0;
  tl_op *y = tl_op_at(f, f->grid.ops.data[f->grid.ops.len - 1]);
  return y->opc == TL_OP_yield ? y->nopnd : 0;
}

/* The SMs the default span counts (H100 / H200 SXM: 132).  The span only sets how many heads a
 * group of the order holds (about two waves of CTAs); on a device with other SM counts the order is
 * the same permutation with a group that is a little long or short, never wrong. */
#define ATTN_ORDER_SMS 132

/* TILEC_ATTN_ORDER (default on since the eighteenth session's measurement, =0 off; in the kernel
 * cache key): the grid's tail heaviest first across heads.
 * A causal attention kernel's row blocks have trip counts that depend on program_id(0), and
 * attn.tile orders them heaviest first along program_id(0) only: the launch order (ctaid.x fastest)
 * walks one head's row blocks, then the next head's, so the last CTAs the hardware starts include
 * the last heads' heaviest blocks, and the SMs idle at the end of the grid while those run (a list
 * schedule's tail, up to a heavy block's length; bench/RESULTS.md, seventeenth session, attnshort:
 * simulated 5-11 % at S 1k-4k).  The order takes the last ceil(span / num_programs(0)) heads (about
 * two waves of CTAs) program_id(1) fastest, so their heaviest blocks start first and the lightest
 * end the grid; the CTAs before them keep the launch order (a head's row blocks together, reading
 * its K and V from L2 at about the same time).  =1: span 2 x 132 x programs an SM; =N (N >= 2):
 * span N CTAs (measuring); unset: as =1 (H200: causal S 1k / 4k +1-6 % at D 64 / 128 / 256, the full
 * rows' PTX unchanged).  Returns the span, 0 (off) with *why saying why, or NULL where there is
 * nothing to say (not attention, or the switch unset where the order does not apply). */
static int attn_order_span(tl_func *f, const main_loop *ml, bool attn_wg, const char **why) {
  *why = NULL;
  const char *e = tl_code_env("TILEC_ATTN_ORDER");
  if (ml->kind != LOOP_ATTENTION) return 0;
  bool asked = e && *e; /* (empty = unset, as the cache key reads it: the default, =1) */
  if (!asked) e = "1";
  if (e[0] == '0') return *why = "off (TILEC_ATTN_ORDER=0)", 0;
  /* (where the order does not apply, the default says nothing; a set switch says why it is off) */
  if (grid_dims(f) < 2) return *why = asked ? "off (a one-dimensional grid: no heads to interleave)" : NULL, 0;
  /* a triangle: the loop starts at the same place in every program and ends where program_id(0)
   * says (causal); a range that moves with program_id(0) (split-KV decode) weighs the same in each */
  tl_op *lo = tl_op_at(f, ml->for_op);
  if (lo->nopnd < 3 || !tl_from_program_id(f, lo->opnd[1], 0))
    return *why = asked ? "off (the main loop's trip count does not depend on program_id(0): every tile weighs the same)" : NULL, 0;
  if (tl_from_program_id(f, lo->opnd[0], 0) || tl_from_program_id(f, lo->opnd[2], 0))
    return *why = asked ? "off (the main loop's start or step moves with program_id(0): not one triangle of row blocks)" : NULL, 0;
  long v = atol(e);
  /* programs an SM: the warp-specialized forms one, the two-program wgmma kernel two, the other
   * wgmma kernels one (D 256), attention off wgmma two (route_pipeline's ring cut) */
  int progs = f->ws != TL_WS_OFF ? 1 : f->two_programs ? 2 : attn_wg ? 1 : 2;
  int span = v >= 2 && v <= (1L << 24) ? (int)v : 2 * ATTN_ORDER_SMS * progs;
  *why = "on (TILEC_ATTN_ORDER, default: a non-persistent grid's last ceil(span / num_programs(0)) values of program_id(1) "
         "run it fastest, program_id(0) in the source's order across them: attn.tile's heaviest row blocks of the "
         "last heads first, the lightest last)";
  return span;
}

typedef enum { SRC_ATTR, SRC_OPTION, SRC_NAME, SRC_DEFAULT } choice_source;

/* The loop's range (start, end or step) moves with the tile -- with program_id(0) (causal attention) or a bound read
 * from memory (per-sequence lengths): its tiles weigh differently, so a static persistent order would unbalance the SMs. */
static bool range_moves_with_tile(tl_func *f, int32_t for_op) {
  tl_op *lo = tl_op_at(f, for_op);
  bool moves = lo->nopnd < 3;
  for (int k = 0; k < 3 && k < lo->nopnd; k++)
    moves = moves || tl_from_program_id(f, lo->opnd[k], 0) || tl_computed_from(f, lo->opnd[k], TL_OP_load, -1);
  return moves;
}

static bool run_route_pipeline(tl_func *f, const tl_pass_opts *o) {
  router R = {f, tl_alloc(&f->ctx->arena, (size_t)f->ops.len + 1)};
  main_loop ml = {LOOP_NONE, -1, {-1, -1, -1, -1, -1, -1, -1, -1}, 0, {0, 0}};
  find_main_loop(&R, &f->body, &ml);

  choice_source src;
  int pipe;
  /* The option forces every kernel (tilec_options_set_pipeline, --pipeline=),
   * so it wins over the source's @pipeline attribute (docs/language.md). */
  if (o->pipeline) src = SRC_OPTION, pipe = o->pipeline;
  else if (f->pipeline) src = SRC_ATTR, pipe = f->pipeline;
  else if (f->name && strstr(f->name, "cutlass")) src = SRC_NAME, pipe = TL_PIPE_CUTLASS;
  else src = SRC_DEFAULT, pipe = ml.kind != LOOP_NONE ? TL_PIPE_MULTISTAGE : TL_PIPE_SIMPLE;

  char why[400] = "";
  bool fell_back = false;
  if (pipe == TL_PIPE_CUTLASS && !fits_cutlass(f, &ml, why, sizeof why)) {
    int to = ml.kind != LOOP_NONE ? TL_PIPE_MULTISTAGE : TL_PIPE_SIMPLE;
    const char *asked = src == SRC_ATTR     ? " (asked for by @pipeline(cutlass))"
                        : src == SRC_OPTION ? " (asked for by the options)"
                                            : "";
    tl_warning(f->ctx, f->loc, "kernel '%s'%s %s: routed to '%s'", f->name, asked, why, pipe_name(to));
    pipe = to;
    fell_back = true;
  }
  f->pipeline = pipe;

  /* stages: a ring deep enough to hide load latency, cut to what fits in
   * shared memory (1 = no prefetch) */
  bool stages_set = f->stages != 0;
  f->two_programs = false;
  const char *one_why = NULL; /* (attention on wgmma whose two programs an SM would fit but for their registers) */
  /* attention on cutlass for sm_90a (8 warps, wgmma, below): one program of
   * two warpgroups an SM (its registers), so the ring takes what fits; the
   * score dot's wait also covers the value dot's group, which needs 3 stages */
  bool attn_wg = pipe == TL_PIPE_CUTLASS && ml.kind == LOOP_ATTENTION && (f->warps == 0 || f->warps == 8) &&
                 cutlass_attn_8(f, &ml, o->arch);
  int64_t per_stage = 0, resident = 0, resident_rows = 0;
  if (ml.kind != LOOP_NONE) operand_bytes(f, &ml, &per_stage, &resident, &resident_rows);
  if (!stages_set) {
    int want = pipe == TL_PIPE_CUTLASS ? 4 : pipe == TL_PIPE_MULTISTAGE ? 3 : 1;
    if (want > 1 && per_stage > 0) {
      int64_t fit = (tl_arch_smem_budget(o->arch) - resident) / per_stage;
      /* attention: keep two programs on an SM, at least 2 stages: one
       * program of 4 warps cannot hide the softmax between its mmas (H200,
       * D128: 2 stages 272 TFLOP/s, 3 stages 215).  An SM has the budget +
       * 1 KiB, and each program also takes 1 KiB reserved by the driver and
       * 16 B of padding per row of its resident operands (swpipe). */
      /* wgmma attention too (TILEC_ATTN_TWO, default on; =0 off): two programs of two
       * warpgroups an SM when 2 stages of each fit (D128 BN64: 2 x 98 KB) and one program's
       * deepest ring would not leave room for a second; codegen then asks ptxas for 128
       * registers (.minnctapersm 2, dot_plan.c plan_two_programs), and one program's softmax
       * runs under the other's wgmma, as at D64 (H200: D128 BN64 1.00-1.20x the one-program
       * BN128 kernel; docs/pipelines.md "Two attention programs an SM").  Not with the
       * warp-specialized forms (384 threads) or the late value dot (3 stages at least). */
      const char *aws = o->attn_ws ? o->attn_ws : tl_code_env("TILEC_ATTN_WS"), *aov = tl_code_env("TILEC_ATTN_OVERLAP");
      bool two_wg = attn_wg && !tl_code_env_off("TILEC_ATTN_TWO") && (!aws || !strcmp(aws, "off")) &&
                    (!aov || aov[0] == '0');
      if (ml.kind == LOOP_ATTENTION && (!attn_wg || two_wg)) {
        int64_t half = (tl_arch_smem_budget(o->arch) + 1024) / 2 - 1024;
        int64_t two = (half - resident - 16 * resident_rows) / per_stage;
        if (!attn_wg && two < fit) fit = two < 2 ? 2 : two;
        /* two programs of 256 threads have 128 registers a thread: the score and value accumulators must leave
         * room (D128 BN64: 32 + 64 of them, 0 spills; D32 BN256's 128 + 16 asked ptxas for the impossible, an
         * attention-variant hunt) */
        int64_t acc_elems = 0;
        bool b_loaded = true; /* (a B computed in the loop is more registers beside them: a paged kernel's masked V
                               * spilled 9 KB at 128; only loaded B were measured) */
        for (int i = 0; i < ml.ndots; i++) {
          dot_shape ds = shape_of(f, ml.dots[i]);
          acc_elems += (int64_t)ds.m * ds.n;
          bool bt = false;
          b_loaded = b_loaded && tl_loaded_param(f, tl_op_at(f, ml.dots[i])->opnd[1], &bt) >= 0;
        }
        /* (random numbers in the loop, with layout_assign's TILEC_RAND_FOLLOW: Philox's blocks beside them -- dropout's
         * P from registers spilled 1 KB at 128 where one program an SM takes 230 registers and none) */
        bool rand_in_loop = !tl_code_env_off("TILEC_RAND_FOLLOW") && tl_op_holds(f, ml.for_op, TL_OP_rand);
        bool regs_fit = acc_elems / 256 <= TWO_PROGRAMS_ACC_REGS && b_loaded && !rand_in_loop;
        if (attn_wg && regs_fit && two >= 2 && two < fit && two < want) { /* (the cut changes the ring) */
          fit = two;
          f->two_programs = true;
        } else if (attn_wg && two_wg && two >= 2 && two < fit && two < want)
          one_why = rand_in_loop ? "random numbers in the loop: Philox's registers beside the accumulators"
                    : !b_loaded  ? "a value operand computed in the loop"
                                 : "the accumulators' registers";
      }
      /* A streaming pipeline whose operands leave room for one stage streams nothing: every k-step waits for its
       * own loads.  Not silent (a user picking BK = 128 for an f32 A found it only in --explain). */
      if (fit < 2 && !attn_wg)
        tl_warning(f->ctx, f->loc,
                   "kernel '%s': one stage of the main loop's operands takes %lld bytes (%lld more stay resident) of "
                   "the %lld bytes of shared memory, so the '%s' pipeline streams nothing: a smaller BK (or BM / BN) "
                   "gives it a ring of 2 stages or more",
                   f->name, (long long)per_stage, (long long)resident, (long long)tl_arch_smem_budget(o->arch),
                   pipe_name(pipe));
      if (fit < want) want = fit < 1 ? 1 : (int)fit;
    }
    f->stages = want;
  }
  /* warps: for dot kernels, 8 when an accumulator has 128x128 elements or
   * more (64 f32 registers a thread), else 4; others are left to layout_assign.
   * Attention keeps 4: its warps hold whole rows (mma_remap), and every warp
   * reads all of K and V from shared memory, so 8 warps of 16 rows read them
   * twice as often as 4 warps of 32 rows (the D128 loop was bound by shared
   * memory bandwidth at 8 warps: 0.65x FlashAttention-2, 4 warps 0.77x) */
  bool warps_set = f->warps != 0, attn8 = false;
  if (!warps_set && ml.kind != LOOP_NONE) {
    int64_t biggest = 0;
    for (int i = 0; i < ml.ndots; i++) {
      dot_shape s = shape_of(f, ml.dots[i]);
      if ((int64_t)s.m * s.n > biggest) biggest = (int64_t)s.m * s.n;
    }
    f->warps = biggest >= 128 * 128 && ml.kind != LOOP_ATTENTION ? 8 : 4;
    /* ... but one warpgroup for a cutlass GEMM on sm_90a whose dots have 64 rows: wgmma takes 64 rows a
     * warpgroup and codegen does not split N over warpgroups, so 8 warps fell to mma.sync (a new user's 64x256x128
     * fp8 TN: mma.sync, 255 registers, 372 B of spills; on 4 warps wgmma.m64n256k32, 128 accumulator registers
     * a thread, 0 spills) */
    /* Opt-in (TILEC_ROWS64=1) until bench/pending_s39.sh has run it on a GPU: the 64x256 one-warpgroup GEMM is a
     * configuration no GPU run has checked yet (the thirty-ninth session had no device start) */
    bool rows64 = tl_code_env_on("TILEC_ROWS64") && pipe == TL_PIPE_CUTLASS && ml.kind == LOOP_GEMM &&
                  (!o->arch || !strcmp(o->arch, "sm_90a"));
    for (int i = 0; i < ml.ndots && rows64; i++) rows64 = shape_of(f, ml.dots[i]).m == 64;
    if (rows64 && f->warps == 8) f->warps = 4;
    /* ... unless attention's accumulator alone would be over 128 f32 registers a thread at 4 warps (D256 with
     * 128 rows: 256, and 50 KB of spills on sm_80, an attention-variant hunt): 8 warps of 16 rows */
    if (ml.kind == LOOP_ATTENTION && biggest / (4 * 32) > 128) f->warps = 8;
    /* ... except on cutlass for sm_90a, where attention's dots are wgmma
     * (mma_remap): two warpgroups of 64 rows for a 128-row tile, each warp
     * 16 rows (S 128x64 is 32 f32 a thread, O 128x128 64); the operands are
     * read by the tensor cores, not per warp, so the 4-warp argument is gone */
    if (attn_wg) {
      f->warps = 8;
      attn8 = true;
    }
  }

  /* warp specialization and persistence: the cutlass GEMM loop on sm_90a
   * (TMA ring + wgmma; codegen checks the rest and says so in its tma:
   * line).  TILEC_WS=off|coop and TILEC_PERSIST=0|1 switch them for
   * measuring (part of the kernel cache key, lib/api/jit.c). */
  const char *ws_why = NULL, *persist_why = NULL, *cluster_why = NULL;
  char ws_buf[320]; /* (ws_why's text where it names the switch or the option; printed after the branches) */
  bool gemm90 = pipe == TL_PIPE_CUTLASS && ml.kind == LOOP_GEMM && (!o->arch || !strcmp(o->arch, "sm_90a"));
  f->ws = TL_WS_OFF;
  f->attn_fa3 = false;
  f->attn_sched = o->attn_sched ? o->attn_sched[0] : 0;
  f->attn_o_slot_k = o->attn_o_slot_k ? o->attn_o_slot_k[0] : 0;
  f->persist = false;
  f->attn_persist = 0;
  f->attn_persist_fits = false;
  f->cluster = TL_CLUSTER_1X1;
  if (attn_wg && f->warps == 8) {
    /* attention (cutlass, sm_90a, two warpgroups on one 128-row tile):
     * TILEC_ATTN_WS=producer gives K/V to a producer warpgroup (full and
     * empty mbarriers, no CTA barrier per step), =pingpong also makes the two
     * consumer warpgroups take turns issuing their dots (named barriers), so
     * one's softmax runs under the other's wgmma (FlashAttention-3's
     * schedule; docs/pipelines.md "Warp-specialized attention") */
    const char *ws = o->attn_ws ? o->attn_ws : tl_code_env("TILEC_ATTN_WS");
    if (ws && !strcmp(ws, "producer")) {
      f->ws = TL_WS_COOP;
      ws_why = "producer (TILEC_ATTN_WS=producer: a producer warpgroup issues K and V by TMA, both consumer "
               "warpgroups release the slots on empty mbarriers)";
    } else if (ws && !strcmp(ws, "pingpong")) {
      f->ws = TL_WS_PINGPONG;
      ws_why = "pingpong (TILEC_ATTN_WS=pingpong: the producer warpgroup, and the two consumer warpgroups issue "
               "their dots in turns, one's softmax under the other's wgmma)";
    } else if (ws && !strcmp(ws, "fa3")) {
      /* FlashAttention-3's combination: the producer, the turns and, inside each
       * turn, the value dot a step late (emit_overlap.c reads the same switch) */
      f->ws = TL_WS_PINGPONG;
      f->attn_fa3 = true;
      ws_why = "fa3 (TILEC_ATTN_WS=fa3 or the option attn-ws=fa3: the producer warpgroup, the turns, and in each turn the score dot of "
               "step j and the value dot of step j-1, so one warpgroup's softmax runs under its own value dot "
               "and the other's dots; one program an SM)";
    } else {
      ws_why = "off (TILEC_ATTN_WS=producer|pingpong|fa3 turns it on)";
    }
    persist_why = "off (attention: one tile a program)";
    /* fa3: one program an SM, so each tile's start (CTA launch, the ring's first loads) and end
     * would run with the tensor cores idle; a persistent CTA's producer fills the next tile's
     * stages under this one's epilogue (codegen keeps it off when the trip count depends on the
     * tile: causal, where the hardware's heaviest-first order balances the SMs) */
    if (f->ws == TL_WS_PINGPONG && ws && !strcmp(ws, "fa3") && !tl_code_env_off("TILEC_PERSIST")) {
      f->persist = true;
      persist_why = "on (fa3: one CTA an SM looping over the tiles, the producer running ahead into the next "
                    "tile; TILEC_PERSIST=0 off)";
      /* codegen (emit_ws.c, attn_nopersist) keeps a causal kernel one tile a program: say so here */
      if (range_moves_with_tile(f, ml.for_op))
        persist_why = "off (fa3: the main loop's trip count depends on the tile (causal), so one tile a program, "
                        "the hardware's heaviest-first launch order balancing the SMs; TILEC_ATTN_SCHED=1 (opt-in) "
                        "takes such tiles from a counter where codegen's tma: line says so)";
    }
    /* TILEC_ATTN_PERSIST=1 (opt-in, unmeasured): the kernel without a producer (two programs an SM at
     * D 128, one at D 256) runs each wave's tiles in lock step, q and the first K/V stages loaded and O
     * stored with the tensor cores idle; persistent CTAs with the next tile's first stages issued at
     * the loop's exit (tile_prefetch.c) and q by TMA (emit_q_tma.c) put those loads under the epilogue.
     * Only where every tile weighs the same: a static tile order would unbalance a causal grid.  For
     * measuring the parts: =3 the stages without q by TMA, =2 persistent alone */
    /* The option attn-persist (what tilec_kernel_load sets for a D256 kernel's persistent form,
     * passes/attn_persist_form.c) wins over the switch. */
    const char *ape = o->attn_persist ? o->attn_persist : tl_code_env("TILEC_ATTN_PERSIST");
    bool moves = true;
    if (f->ws == TL_WS_OFF) {
      moves = range_moves_with_tile(f, ml.for_op);
      f->attn_persist_fits = !moves;
    }
    if (f->ws == TL_WS_OFF && ape && ape[0] >= '1' && ape[0] <= '3' && !ape[1]) {
      if (moves) {
        persist_why = "off (TILEC_ATTN_PERSIST: the main loop's range moves with the tile -- program_id(0), or a bound "
                      "read from memory -- so the tiles weigh differently and a static order would unbalance the SMs)";
      } else {
        f->persist = true;
        f->attn_persist = ape[0] - '0';
        static const char *const levels[] = {
            "on (TILEC_ATTN_PERSIST=1: CTAs that fit looping over the tiles, the next tile's first K/V stages and q "
            "(by TMA where it fits) issued at the main loop's exit, under this tile's epilogue)",
            "on (TILEC_ATTN_PERSIST=2: CTAs that fit looping over the tiles, no prefetch)",
            "on (TILEC_ATTN_PERSIST=3: CTAs that fit looping over the tiles, the next tile's first K/V stages issued "
            "at the main loop's exit, q staged at the tile's start)"};
        persist_why = levels[ape[0] - '1'];
      }
    }
  }
  const char *order_why = NULL;
  f->attn_order = attn_order_span(f, &ml, attn_wg, &order_why);
  bool dtype16 = false;
  if (gemm90) {
    /* the schedule asked for: the option ws wins over TILEC_WS (both off | coop | pingpong) */
    const char *ws = o->ws ? o->ws : tl_code_env("TILEC_WS"), *pe = tl_code_env("TILEC_PERSIST");
    const char *ws_src = o->ws ? "option ws" : "TILEC_WS";
    /* persistent only where one CTA fills an SM's shared memory: with room
     * for two, their prologues and epilogues already overlap, and measured
     * (H200, fp8 TN 64x128x128, 3 x 24 KiB) persistent CTAs were 3-8 %
     * slower; bf16 128x256x64 (4 x 48 KiB) gains 2-6 % */
    int64_t ring = (int64_t)f->stages * per_stage + resident;
    if (pe && *pe == '0') {
      persist_why = "off (TILEC_PERSIST=0)";
    } else if (ring * 2 <= tl_arch_smem_budget(o->arch) && !(pe && *pe == '1')) {
      persist_why = "off (the ring leaves room for a second CTA on an SM, TILEC_PERSIST=1 forces it)";
    } else {
      f->persist = true;
      persist_why = "on (about one CTA per SM looping over the output tiles, grouped by 8 along program_id(0))";
    }
    /* clusters of 2 (emit_cluster.c): on persistent CTAs, with the producer /
     * consumer split (the CTAs release each other's slots on the empty
     * mbarriers), so asking for one turns the cooperative schedule on */
    int want_cluster = cluster_wanted(f);
    bool pair = want_cluster == TL_CLUSTER_2X1 || want_cluster == TL_CLUSTER_1X2;
    const char *shape = want_cluster == TL_CLUSTER_2X1 ? "2x1" : "1x2";
    bool pp_asked = ws && !strcmp(ws, "pingpong");
    static char cbuf[400];
    if (!pair) {
      cluster_why = want_cluster == TL_CLUSTER_1X1 && f->cluster_opt ? "1x1 (option cluster=1x1)"
                    : want_cluster == TL_CLUSTER_1X1 ? "1x1 (TILEC_CLUSTER=1x1)"
                                                     : "1x1 (the default: 2x1 / 1x2 measured at 0.92-1.02x of the "
                                                       "cooperative kernel on the H200; TILEC_CLUSTER=2x1|1x2 or the "
                                                       "option cluster asks for one)";
    } else if (pp_asked) {
      snprintf(cbuf, sizeof cbuf, "1x1 (%s asked for, not with the ping-pong schedule)", shape);
      cluster_why = cbuf;
    } else if (!f->persist) {
      snprintf(cbuf, sizeof cbuf, "1x1 (%s asked for; clusters are built on persistent CTAs)", shape);
      cluster_why = cbuf;
    } else {
      f->cluster = want_cluster;
      snprintf(cbuf, sizeof cbuf,
               "%s (%s: the two CTAs of a cluster take tiles adjacent along program_id(%d) and share the operand "
               "that does not depend on it, each loading half of its box multicast to both)",
               shape, f->cluster_opt ? "option cluster" : "TILEC_CLUSTER", want_cluster == TL_CLUSTER_2X1 ? 0 : 1);
      cluster_why = cbuf;
    }
    bool ws_for_cluster = f->cluster != TL_CLUSTER_1X1 && !(ws && !strcmp(ws, "coop"));
    if (f->cluster != TL_CLUSTER_1X1) ws = "coop";
    /* fp8 promote on two consumer warpgroups: cooperative by default.  Each
     * warpgroup waits for its own promotion group and adds it while the other
     * one's wgmma runs, which the CTA barrier of the TMA ring's k-step kept in
     * lock step (H200, ninth session: 128x128x128 5 stages 0.90x / 0.86x cuBLAS
     * accurate at 4096^3 / 8192^3, the ring's best 0.73x / 0.67x) */
    bool promote8 = f->warps == 8 && !o->fp8_acc_fast && ml.ndots == 1 && tl_dtype_is_fp8(shape_of(f, ml.dots[0]).dtype);
    /* (an fp8 B kept [K][N] takes it too: its producer warpgroup transposes B,
     * emit_ws.c producer_loop_tr.  fast on 8 warps stays on the ring, but
     * at 128x256 TN (below): the cooperative kernel measured 1.04x / 0.98x of
     * it at 4096^3 / 8192^3, H200, tenth session, NN 128x128; TILEC_WS=coop
     * asks for it) */
    bool ws_default = promote8 && !ws && f->cluster == TL_CLUSTER_1X1;
    /* fp8 fast on two consumer warpgroups at 128x256 with B K-major (TN; the
     * sm_90a tile of examples/gemm_fp8.tile): cooperative by default as well.
     * The ring's thread 0 issues a 48 KiB stage only after the CTA barrier of
     * the k-step, which both m64n256 warpgroups reach together; the producer
     * warpgroup keeps the ring full under them (H200, seventeenth session,
     * fp8p6, x cuBLAS fast at 4096^3 / 8192^3 in one run: 0.958 / 0.984
     * cooperative, the ring 0.897 / 0.941).  Only the measured point: 128x128
     * and the [K][N] B stay on the ring (above). */
    bool fast_wide = f->warps == 8 && o->fp8_acc_fast && ml.ndots == 1 &&
                     tl_dtype_is_fp8(shape_of(f, ml.dots[0]).dtype) && shape_of(f, ml.dots[0]).m == 128 &&
                     shape_of(f, ml.dots[0]).n == 256 && b_k_major(f, ml.dots[0]);
    bool ws_fast_default = fast_wide && !ws && f->cluster == TL_CLUSTER_1X1;
    /* a 16-bit GEMM on two consumer warpgroups, persistent, whose epilogue is
     * the accumulator's cast and store: cooperative by default too.  The
     * producer runs into the next tile's k-steps during the epilogue, which
     * the ring's thread 0 issues only after it (H200, fifteenth session, x
     * cuBLAS in one process over 18 shapes x storages, two calls: +1.2 %
     * mean over the ring, 29 of 36 readings >= 1; TILEC_WS=off keeps the
     * ring).  A fused
     * epilogue keeps the ring (linear + bias + GELU: 0.997x of it
     * cooperative, fifteenth session; docs/pipelines.md "Warp specialization") */
    dtype16 = ml.ndots == 1 && (shape_of(f, ml.dots[0]).dtype == TL_BF16 || shape_of(f, ml.dots[0]).dtype == TL_F16);
    bool ws16_default = !ws && f->warps == 8 && dtype16 && f->persist && f->cluster == TL_CLUSTER_1X1 &&
                        !ml.prologue[0] && !ml.prologue[1] && plain_epilogue(f, ml.for_op);
    /* none of them where the kernel takes a ticket (atomic_fetch_add): its acq_rel barrier is the whole program's,
     * which a warp-specialized kernel's warpgroups are not -- codegen refuses it there, so a default must not ask */
    bool ticket_off = (ws_default || ws16_default || ws_fast_default) && has_fetch_add(f);
    if (ticket_off) ws_default = ws16_default = ws_fast_default = false;
    if (ws_default || ws16_default || ws_fast_default) ws = "coop";
    /* Otherwise off by default: measured on the H200 (docs/pipelines.md "Warp
     * specialization", fifth session), the cooperative kernel ran at
     * 0.97-1.00x of the TMA ring it replaces. */
    if (ws && !strcmp(ws, "coop")) {
      f->ws = TL_WS_COOP;
      ws_why = ws_for_cluster ? "coop (for the cluster: a producer warpgroup issues the TMA ring, the consumer "
                                "warpgroups share one tile)"
               : ws_default ? "coop (the default for an fp8 promote dot on two warpgroups: a producer warpgroup issues "
                              "the TMA ring, each consumer warpgroup adds its promotion group under the other's wgmma; "
                              "measured 1.2-1.3x the TMA ring on the H200; TILEC_WS=off turns it off)"
               : ws_fast_default ? "coop (the default for an fp8 TN dot with fast accumulation at 128x256 on two "
                                   "warpgroups: a producer warpgroup keeps the 48 KiB stages coming under both "
                                   "consumers' wgmma; measured 0.958x cuBLAS fast against the TMA ring's 0.897x at "
                                   "4096^3 on the H200; TILEC_WS=off turns it off)"
               : ws16_default ? "coop (the default for a 16-bit GEMM on two warpgroups, persistent, whose epilogue is a "
                                "cast and a store: the producer warpgroup runs into the next tile's k-steps under the "
                                "epilogue; measured 1.01x the TMA ring on the H200, mean of 18 shapes in two runs; TILEC_WS=off "
                                "turns it off)"
                            : (snprintf(ws_buf, sizeof ws_buf,
                                        "coop (%s=coop: a producer warpgroup issues the TMA ring, the consumer "
                                        "warpgroups share one tile)",
                                        ws_src),
                               ws_buf);
    } else if (pp_asked) {
      /* only on request (bf16 128x128 measured 0.94-0.99x of the cooperative kernel, fifteenth session).
       * Codegen takes it for a 4-warp tile on persistent CTAs (its tma: line says, else the cooperative one) */
      f->ws = TL_WS_PINGPONG;
      snprintf(ws_buf, sizeof ws_buf,
               "pingpong (%s=pingpong: two consumer warpgroups on alternate tiles, one's epilogue under the "
               "other's main loop; bf16 128x128 measured 0.94-0.99x of the cooperative 128x256 on the H200)",
               ws_src);
      ws_why = ws_buf;
    } else if (ws && !strcmp(ws, "off")) {
      snprintf(ws_buf, sizeof ws_buf, "off (%s=off%s)", ws_src,
               promote8    ? "; the default for an fp8 promote dot on two warpgroups is coop"
               : fast_wide ? "; the default for an fp8 TN fast dot at 128x256 on two warpgroups is coop"
               : dtype16 && f->warps == 8
                   ? "; the default for a 16-bit GEMM on two warpgroups with a cast-and-store epilogue is coop"
                   : "");
      ws_why = ws_buf;
    } else if (ticket_off) {
      ws_why = "off (the kernel takes a ticket, atomic_fetch_add, whose barrier is the whole program's: no cooperative "
               "default)";
    } else {
      ws_why = dtype16 && f->warps == 8 && !ws
                   ? "off (the cooperative default takes a 16-bit GEMM on two warpgroups only when persistent, "
                     "not clustered, without an operand prologue and with a plain cast-and-store epilogue; "
                     "TILEC_WS=coop turns it on)"
                   : "off (the default: measured at 0.97-1.00x of the TMA ring on the H200; TILEC_WS=coop turns it on)";
    }
  }

  if (o->explain && o->explain_out) {
    tl_sbuf *b = o->explain_out;
    tl_sbuf_printf(b, "route_pipeline: kernel '%s': ", f->name);
    if (ml.kind == LOOP_NONE) {
      tl_sbuf_puts(b, "no dot main loop");
    } else {
      tl_loc l = tl_op_at(f, ml.for_op)->loc;
      tl_sbuf_printf(b, "main loop %s at %d:%d (",
                     ml.kind == LOOP_GEMM ? "GEMM-like" : ml.kind == LOOP_MULTI ? "multi-dot" : "attention-like", l.line,
                     l.col);
      for (int i = 0; i < ml.ndots; i++) {
        dot_shape s = shape_of(f, ml.dots[i]);
        tl_sbuf_printf(b, "%sdot %dx%dx%d %s", i ? ", " : "", s.m, s.n, s.k, tl_dtype_name(s.dtype));
      }
      for (int w = 0; w < 2; w++)
        if (ml.kind == LOOP_GEMM && ml.prologue[w])
          tl_sbuf_printf(b, "; %c computed from %d streamed load%s (an operand prologue)", w ? 'b' : 'a', ml.prologue[w],
                         ml.prologue[w] > 1 ? "s" : "");
      tl_sbuf_puts(b, ")");
    }
    tl_sbuf_printf(b, "; pipeline=%s ", pipe_name(pipe));
    if (fell_back) tl_sbuf_printf(b, "because the kernel %s (cutlass was asked for)", why);
    else if (src == SRC_ATTR) tl_sbuf_puts(b, "because of its @pipeline attribute");
    else if (src == SRC_OPTION) tl_sbuf_puts(b, "because the options force it");
    else if (src == SRC_NAME) tl_sbuf_puts(b, "because the name contains \"cutlass\"");
    else tl_sbuf_puts(b, ml.kind != LOOP_NONE ? "(the default for a dot main loop)" : "(the default without one)");
    tl_sbuf_printf(b, "; stages=%d", f->stages);
    if (stages_set) tl_sbuf_puts(b, " (attribute)");
    else if (per_stage > 0 && pipe != TL_PIPE_SIMPLE) tl_sbuf_printf(b, " (%lld bytes a stage)", (long long)per_stage);
    if (f->warps) tl_sbuf_printf(b, "; warps=%d%s", f->warps, warps_set ? " (attribute)" : "");
    if (attn8) tl_sbuf_puts(b, " (attention on cutlass for sm_90a: wgmma, 2 warpgroups of 64 rows)");
    if (f->two_programs) tl_sbuf_puts(b, "; two programs an SM (the ring cut to their share, .minnctapersm 2; TILEC_ATTN_TWO=0: one)");
    else if (one_why) tl_sbuf_printf(b, "; one program an SM (two would leave 128 registers a thread: %s)", one_why);
    if (ws_why) tl_sbuf_printf(b, "; ws=%s; persistent=%s", ws_why, persist_why);
    if (cluster_why) tl_sbuf_printf(b, "; cluster=%s", cluster_why);
    if (order_why) tl_sbuf_printf(b, "; order=%s", order_why);
    if (f->attn_order) tl_sbuf_printf(b, " span %d CTAs", f->attn_order);
    tl_sbuf_puts(b, "\n");
  }
  return true;
}

const tl_pass tl_pass_route_pipeline = {
    "route_pipeline",
    "requires verified IR; keeps ops and values; sets pipeline/stages (and warps of dot kernels) when unset",
    run_route_pipeline,
};
