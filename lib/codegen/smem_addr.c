/* smem_addr.c: small LLVM helpers of the dot emitters, and the addressing
 * of shared-memory slots and staged operands: the 16-byte-chunk XOR swizzle
 * and the per-lane + constant offset cache (cg_soff).  Pure emission
 * helpers: they keep no state beyond the caller's structs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "schedule.h"

#include "ring.h"

/* ---- LLVM helpers ------------------------------------------------------------------ */

LLVMValueRef cg_smem_base32(cg *g) {
  LLVMValueRef z = cg_i32(g, 0);
  return LLVMBuildTrunc(g->B, LLVMBuildPtrToInt(g->B, cg_smem_ptr(g, z), g->i64, ""), g->i32, "");
}

bool cg_is_zero(LLVMValueRef v) { return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0; }

LLVMValueRef cg_to_i64(cg *g, LLVMValueRef v) {
  return LLVMTypeOf(v) == g->i64 ? v : LLVMBuildSExt(g->B, v, g->i64, "");
}

LLVMValueRef cg_tid32(cg *g) {
  return LLVMBuildAdd(g->B, LLVMBuildShl(g->B, g->warp, cg_i32(g, 5), ""), g->lane, "");
}

void cg_asm_void(cg *g, const char *text, const char *cons, LLVMValueRef *args, int n) {
  cg_asm(g, g->vd, text, cons, args, n, true);
}

/* XOR applied to the 16-byte chunk index of a row of nch chunks: rows of 128
 * bytes and more use row % 8, narrower rows pack 8 / nch rows per 128 bytes. */
LLVMValueRef cg_swizzle_of(cg *g, LLVMValueRef row, int nch) {
  if (nch >= 8) return LLVMBuildAnd(g->B, row, cg_i32(g, 7), "");
  if (nch == 4) return LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, row, cg_i32(g, 1), ""), cg_i32(g, 3), "");
  if (nch == 2) return LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, row, cg_i32(g, 2), ""), cg_i32(g, 1), "");
  return cg_i32(g, 0);
}

LLVMValueRef cg_slot_off(cg *g, const cg_stream *s, LLVMValueRef r, LLVMValueRef ch) {
  int nch = s->cols * s->eb / 16;
  if (s->wg_atoms) {
    LLVMValueRef atom = LLVMBuildLShr(g->B, ch, cg_i32(g, 3), "");
    LLVMValueRef pc = LLVMBuildXor(g->B, LLVMBuildAnd(g->B, ch, cg_i32(g, 7), ""), LLVMBuildAnd(g->B, r, cg_i32(g, 7), ""), "");
    LLVMValueRef o = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, atom, cg_i32(g, s->rows * 128), ""),
                                  LLVMBuildMul(g->B, r, cg_i32(g, 128), ""), "");
    return LLVMBuildAdd(g->B, o, LLVMBuildShl(g->B, pc, cg_i32(g, 4), ""), "");
  }
  LLVMValueRef pc = s->swz ? LLVMBuildXor(g->B, ch, cg_swizzle_of(g, r, nch), "") : ch;
  return LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r, cg_i32(g, s->pitch), ""), LLVMBuildShl(g->B, pc, cg_i32(g, 4), ""), "");
}

/* swizzle_of of a constant row. */
static int swizzle_const(int row, int nch) {
  return nch >= 8 ? row & 7 : nch == 4 ? (row >> 1) & 3 : nch == 2 ? (row >> 2) & 1 : 0;
}

/* i32 x + c and x * c without the identities (the builder folds only constants). */
LLVMValueRef cg_add_c(cg *g, LLVMValueRef x, int64_t c) {
  return c ? LLVMBuildAdd(g->B, x, cg_i32(g, c), "") : x;
}
LLVMValueRef cg_mul_c(cg *g, LLVMValueRef x, int64_t c) {
  if (c == 1) return x;
  if (c > 0 && (c & (c - 1)) == 0) {
    int sh = 0;
    while ((1LL << sh) != c) sh++;
    return LLVMBuildShl(g->B, x, cg_i32(g, sh), "");
  }
  return LLVMBuildMul(g->B, x, cg_i32(g, c), "");
}


void cg_soff_init(cg *g, cg_soff *s, LLVMValueRef base, int pitch, int nch, bool swz, LLVMValueRef row_l,
                      LLVMValueRef cb_l, int cb_max) {
  int bound = cb_max | (swz ? 7 << 4 : 0);
  s->flmask = 0;
  while (s->flmask < bound) s->flmask = s->flmask << 1 | 1;
  s->pitch = pitch;
  s->nch = nch;
  s->swz = swz;
  s->atom_bytes = 0;
  s->nkey = 0;
  bool row0 = cg_is_zero(row_l);
  s->base = row0 ? base : LLVMBuildAdd(g->B, base, cg_mul_c(g, row_l, pitch), "");
  s->fl = cb_l;
  if (swz && !row0 && nch >= 2)
    s->fl = LLVMBuildXor(g->B, cb_l, LLVMBuildShl(g->B, cg_swizzle_of(g, row_l, nch), cg_i32(g, 4), ""), "");
}

void cg_soff_init_atoms(cg *g, cg_soff *s, LLVMValueRef base, int atom_bytes, LLVMValueRef row_l, LLVMValueRef cb_l,
                        int cb_max) {
  if (cb_max >= 128) { /* the lane's atom column: base + (cb_l / 128) * atom_bytes, then cb_l % 128 */
    base = LLVMBuildAdd(g->B, base, cg_mul_c(g, LLVMBuildLShr(g->B, cb_l, cg_i32(g, 7), ""), atom_bytes), "");
    cb_l = LLVMBuildAnd(g->B, cb_l, cg_i32(g, 127), "");
    cb_max = 127;
  }
  cg_soff_init(g, s, base, 128, 8, true, row_l, cb_l, cb_max);
  s->atom_bytes = atom_bytes;
}

LLVMValueRef cg_soff_at(cg *g, cg_soff *s, int row_c, int cb_c) {
  int64_t atom_c = 0; /* atoms: the constant atom column */
  if (s->atom_bytes) {
    atom_c = (int64_t)(cb_c >> 7) * s->atom_bytes;
    cb_c &= 127;
  }
  int fc = s->swz ? cb_c ^ (swizzle_const(row_c, s->nch) << 4) : cb_c;
  int key = s->swz ? fc & ~15 & s->flmask : 0; /* unswizzled: F_l + cb_c, all constant */
  int k = 0;
  while (k < s->nkey && s->key[k] != key) k++;
  LLVMValueRef v = k < s->nkey ? s->val[k] : NULL;
  if (!v) {
    LLVMValueRef x = key ? LLVMBuildXor(g->B, s->fl, cg_i32(g, key), "") : s->fl;
    v = cg_is_zero(x) ? s->base : LLVMBuildAdd(g->B, s->base, x, "");
    if (k < 32) { /* else uncached */
      s->key[k] = key;
      s->val[k] = v;
      s->nkey++;
    }
  }
  int64_t c = (int64_t)row_c * s->pitch + (s->swz ? (fc & 15) + (fc & ~15 & ~s->flmask) : cb_c) + atom_c;
  return cg_add_c(g, v, c);
}
