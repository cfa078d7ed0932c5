/* emit_layout_change.c: requires layouts; lowers the layout-changing ops (expand_dims, broadcast,
 * trans, reshape, convert_layout: cg_emit_transfer) and keeps their values' meaning; breaks nothing.
 *
 * Layout changes are free (a register renaming) when the lane and warp bases
 * of the two layouts agree through the coordinate map; otherwise they go
 * through shared memory: barrier, every thread stores its elements at their
 * row-major offset, barrier, every thread loads the elements it needs. */
#include "cg.h"
#include "code_env.h"

static bool is_zero(LLVMValueRef v) { return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0; }
static LLVMValueRef add_or(cg *g, LLVMValueRef a, LLVMValueRef b) {
  return !a ? b : !b ? a : LLVMBuildAdd(g->B, a, b, "");
}

typedef struct tmap {
  cg_map_kind kind;
  int axis;
  int src_rank, dst_rank;
  const int32_t *src_shape, *dst_shape;
  int64_t pitch; /* a rank-2 staging buffer's row pitch in elements (0: its columns, row-major) */
} tmap;

/* Result coordinates -> source coordinates (compile-time ints). */
static void map_ints(const tmap *m, const int32_t *cd, int32_t *cs) {
  for (int d = 0; d < TL_MAX_RANK; d++) cs[d] = 0;
  switch (m->kind) {
  case CG_MAP_ID:
    for (int d = 0; d < m->src_rank; d++) cs[d] = cd[d];
    break;
  case CG_MAP_EXPAND:
    for (int d = 0, k = 0; d < m->dst_rank; d++)
      if (d != m->axis) cs[k++] = cd[d];
    break;
  case CG_MAP_BCAST:
    for (int d = 0; d < m->src_rank; d++) cs[d] = m->src_shape[d] == 1 ? 0 : cd[d];
    break;
  case CG_MAP_TRANS:
    cs[0] = cd[1];
    cs[1] = cd[0];
    break;
  case CG_MAP_RESHAPE: {
    int64_t flat = 0;
    for (int d = 0; d < m->dst_rank; d++) flat = flat * m->dst_shape[d] + cd[d];
    for (int d = m->src_rank - 1; d >= 0; d--) {
      cs[d] = (int32_t)(flat % m->src_shape[d]);
      flat /= m->src_shape[d];
    }
    break;
  }
  }
}

/* Row-major offset in the source tile of the element at result coords cd
 * (compile-time ints); a reshape keeps row-major offsets. */
static int64_t flat_int(const tmap *m, const int32_t *cd) {
  int32_t cs[TL_MAX_RANK];
  int rank = m->src_rank;
  const int32_t *shape = m->src_shape;
  if (m->kind == CG_MAP_RESHAPE) {
    rank = m->dst_rank;
    shape = m->dst_shape;
    for (int d = 0; d < rank; d++) cs[d] = cd[d];
  } else {
    map_ints(m, cd, cs);
  }
  if (m->pitch && rank == 2) return (int64_t)cs[0] * m->pitch + cs[1];
  int64_t flat = 0;
  for (int d = 0; d < rank; d++) flat = flat * shape[d] + cs[d];
  return flat;
}

/* Byte offsets in the staging buffer of the registers of layout lid read
 * through map m: the map is linear, so offset = (lane/warp part, once) +
 * (register part, a constant). */
typedef struct flat_off {
  const tmap *m;
  int32_t lid;
  int bytes;
  LLVMValueRef lw; /* i32 bytes of the lane/warp part */
} flat_off;

static void flat_begin(cg *g, flat_off *fo, const tmap *m, int32_t lid, int bytes) {
  fo->m = m;
  fo->lid = lid;
  fo->bytes = bytes;
  fo->lw = NULL;
  for (int j = 0; j < m->dst_rank; j++) {
    int32_t unit[TL_MAX_RANK] = {0};
    unit[j] = 1;
    int64_t coef = flat_int(m, unit) * bytes;
    LLVMValueRef lw = cg_lane_warp(g, lid, j);
    if (!coef || is_zero(lw)) continue;
    LLVMValueRef x = coef == 1 ? lw : LLVMBuildMul(g->B, lw, cg_i32(g, coef), "");
    fo->lw = add_or(g, fo->lw, x);
  }
}

static LLVMValueRef flat_reg(cg *g, flat_off *fo, int32_t r) {
  int32_t k[TL_MAX_RANK];
  tl_layout_reg_coords(tl_layout_at(g->f, fo->lid), r, k);
  int64_t c = flat_int(fo->m, k) * fo->bytes;
  if (!fo->lw) return cg_i32(g, c);
  return c ? LLVMBuildAdd(g->B, fo->lw, cg_i32(g, c), "") : fo->lw;
}

static bool bases_agree(const tmap *m, int32_t (*dst)[TL_MAX_RANK], int32_t (*src)[TL_MAX_RANK], int n, int src_rank) {
  for (int j = 0; j < n; j++) {
    int32_t cs[TL_MAX_RANK];
    map_ints(m, dst[j], cs);
    for (int d = 0; d < src_rank; d++)
      if (cs[d] != src[j][d]) return false;
  }
  return true;
}

/* The source register of each destination register (into src_reg, n of
 * them) when the transfer renames registers; false when it needs shared memory. */
static bool free_map(cg *g, int32_t src, int32_t dst, cg_map_kind kind, int axis, int32_t *src_reg) {
  tl_type *st = &tl_val(g->f, src)->type, *dt = &tl_val(g->f, dst)->type;
  const tl_layout *ls = cg_layout(g, src), *ld = cg_layout(g, dst);
  tmap m = {kind, axis, st->rank, dt->rank, st->shape, dt->shape};
  tl_layout lsc = *ls, ldc = *ld;
  if (ls->nwarp != ld->nwarp || !bases_agree(&m, ldc.lane, lsc.lane, TL_LAYOUT_LANE_BITS, st->rank) ||
      !bases_agree(&m, ldc.warp, lsc.warp, ld->nwarp, st->rank))
    return false;
  for (int32_t r = 0; r < tl_layout_nregs(ld); r++) {
    int32_t cd[TL_MAX_RANK], cs[TL_MAX_RANK];
    tl_layout_reg_coords(ld, r, cd);
    map_ints(&m, cd, cs);
    int32_t s = tl_layout_find_reg(ls, cs);
    if (s < 0) return false;
    if (src_reg) src_reg[r] = s;
  }
  return true;
}

/* Shared-memory wavefronts one warp spends writing (or reading) the registers of layout l at the
 * staging offsets of map m (elements of `bytes`): registers whose offsets run on by one element
 * form a vector of up to 16 bytes where every lane's and warp's offset keeps it aligned (what
 * LLVM's vectorizer merges); a vector costs the most distinct 4-byte words one bank holds over the
 * 32 lanes, at least its bytes x 32 / 128. */
static int64_t staging_wavefronts(const tl_layout *l, const tmap *m, int bytes) {
  int32_t c[TL_MAX_RANK];
  int64_t coef[TL_LAYOUT_LANE_BITS + TL_LAYOUT_MAX_WARP_BITS], lane_off[32];
  int nb = 0;
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++) coef[nb++] = flat_int(m, l->lane[j]) * bytes;
  for (int j = 0; j < l->nwarp; j++) coef[nb++] = flat_int(m, l->warp[j]) * bytes;
  for (int ln = 0; ln < 32; ln++) {
    lane_off[ln] = 0;
    for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++)
      if (ln >> j & 1) lane_off[ln] += coef[j];
  }
  int32_t n = tl_layout_nregs(l);
  int64_t total = 0;
  for (int32_t r = 0; r < n;) {
    if (tl_layout_canon_reg(l, r) != r) {
      r++;
      continue;
    }
    tl_layout_reg_coords(l, r, c);
    int64_t a0 = flat_int(m, c) * bytes;
    int v = 1;
    for (int cand = 16 / bytes; cand > 1; cand /= 2) {
      bool ok = r % cand == 0 && r + cand <= n && a0 % (cand * bytes) == 0;
      for (int j = 0; ok && j < nb; j++) ok = coef[j] % (cand * bytes) == 0;
      for (int i = 1; ok && i < cand; i++) {
        tl_layout_reg_coords(l, r + i, c);
        ok = tl_layout_canon_reg(l, r + i) == r + i && flat_int(m, c) * bytes == a0 + (int64_t)i * bytes;
      }
      if (ok) {
        v = cand;
        break;
      }
    }
    /* a lane's vector spans at most 5 consecutive words, so at most one word of each bank: a
     * bank holds at most 32 distinct words over the warp (4 slots overran: fuzz_codegen, UBSan) */
    int64_t words[32][32];
    int nw[32] = {0}, way = 1;
    for (int ln = 0; ln < 32; ln++)
      for (int64_t w = (a0 + lane_off[ln]) / 4; w <= (a0 + lane_off[ln] + (int64_t)v * bytes - 1) / 4; w++) {
        int b = (int)(w % 32);
        bool seen = false;
        for (int i = 0; i < nw[b] && i < 32 && !seen; i++) seen = words[b][i] == w;
        if (seen) continue;
        if (nw[b] < 32) words[b][nw[b]] = w;
        nw[b]++;
        if (nw[b] > way) way = nw[b];
      }
    int64_t least = ((int64_t)v * bytes * 32 + 127) / 128;
    total += way > least ? way : least;
    r += v;
  }
  return total;
}

/* The row pitch (elements) of the staging buffer of a rank-2 conversion of 8-bit elements from
 * layout ls to ld through map m (a convert_layout: the K-major-B form's transpose stores a trans,
 * passes/layout_assign.c): the column count, or that plus 1, 2, 4, 8 or 16 where the model of
 * staging_wavefronts predicts fewer wavefronts for the write and the read together (64x64
 * bytes, 4 warps: 136 -> 56 at a pitch of 66).  TILEC_TRANSFER_PAD=0: the column count. */
static int64_t staging_pitch(const tl_layout *ls, const tl_layout *ld, const tmap *m, int bytes) {
  if (bytes != 1 || m->src_rank != 2 || m->dst_rank != 2 || (m->kind != CG_MAP_ID && m->kind != CG_MAP_TRANS) ||
      tl_code_env_off("TILEC_TRANSFER_PAD"))
    return 0;
  int64_t cols = m->src_shape[1], best = 0, best_cost = -1;
  static const int pads[] = {0, 1, 2, 4, 8, 16};
  for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++) {
    tmap id = {CG_MAP_ID, 0, 2, 2, m->src_shape, m->src_shape, cols + pads[i]};
    tmap rd = *m;
    rd.pitch = cols + pads[i];
    int64_t cost = staging_wavefronts(ls, &id, bytes) + staging_wavefronts(ld, &rd, bytes);
    if (best_cost < 0 || cost < best_cost) best = pads[i] ? cols + pads[i] : 0, best_cost = cost;
  }
  return best;
}

bool cg_transfer_free(cg *g, int32_t src, int32_t dst, cg_map_kind kind, int axis) {
  return free_map(g, src, dst, kind, axis, NULL);
}

void cg_emit_transfer(cg *g, int32_t src, int32_t dst, cg_map_kind kind, int axis) {
  tl_func *f = g->f;
  cg_make_plan(g);
  if (cg_val_streamed(g, src)) return; /* trans of a streamed operand: read from the ring */
  tl_type *st = &tl_val(f, src)->type, *dt = &tl_val(f, dst)->type;
  const tl_layout *ls = cg_layout(g, src), *ld = cg_layout(g, dst);
  tmap m = {kind, axis, st->rank, dt->rank, st->shape, dt->shape, 0};
  cg_val *sv = cg_get(g, src);
  int32_t n = tl_layout_nregs(ld);
  cg_val *dv = cg_new_val(g, dst, n);
  int32_t *sreg = tl_alloc(&g->ctx->arena, sizeof(int32_t) * (size_t)n);
  if (free_map(g, src, dst, kind, axis, sreg)) {
    for (int32_t r = 0; r < n; r++) dv->r[r] = sv->r[sreg[r]];
    return;
  }
  /* through shared memory */
  tl_dtype dty = (tl_dtype)st->dtype;
  LLVMTypeRef mt = cg_mem_type(g, dty);
  int bytes = tl_dtype_bytes(dty);
  int64_t numel = tl_type_numel(st);
  if (numel * bytes > 200 * 1024) cg_unsupported(g, "layout conversion of a %lld-byte tile (over 200 KiB of shared memory)", (long long)(numel * bytes));
  m.pitch = staging_pitch(ls, ld, &m, bytes);
  cg_scratch_use(g, (int)((m.pitch ? st->shape[0] * m.pitch : numel) * bytes));
  tmap id = {CG_MAP_ID, 0, st->rank, st->rank, st->shape, st->shape, m.pitch};
  int32_t sl = st->layout, dl = dt->layout;
  cg_barrier(g);
  flat_off fs, fd;
  flat_begin(g, &fs, &id, sl, bytes);
  for (int32_t r = 0; r < tl_layout_nregs(ls); r++) {
    if (tl_layout_canon_reg(ls, r) != r) continue;
    LLVMBuildStore(g->B, cg_to_mem(g, sv->r[r], dty), cg_scratch_ptr(g, flat_reg(g, &fs, r)));
  }
  cg_barrier(g);
  flat_begin(g, &fd, &m, dl, bytes);
  for (int32_t r = 0; r < n; r++) {
    int32_t cr = tl_layout_canon_reg(ld, r);
    if (cr != r) {
      dv->r[r] = dv->r[cr];
      continue;
    }
    dv->r[r] = cg_from_mem(g, LLVMBuildLoad2(g->B, mt, cg_scratch_ptr(g, flat_reg(g, &fd, r)), ""), dty);
  }
}
