/* test_alignment.c: the kernels whose fast paths need alignment (gemm.tile
 * bf16, gemm_fp8.tile, attn.tile, rmsnorm.tile, softmax.tile) on tensors that
 * break it: views offset by one element (through the data pointer or
 * DLTensor.byte_offset), rows padded by one element (row stride = cols + 1),
 * transposed storage (last stride != 1), K = 511 and other sizes that are no
 * multiple of a tile or of 8, alone and combined, next to the aligned case.
 *
 * Each tensor lives in a "storage" allocation of exactly the bytes its layout
 * spans (so compute-sanitizer memcheck sees any access past it).  Storage
 * elements outside the view (the padding) are NaN-poisoned, in inputs too, so
 * a kernel that reads them spoils its result; outputs are poisoned whole.
 * Then: the JIT kernel on the device storage, tilec_interpret on the same host
 * storage, and the whole storage compared (per-dtype tolerances of
 * gpu_compare; padding must stay poisoned, inputs unchanged).  The oracle is
 * itself checked: the interpreter on the odd layout must give bit for bit
 * what it gives on a compact copy of the same logical data.
 * The test's own kernels (tests/gpu/kernels, beside EXAMPLES_DIR/..) add views whose start
 * along the last dim is no multiple of the vector width.
 *   usage: gpu_test_alignment [--interp-only] [EXAMPLES_DIR]
 *   exit 0 pass, 1 fail, 77 no GPU (--interp-only needs none: the oracle
 *   checks alone, on the CPU). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

#ifndef TILEC_SOURCE_DIR
#define TILEC_SOURCE_DIR "."
#endif

#define MAX_PARAMS 16

/* One way of laying out the tensors of a kernel.  `mask` picks the tensor
 * parameters (bit t = t-th tensor parameter) that get the odd layout; the
 * others stay compact and aligned. */
typedef struct layout_case {
  const char *name;
  const char *sizes;  /* "SYM=N ...": every shape symbol of the five files */
  int offset;         /* elements added to the start of the view */
  bool byte_offset;   /* the offset through DLTensor.byte_offset, else the data pointer */
  int pad;            /* extra elements at the end of every row (innermost stored dim) */
  bool transpose;     /* last two dims stored swapped (rank 1: every other element) */
  unsigned mask;
} layout_case;

#define NICE "M=256 N=256 K=256 Z=1 H=2 S=256 R=8 C=1024"
#define K511 "M=127 N=129 K=511 Z=1 H=2 S=511 R=7 C=511"
#define PRIMES "M=131 N=97 K=509 Z=2 H=1 S=383 R=13 C=257"
#define TINY "M=1 N=1 K=1 Z=1 H=1 S=1 R=1 C=1"
#define BIG "M=385 N=263 K=511 Z=1 H=3 S=767 R=67 C=1021"
#define ALL 0xFFFFu

static const layout_case cases[] = {
    {"aligned", NICE, 0, false, 0, false, 0},
    {"offset1-ptr", NICE, 1, false, 0, false, ALL},
    {"offset1-byte_offset-alternate", NICE, 1, true, 0, false, 0x5},
    {"offset3-byte_offset", NICE, 3, true, 0, false, ALL},
    {"pitch+1", NICE, 0, false, 1, false, ALL},
    /* 8- / 4-byte aligned rows and bases, not 16 (bf16 rows of 520 / 516 bytes, base + 8 / + 4;
     * 8-bit rows of 260 / 258 bytes): the cp.async ring's narrow copies under TILEC_NARROW_COPY=1 */
    {"pitch+4-offset4", NICE, 4, false, 4, false, ALL},
    {"pitch+2-offset2-byte_offset", NICE, 2, true, 2, false, ALL},
    {"transposed", NICE, 0, false, 0, true, ALL},
    {"transposed-second", NICE, 0, false, 0, true, 0x2},
    {"K511-compact", K511, 0, false, 0, false, 0},
    {"K511-offset1-pitch+1", K511, 1, true, 1, false, ALL},
    {"K511-transposed-offset1", K511, 1, false, 0, true, ALL},
    {"primes-pitch+3-offset1", PRIMES, 1, false, 3, false, ALL},
    {"primes-transposed-first", PRIMES, 0, false, 0, true, 0x1},
    {"tiny-offset1", TINY, 1, true, 0, false, ALL},
    {"big-K511-pitch+1-offset1", BIG, 1, true, 1, false, ALL},
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static const char *const files[] = {"gemm.tile", "gemm_fp8.tile", "gemm_bias_gelu.tile", "attn.tile", "rmsnorm.tile", "softmax.tile"};
/* the test's own kernels, in tests/gpu/kernels (found beside the examples directory) */
static const char *const test_files[] = {"shifted_views.tile"};

typedef struct tensor {
  int rank, eb;
  const char *dtype;
  int64_t shape[4], strides[4];
  int64_t offset;     /* elements */
  size_t numel;       /* logical elements */
  size_t storage;     /* elements the allocation holds: offset + span */
  unsigned char *init;    /* storage as made (inputs random in the view, poison elsewhere) */
  unsigned char *interp;  /* storage the interpreter ran on */
  unsigned char *compact; /* compact copy of the view, for the oracle check */
  unsigned char *back;    /* storage read back from the GPU */
  CUdeviceptr dev;
  DLTensor dl_dev, dl_host, dl_compact;
  int64_t compact_strides[4];
} tensor;

static int failures, passes;
static bool interp_only;

static int64_t size_of_symbol(const char *sizes, const char *sym) {
  size_t n = strlen(sym);
  for (const char *s = sizes; *s;) {
    while (*s == ' ') s++;
    if (!strncmp(s, sym, n) && s[n] == '=') return strtoll(s + n + 1, NULL, 10);
    while (*s && *s != ' ') s++;
  }
  fprintf(stderr, "FAIL: size symbol %s not in \"%s\"\n", sym, sizes);
  exit(1);
}

/* Strides and storage of t for case c (odd: the case's layout, else compact). */
static void make_layout(tensor *t, const layout_case *c, bool odd) {
  int r = t->rank;
  int order[4]; /* dims from outermost to innermost stored */
  for (int d = 0; d < r; d++) order[d] = d;
  bool transpose = odd && c->transpose;
  if (transpose && r >= 2) {
    order[r - 1] = r - 2;
    order[r - 2] = r - 1;
  }
  int64_t step = 1;
  for (int j = r - 1; j >= 0; j--) {
    int d = order[j];
    if (j == r - 1) {
      int64_t inner = (transpose && r == 1) ? 2 : 1;
      t->strides[d] = inner;
      step = t->shape[d] * inner + (odd && r > 1 ? c->pad : 0);
    } else {
      t->strides[d] = step;
      step *= t->shape[d];
    }
  }
  t->offset = odd ? c->offset : 0;
  int64_t span = 1;
  for (int d = 0; d < r; d++) span += (t->shape[d] - 1) * t->strides[d];
  t->storage = (size_t)(t->offset + span);
  int64_t s = 1;
  for (int d = r - 1; d >= 0; d--) {
    t->compact_strides[d] = s;
    s *= t->shape[d];
  }
}

/* Storage index of the logical element with row-major number i. */
static size_t storage_index(const tensor *t, size_t i) {
  int64_t at = t->offset;
  for (int d = t->rank - 1; d >= 0; d--) {
    at += (int64_t)(i % (size_t)t->shape[d]) * t->strides[d];
    i /= (size_t)t->shape[d];
  }
  return (size_t)at;
}

static void set_tensor(DLTensor *dl, const tensor *t, DLDataType dt, void *base, bool host, bool byte_offset,
                       int64_t *strides) {
  memset(dl, 0, sizeof *dl);
  dl->ndim = t->rank;
  dl->dtype = dt;
  dl->shape = (int64_t *)t->shape;
  dl->strides = strides;
  dl->device = host ? (DLDevice){kDLCPU, 0} : (DLDevice){kDLCUDA, 0};
  size_t off = (size_t)t->offset * (size_t)t->eb;
  if (byte_offset) {
    dl->data = base;
    dl->byte_offset = off;
  } else {
    dl->data = (char *)base + off;
  }
}

/* One kernel, one layout case.  Returns false on a failure (printed). */
static bool run_case(tilec_program *p, tilec_kernel *k, int kidx, const char *file, const layout_case *c) {
  const char *kname = tilec_program_kernel_name(p, kidx);
  int np = tilec_program_num_params(p, kidx);
  if (np < 0 || np > MAX_PARAMS) {
    printf("FAIL %s:%s: %d parameters\n", file, kname, np);
    return false;
  }
  tilec_param_info info[MAX_PARAMS];
  tensor tb[MAX_PARAMS];
  tilec_arg dargs[MAX_PARAMS], hargs[MAX_PARAMS], cargs[MAX_PARAMS];
  memset(tb, 0, sizeof tb);
  bool ok = true;
  int ordinal = 0;
  for (int i = 0; i < np; i++) {
    if (tilec_program_param(p, kidx, i, &info[i]) != TILEC_OK) {
      printf("FAIL %s:%s: no parameter info\n", file, kname);
      return false;
    }
    if (!info[i].is_tensor) {
      if (gpu_dtype_is_float(info[i].dtype)) {
        dargs[i].kind = TILEC_ARG_F32;
        dargs[i].u.f32 = (float)gpu_rand_uniform(0.05, 1.0);
      } else {
        dargs[i].kind = TILEC_ARG_I32;
        dargs[i].u.i32 = 1 + (int32_t)(gpu_rand() % 8);
      }
      hargs[i] = cargs[i] = dargs[i];
      continue;
    }
    tensor *t = &tb[i];
    bool odd = (c->mask >> ordinal++) & 1;
    t->rank = info[i].rank;
    t->dtype = info[i].dtype;
    t->eb = gpu_dtype_bytes(t->dtype);
    t->numel = 1;
    for (int d = 0; d < t->rank; d++) {
      t->shape[d] = info[i].dim_symbol[d] ? size_of_symbol(c->sizes, info[i].dim_symbol[d]) : info[i].dim_value[d];
      t->numel *= (size_t)t->shape[d];
    }
    make_layout(t, c, odd);
    size_t sbytes = t->storage * (size_t)t->eb, cbytes = t->numel * (size_t)t->eb;
    t->init = malloc(sbytes);
    t->interp = malloc(sbytes);
    t->back = malloc(sbytes);
    t->compact = malloc(cbytes ? cbytes : 1);
    memset(t->init, 0xFF, sbytes); /* NaN in every float dtype */
    if (info[i].written == 2) /* updated by atomics only: random padding too, so that an atomic
                               * outside the view changes it (NaN + x would stay NaN) */
      gpu_fill_random(t->init, t->storage, t->dtype);
    if (!info[i].written || info[i].written == 2) {
      gpu_fill_random(t->compact, t->numel, t->dtype);
      for (size_t e = 0; e < t->numel; e++)
        memcpy(t->init + storage_index(t, e) * (size_t)t->eb, t->compact + e * (size_t)t->eb, (size_t)t->eb);
    } else {
      memset(t->compact, 0xFF, cbytes ? cbytes : 1);
    }
    memcpy(t->interp, t->init, sbytes);
    set_tensor(&t->dl_host, t, info[i].dl_dtype, t->interp, true, c->byte_offset, t->strides);
    set_tensor(&t->dl_compact, t, info[i].dl_dtype, t->compact, true, false, NULL);
    t->dl_compact.data = t->compact; /* compact: no offset */
    hargs[i].kind = cargs[i].kind = dargs[i].kind = TILEC_ARG_TENSOR;
    hargs[i].u.tensor = &t->dl_host;
    cargs[i].u.tensor = &t->dl_compact;
    if (!interp_only) {
      gpu_check(gpu.cuMemAlloc(&t->dev, sbytes), "cuMemAlloc");
      gpu_check(gpu.cuMemcpyHtoD(t->dev, t->init, sbytes), "cuMemcpyHtoD");
      set_tensor(&t->dl_dev, t, info[i].dl_dtype, (void *)(uintptr_t)t->dev, false, c->byte_offset, t->strides);
      dargs[i].u.tensor = &t->dl_dev;
    }
  }
  if (!interp_only) {
    tilec_status st = tilec_kernel_launch(k, dargs, np, NULL);
    if (st != TILEC_OK) {
      printf("FAIL %s:%s [%s]: launch: %s: %s\n", file, kname, c->name, tilec_status_string(st),
             tilec_kernel_error(k));
      ok = false;
    } else {
      gpu_check(gpu.cuCtxSynchronize(), "kernel execution (cuCtxSynchronize)");
    }
  }
  tilec_status st = ok ? tilec_interpret(p, kname, hargs, np) : TILEC_OK;
  if (st == TILEC_OK && ok) st = tilec_interpret(p, kname, cargs, np);
  if (st != TILEC_OK) {
    printf("FAIL %s:%s [%s]: interpreter: %s\n%s\n", file, kname, c->name, tilec_status_string(st),
           tilec_program_log(p));
    ok = false;
  }
  for (int i = 0; ok && i < np; i++) {
    if (!info[i].is_tensor) continue;
    tensor *t = &tb[i];
    /* the oracle: the interpreter on the odd layout gives bit for bit what it
     * gives on the compact layout, and leaves the padding (and inputs) alone */
    size_t bad = 0, first = 0, touched = 0;
    size_t sbytes = t->storage * (size_t)t->eb;
    unsigned char *in_view = calloc(t->storage, 1);
    for (size_t e = 0; e < t->numel; e++) {
      size_t si = storage_index(t, e);
      in_view[si] = 1;
      const unsigned char *a = t->interp + si * (size_t)t->eb, *b = t->compact + e * (size_t)t->eb;
      bool both_nan = isnan(gpu_load_elem(a, 0, t->dtype)) && isnan(gpu_load_elem(b, 0, t->dtype));
      if (memcmp(a, b, (size_t)t->eb) != 0 && !both_nan && bad++ == 0) first = e;
    }
    for (size_t si = 0; si < t->storage; si++)
      if ((!in_view[si] || !info[i].written) &&
          memcmp(t->interp + si * (size_t)t->eb, t->init + si * (size_t)t->eb, (size_t)t->eb) != 0)
        touched++;
    free(in_view);
    if (bad || touched) {
      printf("FAIL %s:%s [%s] %s: the interpreter on this layout differs from the compact layout in %zu of %zu "
             "elements (first: logical %zu) and changed %zu storage elements it must not write\n",
             file, kname, c->name, info[i].name, bad, t->numel, first, touched);
      ok = false;
      continue;
    }
    if (interp_only) continue;
    gpu_check(gpu.cuMemcpyDtoH(t->back, t->dev, sbytes), "cuMemcpyDtoH");
    gpu_cmp cmp;
    if (!gpu_compare(t->back, t->interp, t->storage, t->dtype, &cmp)) {
      printf("FAIL %s:%s [%s] %s (%s, %zu storage elements, %zu in the view): %zu mismatches, %zu not written by "
             "the GPU; first at storage %zu: gpu %.9g, interpreter %.9g; max abs err %.3g\n",
             file, kname, c->name, info[i].name, t->dtype, cmp.n, t->numel, cmp.mismatches, cmp.unwritten,
             cmp.first_bad, cmp.first_got, cmp.first_want, cmp.max_abs_err);
      ok = false;
    } else if (info[i].written) {
      printf("  ok %s:%s [%s] %s: %zu elements, max abs err %.3g, max rel err %.3g\n", file, kname, c->name,
             info[i].name, t->numel, cmp.max_abs_err, cmp.max_rel_err);
    }
  }
  if (ok) printf("PASS %s:%s [%s] (%s)\n", file, kname, c->name, c->sizes);
  for (int i = 0; i < np; i++) {
    if (!info[i].is_tensor) continue;
    if (tb[i].dev) gpu.cuMemFree(tb[i].dev);
    free(tb[i].init);
    free(tb[i].interp);
    free(tb[i].back);
    free(tb[i].compact);
  }
  return ok;
}

static void run_file(const char *dir, const char *name) {
  tilec_program *p = gpu_open_program(dir, name, TILEC_STAGE_IR);
  if (!p) {
    failures++;
    return;
  }
  for (int ki = 0; ki < tilec_program_num_kernels(p); ki++) {
    tilec_kernel *k = NULL;
    if (!interp_only && !(k = gpu_load_kernel(p, name, tilec_program_kernel_name(p, ki)))) {
      failures++;
      continue;
    }
    for (int ci = 0; ci < NCASES; ci++) {
      if (run_case(p, k, ki, name, &cases[ci])) passes++;
      else failures++;
    }
    tilec_kernel_destroy(k);
  }
  tilec_program_destroy(p);
}

int main(int argc, char **argv) {
  const char *dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--interp-only")) interp_only = true;
    else dir = argv[i];
  }
  if (!dir) dir = getenv("TILEC_EXAMPLES");
  if (!dir) dir = TILEC_SOURCE_DIR "/examples";
  if (!interp_only) {
    int rc = gpu_init();
    if (rc) return rc;
  }
  gpu_seed();
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) run_file(dir, files[f]);
  char kdir[4096];
  snprintf(kdir, sizeof kdir, "%s/../tests/gpu/kernels", dir);
  for (size_t f = 0; f < sizeof test_files / sizeof test_files[0]; f++) run_file(kdir, test_files[f]);
  /* the cutlass GEMM again, warp-specialized (its producer's element copy takes the views
   * the tensor maps cannot), persistent and not: docs/pipelines.md "Warp specialization" */
  static const char *const ws_env[][2] = {{"TILEC_WS", "coop"}, {"TILEC_PERSIST", "0"}};
  for (int v = 0; v < 2; v++) {
    setenv(ws_env[v][0], ws_env[v][1], 1);
    if (v == 1) setenv("TILEC_WS", "coop", 1);
    printf("-- gemm.tile with TILEC_WS=coop%s\n", v ? " TILEC_PERSIST=0" : "");
    run_file(dir, "gemm.tile");
  }
  unsetenv("TILEC_WS");
  unsetenv("TILEC_PERSIST");
  printf("%s%d kernel x layout cases passed, %d failed\n", interp_only ? "(interpreter only) " : "", passes, failures);
  return failures || passes == 0 ? 1 : 0;
}
