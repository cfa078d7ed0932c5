/* tilegen.c: random valid .tile kernels from a seed (see tilegen.h).
 *
 * How a kernel is built.  Three modes fix the tiles the program works on:
 *   MODE_2D   grid(cdiv(M, BM), cdiv(N, BN)); m0 = pid0 * BM, n0 = pid1 * BN;
 *             shapes: scalar, [BN] (a row), [BM] (a column), [BM, BN],
 *             [BM, 1], [1, BN];
 *   MODE_ROW  grid(M, cdiv(N, BN)); r = pid0, n0 = pid1 * BN (softmax-like);
 *             shapes: scalar, [BN];
 *   MODE_1D   grid(cdiv(N, BN)); n0 = pid0 * BN; shapes: scalar, [BN].
 * Shapes are concrete (BM, BN are chosen powers of two 1..64), so when two
 * roles coincide (BM == BN, BM == 1) numpy broadcasting is decided on the
 * real sizes, as the front-end does.
 *
 * Statements bind fresh names (v0, v1, ...), re-bind names with `+=`, or
 * open a `for` (carried values updated by a template whose bound is known
 * for the trip count) or an `if` (constant or not; branches re-bind names of
 * the enclosing block with an unchanged type).  A name may only be re-bound
 * in the block that defined it or by the loop / if that opens right below
 * it, so the bound of every carried value can be computed.  At the end every
 * value bound at the top level is stored into a per-dtype output tensor
 * O*[slot, M, N] at the position of the program's own block.
 *
 * Expressions are built top-down for a wanted (shape, dtype): a production
 * picks operand shapes that broadcast to the wanted shape; every expression
 * carries a bound on |value|; productions that could overflow, divide by
 * zero or leave the domain of a math function are written in guarded forms
 * (tilegen.h). */
#include "tilegen.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers (splitmix64: deterministic on every platform) -------- */
typedef struct tg_rng { uint64_t s; } tg_rng;

static uint64_t rng_next(tg_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* ---- strings ------------------------------------------------------------- */
typedef struct tg_buf { char *p; size_t len, cap; bool oom; } tg_buf;

static void buf_vprintf(tg_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0 || b->oom) return;
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    while (nc < b->len + (size_t)n + 1) nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np) { b->oom = true; return; }
    b->p = np;
    b->cap = nc;
  }
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

static void buf_printf(tg_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

/* A malloc'd formatted string (NULL only when out of memory). */
static char *xfmt(const char *fmt, ...) {
  tg_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&b, fmt, ap);
  va_end(ap);
  if (b.oom) { free(b.p); return NULL; }
  if (!b.p) return calloc(1, 1);
  return b.p;
}

/* ---- dtypes and shapes ----------------------------------------------------- */
enum { D_F32, D_BF16, D_I32, D_I1, D_COUNT };
static const char *const dname[D_COUNT] = {"f32", "bf16", "i32", "i1"};
static bool d_float(int d) { return d == D_F32 || d == D_BF16; }
static bool d_int(int d) { return d == D_I32; }

typedef struct shp { int rank; int d[2]; } shp;
static const shp SCALAR = {0, {0, 0}};

static bool shp_eq(shp a, shp b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; i++)
    if (a.d[i] != b.d[i]) return false;
  return true;
}

/* numpy broadcasting: align on the right, equal dims or one of them 1. */
static bool bcast(shp a, shp b, shp *out) {
  shp r;
  r.rank = a.rank > b.rank ? a.rank : b.rank;
  r.d[0] = r.d[1] = 0;
  for (int i = 0; i < r.rank; i++) {
    int ia = a.rank - r.rank + i, ib = b.rank - r.rank + i;
    int da = ia >= 0 ? a.d[ia] : 1, db = ib >= 0 ? b.d[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
    r.d[i] = da == 1 ? db : da;
  }
  *out = r;
  return true;
}

static bool bcast_to(shp a, shp b, shp want) {
  shp o;
  return bcast(a, b, &o) && shp_eq(o, want);
}

/* Roles of shapes: where they load from and store to. */
enum { ROLE_S, ROLE_ROW, ROLE_COL, ROLE_TILE, ROLE_COLX, ROLE_ROWX, ROLE_COUNT };
enum { MODE_2D, MODE_ROW, MODE_1D };

/* ---- limits of magnitudes --------------------------------------------------- */
#define FLIM 1.0e4          /* floats are brought back below this */
#define ILIM 1048576.0      /* ints (2^20) */
#define IMUL 32767.0        /* int operands of a multiplication */

/* ---- the generator state ------------------------------------------------------ */
typedef struct gvar {
  char name[12];
  shp sh;
  int dt;
  double b;      /* |value| <= b */
  int scope;     /* block that defined it */
  bool frozen;   /* carried by the loop being generated: not readable */
  bool store;    /* bound at the top level: stored at the end */
  bool fixed;    /* m0 / n0 / r / loop variables: never re-bound */
  bool approx;   /* may hold a transcendental result (approximate on a GPU) */
} gvar;

typedef struct ginput { int param; int rank; bool transposed; int len_role; /* 1-D: ROLE_ROW or ROLE_COL */ int dt; } ginput;

/* Loop variables usable as a view offset: `for k in range(0, N, BN)`. */
typedef struct goffset { char name[12]; int role; /* ROLE_ROW: a column offset; ROLE_COL: a row offset */ } goffset;

#define MAX_VARS 512
typedef struct gen {
  tg_rng rng;
  const tg_options *opt;
  tg_kernel *k;
  int mode;
  int BM, BN;
  int64_t M, N; /* suggested sizes */
  int flag;     /* the tile constant FLAG */
  shp role_shape[ROLE_COUNT];
  bool role_ok[ROLE_COUNT];
  shp shapes[ROLE_COUNT]; /* distinct shapes of the available roles (incl. scalar) */
  int nshapes;
  gvar vars[MAX_VARS];
  int nvars;
  int scope, next_scope;
  int depth;    /* nesting of for / if */
  int exact;    /* > 0: building an operand of a discontinuous op (exact_begin) */
  int next_var, next_loop;
  ginput inputs[3];
  int ninputs;
  goffset offs[8];
  int noffs;
  double n_value, s_value;
  int nslot[3]; /* output slots used, per output dtype (f32, bf16, i32) */
  tg_buf body;
  int indent;
  bool oom;
  size_t choices_used; /* bytes of opt->choices consumed */
  struct gguard {       /* approx_compare statements, by variable name */
    tg_guard_kind kind;
    char fn[8], op[4];
    char r[12], a[12], t[12], x[12], y[12]; /* "" for none */
    double t_value;
  } guards[TG_MAX_GUARDS];
  int nguards;
} gen;

/* A decision in [0, n): from the next byte(s) of opt->choices while there are
 * any, else from the seed's generator. */
static int rnd(gen *g, int n) {
  if (n <= 1) return 0;
  if (g->choices_used < g->opt->nchoices) {
    uint32_t v = g->opt->choices[g->choices_used++];
    if (n > 256 && g->choices_used < g->opt->nchoices) v = v << 8 | g->opt->choices[g->choices_used++];
    return (int)(v % (uint32_t)n);
  }
  return (int)(rng_next(&g->rng) % (uint64_t)n);
}
static bool chance(gen *g, int pct) { return rnd(g, 100) < pct; }

/* ---- expressions ---------------------------------------------------------------- */
typedef struct ex {
  char *s;
  shp sh;
  int dt;
  double b;
  bool lit; /* an untyped literal: adopts the other operand's type */
} ex;

static ex mk(gen *g, char *s, shp sh, int dt, double b) {
  if (!s) g->oom = true;
  ex e = {s ? s : calloc(1, 1), sh, dt, b, false};
  if (!e.s) g->oom = true;
  return e;
}

static bool is_ident(const char *s) {
  if (!s[0]) return false;
  for (const char *p = s; *p; p++)
    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
      return false;
  return true;
}

static const char *dim_name(gen *g, int d) {
  if (d == g->BM && g->mode == MODE_2D) return "BM";
  if (d == g->BN) return "BN";
  return NULL;
}

/* "BM, 1" for a tile's dims. */
static char *dims_text(gen *g, shp s) {
  char part[2][16];
  for (int i = 0; i < s.rank; i++) {
    const char *nm = dim_name(g, s.d[i]);
    if (nm && chance(g, 80)) snprintf(part[i], sizeof part[i], "%s", nm);
    else snprintf(part[i], sizeof part[i], "%d", s.d[i]);
  }
  return s.rank == 1 ? xfmt("%s", part[0]) : xfmt("%s, %s", part[0], part[1]);
}

static ex lit(gen *g, int dt, bool nonzero) {
  static const char *const flits[] = {"0.5", "1.5", "2.0", "0.25", "3.0", "0.75", "1.0", "1.25", "0.1", "0.0", "4.0"};
  static const double fvals[] = {0.5, 1.5, 2.0, 0.25, 3.0, 0.75, 1.0, 1.25, 0.1, 0.0, 4.0};
  static const char *const ilits[] = {"1", "2", "3", "7", "5", "0", "BN", "0x10"};
  ex e;
  if (d_float(dt)) {
    int n = (int)(sizeof flits / sizeof flits[0]) - (nonzero ? 2 : 0); /* 0.0 and 4.0 last */
    int i = rnd(g, n);
    if (nonzero && i == 9) i = 0;
    e = mk(g, xfmt("%s", flits[i]), SCALAR, dt, fvals[i]);
  } else {
    int n = (int)(sizeof ilits / sizeof ilits[0]);
    int i = rnd(g, n);
    if (nonzero && i == 5) i = 0;
    double v = i == 6 ? g->BN : i == 7 ? 16 : atof(ilits[i]);
    e = mk(g, xfmt("%s", ilits[i]), SCALAR, dt, v);
  }
  e.lit = true;
  return e;
}

static void exfree(ex *e) { free(e->s); e->s = NULL; }

/* Bring |e| below lim with a form that keeps the value finite and exact to
 * reproduce: tanh, an exact power-of-two scale, a clamp, or `% m` for ints. */
static ex clamp_to(gen *g, ex e, double lim) {
  if (e.lit || e.dt == D_I1 || e.b <= lim) return e;
  ex r;
  if (d_int(e.dt)) {
    int64_t m = (int64_t)lim;
    if (m > 1000) m = 1000;
    if (m < 2) m = 2;
    r = mk(g, xfmt("(%s %% %lld)", e.s, (long long)m), e.sh, e.dt, (double)(m - 1));
  } else {
    int how = rnd(g, g->opt->no_transcendental || g->exact ? 2 : 3);
    if (how == 0) {
      int k = 0;
      while (e.b / ldexp(1.0, k) > lim) k++;
      r = mk(g, xfmt("(%s * %.17g)", e.s, ldexp(1.0, -k)), e.sh, e.dt, e.b / ldexp(1.0, k));
    } else if (how == 1) {
      double c = lim >= 100 ? 100 : 1;
      r = mk(g, xfmt("min(max(%s, -%.1f), %.1f)", e.s, c, c), e.sh, e.dt, c);
    } else {
      r = mk(g, xfmt("tanh(%s)", e.s), e.sh, e.dt, 1.0);
    }
  }
  exfree(&e);
  return r;
}

static ex clampx(gen *g, ex e) { return clamp_to(g, e, d_int(e.dt) ? ILIM : FLIM); }

static double grow(int dt, double b) { return dt == D_BF16 ? b * 1.01 + 1e-3 : b; }

/* ---- variables ------------------------------------------------------------------- */
static int find_var(gen *g, shp sh, int dt) {
  int cand[MAX_VARS], n = 0;
  for (int i = 0; i < g->nvars; i++)
    if (!g->vars[i].frozen && g->vars[i].dt == dt && shp_eq(g->vars[i].sh, sh) && !(g->exact && g->vars[i].approx))
      cand[n++] = i;
  return n ? cand[rnd(g, n)] : -1;
}

/* Does expression text s read a transcendental result: a call of one of
 * those functions, or a variable marked approx?  (Never with
 * no_transcendental, so those kernels do not depend on this.) */
static bool ex_approx(gen *g, const char *s) {
  static const char *const fns[] = {"exp", "exp2", "log", "log2", "rsqrt", "sin", "cos", "tanh", "sigmoid"};
  if (g->opt->no_transcendental) return false;
  for (const char *p = s; *p;) {
    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) { p++; continue; }
    const char *q = p;
    while (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')) q++;
    size_t len = (size_t)(q - p);
    if (*q == '(')
      for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strlen(fns[i]) == len && !strncmp(fns[i], p, len)) return true;
    for (int i = 0; i < g->nvars; i++)
      if (g->vars[i].approx && strlen(g->vars[i].name) == len && !strncmp(g->vars[i].name, p, len)) return true;
    p = q;
  }
  return false;
}

/* Operands of discontinuous ops (comparisons, float -> int casts, floor,
 * ceil, float %) are built exact: no transcendental call, no approx
 * variable.  On the GPU exp2/log2/sin/... are .approx instructions; a result
 * off by an ulp that crosses a discontinuity changes the output by a whole
 * step, which no tolerance can honestly cover (docs/testing.md). */
static void exact_begin(gen *g) { g->exact++; }
static void exact_end(gen *g) { g->exact--; }

static int add_var(gen *g, const char *name, shp sh, int dt, double b, bool fixed) {
  if (g->nvars == MAX_VARS) { g->oom = true; return 0; }
  gvar *v = &g->vars[g->nvars];
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", name);
  v->sh = sh;
  v->dt = dt;
  v->b = b;
  v->scope = g->scope;
  v->store = !fixed && g->scope == 0;
  v->fixed = fixed;
  return g->nvars++;
}

/* Pick operand shapes (a, b) from the shape set that broadcast to want. */
static void pick_pair(gen *g, shp want, shp *a, shp *b) {
  shp ca[64], cb[64];
  int n = 0;
  for (int i = 0; i < g->nshapes; i++)
    for (int j = 0; j < g->nshapes; j++)
      if (bcast_to(g->shapes[i], g->shapes[j], want) && n < 64) {
        ca[n] = g->shapes[i];
        cb[n] = g->shapes[j];
        n++;
      }
  if (n == 0) { *a = want; *b = want; return; }
  /* favour the plain (want, want) and (want, scalar) pairs a little less than
   * the mixed ones, which test broadcasting */
  int i = rnd(g, n);
  *a = ca[i];
  *b = cb[i];
}

static ex gen_expr(gen *g, shp sh, int dt, int depth);

/* ---- views ------------------------------------------------------------------------- */
/* A row / column offset expression for a range view of length len along a
 * role: program offsets, shifted by a small amount, or a loop variable. */
static char *range_start(gen *g, int role) {
  const char *base = role == ROLE_COL ? "m0" : "n0";
  for (int i = g->noffs - 1; i >= 0; i--)
    if (g->offs[i].role == role && chance(g, 50)) { base = g->offs[i].name; break; }
  int sh = rnd(g, 10);
  if (sh < 6) return xfmt("%s", base);
  if (sh < 8) return xfmt("%s + %d", base, 1 + rnd(g, 3));
  return xfmt("%s - 1", base);
}

/* An index for a dropped dimension: inside the program's block mostly. */
static char *index_expr(gen *g, int role) {
  if (g->mode == MODE_ROW) {
    int c = rnd(g, 4);
    if (c == 0) return xfmt("M - 1 - r");
    if (c == 1) return xfmt("r + %d", rnd(g, 2));
    return xfmt("r");
  }
  const char *base = role == ROLE_COL ? "m0" : "n0";
  int lim = role == ROLE_COL ? g->BM : g->BN;
  int c = rnd(g, 5);
  if (c == 0) return xfmt("%s + %d", base, rnd(g, lim));
  if (c == 1) return xfmt("%s + %d", base, lim); /* past the block: maybe out of range */
  return xfmt("%s", base);
}

static char *view_range(gen *g, int role, const char *len) {
  char *st = range_start(g, role);
  char *r = xfmt("%s : %s + %s", st, st, len);
  free(st);
  return r;
}

/* A load giving exactly shape sh (of the tensor's dtype; *dt_out). */
static char *gen_load(gen *g, shp sh, int *dt_out, double *b_out) {
  char *cand[16];
  int cdt[16], n = 0;
  for (int i = 0; i < g->ninputs && n < 14; i++) {
    ginput *in = &g->inputs[i];
    const char *X = g->k->params[in->param].name;
    for (int role = ROLE_ROW; role < ROLE_COUNT; role++) {
      if (!g->role_ok[role] || !shp_eq(g->role_shape[role], sh) || n >= 14) continue;
      char *v = NULL;
      if (in->rank == 2 && g->mode == MODE_2D) {
        char *rr = NULL, *cr = NULL;
        switch (role) {
        case ROLE_TILE:
          rr = view_range(g, ROLE_COL, "BM");
          cr = view_range(g, ROLE_ROW, "BN");
          v = in->transposed ? xfmt("trans(load(%s[%s, %s]))", X, cr, rr) : xfmt("load(%s[%s, %s])", X, rr, cr);
          break;
        case ROLE_ROW:
          if (in->transposed) break;
          rr = index_expr(g, ROLE_COL);
          cr = view_range(g, ROLE_ROW, "BN");
          v = xfmt("load(%s[%s, %s])", X, rr, cr);
          break;
        case ROLE_COL:
          if (in->transposed) break;
          rr = view_range(g, ROLE_COL, "BM");
          cr = index_expr(g, ROLE_ROW);
          v = xfmt("load(%s[%s, %s])", X, rr, cr);
          break;
        case ROLE_COLX:
          if (in->transposed) break;
          rr = view_range(g, ROLE_COL, "BM");
          cr = view_range(g, ROLE_ROW, "1");
          v = xfmt("load(%s[%s, %s])", X, rr, cr);
          break;
        case ROLE_ROWX:
          if (in->transposed) break;
          rr = view_range(g, ROLE_COL, "1");
          cr = view_range(g, ROLE_ROW, "BN");
          v = xfmt("load(%s[%s, %s])", X, rr, cr);
          break;
        default: break;
        }
        free(rr);
        free(cr);
      } else if (in->rank == 2 && g->mode == MODE_ROW && role == ROLE_ROW) {
        char *rr = index_expr(g, ROLE_COL), *cr = view_range(g, ROLE_ROW, "BN");
        v = xfmt("load(%s[%s, %s])", X, rr, cr);
        free(rr);
        free(cr);
      } else if (in->rank == 1 && in->len_role == role && (role == ROLE_ROW || role == ROLE_COL)) {
        char *r = view_range(g, role, role == ROLE_ROW ? "BN" : "BM");
        v = xfmt("load(%s[%s])", X, r);
        free(r);
      }
      if (v) {
        cand[n] = v;
        cdt[n] = in->dt;
        n++;
      }
    }
  }
  if (n == 0) return NULL;
  int pick = rnd(g, n);
  for (int i = 0; i < n; i++)
    if (i != pick) free(cand[i]);
  *dt_out = cdt[pick];
  *b_out = d_int(cdt[pick]) ? 50 : 2;
  char *v = cand[pick];
  /* load(view, other = c): replace the final ")" of the load by the option */
  if (chance(g, 20)) {
    char *lp = strstr(v, "load(");
    char *close = strrchr(v, ']');
    if (lp && close && close[1] == ')') {
      ex o = lit(g, cdt[pick], false);
      if (chance(g, 30)) { char *neg = xfmt("-%s", o.s); free(o.s); o.s = neg; }
      *close = 0;
      char *nv = xfmt("%s], other = %s)%s", v, o.s, close + 2);
      if (o.b > *b_out) *b_out = o.b;
      exfree(&o);
      free(v);
      v = nv;
    }
  }
  return v;
}

/* ---- leaves ------------------------------------------------------------------------- */
static ex scalar_leaf(gen *g, int dt) {
  int vi = find_var(g, SCALAR, dt);
  if (vi >= 0 && chance(g, 60)) return mk(g, xfmt("%s", g->vars[vi].name), SCALAR, dt, g->vars[vi].b);
  if (chance(g, 8)) {
    /* a typed constant the front-end keeps as IR (not a literal): for the
     * folding of canonicalize */
    if (dt == D_I32) return mk(g, xfmt("cast<i32>(%d.5)", rnd(g, 4)), SCALAR, dt, 4);
    if (dt == D_F32) return mk(g, xfmt("cast<f32>(BN)"), SCALAR, dt, g->BN);
    return mk(g, xfmt("cast<bf16>(%d)", 1 + rnd(g, 9)), SCALAR, dt, 10);
  }
  if (dt == D_I32) {
    int c = rnd(g, 8);
    int64_t progs = g->k->grid[0] > g->k->grid[1] ? g->k->grid[0] : g->k->grid[1];
    switch (c) {
    case 0: return mk(g, xfmt("n"), SCALAR, dt, g->n_value);
    case 1: return mk(g, xfmt("N"), SCALAR, dt, (double)g->N);
    case 2: return mk(g, xfmt("program_id(0)"), SCALAR, dt, (double)progs);
    case 3: return mk(g, xfmt("num_programs(0)"), SCALAR, dt, (double)progs);
    case 4: return mk(g, xfmt("cdiv(N, BN)"), SCALAR, dt, (double)g->N);
    case 5: if (g->mode != MODE_1D) return mk(g, xfmt("M"), SCALAR, dt, (double)g->M); break;
    default: break;
    }
    return mk(g, xfmt("n"), SCALAR, dt, g->n_value);
  }
  if (dt == D_F32) return mk(g, xfmt("s"), SCALAR, dt, fabs(g->s_value));
  /* bf16 */
  return mk(g, xfmt("cast<bf16>(s)"), SCALAR, dt, grow(D_BF16, fabs(g->s_value)));
}

static ex gen_leaf(gen *g, shp sh, int dt) {
  if (sh.rank == 0) return scalar_leaf(g, dt);
  int vi = find_var(g, sh, dt);
  int c = rnd(g, 10);
  if (vi >= 0 && c < 5) return mk(g, xfmt("%s", g->vars[vi].name), sh, dt, g->vars[vi].b);
  if (c < 8) {
    int ldt;
    double lb;
    char *l = gen_load(g, sh, &ldt, &lb);
    if (l) {
      if (ldt == dt) return mk(g, l, sh, dt, lb);
      ex e = mk(g, xfmt("cast<%s>(%s)", dname[dt], l), sh, dt, grow(dt, lb));
      free(l);
      return e;
    }
  }
  if (vi >= 0) return mk(g, xfmt("%s", g->vars[vi].name), sh, dt, g->vars[vi].b);
  char *dims = dims_text(g, sh);
  ex e;
  if (sh.rank == 1 && chance(g, 40)) {
    e = mk(g, xfmt("iota<%s>[%s]", dname[dt], dims), sh, dt, sh.d[0]);
  } else if (chance(g, 15)) {
    e = mk(g, xfmt("zeros<%s>[%s]", dname[dt], dims), sh, dt, 0);
  } else {
    ex v = chance(g, 50) ? lit(g, dt, false) : scalar_leaf(g, dt);
    e = mk(g, xfmt("full<%s>[%s](%s)", dname[dt], dims, v.s), sh, dt, grow(dt, v.b));
    exfree(&v);
  }
  free(dims);
  return e;
}

/* ---- i1 expressions ------------------------------------------------------------------- */
static int rand_numeric(gen *g) { return rnd(g, 3); /* D_F32, D_BF16, D_I32 */ }

static ex gen_cmp(gen *g, shp sh, int depth) {
  static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
  shp A, B;
  pick_pair(g, sh, &A, &B);
  int dt = rand_numeric(g);
  exact_begin(g);
  ex a = gen_expr(g, A, dt, depth - 1);
  ex b = (B.rank == 0 && chance(g, 40)) ? lit(g, dt, false) : gen_expr(g, B, dt, depth - 1);
  exact_end(g);
  bool swap = chance(g, 30);
  ex r = mk(g, xfmt("(%s %s %s)", swap ? b.s : a.s, ops[rnd(g, 6)], swap ? a.s : b.s), sh, D_I1, 1);
  exfree(&a);
  exfree(&b);
  return r;
}

static ex gen_bool(gen *g, shp sh, int depth) {
  int vi = find_var(g, sh, D_I1);
  if (depth <= 0) {
    if (vi >= 0 && chance(g, 50)) return mk(g, xfmt("%s", g->vars[vi].name), sh, D_I1, 1);
    return gen_cmp(g, sh, 1);
  }
  int c = rnd(g, 12);
  if (c < 2 && vi >= 0) return mk(g, xfmt("%s", g->vars[vi].name), sh, D_I1, 1);
  if (c < 3) {
    ex a = gen_bool(g, sh, depth - 1);
    ex r = mk(g, xfmt("!%s", a.s), sh, D_I1, 1);
    exfree(&a);
    return r;
  }
  if (c < 5) {
    shp A, B;
    pick_pair(g, sh, &A, &B);
    ex a = gen_bool(g, A, depth - 1), b = gen_bool(g, B, depth - 1);
    ex r = mk(g, xfmt("(%s %s %s)", a.s, chance(g, 50) ? "&&" : "||", b.s), sh, D_I1, 1);
    exfree(&a);
    exfree(&b);
    return r;
  }
  if (c < 6 && sh.rank == 1 && g->mode != MODE_1D) {
    /* the mask of the elements of the block inside the tensor */
    bool row = shp_eq(sh, g->role_shape[ROLE_ROW]) && (g->mode == MODE_ROW || chance(g, 50));
    if (row || (g->mode == MODE_2D && shp_eq(sh, g->role_shape[ROLE_COL])))
      return mk(g, row ? xfmt("(iota<i32>[%d] + n0 < N)", sh.d[0]) : xfmt("(iota<i32>[%d] + m0 < M)", sh.d[0]), sh,
                D_I1, 1);
  }
  if (c < 7 && g->mode == MODE_2D && shp_eq(sh, g->role_shape[ROLE_TILE]))
    return mk(g, xfmt("((iota<i32>[BM][:, None] + m0 < M) && (iota<i32>[BN][None, :] + n0 < N))"), sh, D_I1, 1);
  if (c < 8) {
    int dt = rand_numeric(g);
    exact_begin(g);
    ex a = gen_expr(g, sh, dt, depth - 1);
    exact_end(g);
    ex r = mk(g, xfmt("cast<i1>(%s)", a.s), sh, D_I1, 1);
    exfree(&a);
    return r;
  }
  return gen_cmp(g, sh, depth);
}

/* ---- numeric productions --------------------------------------------------------------- */
/* An operand b for a binary op beside a of shape A: sometimes a literal,
 * sometimes a scalar of another type that promotes to dt. */
static ex operand(gen *g, shp B, int dt, int depth, bool allow_lit, bool nonzero) {
  if (B.rank == 0 && allow_lit && chance(g, 30)) return lit(g, dt, nonzero);
  if (B.rank == 0 && d_float(dt) && chance(g, 15)) return gen_expr(g, B, D_I32, depth);
  return gen_expr(g, B, dt, depth);
}

static ex p_binary(gen *g, shp sh, int dt, int depth) {
  static const char *const ops[] = {"+", "-", "*"};
  int op = rnd(g, 3);
  shp A, B;
  pick_pair(g, sh, &A, &B);
  ex a = clampx(g, gen_expr(g, A, dt, depth - 1));
  ex b = clampx(g, operand(g, B, dt, depth - 1, true, false));
  if (op == 2 && d_int(dt)) {
    a = clamp_to(g, a, IMUL);
    b = clamp_to(g, b, IMUL);
  }
  double bd = op == 2 ? a.b * b.b : a.b + b.b;
  bool swap = chance(g, 40);
  ex r;
  if (op == 2 && d_float(dt) && chance(g, 25)) { /* fma(a, b, c): one rounding, the same on both sides */
    ex c = clampx(g, operand(g, sh, dt, depth - 1, true, false));
    r = mk(g, xfmt("fma(%s, %s, %s)", swap ? b.s : a.s, swap ? a.s : b.s, c.s), sh, dt, grow(dt, bd + c.b));
    exfree(&c);
  } else {
    r = mk(g, xfmt("(%s %s %s)", swap ? b.s : a.s, ops[op], swap ? a.s : b.s), sh, dt, grow(dt, bd));
  }
  exfree(&a);
  exfree(&b);
  return clampx(g, r);
}

static ex p_divrem(gen *g, shp sh, int dt, int depth) {
  bool rem = chance(g, 35);
  bool ex_ops = rem && d_float(dt); /* fmod is discontinuous */
  shp A, B;
  pick_pair(g, sh, &A, &B);
  if (ex_ops) exact_begin(g);
  ex a = clampx(g, gen_expr(g, A, dt, depth - 1));
  ex r;
  if (B.rank == 0 && chance(g, 30)) {
    ex b = lit(g, dt, true);
    r = mk(g, xfmt("(%s %s %s)", a.s, rem ? "%" : "/", b.s), sh, dt,
           grow(dt, rem ? (a.b < b.b ? a.b : b.b) : a.b / (b.b < 0.1 ? 0.1 : b.b)));
    exfree(&b);
  } else {
    ex b = clampx(g, gen_expr(g, B, dt, depth - 1));
    const char *one = d_float(dt) ? "1.0" : "1";
    r = mk(g, xfmt("(%s %s (abs(%s) + %s))", a.s, rem ? "%" : "/", b.s, one), sh, dt,
           grow(dt, rem ? (a.b < b.b + 1 ? a.b : b.b + 1) : a.b));
    exfree(&b);
  }
  if (ex_ops) exact_end(g);
  exfree(&a);
  return clampx(g, r);
}

static ex p_minmax(gen *g, shp sh, int dt, int depth) {
  shp A, B;
  pick_pair(g, sh, &A, &B);
  ex a = gen_expr(g, A, dt, depth - 1);
  ex b = operand(g, B, dt, depth - 1, true, false);
  bool swap = chance(g, 40);
  ex r = mk(g, xfmt("%s(%s, %s)", chance(g, 50) ? "min" : "max", swap ? b.s : a.s, swap ? a.s : b.s), sh, dt,
            a.b > b.b ? a.b : b.b);
  exfree(&a);
  exfree(&b);
  return r;
}

static ex p_unary(gen *g, shp sh, int dt, int depth) {
  ex a = gen_expr(g, sh, dt, depth - 1);
  ex r = mk(g, chance(g, 50) ? xfmt("(-%s)", a.s) : xfmt("abs(%s)", a.s), sh, dt, a.b);
  exfree(&a);
  return r;
}

/* Transcendental functions only where an approximate result cannot cross a
 * discontinuity (g->exact == 0); floor and ceil take an exact operand. */
static ex p_math(gen *g, shp sh, int dt, int depth) {
  int k = rnd(g, 12);
  if (g->exact && k != 4 && k < 10) k = 10 + (k & 1); /* sqrt is exact (sqrt.rn) */
  if (k >= 10) exact_begin(g);
  ex a = clampx(g, gen_expr(g, sh, dt, depth - 1));
  if (k >= 10) exact_end(g);
  char *s;
  double b;
  switch (k) {
  case 0: s = xfmt("exp2(min(%s, 8.0))", a.s); b = 256; break;
  case 1: s = xfmt("exp(min(%s, 5.0))", a.s); b = 149; break;
  case 2: s = xfmt("log2(abs(%s) + 1.0)", a.s); b = log2(a.b + 1) + 1; break;
  case 3: s = xfmt("log(abs(%s) + 1.0)", a.s); b = log(a.b + 1) + 1; break;
  case 4: s = xfmt("sqrt(abs(%s))", a.s); b = sqrt(a.b) + 1; break;
  case 5: s = xfmt("rsqrt(abs(%s) + 1.0)", a.s); b = 1.01; break;
  case 6: s = xfmt("sin(%s)", a.s); b = 1.01; break;
  case 7: s = xfmt("cos(%s)", a.s); b = 1.01; break;
  case 8: s = xfmt("tanh(%s)", a.s); b = 1.01; break;
  case 9: s = xfmt("sigmoid(%s)", a.s); b = 1.01; break;
  case 10: s = xfmt("floor(%s)", a.s); b = a.b + 1; break;
  default: s = xfmt("ceil(%s)", a.s); b = a.b + 1; break;
  }
  exfree(&a);
  return mk(g, s, sh, dt, grow(dt, b));
}

static ex p_cast(gen *g, shp sh, int dt, int depth) {
  int from;
  do from = rnd(g, D_COUNT); while (from == dt);
  bool ex_ops = d_int(dt) && d_float(from); /* truncation is discontinuous */
  if (ex_ops) exact_begin(g);
  ex a = gen_expr(g, sh, from, depth - 1);
  if (ex_ops) exact_end(g);
  double b = from == D_I1 ? 1 : a.b;
  if (d_int(dt) && d_float(from)) b = floor(b);
  ex r = mk(g, xfmt("cast<%s>(%s)", dname[dt], a.s), sh, dt, grow(dt, b));
  exfree(&a);
  return r;
}

static ex p_where(gen *g, shp sh, int dt, int depth) {
  shp A, B;
  pick_pair(g, sh, &A, &B);
  shp opts[4] = {SCALAR, A, B, sh}, C;
  do C = opts[rnd(g, 4)]; while (!bcast_to(C, sh, sh));
  ex c = gen_bool(g, C, depth - 1);
  ex a = gen_expr(g, A, dt, depth - 1);
  ex b = operand(g, B, dt, depth - 1, true, false);
  bool swap = chance(g, 30);
  ex r = mk(g, xfmt("where(%s, %s, %s)", c.s, swap ? b.s : a.s, swap ? a.s : b.s), sh, dt, a.b > b.b ? a.b : b.b);
  exfree(&a);
  exfree(&b);
  exfree(&c);
  return r;
}

static bool p_reduce(gen *g, shp sh, int dt, int depth, ex *out) {
  shp src[8];
  int axis[8], n = 0;
  for (int i = 0; i < g->nshapes; i++) {
    shp s = g->shapes[i];
    if (s.rank != sh.rank + 1) continue;
    for (int ax = 0; ax < s.rank && n < 8; ax++) {
      shp rest = {s.rank - 1, {0, 0}};
      for (int j = 0, k = 0; j < s.rank; j++)
        if (j != ax) rest.d[k++] = s.d[j];
      if (shp_eq(rest, sh)) { src[n] = s; axis[n] = ax; n++; }
    }
  }
  if (n == 0) return false;
  int i = rnd(g, n);
  int kind = rnd(g, 3);
  int64_t len = src[i].d[axis[i]];
  ex a = clampx(g, gen_expr(g, src[i], dt, depth - 1));
  if (kind == 0 && d_int(dt)) a = clamp_to(g, a, 1073741824.0 / (double)len);
  static const char *const names[] = {"reduce_sum", "reduce_max", "reduce_min"};
  int ax = chance(g, 25) ? axis[i] - src[i].rank : axis[i];
  double b = kind == 0 ? grow(dt, (double)len * a.b * (dt == D_BF16 ? 1.1 : 1.0)) : a.b;
  *out = mk(g, xfmt("%s(%s, %d)", names[kind], a.s, ax), sh, dt, b);
  exfree(&a);
  *out = clampx(g, *out);
  return true;
}

static bool has_shape(gen *g, shp s) {
  for (int i = 0; i < g->nshapes; i++)
    if (shp_eq(g->shapes[i], s)) return true;
  return false;
}

static bool p_expand(gen *g, shp sh, int dt, int depth, ex *out) {
  if (sh.rank != 2 || (sh.d[0] != 1 && sh.d[1] != 1)) return false;
  bool front = sh.d[0] == 1 && (sh.d[1] != 1 || chance(g, 50)); /* x[None, :] */
  shp src = {1, {front ? sh.d[1] : sh.d[0], 0}};
  if (!has_shape(g, src)) return false;
  ex a = gen_expr(g, src, dt, depth - 1);
  const char *idx = front ? "[None, :]" : "[:, None]";
  *out = mk(g, is_ident(a.s) ? xfmt("%s%s", a.s, idx) : xfmt("(%s)%s", a.s, idx), sh, dt, a.b);
  exfree(&a);
  return true;
}

static bool p_trans(gen *g, shp sh, int dt, int depth, ex *out) {
  if (sh.rank != 2) return false;
  shp src = {2, {sh.d[1], sh.d[0]}};
  if (!has_shape(g, src)) return false;
  ex a = gen_expr(g, src, dt, depth - 1);
  *out = mk(g, xfmt("trans(%s)", a.s), sh, dt, a.b);
  exfree(&a);
  return true;
}

static bool p_dot(gen *g, shp sh, int dt, int depth, ex *out) {
  if (g->opt->no_dot || dt != D_F32 || sh.rank != 2) return false;
  int ks[8], n = 0;
  for (int i = 0; i < g->nshapes; i++) {
    shp s = g->shapes[i];
    if (s.rank == 2 && s.d[0] == sh.d[0] && has_shape(g, (shp){2, {s.d[1], sh.d[1]}}) && n < 8) ks[n++] = s.d[1];
  }
  /* shapes a tensor-core instruction takes (passes/align_check.c): M % 16,
   * N % 8, K % 16 for bf16 */
  if (sh.d[0] % 16 || sh.d[1] % 8) return false;
  int w = 0;
  for (int i = 0; i < n; i++)
    if (ks[i] % 16 == 0) ks[w++] = ks[i];
  n = w;
  if (n == 0) return false;
  int K = ks[rnd(g, n)];
  /* Decision: bf16 operands only.  docs/language.md allows f32 too, but the
   * verifier rejects f32 dot operands (tests/lit/regress/dot_f32_operands.tile);
   * set TG_DOT_F32 to generate them anyway. */
  int odt = getenv("TG_DOT_F32") && chance(g, 50) ? D_F32 : D_BF16;
  ex a = clamp_to(g, gen_expr(g, (shp){2, {sh.d[0], K}}, odt, depth - 1), 100);
  ex b = clamp_to(g, gen_expr(g, (shp){2, {K, sh.d[1]}}, odt, depth - 1), 100);
  double bd = K * a.b * b.b;
  if (chance(g, 50)) {
    ex c = clampx(g, gen_expr(g, sh, D_F32, depth - 1));
    *out = mk(g, xfmt("dot(%s, %s, %s)", a.s, b.s, c.s), sh, dt, bd + c.b);
    exfree(&c);
  } else {
    *out = mk(g, xfmt("dot(%s, %s)", a.s, b.s), sh, dt, bd);
  }
  exfree(&a);
  exfree(&b);
  *out = clampx(g, *out);
  return true;
}

static ex p_ternary(gen *g, int dt, int depth) {
  ex c = gen_bool(g, SCALAR, depth - 1);
  /* Both arms of one type, neither a literal: when c folds to a constant the
   * front-end takes the chosen arm's own type (docs/language.md 8.1). */
  ex a = gen_expr(g, SCALAR, dt, depth - 1);
  ex b = gen_expr(g, SCALAR, dt, depth - 1);
  ex r = mk(g, xfmt("(%s ? %s : %s)", c.s, a.s, b.s), SCALAR, dt, a.b > b.b ? a.b : b.b);
  exfree(&a);
  exfree(&b);
  exfree(&c);
  return r;
}

static ex p_full(gen *g, shp sh, int dt, int depth) {
  int sdt = chance(g, 70) ? dt : rand_numeric(g);
  bool ex_ops = d_int(dt) && d_float(sdt); /* converted by truncation */
  if (ex_ops) exact_begin(g);
  ex v = gen_expr(g, SCALAR, sdt, depth - 1);
  if (ex_ops) exact_end(g);
  char *dims = dims_text(g, sh);
  ex r = mk(g, xfmt("full<%s>[%s](%s)", dname[dt], dims, v.s), sh, dt, grow(dt, d_int(dt) ? floor(v.b) + 1 : v.b));
  free(dims);
  exfree(&v);
  return r;
}

/* An expression of exactly shape sh and dtype dt. */
static ex gen_expr(gen *g, shp sh, int dt, int depth) {
  if (g->oom) return mk(g, xfmt("0"), sh, dt, 0);
  if (dt == D_I1) return gen_bool(g, sh, depth);
  if (depth <= 0 || chance(g, 20)) return gen_leaf(g, sh, dt);
  for (int tries = 0; tries < 8; tries++) {
    ex out;
    int c = rnd(g, 100);
    if (c < 24) return p_binary(g, sh, dt, depth);
    if (c < 31) return p_divrem(g, sh, dt, depth);
    if (c < 38) return p_minmax(g, sh, dt, depth);
    if (c < 43) return p_unary(g, sh, dt, depth);
    if (c < 53) {
      if (d_float(dt) && !g->opt->no_transcendental) return p_math(g, sh, dt, depth);
      continue;
    }
    if (c < 60) return p_cast(g, sh, dt, depth);
    if (c < 67) return p_where(g, sh, dt, depth);
    if (c < 77) { if (p_reduce(g, sh, dt, depth, &out)) return out; continue; }
    if (c < 83) { if (p_expand(g, sh, dt, depth, &out)) return out; continue; }
    if (c < 86) { if (p_trans(g, sh, dt, depth, &out)) return out; continue; }
    if (c < 91) { if (p_dot(g, sh, dt, depth, &out)) return out; continue; }
    if (c < 95) { if (sh.rank == 0) return p_ternary(g, dt, depth); continue; }
    if (sh.rank > 0) return p_full(g, sh, dt, depth);
  }
  return gen_leaf(g, sh, dt);
}

/* ---- statements ------------------------------------------------------------------------- */
static void line(gen *g, const char *fmt, ...) {
  buf_printf(&g->body, "%*s", 4 * g->indent, "");
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&g->body, fmt, ap);
  va_end(ap);
  buf_printf(&g->body, "\n");
}

static shp rand_shape(gen *g) {
  /* scalars less often: tiles are the point */
  if (g->nshapes > 1 && chance(g, 85)) return g->shapes[1 + rnd(g, g->nshapes - 1)];
  return g->shapes[rnd(g, g->nshapes)];
}

static int rand_dtype(gen *g) {
  int c = rnd(g, 10);
  return c < 4 ? D_F32 : c < 6 ? D_BF16 : c < 9 ? D_I32 : D_I1;
}

static void gen_block(gen *g, int nstmts);

static void stmt_assign(gen *g) {
  shp sh = rand_shape(g);
  int dt = rand_dtype(g);
  ex e = gen_expr(g, sh, dt, 2 + rnd(g, 3));
  char name[12];
  snprintf(name, sizeof name, "v%d", g->next_var++);
  line(g, "%s = %s;", name, e.s);
  bool ap = ex_approx(g, e.s);
  g->vars[add_var(g, name, e.sh, e.dt, e.b, false)].approx = ap;
  exfree(&e);
}

/* Vars of the current block that may be re-bound here. */
static int local_targets(gen *g, int *out, int max, bool numeric_only) {
  int n = 0;
  for (int i = 0; i < g->nvars && n < max; i++) {
    gvar *v = &g->vars[i];
    if (v->scope == g->scope && !v->fixed && !v->frozen && (!numeric_only || v->dt != D_I1)) out[n++] = i;
  }
  return n;
}

static void stmt_compound(gen *g) {
  int cand[MAX_VARS];
  int n = local_targets(g, cand, MAX_VARS, true);
  if (n == 0) { stmt_assign(g); return; }
  gvar *v = &g->vars[cand[rnd(g, n)]];
  if (v->b > (d_int(v->dt) ? ILIM : FLIM)) { stmt_assign(g); return; }
  shp B = chance(g, 50) ? v->sh : SCALAR;
  int c = rnd(g, 3);
  if (c < 2) {
    ex e = clampx(g, operand(g, B, v->dt, 2, true, false));
    line(g, "%s %s= %s;", v->name, c == 0 ? "+" : "-", e.s);
    v->approx |= ex_approx(g, e.s);
    v->b = grow(v->dt, v->b + e.b);
    exfree(&e);
  } else {
    ex e = clampx(g, gen_expr(g, B, v->dt, 2));
    line(g, "%s /= (abs(%s) + %s);", v->name, e.s, d_float(v->dt) ? "1.0" : "1");
    v->approx |= ex_approx(g, e.s);
    v->b = grow(v->dt, v->b);
    exfree(&e);
  }
}

static void pop_scope(gen *g, int scope) {
  int w = 0;
  for (int i = 0; i < g->nvars; i++)
    if (g->vars[i].scope != scope) g->vars[w++] = g->vars[i];
  g->nvars = w;
}

/* A loop: the update of a carried value is one of a few templates whose
 * bound after T trips is known. */
static void stmt_for(gen *g) {
  char iv[12];
  snprintf(iv, sizeof iv, "j%d", g->next_loop++);
  char *range;
  int64_t trips;
  double ivb;
  int off_role = -1;
  int c = rnd(g, 5);
  if (c == 0) {
    range = xfmt("range(0, N, BN)");
    trips = (g->N + g->BN - 1) / g->BN;
    ivb = (double)g->N + g->BN;
    off_role = ROLE_ROW;
  } else if (c == 1 && g->mode == MODE_2D) {
    range = xfmt("range(0, M, BM)");
    trips = (g->M + g->BM - 1) / g->BM;
    ivb = (double)g->M + g->BM;
    off_role = ROLE_COL;
  } else if (c == 2 && chance(g, 30)) {
    int hi = rnd(g, 3);
    range = xfmt("range(0, cast<i32>(%d.5))", hi); /* a constant trip count only after folding */
    trips = hi;
    ivb = hi + 1;
  } else if (c <= 2) {
    range = xfmt("range(0, n)");
    trips = (int64_t)g->n_value;
    ivb = g->n_value;
  } else {
    int lo = rnd(g, 6) - 2, len = rnd(g, 6), step = 1 + rnd(g, 3);
    range = step == 1 && chance(g, 50) ? xfmt("range(%d, %d)", lo, lo + len) : xfmt("range(%d, %d, %d)", lo, lo + len, step);
    trips = len <= 0 ? 0 : (len + step - 1) / step;
    ivb = abs(lo) + len + 1;
  }
  int cand[MAX_VARS];
  int n = local_targets(g, cand, MAX_VARS, false);
  int carried[3], nc = 0;
  int want = rnd(g, 4); /* 0 carried: a dead loop, for DCE */
  for (int i = 0; i < n && nc < want; i++) {
    int j = cand[rnd(g, n)];
    bool dup = false;
    for (int q = 0; q < nc; q++) dup |= carried[q] == j;
    if (!dup) carried[nc++] = j;
  }
  line(g, "for %s in %s {", iv, range);
  free(range);
  for (int q = 0; q < nc; q++) g->vars[carried[q]].frozen = true;
  int outer = g->scope;
  g->scope = ++g->next_scope;
  g->depth++;
  g->indent++;
  add_var(g, iv, SCALAR, D_I32, ivb, true);
  if (off_role >= 0 && g->noffs < 8) {
    snprintf(g->offs[g->noffs].name, sizeof g->offs[g->noffs].name, "%s", iv);
    g->offs[g->noffs].role = off_role;
    g->noffs++;
  }
  gen_block(g, 1 + rnd(g, 3));
  double T = (double)trips;
  for (int q = 0; q < nc; q++) {
    gvar *v = &g->vars[carried[q]];
    int lim = d_int(v->dt) ? (int)ILIM : (int)FLIM;
    if (v->dt == D_I1) {
      ex e = gen_bool(g, chance(g, 70) ? v->sh : SCALAR, 2);
      static const char *const lops[] = {"||", "&&", "!="};
      line(g, "%s = (%s %s %s);", v->name, v->name, lops[rnd(g, 3)], e.s);
      exfree(&e);
      continue;
    }
    int t = rnd(g, 5);
    shp B = t != 4 && chance(g, 30) ? SCALAR : v->sh; /* `v = e` keeps v's type */
    ex e = clampx(g, gen_expr(g, B, v->dt, 2));
    double b0 = v->b, nb;
    if (t == 0 && b0 + T * e.b <= 10.0 * lim) {
      line(g, "%s = %s + %s;", v->name, v->name, e.s);
      nb = b0 + T * e.b;
    } else if (t == 1 && d_float(v->dt)) {
      line(g, "%s = %s * 0.5 + %s;", v->name, v->name, e.s);
      nb = b0 > 2 * e.b ? b0 : 2 * e.b;
    } else if (t == 2 || !shp_eq(e.sh, v->sh)) { /* (a scalar e cannot replace a tile v) */
      line(g, "%s = %s(%s, %s);", v->name, chance(g, 50) ? "max" : "min", v->name, e.s);
      nb = b0 > e.b ? b0 : e.b;
    } else if (t == 3) {
      ex cnd = gen_bool(g, chance(g, 50) ? SCALAR : v->sh, 2);
      line(g, "%s = where(%s, %s, %s);", v->name, cnd.s, v->name, e.s);
      exfree(&cnd);
      nb = b0 > e.b ? b0 : e.b;
    } else {
      line(g, "%s = %s;", v->name, e.s);
      nb = b0 > e.b ? b0 : e.b;
    }
    v->b = grow(v->dt, nb) * (v->dt == D_BF16 ? 1.0 + 0.01 * T : 1.0);
    v->approx |= ex_approx(g, e.s);
    exfree(&e);
  }
  g->indent--;
  g->depth--;
  if (off_role >= 0) g->noffs--;
  pop_scope(g, g->scope);
  g->scope = outer;
  for (int q = 0; q < nc; q++) g->vars[carried[q]].frozen = false;
  line(g, "}");
}

static char *make_cond(gen *g) {
  switch (rnd(g, 8)) {
  case 0: return xfmt("FLAG");
  case 1: return xfmt("FLAG == 0");
  case 2: return chance(g, 50) ? xfmt("BN >= 16") : xfmt("cast<f32>(BN) > %d.5", rnd(g, 9)); /* folds in IR only */
  case 3: return xfmt("n");
  case 4: return xfmt("n - 2");
  default: {
    ex c = gen_bool(g, SCALAR, 2);
    return c.s;
  }
  }
}

/* One branch of an if: its own block, then re-binding of the targets. */
static void branch_body(gen *g, const int *tg, int nt, const double *orig, double *bmax) {
  int outer = g->scope;
  g->scope = ++g->next_scope;
  g->depth++;
  g->indent++;
  gen_block(g, rnd(g, 3));
  for (int q = 0; q < nt; q++) {
    gvar *v = &g->vars[tg[q]];
    if (chance(g, 80)) {
      ex e = clampx(g, gen_expr(g, v->sh, v->dt, 2));
      line(g, "%s = %s;", v->name, e.s);
      v->b = e.b;
      v->approx |= ex_approx(g, e.s);
      exfree(&e);
    }
    if (v->b > bmax[q]) bmax[q] = v->b;
    v->b = orig[q];
  }
  g->indent--;
  g->depth--;
  pop_scope(g, g->scope);
  g->scope = outer;
}

static void if_chain(gen *g, const int *tg, int nt, const double *orig, double *bmax, bool first) {
  char *cond = make_cond(g);
  line(g, first ? "if %s {" : "} else if %s {", cond);
  free(cond);
  branch_body(g, tg, nt, orig, bmax);
  int c = rnd(g, 10);
  if (c < 4) {
    line(g, "}");
  } else if (c < 8) {
    line(g, "} else {");
    branch_body(g, tg, nt, orig, bmax);
    line(g, "}");
  } else {
    if_chain(g, tg, nt, orig, bmax, false);
  }
}

static void stmt_if(gen *g) {
  int cand[MAX_VARS];
  int n = local_targets(g, cand, MAX_VARS, false);
  int tg[2] = {0, 0}, nt = 0;
  int want = rnd(g, 3);
  for (int i = 0; i < n && nt < want; i++) {
    int j = cand[rnd(g, n)];
    if (nt == 0 || tg[0] != j) tg[nt++] = j;
  }
  double orig[2] = {0, 0}, bmax[2] = {0, 0};
  for (int q = 0; q < nt; q++) orig[q] = bmax[q] = g->vars[tg[q]].b;
  if_chain(g, tg, nt, orig, bmax, true);
  for (int q = 0; q < nt; q++) g->vars[tg[q]].b = bmax[q];
}

static void stmt_spill(gen *g);

/* A fresh top-level variable for e, never re-bound (and, when hidden, never
 * read: a value that may flip on the GPU must not spread into others). */
static void bind_fixed(gen *g, char *name, ex e, bool hidden) {
  snprintf(name, 12, "v%d", g->next_var++);
  line(g, "%s = %s;", name, e.s);
  bool ap = ex_approx(g, e.s);
  gvar *v = &g->vars[add_var(g, name, e.sh, e.dt, e.b, false)];
  v->approx = ap || hidden;
  v->fixed = true;
  v->frozen = hidden;
  exfree(&e);
}

/* approx_compare: a = fn(x) with x exact, fed into a comparison, where,
 * floor, cast<i32> or float % (tilegen.h, tg_guard).  x is often a small
 * integer, where exp2, log2, cos, sigmoid, ... take exact values: a tie with
 * the threshold (or an integer) that the GPU's .approx result may miss. */
static void stmt_guard(gen *g) {
  static const struct { const char *fn, *fmt; double t[4]; int nt; } fns[] = {
      {"exp2", "exp2(min(%s, 8.0))", {1, 2, 0.5, 4}, 4}, {"exp", "exp(min(%s, 5.0))", {1}, 1},
      {"log2", "log2(abs(%s) + 1.0)", {0, 1, 2}, 3},      {"log", "log(abs(%s) + 1.0)", {0}, 1},
      {"rsqrt", "rsqrt(abs(%s) + 1.0)", {1, 0.5}, 2},     {"sin", "sin(%s)", {0}, 1},
      {"cos", "cos(%s)", {1}, 1},                         {"tanh", "tanh(%s)", {0}, 1},
      {"sigmoid", "sigmoid(%s)", {0.5}, 1}};
  static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
  if (g->nguards == TG_MAX_GUARDS || g->scope != 0 || g->opt->no_transcendental) {
    stmt_assign(g);
    return;
  }
  struct gguard *gd = &g->guards[g->nguards++];
  memset(gd, 0, sizeof *gd);
  shp sh = rand_shape(g);
  exact_begin(g);
  ex x;
  if (chance(g, 60)) {
    ex i = gen_expr(g, sh, D_I32, 2);
    int m = 2 + rnd(g, 4);
    x = mk(g, xfmt("cast<f32>((%s) %% %d)", i.s, m), sh, D_F32, m - 1);
    exfree(&i);
  } else {
    x = clampx(g, gen_expr(g, sh, D_F32, 2));
  }
  exact_end(g);
  int f = rnd(g, (int)(sizeof fns / sizeof fns[0]));
  double xb = x.b, ab;
  switch (f) {
  case 0: ab = 256; break;
  case 1: ab = 149; break;
  case 2: ab = log2(xb + 1) + 1; break;
  case 3: ab = log(xb + 1) + 1; break;
  default: ab = 1.01; break;
  }
  snprintf(gd->fn, sizeof gd->fn, "%s", fns[f].fn);
  bind_fixed(g, gd->a, mk(g, xfmt(fns[f].fmt, x.s), sh, D_F32, ab), false);
  exfree(&x);
  gd->kind = (tg_guard_kind)rnd(g, 5);
  if (gd->kind == TG_GUARD_CMP || gd->kind == TG_GUARD_WHERE) {
    snprintf(gd->op, sizeof gd->op, "%s", ops[rnd(g, 6)]);
    char tx[32];
    if (chance(g, 60)) {
      gd->t_value = fns[f].t[rnd(g, fns[f].nt)];
      snprintf(tx, sizeof tx, "%.2f", gd->t_value);
    } else {
      exact_begin(g);
      bind_fixed(g, gd->t, clampx(g, gen_expr(g, sh, D_F32, 2)), false);
      exact_end(g);
      snprintf(tx, sizeof tx, "%s", gd->t);
    }
    if (gd->kind == TG_GUARD_CMP) {
      bind_fixed(g, gd->r, mk(g, xfmt("(%s %s %s)", gd->a, gd->op, tx), sh, D_I1, 1), true);
    } else {
      ex xe = clampx(g, gen_expr(g, sh, D_F32, 2)), ye = clampx(g, gen_expr(g, sh, D_F32, 2));
      double b = xe.b > ye.b ? xe.b : ye.b;
      bind_fixed(g, gd->x, xe, false);
      bind_fixed(g, gd->y, ye, false);
      bind_fixed(g, gd->r, mk(g, xfmt("where(%s %s %s, %s, %s)", gd->a, gd->op, tx, gd->x, gd->y), sh, D_F32, b),
                 true);
    }
  } else if (gd->kind == TG_GUARD_FLOOR) {
    bind_fixed(g, gd->r, mk(g, xfmt("floor(%s)", gd->a), sh, D_F32, ab + 1), true);
  } else if (gd->kind == TG_GUARD_TRUNC) {
    bind_fixed(g, gd->r, mk(g, xfmt("cast<i32>(%s)", gd->a), sh, D_I32, floor(ab)), true);
  } else {
    gd->t_value = ldexp(1.0, rnd(g, 4) - 2); /* 0.25 .. 2 */
    bind_fixed(g, gd->r, mk(g, xfmt("(%s %% %.2f)", gd->a, gd->t_value), sh, D_F32, gd->t_value), true);
  }
}

static void gen_block(gen *g, int nstmts) {
  for (int i = 0; i < nstmts && !g->oom; i++) {
    if (g->opt->approx_compare && !g->opt->no_transcendental && g->scope == 0 && chance(g, 20)) {
      stmt_guard(g);
      continue;
    }
    int c = rnd(g, 100);
    if (c < 55) stmt_assign(g);
    else if (c < 67) stmt_compound(g);
    else if (c < 80 && g->depth < 2) stmt_for(g);
    else if (c < 92 && g->depth < 2) stmt_if(g);
    else if (c < 95) line(g, "static_assert(BN <= 64, \"tile too big\");");
    else if (c < 98 && g->opt->read_after_write && g->scope == 0) stmt_spill(g);
    else stmt_assign(g);
  }
}

/* ---- the kernel ---------------------------------------------------------------------------- */
static int pow2_tile(gen *g) {
  static const int w[] = {1, 2, 4, 8, 16, 32, 64};
  static const int weight[] = {1, 2, 3, 4, 4, 3, 2};
  int total = 0;
  for (int i = 0; i < 7; i++) total += weight[i];
  int r = rnd(g, total);
  for (int i = 0; i < 7; i++) {
    if (r < weight[i]) return w[i];
    r -= weight[i];
  }
  return 8;
}

/* A ragged size for tile b, with at most maxprog programs along it. */
static int64_t ragged(gen *g, int b, int maxprog) {
  static const int primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79,
                               83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173,
                               179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251};
  for (;;) {
    int64_t v;
    switch (rnd(g, 6)) {
    case 0: v = 1; break;
    case 1: v = b - 1; break;
    case 2: v = b; break;
    case 3: v = b + 1; break;
    case 4: v = 2 * (int64_t)b + 1; break;
    default: v = primes[rnd(g, (int)(sizeof primes / sizeof primes[0]))]; break;
    }
    if (v >= 1 && (v + b - 1) / b <= maxprog) return v;
  }
}

static const char *store_view(gen *g, shp sh, int *role_out) {
  for (int role = 0; role < ROLE_COUNT; role++)
    if (g->role_ok[role] && shp_eq(g->role_shape[role], sh)) {
      *role_out = role;
      if (g->mode == MODE_1D) return role == ROLE_S ? "n0 : n0 + 1" : "n0 : n0 + BN";
      if (g->mode == MODE_ROW) return role == ROLE_S ? "r, n0 : n0 + 1" : "r, n0 : n0 + BN";
      switch (role) {
      case ROLE_S: return "m0, n0 : n0 + 1";
      case ROLE_ROW: return "m0, n0 : n0 + BN";
      case ROLE_COL: return "m0 : m0 + BM, n0";
      case ROLE_TILE: return "m0 : m0 + BM, n0 : n0 + BN";
      case ROLE_COLX: return "m0 : m0 + BM, n0 : n0 + 1";
      default: return "m0 : m0 + 1, n0 : n0 + BN";
      }
    }
  return NULL;
}

static const char *const oname[3] = {"OF", "OB", "OI"};

/* Store a value into an output slot of the program's own block, load it
 * back, store another value there and load again: loads after stores see
 * them, and CSE must not merge the two loads.  Top level only. */
static void stmt_spill(gen *g) {
  int cand[MAX_VARS], n = 0;
  for (int i = 0; i < g->nvars; i++) {
    gvar *v = &g->vars[i];
    int role;
    if (v->store && !v->frozen && v->dt != D_I1 && v->sh.rank > 0 && store_view(g, v->sh, &role)) cand[n++] = i;
  }
  if (n == 0) { stmt_assign(g); return; }
  gvar a = g->vars[cand[rnd(g, n)]];
  int role;
  const char *view = store_view(g, a.sh, &role);
  int slot = g->nslot[a.dt]++;
  ex b = clampx(g, gen_expr(g, a.sh, a.dt, 2));
  line(g, "store(%s[%d, %s], %s);", oname[a.dt], slot, view, a.name);
  char n1[12], n2[12];
  snprintf(n1, sizeof n1, "v%d", g->next_var++);
  line(g, "%s = load(%s[%d, %s]);", n1, oname[a.dt], slot, view);
  line(g, "store(%s[%d, %s], %s);", oname[a.dt], slot, view, b.s);
  snprintf(n2, sizeof n2, "v%d", g->next_var++);
  line(g, "%s = load(%s[%d, %s]);", n2, oname[a.dt], slot, view);
  bool ap = ex_approx(g, b.s);
  g->vars[add_var(g, n1, a.sh, a.dt, a.b, false)].approx = a.approx;
  g->vars[add_var(g, n2, a.sh, a.dt, b.b, false)].approx = ap;
  exfree(&b);
}

static tg_dtype to_tg(int d) { return d == D_F32 ? TG_F32 : d == D_BF16 ? TG_BF16 : TG_I32; }

static tg_param *new_param(tg_kernel *k, const char *name) {
  tg_param *p = &k->params[k->nparams++];
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", name);
  return p;
}

static void tensor_dims(tg_buf *b, const tg_param *p, const char *const *syms) {
  buf_printf(b, "%s: tensor<%s>[", p->name, tg_dtype_name(p->dtype));
  for (int d = 0; d < p->rank; d++) {
    if (d) buf_printf(b, ", ");
    if (syms[d]) buf_printf(b, "%s", syms[d]);
    else buf_printf(b, "%lld", (long long)p->shape[d]);
  }
  buf_printf(b, "]");
}

bool tg_generate(uint64_t seed, const tg_options *opts, tg_kernel *k) {
  static const tg_options defaults = {0};
  gen *g = calloc(1, sizeof *g);
  if (!g) return false;
  memset(k, 0, sizeof *k);
  k->seed = seed;
  snprintf(k->name, sizeof k->name, "gen_%llu", (unsigned long long)seed);
  g->k = k;
  g->opt = opts ? opts : &defaults;
  g->rng.s = seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
  rng_next(&g->rng);

  int mc = rnd(g, 10);
  g->mode = mc < 6 ? MODE_2D : mc < 8 ? MODE_ROW : MODE_1D;
  g->BN = pow2_tile(g);
  g->BM = g->mode != MODE_2D ? 1 : chance(g, 30) ? g->BN : pow2_tile(g);
  g->flag = rnd(g, 2);
  g->n_value = rnd(g, 5);
  g->s_value = (rnd(g, 16) + 1) / 8.0 * (chance(g, 50) ? -1 : 1);
  if (g->mode == MODE_2D) {
    g->M = ragged(g, g->BM, 4);
    g->N = ragged(g, g->BN, 4);
    k->grid[0] = (g->M + g->BM - 1) / g->BM;
    k->grid[1] = (g->N + g->BN - 1) / g->BN;
  } else if (g->mode == MODE_ROW) {
    static const int rows[] = {1, 2, 3, 5, 7};
    g->M = rows[rnd(g, 5)];
    g->N = ragged(g, g->BN, 3);
    k->grid[0] = g->M;
    k->grid[1] = (g->N + g->BN - 1) / g->BN;
  } else {
    g->M = 1;
    g->N = ragged(g, g->BN, 6);
    k->grid[0] = (g->N + g->BN - 1) / g->BN;
    k->grid[1] = 1;
  }
  k->grid[2] = 1;
  k->tile_m = g->BM;
  k->tile_n = g->BN;

  /* roles and the distinct shapes */
  g->role_shape[ROLE_S] = SCALAR;
  g->role_shape[ROLE_ROW] = (shp){1, {g->BN, 0}};
  g->role_shape[ROLE_COL] = (shp){1, {g->BM, 0}};
  g->role_shape[ROLE_TILE] = (shp){2, {g->BM, g->BN}};
  g->role_shape[ROLE_COLX] = (shp){2, {g->BM, 1}};
  g->role_shape[ROLE_ROWX] = (shp){2, {1, g->BN}};
  for (int r = 0; r < ROLE_COUNT; r++) g->role_ok[r] = g->mode == MODE_2D || r == ROLE_S || r == ROLE_ROW;
  for (int r = 0; r < ROLE_COUNT; r++)
    if (g->role_ok[r] && !has_shape(g, g->role_shape[r])) g->shapes[g->nshapes++] = g->role_shape[r];

  /* inputs */
  const char *insyms[3][2];
  int nin = 1 + rnd(g, 3);
  for (int i = 0; i < nin; i++) {
    char nm[16]; /* "A" and an int: gcc cannot bound i when the fuzzer's bytes drive rnd() */
    snprintf(nm, sizeof nm, "A%d", i);
    tg_param *p = new_param(k, nm);
    ginput *in = &g->inputs[g->ninputs++];
    in->param = k->nparams - 1;
    int dc = rnd(g, 10);
    in->dt = dc < 4 ? D_F32 : dc < 7 ? D_BF16 : D_I32;
    p->is_tensor = true;
    p->dtype = to_tg(in->dt);
    int c = rnd(g, 100);
    if (g->mode == MODE_1D || (g->mode == MODE_ROW && c < 40) || (g->mode == MODE_2D && c < 20)) {
      in->rank = 1;
      in->len_role = ROLE_ROW;
      p->rank = 1;
      p->shape[0] = g->N;
      insyms[i][0] = "N";
    } else if (g->mode == MODE_2D && c < 35) {
      in->rank = 1;
      in->len_role = ROLE_COL;
      p->rank = 1;
      p->shape[0] = g->M;
      insyms[i][0] = "M";
    } else {
      in->rank = 2;
      in->transposed = g->mode == MODE_2D && c >= 85;
      p->rank = 2;
      p->shape[0] = in->transposed ? g->N : g->M;
      p->shape[1] = in->transposed ? g->M : g->N;
      insyms[i][0] = in->transposed ? "N" : "M";
      insyms[i][1] = in->transposed ? "M" : "N";
    }
  }

  /* the program's offsets */
  g->indent = 1;
  if (g->mode == MODE_2D) {
    line(g, chance(g, 50) ? "m0 = program_id(0) * BM;" : "m0 = BM * program_id(0);");
    line(g, "n0 = program_id(1) * BN;");
    add_var(g, "m0", SCALAR, D_I32, (double)(g->M + g->BM), true);
    add_var(g, "n0", SCALAR, D_I32, (double)(g->N + g->BN), true);
  } else if (g->mode == MODE_ROW) {
    line(g, "r = program_id(0);");
    line(g, "n0 = program_id(1) * BN;");
    add_var(g, "r", SCALAR, D_I32, (double)g->M, true);
    add_var(g, "n0", SCALAR, D_I32, (double)(g->N + g->BN), true);
  } else {
    line(g, "n0 = program_id(0) * BN;");
    add_var(g, "n0", SCALAR, D_I32, (double)(g->N + g->BN), true);
  }
  for (int q = 0; q < TG_MAX_GUARDS; q++) {
    tg_guard *kg = &k->guards[q];
    kg->r = kg->a = kg->t = kg->x = kg->y = (tg_slot){-1, 0};
  }
  int maxst = g->opt->max_stmts > 0 ? g->opt->max_stmts : 10;
  gen_block(g, 2 + rnd(g, maxst - 1));
  bool any = false;
  for (int i = 0; i < g->nvars; i++) any |= g->vars[i].store;
  if (!any) stmt_assign(g);

  /* stores: every value bound at the top level, one slot each */
  int *nslot = g->nslot;
  for (int i = 0; i < g->nvars; i++) {
    gvar *v = &g->vars[i];
    if (!v->store) continue;
    int od = v->dt == D_I1 ? D_I32 : v->dt;
    int role;
    const char *view = store_view(g, v->sh, &role);
    if (!view) continue;
    if (v->dt == D_I1) line(g, "store(%s[%d, %s], cast<i32>(%s));", oname[od], nslot[od], view, v->name);
    else line(g, "store(%s[%d, %s], %s);", oname[od], nslot[od], view, v->name);
    for (int q = 0; q < g->nguards; q++) { /* the guards' slots */
      struct gguard *gd = &g->guards[q];
      const char *names[5] = {gd->r, gd->a, gd->t, gd->x, gd->y};
      tg_slot *slots[5] = {&k->guards[q].r, &k->guards[q].a, &k->guards[q].t, &k->guards[q].x, &k->guards[q].y};
      for (int w = 0; w < 5; w++)
        if (names[w][0] && !strcmp(names[w], v->name)) *slots[w] = (tg_slot){od, nslot[od]};
    }
    nslot[od]++;
  }
  k->nguards = g->nguards;
  for (int q = 0; q < g->nguards; q++) {
    tg_guard *kg = &k->guards[q];
    kg->kind = g->guards[q].kind;
    snprintf(kg->fn, sizeof kg->fn, "%s", g->guards[q].fn);
    snprintf(kg->op, sizeof kg->op, "%s", g->guards[q].op);
    kg->t_value = g->guards[q].t_value;
  }
  const char *outsyms[3] = {NULL, g->mode == MODE_1D ? "N" : "M", "N"};
  for (int d = 0; d < 3; d++) {
    if (!nslot[d]) continue;
    tg_param *p = new_param(k, oname[d]);
    p->is_tensor = p->is_output = true;
    p->dtype = to_tg(d);
    p->rank = g->mode == MODE_1D ? 2 : 3;
    p->shape[0] = nslot[d];
    p->shape[1] = g->mode == MODE_1D ? g->N : g->M;
    p->shape[2] = g->N;
  }
  tg_param *ps = new_param(k, "s");
  ps->dtype = TG_F32;
  ps->fval = g->s_value;
  tg_param *pn = new_param(k, "n");
  pn->dtype = TG_I32;
  pn->ival = (int64_t)g->n_value;

  k->nsyms = 0;
  if (g->mode != MODE_1D) {
    snprintf(k->syms[k->nsyms].name, sizeof k->syms[0].name, "M");
    k->syms[k->nsyms++].value = g->M;
  }
  snprintf(k->syms[k->nsyms].name, sizeof k->syms[0].name, "N");
  k->syms[k->nsyms++].value = g->N;

  /* assemble */
  tg_buf src = {0};
  buf_printf(&src, "// generated by tests/gen/tilegen.c, seed %llu; sizes:", (unsigned long long)seed);
  for (int i = 0; i < k->nsyms; i++) buf_printf(&src, " %s=%lld", k->syms[i].name, (long long)k->syms[i].value);
  buf_printf(&src, ", s=%g, n=%lld\n", g->s_value, (long long)g->n_value);
  if (chance(g, 10)) buf_printf(&src, "@warps(4)\n");
  buf_printf(&src, "kernel %s(", k->name);
  for (int i = 0; i < k->nparams; i++) {
    tg_param *p = &k->params[i];
    if (i) buf_printf(&src, ", ");
    if (i < nin) tensor_dims(&src, p, insyms[i]);
    else if (p->is_output) tensor_dims(&src, p, outsyms); /* [slots, M, N] or [slots, N] */
    else buf_printf(&src, "%s: %s", p->name, tg_dtype_name(p->dtype));
  }
  buf_printf(&src, ")\n");
  if (g->mode == MODE_2D) buf_printf(&src, "    tiles(BM = %d, BN = %d, FLAG = %d)\n", g->BM, g->BN, g->flag);
  else buf_printf(&src, "    tiles(BN = %d, FLAG = %d)\n", g->BN, g->flag);
  if (g->mode == MODE_2D)
    buf_printf(&src, chance(g, 70) ? "    grid(cdiv(M, BM), cdiv(N, BN))\n" : "    grid((M + BM - 1) / BM, cdiv(N, BN))\n");
  else if (g->mode == MODE_ROW) buf_printf(&src, "    grid(M, cdiv(N, BN))\n");
  else buf_printf(&src, "    grid(cdiv(N, BN))\n");
  buf_printf(&src, "{\n%s}\n", g->body.p ? g->body.p : "");
  bool ok = !src.oom && !g->body.oom && !g->oom;
  free(g->body.p);
  free(g);
  if (!ok) {
    free(src.p);
    memset(k, 0, sizeof *k);
    return false;
  }
  k->source = src.p;
  return true;
}

void tg_kernel_free(tg_kernel *k) {
  if (!k) return;
  free(k->source);
  k->source = NULL;
}

const char *tg_dtype_name(tg_dtype t) { return t == TG_F32 ? "f32" : t == TG_BF16 ? "bf16" : "i32"; }
size_t tg_dtype_bytes(tg_dtype t) { return t == TG_BF16 ? 2 : 4; }

int64_t tg_param_numel(const tg_param *p) {
  if (!p->is_tensor) return 1;
  int64_t n = 1;
  for (int d = 0; d < p->rank; d++) n *= p->shape[d];
  return n;
}

void tg_fill_input(const tg_param *p, uint64_t seed, void *data) {
  tg_rng r = {seed ^ 0x5DEECE66Dull};
  for (const char *c = p->name; *c; c++) r.s = r.s * 131 + (unsigned char)*c;
  int64_t n = tg_param_numel(p);
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = rng_next(&r);
    if (p->dtype == TG_I32) {
      int32_t v = (int32_t)(x % 100) - 50;
      if (v >= 0) v++; /* [-50, 50] \ {0} */
      memcpy((char *)data + 4 * i, &v, 4);
    } else {
      int k = (int)(x % 256) - 128;
      if (k >= 0) k++; /* [-128, 128] \ {0} */
      float f = (float)k / 64.0f;
      if (p->dtype == TG_F32) {
        memcpy((char *)data + 4 * i, &f, 4);
      } else {
        uint32_t bits;
        memcpy(&bits, &f, 4);
        uint16_t h = (uint16_t)(bits >> 16); /* exact: k/64 has <= 8 significant bits */
        memcpy((char *)data + 2 * i, &h, 2);
      }
    }
  }
}

void tg_poison_output(const tg_param *p, void *data) {
  memset(data, 0xFF, (size_t)tg_param_numel(p) * tg_dtype_bytes(p->dtype));
}
