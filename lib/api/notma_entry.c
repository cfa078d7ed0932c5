/* notma_entry.c: a TMA form's no-TMA form as a second entry of the program's PTX (option
 * tma-fallback=entry, the default of the CLI's .ptx / .cubin files; codegen.h TL_NOTMA_SUFFIX,
 * docs/cli.md "Two entries").  Appends, for each TMA form ENTRY of p->cg, the PTX of its no-TMA
 * entry ENTRY__notma (the kernel's TL_TMA_OFF form with ENTRY's parameters, its maps declared, never
 * read), which tl_codegen compiled beside the kernels (tl_codegen_opts.notma_entries: a module each,
 * on the codegen threads), to p->cg.ptx after every kernel, in the kernels' order, so that the first
 * entries' text is that of tma-fallback=form.
 * The loader's side (tilec_kernel_load_ptx of such a file, launches that fail the map test) is
 * tl_user_notma_launch in form_launch.c.
 * requires: p->cg compiled by stage_codegen (api.c) with notma_entries, inside the guard; keeps: the
 * first entries' text and p->cg.kernels; breaks: nothing (takes p->cg.notma_ptx's texts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_handle.h"

/* The name of a kernel of p's module or an entry of p->cg equal to name, or NULL. */
static const char *taken(tilec_program *p, const char *name) {
  for (int i = 0; i < p->module->funcs.len; i++)
    if (!strcmp(p->module->funcs.data[i]->name, name)) return p->module->funcs.data[i]->name;
  for (int i = 0; i < p->cg.nkernels; i++)
    if (p->cg.kernels[i].entry && !strcmp(p->cg.kernels[i].entry, name)) return p->cg.kernels[i].name;
  return NULL;
}

tilec_status tl_api_notma_entries(tilec_program *p) {
  double t0 = tl_now_ms();
  int nk = p->cg.nkernels, n = 0;
  const char **extra = tl_alloc(&p->ctx.arena, sizeof(char *) * (size_t)(nk ? nk : 1));
  int *of = tl_alloc(&p->ctx.arena, sizeof(int) * (size_t)(nk ? nk : 1)); /* extra[j] is kernel of[j]'s */
  for (int i = 0; i < nk; i++) {
    const tl_kernel_info *ki = &p->cg.kernels[i];
    if (!ki->tma_form) continue;
    char entry[256];
    if (snprintf(entry, sizeof entry, "%s" TL_NOTMA_SUFFIX, ki->entry) >= (int)sizeof entry) {
      tl_error(&p->ctx, TL_NOLOC, "kernel '%s': the entry name '%s' is too long for its no-TMA entry", ki->name, ki->entry);
      return TILEC_ERROR_UNSUPPORTED;
    }
    const char *other = taken(p, entry);
    if (other) {
      tl_error(&p->ctx, TL_NOLOC,
               "kernel '%s': its no-TMA entry would be named '%s' (option tma-fallback=entry: the entry run for tensors "
               "a tensor map cannot take), which is the name of kernel '%s' of this file; rename that kernel, or "
               "compile with --tma-fallback=inline (one entry with both paths) or --tma-fallback=form (the TMA entry alone)",
               ki->name, entry, other);
      return TILEC_ERROR_INPUT;
    }
    if (!p->cg.notma_ptx || !p->cg.notma_ptx[i]) {
      tl_error(&p->ctx, TL_NOLOC, "internal error: kernel '%s': codegen compiled no no-TMA entry", ki->name);
      return TILEC_ERROR_INTERNAL;
    }
    extra[n] = p->cg.notma_ptx[i];
    of[n++] = i;
  }
  if (!n) return TILEC_OK;
  /* one module of the kernels, then the no-TMA entries in the kernels' order */
  char *merged = tl_codegen_append_ptx(p->cg.ptx, nk, extra, n);
  if (!merged) {
    tl_error(&p->ctx, TL_NOLOC, "internal error: the no-TMA entries' PTX could not be appended");
    return TILEC_ERROR_INTERNAL;
  }
  /* each one's launch configuration, for a launcher of its own (docs/cli.md "Two entries"), after its
   * .globl line (the entries stand in that order, so one pass) */
  tl_sbuf out = {0};
  const char *from = merged;
  for (int j = 0; j < n; j++) {
    const tl_kernel_info *ki = &p->cg.kernels[of[j]], *nki = &p->cg.notma_kernels[of[j]];
    char globl[300];
    snprintf(globl, sizeof globl, "\t// .globl\t%s" TL_NOTMA_SUFFIX "\n", ki->entry);
    const char *at = strstr(from, globl);
    if (!at) continue;
    at += strlen(globl);
    tl_sbuf_putn(&out, from, (size_t)(at - from));
    tl_sbuf_printf(&out, "\t// " TL_NOTMA_NOTE " %s: %d threads, %d bytes of dynamic shared memory%s%s\n", ki->entry,
                   nki->threads, nki->smem_bytes, nki->persist ? ", persistent" : "", nki->cluster ? ", clusters of 2 CTAs" : "");
    from = at;
  }
  tl_sbuf_puts(&out, from);
  free(merged);
  for (int j = 0; j < n; j++) {
    free(p->cg.notma_ptx[of[j]]);
    p->cg.notma_ptx[of[j]] = NULL;
  }
  if (out.oom) {
    tl_sbuf_free(&out);
    tl_error(&p->ctx, TL_NOLOC, "internal error: the no-TMA entries' PTX could not be appended");
    return TILEC_ERROR_INTERNAL;
  }
  free(p->cg.ptx);
  p->cg.ptx = tl_sbuf_take(&out);
  if (p->opts.time_passes)
    tl_sbuf_printf(&p->log, "time codegen.notma-entries: %.3f ms built, %.3f ms appended (%d; their passes and PTX "
                   "on the codegen threads)\n", p->cg.ms_notma_build, tl_now_ms() - t0, n);
  return TILEC_OK;
}

/* ---- the loader's side: tilec_kernel_load_ptx of a file with a second entry ---------------------- */

tilec_kernel *tl_user_notma(tilec_kernel *k, tilec_status *st, char *err, size_t n) {
  tilec_program *p = k->p;
  char entry[sizeof k->meta.entry + sizeof TL_NOTMA_SUFFIX];
  snprintf(entry, sizeof entry, "%s" TL_NOTMA_SUFFIX, k->meta.entry);
  /* the launch configuration from p's own compile of that entry, as the first entry's comes from
   * p's compile (tilec_kernel_load_ptx): threads, shared memory, persistence, the parameters */
  tl_codegen_result one;
  *st = tl_api_codegen_notma_entry(p, k->f->name, entry, k->meta.ntma, &one);
  if (*st != TILEC_OK) {
    snprintf(err, n, "the program's compile of its no-TMA entry %s failed", entry);
    return NULL;
  }
  tl_cache_meta meta;
  *st = tl_kernel_meta(p, k->f, &one, &meta);
  tl_codegen_result_free(&one);
  if (*st != TILEC_OK) {
    snprintf(err, n, "no launch configuration for %s", entry);
    return NULL;
  }
  /* its maps: the TMA entry's, packed and left zero (maps_unread) */
  meta.ntma = k->meta.ntma;
  memcpy(meta.tma, k->meta.tma, sizeof meta.tma);
  const tl_cuda *cu;
  if (tl_rt_driver(&cu, err, n) != TL_OK || tl_rt_make_current(k->dev, err, n) != TL_OK) {
    *st = TILEC_ERROR_CUDA;
    return NULL;
  }
  CUfunction fn = NULL;
  CUresult r = cu->cuModuleGetFunction(&fn, k->owned_module, entry);
  if (r != CUDA_SUCCESS) {
    char t[200];
    snprintf(err, n, "cuModuleGetFunction(%s) of the PTX given failed: %s", entry, tl_rt_result_text(r, t, sizeof t));
    *st = TILEC_ERROR_CUDA;
    return NULL;
  }
  *st = tl_check_resources(p, k->f, k->dev, fn, &meta);
  if (*st != TILEC_OK) {
    snprintf(err, n, "%s does not fit the device (the program log says why)", entry);
    return NULL;
  }
  tilec_kernel *nk = tl_new_kernel_handle(p, k->f, k->dev, fn, &meta, "user-ptx (its no-TMA entry)", err, n);
  if (!nk) {
    *st = TILEC_ERROR_NOMEM;
    return NULL;
  }
  nk->maps_unread = true;
  return nk;
}
