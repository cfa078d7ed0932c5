/* Unit tests of the text form: printer/parser round trip, exact floats,
 * parse errors, and the verifier/passes on built IR. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ctx_fixture.h"

TL_CTX_FIXTURE()

TestSuite(ir_text, .init = setup, .fini = teardown);

static char *print_module(tl_module *m) {
  tl_sbuf b = {0};
  tl_print_module(&b, m);
  return tl_sbuf_take(&b);
}

static tl_module *parse_text(const char *text) {
  int32_t file = tl_ctx_add_source(&ctx, "<test>", text, strlen(text));
  return tl_parse_ir(&ctx, file);
}

static double random_double(void) {
  uint64_t bits = ((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand();
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* A kernel built through the API with random constants and a loop. */
static tl_module *build_random(int n_consts) {
  tl_module *m = tl_module_new(&ctx);
  tl_func *f = tl_func_new(m, "rnd", TL_NOLOC);
  tl_sym s = {"N", 0, 0};
  tl_vec_push(&ctx.arena, &f->syms, s);
  tl_param x = {.name = "X", .is_tensor = true, .dtype = TL_F32, .rank = 1};
  x.dims[0].sym = 0;
  int32_t xi = tl_func_add_param(f, &x); /* the call may move f->params */
  int32_t xv = f->params.data[xi].value;
  tl_param sc = {.name = "s", .dtype = TL_I32};
  int32_t si = tl_func_add_param(f, &sc);
  int32_t sv = f->params.data[si].value;
  tl_tileconst tc = {"BN", 64, true, TL_NOLOC};
  tl_vec_push(&ctx.arena, &f->consts, tc);
  f->warps = 8;
  tl_type i32 = tl_scalar_type(TL_I32), f32 = tl_scalar_type(TL_F32);
  int32_t dim = tl_op_new(f, &f->grid, TL_OP_dim, &xv, 1, &i32, 1, TL_NOLOC);
  int32_t dv = tl_op_result(f, dim, 0);
  tl_op_new(f, &f->grid, TL_OP_yield, &dv, 1, NULL, 0, TL_NOLOC);
  int32_t acc = tl_build_const_f(f, &f->body, f32, 0.5, TL_NOLOC);
  for (int i = 0; i < n_consts; i++) {
    double d = random_double();
    int32_t c = (i % 3 == 0) ? tl_build_const_i(f, &f->body, i32, (int64_t)rand() - RAND_MAX / 2, TL_NOLOC)
                             : tl_build_const_f(f, &f->body, f32, d, TL_NOLOC);
    if (i % 3) acc = tl_build_binary(f, &f->body, TL_OP_add, acc, c, TL_NOLOC);
    if (i % 5 == 0) f->values.data[c].name = "k";
  }
  int32_t zero = tl_build_const_i(f, &f->body, i32, 0, TL_NOLOC);
  int32_t one = tl_build_const_i(f, &f->body, i32, 1, TL_NOLOC);
  int32_t ops[4] = {zero, sv, one, acc};
  int32_t loop = tl_op_new(f, &f->body, TL_OP_for, ops, 4, &f32, 1, TL_NOLOC);
  tl_op_add_regions(f, loop, 1);
  tl_region *body = &tl_op_at(f, loop)->regions[0];
  tl_region_add_arg(f, body, loop, i32);
  int32_t carried = tl_region_add_arg(f, body, loop, f32);
  int32_t next = tl_build_binary(f, body, TL_OP_mul, carried, carried, TL_NOLOC);
  tl_op_new(f, body, TL_OP_yield, &next, 1, NULL, 0, TL_NOLOC);
  int32_t r = tl_op_result(f, loop, 0);
  int32_t shape[1] = {64};
  tl_type t64 = tl_tile_type(TL_F32, 1, shape);
  int32_t sp = tl_op_new(f, &f->body, TL_OP_splat, &r, 1, &t64, 1, TL_NOLOC);
  int32_t st[3] = {xv, sv, tl_op_result(f, sp, 0)};
  int32_t store = tl_op_new(f, &f->body, TL_OP_store, st, 3, NULL, 0, TL_NOLOC);
  tl_op_at(f, store)->dims[0] = 64;
  return m;
}

Test(ir_text, built_ir_verifies_and_round_trips) {
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  srand(1234);
  int sizes[] = {1, 7, 31, 64, 97};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    tl_module *m = build_random(sizes[k]);
    cr_assert(tl_verify_module(m), "%s", tl_ctx_render_diags(&ctx));
    char *t1 = print_module(m);
    tl_module *m2 = parse_text(t1);
    cr_assert_not_null(m2, "%s\n%s", tl_ctx_render_diags(&ctx), t1);
    cr_assert(tl_verify_module(m2));
    char *t2 = print_module(m2);
    cr_assert_str_eq(t1, t2);
    /* structure survived: same number of live ops, same attributes */
    tl_func *f1 = m->funcs.data[0], *f2 = m2->funcs.data[0];
    cr_assert_eq(f2->warps, 8);
    cr_assert_eq(f2->consts.data[0].value, 64);
    cr_assert(f2->consts.data[0].overridden);
    cr_assert_eq(f1->body.ops.len, f2->body.ops.len);
    for (int i = 0; i < f1->body.ops.len; i++) {
      tl_op *a = tl_op_at(f1, f1->body.ops.data[i]), *b = tl_op_at(f2, f2->body.ops.data[i]);
      cr_assert_eq(a->opc, b->opc);
      if (a->opc == TL_OP_const) {
        tl_dtype dt = (tl_dtype)f1->values.data[a->res[0]].type.dtype;
        if (dt == TL_F32) {
          /* bit-exact, NaN aside */
          if (isnan(a->fval)) cr_assert(isnan(b->fval));
          else cr_assert(memcmp(&a->fval, &b->fval, sizeof(double)) == 0, "%.17g vs %.17g", a->fval, b->fval);
        } else {
          cr_assert_eq(a->ival, b->ival);
        }
      }
    }
    free(t1);
    free(t2);
  }
}

Test(ir_text, doubles_print_shortest_and_exact) {
  srand(99);
  for (int i = 0; i < 2000; i++) {
    double d = random_double();
    if (isnan(d)) continue;
    tl_sbuf b = {0};
    tl_print_double(&b, d);
    char *s = tl_sbuf_take(&b);
    double back = strtod(s, NULL);
    cr_assert(memcmp(&back, &d, sizeof d) == 0, "%s", s);
    cr_assert(strlen(s) <= 24, "%s", s);
    free(s);
  }
  tl_sbuf b = {0};
  tl_print_double(&b, 0.1);
  tl_print_double(&b, 1.0);
  tl_print_double(&b, -0.0);
  char *s = tl_sbuf_take(&b);
  cr_assert_str_eq(s, "0.11.0-0.0");
  free(s);
}

Test(ir_text, parse_error_has_position) {
  if (setjmp(jb)) cr_assert_fail("internal error");
  const char *text = "kernel @k() {\ngrid {\n  %a = const 1 : i32\n  yield %b\n}\nbody {\n}\n}\n";
  cr_assert_null(parse_text(text));
  cr_assert_eq(ctx.nerrors, 1);
  cr_assert_eq(ctx.diags.data[0].loc.line, 4);
  cr_assert_eq(ctx.diags.data[0].loc.col, 9);
  cr_assert(strstr(ctx.diags.data[0].message, "undefined value '%b'"));
}

Test(ir_text, parser_survives_every_prefix) {
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  srand(5);
  tl_module *m = build_random(13);
  char *t = print_module(m);
  size_t n = strlen(t);
  for (size_t cut = 0; cut < n; cut += 1 + (size_t)(rand() % 7)) {
    int32_t file = tl_ctx_add_source(&ctx, "<prefix>", t, cut);
    tl_module *p = tl_parse_ir(&ctx, file);
    if (p) tl_verify_module(p); /* a prefix may parse (e.g. empty); must not crash */
  }
  free(t);
}

Test(ir_text, passes_keep_verified_ir) {
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  srand(77);
  tl_module *m = build_random(41);
  int n = 0;
  const tl_pass *const *pipe = tl_pipeline_default(&n);
  cr_assert(n >= 3);
  tl_sbuf log = {0};
  tl_run_hooks h = {.print_after = "cse", .time_passes = true, .verify_each = true, .log = &log};
  cr_assert(tl_run_passes(m, pipe, n, NULL, &h), "%s", tl_ctx_render_diags(&ctx));
  char *l = tl_sbuf_take(&log);
  cr_assert(strstr(l, "// -----// IR Dump After cse //----- //"));
  cr_assert(strstr(l, "pass canonicalize: "));
  cr_assert(strstr(l, "pass dce: "));
  free(l);
  /* all the constant adds folded into one constant feeding the loop */
  tl_func *f = m->funcs.data[0];
  int adds = 0;
  for (int i = 0; i < f->body.ops.len; i++) adds += tl_op_at(f, f->body.ops.data[i])->opc == TL_OP_add;
  cr_assert_eq(adds, 0);
  cr_assert_not_null(tl_pass_find("dce"));
  cr_assert_null(tl_pass_find("nope"));
}

/* tl_sbuf_printf formats into the free space when the text fits and grows the buffer when it
 * does not (lib/util.c): every length across the 256-byte first allocation and its doublings,
 * the text exact and terminated after each append. */
Test(ir_text, sbuf_printf_appends_across_growth) {
  tl_sbuf b = {0};
  char want[8192] = {0};
  size_t len = 0;
  for (int i = 0; len + 80 < sizeof want; i++) {
    int w = i % 61;
    tl_sbuf_printf(&b, "%*d|", w, i);
    len += (size_t)snprintf(want + len, sizeof want - len, "%*d|", w, i);
    cr_assert_eq(b.len, len);
    cr_assert_eq(b.data[b.len], 0);
  }
  cr_assert_str_eq(b.data, want);
  cr_assert_not(b.oom);
  tl_sbuf_free(&b);
}
