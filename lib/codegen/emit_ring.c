/* emit_ring.c: requires the plan (dot_plan.c); emits the cp.async ring of
 * streamed dot operands: the prologue in the loop preheader, each
 * iteration's wait / barrier / next copies at the first streamed load of
 * the body, the drain at the loop exit; the copy forms (lean 16-byte
 * cp.async without bounds when the tile is inside the tensor, bounded
 * chunks, the element loop for unaligned or strided tensors, the K-major
 * 8-bit [K][N] B).  The TMA ring (emit_tma.c) and warp specialization
 * (emit_ws.c) hook in here.  docs/pipelines.md "multistage". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "code_env.h"
#include "schedule.h"

#include "ring.h"
#include "axisinfo.h"

/* The value of scalar v at an iteration whose induction variable is iv_sub
 * (same LLVM type as the iv's register), emitted at the builder's position. */
LLVMValueRef cg_remat(cg *g, int32_t v, int32_t L, LLVMValueRef iv_sub) {
  tl_func *f = g->f;
  if (v == tl_op_at(f, L)->regions[0].args.data[0]) return iv_sub;
  if (tl_defined_outside(f, v, L)) return cg_get(g, v)->r[0];
  tl_value *x = tl_val(f, v);
  tl_op *d = tl_op_at(f, x->def);
  if (d->opc == TL_OP_const) return LLVMConstInt(cg_reg_type(g, (tl_dtype)x->type.dtype), (unsigned long long)d->ival, 1);
  LLVMValueRef ops[8];
  cg_val saved[9];
  if (d->nopnd > 8) TL_INTERNAL(g->ctx, "codegen: rematerialized op with %d operands", d->nopnd);
  /* a scalar load (schedule.c from_iv: of a tensor the kernel never writes) is read again at the
   * later iteration's indices; the tensor operand stays as it is */
  int first = d->opc == TL_OP_load ? 1 : 0;
  for (int i = first; i < d->nopnd; i++) ops[i] = cg_remat(g, d->opnd[i], L, iv_sub);
  for (int i = first; i < d->nopnd; i++) saved[i] = g->vals[d->opnd[i]];
  saved[8] = g->vals[d->res[0]];
  for (int i = first; i < d->nopnd; i++) {
    g->vals[d->opnd[i]].r = &ops[i];
    g->vals[d->opnd[i]].n = 1;
  }
  if (d->opc == TL_OP_load) {
    cg_emit_load(g, d);
    LLVMValueRef r = g->vals[d->res[0]].r[0];
    for (int i = d->nopnd - 1; i >= first; i--) g->vals[d->opnd[i]] = saved[i];
    g->vals[d->res[0]] = saved[8];
    return r;
  }
  cg_emit_ew(g, d);
  LLVMValueRef r = g->vals[d->res[0]].r[0];
  for (int i = d->nopnd - 1; i >= 0; i--) g->vals[d->opnd[i]] = saved[i];
  g->vals[d->res[0]] = saved[8];
  return r;
}

/* The loop's iv phi (i64) and the iv's register (maybe a trunc of it). */
LLVMValueRef cg_iv_phi(cg *g, int32_t L, LLVMValueRef *reg) {
  *reg = cg_get(g, tl_op_at(g->f, L)->regions[0].args.data[0])->r[0];
  return LLVMIsAPHINode(*reg) ? *reg : LLVMGetOperand(*reg, 0);
}

static LLVMValueRef iv_at(cg *g, LLVMValueRef base64, int k, LLVMValueRef step64, LLVMValueRef reg) {
  LLVMValueRef x = LLVMBuildAdd(g->B, base64, LLVMBuildMul(g->B, step64, cg_i64(g, k), ""), "");
  return LLVMTypeOf(reg) == g->i64 ? x : LLVMBuildTrunc(g->B, x, LLVMTypeOf(reg), "");
}


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

/* Issue the copies of stream s for the iteration with iv `ivs` into `slot`. */
/* Per-thread geometry of a streamed tile copied in the register-lean form
 * (issue_stream): chunk j of thread tid is row tid / nch + j*R, chunk
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
 * made in issue_stream it stalled the copies' issue and the iteration behind them.  The same
 * values (cg_remat at the same iv); TILEC_INDEX_PREFETCH=0 makes them in issue_stream. */
static bool index_reads_memory(cg *g, cg_stream *s) {
  if (tl_code_env_off("TILEC_INDEX_PREFETCH")) return false;
  int rank = tl_val(g->f, tl_op_at(g->f, s->load_op)->opnd[0])->type.rank;
  for (int d = 0; d < rank; d++)
    if (remat_reads_memory(g, stream_index(g, s, d), s->for_op)) return true;
  return false;
}

static void prefetch_index(cg *g, cg_stream *s, LLVMValueRef ivs) {
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
      if (tl_axis_elem_div(&ax) * s->eb % 16 == 0) continue;
    }
    LLVMValueRef x = d == rank - 1 ? start[d] : LLVMBuildMul(g->B, start[d], t->stride[d], "");
    mis = LLVMBuildOr(g->B, mis, LLVMBuildMul(g->B, x, cg_i64(g, s->eb), ""), "");
  }
  return mis;
}

static void issue_stream(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, bool branchy) {
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
      LLVMValueRef r_lo = start[rowd], c_lo = start[rank - 1];
      LLVMValueRef in = LLVMBuildAnd(
          g->B, LLVMBuildICmp(g->B, LLVMIntSGE, r_lo, cg_i64(g, 0), ""),
          LLVMBuildICmp(g->B, LLVMIntSLE, LLVMBuildAdd(g->B, r_lo, cg_i64(g, s->rows), ""), rows_sz, ""), "");
      in = LLVMBuildAnd(g->B, in, LLVMBuildICmp(g->B, LLVMIntSGE, c_lo, cg_i64(g, 0), ""), "");
      in = LLVMBuildAnd(g->B, in, LLVMBuildICmp(g->B, LLVMIntSLE, LLVMBuildAdd(g->B, c_lo, cg_i64(g, s->cols), ""), cols_sz, ""), "");
      if (ok) in = LLVMBuildAnd(g->B, in, ok, "");
      cg_cond_br_likely(g, in, wb, pb);
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

static void commit(cg *g) { cg_asm_void(g, "cp.async.commit_group;", "~{memory}", NULL, 0); }

/* Every stream of loop L issued into slot `slot` at ivs (no commit). */
static void issue_copies(cg *g, int32_t L, LLVMValueRef ivs, LLVMValueRef slot, bool branchy) {
  cg_plan *p = g->plan;
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == L) issue_stream(g, &p->streams[i], ivs, slot, branchy);
}

/* One stage of loop L's ring: its copies, then one commit group (the prologue's stages, a one-stage
 * ring's load, the ring step's and a late ring's refill).  x64 (the stage's iv as i64, NULL: always
 * issued) where cg_ring_range_on (ring_range.c): the copies only when that iteration runs, the commit
 * group always. */
static void issue_stage(cg *g, int32_t L, LLVMValueRef ivs, LLVMValueRef slot, bool branchy, LLVMValueRef x64,
                        LLVMValueRef step64) {
  LLVMBasicBlockRef jb = branchy && x64 && cg_ring_range_on(g, L) ? cg_ring_range_begin(g, L, x64, step64, NULL) : NULL;
  issue_copies(g, L, ivs, slot, branchy);
  if (jb) cg_ring_range_end(g, jb);
  commit(g);
}

LLVMValueRef cg_slot_next(cg *g, LLVMValueRef s, int stages) {
  LLVMValueRef n = LLVMBuildAdd(g->B, s, cg_i32(g, 1), "");
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, n, cg_i32(g, stages), ""), cg_i32(g, 0), n, "");
}

/* iv + k*step as the iv's register type (`wide`: i64, else ivty). */
static LLVMValueRef iv_plus(cg *g, LLVMValueRef lo64, int k, LLVMValueRef step64, LLVMTypeRef ivty) {
  LLVMValueRef x = LLVMBuildAdd(g->B, lo64, LLVMBuildMul(g->B, step64, cg_i64(g, k), ""), "");
  return ivty == g->i64 ? x : LLVMBuildTrunc(g->B, x, ivty, "");
}

/* The parity of the transposed-B buffers (cg_stream.wg_tr with two of
 * them) starts at 0 with the loop. */
static void init_tr_parity(cg *g, cg_ring *R) {
  cg_plan *p = g->plan;
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != R->for_op || !s->wg_tr || s->tr_nbuf < 2) continue;
    if (!s->trv) s->trv = LLVMBuildAlloca(g->PB, g->i32, "tr.parity");
    LLVMBuildStore(g->B, cg_i32(g, 0), s->trv);
  }
}

/* The in-range prologue (cg_ring_range_on), stages k..last: stage k's copies and commit when iteration k
 * runs, then stages k+1.. inside that branch (iteration k+1 runs only after k, and the nesting lets
 * LLVM share the stages' common address terms, which side-by-side branches recompute); out of range,
 * stages k..last commit empty groups, so every path commits last - k + 1. */
static void prologue_in_range(cg *g, int32_t L, int k, int last, LLVMValueRef lo64, LLVMValueRef step64,
                              LLVMTypeRef ivty) {
  if (k > last) return;
  LLVMValueRef x = k ? LLVMBuildAdd(g->B, lo64, LLVMBuildMul(g->B, step64, cg_i64(g, k), ""), "") : lo64;
  LLVMBasicBlockRef skip, jb = cg_ring_range_begin(g, L, x, step64, &skip);
  issue_copies(g, L, iv_plus(g, lo64, k, step64, ivty), cg_i32(g, k), true);
  commit(g);
  prologue_in_range(g, L, k + 1, last, lo64, step64, ivty);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, skip);
  for (int j = k; j <= last; j++) commit(g);
  cg_ring_range_end(g, jb);
}

/* Ring prologue: stages 0..S-2 issued at the builder's position, before
 * the loop (branchy: real branches for the slow copies); slot counters. */
static void ring_prologue(cg *g, cg_ring *R, LLVMValueRef lo64, LLVMValueRef step64, LLVMTypeRef ivty, bool branchy) {
  int S = R->stages;
  R->rdv = LLVMBuildAlloca(g->PB, g->i32, "ring.rd");
  R->wrv = LLVMBuildAlloca(g->PB, g->i32, "ring.wr");
  if (branchy && cg_ring_range_on(g, R->for_op))
    prologue_in_range(g, R->for_op, 0, S - 2 - R->lag, lo64, step64, ivty);
  else
    for (int k = 0; k + 1 + R->lag < S; k++)
      issue_stage(g, R->for_op, iv_plus(g, lo64, k, step64, ivty), cg_i32(g, k), branchy, NULL, NULL);
  LLVMBuildStore(g->B, cg_i32(g, 0), R->rdv);
  LLVMBuildStore(g->B, cg_i32(g, S > 1 ? S - 1 - R->lag : 0), R->wrv);
  init_tr_parity(g, R);
  R->pre_done = true;
}

LLVMTypeRef cg_iv_type(cg *g, int32_t L) {
  tl_op *lo = tl_op_at(g->f, L);
  tl_type *ivt = &tl_val(g->f, lo->regions[0].args.data[0])->type;
  return LLVMTypeOf(cg_get(g, lo->opnd[0])->r[0]) == g->i64 || ivt->dtype == TL_I64 ? g->i64
                                                                                   : cg_reg_type(g, (tl_dtype)ivt->dtype);
}

/* The ring prologue of a TMA ring: stages 0..S-2-lag by TMA when the maps
 * hold (uniform branch), else the cp.async prologue. */
static void ring_prologue_tma(cg *g, cg_ring *R, LLVMValueRef lo64, LLVMValueRef step64, LLVMTypeRef ivty) {
  if (!R->tma_ok) cg_tma_kernel_prologue(g, R);
  int S = R->stages;
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.pro");
  LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cpa.pro");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "ring.pro");
  cg_cond_br_likely(g, R->tma_ok, tb, cb);
  LLVMPositionBuilderAtEnd(g->B, tb);
  if (R->prefetch) { /* tile_prefetch.c: the previous tile's loop exit issued them */
    cg_tile_prefetch_flag(g, R);
    LLVMValueRef pf = LLVMBuildLoad2(g->B, g->i32, R->pfv, "");
    LLVMBuildStore(g->B, cg_i32(g, 0), R->pfv);
    LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.pro.issue");
    LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, pf, cg_i32(g, 0), ""), ib, jb);
    LLVMPositionBuilderAtEnd(g->B, ib);
  }
  for (int k = 0; k + 1 + R->lag < S; k++) {
    LLVMValueRef x = LLVMBuildAdd(g->B, lo64, LLVMBuildMul(g->B, step64, cg_i64(g, k), ""), "");
    cg_tma_issue(g, R, iv_plus(g, lo64, k, step64, ivty), cg_iv_in_range(g, R->for_op, x, step64), cg_i32(g, k));
  }
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, cb);
  ring_prologue(g, R, lo64, step64, ivty, true);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
  LLVMBuildStore(g->B, cg_i32(g, 0), R->rdv);
  LLVMBuildStore(g->B, cg_i32(g, S - 1 - R->lag), R->wrv);
  init_tr_parity(g, R);
}

void cg_loop_preheader(cg *g, int32_t for_op) {
  cg_make_plan(g);
  cg_plan *p = g->plan;
  tl_op *lo = tl_op_at(g->f, for_op);
  cg_overlap_preheader(g, for_op);
  for (int i = 0; i < p->nring; i++) {
    cg_ring *R = &p->rings[i];
    if (R->for_op != for_op || (R->pre_done && !R->ws)) continue;
    if (R->ws) /* warp-specialized: the producer warpgroup fills the ring (emit_ws.c) */
      cg_ws_preheader(g, R);
    else if (R->tma)
      ring_prologue_tma(g, R, cg_to_i64(g, cg_get(g, lo->opnd[0])->r[0]), cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]),
                        cg_iv_type(g, for_op));
    else
      ring_prologue(g, R, cg_to_i64(g, cg_get(g, lo->opnd[0])->r[0]), cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]),
                    cg_iv_type(g, for_op), true);
  }
  for (int i = 0; i < p->nring; i++) /* (the loop's blocks are appended after it) */
    if (p->rings[i].for_op == for_op) p->rings[i].pre_last = LLVMGetLastBasicBlock(g->fn);
}

/* The CTA barriers (llvm.nvvm.barrier0, bar.sync / bar.arrive / barrier.cluster asm) in the
 * function's blocks after `from`: at a loop's exit, those of its body (code a dot hoists into the
 * preheader goes into a block before it). */
static int body_barriers(cg *g, LLVMBasicBlockRef from) {
  int n = 0;
  for (LLVMBasicBlockRef b = LLVMGetNextBasicBlock(from); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsACallInst(i)) continue;
      LLVMValueRef c = LLVMGetCalledValue(i);
      size_t len = 0;
      if (LLVMIsAInlineAsm(c)) {
        const char *t = LLVMGetInlineAsmAsmString(c, &len);
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 63 ? len : 63), t);
        n += strstr(buf, "bar.sync") || strstr(buf, "bar.arrive") || strstr(buf, "barrier.cluster") || strstr(buf, "bar.red");
      } else if (LLVMIsAFunction(c)) {
        const char *name = LLVMGetValueName2(c, &len);
        n += !strncmp(name, "llvm.nvvm.barrier", 17);
      }
    }
  return n;
}

/* Scratch over a drained ring (the default since the twenty-fifth session; TILEC_SCRATCH_OVER_RING=0
 * off): after a drained cp.async ring whose loop runs once (at function level), its slots hold
 * nothing any later op reads, so the scratch users after it (a peeled
 * last tile's staged dot operands, reductions, layout changes, atomic_fetch_add's slot) take
 * them instead of bytes past the persistent part: attn_decode's peeled tile staged 20 KiB past
 * 96 KiB of ring, 120 KiB a program and one program an SM; over the ring, 100 KiB and two.
 * A barrier first: another warp may still read its last slot. */
static void free_ring_slots(cg *g, cg_ring *R) {
  cg_plan *p = g->plan;
  if (tl_code_env_off("TILEC_SCRATCH_OVER_RING") || R->tma || R->wgmma || R->lag || R->late ||
      tl_op_at(g->f, R->for_op)->parent >= 0)
    return;
  int lo = -1, hi = 0, bytes = 0;
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != R->for_op) continue;
    if (s->tma || s->wg_tr || s->prologue) return;
    int end = s->offset + R->stages * s->stage_bytes;
    if (lo < 0 || s->offset < lo) lo = s->offset;
    if (end > hi) hi = end;
    bytes += R->stages * s->stage_bytes;
  }
  if (lo < 0 || hi - lo != bytes) return; /* (not one contiguous run) */
  cg_barrier(g);
  g->scratch_lo = lo;
  g->scratch_hi = hi;
}

void cg_loop_exit(cg *g, int32_t for_op) {
  cg_plan *p = g->plan;
  if (!p || g->plan_f != g->f) return;
  cg_overlap_exit(g, for_op); /* a wgmma dot issued a step late: its last one, waited for */
  for (int i = 0; i < p->nring; i++) {
    cg_ring *R = &p->rings[i];
    /* staged2: with the staged B's barrier the body's only other one, no shared memory but the ring's
     * slots (ordered by their mbarriers and that barrier) and the staged slots (by that barrier of the
     * step before) is shared between threads: the TMA path's ring barrier goes */
    if (R->for_op == for_op && R->top_bar && body_barriers(g, R->pre_last) == R->nbar_ring + 1)
      LLVMInstructionEraseFromParent(R->top_bar);
    if (R->for_op == for_op) R->top_bar = NULL;
  }
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == for_op && p->rings[i].pre_done) {
      if (p->rings[i].lag || p->rings[i].late) {
        /* no wgmma may still be writing the accumulators.  ptxas (13.0)
         * serializes every wgmma (C7514) unless this wait is the first
         * instruction of its block, so it gets a block of its own behind a
         * branch LLVM cannot fold (the epilogue's address math, sunk to its
         * first use, would otherwise land in front of it) */
        LLVMValueRef one = cg_asm(g, g->i32, "mov.u32 $0, 1;", "=r", NULL, 0, true);
        LLVMBasicBlockRef db = LLVMAppendBasicBlockInContext(g->C, g->fn, "wgmma.drain");
        LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "wgmma.drained");
        LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntNE, one, cg_i32(g, 0), ""), db, cb);
        LLVMPositionBuilderAtEnd(g->B, db);
        cg_asm_void(g, "wgmma.wait_group.sync.aligned 0;", "~{memory}", NULL, 0);
        LLVMBuildBr(g->B, cb);
        LLVMPositionBuilderAtEnd(g->B, cb);
        cg_asm_void(g, "wgmma.wait_group.sync.aligned 0;", "~{memory}", NULL, 0);
        for (int k = 0; k < p->nwg; k++)
          if (tl_op_at(g->f, p->wg_dots[k])->parent == for_op && p->wg_carried[k] >= 0)
            cg_wgmma_fence_val(g, p->wg_carried[k]);
      }
      if (p->rings[i].ws) { /* the last slot's reads are done */
        cg_ws_loop_exit(g, &p->rings[i]);
        return;
      }
      /* drain: no copy may still be writing shared memory after the loop */
      cg_asm_void(g, "cp.async.wait_group 0;", "~{memory}", NULL, 0);
      if (p->rings[i].prefetch && p->rings[i].pf_tiles) cg_tile_prefetch(g, &p->rings[i]);
      else free_ring_slots(g, &p->rings[i]);
      return;
    }
}

/* At the first streamed load of a loop body: this iteration's wait, barrier
 * and the issue of stage i + S - 1 (the prologue is normally issued by
 * cg_loop_preheader; else here, predicated, before the preheader's branch).
 * One stage: free the slot, copy this iteration's tile, wait for it. */
static void emit_ring(cg *g, cg_ring *R) {
  cg_plan *p = g->plan;
  int S = R->stages;
  int nbar = g->nbar;
  int32_t L = R->for_op;
  tl_op *lo = tl_op_at(g->f, L);
  LLVMValueRef reg, phi = cg_iv_phi(g, L, &reg);
  LLVMValueRef step64 = cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]);
  if (R->ws) { /* warp-specialized: wait until the producer filled this slot */
    cg_ws_ring_wait(g, R);
    return;
  }
  if (!R->pre_done) {
    R->tma = false; /* (the predicated prologue has no blocks: the cp.async ring) */
    LLVMBasicBlockRef here = LLVMGetInsertBlock(g->B);
    LLVMPositionBuilderBefore(g->B, LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(phi, 0)));
    ring_prologue(g, R, LLVMGetIncomingValue(phi, 0), step64, LLVMTypeOf(reg), false);
    LLVMPositionBuilderAtEnd(g->B, here);
  }
  if (S == 1) {
    cg_barrier(g);
    issue_stage(g, L, reg, cg_i32(g, 0), true, NULL, NULL);
    cg_asm_void(g, "cp.async.wait_group 0;", "~{memory}", NULL, 0);
    if (R->wgmma) cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
    cg_barrier(g);
    R->rd_slot = cg_i32(g, 0);
    return;
  }
  LLVMBasicBlockRef jb = NULL;
  LLVMValueRef rd0 = NULL, wr0 = NULL;
  if (R->tma) {
    /* TMA: a barrier (every warp is done reading the slot refilled next:
     * its wgmma groups of that stage were waited for), thread 0 issues
     * stage i + S-1-lag, everyone waits for stage i's mbarrier */
    rd0 = LLVMBuildLoad2(g->B, g->i32, R->rdv, "");
    wr0 = LLVMBuildLoad2(g->B, g->i32, R->wrv, "");
    LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.ring");
    LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cpa.ring");
    jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "ring.join");
    cg_cond_br_likely(g, R->tma_ok, tb, cb);
    LLVMPositionBuilderAtEnd(g->B, tb);
    cg_barrier(g);
    /* (staged2: the TMA path's barrier, erased at the loop exit if the body needs no other) */
    if (R->staged2) R->top_bar = LLVMGetLastInstruction(LLVMGetInsertBlock(g->B));
    if (!R->late) { /* (a late ring issues after the staged B's barrier: cg_ring_late_refill) */
      LLVMValueRef x = LLVMBuildAdd(g->B, phi, LLVMBuildMul(g->B, step64, cg_i64(g, S - 1 - R->lag), ""), "");
      cg_tma_issue(g, R, iv_at(g, phi, S - 1 - R->lag, step64, reg), cg_iv_in_range(g, L, x, step64), wr0);
    }
    cg_tma_wait(g, R, rd0);
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, cb);
  }
  LLVMValueRef ivs = NULL;
  for (int i = 0; !jb && !R->late && i < p->nstream; i++) /* (the TMA form's cp.async branch makes its starts in place) */
    if (p->streams[i].for_op == L && index_reads_memory(g, &p->streams[i])) {
      if (!ivs) ivs = iv_at(g, phi, S - 1 - R->lag, step64, reg);
      prefetch_index(g, &p->streams[i], ivs);
    }
  char w[64];
  snprintf(w, sizeof w, "cp.async.wait_group %d;", S - 2 - R->lag);
  cg_asm_void(g, w, "~{memory}", NULL, 0);
  /* cp.async and st.shared write through the generic proxy, wgmma reads
   * through the async proxy: each writer fences before the barrier */
  if (R->wgmma) cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  cg_barrier(g);
  LLVMValueRef rd = rd0 ? rd0 : LLVMBuildLoad2(g->B, g->i32, R->rdv, "");
  LLVMValueRef wr = wr0 ? wr0 : LLVMBuildLoad2(g->B, g->i32, R->wrv, "");
  R->rd_slot = rd;
  if (!R->late) {
    if (!ivs) ivs = iv_at(g, phi, S - 1 - R->lag, step64, reg);
    LLVMValueRef x = cg_ring_range_on(g, L)
                         ? LLVMBuildAdd(g->B, phi, LLVMBuildMul(g->B, step64, cg_i64(g, S - 1 - R->lag), ""), "")
                         : NULL;
    issue_stage(g, L, ivs, wr, true, x, step64);
  }
  if (jb) {
    LLVMBuildBr(g->B, jb);
    LLVMPositionBuilderAtEnd(g->B, jb);
  }
  LLVMBuildStore(g->B, cg_slot_next(g, rd, S), R->rdv);
  LLVMBuildStore(g->B, cg_slot_next(g, wr, S), R->wrv);
  R->nbar_ring = g->nbar - nbar;
  if (R->late) { /* (wr0 was loaded before the TMA branch: it dominates the refill) */
    if (jb && !wr0) TL_INTERNAL(g->ctx, "codegen: a late ring's slot is not known before its branch");
    R->late_wr = jb ? wr0 : wr;
  }
}

/* TILEC_LATE_REFILL=2 (measuring): the refill of a late ring after the next waiting wgmma dot's
 * commit (its groups in flight while thread 0 issues), not at the barrier. */
void cg_ring_late_refill_due(cg *g, int32_t L) {
  cg_plan *p = g->plan;
  for (int r = 0; p && g->plan_f == g->f && r < p->nring; r++)
    if (p->rings[r].for_op == L && p->rings[r].late_due) {
      p->rings[r].late_due = false;
      cg_ring_late_refill(g, L);
    }
}

/* The refill of a late ring (R->late, dot_plan.c late_refill_fits) of loop L, at the staged B's
 * barrier, once an iteration: stage i+1 into the slot iteration i-1 read, by TMA (thread 0) or,
 * in the fallback, by every thread's cp.async (waited for at the top of iteration i+1, as
 * emit_ring's own issue). */
void cg_ring_late_refill(cg *g, int32_t L) {
  cg_plan *p = g->plan;
  for (int r = 0; r < p->nring; r++) {
    cg_ring *R = &p->rings[r];
    if (R->for_op != L || !R->late) continue;
    if (!R->late_wr) TL_INTERNAL(g->ctx, "codegen: a late ring's refill without its ring step");
    LLVMValueRef reg, phi = cg_iv_phi(g, L, &reg), wr = R->late_wr;
    LLVMValueRef step64 = cg_to_i64(g, cg_get(g, tl_op_at(g->f, L)->opnd[2])->r[0]);
    LLVMValueRef ivs = iv_at(g, phi, 1, step64, reg);
    LLVMBasicBlockRef jb = NULL;
    R->late_wr = NULL;
    if (R->tma) {
      LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, "tma.refill");
      LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cpa.refill");
      jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "refill.join");
      cg_cond_br_likely(g, R->tma_ok, tb, cb);
      LLVMPositionBuilderAtEnd(g->B, tb);
      LLVMValueRef x = LLVMBuildAdd(g->B, phi, step64, "");
      cg_tma_issue(g, R, ivs, cg_iv_in_range(g, L, x, step64), wr);
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, cb);
    }
    issue_stage(g, L, ivs, wr, true, cg_ring_range_on(g, L) ? LLVMBuildAdd(g->B, phi, step64, "") : NULL, step64);
    if (jb) {
      LLVMBuildBr(g->B, jb);
      LLVMPositionBuilderAtEnd(g->B, jb);
    }
  }
}

bool cg_load_streamed(cg *g, tl_op *o) {
  cg_plan *p = g->plan;
  if (!p || p->vkind[o->res[0]] != SRC_STREAM) return false;
  cg_stream *s = &p->streams[p->vstream[o->res[0]]];
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == s->for_op && !p->rings[i].emitted) {
      p->rings[i].emitted = true;
      emit_ring(g, &p->rings[i]);
    }
  /* an operand prologue's load: its tile from this iteration's slot */
  for (int i = 0; s->prologue && i < p->nring; i++)
    if (p->rings[i].for_op == s->for_op) cg_prologue_read(g, o, s, p->rings[i].rd_slot);
  return true;
}
