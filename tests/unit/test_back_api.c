/* test_back_api.c: the public API through libtilec.so: NULL handling, status
 * strings, options, diagnostics, stages, kernel signatures, the interpreter
 * entry (DLPack mapping, strides, byte_offset), and two threads at once. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec.h"

static const char scale_src[] =
    "kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N], s: f32)\n"
    "    tiles(B = 128)\n"
    "    grid(cdiv(N, B))\n"
    "{\n"
    "    i = program_id(0) * B;\n"
    "    store(Y[i : i + B], load(X[i : i + B]) * s);\n"
    "}\n";

static const char bad_src[] =
    "kernel broken(X: tensor<f32>[N])\n"
    "    tiles(B = 128)\n"
    "    grid(cdiv(N, B))\n"
    "{\n"
    "    x = load(X[0 : B]) +* 2.0;\n"
    "}\n";

static uint64_t rng = 0x243F6A8885A308D3ull;
static float rand_float(void) { /* uniform in [-1, 1), never exactly 0 in practice */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 4503599627370496.0 - 1.0);
}

static tilec_program *compiled(const char *src, tilec_stage stage, const tilec_options *o) {
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, src, "t.tile", o), TILEC_OK);
  tilec_status st = tilec_program_compile(p, stage);
  cr_assert_eq(st, TILEC_OK, "compile: %s\n%s", tilec_status_string(st), tilec_program_log(p));
  return p;
}

/* ---- status, version, NULL ----------------------------------------------------------- */
Test(api, status_strings_name_their_code) {
  static const char *names[] = {"TILEC_OK", "TILEC_ERROR_INPUT", "TILEC_ERROR_USAGE", "TILEC_ERROR_NOMEM",
                                "TILEC_ERROR_INTERNAL", "TILEC_ERROR_UNSUPPORTED", "TILEC_ERROR_IO",
                                "TILEC_ERROR_CUDA", "TILEC_ERROR_NO_DEVICE", "TILEC_ERROR_LAUNCH"};
  for (int i = 0; i < 10; i++) {
    const char *s = tilec_status_string((tilec_status)i);
    cr_assert_not_null(s);
    cr_assert_eq(strncmp(s, names[i], strlen(names[i])), 0, "%d -> %s", i, s);
    cr_assert_eq(s[strlen(names[i])], ':', "%s", s);
  }
  cr_assert_not_null(tilec_status_string((tilec_status)1234));
  cr_assert_not_null(tilec_status_string((tilec_status)-1));
}

Test(api, version_matches_header) {
  cr_assert_eq(tilec_version(), TILEC_VERSION_NUM);
  char want[64];
  snprintf(want, sizeof want, "tilec %d.%d.%d (LLVM ", TILEC_VERSION_MAJOR, TILEC_VERSION_MINOR,
           TILEC_VERSION_PATCH);
  cr_assert_eq(strncmp(tilec_version_string(), want, strlen(want)), 0, "%s", tilec_version_string());
}

/* tilec_options_key / _takes / _example: one table of the keys tilec_options_set takes.  Each key's
 * example value is accepted, a value outside what it takes is refused (except the pass-name keys,
 * checked at compile time), and the options.c setter knows no key the table lacks: every key of
 * tilec_options_set's source (the strcmp(key, "...") chain) is in the table. */
Test(api, option_keys_table_matches_the_setter) {
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  int n = 0;
  for (const char *k; (k = tilec_options_key(n)); n++) {
    const char *takes = tilec_options_takes(k), *ex = tilec_options_example(k);
    cr_assert(takes && *takes && ex, "%s: no description or example", k);
    cr_assert_eq(tilec_options_set(o, k, ex), TILEC_OK, "%s=%s refused (it takes %s)", k, ex, takes);
    if (strcmp(k, "disable-pass") && strcmp(k, "print-after"))
      cr_assert_eq(tilec_options_set(o, k, "9x-bad value"), TILEC_ERROR_USAGE, "%s took a bad value", k);
  }
  cr_assert_gt(n, 20);
  cr_assert_null(tilec_options_key(-1));
  cr_assert_null(tilec_options_takes("no-such-option"));
  cr_assert_null(tilec_options_takes(NULL));
  cr_assert_eq(tilec_options_set(o, "no-such-option", "1"), TILEC_ERROR_USAGE);
  tilec_options_destroy(o);
  /* the setter's keys, read from its source: each must be a row */
  FILE *f = fopen(TILEC_SOURCE_DIR "/lib/api/options.c", "r");
  cr_assert_not_null(f, "cannot read lib/api/options.c");
  char line[512];
  int seen = 0;
  bool in_setter = false;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "tilec_status tilec_options_set(tilec_options *o, const char *key")) in_setter = true;
    if (!in_setter) continue;
    for (char *c = line; (c = strstr(c, "strcmp(key, \"")); ) {
      c += strlen("strcmp(key, \"");
      char name[64];
      size_t len = strcspn(c, "\"");
      snprintf(name, sizeof name, "%.*s", (int)len, c);
      cr_assert_not_null(tilec_options_takes(name), "tilec_options_set takes \"%s\", which has no row in option_keys", name);
      seen++;
    }
  }
  fclose(f);
  cr_assert_geq(seen, n - 4, "read %d keys from the setter, the table has %d", seen, n);
}

Test(api, null_arguments_are_usage_errors) {
  tilec_program *p = (tilec_program *)0x1;
  tilec_options *o = NULL;
  tilec_diagnostic d;
  const void *data;
  size_t size;
  tilec_param_info info;
  cr_assert_eq(tilec_options_create(NULL), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_define(NULL, "B", 1), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_arch(NULL, "sm_90a"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_opt_level(NULL, 2), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_line_info(NULL, 0), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_pipeline(NULL, "simple"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(NULL, "time-passes", "1"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_create(NULL, scale_src, NULL, NULL), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_create(&p, NULL, NULL, NULL), TILEC_ERROR_USAGE);
  cr_assert_null(p, "*out is cleared on failure");
  p = (tilec_program *)0x1;
  cr_assert_eq(tilec_program_create_from_file(&p, NULL, NULL), TILEC_ERROR_USAGE);
  cr_assert_null(p);
  cr_assert_eq(tilec_program_create_from_file(NULL, "x.tile", NULL), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_compile(NULL, TILEC_STAGE_IR), TILEC_ERROR_USAGE);
  cr_assert_null(tilec_program_text(NULL, TILEC_STAGE_IR));
  cr_assert_str_eq(tilec_program_log(NULL), "");
  cr_assert_eq(tilec_program_num_diagnostics(NULL), 0);
  cr_assert_eq(tilec_program_diagnostic(NULL, 0, &d), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_num_kernels(NULL), 0);
  cr_assert_null(tilec_program_kernel_name(NULL, 0));
  cr_assert_eq(tilec_program_get_binary(NULL, TILEC_STAGE_PTX, &data, &size), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_num_params(NULL, 0), -1);
  cr_assert_eq(tilec_program_param(NULL, 0, 0, &info), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_interpret(NULL, NULL, NULL, 0), TILEC_ERROR_USAGE);
  /* destroy(NULL) is a no-op */
  tilec_options_destroy(NULL);
  tilec_program_destroy(NULL);
  tilec_free(NULL);

  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_program_create(&p, scale_src, NULL, o), TILEC_OK);
  cr_assert_eq(tilec_program_diagnostic(p, 0, NULL), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_get_binary(p, TILEC_STAGE_PTX, NULL, &size), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_param(p, 0, 0, NULL), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_interpret(p, NULL, NULL, 3), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_compile(p, (tilec_stage)7), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_compile(p, (tilec_stage)-1), TILEC_ERROR_USAGE);
  tilec_program_destroy(p);
  tilec_options_destroy(o);
}

/* ---- options ------------------------------------------------------------------------------- */
Test(api, option_values_are_checked) {
  tilec_options *o;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_define(o, "", 1), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_define(o, "1B", 1), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_define(o, NULL, 1), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_define(o, "B_2", 1), TILEC_OK);
  cr_assert_eq(tilec_options_set_arch(o, "sm_9"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_arch(o, "sm_90b"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_arch(o, "sm_90a"), TILEC_OK);
  cr_assert_eq(tilec_options_set_arch(o, NULL), TILEC_OK);
  cr_assert_eq(tilec_options_set_opt_level(o, 4), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_opt_level(o, -1), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_opt_level(o, 0), TILEC_OK);
  cr_assert_eq(tilec_options_set_pipeline(o, "fast"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set_pipeline(o, "cutlass"), TILEC_OK);
  cr_assert_eq(tilec_options_set_pipeline(o, NULL), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "no-such-key", "1"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "time-passes", "maybe"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "time-passes", "1"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "max-errors", "-3"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "max-errors", "5"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "entry-name", "not a name"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "entry-name", "k_cutlass"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "fp8-acc", NULL), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "fp8-acc", "exact"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "fp8-acc", "fast"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "fp8-acc", "promote"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "cluster", "2x2"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "cluster", "2"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "cluster", "2x1"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "cluster", "1x2"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "cluster", "1x1"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "cluster", NULL), TILEC_OK);
  tilec_options_destroy(o);
}

/* fp8-acc reaches codegen: the default promotes an 8-bit dot (f32 adds of
 * the temporary after the mmas), "fast" does not; a 16-bit dot is the same
 * either way. */
static const char fp8_src[] =
    "kernel g(A: tensor<f8e4m3>[M, K], B: tensor<f8e4m3>[K, N], C: tensor<f32>[M, N])\n"
    "    tiles(BM = 64, BN = 64, BK = 64)\n"
    "    grid(cdiv(M, BM), cdiv(N, BN))\n"
    "{\n"
    "    acc = zeros<f32>[BM, BN];\n"
    "    for k0 in range(0, K, BK) {\n"
    "        acc = dot(load(A[0 : BM, k0 : k0 + BK]), load(B[k0 : k0 + BK, 0 : BN]), acc);\n"
    "    }\n"
    "    store(C[0 : BM, 0 : BN], acc);\n"
    "}\n";

static bool ptx_has_fadd(const char *src, const char *mode) {
  tilec_options *o;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set_arch(o, "sm_89"), TILEC_OK);
  if (mode) cr_assert_eq(tilec_options_set(o, "fp8-acc", mode), TILEC_OK);
  tilec_program *p = compiled(src, TILEC_STAGE_PTX, o);
  tilec_options_destroy(o);
  bool has = strstr(tilec_program_text(p, TILEC_STAGE_PTX), "add.rn.f32") != NULL;
  tilec_program_destroy(p);
  return has;
}

Test(api, fp8_acc_option_reaches_codegen) {
  cr_assert(ptx_has_fadd(fp8_src, NULL));
  cr_assert(ptx_has_fadd(fp8_src, "promote"));
  cr_assert(!ptx_has_fadd(fp8_src, "fast"));
}

Test(api, options_are_copied_and_later_defines_win) {
  tilec_options *o;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_define(o, "B", 32), TILEC_OK);
  cr_assert_eq(tilec_options_define(o, "B", 256), TILEC_OK);
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, scale_src, "s.tile", o), TILEC_OK);
  /* Changing or destroying the options afterwards does not reach the program. */
  cr_assert_eq(tilec_options_define(o, "B", 16), TILEC_OK);
  tilec_options_destroy(o);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK, "%s", tilec_program_log(p));
  const char *ir = tilec_program_text(p, TILEC_STAGE_IR);
  cr_assert_not_null(ir);
  cr_assert_not_null(strstr(ir, "B = 256 overridden"), "%s", ir);
  tilec_program_destroy(p);
}

/* ---- stages ---------------------------------------------------------------------------------- */
Test(api, stages_continue_where_they_stopped) {
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, scale_src, "s.tile", NULL), TILEC_OK);
  cr_assert_null(tilec_program_text(p, TILEC_STAGE_AST));
  cr_assert_eq(tilec_program_num_kernels(p), 0);
  const void *data;
  size_t size;
  cr_assert_eq(tilec_program_get_binary(p, TILEC_STAGE_AST, &data, &size), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_AST), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_not_null(tilec_program_text(p, TILEC_STAGE_AST));
  cr_assert_null(tilec_program_text(p, TILEC_STAGE_IR));
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_not_null(strstr(tilec_program_text(p, TILEC_STAGE_IR), "kernel @scale("));
  cr_assert_eq(tilec_program_num_kernels(p), 1);
  cr_assert_str_eq(tilec_program_kernel_name(p, 0), "scale");
  cr_assert_null(tilec_program_kernel_name(p, 1));
  cr_assert_null(tilec_program_kernel_name(p, -1));
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_LLVM), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_not_null(strstr(tilec_program_text(p, TILEC_STAGE_LLVM), "nvptx64"));
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_not_null(tilec_program_text(p, TILEC_STAGE_LLVM), "the LLVM text asked for is kept");
  const char *ptx = tilec_program_text(p, TILEC_STAGE_PTX);
  cr_assert_not_null(strstr(ptx, ".entry scale("), "%s", ptx);
  cr_assert_eq(tilec_program_get_binary(p, TILEC_STAGE_PTX, &data, &size), TILEC_OK);
  cr_assert_eq(data, (const void *)ptx);
  cr_assert_eq(size, strlen(ptx));
  cr_assert_null(tilec_program_text(p, TILEC_STAGE_CUBIN));
  /* Asking again for a stage already reached changes nothing. */
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK);
  cr_assert_eq(tilec_program_text(p, TILEC_STAGE_PTX), ptx);
  tilec_program_destroy(p);
}

Test(api, llvm_text_only_when_asked_for) {
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, scale_src, "s.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_not_null(tilec_program_text(p, TILEC_STAGE_PTX));
  cr_assert_null(tilec_program_text(p, TILEC_STAGE_LLVM), "compiling straight to PTX prints no LLVM IR");
  tilec_program_destroy(p);
}

Test(api, time_passes_goes_to_the_log) {
  tilec_options *o;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "time-passes", "1"), TILEC_OK);
  tilec_program *p = compiled(scale_src, TILEC_STAGE_PTX, o);
  tilec_options_destroy(o);
  const char *log = tilec_program_log(p);
  cr_assert_not_null(strstr(log, "time frontend (lex+parse+sema+lower): "), "%s", log);
  cr_assert_not_null(strstr(log, "time codegen.ptx: "), "%s", log);
  cr_assert_not_null(strstr(log, " ms\n"), "%s", log);
  tilec_program_destroy(p);
}

/* ---- diagnostics ------------------------------------------------------------------------------- */
Test(api, diagnostics_have_structure) {
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, bad_src, "bad.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_ERROR_INPUT);
  /* The failure is sticky. */
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_ERROR_INPUT);
  int n = tilec_program_num_diagnostics(p);
  cr_assert_geq(n, 1);
  tilec_diagnostic d;
  cr_assert_eq(tilec_program_diagnostic(p, 0, &d), TILEC_OK);
  cr_assert_eq(d.severity, TILEC_SEV_ERROR);
  cr_assert_str_eq(d.file, "bad.tile");
  cr_assert_eq(d.line, 5);
  cr_assert_gt(d.column, 4);
  cr_assert_gt(strlen(d.message), 0);
  cr_assert_null(strstr(d.message, "error:"), "message alone: %s", d.message);
  char head[256];
  snprintf(head, sizeof head, "bad.tile:5:%d: error: %s\n", d.column, d.message);
  cr_assert_eq(strncmp(d.rendered, head, strlen(head)), 0, "%s", d.rendered);
  cr_assert_not_null(strstr(d.rendered, "+* 2.0;\n"), "source line: %s", d.rendered);
  cr_assert_not_null(strstr(tilec_program_log(p), d.rendered), "log holds the rendered diagnostic");
  cr_assert_eq(tilec_program_diagnostic(p, n, &d), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_program_diagnostic(p, -1, &d), TILEC_ERROR_USAGE);
  cr_assert_null(tilec_program_text(p, TILEC_STAGE_IR));
  tilec_program_destroy(p);
}

static char *temp_file(const void *data, size_t n) {
  char *path = strdup("/tmp/tilec-api-XXXXXX");
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "wb");
  cr_assert_eq(fwrite(data, 1, n, f), n);
  fclose(f);
  return path;
}

Test(api, files_missing_nul_and_oversize) {
  tilec_program *p = (tilec_program *)0x1;
  cr_assert_eq(tilec_program_create_from_file(&p, "/nonexistent/dir/x.tile", NULL), TILEC_ERROR_IO);
  cr_assert_null(p);
  cr_assert_eq(tilec_program_create_from_file(&p, "/tmp", NULL), TILEC_ERROR_IO);

  /* A NUL byte: reported at its line and column when compiling. */
  static const char with_nul[] = "kernel k(X: tensor<f32>[N])\n  tiles(B = 16)\n  gr\0id(1)\n{\n}\n";
  char *path = temp_file(with_nul, sizeof with_nul - 1);
  cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_AST), TILEC_ERROR_INPUT);
  tilec_diagnostic d;
  cr_assert_eq(tilec_program_diagnostic(p, 0, &d), TILEC_OK);
  cr_assert_eq(d.line, 3);
  cr_assert_eq(d.column, 5);
  cr_assert_str_eq(d.message, "source contains a NUL byte");
  cr_assert_str_eq(d.file, path);
  tilec_program_destroy(p);
  unlink(path);
  free(path);

  /* 16 MiB + 1 byte of valid-looking text: over the limit. */
  size_t big = ((size_t)16 << 20) + 1;
  char *text = malloc(big + 1);
  memset(text, ' ', big);
  text[big] = 0;
  path = temp_file(text, big);
  cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_AST), TILEC_ERROR_INPUT);
  cr_assert_not_null(strstr(tilec_program_log(p), "larger than the 16 MiB limit"), "%s", tilec_program_log(p));
  tilec_program_destroy(p);
  cr_assert_eq(tilec_program_create(&p, text, "big", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_AST), TILEC_ERROR_INPUT);
  tilec_program_destroy(p);
  unlink(path);
  free(path);
  free(text);
}

/* ---- kernel signatures -------------------------------------------------------------------------- */
Test(api, params_describe_the_signature) {
  tilec_program *p = compiled(scale_src, TILEC_STAGE_IR, NULL);
  cr_assert_eq(tilec_program_num_params(p, 0), 3);
  cr_assert_eq(tilec_program_num_params(p, 1), -1);
  tilec_param_info x, y, s;
  cr_assert_eq(tilec_program_param(p, 0, 0, &x), TILEC_OK);
  cr_assert_eq(tilec_program_param(p, 0, 1, &y), TILEC_OK);
  cr_assert_eq(tilec_program_param(p, 0, 2, &s), TILEC_OK);
  cr_assert_eq(tilec_program_param(p, 0, 3, &s), TILEC_ERROR_USAGE);
  cr_assert_str_eq(x.name, "X");
  cr_assert(x.is_tensor);
  cr_assert_eq(x.rank, 1);
  cr_assert_str_eq(x.dtype, "f32");
  cr_assert_eq(x.dl_dtype.code, kDLFloat);
  cr_assert_eq(x.dl_dtype.bits, 32);
  cr_assert_str_eq(x.dim_symbol[0], "N");
  cr_assert_not(x.written);
  cr_assert(y.written);
  cr_assert_not(s.is_tensor);
  cr_assert_str_eq(s.name, "s");
  tilec_program_destroy(p);
}

/* tilec_program_param_flags: TILEC_PARAM_ZEROED exactly on the @zeroed tensors (examples/attn_decode.tile:
 * attn_decode_fused's Count, nothing else of the file), -1 for bad arguments; tilec_param_info unchanged */
Test(api, param_flags_report_zeroed_tensors) {
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/attn_decode.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_AST), TILEC_OK, "%s", tilec_program_log(p));
  int zeroed = 0, fused = -1;
  for (int k = 0; k < tilec_program_num_kernels(p); k++) {
    if (!strcmp(tilec_program_kernel_name(p, k), "attn_decode_fused")) fused = k;
    for (int i = 0; i < tilec_program_num_params(p, k); i++) {
      tilec_param_info info;
      cr_assert_eq(tilec_program_param(p, k, i, &info), TILEC_OK);
      int f = tilec_program_param_flags(p, k, i);
      cr_assert(f == 0 || f == TILEC_PARAM_ZEROED, "%s: flags %d", info.name, f);
      if (f & TILEC_PARAM_ZEROED) {
        zeroed++;
        cr_assert_str_eq(tilec_program_kernel_name(p, k), "attn_decode_fused");
        cr_assert_str_eq(info.name, "Count");
        cr_assert(info.is_tensor && info.written);
      }
    }
  }
  cr_assert_eq(zeroed, 1, "one @zeroed tensor in attn_decode.tile");
  cr_assert_geq(fused, 0);
  cr_assert_eq(tilec_program_param_flags(p, fused, tilec_program_num_params(p, fused)), -1);
  cr_assert_eq(tilec_program_param_flags(p, fused, -1), -1);
  cr_assert_eq(tilec_program_param_flags(p, tilec_program_num_kernels(p), 0), -1);
  cr_assert_eq(tilec_program_param_flags(NULL, 0, 0), -1);
  tilec_program_destroy(p);
  /* a failed compile has no kernels to ask about */
  cr_assert_eq(tilec_program_create(&p, "@zeroed(n) kernel k(X: tensor<f32>[N], n: i32) grid(1) { }", "z", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_AST), TILEC_ERROR_INPUT);
  cr_assert(strstr(tilec_program_log(p), "'n' is a scalar parameter; @zeroed names a tensor"), "%s", tilec_program_log(p));
  cr_assert_eq(tilec_program_param_flags(p, 0, 0), -1);
  tilec_program_destroy(p);
}

/* ---- the interpreter entry ------------------------------------------------------------------------ */
/* A rank-1 host tensor of DLPack type (code, bits). */
static DLTensor host_1d(void *data, uint8_t code, uint8_t bits, int64_t *shape, int64_t *strides) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  return t;
}
static DLTensor host_f32(float *data, int64_t *shape, int64_t *strides) {
  return host_1d(data, kDLFloat, 32, shape, strides);
}

Test(api, interpret_ragged_sizes_strides_offsets) {
  tilec_program *p = compiled(scale_src, TILEC_STAGE_IR, NULL);
  static const int64_t sizes[] = {1, 127, 128, 129, 257, 1009};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int64_t n = sizes[k];
    /* X strided (every other float, after 3 floats of byte_offset); Y compact. */
    float *xbuf = malloc(sizeof(float) * (size_t)(2 * n + 3));
    float *y = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < 2 * n + 3; i++) xbuf[i] = rand_float();
    for (int64_t i = 0; i < n; i++) y[i] = rand_float();
    float s = rand_float() * 4.0f;
    int64_t shape[1] = {n}, xstride[1] = {2};
    DLTensor xt = host_f32(xbuf, shape, xstride), yt = host_f32(y, shape, NULL);
    xt.byte_offset = 3 * sizeof(float);
    tilec_arg args[3] = {{TILEC_ARG_TENSOR, {.tensor = &xt}}, {TILEC_ARG_TENSOR, {.tensor = &yt}},
                         {TILEC_ARG_F32, {.f32 = s}}};
    cr_assert_eq(tilec_interpret(p, "scale", args, 3), TILEC_OK, "n=%lld: %s", (long long)n, tilec_program_log(p));
    for (int64_t i = 0; i < n; i++) {
      float want = xbuf[3 + 2 * i] * s;
      cr_assert_eq(y[i], want, "n=%lld i=%lld: %g != %g", (long long)n, (long long)i, y[i], want);
    }
    free(xbuf);
    free(y);
  }
  tilec_program_destroy(p);
}

/* require() (docs/language.md "Launch-time checks"): the interpreter refuses a launch whose
 * condition is false before any program runs (Y untouched), with the diagnostic in the log: the
 * kernel, the condition with its values, the message, the place, the source line and a caret. */
static const char require_src[] = "kernel rowscale(X: tensor<f32>[R, C], Y: tensor<f32>[R, C], k: i32)\n"
                                  "    tiles(BC = 8)\n    grid(R)\n{\n"
                                  "    require(C <= BC, \"one tile covers a row\");\n"
                                  "    require(k >= 1 && k <= C);\n"
                                  "    r = program_id(0);\n"
                                  "    store(Y[r, 0 : BC], load(X[r, 0 : BC]) * cast<f32>(k));\n}\n";

Test(api, interpret_refuses_a_false_require) {
  tilec_program *p = compiled(require_src, TILEC_STAGE_IR, NULL);
  float x[2 * 9], y[2 * 9];
  for (int i = 0; i < 18; i++) x[i] = rand_float(), y[i] = -7.0f;
  int64_t shape[2] = {2, 8};
  DLTensor xt = {.data = x, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor yt = xt;
  yt.data = y;
  tilec_arg args[3] = {{TILEC_ARG_TENSOR, {.tensor = &xt}}, {TILEC_ARG_TENSOR, {.tensor = &yt}},
                       {TILEC_ARG_I32, {.i32 = 3}}};
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_OK, "C = BC: %s", tilec_program_log(p));
  cr_assert_eq(y[0], x[0] * 3.0f);
  shape[1] = 9; /* C > BC: refused, nothing stored */
  for (int i = 0; i < 18; i++) y[i] = -7.0f;
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_ERROR_LAUNCH);
  for (int i = 0; i < 18; i++) cr_assert_eq(y[i], -7.0f, "a refused launch stored Y[%d]", i);
  const char *log = tilec_program_log(p);
  cr_assert(strstr(log, "t.tile:5:5: error: require failed in kernel 'rowscale': C <= BC (C = 9, BC = 8): "
                        "\"one tile covers a row\"\n    require(C <= BC, \"one tile covers a row\");\n    ^\n"),
            "%s", log);
  shape[1] = 8; /* a scalar parameter's condition, without a message */
  args[2].u.i32 = 0;
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_ERROR_LAUNCH);
  cr_assert(strstr(tilec_program_log(p), "t.tile:6:5: error: require failed in kernel 'rowscale': "
                                          "k >= 1 && k <= C (k = 0, C = 8)\n"),
            "%s", tilec_program_log(p));
  tilec_program_destroy(p);
}

Test(api, interpret_rejects_bad_arguments) {
  tilec_program *p = compiled(scale_src, TILEC_STAGE_IR, NULL);
  float x[7], y[7];
  for (int i = 0; i < 7; i++) x[i] = rand_float(), y[i] = rand_float();
  int64_t shape[1] = {7}, shape6[1] = {6};
  DLTensor xt = host_f32(x, shape, NULL), yt = host_f32(y, shape, NULL);
  tilec_arg args[3] = {{TILEC_ARG_TENSOR, {.tensor = &xt}}, {TILEC_ARG_TENSOR, {.tensor = &yt}},
                       {TILEC_ARG_F32, {.f32 = 2.0f}}};
  cr_assert_eq(tilec_interpret(p, NULL, args, 2), TILEC_ERROR_LAUNCH, "argument count");
  cr_assert_eq(tilec_interpret(p, "nope", args, 3), TILEC_ERROR_USAGE, "kernel name");
  args[2].kind = TILEC_ARG_TENSOR;
  args[2].u.tensor = &xt;
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_ERROR_LAUNCH, "tensor for a scalar");
  args[2].kind = TILEC_ARG_F32;
  args[2].u.f32 = 2.0f;
  yt.dtype.code = kDLBfloat;
  yt.dtype.bits = 16;
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_ERROR_LAUNCH, "dtype");
  cr_assert_not_null(strstr(tilec_program_log(p), "interpret scale"), "%s", tilec_program_log(p));
  yt.dtype.code = kDLFloat;
  yt.dtype.bits = 32;
  yt.dtype.lanes = 4;
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_ERROR_LAUNCH, "lanes");
  yt.dtype.lanes = 1;
  yt.device.device_type = kDLCUDA;
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_ERROR_LAUNCH, "device tensor");
  yt.device.device_type = kDLCPU;
  yt.shape = shape6;
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_ERROR_LAUNCH, "N bound twice, differently");
  yt.shape = shape;
  yt.data = NULL;
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_ERROR_LAUNCH, "NULL data");
  yt.data = y;
  float before[7];
  memcpy(before, y, sizeof y);
  cr_assert_eq(tilec_interpret(p, NULL, args, 3), TILEC_OK, "%s", tilec_program_log(p));
  for (int i = 0; i < 7; i++) cr_assert_eq(y[i], x[i] * 2.0f);
  tilec_program_destroy(p);
}

/* An integer for an 8- to 32-bit parameter must fit its width, signed or unsigned: 2^40 for an i32
 * used to be wrapped to 0 without a word (docs/api.md). */
Test(api, interpret_refuses_integers_that_do_not_fit) {
  static const char *src = "kernel fill(Y: tensor<i32>[N], v: i32, w: i8, b: i1) tiles(B = 16) grid(cdiv(N, B)) {\n"
                           "  store(Y[0 : B], full<i32>[B](v + cast<i32>(w) + (b ? 1000 : 0)));\n}\n";
  tilec_program *p = compiled(src, TILEC_STAGE_IR, NULL);
  int32_t y[4];
  int64_t shape[1] = {4};
  DLTensor yt = host_1d(y, kDLInt, 32, shape, NULL);
  static const struct { int64_t v, w, b; tilec_status want; int32_t y; } cases[] = {
      {(int64_t)1 << 40, 0, 0, TILEC_ERROR_LAUNCH, 0},
      {-((int64_t)1 << 31) - 1, 0, 0, TILEC_ERROR_LAUNCH, 0},
      {0, 256, 0, TILEC_ERROR_LAUNCH, 0},
      {0, -129, 0, TILEC_ERROR_LAUNCH, 0},
      {0xffffffffLL, 0, 0, TILEC_OK, -1},      /* the all-ones mask: unsigned i32 */
      {-((int64_t)1 << 31) + 128, -128, 0, TILEC_OK, INT32_MIN},
      {5, 255, 2, TILEC_OK, 5 - 1 + 1000},     /* 255 is -1 as an i8; i1 takes any value */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tilec_arg args[4] = {{TILEC_ARG_TENSOR, {.tensor = &yt}}, {TILEC_ARG_I64, {.i64 = cases[i].v}},
                         {TILEC_ARG_I64, {.i64 = cases[i].w}}, {TILEC_ARG_I64, {.i64 = cases[i].b}}};
    memset(y, 0, sizeof y);
    tilec_status st = tilec_interpret(p, NULL, args, 4);
    cr_assert_eq(st, cases[i].want, "case %zu: %s", i, tilec_program_log(p));
    if (st == TILEC_OK) cr_assert_eq(y[3], cases[i].y, "case %zu: %d", i, y[3]);
  }
  cr_assert_not_null(strstr(tilec_program_log(p), "argument 1 (v): 1099511627776 does not fit the parameter's type i32"),
                     "%s", tilec_program_log(p));
  tilec_program_destroy(p);
}

/* ---- threads ------------------------------------------------------------------------------------ */
typedef struct job {
  int64_t block;
  char *ptx;
  tilec_status st;
} job;

static void *compile_job(void *arg) {
  job *j = arg;
  tilec_options *o = NULL;
  tilec_program *p = NULL;
  j->st = tilec_options_create(&o);
  if (j->st == TILEC_OK) j->st = tilec_options_define(o, "B", j->block);
  if (j->st == TILEC_OK) j->st = tilec_options_set_arch(o, "sm_90a");
  for (int rep = 0; rep < 3 && j->st == TILEC_OK; rep++) {
    j->st = tilec_program_create(&p, scale_src, "t.tile", o);
    if (j->st == TILEC_OK) j->st = tilec_program_compile(p, TILEC_STAGE_PTX);
    if (j->st == TILEC_OK && !j->ptx) j->ptx = strdup(tilec_program_text(p, TILEC_STAGE_PTX));
    else if (j->st == TILEC_OK && strcmp(j->ptx, tilec_program_text(p, TILEC_STAGE_PTX)) != 0) j->st = TILEC_ERROR_INTERNAL;
    tilec_program_destroy(p);
    p = NULL;
  }
  tilec_options_destroy(o);
  return NULL;
}

Test(api, two_programs_in_two_threads) {
  job seq[2] = {{64, NULL, TILEC_OK}, {256, NULL, TILEC_OK}};
  job par[2] = {{64, NULL, TILEC_OK}, {256, NULL, TILEC_OK}};
  compile_job(&seq[0]);
  compile_job(&seq[1]);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&t[i], NULL, compile_job, &par[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(seq[i].st, TILEC_OK, "%s", tilec_status_string(seq[i].st));
    cr_assert_eq(par[i].st, TILEC_OK, "%s", tilec_status_string(par[i].st));
    cr_assert_str_eq(par[i].ptx, seq[i].ptx, "thread %d differs from the sequential compile", i);
    free(seq[i].ptx);
    free(par[i].ptx);
  }
}

/* tilec_program_kernel_flags: TILEC_KERNEL_DOT_F8 exactly on kernels with a dot of 8-bit float operands
 * (gemm_fp8_blockscale.tile: f8e4m3 x f8e4m3; gemm.tile's f16 dots not), at the AST and the IR stage;
 * -1 for bad arguments */
Test(api, kernel_flags_report_f8_dots) {
  const char *files[] = {"gemm_fp8_blockscale.tile", "gemm.tile"};
  for (int fi = 0; fi < 2; fi++) {
    for (int stage = TILEC_STAGE_AST; stage <= TILEC_STAGE_IR; stage++) {
      char path[512];
      snprintf(path, sizeof path, "%s/examples/%s", TILEC_SOURCE_DIR, files[fi]);
      tilec_program *p = NULL;
      cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK);
      cr_assert_eq(tilec_program_compile(p, (tilec_stage)stage), TILEC_OK, "%s", tilec_program_log(p));
      cr_assert_gt(tilec_program_num_kernels(p), 0);
      for (int k = 0; k < tilec_program_num_kernels(p); k++)
        cr_assert_eq(tilec_program_kernel_flags(p, k), fi == 0 ? TILEC_KERNEL_DOT_F8 : 0, "%s %s stage %d",
                     files[fi], tilec_program_kernel_name(p, k), stage);
      cr_assert_eq(tilec_program_kernel_flags(p, tilec_program_num_kernels(p)), -1);
      cr_assert_eq(tilec_program_kernel_flags(p, -1), -1);
      tilec_program_destroy(p);
    }
  }
  cr_assert_eq(tilec_program_kernel_flags(NULL, 0), -1);
  /* fp8-acc=fast adds TILEC_KERNEL_DOT_F8_FAST to kernels with an 8-bit float dot, and to no other */
  for (int fi = 0; fi < 2; fi++) {
    char path[512];
    snprintf(path, sizeof path, "%s/examples/%s", TILEC_SOURCE_DIR, files[fi]);
    tilec_options *o = NULL;
    cr_assert_eq(tilec_options_create(&o), TILEC_OK);
    cr_assert_eq(tilec_options_set(o, "fp8-acc", "fast"), TILEC_OK);
    tilec_program *p = NULL;
    cr_assert_eq(tilec_program_create_from_file(&p, path, o), TILEC_OK);
    cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK, "%s", tilec_program_log(p));
    for (int k = 0; k < tilec_program_num_kernels(p); k++)
      cr_assert_eq(tilec_program_kernel_flags(p, k), fi == 0 ? TILEC_KERNEL_DOT_F8 | TILEC_KERNEL_DOT_F8_FAST : 0);
    tilec_program_destroy(p);
    tilec_options_destroy(o);
  }
}

/* ---- AOT launchers (docs/aot.md "Two images") ---------------------------------------------- */
/* A program already compiled to PTX as TMA forms (the library's default) emits launchers that embed
 * each TMA form's no-TMA form beside it (once refused: "compiled to PTX as a TMA form"); with the
 * option tma-fallback=inline, one image a kernel. */
static void emit_gemm(const char *fallback, char **h, char **c) {
  setenv("TILEC_PTXAS", "/nonexistent/ptxas", 1); /* (PTX only: quicker) */
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set_arch(o, "sm_90a"), TILEC_OK);
  if (fallback) cr_assert_eq(tilec_options_set(o, "tma-fallback", fallback), TILEC_OK);
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/gemm.tile", o), TILEC_OK);
  tilec_options_destroy(o);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK, "%s", tilec_program_log(p));
  bool form = strstr(tilec_program_text(p, TILEC_STAGE_PTX), "tilec: TMA form") != NULL;
  cr_assert_eq(form, !fallback, "the program's PTX: a TMA form %d", form);
  cr_assert_eq(tilec_program_emit_c(p, "g", h, c), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_null(strstr(tilec_program_log(p), "error"), "%s", tilec_program_log(p));
  tilec_program_destroy(p);
  unsetenv("TILEC_PTXAS");
}

Test(api, emit_c_embeds_a_tma_forms_no_tma_form) {
  char *h = NULL, *c = NULL;
  emit_gemm(NULL, &h, &c);
  cr_assert_not_null(strstr(c, "#define g_NNOTMA 1\n"));
  cr_assert_not_null(strstr(c, "static const unsigned char g_notma0_ptx["));
  cr_assert_not_null(strstr(c, "if (g_tma_fits(A, A_shape, A_st, 2, 2) &&"));
  cr_assert_not_null(strstr(c, "tl_st = g_notma_function(0, &tl_fn, &tl_ctas);"));
  cr_assert_not_null(strstr(h, "runs its no-TMA image"));
  tilec_free(h);
  tilec_free(c);
  emit_gemm("inline", &h, &c);
  cr_assert_not_null(strstr(c, "#define g_NNOTMA 0\n"));
  cr_assert_null(strstr(c, "g_tma_fits(A,"));
  cr_assert_null(strstr(h, "no-TMA image ("));
  tilec_free(h);
  tilec_free(c);
}
