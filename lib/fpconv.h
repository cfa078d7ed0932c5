/* fpconv.h: exact, correctly rounded conversions between the float formats
 * of tile IR and to/from integers.  Used by the interpreter (the oracle) and
 * by constant folding, so they must agree bit for bit with the GPU's cvt.
 *
 * Rounding is round-to-nearest, ties to even (PTX .rn), subnormals exact.
 *   f16   IEEE binary16 (1.5.10, bias 15), overflow -> inf.
 *   bf16  (1.8.7, bias 127), overflow -> inf.
 *   e4m3  OCP "FN" (1.4.3, bias 7): no inf; max 448; NaN = S.1111.111.
 *         From wider formats always .satfinite: finite values and +-inf
 *         beyond 448 become +-448; NaN stays NaN (0x7F, sign kept).
 *   e5m2  IEEE-like (1.5.2, bias 15) with inf; from wider formats always
 *         .satfinite: finite values and +-inf beyond 57344 become +-57344
 *         (PTX: ".satfinite: |x| > MAX_NORM, inf included, -> sign*MAX_NORM").
 * NaN produced by a narrowing conversion is the quiet NaN of the format with
 * the input's sign (f16 0x7E00, bf16 0x7FC0, e4m3 0x7F, e5m2 0x7E).
 *
 * Float -> integer (PTX cvt.rzi.sat): truncate toward zero, saturate to the
 * destination range, NaN -> 0.  Decision: float -> i1 is (x != 0) with
 * NaN -> 0 ("nonzero", as C and Triton do; 0.5 -> 1).
 * Integer -> integer: keep the low bits (wrap), then sign-extend (i8..i64)
 * or zero-extend (u8); -> i1 is (x != 0).
 * Integer -> float: correctly rounded from the exact integer value. */
#ifndef TILEC_FPCONV_H
#define TILEC_FPCONV_H

#include <stdint.h>
#include "ir.h"

/* ---- narrowing: bits of the destination format ---------------------------- */
uint16_t tl_f64_to_f16(double x);
uint16_t tl_f64_to_bf16(double x);
uint8_t tl_f64_to_e4m3(double x);
uint8_t tl_f64_to_e5m2(double x);
/* f32 is exact in f64, so these are the same conversions. */
static inline uint16_t tl_f32_to_f16(float x) { return tl_f64_to_f16((double)x); }
static inline uint16_t tl_f32_to_bf16(float x) { return tl_f64_to_bf16((double)x); }
static inline uint8_t tl_f32_to_e4m3(float x) { return tl_f64_to_e4m3((double)x); }
static inline uint8_t tl_f32_to_e5m2(float x) { return tl_f64_to_e5m2((double)x); }
/* Correctly rounded f64 -> f32 (overflow -> inf). */
float tl_f64_to_f32(double x);

/* ---- widening: exact --------------------------------------------------------- */
float tl_f16_to_f32(uint16_t h);
float tl_bf16_to_f32(uint16_t h);
float tl_e4m3_to_f32(uint8_t b);
float tl_e5m2_to_f32(uint8_t b);

/* ---- by dtype ------------------------------------------------------------------- */
/* Round x to float dtype dt (F16, BF16, F32, F8E4M3, F8E5M2) and return the
 * rounded value as a float (exact: every such value is an f32). */
float tl_round_to_dtype(double x, tl_dtype dt);
/* Storage bits <-> value for a float dtype (bits in the low bytes). */
uint32_t tl_float_to_bits(double x, tl_dtype dt);
float tl_bits_to_float(uint32_t bits, tl_dtype dt);

/* Float -> integer dtype (I1..I64, U8): see the rules above.  The result is
 * the integer value, sign- or zero-extended to int64. */
int64_t tl_float_to_int(double x, tl_dtype dt);
/* Integer -> integer dtype: wrap to the width, then extend. */
int64_t tl_int_to_int(int64_t x, tl_dtype dt);
/* Integer value -> float dtype, correctly rounded (one rounding). */
float tl_int_to_float(int64_t x, tl_dtype dt);

#endif
