/* rope_producer.h: RoPE's rotation of k moved into fa3's producer warpgroup (TILEC_ROPE_PRODUCER=1;
 * docs/pipelines.md "RoPE in fa3's producer").  lib/rope_producer.c recognizes the rotate-half
 * rotation of the keys that feeds a wgmma attention kernel's two chained score dots
 * (examples/attn_rope.tile's cutlass_attn_rope_fwd); passes/rope_producer.c reports it, lib/schedule.c's
 * stream rule streams the key halves, lib/codegen/emit_rope.c plans and emits the producer.
 *
 * The design: the producer's one thread TMAs k's two halves, as the plain fa3 kernel's K boxes
 * (128-byte swizzle, a [BN][64] slot each), and V into the ring slot; the
 * k boxes complete on a "loaded" mbarrier of the slot, V on its "full" one (count 2); the
 * producer's 128 threads wait "loaded", rotate k in place (chunk c of row r of atom 0 and of
 * atom 1 sit at the same swizzled offset, so a thread owns both halves of its pairs), reading the
 * cos / sin rows from global memory (L2), then fence.proxy.async, bar.sync 2 and one arrive on
 * "full".  The consumers' turn is then the plain fa3 kernel's: the two score dots read the slot's
 * atoms as one K = D dot would, q1' and q2' (rotated once a tile by the consumers) their
 * resident atoms. */
#ifndef TILEC_ROPE_PRODUCER_H
#define TILEC_ROPE_PRODUCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

typedef struct tl_rope_match {
  int32_t loop;              /* the main loop (a `for`) */
  int32_t dot_lo, dot_hi;    /* the score dots reading k's first half rotated (x1 c - x2 s) and the
                              * second (x2 c + x1 s); the later of the two waits (the chain's end) */
  int32_t dot_first;         /* the one whose result is the other's accumulator */
  int32_t load_lo, load_hi;  /* the loads of k's halves (16-bit tiles [BN, HALF]) */
  int32_t load_cos, load_sin; /* the table rows ([BN, HALF], f32 or 16-bit) */
  int32_t k_param, cos_param, sin_param;
  int32_t bn, half;          /* keys a step, the half head dimension */
  tl_dtype table_dtype;
  int32_t ops[24];           /* the rotation's ops but the two key loads (the consumers skip them) */
  int nops;
} tl_rope_match;

/* Whether f's main loop computes its score dots' B as the rotate-half RoPE of the keys (the form
 * above); when not, why (into why[n]). */
bool tl_rope_match_keys(tl_func *f, tl_rope_match *m, char *why, size_t n);

/* TILEC_ROPE_PRODUCER=1 and f is a wgmma attention kernel in the fa3 form whose keys match: *m
 * (NULL: not needed) filled. */
bool tl_rope_producer_on(tl_func *f, tl_rope_match *m);

/* With tl_rope_producer_on: the load the B of score dot D streams from (its key half, rotated in
 * the ring slot by the producer), else -1 (the stream rule of lib/schedule.c asks first). */
int32_t tl_rope_stream_load(tl_func *f, int32_t D, int which);

#endif
