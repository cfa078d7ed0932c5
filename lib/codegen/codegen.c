/* codegen.c: requires tile IR after layout_assign (every tile has a layout);
 * produces one LLVM function per kernel (nvvm.annotations kernel, the ABI of
 * codegen.h), runs LLVM's default<On> pipeline and the NVPTX back-end to PTX.
 * Keeps the IR untouched.  Unsupported constructs are diagnostics naming the
 * op (TL_ERR_UNSUPPORTED), never bad PTX.
 *
 * This file: the driver, helpers, kernel prologue, control flow (for / if /
 * yield) and the dispatch; ops live in emit_*.c.  docs/codegen.md explains. */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "cg.h"
#include "fpconv.h"
#include "axisinfo.h"
#include "units.h"
#include "code_env.h"

/* ---- helpers shared by emit_*.c ------------------------------------------------ */

void cg_unsupported(cg *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tl_error(g->ctx, g->loc, "unsupported in codegen: %s", msg);
  longjmp(*g->bail, 1);
}

LLVMValueRef cg_i32(cg *g, int64_t x) { return LLVMConstInt(g->i32, (unsigned long long)x, 1); }
LLVMValueRef cg_i64(cg *g, int64_t x) { return LLVMConstInt(g->i64, (unsigned long long)x, 1); }

LLVMTypeRef cg_reg_type(cg *g, tl_dtype dt) {
  switch (dt) {
  case TL_I1: return g->i1;
  case TL_I8: case TL_U8: case TL_F8E4M3: case TL_F8E5M2: return g->i8;
  case TL_I16: return g->i16;
  case TL_I32: return g->i32;
  case TL_I64: return g->i64;
  case TL_F16: return g->f16;
  case TL_BF16: return g->bf16;
  case TL_F32: return g->f32;
  default: TL_INTERNAL(g->ctx, "codegen: no register type for dtype %d", (int)dt);
  }
}

LLVMTypeRef cg_mem_type(cg *g, tl_dtype dt) { return dt == TL_I1 ? g->i8 : cg_reg_type(g, dt); }

LLVMValueRef cg_intrinsic(cg *g, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n) {
  LLVMTypeRef tys[16];
  TL_CHECK(g->ctx, n <= 16);
  for (int i = 0; i < n; i++) tys[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef fty = LLVMFunctionType(ret, tys, (unsigned)n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->M, name);
  if (!fn) fn = LLVMAddFunction(g->M, name, fty);
  return LLVMBuildCall2(g->B, fty, fn, args, (unsigned)n, "");
}

LLVMValueRef cg_asm(cg *g, LLVMTypeRef ret, const char *text, const char *constraints, LLVMValueRef *args,
                    int n, bool side_effects) {
  LLVMTypeRef tys[16];
  TL_CHECK(g->ctx, n <= 16);
  for (int i = 0; i < n; i++) tys[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef fty = LLVMFunctionType(ret, tys, (unsigned)n, 0);
  LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), constraints, strlen(constraints), side_effects, 0,
                                    LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(g->B, fty, a, args, (unsigned)n, "");
}

/* One mma.sync.aligned.m16n8k{kstep}.row.col.f32.{ta}.{tb}.f32: args = a0..a3,
 * b0, b1 (i32 fragments), c0..c3 (f32); returns { float x4 }.  bf16 and f16
 * go through LLVM's NVVM intrinsic, the rest (fp8: no LLVM 19 intrinsic) as
 * inline asm.  Same PTX instruction; the intrinsic is an ordinary node in
 * the back-end, where a 4-output inline asm costs ~0.4 M host instructions
 * (constraint parsing in CodeGenPrepare and ISel, proxy registers):
 * docs/codegen.md "Round 4". */
LLVMValueRef cg_mma_sync(cg *g, int kstep, const char *ta, const char *tb, LLVMValueRef *args) {
  LLVMTypeRef f4[4] = {g->f32, g->f32, g->f32, g->f32};
  LLVMTypeRef f4t = LLVMStructTypeInContext(g->C, f4, 4, 0);
  if (kstep == 16 && !strcmp(ta, tb) && (!strcmp(ta, "bf16") || !strcmp(ta, "f16"))) {
    LLVMValueRef x[10];
    /* f16 fragments are <2 x half> in the intrinsic (bf16 ones i32) */
    LLVMTypeRef h2 = LLVMVectorType(g->f16, 2);
    bool f16 = !strcmp(ta, "f16");
    for (int i = 0; i < 10; i++) x[i] = f16 && i < 6 ? LLVMBuildBitCast(g->B, args[i], h2, "") : args[i];
    return cg_intrinsic(g, f16 ? "llvm.nvvm.mma.m16n8k16.row.col.f32.f32" : "llvm.nvvm.mma.m16n8k16.row.col.bf16",
                        f4t, x, 10);
  }
  char mma[160];
  if (!strcmp(ta, "s8")) { /* s32 accumulator: i32 registers, wraps like the interpreter */
    LLVMTypeRef i4[4] = {g->i32, g->i32, g->i32, g->i32};
    snprintf(mma, sizeof mma,
             "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};");
    return cg_asm(g, LLVMStructTypeInContext(g->C, i4, 4, 0), mma, "=r,=r,=r,=r,r,r,r,r,r,r,0,1,2,3", args, 10, false);
  }
  /* f16/bf16 k16 without the intrinsic, e4m3/e5m2 k32, tf32 k8: the f32
   * bits in the A/B registers, read as tf32 (the low 13 mantissa bits
   * ignored: docs/language.md "dot") */
  snprintf(mma, sizeof mma,
           "mma.sync.aligned.m16n8k%d.row.col.f32.%s.%s.f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};",
           kstep, ta, tb);
  return cg_asm(g, f4t, mma, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", args, 10, false);
}

const char *cg_mma_type(tl_dtype dt) {
  switch (dt) {
  case TL_BF16: return "bf16";
  case TL_F16: return "f16";
  case TL_F8E4M3: return "e4m3";
  case TL_F8E5M2: return "e5m2";
  case TL_I8: return "s8";
  case TL_F32: return "tf32";
  default: return "?";
  }
}

cg_val *cg_get(cg *g, int32_t v) {
  cg_val *x = &g->vals[v];
  if (!x->r) TL_INTERNAL(g->ctx, "codegen: value %%%d used before it is defined (op %s)", (int)v, tl_val(g->f, v)->def >= 0 ? tl_opinfo_table[tl_op_at(g->f, tl_val(g->f, v)->def)->opc].name : "-");
  return x;
}

cg_val *cg_new_val(cg *g, int32_t v, int32_t n) {
  cg_val *x = &g->vals[v];
  if (x->r && cg_epi_resume(g, v)) return x; /* a later epilogue sub-tile fills in its registers */
  x->r = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)n);
  x->n = n;
  return x;
}

const tl_layout *cg_layout(cg *g, int32_t v) {
  tl_type *t = &tl_val(g->f, v)->type;
  if (t->kind != TL_KIND_TILE || t->layout < 0 || !g->f->layouts)
    TL_INTERNAL(g->ctx, "codegen: tile %%%d has no layout (run layout_assign first)", (int)v);
  return tl_layout_at(g->f, t->layout);
}

/* The lane/warp part of a layout's coordinates: computed once in the prologue
 * (a dim with no lane/warp basis is the constant 0). */
static void ensure_lw(cg *g, int32_t lid) {
  if (g->lw[lid][0]) return;
  const tl_layout *l = tl_layout_at(g->f, lid);
  for (int d = 0; d < TL_MAX_RANK; d++) {
    LLVMValueRef acc = NULL;
    for (int src = 0; src < 2; src++) {
      int nb = src ? l->nwarp : TL_LAYOUT_LANE_BITS;
      LLVMValueRef id = src ? g->warp : g->lane;
      for (int j = 0; j < nb; j++) {
        int32_t b = src ? l->warp[j][d] : l->lane[j][d];
        if (d >= l->rank || !b) continue;
        /* bit j of the id, moved to the basis' bit position */
        int sh = 0;
        while ((1 << sh) != b) sh++;
        LLVMValueRef bit = j ? LLVMBuildLShr(g->PB, id, cg_i32(g, j), "") : id;
        bit = LLVMBuildAnd(g->PB, bit, cg_i32(g, 1), "");
        if (sh) bit = LLVMBuildShl(g->PB, bit, cg_i32(g, sh), "");
        acc = acc ? LLVMBuildOr(g->PB, acc, bit, "") : bit;
      }
    }
    g->lw[lid][d] = acc ? acc : cg_i32(g, 0);
  }
}

LLVMValueRef cg_lane_warp(cg *g, int32_t lid, int d) {
  ensure_lw(g, lid);
  return g->lw[lid][d];
}

LLVMValueRef cg_coord(cg *g, int32_t lid, int32_t r, int d) {
  ensure_lw(g, lid);
  int32_t c[TL_MAX_RANK];
  tl_layout_reg_coords(tl_layout_at(g->f, lid), r, c);
  LLVMValueRef lw = g->lw[lid][d];
  if (!c[d]) return lw;
  if (LLVMIsAConstantInt(lw) && LLVMConstIntGetZExtValue(lw) == 0) return cg_i32(g, c[d]);
  return LLVMBuildAdd(g->B, lw, cg_i32(g, c[d]), "");
}

LLVMValueRef cg_flat_index(cg *g, int32_t lid, int32_t r, int rank, const int32_t *shape, const int32_t *shift) {
  LLVMValueRef off = NULL;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; d--) {
    LLVMValueRef c = cg_coord(g, lid, r, d);
    if (shift && shift[d]) c = LLVMBuildAdd(g->B, c, cg_i32(g, shift[d]), "");
    LLVMValueRef term = stride == 1 ? c : LLVMBuildMul(g->B, c, cg_i32(g, stride), "");
    off = off ? LLVMBuildAdd(g->B, off, term, "") : term;
    stride *= shape[d];
  }
  return off ? off : cg_i32(g, 0);
}

void cg_barrier(cg *g) {
  g->nbar++;
  if (g->bar_threads && g->bar_id) { /* a ping-pong consumer warpgroup: its own named barrier */
    char txt[48];
    snprintf(txt, sizeof txt, "bar.sync $0, %d;", g->bar_threads);
    cg_asm(g, g->vd, txt, "r,~{memory}", &g->bar_id, 1, true);
    return;
  }
  if (g->bar_threads) { /* the consumer warpgroups of a warp-specialized kernel: named barrier 1 */
    char txt[48];
    snprintf(txt, sizeof txt, "bar.sync 1, %d;", g->bar_threads);
    cg_asm(g, g->vd, txt, "~{memory}", NULL, 0, true);
    return;
  }
  LLVMValueRef none[1];
  cg_intrinsic(g, "llvm.nvvm.barrier0", g->vd, none, 0);
}

void cg_use_smem(cg *g, int bytes) {
  if (bytes > g->smem_bytes) g->smem_bytes = bytes;
}

LLVMValueRef cg_smem_ptr(cg *g, LLVMValueRef byte_off) {
  return LLVMBuildGEP2(g->B, g->i8, g->smem, &byte_off, 1, "");
}

/* ---- scalar special values ------------------------------------------------------- */

LLVMValueRef cg_sreg(cg *g, const char *what, int axis) {
  char name[64];
  snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", what, "xyz"[axis]);
  return cg_intrinsic(g, name, g->i32, NULL, 0);
}

static LLVMValueRef const_of(cg *g, const tl_op *o, tl_dtype dt) {
  LLVMTypeRef t = cg_reg_type(g, dt);
  if (tl_dtype_is_float(dt) && dt != TL_F8E4M3 && dt != TL_F8E5M2) return LLVMConstReal(t, o->fval);
  /* an 8-bit float constant: its byte, rounded as the interpreter rounds it (lib/fpconv.c) */
  if (dt == TL_F8E4M3 || dt == TL_F8E5M2) return LLVMConstInt(t, tl_float_to_bits(o->fval, dt) & 0xff, 0);
  if (dt == TL_I1) return LLVMConstInt(t, o->ival != 0, 0);
  return LLVMConstInt(t, (unsigned long long)o->ival, 1);
}

/* Fill every register of value v with x. */
static void fill(cg *g, int32_t v, LLVMValueRef x) {
  tl_type *t = &tl_val(g->f, v)->type;
  int32_t n = t->kind == TL_KIND_TILE ? tl_layout_nregs(cg_layout(g, v)) : 1;
  cg_val *d = cg_new_val(g, v, n);
  for (int32_t i = 0; i < n; i++) d->r[i] = x;
}

/* ---- control flow ------------------------------------------------------------------ */


/* Phis for the registers of value v (canonical ones; replicas share). */
static void make_phis(cg *g, int32_t v, LLVMTypeRef *ty_out) {
  tl_type *t = &tl_val(g->f, v)->type;
  (void)ty_out;
  if (t->kind == TL_KIND_TENSOR) cg_unsupported(g, "a tensor carried through a loop or if");
  LLVMTypeRef ty = cg_reg_type(g, (tl_dtype)t->dtype);
  if (t->kind != TL_KIND_TILE) {
    cg_val *x = cg_new_val(g, v, 1);
    x->r[0] = LLVMBuildPhi(g->B, ty, "");
    return;
  }
  const tl_layout *l = cg_layout(g, v);
  int32_t n = tl_layout_nregs(l);
  cg_val *x = cg_new_val(g, v, n);
  for (int32_t i = 0; i < n; i++) {
    int32_t c = tl_layout_canon_reg(l, i);
    x->r[i] = c == i ? LLVMBuildPhi(g->B, ty, "") : x->r[c];
  }
}

/* phis: the registers make_phis gave phi_v (the body may rebind phi_v to
 * other registers: emit_dot.c's deferred wgmma waits). */
static void add_incoming(cg *g, int32_t phi_v, LLVMValueRef *phis, int32_t from_v, LLVMBasicBlockRef bb) {
  cg_val *p = cg_get(g, phi_v), *s = cg_get(g, from_v);
  if (p->n != s->n) TL_INTERNAL(g->ctx, "codegen: carried value %%%d changes register count", (int)phi_v);
  for (int32_t i = 0; i < p->n; i++) {
    const tl_type *t = &tl_val(g->f, phi_v)->type;
    if (t->kind == TL_KIND_TILE && tl_layout_canon_reg(cg_layout(g, phi_v), i) != i) continue;
    LLVMValueRef in = s->r[i];
    LLVMAddIncoming(phis[i], &in, &bb, 1);
  }
}

static LLVMValueRef to_i64(cg *g, LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  if (t == g->i64) return v;
  return LLVMBuildSExt(g->B, v, g->i64, "");
}

static void emit_for(cg *g, int32_t opid) {
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, opid);
  tl_region *body = &o->regions[0];
  int ncar = o->nopnd - 3;
  LLVMValueRef lo = to_i64(g, cg_get(g, o->opnd[0])->r[0]);
  LLVMValueRef hi = to_i64(g, cg_get(g, o->opnd[1])->r[0]);
  LLVMValueRef step = to_i64(g, cg_get(g, o->opnd[2])->r[0]);
  cg_loop_preheader(g, opid); /* perf2 hook (emit_ring.c): cp.async ring prologue; may add blocks */
  o = tl_op_at(f, opid);
  body = &o->regions[0];
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->C, g->fn, "for.head");
  LLVMBasicBlockRef bodyb = LLVMAppendBasicBlockInContext(g->C, g->fn, "for.body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->C, g->fn, "for.exit");
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, head);
  LLVMValueRef iv = LLVMBuildPhi(g->B, g->i64, "iv");
  LLVMAddIncoming(iv, &lo, &pre, 1);
  LLVMValueRef **phis = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef *) * (size_t)(ncar > 0 ? ncar : 1));
  for (int i = 0; i < ncar; i++) {
    make_phis(g, body->args.data[1 + i], NULL);
    phis[i] = cg_get(g, body->args.data[1 + i])->r;
    add_incoming(g, body->args.data[1 + i], phis[i], o->opnd[3 + i], pre);
  }
  /* the interpreter rejects step <= 0; here the loop just does not run */
  LLVMValueRef go = LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, iv, hi, ""),
                                 LLVMBuildICmp(g->B, LLVMIntSGT, step, cg_i64(g, 0), ""), "");
  LLVMBuildCondBr(g->B, go, bodyb, exit);
  LLVMPositionBuilderAtEnd(g->B, bodyb);
  int32_t ivv = body->args.data[0];
  tl_type *ivt = &tl_val(f, ivv)->type;
  cg_new_val(g, ivv, 1)->r[0] = LLVMTypeOf(cg_get(g, o->opnd[0])->r[0]) == g->i64 || ivt->dtype == TL_I64
                                    ? iv
                                    : LLVMBuildTrunc(g->B, iv, cg_reg_type(g, (tl_dtype)ivt->dtype), "");
  int32_t *ys = NULL;
  int ny = 0;
  cg_emit_region(g, body, &ys, &ny);
  o = tl_op_at(f, opid);
  body = &o->regions[0];
  cg_di_set_loc(g, o->loc); /* the latch belongs to the for */
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->B);
  LLVMValueRef next = LLVMBuildAdd(g->B, iv, step, "iv.next");
  LLVMAddIncoming(iv, &next, &latch, 1);
  if (ny != ncar) TL_INTERNAL(g->ctx, "codegen: for yields %d values for %d carried", ny, ncar);
  for (int i = 0; i < ncar; i++) {
    add_incoming(g, body->args.data[1 + i], phis[i], ys[i], latch);
    cg_get(g, body->args.data[1 + i])->r = phis[i]; /* after the loop: the phis */
  }
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, exit);
  cg_loop_exit(g, opid); /* perf2 hook (emit_ring.c): cp.async.wait_group 0 drain after a ring */
  for (int i = 0; i < ncar && i < o->nres; i++) g->vals[o->res[i]] = g->vals[body->args.data[1 + i]];
}

static void emit_if(cg *g, int32_t opid) {
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, opid);
  LLVMValueRef c = cg_get(g, o->opnd[0])->r[0];
  LLVMBasicBlockRef thenb = LLVMAppendBasicBlockInContext(g->C, g->fn, "if.then");
  LLVMBasicBlockRef elseb = LLVMAppendBasicBlockInContext(g->C, g->fn, "if.else");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->C, g->fn, "if.end");
  LLVMBuildCondBr(g->B, c, thenb, elseb);
  LLVMBasicBlockRef ends[2];
  int32_t *ys[2] = {NULL, NULL};
  int ny[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    LLVMPositionBuilderAtEnd(g->B, k ? elseb : thenb);
    o = tl_op_at(f, opid);
    if (k < o->nregions) cg_emit_region(g, &o->regions[k], &ys[k], &ny[k]);
    ends[k] = LLVMGetInsertBlock(g->B);
    LLVMBuildBr(g->B, join);
  }
  LLVMPositionBuilderAtEnd(g->B, join);
  o = tl_op_at(f, opid);
  cg_di_set_loc(g, o->loc);
  for (int i = 0; i < o->nres; i++) {
    if (i >= ny[0] || i >= ny[1]) TL_INTERNAL(g->ctx, "codegen: if without a value for result %d", i);
    make_phis(g, o->res[i], NULL);
    add_incoming(g, o->res[i], cg_get(g, o->res[i])->r, ys[0][i], ends[0]);
    add_incoming(g, o->res[i], cg_get(g, o->res[i])->r, ys[1][i], ends[1]);
  }
}

/* ---- the dispatch ---------------------------------------------------------------------- */

void cg_emit_op(cg *g, int32_t opid) {
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, opid);
  g->loc = o->loc;
  cg_di_set_loc(g, o->loc);
  int opc = o->opc;
  if (g->skip && g->skip[opid]) return;
  if (cg_q_tma_skips(g, opid)) { /* (fa3's q: the producer's TMA loads it, emit_q_tma.c) */
    cg_q_tma_at_load(g); /* (TILEC_ATTN_PERSIST=1: thread 0's TMA, waited for here) */
    return;
  }
  if (g->early && g->early[opid]) { /* issued under a wgmma group (emit_under.c) */
    g->early[opid] = 0;
    return;
  }
  switch (opc) {
  case TL_OP_const: {
    tl_type *t = &tl_val(f, o->res[0])->type;
    fill(g, o->res[0], const_of(g, o, (tl_dtype)t->dtype));
    return;
  }
  case TL_OP_dim: {
    tl_value *tv = tl_val(f, o->opnd[0]);
    if (tv->def >= 0 || tv->region_owner >= 0 || tv->type.kind != TL_KIND_TENSOR)
      TL_INTERNAL(g->ctx, "codegen: dim of a value that is not a tensor parameter");
    if (o->axis < 0 || o->axis >= tv->type.rank) TL_INTERNAL(g->ctx, "codegen: dim axis out of range");
    fill(g, o->res[0], g->tensors[tv->index].size[o->axis]);
    return;
  }
  case TL_OP_program_id:
  case TL_OP_num_programs:
    if (o->axis < 0 || o->axis > 2) TL_INTERNAL(g->ctx, "codegen: program axis %d", o->axis);
    /* persistent CTAs (tile_sched.c): the tile's program ids, the logical grid */
    if (opc == TL_OP_program_id && g->pid[o->axis]) fill(g, o->res[0], g->pid[o->axis]);
    else if (opc == TL_OP_num_programs && g->lgrid[o->axis]) fill(g, o->res[0], g->lgrid[o->axis]);
    else fill(g, o->res[0], cg_sreg(g, opc == TL_OP_program_id ? "ctaid" : "nctaid", o->axis));
    return;
  case TL_OP_iota: {
    int32_t v = o->res[0];
    const tl_layout *l = cg_layout(g, v);
    int32_t lid = tl_val(f, v)->type.layout;
    int32_t n = tl_layout_nregs(l);
    cg_val *d = cg_new_val(g, v, n);
    tl_dtype dt = (tl_dtype)tl_val(f, v)->type.dtype;
    for (int32_t i = 0; i < n; i++) {
      if (!cg_reg_wanted(g, v, i)) continue;
      int32_t c = tl_layout_canon_reg(l, i);
      d->r[i] = c == i ? cg_cast(g, cg_coord(g, lid, i, 0), TL_I32, dt) : d->r[c];
    }
    return;
  }
  case TL_OP_splat:
    fill(g, o->res[0], cg_get(g, o->opnd[0])->r[0]);
    return;
  case TL_OP_broadcast: {
    tl_type *st = &tl_val(f, o->opnd[0])->type;
    if (st->kind != TL_KIND_TILE) { /* scalar -> tile */
      fill(g, o->res[0], cg_get(g, o->opnd[0])->r[0]);
      return;
    }
    cg_emit_transfer(g, o->opnd[0], o->res[0], CG_MAP_BCAST, 0);
    return;
  }
  case TL_OP_expand_dims:
    if (tl_val(f, o->opnd[0])->type.kind != TL_KIND_TILE) {
      fill(g, o->res[0], cg_get(g, o->opnd[0])->r[0]);
      return;
    }
    cg_emit_transfer(g, o->opnd[0], o->res[0], CG_MAP_EXPAND, o->axis);
    return;
  case TL_OP_reshape:
    cg_emit_transfer(g, o->opnd[0], o->res[0], CG_MAP_RESHAPE, 0);
    return;
  case TL_OP_trans:
    cg_emit_transfer(g, o->opnd[0], o->res[0], CG_MAP_TRANS, 0);
    return;
  case TL_OP_convert_layout:
    if (cg_convert_from_slot(g, o)) return;
    cg_emit_transfer(g, o->opnd[0], o->res[0], CG_MAP_ID, 0);
    return;
  case TL_OP_reduce:
    cg_emit_reduce(g, o);
    return;
  case TL_OP_dot:
    cg_emit_dot(g, o);
    return;
  case TL_OP_load:
    cg_emit_load(g, o);
    return;
  case TL_OP_store:
    cg_emit_store(g, o);
    return;
  case TL_OP_atomic:
    cg_emit_atomic(g, o);
    return;
  case TL_OP_rand:
    cg_emit_rand(g, o);
    return;
  case TL_OP_scan:
  case TL_OP_argreduce:
    cg_emit_scan(g, o);
    return;
  case TL_OP_slice:
  case TL_OP_cat:
  case TL_OP_permute:
    cg_emit_slice_cat(g, o);
    return;
  case TL_OP_sort:
    cg_emit_sort(g, o);
    return;
  case TL_OP_for:
    emit_for(g, opid);
    return;
  case TL_OP_if:
    emit_if(g, opid);
    return;
  default:
    if (tl_opinfo_table[opc].flags & TL_EW) {
      cg_emit_ew(g, o);
      return;
    }
    cg_unsupported(g, "op '%s'", tl_opinfo_table[opc].name);
  }
}

/* The grid region evaluated in the kernel (persistent CTAs): only the ops its yield needs.  A
 * `require` and the ops only it uses are the launchers' (no code, not even a dead instruction's
 * line in the PTX).  keep[i] for r->ops.data[i]; NULL when r is not the grid or needs nothing cut. */
static bool *grid_keep(cg *g, const tl_region *r) {
  tl_func *f = g->f;
  if (r != &f->grid) return NULL;
  bool any = false;
  for (int i = 0; i < r->ops.len && !any; i++) any = tl_op_at(f, r->ops.data[i])->opc == TL_OP_require;
  if (!any) return NULL;
  bool *keep = tl_alloc(&f->ctx->arena, sizeof(bool) * (size_t)(r->ops.len + 1));
  bool *need = tl_alloc(&f->ctx->arena, sizeof(bool) * (size_t)(f->values.len + 1));
  for (int i = r->ops.len - 1; i >= 0; i--) {
    const tl_op *o = tl_op_at(f, r->ops.data[i]);
    keep[i] = o->opc == TL_OP_yield;
    for (int k = 0; k < o->nres && !keep[i]; k++) keep[i] = need[o->res[k]];
    if (keep[i])
      for (int k = 0; k < o->nopnd; k++) need[o->opnd[k]] = true;
  }
  return keep;
}

void cg_emit_region(cg *g, tl_region *r, int32_t **yielded, int *nyield) {
  bool *keep = grid_keep(g, r);
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(g->f, id);
    if (o->flags & TL_OPF_DEAD || (keep && !keep[i])) continue;
    if (o->opc == TL_OP_yield) {
      cg_lazy_wait_flush(g); /* (TILEC_WGMMA_LAZY=1: every group of the iteration complete) */
      if (yielded) {
        *yielded = o->opnd;
        *nyield = o->nopnd;
      }
      return;
    }
    cg_lazy_wait_before_op(g, id);             /* (TILEC_WGMMA_LAZY=1: the groups it reads) */
    if (cg_overlap_before_op(g, id)) continue; /* a wgmma group issued a step late: waited for here */
    if (cg_rope_skips(g, id)) continue;          /* k's rotation: the producer's (emit_rope.c) */
    cg_emit_op(g, id);
    /* the epilogue after a main loop, in column sub-tiles (emit_epilogue.c) */
    if (o->opc == TL_OP_for && cg_emit_epilogue(g, r, i + 1)) return;
  }
  cg_lazy_wait_flush(g);
}

/* ---- kernels ----------------------------------------------------------------------------- */

static void emit_kernel(cg *g, const char *entry, int threads) {
  tl_func *f = g->f;
  LLVMTypeRef pt[256];
  int np = 0;
  for (int i = 0; i < f->params.len; i++) {
    tl_param *p = &f->params.data[i];
    if (np + 1 + 2 * TL_MAX_RANK > 256) cg_unsupported(g, "more than 256 kernel parameter words");
    if (p->is_tensor) {
      pt[np++] = g->gptr;
      for (int d = 0; d < p->rank; d++) pt[np++] = g->i32;
      for (int d = 0; d < p->rank; d++) pt[np++] = g->i64;
    } else {
      pt[np++] = p->dtype == TL_I64 ? g->i64 : tl_dtype_is_float(p->dtype) ? g->f32 : g->i32;
    }
  }
  /* hidden tensor-map parameters (codegen.h): the main-loop plan says how many */
  g->entry = entry;
  g->tma_param0 = np;
  cg_make_plan(g);
  threads += cg_ws_extra_threads(g); /* the producer warpgroup of a warp-specialized kernel */
  g->threads = threads;
  int ntma = cg_tma_count(g);
  /* the CLI's no-TMA entry (codegen.h keep_maps): its TMA form's maps, declared and never read */
  if (!ntma && g->o && g->o->keep_maps > 0 && cg_tma_mode(g) == TL_TMA_OFF) ntma = g->o->keep_maps;
  if (ntma > TL_MAX_TMA) cg_unsupported(g, "more tensor maps than the launcher takes");
  for (int j = 0; j < ntma; j++) pt[np++] = LLVMPointerTypeInContext(g->C, 0);
  /* TILEC_ATTN_SCHED=1 (attn_sched.c): the tile counter's address, after the maps (codegen.h) */
  bool sched = cg_attn_sched_counter(g);
  if (sched) pt[np++] = g->i64;
  LLVMTypeRef fty = LLVMFunctionType(g->vd, pt, (unsigned)np, 0);
  g->fn = LLVMAddFunction(g->M, entry, fty);
  for (int j = 0; j < ntma; j++) { /* byval [128 x i8], align 64: .param .align 64 .b8 x[128] */
    unsigned idx = (unsigned)(g->tma_param0 + j) + 1, kb = LLVMGetEnumAttributeKindForName("byval", 5);
    unsigned ka = LLVMGetEnumAttributeKindForName("align", 5);
    LLVMAddAttributeAtIndex(g->fn, idx, LLVMCreateTypeAttribute(g->C, kb, LLVMArrayType2(g->i8, 128)));
    LLVMAddAttributeAtIndex(g->fn, idx, LLVMCreateEnumAttribute(g->C, ka, 64));
  }
  g->sched_ctr = sched ? LLVMGetParam(g->fn, (unsigned)np - 1) : NULL;
  cg_di_kernel(g, entry, f->loc);
  /* kernel + launch bound metadata */
  LLVMMetadataRef md[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, "kernel", 6),
                           LLVMValueAsMetadata(cg_i32(g, 1))};
  LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations", LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, md, 3)));
  LLVMMetadataRef mt[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, "maxntidx", 8),
                           LLVMValueAsMetadata(cg_i32(g, threads))};
  LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations", LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, mt, 3)));
  if (cg_plan_two_programs(g)) {
    LLVMMetadataRef mc[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, "minctasm", 8),
                             LLVMValueAsMetadata(cg_i32(g, 2))};
    LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations", LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, mc, 3)));
  }
  /* TILEC_MAXNREG=N (measuring): `.maxnreg N` on every entry.  The driver's JIT, which loads
   * the PTX, may allocate more registers than ptxas -v reports (W4A16's split-K kernel: 94
   * against 63 on the H200, 5 programs an SM instead of 8); this caps it. */
  /* The kernel's @maxnreg (attribute or option) the same way; the switch wins. */
  const char *mr = tl_code_env("TILEC_MAXNREG");
  int maxnreg = mr && atoi(mr) >= 16 && atoi(mr) <= 255 ? atoi(mr) : f->maxnreg;
  if (maxnreg) {
    LLVMMetadataRef mn[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, "maxnreg", 7),
                             LLVMValueAsMetadata(cg_i32(g, maxnreg))};
    LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations", LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, mn, 3)));
  }

  g->prologue = LLVMAppendBasicBlockInContext(g->C, g->fn, "prologue");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "body");
  LLVMPositionBuilderAtEnd(g->B, g->prologue);
  cg_di_prologue_loc(g);
  LLVMValueRef tid = cg_sreg(g, "tid", 0);
  g->lane = LLVMBuildAnd(g->B, tid, cg_i32(g, 31), "lane");
  g->warp = LLVMBuildLShr(g->B, tid, cg_i32(g, 5), "warp");
  /* ping-pong: both consumer warpgroups run the body's layouts of 4 warps (emit_ws.c) */
  if (cg_ws_pingpong(g)) g->warp = LLVMBuildAnd(g->B, g->warp, cg_i32(g, 3), "");
  /* parameters */
  int k = 0;
  for (int i = 0; i < f->params.len; i++) {
    tl_param *p = &f->params.data[i];
    if (p->is_tensor) {
      cg_tensor *t = &g->tensors[i];
      t->ptr = LLVMGetParam(g->fn, (unsigned)k++);
      for (int d = 0; d < p->rank; d++) t->size[d] = LLVMGetParam(g->fn, (unsigned)k++);
      for (int d = 0; d < p->rank; d++) t->stride[d] = LLVMGetParam(g->fn, (unsigned)k++);
      continue;
    }
    LLVMValueRef x = LLVMGetParam(g->fn, (unsigned)k++);
    tl_dtype dt = p->dtype;
    LLVMValueRef v;
    g->loc = p->loc; /* (an 8-bit float parameter's conversion needs sm_89: the error points at it) */
    if (tl_dtype_is_float(dt)) v = cg_cast(g, x, TL_F32, dt);
    else if (dt == TL_I64 || dt == TL_I32) v = x;
    else if (dt == TL_I1) v = LLVMBuildICmp(g->B, LLVMIntNE, x, cg_i32(g, 0), "");
    else v = LLVMBuildTrunc(g->B, x, cg_reg_type(g, dt), "");
    cg_new_val(g, p->value, 1)->r[0] = v;
  }
  LLVMValueRef br = LLVMBuildBr(g->B, body);
  LLVMPositionBuilderBefore(g->PB, br);
  LLVMPositionBuilderAtEnd(g->B, body);
  cg_emit_program(g); /* tile_sched.c: the body, once or per tile; warp-specialized (emit_ws.c) */
  cg_di_end_kernel(g);
}

/* ---- the driver --------------------------------------------------------------------------- */

static pthread_once_t target_once = PTHREAD_ONCE_INIT;
/* The NVPTX back end's IR passes run in tilec's pipeline (nvptx_ir_passes);
 * false under TILEC_NVPTX_IR=llvm.  Set once, with the back-end options. */
static bool nvptx_ir_in_pipeline = true;
static void init_target(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  /* Back-end options (docs/codegen.md "Round 4"), then TILEC_LLVM_ARGS
   * (measuring only; read once; a later occurrence of an option wins).
   * libtilec links its own LLVM with hidden symbols, so the options reach
   * no other LLVM user of the process.
   *   -disable-cgp: no CodeGenPrepare (15 M of attn's ~570 M instructions,
   *   mostly re-parsing inline asm constraints); ptxas' SASS is as short or
   *   shorter without it on every example (attn's main loop 2303 -> 2291).
   *   -start-before=atomic-expand: the back end skips its IR passes up to
   *   AtomicExpand; tilec's pipeline runs them instead, less the EarlyCSE
   *   that found nothing (nvptx_ir_passes, docs/codegen.md "Round 7").
   *   -disable-constant-hoisting: PTX byte-identical on every example without
   *   it (NVPTX immediates cost nothing to materialize), -1.6 M on attn_fwd. */
  static char buf[1024];
  const char *argv[35] = {"tilec", "-disable-cgp", "-disable-constant-hoisting"};
  int argc = 3;
  const char *nvptx_ir = tl_code_env("TILEC_NVPTX_IR");
  /* The pass list of nvptx_ir_passes and the pass name are LLVM 19's: another LLVM keeps its own
   * back-end passes (an unregistered -start-before pass would end the process, not return). */
  unsigned llvm_major = 0, llvm_minor = 0, llvm_patch = 0;
  LLVMGetVersion(&llvm_major, &llvm_minor, &llvm_patch);
  nvptx_ir_in_pipeline = llvm_major == 19 && !(nvptx_ir && !strcmp(nvptx_ir, "llvm"));
  if (nvptx_ir_in_pipeline) argv[argc++] = "-start-before=atomic-expand";
  const char *env = tl_code_env("TILEC_LLVM_ARGS");
  if (env && *env) {
    snprintf(buf, sizeof buf, "%s", env);
    for (char *t = buf; *t && argc < 35;) { /* split at spaces */
      while (*t == ' ') *t++ = 0;
      if (!*t) break;
      char *tok = t;
      while (*t && *t != ' ') t++;
      if (*t) *t++ = 0;
      /* -help / -version print and exit: not from a library */
      if (!strstr(tok, "help") && !strstr(tok, "version") && argc < 35) argv[argc++] = tok;
    }
  }
  LLVMParseCommandLineOptions(argc, argv, "tilec");
}

tl_axis_analysis *cg_axis(cg *g) {
  if (!g->axis || g->axis->f != g->f) g->axis = tl_axis_analyze(g->f, NULL);
  return g->axis;
}

const char *tl_llvm_version(void) {
#ifdef TILEC_LLVM_VERSION
  return TILEC_LLVM_VERSION;
#else
  return "unknown";
#endif
}

static int arch_sm(const char *arch) {
  if (!arch) return 90;
  if (!strcmp(arch, "sm_80")) return 80;
  if (!strcmp(arch, "sm_86")) return 86;
  if (!strcmp(arch, "sm_89")) return 89;
  if (!strcmp(arch, "sm_90")) return 90;
  if (!strcmp(arch, "sm_90a")) return 90;
  return 0;
}

tl_codegen_opts tl_codegen_notma_entry_opts(const tl_codegen_opts *base, const char *kernel, const char *entry,
                                            int keep_maps, int nfiles) {
  tl_codegen_opts c = *base;
  c.tma = TL_TMA_OFF;
  c.only_kernel = kernel;
  c.entry_name = entry;
  c.keep_maps = keep_maps;
  c.no_llvm_ir = true;
  c.notma_entries = false;
  /* (the .file numbering is per module: with several source files, no .loc in the second entry) */
  if (nfiles > 1) c.line_info = false;
  return c;
}

void tl_codegen_result_free(tl_codegen_result *r) {
  if (!r) return;
  free(r->llvm_ir);
  free(r->ptx);
  r->llvm_ir = r->ptx = NULL;
  for (int k = 0; r->notma_ptx && k < r->nkernels; k++) {
    free(r->notma_ptx[k]);
    r->notma_ptx[k] = NULL;
  }
}

/* The IR pipeline of -O1..-O3 (docs/codegen.md "Round 3"): LLVM 19's
 * default<O1> (as `opt -passes='default<O1>' -print-pipeline-passes` lists
 * it) less the passes that change nothing on tilec's modules, so that the PTX
 * is byte-identical to default<O1>'s on every kernel of the test corpus
 * (the examples, 16 variants of them and the .tile files under tests/lit;
 * tests/lit/codegen/pipeline.test keeps checking the examples) in ~2/3 of the time
 * (attn: IR passes 306 -> 200 M instructions):
 *   - by construction: one kernel and no calls but inline asm and NVVM
 *     intrinsics, so no inliner / attributes / IPO / coroutine / OpenMP /
 *     vectorizer / libcall passes, and no allocas left after SROA;
 *   - measured: 4 of default<O1>'s 8 InstCombine runs (the 4 in the middle
 *     of the function simplification and late pipelines), and the cleanup
 *     passes (SCCP, BDCE, ADCE, loop deletion / unrolling / idiom, 5 of the
 *     7 SimplifyCFG runs, later SROA runs) that found nothing after tilec's
 *     own canonicalize / cse / dce.
 * The order of what is left is default<O1>'s.  Round 4 also dropped the
 * InstCombine between the loop passes and IndVars (attn: -30 M of ~600 M
 * instructions): the PTX of every sm_90a example stays default<O1>'s; on the
 * rest of the corpus the PTX differs and ptxas' SASS is as short or shorter
 * (gemm sm_80 on 4 warps: 10296 -> 9224 instructions, spills 10672 -> 9768 B),
 * except in two test kernels (with -disable-cgp, init_target: ldmatrix_sched
 * k32 +2 registers and 7 alignment NOPs; align_misaligned's loop 167 -> 169). */
#define TL_SIMPLIFYCFG                                                                                        \
  "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-lookup;" \
  "keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"           \
  "no-speculate-unpredictables>"
/* default<O1>'s late SimplifyCFG (the one that hoists and sinks instructions
 * common to both successors): without it the PTX of 19 of the 37 corpus
 * files (every one with a dot) differs from default<O1>'s since the wgmma,
 * fp8 and attention rounds (measured when the branch was merged) */
#define TL_SIMPLIFYCFG_LATE                                                                                   \
  "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;" \
  "hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>"
#define TL_INSTCOMBINE "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>"
/* IPSCCP without its function specializer (`no-func-spec`, docs/codegen.md "Round 13"): it
 * specializes functions for the constant arguments of their call sites, and a tilec module has
 * one kernel and no calls but to intrinsics and inline asm, so it never specializes anything;
 * it still cost 0.4 % of a compile (gemm_bias_gelu 1.4 M instructions) finding that out.
 * TILEC_FUNC_SPEC=1: LLVM's default IPSCCP, as before (measuring). */
#define TL_O1_PASSES(ipsccp)                                                                                  \
  "function(nvvm-intr-range," TL_SIMPLIFYCFG ",early-cse<>)," ipsccp ","                                       \
  "function(" TL_INSTCOMBINE ",sroa<modify-cfg>,early-cse<memssa>," TL_INSTCOMBINE ",reassociate,"           \
  "loop-mssa(licm<no-allowspeculation>,loop-rotate<header-duplication;no-prepare-for-lto>,"                  \
  "licm<allowspeculation>),loop(indvars)," TL_SIMPLIFYCFG_LATE ",infer-alignment," TL_INSTCOMBINE ","        \
  "loop-mssa(licm<allowspeculation>),div-rem-pairs),globaldce"
static const char tl_o1_passes[] = TL_O1_PASSES("ipsccp<no-func-spec>");
static const char tl_o1_passes_func_spec[] = TL_O1_PASSES("ipsccp");

/* The IR passes the NVPTX back end (LLVM 19, NVPTXPassConfig::addIRPasses
 * and TargetPassConfig::addISelPasses) runs before AtomicExpand, in its
 * order, run at the end of tilec's pipeline instead: init_target's
 * -start-before=atomic-expand makes the back end skip them (docs/codegen.md
 * "Round 7").  Left out: the EarlyCSE after NaryReassociate (13 M of attn_fwd's
 * 545 M instructions; the PTX of every example byte-identical without it, and
 * the EarlyCSE the back end runs after LSR still follows), and the passes with
 * no new-PM form in LLVM 19, which have nothing to do on tilec's modules
 * (image handles, global names with '.', generic-space globals, byval or
 * generic kernel pointers, allocas, local atomics: the corpus's PTX is
 * byte-identical without them, tests/lit/codegen/nvptx-ir.test).  At
 * CodeGenOpt::None the back end runs only the lowering ones; at Aggressive
 * its first EarlyCSE is a GVN. */
#define TL_NVPTX_LOWERING \
  "pre-isel-intrinsic-lowering,function(expand-large-div-rem,expand-large-fp-convert,nvvm-reflect),generic-to-nvvm"
#define TL_NVPTX_SCALAR(cse) \
  ",function(sroa<preserve-cfg>,infer-address-spaces,separate-const-offset-from-gep,speculative-execution,slsr," cse \
  ",nary-reassociate)"
static const char *nvptx_ir_passes(LLVMCodeGenOptLevel cgl) {
  if (!nvptx_ir_in_pipeline) return "";
  if (cgl == LLVMCodeGenLevelNone) return TL_NVPTX_LOWERING;
  if (cgl == LLVMCodeGenLevelAggressive) return TL_NVPTX_LOWERING TL_NVPTX_SCALAR("gvn");
  return TL_NVPTX_LOWERING TL_NVPTX_SCALAR("early-cse");
}

/* pipeline "," back, in ctx's arena. */
static char *join_passes(tl_ctx *ctx, const char *pipeline, const char *back) {
  size_t n = strlen(pipeline) + strlen(back) + 2;
  char *s = tl_alloc(&ctx->arena, n);
  snprintf(s, n, "%s%s%s", pipeline, *back ? "," : "", back);
  return s;
}

/* Lower function i of m; false when it reported an unsupported construct. */
static bool emit_func(cg *g, tl_module *m, int i, const tl_codegen_opts *o, tl_kernel_info *ki) {
  tl_ctx *ctx = m->ctx;
  tl_func *f = m->funcs.data[i];
  jmp_buf bail;
  g->bail = &bail;
  g->f = f;
  g->smem_bytes = 0;
  g->vals = tl_alloc(&ctx->arena, sizeof(cg_val) * (size_t)(f->values.len + 1));
  g->tensors = tl_alloc(&ctx->arena, sizeof(cg_tensor) * (size_t)(f->params.len + 1));
  int nl = f->layouts ? ((tl_layout_table *)f->layouts)->items.len : 0;
  g->lw = tl_alloc(&ctx->arena, sizeof(*g->lw) * (size_t)(nl + 1));
  memset(g->pid, 0, sizeof g->pid);
  memset(g->lgrid, 0, sizeof g->lgrid);
  g->bar_threads = 0;
  const int warps = f->warps > 0 ? f->warps : 4;
  if (f->layouts && ((tl_layout_table *)f->layouts)->warps != warps)
    TL_INTERNAL(ctx, "codegen: layouts were assigned for %d warps, kernel has %d",
                ((tl_layout_table *)f->layouts)->warps, warps);
  /* entry_name names the module's one kernel: a one-kernel file, or the one kernel emitted */
  const char *const entry = o && o->entry_name && (m->funcs.len == 1 || o->only_kernel) ? o->entry_name : f->name;
  if (setjmp(bail)) return false;
  g->assumed_key = 0;
  emit_kernel(g, entry, warps * 32);
  /* dead_blocks.c: a TMA form's no-TMA paths, before the verifier; at -O0 (no SimplifyCFG) they stay */
  if (!o || o->opt_level > 0) cg_drop_dead_blocks(g, g->fn);
  ki->name = f->name;
  ki->entry = tl_strdup(&ctx->arena, entry);
  ki->threads = g->threads;
  ki->smem_bytes = g->smem_bytes;
  cg_tma_info(g, ki);
  if (cg_rows_active(g)) ki->persist = true; /* emit_rows.c: CTAs loop over the grid's tiles */
  ki->assumed_key = g->assumed_key;
  return true;
}

/* The builders, types and tl_smem of a fresh module for g. */
static void begin_module(cg *g, tl_ctx *ctx, const tl_codegen_opts *o, int sm, LLVMContextRef C, LLVMModuleRef M) {
  memset(g, 0, sizeof *g);
  g->ctx = ctx;
  g->o = o;
  g->sm = sm;
  g->C = C;
  g->M = M;
  g->B = LLVMCreateBuilderInContext(C);
  g->PB = LLVMCreateBuilderInContext(C);
  g->i1 = LLVMInt1TypeInContext(C);
  g->i8 = LLVMInt8TypeInContext(C);
  g->i16 = LLVMInt16TypeInContext(C);
  g->i32 = LLVMInt32TypeInContext(C);
  g->i64 = LLVMInt64TypeInContext(C);
  g->f16 = LLVMHalfTypeInContext(C);
  g->bf16 = LLVMBFloatTypeInContext(C);
  g->f32 = LLVMFloatTypeInContext(C);
  g->vd = LLVMVoidTypeInContext(C);
  g->gptr = LLVMPointerTypeInContext(C, 1);
  g->sptr = LLVMPointerTypeInContext(C, 3);
  g->smem = LLVMAddGlobalInAddressSpace(M, LLVMArrayType2(g->i8, 0), "tl_smem", 3);
  LLVMSetLinkage(g->smem, LLVMExternalLinkage);
  LLVMSetAlignment(g->smem, 16);
}

static void end_module(cg *g) {
  LLVMDisposeBuilder(g->B);
  LLVMDisposeBuilder(g->PB);
}

/* A unit's target machine, context and empty module; false when LLVM has no machine for arch. */
/* A unit whose LLVM text nobody asks for (want_ir false: the JIT, the CLI's PTX) builds its module
 * in a context that discards the names of instructions and blocks (docs/codegen.md "Round 13"):
 * nothing in the PTX comes from them (registers and labels are numbered by the back end), and
 * LLVM's passes name what they create after what they replace ("x.lcssa", "extelt.offset"), each a
 * symbol-table insertion.  Globals and the kernel keep their names.  TILEC_DISCARD_NAMES=0 keeps
 * every name, as before (measuring). */

static bool unit_begin(cg_unit *u, LLVMTargetRef target, const char *triple, const char *arch, const char *features,
                       LLVMCodeGenOptLevel cgl) {
  u->tm = LLVMCreateTargetMachine(target, triple, arch, features, cgl, LLVMRelocDefault, LLVMCodeModelDefault);
  if (!u->tm) return false;
  u->C = LLVMContextCreate();
  if (!tl_env_off("TILEC_DISCARD_NAMES") && !u->want_ir) LLVMContextSetDiscardValueNames(u->C, 1);
  u->M = LLVMModuleCreateWithNameInContext("tilec", u->C);
  LLVMSetTarget(u->M, triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(u->tm);
  LLVMSetModuleDataLayout(u->M, td);
  LLVMDisposeTargetData(td);
  return true;
}

static void unit_end(cg_unit *u) {
  if (u->M) LLVMDisposeModule(u->M);
  if (u->C) LLVMContextDispose(u->C);
  if (u->tm) LLVMDisposeTargetMachine(u->tm);
  free(u->ir);
  free(u->ptx);
  free(u->err);
}

bool tl_codegen(tl_module *m, const tl_codegen_opts *o, tl_codegen_result *out) {
  tl_ctx *ctx = m->ctx;
  memset(out, 0, sizeof *out);
  const char *arch = o && o->arch ? o->arch : "sm_90a";
  int sm = arch_sm(arch);
  if (!sm) {
    tl_error(ctx, TL_NOLOC, "unknown GPU architecture '%s' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)", arch);
    return false;
  }
  pthread_once(&target_once, init_target);
  const char *triple = "nvptx64-nvidia-cuda";
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    tl_error(ctx, TL_NOLOC, "LLVM has no NVPTX target: %s", err ? err : "?");
    LLVMDisposeMessage(err);
    return false;
  }
  /* PTX 8.4 for fp8 mma.sync (sm_89+); 8.0 is enough for everything on sm_80 */
  int ptxv = o && o->ptx_version ? o->ptx_version : sm >= 89 ? 84 : 80;
  char features[32];
  snprintf(features, sizeof features, "+ptx%d", ptxv);
  int opt = o ? o->opt_level : 3;
  /* Compile time (docs/codegen.md "Compile time"): ptxas optimizes the PTX
   * again, so LLVM only needs to hand it clean IR.  Measured on every example:
   * default<O1> + CodeGenOpt::Less gives ptxas SASS as good as default<O3> +
   * Aggressive (same or fewer registers and spills, main loops within 1%) in
   * about 2/3 of the time; the lighter pipelines tried (early-cse + instsimplify,
   * one-shot instcombine, no LLVM opt at all) were 3-5x faster but made the
   * gemm main loop 30-45% longer.  -O1..-O3 therefore all use the O1 pipeline;
   * TILEC_LLVM_PASSES / TILEC_LLVM_CGLEVEL override both (measuring only). */
  LLVMCodeGenOptLevel cgl = opt <= 0 ? LLVMCodeGenLevelNone : LLVMCodeGenLevelLess;
  /* (The IR passes run are default<O1>'s, less those that change nothing on
   * tilec's modules: tl_o1_passes above.) */
  const char *env_cgl = tl_code_env("TILEC_LLVM_CGLEVEL");
  if (env_cgl && *env_cgl >= '0' && *env_cgl <= '3') cgl = (LLVMCodeGenOptLevel)(*env_cgl - '0');
  char dflt[32];
  snprintf(dflt, sizeof dflt, "default<O%d>", opt <= 0 ? 0 : 1);
  const char *func_spec = getenv("TILEC_FUNC_SPEC");
  const char *o1 = func_spec && func_spec[0] == '1' ? tl_o1_passes_func_spec : tl_o1_passes;
  const char *passes = opt <= 0 ? dflt : o1;
  const char *env_passes = tl_code_env("TILEC_LLVM_PASSES");
  if (env_passes && *env_passes) passes = env_passes;

  /* Kernels on threads (docs/codegen.md "Kernels on threads"): a file of
   * several kernels is one module per kernel, each optimized and lowered on
   * a thread of its own, and their PTX merged into the text one module of
   * them all prints (byte-identical: tests/lit/codegen/threads.test).  Not
   * when the LLVM text is wanted (one module's), for a program of several
   * source files (the .file numbering is per module) or with
   * TILEC_LLVM_ARGS (options such as -time-passes keep global state). */
  const char *only = o ? o->only_kernel : NULL;
  int nk = 0;
  for (int i = 0; i < m->funcs.len; i++)
    if (!only || !strcmp(m->funcs.data[i]->name, only)) nk++;
  const char *env_args = tl_code_env("TILEC_LLVM_ARGS");
  int threads = nk > 1 && o && o->no_llvm_ir && ctx->files.len <= 1 && !(env_args && *env_args)
                    ? cg_units_threads(nk)
                    : 1;
  int nunits = threads > 1 ? nk : 1;
  /* the no-TMA entries (notma_entries): a unit each after the kernels' (at most one per kernel) */
  bool notma = o && o->notma_entries;
  int cap = nunits + (notma ? nk : 0);
  cg_unit *units = tl_alloc(&ctx->arena, sizeof(cg_unit) * (size_t)cap);
  memset(units, 0, sizeof(cg_unit) * (size_t)cap);
  /* every pipeline ends with the back end's IR passes (nvptx_ir_passes) */
  const char *back = nvptx_ir_passes(cgl);
  const char *full = join_passes(ctx, passes, back);
  const char *full_fallback = passes == o1 ? join_passes(ctx, dflt, back) : NULL;
  for (int u = 0; u < cap; u++) {
    units[u].passes = full;
    units[u].fallback = full_fallback;
    units[u].want_ir = u < nunits && (!o || !o->no_llvm_ir);
  }

  bool ok = true;
  size_t nf = (size_t)(m->funcs.len ? m->funcs.len : 1);
  out->kernels = tl_alloc(&ctx->arena, sizeof(tl_kernel_info) * nf);
  int *fidx = tl_alloc(&ctx->arena, sizeof(int) * nf); /* kernels[k] is function fidx[k] of m */
  if (notma) {
    out->notma_ptx = tl_alloc(&ctx->arena, sizeof(char *) * nf);
    memset(out->notma_ptx, 0, sizeof(char *) * nf);
    out->notma_kernels = tl_alloc(&ctx->arena, sizeof(tl_kernel_info) * nf);
    memset(out->notma_kernels, 0, sizeof(tl_kernel_info) * nf);
  }
  double t0 = tl_now_ms();
  int u = 0;
  cg g;
  bool open = false; /* g holds a unit's module */
  for (int i = 0; i < m->funcs.len && ok; i++) {
    if (only && strcmp(m->funcs.data[i]->name, only) != 0) continue;
    if (!open) {
      if (!unit_begin(&units[u], target, triple, arch, features, cgl)) {
        tl_error(ctx, TL_NOLOC, "LLVM could not create a target machine for %s", arch);
        ok = false;
        break;
      }
      begin_module(&g, ctx, o, sm, units[u].C, units[u].M);
      cg_di_begin(&g);
      open = true;
    }
    fidx[out->nkernels] = i;
    ok = emit_func(&g, m, i, o, &out->kernels[out->nkernels++]);
    if (nunits > 1) { /* one kernel a unit */
      cg_di_finish(&g);
      end_module(&g);
      open = false;
      u++;
    }
  }
  if (nunits == 1 && !open && ok) { /* no kernel: still one (empty) module */
    if (!unit_begin(&units[0], target, triple, arch, features, cgl)) {
      tl_error(ctx, TL_NOLOC, "LLVM could not create a target machine for %s", arch);
      ok = false;
    } else {
      begin_module(&g, ctx, o, sm, units[0].C, units[0].M);
      cg_di_begin(&g);
      open = true;
    }
  }
  if (open) { /* before the verifier: finalizes the debug metadata */
    cg_di_finish(&g);
    end_module(&g);
  }
  double tb = tl_now_ms();
  out->ms_llvm_build = tb - t0;
  /* each TMA form's no-TMA entry, a module of its own: what tl_codegen with only_kernel, TL_TMA_OFF,
   * entry_name ENTRY__notma and keep_maps builds (lib/api/notma_entry.c appends its PTX) */
  int ntotal = nunits;
  for (int k = 0; notma && ok && k < out->nkernels; k++) {
    const tl_kernel_info *ki = &out->kernels[k];
    if (!ki->tma_form) continue;
    size_t n = strlen(ki->entry) + sizeof TL_NOTMA_SUFFIX;
    char *entry = tl_alloc(&ctx->arena, n);
    snprintf(entry, n, "%s" TL_NOTMA_SUFFIX, ki->entry);
    tl_codegen_opts c = tl_codegen_notma_entry_opts(o, ki->name, entry, ki->ntma, (int)ctx->files.len);
    if (!unit_begin(&units[ntotal], target, triple, arch, features, cgl)) {
      tl_error(ctx, TL_NOLOC, "LLVM could not create a target machine for %s", arch);
      ok = false;
      break;
    }
    begin_module(&g, ctx, &c, sm, units[ntotal].C, units[ntotal].M);
    cg_di_begin(&g);
    ok = emit_func(&g, m, fidx[k], &c, &out->notma_kernels[k]);
    cg_di_finish(&g);
    end_module(&g);
    ntotal++;
    out->nnotma++;
  }
  double t1 = tl_now_ms();
  out->ms_notma_build = t1 - tb;
  for (int k = 0; k < ntotal && ok; k++) {
    char *msg = NULL;
    if (LLVMVerifyModule(units[k].M, LLVMReturnStatusAction, &msg)) {
      tl_error(ctx, TL_NOLOC, "internal error: codegen built invalid LLVM IR: %.2000s", msg ? msg : "");
      ok = false;
    }
    LLVMDisposeMessage(msg);
  }
  if (ok && nunits > 1) {
    /* tl_smem is one declaration of the file: the largest alignment a kernel
     * asked for (dot_plan.c), in every module before its passes */
    unsigned align = 0;
    for (int k = 0; k < nunits; k++) {
      unsigned a = LLVMGetAlignment(LLVMGetNamedGlobal(units[k].M, "tl_smem"));
      if (a > align) align = a;
    }
    for (int k = 0; k < nunits; k++) LLVMSetAlignment(LLVMGetNamedGlobal(units[k].M, "tl_smem"), align);
  }
  double t2 = tl_now_ms();
  /* the no-TMA entries' modules run beside the kernels' (TILEC_CODEGEN_THREADS=1: one after the other) */
  if (ntotal > nunits) threads = env_args && *env_args ? 1 : cg_units_threads(ntotal);
  out->nmodules = ntotal;
  out->nthreads = threads;
  if (ok) {
    if (ntotal == 1) cg_unit_run(&units[0]);
    else cg_units_run(units, ntotal, threads);
    int slow = 0; /* the critical path: the slowest unit's stages */
    for (int k = 0; k < ntotal; k++) {
      if (units[k].oom) tl_fatal(ctx, TL_ERR_NOMEM, "out of memory copying PTX");
      if (units[k].err) {
        tl_error(ctx, TL_NOLOC, "%s", units[k].err);
        ok = false;
      }
      if (units[k].ms_opt + units[k].ms_ptx > units[slow].ms_opt + units[slow].ms_ptx) slow = k;
    }
    out->ms_llvm_opt = t2 - t1 + units[slow].ms_opt;
    out->ms_ptx = units[slow].ms_ptx;
  } else {
    out->ms_llvm_opt = t2 - t1;
  }
  if (ok) {
    if (nunits == 1) {
      out->ptx = units[0].ptx;
      out->llvm_ir = units[0].ir;
      units[0].ptx = units[0].ir = NULL;
    } else {
      out->ptx = cg_units_merge_ptx(units, nunits);
    }
    /* clusters (emit_cluster.c): directives LLVM does not emit */
    for (int k = 0; out->ptx && k < out->nkernels; k++)
      if (out->kernels[k].cluster && !cg_cluster_directives(&out->ptx, out->kernels[k].entry)) {
        tl_error(ctx, TL_NOLOC, "codegen: no .maxntid directive of entry '%s' to put its cluster after",
                 out->kernels[k].entry);
        ok = false;
      }
    if (ok && ((!out->llvm_ir && !(o && o->no_llvm_ir)) || !out->ptx)) tl_fatal(ctx, TL_ERR_NOMEM, "out of memory copying PTX");
    /* the no-TMA entries' texts, in the kernels' order whatever unit finished first */
    for (int k = 0, u2 = nunits; ok && notma && k < out->nkernels; k++) {
      if (!out->kernels[k].tma_form) continue;
      out->notma_ptx[k] = units[u2].ptx;
      units[u2++].ptx = NULL;
      if (!out->notma_ptx[k]) tl_fatal(ctx, TL_ERR_NOMEM, "out of memory copying PTX");
      const tl_kernel_info *nki = &out->notma_kernels[k];
      if (nki->cluster && !cg_cluster_directives(&out->notma_ptx[k], nki->entry)) {
        tl_error(ctx, TL_NOLOC, "codegen: no .maxntid directive of entry '%s' to put its cluster after", nki->entry);
        ok = false;
      }
    }
  }
  for (int k = 0; k < ntotal; k++) unit_end(&units[k]);
  if (!ok) tl_codegen_result_free(out);
  return ok;
}
