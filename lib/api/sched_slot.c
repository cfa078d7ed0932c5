/* sched_slot.c: the tile counters of a TILEC_ATTN_SCHED=1 kernel (tl_cache_meta.sched_ctr; the
 * kernel's last parameter is their address, lib/codegen/codegen.h): one pair of u32 words for each
 * (handle, stream), so that launches of one handle on two streams never share a counter.
 * docs/runtime.md "Tile counters".
 *
 * The words live in blocks of SLOTS_A_BLOCK pairs (cuMemAlloc): the first block when the handle is
 * made (so a launch, captured in a CUDA graph or not, allocates no device memory for its first
 * SLOTS_A_BLOCK streams), another at the launch that needs it.  A stream's pair is zeroed by
 * cuMemsetD32Async on that stream before its first launch; the kernel leaves it zero (the last CTA
 * to take resets it, lib/codegen/attn_sched.c), and launches on one stream are serialized, so no
 * later launch needs a memset.  A memset issued while the stream captures goes into the graph (each
 * replay zeroes the pair first); the pair counts as zeroed only once a memset ran outside a capture.
 * Streams are told apart by their handle: the per-thread default stream (CU_STREAM_PER_THREAD) of
 * two threads, or a stream destroyed while its launch still runs and a new one at the same address,
 * would share a pair (docs/runtime.md).
 * requires: a handle made by jit.c; keeps: the caller's stream; breaks: nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_handle.h"

enum { SLOTS_A_BLOCK = 64 };

struct tl_sched_slots {
  CUdeviceptr *blocks;  /* nblocks blocks of SLOTS_A_BLOCK pairs (8 bytes each) */
  int nblocks;
  struct { CUstream stream; bool zeroed; } *e; /* entry i: the stream of pair i */
  int n, cap;
  int last;             /* the last launch's entry (a repeated stream costs one compare) */
};

/* Another block of pairs (cuMemAlloc); false with err set. */
static bool add_block(tl_sched_slots *s, const tl_cuda *cu, char *err, size_t n) {
  if (!cu->cuMemAlloc) {
    snprintf(err, n, "the driver has no cuMemAlloc (TILEC_ATTN_SCHED's tile counters)");
    return false;
  }
  CUdeviceptr *b = realloc(s->blocks, sizeof *b * (size_t)(s->nblocks + 1));
  if (!b) {
    snprintf(err, n, "out of memory");
    return false;
  }
  s->blocks = b;
  CUdeviceptr p = 0;
  CUresult r = cu->cuMemAlloc(&p, 8 * SLOTS_A_BLOCK);
  if (r != CUDA_SUCCESS) {
    char t[200];
    snprintf(err, n, "cuMemAlloc of %d tile counters (TILEC_ATTN_SCHED) failed: %s", SLOTS_A_BLOCK,
             tl_rt_result_text(r, t, sizeof t));
    return false;
  }
  s->blocks[s->nblocks++] = p;
  return true;
}

bool tl_sched_slots_init(tilec_kernel *k, char *err, size_t n) {
  if (!k->meta.sched_ctr) return true;
  const tl_cuda *cu;
  if (tl_rt_driver(&cu, err, n) != TL_OK || tl_rt_make_current(k->dev, err, n) != TL_OK) return false;
  k->sched = calloc(1, sizeof *k->sched);
  if (!k->sched) {
    snprintf(err, n, "out of memory");
    return false;
  }
  k->sched->last = -1;
  return add_block(k->sched, cu, err, n);
}

void tl_sched_slots_free(tilec_kernel *k) {
  tl_sched_slots *s = k->sched;
  if (!s) return;
  const tl_cuda *cu;
  char err[64];
  if (s->nblocks && tl_rt_driver(&cu, err, sizeof err) == TL_OK && tl_rt_make_current(k->dev, err, sizeof err) == TL_OK &&
      cu->cuMemFree)
    for (int i = 0; i < s->nblocks; i++) cu->cuMemFree(s->blocks[i]);
  free(s->blocks);
  free(s->e);
  free(s);
  k->sched = NULL;
}

tilec_status tl_sched_slot(tilec_kernel *k, const tl_cuda *cu, void *stream, CUdeviceptr *out) {
  tl_sched_slots *s = k->sched;
  if (!s) return tl_launch_error(k, TILEC_ERROR_INTERNAL, "no tile counters for a TILEC_ATTN_SCHED kernel");
  CUstream st = (CUstream)stream;
  int i = s->last;
  if (i < 0 || s->e[i].stream != st)
    for (i = 0; i < s->n && s->e[i].stream != st; i++) {}
  if (i == s->n) { /* a new stream: the next pair */
    char err[300];
    if (s->n == s->nblocks * SLOTS_A_BLOCK && !add_block(s, cu, err, sizeof err))
      return tl_launch_error(k, TILEC_ERROR_CUDA, "%s", err);
    if (s->n == s->cap) {
      int cap = s->cap ? 2 * s->cap : 4;
      void *e = realloc(s->e, sizeof *s->e * (size_t)cap);
      if (!e) return tl_launch_error(k, TILEC_ERROR_NOMEM, "out of memory (the tile counters)");
      s->e = e, s->cap = cap;
    }
    s->e[s->n].stream = st, s->e[s->n].zeroed = false;
    s->n++;
  }
  s->last = i;
  CUdeviceptr addr = s->blocks[i / SLOTS_A_BLOCK] + 8 * (CUdeviceptr)(i % SLOTS_A_BLOCK);
  if (!s->e[i].zeroed) {
    if (!cu->cuMemsetD32Async)
      return tl_launch_error(k, TILEC_ERROR_CUDA, "the driver has no cuMemsetD32Async (TILEC_ATTN_SCHED's tile counters)");
    CUresult r = cu->cuMemsetD32Async(addr, 0, 2, st);
    if (r != CUDA_SUCCESS) {
      char t[200];
      return tl_launch_error(k, TILEC_ERROR_CUDA, "cuMemsetD32Async of the stream's tile counter failed: %s",
                             tl_rt_result_text(r, t, sizeof t));
    }
    int capturing = 0;
    if (cu->cuStreamIsCapturing && cu->cuStreamIsCapturing(st, &capturing) != CUDA_SUCCESS) capturing = 1;
    s->e[i].zeroed = capturing == 0; /* (captured: the graph zeroes it; a direct launch still must) */
  }
  *out = addr;
  return TILEC_OK;
}

int tl_sched_slot_count(const tilec_kernel *k) { return k && k->sched ? k->sched->n : 0; }
