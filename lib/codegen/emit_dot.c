/* emit_dot.c: requires the accumulator and result in the mma layout
 * (layout_assign) and the plan (dot_plan.c); lowers dot(a[M,K], b[K,N], acc)
 * to tensor cores: operands staged or read from their slots, fragments by
 * ldmatrix, mma.sync (sm_80+), or wgmma through emit_wgmma.c.
 * Fragments: ldmatrix.sync.aligned.m8n8.x4 (.trans for a [K][N] B), the
 * fragments of k-slice k+1 loaded before the mma of slice k.  Warp tiling is
 * the mma layout's: warp bits over M (16-row blocks), then N (8 columns). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "schedule.h"

#include "ring.h"
#include "code_env.h"

/* ---- operands ------------------------------------------------------------------------ */

/* Where ldmatrix reads an operand: rows of `rowbytes` at byte offset `base`
 * (i32, may vary per iteration); `kcontig`: rows are M (A) or N (B) and K is
 * contiguous, else rows are K (B only, read with .trans). */
typedef struct opsrc {
  int kind;
  LLVMValueRef base;
  int rowbytes, nch;
  bool swz, kcontig;
  LLVMValueRef kmaj;      /* 8-bit [K][N] B stream: i1, the slot holds [N][K] (cg_stream.kn8) */
  int nk_rowbytes, nk_nch;
  LLVMValueRef *pk;       /* SRC_REGS: the packed fragments (pack_regs_a) */
  cg_soff so;                /* ldmatrix addresses: per-lane part + constants (cg_emit_dot) */
  bool use_so;
  int atom_bytes;         /* != 0: a resident tile staged as a wgmma A's [C/64][rows][64] atoms, read by
                           * this mma.sync dot (one atom column this many bytes) */
} opsrc;

/* Shared address (i32) of the 16-byte row segment (row, colbyte), colbyte a multiple of 16. */
static LLVMValueRef src_addr(cg *g, const opsrc *s, LLVMValueRef row, LLVMValueRef colbyte) {
  LLVMValueRef cb = colbyte;
  if (s->swz) {
    LLVMValueRef ch = LLVMBuildXor(g->B, LLVMBuildLShr(g->B, colbyte, cg_i32(g, 4), ""), cg_swizzle_of(g, row, s->nch), "");
    cb = LLVMBuildShl(g->B, ch, cg_i32(g, 4), "");
  }
  LLVMValueRef o = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, row, cg_i32(g, s->rowbytes), ""), cb, "");
  return LLVMBuildAdd(g->B, s->base, o, "");
}

/* Store every element of tile v at (row, col) -> off + row*pitch + col*eb
 * (the 16-byte chunk XOR-swizzled when s->swz), where (row, col) are the tile
 * coords, swapped when `swap`. */
static void stage_al(cg *g, int32_t v, LLVMValueRef off, int64_t off_al, const struct opsrc *s, int eb, bool swap);
static void stage(cg *g, int32_t v, LLVMValueRef off, const struct opsrc *s, int eb, bool swap) {
  stage_al(g, v, off, 0, s, eb, swap);
}

/* stage() at an offset `off` that is a multiple of off_al (> 0; 0: known only when a constant). */
static void stage_al(cg *g, int32_t v, LLVMValueRef off, int64_t off_al, const struct opsrc *s, int eb, bool swap) {
  tl_type *t = &tl_val(g->f, v)->type;
  const tl_layout *l = cg_layout(g, v);
  cg_val *x = cg_get(g, v);
  /* lane/warp part once, a constant per register (soff: same offsets) */
  int rd = swap ? 1 : 0, cd = swap ? 0 : 1;
  int cb_max = 0; /* the largest lane/warp part of the column: all its bases */
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++) cb_max += l->lane[j][cd] * eb;
  for (int j = 0; j < l->nwarp; j++) cb_max += l->warp[j][cd] * eb;
  cg_soff so;
  cg_soff_init(g, &so, off, s->rowbytes, s->nch, s->swz, cg_lane_warp(g, t->layout, rd),
            cg_mul_c(g, cg_lane_warp(g, t->layout, cd), eb), cb_max);
  /* the alignment of the lane part, explicit (known bits of the split form
   * are too deep for InstCombine, and adjacent stores merge only when aligned):
   * the lowest bit any lane/warp basis moves the offset by; the swizzle moves
   * it by multiples of 16, the smem array and `off` are 16-aligned */
  int64_t lal = 16;
  if (!LLVMIsAConstantInt(off)) lal = off_al >= 16 ? 16 : off_al > 0 ? off_al : 1;
  else if (LLVMConstIntGetZExtValue(off) % 16) lal = LLVMConstIntGetZExtValue(off) & -LLVMConstIntGetZExtValue(off);
  for (int src = 0; src < 2; src++)
    for (int j = 0; j < (src ? l->nwarp : TL_LAYOUT_LANE_BITS); j++) {
      int32_t br = src ? l->warp[j][rd] : l->lane[j][rd], bc = src ? l->warp[j][cd] : l->lane[j][cd];
      int64_t m = (int64_t)br * s->rowbytes | (int64_t)bc * eb;
      if (m && (m & -m) < lal) lal = m & -m;
    }
  for (int32_t r = 0; r < tl_layout_nregs(l); r++) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, c);
    int64_t k = (int64_t)c[rd] * s->rowbytes + (int64_t)c[cd] * eb, al = lal;
    if (k & (al - 1)) al = k & -k;
    LLVMValueRef st = LLVMBuildStore(g->B, x->r[r], cg_smem_ptr(g, cg_soff_at(g, &so, c[rd], c[cd] * eb)));
    if (al > eb) LLVMSetAlignment(st, (unsigned)al);
  }
}

/* Store every element of the [rows][K] 16-bit tile v as wgmma's K-major
 * [K/64][rows][64] atoms at off: 64 columns = one 128-byte row of an atom
 * column of rows*128 bytes, 16-byte chunk c of row r at c ^ (r % 8) (the
 * 128-byte swizzle).  Once per program (a resident operand): plain math. */
static void stage_atoms(cg *g, int32_t v, int off, int32_t rows, int eb) {
  tl_type *t = &tl_val(g->f, v)->type;
  const tl_layout *l = cg_layout(g, v);
  cg_val *x = cg_get(g, v);
  LLVMValueRef row_l = cg_lane_warp(g, t->layout, 0), b_l = cg_mul_c(g, cg_lane_warp(g, t->layout, 1), eb);
  for (int32_t r = 0; r < tl_layout_nregs(l); r++) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, c);
    LLVMValueRef row = cg_add_c(g, row_l, c[0]), b = cg_add_c(g, b_l, (int64_t)c[1] * eb);
    LLVMValueRef atom = LLVMBuildLShr(g->B, b, cg_i32(g, 7), "");
    LLVMValueRef ch = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, b, cg_i32(g, 4), ""), cg_i32(g, 7), "");
    ch = LLVMBuildXor(g->B, ch, LLVMBuildAnd(g->B, row, cg_i32(g, 7), ""), "");
    LLVMValueRef a = LLVMBuildAdd(g->B, cg_mul_c(g, atom, (int64_t)rows * 128), cg_mul_c(g, row, 128), "");
    a = LLVMBuildAdd(g->B, a, LLVMBuildShl(g->B, ch, cg_i32(g, 4), ""), "");
    a = LLVMBuildAdd(g->B, a, LLVMBuildAnd(g->B, b, cg_i32(g, 15), ""), "");
    LLVMBuildStore(g->B, x->r[r], cg_smem_ptr(g, cg_add_c(g, a, off)));
  }
}

/* Resident tile x is staged as [K/64][rows][64] atoms: a wgmma dot reads it as its A and its rows
 * exceed 128 bytes (its other readers, mma.sync, then read the atoms: cg_soff_init_atoms). */
static bool inv_atoms(cg *g, int32_t x) {
  tl_func *f = g->f;
  const tl_type *xt = &tl_val(f, x)->type;
  if (xt->rank != 2 || xt->shape[1] * tl_dtype_bytes((tl_dtype)xt->dtype) <= 128) return false;
  for (int32_t D = 0; D < f->ops.len; D++) {
    tl_op *o = tl_op_at(f, D);
    if (!(o->flags & TL_OPF_DEAD) && o->opc == TL_OP_dot && o->opnd[0] == x && cg_dot_is_wgmma(g->plan, D)) return true;
  }
  return false;
}

/* The shared offset (i32) of wgmma dot wi's staged B in this iteration: its slot, or with two
 * (wg_bdouble: a late ring's staged2) the one the ring's read slot picks. */
static LLVMValueRef staged_b_off(cg *g, int wi) {
  cg_plan *p = g->plan;
  LLVMValueRef off = cg_i32(g, p->wg_boff[wi]);
  if (!p->wg_bdouble[wi]) return off;
  tl_op *o = tl_op_at(g->f, p->wg_dots[wi]);
  tl_type *bt = &tl_val(g->f, o->opnd[1])->type;
  int bytes = bt->shape[0] * bt->shape[1] * tl_dtype_bytes((tl_dtype)bt->dtype);
  for (int r = 0; r < p->nring; r++)
    if (p->rings[r].for_op == o->parent && p->rings[r].rd_slot)
      return LLVMBuildAdd(g->B, off, LLVMBuildMul(g->B, p->rings[r].rd_slot, cg_i32(g, bytes), ""), "");
  TL_INTERNAL(g->ctx, "codegen: a doubled staged B without its ring's read slot");
  return off;
}

/* The staged B of wgmma dot wi (computed in the loop, K-major: b = trans([N][K])) stored into
 * its slot as wgmma's K-major canonical layout (rows of K*2 = 32/64/128 bytes, the row XOR
 * swizzle = the wgmma swizzle of that width), then the proxy fence and one barrier.  A chained
 * dot (p->wg_chain: its result is the next wgmma dot's accumulator) stages that dot's B too when
 * it is already computed, so both issue behind one barrier.  No barrier before the stores: the
 * slot's last readers are wgmma dots of the previous iteration, each waited for (the chain's
 * waiting dot) by its warpgroup before the ring's barrier at the top of this iteration, which
 * every thread passes before it computes this B (the prologue's loads are read after it). */
static void stage_wgmma_b(cg *g, int wi) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int todo[2] = {wi, -1}, n = 1;
  if (p->wg_staged_b_done[wi]) return;
  if (p->wg_chain[wi]) {
    int32_t res = tl_op_at(f, p->wg_dots[wi])->res[0];
    for (int j = 0; j < p->nwg; j++) {
      tl_op *u = tl_op_at(f, p->wg_dots[j]);
      if (j != wi && u->opnd[2] == res && p->wg_staged_b[j] && g->vals[u->opnd[1]].r) todo[n++] = j;
    }
  }
  for (int i = 0; i < n; i++) {
    tl_op *o = tl_op_at(f, p->wg_dots[todo[i]]);
    tl_type *bt = &tl_val(f, o->opnd[1])->type; /* [K][N] */
    int eb = tl_dtype_bytes((tl_dtype)bt->dtype);
    opsrc s = {0};
    s.rowbytes = bt->shape[0] * eb;
    s.nch = s.rowbytes / 16;
    s.swz = true;
    stage_al(g, o->opnd[1], staged_b_off(g, todo[i]), 1024, &s, eb, true); /* (slots 1024-aligned) */
    p->wg_staged_b_done[todo[i]] = true;
  }
  /* st.shared writes through the generic proxy, wgmma reads through the async one */
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  /* a late ring (dot_plan.c late_refill_fits): the deferred dot of the iteration before, the
   * last reader of the slot refilled next, is waited for by every warpgroup before the barrier,
   * and the refill issued after it; the group ran under this iteration's wait, slot reads and
   * staging */
  int32_t L = tl_op_at(f, p->wg_dots[wi])->parent;
  bool late = false;
  for (int r = 0; r < p->nring; r++) late = late || (p->rings[r].for_op == L && p->rings[r].late);
  if (late) cg_asm_void(g, "wgmma.wait_group.sync.aligned 0;", "~{memory}", NULL, 0);
  cg_barrier(g);
  if (late && tl_code_env("TILEC_LATE_REFILL") && !strcmp(tl_code_env("TILEC_LATE_REFILL"), "2")) {
    for (int r = 0; r < p->nring; r++)
      if (p->rings[r].for_op == L) p->rings[r].late_due = true;
  } else if (late) {
    cg_ring_late_refill(g, L);
  }
}

/* TILEC_WGMMA_STAGED_A=1: wgmma dot wi's A, the transpose of a 16-bit [K][M] tile x computed in the
 * loop (A = trans(x): the backward's dQ = dS K with x = dS^T), stored as x's own rows into the dot's
 * slot: K rows of M = 64 elements (128 bytes, 16-byte chunk c of row r at c ^ (r % 8): the 128-byte
 * swizzle), which is wgmma's MN-major A (the transpose immediate), then the proxy fence and one
 * barrier.  No barrier before the stores: the slot's last reader is this dot in the previous
 * iteration, waited for by the warpgroup before the ring's barrier at the top of this one (as a
 * staged B's). */
static cg_wgmma_src stage_wgmma_a(cg *g, int wi, int32_t K) {
  cg_plan *p = g->plan;
  tl_op *o = tl_op_at(g->f, p->wg_dots[wi]);
  tl_type *at = &tl_val(g->f, o->opnd[0])->type; /* [M][K] */
  int eb = tl_dtype_bytes((tl_dtype)at->dtype);
  opsrc s = {0};
  s.rowbytes = at->shape[0] * eb;
  s.nch = s.rowbytes / 16;
  s.swz = true;
  stage_al(g, o->opnd[0], cg_i32(g, p->wg_aoff[wi]), 1024, &s, eb, true); /* (its row: x's row, K) */
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  cg_barrier(g);
  return (cg_wgmma_src){.base = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, p->wg_aoff[wi]), ""), .kmajor = false,
                        .rowbytes = s.rowbytes, .krows = K};
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

/* Two 16-bit values (low = x) packed in an i32. */
static LLVMValueRef pack2(cg *g, LLVMValueRef x, LLVMValueRef y) {
  /* integer ops: a <2 x bfloat> bitcast goes through local memory in NVPTX */
  LLVMValueRef xi = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, x, g->i16, ""), g->i32, "");
  LLVMValueRef yi = LLVMBuildZExt(g->B, LLVMBuildBitCast(g->B, y, g->i16, ""), g->i32, "");
  return LLVMBuildOr(g->B, xi, LLVMBuildShl(g->B, yi, cg_i32(g, 16), ""), "");
}

typedef struct dotgeo {
  int M, N, K, eb, kstep, mk, wm, wn, mrep, nrep, lognrep;
  bool pairs; /* column-paired accumulator (layout.h tl_layout_mma_pairs) */
  LLVMValueRef row8, m_lo, m_hi, wmi, wni;
} dotgeo;

#define MAXREP 32 /* 32: wgmma's all-warps-along-M tiling on 128x256 (mma.sync fallback) */
typedef struct frags {
  LLVMValueRef a[MAXREP][4];
  LLVMValueRef b[MAXREP][2];
} frags;

/* The A fragments of an operand kept in registers (SRC_REGS), all k-slices
 * at once (pk[(mi * nk + kk) * 4 + i]): the accumulator registers of the
 * m16n8 blocks 2kk, 2kk+1 of row block mi, packed in pairs.  When A is
 * cast<16-bit>(f32 tile), each pair is converted and packed by one
 * cvt.rn.{bf16,f16}x2.f32 (the same rounding; the per-element casts are
 * then unused and deleted by LLVM).  Packing everything before the first
 * mma keeps 32-bit pairs, not the f32 values, live across the dot. */
/* The f32 tile a 16-bit register operand v is cast<16-bit> from, in v's
 * layout (its register pairs then convert and pack in one cvt), or NULL. */
static cg_val *cast_source_f32(cg *g, int32_t v) {
  tl_value *vv = tl_val(g->f, v);
  tl_op *cv = vv->def >= 0 ? tl_op_at(g->f, vv->def) : NULL;
  if (cv && cv->opc == TL_OP_cast && tl_val(g->f, cv->opnd[0])->type.dtype == TL_F32 &&
      tl_val(g->f, cv->opnd[0])->type.layout == vv->type.layout)
    return cg_get(g, cv->opnd[0]);
  return NULL;
}

/* Registers r0, r1 of a 16-bit operand x packed into one 32-bit pair: by one
 * cvt.rn.{bf16,f16}x2.f32 of its f32 source `wide` when there is one. */
static LLVMValueRef pack_operand_pair(cg *g, cg_val *x, cg_val *wide, tl_dtype dt, int32_t r0, int32_t r1) {
  if (!wide) return pack2(g, x->r[r0], x->r[r1]);
  if (dt == TL_BF16) { /* an int4 dequantization: the magic-number unpack and bf16x2 fmas */
    LLVMValueRef dq = cg_dequant_pair_bf16(g, wide->r[r0], wide->r[r1]);
    if (dq) return dq;
  }
  const char *cvt = dt == TL_BF16 ? "cvt.rn.bf16x2.f32 $0, $2, $1;" : "cvt.rn.f16x2.f32 $0, $2, $1;";
  LLVMValueRef xy[2] = {wide->r[r0], wide->r[r1]};
  return cg_asm(g, g->i32, cvt, "=r,f,f", xy, 2, false);
}

static LLVMValueRef *pack_regs_a(cg *g, const dotgeo *q, int32_t a) {
  cg_val *x = cg_get(g, a), *wide = cast_source_f32(g, a);
  tl_dtype dt = tl_val(g->f, a)->type.dtype;
  int nk = q->K / q->kstep, lognk = 0;
  while ((1 << lognk) < q->K / 8) lognk++;
  LLVMValueRef *pk = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)(q->mrep * nk * 4));
  for (int mi = 0; mi < q->mrep; mi++)
    for (int kk = 0; kk < nk; kk++) {
      int32_t b0 = (mi << (2 + lognk)) | ((2 * kk) << 2), b1 = (mi << (2 + lognk)) | ((2 * kk + 1) << 2);
      int32_t lo[4] = {b0, b0 + 2, b1, b1 + 2};
      for (int i = 0; i < 4; i++) pk[(mi * nk + kk) * 4 + i] = pack_operand_pair(g, x, wide, dt, lo[i], lo[i] + 1);
    }
  return pk;
}

LLVMValueRef *cg_dot_pack_a(cg *g, int32_t D) {
  tl_op *o = tl_op_at(g->f, D);
  const tl_type *at = &tl_val(g->f, o->opnd[0])->type;
  dotgeo q;
  memset(&q, 0, sizeof q);
  q.M = at->shape[0], q.K = at->shape[1], q.kstep = tl_dot_kstep((tl_dtype)at->dtype);
  q.mrep = q.M / (16 * cg_layout(g, o->res[0])->mma_wm);
  return pack_regs_a(g, &q, o->opnd[0]);
}

/* The B fragments of an operand computed in its fragment layout
 * (tl_layout_mma_b: TILEC_PROLOGUE_FRAG, an operand prologue's result), all
 * k-slices at once (pk[(kk * nrep + ni) * 2 + h]): registers (k, k + 1) of
 * rows 16 kk + 8 h of n-block ni, packed; a cast<16-bit>(f32 tile) in the
 * same layout packs with one cvt.rn.{bf16,f16}x2.f32 (as pack_regs_a). */
static LLVMValueRef *pack_regs_b(cg *g, const dotgeo *q, int32_t b) {
  cg_val *x = cg_get(g, b), *wide = cast_source_f32(g, b);
  tl_dtype dt = tl_val(g->f, b)->type.dtype;
  const tl_layout *lb = cg_layout(g, b);
  int nk = q->K / q->kstep;
  LLVMValueRef *pk = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)(nk * q->nrep * 2));
  for (int kk = 0; kk < nk; kk++)
    for (int ni = 0; ni < q->nrep; ni++)
      for (int h = 0; h < 2; h++) {
        int32_t c0[TL_MAX_RANK] = {kk * 16 + 8 * h, ni * 8 * q->wn}, c1[TL_MAX_RANK] = {kk * 16 + 8 * h + 1, ni * 8 * q->wn};
        int32_t r0 = tl_layout_find_reg(lb, c0), r1 = tl_layout_find_reg(lb, c1);
        if (r0 < 0 || r1 < 0) TL_INTERNAL(g->ctx, "codegen: B fragment (k %d, n %d) outside its layout", c0[0], c0[1]);
        pk[(kk * q->nrep + ni) * 2 + h] = pack_operand_pair(g, x, wide, dt, r0, r1);
      }
  return pk;
}

static void load_a(cg *g, const dotgeo *q, opsrc *sa, int32_t a, int kk, frags *fr) {
  (void)a;
  if (sa->kind == SRC_REGS) {
    int nk = q->K / q->kstep;
    for (int mi = 0; mi < q->mrep; mi++)
      for (int i = 0; i < 4; i++) fr->a[mi][i] = sa->pk[(mi * nk + kk) * 4 + i];
    return;
  }
  /* row wmi*16 + row8 + m_lo*8 (lane) + mi*16*wm, byte (m_hi*mk + kk*kstep)*eb */
  for (int mi = 0; mi < q->mrep; mi++) {
    if (sa->use_so) {
      ldmatrix(g, cg_soff_at(g, &sa->so, mi * 16 * q->wm, kk * q->kstep * q->eb), 4, false, fr->a[mi]);
      continue;
    }
    LLVMValueRef row = LLVMBuildAdd(g->B, cg_mul_c(g, q->wmi, 16), cg_i32(g, mi * 16 * q->wm), "");
    row = LLVMBuildAdd(g->B, row, LLVMBuildAdd(g->B, q->row8, cg_mul_c(g, q->m_lo, 8), ""), "");
    LLVMValueRef col = LLVMBuildAdd(g->B, cg_i32(g, kk * q->kstep), cg_mul_c(g, q->m_hi, q->mk), "");
    ldmatrix(g, src_addr(g, sa, row, cg_mul_c(g, col, q->eb)), 4, false, fr->a[mi]);
  }
}

/* prmt.b32: bytes of {y:x} picked by the selector's nibbles (i32). */
static LLVMValueRef prmt(cg *g, LLVMValueRef x, LLVMValueRef y, LLVMValueRef sel) {
  LLVMValueRef args[3] = {x, y, sel};
  return cg_asm(g, g->i32, "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", args, 3, false);
}

/* 8-bit B kept [K][N] (column-paired accumulator): one ldmatrix.x4.trans of
 * byte pairs reads the 16-column segment of n-blocks ni, ni+1.  Matrix X
 * has k rows 0,1,4,5,8,9,12,13, Y the same + 2 (then both + 16 for the
 * second register): lane (c = lane/4, q = lane%4) gets X = bytes (k 4q, n
 * 2c), (4q, 2c+1), (4q+1, 2c), (4q+1, 2c+1) and Y the same for k 4q+2, 4q+3,
 * so prmt 0x6420 gives k 4q..4q+3 of column 2c (n-block ni: mma column c is
 * real column 2c) and 0x7531 those of column 2c+1 (n-block ni+1). */
static void load_b_kn8(cg *g, const dotgeo *q, const opsrc *sb, int kk, frags *fr) {
  /* K-major global B ([N][K] slots, sb->kmaj): plain ldmatrix of matrices
   * (ni, k lo), (ni+1, k lo), (ni, k hi), (ni+1, k hi), n-block ni + p
   * reading rows n = segment + 2*row + p; the prmt selectors then just pick
   * r0 / r1 (0x3210 / 0x7654), so one instruction sequence serves both */
  LLVMValueRef sel_e = LLVMBuildSelect(g->B, sb->kmaj, cg_i32(g, 0x3210), cg_i32(g, 0x6420), "");
  LLVMValueRef sel_o = LLVMBuildSelect(g->B, sb->kmaj, cg_i32(g, 0x7654), cg_i32(g, 0x7531), "");
  opsrc nk = *sb;
  nk.rowbytes = sb->nk_rowbytes;
  nk.nch = sb->nk_nch;
  for (int ni = 0; ni < q->nrep; ni += 2) {
    LLVMValueRef seg = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, q->wni, cg_i32(g, 16), ""),
                                    cg_i32(g, (ni >> 1) * 16 * q->wn), "");
    LLVMValueRef k = LLVMBuildAdd(g->B, LLVMBuildShl(g->B, LLVMBuildLShr(g->B, q->row8, cg_i32(g, 1), ""), cg_i32(g, 2), ""),
                                  LLVMBuildAnd(g->B, q->row8, cg_i32(g, 1), ""), "");
    k = LLVMBuildAdd(g->B, k, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, q->m_hi, cg_i32(g, 16), ""),
                                           LLVMBuildMul(g->B, q->m_lo, cg_i32(g, 2), ""), ""), "");
    k = LLVMBuildAdd(g->B, k, cg_i32(g, kk * q->kstep), "");
    LLVMValueRef n = LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, seg, LLVMBuildShl(g->B, q->row8, cg_i32(g, 1), ""), ""), q->m_lo, "");
    LLVMValueRef kb = LLVMBuildAdd(g->B, cg_i32(g, kk * q->kstep), LLVMBuildMul(g->B, q->m_hi, cg_i32(g, 16), ""), "");
    LLVMValueRef addr;
    if (nk.rowbytes == sb->rowbytes && nk.nch == sb->nch) /* square slots: one address, fewer registers */
      addr = src_addr(g, sb, LLVMBuildSelect(g->B, sb->kmaj, n, k, ""), LLVMBuildSelect(g->B, sb->kmaj, kb, seg, ""));
    else
      addr = LLVMBuildSelect(g->B, sb->kmaj, src_addr(g, &nk, n, kb), src_addr(g, sb, k, seg), "");
    LLVMValueRef r[4];
    {
      LLVMValueRef args[2] = {addr, LLVMBuildZExt(g->B, sb->kmaj, g->i32, "")};
      LLVMTypeRef w[4] = {g->i32, g->i32, g->i32, g->i32};
      LLVMValueRef st = cg_asm(g, LLVMStructTypeInContext(g->C, w, 4, 0),
                               "{ .reg .pred p; setp.ne.b32 p, $5, 0; "
                               "@p ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0,$1,$2,$3}, [$4]; "
                               "@!p ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0,$1,$2,$3}, [$4]; }",
                               "=r,=r,=r,=r,r,r", args, 2, true);
      for (int i = 0; i < 4; i++) r[i] = LLVMBuildExtractValue(g->B, st, (unsigned)i, "");
    }
    fr->b[ni][0] = prmt(g, r[0], r[1], sel_e);
    fr->b[ni][1] = prmt(g, r[2], r[3], sel_e);
    fr->b[ni + 1][0] = prmt(g, r[0], r[1], sel_o);
    fr->b[ni + 1][1] = prmt(g, r[2], r[3], sel_o);
  }
}

/* An 8-bit B kept [K][N] for wgmma (cg_stream.wg_tr): this k-step's slot
 * (k rows of the [K][N] atom slot at slot_base) transposed into K-major
 * buffer: N rows of K bytes, 16-byte chunk c of row n at
 * c ^ swizzle(n) (the K-major wgmma layout).  The (k32 slice, 16-column
 * segment) pairs are spread over the warps (buffer st->trv's turn when
 * there are two); per pair one ldmatrix.x4.trans
 * of byte pairs + 4 prmt give lane (c, q) the k-words 4q..4q+3 and
 * 16+4q..16+4q+3 of columns 2c and 2c+1 (load_b_kn8's fragments), stored as
 * 4 b32.  Then the async-proxy fence and a CTA barrier (wgmma reads the
 * buffer).  Returns the buffer's shared address (i32). */
/* The (k32 slice, 16-column segment) pairs of the [K][N] slot at src spread
 * over nwarps warps (this one `warp`), each stored K-major into dst.
 * `lean`: without shared-memory bank conflicts.  The plain lane mapping reads
 * k rows 0,1,4,5,8,9,12,13 in matrix X (k % 8 takes 4 values: two rows per
 * 16-byte swizzle chunk, 2 wavefronts) and stores columns 2c + col (lanes c
 * and c + 4 on one chunk: 2 wavefronts).  Lean: X takes rows 0,1,4,5,10,11,
 * 14,15 and Y 2,3,6,7,8,9,12,13 (k % 8 all distinct), so lanes q >= 2 hold
 * their k-words' halves in the other order (prmt selectors 0x2064 / 0x3175
 * instead of 0x6420 / 0x7531), and lanes c >= 4 store the odd column first
 * (rows n % 8 all distinct): half the wavefronts, the same bytes. */
void cg_transpose_kn8_into(cg *g, const cg_stream *st, LLVMValueRef slot_base, LLVMValueRef buf, LLVMValueRef warp,
                           int warps, bool lean) {
  int K = st->rows, N = st->cols, nk = K / 32, nseg = N / 16;
  if (K % 32 || N % 16 || (nk * nseg) % warps || (nk & (nk - 1)))
    cg_unsupported(g, "transposing an 8-bit [%d][%d] B for wgmma over %d warps", K, N, warps);
  LLVMValueRef lane = cg_asm(g, g->i32, "mov.u32 $0, %laneid;", "=r", NULL, 0, true);
  LLVMValueRef row8 = LLVMBuildAnd(g->B, lane, cg_i32(g, 7), ""), mat = LLVMBuildLShr(g->B, lane, cg_i32(g, 3), "");
  LLVMValueRef m_lo = LLVMBuildAnd(g->B, mat, cg_i32(g, 1), ""), m_hi = LLVMBuildLShr(g->B, mat, cg_i32(g, 1), "");
  /* the lane's ldmatrix row: k = 0,1,4,5,8,9,12,13 (+2 for matrices 1, 3; +16 for 2, 3) */
  LLVMValueRef krow = LLVMBuildAdd(g->B, cg_mul_c(g, LLVMBuildLShr(g->B, row8, cg_i32(g, 1), ""), 4),
                                   LLVMBuildAnd(g->B, row8, cg_i32(g, 1), ""), "");
  LLVMValueRef plus2 = lean ? LLVMBuildXor(g->B, m_lo, LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, row8, cg_i32(g, 2), ""),
                                                                   cg_i32(g, 1), ""), "")
                            : m_lo;
  krow = LLVMBuildAdd(g->B, krow, LLVMBuildAdd(g->B, cg_mul_c(g, m_hi, 16), cg_mul_c(g, plus2, 2), ""), "");
  LLVMValueRef c2 = cg_mul_c(g, LLVMBuildLShr(g->B, lane, cg_i32(g, 2), ""), 2);
  LLVMValueRef kq = cg_mul_c(g, LLVMBuildAnd(g->B, lane, cg_i32(g, 3), ""), 4);
  /* per store `col`: the prmt selector and the column offset (0 / 1) */
  LLVMValueRef sel[2] = {cg_i32(g, 0x6420), cg_i32(g, 0x7531)}, coff[2] = {cg_i32(g, 0), cg_i32(g, 1)};
  if (lean) {
    LLVMValueRef qhi = LLVMBuildICmp(g->B, LLVMIntUGE, LLVMBuildAnd(g->B, lane, cg_i32(g, 3), ""), cg_i32(g, 2), "");
    LLVMValueRef chi = LLVMBuildICmp(g->B, LLVMIntUGE, lane, cg_i32(g, 16), ""); /* c = lane / 4 >= 4 */
    LLVMValueRef ev = LLVMBuildSelect(g->B, qhi, cg_i32(g, 0x2064), cg_i32(g, 0x6420), "");
    LLVMValueRef od = LLVMBuildSelect(g->B, qhi, cg_i32(g, 0x3175), cg_i32(g, 0x7531), "");
    sel[0] = LLVMBuildSelect(g->B, chi, od, ev, "");
    sel[1] = LLVMBuildSelect(g->B, chi, ev, od, "");
    LLVMValueRef sw = LLVMBuildZExt(g->B, chi, g->i32, "");
    coff[0] = sw;
    coff[1] = LLVMBuildXor(g->B, sw, cg_i32(g, 1), "");
  }
  int lognk = 0;
  while ((1 << lognk) < nk) lognk++;
  opsrc dst = {.base = buf, .rowbytes = K, .nch = K / 16, .swz = true};
  for (int j = 0; j < nk * nseg / warps; j++) {
    LLVMValueRef pair = cg_add_c(g, warp, (int64_t)j * warps);
    LLVMValueRef kk = LLVMBuildAnd(g->B, pair, cg_i32(g, nk - 1), ""), seg = LLVMBuildLShr(g->B, pair, cg_i32(g, lognk), "");
    LLVMValueRef k = LLVMBuildAdd(g->B, cg_mul_c(g, kk, 32), krow, "");
    LLVMValueRef r[4];
    ldmatrix(g, LLVMBuildAdd(g->B, slot_base, cg_slot_off(g, st, k, seg), ""), 4, true, r);
    LLVMValueRef w[2][2] = {{prmt(g, r[0], r[1], sel[0]), prmt(g, r[2], r[3], sel[0])},
                            {prmt(g, r[0], r[1], sel[1]), prmt(g, r[2], r[3], sel[1])}};
    LLVMValueRef n = LLVMBuildAdd(g->B, cg_mul_c(g, seg, 16), c2, "");
    LLVMValueRef kb = LLVMBuildAdd(g->B, cg_mul_c(g, kk, 32), kq, "");
    for (int col = 0; col < 2; col++)
      for (int h = 0; h < 2; h++) {
        LLVMValueRef kbh = cg_add_c(g, kb, 16 * h), nn = LLVMBuildAdd(g->B, n, coff[col], "");
        LLVMValueRef a = src_addr(g, &dst, nn, LLVMBuildAnd(g->B, kbh, cg_i32(g, ~15), ""));
        a = LLVMBuildAdd(g->B, a, LLVMBuildAnd(g->B, kbh, cg_i32(g, 15), ""), "");
        LLVMValueRef args[2] = {a, w[col][h]};
        cg_asm_void(g, "st.shared.b32 [$0], $1;", "r,r,~{memory}", args, 2);
      }
  }
}

static LLVMValueRef transpose_kn8(cg *g, const cg_stream *st, const cg_ring *R, LLVMValueRef slot_base) {
  int K = st->rows, N = st->cols;
  (void)R;
  LLVMValueRef idx = cg_i32(g, 0);
  if (st->tr_nbuf > 1) { /* a wgmma group stays in flight: the buffers take turns */
    if (!st->trv) TL_INTERNAL(g->ctx, "codegen: transposed B before its ring's prologue");
    idx = LLVMBuildLoad2(g->B, g->i32, st->trv, "");
    LLVMBuildStore(g->B, LLVMBuildXor(g->B, idx, cg_i32(g, 1), ""), st->trv);
  }
  LLVMValueRef buf = LLVMBuildAdd(g->B, cg_smem_base32(g), LLVMBuildAdd(g->B, cg_i32(g, st->tr_off),
                                                                         cg_mul_c(g, idx, K * N), ""), "");
  cg_transpose_kn8_into(g, st, slot_base, buf, g->warp, g->f->warps, false);
  /* st.shared writes through the generic proxy, wgmma reads through the async one */
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  cg_barrier(g);
  return buf;
}

/* B's ldmatrix address without a per-lane split (pairs read through .trans). */
static LLVMValueRef b_addr_direct(cg *g, const dotgeo *q, const opsrc *sb, int kk, int ni) {
  /* matrices: (ni, k lo), (ni, k hi), (ni+1, k lo), (ni+1, k hi) */
  LLVMValueRef nblk = LLVMBuildAdd(g->B, cg_i32(g, ni), q->m_hi, "");
  LLVMValueRef n0 = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, q->wni, cg_i32(g, 8), ""),
                                 LLVMBuildMul(g->B, nblk, cg_i32(g, 8 * q->wn), ""), "");
  if (q->pairs) /* n-blocks ni, ni+1: the even / odd columns of one 16-column segment */
    n0 = LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, q->wni, cg_i32(g, 16), ""),
                                         cg_i32(g, (ni >> 1) * 16 * q->wn), ""), q->m_hi, "");
  if (sb->kcontig) {
    LLVMValueRef n = LLVMBuildAdd(g->B, n0, q->pairs ? LLVMBuildShl(g->B, q->row8, cg_i32(g, 1), "") : q->row8, "");
    LLVMValueRef k = LLVMBuildAdd(g->B, cg_i32(g, kk * q->kstep), LLVMBuildMul(g->B, q->m_lo, cg_i32(g, q->mk), ""), "");
    return src_addr(g, sb, n, LLVMBuildMul(g->B, k, cg_i32(g, q->eb), ""));
  }
  LLVMValueRef k = LLVMBuildAdd(g->B, cg_i32(g, kk * q->kstep),
                                LLVMBuildAdd(g->B, q->row8, LLVMBuildMul(g->B, q->m_lo, cg_i32(g, 8), ""), ""), "");
  return src_addr(g, sb, k, LLVMBuildMul(g->B, n0, cg_i32(g, q->eb), ""));
}

static void load_b(cg *g, const dotgeo *q, opsrc *sb, int kk, frags *fr) {
  if (sb->kind == SRC_REGS) {
    for (int ni = 0; ni < q->nrep; ni++)
      for (int h = 0; h < 2; h++) fr->b[ni][h] = sb->pk[(kk * q->nrep + ni) * 2 + h];
    return;
  }
  if (!sb->kcontig && q->eb == 1) {
    load_b_kn8(g, q, sb, kk, fr);
    return;
  }
  /* (an f32 B is never kept [K][N] in shared memory: staged as [N][K], not streamed) */
  if (!sb->kcontig && q->eb == 4) TL_INTERNAL(g->ctx, "codegen: tf32 B read [K][N] (no ldmatrix .trans of 32-bit)");
  for (int ni = 0; ni < q->nrep; ni += 2) {
    int nmat = ni + 1 < q->nrep ? 4 : 2;
    LLVMValueRef addr;
    if (sb->use_so) {
      /* the per-lane part is in sb->so (cg_emit_dot); here the n-block and
       * k-slice steps: rows n (kcontig) or k, bytes along k or n */
      int nstep = q->pairs ? (ni >> 1) * 16 * q->wn : ni * 8 * q->wn;
      addr = sb->kcontig ? cg_soff_at(g, &sb->so, nstep, kk * q->kstep * q->eb)
                         : cg_soff_at(g, &sb->so, kk * q->kstep, nstep * q->eb);
    } else {
      addr = b_addr_direct(g, q, sb, kk, ni);
    }
    LLVMValueRef r[4];
    ldmatrix(g, addr, nmat, !sb->kcontig, r);
    fr->b[ni][0] = r[0];
    fr->b[ni][1] = r[1];
    if (nmat == 4) {
      fr->b[ni + 1][0] = r[2];
      fr->b[ni + 1][1] = r[3];
    }
  }
}

/* A operand p (attention's P) usable as registers: an mma layout over [M, K]
 * with whole rows per warp and the result's row blocks. */
bool cg_a_from_regs(cg *g, int32_t a, const tl_layout *lc, int eb) {
  tl_type *at = &tl_val(g->f, a)->type;
  const tl_layout *la = cg_layout(g, a);
  return eb == 2 && la->kind == TL_LAYOUT_MMA && !la->mma_npair && la->mma_wn == 1 && lc->mma_wm == la->mma_wm &&
         la->nwarp == lc->nwarp && at->shape[0] == lc->shape[0] && at->shape[1] % 16 == 0;
}

/* B operand usable as registers: computed in the fragment layout of the
 * result's accumulator (tl_layout_mma_b; layout_assign chooses it only under
 * TILEC_PROLOGUE_FRAG=1). */
bool cg_b_from_regs(cg *g, int32_t b, const tl_layout *lc, int eb) {
  tl_type *bt = &tl_val(g->f, b)->type;
  if (eb != 2 || bt->rank != 2) return false;
  tl_layout want = tl_layout_mma_b(lc, bt->shape[0]);
  return want.nreg && tl_layout_eq(&want, cg_layout(g, b));
}

void cg_emit_dot(cg *g, tl_op *o) {
  tl_func *f = g->f;
  cg_make_plan(g);
  cg_plan *p = g->plan;
  int32_t D = (int32_t)(o - f->ops.data);
  tl_dot_sched *e = cg_dot_sched(g, D);
  int32_t a = o->opnd[0], b = o->opnd[1], accv = o->opnd[2], res = o->res[0];
  tl_type *at = &tl_val(f, a)->type, *bt = &tl_val(f, b)->type, *rt = &tl_val(f, res)->type;
  if (at->kind != TL_KIND_TILE || bt->kind != TL_KIND_TILE || at->rank != 2 || bt->rank != 2)
    cg_unsupported(g, "dot of operands that are not 2-D tiles");
  dotgeo q;
  memset(&q, 0, sizeof q);
  int32_t M = q.M = at->shape[0], K = q.K = at->shape[1], N = q.N = bt->shape[1];
  tl_dtype adt = (tl_dtype)at->dtype, bdt = (tl_dtype)bt->dtype;
  bool fp8 = tl_dtype_is_fp8(adt) && tl_dtype_is_fp8(bdt);
  if (adt != bdt && !fp8) cg_unsupported(g, "dot of %s by %s (cast one operand)", tl_dtype_name(adt), tl_dtype_name(bdt));
  /* k of one instruction: 32 bytes of a K row (16-bit: k16, 8-bit: k32, tf32: k8) */
  int kstep = tl_dot_kstep(adt), eb = tl_dtype_bytes(adt);
  const char *ty = cg_mma_type(adt), *tyb = cg_mma_type(bdt);
  if (!kstep) cg_unsupported(g, "dot on %s operands (tensor cores take bf16, f16, f8e4m3, f8e5m2, i8, f32 as tf32)", tl_dtype_name(adt));
  if (fp8 && g->sm < 89) cg_unsupported(g, "dot on %s needs sm_89 or newer (mma.sync m16n8k32)", tl_dtype_name(adt));
  if (g->sm < 80) cg_unsupported(g, "dot on %s needs sm_80 or newer (mma.sync)", tl_dtype_name(adt));
  /* wgmma's warp tiling is also an mma.sync one: the fallback when the
   * operands do not stream */
  if (e && e->remapped && e->instr != TL_SCHED_INSTR_NONE && e->instr != TL_SCHED_MMA_WGMMA &&
      e->instr != tl_sched_mma_sync_of_k(kstep))
    cg_unsupported(g, "dot scheduled on mma instruction %d, not the %s one", e->instr,
                   tl_sched_instr_name(tl_sched_mma_sync_of_k(kstep)));
  if (rt->dtype != tl_dot_acc_dtype(adt))
    cg_unsupported(g, "dot of %s accumulating in %s (%s only)", tl_dtype_name(adt), tl_dtype_name((tl_dtype)rt->dtype),
                   tl_dtype_name(tl_dot_acc_dtype(adt)));
  if (M < 16 || N < 8 || K < kstep)
    cg_unsupported(g, "dot of shape %dx%dx%d (needs M >= 16, N >= 8, K >= %d)", M, N, K, kstep);
  const tl_layout *lc = cg_layout(g, res);
  if (lc->kind != TL_LAYOUT_MMA || tl_val(f, accv)->type.layout != rt->layout)
    TL_INTERNAL(g->ctx, "codegen: dot result/accumulator not in the mma layout");
  q.eb = eb;
  q.kstep = kstep;
  q.mk = 16 / eb;
  q.wm = lc->mma_wm;
  q.wn = lc->mma_wn;
  q.pairs = lc->mma_npair != 0;
  q.mrep = M / (16 * q.wm);
  q.nrep = N / (8 * q.wn);
  while ((1 << q.lognrep) < q.nrep) q.lognrep++;
  int logwm = 0;
  while ((1 << logwm) < q.wm) logwm++;
  if (!cg_dot_is_wgmma(p, D) && (q.mrep > MAXREP || q.nrep > MAXREP)) {
    int nw = g->f->warps > 0 ? g->f->warps : 4;
    cg_unsupported(g, "dot with %d x %d m16n8 blocks per warp (at most %d x %d) on %d warps: more warps split it "
                      "(@warps(%d) or --warps=%d), or a smaller tile", q.mrep, q.nrep, MAXREP, MAXREP, nw, 2 * nw, 2 * nw);
  }

  /* where the operands come from */
  opsrc sa = {0}, sb = {0};
  int32_t L = o->parent;
  const tl_layout *lb = p->vkind[b] == SRC_STREAM ? NULL : cg_layout(g, b);
  bool b_kn_staged = eb == 2 && lb && lb->nreg > 0 && lb->reg[0][1] != 0;
  int kinds[2] = {p->vkind[a], p->vkind[b]};
  /* vkind is per value: an operand staged once before another loop (a dot outside that loop, or
   * in a second loop, shares it) is staged here like any other (random test, seed 12869) */
  for (int w = 0; w < 2; w++)
    if (kinds[w] == SRC_INVARIANT && !cg_resident_slot(g, w ? b : a, D)) kinds[w] = SRC_STAGED;
  /* (a wgmma A is never restaged each step: dot_plan accepted it resident, registers or its own slot) */
  if (cg_dot_is_wgmma(p, D) && kinds[0] == SRC_STAGED && !p->wg_staged_a[cg_wg_index(p, D)] &&
      !cg_a_from_regs(g, a, lc, eb))
    TL_INTERNAL(g->ctx, "codegen: a wgmma dot's A staged per step");
  if (kinds[0] == SRC_STAGED && cg_a_from_regs(g, a, lc, eb)) kinds[0] = SRC_REGS;
  if (kinds[1] == SRC_STAGED && cg_b_from_regs(g, b, lc, eb)) kinds[1] = SRC_REGS;
  int scratch = 0, need = 0;
  for (int w = 0; w < 2; w++) { /* the staged operands' bytes: where their scratch goes (cg_scratch_pick) */
    if (kinds[w] != SRC_STAGED) continue;
    bool kn = w == 1 && b_kn_staged, swz;
    need += (w == 0 ? M : kn ? K : N) * cg_staged_pitch(g, D, w, w == 0 ? K : kn ? N : K, eb, &swz);
  }
  int sbase = cg_scratch_pick(g, need);
  bool need_stage = false;
  for (int w = 0; w < 2; w++) {
    opsrc *s = w ? &sb : &sa;
    int32_t x = w ? b : a;
    s->kind = kinds[w];
    if (s->kind == SRC_REGS) continue;
    if (s->kind == SRC_STREAM) {
      cg_stream *st = &p->streams[p->vstream[x]];
      cg_ring *R = NULL;
      for (int i = 0; i < p->nring; i++)
        if (p->rings[i].for_op == st->for_op) R = &p->rings[i];
      if (!R || !R->rd_slot) TL_INTERNAL(g->ctx, "codegen: streamed operand before its ring");
      s->base = LLVMBuildAdd(g->B, cg_smem_base32(g),
                             LLVMBuildAdd(g->B, cg_i32(g, st->offset),
                                          LLVMBuildMul(g->B, R->rd_slot, cg_i32(g, st->stage_bytes), ""), ""), "");
      s->rowbytes = st->pitch;
      s->nch = st->cols * st->eb / 16;
      s->swz = st->swz;
      /* A is always [M][K]; B streamed natural is [K][N], through trans [N][K] */
      s->kcontig = w == 0 || tl_val(f, x)->def < 0 || tl_op_at(f, tl_val(f, x)->def)->opc == TL_OP_trans;
      if (st->kn8) {
        s->kmaj = cg_stream_kmajor(g, st);
        s->nk_rowbytes = st->nk_pitch;
        s->nk_nch = st->rows * st->eb / 16;
      }
      continue;
    }
    /* (a resident tile in atoms is staged as its own rows: a B read [K][N]) */
    bool atoms = s->kind == SRC_INVARIANT && inv_atoms(g, x);
    bool kn = w == 1 && (b_kn_staged || atoms);
    int32_t rows = w == 0 ? M : kn ? K : N;
    int32_t cols = w == 0 ? K : kn ? N : K;
    s->rowbytes = cg_staged_pitch(g, D, w, cols, eb, &s->swz);
    s->nch = cols * eb / 16;
    s->kcontig = !kn;
    if (atoms && !cg_dot_is_wgmma(p, D)) {
      if (w == 0 || eb != 2 || lc->mma_npair)
        cg_unsupported(g, "a tile staged once as wgmma atoms (rows of %d bytes) read by an mma.sync dot %s (only a "
                          "16-bit [K][N] B without column pairs reads the atoms; load it twice)",
                       cols * eb, w == 0 ? "as its A" : "in this layout");
      s->atom_bytes = rows * 128;
      s->rowbytes = 128;
      s->nch = 8;
      s->swz = true;
    }
    if (s->kind == SRC_INVARIANT) {
      int off = p->vstream[x];
      if (!p->inv_done[x]) {
        /* once, in the loop's preheader */
        p->inv_done[x] = true;
        LLVMValueRef reg, phi = cg_iv_phi(g, L, &reg);
        LLVMBasicBlockRef here = LLVMGetInsertBlock(g->B);
        LLVMPositionBuilderBefore(g->B, LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(phi, 0)));
        if (cg_q_tma_owns(g, x)) { /* fa3's q: the producer's TMA, waited for at the tile's start (emit_q_tma.c) */
          LLVMPositionBuilderAtEnd(g->B, here);
          s->base = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, off), "");
          continue;
        }
        cg_barrier(g);
        bool wg = (w == 0 && cg_dot_is_wgmma(p, D)) || atoms;
        if (atoms) stage_atoms(g, x, off, tl_val(f, x)->type.shape[0], eb);
        else stage(g, x, cg_i32(g, off), s, eb, w == 1 && !kn);
        /* st.shared writes through the generic proxy, wgmma reads through the async one */
        if (wg) cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
        cg_barrier(g);
        LLVMPositionBuilderAtEnd(g->B, here);
      }
      s->base = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, off), "");
      continue;
    }
    s->base = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, sbase + scratch), "");
    scratch += rows * s->rowbytes;
    need_stage = true;
  }
  if (cg_dot_is_wgmma(p, D)) {
    int wi = cg_wg_index(p, D);
    cg_stream *st_b = p->wg_staged_b[wi] || p->wg_res_b[wi] ? NULL : &p->streams[p->vstream[b]];
    cg_wgmma_src wa = {.base = sa.base, .kmajor = true, .rowbytes = sa.rowbytes, .krows = 0};
    if (p->wg_staged_a[wi]) wa = stage_wgmma_a(g, wi, K); /* (TILEC_WGMMA_STAGED_A=1: MN-major, its own slot) */
    else if (sa.kind == SRC_REGS) wa.regs = pack_regs_a(g, &q, a);
    else if (sa.rowbytes > 128) wa.rowbytes = 128, wa.katom = M * 128; /* resident [K/64][M][64] atoms */
    /* K-major when this dot reads the slot through a trans (a slot several dots share is read
     * K-major by one and N-major by another: the same bytes, dot_plan.c) */
    cg_wgmma_src wb = {0};
    if (p->wg_res_b[wi]) /* a resident [K][N] slot (one 128-byte atom of N), read N-major */
      wb = (cg_wgmma_src){.base = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_i32(g, p->vstream[b]), ""), .kmajor = false,
                          .rowbytes = 128, .krows = K};
    else if (st_b) {
      wb = (cg_wgmma_src){.base = sb.base, .kmajor = sb.kcontig, .rowbytes = sb.rowbytes, .krows = st_b->rows};
      if (wb.kmajor && sb.rowbytes > 128) wb.rowbytes = 128, wb.katom = st_b->rows * 128; /* [K/64][N][64] atoms */
    } else {
      wb = (cg_wgmma_src){.base = LLVMBuildAdd(g->B, cg_smem_base32(g), staged_b_off(g, wi), ""),
                          .kmajor = true, .rowbytes = K * eb, .krows = N};
      stage_wgmma_b(g, wi);
    }
    int lag = 0;
    cg_ring *RB = NULL;
    for (int i = 0; i < p->nring; i++)
      if (p->rings[i].for_op == L) lag = p->rings[i].lag, RB = &p->rings[i];
    if (st_b && st_b->wg_tr && RB && RB->ws) { /* the producer transposed it into slot rd_slot's K-major buffer */
      if (!st_b->ws_tr) TL_INTERNAL(g->ctx, "codegen: a warp-specialized ring with an untransposed 8-bit [K][N] B");
      LLVMValueRef buf = cg_add_c(g, cg_smem_base32(g), st_b->tr_off);
      wb = (cg_wgmma_src){.base = LLVMBuildAdd(g->B, buf, cg_mul_c(g, RB->rd_slot, K * N), ""), .kmajor = true,
                          .rowbytes = K, .krows = N};
    } else if (st_b && st_b->wg_tr) /* 8-bit [K][N]: read K-major from the buffer it is transposed into */
      wb = (cg_wgmma_src){.base = transpose_kn8(g, st_b, RB, sb.base), .kmajor = true, .rowbytes = K, .krows = N};
    /* (a chained dot: the next dot's wait covers its group, which that dot's wgmmas follow on the
     * same accumulator registers) */
    int mode = p->wg_defer[wi] || p->wg_chain[wi] ? 2 : lag && p->wg_inflight[wi] ? 1 : 0;
    bool deferred_in_loop = false;
    for (int k = 0; k < p->nwg; k++)
      deferred_in_loop = deferred_in_loop || (p->wg_defer[k] && tl_op_at(f, p->wg_dots[k])->parent == L);
    if (p->wg_sink[wi]) { /* issued in the next iteration (emit_overlap.c) */
      cg_overlap_defer(g, o, RB->rd_slot);
      return;
    }
    bool late = mode == 0 && cg_overlap_waiter(g, D); /* the waiting dot of a loop with a late dot */
    cg_ws_turn_before(g, D, L);
    if (late) cg_overlap_before_waiting(g, L); /* (form >= 3: the rescale, mixed by ptxas into the score dot's issue) */
    if (mode == 0 && !late && cg_lazy_wait_loop(g, L)) { /* waited for before its result's first reader */
      cg_emit_wgmma(g, o, &wa, &wb, 2);
      cg_lazy_wait_push(g, res);
      cg_lazy_issue_next(g, o);
      return;
    }
    cg_emit_wgmma(g, o, &wa, &wb, late ? 2 : mode);
    if (late) {
      cg_overlap_issue(g, L, res);
      return;
    }
    /* warp-specialized: the slot(s) read are free; with a deferred dot in
     * the loop the waiting dot frees the slot before (its wait completed the
     * deferred group that read it), the deferred dot frees nothing */
    for (int i = 0; i < p->nring && mode != 2; i++)
      if (p->rings[i].for_op == L && p->rings[i].ws) cg_ws_after_dot(g, &p->rings[i], mode == 1 || deferred_in_loop);
    /* this dot waited for every group: the deferred dots' results (their
     * carried values) are complete from here on */
    for (int k = 0; mode == 0 && k < p->nwg; k++)
      if (p->wg_defer[k] && tl_op_at(f, p->wg_dots[k])->parent == L) cg_wgmma_fence_val(g, p->wg_carried[k]);
    return;
  }
  if (need_stage) {
    if (sbase + scratch > 227 * 1024) cg_unsupported(g, "dot staging needs %d bytes of shared memory", sbase + scratch);
    cg_scratch_use(g, scratch);
    if (g->scratch_base != sbase) TL_INTERNAL(g->ctx, "codegen: a dot's staging moved (%d, %d)", g->scratch_base, sbase);
    cg_barrier(g);
    int off = 0;
    if (sa.kind == SRC_STAGED) {
      stage(g, a, cg_i32(g, sbase), &sa, eb, false);
      off = M * sa.rowbytes;
    }
    if (sb.kind == SRC_STAGED) stage(g, b, cg_i32(g, sbase + off), &sb, eb, sb.kcontig);
    cg_barrier(g);
  }

  /* per-lane parts of the ldmatrix addresses: matrix m = lane / 8, row r = lane % 8 */
  /* read %laneid here (side effect: not hoisted), so that the per-slice
   * fragment addresses are recomputed in the loop (a few integer ops)
   * instead of living in registers across it */
  LLVMValueRef lane = cg_asm(g, g->i32, "mov.u32 $0, %laneid;", "=r", NULL, 0, true);
  LLVMValueRef mat = LLVMBuildLShr(g->B, lane, cg_i32(g, 3), "");
  q.row8 = LLVMBuildAnd(g->B, lane, cg_i32(g, 7), "");
  q.m_lo = LLVMBuildAnd(g->B, mat, cg_i32(g, 1), "");
  q.m_hi = LLVMBuildLShr(g->B, mat, cg_i32(g, 1), "");
  q.wmi = LLVMBuildAnd(g->B, g->warp, cg_i32(g, q.wm - 1), "");
  q.wni = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, g->warp, cg_i32(g, logwm), ""), cg_i32(g, q.wn - 1), "");
  /* the per-lane parts of the fragment addresses, once per dot (load_a / load_b
   * add the m/n-block and k-slice steps: constants, see soff) */
  /* (a loop-invariant A, attention's Q, keeps the direct form: measured,
   * the split one costs attn CAUSAL a register and D=128 CAUSAL 24 bytes of
   * spills; a streamed A saves registers with it: docs/codegen.md; an mma.sync
   * dot under fp8-acc=promote also keeps it: with its temporary accumulator the
   * split form costs 28 bytes of spills on gemm_fp8_tensor/_rowcol) */
  sa.use_so = sa.kind != SRC_REGS && sa.kind != SRC_INVARIANT && !cg_dot_promotes(g, o);
  if (sa.use_so) {
    LLVMValueRef row_l = LLVMBuildAdd(g->B, cg_mul_c(g, q.wmi, 16), LLVMBuildAdd(g->B, q.row8, cg_mul_c(g, q.m_lo, 8), ""), "");
    cg_soff_init(g, &sa.so, sa.base, sa.rowbytes, sa.nch, sa.swz, row_l, cg_mul_c(g, q.m_hi, 16), 16);
  }
  if (sb.kind != SRC_REGS && (sb.kcontig || (eb == 2 && !q.pairs))) {
    LLVMValueRef row_l, cb_l;
    int cb_max = 16;
    if (sb.kcontig) {
      row_l = q.pairs ? LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, cg_mul_c(g, q.wni, 16), q.m_hi, ""), cg_mul_c(g, q.row8, 2), "")
                      : LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, cg_mul_c(g, q.wni, 8), cg_mul_c(g, q.m_hi, 8 * q.wn), ""), q.row8, "");
      cb_l = cg_mul_c(g, q.m_lo, 16);
    } else {
      row_l = LLVMBuildAdd(g->B, q.row8, cg_mul_c(g, q.m_lo, 8), "");
      cb_l = cg_mul_c(g, LLVMBuildAdd(g->B, cg_mul_c(g, q.wni, 8), cg_mul_c(g, q.m_hi, 8 * q.wn), ""), eb);
      cb_max = ((q.wn - 1) * 8 + 8 * q.wn) * eb;
    }
    if (sb.atom_bytes) cg_soff_init_atoms(g, &sb.so, sb.base, sb.atom_bytes, row_l, cb_l, cb_max);
    else cg_soff_init(g, &sb.so, sb.base, sb.rowbytes, sb.nch, sb.swz, row_l, cb_l, cb_max);
    sb.use_so = true;
  } else if (sb.atom_bytes) {
    cg_unsupported(g, "a tile staged once as wgmma atoms read by an mma.sync dot as a B in column pairs (load it twice)");
  }

  cg_val *acc = cg_get(g, accv);
  int32_t nregs = tl_layout_nregs(lc);
  cg_val *d = cg_new_val(g, res, nregs);
  for (int32_t r = 0; r < nregs; r++) d->r[r] = acc->r[r];

  int nk = K / kstep;
  /* fragments of slice kk+1 are loaded before the mmas of slice kk */
  /* (no table: always; a table: when ldmatrix_sched chose it) */
  bool lookahead = !p->follow || (e && e->scheduled && e->lookahead);
  /* the run-time choice of B's slot layout (8-bit [K][N] B) costs the
   * registers of the second fragment set: no lookahead (0 spills) */
  if (sb.kmaj) lookahead = false;
  /* promote's temporary costs as many registers as the accumulator: the
   * second fragment set goes (0 spills on 128x128 over 8 warps) */
  if (cg_dot_promotes(g, o)) lookahead = false;
  if (sa.kind == SRC_REGS) sa.pk = pack_regs_a(g, &q, a);
  if (sb.kind == SRC_REGS) sb.pk = pack_regs_b(g, &q, b);
  frags *fr = tl_alloc(&g->ctx->arena, sizeof(frags) * 2);
  load_a(g, &q, &sa, a, 0, &fr[0]);
  load_b(g, &q, &sb, 0, &fr[0]);
  /* fp8-acc=promote: the mmas of at most CG_PROMOTE_K / kstep slices chain
   * through the temporary t (the first from a zero C), then f32 adds put t
   * into d; otherwise they chain through d itself */
  bool promote = cg_dot_promotes(g, o);
  int per = promote ? CG_PROMOTE_K / kstep : nk;
  LLVMValueRef *t = promote ? tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)nregs) : d->r;
  LLVMValueRef fzero = LLVMConstReal(g->f32, 0.0);
  for (int32_t r = 0; promote && r < nregs; r++) t[r] = fzero;
  for (int kk = 0; kk < nk; kk++) {
    frags *cur = lookahead ? &fr[kk & 1] : &fr[0], *nxt = &fr[(kk + 1) & 1];
    if (!lookahead && kk > 0) {
      load_a(g, &q, &sa, a, kk, cur);
      load_b(g, &q, &sb, kk, cur);
    }
    if (lookahead && kk + 1 < nk) {
      load_a(g, &q, &sa, a, kk + 1, nxt);
      load_b(g, &q, &sb, kk + 1, nxt);
    }
    for (int nj = 0; nj < q.nrep; nj++)
      for (int mi = 0; mi < q.mrep; mi++) {
        /* serpentine over mi keeps one operand in place */
        int m = nj & 1 ? q.mrep - 1 - mi : mi;
        int32_t base = (m << (2 + q.lognrep)) | (nj << 2);
        LLVMValueRef args[14];
        for (int k = 0; k < 4; k++) args[k] = cur->a[m][k];
        args[4] = cur->b[nj][0];
        args[5] = cur->b[nj][1];
        for (int k = 0; k < 4; k++) args[6 + k] = promote && kk % per == 0 ? fzero : t[base + k];
        LLVMValueRef out = cg_mma_sync(g, kstep, ty, tyb, args);
        for (int k = 0; k < 4; k++) t[base + k] = LLVMBuildExtractValue(g->B, out, (unsigned)k, "");
      }
    if (promote && (kk % per == per - 1 || kk == nk - 1))
      for (int32_t r = 0; r < nregs; r++) d->r[r] = LLVMBuildFAdd(g->B, d->r[r], t[r], "");
  }
}
