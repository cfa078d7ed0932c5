/* kernel_handle.h: what the files of the JIT share (requires program.h and runtime/; keeps and
 * breaks nothing): the tilec_kernel handle, and the calls between jit.c (loading a kernel),
 * forms.c (building, loading and joining its launch-time forms), launch.c (the launch core) and
 * form_launch.c (routing a launch to a form). */
#ifndef TILEC_KERNEL_HANDLE_H
#define TILEC_KERNEL_HANDLE_H

#include "program.h"
#include "runtime.h"
#include "small_m.h"
#include "kmajor_b.h"
#include "hoist_operand.h"

/* The forms of one kernel being loaded on their threads (forms.c). */
typedef struct tl_form_jobs tl_form_jobs;
/* The tile counters of a TILEC_ATTN_SCHED=1 kernel, a pair a stream (sched_slot.c). */
typedef struct tl_sched_slots tl_sched_slots;

struct tilec_kernel {
  tilec_program *p;
  tl_func *f;
  const tl_rt_device *dev;
  CUfunction fn;
  CUfunction vec_fn;       /* row kernels: the variant without the per-element fallback, or NULL (docs/rows.md "rows5") */
  uint32_t vec_key;        /* the launch key bits vec_fn assumes */
  CUmodule owned_module; /* tilec_kernel_load_ptx: unloaded with the handle; else NULL (the cache's) */
  tl_cache_meta meta;
  const char *origin;
  int nparams;
  /* launch buffers, allocated once at load */
  tl_abi_layout layout;
  tl_arg *targs;
  void *argbuf;
  void **slots;            /* layout.nslots, then (meta.sched_ctr) &sched_arg */
  /* TILEC_ATTN_SCHED=1 (meta.sched_ctr): the tile counters, one pair of u32 words a stream, and the
   * address this launch passes (sched_slot.c, docs/runtime.md "Tile counters") */
  tl_sched_slots *sched;
  CUdeviceptr sched_arg;
  /* the argument signature (dtype, rank, sizes, scalar bits) of the last
   * launch whose checks and grid succeeded, and that grid */
  int64_t *last_sig, *sig;
  size_t sig_len;
  bool have_last;
  int64_t grid[3];
  int64_t max_ctas;        /* persistent kernels (meta.persist): CTAs that run at once on the device */
  tl_grid_eval *grid_eval; /* made at load: the launch path allocates nothing */
  bool check_pointers;     /* TILEC_CHECK_POINTERS=1 when the handle was made */
  /* tensor maps (meta.ntma, codegen.h): the argument each was last encoded
   * for (pointer, sizes, strides); a launch with the same one reuses the
   * bytes already in argbuf */
  struct { const void *data; int64_t shape[TL_MAX_RANK], strides[TL_MAX_RANK]; bool valid, fits; } tma_key[TL_CACHE_MAX_TMA];
  /* a TMA form (tl_kernel_info.tma_form, codegen.h): the kernel has no path for tensors a map
   * cannot take; launches with such a tensor run notma, its no-TMA form, loaded at the first one
   * (docs/codegen.md "Round 9") */
  bool tma_form;
  tilec_kernel *notma;
  /* tilec_kernel_load_ptx of a TMA form whose PTX carries its no-TMA entry ENTRY__notma (the CLI's
   * default, codegen.h TL_NOTMA_SUFFIX): notma is that entry of owned_module, its launch
   * configuration from p's own compile of it, made at the first launch that needs it
   * (notma_entry.c); maps_unread: a handle of such an entry (its maps declared, never read: a
   * launch leaves them zero and encodes none) */
  bool user_notma, maps_unread;
  /* TILEC_PITCH_REPACK=1 when the handle was made (pitch_repack.c): a tensor map's argument that
   * the kernel only reads (bit i of `written` clear: no store or atomic on parameter i) and that
   * fails the map test with a unit last stride is copied into a 16-byte pitch at each launch;
   * repack_noted: the parameters whose first repack the program log has said */
  bool pitch_repack;
  uint64_t written, repack_noted;
  /* the program whose log a launch's notes go to (the no-TMA form loaded, a repack): p, or for a
   * form the program of the kernel that adopted it (the one the user holds) */
  tilec_program *log_p;
  char arch[32]; /* (what notma is compiled for) */
  /* small-M forms (passes/small_m.c, docs/small_m.md): launches whose M (argument m_param's
   * dimension m_axis) is at most form_max_m[i] go to forms[i], the first such */
  int nforms;
  int32_t m_param, m_axis;
  int64_t form_max_m[TL_SMALL_M_MAX_FORMS];
  tilec_kernel *forms[TL_SMALL_M_MAX_FORMS];
  tilec_program *form_progs[TL_SMALL_M_MAX_FORMS];
  /* split-K forms: forms[i] is the partial half, reduces[i] the reduce half; both take the
   * kernel's arguments and P f32[SPLIT, M, N] (the workspace, grown on demand, kept) */
  tl_small_m_form form_of[TL_SMALL_M_MAX_FORMS];
  tilec_kernel *reduces[TL_SMALL_M_MAX_FORMS];
  tilec_program *reduce_progs[TL_SMALL_M_MAX_FORMS];
  int32_t n_param, n_axis, k_param, k_axis;
  /* the waves form (form_of[i].waves, docs/small_m.md "Waves"): the last shape's pick, and how many
   * picks the program log has said (the first few shapes of a handle) */
  bool waves_have, waves_pick;
  int64_t waves_m, waves_n;
  int waves_notes;
  CUdeviceptr ws;
  size_t ws_bytes;
  /* the smaller workspaces a larger one replaced: kept until the handle goes, since a CUDA graph
   * captured with one of them still reads and writes it when replayed (at most 16; then the
   * oldest is freed: docs/small_m.md) */
  CUdeviceptr ws_old[16];
  int nws_old;
  tilec_arg *split_args;   /* nparams + 1: the caller's, then P */
  DLTensor split_p;
  int64_t split_p_shape[3];
  /* the K-major-B form (passes/kmajor_form.c, lib/kmajor_b.h): kmajor is the kernel with B stored
   * [N, K]; transpose writes an N-major B [K, N] into the workspace (ws) as [N, K], rows padded to
   * 16 bytes; launches whose M is at most kmajor_min_m keep an N-major B on the kernel itself */
  tl_kmajor_plan kplan;
  tilec_kernel *kmajor, *transpose;
  tilec_program *kmajor_prog, *transpose_prog;
  int64_t kmajor_min_m;
  tilec_arg *kmajor_args;  /* nparams: the caller's, B replaced by its [N, K] view */
  tilec_arg transpose_args[2];
  /* the materialize-once form (passes/hoist_form.c, lib/hoist_operand.h): hoist is the kernel with B
   * a plain load of the workspace `hoisted` [K, N], hoist_pre writes B's tiles there; launches whose
   * M is at least hoist_min_m run hoist_pre then hoist (hoist_args: the caller's, then the workspace) */
  tl_hoist_plan hplan;
  tilec_kernel *hoist, *hoist_pre;
  tilec_program *hoist_prog, *hoist_pre_prog;
  int64_t hoist_min_m;
  tilec_arg *hoist_args;
  DLTensor hoist_w;
  int64_t hoist_w_shape[2], hoist_w_strides[2];
  bool hoist_said_on, hoist_said_off; /* the program log's notes, once each a handle */
  /* the FlashAttention-3 form (passes/attn_form.c, lib/attn_form.h): launches whose S (argument
   * attn_s_param's dimension attn_s_axis) is at least attn_min_s run it */
  tilec_kernel *attn;
  tilec_program *attn_prog;
  int32_t attn_s_param, attn_s_axis;
  int64_t attn_min_s;
  /* the short FlashAttention-3 form (lib/attn_form.h short_*): launches whose S is in [attn_short_min_s,
   * attn_short_max_s) run it instead of attn */
  tilec_kernel *attn_short;
  tilec_program *attn_short_prog;
  int64_t attn_short_min_s, attn_short_max_s;
  /* the persistent form (passes/attn_persist_form.c, lib/attn_persist_form.h): launches whose S
   * (argument apersist_s_param's dimension apersist_s_axis) is at most apersist_max_s run it */
  tilec_kernel *apersist;
  tilec_program *apersist_prog;
  int32_t apersist_s_param, apersist_s_axis;
  int64_t apersist_max_s;
  DLTensor kmajor_bt;
  int64_t kmajor_bt_shape[2], kmajor_bt_strides[2];
  /* late forms (TILEC_LATE_FORMS, on by default): the forms still loading on their threads when
   * tilec_kernel_load returned; the first launch that routes to a form (tl_forms_settle) joins them
   * and adopts them.  late_st: their failure, which every such launch then returns */
  tl_form_jobs *late;
  tilec_status late_st;
  char late_err[768];
  char err[1024];
};

/* ---- jit.c: loading a kernel ---------------------------------------------------------------- */
/* Says a load's failure (`msg`, trailing newlines dropped) in p's log; returns st. */
tilec_status tl_load_error(tilec_program *p, tilec_status st, const char *kernel, const char *msg);
/* What tl_load_variant loads: the kernel, a row kernel's launch variant without the per-element
 * fallback (tl_codegen_opts.assume_vectors), or a TMA form's no-TMA form (TL_TMA_OFF). */
enum { TL_LOAD_MAIN, TL_LOAD_VEC, TL_LOAD_NOTMA };
/* Kernel f (variant TL_LOAD_*) from the memory cache, the disk cache, or compiled and published. */
tilec_status tl_load_variant(tilec_program *p, tl_func *f, const tl_rt_device *dev, const char *arch, int device,
                             int variant, tl_cache_loaded *out, const char **origin_out);
/* Resource checks of fn against the device, and the dynamic shared memory opt-in. */
tilec_status tl_check_resources(tilec_program *p, const tl_func *f, const tl_rt_device *dev, CUfunction fn,
                                const tl_cache_meta *meta);
/* A new handle for loaded function fn (its launch buffers allocated), or NULL with err set. */
tilec_kernel *tl_new_kernel_handle(tilec_program *p, tl_func *f, const tl_rt_device *dev, CUfunction fn,
                                   const tl_cache_meta *meta, const char *origin, char *err, size_t n);
/* The launch metadata of kernel f as cg (a codegen of f) compiled it; a load error otherwise. */
tilec_status tl_kernel_meta(tilec_program *p, const tl_func *f, const tl_codegen_result *cg, tl_cache_meta *meta);
/* notma_entry.c: user-PTX TMA form k's handle of its second entry ENTRY__notma (k->user_notma), from
 * p's own compile of the kernel's no-TMA entry; NULL with err set. */
tilec_kernel *tl_user_notma(tilec_kernel *k, tilec_status *st, char *err, size_t n);
/* CTAs of kernel fn one SM holds at once (registers, threads, shared memory); at least 1. */
int tl_ctas_per_sm(const tl_rt_device *dev, CUfunction fn, const tl_cache_meta *meta);

/* ---- launch.c: the launch core --------------------------------------------------------------- */
/* A launch of k (grid_override: a grid given by the caller, else the kernel's own). */
tilec_status tl_launch(tilec_kernel *k, const tilec_arg *args, int nargs, const int64_t *grid_override, void *stream);
/* k->err = "launch KERNEL: " + the message; returns st. */
tilec_status tl_launch_error(tilec_kernel *k, tilec_status st, const char *fmt, ...) TL_PRINTF(3, 4);

/* ---- sched_slot.c: TILEC_ATTN_SCHED=1's tile counters ------------------------------------------ */
/* k's counters when meta.sched_ctr (the first block of pairs allocated); true, or false with err set. */
bool tl_sched_slots_init(tilec_kernel *k, char *err, size_t n);
/* The counters freed (the handle going). */
void tl_sched_slots_free(tilec_kernel *k);
/* The pair of `stream` into *out: a new stream's pair zeroed on it first (cuMemsetD32Async).
 * TILEC_OK, or a status with k->err set. */
tilec_status tl_sched_slot(tilec_kernel *k, const tl_cuda *cu, void *stream, CUdeviceptr *out);
/* The streams k has given a pair (tests). */
int tl_sched_slot_count(const tilec_kernel *k);

/* ---- pitch_repack.c: TILEC_PITCH_REPACK=1 ---------------------------------------------------- */
/* Bit i set: parameter i of f is the tensor of a store or an atomic (parameters 0..63). */
uint64_t tl_written_params(const tl_func *f);
/* Whether tensor argument `param` (k->targs, this launch's) fails the map test and a repack would
 * make it pass: only read by the kernel, rank 2..5, last stride 1, every size > 0, the outer
 * strides > 0 (the switch itself is not consulted). */
bool tl_repackable(const tilec_kernel *k, int param);
/* The copies of one launch, freed on its stream after it (tl_repack_free). */
typedef struct tl_repack {
  int n;
  CUdeviceptr mem[TL_CACHE_MAX_TMA];
} tl_repack;
/* With k->pitch_repack, when every tensor-map argument of this launch that fails the map test is
 * repackable: each copied on `stream` into stream-ordered memory of 16-byte pitch and base, and its
 * k->targs entry pointed at the copy (data, strides): 1.  0: nothing copied (nothing fails, the
 * switch is off, some failing argument is not repackable, or the driver lacks the entry points);
 * the launch goes on as without the switch.  -1: a driver call failed (*st, k->err set; nothing
 * left allocated). */
int tl_pitch_repack(tilec_kernel *k, const tl_cuda *cu, void *stream, tl_repack *r, tilec_status *st);
/* r's memory freed on `stream` (cuMemFreeAsync: after the launch enqueued before it). */
void tl_repack_free(const tl_cuda *cu, void *stream, const tl_repack *r);

/* ---- forms.c: the launch-time forms of a kernel (docs/small_m.md, lib/kmajor_b.h, lib/attn_form.h,
 * lib/attn_persist_form.h) */
/* An empty set of form jobs (calloc; tl_forms_drop then free), or NULL. */
tl_form_jobs *tl_forms_new(void);
/* Programs for every form of f (from p's source) and, unless TILEC_FORM_THREADS=0, a thread
 * loading each. */
tilec_status tl_forms_start(tilec_program *p, const tl_func *f, int device, tl_form_jobs *js);
/* Whether every job of js runs on its own thread (and there is at least one). */
bool tl_forms_all_started(const tl_form_jobs *js);
/* Late forms (TILEC_LATE_FORMS, on unless 0): the load returns before the forms are loaded. */
bool tl_late_forms_on(void);
/* Every job joined (or, not started, loaded here); the first failure said in p's log. */
tilec_status tl_forms_finish(tilec_program *p, const tl_func *f, tl_form_jobs *js);
/* k's launch-time bounds that do not wait for the forms (read once, at the load): the materialize-once
 * form's M (TILEC_HOIST_OPERAND_MIN_M, else TL_HOIST_MIN_M), which late forms' launches test too. */
void tl_forms_bounds(tilec_kernel *k);
/* The loaded forms into k (which then owns their programs and kernels). */
tilec_status tl_forms_adopt(tilec_kernel *k, tl_form_jobs *js);
/* Every job joined, its kernel and program destroyed (the ones not adopted). */
void tl_forms_drop(tl_form_jobs *js);
/* Late forms: k's forms joined and adopted, or their failure kept in k (k->late_st), which this and
 * every later launch that needs a form returns (with k->err set). */
tilec_status tl_forms_settle(tilec_kernel *k);

/* ---- form_launch.c: routing a launch to a form ------------------------------------------------ */
/* Routes a launch of k to one of its forms: true when one ran (or a late form failed), its status
 * in *st; false when k itself runs this launch. */
bool tl_route_to_form(tilec_kernel *k, const tilec_arg *args, int nargs, void *stream, tilec_status *st);
/* A launch of TMA form k whose tensor argument `param` a tensor map cannot take: through k's
 * no-TMA form, loaded (memory cache, disk cache or compiled; user PTX: its second entry,
 * tl_user_notma) at the first such launch. */
tilec_status tl_launch_notma(tilec_kernel *k, int param, const tilec_arg *args, int nargs,
                             const int64_t *grid_override, void *stream);

#endif
