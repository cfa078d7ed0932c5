/* emit_scale_prefetch.c: requires emit_under.c's loads just issued under a wgmma group (a
 * block-scaled GEMM's scales); keeps every value (it adds hints only); with
 * TILEC_SCALE_PREFETCH=D (1..64 iterations; unset or 0: off) emits beside each such load whose
 * indices are index math of the loop's iv an L1 prefetch of the view the same load reads D
 * iterations later (cg_emit_prefetch_l1: masked to the tensor, so nothing past its end).
 *
 * Why: gemm_fp8_blockscale's scales (SA[m0 : m0 + 128, kb], SW[n0 / 128, kb]) are 4-byte loads
 * from global by every consumer thread each k-step.  Consecutive k-steps read consecutive words
 * of a row, so a thread's load misses L1 once every 8 k-steps (a new 32-byte sector) and then
 * waits a round trip to L2 while the TMA ring streams ~9 TB/s through the same L2-to-SM path;
 * all 8 consumer warps miss at the same k-step, so neither warpgroup can issue its next group
 * (docs/pipelines.md "Block-scaled fp8: the scales' L1 misses").  The next k-step's scales
 * carried in registers (bench/variants/gemm_fp8_blockscale_prefetch.tile) did not help: one
 * k-step (~1000 cycles) is less than that round trip.  A prefetch D >= 8 k-steps ahead brings
 * each sector into L1 about 8000 cycles before its first load, and holds no register. */
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

void cg_emit_scale_prefetch(cg *g, int32_t L, const int32_t *ids, int n) {
  int D = prefetch_distance();
  if (!D || !n) return;
  tl_func *f = g->f;
  tl_op *lo = tl_op_at(f, L);
  LLVMValueRef reg, phi = cg_iv_phi(g, L, &reg);
  LLVMValueRef step = cg_get(g, lo->opnd[2])->r[0];
  if (LLVMTypeOf(step) != g->i64) step = LLVMBuildSExt(g->B, step, g->i64, "");
  LLVMValueRef later = LLVMBuildAdd(g->B, phi, LLVMBuildMul(g->B, step, cg_i64(g, D), ""), "");
  if (LLVMTypeOf(reg) != g->i64) later = LLVMBuildTrunc(g->B, later, LLVMTypeOf(reg), "");
  for (int i = 0; i < n; i++) {
    tl_op *o = tl_op_at(f, ids[i]);
    int rank = tl_val(f, o->opnd[0])->type.rank;
    if (rank > TL_MAX_RANK || o->nopnd < 1 + rank) continue;
    bool iv = false, ok = true;
    for (int d = 0; d < rank && ok; d++)
      ok = tl_val(f, o->opnd[1 + d])->type.kind == TL_KIND_SCALAR && remat_ok(f, o->opnd[1 + d], L, &iv, 0);
    if (!ok || !iv) continue; /* (the same address each iteration: nothing to fetch ahead) */
    LLVMValueRef at[TL_MAX_RANK];
    cg_val saved[TL_MAX_RANK];
    for (int d = 0; d < rank; d++) at[d] = cg_remat(g, o->opnd[1 + d], L, later);
    for (int d = 0; d < rank; d++) saved[d] = g->vals[o->opnd[1 + d]];
    for (int d = 0; d < rank; d++) {
      g->vals[o->opnd[1 + d]].r = &at[d];
      g->vals[o->opnd[1 + d]].n = 1;
    }
    cg_emit_prefetch_l1(g, o);
    for (int d = rank - 1; d >= 0; d--) g->vals[o->opnd[1 + d]] = saved[d];
  }
}
