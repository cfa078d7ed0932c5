/* emit_ws.c: requires the main-loop plan with one TMA ring feeding wgmma
 * (cg_make_plan, cg_plan_tma) and f->ws from route_pipeline; emits the
 * warp-specialized kernel: a producer warpgroup that fills the ring and
 * consumer warpgroups that run the kernel's body, synchronized only by
 * mbarriers.  docs/pipelines.md "Warp specialization".
 *
 *   producer (warpgroup f->warps / 4, threads 32*warps ..): setmaxnreg.dec;
 *     with the tensor maps valid one thread, else all 128 (the element copy
 *     that takes any view), loops over its tiles (tile_sched.c) and k-steps:
 *     wait for the slot's "empty" mbarrier, then the slot's TMA boxes
 *     (arrive.expect_tx on its "full" mbarrier) or copy, fence.proxy.async,
 *     named barrier 2 and one arrive; at the end it waits until every slot
 *     was released (nothing of the CTA is in flight when it exits).
 *   consumers (warpgroups 0 ..): setmaxnreg.inc, the body per tile; at the
 *     ring: wait for the slot's "full" mbarrier (no CTA barrier); after the
 *     dot's wgmma.wait_group, lane 0 of each warp arrives on the "empty"
 *     mbarrier of the slot whose reads are done (with a group in flight,
 *     wait_group 1: the previous slot; the loop exit releases the last).
 *     Barriers of the body (the epilogue's layout conversions) become the
 *     named barrier 1 of the consumer threads.
 * Both sides keep their slot index and phase bits across tiles: the ring
 * never drains between tiles, the producer runs ahead into the next tile
 * while the consumers finish the epilogue of this one.
 *
 * Ping-pong (TILEC_WS=pingpong; a tile of 4 warps, persistent): two consumer
 * warpgroups (threads 0-255, each running the body's 4-warp layouts) take
 * alternate tiles of the CTA's list (tile_sched.c: warpgroup w from ctaid +
 * w nctaid, step 2 nctaid); the producer (threads 256-383) fills the one
 * ring in the CTA's order.  A warpgroup's main loop starts only after the
 * other's has ended (named barrier 5 + w: bar.arrive by the other after its
 * drain, bar.sync at this one's preheader), so the main loops take turns on
 * the tensor cores and each epilogue runs under the other's main loop; it
 * also keeps every full-mbarrier wait at most one phase ahead (a parity wait
 * two phases ahead would pass at once).  At that preheader the warpgroup
 * skips the other's k-steps in its slot index and phase bits (every tile's
 * main loop has the same trip count: its bounds do not depend on the tile).
 * The body's barriers are the warpgroup's named barrier 3 + w of 128
 * threads; the epilogue's staging buffers and its TMA thread are the
 * warpgroup's own (emit_epilogue.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "code_env.h"
#include "rows.h"

/* registers per thread after setmaxnreg (multiples of 8; 128 x 40 + 256 x 232
 * = 64512 of the SM's 65536): the producer only computes addresses */
#define WS_PRODUCER_REGS 40
#define WS_CONSUMER_REGS 232

static bool scalar_op(tl_func *f, tl_op *o) {
  /* pure arithmetic and the program's coordinates: nothing with an effect
   * (loads, stores, atomics), since both sides run it */
  bool pure = (tl_opinfo_table[o->opc].flags & (TL_PURE | TL_EW)) || o->opc == TL_OP_program_id ||
              o->opc == TL_OP_num_programs || o->opc == TL_OP_dim || o->opc == TL_OP_const;
  if (!pure || o->opc == TL_OP_load || o->opc == TL_OP_store || o->nregions) return false;
  if (o->opc == TL_OP_const) return true; /* (a constant tile costs no code) */
  for (int i = 0; i < o->nres; i++)
    if (tl_val(f, o->res[i])->type.kind == TL_KIND_TILE) return false;
  return true;
}

/* Value v is computable by the producer: a parameter, a region argument
 * (the loop's iv), or a scalar op of such values (the body's scalars
 * before the loop, a streamed tile's index arithmetic in it). */
static bool producer_computes(tl_func *f, int32_t v, int depth) {
  tl_value *x = tl_val(f, v);
  if (x->def < 0) return true;
  if (depth > 64 || x->type.kind == TL_KIND_TILE) return false;
  tl_op *o = tl_op_at(f, x->def);
  if (!scalar_op(f, o)) return false;
  for (int k = 0; k < o->nopnd; k++)
    if (!producer_computes(f, o->opnd[k], depth + 1)) return false;
  return true;
}

/* The dots of ring R's loop: *waiting (wait_group 0 in their iteration),
 * *inflight (a group left in flight), *deferred (waited for by a later
 * waiting dot: attention's O += P V); the first waiting / deferred dot. */
static void count_dots(cg *g, cg_ring *R, int *waiting, int *inflight, int *deferred, int32_t *wdot, int32_t *ddot) {
  cg_plan *p = g->plan;
  *waiting = *inflight = *deferred = 0;
  *wdot = *ddot = -1;
  for (int i = 0; i < p->nwg; i++) {
    if (tl_op_at(g->f, p->wg_dots[i])->parent != R->for_op) continue;
    /* (TILEC_ROPE_PRODUCER=1: the first of the two chained score dots waits with the second) */
    if (p->rope && p->wg_dots[i] == p->rope->dot_first) continue;
    if (p->wg_defer[i]) {
      if (*ddot < 0) *ddot = p->wg_dots[i];
      ++*deferred;
    } else if (p->wg_inflight[i] && R->lag) {
      ++*inflight;
    } else {
      if (*wdot < 0) *wdot = p->wg_dots[i];
      ++*waiting;
    }
  }
}

/* The ring's 8-bit [K][N] B the producer transposes (ws_tr), or NULL. */
static cg_stream *tr_stream(cg *g, cg_ring *R) {
  cg_plan *p = g->plan;
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == R->for_op && p->streams[i].wg_tr && p->streams[i].ws_tr) return &p->streams[i];
  return NULL;
}

/* Why the ring's loop cannot be warp-specialized, or NULL.  after_drain: the caller acts only
 * after the loop's exit drained every wgmma group (tile_prefetch.c for TILEC_ATTN_PERSIST), so how
 * the dots wait for their groups inside the loop does not matter. */
static const char *ws_unfit(cg *g, cg_ring *R, bool need_tma, bool after_drain) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  if (!R) return p->nring ? "more than one ring" : "no streamed main loop";
  if (need_tma && !R->tma) return "the ring is not fed by TMA";
  if (!R->wgmma) return "the ring does not feed wgmma";
  if (f->warps % 4 || f->warps / 4 > 2) return "the warps are not one or two warpgroups";
  if (tl_op_at(f, R->for_op)->parent != -1) return "the main loop is not at the top level of the kernel";
  /* the transpose of an 8-bit [K][N] B needs every consumer past the read of
   * its buffer's previous k-step: the per-k-step CTA barrier WS removes */
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != R->for_op || !s->wg_tr) continue;
    /* (ws_tr: the producer warpgroup transposes it, producer_loop_tr) */
    if (!s->ws_tr) return "an 8-bit [K][N] B is transposed each k-step (TILEC_WS_TRANSPOSE=0, or a cluster)";
    if (f->warps != 8 || p->nstream != 2) return "an 8-bit [K][N] B transposed by the producer needs two consumer warpgroups and one A";
  }
  /* a B staged each step (dot_plan.c wg_staged_b) is rewritten after the ring's CTA barrier,
   * which is what keeps its slot's previous readers done: WS has no such barrier */
  for (int i = 0; i < p->nwg; i++)
    if (p->wg_staged_b[i] && tl_op_at(f, p->wg_dots[i])->parent == R->for_op) return "a wgmma B is staged each k-step";
  for (int32_t D = 0; D < f->ops.len; D++) {
    tl_op *o = tl_op_at(f, D);
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_dot || !tl_op_inside(f, D, R->for_op)) continue;
    bool wg = false;
    for (int i = 0; i < p->nwg; i++) wg = wg || p->wg_dots[i] == D;
    if (!wg || tl_op_at(f, D)->parent != R->for_op) return "a dot of the main loop is not a wgmma of the ring";
  }
  /* Either every dot keeps a group in flight (a GEMM: each releases the
   * slot before its own), or one dot waits for all groups and the others
   * defer to it (attention: the score dot's wait_group 0 of iteration j also
   * completes O += P V of j-1, so it releases slot j-1, K and V; the last
   * slot at the tile's end).  (A dot that waits for each group, wait_group
   * 0, alone: fp8 promote, or TILEC_WGMMA_INFLIGHT=0, releases its slot at
   * once; measured only in the first version of this emitter, so not taken
   * until it is again.) */
  int waiting, inflight, deferred;
  int32_t wdot, ddot;
  count_dots(g, R, &waiting, &inflight, &deferred, &wdot, &ddot);
  if (after_drain) waiting = inflight = deferred = 0;
  if (deferred && (waiting != 1 || inflight)) return "the deferred dots of the main loop have no one waiting dot";
  /* (fp8 promote: one waiting dot, alone, which releases its slot after
   * each wait_group 0; measured on the H200, ninth session: the cooperative
   * kernel on two warpgroups 1.2-1.3x the TMA ring, ping-pong on a 4-warp
   * tile 0.82-0.93x of it) */
  bool promote_ok = waiting == 1 && !inflight && wdot >= 0 && cg_dot_promotes(g, tl_op_at(f, wdot));
  if (!deferred && waiting && !promote_ok)
    return "a dot of the main loop waits for each wgmma group (fp8 promote, a 2-stage ring, TILEC_WGMMA_INFLIGHT=0)";
  /* the producer recomputes what the loop needs from the body before it:
   * the loop's bounds and the streamed tiles' indices, from scalars only
   * (the tile ops before the loop, attention's q and its row state, are the
   * consumers' alone) */
  tl_region *body = &f->body;
  for (int i = 0; i < body->ops.len && body->ops.data[i] != R->for_op; i++) {
    tl_op *o = tl_op_at(f, body->ops.data[i]);
    if (!(o->flags & TL_OPF_DEAD) && (o->opc == TL_OP_store || o->opc == TL_OP_atomic))
      return "the body before the main loop writes memory";
  }
  tl_op *lo = tl_op_at(f, R->for_op);
  for (int k = 0; k < 3 && k < lo->nopnd; k++)
    if (!producer_computes(f, lo->opnd[k], 0)) return "the main loop's bounds are not scalar arithmetic of the parameters";
  for (int i = 0; i < p->nstream; i++) {
    if (p->streams[i].for_op != R->for_op) continue;
    tl_op *o = tl_op_at(f, p->streams[i].load_op);
    for (int k = 1; k < o->nopnd; k++)
      if (!producer_computes(f, o->opnd[k], 0)) return "a streamed tile's index is not scalar arithmetic of the iv";
  }
  return NULL;
}

/* Why attention's consumer warpgroups cannot take turns (given a loop with
 * deferred dots), or NULL; *wdot / *ddot: the waiting and the deferred dot. */
static const char *turns_unfit(cg *g, cg_ring *R, int32_t *wdot, int32_t *ddot) {
  tl_func *f = g->f;
  int waiting, inflight, deferred;
  count_dots(g, R, &waiting, &inflight, &deferred, wdot, ddot);
  if (f->warps != 8) return "not two consumer warpgroups";
  if (deferred != 1) return "more than one deferred dot";
  tl_region *body = &tl_op_at(f, R->for_op)->regions[0];
  int wpos = -1, dpos = -1;
  for (int i = 0; i < body->ops.len; i++) {
    if (body->ops.data[i] == *wdot) wpos = i;
    if (body->ops.data[i] == *ddot) dpos = i;
  }
  if (wpos < 0 || dpos < wpos) return "the deferred dot comes before the waiting one";
  return NULL;
}

/* Value v is computed, through the body's ops before the loop, from a
 * program id (or the program count). */
static bool from_program_id(tl_func *f, int32_t v, int depth) {
  int32_t d = tl_val(f, v)->def;
  if (d < 0 || depth > 64) return depth > 64;
  tl_op *o = tl_op_at(f, d);
  if (o->opc == TL_OP_program_id || o->opc == TL_OP_num_programs) return true;
  for (int k = 0; k < o->nopnd; k++)
    if (from_program_id(f, o->opnd[k], depth + 1)) return true;
  return false;
}

/* Why the ring's loop cannot take the ping-pong schedule (given ws_unfit's
 * NULL), or NULL. */
static const char *pingpong_unfit(cg *g, cg_ring *R) {
  tl_func *f = g->f;
  if (f->warps != 4) return "the tile is on 8 warps (each warpgroup takes its own tile: a tile of 4 warps, @warps(4))";
  if (!g->plan->persist) return "not persistent";
  tl_op *lo = tl_op_at(f, R->for_op);
  for (int k = 0; k < 3 && k < lo->nopnd; k++)
    if (from_program_id(f, lo->opnd[k], 0)) return "the main loop's bounds depend on the tile";
  return NULL;
}

const char *cg_ws_unfit(cg *g, cg_ring *R) { return ws_unfit(g, R, true, false); }
const char *cg_ws_unfit_after_drain(cg *g, cg_ring *R) { return ws_unfit(g, R, true, true); }
bool cg_ws_scalar(tl_func *f, int32_t v) { return producer_computes(f, v, 0); }

bool cg_ws_pingpong(cg *g) { return g->plan && g->plan_f == g->f && g->plan->ws == TL_WS_PINGPONG; }

/* K and V apart (TILEC_ATTN_KV_SPLIT=1): the ring's two streams are the score dot's B (K, *k its
 * index) and the value dot's B (V), each read by that dot alone. */
static bool kv_streams(cg *g, cg_ring *R, int32_t wdot, int32_t ddot, int *k) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  int n = 0;
  for (int i = 0; i < p->nstream; i++) n += p->streams[i].for_op == R->for_op;
  /* (fa3's rotating producer, emit_rope.c, and clusters fill the stage their own way) */
  if (n != 2 || wdot < 0 || ddot < 0 || p->rope || p->cluster) return false;
  int32_t kb = tl_op_at(f, wdot)->opnd[1], vb = tl_op_at(f, ddot)->opnd[1];
  if (p->vkind[kb] != SRC_STREAM || p->vkind[vb] != SRC_STREAM || p->vstream[kb] == p->vstream[vb]) return false;
  cg_stream *ks = &p->streams[p->vstream[kb]], *vs = &p->streams[p->vstream[vb]];
  if (ks->for_op != R->for_op || vs->for_op != R->for_op || ks->readers != 1 || vs->readers != 1 || ks->wg_tr || vs->wg_tr)
    return false;
  *k = p->vstream[kb];
  return true;
}

void cg_ws_plan(cg *g, int persist, int *end) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  *end = persist;
  p->persist = f->persist && tl_grid_in_kernel(f); /* (the grid clause evaluated in the kernel: lib/rows.c) */
  tl_sbuf note = {0};
  /* attention (route_pipeline: TILEC_ATTN_WS=fa3): a static tile order only when every tile's trip
   * count is the same (not causal: there the hardware's heaviest-first order balances the SMs) */
  const char *attn_nopersist = NULL;
  if (p->persist && f->ws && p->nring == 1) {
    tl_op *lo = tl_op_at(f, p->rings[0].for_op);
    for (int k = 0; k < 3 && k < lo->nopnd; k++)
      if (from_program_id(f, lo->opnd[k], 0)) attn_nopersist = CG_TRIP_BY_TILE;
    if (attn_nopersist) p->persist = false;
    /* (attn_sched.c: TILEC_ATTN_SCHED=1 may make it persistent after all, tiles from a counter) */
    p->sched_fit = attn_nopersist && f->attn_fa3;
  }
  if (f->ws) {
    cg_ring *R = p->nring == 1 ? &p->rings[0] : NULL;
    const char *why = ws_unfit(g, R, true, false);
    if (why) {
      tl_sbuf_printf(&note, "not warp-specialized (%s)", why);
    } else {
      int waiting, inflight, deferred;
      int32_t wdot, ddot;
      count_dots(g, R, &waiting, &inflight, &deferred, &wdot, &ddot);
      if (deferred) { /* attention: one tile for both consumer warpgroups */
        const char *twhy = f->ws == TL_WS_PINGPONG ? turns_unfit(g, R, &wdot, &ddot) : "";
        p->ws = TL_WS_COOP;
        p->ws_attn = true;
        p->ws_turns = !twhy;
        p->turn_wait_dot = wdot;
        p->turn_defer_dot = ddot;
        p->ws_for = R->for_op;
        R->ws = true;
        persist = (persist + 7) / 8 * 8;
        R->empty_off = persist;
        persist += 8 * R->stages;
        R->kv_split = p->ws_turns && f->attn_fa3 && (cg_kv_split_level() == 1 || (cg_kv_split_level() < 0 && R->stages == 2)) && kv_streams(g, R, wdot, ddot, &R->kv_k);
        if (R->kv_split) { /* (V's full and empty mbarriers; cg_plan_overlap's late dot confirms it) */
          R->vfull_off = persist;
          R->vempty_off = persist + 8 * R->stages;
          persist += 16 * R->stages;
        }
        *end = persist;
        tl_sbuf_printf(&note,
                       "warp-specialized (attention): %d consumer warpgroups on one tile (setmaxnreg.inc %d), producer "
                       "warpgroup %d (setmaxnreg.dec %d; one thread issues the TMA boxes, all 128 copy when a tensor "
                       "fails the map test), a full and an empty mbarrier per stage, no CTA barrier in the main loop; the "
                       "score dot's wait releases the slot before (K and V: O += P V of that step is complete), the last "
                       "at the tile's end",
                       f->warps / 4, WS_CONSUMER_REGS, f->warps / 4, WS_PRODUCER_REGS);
        if (p->ws_turns)
          tl_sbuf_puts(&note, "; turns: each warpgroup issues O += P V of step j and the scores of step j+1 between "
                              "bar.sync 5 + w, 256 and bar.arrive 6 - w, 256 (named barriers), so one's softmax runs "
                              "under the other's wgmma");
        else if (*twhy)
          tl_sbuf_printf(&note, " (turns not taken: %s)", twhy);
        goto noted;
      }
      const char *ppwhy = f->ws == TL_WS_PINGPONG ? pingpong_unfit(g, R) : NULL;
      p->ws = ppwhy ? TL_WS_COOP : f->ws;
      p->ws_for = R->for_op;
      R->ws = true;
      persist = (persist + 7) / 8 * 8;
      R->empty_off = persist;
      persist += 8 * R->stages;
      *end = persist;
      /* (a TMA form has no element copy: its launcher runs the no-TMA form for such tensors) */
      const char *copies = cg_tma_mode(g) == TL_TMA_FORM ? "" : ", all 128 copy when a tensor fails the map test";
      if (p->ws == TL_WS_PINGPONG)
        tl_sbuf_printf(&note,
                       "warp-specialized (ping-pong): 2 consumer warpgroups on alternate tiles of the CTA's list "
                       "(setmaxnreg.inc %d), each main loop after the other's (named barriers 5, 6), one's epilogue "
                       "under the other's main loop; producer warpgroup 2 (setmaxnreg.dec %d; one thread issues the "
                       "TMA boxes%s), a full and an empty mbarrier per stage",
                       WS_CONSUMER_REGS, WS_PRODUCER_REGS, copies);
      else
        tl_sbuf_printf(&note,
                       "warp-specialized (cooperative): %d consumer warpgroup%s on one tile (setmaxnreg.inc %d), "
                       "producer warpgroup %d (setmaxnreg.dec %d; one thread issues the TMA boxes%s), a full and an "
                       "empty mbarrier per stage, no CTA barrier in the main loop",
                       f->warps / 4, f->warps / 4 > 1 ? "s" : "", WS_CONSUMER_REGS, f->warps / 4, WS_PRODUCER_REGS, copies);
      if (tr_stream(g, R))
        tl_sbuf_printf(&note, "; the 8-bit [K][N] B: its boxes TMA'd %d k-steps ahead into staging slots (a \"loaded\" "
                              "mbarrier each), the producer's 128 threads transpose each into the K-major buffer of its "
                              "ring slot and arrive on the full mbarrier (count 2: A's expect_tx and that arrive); "
                              "TILEC_WS_TRANSPOSE=0: the consumers' transpose on the TMA ring",
                       R->stages - 1);
      if (ppwhy) tl_sbuf_printf(&note, " (ping-pong not taken: %s)", ppwhy);
    }
    cg_cluster_plan(g, R, &note);
  }
noted:
  for (int i = 0; i < p->nring; i++) /* (not warp-specialized after all: the plain 2-stage ring, no late dot) */
    if (p->rings[i].kv_lag2 && !p->rings[i].ws) {
      cg_ring *R = &p->rings[i];
      R->lag = 0, R->kv_lag2 = R->kv_split = false;
      for (int k = 0; k < p->nwg; k++)
        if (tl_op_at(f, p->wg_dots[k])->parent == R->for_op) p->wg_defer[k] = false, p->wg_carried[k] = -1;
    }
  if (p->persist) {
    tl_sbuf_printf(&note, "%spersistent: min(tiles, CTAs that fit) CTAs, tile order grouped by %d along program_id(0)",
                   note.len ? "; " : "", cg_tile_group());
    const char *pwhy = p->nring == 1 ? cg_tile_prefetch_plan(g, &p->rings[0]) : "";
    if (!pwhy)
      tl_sbuf_printf(&note, "; the next tile's first %d stages issued at the main loop's exit, under the epilogue "
                            "(%s)", p->rings[0].stages - 1 - p->rings[0].lag,
                     f->attn_persist ? "TILEC_ATTN_PERSIST=1" : "TILEC_TILE_PREFETCH=1");
    else if (*pwhy)
      tl_sbuf_printf(&note, "; no tile prefetch (%s)", pwhy);
  }
  else if (f->persist)
    tl_sbuf_printf(&note, "%snot persistent (%s)", note.len ? "; " : "",
                   attn_nopersist ? attn_nopersist : "the grid clause cannot be evaluated in the kernel");
  if (note.len) p->ws_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
}

/* TILEC_ATTN_KV_SPLIT: 1 or 2 as set; unset: -1 (the default since the twentieth session: K and V apart,
 * as =1, on a 2-stage ring only, where it lets fa3 run: D256 +5-7 % at S 4k-16k, H200; on D128's
 * deeper rings =1 measured 0.98-1.00x, so it stays off there); 0 for =0 or any other value. */
int cg_kv_split_level(void) {
  const char *e = tl_code_env("TILEC_ATTN_KV_SPLIT");
  if (!e) return -1;
  return (e[0] == '1' || e[0] == '2') && !e[1] ? e[0] - '0' : 0;
}

bool cg_ws_wanted(cg *g, cg_ring *R) { return g->f->ws && g->plan->nring == 1 && !ws_unfit(g, R, false, false); }

int cg_ws_extra_threads(cg *g) {
  if (!g->plan || g->plan_f != g->f || !g->plan->ws) return 0;
  return g->plan->ws == TL_WS_PINGPONG ? 256 : 128; /* the producer (+ the second consumer warpgroup) */
}

/* The mbarrier of stage `slot` in the array of them at shared offset `off` (8 bytes each). */
static LLVMValueRef mbar_at(cg *g, int off, LLVMValueRef slot) {
  return LLVMBuildAdd(g->B, cg_smem_base32(g), LLVMBuildAdd(g->B, cg_i32(g, off), LLVMBuildShl(g->B, slot, cg_i32(g, 3), ""), ""), "");
}

static LLVMValueRef empty_addr(cg *g, cg_ring *R, LLVMValueRef slot) {
  return LLVMBuildAdd(g->B, cg_smem_base32(g),
                      LLVMBuildAdd(g->B, cg_i32(g, R->empty_off), LLVMBuildShl(g->B, slot, cg_i32(g, 3), ""), ""), "");
}

/* i32 bit `slot` of the phase bits in alloca v, XOR x; flips the bit in v. */
static LLVMValueRef take_parity(cg *g, LLVMValueRef v, LLVMValueRef slot, int x) {
  LLVMValueRef ph = LLVMBuildLoad2(g->B, g->i32, v, "");
  LLVMValueRef par = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, ph, slot, ""), cg_i32(g, 1), "");
  LLVMBuildStore(g->B, LLVMBuildXor(g->B, ph, LLVMBuildShl(g->B, cg_i32(g, 1), slot, ""), ""), v);
  return x ? LLVMBuildXor(g->B, par, cg_i32(g, 1), "") : par;
}

/* This thread arrives on mbarrier mb when `c` (i1). */
static void arrive_if(cg *g, LLVMValueRef mb, LLVMValueRef c) {
  LLVMValueRef args[2] = {mb, LLVMBuildZExt(g->B, c, g->i32, "")};
  cg_asm_void(g, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p mbarrier.arrive.shared::cta.b64 _, [$0]; }", "r,r,~{memory}",
              args, 2);
}

/* A tensor failing the map test: the producer's 128 threads copy the ring's tiles of k-step
 * `ivs` into `slot` element by element, publish them to the async proxy (wgmma reads them),
 * meet at bar.sync 2, and thread 0 arrives on the slot's full mbarrier. */
static void copy_slot_slow(cg *g, cg_ring *R, LLVMValueRef ivs, LLVMValueRef slot, LLVMValueRef ptid) {
  cg_plan *p = g->plan;
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == R->for_op) cg_copy_slow(g, &p->streams[i], ivs, slot, ptid, 128);
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  cg_asm_void(g, "bar.sync 2, 128;", "~{memory}", NULL, 0);
  arrive_if(g, cg_mbar_addr(g, R, slot), LLVMBuildICmp(g->B, LLVMIntEQ, ptid, cg_i32(g, 0), ""));
  if (R->kv_split) /* (K and V apart: V's full mbarrier too; the producer waited for both halves) */
    arrive_if(g, mbar_at(g, R->vfull_off, slot),
              LLVMBuildICmp(g->B, LLVMIntEQ, ptid, cg_i32(g, 0), ""));
}

/* Lane 0 of every consumer warp arrives on slot's empty mbarrier when `on`
 * (i1; NULL = always); in a cluster lane 1 also on the other CTA's
 * (emit_cluster.c: both CTAs' copies fill the slot). */
static void release_at(cg *g, cg_ring *R, int off, LLVMValueRef slot, LLVMValueRef on) {
  LLVMValueRef c = LLVMBuildICmp(g->B, LLVMIntEQ, g->lane, cg_i32(g, 0), "");
  if (on) {
    c = LLVMBuildAnd(g->B, c, on, "");
    slot = LLVMBuildSelect(g->B, on, slot, cg_i32(g, 0), "");
  }
  LLVMValueRef mb = mbar_at(g, off, slot);
  arrive_if(g, mb, c);
  if (!g->plan->cluster) return;
  LLVMValueRef c1 = LLVMBuildICmp(g->B, LLVMIntEQ, g->lane, cg_i32(g, 1), "");
  cg_cluster_arrive_peer(g, mb, on ? LLVMBuildAnd(g->B, c1, on, "") : c1);
}

static void release(cg *g, cg_ring *R, LLVMValueRef slot, LLVMValueRef on) { release_at(g, R, R->empty_off, slot, on); }

/* K and V apart (R->kv_split): the value half of slot's stage is free (the late value dot's wait),
 * or, kv_split off, the whole stage; cg_ws_release_k: the key half (the score dot's wait). */
void cg_ws_release_v(cg *g, cg_ring *R, LLVMValueRef slot, LLVMValueRef on) {
  release_at(g, R, R->kv_split ? R->vempty_off : R->empty_off, slot, on);
}

void cg_ws_release_k(cg *g, cg_ring *R, LLVMValueRef slot) {
  if (R->kv_split) release_at(g, R, R->empty_off, slot, NULL);
}

/* K and V apart: every consumer thread waits for slot's V boxes (its full mbarrier at the parity of
 * bit `slot` of vphasev), flipping the bit when `flip` (i1): iteration 0's value dot of P = 0 reads
 * V_0 without taking its phase, which iteration 1's value dot of P_0 then takes. */
void cg_ws_wait_v(cg *g, cg_ring *R, LLVMValueRef slot, LLVMValueRef flip) {
  if (!R->kv_split) return;
  LLVMValueRef ph = LLVMBuildLoad2(g->B, g->i32, R->vphasev, "");
  LLVMValueRef par = LLVMBuildAnd(g->B, LLVMBuildLShr(g->B, ph, slot, ""), cg_i32(g, 1), "");
  LLVMValueRef mb = mbar_at(g, R->vfull_off, slot);
  cg_mbar_wait(g, mb, par);
  LLVMValueRef bit = LLVMBuildShl(g->B, LLVMBuildZExt(g->B, flip, g->i32, ""), slot, "");
  LLVMBuildStore(g->B, LLVMBuildXor(g->B, ph, bit, ""), R->vphasev);
}

static void pin_scalars(cg *g, cg_ring *R);
static void release_last(cg *g, cg_ring *R);
static void turn_sync(cg *g, cg_ring *R);

/* i1: this warpgroup's named-barrier operand ("bar.sync|arrive $0, 256" with id) when `on`. */
static void pp_bar(cg *g, const char *op, LLVMValueRef id, LLVMValueRef on) {
  char txt[96];
  snprintf(txt, sizeof txt, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p %s $0, 256; }", op);
  LLVMValueRef args[2] = {id, LLVMBuildZExt(g->B, on, g->i32, "")};
  cg_asm_void(g, txt, "r,r,~{memory}", args, 2);
}

/* The ring's loop bounds (lo, hi, step as i64) at this point. */
void cg_ws_loop_bounds(cg *g, cg_ring *R, LLVMValueRef b[3]) {
  tl_op *lo = tl_op_at(g->f, R->for_op);
  for (int i = 0; i < 3; i++) b[i] = cg_to_i64(g, cg_get(g, lo->opnd[i])->r[0]);
}

/* i1: the ring's loop ran (lo < hi, step > 0) at this point. */
LLVMValueRef cg_ws_loop_ran(cg *g, cg_ring *R) {
  LLVMValueRef b[3];
  cg_ws_loop_bounds(g, R, b);
  LLVMValueRef lo64 = b[0], hi64 = b[1], step64 = b[2];
  return LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, lo64, hi64, ""),
                      LLVMBuildICmp(g->B, LLVMIntSGT, step64, cg_i64(g, 0), ""), "");
}

LLVMValueRef cg_ws_last_stage(cg *g, cg_ring *R) {
  LLVMValueRef next = LLVMBuildLoad2(g->B, g->i32, R->rdv, "");
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, next, cg_i32(g, 0), ""), cg_i32(g, R->stages - 1),
                         LLVMBuildSub(g->B, next, cg_i32(g, 1), ""), "");
}

static LLVMValueRef trip_count(cg *g, cg_ring *R) {
  LLVMValueRef b[3];
  cg_ws_loop_bounds(g, R, b);
  LLVMValueRef lo64 = b[0], hi64 = b[1], step64 = b[2];
  LLVMValueRef ran = cg_ws_loop_ran(g, R);
  LLVMValueRef pos = LLVMBuildICmp(g->B, LLVMIntSGT, step64, cg_i64(g, 0), "");
  LLVMValueRef div = LLVMBuildSelect(g->B, pos, step64, cg_i64(g, 1), ""); /* (no division by 0) */
  LLVMValueRef n = LLVMBuildSDiv(g->B, LLVMBuildSub(g->B, LLVMBuildAdd(g->B, hi64, step64, ""),
                                                    LLVMBuildAdd(g->B, lo64, cg_i64(g, 1), ""), ""), div, "");
  return LLVMBuildSelect(g->B, ran, n, cg_i64(g, 0), "");
}

/* `for (i = 0; i < n; i++)` over an i64 count: begin leaves the builder in
 * the body (blocks NAME.head, .body, .done), end closes the loop and leaves
 * it in .done. */
typedef struct counted_loop {
  LLVMValueRef iv, i;
  LLVMBasicBlockRef head, done;
} counted_loop;

static counted_loop counted_loop_begin(cg *g, LLVMValueRef n, const char *name) {
  char nm[64];
  counted_loop L;
  L.iv = LLVMBuildAlloca(g->PB, g->i64, name);
  LLVMBuildStore(g->B, cg_i64(g, 0), L.iv);
  snprintf(nm, sizeof nm, "%s.head", name);
  L.head = LLVMAppendBasicBlockInContext(g->C, g->fn, nm);
  snprintf(nm, sizeof nm, "%s.body", name);
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, nm);
  snprintf(nm, sizeof nm, "%s.done", name);
  L.done = LLVMAppendBasicBlockInContext(g->C, g->fn, nm);
  LLVMBuildBr(g->B, L.head);
  LLVMPositionBuilderAtEnd(g->B, L.head);
  L.i = LLVMBuildLoad2(g->B, g->i64, L.iv, "");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, L.i, n, ""), body, L.done);
  LLVMPositionBuilderAtEnd(g->B, body);
  return L;
}

static void counted_loop_end(cg *g, counted_loop *L) {
  LLVMBuildStore(g->B, LLVMBuildAdd(g->B, L->i, cg_i64(g, 1), ""), L->iv);
  LLVMBuildBr(g->B, L->head);
  LLVMPositionBuilderAtEnd(g->B, L->done);
}

/* Ping-pong, at the preheader of every tile but the CTA's first: wait until
 * the other warpgroup's main loop (of the tile before in the CTA's order)
 * has ended, then step over its k-steps' slots: the read slot advances and
 * each slot passed flips its phase bit, as if this warpgroup had waited. */
static void pp_take_turn(cg *g, cg_ring *R) {
  LLVMValueRef first = LLVMBuildLoad2(g->B, g->i32, R->ppfirst, "");
  LLVMBuildStore(g->B, cg_i32(g, 0), R->ppfirst);
  LLVMValueRef turn = LLVMBuildICmp(g->B, LLVMIntEQ, first, cg_i32(g, 0), "");
  pp_bar(g, "bar.sync", LLVMBuildAdd(g->B, g->pp_wg, cg_i32(g, 5), ""), turn);
  counted_loop L = counted_loop_begin(g, LLVMBuildSelect(g->B, turn, trip_count(g, R), cg_i64(g, 0), ""), "pp.skip");
  LLVMValueRef rd = LLVMBuildLoad2(g->B, g->i32, R->rdv, "");
  LLVMValueRef ph = LLVMBuildLoad2(g->B, g->i32, R->phasev, "");
  LLVMBuildStore(g->B, LLVMBuildXor(g->B, ph, LLVMBuildShl(g->B, cg_i32(g, 1), rd, ""), ""), R->phasev);
  LLVMBuildStore(g->B, cg_slot_next(g, rd, R->stages), R->rdv);
  counted_loop_end(g, &L);
}

void cg_ws_preheader(cg *g, cg_ring *R) {
  LLVMBuildStore(g->B, cg_i32(g, -1), R->relv);
  R->pre_done = true;
  if (g->pp_wg) pp_take_turn(g, R);
  pin_scalars(g, R);
}

void cg_ws_ring_wait(cg *g, cg_ring *R) {
  /* turns with the late value dot: the turn begins here, in front of the wait's spin loop (a
   * branch ptxas does not move the bar.sync across, as FlashAttention-3's sync after its K wait) */
  if (g->plan->turns_late) turn_sync(g, R);
  LLVMValueRef rd = LLVMBuildLoad2(g->B, g->i32, R->rdv, "");
  cg_tma_wait(g, R, rd);
  R->rd_slot = rd;
  LLVMBuildStore(g->B, cg_slot_next(g, rd, R->stages), R->rdv);
}

void cg_ws_after_dot(cg *g, cg_ring *R, bool inflight) {
  R->ws_pending = inflight;
  if (!inflight) {
    release(g, R, R->rd_slot, NULL);
    return;
  }
  LLVMValueRef prev = LLVMBuildLoad2(g->B, g->i32, R->relv, "");
  release(g, R, prev, LLVMBuildICmp(g->B, LLVMIntSGE, prev, cg_i32(g, 0), ""));
  LLVMBuildStore(g->B, R->rd_slot, R->relv);
}

/* Turns (attention, p->ws_turns): warpgroup w's turn is from bar.sync
 * 5 + w to bar.arrive 6 - w (both of 256 threads: its own 128 and the
 * other's).  Turn 0 is the first step's score dot, turn j the value dot of
 * step j-1 and the score dot of step j, the last the last value dot; the
 * loads of each step wait inside a turn.  Warpgroup 1 arrives once at the
 * start (warpgroup 0 goes first) and not after its last turn, so every
 * bar.sync has one bar.arrive and nothing is left pending.  TILEC_ATTN_TURNS=0
 * (p->turns_free) emits none of these barriers: each warpgroup still waits on
 * the ring's full mbarriers itself and every empty mbarrier counts both
 * warpgroups' arrivals, so neither can run a phase ahead of a slot's refill. */
static void turn_sync(cg *g, cg_ring *R) {
  if (g->plan->turns_free) return; /* (TILEC_ATTN_TURNS=0: the same points, no barrier) */
  pp_bar(g, "bar.sync", LLVMBuildAdd(g->B, R->turn_wg, cg_i32(g, 5), ""), LLVMConstInt(g->i1, 1, 0));
}

/* The value dot's turn_sync, after the softmax.  ptxas (13.0) schedules a
 * bar.sync like any instruction without register operands: in one block with
 * the softmax it hoists it to the block's top, so a warpgroup's softmax waited
 * for the other's score dot, which came after the other's softmax (the turns
 * passed through the softmaxes, one warpgroup computing at a time:
 * docs/pipelines.md "Warp-specialized attention").  So the bar.sync gets a
 * block of its own behind a branch neither LLVM nor ptxas folds (tid.x < 1024,
 * the tid read through an asm), which ptxas does not schedule across. */
static void turn_sync_after_softmax(cg *g, cg_ring *R) {
  LLVMValueRef tid = cg_asm(g, g->i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
  LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(g->C, g->fn, "turn.sync");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "turn.go");
  cg_cond_br_likely(g, LLVMBuildICmp(g->B, LLVMIntULT, tid, cg_i32(g, 1024), ""), sb, jb);
  LLVMPositionBuilderAtEnd(g->B, sb);
  turn_sync(g, R);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}

void cg_ws_turn_before(cg *g, int32_t D, int32_t L) {
  cg_plan *p = g->plan;
  if (!p || g->plan_f != g->f || !p->ws_turns || p->turns_late) return;
  cg_ring *R = &p->rings[0];
  if (D == p->turn_defer_dot) {
    turn_sync_after_softmax(g, R);
  } else if (D == p->turn_wait_dot && !R->turn_started) {
    /* the first turn, in the preheader, after what the dot staged there
     * (q: its barriers are both warpgroups') */
    R->turn_started = true;
    LLVMValueRef reg, phi = cg_iv_phi(g, L, &reg);
    LLVMBasicBlockRef here = LLVMGetInsertBlock(g->B);
    LLVMPositionBuilderBefore(g->B, LLVMGetBasicBlockTerminator(LLVMGetIncomingBlock(phi, 0)));
    turn_sync(g, R);
    LLVMPositionBuilderAtEnd(g->B, here);
  }
}

void cg_ws_turn_after_commit(cg *g, tl_op *o) {
  cg_plan *p = g->plan;
  if (!p || g->plan_f != g->f || !p->ws_turns || p->turns_late || o != tl_op_at(g->f, p->turn_wait_dot)) return;
  cg_ws_turn_arrive(g, NULL);
}

/* The CTA's register pool: every thread of the launch gets the count ptxas gives the kernel, the
 * register file's 65536 / threads in multiples of 8 (168 at 384 threads), and setmaxnreg only moves
 * registers within that pool (PTX ISA: "A pool of available registers is maintained per-CTA";
 * setmaxnreg.inc blocks until the pool has them).  So a split must keep
 * 128 P + (threads - 128) C <= threads x that count: one above it (128 x 48 + 256 x 232 = 65536 >
 * 64512) leaves the consumers' setmaxnreg.inc waiting forever, a hung kernel.  The consumers' count
 * is lowered to fit (P is the producer's need: its spills are what a split was chosen against). */
static void fit_pool(cg *g, int *producer, int *consumer) {
  int threads = g->f->warps * 32 + cg_ws_extra_threads(g), cons = threads - 128;
  int launch = 65536 / threads / 8 * 8;
  if (launch > 256) launch = 256;
  if (128 * *producer + cons * *consumer > threads * launch) *consumer = (threads * launch - 128 * *producer) / cons / 8 * 8;
}

void cg_ws_regs(cg *g, int *producer, int *consumer) {
  *producer = WS_PRODUCER_REGS, *consumer = WS_CONSUMER_REGS;
  /* fa3 (turns with the late value dot: S, O, the carried P and the softmax live at once) in a TMA
   * form (the producer's one thread only computes box coordinates; the inline element copy needs
   * more: 188-208 B of spills at 24): FlashAttention-3's split, 24 and 240 (at 40 / 232 ptxas
   * spilled 36 B of the causal kernel's scalars around q's load) */
  if (g->plan->turns_late && cg_tma_mode(g) == TL_TMA_FORM) *producer = 24, *consumer = 240;
  if (g->plan->rope) cg_rope_regs(g, producer, consumer); /* (the producer rotates k: emit_rope.c) */
  fit_pool(g, producer, consumer);
}

void cg_ws_turn_sync(cg *g) { turn_sync(g, &g->plan->rings[0]); }

void cg_ws_turn_arrive(cg *g, LLVMValueRef on) {
  cg_ring *R = &g->plan->rings[0];
  if (g->plan->turns_free) return;
  pp_bar(g, "bar.arrive", LLVMBuildSub(g->B, cg_i32(g, 6), R->turn_wg, ""), on ? on : LLVMConstInt(g->i1, 1, 0));
}

LLVMValueRef cg_ws_turn_first(cg *g) {
  return LLVMBuildICmp(g->B, LLVMIntEQ, g->plan->rings[0].turn_wg, cg_i32(g, 0), "");
}

void cg_ws_release(cg *g, cg_ring *R, LLVMValueRef slot, LLVMValueRef on) { release(g, R, slot, on); }

/* Mark in `used` the values that ops of region r (and their regions) use. */
static void mark_uses(tl_func *f, tl_region *r, uint8_t *used) {
  for (int i = 0; i < r->ops.len; i++) {
    tl_op *o = tl_op_at(f, r->ops.data[i]);
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nopnd; k++) used[o->opnd[k]] = 1;
    for (int k = 0; k < o->nregions; k++) mark_uses(f, &o->regions[k], used);
  }
}

/* At the loop's preheader: the scalars computed before the loop and used
 * after it (the epilogue's m0, n0: in the consumers nothing in the loop
 * uses them) are rebound through an asm here, so LLVM keeps their
 * arithmetic in front of the loop instead of sinking it into the loop's
 * exit block in front of the drain (emit_ring.c cg_loop_exit): ptxas (13.0)
 * then serializes every wgmma (C7514).  The release of the last slot waits
 * until the end of the tile (cg_ws_tile_end): an arrive right after the
 * drain also makes ptxas serialize them. */
/* x (i32 / i64) through an asm that LLVM cannot move; others unchanged. */
static LLVMValueRef pin(cg *g, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  if (t != g->i32 && t != g->i64) return x;
  return cg_asm(g, t, t == g->i32 ? "mov.b32 $0, $1;" : "mov.b64 $0, $1;", t == g->i32 ? "=r,r" : "=l,l", &x, 1, true);
}

static void pin_scalars(cg *g, cg_ring *R) {
  tl_func *f = g->f;
  uint8_t *used = tl_alloc(&g->ctx->arena, (size_t)f->values.len + 1);
  memset(used, 0, (size_t)f->values.len + 1);
  int at = 0;
  while (at < f->body.ops.len && f->body.ops.data[at] != R->for_op) at++;
  tl_region rest = f->body;
  rest.ops.data += at + 1;
  rest.ops.len -= at + 1;
  if (rest.ops.len > 0) mark_uses(f, &rest, used);
  for (int i = 0; i < at; i++) {
    tl_op *o = tl_op_at(f, f->body.ops.data[i]);
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nres; k++) {
      int32_t v = o->res[k];
      if (!used[v] || tl_val(f, v)->type.kind == TL_KIND_TILE || !g->vals[v].r) continue;
      LLVMValueRef *r = tl_alloc(&g->ctx->arena, sizeof *r);
      r[0] = pin(g, g->vals[v].r[0]);
      g->vals[v].r = r;
    }
  }
  /* the parameters the epilogue reads (NVPTX sinks their ld.param too);
   * they are the consumers' from here on (the producer was emitted first) */
  for (int i = 0; i < f->params.len; i++) {
    tl_param *pa = &f->params.data[i];
    if (!used[pa->value]) continue;
    if (!pa->is_tensor) {
      LLVMValueRef *r = tl_alloc(&g->ctx->arena, sizeof *r);
      r[0] = pin(g, g->vals[pa->value].r[0]);
      g->vals[pa->value].r = r;
      continue;
    }
    cg_tensor *t = &g->tensors[i];
    t->ptr = LLVMBuildIntToPtr(g->B, pin(g, LLVMBuildPtrToInt(g->B, t->ptr, g->i64, "")), g->gptr, "");
    for (int d = 0; d < pa->rank; d++) {
      t->size[d] = pin(g, t->size[d]);
      t->stride[d] = pin(g, t->stride[d]);
    }
  }
}

/* After the drain: a ping-pong warpgroup's main loop is over; the other one
 * may start its own when it has the next tile of the CTA's list. */
void cg_ws_loop_exit(cg *g, cg_ring *R) {
  if (g->plan->turns_late) return; /* (the last turn is the last late dot's: emit_overlap.c) */
  if (g->plan->ws_turns) { /* warpgroup 1's last turn (its O += P V of the last step) */
    pp_bar(g, "bar.arrive", cg_i32(g, 6), LLVMBuildICmp(g->B, LLVMIntEQ, R->turn_wg, cg_i32(g, 0), ""));
    return;
  }
  if (!g->pp_wg) return;
  /* the tile's last slot now, not at the tile's end: the producer refills it
   * for the other warpgroup's main loop during this one's epilogue */
  release_last(g, R);
  LLVMValueRef t = LLVMBuildLoad2(g->B, g->i32, R->pptv, "");
  LLVMValueRef next = LLVMBuildAdd(g->B, t, cg_sreg(g, "nctaid", 0), "");
  pp_bar(g, "bar.arrive", LLVMBuildSub(g->B, cg_i32(g, 6), g->pp_wg, ""),
         LLVMBuildICmp(g->B, LLVMIntULT, next, R->ppnt, ""));
}

/* The slot released here is the one before the next read slot, and the
 * test is the loop's bounds: reading the loop-carried "pending" slot after
 * the loop makes ptxas (13.0) serialize every wgmma (C7514) too. */
void cg_ws_tile_end(cg *g, cg_ring *R) {
  if (g->pp_wg) return; /* (ping-pong: at the loop's exit, cg_ws_loop_exit) */
  release_last(g, R);
}

static void release_last(cg *g, cg_ring *R) {
  if (!R->ws_pending) return; /* (each slot was released after its own wait) */
  bool slot = cg_o_slot_on(g); /* (O through the last stage: its store's thread released it, emit_o_slot.c) */
  if (slot && !g->plan->o_slot_max) {
    LLVMBuildStore(g->B, cg_i32(g, -1), R->relv);
    return;
  }
  LLVMValueRef ran = cg_ws_loop_ran(g, R), last = cg_ws_last_stage(g, R);
  if (slot) ran = LLVMBuildAnd(g->B, ran, LLVMBuildNot(g->B, cg_o_slot_taken(g, ran), ""), ""); /* (past the bound) */
  cg_ws_release_v(g, R, last, ran); /* (K and V apart: the last K was released after its score dot) */
  LLVMBuildStore(g->B, cg_i32(g, -1), R->relv);
}

static LLVMValueRef prologue_i32(cg *g, const char *name) {
  LLVMValueRef v = LLVMBuildAlloca(g->PB, g->i32, name);
  LLVMBuildStore(g->PB, cg_i32(g, 0), v);
  return v;
}

/* K and V apart (R->kv_split), the producer's thread, the stage's key half free already (its empty
 * mbarrier waited for): K's boxes on the full mbarrier, then, once the consumers released the value
 * half (the late value dot two steps back), V's boxes on V's full mbarrier.  So K_{j+1} goes out
 * when S_{j-1} is done, a step before the late O += P_{j-1} V_{j-1} frees the rest of the stage. */
static void issue_kv_apart(cg *g, cg_ring *R, LLVMValueRef ivs, LLVMValueRef slot) {
  cg_plan *p = g->plan;
  cg_stream *ks = &p->streams[R->kv_k];
  LLVMValueRef kmb = cg_mbar_addr(g, R, slot);
  cg_mbar_expect_tx(g, kmb, cg_tma_stream_bytes(ks));
  cg_tma_issue_stream(g, ks, ivs, slot, kmb);
  cg_mbar_wait(g, mbar_at(g, R->vempty_off, slot), take_parity(g, R->vprodph, slot, 1));
  LLVMValueRef vmb = mbar_at(g, R->vfull_off, slot);
  int vbytes = 0;
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == R->for_op && i != R->kv_k) vbytes += cg_tma_stream_bytes(&p->streams[i]);
  cg_mbar_expect_tx(g, vmb, vbytes);
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == R->for_op && i != R->kv_k) cg_tma_issue_stream(g, &p->streams[i], ivs, slot, vmb);
}

/* The producer's k-loop of one tile: slots `wr`, empty phase bits `ph`. */
static void producer_loop(cg *g, cg_ring *R, LLVMValueRef wr, LLVMValueRef ph, LLVMValueRef ptid) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  tl_op *lo = tl_op_at(f, R->for_op);
  LLVMValueRef lo64 = cg_to_i64(g, cg_get(g, lo->opnd[0])->r[0]);
  LLVMValueRef hi64 = cg_to_i64(g, cg_get(g, lo->opnd[1])->r[0]);
  LLVMValueRef step64 = cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]);
  LLVMTypeRef ivty = cg_iv_type(g, R->for_op);
  LLVMValueRef ivv = LLVMBuildAlloca(g->PB, g->i64, "prod.iv");
  LLVMBuildStore(g->B, lo64, ivv);
  LLVMValueRef qpend = cg_q_tma_pending(g); /* (fa3's q by TMA: issued after the first step's boxes) */
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.body");
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.tma");
  LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.copy");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.next");
  LLVMBasicBlockRef xb = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.exit");
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, head);
  LLVMValueRef iv = LLVMBuildLoad2(g->B, g->i64, ivv, "");
  LLVMValueRef go = LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntSLT, iv, hi64, ""),
                                 LLVMBuildICmp(g->B, LLVMIntSGT, step64, cg_i64(g, 0), ""), "");
  LLVMBuildCondBr(g->B, go, body, xb);
  LLVMPositionBuilderAtEnd(g->B, body);
  LLVMValueRef slot = LLVMBuildLoad2(g->B, g->i32, wr, "");
  if (p->cluster && cg_cluster_scope()) cg_mbar_wait_cluster(g, empty_addr(g, R, slot), take_parity(g, ph, slot, 1));
  else cg_mbar_wait(g, empty_addr(g, R, slot), take_parity(g, ph, slot, 1));
  LLVMValueRef ivs = ivty == g->i64 ? iv : LLVMBuildTrunc(g->B, iv, ivty, "");
  cg_cond_br_likely(g, R->tma_ok, tb, sb);
  LLVMPositionBuilderAtEnd(g->B, tb);
  if (R->kv_split) issue_kv_apart(g, R, ivs, slot);
  else cg_tma_issue_boxes(g, R, ivs, slot);
  LLVMBuildBr(g->B, jb);
  /* any view: the 128 threads copy element by element, then publish the
   * slot to the async proxy (wgmma) and one of them arrives */
  LLVMPositionBuilderAtEnd(g->B, sb);
  if (R->kv_split) cg_mbar_wait(g, mbar_at(g, R->vempty_off, slot), take_parity(g, R->vprodph, slot, 1));
  copy_slot_slow(g, R, ivs, slot, ptid);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
  cg_q_tma_issue_pending(g, qpend);
  LLVMBuildStore(g->B, cg_slot_next(g, slot, R->stages), wr);
  LLVMBuildStore(g->B, LLVMBuildAdd(g->B, iv, step64, ""), ivv);
  LLVMBuildBr(g->B, head);
  LLVMPositionBuilderAtEnd(g->B, xb);
  cg_q_tma_issue_pending(g, qpend); /* (a tile whose loop does not run: q all the same) */
}

/* (s + d) mod S for 0 <= s, d < S. */
static LLVMValueRef slot_add(cg *g, LLVMValueRef s, int d, int S) {
  LLVMValueRef x = cg_add_c(g, s, d);
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntSGE, x, cg_i32(g, S), ""), cg_add_c(g, x, -S), x, "");
}

/* Open `if (c)`: returns the join block, the builder in the then-block. */
static LLVMBasicBlockRef if_begin(cg *g, LLVMValueRef c, const char *name) {
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->C, g->fn, name);
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "endif");
  LLVMBuildCondBr(g->B, c, tb, jb);
  LLVMPositionBuilderAtEnd(g->B, tb);
  return jb;
}

static void if_end(cg *g, LLVMBasicBlockRef jb) {
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}

/* The loop's iv at k-step j (i64: lo + j * step), as the iv's register type. */
static LLVMValueRef iv_of_step(cg *g, cg_ring *R, LLVMValueRef j) {
  tl_op *lo = tl_op_at(g->f, R->for_op);
  LLVMValueRef lo64 = cg_to_i64(g, cg_get(g, lo->opnd[0])->r[0]);
  LLVMValueRef step64 = cg_to_i64(g, cg_get(g, lo->opnd[2])->r[0]);
  LLVMTypeRef ivty = cg_iv_type(g, R->for_op);
  LLVMValueRef iv = LLVMBuildAdd(g->B, lo64, LLVMBuildMul(g->B, step64, j, ""), "");
  return ivty == g->i64 ? iv : LLVMBuildTrunc(g->B, iv, ivty, "");
}

/* ws_tr: the "loaded" mbarrier of staging slot st (i32). */
static LLVMValueRef loaded_mbar(cg *g, cg_stream *tb, LLVMValueRef st) {
  return cg_add_c(g, LLVMBuildAdd(g->B, cg_smem_base32(g), LLVMBuildShl(g->B, st, cg_i32(g, 3), ""), ""), tb->trm_off);
}

/* ws_tr: B's boxes of k-step j (i64) into staging slot st, on its loaded mbarrier. */
static void issue_staging(cg *g, cg_ring *R, cg_stream *tb, LLVMValueRef j, LLVMValueRef st) {
  LLVMValueRef iv = iv_of_step(g, R, j);
  LLVMValueRef mb = loaded_mbar(g, tb, st);
  cg_mbar_expect_tx(g, mb, cg_tma_stream_bytes(tb));
  cg_tma_issue_stream(g, tb, iv, st, mb);
}

/* The producer's k-loop of one tile when it transposes an 8-bit [K][N] B
 * (ws_tr): all 128 threads.  Step j: thread 0 issues B of step j+S-1 into
 * its staging slot (free: step j-1, the last to use it, was transposed);
 * every thread waits for slot j's empty mbarrier; thread 0 issues A into
 * the slot (arrive.expect_tx on the full mbarrier, the first of its two
 * arrivals); every thread waits for B's staging slot (loaded mbarrier),
 * the 4 warps transpose it into the slot's K-major buffer, fence.proxy.async,
 * bar.sync 2, and thread 0 makes the full mbarrier's second arrival.  When a
 * tensor fails the map test the 128 threads copy both tiles element by element
 * instead (then bar.sync 2 and the first arrival).  `lph`: the loaded
 * mbarriers' phase bits. */
static void producer_loop_tr(cg *g, cg_ring *R, cg_stream *tb, LLVMValueRef wr, LLVMValueRef ph, LLVMValueRef lph,
                             LLVMValueRef ptid) {
  cg_plan *p = g->plan;
  int S = R->stages, D = S - 1;
  LLVMValueRef n = trip_count(g, R);
  LLVMValueRef is0 = LLVMBuildICmp(g->B, LLVMIntEQ, ptid, cg_i32(g, 0), "");
  LLVMValueRef warp = LLVMBuildLShr(g->B, ptid, cg_i32(g, 5), "");
  int abytes = 0;
  for (int i = 0; i < p->nstream; i++)
    if (p->streams[i].for_op == R->for_op && &p->streams[i] != tb) abytes += cg_tma_stream_bytes(&p->streams[i]);
  /* the tile's first S-1 staging loads */
  LLVMValueRef wr0 = LLVMBuildLoad2(g->B, g->i32, wr, "");
  LLVMBasicBlockRef pj = if_begin(g, LLVMBuildAnd(g->B, R->tma_ok, is0, ""), "tr.pro");
  for (int d = 0; d < D; d++) {
    LLVMBasicBlockRef dj = if_begin(g, LLVMBuildICmp(g->B, LLVMIntSLT, cg_i64(g, d), n, ""), "tr.pro.issue");
    issue_staging(g, R, tb, cg_i64(g, d), slot_add(g, wr0, d, S));
    if_end(g, dj);
  }
  if_end(g, pj);
  counted_loop L = counted_loop_begin(g, n, "prod.tr");
  LLVMValueRef slot = LLVMBuildLoad2(g->B, g->i32, wr, "");
  LLVMValueRef ivs = iv_of_step(g, R, L.i);
  LLVMValueRef full = cg_mbar_addr(g, R, slot);
  LLVMBasicBlockRef tbb = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.tr.tma");
  LLVMBasicBlockRef cbb = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.tr.copy");
  LLVMBasicBlockRef jbb = LLVMAppendBasicBlockInContext(g->C, g->fn, "prod.tr.transpose");
  cg_cond_br_likely(g, R->tma_ok, tbb, cbb);
  LLVMPositionBuilderAtEnd(g->B, tbb);
  {
    LLVMValueRef ahead = LLVMBuildAdd(g->B, L.i, cg_i64(g, D), "");
    LLVMBasicBlockRef ij = if_begin(g, LLVMBuildAnd(g->B, is0, LLVMBuildICmp(g->B, LLVMIntSLT, ahead, n, ""), ""), "tr.ahead");
    issue_staging(g, R, tb, ahead, slot_add(g, slot, D, S));
    if_end(g, ij);
    cg_mbar_wait(g, empty_addr(g, R, slot), take_parity(g, ph, slot, 1));
    LLVMBasicBlockRef aj = if_begin(g, is0, "tr.a");
    cg_mbar_expect_tx(g, full, abytes);
    for (int i = 0; i < p->nstream; i++)
      if (p->streams[i].for_op == R->for_op && &p->streams[i] != tb) cg_tma_issue_stream(g, &p->streams[i], ivs, slot, full);
    if_end(g, aj);
    cg_mbar_wait(g, loaded_mbar(g, tb, slot), take_parity(g, lph, slot, 0));
    LLVMBuildBr(g->B, jbb);
  }
  LLVMPositionBuilderAtEnd(g->B, cbb);
  {
    cg_mbar_wait(g, empty_addr(g, R, slot), take_parity(g, ph, slot, 1));
    copy_slot_slow(g, R, ivs, slot, ptid);
    LLVMBuildBr(g->B, jbb);
  }
  LLVMPositionBuilderAtEnd(g->B, jbb);
  LLVMValueRef src = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_add_c(g, cg_mul_c(g, slot, tb->stage_bytes), tb->offset), "");
  LLVMValueRef dst = LLVMBuildAdd(g->B, cg_smem_base32(g), cg_add_c(g, cg_mul_c(g, slot, tb->rows * tb->cols), tb->tr_off), "");
  /* TILEC_WS_TRANSPOSE=plain: the consumers' lane mapping (bank conflicts), for measuring */
  const char *mode = tl_code_env("TILEC_WS_TRANSPOSE");
  cg_transpose_kn8_into(g, tb, src, dst, warp, 4, !(mode && !strcmp(mode, "plain")));
  /* st.shared writes through the generic proxy, wgmma reads through the async one */
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  cg_asm_void(g, "bar.sync 2, 128;", "~{memory}", NULL, 0);
  arrive_if(g, full, is0);
  LLVMBuildStore(g->B, cg_slot_next(g, slot, S), wr);
  counted_loop_end(g, &L);
}

/* Consumers, a cluster's tile past the grid (emit_cluster.c): the body's
 * scalars before the loop (its bounds), then each k-step's slot waited for
 * and released at once, so the peer's copies into this CTA complete and its
 * producer may refill the slots; nothing else of the body runs.  (Emitted
 * before the body: the body's pinned values must not reach it.) */
static void phantom_tile(cg *g, cg_ring *R) {
  tl_func *f = g->f;
  for (int i = 0; i < f->body.ops.len && f->body.ops.data[i] != R->for_op; i++)
    if (!(tl_op_at(f, f->body.ops.data[i])->flags & TL_OPF_DEAD)) cg_emit_op(g, f->body.ops.data[i]);
  counted_loop L = counted_loop_begin(g, trip_count(g, R), "phantom");
  cg_ws_ring_wait(g, R);
  release(g, R, R->rd_slot, NULL);
  counted_loop_end(g, &L);
}

void cg_ws_emit_program(cg *g, cg_tiles *T) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  cg_ring *R = &p->rings[0];
  bool pp = p->ws == TL_WS_PINGPONG;
  int ncons = f->warps * 32 * (pp ? 2 : 1);
  /* before the split, every thread: maps, tma_ok, both mbarrier sets, barrier 0 */
  cg_tma_kernel_prologue(g, R);
  R->rdv = prologue_i32(g, "cons.slot");
  R->relv = prologue_i32(g, "cons.release");
  LLVMValueRef wr = prologue_i32(g, "prod.slot"), ph = prologue_i32(g, "prod.phase");
  if (R->kv_split) R->vprodph = prologue_i32(g, "prod.vphase"), R->vphasev = prologue_i32(g, "cons.vphase");
  LLVMValueRef tid = cg_sreg(g, "tid", 0);
  LLVMBasicBlockRef pb = LLVMAppendBasicBlockInContext(g->C, g->fn, "producer");
  LLVMBasicBlockRef rb = LLVMAppendBasicBlockInContext(g->C, g->fn, "producer.run");
  LLVMBasicBlockRef eb = LLVMAppendBasicBlockInContext(g->C, g->fn, "producer.idle");
  LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(g->C, g->fn, "consumer");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntUGE, tid, cg_i32(g, ncons), ""), pb, cb);

  /* producer */
  LLVMPositionBuilderAtEnd(g->B, pb);
  /* registers move between the warpgroups only when the launch's share
   * (65536 / threads) is below what the consumers want; ptxas also needs
   * that share to know the count at entry (else C7508: setmaxnreg ignored) */
  bool move_regs = 65536 / g->threads < WS_CONSUMER_REGS;
  /* attention with few accumulators (D64: S and O 32 f32 a thread) fits
   * the launch's share as it is, and ptxas ignores setmaxnreg there (C7508:
   * the count at entry is not fixed when the kernel needs less) */
  if (p->ws_attn) {
    int acc = 0;
    for (int i = 0; i < p->nwg; i++) {
      tl_op *o = tl_op_at(f, p->wg_dots[i]);
      if (o->parent != R->for_op) continue;
      const tl_type *t = &tl_val(f, o->res[0])->type;
      acc += (int)((int64_t)t->shape[0] * t->shape[1] / (32 * f->warps));
    }
    if (acc < 96) move_regs = false;
  }
  /* a producer that transposes (ws_tr) computes more than addresses:
   * TILEC_WS_PRODUCER_REGS=N (measuring) gives it N registers and the
   * consumers what is left of the CTA's pool (fit_pool) */
  cg_stream *trb = tr_stream(g, R);
  int preg, creg;
  cg_ws_regs(g, &preg, &creg);
  const char *pr = tl_code_env("TILEC_WS_PRODUCER_REGS");
  if (trb && pr && atoi(pr) >= 24 && atoi(pr) <= 256) {
    preg = atoi(pr) / 8 * 8;
    creg = WS_CONSUMER_REGS;
    fit_pool(g, &preg, &creg); /* (the rest of the CTA's pool, not of the SM's 65536) */
  }
  char txt[64];
  snprintf(txt, sizeof txt, "setmaxnreg.dec.sync.aligned.u32 %d;", preg);
  if (move_regs) cg_asm_void(g, txt, "~{memory}", NULL, 0);
  LLVMValueRef ptid = LLVMBuildSub(g->B, tid, cg_i32(g, ncons), "");
  LLVMValueRef run = LLVMBuildOr(g->B, LLVMBuildNot(g->B, R->tma_ok, ""), LLVMBuildICmp(g->B, LLVMIntEQ, ptid, cg_i32(g, 0), ""), "");
  bool all128 = trb || p->rope; /* (all 128 transpose, or rotate k; else one thread issues the boxes) */
  if (all128) run = LLVMConstInt(g->i1, 1, 0);
  LLVMValueRef lph = all128 ? prologue_i32(g, "prod.loaded.phase") : NULL;
  LLVMBuildCondBr(g->B, run, rb, eb);
  LLVMPositionBuilderAtEnd(g->B, eb);
  LLVMBuildRetVoid(g->B);
  LLVMPositionBuilderAtEnd(g->B, rb);
  if (p->sched_dyn) cg_attn_sched_begin(g, T, true); /* (TILEC_ATTN_SCHED=1: tiles from a counter) */
  else cg_tiles_begin(g, T);
  for (int i = 0; i < f->body.ops.len && f->body.ops.data[i] != p->ws_for; i++) {
    tl_op *o = tl_op_at(f, f->body.ops.data[i]);
    /* the scalars (ws_unfit: the loop's bounds and indices need no more) */
    if (!(o->flags & TL_OPF_DEAD) && o->nres == 1 && producer_computes(f, o->res[0], 0)) cg_emit_op(g, f->body.ops.data[i]);
  }
  if (!all128) cg_q_tma_prefetch_l2(g, R->tma_ok); /* (TILEC_ATTN_Q_PREFETCH=1: the tile's q into L2, one thread) */
  if (trb) cg_q_tma_issue(g); /* (fa3's q by TMA, emit_q_tma.c; producer_loop: after the first step's boxes) */
  if (trb) producer_loop_tr(g, R, trb, wr, ph, lph, ptid);
  else if (p->rope) cg_rope_producer_loop(g, R, wr, ph, lph, ptid); /* (emit_rope.c) */
  else producer_loop(g, R, wr, ph, ptid);
  if (p->sched_dyn) cg_attn_sched_end(g, T, true);
  else cg_tiles_end(g, T);
  /* tail: every slot released (no copy into this CTA's memory outlives it) */
  /* (in a cluster these are also the peer's last remote arrivals: this CTA outlives them, emit_cluster.c) */
  for (int st = 0; st < R->stages; st++) {
    LLVMValueRef mb = empty_addr(g, R, cg_i32(g, st)), par = take_parity(g, ph, cg_i32(g, st), 1);
    if (p->cluster && cg_cluster_scope()) cg_mbar_wait_cluster(g, mb, par);
    else cg_mbar_wait(g, mb, par);
    if (R->kv_split) cg_mbar_wait(g, mbar_at(g, R->vempty_off, cg_i32(g, st)), take_parity(g, R->vprodph, cg_i32(g, st), 1));
  }
  LLVMBuildRetVoid(g->B);

  /* consumers: the body, with the ring's consumer side (emit_ring.c hooks) */
  LLVMPositionBuilderAtEnd(g->B, cb);
  snprintf(txt, sizeof txt, "setmaxnreg.inc.sync.aligned.u32 %d;", creg);
  if (move_regs) cg_asm_void(g, txt, "~{memory}", NULL, 0);
  g->bar_threads = ncons;
  if (p->ws_turns) { /* warpgroup 1 lets warpgroup 0 take the first turn (persistent: of each tile) */
    R->turn_wg = LLVMBuildLShr(g->B, tid, cg_i32(g, 7), "turn.wg");
    R->turn_started = false;
    if (!p->persist && !p->turns_free) pp_bar(g, "bar.arrive", cg_i32(g, 5), LLVMBuildICmp(g->B, LLVMIntEQ, R->turn_wg, cg_i32(g, 1), ""));
  }
  cg_tiles Tc = *T;
  if (pp) { /* warpgroup w: every other tile from the w-th, its own named barrier 3 + w */
    g->pp_wg = LLVMBuildLShr(g->B, tid, cg_i32(g, 7), "pp.wg");
    g->bar_id = LLVMBuildAdd(g->B, g->pp_wg, cg_i32(g, 3), "");
    g->bar_threads = 128;
    R->ppfirst = prologue_i32(g, "pp.first");
    LLVMBuildStore(g->B, LLVMBuildZExt(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, g->pp_wg, cg_i32(g, 0), ""), g->i32, ""),
                   R->ppfirst);
    Tc.first_off = g->pp_wg;
    Tc.step_mul = 2;
  }
  if (p->sched_dyn) cg_attn_sched_begin(g, &Tc, false); /* (its head waits "q full" and reads the tile) */
  else cg_tiles_begin(g, &Tc);
  if (p->ws_turns && p->persist && !p->turns_free)
    pp_bar(g, "bar.arrive", cg_i32(g, 5), LLVMBuildICmp(g->B, LLVMIntEQ, R->turn_wg, cg_i32(g, 1), ""));
  R->pptv = Tc.tv;
  R->ppnt = Tc.ntiles;
  LLVMBasicBlockRef join = NULL;
  if (g->phantom) { /* a cluster's ragged pair: this CTA's tile is past the grid */
    LLVMBasicBlockRef ph_bb = LLVMAppendBasicBlockInContext(g->C, g->fn, "cluster.phantom");
    LLVMBasicBlockRef real = LLVMAppendBasicBlockInContext(g->C, g->fn, "cluster.tile");
    join = LLVMAppendBasicBlockInContext(g->C, g->fn, "cluster.join");
    LLVMBuildCondBr(g->B, g->phantom, ph_bb, real);
    LLVMPositionBuilderAtEnd(g->B, ph_bb);
    phantom_tile(g, R);
    LLVMBuildBr(g->B, join);
    LLVMPositionBuilderAtEnd(g->B, real);
  }
  if (p->q_tma && !p->sched_dyn) cg_q_tma_wait(g); /* (fa3's q by TMA, emit_q_tma.c: its slot is full) */
  cg_rope_preamble(g);              /* (TILEC_ROPE_PRODUCER=1: the preamble's scratch, emit_rope.c) */
  cg_emit_region(g, &f->body, NULL, NULL);
  cg_rope_preamble_end(g);
  cg_ws_tile_end(g, R);
  if (join) {
    LLVMBuildBr(g->B, join);
    LLVMPositionBuilderAtEnd(g->B, join);
  }
  if (p->sched_dyn) cg_attn_sched_end(g, &Tc, false);
  else cg_tiles_end(g, &Tc);
  cg_epi_kernel_end(g);
  g->bar_threads = 0;
  g->bar_id = g->pp_wg = NULL;
  LLVMBuildRetVoid(g->B);
}

LLVMValueRef cg_ws_empty_addr(cg *g, cg_ring *R, LLVMValueRef slot) { return empty_addr(g, R, slot); }
LLVMValueRef cg_ws_take_parity(cg *g, LLVMValueRef v, LLVMValueRef slot, int x) { return take_parity(g, v, slot, x); }
void cg_ws_arrive_if(cg *g, LLVMValueRef mb, LLVMValueRef c) { arrive_if(g, mb, c); }
LLVMValueRef cg_ws_trip_count(cg *g, cg_ring *R) { return trip_count(g, R); }
LLVMValueRef cg_ws_iv_of_step(cg *g, cg_ring *R, LLVMValueRef j) { return iv_of_step(g, R, j); }
