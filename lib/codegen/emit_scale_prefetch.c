/* emit_scale_prefetch.c: requires emit_under.c's loads just issued under a wgmma group (a
 * block-scaled GEMM's scales); keeps every value (it adds hints only); with
 * TILEC_SCALE_PREFETCH=D (1..64 iterations; unset or 0: off) emits beside each such load whose
 * indices are index math of the loop's iv an L1 prefetch of the view the same load reads D
 * iterations later (cg_emit_prefetch_l1: masked to the tensor, so nothing past its end); in a
 * persistent warp-specialized consumer (no cluster, loop bounds the same in every tile) also, in
 * the last D iterations, with TILEC_SCALE_PREFETCH_NEXT=1, those of its next tile's first D.
 *
 * Why: gemm_fp8_blockscale's scales (SA[m0 : m0 + 128, kb], SW[n0 / 128, kb]) are 4-byte loads
 * from global by every consumer thread each k-step.  Consecutive k-steps read consecutive words
 * of a row, so a thread's load misses L1 once every 8 k-steps (a new 32-byte sector) and then
 * waits a round trip to L2 while the TMA ring streams ~9 TB/s through the same L2-to-SM path;
 * all 8 consumer warps miss at the same k-step, so neither warpgroup can issue its next group
 * (docs/pipelines.md "Block-scaled fp8: the scales' L1 misses").  The next k-step's scales
 * carried in registers (bench/variants/gemm_fp8_blockscale_prefetch.tile) did not help: one
 * k-step (~1000 cycles) is less than that round trip.  A prefetch D >= 8 k-steps ahead brings
 * each sector into L1 about 8000 cycles before its first load, and holds no register.  The next
 * tile's part removes the one miss a tile left (its rows' first sector: 1 in 32 k-steps at K 4096);
 * a switch of its own because with it ptxas 13.0 schedules the scale loads above the group's
 * WARPGROUP.ARRIVE (the placement the eleventh session measured at 0.90-0.95x), without it after
 * the first QGMMA as before. */
#include <stdlib.h>

#include "cg.h"
#include "code_env.h"
#include "load_order.h"
#include "ring.h"

static int prefetch_distance(void) {
  const char *e = tl_code_env("TILEC_SCALE_PREFETCH");
  int d = e ? atoi(e) : 0;
  return d < 0 ? 0 : d > 64 ? 64 : d;
}

/* Scalar v of loop L's body can be computed at another iteration by cg_remat: the iv, a value
 * from outside the loop, or index math of such values (no load: its value would be read twice).
 * *iv: it depends on the iv. */
static bool remat_ok(tl_func *f, int32_t v, int32_t L, bool *iv, int depth) {
  if (v == tl_op_at(f, L)->regions[0].args.data[0]) return *iv = true;
  if (tl_defined_outside(f, v, L)) return true;
  tl_value *x = tl_val(f, v);
  if (depth > 32 || x->def < 0 || x->type.kind != TL_KIND_SCALAR) return false;
  tl_op *d = tl_op_at(f, x->def);
  if (d->opc == TL_OP_const) return true;
  if (!tl_is_index_math(f, x->def)) return false;
  for (int k = 0; k < d->nopnd; k++)
    if (!remat_ok(f, d->opnd[k], L, iv, depth + 1)) return false;
  return true;
}

/* The L1 prefetch of load o's view with loop L's iv at iv_sub (the iv register's type) and the
 * values outside the loop as bound now, where `on` (i1, NULL: always). */
static void prefetch_at(cg *g, int32_t L, tl_op *o, LLVMValueRef iv_sub, LLVMValueRef on) {
  int rank = tl_val(g->f, o->opnd[0])->type.rank;
  LLVMValueRef at[TL_MAX_RANK];
  cg_val saved[TL_MAX_RANK];
  for (int d = 0; d < rank; d++) at[d] = cg_remat(g, o->opnd[1 + d], L, iv_sub);
  for (int d = 0; d < rank; d++) saved[d] = g->vals[o->opnd[1 + d]];
  for (int d = 0; d < rank; d++) {
    g->vals[o->opnd[1 + d]].r = &at[d];
    g->vals[o->opnd[1 + d]].n = 1;
  }
  cg_emit_prefetch_l1(g, o, on);
  for (int d = rank - 1; d >= 0; d--) g->vals[o->opnd[1 + d]] = saved[d];
}

/* The ring of loop L when its consumer knows its next tile (a persistent warp-specialized kernel
 * without clusters, loop bounds the same in every tile), else NULL. */
static cg_ring *next_tile_ring(cg *g, int32_t L) {
  cg_plan *p = g->plan;
  if (!p->ws || !p->persist || p->cluster || !tl_code_env_on("TILEC_SCALE_PREFETCH_NEXT")) return NULL;
  tl_op *lo = tl_op_at(g->f, L);
  for (int k = 0; k < 3; k++)
    if (tl_depends_on_program_id(g->f, lo->opnd[k])) return NULL;
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == L && p->rings[i].pptv) return &p->rings[i];
  return NULL;
}

/* The first D iterations of the consumer's next tile, prefetched by this tile's last D: at iteration
 * j >= n - D, the loads of the next tile's iteration j + D - n (its program ids: the body's scalars
 * before the loop emitted again with them, as tile_prefetch.c does; this tile's put back). */
static void prefetch_next_tile(cg *g, int32_t L, cg_ring *R, const int32_t *ids, int n, int D, LLVMValueRef phi,
                               LLVMValueRef reg) {
  tl_func *f = g->f;
  tl_op *lo = tl_op_at(f, L);
  if (!LLVMIsAPHINode(phi) || LLVMCountIncoming(phi) < 1) return;
  /* what is the same in every iteration goes to the loop's preheader (the phi's first incoming
   * block): the next tile, its program ids (two divisions each), its scalars, the trip count */
  LLVMBasicBlockRef here = LLVMGetInsertBlock(g->B), pre = LLVMGetIncomingBlock(phi, 0);
  LLVMPositionBuilderBefore(g->B, LLVMGetBasicBlockTerminator(pre));
  LLVMValueRef t = LLVMBuildLoad2(g->B, g->i32, R->pptv, "");
  LLVMValueRef step_t = cg_sreg(g, "nctaid", 0);
  if (g->pp_wg) step_t = LLVMBuildShl(g->B, step_t, cg_i32(g, 1), ""); /* (ping-pong: every other tile) */
  LLVMValueRef tn = LLVMBuildAdd(g->B, t, step_t, "tile.next");
  LLVMValueRef tile_on = LLVMBuildICmp(g->B, LLVMIntULT, tn, R->ppnt, "");
  LLVMValueRef lo64 = cg_to_i64(g, cg_get(g, lo->opnd[0])->r[0]);
  LLVMValueRef step64 = cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]);
  LLVMValueRef shift = LLVMBuildMul(g->B, step64, LLVMBuildSub(g->B, cg_i64(g, D), cg_ws_trip_count(g, R), ""), "");
  LLVMValueRef pid_now[3] = {g->pid[0], g->pid[1], g->pid[2]}, pid_next[3];
  cg_tile_pids(g, tn, pid_next);
  for (int d = 0; d < 3; d++) g->pid[d] = pid_next[d];
  tl_region *body = &f->body;
  int nb = 0;
  while (nb < body->ops.len && body->ops.data[nb] != L) nb++;
  cg_val *saved = tl_alloc(&g->ctx->arena, sizeof *saved * (size_t)(nb + 1));
  bool *redone = tl_alloc(&g->ctx->arena, sizeof *redone * (size_t)(nb + 1));
  for (int i = 0; i < nb; i++) {
    tl_op *o = tl_op_at(f, body->ops.data[i]);
    redone[i] = !(o->flags & TL_OPF_DEAD) && o->nres == 1 && cg_ws_scalar(f, o->res[0]);
    if (!redone[i]) continue;
    saved[i] = g->vals[o->res[0]];
    cg_emit_op(g, body->ops.data[i]);
  }
  LLVMPositionBuilderAtEnd(g->B, here);
  /* this iteration j prefetches the next tile's j + D - n where that is >= 0 */
  LLVMValueRef x = LLVMBuildAdd(g->B, phi, shift, "");
  LLVMValueRef on = LLVMBuildAnd(g->B, tile_on, LLVMBuildICmp(g->B, LLVMIntSGE, x, lo64, ""), "");
  LLVMValueRef iv_next = LLVMTypeOf(reg) == g->i64 ? x : LLVMBuildTrunc(g->B, x, LLVMTypeOf(reg), "");
  for (int i = 0; i < n; i++) prefetch_at(g, L, tl_op_at(f, ids[i]), iv_next, on);
  for (int i = nb - 1; i >= 0; i--)
    if (redone[i]) g->vals[tl_op_at(f, body->ops.data[i])->res[0]] = saved[i];
  for (int d = 0; d < 3; d++) g->pid[d] = pid_now[d];
}

void cg_emit_scale_prefetch(cg *g, int32_t L, const int32_t *ids, int n) {
  int D = prefetch_distance();
  if (!D || !n) return;
  tl_func *f = g->f;
  int32_t *fit = tl_alloc(&g->ctx->arena, sizeof(int32_t) * (size_t)n);
  int nfit = 0;
  for (int i = 0; i < n; i++) {
    tl_op *o = tl_op_at(f, ids[i]);
    int rank = tl_val(f, o->opnd[0])->type.rank;
    if (rank > TL_MAX_RANK || o->nopnd < 1 + rank) continue;
    bool iv = false, ok = true;
    for (int d = 0; d < rank && ok; d++)
      ok = tl_val(f, o->opnd[1 + d])->type.kind == TL_KIND_SCALAR && remat_ok(f, o->opnd[1 + d], L, &iv, 0);
    if (ok && iv) fit[nfit++] = ids[i]; /* (not iv: the same address each iteration, nothing ahead) */
  }
  if (!nfit) return;
  tl_op *lo = tl_op_at(f, L);
  LLVMValueRef reg, phi = cg_iv_phi(g, L, &reg);
  LLVMValueRef step64 = cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]);
  LLVMValueRef later = LLVMBuildAdd(g->B, phi, LLVMBuildMul(g->B, step64, cg_i64(g, D), ""), "");
  if (LLVMTypeOf(reg) != g->i64) later = LLVMBuildTrunc(g->B, later, LLVMTypeOf(reg), "");
  for (int i = 0; i < nfit; i++) prefetch_at(g, L, tl_op_at(f, fit[i]), later, NULL);
  cg_ring *R = next_tile_ring(g, L);
  if (R) prefetch_next_tile(g, L, R, fit, nfit, D, phi, reg);
}
