/* test_back_runtime_gpu.c: the driver runtime against a real driver, with
 * hand-written PTX (so it needs no codegen): loader, device query, JIT with
 * the .version fitted down to the driver, the JIT error log on bad PTX, and
 * a launch.  Every test is skipped where there is no driver or device. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static const tl_rt_device *device_or_skip(void) {
  const tl_rt_device *d = NULL;
  char err[512];
  int st = tl_rt_device_get(0, &d, err, sizeof err);
  if (st != TL_OK) cr_skip_test("no GPU: %s", err);
  return d;
}

/* A kernel that stores 42 through its pointer parameter (thread 0 only). */
static char *ptx_for(const char *version, const char *target) {
  char *s = malloc(2048);
  snprintf(s, 2048,
           ".version %s\n.target %s\n.address_size 64\n\n"
           ".visible .entry store42(.param .u64 p)\n{\n"
           "  .reg .b64 %%rd<2>;\n  .reg .b32 %%r<3>;\n  .reg .pred %%q;\n"
           "  mov.u32 %%r1, %%tid.x;\n  setp.ne.u32 %%q, %%r1, 0;\n  @%%q bra DONE;\n"
           "  ld.param.u64 %%rd1, [p];\n  cvta.to.global.u64 %%rd1, %%rd1;\n"
           "  mov.u32 %%r2, 42;\n  st.global.u32 [%%rd1], %%r2;\nDONE:\n  ret;\n}\n"
           ".visible .entry noop(.param .u32 v)\n{\n  ret;\n}\n",
           version, target);
  return s;
}

Test(runtime_gpu, device_is_described) {
  const tl_rt_device *d = device_or_skip();
  cr_assert(d->cc_major >= 8);
  cr_assert(d->max_threads_block >= 1024);
  cr_assert(d->max_smem_optin >= d->max_smem_block);
  char arch[16];
  cr_assert(tl_rt_device_arch(0, arch, sizeof arch));
  cr_assert_str_eq(arch, d->arch);
  const tl_cuda *cu;
  char err[256];
  cr_assert_eq(tl_rt_driver(&cu, err, sizeof err), TL_OK);
  cr_log_info("device %s sm_%d%d, arch %s, driver %d, ISA %d", d->name, d->cc_major, d->cc_minor, d->arch,
              cu->driver_version, tl_ptx_isa_for_driver(cu->driver_version));
  cr_assert(cu->driver_version >= 12000);
}

Test(runtime_gpu, jit_with_version_fitted_load_and_launch) {
  const tl_rt_device *d = device_or_skip();
  /* .version 9.9 is newer than any driver we know: it must be lowered */
  char *ptx = ptx_for("9.9", d->arch);
  tl_jit_request rq = {.ptx = ptx, .kernel = "store42", .arch = d->arch, .opt_level = 4};
  void *cubin = NULL;
  size_t size = 0;
  tl_sbuf msg = {0}, info = {0};
  int st = tl_rt_ptx_to_cubin(d, &rq, &cubin, &size, &info, &msg);
  cr_assert_eq(st, TL_OK, "%s", msg.data);
  cr_assert(size > 0);
  CUmodule mod;
  CUfunction fn;
  cr_assert_eq(tl_rt_load_function(d, cubin, "store42", &mod, &fn, &msg), TL_OK, "%s", msg.data);
  /* a launch of the kernel that stores nothing (grid 3 x 64 threads) */
  CUfunction noop;
  cr_assert_eq(tl_rt_load_function(d, cubin, "noop", &mod, &noop, &msg), TL_OK, "%s", msg.data);
  const tl_cuda *cu;
  char err[256];
  tl_rt_driver(&cu, err, sizeof err);
  uint32_t value = 7;
  void *params[] = {&value};
  cr_assert_eq(tl_rt_make_current(d, err, sizeof err), TL_OK);
  CUresult r = cu->cuLaunchKernel(noop, 3, 1, 1, 64, 1, 1, 0, NULL, params, NULL);
  cr_assert_eq(r, CUDA_SUCCESS, "%s", tl_rt_result_text(r, err, sizeof err));
  cr_assert_eq(tl_rt_load_function(d, cubin, "no_such_entry", &mod, &fn, &msg), TL_ERR_CUDA);
  cr_assert(strstr(msg.data, "no_such_entry") != NULL);
  free(cubin); free(ptx);
  tl_sbuf_free(&msg); tl_sbuf_free(&info);
}

Test(runtime_gpu, bad_ptx_reports_the_jit_log) {
  const tl_rt_device *d = device_or_skip();
  char *ptx = ptx_for("8.0", d->arch);
  char *bad = strstr(ptx, "st.global.u32");
  memcpy(bad, "st.glabal.u32", 13);
  tl_jit_request rq = {.ptx = ptx, .kernel = "store42", .arch = d->arch, .opt_level = 4};
  void *cubin = NULL;
  size_t size = 0;
  tl_sbuf msg = {0};
  cr_assert_eq(tl_rt_ptx_to_cubin(d, &rq, &cubin, &size, NULL, &msg), TL_ERR_CUDA);
  cr_assert_null(cubin);
  cr_log_info("%s", msg.data);
  cr_assert(strstr(msg.data, "JIT error log") != NULL, "%s", msg.data);
  cr_assert(strstr(msg.data, "kernel store42") != NULL);
  cr_assert(strstr(msg.data, d->arch) != NULL);
  cr_assert(strstr(msg.data, "PTX ISA 8.0") != NULL);
  cr_assert(strstr(msg.data, "driver CUDA") != NULL);
  free(ptx);
  tl_sbuf_free(&msg);
}
