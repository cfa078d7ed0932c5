/* load_ahead: requires verified IR after route_pipeline (f->pipeline); keeps semantics (a load only
 * reads; the copy issued in the last iteration reads past the loop's range, which the view's bounds
 * drop or which lands in the tensor unused); unless TILEC_LOAD_AHEAD=0 (on by default since the
 * twentieth session: H200 gemm_fp8_blockscale 0.824 / 0.778x cuBLAS at 4096^3 / 8192^3 against 0.809 /
 * 0.718, bit-identical results, bench/RESULTS.md), in a cutlass (wgmma) kernel's
 * main loop: each small load after the loop's dot (before any store, atomic, region or other dot)
 * that feeds no dot and whose view is the induction variable and loop-invariant values through
 * scalar index math is issued one iteration ahead where it stood -- the first before the loop, the
 * next under this iteration's dot -- and carried to the next iteration.  docs/pipelines.md
 * "Block-scaled fp8: the scales one k-step ahead".
 *
 * Why: gemm_fp8_blockscale's scales (SA[m0 : m0 + BM, kb], SW[n0 / 128, kb]) are read from global
 * memory every k-step, and the k-step's scale product waits for them after the group's wait: a
 * round trip to L2 exposed whenever the scales miss L1.  Loaded one k-step ahead (codegen's
 * emit_under.c issues them under the wgmma group, as before) the value a k-step uses arrived during
 * the previous k-step.  The hand-written form of exactly this
 * (bench/variants/gemm_fp8_blockscale_prefetch.tile) measured 0.834 / 0.761x cuBLAS at 4096^3 /
 * 8192^3 against the example's 0.802 / 0.720 (H200, eighteenth session).  Costs the carried
 * registers (capped at AHEAD_BYTES a thread). */
#include "carry_ahead.h"
#include "code_env.h"

enum { AHEAD_BYTES = 32 };

/* The position of loop body r's first live dot, or -1. */
static int first_dot(tl_func *f, const tl_region *r) {
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if (!(o->flags & TL_OPF_DEAD) && o->opc == TL_OP_dot) return i;
  }
  return -1;
}

/* One pass over region r in order (defs come before their uses), marking in dep what depends on a
 * marked value: 2 when a dot takes one, or a nested region uses one (not followed: taken as a dot);
 * 1 when something else does; 0 none. */
static int marks_reach_dot(tl_func *f, const tl_region *r, bool *dep) {
  int used = 0;
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if (o->flags & TL_OPF_DEAD) continue;
    bool d = false;
    for (int k = 0; k < o->nopnd && !d; k++) d = dep[o->opnd[k]];
    if (d && o->opc == TL_OP_dot) return 2;
    for (int k = 0; k < o->nregions; k++)
      if (marks_reach_dot(f, &o->regions[k], dep)) return 2;
    if (!d) continue;
    used = 1;
    for (int j = 0; j < o->nres; j++) dep[o->res[j]] = true;
  }
  return used;
}

/* Value v of loop body r reaches an operand of a dot through the body's ops (a dot operand is the
 * ring's to stream, never a carried register value: attention's V after its first dot). */
static bool feeds_dot(tl_func *f, const tl_region *r, int32_t v) {
  bool *dep = tl_alloc(&f->ctx->arena, (size_t)f->values.len + 1);
  for (int32_t i = 0; i <= f->values.len; i++) dep[i] = false;
  dep[v] = true;
  return marks_reach_dot(f, r, dep) == 2;
}

/* A thread's share of load o's bytes (a scalar load: its one element, read by every thread). */
static int64_t thread_bytes(tl_func *f, const tl_op *o, int threads) {
  const tl_type *t = &tl_val(f, o->res[0])->type;
  int64_t numel = t->kind == TL_KIND_TILE ? tl_type_numel(t) : 1;
  int64_t b = numel * tl_dtype_bytes((tl_dtype)t->dtype);
  return t->kind == TL_KIND_TILE ? (b + threads - 1) / threads : b;
}

/* Issues loop L's eligible loads ahead (apply false: only counts them); returns how many and their
 * bytes a thread. */
static int ahead_loop(tl_func *f, int32_t L, int threads, bool apply, int64_t *bytes_out) {
  int n = 0;
  int64_t bytes = 0;
  int at = first_dot(f, &tl_op_at(f, L)->regions[0]);
  for (int j = at + 1; at >= 0 && j < tl_op_at(f, L)->regions[0].ops.len; j++) {
    tl_region *body = &tl_op_at(f, L)->regions[0];
    int32_t ld = body->ops.data[j];
    tl_op *o = tl_op_at(f, ld);
    if (o->flags & TL_OPF_DEAD) continue;
    if (o->opc == TL_OP_store || o->opc == TL_OP_atomic || o->opc == TL_OP_dot || o->nregions > 0) break;
    if (o->opc != TL_OP_load || o->nres != 1 || feeds_dot(f, body, o->res[0])) continue;
    int64_t b = thread_bytes(f, o, threads);
    if (bytes + b > AHEAD_BYTES) continue;
    tl_ahead_chain c;
    bool uses_iv = false; /* a load the same every iteration: nothing to issue ahead */
    if (!tl_ahead_chain_of(f, L, ld, &c, &uses_iv) || !uses_iv) continue;
    if (apply) {
      int32_t next = tl_issue_ahead(f, L, ld, &c, j); /* where it stood: after the dot */
      if (next < 0) break;
      j = tl_pos_in(&tl_op_at(f, L)->regions[0], next);
    }
    n++;
    bytes += b;
  }
  *bytes_out = bytes;
  return n;
}

static bool run_load_ahead(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  if (f->pipeline != TL_PIPE_CUTLASS) return true;
  bool on = !tl_code_env_off("TILEC_LOAD_AHEAD");
  int threads = (f->warps > 0 ? f->warps : 4) * 32;
  int nloops = f->ops.len; /* (the loop ops that exist now; copies are added past them) */
  for (int32_t L = 0; L < nloops; L++) {
    tl_op *lo = tl_op_at(f, L);
    if ((lo->flags & TL_OPF_DEAD) || lo->opc != TL_OP_for || lo->nregions != 1 ||
        first_dot(f, &lo->regions[0]) < 0)
      continue;
    tl_loc loc = lo->loc;
    if (!on && !ex) continue;
    int64_t bytes = 0;
    int n = ahead_loop(f, L, threads, on, &bytes);
    if (ex && on && n) /* (said only where it does something: it is on in every cutlass kernel) */
      tl_sbuf_printf(ex, "load_ahead: kernel '%s': loop at %d:%d: %d load%s issued one iteration ahead (%lld bytes a thread carried)\n",
                     f->name, loc.line, loc.col, n, n == 1 ? "" : "s", (long long)bytes);
    else if (ex && n) /* off: said only where it would do something */
      tl_sbuf_printf(ex, "load_ahead: kernel '%s': loop at %d:%d: %d load%s could be issued one iteration ahead (%lld bytes a thread; off: TILEC_LOAD_AHEAD=0)\n",
                     f->name, loc.line, loc.col, n, n == 1 ? "" : "s", (long long)bytes);
  }
  return true;
}

const tl_pass tl_pass_load_ahead = {
    "load_ahead",
    "requires f->pipeline (after route_pipeline); keeps semantics (loads only read); TILEC_LOAD_AHEAD=1: a wgmma main loop's small loads after its dot issued one iteration ahead, carried",
    run_load_ahead,
};
