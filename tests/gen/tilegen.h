/* tilegen.h: a random generator of valid .tile kernels (Csmith / YARPGen
 * style) for differential testing: front-end + passes vs. the interpreter
 * today (tests/unit/test_differential.c), GPU vs. interpreter later.
 *
 * From a seed, tg_generate() writes one kernel that the front-end must
 * accept, deterministic per seed, free of undefined and NaN-producing
 * behaviour by construction: every value carries a bound on its magnitude
 * (from the suggested sizes and scalar values below), divisions and
 * remainders have guarded divisors (abs(y) + 1), logs and roots take
 * abs(x) (+ 1), exp/exp2 take min(x, c), and a value whose bound grows too
 * far is brought back (tanh, an exact power-of-two scale, a clamp, `% 1000`).
 * So no inf or NaN arises when the kernel is run with the suggested sizes,
 * the suggested scalar values and input data from tg_fill_input().
 *
 * The description next to the source (tg_kernel.params) is all a launcher
 * needs: each parameter's name, kind, dtype, concrete shape (row-major,
 * compact), scalar value, and whether it is an output.  Outputs are written
 * only where a program stores; the harness poisons them first
 * (tg_poison_output) and compares every byte.  No two programs store to the
 * same element and no store sits inside a loop or an if, so the kernels are
 * race-free on a GPU too.
 *
 * The library is plain C11 with no dependency on tilec (a GPU test linking
 * only libtilec.so can use it). */
#ifndef TILEC_TILEGEN_H
#define TILEC_TILEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TG_MAX_PARAMS 16

/* Element types of parameters (tensors and scalars).  Tiles inside the kernel
 * also use i1; it never crosses the kernel boundary. */
typedef enum tg_dtype { TG_F32, TG_BF16, TG_I32 } tg_dtype;

typedef struct tg_param {
  char name[16];
  bool is_tensor;
  bool is_output;   /* written by the kernel; poison before launch */
  tg_dtype dtype;
  int rank;         /* tensors: 1..3 */
  int64_t shape[4]; /* tensors: suggested sizes (compact row-major storage) */
  /* scalars: the value to pass (the bounds were computed for it) */
  int64_t ival;     /* i32 */
  double fval;      /* f32 (exactly representable) */
} tg_param;

typedef struct tg_sym { char name[8]; int64_t value; } tg_sym;

typedef struct tg_options {
  bool no_dot;           /* no dot(): e.g. a back end without small-shape mma */
  bool no_transcendental; /* no exp/exp2/log/log2/sqrt/rsqrt/sin/cos/tanh/sigmoid */
  int max_stmts;         /* top-level statements; 0 = default (10) */
  bool read_after_write; /* also store into an output slot and load it back
                            (in one program, top level only; on a GPU this
                            needs the store visible to other threads) */
  /* A fuzzer's input: when set, the generator's random decisions are read
   * from these bytes first (one byte a decision), then from the seed.  Every
   * sequence of decisions gives a valid kernel, so a mutated byte changes one
   * choice of a valid kernel (libFuzzer's coverage then steers the choices). */
  const uint8_t *choices;
  size_t nchoices;
  /* Also statements that feed a transcendental result into a discontinuous
   * op, as users write it (`where(exp(x) > t, ...)`): a comparison, a where, a
   * floor, a cast to i32 or a float % (top level only; needs transcendental
   * functions on).  Each is described in tg_kernel.guards, so a checker can
   * accept a result that flipped where the interpreter's operand is within
   * the stated .approx error of the discontinuity (tests/gpu/test_random.c). */
  bool approx_compare;
} tg_options;

/* A guarded statement of approx_compare: a = fn(x) (f32, x exact), then
 *   TG_GUARD_CMP    r = (a op t)            (i1, stored as i32 0 / 1)
 *   TG_GUARD_WHERE  r = where(a op t, x, y) (f32)
 *   TG_GUARD_FLOOR  r = floor(a)            (f32)
 *   TG_GUARD_TRUNC  r = cast<i32>(a)        (i32)
 *   TG_GUARD_FMOD   r = a % t_value         (f32, t_value a power of two)
 * Every value is stored whole (an output slot each, all of one shape, so
 * element j of one slot goes with element j of the others); t is a slot or
 * the constant t_value. */
typedef enum tg_guard_kind { TG_GUARD_CMP, TG_GUARD_WHERE, TG_GUARD_FLOOR, TG_GUARD_TRUNC, TG_GUARD_FMOD } tg_guard_kind;
typedef struct tg_slot { int out; /* 0: OF, 1: OB, 2: OI; -1: none */ int slot; } tg_slot;
typedef struct tg_guard {
  tg_guard_kind kind;
  char fn[8];  /* the function of a: exp, exp2, log, log2, rsqrt, sin, cos, tanh, sigmoid */
  char op[4];  /* CMP, WHERE: < <= > >= == != */
  tg_slot r, a, t, x, y;
  double t_value; /* CMP, WHERE when t.out < 0: the threshold; FMOD: the divisor */
} tg_guard;
#define TG_MAX_GUARDS 8

typedef struct tg_kernel {
  uint64_t seed;
  char name[32];           /* the kernel's name, "gen_<seed>" */
  char *source;            /* malloc'd, NUL-terminated .tile text */
  int nparams;
  tg_param params[TG_MAX_PARAMS]; /* in declaration order */
  int nsyms;
  tg_sym syms[4];          /* shape symbols (M, N) and their suggested sizes */
  int tile_m, tile_n;      /* the tile constants BM, BN */
  int64_t grid[3];         /* the grid the suggested sizes give */
  int nguards;             /* approx_compare: the guarded statements */
  tg_guard guards[TG_MAX_GUARDS];
} tg_kernel;

/* Generate the kernel of `seed` into *k (opts may be NULL: defaults).
 * Returns false only on out-of-memory.  Free with tg_kernel_free. */
bool tg_generate(uint64_t seed, const tg_options *opts, tg_kernel *k);
void tg_kernel_free(tg_kernel *k);

const char *tg_dtype_name(tg_dtype t);  /* "f32", "bf16", "i32" */
size_t tg_dtype_bytes(tg_dtype t);      /* 4, 2, 4 */
int64_t tg_param_numel(const tg_param *p); /* tensors: product of shape; scalars 1 */

/* Fill an input tensor (compact row-major, numel elements of p->dtype) with
 * random non-zero data, deterministic per (seed, p): floats are k/64 for an
 * integer k in [-128, 128] \ {0} (exact in bf16, |x| <= 2), ints are in
 * [-50, 50] \ {0}.  bf16 is written as its 16-bit pattern. */
void tg_fill_input(const tg_param *p, uint64_t seed, void *data);
/* Fill an output tensor with 0xFF bytes (NaN for f32 and bf16, -1 for i32). */
void tg_poison_output(const tg_param *p, void *data);

#endif
