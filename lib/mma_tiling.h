/* mma_tiling.h: tensor-core instruction and warp tiling choice for a dot's
 * CTA tile, by a documented cost model, plus the "remap" view that expresses
 * one instruction tile in pieces of another (m16n16k16 = two m16n8k16, ...).
 *
 * Pure functions: no LLVM, no CUDA, no allocation, no printing.  Cost model
 * and tables: docs/mma_tiling.md.
 *
 * Instructions (checked facts):
 *   mma.sync  m16n8k16 f16/bf16 (sm_80+), m16n8k32 e4m3/e5m2 (sm_89+)
 *   wmma      m16n16k16, m32n8k16, m8n32k16 f16 (sm_70+) / bf16 (sm_80+); no fp8
 *   wgmma     m64nNk16 f16/bf16, m64nNk32 e4m3/e5m2, N a multiple of 8 up to
 *             256; sm_90a only; issued by a warpgroup (4 warps, 128 threads)
 * Accumulators are f32 throughout (one register per accumulator element).
 *
 * A tiling splits the CTA tile [M, N] over `units` (warps; warpgroups for
 * wgmma) as units_m x units_n, each unit owning [sub_m, sub_n] = [M/units_m,
 * N/units_n], sub_m a multiple of the instruction m and sub_n of its n; K
 * must be a multiple of the instruction k.  When units_m*units_n < units the
 * remaining units replicate the work (replication = units/(units_m*units_n)),
 * as tl_layout_mma's replicated warps do; the model penalizes it first. */
#ifndef TILEC_MMA_TILING_H
#define TILEC_MMA_TILING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

typedef enum tl_mma_family {
  TL_MMA_SYNC = 0, /* mma.sync.aligned, warp level, fragments via ldmatrix */
  TL_MMA_WMMA,     /* wmma.mma.sync, warp level, opaque fragment layouts */
  TL_MMA_WGMMA     /* wgmma.mma_async, warpgroup level, operands read from shared memory */
} tl_mma_family;

typedef struct tl_mma_instr {
  int32_t family; /* tl_mma_family */
  int32_t m, n, k;
} tl_mma_instr;

typedef struct tl_mma_problem {
  int32_t M, N, K;        /* the dot's CTA tile: [M,K] x [K,N] -> [M,N] */
  tl_dtype dtype;         /* operand type: TL_F16, TL_BF16, TL_F8E4M3, TL_F8E5M2 */
  int32_t warps;          /* warps of the CTA */
  int32_t sm;             /* 80, 86, 89, 90, ... */
  bool arch_specific;     /* the "a" of sm_90a (wgmma needs it) */
  int32_t acc_reg_budget; /* most f32 accumulator registers per thread; 0 = 128 */
} tl_mma_problem;

/* 128 = a 128x128 f32 accumulator over 4 warps (16384 / 128 threads): the
 * classic Ampere/Hopper tile, leaving half of the 255 registers a thread can
 * have for operand fragments, addresses and the epilogue. */
#define TL_MMA_DEFAULT_ACC_BUDGET 128

/* "sm_80", "sm_90a" -> sm, arch_specific; false if not of that form. */
bool tl_mma_parse_arch(const char *arch, int32_t *sm, bool *arch_specific);
/* "mma.sync.m16n8k16", "wmma.m32n8k16", "wgmma.m64n128k16". */
void tl_mma_instr_str(tl_mma_instr in, char *buf, size_t n);
/* NULL if the instruction exists for p's dtype and arch, else a static reason. */
const char *tl_mma_instr_unavailable(const tl_mma_problem *p, tl_mma_instr in);

typedef struct tl_mma_tiling {
  tl_mma_instr instr;
  int32_t unit_threads;     /* 32 (warp) or 128 (warpgroup) */
  int32_t units;            /* warps, or warpgroups for wgmma */
  int32_t units_m, units_n;
  int32_t sub_m, sub_n;     /* one unit's tile */
  int32_t replication;      /* units / (units_m * units_n) */
  /* ---- model quantities, per CTA over the whole K (replicas included) ---- */
  int32_t acc_regs;         /* f32 accumulators per thread: sub_m*sub_n / unit_threads */
  int32_t frag_regs;        /* registers per thread for one k-step's A and B fragments (0: wgmma) */
  int64_t mma_instrs;       /* MMA instructions issued */
  int64_t hw_mmas;          /* work in m16n8k16 (fp8: m16n8k32) equivalents */
  int64_t ldmatrix_mats;    /* shared->register fragment loads in 8x8 b16 matrices (128 B); 0: wgmma */
  int64_t ldmatrix_instrs;  /* ldmatrix instructions (.x4, or .x2 for a lone n8 B fragment) */
  int64_t smem_operand_bytes; /* operand bytes read from shared memory: units*(sub_m+sub_n)*K*eb */
  double loads_per_mma;     /* ldmatrix.x4 equivalents (ldmatrix_mats / 4) per hw_mma */
  int32_t a_reuse, b_reuse; /* MMAs per loaded A fragment (sub_n/n), per B fragment (sub_m/m) */
} tl_mma_tiling;

/* Fill t for instruction `in` and units_m x units_n on p.  NULL when the
 * tiling is valid (instruction available, exact cover, units_m*units_n
 * divides the units, K a multiple of k, accumulators within the budget),
 * else a static reason; t is filled as far as it could be. */
const char *tl_mma_evaluate(const tl_mma_problem *p, tl_mma_instr in, int32_t units_m,
                            int32_t units_n, tl_mma_tiling *t);

/* The model's order: negative when a is better than b, 0 when equal.  Keys,
 * in order: replication (fewer), family (wgmma, then mma.sync, then wmma),
 * smem_operand_bytes (fewer: operand re-use), instructions issued
 * (mma_instrs + ldmatrix_instrs, fewer), units_m (more), instr.n (larger),
 * instr.m (larger). */
int tl_mma_compare(const tl_mma_tiling *a, const tl_mma_tiling *b);

/* Every valid tiling of p (all instructions, all units_m x units_n): the
 * count; the first `cap` are written to out (out may be NULL with cap 0). */
int32_t tl_mma_enumerate(const tl_mma_problem *p, tl_mma_tiling *out, int32_t cap);

/* ---- remap view ------------------------------------------------------------------ */
typedef struct tl_mma_remap {
  tl_mma_instr piece;   /* the instruction the block is expressed in */
  bool transposed;      /* pieces compute D^T = B^T A^T: the block's M runs along the piece's n */
  int32_t count_m, count_n, count_k; /* pieces along the block's M, N, K */
  char text[192];
} tl_mma_remap;

/* Express an m x n x k block as a grid of `piece` instructions, directly
 * when piece.m | m, piece.n | n, piece.k | k, else transposed when piece.m | n
 * and piece.n | m.  False when neither works. */
bool tl_mma_remap_block(int32_t m, int32_t n, int32_t k, tl_mma_instr piece, tl_mma_remap *out);

/* The mma.sync instruction that is the hardware unit for a dtype:
 * m16n8k16 for 16-bit operands, m16n8k32 for fp8. */
tl_mma_instr tl_mma_base_instr(tl_dtype dtype);

/* The N of one wgmma for a dot of N columns (N a multiple of 8 up to 256):
 * N itself, or N/2 for i8 when N is not an integer wgmma shape
 * (m64nNk32.s32.s8.s8: N = 8, 24 or a multiple of 16 up to 224, PTX ISA; so
 * 256 = two m64n128k32).  0 when none fits. */
int32_t tl_wgmma_instr_n(tl_dtype dtype, int32_t N);

typedef struct tl_mma_choice {
  bool found;
  tl_mma_tiling best;
  int32_t candidates;   /* valid tilings compared */
  tl_mma_remap remap;   /* best.instr in base mma.sync pieces (per warp for wgmma) */
  char reason[768];     /* for --explain */
} tl_mma_choice;

/* The best tiling under tl_mma_compare.  False (reason says why) when none
 * is valid, e.g. fp8 before sm_89 or an accumulator over the budget. */
bool tl_mma_choose(const tl_mma_problem *p, tl_mma_choice *out);

#endif
