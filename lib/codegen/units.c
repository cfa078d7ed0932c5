/* units.c: requires verified LLVM modules (cg_unit, one per kernel or one for
 * all); produces their PTX: LLVM's passes, the NVPTX fixups and the back end
 * per module, the modules of a many-kernel file on threads of their own, and
 * the PTX of several modules merged into the text one module of all their
 * kernels prints.  Touches only LLVM objects (each module has its own
 * context and target machine), so the threads share nothing but LLVM's
 * read-only options.  docs/codegen.md "Kernels on threads". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "cg.h"
#include "units.h"

static char *dup_n(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

static void unit_fail(cg_unit *u, const char *what, const char *msg) {
  size_t n = strlen(what) + strlen(msg ? msg : "?") + 1;
  u->err = malloc(n);
  if (u->err) {
    strcpy(u->err, what);
    strcat(u->err, msg ? msg : "?");
  } else {
    u->oom = true;
  }
}

void cg_unit_run(cg_unit *u) {
  double t0 = tl_now_ms();
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(u->M, u->passes, u->tm, po);
  if (e && u->fallback) {
    /* an LLVM that does not know a pass of the list (parsing fails before
     * any pass runs, the module is untouched): its own default<O1> */
    LLVMConsumeError(e);
    e = LLVMRunPasses(u->M, u->fallback, u->tm, po);
  }
  LLVMDisposePassBuilderOptions(po);
  if (e) {
    char *em = LLVMGetErrorMessage(e);
    unit_fail(u, "LLVM pass pipeline failed: ", em);
    LLVMDisposeErrorMessage(em);
    u->ms_opt = tl_now_ms() - t0;
    return;
  }
  cg_nvptx_fixups(u->M);
  double t1 = tl_now_ms();
  u->ms_opt = t1 - t0;
  if (u->want_ir) {
    char *ir = LLVMPrintModuleToString(u->M);
    u->ir = dup_n(ir, strlen(ir));
    LLVMDisposeMessage(ir);
    if (!u->ir) u->oom = true;
  }
  LLVMMemoryBufferRef mb = NULL;
  char *em = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(u->tm, u->M, LLVMAssemblyFile, &em, &mb)) {
    unit_fail(u, "NVPTX back-end failed: ", em);
  } else {
    u->ptx_len = LLVMGetBufferSize(mb);
    u->ptx = dup_n(LLVMGetBufferStart(mb), u->ptx_len);
    LLVMDisposeMemoryBuffer(mb);
    if (!u->ptx) u->oom = true;
  }
  LLVMDisposeMessage(em);
  u->ms_ptx = tl_now_ms() - t1;
}

typedef struct unit_pool {
  cg_unit *units;
  int n, next;
  pthread_mutex_t mu;
} unit_pool;

static void *unit_worker(void *arg) {
  unit_pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    int i = p->next < p->n ? p->next++ : -1;
    pthread_mutex_unlock(&p->mu);
    if (i < 0) return NULL;
    cg_unit_run(&p->units[i]);
  }
}

void cg_units_run(cg_unit *units, int n, int threads) {
  unit_pool p = {units, n, 0, PTHREAD_MUTEX_INITIALIZER};
  pthread_t tid[CG_MAX_THREADS];
  int started = 0;
  if (threads > CG_MAX_THREADS) threads = CG_MAX_THREADS;
  /* helpers for all but one; this thread works too (and does it all when
   * no thread can be started) */
  for (int t = 1; t < threads && t < n; t++) {
    /* LLVM's back end recurses on large DAGs: the stack of its own tools' threads */
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, (size_t)16 << 20);
    if (pthread_create(&tid[started], &at, unit_worker, &p) == 0) started++;
    pthread_attr_destroy(&at);
  }
  unit_worker(&p);
  for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
  pthread_mutex_destroy(&p.mu);
}

int cg_units_threads(int nkernels) {
  if (nkernels < 2) return 1;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int t = cpus > 0 ? (int)cpus : 1;
  const char *env = getenv("TILEC_CODEGEN_THREADS");
  if (env && *env) t = atoi(env);
  if (t > nkernels) t = nkernels;
  if (t > CG_MAX_THREADS) t = CG_MAX_THREADS;
  return t < 1 ? 1 : t;
}

/* ---- merging the modules' PTX ---------------------------------------------------------- */

/* A growing text (malloc'd); oom sticks. */
typedef struct mtext {
  char *s;
  size_t n, cap;
  bool oom;
} mtext;

static void put(mtext *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->n + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->n + n + 1) cap *= 2;
    char *p = realloc(t->s, cap);
    if (!p) {
      t->oom = true;
      return;
    }
    t->s = p;
    t->cap = cap;
  }
  memcpy(t->s + t->n, s, n);
  t->n += n;
  t->s[t->n] = 0;
}

static const char globl[] = "\t// .globl\t";
static const char trailer[] = "\t.section\t.debug_loc";
static const char smem_decl[] = ".extern .shared ";

/* The first line of s (up to and with its '\n') starting with prefix, or NULL. */
static const char *line_starting(const char *s, const char *prefix) {
  size_t n = strlen(prefix);
  for (const char *l = s; *l; ) {
    if (!strncmp(l, prefix, n)) return l;
    const char *nl = strchr(l, '\n');
    if (!nl) break;
    l = nl + 1;
  }
  return NULL;
}

static size_t line_len(const char *l) {
  const char *nl = strchr(l, '\n');
  return nl ? (size_t)(nl - l) + 1 : strlen(l);
}

/* The next "$L__" label or "__local_depot" name in [p, end), or NULL. */
static const char *next_name(const char *p, const char *end, bool *depot) {
  const char *l = strstr(p, "$L__"), *d = strstr(p, "__local_depot");
  if (l && l >= end) l = NULL;
  if (d && d >= end) d = NULL;
  *depot = d && (!l || d < l);
  return *depot ? d : l;
}

/* Copy body[0, n) into t with the names the NVPTX printer numbers per module
 * renumbered for a module whose functions are numbered from fn in the merged one:
 *   $L__BB<j>_<b>      -> $L__BB<j + fn>_<b>   (per function)
 *   $L__func_begin<j> / $L__func_end<j>, __local_depot<j> (-O0) -> ...<j + fn>
 *   $L__tmp<k>         -> $L__tmp<k + tmp0>    (one counter per module)
 * and return the count of tmp labels seen (the largest <k> + 1). */
static int put_renumbered(mtext *t, const char *body, size_t n, int fn, int tmp0) {
  int ntmp = 0;
  const char *end = body + n, *p = body;
  char num[32];
  while (p < end) {
    bool depot;
    const char *q = next_name(p, end, &depot);
    if (!q) {
      put(t, p, (size_t)(end - p));
      break;
    }
    q += depot ? 0 : 4;
    put(t, p, (size_t)(q - p));
    p = q;
    const char *kind = NULL;
    if (depot) kind = "__local_depot";
    else if (!strncmp(p, "BB", 2) && p[2] >= '0' && p[2] <= '9') kind = "BB";
    else if (!strncmp(p, "func_begin", 10)) kind = "func_begin";
    else if (!strncmp(p, "func_end", 8)) kind = "func_end";
    if (kind) {
      size_t kl = strlen(kind);
      put(t, kind, kl);
      p += kl;
      if (p[0] < '0' || p[0] > '9') continue;
      char *after;
      long j = strtol(p, &after, 10);
      int m = snprintf(num, sizeof num, "%ld", j + fn);
      put(t, num, (size_t)m);
      p = after;
      continue;
    }
    if (!strncmp(p, "tmp", 3) && p[3] >= '0' && p[3] <= '9') {
      char *after;
      long k = strtol(p + 3, &after, 10);
      if (k + 1 > ntmp) ntmp = (int)k + 1;
      int m = snprintf(num, sizeof num, "tmp%ld", k + tmp0);
      put(t, num, (size_t)m);
      p = after;
    }
  }
  return ntmp;
}

/* The body of a module's PTX: from its first "// .globl" line up to its
 * trailer (the .debug_loc section and .file lines of line info) or the end. */
static void split(const char *ptx, const char **body, const char **body_end) {
  *body = line_starting(ptx, globl);
  const char *tr = *body ? line_starting(*body, trailer) : NULL;
  *body_end = tr ? tr : ptx + strlen(ptx);
}

/* The alignment of tl_smem's declaration line l (".extern .shared .align N .b8 tl_smem[];"), 0 if none. */
static long decl_align(const char *l) {
  const char *a = l ? strstr(l, ".align ") : NULL;
  return a && a < l + line_len(l) ? strtol(a + 7, NULL, 10) : 0;
}

/* texts[0..n) (PTX modules of the same target; text i's functions numbered from fn[i] in the
 * merged one) as one module of all their kernels prints it; tl_smem declared once, with the
 * largest alignment any of them asks for. */
static char *merge_texts(const char *const *texts, const int *fn, int n) {
  if (n < 1) return NULL;
  const char *b0, *e0;
  split(texts[0], &b0, &e0);
  if (!b0) return NULL;
  /* tl_smem's declaration: printed once, after the first kernel's .globl line,
   * when any kernel of the file uses it */
  const char *decl = NULL;
  long align = 0;
  for (int i = 0; i < n; i++) {
    const char *b, *e;
    split(texts[i], &b, &e);
    if (!b) return NULL;
    const char *l = line_starting(b + line_len(b), smem_decl);
    if (!l || l != b + line_len(b)) continue;
    if (!decl) decl = l;
    if (decl_align(l) > align) align = decl_align(l);
  }
  mtext t = {0};
  put(&t, texts[0], (size_t)(b0 - texts[0])); /* header */
  put(&t, b0, line_len(b0));                  /* first .globl line */
  const char *rest = b0 + line_len(b0);
  if (decl && decl_align(decl) == align) {
    put(&t, decl, line_len(decl));
  } else if (decl) { /* (a later module asks for more: the text one module of them all prints) */
    char line[128];
    int m = snprintf(line, sizeof line, "%s.align %ld .b8 tl_smem[];\n", smem_decl, align);
    put(&t, line, (size_t)m);
  }
  if (decl && !strncmp(rest, smem_decl, strlen(smem_decl))) rest += line_len(rest);
  int ntmp = put_renumbered(&t, rest, (size_t)(e0 - rest), fn[0], 0);
  for (int i = 1; i < n; i++) {
    const char *b, *e;
    split(texts[i], &b, &e);
    put(&t, b, line_len(b));
    const char *r = b + line_len(b);
    /* its own globals block (tl_smem's declaration, then a blank line): the
     * merged module printed it once, before its first kernel */
    if (!strncmp(r, smem_decl, strlen(smem_decl))) r += line_len(r);
    if (*r == '\n') r++;
    ntmp += put_renumbered(&t, r, (size_t)(e - r), fn[i], ntmp);
  }
  put(&t, e0, strlen(e0)); /* trailer of the first module (the same file list in all) */
  if (t.oom) {
    free(t.s);
    return NULL;
  }
  return t.s;
}

char *cg_units_merge_ptx(cg_unit *units, int n) {
  const char **texts = malloc(sizeof(char *) * (size_t)n);
  int *fn = malloc(sizeof(int) * (size_t)n);
  char *out = NULL;
  if (texts && fn) {
    for (int i = 0; i < n; i++) texts[i] = units[i].ptx, fn[i] = i;
    out = merge_texts(texts, fn, n);
  }
  free(texts);
  free(fn);
  return out;
}

char *tl_codegen_append_ptx(const char *ptx, int nfuncs, const char *const *extra, int nextra) {
  const char **texts = malloc(sizeof(char *) * (size_t)(nextra + 1));
  int *fn = malloc(sizeof(int) * (size_t)(nextra + 1));
  char *out = NULL;
  if (texts && fn) {
    texts[0] = ptx, fn[0] = 0;
    for (int j = 0; j < nextra; j++) texts[j + 1] = extra[j], fn[j + 1] = nfuncs + j;
    out = merge_texts(texts, fn, nextra + 1);
  }
  free(texts);
  free(fn);
  return out;
}
