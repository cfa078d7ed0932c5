/* emit_memory.c: requires layouts; lowers load / store of global tensor views
 * and the layout-changing ops (expand_dims, broadcast, trans, reshape,
 * convert_layout).
 *
 * Global access.  Every element is masked against the tensor's sizes (and
 * reads `other` outside), with predicated PTX (@p ld.global / st.global) so
 * no branch is needed.  Strides are run-time values, so vectors are chosen at
 * run time: a group of registers holding 2..16 bytes contiguous along the last
 * dim uses one ld.global.v{1,2,4}.b32 when the last stride is 1, the group's
 * address is aligned (checked once per access: base, start and the other
 * strides) and the whole group is in bounds; otherwise the same group is read
 * with predicated scalar accesses (both are emitted, one is predicated off).
 *
 * Layout changes are free (a register renaming) when the lane and warp bases
 * of the two layouts agree through the coordinate map; otherwise they go
 * through shared memory: barrier, every thread stores its elements at their
 * row-major offset, barrier, every thread loads the elements it needs. */
#include <stdio.h>
#include <string.h>

#include "cg.h"

static LLVMValueRef to_i64(cg *g, LLVMValueRef v) {
  return LLVMTypeOf(v) == g->i64 ? v : LLVMBuildSExt(g->B, v, g->i64, "");
}

static LLVMValueRef and1(cg *g, LLVMValueRef a, LLVMValueRef b) {
  return a ? LLVMBuildAnd(g->B, a, b, "") : b;
}

/* Integer bits type used to move an element of `bytes` through inline asm. */
static LLVMTypeRef asm_int_type(cg *g, int bytes) {
  return bytes <= 2 ? g->i16 : bytes == 4 ? g->i32 : g->i64;
}
static const char *asm_reg(int bytes) { return bytes <= 2 ? "h" : bytes == 4 ? "r" : "l"; }
static const char *ptx_ld_type(int bytes) {
  return bytes == 1 ? "u8" : bytes == 2 ? "b16" : bytes == 4 ? "b32" : "b64";
}

static LLVMValueRef bits_of(cg *g, LLVMValueRef v, int bytes) {
  LLVMTypeRef it = asm_int_type(g, bytes);
  LLVMTypeRef t = LLVMTypeOf(v);
  if (bytes == 1) return LLVMBuildZExt(g->B, v, it, "");
  if (t == it) return v;
  return LLVMBuildBitCast(g->B, v, it, "");
}

static LLVMValueRef from_bits(cg *g, LLVMValueRef v, LLVMTypeRef mt, int bytes) {
  if (bytes == 1) return LLVMBuildTrunc(g->B, v, mt, "");
  if (LLVMTypeOf(v) == mt) return v;
  return LLVMBuildBitCast(g->B, v, mt, "");
}

/* The parameter a tensor value stands for. */
static int tensor_param(cg *g, int32_t v) {
  tl_value *tv = tl_val(g->f, v);
  if (tv->def >= 0 || tv->region_owner >= 0 || tv->type.kind != TL_KIND_TENSOR)
    cg_unsupported(g, "load/store of a tensor that is not a kernel parameter");
  return tv->index;
}

/* A view: per tensor dim the start (i64) and whether a tile dim ranges over it. */
typedef struct view {
  int rank;               /* tensor rank */
  int tile_rank;
  int tdim[TL_MAX_RANK];  /* tile dim j -> tensor dim */
  LLVMValueRef start[TL_MAX_RANK];
  LLVMValueRef size64[TL_MAX_RANK];
  cg_tensor *t;
  LLVMValueRef uniform_inb; /* indexed dims in bounds (i1), or NULL */
  LLVMValueRef base_off;    /* sum start * stride, elements, i64 */
  int bytes;
  tl_dtype dtype;
} view;

static void make_view(cg *g, tl_op *o, view *v) {
  int p = tensor_param(g, o->opnd[0]);
  tl_param *prm = &g->f->params.data[p];
  memset(v, 0, sizeof *v);
  v->rank = prm->rank;
  v->t = &g->tensors[p];
  v->dtype = prm->dtype;
  v->bytes = tl_dtype_bytes(prm->dtype);
  if (o->nopnd < 1 + v->rank) TL_INTERNAL(g->ctx, "codegen: view with too few indices");
  v->base_off = cg_i64(g, 0);
  for (int d = 0; d < v->rank; d++) {
    v->start[d] = to_i64(g, cg_get(g, o->opnd[1 + d])->r[0]);
    v->size64[d] = LLVMBuildZExt(g->B, v->t->size[d], g->i64, "");
    v->base_off = LLVMBuildAdd(g->B, v->base_off, LLVMBuildMul(g->B, v->start[d], v->t->stride[d], ""), "");
    if (o->dims[d] != 0) v->tdim[v->tile_rank++] = d;
    else v->uniform_inb = and1(g, v->uniform_inb, LLVMBuildICmp(g->B, LLVMIntULT, v->start[d], v->size64[d], ""));
  }
}

/* For the element at tile coordinates c (i32 values): in-bounds flag (i1 or
 * NULL = always) and element offset from the tensor base (i64). */
static void elem_addr(cg *g, view *v, LLVMValueRef *c, LLVMValueRef *inb, LLVMValueRef *off) {
  LLVMValueRef ok = v->uniform_inb, o = v->base_off;
  for (int j = 0; j < v->tile_rank; j++) {
    int d = v->tdim[j];
    LLVMValueRef cj = LLVMBuildZExt(g->B, c[j], g->i64, "");
    LLVMValueRef ix = LLVMBuildAdd(g->B, v->start[d], cj, "");
    ok = and1(g, ok, LLVMBuildICmp(g->B, LLVMIntULT, ix, v->size64[d], ""));
    o = LLVMBuildAdd(g->B, o, LLVMBuildMul(g->B, cj, v->t->stride[d], ""), "");
  }
  *inb = ok;
  *off = o;
}

static LLVMValueRef addr_of(cg *g, view *v, LLVMValueRef off) {
  LLVMValueRef base = LLVMBuildPtrToInt(g->B, v->t->ptr, g->i64, "");
  return LLVMBuildAdd(g->B, base, LLVMBuildMul(g->B, off, cg_i64(g, v->bytes), ""), "");
}

static LLVMValueRef pred32(cg *g, LLVMValueRef p) {
  return p ? LLVMBuildZExt(g->B, p, g->i32, "") : cg_i32(g, 1);
}

/* Predicated scalar load of `bytes` at addr; `dflt` (bits) when p is false. */
static LLVMValueRef ld_scalar(cg *g, LLVMValueRef addr, LLVMValueRef p, LLVMValueRef dflt, int bytes) {
  char text[160], cons[32];
  const char *rg = asm_reg(bytes);
  snprintf(text, sizeof text, "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b%d $0, $3; @p ld.global.%s $0, [$1]; }",
           bytes <= 2 ? 16 : bytes * 8, ptx_ld_type(bytes));
  snprintf(cons, sizeof cons, "=%s,l,r,%s", rg, rg);
  LLVMValueRef args[3] = {addr, pred32(g, p), dflt};
  return cg_asm(g, asm_int_type(g, bytes), text, cons, args, 3, true);
}

static void st_scalar(cg *g, LLVMValueRef addr, LLVMValueRef p, LLVMValueRef bits, int bytes) {
  char text[128], cons[32];
  snprintf(text, sizeof text, "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p st.global.%s [$1], $2; }", ptx_ld_type(bytes));
  snprintf(cons, sizeof cons, "r,l,%s,~{memory}", asm_reg(bytes));
  LLVMValueRef args[3] = {pred32(g, p), addr, bits};
  cg_asm(g, g->vd, text, cons, args, 3, true);
}

/* Predicated vector load of w 32-bit words (w = 1, 2, 4); zeros when off. */
static LLVMValueRef ld_vector(cg *g, LLVMValueRef addr, LLVMValueRef p, int w) {
  char text[256], cons[64];
  int n = snprintf(text, sizeof text, "{ .reg .pred p; setp.ne.b32 p, $%d, 0; ", w + 1);
  for (int i = 0; i < w; i++) n += snprintf(text + n, sizeof text - (size_t)n, "mov.b32 $%d, 0; ", i);
  n += snprintf(text + n, sizeof text - (size_t)n, "@p ld.global%s.b32 ", w == 1 ? "" : w == 2 ? ".v2" : ".v4");
  n += snprintf(text + n, sizeof text - (size_t)n, w == 1 ? "" : "{");
  for (int i = 0; i < w; i++) n += snprintf(text + n, sizeof text - (size_t)n, i ? ",$%d" : "$%d", i);
  snprintf(text + n, sizeof text - (size_t)n, "%s, [$%d]; }", w == 1 ? "" : "}", w);
  n = 0;
  for (int i = 0; i < w; i++) n += snprintf(cons + n, sizeof cons - (size_t)n, "=r,");
  snprintf(cons + n, sizeof cons - (size_t)n, "l,r");
  LLVMTypeRef words[4] = {g->i32, g->i32, g->i32, g->i32};
  LLVMTypeRef st = LLVMStructTypeInContext(g->C, words, (unsigned)w, 0);
  LLVMValueRef args[2] = {addr, pred32(g, p)};
  LLVMValueRef r = cg_asm(g, w == 1 ? g->i32 : st, text, cons, args, 2, true);
  LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(g->i32, (unsigned)w));
  for (int i = 0; i < w; i++) {
    LLVMValueRef x = w == 1 ? r : LLVMBuildExtractValue(g->B, r, (unsigned)i, "");
    vec = LLVMBuildInsertElement(g->B, vec, x, cg_i32(g, i), "");
  }
  return vec;
}

static void st_vector(cg *g, LLVMValueRef addr, LLVMValueRef p, LLVMValueRef vec, int w) {
  char text[256], cons[64];
  int n = snprintf(text, sizeof text, "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p st.global%s.b32 [$1], %s",
                   w == 1 ? "" : w == 2 ? ".v2" : ".v4", w == 1 ? "" : "{");
  for (int i = 0; i < w; i++) n += snprintf(text + n, sizeof text - (size_t)n, i ? ",$%d" : "$%d", i + 2);
  snprintf(text + n, sizeof text - (size_t)n, "%s; }", w == 1 ? "" : "}");
  n = snprintf(cons, sizeof cons, "r,l");
  for (int i = 0; i < w; i++) n += snprintf(cons + n, sizeof cons - (size_t)n, ",r");
  snprintf(cons + n, sizeof cons - (size_t)n, ",~{memory}");
  LLVMValueRef args[6] = {pred32(g, p), addr};
  for (int i = 0; i < w; i++) args[2 + i] = LLVMBuildExtractElement(g->B, vec, cg_i32(g, i), "");
  cg_asm(g, g->vd, text, cons, args, 2 + w, true);
}

/* How many registers form one vector access (1 = scalar only). */
static int vector_width(cg *g, const tl_layout *l, view *v) {
  if (!l || v->tile_rank == 0 || v->tdim[v->tile_rank - 1] != v->rank - 1 || v->dtype == TL_I1) return 1;
  int vec = tl_layout_contig(l);
  while (vec * v->bytes > 16) vec /= 2;
  int last = l->rank - 1;
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++)
    while (l->lane[j][last] && l->lane[j][last] < vec) vec /= 2;
  for (int j = 0; j < l->nwarp; j++)
    while (l->warp[j][last] && l->warp[j][last] < vec) vec /= 2;
  if (vec * v->bytes < 4) return 1;
  return vec;
}

/* Uniform: the fast path's alignment and unit-stride conditions hold. */
static LLVMValueRef fast_path_ok(cg *g, view *v, int vbytes) {
  int last = v->rank - 1;
  LLVMValueRef ok = LLVMBuildICmp(g->B, LLVMIntEQ, v->t->stride[last], cg_i64(g, 1), "");
  LLVMValueRef a = addr_of(g, v, v->base_off);
  for (int j = 0; j + 1 < v->tile_rank; j++) {
    LLVMValueRef sb = LLVMBuildMul(g->B, v->t->stride[v->tdim[j]], cg_i64(g, v->bytes), "");
    a = LLVMBuildOr(g->B, a, sb, "");
  }
  LLVMValueRef mis = LLVMBuildAnd(g->B, a, cg_i64(g, vbytes - 1), "");
  return LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntEQ, mis, cg_i64(g, 0), ""), "");
}

/* Tile coordinates of register r of layout lid (i32 values). */
static void reg_coords(cg *g, int32_t lid, int rank, int32_t r, LLVMValueRef *c) {
  for (int j = 0; j < rank; j++) c[j] = cg_coord(g, lid, r, j);
}

void cg_emit_load(cg *g, tl_op *o) {
  tl_func *f = g->f;
  cg_make_plan(g);
  if (cg_load_streamed(g, o)) return; /* a dot operand fed by the cp.async ring */
  view v;
  make_view(g, o, &v);
  int32_t res = o->res[0];
  tl_type *rt = &tl_val(f, res)->type;
  bool tile = rt->kind == TL_KIND_TILE;
  if (tile != (v.tile_rank > 0) || (tile && rt->rank != v.tile_rank))
    TL_INTERNAL(g->ctx, "codegen: load view rank does not match its result");
  const tl_layout *l = tile ? cg_layout(g, res) : NULL;
  int32_t lid = tile ? rt->layout : -1;
  int32_t n = tile ? tl_layout_nregs(l) : 1;
  tl_dtype rdt = (tl_dtype)rt->dtype;
  LLVMTypeRef mt = cg_mem_type(g, v.dtype);
  int32_t other = o->nopnd > 1 + v.rank ? o->opnd[1 + v.rank] : -1;
  cg_val *ov = other >= 0 ? cg_get(g, other) : NULL;
  tl_dtype odt = other >= 0 ? (tl_dtype)tl_val(f, other)->type.dtype : v.dtype;
  if (other >= 0 && tl_val(f, other)->type.kind == TL_KIND_TILE && tl_val(f, other)->type.layout != lid)
    TL_INTERNAL(g->ctx, "codegen: load's `other` is not in the result's layout");
  cg_val *d = cg_new_val(g, res, n);
  int vec = vector_width(g, l, &v);
  int vbytes = vec * v.bytes;
  LLVMValueRef fast = vec > 1 ? fast_path_ok(g, &v, vbytes) : NULL;
  for (int32_t r0 = 0; r0 < n; r0 += vec) {
    if (tile && tl_layout_canon_reg(l, r0) != r0) {
      for (int e = 0; e < vec; e++) d->r[r0 + e] = d->r[tl_layout_canon_reg(l, r0 + e)];
      continue;
    }
    LLVMValueRef c[TL_MAX_RANK], inb0, off0;
    if (tile) reg_coords(g, lid, rt->rank, r0, c);
    elem_addr(g, &v, c, &inb0, &off0);
    LLVMValueRef vecok = NULL, vecval = NULL;
    if (vec > 1) {
      /* the last element of the group in bounds too (same other dims) */
      int lastd = v.tdim[v.tile_rank - 1];
      LLVMValueRef cl = LLVMBuildZExt(g->B, c[v.tile_rank - 1], g->i64, "");
      LLVMValueRef ixl = LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, v.start[lastd], cl, ""), cg_i64(g, vec - 1), "");
      vecok = and1(g, and1(g, fast, inb0), LLVMBuildICmp(g->B, LLVMIntULT, ixl, v.size64[lastd], ""));
      vecval = ld_vector(g, addr_of(g, &v, off0), vecok, vbytes / 4);
      vecval = LLVMBuildBitCast(g->B, vecval, LLVMVectorType(mt, (unsigned)vec), "");
    }
    for (int e = 0; e < vec; e++) {
      LLVMValueRef inb = inb0, off = off0;
      if (e > 0) { /* element e of the group: +e along the last dim */
        c[v.tile_rank - 1] = LLVMBuildAdd(g->B, c[v.tile_rank - 1], cg_i32(g, 1), "");
        elem_addr(g, &v, c, &inb, &off);
      }
      LLVMValueRef dflt;
      if (ov) {
        LLVMValueRef x = ov->n == 1 ? ov->r[0] : ov->r[r0 + e];
        dflt = cg_to_mem(g, cg_cast(g, x, odt, v.dtype), v.dtype);
      } else {
        dflt = LLVMConstNull(mt);
      }
      LLVMValueRef p = vecok ? and1(g, LLVMBuildNot(g->B, vecok, ""), inb) : inb;
      LLVMValueRef bits = ld_scalar(g, addr_of(g, &v, off), p, bits_of(g, dflt, v.bytes), v.bytes);
      LLVMValueRef x = from_bits(g, bits, mt, v.bytes);
      if (vecok) x = LLVMBuildSelect(g->B, vecok, LLVMBuildExtractElement(g->B, vecval, cg_i32(g, e), ""), x, "");
      d->r[r0 + e] = cg_cast(g, cg_from_mem(g, x, v.dtype), v.dtype, rdt);
    }
  }
}

void cg_emit_store(cg *g, tl_op *o) {
  tl_func *f = g->f;
  view v;
  make_view(g, o, &v);
  int32_t val = o->opnd[o->nopnd - 1];
  tl_type *vt = &tl_val(f, val)->type;
  bool tile = vt->kind == TL_KIND_TILE;
  if (!tile && v.tile_rank > 0) cg_unsupported(g, "store of a scalar into a tile view (splat it first)");
  if (tile && vt->rank != v.tile_rank) TL_INTERNAL(g->ctx, "codegen: store view rank does not match the tile");
  const tl_layout *l = tile ? cg_layout(g, val) : NULL;
  int32_t lid = tile ? vt->layout : -1;
  int32_t n = tile ? tl_layout_nregs(l) : 1;
  cg_val *sv = cg_get(g, val);
  tl_dtype vdt = (tl_dtype)vt->dtype;
  LLVMTypeRef mt = cg_mem_type(g, v.dtype);
  int vec = vector_width(g, l, &v);
  int vbytes = vec * v.bytes;
  LLVMValueRef fast = vec > 1 ? fast_path_ok(g, &v, vbytes) : NULL;
  for (int32_t r0 = 0; r0 < n; r0 += vec) {
    if (tile && tl_layout_canon_reg(l, r0) != r0) continue;
    LLVMValueRef c[TL_MAX_RANK], inb0, off0;
    if (tile) reg_coords(g, lid, vt->rank, r0, c);
    elem_addr(g, &v, c, &inb0, &off0);
    LLVMValueRef mem[16];
    for (int e = 0; e < vec; e++) mem[e] = cg_to_mem(g, cg_cast(g, sv->r[r0 + e], vdt, v.dtype), v.dtype);
    LLVMValueRef vecok = NULL;
    if (vec > 1) {
      int lastd = v.tdim[v.tile_rank - 1];
      LLVMValueRef cl = LLVMBuildZExt(g->B, c[v.tile_rank - 1], g->i64, "");
      LLVMValueRef ixl = LLVMBuildAdd(g->B, LLVMBuildAdd(g->B, v.start[lastd], cl, ""), cg_i64(g, vec - 1), "");
      vecok = and1(g, and1(g, fast, inb0), LLVMBuildICmp(g->B, LLVMIntULT, ixl, v.size64[lastd], ""));
      LLVMValueRef pk = LLVMGetUndef(LLVMVectorType(mt, (unsigned)vec));
      for (int e = 0; e < vec; e++) pk = LLVMBuildInsertElement(g->B, pk, mem[e], cg_i32(g, e), "");
      pk = LLVMBuildBitCast(g->B, pk, LLVMVectorType(g->i32, (unsigned)(vbytes / 4)), "");
      st_vector(g, addr_of(g, &v, off0), vecok, pk, vbytes / 4);
    }
    for (int e = 0; e < vec; e++) {
      LLVMValueRef inb = inb0, off = off0;
      if (e > 0) {
        c[v.tile_rank - 1] = LLVMBuildAdd(g->B, c[v.tile_rank - 1], cg_i32(g, 1), "");
        elem_addr(g, &v, c, &inb, &off);
      }
      LLVMValueRef p = vecok ? and1(g, LLVMBuildNot(g->B, vecok, ""), inb) : inb;
      st_scalar(g, addr_of(g, &v, off), p, bits_of(g, mem[e], v.bytes), v.bytes);
    }
  }
}

/* ---- layout changes ------------------------------------------------------------------ */

typedef struct tmap {
  cg_map_kind kind;
  int axis;
  int src_rank, dst_rank;
  const int32_t *src_shape, *dst_shape;
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

/* Row-major offset in the source tile of the element at result coords cd (run time). */
static LLVMValueRef src_flat(cg *g, const tmap *m, LLVMValueRef *cd) {
  LLVMValueRef cs[TL_MAX_RANK];
  int rank = m->src_rank;
  const int32_t *shape = m->src_shape;
  switch (m->kind) {
  case CG_MAP_ID:
    for (int d = 0; d < rank; d++) cs[d] = cd[d];
    break;
  case CG_MAP_EXPAND:
    for (int d = 0, k = 0; d < m->dst_rank; d++)
      if (d != m->axis) cs[k++] = cd[d];
    break;
  case CG_MAP_BCAST:
    for (int d = 0; d < rank; d++) cs[d] = shape[d] == 1 ? cg_i32(g, 0) : cd[d];
    break;
  case CG_MAP_TRANS:
    cs[0] = cd[1];
    cs[1] = cd[0];
    break;
  case CG_MAP_RESHAPE: /* row-major offsets agree */
    rank = m->dst_rank;
    shape = m->dst_shape;
    for (int d = 0; d < rank; d++) cs[d] = cd[d];
    break;
  }
  LLVMValueRef flat = cg_i32(g, 0);
  for (int d = 0; d < rank; d++)
    flat = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, flat, cg_i32(g, shape[d]), ""), cs[d], "");
  return flat;
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

void cg_emit_transfer(cg *g, int32_t src, int32_t dst, cg_map_kind kind, int axis) {
  tl_func *f = g->f;
  cg_make_plan(g);
  if (cg_val_streamed(g, src)) return; /* trans of a streamed operand: read from the ring */
  tl_type *st = &tl_val(f, src)->type, *dt = &tl_val(f, dst)->type;
  const tl_layout *ls = cg_layout(g, src), *ld = cg_layout(g, dst);
  tmap m = {kind, axis, st->rank, dt->rank, st->shape, dt->shape};
  cg_val *sv = cg_get(g, src);
  int32_t n = tl_layout_nregs(ld);
  cg_val *dv = cg_new_val(g, dst, n);
  tl_layout lsc = *ls, ldc = *ld;
  bool free_ = ls->nwarp == ld->nwarp && bases_agree(&m, ldc.lane, lsc.lane, TL_LAYOUT_LANE_BITS, st->rank) &&
               bases_agree(&m, ldc.warp, lsc.warp, ld->nwarp, st->rank);
  for (int32_t r = 0; free_ && r < n; r++) {
    int32_t cd[TL_MAX_RANK], cs[TL_MAX_RANK];
    tl_layout_reg_coords(ld, r, cd);
    map_ints(&m, cd, cs);
    int32_t s = tl_layout_find_reg(ls, cs);
    if (s < 0) free_ = false;
    else dv->r[r] = sv->r[s];
  }
  if (free_) return;
  /* through shared memory */
  tl_dtype dty = (tl_dtype)st->dtype;
  LLVMTypeRef mt = cg_mem_type(g, dty);
  int bytes = tl_dtype_bytes(dty);
  int64_t numel = tl_type_numel(st);
  if (numel * bytes > 200 * 1024) cg_unsupported(g, "layout conversion of a %lld-byte tile (over 200 KiB of shared memory)", (long long)(numel * bytes));
  cg_scratch_use(g, (int)(numel * bytes));
  tmap id = {CG_MAP_ID, 0, st->rank, st->rank, st->shape, st->shape};
  int32_t sl = st->layout, dl = dt->layout;
  cg_barrier(g);
  for (int32_t r = 0; r < tl_layout_nregs(ls); r++) {
    if (tl_layout_canon_reg(ls, r) != r) continue;
    LLVMValueRef c[TL_MAX_RANK];
    for (int d = 0; d < st->rank; d++) c[d] = cg_coord(g, sl, r, d);
    LLVMValueRef flat = src_flat(g, &id, c);
    LLVMValueRef off = LLVMBuildMul(g->B, flat, cg_i32(g, bytes), "");
    LLVMBuildStore(g->B, cg_to_mem(g, sv->r[r], dty), cg_scratch_ptr(g, off));
  }
  cg_barrier(g);
  for (int32_t r = 0; r < n; r++) {
    int32_t cr = tl_layout_canon_reg(ld, r);
    if (cr != r) {
      dv->r[r] = dv->r[cr];
      continue;
    }
    LLVMValueRef c[TL_MAX_RANK];
    for (int d = 0; d < dt->rank; d++) c[d] = cg_coord(g, dl, r, d);
    LLVMValueRef flat = src_flat(g, &m, c);
    LLVMValueRef off = LLVMBuildMul(g->B, flat, cg_i32(g, bytes), "");
    dv->r[r] = cg_from_mem(g, LLVMBuildLoad2(g->B, mt, cg_scratch_ptr(g, off), ""), dty);
  }
}
