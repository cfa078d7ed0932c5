/* launch_overhead.c: host cost of tilec's launch path and of a warm start.
 *  1. CPU time per launch, many launches without a sync, median of several
 *     runs: tilec_kernel_launch (checks, cached grid, ABI packing) against a
 *     bare cuLaunchKernel of the same code (loaded here from the same PTX).
 *  2. Start-up in a new process, split in two: driver initialization
 *     (tilec_device_init: cuInit + the primary context, not tilec's), then
 *     tilec's own part, program create + kernel load, timed alone: cold
 *     (empty cache: front-end, passes, LLVM, driver JIT) against warm (the
 *     disk cache: front-end and passes, cache read, cuModuleLoadData of the
 *     cubin).  The warm part is also split: create + front-end + passes, and
 *     the load itself (key, cache read, module load, resource checks).
 *  3. The launch path when the shapes change every launch (the argument checks and the
 *     grid evaluated each time, alternating N and N - 1): vadd against vadd with a
 *     require() (docs/language.md 6.1: its condition evaluated with the grid), and
 *     that require kernel at the same shape every launch (no evaluation: 1.'s path).
 *   usage: launch_overhead [LAUNCHES_PER_RUN]     (exit 77 without a GPU) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

static const char source[] =
    "kernel vadd(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N], a: f32)\n"
    "    tiles(B = 256)\n"
    "    grid(cdiv(N, B))\n"
    "{\n"
    "    i = program_id(0) * B;\n"
    "    store(Z[i : i + B], load(X[i : i + B]) * a + load(Y[i : i + B]));\n"
    "}\n";

/* vadd with a launch-time check (3.): the same code, one require in the grid region */
static const char source_req[] =
    "kernel vadd(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N], a: f32)\n"
    "    tiles(B = 256)\n"
    "    grid(cdiv(N, B))\n"
    "{\n"
    "    require(N <= 1 << 30 && N % 1 == 0, \"N fits\");\n"
    "    i = program_id(0) * B;\n"
    "    store(Z[i : i + B], load(X[i : i + B]) * a + load(Y[i : i + B]));\n"
    "}\n";

#define RUNS 7

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* Child mode: driver init (untimed by the load), then create + load; prints
 * "INIT_MS FRONT_MS LOAD_MS ORIGIN" (FRONT: create + front-end + passes). */
static int child(void) {
  double t0 = gpu_now_ms();
  tilec_status st = tilec_device_init(0);
  double init_ms = gpu_now_ms() - t0;
  if (st != TILEC_OK) {
    fprintf(stderr, "tilec_device_init: %s\n", tilec_status_string(st));
    return 1;
  }
  tilec_program *p = NULL;
  tilec_kernel *k = NULL;
  t0 = gpu_now_ms();
  st = tilec_program_create(&p, source, "vadd.tile", NULL);
  if (st == TILEC_OK) st = tilec_program_compile(p, TILEC_STAGE_IR);
  double t1 = gpu_now_ms();
  if (st == TILEC_OK) st = tilec_kernel_load(p, "vadd", 0, &k);
  double t2 = gpu_now_ms();
  if (st != TILEC_OK) {
    fprintf(stderr, "%s\n%s", tilec_status_string(st), p ? tilec_program_log(p) : "");
    return 1;
  }
  printf("%.3f %.3f %.3f %s\n", init_ms, t1 - t0, t2 - t1, tilec_kernel_origin(k));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  return 0;
}

typedef struct child_times { double init, front, load; char origin[64]; } child_times;

static bool run_child(const char *self, const char *cache_dir, child_times *t) {
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "TILEC_CACHE_DIR='%s' '%s' --child", cache_dir, self);
  FILE *f = popen(cmd, "r");
  if (!f) return false;
  bool ok = fscanf(f, "%lf %lf %lf %63s", &t->init, &t->front, &t->load, t->origin) == 4;
  return pclose(f) == 0 && ok;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--child")) return child();
  int launches = argc > 1 ? atoi(argv[1]) : 2000;
  if (launches < 1) launches = 2000;
  int rc = gpu_init();
  if (rc) return rc;

  tilec_program *p = NULL;
  tilec_kernel *k = NULL;
  tilec_status st = tilec_program_create(&p, source, "vadd.tile", NULL);
  if (st == TILEC_OK) st = tilec_kernel_load(p, "vadd", 0, &k);
  if (st == TILEC_OK) st = tilec_program_compile(p, TILEC_STAGE_PTX); /* the PTX for the bare launch */
  if (st != TILEC_OK) {
    fprintf(stderr, "%s\n%s", tilec_status_string(st), p ? tilec_program_log(p) : "");
    return st == TILEC_ERROR_NO_DEVICE ? GPU_SKIP : 1;
  }
  int threads = 0, smem = 0;
  const char *entry = NULL;
  tilec_kernel_config(k, &threads, &smem, &entry);
  CUmodule mod;
  CUfunction fn;
  gpu_check(gpu.cuModuleLoadData(&mod, tilec_program_text(p, TILEC_STAGE_PTX)), "cuModuleLoadData(PTX)");
  gpu_check(gpu.cuModuleGetFunction(&fn, mod, entry), "cuModuleGetFunction");

  const int n = 4096; /* 16 programs: the GPU keeps up with the launches */
  CUdeviceptr dx, dy, dz;
  gpu_check(gpu.cuMemAlloc(&dx, n * 4), "alloc");
  gpu_check(gpu.cuMemAlloc(&dy, n * 4), "alloc");
  gpu_check(gpu.cuMemAlloc(&dz, n * 4), "alloc");
  gpu_check(gpu.cuMemsetD8(dx, 0x3F, n * 4), "memset");
  gpu_check(gpu.cuMemsetD8(dy, 0x3F, n * 4), "memset");
  int64_t shape[1] = {n};
  DLTensor tx = {.data = (void *)(uintptr_t)dx, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor ty = tx, tz = tx;
  ty.data = (void *)(uintptr_t)dy;
  tz.data = (void *)(uintptr_t)dz;
  tilec_arg args[4] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &tx}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &ty},
                       {.kind = TILEC_ARG_TENSOR, .u.tensor = &tz}, {.kind = TILEC_ARG_F32, .u.f32 = 1.5f}};
  /* the bare launch's parameters, per the ABI: ptr, u32 size, u64 stride per tensor; f32 */
  uint64_t px = dx, py = dy, pz = dz, one = 1;
  uint32_t un = (uint32_t)n;
  float a = 1.5f;
  void *params[] = {&px, &un, &one, &py, &un, &one, &pz, &un, &one, &a};
  unsigned grid = (unsigned)((n + 255) / 256);

  double t_tilec[RUNS], t_bare[RUNS];
  if (tilec_kernel_launch(k, args, 4, NULL) != TILEC_OK) { /* warm-up, first shape */
    fprintf(stderr, "%s\n", tilec_kernel_error(k));
    return 1;
  }
  gpu_check(gpu.cuLaunchKernel(fn, grid, 1, 1, (unsigned)threads, 1, 1, (unsigned)smem, NULL, params, NULL), "bare launch");
  gpu_check(gpu.cuCtxSynchronize(), "sync");
  for (int r = 0; r < RUNS; r++) {
    double t0 = gpu_now_ms();
    for (int i = 0; i < launches; i++) tilec_kernel_launch(k, args, 4, NULL);
    t_tilec[r] = (gpu_now_ms() - t0) * 1e3 / launches;
    gpu_check(gpu.cuCtxSynchronize(), "sync");
    t0 = gpu_now_ms();
    for (int i = 0; i < launches; i++) gpu.cuLaunchKernel(fn, grid, 1, 1, (unsigned)threads, 1, 1, (unsigned)smem, NULL, params, NULL);
    t_bare[r] = (gpu_now_ms() - t0) * 1e3 / launches;
    gpu_check(gpu.cuCtxSynchronize(), "sync");
  }
  double mt = median(t_tilec, RUNS), mb = median(t_bare, RUNS);

  /* 3. shapes changing every launch: checks + grid each time, without and with a require */
  tilec_program *rp = NULL;
  tilec_kernel *rk = NULL;
  if (tilec_program_create(&rp, source_req, "vadd_req.tile", NULL) != TILEC_OK ||
      tilec_kernel_load(rp, "vadd", 0, &rk) != TILEC_OK) {
    fprintf(stderr, "vadd with require: %s", rp ? tilec_program_log(rp) : "");
    return 1;
  }
  double t_alt[RUNS], t_alt_req[RUNS], t_same_req[RUNS];
  int64_t shapes[2] = {n, n - 1};
  for (int r = 0; r < RUNS; r++) {
    for (int which = 0; which < 2; which++) {
      tilec_kernel *kk = which ? rk : k;
      double t0 = gpu_now_ms();
      for (int i = 0; i < launches; i++) {
        shape[0] = shapes[i & 1];
        if (tilec_kernel_launch(kk, args, 4, NULL) != TILEC_OK) {
          fprintf(stderr, "%s\n", tilec_kernel_error(kk));
          return 1;
        }
      }
      (which ? t_alt_req : t_alt)[r] = (gpu_now_ms() - t0) * 1e3 / launches;
      gpu_check(gpu.cuCtxSynchronize(), "sync");
    }
    shape[0] = n;
    double t0 = gpu_now_ms();
    for (int i = 0; i < launches; i++) tilec_kernel_launch(rk, args, 4, NULL);
    t_same_req[r] = (gpu_now_ms() - t0) * 1e3 / launches;
    gpu_check(gpu.cuCtxSynchronize(), "sync");
  }
  shape[0] = n;
  double ma = median(t_alt, RUNS), mar = median(t_alt_req, RUNS), msr = median(t_same_req, RUNS);
  tilec_kernel_destroy(rk);
  tilec_program_destroy(rp);

  /* warm start: new processes, a fresh cache directory */
  char dir[] = "/tmp/tilec-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  double init[2 * RUNS], cold[RUNS], warm[RUNS], warm_front[RUNS], warm_load[RUNS];
  char origin_cold[64] = "", origin_warm[64] = "";
  int ninit = 0, ncold = 0, nwarm = 0;
  for (int r = 0; r < RUNS; r++) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/*.tlk", dir);
    if (system(cmd) != 0) break;
    child_times c, w;
    if (run_child(argv[0], dir, &c)) {
      init[ninit++] = c.init;
      cold[ncold++] = c.front + c.load;
      snprintf(origin_cold, sizeof origin_cold, "%s", c.origin);
    }
    if (run_child(argv[0], dir, &w)) {
      init[ninit++] = w.init;
      warm[nwarm] = w.front + w.load;
      warm_front[nwarm] = w.front;
      warm_load[nwarm++] = w.load;
      snprintf(origin_warm, sizeof origin_warm, "%s", w.origin);
    }
  }
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);

  printf("\n%-44s %12s\n", "launch path (host CPU time, median of 7)", "us/launch");
  printf("%-44s %12.2f\n", "tilec_kernel_launch", mt);
  printf("%-44s %12.2f\n", "cuLaunchKernel (same code, same args)", mb);
  printf("%-44s %12.2f\n", "tilec overhead", mt - mb);
  printf("%-44s %12.2f\n", "require kernel, same shape", msr);
  printf("%-44s %12.2f\n", "shape changing: checks + grid", ma);
  printf("%-44s %12.2f\n", "shape changing: checks + grid + require", mar);
  printf("\n%-44s %12s\n", "start-up in a new process (median of 7)", "ms");
  if (ninit) printf("%-44s %12.2f  (cuInit + primary context; not tilec's)\n", "driver init (tilec_device_init)", median(init, ninit));
  if (ncold) printf("%-44s %12.2f  (%s)\n", "tilec cold load (create + load, no cache)", median(cold, ncold), origin_cold);
  if (nwarm) {
    printf("%-44s %12.2f  (%s; goal <= 2)\n", "tilec warm load (create + load, disk cache)", median(warm, nwarm), origin_warm);
    printf("%-44s %12.2f\n", "  of which create + front-end + passes", median(warm_front, nwarm));
    printf("%-44s %12.2f\n", "  of which kernel load (key, read, module)", median(warm_load, nwarm));
  }
  printf("(%d launches per run, grid %u x %d threads, entry %s)\n", launches, grid, threads, entry);
  /* a kernel with tensor maps (TMA ring, docs/pipelines.md): gemm.tile's
   * cutlass_gemm at 256^3, same tensors every launch (maps encoded once) */
  const char *gemm = getenv("TILEC_GEMM_TILE");
  if (gemm && *gemm) {
    tilec_program *gp = NULL;
    tilec_kernel *gk = NULL;
    FILE *fp = fopen(gemm, "rb");
    static char text[1 << 16];
    size_t len = fp ? fread(text, 1, sizeof text - 1, fp) : 0;
    if (fp) fclose(fp);
    text[len] = 0;
    if (tilec_program_create(&gp, text, "gemm.tile", NULL) != TILEC_OK || tilec_kernel_load(gp, "cutlass_gemm", 0, &gk) != TILEC_OK) {
      printf("gemm: load failed\n");
      return 1;
    }
    const int64_t g = 256;
    CUdeviceptr da, db, dc;
    gpu_check(gpu.cuMemAlloc(&da, g * g * 2), "alloc");
    gpu_check(gpu.cuMemAlloc(&db, g * g * 2), "alloc");
    gpu_check(gpu.cuMemAlloc(&dc, g * g * 2), "alloc");
    int64_t gs[2] = {g, g};
    DLTensor ta = {.data = (void *)(uintptr_t)da, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = gs};
    DLTensor tb = ta, tc = ta;
    tb.data = (void *)(uintptr_t)db;
    tc.data = (void *)(uintptr_t)dc;
    tilec_arg gargs[3] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &ta}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &tb},
                          {.kind = TILEC_ARG_TENSOR, .u.tensor = &tc}};
    if (tilec_kernel_launch(gk, gargs, 3, NULL) != TILEC_OK) {
      printf("gemm: %s\n", tilec_kernel_error(gk));
      return 1;
    }
    gpu_check(gpu.cuCtxSynchronize(), "sync");
    double t_g[RUNS];
    int gl = launches / 10 > 10 ? launches / 10 : 10; /* the GPU is the bottleneck: fewer */
    for (int r = 0; r < RUNS; r++) {
      double t0 = gpu_now_ms();
      for (int i = 0; i < gl; i++) tilec_kernel_launch(gk, gargs, 3, NULL);
      t_g[r] = (gpu_now_ms() - t0) * 1e3 / gl;
      gpu_check(gpu.cuCtxSynchronize(), "sync");
    }
    printf("%-44s %12.2f  (%s; %d launches per run)\n", "tilec_kernel_launch cutlass_gemm 256^3", median(t_g, RUNS),
           getenv("TILEC_TMA") && getenv("TILEC_TMA")[0] == '0' ? "cp.async ring" : "TMA: 2 tensor maps", gl);
  }
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  return 0;
}
