/* tune.c: tilec_autotune / tilec_tune_apply (include/tilec.h, docs/autotune.md).
 * Enumerate the space, compile each configuration (own program, its PTX
 * loaded with tilec_kernel_load_ptx: no kernel cache, whose key knows nothing
 * of the "warps"/"stages" options), launch it on scratch copies of the
 * written tensors (the @zeroed ones zeroed before every launch, outside the
 * timed interval), time it (runtime/timing.c), keep the fastest; the winner
 * is cached on disk per (source, kernel, options, space, shape class, device).
 * requires: the runtime; keeps: the caller's tensors unwritten, the base
 * options unchanged; breaks: nothing. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "program.h"
#include "runtime.h"

#include "version.h"

/* ---- the space ------------------------------------------------------------------ */
int64_t tl_tune_space_size(const tilec_tune_space *s) {
  if (!s || s->nparams <= 0) return 1;
  int64_t n = 1;
  for (int i = 0; i < s->nparams; i++) {
    if (!s->params || s->params[i].nvalues <= 0 || !s->params[i].values) return -1;
    n *= s->params[i].nvalues;
    if (n > TILEC_TUNE_MAX_CONFIGS) return -1;
  }
  return n;
}

void tl_tune_space_config(const tilec_tune_space *s, int64_t index, int64_t *values) {
  if (!s) return;
  for (int i = s->nparams - 1; i >= 0; i--) {
    int64_t nv = s->params[i].nvalues;
    values[i] = s->params[i].values[index % nv];
    index /= nv;
  }
}

int64_t tl_tune_pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v && p <= INT64_MAX / 2) p *= 2;
  return p;
}

/* ---- shape class ------------------------------------------------------------------ */
typedef struct sym_value { const char *name; int64_t value; } sym_value;

static int cmp_sym(const void *a, const void *b) {
  return strcmp(((const sym_value *)a)->name, ((const sym_value *)b)->name);
}

bool tl_tune_shape_class(const tl_func *f, const tilec_arg *args, int nargs, char *buf, size_t n, char *err,
                         size_t errn) {
  if (n) buf[0] = 0;
  if (nargs != f->params.len) {
    snprintf(err, errn, "kernel '%s' takes %d arguments, %d given", f->name, f->params.len, nargs);
    return false;
  }
  int nsyms = f->syms.len;
  sym_value *vals = calloc((size_t)(nsyms ? nsyms : 1), sizeof *vals);
  bool *bound = calloc((size_t)(nsyms ? nsyms : 1), sizeof *bound);
  if (!vals || !bound) {
    free(vals); free(bound);
    snprintf(err, errn, "out of memory");
    return false;
  }
  bool ok = true;
  for (int i = 0; i < nargs && ok; i++) {
    const tl_param *pa = &f->params.data[i];
    if (!pa->is_tensor) continue;
    const DLTensor *t = args[i].kind == TILEC_ARG_TENSOR ? args[i].u.tensor : NULL;
    if (!t || t->ndim != pa->rank || (t->ndim > 0 && !t->shape)) {
      snprintf(err, errn, "argument %d (%s): expected a tensor of rank %d", i, pa->name, pa->rank);
      ok = false;
      break;
    }
    for (int d = 0; d < pa->rank; d++) {
      const tl_dimspec *ds = &pa->dims[d];
      if (ds->is_const || ds->sym < 0 || ds->sym >= nsyms || bound[ds->sym]) continue;
      bound[ds->sym] = true;
      vals[ds->sym].value = t->shape[d];
    }
  }
  int nb = 0;
  for (int s = 0; s < nsyms && ok; s++)
    if (bound[s]) vals[nb++] = (sym_value){f->syms.data[s].name, vals[s].value};
  if (ok) {
    qsort(vals, (size_t)nb, sizeof *vals, cmp_sym);
    size_t used = 0;
    for (int s = 0; s < nb && used < n; s++)
      used += (size_t)snprintf(buf + used, n - used, "%s%s=%lld", s ? " " : "", vals[s].name,
                               (long long)tl_tune_pow2_ceil(vals[s].value));
    if (used >= n) {
      snprintf(err, errn, "shape class too long");
      ok = false;
    }
  }
  free(vals);
  free(bound);
  return ok;
}

/* ---- the winner cache ----------------------------------------------------------------- *
 *   tilec-tune 1
 *   key <64 hex>
 *   shape <shape class>
 *   ms <median> worst <ms> configs <n> valid <n>
 *   param <name> <value>          (one per space name, in order)
 *   summary <the one-line summary>
 *   end <16 hex: tl_checksum64 of every byte before this line>
 */
#define TUNE_MAGIC "tilec-tune 1\n"
#define TUNE_MAX_FILE 65536

void tl_tune_cache_path(const char *dir, const char *key_hex, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s.tune", dir, key_hex);
}

int tl_tune_cache_store(const char *dir, const char *key_hex, const tilec_tune_result *r, tl_sbuf *msg) {
  tl_sbuf b = {0};
  tl_sbuf_puts(&b, TUNE_MAGIC);
  tl_sbuf_printf(&b, "key %s\nshape %s\n", key_hex, r->shape_class);
  tl_sbuf_printf(&b, "ms %.17g worst %.17g configs %d valid %d\n", r->ms, r->worst_ms, r->nconfigs, r->nvalid);
  for (int i = 0; i < r->nparams && i < TILEC_TUNE_MAX_PARAMS; i++)
    tl_sbuf_printf(&b, "param %s %lld\n", r->names[i], (long long)r->values[i]);
  tl_sbuf_printf(&b, "summary %s\n", r->summary);
  if (b.oom) {
    tl_sbuf_free(&b);
    return TL_ERR_NOMEM;
  }
  tl_sbuf_printf(&b, "end %016llx\n", (unsigned long long)tl_checksum64(b.data, b.len));
  char final_path[4096], tmp_path[4200];
  tl_tune_cache_path(dir, key_hex, final_path, sizeof final_path);
  snprintf(tmp_path, sizeof tmp_path, "%s/.tmp-%s-XXXXXX", dir, key_hex);
  int fd = mkstemp(tmp_path); /* mode 0600 */
  if (fd < 0) {
    tl_sbuf_printf(msg, "tune cache: cannot create %s: %s\n", tmp_path, strerror(errno));
    tl_sbuf_free(&b);
    return TL_ERR_IO;
  }
  bool ok = true;
  for (size_t off = 0; ok && off < b.len;) {
    ssize_t w = write(fd, b.data + off, b.len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = false;
    else off += (size_t)w;
  }
  ok = ok && fsync(fd) == 0;
  int saved = errno;
  if (close(fd) != 0 && ok) { ok = false; saved = errno; }
  if (ok && rename(tmp_path, final_path) != 0) { ok = false; saved = errno; }
  tl_sbuf_free(&b);
  if (!ok) {
    unlink(tmp_path);
    tl_sbuf_printf(msg, "tune cache: cannot write %s: %s\n", final_path, strerror(saved));
    return TL_ERR_IO;
  }
  return TL_OK;
}

static int tune_miss(tl_sbuf *why, const char *path, const char *reason) {
  if (why) tl_sbuf_printf(why, "tune cache: %s: %s\n", path, reason);
  return TL_CACHE_MISS;
}

/* The text after "<word> " on the line at *at (advancing past the line), or
 * NULL; the line is cut at its newline in place. */
static char *take_line(char **at, const char *word) {
  char *line = *at;
  char *nl = strchr(line, '\n');
  if (!nl) return NULL;
  size_t wl = strlen(word);
  if (strncmp(line, word, wl) != 0 || line[wl] != ' ') return NULL;
  *nl = 0;
  *at = nl + 1;
  return line + wl + 1;
}

int tl_tune_cache_load(const char *dir, const char *key_hex, tilec_tune_result *r, tl_sbuf *why) {
  char path[4096];
  tl_tune_cache_path(dir, key_hex, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? TL_CACHE_MISS : tune_miss(why, path, strerror(errno));
  char *text = malloc(TUNE_MAX_FILE + 1);
  size_t len = 0;
  if (!text) {
    close(fd);
    return tune_miss(why, path, "out of memory");
  }
  for (;;) {
    ssize_t got = read(fd, text + len, TUNE_MAX_FILE + 1 - len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    len += (size_t)got;
    if (len > TUNE_MAX_FILE) break;
  }
  close(fd);
  const char *reason = NULL;
  tilec_tune_result got = {0};
  if (len > TUNE_MAX_FILE) reason = "too large";
  else if (memchr(text, 0, len)) reason = "contains a NUL byte";
  text[len < TUNE_MAX_FILE ? len : TUNE_MAX_FILE] = 0;
  /* the checksum line closes the file: "end " + 16 hex + "\n" */
  const size_t end_len = 4 + 16 + 1;
  if (!reason && (len < strlen(TUNE_MAGIC) + end_len || strncmp(text + len - end_len, "end ", 4) != 0 ||
                  text[len - 1] != '\n'))
    reason = "truncated (no end line)";
  if (!reason) {
    /* compared as text, as stored: strtoull would also take 'A' for 'a', or ' ' / '+' for a leading
     * '0', single-byte changes the checksum would not see (test_back_tune's damaged entries) */
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)tl_checksum64(text, len - end_len));
    if (memcmp(want, text + len - end_len + 4, 16) != 0) reason = "checksum mismatch";
    text[len - end_len] = 0; /* parse only what the checksum covers */
  }
  char *at = text, *v;
  if (!reason && strncmp(at, TUNE_MAGIC, strlen(TUNE_MAGIC)) != 0) reason = "bad magic";
  if (!reason) {
    at += strlen(TUNE_MAGIC);
    if (!(v = take_line(&at, "key")) || strcmp(v, key_hex) != 0) reason = "key mismatch";
  }
  if (!reason) {
    if (!(v = take_line(&at, "shape")) || strlen(v) >= sizeof got.shape_class) reason = "bad shape line";
    else snprintf(got.shape_class, sizeof got.shape_class, "%s", v);
  }
  if (!reason) {
    if (!(v = take_line(&at, "ms")) ||
        sscanf(v, "%lf worst %lf configs %d valid %d", &got.ms, &got.worst_ms, &got.nconfigs, &got.nvalid) != 4 ||
        !(got.ms > 0) || !(got.worst_ms >= got.ms) || got.nvalid < 1 || got.nconfigs < got.nvalid)
      reason = "bad timing line";
  }
  while (!reason && strncmp(at, "param ", 6) == 0) {
    v = take_line(&at, "param");
    char name[64];
    long long value;
    int used = 0;
    if (!v || got.nparams == TILEC_TUNE_MAX_PARAMS || sscanf(v, "%63s %lld%n", name, &value, &used) != 2 ||
        v[used] != 0) {
      reason = "bad param line";
      break;
    }
    snprintf(got.names[got.nparams], sizeof got.names[0], "%s", name);
    got.values[got.nparams++] = value;
  }
  if (!reason) {
    if (!(v = take_line(&at, "summary")) || strlen(v) >= sizeof got.summary || *at != 0) reason = "bad summary line";
    else snprintf(got.summary, sizeof got.summary, "%s", v);
  }
  free(text);
  if (reason) return tune_miss(why, path, reason);
  *r = got;
  return TL_CACHE_HIT;
}

/* ---- the tuner ------------------------------------------------------------------------- */
typedef struct tuner {
  const tilec_options *base;
  const char *source, *source_name, *kernel;
  const tilec_tune_space *space;
  const tl_rt_device *dev;
  int device;
  char arch[32];
  tilec_arg *args;  /* the caller's, written and @zeroed tensors replaced by scratch ones */
  int nargs;
  CUdeviceptr *zero_at; /* the @zeroed scratch buffers, zeroed before every launch */
  size_t *zero_bytes;
  int nzero;
  tl_sbuf log;
} tuner;

/* The last line of a program's log that says "error", else its last line. */
static void reason_from_log(const char *log, const char *fallback, char *buf, size_t n) {
  const char *best = NULL, *last = NULL;
  for (const char *line = log; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    bool best_here = false;
    if (len > 0) {
      last = line;
      for (size_t i = 0; i + 5 <= len && !best_here; i++) best_here = !memcmp(line + i, "error", 5);
      if (best_here) best = line;
    }
    line = nl ? nl + 1 : NULL;
  }
  const char *pick = best ? best : last;
  if (!pick) {
    snprintf(buf, n, "%s", fallback);
    return;
  }
  const char *nl = strchr(pick, '\n');
  size_t len = nl ? (size_t)(nl - pick) : strlen(pick);
  snprintf(buf, n, "%s: %.*s", fallback, (int)len, pick);
}

/* Copy of the base options with configuration `values` applied (NULL: none). */
/* The tuner's cluster knob, 11 / 21 / 12, as the option's "1x1" / "2x1" / "1x2"
 * (docs/autotune.md); any other value is a usage error of the option. */
static tilec_status set_cluster_knob(tilec_options *o, int64_t mn) {
  char v[48];
  snprintf(v, sizeof v, "%lldx%lld", (long long)(mn / 10), (long long)(mn % 10));
  return tilec_options_set(o, "cluster", v);
}

static tilec_status config_options(const tuner *t, const int64_t *values, tilec_options **out) {
  tilec_options *o;
  tilec_status st = tilec_options_create(&o);
  if (st != TILEC_OK) return st;
  const tilec_options *b = t->base;
  if (b) {
    for (int i = 0; i < b->ndefines && st == TILEC_OK; i++) st = tilec_options_define(o, b->defines[i].name, b->defines[i].value);
    if (st == TILEC_OK) st = tilec_options_set_pipeline(o, b->pipeline);
    if (st == TILEC_OK && b->entry_name) st = tilec_options_set(o, "entry-name", b->entry_name);
    o->opt_level = b->opt_level;
    o->line_info = b->line_info;
    o->warps = b->warps;
    o->stages = b->stages;
    o->fp8_acc_fast = b->fp8_acc_fast;
    o->cluster = b->cluster;
    if (st == TILEC_OK && b->disable_pass) st = tilec_options_set(o, "disable-pass", b->disable_pass);
  }
  if (st == TILEC_OK) st = tilec_options_set_arch(o, t->arch);
  const tilec_tune_space *s = t->space;
  for (int i = 0; s && values && i < s->nparams && st == TILEC_OK; i++) {
    const char *name = s->params[i].name;
    if (!strcmp(name, "warps")) o->warps = (int)values[i];
    else if (!strcmp(name, "stages")) o->stages = (int)values[i];
    else if (!strcmp(name, "cluster")) st = set_cluster_knob(o, values[i]);
    else st = tilec_options_define(o, name, values[i]);
  }
  if (st != TILEC_OK) {
    tilec_options_destroy(o);
    return st;
  }
  *out = o;
  return TILEC_OK;
}

typedef struct launcher {
  tilec_kernel *k;
  const tuner *t;
  bool launch_failed; /* the launch call itself failed (checks, resources), no kernel fault */
} launcher;

static int launch_once(void *user, CUstream s, char *err, size_t n) {
  launcher *l = user;
  tilec_status st = tilec_kernel_launch(l->k, l->t->args, l->t->nargs, s);
  if (st != TILEC_OK) {
    l->launch_failed = true;
    snprintf(err, n, "%s", tilec_kernel_error(l->k));
    return (int)st;
  }
  return TL_OK;
}

/* Before every launch (tl_time_opts.before, outside the timed interval): zero the @zeroed tensors. */
static int zero_before(void *user, CUstream s, char *err, size_t n) {
  const launcher *l = user;
  (void)s; /* the default stream, the launches' */
  for (int i = 0; i < l->t->nzero; i++) {
    int st = tl_rt_zero(l->t->zero_at[i], l->t->zero_bytes[i], err, n);
    if (st != TL_OK) return st;
  }
  return TL_OK;
}

/* Compile, load and time one configuration.  TILEC_OK with *ms, or a skip
 * (reason in buf, TILEC_OK returned with *ms = -1), or a fatal error (the
 * context may be broken: a faulting kernel). */
static tilec_status run_config(tuner *t, const int64_t *values, double *ms, int *runs, char *reason, size_t rn) {
  *ms = -1;
  *runs = 0;
  reason[0] = 0;
  tilec_options *o = NULL;
  tilec_status st = config_options(t, values, &o);
  if (st != TILEC_OK) {
    snprintf(reason, rn, "invalid options (%s)", tilec_status_string(st));
    return st == TILEC_ERROR_NOMEM ? st : TILEC_OK;
  }
  tilec_program *p = NULL;
  st = tilec_program_create(&p, t->source, t->source_name, o);
  tilec_options_destroy(o);
  if (st != TILEC_OK) {
    tilec_program_destroy(p);
    return st;
  }
  st = tilec_program_compile(p, TILEC_STAGE_PTX);
  if (st != TILEC_OK) {
    reason_from_log(tilec_program_log(p), "does not compile", reason, rn);
    tilec_program_destroy(p);
    return st == TILEC_ERROR_NOMEM ? st : TILEC_OK;
  }
  tilec_kernel *k = NULL;
  st = tilec_kernel_load_ptx(p, t->kernel, tilec_program_text(p, TILEC_STAGE_PTX), t->device, &k);
  if (st != TILEC_OK) {
    reason_from_log(tilec_program_log(p), "does not load", reason, rn);
    tilec_program_destroy(p);
    return st == TILEC_ERROR_NOMEM || st == TILEC_ERROR_NO_DEVICE ? st : TILEC_OK;
  }
  launcher l = {k, t, false};
  /* TILEC_TUNE_ZERO=0 (measuring): no zeroing before the launches, the back-to-back event chain */
  const char *zs = getenv("TILEC_TUNE_ZERO");
  bool zero = t->nzero && !(zs && !strcmp(zs, "0"));
  tl_time_opts topts = {.target_ms = t->space ? t->space->target_ms : 0, .before = zero ? zero_before : NULL};
  tl_time_result tr;
  tl_sbuf msg = {0};
  int rt = tl_rt_time_launches(t->dev, launch_once, &l, &topts, &tr, &msg);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  if (rt != TL_OK) {
    const char *m = msg.data ? msg.data : "timing failed";
    size_t len = strcspn(m, "\n");
    if (l.launch_failed) {
      snprintf(reason, rn, "launch rejected: %.*s", (int)len, m);
      st = TILEC_OK;
    } else {
      snprintf(reason, rn, "%.*s", (int)len, m);
      tl_sbuf_printf(&t->log, "tilec: error: tuning stopped: %s", m);
      st = rt == TL_ERR_NOMEM ? TILEC_ERROR_NOMEM : TILEC_ERROR_CUDA;
    }
    tl_sbuf_free(&msg);
    return st;
  }
  tl_sbuf_free(&msg);
  *ms = tr.median_ms;
  *runs = tr.runs;
  return TILEC_OK;
}

static void describe(const tilec_tune_space *s, const int64_t *values, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; s && i < s->nparams && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, "%s%s=%lld", i ? " " : "", s->params[i].name, (long long)values[i]);
  if (!s || s->nparams == 0) snprintf(buf, n, "(defaults)");
}


static void winner_key(const tuner *t, const char *kernel, const char *shape_class, int driver, char hex[65]) {
  tl_sha256_ctx h;
  tl_sha256_init(&h);
  tl_sha256_field_str(&h, "format", "tilec-tune-key/2");
  tl_sha256_field_str(&h, "source", t->source);
  tl_sha256_field_str(&h, "kernel", kernel);
  const tilec_options *b = t->base;
  tl_sha256_field_int(&h, "ndefines", b ? b->ndefines : 0);
  for (int i = 0; b && i < b->ndefines; i++) {
    tl_sha256_field_str(&h, "define", b->defines[i].name);
    tl_sha256_field_int(&h, "value", b->defines[i].value);
  }
  tl_sha256_field_str(&h, "arch", t->arch);
  tl_sha256_field_int(&h, "opt_level", b ? b->opt_level : 3);
  tl_sha256_field_int(&h, "line_info", b ? b->line_info : 1);
  tl_sha256_field_str(&h, "pipeline", b ? b->pipeline : NULL);
  tl_sha256_field_str(&h, "entry_name", b ? b->entry_name : NULL);
  tl_sha256_field_int(&h, "warps", b ? b->warps : 0);
  tl_sha256_field_int(&h, "stages", b ? b->stages : 0);
  tl_sha256_field_int(&h, "fp8_acc_fast", b ? b->fp8_acc_fast : 0);
  if (b && b->cluster) tl_sha256_field_int(&h, "cluster", b->cluster); /* (keys without it unchanged) */
  tl_sha256_field_str(&h, "disable_pass", b ? b->disable_pass : NULL);
  const tilec_tune_space *s = t->space;
  tl_sha256_field_int(&h, "nparams", s ? s->nparams : 0);
  for (int i = 0; s && i < s->nparams; i++) {
    tl_sha256_field_str(&h, "param", s->params[i].name);
    tl_sha256_field(&h, "values", s->params[i].values, sizeof(int64_t) * (size_t)s->params[i].nvalues);
  }
  tl_sha256_field_str(&h, "shape_class", shape_class);
  tl_sha256_field_str(&h, "device", t->dev->name);
  tl_sha256_field_int(&h, "cc", 10 * t->dev->cc_major + t->dev->cc_minor);
  tl_sha256_field_int(&h, "driver", driver);
  tl_sha256_field_str(&h, "tilec", TILEC_VERSION_STRING);
  tl_sha256_field_str(&h, "llvm", TILEC_LLVM_VERSION);
  uint8_t d[32];
  tl_sha256_final(&h, d);
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[64] = 0;
}

/* Space names: tile constants of f, "warps" or "stages"; no repeats; values
 * of warps/stages in the options' ranges. */
static bool check_space(const tilec_tune_space *s, const tl_func *f, tl_sbuf *log) {
  if (!s) return true;
  if (s->nparams < 0 || s->nparams > TILEC_TUNE_MAX_PARAMS || (s->nparams > 0 && !s->params)) {
    tl_sbuf_printf(log, "tilec: error: tune: a space has 0..%d names\n", TILEC_TUNE_MAX_PARAMS);
    return false;
  }
  for (int i = 0; i < s->nparams; i++) {
    const tilec_tune_param *pr = &s->params[i];
    if (!pr->name || strlen(pr->name) >= 64) {
      tl_sbuf_printf(log, "tilec: error: tune: space name %d is missing or too long\n", i);
      return false;
    }
    bool warps = !strcmp(pr->name, "warps"), stages = !strcmp(pr->name, "stages"), known = warps || stages;
    for (int c = 0; c < f->consts.len && !known; c++) known = !strcmp(f->consts.data[c].name, pr->name);
    if (!known) {
      tl_sbuf_printf(log, "tilec: error: tune: '%s' is not a tile constant of kernel '%s' (nor warps, stages)\n",
                     pr->name, f->name);
      return false;
    }
    for (int j = 0; j < i; j++)
      if (!strcmp(s->params[j].name, pr->name)) {
        tl_sbuf_printf(log, "tilec: error: tune: '%s' appears twice in the space\n", pr->name);
        return false;
      }
    if (pr->nvalues <= 0 || !pr->values) {
      tl_sbuf_printf(log, "tilec: error: tune: '%s' has no values\n", pr->name);
      return false;
    }
    for (int v = 0; v < pr->nvalues; v++) {
      int64_t x = pr->values[v];
      bool bad = (warps && (x < 1 || x > 16 || (x & (x - 1)))) || (stages && (x < 1 || x > 8));
      if (bad) {
        tl_sbuf_printf(log, "tilec: error: tune: %s=%lld is out of range (%s)\n", pr->name, (long long)x,
                       warps ? "1, 2, 4, 8 or 16" : "1..8");
        return false;
      }
    }
  }
  if (tl_tune_space_size(s) < 0) {
    tl_sbuf_printf(log, "tilec: error: tune: more than %d configurations\n", TILEC_TUNE_MAX_CONFIGS);
    return false;
  }
  return true;
}

/* Whether the space is wrong for the kernel in itself (check_space's messages into log), judged without a device:
 * the program compiled to IR with the base options alone (the target the base names, else the default). */
static bool space_refused_without_device(const char *source_or_path, int is_path, const tilec_options *base,
                                         const char *kernel, const tilec_tune_space *space, tl_sbuf *log) {
  tilec_program *p = NULL;
  tilec_status st = is_path ? tilec_program_create_from_file(&p, source_or_path, base)
                            : tilec_program_create(&p, source_or_path, "<string>", base);
  bool refused = false;
  if (st == TILEC_OK && tilec_program_compile(p, TILEC_STAGE_IR) == TILEC_OK) {
    tl_func *f = tl_api_find_kernel(p, kernel);
    refused = f && !check_space(space, f, log);
  }
  tilec_program_destroy(p);
  return refused;
}

/* Bytes a tensor's elements span (strides NULL = compact row-major). */
static size_t tensor_span_bytes(const DLTensor *t) {
  size_t esize = ((size_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
  int64_t last = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] == 0) return 0;
    int64_t stride = 1;
    if (t->strides) stride = t->strides[d];
    else
      for (int e = d + 1; e < t->ndim; e++) stride *= t->shape[e];
    last += (t->shape[d] - 1) * (stride < 0 ? -stride : stride);
  }
  return (size_t)(last + 1) * esize;
}

static void copy_log(tilec_tune_result *out, const tl_sbuf *log) {
  if (!log->data) return;
  size_t n = log->len < sizeof out->log - 1 ? log->len : sizeof out->log - 1;
  memcpy(out->log, log->data, n);
  out->log[n] = 0;
}

tilec_status tilec_autotune(const char *source_or_path, int is_path, const tilec_options *base, const char *kernel,
                            const tilec_tune_space *space, const tilec_arg *args, int nargs, int device,
                            tilec_tune_progress_fn progress, void *user, tilec_tune_result *out) {
  if (!out) return TILEC_ERROR_USAGE;
  memset(out, 0, sizeof *out);
  if (!source_or_path || nargs < 0 || (nargs > 0 && !args)) return TILEC_ERROR_USAGE;
  tuner t = {.base = base, .space = space, .device = device};
  char err[512];
  int rt = tl_rt_device_get(device, &t.dev, err, sizeof err);
  if (rt != TL_OK) {
    /* no device: a request that is wrong in itself (a misspelt constant, a bad value) says so first, as it would
     * with a GPU -- the user fixes that before finding a machine */
    tl_sbuf why = {0};
    if (space_refused_without_device(source_or_path, is_path, base, kernel, space, &why)) {
      snprintf(out->log, sizeof out->log, "%s", why.data ? why.data : "");
      tl_sbuf_free(&why);
      return TILEC_ERROR_USAGE;
    }
    tl_sbuf_free(&why);
    snprintf(out->log, sizeof out->log, "tilec: error: tune: %s\n", err);
    return (tilec_status)rt;
  }
  const tl_cuda *cu;
  if ((rt = tl_rt_driver(&cu, err, sizeof err)) != TL_OK) return (tilec_status)rt;
  snprintf(t.arch, sizeof t.arch, "%s", base && base->arch ? base->arch : t.dev->arch);

  /* the base program: the kernel, its constants and parameters, the source text */
  tilec_options *bo = NULL;
  tilec_status st = config_options(&t, NULL, &bo);
  if (st != TILEC_OK) return st;
  tilec_program *p = NULL;
  st = is_path ? tilec_program_create_from_file(&p, source_or_path, bo)
               : tilec_program_create(&p, source_or_path, "<string>", bo);
  tilec_options_destroy(bo);
  if (st != TILEC_OK) {
    snprintf(out->log, sizeof out->log, "tilec: error: tune: cannot %s %s\n", is_path ? "read" : "create a program from",
             is_path ? source_or_path : "the source");
    return st;
  }
  char *scratch_used = NULL;
  CUdeviceptr *scratch = NULL;
  CUdeviceptr *zero_at = NULL;
  size_t *zero_bytes = NULL;
  tilec_arg *own_args = NULL;
  const tl_source *src = NULL;
  char *source_copy = NULL;
  st = tilec_program_compile(p, TILEC_STAGE_IR);
  tl_func *f = st == TILEC_OK ? tl_api_find_kernel(p, kernel) : NULL;
  if (st != TILEC_OK) {
    tl_sbuf_puts(&t.log, tilec_program_log(p));
    goto done;
  }
  if (!f) {
    tl_sbuf_printf(&t.log, "tilec: error: tune: no kernel named '%s'\n", kernel ? kernel : "(first)");
    st = TILEC_ERROR_USAGE;
    goto done;
  }
  st = tl_api_kernel_passes(p, f);
  if (st != TILEC_OK) {
    tl_sbuf_puts(&t.log, tilec_program_log(p));
    goto done;
  }
  t.kernel = f->name;
  src = &p->ctx.files.data[p->file];
  source_copy = malloc(src->len + 1);
  if (!source_copy) {
    st = TILEC_ERROR_NOMEM;
    goto done;
  }
  memcpy(source_copy, src->text, src->len);
  source_copy[src->len] = 0;
  t.source = source_copy;
  t.source_name = src->name;
  if (!check_space(space, f, &t.log)) {
    st = TILEC_ERROR_USAGE;
    goto done;
  }
  /* the arguments: checked as for a launch, shape class */
  tl_arg *targs = calloc((size_t)(nargs ? nargs : 1), sizeof *targs);
  bool args_ok = targs && tl_api_map_args(f, args, nargs, targs, false, err, sizeof err) &&
                 tl_check_args(f, targs, nargs, err, sizeof err);
  free(targs);
  if (!args_ok || !tl_tune_shape_class(f, args, nargs, out->shape_class, sizeof out->shape_class, err, sizeof err)) {
    tl_sbuf_printf(&t.log, "tilec: error: tune: %s\n", err);
    st = TILEC_ERROR_USAGE;
    goto done;
  }
  char key_hex[65], dir[4096];
  winner_key(&t, f->name, out->shape_class, cu->driver_version, key_hex);
  bool use_cache = !(space && space->no_cache) && tl_cache_dir(dir, sizeof dir, &t.log);
  if (use_cache) {
    tilec_tune_result cached;
    if (tl_tune_cache_load(dir, key_hex, &cached, &t.log) == TL_CACHE_HIT) {
      *out = cached;
      out->from_cache = 1;
      memcpy(out->summary, "cached: ", 8);
      size_t room = sizeof out->summary - 9, len = strnlen(cached.summary, room);
      memcpy(out->summary + 8, cached.summary, len);
      out->summary[8 + len] = 0;
      st = TILEC_OK;
      goto done;
    }
  }

  /* the written and the @zeroed tensors are replaced by zero-filled scratch buffers (the
   * @zeroed ones zeroed again before every launch: zero_before) */
  own_args = calloc((size_t)(nargs ? nargs : 1), sizeof *own_args);
  scratch = calloc((size_t)(nargs ? nargs : 1), sizeof *scratch);
  DLTensor *scratch_t = calloc((size_t)(nargs ? nargs : 1), sizeof *scratch_t);
  scratch_used = (char *)scratch_t;
  zero_at = calloc((size_t)(nargs ? nargs : 1), sizeof *zero_at);
  zero_bytes = calloc((size_t)(nargs ? nargs : 1), sizeof *zero_bytes);
  if (!own_args || !scratch || !scratch_t || !zero_at || !zero_bytes) {
    st = TILEC_ERROR_NOMEM;
    goto done;
  }
  int kidx = 0;
  while (kidx < p->module->funcs.len && p->module->funcs.data[kidx] != f) kidx++;
  for (int i = 0; i < nargs; i++) {
    own_args[i] = args[i];
    tilec_param_info info;
    if (args[i].kind != TILEC_ARG_TENSOR || tilec_program_param(p, kidx, i, &info) != TILEC_OK)
      continue;
    bool zeroed = tilec_program_param_flags(p, kidx, i) & TILEC_PARAM_ZEROED;
    if (!info.written && !zeroed) continue;
    scratch_t[i] = *args[i].u.tensor;
    tl_sbuf msg = {0};
    size_t bytes = tensor_span_bytes(&scratch_t[i]);
    rt = tl_rt_scratch_alloc(t.dev, bytes, &scratch[i], &msg);
    if (rt != TL_OK) {
      tl_sbuf_printf(&t.log, "tilec: error: tune: scratch buffer for '%s': %s", info.name, msg.data ? msg.data : "\n");
      tl_sbuf_free(&msg);
      st = (tilec_status)rt;
      goto done;
    }
    scratch_t[i].data = (void *)(uintptr_t)scratch[i];
    scratch_t[i].byte_offset = 0;
    own_args[i].u.tensor = &scratch_t[i];
    if (zeroed) {
      zero_at[t.nzero] = scratch[i];
      zero_bytes[t.nzero++] = bytes ? bytes : 1;
    }
  }
  t.args = own_args;
  t.nargs = nargs;
  t.zero_at = zero_at;
  t.zero_bytes = zero_bytes;

  /* every configuration */
  int64_t count = tl_tune_space_size(space);
  int np = space ? space->nparams : 0;
  int64_t values[TILEC_TUNE_MAX_PARAMS], best_values[TILEC_TUNE_MAX_PARAMS];
  double best = INFINITY, worst = 0;
  int tried = 0, valid = 0;
  st = TILEC_OK;
  for (int64_t idx = 0; idx < count; idx++) {
    tl_tune_space_config(space, idx, values);
    char desc[400], reason[600];
    double ms;
    int runs;
    describe(space, values, desc, sizeof desc);
    st = run_config(&t, values, &ms, &runs, reason, sizeof reason);
    tried++;
    if (st == TILEC_OK && ms >= 0) {
      valid++;
      if (ms < best) {
        best = ms;
        memcpy(best_values, values, sizeof values);
      }
      if (ms > worst) worst = ms;
    } else if (st == TILEC_OK) {
      tl_sbuf_printf(&t.log, "tilec: note: tune: skipped %s: %s\n", desc, reason);
    }
    tilec_tune_config c = {(int)idx, (int)count, desc, st == TILEC_OK ? ms : -1, runs,
                           st == TILEC_OK && ms >= 0 ? NULL : reason};
    bool stop = progress && progress(&c, user) != 0;
    if (st != TILEC_OK || stop) break;
  }
  out->nconfigs = tried;
  out->nvalid = valid;
  if (st != TILEC_OK) goto done;
  if (valid == 0) {
    tl_sbuf_printf(&t.log, "tilec: error: tune: none of the %d configurations compiled and ran\n", tried);
    st = TILEC_ERROR_UNSUPPORTED;
    goto done;
  }
  out->nparams = np;
  for (int i = 0; i < np; i++) {
    snprintf(out->names[i], sizeof out->names[i], "%s", space->params[i].name);
    out->values[i] = best_values[i];
  }
  out->ms = best;
  out->worst_ms = worst;
  char desc[400];
  describe(space, best_values, desc, sizeof desc);
  snprintf(out->summary, sizeof out->summary, "best of %d configs: %s: %.3f ms (%.1fx the worst)", tried, desc, best,
           worst / best);
  /* only a complete search is worth remembering */
  if (use_cache && tried == count) {
    tl_sbuf msg = {0};
    if (tl_tune_cache_store(dir, key_hex, out, &msg) != TL_OK)
      tl_sbuf_printf(&t.log, "tilec: note: tune cache not written: %s", msg.data ? msg.data : "\n");
    tl_sbuf_free(&msg);
  }
done:
  for (int i = 0; scratch && i < nargs; i++) tl_rt_scratch_free(t.dev, scratch[i]);
  free(scratch);
  free(scratch_used);
  free(zero_at);
  free(zero_bytes);
  free(own_args);
  free(source_copy);
  copy_log(out, &t.log);
  tl_sbuf_free(&t.log);
  tilec_program_destroy(p);
  return st;
}

tilec_status tilec_tune_apply(const tilec_tune_result *r, tilec_options *o) {
  if (!r || !o || r->nparams < 0 || r->nparams > TILEC_TUNE_MAX_PARAMS) return TILEC_ERROR_USAGE;
  for (int i = 0; i < r->nparams; i++) {
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)r->values[i]);
    tilec_status st = !strcmp(r->names[i], "cluster") ? set_cluster_knob(o, r->values[i])
                      : !strcmp(r->names[i], "warps") || !strcmp(r->names[i], "stages")
                          ? tilec_options_set(o, r->names[i], v)
                          : tilec_options_define(o, r->names[i], r->values[i]);
    if (st != TILEC_OK) return st;
  }
  return TILEC_OK;
}
