/* layout_assign: requires verified tile IR (no layouts); keeps semantics;
 * sets every tile value's layout (an index into f->layouts), sets f->warps when
 * unset, inserts convert_layout where an op needs an operand in another layout;
 * breaks nothing (only row_loads, which reorders ops, runs after it).
 *
 * In kernels without a dot (docs/rows.md) more rules (off: TILEC_ROW_LAYOUT=0): a
 * multi-use load or its broadcast follows its first user, rand is a chain op, an op
 * whose operands are all weak takes the layout of the one made from the narrowest loads, and
 * a stored `trans` is converted to the store's coalesced layout (TILEC_STORE_TRANS=0 off); with
 * the gather layout (default on, TILEC_GATHER_LAYOUT=0 off) a gather's index tiles are re-made in the
 * gathered load's layout.

 * The layout algebra it uses is lib/layout.c (a core module; codegen uses it too).
 *
 * Strategy (Triton's, simplified):
 *  - anchors: loads get a coalesced blocked layout (16-byte vectors along the
 *    last dim), dot results the mma.sync accumulator layout;
 *  - elementwise ops take the layout of their first "strong" operand (one that
 *    is not cheap to re-make in another layout); a "weak" operand (a constant,
 *    iota, splat, or a single-use chain of loads / elementwise / expand_dims /
 *    broadcast ending in those) is re-targeted in place to the chosen layout;
 *  - reduce gives a slice of its operand's layout, expand_dims inserts a zero
 *    component, a broadcast of a slice back into its parent is free;
 *  - loop-carried values whose initial value is weak take the layout the loop
 *    body yields (the body is assigned again, at most 3 rounds); a carried value
 *    with one use whose initial and yielded values are weak takes, with both,
 *    the layout that use wants;
 *  - what still differs gets a convert_layout (constants are cloned instead). */
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "schedule.h"
#include "code_env.h"

/* ========================================================================== */
/* The pass                                                                    */
/* ========================================================================== */

typedef struct la_state {
  tl_func *f;
  int warps;
  int32_t *uses;
  bool rows;  /* a kernel without a dot: the memory-bound rules below (docs/rows.md) */
  bool rand_follow; /* a kernel with a dot, TILEC_RAND_FOLLOW on: follows_first_user */
  bool *seen; /* per value: an assigned op has used it (rows, rand_follow) */
  bool gather_index; /* rows, gather layout on: gather indices in the load's layout */
  const int32_t *leaf_loads; /* loads a retarget may leave in their layout (frag_shared_load), or NULL */
  int nleaf;
  int32_t frag_lids[8];   /* the A-fragment layouts preassign_frag_loads gave */
  int nfrag;
  int32_t *frag_load;     /* per op: the layout an A-fragment prologue load starts in (a_frag_layout), or -1 */
  int32_t invariant_loop; /* >= 0: a retarget may leave a value defined outside this loop in its layout (the A-fragment
                           * rule: phase B converts it, convert_hoist moves the conversion before the loop) */
} la_state;

/* Warps along M for a dot result [M, N]: whole rows per warp (M first) when
 * the kernel reduces anything (attention: row max / sum stay in the warp and
 * p feeds the next dot from registers); else the most square warp tile
 * (fewest shared-memory fragment loads: (M/wm + N/wn) per k step), ties to
 * more warps along M. */
static int mma_warps_m(tl_func *f, int32_t M, int32_t N, int warps) {
  for (int i = 0; i < f->ops.len; i++) {
    tl_op *o = tl_op_at(f, i);
    if (!(o->flags & TL_OPF_DEAD) && o->opc == TL_OP_reduce) return 0;
  }
  int best = 0;
  int64_t best_cost = 0;
  for (int wm = 1; wm <= warps; wm *= 2) {
    int wn = warps / wm;
    if (16 * wm > M || 8 * wn > N) continue;
    int64_t cost = M / wm + N / wn;
    if (!best || cost <= best_cost) {
      best = wm;
      best_cost = cost;
    }
  }
  return best;
}

/* The accumulator layout of dot op D [M, N].  No schedule table: the
 * heuristic above.  A table (lib/schedule.h): mma_remap's warps_m x warps_n
 * when it ran for the dot and they fit, else the heuristic above. */
static tl_layout dot_layout(tl_func *f, int32_t D, int32_t M, int32_t N, int warps) {
  if (!f->sched) return tl_layout_mma_split(M, N, warps, mma_warps_m(f, M, N, warps));
  tl_dot_sched *e = tl_sched_dot(f, D, false);
  /* wgmma's tiling (all warps along M) is followed only where codegen emits
   * wgmma: both operands streamed and swizzled; otherwise (swpipe or
   * smem_swizzle off or not streaming) mma.sync with the heuristic tiling */
  /* (an A that does not stream is resident or in registers, which mma_remap
   * accepted for wgmma: attention's q and p, the backward's k, v, P^T, dS) */
  bool wg_ok = e && e->pipelined && e->streamed[1] && e->swizzled && e->swizzle_bytes[1] &&
               (!e->streamed[0] || e->swizzle_bytes[0]);
  /* (TILEC_WGMMA_STAGED_A=1: mma_remap's staged MN-major A with a resident B, the backward's dQ = dS K) */
  tl_op *op = tl_op_at(f, D);
  tl_value *av = tl_val(f, op->opnd[0]), *bv = tl_val(f, op->opnd[1]);
  if (e && e->pipelined && !wg_ok && tl_code_env_on("TILEC_WGMMA_STAGED_A") && op->parent >= 0 && av->def >= 0 &&
      tl_op_at(f, av->def)->opc == TL_OP_trans && !tl_defined_outside(f, tl_op_at(f, av->def)->opnd[0], op->parent) &&
      bv->def >= 0 && tl_op_at(f, bv->def)->opc == TL_OP_load && tl_defined_outside(f, op->opnd[1], op->parent))
    wg_ok = true;
  if (e && e->remapped && e->instr == TL_SCHED_MMA_WGMMA && !wg_ok)
    return tl_layout_mma_split(M, N, warps, mma_warps_m(f, M, N, warps));
  if (e && e->remapped && e->warps_m > 0 && e->warps_n > 0) {
    tl_layout l = tl_layout_mma_split(M, N, warps, e->warps_m);
    if (l.mma_wm == e->warps_m && l.mma_wn == e->warps_n) return l;
  }
  /* mma_remap disabled (or its tiling does not fit): the heuristic codegen
   * used before the pass existed, which always fits codegen's per-warp
   * limit (warps over M first did not: 128x256 on 8 warps = 1 x 32 blocks). */
  return tl_layout_mma_split(M, N, warps, mma_warps_m(f, M, N, warps));
}

static tl_type *vtype(la_state *st, int32_t v) { return &tl_val(st->f, v)->type; }
static bool is_tile(la_state *st, int32_t v) { return vtype(st, v)->kind == TL_KIND_TILE; }
static const tl_layout *vlayout(la_state *st, int32_t v) {
  return tl_layout_at(st->f, vtype(st, v)->layout);
}
static int32_t intern(la_state *st, const tl_layout *l) { return tl_layout_intern(st->f, l); }

static int32_t default_layout(la_state *st, const tl_type *t) {
  tl_layout l = tl_layout_blocked(t->rank, t->shape, tl_dtype_bytes(t->dtype), st->warps);
  return intern(st, &l);
}

static bool is_cheap_op(int opc) {
  return opc == TL_OP_const || opc == TL_OP_iota || opc == TL_OP_splat;
}

/* TILEC_RAND_FOLLOW (kernels with a dot; default on since the thirty-seventh session: dropout attention 1.68-1.78x
 * forward, 1.51-1.62x dK / dV backward at D 64 / 128 S 4096 on an H100, bench/RESULTS.md; =0 off): random-number
 * masks follow their first user, below. */
static bool rand_follow_on(void) {
  return !tl_code_env_off("TILEC_RAND_FOLLOW");
}

static bool is_chain_op(la_state *st, const tl_op *o) {
  return o->opc == TL_OP_load || o->opc == TL_OP_expand_dims || o->opc == TL_OP_broadcast ||
         (tl_opinfo_table[o->opc].flags & TL_EW) || (o->opc == TL_OP_rand && (st->rows || st->rand_follow));
}

static bool made_of_indices(la_state *st, int32_t v, int depth, int max_depth, bool with_rand);

/* Kernels with a dot (TILEC_RAND_FOLLOW): a random mask made of indices, used by several ops, takes
 * the layout of the first op that uses it (re-made there: its chain has one user each), so dropout's
 * `where(keep, p * s, 0)` keeps p's accumulator layout and the value dot reads P from registers (wgmma)
 * instead of P converted to the mask's blocked layout through shared memory (an mma.sync dot, and a
 * D128 backward refused: its dO tile read by a wgmma and an mma.sync dot).  Its later users find it
 * there. */
static bool follows_first_user(la_state *st, int32_t v) {
  if (!st->rand_follow || !st->seen || !(st->uses[v] == 1 || !st->seen[v]) || !made_of_indices(st, v, 0, 16, true) ||
      !tl_computed_from(st->f, v, TL_OP_rand, -1))
    return false;
  /* ... inside a loop with a dot (a main loop: dropout on P or on dP).  After the loop (a GEMM epilogue's dropout)
   * the accumulator is whole and Philox beside it in its layout cost registers (128 x 256: 3.0 KB of spills against
   * 1.4 KB with the mask blocked and the accumulator converted; a rand-in-dot-kernels hunt) */
  tl_func *f = st->f;
  for (int32_t L = tl_val(f, v)->def >= 0 ? tl_op_at(f, tl_val(f, v)->def)->parent : -1; L >= 0; L = tl_op_at(f, L)->parent)
    if (tl_op_at(f, L)->opc == TL_OP_for && tl_op_holds(f, L, TL_OP_dot)) return true;
  return false;
}

/* rows: a load (or a broadcast of one) used by several ops may still follow its first user
 * (every later one then finds it in the layout that user chose): rope's COS and SIN rows, each
 * used twice, load in the layout of the bf16 rows they multiply instead of being converted
 * through shared memory. */
static bool single_use(la_state *st, int32_t v, const tl_op *def) {
  if (st->uses[v] == 1) return true;
  return st->rows && !st->seen[v] &&
         (def->opc == TL_OP_load || def->opc == TL_OP_broadcast || def->opc == TL_OP_expand_dims);
}

/* The initial value of region argument v of a for op, or -1. */
static int32_t for_init_of_arg(la_state *st, int32_t v) {
  tl_value *val = tl_val(st->f, v);
  if (val->def >= 0 || val->region_owner < 0) return -1;
  tl_op *o = tl_op_at(st->f, val->region_owner);
  if (o->opc != TL_OP_for || val->index < 1) return -1;
  int k = 3 + val->index - 1;
  return k < o->nopnd ? o->opnd[k] : -1;
}

/* The value the body of region argument v's for op yields for it, or -1. */
static int32_t for_yield_of_arg(la_state *st, int32_t v) {
  tl_value *val = tl_val(st->f, v);
  if (val->def >= 0 || val->region_owner < 0) return -1;
  tl_op *o = tl_op_at(st->f, val->region_owner);
  if (o->opc != TL_OP_for || val->index < 1 || o->nregions < 1) return -1;
  tl_region *body = &o->regions[0];
  if (!body->ops.len) return -1;
  tl_op *y = tl_op_at(st->f, body->ops.data[body->ops.len - 1]);
  int k = val->index - 1;
  return y->opc == TL_OP_yield && k < y->nopnd ? y->opnd[k] : -1;
}

/* Weak: cheap to produce in any layout (see the file comment). */
static bool is_weak(la_state *st, int32_t v, int depth) {
  if (depth > 12 || !is_tile(st, v)) return false;
  tl_value *val = tl_val(st->f, v);
  if (val->def < 0) {
    int32_t init = for_init_of_arg(st, v);
    return init >= 0 && is_weak(st, init, depth + 1);
  }
  tl_op *o = tl_op_at(st->f, val->def);
  if (is_cheap_op(o->opc)) return true;
  if (st->uses[v] != 1 || !is_chain_op(st, o)) return false;
  for (int k = 0; k < o->nopnd; k++)
    if (is_tile(st, o->opnd[k]) && !is_weak(st, o->opnd[k], depth + 1)) return false;
  return true;
}

/* rows: the smallest element (bytes) of the loads weak value v is made from, 0 when none: an
 * elementwise op whose operands are all weak takes the layout of the one read with the widest
 * vectors (dropout's bf16 rows, not the f32 layout of its random numbers: 16-byte accesses
 * instead of 8-byte ones). */
static int weak_load_bytes(la_state *st, int32_t v, int depth) {
  if (depth > 12 || !is_tile(st, v)) return 0;
  tl_value *val = tl_val(st->f, v);
  if (val->def < 0) return 0;
  tl_op *o = tl_op_at(st->f, val->def);
  if (o->opc == TL_OP_load) return tl_dtype_bytes((tl_dtype)vtype(st, v)->dtype);
  int best = 0;
  for (int k = 0; k < o->nopnd; k++) {
    int b = weak_load_bytes(st, o->opnd[k], depth + 1);
    if (b && (!best || b < best)) best = b;
  }
  return best;
}

/* v is computed only from constants, iota and splats through expand_dims / broadcast / elementwise ops (and, with
 * with_rand, rand: a random mask made of indices alone, dropout's `rand(seed, (z * S + rows) * S + cols) >= p`),
 * at most max_depth ops deep. */
static bool made_of_indices(la_state *st, int32_t v, int depth, int max_depth, bool with_rand) {
  if (depth > max_depth || !is_tile(st, v)) return false;
  tl_value *val = tl_val(st->f, v);
  if (val->def < 0) return false;
  tl_op *o = tl_op_at(st->f, val->def);
  if (o->flags & TL_OPF_DEAD) return false;
  if (is_cheap_op(o->opc)) return true;
  if (o->nres != 1 || (o->opc != TL_OP_expand_dims && o->opc != TL_OP_broadcast && !(with_rand && o->opc == TL_OP_rand) &&
                       !(tl_opinfo_table[o->opc].flags & TL_EW)))
    return false;
  for (int k = 0; k < o->nopnd; k++)
    if (is_tile(st, o->opnd[k]) && !made_of_indices(st, o->opnd[k], depth + 1, max_depth, with_rand)) return false;
  return true;
}

/* Rematerializable: made of indices (any number of uses): the iota masks of attention (`rows >= cols`, `cols < S`).
 * Such a value never decides a consumer's layout; phase B re-makes it (clones the chain) in whatever layout each
 * consumer needs instead of converting it. */
static bool is_remat(la_state *st, int32_t v, int depth) { return made_of_indices(st, v, depth, 8, false); }

static bool retarget_core(la_state *st, int32_t v, const tl_layout *l, bool apply, int depth);

/* Can value v be re-made in layout l by changing its single-use producers?
 * With apply, do it.  Under the A-fragment rule (st->invariant_loop) a value defined before the loop that cannot
 * be re-made (LayerNorm's mean, also used for the variance; a row statistic from an earlier loop) stays as it is:
 * phase B converts it for its user, and convert_hoist moves that conversion before the loop. */
static bool retarget(la_state *st, int32_t v, const tl_layout *l, bool apply, int depth) {
  if (st->invariant_loop >= 0 && is_tile(st, v) && tl_defined_outside(st->f, v, st->invariant_loop) &&
      !retarget_core(st, v, l, false, depth))
    return true;
  return retarget_core(st, v, l, apply, depth);
}

static bool retarget_core(la_state *st, int32_t v, const tl_layout *l, bool apply, int depth) {
  /* 16: a repacked int4 B's chain (gemm_w4a16_packed.tile: cast, sub, mul, cast, and, shr, load,
   * the gather index's broadcast, expand_dims and its two adds, mul, div, iota) is 14 deep */
  if (depth > 16 || !is_tile(st, v)) return false;
  tl_value *val = tl_val(st->f, v);
  if (val->def < 0) {
    /* a loop-carried tile with one use in the body (scales loaded for the next k-step and
     * carried): it, its initial value and the value the body yields for it take the layout
     * together, when all are weak (loads), so the use needs no conversion each iteration */
    int32_t init = for_init_of_arg(st, v), y = for_yield_of_arg(st, v);
    if (init < 0 || y < 0 || y == v || st->uses[v] != 1) return false;
    if (!retarget(st, init, l, apply, depth + 1) || !retarget(st, y, l, apply, depth + 1)) return false;
    if (apply) vtype(st, v)->layout = intern(st, l);
    return true;
  }
  tl_op o = *tl_op_at(st->f, val->def);
  if (is_cheap_op(o.opc)) {
    if (apply && st->uses[v] <= 1) vtype(st, v)->layout = intern(st, l);
    return true;
  }
  if (!single_use(st, v, &o) && !follows_first_user(st, v)) {
    /* an operand prologue's load with several users (gemm_w4a16_packed's one word of (s, z) a
     * column, taken apart by two bitcasts): left in its layout; phase B converts it for the users,
     * and codegen reads the slot again in the converted layout (emit_prologue.c
     * cg_convert_from_slot), so no register moves */
    for (int i = 0; i < st->nleaf; i++)
      if (st->leaf_loads[i] == val->def) return true;
    return false;
  }
  if (!is_chain_op(st, &o)) return false;
  for (int k = 0; k < o.nopnd; k++) {
    int32_t a = o.opnd[k];
    if (!is_tile(st, a)) continue;
    if (o.opc == TL_OP_load && k == 0) continue; /* the tensor */
    tl_layout want = tl_layout_for_operand(l, &o, vtype(st, a)->shape);
    if (retarget(st, a, &want, apply, depth + 1)) continue;
    /* (a random mask's offsets that other ops use too, made of indices alone: phase B re-makes them
     * in the layout rand wants, fix_region's clone_remat) */
    if (o.opc == TL_OP_rand && st->rand_follow && is_remat(st, a, 0)) continue;
    return false;
  }
  if (apply) vtype(st, v)->layout = intern(st, l);
  return true;
}

static void assign_region(la_state *st, tl_region *r);

/* The gather layout (rows; default on since the eighth session's H200 run, TILEC_GATHER_LAYOUT=0
 * off): a gather's index tiles are re-made in the load's layout.  The
 * index of `load(E[ids, 0 : BD])` is `ids` broadcast along the row; made in its own (i32: 4 a
 * vector) layout it had to be converted to the bf16 rows' one (8 a vector) through shared memory
 * (2 x 4096 x 4 bytes a program), and the converted registers, no longer one value per row,
 * turned the gather into one 2-byte access an element.  Re-made (the broadcast and its
 * expand_dims and load are single-use chain ops), every 16-byte group shares its row's id and
 * codegen keeps the vectors (emit_memory.c gather_vector_width). */
static bool gather_index_on(void) {
  return !tl_code_env_off("TILEC_GATHER_LAYOUT");
}

static void retarget_gather_indices(la_state *st, tl_op *o) {
  int32_t lid = vtype(st, o->res[0])->layout;
  tl_layout l = *tl_layout_at(st->f, lid);
  for (int k = 1; k < o->nopnd; k++) {
    int32_t a = o->opnd[k];
    if (is_tile(st, a) && vtype(st, a)->layout != lid && retarget(st, a, &l, false, 0)) retarget(st, a, &l, true, 0);
  }
}

/* A prologue B in its fragment layout (default on since the eighth session's H200 run;
 * TILEC_PROLOGUE_FRAG=0 stages it through shared memory as before). */
static bool prologue_frag_on(void) {
  return !tl_code_env_off("TILEC_PROLOGUE_FRAG");
}

/* TILEC_FRAG_SHARED_LOAD=1 (nineteenth session, not yet run on a GPU): the B-fragment retarget stops
 * at a non-gather prologue load that has several users (retarget above) instead of giving up and
 * staging B through shared memory. */
static bool frag_shared_load_on(void) {
  return tl_code_env_on("TILEC_FRAG_SHARED_LOAD");
}

/* Load op ld indexes a dim with a tile (a gather): its convert is no slot read (emit_prologue.c). */
static bool load_gathers(tl_func *f, const tl_op *ld) {
  for (int k = 1; k < ld->nopnd; k++)
    if (tl_val(f, ld->opnd[k])->type.kind == TL_KIND_TILE) return true;
  return false;
}

static bool is_frag_layout(la_state *st, int32_t lid) {
  for (int i = 0; i < st->nfrag; i++)
    if (st->frag_lids[i] == lid) return true;
  return false;
}

/* The A-fragment rule (tl_prologue_a_frag_on: opt-in, lib/schedule.h): a 16-bit A computed by an operand prologue, on
 * a dot whose warps all lie along M (wgmma's tiling, or mma.sync's 4x1 / 8x1), is computed straight in the accumulator
 * layout of its [M, K] shape -- which is the A fragment (c0..c3 of n-blocks 2k, 2k+1 are k-slice k's a0..a3): wgmma
 * then takes A from registers and mma.sync reads no staging.  That layout for dot D (accumulator layout l) when the
 * rule applies to it (K a multiple of 16), else false. */
static bool a_frag_layout(la_state *st, int32_t D, const tl_layout *l, tl_layout *fa) {
  tl_func *f = st->f;
  tl_op *o = tl_op_at(f, D);
  tl_dot_sched *bs = f->sched ? tl_sched_dot(f, D, false) : NULL;
  int32_t av = o->opnd[0];
  tl_type *at = &tl_val(f, av)->type;
  if (!bs || bs->prologue[0] <= 0 || !tl_prologue_a_frag_on() || l->kind != TL_LAYOUT_MMA || l->mma_wn != 1 ||
      l->mma_npair || at->kind != TL_KIND_TILE || at->rank != 2 || at->shape[0] != l->shape[0] || at->shape[1] % 16 ||
      tl_dtype_bytes((tl_dtype)at->dtype) != 2)
    return false;
  *fa = tl_layout_mma_split(at->shape[0], at->shape[1], st->warps, l->mma_wm);
  return fa->mma_wm == l->mma_wm && fa->mma_wn == 1 && !tl_layout_check(fa);
}

/* Before the forward walk: each [M, K] load of an A-fragment prologue starts in the fragment layout, so the elementwise
 * code after it (which takes its operands' layout) is computed there even where a value has several users (x * x,
 * where(x > 0, x, 0)), which the retarget at the dot cannot re-make. */
static void preassign_frag_loads(la_state *st) {
  tl_func *f = st->f;
  for (int32_t D = 0; D < f->ops.len; D++) {
    tl_op *o = tl_op_at(f, D);
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_dot || !o->nres) continue;
    tl_type *rt = &tl_val(f, o->res[0])->type;
    if (rt->rank != 2 || rt->shape[0] < 16 || rt->shape[1] < 8) continue;
    tl_layout l = dot_layout(f, D, rt->shape[0], rt->shape[1], st->warps), fa;
    if (!a_frag_layout(st, D, &l, &fa)) continue;
    int32_t loads[16];
    const char *why;
    int n = tl_prologue_loads(f, D, 0, loads, 16, &why);
    tl_type *at = &tl_val(f, o->opnd[0])->type;
    for (int i = 0; i < n; i++) {
      tl_op *ld = tl_op_at(f, loads[i]);
      tl_type *lt = &tl_val(f, ld->res[0])->type;
      if (load_gathers(f, ld) || lt->rank != 2 || lt->shape[0] != at->shape[0] || lt->shape[1] != at->shape[1]) continue;
      int32_t lid = intern(st, &fa);
      st->frag_load[loads[i]] = lid;
      if (!is_frag_layout(st, lid) && st->nfrag < 8) st->frag_lids[st->nfrag++] = lid;
    }
  }
}

static bool same_basis(const int32_t *a, const int32_t *b, int rank) {
  for (int d = 0; d < rank; d++)
    if (a[d] != b[d]) return false;
  return true;
}

/* Broadcasting a source in layout s to a result in layout l moves no data:
 * l projected onto the source shape has s's lane and warp bases, and each of
 * its register bases is zero or one of s's (codegen's free transfer). */
static bool broadcast_is_free(const tl_layout *s, const tl_layout *l, const int32_t *src_shape) {
  tl_layout proj = tl_layout_project(l, src_shape);
  if (proj.nwarp != s->nwarp || proj.rank != s->rank) return false;
  for (int i = 0; i < TL_LAYOUT_LANE_BITS; i++)
    if (!same_basis(proj.lane[i], s->lane[i], s->rank)) return false;
  for (int i = 0; i < proj.nwarp; i++)
    if (!same_basis(proj.warp[i], s->warp[i], s->rank)) return false;
  for (int i = 0; i < proj.nreg; i++) {
    if (tl_layout_basis_zero(proj.reg[i], proj.rank)) continue;
    bool found = false;
    for (int j = 0; j < s->nreg && !found; j++) found = same_basis(proj.reg[i], s->reg[j], s->rank);
    if (!found) return false;
  }
  return true;
}

static void assign_ew(la_state *st, tl_op *o) {
  int32_t res = o->res[0];
  int32_t chosen = -1;
  /* an A-fragment prologue's loads start in the fragment layout (preassign_frag_loads): whatever is computed from them
   * keeps it */
  for (int k = 0; st->frag_load && k < o->nopnd && chosen < 0; k++)
    if (is_tile(st, o->opnd[k]) && is_frag_layout(st, vtype(st, o->opnd[k])->layout)) chosen = o->opnd[k];
  /* strong first (a random mask that follows its first user last of those), then weak, then
   * rematerializable (those follow their consumer) */
  for (int k = 0; k < o->nopnd && chosen < 0; k++)
    if (is_tile(st, o->opnd[k]) && !is_weak(st, o->opnd[k], 0) && !is_remat(st, o->opnd[k], 0) &&
        !follows_first_user(st, o->opnd[k]))
      chosen = o->opnd[k];
  for (int k = 0; k < o->nopnd && chosen < 0; k++)
    if (is_tile(st, o->opnd[k]) && !is_weak(st, o->opnd[k], 0) && !is_remat(st, o->opnd[k], 0))
      chosen = o->opnd[k];
  int chosen_bytes = 0;
  for (int k = 0; st->rows && k < o->nopnd && chosen < 0; k++) /* none strong: the narrowest loads' */
    if (is_tile(st, o->opnd[k]) && !is_remat(st, o->opnd[k], 0)) {
      int b = weak_load_bytes(st, o->opnd[k], 0);
      if (b && (!chosen_bytes || b < chosen_bytes)) chosen_bytes = b;
    }
  for (int k = 0; chosen_bytes && k < o->nopnd && chosen < 0; k++)
    if (is_tile(st, o->opnd[k]) && !is_remat(st, o->opnd[k], 0) && weak_load_bytes(st, o->opnd[k], 0) == chosen_bytes)
      chosen = o->opnd[k];
  for (int k = 0; k < o->nopnd && chosen < 0; k++)
    if (is_tile(st, o->opnd[k]) && !is_remat(st, o->opnd[k], 0)) chosen = o->opnd[k];
  for (int k = 0; k < o->nopnd && chosen < 0; k++)
    if (is_tile(st, o->opnd[k])) chosen = o->opnd[k];
  int32_t lid = chosen >= 0 ? vtype(st, chosen)->layout : default_layout(st, vtype(st, res));
  vtype(st, res)->layout = lid;
  tl_layout l = *tl_layout_at(st->f, lid);
  for (int k = 0; k < o->nopnd; k++) {
    int32_t a = o->opnd[k];
    if (is_tile(st, a) && vtype(st, a)->layout != lid && retarget(st, a, &l, false, 0))
      retarget(st, a, &l, true, 0);
  }
}

static void assign_for(la_state *st, int32_t opid) {
  tl_func *f = st->f;
  tl_op *o = tl_op_at(f, opid);
  tl_region *body = &o->regions[0];
  int ncarried = o->nopnd - 3;
  /* Any number of carried values is valid IR (65 used to be an internal error). */
  int32_t *chosen = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(ncarried > 0 ? ncarried : 1));
  for (int i = 0; i < ncarried; i++) {
    int32_t init = o->opnd[3 + i];
    chosen[i] = is_tile(st, init) ? vtype(st, init)->layout : -1;
  }
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < ncarried; i++) {
      int32_t arg = body->args.data[1 + i];
      if (chosen[i] >= 0) vtype(st, arg)->layout = chosen[i];
    }
    assign_region(st, body);
    o = tl_op_at(f, opid);
    body = &o->regions[0];
    if (body->ops.len == 0) break;
    tl_op *y = tl_op_at(f, body->ops.data[body->ops.len - 1]);
    bool again = false;
    for (int i = 0; i < ncarried && i < y->nopnd; i++) {
      /* retargeted by a use in the body (retarget above: the carried scales), with its
       * initial and yielded values: the loop keeps that layout */
      int32_t arg = body->args.data[1 + i];
      if (chosen[i] >= 0 && vtype(st, arg)->layout != chosen[i]) chosen[i] = vtype(st, arg)->layout;
      int32_t yv = y->opnd[i];
      if (chosen[i] < 0 || !is_tile(st, yv) || vtype(st, yv)->layout == chosen[i]) continue;
      int32_t init = o->opnd[3 + i];
      tl_layout want = *tl_layout_at(f, vtype(st, yv)->layout);
      if (is_weak(st, init, 0)) {
        if (retarget(st, init, &want, false, 0)) retarget(st, init, &want, true, 0);
        chosen[i] = vtype(st, yv)->layout;
        again = true;
      }
    }
    if (!again) break;
  }
  for (int i = 0; i < ncarried && i < o->nres; i++)
    if (chosen[i] >= 0) vtype(st, o->res[i])->layout = chosen[i];
}

static void assign_op(la_state *st, int32_t opid) {
  tl_func *f = st->f;
  tl_op *o = tl_op_at(f, opid);
  int opc = o->opc;
  if (opc == TL_OP_for) {
    assign_for(st, opid);
    return;
  }
  if (opc == TL_OP_if) {
    for (int k = 0; k < o->nregions; k++) assign_region(st, &tl_op_at(f, opid)->regions[k]);
    o = tl_op_at(f, opid);
    tl_region *then_r = &o->regions[0];
    tl_op *y = then_r->ops.len ? tl_op_at(f, then_r->ops.data[then_r->ops.len - 1]) : NULL;
    for (int i = 0; i < o->nres; i++) {
      if (!is_tile(st, o->res[i])) continue;
      if (y && i < y->nopnd && is_tile(st, y->opnd[i])) vtype(st, o->res[i])->layout = vtype(st, y->opnd[i])->layout;
      else vtype(st, o->res[i])->layout = default_layout(st, vtype(st, o->res[i]));
    }
    return;
  }
  if (o->nres < 1 || !is_tile(st, o->res[0])) return;
  int32_t res = o->res[0];
  tl_type *rt = vtype(st, res);
  int32_t a0 = o->nopnd > 0 ? o->opnd[0] : -1;
  switch (opc) {
  case TL_OP_expand_dims: {
    tl_layout l = tl_layout_expand(vlayout(st, a0), o->axis);
    rt->layout = intern(st, &l);
    return;
  }
  case TL_OP_trans: {
    tl_layout l = tl_layout_trans(vlayout(st, a0));
    rt->layout = intern(st, &l);
    return;
  }
  case TL_OP_reshape: {
    tl_layout l = tl_layout_reshape(vlayout(st, a0), rt->rank, rt->shape);
    rt->layout = intern(st, &l);
    return;
  }
  case TL_OP_scan:
  case TL_OP_sort:
    rt->layout = vtype(st, a0)->layout;
    return;
  case TL_OP_argreduce:
  case TL_OP_reduce: {
    tl_layout l = tl_layout_slice(vlayout(st, a0), o->axis);
    l.origin = vtype(st, a0)->layout;
    rt->layout = intern(st, &l);
    return;
  }
  case TL_OP_broadcast: {
    const tl_layout *s = vlayout(st, a0);
    if (s->origin >= 0) {
      const tl_layout *p = tl_layout_at(f, s->origin);
      bool same_shape = p->rank == rt->rank;
      for (int d = 0; same_shape && d < rt->rank; d++) same_shape = p->shape[d] == rt->shape[d];
      if (same_shape) {
        tl_layout proj = tl_layout_project(p, vtype(st, a0)->shape);
        if (tl_layout_eq(&proj, s)) {
          rt->layout = s->origin;
          return;
        }
      }
    }
    if (s->origin >= 0) {
      /* a row statistic of one mma tile broadcast over another mma tile with
       * the same rows (attention's alpha[:, None] over acc): the mma layout of
       * the result with the origin's warp rows holds it for free */
      const tl_layout *p = tl_layout_at(f, s->origin);
      if (p->kind == TL_LAYOUT_MMA && rt->rank == 2 && rt->shape[0] >= 16 && rt->shape[1] >= 8) {
        tl_layout cand = tl_layout_mma_split(rt->shape[0], rt->shape[1], st->warps, p->mma_wm);
        if (cand.mma_wm == p->mma_wm && cand.mma_wn == p->mma_wn && broadcast_is_free(s, &cand, vtype(st, a0)->shape)) {
          rt->layout = intern(st, &cand);
          return;
        }
      }
    }
    rt->layout = default_layout(st, rt);
    tl_layout want = tl_layout_project(tl_layout_at(f, rt->layout), vtype(st, a0)->shape);
    if (retarget(st, a0, &want, false, 0)) retarget(st, a0, &want, true, 0);
    return;
  }
  case TL_OP_dot: {
    int32_t M = rt->shape[0], N = rt->shape[1];
    if (rt->rank != 2 || M < 16 || N < 8) {
      rt->layout = default_layout(st, rt); /* codegen reports the shape */
      return;
    }
    tl_layout l = dot_layout(f, opid, M, N, st->warps);
    int32_t bv = o->opnd[1];
    tl_value *bval = tl_val(f, bv);
    tl_dot_sched *bs = f->sched ? tl_sched_dot(f, opid, false) : NULL;
    if (is_tile(st, bv) && tl_dtype_bytes((tl_dtype)vtype(st, bv)->dtype) == 1 &&
        !(bval->def >= 0 && tl_op_at(f, bval->def)->opc == TL_OP_trans) && bs && bs->pipelined &&
        bs->streamed[1] && !tl_dot_wgmma_kn8(f, opid)) {
      /* 8-bit B kept [K][N] and streamed (swpipe): the column-paired
       * accumulator (layout.h).  swpipe does not stream it today (round 3,
       * docs/pipelines.md: the K-major case needs a register-lean form) */
      tl_layout pl = tl_layout_mma_pairs(M, N, st->warps, l.mma_wm);
      if (pl.mma_wm == l.mma_wm && pl.mma_wn == l.mma_wn) l = pl;
    }
    rt->layout = intern(st, &l);
    /* Default (TILEC_PROLOGUE_FRAG=0 off): a 16-bit B computed by an operand prologue
     * is computed straight in its mma.sync fragment registers (codegen packs
     * them, no staging store, barrier or ldmatrix: docs/pipelines.md "B in its
     * fragments") when its whole chain can be re-made in that layout */
    if (bs && bs->prologue[1] > 0 && prologue_frag_on() && is_tile(st, bv) && vtype(st, bv)->rank == 2 &&
        tl_dtype_bytes((tl_dtype)vtype(st, bv)->dtype) == 2) {
      tl_layout fb = tl_layout_mma_b(&l, vtype(st, bv)->shape[0]);
      int32_t leaves[8];
      const char *why = NULL;
      int nl = frag_shared_load_on() ? tl_prologue_loads(f, opid, 1, leaves, 8, &why) : 0;
      int keep = 0;
      for (int i = 0; i < nl; i++) { /* not a gather: its convert is a slot read (emit_prologue.c) */
        tl_op *ld = tl_op_at(f, leaves[i]);
        if (!load_gathers(f, ld) && st->uses[ld->res[0]] > 1) leaves[keep++] = leaves[i];
      }
      st->leaf_loads = leaves, st->nleaf = keep;
      if (fb.nreg && !tl_layout_check(&fb) && retarget(st, bv, &fb, false, 0)) retarget(st, bv, &fb, true, 0);
      st->leaf_loads = NULL, st->nleaf = 0;
    }
    tl_layout fa;
    if (a_frag_layout(st, opid, &l, &fa)) {
      int32_t av = o->opnd[0];
      st->invariant_loop = o->parent;
      if (vtype(st, av)->layout != intern(st, &fa) && retarget(st, av, &fa, false, 0)) retarget(st, av, &fa, true, 0);
      st->invariant_loop = -1;
      o = tl_op_at(f, opid);
    }
    int32_t acc = o->opnd[2];
    if (is_tile(st, acc) && vtype(st, acc)->layout != rt->layout && retarget(st, acc, &l, false, 0))
      retarget(st, acc, &l, true, 0);
    return;
  }
  case TL_OP_convert_layout:
    if (rt->layout < 0) rt->layout = vtype(st, a0)->layout;
    return;
  case TL_OP_rand: /* elementwise over its offsets (a mask that followed its first user keeps that layout in a
                     * loop's later rounds; phase B re-makes the offsets there) */
    if (st->rand_follow && rt->layout >= 0) return;
    rt->layout = is_tile(st, o->opnd[1]) ? vtype(st, o->opnd[1])->layout : default_layout(st, rt);
    return;
  default:
    break;
  }
  if (tl_opinfo_table[opc].flags & TL_EW) {
    assign_ew(st, o);
    return;
  }
  rt->layout = default_layout(st, rt); /* const, iota, splat, load */
  if (opc == TL_OP_load && st->frag_load && st->frag_load[opid] >= 0) rt->layout = st->frag_load[opid];
  if (opc == TL_OP_load && st->gather_index) retarget_gather_indices(st, o);
}

static void assign_region(la_state *st, tl_region *r) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    if (tl_op_at(st->f, id)->flags & TL_OPF_DEAD) continue;
    assign_op(st, id);
    tl_op *o = tl_op_at(st->f, id);
    for (int k = 0; st->seen && k < o->nopnd; k++) st->seen[o->opnd[k]] = true;
  }
}

/* ---- phase B: make every operand arrive in the layout its user needs ---- */

/* rows: a store of a transposed tile (`store(Y[..], trans(x))`: the K-major-B form's transpose,
 * lib/api/forms.c) stores in the coalesced layout of Y's view (16-byte vectors along its last
 * dimension), converted through shared memory, instead of in x's layout transposed, whose runs are
 * along the other dimension (one-element stores, a 32-byte sector each).  TILEC_STORE_TRANS=0: off
 * (measuring). */
static bool stored_trans_coalesced(la_state *st, const tl_op *o, int k) {
  if (!st->rows || k != o->nopnd - 1 || tl_code_env_off("TILEC_STORE_TRANS")) return false;
  int32_t d = tl_val(st->f, o->opnd[k])->def;
  return d >= 0 && tl_op_at(st->f, d)->opc == TL_OP_trans;
}

/* The layout operand k of op needs, or -1 for "any". */
static int32_t required_layout(la_state *st, int32_t opid, int k) {
  tl_func *f = st->f;
  tl_op *o = tl_op_at(f, opid);
  int32_t a = o->opnd[k];
  if (!is_tile(st, a)) return -1;
  switch (o->opc) {
  case TL_OP_broadcast: {
    tl_layout want = tl_layout_project(tl_layout_at(f, vtype(st, o->res[0])->layout), vtype(st, a)->shape);
    tl_layout have = *vlayout(st, a);
    if (tl_layout_eq(&want, &have) ||
        broadcast_is_free(&have, tl_layout_at(f, vtype(st, o->res[0])->layout), vtype(st, a)->shape))
      return vtype(st, a)->layout;
    return intern(st, &want);
  }
  case TL_OP_dot:
    return k == 2 && is_tile(st, o->res[0]) ? vtype(st, o->res[0])->layout : -1;
  case TL_OP_for:
    if (k < 3) return -1;
    return vtype(st, o->regions[0].args.data[1 + (k - 3)])->layout;
  case TL_OP_load:
    return k > 0 && o->nres ? vtype(st, o->res[0])->layout : -1;
  case TL_OP_store:
  case TL_OP_atomic: /* gather indices in the layout of the value stored */
    if (o->opc == TL_OP_store && stored_trans_coalesced(st, o, k)) return default_layout(st, vtype(st, a));
    return k > 0 && k + 1 < o->nopnd && is_tile(st, o->opnd[o->nopnd - 1]) ? vtype(st, o->opnd[o->nopnd - 1])->layout
                                                                            : -1;
  case TL_OP_rand:
    return k == 1 && o->nres ? vtype(st, o->res[0])->layout : -1;
  case TL_OP_yield: {
    if (o->parent < 0) return -1;
    tl_op *p = tl_op_at(f, o->parent);
    if (p->opc == TL_OP_for) return vtype(st, p->regions[0].args.data[1 + k])->layout;
    if (p->opc == TL_OP_if && k < p->nres) return vtype(st, p->res[k])->layout;
    return -1;
  }
  default:
    if ((tl_opinfo_table[o->opc].flags & TL_EW) && o->nres) return vtype(st, o->res[0])->layout;
    return -1;
  }
}

/* A copy of rematerializable value v in layout l (v itself when it already
 * has it), its chain cloned in front of position *pos of region r. */
static int32_t clone_remat(la_state *st, tl_region *r, int *pos, int32_t v, const tl_layout *l) {
  tl_func *f = st->f;
  int32_t lid = intern(st, l);
  if (vtype(st, v)->layout == lid) return v;
  tl_op src = *tl_op_at(f, tl_val(f, v)->def);
  int32_t opnd[8];
  if (src.nopnd > 8) TL_INTERNAL(f->ctx, "layout_assign: rematerialized op with %d operands", src.nopnd);
  for (int k = 0; k < src.nopnd; k++) {
    int32_t a = src.opnd[k];
    opnd[k] = a;
    if (!is_tile(st, a)) continue;
    tl_layout want = tl_layout_for_operand(l, &src, vtype(st, a)->shape);
    opnd[k] = clone_remat(st, r, pos, a, &want);
  }
  tl_type t = *vtype(st, v);
  t.layout = lid;
  int32_t nid = tl_op_clone(f, &src, opnd, &t);
  tl_region_insert(f, r, *pos, nid);
  (*pos)++;
  return tl_op_result(f, nid, 0);
}

/* Erase the pure ops whose results nobody uses any more (the originals of
 * rematerialized chains, conversions of them), until none is left. */
static void sweep_unused(tl_func *f, tl_region *r, const int32_t *uses, bool *changed) {
  for (int i = r->ops.len - 1; i >= 0; i--) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(f, id);
    if (o->flags & TL_OPF_DEAD) continue;
    for (int g = 0; g < o->nregions; g++) sweep_unused(f, &tl_op_at(f, id)->regions[g], uses, changed);
    o = tl_op_at(f, id);
    /* (elementwise ops are all pure) */
    bool removable = o->nres == 1 && o->nregions == 0 &&
                     (is_cheap_op(o->opc) || o->opc == TL_OP_expand_dims || o->opc == TL_OP_broadcast ||
                      o->opc == TL_OP_convert_layout || (tl_opinfo_table[o->opc].flags & TL_EW));
    if (removable && uses[o->res[0]] == 0) {
      tl_op_erase(f, r, i);
      *changed = true;
    }
  }
}

static void fix_region(la_state *st, tl_region *r) {
  tl_func *f = st->f;
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    if (tl_op_at(f, id)->flags & TL_OPF_DEAD) continue;
    int nopnd = tl_op_at(f, id)->nopnd;
    for (int k = 0; k < nopnd; k++) {
      int32_t want = required_layout(st, id, k);
      int32_t a = tl_op_at(f, id)->opnd[k];
      if (want < 0 || vtype(st, a)->layout == want) continue;
      tl_type t = *vtype(st, a);
      t.layout = want;
      tl_value *val = tl_val(f, a);
      int32_t nid;
      if (val->def >= 0 && !is_cheap_op(tl_op_at(f, val->def)->opc) && is_remat(st, a, 0)) {
        /* re-make the whole chain in the wanted layout, in front of the user */
        tl_layout wl = *tl_layout_at(f, want);
        int pos = i;
        int32_t nv = clone_remat(st, r, &pos, a, &wl);
        i = pos;
        tl_op_at(f, id)->opnd[k] = nv;
        continue;
      }
      if (val->def >= 0 && is_cheap_op(tl_op_at(f, val->def)->opc)) {
        tl_op src = *tl_op_at(f, val->def); /* clone: cheap in any layout */
        nid = tl_op_clone(f, &src, src.opnd, &t);
      } else {
        nid = tl_op_new(f, NULL, TL_OP_convert_layout, &a, 1, &t, 1, tl_op_at(f, id)->loc);
      }
      tl_region_insert(f, r, i, nid);
      i++;
      tl_op_at(f, id)->opnd[k] = tl_op_result(f, nid, 0);
    }
    tl_op *o = tl_op_at(f, id);
    for (int g = 0; g < o->nregions; g++) fix_region(st, &tl_op_at(f, id)->regions[g]);
  }
}

static bool has_dot(tl_func *f) {
  for (int i = 0; i < f->ops.len; i++)
    if (!(f->ops.data[i].flags & TL_OPF_DEAD) && f->ops.data[i].opc == TL_OP_dot) return true;
  return false;
}

/* TILEC_ROW_LAYOUT=0: measuring only, the rules of kernels with a dot everywhere (docs/rows.md) */
static bool row_rules_off(void) {
  return tl_code_env_off("TILEC_ROW_LAYOUT");
}

static bool has_big_dot(tl_func *f) {
  for (int i = 0; i < f->ops.len; i++) {
    tl_op *o = &f->ops.data[i];
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_dot || !o->nres) continue;
    tl_type *t = &tl_val(f, o->res[0])->type;
    if (t->kind == TL_KIND_TILE && t->rank == 2 && (int64_t)t->shape[0] * t->shape[1] >= 128 * 128)
      return true;
  }
  return false;
}

static bool layout_assign_run(tl_func *f, const tl_pass_opts *opts) {
  (void)opts;
  la_state st = {.f = f, .invariant_loop = -1};
  if (f->warps <= 0) f->warps = has_big_dot(f) ? 8 : 4;
  st.warps = f->warps;
  tl_layout_table *t = tl_layout_table_get(f);
  t->items.len = 0; /* (re)assign from scratch */
  t->warps = f->warps;
  for (int v = 0; v < f->values.len; v++) f->values.data[v].type.layout = -1;
  st.uses = tl_count_uses(f);
  if (has_dot(f) && tl_prologue_a_frag_on() && f->sched) {
    st.frag_load = tl_alloc(&f->ctx->arena, sizeof(int32_t) * ((size_t)f->ops.len + 1));
    for (int i = 0; i <= f->ops.len; i++) st.frag_load[i] = -1;
    preassign_frag_loads(&st);
  }
  st.rows = !has_dot(f) && !row_rules_off();
  st.rand_follow = !st.rows && has_dot(f) && rand_follow_on();
  bool any_rand = false; /* (a kernel without rand: nothing to follow, no walks for it) */
  for (int i = 0; i < f->ops.len && st.rand_follow && !any_rand; i++)
    any_rand = !(f->ops.data[i].flags & TL_OPF_DEAD) && f->ops.data[i].opc == TL_OP_rand;
  st.rand_follow = st.rand_follow && any_rand;
  st.gather_index = st.rows && gather_index_on();
  if (st.rows || st.rand_follow) {
    st.seen = tl_alloc(&f->ctx->arena, (size_t)f->values.len + 1);
    memset(st.seen, 0, (size_t)f->values.len + 1);
  }
  assign_region(&st, &f->body);
  fix_region(&st, &f->body);
  for (bool changed = true; changed;) {
    changed = false;
    sweep_unused(f, &f->body, tl_count_uses(f), &changed);
  }
  f->print_layouts = tl_layout_print_table;
  return true;
}

const tl_pass tl_pass_layout_assign = {
    "layout_assign",
    "requires verified tile IR; sets tile layouts + f->warps, inserts convert_layout; keeps semantics",
    layout_assign_run,
};
