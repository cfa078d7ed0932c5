/* fpconv.c: correctly rounded float-format conversions (see fpconv.h).
 * requires nothing; keeps no state; every function is pure.
 *
 * One generic encoder does every narrowing: the input is an exact value
 * sign * mag * 2^exp2 with an integer magnitude (a double's 53-bit
 * significand, or an integer), rounded with integer arithmetic, so there is
 * never a second rounding. */
#include "fpconv.h"

#include <math.h>
#include <string.h>

typedef struct fp_format {
  int ebits, mbits, bias;
  bool has_inf;    /* IEEE-like: exponent all ones = inf/NaN; else OCP FN */
  bool satfinite;  /* overflow (and inf) -> max finite instead of inf */
} fp_format;

static const fp_format FMT_F32 = {8, 23, 127, true, false};
static const fp_format FMT_F16 = {5, 10, 15, true, false};
static const fp_format FMT_BF16 = {8, 7, 127, true, false};
static const fp_format FMT_E4M3 = {4, 3, 7, false, true};
static const fp_format FMT_E5M2 = {5, 2, 15, true, true};

static uint32_t encode_max_finite(const fp_format *f, bool neg) {
  uint32_t exp_all = (1u << f->ebits) - 1, man_all = (1u << f->mbits) - 1;
  uint32_t bits = f->has_inf ? ((exp_all - 1) << f->mbits) | man_all
                             : (exp_all << f->mbits) | (man_all - 1);
  return bits | ((uint32_t)neg << (f->ebits + f->mbits));
}

static uint32_t encode_inf(const fp_format *f, bool neg) {
  if (f->satfinite || !f->has_inf) return encode_max_finite(f, neg);
  return (((1u << f->ebits) - 1) << f->mbits) | ((uint32_t)neg << (f->ebits + f->mbits));
}

static uint32_t encode_nan(const fp_format *f, bool neg) {
  uint32_t exp_all = (1u << f->ebits) - 1;
  uint32_t man = f->has_inf ? 1u << (f->mbits - 1) : (1u << f->mbits) - 1;
  return (exp_all << f->mbits) | man | ((uint32_t)neg << (f->ebits + f->mbits));
}

static int msb_index(uint64_t v) { return 63 - __builtin_clzll(v); }

/* Round sign * mag * 2^exp2 (mag > 0) to format f, ties to even. */
static uint32_t encode_exact(const fp_format *f, bool neg, uint64_t mag, int exp2) {
  int value_exp = msb_index(mag) + exp2; /* value in [2^value_exp, 2^(value_exp+1)) */
  int emin = 1 - f->bias;
  /* quantum: the weight of the last mantissa bit at this binade */
  int quantum_exp = (value_exp < emin ? emin : value_exp) - f->mbits;
  int shift = quantum_exp - exp2; /* n = mag / 2^shift, rounded */
  uint64_t n;
  if (shift <= 0) {
    n = mag << -shift; /* exact; fits since msb(mag) - shift <= mbits */
  } else if (shift > 64) {
    n = 0; /* below half a quantum */
  } else {
    uint64_t kept = shift == 64 ? 0 : mag >> shift;
    uint64_t rem = shift == 64 ? mag : mag & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    n = kept;
    if (rem > half || (rem == half && (kept & 1))) n++;
  }
  uint32_t sign_bit = (uint32_t)neg << (f->ebits + f->mbits);
  if (n == 0) return sign_bit;
  uint64_t hidden = UINT64_C(1) << f->mbits;
  if (n < hidden) return sign_bit | (uint32_t)n; /* subnormal: exponent field 0 */
  if (n == 2 * hidden) { n >>= 1; quantum_exp++; } /* rounding carried into the next binade */
  int64_t biased = (int64_t)quantum_exp + f->mbits + f->bias;
  int64_t exp_all = (1 << f->ebits) - 1;
  uint32_t man = (uint32_t)(n - hidden);
  bool overflow = f->has_inf ? biased >= exp_all
                             : (biased > exp_all || (biased == exp_all && man == hidden - 1));
  if (overflow) return encode_inf(f, neg);
  return sign_bit | ((uint32_t)biased << f->mbits) | man;
}

static uint32_t encode_double(const fp_format *f, double x) {
  bool neg = signbit(x) != 0;
  if (isnan(x)) return encode_nan(f, neg);
  if (isinf(x)) return encode_inf(f, neg);
  if (x == 0) return (uint32_t)neg << (f->ebits + f->mbits);
  int e;
  double fr = frexp(fabs(x), &e); /* |x| = fr * 2^e, fr in [0.5, 1) */
  uint64_t mag = (uint64_t)ldexp(fr, 53); /* exact: 53 significant bits */
  return encode_exact(f, neg, mag, e - 53);
}

static uint32_t encode_int(const fp_format *f, int64_t v) {
  if (v == 0) return 0;
  bool neg = v < 0;
  uint64_t mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  return encode_exact(f, neg, mag, 0);
}

static double decode(const fp_format *f, uint32_t bits) {
  uint32_t man_mask = (1u << f->mbits) - 1, exp_all = (1u << f->ebits) - 1;
  uint32_t man = bits & man_mask;
  uint32_t exp = (bits >> f->mbits) & exp_all;
  bool neg = (bits >> (f->ebits + f->mbits)) & 1;
  double v;
  if (f->has_inf && exp == exp_all) {
    v = man ? NAN : INFINITY;
  } else if (!f->has_inf && exp == exp_all && man == man_mask) {
    v = NAN;
  } else if (exp == 0) {
    v = ldexp((double)man, 1 - f->bias - f->mbits);
  } else {
    v = ldexp((double)(man | (1u << f->mbits)), (int)exp - f->bias - f->mbits);
  }
  return neg ? -v : v;
}

uint16_t tl_f64_to_f16(double x) { return (uint16_t)encode_double(&FMT_F16, x); }
uint16_t tl_f64_to_bf16(double x) { return (uint16_t)encode_double(&FMT_BF16, x); }
uint8_t tl_f64_to_e4m3(double x) { return (uint8_t)encode_double(&FMT_E4M3, x); }
uint8_t tl_f64_to_e5m2(double x) { return (uint8_t)encode_double(&FMT_E5M2, x); }

static float f32_from_bits(uint32_t b) {
  float r;
  memcpy(&r, &b, sizeof r);
  return r;
}

float tl_f64_to_f32(double x) { return f32_from_bits(encode_double(&FMT_F32, x)); }

float tl_f16_to_f32(uint16_t h) { return (float)decode(&FMT_F16, h); }
float tl_bf16_to_f32(uint16_t h) { return (float)decode(&FMT_BF16, h); }
float tl_e4m3_to_f32(uint8_t b) { return (float)decode(&FMT_E4M3, b); }
float tl_e5m2_to_f32(uint8_t b) { return (float)decode(&FMT_E5M2, b); }

static const fp_format *format_of(tl_dtype dt) {
  switch (dt) {
  case TL_F16: return &FMT_F16;
  case TL_BF16: return &FMT_BF16;
  case TL_F8E4M3: return &FMT_E4M3;
  case TL_F8E5M2: return &FMT_E5M2;
  default: return &FMT_F32;
  }
}

uint32_t tl_float_to_bits(double x, tl_dtype dt) { return encode_double(format_of(dt), x); }

float tl_bits_to_float(uint32_t bits, tl_dtype dt) {
  if (dt == TL_F32) return f32_from_bits(bits);
  return (float)decode(format_of(dt), bits);
}

float tl_round_to_dtype(double x, tl_dtype dt) {
  if (dt == TL_F32) return tl_f64_to_f32(x);
  const fp_format *f = format_of(dt);
  return (float)decode(f, encode_double(f, x));
}

float tl_int_to_float(int64_t x, tl_dtype dt) {
  const fp_format *f = format_of(dt);
  uint32_t bits = encode_int(f, x);
  return dt == TL_F32 ? f32_from_bits(bits) : (float)decode(f, bits);
}

int64_t tl_int_to_int(int64_t x, tl_dtype dt) {
  uint64_t u = (uint64_t)x;
  switch (dt) {
  case TL_I1: return x != 0;
  case TL_I8: return (int8_t)(uint8_t)u;
  case TL_I16: return (int16_t)(uint16_t)u;
  case TL_I32: return (int32_t)(uint32_t)u;
  case TL_U8: return (uint8_t)u;
  default: return x;
  }
}

int64_t tl_float_to_int(double x, tl_dtype dt) {
  if (isnan(x)) return 0;
  if (dt == TL_I1) return x != 0;
  double lo, hi; /* the range, exact in double except i64's top */
  switch (dt) {
  case TL_I8: lo = INT8_MIN; hi = INT8_MAX; break;
  case TL_I16: lo = INT16_MIN; hi = INT16_MAX; break;
  case TL_I32: lo = INT32_MIN; hi = INT32_MAX; break;
  case TL_U8: lo = 0; hi = UINT8_MAX; break;
  default:
    /* i64: 2^63 is not an int64; compare against it exactly. */
    if (x >= 9223372036854775808.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)trunc(x);
  }
  double t = trunc(x);
  if (t <= lo) return (int64_t)lo;
  if (t >= hi) return (int64_t)hi;
  return (int64_t)t;
}
