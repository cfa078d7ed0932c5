/* explain.c: the resource facts --explain prints after codegen: per kernel the
 * launch configuration (threads, dynamic shared memory from tl_kernel_info)
 * and, where ptxas is installed, what `ptxas -v` says about the PTX
 * (registers, spills, stack frame, static shared memory).
 * requires: p compiled to TILEC_STAGE_PTX (p->cg.kernels, p->text[PTX]).
 * keeps: the program's state; only appends lines to p->log.  breaks: nothing;
 * a missing or failing ptxas is reported on the line, never as an error. */
#include "program.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>


/* ---- the parser of ptxas -v output ------------------------------------------------- */

/* Copy the text between the first pair of single quotes after `after` in
 * line [s, end) into buf; false when there is none. */
static bool quoted_after(const char *s, const char *end, const char *after, char *buf, size_t n) {
  const char *at = strstr(s, after);
  if (!at || at >= end) return false;
  const char *open = memchr(at, '\'', (size_t)(end - at));
  if (!open) return false;
  const char *close = memchr(open + 1, '\'', (size_t)(end - open - 1));
  if (!close) return false;
  size_t len = (size_t)(close - open - 1);
  if (len >= n) len = n - 1;
  memcpy(buf, open + 1, len);
  buf[len] = 0;
  return true;
}

/* The integer just before `unit` in [s, end) ("112 bytes stack frame" with
 * unit "bytes stack frame"); -1 when the unit is not there. */
static int64_t number_before(const char *s, const char *end, const char *unit) {
  size_t ulen = strlen(unit);
  for (const char *at = s; at + ulen <= end; at++) {
    if (memcmp(at, unit, ulen) != 0) continue;
    const char *d = at;
    while (d > s && d[-1] == ' ') d--;
    const char *digits_end = d;
    while (d > s && d[-1] >= '0' && d[-1] <= '9') d--;
    if (d == digits_end) continue;
    int64_t v = 0;
    for (; d < digits_end; d++) v = v * 10 + (*d - '0');
    return v;
  }
  return -1;
}

/* Name of the "Function properties for NAME" line [s, end) into buf. */
static bool properties_name(const char *s, const char *end, char *buf, size_t n) {
  static const char key[] = "Function properties for ";
  const char *at = strstr(s, key);
  if (!at || at >= end) return false;
  at += sizeof key - 1;
  const char *stop = at;
  while (stop < end && *stop != '\r' && *stop != ' ') stop++;
  size_t len = (size_t)(stop - at);
  if (len >= n) len = n - 1;
  memcpy(buf, at, len);
  buf[len] = 0;
  return len > 0;
}

static void clear_usage(tl_ptxas_usage *u) {
  memset(u, 0, sizeof *u);
  u->regs = -1;
  u->stack_bytes = u->spill_store_bytes = u->spill_load_bytes = -1;
  u->smem_static_bytes = 0;
}

/* ptxas prints, per entry:
 *   ptxas info    : Compiling entry function 'attn_fwd' for 'sm_90a'
 *   ptxas info    : Function properties for attn_fwd
 *       112 bytes stack frame, 108 bytes spill stores, 108 bytes spill loads
 *   ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 384 bytes cmem[0]
 * "Function properties" also comes for device functions (whose numbers are
 * not the entry's): only the block of the entry's own name counts. */
int tl_ptxas_parse_usage(const char *text, tl_ptxas_usage *out, int max) {
  int found = 0;
  tl_ptxas_usage *cur = NULL;  /* the entry being compiled, when stored */
  char props_for[128] = "";    /* the function whose properties come next */
  for (const char *s = text; s && *s;) {
    const char *end = strchr(s, '\n');
    if (!end) end = s + strlen(s);
    char name[128];
    if (strstr(s, "Compiling entry function") && strstr(s, "Compiling entry function") < end &&
        quoted_after(s, end, "Compiling entry function", name, sizeof name)) {
      cur = found < max ? &out[found] : NULL;
      found++;
      props_for[0] = 0;
      if (cur) {
        clear_usage(cur);
        snprintf(cur->entry, sizeof cur->entry, "%s", name);
        const char *arch_at = strstr(s, "' for ");
        if (arch_at && arch_at < end) quoted_after(arch_at + 1, end, "for", cur->arch, sizeof cur->arch);
      }
    } else if (properties_name(s, end, name, sizeof name)) {
      snprintf(props_for, sizeof props_for, "%s", name);
    } else if (cur && number_before(s, end, "bytes stack frame") >= 0) {
      if (!strcmp(props_for, cur->entry)) {
        cur->stack_bytes = number_before(s, end, "bytes stack frame");
        cur->spill_store_bytes = number_before(s, end, "bytes spill stores");
        cur->spill_load_bytes = number_before(s, end, "bytes spill loads");
      }
      props_for[0] = 0;
    } else if (cur && strstr(s, "Used ") && strstr(s, "Used ") < end) {
      int64_t regs = number_before(s, end, "registers");
      if (regs >= 0) cur->regs = (int)regs;
      int64_t smem = number_before(s, end, "bytes smem");
      if (smem >= 0) cur->smem_static_bytes = smem;
    }
    s = *end ? end + 1 : end;
  }
  return found;
}

/* ---- running ptxas -v ----------------------------------------------------------------- */

/* Run `ptxas -v --gpu-name ARCH -O<level> -o /dev/null` on the PTX; its output
 * (malloc'd) in *text.  On failure a short reason in why. */
static bool run_ptxas_verbose(tilec_program *p, const char *ptxas, const char *arch, char **text, char *why,
                              size_t nwhy) {
  *text = NULL;
  const char *tmp = getenv("TMPDIR");
  char dir[4096], ptx_path[4200], log_path[4200], opt_flag[8];
  snprintf(dir, sizeof dir, "%s/tilec-explain-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    snprintf(why, nwhy, "no temporary directory: %s", strerror(errno));
    return false;
  }
  snprintf(ptx_path, sizeof ptx_path, "%s/kernel.ptx", dir);
  snprintf(log_path, sizeof log_path, "%s/ptxas.log", dir);
  snprintf(opt_flag, sizeof opt_flag, "-O%d", p->opts.opt_level);
  bool ok = false;
  const char *ptx = p->text[TILEC_STAGE_PTX];
  if (!tl_api_write_file(ptx_path, ptx, strlen(ptx))) {
    snprintf(why, nwhy, "cannot write the PTX for ptxas: %s", strerror(errno));
  } else {
    char *argv[] = {(char *)ptxas, "-v", "--gpu-name", (char *)arch, opt_flag, "-o", "/dev/null", ptx_path, NULL};
    int wstatus;
    int rc = tl_api_run_logged(ptxas, argv, log_path, &wstatus);
    size_t len;
    if (tl_api_read_file(log_path, text, &len) != TILEC_OK) *text = NULL;
    if (rc != 0) snprintf(why, nwhy, "cannot run ptxas: %s", strerror(rc));
    else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) snprintf(why, nwhy, "ptxas -v failed");
    else if (!*text) snprintf(why, nwhy, "no ptxas output");
    else ok = true;
  }
  unlink(ptx_path);
  unlink(log_path);
  rmdir(dir);
  return ok;
}

/* ---- the resource lines ------------------------------------------------------------------ */

static void put_usage(tl_sbuf *b, const tl_ptxas_usage *u) {
  if (u->regs >= 0) tl_sbuf_printf(b, "%d regs, ", u->regs);
  if (u->spill_store_bytes >= 0 && u->spill_load_bytes >= 0) {
    int64_t spills = u->spill_store_bytes + u->spill_load_bytes;
    tl_sbuf_printf(b, "%lld B spills", (long long)spills);
    if (spills > 0)
      tl_sbuf_printf(b, " (%lld B stores, %lld B loads)", (long long)u->spill_store_bytes,
                     (long long)u->spill_load_bytes);
    tl_sbuf_puts(b, ", ");
  }
  if (u->stack_bytes > 0) tl_sbuf_printf(b, "%lld B stack frame, ", (long long)u->stack_bytes);
}

void tl_explain_resources(tilec_program *p) {
  const char *arch = p->opts.arch ? p->opts.arch : "sm_90a";
  const char *ptx = p->text[TILEC_STAGE_PTX];
  if (!ptx || p->cg.nkernels <= 0) return;
  char ptxas[4096], why[256] = "";
  char *text = NULL;
  tl_ptxas_usage small[8];
  tl_ptxas_usage *usage = small;
  int nusage = 0;
  bool have_ptxas = tl_api_find_ptxas(ptxas, sizeof ptxas);
  if (!have_ptxas) snprintf(why, sizeof why, "no ptxas: registers unknown");
  else if (run_ptxas_verbose(p, ptxas, arch, &text, why, sizeof why)) {
    int want = tl_ptxas_parse_usage(text, NULL, 0);
    if (want > 8) usage = tl_alloc(&p->ctx.arena, sizeof *usage * (size_t)want);
    nusage = tl_ptxas_parse_usage(text, usage, want);
  }
  free(text);
  for (int i = 0; i < p->cg.nkernels; i++) {
    const tl_kernel_info *k = &p->cg.kernels[i];
    const tl_ptxas_usage *u = NULL;
    for (int j = 0; j < nusage && !u; j++)
      if (k->entry && !strcmp(usage[j].entry, k->entry)) u = &usage[j];
    tl_sbuf *b = &p->log;
    tl_sbuf_printf(b, "resources: kernel '%s'", k->name);
    if (k->entry && strcmp(k->entry, k->name) != 0) tl_sbuf_printf(b, " (entry '%s')", k->entry);
    tl_sbuf_printf(b, ": %d threads, ", k->threads);
    if (u) put_usage(b, u);
    tl_sbuf_printf(b, "%d B shared (dynamic)", k->smem_bytes);
    if (u && u->smem_static_bytes > 0) tl_sbuf_printf(b, " + %lld B (static)", (long long)u->smem_static_bytes);
    if (u) tl_sbuf_printf(b, ", %s (ptxas -v)\n", u->arch[0] ? u->arch : arch);
    else if (why[0]) tl_sbuf_printf(b, ", %s (%s)\n", arch, why);
    else tl_sbuf_printf(b, ", %s (ptxas -v did not report this entry)\n", arch);
    if (k->tma_note) tl_sbuf_printf(b, "tma: kernel '%s': %s\n", k->name, k->tma_note);
    if (k->epi_note) tl_sbuf_printf(b, "epilogue: kernel '%s': %s\n", k->name, k->epi_note);
  }
}
