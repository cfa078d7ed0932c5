/* emit_copy_issue.c: requires the plan's streams (dot_plan.c) and the builder inside the ring's
 * stage (emit_ring.c); emits one stream's copy of one stage into its shared-memory slot, every form:
 * lean 16-byte cp.async without bounds when the tile is inside the tensor, bounded chunks, the
 * element loop for unaligned or strided tensors, the K-major 8-bit [K][N] B, narrow copies
 * (emit_narrow_copy.c); and the stream's start at a later iteration (cg_remat), made early where it
 * reads memory.  Keeps the ring's slots and commit groups as the caller set them (no commit here).
 * docs/pipelines.md "multistage". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axisinfo.h"
#include "cg.h"
#include "code_env.h"
#include "ring.h"

/* Slow copy of element (r, c) (i32) of stream s's tile: a predicated global
 * load (zero outside the tensor) and a shared store where `on` (i32) != 0. */
static void slow_copy_elem(cg *g, cg_stream *s, cg_tensor *t, LLVMValueRef *start, int rowd, LLVMValueRef ok,
                           LLVMValueRef gaddr0, LLVMValueRef base, LLVMValueRef sbase, LLVMValueRef rows_sz,
                           LLVMValueRef cols_sz, LLVMValueRef r, LLVMValueRef c, LLVMValueRef on,
                           LLVMValueRef kmaj) {
  int rank = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0])->type.rank;
  int eb = s->eb;
  LLVMValueRef r64 = LLVMBuildZExt(g->B, r, g->i64, ""), c64 = LLVMBuildZExt(g->B, c, g->i64, "");
  LLVMValueRef rin = LLVMBuildICmp(g->B, LLVMIntULT, LLVMBuildAdd(g->B, start[rowd], r64, ""), rows_sz, "");
  if (ok) rin = LLVMBuildAnd(g->B, rin, ok, "");
  LLVMValueRef gc = LLVMBuildAdd(g->B, start[rank - 1], c64, "");
  LLVMValueRef in = LLVMBuildAnd(g->B, rin, LLVMBuildICmp(g->B, LLVMIntULT, gc, cols_sz, ""), "");
  in = LLVMBuildAnd(g->B, in, LLVMBuildICmp(g->B, LLVMIntNE, on, cg_i32(g, 0), ""), "");
  LLVMValueRef eoff = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r64, t->stride[rowd], ""),
                                   LLVMBuildMul(g->B, c64, t->stride[rank - 1], ""), "");
  LLVMValueRef a = LLVMBuildAdd(g->B, gaddr0, LLVMBuildMul(g->B, eoff, cg_i64(g, eb), ""), "");
  a = LLVMBuildSelect(g->B, in, a, base, "");
  LLVMValueRef args[2] = {a, LLVMBuildZExt(g->B, in, g->i32, "")};
  /* 1-, 2-, 4- or 8-byte elements (f32: a tf32 dot's operands; i32 / i64: an operand prologue's packed words) */
  const char *txt = eb == 1   ? "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b16 $0, 0; @p ld.global.u8 $0, [$1]; }"
                    : eb == 2 ? "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b16 $0, 0; @p ld.global.b16 $0, [$1]; }"
                    : eb == 4 ? "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b32 $0, 0; @p ld.global.b32 $0, [$1]; }"
                              : "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b64 $0, 0; @p ld.global.b64 $0, [$1]; }";
  LLVMValueRef x = cg_asm(g, eb <= 2 ? g->i16 : eb == 4 ? g->i32 : g->i64, txt, eb <= 2 ? "=h,l,r" : eb == 4 ? "=r,l,r" : "=l,l,r",
                          args, 2, true);
  LLVMValueRef cb = LLVMBuildMul(g->B, c, cg_i32(g, eb), "");
  LLVMValueRef ch = LLVMBuildLShr(g->B, cb, cg_i32(g, 4), "");
  LLVMValueRef sa = LLVMBuildOr(g->B, cg_slot_off(g, s, r, ch), LLVMBuildAnd(g->B, cb, cg_i32(g, 15), ""), "");
  if (kmaj) { /* the [N][K] slot layout: element (r, c) at row c, byte r */
    int nk_nch = s->rows * eb / 16;
    LLVMValueRef rb = LLVMBuildMul(g->B, r, cg_i32(g, eb), "");
    LLVMValueRef kch = LLVMBuildLShr(g->B, rb, cg_i32(g, 4), "");
    if (s->swz) kch = LLVMBuildXor(g->B, kch, cg_swizzle_of(g, c, nk_nch), "");
    LLVMValueRef sa_nk = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, c, cg_i32(g, s->nk_pitch), ""),
                                      LLVMBuildOr(g->B, LLVMBuildShl(g->B, kch, cg_i32(g, 4), ""),
                                                  LLVMBuildAnd(g->B, rb, cg_i32(g, 15), ""), ""), "");
    sa = LLVMBuildSelect(g->B, kmaj, sa_nk, sa, "");
  }
  LLVMValueRef sargs[3] = {LLVMBuildAdd(g->B, sbase, sa, ""), x, on};
  cg_asm_void(g, eb == 1   ? "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p st.shared.u8 [$0], $1; }"
                 : eb == 2 ? "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p st.shared.b16 [$0], $1; }"
                 : eb == 4 ? "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p st.shared.b32 [$0], $1; }"
                           : "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p st.shared.b64 [$0], $1; }",
              eb <= 2 ? "r,h,r,~{memory}" : eb == 4 ? "r,r,r,~{memory}" : "r,l,r,~{memory}", sargs, 3);
}

/* Stream s (an 8-bit [K][N] B) is K-major in global memory (K stride 1, N
 * stride not 1): its slots hold it [N][K].  i1, loop-invariant. */
LLVMValueRef cg_stream_kmajor(cg *g, cg_stream *s) {
  tl_op *o = tl_op_at(g->f, s->load_op);
  tl_value *tv = tl_val(g->f, o->opnd[0]);
  int rank = tv->type.rank, rowd = -1;
  for (int d = 0; d < rank - 1; d++)
    if (o->dims[d] != 0) rowd = d;
  cg_tensor *t = &g->tensors[tv->index];
  return LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, t->stride[rowd], cg_i64(g, 1), ""),
                      LLVMBuildICmp(g->B, LLVMIntNE, t->stride[rank - 1], cg_i64(g, 1), ""), "");
}

/* Bytes (i32) of a 16-byte chunk that lie inside a row of `size` elements
 * when the chunk starts at element `at`: the elements left, clamped to
 * [0, epc] (signed: at < 0 is outside), times eb. */
static LLVMValueRef chunk_bytes_in_row(cg *g, LLVMValueRef size, LLVMValueRef at, int epc, int eb) {
  LLVMValueRef left = LLVMBuildSub(g->B, size, at, "");
  left = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, left, cg_i64(g, 0), ""), cg_i64(g, 0), left, "");
  left = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, left, cg_i64(g, epc), ""), cg_i64(g, epc), left, "");
  left = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, at, cg_i64(g, 0), ""), cg_i64(g, 0), left, "");
  return LLVMBuildTrunc(g->B, LLVMBuildMul(g->B, left, cg_i64(g, eb), ""), g->i32, "");
}

/* cp.async of a K-major 8-bit B tile into the [N][K] slot layout: chunk j of
 * a thread is row n (a column of the tile), 16 bytes along K. */
static void issue_nk(cg *g, cg_stream *s, cg_tensor *t, LLVMValueRef *start, int rowd, LLVMValueRef ok,
                     LLVMValueRef gaddr0, LLVMValueRef base, LLVMValueRef sbase, LLVMValueRef rows_sz,
                     LLVMValueRef cols_sz, LLVMValueRef tid, int threads, int per) {
  int rank = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0])->type.rank;
  int eb = s->eb, epc = 16 / eb, nch = s->rows * eb / 16;
  for (int j = 0; j < per; j++) {
    LLVMValueRef idx = LLVMBuildAdd(g->B, tid, cg_i32(g, j * threads), "");
    LLVMValueRef n = LLVMBuildUDiv(g->B, idx, cg_i32(g, nch), "");
    LLVMValueRef kc = LLVMBuildURem(g->B, idx, cg_i32(g, nch), "");
    LLVMValueRef pc = s->swz ? LLVMBuildXor(g->B, kc, cg_swizzle_of(g, n, nch), "") : kc;
    LLVMValueRef dst = LLVMBuildAdd(g->B, sbase, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, n, cg_i32(g, s->nk_pitch), ""),
                                                             LLVMBuildShl(g->B, pc, cg_i32(g, 4), ""), ""), "");
    LLVMValueRef n64 = LLVMBuildZExt(g->B, n, g->i64, "");
    LLVMValueRef k64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, kc, g->i64, ""), cg_i64(g, epc), "");
    LLVMValueRef gn = LLVMBuildAdd(g->B, start[rank - 1], n64, "");
    LLVMValueRef gk = LLVMBuildAdd(g->B, start[rowd], k64, "");
    LLVMValueRef nok = LLVMBuildICmp(g->B, LLVMIntULT, gn, cols_sz, "");
    if (ok) nok = LLVMBuildAnd(g->B, nok, ok, "");
    LLVMValueRef nbytes = LLVMBuildSelect(g->B, nok, chunk_bytes_in_row(g, rows_sz, gk, epc, eb), cg_i32(g, 0), "");
    LLVMValueRef eoff = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, n64, t->stride[rank - 1], ""), k64, "");
    LLVMValueRef src = LLVMBuildAdd(g->B, gaddr0, LLVMBuildMul(g->B, eoff, cg_i64(g, eb), ""), "");
    src = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, nbytes, cg_i32(g, 0), ""), base, src, "");
    LLVMValueRef args[4] = {dst, src, nbytes, cg_i32(g, 1)};
    cg_asm_void(g, "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p cp.async.cg.shared.global [$0], [$1], 16, $2; }",
             "r,l,r,r,~{memory}", args, 4);
  }
}

/* Per-thread geometry of a streamed tile copied in the register-lean form
 * (cg_issue_stream): chunk j of thread tid is row tid / nch + j*R, chunk
 * column tid % nch. */
typedef struct lean_geo {
  cg_stream *s;
  LLVMValueRef tid;
  int R, nch, epc, eb, rank, rowd;
  LLVMValueRef *start, ok, rows_sz, cols_sz, sbase, gaddr0, base, rowstride;
} lean_geo;

/* Bytes between rows r and r + 1 of a slot (the same chunk column): the row
 * pitch, or 128 inside the 128-byte-row atoms of a wgmma [K][N] B slot. */
static int slot_row_bytes(const cg_stream *s) { return s->wg_atoms ? 128 : s->pitch; }

/* Shared (i32) and global (i64) addresses of the thread's chunk 0. */
static void lean_base(cg *g, const lean_geo *l, LLVMValueRef *dst0, LLVMValueRef *src0) {
  LLVMValueRef r0 = LLVMBuildUDiv(g->B, l->tid, cg_i32(g, l->nch), "");
  LLVMValueRef c = LLVMBuildURem(g->B, l->tid, cg_i32(g, l->nch), "");
  *dst0 = LLVMBuildAdd(g->B, l->sbase, cg_slot_off(g, l->s, r0, c), "");
  LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c, g->i64, ""), cg_i64(g, l->epc), "");
  LLVMValueRef eoff = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, LLVMBuildZExt(g->B, r0, g->i64, ""), l->rowstride, ""), c64, "");
  *src0 = LLVMBuildAdd(g->B, l->gaddr0, LLVMBuildMul(g->B, eoff, cg_i64(g, l->eb), ""), "");
}

/* Chunks 0..per-1 in the lean form with bounds: addresses, bytes in bounds
 * (0: a row outside, or the clamped column remainder), empty copies pointed
 * at the tensor's base. */
static void lean_chunks(cg *g, const lean_geo *l, int per, LLVMValueRef *dst, LLVMValueRef *src, LLVMValueRef *nbytes) {
  LLVMValueRef d0, s0;
  lean_base(g, l, &d0, &s0);
  LLVMValueRef c = LLVMBuildURem(g->B, l->tid, cg_i32(g, l->nch), "");
  LLVMValueRef r064 = LLVMBuildZExt(g->B, LLVMBuildUDiv(g->B, l->tid, cg_i32(g, l->nch), ""), g->i64, "");
  LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c, g->i64, ""), cg_i64(g, l->epc), "");
  LLVMValueRef gcol = LLVMBuildAdd(g->B, l->start[l->rank - 1], c64, "");
  LLVMValueRef colbytes = chunk_bytes_in_row(g, l->cols_sz, gcol, l->epc, l->eb);
  LLVMValueRef step = LLVMBuildMul(g->B, l->rowstride, cg_i64(g, (int64_t)l->R * l->eb), "");
  LLVMValueRef g0 = LLVMBuildAdd(g->B, l->start[l->rowd], r064, "");
  for (int j = 0; j < per; j++) {
    dst[j] = LLVMBuildAdd(g->B, d0, cg_i32(g, j * l->R * slot_row_bytes(l->s)), "");
    src[j] = j ? LLVMBuildAdd(g->B, src[j - 1], step, "") : s0;
    LLVMValueRef grow = LLVMBuildAdd(g->B, g0, cg_i64(g, (int64_t)j * l->R), "");
    LLVMValueRef rok = LLVMBuildICmp(g->B, LLVMIntULT, grow, l->rows_sz, "");
    if (l->ok) rok = LLVMBuildAnd(g->B, rok, l->ok, "");
    nbytes[j] = LLVMBuildSelect(g->B, rok, colbytes, cg_i32(g, 0), "");
  }
  for (int j = 0; j < per; j++)
    src[j] = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, nbytes[j], cg_i32(g, 0), ""), l->base, src[j], "");
}

/* A compact element loop (this path is rare: unaligned or strided tensors),
 * so that it adds no register pressure to the main loop: i = tid, tid +
 * threads, ... < rows*cols (tid < threads), all addresses from i.  A tile of
 * fewer elements than threads (an operand prologue's scale row: 64 of them
 * for 128 threads) enters the loop only where tid < rows*cols: the body
 * stores unconditionally, and row tid / cols past the tile is the next slot
 * (another stage's tile, or the buffer after the ring). */
static void copy_slow_loop(cg *g, cg_stream *s, cg_tensor *t, LLVMValueRef *start, int rowd, LLVMValueRef ok,
                           LLVMValueRef gaddr0, LLVMValueRef base, LLVMValueRef sbase, LLVMValueRef rows_sz,
                           LLVMValueRef cols_sz, LLVMValueRef kmaj, LLVMValueRef tid, int threads) {
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef lb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.slow.loop");
  LLVMBasicBlockRef xb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.slow.done");
  if (s->rows * s->cols < threads)
    LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntULT, tid, cg_i32(g, s->rows * s->cols), "cp.in.tile"), lb, xb);
  else
    LLVMBuildBr(g->B, lb);
  LLVMPositionBuilderAtEnd(g->B, lb);
  LLVMValueRef i = LLVMBuildPhi(g->B, g->i32, "cp.i");
  LLVMValueRef r = LLVMBuildUDiv(g->B, i, cg_i32(g, s->cols), "");
  LLVMValueRef c = LLVMBuildURem(g->B, i, cg_i32(g, s->cols), "");
  slow_copy_elem(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, r, c, cg_i32(g, 1), kmaj);
  LLVMValueRef inext = LLVMBuildAdd(g->B, i, cg_i32(g, threads), "");
  LLVMBasicBlockRef lend = LLVMGetInsertBlock(g->B);
  LLVMAddIncoming(i, &tid, &entry, 1);
  LLVMAddIncoming(i, &inext, &lend, 1);
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntULT, inext, cg_i32(g, s->rows * s->cols), ""), lb, xb);
  LLVMPositionBuilderAtEnd(g->B, xb);
}

/* The scalar value giving the start of dim d of stream s's view: the
 * view's index, or for a gather's row dim (an operand prologue) its box's
 * first row. */
static int32_t stream_index(cg *g, cg_stream *s, int d) {
  int32_t ix = tl_op_at(g->f, s->load_op)->opnd[1 + d];
  if (s->prologue && s->row_base >= 0 && tl_val(g->f, ix)->type.kind == TL_KIND_TILE) return s->row_base;
  return ix;
}

/* The tile start of stream s at iv `ivs` (i64 per dim), its row dim, the
 * in-range test of the scalar-indexed dims (NULL: none) and the global
 * address of element (start) (i64). */
static int stream_start(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef *start, LLVMValueRef *ok, LLVMValueRef *gaddr0) {
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, s->load_op);
  tl_value *tv = tl_val(f, o->opnd[0]);
  int rank = tv->type.rank, rowd = -1;
  cg_tensor *t = &g->tensors[tv->index];
  LLVMValueRef base_off = cg_i64(g, 0);
  *ok = NULL;
  for (int d = 0; d < rank; d++) {
    start[d] = cg_to_i64(g, cg_remat(g, stream_index(g, s, d), s->for_op, ivs));
    if (!cg_is_zero(start[d])) {
      LLVMValueRef x = LLVMBuildMul(g->B, start[d], t->stride[d], "");
      base_off = cg_is_zero(base_off) ? x : LLVMBuildAdd(g->B, base_off, x, "");
    }
    if (o->dims[d] == 0) {
      LLVMValueRef sz = LLVMBuildZExt(g->B, t->size[d], g->i64, "");
      LLVMValueRef c = LLVMBuildICmp(g->B, LLVMIntULT, start[d], sz, "");
      *ok = *ok ? LLVMBuildAnd(g->B, *ok, c, "") : c;
    } else if (d != rank - 1) {
      rowd = d;
    }
  }
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, t->ptr, g->i64, "");
  *gaddr0 = cg_is_zero(base_off) ? base : LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, base_off, cg_i64(g, s->eb), ""), "");
  /* a ring row (1-D, rows 1): its row is element 0 of the last dim, whose start's test
   * (start + 0 < size) is then the row test, and its stride times row 0 adds nothing */
  return rowd < 0 && s->ring_row ? rank - 1 : rowd;
}

void cg_copy_slow(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, LLVMValueRef tid, int threads) {
  tl_value *tv = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0]);
  cg_tensor *t = &g->tensors[tv->index];
  int rank = tv->type.rank;
  LLVMValueRef start[TL_MAX_RANK], ok, gaddr0;
  int rowd = stream_start(g, s, ivs, start, &ok, &gaddr0);
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, t->ptr, g->i64, "");
  LLVMValueRef rows_sz = LLVMBuildZExt(g->B, t->size[rowd], g->i64, "");
  LLVMValueRef cols_sz = LLVMBuildZExt(g->B, t->size[rank - 1], g->i64, "");
  LLVMValueRef sbase = LLVMBuildAdd(g->B, cg_smem_base32(g),
                                    LLVMBuildAdd(g->B, cg_i32(g, s->offset),
                                                 LLVMBuildMul(g->B, slot, cg_i32(g, s->stage_bytes), ""), ""), "");
  if (!s->kn8 && !s->ring_row && cg_narrow_on()) {
    /* TILEC_NARROW_COPY=1 (emit_narrow_copy.c): 8- or 4-byte cp.async where the tensor allows,
     * waited for here (the callers' barrier then publishes the slot, as after the element loop) */
    LLVMValueRef rowbytes = LLVMBuildMul(g->B, t->stride[rowd], cg_i64(g, s->eb), "");
    LLVMValueRef unit = LLVMBuildICmp(g->B, LLVMIntEQ, t->stride[rank - 1], cg_i64(g, 1), "");
    LLVMValueRef f8 = cg_narrow_fits(g, unit, base, gaddr0, rowbytes, 8);
    LLVMValueRef f4 = s->eb <= 4 ? cg_narrow_fits(g, unit, base, gaddr0, rowbytes, 4) : NULL;
    LLVMBasicBlockRef nb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow");
    LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow.not");
    LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow.join");
    LLVMBuildCondBr(g->B, f4 ? f4 : f8, nb, sb);
    LLVMPositionBuilderAtEnd(g->B, nb);
    cg_narrow_tile nt = {s, tid, threads, start[rowd], start[rank - 1], ok, rows_sz, cols_sz, t->stride[rowd], gaddr0, base, sbase};
    cg_narrow_copy(g, &nt, f4 ? f8 : NULL);
    cg_asm_void(g, "cp.async.wait_all;", "~{memory}", NULL, 0);
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, sb);
    copy_slow_loop(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, NULL, tid, threads);
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, jb);
    return;
  }
  copy_slow_loop(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, s->kn8 ? cg_stream_kmajor(g, s) : NULL,
                 tid, threads);
}

/* Does scalar v, made again at another iteration of loop L (cg_remat), read memory: a scalar
 * load of a tensor the kernel never writes, such as a page table? */
static bool remat_reads_memory(cg *g, int32_t v, int32_t L) {
  tl_func *f = g->f;
  if (v == tl_op_at(f, L)->regions[0].args.data[0] || tl_defined_outside(f, v, L)) return false;
  tl_op *d = tl_op_at(f, tl_val(f, v)->def);
  if (d->opc == TL_OP_load) return true;
  for (int i = 0; i < d->nopnd; i++)
    if (remat_reads_memory(g, d->opnd[i], L)) return true;
  return false;
}

/* A stream whose tile start reads memory (attn_decode.tile's page table: `Kc[Table[b, n0 / PAGE],
 * ...]`) gets the start of the stage issued at `ivs` made here, before the ring's wait_group and
 * barrier: the entry's load (an L1 or L2 hit, 30-300 cycles) is then in flight under them, where
 * made in cg_issue_stream it stalled the copies' issue and the iteration behind them.  The same
 * values (cg_remat at the same iv); TILEC_INDEX_PREFETCH=0 makes them in cg_issue_stream. */
bool cg_stream_index_reads_memory(cg *g, cg_stream *s) {
  if (tl_code_env_off("TILEC_INDEX_PREFETCH")) return false;
  int rank = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0])->type.rank;
  for (int d = 0; d < rank; d++)
    if (remat_reads_memory(g, stream_index(g, s, d), s->for_op)) return true;
  return false;
}

void cg_stream_prefetch_index(cg *g, cg_stream *s, LLVMValueRef ivs) {
  int rank = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0])->type.rank;
  for (int d = 0; d < rank; d++) s->pre_start[d] = cg_to_i64(g, cg_remat(g, stream_index(g, s, d), s->for_op, ivs));
  s->n_pre = rank;
}

/* The 16-byte alignment test of a stage's tile, term by term (TILEC_ALIGN_TERMS=1; opt-in until measured):
 * (base | row pitch | start[d] * stride[d] * eb of each other indexed dim | last start * eb)
 * & 15 == 0 instead of ((base + sum of the terms) | row pitch) & 15.  With the row pitch a
 * multiple of 16 the row start's term is one too, and the last dim's stride is 1 under the
 * same test, so each term aligned implies the sum aligned; only the last start's term moves
 * with the loop (the rest is hoisted), and it is dropped where the axis facts prove it a
 * multiple of 16 bytes (k0 = k * BK).  Stricter than the sum: a base misaligned by exactly
 * what a start adds back takes the element copy (docs/pipelines.md "the copy issue"). */
static bool aligned_by_terms_on(void) { return tl_code_env_on("TILEC_ALIGN_TERMS"); }

static LLVMValueRef aligned_by_terms(cg *g, cg_stream *s, cg_tensor *t, LLVMValueRef *start, int rowd,
                                     LLVMValueRef base, LLVMValueRef rowbytes) {
  int rank = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0])->type.rank;
  LLVMValueRef mis = LLVMBuildOr(g->B, base, rowbytes, "");
  for (int d = 0; d < rank; d++) {
    if (d == rowd || cg_is_zero(start[d])) continue;
    if (d == rank - 1) {
      tl_axis_info ax = tl_axis_get(cg_axis(g), stream_index(g, s, d));
      if (tl_axis_elem_div(&ax) >= 16 / s->eb) continue; /* (powers of two; DIV_MAX for a zero start) */
    }
    LLVMValueRef x = d == rank - 1 ? start[d] : LLVMBuildMul(g->B, start[d], t->stride[d], "");
    mis = LLVMBuildOr(g->B, mis, LLVMBuildMul(g->B, x, cg_i64(g, s->eb), ""), "");
  }
  return mis;
}

/* i1: stream s's tile at `start` lies inside the tensor (rows and columns; ok: the scalar dims). */
static LLVMValueRef tile_inside(cg *g, cg_stream *s, LLVMValueRef *start, int rowd, int rank, LLVMValueRef ok,
                                LLVMValueRef rows_sz, LLVMValueRef cols_sz) {
  LLVMValueRef r_lo = start[rowd], c_lo = start[rank - 1];
  LLVMValueRef in = LLVMBuildAnd(
      g->B, LLVMBuildICmp(g->B, LLVMIntSGE, r_lo, cg_i64(g, 0), ""),
      LLVMBuildICmp(g->B, LLVMIntSLE, LLVMBuildAdd(g->B, r_lo, cg_i64(g, s->rows), ""), rows_sz, ""), "");
  in = LLVMBuildAnd(g->B, in, LLVMBuildICmp(g->B, LLVMIntSGE, c_lo, cg_i64(g, 0), ""), "");
  in = LLVMBuildAnd(g->B, in, LLVMBuildICmp(g->B, LLVMIntSLE, LLVMBuildAdd(g->B, c_lo, cg_i64(g, s->cols), ""), cols_sz, ""), "");
  return ok ? LLVMBuildAnd(g->B, in, ok, "") : in;
}

/* TILEC_WHOLE_ONCE=1 (opt-in until measured): where each dim's start is a monotone function of the
 * loop's iv, the tile is inside the tensor at every stage the loop issues iff it is at the first and
 * the last (each dim's test is an interval, its start's values between those at the ends), so the
 * test is made once, in the preheader, for the stages of [lo, last], last = lo + (hi-1-lo) / step *
 * step -- the stages the ring issues when it copies only iterations that run (cg_ring_range_on).  A
 * program failing it (a ragged K's last split) copies every stage as bounded chunks.  Index arithmetic is assumed not to overflow (as the
 * axis facts assume).  Direction of v in loop L's iv: 0 invariant, 1 non-decreasing, -1
 * non-increasing, 2 unknown (anything but + - by an invariant or same-direction term, * by a
 * constant, / and >> by a positive constant, min / max, integer widening). */
static tl_op *const_def(tl_func *f, int32_t v) {
  int32_t def = tl_val(f, v)->def;
  tl_op *d = def >= 0 ? tl_op_at(f, def) : NULL;
  return d && d->opc == TL_OP_const ? d : NULL;
}

static int iv_direction(tl_func *f, int32_t v, int32_t L, int depth) {
  if (v == tl_op_at(f, L)->regions[0].args.data[0]) return 1;
  if (tl_defined_outside(f, v, L)) return 0;
  tl_value *x = tl_val(f, v);
  if (depth > 16 || x->def < 0 || x->type.kind == TL_KIND_TILE || !tl_dtype_is_int((tl_dtype)x->type.dtype)) return 2;
  tl_op *d = tl_op_at(f, x->def);
  if (d->opc == TL_OP_const) return 0;
  if (d->nopnd < 1 || d->nopnd > 2) return 2;
  int a = iv_direction(f, d->opnd[0], L, depth + 1);
  int b = d->nopnd > 1 ? iv_direction(f, d->opnd[1], L, depth + 1) : 2;
  tl_op *c0 = const_def(f, d->opnd[0]), *c1 = d->nopnd > 1 ? const_def(f, d->opnd[1]) : NULL;
  bool k1 = c1 != NULL, k0 = c0 != NULL;
  switch (d->opc) {
  case TL_OP_sub: b = b == 2 ? 2 : -b; /* fall through */
  case TL_OP_add: case TL_OP_min: case TL_OP_max:
    if (a == 2 || b == 2) return 2;
    return a == 0 ? b : b == 0 || a == b ? a : 2;
  case TL_OP_mul:
    if (k1) return a == 2 ? 2 : c1->ival > 0 ? a : c1->ival < 0 ? -a : 0;
    if (k0) return b == 2 ? 2 : c0->ival > 0 ? b : c0->ival < 0 ? -b : 0;
    return 2;
  case TL_OP_div: case TL_OP_shr: return k1 && c1->ival > 0 ? a : 2;
  case TL_OP_cast:
    return tl_dtype_is_int((tl_dtype)tl_val(f, d->opnd[0])->type.dtype) &&
                   tl_dtype_bytes((tl_dtype)x->type.dtype) >= tl_dtype_bytes((tl_dtype)tl_val(f, d->opnd[0])->type.dtype)
               ? a : 2;
  default: return 2;
  }
}

static bool whole_once_on(void) { return tl_code_env_on("TILEC_WHOLE_ONCE"); }

void cg_stream_whole_once(cg *g, int32_t L, LLVMValueRef lo64, LLVMValueRef step64, LLVMTypeRef ivty) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  if (!whole_once_on() || !cg_ring_range_on(g, L) || !LLVMIsAConstantInt(step64) || LLVMConstIntGetSExtValue(step64) <= 0)
    return;
  LLVMValueRef hi64 = cg_to_i64(g, cg_get(g, tl_op_at(f, L)->opnd[1])->r[0]);
  LLVMValueRef n1 = LLVMBuildSDiv(g->B, LLVMBuildSub(g->B, LLVMBuildSub(g->B, hi64, cg_i64(g, 1), ""), lo64, ""), step64, "");
  LLVMValueRef ends[2] = {lo64, LLVMBuildAdd(g->B, lo64, LLVMBuildMul(g->B, n1, step64, ""), "")};
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != L || s->ring_row || s->kn8 || cg_stream_index_reads_memory(g, s)) continue;
    tl_value *tv = tl_val(f, tl_op_at(f, s->load_op)->opnd[0]);
    int rank = tv->type.rank;
    bool mono = true;
    for (int d = 0; d < rank; d++) mono = mono && iv_direction(f, stream_index(g, s, d), L, 0) != 2;
    if (!mono) continue;
    cg_tensor *t = &g->tensors[tv->index];
    LLVMValueRef both = NULL;
    for (int e = 0; e < 2; e++) { /* (stream_start's starts at each end; its address is left unused) */
      LLVMValueRef iv = ivty == g->i64 ? ends[e] : LLVMBuildTrunc(g->B, ends[e], ivty, "");
      LLVMValueRef start[TL_MAX_RANK], ok, gaddr0;
      int rowd = stream_start(g, s, iv, start, &ok, &gaddr0);
      if (rowd < 0) break;
      LLVMValueRef rows_sz = LLVMBuildZExt(g->B, t->size[rowd], g->i64, "");
      LLVMValueRef cols_sz = LLVMBuildZExt(g->B, t->size[rank - 1], g->i64, "");
      LLVMValueRef in = tile_inside(g, s, start, rowd, rank, ok, rows_sz, cols_sz);
      both = both ? LLVMBuildAnd(g->B, both, in, "") : in;
    }
    s->whole_once = both;
  }
}

void cg_stream_whole_once_end(cg *g, int32_t L) {
  for (int i = 0; g->plan && i < g->plan->nstream; i++)
    if (g->plan->streams[i].for_op == L) g->plan->streams[i].whole_once = NULL;
}

void cg_issue_stream(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, bool branchy) {
  tl_func *f = g->f;
  if (s->ring_row) { /* a ring row's cp.async side (its ring's TMA fallback): the element copy */
    s->n_pre = 0;
    cg_copy_slow(g, s, ivs, slot, cg_tid32(g), f->warps * 32);
    return;
  }
  tl_op *o = tl_op_at(f, s->load_op);
  tl_value *tv = tl_val(f, o->opnd[0]);
  int rank = tv->type.rank;
  cg_tensor *t = &g->tensors[tv->index];
  LLVMValueRef start[TL_MAX_RANK], ok = NULL, base_off = cg_i64(g, 0);
  int rowd = -1;
  int n_pre = s->n_pre;
  s->n_pre = 0;
  for (int d = 0; d < rank; d++) {
    start[d] = n_pre ? s->pre_start[d] : cg_to_i64(g, cg_remat(g, stream_index(g, s, d), s->for_op, ivs));
    if (!cg_is_zero(start[d])) { /* (the builder folds only constants) */
      LLVMValueRef x = LLVMBuildMul(g->B, start[d], t->stride[d], "");
      base_off = cg_is_zero(base_off) ? x : LLVMBuildAdd(g->B, base_off, x, "");
    }
    if (o->dims[d] == 0) {
      LLVMValueRef sz = LLVMBuildZExt(g->B, t->size[d], g->i64, "");
      LLVMValueRef c = LLVMBuildICmp(g->B, LLVMIntULT, start[d], sz, "");
      ok = ok ? LLVMBuildAnd(g->B, ok, c, "") : c;
    } else if (d != rank - 1) {
      rowd = d;
    }
  }
  int eb = s->eb, epc = 16 / eb, nch = s->cols * eb / 16;
  /* a box of fewer chunks than threads (an operand prologue's scale row):
   * one chunk for each of the first rows * nch threads */
  int threads = f->warps * 32, per = s->rows * nch / threads;
  bool few = s->rows * nch < threads;
  if (few) per = 1;
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, t->ptr, g->i64, "");
  LLVMValueRef gaddr0 = cg_is_zero(base_off) ? base : LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, base_off, cg_i64(g, eb), ""), "");
  LLVMValueRef rowstride = t->stride[rowd];
  LLVMValueRef rowbytes = LLVMBuildMul(g->B, rowstride, cg_i64(g, eb), "");
  LLVMValueRef fast = LLVMBuildICmp(g->B, LLVMIntEQ, t->stride[rank - 1], cg_i64(g, 1), "");
  LLVMValueRef mis = s->kn8 || !aligned_by_terms_on() ? LLVMBuildOr(g->B, gaddr0, rowbytes, "")
                                                      : aligned_by_terms(g, s, t, start, rowd, base, rowbytes);
  mis = LLVMBuildAnd(g->B, mis, cg_i64(g, 15), "");
  fast = LLVMBuildAnd(g->B, fast, LLVMBuildICmp(g->B, LLVMIntEQ, mis, cg_i64(g, 0), ""), "");
  LLVMValueRef kmaj = NULL, fast_nk = NULL;
  if (s->kn8) {
    kmaj = cg_stream_kmajor(g, s);
    fast = LLVMBuildAnd(g->B, fast, LLVMBuildNot(g->B, kmaj, ""), "");
    LLVMValueRef mis_nk = LLVMBuildOr(g->B, gaddr0, LLVMBuildMul(g->B, t->stride[rank - 1], cg_i64(g, eb), ""), "");
    mis_nk = LLVMBuildAnd(g->B, mis_nk, cg_i64(g, 15), "");
    fast_nk = branchy ? LLVMBuildAnd(g->B, kmaj, LLVMBuildICmp(g->B, LLVMIntEQ, mis_nk, cg_i64(g, 0), ""), "") : NULL;
  }
  LLVMValueRef rows_sz = LLVMBuildZExt(g->B, t->size[rowd], g->i64, "");
  LLVMValueRef cols_sz = LLVMBuildZExt(g->B, t->size[rank - 1], g->i64, "");
  LLVMValueRef sbase = LLVMBuildAdd(g->B, cg_smem_base32(g),
                                    LLVMBuildAdd(g->B, cg_i32(g, s->offset),
                                                 LLVMBuildMul(g->B, slot, cg_i32(g, s->stage_bytes), ""), ""), "");
  LLVMValueRef tid = cg_tid32(g);
  /* per chunk: row, column, shared address, bytes in bounds */
  LLVMValueRef dst[64], src[64], nbytes[64];
  if (per > 64) cg_unsupported(g, "streamed operand of %d chunks per thread", per);
  /* Register-lean form when a thread's chunks share their column: chunk j is
   * row r0 + j*R (R = threads / nch), column c, and the XOR swizzle of row
   * r0 + j*R is that of r0 (R % 8 == 0).  Then the shared address is one
   * base + constants, the global one a chain src += R*rowstride*eb, and only
   * the row test is per chunk (lean_chunks).  Every per-chunk term depends on
   * this iteration's values, so nothing per chunk is hoisted out of the loop
   * (the general form below left ~5 registers per chunk live across it). */
  int R = !few && nch <= threads && threads % nch == 0 ? threads / nch : 0;
  bool lean = R && (!(s->swz || s->wg_atoms) || R % 8 == 0);
  /* in the loop, a tile wholly inside the tensor (uniform test) takes plain
   * 16-byte copies: no per-chunk bounds, sizes or address selects */
  bool whole_path = lean && branchy && !s->kn8;
  /* the thread index read here (side effect: not hoisted), so the per-thread
   * offsets are recomputed each iteration (a few integer ops) instead of
   * living in registers across the loop */
  LLVMValueRef ltid = branchy ? cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true) : tid;
  lean_geo lg = {s, ltid, R, nch, epc, eb, rank, rowd, start, ok, rows_sz, cols_sz, sbase, gaddr0, base, rowstride};
  if (lean && !whole_path) lean_chunks(g, &lg, per, dst, src, nbytes);
  /* The general form (chunks of a thread in different columns, or rows
   * whose swizzle differs), split when nch and threads are powers of two.
   * Chunk j of a thread is idx = tid + j*threads, row idx / nch, column
   * idx % nch; with nch and threads powers of two (tid < threads) that is
   * row r_l + R_j, column c_l + C_j: r_l = tid / nch, c_l = tid % nch per
   * lane, and the constants R_j = (j*threads) / nch, C_j = (j*threads) % nch,
   * with bits disjoint from the lane parts.  So the per-lane part is computed
   * once and each chunk adds constants (cg_soff for the swizzled shared address;
   * 64-bit source address lane part + R_j*rowstride*eb + C_j*16; the row
   * bound per chunk, the column clamp per distinct C_j): the same values as
   * the direct per-chunk formula, a fraction of the instructions. */
  bool split = !few && !lean && !(nch & (nch - 1)) && !(threads & (threads - 1));
  if (split) {
    int lgn = 0;
    while ((1 << lgn) < nch) lgn++;
    LLVMValueRef r_l = threads > nch ? LLVMBuildLShr(g->B, tid, cg_i32(g, lgn), "") : cg_i32(g, 0);
    LLVMValueRef c_l = threads > nch ? LLVMBuildAnd(g->B, tid, cg_i32(g, nch - 1), "") : tid;
    cg_soff so = {0};
    if (!s->wg_atoms)
      cg_soff_init(g, &so, sbase, s->pitch, nch, s->swz, r_l, LLVMBuildShl(g->B, c_l, cg_i32(g, 4), ""),
                ((threads < nch ? threads : nch) - 1) * 16);
    LLVMValueRef r64 = LLVMBuildZExt(g->B, r_l, g->i64, "");
    LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c_l, g->i64, ""), cg_i64(g, epc), "");
    LLVMValueRef grow_l = LLVMBuildAdd(g->B, start[rowd], r64, "");
    LLVMValueRef gcol_l = LLVMBuildAdd(g->B, start[rank - 1], c64, "");
    LLVMValueRef src_l = LLVMBuildAdd(g->B, gaddr0, LLVMBuildMul(g->B, LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r64, rowstride, ""), c64, ""),
                                                                  cg_i64(g, eb), ""), "");
    LLVMValueRef colnb[64];
    int colkey[64], ncol = 0;
    for (int j = 0; j < per; j++) {
      int Rj = (int)(((int64_t)j * threads) >> lgn), Cj = (int)(((int64_t)j * threads) & (nch - 1));
      /* (a wgmma atom slot: its own offsets, on the same row and column) */
      dst[j] = s->wg_atoms ? LLVMBuildAdd(g->B, sbase, cg_slot_off(g, s, cg_add_c(g, r_l, Rj), cg_add_c(g, c_l, Cj)), "")
                           : cg_soff_at(g, &so, Rj, Cj * 16);
      LLVMValueRef grow = Rj ? LLVMBuildAdd(g->B, grow_l, cg_i64(g, Rj), "") : grow_l;
      LLVMValueRef rok = LLVMBuildICmp(g->B, LLVMIntULT, grow, rows_sz, "");
      if (ok) rok = LLVMBuildAnd(g->B, rok, ok, "");
      int k = 0;
      while (k < ncol && colkey[k] != Cj) k++;
      if (k == ncol) {
        LLVMValueRef gcol = Cj ? LLVMBuildAdd(g->B, gcol_l, cg_i64(g, (int64_t)Cj * epc), "") : gcol_l;
        colkey[ncol] = Cj;
        colnb[ncol++] = chunk_bytes_in_row(g, cols_sz, gcol, epc, eb);
      }
      nbytes[j] = LLVMBuildSelect(g->B, rok, colnb[k], cg_i32(g, 0), "");
      src[j] = src_l;
      if (Rj) src[j] = LLVMBuildAdd(g->B, src[j], LLVMBuildMul(g->B, rowbytes, cg_i64(g, Rj), ""), "");
      if (Cj) src[j] = LLVMBuildAdd(g->B, src[j], cg_i64(g, (int64_t)Cj * 16), "");
      /* never form an address outside the tensor: point empty copies at its base */
      src[j] = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, nbytes[j], cg_i32(g, 0), ""), base, src[j], "");
    }
  }
  for (int j = 0; !lean && !split && j < per; j++) {
    LLVMValueRef idx = LLVMBuildAdd(g->B, tid, cg_i32(g, j * threads), "");
    LLVMValueRef r = LLVMBuildUDiv(g->B, idx, cg_i32(g, nch), "");
    LLVMValueRef c = LLVMBuildURem(g->B, idx, cg_i32(g, nch), "");
    dst[j] = LLVMBuildAdd(g->B, sbase, cg_slot_off(g, s, r, c), "");
    LLVMValueRef r64 = LLVMBuildZExt(g->B, r, g->i64, "");
    LLVMValueRef c64 = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, c, g->i64, ""), cg_i64(g, epc), "");
    LLVMValueRef grow = LLVMBuildAdd(g->B, start[rowd], r64, "");
    LLVMValueRef gcol = LLVMBuildAdd(g->B, start[rank - 1], c64, "");
    LLVMValueRef rok = LLVMBuildICmp(g->B, LLVMIntULT, grow, rows_sz, "");
    if (ok) rok = LLVMBuildAnd(g->B, rok, ok, "");
    nbytes[j] = LLVMBuildSelect(g->B, rok, chunk_bytes_in_row(g, cols_sz, gcol, epc, eb), cg_i32(g, 0), "");
    LLVMValueRef eoff = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, r64, rowstride, ""), c64, "");
    src[j] = LLVMBuildAdd(g->B, gaddr0, LLVMBuildMul(g->B, eoff, cg_i64(g, eb), ""), "");
    /* never form an address outside the tensor: point empty copies at its base */
    src[j] = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, nbytes[j], cg_i32(g, 0), ""), base, src[j], "");
  }
  /* fast: cp.async; slow (any stride or alignment): element by element, zeros
   * outside.  In the loop a uniform branch picks one; in the preheader (no
   * new blocks there) both are emitted, predicated. */
  LLVMValueRef slow = LLVMBuildNot(g->B, fast, "");
  LLVMBasicBlockRef fb = NULL, sb = NULL, jb = NULL;
  if (branchy) {
    fb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.fast");
    sb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.slow");
    jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.join");
    if (fast_nk) { /* K-major 8-bit B: cp.async of [N][K] rows (chunks along K) */
      LLVMBasicBlockRef nb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.fast.nk");
      LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.check");
      LLVMBuildCondBr(g->B, fast_nk, nb, cb);
      LLVMPositionBuilderAtEnd(g->B, nb);
      issue_nk(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, tid, threads, per);
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, cb);
    }
    LLVMBuildCondBr(g->B, fast, fb, sb);
    LLVMPositionBuilderAtEnd(g->B, fb);
    if (whole_path) {
      LLVMBasicBlockRef wb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.whole");
      LLVMBasicBlockRef pb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.part");
      /* whole_once: every stage of this program inside, else every stage takes the bounded chunks (a
       * per-stage test behind it would be speculated by LLVM: the same instructions as without it) */
      cg_cond_br_likely(g, s->whole_once ? s->whole_once : tile_inside(g, s, start, rowd, rank, ok, rows_sz, cols_sz), wb, pb);
      LLVMPositionBuilderAtEnd(g->B, wb);
      LLVMValueRef d0, s0;
      lean_base(g, &lg, &d0, &s0);
      LLVMValueRef step = LLVMBuildMul(g->B, rowstride, cg_i64(g, (int64_t)R * eb), "");
      for (int j = 0; j < per; j++) {
        LLVMValueRef args[2] = {LLVMBuildAdd(g->B, d0, cg_i32(g, j * R * slot_row_bytes(s)), ""), s0};
        cg_asm_void(g, "cp.async.cg.shared.global [$0], [$1], 16;", "r,l,~{memory}", args, 2);
        s0 = LLVMBuildAdd(g->B, s0, step, "");
      }
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, pb);
      lean_chunks(g, &lg, per, dst, src, nbytes);
    }
  }
  LLVMValueRef active = few ? LLVMBuildICmp(g->B, LLVMIntULT, tid, cg_i32(g, s->rows * nch), "") : NULL;
  for (int j = 0; j < per; j++) {
    LLVMValueRef on = branchy ? (active ? LLVMBuildZExt(g->B, active, g->i32, "") : cg_i32(g, 1))
                              : LLVMBuildZExt(g->B, active ? LLVMBuildAnd(g->B, fast, active, "") : fast, g->i32, "");
    LLVMValueRef args[4] = {dst[j], src[j], nbytes[j], on};
    cg_asm_void(g, "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p cp.async.cg.shared.global [$0], [$1], 16, $2; }",
             "r,l,r,r,~{memory}", args, 4);
  }
  if (branchy) {
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, sb);
  }
  if (branchy && !s->kn8 && cg_narrow_on()) {
    /* TILEC_NARROW_COPY=1: a tensor whose base and row pitch are 8- or 4-byte aligned (bf16
     * rows of K = 4100 elements: 8200 bytes) keeps asynchronous copies into the same slots,
     * w-byte cp.async.ca pieces of the chunks (emit_narrow_copy.c); the element loop stays for
     * the rest */
    LLVMValueRef unit = LLVMBuildICmp(g->B, LLVMIntEQ, t->stride[rank - 1], cg_i64(g, 1), "");
    LLVMValueRef ntid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
    cg_narrow_tile nt = {s, ntid, threads, start[rowd], start[rank - 1], ok, rows_sz, cols_sz, rowstride, gaddr0, base, sbase};
    /* (8-byte aligned is 4-byte aligned: one test picks the loop, the other its pieces) */
    LLVMValueRef f8 = cg_narrow_fits(g, unit, base, gaddr0, rowbytes, 8);
    LLVMValueRef f4 = eb <= 4 ? cg_narrow_fits(g, unit, base, gaddr0, rowbytes, 4) : NULL;
    LLVMBasicBlockRef nb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow");
    LLVMBasicBlockRef xb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cp.narrow.not");
    LLVMBuildCondBr(g->B, f4 ? f4 : f8, nb, xb);
    LLVMPositionBuilderAtEnd(g->B, nb);
    cg_narrow_copy(g, &nt, f4 ? f8 : NULL);
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, xb);
  }
  if (branchy) {
    LLVMValueRef stid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
    copy_slow_loop(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, kmaj, stid, threads);
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, jb);
    return;
  }
  /* no blocks (fallback prologue): every element, predicated on !fast */
  LLVMValueRef st_on = LLVMBuildZExt(g->B, active ? LLVMBuildAnd(g->B, slow, active, "") : slow, g->i32, "");
  for (int j = 0; j < per; j++)
    for (int e = 0; e < epc; e++) {
      LLVMValueRef idx = LLVMBuildAdd(g->B, tid, cg_i32(g, j * threads), "");
      LLVMValueRef r = LLVMBuildUDiv(g->B, idx, cg_i32(g, nch), "");
      LLVMValueRef c = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, LLVMBuildURem(g->B, idx, cg_i32(g, nch), ""), cg_i32(g, epc), ""),
                                    cg_i32(g, e), "");
      slow_copy_elem(g, s, t, start, rowd, ok, gaddr0, base, sbase, rows_sz, cols_sz, r, c, st_on, kmaj);
    }
}
