/* emit_narrow_copy.c: requires a streamed tile's 16-byte chunks as emit_ring.c issue_stream
 * makes them (each chunk's swizzled shared address, global address and bytes inside the
 * tensor); emits each chunk as 16/w cp.async.ca copies of w = 8 or 4 bytes into the same
 * slot bytes, for a tensor whose base and row pitch are w-byte aligned but not 16-byte
 * aligned (bf16 with K = 4100: rows of 8200 bytes).  Opt-in: TILEC_NARROW_COPY=1 (default
 * off, not yet run on a GPU); otherwise such a tile takes the element copy.
 * docs/pipelines.md "Narrow copies". */
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

/* Chunks 0..per-1 (dst: i32 shared address of the chunk's swizzled 16 bytes; src: i64 global
 * address, the base where the chunk is empty; nbytes: i32 bytes of the chunk inside the tensor,
 * counted from its start, 0..16; on: i32 != 0 where the thread copies it) as pieces of w bytes.
 * The swizzle permutes whole 16-byte chunks, so piece q of a chunk is at dst + q*w.  Its bytes
 * inside the tensor are nbytes - q*w clamped to [0, w]: cp.async zero-fills the rest (the ragged
 * K tail and rows past the end read zeros, as the 16-byte copies' src-size does). */
void cg_narrow_chunks(cg *g, int w, int per, const LLVMValueRef *dst, const LLVMValueRef *src,
                      const LLVMValueRef *nbytes, LLVMValueRef on, LLVMValueRef base) {
  const char *txt = w == 8 ? "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p cp.async.ca.shared.global [$0], [$1], 8, $2; }"
                           : "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p cp.async.ca.shared.global [$0], [$1], 4, $2; }";
  for (int j = 0; j < per; j++)
    for (int q = 0; q < 16 / w; q++) {
      LLVMValueRef left = q ? LLVMBuildSub(g->B, nbytes[j], cg_i32(g, q * w), "") : nbytes[j];
      if (q) left = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, left, cg_i32(g, 0), ""), cg_i32(g, 0), left, "");
      left = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, left, cg_i32(g, w), ""), cg_i32(g, w), left, "");
      LLVMValueRef s = q ? LLVMBuildAdd(g->B, src[j], cg_i64(g, q * w), "") : src[j];
      /* never form an address outside the tensor: an empty piece points at the base */
      if (q) s = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, left, cg_i32(g, 0), ""), base, s, "");
      LLVMValueRef d = q ? LLVMBuildAdd(g->B, dst[j], cg_i32(g, q * w), "") : dst[j];
      LLVMValueRef args[4] = {d, s, left, on};
      cg_asm_void(g, txt, "r,l,r,r,~{memory}", args, 4);
    }
}
