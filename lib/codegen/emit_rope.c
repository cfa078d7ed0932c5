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
 *     With TILEC_ROPE_AHEAD=A > 0 (default 2) the 16-byte path's table loads run A half rows ahead of
 *     their use in a register ring (rotate_slot_ahead), the producer's split 56 / 224.
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
/* With table loads in flight (TILEC_ROPE_AHEAD > 0): 56, the whole pool with the consumers' 224 (128 x 56 +
 * 256 x 224 = 64512); the consumers cannot give more (216: 16 B of spills in the causal kernel, ptxas 13.0). */
#define ROPE_AHEAD_PRODUCER_REGS 56
/* The default depth, in half rows (see rope_ahead): the deepest with 0 spills at 56 registers, full and
 * causal (ptxas 13.0; bench/RESULTS.md "branch ropefa4" has each depth's registers and SASS). */
#define ROPE_AHEAD_DEFAULT 2
#define ROPE_AHEAD_MAX 7

/* TILEC_ROPE_AHEAD=A: the producer's rotation keeps the table loads of the next A half rows (a half row:
 * 4 columns of cos and of sin, one 16-byte load each with f32 tables) in flight while it rotates one
 * (rotate_slot_ahead); 0 is the form that loads each row's tables in the iteration that uses them
 * (with L1 prefetches two rows ahead). */
static int rope_ahead(void) {
  const char *e = tl_code_env("TILEC_ROPE_AHEAD");
  if (!e || !*e) return ROPE_AHEAD_DEFAULT;
  int a = atoi(e);
  return a < 0 ? 0 : a > ROPE_AHEAD_MAX ? ROPE_AHEAD_MAX : a;
}

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
                 m->bn, m->half, rope_ahead() ? ROPE_AHEAD_PRODUCER_REGS : ROPE_PRODUCER_REGS, ROPE_CONSUMER_REGS,
                 tl_dtype_name(m->table_dtype), m->nops);
  if (rope_ahead()) tl_sbuf_printf(&note, "; the table loads of %d half rows in flight (TILEC_ROPE_AHEAD)", rope_ahead());
  p->rope_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  return persist;
}

void cg_rope_regs(cg *g, int *producer, int *consumer) {
  *producer = rope_ahead() ? ROPE_AHEAD_PRODUCER_REGS : ROPE_PRODUCER_REGS, *consumer = ROPE_CONSUMER_REGS;
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

/* Words w0 .. w0 + nw - 1 of a chunk pair (x: the first half's 16 bytes, y: the second's; two elements a
 * word) rotated with cs[k], sn[k] (column 2 (w - w0) + e of the pair's element e of word w), rounded into
 * o0[w] (x1') and o1[w] (x2'). */
static void rotate_words(cg *g, LLVMValueRef x, LLVMValueRef y, int w0, int nw, const LLVMValueRef *cs,
                         const LLVMValueRef *sn, bool fuse, bool bf16, LLVMValueRef *o0, LLVMValueRef *o1) {
  for (int w = w0; w < w0 + nw; w++) {
    LLVMValueRef x1[2], x2[2], r1[2], r2[2];
    widen2(g, LLVMBuildExtractValue(g->B, x, (unsigned)w, ""), bf16, &x1[0], &x1[1]);
    widen2(g, LLVMBuildExtractValue(g->B, y, (unsigned)w, ""), bf16, &x2[0], &x2[1]);
    for (int e = 0; e < 2; e++) {
      LLVMValueRef cc = cs[2 * (w - w0) + e], ss = sn[2 * (w - w0) + e];
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
}

/* The row loop's back edge with !llvm.loop !{self, !{"llvm.loop.unroll.disable"}} (ptxas: .pragma "nounroll"). */
static void br_no_unroll(cg *g, LLVMBasicBlockRef to) {
  LLVMValueRef br = LLVMBuildBr(g->B, to);
  LLVMMetadataRef dis = LLVMMDStringInContext2(g->C, "llvm.loop.unroll.disable", 24);
  LLVMMetadataRef inner = LLVMMDNodeInContext2(g->C, &dis, 1);
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(g->C, NULL, 0);
  LLVMMetadataRef ops[2] = {tmp, inner};
  LLVMMetadataRef loop = LLVMMDNodeInContext2(g->C, ops, 2);
  LLVMMetadataReplaceAllUsesWith(tmp, loop);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(g->C, "llvm.loop", 9), LLVMMetadataAsValue(g->C, loop));
}

/* The row loop both rotations share (rotate_slot, rotate_slot_ahead).  rows_bases: slot `slot`'s two
 * halves' shared addresses (b0: k's first half, b1: its second) and the thread's chunk c = ptid % 8 and
 * first row r0 = ptid / 8; rows_begin opens the loop over the rows (i16x: the trip's first row offset, 0,
 * 16, ...; < bn), rows_end closes it (i16x += step, rolled); row_halves reads row r's two 16-byte chunks
 * (x, y; a: their addresses) and row_store writes the rotated words back. */
typedef struct rope_rows {
  LLVMValueRef b0, b1, c, r0, iv, i16x;
  LLVMBasicBlockRef head, done;
} rope_rows;

static void rows_bases(cg *g, cg_stream *k0, cg_stream *k1, LLVMValueRef slot, LLVMValueRef ptid, rope_rows *L) {
  L->b0 = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_add_c(g, cg_mul_c(g, slot, k0->stage_bytes), k0->offset), "");
  L->b1 = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_add_c(g, cg_mul_c(g, slot, k1->stage_bytes), k1->offset), "");
  L->c = LLVMBuildAnd(g->B, ptid, cg_i32(g, 7), "");
  L->r0 = LLVMBuildLShr(g->B, ptid, cg_i32(g, 3), "");
}

static void rows_begin(cg *g, rope_rows *L, int bn, const char *head, const char *body, const char *done) {
  L->iv = LLVMBuildAlloca(g->PB, g->i32, "rope.row");
  LLVMBuildStore(g->B, cg_i32(g, 0), L->iv);
  L->head = LLVMAppendBasicBlockInContext(g->C, g->fn, head);
  LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(g->C, g->fn, body);
  L->done = LLVMAppendBasicBlockInContext(g->C, g->fn, done);
  LLVMBuildBr(g->B, L->head);
  LLVMPositionBuilderAtEnd(g->B, L->head);
  L->i16x = LLVMBuildLoad2(g->B, g->i32, L->iv, "");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, L->i16x, cg_i32(g, bn), ""), bb, L->done);
  LLVMPositionBuilderAtEnd(g->B, bb);
}

static void rows_end(cg *g, rope_rows *L, int step) {
  LLVMBuildStore(g->B, cg_add_c(g, L->i16x, step), L->iv);
  br_no_unroll(g, L->head);
  LLVMPositionBuilderAtEnd(g->B, L->done);
}

static void row_halves(cg *g, cg_stream *k0, const rope_rows *L, LLVMValueRef r, LLVMValueRef a[2], LLVMValueRef *x,
                       LLVMValueRef *y) {
  LLVMValueRef off = cg_slot_off(g, k0, r, L->c);
  a[0] = LLVMBuildAdd(g->B, L->b0, off, ""), a[1] = LLVMBuildAdd(g->B, L->b1, off, "");
  *x = cg_asm(g, v4i32(g), "ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r,~{memory}", &a[0], 1, true);
  *y = cg_asm(g, v4i32(g), "ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r,~{memory}", &a[1], 1, true);
}

static void row_store(cg *g, const LLVMValueRef a[2], const LLVMValueRef o0[4], const LLVMValueRef o1[4]) {
  LLVMValueRef s0[5] = {a[0], o0[0], o0[1], o0[2], o0[3]}, s1[5] = {a[1], o1[0], o1[1], o1[2], o1[3]};
  cg_asm_void(g, "st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,~{memory}", s0, 5);
  cg_asm_void(g, "st.shared.v4.b32 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,~{memory}", s1, 5);
}

/* This thread's share of the rotation of slot `slot`: pairs of 16-byte chunks (row r, chunk c) for
 * c = ptid % 8 and r = ptid / 8 + 16 i (a warp: 4 whole 128-byte rows a phase, no bank conflict). */
static void rotate_slot(cg *g, cg_stream *k0, cg_stream *k1, LLVMValueRef slot, LLVMValueRef pos0, LLVMValueRef ptid,
                        const table *C, const table *Sn, bool vec, bool bf16) {
  tl_rope_match *m = g->plan->rope;
  bool fuse = rope_fuse_exact(C, Sn);
  rope_rows L;
  rows_bases(g, k0, k1, slot, ptid, &L);
  LLVMValueRef last = LLVMBuildSub(g->B, LLVMBuildZExt(g->B, C->t->size[0], g->i64, ""), cg_i64(g, 1), "");
  LLVMValueRef col0 = cg_mul_c(g, L.c, 8);
  /* a loop of BN / 16 trips that LLVM keeps rolled (unrolled, the 8 rows' loads and addresses live at
   * once: 3.6 KB of spills at the producer's 40 registers) */
  rows_begin(g, &L, m->bn, "rope.row.head", "rope.row.body", "rope.row.done");
  {
    LLVMValueRef r = LLVMBuildAdd(g->B, L.r0, L.i16x, "");
    LLVMValueRef a[2], x, y;
    row_halves(g, k0, &L, r, a, &x, &y);
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
    rotate_words(g, x, y, 0, 4, cs, sn, fuse, bf16, o0, o1);
    row_store(g, a, o0, o1);
  }
  rows_end(g, &L, 16);
}

/* ---- the rotation with table loads in flight (TILEC_ROPE_AHEAD=A > 0) ---------------------------------
 * The thread's 8 rows are 16 half rows ("units": row r0 + 16 (u / 2), columns col0 + 4 (u % 2) .. + 3 of
 * both halves' chunks), rotated in order.  Before rotating unit u the thread issues the table loads of
 * unit u + A (one 16-byte load of cos and one of sin with f32 tables, 8 bytes each with 16-bit ones),
 * so A units' loads are in flight while one is rotated and each load has A units' work to arrive in
 * (the form without: a row's 4 loads, then ~900 cycles of L2 latency waited, then its work).  The units'
 * raw words live in a ring of A + 1 slots carried by the row loop; a trip rotates U rows (2U units), U
 * chosen so that 2U is a multiple of A + 1 when one of 1, 2, 4, 8 rows is: each unit's slot is then
 * fixed in the trip's text and the ring needs no moves (else U = 1 and the trip ends by rotating the
 * ring by register moves: up to A slots' words a trip, ptxas 13.0 keeps 9 of A = 2's 16).  The first A units are loaded before k's "loaded" wait (under
 * TMA's latency); the loads past the thread's last unit are predicated off. */
typedef struct rope_ring {
  int ahead, slots;         /* A, A + 1 */
  int nc, ns;               /* the words of a unit: 4 f32 or 2 words of two 16-bit floats, a table */
  LLVMValueRef cell[ROPE_AHEAD_MAX + 1][8]; /* allocas: slot s's cos words, then its sin words */
} rope_ring;

static int unit_words(const table *T) { return T->f32 ? 4 : 2; }

static void ring_make(cg *g, rope_ring *q, const table *C, const table *Sn, int ahead) {
  q->ahead = ahead, q->slots = ahead + 1;
  q->nc = unit_words(C), q->ns = unit_words(Sn);
  for (int s = 0; s < q->slots; s++)
    for (int k = 0; k < q->nc + q->ns; k++)
      q->cell[s][k] = LLVMBuildAlloca(g->PB, (k < q->nc ? C->f32 : Sn->f32) ? g->f32 : g->i32, "rope.ring");
}

/* The thread's view of the tables for the units: its first column col0 (i32), the key row of the slot's row
 * 0 clamped to the tables' last row, p, and that last row (i32: a table has fewer than 2^31 rows, so
 * p + r < 2^32 and the clamp of a row is one unsigned min). */
typedef struct unit_view {
  const table *T[2];
  LLVMValueRef col0, p, last;
} unit_view;

static unit_view view_of(cg *g, const table *C, const table *Sn, LLVMValueRef pos0, LLVMValueRef ptid) {
  unit_view v;
  v.T[0] = C, v.T[1] = Sn;
  v.col0 = cg_mul_c(g, LLVMBuildAnd(g->B, ptid, cg_i32(g, 7), ""), 8);
  v.last = LLVMBuildSub(g->B, C->t->size[0], cg_i32(g, 1), "");
  LLVMValueRef last64 = LLVMBuildZExt(g->B, v.last, g->i64, "");
  v.p = LLVMBuildTrunc(g->B, LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGT, pos0, last64, ""), last64, pos0, ""), g->i32, "");
  return v;
}

/* The loads of unit (r, h) (r: the slot's row, i32; h: the half) into w[] (cos words, then sin words): per
 * table 4 f32 by one 16-byte load, or 2 words of 16-bit floats by one 8-byte load.  With `lrow` (i32, or
 * NULL: always) the loads are predicated on lrow < BN: off, nothing is read and the words are whatever the
 * registers held (never used: units past the thread's last). */
static void unit_load(cg *g, const unit_view *v, LLVMValueRef r, int h, LLVMValueRef lrow, int bn, LLVMValueRef *w) {
  LLVMValueRef t = LLVMBuildAdd(g->B, v->p, r, "");
  t = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntUGT, t, v->last, ""), v->last, t, "");
  LLVMValueRef t64 = LLVMBuildZExt(g->B, t, g->i64, "");
  /* (the column through an asm: else LLVM hoists base + col0 of both tables out of the row loop, two 64-bit
   * values the producer's 56 registers do not hold beside the ring; ptxas then spilled them) */
  LLVMValueRef col = cg_asm(g, g->i32, "mov.b32 $0, $1;", "=r,r", (LLVMValueRef *)&v->col0, 1, true);
  for (int i = 0; i < 2; i++) {
    const table *T = v->T[i];
    LLVMValueRef base = LLVMBuildPtrToInt(g->B, T->t->ptr, g->i64, "");
    LLVMValueRef el = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, t64, T->t->stride[0], ""), LLVMBuildZExt(g->B, col, g->i64, ""), "");
    LLVMValueRef a[2] = {LLVMBuildAdd(g->B, base, mul64(g, el, T->eb), ""), lrow};
    /* (the half's offset in the asm's address: as an add, LLVM hoists base + 16 out of the loop, a second
     * 64-bit base a table live through it) */
    int off = 4 * h * T->eb;
    char txt[160];
    LLVMValueRef x;
    if (T->f32) {
      if (lrow) snprintf(txt, sizeof txt, "{ .reg .pred p; setp.lt.s32 p, $5, %d; @p ld.global.nc.v4.f32 {$0, $1, $2, $3}, [$4+%d]; }", bn, off);
      else snprintf(txt, sizeof txt, "ld.global.nc.v4.f32 {$0, $1, $2, $3}, [$4+%d];", off);
      x = cg_asm(g, v4f32(g), txt, lrow ? "=f,=f,=f,=f,l,r" : "=f,=f,=f,=f,l", a, lrow ? 2 : 1, true);
    } else {
      LLVMTypeRef e[2] = {g->i32, g->i32};
      if (lrow) snprintf(txt, sizeof txt, "{ .reg .pred p; setp.lt.s32 p, $3, %d; @p ld.global.nc.v2.b32 {$0, $1}, [$2+%d]; }", bn, off);
      else snprintf(txt, sizeof txt, "ld.global.nc.v2.b32 {$0, $1}, [$2+%d];", off);
      x = cg_asm(g, LLVMStructTypeInContext(g->C, e, 2, 0), txt, lrow ? "=r,=r,l,r" : "=r,=r,l", a, lrow ? 2 : 1, true);
    }
    for (int k = 0; k < unit_words(T); k++) w[k] = LLVMBuildExtractValue(g->B, x, (unsigned)k, "");
    w += unit_words(T);
  }
}

/* Raw words (unit_load) to the 4 f32 of a unit's columns. */
static void unit_f32(cg *g, const table *T, const LLVMValueRef *w, LLVMValueRef *out) {
  if (T->f32) {
    for (int i = 0; i < 4; i++) out[i] = w[i];
    return;
  }
  for (int i = 0; i < 2; i++) widen2(g, w[i], T->bf16, &out[2 * i], &out[2 * i + 1]);
}

/* Before k's wait: the first A units' loads into the ring's slots 0 .. A-1. */
static void ring_preload(cg *g, rope_ring *q, const table *C, const table *Sn, LLVMValueRef pos0, LLVMValueRef ptid) {
  unit_view v = view_of(g, C, Sn, pos0, ptid);
  LLVMValueRef r0 = LLVMBuildLShr(g->B, ptid, cg_i32(g, 3), "");
  for (int u = 0; u < q->ahead; u++) {
    LLVMValueRef w[8];
    unit_load(g, &v, cg_add_c(g, r0, 16 * (u / 2)), u % 2, NULL, 0, w);
    for (int k = 0; k < q->nc + q->ns; k++) LLVMBuildStore(g->B, w[k], q->cell[u][k]);
  }
}

static void rotate_slot_ahead(cg *g, cg_stream *k0, cg_stream *k1, LLVMValueRef slot, LLVMValueRef pos0, LLVMValueRef ptid,
                              const table *C, const table *Sn, bool bf16, rope_ring *q) {
  tl_rope_match *m = g->plan->rope;
  bool fuse = rope_fuse_exact(C, Sn);
  int rows = m->bn / 16, R = q->slots, A = q->ahead, nw = q->nc + q->ns;
  int U = 1;
  for (int u = 1; u <= rows; u *= 2)
    if (rows % u == 0 && (2 * u) % R == 0) {
      U = u;
      break;
    }
  rope_rows L;
  rows_bases(g, k0, k1, slot, ptid, &L);
  unit_view v = view_of(g, C, Sn, pos0, ptid);
  rows_begin(g, &L, m->bn, "rope.ahead.head", "rope.ahead.body", "rope.ahead.done");
  LLVMValueRef i16x = L.i16x, r0 = L.r0;
  LLVMValueRef ring[ROPE_AHEAD_MAX + 1][8];
  for (int s = 0; s < R; s++)
    for (int k = 0; k < nw; k++) ring[s][k] = LLVMBuildLoad2(g->B, LLVMGetAllocatedType(q->cell[s][k]), q->cell[s][k], "");
  for (int row = 0; row < U; row++) {
    LLVMValueRef r = LLVMBuildAdd(g->B, r0, cg_add_c(g, i16x, 16 * row), "");
    LLVMValueRef a[2], x, y;
    row_halves(g, k0, &L, r, a, &x, &y);
    LLVMValueRef o0[4], o1[4];
    for (int h = 0; h < 2; h++) {
      int u = 2 * row + h, la = u + A; /* (the trip's units: this one, and the one whose loads go out now) */
      LLVMValueRef lrow = cg_add_c(g, i16x, 16 * (la / 2));
      unit_load(g, &v, LLVMBuildAdd(g->B, r0, lrow, ""), la % 2, la < 2 * U ? NULL : lrow, m->bn, ring[la % R]);
      LLVMValueRef cs[4], sn[4];
      unit_f32(g, C, ring[u % R], cs);
      unit_f32(g, Sn, ring[u % R] + q->nc, sn);
      rotate_words(g, x, y, 2 * h, 2, cs, sn, fuse, bf16, o0, o1);
    }
    row_store(g, a, o0, o1);
  }
  /* slot s of the next trip: its unit s (A slots carried; the last one is free at a trip's start) */
  for (int s = 0; s < A; s++)
    for (int k = 0; k < nw; k++) LLVMBuildStore(g->B, ring[(s + 2 * U) % R][k], q->cell[s][k]);
  rows_end(g, &L, 16 * U);
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
  rope_ring ring = {0};
  if (rope_ahead()) ring_make(g, &ring, &C, &Sn, rope_ahead());
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
    if (ring.ahead) ring_preload(g, &ring, &C, &Sn, pos0, ptid); /* (the first units' loads, in registers) */
    else {
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
  if (ring.ahead)
    rotate_slot_ahead(g, k0, k1, slot, LLVMBuildLoad2(g->B, g->i64, posv, ""), ptid, &C, &Sn, bf16, &ring);
  else
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
