/* emit_wgmma.c: requires a dot whose schedule entry chose wgmma
 * (mma_remap), B streamed into 1024-byte aligned ring slots and A streamed,
 * resident (staged once) or in registers, in the wgmma canonical layouts
 * (dot_plan.c's plan; 8-bit operands both K-major, never in registers), and
 * the accumulator in the mma layout with every warp along M;
 * emits per warpgroup one wgmma.mma_async.m64nNk16 (bf16/f16) or m64nNk32
 * (e4m3/e5m2) per 64-row block and k slice, the operands read by
 * shared-memory matrix descriptors.  docs/pipelines.md "Hopper wgmma".
 *
 * Accumulator: wgmma's D fragment of warp w of a warpgroup is rows
 * 16w..16w+15 of the warpgroup's 64, and for n8 block j registers 4j..4j+3
 * hold (row lane/4, col 8j + 2*(lane%4) + {0,1}) and (row + 8, same cols):
 * the mma.sync m16n8 pattern.  The layout tl_layout_mma_split(M, N, warps,
 * warps) has register bits (col 1, row 8, col 8, 16, .., N/2, then M
 * repeats of 16*warps rows) and warp bits rows 16, 32, ..: register 4j + c
 * of repeat mi is wgmma output 4j + c of the instruction for rows
 * 64*(warpgroup + warpgroups*mi); so outputs bind in order, no permutation.
 *
 * Descriptors (64 bits): start address >> 4 in bits 0-13, leading byte
 * offset (LBO) >> 4 in 16-29, stride byte offset (SBO) >> 4 in 32-45,
 * swizzle mode in 62-63 (1 = 128 B, 2 = 64 B, 3 = 32 B).  The hardware
 * applies the swizzle to address bits, so atoms must be aligned to their
 * repeat (8 rows: 1024 B for 128 B rows) and a k16 slice inside an atom is
 * just start + its byte offset (PTX ISA "Matrix Descriptor", "Strides").
 *   K-major (A, and B given as trans of [N][K]): rows of R = 32/64/128
 *     bytes, chunk c of row r at c ^ f(r) (emit_dot's row swizzle, equal to
 *     the R-byte mode); SBO = 8 rows = 8R; LBO unused (1); slice kk at
 *     start + 32 kk.  A k slice is 32 bytes of a row for every type (k16
 *     of bf16, k32 of e4m3), so 8-bit operands use the same descriptors.
 *   K-major rows over 128 bytes (16-bit: attention's q and k at D = 128):
 *     the slot is [K/64][rows][64] atoms of 128-byte rows (mode 1, SBO
 *     1024), slice kk at start + (kk/4) * rows*128 + 32 (kk%4) (katom).
 *   A in registers (attention's p): per k16 slice the four b32 registers of
 *     the mma.sync m16n8k16 A fragment of the warp's 16 rows, which is
 *     wgmma's register A fragment; `{a0..a3}, descB, p, 1, 1, trans-b`.
 *   N-major B ([K][N] kept, transpose flag 1): the slot is [N/64][K][64]
 *     atoms of 128-byte rows, 128 B swizzle inside; LBO = the distance of
 *     two 64-column atoms = K*128; SBO = 8 k-rows = 1024; slice kk at
 *     start + 16*128 kk. */
#include <stdio.h>
#include <string.h>

#include "cg.h"
#include "code_env.h"
#include "mma_tiling.h"
#include "schedule.h"

bool cg_arch_is_90a(cg *g) { return g->sm == 90 && (!g->o || !g->o->arch || !strcmp(g->o->arch, "sm_90a")); }

/* wgmma reads these only K-major (no transpose immediates): 8-bit and tf32 */
static bool kmajor_only(int dt) { return tl_dtype_bytes((tl_dtype)dt) != 2; }

int cg_wgmma_instr_n(int dt, int N) { return tl_wgmma_instr_n((tl_dtype)dt, N); }

bool cg_wgmma_fits(cg *g, int32_t D) {
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, D);
  if (!cg_arch_is_90a(g)) return false;
  const tl_type *at = &tl_val(f, o->opnd[0])->type, *bt = &tl_val(f, o->opnd[1])->type;
  const tl_type *rt = &tl_val(f, o->res[0])->type;
  if (at->kind != TL_KIND_TILE || bt->kind != TL_KIND_TILE || at->rank != 2 || bt->rank != 2) return false;
  bool fp8 = tl_dtype_is_fp8((tl_dtype)at->dtype) && tl_dtype_is_fp8((tl_dtype)bt->dtype);
  if (!fp8 && (!tl_dot_kstep((tl_dtype)at->dtype) || bt->dtype != at->dtype)) return false;
  if (rt->dtype != tl_dot_acc_dtype((tl_dtype)at->dtype)) return false;
  if (!cg_wgmma_instr_n(at->dtype, bt->shape[1])) return false;
  int warps = f->warps;
  int32_t M = at->shape[0], N = bt->shape[1];
  const tl_layout *lc = cg_layout(g, o->res[0]);
  if (lc->kind != TL_LAYOUT_MMA || lc->mma_npair || lc->mma_wm != warps || lc->mma_wn != 1) return false;
  return warps % 4 == 0 && M % (16 * warps) == 0 && N <= 256 && N % 8 == 0;
}

/* Byte offset of k slice kk (32 bytes of a row) in a K-major slot: inside
 * the row, or in atom column kk / 4 of a [K/64][rows][64] slot. */
static int kslice_off(const cg_wgmma_src *s, int kk) {
  return s->katom ? (kk * 32 / 128) * s->katom + (kk * 32) % 128 : kk * 32;
}

/* ... of A: K-major as above, MN-major ([K][M] rows of 128 bytes) 16 rows a k16 slice */
static int aslice_off(const cg_wgmma_src *a, int kk) { return a->kmajor ? kslice_off(a, kk) : kk * 16 * 128; }

static int swizzle_mode(int rowbytes) { return rowbytes == 128 ? 1 : rowbytes == 64 ? 2 : 3; }

/* The constant part of a descriptor (LBO, SBO, mode): bits 16.. */
static unsigned long long desc_hi(int lbo, int sbo, int mode) {
  return ((unsigned long long)(lbo >> 4) & 0x3FFF) << 16 | ((unsigned long long)(sbo >> 4) & 0x3FFF) << 32 |
         (unsigned long long)mode << 62;
}

/* i64 descriptor of shared address addr (i32) with the constant part hi. */
static LLVMValueRef desc_of(cg *g, LLVMValueRef addr, unsigned long long hi) {
  LLVMValueRef lo = LLVMBuildLShr(g->B, LLVMBuildAnd(g->B, addr, cg_i32(g, 0x3FFFF), ""), cg_i32(g, 4), "");
  return LLVMBuildOr(g->B, LLVMBuildZExt(g->B, lo, g->i64, ""), LLVMConstInt(g->i64, hi, 0), "");
}

static void asm_void(cg *g, const char *text) { cg_asm(g, g->vd, text, "~{memory}", NULL, 0, true); }

/* cg_asm for many operands (side effects: never moved across the fences). */
static LLVMValueRef asm_many(cg *g, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int n) {
  LLVMTypeRef *tys = tl_alloc(&g->ctx->arena, sizeof(LLVMTypeRef) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) tys[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef fty = LLVMFunctionType(ret, tys, (unsigned)n, 0);
  LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(g->B, fty, a, args, (unsigned)n, "");
}

/* One wgmma's text into buf: outputs $out0..$out0+nout-1, A at $ai ($ai..$ai+3 from registers), the B
 * descriptor at $bi, scale-d at $si (an i32: 0 = D not read); the immediates of the operand types.
 * Returns the characters written. */
static int wgmma_text(char *buf, int wn, int kstep, const char *dty, const char *aty, const char *bty, int nout,
                      bool areg, bool s32, bool b8, bool akmajor, bool bkmajor, int ai, int bi, int si) {
  int n = sprintf(buf, "{ .reg .pred p; setp.ne.b32 p, $%d, 0; wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", si,
                  wn, kstep, dty, aty, bty);
  for (int i = 0; i < nout; i++) n += sprintf(buf + n, "%s$%d", i ? "," : "", i);
  /* scale-a, scale-b 1 (integers have none); the transpose immediates exist
   * only for 16-bit types, and A from registers has none (only imm-trans-b) */
  if (areg) n += sprintf(buf + n, "}, {$%d,$%d,$%d,$%d}, $%d, p, 1, 1, %d; }", ai, ai + 1, ai + 2, ai + 3, bi, bkmajor ? 0 : 1);
  else if (s32) n += sprintf(buf + n, "}, $%d, $%d, p; }", ai, bi);
  else if (b8) n += sprintf(buf + n, "}, $%d, $%d, p, 1, 1; }", ai, bi);
  else n += sprintf(buf + n, "}, $%d, $%d, p, 1, 1, %d, %d; }", ai, bi, akmajor ? 0 : 1, bkmajor ? 0 : 1);
  return n;
}


void cg_emit_wgmma(cg *g, tl_op *o, const cg_wgmma_src *a, const cg_wgmma_src *b, int inflight) {
  tl_func *f = g->f;
  int32_t accv = o->opnd[2], res = o->res[0];
  const tl_type *at = &tl_val(f, o->opnd[0])->type, *bt = &tl_val(f, o->opnd[1])->type;
  int32_t M = at->shape[0], K = at->shape[1], N = bt->shape[1];
  /* one instruction takes 32 bytes of K: k16 of 16-bit, k32 of 8-bit, k8 of tf32 data */
  bool b8 = kmajor_only(at->dtype);
  bool s32 = at->dtype == TL_I8; /* i32 accumulators ("=r"), no scale-a/b immediates */
  int kstep = tl_dot_kstep((tl_dtype)at->dtype);
  if (b8 && !b->kmajor) TL_INTERNAL(g->ctx, "codegen: wgmma of an 8-bit or tf32 N-major B");
  int warps = f->warps, nwg = warps / 4, mrep = M / (64 * nwg), nk = K / kstep, nacc = N / 2;
  /* one instruction covers wn columns: N, or N / nsplit (i8 has no m64n256) */
  int wn = cg_wgmma_instr_n(at->dtype, N);
  /* fp8-acc=promote (below), by default (TILEC_PROMOTE_PARTS=0: off; measured on the H200 in the
   * seventeenth session: 128x256 s4 0.958 / 0.912x cuBLAS at 4096^3 / 8192^3 with parts, 0.40x
   * without, the 128x128 default 0.898 / 0.845): the accumulator promoted a 64x128 part at
   * a time (a 64-row block of the warpgroup, a 128-column half of an N = 256 tile in m64n128
   * instructions), so the temporary is one part (64 registers) and not the whole accumulator:
   * 256x128 / 128x256 tiles on two consumer warpgroups (128 accumulator registers a thread) fit
   * in the cooperative kernel's 232 consumer registers (docs/pipelines.md "fp8 promote: parts") */
  bool promote = cg_dot_promotes(g, o);
  bool parts = promote && b8 && b->kmajor && !tl_code_env_off("TILEC_PROMOTE_PARTS") && (mrep > 1 || N > 128);
  if (parts && wn > 128) wn = 128;
  int nsplit = wn ? N / wn : 1, nacc_i = wn / 2;
  if (!wn || (nsplit > 1 && !b->kmajor)) TL_INTERNAL(g->ctx, "codegen: wgmma N %d has no instruction", N);
  const char *rc = s32 ? "=r" : "=f";
  const tl_layout *lc = cg_layout(g, res);
  int lognrep = 0;
  while ((1 << lognrep) < N / 8) lognrep++;

  cg_val *acc = cg_get(g, accv);
  int32_t nregs = tl_layout_nregs(lc);
  if (nregs != mrep * nacc) TL_INTERNAL(g->ctx, "codegen: wgmma accumulator of %d registers, expected %d", nregs, mrep * nacc);
  cg_val *d = cg_new_val(g, res, nregs);
  for (int32_t r = 0; r < nregs; r++) d->r[r] = acc->r[r];

  /* descriptors: A rows of this warpgroup's block mi, B whole */
  LLVMValueRef wg = LLVMBuildLShr(g->B, g->warp, cg_i32(g, 2), "");
  bool areg = a->regs != NULL;
  if (areg && b8) TL_INTERNAL(g->ctx, "codegen: wgmma with an 8-bit or tf32 A from registers");
  /* an MN-major A ([K][M] rows of 128 bytes: one atom of M = 64 a warpgroup): as an N-major B's */
  if (!areg && !a->kmajor && (b8 || a->rowbytes != 128 || M != 64 * nwg * 1 || nwg != 1))
    TL_INTERNAL(g->ctx, "codegen: wgmma MN-major A of %d-byte rows, M %d on %d warpgroups", a->rowbytes, M, nwg);
  unsigned long long ahi = !areg && !a->kmajor ? desc_hi(a->krows * 128, 1024, 1)
                                               : desc_hi(16, 8 * a->rowbytes, swizzle_mode(a->rowbytes));
  unsigned long long bhi = b->kmajor ? desc_hi(16, 8 * b->rowbytes, swizzle_mode(b->rowbytes))
                                     : desc_hi(b->krows * 128, 1024, 1);
  int bstep = 16 * 128; /* N-major B: bytes from one k slice to the next */
  /* K-major B: the wn rows of instruction h start h*wn rows in (atoms: 128-byte rows) */
  int bsplit = wn * (b->katom ? 128 : b->rowbytes);
  LLVMValueRef bdesc = desc_of(g, b->base, bhi);
  LLVMValueRef adesc[8];
  if (mrep > 8) cg_unsupported(g, "wgmma dot with %d 64-row blocks per warpgroup", mrep);
  for (int mi = 0; mi < mrep && !areg; mi++) {
    LLVMValueRef row0 = LLVMBuildMul(g->B, LLVMBuildAdd(g->B, wg, cg_i32(g, nwg * mi), ""), cg_i32(g, 64 * a->rowbytes), "");
    adesc[mi] = desc_of(g, LLVMBuildAdd(g->B, a->base, row0, ""), ahi);
  }

  /* wgmma text: outputs $0..$nacc_i-1, then desc a (or the 4 registers of
   * A), desc b, scale-d; the accumulators come back as tied inputs */
  int na = areg ? 4 : 1; /* A operands */
  const char *dty = s32 ? "s32" : "f32", *aty = cg_mma_type((tl_dtype)at->dtype), *bty = cg_mma_type((tl_dtype)bt->dtype);
  char *text = tl_alloc(&g->ctx->arena, 64 * (size_t)nacc_i + 256);
  char *cons = tl_alloc(&g->ctx->arena, 8 * (size_t)nacc_i + 64);
  bool akm = areg || a->kmajor; /* (an MN-major A: TILEC_WGMMA_STAGED_A=1's staged transpose) */
  wgmma_text(text, wn, kstep, dty, aty, bty, nacc_i, areg, s32, b8, akm, b->kmajor, nacc_i, nacc_i + na, nacc_i + na + 1);
  int c = 0;
  for (int i = 0; i < nacc_i; i++) c += sprintf(cons + c, "%s,", rc);
  c += sprintf(cons + c, areg ? "r,r,r,r,l,r" : "l,l,r");
  for (int i = 0; i < nacc_i; i++) c += sprintf(cons + c, ",%d", i);
  sprintf(cons + c, ",~{memory}");
  /* the operand fence after the wait: accumulators are not read before it */
  char *fcons = tl_alloc(&g->ctx->arena, 8 * (size_t)nacc + 16);
  c = 0;
  for (int i = 0; i < nacc; i++) c += sprintf(fcons + c, "%s%s", i ? "," : "", rc);
  for (int i = 0; i < nacc; i++) c += sprintf(fcons + c, ",%d", i);
  LLVMTypeRef *fl = tl_alloc(&g->ctx->arena, sizeof(LLVMTypeRef) * (size_t)nacc);
  for (int i = 0; i < nacc; i++) fl[i] = s32 ? g->i32 : g->f32;
  LLVMTypeRef st = LLVMStructTypeInContext(g->C, fl, (unsigned)nacc, 0);
  LLVMTypeRef sti = LLVMStructTypeInContext(g->C, fl, (unsigned)nacc_i, 0);
  LLVMValueRef *args = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * ((size_t)nacc_i + 6 * (size_t)(nk > 1 ? nk : 1)));

  /* fp8-acc=promote: each group of at most CG_PROMOTE_K / kstep slices
   * writes the temporary t (its first slice with scale-d = 0, so t needs no
   * zeroing: the instruction then computes D = A*B and does not read D; the
   * constraint string has no tied inputs for it), waits for it, and adds t
   * into the f32 accumulator d with ordinary f32 adds.  Otherwise one group
   * accumulates straight into d (scale-d = 1). */
  if (promote && inflight) TL_INTERNAL(g->ctx, "codegen: promoting wgmma dot with a group in flight");
  /* TILEC_PROMOTE_OVERLAP=1: group j's temporary is added after group j+1
   * is issued (wait_group 1), so the adds run under the tensor cores' next
   * group; only the last group is waited for with wait_group 0.  Two groups
   * at least: a k-step of K = 128 (fp8) promotes every 64 then. */
  int per = promote ? CG_PROMOTE_K / kstep : nk;
  bool overlap = promote && !parts && nk >= 2 && tl_code_env_on("TILEC_PROMOTE_OVERLAP");
  if (overlap && per > nk / 2) per = nk / 2;
  LLVMValueRef *prev = NULL; /* overlap: the temporary of the group before, still running */
  LLVMValueRef *t = promote ? tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)nregs) : d->r;
  /* A dot from a zero accumulator (attention's S = q k^T): its first k-slice
   * takes scale-d = 0 as a promotion group's does, so the zeros are never
   * moved into the accumulator registers (32-64 movs a step at BN 64-128). */
  bool from_zero = tl_is_zero_const(f, accv), zero_acc = !promote && from_zero;
  char *cons0 = NULL;
  if (promote || zero_acc) {
    cons0 = tl_alloc(&g->ctx->arena, 8 * (size_t)nacc_i + 64);
    c = 0;
    for (int i = 0; i < nacc_i; i++) c += sprintf(cons0 + c, "%s,", rc);
    sprintf(cons0 + c, "l,l,r,~{memory}");
  }
  /* parts: part p is 64-row block p / nsplit, instruction column range p % nsplit; each part
   * runs every promotion group of the dot into its own registers of t and adds them before the
   * next part's groups write t again (one part of t live at a time) */
  int nparts = parts ? mrep * nsplit : 1;
  for (int part = 0; part < nparts; part++)
  for (int k0 = 0; k0 < nk; k0 += per) {
    int mi_lo = parts ? part / nsplit : 0, mi_hi = parts ? mi_lo + 1 : mrep;
    int h_lo = parts ? part % nsplit : 0, h_hi = parts ? h_lo + 1 : nsplit;
    if (overlap) t = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)nregs); /* (prev keeps its own) */
    /* the grouped asm of this group (NULL: none), what it was built from, and its results */
    LLVMValueRef grp_call = NULL, *grp_args = NULL, *grp_ex = NULL;
    const char *grp_text = NULL, *grp_cons = NULL;
    int grp_nargs = 0;
    asm_void(g, "wgmma.fence.sync.aligned;");
    int kend = k0 + per < nk ? k0 + per : nk;
    /* One inline asm for the group's k slices where they all write the same accumulators (one
     * 64-row block and one instruction across N): the same instructions in the same order, but the
     * back end handles the nacc_i tied accumulators once instead of once a slice (its copies for
     * tied operands, their coalescing and the operand scans are most of a wgmma GEMM's register
     * allocation time: docs/codegen.md "Round 10").  The group's first slice is the only one that
     * may take scale-d = 0, and then no accumulator is read, so none is tied.  Integer (s32)
     * accumulators share the register class of the scale operands: not merged.
     * TILEC_WGMMA_MERGE=0: an asm a slice, as before. */
    if (mrep == 1 && nsplit == 1 && !s32 && kend - k0 > 1 && !tl_code_env_off("TILEC_WGMMA_MERGE")) {
      int nm = kend - k0, per_op = na + 2;
      bool first = promote || (zero_acc && k0 == 0);
      char *mtext = tl_alloc(&g->ctx->arena, (64 * (size_t)nacc_i + 256) * (size_t)nm);
      char *mcons = tl_alloc(&g->ctx->arena, 8 * (size_t)nacc_i + 16 * (size_t)nm * (size_t)per_op + 64);
      int tn = 0, cc = 0;
      for (int i = 0; i < nacc_i; i++) cc += sprintf(mcons + cc, "%s,", rc);
      for (int j = 0; j < nm; j++) {
        int kk = k0 + j, op = nacc_i + j * per_op;
        tn += wgmma_text(mtext + tn, wn, kstep, dty, aty, bty, nacc_i, areg, s32, b8, akm, b->kmajor, op, op + na, op + na + 1);
        if (j + 1 < nm) tn += sprintf(mtext + tn, "\n\t");
        if (areg)
          for (int i = 0; i < 4; i++) args[op - nacc_i + i] = a->regs[kk * 4 + i];
        else
          args[op - nacc_i] = LLVMBuildAdd(g->B, adesc[0], cg_i64(g, aslice_off(a, kk) >> 4), "");
        int boff = b->kmajor ? kslice_off(b, kk) : kk * bstep;
        args[op - nacc_i + na] = LLVMBuildAdd(g->B, bdesc, cg_i64(g, boff >> 4), "");
        args[op - nacc_i + na + 1] = cg_i32(g, first && j == 0 ? 0 : 1);
        cc += sprintf(mcons + cc, "%s%s", j ? "," : "", areg ? "r,r,r,r,l,r" : "l,l,r");
      }
      int nargs = nm * per_op;
      for (int i = 0; i < nacc_i && !first; i++) {
        args[nargs++] = t[i];
        cc += sprintf(mcons + cc, ",%d", i);
      }
      sprintf(mcons + cc, ",~{memory}");
      LLVMValueRef out = asm_many(g, sti, mtext, mcons, args, nargs);
      grp_ex = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)nacc_i);
      for (int i = 0; i < nacc_i; i++) t[i] = grp_ex[i] = LLVMBuildExtractValue(g->B, out, (unsigned)i, "");
      grp_call = out, grp_text = mtext, grp_cons = mcons, grp_nargs = nargs;
      grp_args = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)nargs);
      memcpy(grp_args, args, sizeof(LLVMValueRef) * (size_t)nargs);
    } else
    for (int kk = k0; kk < kend; kk++)
      for (int mi = mi_lo; mi < mi_hi; mi++)
        for (int h = h_lo; h < h_hi; h++) {
          int32_t base = (mi << (2 + lognrep)) + h * nacc_i;
          bool first = (promote && kk == k0) || (zero_acc && kk == 0);
          if (areg)
            for (int i = 0; i < 4; i++) args[i] = a->regs[(mi * nk + kk) * 4 + i];
          else
            args[0] = LLVMBuildAdd(g->B, adesc[mi], cg_i64(g, aslice_off(a, kk) >> 4), "");
          int boff = (b->kmajor ? kslice_off(b, kk) : kk * bstep) + h * bsplit;
          args[na] = LLVMBuildAdd(g->B, bdesc, cg_i64(g, boff >> 4), "");
          args[na + 1] = cg_i32(g, first ? 0 : 1);
          for (int i = 0; i < nacc_i && !first; i++) args[na + 2 + i] = t[base + i];
          LLVMValueRef out = asm_many(g, sti, text, first ? cons0 : cons, args, first ? na + 2 : nacc_i + na + 2);
          for (int i = 0; i < nacc_i; i++) t[base + i] = LLVMBuildExtractValue(g->B, out, (unsigned)i, "");
        }
    LLVMValueRef commit = cg_asm(g, g->vd, "wgmma.commit_group.sync.aligned;", "~{memory}", NULL, 0, true);
    cg_ws_turn_after_commit(g, o); /* (warp-specialized attention: the other warpgroup's turn) */
    if (inflight == 2) continue; /* deferred: waited for (and rebound) by the caller's plan */
    cg_ring_late_refill_due(g, o->parent); /* (TILEC_LATE_REFILL=2: thread 0's TMA issue under the groups) */
    if (k0 == 0 && part == 0) cg_emit_under(g, o); /* the scales and vectors read after the dot: under its group */
    /* A grouped asm followed by nothing but its commit (no code under the group, no overlap): the
     * wait joins them in one asm, whose outputs are the accumulators after the wait, which the
     * operand fence gave before: one asm with tied accumulators a group instead of two (the same
     * instructions in the same order: slices, commit, wait). */
    bool fold = grp_call && !prev && !overlap && LLVMGetLastInstruction(LLVMGetInsertBlock(g->B)) == commit;
    for (int i = 0; fold && i < nacc_i; i++) fold = !LLVMGetFirstUse(grp_ex[i]);
    if (fold) {
      char *ftext = tl_alloc(&g->ctx->arena, strlen(grp_text) + 96);
      sprintf(ftext, "%s\n\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned %d;", grp_text,
              inflight ? 1 : 0);
      LLVMInstructionEraseFromParent(commit);
      for (int i = 0; i < nacc_i; i++) LLVMInstructionEraseFromParent(grp_ex[i]);
      LLVMInstructionEraseFromParent(grp_call);
      LLVMValueRef out = asm_many(g, sti, ftext, grp_cons, grp_args, grp_nargs);
      for (int i = 0; i < nacc_i; i++) t[i] = LLVMBuildExtractValue(g->B, out, (unsigned)i, "");
      bool first_group = from_zero && k0 == 0;
      for (int32_t r = 0; promote && r < nregs; r++)
        d->r[r] = first_group ? t[r] : LLVMBuildFAdd(g->B, d->r[r], t[r], "");
      continue;
    }
    if (prev) { /* overlap: the group before completes, and is added, under this one */
      asm_void(g, "wgmma.wait_group.sync.aligned 1;");
      cg_wgmma_fence_regs(g, prev, nregs);
      bool first_group = from_zero && k0 == per; /* prev is group 0: the sum starts at it */
      for (int32_t r = 0; r < nregs; r++) d->r[r] = first_group ? prev[r] : LLVMBuildFAdd(g->B, d->r[r], prev[r], "");
    }
    if (overlap && k0 + per < nk) { /* not the last group: no wait for it yet */
      prev = t;
      continue;
    }
    asm_void(g, inflight ? "wgmma.wait_group.sync.aligned 1;" : "wgmma.wait_group.sync.aligned 0;");
    if (parts) { /* this part's registers only: the fence, then its adds */
      int32_t off = (mi_lo << (2 + lognrep)) + h_lo * nacc_i;
      cg_wgmma_fence_regs(g, &t[off], nacc_i);
      bool first_group = from_zero && k0 == 0;
      for (int32_t r = off; r < off + nacc_i; r++)
        d->r[r] = first_group ? t[r] : LLVMBuildFAdd(g->B, d->r[r], t[r], "");
      continue;
    }
    for (int mi = 0; mi < mrep; mi++) {
      int32_t base = mi << (2 + lognrep);
      LLVMValueRef out = asm_many(g, st, "", fcons, &t[base], nacc);
      for (int i = 0; i < nacc; i++) t[base + i] = LLVMBuildExtractValue(g->B, out, (unsigned)i, "");
    }
    /* the promotion: exact f32 adds (no contraction: nothing to fuse); into a zero
     * accumulator (a block-scaled GEMM's per-k-block product) the first group's sum is
     * the temporary itself (0 + t = t, but for the sign of a zero t) */
    bool first_group = from_zero && k0 == 0 && !prev;
    for (int32_t r = 0; promote && r < nregs; r++)
      d->r[r] = first_group ? t[r] : LLVMBuildFAdd(g->B, d->r[r], t[r], "");
  }
}

void cg_wgmma_fence_regs(cg *g, LLVMValueRef *r, int32_t nr) {
  for (int32_t b = 0; b < nr; b += 128) {
    int n = nr - b < 128 ? nr - b : 128;
    char *cons = tl_alloc(&g->ctx->arena, 8 * (size_t)n + 16);
    int c = 0;
    bool ints = LLVMTypeOf(r[b]) == g->i32; /* an i8 dot's s32 accumulator */
    for (int i = 0; i < n; i++) c += sprintf(cons + c, "%s%s", i ? "," : "", ints ? "=r" : "=f");
    for (int i = 0; i < n; i++) c += sprintf(cons + c, ",%d", i);
    LLVMTypeRef *fl = tl_alloc(&g->ctx->arena, sizeof(LLVMTypeRef) * (size_t)n);
    for (int i = 0; i < n; i++) fl[i] = ints ? g->i32 : g->f32;
    LLVMValueRef out = asm_many(g, LLVMStructTypeInContext(g->C, fl, (unsigned)n, 0), "", cons, &r[b], n);
    for (int i = 0; i < n; i++) r[b + i] = LLVMBuildExtractValue(g->B, out, (unsigned)i, "");
  }
}

void cg_wgmma_fence_val(cg *g, int32_t v) {
  cg_val *x = cg_get(g, v);
  LLVMValueRef *r = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)(x->n > 0 ? x->n : 1));
  memcpy(r, x->r, sizeof(LLVMValueRef) * (size_t)x->n);
  cg_wgmma_fence_regs(g, r, x->n);
  x->r = r; /* (a new array: the loop's phis keep theirs) */
}
