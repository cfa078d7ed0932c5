/* emit_rope.c: requires the main-loop plan (dot_plan.c) of a kernel whose keys lib/rope_producer.c
 * matched under TILEC_ROPE_PRODUCER=1, in fa3's warp-specialized form (emit_ws.c, emit_overlap.c);
 * plans and emits the rotation of k by the producer warpgroup.  docs/pipelines.md "RoPE in fa3's
 * producer".
 *
 *   plan: k's two halves stream as the score dots' B (lib/schedule.c asks tl_rope_stream_load): each a
 *     [BN][64] slot of 128-byte swizzled rows, TMA'd like the plain kernel's K; the rotation's ops (the
 *     widening casts, the table loads, the products, the rounding, the trans) are the consumers' no
 *     longer (rope_skip); each slot gets a "loaded" mbarrier (k's boxes), its "full" one counts 2.
 *   producer, each k-step (all 128 threads): wait "empty"; thread 0 issues k's boxes on "loaded" and
 *     V's on "full" (arrive.expect_tx each); all wait "loaded"; each thread rotates 8 pairs of 16-byte
 *     chunks in place: chunk c of row r of the first half and of the second sit at the same offset
 *     of their slots (the same swizzle), so x1' = x1 c - x2 s and x2' = x2 c + x1 s overwrite them,
 *     with c, s the table rows of the keys' positions read from global memory (L2: every CTA reads
 *     the same rows); fence.proxy.async (st.shared is the generic proxy, wgmma reads the async
 *     one), bar.sync 2 of the 128, thread 0 arrives on "full".  A tensor failing the map test (the
 *     inline fallback): the 128 threads copy the slot element by element first, and arrive twice.
 *   consumers: the plain fa3 turn: the two chained score dots read the slot's halves as one K = D
 *     dot would, 8 wgmma on one commit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "ring.h"
#include "code_env.h"

/* The producer's registers (setmaxnreg.dec) and the consumers' (inc): 128 x 48 + 256 x 224 = 63488 of the
 * CTA's 384 x 168 = 64512 (ptxas 13.0: the default split's 40 leaves the rotation a 4-byte spill slot a
 * step; 48 none, full and causal).  (48 / 232 = 65536 was over the CTA's pool: the consumers'
 * setmaxnreg.inc never returned, emit_ws.c fit_pool.) */
#define ROPE_PRODUCER_REGS 48
#define ROPE_CONSUMER_REGS 224

void cg_rope_plan(cg *g) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  tl_rope_match m;
  /* (the kernel's no-TMA form keeps the consumers' rotation: dot_plan.c's stream rule then refuses
   * the key halves, and the rotation is computed and staged as without the switch) */
  if (!f->layouts || cg_tma_mode(g) == TL_TMA_OFF || tl_code_env_off("TILEC_TMA") || !tl_rope_producer_on(f, &m)) return;
  p->rope = tl_alloc(&g->ctx->arena, sizeof *p->rope);
  *p->rope = m;
  p->rope_skip = tl_alloc(&g->ctx->arena, (size_t)f->ops.len + 1);
  memset(p->rope_skip, 0, (size_t)f->ops.len + 1);
  for (int i = 0; i < m.nops; i++) p->rope_skip[m.ops[i]] = true;
  /* layout_assign's conversions of the rotation's values (and of the key halves) */
  for (bool more = true; more;) {
    more = false;
    for (int32_t id = 0; id < f->ops.len; id++) {
      tl_op *o = tl_op_at(f, id);
      if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_convert_layout || p->rope_skip[id]) continue;
      int32_t d = tl_val(f, o->opnd[0])->def;
      if (d >= 0 && (p->rope_skip[d] || d == m.load_lo || d == m.load_hi)) p->rope_skip[id] = more = true;
    }
  }
}

bool cg_rope_skips(cg *g, int32_t op) {
  cg_plan *p = g->plan;
  if (!p || g->plan_f != g->f || !p->rope_skip) return false;
  if (op == p->rope->loop) cg_rope_preamble_end(g); /* (the preamble's borrowed scratch ends) */
  return p->rope_skip[op];
}

void cg_rope_preamble(cg *g) {
  cg_plan *p = g->plan;
  if (!p->rope) return;
  g->scratch_lo = p->rope_scratch_off;
  g->scratch_hi = p->rope_scratch_off + p->rope_scratch_bytes;
  g->scratch_strict = true;
}

void cg_rope_preamble_end(cg *g) {
  if (!g->scratch_strict) return;
  g->scratch_lo = g->scratch_hi = 0;
  g->scratch_strict = false;
}

static cg_stream *stream_of_load(cg_plan *p, int32_t load) {
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].load_op == load) return &p->streams[i];
  return NULL;
}

int cg_rope_plan_end(cg *g, int persist) {
  cg_plan *p = g->plan;
  tl_rope_match *m = p->rope;
  if (!m) return persist;
  cg_ring *R = p->nring == 1 ? &p->rings[0] : NULL;
  cg_stream *k0 = stream_of_load(p, m->load_lo), *k1 = stream_of_load(p, m->load_hi);
  int first = cg_wg_index(p, m->dot_first);
  const char *why = NULL;
  if (!R || R->for_op != m->loop) why = "one ring, of the main loop";
  else if (!k0 || !k1 || k0->prologue || k1->prologue) why = "k's halves streamed as the score dots' B";
  else if (!k0->wg || !k1->wg || !k0->swz || !k1->swz || k0->cols * k0->eb != 128 || k1->cols * k1->eb != 128 ||
           k0->rows != m->bn || k1->rows != m->bn)
    why = "k's halves in 128-byte swizzled wgmma rows (a half head dimension of 64 16-bit columns)";
  else if (!R->tma) why = "a ring fed by TMA";
  else if (!R->ws || !p->ws_attn || !p->ws_turns || !p->turns_late)
    why = "fa3's producer warpgroup and turns with the late value dot (TILEC_ATTN_WS=fa3 or attn-ws=fa3, -D BN=128)";
  else if (first < 0 || !p->wg_chain[first]) why = "the two score dots chained on wgmma";
  else if (p->q_tma || p->cluster) why = "no q by TMA and no cluster";
  /* the preamble's scratch (the layout conversions of q's table rows, 32 KiB of f32) in q's two resident
   * slots, which are staged only after it (the fa3 ring leaves no room for a scratch of its own) */
  int32_t qa = tl_op_at(g->f, m->dot_lo)->opnd[0], qb = tl_op_at(g->f, m->dot_hi)->opnd[0];
  if (!why && (p->vkind[qa] != SRC_INVARIANT || p->vkind[qb] != SRC_INVARIANT)) why = "q's halves resident (staged once)";
  if (!why) {
    int32_t lo = p->vstream[qa] < p->vstream[qb] ? p->vstream[qa] : p->vstream[qb];
    int32_t hi = p->vstream[qa] < p->vstream[qb] ? p->vstream[qb] : p->vstream[qa];
    int32_t one = (int32_t)tl_type_numel(&tl_val(g->f, qa)->type) * 2;
    if (hi - lo != one) why = "q's two resident slots side by side";
    p->rope_scratch_off = lo;
    p->rope_scratch_bytes = 2 * one;
  }
  if (why)
    cg_unsupported(g, "TILEC_ROPE_PRODUCER=1: the rotation of k by fa3's producer warpgroup needs %s; unset the switch",
                   why);
  persist = (persist + 7) / 8 * 8;
  p->rope_mbar_off = persist;
  persist += 8 * R->stages;
  tl_sbuf note = {0};
  tl_sbuf_printf(&note,
                 "the rotation of k by the producer warpgroup (TILEC_ROPE_PRODUCER=1): k's halves TMA'd into the "
                 "slot (%d x %d each, 128-byte swizzle) on a \"loaded\" mbarrier, V on \"full\" (count 2); the "
                 "producer's 128 threads (setmaxnreg %d, the consumers %d) rotate them in place with the %s table "
                 "rows from global memory, fence.proxy.async, bar.sync 2, one arrive on \"full\"; the consumers' "
                 "turn is the plain kernel's (the chained score dots read the slot, %d ops of the rotation not "
                 "emitted)",
                 m->bn, m->half, ROPE_PRODUCER_REGS, ROPE_CONSUMER_REGS, tl_dtype_name(m->table_dtype), m->nops);
  p->rope_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  return persist;
}

void cg_rope_regs(cg *g, int *producer, int *consumer) {
  *producer = ROPE_PRODUCER_REGS, *consumer = ROPE_CONSUMER_REGS;
  /* TILEC_WS_PRODUCER_REGS=N (measuring): N for the producer, the rest for the consumers */
  const char *pr = tl_code_env("TILEC_WS_PRODUCER_REGS");
  if (pr && atoi(pr) >= 24 && atoi(pr) <= 128) {
    *producer = atoi(pr) / 8 * 8;
    *consumer = 240; /* (lowered to the rest of the CTA's pool by cg_ws_regs: emit_ws.c fit_pool) */
  }
  (void)g;
}

/* ---- the producer ---------------------------------------------------------------------------- */

static LLVMValueRef add64(cg *g, LLVMValueRef x, int64_t c) { return c ? LLVMBuildAdd(g->B, x, cg_i64(g, c), "") : x; }
static LLVMValueRef mul64(cg *g, LLVMValueRef x, int64_t c) { return c == 1 ? x : LLVMBuildMul(g->B, x, cg_i64(g, c), ""); }

static LLVMTypeRef v4i32(cg *g) {
  LLVMTypeRef e[4] = {g->i32, g->i32, g->i32, g->i32};
  return LLVMStructTypeInContext(g->C, e, 4, 0);
}

static LLVMTypeRef v4f32(cg *g) {
  LLVMTypeRef e[4] = {g->f32, g->f32, g->f32, g->f32};
  return LLVMStructTypeInContext(g->C, e, 4, 0);
}

/* One table (COS or SIN) of the match, as the producer reads it. */
typedef struct table {
  cg_tensor *t;
  bool f32;     /* else a 16-bit float (bf16 / f16) widened */
  bool bf16;
  int eb;
} table;

/* Row t (i64, in range), columns col0 .. col0+7 (i32) of table T as 8 f32: by two 16-byte loads when
 * `vec` (unit last stride, 16-byte aligned rows), else element by element. */
static void table_row8(cg *g, const table *T, LLVMValueRef t, LLVMValueRef col0, bool vec, LLVMValueRef out[8]) {
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, T->t->ptr, g->i64, "");
  LLVMValueRef rowel = LLVMBuildMul(g->B, t, T->t->stride[0], "");
  LLVMValueRef c64 = LLVMBuildZExt(g->B, col0, g->i64, "");
  if (vec) {
    LLVMValueRef a = LLVMBuildAdd(g->B, base, mul64(g, LLVMBuildAdd(g->B, rowel, c64, ""), T->eb), "");
    if (T->f32) {
      for (int h = 0; h < 2; h++) {
        LLVMValueRef ad = add64(g, a, 16 * h);
        LLVMValueRef v = cg_asm(g, v4f32(g), "ld.global.nc.v4.f32 {$0, $1, $2, $3}, [$4];", "=f,=f,=f,=f,l", &ad, 1, false);
        for (int i = 0; i < 4; i++) out[4 * h + i] = LLVMBuildExtractValue(g->B, v, (unsigned)i, "");
      }
      return;
    }
    LLVMValueRef v = cg_asm(g, v4i32(g), "ld.global.nc.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l", &a, 1, false);
    for (int i = 0; i < 4; i++) {
      LLVMValueRef w = LLVMBuildExtractValue(g->B, v, (unsigned)i, "");
      LLVMValueRef lo = LLVMBuildTrunc(g->B, w, LLVMInt16TypeInContext(g->C), "");
      LLVMValueRef hi = LLVMBuildTrunc(g->B, LLVMBuildLShr(g->B, w, cg_i32(g, 16), ""), LLVMInt16TypeInContext(g->C), "");
      LLVMTypeRef ht = T->bf16 ? LLVMBFloatTypeInContext(g->C) : LLVMHalfTypeInContext(g->C);
      out[2 * i] = LLVMBuildFPExt(g->B, LLVMBuildBitCast(g->B, lo, ht, ""), g->f32, "");
      out[2 * i + 1] = LLVMBuildFPExt(g->B, LLVMBuildBitCast(g->B, hi, ht, ""), g->f32, "");
    }
    return;
  }
  /* (the column stride through an asm in the row loop: else LLVM hoists the 8 columns' 64-bit offsets
   * of both tables out of it, 32 registers the producer has not) */
  LLVMValueRef s1 = cg_asm(g, g->i64, "mov.b64 $0, $1;", "=l,l", &T->t->stride[1], 1, true);
  LLVMValueRef a = LLVMBuildAdd(g->B, base, mul64(g, LLVMBuildAdd(g->B, rowel, LLVMBuildMul(g->B, c64, s1, ""), ""), T->eb), "");
  LLVMValueRef step = mul64(g, s1, T->eb);
  for (int i = 0; i < 8; i++, a = LLVMBuildAdd(g->B, a, step, "")) {
    if (T->f32) {
      out[i] = cg_asm(g, g->f32, "ld.global.nc.f32 $0, [$1];", "=f,l", &a, 1, false);
    } else {
      LLVMValueRef h = cg_asm(g, LLVMInt16TypeInContext(g->C), "ld.global.nc.b16 $0, [$1];", "=h,l", &a, 1, false);
      LLVMTypeRef ht = T->bf16 ? LLVMBFloatTypeInContext(g->C) : LLVMHalfTypeInContext(g->C);
      out[i] = LLVMBuildFPExt(g->B, LLVMBuildBitCast(g->B, h, ht, ""), g->f32, "");
    }
  }
}

/* The address of row t (i64), column col0 (i32) of table T (unit last stride: the 16-byte path). */
static LLVMValueRef table_addr(cg *g, const table *T, LLVMValueRef t, LLVMValueRef col0) {
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, T->t->ptr, g->i64, "");
  LLVMValueRef el = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, t, T->t->stride[0], ""), LLVMBuildZExt(g->B, col0, g->i64, ""), "");
  return LLVMBuildAdd(g->B, base, mul64(g, el, T->eb), "");
}

/* Rows t of both tables, this thread's columns, into L1 (prefetch.global.L1: no registers held), so
 * that the 16-byte loads of a later row hit L1 instead of waiting for L2 in the rolled loop. */
static void prefetch_rows(cg *g, const table *C, const table *Sn, LLVMValueRef t, LLVMValueRef col0) {
  LLVMValueRef a[2] = {table_addr(g, C, t, col0), table_addr(g, Sn, t, col0)};
  for (int i = 0; i < 2; i++) cg_asm_void(g, "prefetch.global.L1 [$0];", "l", &a[i], 1);
}

/* The two f32 halves of a word of two 16-bit floats (element 2i in the low half). */
static void widen2(cg *g, LLVMValueRef w, bool bf16, LLVMValueRef *lo, LLVMValueRef *hi) {
  if (bf16) { /* bf16 -> f32: the bits shifted up */
    *lo = LLVMBuildBitCast(g->B, LLVMBuildShl(g->B, w, cg_i32(g, 16), ""), g->f32, "");
    *hi = LLVMBuildBitCast(g->B, LLVMBuildAnd(g->B, w, cg_i32(g, (int32_t)0xffff0000u), ""), g->f32, "");
    return;
  }
  LLVMTypeRef h16 = LLVMHalfTypeInContext(g->C), i16 = LLVMInt16TypeInContext(g->C);
  *lo = LLVMBuildFPExt(g->B, LLVMBuildBitCast(g->B, LLVMBuildTrunc(g->B, w, i16, ""), h16, ""), g->f32, "");
  *hi = LLVMBuildFPExt(g->B, LLVMBuildBitCast(g->B, LLVMBuildTrunc(g->B, LLVMBuildLShr(g->B, w, cg_i32(g, 16), ""), i16, ""), h16, ""),
                       g->f32, "");
}

/* Two f32 rounded to a word of two 16-bit floats (lo in the low half). */
static LLVMValueRef narrow2(cg *g, LLVMValueRef lo, LLVMValueRef hi, bool bf16) {
  LLVMValueRef args[2] = {hi, lo};
  return cg_asm(g, g->i32, bf16 ? "cvt.rn.bf16x2.f32 $0, $1, $2;" : "cvt.rn.f16x2.f32 $0, $1, $2;", "=r,f,f", args, 2,
                false);
}

/* The rotation's products may be fused into FMUL + FFMA (one rounding of x1 c skipped) only when
 * they are exact in f32, so that the fma gives the source's bits (emit_elementwise.c's rule,
 * contract_exact_product; docs/interpreter.md: f32 ops round once each, no contraction): k's 16-bit
 * halves (8 or 11 significant bits) times 16-bit tables (8 or 11) need at most 22 <= 24.  With f32
 * tables (24 bits) a fused product differs from the interpreter's in about 1 of 40 000 rotated
 * elements after the bf16 rounding (a result next to a bf16 rounding boundary), one bf16 ulp of k':
 * with gpu_test_examples' data (values to 2, scale to 1) a score moves by up to ~0.3 (in log2 units)
 * and a near tie of the softmax's top keys puts outputs past the tolerance: the H200's FAIL at (2, 8,
 * 1100) causal (twentieth session: 60 mismatches, max 0.0425) is exactly that, reproduced on the CPU
 * from its seed by tools/rope_round_sim.c.  TILEC_ROPE_FUSE=1 (measuring only) fuses them anyway. */
static bool rope_fuse_exact(const table *C, const table *Sn) {
  if (tl_code_env_on("TILEC_ROPE_FUSE")) return true;
  return !C->f32 && !Sn->f32;
}

/* This thread's share of the rotation of slot `slot`: pairs of 16-byte chunks (row r, chunk c) for
 * c = ptid % 8 and r = ptid / 8 + 16 i (a warp: 4 whole 128-byte rows a phase, no bank conflict). */
static void rotate_slot(cg *g, cg_stream *k0, cg_stream *k1, LLVMValueRef slot, LLVMValueRef pos0, LLVMValueRef ptid,
                        const table *C, const table *Sn, bool vec, bool bf16) {
  tl_rope_match *m = g->plan->rope;
  bool fuse = rope_fuse_exact(C, Sn);
  LLVMValueRef b0 = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_add_c(g, cg_mul_c(g, slot, k0->stage_bytes), k0->offset), "");
  LLVMValueRef b1 = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_add_c(g, cg_mul_c(g, slot, k1->stage_bytes), k1->offset), "");
  LLVMValueRef c = LLVMBuildAnd(g->B, ptid, cg_i32(g, 7), "");
  LLVMValueRef r0 = LLVMBuildLShr(g->B, ptid, cg_i32(g, 3), "");
  LLVMValueRef last = LLVMBuildSub(g->B, LLVMBuildZExt(g->B, C->t->size[0], g->i64, ""), cg_i64(g, 1), "");
  LLVMValueRef col0 = cg_mul_c(g, c, 8);
  /* a loop of BN / 16 trips that LLVM keeps rolled (unrolled, the 8 rows' loads and addresses live at
   * once: 3.6 KB of spills at the producer's 40 registers) */
  LLVMValueRef iv = LLVMBuildAlloca(g->PB, g->i32, "rope.row");
  LLVMBuildStore(g->B, cg_i32(g, 0), iv);
  LLVMBasicBlockRef hb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.row.head");
  LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.row.body");
  LLVMBasicBlockRef db = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.row.done");
  LLVMBuildBr(g->B, hb);
  LLVMPositionBuilderAtEnd(g->B, hb);
  LLVMValueRef i16x = LLVMBuildLoad2(g->B, g->i32, iv, "");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, i16x, cg_i32(g, m->bn), ""), bb, db);
  LLVMPositionBuilderAtEnd(g->B, bb);
  {
    LLVMValueRef r = LLVMBuildAdd(g->B, r0, i16x, "");
    LLVMValueRef off = cg_slot_off(g, k0, r, c);
    LLVMValueRef a0 = LLVMBuildAdd(g->B, b0, off, ""), a1 = LLVMBuildAdd(g->B, b1, off, "");
    LLVMValueRef x = cg_asm(g, v4i32(g), "ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r,~{memory}", &a0, 1, true);
    LLVMValueRef y = cg_asm(g, v4i32(g), "ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r,~{memory}", &a1, 1, true);
    /* the key's position: rows past the table's end are keys past S (zeros from TMA, masked by the
     * kernel); they read the last row instead of past it */
    LLVMValueRef t = LLVMBuildAdd(g->B, pos0, LLVMBuildZExt(g->B, r, g->i64, ""), "");
    t = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, t, last, ""), last, t, "");
    LLVMValueRef cs[8], sn[8];
    if (vec) { /* two rows ahead into L1 (the rows of this one: two iterations ago, or before the wait) */
      LLVMValueRef ta = LLVMBuildAdd(g->B, t, cg_i64(g, 32), "");
      prefetch_rows(g, C, Sn, LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, ta, last, ""), last, ta, ""), col0);
    }
    table_row8(g, C, t, col0, vec, cs);
    table_row8(g, Sn, t, col0, vec, sn);
    LLVMValueRef o0[4], o1[4];
    for (int w = 0; w < 4; w++) {
      LLVMValueRef x1[2], x2[2], r1[2], r2[2];
      widen2(g, LLVMBuildExtractValue(g->B, x, (unsigned)w, ""), bf16, &x1[0], &x1[1]);
      widen2(g, LLVMBuildExtractValue(g->B, y, (unsigned)w, ""), bf16, &x2[0], &x2[1]);
      for (int e = 0; e < 2; e++) {
        LLVMValueRef cc = cs[2 * w + e], ss = sn[2 * w + e];
        /* as the source: x1 c - x2 s and x2 c + x1 s in f32, each product and the sum rounded (built
         * pairwise: the four products first made ptxas 13.0 spill 36 B of the producer's 48 registers
         * in the full kernel's TMA form) */
        LLVMValueRef p[4];
        p[0] = LLVMBuildFMul(g->B, x1[e], cc, "");
        p[1] = LLVMBuildFMul(g->B, x2[e], ss, "");
        r1[e] = LLVMBuildFSub(g->B, p[0], p[1], "");
        p[2] = LLVMBuildFMul(g->B, x2[e], cc, "");
        p[3] = LLVMBuildFMul(g->B, x1[e], ss, "");
        r2[e] = LLVMBuildFAdd(g->B, p[2], p[3], "");
        if (fuse) {
          for (int k = 0; k < 4; k++) LLVMSetFastMathFlags(p[k], LLVMFastMathAllowContract);
          LLVMSetFastMathFlags(r1[e], LLVMFastMathAllowContract);
          LLVMSetFastMathFlags(r2[e], LLVMFastMathAllowContract);
        }
      }
      o0[w] = narrow2(g, r1[0], r1[1], bf16);
      o1[w] = narrow2(g, r2[0], r2[1], bf16);
    }
    LLVMValueRef s0[5] = {a0, o0[0], o0[1], o0[2], o0[3]}, s1[5] = {a1, o1[0], o1[1], o1[2], o1[3]};
    cg_asm_void(g, "st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,~{memory}", s0, 5);
    cg_asm_void(g, "st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,~{memory}", s1, 5);
  }
  LLVMBuildStore(g->B, cg_add_c(g, i16x, 16), iv);
  LLVMValueRef br = LLVMBuildBr(g->B, hb);
  /* !llvm.loop !{self, !{"llvm.loop.unroll.disable"}} */
  LLVMMetadataRef dis = LLVMMDStringInContext2(g->C, "llvm.loop.unroll.disable", 24);
  LLVMMetadataRef inner = LLVMMDNodeInContext2(g->C, &dis, 1);
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(g->C, NULL, 0);
  LLVMMetadataRef ops[2] = {tmp, inner};
  LLVMMetadataRef loop = LLVMMDNodeInContext2(g->C, ops, 2);
  LLVMMetadataReplaceAllUsesWith(tmp, loop);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(g->C, "llvm.loop", 9), LLVMMetadataAsValue(g->C, loop));
  LLVMPositionBuilderAtEnd(g->B, db);
}

/* i1: table T's rows can be read by 16-byte loads (unit last stride, 16-byte aligned base and rows). */
static LLVMValueRef table_vec_ok(cg *g, const table *T) {
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, T->t->ptr, g->i64, "");
  LLVMValueRef rs = mul64(g, T->t->stride[0], T->eb);
  LLVMValueRef mis = LLVMBuildAnd(g->B, LLVMBuildOr(g->B, base, rs, ""), cg_i64(g, 15), "");
  return LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, mis, cg_i64(g, 0), ""),
                      LLVMBuildICmp(g->B, LLVMIntEQ, T->t->stride[1], cg_i64(g, 1), ""), "");
}

static table table_of(cg *g, int32_t param) {
  table T;
  T.t = &g->tensors[param];
  tl_dtype dt = g->f->params.data[param].dtype;
  T.f32 = dt == TL_F32;
  T.bf16 = dt == TL_BF16;
  T.eb = tl_dtype_bytes(dt);
  return T;
}

/* The "loaded" mbarrier of ring slot `slot` (i32). */
static LLVMValueRef loaded_mbar(cg *g, LLVMValueRef slot) {
  return LLVMBuildAdd(g->B, cg_smem_base32(g), cg_add_c(g, LLVMBuildShl(g->B, slot, cg_i32(g, 3), ""), g->plan->rope_mbar_off),
                      "");
}

/* Thread 0 (is0): k-step j's boxes into `slot`: k's halves on its "loaded" mbarrier, the other
 * streams (V) on its "full" one, each behind its arrive.expect_tx. */
static void issue_step(cg *g, cg_ring *R, cg_stream *k0, cg_stream *k1, LLVMValueRef j, LLVMValueRef slot,
                       LLVMValueRef is0) {
  cg_plan *p = g->plan;
  int kbytes = cg_tma_stream_bytes(k0) + cg_tma_stream_bytes(k1), obytes = 0;
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == R->for_op && &p->streams[i] != k0 && &p->streams[i] != k1)
      obytes += cg_tma_stream_bytes(&p->streams[i]);
  LLVMBasicBlockRef ib = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.issue");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.issued");
  LLVMBuildCondBr(g->B, is0, ib, jb);
  LLVMPositionBuilderAtEnd(g->B, ib);
  LLVMValueRef ivs = cg_ws_iv_of_step(g, R, j);
  LLVMValueRef full = cg_mbar_addr(g, R, slot), loaded = loaded_mbar(g, slot);
  cg_mbar_expect_tx(g, loaded, kbytes);
  cg_tma_issue_stream(g, k0, ivs, slot, loaded);
  cg_tma_issue_stream(g, k1, ivs, slot, loaded);
  cg_mbar_expect_tx(g, full, obytes);
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == R->for_op && &p->streams[i] != k0 && &p->streams[i] != k1)
      cg_tma_issue_stream(g, &p->streams[i], ivs, slot, full);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}

/* The producer's k-loop of one tile.  Step j: the slot's "empty" (every thread: its phase bits stay
 * those of emit_ws.c's tail), thread 0 issues the step's boxes, the table rows' first L1 prefetches,
 * "loaded", the rotation, the publication.  The boxes are issued as soon as the slot is free (slot j's
 * release is the consumers' iteration j-3 value dot, waited in iteration j-2), so TMA's latency and
 * the rotation together have the ~1.5 consumer steps until iteration j needs the slot.  (Issuing step
 * j+1 before rotating step j would not start TMA earlier -- slot j+1 is released in iteration j-1 --
 * but would hold step j's rotation until then: half a step to rotate instead of one and a half.) */
void cg_rope_producer_loop(cg *g, cg_ring *R, LLVMValueRef wr, LLVMValueRef ph, LLVMValueRef lph, LLVMValueRef ptid) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  tl_rope_match *m = p->rope;
  cg_stream *k0 = stream_of_load(p, m->load_lo), *k1 = stream_of_load(p, m->load_hi);
  bool bf16 = tl_val(f, tl_op_at(f, m->load_lo)->res[0])->type.dtype == TL_BF16;
  table C = table_of(g, m->cos_param), Sn = table_of(g, m->sin_param);
  LLVMValueRef vec = LLVMBuildAnd(g->B, table_vec_ok(g, &C), table_vec_ok(g, &Sn), "");
  LLVMValueRef is0 = LLVMBuildICmp(g->B, LLVMIntEQ, ptid, cg_i32(g, 0), "");
  tl_op *cl = tl_op_at(f, m->load_cos);
  int32_t rowv = cl->opnd[cl->nopnd - 2];
  LLVMValueRef n = cg_ws_trip_count(g, R);
  LLVMValueRef jv = LLVMBuildAlloca(g->PB, g->i64, "rope.step");
  LLVMBuildStore(g->B, cg_i64(g, 0), jv);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.body");
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.tma");
  LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.copy");
  LLVMBasicBlockRef vb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.rotate.vec");
  LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.rotate.elem");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.publish");
  LLVMBasicBlockRef xb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.done");
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, head);
  LLVMValueRef j = LLVMBuildLoad2(g->B, g->i64, jv, "");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, j, n, ""), body, xb);
  LLVMPositionBuilderAtEnd(g->B, body);
  LLVMValueRef slot = LLVMBuildLoad2(g->B, g->i32, wr, "");
  LLVMValueRef posv = LLVMBuildAlloca(g->PB, g->i64, "rope.pos0");
  cg_cond_br_likely(g, R->tma_ok, tb, cb);
  /* TMA: this step's boxes once its slot is empty, then its rotation */
  LLVMPositionBuilderAtEnd(g->B, tb);
  {
    cg_mbar_wait(g, cg_ws_empty_addr(g, R, slot), cg_ws_take_parity(g, ph, slot, 1));
    issue_step(g, R, k0, k1, j, slot, is0);
    LLVMValueRef pos0 = cg_to_i64(g, cg_remat(g, rowv, R->for_op, cg_ws_iv_of_step(g, R, j)));
    LLVMBuildStore(g->B, pos0, posv);
    /* this thread's first two rows of the tables into L1 while k's boxes land */
    LLVMBasicBlockRef pb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.prefetch");
    LLVMBasicBlockRef lb = LLVMAppendBasicBlockInContext(g->C, g->fn, "rope.wait.loaded");
    LLVMBuildCondBr(g->B, vec, pb, lb);
    LLVMPositionBuilderAtEnd(g->B, pb);
    {
      LLVMValueRef last = LLVMBuildSub(g->B, LLVMBuildZExt(g->B, C.t->size[0], g->i64, ""), cg_i64(g, 1), "");
      LLVMValueRef r0 = LLVMBuildZExt(g->B, LLVMBuildLShr(g->B, ptid, cg_i32(g, 3), ""), g->i64, "");
      LLVMValueRef col0 = cg_mul_c(g, LLVMBuildAnd(g->B, ptid, cg_i32(g, 7), ""), 8);
      for (int i = 0; i < 2; i++) {
        LLVMValueRef t = LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, pos0, r0, ""), cg_i64(g, 16 * i), "");
        prefetch_rows(g, &C, &Sn, LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, t, last, ""), last, t, ""), col0);
      }
    }
    LLVMBuildBr(g->B, lb);
    LLVMPositionBuilderAtEnd(g->B, lb);
    cg_mbar_wait(g, loaded_mbar(g, slot), cg_ws_take_parity(g, lph, slot, 0));
    LLVMBuildCondBr(g->B, vec, vb, sb);
  }
  /* a tensor failing the map test: the slot copied element by element, then rotated */
  LLVMPositionBuilderAtEnd(g->B, cb);
  cg_mbar_wait(g, cg_ws_empty_addr(g, R, slot), cg_ws_take_parity(g, ph, slot, 1));
  {
    LLVMValueRef ivs = cg_ws_iv_of_step(g, R, j);
    for (int i = 0; i < p->nstream; i++)
      if (p->streams[i].for_op == R->for_op) cg_copy_slow(g, &p->streams[i], ivs, slot, ptid, 128);
    LLVMBuildStore(g->B, cg_to_i64(g, cg_remat(g, rowv, R->for_op, ivs)), posv);
  }
  cg_asm_void(g, "bar.sync 2, 128;", "~{memory}", NULL, 0);
  cg_ws_arrive_if(g, cg_mbar_addr(g, R, slot), is0); /* (the arrival TMA's expect_tx would have made) */
  LLVMBuildBr(g->B, sb);
  LLVMPositionBuilderAtEnd(g->B, vb);
  rotate_slot(g, k0, k1, slot, LLVMBuildLoad2(g->B, g->i64, posv, ""), ptid, &C, &Sn, true, bf16);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, sb);
  rotate_slot(g, k0, k1, slot, LLVMBuildLoad2(g->B, g->i64, posv, ""), ptid, &C, &Sn, false, bf16);
  LLVMBuildBr(g->B, jb);
  /* st.shared writes through the generic proxy, wgmma reads through the async one */
  LLVMPositionBuilderAtEnd(g->B, jb);
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  cg_asm_void(g, "bar.sync 2, 128;", "~{memory}", NULL, 0);
  cg_ws_arrive_if(g, cg_mbar_addr(g, R, slot), is0);
  LLVMBuildStore(g->B, cg_slot_next(g, slot, R->stages), wr);
  LLVMBuildStore(g->B, LLVMBuildAdd(g->B, j, cg_i64(g, 1), ""), jv);
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, xb);
}
