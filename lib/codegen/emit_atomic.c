/* emit_atomic.c: requires layouts; lowers `atomic` (add / max / min into a
 * global view) to one predicated PTX `red` per element, relaxed at device
 * (gpu) scope, each element by exactly one thread (cg_view_elements).
 *
 *   add: red.add.f32 / .s32, red.add.noftz.f16 (sm_70+) / .bf16 (sm_90+); f32 tiles on sm_90
 *   in groups of 2 or 4 contiguous elements by red.add.v2/v4.f32 where the launch's alignment
 *   allows (cg_view_groups), per element otherwise;
 *   max, min of i32: red.max.s32 / red.min.s32;
 *   max, min of f32: on the bits, as integers: IEEE floats of one sign order
 *   like their bit patterns (as s32 when non-negative, reversed as u32 when
 *   negative), so max(x) is red.max.s32 when x's sign bit is clear and
 *   red.min.u32 when set, and min the other way round.  Exact for every
 *   non-NaN value, -0.0 < +0.0 included (docs/language.md "Atomics").
 *   fetch_add (one i32 element, the old value, acq_rel over the whole program): bar.sync (the
 *   program's earlier accesses, every thread's, ordered before thread 0's), thread 0's
 *   atom.acq_rel.gpu.global.add.u32, its result through shared memory, bar.sync (the program's
 *   later accesses ordered after the acquire), as CUTLASS's generic barrier does. */
#include <stdio.h>

#include "cg.h"
#include "code_env.h"

typedef struct atomic_ctx {
  tl_op *o;
  tl_dtype dt;
  cg_val *v;
  tl_dtype vdt;
} atomic_ctx;

static void emit_one(cg *g, void *vctx, LLVMValueRef addr, LLVMValueRef pred, int32_t reg) {
  atomic_ctx *c = vctx;
  LLVMValueRef x = cg_cast(g, c->v->r[c->v->n == 1 ? 0 : reg], c->vdt, c->dt);
  LLVMValueRef p32 = LLVMBuildZExt(g->B, pred, g->i32, "");
  bool half = c->dt == TL_F16 || c->dt == TL_BF16;
  LLVMValueRef bits = LLVMBuildBitCast(g->B, cg_to_mem(g, x, c->dt), half ? g->i16 : g->i32, "");
  char text[256];
  const char *pre = "{ .reg .pred p, s; setp.ne.b32 p, $0, 0; ";
  if (c->o->kind == TL_ATOMIC_ADD) {
    const char *ty = c->dt == TL_F32 ? "f32" : c->dt == TL_I32 ? "s32" : c->dt == TL_F16 ? "noftz.f16" : "noftz.bf16";
    snprintf(text, sizeof text, "%s@p red.relaxed.gpu.global.add.%s [$1], $2; }", pre, ty);
  } else if (c->dt == TL_I32) {
    snprintf(text, sizeof text, "%s@p red.relaxed.gpu.global.%s.s32 [$1], $2; }", pre,
             c->o->kind == TL_ATOMIC_MAX ? "max" : "min");
  } else { /* f32 max / min on the bits */
    bool mx = c->o->kind == TL_ATOMIC_MAX;
    snprintf(text, sizeof text,
             "%ssetp.lt.s32 s, $2, 0; and.pred s, s, p; not.pred p2, s; and.pred p, p, p2; "
             "@p red.relaxed.gpu.global.%s.s32 [$1], $2; @s red.relaxed.gpu.global.%s.u32 [$1], $2; }",
             "{ .reg .pred p, s, p2; setp.ne.b32 p, $0, 0; ", mx ? "max" : "min", mx ? "min" : "max");
  }
  LLVMValueRef args[3] = {p32, addr, bits};
  cg_asm(g, g->vd, text, half ? "r,l,h,~{memory}" : "r,l,r,~{memory}", args, 3, true);
}

/* f32 add of vec (2 or 4) contiguous elements: one red.global.add.v{2,4}.f32 (sm_90). */
static void emit_group(cg *g, void *vctx, LLVMValueRef addr, LLVMValueRef pred, int32_t reg, int vec) {
  atomic_ctx *c = vctx;
  LLVMValueRef args[6] = {LLVMBuildZExt(g->B, pred, g->i32, ""), addr};
  for (int e = 0; e < vec; e++) args[2 + e] = cg_cast(g, c->v->r[reg + e], c->vdt, TL_F32);
  char text[160];
  snprintf(text, sizeof text, "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p red.relaxed.gpu.global.add.v%d.f32 [$1], %s; }",
           vec, vec == 2 ? "{$2, $3}" : "{$2, $3, $4, $5}");
  cg_asm(g, g->vd, text, vec == 2 ? "r,l,f,f,~{memory}" : "r,l,f,f,f,f,~{memory}", args, (unsigned)(2 + vec), true);
}

typedef struct fetch_ctx {
  LLVMValueRef addr, pred;
} fetch_ctx;

static void record_one(cg *g, void *vctx, LLVMValueRef addr, LLVMValueRef pred, int32_t reg) {
  (void)g, (void)reg;
  fetch_ctx *c = vctx;
  c->addr = addr;
  c->pred = pred;
}

static void emit_fetch_add(cg *g, tl_op *o) {
  if (g->bar_threads)
    cg_unsupported(g, "atomic_fetch_add in a warp-specialized kernel (its barriers are not the whole program's)");
  cg_val *x = cg_get(g, o->opnd[o->nopnd - 1]);
  fetch_ctx c = {NULL, NULL};
  cg_barrier(g);
  cg_view_elements(g, o, record_one, &c); /* a scalar view: one element, thread 0 and in bounds */
  if (!c.addr) TL_INTERNAL(g->ctx, "codegen: fetch_add without an element");
  LLVMValueRef args[3] = {LLVMBuildZExt(g->B, c.pred, g->i32, ""), c.addr, x->r[0]};
  LLVMValueRef old = cg_asm(g, g->i32,
                            "{ .reg .pred p; setp.ne.b32 p, $1, 0; mov.b32 $0, 0; "
                            "@p atom.acq_rel.gpu.global.add.u32 $0, [$2], $3; }",
                            "=r,r,l,r,~{memory}", args, 3, true);
  /* thread 0 writes the old value (0 when the element is outside the tensor) for the program */
  cg_scratch_use(g, 4);
  LLVMValueRef slot = cg_scratch_ptr(g, cg_i32(g, 0));
  LLVMValueRef t0 = LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, g->lane, cg_i32(g, 0), ""),
                                 LLVMBuildICmp(g->B, LLVMIntEQ, g->warp, cg_i32(g, 0), ""), "");
  LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(g->C, g->fn, "fetch.bcast");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->C, g->fn, "fetch.join");
  LLVMBuildCondBr(g->B, t0, wr, join);
  LLVMPositionBuilderAtEnd(g->B, wr);
  LLVMBuildStore(g->B, old, slot);
  LLVMBuildBr(g->B, join);
  LLVMPositionBuilderAtEnd(g->B, join);
  cg_barrier(g);
  cg_val *r = cg_new_val(g, o->res[0], 1);
  r->r[0] = LLVMBuildLoad2(g->B, g->i32, slot, "fetch.old");
  cg_barrier(g); /* the slot is scratch: read by all before the next user writes it */
}

/* The per-element (or per-group) red path. */
static void emit_red(cg *g, tl_op *o) {
  int32_t val = o->opnd[o->nopnd - 1];
  tl_value *tv = tl_val(g->f, o->opnd[0]);
  if (tv->def >= 0 || tv->type.kind != TL_KIND_TENSOR) cg_unsupported(g, "atomic on a tensor that is not a parameter");
  atomic_ctx c = {o, g->f->params.data[tv->index].dtype, cg_get(g, val), (tl_dtype)tl_val(g->f, val)->type.dtype};
  if (c.dt == TL_BF16 && g->sm < 90)
    cg_unsupported(g, "atomic_add on bf16 needs sm_90 (red.add.noftz.bf16); use f32, or f16 on sm_%d", g->sm);
  /* f32 adds of a tile: a vector red per group where the launch allows (sm_90, PTX 8.1); the
   * order of the additions into one element is unchanged (each element still gets one add a
   * program).  TILEC_ATOMIC_VEC=0: one red per element. */
  bool vec_ok = o->kind == TL_ATOMIC_ADD && c.dt == TL_F32 && c.v->n > 1 && g->sm >= 90 &&
                !tl_code_env_off("TILEC_ATOMIC_VEC");
  if (vec_ok && cg_view_groups(g, o, 4, emit_group, emit_one, &c)) return;
  cg_view_elements(g, o, emit_one, &c);
}

void cg_emit_atomic(cg *g, tl_op *o) {
  if (o->kind == TL_ATOMIC_FETCH_ADD) {
    emit_fetch_add(g, o);
    return;
  }
  /* an f32 tile's add by a TMA bulk reduce-add where planned (emit_atomic_tma.c, TILEC_ATOMIC_TMA=1) */
  if (cg_atomic_tma(g, o, emit_red)) return;
  emit_red(g, o);
}
