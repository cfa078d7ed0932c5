/* test_examples.c: every kernel of examples/ (all .tile files) on the GPU against the CPU
 * interpreter.  For each kernel and each of several size rounds (1, tile-1,
 * tile+1, primes: never multiples of a power-of-two tile): fresh random
 * inputs (never zeros; the seed is printed), outputs poisoned with NaN bytes
 * on both sides, a launch through the JIT API, the same kernel in the
 * interpreter on the same host data, a per-dtype comparison, and a check
 * that every element the interpreter wrote was written on the GPU; sizes a kernel's require()
 * refuses must be refused by both, with the same diagnostic.
 *   usage: gpu_test_examples [EXAMPLES_DIR]   (exit 0 pass, 1 fail, 77 skip) */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"

#ifndef TILEC_SOURCE_DIR
#define TILEC_SOURCE_DIR "."
#endif

#define MAX_PARAMS 32
#define MAX_SYMS 16
#define MAX_ELEMS ((int64_t)1 << 22) /* per tensor, so the interpreter stays quick */

/* Sizes per round; symbol j of round r takes sizes[r][j % 4]. */
static const int64_t round_sizes[][4] = {
    {1, 1, 1, 1},
    {65, 63, 17, 129},
    {127, 131, 33, 257},
    {31, 97, 255, 7},
};
#define NROUNDS (int)(sizeof round_sizes / sizeof round_sizes[0])

/* The cutlass GEMMs (warp-specialized, persistent; docs/pipelines.md): M, N,
 * K of extra rounds around the 128x256x64 tile (1, tile - 1, tile + 1,
 * primes, K = 511) and more tiles than the H200 has SMs (143 > 132: a CTA
 * takes a second tile), under each variant of the switches below. */
static const int64_t gemm_sizes[][3] = {
    {1, 1, 1}, {127, 255, 63}, {129, 257, 65}, {131, 263, 511}, {257, 509, 127},
    {1, 300, 511}, {383, 1, 129}, {1537, 2600, 33},
};
#define NGEMM (int)(sizeof gemm_sizes / sizeof gemm_sizes[0])
static const char *const gemm_variants[][4] = {
    {NULL, NULL, NULL, NULL},
    {"TILEC_PERSIST", "0", NULL, NULL},
    {"TILEC_WS", "coop", NULL, NULL},
    {"TILEC_WS", "coop", "TILEC_PERSIST", "0"},
    /* the epilogue (emit_epilogue.c): whole tile, sub-tiles from registers, 32-column sub-tiles */
    {"TILEC_EPI", "0", NULL, NULL},
    {"TILEC_EPI", "regs", NULL, NULL},
    {"TILEC_EPI", "32", "TILEC_WS", "coop"},
    /* the forms before the seventh session's defaults: the combined-form epilogue loads and the
     * correctly rounded reciprocal; the split form without the lookahead */
    {"TILEC_EPI_LOAD", "combined", "TILEC_RCP", "rn"},
    {"TILEC_EPI_LOAD", "noahead", "TILEC_WS", "coop"},
    /* ping-pong: taken for a 4-warp tile (tests/gpu/pingpong), else the cooperative kernel */
    {"TILEC_WS", "pingpong", NULL, NULL},
    /* clusters of 2 (emit_cluster.c): odd tile counts along the pair's axis (1537 x 2600: 13 x 11
     * tiles, 1 x 300, 383 x 1) give pairs whose second tile is past the grid; the register-store
     * epilogue once with a cluster */
    {"TILEC_CLUSTER", "2x1", NULL, NULL},
    {"TILEC_CLUSTER", "1x2", NULL, NULL},
    {"TILEC_CLUSTER", "2x1", "TILEC_EPI", "regs"},
    /* the staging words by one cvt.rn.{bf16,f16}x2.f32 (emit_epilogue.c packed_source): the
     * non-WS and the cooperative kernel (the same bits as the two casts); a tile order of
     * 3-row groups (ragged groups at 13 tile rows) */
    {"TILEC_EPI_PACK", "1", NULL, NULL},
    {"TILEC_EPI_PACK", "1", "TILEC_WS", "coop"},
    {"TILEC_TILE_GROUP", "3", NULL, NULL},
    /* the next tile's first stages issued at the loop exit (tile_prefetch.c): with more tiles
     * than CTAs at 143 tiles, the last tile of each CTA (no next), K = 511 (a ragged last step),
     * K < BK (one step); with the packed staging words */
    {"TILEC_TILE_PREFETCH", "1", NULL, NULL},
    {"TILEC_TILE_PREFETCH", "1", "TILEC_EPI_PACK", "1"},
    /* fp8 promotion groups overlapped (emit_wgmma.c): group j's add under group j+1 (K = 511: a
     * ragged last k-step; K = 33, 63, 65: one k-step of zero-filled slices) */
    {"TILEC_PROMOTE_OVERLAP", "1", NULL, NULL},
    /* tanh and sigmoid by one tanh.approx.f32 (emit_elementwise.c; gelu6): the GELU epilogue with the
     * packed staging words, on the ring and on the cooperative kernel (bf16 output within 1e-2) */
    {"TILEC_TANH_APPROX", "1", "TILEC_EPI_PACK", "1"},
    {"TILEC_TANH_APPROX", "1", "TILEC_WS", "coop"},
    /* the scoped rule (gelu7, lib/narrow_store.h): the approximation only where the result reaches a
     * bf16 / f16 store, and with it the packed staging words */
    {"TILEC_TANH_APPROX", "2", NULL, NULL},
    {"TILEC_TANH_APPROX", "2", "TILEC_WS", "coop"},
    /* the TMA ring without a producer warpgroup where the default is cooperative (gemm_fp8.tile's
     * cutlass_gemm_fp8_tn: fp8 promote on two warpgroups) */
    {"TILEC_WS", "off", NULL, NULL},
};
#define NVARIANTS (int)(sizeof gemm_variants / sizeof gemm_variants[0])

/* Warp-specialized attention (emit_ws.c, docs/pipelines.md "Warp-specialized
 * attention"): cutlass_attn_fwd of attn.tile at D 64 / 128, CAUSAL 0 / 1,
 * ragged sequence lengths (Z, H, S), under each TILEC_ATTN_WS variant; the
 * longest length only under the last variant (the interpreter's time). */
/* the last: more 128-row tiles (9 x 16 = 144) than an H200 has SMs, so a persistent CTA (fa3's
 * form) runs two tiles; only under the variants marked `many` */
static const int64_t attn_sizes[][3] = {{1, 1, 1}, {1, 3, 127}, {2, 1, 129}, {1, 2, 1000}, {1, 1, 4097}, {2, 8, 1100}};
#define NATTN (int)(sizeof attn_sizes / sizeof attn_sizes[0])
#define ATTN_ROUND 1000 /* run_round's round index of attn_sizes[0] */
static const struct {
  const char *env, *value; /* the switch (NULL: the default form) */
  bool longest;            /* also at the longest length */
  int bn;                  /* the tile constant BN (0: the example's) */
  bool many;               /* also at the size of more tiles than SMs */
  const char *env2, *value2; /* a second switch with the first (NULL: none) */
  bool d256;                 /* also at D 256 (else the default form only) */
  const char *env3, *value3; /* a third switch (NULL: none) */
} attn_variants[] = {{NULL, NULL, false, 0, false},
                     {"TILEC_ATTN_WS", "producer", false, 0, false},
                     {"TILEC_ATTN_WS", "pingpong", true, 0, false},
                     /* FlashAttention-3's combination (emit_ws.c, emit_overlap.c) at its tile, BN 128,
                      * and at the example's (D128: BN 64, a 4-stage ring) */
                     {"TILEC_ATTN_WS", "fa3", true, 128, true},
                     {"TILEC_ATTN_WS", "fa3", false, 0, false},
                     /* the value dot a step late (emit_overlap.c) */
                     {"TILEC_ATTN_OVERLAP", "3", false, 0, false},
                     {"TILEC_ATTN_OVERLAP", "4", true, 0, false},
                     /* one program an SM (the default is two at D 128: route_pipeline) */
                     {"TILEC_ATTN_TWO", "0", false, 0, false},
                     /* the default kernel with its FlashAttention-3 form (passes/attn_form.c, D128) taking
                      * every launch, S >= 1: the launcher's pick of the form at every size */
                     {"TILEC_ATTN_FORM_MIN_S", "1", true, 0, true},
                     /* causal grids whose last heads run heaviest block first across them
                      * (lib/codegen/attn_order.c): the default span (at these sizes every head) and a span
                      * of 2 CTAs (at (1, 3, 127) the last 2 of 3 heads) at D 64 / 128 / 256; a span of 20
                      * (the last 3 of 16 heads at (2, 8, 1100): 9 x 16 CTAs) on the two-program kernel and
                      * on fa3's one-trip form (producer and consumers); full kernels keep the launch's ids */
                     {"TILEC_ATTN_ORDER", "1", false, 0, false, NULL, NULL, true},
                     {"TILEC_ATTN_ORDER", "2", false, 0, false, NULL, NULL, true},
                     {"TILEC_ATTN_ORDER", "20", false, 0, true, NULL, NULL, false},
                     {"TILEC_ATTN_ORDER", "20", false, 128, true, "TILEC_ATTN_WS", "fa3", false},
                     /* persistent kernels without a producer (TILEC_ATTN_PERSIST, route_pipeline): the next
                      * tile's first K/V stage and q by TMA at the loop's exit (=1), the stage alone (=3),
                      * neither (=2); 5 CTAs (TILEC_PERSIST_CTAS, the launch's cap) so every size runs
                      * several tiles a CTA (144 at (2, 8, 1100): 28 or 29 each); causal keeps the launch's
                      * grid (bench.py's rows check =1 at the CTAs that fit, 2048 tiles on 264 / 132) */
                     {"TILEC_ATTN_PERSIST", "1", false, 0, true, "TILEC_PERSIST_CTAS", "5", true},
                     {"TILEC_ATTN_PERSIST", "3", false, 0, false, "TILEC_PERSIST_CTAS", "5", true},
                     {"TILEC_ATTN_PERSIST", "2", false, 0, false, "TILEC_PERSIST_CTAS", "5", false},
                     /* the persistent form a D256 full kernel's launch picks by S (passes/attn_persist_form.c;
                      * the default variant above runs it at every size there, S <= 2048) with its bound at
                      * 1024: (1, 2, 1000) and the shorter ones run the form, (2, 8, 1100) and 4097 the kernel,
                      * both sides of the bound in one handle; 5 CTAs so the form runs several tiles a CTA */
                     {"TILEC_ATTN_PERSIST_MAX_S", "1024", true, 0, true, "TILEC_PERSIST_CTAS", "5", true},
                     /* fa3 with K and V of a stage on mbarriers of their own (TILEC_ATTN_KV_SPLIT=1, emit_ws.c
                      * "K and V apart"): at BN 128 (D 64 / 128), at the example's BN with D 256 (its 2-stage
                      * ring: the case it is for), the default kernel's fa3 form (D128, and D256 under the
                      * switch: passes/attn_form.c) at every S; =2 (fa3 on the 2-stage ring, K and V released
                      * together) at D 256.  (The interpreter's time: no 4097, (2, 8, 1100) at BN 128 only;
                      * bench/pending_attnd128.sh's `tilec run` adds D256 on 5 persistent CTAs.) */
                     {"TILEC_ATTN_KV_SPLIT", "1", false, 128, true, "TILEC_ATTN_WS", "fa3", false},
                     {"TILEC_ATTN_KV_SPLIT", "1", false, 0, false, "TILEC_ATTN_WS", "fa3", true},
                     {"TILEC_ATTN_KV_SPLIT", "1", false, 0, false, "TILEC_ATTN_FORM_MIN_S", "1", true},
                     {"TILEC_ATTN_KV_SPLIT", "2", false, 0, false, "TILEC_ATTN_WS", "fa3", true},
                     /* fa3's O through the tile's last ring stage (TILEC_ATTN_O_SLOT=1, emit_o_slot.c): the
                      * default kernel's fa3 form at every S (D128 and D256; full: persistent, the stage's
                      * V slot, and its K slot at D256; causal: not taken, the same kernel); the pending
                      * script runs it again on 5 CTAs (TILEC_PERSIST_CTAS: several tiles a CTA) */
                     {"TILEC_ATTN_O_SLOT", "1", true, 0, true, "TILEC_ATTN_FORM_MIN_S", "1", true},
                     /* the default's bound (twenty-eighth session: a tile of at most 10 steps takes the last
                      * stage, a longer one q's slot) at 3 steps, so the ragged sizes run both paths: the
                      * default kernel's form at every S on 5 CTAs (S <= 384 the stage, 1000 / 1100 / 4097 q's
                      * slot), and causal tiles from the counter (fa3 BN 128: row blocks of 1..33 steps, both
                      * paths in one CTA's tiles) */
                     {"TILEC_ATTN_O_SLOT_MAX", "3", true, 0, true, "TILEC_ATTN_FORM_MIN_S", "1", true, "TILEC_PERSIST_CTAS", "5"},
                     {"TILEC_ATTN_O_SLOT_MAX", "3", true, 128, true, "TILEC_ATTN_SCHED", "1", false, "TILEC_ATTN_WS", "fa3"},
                     /* causal tiles from a global atomic counter (TILEC_ATTN_SCHED, attn_sched.c): fa3 at BN 128
                      * (D128; D64 has no q by TMA: not taken), also at 4097 and 144 tiles; the default kernel's
                      * fa3 form at every S (D128 and D256) on 5 and 3 CTAs (TILEC_PERSIST_CTAS: up to 29 tiles
                      * a CTA), =2 (one section of every head).  Each size is a new launch of the same kernel:
                      * a counter the last CTA did not put back to zero would skip tiles (NaN rows) */
                     {"TILEC_ATTN_SCHED", "1", true, 128, true, "TILEC_ATTN_WS", "fa3", false},
                     {"TILEC_ATTN_SCHED", "1", false, 0, true, "TILEC_ATTN_FORM_MIN_S", "1", true, "TILEC_PERSIST_CTAS", "5"},
                     {"TILEC_ATTN_SCHED", "2", false, 0, true, "TILEC_ATTN_FORM_MIN_S", "1", true, "TILEC_PERSIST_CTAS", "3"},
                     /* iteration 0's value dot of P = 0 replaced by an empty group (TILEC_ATTN_SKIP0=1,
                      * emit_overlap.c): fa3 at BN 128 (D 64 / 128, also 4097 and 144 tiles: a persistent
                      * CTA's second tile starts its loop again), the default kernel's fa3 form at every S on
                      * 5 CTAs (several tiles a CTA) */
                     {"TILEC_ATTN_SKIP0", "1", true, 128, true, "TILEC_ATTN_WS", "fa3", false},
                     {"TILEC_ATTN_SKIP0", "1", false, 0, true, "TILEC_ATTN_FORM_MIN_S", "1", true, "TILEC_PERSIST_CTAS", "5"},
                     /* O through the last stage's K slot after "q empty" (TILEC_ATTN_O_SLOT_K=1, emit_o_slot.c): the
                      * default kernel's form at every S on 5 CTAs (the bounded slot: both paths in a CTA's tiles), and
                      * fa3 BN 128 with the counter (causal: the slot on every tile) */
                     {"TILEC_ATTN_O_SLOT_K", "1", true, 0, true, "TILEC_ATTN_FORM_MIN_S", "1", true, "TILEC_PERSIST_CTAS", "5"},
                     {"TILEC_ATTN_O_SLOT_K", "1", true, 128, true, "TILEC_ATTN_SCHED", "1", false, "TILEC_ATTN_WS", "fa3"},
                     /* the tile's q asked of L2 by fa3's producer at the tile's start (TILEC_ATTN_Q_PREFETCH=1,
                      * emit_q_tma.c): the default kernel's form at every S on 5 CTAs (several tiles a CTA, D128 and
                      * D256), and fa3 BN 128 with the counter (the tile taken, then its q prefetched) */
                     {"TILEC_ATTN_Q_PREFETCH", "1", true, 0, true, "TILEC_ATTN_FORM_MIN_S", "1", true, "TILEC_PERSIST_CTAS", "5"},
                     {"TILEC_ATTN_Q_PREFETCH", "1", true, 128, true, "TILEC_ATTN_SCHED", "1", false, "TILEC_ATTN_WS", "fa3"}};
#define NATTN_VARIANTS (int)(sizeof attn_variants / sizeof attn_variants[0])
/* attn_rope.tile's cutlass_attn_rope_fwd: its score dots on wgmma with the rotated k staged
 * each step and the prologue's loads by TMA (the default), those loads on the cp.async ring
 * (TILEC_PROLOGUE_TMA=0), the score dots on mma.sync (TILEC_STAGED_WGMMA=0); the ring's refill
 * at its own barrier with the value dot waited each step (TILEC_LATE_REFILL=0) or after the
 * score dot's issue (=2) instead of after the staged B's barrier (dot_plan.c late_refill_fits); two
 * staged slots and no ring barrier in the TMA form (TILEC_STAGED_DOUBLE=1); k rotated by fa3's producer
 * warpgroup (TILEC_ROPE_PRODUCER=1 with TILEC_ATTN_WS=fa3 at BN 128, D128 only: emit_rope.c) */
static const struct {
  const char *env, *value;
  bool longest;
  const char *env2, *value2; /* a second switch the variant needs, or NULL */
  int bn;                    /* the tile constant BN (0: the example's); set: D128 only */
  bool many;                 /* also at the size of more tiles than SMs */
} rope_variants[] = {{NULL, NULL, false, NULL, NULL, 0, false},
                     {"TILEC_PROLOGUE_TMA", "0", false, NULL, NULL, 0, false},
                     {"TILEC_STAGED_WGMMA", "0", false, NULL, NULL, 0, false},
                     {"TILEC_LATE_REFILL", "0", false, NULL, NULL, 0, false},
                     {"TILEC_LATE_REFILL", "2", false, NULL, NULL, 0, false},
                     /* two staged slots, no ring barrier in the TMA form (not measured yet) */
                     {"TILEC_STAGED_DOUBLE", "1", false, NULL, NULL, 0, false},
                     /* k rotated by fa3's producer (not run on a GPU yet), also at 4097 and on a persistent
                      * CTA's two tiles */
                     {"TILEC_ROPE_PRODUCER", "1", true, "TILEC_ATTN_WS", "fa3", 128, true}};
#define NROPE_VARIANTS (int)(sizeof rope_variants / sizeof rope_variants[0])

typedef struct tensor_buf {
  DLTensor dl_dev, dl_host;
  int64_t shape[4];
  size_t numel, bytes;
  CUdeviceptr dev;
  void *host, *back;
} tensor_buf;

static int failures, passes;

/* A round replayed dry (GPU_TEST_ATTN_ROUNDS): only its random draws, so that the rounds after it
 * get the data of a full run with the same seed. */
static bool dry_round;


/* One kernel, one size round.  Returns false on a failure. */
static bool run_round(tilec_program *p, tilec_kernel *k, int kidx, const char *file, int round) {
  const char *kname = tilec_program_kernel_name(p, kidx);
  int np = tilec_program_num_params(p, kidx);
  if (np < 0 || np > MAX_PARAMS) {
    printf("FAIL %s:%s: %d parameters\n", file, kname, np);
    return false;
  }
  tilec_param_info info[MAX_PARAMS];
  const char *syms[MAX_SYMS];
  int64_t symval[MAX_SYMS];
  int nsyms = 0;
  for (int i = 0; i < np; i++) {
    if (tilec_program_param(p, kidx, i, &info[i]) != TILEC_OK) {
      printf("FAIL %s:%s: no parameter info\n", file, kname);
      return false;
    }
    for (int d = 0; d < info[i].rank; d++)
      if (info[i].dim_symbol[d]) {
        int s = gpu_sym_index(syms, &nsyms, MAX_SYMS, info[i].dim_symbol[d]);
        if (s >= 0 && round >= ATTN_ROUND)
          symval[s] = attn_sizes[round - ATTN_ROUND][!strcmp(syms[s], "Z") ? 0 : !strcmp(syms[s], "H") ? 1 : 2];
        else if (s >= 0 && round < NROUNDS) symval[s] = round_sizes[round][s % 4];
        else if (s >= 0) symval[s] = !strcmp(syms[s], "M") ? gemm_sizes[round - NROUNDS][0]
                                     : !strcmp(syms[s], "N") ? gemm_sizes[round - NROUNDS][1]
                                     : !strcmp(syms[s], "K") ? gemm_sizes[round - NROUNDS][2] : 17;
      }
  }
  /* keep every tensor small enough for the interpreter */
  for (int i = 0; i < np; i++) {
    for (;;) {
      int64_t numel = 1;
      int biggest = -1;
      for (int d = 0; d < info[i].rank; d++) {
        int64_t v = info[i].dim_symbol[d] ? symval[gpu_sym_index(syms, &nsyms, MAX_SYMS, info[i].dim_symbol[d])] : info[i].dim_value[d];
        numel *= v;
        if (info[i].dim_symbol[d]) {
          int s = gpu_sym_index(syms, &nsyms, MAX_SYMS, info[i].dim_symbol[d]);
          if (biggest < 0 || symval[s] > symval[biggest]) biggest = s;
        }
      }
      if (numel <= MAX_ELEMS || biggest < 0 || symval[biggest] <= 1) break;
      symval[biggest] = symval[biggest] / 2 | 1; /* stays odd */
    }
  }
  char sizes[256] = "";
  for (int s = 0; s < nsyms; s++)
    snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%s=%lld", s ? " " : "", syms[s], (long long)symval[s]);

  if (dry_round) { /* the draws run_round's fills would make: one a scalar, two an element */
    for (int i = 0; i < np; i++) {
      if (!info[i].is_tensor) {
        (void)gpu_rand();
        continue;
      }
      uint64_t numel = 1;
      for (int d = 0; d < info[i].rank; d++)
        numel *= (uint64_t)(info[i].dim_symbol[d] ? symval[gpu_sym_index(syms, &nsyms, MAX_SYMS, info[i].dim_symbol[d])]
                                                  : info[i].dim_value[d]);
      if (!(tilec_program_param_flags(p, kidx, i) & TILEC_PARAM_ZEROED) && info[i].written != 1) gpu_rand_skip(2 * numel);
    }
    return true;
  }
  tensor_buf tb[MAX_PARAMS];
  tilec_arg dargs[MAX_PARAMS], hargs[MAX_PARAMS];
  memset(tb, 0, sizeof tb);
  bool ok = true;
  for (int i = 0; i < np; i++) {
    if (!info[i].is_tensor) {
      /* scalars: ints small positive, floats in (0.05, 1) */
      if (!strcmp(info[i].dtype, "i64")) {
        dargs[i].kind = TILEC_ARG_I64;
        dargs[i].u.i64 = 1 + (int64_t)(gpu_rand() % 8);
      } else if (gpu_dtype_is_float(info[i].dtype)) {
        dargs[i].kind = TILEC_ARG_F32;
        dargs[i].u.f32 = (float)gpu_rand_uniform(0.05, 1.0);
      } else {
        dargs[i].kind = TILEC_ARG_I32;
        dargs[i].u.i32 = 1 + (int32_t)(gpu_rand() % 8);
      }
      hargs[i] = dargs[i];
      continue;
    }
    tensor_buf *t = &tb[i];
    t->numel = 1;
    for (int d = 0; d < info[i].rank; d++) {
      t->shape[d] = info[i].dim_symbol[d] ? symval[gpu_sym_index(syms, &nsyms, MAX_SYMS, info[i].dim_symbol[d])] : info[i].dim_value[d];
      t->numel *= (size_t)t->shape[d];
    }
    t->bytes = t->numel * (size_t)gpu_dtype_bytes(info[i].dtype);
    size_t alloc = t->bytes ? t->bytes : 1;
    t->host = malloc(alloc);
    t->back = malloc(alloc);
    /* @zeroed tensors (attn_decode_fused's Count): zeros before a launch, as the kernel's contract
     * says (compared after: attn_decode_fused leaves them 0) */
    if (tilec_program_param_flags(p, kidx, i) & TILEC_PARAM_ZEROED) memset(t->host, 0, alloc);
    else if (info[i].written == 1) memset(t->host, 0xFF, alloc); /* NaN bytes */
    /* written == 2 (updated by atomics only): random contents, the same on both sides */
    else gpu_fill_random(t->host, t->numel, info[i].dtype);
    gpu_check(gpu.cuMemAlloc(&t->dev, alloc), "cuMemAlloc");
    gpu_check(gpu.cuMemcpyHtoD(t->dev, t->host, alloc), "cuMemcpyHtoD");
    DLTensor base = {.ndim = info[i].rank, .dtype = info[i].dl_dtype, .shape = t->shape};
    t->dl_dev = base;
    t->dl_dev.data = (void *)(uintptr_t)t->dev;
    t->dl_dev.device = (DLDevice){kDLCUDA, 0};
    t->dl_host = base;
    t->dl_host.data = t->host;
    t->dl_host.device = (DLDevice){kDLCPU, 0};
    dargs[i].kind = hargs[i].kind = TILEC_ARG_TENSOR;
    dargs[i].u.tensor = &t->dl_dev;
    hargs[i].u.tensor = &t->dl_host;
  }
  double t0 = gpu_now_ms();
  tilec_status st = tilec_kernel_launch(k, dargs, np, NULL);
  /* sizes the kernel's require() refuses (docs/language.md 6.1: decode attention's G <= GM at these
   * generic sizes): the interpreter must refuse them with the same diagnostic; nothing to compare */
  bool refused = st == TILEC_ERROR_LAUNCH && strstr(tilec_kernel_error(k), "error: require failed in kernel '");
  if (st != TILEC_OK && !refused) {
    printf("FAIL %s:%s [%s]: launch: %s: %s\n", file, kname, sizes, tilec_status_string(st), tilec_kernel_error(k));
    ok = false;
  } else if (!refused) {
    gpu_check(gpu.cuCtxSynchronize(), "kernel execution (cuCtxSynchronize)");
  }
  double gpu_ms = gpu_now_ms() - t0;
  if (ok) {
    t0 = gpu_now_ms();
    st = tilec_interpret(p, kname, hargs, np);
    if (refused && (st != TILEC_ERROR_LAUNCH || !strstr(tilec_program_log(p), tilec_kernel_error(k)))) {
      printf("FAIL %s:%s [%s]: the launcher refused (%s), the interpreter %s\n", file, kname, sizes,
             tilec_kernel_error(k), st == TILEC_OK ? "ran" : tilec_program_log(p));
      ok = false;
    } else if (refused) {
      printf("  refused by both %s:%s [%s] (its require)\n", file, kname, sizes);
    } else if (st != TILEC_OK) {
      printf("FAIL %s:%s [%s]: interpreter: %s\n%s\n", file, kname, sizes, tilec_status_string(st), tilec_program_log(p));
      ok = false;
    }
  }
  double interp_ms = gpu_now_ms() - t0;
  for (int i = 0; ok && !refused && i < np; i++) {
    if (!info[i].is_tensor) continue;
    tensor_buf *t = &tb[i];
    if (t->bytes) gpu_check(gpu.cuMemcpyDtoH(t->back, t->dev, t->bytes), "cuMemcpyDtoH");
    gpu_cmp c;
    /* an f32 output computed from bf16-rounded values of exp2: split-KV
     * decode's partial outputs are sums of cast<bf16>(p) * v / l, p =
     * exp2(...) <= 1.  The GPU's ex2.approx and the interpreter's exp2
     * differ by an ulp of f32, and when p lies that close to a bf16 rounding
     * boundary the two round to neighbouring bf16 values: the partial moves
     * by up to 2^-8 * |v| / l, far above f32's tolerance (H200: 70-128
     * elements of one row off by 6e-5..4e-3 in 4 of 6 runs at S = 33, each
     * run with fresh data; no hazard in the PTX).  So they take bf16's. */
    double rtol = !strncmp(kname, "attn_decode", 11) && !strcmp(info[i].name, "Opart") ? 1e-2 : -1;
    if (!gpu_compare_rtol(t->back, t->host, t->numel, info[i].dtype, rtol, &c)) {
      printf("FAIL %s:%s [%s] %s (%s, %zu elements): %zu mismatches, %zu not written by the GPU; "
             "first at %zu: gpu %.9g, interpreter %.9g; max abs err %.3g\n",
             file, kname, sizes, info[i].name, info[i].dtype, c.n, c.mismatches, c.unwritten, c.first_bad,
             c.first_got, c.first_want, c.max_abs_err);
      ok = false;
    } else if (info[i].written) {
      printf("  ok %s:%s [%s] %s: %zu elements, max abs err %.3g, max rel err %.3g%s\n", file, kname, sizes,
             info[i].name, c.n, c.max_abs_err, c.max_rel_err,
             c.both_unwritten ? " (some elements written by neither: the kernel leaves them)" : "");
    }
  }
  if (ok && !refused) printf("PASS %s:%s [%s] (gpu %.1f ms incl. first-launch checks, interpreter %.1f ms)\n", file, kname, sizes,
                 gpu_ms, interp_ms);
  for (int i = 0; i < np; i++) {
    if (!info[i].is_tensor) continue;
    gpu.cuMemFree(tb[i].dev);
    free(tb[i].host);
    free(tb[i].back);
  }
  return ok;
}

/* GPU_TEST_ATTN_ROUNDS=C:R[,C:R...]: only the variant rounds of causal C at attn_sizes[R] run; the
 * others are replayed dry (their draws of the random stream, nothing launched), so TILEC_SEED gives a
 * failed round its data again in seconds (bench/pending_ropefa3.sh).  Unset: every round runs. */
static bool attn_round_dry(int causal, int r) {
  const char *only = getenv("GPU_TEST_ATTN_ROUNDS");
  if (!only || !*only) return false;
  char want[16];
  snprintf(want, sizeof want, "%d:%d", causal, r);
  size_t n = strlen(want);
  for (const char *w = only; w && *w; w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL)
    if (!strncmp(w, want, n) && (w[n] == ',' || !w[n])) return false;
  return true;
}

/* attn.tile's cutlass_attn_fwd under the TILEC_ATTN_WS and TILEC_ATTN_OVERLAP
 * variants (read when the program compiles; in the cache key); attn_rope.tile's
 * cutlass_attn_rope_fwd under rope_variants. */
static void run_attn_ws(const char *dir, const char *name) {
  bool rope = !strcmp(name, "attn_rope.tile");
  const char *kname = rope ? "cutlass_attn_rope_fwd" : "cutlass_attn_fwd";
  for (int v = 0; v < (rope ? NROPE_VARIANTS : NATTN_VARIANTS); v++) {
    const char *env = rope ? rope_variants[v].env : attn_variants[v].env;
    const char *val = rope ? rope_variants[v].value : attn_variants[v].value;
    bool longest = rope ? rope_variants[v].longest : attn_variants[v].longest;
    int bn = rope ? rope_variants[v].bn : attn_variants[v].bn;
    bool many = rope ? rope_variants[v].many : attn_variants[v].many;
    const char *env2 = rope ? rope_variants[v].env2 : attn_variants[v].env2;
    const char *val2 = rope ? rope_variants[v].value2 : attn_variants[v].value2;
    bool d256 = !rope && attn_variants[v].d256;
    const char *env3 = rope ? NULL : attn_variants[v].env3;
    const char *val3 = rope ? NULL : attn_variants[v].value3;
    /* GPU_TEST_ATTN_VARIANTS=WORD[,WORD...]: only the variants whose switch or value contains a WORD
     * ("default": none) */
    const char *only = getenv("GPU_TEST_ATTN_VARIANTS");
    bool picked = !only || !*only;
    for (const char *w = only; !picked && w && *w; w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL) {
      char word[64];
      size_t n = strcspn(w, ",");
      snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), w);
      picked = word[0] && (strstr(env ? env : "default", word) || (val && strstr(val, word)));
    }
    if (!picked) continue;
    if (env) setenv(env, val, 1);
    if (env2) setenv(env2, val2, 1);
    if (env3) setenv(env3, val3, 1);
    /* D 256 (one program an SM, BN 64: 196 KB of shared memory) under the default form and the
     * variants marked d256 only */
    for (int c = 0; c < ((env && !d256) || rope ? 4 : 6); c++) {
      int D = c >= 4 ? 256 : c & 1 ? 128 : 64, causal = c >= 4 ? c - 4 : c >> 1;
      if (rope && bn && D != 128) continue; /* (the rope variants with a BN: D128's forms) */
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", dir, name);
      tilec_options *o = NULL;
      tilec_program *p = NULL;
      tilec_status st = tilec_options_create(&o);
      if (st == TILEC_OK) st = tilec_options_define(o, "D", D);
      if (st == TILEC_OK) st = tilec_options_define(o, "CAUSAL", causal);
      if (st == TILEC_OK && bn) st = tilec_options_define(o, "BN", bn);
      if (st == TILEC_OK) st = tilec_program_create_from_file(&p, path, o);
      if (st == TILEC_OK) st = tilec_program_compile(p, TILEC_STAGE_IR);
      tilec_options_destroy(o);
      int ki = -1;
      for (int i = 0; st == TILEC_OK && i < tilec_program_num_kernels(p); i++)
        if (!strcmp(tilec_program_kernel_name(p, i), kname)) ki = i;
      bool live = false; /* (a kernel whose rounds are all replayed dry is not loaded) */
      for (int r = 0; r < NATTN; r++) live = live || !attn_round_dry(causal, r);
      if (!live && ki >= 0) {
        for (int r = 0; r < NATTN; r++) {
          if ((r == NATTN - 2 && !longest) || (r == NATTN - 1 && !many)) continue;
          dry_round = true;
          run_round(p, NULL, ki, name, ATTN_ROUND + r);
          dry_round = false;
        }
        tilec_program_destroy(p);
        continue;
      }
      tilec_kernel *k = ki >= 0 ? gpu_load_kernel(p, name, kname) : NULL;
      if (!k) {
        printf("FAIL %s:%s D=%d CAUSAL=%d %s=%s: %s\n", name, kname, D, causal, env ? env : "",
               env ? val : "", p ? tilec_program_log(p) : tilec_status_string(st));
        failures++;
        tilec_program_destroy(p);
        continue;
      }
      char bns[32] = "";
      if (bn) snprintf(bns, sizeof bns, " BN=%d", bn);
      printf("-- %s:%s D=%d CAUSAL=%d%s, %s=%s%s%s%s%s\n", name, kname, D, causal, bns, env ? env : "",
             env ? val : "(default)", env2 ? " " : "", env2 ? env2 : "", env2 ? "=" : "", env2 ? val2 : "");
      if (env3) printf("   (with %s=%s)\n", env3, val3);
      for (int r = 0; r < NATTN; r++) {
        if ((r == NATTN - 2 && !longest) || (r == NATTN - 1 && !many)) continue;
        dry_round = attn_round_dry(causal, r);
        bool ran = !dry_round;
        if (run_round(p, k, ki, name, ATTN_ROUND + r)) passes += ran;
        else failures++;
        dry_round = false;
      }
      tilec_kernel_destroy(k);
      tilec_program_destroy(p);
    }
    if (env) unsetenv(env);
    if (env2) unsetenv(env2);
    if (env3) unsetenv(env3);
  }
}

static void run_file(const char *dir, const char *name) {
  /* GPU_TEST_VARIANTS_ONLY=1 (a pending script's run of one attention mechanism): attn.tile's and
   * attn_rope.tile's variant rounds alone (GPU_TEST_ATTN_VARIANTS), not every kernel's plain rounds
   * first -- half of such a run's interpreter time, before the rounds it is for */
  const char *vo = getenv("GPU_TEST_VARIANTS_ONLY");
  if (vo && *vo == '1' && (!strcmp(name, "attn.tile") || !strcmp(name, "attn_rope.tile"))) {
    run_attn_ws(dir, name);
    return;
  }
  tilec_program *p = gpu_open_program(dir, name, TILEC_STAGE_IR);
  if (!p) {
    failures++;
    return;
  }
  for (int ki = 0; ki < tilec_program_num_kernels(p); ki++) {
    tilec_kernel *k = gpu_load_kernel(p, name, tilec_program_kernel_name(p, ki));
    if (!k) {
      failures++;
      continue;
    }
    for (int r = 0; r < NROUNDS; r++) {
      if (run_round(p, k, ki, name, r)) passes++;
      else failures++;
    }
    tilec_kernel_destroy(k);
  }
  tilec_program_destroy(p);
  if (!strcmp(name, "attn.tile") || !strcmp(name, "attn_rope.tile")) run_attn_ws(dir, name);
  if (strcmp(name, "gemm.tile") && strcmp(name, "gemm_fp8.tile") && strcmp(name, "gemm_bias_gelu.tile") &&
      strcmp(name, "quant_int8_gemm.tile") && strcmp(name, "gemm_tf32.tile") && strcmp(name, "gemm_residual.tile"))
    return;
  /* the cutlass GEMMs again, at the GEMM sizes, under each variant (the
   * switches are read when the program compiles, and are in the cache key) */
  /* GPU_TEST_VARIANTS=WORD: only the variants whose first switch's name contains WORD (a
   * device run of one mechanism; "default" is the variant without switches); NAME=VALUE: only
   * those whose first switch is exactly that */
  const char *only = getenv("GPU_TEST_VARIANTS");
  for (int v = 0; v < NVARIANTS; v++) {
    char first[96];
    snprintf(first, sizeof first, "%s%s%s", gemm_variants[v][0] ? gemm_variants[v][0] : "default",
             only && strchr(only, '=') ? "=" : "", only && strchr(only, '=') && gemm_variants[v][1] ? gemm_variants[v][1] : "");
    if (only && *only && (strchr(only, '=') ? strcmp(first, only) != 0 : !strstr(first, only))) continue;
    /* a switch the whole process was started with (the pending scripts' examples-wide runs) is
     * put back after the variant */
    const char *saved[4] = {NULL, NULL, NULL, NULL};
    for (int e = 0; e < 4 && gemm_variants[v][e]; e += 2) {
      const char *old = getenv(gemm_variants[v][e]);
      saved[e] = old ? strdup(old) : NULL;
      setenv(gemm_variants[v][e], gemm_variants[v][e + 1], 1);
    }
    p = gpu_open_program(dir, name, TILEC_STAGE_IR);
    for (int ki = 0; p && ki < tilec_program_num_kernels(p); ki++) {
      const char *kn = tilec_program_kernel_name(p, ki);
      if (!strstr(kn, "cutlass")) continue;
      tilec_kernel *k = gpu_load_kernel(p, name, kn);
      if (!k) {
        failures++;
        continue;
      }
      printf("-- %s:%s, %s=%s %s%s%s\n", name, kn, gemm_variants[v][0] ? gemm_variants[v][0] : "default",
             gemm_variants[v][1] ? gemm_variants[v][1] : "", gemm_variants[v][2] ? gemm_variants[v][2] : "",
             gemm_variants[v][2] ? "=" : "", gemm_variants[v][3] ? gemm_variants[v][3] : "");
      for (int r = 0; r < NGEMM; r++) {
        if (run_round(p, k, ki, name, NROUNDS + r)) passes++;
        else failures++;
      }
      tilec_kernel_destroy(k);
    }
    if (!p) failures++;
    tilec_program_destroy(p);
    for (int e = 0; e < 4 && gemm_variants[v][e]; e += 2) {
      if (saved[e]) setenv(gemm_variants[v][e], saved[e], 1);
      else unsetenv(gemm_variants[v][e]);
      free((void *)saved[e]);
    }
  }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : getenv("TILEC_EXAMPLES");
  if (!dir) dir = TILEC_SOURCE_DIR "/examples";
  int rc = gpu_init();
  if (rc) return rc;
  gpu_seed();
  int files = gpu_each_tile_file(dir, run_file);
  if (files < 0) return 1;
  printf("%d example files, %d kernel rounds passed, %d failed\n", files, passes, failures);
  if (files == 0) {
    printf("FAIL: no .tile files in %s\n", dir);
    return 1;
  }
  return failures ? 1 : 0;
}
