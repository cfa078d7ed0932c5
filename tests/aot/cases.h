/* cases.h: the launches both sides of the AOT test make (consumer.c through
 * the generated launchers only, jit_ref.c through libtilec): ragged sizes,
 * padded and odd row strides (tensor maps encoded or not), scalars, fake
 * device addresses (aligned, and misaligned for the error cases), and
 * argument errors (rmsnorm's require(C <= BC) false among them).  Plain C, no tilec header: the consumer must build from
 * the generated files alone. */
#ifndef TILEC_AOT_CASES_H
#define TILEC_AOT_CASES_H

#include <stdint.h>

enum { K_RMSNORM, K_GEMM, K_ATTN, K_CUTLASS_ATTN };
typedef struct aot_case {
  int kernel;
  int ntensors;
  uint64_t ptr[4];
  int64_t shape[4][4], strides[4][4];
  float scalar;
  int expect_error; /* the arguments are wrong: both sides must refuse them */
} aot_case;

static uint64_t aot_rng = 0x1234567ull;
static uint64_t aot_next(void) {
  uint64_t z = (aot_rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int64_t aot_range(int64_t lo, int64_t hi) { return lo + (int64_t)(aot_next() % (uint64_t)(hi - lo + 1)); }

#define AOT_NCASES 104
/* Cases 96..103: a TMA kernel's launches switching between its two forms (docs/aot.md "Two
 * images"): gemm and cutlass_attn_fwd with every tensor a map can take, then an offset view (the
 * data one element past a 16-byte boundary), then an odd row stride, then fitting again. */
static aot_case aot_switch(int i) {
  aot_case c = {0};
  int step = (i - 96) % 4;
  for (int t = 0; t < 4; t++) c.ptr[t] = 0x7f0000000000ull + 0x10000000ull * (uint64_t)t;
  c.scalar = 0.125f;
  if (i < 100) {
    int64_t M = 300, N = 520, K = 600, ldB = step == 2 ? 517 : N;
    c.kernel = K_GEMM;
    c.ntensors = 3;
    int64_t sh[3][2] = {{M, K}, {K, step == 2 ? 517 : N}, {M, step == 2 ? 517 : N}}, ld[3] = {K, ldB, ldB};
    for (int t = 0; t < 3; t++) {
      c.shape[t][0] = sh[t][0]; c.shape[t][1] = sh[t][1];
      c.strides[t][0] = ld[t]; c.strides[t][1] = 1;
    }
    if (step == 1) c.ptr[0] += 2; /* A[0, 1:] */
    return c;
  }
  c.kernel = K_CUTLASS_ATTN;
  c.ntensors = 4;
  for (int t = 0; t < 4; t++) {
    int64_t sh[4] = {2, 3, 200, 64}, s = 1;
    for (int d = 3; d >= 0; d--) {
      c.shape[t][d] = sh[d];
      c.strides[t][d] = s;
      s *= d == 3 && step == 2 && t == 2 ? 65 : sh[d]; /* V's rows 65 elements apart (130 bytes) */
    }
  }
  if (step == 1) c.ptr[1] += 2; /* K shifted by one element */
  return c;
}

/* Case i (deterministic: call in order 0, 1, ...). */
static aot_case aot_make(int i) {
  if (i >= 96) return aot_switch(i);
  aot_case c = {0};
  c.kernel = i % 4;
  for (int t = 0; t < 4; t++) c.ptr[t] = 0x7f0000000000ull + 0x10000000ull * (uint64_t)t + 256u * (uint64_t)aot_range(0, 3);
  if (aot_range(0, 3) == 0) c.ptr[0] += 2; /* 2-byte aligned, not 16: no tensor map */
  c.scalar = (float)aot_range(1, 1000) / 997.0f;
  if (c.kernel == K_RMSNORM) {
    int64_t R = aot_range(0, 40), C = aot_range(1, 4096), pad = aot_range(0, 2) * aot_range(0, 9);
    if (i % 16 == 8) { C = 4096 + aot_range(1, 900); c.expect_error = 1; } /* C > BC: require(C <= BC) */
    c.ntensors = 3;
    int64_t xs[2] = {R, C}, ws[1] = {C};
    for (int t = 0; t < 3; t++) {
      int rank = t == 1 ? 1 : 2;
      for (int d = 0; d < rank; d++) c.shape[t][d] = t == 1 ? ws[d] : xs[d];
      c.strides[t][rank - 1] = 1;
      if (rank == 2) c.strides[t][0] = C + (t == 0 ? pad : 0);
    }
    if (i % 16 == 4) { c.ptr[1] += 1; c.expect_error = 1; }          /* W not 2-byte aligned */
  } else if (c.kernel == K_GEMM) {
    int64_t M = aot_range(1, 700), N = aot_range(1, 700), K = aot_range(1, 700);
    /* leading dimensions: 16-byte multiples (tensor maps encoded) or anything (not) */
    int64_t ldA = aot_range(0, 1) ? (K + 7) / 8 * 8 + 8 * aot_range(0, 2) : K + aot_range(0, 7);
    int64_t ldB = aot_range(0, 1) ? (N + 7) / 8 * 8 + 8 * aot_range(0, 2) : N + aot_range(0, 7);
    c.ntensors = 3;
    int64_t sh[3][2] = {{M, K}, {K, N}, {M, N}}, ld[3] = {ldA, ldB, N};
    for (int t = 0; t < 3; t++) {
      c.shape[t][0] = sh[t][0]; c.shape[t][1] = sh[t][1];
      c.strides[t][0] = ld[t]; c.strides[t][1] = 1;
    }
    if (i % 16 == 5) { c.shape[1][0] += 1; c.expect_error = 1; }     /* K disagrees */
  } else {
    int64_t Z = aot_range(1, 3), H = aot_range(1, 5), S = aot_range(1, 600), D = 64;
    c.ntensors = 4;
    for (int t = 0; t < 4; t++) {
      c.shape[t][0] = Z; c.shape[t][1] = H; c.shape[t][2] = S; c.shape[t][3] = D;
      int64_t s = 1;
      for (int d = 3; d >= 0; d--) { c.strides[t][d] = s; s *= c.shape[t][d]; }
    }
    if (aot_range(0, 2) == 0) { /* [Z, S, H, D] storage seen as [Z, H, S, D] */
      c.strides[1][1] = D; c.strides[1][2] = H * D; c.strides[1][0] = S * H * D;
    }
    if (i % 16 == 6) { c.shape[3][3] = 32; c.expect_error = 1; }     /* D is the constant 64 */
  }
  return c;
}

#endif
