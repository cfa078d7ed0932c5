/* align_check: requires verified tile IR; keeps every op and value; sets
 * f->access_facts (lib/axisinfo.h: per load/store the vector width proven from
 * axis info and the launch-time facts it still needs), remarks on provably
 * misaligned views, errors on dot shapes no tensor-core instruction takes.
 * See docs/alignment.md. */
#include <string.h>

#include "axisinfo.h"

typedef struct checker {
  tl_func *f;
  const tl_pass_opts *o;
  tl_axis_analysis *A;
  tl_access_table *table;
  int32_t *tensor_ordinal; /* per param: its tensor ordinal, -1 for scalars */
} checker;

/* ---- rendering views for --explain and remarks --------------------------------------- */

static void render_value(tl_sbuf *b, tl_func *f, int32_t v, int depth, bool top) {
  tl_value *tv = tl_val(f, v);
  if (tv->def == -1 && tv->region_owner == -1 && tv->index < f->params.len) {
    tl_sbuf_puts(b, f->params.data[tv->index].name);
    return;
  }
  if (tv->name) {
    tl_sbuf_puts(b, tv->name);
    return;
  }
  if (tv->def < 0) {
    tl_sbuf_printf(b, "%%%d", v);
    return;
  }
  tl_op *o = tl_op_at(f, tv->def);
  const char *sym = o->opc == TL_OP_add ? " + " : o->opc == TL_OP_sub ? " - " : o->opc == TL_OP_mul ? " * "
                  : o->opc == TL_OP_div ? " / " : o->opc == TL_OP_rem ? " % " : NULL;
  if (o->opc == TL_OP_const && tl_dtype_is_int((tl_dtype)tv->type.dtype)) {
    tl_sbuf_printf(b, "%lld", (long long)o->ival);
  } else if (o->opc == TL_OP_program_id || o->opc == TL_OP_num_programs) {
    tl_sbuf_printf(b, "%s(%d)", tl_opinfo_table[o->opc].name, o->axis);
  } else if (o->opc == TL_OP_dim) {
    render_value(b, f, o->opnd[0], depth + 1, true);
    tl_sbuf_printf(b, ".shape[%d]", o->axis);
  } else if (sym && depth < 3) {
    if (!top) tl_sbuf_puts(b, "(");
    render_value(b, f, o->opnd[0], depth + 1, false);
    tl_sbuf_puts(b, sym);
    render_value(b, f, o->opnd[1], depth + 1, false);
    if (!top) tl_sbuf_puts(b, ")");
  } else {
    tl_sbuf_printf(b, "%%%d", v);
  }
}

static void render_view(tl_sbuf *b, tl_func *f, tl_op *o, const tl_param *p) {
  int rank = p->rank;
  tl_sbuf_puts(b, p->name);
  tl_sbuf_puts(b, "[");
  for (int d = 0; d < rank; d++) {
    if (d) tl_sbuf_puts(b, ", ");
    render_value(b, f, o->opnd[1 + d], 0, true);
    if (o->dims[d]) tl_sbuf_printf(b, ":+%d", o->dims[d]);
  }
  tl_sbuf_puts(b, "]");
}

/* ---- per access ------------------------------------------------------------------- */

static void explain_access(checker *C, int32_t op, const tl_access_facts *a, int64_t residue) {
  tl_func *f = C->f;
  tl_op *o = tl_op_at(f, op);
  const tl_param *p = &f->params.data[a->param];
  int eb = tl_dtype_bytes(p->dtype);
  tl_sbuf *b = C->o->explain_out;
  tl_sbuf_printf(b, "align_check: %s ", o->opc == TL_OP_load ? "load" : o->opc == TL_OP_store ? "store" : "atomic");
  render_view(b, f, o, p);
  tl_sbuf_printf(b, " at %d:%d: ", o->loc.line, o->loc.col);
  if (a->len == 0) {
    tl_sbuf_puts(b, "last dimension indexed: scalar accesses\n");
    return;
  }
  tl_axis_info s = tl_axis_get(C->A, o->opnd[p->rank]);
  if (s.is_const) tl_sbuf_printf(b, "start %lld, ", (long long)s.value);
  else if (a->misaligned) tl_sbuf_printf(b, "start %lld mod %d elems, ", (long long)residue, a->vec_want);
  else tl_sbuf_printf(b, "start divisible by %lld elem%s, ", (long long)a->start_div, a->start_div == 1 ? "" : "s");
  tl_sbuf_printf(b, "contiguous %d: ", a->len);
  if (a->vec <= 1) {
    tl_sbuf_puts(b, a->misaligned ? "misaligned for vectors: scalar accesses\n" : "nothing proves alignment: scalar accesses\n");
    return;
  }
  tl_sbuf_printf(b, "%d-byte vectors if %s is 16-byte aligned with stride[-1]=1", a->vec * eb, p->name);
  if (a->requires & TL_SPEC_STRIDES16) {
    tl_sbuf_puts(b, " and stride[");
    for (int d = 0; d + 1 < p->rank; d++) tl_sbuf_printf(b, "%s%d", d ? "], stride[" : "", d);
    tl_sbuf_printf(b, "] %% %d == 0", 16 / eb);
  }
  if (a->requires & TL_SPEC_LASTDIM16) tl_sbuf_printf(b, " and shape[-1] %% %d == 0", 16 / eb);
  tl_sbuf_puts(b, "; otherwise the scalar variant\n");
}

static void check_access(checker *C, int32_t op) {
  tl_func *f = C->f;
  tl_op *o = tl_op_at(f, op);
  tl_value *tv = tl_val(f, o->opnd[0]);
  if (tv->def != -1 || tv->region_owner != -1 || tv->index < 0 || tv->index >= f->params.len)
    TL_INTERNAL(f->ctx, "align_check: memory operand of op %d is not a tensor parameter", op);
  int32_t param = tv->index;
  const tl_param *p = &f->params.data[param];
  int rank = p->rank, last = rank - 1, eb = tl_dtype_bytes(p->dtype);
  tl_access_facts a = {op, param, C->tensor_ordinal[param], 0, 1, 1, 1, 0, false};
  if (a.tensor >= TL_SPEC_MAX_TENSORS) a.tensor = -1;
  int64_t residue = 0;
  bool gather_last = rank > 0 && tl_val(f, o->opnd[1 + last])->type.kind == TL_KIND_TILE; /* scalar accesses */
  if (rank > 0 && o->dims[last] > 0 && eb > 0 && eb <= 16 && !gather_last) {
    a.len = o->dims[last];
    a.vec_want = 16 / eb < a.len ? 16 / eb : a.len;
    int32_t start = o->opnd[1 + last];
    tl_axis_info s = tl_axis_get(C->A, start);
    a.start_div = tl_axis_elem_div(&s);
    int vec = a.vec_want;
    while (vec > 1 && a.start_div % vec != 0) vec /= 2;
    if (tl_axis_residue(C->A, start, a.vec_want, &residue)) {
      /* the residue can prove more than divisibility: (64k + 8) mod 8 = 0 */
      int by_residue = residue == 0 ? a.vec_want : (int)tl_axis_pow2_divisor(residue);
      if (by_residue > vec) vec = by_residue;
      a.misaligned = residue != 0;
    }
    /* a constant last dim decides at compile time whether vectors straddle its end */
    bool size_static = p->dims[last].is_const;
    if (size_static)
      while (vec > 1 && p->dims[last].value % vec != 0) vec /= 2;
    /* past the key's 8 tensor slots no launch fact can be checked: scalar */
    if (a.tensor < 0) vec = 1;
    a.vec = vec;
    if (vec > 1) {
      a.requires = TL_SPEC_BASE16 | TL_SPEC_LAST_STRIDE1;
      if (rank > 1) a.requires |= TL_SPEC_STRIDES16;
      if (!size_static) a.requires |= TL_SPEC_LASTDIM16;
    }
    if (a.misaligned) {
      tl_sbuf name = {0};
      render_value(&name, f, start, 0, true);
      tl_diag_at(f->ctx, TL_SEV_REMARK, o->loc,
                 "%s of '%s': the start along the last dimension (%s) is %lld modulo %d elements, so %d-byte "
                 "vectors are impossible: %d-byte accesses",
                 o->opc == TL_OP_load ? "load" : o->opc == TL_OP_store ? "store" : "atomic", p->name, name.data ? name.data : "?", (long long)residue,
                 a.vec_want, a.vec_want * eb, a.vec * eb);
      tl_sbuf_free(&name);
    }
  }
  C->table->by_op[op] = a;
  if (a.tensor >= 0) C->table->required_key |= TL_SPEC_TENSOR_BITS(a.tensor, a.requires);
  if (C->o->explain && C->o->explain_out) explain_access(C, op, &C->table->by_op[op], residue);
}

/* Tensor cores: mma.sync m16n8k16 (f16/bf16), m16n8k32 (f8, i8) and m16n8k8
 * (tf32), the only instructions a dot lowers to; a tile that is no multiple of
 * them cannot run. */
static void check_dot(checker *C, int32_t op) {
  tl_func *f = C->f;
  tl_op *o = tl_op_at(f, op);
  tl_type *at = &tl_val(f, o->opnd[0])->type, *bt = &tl_val(f, o->opnd[1])->type;
  if (at->rank != 2 || bt->rank != 2) return;
  int32_t M = at->shape[0], K = at->shape[1], N = bt->shape[1];
  tl_dtype dt = (tl_dtype)at->dtype;
  int kstep = tl_dot_kstep(dt);
  if (!kstep) return; /* the verifier refuses the type */
  const char *inst = kstep == 32 ? "mma.sync m16n8k32" : kstep == 8 ? "mma.sync m16n8k8" : "mma.sync m16n8k16";
  if (K % kstep)
    tl_error(f->ctx, o->loc, "dot of %dx%d by %dx%d %s tiles: K = %d is not a multiple of %d (%s on %s)", M, K, K, N,
             tl_dtype_name(dt), K, kstep, inst, tl_dtype_name(dt));
  else if (M % 16)
    tl_error(f->ctx, o->loc, "dot of %dx%d by %dx%d %s tiles: M = %d is not a multiple of 16 (%s)", M, K, K, N,
             tl_dtype_name(dt), M, inst);
  else if (N % 8)
    tl_error(f->ctx, o->loc, "dot of %dx%d by %dx%d %s tiles: N = %d is not a multiple of 8 (%s)", M, K, K, N,
             tl_dtype_name(dt), N, inst);
}

static void walk(checker *C, tl_region *r) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t op = r->ops.data[i];
    tl_op *o = tl_op_at(C->f, op);
    if (o->flags & TL_OPF_DEAD) continue;
    if (o->opc == TL_OP_load || o->opc == TL_OP_store || o->opc == TL_OP_atomic) check_access(C, op);
    else if (o->opc == TL_OP_dot) check_dot(C, op);
    for (int k = 0; k < tl_op_at(C->f, op)->nregions; k++) walk(C, &tl_op_at(C->f, op)->regions[k]);
  }
}

static bool run_align_check(tl_func *f, const tl_pass_opts *o) {
  tl_arena *arena = &f->ctx->arena;
  checker C = {f, o, tl_axis_analyze(f, NULL), tl_alloc(arena, sizeof(tl_access_table)), NULL};
  C.table->nops = f->ops.len;
  C.table->by_op = tl_alloc(arena, sizeof(tl_access_facts) * (size_t)(f->ops.len + 1));
  for (int i = 0; i < f->ops.len; i++) C.table->by_op[i].op = -1;
  C.tensor_ordinal = tl_alloc(arena, sizeof(int32_t) * (size_t)(f->params.len + 1));
  for (int p = 0, t = 0; p < f->params.len; p++) C.tensor_ordinal[p] = f->params.data[p].is_tensor ? t++ : -1;
  int errors = f->ctx->nerrors;
  walk(&C, &f->body);
  f->access_facts = C.table;
  return f->ctx->nerrors == errors;
}

const tl_pass tl_pass_align_check = {
    "align_check",
    "requires verified IR; keeps ops and values; sets f->access_facts, remarks on misaligned views, errors on dot "
    "shapes without a tensor-core instruction",
    run_align_check,
};
