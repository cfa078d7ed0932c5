/* ir_parse.c: text -> tile IR (docs/ir.md), the inverse of ir_print.c.
 * A character-level recursive-descent parser.  The first error is reported
 * as a diagnostic at its line:col and parsing stops (longjmp to the entry).
 * Every loop is bounded by the input; nesting, name lengths, operand counts
 * and numbers are bounded so that no input can crash it. */
#include "ir.h"
#include "schedule.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_NAME 256
#define MAX_OPERANDS 4096

typedef struct sym_entry {
  const char *key;
  int32_t value;
} sym_entry;

typedef struct parser {
  tl_ctx *c;
  int32_t file;
  const char *s;
  size_t len, pos;
  int32_t line, col;
  tl_module *m;
  tl_func *f;
  jmp_buf fail;
  sym_entry *tab; /* open addressing, per function */
  int tab_cap, tab_len;
  int depth;
} parser;

/* ---- errors and positions ------------------------------------------------ */
static tl_loc here(parser *p) { return (tl_loc){p->file, p->line, p->col}; }

TL_PRINTF(3, 4) TL_NORETURN static void fail_at(parser *p, tl_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_vdiag_at(p->c, TL_SEV_ERROR, loc, fmt, ap);
  va_end(ap);
  longjmp(p->fail, 1);
}
#define FAIL(P, ...) fail_at((P), here(P), __VA_ARGS__)

static int cur(parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }
static int at(parser *p, size_t k) { return p->pos + k < p->len ? (unsigned char)p->s[p->pos + k] : -1; }

static void adv(parser *p) {
  if (p->pos >= p->len) return;
  if (p->s[p->pos] == '\n') {
    p->line++;
    p->col = 1;
  } else {
    p->col++;
  }
  p->pos++;
}

static bool is_alpha(int ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }
static bool is_digit(int ch) { return ch >= '0' && ch <= '9'; }
static bool is_ident(int ch) { return is_alpha(ch) || is_digit(ch); }

/* Skip blanks and // comments; with `newlines` false, stop at a line end. */
static void skip_ws_mode(parser *p, bool newlines) {
  for (;;) {
    int ch = cur(p);
    if (ch == ' ' || ch == '\t' || ch == '\r' || (newlines && ch == '\n')) adv(p);
    else if (ch == '/' && at(p, 1) == '/') {
      while (cur(p) != -1 && cur(p) != '\n') adv(p);
    } else break;
  }
}
static void skip_ws(parser *p) { skip_ws_mode(p, true); }

static const char *describe(parser *p) {
  int ch = cur(p);
  if (ch == -1) return "end of input";
  if (ch == '\n') return "end of line";
  static _Thread_local char buf[32];
  if (ch >= 33 && ch < 127) snprintf(buf, sizeof buf, "'%c'", ch);
  else snprintf(buf, sizeof buf, "byte 0x%02x", ch);
  return buf;
}

static bool accept(parser *p, const char *punct) {
  skip_ws(p);
  size_t n = strlen(punct);
  if (p->pos + n > p->len || memcmp(p->s + p->pos, punct, n) != 0) return false;
  for (size_t i = 0; i < n; i++) adv(p);
  return true;
}

static void expect(parser *p, const char *punct) {
  if (!accept(p, punct)) FAIL(p, "expected '%s', found %s", punct, describe(p));
}

/* An identifier [A-Za-z_][A-Za-z0-9_]* into buf (MAX_NAME). */
static bool read_ident(parser *p, char *buf) {
  skip_ws(p);
  if (!is_alpha(cur(p))) return false;
  size_t n = 0;
  while (is_ident(cur(p))) {
    if (n >= MAX_NAME - 1) FAIL(p, "name too long");
    buf[n++] = (char)cur(p);
    adv(p);
  }
  buf[n] = 0;
  return true;
}

static void expect_ident(parser *p, char *buf, const char *what) {
  if (!read_ident(p, buf)) FAIL(p, "expected %s, found %s", what, describe(p));
}

static bool accept_kw(parser *p, const char *kw) {
  skip_ws(p);
  size_t n = strlen(kw);
  if (p->pos + n > p->len || memcmp(p->s + p->pos, kw, n) != 0) return false;
  if (p->pos + n < p->len && is_ident((unsigned char)p->s[p->pos + n])) return false;
  for (size_t i = 0; i < n; i++) adv(p);
  return true;
}

static void expect_kw(parser *p, const char *kw) {
  if (!accept_kw(p, kw)) FAIL(p, "expected '%s', found %s", kw, describe(p));
}

/* A decimal integer with optional '-', checked against [lo, hi]. */
static int64_t read_int(parser *p, int64_t lo, int64_t hi, const char *what) {
  skip_ws(p);
  tl_loc loc = here(p);
  bool neg = false;
  if (cur(p) == '-') {
    neg = true;
    adv(p);
  }
  if (!is_digit(cur(p))) FAIL(p, "expected %s, found %s", what, describe(p));
  uint64_t v = 0;
  bool over = false;
  while (is_digit(cur(p))) {
    unsigned d = (unsigned)(cur(p) - '0');
    if (v > (UINT64_MAX - d) / 10) over = true;
    else v = v * 10 + d;
    adv(p);
  }
  int64_t r = 0;
  if (neg) {
    if (v > (uint64_t)INT64_MAX + 1) over = true;
    else r = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
  } else {
    if (v > (uint64_t)INT64_MAX) over = true;
    else r = (int64_t)v;
  }
  if (over || r < lo || r > hi) fail_at(p, loc, "%s out of range [%lld, %lld]", what, (long long)lo, (long long)hi);
  return r;
}

/* ---- symbol table: value name (without '%') -> value id ------------------- */
static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static int32_t sym_lookup(parser *p, const char *key) {
  if (!p->tab_cap) return -1;
  uint32_t mask = (uint32_t)p->tab_cap - 1;
  for (uint32_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
    if (!p->tab[i].key) return -1;
    if (strcmp(p->tab[i].key, key) == 0) return p->tab[i].value;
  }
}

static void sym_insert_raw(sym_entry *tab, int cap, const char *key, int32_t value) {
  uint32_t mask = (uint32_t)cap - 1;
  uint32_t i = hash_str(key) & mask;
  while (tab[i].key) i = (i + 1) & mask;
  tab[i].key = key;
  tab[i].value = value;
}

static void sym_define(parser *p, const char *key, int32_t value, tl_loc loc) {
  if (sym_lookup(p, key) >= 0) fail_at(p, loc, "redefinition of value '%%%s'", key);
  if ((p->tab_len + 1) * 2 > p->tab_cap) {
    int ncap = p->tab_cap ? p->tab_cap * 2 : 64;
    sym_entry *nt = tl_alloc(&p->c->arena, sizeof(sym_entry) * (size_t)ncap);
    for (int i = 0; i < p->tab_cap; i++)
      if (p->tab[i].key) sym_insert_raw(nt, ncap, p->tab[i].key, p->tab[i].value);
    p->tab = nt;
    p->tab_cap = ncap;
  }
  sym_insert_raw(p->tab, p->tab_cap, tl_strdup(&p->c->arena, key), value);
  p->tab_len++;
}

/* ---- value names ------------------------------------------------------------ */
typedef struct vname {
  char text[MAX_NAME];
  tl_loc loc;
} vname;

static bool is_vname_char(int ch) { return is_ident(ch) || ch == '.'; }

static bool read_vname(parser *p, vname *out) {
  skip_ws(p);
  if (cur(p) != '%') return false;
  out->loc = here(p);
  adv(p);
  size_t n = 0;
  while (is_vname_char(cur(p))) {
    if (n >= MAX_NAME - 1) FAIL(p, "value name too long");
    out->text[n++] = (char)cur(p);
    adv(p);
  }
  out->text[n] = 0;
  if (n == 0) FAIL(p, "expected a value name after '%%'");
  return true;
}

static void expect_vname(parser *p, vname *out) {
  if (!read_vname(p, out)) FAIL(p, "expected a value (%%name), found %s", describe(p));
}

/* The name hint kept for printing: "acc.3" -> "acc", "7" -> none, "i" -> "i". */
static const char *name_hint(parser *p, const char *text) {
  size_t n = strlen(text);
  bool all_digits = true;
  for (size_t i = 0; i < n; i++) all_digits &= is_digit((unsigned char)text[i]);
  if (all_digits) return NULL;
  const char *dot = strrchr(text, '.');
  if (dot && dot > text && dot[1]) {
    bool digits = true;
    for (const char *q = dot + 1; *q; q++) digits &= is_digit((unsigned char)*q);
    if (digits) return tl_strndup(&p->c->arena, text, (size_t)(dot - text));
  }
  return tl_strdup(&p->c->arena, text);
}

static void bind(parser *p, const vname *n, int32_t value) {
  sym_define(p, n->text, value, n->loc);
  p->f->values.data[value].name = name_hint(p, n->text);
}

static int32_t use_value(parser *p) {
  vname n;
  expect_vname(p, &n);
  int32_t v = sym_lookup(p, n.text);
  if (v < 0) fail_at(p, n.loc, "use of undefined value '%%%s'", n.text);
  return v;
}

/* ---- types --------------------------------------------------------------------- */
static tl_dtype read_dtype(parser *p) {
  char buf[MAX_NAME];
  tl_loc loc = (skip_ws(p), here(p));
  if (!read_ident(p, buf)) FAIL(p, "expected an element type, found %s", describe(p));
  tl_dtype dt = tl_dtype_from_name(buf, strlen(buf));
  if (dt == TL_VOID) fail_at(p, loc, "unknown element type '%s'", buf);
  return dt;
}

static tl_type read_type(parser *p) {
  skip_ws(p);
  tl_loc loc = here(p);
  if (accept_kw(p, "tile")) {
    expect(p, "<");
    int32_t shape[TL_MAX_RANK];
    int rank = 0;
    skip_ws(p);
    while (is_digit(cur(p))) {
      if (rank >= TL_MAX_RANK) FAIL(p, "tile rank exceeds %d", TL_MAX_RANK);
      shape[rank++] = (int32_t)read_int(p, 1, TL_MAX_TILE_ELEMS, "tile dimension");
      if (cur(p) != 'x') FAIL(p, "expected 'x' after a tile dimension, found %s", describe(p));
      adv(p);
    }
    tl_type t = tl_tile_type(read_dtype(p), rank, shape);
    if (accept(p, ",")) {
      expect(p, "#L");
      t.layout = (int32_t)read_int(p, 0, 1 << 20, "layout index");
    }
    expect(p, ">");
    return t;
  }
  if (accept_kw(p, "tensor")) {
    expect(p, "<");
    tl_dtype dt = read_dtype(p);
    expect(p, ",");
    int rank = (int)read_int(p, 0, TL_MAX_RANK, "tensor rank");
    expect(p, ">");
    return tl_tensor_type(dt, rank);
  }
  char buf[MAX_NAME];
  if (!read_ident(p, buf)) FAIL(p, "expected a type, found %s", describe(p));
  tl_dtype dt = tl_dtype_from_name(buf, strlen(buf));
  if (dt == TL_VOID) fail_at(p, loc, "unknown type '%s'", buf);
  return tl_scalar_type(dt);
}

/* `-> (T, T...)` into a vector */
typedef TL_VEC(tl_type) type_vec;
typedef TL_VEC(int32_t) id_vec;

static void read_type_list(parser *p, type_vec *out) {
  expect(p, "(");
  if (accept(p, ")")) return;
  do {
    if (out->len >= MAX_OPERANDS) FAIL(p, "too many types");
    tl_vec_push(&p->c->arena, out, read_type(p));
  } while (accept(p, ","));
  expect(p, ")");
}

/* ---- locations ---------------------------------------------------------------------- */
static void read_opt_loc(parser *p, tl_loc *loc) {
  skip_ws_mode(p, false);
  if (!accept_kw(p, "loc")) return;
  expect(p, "(");
  int32_t file = -1;
  skip_ws(p);
  if (cur(p) == '"') {
    adv(p);
    size_t start = p->pos;
    while (cur(p) != '"') {
      if (cur(p) == -1 || cur(p) == '\n' || p->pos - start > MAX_NAME) FAIL(p, "bad file name in loc()");
      adv(p);
    }
    char *name = tl_strndup(&p->c->arena, p->s + start, p->pos - start);
    adv(p);
    expect(p, ":");
    for (int i = 0; i < p->c->files.len; i++)
      if (strcmp(p->c->files.data[i].name, name) == 0) file = i;
    if (file < 0) file = tl_ctx_add_source(p->c, name, "", 0);
  }
  int32_t line = (int32_t)read_int(p, 1, INT32_MAX, "line");
  expect(p, ":");
  int32_t col = (int32_t)read_int(p, 1, INT32_MAX, "column");
  expect(p, ")");
  *loc = (tl_loc){file, line, col};
}

/* ---- ops ----------------------------------------------------------------------------- */
static void parse_region(parser *p, tl_region *r);

static const char *const cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
static const char *const reduce_names[] = {"sum", "max", "min"};
static const char *const atomic_names[] = {"add", "max", "min", "fetch_add"};
static const char *const rand_names[] = {"uniform", "normal", "int"};
static const char *const scan_names[] = {"sum", "max"};
static const char *const arg_names[] = {"max", "min"};
static const char *const sort_names[] = {"ascending", "descending"};

static int read_enum(parser *p, const char *const *names, int n, const char *what) {
  char buf[MAX_NAME];
  tl_loc loc = (skip_ws(p), here(p));
  expect_ident(p, buf, what);
  for (int i = 0; i < n; i++)
    if (strcmp(buf, names[i]) == 0) return i;
  fail_at(p, loc, "unknown %s '%s'", what, buf);
}

/* Operands on the same line: `%a, %b` (possibly none). */
static void read_operands_line(parser *p, id_vec *out) {
  skip_ws_mode(p, false);
  if (cur(p) != '%') return;
  do {
    if (out->len >= MAX_OPERANDS) FAIL(p, "too many operands");
    tl_vec_push(&p->c->arena, out, use_value(p));
  } while (accept(p, ","));
}

static int32_t read_axis_attr(parser *p) {
  expect(p, ",");
  expect_kw(p, "axis");
  expect(p, "=");
  return (int32_t)read_int(p, -TL_MAX_RANK, TL_MAX_RANK, "axis");
}

/* `[%i, %j : 64]` appended to opnd; lengths into dims. */
static void read_view(parser *p, id_vec *opnd, int32_t *dims) {
  expect(p, "[");
  if (accept(p, "]")) return;
  int n = 0;
  do {
    if (n >= TL_MAX_RANK) FAIL(p, "more than %d indices", TL_MAX_RANK);
    tl_vec_push(&p->c->arena, opnd, use_value(p));
    if (accept(p, ":")) dims[n] = (int32_t)read_int(p, 1, TL_MAX_TILE_ELEMS, "view length");
    n++;
  } while (accept(p, ","));
  expect(p, "]");
}

/* A string attribute `"..."` (ir_print.c put_string: \\, \" and \xHH escapes), on one line, into the arena. */
static const char *read_string(parser *p) {
  skip_ws_mode(p, false);
  if (cur(p) != '"') FAIL(p, "expected a string, found %s", describe(p));
  adv(p);
  char buf[4096];
  size_t n = 0;
  while (cur(p) != '"') {
    int ch = cur(p);
    if (ch == -1 || ch == '\n') FAIL(p, "unterminated string");
    if (n + 1 >= sizeof buf) FAIL(p, "string longer than %zu bytes", sizeof buf - 1);
    adv(p);
    if (ch == '\\') {
      int e = cur(p);
      if (e == '"' || e == '\\') {
        adv(p);
        ch = e;
      } else if (e == 'x') {
        adv(p);
        int v = 0;
        for (int k = 0; k < 2; k++) {
          int h = cur(p);
          int d = is_digit(h) ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (d < 0) FAIL(p, "bad \\x escape in a string");
          v = v * 16 + d;
          adv(p);
        }
        if (v == 0) FAIL(p, "\\x00 in a string");
        ch = v;
      } else {
        FAIL(p, "bad escape in a string (\\\\, \\\" and \\xHH)");
      }
    }
    buf[n++] = (char)ch;
  }
  adv(p);
  return tl_strndup(&p->c->arena, buf, n);
}

static int32_t make_op(parser *p, tl_region *r, tl_opcode opc, id_vec *opnd, const tl_type *rt, int nres, tl_loc loc) {
  return tl_op_new(p->f, r, opc, opnd->data, opnd->len, rt, nres, loc);
}

/* Literal of `const`: read the token, interpret once the type is known. */
static void read_const_literal(parser *p, char *buf, tl_loc *loc) {
  skip_ws(p);
  *loc = here(p);
  size_t n = 0;
  while (is_ident(cur(p)) || cur(p) == '-' || cur(p) == '+' || cur(p) == '.') {
    if (n >= 63) FAIL(p, "numeric literal too long");
    buf[n++] = (char)cur(p);
    adv(p);
  }
  buf[n] = 0;
  if (n == 0) FAIL(p, "expected a number, found %s", describe(p));
}

static void set_const_value(parser *p, tl_op *o, const tl_type *t, const char *lit, tl_loc loc) {
  if (tl_dtype_is_float((tl_dtype)t->dtype)) {
    char *end = NULL;
    errno = 0;
    double v = strtod(lit, &end);
    if (end == lit || *end) fail_at(p, loc, "malformed float literal '%s'", lit);
    o->fval = v;
    o->ival = 0;
    return;
  }
  const char *q = lit;
  if (*q == '-') q++;
  if (!*q) fail_at(p, loc, "malformed integer literal '%s'", lit);
  uint64_t v = 0;
  for (; *q; q++) {
    if (!is_digit((unsigned char)*q)) fail_at(p, loc, "malformed integer literal '%s'", lit);
    unsigned d = (unsigned)(*q - '0');
    if (v > (UINT64_MAX - d) / 10) fail_at(p, loc, "integer literal out of range");
    v = v * 10 + d;
  }
  int64_t r;
  if (lit[0] == '-') {
    if (v > (uint64_t)INT64_MAX + 1) fail_at(p, loc, "integer literal out of range");
    r = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
  } else {
    if (v > (uint64_t)INT64_MAX) fail_at(p, loc, "integer literal out of range");
    r = (int64_t)v;
  }
  o->ival = r;
  o->fval = (double)r;
}

/* Two ints "X<sep>Y" (sched fields). */
static void read_int_pair(parser *p, const char *sep, int64_t lo, int64_t hi, const char *what, int *x, int *y) {
  *x = (int)read_int(p, lo, hi, what);
  expect(p, sep);
  *y = (int)read_int(p, lo, hi, what);
}

/* The optional `sched(...)` of a dot (lib/schedule.h has the grammar),
 * restored into f->sched with the "ran" flag of each group present. */
static void read_opt_sched(parser *p, int32_t op) {
  skip_ws_mode(p, false);
  if (!accept_kw(p, "sched")) return;
  expect(p, "(");
  tl_dot_sched d = {0};
  d.stages = 1;
  char key[MAX_NAME];
  while (!accept(p, ")")) {
    skip_ws(p);
    tl_loc kloc = here(p);
    expect_ident(p, key, "a sched field");
    if (!strcmp(key, "mma")) {
      expect(p, "=");
      char in[MAX_NAME];
      expect_ident(p, in, "an mma instruction");
      d.instr = !strcmp(in, "m16n8k16")   ? TL_SCHED_MMA_M16N8K16
                : !strcmp(in, "m16n8k32") ? TL_SCHED_MMA_M16N8K32
                : !strcmp(in, "m16n8k8")  ? TL_SCHED_MMA_M16N8K8
                                          : -1;
      if (!strcmp(in, "none")) d.instr = 0;
      if (!strncmp(in, "wgmma_m64n", 10)) { /* wgmma_m64n<N>k16 (16-bit) or k32 (8-bit operands) */
        char *end;
        long n = strtol(in + 10, &end, 10);
        if (end == in + 10 || (strcmp(end, "k16") && strcmp(end, "k32") && strcmp(end, "k8")) || n < 8 || n > 256 || n % 8)
          fail_at(p, kloc, "malformed wgmma instruction '%s' in sched() (wgmma_m64n<N>k16, k32 or k8)", in);
        d.instr = TL_SCHED_MMA_WGMMA;
        d.wgmma_n = (int)n;
      }
      if (d.instr < 0) fail_at(p, kloc, "unknown mma instruction '%s' in sched()", in);
      d.remapped = true;
    } else if (!strcmp(key, "warps")) {
      expect(p, "=");
      /* "4x2" lexes as 4, then the identifier x2 */
      d.warps_m = (int)read_int(p, 0, 64, "warps");
      char xw[MAX_NAME];
      expect_ident(p, xw, "'x' and the warps along N");
      char *end;
      long wn = strtol(xw + 1, &end, 10);
      if (xw[0] != 'x' || *end || end == xw + 1 || wn < 0 || wn > 64) fail_at(p, kloc, "malformed warps=MxN in sched()");
      d.warps_n = (int)wn;
      d.remapped = true;
    } else if (!strcmp(key, "swizzle")) {
      expect(p, "=");
      read_int_pair(p, ",", 0, 128, "swizzle bytes", &d.swizzle_bytes[0], &d.swizzle_bytes[1]);
      d.swizzled = true;
    } else if (!strcmp(key, "pad")) {
      expect(p, "=");
      read_int_pair(p, ",", 0, 4096, "pad bytes", &d.pad_bytes[0], &d.pad_bytes[1]);
      d.swizzled = true;
    } else if (!strcmp(key, "conflicts")) {
      expect(p, "=");
      read_int_pair(p, "/", 0, INT32_MAX, "conflicts", &d.conflicts[0][0], &d.conflicts[0][1]);
      expect(p, ",");
      read_int_pair(p, "/", 0, INT32_MAX, "conflicts", &d.conflicts[1][0], &d.conflicts[1][1]);
      d.swizzled = true;
    } else if (!strcmp(key, "stream")) {
      expect(p, "=");
      char w[MAX_NAME];
      expect_ident(p, w, "a, b, or none");
      if (!strcmp(w, "a")) {
        d.streamed[0] = true;
        if (accept(p, ",")) {
          expect_ident(p, w, "b");
          if (strcmp(w, "b")) fail_at(p, kloc, "malformed stream= in sched()");
          d.streamed[1] = true;
        }
      } else if (!strcmp(w, "b")) {
        d.streamed[1] = true;
      } else if (strcmp(w, "none")) {
        fail_at(p, kloc, "malformed stream= in sched()");
      }
      d.pipelined = true;
    } else if (!strcmp(key, "prologue")) {
      expect(p, "=");
      read_int_pair(p, ",", 0, 16, "prologue loads", &d.prologue[0], &d.prologue[1]);
      d.pipelined = true;
    } else if (!strcmp(key, "stages")) {
      expect(p, "=");
      d.stages = (int)read_int(p, 1, 64, "stages");
      d.pipelined = true;
    } else if (!strcmp(key, "lookahead") || !strcmp(key, "nolookahead")) {
      d.lookahead = key[0] == 'l';
      d.scheduled = true;
    } else {
      fail_at(p, kloc, "unknown sched field '%s'", key);
    }
  }
  tl_dot_sched *e = tl_sched_dot(p->f, op, true);
  d.op = op;
  *e = d;
}

static void parse_op(parser *p, tl_region *r) {
  tl_arena *a = &p->c->arena;
  skip_ws(p);
  tl_loc loc = here(p);
  /* results */
  TL_VEC(vname) results = {0};
  vname vn;
  if (read_vname(p, &vn)) {
    for (;;) {
      if (results.len >= MAX_OPERANDS) FAIL(p, "too many results");
      tl_vec_push(a, &results, vn);
      if (!accept(p, ",")) break;
      expect_vname(p, &vn);
    }
    expect(p, "=");
  }
  char name[MAX_NAME];
  skip_ws(p);
  tl_loc name_loc = here(p);
  expect_ident(p, name, "an operation name");
  tl_opcode opc = tl_opcode_from_name(name, strlen(name));
  if (opc == TL_NUM_OPS) fail_at(p, name_loc, "unknown operation '%s'", name);
  const tl_opinfo *info = &tl_opinfo_table[opc];

  id_vec opnd = {0};
  type_vec rtypes = {0};
  int32_t op = -1;
  switch (opc) {
  case TL_OP_const: {
    char lit[64];
    tl_loc lit_loc;
    read_const_literal(p, lit, &lit_loc);
    expect(p, ":");
    tl_type t = read_type(p);
    op = make_op(p, r, opc, &opnd, &t, 1, loc);
    set_const_value(p, tl_op_at(p->f, op), &t, lit, lit_loc);
    break;
  }
  case TL_OP_dim: {
    tl_vec_push(a, &opnd, use_value(p));
    expect(p, ",");
    int32_t axis = (int32_t)read_int(p, 0, TL_MAX_RANK - 1, "axis");
    expect(p, ":");
    tl_type t = read_type(p);
    op = make_op(p, r, opc, &opnd, &t, 1, loc);
    tl_op_at(p->f, op)->axis = axis;
    break;
  }
  case TL_OP_program_id:
  case TL_OP_num_programs: {
    int32_t axis = (int32_t)read_int(p, 0, 2, "axis");
    expect(p, ":");
    tl_type t = read_type(p);
    op = make_op(p, r, opc, &opnd, &t, 1, loc);
    tl_op_at(p->f, op)->axis = axis;
    break;
  }
  case TL_OP_cmp:
  case TL_OP_reduce: {
    int kind = opc == TL_OP_cmp ? read_enum(p, cmp_names, 6, "comparison predicate")
                                : read_enum(p, reduce_names, 3, "reduction kind");
    tl_vec_push(a, &opnd, use_value(p));
    int32_t axis = 0;
    if (opc == TL_OP_cmp) {
      expect(p, ",");
      tl_vec_push(a, &opnd, use_value(p));
    } else {
      axis = read_axis_attr(p);
    }
    expect(p, ":");
    tl_type t = read_type(p);
    op = make_op(p, r, opc, &opnd, &t, 1, loc);
    tl_op_at(p->f, op)->kind = kind;
    tl_op_at(p->f, op)->axis = axis;
    break;
  }
  case TL_OP_expand_dims:
  case TL_OP_cat: { /* x (, y for cat) axis = N : type */
    tl_vec_push(a, &opnd, use_value(p));
    if (opc == TL_OP_cat) {
      expect(p, ",");
      tl_vec_push(a, &opnd, use_value(p));
    }
    int32_t axis = read_axis_attr(p);
    expect(p, ":");
    tl_type t = read_type(p);
    op = make_op(p, r, opc, &opnd, &t, 1, loc);
    tl_op_at(p->f, op)->axis = axis;
    break;
  }
  case TL_OP_permute:
  case TL_OP_slice: {
    tl_vec_push(a, &opnd, use_value(p));
    expect(p, ",");
    expect_kw(p, opc == TL_OP_slice ? "starts" : "order");
    expect(p, "=");
    expect(p, "[");
    int32_t starts[TL_MAX_RANK] = {0};
    int n = 0;
    if (!accept(p, "]")) {
      do {
        if (n == TL_MAX_RANK) FAIL(p, "too many slice starts");
        starts[n++] = (int32_t)read_int(p, 0, TL_MAX_TILE_ELEMS, opc == TL_OP_slice ? "slice start" : "dimension");
      } while (accept(p, ","));
      expect(p, "]");
    }
    expect(p, ":");
    tl_type t = read_type(p);
    op = make_op(p, r, opc, &opnd, &t, 1, loc);
    memcpy(tl_op_at(p->f, op)->dims, starts, sizeof starts);
    break;
  }
  case TL_OP_sort:
  case TL_OP_scan:
  case TL_OP_argreduce: {
    int kind = opc == TL_OP_scan   ? read_enum(p, scan_names, 2, "scan kind")
               : opc == TL_OP_sort ? read_enum(p, sort_names, 2, "sort order")
                                   : read_enum(p, arg_names, 2, "argreduce kind");
    tl_vec_push(a, &opnd, use_value(p));
    int32_t axis = read_axis_attr(p);
    expect(p, ":");
    tl_type t = read_type(p);
    op = make_op(p, r, opc, &opnd, &t, 1, loc);
    tl_op_at(p->f, op)->kind = kind;
    tl_op_at(p->f, op)->axis = axis;
    break;
  }
  case TL_OP_rand: {
    int kind = read_enum(p, rand_names, 3, "random distribution");
    tl_vec_push(a, &opnd, use_value(p));
    expect(p, ",");
    tl_vec_push(a, &opnd, use_value(p));
    expect(p, ":");
    tl_type t = read_type(p);
    op = make_op(p, r, opc, &opnd, &t, 1, loc);
    tl_op_at(p->f, op)->kind = kind;
    break;
  }
  case TL_OP_load:
  case TL_OP_store:
  case TL_OP_atomic: {
    int32_t dims[TL_MAX_RANK] = {0};
    int kind = opc == TL_OP_atomic ? read_enum(p, atomic_names, 4, "atomic operation") : 0;
    tl_vec_push(a, &opnd, use_value(p));
    read_view(p, &opnd, dims);
    tl_type t = tl_scalar_type(TL_VOID);
    int nres = 0;
    if (opc == TL_OP_load) {
      if (accept(p, ",")) {
        expect_kw(p, "other");
        tl_vec_push(a, &opnd, use_value(p));
      }
      expect(p, ":");
      t = read_type(p);
      nres = 1;
    } else {
      expect(p, ",");
      tl_vec_push(a, &opnd, use_value(p));
      if (kind == TL_ATOMIC_FETCH_ADD) { /* the one atomic with a result: `: i32` */
        expect(p, ":");
        t = read_type(p);
        nres = 1;
      }
    }
    op = make_op(p, r, opc, &opnd, &t, nres, loc);
    memcpy(tl_op_at(p->f, op)->dims, dims, sizeof dims);
    tl_op_at(p->f, op)->kind = kind;
    break;
  }
  case TL_OP_for: {
    vname iv;
    TL_VEC(vname) carried = {0};
    expect_vname(p, &iv);
    expect(p, "=");
    tl_vec_push(a, &opnd, use_value(p));
    expect_kw(p, "to");
    tl_vec_push(a, &opnd, use_value(p));
    expect_kw(p, "step");
    tl_vec_push(a, &opnd, use_value(p));
    if (accept_kw(p, "iter")) {
      expect(p, "(");
      do {
        if (carried.len >= MAX_OPERANDS) FAIL(p, "too many carried values");
        expect_vname(p, &vn);
        tl_vec_push(a, &carried, vn);
        expect(p, "=");
        tl_vec_push(a, &opnd, use_value(p));
      } while (accept(p, ","));
      expect(p, ")");
    }
    if (accept(p, "->")) read_type_list(p, &rtypes);
    if (rtypes.len != carried.len)
      fail_at(p, loc, "'for' has %d carried values but %d result types", carried.len, rtypes.len);
    op = make_op(p, r, opc, &opnd, rtypes.data, rtypes.len, loc);
    tl_op_add_regions(p->f, op, 1);
    tl_region *body = &tl_op_at(p->f, op)->regions[0];
    bind(p, &iv, tl_region_add_arg(p->f, body, op, tl_scalar_type(TL_I32)));
    for (int i = 0; i < carried.len; i++) bind(p, &carried.data[i], tl_region_add_arg(p->f, body, op, rtypes.data[i]));
    expect(p, "{");
    parse_region(p, body);
    expect(p, "}");
    break;
  }
  case TL_OP_if: {
    tl_vec_push(a, &opnd, use_value(p));
    if (accept(p, "->")) read_type_list(p, &rtypes);
    op = make_op(p, r, opc, &opnd, rtypes.data, rtypes.len, loc);
    tl_op_add_regions(p->f, op, 2);
    expect(p, "{");
    parse_region(p, &tl_op_at(p->f, op)->regions[0]);
    expect(p, "}");
    expect_kw(p, "else");
    expect(p, "{");
    parse_region(p, &tl_op_at(p->f, op)->regions[1]);
    expect(p, "}");
    break;
  }
  case TL_OP_require: { /* require %c, "text"[, "message"] */
    tl_vec_push(a, &opnd, use_value(p));
    expect(p, ",");
    const char *text = read_string(p);
    const char *msg = NULL;
    skip_ws_mode(p, false);
    if (cur(p) == ',') {
      adv(p);
      msg = read_string(p);
    }
    op = make_op(p, r, opc, &opnd, NULL, 0, loc);
    tl_op_at(p->f, op)->req_text = text;
    tl_op_at(p->f, op)->req_msg = msg;
    break;
  }
  default: {
    bool tf32 = opc == TL_OP_dot && accept_kw(p, "tf32"); /* dot tf32 %a, %b, %acc */
    read_operands_line(p, &opnd);
    int nres = info->nres < 0 ? 0 : info->nres;
    tl_type t = tl_scalar_type(TL_VOID);
    if (nres == 1) {
      expect(p, ":");
      t = read_type(p);
    } else if (nres > 1) {
      fail_at(p, name_loc, "operation '%s' is not supported by the parser", name);
    }
    op = make_op(p, r, opc, &opnd, &t, nres, loc);
    if (tf32) tl_op_at(p->f, op)->kind = TL_DOT_TF32;
    break;
  }
  }
  tl_op *o = tl_op_at(p->f, op);
  if (o->nres != results.len)
    fail_at(p, loc, "'%s' has %d result%s but %d name%s given", name, (int)o->nres, o->nres == 1 ? "" : "s",
            results.len, results.len == 1 ? "" : "s");
  if (opc == TL_OP_dot) read_opt_sched(p, op);
  read_opt_loc(p, &tl_op_at(p->f, op)->loc);
  for (int i = 0; i < results.len; i++) bind(p, &results.data[i], tl_op_result(p->f, op, i));
}

static void parse_region(parser *p, tl_region *r) {
  if (++p->depth > MAX_DEPTH) FAIL(p, "regions nested deeper than %d", MAX_DEPTH);
  for (;;) {
    skip_ws(p);
    if (cur(p) == '}' || cur(p) == -1) break;
    parse_op(p, r);
  }
  p->depth--;
}

/* ---- kernels ------------------------------------------------------------------------- */
static const char *const pipeline_names[] = {"auto", "simple", "multistage", "cutlass"};

static void parse_params(parser *p) {
  tl_func *f = p->f;
  expect(p, "(");
  if (accept(p, ")")) return;
  do {
    if (f->params.len >= 1024) FAIL(p, "too many parameters");
    vname n;
    expect_vname(p, &n);
    for (const char *q = n.text; *q; q++)
      if (*q == '.') fail_at(p, n.loc, "a parameter name cannot contain '.'");
    if (is_digit((unsigned char)n.text[0])) fail_at(p, n.loc, "a parameter name must start with a letter");
    expect(p, ":");
    tl_param pa;
    memset(&pa, 0, sizeof pa);
    pa.name = tl_strdup(&p->c->arena, n.text);
    pa.loc = n.loc;
    if (accept_kw(p, "tensor")) {
      pa.is_tensor = true;
      expect(p, "<");
      pa.dtype = read_dtype(p);
      expect(p, ">");
      expect(p, "[");
      if (!accept(p, "]")) {
        do {
          if (pa.rank >= TL_MAX_RANK) FAIL(p, "tensor rank exceeds %d", TL_MAX_RANK);
          tl_dimspec *d = &pa.dims[pa.rank];
          char sym[MAX_NAME];
          skip_ws(p);
          if (read_ident(p, sym)) {
            d->sym = -1;
            for (int i = 0; i < f->syms.len; i++)
              if (strcmp(f->syms.data[i].name, sym) == 0) d->sym = i;
            if (d->sym < 0) {
              tl_sym s = {tl_strdup(&p->c->arena, sym), f->params.len, pa.rank};
              d->sym = f->syms.len;
              tl_vec_push(&p->c->arena, &f->syms, s);
            }
          } else {
            d->is_const = true;
            d->value = read_int(p, 0, INT64_MAX, "dimension");
          }
          pa.rank++;
        } while (accept(p, ","));
        expect(p, "]");
      }
      pa.zeroed = accept_kw(p, "zeroed"); /* @zeroed(NAME) */
    } else {
      pa.dtype = read_dtype(p);
    }
    read_opt_loc(p, &pa.loc);
    int32_t idx = tl_func_add_param(f, &pa);
    sym_define(p, n.text, f->params.data[idx].value, n.loc);
  } while (accept(p, ","));
  expect(p, ")");
}

static void parse_tiles(parser *p) {
  tl_func *f = p->f;
  expect(p, "(");
  if (accept(p, ")")) return;
  do {
    if (f->consts.len >= 1024) FAIL(p, "too many tile constants");
    tl_tileconst tc;
    memset(&tc, 0, sizeof tc);
    char name[MAX_NAME];
    skip_ws(p);
    tc.loc = here(p);
    expect_ident(p, name, "a tile constant name");
    for (int i = 0; i < f->consts.len; i++)
      if (strcmp(f->consts.data[i].name, name) == 0) fail_at(p, tc.loc, "tile constant '%s' defined twice", name);
    tc.name = tl_strdup(&p->c->arena, name);
    expect(p, "=");
    tc.value = read_int(p, INT64_MIN, INT64_MAX, "tile constant value");
    if (accept_kw(p, "overridden")) tc.overridden = true;
    read_opt_loc(p, &tc.loc);
    tl_vec_push(&p->c->arena, &f->consts, tc);
  } while (accept(p, ","));
  expect(p, ")");
}

static void parse_attrs(parser *p) {
  tl_func *f = p->f;
  expect(p, "(");
  if (accept(p, ")")) return;
  do {
    char key[MAX_NAME];
    skip_ws(p);
    tl_loc loc = here(p);
    expect_ident(p, key, "an attribute name");
    expect(p, "=");
    if (strcmp(key, "pipeline") == 0) {
      char val[MAX_NAME];
      skip_ws(p);
      if (is_digit(cur(p))) {
        f->pipeline = (int)read_int(p, 0, 1000, "pipeline");
      } else {
        tl_loc vloc = here(p);
        expect_ident(p, val, "a pipeline name");
        int k = -1;
        for (int i = 0; i < 4; i++)
          if (strcmp(val, pipeline_names[i]) == 0) k = i;
        if (k < 0) fail_at(p, vloc, "unknown pipeline '%s' (auto, simple, multistage, cutlass)", val);
        f->pipeline = k;
      }
    } else if (strcmp(key, "warps") == 0) {
      /* the language's @warps (1, 2, 4, 8, 16), or 0: not decided yet */
      tl_loc wloc = (skip_ws(p), here(p));
      f->warps = (int)read_int(p, 0, 16, "warps");
      if (f->warps & (f->warps - 1)) fail_at(p, wloc, "warps = %d is not a power of two", f->warps);
    } else if (strcmp(key, "stages") == 0) {
      f->stages = (int)read_int(p, 0, 8, "stages");
    } else if (strcmp(key, "maxnreg") == 0) {
      f->maxnreg = (int)read_int(p, 0, 255, "maxnreg");
    } else if (strcmp(key, "access_split") == 0) {
      f->access_split = read_int(p, 0, 1, "access_split") != 0;
    } else if (strcmp(key, "row_ahead") == 0) {
      f->row_ahead = (int)read_int(p, 0, 8, "row_ahead");
    } else {
      fail_at(p, loc, "unknown kernel attribute '%s'", key);
    }
  } while (accept(p, ","));
  expect(p, ")");
}

/* `layouts { ... }` printed by layout assignment: skipped, braces balanced. */
static void skip_layouts(parser *p) {
  expect(p, "{");
  int depth = 1;
  while (depth > 0) {
    int ch = cur(p);
    if (ch == -1) FAIL(p, "unterminated 'layouts' block");
    if (ch == '{') depth++;
    if (ch == '}') depth--;
    adv(p);
  }
}

static void parse_kernel(parser *p) {
  skip_ws(p);
  tl_loc loc = here(p);
  expect_kw(p, "kernel");
  expect(p, "@");
  char name[MAX_NAME];
  if (cur(p) != '_' && !is_alpha(cur(p))) FAIL(p, "expected a kernel name after '@'");
  expect_ident(p, name, "a kernel name");
  p->f = tl_func_new(p->m, name, loc);
  p->tab = NULL;
  p->tab_cap = p->tab_len = 0;
  parse_params(p);
  read_opt_loc(p, &p->f->loc);
  if (accept_kw(p, "tiles")) parse_tiles(p);
  if (accept_kw(p, "attrs")) parse_attrs(p);
  expect(p, "{");
  expect_kw(p, "grid");
  expect(p, "{");
  parse_region(p, &p->f->grid);
  expect(p, "}");
  expect_kw(p, "body");
  expect(p, "{");
  parse_region(p, &p->f->body);
  expect(p, "}");
  if (accept_kw(p, "layouts")) skip_layouts(p);
  expect(p, "}");
}

tl_module *tl_parse_ir(tl_ctx *c, int32_t file) {
  if (file < 0 || file >= c->files.len) return NULL;
  parser p;
  memset(&p, 0, sizeof p);
  p.c = c;
  p.file = file;
  p.s = c->files.data[file].text;
  p.len = c->files.data[file].len;
  p.line = 1;
  p.col = 1;
  p.m = tl_module_new(c);
  if (setjmp(p.fail)) return NULL;
  for (;;) {
    skip_ws(&p);
    if (cur(&p) == -1) break;
    parse_kernel(&p);
  }
  return p.m;
}
