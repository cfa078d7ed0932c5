/* test_back_explain.c: the parser of `ptxas -v` output (tl_ptxas_parse_usage)
 * on canned ptxas text written here (input, in the formats ptxas 12.x/13.x
 * print), and the "resources:" lines --explain appends, checked against the
 * codegen's own tl_kernel_info and, where ptxas is installed, against a
 * second parse of what ptxas says. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"

static const char two_entries[] =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'attn_fwd' for 'sm_90a'\n"
    "ptxas info    : Function properties for attn_fwd\n"
    "    112 bytes stack frame, 108 bytes spill stores, 96 bytes spill loads\n"
    "ptxas info    : Used 231 registers, used 1 barriers, 112 bytes cumulative stack size\n"
    "ptxas info    : Compile time = 1298.777 ms\n"
    "ptxas info    : Compiling entry function 'softmax' for 'sm_80'\n"
    "ptxas info    : Function properties for softmax\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 34 registers, 1040 bytes smem, 384 bytes cmem[0]\n";

Test(ptxas_parse, two_entries_every_field) {
  tl_ptxas_usage u[4];
  cr_assert_eq(tl_ptxas_parse_usage(two_entries, u, 4), 2);
  cr_expect_str_eq(u[0].entry, "attn_fwd");
  cr_expect_str_eq(u[0].arch, "sm_90a");
  cr_expect_eq(u[0].regs, 231);
  cr_expect_eq(u[0].stack_bytes, 112);
  cr_expect_eq(u[0].spill_store_bytes, 108);
  cr_expect_eq(u[0].spill_load_bytes, 96);
  cr_expect_eq(u[0].smem_static_bytes, 0);
  cr_expect_str_eq(u[1].entry, "softmax");
  cr_expect_str_eq(u[1].arch, "sm_80");
  cr_expect_eq(u[1].regs, 34);
  cr_expect_eq(u[1].stack_bytes, 0);
  cr_expect_eq(u[1].spill_store_bytes, 0);
  cr_expect_eq(u[1].spill_load_bytes, 0);
  cr_expect_eq(u[1].smem_static_bytes, 1040);
}

Test(ptxas_parse, counts_past_max_and_null_out) {
  tl_ptxas_usage u[1];
  cr_expect_eq(tl_ptxas_parse_usage(two_entries, NULL, 0), 2);
  cr_assert_eq(tl_ptxas_parse_usage(two_entries, u, 1), 2);
  cr_expect_str_eq(u[0].entry, "attn_fwd");
  cr_expect_eq(u[0].regs, 231);
}

/* A device function's properties come between the entry's lines: they must
 * not be taken for the entry's. */
Test(ptxas_parse, device_function_properties_ignored) {
  static const char text[] =
      "ptxas info    : Function properties for helper_fn\n"
      "    48 bytes stack frame, 44 bytes spill stores, 40 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'k_main' for 'sm_89'\n"
      "ptxas info    : Function properties for helper_fn2\n"
      "    24 bytes stack frame, 20 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Function properties for k_main\n"
      "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 77 registers, 256 bytes smem, 360 bytes cmem[0], 4 bytes cmem[2]\n";
  tl_ptxas_usage u[2];
  cr_assert_eq(tl_ptxas_parse_usage(text, u, 2), 1);
  cr_expect_str_eq(u[0].entry, "k_main");
  cr_expect_str_eq(u[0].arch, "sm_89");
  cr_expect_eq(u[0].regs, 77);
  cr_expect_eq(u[0].stack_bytes, 8);
  cr_expect_eq(u[0].spill_store_bytes, 4);
  cr_expect_eq(u[0].spill_load_bytes, 12);
  cr_expect_eq(u[0].smem_static_bytes, 256);
}

/* Lines missing (a ptxas that prints less) leave -1; no newline at the end;
 * unrelated text (warnings, an error) is skipped. */
Test(ptxas_parse, partial_and_noise) {
  static const char text[] =
      "ptxas warning : Unresolved extern 'foo'\n"
      "ptxas info    : Compiling entry function 'only_regs' for 'sm_90'\n"
      "some unrelated line with 99 bytes in it\n"
      "ptxas info    : Used 5 registers";
  tl_ptxas_usage u[1];
  cr_assert_eq(tl_ptxas_parse_usage(text, u, 1), 1);
  cr_expect_str_eq(u[0].entry, "only_regs");
  cr_expect_eq(u[0].regs, 5);
  cr_expect_eq(u[0].stack_bytes, -1);
  cr_expect_eq(u[0].spill_store_bytes, -1);
  cr_expect_eq(u[0].spill_load_bytes, -1);
  cr_expect_eq(tl_ptxas_parse_usage("", u, 1), 0);
  cr_expect_eq(tl_ptxas_parse_usage("ptxas fatal   : Unresolved extern function 'x'\n", u, 1), 0);
}

/* ---- the resource lines of a real compile -------------------------------------------------- */

static const char softmax_src[] =
    "kernel softmax(X: tensor<f32>[R, C], Y: tensor<f32>[R, C])\n"
    "    tiles(BC = 256)\n"
    "    grid(R)\n"
    "{\n"
    "    r = program_id(0);\n"
    "    x = load(X[r, 0 : BC], other = -inf);\n"
    "    e = exp(x - reduce_max(x, 0));\n"
    "    store(Y[r, 0 : BC], e / reduce_sum(e, 0));\n"
    "}\n";

static tilec_program *compile_explained(const char *src, const char *arch) {
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "explain", "1"), TILEC_OK);
  cr_assert_eq(tilec_options_set_arch(o, arch), TILEC_OK);
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, src, "explain.tile", o), TILEC_OK);
  tilec_options_destroy(o);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK, "%s", tilec_program_log(p));
  return p;
}

/* Where a resources line for kernel `name` starts in log, or NULL. */
static const char *resources_line(const char *log, const char *name) {
  char key[160];
  snprintf(key, sizeof key, "resources: kernel '%s'", name);
  return strstr(log, key);
}

Test(explain_resources, without_ptxas_threads_and_smem_from_codegen) {
  setenv("TILEC_PTXAS", "/nonexistent/ptxas", 1);
  tilec_program *p = compile_explained(softmax_src, "sm_80");
  unsetenv("TILEC_PTXAS");
  cr_assert_eq(p->cg.nkernels, 1);
  const tl_kernel_info *k = &p->cg.kernels[0];
  const char *line = resources_line(tilec_program_log(p), "softmax");
  cr_assert(line, "no resources line in:\n%s", tilec_program_log(p));
  char want[256];
  snprintf(want, sizeof want, "resources: kernel 'softmax': %d threads, %d B shared (dynamic), sm_80 (no ptxas",
           k->threads, k->smem_bytes);
  cr_expect_eq(strncmp(line, want, strlen(want)), 0, "got: %.200s\nwant: %s", line, want);
  cr_expect(k->threads > 0 && k->threads % 32 == 0);
  tilec_program_destroy(p);
}

Test(explain_resources, not_without_explain) {
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, softmax_src, "x.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK);
  cr_expect_null(strstr(tilec_program_log(p), "resources:"));
  tilec_program_destroy(p);
}

/* With ptxas: the numbers on the line are those of a separate ptxas -v run
 * on the same PTX, parsed again here. */
Test(explain_resources, with_ptxas_matches_ptxas) {
  char ptxas[4096];
  if (!tl_api_find_ptxas(ptxas, sizeof ptxas)) cr_skip_test("ptxas not installed");
  tilec_program *p = compile_explained(softmax_src, "sm_80");
  const char *line = resources_line(tilec_program_log(p), "softmax");
  cr_assert(line, "no resources line in:\n%s", tilec_program_log(p));
  char path[] = "/tmp/tilec-explain-test-XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  const char *ptx = tilec_program_text(p, TILEC_STAGE_PTX);
  cr_assert_eq(write(fd, ptx, strlen(ptx)), (ssize_t)strlen(ptx));
  close(fd);
  char cmd[8400];
  snprintf(cmd, sizeof cmd, "'%s' -v --gpu-name sm_80 -o /dev/null '%s' 2>&1", ptxas, path);
  FILE *f = popen(cmd, "r");
  cr_assert(f);
  static char out[1 << 16];
  size_t n = fread(out, 1, sizeof out - 1, f);
  out[n] = 0;
  pclose(f);
  unlink(path);
  tl_ptxas_usage u[1];
  cr_assert_eq(tl_ptxas_parse_usage(out, u, 1), 1, "ptxas said:\n%s", out);
  cr_assert(u[0].regs > 0);
  const tl_kernel_info *k = &p->cg.kernels[0];
  char want[256];
  snprintf(want, sizeof want, "resources: kernel 'softmax': %d threads, %d regs, %lld B spills", k->threads, u[0].regs,
           (long long)(u[0].spill_store_bytes + u[0].spill_load_bytes));
  cr_expect_eq(strncmp(line, want, strlen(want)), 0, "got: %.200s\nwant: %s", line, want);
  const char *eol = strchr(line, '\n');
  cr_assert(eol);
  cr_expect_eq(strncmp(eol - strlen("sm_80 (ptxas -v)"), "sm_80 (ptxas -v)", 16), 0, "got: %.200s", line);
  tilec_program_destroy(p);
}
