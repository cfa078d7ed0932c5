/* module.c: PTX -> cubin with the driver's JIT linker, or PTX kept for the driver to compile whole at
 * load; cubin or PTX -> module.
 * requires: a device from tl_rt_device_get; keeps: the PTX given is never
 * modified (a copy is rewritten when its .version must come down);
 * breaks: nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* The newest PTX ISA each CUDA release's driver JIT accepts (PTX ISA release
 * notes).  A driver newer than the last row accepts at least that row's ISA. */
static const struct { int cuda, isa; } isa_table[] = {
    {11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74}, {11050, 75},
    {11060, 76}, {11070, 77}, {11080, 78}, {12000, 80}, {12010, 81}, {12020, 82},
    {12030, 83}, {12040, 84}, {12050, 85}, {12060, 85}, {12080, 87}, {12090, 88},
    {13000, 90},
};

int tl_ptx_isa_for_driver(int driver_version) {
  int isa = 0;
  for (size_t i = 0; i < sizeof isa_table / sizeof isa_table[0]; i++)
    if (driver_version >= isa_table[i].cuda) isa = isa_table[i].isa;
  return isa; /* 0: older than CUDA 11.0 */
}

int tl_ptx_isa_min_for_arch(const char *arch) {
  if (!arch) return 0;
  if (strcmp(arch, "sm_90a") == 0) return 80;
  if (strcmp(arch, "sm_90") == 0 || strcmp(arch, "sm_89") == 0) return 78;
  if (strcmp(arch, "sm_86") == 0) return 71;
  if (strcmp(arch, "sm_80") == 0) return 70;
  return 0;
}

/* The directive `name` at the start of a line (after blanks), or NULL. */
static const char *find_directive(const char *ptx, const char *name) {
  size_t nlen = strlen(name);
  for (const char *line = ptx; line && *line;) {
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, name, nlen) == 0 && (p[nlen] == ' ' || p[nlen] == '\t')) return p;
    line = strchr(line, '\n');
    if (line) line++;
  }
  return NULL;
}

int tl_ptx_read_version(const char *ptx) {
  const char *p = find_directive(ptx, ".version");
  int major, minor;
  if (!p || sscanf(p + 8, " %d.%d", &major, &minor) != 2 || major < 1 || minor < 0 || minor > 9) return -1;
  return 10 * major + minor;
}

bool tl_ptx_read_target(const char *ptx, char *buf, size_t n) {
  const char *p = find_directive(ptx, ".target");
  if (!p) return false;
  p += 7;
  while (*p == ' ' || *p == '\t') p++;
  size_t len = 0;
  while (p[len] && p[len] != ',' && p[len] != ' ' && p[len] != '\n' && p[len] != '\r' && p[len] != '\t') len++;
  if (len == 0 || len >= n) return false;
  memcpy(buf, p, len);
  buf[len] = 0;
  return true;
}

char *tl_ptx_set_version(const char *ptx, int isa) {
  const char *p = find_directive(ptx, ".version");
  if (!p) return NULL;
  const char *eol = strchr(p, '\n');
  if (!eol) eol = p + strlen(p);
  char line[32];
  int w = snprintf(line, sizeof line, ".version %d.%d", isa / 10, isa % 10);
  size_t head = (size_t)(p - ptx), tail = strlen(eol);
  char *out = malloc(head + (size_t)w + tail + 1);
  if (!out) return NULL;
  memcpy(out, ptx, head);
  memcpy(out + head, line, (size_t)w);
  memcpy(out + head + w, eol, tail + 1);
  return out;
}

int tl_jit_target_for_arch(const char *arch) {
  int cc = 0;
  char suffix = 0;
  if (!arch || sscanf(arch, "sm_%d%c", &cc, &suffix) < 1 || cc < 10) return -1;
  if (suffix && suffix != 'a') return -1;
  return suffix == 'a' ? TL_CU_ACCELERATED_TARGET_BASE + cc : cc;
}

static void describe(tl_sbuf *msg, const tl_rt_device *d, const tl_jit_request *rq, int isa, int driver) {
  tl_sbuf_printf(msg, "  kernel %s, arch %s, PTX ISA %d.%d, driver CUDA %d.%d, device %d (%s, sm_%d%d)\n",
                 rq->kernel ? rq->kernel : "?", rq->arch ? rq->arch : "?", isa / 10, isa % 10, driver / 1000,
                 driver % 1000 / 10, d->ordinal, d->name, d->cc_major, d->cc_minor);
}

/* rq->ptx with its .version fitted to the driver: *out is rq->ptx itself or a malloc'd copy
 * (*rewritten, to free); *isa / *used_isa the PTX's ISA before and after; *cu_out the driver. */
static int fit_ptx(const tl_rt_device *d, const tl_jit_request *rq, const tl_cuda **cu_out, const char **out,
                   char **rewritten, int *isa_out, int *used_out, tl_sbuf *msg) {
  char err[512];
  *out = rq->ptx;
  *rewritten = NULL;
  int st = tl_rt_driver(cu_out, err, sizeof err);
  if (st != TL_OK) {
    tl_sbuf_printf(msg, "%s\n", err);
    return st;
  }
  int driver = (*cu_out)->driver_version;
  int isa = tl_ptx_read_version(rq->ptx);
  if (isa < 0) {
    tl_sbuf_printf(msg, "PTX of kernel %s has no valid .version line\n", rq->kernel ? rq->kernel : "?");
    return TL_ERR_INTERNAL;
  }
  *isa_out = *used_out = isa;
  /* Fit .version to the driver: a driver rejects PTX newer than its own ISA
   * even when the code uses nothing new.  Lowering is sound down to the
   * target's minimum ISA (what the codegen's features need). */
  int driver_isa = tl_ptx_isa_for_driver(driver);
  if (driver_isa && isa > driver_isa) {
    int need = tl_ptx_isa_min_for_arch(rq->arch);
    if (need > driver_isa) {
      tl_sbuf_printf(msg, "the NVIDIA driver is too old for %s: it accepts PTX ISA up to %d.%d, %s needs %d.%d\n",
                     rq->arch, driver_isa / 10, driver_isa % 10, rq->arch, need / 10, need % 10);
      describe(msg, d, rq, isa, driver);
      return TL_ERR_CUDA;
    }
    *rewritten = tl_ptx_set_version(rq->ptx, driver_isa);
    if (!*rewritten) return TL_ERR_NOMEM;
    *out = *rewritten;
    *used_out = driver_isa;
  }
  return TL_OK;
}

int tl_rt_ptx_image(const tl_rt_device *d, const tl_jit_request *rq, void **image, size_t *size, tl_sbuf *msg) {
  const tl_cuda *cu;
  *image = NULL;
  *size = 0;
  const char *ptx;
  char *rewritten;
  int isa, used_isa;
  int st = fit_ptx(d, rq, &cu, &ptx, &rewritten, &isa, &used_isa, msg);
  if (st != TL_OK) return st;
  if (!rewritten) rewritten = strdup(ptx);
  if (!rewritten) return TL_ERR_NOMEM;
  *image = rewritten;
  *size = strlen(rewritten) + 1;
  return TL_OK;
}

int tl_rt_ptx_to_cubin(const tl_rt_device *d, const tl_jit_request *rq, void **cubin, size_t *size,
                       tl_sbuf *info, tl_sbuf *msg) {
  const tl_cuda *cu;
  char err[512];
  *cubin = NULL;
  *size = 0;
  const char *ptx;
  char *rewritten;
  int isa, used_isa;
  int st = fit_ptx(d, rq, &cu, &ptx, &rewritten, &isa, &used_isa, msg);
  if (st != TL_OK) return st;
  int driver = cu->driver_version;
  if ((st = tl_rt_make_current(d, err, sizeof err)) != TL_OK) {
    tl_sbuf_printf(msg, "%s\n", err);
    free(rewritten);
    return st;
  }

  static const size_t log_size = 16384;
  char *info_log = calloc(1, log_size), *error_log = calloc(1, log_size);
  if (!info_log || !error_log) {
    free(info_log); free(error_log); free(rewritten);
    return TL_ERR_NOMEM;
  }
  /* CU_JIT_TARGET: the device's compute capability, as the arch-specific
   * ("a") target when the PTX was written for one. */
  int target = 10 * d->cc_major + d->cc_minor;
  size_t alen = rq->arch ? strlen(rq->arch) : 0;
  if (alen && rq->arch[alen - 1] == 'a') target += TL_CU_ACCELERATED_TARGET_BASE;
  int opt = rq->opt_level < 0 ? 0 : rq->opt_level > 4 ? 4 : rq->opt_level;
  CUjit_option opts[8];
  void *vals[8];
  unsigned nopts = 0;
  opts[nopts] = CU_JIT_INFO_LOG_BUFFER; vals[nopts++] = info_log;
  opts[nopts] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES; vals[nopts++] = (void *)(uintptr_t)log_size;
  opts[nopts] = CU_JIT_ERROR_LOG_BUFFER; vals[nopts++] = error_log;
  opts[nopts] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES; vals[nopts++] = (void *)(uintptr_t)log_size;
  opts[nopts] = CU_JIT_OPTIMIZATION_LEVEL; vals[nopts++] = (void *)(uintptr_t)opt;
  opts[nopts] = CU_JIT_LOG_VERBOSE; vals[nopts++] = (void *)(uintptr_t)1;
  if (target > 0) { opts[nopts] = CU_JIT_TARGET; vals[nopts++] = (void *)(uintptr_t)target; }

  CUlinkState link = NULL;
  const char *step = "cuLinkCreate";
  CUresult r = cu->cuLinkCreate(nopts, opts, vals, &link);
  if (r == CUDA_SUCCESS) {
    step = "cuLinkAddData";
    char name[300];
    snprintf(name, sizeof name, "%s.ptx", rq->kernel ? rq->kernel : "tilec");
    r = cu->cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, name, 0, NULL, NULL);
  }
  void *image = NULL;
  size_t image_size = 0;
  if (r == CUDA_SUCCESS) {
    step = "cuLinkComplete";
    r = cu->cuLinkComplete(link, &image, &image_size);
  }
  if (r == CUDA_SUCCESS) {
    *cubin = malloc(image_size);
    if (*cubin) {
      memcpy(*cubin, image, image_size);
      *size = image_size;
    }
  }
  if (link) cu->cuLinkDestroy(link);
  if (r != CUDA_SUCCESS) {
    char t[200];
    tl_sbuf_printf(msg, "the driver's PTX JIT failed (%s: %s)\n", step, tl_rt_result_text(r, t, sizeof t));
    describe(msg, d, rq, used_isa, driver);
    if (used_isa != isa) tl_sbuf_printf(msg, "  (PTX .version lowered from %d.%d to fit the driver)\n", isa / 10, isa % 10);
    if (error_log[0]) tl_sbuf_printf(msg, "JIT error log:\n%s\n", error_log);
    if (info_log[0]) tl_sbuf_printf(msg, "JIT info log:\n%s\n", info_log);
    st = TL_ERR_CUDA;
  } else if (!*cubin) {
    st = TL_ERR_NOMEM;
  } else {
    if (info && info_log[0]) tl_sbuf_printf(info, "%s\n", info_log);
    st = TL_OK;
  }
  free(info_log);
  free(error_log);
  free(rewritten);
  return st;
}

bool tl_rt_image_is_cubin(const void *image, size_t size) {
  return image && size >= 4 && memcmp(image, "\x7f" "ELF", 4) == 0;
}

/* PTX text -> module, compiled whole by the driver's JIT (cuModuleLoadDataEx): the arch-specific
 * target when the PTX's .target is one (sm_90a), the error log into msg on failure. */
static int load_ptx(const tl_cuda *cu, const tl_rt_device *d, const char *ptx, CUmodule *mod, tl_sbuf *msg) {
  static const size_t log_size = 16384;
  char *error_log = calloc(1, log_size);
  if (!error_log) return TL_ERR_NOMEM;
  char arch[32] = "";
  int target = 10 * d->cc_major + d->cc_minor;
  if (tl_ptx_read_target(ptx, arch, sizeof arch) && arch[0] && arch[strlen(arch) - 1] == 'a')
    target += TL_CU_ACCELERATED_TARGET_BASE;
  CUjit_option opts[4];
  void *vals[4];
  unsigned nopts = 0;
  opts[nopts] = CU_JIT_ERROR_LOG_BUFFER; vals[nopts++] = error_log;
  opts[nopts] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES; vals[nopts++] = (void *)(uintptr_t)log_size;
  if (target > 0) { opts[nopts] = CU_JIT_TARGET; vals[nopts++] = (void *)(uintptr_t)target; }
  CUresult r = cu->cuModuleLoadDataEx ? cu->cuModuleLoadDataEx(mod, ptx, nopts, opts, vals) : cu->cuModuleLoadData(mod, ptx);
  int st = TL_OK;
  if (r != CUDA_SUCCESS) {
    char t[200];
    tl_sbuf_printf(msg, "the driver's PTX JIT failed (cuModuleLoadDataEx on device %d: %s)\n", d->ordinal,
                   tl_rt_result_text(r, t, sizeof t));
    if (arch[0]) tl_sbuf_printf(msg, "  PTX target %s, device %d (%s, sm_%d%d)\n", arch, d->ordinal, d->name, d->cc_major, d->cc_minor);
    if (error_log[0]) tl_sbuf_printf(msg, "JIT error log:\n%s\n", error_log);
    st = TL_ERR_CUDA;
  }
  free(error_log);
  return st;
}

int tl_rt_load_function(const tl_rt_device *d, const void *cubin, const char *entry, CUmodule *mod,
                        CUfunction *fn, tl_sbuf *msg) {
  const tl_cuda *cu;
  char err[512], t[200];
  *mod = NULL;
  *fn = NULL;
  int st = tl_rt_driver(&cu, err, sizeof err);
  if (st == TL_OK) st = tl_rt_make_current(d, err, sizeof err);
  if (st != TL_OK) {
    tl_sbuf_printf(msg, "%s\n", err);
    return st;
  }
  CUresult r;
  if (tl_rt_image_is_cubin(cubin, 4)) {
    r = cu->cuModuleLoadData(mod, cubin);
    if (r != CUDA_SUCCESS) {
      tl_sbuf_printf(msg, "cuModuleLoadData failed on device %d: %s\n", d->ordinal, tl_rt_result_text(r, t, sizeof t));
      *mod = NULL;
      return TL_ERR_CUDA;
    }
  } else if ((st = load_ptx(cu, d, cubin, mod, msg)) != TL_OK) {
    *mod = NULL;
    return st;
  }
  r = cu->cuModuleGetFunction(fn, *mod, entry);
  if (r != CUDA_SUCCESS) {
    tl_sbuf_printf(msg, "kernel entry %s not found in the module: %s\n", entry, tl_rt_result_text(r, t, sizeof t));
    cu->cuModuleUnload(*mod);
    *mod = NULL;
    *fn = NULL;
    return TL_ERR_CUDA;
  }
  return TL_OK;
}
