/* emit_sort.c: requires layouts; lowers `sort` along one axis with a bitonic
 * sorting network in shared memory: barrier, every thread stores the keys of
 * its elements (lib/sortkey.h: floats as order-preserving u32 keys, NaN one
 * key; integers as themselves) at their row-major offsets, barrier, then for
 * each of the log2(L) (log2(L) + 1) / 2 stages the threads share the
 * compare-exchanges of every line (thread t takes pairs t, t + threads, ...)
 * and meet at a barrier, then every thread reads back its result registers.
 * Equal keys are equal bits, so the result is the interpreter's (qsort)
 * exactly. */
#include "cg.h"
#include "sortkey.h"

typedef struct sort_ctx {
  cg *g;
  LLVMTypeRef kt;   /* i32 or i64 */
  int kb;           /* key bytes */
  bool is_unsigned; /* float keys, u8 */
  bool desc;
  int64_t len, inner;
} sort_ctx;

static LLVMValueRef kptr(cg *g, const sort_ctx *s, LLVMValueRef index) {
  return cg_scratch_ptr(g, LLVMBuildMul(g->B, index, cg_i32(g, s->kb), ""));
}


/* One compare-exchange stage (k, j) over pair p of the whole tile. */
static void exchange(cg *g, const sort_ctx *s, LLVMValueRef p, int64_t k, int64_t j) {
  LLVMBuilderRef B = g->B;
  int64_t half = s->len / 2;
  LLVMValueRef line = LLVMBuildUDiv(B, p, cg_i32(g, half), ""), q = LLVMBuildURem(B, p, cg_i32(g, half), "");
  LLVMValueRef i = LLVMBuildAdd(B, LLVMBuildMul(B, LLVMBuildUDiv(B, q, cg_i32(g, j), ""), cg_i32(g, 2 * j), ""),
                                LLVMBuildURem(B, q, cg_i32(g, j), ""), "");
  LLVMValueRef base = LLVMBuildAdd(B, LLVMBuildMul(B, LLVMBuildUDiv(B, line, cg_i32(g, s->inner), ""), cg_i32(g, s->len * s->inner), ""),
                                   LLVMBuildURem(B, line, cg_i32(g, s->inner), ""), "");
  LLVMValueRef ai = LLVMBuildAdd(B, base, LLVMBuildMul(B, i, cg_i32(g, s->inner), ""), "");
  LLVMValueRef al = LLVMBuildAdd(B, ai, cg_i32(g, j * s->inner), "");
  LLVMValueRef pa = kptr(g, s, ai), pl = kptr(g, s, al);
  LLVMValueRef a = LLVMBuildLoad2(B, s->kt, pa, ""), b = LLVMBuildLoad2(B, s->kt, pl, "");
  LLVMValueRef up = LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildAnd(B, i, cg_i32(g, k), ""), cg_i32(g, 0), "");
  if (s->desc) up = LLVMBuildNot(B, up, "");
  LLVMValueRef gt = LLVMBuildICmp(B, s->is_unsigned ? LLVMIntUGT : LLVMIntSGT, a, b, "");
  LLVMValueRef lt = LLVMBuildICmp(B, s->is_unsigned ? LLVMIntULT : LLVMIntSLT, a, b, "");
  LLVMValueRef swap = LLVMBuildSelect(B, up, gt, lt, "");
  LLVMBuildStore(B, LLVMBuildSelect(B, swap, b, a, ""), pa);
  LLVMBuildStore(B, LLVMBuildSelect(B, swap, a, b, ""), pl);
}

void cg_emit_sort(cg *g, tl_op *o) {
  cg_make_plan(g);
  tl_func *f = g->f;
  LLVMBuilderRef B = g->B;
  int32_t src = o->opnd[0], res = o->res[0];
  tl_type *st = &tl_val(f, src)->type, *rt = &tl_val(f, res)->type;
  tl_dtype dt = (tl_dtype)st->dtype;
  bool fl = tl_dtype_is_float(dt);
  sort_ctx s = {g, dt == TL_I64 ? g->i64 : g->i32, dt == TL_I64 ? 8 : 4, fl || dt == TL_U8, o->kind != 0, 0, 1};
  s.len = st->shape[o->axis];
  for (int d = o->axis + 1; d < st->rank; d++) s.inner *= st->shape[d];
  int64_t numel = tl_type_numel(st);
  if (numel * s.kb > 200 * 1024) cg_unsupported(g, "sort of a %lld-element tile (over 200 KiB of shared memory)", (long long)numel);
  const tl_layout *ls = cg_layout(g, src), *lr = cg_layout(g, res);
  cg_val *sv = cg_get(g, src);
  int32_t nr = tl_layout_nregs(lr);
  if (s.len == 1) { /* nothing moves */
    cg_emit_transfer(g, src, res, CG_MAP_ID, 0);
    return;
  }
  cg_val *dv = cg_new_val(g, res, nr);
  cg_scratch_use(g, (int)(numel * s.kb));
  /* 1. the keys */
  cg_barrier(g);
  for (int32_t r = 0; r < tl_layout_nregs(ls); r++) {
    if (tl_layout_canon_reg(ls, r) != r) continue;
    LLVMValueRef key;
    if (fl) {
      LLVMValueRef bits = LLVMBuildBitCast(B, cg_cast(g, sv->r[r], dt, TL_F32), g->i32, "");
      LLVMValueRef mag = LLVMBuildAnd(B, bits, cg_i32(g, 0x7FFFFFFF), "");
      LLVMValueRef nan = LLVMBuildICmp(B, LLVMIntUGT, mag, cg_i32(g, 0x7F800000), "");
      LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, bits, cg_i32(g, 0), "");
      key = LLVMBuildSelect(B, neg, LLVMBuildNot(B, bits, ""), LLVMBuildOr(B, bits, cg_i32(g, (int32_t)0x80000000u), ""), "");
      key = LLVMBuildSelect(B, nan, cg_i32(g, (int32_t)TL_SORT_NAN_KEY), key, "");
    } else {
      key = cg_cast(g, sv->r[r], dt, dt == TL_I64 ? TL_I64 : TL_I32);
    }
    LLVMBuildStore(B, key, kptr(g, &s, cg_flat_index(g, st->layout, r, st->rank, st->shape, NULL)));
  }
  cg_barrier(g);
  /* 2. the network: per stage, a loop of the threads over the pairs */
  int warps = f->warps > 0 ? f->warps : 4, threads = warps * 32;
  LLVMValueRef tid = LLVMBuildAdd(B, g->lane, LLVMBuildMul(B, g->warp, cg_i32(g, 32), ""), "");
  int64_t pairs = numel / 2;
  for (int64_t k = 2; k <= s.len; k <<= 1)
    for (int64_t j = k >> 1; j > 0; j >>= 1) {
      LLVMBasicBlockRef pre = LLVMGetInsertBlock(B);
      LLVMBasicBlockRef hdr = LLVMAppendBasicBlockInContext(g->C, g->fn, "sort.stage");
      LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "sort.pair");
      LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->C, g->fn, "sort.next");
      LLVMBuildBr(B, hdr);
      LLVMPositionBuilderAtEnd(B, hdr);
      LLVMValueRef p = LLVMBuildPhi(B, g->i32, "pair");
      LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, p, cg_i32(g, pairs), ""), body, done);
      LLVMPositionBuilderAtEnd(B, body);
      exchange(g, &s, p, k, j);
      LLVMValueRef pn = LLVMBuildAdd(B, p, cg_i32(g, threads), "");
      LLVMBasicBlockRef body_end = LLVMGetInsertBlock(B);
      LLVMBuildBr(B, hdr);
      LLVMValueRef pv[2] = {tid, pn};
      LLVMBasicBlockRef pb[2] = {pre, body_end};
      LLVMAddIncoming(p, pv, pb, 2);
      LLVMPositionBuilderAtEnd(B, done);
      cg_barrier(g);
    }
  /* 3. read back */
  for (int32_t r = 0; r < nr; r++) {
    int32_t cr = tl_layout_canon_reg(lr, r);
    if (cr != r) {
      dv->r[r] = dv->r[cr];
      continue;
    }
    LLVMValueRef key = LLVMBuildLoad2(B, s.kt, kptr(g, &s, cg_flat_index(g, rt->layout, r, rt->rank, rt->shape, NULL)), "");
    if (fl) {
      LLVMValueRef isnan = LLVMBuildICmp(B, LLVMIntEQ, key, cg_i32(g, (int32_t)TL_SORT_NAN_KEY), "");
      LLVMValueRef pos = LLVMBuildICmp(B, LLVMIntSLT, key, cg_i32(g, 0), ""); /* top bit set: a non-negative float */
      LLVMValueRef bits = LLVMBuildSelect(B, pos, LLVMBuildAnd(B, key, cg_i32(g, 0x7FFFFFFF), ""), LLVMBuildNot(B, key, ""), "");
      bits = LLVMBuildSelect(B, isnan, cg_i32(g, (int32_t)TL_SORT_CANON_NAN), bits, "");
      dv->r[r] = cg_cast(g, LLVMBuildBitCast(B, bits, g->f32, ""), TL_F32, dt);
    } else {
      dv->r[r] = cg_cast(g, key, dt == TL_I64 ? TL_I64 : TL_I32, dt);
    }
  }
  cg_barrier(g);
}
