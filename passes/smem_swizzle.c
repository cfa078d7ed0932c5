/* smem_swizzle: requires verified IR; keeps every op and value; records per dot
 * operand in f->sched (lib/schedule.h) its shared-memory layout (XOR swizzle
 * mode, or row padding) chosen by lib/smem.h's bank-conflict model from the
 * 16-byte chunk stores that fill the tile and the ldmatrix.x4 reads of its
 * fragments, and the static conflicts of both sides.  Breaks nothing.
 * docs/scheduling.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_env.h"
#include "schedule.h"
#include "smem.h"

/* How an operand tile sits in shared memory: `rows` storage lines of `cols`
 * elements, read with ldmatrix (.trans when K runs along the line's rows). */
typedef struct staged_tile {
  int32_t rows, cols, eb;
  bool trans_read;
  const char *what; /* "[M][K]", "[N][K]", "[K][N]" */
} staged_tile;

/* The storage codegen uses (lib/codegen/emit_dot.c): A as [M][K]; B as
 * [N][K] when it is trans(x) or 8-bit (fp8 B is transposed on staging:
 * ldmatrix .trans is 16-bit only), else [K][N] read with .trans. */
static staged_tile storage_of(tl_func *f, int32_t dot, int which) {
  tl_op *op = tl_op_at(f, dot);
  tl_value *x = tl_val(f, op->opnd[which]);
  staged_tile s = {0};
  s.eb = tl_dtype_bytes((tl_dtype)x->type.dtype);
  if (which == 0) {
    s.rows = x->type.shape[0];
    s.cols = x->type.shape[1];
    s.what = "[M][K]";
    return s;
  }
  bool is_trans = x->def >= 0 && tl_op_at(f, x->def)->opc == TL_OP_trans;
  if (is_trans || s.eb != 2) {
    s.rows = x->type.shape[1];
    s.cols = x->type.shape[0];
    s.what = "[N][K]";
  } else {
    s.rows = x->type.shape[0];
    s.cols = x->type.shape[1];
    s.trans_read = true;
    s.what = "[K][N]";
  }
  return s;
}

/* The XOR swizzle codegen implements for rows of `row_bytes` (chunk c of row
 * r at c ^ f(r): f = r%8 from 128-byte rows, (r/2)%4 for 64, (r/4)%2 for 32)
 * is exactly lib/smem's mode min(row_bytes, 128) (docs/pipelines.md,
 * docs/smem.md); 0 when there is none. */
static int32_t codegen_mode(const staged_tile *s) {
  int32_t rb = s->cols * s->eb;
  int32_t mode = rb >= 128 ? 128 : rb == 64 || rb == 32 ? rb : 0;
  if (!mode) return 0;
  tl_smem_layout l = tl_smem_swizzled(s->rows, s->cols, s->eb, TL_SMEM_ROW_MAJOR, mode);
  return tl_smem_check(&l) ? 0 : mode;
}

/* The stores (one access per 32 consecutive chunks: the cp.async copy's
 * thread t takes chunk t + j*threads, row-major over the tile) and the
 * ldmatrix.x4 of every fragment.  Returns the count; *nstore = stores. */
static int build_accesses(tl_arena *a, const staged_tile *s, tl_smem_access **out, int *nstore) {
  /* Every candidate layout's bank mapping repeats every 32 rows (a row's
   * bank offset depends on row * pitch mod 128 bytes with pitch a multiple of
   * 4, or, swizzled, on address bits 7..9): so the accesses of the first 32
   * rows, each weighted rows/32 times, count exactly what the whole tile does,
   * at a fraction of the analyses. */
  int32_t period = s->rows < 32 ? s->rows : 32;
  int32_t weight = s->rows / period;
  int32_t nch = s->cols * s->eb / 16;
  int32_t chunks = period * nch;
  int32_t nst = (chunks + TL_SMEM_WARP - 1) / TL_SMEM_WARP;
  int32_t kw = s->trans_read ? 16 : 32 / s->eb; /* elements a fragment spans along the line */
  int32_t nld = (period / 16) * (s->cols / kw);
  tl_smem_access *acc = tl_alloc(a, sizeof *acc * (size_t)(nst + nld + 1));
  int n = 0;
  for (int32_t w = 0; w < nst && nch > 0; w++) {
    tl_smem_access *x = &acc[n++];
    tl_smem_access_blocked(x, s->cols, s->eb, 16, w);
    x->name = "store";
    x->count = weight;
    for (int lane = 0; lane < TL_SMEM_WARP; lane++)
      if (w * TL_SMEM_WARP + lane >= chunks) x->active &= ~(1u << lane);
  }
  *nstore = n;
  for (int32_t r0 = 0; r0 + 16 <= period; r0 += 16)
    for (int32_t c0 = 0; c0 + kw <= s->cols; c0 += kw) {
      tl_smem_access *x = &acc[n++];
      tl_smem_access_ldmatrix_x4(x, r0, c0, s->eb, s->trans_read);
      x->name = "ldmatrix";
      x->count = weight;
    }
  *out = acc;
  return n;
}

/* Warp accesses per tile that accesses [from, to) stand for (their weights). */
static int32_t weighted(const tl_smem_access *acc, int from, int to) {
  int32_t n = 0;
  for (int i = from; i < to; i++) n += acc[i].count > 0 ? acc[i].count : 1;
  return n;
}

/* Conflicts of accesses [from, to) on l; -1 when one is invalid on it. */
static int32_t side_conflicts(const tl_smem_layout *l, const tl_smem_access *acc, int from, int to) {
  int64_t sum = 0;
  for (int i = from; i < to; i++) {
    tl_smem_cost c;
    if (!tl_smem_analyze_quiet(l, &acc[i], &c)) return -1;
    sum += (int64_t)c.conflicts * (acc[i].count > 0 ? acc[i].count : 1);
  }
  return sum > INT32_MAX ? INT32_MAX : (int32_t)sum;
}

static void layout_name(tl_sbuf *b, const tl_smem_layout *l) {
  if (l->kind == TL_SMEM_SWIZZLED) tl_sbuf_printf(b, "swizzle%d", l->swizzle_bytes);
  else if (l->kind == TL_SMEM_PADDED) tl_sbuf_printf(b, "pad%d", l->pad_bytes);
  else tl_sbuf_puts(b, "plain");
}

/* What swizzle_operand records for one operand, a function of its staged_tile's geometry alone
 * (rows, cols, element bytes, .trans reads): operands of the same geometry (attention's q, k, v,
 * dO tiles) reuse the first one's choice instead of running the chooser again.  Not with --explain
 * (its text is per operand).  TILEC_SWIZZLE_MEMO=0: every operand chosen on its own. */
typedef struct swizzle_memo {
  int32_t rows, cols, eb;
  bool trans_read;
  bool staged_pad16; /* rows not whole 16-byte chunks: pad 16, nothing else recorded */
  int32_t swizzle_bytes, pad_bytes, conflicts[2];
} swizzle_memo;

typedef struct swizzle_memos {
  swizzle_memo m[16];
  int n;
  bool on;
} swizzle_memos;

static swizzle_memo *memo_find(swizzle_memos *ms, const staged_tile *s) {
  for (int i = 0; i < ms->n; i++) {
    swizzle_memo *m = &ms->m[i];
    if (m->rows == s->rows && m->cols == s->cols && m->eb == s->eb && m->trans_read == s->trans_read) return m;
  }
  return NULL;
}

static void memo_add(swizzle_memos *ms, const staged_tile *s, const tl_dot_sched *d, int which, bool pad16) {
  if (!ms || ms->n == (int)(sizeof ms->m / sizeof ms->m[0])) return;
  swizzle_memo *m = &ms->m[ms->n++];
  m->rows = s->rows;
  m->cols = s->cols;
  m->eb = s->eb;
  m->trans_read = s->trans_read;
  m->staged_pad16 = pad16;
  m->swizzle_bytes = d->swizzle_bytes[which];
  m->pad_bytes = d->pad_bytes[which];
  m->conflicts[0] = d->conflicts[which][0];
  m->conflicts[1] = d->conflicts[which][1];
}


static void swizzle_operand(tl_func *f, int32_t dot, int which, tl_sbuf *ex, swizzle_memos *ms) {
  const tl_type *t = &tl_val(f, tl_op_at(f, dot)->opnd[which])->type;
  if (t->kind != TL_KIND_TILE || t->rank != 2) return;
  staged_tile s = storage_of(f, dot, which);
  if (ex || !ms->on) ms = NULL;
  const swizzle_memo *hit = ms ? memo_find(ms, &s) : NULL;
  if (hit) {
    tl_dot_sched *d = tl_sched_dot(f, dot, true);
    d->swizzled = true;
    d->pad_bytes[which] = hit->pad_bytes;
    if (hit->staged_pad16) return;
    d->swizzle_bytes[which] = hit->swizzle_bytes;
    d->conflicts[which][0] = hit->conflicts[0];
    d->conflicts[which][1] = hit->conflicts[1];
    return;
  }
  if (ex) tl_sbuf_printf(ex, "%s %s %dx%d %s (%d B rows): ", which ? "; b" : " a", s.what, s.rows, s.cols,
                         tl_dtype_name((tl_dtype)t->dtype), s.cols * s.eb);
  tl_smem_access *acc;
  int nstore = 0;
  int n = (s.cols * s.eb) % 16 ? 0 : build_accesses(&f->ctx->arena, &s, &acc, &nstore);
  tl_dot_sched *d = tl_sched_dot(f, dot, true);
  d->swizzled = true;
  tl_smem_choice ch;
  if (n == 0 || !tl_smem_choose(s.rows, s.cols, s.eb, TL_SMEM_ROW_MAJOR, acc, n, NULL, &ch)) {
    /* rows not whole 16-byte chunks: codegen's staging (rows padded by 16
     * bytes), nothing the model can analyze */
    d->pad_bytes[which] = 16;
    memo_add(ms, &s, d, which, true);
    if (ex) tl_sbuf_puts(ex, "pad16, codegen's staging (rows are not whole 16-byte chunks: not analyzed)");
    return;
  }
  tl_smem_layout rec = ch.layout;
  int32_t cmode = codegen_mode(&s);
  bool remapped = false;
  if (rec.kind == TL_SMEM_SWIZZLED && rec.swizzle_bytes != cmode) {
    /* codegen's formula depends on the row width only: record its mode */
    remapped = true;
    rec = cmode ? tl_smem_swizzled(s.rows, s.cols, s.eb, TL_SMEM_ROW_MAJOR, cmode)
                : tl_smem_padded(s.rows, s.cols, s.eb, TL_SMEM_ROW_MAJOR, 16);
  }
  d->swizzle_bytes[which] = rec.kind == TL_SMEM_SWIZZLED ? rec.swizzle_bytes : 0;
  d->pad_bytes[which] = rec.kind == TL_SMEM_PADDED ? rec.pad_bytes : 0;
  int32_t cs = side_conflicts(&rec, acc, 0, nstore), cl = side_conflicts(&rec, acc, nstore, n);
  d->conflicts[which][0] = cs < 0 ? 0 : cs;
  d->conflicts[which][1] = cl < 0 ? 0 : cl;
  memo_add(ms, &s, d, which, false);
  if (!ex) return;
  layout_name(ex, &rec);
  tl_sbuf_printf(ex, ": %d store + %d ldmatrix%s conflicts over %d + %d warp accesses", d->conflicts[which][0],
                 d->conflicts[which][1], s.trans_read ? ".trans" : "", weighted(acc, 0, nstore),
                 weighted(acc, nstore, n));
  tl_smem_layout plain = tl_smem_plain(s.rows, s.cols, s.eb, TL_SMEM_ROW_MAJOR);
  int32_t ps = side_conflicts(&plain, acc, 0, nstore), pl = side_conflicts(&plain, acc, nstore, n);
  if (ps >= 0 && pl >= 0) tl_sbuf_printf(ex, " (plain: %d + %d)", ps, pl);
  if (remapped) {
    tl_sbuf_puts(ex, "; the model chose ");
    layout_name(ex, &ch.layout);
    tl_sbuf_puts(ex, ", codegen's XOR formula for these rows is the one recorded");
  }
}

static bool run_smem_swizzle(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  /* (no code changes with the memo: the same choices either way, so no code_env.h table entry) */
  swizzle_memos ms = {.n = 0, .on = !tl_env_off("TILEC_SWIZZLE_MEMO")};
  for (int32_t id = 0; id < f->ops.len; id++) {
    tl_op *op = tl_op_at(f, id);
    if ((op->flags & TL_OPF_DEAD) || op->opc != TL_OP_dot) continue;
    if (ex) tl_sbuf_printf(ex, "smem_swizzle: kernel '%s': dot at %d:%d:", f->name, op->loc.line, op->loc.col);
    for (int w = 0; w < 2; w++) swizzle_operand(f, id, w, ex, &ms);
    if (ex) tl_sbuf_puts(ex, "\n");
  }
  return true;
}

const tl_pass tl_pass_smem_swizzle = {
    "smem_swizzle",
    "requires verified IR; keeps ops and values; records each dot operand's shared layout (swizzle/pad) and its conflicts",
    run_smem_swizzle,
};
