/* tilec.h: the public C API of tilec, a compiler for a small tile language.
 *
 *   .tile source -> tile IR -> passes -> LLVM IR -> PTX -> CUDA Driver API
 *
 * Conventions (the NVRTC / Lua / SQLite school):
 *  - Opaque handles with create/destroy; destroy(NULL) is a no-op.
 *  - Every call that can fail returns a tilec_status, TILEC_OK (0) on success;
 *    tilec_status_string() names a code.  Details go to the handle's log
 *    (tilec_program_log) and its structured diagnostics.
 *  - Strings returned by a handle are owned by that handle and stay valid
 *    until the next non-const call on it or its destruction, unless the
 *    function says the caller frees them (then with tilec_free).
 *  - The library never prints, exits or aborts.  A broken invariant inside
 *    tilec comes back as TILEC_ERROR_INTERNAL with a message in the log.
 *  - Thread safety: different handles may be used from different threads at
 *    the same time; one handle is used by one thread at a time.  Global
 *    state (the driver loader, the kernel cache) is internally locked.
 *
 * Tensors are passed as DLPack DLTensor (dlpack/dlpack.h): host tensors
 * (kDLCPU) for the interpreter, device tensors (kDLCUDA) for launches. */
#ifndef TILEC_H
#define TILEC_H

#include <stddef.h>
#include <stdint.h>
#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TILEC_API
#else
#define TILEC_API __attribute__((visibility("default")))
#endif

#define TILEC_VERSION_MAJOR 0
#define TILEC_VERSION_MINOR 1
#define TILEC_VERSION_PATCH 0
#define TILEC_VERSION_NUM (TILEC_VERSION_MAJOR * 10000 + TILEC_VERSION_MINOR * 100 + TILEC_VERSION_PATCH)

/* ---- status -------------------------------------------------------------- */
typedef enum tilec_status {
  TILEC_OK = 0,
  TILEC_ERROR_INPUT = 1,       /* the source has errors: see diagnostics */
  TILEC_ERROR_USAGE = 2,       /* bad argument to an API call */
  TILEC_ERROR_NOMEM = 3,
  TILEC_ERROR_INTERNAL = 4,    /* a bug in tilec; the log says where */
  TILEC_ERROR_UNSUPPORTED = 5, /* valid input tilec cannot compile yet */
  TILEC_ERROR_IO = 6,
  TILEC_ERROR_CUDA = 7,        /* libcuda missing, or a driver call failed */
  TILEC_ERROR_NO_DEVICE = 8,   /* no CUDA device found */
  TILEC_ERROR_LAUNCH = 9       /* arguments rejected before launch */
} tilec_status;

/* A static string naming the code ("TILEC_ERROR_INPUT: ..."); never NULL. */
TILEC_API const char *tilec_status_string(tilec_status s);

/* Run-time version: TILEC_VERSION_NUM of the library actually loaded. */
TILEC_API int tilec_version(void);
/* "tilec 0.1.0 (LLVM 19.1.7)"; static storage. */
TILEC_API const char *tilec_version_string(void);

/* Free a string or buffer the caller owns (documented per function). */
TILEC_API void tilec_free(void *p);

/* ---- options --------------------------------------------------------------- */
typedef struct tilec_options tilec_options;

TILEC_API tilec_status tilec_options_create(tilec_options **out);
TILEC_API void tilec_options_destroy(tilec_options *o);
/* Override a tile constant (as -D NAME=VALUE), or the predefined ARCH / ARCH_SPECIFIC. Later calls win. */
TILEC_API tilec_status tilec_options_define(tilec_options *o, const char *name, int64_t value);
/* "sm_80", "sm_89", "sm_90", "sm_90a"; NULL = the GPU found (device 0), else sm_90a.  Also the
 * source's ARCH / ARCH_SPECIFIC (docs/language.md 5.1), fixed by the program's first compile: a
 * program made without one is refused by tilec_kernel_load on a device of another target. */
TILEC_API tilec_status tilec_options_set_arch(tilec_options *o, const char *arch);
/* 0..3, default 3. */
TILEC_API tilec_status tilec_options_set_opt_level(tilec_options *o, int level);
/* Emit .loc line info to .tile lines (default on). */
TILEC_API tilec_status tilec_options_set_line_info(tilec_options *o, int on);
/* Force a pipeline for every kernel: "simple", "multistage", "cutlass"; NULL = by name/attribute. */
TILEC_API tilec_status tilec_options_set_pipeline(tilec_options *o, const char *pipeline);
/* Generic string option, for everything else (see docs/api.md):
 *   "print-after"=PASS|"all", "time-passes"="1", "entry-name"=NAME,
 *   "verify-each"="1", "max-errors"=N,
 *   "warps"=1|2|4|8|16 and "stages"=1..8: override the @warps / @stages
 *   attribute of every kernel ("0" = keep the attribute / compiler's choice),
 *   "cluster"="1x1"|"2x1"|"1x2": clusters of 2 CTAs for the cutlass GEMM on
 *   sm_90a sharing B (2x1) or A (1x2) by TMA multicast (NULL = unset: the
 *   TILEC_CLUSTER environment variable, else 1x1; docs/pipelines.md),
 *   "fp8-acc"="promote"|"fast": how a dot of 8-bit operands accumulates:
 *   promote (default) adds the tensor core's sums of at most 128 K elements
 *   into the f32 accumulator with f32 adds (the f32 accumulation `dot`
 *   promises); fast keeps the tensor core's own accumulation (fewer
 *   registers, faster, ~13 mantissa bits over long K). */
TILEC_API tilec_status tilec_options_set(tilec_options *o, const char *key, const char *value);
/* The keys tilec_options_set takes, for messages and tools: tilec_options_key(i) is the i-th (NULL
 * past the last), tilec_options_takes(key) what it takes in words ("promote or fast"; NULL for a key
 * that does not exist), tilec_options_example(key) one value it accepts.  Static strings. */
TILEC_API const char *tilec_options_key(int i);
TILEC_API const char *tilec_options_takes(const char *key);
TILEC_API const char *tilec_options_example(const char *key);

/* ---- programs ------------------------------------------------------------- */
typedef struct tilec_program tilec_program;

/* Stages whose text can be fetched after compiling at least that far. */
typedef enum tilec_stage {
  TILEC_STAGE_AST = 0,  /* parsed and checked source, as a tree dump */
  TILEC_STAGE_IR = 1,   /* tile IR after the pass pipeline */
  TILEC_STAGE_LLVM = 2, /* LLVM IR (NVPTX target) */
  TILEC_STAGE_PTX = 3,  /* PTX text */
  TILEC_STAGE_CUBIN = 4 /* not text: use tilec_program_get_binary */
} tilec_stage;

/* Create from a NUL-terminated source string; name is used in diagnostics
 * (NULL = "<string>").  opts may be NULL; it is copied, so the caller may
 * destroy it afterwards.  *out is set even on failure to create nothing (NULL). */
TILEC_API tilec_status tilec_program_create(tilec_program **out, const char *source,
                                            const char *name, const tilec_options *opts);
/* Same, reading the file at path (TILEC_ERROR_IO if it cannot be read). */
TILEC_API tilec_status tilec_program_create_from_file(tilec_program **out, const char *path,
                                                      const tilec_options *opts);
TILEC_API void tilec_program_destroy(tilec_program *p);

/* Compile up to and including `stage`.  Calling again with a later stage
 * continues from where the last call stopped.  Errors in the source return
 * TILEC_ERROR_INPUT with diagnostics. */
TILEC_API tilec_status tilec_program_compile(tilec_program *p, tilec_stage stage);

/* Text of a stage already reached (NULL if not reached).  Owned by p.  The
 * LLVM IR text exists only when tilec_program_compile was called with
 * TILEC_STAGE_LLVM (it is printed on request: it costs compile time); a later
 * call with TILEC_STAGE_PTX keeps it. */
TILEC_API const char *tilec_program_text(const tilec_program *p, tilec_stage stage);
/* Everything printed by diagnostics, --print-after and --time-passes, in
 * order.  Owned by p; never NULL. */
TILEC_API const char *tilec_program_log(const tilec_program *p);

/* Structured diagnostics. */
typedef enum tilec_severity { TILEC_SEV_ERROR, TILEC_SEV_WARNING, TILEC_SEV_NOTE, TILEC_SEV_REMARK } tilec_severity;
typedef struct tilec_diagnostic {
  tilec_severity severity;
  const char *file;     /* owned by the program */
  int line, column;     /* 1-based; 0 when unknown */
  const char *message;  /* the message alone */
  const char *rendered; /* "file:line:col: error: msg" + source line + caret */
} tilec_diagnostic;
TILEC_API int tilec_program_num_diagnostics(const tilec_program *p);
TILEC_API tilec_status tilec_program_diagnostic(const tilec_program *p, int index, tilec_diagnostic *out);

/* Kernels of a compiled (at least TILEC_STAGE_IR) program. */
TILEC_API int tilec_program_num_kernels(const tilec_program *p);
TILEC_API const char *tilec_program_kernel_name(const tilec_program *p, int index);

/* Binary of a stage (TILEC_STAGE_CUBIN; for text stages the text without its
 * NUL).  *data is owned by p; TILEC_ERROR_USAGE if the stage was not reached. */
TILEC_API tilec_status tilec_program_get_binary(const tilec_program *p, tilec_stage stage,
                                                const void **data, size_t *size);

/* Parameters of kernel `kernel` (index as for tilec_program_kernel_name), for
 * tools that make arguments (tilec run, test drivers).  Strings are owned by p.
 * Needs the program compiled to at least TILEC_STAGE_AST. */
typedef struct tilec_param_info {
  const char *name;
  int is_tensor;
  const char *dtype;         /* "bf16", "f32", "f8e4m3", ... */
  DLDataType dl_dtype;       /* what tilec_interpret/launch accept for it (see docs/api.md) */
  int rank;                  /* tensors; 0 for scalars */
  const char *dim_symbol[4]; /* per dim: the shape symbol ("M"), or NULL for a constant dim */
  int64_t dim_value[4];      /* per constant dim: its value */
  int written;               /* 1: the kernel stores into this tensor; 2: it only updates it with
                              * atomics (atomic_add/max/min: its contents on entry matter) */
} tilec_param_info;
TILEC_API int tilec_program_num_params(const tilec_program *p, int kernel);
TILEC_API tilec_status tilec_program_param(const tilec_program *p, int kernel, int index,
                                           tilec_param_info *out);
/* Flags of a parameter, beside tilec_param_info (whose size callers compiled against stays fixed:
 * new facts come as bits here).  -1 for a bad program, kernel or index, else a set of:
 *   TILEC_PARAM_ZEROED  the kernel carries @zeroed(NAME) for it: it needs the tensor to hold zeros
 *                       on entry (a counter or an atomic accumulator it leaves as it found it);
 *                       whoever makes the kernel's data zeroes it before every launch (tilec run,
 *                       tilec tune and tilec_autotune do; docs/language.md "Zeroed tensors").
 * Needs the program compiled to at least TILEC_STAGE_AST, as tilec_program_param. */
#define TILEC_PARAM_ZEROED 1
TILEC_API int tilec_program_param_flags(const tilec_program *p, int kernel, int index);
/* Facts about kernel `kernel` as a whole (bits, as tilec_program_param_flags): -1 for a bad program or
 * kernel, else a set of:
 *   TILEC_KERNEL_DOT_F8  a dot takes 8-bit float operands (f8e4m3 / f8e5m2).  The GPU's tensor cores
 *                        sum such products with fewer bits than f32 (about 13; docs/cli.md "Tolerances for 8-bit float dots"),
 *                        so a comparison with the interpreter's f32 sums needs a wider absolute tolerance
 *                        (tilec run --device widens it; the library only tells).
 *   TILEC_KERNEL_DOT_F8_FAST  beside TILEC_KERNEL_DOT_F8: the program's "fp8-acc" is "fast", so the
 *                        tensor core's reduced-precision sum runs over the whole K, not 128 at a time
 *                        (an error that grows with K; tilec run widens more).
 * Needs the program compiled to at least TILEC_STAGE_AST. */
#define TILEC_KERNEL_DOT_F8 1
#define TILEC_KERNEL_DOT_F8_FAST 2
TILEC_API int tilec_program_kernel_flags(const tilec_program *p, int kernel);

/* ---- AOT launchers (docs/aot.md) ------------------------------------------------ */
/* C source of a launcher for every kernel of p, for programs that ship
 * without tilec: *header is NAME.h, *source is NAME.c (it includes
 * "NAME.h"); both malloc'd, freed with tilec_free.  Per kernel K a function
 * `int NAME_K(tensor pointer, sizes, strides (NULL = row-major) per tensor
 * parameter, each scalar, void *stream)` that checks the arguments as
 * tilec_kernel_launch does, computes the grid from the grid clause and calls
 * cuLaunchKernel; the cubin for p's arch (by ptxas, where
 * tl_api_find_ptxas's search finds one: $TILEC_PTXAS, PATH,
 * /usr/local/cuda/bin; else none, with a note in the log) and the PTX (the
 * fallback the driver JIT-compiles for another GPU) are embedded; libcuda is
 * dlopen'd at the first launch.  A kernel fed by TMA (sm_90a) compiled as a TMA
 * form (option tma-fallback=form, the default) gets a second image, its no-TMA
 * form, which a launch with a tensor no tensor map can take runs (docs/aot.md
 * "Two images"); with tma-fallback=inline, one image a kernel.  name must be a
 * C identifier (the prefix of every generated symbol).  p is compiled to PTX
 * (and CUBIN) if it is not already.  TILEC_ERROR_UNSUPPORTED when a grid
 * clause uses a non-integer op. */
TILEC_API tilec_status tilec_program_emit_c(tilec_program *p, const char *name, char **header, char **source);

/* ---- arguments -------------------------------------------------------------- */
typedef enum tilec_arg_kind {
  TILEC_ARG_TENSOR = 0,
  TILEC_ARG_I32, TILEC_ARG_I64, TILEC_ARG_F32, TILEC_ARG_F64
} tilec_arg_kind;

typedef struct tilec_arg {
  tilec_arg_kind kind;
  union {
    const DLTensor *tensor; /* strides NULL = compact row-major */
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } u;
} tilec_arg;

/* ---- bindings: the TVM FFI C ABI (lib/api/ffi_tvm.c) --------------------------- */
/* A TVMFFISafeCallType (apache-tvm-ffi's packed call: args are TVMFFIAny[nargs],
 * *out receives the result): tilec_ffi_launch(table, stream, *kernel_args) ->
 * int, a launch of the kernel in `table` (per CUDA device a tilec_kernel *, and
 * which parameters are floats) on `stream` (None: the stream tvm-ffi set for
 * the call).  The result is 0, a tilec_status, or -1 (not taken: the caller
 * uses tilec_kernel_launch).  The Python package calls it through
 * tvm_ffi.Function.__from_extern_c__ (docs/python.md "Launch cost"); the file
 * says the layout of the table and what each argument may be. */
TILEC_API int tilec_ffi_launch(void *self, const void *args, int32_t nargs, void *out);

/* ---- CPU interpreter (the oracle) ------------------------------------------ */
/* Run kernel `kernel` (NULL = the only/first one) over its whole grid on host
 * tensors (device_type kDLCPU).  Arguments are in parameter order; scalar
 * arguments are converted to the parameter's type (an integer for an 8- to
 * 32-bit integer parameter must fit its width, signed or unsigned).  Checks are those of a
 * launch (dtype, rank, shape symbols, constant dims).  Needs TILEC_STAGE_IR. */
TILEC_API tilec_status tilec_interpret(tilec_program *p, const char *kernel,
                                       const tilec_arg *args, int nargs);

/* ---- JIT: load and launch on a GPU ------------------------------------------ */
typedef struct tilec_kernel tilec_kernel;

/* Load the CUDA driver (cuInit) and retain device `device`'s primary context,
 * making it current on the calling thread: what the first tilec_kernel_load
 * on that device would otherwise do.  Calling it first lets a caller (or a
 * benchmark) keep driver start-up, which costs about 100 ms and is not
 * tilec's, apart from tilec's own load time.  Idempotent and thread safe;
 * later calls are cheap.  TILEC_ERROR_CUDA (no driver or a driver error),
 * TILEC_ERROR_NO_DEVICE (no such device) or TILEC_ERROR_UNSUPPORTED (compute
 * capability below 8.0). */
TILEC_API tilec_status tilec_device_init(int device);

/* Compile p to PTX if needed, load `kernel` (NULL = first) on CUDA device
 * `device`, using the memory and disk cache.  Errors return a status and
 * details in tilec_program_log(p).  The kernel refers to p's IR (argument
 * checks, grid), so p must outlive it and must not be used by another thread
 * while the kernel is launched.  A cached kernel (same source, defines,
 * options, arch, tilec/LLVM/driver versions) skips the compile to PTX and
 * the driver's JIT: see docs/runtime.md. */
TILEC_API tilec_status tilec_kernel_load(tilec_program *p, const char *kernel, int device,
                                         tilec_kernel **out);
TILEC_API void tilec_kernel_destroy(tilec_kernel *k);

/* Load user-supplied PTX (NUL-terminated; e.g. what `tilec FILE.tile -o
 * X.ptx` wrote, compiled offline) as kernel `kernel` (NULL = first) of p on
 * CUDA device `device`.  p gives the kernel's signature, grid and launch
 * configuration (block size, dynamic shared memory, .entry name): p is
 * compiled to TILEC_STAGE_PTX if it is not already, so the PTX must come from
 * the same source and options (defines, arch, pipeline, entry-name).  The PTX
 * must contain that .entry with the same parameter types as p's PTX
 * (checked: TILEC_ERROR_USAGE otherwise).  The driver JIT-compiles it for the
 * device (its .version lowered to fit the driver, as for tilec_kernel_load;
 * a .target the device cannot run is TILEC_ERROR_CUDA with the driver's log
 * in tilec_program_log); no cache is used and the module
 * belongs to the kernel handle (unloaded by tilec_kernel_destroy).  Origin:
 * "user-ptx".  Launch with tilec_kernel_launch.  A TMA form's PTX (the
 * CLI's default file) that also has the entry ENTRY__notma (same parameter
 * types, checked) runs that entry for launches whose tensors fail the map
 * test, its launch configuration from p's own compile of it at the first
 * such launch; without it such a launch is refused (docs/cli.md "Two
 * entries", docs/runtime.md). */
TILEC_API tilec_status tilec_kernel_load_ptx(tilec_program *p, const char *kernel, const char *ptx,
                                             int device, tilec_kernel **out);

/* Check arguments, compute the grid from the kernel's grid clause and launch
 * on `stream` (a CUstream; NULL = default stream).  No allocation and no
 * synchronization, so it can be captured in a CUDA graph.  A kernel handle
 * is used by one thread at a time. */
TILEC_API tilec_status tilec_kernel_launch(tilec_kernel *k, const tilec_arg *args, int nargs,
                                           void *stream);
/* The same with the grid given (grid[0..2], each >= 0 and within the
 * device's limits; a 0 launches nothing) instead of the kernel's grid
 * clause: for a caller that launches fewer or more programs than the clause
 * says (the kernel masks by its own sizes, so extra programs must be harmless
 * to it).  The arguments are checked as by tilec_kernel_launch. */
TILEC_API tilec_status tilec_kernel_launch_grid(tilec_kernel *k, const tilec_arg *args, int nargs,
                                                const int64_t grid[3], void *stream);
/* Message of the last failed call on k; never NULL. Owned by k. */
TILEC_API const char *tilec_kernel_error(const tilec_kernel *k);
/* Where k's code came from: "compiled" (tilec + driver JIT), "disk-cache"
 * (a cubin from an earlier process), "memory-cache" (already loaded in this
 * process) or "user-ptx" (tilec_kernel_load_ptx).  Static storage; "" for NULL. */
TILEC_API const char *tilec_kernel_origin(const tilec_kernel *k);
/* Launch configuration of k, for callers that launch its code themselves
 * (benchmarks, graph builders): block size (threads), dynamic shared memory
 * bytes and the PTX .entry name (owned by k).  Any pointer may be NULL. */
TILEC_API tilec_status tilec_kernel_config(const tilec_kernel *k, int *threads, int *smem_bytes,
                                           const char **entry);

/* ---- autotuning (docs/autotune.md) -------------------------------------------- */
/* A search space: for each name, the values to try.  A name is a tile
 * constant of the kernel (as for tilec_options_define), or "warps" or
 * "stages" (as the options of the same names), or "cluster" (11, 21, 12:
 * the option "cluster" = 1x1, 2x1, 1x2).  Every combination is one
 * configuration (the first name varies slowest). */
typedef struct tilec_tune_param {
  const char *name;
  const int64_t *values;
  int nvalues;
} tilec_tune_param;

typedef struct tilec_tune_space {
  const tilec_tune_param *params;
  int nparams;            /* 0..TILEC_TUNE_MAX_PARAMS */
  double target_ms;       /* GPU time to spend timing one configuration; 0 = 100 ms */
  int no_cache;           /* nonzero: neither read nor write the winner cache */
} tilec_tune_space;

#define TILEC_TUNE_MAX_PARAMS 16
#define TILEC_TUNE_MAX_CONFIGS 4096

/* One configuration as it is reported to the progress callback. */
typedef struct tilec_tune_config {
  int index, count;          /* configuration index (0-based) of count */
  const char *desc;          /* "BM=128 BN=64 warps=8" */
  double ms;                 /* median time of one launch; < 0 when skipped */
  int runs;                  /* timed launches the median is over */
  const char *skip_reason;   /* why it was skipped (one line); NULL when timed */
} tilec_tune_config;
/* Called after each configuration; strings are valid during the call only.
 * Return nonzero to stop tuning (the best so far is returned). */
typedef int (*tilec_tune_progress_fn)(const tilec_tune_config *c, void *user);

typedef struct tilec_tune_result {
  int nparams;                                  /* the winner, one value per space name */
  char names[TILEC_TUNE_MAX_PARAMS][64];
  int64_t values[TILEC_TUNE_MAX_PARAMS];
  double ms;                                    /* the winner's median launch time */
  double worst_ms;                              /* the slowest valid configuration's */
  int nconfigs, nvalid;                         /* tried, and of those compiled and timed */
  int from_cache;                               /* 1: returned from the winner cache, nothing ran */
  char shape_class[256];                        /* "K=4096 M=4096 N=4096" (power-of-two ceilings) */
  char summary[512];                            /* "best of 12 configs: BM=128 warps=8: 0.412 ms (2.1x the worst)" */
  char log[2048];                               /* notes (cache misses, errors), possibly cut */
} tilec_tune_result;

/* Tune kernel `kernel` (NULL = the first) of a .tile source (a path when
 * is_path, else the source text) compiled with `base` (may be NULL) over
 * `space`, by launching it on CUDA device `device` with `args` (device
 * tensors and scalars, as for tilec_kernel_launch).  The caller's tensors are
 * never written: every tensor the kernel stores into is replaced by a
 * zero-filled scratch buffer of the same size during tuning.  Configurations
 * that do not compile or do not fit the device (shared memory, registers,
 * threads) are skipped with their reason.  Each valid one is timed with CUDA
 * events: a warm-up, then the median of N back-to-back launches, N chosen
 * from a first estimate so that timing takes about space->target_ms.  The
 * winner is cached on disk (the tilec cache directory, docs/runtime.md) under
 * a key of the source, kernel, base options, space, shape class (each shape
 * symbol rounded up to a power of two) and device (name, compute capability,
 * driver version); a later call with the same key returns it with
 * from_cache = 1 without compiling or launching anything.
 * Returns TILEC_OK with *out filled when at least one configuration ran;
 * TILEC_ERROR_UNSUPPORTED when none was valid (the reasons went to progress
 * and out->log); TILEC_ERROR_INPUT / TILEC_ERROR_IO when the base program does
 * not compile / cannot be read; TILEC_ERROR_USAGE for a bad space or bad
 * arguments; TILEC_ERROR_NO_DEVICE / TILEC_ERROR_CUDA from the driver. */
TILEC_API tilec_status tilec_autotune(const char *source_or_path, int is_path, const tilec_options *base,
                                      const char *kernel, const tilec_tune_space *space, const tilec_arg *args,
                                      int nargs, int device, tilec_tune_progress_fn progress, void *user,
                                      tilec_tune_result *out);
/* Apply a tuning result to options: a define per tile constant, and the
 * "warps" / "stages" options. */
TILEC_API tilec_status tilec_tune_apply(const tilec_tune_result *r, tilec_options *o);

#ifdef __cplusplus
}
#endif
#endif
