/* api.c: the public C API of include/tilec.h except tilec_kernel_* (jit.c, launch.c) and
 * tilec_options_* (options.c): programs, compilation by stage, diagnostics, kernel signatures and
 * the interpreter entry.
 * requires: nothing global.  keeps: every entry point NULL-checks its
 * arguments and runs compiler code under tl_api_guard, so internal errors and
 * out-of-memory come back as status codes; the library never prints. */
#include "program.h"
#include "require.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "version.h"

/* ---- status, version, free ------------------------------------------------ */
const char *tilec_status_string(tilec_status s) {
  switch (s) {
  case TILEC_OK: return "TILEC_OK: success";
  case TILEC_ERROR_INPUT: return "TILEC_ERROR_INPUT: the source has errors (see the diagnostics)";
  case TILEC_ERROR_USAGE: return "TILEC_ERROR_USAGE: bad argument to an API call";
  case TILEC_ERROR_NOMEM: return "TILEC_ERROR_NOMEM: out of memory";
  case TILEC_ERROR_INTERNAL: return "TILEC_ERROR_INTERNAL: internal error in tilec (see the log)";
  case TILEC_ERROR_UNSUPPORTED: return "TILEC_ERROR_UNSUPPORTED: valid input that tilec cannot compile yet";
  case TILEC_ERROR_IO: return "TILEC_ERROR_IO: a file could not be read or written";
  case TILEC_ERROR_CUDA: return "TILEC_ERROR_CUDA: the CUDA driver is missing or a driver call failed";
  case TILEC_ERROR_NO_DEVICE: return "TILEC_ERROR_NO_DEVICE: no CUDA device found";
  case TILEC_ERROR_LAUNCH: return "TILEC_ERROR_LAUNCH: arguments rejected before launch";
  }
  return "TILEC_ERROR_UNKNOWN: not a tilec status code";
}

int tilec_version(void) { return TILEC_VERSION_NUM; }

const char *tilec_version_string(void) {
  return "tilec " TILEC_VERSION_STRING " (LLVM " TILEC_LLVM_VERSION ")";
}

void tilec_free(void *p) { free(p); }

/* ---- the guard ------------------------------------------------------------------ */
void tl_api_flush_diags(tilec_program *p) {
  for (; p->ndiag_logged < p->ctx.diags.len; p->ndiag_logged++)
    tl_sbuf_puts(&p->log, p->ctx.diags.data[p->ndiag_logged].rendered);
}

tilec_status tl_api_guard(tilec_program *p, tilec_status (*fn)(tilec_program *, void *), void *arg) {
  jmp_buf on_fatal;
  jmp_buf *volatile outer = p->ctx.on_fatal;
  volatile tilec_status st = TILEC_OK;
  const int first = p->ctx.diags.len;
  p->ctx.on_fatal = &on_fatal;
  if (setjmp(on_fatal) == 0) {
    st = fn(p, arg);
  } else {
    int fs = p->ctx.fatal_status;
    st = (fs > TL_OK && fs <= TL_ERR_LAUNCH) ? (tilec_status)fs : TILEC_ERROR_INTERNAL;
    if (st == TILEC_ERROR_NOMEM) tl_sbuf_puts(&p->log, "tilec: error: out of memory\n");
    /* The module may be half-transformed: later calls report the same failure. */
    p->failed = st;
    p->failed_diags[0] = first;
    p->failed_diags[1] = p->ctx.diags.len;
  }
  p->ctx.on_fatal = outer;
  tl_api_flush_diags(p);
  return st;
}

/* ---- programs --------------------------------------------------------------------- */
static char *arena_strdup_or_null(tl_arena *a, const char *s) { return s ? tl_strdup(a, s) : NULL; }

static void copy_options(tilec_program *p, const tilec_options *o) {
  tl_arena *a = &p->ctx.arena;
  struct tilec_options *d = &p->opts;
  d->opt_level = 3;
  d->line_info = 1;
  d->max_errors = 20;
  if (!o) return;
  *d = *o;
  d->defines = NULL;
  if (o->ndefines > 0) {
    d->defines = tl_alloc(a, sizeof *d->defines * (size_t)o->ndefines);
    for (int i = 0; i < o->ndefines; i++) {
      d->defines[i].name = tl_strdup(a, o->defines[i].name);
      d->defines[i].value = o->defines[i].value;
    }
  }
  d->arch = arena_strdup_or_null(a, o->arch);
  d->pipeline = arena_strdup_or_null(a, o->pipeline);
  d->print_after = arena_strdup_or_null(a, o->print_after);
  d->disable_pass = arena_strdup_or_null(a, o->disable_pass);
  d->entry_name = arena_strdup_or_null(a, o->entry_name);
  d->kernel = arena_strdup_or_null(a, o->kernel);
  d->kmajor_b = arena_strdup_or_null(a, o->kmajor_b);
  d->attn_ws = arena_strdup_or_null(a, o->attn_ws);
  d->ws = arena_strdup_or_null(a, o->ws);
  d->attn_persist = arena_strdup_or_null(a, o->attn_persist);
  d->attn_sched = arena_strdup_or_null(a, o->attn_sched);
  d->attn_o_slot_k = arena_strdup_or_null(a, o->attn_o_slot_k);
}

typedef struct create_args {
  const char *name;
  const char *text;
  size_t len;
  const tilec_options *opts;
} create_args;

/* Where in text byte offset `at` lies (1-based line and column). */
static tl_loc loc_of_offset(int32_t file, const char *text, size_t at) {
  tl_loc loc = {file, 1, 1};
  for (size_t i = 0; i < at; i++) {
    if (text[i] == '\n') {
      loc.line++;
      loc.col = 1;
    } else {
      loc.col++;
    }
  }
  return loc;
}

static tilec_status create_in_guard(tilec_program *p, void *argp) {
  const create_args *a = argp;
  copy_options(p, a->opts);
  p->ctx.max_errors = p->opts.max_errors;
  if (a->len > TILEC_MAX_SOURCE_BYTES) {
    p->file = tl_ctx_add_source(&p->ctx, a->name, "", 0);
    tl_error(&p->ctx, ((tl_loc){p->file, 0, 0}), "source is larger than the %zu MiB limit",
             TILEC_MAX_SOURCE_BYTES >> 20);
    p->failed = TILEC_ERROR_INPUT;
    p->failed_diags[1] = p->ctx.diags.len;
    return TILEC_OK;
  }
  p->file = tl_ctx_add_source(&p->ctx, a->name, a->text, a->len);
  const char *nul = memchr(a->text, 0, a->len);
  if (nul) {
    /* Keep the stored copy printable so the caret line renders. */
    tl_source *src = &p->ctx.files.data[p->file];
    for (size_t i = 0; i < src->len; i++)
      if (src->text[i] == 0) src->text[i] = ' ';
    tl_error(&p->ctx, loc_of_offset(p->file, src->text, (size_t)(nul - a->text)),
             "source contains a NUL byte");
    p->failed = TILEC_ERROR_INPUT;
    p->failed_diags[1] = p->ctx.diags.len;
  }
  return TILEC_OK;
}

static tilec_status create_program(tilec_program **out, const char *name, const char *text, size_t len,
                                   const tilec_options *opts) {
  tilec_program *p = calloc(1, sizeof *p);
  if (!p) return TILEC_ERROR_NOMEM;
  tl_ctx_init(&p->ctx);
  p->reached = -1;
  create_args a = {name ? name : "<string>", text, len, opts};
  tilec_status st = tl_api_guard(p, create_in_guard, &a);
  if (st != TILEC_OK) {
    tilec_program_destroy(p);
    return st;
  }
  *out = p;
  return TILEC_OK;
}

tilec_status tilec_program_create(tilec_program **out, const char *source, const char *name,
                                  const tilec_options *opts) {
  if (!out) return TILEC_ERROR_USAGE;
  *out = NULL;
  if (!source) return TILEC_ERROR_USAGE;
  /* Bounded scan: a string past the limit is only measured up to it. */
  size_t len = strnlen(source, TILEC_MAX_SOURCE_BYTES + 1);
  return create_program(out, name, source, len, opts);
}

/* Read a whole file, at most TILEC_MAX_SOURCE_BYTES + 1 bytes (one more than
 * the limit, so that oversize is seen).  Directories are refused. */
tilec_status tl_api_read_file(const char *path, char **data, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return TILEC_ERROR_IO;
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    close(fd);
    return TILEC_ERROR_IO;
  }
  size_t cap = 65536, n = 0, max = TILEC_MAX_SOURCE_BYTES + 1;
  if (S_ISREG(st.st_mode) && st.st_size >= 0)
    cap = (size_t)st.st_size < max ? (size_t)st.st_size + 1 : max;
  char *buf = malloc(cap + 1);
  if (!buf) {
    close(fd);
    return TILEC_ERROR_NOMEM;
  }
  for (;;) {
    if (n == cap) {
      if (cap >= max) break;
      size_t ncap = cap * 2 < max ? cap * 2 : max;
      char *grown = realloc(buf, ncap + 1);
      if (!grown) {
        free(buf);
        close(fd);
        return TILEC_ERROR_NOMEM;
      }
      buf = grown;
      cap = ncap;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      free(buf);
      close(fd);
      return TILEC_ERROR_IO;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = 0;
  *data = buf;
  *len = n;
  return TILEC_OK;
}

tilec_status tilec_program_create_from_file(tilec_program **out, const char *path,
                                            const tilec_options *opts) {
  if (!out) return TILEC_ERROR_USAGE;
  *out = NULL;
  if (!path) return TILEC_ERROR_USAGE;
  char *text;
  size_t len;
  tilec_status st = tl_api_read_file(path, &text, &len);
  if (st != TILEC_OK) return st;
  st = create_program(out, path, text, len, opts);
  free(text);
  return st;
}

void tilec_program_destroy(tilec_program *p) {
  if (!p) return;
  for (int i = 0; i < 5; i++) free(p->text[i]);
  if ((p->cg.llvm_ir || p->cg.ptx || p->cg.nkernels) ) tl_codegen_result_free(&p->cg);
  free(p->cubin);
  tl_sbuf_free(&p->log);
  tl_sbuf_free(&p->work);
  tl_ctx_free(&p->ctx);
  free(p);
}

/* ---- compiling, stage by stage -------------------------------------------------------- */
static void log_time(tilec_program *p, const char *what, double ms) {
  if (p->opts.time_passes) tl_sbuf_printf(&p->log, "time %s: %.3f ms\n", what, ms);
}

/* The AST text is printed when it is first asked for (tilec_program_text, ast_text), not by
 * every compile (attn_bwd.tile's four kernels: 2.5 M instructions of a kernel's ~210 M);
 * TILEC_LAZY_AST=0 prints it at the front-end, as before (measuring).  Read once. */
static pthread_once_t lazy_ast_once = PTHREAD_ONCE_INIT;
static bool lazy_ast_on = true;
static void read_lazy_ast(void) {
  const char *e = getenv("TILEC_LAZY_AST");
  lazy_ast_on = !(e && e[0] == '0');
}

static const char *target_arch(tilec_program *p) {
  if (p->opts.arch) return p->opts.arch;
  char buf[32];
  p->arch_detected = true;
  if (tl_rt_device_arch(0, buf, sizeof buf) && tl_api_is_arch_name(buf))
    p->opts.arch = tl_strdup(&p->ctx.arena, buf);
  else
    p->opts.arch = "sm_90a";
  return p->opts.arch;
}

static tilec_status stage_frontend(tilec_program *p) {
  tl_sbuf_free(&p->work);
  double t0 = tl_now_ms();
  pthread_once(&lazy_ast_once, read_lazy_ast);
  /* the target is fixed here, at the first stage: the front-end's ARCH is the arch the code is
   * compiled for (and the kernel cache's key field) */
  const char *arch = target_arch(p);
  if (lazy_ast_on) p->module = tl_frontend_keep_ast(&p->ctx, p->file, arch, p->opts.defines, p->opts.ndefines, &p->ast);
  else p->module = tl_frontend(&p->ctx, p->file, arch, p->opts.defines, p->opts.ndefines, &p->work);
  log_time(p, "frontend (lex+parse+sema+lower)", tl_now_ms() - t0);
  if (!p->module || p->ctx.nerrors > 0) {
    p->module = NULL;
    p->ast = NULL;
    tl_sbuf_free(&p->work);
    return TILEC_ERROR_INPUT;
  }
  if (p->work.oom) return TILEC_ERROR_NOMEM;
  if (lazy_ast_on) return TILEC_OK;
  p->text[TILEC_STAGE_AST] = tl_sbuf_take(&p->work);
  if (!p->text[TILEC_STAGE_AST]) return TILEC_ERROR_NOMEM;
  return TILEC_OK;
}

/* text[AST], printed from p->ast the first time it is asked for.  The accessors take a const
 * program: the text is a cache of what the program holds, filled once (two threads asking at
 * the same time may both print it; one copy is kept).  NULL when out of memory. */
static const char *ast_text(const tilec_program *cp) {
  tilec_program *p = (tilec_program *)cp;
  char *t = __atomic_load_n(&p->text[TILEC_STAGE_AST], __ATOMIC_ACQUIRE);
  if (t || !p->ast) return t;
  tl_sbuf b = {0};
  tl_frontend_dump_ast(&b, &p->ctx, p->ast);
  char *mine = b.oom ? NULL : tl_sbuf_take(&b);
  tl_sbuf_free(&b);
  if (!mine) return NULL;
  char *expected = NULL;
  if (__atomic_compare_exchange_n(&p->text[TILEC_STAGE_AST], &expected, mine, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    return mine;
  free(mine);
  return expected;
}

/* True when diagnostics from index `from` on include a verifier complaint:
 * the IR that tilec itself made is broken, an internal error. */
static bool verifier_complained(tilec_program *p, int from) {
  for (int i = from; i < p->ctx.diags.len; i++)
    if (p->ctx.diags.data[i].severity == TL_SEV_ERROR &&
        strncmp(p->ctx.diags.data[i].message, "verifier: ", 10) == 0)
      return true;
  return false;
}


/* The tile passes of kernel f alone (option "kernel": the program compiles that kernel, so the
 * others' passes wait until one of them is loaded or interpreted: tl_api_kernel_passes);
 * TILEC_KERNEL_PASSES=0 runs every kernel's at the IR stage, as before (measuring).  Read once. */
static pthread_once_t kernel_passes_once = PTHREAD_ONCE_INIT;
static bool kernel_passes_on = true;
static void read_kernel_passes(void) {
  const char *e = getenv("TILEC_KERNEL_PASSES");
  kernel_passes_on = !(e && e[0] == '0');
}

/* The pass options and hooks of p (the IR stage's and a later kernel's passes alike). */
static void pass_setup(tilec_program *p, tl_pass_opts *po, tl_run_hooks *hooks) {
  memset(po, 0, sizeof *po);
  po->arch = target_arch(p);
  po->opt_level = p->opts.opt_level;
  po->pipeline = tl_api_pipeline_code(p->opts.pipeline) > 0 ? tl_api_pipeline_code(p->opts.pipeline) : 0;
  po->explain = p->opts.explain != 0;
  po->fp8_acc_fast = p->opts.fp8_acc_fast != 0;
  po->split_k_role = p->opts.split_k_role;
  po->split_k_kernel = p->opts.kernel;
  po->kmajor_b_param = p->opts.kmajor_b;
  po->kmajor_b_kernel = p->opts.kernel;
  po->hoist_operand_role = p->opts.hoist_operand_role;
  po->hoist_operand_kernel = p->opts.kernel;
  po->attn_ws = p->opts.attn_ws;
  po->ws = p->opts.ws;
  po->attn_persist = p->opts.attn_persist;
  po->attn_sched = p->opts.attn_sched;
  po->attn_o_slot_k = p->opts.attn_o_slot_k;
  po->explain_out = p->opts.explain ? &p->log : NULL;
  memset(hooks, 0, sizeof *hooks);
  hooks->print_after = p->opts.print_after;
  hooks->time_passes = p->opts.time_passes != 0;
  hooks->verify_each = p->opts.verify_each != 0;
  hooks->log = &p->log;
  hooks->disabled = p->opts.disable_pass;
}

/* The default pipeline on kernel `only` (NULL: every kernel not passed yet, or all); marks what ran. */
static tilec_status run_pipeline(tilec_program *p, const char *only) {
  int first_diag = p->ctx.diags.len;
  int npasses = 0;
  const tl_pass *const *passes = tl_pipeline_default(&npasses);
  tl_pass_opts po;
  tl_run_hooks hooks;
  pass_setup(p, &po, &hooks);
  hooks.only = only;
  tl_api_flush_diags(p); /* keep the log in order: earlier diagnostics first */
  if (!tl_run_passes(p->module, passes, npasses, &po, &hooks) || p->ctx.nerrors > 0)
    return verifier_complained(p, first_diag) ? TILEC_ERROR_INTERNAL : TILEC_ERROR_INPUT;
  for (int i = 0; i < p->module->funcs.len; i++)
    if (!only || !strcmp(only, p->module->funcs.data[i]->name)) p->passed[i] = true;
  return TILEC_OK;
}

static tilec_status stage_passes(tilec_program *p) {
  if (!tl_verify_module(p->module)) {
    tl_error(&p->ctx, TL_NOLOC, "internal error: the front-end produced invalid IR");
    return TILEC_ERROR_INTERNAL;
  }
  const char *pa = p->opts.print_after;
  if (pa && strcmp(pa, "all") != 0 && !tl_pass_find(pa)) {
    tl_error(&p->ctx, TL_NOLOC, "--print-after: no pass named '%s'", pa);
    return TILEC_ERROR_USAGE;
  }
  char bad[128];
  if (p->opts.disable_pass && tl_pass_list_check(p->opts.disable_pass, bad, sizeof bad)) {
    tl_error(&p->ctx, TL_NOLOC, "--disable-pass: no pass named '%s'", bad);
    return TILEC_ERROR_USAGE;
  }
  /* The two form options rewrite one kernel's signature, so they name it. */
  if ((p->opts.split_k_role || p->opts.kmajor_b || p->opts.hoist_operand_role) && !p->opts.kernel) {
    tl_error(&p->ctx, TL_NOLOC, "option %s: needs option kernel, the kernel to compile in that form",
             p->opts.split_k_role ? "split-k" : p->opts.kmajor_b ? "kmajor-b" : "hoist-operand");
    return TILEC_ERROR_USAGE;
  }
  /* options "warps" / "stages" win over the attributes, in every kernel */
  for (int i = 0; i < p->module->funcs.len; i++) {
    tl_func *f = p->module->funcs.data[i];
    if (p->opts.warps > 0) f->warps = p->opts.warps;
    if (p->opts.stages > 0) f->stages = p->opts.stages;
    if (p->opts.maxnreg > 0) f->maxnreg = p->opts.maxnreg;
    f->cluster_opt = p->opts.cluster;
  }
  p->passed = tl_alloc(&p->ctx.arena, sizeof(bool) * (size_t)(p->module->funcs.len + 1));
  memset(p->passed, 0, sizeof(bool) * (size_t)(p->module->funcs.len + 1));
  /* option "kernel" naming a kernel of the module: its passes alone */
  const char *only = NULL;
  pthread_once(&kernel_passes_once, read_kernel_passes);
  if (p->opts.kernel && kernel_passes_on && tl_api_find_kernel(p, p->opts.kernel)) only = p->opts.kernel;
  tilec_status st = run_pipeline(p, only);
  if (st != TILEC_OK) return st;
  /* the IR text: the kernels passed (every kernel, or the one compiled) */
  tl_sbuf_free(&p->work);
  for (int i = 0, n = 0; i < p->module->funcs.len; i++) {
    if (!p->passed[i]) continue;
    if (n++) tl_sbuf_puts(&p->work, "\n");
    tl_print_func(&p->work, p->module->funcs.data[i]);
  }
  if (p->work.oom) return TILEC_ERROR_NOMEM;
  p->text[TILEC_STAGE_IR] = tl_sbuf_take(&p->work);
  return p->text[TILEC_STAGE_IR] ? TILEC_OK : TILEC_ERROR_NOMEM;
}

static tilec_status kernel_passes_in_guard(tilec_program *p, void *arg) { return run_pipeline(p, arg); }

tilec_status tl_api_kernel_passes(tilec_program *p, const tl_func *f) {
  if (p->reached < TILEC_STAGE_IR || !p->passed) return TILEC_OK; /* (the IR stage runs them all) */
  for (int i = 0; i < p->module->funcs.len; i++)
    if (p->module->funcs.data[i] == f)
      return p->passed[i] ? TILEC_OK : tl_api_guard(p, kernel_passes_in_guard, (void *)f->name);
  return TILEC_OK;
}

static tl_codegen_opts codegen_opts(tilec_program *p) {
  tl_codegen_opts co = {0};
  co.arch = target_arch(p);
  co.opt_level = p->opts.opt_level;
  co.line_info = p->opts.line_info != 0;
  co.entry_name = p->opts.entry_name;
  co.fp8_acc_fast = p->opts.fp8_acc_fast != 0;
  co.tma = p->opts.tma_fallback == TL_TMA_FALLBACK_INLINE  ? TL_TMA_INLINE
           : p->opts.tma_fallback == TL_TMA_FALLBACK_NOTMA ? TL_TMA_OFF
                                                           : TL_TMA_FORM;
  return co;
}

/* Codegen with the stage timings logged; a failure with diagnostics is the
 * input's (unsupported), one without them ours (internal). */
static tilec_status run_codegen(tilec_program *p, const tl_codegen_opts *co, tl_codegen_result *out) {
  tl_api_flush_diags(p);
  bool ok = tl_codegen(p->module, co, out);
  log_time(p, "codegen.llvm-build", out->ms_llvm_build);
  log_time(p, "codegen.llvm-opt", out->ms_llvm_opt);
  log_time(p, "codegen.ptx", out->ms_ptx);
  if (p->opts.time_passes && out->nmodules > 1) {
    char notma[64] = "";
    if (out->nnotma) snprintf(notma, sizeof notma, "%d of them no-TMA entries; ", out->nnotma);
    tl_sbuf_printf(&p->log, "time codegen: %d modules on %d thread%s (%sllvm-opt, ptx: the slowest module's)\n",
                   out->nmodules, out->nthreads, out->nthreads == 1 ? "" : "s", notma);
  }
  if (ok && out->ptx) return TILEC_OK;
  return p->ctx.nerrors > 0 ? TILEC_ERROR_UNSUPPORTED : TILEC_ERROR_INTERNAL;
}

static tilec_status stage_codegen(tilec_program *p, bool want_llvm_text) {
  tl_codegen_opts co = codegen_opts(p);
  /* Printing the LLVM module costs ~7% of a compile: only when asked for. */
  co.no_llvm_ir = !want_llvm_text;
  co.only_kernel = p->opts.kernel;
  if (p->opts.kernel) {
    bool found = false;
    tl_sbuf names = {0};
    for (int i = 0; i < p->module->funcs.len; i++) {
      const char *n = p->module->funcs.data[i]->name;
      found = found || !strcmp(n, p->opts.kernel);
      tl_sbuf_printf(&names, "%s'%s'", i ? ", " : "", n);
    }
    if (!found) tl_error(&p->ctx, TL_NOLOC, "option kernel: no kernel named '%s' in this program (its kernels: %s)",
                         p->opts.kernel, names.data ? names.data : "none");
    tl_sbuf_free(&names);
    if (!found) return TILEC_ERROR_USAGE;
  }
  /* tma-fallback=entry: the no-TMA entries compiled on the codegen threads beside the kernels, then appended */
  co.notma_entries = p->opts.tma_fallback == TL_TMA_FALLBACK_ENTRY;
  tilec_status st = run_codegen(p, &co, &p->cg);
  if (st == TILEC_OK && co.notma_entries) st = tl_api_notma_entries(p);
  if (st != TILEC_OK) return st;
  /* The program owns the texts from here on. */
  p->text[TILEC_STAGE_LLVM] = p->cg.llvm_ir;
  p->text[TILEC_STAGE_PTX] = p->cg.ptx;
  p->cg.llvm_ir = NULL;
  p->cg.ptx = NULL;
  /* --explain: launch configuration and ptxas -v facts per kernel (explain.c) */
  if (p->opts.explain) tl_explain_resources(p);
  return TILEC_OK;
}

/* --emit=cubin: ptxas on the program's PTX. */
static tilec_status stage_cubin(tilec_program *p) {
  double t0 = tl_now_ms();
  tl_sbuf why = {0};
  char *cubin = NULL;
  size_t size = 0;
  tilec_status st = tl_api_ptxas(p->text[TILEC_STAGE_PTX], target_arch(p), p->opts.opt_level, &cubin, &size, &p->log, &why);
  if (st == TILEC_OK) {
    p->cubin = cubin;
    p->cubin_size = size;
  } else {
    tl_error(&p->ctx, TL_NOLOC, "%s", why.data ? why.data : "ptxas failed");
  }
  tl_sbuf_free(&why);
  log_time(p, "ptxas", tl_now_ms() - t0);
  return st;
}

static tilec_status compile_in_guard(tilec_program *p, void *argp) {
  tilec_stage want = *(const tilec_stage *)argp;
  double t0 = tl_now_ms();
  bool did_work = false;
  tilec_status st = TILEC_OK;
  while (st == TILEC_OK && p->reached < (int)want) {
    int next = p->reached + 1;
    did_work = true;
    switch (next) {
    case TILEC_STAGE_AST: st = stage_frontend(p); break;
    case TILEC_STAGE_IR: st = stage_passes(p); break;
    /* LLVM IR and PTX come from one codegen run; the LLVM text is printed only
     * when the caller asked for that stage (printing it costs ~7%). */
    case TILEC_STAGE_LLVM:
    case TILEC_STAGE_PTX: st = stage_codegen(p, want == TILEC_STAGE_LLVM); next = TILEC_STAGE_PTX; break;
    default: st = stage_cubin(p); break;
    }
    if (st == TILEC_OK) p->reached = next;
  }
  if (did_work) log_time(p, "total", tl_now_ms() - t0);
  return st;
}

/* A call the sticky failure refuses gives its errors again (a caller reading only what its own call
 * added -- the Python package -- would see a bare status otherwise). */
static tilec_status repeat_failure(tilec_program *p) {
  int end = p->failed_diags[1] <= p->ctx.diags.len ? p->failed_diags[1] : p->ctx.diags.len;
  for (int i = p->failed_diags[0]; i < end; i++)
    if (p->ctx.diags.data[i].severity == TL_SEV_ERROR) tl_vec_push(&p->ctx.arena, &p->ctx.diags, p->ctx.diags.data[i]);
  tl_api_flush_diags(p);
  return p->failed;
}

tilec_status tilec_program_compile(tilec_program *p, tilec_stage stage) {
  if (!p || (int)stage < TILEC_STAGE_AST || (int)stage > TILEC_STAGE_CUBIN) return TILEC_ERROR_USAGE;
  /* Stages reached before a failure stay usable: the interpreter needs only the IR, which a failed
   * code generation leaves as it was (the JIT runs codegen on it kernel by kernel). */
  if (p->reached >= (int)stage) return TILEC_OK;
  if (p->failed != TILEC_OK) return repeat_failure(p);
  int first = p->ctx.diags.len;
  tilec_status st = tl_api_guard(p, compile_in_guard, &stage);
  /* A failed stage is final: the module may be half-way through a pass.  A
   * usage error (an unknown --print-after pass) is not sticky. */
  if (st != TILEC_OK && st != TILEC_ERROR_USAGE && !(st == TILEC_ERROR_UNSUPPORTED && p->reached >= TILEC_STAGE_PTX)) {
    p->failed = st;
    p->failed_diags[0] = first;
    p->failed_diags[1] = p->ctx.diags.len;
  }
  return st;
}

/* One kernel's PTX, for the JIT (docs/runtime.md "One kernel at a time"):
 * the program's passes run once (TILEC_STAGE_IR); codegen emits only
 * `kernel`, so loading one kernel of a many-kernel file compiles that one. */
typedef struct one_kernel {
  const char *kernel;
  tl_codegen_result *out;
  int assume_vectors; /* tl_codegen_opts.assume_vectors: the launch variant without the fallback (jit.c) */
  bool tma_off;       /* the kernel's no-TMA form (tl_codegen_opts.tma = TL_TMA_OFF, form_launch.c) */
  const char *entry;  /* NULL, or the entry's name (the no-TMA entry, notma_entry.c) */
  int keep_maps;      /* tl_codegen_opts.keep_maps */
} one_kernel;

static tilec_status codegen_kernel_in_guard(tilec_program *p, void *argp) {
  one_kernel *a = argp;
  tl_codegen_opts co = codegen_opts(p);
  co.no_llvm_ir = true;
  co.only_kernel = a->kernel;
  co.assume_vectors = a->assume_vectors;
  if (a->tma_off) co.tma = TL_TMA_OFF;
  if (a->entry) co = tl_codegen_notma_entry_opts(&co, a->kernel, a->entry, a->keep_maps, (int)p->ctx.files.len);
  double t0 = tl_now_ms();
  tilec_status st = run_codegen(p, &co, a->out);
  if (st == TILEC_OK && a->out->nkernels != 1) st = TILEC_ERROR_INTERNAL;
  log_time(p, "total", tl_now_ms() - t0);
  if (st != TILEC_OK) tl_codegen_result_free(a->out);
  return st;
}

tilec_status tl_api_codegen_kernel(tilec_program *p, const char *kernel, int assume_vectors, bool tma_off,
                                   tl_codegen_result *out) {
  memset(out, 0, sizeof *out);
  tilec_status st = tilec_program_compile(p, TILEC_STAGE_IR);
  if (st != TILEC_OK) return st;
  one_kernel a = {kernel, out, assume_vectors, tma_off, NULL, 0};
  return tl_api_guard(p, codegen_kernel_in_guard, &a);
}

tilec_status tl_api_codegen_notma_entry(tilec_program *p, const char *kernel, const char *entry, int keep_maps,
                                        tl_codegen_result *out) {
  memset(out, 0, sizeof *out);
  tilec_status st = tilec_program_compile(p, TILEC_STAGE_IR);
  one_kernel a = {kernel, out, 0, true, entry, keep_maps};
  return st != TILEC_OK ? st : tl_api_guard(p, codegen_kernel_in_guard, &a);
}

const char *tilec_program_text(const tilec_program *p, tilec_stage stage) {
  if (!p || (int)stage < TILEC_STAGE_AST || (int)stage >= TILEC_STAGE_CUBIN) return NULL;
  if (p->reached < (int)stage) return NULL;
  return stage == TILEC_STAGE_AST ? ast_text(p) : p->text[stage];
}

tilec_status tilec_program_get_binary(const tilec_program *p, tilec_stage stage, const void **data,
                                      size_t *size) {
  if (!p || !data || !size) return TILEC_ERROR_USAGE;
  *data = NULL;
  *size = 0;
  if ((int)stage < TILEC_STAGE_AST || (int)stage > TILEC_STAGE_CUBIN || p->reached < (int)stage)
    return TILEC_ERROR_USAGE;
  if (stage == TILEC_STAGE_CUBIN) {
    *data = p->cubin;
    *size = p->cubin_size;
  } else {
    *data = stage == TILEC_STAGE_AST ? ast_text(p) : p->text[stage];
    *size = *data ? strlen(*data) : 0;
  }
  return TILEC_OK;
}

const char *tilec_program_log(const tilec_program *p) {
  if (!p || !p->log.data) return "";
  return p->log.data;
}

/* ---- diagnostics ------------------------------------------------------------------------ */
int tilec_program_num_diagnostics(const tilec_program *p) { return p ? p->ctx.diags.len : 0; }

tilec_status tilec_program_diagnostic(const tilec_program *p, int index, tilec_diagnostic *out) {
  if (!p || !out || index < 0 || index >= p->ctx.diags.len) return TILEC_ERROR_USAGE;
  const tl_diag *d = &p->ctx.diags.data[index];
  out->severity = (tilec_severity)d->severity;
  out->file = (d->loc.file >= 0 && d->loc.file < p->ctx.files.len) ? p->ctx.files.data[d->loc.file].name : "";
  out->line = d->loc.line;
  out->column = d->loc.line > 0 ? d->loc.col : 0;
  out->message = d->message;
  out->rendered = d->rendered;
  return TILEC_OK;
}

/* ---- kernels and their parameters ---------------------------------------------------------- */
static tl_module *module_of(const tilec_program *p) {
  return (p && p->reached >= TILEC_STAGE_AST) ? p->module : NULL;
}

int tilec_program_num_kernels(const tilec_program *p) {
  tl_module *m = module_of(p);
  return m ? m->funcs.len : 0;
}

const char *tilec_program_kernel_name(const tilec_program *p, int index) {
  tl_module *m = module_of(p);
  if (!m || index < 0 || index >= m->funcs.len) return NULL;
  return m->funcs.data[index]->name;
}

tl_func *tl_api_find_kernel(tilec_program *p, const char *kernel) {
  tl_module *m = module_of(p);
  if (!m || m->funcs.len == 0) return NULL;
  if (!kernel) return m->funcs.data[0];
  for (int i = 0; i < m->funcs.len; i++)
    if (strcmp(m->funcs.data[i]->name, kernel) == 0) return m->funcs.data[i];
  return NULL;
}

int tilec_program_num_params(const tilec_program *p, int kernel) {
  tl_module *m = module_of(p);
  if (!m || kernel < 0 || kernel >= m->funcs.len) return -1;
  return m->funcs.data[kernel]->params.len;
}

/* The DLPack dtype the API takes for a tile dtype.  DLPack 0.6 has no bool
 * and no fp8 codes: i1, f8e4m3 and f8e5m2 travel as kDLUInt 8 (raw bytes),
 * the kernel's parameter type deciding how they are read. */
static DLDataType dl_of(tl_dtype t) {
  DLDataType d = {kDLUInt, 8, 1};
  switch (t) {
  case TL_I8: d.code = kDLInt; break;
  case TL_I16: d.code = kDLInt; d.bits = 16; break;
  case TL_I32: d.code = kDLInt; d.bits = 32; break;
  case TL_I64: d.code = kDLInt; d.bits = 64; break;
  case TL_F16: d.code = kDLFloat; d.bits = 16; break;
  case TL_BF16: d.code = kDLBfloat; d.bits = 16; break;
  case TL_F32: d.code = kDLFloat; d.bits = 32; break;
  default: break; /* i1, u8, fp8: kDLUInt 8 */
  }
  return d;
}

tilec_status tilec_program_param(const tilec_program *p, int kernel, int index, tilec_param_info *out) {
  tl_module *m = module_of(p);
  if (!out || !m || kernel < 0 || kernel >= m->funcs.len) return TILEC_ERROR_USAGE;
  const tl_func *f = m->funcs.data[kernel];
  if (index < 0 || index >= f->params.len) return TILEC_ERROR_USAGE;
  const tl_param *pa = &f->params.data[index];
  memset(out, 0, sizeof *out);
  out->name = pa->name;
  out->is_tensor = pa->is_tensor;
  out->dtype = tl_dtype_name(pa->dtype);
  out->dl_dtype = dl_of(pa->dtype);
  out->rank = pa->is_tensor ? pa->rank : 0;
  for (int d = 0; d < out->rank && d < TL_MAX_RANK; d++) {
    const tl_dimspec *ds = &pa->dims[d];
    if (ds->is_const) out->dim_value[d] = ds->value;
    else if (ds->sym >= 0 && ds->sym < f->syms.len) out->dim_symbol[d] = f->syms.data[ds->sym].name;
  }
  out->written = tl_param_written(f, index);
  return TILEC_OK;
}

int tilec_program_param_flags(const tilec_program *p, int kernel, int index) {
  tl_module *m = module_of(p);
  if (!m || kernel < 0 || kernel >= m->funcs.len) return -1;
  const tl_func *f = m->funcs.data[kernel];
  if (index < 0 || index >= f->params.len) return -1;
  return f->params.data[index].zeroed ? TILEC_PARAM_ZEROED : 0;
}

int tilec_program_kernel_flags(const tilec_program *p, int kernel) {
  tl_module *m = module_of(p);
  if (!m || kernel < 0 || kernel >= m->funcs.len) return -1;
  const tl_func *f = m->funcs.data[kernel];
  int flags = 0;
  for (int i = 0; i < f->ops.len; i++) {
    const tl_op *op = &f->ops.data[i];
    if (op->opc != TL_OP_dot || (op->flags & TL_OPF_DEAD) || op->nopnd < 2) continue;
    if (tl_dtype_is_fp8((tl_dtype)f->values.data[op->opnd[0]].type.dtype) ||
        tl_dtype_is_fp8((tl_dtype)f->values.data[op->opnd[1]].type.dtype))
      flags |= TILEC_KERNEL_DOT_F8;
  }
  if ((flags & TILEC_KERNEL_DOT_F8) && p->opts.fp8_acc_fast) flags |= TILEC_KERNEL_DOT_F8_FAST;
  return flags;
}

/* ---- arguments and the interpreter ------------------------------------------------------- */
/* DLPack >= 1.1 codes, accepted when a newer producer sends them. */
enum { DL_BOOL = 6, DL_FLOAT8_E4M3FN = 10, DL_FLOAT8_E5M2 = 12 };

/* The tile dtype of a DLPack dtype, given the parameter's dtype `want`
 * (which decides how raw bytes are read); TL_VOID when there is none. */
static tl_dtype tile_dtype_of(DLDataType d, tl_dtype want) {
  if (d.lanes != 1) return TL_VOID;
  switch (d.code) {
  case kDLInt:
    return d.bits == 8 ? TL_I8 : d.bits == 16 ? TL_I16 : d.bits == 32 ? TL_I32 : d.bits == 64 ? TL_I64 : TL_VOID;
  case kDLUInt:
    if (d.bits != 8) return TL_VOID;
    return (want == TL_I1 || want == TL_F8E4M3 || want == TL_F8E5M2) ? want : TL_U8;
  case kDLFloat: return d.bits == 16 ? TL_F16 : d.bits == 32 ? TL_F32 : TL_VOID;
  case kDLBfloat: return d.bits == 16 ? TL_BF16 : TL_VOID;
  case DL_BOOL: return d.bits == 8 ? TL_I1 : TL_VOID;
  case DL_FLOAT8_E4M3FN: return d.bits == 8 ? TL_F8E4M3 : TL_VOID;
  case DL_FLOAT8_E5M2: return d.bits == 8 ? TL_F8E5M2 : TL_VOID;
  default: return TL_VOID;
  }
}

/* An integer given for an 8- to 32-bit integer parameter must be a value of that width, signed or
 * unsigned (-1 and 0xffffffff both pass for an i32: the C habit of an all-ones mask), so that a
 * number a caller thinks it passed is never wrapped into another one (2^40 into an i32 is 0).
 * i1 takes any value (nonzero is true), i64 and float parameters every i64. */
static bool int_scalar_fits(tl_dtype t, int64_t v) {
  if (!tl_dtype_is_int(t) || t == TL_I1) return true;
  int bits = tl_dtype_bits(t);
  if (bits >= 64) return true;
  return v >= -((int64_t)1 << (bits - 1)) && v <= ((int64_t)1 << bits) - 1;
}

bool tl_api_map_args(const tl_func *f, const tilec_arg *args, int nargs, tl_arg *out, bool host,
                     char *err, size_t n) {
  if (nargs != f->params.len) {
    snprintf(err, n, "kernel '%s' takes %d arguments, %d given", f->name, f->params.len, nargs);
    return false;
  }
  for (int i = 0; i < nargs; i++) {
    const tl_param *pa = &f->params.data[i];
    const tilec_arg *a = &args[i];
    tl_arg *o = &out[i];
    memset(o, 0, sizeof *o);
    if ((a->kind == TILEC_ARG_TENSOR) != pa->is_tensor) {
      snprintf(err, n, "argument %d (%s): expected a %s", i, pa->name, pa->is_tensor ? "tensor" : "scalar");
      return false;
    }
    switch (a->kind) {
    case TILEC_ARG_I32:
    case TILEC_ARG_I64:
      o->i = a->kind == TILEC_ARG_I32 ? a->u.i32 : a->u.i64;
      if (!int_scalar_fits(pa->dtype, o->i)) {
        snprintf(err, n, "argument %d (%s): %lld does not fit the parameter's type %s", i, pa->name,
                 (long long)o->i, tl_dtype_name(pa->dtype));
        return false;
      }
      continue;
    case TILEC_ARG_F32: o->f = a->u.f32; o->is_float = true; continue;
    case TILEC_ARG_F64: o->f = a->u.f64; o->is_float = true; continue;
    case TILEC_ARG_TENSOR: break;
    default:
      snprintf(err, n, "argument %d (%s): unknown argument kind %d", i, pa->name, (int)a->kind);
      return false;
    }
    const DLTensor *t = a->u.tensor;
    if (!t) {
      snprintf(err, n, "argument %d (%s): NULL tensor", i, pa->name);
      return false;
    }
    int dev = t->device.device_type;
    bool dev_ok = host ? (dev == kDLCPU || dev == kDLCUDAHost)
                       : (dev == kDLCUDA || dev == kDLCUDAManaged);
    if (!dev_ok) {
      snprintf(err, n, "argument %d (%s): device type %d is not a %s tensor", i, pa->name, dev,
               host ? "host (kDLCPU)" : "CUDA (kDLCUDA)");
      return false;
    }
    o->is_tensor = true;
    o->dtype = tile_dtype_of(t->dtype, pa->dtype);
    if (o->dtype == TL_VOID) {
      static const char *const code_names[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
      const char *cn = t->dtype.code < sizeof code_names / sizeof *code_names ? code_names[t->dtype.code] : "code";
      snprintf(err, n,
               "argument %d (%s): DLPack dtype %s%d (code %d, bits %d, lanes %d) has no tile type; "
               "the parameter is tensor<%s>",
               i, pa->name, cn, t->dtype.bits, t->dtype.code, t->dtype.bits, t->dtype.lanes,
               tl_dtype_name(pa->dtype));
      return false;
    }
    if (t->ndim < 0 || t->ndim > TL_MAX_RANK || (t->ndim > 0 && !t->shape)) {
      snprintf(err, n, "argument %d (%s): rank %d is not supported (at most %d)", i, pa->name, t->ndim,
               TL_MAX_RANK);
      return false;
    }
    o->rank = t->ndim;
    int64_t numel = 1, stride = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
      if (t->shape[d] < 0) {
        snprintf(err, n, "argument %d (%s): negative size %lld", i, pa->name, (long long)t->shape[d]);
        return false;
      }
      o->shape[d] = t->shape[d];
      o->strides[d] = t->strides ? t->strides[d] : stride; /* NULL strides = compact row-major */
      if (t->shape[d] > 0 && stride > INT64_MAX / t->shape[d]) {
        snprintf(err, n, "argument %d (%s): size overflows", i, pa->name);
        return false;
      }
      stride *= t->shape[d];
      numel *= t->shape[d];
    }
    if (!t->data && numel > 0) {
      snprintf(err, n, "argument %d (%s): NULL data", i, pa->name);
      return false;
    }
    o->data = t->data ? (char *)t->data + t->byte_offset : NULL;
  }
  return true;
}

typedef struct interp_call {
  const char *kernel;
  const tilec_arg *args;
  int nargs;
} interp_call;

static tilec_status interpret_in_guard(tilec_program *p, void *argp) {
  const interp_call *c = argp;
  tl_func *f = tl_api_find_kernel(p, c->kernel);
  if (!f) {
    tl_sbuf_printf(&p->log, "tilec: error: interpret: no kernel named '%s'\n", c->kernel ? c->kernel : "(first)");
    return TILEC_ERROR_USAGE;
  }
  tilec_status pst = tl_api_kernel_passes(p, f);
  if (pst != TILEC_OK) return pst;
  tl_arg small[16];
  tl_arg *targs = c->nargs <= 16 ? small : tl_alloc(&p->ctx.arena, sizeof *targs * (size_t)c->nargs);
  char err[512] = "";
  if (!tl_api_map_args(f, c->args, c->nargs, targs, true, err, sizeof err) ||
      !tl_check_args(f, targs, c->nargs, err, sizeof err)) {
    tl_sbuf_printf(&p->log, "tilec: error: interpret %s: %s\n", f->name, err);
    return TILEC_ERROR_LAUNCH;
  }
  if (!tl_interpret_func(f, targs, c->nargs, err, sizeof err)) {
    if (tl_require_is_failure(err)) tl_sbuf_printf(&p->log, "%s\n", err); /* a whole diagnostic (lib/require.h) */
    else tl_sbuf_printf(&p->log, "tilec: error: interpret %s: %s\n", f->name, err);
    return TILEC_ERROR_LAUNCH;
  }
  return TILEC_OK;
}

tilec_status tilec_interpret(tilec_program *p, const char *kernel, const tilec_arg *args, int nargs) {
  if (!p || nargs < 0 || (nargs > 0 && !args)) return TILEC_ERROR_USAGE;
  tilec_status st = tilec_program_compile(p, TILEC_STAGE_IR);
  if (st != TILEC_OK) return st;
  interp_call c = {kernel, args, nargs};
  return tl_api_guard(p, interpret_in_guard, &c);
}
