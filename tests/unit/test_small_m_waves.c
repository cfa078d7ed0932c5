/* test_small_m_waves.c: the wave model that picks between a GEMM kernel's 128x256 tile and its
 * 128x128 waves form at launch (lib/small_m_waves.c, docs/small_m.md "Waves"), on its own: the two
 * H200 points it was fitted on (M 512 the form, M 1024 the kernel, N = K = 4096, 132 SMs), the M and N
 * boundaries, shapes whose kernel grid fills the SMs already (N 14336 / 28672), the kernel's second
 * wave nearly empty (M 1152: the form 0.91 of the kernel, below the margin), other SM counts, and
 * sizes that launch nothing. */
#include <criterion/criterion.h>

#include "small_m.h"

static const tl_small_m_plan plan = {.kernel_bm = 128, .kernel_bn = 256, .nforms = 1};
static const tl_small_m_form form = {.max_m = INT64_MAX, .bm = 128, .bn = 128, .bk = 64, .pipeline = 3, .stages = 4, .waves = true};

static tl_small_m_waves model(int64_t m, int64_t n, int64_t sms) {
  tl_small_m_waves w;
  bool pick = tl_small_m_waves_model(&plan, &form, m, n, sms, &w);
  cr_assert_eq(pick, w.pick);
  cr_assert_eq(pick, w.ratio <= TL_WAVES_PICK);
  return w;
}

Test(small_m_waves, fitted_points) {
  tl_small_m_waves w = model(512, 4096, 132);
  cr_assert(w.pick && w.tiles_kernel == 64 && w.tiles_form == 128 && w.waves_kernel == 1 && w.waves_form == 1);
  cr_assert_float_eq(w.ratio, 0.68, 1e-9, "(F + 0.6) / (F + 1), F = 1/4: %f (measured 31.9 / 45.1 = 0.71)", w.ratio);
  w = model(1024, 4096, 132);
  cr_assert(!w.pick && w.tiles_kernel == 128 && w.tiles_form == 256 && w.waves_kernel == 1 && w.waves_form == 2);
  cr_assert_float_eq(w.ratio, 1.16, 1e-9, "(F + 1.2) / (F + 1): %f (measured 54.4 / 48.3 = 1.13)", w.ratio);
}

Test(small_m_waves, m_boundary_at_n4096) {
  const int64_t form_ms[] = {1, 129, 257, 383, 384, 385, 511, 512};
  const int64_t kernel_ms[] = {513, 640, 767, 768, 769, 1024, 1025, 1152, 1536, 4096, 5000, 16384};
  for (size_t i = 0; i < sizeof form_ms / sizeof *form_ms; i++) cr_assert(model(form_ms[i], 4096, 132).pick, "M %lld", (long long)form_ms[i]);
  for (size_t i = 0; i < sizeof kernel_ms / sizeof *kernel_ms; i++)
    cr_assert(!model(kernel_ms[i], 4096, 132).pick, "M %lld", (long long)kernel_ms[i]);
  /* the kernel's second wave of 12 tiles against the form's third of 24: 0.91, within the margin */
  tl_small_m_waves w = model(1152, 4096, 132);
  cr_assert(w.waves_kernel == 2 && w.waves_form == 3);
  cr_assert(w.ratio > 0.9 && w.ratio < 0.92, "%f", w.ratio);
}

Test(small_m_waves, n_boundary_and_filled_grids) {
  cr_assert(model(512, 4224, 132).pick);   /* 68 tiles, the form's 132: one wave each */
  cr_assert(!model(512, 4225, 132).pick);  /* the form's 136: two */
  cr_assert(model(511, 4000, 132).pick);   /* a ragged N: 16 / 32 tiles a row */
  cr_assert(!model(512, 6144, 132).pick);  /* 96 tiles, the form's 192 */
  cr_assert(!model(300, 6144, 132).pick);  /* 72 tiles (0.55 of the SMs), the form's 144: two waves */
  cr_assert(!model(512, 14336, 132).pick); /* 224 tiles (2 waves), the form's 448 (4) */
  cr_assert(!model(512, 28672, 132).pick);
  cr_assert(!model(4096, 4096, 132).pick);
  cr_assert(model(300, 328, 132).pick);    /* a narrow N: 6 tiles, the form's 9 */
  /* N a multiple of 256: never the form where the kernel takes two or more waves */
  for (int64_t n = 256; n <= 32768; n += 256)
    for (int64_t m = 257; m <= 8192; m += 64) {
      tl_small_m_waves w = model(m, n, 132);
      cr_assert(!w.pick || (w.waves_kernel == 1 && w.waves_form == 1), "M %lld N %lld: waves %lld / %lld", (long long)m,
                (long long)n, (long long)w.waves_kernel, (long long)w.waves_form);
      cr_assert(w.pick || w.waves_form > 1, "M %lld N %lld: one wave each and not picked", (long long)m, (long long)n);
    }
}

Test(small_m_waves, sm_count) {
  cr_assert(!model(512, 4096, 66).pick);
  cr_assert(model(257, 2048, 66).pick);
  cr_assert(model(1024, 4096, 264).pick);
  cr_assert(!model(1025, 4096, 264).pick);
  cr_assert(model(512, 4096, 1).ratio > 1.0); /* one SM: 128 form tiles at 0.6 against 64 kernel tiles, 1.2 */
}

Test(small_m_waves, nothing_to_launch) {
  tl_small_m_waves w;
  cr_assert(!tl_small_m_waves_model(&plan, &form, 0, 4096, 132, &w));
  cr_assert(!tl_small_m_waves_model(&plan, &form, 512, 0, 132, &w));
  cr_assert(!tl_small_m_waves_model(&plan, &form, 512, 4096, 0, &w));
  cr_assert(!tl_small_m_waves_model(&plan, &form, -1, 4096, 132, &w));
}
