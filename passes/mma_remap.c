/* mma_remap: requires verified IR after route_pipeline (f->warps); keeps every
 * op and value; records per dot in f->sched (lib/schedule.h) the tensor-core
 * instruction and the warps_m x warps_n warp tiling chosen by lib/mma_tiling.h's
 * model among what codegen implements (mma.sync; whole rows per warp in
 * kernels that reduce; wgmma for the `cutlass` pipeline on sm_90a when B can
 * stream and A streams, is resident or comes from registers, wgmma_unfit; also
 * in kernels that reduce, wgmma's layout keeping whole rows per warp).  Breaks
 * nothing.  docs/scheduling.md. */
#include <stdio.h>
#include <string.h>

#include "mma_tiling.h"
#include "schedule.h"
#include "code_env.h"

static bool has_reduce(tl_func *f) {
  for (int32_t i = 0; i < f->ops.len; i++) {
    tl_op *o = tl_op_at(f, i);
    if (!(o->flags & TL_OPF_DEAD) && o->opc == TL_OP_reduce) return true;
  }
  return false;
}

/* What codegen can follow: mma.sync (its ldmatrix + mma.sync emitter), and in
 * kernels with a row reduction whole rows per warp (layout_assign keeps row
 * max / sum inside a warp and feeds attention's p from registers). */
static bool codegen_supports(const tl_mma_tiling *t, bool rows_per_warp) {
  return t->instr.family == TL_MMA_SYNC && (!rows_per_warp || t->units_n == 1);
}

/* Row bytes a K-major wgmma operand can have in a swizzled ring slot: one
 * 32/64/128-byte swizzle atom per row (codegen's row XOR swizzle is then
 * the wgmma swizzle mode of that width). */
static bool kmajor_rows_ok(int32_t bytes) { return bytes == 32 || bytes == 64 || bytes == 128; }

static bool is_8bit(int dt) { return dt == TL_F8E4M3 || dt == TL_F8E5M2; }
/* wgmma reads these operands only K-major (its transpose immediates exist for
 * 16-bit types only): the 8-bit ones and tf32 */
static bool kmajor_only(int dt) { return tl_dtype_bytes((tl_dtype)dt) != 2; }

/* The end of a dot's explain line: for 8-bit operands, the accumulation
 * codegen emits (option fp8-acc; lib/codegen/cg.h cg_dot_promotes). */
static void explain_acc(tl_sbuf *ex, tl_func *f, int32_t id, const tl_pass_opts *o, bool wgmma) {
  tl_op *op = tl_op_at(f, id);
  if (is_8bit(tl_val(f, op->opnd[0])->type.dtype) && is_8bit(tl_val(f, op->opnd[1])->type.dtype)) {
    if (o->fp8_acc_fast)
      tl_sbuf_puts(ex, "; fp8 accumulation: fast (the tensor core's own, ~13 mantissa bits over K)");
    else if (wgmma && !tl_code_env_off("TILEC_PROMOTE_PARTS"))
      tl_sbuf_puts(ex, "; fp8 accumulation: promote (tensor-core sums of <= 128 K added to the f32 accumulator by f32 "
                       "adds; a warpgroup's accumulator over 64x128 a 64x128 part at a time through a "
                       "one-part temporary; TILEC_PROMOTE_PARTS=0: one temporary as large as the accumulator)");
    else
      tl_sbuf_puts(ex, "; fp8 accumulation: promote (tensor-core sums of <= 128 K into a temporary as large as the "
                       "accumulator, added to the f32 accumulator by f32 adds)");
  }
  tl_sbuf_puts(ex, "\n");
}

/* wgmma.m64nNk16 (16-bit) / m64nNk32 (8-bit) for dot `id` (docs/pipelines.md
 * "Hopper wgmma", "wgmma attention"): the `cutlass` pipeline on sm_90a,
 * bf16/f16 or e4m3/e5m2 operands into f32, B streamable (the stream rule of
 * lib/schedule.h), A streamable, resident or (16-bit) registers (*a_from 0, 1,
 * 2), 8-bit ones both K-major (wgmma has no
 * transpose for 8-bit operands), M a multiple of 16 rows per warp over whole
 * warpgroups, N <= 256 (one instruction), at most 128 accumulator registers
 * per thread.  NULL when it applies, else why not. */
static const char *wgmma_unfit(tl_func *f, int32_t id, int32_t sm, bool arch_a, int warps, int *a_from) {
  tl_op *op = tl_op_at(f, id);
  const tl_type *at = &tl_val(f, op->opnd[0])->type, *bt = &tl_val(f, op->opnd[1])->type;
  const tl_type *rt = &tl_val(f, op->res[0])->type;
  int32_t M = at->shape[0], K = at->shape[1], N = bt->shape[1];
  if (sm != 90 || !arch_a) return "not sm_90a";
  if (f->pipeline != TL_PIPE_CUTLASS) return "pipeline is not cutlass";
  bool fp8 = is_8bit(at->dtype) && is_8bit(bt->dtype);
  if (!fp8 && (!tl_dot_kstep((tl_dtype)at->dtype) || bt->dtype != at->dtype)) return "operands not bf16/f16/fp8/i8/tf32";
  bool b8 = kmajor_only(at->dtype); /* K-major only: 8-bit and tf32 */
  if (rt->dtype != tl_dot_acc_dtype((tl_dtype)at->dtype)) return "accumulator not f32 (i32 for i8)";
  /* rows reduced in the kernel: wgmma's accumulator layout (all warps along
   * M, warp w of a warpgroup = 16 whole rows of each 64-row block, a row in
   * one quad) keeps every row inside a warp, like mma.sync's 4x1 */
  if (warps % 4 || M % (16 * warps)) return "M not 16 rows per warp over whole warpgroups";
  if (N > 256 || N % 8) return "N not a wgmma N (8..256)";
  if (!tl_wgmma_instr_n((tl_dtype)at->dtype, N)) return "N not an i8 wgmma N (8, 24, multiples of 16 up to 224, or twice one)";
  if ((N / 2) * (M / (16 * warps)) > 128) return "more than 128 accumulator registers per thread";
  int32_t *uses = tl_count_uses(f);
  const char *why;
  bool kc[2] = {true, true};
  /* an 8-bit [K][N] b streams (codegen's column-paired mma.sync path), but
   * wgmma cannot read it: ask with allow_kn8 only to learn its major-ness */
  bool b_staged = false, b_res = false;
  /* TILEC_WGMMA_STAGED_A=1: a B loaded before the loop (resident, read N-major from its slot) for
   * an A that is the transpose of a 16-bit tile computed in the loop (staged MN-major each step):
   * the one-pass backward's dQ = dS K (docs/pipelines.md "The one-pass backward's redesign") */
  bool staged_a_on = tl_code_env_on("TILEC_WGMMA_STAGED_A") && !b8;
  tl_value *av0 = tl_val(f, op->opnd[0]);
  tl_op *adef0 = av0->def >= 0 ? tl_op_at(f, av0->def) : NULL;
  bool a_trans_loop = staged_a_on && adef0 && adef0->opc == TL_OP_trans && op->parent >= 0 &&
                      !tl_defined_outside(f, adef0->opnd[0], op->parent) && tl_dtype_bytes((tl_dtype)at->dtype) == 2;
  if (a_trans_loop && op->parent >= 0 && tl_defined_outside(f, op->opnd[1], op->parent) &&
      tl_val(f, op->opnd[1])->def >= 0 && tl_op_at(f, tl_val(f, op->opnd[1])->def)->opc == TL_OP_load) {
    b_res = true;
    kc[1] = false; /* [K][N] as loaded: N-major */
  } else if (tl_stream_source(f, id, 1, uses, b8, &kc[1], &why) < 0) {
    /* a K-major 16-bit b computed in the loop from streamed loads (an operand prologue:
     * attn_rope's rotated k): staged each step into a swizzled slot that wgmma reads
     * (docs/pipelines.md "wgmma with a staged B"); TILEC_STAGED_WGMMA=0 keeps mma.sync */
    int32_t loads[16];
    tl_value *bv = tl_val(f, op->opnd[1]);
    if (b8 || tl_code_env_off("TILEC_STAGED_WGMMA") || bv->def < 0 || tl_op_at(f, bv->def)->opc != TL_OP_trans ||
        tl_prologue_loads(f, id, 1, loads, 16, &why) <= 0)
      return "b does not stream";
    b_staged = true;
    kc[1] = true;
  }
  /* a: streamed, or resident (loaded before the loop, staged once into a
   * wgmma-readable slot: attention's q), or 16-bit registers cast from an
   * f32 tile computed in the loop (attention's p: the accumulator fragment
   * is wgmma's register A fragment; codegen checks the layout) */
  int a_src = 0; /* 0 streamed, 1 resident, 2 registers, 3 staged MN-major (with a resident b) */
  *a_from = 0;
  if (b_res) {
    if (M != 64 || warps != 4) return "a staged MN-major needs M = 64 on one warpgroup (one 128-byte atom)";
    a_src = 3;
  } else if (tl_stream_source(f, id, 0, uses, b8, &kc[0], &why) < 0) {
    int32_t a = op->opnd[0], L = op->parent;
    tl_value *av = tl_val(f, a);
    tl_op *def = av->def >= 0 ? tl_op_at(f, av->def) : NULL;
    int32_t aloads[16];
    /* (with a staged b, a computed before the loop is resident too: attn_rope's rotated q) */
    if (L >= 0 && tl_defined_outside(f, a, L) && def && (def->opc == TL_OP_load || b_staged) && !b8) a_src = 1;
    else if (def && def->opc == TL_OP_cast && !b8 && tl_val(f, def->opnd[0])->type.dtype == TL_F32) a_src = 2;
    /* a 16-bit a computed in the loop by an operand prologue: layout_assign computes it in its fragment
     * layout (tl_prologue_a_frag_on), registers too */
    else if (def && !b8 && tl_dtype_bytes((tl_dtype)av->type.dtype) == 2 && tl_prologue_a_frag_on() &&
             L >= 0 && !tl_defined_outside(f, a, L) && tl_prologue_loads(f, id, 0, aloads, 16, &why) > 0)
      a_src = 2;
    else if (b8 && ((L >= 0 && tl_defined_outside(f, a, L) && def && def->opc == TL_OP_load) ||
                    (def && def->opc == TL_OP_cast)))
      return "a does not stream: an 8-bit a is taken only from a ring (not resident, not from registers)";
    else return "a does not stream, is not a resident load nor a 16-bit cast of an f32 tile (registers)";
  }
  /* an 8-bit [K][N] b: codegen transposes each k-step's slot through shared
   * memory into a K-major buffer (one 128-byte atom of N per 128 columns) */
  if (b8 && !kc[1] && at->dtype == TL_F32)
    return "f32 b kept [K][N]: wgmma reads tf32 operands only K-major (no transpose for tf32); give it as "
           "trans(load [N][K])";
  if (b8 && !kc[1] && N % 128)
    return "8-bit b kept [K][N] with N not a multiple of 128 (the transposed k-step is read in 128-byte atoms)";
  /* K-major rows: one 32/64/128-byte swizzle atom, or (16-bit) whole
   * 128-byte atoms side by side ([K/64][rows][64] slots) */
  int32_t kb = K * tl_dtype_bytes((tl_dtype)at->dtype);
  bool katoms = !b8 && kb % 128 == 0;
  if (a_src < 2 && !kmajor_rows_ok(kb) && !katoms) return "K rows not 32, 64 or 128 bytes";
  if ((kc[1] || b8) && !kmajor_rows_ok(kb) && !katoms) return "K rows not 32, 64 or 128 bytes";
  if (b_staged && !kmajor_rows_ok(kb)) return "staged b with K rows not 32, 64 or 128 bytes";
  if (!kc[1] && N % 64) return "[K][N] b with N not a multiple of 64 (128-byte atoms)";
  if (b_res && N != 64) return "a resident b read N-major needs N = 64 (one 128-byte atom)";
  *a_from = a_src | (b_staged ? 4 : 0);
  return NULL;
}

/* accumulator registers a thread above which mma_remap warns (192 of 255: the operands, addresses and the
 * loop need the rest) */
#define ACC_REGS_WARN 192

static void remap_dot(tl_func *f, int32_t id, const tl_pass_opts *o, int32_t sm, bool arch_a, bool rows_per_warp) {
  tl_op *op = tl_op_at(f, id);
  const tl_type *at = &tl_val(f, op->opnd[0])->type, *bt = &tl_val(f, op->opnd[1])->type;
  if (at->kind != TL_KIND_TILE || bt->kind != TL_KIND_TILE || at->rank != 2 || bt->rank != 2) return;
  tl_mma_problem pb = {0};
  pb.M = at->shape[0];
  pb.K = at->shape[1];
  pb.N = bt->shape[1];
  pb.dtype = (tl_dtype)at->dtype;
  pb.warps = f->warps > 0 ? f->warps : 4;
  pb.sm = sm;
  pb.arch_specific = arch_a;
  tl_mma_choice model;
  bool model_found = tl_mma_choose(&pb, &model);

  int32_t n = tl_mma_enumerate(&pb, NULL, 0);
  tl_mma_tiling *all = n > 0 ? tl_alloc(&f->ctx->arena, sizeof *all * (size_t)n) : NULL;
  if (n > 0) tl_mma_enumerate(&pb, all, n);
  const tl_mma_tiling *best = NULL;
  for (int32_t i = 0; i < n; i++)
    if (codegen_supports(&all[i], rows_per_warp) && (!best || tl_mma_compare(&all[i], best) < 0)) best = &all[i];

  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  if (ex)
    tl_sbuf_printf(ex, "mma_remap: kernel '%s': dot at %d:%d (%dx%dx%d %s, %d warps): ", f->name, op->loc.line,
                   op->loc.col, pb.M, pb.N, pb.K, tl_dtype_name(pb.dtype), pb.warps);
  /* An accumulator over ~3/4 of the 255 registers a thread may have spills whatever the tiling (a new user's
   * 256x256 f32 on @warps(4): 512 a thread, 21 KB of spill stores, silent but for --explain) */
  int64_t acc_regs = (int64_t)pb.M * pb.N / (32 * pb.warps);
  if (acc_regs > ACC_REGS_WARN) {
    /* (the warps that bring it to 128 a thread, up to 8: ptxas 13.0 gives a CTA of 16 warps 64 registers a thread,
     * and the 256x256 tile on 16 warps spilled 3 KB) */
    int want = pb.warps;
    while (want < 8 && (int64_t)pb.M * pb.N / (32 * want) > 128) want *= 2;
    char fix[64];
    if ((int64_t)pb.M * pb.N / (32 * want) <= 128) snprintf(fix, sizeof fix, "@warps(%d) or a smaller tile", want);
    else snprintf(fix, sizeof fix, "a smaller tile");
    tl_warning(f->ctx, op->loc,
               "the accumulator of this %dx%d dot takes %lld registers a thread on %d warps, of the 255 a thread can "
               "have: it will spill to local memory (%s)",
               pb.M, pb.N, (long long)acc_regs, pb.warps, fix);
  }
  int a_from = 0;
  const char *unfit = wgmma_unfit(f, id, sm, arch_a, pb.warps, &a_from);
  if (!unfit) {
    tl_dot_sched *d = tl_sched_dot(f, id, true);
    d->remapped = true;
    d->instr = TL_SCHED_MMA_WGMMA;
    d->wgmma_n = pb.N;
    d->warps_m = pb.warps;
    d->warps_n = 1;
    int wk = tl_dot_kstep(pb.dtype); /* k of one wgmma: 32 bytes of a K-major row */
    int wn = tl_wgmma_instr_n(pb.dtype, pb.N); /* i8: no m64n256, two m64n128 */
    bool staged_b = a_from & 4;
    a_from &= 3;
    if (ex)
      tl_sbuf_printf(ex,
                     "wgmma.m64n%dk%d, %d warpgroups over M (warps %dx1 of 16x%d), %d per k%d slice; %d accumulator "
                     "regs/thread; %s (mma.sync with these warps if they do not stream)",
                     wn, wk, pb.warps / 4, pb.warps, pb.N, pb.M / 64 * (pb.N / wn), wk, pb.N / 2 * (pb.M / (16 * pb.warps)),
                     tl_dot_wgmma_kn8(f, id) ? "operands by descriptor: a from its swizzled ring slot, b ([K][N], 8-bit) "
                                    "from a K-major buffer it is transposed into through shared memory each k-step"
                     : a_from == 1 ? "a from its resident slot (staged once, [K/64][M][64] 128-byte atoms when rows "
                                     "exceed 128 B), b from the swizzled ring slots, by descriptor"
                     : a_from == 2 ? "a from registers where layout_assign computes it in its fragment layout (a "
                                     "16-bit cast of an f32 accumulator in the mma layout, an operand prologue's "
                                     "result: the tma line says whether codegen took it), b from the swizzled ring "
                                     "slots by descriptor"
                     : a_from == 3 ? "a staged each step MN-major (the transpose of a tile computed in the loop: its rows "
                                     "stored as they are, TILEC_WGMMA_STAGED_A=1), b from its resident slot read N-major"
                                   : "operands read from the swizzled ring slots by descriptor");
    if (ex && staged_b)
      tl_sbuf_puts(ex, "; b computed in the loop (an operand prologue): staged each step into a swizzled K-major slot, "
                       "not a ring slot");
    if (ex && rows_per_warp) tl_sbuf_puts(ex, "; rows reduced inside a warp (a warp holds 16 whole rows of each 64)");
    if (ex) explain_acc(ex, f, id, o, true);
    return;
  }
  bool cutlass_a = sm == 90 && arch_a && f->pipeline == TL_PIPE_CUTLASS;
  if (!best) {
    /* nothing recorded: codegen keeps its default tiling (align_check
     * already rejected shapes no instruction takes) */
    if (ex) tl_sbuf_printf(ex, "no mma.sync tiling codegen can follow%s%s; codegen default\n", model_found ? "" : ": ",
                           model_found ? "" : model.reason);
    return;
  }
  tl_dot_sched *d = tl_sched_dot(f, id, true);
  d->remapped = true;
  d->instr = tl_sched_mma_sync_of_k(best->instr.k);
  d->warps_m = best->units_m;
  d->warps_n = best->units_n;
  if (!ex) return;
  char in[64];
  tl_mma_instr_str(best->instr, in, sizeof in);
  tl_sbuf_printf(ex, "%s, warps %dx%d of %dx%d", in, best->units_m, best->units_n, best->sub_m, best->sub_n);
  if (best->replication > 1) tl_sbuf_printf(ex, " (each tile computed by %d warps)", best->replication);
  tl_sbuf_printf(ex, "; %d accumulator regs/thread, %.3f ldmatrix.x4 per mma, %lld operand bytes from shared",
                 best->acc_regs, best->loads_per_mma, (long long)best->smem_operand_bytes);
  if (rows_per_warp) tl_sbuf_puts(ex, "; whole rows per warp (the kernel reduces rows)");
  bool said_wgmma = false;
  if (model_found && (model.best.instr.family != best->instr.family || model.best.units_m != best->units_m ||
                      model.best.units_n != best->units_n)) {
    char mi[64];
    tl_mma_instr_str(model.best.instr, mi, sizeof mi);
    tl_sbuf_printf(ex, "; the model prefers %s %dx%d", mi, model.best.units_m, model.best.units_n);
    if (model.best.instr.family == TL_MMA_WGMMA && cutlass_a)
      tl_sbuf_printf(ex, ", not taken (%s): recorded mma.sync", unfit), said_wgmma = true;
    else if (model.best.instr.family == TL_MMA_WGMMA)
      tl_sbuf_printf(ex, ", which codegen emits only for the cutlass pipeline on sm_90a: recorded mma.sync");
    else if (model.best.instr.family != TL_MMA_SYNC) tl_sbuf_puts(ex, ", not implemented in codegen: recorded mma.sync");
    else tl_sbuf_puts(ex, ", which splits rows over warps");
  }
  /* the cutlass pipeline on sm_90a asks for wgmma: always say why not */
  if (cutlass_a && !said_wgmma) tl_sbuf_printf(ex, "; no wgmma (%s)", unfit);
  explain_acc(ex, f, id, o, false);
}

/* Mark the dots of loop L whose results value v (a dot's A operand) is
 * computed from elementwise (through cast, broadcast, expand_dims), in *mark. */
static void mark_producers(tl_func *f, int32_t v, int32_t L, bool *mark, int depth) {
  tl_value *x = tl_val(f, v);
  if (depth > 24 || x->def < 0 || x->type.kind != TL_KIND_TILE) return;
  tl_op *d = tl_op_at(f, x->def);
  if (d->parent != L) return;
  if (d->opc == TL_OP_dot) {
    mark[x->def] = true;
    return;
  }
  if (!(tl_opinfo_table[d->opc].flags & TL_EW) && d->opc != TL_OP_cast && d->opc != TL_OP_convert_layout) return;
  for (int i = 0; i < d->nopnd; i++) mark_producers(f, d->opnd[i], L, mark, depth + 1);
}

/* Dots whose warps must hold whole rows though the kernel reduces none: a
 * register A chain (the attention backward's dV += P^T dO with P^T the
 * accumulator of S^T = K Q^T): the consumer takes its A fragments from the
 * producer's accumulator, so both tile M by whole rows per warp (4x1). */
static bool *register_chains(tl_func *f) {
  bool *mark = tl_alloc(&f->ctx->arena, (size_t)f->ops.len + 1);
  memset(mark, 0, (size_t)f->ops.len + 1);
  for (int32_t id = 0; id < f->ops.len; id++) {
    tl_op *op = tl_op_at(f, id);
    if ((op->flags & TL_OPF_DEAD) || op->opc != TL_OP_dot || op->parent < 0) continue;
    tl_value *a = tl_val(f, op->opnd[0]);
    if (a->def < 0 || tl_op_at(f, a->def)->opc != TL_OP_cast) continue;
    bool *m = tl_alloc(&f->ctx->arena, (size_t)f->ops.len + 1);
    memset(m, 0, (size_t)f->ops.len + 1);
    mark_producers(f, op->opnd[0], op->parent, m, 0);
    bool any = false;
    for (int32_t k = 0; k < f->ops.len; k++)
      if (m[k]) mark[k] = any = true;
    if (any) mark[id] = true;
  }
  return mark;
}

static bool run_mma_remap(tl_func *f, const tl_pass_opts *o) {
  int32_t sm = 90;
  bool arch_a = true;
  if (o->arch && !tl_mma_parse_arch(o->arch, &sm, &arch_a)) {
    sm = 90;
    arch_a = true;
  }
  bool rows_per_warp = has_reduce(f);
  bool *chain = rows_per_warp ? NULL : register_chains(f);
  for (int32_t id = 0; id < f->ops.len; id++) {
    tl_op *op = tl_op_at(f, id);
    if (!(op->flags & TL_OPF_DEAD) && op->opc == TL_OP_dot)
      remap_dot(f, id, o, sm, arch_a, rows_per_warp || (chain && chain[id]));
  }
  return true;
}

const tl_pass tl_pass_mma_remap = {
    "mma_remap",
    "requires verified IR (after route_pipeline); keeps ops and values; records mma instr + warps_m x warps_n per dot",
    run_mma_remap,
};
