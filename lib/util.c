/* util.c: arenas, string buffers, diagnostics with source line and caret,
 * the fatal/internal-error channel.  Contract: no printing, no exit. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- arena ---------------------------------------------------------------- */
struct tl_arena_chunk {
  tl_arena_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char mem[];
};

void tl_arena_init(tl_arena *a, struct tl_ctx *ctx) {
  memset(a, 0, sizeof *a);
  a->ctx = ctx;
}

void tl_arena_free(tl_arena *a) {
  tl_arena_chunk *c = a->head;
  while (c) {
    tl_arena_chunk *n = c->next;
    free(c);
    c = n;
  }
  a->head = NULL;
  a->total = 0;
}

void *tl_alloc(tl_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  if (a->limit && a->total + n > a->limit) {
    if (a->ctx) tl_fatal(a->ctx, TL_ERR_NOMEM, "compilation memory limit (%zu bytes) exceeded", a->limit);
    return NULL;
  }
  tl_arena_chunk *c = a->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    c = malloc(sizeof(tl_arena_chunk) + cap);
    if (!c) {
      if (a->ctx) tl_fatal(a->ctx, TL_ERR_NOMEM, "out of memory");
      return NULL;
    }
    c->used = 0;
    c->cap = cap;
    c->next = a->head;
    a->head = c;
  }
  void *p = c->mem + c->used;
  c->used += n;
  a->total += n;
  memset(p, 0, n);
  return p;
}

void *tl_realloc(tl_arena *a, void *p, size_t oldn, size_t newn) {
  void *q = tl_alloc(a, newn);
  if (p && q) memcpy(q, p, oldn < newn ? oldn : newn);
  return q;
}

char *tl_strndup(tl_arena *a, const char *s, size_t n) {
  char *p = tl_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *tl_strdup(tl_arena *a, const char *s) { return tl_strndup(a, s, strlen(s)); }

char *tl_sprintf(tl_arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = tl_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

/* ---- string buffer ---------------------------------------------------------- */
static bool sbuf_reserve(tl_sbuf *b, size_t extra) {
  if (b->oom) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t nc = b->cap ? b->cap : 256;
  while (nc < b->len + extra + 1) nc *= 2;
  char *d = realloc(b->data, nc);
  if (!d) {
    b->oom = true;
    return false;
  }
  b->data = d;
  b->cap = nc;
  return true;
}

void tl_sbuf_putn(tl_sbuf *b, const char *s, size_t n) {
  if (!sbuf_reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void tl_sbuf_puts(tl_sbuf *b, const char *s) { tl_sbuf_putn(b, s, strlen(s)); }

void tl_sbuf_vprintf(tl_sbuf *b, const char *fmt, va_list ap) {
  if (b->oom) return;
  va_list ap2;
  va_copy(ap2, ap);
  /* one formatting pass when the text fits the free space (the usual case: the stage texts and
   * the logs are thousands of short appends), a second after growing when it does not */
  size_t room = b->cap > b->len ? b->cap - b->len : 0;
  int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
  if (n >= 0 && (size_t)n < room) {
    va_end(ap2);
    b->len += (size_t)n;
    return;
  }
  if (n < 0 || !sbuf_reserve(b, (size_t)n)) {
    if (b->data && b->len < b->cap) b->data[b->len] = 0; /* the partial text written into the room */
    va_end(ap2);
    return;
  }
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
}

void tl_sbuf_printf(tl_sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_sbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

void tl_sbuf_free(tl_sbuf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

void tl_appendf(char *buf, size_t cap, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
}

char *tl_sbuf_take(tl_sbuf *b) {
  char *d = b->data;
  if (!d) {
    d = malloc(1);
    if (d) d[0] = 0;
  }
  memset(b, 0, sizeof *b);
  return d;
}

/* ---- context and diagnostics ------------------------------------------------- */
void tl_ctx_init(tl_ctx *c) {
  memset(c, 0, sizeof *c);
  tl_arena_init(&c->arena, c);
  c->max_errors = 20;
}

void tl_ctx_free(tl_ctx *c) {
  tl_arena_free(&c->arena);
  memset(c, 0, sizeof *c);
}

int32_t tl_ctx_add_source(tl_ctx *c, const char *name, const char *text, size_t len) {
  tl_source s;
  s.name = tl_strdup(&c->arena, name ? name : "<string>");
  s.text = tl_strndup(&c->arena, text, len);
  s.len = len;
  tl_vec_push(&c->arena, &c->files, s);
  return c->files.len - 1;
}

static const char *sev_name(tl_severity s) {
  switch (s) {
  case TL_SEV_ERROR: return "error";
  case TL_SEV_WARNING: return "warning";
  case TL_SEV_NOTE: return "note";
  default: return "remark";
  }
}

/* Render "file:line:col: error: msg", then the source line and a caret under
 * the column (tabs in the line are kept so the caret lines up). */
static char *render(tl_ctx *c, tl_severity s, tl_loc loc, const char *msg) {
  tl_sbuf b = {0};
  const tl_source *src = (loc.file >= 0 && loc.file < c->files.len) ? &c->files.data[loc.file] : NULL;
  if (src && loc.line > 0)
    tl_sbuf_printf(&b, "%s:%d:%d: %s: %s\n", src->name, loc.line, loc.col, sev_name(s), msg);
  else if (src)
    tl_sbuf_printf(&b, "%s: %s: %s\n", src->name, sev_name(s), msg);
  else
    tl_sbuf_printf(&b, "tilec: %s: %s\n", sev_name(s), msg);
  if (src && loc.line > 0) {
    const char *p = src->text, *end = src->text + src->len;
    for (int l = 1; l < loc.line && p < end; p++)
      if (*p == '\n') l++;
    const char *q = p;
    while (q < end && *q != '\n' && *q != '\r') q++;
    if (q - p < 4096 && p < end + 1) {
      tl_sbuf_putn(&b, p, (size_t)(q - p));
      tl_sbuf_puts(&b, "\n");
      int col = loc.col > 0 ? loc.col : 1;
      for (int i = 1; i < col && p + i - 1 < q; i++) tl_sbuf_puts(&b, p[i - 1] == '\t' ? "\t" : " ");
      tl_sbuf_puts(&b, "^\n");
    }
  }
  char *out = tl_strdup(&c->arena, b.data ? b.data : "");
  tl_sbuf_free(&b);
  return out;
}

void tl_vdiag_at(tl_ctx *c, tl_severity s, tl_loc loc, const char *fmt, va_list ap) {
  if (s == TL_SEV_ERROR && c->max_errors > 0 && c->nerrors >= c->max_errors) {
    c->nerrors++;
    return;
  }
  tl_sbuf m = {0};
  tl_sbuf_vprintf(&m, fmt, ap);
  tl_diag d;
  d.severity = s;
  d.loc = loc;
  d.message = tl_strdup(&c->arena, m.data ? m.data : "");
  tl_sbuf_free(&m);
  d.rendered = render(c, s, loc, d.message);
  tl_vec_push(&c->arena, &c->diags, d);
  if (s == TL_SEV_ERROR) c->nerrors++;
}

void tl_diag_at(tl_ctx *c, tl_severity s, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_vdiag_at(c, s, loc, fmt, ap);
  va_end(ap);
}

void tl_fatal(tl_ctx *c, int status, const char *fmt, ...) {
  /* Out of memory: render into a static message, the arena may be exhausted. */
  if (status != TL_ERR_NOMEM) {
    va_list ap;
    va_start(ap, fmt);
    c->max_errors = 0; /* always record the fatal one */
    tl_vdiag_at(c, TL_SEV_ERROR, TL_NOLOC, fmt, ap);
    va_end(ap);
  }
  c->fatal_status = status;
  if (c->on_fatal) longjmp(*c->on_fatal, 1);
  /* No handler: a programming error in tilec itself.  Still never abort:
   * spin into a defined state is impossible, so trap deterministically. */
  __builtin_trap();
}

void tl_internal_at(tl_ctx *c, const char *file, int line, const char *fmt, ...) {
  tl_sbuf m = {0};
  va_list ap;
  va_start(ap, fmt);
  tl_sbuf_vprintf(&m, fmt, ap);
  va_end(ap);
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", m.data ? m.data : "");
  tl_sbuf_free(&m);
  tl_fatal(c, TL_ERR_INTERNAL, "internal error (%s:%d): %s", base, line, buf);
}

char *tl_ctx_render_diags(tl_ctx *c) {
  tl_sbuf b = {0};
  for (int i = 0; i < c->diags.len; i++) tl_sbuf_puts(&b, c->diags.data[i].rendered);
  if (c->max_errors > 0 && c->nerrors > c->max_errors)
    tl_sbuf_printf(&b, "tilec: note: %d more errors not shown\n", c->nerrors - c->max_errors);
  return tl_sbuf_take(&b);
}

double tl_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
