/* nvptx_fixups.c: needs an optimized LLVM module (after LLVMRunPasses), before the NVPTX back end;
 * keeps its meaning; rewrites the instructions that LLVM 19's NVPTX back end lowers wrongly into
 * equivalent ones it lowers right.
 *
 * sitofp i1: as a signed 1-bit integer, true is -1, so `sitofp i1 true` is -1.0.  NVPTX lowers
 * it as `selp.u32 1, 0` then `cvt.rn.f32.s32`, which gives +1.0.  instcombine makes it from
 * source like cast<f32>(-cast<i32>(b)) (found by the GPU random test, seed 4263).  Each one
 * (scalar or vector) becomes `select b, -1.0, 0.0`, which NVPTX lowers to selp.f32. */
#include <llvm-c/DebugInfo.h>

#include "cg.h"

static LLVMValueRef splat_fp(LLVMTypeRef ty, double x) {
  if (LLVMGetTypeKind(ty) != LLVMVectorTypeKind) return LLVMConstReal(ty, x);
  unsigned n = LLVMGetVectorSize(ty);
  LLVMValueRef one = LLVMConstReal(LLVMGetElementType(ty), x);
  LLVMValueRef elems[256];
  if (n > 256) return NULL;
  for (unsigned i = 0; i < n; i++) elems[i] = one;
  return LLVMConstVector(elems, n);
}

static bool is_i1(LLVMTypeRef ty) {
  if (LLVMGetTypeKind(ty) == LLVMVectorTypeKind) ty = LLVMGetElementType(ty);
  return LLVMGetTypeKind(ty) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(ty) == 1;
}

int cg_nvptx_fixups(LLVMModuleRef M) {
  int rewritten = 0;
  LLVMBuilderRef B = LLVMCreateBuilderInContext(LLVMGetModuleContext(M));
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f)) {
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef next;
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = next) {
        next = LLVMGetNextInstruction(in);
        if (LLVMGetInstructionOpcode(in) != LLVMSIToFP || !is_i1(LLVMTypeOf(LLVMGetOperand(in, 0)))) continue;
        LLVMTypeRef ty = LLVMTypeOf(in);
        LLVMValueRef minus_one = splat_fp(ty, -1.0), zero = splat_fp(ty, 0.0);
        if (!minus_one) continue; /* wider than any tile codegen makes */
        LLVMPositionBuilderBefore(B, in);
        LLVMValueRef sel = LLVMBuildSelect(B, LLVMGetOperand(in, 0), minus_one, zero, "");
        LLVMInstructionSetDebugLoc(sel, LLVMInstructionGetDebugLoc(in));
        LLVMReplaceAllUsesWith(in, sel);
        LLVMInstructionEraseFromParent(in);
        rewritten++;
      }
    }
  }
  LLVMDisposeBuilder(B);
  return rewritten;
}
