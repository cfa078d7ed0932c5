/* attn_sched.c: requires fa3's q by TMA (emit_q_tma.c: p->q_tma, not the producer-less form) on a
 * kernel that cg_ws_plan left one tile a CTA because its main loop's trip count depends on the tile
 * (causal: p->sched_fit); decides and emits FlashAttention-3's dynamic persistent tile scheduler
 * (hopper/tile_scheduler.hpp, DynamicPersistentTileScheduler) under TILEC_ATTN_SCHED=1 (opt-in):
 * min(tiles, CTAs that fit) CTAs, each taking its next tile from a global atomic counter, in an order
 * that runs the heaviest row blocks first.  docs/pipelines.md "Causal tiles from a counter".
 *
 * The counter: two u32 words in device memory whose address is the kernel's last parameter (a hidden
 * u64 after the tensor maps, codegen.h): the launcher keeps one pair for each (handle, stream), zeroed
 * on that stream before its first launch (lib/api/sched_slot.c, docs/runtime.md "Tile counters"),
 * [0] the tiles handed out past the first wave, [1] the CTAs done taking.  A CTA's first tile is
 * ctaid.x; its producer thread takes the next one with atom.relaxed.gpu.add([0], 1) + nctaid.x once it
 * has issued the tile's last K/V stage, stops at one >= the tile count, then adds 1 to [1] (acq_rel:
 * its takes come before); the CTA that brings [1] to nctaid.x
 * is the last to take, and writes both words back to 0.  So every launch starts from zero without a
 * memset or a second kernel (CUDA-graph capturable); the next launch in the stream sees the stores.
 * Two launches on two streams have two slots; two at once on one slot (a graph captured on stream A
 * replayed on stream B while A runs the kernel) would share it: not supported (docs/runtime.md).
 *
 * The hand-over (the producer learns the tile, the consumers follow): one shared u32 beside "q
 * full" / "q empty" (sched_word_off).  The producer writes the tile there after its "q empty" wait
 * and before q's arrive.expect_tx on "q full" (release), so the consumers' "q full" wait (acquire) at
 * the tile's head makes it visible; they read it and arrive on "q empty" only after the tile's loop
 * (or its O store), so the producer never overwrites a tile still unread.  At the end the producer
 * waits "q empty" once more, writes its last take (>= the tile count) and arrives on "q full" with no
 * transaction: the consumers read it and leave.
 *
 * The order (tile t -> program ids): the heads (program_id(1) x program_id(2)) in sections of G whose
 * K and V fit 32 MiB of L2 (FlashAttention-3's budget: G = 32 MiB / (8 S D), S ~ num_programs(0) x
 * BM, at least 1; TILEC_ATTN_SCHED=2: one section, every head); inside a section program_id(0) the
 * slowest (attn.tile's heaviest row block first, as attn_order.c assumes), the section's heads the
 * fastest.
 *
 * When to take: FlashAttention-3 takes the next tile at the current one's start (prefetch_next_work);
 * here the producer takes it after the current tile's last K/V stage, about 2-3 steps (the ring's
 * stages) before the consumers finish it, so tiles go to the CTAs that free first (a list schedule).
 * bench/attn_sched_model.py: taken at the start, a CTA's next tile is fixed a whole tile early and at
 * D256 S4k (sections of 4 heads x 32 row blocks, 128 tiles for 132 CTAs) the schedule loses 8-12 %
 * against today's; taken at the last stage it gains 1-6 %. */
#include <stdio.h>
#include <string.h>

#include "attn_form.h"
#include "code_env.h"
#include "ring.h"

int cg_plan_attn_sched(cg *g, int persist) {
  cg_plan *p = g->plan;
  /* the option attn-sched (per program; lib/api/forms.c carries it into the launch-time form) wins over the switch */
  char v = tl_attn_sched_mode(g->f->attn_sched);
  if (v != '1' && v != '2') return persist; /* (unset, =0: off, silent) */
  if (!p->sched_fit || !p->q_tma || p->q_plain || p->persist || p->cluster || p->rope) return persist;
  p->persist = true;
  p->sched_dyn = true;
  p->sched_all = v == '2';
  persist = (persist + 7) / 8 * 8;
  p->sched_word_off = persist;
  persist += 8;
  tl_sbuf note = {0};
  tl_sbuf_printf(&note,
                 "tiles from a counter (%s=%c): persistent, min(tiles, CTAs that fit) CTAs; the "
                 "producer takes each next tile from a global atomic counter once it has issued the tile's last K/V "
                 "stage and hands it to the consumers in shared memory before q's \"q full\"; %s; the last CTA "
                 "to finish taking resets the counter",
                 g->f->attn_sched ? "option attn-sched" : "TILEC_ATTN_SCHED", p->sched_all ? '2' : '1',
                 p->sched_all ? "heaviest row blocks first across every head"
                              : "heaviest row blocks first across sections of heads whose K and V fit 32 MiB of L2");
  p->sched_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  const char *was = "not persistent (" CG_TRIP_BY_TILE ")"; /* (emit_overlap.c's words) */
  const char *at = p->ws_note ? strstr(p->ws_note, was) : NULL;
  if (at) { /* (cg_ws_plan's note, written before this plan) */
    tl_sbuf w = {0};
    tl_sbuf_printf(&w,
                   "%.*spersistent with tiles from a counter (the trip count depends on the tile: "
                   "TILEC_ATTN_SCHED or the option attn-sched, below)%s",
                   (int)(at - p->ws_note), p->ws_note, at + strlen(was));
    p->ws_note = tl_strdup(&g->ctx->arena, w.data);
    tl_sbuf_free(&w);
  }
  return persist;
}

bool cg_attn_sched_counter(cg *g) { return g->plan && g->plan_f == g->f && g->plan->sched_dyn; }

/* The counter: two u32 words at the hidden parameter's address (the launcher's slot of this stream). */
static LLVMValueRef counter(cg *g) {
  if (!g->sched_ctr) TL_INTERNAL(g->ctx, "codegen: attn_sched: no counter parameter");
  return g->sched_ctr;
}

static LLVMValueRef word(cg *g) { return cg_add_c(g, cg_smem_base32(g), g->plan->sched_word_off); }

static LLVMValueRef umin(cg *g, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, a, b, ""), a, b, "");
}

/* g->pid of tile t (the order above); G the section's heads. */
static void tile_pids(cg *g, LLVMValueRef t, LLVMValueRef G) {
  LLVMValueRef nb = g->lgrid[0], g1 = g->lgrid[1];
  LLVMValueRef heads = LLVMBuildMul(g->B, g1, g->lgrid[2], "");
  LLVMValueRef span = LLVMBuildMul(g->B, G, nb, "");
  LLVMValueRef sec = LLVMBuildUDiv(g->B, t, span, ""), r = LLVMBuildURem(g->B, t, span, "");
  LLVMValueRef first = LLVMBuildMul(g->B, sec, G, "");
  LLVMValueRef gs = umin(g, G, LLVMBuildSub(g->B, heads, first, ""));
  LLVMValueRef hb = LLVMBuildAdd(g->B, first, LLVMBuildURem(g->B, r, gs, ""), "");
  g->pid[0] = LLVMBuildUDiv(g->B, r, gs, "pid0");
  g->pid[1] = LLVMBuildURem(g->B, hb, g1, "pid1");
  g->pid[2] = LLVMBuildUDiv(g->B, hb, g1, "pid2");
}

/* The section's heads: min(heads, max(1, 32 MiB / (8 nb BM D))) (=2: every head). */
static LLVMValueRef section_heads(cg *g) {
  cg_plan *p = g->plan;
  LLVMValueRef heads = LLVMBuildMul(g->B, g->lgrid[1], g->lgrid[2], "");
  if (p->sched_all) return heads;
  int64_t per_row = 8LL * p->q_boxes * 64; /* bytes a key row of K and V, FlashAttention-3's x2 */
  LLVMValueRef s = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, g->lgrid[0], g->i64, ""), cg_i64(g, (int64_t)p->q_rows * per_row), "");
  LLVMValueRef G = LLVMBuildUDiv(g->B, cg_i64(g, 32LL << 20), s, "");
  G = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, G, cg_i64(g, 1), ""), cg_i64(g, 1), G, "");
  G = LLVMBuildTrunc(g->B, umin(g, G, LLVMBuildZExt(g->B, heads, g->i64, "")), g->i32, "sched.heads");
  return G;
}

void cg_attn_sched_begin(cg *g, cg_tiles *T, bool producer) {
  cg_plan *p = g->plan;
  memset(g->pid, 0, sizeof g->pid);
  g->phantom = NULL;
  LLVMValueRef G = section_heads(g);
  T->tv = LLVMBuildAlloca(g->PB, g->i32, "tile");
  LLVMBuildStore(g->B, cg_sreg(g, "ctaid", 0), T->tv);
  T->head = LLVMAppendBasicBlockInContext(g->C, g->fn, "sched.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "sched.body");
  T->exit = LLVMAppendBasicBlockInContext(g->C, g->fn, "sched.exit");
  LLVMBuildBr(g->B, T->head);
  LLVMPositionBuilderAtEnd(g->B, T->head);
  LLVMValueRef t;
  if (producer) {
    t = LLVMBuildLoad2(g->B, g->i32, T->tv, "");
  } else { /* the producer's hand-over: "q full" of this tile (or of the end) */
    cg_q_tma_wait(g);
    LLVMValueRef w = word(g);
    t = cg_asm(g, g->i32, "ld.shared.u32 $0, [$1];", "=r,r,~{memory}", &w, 1, true);
  }
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntULT, t, T->ntiles, ""), body, T->exit);
  LLVMPositionBuilderAtEnd(g->B, body);
  tile_pids(g, t, G);
  if (producer) p->sched_t = t;
}

void cg_attn_sched_publish(cg *g) {
  cg_plan *p = g->plan;
  if (!p->sched_dyn || !p->sched_t) return;
  LLVMValueRef args[2] = {word(g), p->sched_t};
  cg_asm_void(g, "st.shared.u32 [$0], $1;", "r,r,~{memory}", args, 2);
}

void cg_attn_sched_end(cg *g, cg_tiles *T, bool producer) {
  cg_plan *p = g->plan;
  if (producer) { /* the next tile, taken once this tile's last K/V stage is issued (the ring full: the next
                    * slot frees a step later, so the atomic's latency hides behind that wait) */
    LLVMValueRef c = counter(g);
    LLVMValueRef n = cg_asm(g, g->i32, "atom.relaxed.gpu.global.add.u32 $0, [$1], 1;", "=r,l,~{memory}", &c, 1, true);
    LLVMBuildStore(g->B, LLVMBuildAdd(g->B, n, cg_tiles_nctaid(g), "sched.take"), T->tv);
  }
  LLVMBuildBr(g->B, T->head);
  LLVMPositionBuilderAtEnd(g->B, T->exit);
  memset(g->pid, 0, sizeof g->pid);
  g->phantom = NULL;
  if (!producer) return;
  p->sched_t = NULL;
  /* the end, handed over as a tile past the grid: after the last tile's "q empty" */
  cg_q_tma_empty_wait(g);
  LLVMValueRef args[2] = {word(g), LLVMBuildLoad2(g->B, g->i32, T->tv, "")};
  cg_asm_void(g, "st.shared.u32 [$0], $1;", "r,r,~{memory}", args, 2);
  cg_q_tma_full_arrive(g);
  /* done taking; the last CTA to be puts the counter back to zero for the next launch */
  LLVMValueRef c = counter(g);
  LLVMValueRef d = LLVMBuildAdd(g->B, c, cg_i64(g, 4), "");
  LLVMValueRef old = cg_asm(g, g->i32, "atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;", "=r,l,~{memory}", &d, 1, true);
  LLVMValueRef last = LLVMBuildICmp(g->B, LLVMIntEQ, LLVMBuildAdd(g->B, old, cg_i32(g, 1), ""), cg_sreg(g, "nctaid", 0), "");
  LLVMBasicBlockRef rb = LLVMAppendBasicBlockInContext(g->C, g->fn, "sched.reset");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->C, g->fn, "sched.done");
  LLVMBuildCondBr(g->B, last, rb, jb);
  LLVMPositionBuilderAtEnd(g->B, rb);
  LLVMValueRef both[2] = {c, d};
  cg_asm_void(g, "st.relaxed.gpu.global.u32 [$0], 0;\n\tst.relaxed.gpu.global.u32 [$1], 0;", "l,l,~{memory}", both, 2);
  LLVMBuildBr(g->B, jb);
  LLVMPositionBuilderAtEnd(g->B, jb);
}
