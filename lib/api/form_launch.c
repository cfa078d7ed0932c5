/* form_launch.c: a launch routed to one of the kernel's forms (the K-major-B form after B's
 * transpose, the materialize-once form after its pre-kernel, the FlashAttention-3 form, the persistent attention form, a small-M form or its split-K
 * halves, the no-TMA form of a
 * TMA form), each through the launch core (launch.c) with the caller's stream, and the workspace
 * in device memory those forms need (grown on demand, kept with the handle).
 * requires: the forms adopted by the handle (forms.c), the no-TMA form loaded here at its first
 * launch (jit.c); keeps: the caller's arguments (the forms' argument arrays are the handle's own);
 * breaks: nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_handle.h"
#include "attn_form.h"
#include "attn_persist_form.h"

/* Dimension `axis` of tensor argument `param`, or -1 when the argument is not such a tensor. */
static int64_t arg_dim(const tilec_arg *args, int nargs, int32_t param, int32_t axis) {
  if (param >= nargs || args[param].kind != TILEC_ARG_TENSOR || !args[param].u.tensor) return -1;
  const DLTensor *t = args[param].u.tensor;
  return t->ndim > axis && t->shape ? t->shape[axis] : -1;
}

/* k's waves form fm (its plan's last form) picked or not at M x N (the wave model,
 * lib/small_m_waves.c), and, for the first few launches of a handle whose shape differs from the one
 * before (WAVES_NOTES), why in the program log.  The last shape's answer is kept: a repeated launch
 * costs two compares.  Asked before the forms are adopted too (late forms: whether to wait for them). */
enum { WAVES_NOTES = 8 };
static bool waves_pick(tilec_kernel *k, const tl_small_m_form *fm, int64_t m, int64_t n) {
  if (k->waves_have && k->waves_m == m && k->waves_n == n) return k->waves_pick;
  const tl_small_m_plan *plan = k->f->small_m;
  tl_small_m_waves w;
  bool pick = tl_small_m_waves_model(plan, fm, m, n, k->dev->sm_count, &w);
  k->waves_have = true, k->waves_m = m, k->waves_n = n, k->waves_pick = pick;
  if (k->waves_notes < WAVES_NOTES) {
    k->waves_notes++;
    tl_sbuf_printf(&k->log_p->log,
                   "tilec: note: kernel '%s': %s %lld, N %lld on %d SMs: its %lldx%lld tiles %lld (%lld a SM at most), "
                   "the waves form's %lldx%lld %lld (%lld a SM): the form's model time %.2f of the kernel's (picked at <= "
                   "%.2f): %s runs it (docs/small_m.md \"Waves\"; TILEC_SMALL_M_WAVES=0: the kernel)%s\n",
                   k->f->name, plan->m_sym, (long long)m, (long long)n, k->dev->sm_count, (long long)plan->kernel_bm,
                   (long long)plan->kernel_bn, (long long)w.tiles_kernel, (long long)w.waves_kernel, (long long)fm->bm,
                   (long long)fm->bn, (long long)w.tiles_form, (long long)w.waves_form, w.ratio, TL_WAVES_PICK,
                   pick ? "the form" : "the kernel",
                   k->waves_notes == WAVES_NOTES ? " (the last such note for this kernel handle)" : "");
  }
  return pick;
}

/* Whether a launch of k with these arguments may run one of its forms: every launch of a kernel
 * with a K-major-B form (its route reads B's strides), a launch whose S reaches the attention
 * form's bound or is within the persistent attention form's, one whose M is at most the last
 * small-M form's bound, and one whose M and N the wave model gives the waves form.  A launch that needs
 * none runs the kernel while the forms still load. */
static bool needs_form(tilec_kernel *k, const tilec_arg *args, int nargs) {
  if (k->f->kmajor_b) return true;
  const tl_hoist_plan *hp = k->f->hoist_form;
  if (hp && arg_dim(args, nargs, hp->m_param, hp->m_axis) >= k->hoist_min_m) return true;
  const tl_attn_form_plan *ap = k->f->attn_form;
  if (ap && arg_dim(args, nargs, ap->s_param, ap->s_axis) >= ap->min_s) return true;
  const tl_attn_persist_plan *pp = k->f->attn_persist_form;
  if (pp) {
    int64_t s = arg_dim(args, nargs, pp->s_param, pp->s_axis);
    if (s >= 0 && s <= pp->max_s) return true;
  }
  const tl_small_m_plan *plan = k->f->small_m;
  if (!plan) return false;
  int64_t m = arg_dim(args, nargs, plan->m_param, plan->m_axis);
  for (int i = 0; m >= 0 && i < plan->nforms; i++) {
    const tl_small_m_form *fm = &plan->forms[i];
    int64_t n = fm->waves ? arg_dim(args, nargs, plan->n_param, plan->n_axis) : 0;
    if (fm->waves ? n >= 0 && waves_pick(k, fm, m, n) : m <= fm->max_m) return true;
  }
  return false;
}

/* The index of the small-M form a launch of k with these arguments runs, or -1 (k itself; also
 * when the argument that gives M is not a tensor of the right rank: the checks of k say so): the
 * first whose bound M is within, else the waves form where the wave model picks it. */
static int form_for(tilec_kernel *k, const tilec_arg *args, int nargs) {
  int64_t m = arg_dim(args, nargs, k->m_param, k->m_axis);
  if (m < 0) return -1;
  for (int i = 0; i < k->nforms; i++) {
    if (!k->form_of[i].waves && m <= k->form_max_m[i]) return i;
    if (k->form_of[i].waves) {
      int64_t n = arg_dim(args, nargs, k->n_param, k->n_axis);
      return n >= 0 && waves_pick(k, &k->form_of[i], m, n) ? i : -1;
    }
  }
  return -1;
}

/* SPLIT for split form i at M x N x K: as many splits of each tile as fill the CTAs that run at
 * once (floor: a persistent CTA runs its units one after the other, so a second part-wave costs
 * as much as the first), at least 4 k-steps a split, 1..8; TILEC_SMALL_M_SPLIT=S forces S
 * (measuring). */
static int64_t split_count(const tilec_kernel *k, int i, int64_t m, int64_t n, int64_t kk) {
  const tl_small_m_form *fm = &k->form_of[i];
  const tilec_kernel *fk = k->forms[i];
  const char *e = getenv("TILEC_SMALL_M_SPLIT");
  if (e && atoi(e) >= 1) return atoi(e);
  int64_t tiles = ((m + fm->bm - 1) / fm->bm) * ((n + fm->bn - 1) / fm->bn);
  int64_t resident = fk->meta.persist ? fk->max_ctas : (int64_t)k->dev->sm_count * tl_ctas_per_sm(k->dev, fk->fn, &fk->meta);
  int64_t want = resident / (tiles > 0 ? tiles : 1);
  int64_t steps = (kk + fm->bk - 1) / fm->bk, most = steps / 4;
  if (want > most) want = most;
  if (want > 8) want = 8;
  return want < 1 ? 1 : want;
}

/* k's workspace (a form's scratch in device memory: split-K partial sums, the K-major-B form's
 * transposed B) at least `bytes` long: allocated on the first launch that needs more, then kept;
 * what it replaces is kept until the handle goes (a CUDA graph captured with it still uses it;
 * at most 16, then the oldest is freed). */
static tilec_status workspace(tilec_kernel *k, size_t bytes, const char *what) {
  if (bytes <= k->ws_bytes) return TILEC_OK;
  char err[512];
  const tl_cuda *cu;
  if (tl_rt_driver(&cu, err, sizeof err) != TL_OK || tl_rt_make_current(k->dev, err, sizeof err) != TL_OK)
    return tl_launch_error(k, TILEC_ERROR_CUDA, "%s", err);
  if (!cu->cuMemAlloc || !cu->cuMemFree)
    return tl_launch_error(k, TILEC_ERROR_CUDA, "the driver has no cuMemAlloc / cuMemFree (the %s workspace)", what);
  if (k->ws) {
    if (k->nws_old == 16) {
      cu->cuMemFree(k->ws_old[0]);
      memmove(k->ws_old, k->ws_old + 1, sizeof k->ws_old[0] * 15);
      k->nws_old--;
    }
    k->ws_old[k->nws_old++] = k->ws;
  }
  k->ws = 0, k->ws_bytes = 0;
  CUdeviceptr ptr = 0;
  CUresult r = cu->cuMemAlloc(&ptr, bytes);
  if (r != CUDA_SUCCESS) {
    char t[200];
    return tl_launch_error(k, TILEC_ERROR_CUDA, "cuMemAlloc of the %s workspace (%zu bytes) failed: %s", what, bytes,
                        tl_rt_result_text(r, t, sizeof t));
  }
  k->ws = ptr, k->ws_bytes = bytes;
  return TILEC_OK;
}

/* Split form i: P sized (grown if needed), then the partial half and the reduce half on `stream`,
 * both through tl_launch() with the caller's arguments and P. */
static tilec_status launch_split(tilec_kernel *k, int i, const tilec_arg *args, int nargs, void *stream) {
  int64_t m = arg_dim(args, nargs, k->m_param, k->m_axis), n = arg_dim(args, nargs, k->n_param, k->n_axis);
  int64_t kk = arg_dim(args, nargs, k->k_param, k->k_axis);
  if (n < 0 || kk < 0 || nargs != k->nparams) return tl_launch(k->forms[i], args, nargs, NULL, stream); /* its checks say why */
  int64_t s = split_count(k, i, m, n, kk);
  size_t bytes = (size_t)s * (size_t)(m > 0 ? m : 1) * (size_t)(n > 0 ? n : 1) * 4;
  tilec_status wst = workspace(k, bytes, "split-K");
  if (wst != TILEC_OK) return wst;
  memcpy(k->split_args, args, sizeof *args * (size_t)nargs);
  k->split_p_shape[0] = s, k->split_p_shape[1] = m, k->split_p_shape[2] = n;
  k->split_p = (DLTensor){.data = (void *)(uintptr_t)k->ws, .device = {kDLCUDA, k->dev->ordinal}, .ndim = 3,
                          .dtype = {kDLFloat, 32, 1}, .shape = k->split_p_shape};
  k->split_args[nargs] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &k->split_p};
  tilec_status st = tl_launch(k->forms[i], k->split_args, nargs + 1, NULL, stream);
  if (st != TILEC_OK) {
    snprintf(k->err, sizeof k->err, "%s", k->forms[i]->err);
    return st;
  }
  st = tl_launch(k->reduces[i], k->split_args, nargs + 1, NULL, stream);
  if (st != TILEC_OK) snprintf(k->err, sizeof k->err, "%s", k->reduces[i]->err);
  return st;
}

/* A launch of TMA form k whose tensor argument `param` a tensor map cannot take: through k's
 * no-TMA form, loaded (memory cache, disk cache or compiled) at the first such launch. */
tilec_status tl_launch_notma(tilec_kernel *k, int param, const tilec_arg *args, int nargs,
                             const int64_t *grid_override, void *stream) {
  const char *pname = k->f->params.data[param].name;
  if (!k->notma && k->owned_module && !k->user_notma)
    return tl_launch_error(k, TILEC_ERROR_LAUNCH,
                        "argument %d (%s): no tensor map can take it (codegen.h: the last stride 1, the data and "
                        "every other byte stride 16-byte aligned, no size 0), and the PTX given for kernel '%s' is a "
                        "TMA form (\"" TL_TMA_FORM_MARK "\": no path for such tensors) without its no-TMA entry %s"
                        TL_NOTMA_SUFFIX "; nothing was launched: compile that PTX with the CLI's default (the option "
                        "tma-fallback=entry: both entries) or tma-fallback=inline, or load the kernel with tilec_kernel_load",
                        param, pname, k->f->name, k->meta.entry);
  if (!k->notma && k->owned_module) { /* its second entry (notma_entry.c) */
    char err[512] = "";
    tilec_status st = TILEC_OK;
    tilec_kernel *n = tl_user_notma(k, &st, err, sizeof err);
    if (!n)
      return tl_launch_error(k, st != TILEC_OK ? st : TILEC_ERROR_NOMEM,
                          "argument %d (%s): no tensor map can take it, and the no-TMA entry %s" TL_NOTMA_SUFFIX
                          " of the PTX given did not load (%s); nothing was launched", param, pname, k->meta.entry, err);
    tl_sbuf_printf(&k->log_p->log, "tilec: note: kernel '%s': argument %d (%s) cannot be a tensor map: the PTX's "
                   "no-TMA entry %s" TL_NOTMA_SUFFIX " runs such launches\n", k->f->name, param, pname, k->meta.entry);
    k->notma = n;
  }
  if (!k->notma) {
    tilec_program *p = k->p;
    tl_cache_loaded loaded;
    const char *origin = NULL;
    char err[512] = "";
    tilec_status st = tl_load_variant(p, k->f, k->dev, k->arch, k->dev->ordinal, TL_LOAD_NOTMA, &loaded, &origin);
    if (st == TILEC_OK) st = tl_check_resources(p, k->f, k->dev, loaded.function, &loaded.meta);
    tilec_kernel *n = st == TILEC_OK ? tl_new_kernel_handle(p, k->f, k->dev, loaded.function, &loaded.meta, origin, err, sizeof err) : NULL;
    if (!n)
      return tl_launch_error(k, st != TILEC_OK ? st : TILEC_ERROR_NOMEM,
                          "argument %d (%s): no tensor map can take it, and the no-TMA form of kernel '%s' did not "
                          "load (%s; tilec_program_log has the details); nothing was launched",
                          param, pname, k->f->name, err[0] ? err : "see the log");
    tl_sbuf_printf(&k->log_p->log, "tilec: note: kernel '%s': argument %d (%s) cannot be a tensor map: its no-TMA form (%s) "
                            "runs such launches%s\n", k->f->name, param, pname, origin ? origin : "?",
                   !k->pitch_repack && tl_repackable(k, param)
                       ? " (the kernel only reads it and its last stride is 1: without TILEC_PITCH_REPACK=0 it "
                         "would be copied into rows padded to 16 bytes at each launch for the TMA kernel, docs/runtime.md)"
                       : "");
    k->notma = n;
  }
  tilec_status st = tl_launch(k->notma, args, nargs, grid_override, stream);
  if (st != TILEC_OK) snprintf(k->err, sizeof k->err, "%s", k->notma->err);
  return st;
}

/* B's strides (NULL strides: compact row-major). */
static void b_strides(const DLTensor *b, int64_t *s0, int64_t *s1) {
  *s0 = b->strides ? b->strides[0] : b->shape[1];
  *s1 = b->strides ? b->strides[1] : 1;
}

/* The K-major-B form (lib/kmajor_b.h): 1 when this launch runs it on B's own memory (B's view is
 * K-major), 2 after a transpose into the workspace (N-major, M above kmajor_min_m), 0 the kernel
 * itself (anything else: another view, an empty B, arguments its checks will refuse). */
static int kmajor_route(const tilec_kernel *k, const tilec_arg *args, int nargs) {
  int32_t bp = k->kplan.b_param;
  if (nargs != k->nparams || args[bp].kind != TILEC_ARG_TENSOR || !args[bp].u.tensor) return 0;
  const DLTensor *b = args[bp].u.tensor;
  if (b->ndim != 2 || !b->shape || b->shape[0] <= 0 || b->shape[1] <= 0) return 0;
  int64_t s0, s1;
  b_strides(b, &s0, &s1);
  if (s0 == 1 && b->shape[0] > 1) return 1;
  if (s1 != 1 && b->shape[1] > 1) return 0;
  int64_t m = arg_dim(args, nargs, k->kplan.m_param, k->kplan.m_axis);
  return m > k->kmajor_min_m ? 2 : 0;
}

/* A launch of a form or its pre-kernel (sub: the K-major-B form or its transpose, the
 * materialize-once form or its pre-kernel) failed: the kernel's own argument checks say why where they
 * refuse the arguments (the form sees other parameters: B as [N, K], the workspace), else sub's message. */
static tilec_status form_failed(tilec_kernel *k, const tilec_kernel *sub, tilec_status st, const tilec_arg *args,
                                  int nargs) {
  char err[512] = "";
  if (st == TILEC_ERROR_LAUNCH && (!tl_api_map_args(k->f, args, nargs, k->targs, false, err, sizeof err) ||
                                   !tl_check_args(k->f, k->targs, nargs, err, sizeof err)))
    return tl_launch_error(k, TILEC_ERROR_LAUNCH, "%s", err);
  snprintf(k->err, sizeof k->err, "%s", sub->err);
  return st;
}

/* B's [K, N] view as the form's [N, K] parameter: route 1 B's own memory, route 2 the workspace
 * (rows of K padded to 16 bytes, so the form's TMA takes it) after the transpose kernel wrote it;
 * then the form, on `stream`. */
static tilec_status launch_kmajor(tilec_kernel *k, int route, const tilec_arg *args, int nargs, void *stream) {
  int32_t bp = k->kplan.b_param;
  const DLTensor *b = args[bp].u.tensor;
  int64_t kk = b->shape[0], n = b->shape[1];
  int64_t eb = (b->dtype.bits * b->dtype.lanes + 7) / 8;
  if (eb < 1) eb = 1;
  int64_t pitch = (kk * eb + 15) / 16 * 16 / eb; /* K's elements in a row of 16-byte multiples */
  DLTensor *bt = &k->kmajor_bt;
  *bt = *b;
  bt->shape = k->kmajor_bt_shape, bt->strides = k->kmajor_bt_strides;
  k->kmajor_bt_shape[0] = n, k->kmajor_bt_shape[1] = kk;
  tilec_status st;
  if (route == 1) {
    /* (one column, N = 1: its stride is never stepped; K's padded pitch keeps a tensor map valid) */
    int64_t s0, s1;
    b_strides(b, &s0, &s1);
    k->kmajor_bt_strides[0] = n > 1 ? s1 : pitch;
    k->kmajor_bt_strides[1] = 1;
  } else {
    if ((st = workspace(k, (size_t)n * (size_t)pitch * (size_t)eb, "K-major-B")) != TILEC_OK) return st;
    bt->data = (void *)(uintptr_t)k->ws, bt->byte_offset = 0;
    k->kmajor_bt_strides[0] = pitch, k->kmajor_bt_strides[1] = 1;
    k->transpose_args[0] = args[bp];
    k->transpose_args[1] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = bt};
    st = tl_launch(k->transpose, k->transpose_args, 2, NULL, stream);
    if (st != TILEC_OK) return form_failed(k, k->transpose, st, args, nargs);
  }
  memcpy(k->kmajor_args, args, sizeof *args * (size_t)nargs);
  k->kmajor_args[bp] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = bt};
  st = tl_launch(k->kmajor, k->kmajor_args, nargs, NULL, stream);
  return st == TILEC_OK ? st : form_failed(k, k->kmajor, st, args, nargs);
}

/* The materialize-once form (lib/hoist_operand.h): the workspace `hoisted` [K, N] of B's type (rows
 * padded to 16 bytes, so the form's TMA takes it whatever N), the pre-kernel writing B's tiles into it,
 * then the form reading them, both on `stream` with the caller's arguments and the workspace.  An
 * argument the pre-kernel or the form refuses is the kernel's own message where its checks refuse
 * it too. */
static int64_t hoist_dim(const tilec_arg *args, int nargs, int32_t param, int32_t axis, tl_dimspec d) {
  return param < 0 ? d.value : arg_dim(args, nargs, param, axis);
}

static tilec_status launch_hoist(tilec_kernel *k, const tilec_arg *args, int nargs, void *stream) {
  const tl_hoist_plan *h = &k->hplan;
  int64_t kk = hoist_dim(args, nargs, h->k_param, h->k_axis, h->k_dim);
  int64_t n = hoist_dim(args, nargs, h->n_param, h->n_axis, h->n_dim);
  if (kk < 0 || n < 0 || nargs != k->nparams) return tl_launch(k->hoist, args, nargs, NULL, stream); /* its checks say why */
  int64_t eb = tl_dtype_bytes((tl_dtype)h->dtype);
  int64_t pitch = (n * eb + 15) / 16 * 16 / eb;
  size_t bytes = (size_t)(kk > 0 ? kk : 1) * (size_t)(pitch > 0 ? pitch : 1) * (size_t)eb;
  tilec_status st = workspace(k, bytes, "materialize-once");
  if (st != TILEC_OK) return st;
  k->hoist_w_shape[0] = kk, k->hoist_w_shape[1] = n;
  k->hoist_w_strides[0] = pitch > 0 ? pitch : 1, k->hoist_w_strides[1] = 1;
  k->hoist_w = (DLTensor){.data = (void *)(uintptr_t)k->ws, .device = {kDLCUDA, k->dev->ordinal}, .ndim = 2,
                          .dtype = {kDLBfloat, 16, 1}, .shape = k->hoist_w_shape, .strides = k->hoist_w_strides};
  if (h->dtype == TL_F16) k->hoist_w.dtype = (DLDataType){kDLFloat, 16, 1};
  memcpy(k->hoist_args, args, sizeof *args * (size_t)nargs);
  k->hoist_args[nargs] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &k->hoist_w};
  tilec_kernel *sub = k->hoist_pre;
  st = tl_launch(sub, k->hoist_args, nargs + 1, NULL, stream);
  if (st == TILEC_OK) st = tl_launch(sub = k->hoist, k->hoist_args, nargs + 1, NULL, stream);
  return st == TILEC_OK ? st : form_failed(k, sub, st, args, nargs);
}

/* Whether this launch of k runs its materialize-once form (M at least hoist_min_m); the first launch
 * each way says so in the program log. */
static bool hoist_pick(tilec_kernel *k, const tilec_arg *args, int nargs) {
  const tl_hoist_plan *h = &k->hplan;
  int64_t m = arg_dim(args, nargs, h->m_param, h->m_axis);
  if (m < 0) return false;
  bool pick = m >= k->hoist_min_m;
  bool *said = pick ? &k->hoist_said_on : &k->hoist_said_off;
  if (!*said) {
    *said = true;
    const char *mn = k->f->syms.data[k->f->params.data[h->m_param].dims[h->m_axis].sym].name;
    char srcs[160] = "";
    for (int i = 0; i < h->nsrcs; i++)
      snprintf(srcs + strlen(srcs), sizeof srcs - strlen(srcs), "%s%s", i ? ", " : "", h->srcs[i]);
    if (pick)
      tl_sbuf_printf(&k->log_p->log,
                     "tilec: note: kernel '%s': %s %lld >= %lld (TILEC_HOIST_OPERAND_MIN_M): its materialize-once form "
                     "runs it: a pre-kernel computes B (from %s) once into the handle's workspace " TL_HOIST_PARAM
                     " [K, N], then the kernel %s with B a plain load of it (lib/hoist_operand.h)\n",
                     k->f->name, mn, (long long)m, (long long)k->hoist_min_m, srcs, h->const_m ? "at cutlass_gemm's tile" : "at its own tile");
    else
      tl_sbuf_printf(&k->log_p->log,
                     "tilec: note: kernel '%s': %s %lld < %lld (TILEC_HOIST_OPERAND_MIN_M): the kernel itself runs it "
                     "(B computed in its loop for each row of tiles; with few rows that costs less than the workspace's "
                     "round trip through memory and a second launch)\n",
                     k->f->name, mn, (long long)m, (long long)k->hoist_min_m);
  }
  return pick;
}

/* (kernel_handle.h) Called for launches with the kernel's own grid (a given grid runs the kernel
 * itself); the order is the K-major-B form (every launch of such a kernel), the materialize-once
 * form, the FlashAttention-3 form, the persistent attention form, the small-M forms. */
bool tl_route_to_form(tilec_kernel *k, const tilec_arg *args, int nargs, void *stream, tilec_status *st) {
  if (nargs <= 0 || !args) return false;
  if ((k->late || k->late_st != TILEC_OK) && needs_form(k, args, nargs)) {
    *st = tl_forms_settle(k); /* late forms: this launch may run one */
    if (*st != TILEC_OK) return true;
  }
  if (k->kmajor) {
    /* an 8-bit B [K, N]: the K-major-B form, picked by B's strides (lib/kmajor_b.h) */
    int route = kmajor_route(k, args, nargs);
    if (route) {
      *st = launch_kmajor(k, route, args, nargs, stream);
      return true;
    }
  }
  if (k->hoist && k->hoist_pre && hoist_pick(k, args, nargs)) {
    /* B computed once into the workspace, then the kernel reading it (lib/hoist_operand.h) */
    *st = launch_hoist(k, args, nargs, stream);
    return true;
  }
  int64_t s = k->attn ? arg_dim(args, nargs, k->attn_s_param, k->attn_s_axis) : -1;
  if (k->attn && s >= k->attn_min_s) {
    /* long sequences: the FlashAttention-3 form of the same source (lib/attn_form.h), its short form (O into K's
     * slot) where S is in that form's range */
    tilec_kernel *form = k->attn_short && s >= k->attn_short_min_s && s < k->attn_short_max_s ? k->attn_short : k->attn;
    *st = tl_launch(form, args, nargs, NULL, stream);
    if (*st != TILEC_OK) snprintf(k->err, sizeof k->err, "%s", form->err);
    return true;
  }
  if (k->apersist) {
    /* short sequences at D256: the persistent form of the same source (lib/attn_persist_form.h) */
    int64_t ps = arg_dim(args, nargs, k->apersist_s_param, k->apersist_s_axis);
    if (ps >= 0 && ps <= k->apersist_max_s) {
      *st = tl_launch(k->apersist, args, nargs, NULL, stream);
      if (*st != TILEC_OK) snprintf(k->err, sizeof k->err, "%s", k->apersist->err);
      return true;
    }
  }
  if (k->nforms) {
    /* small M: the form of the same source picked by M (docs/small_m.md), through this launcher */
    int i = form_for(k, args, nargs);
    if (i >= 0 && k->reduces[i]) {
      *st = launch_split(k, i, args, nargs, stream);
      return true;
    }
    if (i >= 0) {
      *st = tl_launch(k->forms[i], args, nargs, NULL, stream);
      if (*st != TILEC_OK) snprintf(k->err, sizeof k->err, "%s", k->forms[i]->err);
      return true;
    }
  }
  return false;
}
