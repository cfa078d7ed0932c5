/* The launcher's allocation-free grid evaluator (tl_grid_eval_*) against the
 * interpreter's tl_eval_grid, for every kernel of every example over random
 * shape-symbol values (ragged: 1, primes, large), reusing one evaluator per
 * kernel across all launches as the launcher does; a false `require` (the
 * row kernels' C <= BC) refused by both with the same diagnostic. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "interp.h"
#include "require.h"
#include "ctx_fixture.h"

TL_CTX_FIXTURE()
TestSuite(grid_eval, .init = setup, .fini = teardown);

static tl_module *compile(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/%s", TILEC_SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot open %s", path);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  int32_t file = tl_ctx_add_source(&ctx, path, buf, n);
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  tl_module *m = tl_frontend(&ctx, file, NULL, NULL, 0, NULL);
  cr_assert(m, "%s: %s", name, tl_ctx_render_diags(&ctx));
  return m;
}

/* Arguments with every shape symbol set to syms[sym], constant dims as declared. */
static void make_args(const tl_func *f, const int64_t *syms, tl_arg *a, char *dummy) {
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *p = &f->params.data[i];
    memset(&a[i], 0, sizeof a[i]);
    a[i].is_tensor = p->is_tensor;
    if (!p->is_tensor) {
      a[i].is_float = true;
      a[i].f = 0.5;
      a[i].i = 3;
      continue;
    }
    a[i].data = dummy;
    a[i].dtype = p->dtype;
    a[i].rank = p->rank;
    int64_t stride = 1;
    for (int d = p->rank - 1; d >= 0; d--) {
      a[i].shape[d] = p->dims[d].is_const ? p->dims[d].value : syms[p->dims[d].sym];
      a[i].strides[d] = stride;
      stride *= a[i].shape[d];
    }
  }
}

Test(grid_eval, matches_the_interpreter_on_every_example) {
  static const char *names[] = {"gemm.tile", "gemm_fp8.tile", "attn.tile", "rmsnorm.tile", "add_rmsnorm.tile",
                                "rope.tile", "softmax.tile", "layernorm.tile", "swiglu.tile"};
  static const int64_t values[] = {1, 2, 7, 31, 127, 128, 129, 1000, 4097, 65537};
  static char dummy[16];
  srand(1234);
  int checked = 0, required = 0;
  for (size_t e = 0; e < sizeof names / sizeof *names; e++) {
    tl_module *m = compile(names[e]);
    for (int k = 0; k < m->funcs.len; k++) {
      const tl_func *f = m->funcs.data[k];
      char err[512] = "", err2[512] = "";
      tl_grid_eval *g = tl_grid_eval_new(f, err, sizeof err);
      cr_assert(g, "%s: %s", f->name, err);
      for (int round = 0; round < 40; round++) {
        int64_t syms[16];
        for (int s = 0; s < 16; s++) syms[s] = values[rand() % 10];
        tl_arg args[16];
        make_args(f, syms, args, dummy);
        if (!tl_check_args(f, args, f->params.len, err, sizeof err)) continue; /* e.g. a constant-size mismatch */
        int64_t want[3], got[3];
        /* random sizes can ask for more than 2^31 programs (attention: 65537 x 1000 heads),
         * or overflow the grid's i32 arithmetic (Z * H = 65537 * 65537, which used to wrap
         * to a wrong grid): the interpreter refuses those; that round has no grid to compare */
        if (!tl_eval_grid(f, args, f->params.len, want, err, sizeof err)) {
          cr_assert(strstr(err, "more than 2^31 programs") || strstr(err, "overflows i32") || tl_require_is_failure(err),
                    "%s: %s", f->name, err);
          cr_assert(!tl_grid_eval_run(g, args, f->params.len, got, err2, sizeof err2), "%s: refused by one only", f->name);
          if (tl_require_is_failure(err)) {
            cr_assert_str_eq(err2, err, "%s: the two refusals differ", f->name);
            cr_assert(strstr(err, "error: require failed in kernel '") && strstr(err, "(C = ") && strstr(err, "\n    require("),
                      "%s: %s", f->name, err);
            required++;
          }
          continue;
        }
        cr_assert(tl_grid_eval_run(g, args, f->params.len, got, err, sizeof err), "%s: %s", f->name, err);
        for (int d = 0; d < 3; d++)
          cr_assert_eq(got[d], want[d], "%s: grid[%d] %lld vs %lld", f->name, d, (long long)got[d], (long long)want[d]);
        checked++;
      }
      tl_arg none[17];
      memset(none, 0, sizeof none);
      int64_t g3[3];
      cr_assert(!tl_grid_eval_run(g, none, f->params.len + 1, g3, err, sizeof err),
                "a wrong argument count must be refused");
      tl_grid_eval_free(g);
    }
  }
  cr_assert_gt(checked, 200, "only %d grids compared", checked);
  cr_assert_gt(required, 20, "only %d launches refused by a require", required);
}
