/* test_hoist_operand.c: the materialize-once form of examples/gemm_w4a16.tile's kernel
 * (passes/hoist_operand.c, lib/hoist_operand.h) in the interpreter: the pre-kernel writes every B
 * weight into `hoisted` [K, N] as bf16(q s - z) (the kernel's own rounding: q s exact in f32, then
 * - z rounded to f32, then to bf16), bit for bit, leaving C alone; the form on that workspace gives
 * the kernel's C bit for bit (the same B values, the same dot), at ragged M and N, at the example's
 * tile, a small one and cutlass_gemm's; the same for gemm_w4a16_packed (its words in the packed order). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpconv.h"
#include "frontend.h"
#include "hoist_operand.h"
#include "interp.h"
#include "ir.h"
#include "example_source.h"
#include "test_interp_helpers.h"

extern const tl_pass tl_pass_hoist_operand;

/* The kernel under test: gemm_w4a16 (GPTQ's word order) or gemm_w4a16_packed (the packed order). */
static const char *g_file = "gemm_w4a16.tile", *g_kernel = "gemm_w4a16";

/* g_file compiled, then (role 1 form, 2 pre, 0 none) the hoist_operand pass on g_kernel. */
static compiled *compile_w4a16(const tl_define *defs, int ndefs, int role) {
  compiled *c = example_compile(g_file, defs, ndefs);
  if (role) {
    tl_pass_opts o;
    memset(&o, 0, sizeof o);
    o.hoist_operand_role = role;
    o.hoist_operand_kernel = g_kernel;
    for (int i = 0; i < c->m->funcs.len; i++)
      cr_assert(tl_pass_hoist_operand.run(c->m->funcs.data[i], &o), "hoist_operand:\n%s", tl_ctx_render_diags(&c->ctx));
  }
  cr_assert(tl_verify_module(c->m), "verifier:\n%s", tl_ctx_render_diags(&c->ctx));
  return c;
}

static tl_func *w4a16(compiled *c) {
  for (int i = 0; i < c->m->funcs.len; i++)
    if (!strcmp(c->m->funcs.data[i]->name, g_kernel)) return c->m->funcs.data[i];
  cr_assert_fail("no kernel %s", g_kernel);
  return NULL;
}

static void interpret(tl_func *f, tl_arg *args, int n) {
  char err[512] = "";
  cr_assert(tl_interpret_func(f, args, n, err, sizeof err), "%s: %s", f->name, err);
}

static void check(const tl_define *defs, int ndefs, int64_t G, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  compiled *ck = compile_w4a16(defs, ndefs, 0), *cf = compile_w4a16(defs, ndefs, 1), *cp = compile_w4a16(defs, ndefs, 2);
  int64_t KW = K / 8, NG = K / G;
  int64_t sa[2] = {M, K}, sw[2] = {KW, N}, sg[2] = {NG, N}, sc[2] = {M, N}, sh[2] = {K, N};
  tl_arg a[6] = {targ(TL_BF16, 2, sa), targ(TL_I32, 2, sw), targ(TL_BF16, 2, sg), targ(TL_BF16, 2, sg),
                 targ(TL_BF16, 2, sc), targ(TL_BF16, 2, sh)};
  rng g = {seed};
  tfill_random(&a[0], &g, -1, 1);
  int32_t *wq = a[1].data;
  for (int64_t i = 0; i < KW * N; i++) wq[i] = (int32_t)(uint32_t)rng_u64(&g);
  tfill_random(&a[2], &g, 0.01, 0.1);
  tfill_random(&a[3], &g, -0.5, 0.5);
  /* the kernel */
  tpoison(&a[4]);
  interpret(w4a16(ck), a, 5);
  size_t cbytes = (size_t)(M * N) * 2;
  uint16_t *want = malloc(cbytes);
  memcpy(want, a[4].data, cbytes);
  /* the pre-kernel: every weight written, C untouched */
  tpoison(&a[4]);
  tpoison(&a[5]);
  interpret(w4a16(cp), a, 6);
  const uint16_t *c16 = a[4].data, *w16 = a[5].data;
  for (int64_t i = 0; i < M * N; i++) cr_assert_eq(c16[i], 0xFFFF, "the pre-kernel wrote C[%lld]", (long long)i);
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++) {
      /* GPTQ: row k in bits 4 (k % 8) of word k / 8; packed: word (k / 32) 4 + (k % 8) / 2, bits 4 ((k / 8) % 4) + 16 (k % 2) */
      bool packed = strcmp(g_kernel, "gemm_w4a16") != 0;
      int64_t row = packed ? (k / 32) * 4 + (k % 8) / 2 : k / 8;
      int shift = packed ? (int)(4 * ((k / 8) % 4) + 16 * (k % 2)) : (int)(4 * (k % 8));
      float q = (float)((uint32_t)wq[row * N + j] >> shift & 15);
      volatile float qs = q * tget_f(&a[2], (k / G) * N + j); /* exact: 4 x 8 bits */
      float w = qs - tget_f(&a[3], (k / G) * N + j);
      uint16_t bits = (uint16_t)tl_float_to_bits(w, TL_BF16);
      cr_assert_eq(w16[k * N + j], bits, "hoisted[%lld, %lld] = 0x%04x, want bf16(q s - z) 0x%04x", (long long)k,
                   (long long)j, w16[k * N + j], bits);
    }
  /* the form on the workspace: the kernel's C, bit for bit */
  tpoison(&a[4]);
  interpret(w4a16(cf), a, 6);
  c16 = a[4].data;
  for (int64_t i = 0; i < M * N; i++)
    cr_assert_eq(c16[i], want[i], "M %lld N %lld K %lld: C[%lld] = 0x%04x, the kernel's 0x%04x", (long long)M, (long long)N,
                 (long long)K, (long long)i, c16[i], want[i]);
  free(want);
  for (int i = 0; i < 6; i++) free(a[i].data);
  compiled_free(ck);
  compiled_free(cf);
  compiled_free(cp);
}

Test(hoist_operand, w4a16_small_tile) {
  const tl_define small[] = {{"BM", 16}, {"BN", 16}, {"BK", 32}, {"G", 64}};
  check(small, 4, 64, 1, 37, 128, 7100);
  check(small, 4, 64, 17, 15, 192, 7101);
  check(small, 4, 64, 33, 64, 64, 7102);
}

Test(hoist_operand, w4a16_example_tile) {
  check(NULL, 0, 128, 3, 130, 512, 7103);
  check(NULL, 0, 128, 20, 70, 384, 7104);
}

/* the form at cutlass_gemm's tile (what a launch would compile): the same C */
Test(hoist_operand, w4a16_cutlass_tile) {
  const tl_define big[] = {{"BM", 128}, {"BN", 256}, {"BK", 64}};
  check(big, 3, 128, 130, 300, 256, 7105);
}

/* gemm_w4a16_packed (examples/gemm_w4a16_packed.tile): the words in the packed order, the same form */
Test(hoist_operand, w4a16_packed) {
  g_file = "gemm_w4a16_packed.tile", g_kernel = "gemm_w4a16_packed";
  check(NULL, 0, 128, 3, 130, 512, 7106);
  const tl_define big[] = {{"BM", 128}, {"BN", 256}, {"BK", 64}};
  const tl_define small[] = {{"BM", 16}, {"BN", 16}, {"BK", 32}, {"G", 64}};
  check(small, 4, 64, 17, 15, 192, 7107);
  check(big, 3, 128, 130, 300, 256, 7108);
}
