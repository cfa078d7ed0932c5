/* emit_ring.c: requires the plan (dot_plan.c); emits the cp.async ring of
 * streamed dot operands: the prologue in the loop preheader, each
 * iteration's wait / barrier / next stage at the first streamed load of
 * the body, the drain at the loop exit.  A stage's copies of one stream
 * are emit_copy_issue.c's.  The TMA ring (emit_tma.c) and warp
 * specialization (emit_ws.c) hook in here.  docs/pipelines.md "multistage". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "code_env.h"
#include "schedule.h"

#include "ring.h"

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


static void commit(cg *g) { cg_asm_void(g, "cp.async.commit_group;", "~{memory}", NULL, 0); }

/* Every stream of loop L issued into slot `slot` at ivs (no commit). */
static void issue_copies(cg *g, int32_t L, LLVMValueRef ivs, LLVMValueRef slot, bool branchy) {
  cg_plan *p = g->plan;
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == L) cg_issue_stream(g, &p->streams[i], ivs, slot, branchy);
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
  if (branchy) cg_stream_whole_once(g, R->for_op, lo64, step64, ivty);
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
    /* (its slots were an earlier loop's: another warp may still read that loop's last ones) */
    if (R->after_ring) cg_barrier(g);
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
  if (tl_code_env_off("TILEC_SCRATCH_OVER_RING") || p->rings_overlap || R->tma || R->wgmma || R->lag || R->late ||
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
  cg_stream_whole_once_end(g, for_op);
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
    if (p->streams[i].for_op == L && cg_stream_index_reads_memory(g, &p->streams[i])) {
      if (!ivs) ivs = iv_at(g, phi, S - 1 - R->lag, step64, reg);
      cg_stream_prefetch_index(g, &p->streams[i], ivs);
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
