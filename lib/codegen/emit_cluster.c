/* emit_cluster.c: requires a warp-specialized, persistent TMA ring (emit_ws.c
 * cg_ws_plan) and f->cluster from route_pipeline; decides and emits thread-block
 * clusters of 2 CTAs whose tiles share one operand: which streams the pair
 * shares, their multicast copies, the remote release of a slot, the cluster
 * barrier, and the PTX directives that make the launch a cluster launch.
 * docs/pipelines.md "Clusters".
 *
 * The pair: CTA ranks 0 and 1 of a cluster take tiles 2q and 2q + 1 along
 * program_id(a) (a = 0: "2x1", a = 1: "1x2"; tile_sched.c).  A stream whose
 * indices do not depend on program_id(a) (B of a GEMM for 2x1, A for 1x2) is
 * the same tile for both: each CTA loads half of its rows of every box, with
 * cp.async.bulk.tensor .multicast::cluster into the same slot offset of both
 * CTAs, completing on the same full mbarrier offset of both.  So each CTA's
 * full mbarrier still expects the whole stage (its own halves and the
 * peer's), and a slot may be refilled only when the consumers of BOTH CTAs
 * are done with it: the empty mbarrier counts 2 x the consumer warps, lane 0
 * of each consumer warp arrives on its own CTA's, lane 1 on the peer's
 * (mapa + mbarrier.arrive on the peer's address), with the default
 * semantics (release at CTA scope) and the producer's plain try_wait, as
 * CUTLASS's ClusterBarrier does; TILEC_CLUSTER_SCOPE=cluster (measuring)
 * takes release / acquire at cluster scope instead.
 *
 * Start: every CTA initializes its mbarriers, fence.mbarrier_init, then the
 * cluster barrier (no copy or remote arrive reaches an uninitialized
 * mbarrier of the peer).  End: no CTA exits while the peer may still write
 * into it: the peer's copies into this CTA complete before this CTA's
 * consumers see their full mbarriers (both CTAs run the same k-steps of the
 * same tile pairs), and the peer's remote arrivals are what this CTA's
 * producer waits for in its tail (every slot released), so the producer
 * thread, and with it the CTA, outlives both.
 *
 * A ragged pair (tile 2q + 1 past the grid) still runs: its CTA's producer
 * issues its loads (its own operand at coordinates past the tensor reads
 * zeros; its half of the shared one is what the peer needs) and its
 * consumers wait for every slot and release it, without the body
 * (g->phantom; emit_ws.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "code_env.h"

/* Why ring R cannot run on clusters of 2 along program_id(axis), or NULL. */
static const char *cluster_unfit(cg *g, cg_ring *R, int axis) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  if (!R || p->ws != TL_WS_COOP || !R->ws) return "not warp-specialized (cooperative)";
  if (!p->persist) return "not persistent";
  if (!R->tma) return "the ring is not fed by TMA";
  tl_op *lo = tl_op_at(f, R->for_op);
  for (int k = 0; k < 3 && k < lo->nopnd; k++)
    if (tl_from_program_id(f, lo->opnd[k], -1)) return "the main loop's bounds depend on the tile";
  int shared = 0;
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != R->for_op) continue;
    tl_op *o = tl_op_at(f, s->load_op);
    int rank = tl_val(f, o->opnd[0])->type.rank;
    bool dep = false;
    for (int d = 0; d < rank; d++) dep = dep || tl_from_program_id(f, o->opnd[1 + d], axis);
    if (dep) continue;
    if (s->rows % 16) return "a shared tile's rows are not a multiple of 16 (two halves of whole 8-row swizzle atoms)";
    shared++;
  }
  if (!shared) return "no operand of the main loop is the same for both tiles of the pair";
  return NULL;
}

void cg_cluster_plan(cg *g, cg_ring *R, tl_sbuf *note) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  if (f->cluster != TL_CLUSTER_2X1 && f->cluster != TL_CLUSTER_1X2) return;
  int axis = f->cluster == TL_CLUSTER_2X1 ? 0 : 1;
  const char *shape = axis ? "1x2" : "2x1";
  const char *why = cluster_unfit(g, R, axis);
  if (why) {
    tl_sbuf_printf(note, "; not clustered (%s asked for: %s)", shape, why);
    return;
  }
  p->cluster = axis + 1;
  tl_sbuf_printf(note, "; cluster %s: 2 CTAs on tiles 2q, 2q+1 along program_id(%d) (tile pairs in the grouped order)", shape,
                 axis);
  for (int i = 0; i < p->nstream; i++) {
    cg_stream *s = &p->streams[i];
    if (s->for_op != R->for_op) continue;
    tl_op *o = tl_op_at(f, s->load_op);
    tl_value *tv = tl_val(f, o->opnd[0]);
    bool dep = false;
    for (int d = 0; d < tv->type.rank; d++) dep = dep || tl_from_program_id(f, o->opnd[1 + d], axis);
    if (dep) {
      tl_sbuf_printf(note, ", %s loaded by each CTA", f->params.data[tv->index].name);
      continue;
    }
    s->mcast = true;
    p->tma[s->tma].box_rows = s->rows / 2;
    tl_sbuf_printf(note, ", %s shared (each CTA loads %d of its %d rows, multicast to both)", f->params.data[tv->index].name,
                   s->rows / 2, s->rows);
  }
  tl_sbuf_printf(note, "; the empty mbarriers count both CTAs' consumer warps (a remote arrive each), a cluster barrier "
                       "after the mbarrier init");
}

LLVMValueRef cg_cluster_rank(cg *g) { return cg_asm(g, g->i32, "mov.u32 $0, %cluster_ctarank;", "=r", NULL, 0, false); }

void cg_cluster_sync(cg *g) {
  cg_asm_void(g, "barrier.cluster.arrive.release.aligned;", "~{memory}", NULL, 0);
  cg_asm_void(g, "barrier.cluster.wait.acquire.aligned;", "~{memory}", NULL, 0);
}

bool cg_cluster_scope(void) {
  const char *e = tl_code_env("TILEC_CLUSTER_SCOPE"); /* measuring only */
  return e && !strcmp(e, "cluster");
}

void cg_cluster_arrive_peer(cg *g, LLVMValueRef mb, LLVMValueRef on) {
  LLVMValueRef args[2] = {mb, LLVMBuildZExt(g->B, on, g->i32, "")};
  char txt[300];
  snprintf(txt, sizeof txt,
           "{ .reg .pred p; .reg .b32 r, a; setp.ne.b32 p, $1, 0; mov.u32 r, %%cluster_ctarank; xor.b32 r, r, 1; "
           "mapa.shared::cluster.u32 a, $0, r; @p mbarrier.arrive%s.shared::cluster.b64 _, [a]; }",
           cg_cluster_scope() ? ".release.cluster" : "");
  cg_asm_void(g, txt, "r,r,~{memory}", args, 2);
}

void cg_cluster_issue_boxes(cg *g, cg_stream *s, int rank, LLVMValueRef *st, LLVMValueRef sbase, LLVMValueRef mb) {
  cg_plan *p = g->plan;
  char txt[300], cons[64];
  snprintf(txt, sizeof txt,
           "{ .reg .b16 m; mov.b16 m, 3; cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
           ".multicast::cluster [$0], [$1, {$2",
           rank);
  snprintf(cons, sizeof cons, "r,l");
  for (int d = 1; d < rank; d++) snprintf(txt + strlen(txt), sizeof txt - strlen(txt), ", $%d", 2 + d);
  snprintf(txt + strlen(txt), sizeof txt - strlen(txt), "}], [$%d], m; }", 2 + rank);
  for (int d = 0; d <= rank; d++) snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",r");
  snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",~{memory}");
  /* this CTA's half: rows rank*half .. of each box, at rank*half box rows of
   * tma_inner*eb bytes (a box is one swizzle atom wide); half is a multiple of
   * 8 rows, so the half starts on a whole swizzle atom */
  int half = s->rows / 2;
  LLVMValueRef r = cg_cluster_rank(g);
  LLVMValueRef roff = LLVMBuildMul(g->B, r, cg_i32(g, half), "");
  LLVMValueRef boff = LLVMBuildMul(g->B, r, cg_i32(g, half * s->tma_inner * s->eb), "");
  LLVMValueRef row = LLVMBuildAdd(g->B, st[rank - 2], roff, "");
  for (int b = 0; b < s->tma_boxes; b++) {
    LLVMValueRef args[2 + TL_MAX_RANK + 1];
    args[0] = LLVMBuildAdd(g->B, cg_add_c(g, sbase, (int64_t)b * s->rows * 128), boff, "");
    args[1] = p->tmap[s->tma];
    args[2] = cg_add_c(g, st[rank - 1], (int64_t)b * s->tma_inner);
    for (int d = 1; d < rank; d++) args[2 + d] = d == 1 ? row : st[rank - 1 - d];
    args[2 + rank] = mb;
    cg_asm_void(g, txt, cons, args, 3 + rank);
  }
}

/* ---- the PTX directives ---------------------------------------------------------------- */

/* After `.maxntid` of entry `entry` in PTX text *ptx (malloc'd), the
 * directives that make every launch of it a launch of 2-CTA clusters along
 * x (the launch grid is 1-D: persistent CTAs).  LLVM 19's NVPTX back end
 * emits .maxclusterrank but not these.  false when the entry is not found. */
bool cg_cluster_directives(char **ptx, const char *entry) {
  char pat[300];
  snprintf(pat, sizeof pat, ".entry %s(", entry);
  char *at = strstr(*ptx, pat);
  if (!at) return false;
  char *mx = strstr(at, "\n.maxntid");
  char *body = strstr(at, "\n{");
  if (!mx || (body && body < mx)) return false;
  char *eol = strchr(mx + 1, '\n');
  if (!eol) return false;
  static const char add[] = "\n.reqnctapercluster 2, 1, 1\n.explicitcluster";
  size_t pre = (size_t)(eol - *ptx), len = strlen(*ptx);
  char *out = malloc(len + sizeof add);
  if (!out) return false;
  memcpy(out, *ptx, pre);
  memcpy(out + pre, add, sizeof add - 1);
  memcpy(out + pre + sizeof add - 1, *ptx + pre, len - pre + 1);
  free(*ptx);
  *ptx = out;
  return true;
}
