/* Unit tests of the scheduling passes (passes/mma_remap.c, smem_swizzle.c,
 * swpipe.c, ldmatrix_sched.c) on IR built with the builder API: random tile
 * shapes, dtypes, warps and stages; every decision checked against an
 * independent computation (codegen's swizzle formula with its own bank count,
 * the ring budget, the k-slice rule), --disable-pass via the run hook, and
 * the text form round trip of the recorded table. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "mma_tiling.h"
#include "schedule.h"

static tl_ctx ctx;
static jmp_buf jb;

static void setup(void) {
  tl_ctx_init(&ctx);
  ctx.on_fatal = &jb;
  srand(12345);
}
static void teardown(void) { tl_ctx_free(&ctx); }

TestSuite(sched, .init = setup, .fini = teardown);

typedef struct gemm_ir {
  tl_func *f;
  int32_t dot, for_op;
} gemm_ir;

static int32_t tensor_param(tl_func *f, const char *name, tl_dtype dt) {
  tl_param p = {.name = name, .is_tensor = true, .dtype = dt, .rank = 2};
  p.dims[0].is_const = p.dims[1].is_const = true;
  p.dims[0].value = p.dims[1].value = 4096;
  int32_t idx = tl_func_add_param(f, &p); /* may move f->params.data */
  return f->params.data[idx].value;
}

static int32_t load2(tl_func *f, tl_region *r, int32_t t, int32_t i0, int32_t i1, int32_t d0, int32_t d1, tl_dtype dt) {
  int32_t opnd[3] = {t, i0, i1};
  int32_t shape[2] = {d0, d1};
  tl_type rt = tl_tile_type(dt, 2, shape);
  int32_t op = tl_op_new(f, r, TL_OP_load, opnd, 3, &rt, 1, TL_NOLOC);
  tl_op_at(f, op)->dims[0] = d0;
  tl_op_at(f, op)->dims[1] = d1;
  return tl_op_result(f, op, 0);
}

/* acc = 0; for k0: acc = dot(load A[m0:+BM, k0:+BK], load B[k0:+BK, 0:+BN], acc)
 * (in_loop), or one dot of the two loads without a loop. */
static gemm_ir build_gemm(int BM, int BN, int BK, tl_dtype dt, int warps, int stages, bool in_loop) {
  gemm_ir g = {0};
  tl_module *m = tl_module_new(&ctx);
  tl_func *f = tl_func_new(m, "g", TL_NOLOC);
  g.f = f;
  f->pipeline = TL_PIPE_MULTISTAGE;
  f->warps = warps;
  f->stages = stages;
  int32_t A = tensor_param(f, "A", dt), B = tensor_param(f, "B", dt);
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t zero = tl_build_const_i(f, &f->grid, i32, 1, TL_NOLOC);
  tl_op_new(f, &f->grid, TL_OP_yield, &zero, 1, NULL, 0, TL_NOLOC);
  int32_t c0 = tl_build_const_i(f, &f->body, i32, 0, TL_NOLOC);
  int32_t shape[2] = {BM, BN};
  tl_type acct = tl_tile_type(TL_F32, 2, shape);
  int32_t acc0 = tl_build_const_f(f, &f->body, acct, 0.0, TL_NOLOC);
  if (!in_loop) {
    int32_t a = load2(f, &f->body, A, c0, c0, BM, BK, dt), b = load2(f, &f->body, B, c0, c0, BK, BN, dt);
    int32_t opnd[3] = {a, b, acc0};
    g.dot = tl_op_new(f, &f->body, TL_OP_dot, opnd, 3, &acct, 1, TL_NOLOC);
    g.for_op = -1;
    return g;
  }
  int32_t hi = tl_build_const_i(f, &f->body, i32, 4096, TL_NOLOC);
  int32_t step = tl_build_const_i(f, &f->body, i32, BK, TL_NOLOC);
  int32_t fops[4] = {c0, hi, step, acc0};
  g.for_op = tl_op_new(f, &f->body, TL_OP_for, fops, 4, &acct, 1, TL_NOLOC);
  tl_op_add_regions(f, g.for_op, 1);
  tl_region *body = &tl_op_at(f, g.for_op)->regions[0];
  int32_t iv = tl_region_add_arg(f, body, g.for_op, i32);
  int32_t acc = tl_region_add_arg(f, body, g.for_op, acct);
  int32_t a = load2(f, body, A, c0, iv, BM, BK, dt), b = load2(f, body, B, iv, c0, BK, BN, dt);
  int32_t opnd[3] = {a, b, acc};
  g.dot = tl_op_new(f, body, TL_OP_dot, opnd, 3, &acct, 1, TL_NOLOC);
  int32_t res = tl_op_result(f, g.dot, 0);
  tl_op_new(f, body, TL_OP_yield, &res, 1, NULL, 0, TL_NOLOC);
  return g;
}

static const tl_pass *sched_passes[4];

static bool run_sched(tl_func *f, const char *arch, const char *disabled) {
  sched_passes[0] = tl_pass_find("mma_remap");
  sched_passes[1] = tl_pass_find("smem_swizzle");
  sched_passes[2] = tl_pass_find("swpipe");
  sched_passes[3] = tl_pass_find("ldmatrix_sched");
  for (int i = 0; i < 4; i++) cr_assert_not_null(sched_passes[i]);
  tl_module m = {.ctx = f->ctx};
  tl_func *one[1] = {f};
  m.funcs.data = one;
  m.funcs.len = m.funcs.cap = 1;
  tl_pass_opts o = {.arch = arch, .opt_level = 3};
  tl_run_hooks h = {.disabled = disabled};
  return tl_run_passes(&m, sched_passes, 4, &o, &h);
}

static int pick(const int *v, int n) { return v[rand() % n]; }

/* Bank conflicts of one ldmatrix.x4 (4 phases of 8 rows of 16 bytes) on
 * codegen's XOR layout (rows of rb bytes, chunk c of row r at c ^ f(r)),
 * counted directly: per phase, the most distinct 4-byte words in one bank. */
static int codegen_swizzle_f(int r, int rb) {
  int nch = rb / 16;
  return nch >= 8 ? r % 8 : nch == 4 ? (r / 2) % 4 : nch == 2 ? (r / 4) % 2 : 0;
}
static int ldmatrix_conflicts_codegen(int r0, int chunk0, int rb) {
  int total = 0;
  for (int m = 0; m < 4; m++) {
    int rbase = r0 + (m & 1) * 8, ch = chunk0 + (m >> 1);
    int words[32][8], nw[32] = {0};
    for (int j = 0; j < 8; j++) {
      int r = rbase + j;
      int addr = r * rb + ((ch ^ codegen_swizzle_f(r, rb)) * 16);
      for (int w = 0; w < 4; w++) {
        int word = addr / 4 + w, bank = word % 32;
        bool seen = false;
        for (int k = 0; k < nw[bank]; k++) seen |= words[bank][k] == word;
        if (!seen) words[bank][nw[bank]++] = word;
      }
    }
    int worst = 1;
    for (int b = 0; b < 32; b++) worst = nw[b] > worst ? nw[b] : worst;
    total += worst - 1;
  }
  return total;
}

Test(sched, random_gemms_follow_the_rules) {
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  static const int dims[] = {16, 32, 64, 128};
  static const int warp_counts[] = {1, 2, 4, 8};
  for (int trial = 0; trial < 60; trial++) {
    tl_dtype dt = rand() % 3 == 0 ? TL_F8E4M3 : TL_BF16;
    int eb = tl_dtype_bytes(dt);
    int BM = pick(dims, 4), BN = pick(dims, 4), BK = pick(dims, 4) * (dt == TL_F8E4M3 ? 2 : 1);
    int warps = pick(warp_counts, 4), stages = 2 + rand() % 7;
    const char *arch = rand() % 2 ? "sm_90a" : "sm_80";
    if (dt == TL_F8E4M3 && !strcmp(arch, "sm_80")) arch = "sm_89";
    gemm_ir g = build_gemm(BM, BN, BK, dt, warps, stages, true);
    cr_assert(run_sched(g.f, arch, NULL));
    tl_dot_sched *d = tl_sched_dot(g.f, g.dot, false);
    cr_assert_not_null(d);
    cr_assert(d->swizzled && d->pipelined && d->scheduled);

    /* mma_remap: a valid mma.sync tiling no other mma.sync tiling beats */
    tl_mma_problem pb = {.M = BM, .N = BN, .K = BK, .dtype = dt, .warps = warps};
    tl_mma_parse_arch(arch, &pb.sm, &pb.arch_specific);
    tl_mma_instr base = tl_mma_base_instr(dt);
    tl_mma_tiling mine, other;
    bool any = false;
    for (int wm = 1; wm <= warps; wm *= 2)
      for (int wn = 1; wm * wn <= warps; wn *= 2)
        any |= tl_mma_evaluate(&pb, base, wm, wn, &other) == NULL;
    cr_assert_eq(d->instr != 0, any, "BM %d BN %d BK %d warps %d", BM, BN, BK, warps);
    cr_assert_eq(d->remapped, any); /* no entry fields when no tiling fits (codegen default) */
    if (any) {
      cr_assert_eq(d->instr, dt == TL_F8E4M3 ? TL_SCHED_MMA_M16N8K32 : TL_SCHED_MMA_M16N8K16);
      cr_assert_null(tl_mma_evaluate(&pb, base, d->warps_m, d->warps_n, &mine));
      cr_assert_eq(BM % (16 * d->warps_m), 0);
      cr_assert_eq(BN % (8 * d->warps_n), 0);
      for (int wm = 1; wm <= warps; wm *= 2)
        for (int wn = 1; wm * wn <= warps; wn *= 2)
          if (!tl_mma_evaluate(&pb, base, wm, wn, &other)) cr_assert_geq(tl_mma_compare(&other, &mine), 0);
    }

    /* smem_swizzle: codegen's mode for the row width, conflict-free by a
     * direct count on codegen's formula */
    int rbs[2] = {BK * eb, dt == TL_F8E4M3 ? BK : BN * eb};
    for (int w = 0; w < 2; w++) {
      int rb = rbs[w], rows = w == 0 ? BM : dt == TL_F8E4M3 ? BN : BK;
      int want = rb >= 128 ? 128 : rb;
      if (want * rows % 128) want = 0;
      cr_assert_eq(d->swizzle_bytes[w], want, "operand %d rows %d x %d B", w, rows, rb);
      if (want && !(w == 1 && dt != TL_F8E4M3)) {
        int direct = 0;
        for (int r0 = 0; r0 + 16 <= rows; r0 += 16)
          for (int c = 0; c + 2 <= rb / 16; c += 2) direct += ldmatrix_conflicts_codegen(r0, c, rb);
        cr_assert_eq(d->conflicts[w][1], direct, "operand %d", w);
      }
      cr_assert_eq(d->conflicts[w][0], 0);
    }

    /* swpipe: loads of the loop stream when their chunks spread evenly over
     * the threads; the ring is as deep as the budget allows */
    int threads = warps * 32;
    bool sa = (BM * BK * eb / 16) % threads == 0;
    bool sb = dt != TL_F8E4M3 && (BK * BN * eb / 16) % threads == 0;
    int64_t ring = (sa ? BM * BK * eb : 0) + (sb ? BK * BN * eb : 0);
    int64_t budget = !strcmp(arch, "sm_90a") ? 227 * 1024 : !strcmp(arch, "sm_80") ? 163 * 1024 : 99 * 1024;
    int want_stages = stages;
    while (want_stages > 2 && want_stages * ring > budget) want_stages--;
    cr_assert_eq(d->streamed[0], sa);
    cr_assert_eq(d->streamed[1], sb);
    cr_assert_eq(d->stages, sa || sb ? want_stages : 1);

    /* ldmatrix_sched: two k-slices or more */
    cr_assert_eq(d->lookahead, BK / (eb == 1 ? 32 : 16) >= 2);
  }
}

Test(sched, dot_outside_a_loop) {
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  gemm_ir g = build_gemm(64, 64, 64, TL_BF16, 4, 3, false);
  cr_assert(run_sched(g.f, "sm_90a", NULL));
  tl_dot_sched *d = tl_sched_dot(g.f, g.dot, false);
  cr_assert_not_null(d);
  cr_assert(d->pipelined && d->scheduled);
  cr_assert(!d->streamed[0] && !d->streamed[1]);
  cr_assert_eq(d->stages, 1);
  cr_assert(!d->lookahead);
}

Test(sched, disabled_passes_leave_their_fields_unset) {
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  static const char *names[4] = {"mma_remap", "smem_swizzle", "swpipe", "ldmatrix_sched"};
  for (int off = 0; off < 4; off++) {
    gemm_ir g = build_gemm(128, 128, 64, TL_BF16, 8, 3, true);
    cr_assert(run_sched(g.f, "sm_90a", names[off]));
    tl_dot_sched *d = tl_sched_dot(g.f, g.dot, false);
    cr_assert_not_null(d);
    bool ran[4] = {d->remapped, d->swizzled, d->pipelined, d->scheduled};
    for (int i = 0; i < 4; i++) cr_assert_eq(ran[i], i != off, "%s disabled, %s", names[off], names[i]);
    if (off == 0) cr_assert(d->instr == 0 && d->warps_m == 0 && d->warps_n == 0);
    if (off == 1) cr_assert(d->swizzle_bytes[0] == 0 && d->swizzle_bytes[1] == 0);
    if (off == 2) cr_assert(!d->streamed[0] && !d->streamed[1] && d->stages == 1);
    if (off == 3) cr_assert(!d->lookahead);
  }
  /* the list is checked by name */
  char bad[64];
  cr_assert_null(tl_pass_list_check("swpipe,mma_remap", bad, sizeof bad));
  cr_assert_str_eq(tl_pass_list_check("swpipe,swpip", bad, sizeof bad), "swpip");
  cr_assert_str_eq(tl_pass_list_check("swpipe,", bad, sizeof bad), "");
  cr_assert(tl_pass_in_list("a,swpipe,b", "swpipe"));
  cr_assert(!tl_pass_in_list("swpipes,swpip", "swpipe"));
  cr_assert(!tl_pass_in_list(NULL, "swpipe"));
}

static bool same_sched(const tl_dot_sched *x, const tl_dot_sched *y) {
  bool same = x->op == y->op && x->remapped == y->remapped && x->instr == y->instr && x->warps_m == y->warps_m &&
              x->warps_n == y->warps_n && x->swizzled == y->swizzled && x->pipelined == y->pipelined &&
              x->stages == y->stages && x->scheduled == y->scheduled && x->lookahead == y->lookahead;
  for (int w = 0; w < 2; w++)
    same = same && x->swizzle_bytes[w] == y->swizzle_bytes[w] && x->pad_bytes[w] == y->pad_bytes[w] &&
           x->conflicts[w][0] == y->conflicts[w][0] && x->conflicts[w][1] == y->conflicts[w][1] &&
           x->streamed[w] == y->streamed[w];
  return same;
}

Test(sched, text_form_round_trips) {
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  for (int trial = 0; trial < 8; trial++) {
    gemm_ir g = build_gemm(64, 128, 32, TL_BF16, 4, 3, true);
    cr_assert(run_sched(g.f, "sm_90a", NULL));
    tl_dot_sched *d = tl_sched_dot(g.f, g.dot, false);
    /* random field values, so the parser cannot just re-derive them */
    d->warps_m = 1 + rand() % 8;
    d->warps_n = 1 + rand() % 8;
    d->pad_bytes[rand() % 2] = 16 * (1 + rand() % 4);
    d->conflicts[rand() % 2][rand() % 2] = 1 + rand() % 1000;
    d->streamed[rand() % 2] = false;
    d->stages = 2 + rand() % 6;
    d->lookahead = rand() % 2;
    if (trial % 4 == 1) d->scheduled = false;
    if (trial % 4 == 2) d->remapped = false;
    tl_dot_sched want = *d;
    tl_sbuf b = {0};
    tl_print_func(&b, g.f);
    int32_t file = tl_ctx_add_source(&ctx, "rt.tir", b.data, b.len);
    tl_module *m2 = tl_parse_ir(&ctx, file);
    cr_assert_not_null(m2, "%s\n%s", b.data, tl_ctx_render_diags(&ctx));
    tl_func *f2 = m2->funcs.data[0];
    int32_t dot2 = -1;
    for (int32_t i = 0; i < f2->ops.len; i++)
      if (tl_op_at(f2, i)->opc == TL_OP_dot) dot2 = i;
    tl_dot_sched *e = tl_sched_dot(f2, dot2, false);
    cr_assert_not_null(e);
    want.op = dot2;
    if (!want.remapped) want.instr = want.warps_m = want.warps_n = 0;
    if (!want.scheduled) want.lookahead = false;
    cr_assert(same_sched(e, &want), "%s", b.data);
    tl_sbuf b2 = {0};
    tl_print_func(&b2, f2);
    cr_assert_str_eq(b.data, b2.data);
    tl_sbuf_free(&b);
    tl_sbuf_free(&b2);
  }
}
