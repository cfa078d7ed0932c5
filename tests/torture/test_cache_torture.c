/* test_cache_torture.c: the kernel cache under abuse (ctest -L torture), on
 * the fake driver (tests/unit/fake_cuda.h: its "cubin" is the PTX behind a
 * magic line, so the module a launch ran tells exactly which kernel it was).
 * Every case ends in the right kernel or a clean recompile, never a crash or
 * a wrong kernel, with a note in the program log saying what was skipped and
 * why.  Loads run in forked children (a process's memory cache would serve a
 * second load); a child checks with CHECK and exits 1 on a failure.
 * Each Test is its own ctest test (torture.cache.NAME; tests/CMakeLists.txt). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"
#include "tilec.h"

#define FAKE_NDEVICES 2
#include "fake_cuda.h"

static CUfunction last_fn;
static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned smem, CUstream s, void **params, void **extra) {
  (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)smem; (void)s; (void)params; (void)extra;
  calls.launches++;
  last_fn = f;
  return 0;
}
static const tl_cuda fake = {FAKE_CUDA_ENTRIES, .cuLaunchKernel = f_launch};
/* the same fake reporting CUDA 12.8 */
static tl_cuda fake_12_8;
static const tl_cuda *cuda_12_8(void) {
  fake_12_8 = fake;
  fake_12_8.driver_version = 12080;
  return &fake_12_8;
}

/* ---- set-up: a fresh cache directory per test ------------------------------------------------ */
static char cache_dir[64];
static void setup(void) {
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tilec-torture-XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("TILEC_CACHE_DIR", cache_dir, 1);
  unsetenv("TILEC_CACHE");
  umask(022);
}
static void teardown(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", cache_dir, cache_dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", cache_dir);
}
TestSuite(cache, .init = setup, .fini = teardown);

/* ---- kernels: variant v is `kv<v>`, Z = X * (v + 2) + Y ------------------------------------------ */
static void kernel_source(char *buf, size_t n, int v) {
  snprintf(buf, n,
           "kernel kv%d(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N])\n"
           "    tiles(B = 128)\n    grid(cdiv(N, B))\n{\n    i = program_id(0) * B;\n"
           "    store(Z[i : i + B], load(X[i : i + B]) * %d.0 + load(Y[i : i + B]));\n}\n",
           v, v + 2);
}
static tilec_program *program(int v) {
  char src[1024], name[32];
  kernel_source(src, sizeof src, v);
  snprintf(name, sizeof name, "kv%d.tile", v);
  tilec_program *p = NULL;
  if (tilec_program_create(&p, src, name, NULL) != TILEC_OK) return NULL;
  return p;
}

/* ---- children ------------------------------------------------------------------------------------ */
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "child %d: FAIL line %d: ", (int)getpid(), __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      return 1;                                                       \
    }                                                                 \
  } while (0)

typedef struct load_want {
  const char *origin;   /* NULL: "compiled" or "disk-cache" */
  const char *log[3];   /* each must be in the program log */
  const char *not_log;  /* must not be */
} load_want;

/* Load variant v on `device`, launch it, and check that the module the
 * launch ran is exactly the fake cubin of v's own PTX (from a separate
 * compile that no cache touches). */
static int load_and_check(int v, int device, const load_want *w) {
  tilec_program *p = program(v), *ref = program(v);
  CHECK(p && ref, "program create");
  tilec_kernel *k = NULL;
  tilec_status st = tilec_kernel_load(p, NULL, device, &k);
  const char *log = tilec_program_log(p);
  CHECK(st == TILEC_OK, "load kv%d: status %d: %s", v, (int)st, log);
  const char *origin = tilec_kernel_origin(k);
  if (w && w->origin) CHECK(strcmp(origin, w->origin) == 0, "kv%d: origin %s, want %s; log:\n%s", v, origin, w->origin, log);
  else CHECK(!strcmp(origin, "compiled") || !strcmp(origin, "disk-cache"), "kv%d: origin %s", v, origin);
  for (int i = 0; w && i < 3 && w->log[i]; i++)
    CHECK(strstr(log, w->log[i]), "kv%d: no '%s' in the log:\n%s", v, w->log[i], log);
  if (w && w->not_log) CHECK(!strstr(log, w->not_log), "kv%d: '%s' in the log:\n%s", v, w->not_log, log);
  /* the notes, in the test's output: what was skipped and why */
  for (const char *at = strstr(log, "tilec: note:"); at; at = strstr(at + 1, "tilec: note:"))
    printf("  kv%d on device %d (%s): %.*s\n", v, device, origin, (int)strcspn(at, "\n"), at);
  /* launch and identify the module */
  int64_t shape[1] = {1000};
  DLTensor t[3];
  tilec_arg args[3];
  for (int i = 0; i < 3; i++) {
    t[i] = (DLTensor){.data = (void *)(uintptr_t)(0x7f0000000000ull + 0x100000ull * (uint64_t)i),
                      .device = {kDLCUDA, device}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  last_fn = NULL;
  CHECK(tilec_kernel_launch(k, args, 3, NULL) == TILEC_OK, "launch: %s", tilec_kernel_error(k));
  CHECK(last_fn && last_fn->mod, "no launch recorded");
  CHECK(tilec_program_compile(ref, TILEC_STAGE_PTX) == TILEC_OK, "reference compile: %s", tilec_program_log(ref));
  const char *ptx = tilec_program_text(ref, TILEC_STAGE_PTX);
  const char *text = last_fn->mod->text;
  CHECK(strncmp(text, FAKE_MAGIC, strlen(FAKE_MAGIC)) == 0 && strcmp(text + strlen(FAKE_MAGIC), ptx) == 0,
        "kv%d (%s): the launched module is not kv%d's own code", v, origin, v);
  tilec_kernel_destroy(k);
  tilec_program_destroy(ref);
  tilec_program_destroy(p);
  return 0;
}

/* Run fn(arg) in a child; its exit status (0 = passed). */
static int in_child(int (*fn)(void *), void *arg) {
  fflush(NULL);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    int rc = fn(arg);
    fflush(NULL);
    _exit(rc);
  }
  int status = 0;
  cr_assert(waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

typedef struct job { int variant, device; load_want want; const tl_cuda *driver; tl_cache_fault_step fault;
                     int fault_err; size_t fault_after; } job;
static int run_job(void *arg) {
  job *j = arg;
  if (j->driver && !tl_rt_driver_inject(j->driver)) return 2;
  if (j->fault) tl_cache_fault_inject(j->fault, j->fault_err, j->fault_after);
  return load_and_check(j->variant, j->device, &j->want);
}
/* One load in a child, which must pass. */
#define CHILD_LOAD(...)                                                 \
  do {                                                                  \
    job j_ = {__VA_ARGS__};                                             \
    if (!j_.driver) j_.driver = &fake;                                  \
    int rc_ = in_child(run_job, &j_);                                   \
    cr_assert_eq(rc_, 0, "the child loading kv%d failed (%d, see stderr)", j_.variant, rc_); \
  } while (0)

/* ---- directory helpers ------------------------------------------------------------------------------ */
static int count_files(const char *dir, const char *suffix, const char *prefix) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
    if (suffix && len > sl && strcmp(e->d_name + len - sl, suffix) == 0) n++;
    if (prefix && strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
  }
  closedir(d);
  return n;
}
static int entries(const char *dir) { return count_files(dir, ".tlk", NULL); }
static int temps(const char *dir) { return count_files(dir, NULL, ".tmp-"); }

/* The path of the only entry of dir. */
static void only_entry(const char *dir, char *path, size_t n) {
  DIR *d = opendir(dir);
  cr_assert(d);
  struct dirent *e;
  int found = 0;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".tlk")) {
      snprintf(path, n, "%s/%s", dir, e->d_name);
      found++;
    }
  closedir(d);
  cr_assert_eq(found, 1, "%d entries in %s", found, dir);
}
static uint8_t *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  cr_assert(f, "%s", path);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*n ? *n : 1);
  cr_assert(fread(b, 1, *n, f) == *n);
  fclose(f);
  return b;
}
static void write_file(const char *path, const void *b, size_t n) {
  FILE *f = fopen(path, "wb");
  cr_assert(f, "%s", path);
  cr_assert(fwrite(b, 1, n, f) == n);
  fclose(f);
}
/* The key of the entry at path (its file name). */
static tl_cache_key key_of_path(const char *path) {
  const char *name = strrchr(path, '/') + 1;
  tl_cache_key k;
  for (int i = 0; i < 32; i++) {
    unsigned b;
    cr_assert(sscanf(name + 2 * i, "%2x", &b) == 1);
    k.b[i] = (uint8_t)b;
  }
  return k;
}
static int disk_load(const char *dir, const tl_cache_key *k, tl_sbuf *why) {
  tl_cache_meta m;
  void *cubin = NULL;
  size_t size = 0;
  int r = tl_cache_disk_load(dir, k, &m, &cubin, &size, why);
  free(cubin);
  return r;
}
static bool is_root(void) { return geteuid() == 0; }

/* ---- cases ------------------------------------------------------------------------------------------- */

/* 16 processes at once on one directory: all load kv0 (the same kernel) and
 * one of kv1..kv4 (four processes each); each runs its own kernel.  Then
 * five complete entries, no temporary file, and a new process loads all
 * five from the disk. */
static int sixteen_child(void *arg) {
  int i = *(int *)arg;
  return load_and_check(0, i % 2, NULL) || load_and_check(1 + i % 4, i % 2, NULL);
}
static int five_from_disk(void *arg) {
  (void)arg;
  load_want w = {.origin = "disk-cache"};
  for (int v = 0; v < 5; v++)
    if (load_and_check(v, 0, &w)) return 1;
  return 0;
}
Test(cache, sixteen_processes_same_and_different_kernels) {
  cr_assert(tl_rt_driver_inject(&fake));
  int go[2];
  cr_assert(pipe(go) == 0);
  pid_t pids[16];
  fflush(NULL);
  for (int i = 0; i < 16; i++) {
    pids[i] = fork();
    cr_assert(pids[i] >= 0);
    if (pids[i] == 0) {
      close(go[1]);
      char c;
      (void)!read(go[0], &c, 1); /* all start together: EOF when the parent closes */
      int rc = sixteen_child(&i);
      fflush(NULL);
      _exit(rc);
    }
  }
  close(go[0]);
  close(go[1]);
  int failed = 0;
  for (int i = 0; i < 16; i++) {
    int status = 0;
    cr_assert(waitpid(pids[i], &status, 0) == pids[i]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
  }
  cr_assert_eq(failed, 0, "%d of 16 processes failed (see stderr)", failed);
  cr_assert_eq(entries(cache_dir), 5);
  cr_assert_eq(temps(cache_dir), 0, "temporary files left behind");
  cr_assert_eq(in_child(five_from_disk, NULL), 0);
}

/* The entry truncated at every length is a miss with a reason; at sample
 * lengths through the JIT: a recompile, the right kernel, and the entry
 * republished byte for byte. */
Test(cache, truncated_at_every_length) {
  cr_assert(tl_rt_driver_inject(&fake));
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled"});
  char path[512];
  only_entry(cache_dir, path, sizeof path);
  size_t full;
  uint8_t *orig = read_file(path, &full);
  tl_cache_key k = key_of_path(path);
  /* longest first: each length is one ftruncate of the same file */
  int tfd = open(path, O_WRONLY);
  cr_assert(tfd >= 0);
  for (size_t len = full; len-- > 0;) {
    cr_assert(ftruncate(tfd, (off_t)len) == 0);
    tl_sbuf why = {0};
    cr_assert_eq(disk_load(cache_dir, &k, &why), TL_CACHE_MISS, "truncated to %zu of %zu bytes: a hit", len, full);
    cr_assert(why.len > 0 && strstr(why.data, path), "truncated to %zu: no reason given", len);
    tl_sbuf_free(&why);
  }
  close(tfd);
  size_t cuts[] = {0, 1, 8, 95, 96, 97, full / 2, full - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    write_file(path, orig, cuts[i]);
    CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"kernel cache entry skipped, recompiling", path}});
    size_t n;
    uint8_t *again = read_file(path, &n);
    cr_assert(n == full && memcmp(again, orig, n) == 0, "the republished entry differs (cut at %zu)", cuts[i]);
    free(again);
  }
  CHILD_LOAD(.variant = 0, .want = {.origin = "disk-cache"});
  printf("truncated_at_every_length: %zu lengths of a %zu-byte entry missed; 8 recompiled through the JIT\n", full, full);
  free(orig);
}

/* Every single bit of a small entry flipped: a miss with a reason, never a
 * hit; through the JIT, flips in each header field and the payload. */
Test(cache, single_bit_flips_at_every_position) {
  tl_cache_key k;
  for (int i = 0; i < 32; i++) k.b[i] = (uint8_t)(17 * i + 3);
  tl_cache_meta m = {.entry = "kv", .threads = 128, .smem_bytes = 4096, .nparams = 3, .param_align = {16, 4, 8},
                     .ntma = 1, .tma = {{.param = 1, .box_inner = 64, .box_rows = 32, .swizzle = 128, .dtype = 3}}};
  uint8_t cubin[40];
  for (int i = 0; i < 40; i++) cubin[i] = (uint8_t)(i * 7 + 1);
  tl_sbuf msg = {0};
  cr_assert_eq(tl_cache_disk_store(cache_dir, &k, &m, cubin, sizeof cubin, &msg), TL_OK, "%s", msg.data);
  char path[512];
  tl_cache_entry_path(cache_dir, &k, path, sizeof path);
  size_t full;
  uint8_t *orig = read_file(path, &full);
  int ffd = open(path, O_WRONLY);
  cr_assert(ffd >= 0);
  for (size_t bit = 0; bit < 8 * full; bit++) {
    uint8_t flipped = orig[bit / 8] ^ (uint8_t)(1u << (bit % 8));
    cr_assert(pwrite(ffd, &flipped, 1, (off_t)(bit / 8)) == 1);
    tl_sbuf why = {0};
    cr_assert_eq(disk_load(cache_dir, &k, &why), TL_CACHE_MISS, "bit %zu of byte %zu flipped: a hit", bit % 8, bit / 8);
    cr_assert(why.len > 0, "bit %zu: no reason", bit);
    tl_sbuf_free(&why);
    cr_assert(pwrite(ffd, &orig[bit / 8], 1, (off_t)(bit / 8)) == 1);
  }
  close(ffd);
  size_t small_full = full;
  cr_assert_eq(disk_load(cache_dir, &k, NULL), TL_CACHE_HIT);
  free(orig);
  tl_sbuf_free(&msg);
  unlink(path);

  /* a real entry through the JIT: magic, format, header size, key, payload
   * length, checksum, reserved, threads, entry name, the cubin, its last byte */
  cr_assert(tl_rt_driver_inject(&fake));
  CHILD_LOAD(.variant = 3, .want = {.origin = "compiled"});
  only_entry(cache_dir, path, sizeof path);
  uint8_t *real = read_file(path, &full);
  size_t at[] = {0, 9, 12, 20, 50, 60, 70, 96, 112, full / 2, full - 1};
  const char *reason[] = {"bad magic", "unknown format version", "bad header size", "key mismatch",
                          "truncated or padded payload", "checksum mismatch", "bad reserved field", "checksum mismatch",
                          "checksum mismatch", "checksum mismatch", "checksum mismatch"};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
    real[at[i]] ^= 0x04;
    write_file(path, real, full);
    real[at[i]] ^= 0x04;
    CHILD_LOAD(.variant = 3, .want = {.origin = "compiled", .log = {"recompiling", reason[i]}});
  }
  printf("single_bit_flips_at_every_position: all %zu bits of a %zu-byte entry missed; 11 fields of a %zu-byte "
         "entry recompiled through the JIT\n", 8 * small_full, small_full, full);
  free(real);
}

/* Entries of another tilec build, LLVM, driver, or entry format, and
 * another kernel's entry under this kernel's name: a miss, the right kernel. */
Test(cache, entries_from_other_versions) {
  /* the build identity: version + the ELF build-id of this binary */
  const char *id = tl_build_identity();
  const char *plus = strchr(id, '+');
  cr_assert(plus && strlen(plus + 1) >= 16, "build identity %s", id);
  cr_assert(strspn(plus + 1, "0123456789abcdef") == strlen(plus + 1), "build identity %s has no build-id", id);
  /* disk level: an entry written under a key of another tilec / LLVM / driver,
   * found at this key's file name, is a "key mismatch" */
  tl_cache_key_fields f = {.source = "s", .source_len = 1, .kernel = "k", .arch = "sm_90a", .tilec_version = id,
                           .llvm_version = "19.1.7", .driver_version = 13000};
  tl_cache_key mine, other;
  tl_cache_key_compute(&f, &mine);
  tl_cache_meta m = {.entry = "k", .threads = 128, .nparams = 0};
  uint8_t cubin[64] = {1, 2, 3};
  char path[512], opath[512];
  tl_cache_entry_path(cache_dir, &mine, path, sizeof path);
  for (int which = 0; which < 3; which++) {
    tl_cache_key_fields g = f;
    if (which == 0) g.tilec_version = "0.1.0+0000000000000000";
    if (which == 1) g.llvm_version = "20.1.0";
    if (which == 2) g.driver_version = 12080;
    tl_cache_key_compute(&g, &other);
    cr_assert(memcmp(&mine, &other, sizeof mine) != 0, "field %d not in the key", which);
    tl_sbuf msg = {0}, why = {0};
    cr_assert_eq(tl_cache_disk_store(cache_dir, &other, &m, cubin, sizeof cubin, &msg), TL_OK);
    tl_cache_entry_path(cache_dir, &other, opath, sizeof opath);
    cr_assert(rename(opath, path) == 0);
    cr_assert_eq(disk_load(cache_dir, &mine, &why), TL_CACHE_MISS);
    cr_assert(strstr(why.data, "key mismatch"), "%s", why.data);
    tl_sbuf_free(&msg); tl_sbuf_free(&why);
  }
  /* an older entry format (version 2) at this key: "unknown format version" */
  tl_sbuf msg = {0}, why = {0};
  cr_assert_eq(tl_cache_disk_store(cache_dir, &mine, &m, cubin, sizeof cubin, &msg), TL_OK);
  int fd = open(path, O_WRONLY);
  uint32_t v2 = 2;
  cr_assert(pwrite(fd, &v2, 4, 8) == 4);
  close(fd);
  cr_assert_eq(disk_load(cache_dir, &mine, &why), TL_CACHE_MISS);
  cr_assert(strstr(why.data, "unknown format version"), "%s", why.data);
  unlink(path);
  tl_sbuf_free(&msg); tl_sbuf_free(&why);

  /* JIT level, driver version: a CUDA 12.8 process's entry is not a 13.0
   * process's; each finds its own again */
  CHILD_LOAD(.variant = 0, .driver = cuda_12_8(), .want = {.origin = "compiled"});
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled"});
  cr_assert_eq(entries(cache_dir), 2);
  CHILD_LOAD(.variant = 0, .driver = cuda_12_8(), .want = {.origin = "disk-cache"});
  CHILD_LOAD(.variant = 0, .want = {.origin = "disk-cache"});
  /* another kernel's (valid) entry under kv0's name: recompiled, kv0 runs */
  char p0[512], p1[512];
  DIR *d = opendir(cache_dir);
  struct dirent *e;
  while ((e = readdir(d))) /* remove the 12.8 and 13.0 entries of kv0 */
    if (strstr(e->d_name, ".tlk")) {
      snprintf(p0, sizeof p0, "%s/%s", cache_dir, e->d_name);
      unlink(p0);
    }
  closedir(d);
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled"});
  only_entry(cache_dir, p0, sizeof p0);
  char moved[520];
  snprintf(moved, sizeof moved, "%s/moved-kv0", cache_dir);
  cr_assert(rename(p0, moved) == 0);
  CHILD_LOAD(.variant = 1, .want = {.origin = "compiled"});
  only_entry(cache_dir, p1, sizeof p1);
  cr_assert(rename(p1, p0) == 0); /* kv1's entry now sits at kv0's key */
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"key mismatch", "recompiling"}});
}

/* A read-only directory: loads still hit; a miss compiles and says the
 * entry was not written.  (root ignores mode bits: there the read-only
 * file system is an injected EROFS.) */
Test(cache, read_only_directory) {
  cr_assert(tl_rt_driver_inject(&fake));
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled"});
  cr_assert(chmod(cache_dir, 0500) == 0);
  CHILD_LOAD(.variant = 0, .want = {.origin = "disk-cache"});
  if (is_root()) {
    printf("read_only_directory: running as root, which mode bits do not stop: a read-only file system is "
           "injected (EROFS at create)\n");
    CHILD_LOAD(.variant = 1, .fault = TL_CACHE_FAULT_CREATE, .fault_err = EROFS,
               .want = {.origin = "compiled", .log = {"kernel cache not written", "Read-only file system"}});
  } else {
    CHILD_LOAD(.variant = 1, .want = {.origin = "compiled", .log = {"kernel cache not written", "Permission denied"}});
  }
  cr_assert_eq(entries(cache_dir), 1);
  cr_assert_eq(temps(cache_dir), 0);
  cr_assert(chmod(cache_dir, 0700) == 0);
}

/* A missing directory is created (0700, parents too); one that cannot be
 * made turns the disk cache off for the load, with a note. */
Test(cache, missing_directory) {
  cr_assert(tl_rt_driver_inject(&fake));
  char deep[256];
  snprintf(deep, sizeof deep, "%s/a/b/c", cache_dir);
  setenv("TILEC_CACHE_DIR", deep, 1);
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .not_log = "cache"});
  struct stat st;
  cr_assert(stat(deep, &st) == 0 && (st.st_mode & 0777) == 0700);
  CHILD_LOAD(.variant = 0, .want = {.origin = "disk-cache"});
  setenv("TILEC_CACHE_DIR", "/proc/tilec-torture/no/such", 1);
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"cannot create directory", "disk cache not used"}});
}

/* A directory owned by another user is refused (whoever owns it could plant
 * machine code), its entries never read; an entry owned by another user in
 * our own directory is a miss and is replaced. */
Test(cache, directory_of_another_user) {
  cr_assert(tl_rt_driver_inject(&fake));
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled"});
  char path[512];
  only_entry(cache_dir, path, sizeof path);
  if (is_root()) {
    cr_assert(chown(cache_dir, 65534, 65534) == 0);
    CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"is owned by uid 65534", "could plant machine code",
                                                                   "disk cache not used"}});
    cr_assert_eq(entries(cache_dir), 1, "an entry was written into the refused directory");
    cr_assert(chown(cache_dir, 0, 0) == 0);
    /* a planted entry: owned by another user */
    cr_assert(chown(path, 65534, 65534) == 0);
    CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"owned by another user", "recompiling"}});
    struct stat st;
    cr_assert(stat(path, &st) == 0 && st.st_uid == 0, "the planted entry was not replaced");
    CHILD_LOAD(.variant = 0, .want = {.origin = "disk-cache"});
  } else {
    /* not root: no chown; "/" belongs to root */
    setenv("TILEC_CACHE_DIR", "/", 1);
    CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"is owned by uid 0", "could plant machine code"}});
    printf("directory_of_another_user: not root: the planted-entry sub-case needs chown, skipped\n");
  }
}

/* Writable by group, by others, by both, sticky like /tmp: refused, and the
 * valid entry in it is not loaded. */
Test(cache, directory_writable_by_group_or_others) {
  cr_assert(tl_rt_driver_inject(&fake));
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled"});
  const mode_t modes[] = {0770, 0720, 0703, 0777, 01777};
  const char *what[] = {"writable by its group", "writable by its group", "writable by others",
                        "writable by group and others", "writable by group and others"};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    cr_assert(chmod(cache_dir, modes[i]) == 0);
    CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {what[i], "could plant machine code", "disk cache not used"}});
    CHILD_LOAD(.variant = 2, .want = {.origin = "compiled"});
    cr_assert_eq(entries(cache_dir), 1, "mode %04o: an entry was written", (unsigned)modes[i]);
  }
  cr_assert(chmod(cache_dir, 0700) == 0);
  CHILD_LOAD(.variant = 0, .want = {.origin = "disk-cache"});
}

/* The entry's name held by a symbolic link (to a valid entry), a FIFO, a
 * directory: never followed, never blocking; the link and the FIFO are
 * replaced, the directory leaves the entry unwritten. */
Test(cache, entry_not_a_regular_file) {
  cr_assert(tl_rt_driver_inject(&fake));
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled"});
  char path[512], elsewhere[600];
  only_entry(cache_dir, path, sizeof path);
  snprintf(elsewhere, sizeof elsewhere, "%s/x/%s", cache_dir, strrchr(path, '/') + 1);
  char sub[600];
  snprintf(sub, sizeof sub, "%s/x", cache_dir);
  cr_assert(mkdir(sub, 0700) == 0);
  cr_assert(rename(path, elsewhere) == 0);
  cr_assert(symlink(elsewhere, path) == 0);
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"a symbolic link, not a cache entry"}});
  struct stat st;
  cr_assert(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "the link was not replaced by an entry");
  unlink(path);
  cr_assert(mkfifo(path, 0600) == 0);
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"not a regular file"}});
  cr_assert(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
  unlink(path);
  cr_assert(mkdir(path, 0700) == 0);
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .log = {"not a regular file", "kernel cache not written"}});
  cr_assert_eq(temps(cache_dir), 0);
}

/* A full or failing disk, injected at each step of a publish: the kernel is
 * used, the log says the entry was not written and why, nothing is left. */
Test(cache, full_disk_injected) {
  cr_assert(tl_rt_driver_inject(&fake));
  struct { tl_cache_fault_step step; int err; size_t after; const char *text; } faults[] = {
      {TL_CACHE_FAULT_CREATE, ENOSPC, 0, "No space left on device"},
      {TL_CACHE_FAULT_WRITE, ENOSPC, 0, "No space left on device"},
      {TL_CACHE_FAULT_WRITE, ENOSPC, 100, "No space left on device"},
      {TL_CACHE_FAULT_WRITE, EDQUOT, 4096, "quota exceeded"},
      {TL_CACHE_FAULT_FSYNC, EIO, 0, "Input/output error"},
      {TL_CACHE_FAULT_RENAME, ENOSPC, 0, "No space left on device"},
  };
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
    CHILD_LOAD(.variant = 0, .fault = faults[i].step, .fault_err = faults[i].err, .fault_after = faults[i].after,
               .want = {.origin = "compiled", .log = {"kernel cache not written", faults[i].text}});
    cr_assert_eq(entries(cache_dir), 0, "fault %zu: an entry was published", i);
    cr_assert_eq(temps(cache_dir), 0, "fault %zu: a temporary file was left", i);
  }
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled", .not_log = "cache"});
  CHILD_LOAD(.variant = 0, .want = {.origin = "disk-cache"});
}

/* A really full file system: a small tmpfs in a private mount namespace,
 * filled up.  Needs mount rights (root, or an unprivileged user namespace);
 * where neither is allowed the case says so and is skipped. */
static int tmpfs_child(void *arg) {
  const char *dir = arg;
  if (unshare(is_root() ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    printf("full_disk_tmpfs: SKIP: unshare: %s (no private mount namespace here)\n", strerror(errno));
    return 77;
  }
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount("tilec-torture", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700") != 0) {
    printf("full_disk_tmpfs: SKIP: mount tmpfs: %s\n", strerror(errno));
    return 77;
  }
  char fill[600];
  snprintf(fill, sizeof fill, "%s/filler", dir);
  int fd = open(fill, O_WRONLY | O_CREAT, 0600);
  CHECK(fd >= 0, "filler: %s", strerror(errno));
  static char block[4096];
  while (write(fd, block, sizeof block) > 0) {}
  while (write(fd, block, 1) > 0) {}
  close(fd);
  load_want w = {.origin = "compiled", .log = {"kernel cache not written", "No space left on device"}};
  CHECK(load_and_check(0, 0, &w) == 0, "load on a full tmpfs");
  CHECK(entries(dir) == 0 && temps(dir) == 0, "left files on the full tmpfs");
  unlink(fill);
  w = (load_want){.origin = "compiled", .not_log = "cache"};
  CHECK(load_and_check(1, 0, &w) == 0, "load after freeing space");
  CHECK(entries(dir) == 1, "no entry after freeing space");
  return 0;
}
Test(cache, full_disk_tmpfs) {
  cr_assert(tl_rt_driver_inject(&fake));
  int rc = in_child(tmpfs_child, cache_dir);
  if (rc == 77) cr_skip_test("no mount namespace or tmpfs mount allowed here (see the SKIP line)");
  cr_assert_eq(rc, 0);
  printf("full_disk_tmpfs: a 64 KiB tmpfs filled up: compiled, entry not written, note in the log\n");
}

/* A publisher killed between create and rename leaves a .tmp- file: the
 * next publish removes those older than an hour, and keeps a fresh one (a
 * live publisher's). */
Test(cache, stale_temporary_files_are_swept) {
  cr_assert(tl_rt_driver_inject(&fake));
  char old_tmp[600], fresh_tmp[600];
  snprintf(old_tmp, sizeof old_tmp, "%s/.tmp-%064d-dead01", cache_dir, 0);
  snprintf(fresh_tmp, sizeof fresh_tmp, "%s/.tmp-%064d-live01", cache_dir, 0);
  write_file(old_tmp, "half an entry", 13);
  write_file(fresh_tmp, "being written", 13);
  struct timeval two_hours_ago[2];
  gettimeofday(&two_hours_ago[0], NULL);
  two_hours_ago[0].tv_sec -= 7200;
  two_hours_ago[1] = two_hours_ago[0];
  cr_assert(utimes(old_tmp, two_hours_ago) == 0);
  CHILD_LOAD(.variant = 0, .want = {.origin = "compiled"});
  cr_assert(access(old_tmp, F_OK) != 0, "the stale temporary file is still there");
  cr_assert(access(fresh_tmp, F_OK) == 0, "a fresh temporary file (a live publisher's) was removed");
  cr_assert_eq(entries(cache_dir), 1);
  printf("stale_temporary_files_are_swept: a 2-hour-old .tmp- removed, a fresh one kept\n");
}
