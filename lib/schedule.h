/* schedule.h: the decisions of the main-loop scheduling passes, recorded for
 * codegen.  Passes decide, codegen follows: every field here is read by
 * lib/codegen (cg_make_plan and the dot emitters), so what --explain prints
 * is what the kernel does.
 *
 *   mma_remap      -> instr, wgmma_n, warps_m, warps_n (lib/mma_tiling.h)
 *   smem_swizzle   -> swizzle_bytes[], pad_bytes[]     (lib/smem.h)
 *   swpipe         -> streamed[], stages
 *   ldmatrix_sched -> lookahead
 *
 * A dot with no entry (f->sched NULL, or a pass disabled) gets the plain
 * behaviour for the fields that pass owns: default warp tiling, padded
 * (unswizzled) operand staging, no streaming (operands staged from registers
 * each iteration), no fragment lookahead.  That is what makes each pass's own
 * contribution measurable on/off (--disable-pass=NAME). */
#ifndef TILEC_SCHEDULE_H
#define TILEC_SCHEDULE_H

#include "ir.h"

/* Field values (decisions of the scheduling-passes engineer):
 *   instr: 0 = unset (codegen default), else TL_SCHED_MMA_*: only the
 *     mma.sync instructions codegen implements are ever recorded.
 *   swizzled && swizzle_bytes[i] == 0: rows padded by pad_bytes[i] (0 = plain);
 *     swizzle_bytes[i] != 0: codegen's XOR of the 16-byte chunk index (chunk
 *     c of row r at c ^ f(r), docs/pipelines.md), which is lib/smem's mode
 *     min(row bytes, 128) up to whole 128-byte rows; the recorded mode is
 *     always that one.
 *   conflicts[i][0]: sum over the warp accesses that write the tile once in
 *     16-byte chunks (the cp.async copy); conflicts[i][1]: over the
 *     ldmatrix.x4 that read every fragment once (lib/smem.h's model).
 *   text form (lib/ir_print.c): a trailing `sched(...)` on the dot, one group
 *     per pass that ran: `mma=m16n8k16 warps=4x2`, `swizzle=128,128 [pad=16,16]
 *     conflicts=0/0,0/0`, `stream=a,b|a|b|none stages=3`, `lookahead|nolookahead`. */
enum { TL_SCHED_INSTR_NONE = 0, TL_SCHED_MMA_M16N8K16 = 1, TL_SCHED_MMA_M16N8K32 = 2, TL_SCHED_MMA_WGMMA = 3, TL_SCHED_MMA_M16N8K8 = 4 };
/* the mma.sync instruction of k (16, 32, or 8: tf32) */
static inline int tl_sched_mma_sync_of_k(int k) {
  return k == 32 ? TL_SCHED_MMA_M16N8K32 : k == 8 ? TL_SCHED_MMA_M16N8K8 : TL_SCHED_MMA_M16N8K16;
}

/* TL_SCHED_MMA_WGMMA (sm_90a, 16-bit operands or 8-bit ones both K-major,
 * both streamed): one wgmma.mma_async.m64nNk16 (m64nNk32 for 8-bit) per
 * warpgroup, 64-row block and k slice (32 bytes of a row), N =
 * wgmma_n; warps_m = all warps, warps_n = 1 (the accumulator layout that
 * wgmma produces: warp w of a warpgroup holds rows 16w..16w+15 of its 64).
 * Codegen follows it when both operands stream through swizzled ring slots
 * (emit_wgmma.c); otherwise it emits mma.sync with the same warp tiling.
 * Text form: `mma=wgmma_m64n256k16` (`k32` for 8-bit operands, `k8` for
 * tf32; the parser takes any, the operand type decides). */
static inline const char *tl_sched_instr_name(int instr) {
  return instr == TL_SCHED_MMA_M16N8K16 ? "m16n8k16"
         : instr == TL_SCHED_MMA_M16N8K32 ? "m16n8k32"
         : instr == TL_SCHED_MMA_M16N8K8  ? "m16n8k8"
         : instr == TL_SCHED_MMA_WGMMA    ? "wgmma"
                                          : NULL;
}

typedef struct tl_dot_sched {
  int32_t op;            /* the dot's op id */
  bool remapped;         /* mma_remap ran for it */
  int instr;             /* TL_SCHED_MMA_*: mma.sync m16n8k16 / m16n8k32, or wgmma */
  int wgmma_n;           /* TL_SCHED_MMA_WGMMA: N of one wgmma.m64nNk16 */
  int warps_m, warps_n;  /* warp tiling of the CTA tile; 0 = codegen default */
  bool swizzled;         /* smem_swizzle ran for it */
  int swizzle_bytes[2];  /* operand a, b: 0 (none), 32, 64, 128 */
  int pad_bytes[2];      /* row padding when not swizzled */
  int conflicts[2][2];   /* [operand][0 = store side, 1 = ldmatrix side]: static bank conflicts */
  bool pipelined;        /* swpipe ran for it */
  bool streamed[2];      /* operand copied global->shared by cp.async in a ring */
  int prologue[2];       /* operand computed from this many loads that stream through the ring
                          * (an operand prologue: read back from the slot, the code runs in registers) */
  int stages;            /* ring depth; 1 = no software pipelining */
  bool scheduled;        /* ldmatrix_sched ran for it */
  bool lookahead;        /* ldmatrix of k-slice i+1 issued before the mma of slice i */
} tl_dot_sched;

typedef struct tl_sched {
  TL_VEC(tl_dot_sched) dots;
} tl_sched;

/* The entry of dot `op`, created (zeroed, op set) when `create`; NULL when
 * absent and !create.  Lives in f->ctx's arena; f->sched points at the table.
 * The pointer is valid until the next call that creates an entry. */
tl_dot_sched *tl_sched_dot(tl_func *f, int32_t op, bool create);

/* Scalar v can be computed for any iteration of loop L from its induction
 * variable alone: the iv, values from outside L, integer constants, scalar
 * elementwise ops of those (what codegen re-evaluates for a future
 * iteration's copy). */
bool tl_scalar_from_iv(tl_func *f, int32_t v, int32_t L);

/* The stream rule (docs/pipelines.md), one copy for swpipe and codegen: the
 * load op that operand `which` of dot D can stream from through a cp.async
 * ring of D's loop, or -1 with the reason in *why.  *k_contiguous: the
 * operand's rows run along K in shared memory (A, or a trans'd B).  An 8-bit
 * B kept [K][N] needs allow_kn8 (codegen's column-paired accumulator).
 * uses: tl_count_uses(f). */
/* Dot D's B is 8-bit, kept [K][N] (not trans), and mma_remap chose wgmma for
 * it: codegen streams it [K][N] and transposes each k-step through shared
 * memory into a K-major buffer that wgmma reads (docs/pipelines.md "8-bit B
 * [K][N] on wgmma"). */
bool tl_dot_wgmma_kn8(tl_func *f, int32_t D);
int32_t tl_stream_source(tl_func *f, int32_t D, int which, const int32_t *uses, bool allow_kn8,
                         bool *k_contiguous, const char **why);

/* Operand prologues (docs/pipelines.md "Operand prologues").  The loads of
 * dot D's loop that operand `which` is computed from by elementwise code
 * (elementwise ops, casts, splat / broadcast / expand_dims, iota, constants,
 * values from outside the loop and scalars from the iv), each a view
 * tl_prologue_view accepts: their count (at most max, ids in loads[]), or -1
 * with the reason (also for an operand that is itself a load: the stream
 * rule's).  On by default; TILEC_PROLOGUE=0 turns them off. */
int tl_prologue_loads(tl_func *f, int32_t D, int which, int32_t *loads, int max, const char **why);
/* The same, and where a refusal stops (*stop: the op whose value the rule refuses, -1 none): for diagnostics. */
int tl_prologue_refusal(tl_func *f, int32_t D, int which, int32_t *loads, int max, const char **why, int32_t *stop);
/* A 16-bit A that an operand prologue computes, in its fragment layout (layout_assign's A-fragment rule, mma_remap's
 * register A; docs/pipelines.md "A in its fragments").  Opt-in (TILEC_PROLOGUE_A_FRAG=1) until a GPU run of the form
 * that waits for its group in its own k-step (bench/pending_s38.sh holds the rule for the default); unset, A is staged
 * through shared memory as before. */
bool tl_prologue_a_frag_on(void);
/* An 8-bit [K][N] B meant for wgmma is transposed by the producer warpgroup, into one K-major buffer a ring stage
 * (ws coop without a cluster; TILEC_WS_TRANSPOSE=0: the consumers, into two buffers beside the ring): what swpipe
 * counts in a stage and dot_plan lays out. */
bool tl_ws_transposes_b(const tl_func *f);

/* Load op ld of loop L can be issued ahead through a ring: a 2-D view along
 * the last dimension of a parameter tensor the kernel never writes, indices
 * from the iv, or along the row dim a gather whose rows lie in a box [x, x +
 * R) (x a scalar from the iv, the offsets iota/constant arithmetic in [0, R):
 * *row_base = x, else -1); rows whole 16-byte chunks, the box's chunks a
 * multiple or a divisor of the threads.  *box_rows: the rows a slot holds. */
bool tl_prologue_view(tl_func *f, int32_t ld, int32_t L, int threads, int32_t *box_rows, int32_t *row_base,
                      const char **why);

/* Ring rows (TILEC_ROW_STREAM=1, lib/codegen/emit_ring_rows.c): load op ld of loop L can be
 * issued ahead through L's TMA ring as a box of its own: a 1-D tile (the view slices only the
 * tensor's last dimension, every other index a scalar) of a parameter tensor the kernel never
 * writes, a top-level op of L's body, every index computable from the iv (tl_scalar_from_iv), at
 * most 256 elements whose bytes are whole 16-byte units, elements of 2 or 4 bytes; a scalar
 * `other` allowed (codegen puts it where the view leaves the tensor).  The attention backward's per-step
 * LSE and Dl rows. */
bool tl_row_stream_view(tl_func *f, int32_t ld, int32_t L, const char **why);

/* Index tile v (a gather index) is splat(x) + offsets, x a scalar from L's
 * iv, the offsets in [0, *rows) from iota and constants: *base = x. */
bool tl_gather_box(tl_func *f, int32_t v, int32_t L, int32_t *base, int32_t *rows);

/* The largest dynamic shared memory per block of `arch` (bytes; NULL = sm_90a):
 * the budget route_pipeline and swpipe size cp.async rings against. */
int64_t tl_arch_smem_budget(const char *arch);

#endif
