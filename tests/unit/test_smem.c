/* test_smem.c: lib/smem shared layouts, bank-conflict analyzer and chooser.
 * - byte offsets: a bijection onto the data bytes for every mode, order,
 *   element size and power-of-two shape 8..256; the swizzle against the
 *   per-mode formulas derived by hand (docs/smem.md);
 * - the analyzer: hand-derived cases (numbers derived in the comments) and a
 *   random cross-check against a slow reference written here (sort + unique);
 * - the chooser: every access it is given is conflict-free after the choice
 *   for bf16/fp8 tiles BM x BK in {64,128,256} x {32,64,128}, and its
 *   preferences (plain, then swizzle, then padding) hold. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "smem.h"

static const int32_t POW2[] = {8, 16, 32, 64, 128, 256};
#define NPOW2 ((int)(sizeof POW2 / sizeof POW2[0]))

/* ---- byte offsets ------------------------------------------------------------------ */

/* Every element's bytes land in [0, footprint), no byte twice, and (padded)
 * never in a line's padding: with the count this is a bijection onto the
 * data bytes. */
static void check_bijection(const tl_smem_layout *l) {
  int64_t size = tl_smem_footprint(l);
  int64_t data = (int64_t)l->rows * l->cols * l->elem_bytes;
  unsigned char *seen = calloc((size_t)size, 1);
  cr_assert(seen);
  bool col_major = l->order == TL_SMEM_COL_MAJOR;
  int64_t line_bytes = (int64_t)(col_major ? l->rows : l->cols) * l->elem_bytes;
  int64_t stride = line_bytes + (l->kind == TL_SMEM_PADDED ? l->pad_bytes : 0);
  int64_t covered = 0;
  for (int32_t r = 0; r < l->rows; r++)
    for (int32_t c = 0; c < l->cols; c++) {
      int64_t off = tl_smem_offset(l, r, c);
      cr_assert(off >= 0 && off + l->elem_bytes <= size, "(%d,%d) -> %lld outside %lld", r, c, (long long)off,
                (long long)size);
      cr_assert_eq(off % l->elem_bytes, 0, "element (%d,%d) misaligned", r, c);
      for (int b = 0; b < l->elem_bytes; b++) {
        cr_assert(!seen[off + b], "byte %lld used twice (%d,%d) %dx%d b%d kind %d", (long long)(off + b), r, c,
                  l->rows, l->cols, l->elem_bytes, l->kind);
        cr_assert((off + b) % stride < line_bytes, "byte %lld in padding", (long long)(off + b));
        seen[off + b] = 1;
        covered++;
      }
    }
  cr_assert_eq(covered, data);
  if (l->kind != TL_SMEM_PADDED) cr_assert_eq(size, data);
  free(seen);
}

Test(smem_offset, bijection_every_mode_shape_and_size) {
  static const int32_t EB[] = {1, 2, 4};
  int checked = 0, rejected = 0;
  for (int ri = 0; ri < NPOW2; ri++)
    for (int ci = 0; ci < NPOW2; ci++)
      for (int ei = 0; ei < 3; ei++)
        for (int order = 0; order < 2; order++) {
          int32_t rows = POW2[ri], cols = POW2[ci], eb = EB[ei];
          int32_t line_bytes = (order ? rows : cols) * eb;
          tl_smem_layout ls[6];
          ls[0] = tl_smem_plain(rows, cols, eb, order);
          ls[1] = tl_smem_padded(rows, cols, eb, order, eb);
          ls[2] = tl_smem_padded(rows, cols, eb, order, 16);
          ls[3] = tl_smem_swizzled(rows, cols, eb, order, 32);
          ls[4] = tl_smem_swizzled(rows, cols, eb, order, 64);
          ls[5] = tl_smem_swizzled(rows, cols, eb, order, 128);
          for (int k = 0; k < 6; k++) {
            const char *why = tl_smem_check(&ls[k]);
            /* A swizzle is valid exactly when the storage line is a whole
             * number of atoms (lines >= 8 always cover whole 128 B rows). */
            bool expect_ok = ls[k].kind != TL_SMEM_SWIZZLED || line_bytes % ls[k].swizzle_bytes == 0;
            cr_assert_eq(why == NULL, expect_ok, "%dx%d b%d order %d kind %d mode %d: %s", rows, cols, eb, order,
                         ls[k].kind, ls[k].swizzle_bytes, why ? why : "ok");
            if (!why) check_bijection(&ls[k]), checked++;
            else rejected++;
          }
        }
  cr_assert_gt(checked, 900);
  cr_assert_gt(rejected, 0);
}

Test(smem_offset, plain_and_padded_by_hand) {
  tl_smem_layout p = tl_smem_plain(8, 16, 4, TL_SMEM_ROW_MAJOR);
  cr_assert_eq(tl_smem_offset(&p, 3, 5), (3 * 16 + 5) * 4);
  tl_smem_layout pc = tl_smem_plain(8, 16, 4, TL_SMEM_COL_MAJOR);
  cr_assert_eq(tl_smem_offset(&pc, 3, 5), (5 * 8 + 3) * 4);
  tl_smem_layout pad = tl_smem_padded(8, 16, 2, TL_SMEM_ROW_MAJOR, 6);
  cr_assert_eq(tl_smem_offset(&pad, 7, 15), 7 * (32 + 6) + 30);
  cr_assert_eq(tl_smem_footprint(&pad), 8 * 16 * 2 + 8 * 6);
}

/* The swizzle from the per-mode readings of Swizzle<B,4,3>, with the 128-byte
 * row of the address (not the tile row) as the XOR source:
 *   128B on 128-byte lines: chunk ^= r % 8
 *   64B on 64-byte lines:   chunk ^= (r / 2) % 4   (two lines per 128 B row)
 *   32B on 32-byte lines:   chunk ^= (r / 4) % 2   (four lines per 128 B row) */
Test(smem_offset, swizzle_matches_hand_formulas) {
  for (int eb = 1; eb <= 4; eb *= 2)
    for (int mode = 32; mode <= 128; mode *= 2) {
      int32_t cols = mode / eb, rows = 64;
      int32_t lines_per_128 = 128 / mode;
      tl_smem_layout l = tl_smem_swizzled(rows, cols, eb, TL_SMEM_ROW_MAJOR, mode);
      tl_smem_layout lc = tl_smem_swizzled(cols, rows, eb, TL_SMEM_COL_MAJOR, mode);
      cr_assert_null(tl_smem_check(&l));
      cr_assert_null(tl_smem_check(&lc));
      for (int32_t r = 0; r < rows; r++)
        for (int32_t c = 0; c < cols; c++) {
          int32_t byte = c * eb, chunk = byte / 16;
          int32_t x = (r / lines_per_128) % (mode / 16);
          int64_t want = (int64_t)r * mode + ((chunk ^ x) * 16) + byte % 16;
          cr_assert_eq(tl_smem_offset(&l, r, c), want, "mode %d eb %d (%d,%d)", mode, eb, r, c);
          cr_assert_eq(tl_smem_offset(&lc, c, r), want, "col-major mode %d eb %d (%d,%d)", mode, eb, c, r);
        }
    }
  /* 256-byte bf16 lines with 128B swizzle: two atoms of 64 columns, each
   * [rows x 128 B], the second after all rows of the first. */
  tl_smem_layout w = tl_smem_swizzled(32, 128, 2, TL_SMEM_ROW_MAJOR, 128);
  for (int32_t r = 0; r < 32; r++)
    for (int32_t c = 0; c < 128; c++) {
      int32_t atom = c / 64, byte = (c % 64) * 2;
      int64_t want = (int64_t)atom * 32 * 128 + r * 128 + (((byte / 16) ^ (r % 8)) * 16) + byte % 16;
      cr_assert_eq(tl_smem_offset(&w, r, c), want, "(%d,%d)", r, c);
    }
}

Test(smem_offset, swizzle_is_an_involution_inside_128_byte_rows) {
  for (int mode = 32; mode <= 128; mode *= 2)
    for (int64_t a = 0; a < 4096; a++) {
      int64_t s = tl_smem_swizzle(a, mode);
      cr_assert_eq(tl_smem_swizzle(s, mode), a);
      cr_assert_eq(s / 128, a / 128, "leaves its 128-byte row");
      cr_assert_eq(s % 16, a % 16, "moves bytes inside a chunk");
    }
  cr_assert_eq(tl_smem_swizzle(12345, 0), 12345);
  cr_assert_eq(tl_smem_swizzle_bits(32), 1);
  cr_assert_eq(tl_smem_swizzle_bits(64), 2);
  cr_assert_eq(tl_smem_swizzle_bits(128), 3);
  cr_assert_eq(tl_smem_swizzle_bits(48), 0);
}

Test(smem_offset, check_rejects_bad_layouts) {
  tl_smem_layout l = tl_smem_plain(0, 8, 2, TL_SMEM_ROW_MAJOR);
  cr_assert_not_null(tl_smem_check(&l));
  l = tl_smem_plain(8, 8, 3, TL_SMEM_ROW_MAJOR);
  cr_assert_not_null(tl_smem_check(&l));
  l = tl_smem_padded(8, 8, 4, TL_SMEM_ROW_MAJOR, 2);
  cr_assert_not_null(tl_smem_check(&l));
  l = tl_smem_swizzled(8, 64, 2, TL_SMEM_ROW_MAJOR, 96);
  cr_assert_not_null(tl_smem_check(&l));
  /* 3 lines of one 32-byte atom = 96 bytes: not whole 128-byte rows. */
  l = tl_smem_swizzled(3, 16, 2, TL_SMEM_ROW_MAJOR, 32);
  cr_assert_not_null(tl_smem_check(&l));
}

/* ---- analyzer: hand-derived cases --------------------------------------------------- */

static tl_smem_access lanes_access(int32_t width) {
  tl_smem_access a;
  memset(&a, 0, sizeof a);
  a.kind = TL_SMEM_ACCESS_LANES;
  a.width = width;
  a.active = 0xffffffffu;
  return a;
}

static tl_smem_cost analyze_ok(const tl_smem_layout *l, const tl_smem_access *a) {
  tl_smem_cost c;
  bool ok = tl_smem_analyze(l, a, &c);
  cr_assert(ok, "analyze failed: %s", c.explain);
  cr_assert_eq(c.status, TL_SMEM_OK);
  return c;
}

Test(smem_analyze, column_of_f32_with_128_byte_rows_is_32_way) {
  /* 32x32 f32 row-major: lane i reads (i, 0) at byte 128 i = word 32 i, all
   * in bank 0, 32 distinct words: one phase of cost 32. */
  tl_smem_layout l = tl_smem_plain(32, 32, 4, TL_SMEM_ROW_MAJOR);
  tl_smem_access a = lanes_access(4);
  for (int i = 0; i < 32; i++) a.row[i] = i, a.col[i] = 0;
  tl_smem_cost c = analyze_ok(&l, &a);
  cr_assert_eq(c.phases, 1);
  cr_assert_eq(c.wavefronts, 32);
  cr_assert_eq(c.conflicts, 31);
  cr_assert_eq(c.worst_bank, 0);
  cr_assert_eq(c.worst_ways, 32);
  cr_assert(strstr(c.explain, "bank 0") && strstr(c.explain, "lanes 0,1,2"), "%s", c.explain);
  /* Column 7 instead: bank 7, still 32-way. */
  for (int i = 0; i < 32; i++) a.col[i] = 7;
  c = analyze_ok(&l, &a);
  cr_assert_eq(c.worst_bank, 7);
  cr_assert_eq(c.conflicts, 31);
  /* Padding one word per row: word 33 i, bank i % 32: conflict-free. */
  tl_smem_layout p = tl_smem_padded(32, 32, 4, TL_SMEM_ROW_MAJOR, 4);
  c = analyze_ok(&p, &a);
  cr_assert_eq(c.conflicts, 0);
  cr_assert_eq(c.wavefronts, 1);
  /* The same column in column-major storage is contiguous: no conflict;
   * a row of it (lane i reads (0, i)) is the 32-way case again. */
  tl_smem_layout cm = tl_smem_plain(32, 32, 4, TL_SMEM_COL_MAJOR);
  cr_assert_eq(analyze_ok(&cm, &a).conflicts, 0);
  for (int i = 0; i < 32; i++) a.row[i] = 0, a.col[i] = i;
  cr_assert_eq(analyze_ok(&cm, &a).conflicts, 31);
  cr_assert_eq(analyze_ok(&l, &a).conflicts, 0);
}

Test(smem_analyze, row_access_and_broadcast_are_free) {
  tl_smem_layout l = tl_smem_plain(16, 64, 4, TL_SMEM_ROW_MAJOR);
  tl_smem_access a = lanes_access(4);
  /* Row 5, columns 32..63: 32 consecutive words, 32 banks. */
  for (int i = 0; i < 32; i++) a.row[i] = 5, a.col[i] = 32 + i;
  tl_smem_cost c = analyze_ok(&l, &a);
  cr_assert_eq(c.wavefronts, 1);
  cr_assert_eq(c.conflicts, 0);
  /* Everyone reads (3, 9): one word, broadcast. */
  for (int i = 0; i < 32; i++) a.row[i] = 3, a.col[i] = 9;
  c = analyze_ok(&l, &a);
  cr_assert_eq(c.wavefronts, 1);
  cr_assert_eq(c.conflicts, 0);
  /* Lanes i and i+16 read the same word, 16 words in 16 banks: free.  Two
   * words per bank (column i and i+32 of one row): 2-way. */
  for (int i = 0; i < 32; i++) a.row[i] = 0, a.col[i] = i % 16;
  cr_assert_eq(analyze_ok(&l, &a).conflicts, 0);
  for (int i = 0; i < 32; i++) a.col[i] = (i % 2) * 32 + i / 2;
  c = analyze_ok(&l, &a);
  cr_assert_eq(c.wavefronts, 2);
  cr_assert_eq(c.conflicts, 1);
  /* bf16, 2-byte lanes along a row: lanes 2j and 2j+1 share word j. */
  tl_smem_layout h = tl_smem_plain(16, 64, 2, TL_SMEM_ROW_MAJOR);
  tl_smem_access b = lanes_access(2);
  for (int i = 0; i < 32; i++) b.row[i] = 1, b.col[i] = i;
  cr_assert_eq(analyze_ok(&h, &b).conflicts, 0);
  /* fp8 1-byte lanes down a column of 128-byte rows: bank 0, 32 words. */
  tl_smem_layout f8 = tl_smem_plain(32, 128, 1, TL_SMEM_ROW_MAJOR);
  tl_smem_access d = lanes_access(1);
  for (int i = 0; i < 32; i++) d.row[i] = i, d.col[i] = 0;
  cr_assert_eq(analyze_ok(&f8, &d).conflicts, 31);
}

Test(smem_analyze, eight_byte_accesses_use_two_half_warp_phases) {
  /* 32x64 f32: lane i reads 8 bytes at (0, 2i): lanes 0-15 cover bytes
   * 0..127 (32 banks once), lanes 16-31 bytes 128..255: 2 wavefronts. */
  tl_smem_layout l = tl_smem_plain(32, 64, 4, TL_SMEM_ROW_MAJOR);
  tl_smem_access a = lanes_access(8);
  for (int i = 0; i < 32; i++) a.row[i] = 0, a.col[i] = 2 * i;
  tl_smem_cost c = analyze_ok(&l, &a);
  cr_assert_eq(c.phases, 2);
  cr_assert_eq(c.wavefronts, 2);
  cr_assert_eq(c.conflicts, 0);
  /* Down a column of 256-byte rows: each phase has 16 lanes whose words 64 i
   * and 64 i + 1 fall in banks 0 and 1: cost 16 per phase. */
  for (int i = 0; i < 32; i++) a.row[i] = i, a.col[i] = 0;
  c = analyze_ok(&l, &a);
  cr_assert_eq(c.wavefronts, 32);
  cr_assert_eq(c.conflicts, 30);
  /* Only lanes 0-15 active: one phase issued. */
  a.active = 0xffffu;
  c = analyze_ok(&l, &a);
  cr_assert_eq(c.phases, 1);
  cr_assert_eq(c.wavefronts, 16);
}

Test(smem_analyze, ldmatrix_on_bf16_tiles) {
  /* bf16 64-column row-major tile (128-byte rows), ldmatrix.x4 of a 16x16
   * block: in each phase the 8 lanes read rows r..r+7 at the same 16-byte
   * chunk, i.e. 8 distinct words in each of 4 banks: cost 8, 4 phases: 32
   * wavefronts, 28 conflicts (8-way). */
  tl_smem_layout l = tl_smem_plain(64, 64, 2, TL_SMEM_ROW_MAJOR);
  tl_smem_access a;
  tl_smem_access_ldmatrix_x4(&a, 16, 8, 2, false);
  tl_smem_cost c = analyze_ok(&l, &a);
  cr_assert_eq(c.phases, 4);
  cr_assert_eq(c.worst_ways, 8);
  cr_assert_eq(c.wavefronts, 32);
  cr_assert_eq(c.conflicts, 28);
  /* Column 8 = byte 16 = word 4: bank 4. */
  cr_assert_eq(c.worst_bank, 4);
  /* 128B swizzle: the 8 rows read chunks c ^ 0..7, 8 distinct chunks = all
   * 32 banks once: 4 wavefronts. */
  tl_smem_layout s = tl_smem_swizzled(64, 64, 2, TL_SMEM_ROW_MAJOR, 128);
  c = analyze_ok(&s, &a);
  cr_assert_eq(c.wavefronts, 4);
  cr_assert_eq(c.conflicts, 0);
  /* .trans reads the same addresses. */
  tl_smem_access t;
  tl_smem_access_ldmatrix_x4(&t, 16, 8, 2, true);
  cr_assert_eq(analyze_ok(&l, &t).conflicts, 28);
  /* 32 columns (64-byte rows): rows alternate between banks 0-3 and 16-19,
   * 4 words each: cost 4 per phase, 16 wavefronts, 12 conflicts; 64B
   * swizzle spreads them. */
  tl_smem_layout n = tl_smem_plain(64, 32, 2, TL_SMEM_ROW_MAJOR);
  tl_smem_access_ldmatrix_x4(&a, 0, 0, 2, false);
  c = analyze_ok(&n, &a);
  cr_assert_eq(c.wavefronts, 16);
  cr_assert_eq(c.conflicts, 12);
  tl_smem_layout n64 = tl_smem_swizzled(64, 32, 2, TL_SMEM_ROW_MAJOR, 64);
  cr_assert_eq(analyze_ok(&n64, &a).conflicts, 0);
  /* 16-byte padding of the 128-byte rows: row stride 36 words, rows land
   * at banks 4 r: 8 disjoint groups of 4 banks. */
  tl_smem_layout p = tl_smem_padded(64, 64, 2, TL_SMEM_ROW_MAJOR, 16);
  tl_smem_access_ldmatrix_x4(&a, 16, 8, 2, false);
  cr_assert_eq(analyze_ok(&p, &a).conflicts, 0);
  /* .x1 and .x2 issue one and two phases. */
  a.nmat = 1;
  c = analyze_ok(&l, &a);
  cr_assert_eq(c.phases, 1);
  cr_assert_eq(c.wavefronts, 8);
  a.nmat = 2;
  cr_assert_eq(analyze_ok(&l, &a).wavefronts, 16);
}

Test(smem_analyze, ldmatrix_fp8_and_column_major) {
  /* fp8 32-column tile (32-byte rows): rows r..r+7 at words 8 r: banks 0, 8,
   * 16, 24, 0, ... : 2 words per bank, cost 2 per phase: 8 wavefronts, 4
   * conflicts.  32B swizzle: rows 4..7 move one chunk (4 banks): free. */
  tl_smem_layout l = tl_smem_plain(64, 32, 1, TL_SMEM_ROW_MAJOR);
  tl_smem_access a;
  tl_smem_access_ldmatrix_x4(&a, 0, 0, 1, false);
  cr_assert_eq(a.mat_col[2], 16);
  tl_smem_cost c = analyze_ok(&l, &a);
  cr_assert_eq(c.wavefronts, 8);
  cr_assert_eq(c.conflicts, 4);
  tl_smem_layout s = tl_smem_swizzled(64, 32, 1, TL_SMEM_ROW_MAJOR, 32);
  cr_assert_eq(analyze_ok(&s, &a).conflicts, 0);
  /* Column-major bf16 [64 x 64]: a matrix is 8 consecutive columns of 8
   * rows, each column 128 bytes apart: 8-way again, as for row-major. */
  tl_smem_layout cm = tl_smem_plain(64, 64, 2, TL_SMEM_COL_MAJOR);
  memset(&a, 0, sizeof a);
  a.kind = TL_SMEM_ACCESS_LDMATRIX;
  a.nmat = 4;
  for (int m = 0; m < 4; m++) a.mat_row[m] = 8 * m, a.mat_col[m] = 16;
  c = analyze_ok(&cm, &a);
  cr_assert_eq(c.conflicts, 28);
  tl_smem_layout cms = tl_smem_swizzled(64, 64, 2, TL_SMEM_COL_MAJOR, 128);
  cr_assert_eq(analyze_ok(&cms, &a).conflicts, 0);
}

Test(smem_analyze, invalid_accesses_are_reported) {
  tl_smem_layout l = tl_smem_plain(16, 64, 2, TL_SMEM_ROW_MAJOR);
  tl_smem_access a = lanes_access(16);
  for (int i = 0; i < 32; i++) a.row[i] = i / 8, a.col[i] = (i % 8) * 8;
  tl_smem_cost c;
  cr_assert(tl_smem_analyze(&l, &a, &c));
  a.col[5] = 4; /* byte 8 of a row: a 16-byte vector there is misaligned */
  cr_assert_not(tl_smem_analyze(&l, &a, &c));
  cr_assert_eq(c.status, TL_SMEM_MISALIGNED);
  cr_assert(strstr(c.explain, "lane 5"), "%s", c.explain);
  a.col[5] = 60; /* runs past column 63 */
  cr_assert_not(tl_smem_analyze(&l, &a, &c));
  cr_assert_eq(c.status, TL_SMEM_BAD_ACCESS);
  a.col[5] = 40;
  a.row[7] = 16;
  cr_assert_not(tl_smem_analyze(&l, &a, &c));
  cr_assert_eq(c.status, TL_SMEM_BAD_ACCESS);
  /* An out-of-range inactive lane is ignored. */
  a.active &= ~(1u << 7);
  cr_assert(tl_smem_analyze(&l, &a, &c));
  a.width = 12;
  cr_assert_not(tl_smem_analyze(&l, &a, &c));
  /* 16-byte vectors on a 4-byte padded layout: rows 1.. are misaligned. */
  tl_smem_layout p = tl_smem_padded(16, 64, 2, TL_SMEM_ROW_MAJOR, 4);
  tl_smem_access b = lanes_access(16);
  for (int i = 0; i < 32; i++) b.row[i] = i / 8, b.col[i] = (i % 8) * 8;
  cr_assert_not(tl_smem_analyze(&p, &b, &c));
  cr_assert_eq(c.status, TL_SMEM_MISALIGNED);
  tl_smem_layout bad = tl_smem_swizzled(16, 8, 2, TL_SMEM_ROW_MAJOR, 128);
  cr_assert_not(tl_smem_analyze(&bad, &b, &c));
  cr_assert_eq(c.status, TL_SMEM_BAD_LAYOUT);
  tl_smem_access m;
  tl_smem_access_ldmatrix_x4(&m, 0, 0, 2, false);
  m.nmat = 3;
  cr_assert_not(tl_smem_analyze(&l, &m, &c));
}

/* ---- analyzer: random cross-check with a slow reference ---------------------------- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Reference: per phase, sort the words touched, drop repeats, count per
 * bank; the phase costs its largest count. */
static void ref_cost(const int64_t *addr, const bool *active, int width, int *wavefronts, int *phases) {
  int per = width <= 4 ? 32 : 128 / width;
  *wavefronts = *phases = 0;
  for (int p = 0; p < 32 / per; p++) {
    int64_t words[128];
    int n = 0;
    for (int lane = p * per; lane < (p + 1) * per; lane++)
      if (active[lane])
        for (int64_t b = addr[lane]; b < addr[lane] + width; b++) words[n++] = b / 4;
    if (!n) continue;
    qsort(words, (size_t)n, sizeof *words, cmp_i64);
    int per_bank[32] = {0}, worst = 0;
    for (int i = 0; i < n; i++)
      if (i == 0 || words[i] != words[i - 1])
        if (++per_bank[words[i] % 32] > worst) worst = per_bank[words[i] % 32];
    (*phases)++;
    *wavefronts += worst;
  }
}

static uint32_t rng_state = 12345u;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (rng_state >> 8) % n;
}

Test(smem_analyze, random_accesses_match_reference) {
  int compared = 0, conflicted = 0;
  for (int iter = 0; iter < 4000; iter++) {
    int32_t rows = POW2[rnd(5)], cols = POW2[rnd(5)], eb = 1 << rnd(3);
    tl_smem_order order = (tl_smem_order)rnd(2);
    tl_smem_layout l;
    switch (rnd(3)) {
    case 0: l = tl_smem_plain(rows, cols, eb, order); break;
    case 1: l = tl_smem_padded(rows, cols, eb, order, eb * (int32_t)(1 + rnd(8))); break;
    default: l = tl_smem_swizzled(rows, cols, eb, order, 32 << rnd(3)); break;
    }
    if (tl_smem_check(&l)) continue;
    int32_t line_len = order == TL_SMEM_COL_MAJOR ? rows : cols;
    int32_t nlines = order == TL_SMEM_COL_MAJOR ? cols : rows;
    int32_t width = eb << rnd(5 - (eb == 4 ? 2 : eb == 2 ? 1 : 0));
    if (width > 16 || width / eb > line_len) continue;
    int32_t vec = width / eb;
    tl_smem_access a = lanes_access(width);
    a.active = rnd(4) ? 0xffffffffu : ((uint32_t)rnd(1u << 16) << 16 | (uint32_t)rnd(1u << 16));
    int64_t addr[32];
    bool active[32];
    for (int i = 0; i < 32; i++) {
      int32_t line = (int32_t)rnd((uint32_t)nlines), pos = (int32_t)rnd((uint32_t)(line_len / vec)) * vec;
      if (i > 0 && rnd(5) == 0) { /* a repeated address: broadcast */
        a.row[i] = a.row[i - 1], a.col[i] = a.col[i - 1];
      } else {
        a.row[i] = order == TL_SMEM_COL_MAJOR ? pos : line;
        a.col[i] = order == TL_SMEM_COL_MAJOR ? line : pos;
      }
      active[i] = a.active >> i & 1u;
      addr[i] = tl_smem_offset(&l, a.row[i], a.col[i]);
    }
    bool aligned = true;
    for (int i = 0; i < 32; i++)
      if (active[i] && addr[i] % width) aligned = false;
    tl_smem_cost c;
    bool ok = tl_smem_analyze(&l, &a, &c);
    cr_assert_eq(ok, aligned, "%s", c.explain);
    if (!ok) {
      cr_assert_eq(c.status, TL_SMEM_MISALIGNED);
      continue;
    }
    int wf, ph;
    ref_cost(addr, active, width, &wf, &ph);
    cr_assert_eq(c.wavefronts, wf, "iter %d: %s", iter, c.explain);
    cr_assert_eq(c.phases, ph);
    cr_assert_eq(c.conflicts, wf - ph);
    compared++;
    conflicted += c.conflicts > 0;
  }
  cr_assert_gt(compared, 1000);
  cr_assert_gt(conflicted, 100);
}

/* ---- chooser -------------------------------------------------------------------------- */

/* The accesses of an A-operand tile [bm, bk] (row-major): every 16-byte
 * blocked store that fills it, and every ldmatrix.x4 fragment load. */
static int32_t operand_accesses(int32_t bm, int32_t bk, int32_t eb, tl_smem_access *acc) {
  int32_t n = 0;
  int32_t store_warps = bm * bk * eb / 16 / 32;
  for (int32_t w = 0; w < store_warps; w++) {
    tl_smem_access_blocked(&acc[n], bk, eb, 16, w);
    acc[n++].name = "st.shared.v4";
  }
  for (int32_t r = 0; r < bm; r += 16)
    for (int32_t c = 0; c < bk; c += 32 / eb) {
      tl_smem_access_ldmatrix_x4(&acc[n], r, c, eb, false);
      acc[n++].name = "ldmatrix.x4";
    }
  return n;
}

Test(smem_choose, operand_tiles_get_conflict_free_swizzles) {
  static const int32_t BM[] = {64, 128, 256}, BK[] = {32, 64, 128};
  static tl_smem_access acc[2048];
  for (int e = 0; e < 2; e++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        int32_t eb = e ? 1 : 2, bm = BM[i], bk = BK[j];
        int32_t n = operand_accesses(bm, bk, eb, acc);
        tl_smem_choice ch;
        cr_assert(tl_smem_choose(bm, bk, eb, TL_SMEM_ROW_MAJOR, acc, n, NULL, &ch), "%s", ch.reason);
        cr_assert_eq(ch.conflicts, 0, "%dx%d b%d: %s", bm, bk, eb, ch.reason);
        cr_assert_eq(ch.worst_access, -1);
        for (int32_t k = 0; k < n; k++) {
          tl_smem_cost c;
          cr_assert(tl_smem_analyze(&ch.layout, &acc[k], &c));
          cr_assert_eq(c.conflicts, 0, "%dx%d b%d access %d: %s", bm, bk, eb, k, c.explain);
        }
        /* Plain conflicts on the ldmatrix side here, so the answer is a
         * swizzle, and the widest one that is conflict-free. */
        tl_smem_layout plain = tl_smem_plain(bm, bk, eb, TL_SMEM_ROW_MAJOR);
        tl_smem_cost pc;
        cr_assert(tl_smem_analyze(&plain, &acc[n - 1], &pc));
        cr_assert_gt(pc.conflicts, 0);
        cr_assert_eq(ch.layout.kind, TL_SMEM_SWIZZLED, "%s", ch.reason);
        for (int32_t mode = 128; mode > ch.layout.swizzle_bytes; mode /= 2) {
          tl_smem_layout wider = tl_smem_swizzled(bm, bk, eb, TL_SMEM_ROW_MAJOR, mode);
          if (tl_smem_check(&wider)) continue;
          int64_t total = 0;
          for (int32_t k = 0; k < n; k++) {
            tl_smem_cost c;
            cr_assert(tl_smem_analyze(&wider, &acc[k], &c));
            total += c.conflicts;
          }
          cr_assert_gt(total, 0, "wider swizzle %d was conflict-free too", mode);
        }
        cr_assert(strstr(ch.reason, "chose swizzle"), "%s", ch.reason);
      }
}

Test(smem_choose, plain_when_already_free_and_swizzle_when_required) {
  static tl_smem_access acc[64];
  int32_t n = 0;
  for (int32_t w = 0; w < 16; w++) tl_smem_access_blocked(&acc[n++], 64, 2, 16, w);
  tl_smem_choice ch;
  cr_assert(tl_smem_choose(64, 64, 2, TL_SMEM_ROW_MAJOR, acc, n, NULL, &ch));
  cr_assert_eq(ch.layout.kind, TL_SMEM_PLAIN, "%s", ch.reason);
  cr_assert_eq(ch.conflicts, 0);
  cr_assert_eq(ch.wavefronts, 16 * 4);
  tl_smem_choose_opts o = {.require_swizzle = true};
  cr_assert(tl_smem_choose(64, 64, 2, TL_SMEM_ROW_MAJOR, acc, n, &o, &ch));
  cr_assert_eq(ch.layout.kind, TL_SMEM_SWIZZLED);
  cr_assert_eq(ch.layout.swizzle_bytes, 128);
  cr_assert_eq(ch.conflicts, 0);
}

Test(smem_choose, padding_when_only_padding_is_free) {
  /* 32x32 f32, lanes read down column 5 (4 bytes each) and along row 3.
   * Plain: 31 conflicts on the column.  Every swizzle moves whole 16-byte
   * chunks, so the column lands in 8 banks, 4 words each: 3 conflicts (the
   * 64B and 32B modes also split row 3 over atoms 2 KiB apart: 2-way more).
   * Padding 4 bytes: word 33 i + 5, all banks distinct: free. */
  tl_smem_access acc[2];
  acc[0] = lanes_access(4);
  acc[1] = lanes_access(4);
  for (int i = 0; i < 32; i++) {
    acc[0].row[i] = i, acc[0].col[i] = 5;
    acc[1].row[i] = 3, acc[1].col[i] = i;
  }
  acc[0].count = 2;
  tl_smem_choice ch;
  cr_assert(tl_smem_choose(32, 32, 4, TL_SMEM_ROW_MAJOR, acc, 2, NULL, &ch));
  cr_assert_eq(ch.layout.kind, TL_SMEM_PADDED, "%s", ch.reason);
  cr_assert_eq(ch.layout.pad_bytes, 4);
  cr_assert_eq(ch.conflicts, 0);
  cr_assert(strstr(ch.reason, "padding costs 128 bytes"), "%s", ch.reason);
  tl_smem_choose_opts o = {.no_padding = true};
  cr_assert(tl_smem_choose(32, 32, 4, TL_SMEM_ROW_MAJOR, acc, 2, &o, &ch));
  cr_assert_eq(ch.layout.kind, TL_SMEM_SWIZZLED, "%s", ch.reason);
  cr_assert_eq(ch.layout.swizzle_bytes, 128);
  cr_assert_eq(ch.conflicts, 2 * 3); /* weight 2 */
  cr_assert_eq(ch.worst_access, 0);
  /* The column alone: every swizzle mode costs 3, the widest wins the tie. */
  for (int32_t mode = 32; mode <= 128; mode *= 2) {
    tl_smem_layout s = tl_smem_swizzled(32, 32, 4, TL_SMEM_ROW_MAJOR, mode);
    tl_smem_cost c = analyze_ok(&s, &acc[0]);
    cr_assert_eq(c.conflicts, 3, "mode %d: %s", mode, c.explain);
  }
  cr_assert(tl_smem_choose(32, 32, 4, TL_SMEM_ROW_MAJOR, acc, 1, &o, &ch));
  cr_assert_eq(ch.layout.kind, TL_SMEM_SWIZZLED, "%s", ch.reason);
  cr_assert_eq(ch.layout.swizzle_bytes, 128, "%s", ch.reason);
}

Test(smem_choose, no_candidate_is_reported) {
  /* A misaligned 8-byte access cannot be fixed by any layout. */
  tl_smem_access a = lanes_access(8);
  for (int i = 0; i < 32; i++) a.row[i] = i, a.col[i] = 1;
  tl_smem_choice ch;
  cr_assert_not(tl_smem_choose(32, 32, 4, TL_SMEM_ROW_MAJOR, &a, 1, NULL, &ch));
  cr_assert(strstr(ch.reason, "no candidate"), "%s", ch.reason);
}
