/* pipeline.c: the default pass order (the PASS lines of passes.def, in file
 * order; PASS_EXTRA lines are left out) and the pass driver with its hooks:
 * print-after, time-passes and verify-each. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

#define PASS(name) extern const tl_pass tl_pass_##name;
#define PASS_EXTRA(name) extern const tl_pass tl_pass_##name;
#include "passes.def"
#undef PASS
#undef PASS_EXTRA

static const tl_pass *const default_pipeline[] = {
#define PASS(name) &tl_pass_##name,
#define PASS_EXTRA(name)
#include "passes.def"
#undef PASS
#undef PASS_EXTRA
};

const tl_pass *const *tl_pipeline_default(int *n) {
  if (n) *n = (int)(sizeof default_pipeline / sizeof default_pipeline[0]);
  return default_pipeline;
}

bool tl_pass_in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *q = list; q && *q;) {
    const char *e = strchr(q, ',');
    size_t len = e ? (size_t)(e - q) : strlen(q);
    if (len == n && strncmp(q, name, n) == 0) return true;
    q += len;
    if (*q == ',') q++;
  }
  return false;
}

const char *tl_pass_list_check(const char *list, char *buf, size_t n) {
  for (const char *q = list; q && *q;) {
    const char *e = strchr(q, ',');
    size_t len = e ? (size_t)(e - q) : strlen(q);
    snprintf(buf, n, "%.*s", (int)len, q);
    if (len == 0 || len >= n || !tl_pass_find(buf)) return buf;
    q += len;
    if (*q == ',' && !*++q) { /* a trailing comma: an empty name */
      if (n) buf[0] = 0;
      return buf;
    }
  }
  return NULL;
}

bool tl_run_passes(tl_module *m, const tl_pass *const *passes, int n, const tl_pass_opts *o,
                   const tl_run_hooks *h) {
  static const tl_pass_opts no_opts = {0};
  static const tl_run_hooks no_hooks = {0};
  if (!o) o = &no_opts;
  if (!h) h = &no_hooks;
  tl_ctx *c = m->ctx;
  for (int i = 0; i < n; i++) {
    const tl_pass *p = passes[i];
    if (tl_pass_in_list(h->disabled, p->name)) continue;
    int errors_before = c->nerrors;
    double t0 = tl_now_ms();
    bool ok = true;
    for (int k = 0; k < m->funcs.len && ok; k++)
      if (!h->only || !strcmp(h->only, m->funcs.data[k]->name)) ok = p->run(m->funcs.data[k], o);
    double ms = tl_now_ms() - t0;
    if (h->time_passes && h->log) tl_sbuf_printf(h->log, "pass %s: %.3f ms\n", p->name, ms);
    if (!ok || c->nerrors > errors_before) return false;
    if (h->print_after && h->log && (strcmp(h->print_after, "all") == 0 || strcmp(h->print_after, p->name) == 0)) {
      tl_sbuf_printf(h->log, "// -----// IR Dump After %s //----- //\n", p->name);
      tl_print_module(h->log, m);
    }
    if (h->verify_each) {
      for (int k = 0; k < m->funcs.len; k++)
        if ((!h->only || !strcmp(h->only, m->funcs.data[k]->name)) && !tl_verify_func(m->funcs.data[k])) {
          tl_error(c, m->funcs.data[k]->loc, "the IR is invalid after pass '%s'", p->name);
          return false;
        }
    }
  }
  return true;
}
