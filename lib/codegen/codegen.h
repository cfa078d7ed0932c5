/* codegen.h: tile IR (after the pass pipeline, layouts assigned) -> LLVM IR
 * (LLVM-C, NVPTX) -> PTX text.  Implemented in lib/codegen/.
 *
 * Kernel ABI (what the runtime packs, in parameter order):
 *   tensor parameter of rank R: .u64 data pointer (DLTensor data + byte_offset),
 *       then R x .u32 sizes, then R x .u64 strides (in elements, may be 0 or
 *       any value; the kernel assumes nothing it was not specialized for);
 *   scalar parameter: i1/i8/i16/i32/u8 -> .u32, i64 -> .u64,
 *       f16/bf16/f8e4m3/f8e5m2/f32 -> .f32 (converted inside the kernel).
 *   hidden TMA parameters (after all of the above, one per tl_kernel_info.tma
 *       entry, in that order): `.param .align 64 .b8 ENTRY_param_N[128]`, a
 *       CUtensorMap passed by value (__grid_constant__), which the launcher
 *       encodes (cuTensorMapEncodeTiled) for the tensor parameter `param`
 *       of rank R (2..4; the loaded tile is its last two dims, any other
 *       dim is indexed by a scalar): rank R, dims innermost first
 *       {size[R-1], ..., size[0]}, byte strides {stride[R-2] * eb, ...,
 *       stride[0] * eb}, box {box_inner, box_rows, 1, ...}, element strides
 *       1, no interleave, swizzle `swizzle` bytes, out-of-bounds elements
 *       read as zero.  It does so exactly when the kernel's own test holds:
 *       stride[R-1] == 1, data % 16 == 0, for d < R-1 stride[d] * eb % 16
 *       == 0 and 0 < stride[d] * eb < 2^40, no size 0 (else the map may
 *       hold anything).  A kernel compiled with its fallback inline
 *       (tl_codegen_opts.tma = TL_TMA_INLINE) then takes its cp.async /
 *       register path and never reads the map; a TMA form (TL_TMA_FORM,
 *       the default; tl_kernel_info.tma_form) has no such path and executes
 *       `trap` (its PTX says TL_TMA_FORM_MARK): the launcher runs the
 *       kernel's no-TMA form (TL_TMA_OFF) for those arguments instead.
 *       The CLI's PTX carries that form as a second entry ENTRY__notma
 *       (TL_NOTMA_SUFFIX) with ENTRY's parameters, maps included and
 *       never read (keep_maps): launch it, maps zero or anything, where
 *       the test fails (docs/cli.md "Two entries").
 *       docs/pipelines.md "TMA ring", docs/codegen.md "Round 9".
 *   hidden tile counter (tl_kernel_info.sched_ctr: TILEC_ATTN_SCHED=1's causal fa3 kernel, last of
 *       all): .u64, the device address of two u32 words, zero when no launch with that address runs
 *       and left zero by each launch (attn_sched.c); the launcher passes one pair per stream
 *       (lib/api/sched_slot.c, docs/runtime.md "Tile counters").
 * Grid: the launcher evaluates the function's grid region on the host
 * (tl_eval_grid in lib/interp.h); blockDim = (warps * 32, 1, 1);
 * dynamic shared memory = tl_kernel_info.smem_bytes. */
#ifndef TILEC_CODEGEN_H
#define TILEC_CODEGEN_H

#include "ir.h"

typedef struct tl_codegen_opts {
  const char *arch;       /* "sm_80" | "sm_89" | "sm_90" | "sm_90a" */
  int opt_level;          /* 0..3 */
  bool line_info;         /* .loc to .tile lines */
  const char *entry_name; /* override the PTX entry name (single-kernel modules); NULL = kernel name */
  int ptx_version;        /* 0 = the default for arch (e.g. 80 for 8.0); runtime may lower it to fit the driver */
  bool no_llvm_ir;        /* leave tl_codegen_result.llvm_ir NULL: printing the module costs ~7% of
                             codegen time (attn); set it when the LLVM text is not wanted */
  const char *only_kernel;/* emit this kernel only (the JIT loading one kernel of a program); NULL = all */
  bool fp8_acc_fast;      /* 8-bit dots: false = promote (the tensor core sums at most 128 K into a
                             temporary, added to the f32 accumulator by f32 adds), true = the tensor
                             core's own accumulation (~13 mantissa bits on sm_89/sm_90) */
  int assume_vectors;     /* row kernels: 0 = as TILEC_VEC_ONLY says (default: none); 1 = the launch variant
                             without the per-element fallback (lib/codegen/emit_memory.c, lib/api/jit.c) */
  int tma;                /* kernels whose loads or stores TMA feeds (sm_90a, cutlass): tl_tma_mode */
  int keep_maps;          /* TL_TMA_OFF: declare this many hidden tensor-map parameters all the same
                             (never read), so that the entry takes its TMA form's parameters: the
                             CLI's second entry KERNEL__notma (TL_NOTMA_SUFFIX); 0 = none */
  bool notma_entries;     /* also, for each TMA form ENTRY, its no-TMA entry ENTRY__notma (TL_TMA_OFF, keep_maps
                             its maps, no line info for a program of several files) in a module of its own,
                             built after every kernel and compiled on the codegen threads beside them:
                             tl_codegen_result.notma_ptx / notma_kernels (the CLI's second entries,
                             lib/api/notma_entry.c; docs/cli.md "Two entries") */
} tl_codegen_opts;

/* tl_codegen_opts.tma (docs/codegen.md "Round 9"): what a kernel with TMA does for tensors the
 * map test of the ABI (above) refuses.  TL_TMA_FORM: nothing (the TMA path alone, about a third
 * less to compile: the launcher runs the TL_TMA_OFF form of the kernel for such arguments; the
 * kernel traps if launched with them anyway); TILEC_TMA_FALLBACK=inline makes it TL_TMA_INLINE.
 * TL_TMA_INLINE: the cp.async ring and the register epilogue in the same kernel, behind a
 * uniform branch on the test (self-contained: the CLI's .ptx files).  TL_TMA_OFF: no TMA at all (the
 * no-TMA form: the JIT's notma variant, an AOT launcher's second image, lib/api/aot.c). */
typedef enum tl_tma_mode { TL_TMA_FORM = 0, TL_TMA_INLINE = 1, TL_TMA_OFF = 2 } tl_tma_mode;
/* In the PTX of every TMA form (a comment of its trap): tilec_kernel_load_ptx reads it. */
#define TL_TMA_FORM_MARK "tilec: TMA form"
/* The CLI's PTX (option tma-fallback=entry, its default; docs/cli.md "Two entries"): each TMA form's
 * entry ENTRY, then, after every kernel of the module, ENTRY TL_NOTMA_SUFFIX, its no-TMA form
 * (TL_TMA_OFF) with ENTRY's parameters (keep_maps; the maps unread): a launcher runs it for
 * arguments that fail the map test (the ABI above); tilec_kernel_load_ptx does. */
#define TL_NOTMA_SUFFIX "__notma"
/* The comment line after ENTRY__notma's .globl line: "// tilec: no-TMA entry of ENTRY: T threads, S bytes of
 * dynamic shared memory[, persistent][, clusters of 2 CTAs]" (its launch configuration, lib/api/notma_entry.c). */
#define TL_NOTMA_NOTE "tilec: no-TMA entry of"

/* A tensor map the launcher encodes for a kernel (hidden parameter, above). */
#define TL_MAX_TMA 8
typedef struct tl_tma_desc {
  int32_t param;          /* index into the function's params of the tensor (rank 2..4) */
  int32_t box_inner;      /* box elements along dim 1 (contiguous): box_inner * eb <= swizzle */
  int32_t box_rows;       /* box elements along dim 0 (<= 256) */
  int32_t swizzle;        /* bytes: 32, 64 or 128 */
  int32_t dtype;          /* tl_dtype of the tensor */
} tl_tma_desc;

/* What a launcher needs to know about one compiled kernel. */
typedef struct tl_kernel_info {
  const char *name;       /* tile kernel name */
  const char *entry;      /* PTX .entry name */
  int threads;            /* block size (warps * 32) */
  int smem_bytes;         /* dynamic shared memory */
  int ntma;               /* hidden tensor-map parameters */
  tl_tma_desc tma[TL_MAX_TMA];
  const char *tma_note;   /* --explain: how the main-loop ring is fed (TMA or why not); NULL = no ring */
  const char *epi_note;   /* --explain: how the epilogue after a wgmma main loop is emitted; NULL = none */
  bool persist;           /* persistent CTAs: launch min(tiles, what fits on the device) CTAs along x;
                           * the kernel loops over the grid's tiles (docs/pipelines.md) */
  int cluster;            /* 0, or clusters of 2 persistent CTAs (.reqnctapercluster 2, 1, 1) on tiles
                           * adjacent along grid axis cluster - 1: the launch is 2 x min(ceil(grid[axis]
                           * / 2) x the other dims, CTAs that fit / 2) CTAs (lib/codegen/emit_cluster.c) */
  bool tma_form;          /* compiled as a TMA form (tl_tma_mode): arguments that fail the map test of a
                           * tensor map need the kernel's TL_TMA_OFF form */
  bool sched_ctr;         /* the hidden tile counter parameter (the ABI, above; TILEC_ATTN_SCHED=1) */
  uint32_t assumed_key;   /* launch key bits (axisinfo.h) the kernel assumes without a check (TILEC_VEC_ONLY=1,
                           * lib/codegen/emit_memory.c); the launcher refuses arguments without them; 0: none */
} tl_kernel_info;

typedef struct tl_codegen_result {
  char *llvm_ir;          /* malloc'd text */
  char *ptx;              /* malloc'd text */
  int nkernels;
  tl_kernel_info *kernels;/* arena of the module's ctx */
  double ms_llvm_build, ms_llvm_opt, ms_ptx; /* stage timings (several modules: the slowest one's opt and ptx) */
  int nmodules, nthreads; /* LLVM modules compiled (one per kernel on threads, or one; then one per no-TMA
                           * entry) and threads used */
  /* tl_codegen_opts.notma_entries: [k] for kernels[k] a TMA form, the PTX of its no-TMA entry alone (a module of
   * one entry, as tl_codegen with only_kernel, tma = TL_TMA_OFF, entry_name and keep_maps prints it; malloc'd,
   * tl_codegen_result_free frees what is left) and that entry's info; NULL / unset for the other kernels.
   * Both arrays nkernels long (arena), NULL without the option. */
  char **notma_ptx;
  tl_kernel_info *notma_kernels;
  int nnotma;             /* the no-TMA entries compiled */
  double ms_notma_build;  /* their LLVM IR built (their passes and PTX: in ms_llvm_opt / ms_ptx, on the threads) */
} tl_codegen_result;

/* Lower every function of m.  Errors (unsupported constructs, LLVM failures)
 * are diagnostics in m->ctx; returns false then. */
bool tl_codegen(tl_module *m, const tl_codegen_opts *o, tl_codegen_result *out);
/* ptx (a module of nfuncs entries, tl_codegen's) and extra[0..nextra) (others of the same target and
 * source, one entry each, named apart) as one module of all their entries prints them: extra[j]'s
 * entry is function nfuncs + j, its labels renumbered (lib/codegen/units.c); malloc'd, NULL when out
 * of memory or not PTX. */
char *tl_codegen_append_ptx(const char *ptx, int nfuncs, const char *const *extra, int nextra);
/* The options of kernel's no-TMA entry `entry` (notma_entries' modules; the loader's compile of it,
 * lib/api/notma_entry.c): base with TL_TMA_OFF, only that kernel, keep_maps maps declared and unread,
 * no LLVM text, no line info in a program of several source files. */
tl_codegen_opts tl_codegen_notma_entry_opts(const tl_codegen_opts *base, const char *kernel, const char *entry,
                                            int keep_maps, int nfiles);
void tl_codegen_result_free(tl_codegen_result *r);
const char *tl_llvm_version(void); /* "19.1.7" */

#endif
