/* require.c: the message of a failed `require` (require.h): the names its condition shows and the
 * diagnostic text, in the file:line:col + source line + caret form of every other diagnostic.
 * requires: a verified function; keeps: everything; breaks: nothing (no allocation). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "require.h"

static bool word_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

static bool same(const char *a, const char *b, int len) { return b && (int)strlen(b) == len && !memcmp(a, b, (size_t)len); }

int tl_require_names(const tl_func *f, const char *text, tl_require_name *out, int max) {
  int n = 0;
  for (const char *p = text ? text : ""; *p && n < max;) {
    if (!word_char(*p, true)) {
      /* a number's digits and suffix letters (1e5, 0x1f) are not names */
      if (*p >= '0' && *p <= '9')
        while (word_char(*p, false) || *p == '.') p++;
      else
        p++;
      continue;
    }
    const char *w = p;
    while (word_char(*p, false)) p++;
    int len = (int)(p - w);
    bool seen = false;
    for (int i = 0; i < n && !seen; i++) seen = out[i].len == len && !memcmp(out[i].name, w, (size_t)len);
    if (seen) continue;
    tl_require_name nm = {w, len, TL_REQ_SYM, -1, -1, 0};
    bool found = false;
    for (int i = 0; i < f->syms.len && !found; i++)
      if (same(w, f->syms.data[i].name, len)) {
        nm.param = f->syms.data[i].param, nm.axis = f->syms.data[i].axis;
        found = true;
      }
    for (int i = 0; i < f->params.len && !found; i++)
      if (!f->params.data[i].is_tensor && same(w, f->params.data[i].name, len)) {
        nm.kind = TL_REQ_PARAM, nm.param = i;
        found = true;
      }
    for (int i = 0; i < f->consts.len && !found; i++)
      if (same(w, f->consts.data[i].name, len)) {
        nm.kind = TL_REQ_CONST, nm.value = f->consts.data[i].value;
        found = true;
      }
    if (found) out[n++] = nm;
  }
  return n;
}

/* Append to buf[*at..n) as snprintf does, keeping *at at the terminator. */
static void put(char *buf, size_t n, size_t *at, const char *fmt, ...) TL_PRINTF(4, 5);
static void put(char *buf, size_t n, size_t *at, const char *fmt, ...) {
  if (*at + 1 >= n) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *at, n - *at, fmt, ap);
  va_end(ap);
  if (w > 0) *at = *at + (size_t)w < n ? *at + (size_t)w : n - 1;
}

void tl_require_format(const tl_func *f, const tl_op *op, const tl_require_name *names, const char *const *vals,
                       int nnames, char *buf, size_t n) {
  if (!buf || !n) return;
  buf[0] = 0;
  size_t at = 0;
  tl_loc loc = op->loc;
  const tl_source *src = f->ctx && loc.file >= 0 && loc.file < f->ctx->files.len ? &f->ctx->files.data[loc.file] : NULL;
  if (src && loc.line > 0) put(buf, n, &at, "%s:%d:%d: ", src->name, loc.line, loc.col);
  else if (loc.line > 0) put(buf, n, &at, "%d:%d: ", loc.line, loc.col);
  put(buf, n, &at, "error: require failed in kernel '%s': %s", f->name, op->req_text ? op->req_text : "?");
  for (int i = 0; i < nnames; i++)
    put(buf, n, &at, "%s%.*s = %s", i ? ", " : " (", names[i].len, names[i].name, vals[i]);
  if (nnames) put(buf, n, &at, ")");
  if (op->req_msg) put(buf, n, &at, ": \"%s\"", op->req_msg);
  if (!src || loc.line <= 0 || !src->text) return;
  const char *p = src->text, *end = src->text + src->len;
  for (int l = 1; l < loc.line && p < end; p++)
    if (*p == '\n') l++;
  const char *q = p;
  while (q < end && *q != '\n' && *q != '\r') q++;
  if (p >= end || q - p > 160) return; /* (a long line would not fit a status message) */
  put(buf, n, &at, "\n%.*s\n", (int)(q - p), p);
  for (int i = 1; i < loc.col && p + i - 1 < q; i++) put(buf, n, &at, "%s", p[i - 1] == '\t' ? "\t" : " ");
  put(buf, n, &at, "^");
}

bool tl_require_is_failure(const char *err) { return err && strstr(err, "error: require failed in kernel '") != NULL; }
