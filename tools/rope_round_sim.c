/* rope_round_sim.c: replays one round of gpu_test_examples' rope-producer variant (attn_rope.tile's
 * cutlass_attn_rope_fwd, D128, BN 128, TILEC_ROPE_PRODUCER=1) on the CPU, from the run's seed, and
 * says how far the key rotation's rounding alone moves the output against the interpreter's.
 *
 *   cc -O2 -ffp-contract=off -o /tmp/rope_round_sim tools/rope_round_sim.c -lm
 *   /tmp/rope_round_sim SEED CAUSAL R [N]
 *
 * SEED: the "seed N (rerun with TILEC_SEED=N)" line of gpu_test_examples; CAUSAL 0 / 1 and R (0..5:
 * (1,1,1) (1,3,127) (2,1,129) (1,2,1000) (1,1,4097) (2,8,1100), tests/gpu/test_examples.c attn_sizes)
 * pick the round.  The data are the harness's (its splitmix64 stream, gpu_fill_random's values of
 * magnitude 0.1 .. 2 in the parameters' order Q K V COS SIN, the scalar scale in (0.05, 1)), the
 * earlier rounds' draws skipped as `GPU_TEST_VARIANTS_ONLY=1 GPU_TEST_ATTN_VARIANTS=ROPE_PRODUCER`
 * runs them (causal 0 then 1, six sizes each).  N > 1: N rounds of fresh data at that size instead
 * (seeds SEED .. SEED + N - 1, nothing skipped): how often the rotation's rounding alone fails.
 *
 * Both sides compute the same attention (q rotated as the interpreter does, f32 scores, the online
 * softmax over 128-key blocks, p rounded to bf16, f32 P V, O rounded to bf16); they differ only in
 * k's rotation: the interpreter's x1 c - x2 s and x2 c + x1 s with each product and the sum rounded
 * (docs/interpreter.md) against the producer's old FMUL + FFMA (fmaf: x1 c unrounded).  The compare
 * is gpu_compare's for bf16 (rtol 1e-2, atol 1e-2 x max(max |ref|, 1)).  Twentieth session (branch
 * ropefix): seed 1796474304044009, causal 1, R 5 prints the H200's FAIL line exactly (60 mismatches,
 * first at 1283206, -0.125977 vs -0.097168, max abs err 0.0425); causal 0 R 5 and causal 1 R 4 the
 * max errors of the rounds that passed (0.0098, 0.0078). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int64_t sizes[6][3] = {{1, 1, 1}, {1, 3, 127}, {2, 1, 129}, {1, 2, 1000}, {1, 1, 4097}, {2, 8, 1100}};
enum { D = 128, HALF = 64, BM = 128, BN = 128 };

static uint64_t rng;
static uint64_t next(void) { /* tests/gpu/gpu_util.c gpu_rand: splitmix64 */
  uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static double uniform(double lo, double hi) { return lo + (hi - lo) * (double)(next() >> 11) / 9007199254740992.0; }
static float filled(int is_bf16) { /* gpu_fill_random: two draws an element */
  uint64_t r = next();
  float f = (float)(uniform(0.1, 2.0) * ((r & 1) ? -1.0 : 1.0));
  if (is_bf16) { /* truncated: exact in bf16 */
    uint32_t u;
    memcpy(&u, &f, 4);
    u &= 0xffff0000u;
    memcpy(&f, &u, 4);
  }
  return f;
}
static float bf16(float f) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  memcpy(&f, &u, 4);
  return f;
}
static uint64_t round_draws(const int64_t *s) { return 2 * (uint64_t)(3 * s[0] * s[1] * s[2] * D + 2 * s[2] * HALF) + 1; }

/* One round at (Z, H, S); returns the mismatch count. */
static size_t run(int64_t Z, int64_t H, int64_t S, int causal, const char *tag) {
  size_t n = (size_t)(Z * H * S * D), nt = (size_t)S * HALF;
  float *Q = malloc(n * 4), *K = malloc(n * 4), *V = malloc(n * 4), *C = malloc(nt * 4), *Sn = malloc(nt * 4);
  for (size_t i = 0; i < n; i++) Q[i] = filled(1);
  for (size_t i = 0; i < n; i++) K[i] = filled(1);
  for (size_t i = 0; i < n; i++) V[i] = filled(1);
  for (size_t i = 0; i < nt; i++) C[i] = filled(0);
  for (size_t i = 0; i < nt; i++) Sn[i] = filled(0);
  float scale = (float)uniform(0.05, 1.0), qk = scale * 1.4426950408889634f;
  float *Qr = malloc(n * 4), *Kr[2] = {malloc(n * 4), malloc(n * 4)}, *O[2] = {malloc(n * 4), malloc(n * 4)};
  size_t flips = 0;
  for (size_t r = 0; r < n / D; r++) {
    size_t t = r % (size_t)S;
    for (int i = 0; i < HALF; i++) {
      float c = C[t * HALF + i], s = Sn[t * HALF + i];
      float qa = Q[r * D + i], qb = Q[r * D + HALF + i], ka = K[r * D + i], kb = K[r * D + HALF + i];
      float a = qa * c, b = qb * s, e = qb * c, f = qa * s;
      Qr[r * D + i] = bf16(a - b), Qr[r * D + HALF + i] = bf16(e + f);
      float x1c = ka * c, x2s = kb * s, x2c = kb * c, x1s = ka * s;
      Kr[0][r * D + i] = bf16(x1c - x2s), Kr[0][r * D + HALF + i] = bf16(x2c + x1s); /* the interpreter */
      Kr[1][r * D + i] = bf16(fmaf(ka, c, -x2s)), Kr[1][r * D + HALF + i] = bf16(fmaf(kb, c, x1s)); /* FMUL + FFMA */
      flips += (Kr[0][r * D + i] != Kr[1][r * D + i]) + (Kr[0][r * D + HALF + i] != Kr[1][r * D + HALF + i]);
    }
  }
  float sc[BN], acc[D];
  for (int v = 0; v < 2; v++)
    for (int64_t bh = 0; bh < Z * H; bh++)
      for (int64_t row = 0; row < S; row++) {
        const float *q = Qr + ((size_t)bh * S + row) * D;
        int64_t m0 = row / BM * BM, hi = causal ? (S < m0 + BM ? S : m0 + BM) : S;
        float m = -INFINITY, l = 0;
        memset(acc, 0, sizeof acc);
        for (int64_t n0 = 0; n0 < hi; n0 += BN) {
          float mx = -INFINITY;
          for (int j = 0; j < BN; j++) {
            int64_t col = n0 + j;
            float s = -INFINITY;
            if (col < S && (!causal || row >= col)) {
              const float *k = Kr[v] + ((size_t)bh * S + col) * D;
              s = 0;
              for (int d = 0; d < D; d++) s += q[d] * k[d];
            }
            sc[j] = s;
            mx = s > mx ? s : mx;
          }
          float mn = fmaxf(m, mx * qk), alpha = exp2f(m - mn), sum = 0;
          for (int d = 0; d < D; d++) acc[d] *= alpha;
          for (int j = 0; j < BN; j++) {
            float p = exp2f(sc[j] * qk - mn), pb = bf16(p);
            sum += p;
            if (pb == 0) continue;
            const float *vv = V + ((size_t)bh * S + n0 + j) * D;
            for (int d = 0; d < D; d++) acc[d] += pb * vv[d];
          }
          l = l * alpha + sum;
          m = mn;
        }
        for (int d = 0; d < D; d++) O[v][((size_t)bh * S + row) * D + d] = bf16(acc[d] * (1.0f / l));
      }
  double maxref = 0, maxerr = 0;
  for (size_t i = 0; i < n; i++) maxref = fabs(O[0][i]) > maxref ? fabs(O[0][i]) : maxref;
  double atol = 1e-2 * (maxref > 1 ? maxref : 1);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)O[1][i] - O[0][i]);
    maxerr = e > maxerr ? e : maxerr;
    if (e > atol + 1e-2 * fabs(O[0][i]) && !bad++) first = i;
  }
  printf("%s [Z=%lld H=%lld S=%lld] causal %d, scale %.3f: %zu of %zu rotated k elements differ in bf16 (fused vs "
         "rounded); O: %zu mismatches, max abs err %.3g",
         tag, (long long)Z, (long long)H, (long long)S, causal, scale, flips, n, bad, maxerr);
  if (bad)
    printf(", first at %zu (z %zu h %zu row %zu col %zu): fused %.9g, interpreter %.9g", first,
           first / D / (size_t)S / (size_t)H, first / D / (size_t)S % (size_t)H, first / D % (size_t)S, first % D,
           O[1][first], O[0][first]);
  printf("\n");
  free(Q), free(K), free(V), free(C), free(Sn), free(Qr), free(Kr[0]), free(Kr[1]), free(O[0]), free(O[1]);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s SEED CAUSAL R [N]\n", argv[0]);
    return 2;
  }
  uint64_t seed = strtoull(argv[1], NULL, 0);
  int causal = atoi(argv[2]), R = atoi(argv[3]), N = argc > 4 ? atoi(argv[4]) : 1;
  if (R < 0 || R > 5 || (causal != 0 && causal != 1)) return 2;
  const int64_t *s = sizes[R];
  if (N > 1) { /* fresh data each round */
    int failed = 0;
    for (int i = 0; i < N; i++) {
      rng = seed + (uint64_t)i;
      char tag[64];
      snprintf(tag, sizeof tag, "seed %llu", (unsigned long long)(seed + (uint64_t)i));
      failed += run(s[0], s[1], s[2], causal, tag) > 0;
    }
    printf("%d of %d rounds would fail on the rounding of k's rotation alone\n", failed, N);
    return 0;
  }
  rng = seed;
  for (int c = 0; c <= causal; c++) /* the rounds gpu_test_examples runs before this one */
    for (int r = 0; r < (c < causal ? 6 : R); r++) rng += round_draws(sizes[r]) * 0x9E3779B97F4A7C15ULL;
  char tag[64];
  snprintf(tag, sizeof tag, "seed %llu round %d:%d", (unsigned long long)seed, causal, R);
  run(s[0], s[1], s[2], causal, tag);
  return 0;
}
