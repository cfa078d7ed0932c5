/* emit_narrow_copy.c: requires a streamed tile's start as emit_copy_issue.c cg_issue_stream makes it
 * (the tile's first element, its row dim, the tensor's sizes and strides); emits the tile's
 * 16-byte chunks as 16/w cp.async.ca copies of w = 8 or 4 bytes into the same swizzled slot
 * bytes, for a tensor whose base and row pitch are w-byte aligned but not 16-byte aligned (bf16
 * with K = 4100: rows of 8200 bytes).  Opt-in: TILEC_NARROW_COPY=1 (default off, not yet run on a
 * GPU); otherwise such a tile takes the element copy.  docs/pipelines.md "Narrow copies". */
#include "cg.h"
#include "code_env.h"

#include "ring.h"

bool cg_narrow_on(void) { return tl_code_env_on("TILEC_NARROW_COPY"); }

/* i1, uniform: the tensor's last dim is contiguous and its base, the tile's start address and
 * its row pitch (bytes) are all multiples of w, so every w-byte piece of every chunk (a chunk
 * starts at tile start + row * pitch + 16 * column) is w-byte aligned in global memory as in
 * shared memory, and an empty piece pointed at the base is aligned too. */
LLVMValueRef cg_narrow_fits(cg *g, LLVMValueRef unit_stride, LLVMValueRef base, LLVMValueRef gaddr0,
                            LLVMValueRef rowbytes, int w) {
  LLVMValueRef any = LLVMBuildOr(g->B, LLVMBuildOr(g->B, base, gaddr0, ""), rowbytes, "");
  LLVMValueRef low = LLVMBuildAnd(g->B, any, cg_i64(g, w - 1), "");
  return LLVMBuildAnd(g->B, unit_stride, LLVMBuildICmp(g->B, LLVMIntEQ, low, cg_i64(g, 0), ""), "");
}

/* x (i64) clamped to [0, hi]. */
static LLVMValueRef clamp0(cg *g, LLVMValueRef x, int64_t hi) {
  x = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, x, cg_i64(g, 0), ""), cg_i64(g, 0), x, "");
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, x, cg_i64(g, hi), ""), cg_i64(g, hi), x, "");
}

/* The pieces of one chunk: dst (i32) and src (i64) of its first byte, rok (i1: its row inside the
 * tensor), col (i64: its first column), as 16/w cp.async.ca of w bytes.  Piece q starts at column
 * col + q*w/eb; its bytes inside the tensor are 0 where the row is outside or that column is
 * negative (a tile starting before column 0), else (cols - that column) * eb clamped to [0, w].
 * (No piece straddles column 0: base, tile start and row pitch w-byte aligned make the tile's
 * first column a multiple of w/eb elements.) */
static void chunk_pieces(cg *g, const cg_narrow_tile *n, int w, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef rok,
                         LLVMValueRef col) {
  int eb = n->s->eb;
  LLVMValueRef left0 = LLVMBuildMul(g->B, LLVMBuildSub(g->B, n->cols_sz, col, ""), cg_i64(g, eb), "");
  const char *txt = w == 8 ? "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p cp.async.ca.shared.global [$0], [$1], 8, $2; }"
                           : "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p cp.async.ca.shared.global [$0], [$1], 4, $2; }";
  for (int q = 0; q < 16 / w; q++) {
    LLVMValueRef at = q ? LLVMBuildAdd(g->B, col, cg_i64(g, q * w / eb), "") : col;
    LLVMValueRef in = LLVMBuildAnd(g->B, rok, LLVMBuildICmp(g->B, LLVMIntSGE, at, cg_i64(g, 0), ""), "");
    /* (the select before the clamp: the clamp stays per chunk in the loop, not w-many values
     * hoisted out of it and live across it) */
    LLVMValueRef left = q ? LLVMBuildSub(g->B, left0, cg_i64(g, q * w), "") : left0;
    LLVMValueRef bytes = clamp0(g, LLVMBuildSelect(g->B, in, left, cg_i64(g, 0), ""), w);
    LLVMValueRef empty = LLVMBuildICmp(g->B, LLVMIntEQ, bytes, cg_i64(g, 0), "");
    /* never form an address outside the tensor: an empty piece points at the base */
    LLVMValueRef ps = LLVMBuildSelect(g->B, empty, n->base, q ? LLVMBuildAdd(g->B, src, cg_i64(g, q * w), "") : src, "");
    LLVMValueRef args[4] = {q ? LLVMBuildAdd(g->B, dst, cg_i32(g, q * w), "") : dst, ps,
                            LLVMBuildTrunc(g->B, bytes, g->i32, ""), cg_i32(g, 1)};
    cg_asm_void(g, txt, "r,l,r,r,~{memory}", args, 4);
  }
}

/* A compact loop over the tile's chunks (i = tid, tid + threads, ... < rows * nch: the code of one
 * chunk, not of every chunk of a thread at every issue point: the ring prologue issues S - 1
 * stages), each chunk as two 8-byte pieces where `wide` (i1, uniform; NULL: always), else four
 * 4-byte ones.  Chunk (r, c) goes to the slot bytes the 16-byte copy writes (cg_slot_off: the
 * swizzle permutes whole chunks, so piece q is at + q*w) from the address the 16-byte copy reads;
 * each piece's bytes as chunk_pieces says, and cp.async zero-fills the rest (the ragged K tail
 * and rows past the end read zeros); an empty piece reads nothing and points at the base. */
void cg_narrow_copy(cg *g, const cg_narrow_tile *n, LLVMValueRef wide) {
  const cg_stream *s = n->s;
  int eb = s->eb, epc = 16 / eb, nch = s->cols * eb / 16, total = s->rows * nch;
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef lb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow.loop");
  LLVMBasicBlockRef xb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow.done");
  if (total < n->threads)
    LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntULT, n->tid, cg_i32(g, total), "cp.in.tile"), lb, xb);
  else
    LLVMBuildBr(g->B, lb);
  LLVMPositionBuilderAtEnd(g->B, lb);
  LLVMValueRef i = LLVMBuildPhi(g->B, g->i32, "cp.i");
  LLVMValueRef r = LLVMBuildUDiv(g->B, i, cg_i32(g, nch), "");
  LLVMValueRef c = LLVMBuildURem(g->B, i, cg_i32(g, nch), "");
  LLVMValueRef dst = LLVMBuildAdd(g->B, n->sbase, cg_slot_off(g, s, r, c), "");
  LLVMValueRef r64 = LLVMBuildZExt(g->B, r, g->i64, "");
  LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c, g->i64, ""), cg_i64(g, epc), "");
  LLVMValueRef rok = LLVMBuildICmp(g->B, LLVMIntULT, LLVMBuildAdd(g->B, n->row0, r64, ""), n->rows_sz, "");
  if (n->ok) rok = LLVMBuildAnd(g->B, rok, n->ok, "");
  LLVMValueRef col = LLVMBuildAdd(g->B, n->col0, c64, "");
  LLVMValueRef src = LLVMBuildAdd(g->B, n->gaddr0,
                                  LLVMBuildMul(g->B, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r64, n->rowstride, ""), c64, ""),
                                               cg_i64(g, eb), ""), "");
  if (!wide) {
    chunk_pieces(g, n, 8, dst, src, rok, col);
  } else {
    LLVMBasicBlockRef b8 = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow8");
    LLVMBasicBlockRef b4 = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow4");
    LLVMBasicBlockRef nx = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow.next");
    LLVMBuildCondBr(g->B, wide, b8, b4);
    LLVMPositionBuilderAtEnd(g->B, b8);
    chunk_pieces(g, n, 8, dst, src, rok, col);
    LLVMBuildBr(g->B, nx);
    LLVMPositionBuilderAtEnd(g->B, b4);
    chunk_pieces(g, n, 4, dst, src, rok, col);
    LLVMBuildBr(g->B, nx);
    LLVMPositionBuilderAtEnd(g->B, nx);
  }
  LLVMValueRef inext = LLVMBuildAdd(g->B, i, cg_i32(g, n->threads), "");
  LLVMBasicBlockRef lend = LLVMGetInsertBlock(g->B);
  LLVMValueRef tid = n->tid;
  LLVMAddIncoming(i, &tid, &entry, 1);
  LLVMAddIncoming(i, &inext, &lend, 1);
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntULT, inext, cg_i32(g, total), ""), lb, xb);
  LLVMPositionBuilderAtEnd(g->B, xb);
}
