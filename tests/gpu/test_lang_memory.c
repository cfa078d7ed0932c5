/* test_lang_memory.c: the language's scalar loads, gathers, scatters,
 * atomics and random numbers on the GPU against the CPU interpreter, at
 * ragged sizes, on fresh random data (the seed is printed).  Gathers, scalar
 * loads, integer atomics, float max/min and rand/randn/randint must agree bit
 * for bit; float atomic adds within the reordering a sum allows.  Outputs a
 * store writes are poisoned (NaN bytes) on both sides; tensors that atomics
 * update start from the same random values on both sides.
 *   usage: gpu_test_lang_memory   (exit 0 pass, 1 fail, 77 skip) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

enum { IN_RANDOM, IN_INDEX, IN_PERM, OUT_POISON, OUT_UPDATE };  /* how a tensor starts */
enum { CMP_NONE, CMP_EXACT, CMP_CLOSE, CMP_SUM };                /* how it is compared */
/* CMP_SUM: lo = the rows one program adds (the adds per element are cdiv(size 0, lo) + 1) */

typedef struct tspec {
  int init, cmp;
  int lo, hi; /* IN_INDEX: uniform in [lo, size + hi); IN_PERM: every lo-th entry outside */
  int sym;    /* IN_INDEX, IN_PERM: size = the size of this shape symbol (order of first appearance) */
} tspec;

typedef struct lcase {
  const char *name, *src;
  tspec t[8];
  int64_t sizes[4][4]; /* per round, per symbol (in order of first appearance) */
  int64_t seed_arg;    /* value of a scalar parameter */
} lcase;

static const lcase cases[] = {
    {"gather_rows",
     "kernel gather_rows(T: tensor<bf16>[V, D], I: tensor<i32>[M], Y: tensor<bf16>[M, D])\n"
     "    tiles(BM = 16, BD = 64) grid(cdiv(M, BM), cdiv(D, BD))\n"
     "{\n"
     "    m0 = program_id(0) * BM;\n"
     "    d0 = program_id(1) * BD;\n"
     "    idx = load(I[m0 : m0 + BM], other = -1);\n"
     "    store(Y[m0 : m0 + BM, d0 : d0 + BD], load(T[idx, d0 : d0 + BD], other = 2.0));\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {IN_INDEX, CMP_NONE, -3, 3, 0}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {37, 100, 129, 5}, {1000, 64, 17, 5}, {5, 1001, 3, 5}}, 0},
    {"scatter_rows",
     "kernel scatter_rows(X: tensor<f32>[M, D], I: tensor<i32>[M], Z: tensor<f32>[R, D])\n"
     "    tiles(BM = 32, BD = 32) grid(cdiv(M, BM), cdiv(D, BD))\n"
     "{\n"
     "    m0 = program_id(0) * BM;\n"
     "    d0 = program_id(1) * BD;\n"
     "    idx = load(I[m0 : m0 + BM], other = -1);\n"
     "    store(Z[idx, d0 : d0 + BD], load(X[m0 : m0 + BM, d0 : d0 + BD]));\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {IN_PERM, CMP_NONE, 7, 0, 2}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 3, 1}, {37, 100, 70, 1}, {500, 33, 600, 1}, {3, 257, 9, 1}}, 0},
    {"gather_cols",
     "kernel gather_cols(T: tensor<f32>[R, C], J: tensor<i32>[N], Y: tensor<f32>[R, N])\n"
     "    tiles(BR = 8, BN = 64) grid(cdiv(R, BR), cdiv(N, BN))\n"
     "{\n"
     "    r0 = program_id(0) * BR;\n"
     "    n0 = program_id(1) * BN;\n"
     "    j = load(J[n0 : n0 + BN], other = -1);\n"
     "    store(Y[r0 : r0 + BR, n0 : n0 + BN], load(T[r0 : r0 + BR, j]));\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {IN_INDEX, CMP_NONE, -2, 2, 1}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {33, 70, 129, 1}, {9, 5, 300, 1}, {100, 1, 7, 1}}, 0},
    {"scalar_load",
     "kernel scalar_load(T: tensor<i32>[B, P], J: tensor<i32>[B], Y: tensor<i32>[B], W: tensor<f32>[B, P])\n"
     "    grid(B)\n"
     "{\n"
     "    b = program_id(0);\n"
     "    j = load(J[b]);\n"
     "    store(Y[b], load(T[b, j], other = -7) * 2 + cast<i32>(load(W[b, P - 1 - j])));\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {IN_INDEX, CMP_NONE, -2, 2, 1}, {OUT_POISON, CMP_EXACT}, {IN_RANDOM, CMP_NONE}},
     {{1, 1, 1, 1}, {37, 5, 1, 1}, {129, 64, 1, 1}, {3, 301, 1, 1}}, 0},
    {"atomics",
     "kernel atomics(X: tensor<f32>[R, C], L: tensor<i32>[R], S: tensor<f32>[C], H: tensor<i32>[NB],\n"
     "               MX: tensor<f32>[C], MN: tensor<i32>[C], HS: tensor<f16>[C], G: tensor<f32>[2])\n"
     "    tiles(BR = 16, BC = 64) grid(cdiv(R, BR), cdiv(C, BC))\n"
     "{\n"
     "    r0 = program_id(0) * BR;\n"
     "    c0 = program_id(1) * BC;\n"
     "    x = load(X[r0 : r0 + BR, c0 : c0 + BC]);\n"
     "    atomic_add(S[c0 : c0 + BC], reduce_sum(x, 0));\n"
     "    atomic_max(MX[c0 : c0 + BC], reduce_max(load(X[r0 : r0 + BR, c0 : c0 + BC], other = -inf), 0));\n"
     "    atomic_min(MN[c0 : c0 + BC], reduce_min(cast<i32>(load(X[r0 : r0 + BR, c0 : c0 + BC], other = 99.0) * 64.0), 0));\n"
     "    atomic_add(HS[c0 : c0 + BC], cast<f16>(reduce_sum(x, 0)));\n"
     "    atomic_min(G[0], reduce_min(reduce_min(load(X[r0 : r0 + BR, c0 : c0 + BC], other = inf), 1), 0));\n"
     "    atomic_max(G[1], reduce_max(reduce_max(load(X[r0 : r0 + BR, c0 : c0 + BC], other = -inf), 1), 0));\n"
     "    if program_id(1) == 0 {\n"
     "        atomic_add(H[load(L[r0 : r0 + BR], other = -1)], 1);\n"
     "    }\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {IN_INDEX, CMP_NONE, -1, 1, 2}, {OUT_UPDATE, CMP_SUM, 16}, {OUT_UPDATE, CMP_EXACT},
      {OUT_UPDATE, CMP_EXACT}, {OUT_UPDATE, CMP_EXACT}, {OUT_UPDATE, CMP_SUM, 16}, {OUT_UPDATE, CMP_EXACT}},
     {{1, 1, 1, 1}, {65, 63, 7, 1}, {257, 130, 3, 1}, {1000, 5, 13, 1}}, 0},
    {"scans",
     "kernel scans(X: tensor<f32>[R, C], S: tensor<f32>[R, C], M: tensor<f32>[R, C], AX: tensor<i32>[R],\n"
     "             Q: tensor<i32>[R, C], H: tensor<bf16>[R, C], AN: tensor<i32>[R, 8])\n"
     "    tiles(BR = 8, BC = 256) grid(cdiv(R, BR))\n"
     "{\n"
     "    r0 = program_id(0) * BR;\n"
     "    x = load(X[r0 : r0 + BR, 0 : BC], other = -inf);\n"
     "    store(S[r0 : r0 + BR, 0 : BC], cumsum(load(X[r0 : r0 + BR, 0 : BC]), 1));\n"
     "    store(M[r0 : r0 + BR, 0 : BC], cummax(x, 0));\n"
     "    store(AX[r0 : r0 + BR], argmax(x, 1));\n"
     "    store(Q[r0 : r0 + BR, 0 : BC], cumsum(cast<i32>(x * 4.0), 1));\n"
     "    store(H[r0 : r0 + BR, 0 : BC], cumsum(cast<bf16>(load(X[r0 : r0 + BR, 0 : BC])), 1));\n"
     "    xs = load(X[r0 : r0 + BR, 0 : 8], other = inf);\n"
     "    store(AN[r0, 0 : 8], argmin(xs, 0));\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT},
      {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {9, 255, 1, 1}, {100, 256, 1, 1}, {1, 33, 1, 1}}, 0},
    {"slices",
     "kernel slices(X: tensor<bf16>[R, D], Y: tensor<bf16>[R, D], Z: tensor<bf16>[R, 16])\n"
     "    tiles(BR = 16, BD = 128) grid(cdiv(R, BR))\n"
     "{\n"
     "    r0 = program_id(0) * BR;\n"
     "    x = load(X[r0 : r0 + BR, 0 : BD]);\n"
     "    store(Y[r0 : r0 + BR, 0 : BD], cat(-x[:, BD / 2 : BD], x[:, 0 : BD / 2], 1));\n"
     "    store(Z[r0 : r0 + BR, 0 : 16], cat(x[0 : 8, 16 : 32], x[8 : 16, 0 : 16], 0));\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {17, 128, 1, 1}, {100, 65, 1, 1}, {3, 127, 1, 1}}, 0},
    {"bits",
     "kernel bits(X: tensor<f32>[N], A: tensor<i32>[N], Y: tensor<i32>[N], Z: tensor<f32>[N], U: tensor<u8>[N],\n"
     "             H: tensor<bf16>[N], G: tensor<i16>[N])\n"
     "    tiles(B = 128) grid(cdiv(N, B))\n"
     "{\n"
     "    n0 = program_id(0) * B;\n"
     "    x = load(X[n0 : n0 + B]);\n"
     "    a = load(A[n0 : n0 + B]);\n"
     "    b = bitcast<i32>(x);\n"
     "    store(Y[n0 : n0 + B], (b >> 23 & 0xff) - 127 + (a << 3 | 1) ^ a >> 2 & 0x0f0f);\n"
     "    store(Z[n0 : n0 + B], bitcast<f32>(b & 0x7fffffff));\n"
     "    store(U[n0 : n0 + B], cast<u8>(a) >> 3 | cast<u8>(a) << 5);\n"
     "    store(G[n0 : n0 + B], bitcast<i16>(load(H[n0 : n0 + B])) ^ -32768);\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {IN_RANDOM, CMP_NONE}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT},
      {OUT_POISON, CMP_EXACT}, {IN_RANDOM, CMP_NONE}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {127, 1, 1, 1}, {1000, 1, 1, 1}, {4099, 1, 1, 1}}, 0},
    {"sorts",
     "kernel sorts(X: tensor<f32>[R, C], A: tensor<f32>[R, C], D: tensor<bf16>[R, C], I: tensor<i32>[R, C])\n"
     "    tiles(BR = 4, BC = 256) grid(cdiv(R, BR))\n"
     "{\n"
     "    r0 = program_id(0) * BR;\n"
     "    x = load(X[r0 : r0 + BR, 0 : BC], other = inf);\n"
     "    store(A[r0 : r0 + BR, 0 : BC], sort(x, 1));\n"
     "    store(D[r0 : r0 + BR, 0 : BC], sort(cast<bf16>(load(X[r0 : r0 + BR, 0 : BC], other = -inf)), 1, descending = true));\n"
     "    store(I[r0 : r0 + BR, 0 : BC], sort(cast<i32>(x * 8.0), 0));\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {9, 255, 1, 1}, {100, 256, 1, 1}, {3, 17, 1, 1}}, 0},
    {"permutes",
     "kernel permutes(X: tensor<f32>[A, B, C], Y: tensor<f32>[C, A, B], Z: tensor<f32>[N])\n"
     "    tiles(TA = 4, TB = 8, TC = 16) grid(1)\n"
     "{\n"
     "    x = load(X[0 : TA, 0 : TB, 0 : TC]);\n"
     "    store(Y[0 : TC, 0 : TA, 0 : TB], permute(x, [2, 0, 1]));\n"
     "    store(Z[0 : 512], reshape(x, [512]));\n"
     "}\n",
     {{IN_RANDOM, CMP_NONE}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {3, 8, 13, 600}, {4, 5, 16, 512}, {2, 7, 9, 100}}, 0},
    {"randoms",
     "kernel randoms(U: tensor<f32>[N], G: tensor<f32>[N], I: tensor<i32>[N], seed: i64)\n"
     "    tiles(B = 256) grid(cdiv(N, B))\n"
     "{\n"
     "    n0 = program_id(0) * B;\n"
     "    o = n0 + iota<i32>[B];\n"
     "    store(U[n0 : n0 + B], rand(seed, o));\n"
     "    store(G[n0 : n0 + B], randn(seed, o));\n"
     "    store(I[n0 : n0 + B], randint(seed, o));\n"
     "}\n",
     {{OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {255, 1, 1, 1}, {100003, 1, 1, 1}, {1 << 20, 1, 1, 1}}, 0x243f6a8885a308d3LL},
    /* offsets a block does not cover in one group (lib/codegen/emit_random.c's per-element
     * path): shifted by one, descending, strided, and past 2^31 (the counter is the u32) */
    {"randoms_unaligned",
     "kernel randoms_unaligned(U: tensor<f32>[N], G: tensor<f32>[N], I: tensor<i32>[N], J: tensor<i32>[N], seed: i64)\n"
     "    tiles(B = 256) grid(cdiv(N, B))\n"
     "{\n"
     "    n0 = program_id(0) * B;\n"
     "    o = n0 + iota<i32>[B];\n"
     "    store(U[n0 : n0 + B], rand(seed, o + 1));\n"
     "    store(G[n0 : n0 + B], randn(seed, 5 - o));\n"
     "    store(I[n0 : n0 + B], randint(seed, o * 3));\n"
     "    store(J[n0 : n0 + B], randint(seed, o + 2147483645));\n"
     "}\n",
     {{OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}, {OUT_POISON, CMP_EXACT}},
     {{1, 1, 1, 1}, {255, 1, 1, 1}, {100003, 1, 1, 1}, {4099, 1, 1, 1}}, 0x243f6a8885a308d3LL},
};

static int failures, passes;

/* The indices of IN_INDEX: uniform in [lo, range + hi); IN_PERM: a
 * permutation of [0, range), every lo-th entry moved outside. */
static void fill_index(int32_t *v, size_t n, const tspec *s, int64_t range) {
  if (s->init == IN_PERM) {
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)(range > 0 ? range : 1));
    for (int64_t i = 0; i < range; i++) perm[i] = (int32_t)i;
    for (int64_t i = range - 1; i > 0; i--) {
      int64_t j = (int64_t)(gpu_rand() % (uint64_t)(i + 1));
      int32_t t = perm[i];
      perm[i] = perm[j], perm[j] = t;
    }
    for (size_t i = 0; i < n; i++) v[i] = (int64_t)i < range && i % (size_t)s->lo ? perm[i] : (int32_t)(range + i);
    free(perm);
    return;
  }
  int64_t lo = s->lo, hi = range + s->hi;
  for (size_t i = 0; i < n; i++) v[i] = (int32_t)(lo + (int64_t)(gpu_rand() % (uint64_t)(hi - lo)));
}

static bool run_case_round(const lcase *c, int round) {
  tilec_program *p = NULL;
  tilec_status st = tilec_program_create(&p, c->src, c->name, NULL);
  if (st == TILEC_OK) st = tilec_program_compile(p, TILEC_STAGE_IR);
  if (st != TILEC_OK) {
    printf("FAIL %s: %s\n%s\n", c->name, tilec_status_string(st), p ? tilec_program_log(p) : "");
    tilec_program_destroy(p);
    return false;
  }
  tilec_kernel *k = gpu_load_kernel(p, c->name, c->name);
  if (!k) {
    tilec_program_destroy(p);
    return false;
  }
  int np = tilec_program_num_params(p, 0);
  tilec_param_info info[8];
  const char *syms[8];
  int nsyms = 0;
  for (int i = 0; i < np; i++) {
    tilec_program_param(p, 0, i, &info[i]);
    for (int d = 0; d < info[i].rank; d++)
      if (info[i].dim_symbol[d]) gpu_sym_index(syms, &nsyms, 8, info[i].dim_symbol[d]);
  }
  char sizes[128] = "";
  for (int s = 0; s < nsyms; s++)
    snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%s=%lld", s ? " " : "", syms[s],
             (long long)c->sizes[round][s]);
  DLTensor dd[8], dh[8];
  int64_t shapes[8][4];
  void *host[8], *back[8];
  CUdeviceptr dev[8];
  size_t numel[8], bytes[8];
  tilec_arg da[8], ha[8];
  bool ok = true;
  for (int i = 0; i < np; i++) {
    if (!info[i].is_tensor) {
      da[i].kind = ha[i].kind = TILEC_ARG_I64;
      da[i].u.i64 = ha[i].u.i64 = c->seed_arg + round;
      continue;
    }
    numel[i] = 1;
    for (int d = 0; d < info[i].rank; d++) {
      shapes[i][d] = info[i].dim_symbol[d] ? c->sizes[round][gpu_sym_index(syms, &nsyms, 8, info[i].dim_symbol[d])]
                                           : info[i].dim_value[d];
      numel[i] *= (size_t)shapes[i][d];
    }
    bytes[i] = numel[i] * (size_t)gpu_dtype_bytes(info[i].dtype);
    host[i] = malloc(bytes[i]);
    back[i] = malloc(bytes[i]);
    const tspec *s = &c->t[i];
    int64_t range = c->sizes[round][s->sym];
    if (s->init == IN_INDEX || s->init == IN_PERM) fill_index(host[i], numel[i], s, range);
    else if (s->init == OUT_POISON) memset(host[i], 0xFF, bytes[i]);
    else gpu_fill_random(host[i], numel[i], info[i].dtype);
    gpu_check(gpu.cuMemAlloc(&dev[i], bytes[i]), "cuMemAlloc");
    gpu_check(gpu.cuMemcpyHtoD(dev[i], host[i], bytes[i]), "cuMemcpyHtoD");
    DLTensor base = {.ndim = info[i].rank, .dtype = info[i].dl_dtype, .shape = shapes[i]};
    dd[i] = dh[i] = base;
    dd[i].data = (void *)(uintptr_t)dev[i];
    dd[i].device = (DLDevice){kDLCUDA, 0};
    dh[i].data = host[i];
    dh[i].device = (DLDevice){kDLCPU, 0};
    da[i].kind = ha[i].kind = TILEC_ARG_TENSOR;
    da[i].u.tensor = &dd[i];
    ha[i].u.tensor = &dh[i];
  }
  st = tilec_kernel_launch(k, da, np, NULL);
  if (st != TILEC_OK) {
    printf("FAIL %s [%s]: launch: %s: %s\n", c->name, sizes, tilec_status_string(st), tilec_kernel_error(k));
    ok = false;
  } else {
    gpu_check(gpu.cuCtxSynchronize(), "kernel execution");
    st = tilec_interpret(p, c->name, ha, np);
    if (st != TILEC_OK) {
      printf("FAIL %s [%s]: interpreter: %s\n", c->name, sizes, tilec_program_log(p));
      ok = false;
    }
  }
  for (int i = 0; ok && i < np; i++) {
    if (!info[i].is_tensor || c->t[i].cmp == CMP_NONE) continue;
    gpu_check(gpu.cuMemcpyDtoH(back[i], dev[i], bytes[i]), "cuMemcpyDtoH");
    if (c->t[i].cmp == CMP_EXACT) {
      size_t bad = 0, first = 0, eb = (size_t)gpu_dtype_bytes(info[i].dtype);
      for (size_t e = 0; e < numel[i]; e++)
        if (memcmp((char *)back[i] + e * eb, (char *)host[i] + e * eb, eb) && !bad++) first = e;
      if (bad) {
        printf("FAIL %s [%s] %s: %zu of %zu elements differ in their bits; first %zu: gpu %.9g, interpreter %.9g\n",
               c->name, sizes, info[i].name, bad, numel[i], first, gpu_load_elem(back[i], first, info[i].dtype),
               gpu_load_elem(host[i], first, info[i].dtype));
        ok = false;
      } else {
        printf("  ok %s [%s] %s: %zu elements bit-identical\n", c->name, sizes, info[i].name, numel[i]);
      }
    } else if (c->t[i].cmp == CMP_SUM) {
      /* atomic adds in another order: each of the `adds` roundings may differ by
       * an ulp of the largest magnitude the sum reaches */
      int64_t adds = (c->sizes[round][0] + c->t[i].lo - 1) / c->t[i].lo + 1;
      double eps = !strcmp(info[i].dtype, "f16") ? 0x1p-10 : 0x1p-23, maxabs = 0, worst = 0;
      for (size_t e = 0; e < numel[i]; e++) maxabs = fmax(maxabs, fabs(gpu_load_elem(host[i], e, info[i].dtype)));
      size_t bad = 0, first = 0;
      for (size_t e = 0; e < numel[i]; e++) {
        double gv = gpu_load_elem(back[i], e, info[i].dtype), hv = gpu_load_elem(host[i], e, info[i].dtype);
        double err = fabs(gv - hv);
        if (!(err <= (double)adds * eps * (maxabs + 1)) && !bad++) first = e;
        if (err > worst) worst = err;
      }
      if (bad) {
        printf("FAIL %s [%s] %s: %zu of %zu sums off by more than %lld ulp; first %zu: gpu %.9g, interpreter %.9g\n",
               c->name, sizes, info[i].name, bad, numel[i], (long long)adds, first,
               gpu_load_elem(back[i], first, info[i].dtype), gpu_load_elem(host[i], first, info[i].dtype));
        ok = false;
      } else {
        printf("  ok %s [%s] %s: %zu sums, max abs err %.3g (added in another order)\n", c->name, sizes,
               info[i].name, numel[i], worst);
      }
    } else {
      gpu_cmp r;
      if (!gpu_compare(back[i], host[i], numel[i], info[i].dtype, &r)) {
        printf("FAIL %s [%s] %s: %zu mismatches; first %zu: gpu %.9g, interpreter %.9g\n", c->name, sizes,
               info[i].name, r.mismatches, r.first_bad, r.first_got, r.first_want);
        ok = false;
      } else {
        printf("  ok %s [%s] %s: %zu elements, max abs err %.3g (sums in another order)\n", c->name, sizes,
               info[i].name, r.n, r.max_abs_err);
      }
    }
  }
  for (int i = 0; i < np; i++) {
    if (!info[i].is_tensor) continue;
    gpu.cuMemFree(dev[i]);
    free(host[i]);
    free(back[i]);
  }
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  if (ok) printf("PASS %s [%s]\n", c->name, sizes);
  return ok;
}

/* Every case compiles to PTX (checked before looking for a GPU). */
static bool compile_all(void) {
  bool ok = true;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tilec_program *p = NULL;
    tilec_status st = tilec_program_create(&p, cases[i].src, cases[i].name, NULL);
    if (st == TILEC_OK) st = tilec_program_compile(p, TILEC_STAGE_PTX);
    if (st != TILEC_OK) {
      printf("FAIL %s: %s\n%s\n", cases[i].name, tilec_status_string(st), p ? tilec_program_log(p) : "");
      ok = false;
    }
    tilec_program_destroy(p);
  }
  return ok;
}

int main(void) {
  if (!compile_all()) return 1;
  int rc = gpu_init();
  if (rc) return rc;
  gpu_seed();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int r = 0; r < 4; r++) {
      if (run_case_round(&cases[i], r)) passes++;
      else failures++;
    }
  printf("%d case rounds passed, %d failed\n", passes, failures);
  return failures ? 1 : 0;
}
