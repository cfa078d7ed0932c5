/* cache.c: the kernel cache.  Key = SHA-256 of everything a kernel depends
 * on; memory map (key, device) -> loaded function; disk entries holding the
 * cubin and launch metadata, published atomically and verified on read (a
 * fast 64-bit checksum: reading an entry is on the warm path, which must
 * stay well under a millisecond besides the driver's module load).
 * requires: nothing (driver only to unload a duplicate module);
 * keeps: a corrupt entry is a miss, never a wrong kernel; breaks: nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

/* ---- key ------------------------------------------------------------------------------ */
void tl_cache_key_compute(const tl_cache_key_fields *f, tl_cache_key *out) {
  tl_sha256_ctx s;
  tl_sha256_init(&s);
  tl_sha256_field_str(&s, "format", "tilec-kernel-cache-key/1");
  tl_sha256_field(&s, "source", f->source, f->source ? f->source_len : 0);
  tl_sha256_field_str(&s, "kernel", f->kernel);
  tl_sha256_field_int(&s, "ndefines", f->ndefines);
  for (int i = 0; i < f->ndefines; i++) {
    tl_sha256_field_str(&s, "define", f->define_names[i]);
    tl_sha256_field_int(&s, "value", f->define_values[i]);
  }
  tl_sha256_field_str(&s, "arch", f->arch);
  tl_sha256_field_int(&s, "opt_level", f->opt_level);
  tl_sha256_field_int(&s, "line_info", f->line_info);
  tl_sha256_field_str(&s, "pipeline", f->pipeline);
  tl_sha256_field_str(&s, "entry_name", f->entry_name);
  tl_sha256_field_str(&s, "tilec", f->tilec_version);
  tl_sha256_field_str(&s, "llvm", f->llvm_version);
  tl_sha256_field_int(&s, "driver", f->driver_version);
  tl_sha256_field_int(&s, "jit_opt_level", f->jit_opt_level);
  tl_sha256_field_int(&s, "warps", f->warps);
  tl_sha256_field_int(&s, "stages", f->stages);
  if (f->maxnreg) tl_sha256_field_int(&s, "maxnreg", f->maxnreg);
  tl_sha256_field_int(&s, "fp8_acc_fast", f->fp8_acc_fast);
  tl_sha256_field_str(&s, "extra", f->extra);
  tl_sha256_final(&s, out->b);
}

void tl_cache_key_hex(const tl_cache_key *k, char out[65]) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    out[2 * i] = hex[k->b[i] >> 4];
    out[2 * i + 1] = hex[k->b[i] & 15];
  }
  out[64] = 0;
}

/* ---- directory -------------------------------------------------------------------------- */
/* mkdir -p with mode 0700 for every directory it creates; *st is the
 * directory's stat.  An existing directory (every warm start) costs one stat. */
static bool make_dirs(const char *path, struct stat *st, tl_sbuf *msg) {
  if (stat(path, st) == 0 && S_ISDIR(st->st_mode)) return true;
  char tmp[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof tmp) {
    tl_sbuf_printf(msg, "cache: directory path is empty or too long; disk cache not used\n");
    return false;
  }
  memcpy(tmp, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (tmp[i] != '/' && tmp[i] != 0) continue;
    char saved = tmp[i];
    tmp[i] = 0;
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
      tl_sbuf_printf(msg, "cache: cannot create directory %s: %s; disk cache not used\n", tmp, strerror(errno));
      return false;
    }
    tmp[i] = saved;
  }
  if (stat(path, st) != 0 || !S_ISDIR(st->st_mode)) {
    tl_sbuf_printf(msg, "cache: %s is not a directory; disk cache not used\n", path);
    return false;
  }
  return true;
}

/* A cache directory holds machine code that tilec loads and runs: it must be
 * this user's and writable by nobody else (as ssh and git refuse files that
 * others can change). */
static bool dir_is_private(const char *path, const struct stat *st, tl_sbuf *msg) {
  unsigned me = (unsigned)geteuid();
  if ((unsigned)st->st_uid != me) {
    tl_sbuf_printf(msg,
                   "cache: directory %s is owned by uid %u, not by this user (uid %u): whoever owns it could plant "
                   "machine code that tilec would load; disk cache not used\n",
                   path, (unsigned)st->st_uid, me);
    return false;
  }
  if (st->st_mode & (S_IWGRP | S_IWOTH)) {
    tl_sbuf_printf(msg,
                   "cache: directory %s is writable by %s (mode %04o): whoever can write there could plant machine "
                   "code that tilec would load; disk cache not used (chmod go-w it, or set TILEC_CACHE_DIR)\n",
                   path, (st->st_mode & S_IWGRP) && (st->st_mode & S_IWOTH) ? "group and others"
                         : st->st_mode & S_IWGRP ? "its group" : "others",
                   (unsigned)(st->st_mode & 07777));
    return false;
  }
  return true;
}

/* room after the directory for "/.tmp-<64 hex>-XXXXXX" and "/<64 hex>.tlk" */
#define ENTRY_NAME_ROOM 80

bool tl_cache_dir(char *buf, size_t n, tl_sbuf *msg) {
  const char *off = getenv("TILEC_CACHE");
  if (off && strcmp(off, "0") == 0) return false;
  const char *dir = getenv("TILEC_CACHE_DIR");
  int w;
  if (dir) {
    if (!*dir) return false;
    w = snprintf(buf, n, "%s", dir);
  } else if ((dir = getenv("XDG_CACHE_HOME")) && *dir) {
    w = snprintf(buf, n, "%s/tilec", dir);
  } else if ((dir = getenv("HOME")) && *dir) {
    w = snprintf(buf, n, "%s/.cache/tilec", dir);
  } else {
    return false;
  }
  if (w < 0 || (size_t)w + ENTRY_NAME_ROOM >= n || (size_t)w + ENTRY_NAME_ROOM >= 4096) {
    tl_sbuf_printf(msg, "cache: directory path too long (%d bytes); disk cache not used\n", w);
    return false;
  }
  struct stat st;
  return make_dirs(buf, &st, msg) && dir_is_private(buf, &st, msg);
}

void tl_cache_entry_path(const char *dir, const tl_cache_key *key, char *buf, size_t n) {
  char hex[65];
  tl_cache_key_hex(key, hex);
  snprintf(buf, n, "%s/%s.tlk", dir, hex);
}

/* ---- entry format ------------------------------------------------------------------------ *
 *   0  magic "TILECKC1"            8 bytes
 *   8  format version (3)          u32
 *  12  header size (96)            u32
 *  16  key                         32 bytes
 *  48  payload length              u64
 *  56  checksum of the payload     u64 (tl_checksum64)
 *  64  reserved (0)                32 bytes
 *  96  payload: threads u32, smem u32, nparams u32, entry length u32, entry
 *      bytes, nparams x u32 alignment, ntma u32, ntma x 5 u32 tensor maps
 *      (param, box_inner, box_rows, swizzle, dtype), persist u32 (bit 0: persistent,
 *      bits 1-2: the cluster, bit 3: the hidden tile counter, tl_cache_meta), assumed key u32, cubin length u64,
 *      cubin bytes.
 * Host byte order (entries are not meant to move between machines). */
#define ENTRY_MAGIC "TILECKC1"
#define ENTRY_FORMAT 7u /* 1: SHA-256 checksum (slow to verify); 2: no tensor maps; 3: no persist; 4: no cluster;
                          * 5: no assumed key; 6: no tile counter (a TILEC_ATTN_SCHED kernel's module global) */
#define ENTRY_HEADER 96u
#define ENTRY_MAX_PAYLOAD ((uint64_t)1 << 31)

static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* ---- injected faults (tests: a full, read-only or failing disk) ------------------------ */
static struct { int step, err; size_t after; } fault;

void tl_cache_fault_inject(tl_cache_fault_step step, int err, size_t after_bytes) {
  fault.step = err ? (int)step : TL_CACHE_FAULT_NONE;
  fault.err = err;
  fault.after = after_bytes;
}
static bool faulted(tl_cache_fault_step step) {
  if (fault.step != (int)step) return false;
  errno = fault.err;
  return true;
}

static bool write_all(int fd, const void *data, size_t n) {
  const uint8_t *p = data;
  size_t budget = fault.step == TL_CACHE_FAULT_WRITE ? fault.after : SIZE_MAX;
  while (n) {
    if (budget == 0) {
      errno = fault.err;
      return false;
    }
    ssize_t w = write(fd, p, n < budget ? n : budget);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w; n -= (size_t)w;
    if (budget != SIZE_MAX) budget -= (size_t)w;
  }
  return true;
}

/* Temporary files of publishers that died between create and rename (killed,
 * power loss) are never read; a publish (the cold path, after a compile)
 * removes those of this user older than an hour, which no live publisher
 * still writes. */
#define STALE_TEMP_SECONDS 3600
static void sweep_stale_temps(int dfd) {
  int fd = dup(dfd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return;
  }
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d))) {
    struct stat st;
    if (strncmp(e->d_name, ".tmp-", 5) != 0 || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && (unsigned)st.st_uid == (unsigned)geteuid() && now - st.st_mtime > STALE_TEMP_SECONDS)
      (void)unlinkat(dfd, e->d_name, 0);
  }
  closedir(d);
}

int tl_cache_disk_store(const char *dir, const tl_cache_key *key, const tl_cache_meta *meta,
                        const void *cubin, size_t size, tl_sbuf *msg) {
  size_t elen = strnlen(meta->entry, sizeof meta->entry);
  if (meta->nparams < 0 || meta->nparams > TL_CACHE_MAX_PARAMS || elen == sizeof meta->entry || meta->ntma < 0 ||
      meta->ntma > TL_CACHE_MAX_TMA) {
    tl_sbuf_printf(msg, "cache: bad metadata\n");
    return TL_ERR_USAGE;
  }
  size_t plen = 16 + elen + 4 * (size_t)meta->nparams + 4 + 20 * (size_t)meta->ntma + 4 + 4 + 8 + size;
  if (plen > ENTRY_MAX_PAYLOAD) {
    tl_sbuf_printf(msg, "cache: entry too large (%zu bytes)\n", plen);
    return TL_ERR_IO;
  }
  uint8_t *file = malloc(ENTRY_HEADER + plen);
  if (!file) return TL_ERR_NOMEM;
  uint8_t *p = file + ENTRY_HEADER;
  put_u32(p, (uint32_t)meta->threads); put_u32(p + 4, (uint32_t)meta->smem_bytes);
  put_u32(p + 8, (uint32_t)meta->nparams); put_u32(p + 12, (uint32_t)elen);
  p += 16;
  memcpy(p, meta->entry, elen); p += elen;
  for (int i = 0; i < meta->nparams; i++, p += 4) put_u32(p, (uint32_t)meta->param_align[i]);
  put_u32(p, (uint32_t)meta->ntma); p += 4;
  for (int i = 0; i < meta->ntma; i++, p += 20) {
    const tl_rt_tma *t = &meta->tma[i];
    put_u32(p, (uint32_t)t->param); put_u32(p + 4, (uint32_t)t->box_inner); put_u32(p + 8, (uint32_t)t->box_rows);
    put_u32(p + 12, (uint32_t)t->swizzle); put_u32(p + 16, (uint32_t)t->dtype);
  }
  put_u32(p, (meta->persist ? 1u : 0u) | (uint32_t)meta->cluster << 1 | (meta->sched_ctr ? 8u : 0u)); p += 4;
  put_u32(p, meta->assumed_key); p += 4;
  put_u64(p, size); p += 8;
  if (size) memcpy(p, cubin, size);

  memset(file, 0, ENTRY_HEADER);
  memcpy(file, ENTRY_MAGIC, 8);
  put_u32(file + 8, ENTRY_FORMAT);
  put_u32(file + 12, ENTRY_HEADER);
  memcpy(file + 16, key->b, 32);
  put_u64(file + 48, plen);
  put_u64(file + 56, tl_checksum64(file + ENTRY_HEADER, plen));

  char final_path[4096], tmp_path[4096];
  char hex[65];
  tl_cache_key_hex(key, hex);
  tl_cache_entry_path(dir, key, final_path, sizeof final_path);
  snprintf(tmp_path, sizeof tmp_path, "%s/.tmp-%s-XXXXXX", dir, hex);
  int fd = faulted(TL_CACHE_FAULT_CREATE) ? -1 : mkstemp(tmp_path); /* mode 0600 */
  if (fd < 0) {
    tl_sbuf_printf(msg, "cache: cannot create %s: %s\n", tmp_path, strerror(errno));
    free(file);
    return TL_ERR_IO;
  }
  bool ok = write_all(fd, file, ENTRY_HEADER + plen) && !faulted(TL_CACHE_FAULT_FSYNC) && fsync(fd) == 0;
  int saved = errno;
  free(file);
  if (close(fd) != 0 && ok) { ok = false; saved = errno; }
  if (ok && (faulted(TL_CACHE_FAULT_RENAME) || rename(tmp_path, final_path) != 0)) { ok = false; saved = errno; }
  if (!ok) {
    unlink(tmp_path);
    tl_sbuf_printf(msg, "cache: cannot write %s: %s\n", final_path, strerror(saved));
    return TL_ERR_IO;
  }
  /* make the rename itself durable */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    (void)fsync(dfd);
    sweep_stale_temps(dfd);
    close(dfd);
  }
  return TL_OK;
}

static int miss(tl_sbuf *why, const char *path, const char *reason) {
  if (why) tl_sbuf_printf(why, "cache: %s: %s\n", path, reason);
  return TL_CACHE_MISS;
}

int tl_cache_disk_load(const char *dir, const tl_cache_key *key, tl_cache_meta *meta, void **cubin,
                       size_t *size, tl_sbuf *why) {
  char path[4096];
  tl_cache_entry_path(dir, key, path, sizeof path);
  *cubin = NULL;
  *size = 0;
  /* no symbolic link followed; a FIFO or device cannot block the open */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return TL_CACHE_MISS;
    return miss(why, path, errno == ELOOP ? "a symbolic link, not a cache entry" : strerror(errno));
  }
  struct stat st;
  const char *bad = NULL;
  if (fstat(fd, &st) != 0) bad = strerror(errno);
  else if (!S_ISREG(st.st_mode)) bad = "not a regular file";
  else if ((unsigned)st.st_uid != (unsigned)geteuid()) bad = "owned by another user (refused: it could hold planted code)";
  else if (st.st_size < (off_t)ENTRY_HEADER || (uint64_t)st.st_size > ENTRY_HEADER + ENTRY_MAX_PAYLOAD)
    bad = "not a cache entry (size)";
  if (bad) {
    close(fd);
    return miss(why, path, bad);
  }
  size_t flen = (size_t)st.st_size;
  uint8_t *file = malloc(flen);
  if (!file) {
    close(fd);
    return miss(why, path, "out of memory");
  }
  size_t got = 0;
  while (got < flen) {
    ssize_t r = read(fd, file + got, flen - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  int result = TL_CACHE_MISS;
  const char *reason = NULL;
  static const uint8_t zeros[32];
  if (got != flen) reason = "short read";
  else if (memcmp(file, ENTRY_MAGIC, 8) != 0) reason = "bad magic";
  else if (get_u32(file + 8) != ENTRY_FORMAT) reason = "unknown format version";
  else if (get_u32(file + 12) != ENTRY_HEADER) reason = "bad header size";
  else if (memcmp(file + 16, key->b, 32) != 0) reason = "key mismatch";
  else if (get_u64(file + 48) != flen - ENTRY_HEADER) reason = "truncated or padded payload";
  else if (memcmp(file + 64, zeros, 32) != 0) reason = "bad reserved field";
  else if (tl_checksum64(file + ENTRY_HEADER, flen - ENTRY_HEADER) != get_u64(file + 56))
    reason = "checksum mismatch";
  else {
    /* the payload's own lengths, each checked against what remains */
    const uint8_t *p = file + ENTRY_HEADER, *end = file + flen;
    memset(meta, 0, sizeof *meta);
    uint32_t nparams = get_u32(p + 8), elen = get_u32(p + 12);
    if (end - p < 16 || nparams > TL_CACHE_MAX_PARAMS || elen >= sizeof meta->entry ||
        (size_t)(end - p) < 16 + (size_t)elen + 4 * (size_t)nparams + 4 + 8) {
      reason = "bad payload";
    } else {
      meta->threads = (int32_t)get_u32(p);
      meta->smem_bytes = (int32_t)get_u32(p + 4);
      meta->nparams = (int32_t)nparams;
      p += 16;
      memcpy(meta->entry, p, elen);
      meta->entry[elen] = 0;
      p += elen;
      for (uint32_t i = 0; i < nparams; i++, p += 4) meta->param_align[i] = (int32_t)get_u32(p);
      uint32_t ntma = get_u32(p);
      p += 4;
      bool tma_ok = ntma <= TL_CACHE_MAX_TMA && (size_t)(end - p) >= 20 * (size_t)ntma + 4 + 4 + 8;
      for (uint32_t i = 0; tma_ok && i < ntma; i++, p += 20) {
        tl_rt_tma *t = &meta->tma[i];
        t->param = (int32_t)get_u32(p); t->box_inner = (int32_t)get_u32(p + 4); t->box_rows = (int32_t)get_u32(p + 8);
        t->swizzle = (int32_t)get_u32(p + 12); t->dtype = (int32_t)get_u32(p + 16);
        if (t->param < 0 || t->param >= (int32_t)nparams) tma_ok = false;
      }
      meta->ntma = tma_ok ? (int32_t)ntma : 0;
      if (tma_ok) {
        uint32_t persist = get_u32(p);
        p += 4;
        uint32_t cl = persist >> 1 & 3;
        if (cl > 2 || (cl && !(persist & 1))) tma_ok = false; /* (a cluster only on persistent CTAs) */
        if (persist >> 4 || ((persist & 8) && !(persist & 1))) tma_ok = false; /* (a counter only when persistent) */
        meta->persist = (persist & 1) != 0;
        meta->sched_ctr = (persist & 8) != 0;
        meta->cluster = (int32_t)cl;
        meta->assumed_key = get_u32(p);
        p += 4;
      }
      uint64_t clen = tma_ok ? get_u64(p) : 0;
      p += tma_ok ? 8 : 0;
      if (!tma_ok) {
        reason = "bad tensor-map list";
      } else if (clen != (uint64_t)(end - p) || clen == 0) {
        reason = "bad cubin length";
      } else {
        /* hand the file buffer over, the cubin moved to its start: no second copy */
        memmove(file, p, clen);
        *cubin = file;
        file = NULL;
        *size = clen;
        result = TL_CACHE_HIT;
      }
    }
  }
  free(file);
  if (reason) return miss(why, path, reason);
  return result;
}

/* ---- memory map ---------------------------------------------------------------------------- */
typedef struct mem_entry {
  struct mem_entry *next;
  tl_cache_key key;
  int device;
  tl_cache_loaded value;
} mem_entry;

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_entry *mem_buckets[256];

static mem_entry *mem_lookup_locked(const tl_cache_key *key, int device) {
  for (mem_entry *e = mem_buckets[key->b[0]]; e; e = e->next)
    if (e->device == device && memcmp(e->key.b, key->b, 32) == 0) return e;
  return NULL;
}

bool tl_cache_mem_find(const tl_cache_key *key, int device, tl_cache_loaded *out) {
  pthread_mutex_lock(&mem_lock);
  mem_entry *e = mem_lookup_locked(key, device);
  if (e) *out = e->value;
  pthread_mutex_unlock(&mem_lock);
  return e != NULL;
}

void tl_cache_mem_insert(const tl_cache_key *key, int device, tl_cache_loaded *inout) {
  pthread_mutex_lock(&mem_lock);
  mem_entry *e = mem_lookup_locked(key, device);
  if (e) {
    /* lost a race: keep the first module, drop ours */
    CUmodule dup = inout->module;
    *inout = e->value;
    pthread_mutex_unlock(&mem_lock);
    const tl_cuda *cu;
    char err[64];
    if (dup && dup != inout->module && tl_rt_driver(&cu, err, sizeof err) == TL_OK) cu->cuModuleUnload(dup);
    return;
  }
  e = calloc(1, sizeof *e);
  if (e) { /* out of memory: simply not cached */
    e->key = *key;
    e->device = device;
    e->value = *inout;
    e->next = mem_buckets[key->b[0]];
    mem_buckets[key->b[0]] = e;
  }
  pthread_mutex_unlock(&mem_lock);
}
