/* pack.c: kernel arguments -> the parameter buffer of the kernel ABI
 * (lib/codegen/codegen.h): per tensor .u64 pointer, R x .u32 sizes, R x .u64
 * strides (elements); scalars as .u32 / .u64 / .f32.
 * requires: args already checked against f (tl_check_args); keeps: no
 * allocation (the launch path may be captured in a CUDA graph); breaks: nothing. */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

static uint32_t scalar_slot_bytes(tl_dtype dt) {
  if (dt == TL_I64) return 8;
  return 4; /* i1/i8/i16/i32/u8 -> .u32; f16/bf16/f8/f32 -> .f32 */
}

bool tl_abi_layout_for(const tl_func *f, int ntma, tl_abi_layout *out, char *err, size_t n) {
  memset(out, 0, sizeof *out);
  size_t off = 0;
  int slot = 0;
  if (f->params.len > TL_CACHE_MAX_PARAMS) {
    snprintf(err, n, "kernel %s has %d parameters; the launcher supports %d", f->name, f->params.len,
             TL_CACHE_MAX_PARAMS);
    return false;
  }
#define ADD_SLOT(bytes)                                    \
  do {                                                     \
    uint32_t b_ = (bytes);                                 \
    off = (off + b_ - 1) / b_ * b_;                        \
    out->offset[slot++] = (uint32_t)off;                   \
    off += b_;                                             \
  } while (0)
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *p = &f->params.data[i];
    if (p->is_tensor) {
      if (p->rank < 0 || p->rank > TL_MAX_RANK) {
        snprintf(err, n, "parameter %s has rank %d", p->name, p->rank);
        return false;
      }
      ADD_SLOT(8);
      for (int d = 0; d < p->rank; d++) ADD_SLOT(4);
      for (int d = 0; d < p->rank; d++) ADD_SLOT(8);
    } else {
      ADD_SLOT(scalar_slot_bytes(p->dtype));
    }
  }
  if (ntma < 0 || ntma > TL_CACHE_MAX_TMA) {
    snprintf(err, n, "kernel %s has %d tensor maps; the launcher supports %d", f->name, ntma, TL_CACHE_MAX_TMA);
    return false;
  }
  for (int i = 0; i < ntma; i++) { /* .param .align 64 .b8 [128] */
    off = (off + 63) / 64 * 64;
    out->offset[slot++] = (uint32_t)off;
    off += 128;
  }
#undef ADD_SLOT
  out->nslots = slot;
  out->ntma = ntma;
  out->bytes = (off + 63) / 64 * 64;
  return true;
}

/* (runtime.h) */
bool tl_tma_fits(const tl_arg *a, int eb) {
  /* (rank 1: a row stream's map over a vector, lib/codegen/emit_ring_rows.c) */
  if (!a->is_tensor || a->rank < 1 || a->rank > 5 || a->rank > TL_MAX_RANK) return false;
  int R = a->rank;
  uint64_t base = (uint64_t)(uintptr_t)a->data;
  if (a->strides[R - 1] != 1 || base % 16) return false;
  for (int d = 0; d + 1 < R; d++) {
    int64_t sb = a->strides[d] * eb;
    if (sb <= 0 || sb % 16 || sb >= ((int64_t)1 << 40)) return false;
  }
  for (int d = 0; d < R; d++)
    if (a->shape[d] <= 0) return false;
  return true;
}

int tl_tma_encode(const tl_cuda *cu, const tl_rt_tma *t, const tl_arg *a, void *map, char *err, size_t n) {
  int eb = tl_dtype_bytes((tl_dtype)t->dtype);
  memset(map, 0, 128);
  if (!tl_tma_fits(a, eb)) return 0;
  if (!cu->cuTensorMapEncodeTiled) {
    snprintf(err, n, "the driver has no cuTensorMapEncodeTiled (CUDA 12.0+), which this kernel's TMA loads need");
    return -1;
  }
  /* raw bits: 8-bit types as bytes, f32 (a tf32 dot's operand) as FLOAT32, not the TFLOAT32
   * type (the tensor core drops the low mantissa bits itself) */
  int dt = eb == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
           : eb == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
           : t->dtype == TL_F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  /* (0: an operand prologue's plain row-major box) */
  int swz = t->swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : t->swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
          : t->swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
  /* dims innermost first; the tile is the last two dims (box_inner x
   * box_rows), every other dim is indexed by a scalar (box 1) */
  int R = a->rank;
  cuuint64_t dims[5], strides[4];
  unsigned box[5], estr[5];
  for (int i = 0; i < R; i++) {
    dims[i] = (cuuint64_t)a->shape[R - 1 - i];
    box[i] = i == 0 ? (unsigned)t->box_inner : i == 1 ? (unsigned)t->box_rows : 1u;
    estr[i] = 1;
    if (i + 1 < R) strides[i] = (cuuint64_t)(a->strides[R - 2 - i] * eb);
  }
  CUresult r = cu->cuTensorMapEncodeTiled((CUtensorMap *)map, dt, (unsigned)R, a->data, dims, strides, box, estr,
                                          CU_TENSOR_MAP_INTERLEAVE_NONE, swz, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    char txt[200];
    if (R == 1) /* (a vector: no row) */
      snprintf(err, n, "cuTensorMapEncodeTiled failed: %s (dims %llu, box %u)", tl_rt_result_text(r, txt, sizeof txt),
               (unsigned long long)dims[0], box[0]);
    else
      snprintf(err, n, "cuTensorMapEncodeTiled failed: %s (dims %llu x %llu, row stride %llu bytes, box %u x %u)",
               tl_rt_result_text(r, txt, sizeof txt), (unsigned long long)dims[1], (unsigned long long)dims[0],
               (unsigned long long)strides[0], box[1], box[0]);
    return -1;
  }
  return 1;
}

bool tl_abi_pack(const tl_func *f, const tl_abi_layout *l, const tl_arg *args, void *buf, void **slots,
                 char *err, size_t n) {
  uint8_t *base = buf;
  int slot = 0;
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *p = &f->params.data[i];
    const tl_arg *a = &args[i];
    if (p->is_tensor) {
      uint64_t ptr = (uint64_t)(uintptr_t)a->data;
      slots[slot] = base + l->offset[slot];
      memcpy(slots[slot], &ptr, 8);
      slot++;
      for (int d = 0; d < p->rank; d++, slot++) {
        if (a->shape[d] < 0 || a->shape[d] > INT32_MAX) {
          snprintf(err, n, "argument %d (%s): size %lld of dimension %d does not fit in i32", i + 1, p->name,
                   (long long)a->shape[d], d);
          return false;
        }
        uint32_t s = (uint32_t)a->shape[d];
        slots[slot] = base + l->offset[slot];
        memcpy(slots[slot], &s, 4);
      }
      for (int d = 0; d < p->rank; d++, slot++) {
        int64_t st = a->strides[d];
        slots[slot] = base + l->offset[slot];
        memcpy(slots[slot], &st, 8);
      }
    } else {
      slots[slot] = base + l->offset[slot];
      if (tl_dtype_is_float(p->dtype)) {
        float v = a->is_float ? (float)a->f : (float)a->i;
        memcpy(slots[slot], &v, 4);
      } else if (p->dtype == TL_I64) {
        int64_t v = a->is_float ? (int64_t)a->f : a->i;
        memcpy(slots[slot], &v, 8);
      } else {
        uint32_t v = (uint32_t)(a->is_float ? (int64_t)a->f : a->i);
        memcpy(slots[slot], &v, 4);
      }
      slot++;
    }
  }
  for (int i = 0; i < l->ntma; i++, slot++) slots[slot] = base + l->offset[slot];
  if (slot != l->nslots) {
    snprintf(err, n, "argument layout does not match kernel %s", f->name);
    return false;
  }
  return true;
}
