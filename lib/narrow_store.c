/* narrow_store.c: requires a verified function (layouts may be assigned); marks the values that
 * reach memory only through bf16 / f16 stores after tame elementwise ops (narrow_store.h). */
#include "narrow_store.h"

#include <string.h>

/* How a use of an operand lets the operand's value on.  PASS: into the op's result (the operand is
 * narrow-only when the result is); SINK: into memory at 16 bits (fine); ESCAPE: anywhere else. */
enum { ESCAPE, PASS, SINK };

static bool is_narrow_float(int dt) { return dt == TL_BF16 || dt == TL_F16; }

static int use_kind(tl_func *f, const tl_op *o, int k) {
  const tl_value *r = o->nres == 1 ? tl_val(f, o->res[0]) : NULL;
  switch ((tl_opcode)o->opc) {
  /* arithmetic that keeps a relative error relative (mul, the numerator of div, min / max, abs,
   * neg, select's data) or turns it into an absolute one no larger than the term's (add, sub,
   * fma: GELU's 1 + tanh(u), the absolute bound docs/language.md 8.1 gives) */
  case TL_OP_add: case TL_OP_sub: case TL_OP_mul: case TL_OP_fma:
  case TL_OP_min: case TL_OP_max: case TL_OP_neg: case TL_OP_abs:
    return r && tl_dtype_is_float((tl_dtype)r->type.dtype) ? PASS : ESCAPE;
  case TL_OP_div: return k == 0 && r && tl_dtype_is_float((tl_dtype)r->type.dtype) ? PASS : ESCAPE;
  case TL_OP_select: return k > 0 ? PASS : ESCAPE;
  case TL_OP_cast: return r && tl_dtype_is_float((tl_dtype)r->type.dtype) ? PASS : ESCAPE;
  /* shape ops: move elements, compute nothing */
  case TL_OP_splat: case TL_OP_broadcast: case TL_OP_expand_dims: case TL_OP_reshape:
  case TL_OP_trans: case TL_OP_permute: case TL_OP_slice: case TL_OP_cat:
  case TL_OP_convert_layout:
    return PASS;
  case TL_OP_store: {
    if (k != o->nopnd - 1) return ESCAPE; /* an index */
    int tdt = tl_val(f, o->opnd[0])->type.dtype, vdt = tl_val(f, o->opnd[k])->type.dtype;
    return is_narrow_float(tdt) && is_narrow_float(vdt) ? SINK : ESCAPE;
  }
  /* reductions, dots, comparisons, transcendental / discontinuous functions, indices, atomics,
   * loop-carried and if-yielded values, random offsets, bit patterns */
  default: return ESCAPE;
  }
}

uint8_t *tl_narrow_only(tl_func *f) {
  size_t nv = (size_t)f->values.len;
  uint8_t *escapes = tl_alloc(&f->ctx->arena, nv + 1);
  memset(escapes, 0, nv + 1);
  /* uses that escape by themselves */
  for (int i = 0; i < f->ops.len; i++) {
    const tl_op *o = &f->ops.data[i];
    if (o->flags & TL_OPF_DEAD) continue;
    for (int k = 0; k < o->nopnd; k++)
      if (o->opnd[k] >= 0 && (size_t)o->opnd[k] < nv && use_kind(f, o, k) == ESCAPE) escapes[o->opnd[k]] = 1;
  }
  /* a PASS use escapes when the op's result does; backwards over the op table (operands are
   * mostly defined before their users), to a fixpoint */
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = f->ops.len - 1; i >= 0; i--) {
      const tl_op *o = &f->ops.data[i];
      if ((o->flags & TL_OPF_DEAD) || o->nres != 1 || !escapes[o->res[0]]) continue;
      for (int k = 0; k < o->nopnd; k++) {
        int32_t v = o->opnd[k];
        if (v < 0 || (size_t)v >= nv || escapes[v] || use_kind(f, o, k) != PASS) continue;
        escapes[v] = 1;
        changed = true;
      }
    }
  }
  for (size_t v = 0; v < nv; v++) escapes[v] = !escapes[v];
  return escapes;
}
