/* Front-end diagnostics, checked without the CLI: every tests/lit/diag/ file
 * names its expected diagnostics in `// CHECK: {{.*}}FILE:LINE:COL: SEV: MSG`
 * (or `// CHECK: tilec: error: MSG`) lines; here each file goes through
 * tl_frontend and each expected diagnostic must be among those reported, at
 * that line and column, with that message.  Also recovery (several errors
 * per run) and limits that a lit file cannot hold. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

static tl_ctx ctx;
static jmp_buf jb;

static void setup(void) {
  tl_ctx_init(&ctx);
  ctx.on_fatal = &jb;
  ctx.max_errors = 0;
}
static void teardown(void) { tl_ctx_free(&ctx); }

TestSuite(frontend_diag, .init = setup, .fini = teardown);

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  buf[*len] = 0;
  fclose(f);
  return buf;
}

static tl_module *compile_for(const char *name, const char *src, size_t len, const char *arch, const tl_define *defs,
                              int ndefs) {
  int32_t file = tl_ctx_add_source(&ctx, name, src, len);
  if (setjmp(jb)) cr_assert_fail("internal error on %s: %s", name, tl_ctx_render_diags(&ctx));
  return tl_frontend(&ctx, file, arch, defs, ndefs, NULL);
}
static tl_module *compile(const char *name, const char *src, size_t len, const tl_define *defs, int ndefs) {
  return compile_for(name, src, len, NULL, defs, ndefs);
}

static bool has_diag(tl_severity sev, int line, int col, const char *msg) {
  for (int i = 0; i < ctx.diags.len; i++) {
    tl_diag *d = &ctx.diags.data[i];
    if (d->severity == sev && d->loc.line == line && (line == 0 || d->loc.col == col) && !strcmp(d->message, msg))
      return true;
  }
  return false;
}

/* FileCheck's {{[{][{]}} escape back to "{{". */
static void unescape(char *s) {
  char *p;
  while ((p = strstr(s, "{{[{][{]}}"))) memmove(p + 2, p + 10, strlen(p + 10) + 1);
}

static int check_file(const char *dir, const char *fname) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, fname);
  size_t len;
  char *src = read_file(path, &len);
  cr_assert(src, "cannot read %s", path);
  tl_define defs[4];
  int ndefs = 0;
  char *run = strstr(src, "// RUN:");
  char *eol = run ? strchr(run, '\n') : NULL;
  for (char *d = run; d && d < eol && (d = strstr(d, "-D ")) && d < eol && ndefs < 4; d += 3) {
    char name[64];
    long long v;
    if (sscanf(d + 3, "%63[A-Za-z_0-9]=%lld", name, &v) == 2) {
      defs[ndefs].name = strdup(name);
      defs[ndefs++].value = v;
    }
  }
  /* the first RUN line's --arch=sm_XX (the target sets ARCH / ARCH_SPECIFIC); default sm_90a */
  char arch[16] = "";
  char *a = run ? strstr(run, "--arch=") : NULL;
  if (a && a < eol) sscanf(a + 7, "%15[a-z_0-9]", arch);
  tl_module *m = compile_for(fname, src, len, arch[0] ? arch : NULL, defs, ndefs);
  cr_expect_null(m, "%s: compiled without errors", fname);
  int nchecks = 0;
  for (char *line = src; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, "// CHECK: ", 10) != 0) continue;
    char buf[2048];
    size_t n = strcspn(line + 10, "\n");
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, line + 10, n);
    buf[n] = 0;
    unescape(buf);
    int l = 0, c = 0;
    char sev[16];
    int off = 0;
    const char *msg;
    if (!strncmp(buf, "tilec: error: ", 14)) {
      strcpy(sev, "error");
      msg = buf + 14;
    } else {
      char *p = strstr(buf, fname);
      cr_assert(p, "%s: malformed CHECK line: %s", fname, buf);
      cr_assert(sscanf(p + strlen(fname), ":%d:%d: %15[a-z]: %n", &l, &c, sev, &off) == 3, "%s: %s", fname, buf);
      msg = p + strlen(fname) + off;
    }
    tl_severity s = !strcmp(sev, "error") ? TL_SEV_ERROR : !strcmp(sev, "note") ? TL_SEV_NOTE : TL_SEV_WARNING;
    char *all = tl_ctx_render_diags(&ctx);
    cr_expect(has_diag(s, l, c, msg), "%s: expected %s at %d:%d: '%s'; got:\n%s", fname, sev, l, c, msg, all);
    free(all);
    nchecks++;
  }
  cr_expect(nchecks > 0, "%s has no CHECK line", fname);
  for (int i = 0; i < ndefs; i++) free((void *)defs[i].name);
  free(src);
  return nchecks;
}

Test(frontend_diag, every_lit_diag_file) {
  const char *dir = TILEC_SOURCE_DIR "/tests/lit/diag";
  DIR *d = opendir(dir);
  cr_assert(d, "cannot open %s", dir);
  struct dirent *e;
  int files = 0;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".tile") != 0) continue;
    tl_ctx_free(&ctx);
    setup();
    check_file(dir, e->d_name);
    files++;
  }
  closedir(d);
  cr_expect(files >= 100, "only %d diag files", files);
}

/* Recovery: errors in separate statements and kernels are all reported. */
Test(frontend_diag, several_errors_per_run) {
  const char *src =
      "kernel a(X: tensor<f32>[N]) grid(1) {\n"
      "    t = nope1;\n"
      "    u = load(X[0 : 3]);\n"
      "    v = nope2 + 1;\n"
      "}\n"
      "kernel b(X: tensor<f32>[N]) grid(0) {\n"
      "    store(X[0 : 4], true);\n"
      "}\n";
  cr_assert_null(compile("multi.tile", src, strlen(src), NULL, 0));
  cr_expect(has_diag(TL_SEV_ERROR, 2, 9, "undefined name 'nope1'"));
  cr_expect(has_diag(TL_SEV_ERROR, 3, 16, "range length 3 is not a power of two"));
  cr_expect(has_diag(TL_SEV_ERROR, 4, 9, "undefined name 'nope2'"));
  cr_expect(has_diag(TL_SEV_ERROR, 6, 34, "a grid dimension must be positive, not 0"));
  cr_expect_eq(ctx.nerrors, 4, "%s", tl_ctx_render_diags(&ctx));
}

Test(frontend_diag, syntax_recovery_at_semicolon_and_brace) {
  const char *src =
      "kernel a(X: tensor<f32>[N]) grid(1) {\n"
      "    t = (1 + ;\n"
      "    u = 2 2;\n"
      "    for i in range(0, 4) { w = ) ; }\n"
      "}\n"
      "kernel b() grid(1) { x = ; }\n";
  cr_assert_null(compile("sync.tile", src, strlen(src), NULL, 0));
  cr_expect(has_diag(TL_SEV_ERROR, 2, 14, "expected an expression, found ';'"));
  cr_expect(has_diag(TL_SEV_ERROR, 3, 11, "expected ';' after the assignment, found '2'"));
  cr_expect(has_diag(TL_SEV_ERROR, 4, 32, "expected an expression, found ')'"));
  cr_expect(has_diag(TL_SEV_ERROR, 6, 26, "expected an expression, found ';'"));
  cr_expect_eq(ctx.nerrors, 4, "%s", tl_ctx_render_diags(&ctx));
}

Test(frontend_diag, source_size_limit) {
  size_t n = (16u << 20) + 1;
  char *src = malloc(n + 1);
  memset(src, ' ', n);
  src[n] = 0;
  cr_assert_null(compile("big.tile", src, n, NULL, 0));
  cr_expect(has_diag(TL_SEV_ERROR, 0, 0, "source is 16777217 bytes; the limit is 16 MiB"), "%s",
            tl_ctx_render_diags(&ctx));
  free(src);
}

/* Deep nesting far past the limit is one error, not a stack overflow. */
Test(frontend_diag, very_deep_nesting_is_an_error) {
  size_t depth = 200000;
  char *src = malloc(depth * 2 + 200);
  char *p = src + sprintf(src, "kernel k() grid(1) {\n    t = ");
  for (size_t i = 0; i < depth; i++) *p++ = '(';
  *p++ = '1';
  for (size_t i = 0; i < depth; i++) *p++ = ')';
  p += sprintf(p, ";\n}\n");
  cr_assert_null(compile("deep.tile", src, (size_t)(p - src), NULL, 0));
  cr_expect_eq(ctx.nerrors, 1, "%s", tl_ctx_render_diags(&ctx));
  free(src);
}

/* Lexer fuzz: random bytes never crash, and every diagnostic has a location
 * inside the source. */
Test(frontend_diag, random_bytes_do_not_crash) {
  srand(7);
  for (int iter = 0; iter < 300; iter++) {
    tl_ctx_free(&ctx);
    setup();
    char src[257];
    int n = 1 + rand() % 256;
    static const char alphabet[] = "kernel grid tiles for if else (){}[]<>:;,=+-*/%!&|?@ 0123456789.e\"\n\tAbx_";
    for (int i = 0; i < n; i++) src[i] = rand() % 4 ? alphabet[rand() % (sizeof alphabet - 1)] : (char)(rand() % 256);
    src[n] = 0;
    compile("fuzz.tile", src, (size_t)n, NULL, 0);
    for (int i = 0; i < ctx.diags.len; i++) cr_assert(ctx.diags.data[i].loc.line <= n + 1);
  }
}
