/* program.h: what a tilec_program and tilec_options hold (shared by the lib/api/ sources). */
#ifndef TILEC_PROGRAM_H
#define TILEC_PROGRAM_H

#include "tilec.h"
#include "ir.h"
#include "codegen.h"

#include "frontend.h"
#include "interp.h"

/* Options: heap-allocated (malloc), deep-copied into each program. */
enum { TL_ASM_AUTO, TL_ASM_PTXAS, TL_ASM_DRIVER, TL_ASM_LINK };

/* Option "tma-fallback": what a kernel fed by TMA is compiled as.  FORM (default): its TMA path alone;
 * the launcher runs its no-TMA form for tensors a map cannot take (form_launch.c).  INLINE: both paths
 * in one kernel (an AOT launcher of one image a kernel, aot.c).  ENTRY: the program's PTX holds each TMA
 * form, then its no-TMA form as the entry ENTRY__notma (notma_entry.c; the CLI's .ptx / .cubin files; a
 * kernel the JIT loads is the TMA form, as with FORM).  NOTMA: no TMA at all, the no-TMA form alone (what
 * ENTRY__notma holds less its unread maps). */
typedef enum tl_tma_fallback {
  TL_TMA_FALLBACK_FORM = 0,
  TL_TMA_FALLBACK_INLINE,
  TL_TMA_FALLBACK_ENTRY,
  TL_TMA_FALLBACK_NOTMA
} tl_tma_fallback;

struct tilec_options {
  tl_define *defines; int ndefines;
  char *arch;          /* NULL = detect, else sm_90a */
  int opt_level;       /* default 3 */
  int line_info;       /* default 1 */
  char *pipeline;      /* NULL = by name/attribute */
  char *print_after;   /* pass name or "all"; NULL = none */
  int time_passes;
  int verify_each;     /* run the verifier after every pass (tests: 1) */
  char *entry_name;
  char *kernel;        /* "kernel": compile this kernel only (codegen); NULL = every kernel */
  int max_errors;
  int explain;
  /* "warps" / "stages" options: override the @warps / @stages attribute of
   * every kernel (0 = keep the attribute, or let the compiler choose).  api.c
   * writes them into each tl_func after the front-end, before the passes, so
   * route_pipeline and layout_assign see them as attributes. */
  int warps, stages;
  int maxnreg; /* the "maxnreg" option: overrides @maxnreg in every kernel; 0 = unset */
  /* "assembler": who turns a kernel's PTX into machine code at load (jit.c, docs/api.md):
   * TL_ASM_AUTO (ptxas where found, else the driver), _PTXAS, _DRIVER (cuModuleLoadDataEx, the
   * PTX compiled whole), _LINK (the driver's cuLink, relocatable code: the old path, measuring).
   * TILEC_ASSEMBLER wins.  In the cache key. */
  int assembler;
  /* "disable-pass": comma-separated pass names skipped in the pipeline
   * (checked against the registry at compile time, like print-after). */
  char *disable_pass;
  /* "fp8-acc": 0 = promote (default: 8-bit dots add the tensor core's sums
   * of at most 128 K into the f32 accumulator with f32 adds), 1 = fast (the
   * tensor core's own accumulation).  In the cache key (jit.c, tune.c). */
  int fp8_acc_fast;
  /* "cluster": tl_cluster (lib/ir.h; 0 = unset: TILEC_CLUSTER or the default 1x1),
   * written into each tl_func's cluster_opt like warps / stages.  In the cache key. */
  int cluster;
  /* "split-k": "partial" (1) / "reduce" (2) / "" (0): the halves of a split-K small-M form
   * (passes/split_k.c, docs/small_m.md) of the kernel named by "kernel".  In the cache key. */
  int split_k_role;
  /* "tma-fallback" (tl_tma_fallback, above): tl_codegen_opts.tma; "inline" and "notma" in the cache key. */
  tl_tma_fallback tma_fallback;
  /* "kmajor-b": the parameter of the kernel named by "kernel" stored [N, K] (its K-major-B form,
   * passes/kmajor_b.c, lib/kmajor_b.h); NULL = none.  In the cache key. */
  char *kmajor_b;
  /* "hoist-operand": "form" (1) / "pre" (2) / "" (0): the halves of the materialize-once form
   * (passes/hoist_operand.c, lib/hoist_operand.h) of the kernel named by "kernel".  In the cache key. */
  int hoist_operand_role;
  /* "attn-ws": the warp-specialized attention form of every wgmma attention kernel (off |
   * producer | pingpong | fa3; NULL = unset: TILEC_ATTN_WS decides); what tilec_kernel_load
   * sets for a kernel's FlashAttention-3 form (passes/attn_form.c, lib/attn_form.h).  In the
   * cache key. */
  char *attn_ws;
  /* "ws": a wgmma GEMM's warp-specialized schedule (off | coop | pingpong, TILEC_WS's values; NULL = unset:
   * TILEC_WS, then route_pipeline's defaults, decide), in every kernel.  In the cache key. */
  char *ws;
  /* "attn-persist": wgmma attention without a producer made persistent (0 | 1 | 2 | 3, the values of
   * TILEC_ATTN_PERSIST; NULL = unset: the switch decides); "1" is what tilec_kernel_load sets for a
   * D256 kernel's persistent form (passes/attn_persist_form.c, lib/attn_persist_form.h).  In the
   * cache key. */
  char *attn_persist;
  /* "attn-sched": a causal fa3 kernel's tiles from a global counter (0 | 1 | 2, TILEC_ATTN_SCHED's values; NULL =
   * unset: the switch decides); "1" is what tilec_kernel_load compiles a causal kernel's FlashAttention-3 form
   * with (lib/api/forms.c; the launcher keeps the counter).  In the cache key. */
  char *attn_sched;
  /* "attn-o-slot-k": fa3's O through the last stage's K slot (0 | 1, TILEC_ATTN_O_SLOT_K's values; NULL = unset:
   * the switch, then the default, decides); "1" is what tilec_kernel_load compiles a causal D128 kernel's short
   * FlashAttention-3 form with (lib/attn_form.h short_*, lib/api/forms.c).  In the cache key. */
  char *attn_o_slot_k;
};

struct tilec_program {
  tl_ctx ctx;                 /* arena, sources, diagnostics */
  struct tilec_options opts;  /* deep copy (strings in ctx arena) */
  int32_t file;               /* source index in ctx.files */
  bool arch_detected;         /* opts.arch was not given: device 0's arch (else sm_90a), fixed by the
                               * first stage (api.c target_arch; jit.c load_prologue checks a load) */
  int reached;                /* last stage completed, -1 = none */
  tilec_status failed;        /* sticky failure status (TILEC_OK = none) */
  int failed_diags[2];        /* [first, end) of ctx.diags the failing call recorded: repeated by each later call
                               * the failure refuses (api.c repeat_failure) */
  tl_module *module;          /* after the front-end; passes run in place */
  bool *passed;               /* per function of module: its tile passes ran (api.c stage_passes) */
  const void *ast;            /* the checked AST (ctx arena) whose dump text[AST] is made on demand */
  char *text[5];              /* per stage, malloc'd (AST, IR, LLVM, PTX) */
  tl_codegen_result cg;       /* after TILEC_STAGE_PTX */
  void *cubin; size_t cubin_size; /* TILEC_STAGE_CUBIN, where ptxas/driver produced it */
  tl_sbuf log;                /* diagnostics, print-after, time-passes */
  int ndiag_logged;           /* diagnostics already appended to log */
  tl_sbuf work;               /* scratch text of the stage in progress (freed with p) */
};

/* Size limit of one source (string or file); larger input is an error. */
#define TILEC_MAX_SOURCE_BYTES ((size_t)16 << 20)

/* From the runtime (runtime/loader.c): the "sm_XX[a]" of CUDA device
 * `device` into buf; false when there is no driver or device.  The default
 * target when no arch is given. */
bool tl_rt_device_arch(int device, char *buf, size_t n);

/* The tile function named `kernel` (NULL = the first), or NULL. */
tl_func *tl_api_find_kernel(tilec_program *p, const char *kernel);
/* After TILEC_STAGE_IR: the tile passes of kernel f, if they have not run (a program with option
 * "kernel" passes that kernel alone at its IR stage); the pass errors' status. */
tilec_status tl_api_kernel_passes(tilec_program *p, const tl_func *f);
/* Host tensor/scalar arguments -> interpreter arguments for f.  false with a
 * one-line reason in err when an argument cannot be mapped (device, dtype, rank). */
bool tl_api_map_args(const tl_func *f, const tilec_arg *args, int nargs, tl_arg *out,
                     bool host, char *err, size_t n);

/* Run fn under a fatal-error handler: returns the status (TILEC_OK, or
 * TILEC_ERROR_INTERNAL / NOMEM when fn raised one). */
tilec_status tl_api_guard(tilec_program *p, tilec_status (*fn)(tilec_program *, void *), void *arg);
/* The PTX of one kernel of p (passes run once for the program; codegen for
 * `kernel` only); out->ptx malloc'd, out->kernels[0] its launch facts.  The
 * caller frees it with tl_codegen_result_free. */
tilec_status tl_api_codegen_kernel(tilec_program *p, const char *kernel, int assume_vectors, bool tma_off,
                                   tl_codegen_result *out);
/* The same for kernel's no-TMA entry of the CLI's PTX (notma_entry.c): its no-TMA form named
 * `entry`, declaring keep_maps tensor maps it never reads (codegen.h keep_maps). */
tilec_status tl_api_codegen_notma_entry(tilec_program *p, const char *kernel, const char *entry, int keep_maps,
                                        tl_codegen_result *out);
/* Option tma-fallback=entry (stage_codegen, inside the guard): p->cg.ptx gets each TMA form's no-TMA
 * form, compiled beside it (tl_codegen_opts.notma_entries), as a second entry ENTRY__notma (notma_entry.c). */
tilec_status tl_api_notma_entries(tilec_program *p);
/* Append new diagnostics of p->ctx to p->log. */
void tl_api_flush_diags(tilec_program *p);

/* ---- --explain resource facts (lib/api/explain.c) ----------------------------
 * One kernel's resource use as `ptxas -v` reports it; -1 = not reported. */
typedef struct tl_ptxas_usage {
  char entry[128];          /* PTX .entry name ("Compiling entry function 'X'") */
  char arch[16];            /* "sm_90a" ("... for 'sm_90a'") */
  int regs;                 /* "Used N registers" */
  int64_t stack_bytes;      /* "N bytes stack frame" */
  int64_t spill_store_bytes, spill_load_bytes; /* "N bytes spill stores/loads" */
  int64_t smem_static_bytes;/* "N bytes smem" on the Used line (0 when absent) */
} tl_ptxas_usage;

/* Parse the text ptxas -v printed: one entry per "Compiling entry function"
 * (up to max; returns how many were found, which may exceed max).  Lines it
 * does not know are skipped, so other ptxas versions degrade to -1 fields. */
int tl_ptxas_parse_usage(const char *text, tl_ptxas_usage *out, int max);

/* Append one "resources: kernel 'K': ..." line per kernel of p->cg to p->log
 * (p compiled to PTX), running `ptxas -v` where tl_api_find_ptxas finds it.
 * Never fails the compile: a missing or failing ptxas is said on the line. */
void tl_explain_resources(tilec_program *p);

/* The options' checks that the stages reuse (options.c): "sm_" followed by two or three digits
 * and an optional "a"; the TL_PIPE_* of a pipeline name (NULL: auto), -1 for an unknown one. */
bool tl_api_is_arch_name(const char *s);
int tl_api_pipeline_code(const char *name);

/* ptxas: $TILEC_PTXAS, else the first on PATH, else /usr/local/cuda/bin (ptxas.c). */
bool tl_api_find_ptxas(char *buf, size_t n);
/* ptxas -arch=arch -O<opt_level> on ptx -> a malloc'd cubin; its messages appended to log (may
 * be NULL), a failure's reason to why (ptxas.c). */
tilec_status tl_api_ptxas(const char *ptx, const char *arch, int opt_level, char **cubin, size_t *size,
                          tl_sbuf *log, tl_sbuf *why);

/* Files and a child process for ptxas: the whole file at path (api.c; NUL-terminated,
 * malloc'd; at most TILEC_MAX_SOURCE_BYTES + 1 bytes; a directory is refused); data written to
 * path (ptxas.c); prog run with argv, stdin from /dev/null and stdout + stderr into log_path
 * (0600; ptxas.c): returns posix_spawn's error (0 = ran, *wstatus its wait status). */
tilec_status tl_api_read_file(const char *path, char **data, size_t *len);
bool tl_api_write_file(const char *path, const char *data, size_t n);
int tl_api_run_logged(const char *prog, char *const argv[], const char *log_path, int *wstatus);

/* ---- autotuning internals (lib/api/tune.c; exposed for its unit tests) ---------- */
/* Configurations in space: the product of the value counts (1 for no
 * params); -1 when a param has no values or the product passes
 * TILEC_TUNE_MAX_CONFIGS. */
int64_t tl_tune_space_size(const tilec_tune_space *s);
/* The values of configuration `index` of s into values[s->nparams]: an
 * odometer whose first param turns slowest. */
void tl_tune_space_config(const tilec_tune_space *s, int64_t index, int64_t *values);
/* The smallest power of two >= v (1 for v <= 1). */
int64_t tl_tune_pow2_ceil(int64_t v);
/* The shape class of device or host arguments for f: "SYM=pow2ceil ..." in
 * symbol-name order, each symbol taken where it is first bound.  false with
 * a reason in err when an argument does not fit f's parameters. */
bool tl_tune_shape_class(const tl_func *f, const tilec_arg *args, int nargs, char *buf, size_t n, char *err,
                         size_t errn);
/* The winner cache: "<dir>/<key_hex>.tune", a text entry closed by a
 * checksum line.  load: TL_CACHE_HIT (1) with *r filled, or a miss (0;
 * missing, truncated, corrupt or foreign, the reason appended to why when not
 * NULL).  store: atomic (temp file, fsync, rename); TL_OK or TL_ERR_IO. */
int tl_tune_cache_load(const char *dir, const char *key_hex, tilec_tune_result *r, tl_sbuf *why);
int tl_tune_cache_store(const char *dir, const char *key_hex, const tilec_tune_result *r, tl_sbuf *msg);
void tl_tune_cache_path(const char *dir, const char *key_hex, char *buf, size_t n);

#endif
