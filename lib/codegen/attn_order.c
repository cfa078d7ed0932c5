/* attn_order.c: requires f->attn_order from route_pipeline (TILEC_ATTN_ORDER, opt-in) and a
 * non-persistent program; at the builder's position, sets g->pid to the program ids of this CTA
 * in the order that walks program_id(1) fastest inside groups (the launch's ids otherwise).
 *
 * The launch order is the CTA's linear index l = ctaid.x + ctaid.y * n0 (n0 = nctaid.x, n1 =
 * nctaid.y; ctaid.z untouched).  With G = min(n1, max(1, ceil(span / n0))) values of program_id(1)
 * a group, CTA l runs
 *     group   = l / (G n0),  r = l % (G n0),  first = group * G,  gs = min(G, n1 - first),
 *     pid(1)  = first + r % gs,               pid(0) = r / gs,
 * a bijection of the grid (the last group, gs < G, holds r < gs n0).  So inside a group every
 * program_id(0) value comes before the next one, for all the group's heads: attn.tile's causal
 * kernels, whose row blocks run heaviest first along program_id(0), start every group with its
 * heaviest blocks and end it with its lightest, and the grid's tail is the light blocks of the
 * last group (bench/RESULTS.md, seventeenth session, attnshort).  Grids of 2^32 CTAs or more keep
 * the launch's ids (the index would wrap). */
#include "cg.h"
#include "ring.h"

bool cg_attn_order(cg *g) {
  int span = g->f->attn_order;
  if (span <= 0) return false;
  LLVMValueRef n0 = cg_sreg(g, "nctaid", 0), n1 = cg_sreg(g, "nctaid", 1);
  LLVMValueRef c0 = cg_sreg(g, "ctaid", 0), c1 = cg_sreg(g, "ctaid", 1);
  LLVMValueRef total = LLVMBuildMul(g->B, LLVMBuildZExt(g->B, n0, g->i64, ""), LLVMBuildZExt(g->B, n1, g->i64, ""), "");
  LLVMValueRef wraps = LLVMBuildICmp(g->B, LLVMIntUGT, total, cg_i64(g, 0xffffffffLL), "order.wraps");
  /* G = min(n1, max(1, ceil(span / n0))) */
  LLVMValueRef G = LLVMBuildUDiv(g->B, LLVMBuildAdd(g->B, n0, cg_i32(g, span - 1), ""), n0, "");
  G = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, G, cg_i32(g, 1), ""), cg_i32(g, 1), G, "");
  G = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, n1, G, ""), n1, G, "order.heads");
  LLVMValueRef l = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, c1, n0, ""), c0, "order.l");
  LLVMValueRef per = LLVMBuildMul(g->B, G, n0, "");
  LLVMValueRef first = LLVMBuildMul(g->B, LLVMBuildUDiv(g->B, l, per, ""), G, "");
  LLVMValueRef r = LLVMBuildURem(g->B, l, per, "");
  LLVMValueRef left = LLVMBuildSub(g->B, n1, first, "");
  LLVMValueRef gs = LLVMBuildSelect(g->B, LLVMBuildICmp(g->B, LLVMIntULT, left, G, ""), left, G, "order.gs");
  LLVMValueRef p1 = LLVMBuildAdd(g->B, first, LLVMBuildURem(g->B, r, gs, ""), "");
  LLVMValueRef p0 = LLVMBuildUDiv(g->B, r, gs, "");
  g->pid[0] = LLVMBuildSelect(g->B, wraps, c0, p0, "pid0");
  g->pid[1] = LLVMBuildSelect(g->B, wraps, c1, p1, "pid1");
  g->pid[2] = cg_sreg(g, "ctaid", 2);
  return true;
}
