/* test_random.c: random-kernel differential testing on the GPU.  For each
 * seed, tests/gen/tilegen.c writes a valid .tile kernel; it is compiled
 * through the public API, launched on the GPU, and run in the interpreter
 * (the oracle) on the same inputs (tg_fill_input: random, never zero).
 *
 * Checked per seed (any one failing fails the seed; the test goes on):
 *  - the kernel compiles (a diagnostic or an internal error is a failure:
 *    the generator promises valid kernels) and loads;
 *  - the API's parameter description agrees with the generator's;
 *  - the interpreter, run with outputs poisoned with 0xFF and with 0x00
 *    bytes, writes the same elements with the same bits (this also tells
 *    written elements from untouched ones), every written float is finite,
 *    and it leaves its inputs alone;
 *  - on the GPU (outputs poisoned with 0xFF: NaN for floats): every element
 *    the interpreter wrote was written and agrees within the per-dtype
 *    tolerance below; every other element still holds its poison; inputs
 *    are unchanged; and (outside compute-sanitizer runs) 256 canary bytes
 *    before and after every buffer are unchanged;
 *  - a mutation self-test: the comparison must reject a written element
 *    moved by twice its tolerance (ints: by one) and a poisoned element
 *    overwritten, so a passing seed is not a vacuous comparison.
 *
 * Tolerances (the GPU computes exp2/log2/rsqrt/sin/cos with .approx
 * instructions and reduces in a different order; the interpreter rounds
 * transcendentals once from double, docs/interpreter.md, docs/codegen.md):
 *   i32   exact;
 *   f32   |gpu - ref| <= 2^-17 |ref| + 2^-20 max(1, S)
 *   bf16  |gpu - ref| <= 2^-7 |ref| + 2^-8 max(1, S)   (2 ulp, plus 1 ulp of S)
 * where S is the largest |ref| of the output slot (outputs are O*[slot, ...]:
 * one slot per stored value), which covers cancellation after an operand
 * was off by an ulp.  TILEC_TOL_SCALE multiplies the float tolerances.
 *
 *   usage: gpu_test_random [--interp-only]
 *   env:   TILEC_RANDOM_SEEDS=N   kernels (default 200; 25 when
 *                                 TILEC_GPU_SANITIZER_RUN is set, as
 *                                 tests/gpu/run.sh does under compute-sanitizer)
 *          TILEC_RANDOM_FIRST=S   first seed (else TILEC_SEED, else the clock;
 *                                 printed)
 *          TILEC_RANDOM_TRANSCENDENTAL=half|all|none  seeds with exp/log/
 *                                 sin/... (default half: odd seeds without)
 *          TILEC_RANDOM_VERBOSE=1 a line per seed
 *          TILEC_CACHE            the disk kernel cache is off (TILEC_CACHE=0)
 *                                 unless set: every kernel is compiled by this build
 *   --interp-only: no GPU; the interpreter checks above, and the interpreter
 *   a third time in the GPU's place (determinism, the comparison, the
 *   mutation self-test), for a CPU ctest.
 *   exit 0 pass, 1 fail, 77 no GPU. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_util.h"

/* The generator is plain C11 with no dependency on tilec; CMake does not
 * build it into the GPU tests, so it is compiled into this file. */
#include "../gen/tilegen.c"

#define RK_GUARD 256        /* canary bytes on each side of a device buffer */
#define RK_CANARY 0xA5
#define RK_MAX_SOURCE_PRINTS 20

/* ---- tolerances --------------------------------------------------------------- */
static double rk_tol_scale = 1.0;

static double rk_tolerance(tg_dtype t, double ref, double slot_max) {
  double floor_scale = slot_max > 1 ? slot_max : 1;
  if (t == TG_F32) return rk_tol_scale * (ldexp(fabs(ref), -17) + ldexp(floor_scale, -20));
  if (t == TG_BF16) return rk_tol_scale * (ldexp(fabs(ref), -7) + ldexp(floor_scale, -8));
  return 0;
}

/* ---- one parameter's buffers ------------------------------------------------------ */
typedef struct rk_buf {
  const tg_param *p;
  size_t numel, elem, bytes;
  unsigned char *host;     /* what the interpreter runs on (inputs: the data) */
  unsigned char *input;    /* inputs: a pristine copy */
  unsigned char *ref_ff;   /* outputs: interpreter result, 0xFF poison */
  unsigned char *ref_00;   /* outputs: interpreter result, 0x00 poison */
  unsigned char *got;      /* outputs: GPU (or third interpreter) result, 0xFF poison */
  unsigned char *back;     /* the whole device allocation, copied back */
  CUdeviceptr base, dev;   /* allocation, and the tensor inside its guards */
  int64_t shape[4];
  DLTensor dl_host, dl_dev;
} rk_buf;

typedef struct rk_case {
  tg_kernel k;
  int np;
  rk_buf b[TG_MAX_PARAMS];
  tilec_arg hargs[TG_MAX_PARAMS], dargs[TG_MAX_PARAMS];
  char sizes[256];
  bool failed;
} rk_case;

static bool interp_only, guards;
static int mutations_tried, mutations_caught;
static long long elements_total, elements_written; /* over all outputs of all seeds */
static double worst_ratio[3]; /* per tg_dtype: largest |err| / tolerance seen */

static void rk_fail(rk_case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rk_fail(rk_case *c, const char *fmt, ...) {
  if (!c->failed) printf("FAIL seed %llu [%s]\n", (unsigned long long)c->k.seed, c->sizes);
  c->failed = true;
  va_list ap;
  va_start(ap, fmt);
  printf("  ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static DLDataType rk_dl_dtype(tg_dtype t) {
  if (t == TG_F32) return (DLDataType){kDLFloat, 32, 1};
  if (t == TG_BF16) return (DLDataType){kDLBfloat, 16, 1};
  return (DLDataType){kDLInt, 32, 1};
}

static double rk_value(tg_dtype t, const unsigned char *e) {
  return gpu_load_elem(e, 0, tg_dtype_name(t));
}

static bool rk_all_bytes(const unsigned char *e, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (e[i] != v) return false;
  return true;
}

/* "[slot, m, n]" of flat element i. */
static void rk_index_text(const tg_param *p, size_t i, char *out, size_t n) {
  int64_t idx[4], rest = (int64_t)i;
  for (int d = p->rank - 1; d >= 0; d--) {
    idx[d] = rest % p->shape[d];
    rest /= p->shape[d];
  }
  size_t len = (size_t)snprintf(out, n, "[");
  for (int d = 0; d < p->rank && len < n; d++)
    len += (size_t)snprintf(out + len, n - len, "%s%lld", d ? ", " : "", (long long)idx[d]);
  if (len < n) snprintf(out + len, n - len, "]");
}

/* Number of elements per slot (the outermost dimension) of an output. */
static size_t rk_slot_size(const rk_buf *b) {
  if (b->p->rank < 2 || b->p->shape[0] == 0) return b->numel ? b->numel : 1;
  return b->numel / (size_t)b->p->shape[0];
}

/* Compare output b's `got` with the interpreter's reference.  Returns the
 * number of bad elements; describes the first one (unless quiet). */
static size_t rk_compare(rk_case *c, const rk_buf *b, const unsigned char *got, bool quiet) {
  const tg_param *p = b->p;
  size_t eb = b->elem, per_slot = rk_slot_size(b), bad = 0;
  double slot_max = 0;
  for (size_t i = 0; i < b->numel; i++) {
    if (i % per_slot == 0) { /* the slot's largest written magnitude */
      slot_max = 0;
      for (size_t j = i; j < i + per_slot && j < b->numel; j++) {
        const unsigned char *w = b->ref_ff + j * eb;
        bool written = !(rk_all_bytes(w, eb, 0xFF) && rk_all_bytes(b->ref_00 + j * eb, eb, 0x00));
        double v = rk_value(p->dtype, w);
        if (written && isfinite(v) && fabs(v) > slot_max) slot_max = fabs(v);
      }
    }
    const unsigned char *w = b->ref_ff + i * eb, *g = got + i * eb;
    bool written = !(rk_all_bytes(w, eb, 0xFF) && rk_all_bytes(b->ref_00 + i * eb, eb, 0x00));
    if (!quiet) {
      elements_total++;
      elements_written += written;
    }
    const char *why = NULL;
    double gv = rk_value(p->dtype, g), wv = rk_value(p->dtype, w), tol = 0;
    if (!written) {
      if (!rk_all_bytes(g, eb, 0xFF)) why = "written on the GPU, not by the interpreter";
    } else if (p->dtype == TG_I32) {
      if (memcmp(g, w, eb)) why = "integer mismatch";
    } else if (rk_all_bytes(g, eb, 0xFF)) {
      why = "not written on the GPU (poison left)";
    } else if (!isfinite(gv)) {
      why = "GPU value not finite";
    } else {
      tol = rk_tolerance(p->dtype, wv, slot_max);
      double err = fabs(gv - wv);
      if (!quiet && err / tol > worst_ratio[p->dtype]) worst_ratio[p->dtype] = err / tol;
      if (err > tol) why = "outside the tolerance";
    }
    if (!why) continue;
    if (bad++ == 0 && !quiet) {
      char idx[64];
      rk_index_text(p, i, idx, sizeof idx);
      rk_fail(c, "first bad element %s%s (%s): %s: %s %.9g, interpreter %.9g (tolerance %.3g, slot max %.6g)",
              p->name, idx, tg_dtype_name(p->dtype), why, interp_only ? "rerun" : "gpu", gv, wv, tol, slot_max);
    }
  }
  if (bad && !quiet) rk_fail(c, "%s: %zu of %zu elements bad", p->name, bad, b->numel);
  return bad;
}

/* The comparison must reject a moved written element and an overwritten
 * poisoned one. */
static void rk_mutation_selftest(rk_case *c, const rk_buf *b) {
  size_t eb = b->elem;
  unsigned char *m = malloc(b->bytes ? b->bytes : 1);
  bool done_written = false, done_unwritten = false;
  for (size_t i = 0; i < b->numel && !(done_written && done_unwritten); i++) {
    bool written = !(rk_all_bytes(b->ref_ff + i * eb, eb, 0xFF) && rk_all_bytes(b->ref_00 + i * eb, eb, 0x00));
    if (written ? done_written : done_unwritten) continue;
    memcpy(m, b->got, b->bytes);
    unsigned char *e = m + i * eb;
    if (!written) {
      memcpy(e, b->ref_00 + i * eb, eb); /* zero bytes where poison should be */
    } else if (b->p->dtype == TG_I32) {
      int32_t v;
      memcpy(&v, e, 4);
      v = v == INT32_MAX ? v - 1 : v + 1;
      memcpy(e, &v, 4);
    } else {
      double w = rk_value(b->p->dtype, b->ref_ff + i * eb);
      /* twice the largest tolerance the element can have: S <= 1e4 by construction, but take the
         slot maximum exactly as rk_compare does, via its upper bound max(|w|, slot) */
      double big = 0;
      for (size_t j = 0; j < b->numel; j++) {
        double v = rk_value(b->p->dtype, b->ref_ff + j * eb);
        if (isfinite(v) && fabs(v) > big) big = fabs(v);
      }
      float moved = (float)(w + 2 * rk_tolerance(b->p->dtype, w, big) + 1e-30);
      if (b->p->dtype == TG_F32) {
        memcpy(e, &moved, 4);
      } else {
        uint32_t bits;
        memcpy(&bits, &moved, 4);
        uint16_t h = (uint16_t)((bits + 0xFFFF) >> 16); /* magnitude up: away from w */
        if (moved < 0) h = (uint16_t)(bits >> 16); /* toward zero: also away from w */
        memcpy(e, &h, 2);
      }
    }
    mutations_tried++;
    if (rk_compare(c, b, m, true) > 0) mutations_caught++;
    else rk_fail(c, "self-test: %s element %zu changed (%s) and the comparison did not see it", b->p->name, i,
                 written ? "written value moved" : "poison overwritten");
    if (written) done_written = true;
    else done_unwritten = true;
  }
  free(m);
}

/* ---- set-up ------------------------------------------------------------------------ */
static bool rk_setup(rk_case *c, tilec_program *prog) {
  tg_kernel *k = &c->k;
  size_t len = 0;
  for (int s = 0; s < k->nsyms; s++)
    len += (size_t)snprintf(c->sizes + len, sizeof c->sizes - len, "%s=%lld ", k->syms[s].name,
                            (long long)k->syms[s].value);
  snprintf(c->sizes + len, sizeof c->sizes - len, "BM=%d BN=%d grid=(%lld,%lld,%lld)", k->tile_m, k->tile_n,
           (long long)k->grid[0], (long long)k->grid[1], (long long)k->grid[2]);
  c->np = k->nparams;
  int api_np = tilec_program_num_params(prog, 0);
  if (api_np != k->nparams) {
    rk_fail(c, "the API reports %d parameters, the generator %d", api_np, k->nparams);
    return false;
  }
  for (int i = 0; i < c->np; i++) {
    const tg_param *p = &k->params[i];
    tilec_param_info info;
    if (tilec_program_param(prog, 0, i, &info) != TILEC_OK || strcmp(info.name, p->name) ||
        !info.is_tensor != !p->is_tensor || strcmp(info.dtype, tg_dtype_name(p->dtype)) ||
        (p->is_tensor && info.rank != p->rank) || (info.written && !p->is_output)) {
      rk_fail(c, "parameter %d (%s): the API's description disagrees with the generator's", i, p->name);
      return false;
    }
    rk_buf *b = &c->b[i];
    b->p = p;
    if (!p->is_tensor) {
      if (p->dtype == TG_I32) c->hargs[i] = (tilec_arg){.kind = TILEC_ARG_I32, .u.i32 = (int32_t)p->ival};
      else c->hargs[i] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = (float)p->fval};
      c->dargs[i] = c->hargs[i];
      continue;
    }
    b->numel = (size_t)tg_param_numel(p);
    b->elem = tg_dtype_bytes(p->dtype);
    b->bytes = b->numel * b->elem;
    size_t alloc = b->bytes ? b->bytes : 1;
    b->host = malloc(alloc);
    b->got = malloc(alloc);
    b->back = malloc(alloc + 2 * RK_GUARD);
    if (p->is_output) {
      b->ref_ff = malloc(alloc);
      b->ref_00 = malloc(alloc);
    } else {
      b->input = malloc(alloc);
      tg_fill_input(p, k->seed, b->input);
    }
    for (int d = 0; d < p->rank; d++) b->shape[d] = p->shape[d];
    b->dl_host = (DLTensor){.data = b->host, .device = {kDLCPU, 0}, .ndim = p->rank,
                            .dtype = rk_dl_dtype(p->dtype), .shape = b->shape};
    c->hargs[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &b->dl_host};
  }
  return true;
}

static void rk_free(rk_case *c) {
  for (int i = 0; i < c->np; i++) {
    rk_buf *b = &c->b[i];
    free(b->host);
    free(b->input);
    free(b->ref_ff);
    free(b->ref_00);
    free(b->got);
    free(b->back);
    if (b->base) gpu.cuMemFree(b->base);
  }
}

/* Inputs fresh, outputs filled with `poison` bytes; then the interpreter.
 * Outputs are copied to ref_ff (which 0), ref_00 (1) or got (2). */
static bool rk_interpret(rk_case *c, tilec_program *prog, unsigned char poison, int which) {
  for (int i = 0; i < c->np; i++) {
    rk_buf *b = &c->b[i];
    if (!b->p->is_tensor) continue;
    if (b->p->is_output) memset(b->host, poison, b->bytes);
    else memcpy(b->host, b->input, b->bytes);
  }
  tilec_status st = tilec_interpret(prog, NULL, c->hargs, c->np);
  if (st != TILEC_OK) {
    rk_fail(c, "interpreter: %s\n%s", tilec_status_string(st), tilec_program_log(prog));
    return false;
  }
  for (int i = 0; i < c->np; i++) {
    rk_buf *b = &c->b[i];
    if (!b->p->is_tensor) continue;
    if (!b->p->is_output) {
      if (memcmp(b->host, b->input, b->bytes)) rk_fail(c, "the interpreter changed input %s", b->p->name);
      continue;
    }
    unsigned char *dst = which == 0 ? b->ref_ff : which == 1 ? b->ref_00 : b->got;
    memcpy(dst, b->host, b->bytes);
  }
  return true;
}

/* The two poisoned interpreter runs must agree on every written element, and
 * every written float must be finite (the generator's promise). */
static void rk_check_reference(rk_case *c) {
  for (int i = 0; i < c->np; i++) {
    rk_buf *b = &c->b[i];
    if (!b->p->is_tensor || !b->p->is_output) continue;
    size_t eb = b->elem;
    for (size_t e = 0; e < b->numel; e++) {
      const unsigned char *x = b->ref_ff + e * eb, *y = b->ref_00 + e * eb;
      if (rk_all_bytes(x, eb, 0xFF) && rk_all_bytes(y, eb, 0x00)) continue;
      char idx[64];
      rk_index_text(b->p, e, idx, sizeof idx);
      if (memcmp(x, y, eb)) {
        rk_fail(c, "interpreter not deterministic (or writes depend on the poison): %s%s: %.9g vs %.9g",
                b->p->name, idx, rk_value(b->p->dtype, x), rk_value(b->p->dtype, y));
        break;
      }
      if (b->p->dtype != TG_I32 && !isfinite(rk_value(b->p->dtype, x))) {
        rk_fail(c, "interpreter wrote a non-finite value (the generator promises none): %s%s = %g", b->p->name,
                idx, rk_value(b->p->dtype, x));
        break;
      }
    }
  }
}

/* ---- the GPU side ---------------------------------------------------------------------- */
static int rk_summary(int n, int passed, int failed);
static int rk_total, rk_passed, rk_failed;

static void rk_cuda(rk_case *c, CUresult r, const char *what) {
  if (r == CUDA_SUCCESS) return;
  const char *name = "?";
  gpu.cuGetErrorName(r, &name);
  /* a fault leaves the context unusable: report this seed and stop */
  rk_fail(c, "%s: %s (%d); the CUDA context is lost, stopping", what, name, (int)r);
  printf("--- source of seed %llu:\n%s", (unsigned long long)c->k.seed, c->k.source);
  exit(rk_summary(rk_total + 1, rk_passed, rk_failed + 1));
}

static bool rk_run_gpu(rk_case *c, tilec_program *prog) {
  tilec_kernel *kern = NULL;
  tilec_status st = tilec_kernel_load(prog, NULL, 0, &kern);
  if (st == TILEC_ERROR_NO_DEVICE) {
    printf("SKIP: %s\n", tilec_program_log(prog));
    exit(GPU_SKIP);
  }
  if (st != TILEC_OK) {
    rk_fail(c, "load (compile to PTX, driver JIT): %s\n%s", tilec_status_string(st), tilec_program_log(prog));
    return false;
  }
  size_t guard = guards ? RK_GUARD : 0;
  for (int i = 0; i < c->np; i++) {
    rk_buf *b = &c->b[i];
    if (!b->p->is_tensor) continue;
    size_t alloc = (b->bytes ? b->bytes : 1) + 2 * guard;
    rk_cuda(c, gpu.cuMemAlloc(&b->base, alloc), "cuMemAlloc");
    b->dev = b->base + guard;
    rk_cuda(c, gpu.cuMemsetD8(b->base, RK_CANARY, alloc), "cuMemsetD8");
    if (b->p->is_output) rk_cuda(c, gpu.cuMemsetD8(b->dev, 0xFF, b->bytes), "cuMemsetD8");
    else if (b->bytes) rk_cuda(c, gpu.cuMemcpyHtoD(b->dev, b->input, b->bytes), "cuMemcpyHtoD");
    b->dl_dev = b->dl_host;
    b->dl_dev.data = (void *)(uintptr_t)b->dev;
    b->dl_dev.device = (DLDevice){kDLCUDA, 0};
    c->dargs[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &b->dl_dev};
  }
  st = tilec_kernel_launch(kern, c->dargs, c->np, NULL);
  if (st != TILEC_OK) {
    rk_fail(c, "launch: %s: %s", tilec_status_string(st), tilec_kernel_error(kern));
    tilec_kernel_destroy(kern);
    return false;
  }
  rk_cuda(c, gpu.cuCtxSynchronize(), "kernel execution (cuCtxSynchronize)");
  tilec_kernel_destroy(kern);
  for (int i = 0; i < c->np; i++) {
    rk_buf *b = &c->b[i];
    if (!b->p->is_tensor) continue;
    size_t alloc = (b->bytes ? b->bytes : 1) + 2 * guard;
    rk_cuda(c, gpu.cuMemcpyDtoH(b->back, b->base, alloc), "cuMemcpyDtoH");
    if (!rk_all_bytes(b->back, guard, RK_CANARY) ||
        !rk_all_bytes(b->back + guard + b->bytes, alloc - guard - b->bytes, RK_CANARY))
      rk_fail(c, "the GPU wrote outside tensor %s (canary bytes changed)", b->p->name);
    if (b->p->is_output) memcpy(b->got, b->back + guard, b->bytes);
    else if (memcmp(b->back + guard, b->input, b->bytes)) rk_fail(c, "the GPU changed input %s", b->p->name);
  }
  return true;
}

/* ---- one seed ------------------------------------------------------------------------------ */
/* Which seeds use exp/log/sin/...: TILEC_RANDOM_TRANSCENDENTAL=all|none|half
 * (default half: the odd seeds go without).  Without them every difference
 * from the interpreter is a rounding-order effect (reductions, dot) or a bug.
 * With them the GPU's .approx results differ by an ulp or two; the generator
 * keeps them away from discontinuities (comparisons, casts to int, floor,
 * ceil, float %: tilegen.c, exact_begin), so a large difference is a bug too,
 * but an ulp amplified by cancellation can still exceed the tolerance. */
static const char *rk_transcendental_mode = "half";

static tg_options rk_options(uint64_t seed) {
  tg_options o;
  memset(&o, 0, sizeof o);
  o.read_after_write = false; /* needs store->load ordering across threads: not promised */
  if (!strcmp(rk_transcendental_mode, "none")) o.no_transcendental = true;
  else if (strcmp(rk_transcendental_mode, "all")) o.no_transcendental = seed % 2 == 1;
  return o;
}

static int rk_failed_transcendental; /* failures in seeds generated with transcendental functions */

static bool rk_check_seed(uint64_t seed, bool print_source) {
  rk_case c;
  memset(&c, 0, sizeof c);
  tg_options opts = rk_options(seed);
  if (!tg_generate(seed, &opts, &c.k)) {
    printf("FAIL seed %llu: the generator ran out of memory\n", (unsigned long long)seed);
    return false;
  }
  snprintf(c.sizes, sizeof c.sizes, "?");
  char name[64];
  snprintf(name, sizeof name, "gen_%llu.tile", (unsigned long long)seed);
  tilec_program *prog = NULL;
  tilec_status st = tilec_program_create(&prog, c.k.source, name, NULL);
  if (st == TILEC_OK) st = tilec_program_compile(prog, TILEC_STAGE_IR);
  if (st != TILEC_OK) {
    rk_fail(&c, "compile to IR: %s\n%s", tilec_status_string(st), prog ? tilec_program_log(prog) : "");
  } else if (rk_setup(&c, prog) && rk_interpret(&c, prog, 0xFF, 0) && rk_interpret(&c, prog, 0x00, 1)) {
    rk_check_reference(&c);
    bool ran = interp_only ? rk_interpret(&c, prog, 0xFF, 2) : rk_run_gpu(&c, prog);
    if (ran) {
      for (int i = 0; i < c.np; i++)
        if (c.b[i].p->is_tensor && c.b[i].p->is_output) rk_compare(&c, &c.b[i], c.b[i].got, false);
      if (!c.failed)
        for (int i = 0; i < c.np; i++)
          if (c.b[i].p->is_tensor && c.b[i].p->is_output) rk_mutation_selftest(&c, &c.b[i]);
    }
  }
  if (c.failed && !opts.no_transcendental) {
    rk_failed_transcendental++;
    printf("  (transcendental functions on: an .approx ulp amplified by cancellation can cause a small excess)\n");
  }
  if (c.failed && print_source) {
    printf("--- source of seed %llu (rerun: TILEC_RANDOM_FIRST=%llu TILEC_RANDOM_SEEDS=1):\n%s",
           (unsigned long long)seed, (unsigned long long)seed, c.k.source);
  }
  if (getenv("TILEC_RANDOM_VERBOSE")) printf("%s seed %llu [%s]\n", c.failed ? "FAIL" : "ok", (unsigned long long)seed, c.sizes);
  bool ok = !c.failed;
  rk_free(&c);
  tilec_program_destroy(prog);
  tg_kernel_free(&c.k);
  return ok;
}

/* ---- main ---------------------------------------------------------------------------------- */
static int rk_summary(int n, int passed, int failed) {
  printf("%lld of %lld output elements written; mutation self-test: %d of %d caught; worst error/tolerance: "
         "f32 %.3g, bf16 %.3g\n",
         elements_written, elements_total, mutations_caught, mutations_tried, worst_ratio[TG_F32],
         worst_ratio[TG_BF16]);
  if (failed) printf("failed seeds generated with transcendental functions: %d of %d\n", rk_failed_transcendental, failed);
  printf("random%s: %d kernels, %d passed, %d failed\n", interp_only ? " (interpreter only)" : "", n, passed, failed);
  return failed || n == 0 ? 1 : 0;
}

static uint64_t rk_env_u64(const char *name, uint64_t dflt) {
  const char *s = getenv(name);
  return s && *s ? strtoull(s, NULL, 0) : dflt;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--interp-only")) interp_only = true;
    else {
      fprintf(stderr, "usage: %s [--interp-only]\n", argv[0]);
      return 2;
    }
  }
  bool sanitizer = getenv("TILEC_GPU_SANITIZER_RUN") != NULL;
  /* Compile every kernel: a disk-cache entry written by another build of the
   * same version would run old code (the key has the version, not the build). */
  setenv("TILEC_CACHE", "0", 0);
  guards = !sanitizer; /* under memcheck, exact allocation sizes let it see overruns itself */
  const char *ts = getenv("TILEC_TOL_SCALE");
  if (ts && *ts) rk_tol_scale = atof(ts);
  const char *tm = getenv("TILEC_RANDOM_TRANSCENDENTAL");
  if (tm && (!strcmp(tm, "all") || !strcmp(tm, "none") || !strcmp(tm, "half"))) rk_transcendental_mode = tm;
  else if (tm && *tm) {
    fprintf(stderr, "TILEC_RANDOM_TRANSCENDENTAL must be all, none or half\n");
    return 2;
  }
  uint64_t count = rk_env_u64("TILEC_RANDOM_SEEDS", sanitizer ? 25 : 200);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t first = rk_env_u64("TILEC_RANDOM_FIRST",
                              rk_env_u64("TILEC_SEED", (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000));
  if (!interp_only) {
    int rc = gpu_init();
    if (rc) return rc;
  }
  printf("random: seeds %llu..%llu (rerun: TILEC_RANDOM_FIRST=%llu TILEC_RANDOM_SEEDS=%llu)\n",
         (unsigned long long)first, (unsigned long long)(first + count - 1), (unsigned long long)first,
         (unsigned long long)count);
  fflush(stdout);
  double t0 = gpu_now_ms();
  int sources = 0;
  for (uint64_t s = first; s < first + count; s++) {
    bool ok = rk_check_seed(s, sources < RK_MAX_SOURCE_PRINTS);
    rk_total++;
    if (ok) rk_passed++;
    else {
      rk_failed++;
      sources++;
    }
    fflush(stdout);
  }
  printf("%.1f s\n", (gpu_now_ms() - t0) / 1e3);
  return rk_summary(rk_total, rk_passed, rk_failed);
}
