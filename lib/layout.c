/* layout.c: the layout algebra of layout.h (construction, queries, the
 * per-function table).  Pure functions of their inputs; in the front-end
 * library so the passes (layout_assign, mma_remap) and codegen share it
 * without LLVM.  The maths is in layout.h and docs/codegen.md. */
#include <string.h>

#include "layout.h"

static int ilog2_i(int64_t x) {
  int k = 0;
  while ((1LL << k) < x) k++;
  return k;
}

bool tl_layout_basis_zero(const int32_t *b, int rank) {
  for (int d = 0; d < rank; d++)
    if (b[d]) return false;
  return true;
}

static tl_layout layout_empty(int kind, int rank, const int32_t *shape) {
  tl_layout l;
  memset(&l, 0, sizeof l);
  l.kind = kind;
  l.rank = rank;
  for (int d = 0; d < rank; d++) l.shape[d] = shape[d];
  l.origin = -1;
  return l;
}

/* Give the next free power of two of the fastest dim still not covered
 * (scanning from the last dim), or leave the basis zero (replication). */
static void cover_next(int32_t *basis, int rank, const int32_t *shape, int32_t *cov) {
  for (int d = rank - 1; d >= 0; d--) {
    if (cov[d] < shape[d]) {
      basis[d] = cov[d];
      cov[d] *= 2;
      return;
    }
  }
}

tl_layout tl_layout_blocked(int rank, const int32_t *shape, int elem_bytes, int warps) {
  tl_layout l = layout_empty(TL_LAYOUT_BLOCKED, rank, shape);
  int32_t cov[TL_MAX_RANK] = {1, 1, 1, 1};
  if (rank == 0) {
    l.nwarp = ilog2_i(warps);
    return l;
  }
  int last = rank - 1;
  int vec = elem_bytes > 0 && elem_bytes <= 16 ? 16 / elem_bytes : 1;
  if (vec > shape[last]) vec = shape[last];
  for (int v = 1; v < vec; v *= 2) {
    l.reg[l.nreg++][last] = cov[last];
    cov[last] *= 2;
  }
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++) cover_next(l.lane[j], rank, shape, cov);
  l.nwarp = ilog2_i(warps);
  for (int j = 0; j < l.nwarp; j++) cover_next(l.warp[j], rank, shape, cov);
  for (int d = last; d >= 0; d--)
    while (cov[d] < shape[d] && l.nreg < TL_LAYOUT_MAX_BITS) {
      l.reg[l.nreg++][d] = cov[d];
      cov[d] *= 2;
    }
  return l;
}

tl_layout tl_layout_mma(int32_t M, int32_t N, int warps) { return tl_layout_mma_split(M, N, warps, 0); }

/* wm_want = 0: warps over M first (whole rows per warp, what row reductions
 * want); else wm_want warps along M and the rest along N. */
tl_layout tl_layout_mma_split(int32_t M, int32_t N, int warps, int wm_want) {
  int32_t shape[2] = {M, N};
  tl_layout l = layout_empty(TL_LAYOUT_MMA, 2, shape);
  /* one m16n8 instruction tile */
  l.reg[0][1] = 1; /* c0/c1: adjacent columns */
  l.reg[1][0] = 8; /* c2/c3: row + 8 */
  l.nreg = 2;
  l.lane[0][1] = 2; /* lane % 4 -> column pairs */
  l.lane[1][1] = 4;
  l.lane[2][0] = 1; /* lane / 4 -> rows */
  l.lane[3][0] = 2;
  l.lane[4][0] = 4;
  int wm = 1, wn = 1;
  while (wm * 2 <= warps && 16 * wm * 2 <= M && (wm_want == 0 || wm < wm_want)) wm *= 2;
  while (wm * wn * 2 <= warps && 8 * wn * 2 <= N) wn *= 2;
  l.nwarp = ilog2_i(warps);
  int k = 0;
  for (int i = 1; i < wm; i *= 2) l.warp[k++][0] = 16 * i;
  for (int i = 1; i < wn; i *= 2) l.warp[k++][1] = 8 * i;
  /* remaining warp bits stay zero: those warps replicate */
  for (int32_t c = 8 * wn; c < N; c *= 2) l.reg[l.nreg++][1] = c;
  for (int32_t r = 16 * wm; r < M; r *= 2) l.reg[l.nreg++][0] = r;
  l.mma_wm = wm;
  l.mma_wn = wn;
  return l;
}

tl_layout tl_layout_mma_pairs(int32_t M, int32_t N, int warps, int wm_want) {
  tl_layout l = tl_layout_mma_split(M, N, warps, wm_want);
  int wn = l.mma_wn;
  if (N < 16 * wn) return l;
  /* column bits: mma column bit 0 (c0/c1) -> 2, lane%4 -> 4, 8; the n-block
   * parity -> 1; warps along N -> 16, 32, ...; further n-blocks -> 16*wn, ... */
  l.reg[0][1] = 2;
  l.lane[0][1] = 4;
  l.lane[1][1] = 8;
  int k = 0;
  while (k < l.nwarp && l.warp[k][0]) k++; /* warp bits over M come first */
  for (int i = 1; i < wn; i *= 2) l.warp[k++][1] = 16 * i;
  int r = 2;
  l.reg[r++][1] = 1;
  for (int32_t c = 16 * wn; c < N; c *= 2) l.reg[r++][1] = c;
  l.mma_npair = 1;
  return l;
}

tl_layout tl_layout_mma_b(const tl_layout *acc, int32_t K) {
  int32_t shape[2] = {K, acc->rank == 2 ? acc->shape[1] : 0};
  tl_layout l = layout_empty(TL_LAYOUT_DERIVED, 2, shape);
  if (acc->kind != TL_LAYOUT_MMA || acc->mma_npair || acc->rank != 2 || K < 16 || K % 16) return l;
  l.reg[0][0] = 1;
  l.reg[1][0] = 8;
  l.nreg = 2;
  l.lane[0][0] = 2;
  l.lane[1][0] = 4;
  l.lane[2][1] = 1;
  l.lane[3][1] = 2;
  l.lane[4][1] = 4;
  l.nwarp = acc->nwarp;
  for (int i = 0; i < acc->nwarp; i++) l.warp[i][1] = acc->warp[i][1];
  for (int i = 0; i < acc->nreg; i++)
    if (acc->reg[i][1] >= 8) l.reg[l.nreg++][1] = acc->reg[i][1];
  for (int32_t k = 16; k < K; k *= 2) l.reg[l.nreg++][0] = k;
  return l;
}

/* Apply fn to every basis of l. */
#define FOR_EACH_BASIS(L, B, ...)                                                          \
  do {                                                                                      \
    for (int i_ = 0; i_ < (L)->nreg; i_++) { int32_t *B = (L)->reg[i_]; __VA_ARGS__; }       \
    for (int i_ = 0; i_ < TL_LAYOUT_LANE_BITS; i_++) { int32_t *B = (L)->lane[i_]; __VA_ARGS__; } \
    for (int i_ = 0; i_ < (L)->nwarp; i_++) { int32_t *B = (L)->warp[i_]; __VA_ARGS__; }      \
  } while (0)

static void remove_comp(int32_t *b, int rank, int dim) {
  for (int d = dim; d + 1 < rank; d++) b[d] = b[d + 1];
  b[rank - 1] = 0;
}

static void insert_comp(int32_t *b, int rank, int axis) {
  for (int d = rank; d > axis; d--) b[d] = b[d - 1];
  b[axis] = 0;
}

tl_layout tl_layout_slice(const tl_layout *p, int dim) {
  tl_layout l = *p;
  l.kind = TL_LAYOUT_SLICE;
  FOR_EACH_BASIS(&l, b, remove_comp(b, p->rank, dim));
  remove_comp(l.shape, p->rank, dim);
  l.rank = p->rank - 1;
  l.mma_wm = l.mma_wn = l.mma_npair = 0;
  return l;
}

tl_layout tl_layout_expand(const tl_layout *s, int axis) {
  tl_layout l = *s;
  l.kind = s->kind == TL_LAYOUT_BLOCKED && s->rank == 0 ? TL_LAYOUT_BLOCKED : TL_LAYOUT_DERIVED;
  FOR_EACH_BASIS(&l, b, insert_comp(b, s->rank, axis));
  insert_comp(l.shape, s->rank, axis);
  l.shape[axis] = 1;
  l.rank = s->rank + 1;
  l.mma_wm = l.mma_wn = l.mma_npair = 0;
  return l;
}

tl_layout tl_layout_squeeze(const tl_layout *s, int axis) {
  tl_layout l = *s;
  l.kind = TL_LAYOUT_DERIVED;
  FOR_EACH_BASIS(&l, b, remove_comp(b, s->rank, axis));
  remove_comp(l.shape, s->rank, axis);
  l.rank = s->rank - 1;
  l.mma_wm = l.mma_wn = l.mma_npair = 0;
  return l;
}

tl_layout tl_layout_project(const tl_layout *s, const int32_t *src_shape) {
  tl_layout l = *s;
  l.kind = TL_LAYOUT_DERIVED;
  for (int d = 0; d < s->rank; d++) {
    if (src_shape[d] != 1) continue;
    FOR_EACH_BASIS(&l, b, b[d] = 0);
    l.shape[d] = 1;
  }
  l.mma_wm = l.mma_wn = l.mma_npair = 0;
  return l;
}

tl_layout tl_layout_for_operand(const tl_layout *l, const tl_op *o, const int32_t *a_shape) {
  if (o->opc == TL_OP_expand_dims) return tl_layout_squeeze(l, o->axis);
  if (o->opc == TL_OP_broadcast) return tl_layout_project(l, a_shape);
  return *l;
}

tl_layout tl_layout_trans(const tl_layout *s) {
  tl_layout l = *s;
  l.kind = TL_LAYOUT_DERIVED;
  FOR_EACH_BASIS(&l, b, { int32_t t = b[0]; b[0] = b[1]; b[1] = t; });
  l.shape[0] = s->shape[1];
  l.shape[1] = s->shape[0];
  l.origin = -1;
  l.mma_wm = l.mma_wn = l.mma_npair = 0;
  return l;
}

tl_layout tl_layout_reshape(const tl_layout *s, int rank, const int32_t *shape) {
  tl_layout l = *s;
  l.kind = TL_LAYOUT_DERIVED;
  l.rank = rank;
  for (int d = 0; d < TL_MAX_RANK; d++) l.shape[d] = d < rank ? shape[d] : 0;
  FOR_EACH_BASIS(&l, b, {
    int64_t flat = 0, stride = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
      flat += (int64_t)b[d] * stride;
      stride *= s->shape[d];
    }
    for (int d = rank - 1; d >= 0; d--) {
      b[d] = (int32_t)(flat % shape[d]);
      flat /= shape[d];
    }
    for (int d = rank; d < TL_MAX_RANK; d++) b[d] = 0;
  });
  l.origin = -1;
  l.mma_wm = l.mma_wn = l.mma_npair = 0;
  return l;
}

int32_t tl_layout_nregs(const tl_layout *l) { return (int32_t)1 << l->nreg; }

void tl_layout_reg_coords(const tl_layout *l, int32_t r, int32_t *c) {
  for (int d = 0; d < TL_MAX_RANK; d++) c[d] = 0;
  for (int i = 0; i < l->nreg; i++)
    if (r >> i & 1)
      for (int d = 0; d < l->rank; d++) c[d] ^= l->reg[i][d];
}

void tl_layout_coords(const tl_layout *l, int32_t r, int32_t lane, int32_t warp, int32_t *c) {
  tl_layout_reg_coords(l, r, c);
  for (int i = 0; i < TL_LAYOUT_LANE_BITS; i++)
    if (lane >> i & 1)
      for (int d = 0; d < l->rank; d++) c[d] ^= l->lane[i][d];
  for (int i = 0; i < l->nwarp; i++)
    if (warp >> i & 1)
      for (int d = 0; d < l->rank; d++) c[d] ^= l->warp[i][d];
}

int32_t tl_layout_canon_reg(const tl_layout *l, int32_t r) {
  for (int i = 0; i < l->nreg; i++)
    if (tl_layout_basis_zero(l->reg[i], l->rank)) r &= ~((int32_t)1 << i);
  return r;
}

int32_t tl_layout_find_reg(const tl_layout *l, const int32_t *coords) {
  int32_t c[TL_MAX_RANK] = {0};
  memcpy(c, coords, sizeof c[0] * (size_t)l->rank); /* coords holds the layout's rank entries */
  int32_t r = 0;
  for (int i = 0; i < l->nreg; i++) {
    for (int d = 0; d < l->rank; d++) {
      if (l->reg[i][d] && (c[d] & l->reg[i][d])) {
        c[d] &= ~l->reg[i][d];
        r |= (int32_t)1 << i;
      }
    }
  }
  for (int d = 0; d < l->rank; d++)
    if (c[d]) return -1;
  return r;
}

int32_t tl_layout_contig(const tl_layout *l) {
  if (l->rank == 0) return 1;
  int last = l->rank - 1;
  int32_t n = 1;
  for (int i = 0; i < l->nreg; i++) {
    for (int d = 0; d < last; d++)
      if (l->reg[i][d]) return n;
    if (l->reg[i][last] != n) return n;
    n *= 2;
  }
  return n;
}

int32_t tl_layout_vector(const tl_layout *l, int elem_bytes) {
  if (l->rank == 0 || elem_bytes <= 0) return 1;
  int32_t vec = tl_layout_contig(l);
  while (vec * elem_bytes > 16) vec /= 2;
  int last = l->rank - 1;
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++)
    while (l->lane[j][last] && l->lane[j][last] < vec) vec /= 2;
  for (int j = 0; j < l->nwarp; j++)
    while (l->warp[j][last] && l->warp[j][last] < vec) vec /= 2;
  return vec * elem_bytes < 4 ? 1 : vec;
}

bool tl_layout_eq(const tl_layout *a, const tl_layout *b) {
  if (a->rank != b->rank || a->nreg != b->nreg || a->nwarp != b->nwarp) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return false;
  for (int i = 0; i < a->nreg; i++)
    if (memcmp(a->reg[i], b->reg[i], sizeof a->reg[i])) return false;
  if (memcmp(a->lane, b->lane, sizeof a->lane)) return false;
  for (int i = 0; i < a->nwarp; i++)
    if (memcmp(a->warp[i], b->warp[i], sizeof a->warp[i])) return false;
  return true;
}

const char *tl_layout_check(const tl_layout *l) {
  /* found[d] = bits of dim d covered by some basis */
  int32_t found[TL_MAX_RANK] = {0};
  const char *why = NULL;
  tl_layout copy = *l;
  FOR_EACH_BASIS(&copy, b, {
    int nz = 0;
    for (int d = 0; d < l->rank; d++) {
      if (!b[d]) continue;
      nz++;
      if (b[d] & (b[d] - 1)) why = "basis is not a power of two";
      else if (b[d] >= l->shape[d]) why = "basis outside the tile";
      else if (found[d] & b[d]) why = "two bases are equal";
      found[d] |= b[d];
    }
    if (nz > 1) why = "basis spans two dims";
  });
  if (why) return why;
  for (int d = 0; d < l->rank; d++)
    if (found[d] != l->shape[d] - 1) return "some element has no owner";
  return NULL;
}

static void print_bases(tl_sbuf *b, const char *name, int32_t (*bases)[TL_MAX_RANK], int n, int rank) {
  tl_sbuf_printf(b, " %s=[", name);
  for (int i = 0; i < n; i++) {
    tl_sbuf_puts(b, "(");
    for (int d = 0; d < rank; d++) tl_sbuf_printf(b, d ? ",%d" : "%d", bases[i][d]);
    tl_sbuf_puts(b, ")");
  }
  tl_sbuf_puts(b, "]");
}

void tl_layout_print(tl_sbuf *b, const tl_layout *l) {
  static const char *const kinds[] = {"blocked", "mma", "slice", "derived"};
  tl_sbuf_printf(b, "%s[", kinds[l->kind & 3]);
  for (int d = 0; d < l->rank; d++) tl_sbuf_printf(b, d ? "x%d" : "%d", l->shape[d]);
  tl_sbuf_puts(b, "]");
  tl_layout copy = *l;
  print_bases(b, "reg", copy.reg, l->nreg, l->rank);
  print_bases(b, "lane", copy.lane, TL_LAYOUT_LANE_BITS, l->rank);
  print_bases(b, "warp", copy.warp, l->nwarp, l->rank);
}

tl_layout_table *tl_layout_table_get(tl_func *f) {
  if (!f->layouts) f->layouts = tl_alloc(&f->ctx->arena, sizeof(tl_layout_table));
  return f->layouts;
}

int32_t tl_layout_intern(tl_func *f, const tl_layout *l) {
  tl_layout_table *t = tl_layout_table_get(f);
  for (int i = 0; i < t->items.len; i++)
    if (t->items.data[i].kind == l->kind && t->items.data[i].origin == l->origin &&
        tl_layout_eq(&t->items.data[i], l))
      return i;
  tl_vec_push(&f->ctx->arena, &t->items, *l);
  return t->items.len - 1;
}

void tl_layout_print_table(tl_sbuf *b, const tl_func *f) {
  const tl_layout_table *t = f->layouts;
  if (!t) return;
  /* A `layouts { ... }` block, as lib/ir.h asks, so the text parses back
   * (the parser skips the block; tile-opt re-derives layouts when needed). */
  tl_sbuf_puts(b, "layouts {\n");
  for (int i = 0; i < t->items.len; i++) {
    tl_sbuf_printf(b, "  #L%d = ", i);
    tl_layout_print(b, &t->items.data[i]);
    tl_sbuf_puts(b, "\n");
  }
  tl_sbuf_puts(b, "}\n");
}
