/* emit_o_tma.c: requires fa3's q by TMA (emit_q_tma.c: p->q_tma, not TILEC_ATTN_PERSIST=1's
 * plain form, not =2's early arrive); decides and emits the fa3 form's O epilogue through q's
 * shared slot and a TMA store (TILEC_ATTN_O_TMA, default on since the twenty-first session: H200 +1-5 % at
 * D128, +3-12 % at D256, nothing slower by more than 0.3 %; =0 (any value but 1) off; docs/pipelines.md "O by a TMA store").
 *
 * Per tile, each consumer warpgroup w (64 of the tile's 128 rows: the accumulator's warp bit 2):
 *   every thread: st.shared.b32 of its O words (bf16 pairs) into q's slot, the same
 *                 [D/64][rows][64] 128-byte-swizzled atoms the q boxes land in (its own rows: the
 *                 warpgroup's score dots, all waited for, read only those)
 *   fence.proxy.async.shared::cta                  the generic writes seen by the TMA unit
 *   bar.sync 7 + w, 128                            the warpgroup's writes all done
 *   thread 128 w: D/64 boxes of 64x64 (cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group,
 *                 rows past the tensor's end clipped by the copy engine: the ragged last tile
 *                 needs no predicate), commit_group, wait_group.read 0 (the slot read), then
 *                 arrives on "q empty" (count 2 with this switch: one arrival per warpgroup, in
 *                 place of the 8 warps' at the main loop's exit)
 * so the producer's next q boxes overwrite the slot only after both warpgroups' stores read it;
 * the global writes complete under the next tile.  The slot's next O writes come after the next
 * tile's "q full" wait, i.e. after that arrive.  O's tensor map is a 4th hidden map (rank of O,
 * box 64 x rows/2); a tensor failing its map test runs the no-TMA form (the launcher; the kernel
 * assumes it, cg_tma_assume).  TILEC_ATTN_O_SLOT=1 moves the atoms into the tile's last ring stage and
 * "q empty" back to the main loop's exit (emit_o_slot.c). */
#include <stdio.h>
#include <string.h>

#include "ring.h"
#include "code_env.h"

static bool is_tile(tl_func *f, int32_t v) { return tl_val(f, v)->type.kind == TL_KIND_TILE; }

/* Why O does not go by a TMA store, or NULL; *store: the store op. */
static const char *o_tma_unfit(cg *g, int32_t *store) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  if (!p->q_tma) return "q is not loaded by TMA (TILEC_ATTN_Q_TMA)";
  if (p->q_plain || p->q_early) return "q by TMA in its TILEC_ATTN_PERSIST=1 or TILEC_ATTN_Q_TMA=2 form";
  if (p->ws == TL_WS_PINGPONG || f->warps != 8) return "not two consumer warpgroups on one tile";
  if (p->epi) return "the epilogue is in sub-tiles";
  int32_t s = -1;
  for (int i = 0; i < f->ops.len; i++) {
    tl_op *o = &f->ops.data[i];
    if ((o->flags & TL_OPF_DEAD) || o->opc != TL_OP_store || !is_tile(f, o->opnd[o->nopnd - 1])) continue;
    if (s >= 0) return "more than one store of a tile";
    s = i;
  }
  if (s < 0) return "no store of a tile";
  tl_op *o = tl_op_at(f, s);
  if (o->parent != -1) return "the store is not in the kernel's body";
  tl_value *tv = tl_val(f, o->opnd[0]);
  if (tv->def >= 0 || tv->type.kind != TL_KIND_TENSOR) return "not a store into a tensor parameter";
  int rank = tv->type.rank;
  if (rank < 2 || rank > 5) return "the tensor's rank is not 2..5";
  if (o->nopnd != 2 + rank) return "a masked store";
  for (int d = 0; d < rank; d++) {
    if ((o->dims[d] != 0) != (d >= rank - 2)) return "the tile is not the last two dims of its tensor";
    if (is_tile(f, o->opnd[1 + d])) return "a scattered store";
  }
  const tl_type *t = &tl_val(f, o->opnd[o->nopnd - 1])->type;
  const tl_type *q = &tl_val(f, p->q_val)->type;
  if (tl_dtype_bytes((tl_dtype)t->dtype) != 2 || tl_dtype_bytes((tl_dtype)tv->type.dtype) != 2)
    return "the stored elements are not 2 bytes";
  if (t->rank != 2 || t->shape[0] != q->shape[0] || t->shape[1] != q->shape[1]) return "O's tile is not q's shape";
  const tl_layout *l = tl_layout_at(f, t->layout);
  int half = t->shape[0] / 2, colmask = 0;
  if (l->nreg < 1 || l->reg[0][0] != 0 || l->reg[0][1] != 1) return "the layout's registers do not pair columns";
  if (l->nwarp != 3 || l->warp[2][0] != half || l->warp[2][1] != 0) return "warp bit 2 is not the tile's lower half";
  for (int j = 0; j < l->nreg; j++)
    if (l->reg[j][0] >= half) return "a register reaches the other warpgroup's rows";
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++) {
    if (l->lane[j][0] >= half) return "a lane reaches the other warpgroup's rows";
    colmask |= l->lane[j][1];
  }
  for (int j = 0; j < 2; j++) {
    if (l->warp[j][0] >= half) return "a warp reaches the other warpgroup's rows";
    colmask |= l->warp[j][1];
  }
  if (colmask >= 64) return "a lane or warp spreads columns over more than one 64-column atom";
  if (p->ntma >= TL_MAX_TMA) return "more tensor maps than the launcher takes";
  *store = s;
  return NULL;
}

int cg_plan_o_tma(cg *g, int persist) {
  cg_plan *p = g->plan;
  tl_func *f = g->f;
  const char *env = tl_code_env("TILEC_ATTN_O_TMA");
  if (env && strcmp(env, "1")) return persist; /* (unset: on; =0 or any other value: off, silent) */
  if (!p->turns_late || !p->ws_attn) return persist; /* (not the fa3 form: silent, as q's switch) */
  int32_t s = -1;
  const char *why = o_tma_unfit(g, &s);
  tl_sbuf note = {0};
  if (why) {
    tl_sbuf_printf(&note, "O by TMA not taken (TILEC_ATTN_O_TMA: %s)", why);
  } else {
    tl_op *o = tl_op_at(f, s);
    tl_value *tv = tl_val(f, o->opnd[0]);
    p->o_tma = true;
    p->o_store = s;
    p->o_map = cg_tma_map_add(p, tv->index, 64, p->q_rows / 2, 128, tv->type.dtype);
    tl_sbuf_printf(&note, "O by TMA (TILEC_ATTN_O_TMA; =0 off): %s: each consumer warpgroup writes its %d rows into q's "
                          "slot (128-byte swizzle), fence.proxy.async, bar.sync 7 + w, then one thread stores %d "
                          "boxes of %dx64, waits for their read of the slot and arrives on \"q empty\" (2 arrivals)",
                   f->params.data[tv->index].name, p->q_rows / 2, p->q_boxes, p->q_rows / 2);
  }
  p->o_note = tl_strdup(&g->ctx->arena, note.data);
  tl_sbuf_free(&note);
  return persist;
}

LLVMValueRef cg_o_tma_prologue(cg *g, LLVMValueRef ok) {
  cg_plan *p = g->plan;
  if (!p->o_tma) return ok;
  tl_op *o = tl_op_at(g->f, p->o_store);
  tl_value *tv = tl_val(g->f, o->opnd[0]);
  ok = cg_tma_map_test(g, ok, &g->tensors[tv->index], tv->type.rank, 2);
  p->tmap[p->o_map] = cg_tma_map_addr(g, p->o_map);
  return ok;
}

/* The f32 source x of v = cast<bf16|f16>(x) in v's layout (one cvt.rn.*x2.f32 a word), or NULL. */
static cg_val *f32_source(cg *g, int32_t v, const char **cvt) {
  tl_value *vv = tl_val(g->f, v);
  tl_op *cv = vv->def >= 0 ? tl_op_at(g->f, vv->def) : NULL;
  if (!cv || cv->opc != TL_OP_cast) return NULL;
  const tl_type *src = &tl_val(g->f, cv->opnd[0])->type;
  if (src->dtype != TL_F32 || src->layout != vv->type.layout) return NULL;
  if (vv->type.dtype == TL_BF16) *cvt = "cvt.rn.bf16x2.f32 $0, $2, $1;";
  else if (vv->type.dtype == TL_F16) *cvt = "cvt.rn.f16x2.f32 $0, $2, $1;";
  else return NULL;
  return cg_get(g, cv->opnd[0]);
}

bool cg_o_tma_store(cg *g, tl_op *o) {
  cg_plan *p = g->plan && g->plan_f == g->f ? g->plan : NULL;
  tl_func *f = g->f;
  if (!p || !p->o_tma || tl_op_at(f, p->o_store) != o) return false;
  int32_t v = o->opnd[o->nopnd - 1];
  int32_t lid = tl_val(f, v)->type.layout;
  const tl_layout *l = tl_layout_at(f, lid);
  cg_val *sv = cg_get(g, v);
  const char *cvt = NULL;
  cg_val *wide = f32_source(g, v, &cvt);
  int rows = p->q_rows, half = rows / 2, atom = rows * 128;
  LLVMValueRef base = cg_add_c(g, cg_smem_base32(g), p->vstream[p->q_val]);
  /* TILEC_ATTN_O_SLOT=1: the atoms in the last ring stage (emit_o_slot.c), q's slot if the loop did not run */
  cg_o_slot_at at;
  if (p->o_slot) cg_o_slot_begin(g, base, &at);
  /* the words: the same atoms and swizzle as q's boxes (row_l carries the warpgroup's half) */
  cg_soff so, so2;
  LLVMValueRef row_l = cg_lane_warp(g, lid, 0), col_l = cg_lane_warp(g, lid, 1);
  cg_soff_init_atoms(g, &so, p->o_slot ? at.a : base, atom, row_l, cg_mul_c(g, col_l, 2), 127);
  if (p->o_slot) cg_soff_init_atoms(g, &so2, at.b, atom, row_l, cg_mul_c(g, col_l, 2), 127);
  for (int32_t r = 0; r < tl_layout_nregs(l); r += 2) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(l, r, c);
    LLVMValueRef word;
    if (wide) { /* register r in the low half, r + 1 in the high half */
      LLVMValueRef xy[2] = {wide->r[r], wide->r[r + 1]};
      word = cg_asm(g, g->i32, cvt, "=r,f,f", xy, 2, false);
    } else if (LLVMTypeOf(sv->r[r]) != g->i16) {
      LLVMValueRef halves[2] = {sv->r[r], sv->r[r + 1]};
      word = cg_asm(g, g->i32, "{ .reg .b32 hi; cvt.u32.u16 $0, $1; cvt.u32.u16 hi, $2; shl.b32 hi, hi, 16; or.b32 $0, hi, $0; }",
                    "=r,h,h", halves, 2, false);
    } else {
      LLVMValueRef lo16 = LLVMBuildZExt(g->B, sv->r[r], g->i32, "");
      LLVMValueRef hi16 = LLVMBuildZExt(g->B, sv->r[r + 1], g->i32, "");
      word = LLVMBuildOr(g->B, lo16, LLVMBuildShl(g->B, hi16, cg_i32(g, 16), ""), "");
    }
    cg_soff *sp = p->o_slot && c[1] / 64 >= p->o_slot_nv ? &so2 : &so; /* (the atoms past the V slot: their own region) */
    LLVMValueRef args[2] = {cg_soff_at(g, sp, c[0], c[1] * 2), word};
    cg_asm_void(g, "st.shared.b32 [$0], $1;", "r,r,~{memory}", args, 2);
  }
  cg_asm_void(g, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  LLVMValueRef tid = cg_tid32(g);
  LLVMValueRef wg = LLVMBuildLShr(g->B, tid, cg_i32(g, 7), "o.wg");
  LLVMValueRef bar = LLVMBuildAdd(g->B, wg, cg_i32(g, 7), "");
  cg_asm(g, g->vd, "bar.sync $0, 128;", "r,~{memory}", &bar, 1, true);
  /* thread 128 w: the warpgroup's boxes (coordinates innermost first: column, row, the indexed dims) */
  int rank = tl_val(f, o->opnd[0])->type.rank;
  LLVMValueRef st[TL_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    st[d] = cg_get(g, o->opnd[1 + d])->r[0];
    if (LLVMTypeOf(st[d]) != g->i32) st[d] = LLVMBuildTrunc(g->B, st[d], g->i32, "");
  }
  LLVMValueRef row0 = LLVMBuildAdd(g->B, st[rank - 2], cg_mul_c(g, wg, half), "");
  LLVMValueRef wbase = LLVMBuildAdd(g->B, base, cg_mul_c(g, wg, (int64_t)half * 128), "");
  /* O through the last stage: the atoms past the V slot (their own region) from a second base, $(4 + rank) */
  bool two = p->o_slot && p->o_slot_nv < p->q_boxes;
  if (p->o_slot) wbase = LLVMBuildAdd(g->B, at.a, cg_mul_c(g, wg, (int64_t)half * 128), "");
  char txt[1024], cons[64];
  int n = snprintf(txt, sizeof txt, "{ .reg .pred p; .reg .b32 a, c; setp.eq.u32 p, $0, 0; ");
  for (int b = 0; b < p->q_boxes; b++) {
    n += snprintf(txt + n, sizeof txt - (size_t)n,
                  "add.u32 a, $%d, %d; add.s32 c, $3, %d; @p cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group "
                  "[$1, {c", two && b >= p->o_slot_nv ? 4 + rank : 2, b * atom, b * 64, rank);
    for (int d = 1; d < rank; d++) n += snprintf(txt + n, sizeof txt - (size_t)n, ", $%d", 3 + d);
    n += snprintf(txt + n, sizeof txt - (size_t)n, "}], [a]; ");
  }
  if (p->o_slot) /* (the releases after the read: emit_o_slot.c) */
    snprintf(txt + n, sizeof txt - (size_t)n, "@p cp.async.bulk.commit_group; @p cp.async.bulk.wait_group.read 0; }");
  else
    snprintf(txt + n, sizeof txt - (size_t)n,
             "@p cp.async.bulk.commit_group; @p cp.async.bulk.wait_group.read 0; "
             "@p mbarrier.arrive.shared::cta.b64 _, [$%d]; }",
             3 + rank);
  snprintf(cons, sizeof cons, "r,l,r");
  for (int d = 0; d <= rank + two; d++) snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",r");
  snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",~{memory}");
  LLVMValueRef args[5 + TL_MAX_RANK];
  args[0] = LLVMBuildAnd(g->B, tid, cg_i32(g, 127), "");
  args[1] = p->tmap[p->o_map];
  args[2] = wbase;
  args[3] = st[rank - 1];
  args[4] = row0;
  for (int d = 2; d < rank; d++) args[3 + d] = st[rank - 1 - d];
  args[3 + rank] = cg_add_c(g, cg_smem_base32(g), p->q_mbar_off + 8); /* q empty */
  if (two) args[4 + rank] = LLVMBuildAdd(g->B, at.b, cg_mul_c(g, wg, (int64_t)half * 128), "");
  cg_asm_void(g, txt, cons, args, 4 + rank + two);
  if (p->o_slot) cg_o_slot_end(g, &at, LLVMBuildZExt(g->B, LLVMBuildICmp(g->B, LLVMIntEQ, args[0], cg_i32(g, 0), ""), g->i32, ""));
  cg_warp_converge(g);
  return true;
}
