/* Layout algebra (lib/layout.h): every layout maps (register, lane,
 * warp) onto its tile, each element owned exactly as often as intended;
 * slices, expand/broadcast projections, trans and reshape stay consistent
 * with the element they name. Brute force over all inputs. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

/* Count, for every element, how many (r, lane, warp) hold it; all counts must
 * be equal (1 when nothing replicates) and the static check must agree. */
static void check_cover(const tl_layout *l, int warps, int expect_copies) {
  cr_assert_null(tl_layout_check(l), "%s", tl_layout_check(l));
  int64_t numel = 1;
  for (int d = 0; d < l->rank; d++) numel *= l->shape[d];
  int *cnt = calloc((size_t)numel, sizeof(int));
  for (int32_t r = 0; r < tl_layout_nregs(l); r++)
    for (int lane = 0; lane < 32; lane++)
      for (int w = 0; w < warps; w++) {
        int32_t c[TL_MAX_RANK];
        tl_layout_coords(l, r, lane, w, c);
        int64_t flat = 0;
        for (int d = 0; d < l->rank; d++) {
          cr_assert(c[d] >= 0 && c[d] < l->shape[d]);
          flat = flat * l->shape[d] + c[d];
        }
        cnt[flat]++;
      }
  int copies = (int)(tl_layout_nregs(l) * 32LL * warps / numel);
  if (expect_copies) cr_assert_eq(copies, expect_copies);
  for (int64_t i = 0; i < numel; i++) cr_assert_eq(cnt[i], copies, "element %lld held %d times, not %d", (long long)i, cnt[i], copies);
  free(cnt);
}

Test(layout, blocked_is_a_bijection_when_big_enough) {
  static const int32_t shapes[][2] = {{128, 64}, {16, 128}, {1, 4096}, {64, 256}, {256, 8}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int bytes = 1; bytes <= 4; bytes *= 2) {
      tl_layout l = tl_layout_blocked(2, shapes[i], bytes, 4);
      check_cover(&l, 4, 1);
      /* the vector runs along the last dim, 16 bytes or the whole row */
      int32_t want = 16 / bytes < shapes[i][1] ? 16 / bytes : shapes[i][1];
      cr_assert_eq(tl_layout_contig(&l), want);
    }
}

Test(layout, blocked_small_tiles_replicate_exactly) {
  int32_t s1[1] = {16};
  tl_layout l = tl_layout_blocked(1, s1, 4, 4); /* 16 elements, 128 threads */
  check_cover(&l, 4, 0);
  int32_t s2[2] = {2, 8};
  l = tl_layout_blocked(2, s2, 2, 8);
  check_cover(&l, 8, 0);
}

Test(layout, mma_accumulator_matches_the_ptx_fragment) {
  int32_t M = 64, N = 32;
  tl_layout l = tl_layout_mma(M, N, 4);
  check_cover(&l, 4, 1);
  /* per instruction tile: c0,c1 = (lane/4, lane%4*2 + {0,1}); c2,c3 = row + 8 */
  for (int lane = 0; lane < 32; lane++)
    for (int r = 0; r < 4; r++) {
      int32_t c[TL_MAX_RANK];
      tl_layout_coords(&l, r, lane, 0, c);
      cr_assert_eq(c[0], lane / 4 + (r >> 1) * 8);
      cr_assert_eq(c[1], lane % 4 * 2 + (r & 1));
    }
  cr_assert_eq(l.mma_wm * l.mma_wn, 4);
}

Test(layout, slice_then_expand_then_broadcast_is_the_parent) {
  srand(11);
  for (int trial = 0; trial < 20; trial++) {
    int32_t shape[2] = {1 << (rand() % 8), 1 << (rand() % 8)};
    tl_layout p = rand() % 2 && shape[0] >= 16 && shape[1] >= 8 ? tl_layout_mma(shape[0], shape[1], 4)
                                                                  : tl_layout_blocked(2, shape, 4, 4);
    for (int axis = 0; axis < 2; axis++) {
      tl_layout s = tl_layout_slice(&p, axis);
      check_cover(&s, 4, 0);
      tl_layout e = tl_layout_expand(&s, axis);
      int32_t src[2] = {shape[0], shape[1]};
      src[axis] = 1;
      tl_layout proj = tl_layout_project(&p, src);
      cr_assert(tl_layout_eq(&e, &proj), "expand(slice(P)) must be P's broadcast source");
      /* each (r, lane, warp) of the slice names the parent's element minus the axis */
      for (int32_t r = 0; r < tl_layout_nregs(&p); r++) {
        int lane = rand() % 32, w = rand() % 4;
        int32_t cp[TL_MAX_RANK], cs[TL_MAX_RANK];
        tl_layout_coords(&p, r, lane, w, cp);
        tl_layout_coords(&s, r, lane, w, cs);
        cr_assert_eq(cs[0], cp[1 - axis]);
      }
    }
  }
}

Test(layout, trans_and_reshape_name_the_same_elements) {
  int32_t shape[2] = {32, 64};
  tl_layout l = tl_layout_blocked(2, shape, 2, 4);
  tl_layout t = tl_layout_trans(&l);
  int32_t flat_shape[1] = {2048}, r3[3] = {4, 8, 64};
  tl_layout f = tl_layout_reshape(&l, 1, flat_shape);
  tl_layout g = tl_layout_reshape(&l, 3, r3);
  check_cover(&t, 4, 1);
  check_cover(&f, 4, 1);
  check_cover(&g, 4, 1);
  for (int32_t r = 0; r < tl_layout_nregs(&l); r++)
    for (int lane = 0; lane < 32; lane += 5)
      for (int w = 0; w < 4; w++) {
        int32_t a[TL_MAX_RANK], b[TL_MAX_RANK], c[TL_MAX_RANK], d[TL_MAX_RANK];
        tl_layout_coords(&l, r, lane, w, a);
        tl_layout_coords(&t, r, lane, w, b);
        tl_layout_coords(&f, r, lane, w, c);
        tl_layout_coords(&g, r, lane, w, d);
        cr_assert(a[0] == b[1] && a[1] == b[0]);
        cr_assert_eq(c[0], a[0] * 64 + a[1]);
        cr_assert_eq(d[0] * 512 + d[1] * 64 + d[2], a[0] * 64 + a[1]);
      }
}

Test(layout, find_reg_inverts_reg_coords) {
  int32_t shape[2] = {128, 128};
  tl_layout l = tl_layout_mma(128, 128, 8);
  for (int32_t r = 0; r < tl_layout_nregs(&l); r++) {
    int32_t c[TL_MAX_RANK];
    tl_layout_reg_coords(&l, r, c);
    cr_assert_eq(tl_layout_find_reg(&l, c), r);
  }
  tl_layout b = tl_layout_blocked(2, shape, 2, 8);
  int32_t lane_only[TL_MAX_RANK] = {0, 8}; /* a lane bit, no register holds it at lane 0 */
  cr_assert_eq(tl_layout_find_reg(&b, lane_only), -1);
}
