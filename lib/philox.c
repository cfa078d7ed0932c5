/* philox.c: Philox-4x32-10 and the random-number maps (contract: philox.h).
 * Written op by op: lib/codegen/emit_random.c mirrors every line. */
#include "philox.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

void tl_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int r = 0; r < TL_PHILOX_ROUNDS; r++) {
    uint64_t p0 = (uint64_t)TL_PHILOX_M0 * c0, p1 = (uint64_t)TL_PHILOX_M1 * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0, hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += TL_PHILOX_W0;
    k1 += TL_PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

const float tl_rand_log_coef[TL_RAND_LOG_NCOEF] = {1.0f / 9, 1.0f / 7, 1.0f / 5, 1.0f / 3, 1.0f};
const float tl_rand_cos_coef[TL_RAND_COS_NCOEF] = {
    (float)(-1.0 / 87178291200.0), (float)(1.0 / 479001600.0), (float)(-1.0 / 3628800.0), (float)(1.0 / 40320.0),
    (float)(-1.0 / 720.0),         (float)(1.0 / 24.0),        -0.5f,                     1.0f};
const float tl_rand_sin_coef[TL_RAND_SIN_NCOEF] = {
    (float)(-1.0 / 1307674368000.0), (float)(1.0 / 6227020800.0), (float)(-1.0 / 39916800.0), (float)(1.0 / 362880.0),
    (float)(-1.0 / 5040.0),          (float)(1.0 / 120.0),        (float)(-1.0 / 6.0),        1.0f};

static float f32_of_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static uint32_t bits_of_f32(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

float tl_rand_uniform(uint32_t x) { return (float)(x >> 8) * 0x1p-24f; }

/* log u = e ln2 + log m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s) with
 * s = (m - 1) / (m + 1), |s| < 0.1716: 2 s (1 + z/3 + z^2/5 + z^3/7 + z^4/9),
 * z = s^2 (the next term is below 2e-9 relative). */
float tl_rand_log(float u) {
  uint32_t b = bits_of_f32(u);
  int32_t e = (int32_t)(b >> 23) - 127;
  float m = f32_of_bits((b & 0x7FFFFFu) | 0x3F800000u); /* [1, 2) */
  bool big = m > TL_RAND_SQRT2;
  m = big ? m * 0.5f : m;
  e = big ? e + 1 : e;
  float f = m - 1.0f; /* exact */
  float s = f / (f + 2.0f);
  float z = s * s;
  float p = tl_rand_log_coef[0];
  for (int i = 1; i < TL_RAND_LOG_NCOEF; i++) p = p * z + tl_rand_log_coef[i];
  float logm = (s + s) * p;
  float ef = (float)e;
  return ef * TL_RAND_LN2_HI + (ef * TL_RAND_LN2_LO + logm);
}

/* cos(2 pi v): quadrant q = floor(4v), x = (4v - q) pi/2 in [0, pi/2), then
 * cos x, -sin x, -cos x, sin x by q; Taylor polynomials to degree 14 / 15
 * (error below 1e-10 on [0, pi/2]). */
float tl_rand_cos2pi(float v) {
  float t = v * 4.0f; /* exact */
  int32_t q = (int32_t)t;
  float x = (t - (float)q) * TL_RAND_HALF_PI;
  float x2 = x * x;
  float c = tl_rand_cos_coef[0], s = tl_rand_sin_coef[0];
  for (int i = 1; i < TL_RAND_COS_NCOEF; i++) c = c * x2 + tl_rand_cos_coef[i];
  for (int i = 1; i < TL_RAND_SIN_NCOEF; i++) s = s * x2 + tl_rand_sin_coef[i];
  s = s * x;
  float r = q == 0 ? c : q == 1 ? -s : q == 2 ? -c : s;
  return r;
}

float tl_rand_normal(uint32_t x, uint32_t y) {
  float u1 = (float)((x >> 8) + 1) * 0x1p-24f; /* (0, 1] */
  float u2 = tl_rand_uniform(y);
  float r = sqrtf(-2.0f * tl_rand_log(u1));
  return r * tl_rand_cos2pi(u2);
}
