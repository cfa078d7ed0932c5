/* sortkey.h: the order of `sort` (docs/language.md "Sorting"), as unsigned
 * integer keys shared by the interpreter and the GPU code generator.
 *   floats (as f32 bits): -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, every
 *     NaN one key (it comes out as the canonical quiet NaN);
 *   signed integers: the value + 2^(w-1); u8: the value.
 * Equal keys are equal bit patterns, so any correct sorting algorithm gives
 * the same result (a sorting network on the GPU, qsort here). */
#ifndef TILEC_SORTKEY_H
#define TILEC_SORTKEY_H

#include <stdint.h>

#define TL_SORT_NAN_KEY 0xFFFFFFFFu
#define TL_SORT_CANON_NAN 0x7FC00000u

static inline uint32_t tl_sort_key_f32(uint32_t bits) {
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return TL_SORT_NAN_KEY;
  return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}
static inline uint32_t tl_sort_f32_of_key(uint32_t key) {
  if (key == TL_SORT_NAN_KEY) return TL_SORT_CANON_NAN;
  return (key & 0x80000000u) ? key & 0x7FFFFFFFu : ~key;
}

#endif
