/* bench/w4a16_dequant_round.c: examples/w4a16_dequant.tile's rounding (ROUND=1), brute-forced on the CPU: the bf16 of
 * q s - z rounded once (from the exact f64 value) against the kernel's f32 steps (Fast2Sum nudge; the TwoSum form it
 * replaced) and the plain twice-rounded form, for q 0..15, s every bf16 in +-[0.5, 2), z every bf16 within 2^+-40.
 *   cc -O2 -ffp-contract=off bench/w4a16_dequant_round.c -lm && ./a.out   (prints the counts; exit 1 on a wrong case) */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
static float bf(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static uint32_t fb(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint16_t rne16(float f) { uint32_t u = fb(f); return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16); }
static uint16_t ref_once(double r) { /* r exact; normal range */
  if (r == 0) return signbit(r) ? 0x8000 : 0;
  int e; double m = frexp(r, &e);
  double v = ldexp(nearbyint(ldexp(m, 8)), e - 8);
  return rne16((float)v); /* v is a bf16 value: exact */
}
static uint16_t twosum(float q, float s, float z) {
  float p = q * s, d = p - z, zr = d - p, e = (p - (d - zr)) - (z + zr);
  uint32_t b = fb(d); int tie = (b & 0xFFFF) == 0x8000;
  int32_t st = (tie && e != 0.0f) ? ((((int32_t)(fb(e) ^ b)) >> 31) | 1) : 0;
  return rne16(bits2f(b + (uint32_t)st));
}
static uint16_t fast2(float q, float s, float z) {
  float p = q * s, d = p - z, zr = d - p, t = z + zr; /* e = -t when |p| >= |z| */
  uint32_t b = fb(d); int tie = (b & 0xFFFF) == 0x8000;
  int32_t st = (tie && t != 0.0f) ? ((((int32_t)(fb(t) ^ b)) >> 31) | 1) : 0;
  return rne16(bits2f(b - (uint32_t)st));
}
int main(void) {
  long n = 0, bad_two = 0, bad_fast = 0, bad_twice = 0;
  for (int sb = 0; sb < 2; sb++)
    for (int se = 126; se <= 127; se++)       /* s exponent field: [0.5, 2) */
      for (int sm = 0; sm < 128; sm++) {
        uint16_t sh = (uint16_t)(sb << 15 | se << 7 | sm);
        float s = bf(sh);
        for (uint32_t zh = 0; zh < 65536; zh++) {
          int ze = (zh >> 7) & 0xFF;
          if (ze == 0xFF || (ze && (ze < 127 - 40 || ze > 127 + 40))) continue; /* double stays exact */
          if (ze == 0 && (zh & 0x7F)) continue;   /* subnormal z: skip */
          float z = bf((uint16_t)zh);
          for (int q = 0; q < 16; q++) {
            double r = (double)q * s - (double)z;
            uint16_t want = ref_once(r);
            n++;
            if (twosum((float)q, s, z) != want) bad_two++;
            if (fast2((float)q, s, z) != want) { if (bad_fast < 5) printf("fast2 bad q %d s %a z %a\n", q, s, z); bad_fast++; }
            if (rne16((float)q * s - z) != want) bad_twice++;
          }
        }
      }
  printf("%ld cases: twosum %ld wrong, fast2sum %ld wrong, plain twice-rounded %ld differ\n", n, bad_two, bad_fast, bad_twice);
  return bad_two || bad_fast ? 1 : 0;
}
