/* emit_o_slot.c: requires fa3's O by TMA (emit_o_tma.c: p->o_tma) on a persistent form; decides and
 * emits O through the tile's last ring stage instead of q's slot, so "q empty" returns to the main loop's
 * exit and the next tile's q loads under this tile's last value dot and epilogue (FlashAttention-3's
 * smem_o over smem_v): by default for a tile of at most O_SLOT_MAX_STEPS main-loop steps where O fits the
 * V slot (a per-tile uniform choice, cg_o_slot_taken; a longer tile keeps q's slot), on every tile where
 * causal tiles come from the counter (attn_sched.c), TILEC_ATTN_O_SLOT=1 on every tile, =0 never.
 * docs/pipelines.md "O through the last stage".
 *
 * Why (bench/RESULTS.md "branch attnshort2"): with O in q's slot, "q empty" completes only after both
 * warpgroups' O stores read the slot, so each tile's start waits for the epilogue, then for q's whole
 * TMA latency, with the tensor cores idle.
 *
 * Per tile (the main loop ran; `last` its last stage, the slot before the read counter):
 *   loop exit:   lane 0 of every consumer warp arrives on "q empty" (count 8: emit_q_tma.c's protocol
 *                without O by TMA), before the last value dot's turn
 *   epilogue:    bar.sync 9, 256: both warpgroups' last value dots done (each waited for its own
 *                groups), so no dot reads stage `last` any more;
 *                O's D/64 atoms of [rows][64] (128-byte swizzle) written into the stage's V slot, the
 *                atoms past it (D256: 2 of 4) into a region of their own (where shared memory has room,
 *                else not taken; free again each tile: the thread that stored it waited for the read
 *                before its warpgroup's next wgmma);
 *                the store as emit_o_tma.c's (fence.proxy.async, bar.sync 7 + w, thread 128 w's boxes,
 *                wait_group.read 0), then thread 128 w releases the stage for its 4 warps (arrive
 *                count 4 on the stage's empty mbarrier, the value half's with K and V apart: the key
 *                half was released after the last score dot as before);
 *                emit_ws.c's release of the last stage at the tile's end is skipped.
 * A tile whose loop did not run keeps q's slot: no arrive at the exit, O through q's slot, and the
 * store's thread arrives on "q empty" with count 4 instead.
 * TILEC_ATTN_O_SLOT_K (twenty-ninth session; the default for full attention since the thirtieth, o_slot_k_wanted;
 * K and V of a stage together, O the size of K's slot):
 * O into the stage's K slot, and instead of bar.sync 9 each warpgroup waits for this tile's phase of "q empty",
 * whose 8 arrivals at the loop's exit say every score dot of the tile is done -- the only readers of K -- so the
 * earlier warpgroup's epilogue no longer waits for the later one's last value dot (bench/o_slot_protocol_sim.py
 * models it: clean, and its mutant without the wait is found). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "attn_form.h"
#include "code_env.h"
#include "schedule.h"

/* Whether stream s's slot is whole 1024-byte-aligned atoms of O (rows of 128 bytes, q's rows a column of 64). */
static bool atoms_of_o(const cg_plan *p, const cg_stream *s) {
  return s->offset % 1024 == 0 && s->stage_bytes % 1024 == 0 && cg_tma_stream_bytes(s) % (p->q_rows * 128) == 0;
}

/* Why O does not go through the last stage, or NULL; *vs: the V stream, *ks: the K stream. */
static const char *o_slot_unfit(cg *g, int *vs, int *ks) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  if (!p->o_tma) return "O is not stored by TMA (TILEC_ATTN_O_TMA)";
  if (!p->persist) return "not persistent (one tile a CTA: no next q to load early)";
  if (p->nring != 1 || !p->rings[0].ws || !p->rings[0].tma) return "not one TMA ring fed by a producer";
  if (p->rope || p->cluster) return "fa3's rotating producer or a cluster fills the stage its own way";
  cg_ring *R = &p->rings[0];
  int n = 0;
  for (int i = 0; i < p->nstream; i++) n += p->streams[i].for_op == R->for_op;
  if (n != 2 || p->turn_wait_dot < 0 || p->turn_defer_dot < 0) return "the ring is not one K and one V stream";
  int32_t kb = tl_op_at(f, p->turn_wait_dot)->opnd[1], vb = tl_op_at(f, p->turn_defer_dot)->opnd[1];
  if (p->vkind[kb] != SRC_STREAM || p->vkind[vb] != SRC_STREAM || p->vstream[kb] == p->vstream[vb])
    return "the dots' B are not the ring's two streams";
  *vs = p->vstream[vb];
  *ks = p->vstream[kb];
  if (!atoms_of_o(p, &p->streams[*vs])) return "V's slot is not whole 1024-byte-aligned atoms of O";
  return NULL;
}

/* The bound of the default (TILEC_ATTN_O_SLOT unset): tiles of at most this many steps take the slot.  Measured
 * (H100, interleaved rounds, bench/RESULTS.md twenty-eighth session) at D128 full against q's slot: S1k (8 steps)
 * +2.4..3.0 % in three calls, S1.5k (12) +1.4 %, S2k (16) +0.6 %, S3k +0.2 %, S8k -0.9 %, S16k -0.8 %. */
enum { O_SLOT_MAX_STEPS = 10 };

/* K's slot for O: TILEC_ATTN_O_SLOT_K=1 wherever it fits, =0 never; unset (the default since the thirtieth
 * session) for full attention's bounded slot (the main loop's range independent of the program, tiles of at most
 * O_SLOT_MAX_STEPS steps): H100, 7 interleaved rounds x the V slot, D128 full S 1k / 1280 1.035 / 1.025x, S 2k
 * 0.999 (16 steps: q's slot, the same path); causal with tiles from the counter 1.022 / 1.029 / 1.018 / 1.007x at
 * S 1k / 2k / 4k / 16k, below the 1.02 the rule asked at 4k and 16k: opt-in there (bench/RESULTS.md), and asked
 * by the option attn-o-slot-k (f->attn_o_slot_k, which wins over the switch) in the causal D128 form that launches
 * with 1024 <= S < 4096 (lib/attn_form.h short_*). */
static bool o_slot_k_wanted(cg *g, bool every) {
  char m = tl_attn_o_slot_k_mode(g->f->attn_o_slot_k);
  if (m) return m == '1';
  return !every && !g->plan->sched_fit; /* (sched_fit: the loop's trip count moves with the tile, cg_ws_plan) */
}

int cg_plan_o_slot(cg *g, int persist) {
  cg_plan *p = g->plan;
  const char *env = tl_code_env("TILEC_ATTN_O_SLOT");
  bool asked = env && env[0] == '1', off = env && !asked;
  /* causal tiles from the counter (attn_sched.c, planned before): every tile by default, as =1 (H100, twenty-eighth
   * session, with the counter: D128 causal S1k / 2k / 4k 1.10 / 1.07 / 1.04x the default kernels, D256 S1k
   * 1.03x; the bounded form's per-tile test kept the tile's bounds live to the tile's end, 764 -> 818 instructions
   * in the main loop) */
  bool every = asked || (!env && p->sched_dyn && !tl_code_env("TILEC_ATTN_O_SLOT_MAX")); /* (a bound set: bounded) */
  if (off || !p->o_tma) return persist; /* (=0: off; silent off the O-by-TMA form) */
  int vs = -1, ks = -1, atom = p->q_rows * 128;
  const char *why = o_slot_unfit(g, &vs, &ks);
  /* O's atoms past the V slot (D256: 2 of 4) in a region of their own, where shared memory has room */
  int nv = why ? 0 : cg_tma_stream_bytes(&p->streams[vs]) / atom;
  int at1k = (persist + 1023) / 1024 * 1024, extra = nv < p->q_boxes ? (p->q_boxes - nv) * atom : 0;
  if (!why && extra && at1k + extra > tl_arch_smem_budget(g->o ? g->o->arch : NULL))
    why = "O is larger than V's slot and shared memory has no room for the rest";
  /* (the default, silent where unfit: without the counter only where O fits V's slot, D128) */
  if (!asked && (why || (extra && !every))) return persist;
  int max = 0; /* (the steps bound: 0 none) */
  if (!every) {
    const char *e = tl_code_env("TILEC_ATTN_O_SLOT_MAX");
    max = e ? atoi(e) : O_SLOT_MAX_STEPS;
    if (max <= 0) return persist; /* (TILEC_ATTN_O_SLOT_MAX=0: off) */
  }
  tl_sbuf note = {0};
  if (why) {
    tl_sbuf_printf(&note, "%s; O through the last stage not taken (TILEC_ATTN_O_SLOT=1: %s)", p->o_note, why);
  } else {
    p->o_slot = true;
    p->o_slot_max = max;
    p->o_slot_v = vs;
    /* K's slot (o_slot_k_wanted), where K and V are one stage (one empty barrier) and O fills K's slot */
    if (o_slot_k_wanted(g, every) && !p->rings[0].kv_split && !extra && atoms_of_o(p, &p->streams[ks]) &&
        cg_tma_stream_bytes(&p->streams[ks]) == cg_tma_stream_bytes(&p->streams[vs]))
      p->o_slot_k = true, p->o_slot_v = ks;
    p->o_slot_nv = nv < p->q_boxes ? nv : p->q_boxes;
    p->o_slot_x = -1;
    if (extra) {
      p->o_slot_x = at1k;
      persist = at1k + extra;
    }
    char when[160] = " (TILEC_ATTN_O_SLOT=1)";
    if (!asked) snprintf(when, sizeof when, " for every tile (the default with tiles from the counter; =0 off)");
    if (max)
      snprintf(when, sizeof when,
               " for a tile of at most %d steps (longer: q's slot; TILEC_ATTN_O_SLOT_MAX=N moves the bound, "
               "TILEC_ATTN_O_SLOT=0 off)", max);
    tl_sbuf_printf(&note,
                   "%s; O through the last stage%s: \"q empty\" back at the main loop's exit (8 "
                   "arrivals), so the next tile's q loads under the last value dot and the epilogue; %s, O's atoms "
                   "into the last stage's %s slot%s, the store's thread releases the stage (count 4 a warpgroup)",
                   p->o_note, when,
                   !p->o_slot_k ? "bar.sync 9, 256 (both last value dots done)"
                   : tl_attn_o_slot_k_mode(g->f->attn_o_slot_k)
                       ? g->f->attn_o_slot_k ? "this tile's phase of \"q empty\" waited for (every score dot done: the option attn-o-slot-k=1)"
                                             : "this tile's phase of \"q empty\" waited for (every score dot done: TILEC_ATTN_O_SLOT_K=1)"
                       : "this tile's phase of \"q empty\" waited for (every score dot done: the default for full "
                         "attention's bounded slot, TILEC_ATTN_O_SLOT_K=0 V's)",
                   p->o_slot_k ? "K" : "V", extra ? " and a region of their own past it" : "");
  }
  p->o_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  return persist;
}

/* i1: this tile's O goes through the last stage: its main loop ran, and within the steps bound (uniform: the
 * bounds are the tile's, the same in both warpgroups).  ran: the loop ran (cg_ws_loop_ran). */
LLVMValueRef cg_o_slot_taken(cg *g, LLVMValueRef ran) {
  cg_plan *p = g->plan;
  if (!p->o_slot_max) return ran;
  LLVMValueRef b[3]; /* lo, hi, step */
  cg_ws_loop_bounds(g, &p->rings[0], b);
  /* steps <= max  <=>  hi - lo <= max * step (step > 0 where the loop ran) */
  LLVMValueRef fits = LLVMBuildICmp(g->B, LLVMIntSLE, LLVMBuildSub(g->B, b[1], b[0], ""),
                                    LLVMBuildMul(g->B, b[2], cg_i64(g, p->o_slot_max), ""), "");
  return LLVMBuildAnd(g->B, ran, fits, "o.slot.taken");
}

void cg_o_slot_begin(cg *g, LLVMValueRef qbase, cg_o_slot_at *at) {
  cg_plan *p = g->plan;
  cg_ring *R = &p->rings[0];
  int atom = p->q_rows * 128;
  at->taken = cg_o_slot_taken(g, cg_ws_loop_ran(g, R));
  at->last = cg_ws_last_stage(g, R);
  if (p->o_slot_k) { /* (K's slot: every score dot of the tile done, uniform: both warpgroups take the same path) */
    cg_q_tma_tile_empty_wait(g, at->taken);
  } else if (!p->o_slot_max) { /* (=1: as measured in the twenty-third session, also where the loop did not run) */
    cg_asm_void(g, "bar.sync 9, 256;", "~{memory}", NULL, 0); /* (both warpgroups' last value dots done) */
  } else { /* (a uniform predicate: the bounds are the tile's, so both warpgroups take the same path) */
    LLVMValueRef on = LLVMBuildZExt(g->B, at->taken, g->i32, "");
    cg_asm_void(g, "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p bar.sync 9, 256; }", "r,~{memory}", &on, 1);
  }
  LLVMValueRef sb = cg_smem_base32(g);
  cg_stream *vs = &p->streams[p->o_slot_v];
  LLVMValueRef v = LLVMBuildAdd(g->B, sb, LLVMBuildAdd(g->B, cg_i32(g, vs->offset), LLVMBuildMul(g->B, at->last, cg_i32(g, vs->stage_bytes), ""), ""), "");
  at->a = LLVMBuildSelect(g->B, at->taken, v, qbase, "o.slot.v");
  at->b = at->a;
  if (p->o_slot_x >= 0) { /* atom b >= nv at the region + (b - nv) atoms (free again: the last store's read waited for) */
    at->b = LLVMBuildSelect(g->B, at->taken, cg_add_c(g, sb, p->o_slot_x - p->o_slot_nv * atom), qbase, "o.slot.x");
  }
}

/* thread 128 w (`one`, i32 0 / 1), after its boxes' read: arrive count 4 on mb when `on`. */
static void arrive4(cg *g, LLVMValueRef one, LLVMValueRef on, LLVMValueRef mb) {
  LLVMValueRef args[2] = {mb, LLVMBuildAnd(g->B, one, LLVMBuildZExt(g->B, on, g->i32, ""), "")};
  cg_asm_void(g, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p mbarrier.arrive.shared::cta.b64 _, [$0], 4; }",
              "r,r,~{memory}", args, 2);
}

void cg_o_slot_end(cg *g, const cg_o_slot_at *at, LLVMValueRef one) {
  cg_plan *p = g->plan;
  cg_ring *R = &p->rings[0];
  LLVMValueRef sb = cg_smem_base32(g);
  LLVMValueRef e8 = cg_mul_c(g, at->last, 8);
  /* taken: the stage (its value half with K and V apart); else "q empty" (its slot held O) */
  arrive4(g, one, at->taken, LLVMBuildAdd(g->B, sb, LLVMBuildAdd(g->B, cg_i32(g, R->kv_split ? R->vempty_off : R->empty_off), e8, ""), ""));
  arrive4(g, one, LLVMBuildNot(g->B, at->taken, ""), cg_add_c(g, sb, p->q_mbar_off + 8));
}

bool cg_o_slot_on(cg *g) {
  cg_plan *p = g->plan;
  return p && g->plan_f == g->f && p->o_slot;
}
