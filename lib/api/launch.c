/* launch.c: tilec_kernel_launch / launch_grid, and the launch core every form's launch also goes
 * through: a form's route first (form_launch.c), then the argument checks (device, alignment, the
 * key bits of a kernel compiled without a fallback), the grid and the kernel's `require` checks
 * (both in the grid region; skipped for a signature seen last time), TILEC_CHECK_POINTERS=1's pointer checks, TILEC_PITCH_REPACK's copies (on unless =0; pitch_repack.c),
 * ABI packing into buffers owned by the handle, the tensor maps (encoded once per tensor; a tensor
 * no map can take sends a TMA form's launch to its no-TMA form), the persistent grid, the stream's
 * tile counter (TILEC_ATTN_SCHED=1, sched_slot.c),
 * cuLaunchKernel; no allocation once a shape has been seen (but TILEC_PITCH_REPACK=1's
 * stream-ordered copies), no synchronization.
 * requires: a handle made by jit.c; keeps: the caller's arguments; breaks: nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_handle.h"
#include "axisinfo.h"
#include "require.h"

tilec_status tl_launch_error(tilec_kernel *k, tilec_status st, const char *fmt, ...) {
  int w = snprintf(k->err, sizeof k->err, "launch %s: ", k->f->name);
  va_list ap;
  va_start(ap, fmt);
  if (w > 0 && (size_t)w < sizeof k->err) vsnprintf(k->err + w, sizeof k->err - (size_t)w, fmt, ap);
  va_end(ap);
  return st;
}

/* Everything the checks and the grid depend on, for the "same as last time" test. */
static void signature(const tilec_kernel *k, int64_t *sig) {
  memset(sig, 0, k->sig_len * sizeof *sig);
  for (int i = 0; i < k->nparams; i++) {
    const tl_arg *a = &k->targs[i];
    int64_t *s = sig + (size_t)i * (3 + TL_MAX_RANK);
    if (a->is_tensor) {
      s[0] = 1 + a->dtype;
      s[1] = a->rank;
      for (int d = 0; d < a->rank && d < TL_MAX_RANK; d++) s[3 + d] = a->shape[d];
    } else {
      s[0] = a->is_float ? -1 : -2;
      if (a->is_float) memcpy(&s[2], &a->f, sizeof a->f);
      else s[2] = a->i;
    }
  }
}

/* TILEC_CHECK_POINTERS=1: is the byte at `ptr` device memory that k's
 * launch may use?  NULL when it is, else what it is instead. */
static const char *pointer_problem(const tilec_kernel *k, const tl_cuda *cu, CUdeviceptr ptr, char *buf, size_t n) {
  char t[200];
  unsigned type = 0;
  CUresult r = cu->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
  if (r != CUDA_SUCCESS) {
    snprintf(buf, n, "is not memory the CUDA driver knows (%s): host memory from malloc, or freed?",
             tl_rt_result_text(r, t, sizeof t));
    return buf;
  }
  if (type == CU_MEMORYTYPE_HOST) return "is page-locked host memory, not device memory";
  if (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED) {
    snprintf(buf, n, "is memory of type %u, not device memory", type);
    return buf;
  }
  uint64_t managed = 0; /* a bool; zero-extended in 8 bytes whatever its width */
  if (cu->cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr) == CUDA_SUCCESS && managed)
    return NULL; /* managed memory: any device may use it */
  int ordinal = -1;
  if (cu->cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr) == CUDA_SUCCESS &&
      ordinal != k->dev->ordinal) {
    snprintf(buf, n, "is memory of CUDA device %d; the kernel runs on device %d", ordinal, k->dev->ordinal);
    return buf;
  }
  CUcontext ctx = NULL; /* NULL for stream-ordered (pool) and VMM memory: no context owns it */
  if (cu->cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, ptr) == CUDA_SUCCESS && ctx &&
      ctx != k->dev->ctx) {
    snprintf(buf, n, "belongs to CUDA context %p, not to the kernel's (device %d's primary context %p)", (void *)ctx,
             k->dev->ordinal, (void *)k->dev->ctx);
    return buf;
  }
  return NULL;
}

/* Every tensor's bytes, from its lowest to its highest element: device
 * memory of k's device and context, the last byte in the same allocation as
 * the first or itself device memory (VMM allocations may be adjacent). */
static tilec_status check_pointers(tilec_kernel *k, const tl_cuda *cu) {
  if (!cu->cuPointerGetAttribute)
    return tl_launch_error(k, TILEC_ERROR_CUDA, "TILEC_CHECK_POINTERS=1, but the driver has no cuPointerGetAttribute");
  char buf[300];
  for (int i = 0; i < k->nparams; i++) {
    const tl_arg *a = &k->targs[i];
    if (!a->is_tensor) continue;
    const char *name = k->f->params.data[i].name;
    int64_t lo = 0, hi = tl_dtype_bytes(k->f->params.data[i].dtype), eb = hi;
    bool empty = false, overflow = false;
    for (int d = 0; d < a->rank && d < TL_MAX_RANK; d++) {
      int64_t span;
      if (a->shape[d] <= 0) empty = true;
      else if (__builtin_mul_overflow(a->shape[d] - 1, a->strides[d], &span) ||
               __builtin_mul_overflow(span, eb, &span) || __builtin_add_overflow(span < 0 ? lo : hi, span,
                                                                                   span < 0 ? &lo : &hi))
        overflow = true;
    }
    if (empty) continue; /* no element is read or written */
    if (overflow)
      return tl_launch_error(k, TILEC_ERROR_LAUNCH, "argument %d (%s): its extent in bytes overflows 64 bits", i, name);
    CUdeviceptr base = (CUdeviceptr)(uintptr_t)a->data, first = base + (CUdeviceptr)lo, last = base + (CUdeviceptr)(hi - 1);
    const char *why = pointer_problem(k, cu, first, buf, sizeof buf);
    if (why)
      return tl_launch_error(k, TILEC_ERROR_LAUNCH, "argument %d (%s): data pointer 0x%llx %s (TILEC_CHECK_POINTERS=1)", i,
                          name, (unsigned long long)first, why);
    CUdeviceptr start = 0;
    size_t size = 0;
    bool inside = cu->cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, first) == CUDA_SUCCESS &&
                  cu->cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, first) == CUDA_SUCCESS &&
                  last >= start && last - start < size;
    if (!inside && (why = pointer_problem(k, cu, last, buf, sizeof buf)) != NULL)
      return tl_launch_error(k, TILEC_ERROR_LAUNCH,
                          "argument %d (%s): its last byte 0x%llx (%lld bytes from its first, 0x%llx) %s; the "
                          "allocation holding the first is 0x%llx + %zu bytes (TILEC_CHECK_POINTERS=1)",
                          i, name, (unsigned long long)last, (long long)(hi - 1 - lo), (unsigned long long)first, why,
                          (unsigned long long)start, size);
  }
  return TILEC_OK;
}

tilec_status tilec_kernel_launch(tilec_kernel *k, const tilec_arg *args, int nargs, void *stream) {
  return tl_launch(k, args, nargs, NULL, stream);
}

tilec_status tilec_kernel_launch_grid(tilec_kernel *k, const tilec_arg *args, int nargs, const int64_t grid[3],
                                      void *stream) {
  if (k && !grid) {
    k->err[0] = 0;
    return tl_launch_error(k, TILEC_ERROR_USAGE, "no grid (NULL)");
  }
  return tl_launch(k, args, nargs, grid, stream);
}
static tilec_status launch_packed(tilec_kernel *k, const tl_cuda *cu, CUfunction fn, const tilec_arg *args,
                                  int nargs, const int64_t grid[3], const int64_t *grid_override, void *stream);

tilec_status tl_launch(tilec_kernel *k, const tilec_arg *args, int nargs, const int64_t *grid_override, void *stream) {
  if (!k) return TILEC_ERROR_USAGE;
  k->err[0] = 0;
  tilec_status form_st;
  if (!grid_override && tl_route_to_form(k, args, nargs, stream, &form_st)) return form_st;
  if (nargs < 0 || (nargs > 0 && !args)) return tl_launch_error(k, TILEC_ERROR_USAGE, "no arguments array");
  char err[512] = "";
  if (!tl_api_map_args(k->f, args, nargs, k->targs, false, err, sizeof err))
    return tl_launch_error(k, TILEC_ERROR_LAUNCH, "%s", err);
  for (int i = 0; i < nargs; i++) {
    if (args[i].kind != TILEC_ARG_TENSOR) continue;
    const DLTensor *t = args[i].u.tensor;
    const tl_param *pa = &k->f->params.data[i];
    if (t->device.device_type == kDLCUDA && t->device.device_id != k->dev->ordinal)
      return tl_launch_error(k, TILEC_ERROR_LAUNCH, "argument %d (%s) is on CUDA device %d, the kernel on device %d", i,
                          pa->name, t->device.device_id, k->dev->ordinal);
    uintptr_t addr = (uintptr_t)k->targs[i].data;
    int esize = tl_dtype_bytes(pa->dtype);
    int need = k->meta.param_align[i] > esize ? k->meta.param_align[i] : esize;
    if (need > 1 && addr % (uintptr_t)need != 0)
      return tl_launch_error(k, TILEC_ERROR_LAUNCH, "argument %d (%s): data pointer %p is not %d-byte aligned", i,
                          pa->name, (void *)addr, need);
  }
  CUfunction fn = k->fn;
  if (k->meta.assumed_key || k->vec_fn) { /* no fallback compiled (emit_memory.c assume_vectors): the key decides */
    tl_spec_arg sa[TL_CACHE_MAX_PARAMS];
    for (int i = 0; i < nargs && i < TL_CACHE_MAX_PARAMS; i++)
      sa[i] = (tl_spec_arg){.is_tensor = k->targs[i].is_tensor, .addr = (uint64_t)(uintptr_t)k->targs[i].data,
                            .rank = k->targs[i].rank, .shape = k->targs[i].shape, .strides = k->targs[i].strides,
                            .elem_bytes = k->targs[i].is_tensor ? tl_dtype_bytes(k->targs[i].dtype) : 0};
    uint32_t key = tl_spec_key_for_args(sa, nargs < TL_CACHE_MAX_PARAMS ? nargs : TL_CACHE_MAX_PARAMS);
    if (k->vec_fn && (key & k->vec_key) == k->vec_key) fn = k->vec_fn;
    if ((key & k->meta.assumed_key) != k->meta.assumed_key)
      return tl_launch_error(k, TILEC_ERROR_LAUNCH,
                          "kernel '%s' was compiled with TILEC_VEC_ONLY=1 (16-byte vectors only, no fallback): its "
                          "tensors must be 16-byte aligned, contiguous along the last dimension, with 16-byte "
                          "multiples for the other strides and the last size (key 0x%x, needs 0x%x); nothing was "
                          "launched",
                          k->f->name, key, k->meta.assumed_key);
  }
  signature(k, k->sig);
  if (!k->have_last || memcmp(k->sig, k->last_sig, k->sig_len * sizeof *k->sig) != 0) {
    /* new shapes or scalars: full checks and the grid (both allocation-free;
     * a repeated launch with the same shapes skips them) */
    k->have_last = false;
    if (!tl_check_args(k->f, k->targs, nargs, err, sizeof err)) return tl_launch_error(k, TILEC_ERROR_LAUNCH, "%s", err);
    if (!tl_grid_eval_run(k->grid_eval, k->targs, nargs, k->grid, err, sizeof err)) {
      if (!tl_require_is_failure(err)) return tl_launch_error(k, TILEC_ERROR_LAUNCH, "%s", err);
      snprintf(k->err, sizeof k->err, "%s", err); /* a require's diagnostic: it names the kernel and the place */
      return TILEC_ERROR_LAUNCH;
    }
    for (int d = 0; d < 3; d++)
      if (k->grid[d] > k->dev->max_grid[d])
        return tl_launch_error(k, TILEC_ERROR_LAUNCH,
                            "grid (%lld, %lld, %lld): axis %d has %lld programs; device %d (%s) allows at most %d on "
                            "axis %d (limits %d x %d x %d); nothing was launched: " TL_GRID_AXIS0_ADVICE,
                            (long long)k->grid[0], (long long)k->grid[1], (long long)k->grid[2], d,
                            (long long)k->grid[d], k->dev->ordinal, k->dev->name, k->dev->max_grid[d], d,
                            k->dev->max_grid[0], k->dev->max_grid[1], k->dev->max_grid[2]);
    memcpy(k->last_sig, k->sig, k->sig_len * sizeof *k->sig);
    k->have_last = true;
  }
  int64_t grid[3] = {k->grid[0], k->grid[1], k->grid[2]};
  if (grid_override && k->meta.persist)
    return tl_launch_error(k, TILEC_ERROR_UNSUPPORTED,
                        "kernel '%s' is persistent (its CTAs loop over the tiles of its grid clause, docs/pipelines.md, "
                        "docs/rows.md): a given grid is not supported; compile it with TILEC_PERSIST=0 (a dot kernel) "
                        "or --disable-pass=row_stream (a kernel without a dot)",
                        k->f->name);
  if (grid_override) {
    for (int d = 0; d < 3; d++) {
      if (grid_override[d] < 0 || grid_override[d] > k->dev->max_grid[d])
        return tl_launch_error(k, TILEC_ERROR_LAUNCH, "grid dimension %d is %lld, outside [0, %d] on this device", d,
                            (long long)grid_override[d], k->dev->max_grid[d]);
      grid[d] = grid_override[d];
    }
  }
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return TILEC_OK; /* nothing to do */
  const tl_cuda *cu;
  if (tl_rt_driver(&cu, err, sizeof err) != TL_OK || tl_rt_make_current(k->dev, err, sizeof err) != TL_OK)
    return tl_launch_error(k, TILEC_ERROR_CUDA, "%s", err);
  if (k->check_pointers) {
    tilec_status ps = check_pointers(k, cu);
    if (ps != TILEC_OK) return ps;
  }
  /* TILEC_PITCH_REPACK (unless =0): read-only tensors no map can take, copied into a 16-byte pitch on the
   * stream (pitch_repack.c); the copies are freed on the stream after the launch */
  tl_repack rp;
  tilec_status st = TILEC_OK;
  if (tl_pitch_repack(k, cu, stream, &rp, &st) < 0) return st;
  st = launch_packed(k, cu, fn, args, nargs, grid, grid_override, stream);
  tl_repack_free(cu, stream, &rp);
  return st;
}

/* The rest of tl_launch: ABI packing, the tensor maps, the persistent grid, cuLaunchKernel. */
static tilec_status launch_packed(tilec_kernel *k, const tl_cuda *cu, CUfunction fn, const tilec_arg *args,
                                  int nargs, const int64_t grid[3], const int64_t *grid_override, void *stream) {
  char err[512] = "";
  if (!tl_abi_pack(k->f, &k->layout, k->targs, k->argbuf, k->slots, err, sizeof err))
    return tl_launch_error(k, TILEC_ERROR_LAUNCH, "%s", err);
  /* (a no-TMA entry of user PTX declares its TMA entry's maps and reads none: left zero) */
  for (int i = 0; i < k->meta.ntma && !k->maps_unread; i++) {
    /* encoded once per (pointer, sizes, strides): a repeated launch costs a compare */
    const tl_rt_tma *t = &k->meta.tma[i];
    const tl_arg *a = &k->targs[t->param];
    /* (the parameter's rank, checked: the same every launch) */
    size_t nb = sizeof(int64_t) * (size_t)(a->rank < 0 ? 0 : a->rank > TL_MAX_RANK ? TL_MAX_RANK : a->rank);
    if (k->tma_key[i].valid && k->tma_key[i].data == a->data && !memcmp(k->tma_key[i].shape, a->shape, nb) &&
        !memcmp(k->tma_key[i].strides, a->strides, nb)) {
      if (!k->tma_key[i].fits && k->tma_form) return tl_launch_notma(k, t->param, args, nargs, grid_override, stream);
      continue;
    }
    k->tma_key[i].valid = false;
    int enc = tl_tma_encode(cu, t, a, k->slots[k->layout.nslots - k->meta.ntma + i], err, sizeof err);
    if (enc < 0)
      return tl_launch_error(k, TILEC_ERROR_CUDA, "argument %d (%s): %s", t->param, k->f->params.data[t->param].name, err);
    k->tma_key[i].data = a->data;
    memcpy(k->tma_key[i].shape, a->shape, nb);
    memcpy(k->tma_key[i].strides, a->strides, nb);
    k->tma_key[i].valid = true;
    k->tma_key[i].fits = enc > 0;
    /* a tensor the map test refuses: a TMA form has no path for it (its no-TMA form has) */
    if (!enc && k->tma_form) return tl_launch_notma(k, t->param, args, nargs, grid_override, stream);
  }
  /* persistent: about one CTA per SM slot, each looping over the grid clause's tiles */
  int64_t launch[3] = {grid[0], grid[1], grid[2]};
  if (k->meta.persist) {
    int64_t tiles = grid[0] * grid[1] * grid[2];
    if (tiles > INT32_MAX) /* the kernel counts its tiles in 32 bits */
      return tl_launch_error(k, TILEC_ERROR_LAUNCH, "kernel '%s' is persistent and its grid has %lld tiles (at most %d)",
                          k->f->name, (long long)tiles, INT32_MAX);
    launch[0] = tiles < k->max_ctas ? tiles : k->max_ctas;
    if (k->meta.cluster) { /* clusters of 2 CTAs, each cluster looping over pairs of tiles */
      int a = k->meta.cluster - 1;
      int64_t pairs = tiles / grid[a] * ((grid[a] + 1) / 2), fit = k->max_ctas / 2 > 0 ? k->max_ctas / 2 : 1;
      launch[0] = 2 * (pairs < fit ? pairs : fit);
    }
    launch[1] = launch[2] = 1;
  }
  if (k->meta.sched_ctr) { /* TILEC_ATTN_SCHED=1: this stream's tile counter (sched_slot.c) */
    tilec_status sst = tl_sched_slot(k, cu, stream, &k->sched_arg);
    if (sst != TILEC_OK) return sst;
  }
  CUresult r = cu->cuLaunchKernel(fn, (unsigned)launch[0], (unsigned)launch[1], (unsigned)launch[2],
                                  (unsigned)k->meta.threads, 1, 1, (unsigned)k->meta.smem_bytes, (CUstream)stream,
                                  k->slots, NULL);
  if (r != CUDA_SUCCESS) {
    char t[200];
    return tl_launch_error(k, TILEC_ERROR_CUDA, "cuLaunchKernel failed: %s (grid %lld x %lld x %lld, block %d, smem %d)",
                        tl_rt_result_text(r, t, sizeof t), (long long)grid[0], (long long)grid[1],
                        (long long)grid[2], k->meta.threads, k->meta.smem_bytes);
  }
  return TILEC_OK;
}
