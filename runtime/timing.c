/* timing.c: time kernel launches with CUDA events (the autotuner), the
 * zeroing before each launch kept out of the timed intervals, and
 * zero-filled scratch device buffers.
 * requires: a device from tl_rt_device_get; keeps: the caller's memory (only
 * scratch buffers it allocates are written); breaks: nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static int cu_fail(tl_sbuf *msg, const char *what, CUresult r) {
  char t[200];
  tl_sbuf_printf(msg, "%s failed: %s\n", what, tl_rt_result_text(r, t, sizeof t));
  return TL_ERR_CUDA;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int clamp_int(double v, int lo, int hi) {
  if (!(v >= lo)) return lo; /* also NaN */
  if (v > hi) return hi;
  return (int)v;
}

/* `count` launches back to back, each after o->before's work when there is one; TL_OK or
 * the launcher's error in msg. */
static int launch_n(const tl_time_opts *o, tl_launch_fn launch, void *user, int count, tl_sbuf *msg) {
  char err[512];
  for (int i = 0; i < count; i++) {
    err[0] = 0;
    int st = o && o->before ? o->before(user, NULL, err, sizeof err) : TL_OK;
    if (st == TL_OK) st = launch(user, NULL, err, sizeof err);
    if (st != TL_OK) {
      tl_sbuf_printf(msg, "%s\n", err[0] ? err : "launch failed");
      return st;
    }
  }
  return TL_OK;
}

/* With o->before: launch j of `count` between events ev[2j] and ev[2j+1], its `before` work
 * enqueued ahead of ev[2j]; TL_OK or an error in msg. */
static int launch_pairs(const tl_cuda *cu, const tl_time_opts *o, tl_launch_fn launch, void *user, int count,
                        CUevent *ev, tl_sbuf *msg) {
  char err[512];
  for (int j = 0; j < count; j++) {
    err[0] = 0;
    int st = o->before(user, NULL, err, sizeof err);
    if (st != TL_OK) {
      tl_sbuf_printf(msg, "%s\n", err[0] ? err : "the work before a launch failed");
      return st;
    }
    CUresult r = cu->cuEventRecord(ev[2 * j], NULL);
    if (r != CUDA_SUCCESS) return cu_fail(msg, "cuEventRecord", r);
    if ((st = launch(user, NULL, err, sizeof err)) != TL_OK) {
      tl_sbuf_printf(msg, "%s\n", err[0] ? err : "launch failed");
      return st;
    }
    if ((r = cu->cuEventRecord(ev[2 * j + 1], NULL)) != CUDA_SUCCESS) return cu_fail(msg, "cuEventRecord", r);
  }
  return TL_OK;
}

int tl_rt_time_launches(const tl_rt_device *d, tl_launch_fn launch, void *user, const tl_time_opts *o,
                        tl_time_result *out, tl_sbuf *msg) {
  const tl_cuda *cu;
  char err[512];
  memset(out, 0, sizeof *out);
  int st = tl_rt_driver(&cu, err, sizeof err);
  if (st == TL_OK) st = tl_rt_make_current(d, err, sizeof err);
  if (st != TL_OK) {
    tl_sbuf_printf(msg, "%s\n", err);
    return st;
  }
  if (!cu->cuEventCreate || !cu->cuEventRecord || !cu->cuEventSynchronize || !cu->cuEventElapsedTime ||
      !cu->cuEventDestroy || !cu->cuCtxSynchronize) {
    tl_sbuf_printf(msg, "the CUDA driver lacks the event entry points timing needs\n");
    return TL_ERR_CUDA;
  }
  double target = o && o->target_ms > 0 ? o->target_ms : 100.0;
  int min_runs = o && o->min_runs > 0 ? o->min_runs : 5;
  int max_runs = o && o->max_runs > 0 ? o->max_runs : 200;
  if (max_runs < min_runs) max_runs = min_runs;

  /* 1. one launch, synchronized: a faulting kernel stops here */
  if ((st = launch_n(o, launch, user, 1, msg)) != TL_OK) return st;
  CUresult r = cu->cuCtxSynchronize();
  if (r != CUDA_SUCCESS) return cu_fail(msg, "the kernel (cuCtxSynchronize after its first launch)", r);

  /* with `before`, an event pair a launch (estimate: 3 pairs); else a chain of max_runs + 1 */
  bool pairs = o && o->before;
  int want = pairs ? 2 * (max_runs > 3 ? max_runs : 3) : max_runs + 1;
  CUevent *ev = calloc((size_t)want, sizeof *ev);
  double *times = calloc((size_t)max_runs, sizeof *times);
  int nev = 0;
  if (!ev || !times) {
    free(ev); free(times);
    return TL_ERR_NOMEM;
  }
  st = TL_OK;
  for (; nev < want; nev++) {
    if ((r = cu->cuEventCreate(&ev[nev], CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
      st = cu_fail(msg, "cuEventCreate", r);
      goto done;
    }
  }
  /* 2. a first estimate over 3 launches */
  float ms = 0;
  if (pairs) {
    if ((st = launch_pairs(cu, o, launch, user, 3, ev, msg)) != TL_OK) goto done;
    if ((r = cu->cuEventSynchronize(ev[5])) != CUDA_SUCCESS) { st = cu_fail(msg, "the kernel (cuEventSynchronize)", r); goto done; }
    float sum = 0;
    for (int j = 0; j < 3; j++) {
      if ((r = cu->cuEventElapsedTime(&ms, ev[2 * j], ev[2 * j + 1])) != CUDA_SUCCESS) { st = cu_fail(msg, "cuEventElapsedTime", r); goto done; }
      sum += ms;
    }
    ms = sum;
  } else {
    if ((r = cu->cuEventRecord(ev[0], NULL)) != CUDA_SUCCESS) { st = cu_fail(msg, "cuEventRecord", r); goto done; }
    if ((st = launch_n(o, launch, user, 3, msg)) != TL_OK) goto done;
    if ((r = cu->cuEventRecord(ev[1], NULL)) != CUDA_SUCCESS) { st = cu_fail(msg, "cuEventRecord", r); goto done; }
    if ((r = cu->cuEventSynchronize(ev[1])) != CUDA_SUCCESS) { st = cu_fail(msg, "the kernel (cuEventSynchronize)", r); goto done; }
    if ((r = cu->cuEventElapsedTime(&ms, ev[0], ev[1])) != CUDA_SUCCESS) { st = cu_fail(msg, "cuEventElapsedTime", r); goto done; }
  }
  double estimate = ms / 3.0 > 1e-4 ? ms / 3.0 : 1e-4; /* events resolve about 0.5 us */
  out->estimate_ms = estimate;
  /* 3. warm-up (clocks up, caches and TLBs warm), then N timed launches */
  out->warmup = clamp_int(0.2 * target / estimate, 1, 100);
  out->runs = clamp_int(target / estimate, min_runs, max_runs);
  if ((st = launch_n(o, launch, user, out->warmup, msg)) != TL_OK) goto done;
  int last = pairs ? 2 * out->runs - 1 : out->runs; /* the event recorded last */
  if (pairs) {
    if ((st = launch_pairs(cu, o, launch, user, out->runs, ev, msg)) != TL_OK) goto done;
  } else {
    if ((r = cu->cuEventRecord(ev[0], NULL)) != CUDA_SUCCESS) { st = cu_fail(msg, "cuEventRecord", r); goto done; }
    for (int i = 0; i < out->runs; i++) {
      if ((st = launch_n(o, launch, user, 1, msg)) != TL_OK) goto done;
      if ((r = cu->cuEventRecord(ev[i + 1], NULL)) != CUDA_SUCCESS) { st = cu_fail(msg, "cuEventRecord", r); goto done; }
    }
  }
  if ((r = cu->cuEventSynchronize(ev[last])) != CUDA_SUCCESS) {
    st = cu_fail(msg, "the kernel (cuEventSynchronize)", r);
    goto done;
  }
  for (int i = 0; i < out->runs; i++) {
    CUevent a = pairs ? ev[2 * i] : ev[i], b = pairs ? ev[2 * i + 1] : ev[i + 1];
    if ((r = cu->cuEventElapsedTime(&ms, a, b)) != CUDA_SUCCESS) {
      st = cu_fail(msg, "cuEventElapsedTime", r);
      goto done;
    }
    times[i] = ms;
  }
  qsort(times, (size_t)out->runs, sizeof *times, cmp_double);
  out->min_ms = times[0];
  out->max_ms = times[out->runs - 1];
  out->median_ms = out->runs % 2 ? times[out->runs / 2] : 0.5 * (times[out->runs / 2 - 1] + times[out->runs / 2]);
done:
  for (int i = 0; i < nev; i++) cu->cuEventDestroy(ev[i]);
  free(ev);
  free(times);
  return st;
}

int tl_rt_scratch_alloc(const tl_rt_device *d, size_t bytes, CUdeviceptr *out, tl_sbuf *msg) {
  const tl_cuda *cu;
  char err[512];
  *out = 0;
  int st = tl_rt_driver(&cu, err, sizeof err);
  if (st == TL_OK) st = tl_rt_make_current(d, err, sizeof err);
  if (st != TL_OK) {
    tl_sbuf_printf(msg, "%s\n", err);
    return st;
  }
  if (!cu->cuMemAlloc || !cu->cuMemFree || !cu->cuMemsetD8) {
    tl_sbuf_printf(msg, "the CUDA driver lacks the memory entry points scratch buffers need\n");
    return TL_ERR_CUDA;
  }
  if (bytes == 0) bytes = 1;
  CUresult r = cu->cuMemAlloc(out, bytes);
  if (r != CUDA_SUCCESS) {
    *out = 0;
    char what[96];
    snprintf(what, sizeof what, "cuMemAlloc of %zu bytes", bytes);
    return cu_fail(msg, what, r);
  }
  if ((r = cu->cuMemsetD8(*out, 0, bytes)) != CUDA_SUCCESS) {
    cu->cuMemFree(*out);
    *out = 0;
    return cu_fail(msg, "cuMemsetD8", r);
  }
  return TL_OK;
}

void tl_rt_scratch_free(const tl_rt_device *d, CUdeviceptr p) {
  const tl_cuda *cu;
  char err[64];
  if (!p || tl_rt_driver(&cu, err, sizeof err) != TL_OK || !cu->cuMemFree) return;
  if (tl_rt_make_current(d, err, sizeof err) == TL_OK) cu->cuMemFree(p);
}

int tl_rt_zero(CUdeviceptr p, size_t bytes, char *err, size_t n) {
  const tl_cuda *cu;
  int st = tl_rt_driver(&cu, err, n);
  if (st != TL_OK) return st;
  if (!cu->cuMemsetD8) {
    snprintf(err, n, "the CUDA driver lacks cuMemsetD8 (zeroing a @zeroed tensor)");
    return TL_ERR_CUDA;
  }
  CUresult r = cu->cuMemsetD8(p, 0, bytes);
  if (r != CUDA_SUCCESS) {
    char t[200];
    snprintf(err, n, "cuMemsetD8 (zeroing a @zeroed tensor) failed: %s", tl_rt_result_text(r, t, sizeof t));
    return TL_ERR_CUDA;
  }
  return TL_OK;
}
