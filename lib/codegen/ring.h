/* ring.h: the main-loop plan shared by lib/codegen/'s pipeline emitters
 * (internal, not a contract): dot_plan.c (the plan), emit_ring.c (the
 * cp.async ring), smem_addr.c (slot addressing), emit_dot.c (operands,
 * mma.sync), emit_wgmma.c (Hopper wgmma), emit_tma.c (the TMA ring: tensor maps, mbarriers),
 * emit_ws.c (warp specialization: producer / consumer warpgroups),
 * tile_sched.c (persistent CTAs over output tiles).  docs/pipelines.md. */
#ifndef TILEC_RING_H
#define TILEC_RING_H

#include "cg.h"
#include "schedule.h"
#include "rope_producer.h"

enum { SRC_STAGED = 0, SRC_STREAM, SRC_INVARIANT, SRC_REGS };

typedef struct cg_stream {
  int32_t load_op, for_op;
  int32_t rows, cols, eb; /* the loaded tile, row-major, cols contiguous */
  int offset;             /* of slot 0 in shared memory */
  int stage_bytes;
  int pitch;              /* bytes per row in a slot: cols*eb, plus padding when not swizzled */
  bool swz;               /* rows XOR-swizzled by 16-byte chunk */
  /* 8-bit B loaded [K][N]: a slot holds it [K][N] (pitch) when the tensor's
   * N stride is 1, else, when its K stride is 1 (K-major, cuBLAS's "TN"
   * B), [N][K] with rows of nk_pitch bytes, also copied by cp.async; the
   * choice is made at run time from the strides (uniform, loop-invariant) */
  bool kn8;
  int nk_pitch;
  /* a [K][N] B read by wgmma (emit_wgmma.c): the slot is [N/64][K][64],
   * atoms of 128-byte rows, 16-byte chunk c of k-row r at c ^ (r % 8) */
  bool wg_atoms;
  bool wg_kmajor;         /* wgmma B given as trans of [N][K]: with wg_atoms (rows over 128 B,
                           * 16-bit), the atoms are [K/64][N][64], K-major */
  bool wg;                /* read by wgmma: slot offset 1024-byte aligned (swizzle atoms) */
  /* an 8-bit B kept [K][N] for wgmma (which reads 8-bit operands only
   * K-major): the slot is the [K][N] atom slot above; each k-step the
   * consumers transpose it (ldmatrix .trans of byte pairs + prmt, emit_dot.c)
   * into a K-major buffer at tr_off (rows N of K bytes, swizzled like a
   * K-major slot): one when each wgmma group is waited for in its
   * iteration, else two, written in turns (trv) */
  bool wg_tr;
  int tr_off, tr_nbuf;
  /* ws_tr (warp-specialized, emit_ws.c producer_loop_tr): the producer
   * warpgroup transposes instead; the [K][N] slots are its staging (TMA'd
   * up to ring stages - 1 k-steps ahead, each on its own "loaded" mbarrier
   * at trm_off + 8 slot) and tr_nbuf = stages K-major buffers, buffer s
   * belonging to ring slot s (filled before slot s's full mbarrier, whose
   * count is then 2: A's expect_tx and the transpose's arrive) */
  bool ws_tr;
  int trm_off;
  LLVMValueRef trv;       /* tr_nbuf 2: alloca of the buffer this k-step writes (0, 1, 0, ...) */
  /* TMA (the ring's tma): tensor map `tma` (index among the hidden
   * parameters), `tma_boxes` boxes of tma_inner x rows per stage, box b
   * at slot byte b * rows * 128 and tile column b * tma_inner */
  int tma, tma_inner, tma_boxes;
  /* a cluster (emit_cluster.c): the tile is the same for both CTAs of the
   * pair (its indices do not depend on the program id the pair's tiles differ
   * in); CTA r loads rows [r*rows/2, (r+1)*rows/2) of every box (the map's box
   * has rows/2 rows), multicast into both CTAs' slot */
  bool mcast;
  int readers;            /* dot operands reading the slot (a load several dots share streams once) */
  /* an operand prologue's load (plan_prologue): the slot holds its box
   * row-major, unswizzled; the load reads it back into registers
   * (emit_prologue.c).  row_base: a gather's box start (a scalar value; the
   * row dim's index is then a tile), else -1 */
  bool prologue;
  int32_t row_base;
  /* a ring row (emit_ring_rows.c, TILEC_ROW_STREAM=1; not the row kernels' row_stream pass): a 1-D row load (rows 1, the view along the
   * tensor's last dim alone) of the loop's TMA ring, read back like a prologue's load (prologue is
   * set too); its slot is one box of cols elements, stage_bytes a multiple of 128 */
  bool ring_row;
  /* the tile start (i64 per dim) of the stage the ring issues next, made before the ring's wait
   * when an index reads memory (a page-table entry): that load then runs under the wait and the
   * barrier instead of stalling the copies' issue (emit_ring.c prefetch_index); n_pre 0: none */
  LLVMValueRef pre_start[TL_MAX_RANK];
  int n_pre;
  /* TILEC_WHOLE_ONCE=1 (emit_copy_issue.c cg_stream_whole_once): i1, made in the loop's preheader,
   * every stage the program's loop issues is a tile inside the tensor; NULL: tested per stage */
  LLVMValueRef whole_once;
} cg_stream;

typedef struct cg_ring {
  int32_t for_op;
  int stages;
  bool after_ring;        /* its slots are another ring's, whose loop ran before (rings_overlap): a barrier first */
  bool emitted;
  bool pre_done;          /* prologue issued by cg_loop_preheader */
  bool wgmma;             /* read by wgmma (async proxy): fence.proxy.async before the barrier */
  int lag;                /* 1: the dots leave one wgmma group in flight, so the ring issues one
                           * stage less far ahead (slot i-1 may still be read in iteration i) */
  bool late;              /* 2 stages, a deferred dot and a staged wgmma B (dot_plan.c plan_lag,
                           * TILEC_LATE_REFILL=0 off): stage i+1 is issued after the staged B's
                           * barrier, behind every warpgroup's wait for the deferred group of
                           * iteration i-1, its slot's last reader (emit_ring.c cg_ring_late_refill) */
  LLVMValueRef late_wr;   /* (codegen: the slot the pending late refill writes, NULL: none pending) */
  bool late_due;          /* (codegen: the staged B's barrier passed, the refill goes after the next
                           * waiting wgmma dot's commit: TILEC_LATE_REFILL=2) */
  bool staged2;          /* a late ring whose staged B slots are doubled (TILEC_STAGED_DOUBLE=1, dot_plan.c):
                           * step i stages into slot rd_slot, so the staged B's barrier of step i-1
                           * orders every read of that slot (step i-2's score dots) before step i's
                           * stores, and the TMA path drops the ring's own barrier (emit_ring.c) */
  LLVMValueRef top_bar;   /* (codegen: the TMA path's ring barrier, erased at the loop exit when the
                           * body has no barrier but the ring's and the staged B's) */
  LLVMBasicBlockRef pre_last; /* (codegen: the function's last block when the body starts) */
  int nbar_ring;          /* (codegen: the barriers emit_ring emitted) */
  LLVMValueRef rdv, wrv;  /* allocas of the read / write slot counters */
  LLVMValueRef rd_slot;   /* i32: this iteration's slot (in the body) */
  /* TMA feeding (plan_tma): one mbarrier per stage at mbar_off; tma_ok (i1,
   * kernel prologue) = every operand passes the tensor-map test (else the
   * cp.async ring runs); phasev: bit s = the parity stage s waits for next */
  bool tma;
  int mbar_off, tx_bytes;
  LLVMValueRef tma_ok, phasev;
  /* warp specialization (emit_ws.c): the producer warpgroup fills the
   * slots, the consumers wait for a slot's "full" mbarrier (mbar_off) and
   * release it on its "empty" mbarrier (empty_off, one arrival per consumer
   * warp); relv: alloca of the slot whose release is pending (-1: none) */
  bool ws;
  bool ws_pending;        /* the dot leaves its last slot to release at the end of the tile */
  int empty_off;
  LLVMValueRef relv;
  LLVMValueRef turn_wg;   /* attention's turns: i32 consumer warpgroup (0 / 1) */
  bool turn_started;      /* ... the first turn's bar.sync is emitted */
  LLVMValueRef ppfirst;   /* ping-pong: alloca, 1 until this warpgroup's first tile needs no wait */
  LLVMValueRef pptv, ppnt; /* ping-pong: the consumer's tile alloca and the tile count */
  /* TILEC_ATTN_KV_SPLIT (fa3's turns on a 2-stage ring, emit_ws.c "K and V apart"): kv_lag2, the
   * lag taken at 2 stages for the value dot a step late (dot_plan.c plan_lag; undone when the ring
   * is not warp-specialized: the producer's empty mbarriers, not the ring's issue distance, keep a
   * slot until its last read); kv_split (=1), a stage's K and V on mbarriers of their own: K
   * (stream kv_k, the score dot's B) on the full / empty pair at mbar_off / empty_off, released
   * after the score dot's wait, V on vfull_off / vempty_off, released after the late value dot's
   * wait; vphasev: the consumers' parity bits of the V full mbarriers, vprodph the producer's of
   * the V empty ones (allocas) */
  bool kv_lag2, kv_split;
  int kv_k, vfull_off, vempty_off;
  LLVMValueRef vphasev, vprodph;
  /* the next tile's first stages issued at this tile's loop exit (tile_prefetch.c,
   * TILEC_TILE_PREFETCH=1): pfv (alloca i32) = 1 while they are in flight, so the
   * next tile's ring prologue issues none; pf_tiles: the persistent tile loop */
  bool prefetch;
  LLVMValueRef pfv;
  const struct cg_tiles *pf_tiles;
} cg_ring;

#define CG_MAX_WG 8 /* wgmma dots a function's plan takes */

/* Why an attention kernel's CTAs run one tile each (emit_ws.c, emit_overlap.c's note; attn_sched.c
 * rewrites that note when it makes such a kernel persistent after all) */
#define CG_TRIP_BY_TILE "the main loop's trip count depends on the tile"

typedef struct cg_plan {
  int8_t *vkind;          /* per value: SRC_* of a dot operand value (or the load/trans feeding it) */
  int32_t *vstream;       /* per value: stream index (STREAM) or persistent offset (INVARIANT) */
  cg_stream streams[16];
  int nstream;
  cg_ring rings[4];
  int nring;
  bool *inv_done;         /* per value: invariant operand staged */
  int32_t *inv_loop;      /* per value: the loop an INVARIANT operand is staged before (its dots read it there) */
  int32_t *inv_dot;       /* per value: the dot whose plan made it INVARIANT (its reader in inv_loop) */
  bool follow;            /* f->sched present: follow lib/schedule.h, plain where a pass did not run */
  int32_t wg_dots[CG_MAX_WG];     /* dots emitted as wgmma (emit_wgmma.c) */
  bool wg_inflight[CG_MAX_WG];    /* ... whose accumulator chain allows a group in flight across iterations */
  bool wg_defer[CG_MAX_WG];       /* ... that do not wait at all: an earlier wgmma dot of the next iteration
                           * (its wait_group 0) or the loop exit waits (attention's O += P V) */
  int32_t wg_carried[CG_MAX_WG];  /* ... the loop-carried value their result becomes (inflight / defer), else -1 */
  bool wg_staged_b[CG_MAX_WG];    /* ... whose B is computed in the loop (an operand prologue) and staged each
                           * step into its own swizzled K-major slot at wg_boff (persistent memory) */
  int32_t wg_boff[CG_MAX_WG];
  bool wg_staged_b_done[CG_MAX_WG]; /* (codegen: its staging is emitted) */
  bool wg_bdouble[CG_MAX_WG];     /* ... two slots of it, the ring's read slot picks one (cg_ring.staged2) */
  bool wg_chain[CG_MAX_WG];       /* ... whose result is only the accumulator of the next wgmma dot of the
                           * loop, which waits: no wait of its own (attn_rope's two score dots) */
  int nwg;
  bool two_programs;      /* ask for two programs an SM (.minnctapersm 2; dot_plan.c plan_two_programs) */
  bool rings_overlap;     /* the rings of loops that run one after another share one region (dot_plan.c) */
  int two_programs_scratch; /* the largest scratch user past the persistent part (plan_scratch_bytes), which each
                             * of the two programs also needs */
  /* attention's overlap (emit_overlap.c, TILEC_ATTN_OVERLAP): a deferred dot whose wgmma is issued
   * one iteration late, right after the waiting dot of the next iteration, so the softmax after
   * that dot's wait_group 1 runs under it */
  bool wg_sink[CG_MAX_WG];
  int32_t sink_wait_op[CG_MAX_WG]; /* top-level body op before which its group is waited (wait_group 0) */
  int32_t sink_waiter[CG_MAX_WG];  /* the loop's waiting dot (the score dot) it is issued after */
  int sink_npk[CG_MAX_WG];         /* its packed register A words carried to the next iteration */
  LLVMValueRef *sink_pk[CG_MAX_WG]; /* allocas of those words (0 before the first iteration) */
  LLVMValueRef sink_slot[CG_MAX_WG]; /* alloca: the ring slot its B was read from, -1 before the first */
  int sink_form;           /* TILEC_ATTN_OVERLAP: 1, 3 (the rescale at the issue) or 4 (3 + a barrier) */
  int32_t sink_mul[CG_MAX_WG];     /* form >= 3: the op acc * alpha (the dot's accumulator operand), not emitted in place */
  int32_t sink_scale[CG_MAX_WG];   /* ... its other operand, carried to the next iteration */
  LLVMValueRef *sink_sc[CG_MAX_WG]; /* ... allocas of that operand's registers */
  LLVMValueRef *sink_scaled[CG_MAX_WG]; /* ... the rescaled accumulator, computed before the waiting dot's fence */
  const char *sink_note;   /* --explain */
  int ntma;               /* hidden tensor-map parameters */
  tl_tma_desc tma[TL_MAX_TMA];
  LLVMValueRef tmap[TL_MAX_TMA]; /* i64 generic address of each map (kernel prologue) */
  bool tma_prologue_done;
  const char *tma_note;   /* --explain */
  /* warp specialization and persistence (emit_ws.c, tile_sched.c) */
  int ws;                 /* TL_WS_*: the kernel runs producer + consumer warpgroups */
  int32_t ws_for;         /* the main loop (a top-level op of the body) */
  bool ws_attn;           /* attention's form: one waiting dot, the others deferred to it (emit_ws.c) */
  bool ws_turns;          /* attention: the consumer warpgroups issue their dots in turns (emit_ws.c) */
  int32_t turn_wait_dot, turn_defer_dot; /* ... the score dot (waits) and the value dot (deferred) */
  bool turns_late;        /* ... with the value dot a step late (TILEC_ATTN_WS=fa3, emit_overlap.c): a
                           * turn runs from the ring's wait to the late dot's commit */
  bool turns_free;        /* ... and no named barriers between the warpgroups (TILEC_ATTN_TURNS=0: each
                           * issues when its own ring waits pass, FlashAttention-3's form above hdim 128;
                           * emit_overlap.c) */
  bool persist;           /* CTAs loop over output tiles (tile_sched.c) */
  int cluster;            /* 0, or clusters of 2 CTAs on tiles adjacent along program_id(cluster - 1)
                           * (emit_cluster.c; tl_kernel_info.cluster) */
  const char *ws_note;    /* --explain */
  struct cg_epi *epi;     /* the epilogue in sub-tiles (emit_epilogue.c), or NULL */
  const char *epi_note;   /* --explain: how the epilogue after the main loop is emitted (emit_epilogue.c) */
  int32_t *red_off;        /* per op: a reduce's own shared slot (cg_plan_reduce_slots), -1 none; NULL: none at all */
  /* fa3's q by TMA (emit_q_tma.c, TILEC_ATTN_Q_TMA=1): the score dot's resident A loaded by the
   * producer; q_load: its load op (not emitted by the consumers), q_val its value, q_map its tensor
   * map, q_mbar_off the "q full" / "q empty" mbarriers, the allocas their parity bits */
  bool q_tma;
  bool q_early;             /* TILEC_ATTN_Q_TMA=2: q empty in the last iteration, after its wait_group 1 */
  bool q_l2;                /* TILEC_ATTN_Q_PREFETCH=1: the producer asks L2 for the tile's q at the tile's start */
  /* TILEC_ATTN_PERSIST=1 (no producer): q by TMA issued by thread 0, in tile_prefetch.c for the next
   * tile after the loop exit's CTA barrier (the slot's readers are done), at the tile's start when no
   * tile before it did (q_pf, alloca i32: 1 while the prefetched boxes are in flight); only "q full" */
  bool q_plain;
  LLVMValueRef q_pf;
  int32_t q_load, q_val;
  int q_map, q_mbar_off, q_rows, q_boxes, q_bytes;
  LLVMValueRef q_fullph, q_emptyph;
  /* TILEC_ATTN_SCHED=1 (attn_sched.c): tiles from a global atomic counter.  sched_fit: cg_ws_plan left
   * the fa3 kernel one tile a CTA only because its loop's trip count depends on the tile; sched_dyn:
   * taken (p->persist then set); sched_all: =2, one section of every head; sched_word_off: the shared
   * u32 of the hand-over; sched_t: the producer's tile */
  bool sched_fit, sched_dyn, sched_all;
  int sched_word_off;
  LLVMValueRef sched_t;
  const char *sched_note;  /* --explain */
  const char *q_note;      /* --explain: how q is loaded, or why not by TMA when TILEC_ATTN_Q_TMA=1 */
  /* fa3's O by a TMA store from q's slot (emit_o_tma.c, TILEC_ATTN_O_TMA=1): o_store its store op,
   * o_map its tensor map; "q empty" then takes one arrival per warpgroup, after the store's read */
  bool o_tma;
  int32_t o_store;
  int o_map;
  const char *o_note;      /* --explain: how O is stored, or why not by TMA when TILEC_ATTN_O_TMA=1 */
  /* emit_o_slot.c: O through the last ring stage, not q's slot: o_slot_v the stream whose slot O takes (V's; K's
   * with o_slot_k), o_slot_nv O's atoms in its slot, o_slot_x the rest's region of their own (-1: none); o_slot_max
   * the default's bound: a tile of more main-loop steps keeps q's slot (0: none, TILEC_ATTN_O_SLOT=1) */
  bool o_slot, o_slot_k; /* o_slot_k: O into the stage's K slot after "q empty" (emit_o_slot.c o_slot_k_wanted) */
  int o_slot_v, o_slot_nv, o_slot_x, o_slot_max;
  /* atomic_add of f32 tiles by a TMA bulk reduce-add (emit_atomic_tma.c, TILEC_ATOMIC_TMA=1) */
  int natma;
  struct cg_atma *atma;
  const char *atma_note;   /* --explain: which atomics go by TMA, or why not */
  const char *dot_note;    /* --explain: dots mma_remap gave wgmma that the plan keeps on mma.sync, and why */
  /* TILEC_ROPE_PRODUCER=1 (emit_rope.c, lib/rope_producer.h): attn_rope's k rotated in its ring slot
   * by fa3's producer warpgroup; rope_skip: per op, the rotation's ops the consumers do not emit;
   * rope_mbar_off: the slots' "loaded" mbarriers (k's boxes), the "full" ones then count 2 */
  tl_rope_match *rope;
  bool *rope_skip;
  int rope_mbar_off;
  int rope_scratch_off, rope_scratch_bytes; /* q's two resident slots, the preamble's scratch */
  const char *rope_note;   /* --explain */
  /* TILEC_WGMMA_LAZY=1 (wgmma_lazy.c): the results of the loop body's wgmma dots whose groups are
   * committed and not yet waited for, oldest first */
  /* TILEC_WGMMA_STAGED_A=1 (emit_dot.c stage_wgmma_a): a wgmma dot whose A is the transpose of a
   * 16-bit tile computed in the loop (the backward's dQ = dS K, A = trans(dS^T)), staged each step
   * MN-major into its own 1024-aligned slot at wg_aoff, and whose B is a resident slot read N-major */
  bool wg_staged_a[CG_MAX_WG];
  int32_t wg_aoff[CG_MAX_WG];
  bool wg_res_b[CG_MAX_WG];
  int32_t lazy_res[8];
  int nlazy;
  const char *lazy_note;   /* --explain */
} cg_plan;

/* Appends a tensor map of parameter `param` to the plan (the launcher encodes one per entry, in order)
 * and returns its index; the caller has checked p->ntma < TL_MAX_TMA. */
static inline int cg_tma_map_add(cg_plan *p, int param, int box_inner, int box_rows, int swizzle, int dtype) {
  p->tma[p->ntma] = (tl_tma_desc){.param = param, .box_inner = box_inner, .box_rows = box_rows, .swizzle = swizzle,
                                  .dtype = dtype};
  return p->ntma++;
}

/* dot_plan.c: the index in loop L's body of the top-level op holding op id (nested ops count as
 * their ancestor), or INT32_MAX; and the first such index of an op using value v. */
int32_t cg_body_pos(tl_func *f, int32_t L, int32_t id);
int32_t cg_body_pos_first_use(tl_func *f, int32_t L, int32_t v);

/* emit_overlap.c (TILEC_ATTN_OVERLAP): a deferred wgmma dot issued one iteration late.
 * cg_plan_overlap decides (after the lags and warp specialization); the loop's preheader
 * initializes the carried words; the waiting dot of a loop with such a dot commits without a wait
 * and calls cg_overlap_issue (the late dots, wait_group 1, the waiting dot's result fenced);
 * cg_overlap_before_op waits (wait_group 0) before the carried accumulator's first use;
 * cg_overlap_defer stands in for the dot itself (stores its A words and slot, its result is its
 * accumulator operand); cg_overlap_exit issues the last one after the loop. */
void cg_plan_overlap(cg *g);
void cg_overlap_preheader(cg *g, int32_t L);
bool cg_overlap_waiter(cg *g, int32_t D); /* dot D is the waiting dot a late dot is issued after */
void cg_overlap_before_waiting(cg *g, int32_t L); /* form >= 3: the rescale, before the waiting dot's fence */
void cg_overlap_issue(cg *g, int32_t L, int32_t waiting_res);
void cg_overlap_defer(cg *g, tl_op *o, LLVMValueRef slot);
/* emit_dot.c: dot D's register A (a 16-bit cast of an f32 tile in the accumulator layout) packed
 * into its wgmma / mma.sync A fragments, pk[(mi * nk + kk) * 4 + i]. */
LLVMValueRef *cg_dot_pack_a(cg *g, int32_t D);
void cg_overlap_exit(cg *g, int32_t L);

/* emit_ring_rows.c (TILEC_ROW_STREAM=1): ring R's (TMA-fed, nmaps maps of its dot operands to
 * come) 1-D row loads that stream through it, their slots from `persist` on (returns the new end;
 * why a load is not one goes to `note`); and a row load's `other` put into value res (the load's
 * result or a convert of it, read from the slot) where the view leaves the tensor. */
int cg_plan_ring_rows(cg *g, cg_ring *R, int persist, int nmaps, tl_sbuf *note);
void cg_ring_row_other(cg *g, tl_op *o, cg_stream *s, int32_t res);

/* emit_prologue.c: load o (an operand prologue's, stream s) read back from
 * ring slot `slot` (i32) into registers in its layout. */
void cg_prologue_read(cg *g, tl_op *o, cg_stream *s, LLVMValueRef slot);

/* smem_addr.c: small LLVM helpers (i32 unless said otherwise) and the
 * shared-memory addressing of slots and staged operands */
LLVMValueRef cg_smem_base32(cg *g);          /* shared address of byte 0 of the dynamic array */
bool cg_is_zero(LLVMValueRef v);             /* a constant integer 0 */
LLVMValueRef cg_to_i64(cg *g, LLVMValueRef v);
LLVMValueRef cg_tid32(cg *g);                /* %tid.x from the prologue's warp/lane */
LLVMValueRef cg_add_c(cg *g, LLVMValueRef x, int64_t c);
LLVMValueRef cg_mul_c(cg *g, LLVMValueRef x, int64_t c);
void cg_asm_void(cg *g, const char *text, const char *cons, LLVMValueRef *args, int n);
/* XOR applied to the 16-byte chunk index of a row of nch chunks. */
LLVMValueRef cg_swizzle_of(cg *g, LLVMValueRef row, int nch);
/* Byte offset in a slot of 16-byte chunk ch (i32) of tile row r (i32). */
LLVMValueRef cg_slot_off(cg *g, const cg_stream *s, LLVMValueRef r, LLVMValueRef ch);
/* Shared byte offsets base + row*pitch + F(row, cb), F = cb ^ (swizzle(row) << 4)
 * when swizzled (the 16-byte chunk XOR-ed, bytes within it kept), else cb,
 * computed as a per-lane part plus constants.  row = row_l + row_c and
 * cb = cb_l + cb_c, the per-lane parts (_l, i32) and the constant parts (_c)
 * having disjoint bits (a layout's lane/warp and register parts; lane-derived
 * fields and slice/block steps above them).  Then + is ^ on each pair, and
 * swizzle (bits of row) is linear over ^, so
 *   off = row_l*pitch + row_c*pitch + (F_l ^ F_c),   F_x = F(row_x, cb_x);
 * and since the low 4 bits of F_l ^ F_c are cb_l ^ cb_c (disjoint: a sum),
 *   F_l ^ F_c = (F_l ^ (F_c & ~15)) + (F_c & 15).
 * So an offset is one add to a per-lane value that depends only on F_c & ~15
 * (cached: one xor and one add per distinct key), all else one constant.
 * Moreover F_l < 2^b for a known b (cb_l <= cb_max, swizzle(row) < 8), so
 * the key bits at and above b are disjoint from F_l: F_l ^ key =
 * (F_l ^ (key & (2^b - 1))) + (key & -2^b), and only the low key bits need
 * an xor (k-slices 8 chunks apart share one per-lane value).  Values are
 * identical to the direct formula; the cached values are built at the first
 * use, which must dominate the later ones. */
typedef struct cg_soff {
  LLVMValueRef base;     /* i32: base + row_l*pitch */
  LLVMValueRef fl;       /* i32: F_l */
  int flmask;            /* 2^b - 1 >= every F_l */
  int pitch, nch;
  bool swz;
  int atom_bytes;        /* != 0: [C/128 bytes][rows][128 bytes] atoms (pitch 128), one atom column this many
                          * bytes (cg_soff_init_atoms) */
  int nkey;
  int key[32];
  LLVMValueRef val[32];  /* base + (F_l ^ key) */
} cg_soff;
void cg_soff_init(cg *g, cg_soff *s, LLVMValueRef base, int pitch, int nch, bool swz, LLVMValueRef row_l,
                  LLVMValueRef cb_l, int cb_max);
LLVMValueRef cg_soff_at(cg *g, cg_soff *s, int row_c, int cb_c);
/* The same over wgmma's [C/64][rows][64] 16-bit atoms (128-byte rows, the 128-byte swizzle, atom
 * columns atom_bytes apart): byte column cb = cb_l + cb_c picks atom cb / 128 (cb_l's and cb_c's bits
 * disjoint, as cg_soff's XOR already needs), so mma.sync's ldmatrix reads a resident tile staged for a
 * wgmma A (emit_dot.c). */
void cg_soff_init_atoms(cg *g, cg_soff *s, LLVMValueRef base, int atom_bytes, LLVMValueRef row_l, LLVMValueRef cb_l,
                        int cb_max);

/* dot_plan.c: the main-loop plan (cg_make_plan) and its queries */
tl_dot_sched *cg_dot_sched(cg *g, int32_t D); /* the schedule entry of dot D when followed, else NULL */
/* Row pitch of a staged or invariant operand w of dot D (*swz: XOR-swizzled). */
int cg_staged_pitch(cg *g, int32_t D, int w, int32_t cols, int eb, bool *swz);
int cg_wg_index(cg_plan *p, int32_t D);      /* index of dot D in p->wg_dots, or -1 */
bool cg_dot_is_wgmma(cg_plan *p, int32_t D);
/* Dot D reads operand x from x's resident slot: D is in the loop x is staged before, or D is a wgmma A in a
 * later loop that slot's staging reaches (cg_resident_reaches). */
bool cg_resident_slot(cg *g, int32_t x, int32_t D);

/* emit_ring.c: the cp.async ring of streamed operands */
/* The value of scalar v at the iteration of loop L whose iv is iv_sub. */
LLVMValueRef cg_remat(cg *g, int32_t v, int32_t L, LLVMValueRef iv_sub);
LLVMValueRef cg_iv_phi(cg *g, int32_t L, LLVMValueRef *reg); /* loop L's iv phi (i64), *reg its register */
LLVMValueRef cg_slot_next(cg *g, LLVMValueRef s, int stages);
LLVMTypeRef cg_iv_type(cg *g, int32_t L);    /* the register type of loop L's iv */

/* emit_copy_issue.c: one stream's copy of one ring stage */
LLVMValueRef cg_stream_kmajor(cg *g, cg_stream *s); /* i1: an 8-bit [K][N] B is K-major in memory */
/* Stream s's copies of the stage at iv `ivs` into slot `slot` (no commit); branchy: inside the loop
 * (uniform branches between the copy forms), else the preheader's predicated form (no new blocks). */
void cg_issue_stream(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, bool branchy);
/* Whether stream s's start reads memory (a page table entry), and its start at `ivs` made now (the
 * next cg_issue_stream of s uses it): the entry's load in flight under the ring's wait and barrier. */
bool cg_stream_index_reads_memory(cg *g, cg_stream *s);
/* In loop L's preheader (the builder there; lo64, step64 its bounds as i64, ivty the iv's type): each
 * stream's whole_once where TILEC_WHOLE_ONCE=1 and its start moves monotonically with the iv. */
void cg_stream_whole_once(cg *g, int32_t L, LLVMValueRef lo64, LLVMValueRef step64, LLVMTypeRef ivty);
void cg_stream_whole_once_end(cg *g, int32_t L); /* at loop L's exit: the values no longer dominate */
void cg_stream_prefetch_index(cg *g, cg_stream *s, LLVMValueRef ivs);
/* Element-by-element copy of stream s's tile for the iteration with iv
 * `ivs` into `slot` by threads tid, tid + threads, ... (zeros outside the
 * tensor; any strides or alignment): the copy that always works.  Under
 * TILEC_NARROW_COPY=1 a tensor 8- or 4-byte aligned takes 8- or 4-byte
 * cp.async instead, waited for before it returns. */
void cg_copy_slow(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, LLVMValueRef tid, int threads);

/* emit_narrow_copy.c: a tile whose tensor is 8- or 4-byte aligned, not 16 (TILEC_NARROW_COPY=1) */
bool cg_narrow_on(void); /* TILEC_NARROW_COPY=1 */

/* ring_range.c: a cp.async stage copied only when its iteration x64 runs (split loops by default;
 * TILEC_RING_IN_RANGE=1 every ring, =0 none) */
bool cg_ring_range_on(cg *g, int32_t L);
/* The branch to the stage's copies when x64 is in loop L's range (the builder left in that block);
 * returns the join block.  skip non-NULL: *skip is an empty out-of-range block for the caller to fill
 * and end at the join (else the branch goes to the join). */
LLVMBasicBlockRef cg_ring_range_begin(cg *g, int32_t L, LLVMValueRef x64, LLVMValueRef step64, LLVMBasicBlockRef *skip);
void cg_ring_range_end(cg *g, LLVMBasicBlockRef jb);
/* i1: last stride 1 and base, tile start and row pitch (bytes) multiples of w */
LLVMValueRef cg_narrow_fits(cg *g, LLVMValueRef unit_stride, LLVMValueRef base, LLVMValueRef gaddr0,
                            LLVMValueRef rowbytes, int w);
/* One issue of stream s's tile (emit_copy_issue.c cg_issue_stream's values) */
typedef struct cg_narrow_tile {
  const cg_stream *s;
  LLVMValueRef tid;               /* i32, < threads */
  int threads;
  LLVMValueRef row0, col0;        /* i64: the tile's first row (its row dim) and column */
  LLVMValueRef ok;                /* i1: the scalar-indexed dims in range, or NULL */
  LLVMValueRef rows_sz, cols_sz;  /* i64: the sizes of the row dim and the last dim */
  LLVMValueRef rowstride;         /* i64, elements */
  LLVMValueRef gaddr0, base;      /* i64: the tile's first element, the tensor's base */
  LLVMValueRef sbase;             /* i32: the slot's shared address */
} cg_narrow_tile;
/* the tile's 16-byte chunks as 8-byte cp.async.ca where `wide` (i1; NULL: always), else 4-byte,
 * into the slot bytes the 16-byte copies write */
void cg_narrow_copy(cg *g, const cg_narrow_tile *n, LLVMValueRef wide);

/* emit_dot.c: operands and mma.sync */
/* A operand a (attention's P) usable as registers (SRC_REGS). */
bool cg_a_from_regs(cg *g, int32_t a, const tl_layout *lc, int eb);
/* B operand b computed in its mma.sync fragment layout (TILEC_PROLOGUE_FRAG, SRC_REGS). */
bool cg_b_from_regs(cg *g, int32_t b, const tl_layout *lc, int eb);

/* emit_tma.c */
int cg_plan_tma(cg *g, int persist);         /* decide TMA per ring; returns the persistent end */
void cg_tma_kernel_prologue(cg *g, cg_ring *R);
LLVMValueRef cg_iv_in_range(cg *g, int32_t L, LLVMValueRef x, LLVMValueRef step64);
LLVMValueRef cg_mbar_addr(cg *g, cg_ring *R, LLVMValueRef slot);
void cg_tma_issue(cg *g, cg_ring *R, LLVMValueRef ivs, LLVMValueRef in, LLVMValueRef slot);
/* arrive.expect_tx on slot's full mbarrier and the boxes of every stream (one thread). */
void cg_tma_issue_boxes(cg *g, cg_ring *R, LLVMValueRef ivs, LLVMValueRef slot);
/* One stream's boxes of k-step ivs into its slot `slot`, completing on mbarrier mb (no arrive). */
void cg_tma_issue_stream(cg *g, cg_stream *s, LLVMValueRef ivs, LLVMValueRef slot, LLVMValueRef mb);
/* This thread's arrive.expect_tx of `bytes` on mbarrier mb (the thread that issues the boxes). */
void cg_mbar_expect_tx(cg *g, LLVMValueRef mb, int bytes);
/* The TMA bytes of one stream's stage. */
int cg_tma_stream_bytes(const cg_stream *s);
/* ws_tr: the [K][N] staging slot at src (i32 shared address) transposed into the K-major
 * buffer at dst by `nwarps` warps, this one `warp` (emit_dot.c; no fence, no barrier);
 * lean: the lane mapping without bank conflicts. */
void cg_transpose_kn8_into(cg *g, const cg_stream *st, LLVMValueRef src, LLVMValueRef dst, LLVMValueRef warp, int nwarps,
                           bool lean);
void cg_tma_wait(cg *g, cg_ring *R, LLVMValueRef slot);
/* Spin until mbarrier `mb` (i32 shared address) completes the phase of parity `par` (i32). */
void cg_mbar_wait(cg *g, LLVMValueRef mb, LLVMValueRef par);
/* The same with acquire at cluster scope (arrivals of the other CTA of a cluster: emit_cluster.c). */
void cg_mbar_wait_cluster(cg *g, LLVMValueRef mb, LLVMValueRef par);

/* emit_epilogue.c: plan the epilogue's sub-tiles and TMA store (its map,
 * its staging buffers in persistent shared memory from `persist`); returns
 * the new end of the persistent part */
int cg_plan_epilogue(cg *g, int persist);

/* emit_atomic_tma.c: plan the atomic_add ops lowered to a TMA bulk reduce-add (their maps, their
 * staging buffers in persistent shared memory from `persist`); returns the new end */
int cg_plan_atomic_tma(cg *g, int persist);
/* ... the bytes of those staging buffers, for the ring's stage count (before the rings are laid out) */
int cg_atomic_tma_reserve(cg *g);

/* tile_sched.c: a loop over the output tiles (persist), else the one
 * program: begin sets g->pid (NULL when not persistent), end closes it. */
/* rows of program_id(0) per group of the tile order: 8, or TILEC_TILE_GROUP
 * (1..64; measuring) */
int cg_tile_group(void);
typedef struct cg_tiles {
  bool persist;
  bool one_trip;            /* not persistent, but the body in a loop of one trip (emit_ws.c) */
  LLVMValueRef ntiles;      /* i32: tiles of the logical grid */
  LLVMValueRef tv;          /* alloca: this CTA's tile */
  LLVMValueRef first_off;   /* persistent: the first tile is ctaid + first_off * nctaid (NULL: 0) */
  int step_mul;             /* persistent: the step is step_mul * nctaid (0: 1) */
  int cluster;              /* persistent, p->cluster: the cluster's index and count step over tile
                             * pairs along program_id(cluster - 1); sets g->phantom */
  LLVMBasicBlockRef head, exit;
} cg_tiles;
void cg_tiles_begin(cg *g, cg_tiles *T);
void cg_tiles_end(cg *g, cg_tiles *T);
LLVMValueRef cg_tiles_nctaid(cg *g);       /* the persistent tile loop's step, nctaid.x (read at its use under q_l2) */
/* The program ids of tile t (i32) of a persistent loop without clusters, in the grouped order. */
void cg_tile_pids(cg *g, LLVMValueRef t, LLVMValueRef pid[3]);

/* tile_prefetch.c (docs/pipelines.md "Persistent CTAs"): TILEC_TILE_PREFETCH=1 */
/* Whether ring R of a persistent kernel without warp specialization issues the next tile's first
 * stages at its loop's exit; else the reason, for the note (NULL: it does; sets R->prefetch). */
const char *cg_tile_prefetch_plan(cg *g, cg_ring *R);
void cg_tile_prefetch(cg *g, cg_ring *R);      /* at the loop exit, after the drain */
void cg_ring_late_refill(cg *g, int32_t L); /* a late ring's refill (R->late), after the staged B's barrier */
void cg_tile_prefetch_flag(cg *g, cg_ring *R); /* R->pfv, 0 at the kernel's entry */

/* emit_ws.c (docs/pipelines.md "Warp specialization") */
void cg_ws_emit_program(cg *g, cg_tiles *T); /* producer and consumer paths, each ending in ret */
void cg_ws_plan(cg *g, int persist_end, int *new_end); /* after cg_plan_tma: decides p->ws */
bool cg_ws_wanted(cg *g, cg_ring *R);        /* ring R will be warp-specialized if TMA feeds it */
int cg_kv_split_level(void);                 /* TILEC_ATTN_KV_SPLIT: 0 off, 1 K and V apart, 2 the 2-stage lag alone, -1 unset (1 on 2-stage rings) */
void cg_ws_preheader(cg *g, cg_ring *R);     /* consumers: per tile, nothing pending */
void cg_ws_ring_wait(cg *g, cg_ring *R);     /* consumers: this iteration's slot is full */
void cg_ws_after_dot(cg *g, cg_ring *R, bool inflight); /* release the slot(s) whose reads are done */
void cg_ws_loop_exit(cg *g, cg_ring *R);     /* after the drain: keep the epilogue's scalars behind it */
void cg_ws_tile_end(cg *g, cg_ring *R);      /* release the last slot of the tile's loop */
/* attention's turns: before wgmma dot D of loop L */
void cg_ws_turn_before(cg *g, int32_t D, int32_t L);
/* ... with the value dot a step late (p->turns_late, emit_overlap.c): this warpgroup's turn
 * begins (bar.sync 5 + w); it ends (bar.arrive 6 - w) when `on` (i1; NULL: always); i1 "this is
 * warpgroup 0", the one that takes the first turn */
void cg_ws_turn_sync(cg *g);
void cg_ws_turn_arrive(cg *g, LLVMValueRef on);
LLVMValueRef cg_ws_turn_first(cg *g);
/* The producer's and the consumers' setmaxnreg counts of a warp-specialized kernel (before the
 * measuring switch TILEC_WS_PRODUCER_REGS of a transposing producer). */
void cg_ws_regs(cg *g, int *producer, int *consumer);
/* the producer's pieces emit_rope.c reuses: the slot's empty mbarrier, the parity bit of `slot` in the
 * alloca v (xor x; flipped in v), this thread's arrive when c (i1), the loop's trip count (i64), the iv
 * at k-step j (i64) */
LLVMValueRef cg_ws_empty_addr(cg *g, cg_ring *R, LLVMValueRef slot);
LLVMValueRef cg_ws_take_parity(cg *g, LLVMValueRef v, LLVMValueRef slot, int x);
void cg_ws_arrive_if(cg *g, LLVMValueRef mb, LLVMValueRef c);
LLVMValueRef cg_ws_trip_count(cg *g, cg_ring *R);
LLVMValueRef cg_ws_iv_of_step(cg *g, cg_ring *R, LLVMValueRef j);
/* lane 0 of every consumer warp arrives on slot's empty mbarrier when `on` (i1; NULL: always) */
void cg_ws_release(cg *g, cg_ring *R, LLVMValueRef slot, LLVMValueRef on);
/* K and V apart (R->kv_split, TILEC_ATTN_KV_SPLIT=1): release a stage's value half (the whole stage
 * when not apart), its key half (nothing when not apart), wait for its V boxes (flip: take the phase) */
void cg_ws_release_v(cg *g, cg_ring *R, LLVMValueRef slot, LLVMValueRef on);
void cg_ws_release_k(cg *g, cg_ring *R, LLVMValueRef slot);
void cg_ws_wait_v(cg *g, cg_ring *R, LLVMValueRef slot, LLVMValueRef flip);
/* at the ring loop's exit, i1 its range was not empty, and the stage of its last step (the one
 * before the read counter) */
void cg_ws_loop_bounds(cg *g, cg_ring *R, LLVMValueRef b[3]); /* lo, hi, step (i64) of the ring's loop */
LLVMValueRef cg_ws_loop_ran(cg *g, cg_ring *R);
LLVMValueRef cg_ws_last_stage(cg *g, cg_ring *R);
/* Why the producer could not recompute ring R's loop from the body's scalars (the producer /
 * consumer split's conditions, TMA-fed), or NULL; tile_prefetch.c takes the same. */
const char *cg_ws_unfit(cg *g, cg_ring *R);
const char *cg_ws_unfit_after_drain(cg *g, cg_ring *R); /* the same, dots' group waits aside (tile_prefetch.c) */
bool cg_ws_scalar(tl_func *f, int32_t v);    /* v: scalar arithmetic of parameters, program ids, ivs */

/* emit_q_tma.c (docs/pipelines.md "q by TMA"; TILEC_ATTN_Q_TMA=1): fa3's q loaded by the producer */
int cg_plan_q_tma(cg *g, int persist);       /* after cg_plan_overlap; returns the persistent end */
bool cg_q_tma_owns(cg *g, int32_t v);        /* v is q: its slot is the TMA's, not staged */
/* kernel prologue (every thread, before the split): q's map and map test (AND into ok), the two
 * mbarriers initialized by thread tid 0; returns the new ok */
LLVMValueRef cg_q_tma_prologue(cg *g, LLVMValueRef tid, LLVMValueRef ok);
void cg_q_tma_issue(cg *g);                  /* producer, per tile: wait q empty, q's boxes on q full */
/* producer_loop: an alloca "q not yet issued this tile" set to 1 (NULL without q by TMA), and
 * cg_q_tma_issue when it is still 1 (clearing it): after the tile's first K/V boxes, as
 * FlashAttention-3 issues its first K before waiting for QueryEmpty */
LLVMValueRef cg_q_tma_pending(cg *g);
void cg_q_tma_issue_pending(cg *g, LLVMValueRef pend);
void cg_q_tma_wait(cg *g);                   /* consumers, the tile's start: wait q full */
void cg_q_tma_empty_wait(cg *g);             /* producer: wait q empty (its next parity), no boxes */
void cg_q_tma_full_arrive(cg *g);            /* producer: arrive on q full without a transaction */
void cg_q_tma_tile_empty_wait(cg *g, LLVMValueRef on); /* consumers: this tile's phase of q empty where on (emit_o_slot.c) */
void cg_q_tma_prefetch_l2(cg *g, LLVMValueRef ok); /* producer thread, the tile's scalars bound: q's boxes into L2 (q_l2) */

/* attn_sched.c (TILEC_ATTN_SCHED=1, docs/pipelines.md "Causal tiles from a counter") */
int cg_plan_attn_sched(cg *g, int persist);  /* after cg_plan_q_tma; returns the persistent end */
void cg_attn_sched_begin(cg *g, cg_tiles *T, bool producer); /* the tile loop's head and the tile's pids */
void cg_attn_sched_end(cg *g, cg_tiles *T, bool producer);   /* the next take; after the loop the end's hand-over */
void cg_attn_sched_publish(cg *g);           /* producer, after q empty's wait: the tile into the shared word */
/* TILEC_ATTN_PERSIST=1 (p->q_plain): at the loop's preheader, q's boxes by thread 0 unless the tile
 * before issued them, then every thread waits for q full; in tile_prefetch.c, the next tile's boxes */
void cg_q_tma_plain_start(cg *g);
void cg_q_tma_plain_prefetch(cg *g);
/* consumers, the loop's exit: arrive on q empty (q_early: only when the loop did not run, `ran` i1) */
void cg_q_tma_release(cg *g, LLVMValueRef ran);
/* consumers, q_early: in loop L's body after the score dot's wait_group 1, arrive on q empty in the
 * last iteration (the tile's last score dot is done: the last step's softmax and value dot then cover q) */
void cg_q_tma_release_in_loop(cg *g, int32_t L);

/* emit_o_tma.c (docs/pipelines.md "O by a TMA store"; TILEC_ATTN_O_TMA=1): fa3's O through q's slot */
int cg_plan_o_tma(cg *g, int persist);       /* after cg_plan_epilogue; returns persist (q's slot reused) */
LLVMValueRef cg_o_tma_prologue(cg *g, LLVMValueRef ok); /* O's map and map test (AND into ok) */
bool cg_o_tma_store(cg *g, tl_op *o);        /* o is O's store: emitted through the slot and TMA */
/* emit_o_slot.c (docs/pipelines.md "O through the last stage"; the default on short tiles, TILEC_ATTN_O_SLOT=1
 * every tile): O through the tile's last ring stage, "q empty" at the main loop's exit */
typedef struct cg_o_slot_at {
  LLVMValueRef taken, last; /* i1 O goes through the last stage (cg_o_slot_taken); i32 the loop's last stage */
  LLVMValueRef a, b;      /* O's atom bases: atom i < o_slot_nv at a + i atoms, the rest at b + i atoms */
} cg_o_slot_at;
int cg_plan_o_slot(cg *g, int persist);      /* after cg_plan_o_tma; returns persist (nothing new) */
bool cg_o_slot_on(cg *g);
LLVMValueRef cg_o_slot_taken(cg *g, LLVMValueRef ran); /* i1: this tile's O goes through the last stage */
/* the store's start: ran / last, bar.sync 9, 256, the atoms' bases (q's slot, qbase, when the loop did not run) */
void cg_o_slot_begin(cg *g, LLVMValueRef qbase, cg_o_slot_at *at);
/* after the store thread's wait_group.read (one: i32 1 on thread 128 w): its releases, count 4 each */
void cg_o_slot_end(cg *g, const cg_o_slot_at *at, LLVMValueRef one);

/* emit_rope.c (docs/pipelines.md "RoPE in fa3's producer"; TILEC_ROPE_PRODUCER=1) */
void cg_rope_plan(cg *g);                    /* in cg_make_plan, before the streams: p->rope, p->rope_skip */
int cg_rope_plan_end(cg *g, int persist);    /* after the ring and fa3 are planned: the check, the mbarriers */
void cg_rope_regs(cg *g, int *producer, int *consumer); /* the setmaxnreg split with the rotation */
void cg_rope_preamble(cg *g);                /* consumers, before the body: the scratch in q's slots */
void cg_rope_preamble_end(cg *g);            /* at the main loop (or the body's end): that scratch ends */
/* The producer's k-loop of one tile with the rotation (all 128 threads; slots `wr`, empty phase bits
 * `ph`, loaded phase bits `lph`). */
void cg_rope_producer_loop(cg *g, cg_ring *R, LLVMValueRef wr, LLVMValueRef ph, LLVMValueRef lph, LLVMValueRef ptid);

/* emit_cluster.c (docs/pipelines.md "Clusters") */
/* Decide the cluster (after cg_ws_plan made the ring warp-specialized): p->cluster and the
 * streams' mcast, or the reason not in the note. */
void cg_cluster_plan(cg *g, cg_ring *R, tl_sbuf *note);
LLVMValueRef cg_cluster_rank(cg *g);                     /* i32 %cluster_ctarank */
void cg_cluster_sync(cg *g);                             /* barrier.cluster arrive (release) + wait (acquire) */
bool cg_cluster_scope(void); /* TILEC_CLUSTER_SCOPE=cluster: the slot releases at cluster scope (measuring) */
/* When `on` (i1), arrive on the mbarrier at local shared address mb (i32) of the other CTA of the cluster. */
void cg_cluster_arrive_peer(cg *g, LLVMValueRef mb, LLVMValueRef on);
/* Stream s's boxes for coordinates st (innermost first, rank dims) into slot base sbase: this
 * CTA's half rows of each box, multicast to both CTAs, completing on mbarrier mb of each. */
void cg_cluster_issue_boxes(cg *g, cg_stream *s, int rank, LLVMValueRef *st, LLVMValueRef sbase, LLVMValueRef mb);

#endif
