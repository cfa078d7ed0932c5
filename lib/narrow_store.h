/* narrow_store.h: which values of a function reach memory only through 16-bit float stores.
 *
 * A value is "narrow-only" when every path from it to memory is a chain of error-tame elementwise
 * arithmetic and element-moving shape ops ending in the stored operand of a store of bf16 / f16;
 * it feeds no reduction, dot, scan, sort, comparison, index, atomic, loop-carried or `if` value,
 * f32 (or 8-bit, or integer) store, and no function that can amplify an error (exp, log, floor, ...).
 * An error of 2^-11 relative in such a value is then below the stored precision (bf16's ulp is
 * 2^-8 relative) and within the tolerances that compare 16-bit outputs.  Codegen's scoped
 * `TILEC_TANH_APPROX=2` lowers a tanh / sigmoid by tanh.approx.f32 only where its result is
 * narrow-only (docs/language.md 8.1 "Under TILEC_TANH_APPROX", docs/decisions.md "gelu7").
 * The analysis reads the IR as it is at codegen (after layout assignment) and changes nothing. */
#ifndef TILEC_NARROW_STORE_H
#define TILEC_NARROW_STORE_H

#include "ir.h"

/* Per value id (f->values.len entries, in f's arena): 1 when the value is narrow-only, else 0.
 * A value without uses counts as narrow-only (nothing of it reaches memory). */
uint8_t *tl_narrow_only(tl_func *f);

#endif
