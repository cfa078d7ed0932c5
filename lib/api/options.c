/* options.c: the tilec_options handle (include/tilec.h): create / destroy, -D defines, the arch,
 * optimization level, line info and pipeline setters, and tilec_options_set's keys, each value
 * checked when it is set (a bad one is TILEC_ERROR_USAGE and leaves the option as it was).
 * requires: nothing; keeps: every string a heap copy owned by the handle (programs deep-copy
 * them, api.c); breaks: nothing. */
#include "program.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *heap_strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Replace *slot by a heap copy of value (NULL clears it). */
static tilec_status set_string(char **slot, const char *value) {
  char *copy = NULL;
  if (value && !(copy = heap_strdup(value))) return TILEC_ERROR_NOMEM;
  free(*slot);
  *slot = copy;
  return TILEC_OK;
}

tilec_status tilec_options_create(tilec_options **out) {
  if (!out) return TILEC_ERROR_USAGE;
  *out = NULL;
  tilec_options *o = calloc(1, sizeof *o);
  if (!o) return TILEC_ERROR_NOMEM;
  o->opt_level = 3;
  o->line_info = 1;
  o->max_errors = 20;
  *out = o;
  return TILEC_OK;
}

void tilec_options_destroy(tilec_options *o) {
  if (!o) return;
  for (int i = 0; i < o->ndefines; i++) free((char *)o->defines[i].name);
  free(o->defines);
  free(o->arch);
  free(o->pipeline);
  free(o->print_after);
  free(o->disable_pass);
  free(o->entry_name);
  free(o->kernel);
  free(o->kmajor_b);
  free(o->ws);
  free(o->attn_ws);
  free(o->attn_persist);
  free(o->attn_sched);
  free(o->attn_o_slot_k);
  free(o);
}

static bool is_identifier(const char *s) {
  if (!s || !*s) return false;
  for (const char *c = s; *c; c++) {
    bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';
    bool digit = *c >= '0' && *c <= '9';
    if (!alpha && !(digit && c != s)) return false;
  }
  return true;
}

tilec_status tilec_options_define(tilec_options *o, const char *name, int64_t value) {
  if (!o || !is_identifier(name)) return TILEC_ERROR_USAGE;
  for (int i = 0; i < o->ndefines; i++)
    if (strcmp(o->defines[i].name, name) == 0) {
      o->defines[i].value = value;
      return TILEC_OK;
    }
  tl_define *grown = realloc(o->defines, sizeof *grown * (size_t)(o->ndefines + 1));
  if (!grown) return TILEC_ERROR_NOMEM;
  o->defines = grown;
  char *copy = heap_strdup(name);
  if (!copy) return TILEC_ERROR_NOMEM;
  o->defines[o->ndefines].name = copy;
  o->defines[o->ndefines].value = value;
  o->ndefines++;
  return TILEC_OK;
}

/* "sm_" followed by two or three digits and an optional "a". */
bool tl_api_is_arch_name(const char *s) {
  if (strncmp(s, "sm_", 3) != 0) return false;
  const char *d = s + 3;
  int ndigits = 0;
  while (d[ndigits] >= '0' && d[ndigits] <= '9') ndigits++;
  if (ndigits < 2 || ndigits > 3) return false;
  const char *rest = d + ndigits;
  return *rest == 0 || (rest[0] == 'a' && rest[1] == 0);
}

tilec_status tilec_options_set_arch(tilec_options *o, const char *arch) {
  if (!o || (arch && !tl_api_is_arch_name(arch))) return TILEC_ERROR_USAGE;
  return set_string(&o->arch, arch);
}

tilec_status tilec_options_set_opt_level(tilec_options *o, int level) {
  if (!o || level < 0 || level > 3) return TILEC_ERROR_USAGE;
  o->opt_level = level;
  return TILEC_OK;
}

tilec_status tilec_options_set_line_info(tilec_options *o, int on) {
  if (!o) return TILEC_ERROR_USAGE;
  o->line_info = on != 0;
  return TILEC_OK;
}

int tl_api_pipeline_code(const char *name) {
  if (!name) return TL_PIPE_AUTO;
  if (strcmp(name, "simple") == 0) return TL_PIPE_SIMPLE;
  if (strcmp(name, "multistage") == 0) return TL_PIPE_MULTISTAGE;
  if (strcmp(name, "cutlass") == 0) return TL_PIPE_CUTLASS;
  return -1;
}

tilec_status tilec_options_set_pipeline(tilec_options *o, const char *pipeline) {
  if (!o || tl_api_pipeline_code(pipeline) < 0) return TILEC_ERROR_USAGE;
  return set_string(&o->pipeline, pipeline);
}

/* "1"/"0", "on"/"off", "true"/"false"; -1 for anything else. */
static int parse_bool(const char *v) {
  if (!v) return -1;
  if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "true")) return 1;
  if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "false")) return 0;
  return -1;
}

static bool parse_int(const char *v, long lo, long hi, long *out) {
  if (!v || !*v) return false;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end || x < lo || x > hi) return false;
  *out = x;
  return true;
}

/* Every key tilec_options_set takes, what it takes in words (for messages: the Python package's
 * errors, docs) and a value it accepts (the unit test sets each, then a bad one where the key checks
 * its value).  One table: a key added to tilec_options_set without a row here fails that test. */
static const struct {
  const char *key, *takes, *example;
} option_keys[] = {
    {"arch", "sm_80, sm_86, sm_89, sm_90 or sm_90a", "sm_90a"},
    {"opt-level", "0..3", "3"},
    {"line-info", "a bool", "1"},
    {"pipeline", "simple, multistage or cutlass", "cutlass"},
    {"warps", "1, 2, 4, 8 or 16 (0: the kernel's own)", "4"},
    {"stages", "1..8 (0: the kernel's own)", "3"},
    {"maxnreg", "24..255 (0: none)", "128"},
    {"fp8-acc", "promote or fast", "fast"},
    {"tma-fallback", "form, inline, entry or notma", "entry"},
    {"cluster", "1x1, 2x1 or 1x2", "2x1"},
    {"assembler", "auto, ptxas, driver or link", "ptxas"},
    {"max-errors", "0..1000000", "20"},
    {"time-passes", "a bool", "0"},
    {"verify-each", "a bool", "1"},
    {"explain", "a bool", "1"},
    {"print-after", "a pass name or all", "all"},
    {"disable-pass", "pass names, comma-separated", "load_ahead"},
    {"entry-name", "an identifier", "k"},
    {"kernel", "an identifier", "k"},
    {"split-k", "partial or reduce", "partial"},
    {"hoist-operand", "form or pre", "pre"},
    {"kmajor-b", "a parameter name", "B"},
    {"ws", "off, coop or pingpong", "pingpong"},
    {"attn-ws", "off, producer, pingpong or fa3", "fa3"},
    {"attn-persist", "0..3", "1"},
    {"attn-sched", "0, 1 or 2", "1"},
    {"attn-o-slot-k", "0 or 1", "1"},
};

const char *tilec_options_key(int i) {
  return i >= 0 && i < (int)(sizeof option_keys / sizeof option_keys[0]) ? option_keys[i].key : NULL;
}

static int option_row(const char *key) {
  for (int i = 0; key && tilec_options_key(i); i++)
    if (!strcmp(option_keys[i].key, key)) return i;
  return -1;
}

const char *tilec_options_takes(const char *key) {
  int i = option_row(key);
  return i < 0 ? NULL : option_keys[i].takes;
}

const char *tilec_options_example(const char *key) {
  int i = option_row(key);
  return i < 0 ? NULL : option_keys[i].example;
}

tilec_status tilec_options_set(tilec_options *o, const char *key, const char *value) {
  if (!o || !key) return TILEC_ERROR_USAGE;
  long n;
  int b;
  if (!strcmp(key, "print-after")) {
    /* The pass name is checked at compile time against the registry. */
    if (value && !*value) return TILEC_ERROR_USAGE;
    return set_string(&o->print_after, value);
  }
  if (!strcmp(key, "disable-pass")) {
    /* NULL or "" = none; the names are checked at compile time. */
    return set_string(&o->disable_pass, value && *value ? value : NULL);
  }
  if (!strcmp(key, "split-k")) {
    int role = !value || !*value ? 0 : !strcmp(value, "partial") ? 1 : !strcmp(value, "reduce") ? 2 : -1;
    if (role < 0) return TILEC_ERROR_USAGE;
    o->split_k_role = role;
    return TILEC_OK;
  }
  if (!strcmp(key, "hoist-operand")) {
    int role = !value || !*value ? 0 : !strcmp(value, "form") ? 1 : !strcmp(value, "pre") ? 2 : -1;
    if (role < 0) return TILEC_ERROR_USAGE;
    o->hoist_operand_role = role;
    return TILEC_OK;
  }
  if (!strcmp(key, "kmajor-b")) {
    if (value && *value && !is_identifier(value)) return TILEC_ERROR_USAGE;
    return set_string(&o->kmajor_b, value && *value ? value : NULL);
  }
  if (!strcmp(key, "ws")) {
    /* a wgmma GEMM's warp-specialized schedule (route_pipeline; the values of TILEC_WS); NULL or "" = unset */
    if (value && *value && strcmp(value, "off") && strcmp(value, "coop") && strcmp(value, "pingpong"))
      return TILEC_ERROR_USAGE;
    return set_string(&o->ws, value && *value ? value : NULL);
  }
  if (!strcmp(key, "attn-ws")) {
    /* wgmma attention's warp-specialized form (route_pipeline); NULL or "" = unset */
    if (value && *value && strcmp(value, "off") && strcmp(value, "producer") && strcmp(value, "pingpong") &&
        strcmp(value, "fa3"))
      return TILEC_ERROR_USAGE;
    return set_string(&o->attn_ws, value && *value ? value : NULL);
  }
  if (!strcmp(key, "attn-sched")) {
    /* a causal fa3 kernel's tiles from the counter (codegen attn_sched.c; the values of TILEC_ATTN_SCHED); NULL or
     * "" = unset */
    if (value && *value && (value[0] < '0' || value[0] > '2' || value[1])) return TILEC_ERROR_USAGE;
    return set_string(&o->attn_sched, value && *value ? value : NULL);
  }
  if (!strcmp(key, "attn-o-slot-k")) {
    /* fa3's O through the last stage's K slot (codegen emit_o_slot.c; the values of TILEC_ATTN_O_SLOT_K); NULL or
     * "" = unset */
    if (value && *value && (value[0] < '0' || value[0] > '1' || value[1])) return TILEC_ERROR_USAGE;
    return set_string(&o->attn_o_slot_k, value && *value ? value : NULL);
  }
  if (!strcmp(key, "attn-persist")) {
    /* wgmma attention without a producer made persistent (route_pipeline; the values of
     * TILEC_ATTN_PERSIST); NULL or "" = unset */
    if (value && *value && (value[0] < '0' || value[0] > '3' || value[1])) return TILEC_ERROR_USAGE;
    return set_string(&o->attn_persist, value && *value ? value : NULL);
  }
  if (!strcmp(key, "entry-name")) {
    if (value && !is_identifier(value)) return TILEC_ERROR_USAGE;
    return set_string(&o->entry_name, value);
  }
  if (!strcmp(key, "kernel")) {
    if (value && !is_identifier(value)) return TILEC_ERROR_USAGE;
    return set_string(&o->kernel, value);
  }
  if (!strcmp(key, "time-passes") || !strcmp(key, "verify-each") || !strcmp(key, "explain") ||
      !strcmp(key, "line-info")) {
    if ((b = parse_bool(value)) < 0) return TILEC_ERROR_USAGE;
    if (!strcmp(key, "time-passes")) o->time_passes = b;
    else if (!strcmp(key, "verify-each")) o->verify_each = b;
    else if (!strcmp(key, "explain")) o->explain = b;
    else o->line_info = b;
    return TILEC_OK;
  }
  if (!strcmp(key, "max-errors")) {
    if (!parse_int(value, 0, 1000000, &n)) return TILEC_ERROR_USAGE;
    o->max_errors = (int)n;
    return TILEC_OK;
  }
  if (!strcmp(key, "opt-level")) {
    if (!parse_int(value, 0, 3, &n)) return TILEC_ERROR_USAGE;
    o->opt_level = (int)n;
    return TILEC_OK;
  }
  if (!strcmp(key, "warps") || !strcmp(key, "stages")) {
    /* the ranges of the @warps / @stages attributes; NULL or "0" = unset */
    bool warps = !strcmp(key, "warps");
    n = 0;
    if (value && !parse_int(value, 0, warps ? 16 : 8, &n)) return TILEC_ERROR_USAGE;
    if (warps && (n & (n - 1)) != 0) return TILEC_ERROR_USAGE;
    if (warps) o->warps = (int)n;
    else o->stages = (int)n;
    return TILEC_OK;
  }
  if (!strcmp(key, "maxnreg")) {
    /* the range of the @maxnreg attribute; NULL or "0" = unset */
    n = 0;
    if (value && !parse_int(value, 0, 255, &n)) return TILEC_ERROR_USAGE;
    if (n != 0 && n < 24) return TILEC_ERROR_USAGE;
    o->maxnreg = (int)n;
    return TILEC_OK;
  }
  if (!strcmp(key, "assembler")) {
    /* who makes the machine code at load (jit.c); NULL = auto */
    if (!value || !strcmp(value, "auto")) o->assembler = TL_ASM_AUTO;
    else if (!strcmp(value, "ptxas")) o->assembler = TL_ASM_PTXAS;
    else if (!strcmp(value, "driver")) o->assembler = TL_ASM_DRIVER;
    else if (!strcmp(value, "link")) o->assembler = TL_ASM_LINK;
    else return TILEC_ERROR_USAGE;
    return TILEC_OK;
  }
  if (!strcmp(key, "cluster")) {
    /* thread-block clusters of the cutlass GEMM (docs/pipelines.md "Clusters"); NULL = unset */
    if (!value) o->cluster = TL_CLUSTER_UNSET;
    else if (!strcmp(value, "1x1")) o->cluster = TL_CLUSTER_1X1;
    else if (!strcmp(value, "2x1")) o->cluster = TL_CLUSTER_2X1;
    else if (!strcmp(value, "1x2")) o->cluster = TL_CLUSTER_1X2;
    else return TILEC_ERROR_USAGE;
    return TILEC_OK;
  }
  if (!strcmp(key, "fp8-acc")) {
    if (!value || (strcmp(value, "promote") && strcmp(value, "fast"))) return TILEC_ERROR_USAGE;
    o->fp8_acc_fast = !strcmp(value, "fast");
    return TILEC_OK;
  }
  if (!strcmp(key, "tma-fallback")) {
    /* kernels fed by TMA: "form" (default) = the TMA path alone, the launcher runs the kernel's
     * no-TMA form for tensors a map cannot take (an AOT launcher embeds both); "inline" = both paths in
     * one kernel; "entry" = the TMA form and, as a second entry of the PTX, its no-TMA form (the
     * CLI's .ptx / .cubin files, codegen.h TL_NOTMA_SUFFIX); "notma" = the no-TMA form alone */
    if (!value || !strcmp(value, "form")) o->tma_fallback = TL_TMA_FALLBACK_FORM;
    else if (!strcmp(value, "inline")) o->tma_fallback = TL_TMA_FALLBACK_INLINE;
    else if (!strcmp(value, "entry")) o->tma_fallback = TL_TMA_FALLBACK_ENTRY;
    else if (!strcmp(value, "notma")) o->tma_fallback = TL_TMA_FALLBACK_NOTMA; /* (TL_TMA_OFF) */
    else return TILEC_ERROR_USAGE;
    return TILEC_OK;
  }
  if (!strcmp(key, "arch")) return tilec_options_set_arch(o, value);
  if (!strcmp(key, "pipeline")) return tilec_options_set_pipeline(o, value);
  return TILEC_ERROR_USAGE;
}
