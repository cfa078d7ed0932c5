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

bool tl_abi_layout_for(const tl_func *f, tl_abi_layout *out, char *err, size_t n) {
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
#undef ADD_SLOT
  out->nslots = slot;
  out->bytes = (off + 7) / 8 * 8;
  return true;
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
  if (slot != l->nslots) {
    snprintf(err, n, "argument layout does not match kernel %s", f->name);
    return false;
  }
  return true;
}
