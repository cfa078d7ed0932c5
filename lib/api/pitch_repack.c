/* pitch_repack.c: TILEC_PITCH_REPACK (on unless =0; docs/runtime.md "Pitch repack"): a tensor-map argument
 * of a launch that the kernel only reads and that fails the map test with a unit last stride (a
 * bf16 [M, 4100]: rows of 8200 bytes, 8-byte aligned, not 16) is copied on the launch's stream
 * (cuMemcpy2DAsync) into stream-ordered memory (cuMemAllocAsync) whose rows are padded to 16
 * bytes, and the launch runs the TMA kernel on the copy instead of its no-TMA form; the copy is
 * freed on the stream after the launch (cuMemFreeAsync), so a CUDA graph captured meanwhile
 * holds the copy, the launch and the free as nodes (docs/decisions.md).
 * requires: k's launch arguments mapped and checked (k->targs); keeps: the caller's arguments
 * and memory (only k->targs, the handle's own, is repointed); breaks: nothing. */
#include <stdio.h>
#include <string.h>

#include "kernel_handle.h"

/* Batch slices copied one 2-D copy each, at most (beyond: the no-TMA form, as without the
 * switch): a batch whose outer dims do not collapse into one run of rows. */
#define TL_REPACK_MAX_SLICES 256

uint64_t tl_written_params(const tl_func *f) {
  uint64_t w = 0;
  for (int i = 0; i < f->params.len && i < 64; i++)
    if (tl_param_written(f, i)) w |= (uint64_t)1 << i;
  return w;
}

/* The element bytes of k's tensor-map argument `param` (the map's dtype), or 0 when no map takes it. */
static int map_elem_bytes(const tilec_kernel *k, int param) {
  for (int i = 0; i < k->meta.ntma; i++)
    if (k->meta.tma[i].param == param) return tl_dtype_bytes((tl_dtype)k->meta.tma[i].dtype);
  return 0;
}

bool tl_repackable(const tilec_kernel *k, int param) {
  if (param < 0 || param >= k->nparams || param >= 64 || (k->written >> param & 1)) return false;
  const tl_arg *a = &k->targs[param];
  int eb = map_elem_bytes(k, param);
  if (!eb || !a->is_tensor || a->rank < 2 || a->rank > 5 || a->rank > TL_MAX_RANK || tl_tma_fits(a, eb)) return false;
  if (a->strides[a->rank - 1] != 1) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] <= 0 || (d + 1 < a->rank && a->shape[d] > 1 && a->strides[d] <= 0)) return false;
  return true;
}

/* One argument's copy: rows of `width` bytes at `pitch` (width rounded up to 16) in `bytes` of
 * memory; `runs` 2-D copies of run_rows rows each (1 when the outer dims collapse into one run
 * of rows src_pitch bytes apart, else one per batch slice). */
typedef struct plan {
  size_t width, pitch, bytes, src_pitch;
  int64_t rows, run_rows, runs;
  bool collapsed;
} plan;

static bool make_plan(const tl_arg *a, int eb, plan *p) {
  int R = a->rank;
  memset(p, 0, sizeof *p);
  p->width = (size_t)a->shape[R - 1] * (size_t)eb;
  p->pitch = (p->width + 15) / 16 * 16;
  p->rows = 1;
  for (int d = 0; d + 1 < R; d++) p->rows *= a->shape[d];
  /* the outer dims of size > 1, outermost first: one run of rows when each one's stride is the
   * next inner one's times its size */
  int dims[TL_MAX_RANK], nd = 0;
  for (int d = 0; d + 1 < R; d++)
    if (a->shape[d] > 1) dims[nd++] = d;
  p->collapsed = true;
  for (int j = 0; j + 1 < nd; j++)
    if (a->strides[dims[j]] != a->strides[dims[j + 1]] * a->shape[dims[j + 1]]) p->collapsed = false;
  if (p->collapsed) {
    p->runs = 1, p->run_rows = p->rows;
    p->src_pitch = nd ? (size_t)a->strides[dims[nd - 1]] * (size_t)eb : p->width;
  } else {
    p->run_rows = a->shape[R - 2];
    p->runs = p->rows / p->run_rows;
    p->src_pitch = a->shape[R - 2] > 1 ? (size_t)a->strides[R - 2] * (size_t)eb : p->width;
  }
  /* overlapping rows (a pitch below the row) are no 2-D copy; neither is a huge batch of slices */
  if ((p->rows > 1 && p->src_pitch < p->width) || p->runs > TL_REPACK_MAX_SLICES) return false;
  if (p->rows > (int64_t)(SIZE_MAX / 2 / p->pitch)) return false;
  p->bytes = p->pitch * (size_t)p->rows + 16; /* + 16: a base rounded up to 16 bytes */
  return true;
}

/* The byte offset in the source of batch slice s (row-major over the dims before the last two). */
static int64_t slice_offset(const tl_arg *a, int eb, int64_t s) {
  int64_t off = 0;
  for (int d = a->rank - 3; d >= 0; d--) {
    off += (s % a->shape[d]) * a->strides[d];
    s /= a->shape[d];
  }
  return off * eb;
}

/* Copies p's rows of a into dst on stream s. */
static CUresult copy_rows(const tl_cuda *cu, const tl_arg *a, int eb, const plan *p, CUdeviceptr dst, CUstream s) {
  for (int64_t r = 0; r < p->runs; r++) {
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = (CUdeviceptr)(uintptr_t)a->data + (CUdeviceptr)(p->collapsed ? 0 : slice_offset(a, eb, r));
    c.srcPitch = p->src_pitch;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dst + (CUdeviceptr)((size_t)r * (size_t)p->run_rows * p->pitch);
    c.dstPitch = p->pitch;
    c.WidthInBytes = p->width;
    c.Height = (size_t)p->run_rows;
    CUresult e = cu->cuMemcpy2DAsync(&c, s);
    if (e != CUDA_SUCCESS) return e;
  }
  return CUDA_SUCCESS;
}

void tl_repack_free(const tl_cuda *cu, void *stream, const tl_repack *r) {
  for (int i = 0; i < r->n; i++) cu->cuMemFreeAsync(r->mem[i], (CUstream)stream);
}

int tl_pitch_repack(tilec_kernel *k, const tl_cuda *cu, void *stream, tl_repack *r, tilec_status *st) {
  r->n = 0;
  if (!k->pitch_repack) return 0;
  int params[TL_CACHE_MAX_TMA], np = 0;
  for (int i = 0; i < k->meta.ntma; i++) {
    int pa = k->meta.tma[i].param;
    const tl_arg *a = &k->targs[pa];
    if (tl_tma_fits(a, tl_dtype_bytes((tl_dtype)k->meta.tma[i].dtype))) continue;
    bool seen = false;
    for (int j = 0; j < np; j++) seen |= params[j] == pa;
    if (seen) continue;
    /* a failing argument that a copy cannot help (written, a last stride not 1): the no-TMA form
     * runs the launch as without the switch, and nothing is copied */
    if (!tl_repackable(k, pa)) return 0;
    params[np++] = pa;
  }
  if (!np || !cu->cuMemAllocAsync || !cu->cuMemFreeAsync || !cu->cuMemcpy2DAsync) return 0;
  plan plans[TL_CACHE_MAX_TMA];
  for (int j = 0; j < np; j++)
    if (!make_plan(&k->targs[params[j]], map_elem_bytes(k, params[j]), &plans[j])) return 0;
  char t[200];
  for (int j = 0; j < np; j++) {
    tl_arg *a = &k->targs[params[j]];
    int eb = map_elem_bytes(k, params[j]);
    const plan *p = &plans[j];
    CUdeviceptr mem = 0;
    CUresult e = cu->cuMemAllocAsync(&mem, p->bytes, (CUstream)stream);
    const char *failed = e != CUDA_SUCCESS ? "cuMemAllocAsync of" : NULL;
    CUdeviceptr dst = (mem + 15) / 16 * 16;
    if (!failed) {
      r->mem[r->n++] = mem;
      if ((e = copy_rows(cu, a, eb, p, dst, (CUstream)stream)) != CUDA_SUCCESS) failed = "cuMemcpy2DAsync into";
    }
    if (failed) { /* what this launch allocated freed, nothing launched */
      tl_repack_free(cu, stream, r);
      r->n = 0;
      *st = tl_launch_error(k, TILEC_ERROR_CUDA,
                            "argument %d (%s): %s its 16-byte-pitch copy (%zu bytes; TILEC_PITCH_REPACK=0 turns the copy off) failed: "
                            "%s; nothing was launched",
                            params[j], k->f->params.data[params[j]].name, failed, p->bytes,
                            tl_rt_result_text(e, t, sizeof t));
      return -1;
    }
    if (!(k->repack_noted >> params[j] & 1)) {
      k->repack_noted |= (uint64_t)1 << params[j];
      tl_sbuf_printf(&k->log_p->log,
                     "tilec: note: kernel '%s': argument %d (%s) cannot be a tensor map (rows %zu bytes apart, base "
                     "0x%llx) and the kernel only reads it: the launcher copies it at each such launch "
                     "into rows of %zu bytes (%lld row%s, %lld 2-D cop%s) and runs the TMA kernel on the copy (TILEC_PITCH_REPACK=0: "
                     "off)\n",
                     k->f->name, params[j], k->f->params.data[params[j]].name, p->src_pitch,
                     (unsigned long long)(uintptr_t)a->data, p->pitch, (long long)p->rows, p->rows == 1 ? "" : "s",
                     (long long)p->runs, p->runs == 1 ? "y" : "ies");
    }
    /* the copy, compact but for the padded rows: every outer stride a multiple of the pitch */
    int R = a->rank;
    a->data = (void *)(uintptr_t)dst;
    a->strides[R - 1] = 1;
    a->strides[R - 2] = (int64_t)(p->pitch / (size_t)eb);
    for (int d = R - 3; d >= 0; d--) a->strides[d] = a->strides[d + 1] * a->shape[d + 1];
  }
  return 1;
}
