/* Code generator tests: kernels built with the IR builder (lib/ir.h), laid out
 * by layout_assign, lowered to PTX; checked for the key instructions and, when
 * ptxas is installed, assembled for sm_90a and sm_80. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen.h"
#include "layout.h"

extern const tl_pass tl_pass_layout_assign;

#define PTXAS "/usr/local/cuda/bin/ptxas"

#include "test_back_codegen_kernels.h"

static void setup(void) {
  tl_ctx_init(&ctx);
  ctx.on_fatal = &jb;
}
static void teardown(void) { tl_ctx_free(&ctx); }

TestSuite(codegen, .init = setup, .fini = teardown, .timeout = 120);

/* Compile M for arch; returns the PTX (malloc'd) or NULL with diagnostics. */
static char *compile(const char *arch, tl_kernel_info *info) {
  if (setjmp(jb)) {
    char *d = tl_ctx_render_diags(&ctx);
    cr_log_error("internal error:\n%s", d);
    free(d);
    return NULL;
  }
  if (F->grid.ops.len == 0) { /* grid(1) */
    int32_t one = tl_build_const_i(F, &F->grid, tl_scalar_type(TL_I32), 1, TL_NOLOC);
    tl_op_new(F, &F->grid, TL_OP_yield, &one, 1, NULL, 0, TL_NOLOC);
  }
  bool ok = tl_verify_func(F);
  if (!ok) {
    char *d = tl_ctx_render_diags(&ctx);
    cr_log_error("verifier:\n%s", d);
    free(d);
    return NULL;
  }
  if (!F->layouts) cr_assert(tl_pass_layout_assign.run(F, NULL));
  tl_codegen_opts o = {.arch = arch, .opt_level = 3};
  tl_codegen_result res;
  if (!tl_codegen(M, &o, &res)) {
    char *d = tl_ctx_render_diags(&ctx);
    cr_log_info("codegen:\n%s", d);
    free(d);
    return NULL;
  }
  if (info) *info = res.kernels[0];
  char *ptx = res.ptx;
  res.ptx = NULL;
  tl_codegen_result_free(&res);
  return ptx;
}

static bool ptxas_ok(const char *ptx, const char *arch);

/* Compile for arch and assemble it for that arch. */
static bool assembles_for(const char *arch) {
  char *ptx = compile(arch, NULL);
  if (!ptx) return false;
  bool ok = ptxas_ok(ptx, arch);
  free(ptx);
  return ok;
}

/* Assemble with ptxas when installed: true if it accepts (or is missing). */
static bool ptxas_ok(const char *ptx, const char *arch) {
  if (access(PTXAS, X_OK) != 0) return true;
  char path[] = "/tmp/tilec_cg_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *fp = fdopen(fd, "w");
  fputs(ptx, fp);
  fclose(fp);
  char cmd[512];
  snprintf(cmd, sizeof cmd, PTXAS " --gpu-name %s %s -o /dev/null 2>%s.log", arch, path, path);
  int rc = system(cmd);
  if (rc != 0) {
    char log[300];
    snprintf(log, sizeof log, "%s.log", path);
    FILE *lf = fopen(log, "r");
    char buf[2048] = {0};
    if (lf) {
      size_t n = fread(buf, 1, sizeof buf - 1, lf);
      buf[n] = 0;
      fclose(lf);
    }
    cr_log_error("ptxas %s failed:\n%s", arch, buf);
    remove(log);
  } else {
    char log[300];
    snprintf(log, sizeof log, "%s.log", path);
    remove(log);
  }
  remove(path);
  return rc == 0;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

Test(codegen, axpy_f32_vectorized_and_masked) {
  build_axpy(1024, TL_F32);
  tl_kernel_info info;
  char *ptx = compile("sm_90a", &info);
  cr_assert_not_null(ptx);
  cr_assert(strstr(ptx, ".entry axpy"), "%s", ptx);
  cr_assert(strstr(ptx, "ld.global.v4.b32"));
  cr_assert(strstr(ptx, "st.global.v4.b32"));
  cr_assert(strstr(ptx, "ld.global.b32"), "scalar fallback for ragged / strided views");
  cr_assert(strstr(ptx, "%ctaid.x"));
  cr_assert_eq(info.threads, 128);
  cr_assert(ptxas_ok(ptx, "sm_90a"));
  free(ptx);
}

Test(codegen, axpy_bf16_sm80) {
  build_axpy(256, TL_BF16);
  char *ptx = compile("sm_80", NULL);
  cr_assert_not_null(ptx);
  cr_assert(strstr(ptx, ".target sm_80"));
  cr_assert(strstr(ptx, "cvt.rn.bf16.f32"), "%s", ptx);
  cr_assert(assembles_for("sm_80"));
  free(ptx);
}

Test(codegen, rmsnorm_reduces_with_shuffles_and_smem) {
  build_rmsnorm(4096);
  tl_kernel_info info;
  char *ptx = compile("sm_90a", &info);
  cr_assert_not_null(ptx);
  cr_assert(strstr(ptx, "shfl.sync.bfly.b32"), "%s", ptx);
  cr_assert(strstr(ptx, "bar.sync"));
  cr_assert(strstr(ptx, "rsqrt.approx"));
  cr_assert(strstr(ptx, "ld.global.v4.b32"));
  cr_assert_gt(info.smem_bytes, 0, "cross-warp partials go through shared memory");
  cr_assert(ptxas_ok(ptx, "sm_90a"));
  cr_assert(assembles_for("sm_80"));
  free(ptx);
}

Test(codegen, softmax_rows_broadcast_is_free) {
  build_softmax(16, 128);
  tl_kernel_info info;
  char *ptx = compile("sm_90a", &info);
  cr_assert_not_null(ptx);
  cr_assert(strstr(ptx, "ex2.approx"));
  cr_assert(strstr(ptx, "max.NaN.f32") || strstr(ptx, "max.f32"), "%s", ptx);
  /* rows live within a warp: no shared memory at all */
  cr_assert_eq(info.smem_bytes, 0);
  cr_assert_eq(count(ptx, "bar.sync"), 0);
  cr_assert(ptxas_ok(ptx, "sm_90a"));
  cr_assert(assembles_for("sm_80"));
  free(ptx);
}

Test(codegen, gemm_bf16_uses_ldmatrix_and_mma) {
  build_gemm(64, 64, 32, TL_BF16);
  tl_kernel_info info;
  char *ptx = compile("sm_90a", &info);
  cr_assert_not_null(ptx);
  cr_assert(strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), "%s", ptx);
  cr_assert(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
  cr_assert(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), "B is [K][N] row-major: .trans");
  cr_assert_gt(info.smem_bytes, 64 * 32 * 2 + 32 * 64 * 2 - 1);
  cr_assert(ptxas_ok(ptx, "sm_90a"));
  cr_assert(assembles_for("sm_80"));
  free(ptx);
}

Test(codegen, gemm_fp8_needs_sm89) {
  build_gemm(64, 64, 64, TL_F8E4M3);
  char *ptx = compile("sm_90a", NULL);
  cr_assert_not_null(ptx);
  cr_assert(strstr(ptx, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"));
  cr_assert(ptxas_ok(ptx, "sm_90a"));
  free(ptx);
  tl_ctx_free(&ctx);
  tl_ctx_init(&ctx);
  ctx.on_fatal = &jb;
  build_gemm(64, 64, 64, TL_F8E4M3);
  cr_assert_null(compile("sm_80", NULL));
  char *d = tl_ctx_render_diags(&ctx);
  cr_assert(strstr(d, "sm_89"), "%s", d);
  free(d);
}

Test(codegen, output_is_deterministic) {
  build_softmax(32, 64);
  char *a = compile("sm_90a", NULL);
  cr_assert_not_null(a);
  tl_ctx_free(&ctx);
  tl_ctx_init(&ctx);
  ctx.on_fatal = &jb;
  build_softmax(32, 64);
  char *b = compile("sm_90a", NULL);
  cr_assert_not_null(b);
  cr_assert_str_eq(a, b);
  free(a);
  free(b);
}
