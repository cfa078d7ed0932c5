/* emit_shape.c: requires layouts; lowers `slice` (a constant sub-tile),
 * `cat` (two tiles joined along an axis) and `permute` through shared memory: barrier,
 * every thread stores its source elements at their row-major offset in the
 * result's index space (a slice keeps the source's space), barrier, every
 * thread loads the elements of its result registers, barrier.  Exact for
 * every layout; a register renaming where the layouts allow it (RoPE's
 * halves) is a later optimization. */
#include "cg.h"

/* Row-major index over the source `shape` of the element that result
 * register r (layout lid) holds, result dim d being source dim order[d]. */
static LLVMValueRef permuted_index(cg *g, int32_t lid, int32_t r, int rank, const int32_t *shape, const int32_t *order) {
  int64_t stride[TL_MAX_RANK], s = 1;
  for (int d = rank - 1; d >= 0; d--) stride[d] = s, s *= shape[d];
  LLVMValueRef off = NULL;
  for (int d = 0; d < rank; d++) {
    LLVMValueRef c = cg_coord(g, lid, r, d);
    LLVMValueRef term = stride[order[d]] == 1 ? c : LLVMBuildMul(g->B, c, cg_i32(g, stride[order[d]]), "");
    off = off ? LLVMBuildAdd(g->B, off, term, "") : term;
  }
  return off ? off : cg_i32(g, 0);
}

static void stage(cg *g, int32_t v, const int32_t *shape, const int32_t *shift, int bytes) {
  tl_type *t = &tl_val(g->f, v)->type;
  const tl_layout *l = cg_layout(g, v);
  cg_val *sv = cg_get(g, v);
  for (int32_t r = 0; r < tl_layout_nregs(l); r++) {
    if (tl_layout_canon_reg(l, r) != r) continue;
    LLVMValueRef ix = cg_flat_index(g, t->layout, r, t->rank, shape, shift);
    LLVMBuildStore(g->B, cg_to_mem(g, sv->r[r], (tl_dtype)t->dtype),
                   cg_scratch_ptr(g, LLVMBuildMul(g->B, ix, cg_i32(g, bytes), "")));
  }
}

void cg_emit_slice_cat(cg *g, tl_op *o) {
  cg_make_plan(g);
  tl_func *f = g->f;
  int32_t res = o->res[0], a = o->opnd[0];
  tl_type *rt = &tl_val(f, res)->type, *at = &tl_val(f, a)->type;
  tl_dtype dt = (tl_dtype)rt->dtype;
  int bytes = tl_dtype_bytes(dt), rank = rt->rank;
  bool slice = o->opc == TL_OP_slice, perm = o->opc == TL_OP_permute;
  const int32_t *space = slice || perm ? at->shape : rt->shape; /* the staging buffer's shape */
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= space[d];
  if (n * bytes > 200 * 1024)
    cg_unsupported(g, "%s of a %lld-byte tile (over 200 KiB of shared memory)", tl_opinfo_table[o->opc].name,
                   (long long)(n * bytes));
  cg_scratch_use(g, (int)(n * bytes));
  int32_t zero[TL_MAX_RANK] = {0}, shift[TL_MAX_RANK] = {0};
  cg_barrier(g);
  stage(g, a, space, zero, bytes);
  if (o->opc == TL_OP_cat) {
    shift[o->axis] = at->shape[o->axis];
    stage(g, o->opnd[1], space, shift, bytes);
  }
  cg_barrier(g);
  const tl_layout *lr = cg_layout(g, res);
  int32_t nr = tl_layout_nregs(lr);
  cg_val *dv = cg_new_val(g, res, nr);
  int32_t start[TL_MAX_RANK] = {0};
  for (int d = 0; slice && d < rank; d++) start[d] = o->dims[d];
  LLVMTypeRef mt = cg_mem_type(g, dt);
  for (int32_t r = 0; r < nr; r++) {
    int32_t cr = tl_layout_canon_reg(lr, r);
    if (cr != r) {
      dv->r[r] = dv->r[cr];
      continue;
    }
    LLVMValueRef ix = perm ? permuted_index(g, rt->layout, r, rank, space, o->dims)
                           : cg_flat_index(g, rt->layout, r, rank, space, start);
    LLVMValueRef p = cg_scratch_ptr(g, LLVMBuildMul(g->B, ix, cg_i32(g, bytes), ""));
    dv->r[r] = cg_from_mem(g, LLVMBuildLoad2(g->B, mt, p, ""), dt);
  }
  cg_barrier(g);
}
