/* test_back_cache.c: the kernel cache (runtime/cache.c, runtime/hash.c):
 * SHA-256 vectors, the entry checksum (every bit flip detected), key sensitivity, disk round trip, corrupt entries
 * (truncated, flipped byte, wrong magic, foreign key), concurrent publishers
 * (threads and processes), directory creation and permissions. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"

/* ---- helpers ------------------------------------------------------------------ */
static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}
static void seed_rng(void) {
  rng_state = (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)time(NULL);
  if (!rng_state) rng_state = 1;
  cr_log_info("seed %llu", (unsigned long long)rng_state);
}
static void fill_random(void *p, size_t n) {
  uint8_t *b = p;
  for (size_t i = 0; i < n; i++) b[i] = (uint8_t)(rnd() >> 32);
}
static char *make_tmpdir(void) {
  char *d = strdup("/tmp/tilec-cache-test-XXXXXX");
  cr_assert(mkdtemp(d) != NULL);
  return d;
}
static void rm_rf(const char *path) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  cr_assert(system(cmd) == 0);
}
static void hex(const uint8_t *b, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}
static tl_cache_key random_key(void) {
  tl_cache_key k;
  fill_random(k.b, sizeof k.b);
  return k;
}
static tl_cache_meta random_meta(void) {
  tl_cache_meta m;
  memset(&m, 0, sizeof m);
  snprintf(m.entry, sizeof m.entry, "kernel_%llu", (unsigned long long)(rnd() % 100000));
  m.threads = 32 * (int)(1 + rnd() % 8);
  m.smem_bytes = (int)(rnd() % 200000);
  m.nparams = (int)(rnd() % 9);
  for (int i = 0; i < m.nparams; i++) m.param_align[i] = 1 << (rnd() % 5);
  m.persist = rnd() % 2;
  m.cluster = m.persist ? (int32_t)(rnd() % 3) : 0; /* (a cluster only on persistent CTAs) */
  return m;
}
static void assert_meta_eq(const tl_cache_meta *a, const tl_cache_meta *b) {
  cr_assert_str_eq(a->entry, b->entry);
  cr_assert_eq(a->threads, b->threads);
  cr_assert_eq(a->smem_bytes, b->smem_bytes);
  cr_assert_eq(a->nparams, b->nparams);
  for (int i = 0; i < a->nparams; i++) cr_assert_eq(a->param_align[i], b->param_align[i]);
  cr_assert_eq(a->persist, b->persist);
  cr_assert_eq(a->cluster, b->cluster);
}
static size_t file_size(const char *path) {
  struct stat st;
  cr_assert(stat(path, &st) == 0);
  return (size_t)st.st_size;
}

/* ---- entry checksum ------------------------------------------------------------- */
Test(checksum64, every_single_bit_flip_changes_it) {
  seed_rng();
  static const size_t sizes[] = {1, 7, 8, 9, 31, 32, 33, 61, 97, 255, 257};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t n = sizes[s];
    uint8_t *b = malloc(n);
    fill_random(b, n);
    uint64_t h = tl_checksum64(b, n);
    cr_assert_eq(tl_checksum64(b, n), h, "not deterministic");
    for (size_t bit = 0; bit < 8 * n; bit++) {
      b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
      cr_assert_neq(tl_checksum64(b, n), h, "flip of bit %zu of %zu bytes undetected", bit, n);
      b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    /* the length counts: a prefix, and the same bytes plus a zero */
    if (n > 1) cr_assert_neq(tl_checksum64(b, n - 1), h);
    uint8_t *z = calloc(n + 1, 1);
    memcpy(z, b, n);
    cr_assert_neq(tl_checksum64(z, n + 1), h, "trailing zero byte undetected (%zu bytes)", n);
    free(z);
    free(b);
  }
}

Test(checksum64, any_change_in_one_word_is_detected) {
  seed_rng();
  size_t n = 8 * 41 + 5;
  uint8_t *b = malloc(n);
  fill_random(b, n);
  uint64_t h = tl_checksum64(b, n);
  for (int trial = 0; trial < 20000; trial++) {
    size_t word = rnd() % (n / 8 + 1), lo = 8 * word, len = lo + 8 <= n ? 8 : n - lo;
    uint8_t saved[8];
    memcpy(saved, b + lo, len);
    uint64_t x = rnd() | 1; /* nonzero xor pattern */
    for (size_t i = 0; i < len; i++) b[lo + i] ^= (uint8_t)(x >> (8 * i));
    bool changed = memcmp(saved, b + lo, len) != 0;
    if (changed) cr_assert_neq(tl_checksum64(b, n), h, "change in word %zu undetected", word);
    memcpy(b + lo, saved, len);
  }
  free(b);
}

/* ---- SHA-256 -------------------------------------------------------------------- */
Test(sha256, known_vectors) {
  static const struct { const char *in, *out; } v[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint8_t d[32];
    char h[65];
    tl_sha256(v[i].in, strlen(v[i].in), d);
    hex(d, 32, h);
    cr_assert_str_eq(h, v[i].out, "sha256(\"%s\")", v[i].in);
  }
}

Test(sha256, million_a_in_odd_pieces) {
  /* FIPS 180-2 vector, fed in pieces of ragged sizes to exercise buffering */
  tl_sha256_ctx s;
  tl_sha256_init(&s);
  char chunk[2000];
  memset(chunk, 'a', sizeof chunk);
  size_t left = 1000000, step = 1;
  while (left) {
    size_t n = step < left ? step : left;
    tl_sha256_update(&s, chunk, n);
    left -= n;
    step = step % 997 + 61;
  }
  uint8_t d[32];
  char h[65];
  tl_sha256_final(&s, d);
  hex(d, 32, h);
  cr_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* ---- key ---------------------------------------------------------------------------- */
static const char *base_names[] = {"BM", "BN"};
static const int64_t base_values[] = {64, 128};
static tl_cache_key_fields base_fields(void) {
  static const char src[] = "kernel k(A: tensor<f32>[N]) tiles(B = 64) grid(cdiv(N, B)) { }";
  tl_cache_key_fields f = {
      .source = src, .source_len = sizeof src - 1, .kernel = "k",
      .define_names = base_names, .define_values = base_values, .ndefines = 2,
      .arch = "sm_90a", .opt_level = 3, .line_info = 1, .pipeline = NULL, .entry_name = NULL,
      .tilec_version = "0.1.0", .llvm_version = "19.1.7", .driver_version = 13000, .jit_opt_level = 4};
  return f;
}
static tl_cache_key key_of(const tl_cache_key_fields *f) {
  tl_cache_key k;
  tl_cache_key_compute(f, &k);
  return k;
}

Test(cache_key, deterministic) {
  tl_cache_key_fields a = base_fields(), b = base_fields();
  tl_cache_key ka = key_of(&a), kb = key_of(&b);
  cr_assert(memcmp(ka.b, kb.b, 32) == 0);
}

Test(cache_key, every_field_changes_the_key) {
  tl_cache_key base = key_of(&(tl_cache_key_fields){0}), k0;
  tl_cache_key_fields f0 = base_fields();
  k0 = key_of(&f0);
  cr_assert(memcmp(base.b, k0.b, 32) != 0);
  static const char *other_names[] = {"BM", "BK"};
  static const int64_t other_values[] = {64, 256};
  char src2[200];
  snprintf(src2, sizeof src2, "%.*s ", (int)f0.source_len, f0.source); /* one more blank */
  tl_cache_key_fields v[24];
  int n = 0;
  v[n] = f0; v[n].source = src2; v[n].source_len = strlen(src2); n++;
  v[n] = f0; v[n].source_len -= 1; n++;                           /* a prefix of the source */
  v[n] = f0; v[n].kernel = "k2"; n++;
  v[n] = f0; v[n].ndefines = 1; n++;
  v[n] = f0; v[n].define_names = other_names; n++;
  v[n] = f0; v[n].define_values = other_values; n++;
  v[n] = f0; v[n].arch = "sm_90"; n++;
  v[n] = f0; v[n].opt_level = 2; n++;
  v[n] = f0; v[n].line_info = 0; n++;
  v[n] = f0; v[n].pipeline = "cutlass"; n++;
  v[n] = f0; v[n].entry_name = "k"; n++;                          /* NULL and "k" differ */
  v[n] = f0; v[n].tilec_version = "0.1.1"; n++;
  v[n] = f0; v[n].llvm_version = "19.1.6"; n++;
  v[n] = f0; v[n].driver_version = 12080; n++;
  v[n] = f0; v[n].jit_opt_level = 3; n++;
  v[n] = f0; v[n].warps = 8; n++;
  v[n] = f0; v[n].stages = 4; n++;
  v[n] = f0; v[n].extra = "disable-pass=swpipe"; n++;
  v[n] = f0; v[n].fp8_acc_fast = 1; n++;
  tl_cache_key keys[24];
  for (int i = 0; i < n; i++) {
    keys[i] = key_of(&v[i]);
    cr_assert(memcmp(keys[i].b, k0.b, 32) != 0, "variant %d does not change the key", i);
    for (int j = 0; j < i; j++) cr_assert(memcmp(keys[i].b, keys[j].b, 32) != 0, "variants %d and %d collide", i, j);
  }
}

Test(cache_key, field_boundaries_matter) {
  /* "ab" + "c" must not hash like "a" + "bc" */
  tl_cache_key_fields a = base_fields(), b = base_fields();
  a.kernel = "ab"; a.arch = "c";
  b.kernel = "a"; b.arch = "bc";
  tl_cache_key ka = key_of(&a), kb = key_of(&b);
  cr_assert(memcmp(ka.b, kb.b, 32) != 0);
}

/* ---- disk entries ------------------------------------------------------------------- */
Test(cache_disk, round_trip) {
  seed_rng();
  char *dir = make_tmpdir();
  size_t sizes[] = {1, 63, 64, 65, 4099, 100003};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    tl_cache_key k = random_key();
    tl_cache_meta m = random_meta(), got;
    uint8_t *cubin = malloc(sizes[i]);
    fill_random(cubin, sizes[i]);
    tl_sbuf msg = {0};
    void *back = NULL;
    size_t back_size = 0;
    cr_assert_eq(tl_cache_disk_load(dir, &k, &got, &back, &back_size, NULL), TL_CACHE_MISS);
    cr_assert_eq(tl_cache_disk_store(dir, &k, &m, cubin, sizes[i], &msg), TL_OK, "%s", msg.data);
    cr_assert_eq(tl_cache_disk_load(dir, &k, &got, &back, &back_size, NULL), TL_CACHE_HIT);
    cr_assert_eq(back_size, sizes[i]);
    cr_assert(memcmp(back, cubin, sizes[i]) == 0);
    assert_meta_eq(&m, &got);
    /* entries are private to the user */
    char path[4096];
    tl_cache_entry_path(dir, &k, path, sizeof path);
    struct stat st;
    cr_assert(stat(path, &st) == 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    free(back); free(cubin); tl_sbuf_free(&msg);
  }
  /* no temporary files left behind */
  DIR *dd = opendir(dir);
  struct dirent *de;
  while ((de = readdir(dd))) cr_assert(strncmp(de->d_name, ".tmp-", 5) != 0, "left %s", de->d_name);
  closedir(dd);
  rm_rf(dir);
  free(dir);
}

/* Store an entry with random contents; return its path. */
static void store_random(const char *dir, tl_cache_key *k, tl_cache_meta *m, uint8_t **cubin, size_t n,
                         char *path, size_t pn) {
  *k = random_key();
  *m = random_meta();
  *cubin = malloc(n);
  fill_random(*cubin, n);
  tl_sbuf msg = {0};
  cr_assert_eq(tl_cache_disk_store(dir, k, m, *cubin, n, &msg), TL_OK);
  tl_sbuf_free(&msg);
  tl_cache_entry_path(dir, k, path, pn);
}

Test(cache_disk, truncated_entry_is_a_miss_and_is_replaced) {
  seed_rng();
  char *dir = make_tmpdir();
  tl_cache_key k;
  tl_cache_meta m, got;
  uint8_t *cubin;
  char path[4096];
  size_t n = 777;
  store_random(dir, &k, &m, &cubin, n, path, sizeof path);
  size_t full = file_size(path);
  size_t cuts[] = {0, 1, 8, 95, 96, 97, full / 2, full - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    cr_assert(truncate(path, (off_t)cuts[i]) == 0);
    void *back = NULL;
    size_t bs = 0;
    tl_sbuf why = {0};
    cr_assert_eq(tl_cache_disk_load(dir, &k, &got, &back, &bs, &why), TL_CACHE_MISS, "cut at %zu", cuts[i]);
    cr_assert_null(back);
    cr_assert(why.len > 0, "a miss on a bad entry says why");
    tl_sbuf_free(&why);
    /* republishing replaces the bad entry */
    tl_sbuf msg = {0};
    cr_assert_eq(tl_cache_disk_store(dir, &k, &m, cubin, n, &msg), TL_OK);
    cr_assert_eq(tl_cache_disk_load(dir, &k, &got, &back, &bs, NULL), TL_CACHE_HIT);
    cr_assert(bs == n && memcmp(back, cubin, n) == 0);
    free(back);
    tl_sbuf_free(&msg);
  }
  free(cubin);
  rm_rf(dir);
  free(dir);
}

Test(cache_disk, every_flipped_byte_is_a_miss) {
  seed_rng();
  char *dir = make_tmpdir();
  tl_cache_key k;
  tl_cache_meta m, got;
  uint8_t *cubin;
  char path[4096];
  size_t n = 61;
  store_random(dir, &k, &m, &cubin, n, path, sizeof path);
  size_t full = file_size(path);
  uint8_t *orig = malloc(full);
  FILE *fp = fopen(path, "rb");
  cr_assert(fread(orig, 1, full, fp) == full);
  fclose(fp);
  for (size_t pos = 0; pos < full; pos++) {
    uint8_t *bad = malloc(full);
    memcpy(bad, orig, full);
    bad[pos] ^= (uint8_t)(1u << (rnd() % 8));
    fp = fopen(path, "wb");
    cr_assert(fwrite(bad, 1, full, fp) == full);
    fclose(fp);
    void *back = NULL;
    size_t bs = 0;
    cr_assert_eq(tl_cache_disk_load(dir, &k, &got, &back, &bs, NULL), TL_CACHE_MISS, "flip at byte %zu of %zu", pos,
                 full);
    free(bad);
  }
  /* and the untouched file still hits */
  fp = fopen(path, "wb");
  cr_assert(fwrite(orig, 1, full, fp) == full);
  fclose(fp);
  void *back = NULL;
  size_t bs = 0;
  cr_assert_eq(tl_cache_disk_load(dir, &k, &got, &back, &bs, NULL), TL_CACHE_HIT);
  free(back); free(orig); free(cubin);
  rm_rf(dir);
  free(dir);
}

Test(cache_disk, wrong_magic_and_foreign_key_are_misses) {
  seed_rng();
  char *dir = make_tmpdir();
  tl_cache_key k, k2;
  tl_cache_meta m, m2, got;
  uint8_t *cubin, *cubin2;
  char path[4096], path2[4096];
  store_random(dir, &k, &m, &cubin, 300, path, sizeof path);
  store_random(dir, &k2, &m2, &cubin2, 300, path2, sizeof path2);
  /* an entry renamed to another key's name is that key's miss, never its kernel */
  cr_assert(rename(path2, path) == 0);
  void *back = NULL;
  size_t bs = 0;
  tl_sbuf why = {0};
  cr_assert_eq(tl_cache_disk_load(dir, &k, &got, &back, &bs, &why), TL_CACHE_MISS);
  cr_assert(strstr(why.data, "key mismatch") != NULL, "%s", why.data);
  /* wrong magic, with an otherwise valid entry */
  tl_sbuf msg = {0};
  cr_assert_eq(tl_cache_disk_store(dir, &k, &m, cubin, 300, &msg), TL_OK);
  int fd = open(path, O_WRONLY);
  cr_assert(pwrite(fd, "ELF\x7f", 4, 0) == 4);
  close(fd);
  why.len = 0;
  cr_assert_eq(tl_cache_disk_load(dir, &k, &got, &back, &bs, &why), TL_CACHE_MISS);
  cr_assert(strstr(why.data, "magic") != NULL, "%s", why.data);
  tl_sbuf_free(&why); tl_sbuf_free(&msg);
  free(cubin); free(cubin2);
  rm_rf(dir);
  free(dir);
}

/* ---- concurrency ------------------------------------------------------------------------- */
typedef struct race_ctx {
  const char *dir;
  tl_cache_key key;
  tl_cache_meta meta;
  const uint8_t *cubin;
  size_t size;
  int bad;
} race_ctx;

static void *publisher(void *arg) {
  race_ctx *c = arg;
  for (int i = 0; i < 40; i++) {
    tl_sbuf msg = {0};
    if (tl_cache_disk_store(c->dir, &c->key, &c->meta, c->cubin, c->size, &msg) != TL_OK) __atomic_add_fetch(&c->bad, 1, __ATOMIC_RELAXED);
    tl_sbuf_free(&msg);
  }
  return NULL;
}
static void *reader(void *arg) {
  race_ctx *c = arg;
  for (int i = 0; i < 200; i++) {
    tl_cache_meta got;
    void *back = NULL;
    size_t bs = 0;
    if (tl_cache_disk_load(c->dir, &c->key, &got, &back, &bs, NULL) == TL_CACHE_HIT) {
      /* a hit is always the whole, right entry */
      if (bs != c->size || memcmp(back, c->cubin, bs) != 0 || got.threads != c->meta.threads)
        __atomic_add_fetch(&c->bad, 1, __ATOMIC_RELAXED);
      free(back);
    }
  }
  return NULL;
}

Test(cache_disk, concurrent_publishers_threads_and_processes) {
  seed_rng();
  char *dir = make_tmpdir();
  race_ctx c = {.dir = dir, .key = random_key(), .meta = random_meta(), .size = 65537};
  uint8_t *cubin = malloc(c.size);
  fill_random(cubin, c.size);
  c.cubin = cubin;
  /* two processes publishing and reading the same key, each with threads */
  pid_t child = fork();
  cr_assert(child >= 0);
  pthread_t t[6];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, publisher, &c);
  for (int i = 3; i < 6; i++) pthread_create(&t[i], NULL, reader, &c);
  for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
  if (child == 0) _exit(c.bad ? 1 : 0);
  int status = 0;
  cr_assert(waitpid(child, &status, 0) == child);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other process saw a bad entry");
  cr_assert_eq(c.bad, 0);
  tl_cache_meta got;
  void *back = NULL;
  size_t bs = 0;
  cr_assert_eq(tl_cache_disk_load(dir, &c.key, &got, &back, &bs, NULL), TL_CACHE_HIT);
  cr_assert(bs == c.size && memcmp(back, cubin, bs) == 0);
  int files = 0;
  DIR *dd = opendir(dir);
  struct dirent *de;
  while ((de = readdir(dd)))
    if (de->d_name[0] != '.') files++;
    else cr_assert(strncmp(de->d_name, ".tmp-", 5) != 0, "left %s", de->d_name);
  closedir(dd);
  cr_assert_eq(files, 1);
  free(back); free(cubin);
  rm_rf(dir);
  free(dir);
}

/* ---- directory ------------------------------------------------------------------------------ */
static mode_t mode_of(const char *path) {
  struct stat st;
  cr_assert(stat(path, &st) == 0, "%s missing", path);
  cr_assert(S_ISDIR(st.st_mode));
  return st.st_mode & 0777;
}

Test(cache_dir, created_0700_from_each_variable) {
  char *root = make_tmpdir();
  char want[4096], got[4096];
  tl_sbuf msg = {0};
  unsetenv("TILEC_CACHE");
  /* TILEC_CACHE_DIR, with missing parents */
  snprintf(want, sizeof want, "%s/a/b/c", root);
  setenv("TILEC_CACHE_DIR", want, 1);
  umask(022);
  cr_assert(tl_cache_dir(got, sizeof got, &msg), "%s", msg.data);
  cr_assert_str_eq(got, want);
  cr_assert_eq(mode_of(want), 0700);
  snprintf(want, sizeof want, "%s/a", root);
  cr_assert_eq(mode_of(want), 0700);
  /* $XDG_CACHE_HOME/tilec */
  unsetenv("TILEC_CACHE_DIR");
  snprintf(want, sizeof want, "%s/xdg", root);
  setenv("XDG_CACHE_HOME", want, 1);
  cr_assert(tl_cache_dir(got, sizeof got, &msg));
  strcat(want, "/tilec");
  cr_assert_str_eq(got, want);
  cr_assert_eq(mode_of(want), 0700);
  /* $HOME/.cache/tilec */
  unsetenv("XDG_CACHE_HOME");
  snprintf(want, sizeof want, "%s/home", root);
  setenv("HOME", want, 1);
  cr_assert(tl_cache_dir(got, sizeof got, &msg));
  strcat(want, "/.cache/tilec");
  cr_assert_str_eq(got, want);
  cr_assert_eq(mode_of(want), 0700);
  /* an existing directory is used as it is */
  cr_assert(tl_cache_dir(got, sizeof got, &msg));
  /* switched off */
  setenv("TILEC_CACHE", "0", 1);
  cr_assert(!tl_cache_dir(got, sizeof got, &msg));
  unsetenv("TILEC_CACHE");
  setenv("TILEC_CACHE_DIR", "", 1);
  cr_assert(!tl_cache_dir(got, sizeof got, &msg));
  /* a file where the directory should be */
  snprintf(want, sizeof want, "%s/file", root);
  FILE *fp = fopen(want, "w");
  fclose(fp);
  setenv("TILEC_CACHE_DIR", want, 1);
  msg.len = 0;
  cr_assert(!tl_cache_dir(got, sizeof got, &msg));
  cr_assert(msg.len > 0);
  tl_sbuf_free(&msg);
  rm_rf(root);
  free(root);
}
