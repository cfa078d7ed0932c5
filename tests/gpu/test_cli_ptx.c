/* test_cli_ptx.c: the PTX the `tilec` command writes runs on the GPU.  For
 * every .tile file of examples/:
 *  1. `tilec FILE.tile -o X.ptx` (the CLI next to libtilec.so, or $TILEC_CLI)
 *     must write exactly the bytes of the JIT's PTX for the same options
 *     (tilec_program_text(TILEC_STAGE_PTX) of a program made from the same
 *     path with the CLI's defaults: option tma-fallback=entry, each TMA form's
 *     no-TMA form a second entry KERNEL__notma, docs/cli.md "Two entries");
 *  2. every kernel is loaded twice: through the JIT (tilec_kernel_load) and
 *     from the CLI's file (tilec_kernel_load_ptx), both run on the same random
 *     inputs (never zeros; ragged sizes: 1, tile-1, tile+1, primes, which fail
 *     the tensor-map test, so a TMA kernel of the file runs its __notma entry;
 *     and a round of multiples of 16 that are not multiples of a tile, which
 *     pass it, so it runs its TMA entry; outputs poisoned with NaN bytes), and
 *     every tensor must come back bit-identical, and the CLI kernel's within the
 *     dtype's tolerance of the interpreter's (tilec_interpret); then, for a
 *     kernel with a __notma entry, the unfit case: every tensor a view one
 *     element into its buffer (no map takes it) with TILEC_PITCH_REPACK=0 (so
 *     that no read-only tensor is copied into a fitting one: attention's
 *     contiguous tensors always fit), through handles made for it; the entry
 *     must have run (the program log's note);
 *  3. with GPU_CLI_PTX_TIMING=1, the GPU time of a launch at 4096^3 of the wide block-scaled fp8
 *     GEMM (examples/gemm_fp8_blockscale.tile): the JIT (reference), the CLI's file
 *     (its TMA entry) and the CLI's --tma-fallback=inline file, both through tilec_kernel_load_ptx;
 *     7 rounds of 20 launches rotated, medians; the two-entry file's output bit-identical to the JIT's.
 *   usage: gpu_test_cli_ptx [EXAMPLES_DIR]   (exit 0 pass, 1 fail, 77 skip) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_util.h"

#ifndef TILEC_SOURCE_DIR
#define TILEC_SOURCE_DIR "."
#endif

#define MAX_PARAMS 32
#define MAX_SYMS 16
#define MAX_ELEMS ((int64_t)1 << 20)

static const int64_t round_sizes[][4] = {
    {1, 1, 1, 1},
    {65, 63, 17, 129},
    {127, 131, 33, 257},
    {80, 144, 48, 272}, /* FIT_ROUND: rows of 16-byte multiples, ragged in tiles */
};
#define FIT_ROUND 3
#define NROUNDS (int)(sizeof round_sizes / sizeof round_sizes[0])

static int failures, passes;
static char cli[4096];
static char tmpdir[] = "/tmp/tilec-cli-ptx-XXXXXX";

/* $TILEC_CLI, else `tilec` in the directory libtilec.so was loaded from. */
static bool find_cli(void) {
  const char *env = getenv("TILEC_CLI");
  if (env && *env) {
    snprintf(cli, sizeof cli, "%s", env);
  } else {
    Dl_info info;
    if (!dladdr((void *)tilec_version, &info) || !info.dli_fname) return false;
    char lib[4096];
    snprintf(lib, sizeof lib, "%s", info.dli_fname);
    snprintf(cli, sizeof cli, "%s/tilec", dirname(lib));
  }
  return access(cli, X_OK) == 0;
}

static char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[len] = 0;
    *n = (size_t)len;
  }
  return buf;
}


typedef struct tensor_buf {
  DLTensor dl;
  int64_t shape[4];
  size_t bytes;
  CUdeviceptr dev, base; /* dev: the tensor's data (base, or one element into it: the offset view) */
  void *init, *out_jit, *out_cli, *host; /* host: the interpreter's */
  DLTensor hl;
} tensor_buf;

enum { RUN_FAILED, RUN_OK, RUN_REFUSED };

/* Upload every tensor's initial bytes, launch k, synchronize.  Sizes the kernel's require() refuses
 * (attn_decode's G <= GM at these generic sizes) are RUN_REFUSED, the diagnostic copied to refusal. */
static int run_once(tilec_kernel *k, tensor_buf *tb, const tilec_param_info *info, tilec_arg *args, int np,
                    const char *what, char *refusal, size_t refusal_size) {
  for (int i = 0; i < np; i++)
    if (info[i].is_tensor && tb[i].bytes) gpu_check(gpu.cuMemcpyHtoD(tb[i].dev, tb[i].init, tb[i].bytes), "cuMemcpyHtoD");
  tilec_status st = tilec_kernel_launch(k, args, np, NULL);
  if (st == TILEC_ERROR_LAUNCH && strstr(tilec_kernel_error(k), "error: require failed in kernel '")) {
    snprintf(refusal, refusal_size, "%s", tilec_kernel_error(k));
    return RUN_REFUSED;
  }
  if (st != TILEC_OK) {
    printf("FAIL %s launch: %s: %s\n", what, tilec_status_string(st), tilec_kernel_error(k));
    return RUN_FAILED;
  }
  gpu_check(gpu.cuCtxSynchronize(), what);
  return RUN_OK;
}

/* The interpreter's arguments: each tensor a host copy of its initial bytes (tb[i].host), scalars as given. */
static void host_views(tensor_buf *tb, const tilec_param_info *info, const tilec_arg *args, int np, tilec_arg *hargs) {
  for (int i = 0; i < np; i++) {
    hargs[i] = args[i];
    if (!info[i].is_tensor) continue;
    if (tb[i].bytes) memcpy(tb[i].host, tb[i].init, tb[i].bytes);
    tb[i].hl = tb[i].dl;
    tb[i].hl.data = tb[i].host;
    tb[i].hl.device = (DLDevice){kDLCPU, 0};
    hargs[i].u.tensor = &tb[i].hl;
  }
}

static void free_bufs(tensor_buf *tb, const tilec_param_info *info, int np) {
  for (int i = 0; i < np; i++) {
    if (!info[i].is_tensor) continue;
    gpu.cuMemFree(tb[i].base);
    free(tb[i].init); free(tb[i].out_jit); free(tb[i].out_cli); free(tb[i].host);
  }
}

static bool run_round(tilec_program *p, int kidx, tilec_kernel *kj, tilec_kernel *kc, const char *file, int round,
                      bool offset) {
  const char *kname = tilec_program_kernel_name(p, kidx);
  int np = tilec_program_num_params(p, kidx);
  if (np < 0 || np > MAX_PARAMS) return printf("FAIL %s:%s: %d parameters\n", file, kname, np), false;
  tilec_param_info info[MAX_PARAMS];
  const char *syms[MAX_SYMS];
  int64_t symval[MAX_SYMS];
  int nsyms = 0;
  for (int i = 0; i < np; i++) {
    if (tilec_program_param(p, kidx, i, &info[i]) != TILEC_OK) return printf("FAIL %s:%s: no parameter info\n", file, kname), false;
    for (int d = 0; d < info[i].rank; d++)
      if (info[i].dim_symbol[d]) {
        int s = gpu_sym_index(syms, &nsyms, MAX_SYMS, info[i].dim_symbol[d]);
        if (s >= 0) symval[s] = round_sizes[round][s % 4];
      }
  }
  for (int i = 0; i < np; i++) /* keep tensors small: halve the largest symbol, staying odd */
    for (;;) {
      int64_t numel = 1;
      int biggest = -1;
      for (int d = 0; d < info[i].rank; d++) {
        if (!info[i].dim_symbol[d]) { numel *= info[i].dim_value[d]; continue; }
        int s = gpu_sym_index(syms, &nsyms, MAX_SYMS, info[i].dim_symbol[d]);
        numel *= symval[s];
        if (biggest < 0 || symval[s] > symval[biggest]) biggest = s;
      }
      if (numel <= MAX_ELEMS || biggest < 0 || symval[biggest] <= (round == FIT_ROUND ? 16 : 1)) break;
      /* (the fit round stays a multiple of 16: the map test still passes) */
      symval[biggest] = round == FIT_ROUND ? symval[biggest] / 32 * 16 : symval[biggest] / 2 | 1;
    }
  char sizes[256] = "";
  for (int s = 0; s < nsyms; s++)
    snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%s=%lld", s ? " " : "", syms[s], (long long)symval[s]);

  tensor_buf tb[MAX_PARAMS];
  tilec_arg args[MAX_PARAMS];
  memset(tb, 0, sizeof tb);
  for (int i = 0; i < np; i++) {
    if (!info[i].is_tensor) {
      if (!strcmp(info[i].dtype, "i64")) args[i] = (tilec_arg){.kind = TILEC_ARG_I64, .u.i64 = 1 + (int64_t)(gpu_rand() % 8)};
      else if (gpu_dtype_is_float(info[i].dtype)) args[i] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = (float)gpu_rand_uniform(0.05, 1.0)};
      else args[i] = (tilec_arg){.kind = TILEC_ARG_I32, .u.i32 = 1 + (int32_t)(gpu_rand() % 8)};
      continue;
    }
    tensor_buf *t = &tb[i];
    size_t numel = 1;
    for (int d = 0; d < info[i].rank; d++) {
      t->shape[d] = info[i].dim_symbol[d] ? symval[gpu_sym_index(syms, &nsyms, MAX_SYMS, info[i].dim_symbol[d])] : info[i].dim_value[d];
      numel *= (size_t)t->shape[d];
    }
    t->bytes = numel * (size_t)gpu_dtype_bytes(info[i].dtype);
    size_t alloc = t->bytes ? t->bytes : 1;
    t->init = malloc(alloc);
    t->out_jit = malloc(alloc);
    t->out_cli = malloc(alloc);
    t->host = malloc(alloc);
    /* @zeroed (attn_decode_fused's Count): zeros, the kernel's contract (with 0xFF bytes, -1, its merge never ran) */
    if (tilec_program_param_flags(p, kidx, i) & TILEC_PARAM_ZEROED) memset(t->init, 0, alloc);
    else if (info[i].written) memset(t->init, 0xFF, alloc); /* NaN bytes: unwritten elements stay visible */
    else gpu_fill_random(t->init, numel, info[i].dtype);
    gpu_check(gpu.cuMemAlloc(&t->base, alloc + 16), "cuMemAlloc");
    t->dev = t->base + (offset ? (CUdeviceptr)gpu_dtype_bytes(info[i].dtype) : 0);
    t->dl = (DLTensor){.data = (void *)(uintptr_t)t->dev, .device = {kDLCUDA, 0}, .ndim = info[i].rank,
                       .dtype = info[i].dl_dtype, .shape = t->shape};
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t->dl};
  }
  char refused_jit[1024] = "", refused_cli[1024] = "";
  int rj = run_once(kj, tb, info, args, np, "jit", refused_jit, sizeof refused_jit);
  bool ok = rj == RUN_OK;
  for (int i = 0; ok && i < np; i++)
    if (info[i].is_tensor && tb[i].bytes) gpu_check(gpu.cuMemcpyDtoH(tb[i].out_jit, tb[i].dev, tb[i].bytes), "cuMemcpyDtoH");
  if (rj == RUN_REFUSED) {
    /* refused by the JIT's launcher: the CLI kernel's launcher and the interpreter must refuse the same
     * sizes with the same diagnostic (test_examples.c's rule); nothing to compare */
    int rc = run_once(kc, tb, info, args, np, "cli-ptx", refused_cli, sizeof refused_cli);
    tilec_arg hargs[MAX_PARAMS];
    host_views(tb, info, args, np, hargs);
    tilec_status ist = tilec_interpret(p, kname, hargs, np);
    ok = rc == RUN_REFUSED && !strcmp(refused_jit, refused_cli) && ist == TILEC_ERROR_LAUNCH &&
         strstr(tilec_program_log(p), refused_jit);
    if (ok) printf("  refused by all three %s:%s [%s] (its require)\n", file, kname, sizes);
    else
      printf("FAIL %s:%s [%s]: the JIT's launcher refused (%s); the CLI kernel's %s, the interpreter %s\n", file, kname,
             sizes, refused_jit, rc == RUN_REFUSED ? refused_cli : "ran", ist == TILEC_OK ? "ran" : tilec_program_log(p));
    free_bufs(tb, info, np);
    return ok;
  }
  ok = ok && run_once(kc, tb, info, args, np, "cli-ptx", refused_cli, sizeof refused_cli) == RUN_OK;
  for (int i = 0; ok && i < np; i++)
    if (info[i].is_tensor && tb[i].bytes) gpu_check(gpu.cuMemcpyDtoH(tb[i].out_cli, tb[i].dev, tb[i].bytes), "cuMemcpyDtoH");
  /* the interpreter on the same inputs: the CLI kernel (either entry) within the dtype's tolerance */
  tilec_arg hargs[MAX_PARAMS];
  if (ok) host_views(tb, info, args, np, hargs);
  if (ok) {
    tilec_status ist = tilec_interpret(p, kname, hargs, np);
    if (ist != TILEC_OK) {
      printf("FAIL %s:%s [%s]: the interpreter: %s\n", file, kname, sizes, tilec_status_string(ist));
      ok = false;
    }
  }
  for (int i = 0; ok && i < np; i++) {
    if (!info[i].is_tensor || !info[i].written || !tb[i].bytes) continue;
    gpu_cmp c;
    size_t numel = tb[i].bytes / (size_t)gpu_dtype_bytes(info[i].dtype);
    /* (test_examples.c's: attn_decode's f32 partials of bf16 products) */
    double rtol = !strncmp(kname, "attn_decode", 11) && !strcmp(info[i].name, "Opart") ? 1e-2 : -1;
    if (!gpu_compare_rtol(tb[i].out_cli, tb[i].host, numel, info[i].dtype, rtol, &c)) {
      printf("FAIL %s:%s [%s] %s (%s): CLI-PTX kernel vs the interpreter: %zu of %zu elements off (max abs %g, rel %g; "
             "first at %zu: %g vs %g), %zu unwritten\n", file, kname, sizes, info[i].name, info[i].dtype, c.mismatches,
             c.n, c.max_abs_err, c.max_rel_err, c.first_bad, c.first_got, c.first_want, c.unwritten);
      ok = false;
    }
  }
  int written = 0;
  for (int i = 0; ok && i < np; i++) {
    if (!info[i].is_tensor || !tb[i].bytes) continue;
    if (memcmp(tb[i].out_jit, tb[i].out_cli, tb[i].bytes) != 0) {
      size_t b = 0;
      while (((char *)tb[i].out_jit)[b] == ((char *)tb[i].out_cli)[b]) b++;
      printf("FAIL %s:%s [%s] %s (%s): CLI-PTX kernel differs from the JIT kernel, first at byte %zu of %zu\n", file,
             kname, sizes, info[i].name, info[i].dtype, b, tb[i].bytes);
      ok = false;
    }
    /* the comparison means something only if the kernel wrote: some bytes left the poison */
    if (info[i].written && memcmp(tb[i].out_jit, tb[i].init, tb[i].bytes) != 0) written++;
  }
  bool any_written = false;
  for (int i = 0; i < np; i++) any_written |= info[i].is_tensor && info[i].written && tb[i].bytes > 0;
  if (ok && any_written && !written) {
    printf("FAIL %s:%s [%s]: no output written by either kernel\n", file, kname, sizes);
    ok = false;
  }
  if (ok) printf("PASS %s:%s [%s]%s: CLI PTX == JIT, outputs bit-identical, within tolerance of the interpreter\n", file,
                 kname, sizes, offset ? " (offset views)" : round == FIT_ROUND ? " (fit round)" : "");
  free_bufs(tb, info, np);
  return ok;
}

static void run_file(const char *dir, const char *name) {
  char path[4096], out[4200], cmd[9000];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(out, sizeof out, "%s/%s.ptx", tmpdir, name);
  snprintf(cmd, sizeof cmd, "'%s' '%s' -o '%s'", cli, path, out);
  int rc = system(cmd);
  size_t cli_len = 0;
  char *cli_ptx = rc == 0 ? read_file(out, &cli_len) : NULL;
  if (!cli_ptx) {
    printf("FAIL %s: `%s` exited %d or wrote nothing\n", name, cmd, rc);
    failures++;
    return;
  }
  tilec_program *p = NULL;
  /* the CLI's files carry a TMA kernel's no-TMA form as a second entry (docs/cli.md --tma-fallback): the same option */
  tilec_options *o = NULL;
  tilec_status st = tilec_options_create(&o);
  if (st == TILEC_OK) st = tilec_options_set(o, "tma-fallback", "entry");
  if (st == TILEC_OK) st = tilec_program_create_from_file(&p, path, o);
  tilec_options_destroy(o);
  if (st == TILEC_OK) st = tilec_program_compile(p, TILEC_STAGE_PTX);
  if (st != TILEC_OK) {
    printf("FAIL %s: JIT compile: %s\n%s\n", name, tilec_status_string(st), p ? tilec_program_log(p) : "");
    failures++;
    tilec_program_destroy(p);
    free(cli_ptx);
    return;
  }
  const char *jit_ptx = tilec_program_text(p, TILEC_STAGE_PTX);
  size_t jit_len = strlen(jit_ptx);
  if (cli_len != jit_len || memcmp(cli_ptx, jit_ptx, jit_len) != 0) {
    size_t b = 0;
    while (b < cli_len && b < jit_len && cli_ptx[b] == jit_ptx[b]) b++;
    printf("FAIL %s: CLI PTX (%zu bytes) differs from the JIT's (%zu bytes) at byte %zu: ...%.40s... vs ...%.40s...\n",
           name, cli_len, jit_len, b, cli_ptx + b, jit_ptx + b);
    failures++;
  } else {
    printf("PASS %s: CLI PTX == JIT PTX (%zu bytes)\n", name, jit_len);
    passes++;
  }
  for (int ki = 0; ki < tilec_program_num_kernels(p); ki++) {
    const char *kname = tilec_program_kernel_name(p, ki);
    tilec_kernel *kj = NULL, *kc = NULL;
    st = tilec_kernel_load(p, kname, 0, &kj);
    if (st == TILEC_ERROR_NO_DEVICE) {
      printf("SKIP: %s\n", tilec_program_log(p));
      exit(GPU_SKIP);
    }
    if (st == TILEC_OK) st = tilec_kernel_load_ptx(p, kname, cli_ptx, 0, &kc);
    if (st != TILEC_OK) {
      printf("FAIL %s:%s: load: %s\n%s\n", name, kname, tilec_status_string(st), tilec_program_log(p));
      failures++;
    } else {
      printf("loaded %s:%s (jit: %s, cli: %s)\n", name, kname, tilec_kernel_origin(kj), tilec_kernel_origin(kc));
      for (int r = 0; r < NROUNDS; r++) {
        if (run_round(p, ki, kj, kc, name, r, false)) passes++;
        else failures++;
      }
      /* a kernel with a no-TMA entry: the unfit case (offset views, no pitch repack, handles of their
       * own: the switch is read when a handle is made) ran it (tilec_kernel_load_ptx's note) */
      int cfg_threads = 0;
      const char *entry = NULL;
      char decl[300], note[400];
      tilec_kernel_config(kc, &cfg_threads, NULL, &entry);
      snprintf(decl, sizeof decl, ".entry %s__notma(", entry ? entry : kname);
      snprintf(note, sizeof note, "the PTX's no-TMA entry %s__notma runs such launches", entry ? entry : kname);
      if (strstr(cli_ptx, decl)) {
        const char *old = getenv("TILEC_PITCH_REPACK");
        char *keep = old ? strdup(old) : NULL;
        setenv("TILEC_PITCH_REPACK", "0", 1);
        tilec_kernel *kj2 = NULL, *kc2 = NULL;
        tilec_status s2 = tilec_kernel_load(p, kname, 0, &kj2);
        if (s2 == TILEC_OK) s2 = tilec_kernel_load_ptx(p, kname, cli_ptx, 0, &kc2);
        if (keep) setenv("TILEC_PITCH_REPACK", keep, 1);
        else unsetenv("TILEC_PITCH_REPACK");
        free(keep);
        if (s2 != TILEC_OK) {
          printf("FAIL %s:%s: load for the offset views: %s\n%s\n", name, kname, tilec_status_string(s2), tilec_program_log(p));
          failures++;
        } else if (run_round(p, ki, kj2, kc2, name, 1, true)) {
          passes++;
        } else {
          failures++;
        }
        tilec_kernel_destroy(kc2);
        tilec_kernel_destroy(kj2);
        if (strstr(tilec_program_log(p), note)) {
          printf("PASS %s:%s: its no-TMA entry ran the unfit rounds\n", name, kname);
          passes++;
        } else {
          printf("FAIL %s:%s: the PTX has a no-TMA entry, and no launch ran it\n", name, kname);
          failures++;
        }
      }
    }
    tilec_kernel_destroy(kc);
    tilec_kernel_destroy(kj);
  }
  tilec_program_destroy(p);
  free(cli_ptx);
  unlink(out);
}

/* ---- 3. GPU_CLI_PTX_TIMING=1: the CLI's files of the wide block-scaled GEMM against the JIT ---- */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static tilec_kernel *load_cli_file(tilec_program *p, const char *path, const char *flags, const char *tag) {
  char out[4200], cmd[9000];
  snprintf(out, sizeof out, "%s/timing_%s.ptx", tmpdir, tag);
  snprintf(cmd, sizeof cmd, "'%s' '%s' --arch=sm_90a %s -o '%s'", cli, path, flags, out);
  size_t n = 0;
  char *ptx = system(cmd) == 0 ? read_file(out, &n) : NULL;
  unlink(out);
  tilec_kernel *k = NULL;
  if (!ptx || tilec_kernel_load_ptx(p, "cutlass_gemm_fp8_blockscale", ptx, 0, &k) != TILEC_OK) {
    printf("FAIL timing: `%s`: %s\n", cmd, ptx ? tilec_program_log(p) : "no file");
    failures++;
  }
  free(ptx);
  return k;
}

static void timing(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/gemm_fp8_blockscale.tile", dir);
  tilec_program *p = NULL;
  tilec_options *o = NULL;
  tilec_options_create(&o);
  tilec_options_set_arch(o, "sm_90a");
  tilec_status st = tilec_program_create_from_file(&p, path, o);
  tilec_options_destroy(o);
  tilec_kernel *k[3] = {NULL, NULL, NULL};
  if (st == TILEC_OK) st = tilec_kernel_load(p, "cutlass_gemm_fp8_blockscale", 0, &k[0]);
  if (st != TILEC_OK) {
    printf("FAIL timing: %s: %s\n", path, p ? tilec_program_log(p) : "cannot read");
    failures++;
    tilec_program_destroy(p);
    return;
  }
  k[1] = load_cli_file(p, path, "", "entry");
  k[2] = load_cli_file(p, path, "--tma-fallback=inline", "inline");
  const int64_t M = 4096, N = 4096, K = 4096, KB = K / 128, NB = N / 128;
  int64_t sa[2] = {M, K}, sw[2] = {N, K}, ssa[2] = {M, KB}, ssw[2] = {NB, KB}, sc[2] = {M, N};
  size_t bytes[5] = {(size_t)(M * K), (size_t)(N * K), (size_t)(M * KB) * 4, (size_t)(NB * KB) * 4, (size_t)(M * N) * 2};
  const char *dt[4] = {"f8e4m3", "f8e4m3", "f32", "f32"};
  CUdeviceptr d[4], c[3];
  for (int i = 0; i < 4; i++) {
    void *h = malloc(bytes[i]);
    gpu_fill_random(h, bytes[i] / (size_t)gpu_dtype_bytes(dt[i]), dt[i]);
    gpu_check(gpu.cuMemAlloc(&d[i], bytes[i]), "alloc");
    gpu_check(gpu.cuMemcpyHtoD(d[i], h, bytes[i]), "h2d");
    free(h);
  }
  for (int v = 0; v < 3; v++) {
    gpu_check(gpu.cuMemAlloc(&c[v], bytes[4]), "alloc");
    gpu_check(gpu.cuMemsetD8(c[v], 0xFF, bytes[4]), "poison");
  }
  DLTensor t[3][5];
  tilec_arg args[3][5];
  for (int v = 0; v < 3; v++) {
    int64_t *shapes[5] = {sa, sw, ssa, ssw, sc};
    DLDataType dts[5] = {{kDLUInt, 8, 1}, {kDLUInt, 8, 1}, {kDLFloat, 32, 1}, {kDLFloat, 32, 1}, {kDLBfloat, 16, 1}};
    for (int i = 0; i < 5; i++) {
      t[v][i] = (DLTensor){.data = (void *)(uintptr_t)(i < 4 ? d[i] : c[v]), .device = {kDLCUDA, 0}, .ndim = 2,
                           .dtype = dts[i], .shape = shapes[i]};
      args[v][i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[v][i]};
    }
  }
  enum { ROUNDS = 7, NL = 20 };
  double ms[3][ROUNDS];
  bool ok = true;
  for (int v = 0; v < 3 && ok; v++)
    if (!k[v] || tilec_kernel_launch(k[v], args[v], 5, NULL) != TILEC_OK) ok = false;
  gpu_check(gpu.cuCtxSynchronize(), "sync");
  for (int r = 0; r < ROUNDS && ok; r++)
    for (int j = 0; j < 3; j++) {
      int v = (r + j) % 3;
      double t0 = gpu_now_ms();
      for (int i = 0; i < NL; i++) tilec_kernel_launch(k[v], args[v], 5, NULL);
      gpu_check(gpu.cuCtxSynchronize(), "sync");
      ms[v][r] = (gpu_now_ms() - t0) / NL;
    }
  if (!ok) {
    printf("FAIL timing: a kernel did not load or launch\n");
    failures++;
  } else {
    for (int v = 0; v < 3; v++) qsort(ms[v], ROUNDS, sizeof(double), cmp_double);
    double m0 = ms[0][ROUNDS / 2], m1 = ms[1][ROUNDS / 2], m2 = ms[2][ROUNDS / 2];
    printf("timing blockscale fp8 wide 4096^3: JIT %.4f ms (%.0f TFLOP/s), CLI PTX (two entries) %.4f (%.3fx the JIT), "
           "CLI PTX inline %.4f (%.3fx the JIT)\n", m0, 2.0 * M * N * K / m0 / 1e9, m1, m1 / m0, m2, m2 / m0);
    void *h0 = malloc(bytes[4]), *h1 = malloc(bytes[4]);
    gpu_check(gpu.cuMemcpyDtoH(h0, c[0], bytes[4]), "d2h");
    for (int v = 1; v < 3; v++) {
      gpu_check(gpu.cuMemcpyDtoH(h1, c[v], bytes[4]), "d2h");
      bool same = memcmp(h0, h1, bytes[4]) == 0;
      /* (the two-entry file's TMA entry is the JIT's kernel: bit-identical; the inline one a note) */
      printf("%s timing: the %s file's output %s the JIT's\n", same ? "PASS" : v == 1 ? "FAIL" : "note",
             v == 1 ? "two-entry" : "inline", same ? "bit-identical to" : "differs from");
      if (same) passes++;
      else if (v == 1) failures++;
    }
    free(h0), free(h1);
  }
  for (int i = 0; i < 4; i++) gpu.cuMemFree(d[i]);
  for (int v = 0; v < 3; v++) gpu.cuMemFree(c[v]), tilec_kernel_destroy(k[v]);
  tilec_program_destroy(p);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : getenv("TILEC_EXAMPLES");
  if (!dir) dir = TILEC_SOURCE_DIR "/examples";
  if (!find_cli()) {
    printf("FAIL: the tilec command was not found (%s); set TILEC_CLI\n", cli[0] ? cli : "next to libtilec.so");
    return 1;
  }
  int rc = gpu_init();
  if (rc) return rc;
  gpu_seed();
  if (!mkdtemp(tmpdir)) {
    printf("FAIL: cannot create a temporary directory\n");
    return 1;
  }
  int files = gpu_each_tile_file(dir, run_file);
  if (files < 0) return 1;
  const char *tm = getenv("GPU_CLI_PTX_TIMING");
  if (tm && !strcmp(tm, "1")) timing(dir);
  rmdir(tmpdir);
  printf("cli %s: %d example files, %d checks passed, %d failed\n", cli, files, passes, failures);
  if (files == 0) {
    printf("FAIL: no .tile files in %s\n", dir);
    return 1;
  }
  return failures ? 1 : 0;
}
