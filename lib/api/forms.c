/* forms.c: the launch-time forms of a kernel (docs/small_m.md, lib/kmajor_b.h, lib/attn_form.h,
 * lib/attn_persist_form.h): a second program from the kernel's source for each (small-M forms and
 * their split-K halves, the K-major-B form and its transpose kernel, the FlashAttention-3 form and its
 * short form, the persistent attention form) with its options, loaded
 * through tilec_kernel_load on a thread of its own, joined at the load or (late forms) at the
 * first launch that needs one, then adopted by the kernel's handle.
 * requires: a kernel whose IR records forms (f->small_m, f->kmajor_b, f->attn_form,
 * f->attn_persist_form, f->hoist_form: the materialize-once form and its pre-kernel); keeps: the
 * kernel's program as it is (each form is a program of its own); breaks: nothing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_handle.h"
#include "attn_form.h"
#include "attn_persist_form.h"
#include "hoist_operand.h"

/* The passes that record attention forms and those before them: an attention form has none of its own. */
#define FORM_PASSES "small_m,kmajor_form,attn_form,attn_persist_form"

static const char *const form_pipe_names[] = {"auto", "simple", "multistage", "cutlass"};

/* The options of a form of kernel `kernel` of p (a second program from p's source): p's defines,
 * arch, optimization level, line info, entry name, fp8 accumulation and TMA fallback, the kernel
 * alone, and p's disabled passes plus `off` (the passes that record forms: a form has none). */
static tilec_status form_base_options(const tilec_program *p, const char *kernel, const char *off, tilec_options **out) {
  const struct tilec_options *po = &p->opts;
  tilec_options *o;
  tilec_status st = tilec_options_create(&o);
  if (st != TILEC_OK) return st;
  for (int i = 0; i < po->ndefines && st == TILEC_OK; i++) st = tilec_options_define(o, po->defines[i].name, po->defines[i].value);
  if (st == TILEC_OK && po->arch) st = tilec_options_set_arch(o, po->arch);
  if (st == TILEC_OK) st = tilec_options_set_opt_level(o, po->opt_level);
  if (st == TILEC_OK) st = tilec_options_set_line_info(o, po->line_info);
  if (st == TILEC_OK && po->entry_name) st = tilec_options_set(o, "entry-name", po->entry_name);
  if (st == TILEC_OK) st = tilec_options_set(o, "kernel", kernel);
  if (st == TILEC_OK && po->ws) st = tilec_options_set(o, "ws", po->ws); /* (the user's GEMM schedule, forms too) */
  char dis[512];
  snprintf(dis, sizeof dis, "%s%s%s", po->disable_pass ? po->disable_pass : "", po->disable_pass ? "," : "", off);
  if (st == TILEC_OK) st = tilec_options_set(o, "disable-pass", dis);
  if (st != TILEC_OK) {
    tilec_options_destroy(o);
    return st;
  }
  o->fp8_acc_fast = po->fp8_acc_fast;
  /* ("entry" is the PTX stage's: a form loads as a TMA form) */
  o->tma_fallback = po->tma_fallback == TL_TMA_FALLBACK_ENTRY ? TL_TMA_FALLBACK_FORM : po->tma_fallback;
  *out = o;
  return TILEC_OK;
}

/* p's options with form fm's tile constants, pipeline and stages, and the small_m pass off (a
 * form has no forms of its own); into *out (tilec_options_destroy). */
static tilec_status form_options(const tilec_program *p, const tl_small_m_plan *plan, const tl_small_m_form *fm,
                                 const char *kernel, const char *split_half, tilec_options **out) {
  tilec_options *o;
  tilec_status st = form_base_options(p, kernel, "small_m", &o);
  if (st != TILEC_OK) return st;
  st = tilec_options_define(o, plan->const_m, fm->bm);
  if (st == TILEC_OK) st = tilec_options_define(o, plan->const_n, fm->bn);
  if (st == TILEC_OK) st = tilec_options_define(o, plan->const_k, fm->bk);
  bool reduce = split_half && !strcmp(split_half, "reduce");
  /* the reduce half has no dot: the simple pipeline (the cutlass name would say it does not fit) */
  if (st == TILEC_OK) st = tilec_options_set_pipeline(o, reduce ? "simple" : form_pipe_names[fm->pipeline]);
  if (st == TILEC_OK && split_half) st = tilec_options_set(o, "split-k", split_half);
  if (st == TILEC_OK) {
    o->stages = reduce ? 0 : fm->stages; /* the form's, not the kernel's option */
    o->warps = 0;              /* the compiler's choice for the form's tile */
    o->cluster = 0;            /* a form is not clustered */
  }
  if (st != TILEC_OK) {
    tilec_options_destroy(o);
    return st;
  }
  *out = o;
  return TILEC_OK;
}

/* The small-M forms of a kernel load on threads while the kernel itself compiles: each form (each
 * half of a split one) is its own program, and different programs may compile and load at the same
 * time (docs/api.md); the JIT of each (ptxas, ~0.5 s for a cutlass GEMM) was 4-6 of them one after
 * the other (bench/coldload.py).  TILEC_FORM_THREADS=0 loads them in order on the calling thread. */
enum { FORM_SMALL_M, FORM_KMAJOR, FORM_TRANSPOSE, FORM_ATTN, FORM_ATTN_SHORT, FORM_ATTN_PERSIST, FORM_HOIST, FORM_HOIST_PRE };

typedef struct form_job {
  int kind;                 /* FORM_*: a small-M form (fm), the K-major-B form, its transpose kernel, the
                             * FlashAttention-3 form, or the persistent attention form */
  const tl_small_m_form *fm;
  const char *split_half;   /* NULL, "partial" or "reduce" */
  tilec_program *q;         /* the form's program */
  const char *kernel;
  int device;
  tilec_kernel *k;          /* its loaded kernel */
  tilec_program *retry;     /* the K-major-B form at the kernel's tile, loaded if q (at TN's) fails; the
                             * materialize-once form at the kernel's tile, if q (at cutlass_gemm's) fails */
  bool fell_back;           /* q failed and retry is q now (the failed one in retry) */
  tilec_status st;
  pthread_t thread;
  bool started;
} form_job;

struct tl_form_jobs {
  int n;
  form_job job[2 * TL_SMALL_M_MAX_FORMS + 7];
};

tl_form_jobs *tl_forms_new(void) { return calloc(1, sizeof(tl_form_jobs)); }

bool tl_forms_all_started(const tl_form_jobs *js) {
  bool all_started = js->n > 0;
  for (int i = 0; i < js->n; i++) all_started = all_started && js->job[i].started;
  return all_started;
}

static void *form_job_run(void *arg) {
  form_job *j = arg;
  j->st = tilec_kernel_load(j->q, j->kernel, j->device, &j->k);
  if (j->st != TILEC_OK && j->retry) {
    /* the K-major-B form at TN's tile did not compile or load (a kernel whose epilogue does not fit
     * 128x256): the form at the kernel's own tile, which is what ran before */
    tilec_program *failed = j->q;
    j->q = j->retry, j->retry = failed, j->fell_back = true;
    j->st = tilec_kernel_load(j->q, j->kernel, j->device, &j->k);
  }
  return NULL;
}

/* A form's thread: relaxed capture mode first (its own setting: a graph the application captures
 * on another thread in the default global mode meanwhile neither refuses this thread's module
 * loads nor is invalidated by them), then the load. */
static void *form_thread(void *arg) {
  const tl_cuda *cu;
  char err[64];
  if (tl_rt_driver(&cu, err, sizeof err) == TL_OK && cu->cuThreadExchangeStreamCaptureMode) {
    int mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    cu->cuThreadExchangeStreamCaptureMode(&mode);
  }
  return form_job_run(arg);
}

static bool form_threads_on(void) {
  const char *e = getenv("TILEC_FORM_THREADS");
  return !(e && e[0] == '0');
}

/* Late forms: tilec_kernel_load returns once the kernel itself is loaded, its forms finishing on
 * their threads; the first launch that needs one waits for them (docs/small_m.md "Late forms").
 * The cold load of the fused-epilogue GEMM was its 16-row form's compile and ptxas after the
 * kernel's own (bench/RESULTS.md, fifteenth session).  TILEC_LATE_FORMS=0: the load waits. */
bool tl_late_forms_on(void) {
  const char *e = getenv("TILEC_LATE_FORMS");
  return !(e && e[0] == '0');
}

/* The K-major-B form's options: p's, with `kmajor-b` naming B, the kernel alone, and the passes
 * that record forms off (a form has none of its own); with tn_tile, the plan's tile (TN's on
 * sm_90a: its N tile constant and stages, passes/kmajor_form.c); TILEC_KMAJOR_B_STAGES=S
 * (measuring) sets its stages. */
static tilec_status kmajor_options(const tilec_program *p, const tl_func *f, bool tn_tile, tilec_options **out) {
  const tl_kmajor_plan *plan = f->kmajor_b;
  const struct tilec_options *po = &p->opts;
  tilec_options *o;
  tilec_status st = form_base_options(p, f->name, "small_m,kmajor_form", &o);
  if (st != TILEC_OK) return st;
  if (po->pipeline) st = tilec_options_set_pipeline(o, po->pipeline);
  if (st == TILEC_OK) st = tilec_options_set(o, "kmajor-b", plan->b_name);
  if (st == TILEC_OK && tn_tile) st = tilec_options_define(o, plan->const_n, plan->form_bn);
  if (st != TILEC_OK) {
    tilec_options_destroy(o);
    return st;
  }
  const char *e = getenv("TILEC_KMAJOR_B_STAGES");
  o->warps = po->warps, o->maxnreg = po->maxnreg;
  o->stages = e && atoi(e) > 0 ? atoi(e) : tn_tile && !po->stages ? plan->form_stages : po->stages;
  o->assembler = po->assembler, o->cluster = po->cluster;
  *out = o;
  return TILEC_OK;
}

/* The FlashAttention-3 form's options: p's, with the key tile constant at the plan's value, the
 * option attn-ws=fa3, p's pipeline, warps and assembler, and the passes that record forms off (a
 * form has none of its own). */
static tilec_status attn_options(const tilec_program *p, const tl_func *f, tilec_options **out) {
  const struct tilec_options *po = &p->opts;
  const tl_attn_form_plan *plan = f->attn_form;
  tilec_options *o;
  tilec_status st = form_base_options(p, f->name, FORM_PASSES, &o);
  if (st != TILEC_OK) return st;
  if (po->pipeline) st = tilec_options_set_pipeline(o, po->pipeline);
  if (st == TILEC_OK) st = tilec_options_define(o, plan->const_bn, plan->bn);
  if (st == TILEC_OK) st = tilec_options_set(o, "attn-ws", "fa3");
  /* the counter: the program's attn-sched, else by default for a causal form (plan->counter) unless
   * TILEC_ATTN_SCHED says otherwise (it reaches the form's codegen by itself; read as attn_form.h resolves it) */
  const char *sched = po->attn_sched ? po->attn_sched : plan->counter && !tl_attn_sched_mode(0) ? "1" : NULL;
  if (st == TILEC_OK && sched) st = tilec_options_set(o, "attn-sched", sched);
  if (st == TILEC_OK && po->attn_o_slot_k) st = tilec_options_set(o, "attn-o-slot-k", po->attn_o_slot_k);
  if (st != TILEC_OK) {
    tilec_options_destroy(o);
    return st;
  }
  o->warps = po->warps, o->assembler = po->assembler;
  *out = o;
  return TILEC_OK;
}

/* The short FlashAttention-3 form's options (lib/attn_form.h short_*): the form's, with the plan's short option at 1
 * (attn-o-slot-k: O through the last stage's K slot; attn-sched: causal tiles from the counter). */
static tilec_status attn_short_options(const tilec_program *p, const tl_func *f, tilec_options **out) {
  const tl_attn_form_plan *plan = f->attn_form;
  tilec_status st = attn_options(p, f, out);
  if (st == TILEC_OK && (st = tilec_options_set(*out, plan->short_option, "1")) != TILEC_OK) tilec_options_destroy(*out);
  return st;
}

/* The persistent attention form's options: p's, with the option attn-persist=1, p's pipeline,
 * warps and assembler, and the passes that record forms off. */
static tilec_status attn_persist_options(const tilec_program *p, const tl_func *f, tilec_options **out) {
  const struct tilec_options *po = &p->opts;
  tilec_options *o;
  tilec_status st = form_base_options(p, f->name, FORM_PASSES, &o);
  if (st != TILEC_OK) return st;
  if (po->pipeline) st = tilec_options_set_pipeline(o, po->pipeline);
  if (st == TILEC_OK && po->attn_ws) st = tilec_options_set(o, "attn-ws", po->attn_ws);
  if (st == TILEC_OK) st = tilec_options_set(o, "attn-persist", "1");
  if (st != TILEC_OK) {
    tilec_options_destroy(o);
    return st;
  }
  o->warps = po->warps, o->assembler = po->assembler;
  *out = o;
  return TILEC_OK;
}

/* The materialize-once form's halves (lib/hoist_operand.h): p's options with `hoist-operand` = form
 * or pre, the kernel alone, the passes that record forms off; the form at the plan's tile (cutlass_gemm's,
 * on the cutlass pipeline) where form_tile, else the kernel's tile on p's pipeline; the pre-kernel at
 * the kernel's tile (its grid: the k-steps x the kernel's column tiles). */
static tilec_status hoist_options(const tilec_program *p, const tl_func *f, bool pre, bool form_tile,
                                  tilec_options **out) {
  const tl_hoist_plan *plan = f->hoist_form;
  const struct tilec_options *po = &p->opts;
  tilec_options *o;
  tilec_status st = form_base_options(p, f->name, FORM_PASSES ",hoist_form", &o);
  if (st != TILEC_OK) return st;
  st = tilec_options_set(o, "hoist-operand", pre ? "pre" : "form");
  if (st == TILEC_OK && !pre && form_tile) {
    st = tilec_options_define(o, plan->const_m, plan->form_bm);
    if (st == TILEC_OK) st = tilec_options_define(o, plan->const_n, plan->form_bn);
    if (st == TILEC_OK) st = tilec_options_define(o, plan->const_k, plan->form_bk);
    if (st == TILEC_OK) st = tilec_options_set_pipeline(o, "cutlass");
  } else if (st == TILEC_OK && !pre && po->pipeline) {
    st = tilec_options_set_pipeline(o, po->pipeline);
  }
  /* TILEC_HOIST_OPERAND_PRE_TILE=BKxBN (measuring): the pre-kernel's tile, where the plan names the
   * tile constants (read at the load, not in a cache key: the define is the program's own) */
  const char *e = getenv("TILEC_HOIST_OPERAND_PRE_TILE");
  long long tk = 0, tn = 0;
  if (st == TILEC_OK && pre && plan->const_k && e && sscanf(e, "%lldx%lld", &tk, &tn) == 2 && tk > 0 && tn > 0) {
    st = tilec_options_define(o, plan->const_k, tk);
    if (st == TILEC_OK) st = tilec_options_define(o, plan->const_n, tn);
  }
  if (st != TILEC_OK) {
    tilec_options_destroy(o);
    return st;
  }
  o->assembler = po->assembler;
  if (!pre && !form_tile) o->warps = po->warps, o->stages = po->stages, o->maxnreg = po->maxnreg;
  *out = o;
  return TILEC_OK;
}

/* The transpose kernel of the K-major-B form: Y [N, K] = X [K, N] transposed, for B's element type;
 * a row kernel (no dot), its tiles 64 x 64 (docs/pipelines.md "fp8 [K][N] B: the transpose form");
 * TILEC_KMAJOR_B_TRANSPOSE=TKxTN[/STAGES] (measuring) other tiles, and stages >= 2 row_stream's
 * persistent CTAs with loads issued ahead.  (The text, its first line's "lib/api/jit.c" included, is
 * hashed into the kernel cache key: kept byte for byte from when it lived there.) */
static const char transpose_source[] =
    "// the K-major-B form's transpose (lib/api/jit.c): Y [N, K] = X [K, N] transposed\n"
    "kernel tilec_transpose_kn(X: tensor<%s>[K, N], Y: tensor<%s>[N, K])\n"
    "    tiles(TK = %d, TN = %d)\n"
    "    grid(cdiv(N, TN), cdiv(K, TK))\n"
    "{\n"
    "    n0 = program_id(0) * TN;\n"
    "    k0 = program_id(1) * TK;\n"
    "    store(Y[n0 : n0 + TN, k0 : k0 + TK], trans(load(X[k0 : k0 + TK, n0 : n0 + TN])));\n"
    "}\n";

static tilec_status transpose_program(const tilec_program *p, const tl_func *f, tilec_program **out) {
  const tl_kmajor_plan *plan = f->kmajor_b;
  const char *dt = tl_dtype_name((tl_dtype)plan->dtype);
  int tk = 64, tn = 64, stages = 0;
  const char *e = getenv("TILEC_KMAJOR_B_TRANSPOSE");
  if (e && *e && (sscanf(e, "%dx%d/%d", &tk, &tn, &stages) < 2 || tk < 1 || tk > 256 || tn < 1 || tn > 256 ||
                  (tk & (tk - 1)) || (tn & (tn - 1))))
    tk = 64, tn = 64, stages = 0;
  char src[sizeof transpose_source + 64];
  snprintf(src, sizeof src, transpose_source, dt, dt, tk, tn);
  tilec_options *o;
  tilec_status st = tilec_options_create(&o);
  if (st == TILEC_OK && stages > 0) o->stages = stages;
  if (st == TILEC_OK && p->opts.arch) st = tilec_options_set_arch(o, p->opts.arch);
  if (st == TILEC_OK) st = tilec_options_set_opt_level(o, p->opts.opt_level);
  if (st == TILEC_OK) o->assembler = p->opts.assembler;
  if (st == TILEC_OK) st = tilec_program_create(out, src, "tilec_transpose_kn.tile", o);
  tilec_options_destroy(o);
  return st;
}

/* (kernel_handle.h) js->job[i].st is the first failure to set up. */
tilec_status tl_forms_start(tilec_program *p, const tl_func *f, int device, tl_form_jobs *js) {
  const tl_small_m_plan *plan = f->small_m;
  const tl_source *src = &p->ctx.files.data[p->file];
  memset(js, 0, sizeof *js);
  if (f->kmajor_b) {
    for (int kind = FORM_KMAJOR; kind <= FORM_TRANSPOSE; kind++) {
      form_job *j = &js->job[js->n++];
      j->kind = kind;
      j->kernel = kind == FORM_KMAJOR ? f->name : "tilec_transpose_kn";
      j->device = device;
      tilec_status st;
      if (kind == FORM_KMAJOR) {
        /* at TN's tile where the plan gives one, with the kernel's tile to fall back on */
        bool tn = ((const tl_kmajor_plan *)f->kmajor_b)->const_n != NULL;
        st = TILEC_OK;
        for (int t = tn ? 1 : 0; t >= 0 && st == TILEC_OK; t--) {
          tilec_options *o;
          st = kmajor_options(p, f, t == 1, &o);
          if (st == TILEC_OK) {
            st = tilec_program_create(tn && t == 0 ? &j->retry : &j->q, src->text, src->name, o);
            tilec_options_destroy(o);
          }
        }
      } else {
        st = transpose_program(p, f, &j->q);
      }
      if (st != TILEC_OK) return j->st = st;
    }
  }
  if (f->hoist_form) {
    /* the materialize-once form (at cutlass_gemm's tile where the plan gives one, the kernel's to
     * fall back on) and its pre-kernel */
    bool tile = ((const tl_hoist_plan *)f->hoist_form)->const_m != NULL;
    for (int kind = FORM_HOIST; kind <= FORM_HOIST_PRE; kind++) {
      form_job *j = &js->job[js->n++];
      j->kind = kind;
      j->kernel = f->name;
      j->device = device;
      tilec_status st = TILEC_OK;
      for (int t = kind == FORM_HOIST && tile ? 1 : 0; t >= 0 && st == TILEC_OK; t--) {
        tilec_options *o;
        st = hoist_options(p, f, kind == FORM_HOIST_PRE, t == 1, &o);
        if (st == TILEC_OK) {
          st = tilec_program_create(kind == FORM_HOIST && tile && t == 0 ? &j->retry : &j->q, src->text, src->name, o);
          tilec_options_destroy(o);
        }
      }
      if (st != TILEC_OK) return j->st = st;
    }
  }
  /* the attention forms: the kernel's own source under the options each form sets */
  struct {
    bool on;
    int kind;
    tilec_status (*options)(const tilec_program *, const tl_func *, tilec_options **);
  } attn[3] = {{f->attn_form != NULL, FORM_ATTN, attn_options},
               {f->attn_form && ((const tl_attn_form_plan *)f->attn_form)->short_max_s > 0, FORM_ATTN_SHORT,
                attn_short_options},
               {f->attn_persist_form != NULL, FORM_ATTN_PERSIST, attn_persist_options}};
  for (int a = 0; a < 3; a++) {
    if (!attn[a].on) continue;
    form_job *j = &js->job[js->n++];
    j->kind = attn[a].kind;
    j->kernel = f->name;
    j->device = device;
    tilec_options *o;
    tilec_status st = attn[a].options(p, f, &o);
    if (st == TILEC_OK) {
      st = tilec_program_create(&j->q, src->text, src->name, o);
      tilec_options_destroy(o);
    }
    if (st != TILEC_OK) return j->st = st;
  }
  for (int i = 0; plan && i < plan->nforms; i++) {
    const tl_small_m_form *fm = &plan->forms[i];
    for (int h = 0; h < (fm->split ? 2 : 1); h++) {
      form_job *j = &js->job[js->n++];
      j->kind = FORM_SMALL_M;
      j->fm = fm;
      j->split_half = fm->split ? (h == 0 ? "partial" : "reduce") : NULL;
      j->kernel = f->name;
      j->device = device;
      tilec_options *o;
      tilec_status st = form_options(p, plan, fm, f->name, j->split_half, &o);
      if (st == TILEC_OK) {
        st = tilec_program_create(&j->q, src->text, src->name, o);
        tilec_options_destroy(o);
      }
      if (st != TILEC_OK) return j->st = st;
    }
  }
  if (form_threads_on())
    for (int i = 0; i < js->n; i++) js->job[i].started = pthread_create(&js->job[i].thread, NULL, form_thread, &js->job[i]) == 0;
  return TILEC_OK;
}

tilec_status tl_forms_finish(tilec_program *p, const tl_func *f, tl_form_jobs *js) {
  tilec_status first = TILEC_OK;
  for (int i = 0; i < js->n; i++) {
    form_job *j = &js->job[i];
    if (j->started) pthread_join(j->thread, NULL);
    else if (j->q && j->st == TILEC_OK) form_job_run(j);
    j->started = false;
    if (j->fell_back && j->retry && j->kind == FORM_HOIST) {
      const tl_hoist_plan *plan = f->hoist_form;
      tl_sbuf_printf(&p->log, "tilec: note: kernel '%s': its materialize-once form at cutlass_gemm's tile (%s=%lld %s=%lld "
                              "%s=%lld, cutlass) did not load; the form runs at the kernel's tile "
                              "(TILEC_HOIST_OPERAND_TILE=0 asks for that):\n%s",
                     f->name, plan->const_m, (long long)plan->form_bm, plan->const_n, (long long)plan->form_bn,
                     plan->const_k, (long long)plan->form_bk, tilec_program_log(j->retry));
    } else if (j->fell_back && j->retry) {
      const tl_kmajor_plan *plan = f->kmajor_b;
      tl_sbuf_printf(&p->log, "tilec: note: kernel '%s': its K-major-B form at TN's tile (%s=%lld, %d stages) did not "
                              "load; the form runs at the kernel's tile (TILEC_KMAJOR_B_TILE=0 asks for that):\n%s",
                     f->name, plan->const_n, (long long)plan->form_bn, plan->form_stages, tilec_program_log(j->retry));
    }
    tilec_program_destroy(j->retry);
    j->retry = NULL, j->fell_back = false;
    if (j->st != TILEC_OK && first == TILEC_OK && j->kind != FORM_SMALL_M) {
      /* the form, and the switch that loads the kernel without it, by kind */
      static const char *const what[][2] = {
          [FORM_KMAJOR] = {"K-major-B form", "TILEC_KMAJOR_B=0"},
          [FORM_TRANSPOSE] = {"K-major-B form's transpose kernel", "TILEC_KMAJOR_B=0"},
          [FORM_ATTN] = {"FlashAttention-3 form", "TILEC_ATTN_FORM=0"},
          [FORM_ATTN_SHORT] = {"short FlashAttention-3 form", "TILEC_ATTN_FORM_KSLOT=0 (D128) or TILEC_ATTN_FORM_COUNTER=0 (D256)"},
          [FORM_ATTN_PERSIST] = {"persistent form", "TILEC_ATTN_PERSIST=0"},
          [FORM_HOIST] = {"materialize-once form", "TILEC_HOIST_OPERAND=0"},
          [FORM_HOIST_PRE] = {"materialize-once form's pre-kernel", "TILEC_HOIST_OPERAND=0"}};
      first = j->st;
      char msg[1024];
      snprintf(msg, sizeof msg, "its %s did not load (%s loads the kernel without it):\n%s", what[j->kind][0],
               what[j->kind][1], j->q ? tilec_program_log(j->q) : "");
      tl_load_error(p, j->st, f->name, msg);
    } else if (j->st != TILEC_OK && first == TILEC_OK) {
      first = j->st;
      const tl_small_m_plan *plan = f->small_m;
      const tl_small_m_form *fm = j->fm;
      char msg[1024];
      snprintf(msg, sizeof msg,
               "its small-M %sform %s=%lld %s=%lld %s=%lld (%s, stages %d%s%s) did not load (%s loads the "
               "kernel without %s):\n%s",
               fm->waves ? "waves " : "", plan->const_m, (long long)fm->bm, plan->const_n, (long long)fm->bn,
               plan->const_k, (long long)fm->bk, form_pipe_names[fm->pipeline], fm->stages,
               j->split_half ? ", split-K " : "", j->split_half ? j->split_half : "",
               fm->waves ? "TILEC_SMALL_M_WAVES=0" : "TILEC_SMALL_M=0", fm->waves ? "it" : "forms",
               j->q ? tilec_program_log(j->q) : "");
      tl_load_error(p, j->st, f->name, msg);
    }
  }
  return first;
}

void tl_forms_drop(tl_form_jobs *js) {
  for (int i = 0; i < js->n; i++) {
    if (js->job[i].started) pthread_join(js->job[i].thread, NULL);
    tilec_kernel_destroy(js->job[i].k);
    tilec_program_destroy(js->job[i].q);
    tilec_program_destroy(js->job[i].retry);
  }
  js->n = 0;
}

void tl_forms_bounds(tilec_kernel *k) {
  if (!k->f->hoist_form) return;
  const char *e = getenv("TILEC_HOIST_OPERAND_MIN_M");
  k->hoist_min_m = e && *e ? atoll(e) : TL_HOIST_MIN_M;
}

tilec_status tl_forms_adopt(tilec_kernel *k, tl_form_jobs *js) {
  const tl_small_m_plan *plan = k->f->small_m;
  if (plan) {
    k->m_param = plan->m_param, k->m_axis = plan->m_axis;
    k->n_param = plan->n_param, k->n_axis = plan->n_axis;
    k->k_param = plan->k_param, k->k_axis = plan->k_axis;
  }
  bool any_split = false;
  for (int i = 0; i < js->n; i++) {
    form_job *j = &js->job[i];
    /* a FlashAttention-3 form that compiled without its producer warpgroup (the ring not fed by TMA: a tile
     * not the tensor's last two dimensions; loop bounds fa3 cannot take) is the kernel at another key tile
     * on one program an SM, not what attn_form measured: the kernel runs instead (an attention-variant hunt) */
    if ((j->kind == FORM_ATTN || j->kind == FORM_ATTN_SHORT) && j->k && j->k->meta.threads <= k->meta.threads) {
      tl_sbuf_printf(&k->log_p->log, "tilec: note: kernel '%s': its %sFlashAttention-3 form compiled without warp "
                     "specialization (%d threads, the kernel's %d; --explain on it with --attn-ws=fa3 says why): "
                     "launches run the kernel\n",
                     k->f->name, j->kind == FORM_ATTN_SHORT ? "short " : "", j->k->meta.threads, k->meta.threads);
      tilec_kernel_destroy(j->k);
      tilec_program_destroy(j->q);
      j->q = NULL, j->k = NULL;
      continue;
    }
    if (j->kind == FORM_ATTN) {
      const tl_attn_form_plan *ap = k->f->attn_form;
      k->attn_prog = j->q, k->attn = j->k;
      k->attn_s_param = ap->s_param, k->attn_s_axis = ap->s_axis, k->attn_min_s = ap->min_s;
    } else if (j->kind == FORM_ATTN_SHORT) {
      const tl_attn_form_plan *ap = k->f->attn_form;
      k->attn_short_prog = j->q, k->attn_short = j->k;
      k->attn_short_min_s = ap->short_min_s, k->attn_short_max_s = ap->short_max_s;
    } else if (j->kind == FORM_ATTN_PERSIST) {
      const tl_attn_persist_plan *pp = k->f->attn_persist_form;
      k->apersist_prog = j->q, k->apersist = j->k;
      k->apersist_s_param = pp->s_param, k->apersist_s_axis = pp->s_axis, k->apersist_max_s = pp->max_s;
    } else if (j->kind == FORM_KMAJOR) {
      k->kmajor_prog = j->q, k->kmajor = j->k;
    } else if (j->kind == FORM_TRANSPOSE) {
      k->transpose_prog = j->q, k->transpose = j->k;
    } else if (j->kind == FORM_HOIST) {
      k->hoist_prog = j->q, k->hoist = j->k;
    } else if (j->kind == FORM_HOIST_PRE) {
      k->hoist_pre_prog = j->q, k->hoist_pre = j->k;
    } else if (j->split_half && !strcmp(j->split_half, "reduce")) {
      k->reduce_progs[k->nforms - 1] = j->q, k->reduces[k->nforms - 1] = j->k;
    } else {
      int m = k->nforms++;
      k->form_progs[m] = j->q, k->forms[m] = j->k;
      k->form_of[m] = *j->fm;
      k->form_max_m[m] = j->fm->max_m;
      any_split = any_split || j->fm->split;
    }
    /* a form launches as the kernel does: TILEC_PITCH_REPACK=1 as when the kernel was loaded (a late
     * form's handle is made later), its notes in the user's program log */
    if (j->k) {
      j->k->pitch_repack = k->pitch_repack && j->k->meta.ntma > 0;
      j->k->log_p = k->log_p;
    }
    j->q = NULL, j->k = NULL;
  }
  js->n = 0;
  if (any_split) {
    k->split_args = calloc((size_t)k->nparams + 1, sizeof *k->split_args);
    if (!k->split_args) return tl_load_error(k->p, TILEC_ERROR_NOMEM, k->f->name, "out of memory");
  }
  if (k->hoist && k->hoist_pre) {
    k->hplan = *(const tl_hoist_plan *)k->f->hoist_form;
    k->hoist_args = calloc((size_t)k->nparams + 1, sizeof *k->hoist_args);
    if (!k->hoist_args) return tl_load_error(k->p, TILEC_ERROR_NOMEM, k->f->name, "out of memory");
  }
  if (k->kmajor) {
    k->kplan = *(const tl_kmajor_plan *)k->f->kmajor_b;
    const char *e = getenv("TILEC_KMAJOR_B_MIN_M");
    k->kmajor_min_m = e && *e ? atoll(e) : k->kplan.bm;
    k->kmajor_args = calloc((size_t)k->nparams, sizeof *k->kmajor_args);
    if (!k->kmajor_args) return tl_load_error(k->p, TILEC_ERROR_NOMEM, k->f->name, "out of memory");
  }
  return TILEC_OK;
}

/* (kernel_handle.h) The failure is also said in the program's log. */
tilec_status tl_forms_settle(tilec_kernel *k) {
  tl_form_jobs *js = k->late;
  if (js) {
    k->late = NULL;
    size_t mark = k->p->log.len;
    tilec_status st = tl_forms_finish(k->p, k->f, js);
    if (st == TILEC_OK) st = tl_forms_adopt(k, js);
    tl_forms_drop(js);
    free(js);
    if (st != TILEC_OK) {
      k->late_st = st;
      const char *msg = k->p->log.data && k->p->log.len > mark ? k->p->log.data + mark : "see tilec_program_log";
      snprintf(k->late_err, sizeof k->late_err, "%s", msg);
    }
  }
  if (k->late_st == TILEC_OK) return TILEC_OK;
  size_t n = strlen(k->late_err);
  while (n && k->late_err[n - 1] == '\n') n--;
  snprintf(k->err, sizeof k->err, "launch %s: a form this launch needs was loaded late and failed: %.*s", k->f->name,
           (int)n, k->late_err);
  return k->late_st;
}
