/* emit_prologue.c: requires the plan (dot_plan.c plan_prologue) and the
 * ring's wait and barrier of this iteration (emit_ring.c); emits an operand
 * prologue's load as a read of its ring slot into registers in the load's
 * layout (ld.shared, vectors along the contiguous columns), so the
 * elementwise code that computes the dot operand from it runs as before, but
 * on a tile that was copied several stages ahead.  A gather along the row
 * dim (the box of plan_prologue) picks its row in the slot: index - box
 * start.  The ring zero-fills what lies outside the tensor, which is what
 * the load gives there.  A convert_layout of such a load (layout_assign
 * inserts one where the load has several users and its layout is not its
 * user's: attn_rope's COS / SIN rows, blocked for global loads, multiplied
 * with k's halves in theirs) reads the slot again in its own layout instead
 * of moving registers through scratch memory; the load's own read is left out
 * when every user is such a convert.  docs/pipelines.md "Operand prologues". */
#include <stdint.h>
#include <string.h>

#include "cg.h"

#include "axisinfo.h"
#include "code_env.h"
#include "ring.h"

/* Do a and b compute the same value?  The same value, equal integer
 * constants, or the same integer op / cast of operands that are (depth
 * levels at most).  A gather's row registers are built one by one (k and
 * k + 1 of W4A16's B fragments: `k0 / 8 + k / 8`, one row), so equal rows are
 * equal expressions, not the same LLVM value. */
static bool same_value(LLVMValueRef a, LLVMValueRef b, int depth) {
  if (a == b) return true;
  if (LLVMIsAConstantInt(a) && LLVMIsAConstantInt(b))
    return LLVMTypeOf(a) == LLVMTypeOf(b) && LLVMConstIntGetSExtValue(a) == LLVMConstIntGetSExtValue(b);
  if (depth == 0 || !LLVMIsAInstruction(a) || !LLVMIsAInstruction(b) || LLVMTypeOf(a) != LLVMTypeOf(b)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(a);
  if (op != LLVMGetInstructionOpcode(b)) return false;
  switch (op) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd:
  case LLVMOr: case LLVMXor: case LLVMSDiv: case LLVMUDiv: case LLVMSRem: case LLVMURem: case LLVMTrunc:
  case LLVMZExt: case LLVMSExt: break;
  default: return false;
  }
  int n = LLVMGetNumOperands(a);
  if (n != LLVMGetNumOperands(b)) return false;
  for (int i = 0; i < n; i++)
    if (!same_value(LLVMGetOperand(a, i), LLVMGetOperand(b, i), depth - 1)) return false;
  return true;
}

/* TILEC_SLOT_CSE=0: read a gather's slot once per register, as before (measuring only). */
static bool slot_cse(void) {
  return !tl_code_env_off("TILEC_SLOT_CSE");
}

/* A gather row's value for every lane and warp (TILEC_SLOT_CSE): row = P + Q with Q made of the lane,
 * the warp and constants (cg_lane_eval) and P any other value (the box start, `k0 / 8`), or Q alone.
 * Two registers whose rows have the same P and the same Q in every lane and warp read one slot row:
 * a repacked int4 B (examples/gemm_w4a16_packed.tile, rows `k0 / 8 + (kk / 32 * 4 + kk % 8 / 2)`)
 * has the 8 rows of a thread's 32-row block in one word, which neither the constancy runs nor
 * same_value see (k = 2t and 2t + 8 differ as expressions). */
typedef struct {
  bool done, ok;
  LLVMValueRef p; /* NULL: none */
  int64_t *q;     /* [warps * 32] */
} row_sig;

static void row_signature(cg *g, LLVMValueRef row, int warps, row_sig *s) {
  s->done = true, s->ok = false, s->p = NULL;
  int64_t x;
  if (!cg_lane_eval(g, row, 0, 0, &x)) {
    if (!LLVMIsAInstruction(row) || LLVMGetInstructionOpcode(row) != LLVMAdd) return;
    for (int i = 0; i < 2 && !s->p; i++)
      if (cg_lane_eval(g, LLVMGetOperand(row, 1 - i), 0, 0, &x)) s->p = LLVMGetOperand(row, i), row = LLVMGetOperand(row, 1 - i);
    if (!s->p) return;
  }
  s->q = tl_alloc(&g->f->ctx->arena, sizeof(int64_t) * 32 * (size_t)warps);
  for (int w = 0; w < warps; w++)
    for (int l = 0; l < 32; l++)
      if (!cg_lane_eval(g, row, l, w, &s->q[w * 32 + l])) return;
  s->ok = true;
}

static bool same_rows(cg *g, cg_val *gix, row_sig *sig, int32_t a, int32_t b) {
  int warps = cg_all_warps(g);
  if (!sig[a].done) row_signature(g, gix->r[a], warps, &sig[a]);
  if (!sig[b].done) row_signature(g, gix->r[b], warps, &sig[b]);
  if (!sig[a].ok || !sig[b].ok || sig[a].p != sig[b].p) return false;
  return !memcmp(sig[a].q, sig[b].q, sizeof(int64_t) * 32 * (size_t)warps);
}

/* Registers of layout l along the last dim that one ld.shared reads (at most
 * 16 bytes, no lane or warp between them), 1 when under 4 bytes. */
static int slot_vector(const tl_layout *l, int eb) {
  int vec = tl_layout_contig(l), last = l->rank - 1;
  while (vec * eb > 16) vec /= 2;
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++)
    while (l->lane[j][last] && l->lane[j][last] < vec) vec /= 2;
  for (int j = 0; j < l->nwarp; j++)
    while (l->warp[j][last] && l->warp[j][last] < vec) vec /= 2;
  return vec * eb < 4 ? 1 : vec;
}

/* Load o's tile from its slot into value res (o's result, or a convert_layout
 * of it when o is no gather) in res's layout. */
static void read_slot(cg *g, tl_op *o, cg_stream *s, LLVMValueRef slot, int32_t res) {
  tl_func *f = g->f;
  tl_type *rt = &tl_val(f, res)->type;
  const tl_layout *l = cg_layout(g, res);
  int32_t n = tl_layout_nregs(l), lid = rt->layout;
  int eb = s->eb;
  tl_dtype dt = (tl_dtype)tl_val(f, o->opnd[0])->type.dtype;
  LLVMTypeRef mt = cg_mem_type(g, dt);
  /* which tensor dim is the tile's row dim, and its index (a gather: a tile) */
  int rank = tl_val(f, o->opnd[0])->type.rank, rowd = -1;
  for (int d = 0; d < rank - 1; d++)
    if (o->dims[d] != 0) rowd = d;
  cg_val *gix = NULL;
  LLVMValueRef box0 = NULL;
  if (rowd >= 0 && tl_val(f, o->opnd[1 + rowd])->type.kind == TL_KIND_TILE) {
    if (!s->prologue || s->row_base < 0) TL_INTERNAL(g->ctx, "codegen: a streamed gather without its box");
    gix = cg_get(g, o->opnd[1 + rowd]);
    box0 = cg_get(g, s->row_base)->r[0];
    if (LLVMTypeOf(box0) != g->i32) box0 = LLVMBuildTrunc(g->B, box0, g->i32, "");
  }
  int vec = slot_vector(l, eb);
  if (gix) /* a vector's registers must share their row */
    for (int32_t r0 = 0; r0 < n && vec > 1; r0 += vec)
      for (int e = 1; e < vec; e++)
        if (gix->r[r0 + e] != gix->r[r0]) vec = 1;
  LLVMValueRef base = LLVMBuildAdd(g->B, cg_smem_base32(g),
                                   LLVMBuildAdd(g->B, cg_i32(g, s->offset), LLVMBuildMul(g->B, slot, cg_i32(g, s->stage_bytes), ""), ""), "");
  /* (a ring row's tile is 1-D: its one dim is the slot's columns) */
  int cd = l->rank - 1;
  LLVMValueRef lw_row = gix || cd == 0 ? NULL : cg_lane_warp(g, lid, 0), lw_col = cg_lane_warp(g, lid, cd);
  LLVMValueRef lane_base = LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, lw_col, cg_i32(g, eb), ""), "");
  if (lw_row) lane_base = LLVMBuildAdd(g->B, lane_base, LLVMBuildMul(g->B, lw_row, cg_i32(g, s->pitch), ""), "");
  cg_val *d = cg_new_val(g, res, n);
  int bytes = vec * eb, W = bytes < 4 ? 1 : bytes / 4;
  /* a slot of swizzled atoms (plan_prologue: an A read in its fragment layout): cg_soff over the lane's row and
   * byte column, the register's constant part added (their bits are disjoint in a layout) */
  cg_soff so;
  bool atoms = s->wg_atoms && !gix && cd > 0;
  if (atoms) {
    int cb_max = 0;
    for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++) cb_max += l->lane[j][cd];
    for (int j = 0; j < l->nwarp; j++) cb_max += l->warp[j][cd];
    cg_soff_init_atoms(g, &so, base, s->rows * 128, lw_row, cg_mul_c(g, lw_col, eb), cb_max * eb);
  } else if (s->wg_atoms)
    TL_INTERNAL(g->ctx, "codegen: an operand prologue's swizzled slot read by a gather or a 1-D tile");
  bool cse = gix && slot_cse();
  /* rows whose register coordinates agree above the index's constancy run
   * have one index for every lane (the lane and warp bits add the same row
   * to both): W4A16's `k0 / 8 + kk / 8`, runs of 8, so k and k + 1 of a
   * B fragment read one word */
  int64_t run = 1;
  if (cse && rowd == 0 && rank == 2 && tl_val(f, o->opnd[1])->type.rank == 2) {
    tl_axis_analysis *A = cg_axis(g);
    run = A ? tl_axis_get(A, o->opnd[1]).constancy[0] : 1;
    if (run < 1) run = 1;
  }
  row_sig *sig = NULL;
  if (cse) {
    sig = tl_alloc(&f->ctx->arena, sizeof(row_sig) * (size_t)n);
    memset(sig, 0, sizeof(row_sig) * (size_t)n);
  }
  for (int32_t r0 = 0; r0 < n; r0 += vec) {
    if (tl_layout_canon_reg(l, r0) != r0) {
      for (int e = 0; e < vec; e++) d->r[r0 + e] = d->r[tl_layout_canon_reg(l, r0 + e)];
      continue;
    }
    int32_t k[TL_MAX_RANK];
    tl_layout_reg_coords(l, r0, k);
    if (cse) { /* a gather's earlier register of the same column and slot row: its read */
      int32_t j = 0;
      for (; j < r0; j += vec) {
        int32_t kj[TL_MAX_RANK];
        if (tl_layout_canon_reg(l, j) != j) continue;
        tl_layout_reg_coords(l, j, kj);
        if (kj[1] == k[1] &&
            (kj[0] / run == k[0] / run || same_value(gix->r[j], gix->r[r0], 6) || same_rows(g, gix, sig, j, r0)))
          break;
      }
      if (j < r0) {
        for (int e = 0; e < vec; e++) d->r[r0 + e] = d->r[j + e];
        continue;
      }
    }
    LLVMValueRef addr = atoms ? cg_soff_at(g, &so, k[0], k[cd] * eb)
                              : cg_add_c(g, lane_base, (int64_t)k[cd] * eb + (gix || cd == 0 ? 0 : (int64_t)k[0] * s->pitch));
    if (gix) {
      LLVMValueRef row = gix->r[r0];
      if (LLVMTypeOf(row) != g->i32) row = LLVMBuildTrunc(g->B, row, g->i32, "");
      row = LLVMBuildSub(g->B, row, box0, "");
      addr = LLVMBuildAdd(g->B, addr, LLVMBuildMul(g->B, row, cg_i32(g, s->pitch), ""), "");
    }
    LLVMValueRef x[16];
    if (bytes < 4) { /* one 1- or 2-byte element */
      LLVMValueRef v = cg_asm(g, eb == 1 ? g->i16 : g->i16, eb == 1 ? "ld.shared.u8 $0, [$1];" : "ld.shared.b16 $0, [$1];",
                              "=h,r,~{memory}", &addr, 1, true);
      if (eb == 1) v = LLVMBuildTrunc(g->B, v, g->i8, "");
      x[0] = LLVMBuildBitCast(g->B, v, mt, "");
    } else {
      static const char *txt[5] = {NULL, "ld.shared.b32 $0, [$1];", "ld.shared.v2.b32 {$0, $1}, [$2];", NULL,
                                   "ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];"};
      static const char *cons[5] = {NULL, "=r,r,~{memory}", "=r,=r,r,~{memory}", NULL, "=r,=r,=r,=r,r,~{memory}"};
      LLVMTypeRef words[4] = {g->i32, g->i32, g->i32, g->i32};
      LLVMValueRef rv = cg_asm(g, W == 1 ? g->i32 : LLVMStructTypeInContext(g->C, words, (unsigned)W, 0), txt[W], cons[W],
                               &addr, 1, true);
      LLVMValueRef wv[4];
      for (int w = 0; w < W; w++) wv[w] = W == 1 ? rv : LLVMBuildExtractValue(g->B, rv, (unsigned)w, "");
      int per_word = eb <= 4 ? 4 / eb : 0;
      cg_words_to_elems(g, mt, per_word, W, vec, wv, x);
    }
    for (int e = 0; e < vec; e++) d->r[r0 + e] = cg_cast(g, cg_from_mem(g, x[e], dt), dt, (tl_dtype)rt->dtype);
  }
  if (s->ring_row) cg_ring_row_other(g, o, s, res); /* (TMA filled zeros where the view leaves the tensor) */
}

/* Is load o a gather along its row dim (its index there a tile)? */
static bool is_gather(tl_func *f, const tl_op *o) {
  int rank = tl_val(f, o->opnd[0])->type.rank;
  for (int d = 0; d < rank - 1; d++)
    if (o->dims[d] != 0 && tl_val(f, o->opnd[1 + d])->type.kind == TL_KIND_TILE) return true;
  return false;
}

/* The operand prologue's stream that load op `ld` reads from, or NULL. */
static cg_stream *prologue_stream(cg *g, int32_t ld) {
  cg_plan *p = g->plan;
  if (!p || g->plan_f != g->f || ld < 0) return NULL;
  tl_op *o = tl_op_at(g->f, ld);
  if (o->opc != TL_OP_load || p->vkind[o->res[0]] != SRC_STREAM) return NULL;
  cg_stream *s = &p->streams[p->vstream[o->res[0]]];
  return s->prologue ? s : NULL;
}

static LLVMValueRef ring_slot(cg *g, const cg_stream *s) {
  for (int i = 0; i < g->plan->nring; i++)
    if (g->plan->rings[i].for_op == s->for_op) return g->plan->rings[i].rd_slot;
  return NULL;
}

void cg_prologue_read(cg *g, tl_op *o, cg_stream *s, LLVMValueRef slot) {
  tl_func *f = g->f;
  int32_t res = o->res[0];
  /* every user a convert_layout that reads the slot itself: no read here */
  bool needed = false;
  for (int32_t u = 0; u < f->ops.len && !needed; u++) {
    tl_op *x = tl_op_at(f, u);
    if (x->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < x->nopnd && !needed; k++)
      needed = x->opnd[k] == res && (x->opc != TL_OP_convert_layout || x->parent != o->parent || is_gather(f, o));
  }
  if (needed) read_slot(g, o, s, slot, res);
}

bool cg_convert_from_slot(cg *g, tl_op *c) {
  tl_func *f = g->f;
  int32_t src = c->opnd[0];
  cg_stream *s = prologue_stream(g, tl_val(f, src)->def);
  tl_op *o = s ? tl_op_at(f, tl_val(f, src)->def) : NULL;
  if (!s || c->parent != o->parent || is_gather(f, o)) return false;
  /* an earlier convert of the same load to the same layout in this body: its registers */
  tl_region *body = &tl_op_at(f, o->parent)->regions[0];
  int32_t lid = tl_val(f, c->res[0])->type.layout;
  for (int i = 0; i < body->ops.len; i++) {
    tl_op *x = tl_op_at(f, body->ops.data[i]);
    if (x == c) break;
    if (!(x->flags & TL_OPF_DEAD) && x->opc == TL_OP_convert_layout && x->opnd[0] == src &&
        tl_val(f, x->res[0])->type.layout == lid) {
      cg_val *from = cg_get(g, x->res[0]);
      cg_val *d = cg_new_val(g, c->res[0], from->n);
      for (int32_t r = 0; r < from->n; r++) d->r[r] = from->r[r];
      return true;
    }
  }
  read_slot(g, o, s, ring_slot(g, s), c->res[0]);
  return true;
}
