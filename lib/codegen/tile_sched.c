/* tile_sched.c: requires the main-loop plan (cg_make_plan: p->persist, p->ws);
 * emits the kernel body after the prologue: once per program (the grid as
 * launched), or, for persistent CTAs, a loop over the output tiles of the
 * logical grid (the grid clause, evaluated in the kernel) in grouped order,
 * program_id / num_programs being the tile's.  docs/pipelines.md
 * "Persistent CTAs".
 *
 * Tile order (Triton's grouped ordering, CUTLASS's swizzle): tile t of the
 * g0 x g1 (x g2) grid lies in group t / (G * g1) of G rows of program_id(0);
 * inside it program_id(0) moves fastest.  The CTAs that run at one time
 * (t .. t + #CTAs) then cover about G rows and #CTAs / G columns, so their
 * A and B tiles are read from L2 about #CTAs / G and G times instead of
 * once per tile row / column.
 *
 * Clusters of 2 (emit_cluster.c): the unit is a pair of tiles 2q, 2q + 1
 * along program_id(a): cluster c takes pairs c, c + #clusters, ... of the
 * grid of pairs (ceil(g_a / 2) along axis a) in the same grouped order (G/2
 * pair rows when a = 0, so a group still spans G tile rows), and its CTA of
 * rank r the pair's tile 2q + r.  When g_a is odd the last pair's second
 * tile is past the grid: g->phantom. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_env.h"

#include "ring.h"

int cg_tile_group(void) {
  const char *e = tl_code_env("TILEC_TILE_GROUP");
  int v = e ? atoi(e) : 0;
  return v >= 1 && v <= 64 ? v : 8;
}

static LLVMValueRef cluster_sreg(cg *g, const char *name) {
  char txt[64];
  snprintf(txt, sizeof txt, "mov.u32 $0, %%%s;", name);
  return cg_asm(g, g->i32, txt, "=r", NULL, 0, false);
}

static void grouped_pids(cg *g, LLVMValueRef *pg, int cluster, LLVMValueRef t);

/* The grid axis whose consecutive programs touch adjacent memory in a row kernel: the
 * program id that the first load's view depends on in its innermost such dimension; -1 when
 * none.  docs/rows.md "rows4". */
static int fast_grid_axis(tl_func *f) {
  for (int i = 0; i < f->body.ops.len; i++) {
    tl_op *o = &f->ops.data[f->body.ops.data[i]];
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_load) continue;
    int rank = tl_val(f, o->opnd[0])->type.rank;
    for (int d = rank - 1; d >= 0; d--)
      for (int a = 0; a < 3; a++)
        if (tl_from_program_id(f, o->opnd[1 + d], a)) return a;
  }
  return -1;
}

/* Row kernels (`TILEC_GRID_ORDER=0` off): the launch order (ctaid.x fastest) walks program_id(a)
 * fastest for a = fast_grid_axis, the other axes after it in order, so the CTAs running at one
 * time read adjacent memory (swiglu's column blocks of a row block, rope's heads of a token)
 * instead of one small piece of every row. */
int cg_grid_order_axis(cg *g) {
  if (!g->f->access_split || tl_code_env_off("TILEC_GRID_ORDER")) return -1;
  return fast_grid_axis(g->f);
}

static void grid_order(cg *g) {
  int a = cg_grid_order_axis(g);
  if (a <= 0) return;
  LLVMValueRef n[3], c[3];
  for (int d = 0; d < 3; d++) n[d] = cg_sreg(g, "nctaid", d), c[d] = cg_sreg(g, "ctaid", d);
  /* one program along axis a (rope with every head in one program), or 2^32 CTAs or more (the
   * linear index in 32 bits): the launch's own ids, past the divisions */
  LLVMValueRef total = LLVMBuildZExt(g->B, n[0], g->i64, "");
  for (int d = 1; d < 3; d++) total = LLVMBuildMul(g->B, total, LLVMBuildZExt(g->B, n[d], g->i64, ""), "");
  LLVMValueRef plain = LLVMBuildOr(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, n[a], cg_i32(g, 1), ""),
                                   LLVMBuildICmp(g->B, LLVMIntUGT, total, cg_i64(g, 0xffffffffLL), ""), "");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef remap = LLVMAppendBasicBlockInContext(g->C, g->fn, "grid.order");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->C, g->fn, "grid.join");
  LLVMBuildCondBr(g->B, plain, join, remap);
  LLVMPositionBuilderAtEnd(g->B, remap);
  LLVMValueRef l = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, c[2], n[1], ""), c[1], "");
  l = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, l, n[0], ""), c[0], "cta");
  int order[3] = {a, a == 0 ? 1 : 0, a == 2 ? 1 : 2};
  LLVMValueRef p[3];
  p[order[0]] = LLVMBuildURem(g->B, l, n[order[0]], "");
  l = LLVMBuildUDiv(g->B, l, n[order[0]], "");
  p[order[1]] = LLVMBuildURem(g->B, l, n[order[1]], "");
  p[order[2]] = LLVMBuildUDiv(g->B, l, n[order[1]], "");
  LLVMBuildBr(g->B, join);
  LLVMPositionBuilderAtEnd(g->B, join);
  for (int d = 0; d < 3; d++) {
    g->pid[d] = LLVMBuildPhi(g->B, g->i32, "pid");
    LLVMValueRef in[2] = {c[d], p[d]};
    LLVMBasicBlockRef bb[2] = {from, remap};
    LLVMAddIncoming(g->pid[d], in, bb, 2);
  }
}

void cg_tiles_begin(cg *g, cg_tiles *T) {
  memset(g->pid, 0, sizeof g->pid);
  g->phantom = NULL;
  if (!T->persist && !T->one_trip) {
    if (!cg_attn_order(g)) grid_order(g); /* (attn_order.c: a causal attention grid's order) */
    return;
  }
  T->tv = LLVMBuildAlloca(g->PB, g->i32, "tile");
  LLVMValueRef t0 = cg_sreg(g, "ctaid", 0), end = T->ntiles;
  /* a cluster: pairs of tiles along program_id(a), the cluster's index and count */
  int a = T->cluster - 1;
  LLVMValueRef pg[2] = {g->lgrid[0], g->lgrid[1]};
  if (T->cluster) {
    pg[a] = LLVMBuildLShr(g->B, LLVMBuildAdd(g->B, g->lgrid[a], cg_i32(g, 1), ""), cg_i32(g, 1), "pairs");
    end = LLVMBuildMul(g->B, LLVMBuildMul(g->B, pg[0], pg[1], ""), g->lgrid[2], "npairs");
    t0 = cluster_sreg(g, "clusterid.x");
  }
  if (T->persist && T->first_off) /* a ping-pong consumer: every other tile of the CTA's list */
    t0 = LLVMBuildAdd(g->B, t0, LLVMBuildMul(g->B, T->first_off, cg_sreg(g, "nctaid", 0), ""), "");
  if (!T->persist) { /* t0 .. t0 + 1, a bound LLVM cannot see through */
    LLVMValueRef e = LLVMBuildAdd(g->B, t0, cg_i32(g, 1), "");
    end = cg_asm(g, g->i32, "mov.b32 $0, $1;", "=r,r", &e, 1, true);
  }
  LLVMBuildStore(g->B, t0, T->tv);
  T->head = LLVMAppendBasicBlockInContext(g->C, g->fn, "tile.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "tile.body");
  T->exit = LLVMAppendBasicBlockInContext(g->C, g->fn, "tile.exit");
  LLVMBuildBr(g->B, T->head);
  LLVMPositionBuilderAtEnd(g->B, T->head);
  LLVMValueRef t = LLVMBuildLoad2(g->B, g->i32, T->tv, "");
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntULT, t, end, ""), body, T->exit);
  LLVMPositionBuilderAtEnd(g->B, body);
  if (!T->persist) { /* the launch's own program ids, or attn_order.c's order of them */
    cg_attn_order(g);
    return;
  }
  grouped_pids(g, pg, T->cluster, t);
  if (T->cluster) { /* the pair's tile of this CTA, and whether it is past the grid */
    g->pid[a] = LLVMBuildAdd(g->B, LLVMBuildShl(g->B, g->pid[a], cg_i32(g, 1), ""), cg_cluster_rank(g), "pidc");
    g->phantom = LLVMBuildICmp(g->B, LLVMIntUGE, g->pid[a], g->lgrid[a], "phantom");
  }
}

/* g->pid of tile (or pair) t of the pg[0] x pg[1] (x lgrid[2]) grid in the grouped order. */
static void grouped_pids(cg *g, LLVMValueRef *pg, int cluster, LLVMValueRef t) {
  LLVMValueRef g0 = pg[0], g1 = pg[1];
  int G = cg_tile_group();
  if (cluster == 1) G = G > 1 ? G / 2 : 1; /* (pair rows: still G tile rows) */
  LLVMValueRef g01 = LLVMBuildMul(g->B, g0, g1, "");
  LLVMValueRef z = LLVMBuildUDiv(g->B, t, g01, ""), r = LLVMBuildURem(g->B, t, g01, "");
  LLVMValueRef in_group = LLVMBuildMul(g->B, cg_i32(g, G), g1, "");
  LLVMValueRef first = LLVMBuildMul(g->B, LLVMBuildUDiv(g->B, r, in_group, ""), cg_i32(g, G), "");
  LLVMValueRef left = LLVMBuildSub(g->B, g0, first, "");
  LLVMValueRef gs = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, left, cg_i32(g, G), ""), left,
                                    cg_i32(g, G), "");
  LLVMValueRef in = LLVMBuildURem(g->B, r, in_group, "");
  g->pid[0] = LLVMBuildAdd(g->B, first, LLVMBuildURem(g->B, in, gs, ""), "pid0");
  g->pid[1] = LLVMBuildUDiv(g->B, in, gs, "pid1");
  g->pid[2] = z;
}

void cg_tile_pids(cg *g, LLVMValueRef t, LLVMValueRef pid[3]) {
  LLVMValueRef save[3] = {g->pid[0], g->pid[1], g->pid[2]};
  grouped_pids(g, g->lgrid, 0, t);
  for (int d = 0; d < 3; d++) {
    pid[d] = g->pid[d];
    g->pid[d] = save[d];
  }
}

/* nctaid.x, the persistent tile loop's step.  Under TILEC_ATTN_Q_PREFETCH (p->q_l2) read where it is added, in an
 * asm LLVM does not hoist: kept in a register across the loop, ptxas spilled it (4 B) in fa3's producer, whose 24
 * registers the prefetch's coordinates share; elsewhere the intrinsic, as always. */
LLVMValueRef cg_tiles_nctaid(cg *g) {
  if (g->plan && g->plan_f == g->f && g->plan->q_l2) return cg_asm(g, g->i32, "mov.u32 $0, %nctaid.x;", "=r", NULL, 0, true);
  return cg_sreg(g, "nctaid", 0);
}

void cg_tiles_end(cg *g, cg_tiles *T) {
  if (!T->persist && !T->one_trip) return;
  LLVMValueRef t = LLVMBuildLoad2(g->B, g->i32, T->tv, "");
  LLVMValueRef step = T->cluster ? cluster_sreg(g, "nclusterid.x") : T->persist ? cg_tiles_nctaid(g) : cg_i32(g, 1);
  if (T->persist && T->step_mul > 1) step = LLVMBuildMul(g->B, step, cg_i32(g, T->step_mul), "");
  LLVMBuildStore(g->B, LLVMBuildAdd(g->B, t, step, ""), T->tv);
  LLVMBuildBr(g->B, T->head);
  LLVMPositionBuilderAtEnd(g->B, T->exit);
  memset(g->pid, 0, sizeof g->pid);
  g->phantom = NULL;
}

/* The logical grid (the grid clause's values, 1 where it has fewer dims)
 * into g->lgrid, and the tile count; at the builder's position. */
LLVMValueRef cg_logical_grid(cg *g) {
  int32_t *ys = NULL;
  int ny = 0;
  cg_emit_region(g, &g->f->grid, &ys, &ny);
  for (int d = 0; d < 3; d++) {
    LLVMValueRef x = d < ny ? cg_get(g, ys[d])->r[0] : cg_i32(g, 1);
    if (LLVMTypeOf(x) != g->i32) x = LLVMBuildTrunc(g->B, x, g->i32, "");
    g->lgrid[d] = x;
  }
  return LLVMBuildMul(g->B, LLVMBuildMul(g->B, g->lgrid[0], g->lgrid[1], ""), g->lgrid[2], "ntiles");
}

void cg_emit_program(cg *g) {
  cg_plan *p = g->plan && g->plan_f == g->f ? g->plan : NULL;
  cg_tiles T = {.persist = p && p->persist, .cluster = p && p->persist ? p->cluster : 0};
  /* a row kernel's evict-first L2 policy (emit_memory.c access_hint), made once */
  g->row_pf = NULL;
  g->row_policy = cg_row_hints_policy(g)
                      ? cg_asm(g, g->i64, "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l", NULL, 0, false)
                      : NULL;
  cg_epi_prologue(g); /* (before the warp-specialized split rebinds the parameters) */
  cg_atomic_tma_prologue(g);
  if (T.persist) T.ntiles = cg_logical_grid(g);
  if (!T.persist && !(p && p->ws) && cg_rows_active(g)) { /* a row kernel: emit_rows.c */
    cg_emit_rows(g);
    LLVMBuildRetVoid(g->B);
    return;
  }
  if (p && p->ws) {
    /* not persistent: still a loop (of one tile) around the body, so LLVM
     * keeps the values made before it out of the main loop's exit block
     * (ptxas: C7514, emit_ws.c) */
    T.one_trip = !T.persist;
    cg_ws_emit_program(g, &T);
    return;
  }
  cg_tiles_begin(g, &T);
  if (!T.persist) cg_row_prefetch(g); /* emit_row_prefetch.c: a row kernel's later rows into L2 */
  for (int i = 0; p && T.persist && i < p->nring; i++) /* tile_prefetch.c: the loop it steps through */
    if (p->rings[i].prefetch) p->rings[i].pf_tiles = &T;
  /* every warp is past the previous tile's main loop (its slots are
   * refilled by the next tile's ring prologue) */
  if (T.persist) cg_barrier(g);
  cg_emit_region(g, &g->f->body, NULL, NULL);
  cg_row_prefetch_end(g);
  for (int i = 0; p && i < p->nring; i++) p->rings[i].pf_tiles = NULL; /* (T ends here) */
  cg_tiles_end(g, &T);
  cg_epi_kernel_end(g);
  cg_atomic_tma_kernel_end(g);
  LLVMBuildRetVoid(g->B);
}
