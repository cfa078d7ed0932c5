/* test_tune.c: tilec_autotune on a GPU, for examples/softmax.tile and
 * examples/gemm.tile over small spaces, ragged sizes, random data:
 *  - tuning succeeds, every configuration is reported, the summary names the winner;
 *  - the caller's tensors are untouched (inputs and the NaN-poisoned output);
 *  - the winner, applied with tilec_tune_apply and loaded normally, computes
 *    what the interpreter computes;
 *  - a second call with the same key is a cache hit (nothing reported).
 *   usage: gpu_test_tune   (exit 0 pass, 1 fail, 77 skip) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_util.h"

static int failures;

#define MAXP 8
typedef struct buf {
  tilec_param_info info;
  int64_t shape[4];
  size_t numel, bytes;
  void *host, *orig, *back;
  CUdeviceptr dev;
  DLTensor dl_dev, dl_host;
} buf;

static int progress_calls;
static int on_progress(const tilec_tune_config *c, void *user) {
  (void)user;
  progress_calls++;
  if (c->skip_reason) printf("  [%d/%d] %s: skipped: %s\n", c->index + 1, c->count, c->desc, c->skip_reason);
  else printf("  [%d/%d] %s: %.4f ms (%d runs)\n", c->index + 1, c->count, c->desc, c->ms, c->runs);
  return 0;
}

static const char *examples_dir(void) {
  const char *e = getenv("TILEC_EXAMPLES");
  return e && *e ? e : TILEC_SOURCE_DIR "/examples";
}

/* sizes: symbol name -> value */
static int64_t size_of(const char *sym, const char *const *names, const int64_t *values, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], sym)) return values[i];
  return -1;
}

static void tune_one(const char *file, const char *kernel, const char *const *sym, const int64_t *symval, int nsym,
                     const tilec_tune_param *params, int nparams) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", examples_dir(), file);
  tilec_program *p = NULL;
  tilec_status st = tilec_program_create_from_file(&p, path, NULL);
  if (st == TILEC_OK) st = tilec_program_compile(p, TILEC_STAGE_IR);
  if (st != TILEC_OK) {
    GPU_EXPECT(0, "%s: %s\n%s", file, tilec_status_string(st), p ? tilec_program_log(p) : "");
    tilec_program_destroy(p);
    return;
  }
  int ki = 0;
  while (ki < tilec_program_num_kernels(p) && strcmp(tilec_program_kernel_name(p, ki), kernel)) ki++;
  int np = tilec_program_num_params(p, ki);
  buf b[MAXP];
  tilec_arg dargs[MAXP], hargs[MAXP];
  memset(b, 0, sizeof b);
  for (int i = 0; i < np; i++) {
    tilec_program_param(p, ki, i, &b[i].info);
    if (!b[i].info.is_tensor) { /* scalars: floats in (0.05, 1) */
      dargs[i].kind = TILEC_ARG_F32;
      dargs[i].u.f32 = (float)gpu_rand_uniform(0.05, 1.0);
      hargs[i] = dargs[i];
      continue;
    }
    b[i].numel = 1;
    for (int d = 0; d < b[i].info.rank; d++) {
      b[i].shape[d] = b[i].info.dim_symbol[d] ? size_of(b[i].info.dim_symbol[d], sym, symval, nsym) : b[i].info.dim_value[d];
      b[i].numel *= (size_t)b[i].shape[d];
    }
    b[i].bytes = b[i].numel * (size_t)gpu_dtype_bytes(b[i].info.dtype);
    b[i].host = malloc(b[i].bytes);
    b[i].orig = malloc(b[i].bytes);
    b[i].back = malloc(b[i].bytes);
    if (b[i].info.written) memset(b[i].host, 0xFF, b[i].bytes); /* NaN bytes */
    else gpu_fill_random(b[i].host, b[i].numel, b[i].info.dtype);
    memcpy(b[i].orig, b[i].host, b[i].bytes);
    gpu_check(gpu.cuMemAlloc(&b[i].dev, b[i].bytes), "cuMemAlloc");
    gpu_check(gpu.cuMemcpyHtoD(b[i].dev, b[i].host, b[i].bytes), "cuMemcpyHtoD");
    DLTensor base = {.ndim = b[i].info.rank, .dtype = b[i].info.dl_dtype, .shape = b[i].shape};
    b[i].dl_dev = base;
    b[i].dl_dev.data = (void *)(uintptr_t)b[i].dev;
    b[i].dl_dev.device = (DLDevice){kDLCUDA, 0};
    b[i].dl_host = base;
    b[i].dl_host.data = b[i].host;
    b[i].dl_host.device = (DLDevice){kDLCPU, 0};
    dargs[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &b[i].dl_dev};
    hargs[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &b[i].dl_host};
  }

  int count = 1;
  for (int i = 0; i < nparams; i++) count *= params[i].nvalues;
  tilec_tune_space space = {params, nparams, 50.0, 0};
  tilec_tune_result r;
  printf("tune %s:%s (%d configs)\n", file, kernel, count);
  progress_calls = 0;
  st = tilec_autotune(path, 1, NULL, kernel, &space, dargs, np, 0, on_progress, NULL, &r);
  GPU_EXPECT(st == TILEC_OK, "%s: tilec_autotune: %s\n%s", file, tilec_status_string(st), r.log);
  if (st != TILEC_OK) goto out;
  printf("  %s\n  shape class %s\n", r.summary, r.shape_class);
  GPU_EXPECT(progress_calls == count, "%d progress calls for %d configs", progress_calls, count);
  GPU_EXPECT(!r.from_cache && r.nconfigs == count && r.nvalid >= 1 && r.ms > 0 && r.worst_ms >= r.ms,
         "result: from_cache %d, %d configs, %d valid, %.4f ms, worst %.4f", r.from_cache, r.nconfigs, r.nvalid, r.ms,
         r.worst_ms);
  GPU_EXPECT(strstr(r.summary, "best of ") != NULL, "summary: %s", r.summary);
  /* the caller's tensors are untouched */
  for (int i = 0; i < np; i++) {
    if (!b[i].info.is_tensor) continue;
    gpu_check(gpu.cuMemcpyDtoH(b[i].back, b[i].dev, b[i].bytes), "cuMemcpyDtoH");
    GPU_EXPECT(memcmp(b[i].back, b[i].orig, b[i].bytes) == 0, "%s: tensor %s changed by tuning", file, b[i].info.name);
  }
  /* the winner is correct */
  {
    tilec_options *o = NULL;
    tilec_options_create(&o);
    GPU_EXPECT(tilec_tune_apply(&r, o) == TILEC_OK, "tilec_tune_apply");
    tilec_program *wp = NULL;
    tilec_kernel *k = NULL;
    st = tilec_program_create_from_file(&wp, path, o);
    tilec_options_destroy(o);
    if (st == TILEC_OK) st = tilec_kernel_load(wp, kernel, 0, &k);
    GPU_EXPECT(st == TILEC_OK, "load winner: %s\n%s", tilec_status_string(st), wp ? tilec_program_log(wp) : "");
    if (st == TILEC_OK) {
      st = tilec_kernel_launch(k, dargs, np, NULL);
      GPU_EXPECT(st == TILEC_OK, "launch winner: %s", tilec_kernel_error(k));
      gpu_check(gpu.cuCtxSynchronize(), "winner kernel");
      st = tilec_interpret(wp, kernel, hargs, np);
      GPU_EXPECT(st == TILEC_OK, "interpreter: %s", tilec_program_log(wp));
      for (int i = 0; i < np && st == TILEC_OK; i++) {
        if (!b[i].info.is_tensor || !b[i].info.written) continue;
        gpu_check(gpu.cuMemcpyDtoH(b[i].back, b[i].dev, b[i].bytes), "cuMemcpyDtoH");
        gpu_cmp c;
        bool same = gpu_compare(b[i].back, b[i].host, b[i].numel, b[i].info.dtype, &c);
        GPU_EXPECT(same, "%s winner: %s: %zu mismatches, %zu unwritten; first at %zu: gpu %.9g, interpreter %.9g", file,
               b[i].info.name, c.mismatches, c.unwritten, c.first_bad, c.first_got, c.first_want);
        if (same) printf("  winner correct: %s max abs err %.3g\n", b[i].info.name, c.max_abs_err);
      }
    }
    tilec_kernel_destroy(k);
    tilec_program_destroy(wp);
  }
  /* the same key again: a cache hit, nothing runs */
  {
    progress_calls = 0;
    tilec_tune_result r2;
    double t0 = gpu_now_ms();
    st = tilec_autotune(path, 1, NULL, kernel, &space, dargs, np, 0, on_progress, NULL, &r2);
    double ms = gpu_now_ms() - t0;
    GPU_EXPECT(st == TILEC_OK && r2.from_cache == 1 && progress_calls == 0, "second call: %s, from_cache %d, %d progress calls",
           tilec_status_string(st), r2.from_cache, progress_calls);
    bool same = r2.nparams == r.nparams;
    for (int i = 0; same && i < r.nparams; i++) same = r2.values[i] == r.values[i] && !strcmp(r2.names[i], r.names[i]);
    GPU_EXPECT(same, "the cached winner is the winner");
    printf("  second call: %s (%.1f ms)\n", r2.summary, ms);
  }
out:
  for (int i = 0; i < np; i++) {
    if (!b[i].info.is_tensor) continue;
    gpu.cuMemFree(b[i].dev);
    free(b[i].host);
    free(b[i].orig);
    free(b[i].back);
  }
  tilec_program_destroy(p);
}

int main(void) {
  int rc = gpu_init();
  if (rc) return rc;
  gpu_seed();
  char dir[] = "/tmp/tilec-tune-gpu-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("TILEC_CACHE_DIR", dir, 1);

  /* softmax: R rows (prime), C ragged under BC */
  {
    const char *sym[] = {"R", "C"};
    int64_t val[] = {331, 1000 - (int64_t)(gpu_rand() % 200)};
    int64_t bc[] = {1024, 2048};
    tilec_tune_param ps[] = {{"BC", bc, 2}};
    tune_one("softmax.tile", "softmax", sym, val, 2, ps, 1);
  }
  /* gemm: ragged M, N, K */
  {
    const char *sym[] = {"M", "N", "K"};
    int64_t val[] = {257 + (int64_t)(gpu_rand() % 64), 300 + (int64_t)(gpu_rand() % 64), 129 + (int64_t)(gpu_rand() % 64)};
    int64_t bm[] = {64, 128}, bn[] = {64, 128}, warps[] = {4, 8};
    tilec_tune_param ps[] = {{"BM", bm, 2}, {"BN", bn, 2}, {"warps", warps, 2}};
    tune_one("gemm.tile", "cutlass_gemm", sym, val, 3, ps, 3);
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("note: could not remove %s\n", dir);
  printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
