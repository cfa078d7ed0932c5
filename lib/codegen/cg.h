/* cg.h: internal state of the code generator (lib/codegen/), not a contract.
 *
 * Tiles are lowered to per-thread registers: a tile value with layout L is an
 * array of 2^L.nreg LLVM scalar values, register r holding the element at
 * reg_coords(r) + lane/warp part (layout.h).  Registers that replicate (a zero
 * register basis) share the LLVM value of their canonical register.  Scalars
 * are one LLVM value, uniform across the CTA. */
#ifndef TILEC_CG_H
#define TILEC_CG_H

#include <llvm-c/Core.h>

#include "codegen.h"
#include "layout.h"

typedef struct cg_val {
  LLVMValueRef *r; /* registers (one for a scalar) */
  int32_t n;
} cg_val;

typedef struct cg_tensor {
  LLVMValueRef ptr;                /* ptr addrspace(1) */
  LLVMValueRef size[TL_MAX_RANK];  /* i32 */
  LLVMValueRef stride[TL_MAX_RANK];/* i64, in elements */
} cg_tensor;

typedef struct cg_epi cg_epi; /* emit_epilogue.c */

typedef struct cg {
  tl_ctx *ctx;
  tl_func *f;
  const tl_codegen_opts *o;
  int sm;             /* 80, 89, 90 */
  jmp_buf *bail;      /* unsupported construct: diagnostic already reported */
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;   /* the body */
  LLVMBuilderRef PB;  /* the prologue (thread ids, layout coordinates) */
  LLVMValueRef fn;
  LLVMBasicBlockRef prologue;
  LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, vd, gptr, sptr;
  cg_val *vals;       /* per tl_value id */
  cg_tensor *tensors; /* per parameter */
  LLVMValueRef lane, warp; /* i32, in the prologue */
  LLVMValueRef (*lw)[TL_MAX_RANK]; /* per layout id: lane/warp part of the coordinates */
  LLVMValueRef smem;  /* extern dynamic shared array */
  int smem_bytes;
  tl_loc loc;         /* op being lowered, for diagnostics */
  /* Main-loop plan (dot_plan.c, made lazily per function by cg_plan): dot
   * operands streamed by cp.async through a ring of stages, loop-invariant
   * operands staged once.  Their shared memory is persistent: bytes
   * [0, smem_persist); every other (scratch) user starts at smem_persist. */
  tl_func *plan_f;
  struct tl_axis_analysis *axis; /* cg_axis: the axis facts of axis->f, made once per function */
  int smem_persist;
  /* scratch over a drained ring (emit_ring.c cg_loop_exit, TILEC_SCRATCH_OVER_RING=1): after a
   * function-level cp.async ring loop, its slots [scratch_lo, scratch_hi) are free, and a scratch
   * user that fits takes them instead of bytes past smem_persist; scratch_base: the current
   * user's base (cg_scratch_use) */
  int scratch_lo, scratch_hi, scratch_base;
  /* scratch_strict: [scratch_lo, scratch_hi) is the only scratch there is, a user that does not fit
   * is an error (emit_rope.c: the preamble before fa3's main loop borrows q's resident slots,
   * staged only after it, as shared memory has no room past smem_persist) */
  bool scratch_strict;
  struct cg_plan *plan;
  const char *entry;  /* the PTX entry name of the kernel being emitted */
  int tma_param0;     /* LLVM index of its first hidden tensor-map parameter */
  LLVMValueRef sched_ctr; /* TILEC_ATTN_SCHED=1: the hidden u64 after the maps, the tile counter's address
                           * (attn_sched.c); else NULL */
  int threads;        /* block size (the layouts' warps, plus a producer warpgroup: emit_ws.c) */
  /* persistent CTAs (tile_sched.c): the current tile's program ids and the
   * logical grid (NULL: program_id / num_programs read %ctaid / %nctaid) */
  LLVMValueRef pid[3], lgrid[3];
  /* a cluster's tile pair (tile_sched.c, emit_cluster.c): i1, this CTA's tile
   * of the pair is past the grid (a ragged edge): it only takes part in the
   * pair's loads and releases; NULL without a cluster */
  LLVMValueRef phantom;
  uint8_t *skip;      /* per op id: cg_emit_op emits nothing (emit_rows.c: loads made before the body) */
  uint8_t *early;     /* per op id: emitted early (emit_under.c); the region's pass emits nothing, once */
  int bar_threads;    /* != 0: cg_barrier is the named barrier 1 of that many threads (consumers) */
  int nbar;           /* CTA barriers emitted so far (cg_barrier; emit_ring.c counts a loop body's) */
  LLVMValueRef bar_id; /* i32 named barrier of cg_barrier instead of 1 (a ping-pong consumer's), or NULL */
  LLVMValueRef pp_wg;  /* i32: a ping-pong consumer's warpgroup (0 / 1), or NULL (emit_ws.c) */
  cg_epi *epi;        /* != NULL: emitting one column sub-tile of the epilogue (emit_epilogue.c) */
  /* line info (debuginfo.c); dib == NULL when line_info is off */
  LLVMDIBuilderRef dib;
  LLVMMetadataRef di_cu, di_sp;   /* compile unit; subprogram of the kernel being emitted */
  LLVMMetadataRef *di_files;      /* per ctx->files index, created on first use */
  int32_t di_main_file, di_sp_file;
  tl_loc di_kernel_loc;           /* the kernel's location (prologue, unknown op locations) */
  uint32_t assumed_key;           /* TILEC_VEC_ONLY: the launch key bits the kernel assumes (emit_memory.c) */
  LLVMValueRef row_policy;        /* i64 evict-first L2 policy of a row kernel's hints, or NULL (emit_memory.c) */
  struct cg_row_pf *row_pf;       /* emit_row_prefetch.c: the gathers' prefetch, from the start to the end */
  tl_func *narrow_f;              /* TILEC_TANH_APPROX=2: narrow_f's narrow-only values (lib/narrow_store.h), */
  uint8_t *narrow;                /* made lazily by cg_tanh_approx (emit_elementwise.c) */
} cg;

/* emit_memory.c: a row kernel's cache hints (`TILEC_ROW_HINTS`, docs/rows.md "rows8"): the PTX
 * qualifiers of one access, and whether it takes the L2 policy operand (g->row_policy). */
typedef struct cg_cache_hint {
  char q[64];
  bool policy;
} cg_cache_hint;
#ifndef CG_ROW_HINTS_DEFAULT
#define CG_ROW_HINTS_DEFAULT ""
#endif
/* The kernel's hints use the evict-first policy (made once, at the program's start). */
bool cg_row_hints_policy(cg *g);
/* emit_row_prefetch.c: a row kernel's L2 prefetch of the rows a later CTA reads (docs/rows.md
 * "rows8"); at the program's start, before the body. */
void cg_row_prefetch(cg *g);
void cg_row_prefetch_end(cg *g); /* (at the body's end: the gathered rows, their ids loaded at the start) */
/* The dense byte range of each tensor's loads among `loads` (their operands emitted for the tile
 * wanted) into L2 where go (i1); emit_rows.c's TILEC_ROW_STREAM_L2 too. */
void cg_prefetch_loads(cg *g, const int32_t *loads, int nl, LLVMValueRef go);
/* tile_sched.c: the grid axis a row kernel's launch order walks fastest (grid_order; -1: none,
 * the launch's own ids) */
int cg_grid_order_axis(cg *g);
/* attn_order.c: a causal attention kernel's program ids in the order TILEC_ATTN_ORDER asks for
 * (f->attn_order; program_id(1) fastest in groups) into g->pid; false (nothing emitted) when off. */
bool cg_attn_order(cg *g);
/* emit_elementwise.c: tanh / sigmoid op o is lowered by tanh.approx.f32 (TILEC_TANH_APPROX=1 every one,
 * =2 only a narrow-only result: lib/narrow_store.h) */
/* TILEC_TANH_APPROX's level: 0 none, 1 every tanh / sigmoid, 2 (unset: the default) the scoped rule */
int cg_tanh_approx_level(void);
bool cg_tanh_approx(cg *g, const tl_op *o);

/* codegen.c */
TL_NORETURN void cg_unsupported(cg *g, const char *fmt, ...) TL_PRINTF(2, 3);
LLVMValueRef cg_i32(cg *g, int64_t x);
LLVMValueRef cg_i64(cg *g, int64_t x);
LLVMTypeRef cg_reg_type(cg *g, tl_dtype dt);
LLVMTypeRef cg_mem_type(cg *g, tl_dtype dt);
LLVMValueRef cg_intrinsic(cg *g, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n);
LLVMValueRef cg_asm(cg *g, LLVMTypeRef ret, const char *text, const char *constraints, LLVMValueRef *args,
                    int n, bool side_effects);
/* dequant_pair.c: a bf16x2 B/A pair of two int4 dequantizations by the magic-number unpack and
 * two bf16x2 fmas, or NULL (TILEC_DEQUANT_BF16X2=0: always NULL). */
LLVMValueRef cg_dequant_pair_bf16(cg *g, LLVMValueRef e0, LLVMValueRef e1);
bool cg_dequant_bf16x2_on(void);
/* lane_eval.c: integer value v for one lane and warp, its leaves g->lane, g->warp and constants
 * (false: another leaf or op, a division by zero, too deep or too large). */
bool cg_lane_eval(cg *g, LLVMValueRef v, int64_t lane, int64_t warp, int64_t *out);
/* lane_eval.c: the warps of the block (the producer warpgroup too), at least 1. */
int cg_all_warps(cg *g);
/* mma.sync m16n8k{kstep}.row.col, f32 accumulators (s8: s32, i32 registers): args a0..a3, b0, b1, c0..c3 */
LLVMValueRef cg_mma_sync(cg *g, int kstep, const char *ta, const char *tb, LLVMValueRef *args);
/* The PTX operand type of a dot operand dtype: bf16 f16 e4m3 e5m2 s8 tf32. */
const char *cg_mma_type(tl_dtype dt);
cg_val *cg_get(cg *g, int32_t v);
cg_val *cg_new_val(cg *g, int32_t v, int32_t n);
const tl_layout *cg_layout(cg *g, int32_t v);
/* Coordinate d of register r of layout lid, i32 (register part constant). */
LLVMValueRef cg_coord(cg *g, int32_t lid, int32_t r, int d);
/* Row-major index over `shape` (rank dims) of register r of layout lid, coordinate d shifted by
 * shift[d] (NULL: none), i32: where the element lives in a shared-memory copy of the tile. */
LLVMValueRef cg_flat_index(cg *g, int32_t lid, int32_t r, int rank, const int32_t *shape, const int32_t *shift);
/* The lane/warp part of coordinate d of layout lid (i32, computed once in the
 * prologue; the constant 0 when no lane/warp bit moves along d). */
LLVMValueRef cg_lane_warp(cg *g, int32_t lid, int d);
void cg_barrier(cg *g);
int cg_plan_reduce_slots(cg *g, int32_t **red_off); /* emit_reduce.c: a row kernel's reduce slots */
/* emit_elementwise.c: a row kernel keeps bf16 in the words it was loaded in (the cast widens from
 * the word, a variant's `other` is chosen a word at a time); TILEC_BF16_WORDS=0 turns it off. */
bool cg_bf16_words(cg *g);
LLVMValueRef cg_sreg(cg *g, const char *what, int axis); /* %what.{x,y,z} (i32) */
void cg_emit_op(cg *g, int32_t opid);
/* Emit region r's ops; its yield's operands (value ids) in *yielded when asked. */
void cg_emit_region(cg *g, tl_region *r, int32_t **yielded, int *nyield);

/* tile_sched.c: the kernel body after the prologue, up to its return: once,
 * per output tile (persistent CTAs), or warp-specialized (emit_ws.c). */
void cg_emit_program(cg *g);
/* The logical grid (the grid clause, 1 for missing dims) into g->lgrid at the builder's
 * position; returns the tile count (i32). */
LLVMValueRef cg_logical_grid(cg *g);
/* emit_rows.c: the kernel is a loop of persistent CTAs over its tiles with loads issued ahead
 * (f->row_ahead, passes/row_stream.c), and its emission (the body, up to before the return). */
bool cg_rows_active(cg *g);
void cg_emit_rows(cg *g);
/* emit_ws.c: threads added to the layouts' warps (the producer warpgroup). */
int cg_ws_extra_threads(cg *g);
void cg_use_smem(cg *g, int bytes);
LLVMValueRef cg_smem_ptr(cg *g, LLVMValueRef byte_off);

/* dot_plan.c: main-loop plan and scratch shared memory; emit_ring.c: the loop hooks */
void cg_make_plan(cg *g);
/* Hooks of codegen.c's emit_for: in the preheader before its branch into the
 * loop (the ring prologue of the loop's streamed operands, with branches),
 * and at the start of the exit block (cp.async.wait_group 0 drain). */
void cg_loop_preheader(cg *g, int32_t for_op);
void cg_loop_exit(cg *g, int32_t for_op);
/* emit_overlap.c: before top-level body op id, the wait of a wgmma group issued a step late;
 * true: op id is not emitted here (the rescale moved to the next iteration). */
bool cg_overlap_before_op(cg *g, int32_t id);
bool cg_rope_skips(cg *g, int32_t op); /* emit_rope.c: k's rotation, the producer's (TILEC_ROPE_PRODUCER=1) */
/* wgmma_lazy.c (TILEC_WGMMA_LAZY=1): loop L's wgmma dots commit without waiting (cg_lazy_wait_loop),
 * their results pending (cg_lazy_wait_push); before a body op, the wait for the pending results it
 * reads (every one before an op with regions); at the body's end, the wait for all (flush). */
bool cg_lazy_wait_loop(cg *g, int32_t L);
void cg_lazy_wait_push(cg *g, int32_t res);
void cg_lazy_wait_before_op(cg *g, int32_t id);
void cg_lazy_wait_flush(cg *g);
void cg_lazy_issue_next(cg *g, tl_op *dot); /* after a lazy dot's commit: the next wgmma dot, if its operands are in slots */
/* TMA (docs/pipelines.md "TMA ring"): the hidden tensor-map parameters the
 * plan needs (cg_make_plan first; they follow the ABI's parameters), and
 * what the launcher and --explain need to know of them. */
int cg_tma_count(cg *g);
/* attn_sched.c: whether the kernel takes the hidden tile counter parameter (TILEC_ATTN_SCHED=1, codegen.h) */
bool cg_attn_sched_counter(cg *g);
/* tl_codegen_opts.tma with TILEC_TMA_FORM=0 (inline) applied: tl_tma_mode */
int cg_tma_mode(cg *g);
/* emit_q_tma.c: op is fa3's q load, which the producer's TMA replaces (TILEC_ATTN_Q_TMA=1) */
bool cg_q_tma_skips(cg *g, int32_t opid);
/* at that load's place: TILEC_ATTN_PERSIST=1's q start (cg_q_tma_plain_start), else nothing */
void cg_q_tma_at_load(cg *g);
/* i1 map test `ok` -> what the kernel assumes (a TMA form: true, after a trap when it fails) */
LLVMValueRef cg_tma_assume(cg *g, LLVMValueRef ok);
/* ok AND the map test of codegen.h's ABI for tensor t of rank `rank`, elements of eb bytes (the
 * launcher repeats it): the last stride 1, the base and every other byte stride 16-byte aligned
 * and in (0, 2^40), no size 0.  In the builder's block (the kernel prologue). */
LLVMValueRef cg_tma_map_test(cg *g, LLVMValueRef ok, const cg_tensor *t, int rank, int eb);
/* The generic address of hidden tensor-map parameter `map` (0 = the first after the ABI's). */
LLVMValueRef cg_tma_map_addr(cg *g, int map);
/* body (its instructions predicated @p) executed by thread 0; args are $1..$n, cons their
 * constraints after thread 0's "r" for $0. */
void cg_thread0_asm(cg *g, const char *body, LLVMValueRef *args, int n, const char *cons);
void cg_warp_converge(cg *g); /* bar.warp.sync -1 after a thread-0 block, before warp-collective code */
/* emit_cluster.c: .reqnctapercluster 2, 1, 1 and .explicitcluster after .maxntid of entry in *ptx (malloc'd). */
bool cg_cluster_directives(char **ptx, const char *entry);
void cg_tma_info(cg *g, tl_kernel_info *ki);
/* dead_blocks.c: fn's blocks that a branch on a constant never reaches, removed (TILEC_DEAD_BLOCKS=0 keeps them). */
void cg_drop_dead_blocks(cg *g, LLVMValueRef fn);
void cg_scratch_use(cg *g, int bytes);           /* cg_use_smem after the persistent part (or over a drained ring) */
LLVMValueRef cg_scratch_ptr(cg *g, LLVMValueRef byte_off); /* byte_off into the last cg_scratch_use's region */
int cg_scratch_pick(cg *g, int bytes);           /* the base a scratch region of bytes would get */
/* The load op is a streamed dot operand (emits the ring instead of registers). */
bool cg_load_streamed(cg *g, tl_op *o);
/* A convert_layout of an operand prologue's load (no gather): read from its
 * ring slot in the result's layout (emit_prologue.c); false: not one. */
bool cg_convert_from_slot(cg *g, tl_op *c);
/* Value v is a streamed operand (or its transpose): it has no registers. */
bool cg_val_streamed(cg *g, int32_t v);

/* debuginfo.c: no-ops when line info is off */
void cg_di_begin(cg *g);                                 /* compile unit, module flags */
void cg_di_kernel(cg *g, const char *entry, tl_loc loc); /* subprogram of g->fn */
void cg_di_prologue_loc(cg *g);                          /* both builders at the kernel's line */
void cg_di_set_loc(cg *g, tl_loc loc);                   /* body builder at an op's line */
void cg_di_end_kernel(cg *g);
void cg_di_finish(cg *g);                                /* finalize + dispose the DIBuilder */
/* nvptx_fixups.c: rewrite what LLVM 19 NVPTX lowers wrongly (after the passes); returns the count */
int cg_nvptx_fixups(LLVMModuleRef M);

/* emit_elementwise.c */
void cg_emit_ew(cg *g, tl_op *o);
/* mask_diff.c: whether the select condition c (a compare all_true decided) is rebuilt in its masked
 * path (cg_mask_diff_on: by default in the two-program attention kernel, TILEC_MASK_DIFF=1 / =0
 * everywhere / nowhere); the per-thread part T of its difference (i64, exact); the
 * predicates of the canonical registers of layout lid into pred, at the builder: the difference form
 * from t (T as i32; valid when every index fits i32 and |T| <= 2^30), or (t NULL) the exact i32 form. */
bool cg_mask_diff_on(cg *g);
bool cg_mask_diff_fits(cg *g, int32_t c);
LLVMValueRef cg_mask_diff_t(cg *g, int32_t c, int32_t lid);
void cg_mask_diff_preds(cg *g, int32_t c, int32_t lid, LLVMValueRef t, LLVMValueRef *pred);
LLVMValueRef cg_cast(cg *g, LLVMValueRef v, tl_dtype from, tl_dtype to);
/* Conditional branch on a uniform i1 that is usually true (branch weights
 * 1000:1, so LLVM lays out the common path as the fall-through). */
void cg_cond_br_likely(cg *g, LLVMValueRef cond, LLVMBasicBlockRef if_true, LLVMBasicBlockRef if_false);
/* The run-time fallback of a TMA path (epilogue store, atomic reduce): a uniform branch on ok
 * (likely), fallback(g, o) emitted at once in its own block, which then jumps to the returned join
 * block; the builder is left in the TMA path's block, which must end with a branch to the join.
 * The blocks are named PREFIX.tma, PREFIX.fallback, PREFIX.join. */
LLVMBasicBlockRef cg_tma_or_fallback(cg *g, LLVMValueRef ok, tl_op *o, void (*fallback)(cg *g, tl_op *o),
                                     const char *prefix);
LLVMValueRef cg_binop(cg *g, int opc, int kind, LLVMValueRef a, LLVMValueRef b, tl_dtype dt);
/* bits of a register value for memory: i1 -> i8; f8 already i8. */
LLVMValueRef cg_to_mem(cg *g, LLVMValueRef v, tl_dtype dt);
/* The vec elements (memory type mt) held in 32-bit words wv: per_word elements a word, or 0 for
 * 8-byte elements (two words each); W words in all (emit_memory.c, emit_prologue.c). */
void cg_words_to_elems(cg *g, LLVMTypeRef mt, int per_word, int W, int vec, LLVMValueRef *wv, LLVMValueRef *x);
LLVMValueRef cg_from_mem(cg *g, LLVMValueRef v, tl_dtype dt);

/* emit_memory.c */
void cg_emit_load(cg *g, tl_op *o);
void cg_emit_store(cg *g, tl_op *o);
/* Every element of the view of a store-like op (store, atomic: value last)
 * exactly once per CTA: for each register a thread owns and no other thread
 * or register replicates, fn gets the element's address (i64), whether to
 * access it (i1: in the tensor and this thread its first holder) and the
 * value's register index. */
typedef void (*cg_elem_fn)(cg *g, void *ctx, LLVMValueRef addr, LLVMValueRef pred, int32_t reg);
void cg_view_elements(cg *g, tl_op *o, cg_elem_fn fn, void *ctx);
/* A group of vec registers from reg, contiguous in memory from addr. */
typedef void (*cg_group_fn)(cg *g, void *ctx, LLVMValueRef addr, LLVMValueRef pred, int32_t reg, int vec);
bool cg_view_groups(cg *g, tl_op *o, int max_vec, cg_group_fn gfn, cg_elem_fn fn, void *ctx);

/* emit_layout_change.c */
/* Coordinate map of a layout-changing op: result coords -> source coords. */
typedef enum { CG_MAP_ID, CG_MAP_EXPAND, CG_MAP_BCAST, CG_MAP_TRANS, CG_MAP_RESHAPE } cg_map_kind;
void cg_emit_transfer(cg *g, int32_t src, int32_t dst, cg_map_kind kind, int axis);
/* The transfer renames registers (no shared memory). */
bool cg_transfer_free(cg *g, int32_t src, int32_t dst, cg_map_kind kind, int axis);

/* The kernel is warp-specialized ping-pong (emit_ws.c): two consumer warpgroups on alternate tiles. */
bool cg_ws_pingpong(cg *g);
void cg_ws_turn_after_commit(cg *g, tl_op *o); /* attention's turns: after a wgmma dot's commit (emit_ws.c) */
void cg_ring_late_refill_due(cg *g, int32_t L); /* a late ring's refill held for a waiting wgmma dot's commit (emit_ring.c) */

/* emit_epilogue.c (docs/pipelines.md "Epilogue sub-tiles") */
/* After the top-level loop at r->ops[at - 1]: emit the ops [at, end) of the
 * body in column sub-tiles when they allow it (true), else nothing (false). */
bool cg_emit_epilogue(cg *g, tl_region *r, int at);
/* Register r of value v belongs to the sub-tile being emitted (always true
 * outside the epilogue's sub-tiles): the emitters skip the others. */
bool cg_reg_wanted(cg *g, int32_t v, int32_t r);
/* Value v was begun by an earlier sub-tile: cg_new_val keeps its registers. */
bool cg_epi_resume(cg *g, int32_t v);
/* An epilogue sub-tile's load takes the split form (emit_memory.c load_split). */
bool cg_epi_split_load(cg *g);
/* Store o is the epilogue's store through shared memory and TMA: emitted
 * for this sub-tile (regs_store: the fallback from registers); else false. */
bool cg_epi_store(cg *g, tl_op *o, void (*regs_store)(cg *g, tl_op *o));
/* In the kernel prologue, before the body: the stored tensor's map test. */
void cg_epi_prologue(cg *g);
/* Before the kernel returns: the epilogue's bulk stores are done. */
void cg_epi_kernel_end(cg *g);

/* emit_atomic.c */
void cg_emit_atomic(cg *g, tl_op *o);
/* emit_atomic_tma.c (docs/pipelines.md "dQ by a TMA reduce-add"): atomic o planned for a TMA
 * bulk reduce-add is emitted so (red: the per-element fallback, for a tensor that fails the map
 * test at run time), true; else nothing, false.  The prologue: the maps' tests and addresses;
 * the kernel end: the bulk reduces are done. */
bool cg_atomic_tma(cg *g, tl_op *o, void (*red)(cg *g, tl_op *o));
void cg_atomic_tma_prologue(cg *g);
void cg_atomic_tma_kernel_end(cg *g);

/* emit_scan.c: scan (cumsum, cummax) and argreduce (argmax, argmin) */
void cg_emit_scan(cg *g, tl_op *o);

/* emit_sort.c: sort (a bitonic network in shared memory) */
void cg_emit_sort(cg *g, tl_op *o);

/* emit_shape.c: slice and cat */
void cg_emit_slice_cat(cg *g, tl_op *o);

/* emit_random.c */
void cg_emit_rand(cg *g, tl_op *o);

/* emit_reduce.c */
void cg_emit_reduce(cg *g, tl_op *o);
LLVMValueRef cg_shfl_xor(cg *g, LLVMValueRef v, int mask);

/* emit_dot.c */
void cg_emit_dot(cg *g, tl_op *o);
/* Dot o has 8-bit operands and the fp8-acc mode is promote: the tensor core
 * sums at most CG_PROMOTE_K elements of K into a temporary accumulator (first
 * instruction with a zero C / scale-d = 0), which f32 adds then put into the
 * dot's accumulator (docs/pipelines.md "fp8 accumulation"). */
/* The axis facts (lib/axisinfo.h) of the function being emitted, analysed on first use. */
struct tl_axis_analysis *cg_axis(cg *g);
bool cg_dot_promotes(cg *g, const tl_op *o);
/* The plan asks for two programs an SM (.minnctapersm 2: a staged wgmma B whose shared memory
 * fits twice; dot_plan.c plan_two_programs). */
bool cg_plan_two_programs(cg *g);
#define CG_PROMOTE_K 128

/* emit_wgmma.c: the Hopper wgmma main loop (docs/pipelines.md "Hopper wgmma").
 * Where one operand lies this iteration: a ring slot, 1024-byte aligned. */
typedef struct cg_wgmma_src {
  LLVMValueRef base; /* i32 shared address of the slot */
  bool kmajor;       /* rows of K (A: [M][K]; B: [N][K]), row XOR-swizzled; else B as [N/64][K][64] atoms */
  int rowbytes;      /* K-major: bytes per row (32, 64 or 128 = the swizzle mode) */
  int krows;         /* atoms (N-major B): the K rows of one atom (the slot's K) */
  int katom;         /* K-major rows longer than 128 B (16-bit): the slot is [K/64][rows][64]
                      * atoms of 128-byte rows (rowbytes 128), katom = bytes of one atom
                      * column (rows * 128); 0: a row holds all of K */
  LLVMValueRef *regs; /* A only, 16-bit: in registers, the packed mma.sync m16n8k16 A fragments
                       * regs[(mi * nk + kk) * 4 + i] (64-row block mi, k16 slice kk); base unused */
} cg_wgmma_src;
/* The target is sm_90a (wgmma, TMA): sm 90 with no arch given or "sm_90a". */
bool cg_arch_is_90a(cg *g);
/* Dot D (its schedule entry chose wgmma) can be emitted as wgmma on this
 * target with its accumulator layout: sm_90a, bf16/f16 or e4m3/e5m2 (any
 * pair) into f32, i8 into i32, f32 (tf32) into f32 (8-bit and tf32: the plan
 * then needs both K-major), the layout with all warps along M (warpgroups of
 * 4), N <= 256 (i8: in instructions of N or N/2 columns, cg_wgmma_instr_n). */
bool cg_wgmma_fits(cg *g, int32_t D);
/* The N of one wgmma instruction of a dot of N columns (dtype dt of the
 * operands): N, or N/2 for an i8 N that is no s32 shape; 0 if none. */
int cg_wgmma_instr_n(int dt, int N);
/* Emit dot o as wgmma reading B (and A unless a->regs) from shared memory; fence,
 * commit and wait_group `inflight` (0, or 1: this group may still run into
 * the next iteration; the loop exit then waits, cg_wgmma_fence_val) included
 * (the slots must be published by then: the ring's wait_group +
 * fence.proxy.async + barrier).  A promoting dot (cg_dot_promotes) needs
 * inflight 0: each group of <= 4 k32 slices writes a temporary, waited for
 * and added into the accumulator before the next group.  inflight 2: no
 * wait at all (a later wait_group 0 of the plan covers it, and rebinds the
 * result's carried value: emit_dot.c wg_defer). */
void cg_emit_wgmma(cg *g, tl_op *o, const cg_wgmma_src *a, const cg_wgmma_src *b, int inflight);
/* emit_under.c: after a wgmma group's commit, the loop body's loads that follow the dot and
 * are not dot operands, with their index math (before the group's wait) */
void cg_emit_under(cg *g, tl_op *dot);
/* emit_under.c, for the scans after a wgmma dot (emit_under, wgmma_lazy): each op of loop body r
 * at its index (pos[op id], allocated here), and dot's index in r (-1: not in it); whether value v
 * is ready before body index `at` (defined outside the body, before `at`, or by an op emitted early) */
int cg_body_positions(cg *g, const tl_region *r, const tl_op *dot, int32_t **pos);
bool cg_body_ready(cg *g, const tl_region *r, const int32_t *pos, int at, int32_t v);
/* Whether a scan of a loop body for work to move earlier stops at o: a store, an atomic, a region or a
 * terminator (what may not be crossed) */
bool cg_body_scan_stops(const tl_op *o);
/* Rebind value v's f32 registers through an empty asm placed here (after a
 * wgmma.wait_group): nothing reads them before that point. */
void cg_wgmma_fence_val(cg *g, int32_t v);
/* The same for the n registers r[] (rebound in place). */
void cg_wgmma_fence_regs(cg *g, LLVMValueRef *r, int32_t n);

#endif
