/* tile-opt: textual tile IR in, named passes, textual IR out.
 *
 *   tile-opt [FILE|-] [-p PASS,PASS...|--pipeline=default] [--verify-each]
 *            [--print-after=PASS|--print-after-all] [--time-passes]
 *            [--disable-pass=PASS,PASS...] [--print-loc] [-o OUT]
 *
 * Exit 0 ok, 1 input errors (diagnostics on stderr), 2 usage.  The input is
 * verified after parsing; print-after and timings go to stderr. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#define MAX_PASSES 256

static void usage(FILE *to) {
  fputs("usage: tile-opt [FILE|-] [-p PASS,PASS...|--pipeline=default] [--verify-each]\n"
        "                [--print-after=PASS|--print-after-all] [--time-passes] [--print-loc] [-o OUT]\n"
        "                [--disable-pass=PASS,PASS...]\n"
        "passes:",
        to);
  int n = 0;
  const tl_pass *const *all = tl_pass_all(&n);
  for (int i = 0; i < n; i++) fprintf(to, " %s", all[i]->name);
  fputs("\n", to);
}

static char *read_all(FILE *in, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  for (;;) {
    if (n == cap) {
      if (cap > ((size_t)1 << 30)) {
        free(buf);
        return NULL;
      }
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        return NULL;
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, in);
    n += got;
    if (got == 0) break;
  }
  if (ferror(in)) {
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static void flush_diags(tl_ctx *c) {
  char *d = tl_ctx_render_diags(c);
  if (d) {
    fputs(d, stderr);
    free(d);
  }
}

static int add_pass_list(const char *list, const tl_pass **passes, int *n) {
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char name[128];
    if (len == 0 || len >= sizeof name) {
      fprintf(stderr, "tile-opt: bad pass list '%s'\n", list);
      return 2;
    }
    memcpy(name, p, len);
    name[len] = 0;
    const tl_pass *ps = tl_pass_find(name);
    if (!ps) {
      fprintf(stderr, "tile-opt: unknown pass '%s'\n", name);
      return 2;
    }
    if (*n >= MAX_PASSES) {
      fprintf(stderr, "tile-opt: too many passes\n");
      return 2;
    }
    passes[(*n)++] = ps;
    p += len;
    if (*p == ',') p++;
  }
  return 0;
}

/* State shared with the setjmp handler lives in statics (not clobbered). */
static tl_ctx ctx;
static tl_sbuf out, logbuf;
static char *input_text;

static int run(const char *input, const char *output, char *text, size_t len, const tl_pass **passes, int npasses,
               tl_run_hooks *hooks, const tl_print_opts *popts) {
  static jmp_buf jb;
  input_text = text;
  tl_ctx_init(&ctx);
  hooks->log = &logbuf;
  if (setjmp(jb)) {
    /* internal error or out of memory: report, never crash */
    fputs(logbuf.data ? logbuf.data : "", stderr);
    flush_diags(&ctx);
    fprintf(stderr, "tile-opt: failed (%s)\n", ctx.fatal_status == TL_ERR_NOMEM ? "out of memory" : "internal error");
    tl_sbuf_free(&out);
    tl_sbuf_free(&logbuf);
    tl_ctx_free(&ctx);
    free(input_text);
    return 1;
  }
  ctx.on_fatal = &jb;
  int status = 0;
  int32_t file = tl_ctx_add_source(&ctx, strcmp(input, "-") == 0 ? "<stdin>" : input, text, len);
  tl_module *m = tl_parse_ir(&ctx, file);
  if (!m || ctx.nerrors || !tl_verify_module(m)) {
    status = 1;
  } else {
    tl_pass_opts opts = {0};
    opts.arch = "sm_90a";
    opts.opt_level = 2;
    if (!tl_run_passes(m, passes, npasses, &opts, hooks) || ctx.nerrors) status = 1;
  }
  if (logbuf.data) fputs(logbuf.data, stderr);
  flush_diags(&ctx);
  if (status == 0) {
    tl_print_module_opts(&out, m, popts);
    FILE *o = (output && strcmp(output, "-") != 0) ? fopen(output, "wb") : stdout;
    if (!o) {
      fprintf(stderr, "tile-opt: cannot write '%s'\n", output);
      status = 1;
    } else {
      if (out.data) fwrite(out.data, 1, out.len, o);
      if (o != stdout) fclose(o);
    }
  }
  tl_sbuf_free(&out);
  tl_sbuf_free(&logbuf);
  tl_ctx_free(&ctx);
  free(input_text);
  return status;
}

int main(int argc, char **argv) {
  const char *input = NULL, *output = NULL;
  const tl_pass *passes[MAX_PASSES];
  int npasses = 0;
  tl_run_hooks hooks = {0};
  tl_print_opts popts = {0};

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-p") == 0 || strcmp(a, "--passes") == 0) {
      if (++i >= argc) return usage(stderr), 2;
      int rc = add_pass_list(argv[i], passes, &npasses);
      if (rc) return rc;
    } else if (strncmp(a, "-p", 2) == 0 && a[2] && a[1] == 'p') {
      int rc = add_pass_list(a + 2, passes, &npasses);
      if (rc) return rc;
    } else if (strncmp(a, "--passes=", 9) == 0) {
      int rc = add_pass_list(a + 9, passes, &npasses);
      if (rc) return rc;
    } else if (strcmp(a, "--pipeline=default") == 0) {
      int n = 0;
      const tl_pass *const *def = tl_pipeline_default(&n);
      for (int k = 0; k < n; k++) {
        if (npasses >= MAX_PASSES) return fputs("tile-opt: too many passes\n", stderr), 2;
        passes[npasses++] = def[k];
      }
    } else if (strcmp(a, "--verify-each") == 0) {
      hooks.verify_each = true;
    } else if (strncmp(a, "--print-after=", 14) == 0) {
      hooks.print_after = a + 14;
      if (strcmp(hooks.print_after, "all") != 0 && !tl_pass_find(hooks.print_after)) {
        fprintf(stderr, "tile-opt: unknown pass '%s'\n", hooks.print_after);
        return 2;
      }
    } else if (strncmp(a, "--disable-pass=", 15) == 0) {
      char bad[128];
      if (tl_pass_list_check(a + 15, bad, sizeof bad)) {
        fprintf(stderr, "tile-opt: unknown pass '%s'\n", bad);
        return 2;
      }
      hooks.disabled = a + 15;
    } else if (strcmp(a, "--print-after-all") == 0) {
      hooks.print_after = "all";
    } else if (strcmp(a, "--time-passes") == 0) {
      hooks.time_passes = true;
    } else if (strcmp(a, "--print-loc") == 0) {
      popts.print_loc = true;
    } else if (strcmp(a, "-o") == 0) {
      if (++i >= argc) return usage(stderr), 2;
      output = argv[i];
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "tile-opt: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    } else {
      if (input) {
        fprintf(stderr, "tile-opt: more than one input file\n");
        return 2;
      }
      input = a;
    }
  }
  if (!input) input = "-";

  FILE *in = strcmp(input, "-") == 0 ? stdin : fopen(input, "rb");
  if (!in) {
    fprintf(stderr, "tile-opt: cannot open '%s'\n", input);
    return 1;
  }
  size_t len = 0;
  char *text = read_all(in, &len);
  if (in != stdin) fclose(in);
  if (!text) {
    fprintf(stderr, "tile-opt: cannot read '%s'\n", input);
    return 1;
  }

  return run(input, output, text, len, passes, npasses, &hooks, &popts);
}
