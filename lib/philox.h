/* philox.h: Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy
 * as 1, 2, 3", SC 2011) and the maps from its words to the language's random
 * numbers.  The interpreter calls these functions; the GPU code generator
 * (lib/codegen/emit_random.c) emits the same f32 and integer operations in
 * the same order, with the constants below, so both give identical bits
 * (docs/language.md "Random numbers").  Every float step is one IEEE f32
 * operation (+ - * /, sqrt) rounded to nearest: no FMA contraction, no
 * library transcendental. */
#ifndef TILEC_PHILOX_H
#define TILEC_PHILOX_H

#include <stdint.h>

#define TL_PHILOX_M0 0xD2511F53u
#define TL_PHILOX_M1 0xCD9E8D57u
#define TL_PHILOX_W0 0x9E3779B9u /* golden ratio */
#define TL_PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */
#define TL_PHILOX_ROUNDS 10
/* The language's counters (docs/language.md "Random numbers"): rand / randint of offset o take
 * word o % 4 of the block of counter (o / 4, 0, 0, 0); randn of o takes words 2 (o % 2) and
 * 2 (o % 2) + 1 of the block (o / 2, TL_RAND_NORMAL_STREAM, 0, 0): one block serves four
 * uniforms or two normals, and the two kinds never share a block. */
#define TL_RAND_NORMAL_STREAM 1u

/* out = Philox-4x32-10(ctr, key). */
void tl_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* Uniform f32 in [0, 1): the top 24 bits of x times 2^-24 (exact). */
float tl_rand_uniform(uint32_t x);
/* Standard normal (Box-Muller): sqrt(-2 log u1) * cos(2 pi u2) with
 * u1 = (x >> 8) + 1 times 2^-24 in (0, 1] and u2 = tl_rand_uniform(y);
 * log and cos are the f32 polynomials below (a few ulp). */
float tl_rand_normal(uint32_t x, uint32_t y);

/* The pieces of tl_rand_normal, for tests and the code generator. */
float tl_rand_log(float u);       /* natural log of u in [2^-24, 1] */
float tl_rand_cos2pi(float v);    /* cos(2 pi v) for v in [0, 1) */

/* Polynomial coefficients (f32), highest degree first. */
#define TL_RAND_LOG_NCOEF 5
extern const float tl_rand_log_coef[TL_RAND_LOG_NCOEF];  /* 1/9 1/7 1/5 1/3 1 of z = s^2 */
#define TL_RAND_COS_NCOEF 8
extern const float tl_rand_cos_coef[TL_RAND_COS_NCOEF];  /* (-1)^k / (2k)!, k = 7..0 */
#define TL_RAND_SIN_NCOEF 8
extern const float tl_rand_sin_coef[TL_RAND_SIN_NCOEF];  /* (-1)^k / (2k+1)!, k = 7..0 */
#define TL_RAND_LN2_HI 0.693145751953125f    /* ln 2 = HI + LO, HI with 16 bits */
#define TL_RAND_LN2_LO 1.42860682030941723e-6f
#define TL_RAND_SQRT2 1.41421356f
#define TL_RAND_HALF_PI 1.57079632679489662f

#endif
