/* runtime.h: tilec's CUDA Driver API runtime (internal to libtilec).
 *
 *   loader.c   libcuda.so.1 via dlopen, entry points via cuGetProcAddress,
 *              one primary context per device, device limits.
 *   module.c   PTX -> cubin through the driver's JIT linker (with the PTX
 *              .version fitted to the driver), cubin -> CUmodule.
 *   hash.c     SHA-256 (cache keys), a fast checksum (cache entries).
 *   buildid.c  this build's identity (version + ELF build-id), for the key.
 *   cache.c    the kernel cache: key, in-memory map, on-disk cubin entries.
 *   pack.c     kernel arguments -> the parameter buffer of the kernel ABI.
 *
 * Every function returns a TL_OK / TL_ERR_* code (util.h) and, on failure,
 * appends a readable reason to `msg` (or writes it into err[n]).  Nothing
 * here prints, exits or aborts.  All global state is internally locked. */
#ifndef TILEC_RUNTIME_H
#define TILEC_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_api.h"
#include "interp.h"
#include "util.h"

/* ---- loader.c ---------------------------------------------------------------- */
typedef struct tl_cuda {
  int driver_version;               /* cuDriverGetVersion: 13000 = CUDA 13.0 */
  PFN_cuGetErrorName cuGetErrorName;
  PFN_cuGetErrorString cuGetErrorString;
  PFN_cuDriverGetVersion cuDriverGetVersion;
  PFN_cuDeviceGetCount cuDeviceGetCount;
  PFN_cuDeviceGet cuDeviceGet;
  PFN_cuDeviceGetAttribute cuDeviceGetAttribute;
  PFN_cuDeviceGetName cuDeviceGetName;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
  PFN_cuCtxSetCurrent cuCtxSetCurrent;
  PFN_cuCtxGetCurrent cuCtxGetCurrent;
  PFN_cuLinkCreate cuLinkCreate;
  PFN_cuLinkAddData cuLinkAddData;
  PFN_cuLinkComplete cuLinkComplete;
  PFN_cuLinkDestroy cuLinkDestroy;
  PFN_cuModuleLoadData cuModuleLoadData;
  PFN_cuModuleLoadDataEx cuModuleLoadDataEx;
  PFN_cuModuleUnload cuModuleUnload;
  PFN_cuModuleGetFunction cuModuleGetFunction;
  PFN_cuFuncGetAttribute cuFuncGetAttribute;
  PFN_cuFuncSetAttribute cuFuncSetAttribute;
  PFN_cuLaunchKernel cuLaunchKernel;
  /* timing and scratch memory (runtime/timing.c, the autotuner); an injected
   * table may leave these NULL: timing then fails with a message */
  PFN_cuCtxSynchronize cuCtxSynchronize;
  PFN_cuStreamSynchronize cuStreamSynchronize;
  PFN_cuEventCreate cuEventCreate;
  PFN_cuEventRecord cuEventRecord;
  PFN_cuEventSynchronize cuEventSynchronize;
  PFN_cuEventElapsedTime cuEventElapsedTime;
  PFN_cuEventDestroy cuEventDestroy;
  PFN_cuMemAlloc cuMemAlloc;
  PFN_cuMemFree cuMemFree;
  PFN_cuMemsetD8 cuMemsetD8;
  /* CUDA 12.0+; NULL when the driver lacks it: a kernel with tensor maps then
   * fails to launch with a message */
  PFN_cuTensorMapEncodeTiled cuTensorMapEncodeTiled;
  /* TILEC_CHECK_POINTERS=1 only; NULL in an injected table that lacks it:
   * the check then fails with a message */
  PFN_cuPointerGetAttribute cuPointerGetAttribute;
  /* optional; NULL where missing: a thread that loads kernels in the background (a kernel's forms,
   * lib/api/forms.c) puts itself in relaxed capture mode, so that a graph captured meanwhile on
   * another thread in global mode neither refuses nor is invalidated by its module loads */
  PFN_cuThreadExchangeStreamCaptureMode cuThreadExchangeStreamCaptureMode;
  /* optional (CUDA 11.2+); NULL where missing: TILEC_PITCH_REPACK=1 then leaves a tensor no map can
   * take to the no-TMA form, as without it (lib/api/pitch_repack.c) */
  PFN_cuMemAllocAsync cuMemAllocAsync;
  PFN_cuMemFreeAsync cuMemFreeAsync;
  PFN_cuMemcpy2DAsync cuMemcpy2DAsync;
  /* optional (every CUDA 10+ driver has them); NULL where missing: a TILEC_ATTN_SCHED=1 kernel's launch
   * then fails with a message without cuMemsetD32Async, and without cuStreamIsCapturing counts no
   * stream as capturing (lib/api/sched_slot.c) */
  PFN_cuMemsetD32Async cuMemsetD32Async;
  PFN_cuStreamIsCapturing cuStreamIsCapturing;
} tl_cuda;

/* Load the driver and resolve its entry points, once per process (thread
 * safe).  The library is libcuda.so.1, or $TILEC_LIBCUDA when set (tests).
 * TL_ERR_CUDA "libcuda.so.1 not found (no NVIDIA driver)" when it cannot be
 * loaded; TL_ERR_NO_DEVICE when cuInit finds no device.  The outcome, good or
 * bad, is remembered. */
int tl_rt_driver(const tl_cuda **out, char *err, size_t n);

/* Tests without a GPU: use `table` (every entry point set, driver_version
 * included) as the driver instead of loading libcuda.  Effective only when
 * called before the first tl_rt_driver of the process; false otherwise. */
bool tl_rt_driver_inject(const tl_cuda *table);

#define TL_RT_MAX_DEVICES 64
typedef struct tl_rt_device {
  int ordinal;
  CUdevice dev;
  CUcontext ctx;            /* the primary context, retained for the process */
  char name[128];
  int cc_major, cc_minor;
  char arch[16];            /* what tilec compiles for it: "sm_90a", "sm_89", "sm_80" */
  int max_threads_block, max_regs_block, max_smem_block, max_smem_optin, sm_count;
  int max_grid[3];
} tl_rt_device;

/* Device `ordinal` with its primary context retained (once; thread safe).
 * TL_ERR_NO_DEVICE when there is no such device. */
int tl_rt_device_get(int ordinal, const tl_rt_device **out, char *err, size_t n);
/* "sm_XX[a]" of device `device` into buf; false without driver/device
 * (also declared in lib/api/program.h, for api.c). */
bool tl_rt_device_arch(int device, char *buf, size_t n);
/* Make d's primary context current on the calling thread if it is not. */
int tl_rt_make_current(const tl_rt_device *d, char *err, size_t n);
/* "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)" into buf. */
const char *tl_rt_result_text(CUresult r, char *buf, size_t n);
/* tilec's target name for a compute capability: 9.0 -> "sm_90a" (Hopper's
 * wgmma/TMA need the arch-specific target), 10.0+ -> "sm_90" (forward
 * compatible PTX), 8.9 -> "sm_89", 8.x -> "sm_80"; false below 8.0. */
bool tl_rt_arch_for_cc(int major, int minor, char *buf, size_t n);

/* ---- module.c ----------------------------------------------------------------- */
/* The PTX ISA version (10 * major + minor) the driver of CUDA version
 * `driver_version` (cuDriverGetVersion) accepts at most; see docs/runtime.md. */
int tl_ptx_isa_for_driver(int driver_version);
/* The lowest PTX ISA that can express target `arch` ("sm_90a" -> 80). */
int tl_ptx_isa_min_for_arch(const char *arch);
/* ".version X.Y" of ptx as 10 * X + Y; -1 when absent or malformed. */
int tl_ptx_read_version(const char *ptx);
/* ".target sm_XX[a]" of ptx into buf; false when absent. */
bool tl_ptx_read_target(const char *ptx, char *buf, size_t n);
/* A malloc'd copy of ptx whose .version line says `isa`; NULL on no memory
 * or when ptx has no .version line. */
char *tl_ptx_set_version(const char *ptx, int isa);
/* CUjit_target value for "sm_90a" (0x10000 + 90), "sm_89" (89); -1 if bad. */
int tl_jit_target_for_arch(const char *arch);

typedef struct tl_jit_request {
  const char *ptx;          /* NUL-terminated */
  const char *kernel;       /* for messages */
  const char *arch;         /* the PTX's target, e.g. "sm_90a" */
  int opt_level;            /* CU_JIT_OPTIMIZATION_LEVEL 0..4 */
} tl_jit_request;

/* PTX -> cubin (malloc'd, *cubin / *size) with the driver's JIT linker.  The
 * PTX .version is lowered first when the driver is older than the ISA the
 * codegen emitted.  Failure: TL_ERR_CUDA with the JIT error log, kernel,
 * arch, PTX ISA and driver version in msg.  The info log (registers,
 * spills) is appended to info when not NULL. */
int tl_rt_ptx_to_cubin(const tl_rt_device *d, const tl_jit_request *rq, void **cubin, size_t *size,
                       tl_sbuf *info, tl_sbuf *msg);
/* The PTX the driver compiles whole at load (cuModuleLoadDataEx: not as relocatable code, as
 * cuLink does, which costs registers: layernorm 56 -> 79): a malloc'd copy of rq->ptx with its
 * .version fitted to the driver, as tl_rt_ptx_to_cubin fits it.  *size counts the NUL. */
int tl_rt_ptx_image(const tl_rt_device *d, const tl_jit_request *rq, void **image, size_t *size, tl_sbuf *msg);
/* true when image is a cubin (ELF), false when it is PTX text (tl_rt_ptx_image). */
bool tl_rt_image_is_cubin(const void *image, size_t size);
/* image (a cubin, or PTX compiled whole by the driver's JIT with its target and error log)
 * -> module -> function `entry` (d's context made current). */
int tl_rt_load_function(const tl_rt_device *d, const void *cubin, const char *entry, CUmodule *mod,
                        CUfunction *fn, tl_sbuf *msg);

/* ---- timing.c -------------------------------------------------------------------- */
/* Enqueue one launch on stream s; TL_OK, or an error code with err filled. */
typedef int (*tl_launch_fn)(void *user, CUstream s, char *err, size_t n);
typedef struct tl_time_opts {
  double target_ms;       /* GPU time to spend on the timed runs; <= 0: 100 ms */
  int min_runs, max_runs; /* bounds on N; <= 0: 5 and 200 */
  /* enqueued before every launch (all of them: the first, the estimate's, the warm-up's, the timed
   * ones), outside the timed interval: zeroing the @zeroed tensors; NULL = none.  Called with the
   * launch's `user`. */
  tl_launch_fn before;
} tl_time_opts;
typedef struct tl_time_result {
  double median_ms, min_ms, max_ms; /* over the N timed launches */
  double estimate_ms;               /* the first estimate N was chosen from */
  int runs, warmup;                 /* N, and the warm-up launches before them */
} tl_time_result;
/* Time `launch` on device d (its context made current) with CUDA events on
 * the default stream: one launch and a context synchronize (a kernel fault is
 * TL_ERR_CUDA with the driver's message), a first estimate over 3 launches, a
 * warm-up of about a fifth of target_ms, then N = target_ms / estimate
 * launches (within the bounds) back to back, an event between each two; the
 * median of the N intervals is the time of one launch.  With o->before, each
 * launch has its own pair of events, recorded after `before`'s work and after
 * the launch, so that work is never timed (the estimate is the mean of 3 such
 * pairs).  Errors: TL_ERR_CUDA (also when the driver table lacks an event
 * entry point) with msg. */
int tl_rt_time_launches(const tl_rt_device *d, tl_launch_fn launch, void *user, const tl_time_opts *o,
                        tl_time_result *out, tl_sbuf *msg);
/* Zero-filled device memory of `bytes` (at least 1) on d: scratch buffers. */
int tl_rt_scratch_alloc(const tl_rt_device *d, size_t bytes, CUdeviceptr *out, tl_sbuf *msg);
void tl_rt_scratch_free(const tl_rt_device *d, CUdeviceptr p);
/* Zero `bytes` at p on the default stream (cuMemsetD8: ordered with the launches there), the
 * device's context current; TL_OK or TL_ERR_CUDA with err. */
int tl_rt_zero(CUdeviceptr p, size_t bytes, char *err, size_t n);

/* ---- hash.c --------------------------------------------------------------------- */
typedef struct tl_sha256_ctx {
  uint32_t h[8];
  uint64_t nbytes;
  uint8_t buf[64];
  size_t nbuf;
} tl_sha256_ctx;
void tl_sha256_init(tl_sha256_ctx *s);
void tl_sha256_update(tl_sha256_ctx *s, const void *data, size_t n);
void tl_sha256_final(tl_sha256_ctx *s, uint8_t out[32]);
void tl_sha256(const void *data, size_t n, uint8_t out[32]);
/* Cache-key fields (name, 8-byte length, bytes; NULL strings distinct from
 * ""), shared by the kernel cache and the autotuner's winner key. */
void tl_sha256_field(tl_sha256_ctx *s, const char *name, const void *data, size_t n);
void tl_sha256_field_str(tl_sha256_ctx *s, const char *name, const char *v);
void tl_sha256_field_int(tl_sha256_ctx *s, const char *name, int64_t v);
/* A fast 64-bit checksum (not cryptographic) of cache entry payloads: any
 * change confined to one aligned 8-byte word of data changes it; see hash.c. */
uint64_t tl_checksum64(const void *data, size_t n);

/* ---- buildid.c ------------------------------------------------------------------------ */
/* "0.1.0+<hex ELF build-id of the object holding tilec's code>" (computed
 * once), or "0.1.0+no-build-id" where the linker wrote none.  The key's
 * tilec version: two builds of one version string with different code never
 * share a cache entry. */
const char *tl_build_identity(void);

/* ---- cache.c ------------------------------------------------------------------------ */
typedef struct tl_cache_key { uint8_t b[32]; } tl_cache_key;

/* Everything the compiled kernel depends on.  Every field changes the key.
 * Options that only change what is printed (print-after, time-passes,
 * verify-each, max-errors, explain) are left out on purpose. */
typedef struct tl_cache_key_fields {
  const char *source; size_t source_len;
  const char *kernel;                 /* tile kernel name */
  const char *const *define_names;    /* -D overrides, as given (later wins) */
  const int64_t *define_values;
  int ndefines;
  const char *arch;                   /* "sm_90a" */
  int opt_level, line_info;
  const char *pipeline;               /* NULL = by name/attribute */
  const char *entry_name;             /* NULL = kernel name */
  const char *tilec_version, *llvm_version;
  int driver_version;
  int jit_opt_level;
  int warps, stages;                  /* option overrides; 0 = none */
  int maxnreg;                        /* the maxnreg option; 0 = none */
  int fp8_acc_fast;                   /* "fp8-acc": 0 = promote, 1 = fast */
  const char *extra;                  /* any other option that changes code, canonical text; NULL = none */
} tl_cache_key_fields;
void tl_cache_key_compute(const tl_cache_key_fields *f, tl_cache_key *out);
void tl_cache_key_hex(const tl_cache_key *k, char out[65]);

#define TL_CACHE_MAX_PARAMS 64
#define TL_CACHE_MAX_TMA 8
/* A hidden tensor-map parameter (lib/codegen/codegen.h tl_tma_desc). */
typedef struct tl_rt_tma {
  int32_t param, box_inner, box_rows, swizzle, dtype;
} tl_rt_tma;
/* What a launcher needs besides the cubin (stored with it on disk). */
typedef struct tl_cache_meta {
  char entry[256];                    /* PTX .entry name */
  int32_t threads, smem_bytes;
  int32_t nparams;                    /* entries of param_align */
  int32_t param_align[TL_CACHE_MAX_PARAMS]; /* bytes; 0 = element size only */
  int32_t ntma;                       /* hidden tensor maps, after the ABI's parameters */
  tl_rt_tma tma[TL_CACHE_MAX_TMA];
  bool persist;                       /* persistent CTAs: launch min(tiles, what fits) CTAs along x */
  int32_t cluster;                    /* 0, or persistent CTAs in clusters of 2 (the PTX's .reqnctapercluster)
                                       * whose tiles are adjacent along grid axis cluster - 1: launch
                                       * 2 x min(tile pairs, what fits / 2) (lib/codegen/emit_cluster.c) */
  uint32_t assumed_key;               /* launch key bits the kernel assumes (TILEC_VEC_ONLY=1; tl_kernel_info) */
  bool sched_ctr;                     /* the hidden tile counter last (TILEC_ATTN_SCHED=1; lib/api/sched_slot.c) */
} tl_cache_meta;

/* The cache directory: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else
 * $HOME/.cache/tilec, created with mode 0700 (missing parents too).  false
 * when none can be made ($TILEC_CACHE_DIR="" or TILEC_CACHE=0 disables the
 * disk cache), and, with the reason in msg, when the directory is owned by
 * another user or writable by group or others (docs/runtime.md). */
bool tl_cache_dir(char *buf, size_t n, tl_sbuf *msg);

enum { TL_CACHE_MISS = 0, TL_CACHE_HIT = 1 };
/* Read entry `key` from dir.  A missing, truncated, corrupt or foreign entry,
 * one owned by another user, a symbolic link or anything not a regular file
 * is a miss (reason appended to why when not NULL, except for a plain
 * "no entry"), never an error.  On a hit *cubin is malloc'd. */
int tl_cache_disk_load(const char *dir, const tl_cache_key *key, tl_cache_meta *meta, void **cubin,
                       size_t *size, tl_sbuf *why);
/* Publish entry `key` atomically (temp file, fsync, rename; replaces any old
 * entry).  TL_OK or TL_ERR_IO with the reason in msg. */
int tl_cache_disk_store(const char *dir, const tl_cache_key *key, const tl_cache_meta *meta,
                        const void *cubin, size_t size, tl_sbuf *msg);
/* Tests only: every later publish fails at `step` with errno `err` (0 = no
 * fault), as a full (ENOSPC), read-only (EROFS) or failing (EIO) disk would;
 * a write fault first writes `after_bytes` bytes of the entry. */
typedef enum { TL_CACHE_FAULT_NONE, TL_CACHE_FAULT_CREATE, TL_CACHE_FAULT_WRITE, TL_CACHE_FAULT_FSYNC,
               TL_CACHE_FAULT_RENAME } tl_cache_fault_step;
void tl_cache_fault_inject(tl_cache_fault_step step, int err, size_t after_bytes);
/* The path of entry `key` in dir ("<dir>/<64 hex>.tlk"). */
void tl_cache_entry_path(const char *dir, const tl_cache_key *key, char *buf, size_t n);

/* In-memory map (key, device) -> loaded function; modules stay loaded for
 * the life of the process. */
typedef struct tl_cache_loaded {
  CUmodule module;
  CUfunction function;
  tl_cache_meta meta;
} tl_cache_loaded;
bool tl_cache_mem_find(const tl_cache_key *key, int device, tl_cache_loaded *out);
/* Insert; when another thread inserted the same key first, *inout becomes
 * that entry (and the caller's module is unloaded through the driver). */
void tl_cache_mem_insert(const tl_cache_key *key, int device, tl_cache_loaded *inout);

/* ---- pack.c --------------------------------------------------------------------------- */
/* Layout of the kernel parameter buffer for f (codegen.h's ABI): one slot
 * per ABI parameter, each at its natural alignment. */
#define TL_MAX_ABI_PARAMS (TL_CACHE_MAX_PARAMS * (1 + 2 * TL_MAX_RANK) + TL_CACHE_MAX_TMA)
typedef struct tl_abi_layout {
  int nslots;
  int ntma;                              /* the last ntma slots: 128-byte tensor maps, 64-aligned */
  size_t bytes;                          /* size of the buffer */
  uint32_t offset[TL_MAX_ABI_PARAMS];    /* slot offsets in the buffer */
} tl_abi_layout;
/* false + err when f has more parameters than the ABI buffers allow.  ntma:
 * hidden tensor-map parameters after f's (tl_cache_meta.ntma). */
bool tl_abi_layout_for(const tl_func *f, int ntma, tl_abi_layout *out, char *err, size_t n);
/* Write args (already checked against f) into buf and point slots[i] at each
 * slot (the tensor-map slots too; their bytes are the caller's: tl_tma_encode).
 * false + err when a size does not fit the ABI's u32. */
bool tl_abi_pack(const tl_func *f, const tl_abi_layout *l, const tl_arg *args, void *buf, void **slots,
                 char *err, size_t n);

/* The tensor map of a tl_rt_tma for argument a (a tensor of rank 2..5, the
 * tile its last two dims, codegen.h) into
 * map (128 bytes, 64-byte aligned): 1 = encoded, 0 = the argument fails the
 * kernel's map test (codegen.h: the kernel then never reads the map, which
 * is zeroed), -1 = the driver refused (reason in err). */
int tl_tma_encode(const tl_cuda *cu, const tl_rt_tma *t, const tl_arg *a, void *map, char *err, size_t n);
/* The map test itself (codegen.h's ABI; the kernel makes the same one): a rank 2..5, the last
 * stride 1, the base and every other byte stride 16-byte aligned and in (0, 2^40), no size 0;
 * eb = the element's bytes. */
bool tl_tma_fits(const tl_arg *a, int eb);

#endif
