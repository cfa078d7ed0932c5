/* dot_plan.c: requires laid-out tile IR (layout_assign) and, when present,
 * the schedule table; decides per function where every dot operand comes
 * from, which loads stream into which ring, and which dots are wgmma
 * (cg_make_plan, lazily by the first emitter that asks); emits nothing but
 * the plan's allocas.  docs/pipelines.md.
 * Where an operand's fragments come from (decided per function by cg_plan):
 *   - STREAM: the operand is a load (or trans of a load) used only by the
 *     dot, inside the dot's `for`, its indices computable from the induction
 *     variable: it never goes through registers.  16-byte cp.async.cg copies
 *     write it into a ring of f->stages shared-memory slots (rows XOR-
 *     swizzled by 16-byte chunk, so the copies and ldmatrix are conflict-free),
 *     src_bytes < 16 zero-fills ragged edges.  Software pipeline: the loop's
 *     preheader issues stages 0..S-2; each iteration waits for its stage
 *     (cp.async.wait_group S-2), one barrier, issues stage i+S-1 into the slot
 *     freed by iteration i-1, then computes.  A run-time check (unit last
 *     stride, 16-byte alignment) picks cp.async, else a scalar copy (uniform
 *     branch); in the loop a second one (the tile wholly inside the tensor,
 *     weighted likely) takes copies without per-chunk bounds (lean_chunks).
 *   - INVARIANT: defined outside the dot's loop (attention's q): staged once
 *     in the preheader; its fragments are loaded there too when they fit in
 *     32 registers.
 *   - REGS: the A operand is an mma accumulator cast to 16 bits with the
 *     result's warp rows (attention's p): the accumulator fragment c0..c3 of
 *     n-blocks 2k, 2k+1 packed in bf16x2 pairs IS the A fragment of k-slice k
 *     (all slices packed before the first mma; pack_regs_a).
 *   - STAGED (anything else): stored to scratch shared memory every time,
 *     rows padded by 16 bytes.
 * Schedule table (lib/schedule.h): with f->sched NULL the heuristics above
 * decide; with a table codegen follows it per dot: streamed[]/stages
 * (swpipe; stages 1 = copy, wait, compute), swizzle_bytes/pad_bytes
 * (smem_swizzle; also for staged and invariant operands), lookahead
 * (ldmatrix_sched), warps (mma_remap, via layout_assign); a pass that did
 * not run gives the plain behaviour: nothing streamed, rows padded by 16
 * bytes, no lookahead, warps over M first.  The ring prologue is issued by
 * cg_loop_preheader (real branches: the slow copy is an element loop, so
 * it adds no register pressure) and the loop exit drains the copies. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "schedule.h"

#include "ring.h"
#include "code_env.h"

/* The schedule entry of dot D when the table is followed, else NULL. */
tl_dot_sched *cg_dot_sched(cg *g, int32_t D) {
  return g->plan && g->plan->follow ? tl_sched_dot(g->f, D, false) : NULL;
}

/* Row padding of operand w of dot D (not swizzled): the table's, rounded up
 * to 16 bytes (ldmatrix rows and cp.async chunks are 16-byte aligned). */
static int dot_pad(cg *g, int32_t D, int w) {
  tl_dot_sched *e = cg_dot_sched(g, D);
  if (!e || !e->swizzled) return 16;
  return (e->pad_bytes[w] + 15) / 16 * 16;
}

/* Operand w of dot D is XOR-swizzled in shared memory: always without a
 * table; with one only when smem_swizzle chose a mode for it. */
static bool dot_swz(cg *g, int32_t D, int w) {
  if (!g->plan || !g->plan->follow) return true;
  tl_dot_sched *e = tl_sched_dot(g->f, D, false);
  return e && e->swizzled && e->swizzle_bytes[w] != 0;
}

/* Row pitch of a staged (from registers) or invariant operand: padded by 16
 * bytes without a table (today's), else as smem_swizzle decided. */
int cg_staged_pitch(cg *g, int32_t D, int w, int32_t cols, int eb, bool *swz) {
  *swz = g->plan && g->plan->follow && dot_swz(g, D, w) && (cols * eb) % 16 == 0;
  return cols * eb + (*swz ? 0 : dot_pad(g, D, w));
}

/* ---- the plan ------------------------------------------------------------------- */

bool cg_dot_promotes(cg *g, const tl_op *o) {
  if (g->o && g->o->fp8_acc_fast) return false;
  int da = tl_val(g->f, o->opnd[0])->type.dtype, db = tl_val(g->f, o->opnd[1])->type.dtype;
  /* (i8 accumulates exactly in s32, tf32 in the f32 accumulator: neither promotes) */
  return tl_dtype_is_fp8((tl_dtype)da) && tl_dtype_is_fp8((tl_dtype)db);
}

/* Streamed operand `which` of dot D: the load op, else -1 (the stream rule
 * of lib/schedule.c; an 8-bit [K][N] B needs the column-paired accumulator,
 * which layout_assign gives only when it streams). */
static int32_t stream_candidate(cg *g, int32_t D, int which, const int32_t *uses, bool *kcontig) {
  const char *why;
  bool paired = cg_layout(g, tl_op_at(g->f, D)->res[0])->mma_npair != 0;
  /* (or a wgmma dot, which transposes it: plan_wgmma) */
  bool kn8 = paired || (tl_dot_wgmma_kn8(g->f, D) && cg_wgmma_fits(g, D));
  /* TILEC_ROPE_PRODUCER=1 where the producer does not rotate (the no-TMA form): the consumers compute
   * the rotated k (staged, mma.sync), not the raw half the stream rule names */
  if (!g->plan->rope && tl_rope_stream_load(g->f, D, which) >= 0) return -1;
  return tl_stream_source(g->f, D, which, uses, kn8, kcontig, &why);
}

/* The operands of dot D both stream into swizzled slots that wgmma can read
 * (docs/pipelines.md "Hopper wgmma") and its table entry chose wgmma: record
 * it; B kept [K][N] gets the atom slot layout, the ring the proxy fence,
 * and slots are kept 1024-byte aligned (swizzle atoms).  Else mma.sync. */

/* Index in loop L's body of the top-level op holding op id (nested ops
 * count as their ancestor), or INT32_MAX. */
int32_t cg_body_pos(tl_func *f, int32_t L, int32_t id) {
  while (id >= 0 && tl_op_at(f, id)->parent != L) id = tl_op_at(f, id)->parent;
  tl_region *body = &tl_op_at(f, L)->regions[0];
  for (int32_t i = 0; id >= 0 && i < body->ops.len; i++)
    if (body->ops.data[i] == id) return i;
  return INT32_MAX;
}

/* The first body position (cg_body_pos) of an op of loop L using value v. */
int32_t cg_body_pos_first_use(tl_func *f, int32_t L, int32_t v) {
  int32_t first = INT32_MAX;
  for (int32_t id = 0; id < f->ops.len; id++) {
    tl_op *u = tl_op_at(f, id);
    if (u->flags & TL_OPF_DEAD) continue;
    for (int j = 0; j < u->nopnd; j++)
      if (u->opnd[j] == v) {
        int32_t pos = cg_body_pos(f, L, id);
        if (pos < first) first = pos;
      }
  }
  return first;
}

static bool row_ok(int bytes) { return bytes == 32 || bytes == 64 || bytes == 128; }

/* Dot D, in a loop after the one x is staged before (or in an `if` after it), may read x as its A from that resident
 * slot: the staging (in the first loop's preheader, whatever its trip count) runs before D on every path, and D reads
 * the slot's layout -- as a wgmma A (wgmma) where the dot it was staged for reads x as a wgmma A too (swizzle atoms,
 * fenced for the async proxy), else on mma.sync where that dot is mma.sync with D's pitch and swizzle (ldmatrix reads
 * the same rows).  The Triton tutorial's causal split, q read by an unmasked loop and a diagonal loop: a wgmma D's own
 * copy was never staged (a wgmma A is not restaged each step), its scratch past the kernel's shared memory (a fault;
 * an attention-variant hunt); an mma.sync D restaged q every step and gave up its ring for it (a multi-loop hunt). */
static bool resident_reaches(cg *g, int32_t x, int32_t D, bool wgmma) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int32_t D1 = p->inv_dot[x];
  if (p->vkind[x] != SRC_INVARIANT || tl_op_at(f, D)->opnd[0] != x || D1 < 0 || D1 == D ||
      tl_op_at(f, D1)->opnd[0] != x || cg_dot_is_wgmma(p, D1) != wgmma ||
      !tl_op_runs_before(f, p->inv_loop[x], tl_op_at(f, D)->parent))
    return false;
  if (wgmma) return true;
  const tl_type *xt = &tl_val(f, x)->type;
  int eb = tl_dtype_bytes((tl_dtype)xt->dtype);
  bool s1, s2;
  int p1 = cg_staged_pitch(g, D1, 0, xt->shape[1], eb, &s1), p2 = cg_staged_pitch(g, D, 0, xt->shape[1], eb, &s2);
  return p1 == p2 && s1 == s2;
}

bool cg_resident_slot(cg *g, int32_t x, int32_t D) {
  cg_plan *p = g->plan;
  if (p->vkind[x] != SRC_INVARIANT) return false;
  if (p->inv_loop[x] == g->f->ops.data[D].parent) return true;
  return resident_reaches(g, x, D, cg_dot_is_wgmma(p, D));
}

/* TILEC_RING_OVERLAP (default on since the thirty-seventh session, H100: the causal split 1.28x / 1.31x at D 64 / 128,
 * bench/RESULTS.md; =0 off): the rings of main loops that run one
 * after another -- every two of them ordered (tl_op_runs_before: siblings, or one inside a later sibling) -- share
 * one region of shared memory, the largest ring's, instead of lying side by side; each later loop's prologue waits at
 * a CTA barrier until every warp is done with the earlier loop's last slots (emit_ring.c cg_loop_preheader).  The
 * causal split into two loops at D128 kept 2 stages of 64 KiB twice (163 KiB: one program an SM where the one-loop
 * kernel runs two); three loops with a sink block gave up streaming altogether (a multi-loop hunt).  Not with a
 * producer warpgroup (its own loop over the ring) or clusters. */
static bool rings_sequential(cg *g) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  if (p->nring < 2 || tl_code_env_off("TILEC_RING_OVERLAP") || f->ws != TL_WS_OFF || f->cluster > TL_CLUSTER_1X1 ||
      f->attn_fa3 || f->attn_persist || f->persist)
    return false;
  for (int a = 0; a < p->nring; a++)
    for (int b = a + 1; b < p->nring; b++) {
      int32_t la = p->rings[a].for_op, lb = p->rings[b].for_op;
      if (!tl_op_runs_before(f, la, lb) && !tl_op_runs_before(f, lb, la)) return false;
      if (tl_op_inside(f, la, lb) || tl_op_inside(f, lb, la)) return false; /* (nested: both live at once) */
    }
  return true;
}

/* Plans dot D on wgmma where mma_remap chose it and the plan can feed it; NULL when it did (or mma_remap did not
 * choose it), else why the dot stays on mma.sync (for --explain: mma_remap's line says what it chose). */
static const char *plan_wgmma(cg *g, int32_t D) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  tl_op *o = tl_op_at(f, D);
  tl_dot_sched *e = cg_dot_sched(g, D);
  if (!e || !e->remapped || e->instr != TL_SCHED_MMA_WGMMA) return NULL;
  if (p->nwg == (tl_code_env_on("TILEC_WGMMA_STAGED_A") ? CG_MAX_WG : 4)) return "the kernel's wgmma dots are at the limit";
  if (!cg_wgmma_fits(g, D)) return "its shape or warps do not fit a wgmma tiling";
  int32_t a = o->opnd[0], b = o->opnd[1];
  /* B computed in the loop by an operand prologue, K-major (trans), 16-bit, rows of one
   * swizzle atom: staged each step into its own slot (mma_remap chose wgmma for it) */
  tl_value *bv = tl_val(f, b);
  int bkb = bv->type.shape[0] * tl_dtype_bytes((tl_dtype)bv->type.dtype);
  bool staged_b = p->vkind[b] == SRC_STAGED && e->prologue[1] > 0 && bv->def >= 0 &&
                  tl_op_at(f, bv->def)->opc == TL_OP_trans && tl_dtype_bytes((tl_dtype)bv->type.dtype) == 2 && row_ok(bkb);
  /* TILEC_WGMMA_STAGED_A=1 (mma_remap's a_from 3): A = trans(x), x 16-bit computed in the loop, staged
   * each step MN-major into its own slot; B resident (loaded before the loop), read N-major */
  tl_value *av = tl_val(f, a);
  bool staged_a = tl_code_env_on("TILEC_WGMMA_STAGED_A") && p->vkind[a] == SRC_STAGED && av->def >= 0 &&
                  tl_op_at(f, av->def)->opc == TL_OP_trans && tl_dtype_bytes((tl_dtype)av->type.dtype) == 2 &&
                  av->type.shape[0] == 64 && f->warps == 4 && p->vkind[b] == SRC_INVARIANT &&
                  p->inv_loop[b] == o->parent && p->vstream[b] % 1024 == 0 && dot_swz(g, D, 1) &&
                  bv->type.shape[1] * tl_dtype_bytes((tl_dtype)bv->type.dtype) == 128 &&
                  (bv->def < 0 || tl_op_at(f, bv->def)->opc != TL_OP_trans);
  if (p->vkind[b] != SRC_STREAM && !staged_b && !staged_a) return "b neither streams through the ring nor is staged";
  cg_stream *sa = p->vkind[a] == SRC_STREAM ? &p->streams[p->vstream[a]] : NULL;
  cg_stream *sb = staged_b || staged_a ? NULL : &p->streams[p->vstream[b]];
  tl_type *at = &tl_val(f, a)->type;
  int aeb = tl_dtype_bytes((tl_dtype)at->dtype), ra = at->shape[1] * aeb;
  /* a streamed operand whose rows exceed 128 bytes, read by another dot of the loop that mma_remap keeps on
   * mma.sync: one slot cannot serve both (wgmma's [K/64][M][64] atoms against ldmatrix's plain rows; the check after
   * the plan refused the kernel), so this dot stays on mma.sync too (a dual GEMM sharing A, one B computed) */
  /* (the slot's rows, not the operand's: a trans(dO) read K-major shares dO's slot of 256-byte rows with the
   * dot that reads dO itself; and a dot planned before this one that stayed on mma.sync counts, whatever
   * mma_remap said -- a dropout backward's dV dot, its P not in the accumulator layout: dK / dV at D128 was refused
   * by the check after the plan) */
  for (int w = 0; w < 2; w++) {
    int32_t x = o->opnd[w];
    if (p->vkind[x] != SRC_STREAM) continue;
    const cg_stream *sx = &p->streams[p->vstream[x]];
    if (sx->cols * sx->eb <= 128) continue;
    for (int32_t D2 = 0; D2 < f->ops.len; D2++) {
      const tl_op *o2 = tl_op_at(f, D2);
      if (D2 == D || (o2->flags & TL_OPF_DEAD) || o2->opc != TL_OP_dot || o2->parent != o->parent) continue;
      bool same = false;
      for (int w2 = 0; w2 < 2; w2++)
        same = same || (p->vkind[o2->opnd[w2]] == SRC_STREAM && p->vstream[o2->opnd[w2]] == p->vstream[x]);
      if (!same) continue;
      tl_dot_sched *e2 = cg_dot_sched(g, D2);
      if (!e2 || !e2->remapped || e2->instr != TL_SCHED_MMA_WGMMA || (D2 < D && !cg_dot_is_wgmma(p, D2)))
        return "an operand's slot, rows over 128 bytes, is read by another dot of the loop on mma.sync";
    }
  }
  /* A: streamed (rows of one swizzle atom), resident (staged once, swizzled:
   * one atom or [K/64][M][64] atoms, 16-bit), or registers (16-bit, the
   * accumulator fragments of an mma-layout tile: attention's p) */
  if (sa) { /* (rows over 128 bytes, 16-bit: [K/64][M][64] atoms of 128-byte rows, like a long K-major B) */
    if (!sa->swz || !(row_ok(ra) || (aeb == 2 && ra % 128 == 0)) || sa->stage_bytes % 1024)
      return "a's ring slot is not a wgmma swizzle atom (rows of 32, 64 or 128 bytes, 1024-byte stages)";
  } else if (p->vkind[a] == SRC_INVARIANT) {
    if (p->inv_loop[a] != o->parent && !resident_reaches(g, a, D, true))
      return "a is staged once before another loop whose staging does not reach this one (or is not a wgmma A there)";
    if (!dot_swz(g, D, 0) || ra % 16 || !(row_ok(ra) || (aeb == 2 && ra % 128 == 0)) || p->vstream[a] % 1024)
      return "a's resident slot is not a wgmma swizzle atom";
  } else if (!staged_a && (p->vkind[a] != SRC_STAGED || aeb != 2 || !cg_a_from_regs(g, a, cg_layout(g, o->res[0]), aeb))) {
    return "a is computed in the loop and is not a 16-bit cast of an accumulator fragment in the mma layout, the "
           "one register A wgmma takes; a plain load would stream";
  }
  bool bk = tl_val(f, b)->def >= 0 && tl_op_at(f, tl_val(f, b)->def)->opc == TL_OP_trans;
  if (!staged_b && !staged_a) { /* (a staged B: its own slot, laid out for wgmma when staged) */
    int rb = sb->cols * sb->eb;
    if (!sb->swz) return "b's ring slot is not swizzled";
    if (bk ? !row_ok(rb) && !(sb->eb == 2 && rb % 128 == 0) : rb % 128 != 0)
      return "b's ring slot is not a wgmma swizzle atom (rows of 32, 64 or 128 bytes)";
    /* wgmma takes 8-bit and tf32 operands only K-major: an 8-bit [K][N] B is
     * kept [K][N] in its slot (atoms of 128 columns) and transposed each k-step
     * into a K-major buffer (rows of K bytes: one swizzle atom) */
    bool tr = aeb == 1 && !bk && sb->eb == 1 && row_ok(ra);
    if (aeb != 2 && !bk && !tr) return "an 8-bit or 32-bit [K][N] b (wgmma takes them K-major only)";
    if (tr) {
      sb->kn8 = false; /* no run-time [N][K] slot: a K-major view takes the element copy */
      sb->stage_bytes = sb->rows * sb->pitch;
    }
    if (sb->stage_bytes % 1024) return "b's stage is not a multiple of 1024 bytes";
    /* a slot an earlier wgmma dot reads too (a shared load): the two slot
     * layouts agree wherever both are allowed ([C/64][R][64] atoms are the
     * plain 128-byte-swizzled rows when C*eb = 128), so either reader's wins */
    sb->wg_atoms = sb->wg_atoms || !bk || rb > 128;
    sb->wg_kmajor = bk;
    sb->wg_tr = tr;
  }
  if (sa) sa->wg = true, sa->wg_atoms = sa->wg_atoms || ra > 128;
  if (sb) sb->wg = true;
  p->wg_staged_b[p->nwg] = staged_b;
  p->wg_staged_a[p->nwg] = staged_a;
  p->wg_res_b[p->nwg] = staged_a;
  p->wg_aoff[p->nwg] = -1;
  p->wg_boff[p->nwg] = -1;
  p->wg_chain[p->nwg] = false;
  for (int i = 0; i < p->nring; i++)
    if (p->rings[i].for_op == o->parent) p->rings[i].wgmma = true;
  /* a group may stay in flight into the next iteration when nothing but
   * the next wgmma touches the accumulator in the loop: acc is a carried
   * value used only by the dot, the result only yielded (same slot) */
  tl_region *body = &tl_op_at(f, o->parent)->regions[0];
  int32_t *uses = tl_count_uses(f);
  tl_op *y = body->ops.len ? tl_op_at(f, body->ops.data[body->ops.len - 1]) : NULL;
  bool inflight = false;
  for (int i = 1; y && y->opc == TL_OP_yield && i < body->args.len; i++)
    if (body->args.data[i] == o->opnd[2] && i - 1 < y->nopnd && y->opnd[i - 1] == o->res[0])
      inflight = uses[o->opnd[2]] == 1 && uses[o->res[0]] == 1;
  const char *env = tl_code_env("TILEC_WGMMA_INFLIGHT"); /* measuring only: 0 = wait for every group */
  if (env && *env == '0') inflight = false;
  /* a promoting dot adds its temporary right after the wait: no group of it
   * outlives the dot (one temporary; see cg_emit_wgmma) */
  if (cg_dot_promotes(g, o)) inflight = false;
  /* A from registers computed in the loop by an operand prologue (layout_assign's A-fragment rule): wgmma reads those
   * registers until its group completes, and ptxas does not know it -- it gives the next k-step's A (its ld.shared
   * and packs, before the next wait) the same registers (H100: cutlass_cast_f32 wrong, SASS: LDS.64 R152 at the loop's
   * top under an HGMMA reading R152).  So the group is waited for in its own k-step.  (Attention's P is safe: the next
   * score dot's wait retires the group before P is computed again.) */
  if (!staged_a && p->vkind[a] == SRC_STAGED && e->prologue[0] > 0) inflight = false;
  /* deferred: the result is only yielded, and its carried value is first
   * used after an earlier wgmma dot of the loop that waits for all groups
   * (attention: acc * alpha comes after the score dot), so that wait also
   * covers this group; the ring then needs its lag (plan_lag) */
  int32_t carried = -1;
  for (int i = 1; y && y->opc == TL_OP_yield && i < body->args.len; i++)
    if (i - 1 < y->nopnd && y->opnd[i - 1] == o->res[0] && uses[o->res[0]] == 1) carried = body->args.data[i];
  bool defer = false;
  if (!inflight && carried >= 0 && !cg_dot_promotes(g, o) && !(env && *env == '0')) {
    int first = cg_body_pos_first_use(f, o->parent, carried);
    for (int k = 0; k < p->nwg; k++)
      if (tl_op_at(f, p->wg_dots[k])->parent == o->parent && !p->wg_inflight[k] && !p->wg_defer[k] &&
          cg_body_pos(f, o->parent, p->wg_dots[k]) < first)
        defer = true;
  }
  p->wg_inflight[p->nwg] = inflight;
  p->wg_defer[p->nwg] = defer;
  p->wg_carried[p->nwg] = inflight ? o->opnd[2] : defer ? carried : -1;
  p->wg_dots[p->nwg++] = D;
  LLVMSetAlignment(g->smem, 1024);
  return NULL;
}

/* A 2-stage ring whose deferred dots may stay in flight anyway (R->late): the loop stages a
 * wgmma B each step (its barrier after the ring's wait) in a dot at the top of the body before
 * every deferred dot, and keeps no other group in flight.  The slot refilled in iteration i is
 * i-1's, last read by i-1's deferred dot (generic reads of it all precede the ring's barrier of
 * iteration i); every warpgroup waits for that group before the staged B's barrier and thread 0
 * issues the refill after it (emit_dot.c stage_wgmma_b), so the deferred dot of i-1 runs under
 * iteration i's ring wait, slot reads and staging (attn_rope: the rotation of k under O += P V). */
static bool late_refill_fits(cg_plan *p, tl_func *f, cg_ring *R) {
  if (R->stages != 2 || tl_code_env_off("TILEC_LATE_REFILL")) return false;
  int32_t first_defer = INT32_MAX, first_staged = INT32_MAX;
  for (int i = 0; i < p->nwg; i++) {
    tl_op *o = tl_op_at(f, p->wg_dots[i]);
    if (!tl_op_inside(f, p->wg_dots[i], R->for_op)) continue;
    if (o->parent != R->for_op || p->wg_inflight[i]) return false;
    int32_t pos = cg_body_pos(f, R->for_op, p->wg_dots[i]);
    if (p->wg_defer[i] && pos < first_defer) first_defer = pos;
    if (p->wg_staged_b[i] && pos < first_staged) first_staged = pos;
  }
  return first_staged < first_defer && first_defer < INT32_MAX;
}

/* Ring lag: 1 when every wgmma dot reading the ring's loop keeps a group in
 * flight, or one defers its wait, and the ring has at least 3 stages (the
 * issue distance S-2 >= 1); without it (or a late refill) no dot defers. */
static void plan_lag(cg_plan *p, tl_func *f) {
  for (int r = 0; r < p->nring; r++) {
    cg_ring *R = &p->rings[r];
    bool any = false, all = true, defer = false;
    for (int i = 0; i < p->nwg; i++)
      if (tl_op_at(f, p->wg_dots[i])->parent == R->for_op) {
        any = true;
        all = all && p->wg_inflight[i];
        defer = defer || p->wg_defer[i];
      }
    R->lag = ((any && all) || defer) && R->stages >= 3 ? 1 : 0;
    /* TILEC_ATTN_KV_SPLIT=1|2: fa3 (a producer warpgroup, the value dot a step late) on a 2-stage
     * ring (D256: 3 stages of 64 KiB and q do not fit); its producer refills a slot only after the
     * consumers released it on the empty mbarriers, so the late dot needs no issue distance */
    /* (not where the late refill keeps a deferred dot in flight instead: a staged wgmma B, which the
     * producer form refuses, so the lag would only be undone again) */
    R->late = !R->lag && defer && late_refill_fits(p, f, R);
    R->kv_lag2 = !R->lag && !R->late && defer && R->stages == 2 && f->attn_fa3 && f->ws == TL_WS_PINGPONG &&
                 cg_kv_split_level() != 0; /* (unset: on, this ring having 2 stages) */
    if (R->kv_lag2) R->lag = 1;
    R->late_wr = NULL;
    R->staged2 = false;
    R->top_bar = NULL;
    for (int i = 0; i < p->nwg && !R->lag && !R->late; i++)
      if (tl_op_at(f, p->wg_dots[i])->parent == R->for_op) p->wg_defer[i] = false, p->wg_carried[i] = -1;
  }
}

/* A wgmma dot whose result is used once, as the accumulator of a later wgmma dot of the same
 * loop that waits for all groups (neither in flight nor deferred): it need not wait itself
 * (wgmma orders dots on the same accumulator registers; attn_rope's q1 k1^T + q2 k2^T). */
static void plan_chain(cg *g) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int32_t *uses = tl_count_uses(f);
  for (int k = 0; k < p->nwg; k++)
    if (p->wg_sink[k] && !p->rope) return; /* (the overlap's late dot: its waits are its own; fa3 with
                                             * TILEC_ROPE_PRODUCER=1: the chain ends at its waiting dot) */
  for (int k = 0; k < p->nwg; k++) {
    tl_op *o = tl_op_at(f, p->wg_dots[k]);
    if (p->wg_inflight[k] || p->wg_defer[k] || uses[o->res[0]] != 1) continue;
    for (int j = 0; j < p->nwg; j++) {
      tl_op *u = tl_op_at(f, p->wg_dots[j]);
      if (j != k && u->parent == o->parent && u->opnd[2] == o->res[0] && !p->wg_inflight[j] && !p->wg_defer[j] &&
          !cg_dot_promotes(g, u) && !cg_dot_promotes(g, o))
        p->wg_chain[k] = true;
    }
  }
}

/* A kernel with a staged wgmma B (attn_rope's rotated k, computed by every thread each step on
 * the critical path between the ring's wait and the score dot) runs best with a second program
 * on the SM to fill those gaps (ninth session, H200: D64 1.34x with two programs of 2 stages
 * against one of 4): when two programs' shared memory fits, `.minnctapersm 2` (codegen.c's
 * entry annotations; ptxas then keeps 128 registers a thread for 256: attn_rope D64 126, no spills). */
/* Appends one clause to the plan's --explain note (emit_tma.c's tma: line), "; " between clauses. */
static void add_dot_note(cg *g, const char *fmt, ...) TL_PRINTF(2, 3);
static void add_dot_note(cg *g, const char *fmt, ...) {
  cg_plan *p = g->plan;
  tl_sbuf note = {0};
  if (p->dot_note) tl_sbuf_printf(&note, "%s; ", p->dot_note);
  va_list ap;
  va_start(ap, fmt);
  tl_sbuf_vprintf(&note, fmt, ap);
  va_end(ap);
  if (note.data) p->dot_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
}

static void plan_two_programs(cg *g, int persist) {
  cg_plan *p = g->plan;
  bool staged = false;
  for (int k = 0; k < p->nwg; k++) staged = staged || p->wg_staged_b[k];
  int64_t budget = tl_arch_smem_budget(g->o ? g->o->arch : NULL);
  /* or route_pipeline cut wgmma attention's ring to two programs' share (TILEC_ATTN_TWO) */
  /* (with the scratch past the persistent part: a value dot codegen keeps on mma.sync stages its P there, and two
   * programs that cannot both be resident would only cap the registers: an attention-variant hunt) */
  int64_t scratch = p->two_programs_scratch;
  p->two_programs = (staged || g->f->two_programs) && g->f->warps == 8 && 2 * ((int64_t)persist + scratch + 1024) <= budget;
  if (g->f->two_programs && !p->two_programs) /* (--explain: route_pipeline's line promised two) */
    add_dot_note(g, "one program an SM, not route_pipeline's two: %lld bytes of shared memory a program (%d persistent + "
                 "%lld scratch)", (long long)(persist + scratch), persist, (long long)scratch);
}

/* Index of dot D in p->wg_dots, or -1. */
int cg_wg_index(cg_plan *p, int32_t D) {
  for (int i = 0; i < p->nwg; i++)
    if (p->wg_dots[i] == D) return i;
  return -1;
}

bool cg_dot_is_wgmma(cg_plan *p, int32_t D) {
  for (int i = 0; i < p->nwg; i++)
    if (p->wg_dots[i] == D) return true;
  return false;
}


/* Operand prologue of operand `which` of dot D (docs/pipelines.md "Operand
 * prologues"): each load the operand is computed from streams through the
 * ring of D's loop (its box, unswizzled rows: the slot is read back per
 * register in the load's layout, emit_prologue.c); the operand itself stays
 * STAGED (the elementwise code's result is staged for the mma as before). */
static void plan_prologue(cg *g, int32_t D, int which, int stages) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int32_t L = tl_op_at(f, D)->parent, loads[16];
  const char *why;
  int n = tl_prologue_loads(f, D, which, loads, 16, &why);
  /* swpipe recorded the prologue on the IR before layout_assign: the IR codegen sees must
   * still pass the rule (a silent fallback here once left attn_rope without its prologue) */
  if (n <= 0) TL_INTERNAL(g->ctx, "codegen: the scheduled operand prologue of a dot at %d:%d no longer holds: %s",
                          tl_op_at(f, D)->loc.line, tl_op_at(f, D)->loc.col, why);
  int ri = 0;
  while (ri < p->nring && p->rings[ri].for_op != L) ri++;
  if (ri == p->nring && p->nring == 4) return;
  int fresh = 0;
  for (int i = 0; i < n; i++) fresh += p->vkind[tl_op_at(f, loads[i])->res[0]] != SRC_STREAM;
  if (p->nstream + fresh > 16) return;
  if (ri == p->nring) p->rings[p->nring++] = (cg_ring){.for_op = L, .stages = stages};
  for (int i = 0; i < n; i++) {
    int32_t res = tl_op_at(f, loads[i])->res[0];
    if (p->vkind[res] == SRC_STREAM) continue; /* another operand's prologue reads it too */
    int32_t rows, base;
    tl_prologue_view(f, loads[i], L, f->warps * 32, &rows, &base, &why);
    tl_type *lt = &tl_val(f, res)->type;
    cg_stream *s = &p->streams[p->nstream];
    memset(s, 0, sizeof *s);
    s->load_op = loads[i];
    s->for_op = L;
    s->rows = rows;
    s->cols = lt->shape[1];
    s->eb = tl_dtype_bytes((tl_dtype)lt->dtype);
    s->swz = false;
    s->pitch = s->cols * s->eb;
    s->stage_bytes = (s->rows * s->pitch + 15) / 16 * 16;
    s->readers = 1;
    s->prologue = true;
    s->row_base = base;
    /* A computed in its fragment layout (layout_assign's A-fragment rule): lane l reads rows l / 4 of 8 at
     * the same columns, 8-way bank conflicts in plain 128-byte rows; in wgmma's 128-byte-swizzled atoms
     * ([C*eb/128][rows][128 B], chunk c of row r at c ^ (r % 8), what TMA's 128-byte mode writes) the 8
     * rows fall in 8 different chunks */
    const tl_layout *ll = cg_layout(g, res);
    if (which == 0 && base < 0 && ll->kind == TL_LAYOUT_MMA && (s->cols * s->eb) % 128 == 0 && s->rows % 8 == 0) {
      s->swz = s->wg_atoms = true;
      s->stage_bytes = s->rows * s->pitch;
    }
    p->vkind[res] = SRC_STREAM;
    p->vstream[res] = p->nstream++;
  }
}

/* The most shared memory one scratch user takes past the persistent part (cg_scratch_use): a dot's
 * staged operands (SRC_STAGED, both), a layout change that is not a register renaming.  An upper
 * bound where a user would go over a drained ring instead (free_ring_slots, emit_ring.c). */
static int plan_scratch_bytes(cg *g) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int64_t most = 0;
  if (p->rope) return 0; /* (fa3's rope producer: its scratch borrows q's slots, emit_rope.c; k's rotation is its own) */
  for (int32_t D = 0; D < f->ops.len; D++) {
    tl_op *o = tl_op_at(f, D);
    if (o->flags & TL_OPF_DEAD) continue;
    int64_t b = 0;
    if (o->opc == TL_OP_dot && !cg_dot_is_wgmma(p, D)) { /* (wgmma: staged slots in the persistent part) */
      const tl_layout *lc = cg_layout(g, o->res[0]);
      for (int w = 0; w < 2; w++) {
        int32_t x = o->opnd[w];
        const tl_type *xt = &tl_val(f, x)->type;
        int eb = tl_dtype_bytes((tl_dtype)xt->dtype);
        /* (a tile staged once before another loop that this dot's slot does not read: its own copy, emit_dot.c) */
        bool staged = p->vkind[x] == SRC_STAGED || (p->vkind[x] == SRC_INVARIANT && !cg_resident_slot(g, x, D));
        if (!staged || xt->rank != 2 || lc->kind != TL_LAYOUT_MMA) continue;
        if (w == 0 ? cg_a_from_regs(g, x, lc, eb) : cg_b_from_regs(g, x, lc, eb)) continue; /* (emit_dot.c's choice) */
        b += (int64_t)xt->shape[0] * xt->shape[1] * eb;
      }
    } else if (o->opc == TL_OP_convert_layout && tl_val(f, o->opnd[0])->type.kind == TL_KIND_TILE &&
               !cg_val_streamed(g, o->opnd[0]) && !cg_transfer_free(g, o->opnd[0], o->res[0], CG_MAP_ID, 0)) {
      const tl_type *st = &tl_val(f, o->opnd[0])->type;
      b = tl_type_numel(st) * tl_dtype_bytes((tl_dtype)st->dtype);
    }
    if (b > most) most = b;
  }
  return most > INT32_MAX ? INT32_MAX : (int)most;
}

void cg_make_plan(cg *g) {
  if (g->plan_f == g->f) return;
  tl_func *f = g->f;
  g->plan_f = f;
  g->smem_persist = 0;
  cg_plan *p = tl_alloc(&g->ctx->arena, sizeof *p);
  memset(p, 0, sizeof *p);
  g->plan = p;
  p->vkind = tl_alloc(&g->ctx->arena, (size_t)f->values.len + 1);
  memset(p->vkind, 0, (size_t)f->values.len + 1);
  p->vstream = tl_alloc(&g->ctx->arena, sizeof(int32_t) * ((size_t)f->values.len + 1));
  p->inv_done = tl_alloc(&g->ctx->arena, (size_t)f->values.len + 1);
  p->inv_loop = tl_alloc(&g->ctx->arena, sizeof(int32_t) * ((size_t)f->values.len + 1));
  p->inv_dot = tl_alloc(&g->ctx->arena, sizeof(int32_t) * ((size_t)f->values.len + 1));
  memset(p->inv_done, 0, (size_t)f->values.len + 1);
  p->follow = f->sched != NULL;
  if (f->layouts) { /* a row kernel's reduces: their own slots at the bottom (emit_reduce.c) */
    g->smem_persist = cg_plan_reduce_slots(g, &p->red_off);
    if (g->smem_persist) cg_use_smem(g, g->smem_persist);
  }
  g->scratch_base = g->smem_persist;
  g->scratch_lo = g->scratch_hi = 0;
  g->scratch_strict = false;
  if (!f->layouts || (!p->follow && f->pipeline == TL_PIPE_SIMPLE)) return;
  cg_rope_plan(g); /* (TILEC_ROPE_PRODUCER=1: k rotated by fa3's producer, emit_rope.c) */
  int32_t *uses = tl_count_uses(f);
  /* no table: today's heuristic (route_pipeline's stages, 2..4, cut to fit);
   * a table: swpipe's stages per dot, which already fit */
  int stages = f->stages >= 2 ? f->stages : 3;
  if (stages > 4) stages = 4;
  int table_stages = 0;
  int persist = g->smem_persist; /* (a row kernel's reduce slots, else 0) */
  for (int32_t D = 0; D < f->ops.len; D++) {
    tl_op *o = tl_op_at(f, D);
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_dot) continue;
    int32_t L = o->parent;
    if (L < 0 || tl_op_at(f, L)->opc != TL_OP_for) continue;
    for (int which = 0; which < 2; which++) {
      int32_t x = o->opnd[which];
      tl_type *xt = &tl_val(f, x)->type;
      if (xt->kind != TL_KIND_TILE || xt->rank != 2) continue;
      bool kc = true;
      tl_dot_sched *e = p->follow ? tl_sched_dot(f, D, false) : NULL;
      bool may_stream = !p->follow || (e && e->pipelined && e->streamed[which] && e->stages >= 1);
      int32_t ld = p->nstream < 16 && may_stream ? stream_candidate(g, D, which, uses, &kc) : -1;
      int32_t ldv = ld >= 0 ? tl_op_at(f, ld)->res[0] : -1;
      if (ld >= 0 && p->vkind[ldv] == SRC_STREAM) {
        /* read by an earlier dot too: the same slot (tl_stream_source) */
        p->vkind[x] = SRC_STREAM;
        p->vstream[x] = p->vstream[ldv];
        p->streams[p->vstream[ldv]].readers++;
      } else if (ld >= 0) {
        if (e && e->stages > table_stages) table_stages = e->stages;
        int ri = 0;
        while (ri < p->nring && p->rings[ri].for_op != L) ri++;
        if (ri == p->nring) {
          if (p->nring == 4) continue;
          p->rings[p->nring++] = (cg_ring){.for_op = L, .stages = stages};
        }
        tl_type *lt = &tl_val(f, tl_op_at(f, ld)->res[0])->type;
        cg_stream *s = &p->streams[p->nstream];
        s->load_op = ld;
        s->for_op = L;
        s->rows = lt->shape[0];
        s->cols = lt->shape[1];
        s->eb = tl_dtype_bytes((tl_dtype)lt->dtype);
        s->swz = dot_swz(g, D, which);
        s->pitch = s->cols * s->eb + (s->swz ? 0 : dot_pad(g, D, which));
        s->stage_bytes = s->rows * s->pitch;
        s->kn8 = which == 1 && !kc && s->eb == 1;
        if (s->kn8) {
          s->nk_pitch = s->rows * s->eb + (s->swz ? 0 : dot_pad(g, D, which));
          if (s->cols * s->nk_pitch > s->stage_bytes) s->stage_bytes = s->cols * s->nk_pitch;
        }
        s->readers = 1;
        p->vkind[x] = SRC_STREAM;
        p->vstream[x] = p->nstream;
        p->vkind[tl_op_at(f, ld)->res[0]] = SRC_STREAM;
        p->vstream[tl_op_at(f, ld)->res[0]] = p->nstream;
        (void)kc;
        p->nstream++;
      } else if (e && e->prologue[which] > 0 && p->vkind[x] == SRC_STAGED && !tl_defined_outside(f, x, L)) {
        if (e->stages > table_stages) table_stages = e->stages;
        plan_prologue(g, D, which, stages);
      } else if (tl_defined_outside(f, x, L) && p->vkind[x] == SRC_STAGED) {
        const tl_layout *lx = cg_layout(g, x);
        int eb = tl_dtype_bytes((tl_dtype)xt->dtype);
        bool kn = which == 1 && eb == 2 && lx->nreg > 0 && lx->reg[0][1] != 0;
        int32_t rows = which == 0 ? xt->shape[0] : kn ? xt->shape[0] : xt->shape[1];
        int32_t cols = which == 0 ? xt->shape[1] : kn ? xt->shape[1] : xt->shape[0];
        bool swz;
        int bytes = rows * cg_staged_pitch(g, D, which, cols, eb, &swz);
        /* a wgmma A reads it by descriptor: 1024-byte aligned (swizzle atoms) */
        if (which == 0 && e && e->remapped && e->instr == TL_SCHED_MMA_WGMMA) persist = (persist + 1023) / 1024 * 1024;
        p->vkind[x] = SRC_INVARIANT;
        p->vstream[x] = persist;
        p->inv_loop[x] = L;
        p->inv_dot[x] = D;
        persist += (bytes + 127) / 128 * 128;
      }
    }
    const char *not_wgmma = plan_wgmma(g, D);
    if (not_wgmma) /* (--explain: mma_remap's line said wgmma) */
      add_dot_note(g, "dot at %d:%d: mma.sync, not mma_remap's wgmma (%s)", o->loc.line, o->loc.col, not_wgmma);
    else if (p->vkind[o->opnd[0]] == SRC_INVARIANT && p->inv_loop[o->opnd[0]] != L && cg_resident_slot(g, o->opnd[0], D)) {
      tl_op *l1 = tl_op_at(f, p->inv_loop[o->opnd[0]]);
      add_dot_note(g, "dot at %d:%d: a from the resident slot staged once before the loop at %d:%d", o->loc.line,
                   o->loc.col, l1->loc.line, l1->loc.col);
    }
    /* an 8-bit [K][N] B streamed only because the dot was to be wgmma */
    int32_t b = o->opnd[1];
    if (p->vkind[b] == SRC_STREAM && p->streams[p->vstream[b]].kn8 && !cg_layout(g, o->res[0])->mma_npair)
      cg_unsupported(g, "an 8-bit [K][N] B meant for wgmma that the plan cannot feed it (K rows of 32, 64 or 128 "
                        "bytes, N a multiple of 128, swizzled slots)");
  }
  /* rings after the invariant operands; fewer stages when they do not fit */
  p->rings_overlap = rings_sequential(g);
  int ring_bytes = 0;
  for (int r = 0; r < p->nring; r++) { /* (overlapping: the largest ring's stage; else all of them) */
    int b = 0;
    for (int i = 0; i < p->nstream; i++)
      if (p->streams[i].for_op == p->rings[r].for_op) b += p->streams[i].stage_bytes;
    ring_bytes = p->rings_overlap ? (b > ring_bytes ? b : ring_bytes) : ring_bytes + b;
  }
  if (p->follow) stages = table_stages < 1 ? 1 : table_stages;
  else while (stages > 2 && persist + stages * ring_bytes > 160 * 1024) stages--;
  /* the scratch past the persistent part (the dots' per-step staging, layout changes through shared
   * memory), and atomics by a TMA reduce-add (emit_atomic_tma.c) with their staging buffers, beside
   * the rings: fewer stages when they do not fit (a dot before a 3-stage ring of 64 KiB whose 128 x 128
   * f32 result changes layout into the loop's: 64 KiB more, tests/cutlass_variants/g_k0401.tile) */
  int atma = cg_atomic_tma_reserve(g), scratch = plan_scratch_bytes(g);
  int64_t budget = tl_arch_smem_budget(g->o ? g->o->arch : NULL);
  p->two_programs_scratch = scratch;
  if (ring_bytes && (atma || scratch)) {
    int was = stages;
    while (stages > 2 && persist + (atma ? 1024 + atma : 0) + stages * ring_bytes + scratch > budget) stages--;
    if (stages < was) /* (--explain: swpipe's line gave the stages before the scratch was known) */
      add_dot_note(g, "ring cut from %d to %d stages: %d bytes of scratch past it%s", was, stages, scratch,
                   atma ? " and the TMA reduce-add's staging" : "");
  }
  /* (with a table: swpipe sized the rings against the arch's budget) */
  int64_t limit = p->follow ? budget : 180 * 1024;
  /* (or when even 2 stages leave no room for the largest scratch user: a computed operand's staging beside the
   * ring, an MLA decode's 512-wide latent tile -- codegen refused it, "dot staging needs N bytes"; a
   * decode-variant hunt) */
  bool no_room = ring_bytes && scratch && persist + stages * ring_bytes + scratch > budget;
  if (persist + stages * ring_bytes > limit || no_room) { /* give up streaming */
    for (int v = 0; v < f->values.len; v++)
      if (p->vkind[v] == SRC_STREAM) p->vkind[v] = SRC_STAGED;
    p->nstream = p->nring = 0;
    p->nwg = 0; /* wgmma reads only streamed slots: mma.sync */
  }
  /* a shared slot in wgmma atoms of rows over 128 bytes is not the layout
   * mma.sync's ldmatrix reads: every reader must then be wgmma */
  for (int32_t D = 0; D < f->ops.len && p->nwg; D++) {
    tl_op *o = tl_op_at(f, D);
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_dot || cg_dot_is_wgmma(p, D)) continue;
    for (int w = 0; w < 2; w++) {
      int32_t x = o->opnd[w];
      /* (a dot outside the loop x is resident in stages its own copy, emit_dot.c's kinds: no shared slot -- the
       * peeled last tile of a decode kernel, q read in and after the loop: an attention-variant hunt) */
      if (p->vkind[x] == SRC_INVARIANT && !cg_resident_slot(g, x, D)) continue;
      if (p->vkind[x] == SRC_INVARIANT) {
        /* staged once by its first dot: a wgmma A of rows over 128 bytes stages [K/64][M][64]
         * atoms (emit_dot.c stage_atoms), which this dot's ldmatrix would read as plain rows
         * (bench/variants/attn_bwd_fused.tile at D128: dQ wrong on the H200) */
        const tl_type *xt = &tl_val(f, x)->type;
        int rb = xt->rank == 2 ? xt->shape[1] * tl_dtype_bytes((tl_dtype)xt->dtype) : 0;
        /* (a 16-bit B reads the atoms: cg_soff_init_atoms, emit_dot.c; TILEC_ATOM_B=0 refuses it too) */
        if (w == 1 && tl_dtype_bytes((tl_dtype)xt->dtype) == 2 && !tl_code_env_off("TILEC_ATOM_B")) continue;
        for (int32_t D2 = 0; D2 < f->ops.len && rb > 128; D2++) {
          tl_op *o2 = tl_op_at(f, D2);
          if (!(o2->flags & TL_OPF_DEAD) && o2->opc == TL_OP_dot && o2->opnd[0] == x && cg_dot_is_wgmma(p, D2))
            cg_unsupported(g, "a tile staged once (%d x %d, rows of %d bytes) read by a wgmma dot as its A and by an "
                              "mma.sync dot (only rows of up to 128 bytes share one staging that way; load it "
                              "twice, or give the second dot a wgmma shape)",
                           xt->shape[0], xt->shape[1], rb);
        }
        continue;
      }
      if (p->vkind[x] != SRC_STREAM) continue;
      cg_stream *s = &p->streams[p->vstream[x]];
      if (s->wg_atoms && s->cols * s->eb > 128)
        cg_unsupported(g, "a loaded tile (%d x %d) read by a wgmma dot and an mma.sync dot in one loop, rows of %d bytes "
                       "(only 128-byte rows share a slot that way)", s->rows, s->cols, s->cols * s->eb);
    }
  }
  for (int i = 0; i < p->nring; i++) p->rings[i].stages = stages;
  plan_lag(p, f);
  p->rings_overlap = p->rings_overlap && p->nring >= 2; /* (not when streaming was given up) */
  if (!p->rings_overlap)
    for (int i = 0; i < p->nstream; i++) {
      if (p->streams[i].wg || p->streams[i].wg_atoms) persist = (persist + 1023) / 1024 * 1024; /* swizzle atoms */
      p->streams[i].offset = persist;
      persist += stages * p->streams[i].stage_bytes;
    }
  else { /* every ring from the same base; a ring whose loop another's follows hands its slots on */
    int base = (persist + 1023) / 1024 * 1024, end = base;
    for (int r = 0; r < p->nring; r++) {
      int at = base;
      for (int i = 0; i < p->nstream; i++) {
        if (p->streams[i].for_op != p->rings[r].for_op) continue;
        if (p->streams[i].wg || p->streams[i].wg_atoms) at = (at + 1023) / 1024 * 1024;
        p->streams[i].offset = at;
        at += stages * p->streams[i].stage_bytes;
      }
      if (at > end) end = at;
      /* (a loop inside another -- a user's loop over tiles around both -- follows the other rings' loops of the
       * iteration before, too) */
      bool in_loop = false;
      for (int32_t a = tl_op_at(f, p->rings[r].for_op)->parent; a >= 0; a = tl_op_at(f, a)->parent)
        in_loop = in_loop || tl_op_at(f, a)->opc == TL_OP_for;
      p->rings[r].after_ring = in_loop;
      for (int q = 0; q < p->nring; q++)
        p->rings[r].after_ring = p->rings[r].after_ring || (q != r && tl_op_runs_before(f, p->rings[q].for_op, p->rings[r].for_op));
    }
    persist = end;
    tl_sbuf b = {0};
    for (int r = 0; r < p->nring; r++) {
      tl_op *lo = tl_op_at(f, p->rings[r].for_op);
      tl_sbuf_printf(&b, "%s%d:%d", r ? (r + 1 == p->nring ? " and " : ", ") : "", lo->loc.line, lo->loc.col);
    }
    add_dot_note(g, "the rings of the loops at %s share one region of %d bytes (the loops run one after another; "
                    "TILEC_RING_OVERLAP=0: side by side)", b.data ? b.data : "", end - base);
    tl_sbuf_free(&b);
  }
  /* TILEC_STAGED_DOUBLE (on unless =0; the default since the twentieth session: H200 attn_rope D64
   * S4096 0.973 / 1.774 ms causal / full against 1.152 / 2.128, D128 equal, bench/RESULTS.md): a late
   * ring's staged B slots twice over, when that fits the SM and keeps two programs an SM where one slot
   * each would (cg_ring.staged2) */
  int64_t staged_bytes = 0, extra = 0;
  for (int k = 0; k < p->nwg; k++) {
    if (!p->wg_staged_b[k]) continue;
    tl_type *bt = &tl_val(f, tl_op_at(f, p->wg_dots[k])->opnd[1])->type;
    int64_t b = ((int64_t)bt->shape[0] * bt->shape[1] * tl_dtype_bytes((tl_dtype)bt->dtype) + 1023) / 1024 * 1024;
    staged_bytes += b;
    for (int r = 0; r < p->nring; r++)
      if (p->rings[r].late && p->rings[r].for_op == tl_op_at(f, p->wg_dots[k])->parent) extra += b;
  }
  if (extra && !tl_code_env_off("TILEC_STAGED_DOUBLE")) {
    int64_t base = (persist + 1023) / 1024 * 1024 + staged_bytes + 256;
    bool two = 2 * (base + 1024) <= budget;
    if (base + extra <= budget && (!two || 2 * (base + extra + 1024) <= budget))
      for (int r = 0; r < p->nring; r++) p->rings[r].staged2 = p->rings[r].late;
  }
  for (int k = 0; k < p->nwg; k++) { /* the slots of staged B (computed in the loop) */
    if (!p->wg_staged_b[k]) continue;
    tl_type *bt = &tl_val(f, tl_op_at(f, p->wg_dots[k])->opnd[1])->type;
    persist = (persist + 1023) / 1024 * 1024;
    p->wg_boff[k] = persist;
    p->wg_bdouble[k] = false;
    for (int r = 0; r < p->nring; r++)
      if (p->rings[r].staged2 && p->rings[r].for_op == tl_op_at(f, p->wg_dots[k])->parent) p->wg_bdouble[k] = true;
    persist += bt->shape[0] * bt->shape[1] * tl_dtype_bytes((tl_dtype)bt->dtype) * (p->wg_bdouble[k] ? 2 : 1);
  }
  for (int k = 0; k < p->nwg; k++) { /* the slots of staged MN-major A (TILEC_WGMMA_STAGED_A=1) */
    if (!p->wg_staged_a[k]) continue;
    tl_type *at = &tl_val(f, tl_op_at(f, p->wg_dots[k])->opnd[0])->type;
    persist = (persist + 1023) / 1024 * 1024;
    p->wg_aoff[k] = persist;
    persist += at->shape[0] * at->shape[1] * tl_dtype_bytes((tl_dtype)at->dtype);
  }
  for (int i = 0; i < p->nstream; i++) { /* the K-major buffers of transposed 8-bit B */
    cg_stream *s = &p->streams[i];
    if (!s->wg_tr) continue;
    bool inflight = false;
    for (int k = 0; k < p->nwg; k++) {
      tl_op *o = tl_op_at(f, p->wg_dots[k]);
      if (p->vkind[o->opnd[1]] == SRC_STREAM && &p->streams[p->vstream[o->opnd[1]]] == s) inflight = p->wg_inflight[k];
    }
    int lag = 0;
    for (int r = 0; r < p->nring; r++)
      if (p->rings[r].for_op == s->for_op) lag = p->rings[r].lag;
    s->tr_nbuf = inflight && lag ? 2 : 1;
    /* warp-specialized (route_pipeline's f->ws): the producer warpgroup
     * transposes, into one buffer per ring stage (emit_ws.c producer_loop_tr);
     * TILEC_WS_TRANSPOSE=0: the consumers' transpose on the TMA ring */
    s->ws_tr = tl_ws_transposes_b(f);
    if (s->ws_tr) s->tr_nbuf = stages;
    persist = (persist + 1023) / 1024 * 1024;
    s->tr_off = persist;
    persist += s->tr_nbuf * s->rows * s->cols;
    if (s->ws_tr) {
      s->trm_off = persist;
      persist += 8 * stages;
    }
  }
  persist = cg_plan_tma(g, persist);
  cg_ws_plan(g, persist, &persist);
  cg_plan_overlap(g);
  for (int i = 0; i < p->nring; i++) /* (K and V apart only around the late value dot) */
    if (p->rings[i].kv_split && !p->turns_late) p->rings[i].kv_split = false;
  persist = cg_plan_q_tma(g, persist);
  persist = cg_plan_attn_sched(g, persist);
  plan_chain(g);
  persist = cg_rope_plan_end(g, persist);
  persist = cg_plan_epilogue(g, persist);
  persist = cg_plan_atomic_tma(g, persist);
  persist = cg_plan_o_tma(g, persist);
  persist = cg_plan_o_slot(g, persist);
  g->smem_persist = g->scratch_base = persist;
  g->scratch_lo = g->scratch_hi = 0;
  g->scratch_strict = false;
  cg_use_smem(g, persist);
  plan_two_programs(g, persist);
}

bool cg_plan_two_programs(cg *g) { return g->plan && g->plan_f == g->f && g->plan->two_programs; }

int cg_scratch_pick(cg *g, int bytes) {
  return g->scratch_hi - g->scratch_lo >= bytes ? g->scratch_lo : g->smem_persist;
}

void cg_scratch_use(cg *g, int bytes) {
  if (g->scratch_strict && bytes > g->scratch_hi - g->scratch_lo)
    cg_unsupported(g, "TILEC_ROPE_PRODUCER=1: %d bytes of scratch before the main loop, over the %d of q's slots it borrows",
                   bytes, g->scratch_hi - g->scratch_lo);
  g->scratch_base = cg_scratch_pick(g, bytes);
  cg_use_smem(g, g->scratch_base + bytes);
}

LLVMValueRef cg_scratch_ptr(cg *g, LLVMValueRef byte_off) {
  return cg_smem_ptr(g, LLVMBuildAdd(g->B, byte_off, cg_i32(g, g->scratch_base), ""));
}

/* (an operand prologue's load is read back into registers: not streamed for its users) */
bool cg_val_streamed(cg *g, int32_t v) {
  return g->plan && g->plan->vkind[v] == SRC_STREAM && !g->plan->streams[g->plan->vstream[v]].prologue;
}
