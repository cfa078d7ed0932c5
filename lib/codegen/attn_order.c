/* attn_order.c: requires f->attn_order from route_pipeline (TILEC_ATTN_ORDER, default on) and a
 * non-persistent program; at the builder's position, sets g->pid to this CTA's program ids in the
 * order that runs the grid's last heads heaviest row block first across all of them (the launch's
 * ids otherwise).
 *
 * The launch order is the CTA's linear index l = ctaid.x + ctaid.y * n0 (n0 = nctaid.x, n1 =
 * nctaid.y; ctaid.z untouched).  The last G = min(n1, max(1, ceil(span / n0))) values of
 * program_id(1) (about two waves of CTAs) form the tail group; with base = (n1 - G) n0,
 *     l <  base:  pid(0) = ctaid.x, pid(1) = ctaid.y                 (the launch's order)
 *     l >= base:  r = l - base, pid(1) = n1 - G + r % G, pid(0) = r / G,
 * a bijection of the grid.  Inside the tail group every program_id(0) value comes before the next
 * for all G heads, so attn.tile's causal kernels (heaviest row blocks first along program_id(0))
 * start the group with its heaviest blocks and end the grid with its lightest: the SMs no longer idle
 * at the end while the last heads' heavy blocks, started last, run alone.  Only the tail is
 * reordered: before it a CTA that starts late is covered by the CTAs started after it, and the
 * launch order keeps a head's row blocks together (they read its K and V from L2 at about the same
 * time).  bench/RESULTS.md, seventeenth session, attnshort: the simulation, 5-11 % at S 1k-4k.
 * Grids of 2^32 CTAs or more keep the launch's ids (the index would wrap). */
#include "cg.h"

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
  LLVMValueRef first = LLVMBuildSub(g->B, n1, G, "order.first");
  LLVMValueRef base = LLVMBuildMul(g->B, first, n0, "");
  LLVMValueRef l = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, c1, n0, ""), c0, "order.l");
  LLVMValueRef plain = LLVMBuildOr(g->B, wraps, LLVMBuildICmp(g->B, LLVMIntULT, l, base, ""), "order.plain");
  LLVMValueRef r = LLVMBuildSub(g->B, l, base, "");
  LLVMValueRef p1 = LLVMBuildAdd(g->B, first, LLVMBuildURem(g->B, r, G, ""), "");
  LLVMValueRef p0 = LLVMBuildUDiv(g->B, r, G, "");
  g->pid[0] = LLVMBuildSelect(g->B, plain, c0, p0, "pid0");
  g->pid[1] = LLVMBuildSelect(g->B, plain, c1, p1, "pid1");
  g->pid[2] = cg_sreg(g, "ctaid", 2);
  return true;
}
