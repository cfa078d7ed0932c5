/* emit_memory.c: requires layouts; lowers load / store of global tensor views (and gives
 * atomics the elements each thread owns); the layout-changing ops are emit_layout_change.c's.
 *
 * Global access.  Every element is masked against the tensor's sizes (and
 * reads `other` outside), with predicated PTX (@p ld.global / st.global) so
 * no branch is needed.  Strides are run-time values, so vectors are chosen at
 * run time: a group of registers holding 4..16 bytes contiguous along the last
 * dim is ONE inline asm that uses one ld/st.global.v{1,2,4}.b32 when the last
 * stride is 1, the view is aligned (checked once per access: base, start and
 * the other strides) and the whole group is in bounds, and otherwise the
 * same group's predicated scalar accesses (address stepped by the stride,
 * bounds checked per element inside the asm).  Compile time: what LLVM sees
 * per group is one address add per tile dim, one row predicate and the asm;
 * the address and bounds of the lane/warp part are computed once per access
 * and the register part (a constant k times a stride) once per distinct k. */
#include <stdio.h>
#include <string.h>

#include "cg.h"
#include "axisinfo.h"
#include "code_env.h"
#include "load_order.h"
#include "ring.h"
#include "rows.h"

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

static bool is_zero(LLVMValueRef v) { return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0; }

/* a & b where NULL means true. */
static LLVMValueRef and1(cg *g, LLVMValueRef a, LLVMValueRef b) {
  return !a ? b : !b ? a : LLVMBuildAnd(g->B, a, b, "");
}
static LLVMValueRef add_or(cg *g, LLVMValueRef a, LLVMValueRef b) {
  return !a ? b : !b ? a : LLVMBuildAdd(g->B, a, b, "");
}

static LLVMValueRef pred32(cg *g, LLVMValueRef p) {
  return p ? LLVMBuildZExt(g->B, p, g->i32, "") : cg_i32(g, 1);
}

/* The parameter a tensor value stands for. */
static int tensor_param(cg *g, int32_t v) {
  tl_value *tv = tl_val(g->f, v);
  if (tv->def >= 0 || tv->region_owner >= 0 || tv->type.kind != TL_KIND_TENSOR)
    cg_unsupported(g, "load/store of a tensor that is not a kernel parameter");
  return tv->index;
}

/* What depends on the register part k of one tile coordinate, made on first
 * use: the index start + lane/warp part + k, its bounds check, k * stride. */
#define KCACHE 64
typedef struct kcache {
  int n;
  int32_t k[KCACHE];
  LLVMValueRef ix[KCACHE], inb[KCACHE], off[KCACHE];
} kcache;

/* One global access: everything computed once, before the registers.  The
 * address of a register group is tbase + sum over tile dims of k_j * stride_j
 * (a constant times a uniform value); its bounds are start_j + lw_j + k_j
 * < size_j, unsigned (so negative indices are outside), in 32 bits when the
 * start is an i32 (exact for sizes below 2^31), else in 64. */
typedef struct access {
  int rank;                         /* tensor rank */
  int tile_rank;
  int tdim[TL_MAX_RANK];            /* tile dim j -> tensor dim */
  cg_tensor *t;
  tl_dtype dtype;
  int bytes;
  LLVMValueRef start[TL_MAX_RANK];  /* per tile dim: the view's start (i32 or i64; 0 for a gather) */
  int32_t start_val[TL_MAX_RANK];   /* per tile dim: the start's IR value (-1 for a gather) */
  LLVMValueRef lw_ix[TL_MAX_RANK];  /* per tile dim: start + lane/warp part (i32 or i64) */
  LLVMValueRef size[TL_MAX_RANK];   /* per tile dim: size, the index's type */
  LLVMValueRef sbytes[TL_MAX_RANK]; /* per tile dim: stride in bytes (i64) */
  LLVMValueRef uniform_inb;         /* indexed (non-tile) dims in bounds, or NULL */
  LLVMValueRef view_addr;           /* i64: address of the view's element 0 */
  LLVMValueRef tbase;               /* i64: this thread's element at register coords 0 */
  kcache kc[TL_MAX_RANK];
  cg_val *gather[TL_MAX_RANK];      /* per tile dim: the i32 index tile of a gather (in the
                                     * access's layout: register r indexes element r), or NULL */
  bool any_gather;
} access;

static void make_access(cg *g, tl_op *o, int32_t lid, access *a) {
  int p = tensor_param(g, o->opnd[0]);
  tl_param *prm = &g->f->params.data[p];
  memset(a, 0, sizeof *a);
  a->rank = prm->rank;
  a->t = &g->tensors[p];
  a->dtype = prm->dtype;
  a->bytes = tl_dtype_bytes(prm->dtype);
  if (o->nopnd < 1 + a->rank) TL_INTERNAL(g->ctx, "codegen: view with too few indices");
  LLVMValueRef off = NULL;
  for (int d = 0; d < a->rank; d++) {
    if (o->dims[d] != 0 && tl_val(g->f, o->opnd[1 + d])->type.kind == TL_KIND_TILE) {
      if (tl_val(g->f, o->opnd[1 + d])->type.layout != lid)
        TL_INTERNAL(g->ctx, "codegen: a gather index is not in the access's layout");
      int j = a->tile_rank++;
      a->tdim[j] = d;
      a->sbytes[j] = a->bytes == 1 ? a->t->stride[d] : LLVMBuildMul(g->B, a->t->stride[d], cg_i64(g, a->bytes), "");
      a->size[j] = a->t->size[d];
      a->lw_ix[j] = a->start[j] = cg_i32(g, 0);
      a->start_val[j] = -1;
      a->gather[j] = cg_get(g, o->opnd[1 + d]);
      a->any_gather = true;
      continue;
    }
    LLVMValueRef st = cg_get(g, o->opnd[1 + d])->r[0];
    bool wide = LLVMTypeOf(st) == g->i64;
    LLVMValueRef sz = wide ? LLVMBuildZExt(g->B, a->t->size[d], g->i64, "") : a->t->size[d];
    LLVMValueRef sb = a->bytes == 1 ? a->t->stride[d] : LLVMBuildMul(g->B, a->t->stride[d], cg_i64(g, a->bytes), "");
    if (!is_zero(st)) {
      LLVMValueRef st64 = wide ? st : LLVMBuildSExt(g->B, st, g->i64, "");
      off = add_or(g, off, LLVMBuildMul(g->B, st64, sb, ""));
    }
    if (o->dims[d] != 0) {
      int j = a->tile_rank++;
      a->tdim[j] = d;
      a->sbytes[j] = sb;
      a->size[j] = sz;
      a->lw_ix[j] = a->start[j] = st;
      a->start_val[j] = o->opnd[1 + d];
    } else {
      a->uniform_inb = and1(g, a->uniform_inb, LLVMBuildICmp(g->B, LLVMIntULT, st, sz, ""));
    }
  }
  a->view_addr = add_or(g, LLVMBuildPtrToInt(g->B, a->t->ptr, g->i64, ""), off);
  a->tbase = a->view_addr;
  if (lid < 0) return;
  for (int j = 0; j < a->tile_rank; j++) {
    if (a->gather[j]) continue; /* its index registers hold the whole coordinate */
    LLVMValueRef lw = cg_lane_warp(g, lid, j);
    if (is_zero(lw)) continue;
    LLVMValueRef lw64 = LLVMBuildZExt(g->B, lw, g->i64, "");
    bool wide = LLVMTypeOf(a->lw_ix[j]) == g->i64;
    a->lw_ix[j] = is_zero(a->lw_ix[j]) ? (wide ? lw64 : lw) : LLVMBuildAdd(g->B, a->lw_ix[j], wide ? lw64 : lw, "");
    a->tbase = LLVMBuildAdd(g->B, a->tbase, LLVMBuildMul(g->B, lw64, a->sbytes[j], ""), "");
  }
}

static int kslot(access *a, int j, int32_t k) {
  kcache *c = &a->kc[j];
  for (int i = 0; i < c->n; i++)
    if (c->k[i] == k) return i;
  if (c->n == KCACHE) { /* full: recycle the last slot */
    c->k[KCACHE - 1] = k;
    c->ix[KCACHE - 1] = c->inb[KCACHE - 1] = c->off[KCACHE - 1] = NULL;
    return KCACHE - 1;
  }
  c->k[c->n] = k;
  c->ix[c->n] = c->inb[c->n] = c->off[c->n] = NULL;
  return c->n++;
}

/* Index of tile dim j at register coordinate k (i32 or i64). */
static LLVMValueRef k_ix(cg *g, access *a, int j, int32_t k) {
  int s = kslot(a, j, k);
  kcache *c = &a->kc[j];
  if (!c->ix[s])
    c->ix[s] = k == 0 ? a->lw_ix[j] : LLVMBuildAdd(g->B, a->lw_ix[j], LLVMConstInt(LLVMTypeOf(a->lw_ix[j]), (unsigned long long)k, 0), "");
  return c->ix[s];
}

static LLVMValueRef k_inb(cg *g, access *a, int j, int32_t k) {
  LLVMValueRef ix = k_ix(g, a, j, k);
  int s = kslot(a, j, k);
  kcache *c = &a->kc[j];
  if (!c->inb[s]) c->inb[s] = LLVMBuildICmp(g->B, LLVMIntULT, ix, a->size[j], "");
  return c->inb[s];
}

/* k * stride in bytes (i64), NULL for k = 0. */
static LLVMValueRef k_off(cg *g, access *a, int j, int32_t k) {
  if (k == 0) return NULL;
  int s = kslot(a, j, k);
  kcache *c = &a->kc[j];
  if (!c->off[s]) c->off[s] = LLVMBuildMul(g->B, a->sbytes[j], cg_i64(g, k), "");
  return c->off[s];
}

/* Address (i64) of the element of register r, at register coordinates k. */
static LLVMValueRef group_addr(cg *g, access *a, const int32_t *k, int32_t r) {
  LLVMValueRef x = a->tbase;
  for (int j = 0; j < a->tile_rank; j++) {
    LLVMValueRef o;
    if (a->gather[j])
      o = LLVMBuildMul(g->B, LLVMBuildSExt(g->B, a->gather[j]->r[r], g->i64, ""), a->sbytes[j], "");
    else
      o = k_off(g, a, j, k[j]);
    if (o) x = LLVMBuildAdd(g->B, x, o, "");
  }
  return x;
}

/* In bounds over the tile dims [0, upto) and the indexed dims (NULL = true),
 * for register r at register coordinates k. */
static LLVMValueRef group_inb(cg *g, access *a, const int32_t *k, int upto, int32_t r) {
  LLVMValueRef p = a->uniform_inb;
  for (int j = 0; j < upto; j++)
    p = and1(g, p, a->gather[j] ? LLVMBuildICmp(g->B, LLVMIntULT, a->gather[j]->r[r], a->size[j], "")
                                : k_inb(g, a, j, k[j]));
  return p;
}

/* Gathers keep vectors along the last dim when every group of vec registers
 * shares its gather indices (the same LLVM values: the index was broadcast
 * along the last dim, as the front-end makes it); else 1. */
static int gather_vector_width(const tl_layout *l, const access *a, int vec) {
  if (!a->any_gather || vec <= 1) return vec;
  if (a->gather[a->tile_rank - 1]) return 1;
  int32_t n = tl_layout_nregs(l);
  for (int j = 0; j < a->tile_rank; j++)
    for (int32_t r0 = 0; a->gather[j] && r0 < n; r0 += vec)
      for (int e = 1; e < vec; e++)
        if (a->gather[j]->r[r0 + e] != a->gather[j]->r[r0]) return 1;
  return vec;
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

/* ---- one asm per vector group ----------------------------------------------------------- */

typedef struct ptxbuf {
  char s[4096];
  int n;
} ptxbuf;

static void put(ptxbuf *b, const char *fmt, ...) TL_PRINTF(2, 3);
static void put(ptxbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(b->s + b->n, sizeof b->s - (size_t)b->n, fmt, ap);
  va_end(ap);
  if (k > 0) b->n += k;
  if (b->n >= (int)sizeof b->s) b->n = (int)sizeof b->s - 1;
}

/* The PTX of one group of vec elements of `bytes` (vec * bytes = 4, 8 or 16),
 * contiguous along the last dim in the tile, W = vec * bytes / 4 words.
 * Operands from `o` on: A address (l), S last stride in bytes (l), IX index
 * along the last dim of the first element, SZ its size (r, or l when wide),
 * R the other dims in bounds (r), F the vector path is allowed (r: unit last
 * stride, aligned).  The group uses one ld/st.global.v{1,2,4}.b32 when F, R
 * and the first and last element in bounds; otherwise one predicated scalar
 * access per element (index IX + e in bounds, address A + e * S).  Loads:
 * outputs $0..$W-1 (zero when outside); stores: words from $(o + 6). */
static void group_ptx(ptxbuf *b, bool store, int bytes, int vec, bool wide, int o) {
  int W = vec * bytes / 4, ib = wide ? 64 : 32;
  int A = o, S = o + 1, IX = o + 2, SZ = o + 3, R = o + 4, F = o + 5, V = o + 6;
  put(b, "{ .reg .pred pr, pv, p, q; .reg .b%d t; .reg .b64 a; .reg .b32 u; ", ib);
  if (bytes <= 2) put(b, ".reg .b16 h<%d>; ", vec);
  if (bytes == 8) put(b, ".reg .b64 d; ");
  put(b, "setp.ne.b32 pr, $%d, 0; setp.ne.b32 pv, $%d, 0; and.pred pv, pv, pr; ", R, F);
  put(b, "setp.lt.u%d p, $%d, $%d; and.pred pv, pv, p; ", ib, IX, SZ);
  put(b, "add.s%d t, $%d, %d; setp.lt.u%d p, t, $%d; and.pred pv, pv, p; ", ib, IX, vec - 1, ib, SZ);
  const char *vs = W == 1 ? "" : W == 2 ? ".v2" : ".v4";
  if (!store) {
    for (int w = 0; w < W; w++) put(b, "mov.b32 $%d, 0; ", w);
    put(b, "@pv ld.global%s.b32 %s", vs, W > 1 ? "{" : "");
    for (int w = 0; w < W; w++) put(b, w ? ",$%d" : "$%d", w);
    put(b, "%s, [$%d]; ", W > 1 ? "}" : "", A);
  } else {
    put(b, "@pv st.global%s.b32 [$%d], %s", vs, A, W > 1 ? "{" : "");
    for (int w = 0; w < W; w++) put(b, w ? ",$%d" : "$%d", V + w);
    put(b, "%s; ", W > 1 ? "}" : "");
    if (bytes == 2)
      for (int w = 0; w < W; w++) put(b, "mov.b32 {h%d,h%d}, $%d; ", 2 * w, 2 * w + 1, V + w);
  }
  put(b, "not.pred q, pv; and.pred pr, pr, q; mov.b64 a, $%d; ", A);
  for (int e = 0; e < vec; e++) {
    if (e) put(b, "add.s64 a, a, $%d; add.s%d t, $%d, %d; setp.lt.u%d p, t, $%d; ", S, ib, IX, e, ib, SZ);
    else put(b, "setp.lt.u%d p, $%d, $%d; ", ib, IX, SZ);
    put(b, "and.pred p, p, pr; ");
    if (!store) {
      switch (bytes) {
      case 1: put(b, "mov.b16 h%d, 0; @p ld.global.u8 h%d, [a]; cvt.u32.u16 u, h%d; @q bfi.b32 $%d, u, $%d, %d, 8; ",
                  e, e, e, e / 4, e / 4, 8 * (e % 4)); break;
      case 2: put(b, "mov.b16 h%d, 0; @p ld.global.b16 h%d, [a]; ", e, e); break;
      case 4: put(b, "@p ld.global.b32 $%d, [a]; ", e); break;
      default: put(b, "@p ld.global.b64 d, [a]; @p mov.b64 {$%d,$%d}, d; ", 2 * e, 2 * e + 1); break;
      }
    } else {
      switch (bytes) {
      case 1:
        if (e % 4) put(b, "shr.b32 u, $%d, %d; @p st.global.u8 [a], u; ", V + e / 4, 8 * (e % 4));
        else put(b, "@p st.global.u8 [a], $%d; ", V + e / 4);
        break;
      case 2: put(b, "@p st.global.b16 [a], h%d; ", e); break;
      case 4: put(b, "@p st.global.b32 [a], $%d; ", V + e); break;
      default: put(b, "mov.b64 d, {$%d,$%d}; @p st.global.b64 [a], d; ", V + 2 * e, V + 2 * e + 1); break;
      }
    }
  }
  if (!store && bytes == 2)
    for (int w = 0; w < W; w++) put(b, "@q mov.b32 $%d, {h%d,h%d}; ", w, 2 * w, 2 * w + 1);
  put(b, "}");
}

/* How many registers form one vector group (1 = scalar accesses only). */
static int vector_width(const tl_layout *l, const access *a) {
  if (!l || a->tile_rank == 0 || a->tdim[a->tile_rank - 1] != a->rank - 1 || a->dtype == TL_I1) return 1;
  return tl_layout_vector(l, a->bytes);
}

/* Uniform (i32 0/1): unit last stride, and the view's start and the other
 * tile dims' strides aligned to the vector. */
static LLVMValueRef vector_allowed(cg *g, access *a, int vbytes) {
  LLVMValueRef ok = LLVMBuildICmp(g->B, LLVMIntEQ, a->t->stride[a->rank - 1], cg_i64(g, 1), "");
  LLVMValueRef x = a->view_addr;
  for (int j = 0; j + 1 < a->tile_rank; j++) x = LLVMBuildOr(g->B, x, a->sbytes[j], "");
  LLVMValueRef mis = LLVMBuildAnd(g->B, x, cg_i64(g, vbytes - 1), "");
  return pred32(g, LLVMBuildAnd(g->B, ok, LLVMBuildICmp(g->B, LLVMIntEQ, mis, cg_i64(g, 0), ""), ""));
}

/* Operands A, S, IX, SZ, R, F of group_ptx for the group at coordinates k. */
static void group_args(cg *g, access *a, const int32_t *k, int32_t r0, LLVMValueRef allowed, LLVMValueRef *args) {
  int last = a->tile_rank - 1;
  args[0] = group_addr(g, a, k, r0);
  args[1] = a->sbytes[last];
  args[2] = k_ix(g, a, last, k[last]);
  args[3] = a->size[last];
  args[4] = pred32(g, group_inb(g, a, k, last, r0));
  args[5] = allowed;
}

/* Words per group, elements per word (0: an element is two words). */
static void vec_types(const access *a, int vec, int *W, int *per_word) {
  *W = vec * a->bytes / 4;
  *per_word = a->bytes <= 4 ? 4 / a->bytes : 0;
}

/* Tile coordinates (register part) of register r. */
static void reg_k(const tl_layout *l, int32_t r, int32_t *k) {
  if (l) tl_layout_reg_coords(l, r, k);
  else memset(k, 0, sizeof(int32_t) * TL_MAX_RANK);
}

/* The 32-bit words of a group of vec elements of memory type mt (per_word elements a word; 0:
 * 8-byte elements, two words each; W words in all): pack for a store, unpack after a load. */
static void elems_to_words(cg *g, LLVMTypeRef mt, int per_word, int W, int vec, LLVMValueRef *mem, LLVMValueRef *words) {
  if (per_word == 1) {
    for (int e = 0; e < vec; e++) words[e] = LLVMBuildBitCast(g->B, mem[e], g->i32, "");
  } else if (per_word > 1) {
    for (int w = 0; w < W; w++) {
      LLVMValueRef pv = LLVMGetUndef(LLVMVectorType(mt, (unsigned)per_word));
      for (int e = 0; e < per_word; e++) pv = LLVMBuildInsertElement(g->B, pv, mem[w * per_word + e], cg_i32(g, e), "");
      words[w] = LLVMBuildBitCast(g->B, pv, g->i32, "");
    }
  } else {
    for (int e = 0; e < vec; e++) {
      LLVMValueRef pair = LLVMBuildBitCast(g->B, mem[e], LLVMVectorType(g->i32, 2), "");
      words[2 * e] = LLVMBuildExtractElement(g->B, pair, cg_i32(g, 0), "");
      words[2 * e + 1] = LLVMBuildExtractElement(g->B, pair, cg_i32(g, 1), "");
    }
  }
}

void cg_words_to_elems(cg *g, LLVMTypeRef mt, int per_word, int W, int vec, LLVMValueRef *wv, LLVMValueRef *x) {
  if (per_word == 1) {
    for (int e = 0; e < vec; e++) x[e] = LLVMBuildBitCast(g->B, wv[e], mt, "");
  } else if (per_word > 1) {
    for (int w = 0; w < W; w++) {
      LLVMValueRef pv = LLVMBuildBitCast(g->B, wv[w], LLVMVectorType(mt, (unsigned)per_word), "");
      for (int e = 0; e < per_word; e++) x[w * per_word + e] = LLVMBuildExtractElement(g->B, pv, cg_i32(g, e), "");
    }
  } else { /* 8-byte elements: two words each */
    for (int e = 0; e < vec; e++) {
      LLVMValueRef pair = LLVMGetUndef(LLVMVectorType(g->i32, 2));
      pair = LLVMBuildInsertElement(g->B, pair, wv[2 * e], cg_i32(g, 0), "");
      pair = LLVMBuildInsertElement(g->B, pair, wv[2 * e + 1], cg_i32(g, 1), "");
      x[e] = LLVMBuildBitCast(g->B, pair, mt, "");
    }
  }
}

/* The elements x[0..vec-1] (memory type) of a loaded group from its words wv; `other` outside.
 * `whole`: the group lies wholly inside or outside the tensor (a launch variant's assumed
 * facts), so one predicate serves it; a scalar `other` of 16-bit or 8-bit elements is then
 * chosen a word at a time, and the elements stay extracts of words (a bf16 cast widens them
 * straight from the word: emit_elementwise.c bf16_from_word) instead of a select each. */
static void unpack_group(cg *g, access *a, const int32_t *k, int32_t r0, int vec, LLVMValueRef *wv, cg_val *ov,
                         tl_dtype odt, LLVMValueRef *x, bool whole) {
  int W, per_word, last = a->tile_rank - 1;
  vec_types(a, vec, &W, &per_word);
  LLVMTypeRef mt = cg_mem_type(g, a->dtype);
  if (ov && whole && per_word > 1 && ov->n == 1 && cg_bf16_words(g)) {
    LLVMValueRef dflt = cg_to_mem(g, cg_cast(g, ov->r[0], odt, a->dtype), a->dtype);
    LLVMValueRef inb = and1(g, group_inb(g, a, k, last, r0), k_inb(g, a, last, k[last]));
    LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)per_word);
    LLVMValueRef ov_word = LLVMGetUndef(vt);
    for (int e = 0; e < per_word; e++) ov_word = LLVMBuildInsertElement(g->B, ov_word, dflt, cg_i32(g, e), "");
    ov_word = LLVMBuildBitCast(g->B, ov_word, g->i32, "");
    LLVMValueRef sel[4];
    for (int w = 0; w < W; w++) sel[w] = LLVMBuildSelect(g->B, inb, wv[w], ov_word, "");
    cg_words_to_elems(g, mt, per_word, W, vec, sel, x);
    return;
  }
  cg_words_to_elems(g, mt, per_word, W, vec, wv, x);
  if (ov) { /* outside the tensor the element is `other` (the asm gives zeros) */
    LLVMValueRef rows = group_inb(g, a, k, last, r0);
    for (int e = 0; e < vec; e++) {
      LLVMValueRef dflt = cg_cast(g, ov->n == 1 ? ov->r[0] : ov->r[r0 + e], odt, a->dtype);
      if (LLVMIsNull(dflt)) continue;
      LLVMValueRef inb = and1(g, rows, k_inb(g, a, last, k[last] + e));
      x[e] = LLVMBuildSelect(g->B, inb, x[e], cg_to_mem(g, dflt, a->dtype), "");
    }
  }
}

/* ---- access_split: the vector form and the combined form behind one branch -------------------- */

/* Under access_split (passes/access_split.c) the launch's facts hold (the vector form is
 * allowed and the last dim's size is a multiple of the vector), so a group lies wholly inside
 * or outside the tensor: one predicated vector access, operands A address (l), P in bounds
 * (r); loads: outputs $0..$W-1 (zero outside), stores: words from $2. */
static void split_group_ptx(ptxbuf *b, bool store, int W, const cg_cache_hint *h) {
  const char *vs = W == 1 ? "" : W == 2 ? ".v2" : ".v4";
  int A = store ? 0 : W, P = A + 1, POL = store ? 2 + W : W + 2;
  char pol[16] = "";
  if (h && h->policy) snprintf(pol, sizeof pol, ", $%d", POL);
  const char *q = h ? h->q : "";
  put(b, "{ .reg .pred p; setp.ne.b32 p, $%d, 0; ", P);
  if (!store) {
    for (int w = 0; w < W; w++) put(b, "mov.b32 $%d, 0; ", w);
    put(b, "@p ld.global%s%s.b32 %s", q, vs, W > 1 ? "{" : "");
    for (int w = 0; w < W; w++) put(b, w ? ",$%d" : "$%d", w);
    put(b, "%s, [$%d]%s; }", W > 1 ? "}" : "", A, pol);
  } else {
    put(b, "@p st.global%s%s.b32 [$%d], %s", q, vs, A, W > 1 ? "{" : "");
    for (int w = 0; w < W; w++) put(b, w ? ",$%d" : "$%d", 2 + w);
    put(b, "%s%s; }", W > 1 ? "}" : "", pol);
  }
}

/* ---- cache hints of a row kernel's streaming accesses (docs/rows.md "rows8") -------------------
 * `TILEC_ROW_HINTS` (letters; "0" none): a function-level load whose view depends on the program
 * ids reads bytes no other program reads ('n' `.L1::no_allocate`: not kept in L1, where the
 * weights every program reads stay; 'f' `.L2::cache_hint` with an evict-first policy; 'p'
 * `.L2::256B`: the L2 fetches 256 bytes from DRAM), and a function-level store writes them ('s'
 * `.cs`, 'S' the evict-first policy): the L2 keeps what is read again (the weights, the rows
 * row_prefetch.c brought ahead) rather than what was streamed.  Row kernels only (f->access_split),
 * the split form and the launch variant's (what runs); the per-element fallback is unchanged. */
static const char *row_hints(void) {
  const char *e = tl_code_env("TILEC_ROW_HINTS");
  return e ? (e[0] == '0' ? "" : e) : CG_ROW_HINTS_DEFAULT;
}

bool cg_row_hints_policy(cg *g) {
  const char *h = row_hints();
  return g->f->access_split && (strchr(h, 'f') || strchr(h, 'S'));
}

static void access_hint(cg *g, tl_op *o, bool store, cg_cache_hint *h) {
  memset(h, 0, sizeof *h);
  tl_func *f = g->f;
  if (!f->access_split || o->parent >= 0 || g->epi) return;
  const char *s = row_hints();
  if (!store) {
    bool streaming = false;
    for (int j = 1; j < o->nopnd && !streaming; j++) streaming = tl_depends_on_program_id(f, o->opnd[j]);
    if (!streaming) return;
    int n = 0;
    if (strchr(s, 'n')) n += snprintf(h->q + n, sizeof h->q - (size_t)n, ".L1::no_allocate");
    if (strchr(s, 'f') && g->row_policy) {
      n += snprintf(h->q + n, sizeof h->q - (size_t)n, ".L2::cache_hint");
      h->policy = true;
    }
    if (strchr(s, 'p')) snprintf(h->q + n, sizeof h->q - (size_t)n, ".L2::256B");
  } else {
    int n = 0;
    if (strchr(s, 's')) n += snprintf(h->q + n, sizeof h->q - (size_t)n, ".cs");
    if (strchr(s, 'S') && g->row_policy) {
      snprintf(h->q + n, sizeof h->q - (size_t)n, ".L2::cache_hint");
      h->policy = true;
    }
  }
}

/* The groups of one vector access, their operands made before the branch (so both forms and
 * what follows may use them). */
typedef struct groups {
  int32_t n;                /* groups (registers / vec) */
  bool *canon;              /* the group is its registers' first holder */
  bool *skip;               /* another epilogue sub-tile's group (cg_reg_wanted) */
  LLVMValueRef (*args)[10]; /* group_ptx's operands A S IX SZ R F, then a store's words */
  LLVMValueRef *inb;        /* i32: the whole group in bounds (the split form's predicate) */
  LLVMValueRef *fast_addr;  /* the split form's address (NULL: args[0]) */
} groups;

/* The split form's address of the group at k when the last stride is 1 (the form's
 * condition): the other dims' offsets (one runtime value per row) plus a constant, so
 * ptxas folds the column into the instruction ([R + imm]) instead of keeping a 64-bit
 * address per group live (an epilogue's residual sub-tile: 16 of them a thread). */
static LLVMValueRef unit_stride_addr(cg *g, access *a, const int32_t *k) {
  LLVMValueRef x = a->tbase;
  int last = a->tile_rank - 1;
  for (int j = 0; j < last; j++) {
    LLVMValueRef o = k_off(g, a, j, k[j]);
    if (o) x = LLVMBuildAdd(g->B, x, o, "");
  }
  return k[last] ? LLVMBuildAdd(g->B, x, cg_i64(g, (long long)k[last] * a->bytes), "") : x;
}

/* v: the loaded or stored tile (its epilogue sub-tile picks the groups); const_cols: the
 * split form's addresses by unit_stride_addr (no gathers). */
static void groups_make(cg *g, access *a, const tl_layout *l, int32_t n, int vec, LLVMValueRef allowed, groups *G,
                        int32_t v, bool const_cols) {
  int last = a->tile_rank - 1;
  G->n = n / vec;
  G->canon = tl_alloc(&g->ctx->arena, sizeof(bool) * (size_t)(G->n + 1));
  G->skip = tl_alloc(&g->ctx->arena, sizeof(bool) * (size_t)(G->n + 1));
  G->args = tl_alloc(&g->ctx->arena, sizeof *G->args * (size_t)(G->n + 1));
  G->inb = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)(G->n + 1));
  G->fast_addr = tl_alloc(&g->ctx->arena, sizeof(LLVMValueRef) * (size_t)(G->n + 1));
  for (int32_t i = 0; i < G->n; i++) {
    int32_t r0 = i * vec;
    G->canon[i] = !l || tl_layout_canon_reg(l, r0) == r0;
    G->skip[i] = l && v >= 0 && !cg_reg_wanted(g, v, r0);
    G->fast_addr[i] = NULL;
    if (!G->canon[i] || G->skip[i]) continue;
    int32_t k[TL_MAX_RANK];
    reg_k(l, r0, k);
    group_args(g, a, k, r0, allowed, G->args[i]);
    G->inb[i] = pred32(g, and1(g, group_inb(g, a, k, last, r0), k_inb(g, a, last, k[last])));
    if (const_cols) G->fast_addr[i] = unit_stride_addr(g, a, k);
  }
}

/* x % vec == 0 (i1), x an index (i32 or i64). */
static LLVMValueRef multiple_of(cg *g, LLVMValueRef x, int vec) {
  LLVMValueRef rag = LLVMBuildAnd(g->B, x, LLVMConstInt(LLVMTypeOf(x), (unsigned long long)(vec - 1), 0), "");
  return LLVMBuildICmp(g->B, LLVMIntEQ, rag, LLVMConstInt(LLVMTypeOf(x), 0, 0), "");
}

/* The split's condition (i1, uniform): vectors allowed, and the last dim's size and the view's
 * start along it multiples of vec, so that every group lies wholly inside or outside the
 * tensor.  The start's own test is needed: an aligned address does not make an aligned index
 * when the tensor's base is not aligned (base 4 mod 16, start -1: the group [-1, 2] would be
 * judged by its first element alone, dropping elements 0..2 of a load and writing a store's
 * element -1; gpu_test_random seed 60153). */
static LLVMValueRef split_ok(cg *g, access *a, int vec, LLVMValueRef allowed) {
  int last = a->tile_rank - 1;
  LLVMValueRef whole = LLVMBuildAnd(g->B, multiple_of(g, a->size[last], vec), multiple_of(g, a->start[last], vec), "");
  return LLVMBuildAnd(g->B, LLVMBuildICmp(g->B, LLVMIntNE, allowed, cg_i32(g, 0), ""), whole, "vec.ok");
}

/* The fallback's groups each behind a branch on any of its elements being in the tensor, in row
 * kernels (f->access_split), for an access of at least FALLBACK_BLOCK_GROUPS groups a thread
 * (`TILEC_FALLBACK_BLOCKS=0`: always straight-line): ptxas schedules a block's loads together, and straight-line it issued the 8
 * scalar loads of every group of an access at once, 64-bit addresses and 16-bit results all
 * live, which set the kernel's register count although the vector form runs (rmsnorm 72 -> 64
 * registers, 0.86 -> 0.90 of the copy bandwidth on the H200); with 1 or 2 groups (rope) the
 * registers are few and the branches cost (0.89 -> 0.85).  docs/rows.md "rows4". */
enum { FALLBACK_BLOCK_GROUPS = 4 };

/* The branch is taken when any element of the group is in the tensor along the last dim.  Where
 * the axis facts make the start a multiple of vec (test_straddle false) no group starts before 0,
 * and the first element decides: IX < SZ (unsigned).  Otherwise the group IX..IX+vec-1 meets
 * [0, SZ) iff IX + vec - 1 >= 0 and IX < SZ, one unsigned compare of the shifted index:
 * IX + vec - 1 <u SZ + vec - 1.  (The first alone dropped a group starting at -1, gpu_test_random
 * seed 60153; first-or-last still dropped a group straddling both ends, columns -1..2 of a
 * tensor with N = 1: gpu_test_alignment shifted_views [tiny-offset1] on the H200.) */
static void fallback_group(cg *g, LLVMValueRef *args, LLVMTypeRef rty, const char *ptx, const char *cons,
                           bool store, int W, int vec, bool test_straddle, LLVMValueRef *words) {
  LLVMTypeRef it = LLVMTypeOf(args[2]);
  LLVMValueRef any;
  if (test_straddle) {
    LLVMValueRef shift = LLVMConstInt(it, (unsigned long long)(vec - 1), 0);
    any = LLVMBuildICmp(g->B, LLVMIntULT, LLVMBuildAdd(g->B, args[2], shift, ""), LLVMBuildAdd(g->B, args[3], shift, ""), "");
  } else {
    any = LLVMBuildICmp(g->B, LLVMIntULT, args[2], args[3], "");
  }
  LLVMValueRef go = LLVMBuildAnd(g->B, any, LLVMBuildICmp(g->B, LLVMIntNE, args[4], cg_i32(g, 0), ""), "");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->B);
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "vec.fallback.group");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(g->C, g->fn, "vec.fallback.next");
  LLVMBuildCondBr(g->B, go, body, next);
  LLVMPositionBuilderAtEnd(g->B, body);
  LLVMValueRef rv = cg_asm(g, rty, ptx, cons, args, store ? 6 + W : 6, true);
  LLVMValueRef x[4];
  for (int w = 0; !store && w < W; w++) x[w] = W == 1 ? rv : LLVMBuildExtractValue(g->B, rv, (unsigned)w, "");
  LLVMBasicBlockRef end = LLVMGetInsertBlock(g->B);
  LLVMBuildBr(g->B, next);
  LLVMPositionBuilderAtEnd(g->B, next);
  for (int w = 0; !store && w < W; w++) {
    LLVMValueRef phi = LLVMBuildPhi(g->B, g->i32, "");
    LLVMValueRef in[2] = {x[w], cg_i32(g, 0)};
    LLVMBasicBlockRef bb[2] = {end, from};
    LLVMAddIncoming(phi, in, bb, 2);
    words[w] = phi;
  }
}

/* `TILEC_VEC_ONLY=1|2` (measuring, row kernels; docs/rows.md "rows5"): no per-element fallback
 * where the launch's key bits of the tensor (all four: its base, its strides, its last size;
 * axisinfo.h) and the axis facts of the view's last start (a multiple of the vector) imply the
 * split's condition.  The bits are or-ed into g->assumed_key, the kernel's tl_kernel_info and the
 * cache's metadata; the launcher refuses arguments without them (lib/api/launch.c), so the kernel
 * never runs where the fallback was needed.  1: the vector form alone, straight-line (the launch
 * variant's form; ptxas then interleaves the loads with the math of earlier groups: swiglu 0.985
 * -> 0.941 of the copy bandwidth); 2: the split's branch kept, its other side zeros (the branch
 * keeps an access's loads in one block, and most of the registers); v: the launch variant's form
 * (variant_form).  What it measures: the fallback's registers out of the kernel's count. */
static int assume_mode(const cg *g) {
  if (g->o && g->o->assume_vectors) return tl_row_variant_form(g->f);
  const char *e = tl_code_env("TILEC_VEC_ONLY");
  if (e && e[0] == 'v') return tl_row_variant_form(g->f);
  return e && (e[0] == '1' || e[0] == '2') ? e[0] - '0' : 0;
}

static bool assume_vectors(cg *g, tl_op *o, const access *a, int vec) {
  if (!g->f->access_split || !assume_mode(g) || g->epi) return false;
  int p = tensor_param(g, o->opnd[0]), t = 0;
  for (int i = 0; i < p; i++) t += g->f->params.data[i].is_tensor;
  int last = a->rank - 1;
  if (t >= TL_SPEC_MAX_TENSORS || a->tile_rank == 0 || a->tdim[a->tile_rank - 1] != last) return false;
  tl_axis_info s = tl_axis_get(cg_axis(g), o->opnd[1 + last]);
  if (tl_axis_elem_div(&s) < vec) return false;
  g->assumed_key |= TL_SPEC_TENSOR_BITS(t, TL_SPEC_BASE16 | TL_SPEC_LAST_STRIDE1 | TL_SPEC_STRIDES16 | TL_SPEC_LASTDIM16);
  return true;
}

/* Branch once between the split vector form and the combined form (group_ptx) of every group;
 * loads: the words of group i into words[i][0..W-1] at the join. */
static void groups_emit(cg *g, access *a, int vec, LLVMValueRef allowed, groups *G, bool store, LLVMValueRef (*words)[4],
                        bool assume, const cg_cache_hint *h) {
  int W, per_word;
  vec_types(a, vec, &W, &per_word);
  int last = a->tile_rank - 1;
  bool wide = LLVMTypeOf(a->size[last]) == g->i64;
  ptxbuf pb = {.n = 0}, fb = {.n = 0};
  group_ptx(&pb, store, a->bytes, vec, wide, store ? 0 : W);
  split_group_ptx(&fb, store, W, h);
  bool pol = h && h->policy;
  char cons[96], fc[64];
  int cn = 0, fn = 0;
  for (int w = 0; !store && w < W; w++) {
    cn += snprintf(cons + cn, sizeof cons - (size_t)cn, "=r,");
    fn += snprintf(fc + fn, sizeof fc - (size_t)fn, "=r,");
  }
  cn += snprintf(cons + cn, sizeof cons - (size_t)cn, "l,l,%s,%s,r,r", wide ? "l" : "r", wide ? "l" : "r");
  fn += snprintf(fc + fn, sizeof fc - (size_t)fn, "l,r");
  for (int w = 0; store && w < W; w++) {
    cn += snprintf(cons + cn, sizeof cons - (size_t)cn, ",r");
    fn += snprintf(fc + fn, sizeof fc - (size_t)fn, ",r");
  }
  if (pol) fn += snprintf(fc + fn, sizeof fc - (size_t)fn, ",l");
  if (store) {
    snprintf(cons + cn, sizeof cons - (size_t)cn, ",~{memory}");
    snprintf(fc + fn, sizeof fc - (size_t)fn, ",~{memory}");
  }
  LLVMTypeRef wt[4] = {g->i32, g->i32, g->i32, g->i32};
  LLVMTypeRef rty = store ? g->vd : W == 1 ? g->i32 : LLVMStructTypeInContext(g->C, wt, (unsigned)W, 0);
  if (assume && assume_mode(g) == 1) { /* straight-line: the split form alone */
    for (int32_t i = 0; i < G->n; i++) {
      if (!G->canon[i] || G->skip[i]) continue;
      LLVMValueRef fa[7] = {G->fast_addr[i] ? G->fast_addr[i] : G->args[i][0], G->inb[i]};
      for (int w = 0; store && w < W; w++) fa[2 + w] = G->args[i][6 + w];
      if (pol) fa[store ? 2 + W : 2] = g->row_policy;
      LLVMValueRef rv = cg_asm(g, rty, fb.s, fc, fa, (store ? 2 + W : 2) + pol, true);
      for (int w = 0; !store && w < W; w++) words[i][w] = W == 1 ? rv : LLVMBuildExtractValue(g->B, rv, (unsigned)w, "");
    }
    return;
  }
  LLVMBasicBlockRef fastb = LLVMAppendBasicBlockInContext(g->C, g->fn, "vec");
  LLVMBasicBlockRef slowb = LLVMAppendBasicBlockInContext(g->C, g->fn, "vec.fallback");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->C, g->fn, "vec.join");
  cg_cond_br_likely(g, split_ok(g, a, vec, allowed), fastb, slowb);
  LLVMValueRef (*fast)[4] = store ? NULL : tl_alloc(&g->ctx->arena, sizeof *fast * (size_t)(G->n + 1));
  int32_t ngroups = 0;
  for (int32_t i = 0; i < G->n; i++) ngroups += G->canon[i] && !G->skip[i];
  /* (not a dot's epilogue loads: not measured there) */
  bool blocks = g->f->access_split && ngroups >= FALLBACK_BLOCK_GROUPS && !tl_code_env_off("TILEC_FALLBACK_BLOCKS");
  /* can a group start before the tensor's first element (the start no known multiple of vec)? */
  int32_t sv = a->start_val[a->tile_rank - 1];
  tl_axis_info sax = sv >= 0 ? tl_axis_get(cg_axis(g), sv) : (tl_axis_info){0};
  bool straddles = blocks && (sv < 0 || tl_axis_elem_div(&sax) < vec);
  for (int form = 0; form < 2; form++) {
    LLVMPositionBuilderAtEnd(g->B, form ? slowb : fastb);
    for (int32_t i = 0; i < G->n; i++) {
      if (!G->canon[i] || G->skip[i]) continue;
      LLVMValueRef fa[7] = {G->fast_addr[i] ? G->fast_addr[i] : G->args[i][0], G->inb[i]};
      for (int w = 0; store && w < W; w++) fa[2 + w] = G->args[i][6 + w];
      if (pol) fa[store ? 2 + W : 2] = g->row_policy;
      if (form && assume) { /* no fallback (assume_vectors): zeros, never taken where the launcher checked */
        for (int w = 0; !store && w < W; w++) words[i][w] = cg_i32(g, 0);
        continue;
      }
      if (form && blocks) { /* the group behind its own branch */
        fallback_group(g, G->args[i], rty, pb.s, cons, store, W, vec, straddles, store ? NULL : words[i]);
        continue;
      }
      LLVMValueRef rv = form ? cg_asm(g, rty, pb.s, cons, G->args[i], store ? 6 + W : 6, true)
                             : cg_asm(g, rty, fb.s, fc, fa, (store ? 2 + W : 2) + pol, true);
      for (int w = 0; !store && w < W; w++) {
        LLVMValueRef x = W == 1 ? rv : LLVMBuildExtractValue(g->B, rv, (unsigned)w, "");
        if (form) words[i][w] = x;
        else fast[i][w] = x;
      }
    }
    if (form) slowb = LLVMGetInsertBlock(g->B);
    else fastb = LLVMGetInsertBlock(g->B);
    LLVMBuildBr(g->B, join);
  }
  LLVMPositionBuilderAtEnd(g->B, join);
  for (int32_t i = 0; !store && i < G->n; i++) {
    if (!G->canon[i] || G->skip[i]) continue;
    for (int w = 0; w < W; w++) {
      LLVMValueRef phi = LLVMBuildPhi(g->B, g->i32, "");
      LLVMValueRef in[2] = {fast[i][w], words[i][w]};
      LLVMBasicBlockRef from[2] = {fastb, slowb};
      LLVMAddIncoming(phi, in, from, 2);
      words[i][w] = phi;
    }
  }
}

static void load_split(cg *g, access *a, const tl_layout *l, int32_t n, int vec, LLVMValueRef allowed, cg_val *d,
                       cg_val *ov, tl_dtype odt, tl_dtype rdt, int32_t res, bool const_cols, bool assume,
                       const cg_cache_hint *h) {
  groups G;
  groups_make(g, a, l, n, vec, allowed, &G, res, const_cols);
  LLVMValueRef (*words)[4] = tl_alloc(&g->ctx->arena, sizeof *words * (size_t)(G.n + 1));
  groups_emit(g, a, vec, allowed, &G, false, words, assume, h);
  for (int32_t r0 = 0; r0 < n; r0 += vec) {
    if (G.skip[r0 / vec]) continue;
    if (!G.canon[r0 / vec]) {
      for (int e = 0; e < vec; e++) d->r[r0 + e] = d->r[tl_layout_canon_reg(l, r0 + e)];
      continue;
    }
    int32_t k[TL_MAX_RANK];
    reg_k(l, r0, k);
    LLVMValueRef x[16];
    unpack_group(g, a, k, r0, vec, words[r0 / vec], ov, odt, x, assume);
    for (int e = 0; e < vec; e++) d->r[r0 + e] = cg_cast(g, cg_from_mem(g, x[e], a->dtype), a->dtype, rdt);
  }
}

static void store_split(cg *g, access *a, const tl_layout *l, int32_t n, int vec, LLVMValueRef allowed, cg_val *sv,
                        tl_dtype vdt, bool assume, const cg_cache_hint *h) {
  groups G;
  groups_make(g, a, l, n, vec, allowed, &G, -1, false);
  LLVMTypeRef mt = cg_mem_type(g, a->dtype);
  int W, per_word;
  vec_types(a, vec, &W, &per_word);
  for (int32_t i = 0; i < G.n; i++) {
    if (!G.canon[i]) continue;
    LLVMValueRef mem[16], *args = G.args[i];
    for (int e = 0; e < vec; e++) mem[e] = cg_to_mem(g, cg_cast(g, sv->r[i * vec + e], vdt, a->dtype), a->dtype);
    elems_to_words(g, mt, per_word, W, vec, mem, args + 6);
  }
  groups_emit(g, a, vec, allowed, &G, true, NULL, assume, h);
}

/* TILEC_LOOP_SPLIT_LOAD=1 (measuring, default off): a tile load in the body of a loop a ring streams
 * (not itself streamed: the backward's LSE and Dl rows each step) takes the split form (one uniform
 * branch to one predicated vector access a group; the combined form behind it) instead of the
 * combined form's vector access, scalar fallbacks and five predicates a group, every step.
 * Why: attn_bwd_dkdv's two row loads were 183 of its D64 step's 394 SASS instructions, where the
 * step's four dots are 256 cycles of tensor time: the loop is issue-bound (bench/RESULTS.md "bwd6"). */
static bool loop_split_load(cg *g, const tl_op *o) {
  if (g->epi || g->f->access_split || !g->plan || !tl_code_env_on("TILEC_LOOP_SPLIT_LOAD")) return false;
  for (int r = 0; r < g->plan->nring; r++)
    if (g->plan->rings[r].for_op == o->parent) return true;
  return false;
}

void cg_emit_load(cg *g, tl_op *o) {
  tl_func *f = g->f;
  cg_make_plan(g);
  if (cg_load_streamed(g, o)) return; /* a dot operand fed by the cp.async ring */
  int32_t res = o->res[0];
  tl_type *rt = &tl_val(f, res)->type;
  bool tile = rt->kind == TL_KIND_TILE;
  int32_t lid = tile ? rt->layout : -1;
  access a;
  make_access(g, o, lid, &a);
  if (tile != (a.tile_rank > 0) || (tile && rt->rank != a.tile_rank))
    TL_INTERNAL(g->ctx, "codegen: load view rank does not match its result");
  const tl_layout *l = tile ? cg_layout(g, res) : NULL;
  int32_t n = tile ? tl_layout_nregs(l) : 1;
  tl_dtype rdt = (tl_dtype)rt->dtype;
  LLVMTypeRef mt = cg_mem_type(g, a.dtype);
  int32_t other = o->nopnd > 1 + a.rank ? o->opnd[1 + a.rank] : -1;
  cg_val *ov = other >= 0 ? cg_get(g, other) : NULL;
  tl_dtype odt = other >= 0 ? (tl_dtype)tl_val(f, other)->type.dtype : a.dtype;
  if (other >= 0 && tl_val(f, other)->type.kind == TL_KIND_TILE && tl_val(f, other)->type.layout != lid)
    TL_INTERNAL(g->ctx, "codegen: load's `other` is not in the result's layout");
  cg_val *d = cg_new_val(g, res, n);
  int vec = gather_vector_width(l, &a, vector_width(l, &a));
  LLVMValueRef allowed = vec > 1 ? vector_allowed(g, &a, vec * a.bytes) : NULL;
  if (vec > 1 && f->access_split) {
    cg_cache_hint h;
    access_hint(g, o, false, &h);
    load_split(g, &a, l, n, vec, allowed, d, ov, odt, rdt, -1, false, assume_vectors(g, o, &a, vec), &h);
    return;
  }
  /* an epilogue sub-tile's load (emit_epilogue.c): the split form too, with constant
   * column offsets: one 4-byte word and one predicate a group instead of the combined
   * form's word, two 16-bit fallbacks and three predicates each, all live at once when
   * ptxas hoists the loads above the main loop's last wgmma wait */
  if (vec > 1 && tile && !a.any_gather && cg_epi_split_load(g)) {
    load_split(g, &a, l, n, vec, allowed, d, ov, odt, rdt, res, true, false, NULL);
    return;
  }
  /* a streamed main loop's small loads (the backward's LSE and Dl rows each step): the split form
   * too, TILEC_LOOP_SPLIT_LOAD=1 (measuring; docs/pipelines.md "Where the backward loses") */
  if (vec > 1 && tile && !a.any_gather && loop_split_load(g, o)) {
    load_split(g, &a, l, n, vec, allowed, d, ov, odt, rdt, -1, true, false, NULL);
    return;
  }
  int last = a.tile_rank - 1;
  for (int32_t r0 = 0; r0 < n; r0 += vec) {
    if (tile && !cg_reg_wanted(g, res, r0)) continue; /* another epilogue sub-tile's */
    if (tile && tl_layout_canon_reg(l, r0) != r0) {
      for (int e = 0; e < vec; e++) d->r[r0 + e] = d->r[tl_layout_canon_reg(l, r0 + e)];
      continue;
    }
    int32_t k[TL_MAX_RANK];
    reg_k(l, r0, k);
    LLVMValueRef x[16];
    if (vec > 1) {
      int W, per_word;
      vec_types(&a, vec, &W, &per_word);
      ptxbuf pb = {.n = 0};
      group_ptx(&pb, false, a.bytes, vec, LLVMTypeOf(a.size[last]) == g->i64, W);
      char cons[96];
      int cn = 0;
      for (int w = 0; w < W; w++) cn += snprintf(cons + cn, sizeof cons - (size_t)cn, "=r,");
      snprintf(cons + cn, sizeof cons - (size_t)cn, "l,l,%s,%s,r,r",
               LLVMTypeOf(a.size[last]) == g->i64 ? "l" : "r", LLVMTypeOf(a.size[last]) == g->i64 ? "l" : "r");
      LLVMValueRef args[6];
      group_args(g, &a, k, r0, allowed, args);
      LLVMTypeRef words[4] = {g->i32, g->i32, g->i32, g->i32};
      LLVMValueRef res_w = cg_asm(g, W == 1 ? g->i32 : LLVMStructTypeInContext(g->C, words, (unsigned)W, 0), pb.s,
                                  cons, args, 6, true);
      LLVMValueRef wv[4];
      for (int w = 0; w < W; w++) wv[w] = W == 1 ? res_w : LLVMBuildExtractValue(g->B, res_w, (unsigned)w, "");
      unpack_group(g, &a, k, r0, vec, wv, ov, odt, x, false);
    } else {
      LLVMValueRef dflt = ov ? cg_to_mem(g, cg_cast(g, ov->n == 1 ? ov->r[0] : ov->r[r0], odt, a.dtype), a.dtype)
                             : LLVMConstNull(mt);
      LLVMValueRef bits = ld_scalar(g, group_addr(g, &a, k, r0), group_inb(g, &a, k, a.tile_rank, r0),
                                    bits_of(g, dflt, a.bytes), a.bytes);
      x[0] = from_bits(g, bits, mt, a.bytes);
    }
    for (int e = 0; e < vec; e++) d->r[r0 + e] = cg_cast(g, cg_from_mem(g, x[e], a.dtype), a.dtype, rdt);
  }
}

static void store_regs(cg *g, tl_op *o);

void cg_emit_store(cg *g, tl_op *o) {
  if (cg_o_tma_store(g, o)) return;              /* fa3's O through q's slot and TMA (emit_o_tma.c) */
  if (cg_epi_store(g, o, store_regs)) return; /* through shared memory and TMA (emit_epilogue.c) */
  store_regs(g, o);
}

static void store_regs(cg *g, tl_op *o) {
  tl_func *f = g->f;
  int32_t val = o->opnd[o->nopnd - 1];
  tl_type *vt = &tl_val(f, val)->type;
  bool tile = vt->kind == TL_KIND_TILE;
  access a;
  make_access(g, o, tile ? vt->layout : -1, &a);
  if (!tile && a.tile_rank > 0) cg_unsupported(g, "store of a scalar into a tile view (splat it first)");
  if (tile && vt->rank != a.tile_rank) TL_INTERNAL(g->ctx, "codegen: store view rank does not match the tile");
  const tl_layout *l = tile ? cg_layout(g, val) : NULL;
  int32_t n = tile ? tl_layout_nregs(l) : 1;
  cg_val *sv = cg_get(g, val);
  tl_dtype vdt = (tl_dtype)vt->dtype;
  LLVMTypeRef mt = cg_mem_type(g, a.dtype);
  int vec = gather_vector_width(l, &a, vector_width(l, &a));
  LLVMValueRef allowed = vec > 1 ? vector_allowed(g, &a, vec * a.bytes) : NULL;
  if (vec > 1 && f->access_split) {
    cg_cache_hint h;
    access_hint(g, o, true, &h);
    store_split(g, &a, l, n, vec, allowed, sv, vdt, assume_vectors(g, o, &a, vec), &h);
    return;
  }
  int last = a.tile_rank - 1;
  for (int32_t r0 = 0; r0 < n; r0 += vec) {
    if (tile && (tl_layout_canon_reg(l, r0) != r0 || !cg_reg_wanted(g, val, r0))) continue;
    int32_t k[TL_MAX_RANK];
    reg_k(l, r0, k);
    LLVMValueRef mem[16];
    for (int e = 0; e < vec; e++) mem[e] = cg_to_mem(g, cg_cast(g, sv->r[r0 + e], vdt, a.dtype), a.dtype);
    if (vec == 1) {
      st_scalar(g, group_addr(g, &a, k, r0), group_inb(g, &a, k, a.tile_rank, r0), bits_of(g, mem[0], a.bytes),
                a.bytes);
      continue;
    }
    int W, per_word;
    vec_types(&a, vec, &W, &per_word);
    LLVMValueRef args[10];
    group_args(g, &a, k, r0, allowed, args);
    elems_to_words(g, mt, per_word, W, vec, mem, args + 6);
    ptxbuf pb = {.n = 0};
    bool wide = LLVMTypeOf(a.size[last]) == g->i64;
    group_ptx(&pb, true, a.bytes, vec, wide, 0);
    char cons[96];
    int cn = snprintf(cons, sizeof cons, "l,l,%s,%s,r,r", wide ? "l" : "r", wide ? "l" : "r");
    for (int w = 0; w < W; w++) cn += snprintf(cons + cn, sizeof cons - (size_t)cn, ",r");
    snprintf(cons + cn, sizeof cons - (size_t)cn, ",~{memory}");
    cg_asm(g, g->vd, pb.s, cons, args, 6 + W, true);
  }
}

/* ---- one owner per element (atomics) ----------------------------------------------------- */

/* i1: this thread is the first holder of its elements: its lane and warp bits
 * that replicate (zero bases) are 0; for a scalar (lid < 0), thread 0. */
static LLVMValueRef first_owner(cg *g, int32_t lid) {
  const tl_layout *l = lid >= 0 ? tl_layout_at(g->f, lid) : NULL;
  int32_t lane_mask = 0, warp_mask = 0;
  for (int j = 0; j < TL_LAYOUT_LANE_BITS; j++) {
    bool zero = true;
    for (int d = 0; l && d < l->rank; d++) zero = zero && l->lane[j][d] == 0;
    if (zero) lane_mask |= 1 << j;
  }
  int nwarp = 0, warps = g->f->warps > 0 ? g->f->warps : 4;
  while ((1 << nwarp) < warps) nwarp++;
  for (int j = 0; j < nwarp; j++) {
    bool zero = true;
    for (int d = 0; l && j < l->nwarp && d < l->rank; d++) zero = zero && l->warp[j][d] == 0;
    if (zero) warp_mask |= 1 << j;
  }
  LLVMValueRef p = LLVMBuildICmp(g->B, LLVMIntEQ, LLVMBuildAnd(g->B, g->lane, cg_i32(g, lane_mask), ""), cg_i32(g, 0), "");
  if (warp_mask)
    p = LLVMBuildAnd(g->B, p, LLVMBuildICmp(g->B, LLVMIntEQ, LLVMBuildAnd(g->B, g->warp, cg_i32(g, warp_mask), ""),
                                            cg_i32(g, 0), ""), "");
  return p;
}

void cg_view_elements(cg *g, tl_op *o, cg_elem_fn fn, void *ctx) {
  int32_t val = o->opnd[o->nopnd - 1];
  tl_type *vt = &tl_val(g->f, val)->type;
  bool tile = vt->kind == TL_KIND_TILE;
  int32_t lid = tile ? vt->layout : -1;
  access a;
  make_access(g, o, lid, &a);
  if (tile != (a.tile_rank > 0) || (tile && vt->rank != a.tile_rank))
    TL_INTERNAL(g->ctx, "codegen: view rank does not match the value");
  const tl_layout *l = tile ? cg_layout(g, val) : NULL;
  int32_t n = tile ? tl_layout_nregs(l) : 1;
  LLVMValueRef owner = first_owner(g, lid);
  for (int32_t r = 0; r < n; r++) {
    if (tile && tl_layout_canon_reg(l, r) != r) continue;
    int32_t k[TL_MAX_RANK];
    reg_k(l, r, k);
    LLVMValueRef inb = and1(g, owner, group_inb(g, &a, k, a.tile_rank, r));
    fn(g, ctx, group_addr(g, &a, k, r), inb, r);
  }
}

/* The elements of cg_view_elements in groups of vec registers contiguous along the last dim
 * (vec = the layout's run, at most max_vec) when the launch allows (unit last stride, the view's
 * address aligned to the group, its start and the last dim's size multiples of vec: each group
 * wholly inside or outside the tensor, as split_ok): gfn per group behind one uniform branch,
 * fn per element on the other side (cg_view_elements, which makes its own access there: the
 * register offsets cached in one access are defined in one block).  Returns false, emitting
 * nothing, when the layout has no such groups. */
bool cg_view_groups(cg *g, tl_op *o, int max_vec, cg_group_fn gfn, cg_elem_fn fn, void *ctx) {
  int32_t val = o->opnd[o->nopnd - 1];
  tl_type *vt = &tl_val(g->f, val)->type;
  if (vt->kind != TL_KIND_TILE) return false;
  int32_t lid = vt->layout;
  const tl_layout *l = cg_layout(g, val);
  access a;
  make_access(g, o, lid, &a);
  if (a.any_gather || vt->rank != a.tile_rank) return false;
  int vec = vector_width(l, &a);
  if (vec > max_vec) vec = max_vec;
  if (vec < 2) return false;
  int32_t n = tl_layout_nregs(l);
  int last = a.tile_rank - 1;
  LLVMValueRef owner = first_owner(g, lid);
  LLVMValueRef ok = split_ok(g, &a, vec, vector_allowed(g, &a, vec * a.bytes));
  LLVMBasicBlockRef fastb = LLVMAppendBasicBlockInContext(g->C, g->fn, "atom.vec");
  LLVMBasicBlockRef slowb = LLVMAppendBasicBlockInContext(g->C, g->fn, "atom.elems");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->C, g->fn, "atom.join");
  cg_cond_br_likely(g, ok, fastb, slowb);
  LLVMPositionBuilderAtEnd(g->B, fastb);
  for (int32_t r = 0; r < n; r += vec) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    int32_t k[TL_MAX_RANK];
    reg_k(l, r, k);
    LLVMValueRef inb = and1(g, owner, and1(g, group_inb(g, &a, k, last, r), k_inb(g, &a, last, k[last])));
    gfn(g, ctx, unit_stride_addr(g, &a, k), inb, r, vec);
  }
  LLVMBuildBr(g->B, join);
  LLVMPositionBuilderAtEnd(g->B, slowb);
  cg_view_elements(g, o, fn, ctx);
  LLVMBuildBr(g->B, join);
  LLVMPositionBuilderAtEnd(g->B, join);
  return true;
}
