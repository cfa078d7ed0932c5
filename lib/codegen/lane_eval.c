/* lane_eval.c: requires an integer LLVM value built in the kernel being emitted; gives its value for
 * one lane and warp when its leaves are g->lane, g->warp and constants (the proofs of dequant_pair.c's
 * shift amounts and emit_prologue.c's equal slot rows evaluate expressions for every lane and warp). */
#include "cg.h"

/* One evaluation's leaves and its budget: a DAG whose nodes share operands is walked as a tree, so
 * the visits are bounded (EVAL_VISITS) as well as the depth; running out proves nothing (false). */
#define EVAL_VISITS 4096
typedef struct {
  cg *g;
  int64_t lane, warp;
  int visits_left;
} int_eval;

/* The value of the integer expression v for one lane and warp, its leaves being g->lane, g->warp
 * and constants (false: any other leaf or operation, a division by zero, too deep or too large). */
static bool eval_int(int_eval *E, LLVMValueRef v, int depth, int64_t *out) {
  cg *g = E->g;
  int64_t lane = E->lane, warp = E->warp;
  if (--E->visits_left < 0) return false;
  if (v == g->lane) return *out = lane, true;
  if (v == g->warp) return *out = warp, true;
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return false;
  unsigned w = LLVMGetIntTypeWidth(t);
  if (w != 1 && w != 32 && w != 64) return false;
  if (LLVMIsAConstantInt(v)) return *out = w == 1 ? (int64_t)LLVMConstIntGetZExtValue(v) : LLVMConstIntGetSExtValue(v), true;
  if (!LLVMIsAInstruction(v) || depth > 48) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  int64_t a = 0, b = 0, c = 0;
  int n = LLVMGetNumOperands(v);
  if (op == LLVMSelect) {
    if (!eval_int(E, LLVMGetOperand(v, 0), depth + 1, &c)) return false;
    return eval_int(E, LLVMGetOperand(v, c ? 1 : 2), depth + 1, out);
  }
  if (n < 1 || !eval_int(E, LLVMGetOperand(v, 0), depth + 1, &a)) return false;
  unsigned wa = LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(v, 0)));
  if (n >= 2 && !eval_int(E, LLVMGetOperand(v, 1), depth + 1, &b)) return false;
  uint64_t ua = wa == 32 ? (uint32_t)a : wa == 1 ? (uint64_t)(a & 1) : (uint64_t)a;
  uint64_t ub = wa == 32 ? (uint32_t)b : wa == 1 ? (uint64_t)(b & 1) : (uint64_t)b;
  int64_t r;
  switch (op) {
  case LLVMAdd: r = (int64_t)(ua + ub); break;
  case LLVMSub: r = (int64_t)(ua - ub); break;
  case LLVMMul: r = (int64_t)(ua * ub); break;
  case LLVMAnd: r = (int64_t)(ua & ub); break;
  case LLVMOr: r = (int64_t)(ua | ub); break;
  case LLVMXor: r = (int64_t)(ua ^ ub); break;
  case LLVMShl: if (ub >= w) return false; r = (int64_t)(ua << ub); break;
  case LLVMLShr: if (ub >= w) return false; r = (int64_t)(ua >> ub); break;
  case LLVMAShr: if (ub >= w) return false; r = (w == 32 ? (int64_t)(int32_t)ua : a) >> ub; break;
  case LLVMUDiv: if (!ub) return false; r = (int64_t)(ua / ub); break;
  case LLVMURem: if (!ub) return false; r = (int64_t)(ua % ub); break;
  case LLVMSDiv: case LLVMSRem: {
    int64_t sa = w == 32 ? (int32_t)ua : a, sb = w == 32 ? (int32_t)ub : b;
    if (!sb || (sb == -1 && op == LLVMSDiv)) return false;
    r = op == LLVMSDiv ? sa / sb : sa % sb;
    break;
  }
  case LLVMZExt: r = (int64_t)ua; break;
  case LLVMSExt: r = wa == 32 ? (int32_t)ua : wa == 1 ? -(int64_t)(ua & 1) : a; break;
  case LLVMTrunc: r = a; break;
  case LLVMICmp: {
    int64_t sa = wa == 32 ? (int32_t)ua : a, sb = wa == 32 ? (int32_t)ub : b;
    switch (LLVMGetICmpPredicate(v)) {
    case LLVMIntEQ: r = ua == ub; break;
    case LLVMIntNE: r = ua != ub; break;
    case LLVMIntUGT: r = ua > ub; break;
    case LLVMIntUGE: r = ua >= ub; break;
    case LLVMIntULT: r = ua < ub; break;
    case LLVMIntULE: r = ua <= ub; break;
    case LLVMIntSGT: r = sa > sb; break;
    case LLVMIntSGE: r = sa >= sb; break;
    case LLVMIntSLT: r = sa < sb; break;
    default: r = sa <= sb; break;
    }
    break;
  }
  default: return false;
  }
  *out = w == 32 ? (int64_t)(int32_t)(uint32_t)r : w == 1 ? (r & 1) : r;
  return true;
}

bool cg_lane_eval(cg *g, LLVMValueRef v, int64_t lane, int64_t warp, int64_t *out) {
  int_eval E = {g, lane, warp, EVAL_VISITS};
  return eval_int(&E, v, 0, out);
}

/* Every warp of the block, a warp-specialized kernel's producer warpgroup included: a proof by
 * evaluation covers all of them. */
int cg_all_warps(cg *g) {
  int w = g->threads > 0 ? g->threads / 32 : g->f->warps;
  return w > 0 ? w : 1;
}
