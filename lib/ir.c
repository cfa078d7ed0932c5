/* ir.c: tile IR core - element types, types, the opcode table, building and
 * use-list helpers.  Everything lives in f->ctx->arena.  Ops and values are
 * kept in growable per-function arrays: hold ids, not pointers, across any
 * call that creates ops or values. */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- element types ------------------------------------------------------ */
static const struct {
  const char *name;
  int bits;
} dtype_info[TL_NUM_DTYPES] = {
    [TL_VOID] = {"void", 0},      [TL_I1] = {"i1", 1},       [TL_I8] = {"i8", 8},
    [TL_I16] = {"i16", 16},       [TL_I32] = {"i32", 32},    [TL_I64] = {"i64", 64},
    [TL_U8] = {"u8", 8},          [TL_F16] = {"f16", 16},    [TL_BF16] = {"bf16", 16},
    [TL_F32] = {"f32", 32},       [TL_F8E4M3] = {"f8e4m3", 8}, [TL_F8E5M2] = {"f8e5m2", 8},
};

const char *tl_dtype_name(tl_dtype t) {
  if ((unsigned)t >= TL_NUM_DTYPES) return "?";
  return dtype_info[t].name;
}

tl_dtype tl_dtype_from_name(const char *s, size_t n) {
  for (int t = TL_I1; t < TL_NUM_DTYPES; t++) {
    const char *name = dtype_info[t].name;
    if (strlen(name) == n && memcmp(name, s, n) == 0) return (tl_dtype)t;
  }
  return TL_VOID;
}

int tl_dtype_bits(tl_dtype t) { return (unsigned)t < TL_NUM_DTYPES ? dtype_info[t].bits : 0; }

int tl_dtype_bytes(tl_dtype t) {
  int bits = tl_dtype_bits(t);
  return (bits + 7) / 8;
}

bool tl_dtype_is_float(tl_dtype t) {
  return t == TL_F16 || t == TL_BF16 || t == TL_F32 || t == TL_F8E4M3 || t == TL_F8E5M2;
}

bool tl_dtype_is_int(tl_dtype t) { return (t >= TL_I1 && t <= TL_I64) || t == TL_U8; }

bool tl_dtype_is_signed(tl_dtype t) { return t >= TL_I8 && t <= TL_I64; }

bool tl_dtype_is_fp8(tl_dtype t) { return t == TL_F8E4M3 || t == TL_F8E5M2; }

int tl_dot_kstep(tl_dtype t) {
  switch (t) {
  case TL_F16: case TL_BF16: return 16;
  case TL_F8E4M3: case TL_F8E5M2: case TL_I8: return 32;
  case TL_F32: return 8;
  default: return 0;
  }
}

tl_dtype tl_dot_acc_dtype(tl_dtype operand) { return operand == TL_I8 ? TL_I32 : TL_F32; }

/* ---- types -------------------------------------------------------------- */
tl_type tl_scalar_type(tl_dtype dt) {
  tl_type t;
  memset(&t, 0, sizeof t);
  t.kind = TL_KIND_SCALAR;
  t.dtype = (uint8_t)dt;
  t.layout = -1;
  return t;
}

tl_type tl_tile_type(tl_dtype dt, int rank, const int32_t *shape) {
  tl_type t = tl_scalar_type(dt);
  t.kind = TL_KIND_TILE;
  if (rank < 0) rank = 0;
  if (rank > TL_MAX_RANK) rank = TL_MAX_RANK;
  t.rank = (uint8_t)rank;
  for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
  return t;
}

tl_type tl_tensor_type(tl_dtype dt, int rank) {
  tl_type t = tl_scalar_type(dt);
  t.kind = TL_KIND_TENSOR;
  if (rank < 0) rank = 0;
  if (rank > TL_MAX_RANK) rank = TL_MAX_RANK;
  t.rank = (uint8_t)rank;
  return t;
}

bool tl_type_eq(const tl_type *a, const tl_type *b) {
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  if (a->kind == TL_KIND_SCALAR || a->kind == TL_KIND_NONE) return true;
  if (a->rank != b->rank) return false;
  if (a->kind == TL_KIND_TENSOR) return true;
  for (int i = 0; i < a->rank && i < TL_MAX_RANK; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

int64_t tl_type_numel(const tl_type *t) {
  if (t->kind != TL_KIND_TILE) return 1;
  int64_t n = 1;
  for (int i = 0; i < t->rank && i < TL_MAX_RANK; i++) n *= t->shape[i];
  return n;
}

char *tl_type_str(const tl_type *t, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  buf[0] = 0;
  size_t used = 0;
#define PUT(...)                                                             \
  do {                                                                       \
    if (used < n) {                                                          \
      int w_ = snprintf(buf + used, n - used, __VA_ARGS__);                  \
      if (w_ > 0) used += (size_t)w_;                                        \
    }                                                                        \
  } while (0)
  const char *dt = tl_dtype_name((tl_dtype)t->dtype);
  switch (t->kind) {
  case TL_KIND_SCALAR: PUT("%s", dt); break;
  case TL_KIND_TILE:
    PUT("tile<");
    for (int i = 0; i < t->rank && i < TL_MAX_RANK; i++) PUT("%dx", (int)t->shape[i]);
    PUT("%s", dt);
    if (t->layout >= 0) PUT(", #L%d", (int)t->layout);
    PUT(">");
    break;
  case TL_KIND_TENSOR: PUT("tensor<%s, %d>", dt, (int)t->rank); break;
  default: PUT("none"); break;
  }
#undef PUT
  return buf;
}

/* ---- opcodes ------------------------------------------------------------- */
const tl_opinfo tl_opinfo_table[TL_NUM_OPS] = {
#define OP(id, text, nopnd, nres, flags) [TL_OP_##id] = {text, nopnd, nres, flags},
#include "ops.def"
#undef OP
};

tl_opcode tl_opcode_from_name(const char *s, size_t n) {
  for (int i = 0; i < TL_NUM_OPS; i++) {
    const char *name = tl_opinfo_table[i].name;
    if (strlen(name) == n && memcmp(name, s, n) == 0) return (tl_opcode)i;
  }
  return TL_NUM_OPS;
}

/* ---- building ---------------------------------------------------------------- */
tl_module *tl_module_new(tl_ctx *c) {
  tl_module *m = tl_alloc(&c->arena, sizeof *m);
  m->ctx = c;
  return m;
}

tl_func *tl_func_new(tl_module *m, const char *name, tl_loc loc) {
  tl_ctx *c = m->ctx;
  tl_func *f = tl_alloc(&c->arena, sizeof *f);
  f->ctx = c;
  f->name = tl_strdup(&c->arena, name ? name : "");
  f->loc = loc;
  f->grid.owner = -1;
  f->body.owner = -1;
  tl_vec_push(&c->arena, &m->funcs, f);
  return f;
}

int32_t tl_value_new(tl_func *f, tl_type t, int32_t def, int32_t index) {
  tl_value v;
  memset(&v, 0, sizeof v);
  v.type = t;
  v.def = def;
  v.index = index;
  v.region_owner = -1;
  v.name = NULL;
  int32_t id = f->values.len;
  tl_vec_push(&f->ctx->arena, &f->values, v);
  return id;
}

int32_t tl_func_add_param(tl_func *f, const tl_param *p) {
  int32_t idx = f->params.len;
  tl_vec_push(&f->ctx->arena, &f->params, *p);
  tl_type t = p->is_tensor ? tl_tensor_type(p->dtype, p->rank) : tl_scalar_type(p->dtype);
  int32_t v = tl_value_new(f, t, -1, idx);
  f->values.data[v].name = p->name;
  f->params.data[idx].value = v;
  return idx;
}

int32_t tl_region_add_arg(tl_func *f, tl_region *r, int32_t owner_op, tl_type t) {
  int32_t v = tl_value_new(f, t, -1, r->args.len);
  f->values.data[v].region_owner = owner_op;
  tl_vec_push(&f->ctx->arena, &r->args, v);
  return v;
}

int32_t tl_op_new(tl_func *f, tl_region *r, tl_opcode opc, const int32_t *opnd, int nopnd,
                  const tl_type *restypes, int nres, tl_loc loc) {
  tl_arena *a = &f->ctx->arena;
  TL_CHECK(f->ctx, (unsigned)opc < TL_NUM_OPS && nopnd >= 0 && nres >= 0);
  tl_op op;
  memset(&op, 0, sizeof op);
  op.opc = (uint16_t)opc;
  op.nopnd = nopnd;
  op.nres = nres;
  op.opnd = nopnd ? tl_alloc(a, sizeof(int32_t) * (size_t)nopnd) : NULL;
  if (nopnd) memcpy(op.opnd, opnd, sizeof(int32_t) * (size_t)nopnd);
  op.res = nres ? tl_alloc(a, sizeof(int32_t) * (size_t)nres) : NULL;
  op.parent = r ? r->owner : -1;
  op.loc = loc;
  int32_t id = f->ops.len;
  tl_vec_push(a, &f->ops, op);
  for (int i = 0; i < nres; i++) {
    int32_t v = tl_value_new(f, restypes[i], id, i);
    f->ops.data[id].res[i] = v;
  }
  if (r) tl_vec_push(a, &r->ops, id);
  return id;
}

void tl_op_add_regions(tl_func *f, int32_t op, int n) {
  tl_op *o = tl_op_at(f, op);
  TL_CHECK(f->ctx, o->nregions == 0 && n >= 0);
  if (n == 0) return;
  tl_region *rs = tl_alloc(&f->ctx->arena, sizeof(tl_region) * (size_t)n);
  for (int i = 0; i < n; i++) rs[i].owner = op;
  o = tl_op_at(f, op);
  o->regions = rs;
  o->nregions = n;
}

int tl_param_written(const tl_func *f, int32_t param) {
  if (param < 0 || param >= f->params.len || !f->params.data[param].is_tensor) return 0;
  int32_t v = f->params.data[param].value;
  int written = 0;
  for (int i = 0; i < f->ops.len && written != 1; i++) {
    const tl_op *op = &f->ops.data[i];
    if ((op->opc == TL_OP_store || op->opc == TL_OP_atomic) && !(op->flags & TL_OPF_DEAD) && op->nopnd > 0 &&
        op->opnd[0] == v)
      written = op->opc == TL_OP_store ? 1 : 2;
  }
  return written;
}

int32_t tl_loaded_param(tl_func *f, int32_t v, bool *transposed) {
  for (;;) {
    int32_t d = tl_val(f, v)->def;
    if (d < 0) return -1;
    tl_op *o = tl_op_at(f, d);
    if (o->opc == TL_OP_convert_layout || o->opc == TL_OP_trans) {
      if (o->opc == TL_OP_trans) *transposed = !*transposed;
      v = o->opnd[0];
      continue;
    }
    if (o->opc != TL_OP_load) return -1;
    tl_value *t = tl_val(f, o->opnd[0]);
    return t->def < 0 && t->region_owner < 0 ? t->index : -1;
  }
}

int32_t tl_op_clone(tl_func *f, const tl_op *src, const int32_t *opnd, const tl_type *t) {
  tl_op copy = *src; /* (tl_op_new may move the op table src points into) */
  int32_t nid = tl_op_new(f, NULL, (tl_opcode)copy.opc, opnd, copy.nopnd, t, 1, copy.loc);
  tl_op *n = tl_op_at(f, nid);
  n->ival = copy.ival;
  n->fval = copy.fval;
  n->axis = copy.axis;
  n->kind = copy.kind;
  memcpy(n->dims, copy.dims, sizeof n->dims);
  return nid;
}

void tl_op_append_opnd(tl_func *f, int32_t op, int32_t v) {
  tl_op *o = tl_op_at(f, op);
  int32_t *no = tl_alloc(&f->ctx->arena, sizeof *no * (size_t)(o->nopnd + 1));
  if (o->nopnd) memcpy(no, o->opnd, sizeof *no * (size_t)o->nopnd);
  no[o->nopnd] = v;
  o->opnd = no;
  o->nopnd++;
}

void tl_region_insert(tl_func *f, tl_region *r, int pos, int32_t op) {
  tl_vec_push(&f->ctx->arena, &r->ops, op); /* grow by one */
  if (pos < 0 || pos >= r->ops.len) pos = r->ops.len - 1;
  memmove(&r->ops.data[pos + 1], &r->ops.data[pos], sizeof(int32_t) * (size_t)(r->ops.len - 1 - pos));
  r->ops.data[pos] = op;
  tl_op_at(f, op)->parent = r->owner;
}

void tl_region_remove(tl_region *r, int pos) {
  if (pos < 0 || pos >= r->ops.len) return;
  memmove(&r->ops.data[pos], &r->ops.data[pos + 1], sizeof(int32_t) * (size_t)(r->ops.len - 1 - pos));
  r->ops.len--;
}

int32_t tl_build_const_i(tl_func *f, tl_region *r, tl_type t, int64_t v, tl_loc loc) {
  int32_t op = tl_op_new(f, r, TL_OP_const, NULL, 0, &t, 1, loc);
  tl_op_at(f, op)->ival = v;
  tl_op_at(f, op)->fval = (double)v;
  return tl_op_result(f, op, 0);
}

int32_t tl_build_const_f(tl_func *f, tl_region *r, tl_type t, double v, tl_loc loc) {
  int32_t op = tl_op_new(f, r, TL_OP_const, NULL, 0, &t, 1, loc);
  tl_op_at(f, op)->fval = v;
  return tl_op_result(f, op, 0);
}

int32_t tl_build_unary(tl_func *f, tl_region *r, tl_opcode opc, int32_t a, tl_loc loc) {
  tl_type t = tl_val(f, a)->type;
  int32_t op = tl_op_new(f, r, opc, &a, 1, &t, 1, loc);
  return tl_op_result(f, op, 0);
}

int32_t tl_build_binary(tl_func *f, tl_region *r, tl_opcode opc, int32_t a, int32_t b, tl_loc loc) {
  tl_type t = tl_val(f, a)->type;
  if (t.kind == TL_KIND_SCALAR && tl_val(f, b)->type.kind == TL_KIND_TILE) t = tl_val(f, b)->type;
  if (opc == TL_OP_cmp) t.dtype = TL_I1;
  int32_t ops[2] = {a, b};
  int32_t op = tl_op_new(f, r, opc, ops, 2, &t, 1, loc);
  return tl_op_result(f, op, 0);
}

void tl_replace_uses(tl_func *f, int32_t from, int32_t to) {
  for (int i = 0; i < f->ops.len; i++) {
    tl_op *o = &f->ops.data[i];
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nopnd; k++)
      if (o->opnd[k] == from) o->opnd[k] = to;
  }
}

int32_t *tl_count_uses(tl_func *f) {
  int32_t *uses = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(f->values.len + 1));
  for (int i = 0; i < f->ops.len; i++) {
    tl_op *o = &f->ops.data[i];
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nopnd; k++)
      if (o->opnd[k] >= 0 && o->opnd[k] < f->values.len) uses[o->opnd[k]]++;
  }
  return uses;
}

void tl_op_mark_dead(tl_func *f, int32_t op) {
  tl_op *o = tl_op_at(f, op);
  o->flags |= TL_OPF_DEAD;
  for (int r = 0; r < o->nregions; r++) {
    tl_region *reg = &o->regions[r];
    for (int i = 0; i < reg->ops.len; i++) tl_op_mark_dead(f, reg->ops.data[i]);
  }
}

void tl_op_erase(tl_func *f, tl_region *r, int pos) {
  if (pos < 0 || pos >= r->ops.len) return;
  tl_op_mark_dead(f, r->ops.data[pos]);
  tl_region_remove(r, pos);
}

int tl_pos_in(const tl_region *r, int32_t id) {
  for (int i = 0; i < r->ops.len; i++)
    if (r->ops.data[i] == id) return i;
  return -1;
}

tl_region *tl_region_of(tl_func *f, int32_t id) {
  int32_t p = tl_op_at(f, id)->parent;
  if (p < 0) return &f->body;
  tl_op *o = tl_op_at(f, p);
  for (int k = 0; k < o->nregions; k++)
    if (tl_pos_in(&o->regions[k], id) >= 0) return &o->regions[k];
  return NULL;
}

bool tl_op_runs_before(tl_func *f, int32_t first, int32_t op) {
  if (first < 0 || op < 0 || first == op) return false;
  tl_region *r = tl_region_of(f, first);
  int at = r ? tl_pos_in(r, first) : -1;
  if (at < 0) return false;
  for (int32_t a = op; a >= 0; a = tl_op_at(f, a)->parent) {
    int pos = tl_op_at(f, a)->parent == tl_op_at(f, first)->parent ? tl_pos_in(r, a) : -1;
    if (pos >= 0) return pos > at;
  }
  return false;
}

bool tl_op_holds(const tl_func *f, int32_t ancestor, int opc) {
  for (int32_t i = 0; i < f->ops.len; i++)
    if (!(f->ops.data[i].flags & TL_OPF_DEAD) && f->ops.data[i].opc == opc && tl_op_inside(f, i, ancestor)) return true;
  return false;
}

bool tl_op_inside(const tl_func *f, int32_t op, int32_t ancestor) {
  if (op < 0) return false;
  for (int32_t p = f->ops.data[op].parent; p >= 0; p = f->ops.data[p].parent)
    if (p == ancestor) return true;
  return false;
}

bool tl_is_zero_const(const tl_func *f, int32_t v) {
  int32_t d = f->values.data[v].def;
  if (d < 0) return false;
  const tl_op *c = &f->ops.data[d];
  return c->opc == TL_OP_const && !(c->flags & TL_OPF_DEAD) && c->ival == 0 && c->fval == 0.0 && !signbit(c->fval);
}

bool tl_defined_outside(const tl_func *f, int32_t v, int32_t L) {
  const tl_value *x = &f->values.data[v];
  if (x->def >= 0) return x->def != L && !tl_op_inside(f, x->def, L);
  if (x->region_owner >= 0) return x->region_owner != L && !tl_op_inside(f, x->region_owner, L);
  return true;
}

/* Whether value v is computed from an op of opcode opc (program_id: of axis `axis`, -1 any): a walk of
 * its definition chain, bounded (a chain too deep to walk counts as computed from it). */
bool tl_computed_from(tl_func *f, int32_t v, int opc, int axis) {
  int32_t stack[256];
  int n = 0;
  stack[n++] = v;
  while (n > 0) {
    int32_t d = tl_val(f, stack[--n])->def;
    if (d < 0) continue;
    tl_op *o = tl_op_at(f, d);
    if (o->opc == opc && (opc != TL_OP_program_id || axis < 0 || o->axis == axis)) return true;
    for (int k = 0; k < o->nopnd; k++) {
      if (n == 256) return true; /* (too deep to tell: say it does) */
      stack[n++] = o->opnd[k];
    }
  }
  return false;
}

bool tl_from_program_id(tl_func *f, int32_t v, int axis) { return tl_computed_from(f, v, TL_OP_program_id, axis); }

tl_tileconst *tl_tileconst_named(tl_func *f, const char *name) {
  for (int i = 0; i < f->consts.len; i++)
    if (!strcmp(f->consts.data[i].name, name)) return &f->consts.data[i];
  return NULL;
}
