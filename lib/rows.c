/* rows.c: which function-level loads of a kernel body a persistent CTA issues before the
 * tile that uses them (lib/rows.h; docs/rows.md). */
#include "rows.h"

#include "code_env.h"

#include <stdlib.h>
#include <string.h>

enum { K_INV = 0, K_VAR = 1, K_BAD = 2 }; /* same for every tile / depends on the tile / not recomputable */

static bool recomputable_op(const tl_op *o) {
  switch (o->opc) {
  case TL_OP_const: case TL_OP_dim: case TL_OP_iota: case TL_OP_program_id: case TL_OP_num_programs:
  case TL_OP_splat: case TL_OP_broadcast: case TL_OP_expand_dims: case TL_OP_convert_layout:
    return true;
  default:
    return (tl_opinfo_table[o->opc].flags & TL_EW) != 0;
  }
}

static bool tensor_written(const tl_func *f, int32_t t) {
  for (int i = 0; i < f->ops.len; i++) {
    const tl_op *o = &f->ops.data[i];
    if ((o->opc == TL_OP_store || o->opc == TL_OP_atomic) && !(o->flags & TL_OPF_DEAD) && o->opnd[0] == t) return true;
  }
  return false;
}

bool tl_grid_in_kernel(const tl_func *f) {
  for (int i = 0; i < f->grid.ops.len; i++) {
    const tl_op *o = &f->ops.data[f->grid.ops.data[i]];
    if (o->flags & TL_OPF_DEAD || o->opc == TL_OP_yield || o->opc == TL_OP_require) continue;
    if (!(o->opc == TL_OP_const || o->opc == TL_OP_dim || (tl_opinfo_table[o->opc].flags & TL_EW))) return false;
    for (int r = 0; r < o->nres; r++)
      if (f->values.data[o->res[r]].type.kind == TL_KIND_TILE) return false;
  }
  return f->grid.ops.len > 0;
}

static int64_t value_bytes(const tl_func *f, int32_t v) {
  const tl_type *t = &f->values.data[v].type;
  return tl_type_numel(t) * tl_dtype_bytes((tl_dtype)t->dtype);
}

bool tl_row_plan_make(tl_func *f, tl_row_plan *p, const char **why) {
  memset(p, 0, sizeof *p);
  *why = NULL;
  for (int i = 0; i < f->ops.len; i++)
    if (!(f->ops.data[i].flags & TL_OPF_DEAD) && f->ops.data[i].opc == TL_OP_dot) {
      *why = "it has a dot (the main-loop passes schedule it)";
      return false;
    }
  if (!tl_grid_in_kernel(f)) {
    *why = "its grid clause cannot be evaluated in the kernel";
    return false;
  }
  size_t nops = (size_t)f->ops.len + 1, nvals = (size_t)f->values.len + 1;
  p->role = tl_alloc(&f->ctx->arena, nops);
  p->level = tl_alloc(&f->ctx->arena, nops);
  uint8_t *kind = tl_alloc(&f->ctx->arena, nvals);
  int8_t *depth = tl_alloc(&f->ctx->arena, nvals); /* AHEAD loads on the longest chain to the value */
  memset(p->role, 0, nops);
  memset(p->level, 0, nops);
  memset(kind, K_BAD, nvals);
  memset(depth, 0, nvals);
  for (int i = 0; i < f->params.len; i++) kind[f->params.data[i].value] = K_INV;
  for (int i = 0; i < f->body.ops.len; i++) {
    int32_t id = f->body.ops.data[i];
    tl_op *o = &f->ops.data[id];
    if (o->flags & TL_OPF_DEAD) continue;
    bool is_load = o->opc == TL_OP_load;
    if (!is_load && !recomputable_op(o)) continue; /* results stay K_BAD */
    int k = o->opc == TL_OP_program_id ? K_VAR : K_INV, d = 0;
    for (int j = is_load ? 1 : 0; j < o->nopnd; j++) {
      int32_t v = o->opnd[j];
      if (kind[v] > k) k = kind[v];
      if (depth[v] > d) d = depth[v];
    }
    if (k == K_BAD || o->nres != 1) continue;
    if (is_load) {
      if (tensor_written(f, o->opnd[0])) continue;
      bool gather = false; /* its index tile is re-laid out through shared memory per tile: not planned */
      for (int j = 1; j < o->nopnd; j++) gather = gather || f->values.data[o->opnd[j]].type.kind == TL_KIND_TILE;
      if (gather) continue;
      if (k == K_INV) {
        p->role[id] = TL_ROW_HOISTED;
        p->nhoisted++;
        p->hoisted_bytes += value_bytes(f, o->res[0]);
      } else {
        if (d > 6) continue; /* a chain of 7 dependent gathers: not worth a ring each */
        p->role[id] = TL_ROW_AHEAD;
        p->level[id] = (int8_t)d;
        if (d > p->max_level) p->max_level = d;
        p->nahead++;
        p->ahead_bytes += value_bytes(f, o->res[0]);
        d++;
      }
    }
    kind[o->res[0]] = (uint8_t)k;
    depth[o->res[0]] = (int8_t)d;
  }
  if (!p->nahead) {
    *why = "no load of the body depends only on program ids, parameters and loads of unwritten tensors";
    return false;
  }
  return true;
}

int tl_row_distance(const tl_row_plan *p, int32_t op, int ahead) { return ahead + p->max_level - p->level[op]; }

void tl_row_slice(const tl_func *f, const tl_row_plan *p, int32_t op, uint8_t *mark) {
  /* walk the body backwards from op: an op is in the slice when a result feeds op or an op
   * already in it (planned loads are sources: their values are at hand) */
  int pos = -1;
  for (int i = 0; i < f->body.ops.len && pos < 0; i++)
    if (f->body.ops.data[i] == op) pos = i;
  if (pos < 0) return;
  uint8_t *need = calloc((size_t)f->values.len + 1, 1);
  if (!need) return;
  const tl_op *L = &f->ops.data[op];
  for (int j = 1; j < L->nopnd; j++) need[L->opnd[j]] = 1;
  for (int i = pos - 1; i >= 0; i--) {
    int32_t id = f->body.ops.data[i];
    const tl_op *o = &f->ops.data[id];
    if ((o->flags & TL_OPF_DEAD) || o->nres != 1 || !need[o->res[0]]) continue;
    if (p->role[id] != TL_ROW_NONE) continue; /* a planned load: its registers are kept */
    mark[id] = 1;
    for (int j = 0; j < o->nopnd; j++) need[o->opnd[j]] = 1;
  }
  free(need);
}

/* Does the kernel combine its tiles across threads (a reduce, scan, sort or argreduce)? */
static bool combines_tiles(const tl_func *f) {
  for (int32_t i = 0; i < f->ops.len; i++) {
    const tl_op *o = &f->ops.data[i];
    if (o->flags & TL_OPF_DEAD) continue;
    if (o->opc == TL_OP_reduce || o->opc == TL_OP_scan || o->opc == TL_OP_sort || o->opc == TL_OP_argreduce) return true;
  }
  return false;
}

/* The launch variant's form (docs/rows.md "rows6"; `TILEC_VARIANT_FORM=1|2` forces one): straight-line
 * (1) where the kernel combines its tiles, since every loaded value is live until the combination
 * anyway and the fallback's registers are what the variant removes (layernorm 93 -> 56 registers by
 * ptxas -v, 0.725 -> 0.887 of the copy bandwidth); the split's branch kept (2) where it is elementwise:
 * straight-line, ptxas issues a group's loads after the math and stores of the groups before it (swiglu
 * 64 -> 38 registers, 0.985 -> 0.941), the branch keeps an access's loads in one block, issued together. */
int tl_row_variant_form(const tl_func *f) {
  const char *e = tl_code_env("TILEC_VARIANT_FORM");
  if (e && (e[0] == '1' || e[0] == '2')) return e[0] - '0';
  return combines_tiles(f) ? 1 : 2;
}
