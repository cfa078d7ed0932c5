/* small_m_waves.c: the wave model that picks, at each launch, between a GEMM kernel's own tile and
 * its waves form (a smaller tile, docs/small_m.md "Waves") from M, N and the device's SM count.
 * Not a pass: lib/api/form_launch.c asks it at launch, passes/small_m.c for --explain's example.
 *
 * Why: a persistent 128x256 kernel runs cdiv(M, 128) x cdiv(N, 256) tiles, one CTA an SM.  At M 512,
 * N 4096 that is 64 tiles on 132 SMs: half the device idles, and a 128x128 form's 128 tiles fill it
 * in one wave (H200: 31.9 us against 45.1).  At M 1024 the kernel's 128 tiles already fill the SMs
 * and the form's 256 take two waves (54.4 against 48.3 us).
 *
 * The model (in units of nothing: only its ratio is used):
 *   cost(tile)      = BM BN + 128 (BM + BN)    a tile's MACs a k-step, plus its operand loads, whose
 *                                              weight 128 makes 128x128 cost 0.6 of 128x256
 *   waves(grid)     = cdiv(tiles, sms)         the busiest SM's tiles (a persistent CTA runs its tiles
 *                                              one after the other; co-resident CTAs share the SM)
 *   time(grid)      = F + waves x cost(tile),  F = cost(kernel's tile) / 4  (fill, epilogue, launch)
 * Fit on the two H200 points (same process, cutlass_gemm, N = K = 4096): the form's two waves and one,
 * 54.4 - 31.9 = 22.5 us a wave and 9.4 fixed; the kernel's one wave 45.1 (64 CTAs) / 48.3 (128) =
 * 9.4 + 35.7..38.9: a 128x128 tile 0.58-0.63 of a 128x256 one (0.6) and the fixed part 0.24-0.26 of it.
 * The model then gives 0.68 at M 512 (measured 0.71) and 1.16 at M 1024 (measured 1.13).
 * The form is picked at ratio <= TL_WAVES_PICK (0.85): a 15 % margin for what the model leaves out
 * (L2 and DRAM contention, a grid's tail that runs faster on a quieter device).  With N a multiple of
 * 256 that picks the form exactly where both grids are one wave (the form's tiles <= SMs: the kernel's
 * <= half the SMs); where the kernel takes w >= 2 waves the form takes 2w - 1 or 2w, at best 0.91 of
 * the kernel's (w = 2, the form 3): not picked. */
#include "small_m.h"

static double tile_cost(int64_t bm, int64_t bn) { return (double)bm * (double)bn + 128.0 * (double)(bm + bn); }

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool tl_small_m_waves_model(const tl_small_m_plan *plan, const tl_small_m_form *fm, int64_t m, int64_t n, int64_t sms,
                            tl_small_m_waves *out) {
  *out = (tl_small_m_waves){0};
  if (m < 1 || n < 1 || sms < 1 || fm->bm < 1 || fm->bn < 1 || plan->kernel_bm < 1 || plan->kernel_bn < 1) return false;
  out->tiles_kernel = cdiv(m, plan->kernel_bm) * cdiv(n, plan->kernel_bn);
  out->tiles_form = cdiv(m, fm->bm) * cdiv(n, fm->bn);
  out->waves_kernel = cdiv(out->tiles_kernel, sms);
  out->waves_form = cdiv(out->tiles_form, sms);
  double ck = tile_cost(plan->kernel_bm, plan->kernel_bn), fixed = ck / 4;
  double tk = fixed + (double)out->waves_kernel * ck, tf = fixed + (double)out->waves_form * tile_cost(fm->bm, fm->bn);
  out->ratio = tf / tk;
  out->pick = out->ratio <= TL_WAVES_PICK;
  return out->pick;
}
