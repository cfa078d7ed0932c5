/* smem.c: shared-memory tile layouts, the exact bank-conflict analyzer and
 * the layout chooser.  Contract: pure functions of their arguments (no
 * allocation, no I/O); every public entry validates what it is given and
 * reports problems in its result instead of failing.  Maths: docs/smem.md. */
#include "smem.h"

#include "util.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- layouts ------------------------------------------------------------------ */

static tl_smem_layout make_layout(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order,
                                  tl_smem_kind kind) {
  tl_smem_layout l;
  memset(&l, 0, sizeof l);
  l.rows = rows;
  l.cols = cols;
  l.elem_bytes = elem_bytes;
  l.order = order;
  l.kind = kind;
  return l;
}

tl_smem_layout tl_smem_plain(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order) {
  return make_layout(rows, cols, elem_bytes, order, TL_SMEM_PLAIN);
}

tl_smem_layout tl_smem_padded(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order,
                              int32_t pad_bytes) {
  tl_smem_layout l = make_layout(rows, cols, elem_bytes, order, TL_SMEM_PADDED);
  l.pad_bytes = pad_bytes;
  return l;
}

tl_smem_layout tl_smem_swizzled(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order,
                                int32_t swizzle_bytes) {
  tl_smem_layout l = make_layout(rows, cols, elem_bytes, order, TL_SMEM_SWIZZLED);
  l.swizzle_bytes = swizzle_bytes;
  return l;
}

/* Storage view: number of lines, elements per line. */
static int32_t nlines_of(const tl_smem_layout *l) { return l->order == TL_SMEM_COL_MAJOR ? l->cols : l->rows; }
static int32_t line_len_of(const tl_smem_layout *l) { return l->order == TL_SMEM_COL_MAJOR ? l->rows : l->cols; }

int tl_smem_swizzle_bits(int32_t swizzle_bytes) {
  switch (swizzle_bytes) {
  case 32: return 1;
  case 64: return 2;
  case 128: return 3;
  default: return 0;
  }
}

int64_t tl_smem_swizzle(int64_t linear_byte, int32_t swizzle_bytes) {
  int b = tl_smem_swizzle_bits(swizzle_bytes);
  int64_t mask = ((int64_t)1 << b) - 1; /* b = 0: mask 0, identity */
  return linear_byte ^ (((linear_byte >> 7) & mask) << 4);
}

const char *tl_smem_check(const tl_smem_layout *l) {
  if (l->rows <= 0 || l->cols <= 0) return "tile dimensions must be positive";
  if (l->elem_bytes != 1 && l->elem_bytes != 2 && l->elem_bytes != 4 && l->elem_bytes != 8)
    return "element size must be 1, 2, 4 or 8 bytes";
  if (l->order != TL_SMEM_ROW_MAJOR && l->order != TL_SMEM_COL_MAJOR) return "unknown storage order";
  int64_t line_bytes = (int64_t)line_len_of(l) * l->elem_bytes;
  switch (l->kind) {
  case TL_SMEM_PLAIN: return NULL;
  case TL_SMEM_PADDED:
    if (l->pad_bytes < 0) return "padding must not be negative";
    if (l->pad_bytes % l->elem_bytes) return "padding must be a multiple of the element size";
    return NULL;
  case TL_SMEM_SWIZZLED:
    if (!tl_smem_swizzle_bits(l->swizzle_bytes)) return "swizzle mode must be 32, 64 or 128 bytes";
    if (line_bytes % l->swizzle_bytes) return "storage line is not a whole number of swizzle atoms";
    if (((int64_t)nlines_of(l) * l->swizzle_bytes) % 128)
      return "a swizzle atom column must cover whole 128-byte rows";
    return NULL;
  default: return "unknown layout kind";
  }
}

int64_t tl_smem_offset(const tl_smem_layout *l, int32_t r, int32_t c) {
  bool col_major = l->order == TL_SMEM_COL_MAJOR;
  int64_t line = col_major ? c : r;
  int64_t pos_bytes = (int64_t)(col_major ? r : c) * l->elem_bytes;
  int64_t line_bytes = (int64_t)line_len_of(l) * l->elem_bytes;
  switch (l->kind) {
  case TL_SMEM_PADDED: return line * (line_bytes + l->pad_bytes) + pos_bytes;
  case TL_SMEM_SWIZZLED: {
    int64_t mode = l->swizzle_bytes;
    int64_t seg = pos_bytes / mode, in_seg = pos_bytes % mode;
    int64_t linear = seg * nlines_of(l) * mode + line * mode + in_seg;
    return tl_smem_swizzle(linear, l->swizzle_bytes);
  }
  default: return line * line_bytes + pos_bytes;
  }
}

int64_t tl_smem_footprint(const tl_smem_layout *l) {
  int64_t data = (int64_t)l->rows * l->cols * l->elem_bytes;
  if (l->kind == TL_SMEM_PADDED) data += (int64_t)nlines_of(l) * l->pad_bytes;
  return data;
}

void tl_smem_layout_str(const tl_smem_layout *l, char *buf, size_t n) {
  char kind[24];
  if (l->kind == TL_SMEM_PADDED)
    snprintf(kind, sizeof kind, "pad%d", (int)l->pad_bytes);
  else if (l->kind == TL_SMEM_SWIZZLED)
    snprintf(kind, sizeof kind, "swizzle%d", (int)l->swizzle_bytes);
  else
    snprintf(kind, sizeof kind, "plain");
  snprintf(buf, n, "%s[%dx%d b%d %s]", kind, (int)l->rows, (int)l->cols, (int)l->elem_bytes,
           l->order == TL_SMEM_COL_MAJOR ? "col" : "row");
}

/* ---- access builders ------------------------------------------------------------ */

void tl_smem_access_blocked(tl_smem_access *a, int32_t cols, int32_t elem_bytes, int32_t width,
                            int32_t warp) {
  memset(a, 0, sizeof *a);
  a->kind = TL_SMEM_ACCESS_LANES;
  a->width = width;
  a->active = 0xffffffffu;
  int32_t vec = width / elem_bytes;
  int32_t per_row = vec > 0 ? cols / vec : 0;
  if (per_row <= 0) per_row = 1;
  for (int32_t lane = 0; lane < TL_SMEM_WARP; lane++) {
    int32_t t = warp * TL_SMEM_WARP + lane;
    a->row[lane] = t / per_row;
    a->col[lane] = (t % per_row) * vec;
  }
}

void tl_smem_access_ldmatrix_x4(tl_smem_access *a, int32_t r0, int32_t c0, int32_t elem_bytes,
                                bool trans) {
  memset(a, 0, sizeof *a);
  a->kind = TL_SMEM_ACCESS_LDMATRIX;
  a->nmat = 4;
  a->trans = trans;
  int32_t h = elem_bytes > 0 ? 16 / elem_bytes : 0;
  for (int m = 0; m < 4; m++) {
    a->mat_row[m] = r0 + (m & 1) * 8;
    a->mat_col[m] = c0 + (m >> 1) * h;
  }
}

/* ---- analyzer --------------------------------------------------------------------- */

/* One lane's part of an access, in bytes. */
typedef struct lane_bytes {
  bool active;
  int64_t addr;
  int32_t width;
} lane_bytes;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool fail(tl_smem_cost *c, tl_smem_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  c->status = st;
  vsnprintf(c->explain, sizeof c->explain, fmt, ap);
  va_end(ap);
  return false;
}

/* Address of a `width`-byte vector starting at (r, c) along the storage
 * line, after checking it stays in the tile and is contiguous and aligned. */
static bool lane_address(const tl_smem_layout *l, int lane, int32_t r, int32_t c, int32_t width,
                         lane_bytes *out, tl_smem_cost *cost) {
  int32_t n = width / l->elem_bytes;
  bool col_major = l->order == TL_SMEM_COL_MAJOR;
  int32_t last_r = col_major ? r + n - 1 : r, last_c = col_major ? c : c + n - 1;
  if (r < 0 || c < 0 || last_r >= l->rows || last_c >= l->cols)
    return fail(cost, TL_SMEM_BAD_ACCESS, "lane %d: element (%d, %d) outside the tile", lane, (int)r, (int)c);
  int64_t base = tl_smem_offset(l, r, c);
  /* Inside one line (checked above) a plain or padded layout is contiguous; a
   * swizzled one moves whole 16-byte chunks, so a vector of <= 16 bytes that
   * starts at a multiple of its width along the line is too.  Only the other
   * cases need the element-by-element check (the chooser runs this per lane,
   * candidate and access: ~3 % of a whole attention compile). */
  int64_t pos_bytes = (int64_t)(col_major ? r : c) * l->elem_bytes;
  bool contiguous = l->kind == TL_SMEM_PLAIN || l->kind == TL_SMEM_PADDED ||
                    (l->kind == TL_SMEM_SWIZZLED && width <= 16 && pos_bytes % width == 0);
  for (int32_t k = 1; k < n && !contiguous; k++) {
    int64_t off = col_major ? tl_smem_offset(l, r + k, c) : tl_smem_offset(l, r, c + k);
    if (off != base + (int64_t)k * l->elem_bytes)
      return fail(cost, TL_SMEM_BAD_ACCESS,
                  "lane %d: vector at (%d, %d) is not contiguous in this layout", lane, (int)r, (int)c);
  }
  if (base % width)
    return fail(cost, TL_SMEM_MISALIGNED, "lane %d: vector at (%d, %d) is not aligned to its width",
                lane, (int)r, (int)c);
  out->active = true;
  out->addr = base;
  out->width = width;
  return true;
}

/* Lane byte ranges of an access; false (cost filled) when invalid. */
static bool access_lanes(const tl_smem_layout *l, const tl_smem_access *a, lane_bytes *lanes,
                         int32_t *width, tl_smem_cost *cost) {
  memset(lanes, 0, sizeof(lane_bytes) * TL_SMEM_WARP);
  if (a->kind == TL_SMEM_ACCESS_LDMATRIX) {
    if (a->nmat != 1 && a->nmat != 2 && a->nmat != 4)
      return fail(cost, TL_SMEM_BAD_ACCESS, "ldmatrix needs 1, 2 or 4 matrices, not %d", (int)a->nmat);
    if (l->elem_bytes > 16)
      return fail(cost, TL_SMEM_BAD_ACCESS, "ldmatrix rows are 16 bytes; elements of %d bytes do not fit", (int)l->elem_bytes);
    *width = 16;
    bool col_major = l->order == TL_SMEM_COL_MAJOR;
    for (int m = 0; m < a->nmat; m++)
      for (int j = 0; j < 8; j++) {
        int lane = 8 * m + j;
        int32_t r = a->mat_row[m] + (col_major ? 0 : j);
        int32_t c = a->mat_col[m] + (col_major ? j : 0);
        if (!lane_address(l, lane, r, c, 16, &lanes[lane], cost)) return false;
      }
    return true;
  }
  if (a->kind != TL_SMEM_ACCESS_LANES)
    return fail(cost, TL_SMEM_BAD_ACCESS, "unknown access kind %d", (int)a->kind);
  int32_t w = a->width;
  if ((w != 1 && w != 2 && w != 4 && w != 8 && w != 16) || w % l->elem_bytes)
    return fail(cost, TL_SMEM_BAD_ACCESS, "access width %d is not 1/2/4/8/16 bytes or not a multiple "
                "of the element size %d", (int)w, (int)l->elem_bytes);
  *width = w;
  for (int lane = 0; lane < TL_SMEM_WARP; lane++)
    if (a->active >> lane & 1u)
      if (!lane_address(l, lane, a->row[lane], a->col[lane], w, &lanes[lane], cost)) return false;
  return true;
}

/* Cost of one phase: max over banks of distinct words; *bank_out the first
 * bank reaching it. */
static int32_t phase_cost(const lane_bytes *lanes, int first, int count, int32_t *bank_out) {
  /* distinct words per bank: each bank keeps a chain of the words seen in it,
   * so a duplicate (broadcast) is found by walking one bank's few words */
  int64_t words[TL_SMEM_WARP * 4];
  int16_t next[TL_SMEM_WARP * 4], head[TL_SMEM_BANKS];
  int nwords = 0;
  int32_t per_bank[TL_SMEM_BANKS] = {0};
  for (int b = 0; b < TL_SMEM_BANKS; b++) head[b] = -1;
  for (int lane = first; lane < first + count; lane++) {
    if (!lanes[lane].active) continue;
    int64_t w0 = lanes[lane].addr / TL_SMEM_BANK_BYTES;
    int64_t w1 = (lanes[lane].addr + lanes[lane].width - 1) / TL_SMEM_BANK_BYTES;
    for (int64_t w = w0; w <= w1 && nwords < TL_SMEM_WARP * 4; w++) {
      int b = (int)(w % TL_SMEM_BANKS);
      bool seen = false;
      for (int i = head[b]; i >= 0 && !seen; i = next[i]) seen = words[i] == w;
      if (seen) continue; /* broadcast: same word, no extra cost */
      words[nwords] = w;
      next[nwords] = head[b];
      head[b] = (int16_t)nwords++;
      per_bank[b]++;
    }
  }
  int32_t best = 0, bank = -1;
  for (int b = 0; b < TL_SMEM_BANKS; b++)
    if (per_bank[b] > best) best = per_bank[b], bank = b;
  *bank_out = bank;
  return best;
}

static bool lane_touches_bank(const lane_bytes *lb, int32_t bank) {
  if (!lb->active) return false;
  for (int64_t w = lb->addr / 4; w <= (lb->addr + lb->width - 1) / 4; w++)
    if (w % TL_SMEM_BANKS == bank) return true;
  return false;
}

/* The analysis; the explanation text (snprintf, most of the cost when a
 * chooser runs thousands of analyses) only when `explain`.  The layout must
 * have passed tl_smem_check. */
static bool analyze(const tl_smem_layout *l, const tl_smem_access *a, tl_smem_cost *cost, bool explain) {
  memset(cost, 0, sizeof *cost);
  cost->worst_phase = cost->worst_bank = -1;
  lane_bytes lanes[TL_SMEM_WARP];
  int32_t width = 0;
  if (!access_lanes(l, a, lanes, &width, cost)) return false;
  int per_phase = width <= 4 ? TL_SMEM_WARP : 128 / width; /* 32, 16 or 8 lanes */
  for (int p = 0; p * per_phase < TL_SMEM_WARP; p++) {
    int32_t bank;
    int32_t c = phase_cost(lanes, p * per_phase, per_phase, &bank);
    if (c == 0) continue; /* no active lane: the phase is not issued */
    cost->phases++;
    cost->wavefronts += c;
    if (c > cost->worst_ways) cost->worst_ways = c, cost->worst_phase = p, cost->worst_bank = bank;
  }
  cost->conflicts = cost->wavefronts - cost->phases;
  cost->status = TL_SMEM_OK;
  if (!explain) return true;
  int n = snprintf(cost->explain, sizeof cost->explain, "%d wavefront%s over %d phase%s, %d conflict%s",
                   (int)cost->wavefronts, cost->wavefronts == 1 ? "" : "s", (int)cost->phases,
                   cost->phases == 1 ? "" : "s", (int)cost->conflicts, cost->conflicts == 1 ? "" : "s");
  if (cost->worst_ways > 1 && n > 0 && (size_t)n < sizeof cost->explain) {
    size_t at = (size_t)n;
    at += (size_t)snprintf(cost->explain + at, sizeof cost->explain - at,
                           "; worst: phase %d, bank %d serves %d distinct words (lanes",
                           (int)cost->worst_phase, (int)cost->worst_bank, (int)cost->worst_ways);
    const char *sep = " ";
    for (int lane = cost->worst_phase * per_phase;
         lane < (cost->worst_phase + 1) * per_phase && at < sizeof cost->explain; lane++)
      if (lane_touches_bank(&lanes[lane], cost->worst_bank)) {
        at += (size_t)snprintf(cost->explain + at, sizeof cost->explain - at, "%s%d", sep, lane);
        sep = ",";
      }
    if (at < sizeof cost->explain) snprintf(cost->explain + at, sizeof cost->explain - at, ")");
  }
  return true;
}

bool tl_smem_analyze(const tl_smem_layout *l, const tl_smem_access *a, tl_smem_cost *cost) {
  const char *bad = tl_smem_check(l);
  if (bad) {
    memset(cost, 0, sizeof *cost);
    cost->worst_phase = cost->worst_bank = -1;
    cost->status = TL_SMEM_BAD_LAYOUT;
    snprintf(cost->explain, sizeof cost->explain, "bad layout: %s", bad);
    return false;
  }
  return analyze(l, a, cost, true);
}

bool tl_smem_analyze_quiet(const tl_smem_layout *l, const tl_smem_access *a, tl_smem_cost *cost) {
  if (tl_smem_check(l)) return tl_smem_analyze(l, a, cost);
  return analyze(l, a, cost, false);
}

/* ---- chooser ------------------------------------------------------------------------ */

typedef struct layout_eval {
  bool valid;
  int64_t conflicts, wavefronts;
  int32_t worst_access;  /* -1 when conflict-free */
  int64_t worst_conflicts;
  tl_smem_cost worst;    /* the worst access's analysis (or the failing one) */
} layout_eval;

static void eval_layout(const tl_smem_layout *l, const tl_smem_access *acc, int32_t n, layout_eval *e) {
  memset(e, 0, sizeof *e);
  e->worst_access = -1;
  const char *bad = tl_smem_check(l);
  for (int32_t i = 0; i < n; i++) {
    tl_smem_cost c;
    if (bad || !analyze(l, &acc[i], &c, false)) {
      tl_smem_analyze(l, &acc[i], &c); /* again, for the explanation */
      e->valid = false;
      e->worst_access = i;
      e->worst = c;
      return;
    }
    int64_t weight = acc[i].count > 0 ? acc[i].count : 1;
    e->conflicts += weight * c.conflicts;
    e->wavefronts += weight * c.wavefronts;
    if (weight * c.conflicts > e->worst_conflicts) {
      e->worst_conflicts = weight * c.conflicts;
      e->worst_access = i;
    }
  }
  if (e->worst_access >= 0) tl_smem_analyze(l, &acc[e->worst_access], &e->worst); /* with its explanation */
  e->valid = true;
}

/* Preference among equally conflicted layouts: plain, swizzle 128/64/32, then padding by size. */
static int64_t preference(const tl_smem_layout *l) {
  if (l->kind == TL_SMEM_SWIZZLED) return 1 + (3 - tl_smem_swizzle_bits(l->swizzle_bytes));
  if (l->kind == TL_SMEM_PADDED) return 10 + l->pad_bytes;
  return 0;
}


static const char *access_name(const tl_smem_access *acc, int32_t i, char *buf, size_t n) {
  if (acc[i].name) return acc[i].name;
  snprintf(buf, n, "#%d", (int)i);
  return buf;
}

bool tl_smem_choose(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order,
                    const tl_smem_access *accesses, int32_t naccesses,
                    const tl_smem_choose_opts *opts, tl_smem_choice *out) {
  tl_smem_choose_opts o = {0};
  if (opts) o = *opts;
  if (o.max_pad_bytes <= 0) o.max_pad_bytes = 128;
  memset(out, 0, sizeof *out);
  out->worst_access = -1;

  int32_t unit = elem_bytes > 4 ? elem_bytes : 4; /* padding step: keeps every access aligned */
  for (int32_t i = 0; i < naccesses; i++) {
    int32_t w = accesses[i].kind == TL_SMEM_ACCESS_LDMATRIX ? 16 : accesses[i].width;
    if (w > unit) unit = w;
  }

  tl_smem_layout cands[3 + 64];
  int ncand = 0;
  if (!o.require_swizzle) cands[ncand++] = tl_smem_plain(rows, cols, elem_bytes, order);
  for (int32_t mode = 128; mode >= 32; mode /= 2)
    cands[ncand++] = tl_smem_swizzled(rows, cols, elem_bytes, order, mode);
  if (!o.require_swizzle && !o.no_padding)
    for (int32_t pad = unit; pad <= o.max_pad_bytes && ncand < (int)(sizeof cands / sizeof *cands); pad += unit)
      cands[ncand++] = tl_smem_padded(rows, cols, elem_bytes, order, pad);

  int best = -1;
  layout_eval best_eval = {0}, plain_eval = {0}, first_fail = {0};
  bool have_plain = false, have_fail = false, listed_pad = false;
  char summary[384] = "";
  for (int k = 0; k < ncand; k++) {
    if (tl_smem_check(&cands[k])) continue; /* e.g. swizzle wider than the line */
    layout_eval e;
    eval_layout(&cands[k], accesses, naccesses, &e);
    char name[64];
    tl_smem_layout_str(&cands[k], name, sizeof name);
    if (!e.valid) {
      if (!have_fail) first_fail = e, have_fail = true;
      tl_appendf(summary, sizeof summary, "%s%s: invalid", summary[0] ? "; " : "", name);
      continue;
    }
    out->candidates++;
    if (cands[k].kind == TL_SMEM_PLAIN) plain_eval = e, have_plain = true;
    /* List plain, swizzles, the first padding and paddings that improve. */
    if (cands[k].kind != TL_SMEM_PADDED || !listed_pad || e.conflicts < best_eval.conflicts)
      tl_appendf(summary, sizeof summary, "%s%s: %lld conflicts", summary[0] ? "; " : "", name,
              (long long)e.conflicts);
    if (cands[k].kind == TL_SMEM_PADDED) listed_pad = true;
    if (best < 0 || e.conflicts < best_eval.conflicts ||
        (e.conflicts == best_eval.conflicts && preference(&cands[k]) < preference(&cands[best])))
      best = k, best_eval = e;
    /* The candidates come in order of preference (plain, swizzles 128..32, paddings by size), so
     * the first conflict-free one is the choice: a later one can only tie and is less preferred.
     * Stopping there spares the chooser most of its analyses (attention: 2 candidates of ~12). */
    if (best == k && e.conflicts == 0 && k + 1 < ncand) {
      tl_appendf(summary, sizeof summary, "; the rest not tried (this one is conflict-free)");
      break;
    }
  }

  if (best < 0) {
    snprintf(out->reason, sizeof out->reason, "no candidate layout fits every access%s%s", have_fail ? ": " : "",
             have_fail ? first_fail.worst.explain : "");
    return false;
  }
  out->layout = cands[best];
  out->conflicts = best_eval.conflicts;
  out->wavefronts = best_eval.wavefronts;
  out->worst_access = best_eval.worst_access;

  char name[64], aname[32];
  tl_smem_layout_str(&cands[best], name, sizeof name);
  snprintf(out->reason, sizeof out->reason, "chose %s: %lld conflicts, %lld wavefronts over %d accesses",
           name, (long long)best_eval.conflicts, (long long)best_eval.wavefronts, (int)naccesses);
  if (cands[best].kind == TL_SMEM_PADDED)
    tl_appendf(out->reason, sizeof out->reason, " (padding costs %lld bytes)",
            (long long)(tl_smem_footprint(&cands[best]) - (int64_t)rows * cols * elem_bytes));
  if (best_eval.worst_access >= 0)
    tl_appendf(out->reason, sizeof out->reason, "; worst access %s: %s",
            access_name(accesses, best_eval.worst_access, aname, sizeof aname), best_eval.worst.explain);
  else if (have_plain && plain_eval.worst_access >= 0 && cands[best].kind != TL_SMEM_PLAIN)
    tl_appendf(out->reason, sizeof out->reason, "; plain would conflict, e.g. %s: %s",
            access_name(accesses, plain_eval.worst_access, aname, sizeof aname), plain_eval.worst.explain);
  tl_appendf(out->reason, sizeof out->reason, " | tried %s", summary);
  return true;
}
