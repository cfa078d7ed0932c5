/* test_run_tolerance.c: tilec run --device's comparison tolerance (tools/run_tolerance.h): the dtype's
 * atol/rtol, widened to 2^-10 of max|reference| for float outputs of kernels with an 8-bit float dot,
 * never narrowed, and --atol / --rtol still override.  The widened tolerance must still fail the
 * wrong results bench/fp8_acc_model.py models (errors >= 0.2 of max|ref|) and pass its 12-bit
 * accumulation (<= 1.0e-4 of max|ref| beyond rtol). */
#include <criterion/criterion.h>

#include "../../tools/run_tolerance.h"

Test(run_tolerance, dtype_defaults_without_f8_dot) {
  run_tolerance t = run_tolerance_of("bf16", false, 153, -1, -1);
  cr_assert(t.atol == 1e-2 && t.rtol == 1.6e-2 && !t.f8_widened);
  t = run_tolerance_of("f32", false, 1e6, -1, -1);
  cr_assert(t.atol == 1e-4 && t.rtol == 1e-3 && !t.f8_widened);
  t = run_tolerance_of("i32", true, 1e6, -1, -1); /* integers stay exact, even beside an f8 dot */
  cr_assert(t.atol == 0 && t.rtol == 0 && !t.f8_widened);
}

Test(run_tolerance, f8_dot_widens_atol_to_2pow_minus10_of_max_ref) {
  run_tolerance t = run_tolerance_of("bf16", true, 153, -1, -1);
  cr_assert(t.f8_widened);
  cr_assert_float_eq(t.atol, 153.0 / 1024, 1e-12);
  cr_assert(t.rtol == 1.6e-2);
  /* small outputs: never below the dtype's atol */
  t = run_tolerance_of("bf16", true, 5, -1, -1);
  cr_assert(t.atol == 1e-2 && !t.f8_widened);
  /* the model's wrong kernels still fail: a dropped k-block needs 0.195 of max|ref| (K 4096) */
  double max_ref = 231, err = 0.195 * max_ref, ref = 0;
  t = run_tolerance_of("bf16", true, max_ref, -1, -1);
  cr_assert(err > t.atol + t.rtol * ref);
  /* and the 12-bit accumulation passes: 1.0e-4 of max|ref| beyond rtol */
  cr_assert(1.01e-4 * max_ref <= t.atol);
}

Test(run_tolerance, options_override) {
  run_tolerance t = run_tolerance_of("bf16", true, 153, 0.5, -1);
  cr_assert(t.atol == 0.5 && !t.f8_widened && t.rtol == 1.6e-2);
  t = run_tolerance_of("bf16", true, 153, -1, 0.1);
  cr_assert(t.f8_widened && t.rtol == 0.1);
  t = run_tolerance_of("bf16", true, 153, 0, 0);
  cr_assert(t.atol == 0 && t.rtol == 0 && !t.f8_widened);
}
