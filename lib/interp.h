/* interp.h: the CPU interpreter of tile IR, the oracle for every GPU test.
 * Runs one kernel over its whole grid on host memory.  f32 arithmetic is
 * IEEE binary32 (each op rounded to f32), f16/bf16/fp8 values are rounded
 * to nearest-even on every cast/store (lib/fpconv.h).
 *
 * Decisions (interp engineer; the full list is docs/interpreter.md):
 *  - f16/bf16/fp8 tiles are computed in f32 and rounded to their dtype after
 *    every op; exp/log/sin/... are computed in double and rounded once.
 *  - Integers wrap at their width; x / 0 and x % 0 give 0; INT_MIN / -1
 *    wraps to INT_MIN (and % gives 0); shift amounts outside [0, width) give
 *    0 (shl, logical shr) or the sign fill (arithmetic shr), as PTX clamps.
 *  - min/max on floats propagate NaN and order -0 < +0; cmp ne is true on NaN.
 *  - dot: a, b exactly to f32; sum_k a*b in f32 in k order, then acc + sum.
 *  - for with a step <= 0 is an error (message), never an endless loop.
 *  - Limits: at most 2^31 programs, TL_MAX_TILE_ELEMS elements per tile;
 *    tensor sizes below 2^31 (dim gives i32); strides of any sign. */
#ifndef TILEC_INTERP_H
#define TILEC_INTERP_H

#include "ir.h"

typedef struct tl_arg {
  bool is_tensor;
  /* tensor */
  void *data;                    /* host pointer to element [0,0,...] */
  tl_dtype dtype;
  int rank;
  int64_t shape[TL_MAX_RANK];
  int64_t strides[TL_MAX_RANK];  /* in elements */
  /* scalar (converted to the parameter's type) */
  int64_t i;
  double f;
  bool is_float;                 /* which of i / f holds the scalar */
} tl_arg;

/* Check args against f's signature (dtype, rank, shape symbols agree,
 * constant dims).  On failure writes a one-line reason to err (size n) and
 * returns false. */
bool tl_check_args(const tl_func *f, const tl_arg *args, int nargs, char *err, size_t n);
/* Evaluate the grid region: grid[0..2] (missing dims are 1).  false + err on
 * a grid that is negative or overflows, or a false `require` (its checks, in the grid region;
 * err is then a whole diagnostic: tl_require_is_failure, lib/require.h). */
bool tl_eval_grid(const tl_func *f, const tl_arg *args, int nargs, int64_t grid[3], char *err, size_t n);
/* The grid evaluator of a launcher: everything allocated once at kernel load,
 * so a launch (tl_grid_eval_run) allocates nothing.  Args must have passed
 * tl_check_args.  NULL + err when f's grid region is not all scalar ops. */
typedef struct tl_grid_eval tl_grid_eval;
tl_grid_eval *tl_grid_eval_new(const tl_func *f, char *err, size_t n);
bool tl_grid_eval_run(tl_grid_eval *g, const tl_arg *args, int nargs, int64_t grid[3], char *err, size_t n);
/* The advice when a grid axis past 0 exceeds its limit (65535), the interpreter's and the JIT launcher's alike. */
#define TL_GRID_AXIS0_ADVICE \
  "put the largest grid dimension on axis 0, e.g. grid(Z * H, cdiv(S, BM)) rather than grid(cdiv(S, BM), Z * H)"
void tl_grid_eval_free(tl_grid_eval *g);
/* Run every program of the grid.  false + err on failure (bad args, limits). */
bool tl_interpret_func(tl_func *f, const tl_arg *args, int nargs, char *err, size_t n);

#endif
