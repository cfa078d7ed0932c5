/* test_run_tolerance.c: tilec run --device's comparison tolerance (tools/run_tolerance.h): the dtype's
 * atol/rtol, widened to 2^-10 of max|reference| for float outputs of kernels with an 8-bit float dot,
 * never narrowed, and --atol / --rtol still override.  The widened tolerance must still fail the
 * wrong results bench/fp8_acc_model.py models (errors >= 0.2 of max|ref|) and pass its 12-bit
 * accumulation (<= 1.0e-4 of max|ref| beyond rtol). */
#include <criterion/criterion.h>

#include "../../tools/run_tolerance.h"

Test(run_tolerance, dtype_defaults_without_f8_dot) {
  run_tolerance t = run_tolerance_of("bf16", RUN_NO_F8_DOT, 153, -1, -1);
  cr_assert(t.atol == 1e-2 && t.rtol == 1.6e-2 && t.of_max == 0);
  t = run_tolerance_of("f32", RUN_NO_F8_DOT, 1e6, -1, -1);
  cr_assert(t.atol == 1e-4 && t.rtol == 1e-3 && t.of_max == 0);
  t = run_tolerance_of("i32", RUN_F8_DOT, 1e6, -1, -1); /* integers stay exact, even beside an f8 dot */
  cr_assert(t.atol == 0 && t.rtol == 0 && t.of_max == 0);
}

Test(run_tolerance, f8_dot_widens_atol_to_2pow_minus10_of_max_ref) {
  run_tolerance t = run_tolerance_of("bf16", RUN_F8_DOT, 153, -1, -1);
  cr_assert(t.of_max == 0x1p-10);
  cr_assert_float_eq(t.atol, 153.0 / 1024, 1e-12);
  cr_assert(t.rtol == 1.6e-2);
  /* small outputs: never below the dtype's atol */
  t = run_tolerance_of("bf16", RUN_F8_DOT, 5, -1, -1);
  cr_assert(t.atol == 1e-2 && t.of_max == 0);
  /* the model's wrong kernels still fail: a dropped k-block needs 0.195 of max|ref| (K 4096) */
  double max_ref = 231, err = 0.195 * max_ref, ref = 0;
  t = run_tolerance_of("bf16", RUN_F8_DOT, max_ref, -1, -1);
  cr_assert(err > t.atol + t.rtol * ref);
  /* and the 12-bit accumulation passes: 1.0e-4 of max|ref| beyond rtol */
  cr_assert(1.01e-4 * max_ref <= t.atol);
}

/* fp8-acc=fast: 2^-7 of max|ref|; its 12-bit accumulation at K 4096 needs 3.1e-3 of max|ref|, the
 * last 16 columns dropped differs by 7.3e-2 of it */
Test(run_tolerance, f8_fast_widens_to_2pow_minus7) {
  run_tolerance t = run_tolerance_of("bf16", RUN_F8_DOT_FAST, 632, -1, -1);
  cr_assert(t.of_max == 0x1p-7);
  cr_assert_float_eq(t.atol, 632.0 / 128, 1e-12);
  cr_assert(3.1e-3 * 632 <= t.atol && 7.2e-2 * 632 > t.atol);
}

Test(run_tolerance, options_override) {
  run_tolerance t = run_tolerance_of("bf16", RUN_F8_DOT, 153, 0.5, -1);
  cr_assert(t.atol == 0.5 && t.of_max == 0 && t.rtol == 1.6e-2);
  t = run_tolerance_of("bf16", RUN_F8_DOT, 153, -1, 0.1);
  cr_assert(t.of_max == 0x1p-10 && t.rtol == 0.1);
  t = run_tolerance_of("bf16", RUN_F8_DOT, 153, 0, 0);
  cr_assert(t.atol == 0 && t.rtol == 0 && t.of_max == 0);
}
