/* small_m: requires verified IR after mma_remap and swpipe (f->sched); keeps every op and value
 * (it only records f->small_m); records, for a cutlass GEMM kernel whose one dot runs on wgmma,
 * the small-M forms a launch picks by M (lib/small_m.h, docs/small_m.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "small_m.h"

/* TILEC_SMALL_M=0 (off) and TILEC_SMALL_M_FORMS (the table) choose which kernels a launch runs,
 * not the code of any: the kernel's PTX is the same under either (tests/lit/passes/small_m.test),
 * and each form has its own cache key (its defines and options), so they are read here with
 * getenv, not through lib/code_env.c's table of the switches in the kernel cache key. */
static const char *switch_value(const char *name) { return getenv(name); }
static bool switched_off(void) {
  const char *e = switch_value("TILEC_SMALL_M");
  return e && e[0] == '0';
}

/* TILEC_SMALL_M_WAVES (docs/small_m.md "Waves"): =1 gives the default table its waves form (a 128x128
 * tile picked by the wave model for M above the table's 256), =0 drops any waves form (a
 * TILEC_SMALL_M_FORMS table's); unset: WAVES_DEFAULT (on since the twenty-third session: the H200 measured
 * the form 1.38-1.53x the kernel at M 384 / 512, within 1.4 % elsewhere, bench/RESULTS.md; a
 * TILEC_SMALL_M_FORMS table's "waves=" entry is kept). */
#define WAVES_DEFAULT true
static const char default_waves_form[] = "waves=128x128x64/cutlass/4";
static int waves_switch(void) {
  const char *e = switch_value("TILEC_SMALL_M_WAVES");
  return !e || !*e ? -1 : e[0] != '0';
}

/* The default table (measured on the H200 through this dispatch, bench/RESULTS.md ninth and tenth
 * sessions, docs/small_m.md): M <= 16 one 16-row mma.sync tile row streams the weights through a
 * 5-deep cp.async ring (examples/gemm_small_m.tile's form: 0.99x cuBLAS at N = K = 4096, 0.97x at K =
 * 14336); M = 17..128 64x64 wgmma tiles of BK 128 (A in [K/64][M][64] atoms), 6 stages, unsplit (0.88x
 * at M = 64, 0.97x at M = 128, 0.98x at M = 128 and K = 14336, against 0.85 / 0.84 / 0.94 for the
 * ninth session's split-K forms 64x64x64/8/split and 64x128x64/6/split, same run); M = 129..256
 * 64x128 unsplit (0.96x at M = 256). */
static const char default_forms[] =
    "16=16x32x256/multistage/5,128=64x64x128/cutlass/6,256=64x128x128/cutlass/4";

static const char *const pipe_names[] = {"auto", "simple", "multistage", "cutlass"};

/* "MAXM=BMxBNxBK/PIPE/STAGES,..." into plan->forms; false with the reason in why. */
static bool parse_forms(const char *text, tl_small_m_plan *plan, char *why, size_t n) {
  plan->nforms = 0;
  const char *s = text;
  while (*s) {
    if (plan->nforms == TL_SMALL_M_MAX_FORMS) {
      snprintf(why, n, "more than %d forms", TL_SMALL_M_MAX_FORMS);
      return false;
    }
    tl_small_m_form *fm = &plan->forms[plan->nforms];
    long long mx = 0, bm, bn, bk;
    int st, used = 0, used2 = 0;
    char pipe[16];
    /* "waves=...": the waves form, the last entry (every M above the others' bounds, by the wave model) */
    bool waves = !strncmp(s, "waves=", 6);
    if ((waves ? sscanf(s + 6, "%lldx%lldx%lld/%15[a-z]/%d%n", &bm, &bn, &bk, pipe, &st, &used) != 5
               : sscanf(s, "%lld=%lldx%lldx%lld/%15[a-z]/%d%n", &mx, &bm, &bn, &bk, pipe, &st, &used) != 6) ||
        used == 0) {
      snprintf(why, n, "cannot read '%.40s' (want MAXM=BMxBNxBK/PIPELINE/STAGES[/split],...[,waves=BMxBNxBK/PIPELINE/STAGES])", s);
      return false;
    }
    if (waves) used += 6, mx = INT64_MAX;
    fm->split = false, fm->waves = waves;
    if (sscanf(s + used, "/split%n", &used2) == 0 && used2 == 6) fm->split = true, used += used2;
    if (waves && (fm->split || s[used])) {
      snprintf(why, n, "the waves form '%.40s' must be the last and is not split", s);
      return false;
    }
    fm->pipeline = 0;
    for (int p = 2; p <= TL_PIPE_CUTLASS; p++)
      if (!strcmp(pipe, pipe_names[p])) fm->pipeline = p;
    bool pow2 = bm > 0 && bn > 0 && bk > 0 && !(bm & (bm - 1)) && !(bn & (bn - 1)) && !(bk & (bk - 1));
    if (!fm->pipeline || !pow2 || mx < 1 || st < 0 || st > 16 ||
        (plan->nforms && mx <= plan->forms[plan->nforms - 1].max_m)) {
      snprintf(why, n, "form '%.40s': the pipeline must be multistage or cutlass, tiles powers of two, stages 0..16, "
               "MAXM increasing", s);
      return false;
    }
    fm->max_m = mx, fm->bm = bm, fm->bn = bn, fm->bk = bk, fm->stages = st;
    plan->nforms++;
    s += used;
    if (*s == ',') s++;
    else if (*s) {
      snprintf(why, n, "unexpected '%.20s'", s);
      return false;
    }
  }
  return true;
}

/* The one tile constant whose value is v, or NULL (none, or several: *ambiguous). */
static const char *const_of_value(const tl_func *f, int64_t v, bool *ambiguous) {
  const char *found = NULL;
  for (int i = 0; i < f->consts.len; i++)
    if (f->consts.data[i].value == v) {
      if (found) *ambiguous = true;
      found = f->consts.data[i].name;
    }
  return *ambiguous ? NULL : found;
}

static int32_t loaded_param(tl_func *f, int32_t v) {
  bool t = false;
  return tl_loaded_param(f, v, &t);
}

/* Whether the kernel gets forms; when not, why (NULL: not a kernel this pass is about, no line). */
static bool plan_for(tl_func *f, const tl_pass_opts *o, tl_small_m_plan *plan, char *why, size_t n) {
  if (f->pipeline != TL_PIPE_CUTLASS || (o->arch && strcmp(o->arch, "sm_90a"))) return why[0] = 0, false;
  int32_t dot = -1;
  int ndots = 0;
  for (int32_t i = 0; i < f->ops.len; i++)
    if (f->ops.data[i].opc == TL_OP_dot && !(f->ops.data[i].flags & TL_OPF_DEAD)) dot = i, ndots++;
  if (ndots == 0) return why[0] = 0, false;
  if (ndots > 1) return snprintf(why, n, "off (%d dots: only a kernel of one GEMM dot has forms)", ndots), false;
  tl_dot_sched *d = tl_sched_dot(f, dot, false);
  if (!d || d->instr != TL_SCHED_MMA_WGMMA || tl_op_at(f, dot)->parent < 0)
    return snprintf(why, n, "off (the dot is not a wgmma main loop)"), false;
  tl_op *op = tl_op_at(f, dot);
  tl_type *a = &tl_val(f, op->opnd[0])->type, *b = &tl_val(f, op->opnd[1])->type;
  if (a->dtype != TL_BF16 && a->dtype != TL_F16)
    return snprintf(why, n, "off (%s operands: the forms are for 16-bit ones)", tl_dtype_name((tl_dtype)a->dtype)),
           false;
  if (!tl_program_ids_tile_only(f, a->shape[0], b->shape[1]))
    return snprintf(why, n, "off (a program_id is used other than times the tile's rows or columns: the result may "
                            "depend on the tiles)"),
           false;
  int32_t pa = loaded_param(f, op->opnd[0]);
  bool bt = false;
  int32_t pb = tl_loaded_param(f, op->opnd[1], &bt);
  if (pa < 0 || f->params.data[pa].rank != 2 || f->params.data[pa].dims[0].is_const)
    return snprintf(why, n, "off (A is not a load of a 2-D tensor whose rows are a shape symbol)"), false;
  if (pb < 0 || f->params.data[pb].rank != 2 || f->params.data[pb].dims[bt ? 0 : 1].is_const ||
      f->params.data[pa].dims[1].is_const)
    return snprintf(why, n, "off (B is not a load of a 2-D tensor whose columns (rows of a trans'd B) and A's columns "
                            "are shape symbols)"),
           false;
  const tl_sym *sym = &f->syms.data[f->params.data[pa].dims[0].sym];
  const tl_sym *nsym = &f->syms.data[f->params.data[pb].dims[bt ? 0 : 1].sym];
  const tl_sym *ksym = &f->syms.data[f->params.data[pa].dims[1].sym];
  int64_t ext[3] = {a->shape[0], b->shape[1], a->shape[1]};
  const char *names[3];
  for (int i = 0; i < 3; i++) {
    bool amb = false;
    names[i] = const_of_value(f, ext[i], &amb);
    if (!names[i])
      return snprintf(why, n, "off (%s tile constant has the dot's %c extent %lld: the forms set it by name)",
                      amb ? "more than one" : "no", "MNK"[i], (long long)ext[i]),
             false;
  }
  if (names[0] == names[1] || names[1] == names[2] || names[0] == names[2])
    return snprintf(why, n, "off (one tile constant sets two of the dot's extents)"), false;
  /* the forms set the three by name: each must be only a tile extent or the tiling (tl_tileconst.value_use: a group
   * scale's index k0 / BK would change meaning) */
  for (int i = 0; i < 3; i++)
    if (tl_tileconst_named(f, names[i])->value_use)
      return snprintf(why, n, "off (the tile constant %s, the dot's %c extent, is used as a number, not only as a tile "
                              "extent or in the tiling: the forms set it by name and would change what the kernel "
                              "computes)",
                      names[i], "MNK"[i]),
             false;
  const char *table = switch_value("TILEC_SMALL_M_FORMS");
  int ws = waves_switch();
  char with_waves[sizeof default_forms + sizeof default_waves_form + 1];
  snprintf(with_waves, sizeof with_waves, "%s,%s", default_forms, default_waves_form);
  tl_small_m_plan all;
  if (!parse_forms(table && *table ? table : ws == 1 || (ws < 0 && WAVES_DEFAULT) ? with_waves : default_forms, &all,
                   why + 5, n - 5)) {
    memcpy(why, "off (", 5);
    size_t l = strlen(why);
    snprintf(why + l, n - l, " in TILEC_SMALL_M_FORMS)");
    return false;
  }
  /* only forms of smaller tiles than the kernel's: the kernel itself serves the rest */
  plan->nforms = 0;
  bool dropped = false; /* a waves form, dropped by TILEC_SMALL_M_WAVES=0 */
  for (int i = 0; i < all.nforms; i++) {
    if (all.forms[i].waves && ws == 0) dropped = true;
    else if (all.forms[i].bm < ext[0] || all.forms[i].bn < ext[1]) plan->forms[plan->nforms++] = all.forms[i];
  }
  if (!plan->nforms)
    return snprintf(why, n, "off (no form has a smaller tile than the kernel's%s)",
                    dropped ? ", but for a waves form, which TILEC_SMALL_M_WAVES=0 drops" : ""),
           false;
  plan->m_sym = sym->name;
  plan->m_param = sym->param;
  plan->m_axis = sym->axis;
  plan->n_param = nsym->param, plan->n_axis = nsym->axis;
  plan->k_param = ksym->param, plan->k_axis = ksym->axis;
  plan->const_m = names[0], plan->const_n = names[1], plan->const_k = names[2];
  plan->kernel_bm = ext[0], plan->kernel_bn = ext[1];
  return true;
}

/* The waves form on the explain line: the rule, and the Ms it takes at N = 4096 on an H200's 132 SMs
 * (the model is asked at each launch with the launch's M, N and the device's SM count). */
static void explain_waves(tl_sbuf *ex, const tl_small_m_plan *plan, const tl_small_m_form *wf, int64_t lo) {
  tl_sbuf_printf(ex, " (%s=%lld %s=%lld), or as %s=%lld %s=%lld %s=%lld %s stages=%d where the launcher's wave model puts "
                 "it at <= %.2f of the kernel's time (tiles on the device's SMs, docs/small_m.md \"Waves\"; e.g. N = "
                 "4096 on 132 SMs: %s ",
                 plan->const_m, (long long)plan->kernel_bm, plan->const_n, (long long)plan->kernel_bn, plan->const_m,
                 (long long)wf->bm, plan->const_n, (long long)wf->bn, plan->const_k, (long long)wf->bk,
                 pipe_names[wf->pipeline], wf->stages, TL_WAVES_PICK, plan->m_sym);
  int ranges = 0;
  int64_t start = -1;
  for (int64_t m = lo; m <= 16385 && ranges < 4; m++) {
    tl_small_m_waves w;
    bool on = m <= 16384 && tl_small_m_waves_model(plan, wf, m, 4096, 132, &w);
    if (on && start < 0) start = m;
    if (!on && start >= 0) {
      tl_sbuf_printf(ex, "%s%lld..%lld", ranges ? ", " : "", (long long)start, (long long)(m - 1));
      ranges++, start = -1;
    }
  }
  if (!ranges) tl_sbuf_printf(ex, "none");
  tl_sbuf_printf(ex, "; TILEC_SMALL_M_WAVES=0 off)");
}

static bool run_small_m(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  char why[240] = "";
  tl_small_m_plan plan;
  memset(&plan, 0, sizeof plan);
  bool on = !switched_off() && plan_for(f, o, &plan, why, sizeof why);
  if (switched_off() && f->pipeline == TL_PIPE_CUTLASS) snprintf(why, sizeof why, "off (TILEC_SMALL_M=0)");
  f->small_m = tl_form_record(f, o, "small_m", on, why, &plan, sizeof plan);
  if (!on || !ex) return true;
  tl_sbuf_printf(ex, "small_m: kernel '%s': a launch picks its form by %s (the rows of A, argument %d):", f->name,
                 plan.m_sym, plan.m_param);
  int64_t lo = 1;
  for (int i = 0; i < plan.nforms; i++) {
    const tl_small_m_form *fm = &plan.forms[i];
    if (fm->waves) continue; /* (said after the kernel's range) */
    tl_sbuf_printf(ex, " %s %lld..%lld as %s=%lld %s=%lld %s=%lld %s stages=%d%s;", plan.m_sym, (long long)lo,
                   (long long)fm->max_m, plan.const_m, (long long)fm->bm, plan.const_n, (long long)fm->bn,
                   plan.const_k, (long long)fm->bk, pipe_names[fm->pipeline], fm->stages,
                   fm->split ? " split over K (SPLIT picked at launch: tiles x SPLIT fill the CTAs that run at once, "
                               ">= 4 k-steps a split, at most 8; the partial sums in an f32 workspace, summed in split "
                               "order by a second kernel that runs the kernel's epilogue)"
                   : fm->pipeline == TL_PIPE_MULTISTAGE ? " (mma.sync, 16-row tiles: the weights' read bounds it)"
                                                        : " (wgmma on narrow tiles: more programs than SMs)");
    lo = fm->max_m + 1;
  }
  tl_sbuf_printf(ex, " %s >= %lld this kernel", plan.m_sym, (long long)lo);
  const tl_small_m_form *wf = plan.nforms ? &plan.forms[plan.nforms - 1] : NULL;
  if (wf && wf->waves) explain_waves(ex, &plan, wf, lo);
  tl_sbuf_printf(ex, "; off with TILEC_SMALL_M=0 or --disable-pass=small_m\n");
  return true;
}

const tl_pass tl_pass_small_m = {
    "small_m",
    "requires verified IR after mma_remap and swpipe; keeps ops and values; records the small-M forms of a cutlass "
    "GEMM kernel (f->small_m) that the launcher picks by M",
    run_small_m,
};
