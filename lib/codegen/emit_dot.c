/* emit_dot.c: requires the accumulator and result in the mma layout
 * (layout_assign); lowers dot(a[M,K], b[K,N], acc) to tensor cores:
 *   - a is staged in shared memory as [M][K] and b as [N][K] (K contiguous),
 *     or as [K][N] when b's registers run along N (then ldmatrix .trans),
 *     rows padded by 16 bytes so the 8 row addresses of an ldmatrix fall in
 *     different banks;
 *   - fragments are read with ldmatrix.sync.aligned.m8n8.x4 (.x2 for a lone
 *     8-column block of b);
 *   - mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16} (sm_80+), or
 *     m16n8k32 .e4m3/.e5m2 (sm_89+; b always [N][K] since ldmatrix .trans
 *     moves 16-bit elements only).
 * The warp tiling is the one of the mma layout: warp bits over M first
 * (16 rows each), then N (8 columns each); repeats in registers. */
#include <stdio.h>
#include <string.h>

#include "cg.h"

static LLVMValueRef smem_addr32(cg *g, LLVMValueRef byte_off) {
  return LLVMBuildTrunc(g->B, LLVMBuildPtrToInt(g->B, cg_smem_ptr(g, byte_off), g->i64, ""), g->i32, "");
}

/* Store every element of tile v at (row, col) -> off + row*pitch + col*eb,
 * where (row, col) are the tile coords, swapped when `swap`. */
static void stage(cg *g, int32_t v, int off, int pitch, int eb, bool swap) {
  tl_type *t = &tl_val(g->f, v)->type;
  const tl_layout *l = cg_layout(g, v);
  cg_val *x = cg_get(g, v);
  for (int32_t r = 0; r < tl_layout_nregs(l); r++) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    LLVMValueRef c0 = cg_coord(g, t->layout, r, 0), c1 = cg_coord(g, t->layout, r, 1);
    LLVMValueRef row = swap ? c1 : c0, col = swap ? c0 : c1;
    LLVMValueRef o = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, row, cg_i32(g, pitch), ""),
                                  LLVMBuildMul(g->B, col, cg_i32(g, eb), ""), "");
    o = LLVMBuildAdd(g->B, o, cg_i32(g, off), "");
    LLVMBuildStore(g->B, x->r[r], cg_smem_ptr(g, o));
  }
}

/* ldmatrix .x4 (or .x2): returns the i32 registers in out[]. */
static void ldmatrix(cg *g, LLVMValueRef addr32, int nmat, bool trans, LLVMValueRef *out) {
  char text[128];
  snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [$%d];", nmat,
           trans ? ".trans" : "", nmat == 4 ? "$0,$1,$2,$3" : "$0,$1", nmat);
  const char *cons = nmat == 4 ? "=r,=r,=r,=r,r" : "=r,=r,r";
  LLVMTypeRef w[4] = {g->i32, g->i32, g->i32, g->i32};
  LLVMTypeRef st = LLVMStructTypeInContext(g->C, w, (unsigned)nmat, 0);
  LLVMValueRef r = cg_asm(g, st, text, cons, &addr32, 1, true);
  for (int i = 0; i < nmat; i++) out[i] = LLVMBuildExtractValue(g->B, r, (unsigned)i, "");
}

void cg_emit_dot(cg *g, tl_op *o) {
  tl_func *f = g->f;
  int32_t a = o->opnd[0], b = o->opnd[1], accv = o->opnd[2], res = o->res[0];
  tl_type *at = &tl_val(f, a)->type, *bt = &tl_val(f, b)->type, *rt = &tl_val(f, res)->type;
  if (at->kind != TL_KIND_TILE || bt->kind != TL_KIND_TILE || at->rank != 2 || bt->rank != 2)
    cg_unsupported(g, "dot of operands that are not 2-D tiles");
  int32_t M = at->shape[0], K = at->shape[1], N = bt->shape[1];
  tl_dtype adt = (tl_dtype)at->dtype, bdt = (tl_dtype)bt->dtype;
  const char *ty, *tyb;
  int eb, kstep;
  bool fp8 = (adt == TL_F8E4M3 || adt == TL_F8E5M2) && (bdt == TL_F8E4M3 || bdt == TL_F8E5M2);
  if (adt != bdt && !fp8) cg_unsupported(g, "dot of %s by %s (cast one operand)", tl_dtype_name(adt), tl_dtype_name(bdt));
  tyb = bdt == TL_F8E4M3 ? "e4m3" : "e5m2";
  if (adt == TL_BF16 || adt == TL_F16) {
    ty = tyb = adt == TL_BF16 ? "bf16" : "f16";
    eb = 2;
    kstep = 16;
  } else if (adt == TL_F8E4M3 || adt == TL_F8E5M2) {
    if (g->sm < 89) cg_unsupported(g, "dot on %s needs sm_89 or newer (mma.sync m16n8k32)", tl_dtype_name(adt));
    ty = adt == TL_F8E4M3 ? "e4m3" : "e5m2";
    eb = 1;
    kstep = 32;
  } else {
    cg_unsupported(g, "dot on %s operands (tensor cores take bf16, f16, f8e4m3, f8e5m2)", tl_dtype_name(adt));
  }
  if (rt->dtype != TL_F32) cg_unsupported(g, "dot accumulating in %s (only f32)", tl_dtype_name((tl_dtype)rt->dtype));
  if (M < 16 || N < 8 || K < kstep)
    cg_unsupported(g, "dot of shape %dx%dx%d (needs M >= 16, N >= 8, K >= %d)", M, N, K, kstep);
  const tl_layout *lc = cg_layout(g, res);
  if (lc->kind != TL_LAYOUT_MMA || tl_val(f, accv)->type.layout != rt->layout)
    TL_INTERNAL(g->ctx, "codegen: dot result/accumulator not in the mma layout");
  int wm = lc->mma_wm, wn = lc->mma_wn;
  int mrep = M / (16 * wm), nrep = N / (8 * wn);
  int lognrep = 0;
  while ((1 << lognrep) < nrep) lognrep++;
  int logwm = 0;
  while ((1 << logwm) < wm) logwm++;

  /* shared memory plan */
  const tl_layout *lb = cg_layout(g, b);
  bool b_kn = eb == 2 && lb->nreg > 0 && lb->reg[0][1] != 0; /* registers run along N: keep [K][N] */
  int pitch_a = K * eb + 16;
  int pitch_b = (b_kn ? N : K) * eb + 16;
  int off_b = M * pitch_a;
  int total = off_b + (b_kn ? K : N) * pitch_b;
  if (total > 227 * 1024) cg_unsupported(g, "dot staging needs %d bytes of shared memory", total);
  cg_use_smem(g, total);
  cg_barrier(g);
  stage(g, a, 0, pitch_a, eb, false);
  stage(g, b, off_b, pitch_b, eb, !b_kn);
  cg_barrier(g);

  /* per-lane parts of the ldmatrix addresses: matrix m = lane / 8, row r = lane % 8 */
  LLVMValueRef mat = LLVMBuildLShr(g->B, g->lane, cg_i32(g, 3), "");
  LLVMValueRef row8 = LLVMBuildAnd(g->B, g->lane, cg_i32(g, 7), "");
  LLVMValueRef m_lo = LLVMBuildAnd(g->B, mat, cg_i32(g, 1), "");
  LLVMValueRef m_hi = LLVMBuildLShr(g->B, mat, cg_i32(g, 1), "");
  LLVMValueRef wmi = LLVMBuildAnd(g->B, g->warp, cg_i32(g, wm - 1), "");
  LLVMValueRef wni = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, g->warp, cg_i32(g, logwm), ""), cg_i32(g, wn - 1), "");
  int mk = 16 / eb; /* elements per 16-byte matrix row */

  cg_val *acc = cg_get(g, accv);
  int32_t nregs = tl_layout_nregs(lc);
  cg_val *d = cg_new_val(g, res, nregs);
  for (int32_t r = 0; r < nregs; r++) d->r[r] = acc->r[r];

  char mma[160];
  snprintf(mma, sizeof mma,
           "mma.sync.aligned.m16n8k%d.row.col.f32.%s.%s.f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};",
           kstep, ty, tyb);
  LLVMTypeRef f4[4] = {g->f32, g->f32, g->f32, g->f32};
  LLVMTypeRef f4t = LLVMStructTypeInContext(g->C, f4, 4, 0);
  for (int32_t kk = 0; kk < K / kstep; kk++) {
    /* A fragments: matrices (rows 0-7 | 8-15) x (k 0..mk-1 | mk..2mk-1) */
    LLVMValueRef afr[16][4];
    if (mrep > 16) cg_unsupported(g, "dot with %d row blocks per warp (at most 16)", mrep);
    for (int mi = 0; mi < mrep; mi++) {
      LLVMValueRef row = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, wmi, cg_i32(g, 16), ""),
                                      cg_i32(g, mi * 16 * wm), "");
      row = LLVMBuildAdd(g->B, row, LLVMBuildAdd(g->B, row8, LLVMBuildMul(g->B, m_lo, cg_i32(g, 8), ""), ""), "");
      LLVMValueRef col = LLVMBuildAdd(g->B, cg_i32(g, kk * kstep), LLVMBuildMul(g->B, m_hi, cg_i32(g, mk), ""), "");
      LLVMValueRef off = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, row, cg_i32(g, pitch_a), ""),
                                      LLVMBuildMul(g->B, col, cg_i32(g, eb), ""), "");
      ldmatrix(g, smem_addr32(g, off), 4, false, afr[mi]);
    }
    for (int ni = 0; ni < nrep; ni += 2) {
      int nmat = ni + 1 < nrep ? 4 : 2;
      /* matrices: (ni, k lo), (ni, k hi), (ni+1, k lo), (ni+1, k hi) */
      LLVMValueRef nblk = LLVMBuildAdd(g->B, cg_i32(g, ni), m_hi, "");
      LLVMValueRef n0 = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, wni, cg_i32(g, 8), ""),
                                     LLVMBuildMul(g->B, nblk, cg_i32(g, 8 * wn), ""), "");
      LLVMValueRef off;
      if (!b_kn) {
        LLVMValueRef n = LLVMBuildAdd(g->B, n0, row8, "");
        LLVMValueRef k = LLVMBuildAdd(g->B, cg_i32(g, kk * kstep), LLVMBuildMul(g->B, m_lo, cg_i32(g, mk), ""), "");
        off = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, n, cg_i32(g, pitch_b), ""), LLVMBuildMul(g->B, k, cg_i32(g, eb), ""), "");
      } else {
        LLVMValueRef k = LLVMBuildAdd(g->B, cg_i32(g, kk * kstep),
                                      LLVMBuildAdd(g->B, row8, LLVMBuildMul(g->B, m_lo, cg_i32(g, 8), ""), ""), "");
        off = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, k, cg_i32(g, pitch_b), ""), LLVMBuildMul(g->B, n0, cg_i32(g, eb), ""), "");
      }
      off = LLVMBuildAdd(g->B, off, cg_i32(g, off_b), "");
      LLVMValueRef bfr[4];
      ldmatrix(g, smem_addr32(g, off), nmat, b_kn, bfr);
      for (int h = 0; h < nmat / 2; h++) {
        int nj = ni + h;
        for (int mi = 0; mi < mrep; mi++) {
          int32_t base = (mi << (2 + lognrep)) | (nj << 2);
          LLVMValueRef args[14];
          for (int q = 0; q < 4; q++) args[q] = afr[mi][q];
          args[4] = bfr[2 * h];
          args[5] = bfr[2 * h + 1];
          for (int q = 0; q < 4; q++) args[6 + q] = d->r[base + q];
          LLVMValueRef out = cg_asm(g, f4t, mma, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", args, 10, false);
          for (int q = 0; q < 4; q++) d->r[base + q] = LLVMBuildExtractValue(g->B, out, (unsigned)q, "");
        }
      }
    }
  }
}
