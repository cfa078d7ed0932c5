/* fake_libcuda.c: a fake libcuda.so.1 for tests without a GPU, loaded in
 * place of the driver through TILEC_LIBCUDA (libtilec, the Python package)
 * or the same variable read by AOT launchers (tilec --emit=c).  One device
 * (compute capability 9.0); it "links" PTX into a cubin that is the PTX
 * behind a magic line, accepts PTX text as a module image, refuses ELF
 * cubins (CUDA_ERROR_NO_BINARY_FOR_GPU, so an AOT launcher's PTX fallback
 * runs), and records every launch: the entry, grid, block, shared memory,
 * stream and the parameter bytes (sizes from the .entry's parameter list).
 * Tensor maps are filled with a hash of every argument of
 * cuTensorMapEncodeTiled, so two launchers that encode alike launch alike.
 * Queries for tests: fake_cuda_launches(), fake_cuda_last_launch(buf, n)
 * ("ENTRY grid=X,Y,Z block=B smem=S stream=0x.. params=HEX"), fake_cuda_memsets(),
 * fake_cuda_module_loads() (images loaded), fake_cuda_last_launch_image() (the PTX text of the
 * module the last launch's function came from: which of two images ran); with
 * FAKE_CUDA_LOG=PATH every launch's line is appended to PATH too, and every cuMemsetD8 as
 * "memset 0xADDR bytes=N value=V" (the tuner's zeroing of @zeroed tensors), and TILEC_PITCH_REPACK=1's
 * cuMemAllocAsync / cuMemcpy2DAsync / cuMemFreeAsync (never dereferenced), and TILEC_ATTN_SCHED=1's
 * cuMemsetD32Async of a stream's tile counter. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
typedef int CUresult;

#define MAGIC "FAKECUBIN\n"
#define MAX_PARAMS 256

struct mod { char *text; };
struct func { struct mod *m; char name[256]; int nparams; int size[MAX_PARAMS]; };

static __thread void *current_ctx;
static long launches;
static char last[16384];

static CUresult cuInit(unsigned f) { (void)f; return 0; }
static CUresult cuGetErrorName(CUresult e, const char **s) { *s = e ? "CUDA_ERROR_FAKE" : "CUDA_SUCCESS"; return 0; }
static CUresult cuGetErrorString(CUresult e, const char **s) { (void)e; *s = "fake driver"; return 0; }
static CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
static CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
static CUresult cuDeviceGet(int *d, int ordinal) {
  if (ordinal != 0) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *d = 0;
  return 0;
}
static CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  switch (attr) {
  case 75: *v = 9; break;          /* compute capability */
  case 76: *v = 0; break;
  case 1: *v = 1024; break;        /* threads per block */
  case 12: *v = 65536; break;      /* registers per block */
  case 8: *v = 49152; break;       /* shared memory per block */
  case 97: *v = 232448; break;     /* opt-in */
  case 16: *v = 132; break;
  case 5: *v = 2147483647; break;  /* grid x */
  default: *v = 65535; break;
  }
  return 0;
}
static CUresult cuDeviceGetName(char *name, int len, int d) { snprintf(name, (size_t)len, "Fake H200 #%d", d); return 0; }
static CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)(uintptr_t)(0x1000 + 16 * d); return 0; }
static CUresult cuCtxSetCurrent(void *c) { current_ctx = c; return 0; }
static CUresult cuCtxGetDevice(int *d) { *d = current_ctx ? (int)(((uintptr_t)current_ctx - 0x1000) / 16) : 0; return 0; }
static CUresult cuCtxGetCurrent(void **c) { *c = current_ctx; return 0; }
static CUresult cuCtxSynchronize(void) { return 0; }

struct link { char *ptx, *image; };
static CUresult cuLinkCreate(unsigned n, int *o, void **v, struct link **s) {
  (void)n; (void)o; (void)v;
  *s = calloc(1, sizeof **s);
  return *s ? 0 : 2;
}
static CUresult cuLinkAddData(struct link *s, int type, void *data, size_t size, const char *name, unsigned n, int *o,
                              void **v) {
  (void)name; (void)n; (void)o; (void)v;
  if (type != 1 || size == 0 || ((char *)data)[size - 1] != 0) return 1;
  free(s->ptx);
  s->ptx = strdup(data);
  return 0;
}
static CUresult cuLinkComplete(struct link *s, void **cubin, size_t *size) {
  if (!s->ptx || !strstr(s->ptx, ".target")) return 218;
  size_t n = strlen(MAGIC) + strlen(s->ptx) + 1;
  s->image = malloc(n);
  if (!s->image) return 2;
  snprintf(s->image, n, "%s%s", MAGIC, s->ptx);
  *cubin = s->image;
  *size = n;
  return 0;
}
static CUresult cuLinkDestroy(struct link *s) { free(s->ptx); free(s->image); free(s); return 0; }
static long module_loads;
static CUresult cuModuleLoadData(struct mod **m, const void *image) {
  const char *t = image;
  if (!memcmp(t, "\x7f" "ELF", 4)) return 209; /* CUDA_ERROR_NO_BINARY_FOR_GPU */
  if (!strncmp(t, MAGIC, strlen(MAGIC))) t += strlen(MAGIC);
  else if (!strstr(t, ".target")) return 200;    /* CUDA_ERROR_INVALID_IMAGE */
  *m = calloc(1, sizeof **m);
  if (!*m) return 2;
  (*m)->text = strdup(t);
  module_loads++;
  return 0;
}
/* PTX compiled whole at load: the same check of the image (the options are the JIT's) */
static CUresult cuModuleLoadDataEx(struct mod **m, const void *image, unsigned n, int *o, void **v) {
  (void)n; (void)o; (void)v;
  return cuModuleLoadData(m, image);
}
static CUresult cuModuleUnload(struct mod *m) { free(m->text); free(m); return 0; }

/* Parameter sizes of `.entry name(...)`: .u64/.b64/.s64/.f64 8, 32-bit 4, `.b8 x[N]` N. */
static CUresult cuModuleGetFunction(struct func **out, struct mod *m, const char *name) {
  char pattern[300];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  const char *at = strstr(m->text, pattern);
  if (!at) return 500;
  struct func *f = calloc(1, sizeof *f);
  if (!f) return 2;
  f->m = m;
  snprintf(f->name, sizeof f->name, "%s", name);
  const char *q = at + strlen(pattern), *end = strchr(q, ')');
  while (end && q < end) {
    const char *item_end = memchr(q, ',', (size_t)(end - q));
    if (!item_end) item_end = end;
    char item[256];
    size_t n = (size_t)(item_end - q) < sizeof item - 1 ? (size_t)(item_end - q) : sizeof item - 1;
    memcpy(item, q, n);
    item[n] = 0;
    int size = strstr(item, ".u64") || strstr(item, ".b64") || strstr(item, ".s64") || strstr(item, ".f64") ? 8 : 4;
    const char *br = strchr(item, '[');
    if (br) size = atoi(br + 1);
    if (strstr(item, ".param") && f->nparams < MAX_PARAMS) f->size[f->nparams++] = size;
    q = item_end + 1;
  }
  *out = f; /* leaked with the module: fine in a test */
  return 0;
}
static CUresult cuFuncGetAttribute(int *v, int attr, struct func *f) {
  (void)f;
  *v = attr == 4 ? 40 : attr == 0 ? 1024 : 0; /* registers, max threads per block */
  return 0;
}
static CUresult cuFuncSetAttribute(struct func *f, int attr, int value) { (void)f; (void)attr; (void)value; return 0; }

/* The last launch, raw (formatted on request: recording costs little, so launch timings stay the caller's). */
static struct { struct func *f; unsigned g[3], b[3], smem; void *stream; unsigned char bytes[8192]; } rec;
static int log_checked;
static const char *log_path;

static void format_last(void) {
  struct func *f = rec.f;
  int w = snprintf(last, sizeof last, "%s grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%p params=", f->name, rec.g[0],
                   rec.g[1], rec.g[2], rec.b[0], rec.b[1], rec.b[2], rec.smem, rec.stream);
  size_t at = 0;
  for (int i = 0; i < f->nparams && w > 0 && (size_t)w + 2 * (size_t)f->size[i] + 2 < sizeof last; i++) {
    for (int k = 0; k < f->size[i] && at < sizeof rec.bytes; k++, at++)
      w += snprintf(last + w, sizeof last - (size_t)w, "%02x", rec.bytes[at]);
    if (i + 1 < f->nparams) last[w++] = ':';
    last[w] = 0;
  }
}

static CUresult cuLaunchKernel(struct func *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, void *stream, void **params, void **extra) {
  (void)extra;
  launches++;
  rec.f = f;
  rec.g[0] = gx; rec.g[1] = gy; rec.g[2] = gz;
  rec.b[0] = bx; rec.b[1] = by; rec.b[2] = bz;
  rec.smem = smem;
  rec.stream = stream;
  size_t at = 0;
  for (int i = 0; i < f->nparams && at + (size_t)f->size[i] <= sizeof rec.bytes; i++) {
    memcpy(rec.bytes + at, params[i], (size_t)f->size[i]);
    at += (size_t)f->size[i];
  }
  last[0] = 0;
  if (!log_checked) {
    log_path = getenv("FAKE_CUDA_LOG");
    log_checked = 1;
  }
  if (log_path && *log_path) {
    format_last();
    FILE *fp = fopen(log_path, "a");
    if (fp) {
      fprintf(fp, "%s\n", last);
      fclose(fp);
    }
  }
  return 0;
}
static CUresult cuStreamSynchronize(void *s) { (void)s; return 0; }
static CUresult cuEventCreate(void **e, unsigned fl) { (void)fl; *e = malloc(8); return *e ? 0 : 2; }
static CUresult cuEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
static CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
static CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 1.0f; return 0; }
static CUresult cuEventDestroy(void *e) { free(e); return 0; }
static CUresult cuMemAlloc(uint64_t *p, size_t n) { *p = (uint64_t)(uintptr_t)malloc(n ? n : 1); return *p ? 0 : 2; }
static CUresult cuMemFree(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
static long memsets;
static CUresult cuMemsetD8(uint64_t p, unsigned char v, size_t n) {
  memset((void *)(uintptr_t)p, v, n);
  memsets++;
  if (!log_checked) {
    log_path = getenv("FAKE_CUDA_LOG");
    log_checked = 1;
  }
  if (log_path && *log_path) {
    FILE *fp = fopen(log_path, "a");
    if (fp) {
      fprintf(fp, "memset 0x%llx bytes=%zu value=%u\n", (unsigned long long)p, n, v);
      fclose(fp);
    }
  }
  return 0;
}

/* TILEC_PITCH_REPACK=1's stream-ordered calls: recorded in FAKE_CUDA_LOG ("alloc_async 0xADDR
 * bytes=N stream=S", "memcpy2d src=.. spitch=.. dst=.. dpitch=.. width=.. height=.. stream=S",
 * "free_async 0xADDR stream=S"), never dereferenced (the addresses are fake) */
static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
  if (!log_checked) {
    log_path = getenv("FAKE_CUDA_LOG");
    log_checked = 1;
  }
  if (!log_path || !*log_path) return;
  FILE *fp = fopen(log_path, "a");
  if (!fp) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(fp, fmt, ap);
  va_end(ap);
  fputc('\n', fp);
  fclose(fp);
}
static long async_allocs;
static CUresult cuMemAllocAsync(uint64_t *p, size_t n, void *s) {
  *p = 0x7e0000000000ull + 0x10000000ull * (uint64_t)async_allocs++;
  log_line("alloc_async 0x%llx bytes=%zu stream=%p", (unsigned long long)*p, n, s);
  return 0;
}
static CUresult cuMemFreeAsync(uint64_t p, void *s) {
  log_line("free_async 0x%llx stream=%p", (unsigned long long)p, s);
  return 0;
}
/* CUDA_MEMCPY2D (runtime/cuda_api.h's layout) */
struct memcpy2d {
  size_t src_x, src_y; unsigned src_type; const void *src_host; uint64_t src_dev; void *src_array; size_t src_pitch;
  size_t dst_x, dst_y; unsigned dst_type; void *dst_host; uint64_t dst_dev; void *dst_array; size_t dst_pitch;
  size_t width, height;
};
static CUresult cuMemcpy2DAsync(const struct memcpy2d *c, void *s) {
  log_line("memcpy2d src=0x%llx spitch=%zu dst=0x%llx dpitch=%zu width=%zu height=%zu stream=%p",
           (unsigned long long)c->src_dev, c->src_pitch, (unsigned long long)c->dst_dev, c->dst_pitch, c->width,
           c->height, s);
  return 0;
}

/* TILEC_ATTN_SCHED=1's tile counters (lib/api/sched_slot.c): "memset32 0xADDR words=N value=V stream=S"
 * (the address is the fake's cuMemAlloc memory, written) */
static CUresult cuMemsetD32Async(uint64_t p, unsigned v, size_t n, void *s) {
  for (size_t i = 0; i < n; i++) memcpy((char *)(uintptr_t)p + 4 * i, &v, 4);
  log_line("memset32 0x%llx words=%zu value=%u stream=%p", (unsigned long long)p, n, v, s);
  return 0;
}
static CUresult cuStreamIsCapturing(void *s, int *status) { (void)s; *status = 0; return 0; }

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9ull;
}
static CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
                                       const uint64_t *strides, const unsigned *box, const unsigned *estr,
                                       int interleave, int swizzle, int l2, int oob) {
  /* (the driver takes ranks 1..5: a ring row of a vector is rank 1, lib/codegen/emit_ring_rows.c) */
  if ((uintptr_t)map % 64 || rank < 1 || rank > 5) return 1;
  uint64_t h = mix(mix(mix(0, (uint64_t)dtype), rank), (uint64_t)(uintptr_t)addr);
  for (unsigned d = 0; d < rank; d++) {
    h = mix(mix(mix(h, dims[d]), box[d]), estr[d]);
    if (d + 1 < rank) h = mix(h, strides[d]);
  }
  h = mix(mix(mix(mix(h, (uint64_t)interleave), (uint64_t)swizzle), (uint64_t)l2), (uint64_t)oob);
  /* FAKE_CUDA_TMAP_LOG=PATH: every map's box ("tmap dtype=D rank=R box=B0xB1.. estr=.. swizzle=S
   * box_bytes=N"), so a dry run can compare a kernel's expect_tx bytes with the boxes the launcher
   * encodes (a mismatch is a hang); a log of its own, FAKE_CUDA_LOG's lines stay the launches' */
  const char *tl = getenv("FAKE_CUDA_TMAP_LOG");
  FILE *fp = tl && *tl ? fopen(tl, "a") : NULL;
  if (fp) {
    static const int esize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 1, 1, 1};  /* CU_TENSOR_MAP_DATA_TYPE_* */
    uint64_t bytes = dtype >= 0 && dtype < 16 ? (uint64_t)esize[dtype] : 0;
    fprintf(fp, "tmap dtype=%d rank=%u box=", dtype, rank);
    for (unsigned d = 0; d < rank; d++) {
      fprintf(fp, "%s%u", d ? "x" : "", box[d]);
      bytes *= box[d];
    }
    fprintf(fp, " estr=");
    for (unsigned d = 0; d < rank; d++) fprintf(fp, "%s%u", d ? "x" : "", estr[d]);
    fprintf(fp, " swizzle=%d box_bytes=%llu\n", swizzle, (unsigned long long)bytes);
    fclose(fp);
  }
  uint64_t *w = map;
  for (int i = 0; i < 16; i++) w[i] = h = mix(h, (uint64_t)i);
  return 0;
}

static const struct { const char *name; void *fn; } table[] = {
#define E(n) {#n, (void *)n}
    E(cuInit), E(cuGetErrorName), E(cuGetErrorString), E(cuDriverGetVersion), E(cuDeviceGetCount), E(cuDeviceGet),
    E(cuDeviceGetAttribute), E(cuDeviceGetName), E(cuDevicePrimaryCtxRetain), E(cuCtxSetCurrent), E(cuCtxGetCurrent), E(cuCtxGetDevice),
    E(cuCtxSynchronize), E(cuLinkCreate), E(cuLinkAddData), E(cuLinkComplete), E(cuLinkDestroy), E(cuModuleLoadData), E(cuModuleLoadDataEx),
    E(cuModuleUnload), E(cuModuleGetFunction), E(cuFuncGetAttribute), E(cuFuncSetAttribute), E(cuLaunchKernel),
    E(cuStreamSynchronize), E(cuEventCreate), E(cuEventRecord), E(cuEventSynchronize), E(cuEventElapsedTime),
    E(cuEventDestroy), E(cuMemAlloc), E(cuMemFree), E(cuMemsetD8), E(cuTensorMapEncodeTiled),
    E(cuMemAllocAsync), E(cuMemFreeAsync), E(cuMemcpy2DAsync), E(cuMemsetD32Async), E(cuStreamIsCapturing),
#undef E
};

API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
  (void)version; (void)flags;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, symbol)) {
      *pfn = table[i].fn;
      if (status) *status = 0;
      return 0;
    }
  *pfn = NULL;
  if (status) *status = 1;
  return 500;
}

API long fake_cuda_launches(void) { return launches; }
API long fake_cuda_memsets(void) { return memsets; }
API long fake_cuda_module_loads(void) { return module_loads; }
API const char *fake_cuda_last_launch_image(void) { return rec.f ? rec.f->m->text : NULL; }
API size_t fake_cuda_last_launch(char *buf, size_t n) {
  if (!last[0] && rec.f) format_last();
  if (buf && n) snprintf(buf, n, "%s", last);
  return strlen(last);
}
