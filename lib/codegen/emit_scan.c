/* emit_scan.c: requires layouts; lowers `scan` (cumsum, cummax) and
 * `argreduce` (argmax, argmin) along one axis through shared memory:
 * barrier, every thread stores its elements (in the accumulation type: f32
 * for floats, i32 or i64 for integers) at their row-major offsets, barrier,
 * each line along the axis is scanned by one thread in index order (thread t
 * takes lines t, t + threads, ...), barrier, every thread reads back the
 * elements of its result registers, barrier.  The order of the operations is
 * the interpreter's, so results agree bit for bit (floats included).  Simple
 * and exact rather than fast: a line of L elements costs L dependent steps
 * (a parallel scan is the next step, docs/language.md "Scans"). */
#include "cg.h"

static tl_dtype acc_type(tl_dtype dt) {
  if (tl_dtype_is_float(dt)) return TL_F32;
  return dt == TL_I64 ? TL_I64 : TL_I32;
}


static LLVMValueRef elem_ptr(cg *g, LLVMValueRef index, int bytes, int64_t base) {
  LLVMValueRef b = LLVMBuildMul(g->B, index, cg_i32(g, bytes), "");
  if (base) b = LLVMBuildAdd(g->B, b, cg_i32(g, base), "");
  return cg_scratch_ptr(g, b);
}

void cg_emit_scan(cg *g, tl_op *o) {
  cg_make_plan(g);
  tl_func *f = g->f;
  LLVMBuilderRef B = g->B;
  int32_t src = o->opnd[0], res = o->res[0];
  tl_type *st = &tl_val(f, src)->type, *rt = &tl_val(f, res)->type;
  tl_dtype dt = (tl_dtype)st->dtype, adt = acc_type(dt);
  bool scan = o->opc == TL_OP_scan, fl = tl_dtype_is_float(dt);
  int axis = o->axis;
  int64_t len = st->shape[axis], inner = 1, numel = tl_type_numel(st);
  for (int d = axis + 1; d < st->rank; d++) inner *= st->shape[d];
  int64_t nlines = numel / len;
  int ab = adt == TL_I64 ? 8 : 4;
  LLVMTypeRef at = cg_reg_type(g, adt);
  if (numel * ab + nlines * 4 > 200 * 1024)
    cg_unsupported(g, "%s over a %lld-element tile (over 200 KiB of shared memory)", scan ? "scan" : "argmax/argmin",
                   (long long)numel);
  const tl_layout *ls = cg_layout(g, src);
  cg_val *sv = cg_get(g, src);
  bool tile_res = rt->kind == TL_KIND_TILE;
  const tl_layout *lr = tile_res ? cg_layout(g, res) : NULL;
  int32_t nres = tile_res ? tl_layout_nregs(lr) : 1;
  cg_val *dv = cg_new_val(g, res, nres);
  int64_t res_base = numel * ab;
  cg_scratch_use(g, (int)(res_base + nlines * 4));

  /* 1. stage the operand */
  cg_barrier(g);
  for (int32_t r = 0; r < tl_layout_nregs(ls); r++) {
    if (tl_layout_canon_reg(ls, r) != r) continue;
    LLVMBuildStore(B, cg_cast(g, sv->r[r], dt, adt), elem_ptr(g, cg_flat_index(g, st->layout, r, st->rank, st->shape, NULL), ab, 0));
  }
  cg_barrier(g);

  /* 2. one thread per line, in index order */
  int warps = f->warps > 0 ? f->warps : 4;
  LLVMValueRef tid = LLVMBuildAdd(B, g->lane, LLVMBuildMul(B, g->warp, cg_i32(g, 32), ""), "");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(B);
  LLVMBasicBlockRef hdr = LLVMAppendBasicBlockInContext(g->C, g->fn, "scan.line");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->C, g->fn, "scan.body");
  LLVMBasicBlockRef step = LLVMAppendBasicBlockInContext(g->C, g->fn, "scan.step");
  LLVMBasicBlockRef lend = LLVMAppendBasicBlockInContext(g->C, g->fn, "scan.lineend");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->C, g->fn, "scan.exit");
  LLVMBuildBr(B, hdr);
  LLVMPositionBuilderAtEnd(B, hdr);
  LLVMValueRef li = LLVMBuildPhi(B, g->i32, "line");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, li, cg_i32(g, nlines), ""), body, exit);
  LLVMPositionBuilderAtEnd(B, body);
  LLVMValueRef base = LLVMBuildAdd(B, LLVMBuildMul(B, LLVMBuildUDiv(B, li, cg_i32(g, inner), ""), cg_i32(g, len * inner), ""),
                                   LLVMBuildURem(B, li, cg_i32(g, inner), ""), "");
  LLVMValueRef x0 = LLVMBuildLoad2(B, at, elem_ptr(g, base, ab, 0), "");
  LLVMBuildCondBr(B, LLVMConstInt(g->i1, len > 1, 0), step, lend);
  LLVMPositionBuilderAtEnd(B, step);
  LLVMValueRef j = LLVMBuildPhi(B, g->i32, "j"), acc = LLVMBuildPhi(B, at, "acc"), bi = LLVMBuildPhi(B, g->i32, "best");
  LLVMValueRef e = LLVMBuildAdd(B, base, LLVMBuildMul(B, j, cg_i32(g, inner), ""), "");
  LLVMValueRef x = LLVMBuildLoad2(B, at, elem_ptr(g, e, ab, 0), "");
  LLVMValueRef accn, bin = bi;
  if (scan) {
    accn = cg_binop(g, o->kind == TL_SCAN_SUM ? TL_OP_add : TL_OP_max, 0, acc, x, adt);
    LLVMBuildStore(B, accn, elem_ptr(g, e, ab, 0));
  } else {
    bool mx = o->kind == TL_ARG_MAX;
    LLVMValueRef take;
    if (fl) {
      take = LLVMBuildFCmp(B, mx ? LLVMRealOGT : LLVMRealOLT, x, acc, "");
      LLVMValueRef nan_new = LLVMBuildAnd(B, LLVMBuildFCmp(B, LLVMRealUNO, x, x, ""),
                                          LLVMBuildFCmp(B, LLVMRealORD, acc, acc, ""), "");
      take = LLVMBuildOr(B, take, nan_new, "");
    } else {
      take = LLVMBuildICmp(B, mx ? LLVMIntSGT : LLVMIntSLT, x, acc, "");
    }
    accn = LLVMBuildSelect(B, take, x, acc, "");
    bin = LLVMBuildSelect(B, take, j, bi, "");
  }
  LLVMValueRef jn = LLVMBuildAdd(B, j, cg_i32(g, 1), "");
  LLVMBasicBlockRef step_end = LLVMGetInsertBlock(B);
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, jn, cg_i32(g, len), ""), step, lend);
  LLVMValueRef jv[2] = {cg_i32(g, 1), jn}, av[2] = {x0, accn}, bv[2] = {cg_i32(g, 0), bin};
  LLVMBasicBlockRef jb[2] = {body, step_end};
  LLVMAddIncoming(j, jv, jb, 2);
  LLVMAddIncoming(acc, av, jb, 2);
  LLVMAddIncoming(bi, bv, jb, 2);
  LLVMPositionBuilderAtEnd(B, lend);
  if (!scan) {
    LLVMValueRef fb = LLVMBuildPhi(B, g->i32, "argbest");
    LLVMValueRef fv[2] = {cg_i32(g, 0), bin};
    LLVMAddIncoming(fb, fv, jb, 2);
    LLVMBuildStore(B, fb, elem_ptr(g, li, 4, res_base));
  }
  LLVMValueRef lin = LLVMBuildAdd(B, li, cg_i32(g, warps * 32), "");
  LLVMBuildBr(B, hdr);
  LLVMValueRef lv[2] = {tid, lin};
  LLVMBasicBlockRef lb[2] = {pre, LLVMGetInsertBlock(B)};
  LLVMAddIncoming(li, lv, lb, 2);
  LLVMPositionBuilderAtEnd(B, exit);
  cg_barrier(g);

  /* 3. read back the result registers */
  for (int32_t r = 0; r < nres; r++) {
    if (tile_res && tl_layout_canon_reg(lr, r) != r) {
      dv->r[r] = dv->r[tl_layout_canon_reg(lr, r)];
      continue;
    }
    if (scan) {
      LLVMValueRef v = LLVMBuildLoad2(B, at, elem_ptr(g, cg_flat_index(g, rt->layout, r, rt->rank, rt->shape, NULL), ab, 0), "");
      dv->r[r] = cg_cast(g, v, adt, dt);
    } else {
      LLVMValueRef ix = tile_res ? cg_flat_index(g, rt->layout, r, rt->rank, rt->shape, NULL) : cg_i32(g, 0);
      dv->r[r] = LLVMBuildLoad2(B, g->i32, elem_ptr(g, ix, 4, res_base), "");
    }
  }
  cg_barrier(g);
}
