/* dead_blocks.c: requires an emitted LLVM function (every block terminated); removes the blocks
 * that a branch on a constant condition never reaches, before the module verifier and LLVM's
 * passes see them (docs/codegen.md "Round 13").
 *
 * A TMA form (emit_tma.c cg_tma_assume) branches on the constant `true` to its TMA path; the
 * no-TMA path behind the other edge is emitted all the same (the emitters' state after it is the
 * kernel's either way) and the first SimplifyCFG deletes it: half of attn_bwd_dq's emitted IR
 * (1426 of 2952 instructions).  The verifier checked all of it first.  Here each constant
 * conditional branch becomes the unconditional one SimplifyCFG makes of it, the blocks no longer
 * reachable from the entry go, and a PHI of a kept block loses the incoming values of deleted
 * ones (SimplifyCFG's removePredecessor; rebuilt in place: the C API cannot remove an incoming
 * value).  The verifier then checks what LLVM compiles.  Only at -O1..-O3 (codegen.c): -O0 runs no
 * SimplifyCFG, and its PTX keeps what it had.  TILEC_DEAD_BLOCKS=0: the blocks stay for the
 * verifier and SimplifyCFG, as before (measuring). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code_env.h"
#include "cg.h"


/* Block -> its index in the function, by an open-addressing table of the block pointers (the
 * checks below look a block up for every use of a removed value). */
typedef struct block_map {
  LLVMBasicBlockRef *key;
  int *idx;
  unsigned mask;
} block_map;

static unsigned block_hash(LLVMBasicBlockRef b, unsigned mask) {
  uintptr_t x = (uintptr_t)b;
  x ^= x >> 17;
  x *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (unsigned)(x >> 20) & mask;
}

static bool block_map_init(block_map *m, LLVMBasicBlockRef *blocks, unsigned n) {
  unsigned cap = 16;
  while (cap < 2 * n) cap *= 2;
  m->mask = cap - 1;
  m->key = calloc(cap, sizeof *m->key);
  m->idx = malloc(sizeof *m->idx * cap);
  if (!m->key || !m->idx) return false;
  for (unsigned i = 0; i < n; i++) {
    unsigned h = block_hash(blocks[i], m->mask);
    while (m->key[h]) h = (h + 1) & m->mask;
    m->key[h] = blocks[i];
    m->idx[h] = (int)i;
  }
  return true;
}

/* Block b's index, or -1 (a block of another function: none here). */
static int block_index(const block_map *m, LLVMBasicBlockRef b) {
  for (unsigned h = block_hash(b, m->mask); m->key[h]; h = (h + 1) & m->mask)
    if (m->key[h] == b) return m->idx[h];
  return -1;
}

/* The edge from -> to of a PHI's incoming value stays: `from` is reachable and step 1 did not cut
 * the edge (a conditional branch on a constant whose other successor is `to`). */
static bool kept_edge(const block_map *bm, const bool *live, LLVMBasicBlockRef (*cut)[2], int ncut,
                      LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
  int k = block_index(bm, from);
  if (k < 0 || !live[k]) return false;
  for (int i = 0; i < ncut; i++)
    if (cut[i][0] == from && cut[i][1] == to) return false;
  return true;
}

void cg_drop_dead_blocks(cg *g, LLVMValueRef fn) {
  if (tl_env_off("TILEC_DEAD_BLOCKS")) return;
  unsigned nb = LLVMCountBasicBlocks(fn);
  if (nb < 2) return;
  LLVMBasicBlockRef *blocks = malloc(sizeof *blocks * nb);
  int *stack = malloc(sizeof *stack * nb);
  bool *live = calloc(nb, 1);
  LLVMBasicBlockRef(*cut)[2] = malloc(sizeof *cut * nb); /* the edges step 1 cuts: (from, to) */
  int ncut = 0;
  block_map bm = {0};
  if (!blocks || !stack || !live || !cut) goto out;
  LLVMGetBasicBlocks(fn, blocks);
  if (!block_map_init(&bm, blocks, nb)) goto out;
  /* 1. branches on a constant: the edge not taken is cut (applied in 3) */
  for (unsigned i = 0; i < nb; i++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(blocks[i]);
    if (!t || !LLVMIsABranchInst(t) || !LLVMIsConditional(t) || !LLVMIsAConstantInt(LLVMGetCondition(t))) continue;
    bool taken0 = LLVMConstIntGetZExtValue(LLVMGetCondition(t)) != 0;
    if (LLVMGetSuccessor(t, 0) == LLVMGetSuccessor(t, 1)) continue;
    cut[ncut][0] = blocks[i];
    cut[ncut++][1] = LLVMGetSuccessor(t, taken0 ? 1 : 0);
  }
  if (!ncut) goto out;
  /* 2. the blocks reachable from the entry over the edges not cut */
  int sp = 0;
  live[0] = true;
  stack[sp++] = 0;
  while (sp) {
    LLVMBasicBlockRef b = blocks[stack[--sp]];
    LLVMValueRef t = LLVMGetBasicBlockTerminator(b);
    unsigned ns = t ? LLVMGetNumSuccessors(t) : 0;
    for (unsigned s = 0; s < ns; s++) {
      LLVMBasicBlockRef to = LLVMGetSuccessor(t, s);
      bool is_cut = false;
      for (int c = 0; c < ncut && !is_cut; c++) is_cut = cut[c][0] == b && cut[c][1] == to;
      int k = is_cut ? -1 : block_index(&bm, to);
      if (k >= 0 && !live[k]) live[k] = true, stack[sp++] = k;
    }
  }
  /* A value of a removed block used where the kernel still runs (an instruction of a kept block, or
   * a kept PHI entry) is a codegen bug the verifier reports: then nothing is removed, so that it does. */
  for (unsigned i = 0; i < nb; i++) {
    if (live[i]) continue;
    for (LLVMValueRef x = LLVMGetFirstInstruction(blocks[i]); x; x = LLVMGetNextInstruction(x))
      for (LLVMUseRef u = LLVMGetFirstUse(x); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (!LLVMIsAInstruction(user)) continue;
        LLVMBasicBlockRef ub = LLVMGetInstructionParent(user);
        int k = block_index(&bm, ub);
        if (k < 0 || !live[k]) continue;
        if (!LLVMIsAPHINode(user)) goto out;
        for (unsigned e = 0; e < LLVMCountIncoming(user); e++)
          if (LLVMGetIncomingValue(user, e) == x &&
              kept_edge(&bm, live, cut, ncut, LLVMGetIncomingBlock(user, e), ub))
            goto out;
      }
  }
  /* 3. the constant branches become the unconditional ones, and PHIs of kept blocks lose the incoming
   * values of deleted blocks and of cut edges */
  for (int c = 0; c < ncut; c++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(cut[c][0]);
    LLVMBasicBlockRef to = LLVMGetSuccessor(t, LLVMGetSuccessor(t, 0) == cut[c][1] ? 1 : 0);
    LLVMPositionBuilderBefore(g->B, t);
    LLVMValueRef br = LLVMBuildBr(g->B, to);
    LLVMValueRef dbg = LLVMGetMetadata(t, LLVMGetMDKindIDInContext(g->C, "dbg", 3));
    if (dbg) LLVMSetMetadata(br, LLVMGetMDKindIDInContext(g->C, "dbg", 3), dbg);
    LLVMInstructionEraseFromParent(t);
  }

  for (unsigned i = 0; i < nb; i++) {
    if (!live[i]) continue;
    for (LLVMValueRef p = LLVMGetFirstInstruction(blocks[i]); p && LLVMIsAPHINode(p);) {
      LLVMValueRef next = LLVMGetNextInstruction(p);
      unsigned n = LLVMCountIncoming(p), keep = 0;
      for (unsigned k = 0; k < n; k++) keep += kept_edge(&bm, live, cut, ncut, LLVMGetIncomingBlock(p, k), blocks[i]);
      if (keep < n) {
        LLVMPositionBuilderBefore(g->B, p);
        LLVMValueRef q = LLVMBuildPhi(g->B, LLVMTypeOf(p), "");
        for (unsigned k = 0; k < n; k++) {
          LLVMBasicBlockRef ib = LLVMGetIncomingBlock(p, k);
          if (!kept_edge(&bm, live, cut, ncut, ib, blocks[i])) continue;
          LLVMValueRef iv = LLVMGetIncomingValue(p, k);
          LLVMAddIncoming(q, &iv, &ib, 1);
        }
        LLVMValueRef dbg = LLVMGetMetadata(p, LLVMGetMDKindIDInContext(g->C, "dbg", 3));
        if (dbg) LLVMSetMetadata(q, LLVMGetMDKindIDInContext(g->C, "dbg", 3), dbg);
        LLVMReplaceAllUsesWith(p, q);
        LLVMInstructionEraseFromParent(p);
      }
      p = next;
    }
  }
  /* 4. the unreachable blocks: their values' uses (only in other unreachable blocks) dropped, then
   * their instructions (terminators too: no branch refers to a block when it goes), then the blocks */
  for (unsigned i = 0; i < nb; i++) {
    if (live[i]) continue;
    for (LLVMValueRef x = LLVMGetFirstInstruction(blocks[i]); x; x = LLVMGetNextInstruction(x))
      if (LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMVoidTypeKind) LLVMReplaceAllUsesWith(x, LLVMGetPoison(LLVMTypeOf(x)));
  }
  for (unsigned i = 0; i < nb; i++) {
    if (live[i]) continue;
    for (LLVMValueRef x = LLVMGetLastInstruction(blocks[i]); x;) {
      LLVMValueRef prev = LLVMGetPreviousInstruction(x);
      LLVMInstructionEraseFromParent(x);
      x = prev;
    }
  }
  for (unsigned i = 0; i < nb; i++)
    if (!live[i]) LLVMDeleteBasicBlock(blocks[i]);
out:
  free(bm.key);
  free(bm.idx);
  free(cut);
  free(blocks);
  free(stack);
  free(live);
}
