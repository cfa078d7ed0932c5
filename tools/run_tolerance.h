/* run_tolerance.h: the tolerance of `tilec run --device`'s GPU-vs-interpreter comparison, per output
 * dtype, widened for kernels with an 8-bit float dot (docs/cli.md "Tolerances for 8-bit float dots").  Header-only: the
 * CLI (tools/tilec.c) and its unit test (tests/unit/test_run_tolerance.c) include it. */
#ifndef TILEC_RUN_TOLERANCE_H
#define TILEC_RUN_TOLERANCE_H
#include <math.h>
#include <string.h>

/* An 8-bit float dot's absolute tolerance, as a fraction of the output's largest |reference|: the
 * tensor cores sum fp8 products with about 13 bits (not f32's 24), an error proportional to the
 * magnitudes the sum is made of, not to the (possibly cancelled, near-zero) output.  bench/
 * fp8_acc_model.py: that error needs 4e-5 (13 bits) .. 1e-4 (12 bits) of max|ref| at K 1040 and
 * 4096; a dropped k-block, a doubled scale or one wrong tile differs by 0.2 .. 1.4 of it. */
#define RUN_F8_DOT_ATOL_OF_MAX 0x1p-10
/* The same under fp8-acc=fast (TILEC_KERNEL_DOT_F8_FAST): the reduced-precision sum runs over all of K
 * and its truncation toward zero adds up: 1.7e-3 (13 bits) .. 3.1e-3 (12 bits) of max|ref| at K 4096
 * (growing as sqrt(K)); wrong results (a dropped k-block, the last 16 columns) 7e-2 and more. */
#define RUN_F8_FAST_ATOL_OF_MAX 0x1p-7

typedef enum run_f8_dot { RUN_NO_F8_DOT = 0, RUN_F8_DOT = 1, RUN_F8_DOT_FAST = 2 } run_f8_dot;

typedef struct run_tolerance {
  double atol, rtol;
  double of_max;   /* > 0: atol was widened to of_max * max|ref| (an 8-bit float dot), above the dtype's */
} run_tolerance;

/* About two units in the last place of the output's type, as accumulation order and fast math
 * functions differ; integers exact.  f8_dot: the kernel has a dot of 8-bit float operands
 * (TILEC_KERNEL_DOT_F8; RUN_F8_DOT_FAST with TILEC_KERNEL_DOT_F8_FAST), max_ref the largest finite
 * |reference| of the output: atol becomes max(atol, 2^-10 max_ref) (fast: 2^-7) for float outputs.  atol_opt / rtol_opt >= 0 (--atol / --rtol) replace
 * the computed values, and an --atol turns the widening off. */
static inline run_tolerance run_tolerance_of(const char *dtype, run_f8_dot f8_dot, double max_ref, double atol_opt,
                                             double rtol_opt) {
  run_tolerance t = {0, 0, 0};
  if (!strcmp(dtype, "f32")) t.atol = 1e-4, t.rtol = 1e-3;
  else if (!strcmp(dtype, "f16")) t.atol = 1e-3, t.rtol = 4e-3;
  else if (!strcmp(dtype, "bf16")) t.atol = 1e-2, t.rtol = 1.6e-2;
  else if (!strcmp(dtype, "f8e4m3")) t.atol = 3e-2, t.rtol = 0.13;
  else if (!strcmp(dtype, "f8e5m2")) t.atol = 6e-2, t.rtol = 0.26;
  bool is_float = t.rtol > 0;
  double of_max = f8_dot == RUN_F8_DOT_FAST ? RUN_F8_FAST_ATOL_OF_MAX : f8_dot ? RUN_F8_DOT_ATOL_OF_MAX : 0;
  if (of_max > 0 && is_float && atol_opt < 0 && of_max * max_ref > t.atol) {
    t.atol = of_max * max_ref;
    t.of_max = of_max;
  }
  if (atol_opt >= 0) t.atol = atol_opt;
  if (rtol_opt >= 0) t.rtol = rtol_opt;
  return t;
}
#endif
