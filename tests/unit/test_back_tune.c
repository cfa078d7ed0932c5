/* test_back_tune.c: the autotuner without a GPU.
 *  - the space: size, odometer order, limits;
 *  - the shape class: power-of-two ceilings per shape symbol, sorted;
 *  - the winner cache: round trip, and every kind of damage is a miss;
 *  - tilec_autotune against a fake driver (tl_rt_driver_inject) whose launches
 *    "take" a time that grows with the block size: the winner is the fastest
 *    valid configuration, a configuration with too much shared memory is
 *    skipped with its reason (not an error), the caller's output tensor is
 *    never written (scratch buffers), and a second call is a cache hit that
 *    launches nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"
#include "runtime.h"
#include "tilec.h"

/* ---- the fake driver: a virtual GPU clock ------------------------------------------------- */
#define FAKE_NUM_REGS 64
#include "fake_cuda.h"

#define SCRATCH_BASE 0x7000000000ull
static struct {
  int launches, allocs, frees, memsets;
  /* @zeroed: memsets since the last launch (their targets), launches preceded by fewer than
   * want_zero of them or by one whose target is no parameter of the launch; a memset's virtual
   * cost (to show it stays outside the timed intervals) */
  int memsets_since_launch, want_zero, launches_unzeroed, zero_wrong_target;
  CUdeviceptr memset_at[8];
  size_t memset_bytes[8];
  double memset_cost_ms;
  double clock_ms;                /* advanced by each launch */
  uint64_t slot_values[512];      /* the last launch's parameter slots (first 8 bytes each) */
  int nslots_seen;
  CUdeviceptr next_alloc;
} fk;
struct CUevent_st { double at_ms; };

static CUresult f_sync(void) { return 0; }
static CUresult f_stream_sync(CUstream s) { (void)s; return 0; }
static int fake_nslots; /* how many slots the test's kernel has */
/* The virtual cost of a launch: grows with the block size, so fewer warps win. */
static double fake_cost_ms(unsigned threads, unsigned smem) { return 0.01 * threads + 1e-6 * smem; }
static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned smem, CUstream s, void **params, void **extra) {
  (void)f; (void)gx; (void)gy; (void)gz; (void)by; (void)bz; (void)s; (void)extra;
  fk.launches++;
  fk.clock_ms += fake_cost_ms(bx, smem);
  fk.nslots_seen = fake_nslots;
  for (int i = 0; i < fake_nslots && i < 512; i++) memcpy(&fk.slot_values[i], params[i], 8);
  if (fk.memsets_since_launch < fk.want_zero) fk.launches_unzeroed++;
  for (int m = 0; m < fk.memsets_since_launch && m < 8; m++) {
    bool found = false;
    for (int i = 0; i < fake_nslots && i < 512; i++) found |= fk.slot_values[i] == fk.memset_at[m];
    if (!found) fk.zero_wrong_target++;
  }
  fk.memsets_since_launch = 0;
  return 0;
}
static CUresult f_event_create(CUevent *e, unsigned flags) { (void)flags; *e = calloc(1, sizeof **e); return 0; }
static CUresult f_event_record(CUevent e, CUstream s) { (void)s; e->at_ms = fk.clock_ms; return 0; }
static CUresult f_event_sync(CUevent e) { (void)e; return 0; }
static CUresult f_event_elapsed(float *ms, CUevent a, CUevent b) { *ms = (float)(b->at_ms - a->at_ms); return 0; }
static CUresult f_event_destroy(CUevent e) { free(e); return 0; }
static CUresult f_mem_alloc(CUdeviceptr *p, size_t n) {
  fk.allocs++;
  if (!fk.next_alloc) fk.next_alloc = SCRATCH_BASE;
  *p = fk.next_alloc;
  fk.next_alloc += (n + 4095) / 4096 * 4096;
  return 0;
}
static CUresult f_mem_free(CUdeviceptr p) { (void)p; fk.frees++; return 0; }
static CUresult f_memset(CUdeviceptr p, unsigned char v, size_t n) {
  fk.memsets++;
  if (v != 0) return 1;
  if (fk.memsets_since_launch < 8) {
    fk.memset_at[fk.memsets_since_launch] = p;
    fk.memset_bytes[fk.memsets_since_launch] = n;
  }
  fk.memsets_since_launch++;
  fk.clock_ms += fk.memset_cost_ms;
  return 0;
}

static const tl_cuda fake = {
    FAKE_CUDA_ENTRIES, .cuLaunchKernel = f_launch, .cuCtxSynchronize = f_sync, .cuStreamSynchronize = f_stream_sync,
    .cuEventCreate = f_event_create, .cuEventRecord = f_event_record, .cuEventSynchronize = f_event_sync,
    .cuEventElapsedTime = f_event_elapsed, .cuEventDestroy = f_event_destroy, .cuMemAlloc = f_mem_alloc,
    .cuMemFree = f_mem_free, .cuMemsetD8 = f_memset};

static char cache_dir[64];
static void setup(void) {
  cr_assert(tl_rt_driver_inject(&fake));
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tilec-tune-test-XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("TILEC_CACHE_DIR", cache_dir, 1);
  unsetenv("TILEC_CACHE");
  srand((unsigned)getpid());
}
static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", cache_dir);
}
TestSuite(tune, .init = setup, .fini = teardown);

/* ---- the space ------------------------------------------------------------------------------ */
Test(tune, space_enumerates_every_combination_once_first_name_slowest) {
  int64_t a[] = {16, 32, 64}, b[] = {1, 2}, c[] = {7, 11, 13, 17, 19};
  tilec_tune_param ps[] = {{"A", a, 3}, {"B", b, 2}, {"C", c, 5}};
  tilec_tune_space s = {ps, 3, 0, 0};
  cr_assert_eq(tl_tune_space_size(&s), 30);
  bool seen[3][2][5] = {{{false}}};
  int64_t prev_a = -1;
  for (int64_t i = 0; i < 30; i++) {
    int64_t v[3];
    tl_tune_space_config(&s, i, v);
    int ia = -1, ib = -1, ic = -1;
    for (int k = 0; k < 3; k++) if (a[k] == v[0]) ia = k;
    for (int k = 0; k < 2; k++) if (b[k] == v[1]) ib = k;
    for (int k = 0; k < 5; k++) if (c[k] == v[2]) ic = k;
    cr_assert(ia >= 0 && ib >= 0 && ic >= 0, "config %lld has values from the space", (long long)i);
    cr_assert(!seen[ia][ib][ic], "config %lld is new", (long long)i);
    seen[ia][ib][ic] = true;
    cr_assert_eq(ic, (int)(i % 5), "the last name turns fastest");
    if (i % 10 == 0) {
      cr_assert(v[0] != prev_a, "the first name turns every 10 configs");
      prev_a = v[0];
    } else {
      cr_assert_eq(v[0], prev_a, "the first name turns slowest");
    }
  }
  tilec_tune_space none = {NULL, 0, 0, 0};
  cr_assert_eq(tl_tune_space_size(&none), 1, "no names: one config, the defaults");
  cr_assert_eq(tl_tune_space_size(NULL), 1);
  tilec_tune_param empty[] = {{"A", a, 0}};
  tilec_tune_space e = {empty, 1, 0, 0};
  cr_assert_eq(tl_tune_space_size(&e), -1, "a name without values");
  int64_t many[64];
  for (int i = 0; i < 64; i++) many[i] = i + 1;
  tilec_tune_param big[] = {{"A", many, 64}, {"B", many, 64}, {"C", many, 2}};
  tilec_tune_space bs = {big, 3, 0, 0};
  cr_assert_eq(tl_tune_space_size(&bs), -1, "8192 configs pass the limit");
  bs.nparams = 2;
  cr_assert_eq(tl_tune_space_size(&bs), 4096, "4096 is allowed");
}

Test(tune, pow2_ceiling) {
  int64_t cases[][2] = {{0, 1}, {1, 1}, {2, 2}, {3, 4}, {127, 128}, {128, 128}, {129, 256}, {4097, 8192}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cr_assert_eq(tl_tune_pow2_ceil(cases[i][0]), cases[i][1], "ceil(%lld)", (long long)cases[i][0]);
  for (int i = 0; i < 100; i++) {
    int64_t v = 2 + rand() % 1000000;
    int64_t p = tl_tune_pow2_ceil(v);
    cr_assert(p >= v && p / 2 < v && (p & (p - 1)) == 0, "ceil(%lld) = %lld", (long long)v, (long long)p);
  }
}

static const char gemm_src[] =
    "kernel mm(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N])\n"
    "    tiles(BM = 64, BN = 64, BK = 32)\n"
    "    grid(cdiv(M, BM), cdiv(N, BN))\n"
    "{\n"
    "    m0 = program_id(0) * BM;\n"
    "    n0 = program_id(1) * BN;\n"
    "    acc = zeros<f32>[BM, BN];\n"
    "    for k0 in range(0, K, BK) {\n"
    "        acc = dot(load(A[m0 : m0 + BM, k0 : k0 + BK]), load(B[k0 : k0 + BK, n0 : n0 + BN]), acc);\n"
    "    }\n"
    "    store(C[m0 : m0 + BM, n0 : n0 + BN], cast<bf16>(acc));\n"
    "}\n";

typedef struct gemm_args {
  int64_t sa[2], sb[2], sc[2];
  DLTensor t[3];
  tilec_arg a[3];
} gemm_args;
/* Device tensors at fake addresses (never dereferenced by the fake). */
static void make_gemm_args(gemm_args *g, int64_t M, int64_t N, int64_t K) {
  g->sa[0] = M; g->sa[1] = K; g->sb[0] = K; g->sb[1] = N; g->sc[0] = M; g->sc[1] = N;
  int64_t *shapes[3] = {g->sa, g->sb, g->sc};
  for (int i = 0; i < 3; i++) {
    g->t[i] = (DLTensor){.data = (void *)(uintptr_t)(0x100000000ull * (uint64_t)(i + 1)), .device = {kDLCUDA, 0},
                         .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = shapes[i]};
    g->a[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &g->t[i]};
  }
}

Test(tune, shape_class_rounds_each_symbol_up_to_a_power_of_two) {
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, gemm_src, "mm.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK, "%s", tilec_program_log(p));
  tl_func *f = tl_api_find_kernel(p, "mm");
  cr_assert(f);
  for (int trial = 0; trial < 20; trial++) {
    int64_t M = 1 + rand() % 5000, N = 1 + rand() % 5000, K = 1 + rand() % 5000;
    gemm_args g;
    make_gemm_args(&g, M, N, K);
    char buf[256], err[256], want[256];
    cr_assert(tl_tune_shape_class(f, g.a, 3, buf, sizeof buf, err, sizeof err), "%s", err);
    snprintf(want, sizeof want, "K=%lld M=%lld N=%lld", (long long)tl_tune_pow2_ceil(K),
             (long long)tl_tune_pow2_ceil(M), (long long)tl_tune_pow2_ceil(N));
    cr_assert_str_eq(buf, want);
    /* the same class for any size with the same ceilings */
    gemm_args g2;
    make_gemm_args(&g2, tl_tune_pow2_ceil(M), tl_tune_pow2_ceil(N), K);
    char buf2[256];
    cr_assert(tl_tune_shape_class(f, g2.a, 3, buf2, sizeof buf2, err, sizeof err));
    cr_assert_str_eq(buf2, want);
  }
  gemm_args g;
  make_gemm_args(&g, 64, 64, 64);
  char buf[256], err[256];
  cr_assert(!tl_tune_shape_class(f, g.a, 2, buf, sizeof buf, err, sizeof err), "too few arguments");
  g.t[1].ndim = 1;
  cr_assert(!tl_tune_shape_class(f, g.a, 3, buf, sizeof buf, err, sizeof err), "wrong rank");
  tilec_program_destroy(p);
}

/* ---- the winner cache --------------------------------------------------------------------- */
static tilec_tune_result random_result(void) {
  tilec_tune_result r = {0};
  r.nparams = 1 + rand() % 4;
  for (int i = 0; i < r.nparams; i++) {
    snprintf(r.names[i], sizeof r.names[i], "P%d_%d", i, rand() % 100);
    r.values[i] = 1 + rand() % 100000;
  }
  r.ms = 0.001 + (double)rand() / RAND_MAX;
  r.worst_ms = r.ms * (1 + (double)rand() / RAND_MAX);
  r.nconfigs = 3 + rand() % 50;
  r.nvalid = 1 + rand() % r.nconfigs;
  snprintf(r.shape_class, sizeof r.shape_class, "M=%d N=%d", 1 << (rand() % 20), 1 << (rand() % 20));
  snprintf(r.summary, sizeof r.summary, "best of %d configs: %s=%lld: %.3f ms", r.nconfigs, r.names[0],
           (long long)r.values[0], r.ms);
  return r;
}

static const char key1[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

Test(tune, winner_cache_round_trip) {
  for (int trial = 0; trial < 10; trial++) {
    tilec_tune_result r = random_result(), back;
    tl_sbuf msg = {0};
    cr_assert_eq(tl_tune_cache_store(cache_dir, key1, &r, &msg), TL_OK, "%s", msg.data ? msg.data : "");
    memset(&back, 0x5a, sizeof back);
    cr_assert_eq(tl_tune_cache_load(cache_dir, key1, &back, NULL), TL_CACHE_HIT);
    cr_assert_eq(back.nparams, r.nparams);
    for (int i = 0; i < r.nparams; i++) {
      cr_assert_str_eq(back.names[i], r.names[i]);
      cr_assert_eq(back.values[i], r.values[i]);
    }
    cr_assert_eq(back.ms, r.ms, "times round-trip exactly (%%.17g)");
    cr_assert_eq(back.worst_ms, r.worst_ms);
    cr_assert_eq(back.nconfigs, r.nconfigs);
    cr_assert_eq(back.nvalid, r.nvalid);
    cr_assert_str_eq(back.shape_class, r.shape_class);
    cr_assert_str_eq(back.summary, r.summary);
    cr_assert_eq(back.from_cache, 0);
    tl_sbuf_free(&msg);
  }
  tilec_tune_result back;
  char other[65];
  memcpy(other, key1, 65);
  other[0] = 'f';
  cr_assert_eq(tl_tune_cache_load(cache_dir, other, &back, NULL), TL_CACHE_MISS, "another key is a miss");
}

static char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  cr_assert(f);
  char *buf = malloc(70000);
  *n = fread(buf, 1, 70000, f);
  fclose(f);
  return buf;
}
static void write_all(const char *path, const char *data, size_t n) {
  FILE *f = fopen(path, "wb");
  cr_assert(f);
  cr_assert_eq(fwrite(data, 1, n, f), n);
  fclose(f);
}

Test(tune, damaged_winner_entries_are_misses) {
  tilec_tune_result r = random_result(), back;
  cr_assert_eq(tl_tune_cache_store(cache_dir, key1, &r, NULL), TL_OK);
  char path[4096];
  tl_tune_cache_path(cache_dir, key1, path, sizeof path);
  size_t n;
  char *good = read_all(path, &n);
  /* every single-byte change is caught */
  for (int trial = 0; trial < 40; trial++) {
    char *bad = malloc(n);
    memcpy(bad, good, n);
    size_t at = (size_t)rand() % n;
    bad[at] = (char)(bad[at] ^ (1 + rand() % 255));
    write_all(path, bad, n);
    tl_sbuf why = {0};
    cr_assert_eq(tl_tune_cache_load(cache_dir, key1, &back, &why), TL_CACHE_MISS, "byte %zu changed", at);
    cr_assert(why.data && strstr(why.data, "tune cache"), "the miss says why");
    tl_sbuf_free(&why);
    free(bad);
  }
  /* and at every position the changes a text parser could forgive: a letter's case ('a' -> 'A' in the
   * checksum's hex once read the same number) and a space (or '+') for a leading zero */
  for (size_t at = 0; at < n; at++) {
    const char subst[3] = {(char)(good[at] ^ 0x20), ' ', '+'};
    for (int k = 0; k < 3; k++) {
      if (subst[k] == good[at]) continue;
      char *bad = malloc(n);
      memcpy(bad, good, n);
      bad[at] = subst[k];
      write_all(path, bad, n);
      cr_assert_eq(tl_tune_cache_load(cache_dir, key1, &back, NULL), TL_CACHE_MISS, "byte %zu as '%c'", at, subst[k]);
      free(bad);
    }
  }
  /* truncation at any length, and an empty file */
  for (int trial = 0; trial < 20; trial++) {
    size_t len = (size_t)rand() % n;
    write_all(path, good, len);
    cr_assert_eq(tl_tune_cache_load(cache_dir, key1, &back, NULL), TL_CACHE_MISS, "truncated to %zu", len);
  }
  /* an entry stored under another key, renamed into this one */
  char other[65];
  memcpy(other, key1, 65);
  other[63] = '0';
  cr_assert_eq(tl_tune_cache_store(cache_dir, other, &r, NULL), TL_OK);
  char opath[4096];
  tl_tune_cache_path(cache_dir, other, opath, sizeof opath);
  cr_assert_eq(rename(opath, path), 0);
  cr_assert_eq(tl_tune_cache_load(cache_dir, key1, &back, NULL), TL_CACHE_MISS, "foreign key");
  /* and the good bytes again are a hit */
  write_all(path, good, n);
  cr_assert_eq(tl_tune_cache_load(cache_dir, key1, &back, NULL), TL_CACHE_HIT);
  free(good);
}

/* ---- tilec_autotune against the fake driver ---------------------------------------------- */
typedef struct seen_configs {
  int n, skipped;
  char desc[64][128];
  double ms[64];
  char reason[64][600];
} seen_configs;
static int record(const tilec_tune_config *c, void *user) {
  seen_configs *s = user;
  cr_assert_eq(c->index, s->n, "configs come in order");
  cr_assert_lt(c->index, c->count);
  snprintf(s->desc[s->n], sizeof s->desc[0], "%s", c->desc);
  s->ms[s->n] = c->ms;
  snprintf(s->reason[s->n], sizeof s->reason[0], "%s", c->skip_reason ? c->skip_reason : "");
  if (c->skip_reason) {
    s->skipped++;
    cr_assert_lt(c->ms, 0);
  } else {
    cr_assert_gt(c->ms, 0);
    cr_assert_geq(c->runs, 5);
  }
  s->n++;
  return 0;
}

Test(tune, fake_gpu_winner_skips_and_cache_hit) {
  gemm_args g;
  int64_t M = 64 * (2 + rand() % 8) + 1 + rand() % 63, N = 64 * (2 + rand() % 8) + 1 + rand() % 63,
          K = 31 + rand() % 200; /* ragged */
  make_gemm_args(&g, M, N, K);
  {
    tilec_program *p = NULL;
    cr_assert_eq(tilec_program_create(&p, gemm_src, "mm.tile", NULL), TILEC_OK);
    cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK);
    tl_abi_layout l;
    char err[128];
    cr_assert(tl_abi_layout_for(tl_api_find_kernel(p, "mm"), 0, &l, err, sizeof err));
    fake_nslots = l.nslots;
    tilec_program_destroy(p);
  }
  /* BK = 1024 cannot fit 227 KiB of shared memory */
  int64_t bm[] = {64, 128}, warps[] = {8, 4}, bk[] = {32, 1024}, stages[] = {8};
  tilec_tune_param ps[] = {{"BM", bm, 2}, {"warps", warps, 2}, {"BK", bk, 2}, {"stages", stages, 1}};
  tilec_tune_space space = {ps, 4, 5.0, 0};
  seen_configs seen = {0};
  tilec_tune_result r;
  tilec_status st = tilec_autotune(gemm_src, 0, NULL, "mm", &space, g.a, 3, 0, record, &seen, &r);
  cr_assert_eq(st, TILEC_OK, "%s\n%s", tilec_status_string(st), r.log);
  cr_assert_eq(seen.n, 8);
  cr_assert_eq(r.nconfigs, 8);
  cr_assert_eq(r.nvalid, 8 - seen.skipped);
  cr_assert_geq(seen.skipped, 1, "BK=1024 is skipped");
  for (int i = 0; i < seen.n; i++) {
    if (strstr(seen.desc[i], "BK=1024"))
      cr_assert(seen.reason[i][0] && strstr(seen.reason[i], "shared memory"), "%s skipped for its shared memory: '%s'",
                seen.desc[i], seen.reason[i]);
    else
      cr_assert_eq(seen.reason[i][0], 0, "%s runs: %s", seen.desc[i], seen.reason[i]);
  }
  /* the winner: the fastest reported, and with the fake's cost model (block
   * size dominates) one with 4 warps */
  double best = INFINITY, worst = 0;
  int best_i = -1;
  for (int i = 0; i < seen.n; i++)
    if (seen.ms[i] > 0) {
      if (seen.ms[i] < best) best = seen.ms[i], best_i = i;
      if (seen.ms[i] > worst) worst = seen.ms[i];
    }
  cr_assert_float_eq(r.ms, best, 1e-12);
  cr_assert_float_eq(r.worst_ms, worst, 1e-12);
  cr_assert_eq(r.nparams, 4);
  cr_assert_str_eq(r.names[1], "warps");
  cr_assert_eq(r.values[1], 4, "fewer threads are cheaper on the fake GPU");
  char desc[128];
  snprintf(desc, sizeof desc, "BM=%lld warps=%lld BK=%lld stages=%lld", (long long)r.values[0], (long long)r.values[1],
           (long long)r.values[2], (long long)r.values[3]);
  cr_assert_str_eq(desc, seen.desc[best_i]);
  cr_assert(strstr(r.summary, "best of 8 configs: ") && strstr(r.summary, desc), "summary: %s", r.summary);
  cr_assert(strstr(r.summary, "x the worst"), "summary: %s", r.summary);
  cr_assert_eq(r.from_cache, 0);
  /* scratch buffers: the caller's C (slot values) never reached a launch */
  cr_assert_gt(fk.allocs, 0);
  cr_assert_eq(fk.frees, fk.allocs, "every scratch buffer is freed");
  cr_assert_eq(fk.memsets, fk.allocs, "scratch buffers are zero-filled");
  bool saw_a = false, saw_scratch = false;
  for (int i = 0; i < fk.nslots_seen; i++) {
    cr_assert_neq(fk.slot_values[i], (uint64_t)(uintptr_t)g.t[2].data, "C itself is never passed");
    saw_a |= fk.slot_values[i] == (uint64_t)(uintptr_t)g.t[0].data;
    saw_scratch |= fk.slot_values[i] >= SCRATCH_BASE && fk.slot_values[i] < SCRATCH_BASE + (1ull << 32);
  }
  cr_assert(saw_a && saw_scratch, "A as given, C replaced by scratch");

  /* the same key again: from the cache, nothing compiled or launched */
  int launches = fk.launches;
  seen_configs again = {0};
  tilec_tune_result r2;
  gemm_args g2;
  make_gemm_args(&g2, tl_tune_pow2_ceil(M), N, K); /* same shape class */
  st = tilec_autotune(gemm_src, 0, NULL, "mm", &space, g2.a, 3, 0, record, &again, &r2);
  cr_assert_eq(st, TILEC_OK, "%s", r2.log);
  cr_assert_eq(r2.from_cache, 1);
  cr_assert_eq(again.n, 0, "no progress: nothing ran");
  cr_assert_eq(fk.launches, launches);
  cr_assert_eq(r2.nparams, r.nparams);
  for (int i = 0; i < r.nparams; i++) cr_assert_eq(r2.values[i], r.values[i]);
  cr_assert(strncmp(r2.summary, "cached: ", 8) == 0 && strcmp(r2.summary + 8, r.summary) == 0, "%s", r2.summary);
  /* another shape class is tuned afresh */
  make_gemm_args(&g2, 2 * tl_tune_pow2_ceil(M) + 1, N, K);
  seen_configs third = {0};
  space.nparams = 2; /* BM x warps only: quick */
  st = tilec_autotune(gemm_src, 0, NULL, "mm", &space, g2.a, 3, 0, record, &third, &r2);
  cr_assert_eq(st, TILEC_OK, "%s", r2.log);
  cr_assert_eq(r2.from_cache, 0);
  cr_assert_eq(third.n, 4);

  /* tilec_tune_apply: the winner as options */
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_tune_apply(&r, o), TILEC_OK);
  cr_assert_eq(o->warps, (int)r.values[1]);
  cr_assert_eq(o->stages, (int)r.values[3]);
  cr_assert_eq(o->ndefines, 2);
  tilec_options_destroy(o);
}

/* @zeroed tensors: replaced by scratch buffers (Z too, which the kernel only reads) that are zeroed
 * before every launch the tuner makes (the first, the estimate's, the warm-up's, the timed ones), the
 * memsets outside the timed intervals: each costs 1000 virtual ms, and every time reported is a
 * launch's own.  Without the attribute: no memset beyond the scratch buffers' first fill. */
static const char zeroed_src[] =
    "@zeroed(Acc) @zeroed(Z)\n"
    "kernel acc(X: tensor<f32>[N], Z: tensor<f32>[B], Acc: tensor<f32>[B])\n"
    "    tiles(B = 128)\n"
    "    grid(cdiv(N, B))\n"
    "{\n"
    "    i = program_id(0) * B;\n"
    "    atomic_add(Acc[0 : B], load(X[i : i + B]) + load(Z[0 : B]));\n"
    "}\n";
Test(tune, zeroed_tensors_are_zeroed_before_every_launch_outside_the_timing) {
  /* with = 1: @zeroed; 0: the same kernel without it; -1: with it, under TILEC_TUNE_ZERO=0 (off) */
  for (int run = 1; run >= -1; run--) {
    int with = run > 0;
    const char *src = run ? zeroed_src : zeroed_src + strlen("@zeroed(Acc) @zeroed(Z)\n");
    if (run < 0) setenv("TILEC_TUNE_ZERO", "0", 1);
    tilec_program *p = NULL;
    cr_assert_eq(tilec_program_create(&p, src, "acc.tile", NULL), TILEC_OK);
    cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK, "%s", tilec_program_log(p));
    cr_assert_eq(tilec_program_param_flags(p, 0, 0), 0);
    cr_assert_eq(tilec_program_param_flags(p, 0, 1), run ? TILEC_PARAM_ZEROED : 0);
    cr_assert_eq(tilec_program_param_flags(p, 0, 2), run ? TILEC_PARAM_ZEROED : 0);
    cr_assert_eq(tilec_program_param_flags(p, 0, 3), -1);
    tl_abi_layout l;
    char err[128];
    cr_assert(tl_abi_layout_for(tl_api_find_kernel(p, "acc"), 0, &l, err, sizeof err));
    fake_nslots = l.nslots;
    tilec_program_destroy(p);
    int64_t n = 1000 + rand() % 3000, b = 128;
    DLTensor t[3] = {
        {.data = (void *)(uintptr_t)0x100000000ull, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = &n},
        {.data = (void *)(uintptr_t)0x200000000ull, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = &b},
        {.data = (void *)(uintptr_t)0x300000000ull, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = &b}};
    tilec_arg a[3];
    for (int i = 0; i < 3; i++) a[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
    memset(&fk, 0, sizeof fk);
    fk.want_zero = with ? 2 : 0;
    fk.memset_cost_ms = 1000;
    int64_t warps[] = {4, 8};
    tilec_tune_param ps[] = {{"warps", warps, 2}};
    tilec_tune_space space = {ps, 1, 5.0, 1};
    seen_configs seen = {0};
    tilec_tune_result r;
    tilec_status st = tilec_autotune(src, 0, NULL, "acc", &space, a, 3, 0, record, &seen, &r);
    cr_assert_eq(st, TILEC_OK, "%s\n%s", tilec_status_string(st), r.log);
    cr_assert_eq(r.nvalid, 2);
    cr_assert_gt(fk.launches, 2 * 5);
    for (int i = 0; i < seen.n; i++) cr_assert_lt(seen.ms[i], 100, "%s: %g ms, a memset timed", seen.desc[i], seen.ms[i]);
    cr_assert_float_eq(r.ms, fake_cost_ms(128, 0), 1e-6, "4 warps: %g ms, the launch's own cost", r.ms);
    if (with) {
      cr_assert_eq(fk.launches_unzeroed, 0, "%d of %d launches without both memsets before them", fk.launches_unzeroed,
                   fk.launches);
      cr_assert_eq(fk.zero_wrong_target, 0, "memsets of something the launch does not take");
      cr_assert_eq(fk.memsets, fk.allocs + 2 * fk.launches, "scratch fills, then two a launch");
      cr_assert_eq(fk.allocs, 2, "Z and Acc: a scratch buffer each for the whole tuning");
      for (int m = 0; m < 2; m++) cr_assert_eq(fk.memset_bytes[m], 128 * 4);
    } else {
      cr_assert_eq(fk.memsets, fk.allocs, "no zeroing beyond the scratch buffers' fill");
      cr_assert_eq(fk.allocs, run ? 2 : 1, "Z (under the switch) and Acc, or Acc alone");
    }
    for (int i = 0; i < fake_nslots; i++)
      cr_assert_neq(fk.slot_values[i], (uint64_t)(uintptr_t)t[2].data, "the caller's Acc is never passed");
    unsetenv("TILEC_TUNE_ZERO");
  }
}

/* The "cluster" knob: 11 / 21 / 12 apply as the option cluster=1x1 / 2x1 / 1x2, anything else is a usage error. */
Test(tune, cluster_knob_applies_as_the_option) {
  static const struct { int64_t v; int want; } cases[] = {{11, TL_CLUSTER_1X1}, {21, TL_CLUSTER_2X1}, {12, TL_CLUSTER_1X2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tilec_tune_result r = {0};
    r.nparams = 1;
    snprintf(r.names[0], sizeof r.names[0], "cluster");
    r.values[0] = cases[i].v;
    tilec_options *o = NULL;
    cr_assert_eq(tilec_options_create(&o), TILEC_OK);
    cr_assert_eq(tilec_tune_apply(&r, o), TILEC_OK);
    cr_assert_eq(o->cluster, cases[i].want);
    cr_assert_eq(o->ndefines, 0);
    r.values[0] = 22;
    cr_assert_eq(tilec_tune_apply(&r, o), TILEC_ERROR_USAGE);
    tilec_options_destroy(o);
  }
}

Test(tune, bad_spaces_are_usage_errors) {
  gemm_args g;
  make_gemm_args(&g, 100, 100, 100);
  int64_t ok[] = {64}, badw[] = {3}, bads[] = {9};
  tilec_tune_result r;
  tilec_tune_param unknown[] = {{"BX", ok, 1}};
  tilec_tune_space s = {unknown, 1, 1.0, 1};
  cr_assert_eq(tilec_autotune(gemm_src, 0, NULL, "mm", &s, g.a, 3, 0, NULL, NULL, &r), TILEC_ERROR_USAGE);
  cr_assert(strstr(r.log, "'BX' is not a tile constant"), "%s", r.log);
  tilec_tune_param w[] = {{"warps", badw, 1}};
  s.params = w;
  cr_assert_eq(tilec_autotune(gemm_src, 0, NULL, "mm", &s, g.a, 3, 0, NULL, NULL, &r), TILEC_ERROR_USAGE);
  tilec_tune_param st[] = {{"stages", bads, 1}};
  s.params = st;
  cr_assert_eq(tilec_autotune(gemm_src, 0, NULL, "mm", &s, g.a, 3, 0, NULL, NULL, &r), TILEC_ERROR_USAGE);
  tilec_tune_param twice[] = {{"BM", ok, 1}, {"BM", ok, 1}};
  s.params = twice;
  s.nparams = 2;
  cr_assert_eq(tilec_autotune(gemm_src, 0, NULL, "mm", &s, g.a, 3, 0, NULL, NULL, &r), TILEC_ERROR_USAGE);
  s.nparams = 1;
  cr_assert_eq(tilec_autotune(gemm_src, 0, NULL, "nope", &s, g.a, 3, 0, NULL, NULL, &r), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_autotune(gemm_src, 0, NULL, "mm", &s, g.a, 2, 0, NULL, NULL, &r), TILEC_ERROR_USAGE,
               "too few arguments");
  cr_assert_eq(tilec_autotune(gemm_src, 0, NULL, "mm", &s, g.a, 3, 1, NULL, NULL, &r), TILEC_ERROR_NO_DEVICE);
  cr_assert_eq(fk.launches, 0, "nothing ran");
}

Test(tune, warps_and_stages_options_override_the_attributes) {
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  const char *bad[] = {"3", "32", "-1", "x", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq(tilec_options_set(o, "warps", bad[i]), TILEC_ERROR_USAGE, "warps=%s", bad[i]);
  cr_assert_eq(tilec_options_set(o, "stages", "9"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "stages", "0"), TILEC_OK);
  char src[2048];
  /* the attributes say 4 warps and 2 stages; the options win */
  snprintf(src, sizeof src, "@warps(4) @stages(2)\n%s", gemm_src);
  int warps_opts[] = {1, 2, 8, 16};
  for (int i = 0; i < 4; i++) {
    char w[8], s[8];
    int stages = 1 + rand() % 8;
    snprintf(w, sizeof w, "%d", warps_opts[i]);
    snprintf(s, sizeof s, "%d", stages);
    cr_assert_eq(tilec_options_set(o, "warps", w), TILEC_OK);
    cr_assert_eq(tilec_options_set(o, "stages", s), TILEC_OK);
    cr_assert_eq(tilec_options_set_arch(o, "sm_90a"), TILEC_OK);
    tilec_program *p = NULL;
    cr_assert_eq(tilec_program_create(&p, src, "mm.tile", o), TILEC_OK);
    tilec_status st = tilec_program_compile(p, TILEC_STAGE_IR);
    cr_assert_eq(st, TILEC_OK, "%s", tilec_program_log(p));
    tl_func *f = tl_api_find_kernel(p, "mm");
    cr_assert_eq(f->warps, warps_opts[i]);
    cr_assert_eq(f->stages, stages);
    tilec_program_destroy(p);
  }
  tilec_options_destroy(o);
}
