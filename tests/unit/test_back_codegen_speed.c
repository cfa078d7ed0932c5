/* Compile-time budget of the code generator (docs/codegen.md "Compile time"):
 * the LLVM IR the emitters hand to the pipeline must grow by a few
 * instructions per register, not by per-element index arithmetic.  Kernels
 * come from the IR builder (test_back_codegen_kernels.h); the IR is taken
 * before any LLVM pass (TILEC_LLVM_PASSES=verify). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "layout.h"

extern const tl_pass tl_pass_layout_assign;

#include "test_back_codegen_kernels.h"

static void setup(void) {
  tl_ctx_init(&ctx);
  ctx.on_fatal = &jb;
}
static void teardown(void) { tl_ctx_free(&ctx); }

TestSuite(codegen_speed, .init = setup, .fini = teardown, .timeout = 120);

typedef struct lowered {
  char *ir, *ptx;
  int threads;
} lowered;

/* Lower M without LLVM passes; the unoptimized IR and its PTX. */
static lowered lower_raw(void) {
  lowered out = {0};
  if (setjmp(jb)) {
    char *d = tl_ctx_render_diags(&ctx);
    cr_log_error("internal error:\n%s", d);
    free(d);
    return out;
  }
  if (F->grid.ops.len == 0) {
    int32_t one = tl_build_const_i(F, &F->grid, tl_scalar_type(TL_I32), 1, TL_NOLOC);
    tl_op_new(F, &F->grid, TL_OP_yield, &one, 1, NULL, 0, TL_NOLOC);
  }
  cr_assert(tl_verify_func(F));
  cr_assert(tl_pass_layout_assign.run(F, NULL));
  setenv("TILEC_LLVM_PASSES", "verify", 1);
  tl_codegen_opts o = {.arch = "sm_90a", .opt_level = 3};
  tl_codegen_result res;
  bool ok = tl_codegen(M, &o, &res);
  unsetenv("TILEC_LLVM_PASSES");
  if (!ok) {
    char *d = tl_ctx_render_diags(&ctx);
    cr_log_error("codegen:\n%s", d);
    free(d);
    return out;
  }
  out.ir = res.llvm_ir;
  out.ptx = res.ptx;
  out.threads = res.kernels[0].threads;
  res.llvm_ir = res.ptx = NULL;
  tl_codegen_result_free(&res);
  return out;
}

/* Instructions in the printed IR: the lines of function bodies (two spaces). */
static int count_insts(const char *ir) {
  int n = 0;
  for (const char *p = ir; p && *p; p++)
    if ((p == ir || p[-1] == '\n') && p[0] == ' ' && p[1] == ' ' && p[2] != ' ') n++;
  return n;
}

static int count_str(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; p && (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* Y[m0:+bm, n0:+bn] = X[...] * a over 2-D bf16 tiles (a 2-D grid). */
static void build_scale2d(int bm, int bn) {
  begin("scale2d");
  int32_t X = tensor_param("X", TL_BF16, 2), Y = tensor_param("Y", TL_BF16, 2);
  int32_t a = scalar_param("a", TL_F32);
  grid2(X, 0, bm, X, 1, bn);
  int32_t m0 = bin(TL_OP_mul, pid(0), ci(bm)), n0 = bin(TL_OP_mul, pid(1), ci(bn));
  int32_t idx[2] = {m0, n0}, len[2] = {bm, bn};
  int32_t x = cast(load(X, idx, len), TL_F32);
  store(Y, idx, len, cast(bin(TL_OP_mul, x, a), TL_BF16));
}

/* Lines of text holding both a and b. */
static int count_lines_with(const char *s, const char *a, const char *b) {
  int n = 0;
  for (const char *p = s; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char line[8192];
    size_t k = len < sizeof line - 1 ? len : sizeof line - 1;
    memcpy(line, p, k);
    line[k] = 0;
    if (strstr(line, a) && strstr(line, b)) n++;
    p = e ? e + 1 : NULL;
  }
  return n;
}

/* Lower a fresh kernel: axpy (bm = 0) or scale2d [bm, block]. */
static int kernel_insts(int block, int bm, tl_dtype dt, int *threads) {
  tl_ctx_free(&ctx);
  tl_ctx_init(&ctx);
  ctx.on_fatal = &jb;
  if (bm) build_scale2d(bm, block);
  else build_axpy(block, dt);
  lowered l = lower_raw();
  cr_assert(l.ir && l.ptx);
  int n = count_insts(l.ir);
  *threads = l.threads;
  free(l.ir);
  free(l.ptx);
  return n;
}

/* axpy does 2 loads + 1 store + 2..5 arithmetic ops per element: growing the
 * block must cost a bounded number of IR instructions per added element per
 * thread (the old emitters spent ~25 per element per access on 64-bit index
 * arithmetic and predicate chains, ~80 here). */
Test(codegen_speed, ir_grows_a_few_instructions_per_element) {
  const tl_dtype dts[2] = {TL_F32, TL_BF16};
  for (int i = 0; i < 2; i++) {
    int th_small, th_big;
    int small = kernel_insts(512, 0, dts[i], &th_small);
    int big = kernel_insts(8192, 0, dts[i], &th_big);
    cr_assert_eq(th_small, th_big);
    double per = (double)(big - small) / ((8192 - 512) / th_big);
    cr_log_info("axpy %s: %d -> %d IR instructions, %.1f per element per thread", tl_dtype_name(dts[i]), small, big,
                per);
    cr_expect(per > 3.0, "axpy %s: %.1f instructions per element cannot be right", tl_dtype_name(dts[i]), per);
    cr_expect(per < 16.0, "axpy %s: %.1f IR instructions per element per thread (budget 16)", tl_dtype_name(dts[i]),
              per);
  }
}

/* The same in 2-D: [bm, 128] bf16 tiles, bm from 8 to 64 (registers repeat
 * along the rows, so every group has its own row offset and bounds). */
Test(codegen_speed, ir_grows_a_few_instructions_per_element_2d) {
  int th_small, th_big;
  int small = kernel_insts(128, 8, TL_BF16, &th_small);
  int big = kernel_insts(128, 64, TL_BF16, &th_big);
  cr_assert_eq(th_small, th_big);
  double per = (double)(big - small) / ((64 - 8) * 128 / th_big);
  cr_log_info("scale2d: %d -> %d IR instructions, %.1f per element per thread", small, big, per);
  cr_expect(per > 3.0 && per < 16.0, "scale2d: %.1f IR instructions per element per thread (budget 16)", per);
  (void)build_rmsnorm; /* shared builder kernels this file does not use */
  (void)build_softmax;
  (void)build_gemm;
}

/* One address computation per access: the tensor base is converted to an
 * integer once per access, not once per element. */
Test(codegen_speed, one_ptrtoint_per_access) {
  build_axpy(4096, TL_BF16);
  lowered l = lower_raw();
  cr_assert(l.ir);
  cr_expect_eq(count_str(l.ir, "ptrtoint"), 3, "%d ptrtoint for 3 accesses", count_str(l.ir, "ptrtoint"));
  free(l.ir);
  free(l.ptx);
}

/* A vector group is one inline asm holding the vector access and its scalar
 * fallback, so the number of global-access asm statements is the number of
 * groups: 4096 bf16 over 128 threads = 32 per thread = 4 groups of 8, times 3
 * accesses. */
Test(codegen_speed, one_asm_per_vector_group) {
  build_axpy(4096, TL_BF16);
  lowered l = lower_raw();
  cr_assert(l.ir && l.ptx);
  cr_assert_eq(l.threads, 128);
  int groups = 3 * 4096 / 128 / 8;
  cr_expect_eq(count_lines_with(l.ir, "call void asm", "st.global"), groups / 3);
  cr_expect_eq(count_lines_with(l.ir, "call ", "ld.global"), 2 * groups / 3);
  cr_expect_eq(count_str(l.ir, "ld.global.v4.b32"), 2 * groups / 3);
  cr_expect_eq(count_str(l.ir, "st.global.v4.b32"), groups / 3);
  /* every group also carries its 8 predicated scalar accesses */
  cr_expect_eq(count_str(l.ir, "@p ld.global.b16"), 8 * 2 * groups / 3);
  cr_expect_eq(count_str(l.ir, "@p st.global.b16"), 8 * groups / 3);
  free(l.ir);
  free(l.ptx);
}

/* bf16 mma.sync is LLVM's NVVM intrinsic, not a 4-output inline asm (whose
 * constraint parsing cost ~13 % of attn's compile: docs/codegen.md "Round
 * 4"): one intrinsic call per m16n8k16 step of each warp, no mma asm. */
Test(codegen_speed, mma_is_an_intrinsic) {
  build_gemm(64, 64, 32, TL_BF16);
  lowered l = lower_raw();
  cr_assert(l.ir && l.ptx);
  int warps = l.threads / 32;
  int per_warp = 64 * 64 / (16 * 8) * (32 / 16) / warps;
  cr_expect_eq(count_lines_with(l.ir, "call ", "@llvm.nvvm.mma.m16n8k16.row.col.bf16("), per_warp, "%d mma calls",
               count_lines_with(l.ir, "call ", "@llvm.nvvm.mma.m16n8k16.row.col.bf16("));
  cr_expect_eq(count_str(l.ir, "asm \"mma.sync"), 0);
  cr_expect(strstr(l.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
  free(l.ir);
  free(l.ptx);
}
