/* jit.c: loading a kernel: tilec_device_init, tilec_kernel_load / load_ptx / destroy / error /
 * origin / config (include/tilec.h).
 * load: key from source + options (runtime/cache.c) -> memory cache -> disk cache (cubin) -> else
 * compile to PTX, assemble (ptxas or the driver's JIT), publish; then resource checks and a new
 * handle with its launch buffers; the kernel's launch-time forms are built and loaded beside it
 * (forms.c).  load_ptx: the program's launch configuration, the user's PTX (entry and parameter
 * types checked) through the driver JIT, no cache.  Launching is launch.c's.
 * requires: the runtime (runtime/); keeps: the program's text and IR as they are (it only
 * compiles further); breaks: nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_handle.h"
#include "code_env.h"
#include "rows.h"

#include "version.h"

#define DEFAULT_DYNAMIC_SMEM (48 * 1024) /* above this a kernel must opt in */
/* A row kernel's vector variant (no per-element fallback) is kept where the default keeps fewer
 * warps an SM resident than this (5 CTAs of 4 warps or fewer) and the variant at least as many.
 * Measured on the H200 (bench/RESULTS.md "rows5"): faster where the default is register-bound at
 * 4-5 CTAs (layernorm 89-93 registers by ptxas -v, dropout + residual 99, embedding + RMSNorm 106),
 * slower for rmsnorm and SwiGLU (64 by ptxas -v, more in the driver's JIT: a first rule of 32 warps
 * took the variant there; straight-line, ptxas issues the later loads interleaved with the earlier
 * groups' math, fewer in flight a thread), about equal for RoPE, add + RMSNorm, moe_permute.
 * Since rows6 the variant of an elementwise kernel keeps the split's branch (emit_memory.c
 * variant_form): SwiGLU 0.937 -> 0.982, RoPE 0.895 -> 0.905, dropout 0.845 -> 0.874 of the copy
 * bandwidth (bench/RESULTS.md "rows6"); the rule of this threshold is unchanged.
 * Since the twelfth session the straight-line variant (a kernel that combines its tiles) is kept
 * only where it fits more CTAs an SM than the default: at the same count it measured slower
 * (softmax over 32768 f32 columns, one CTA of 16 warps either way: 0.744 against 0.886 of the
 * copy bandwidth); the elementwise one keeps "at least as many" (dropout + residual, 5 CTAs
 * either way: 0.879 against 0.798). */
#define ROW_VARIANT_WARPS 24

/* ---- load ------------------------------------------------------------------------------ */
tilec_status tl_load_error(tilec_program *p, tilec_status st, const char *kernel, const char *msg) {
  size_t n = strlen(msg);
  while (n && msg[n - 1] == '\n') n--;
  tl_sbuf_printf(&p->log, "tilec: error: load %s: %.*s\n", kernel ? kernel : "(first kernel)", (int)n, msg);
  return st;
}

static int jit_opt_level(int opt_level) { return opt_level >= 3 ? 4 : opt_level < 0 ? 0 : opt_level; }

/* The key of kernel f of p for `arch` on this driver (variant: TL_LOAD_*). */
static bool compute_key(tilec_program *p, const tl_func *f, const char *arch, int driver, int variant,
                        tl_cache_key *key) {
  int nd = p->opts.ndefines;
  const char **names = nd ? calloc((size_t)nd, sizeof *names) : NULL;
  int64_t *values = nd ? calloc((size_t)nd, sizeof *values) : NULL;
  if (nd && (!names || !values)) {
    free(names); free(values);
    return false;
  }
  for (int i = 0; i < nd; i++) {
    names[i] = p->opts.defines[i].name;
    values[i] = p->opts.defines[i].value;
  }
  const tl_source *src = &p->ctx.files.data[p->file];
  /* what changes code and has no field of its own: disable-pass, and the measuring
   * switches read from the environment by the passes and codegen (lib/code_env.c's table, as
   * Triton's cache-invalidating env vars), so a measurement never loads another variant's
   * kernel from the cache */
  tl_sbuf extra = {0};
  tl_sbuf_printf(&extra, "disable=%s", p->opts.disable_pass ? p->opts.disable_pass : "");
  if (p->opts.cluster) tl_sbuf_printf(&extra, ";cluster=%d", p->opts.cluster);
  if (p->opts.split_k_role) tl_sbuf_printf(&extra, ";split-k=%d", p->opts.split_k_role);
  if (p->opts.kmajor_b) tl_sbuf_printf(&extra, ";kmajor-b=%s", p->opts.kmajor_b);
  if (p->opts.hoist_operand_role) tl_sbuf_printf(&extra, ";hoist-operand=%d", p->opts.hoist_operand_role);
  if (p->opts.attn_ws) tl_sbuf_printf(&extra, ";attn-ws=%s", p->opts.attn_ws);
  if (p->opts.ws) tl_sbuf_printf(&extra, ";ws=%s", p->opts.ws);
  if (p->opts.attn_persist) tl_sbuf_printf(&extra, ";attn-persist=%s", p->opts.attn_persist);
  if (p->opts.attn_sched) tl_sbuf_printf(&extra, ";attn-sched=%s", p->opts.attn_sched);
  if (p->opts.attn_o_slot_k) tl_sbuf_printf(&extra, ";attn-o-slot-k=%s", p->opts.attn_o_slot_k);
  if (variant == TL_LOAD_VEC) tl_sbuf_printf(&extra, ";variant=vec"); /* the launch variant without the fallback */
  if (variant == TL_LOAD_NOTMA) tl_sbuf_printf(&extra, ";variant=notma"); /* a TMA form's no-TMA form */
  if (p->opts.tma_fallback == TL_TMA_FALLBACK_INLINE) tl_sbuf_printf(&extra, ";tma=inline");
  if (p->opts.tma_fallback == TL_TMA_FALLBACK_NOTMA) tl_sbuf_printf(&extra, ";tma=notma");
  tl_sbuf_printf(&extra, ";assembler=%d", p->opts.assembler);
  for (size_t i = 0; tl_code_env_name(i); i++) {
    const char *v = tl_code_env(tl_code_env_name(i));
    if (v && *v) tl_sbuf_printf(&extra, ";%s=%s", tl_code_env_name(i), v);
  }
  if (extra.oom) {
    tl_sbuf_free(&extra);
    free(names); free(values);
    return false;
  }
  tl_cache_key_fields kf = {
      .source = src->text, .source_len = src->len, .kernel = f->name,
      .define_names = names, .define_values = values, .ndefines = nd,
      .arch = arch, .opt_level = p->opts.opt_level, .line_info = p->opts.line_info,
      .pipeline = p->opts.pipeline, .entry_name = p->opts.entry_name,
      .tilec_version = tl_build_identity(), .llvm_version = TILEC_LLVM_VERSION,
      .driver_version = driver, .jit_opt_level = jit_opt_level(p->opts.opt_level),
      .warps = p->opts.warps, .stages = p->opts.stages, .maxnreg = p->opts.maxnreg,
      .fp8_acc_fast = p->opts.fp8_acc_fast, .extra = extra.data ? extra.data : ""};
  tl_cache_key_compute(&kf, key);
  tl_sbuf_free(&extra);
  free(names);
  free(values);
  return true;
}

/* f's entry in a codegen result, or NULL. */
static const tl_kernel_info *kernel_info(const tl_codegen_result *cg, const tl_func *f) {
  for (int i = 0; i < cg->nkernels; i++)
    if (cg->kernels[i].name && strcmp(cg->kernels[i].name, f->name) == 0) return &cg->kernels[i];
  return NULL;
}

/* The launch metadata of f from a codegen result that holds it. */
tilec_status tl_kernel_meta(tilec_program *p, const tl_func *f, const tl_codegen_result *cg, tl_cache_meta *meta) {
  const tl_kernel_info *info = kernel_info(cg, f);
  if (!info || !info->entry) return tl_load_error(p, TILEC_ERROR_INTERNAL, f->name, "codegen produced no entry for it");
  memset(meta, 0, sizeof *meta);
  if (strlen(info->entry) >= sizeof meta->entry) return tl_load_error(p, TILEC_ERROR_UNSUPPORTED, f->name, "entry name too long");
  strcpy(meta->entry, info->entry);
  meta->threads = info->threads;
  meta->smem_bytes = info->smem_bytes;
  meta->nparams = f->params.len;
  if (info->ntma > TL_CACHE_MAX_TMA) return tl_load_error(p, TILEC_ERROR_INTERNAL, f->name, "too many tensor maps");
  meta->ntma = info->ntma;
  meta->persist = info->persist;
  meta->cluster = info->cluster;
  meta->assumed_key = info->assumed_key;
  meta->sched_ctr = info->sched_ctr;
  for (int i = 0; i < info->ntma; i++)
    meta->tma[i] = (tl_rt_tma){info->tma[i].param, info->tma[i].box_inner, info->tma[i].box_rows, info->tma[i].swizzle,
                               info->tma[i].dtype};
  return TILEC_OK;
}

/* The "assembler" option, TILEC_ASSEMBLER winning (auto | ptxas | driver | link). */
static int assembler_mode(const tilec_program *p) {
  const char *e = tl_code_env("TILEC_ASSEMBLER");
  if (e && *e) {
    if (!strcmp(e, "ptxas")) return TL_ASM_PTXAS;
    if (!strcmp(e, "driver")) return TL_ASM_DRIVER;
    if (!strcmp(e, "link")) return TL_ASM_LINK;
    return TL_ASM_AUTO;
  }
  return p->opts.assembler;
}

/* PTX -> the image tl_rt_load_function loads: a cubin from ptxas (auto, where it is found: the
 * whole kernel, cacheable), else the PTX itself for the driver to compile whole at load
 * (cuModuleLoadDataEx).  Not the driver's cuLink unless asked ("link"): it compiles PTX as
 * relocatable code, which costs registers (layernorm's variant 56 -> 79 by `ptxas -c`, 9 -> 6
 * CTAs an SM; dropout + residual 96 -> 136).  driver_only: a ptxas cubin did not load. */
static tilec_status assemble(tilec_program *p, const tl_func *f, const tl_rt_device *dev, const char *arch,
                             const char *ptx, bool driver_only, void **image, size_t *size) {
  int mode = assembler_mode(p);
  tl_jit_request rq = {.ptx = ptx, .kernel = f->name, .arch = arch, .opt_level = jit_opt_level(p->opts.opt_level)};
  tl_sbuf msg = {0};
  int rt;
  if (mode == TL_ASM_LINK) {
    rt = tl_rt_ptx_to_cubin(dev, &rq, image, size, NULL, &msg);
  } else {
    char path[4096];
    if (!driver_only && (mode == TL_ASM_PTXAS || (mode == TL_ASM_AUTO && tl_api_find_ptxas(path, sizeof path)))) {
      tl_sbuf why = {0}, log = {0};
      char *cubin = NULL;
      tilec_status pst = tl_api_ptxas(ptx, arch, p->opts.opt_level, &cubin, size, &log, &why);
      if (pst == TILEC_OK) {
        *image = cubin;
        tl_sbuf_free(&why);
        tl_sbuf_free(&log);
        return TILEC_OK;
      }
      if (mode == TL_ASM_PTXAS) {
        tl_sbuf_printf(&why, "%s%s", log.len ? "\n" : "", log.data ? log.data : "");
        tilec_status e = tl_load_error(p, pst, f->name, why.data ? why.data : "ptxas failed");
        tl_sbuf_free(&why);
        tl_sbuf_free(&log);
        return e;
      }
      /* auto: a ptxas that cannot take this PTX (older than its ISA) leaves it to the driver */
      tl_sbuf_printf(&p->log, "tilec: note: kernel %s: %s; the driver compiles its PTX\n", f->name,
                     why.data ? why.data : "ptxas failed");
      tl_sbuf_free(&why);
      tl_sbuf_free(&log);
    }
    rt = tl_rt_ptx_image(dev, &rq, image, size, &msg);
  }
  tilec_status st = TILEC_OK;
  if (rt != TL_OK) st = tl_load_error(p, (tilec_status)rt, f->name, msg.data ? msg.data : "driver JIT failed");
  tl_sbuf_free(&msg);
  return st;
}

/* Compile to PTX and JIT it: the cubin and the launch metadata of f.  The
 * program's PTX when it was already made (every kernel); else f's own
 * (tl_api_codegen_kernel: a many-kernel file pays for the one loaded). */
static tilec_status compile_kernel(tilec_program *p, const tl_func *f, const tl_rt_device *dev, const char *arch,
                                   int variant, bool driver_only, tl_cache_meta *meta, void **cubin, size_t *size) {
  tl_codegen_result one = {0};
  const tl_codegen_result *cg = &p->cg;
  const char *ptx = p->text[TILEC_STAGE_PTX];
  tilec_status st = TILEC_OK;
  /* (the program's PTX may hold one other kernel: option "kernel"; a variant is its own) */
  if (!ptx || !kernel_info(&p->cg, f) || variant != TL_LOAD_MAIN) {
    st = tl_api_codegen_kernel(p, f->name, variant == TL_LOAD_VEC, variant == TL_LOAD_NOTMA, &one);
    cg = &one;
    ptx = one.ptx;
  }
  if (st == TILEC_OK) st = tl_kernel_meta(p, f, cg, meta);
  if (st == TILEC_OK) st = assemble(p, f, dev, arch, ptx, driver_only, cubin, size);
  tl_codegen_result_free(&one);
  return st;
}

/* Resource checks against the device, and the dynamic shared memory opt-in. */
tilec_status tl_check_resources(tilec_program *p, const tl_func *f, const tl_rt_device *dev, CUfunction fn,
                                const tl_cache_meta *meta) {
  const tl_cuda *cu;
  char err[512];
  if (tl_rt_driver(&cu, err, sizeof err) != TL_OK) return tl_load_error(p, TILEC_ERROR_CUDA, f->name, err);
  int regs = 0, static_smem = 0, max_threads = 0, local = 0;
  cu->cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
  cu->cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
  cu->cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn);
  cu->cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
  if (meta->threads <= 0 || meta->threads > dev->max_threads_block) {
    snprintf(err, sizeof err, "a block of %d threads is not possible on device %d (%s): at most %d", meta->threads,
             dev->ordinal, dev->name, dev->max_threads_block);
    return tl_load_error(p, TILEC_ERROR_UNSUPPORTED, f->name, err);
  }
  /* registers: the function's own limit (cuFuncGetAttribute accounts for the
   * allocation granularity), and the plain product, which no granularity
   * can make fit */
  if ((max_threads > 0 && meta->threads > max_threads) ||
      (regs > 0 && dev->max_regs_block > 0 && (int64_t)regs * meta->threads > dev->max_regs_block)) {
    snprintf(err, sizeof err,
             "needs %lld registers per block (%d per thread x %d threads; the function allows %d threads); device %d "
             "(%s) has %d registers per block; use fewer warps or smaller tiles",
             (long long)regs * meta->threads, regs, meta->threads, max_threads, dev->ordinal, dev->name,
             dev->max_regs_block);
    return tl_load_error(p, TILEC_ERROR_UNSUPPORTED, f->name, err);
  }
  if (meta->smem_bytes < 0 || (int64_t)meta->smem_bytes + static_smem > dev->max_smem_optin) {
    snprintf(err, sizeof err,
             "needs %lld bytes of shared memory per block (%d dynamic + %d static); device %d (%s) allows %d; "
             "use smaller tiles or fewer stages",
             (long long)meta->smem_bytes + static_smem, meta->smem_bytes, static_smem, dev->ordinal, dev->name,
             dev->max_smem_optin);
    return tl_load_error(p, TILEC_ERROR_UNSUPPORTED, f->name, err);
  }
  if (meta->smem_bytes > DEFAULT_DYNAMIC_SMEM || meta->smem_bytes + static_smem > DEFAULT_DYNAMIC_SMEM) {
    CUresult r = cu->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, meta->smem_bytes);
    if (r != CUDA_SUCCESS) {
      char t[200];
      snprintf(err, sizeof err, "cannot raise dynamic shared memory to %d bytes: %s", meta->smem_bytes,
               tl_rt_result_text(r, t, sizeof t));
      return tl_load_error(p, TILEC_ERROR_CUDA, f->name, err);
    }
  }
  if (local > 0)
    tl_sbuf_printf(&p->log, "tilec: note: kernel %s spills: %d bytes of local memory per thread\n", f->name, local);
  return TILEC_OK;
}

/* CTAs of kernel fn one SM holds at once, from its registers, threads and
 * shared memory (an SM has the opt-in maximum + the 1 KiB the driver
 * reserves per CTA; 2048 threads, 64K registers); at least 1. */
int tl_ctas_per_sm(const tl_rt_device *dev, CUfunction fn, const tl_cache_meta *meta) {
  const tl_cuda *cu;
  char err[64];
  int regs = 0, static_smem = 0;
  if (tl_rt_driver(&cu, err, sizeof err) == TL_OK) {
    cu->cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
    cu->cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
  }
  int64_t by_smem = ((int64_t)dev->max_smem_optin + 1024) / ((int64_t)meta->smem_bytes + static_smem + 1024);
  int64_t by_threads = 2048 / (meta->threads > 0 ? meta->threads : 1);
  int64_t by_regs = regs > 0 ? 65536 / ((int64_t)regs * meta->threads) : by_threads;
  int64_t n = by_smem < by_threads ? by_smem : by_threads;
  if (by_regs < n) n = by_regs;
  return n < 1 ? 1 : (int)n;
}

tilec_kernel *tl_new_kernel_handle(tilec_program *p, tl_func *f, const tl_rt_device *dev, CUfunction fn,
                                   const tl_cache_meta *meta, const char *origin, char *err, size_t n) {
  tilec_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->p = p; k->f = f; k->dev = dev; k->fn = fn; k->meta = *meta; k->origin = origin;
  k->nparams = f->params.len;
  if (!tl_abi_layout_for(f, meta->ntma, &k->layout, err, n)) {
    free(k);
    return NULL;
  }
  k->sig_len = (size_t)(k->nparams ? k->nparams : 1) * (3 + TL_MAX_RANK);
  k->targs = calloc((size_t)(k->nparams ? k->nparams : 1), sizeof *k->targs);
  /* 64-byte aligned: tensor maps are encoded in place (codegen.h) */
  size_t abytes = (k->layout.bytes + 63) / 64 * 64;
  k->argbuf = aligned_alloc(64, abytes ? abytes : 64);
  if (k->argbuf) memset(k->argbuf, 0, abytes ? abytes : 64);
  k->slots = calloc((size_t)k->layout.nslots + 1, sizeof *k->slots); /* (+1: the tile counter's) */
  k->last_sig = calloc(k->sig_len, sizeof *k->last_sig);
  k->sig = calloc(k->sig_len, sizeof *k->sig);
  if (!k->targs || !k->argbuf || !k->slots || !k->last_sig || !k->sig) {
    tilec_kernel_destroy(k);
    snprintf(err, n, "out of memory");
    return NULL;
  }
  k->grid_eval = tl_grid_eval_new(f, err, n);
  if (!k->grid_eval) {
    tilec_kernel_destroy(k);
    return NULL;
  }
  if (meta->sched_ctr) { /* TILEC_ATTN_SCHED=1: the hidden parameter after the ABI's slots (sched_slot.c) */
    k->slots[k->layout.nslots] = &k->sched_arg;
    if (!tl_sched_slots_init(k, err, n)) {
      tilec_kernel_destroy(k);
      return NULL;
    }
  }
  if (meta->persist) k->max_ctas = (int64_t)dev->sm_count * tl_ctas_per_sm(dev, fn, meta);
  /* TILEC_PERSIST_CTAS=N (testing; the launch, not the code): at most N persistent CTAs, so a small
   * grid's CTAs each run several tiles (gpu_test_examples' TILEC_ATTN_PERSIST rounds) */
  const char *pc = getenv("TILEC_PERSIST_CTAS");
  if (meta->persist && pc && atoll(pc) >= 1 && atoll(pc) < k->max_ctas) k->max_ctas = atoll(pc);
  const char *cp = getenv("TILEC_CHECK_POINTERS");
  k->check_pointers = cp && strcmp(cp, "1") == 0;
  /* TILEC_PITCH_REPACK: on unless =0 (the default since the twentieth session: H200, 61x4000x4100
   * 1.10x cuBLAS against 0.065x for the no-TMA form, 4096x4096x4100 2.39x against 0.44x; docs/runtime.md) */
  const char *pr = getenv("TILEC_PITCH_REPACK");
  k->pitch_repack = !(pr && strcmp(pr, "0") == 0) && meta->ntma > 0;
  k->log_p = p;
  k->written = tl_written_params(f);
  return k;
}

tilec_status tilec_device_init(int device) {
  char err[512];
  const tl_rt_device *dev;
  int rt = tl_rt_device_get(device, &dev, err, sizeof err);
  if (rt == TL_OK) rt = tl_rt_make_current(dev, err, sizeof err);
  return (tilec_status)rt;
}

/* What both loads start with: device `device`, the arch p's code is (or will
 * be) compiled for, p compiled through the front-end and passes (the
 * signature and the grid live in the IR), and the kernel's function. */
static tilec_status load_prologue(tilec_program *p, const char *kernel, int device, const tl_rt_device **dev,
                                  char *arch, size_t arch_n, tl_func **f) {
  char err[512];
  int rt = tl_rt_device_get(device, dev, err, sizeof err);
  if (rt != TL_OK) return tl_load_error(p, (tilec_status)rt, kernel, err);
  /* With no arch chosen, compile for this device (its name has static storage). */
  if (p->reached >= TILEC_STAGE_PTX && p->text[TILEC_STAGE_PTX]) {
    if (!tl_ptx_read_target(p->text[TILEC_STAGE_PTX], arch, arch_n))
      return tl_load_error(p, TILEC_ERROR_INTERNAL, kernel, "the program's PTX has no .target");
  } else {
    if (!p->opts.arch) p->opts.arch = (char *)(*dev)->arch;
    /* a detected arch was fixed by the front-end (ARCH, ARCH_SPECIFIC) for device 0: a load on a
     * device of another arch would get code and tiles chosen for device 0 */
    if (p->arch_detected && p->reached >= TILEC_STAGE_AST && strcmp(p->opts.arch, (*dev)->arch)) {
      snprintf(err, sizeof err, "the program was compiled for %s (device 0's arch, found at its first compile) and "
               "device %d is %s: give the program's arch option (--arch %s)", p->opts.arch, device, (*dev)->arch,
               (*dev)->arch);
      return tl_load_error(p, TILEC_ERROR_USAGE, kernel, err);
    }
    snprintf(arch, arch_n, "%s", p->opts.arch);
  }
  tilec_status st = tilec_program_compile(p, TILEC_STAGE_IR);
  if (st != TILEC_OK) return st;
  *f = tl_api_find_kernel(p, kernel);
  if (!*f) {
    snprintf(err, sizeof err, "no kernel named '%s' in %s", kernel ? kernel : "(first)", p->ctx.files.data[p->file].name);
    return tl_load_error(p, TILEC_ERROR_USAGE, kernel, err);
  }
  return tl_api_kernel_passes(p, *f);
}

/* Kernel f (or its vector variant: tl_codegen_opts.assume_vectors) from the memory cache, the
 * disk cache, or compiled and published. */
tilec_status tl_load_variant(tilec_program *p, tl_func *f, const tl_rt_device *dev, const char *arch, int device,
                             int variant, tl_cache_loaded *out, const char **origin_out) {
  const tl_cuda *cu;
  char err[512];
  tl_rt_driver(&cu, err, sizeof err);
  tl_cache_key key;
  if (!compute_key(p, f, arch, cu->driver_version, variant, &key)) return TILEC_ERROR_NOMEM;

  tl_cache_loaded loaded;
  const char *origin = "memory-cache";
  if (!tl_cache_mem_find(&key, device, &loaded)) {
    memset(&loaded, 0, sizeof loaded);
    char dir[4096];
    tl_sbuf why = {0}, dir_why = {0};
    bool have_dir = tl_cache_dir(dir, sizeof dir, &dir_why);
    if (dir_why.len) tl_sbuf_printf(&p->log, "tilec: note: %s", dir_why.data);
    tl_sbuf_free(&dir_why);
    void *cubin = NULL;
    size_t size = 0;
    origin = NULL;
    if (have_dir && tl_cache_disk_load(dir, &key, &loaded.meta, &cubin, &size, &why) == TL_CACHE_HIT) {
      tl_sbuf msg = {0};
      /* an image is a cubin or NUL-terminated PTX text (the driver reads PTX up to its NUL) */
      if (!tl_rt_image_is_cubin(cubin, size) && (size == 0 || ((const char *)cubin)[size - 1] != 0))
        tl_sbuf_printf(&msg, "the entry is neither a cubin nor PTX text\n");
      else if (tl_rt_load_function(dev, cubin, loaded.meta.entry, &loaded.module, &loaded.function, &msg) == TL_OK)
        origin = "disk-cache";
      else /* unusable entry: recompile and replace it */
        tl_sbuf_printf(&p->log, "tilec: note: kernel cache entry not loadable, recompiling: %s", msg.data ? msg.data : "\n");
      tl_sbuf_free(&msg);
      free(cubin);
      cubin = NULL;
    }
    if (why.len) tl_sbuf_printf(&p->log, "tilec: note: kernel cache entry skipped, recompiling: %s", why.data);
    tl_sbuf_free(&why);
    if (!origin) {
      tilec_status st = compile_kernel(p, f, dev, arch, variant, false, &loaded.meta, &cubin, &size);
      if (st != TILEC_OK) return st;
      tl_sbuf msg = {0};
      int rt = tl_rt_load_function(dev, cubin, loaded.meta.entry, &loaded.module, &loaded.function, &msg);
      if (rt != TL_OK && assembler_mode(p) == TL_ASM_AUTO && tl_rt_image_is_cubin(cubin, size)) {
        /* a ptxas newer than the driver: its cubin does not load; the driver compiles the PTX */
        tl_sbuf_printf(&p->log, "tilec: note: kernel %s: the cubin of ptxas did not load (%s); the driver compiles its PTX\n",
                       f->name, msg.data ? msg.data : "");
        tl_sbuf_free(&msg);
        free(cubin);
        cubin = NULL;
        if ((st = compile_kernel(p, f, dev, arch, variant, true, &loaded.meta, &cubin, &size)) != TILEC_OK) return st;
        rt = tl_rt_load_function(dev, cubin, loaded.meta.entry, &loaded.module, &loaded.function, &msg);
      }
      if (rt == TL_OK && have_dir && tl_cache_disk_store(dir, &key, &loaded.meta, cubin, size, &msg) != TL_OK)
        tl_sbuf_printf(&p->log, "tilec: note: kernel cache not written (the kernel is used; a new process compiles it "
                                "again): %s", msg.data ? msg.data : "\n");
      free(cubin);
      if (rt != TL_OK) {
        tl_load_error(p, (tilec_status)rt, f->name, msg.data ? msg.data : "module load failed");
        tl_sbuf_free(&msg);
        return (tilec_status)rt;
      }
      tl_sbuf_free(&msg);
      origin = "compiled";
    }
    if (loaded.meta.nparams != f->params.len) {
      /* cannot happen with a sound key; never launch a mismatched kernel */
      return tl_load_error(p, TILEC_ERROR_INTERNAL, f->name, "cached kernel has a different parameter count");
    }
    tl_cache_mem_insert(&key, device, &loaded);
  }
  *out = loaded;
  *origin_out = origin;
  return TILEC_OK;
}

static tilec_status load_main(tilec_program *p, tl_func *f, const tl_rt_device *dev, const char *arch, int device,
                              tilec_kernel **out);

tilec_status tilec_kernel_load(tilec_program *p, const char *kernel, int device, tilec_kernel **out) {
  if (out) *out = NULL;
  if (!p || !out) return TILEC_ERROR_USAGE;
  const tl_rt_device *dev;
  char arch[32];
  tl_func *f;
  tilec_status st = load_prologue(p, kernel, device, &dev, arch, sizeof arch, &f);
  if (st != TILEC_OK) return st;
  bool has_forms = f->small_m || f->kmajor_b || f->attn_form || f->attn_persist_form || f->hoist_form;
  /* on the heap: the forms' threads hold pointers into it, and late forms outlive this call */
  tl_form_jobs *forms = has_forms ? tl_forms_new() : NULL;
  if (has_forms && !forms) return tl_load_error(p, TILEC_ERROR_NOMEM, f->name, "out of memory");
  if (has_forms && (st = tl_forms_start(p, f, device, forms)) != TILEC_OK) {
    tl_forms_drop(forms);
    free(forms);
    return st;
  }
  st = load_main(p, f, dev, arch, device, out);
  if (st == TILEC_OK && has_forms) {
    tl_forms_bounds(*out);
    if (tl_forms_all_started(forms) && tl_late_forms_on()) {
      (*out)->late = forms; /* tl_forms_settle adopts them at the first launch that needs one */
      return TILEC_OK;
    }
    st = tl_forms_finish(p, f, forms);
    if (st == TILEC_OK) st = tl_forms_adopt(*out, forms);
    if (st != TILEC_OK) {
      tilec_kernel_destroy(*out);
      *out = NULL;
    }
  }
  if (forms) tl_forms_drop(forms);
  free(forms);
  return st;
}

/* Whether a kernel of p with launch metadata meta was compiled as a TMA form (tl_tma_mode): it has
 * tensor maps and p's option and TILEC_TMA_FORM (in the key of every cached kernel) say so. */
static bool is_tma_form(const tilec_program *p, const tl_cache_meta *meta) {
  return meta->ntma > 0 && (p->opts.tma_fallback == TL_TMA_FALLBACK_FORM || p->opts.tma_fallback == TL_TMA_FALLBACK_ENTRY) && !tl_code_env_off("TILEC_TMA_FORM");
}

/* The kernel itself (and a row kernel's launch variant) into a new handle *out. */
static tilec_status load_main(tilec_program *p, tl_func *f, const tl_rt_device *dev, const char *arch, int device,
                              tilec_kernel **out) {
  char err[512];
  err[0] = 0;
  tl_cache_loaded loaded, vec;
  const char *origin = NULL;
  tilec_status st = tl_load_variant(p, f, dev, arch, device, TL_LOAD_MAIN, &loaded, &origin);
  if (st != TILEC_OK) return st;
  /* row kernels: the variant without the per-element fallback, for launches whose arguments
   * have the key bits it assumes, where the default keeps fewer than ROW_VARIANT_WARPS warps
   * an SM (docs/rows.md "rows5"); TILEC_LAUNCH_VARIANTS=0: the default kernel alone */
  int c0 = tl_ctas_per_sm(dev, loaded.function, &loaded.meta);
  bool want_vec = f->access_split && !tl_code_env("TILEC_VEC_ONLY") && !tl_code_env_off("TILEC_LAUNCH_VARIANTS") &&
                  !loaded.meta.persist && c0 * (loaded.meta.threads / 32) < ROW_VARIANT_WARPS;
  const char *vorigin = NULL;
  if (want_vec && tl_load_variant(p, f, dev, arch, device, TL_LOAD_VEC, &vec, &vorigin) != TILEC_OK) want_vec = false;
  if (want_vec) {
    int c1 = tl_ctas_per_sm(dev, vec.function, &vec.meta);
    bool straight = tl_row_variant_form(f) == 1;
    want_vec = vec.meta.assumed_key && (straight ? c1 > c0 : c1 >= c0) && vec.meta.threads == loaded.meta.threads &&
               vec.meta.smem_bytes == loaded.meta.smem_bytes && !vec.meta.persist;
    tl_sbuf_printf(&p->log, "tilec: note: kernel '%s': launch variant without the per-element fallback: %d -> %d CTAs an "
                            "SM (%s)%s\n", f->name, c0, c1, vorigin ? vorigin : "?",
                   want_vec ? "; used for arguments with its key bits" : "; not used");
  }
  st = tl_check_resources(p, f, dev, loaded.function, &loaded.meta);
  if (st != TILEC_OK) return st;
  if (want_vec && tl_check_resources(p, f, dev, vec.function, &vec.meta) != TILEC_OK) want_vec = false;
  tilec_kernel *k = tl_new_kernel_handle(p, f, dev, loaded.function, &loaded.meta, origin, err, sizeof err);
  if (!k) return tl_load_error(p, TILEC_ERROR_NOMEM, f->name, err[0] ? err : "out of memory");
  if (want_vec) {
    k->vec_fn = vec.function;
    k->vec_key = vec.meta.assumed_key;
  }
  k->tma_form = is_tma_form(p, &loaded.meta);
  snprintf(k->arch, sizeof k->arch, "%s", arch);
  *out = k;
  return TILEC_OK;
}

/* The parameter types of `.entry entry(...)` in ptx, one "type;" per
 * parameter (the parameter names are left out), into out.  false when ptx
 * has no such entry. */
static bool ptx_entry_params(const char *ptx, const char *entry, tl_sbuf *out) {
  size_t elen = strlen(entry);
  for (const char *at = strstr(ptx, ".entry"); at; at = strstr(at + 6, ".entry")) {
    const char *q = at + 6;
    if (*q != ' ' && *q != '\t') continue;
    while (*q == ' ' || *q == '\t') q++;
    if (strncmp(q, entry, elen) != 0) continue;
    q += elen;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
    if (*q != '(') continue;
    const char *end = strchr(++q, ')');
    if (!end) return false;
    /* each comma-separated item: every whitespace-separated word but the last */
    while (q < end) {
      const char *item_end = memchr(q, ',', (size_t)(end - q));
      if (!item_end) item_end = end;
      const char *words[16];
      size_t lens[16];
      int nw = 0;
      for (const char *w = q; w < item_end;) {
        while (w < item_end && (*w == ' ' || *w == '\t' || *w == '\n' || *w == '\r')) w++;
        const char *we = w;
        while (we < item_end && *we != ' ' && *we != '\t' && *we != '\n' && *we != '\r') we++;
        if (we > w && nw < 16) { words[nw] = w; lens[nw++] = (size_t)(we - w); }
        w = we;
      }
      for (int i = 0; i + 1 < nw; i++) tl_sbuf_printf(out, "%s%.*s", i ? " " : "", (int)lens[i], words[i]);
      if (nw) tl_sbuf_printf(out, ";");
      q = item_end + (item_end < end);
    }
    return true;
  }
  return false;
}

tilec_status tilec_kernel_load_ptx(tilec_program *p, const char *kernel, const char *ptx, int device,
                                   tilec_kernel **out) {
  if (out) *out = NULL;
  if (!p || !out) return TILEC_ERROR_USAGE;
  if (!ptx) return tl_load_error(p, TILEC_ERROR_USAGE, kernel, "no PTX text (NULL)");
  char err[512];
  const tl_rt_device *dev;
  char arch[32];
  tl_func *f;
  tilec_status st = load_prologue(p, kernel, device, &dev, arch, sizeof arch, &f);
  if (st != TILEC_OK) return st;
  /* The launch configuration comes from tilec's own compile of p. */
  tl_cache_meta meta;
  st = tilec_program_compile(p, TILEC_STAGE_PTX);
  if (st == TILEC_OK) st = tl_kernel_meta(p, f, &p->cg, &meta);
  if (st != TILEC_OK) return st;
  char user_arch[32];
  if (!tl_ptx_read_target(ptx, user_arch, sizeof user_arch))
    return tl_load_error(p, TILEC_ERROR_USAGE, f->name, "the PTX given has no .target directive");
  tl_sbuf want = {0}, got = {0};
  bool have_want = ptx_entry_params(p->text[TILEC_STAGE_PTX], meta.entry, &want);
  bool have_got = ptx_entry_params(ptx, meta.entry, &got);
  bool same = have_want && have_got && !want.oom && !got.oom && want.len == got.len &&
              (want.len == 0 || memcmp(want.data, got.data, want.len) == 0);
  if (!same) {
    if (!have_got)
      snprintf(err, sizeof err, "the PTX given has no .entry %s (the program's entry for this kernel)", meta.entry);
    else
      snprintf(err, sizeof err, "the PTX's .entry %s takes (%.200s), the program's kernel takes (%.200s)", meta.entry,
               got.data ? got.data : "", want.data ? want.data : "");
    tl_sbuf_free(&want);
    tl_sbuf_free(&got);
    return tl_load_error(p, have_want ? TILEC_ERROR_USAGE : TILEC_ERROR_INTERNAL, f->name, err);
  }
  tl_sbuf_free(&want);
  /* a TMA form's no-TMA entry (the CLI's default, codegen.h TL_NOTMA_SUFFIX): the same parameters */
  bool tma_form = meta.ntma > 0 && strstr(ptx, TL_TMA_FORM_MARK) != NULL, user_notma = false, bad2 = false;
  char second[sizeof meta.entry + sizeof TL_NOTMA_SUFFIX];
  snprintf(second, sizeof second, "%s" TL_NOTMA_SUFFIX, meta.entry);
  tl_sbuf got2 = {0};
  if (tma_form && ptx_entry_params(ptx, second, &got2)) {
    user_notma = !got2.oom && !got.oom && got2.len == got.len && (got.len == 0 || !memcmp(got.data, got2.data, got.len));
    bad2 = !user_notma;
    if (bad2)
      snprintf(err, sizeof err, "the PTX's .entry %.120s takes (%.100s), its TMA entry %.120s takes (%.100s): a no-TMA entry "
               "takes the TMA entry's parameters (docs/cli.md \"Two entries\")", second, got2.data ? got2.data : "",
               meta.entry, got.data ? got.data : "");
  }
  tl_sbuf_free(&got2);
  tl_sbuf_free(&got);
  if (bad2) return tl_load_error(p, TILEC_ERROR_USAGE, f->name, err);

  void *cubin = NULL;
  size_t size = 0;
  st = assemble(p, f, dev, user_arch, ptx, false, &cubin, &size);
  if (st != TILEC_OK) return st;
  tl_sbuf msg = {0};
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  int rt = tl_rt_load_function(dev, cubin, meta.entry, &mod, &fn, &msg);
  if (rt != TL_OK && assembler_mode(p) == TL_ASM_AUTO && tl_rt_image_is_cubin(cubin, size)) {
    free(cubin);
    cubin = NULL;
    tl_sbuf_free(&msg);
    if ((st = assemble(p, f, dev, user_arch, ptx, true, &cubin, &size)) != TILEC_OK) return st;
    rt = tl_rt_load_function(dev, cubin, meta.entry, &mod, &fn, &msg);
  }
  free(cubin);
  if (rt != TL_OK) {
    tl_load_error(p, (tilec_status)rt, f->name, msg.data ? msg.data : "loading the PTX failed");
    tl_sbuf_free(&msg);
    return (tilec_status)rt;
  }
  tl_sbuf_free(&msg);
  st = tl_check_resources(p, f, dev, fn, &meta);
  tilec_kernel *k = st == TILEC_OK ? tl_new_kernel_handle(p, f, dev, fn, &meta, "user-ptx", err, sizeof err) : NULL;
  if (!k) {
    const tl_cuda *cu;
    if (tl_rt_driver(&cu, err, sizeof err) == TL_OK) cu->cuModuleUnload(mod);
    return st != TILEC_OK ? st : tl_load_error(p, TILEC_ERROR_NOMEM, f->name, "out of memory");
  }
  k->owned_module = mod;
  /* PTX compiled as a TMA form (codegen.h) has no path for tensors a map cannot take: such a
   * launch runs its no-TMA entry where the PTX has one (notma_entry.c), else is refused
   * (tl_launch_notma, form_launch.c), not trapped in the kernel */
  k->tma_form = tma_form;
  k->user_notma = user_notma;
  *out = k;
  return TILEC_OK;
}

void tilec_kernel_destroy(tilec_kernel *k) {
  if (!k) return;
  if (k->late) { /* late forms still loading: joined, then dropped */
    tl_forms_drop(k->late);
    free(k->late);
    k->late = NULL;
  }
  /* a cached module belongs to the cache and stays loaded; a user PTX module is k's */
  const tl_cuda *cu;
  char err[64];
  if (k->owned_module && tl_rt_driver(&cu, err, sizeof err) == TL_OK && tl_rt_make_current(k->dev, err, sizeof err) == TL_OK)
    cu->cuModuleUnload(k->owned_module);
  free(k->targs);
  free(k->argbuf);
  tl_sched_slots_free(k);
  free(k->slots);
  free(k->last_sig);
  free(k->sig);
  tl_grid_eval_free(k->grid_eval);
  tilec_kernel_destroy(k->notma);
  for (int i = 0; i < TL_SMALL_M_MAX_FORMS; i++) {
    tilec_kernel_destroy(k->forms[i]);
    tilec_program_destroy(k->form_progs[i]);
    tilec_kernel_destroy(k->reduces[i]);
    tilec_program_destroy(k->reduce_progs[i]);
  }
  tilec_kernel_destroy(k->kmajor);
  tilec_program_destroy(k->kmajor_prog);
  tilec_kernel_destroy(k->attn);
  tilec_program_destroy(k->attn_prog);
  tilec_kernel_destroy(k->attn_short);
  tilec_program_destroy(k->attn_short_prog);
  tilec_kernel_destroy(k->apersist);
  tilec_program_destroy(k->apersist_prog);
  tilec_kernel_destroy(k->transpose);
  tilec_program_destroy(k->transpose_prog);
  free(k->kmajor_args);
  tilec_kernel_destroy(k->hoist);
  tilec_program_destroy(k->hoist_prog);
  tilec_kernel_destroy(k->hoist_pre);
  tilec_program_destroy(k->hoist_pre_prog);
  free(k->hoist_args);
  if ((k->ws || k->nws_old) && tl_rt_driver(&cu, err, sizeof err) == TL_OK && cu->cuMemFree &&
      tl_rt_make_current(k->dev, err, sizeof err) == TL_OK) {
    if (k->ws) cu->cuMemFree(k->ws);
    for (int i = 0; i < k->nws_old; i++) cu->cuMemFree(k->ws_old[i]);
  }
  free(k->split_args);
  free(k);
}

const char *tilec_kernel_error(const tilec_kernel *k) { return k ? k->err : "no kernel (NULL handle)"; }
const char *tilec_kernel_origin(const tilec_kernel *k) { return k ? k->origin : ""; }

tilec_status tilec_kernel_config(const tilec_kernel *k, int *threads, int *smem_bytes, const char **entry) {
  if (!k) return TILEC_ERROR_USAGE;
  if (threads) *threads = k->meta.threads;
  if (smem_bytes) *smem_bytes = k->meta.smem_bytes;
  if (entry) *entry = k->meta.entry;
  return TILEC_OK;
}
