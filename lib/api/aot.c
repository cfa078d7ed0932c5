/* aot.c: tilec_program_emit_c (include/tilec.h, docs/aot.md): a C launcher
 * per kernel of a program, as a header and a source that need neither
 * libtilec nor LLVM at run time: the cubin (ptxas, where found) and the PTX
 * embedded, libcuda dlopen'd and its entry points taken through
 * cuGetProcAddress (runtime/loader.c's way), the argument checks of a JIT
 * launch (lib/interp.c tl_check_args), the grid clause translated to C
 * integer code with the interpreter's semantics (wrapping, x / 0 = 0) and its `require` checks, the
 * ABI packing of runtime/pack.c and the tensor maps of tl_tma_encode; a TMA
 * form's no-TMA form embedded as a second image, run where the map test fails
 * (docs/aot.md "Two images").
 * requires: p compiles to PTX; keeps: p's texts (it only compiles further;
 * the no-TMA forms are compiled aside); breaks: nothing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "runtime.h"
#include "require.h"

#include "version.h"

static bool is_ident(const char *s) {
  if (!s || !*s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
  for (; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

static const tl_kernel_info *info_of(const tl_codegen_result *cg, const char *name) {
  for (int i = 0; i < cg->nkernels; i++)
    if (cg->kernels[i].name && !strcmp(cg->kernels[i].name, name)) return &cg->kernels[i];
  return NULL;
}

/* The C type a scalar parameter is passed as, and how it is packed (pack.c). */
static const char *scalar_ctype(tl_dtype dt) {
  if (tl_dtype_is_float(dt)) return "float";
  return dt == TL_I64 ? "int64_t" : "int32_t";
}

static void emit_bytes(tl_sbuf *b, const char *name, const unsigned char *data, size_t n, bool nul) {
  tl_sbuf_printf(b, "static const unsigned char %s[%zu] = {", name, n + (nul ? 1 : 0) + (n == 0 && !nul));
  size_t total = n + (nul ? 1 : 0);
  for (size_t i = 0; i < total; i++) {
    if (i % 20 == 0) tl_sbuf_puts(b, "\n ");
    tl_sbuf_printf(b, "%u,", i < n ? data[i] : 0u);
  }
  if (total == 0) tl_sbuf_puts(b, "0");
  tl_sbuf_puts(b, "\n};\n");
}

/* The parameter p of f (by value id) or -1. */
static int param_of_value(const tl_func *f, int32_t v) {
  for (int i = 0; i < f->params.len; i++)
    if (f->params.data[i].value == v) return i;
  return -1;
}

static const char *dtype_enum(tl_dtype dt) {
  switch (dt) {
  case TL_I1: return "1";
  case TL_I8: return "8";
  case TL_I16: return "16";
  case TL_I32: return "32";
  case TL_U8: return "-8";
  default: return "64";
  }
}

/* A `require` of the grid region (docs/language.md "Launch-time checks"): a false condition returns
 * NAME_ERROR_LAUNCH with require.c's diagnostic in NAME_last_error(), the values of its shape
 * symbols and scalar parameters printed by the generated code. */
static void emit_require(tl_sbuf *b, const char *pfx, const tl_func *f, const tl_op *op) {
  tl_require_name names[TL_REQ_MAX_NAMES];
  const char *vals[TL_REQ_MAX_NAMES];
  char consts[TL_REQ_MAX_NAMES][24];
  int nn = tl_require_names(f, op->req_text, names, TL_REQ_MAX_NAMES);
  for (int i = 0; i < nn; i++) {
    const tl_param *pa = names[i].param >= 0 ? &f->params.data[names[i].param] : NULL;
    if (names[i].kind == TL_REQ_CONST) {
      snprintf(consts[i], sizeof consts[i], "%lld", (long long)names[i].value);
      vals[i] = consts[i];
    } else {
      vals[i] = pa && names[i].kind == TL_REQ_PARAM && tl_dtype_is_float((tl_dtype)pa->dtype) ? "\x02" : "\x01";
    }
  }
  char text[1024];
  tl_require_format(f, op, names, vals, nn, text, sizeof text);
  int pi = param_of_value(f, op->opnd[0]);
  if (pi >= 0) tl_sbuf_printf(b, "  if (!%s) return %s_fail(%s_ERROR_LAUNCH, \"", f->params.data[pi].name, pfx, pfx);
  else tl_sbuf_printf(b, "  if (!tl_v%d) return %s_fail(%s_ERROR_LAUNCH, \"", op->opnd[0], pfx, pfx);
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == 1) tl_sbuf_puts(b, "%lld");
    else if (*c == 2) tl_sbuf_puts(b, "%g");
    else if (*c == '%') tl_sbuf_puts(b, "%%");
    else if (*c == '"' || *c == '\\' || *c == '?') tl_sbuf_printf(b, "\\%c", *c); /* ('?': no "??/" trigraph, -std=c11) */
    else if (*c == '\n') tl_sbuf_puts(b, "\\n");
    else if (*c < 0x20 || *c >= 0x7f) tl_sbuf_printf(b, "\\%03o", *c);
    else tl_sbuf_printf(b, "%c", *c);
  }
  tl_sbuf_puts(b, "\"");
  for (int i = 0; i < nn; i++) {
    const tl_param *pa = names[i].param >= 0 ? &f->params.data[names[i].param] : NULL;
    if (!pa || names[i].kind == TL_REQ_CONST) continue;
    if (names[i].kind == TL_REQ_SYM) tl_sbuf_printf(b, ", (long long)%s_shape[%d]", pa->name, names[i].axis);
    else if (tl_dtype_is_float((tl_dtype)pa->dtype)) tl_sbuf_printf(b, ", (double)%s", pa->name);
    else tl_sbuf_printf(b, ", (long long)%s", pa->name);
  }
  tl_sbuf_puts(b, ");\n");
}

/* The grid region as C statements ending in g[0..2] = ...; false + err when an
 * op is not an integer scalar op. */
static bool emit_grid(tl_sbuf *b, const char *pfx, const tl_func *f, char *err, size_t n) {
  for (int i = 0; i < f->grid.ops.len; i++) {
    const tl_op *op = &f->ops.data[f->grid.ops.data[i]];
    if (op->flags & TL_OPF_DEAD) continue;
    if (op->opc == TL_OP_yield) {
      if (op->nopnd < 1 || op->nopnd > 3) {
        snprintf(err, n, "kernel %s: the grid yields %d values", f->name, op->nopnd);
        return false;
      }
      for (int d = 0; d < op->nopnd; d++) {
        int pi = param_of_value(f, op->opnd[d]);
        if (pi >= 0) tl_sbuf_printf(b, "  tl_g[%d] = %s_wrap((int64_t)%s, %s);\n", d, pfx, f->params.data[pi].name,
                                    dtype_enum((tl_dtype)f->params.data[pi].dtype));
        else tl_sbuf_printf(b, "  tl_g[%d] = tl_v%d;\n", d, op->opnd[d]);
      }
      return true;
    }
    if (op->opc == TL_OP_require) {
      emit_require(b, pfx, f, op);
      continue;
    }
    if (op->nres != 1) goto unsupported;
    const tl_value *r = &f->values.data[op->res[0]];
    if (r->type.kind != TL_KIND_SCALAR || !tl_dtype_is_int((tl_dtype)r->type.dtype)) goto unsupported;
    const char *wr = dtype_enum((tl_dtype)r->type.dtype);
    char a[3][48];
    for (int k = 0; k < op->nopnd && k < 3; k++) {
      int32_t v = op->opnd[k];
      const tl_value *ov = &f->values.data[v];
      int pi = param_of_value(f, v);
      if (pi >= 0 && !f->params.data[pi].is_tensor)
        snprintf(a[k], sizeof a[k], "%s_wrap((int64_t)%s, %s)", pfx, f->params.data[pi].name,
                 dtype_enum((tl_dtype)f->params.data[pi].dtype));
      else snprintf(a[k], sizeof a[k], "tl_v%d", v);
      if (op->opc != TL_OP_dim && (ov->type.kind != TL_KIND_SCALAR || !tl_dtype_is_int((tl_dtype)ov->type.dtype)))
        goto unsupported;
    }
    int bits = tl_dtype_bits((tl_dtype)f->values.data[op->nopnd ? op->opnd[0] : op->res[0]].type.dtype);
    bool sgn = tl_dtype_is_signed((tl_dtype)f->values.data[op->nopnd ? op->opnd[0] : op->res[0]].type.dtype);
    switch (op->opc) {
    case TL_OP_const:
      tl_sbuf_printf(b, "  int64_t tl_v%d = %s_wrap(INT64_C(%lld), %s);\n", op->res[0], pfx, (long long)op->ival, wr);
      break;
    case TL_OP_dim: {
      int pi = param_of_value(f, op->opnd[0]);
      if (pi < 0 || !f->params.data[pi].is_tensor || op->axis < 0 || op->axis >= f->params.data[pi].rank)
        goto unsupported;
      tl_sbuf_printf(b, "  int64_t tl_v%d = %s_wrap(%s_shape[%d], %s);\n", op->res[0], pfx, f->params.data[pi].name,
                     op->axis, wr);
      break;
    }
    case TL_OP_add: case TL_OP_sub: case TL_OP_mul: case TL_OP_div: case TL_OP_rem: case TL_OP_min:
    case TL_OP_max: case TL_OP_and: case TL_OP_or: case TL_OP_xor: case TL_OP_shl: case TL_OP_shr:
      tl_sbuf_printf(b, "  int64_t tl_v%d = %s_wrap(%s_binop('%c', %d, %d, %s, %s), %s);\n", op->res[0], pfx, pfx,
                     "+-*/%<>&|^LR"[op->opc == TL_OP_add ? 0 : op->opc == TL_OP_sub ? 1 : op->opc == TL_OP_mul ? 2
                                    : op->opc == TL_OP_div ? 3 : op->opc == TL_OP_rem ? 4 : op->opc == TL_OP_min ? 5
                                    : op->opc == TL_OP_max ? 6 : op->opc == TL_OP_and ? 7 : op->opc == TL_OP_or ? 8
                                    : op->opc == TL_OP_xor ? 9 : op->opc == TL_OP_shl ? 10 : 11],
                     bits, sgn, a[0], a[1], wr);
      break;
    case TL_OP_cmp: {
      static const char *const rel[] = {"==", "!=", "<", "<=", ">", ">="};
      if (op->kind < 0 || op->kind > 5) goto unsupported;
      tl_sbuf_printf(b, "  int64_t tl_v%d = %s %s %s;\n", op->res[0], a[0], rel[op->kind], a[1]);
      break;
    }
    case TL_OP_select:
      tl_sbuf_printf(b, "  int64_t tl_v%d = %s ? %s : %s;\n", op->res[0], a[0], a[1], a[2]);
      break;
    case TL_OP_neg:
      tl_sbuf_printf(b, "  int64_t tl_v%d = %s_wrap((int64_t)(0 - (uint64_t)%s), %s);\n", op->res[0], pfx, a[0], wr);
      break;
    case TL_OP_not:
      if (r->type.dtype == TL_I1) tl_sbuf_printf(b, "  int64_t tl_v%d = !%s;\n", op->res[0], a[0]);
      else tl_sbuf_printf(b, "  int64_t tl_v%d = %s_wrap(~%s, %s);\n", op->res[0], pfx, a[0], wr);
      break;
    case TL_OP_abs:
      tl_sbuf_printf(b, "  int64_t tl_v%d = %s_wrap(%s < 0 ? (int64_t)(0 - (uint64_t)%s) : %s, %s);\n", op->res[0], pfx,
                     a[0], a[0], a[0], wr);
      break;
    case TL_OP_cast:
      tl_sbuf_printf(b, "  int64_t tl_v%d = %s_wrap(%s, %s);\n", op->res[0], pfx, a[0], wr);
      break;
    default:
      goto unsupported;
    }
    continue;
  unsupported:
    snprintf(err, n,
             "kernel %s: its grid clause uses '%s' on a non-integer value; the AOT launcher computes grids with "
             "integer ops only",
             f->name, tl_opinfo_table[op->opc].name);
    return false;
  }
  snprintf(err, n, "kernel %s: the grid region has no yield", f->name);
  return false;
}

/* A parameter name the generated C cannot use as is: a C keyword, the stream
 * argument, or the generator's own tl_ names (NULL when fine). */
static const char *bad_c_name(const char *name) {
  static const char *const words[] = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "stream",
      "bool", "true", "false", "NULL", "main"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (!strcmp(name, words[i])) return "is a C keyword or the stream argument";
  if (!strncmp(name, "tl_", 3) || name[0] == '_') return "starts with tl_ or _ (reserved by the generated code)";
  return NULL;
}

/* One kernel's declaration (no trailing ';'). */
static void emit_signature(tl_sbuf *b, const char *pfx, const tl_func *f) {
  tl_sbuf_printf(b, "int %s_%s(", pfx, f->name);
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *pa = &f->params.data[i];
    if (pa->is_tensor)
      tl_sbuf_printf(b, "%sconst void *%s, const int64_t *%s_shape, const int64_t *%s_strides", i ? ", " : "",
                     pa->name, pa->name, pa->name);
    else tl_sbuf_printf(b, "%s%s %s", i ? ", " : "", scalar_ctype((tl_dtype)pa->dtype), pa->name);
  }
  tl_sbuf_printf(b, "%svoid *stream)", f->params.len ? ", " : "");
}

/* A TMA form's no-TMA form (TL_TMA_OFF), embedded as an image of its own. */
typedef struct notma_image {
  const char *name;     /* the kernel's */
  int index;            /* in PFX_notma */
  tl_kernel_info ki;
  char *ptx, *cubin;    /* malloc'd; cubin NULL without ptxas */
  size_t cubin_size;
  /* its ptxas, on a thread of its own: */
  const char *arch;
  int opt_level;
  pthread_t thread;
  bool started;
  tilec_status st;
  tl_sbuf log, why;
} notma_image;

static void *notma_ptxas(void *arg) {
  notma_image *nt = arg;
  nt->st = tl_api_ptxas(nt->ptx, nt->arch, nt->opt_level, &nt->cubin, &nt->cubin_size, &nt->log, &nt->why);
  return NULL;
}

/* s as text inside a C block comment: "*" "/" would end it, a control character would break its line. */
static const char *comment_text(const char *s, char *buf, size_t n) {
  size_t k = 0;
  for (const unsigned char *c = (const unsigned char *)s; *c && k + 2 < n; c++) {
    buf[k++] = *c < 0x20 || *c == 0x7f ? '?' : (char)*c;
    if (*c == '*' && c[1] == '/') buf[k++] = ' ';
  }
  buf[k] = 0;
  return buf;
}

static void emit_doc(tl_sbuf *b, const tl_func *f, const tl_kernel_info *ki, const notma_image *nt) {
  tl_sbuf_printf(b, "/* kernel %s(", f->name);
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *pa = &f->params.data[i];
    tl_sbuf_printf(b, "%s%s: ", i ? ", " : "", pa->name);
    if (!pa->is_tensor) {
      tl_sbuf_printf(b, "%s", tl_dtype_name((tl_dtype)pa->dtype));
      continue;
    }
    tl_sbuf_printf(b, "tensor<%s>[", tl_dtype_name((tl_dtype)pa->dtype));
    for (int d = 0; d < pa->rank; d++) {
      if (pa->dims[d].is_const) tl_sbuf_printf(b, "%s%lld", d ? ", " : "", (long long)pa->dims[d].value);
      else tl_sbuf_printf(b, "%s%s", d ? ", " : "", f->syms.data[pa->dims[d].sym].name);
    }
    tl_sbuf_puts(b, "]");
  }
  tl_sbuf_printf(b, ")\n *   entry %s, %d threads, %d bytes of dynamic shared memory%s.\n", ki->entry, ki->threads,
                 ki->smem_bytes, ki->ntma ? ", tensor maps encoded per launch" : "");
  if (nt)
    tl_sbuf_printf(b,
                   " *   A launch with a tensor no tensor map can take runs its no-TMA image (%d threads, %d bytes),\n"
                   " *   loaded at the first such launch in a context.\n",
                   nt->ki.threads, nt->ki.smem_bytes);
  tl_sbuf_puts(b, " *   Tensors: device pointer, sizes, strides in elements (NULL = row-major).");
  for (int i = 0; i < f->params.len; i++)
    if (f->params.data[i].zeroed) /* @zeroed(NAME): the caller's job here (docs/language.md "Zeroed tensors") */
      tl_sbuf_printf(b, "\n *   %s must hold zeros when a launch starts (@zeroed; the launcher does not zero it).",
                     f->params.data[i].name);
  tl_sbuf_puts(b, " */\n");
}

/* The end of a launch of the image whose kernel is ki (tl_fn and tl_ctas its function and CTAs):
 * the persistent grid, the tensor maps (at tma_offs), cuLaunchKernel, return. */
static void emit_launch(tl_sbuf *b, const char *pfx, const tl_func *f, const tl_kernel_info *ki, const size_t *tma_offs) {
  if (ki->persist && ki->cluster) /* clusters of 2 CTAs over pairs of tiles (lib/codegen/emit_cluster.c) */
    tl_sbuf_printf(b,
                   "  { int64_t tl_p = tl_g[0] * tl_g[1] * tl_g[2] / tl_g[%d] * ((tl_g[%d] + 1) / 2), tl_f = tl_ctas / 2 > 0 ? "
                   "tl_ctas / 2 : 1; tl_g[0] = 2 * (tl_p < tl_f ? tl_p : tl_f); tl_g[1] = tl_g[2] = 1; }\n",
                   ki->cluster - 1, ki->cluster - 1);
  else if (ki->persist) /* persistent: min(tiles, CTAs that fit) along x; the kernel loops over the tiles */
    tl_sbuf_puts(b, "  { int64_t tl_t = tl_g[0] * tl_g[1] * tl_g[2]; tl_g[0] = tl_t < tl_ctas ? tl_t : tl_ctas; tl_g[1] = tl_g[2] = 1; }\n");
  else
    tl_sbuf_puts(b, "  (void)tl_ctas;\n");
  for (int t = 0; tma_offs && t < ki->ntma; t++) {
    const tl_tma_desc *td = &ki->tma[t];
    const tl_param *pa = &f->params.data[td->param];
    int eb = tl_dtype_bytes((tl_dtype)td->dtype);
    /* CUtensorMapDataType as runtime/pack.c tl_tma_encode picks it: 8-bit types as UINT8 (0), f32 as
     * FLOAT32 (7), f16 FLOAT16 (6), bf16 BFLOAT16 (9) */
    tl_sbuf_printf(b, "  tl_st = %s_tma(tl_buf + %zu, %s, %s_shape, %s_st, %d, %d, %d, %d, %d, %d);\n  if (tl_st) return tl_st;\n",
                   pfx, tma_offs[t], pa->name, pa->name, pa->name, pa->rank, eb,
                   eb == 1 ? 0 : eb == 4 ? 7 : td->dtype == TL_F16 ? 6 : 9, td->box_inner, td->box_rows, td->swizzle);
  }
  tl_sbuf_printf(b,
                 "  CUresult tl_r = %s_cu.cuLaunchKernel(tl_fn, (unsigned)tl_g[0], (unsigned)tl_g[1], (unsigned)tl_g[2], %d, 1, 1, %d, "
                 "stream, tl_slots, NULL);\n"
                 "  if (tl_r) return %s_fail(%s_ERROR_CUDA, \"cuLaunchKernel failed: %%s (grid %%lld x %%lld x %%lld, block "
                 "%d, smem %d)\", %s_result(tl_r), (long long)tl_g[0], (long long)tl_g[1], (long long)tl_g[2]);\n"
                 "  return %s_OK;\n",
                 pfx, ki->threads, ki->smem_bytes, pfx, pfx, ki->threads, ki->smem_bytes, pfx, pfx);
}

/* The launcher of one kernel. */
static bool emit_launcher(tl_sbuf *b, const char *pfx, const tl_func *f, int kindex, const tl_kernel_info *ki,
                          const notma_image *nt, char *err, size_t n) {
  if (ki->assumed_key) { /* its launch check is the JIT's (lib/api/launch.c); the AOT launcher has none */
    snprintf(err, n, "kernel '%s' was compiled with TILEC_VEC_ONLY=1 (a measuring switch): not for an AOT launcher", f->name);
    return false;
  }
  if (ki->sched_ctr) { /* its tile counter is a pair a stream that the JIT keeps (lib/api/sched_slot.c) */
    snprintf(err, n, "kernel '%s' was compiled with TILEC_ATTN_SCHED=1 (opt-in): its per-stream tile counters are the JIT "
             "launcher's (docs/runtime.md \"Tile counters\"), not for an AOT launcher", f->name);
    return false;
  }
  if (nt && (nt->ki.ntma || nt->ki.sched_ctr || nt->ki.assumed_key)) { /* (a no-TMA form has neither: a guard) */
    snprintf(err, n, "kernel '%s': its no-TMA form has tensor maps or hidden parameters: not for an AOT launcher", f->name);
    return false;
  }
  for (int i = 0; i < f->params.len; i++) {
    const char *why = bad_c_name(f->params.data[i].name);
    if (why) {
      snprintf(err, n, "kernel %s: parameter '%s' %s; rename it for the C launcher", f->name, f->params.data[i].name,
               why);
      return false;
    }
  }
  /* the ABI layout (runtime/pack.c tl_abi_layout_for, repeated here) */
  size_t off = 0, offs[1024];
  int nslots = 0;
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *pa = &f->params.data[i];
    int cnt = pa->is_tensor ? 1 + 2 * pa->rank : 1;
    for (int s = 0; s < cnt; s++) {
      size_t sz = !pa->is_tensor ? (pa->dtype == TL_I64 ? 8 : 4) : s == 0 ? 8 : s <= pa->rank ? 4 : 8;
      off = (off + sz - 1) / sz * sz;
      if (nslots >= 1000) {
        snprintf(err, n, "kernel %s has too many parameters", f->name);
        return false;
      }
      offs[nslots++] = off;
      off += sz;
    }
  }
  int first_tma = nslots;
  for (int t = 0; t < ki->ntma; t++) {
    off = (off + 63) / 64 * 64;
    offs[nslots++] = off;
    off += 128;
  }
  size_t bytes = (off + 63) / 64 * 64;
  if (!bytes) bytes = 64;

  tl_sbuf_printf(b, "static const uint32_t %s_%s_offsets[%d] = {", pfx, f->name, nslots ? nslots : 1);
  for (int s = 0; s < nslots; s++) tl_sbuf_printf(b, "%s%zu", s ? ", " : "", offs[s]);
  tl_sbuf_puts(b, nslots ? "};\n" : "0};\n");
  emit_signature(b, pfx, f);
  tl_sbuf_puts(b, " {\n");
  tl_sbuf_printf(b, "  _Alignas(64) unsigned char tl_buf[%zu];\n  void *tl_slots[%d];\n  int64_t tl_g[3] = {1, 1, 1};\n",
                 bytes, nslots ? nslots : 1);
  tl_sbuf_puts(b, "  memset(tl_buf, 0, sizeof tl_buf);\n");
  /* strides (row-major when NULL), then the checks of tl_check_args */
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *pa = &f->params.data[i];
    if (!pa->is_tensor) continue;
    int R = pa->rank;
    tl_sbuf_printf(b, "  int64_t %s_st[%d];\n", pa->name, R ? R : 1);
    if (R)
      tl_sbuf_printf(b, "  if (!%s_shape) return %s_fail(%s_ERROR_LAUNCH, \"argument %d (%s): no sizes (NULL)\");\n",
                     pa->name, pfx, pfx, i, pa->name);
    tl_sbuf_printf(b, "  %s_row_major(%s_shape, %s_strides, %s_st, %d);\n", pfx, pa->name, pa->name, pa->name, R);
    for (int d = 0; d < R; d++) {
      tl_sbuf_printf(b,
                     "  if (%s_shape[%d] < 0 || %s_shape[%d] > INT32_MAX) return %s_fail(%s_ERROR_LAUNCH, "
                     "\"argument %d (%s): dimension %d has size %%lld, outside [0, 2^31)\", (long long)%s_shape[%d]);\n",
                     pa->name, d, pa->name, d, pfx, pfx, i, pa->name, d, pa->name, d);
      const tl_dimspec *ds = &pa->dims[d];
      if (ds->is_const) {
        tl_sbuf_printf(b,
                       "  if (%s_shape[%d] != %lld) return %s_fail(%s_ERROR_LAUNCH, \"argument %d (%s): dimension %d "
                       "is %%lld, expected the constant %lld\", (long long)%s_shape[%d]);\n",
                       pa->name, d, (long long)ds->value, pfx, pfx, i, pa->name, d, (long long)ds->value, pa->name, d);
        continue;
      }
      /* the first dimension bound to the same symbol decides its value */
      bool found = false;
      for (int j = 0; j <= i && !found; j++) {
        const tl_param *q = &f->params.data[j];
        if (!q->is_tensor) continue;
        int dmax = j == i ? d : q->rank;
        for (int e = 0; e < dmax; e++) {
          if (q->dims[e].is_const || q->dims[e].sym != ds->sym) continue;
          const char *sym = f->syms.data[ds->sym].name;
          tl_sbuf_printf(b,
                         "  if (%s_shape[%d] != %s_shape[%d]) return %s_fail(%s_ERROR_LAUNCH, \"argument %d (%s): "
                         "dimension %d (%s) is %%lld, but %s = %%lld from argument %d (%s) dimension %d\", "
                         "(long long)%s_shape[%d], (long long)%s_shape[%d]);\n",
                         pa->name, d, q->name, e, pfx, pfx, i, pa->name, d, sym, sym, j, q->name, e, pa->name, d,
                         q->name, e);
          found = true;
          break;
        }
      }
    }
    int eb = tl_dtype_bytes((tl_dtype)pa->dtype);
    tl_sbuf_printf(b,
                   "  if (!%s_span_ok(%s_shape, %s_st, %d, %d)) return %s_fail(%s_ERROR_LAUNCH, \"argument %d (%s): "
                   "strides overflow a 64-bit byte offset\");\n",
                   pfx, pa->name, pa->name, R, eb, pfx, pfx, i, pa->name);
    tl_sbuf_printf(b,
                   "  if (!%s && %s_numel(%s_shape, %d)) return %s_fail(%s_ERROR_LAUNCH, \"argument %d (%s): null data "
                   "for a non-empty tensor\");\n",
                   pa->name, pfx, pa->name, R, pfx, pfx, i, pa->name);
    if (eb > 1)
      tl_sbuf_printf(b,
                     "  if ((uintptr_t)%s %% %d) return %s_fail(%s_ERROR_LAUNCH, \"argument %d (%s): data pointer %%p "
                     "is not %d-byte aligned\", %s);\n",
                     pa->name, eb, pfx, pfx, i, pa->name, eb, pa->name);
  }
  /* the grid */
  tl_sbuf_puts(b, "  {\n");
  if (!emit_grid(b, pfx, f, err, n)) return false;
  tl_sbuf_puts(b, "  }\n");
  tl_sbuf_printf(b,
                 "  for (int tl_d = 0; tl_d < 3; tl_d++)\n"
                 "    if (tl_g[tl_d] < 0) return %s_fail(%s_ERROR_LAUNCH, \"kernel %s: grid dimension %%d is negative (%%lld)\", tl_d, (long long)tl_g[tl_d]);\n"
                 "  if (tl_g[0] > 2147483647 || tl_g[1] > 65535 || tl_g[2] > 65535)\n"
                 "    return %s_fail(%s_ERROR_LAUNCH, \"grid (%%lld, %%lld, %%lld) exceeds the device's limits\", "
                 "(long long)tl_g[0], (long long)tl_g[1], (long long)tl_g[2]);\n"
                 "  if (!tl_g[0] || !tl_g[1] || !tl_g[2]) return %s_OK; /* nothing to do */\n",
                 pfx, pfx, f->name, pfx, pfx, pfx);
  /* packing (runtime/pack.c) */
  int slot = 0;
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *pa = &f->params.data[i];
    if (pa->is_tensor) {
      tl_sbuf_printf(b, "  { uint64_t tl_p = (uint64_t)(uintptr_t)%s; memcpy(tl_buf + %zu, &tl_p, 8); }\n", pa->name, offs[slot++]);
      for (int d = 0; d < pa->rank; d++)
        tl_sbuf_printf(b, "  { uint32_t tl_s = (uint32_t)%s_shape[%d]; memcpy(tl_buf + %zu, &tl_s, 4); }\n", pa->name, d,
                       offs[slot++]);
      for (int d = 0; d < pa->rank; d++)
        tl_sbuf_printf(b, "  memcpy(tl_buf + %zu, &%s_st[%d], 8);\n", offs[slot++], pa->name, d);
    } else if (tl_dtype_is_float((tl_dtype)pa->dtype)) {
      tl_sbuf_printf(b, "  memcpy(tl_buf + %zu, &%s, 4);\n", offs[slot++], pa->name);
    } else if (pa->dtype == TL_I64) {
      tl_sbuf_printf(b, "  memcpy(tl_buf + %zu, &%s, 8);\n", offs[slot++], pa->name);
    } else {
      tl_sbuf_printf(b, "  { uint32_t tl_u = (uint32_t)%s; memcpy(tl_buf + %zu, &tl_u, 4); }\n", pa->name, offs[slot++]);
    }
  }
  tl_sbuf_printf(b, "  for (int tl_i = 0; tl_i < %d; tl_i++) tl_slots[tl_i] = tl_buf + %s_%s_offsets[tl_i];\n", nslots, pfx, f->name);
  tl_sbuf_puts(b, "  void *tl_fn;\n  int64_t tl_ctas;\n  int tl_st;\n");
  if (!nt) {
    tl_sbuf_printf(b, "  tl_st = %s_function(%d, &tl_fn, &tl_ctas);\n  if (tl_st) return tl_st;\n", pfx, kindex);
    emit_launch(b, pfx, f, ki, offs + first_tma);
    tl_sbuf_puts(b, "}\n\n");
    return true;
  }
  /* a TMA form and its no-TMA image: the map test of every tensor a map is encoded for picks one */
  tl_sbuf_puts(b, "  /* the TMA form where a tensor map can take every tensor it maps, else the no-TMA image */\n  if (");
  for (int t = 0; t < ki->ntma; t++) {
    const tl_tma_desc *td = &ki->tma[t];
    bool seen = false;
    for (int u = 0; u < t; u++)
      seen = seen || (ki->tma[u].param == td->param && tl_dtype_bytes((tl_dtype)ki->tma[u].dtype) == tl_dtype_bytes((tl_dtype)td->dtype));
    if (seen) continue;
    const tl_param *pa = &f->params.data[td->param];
    tl_sbuf_printf(b, "%s%s_tma_fits(%s, %s_shape, %s_st, %d, %d)", t ? " &&\n      " : "", pfx, pa->name, pa->name,
                   pa->name, pa->rank, tl_dtype_bytes((tl_dtype)td->dtype));
  }
  tl_sbuf_puts(b, ") {\n");
  tl_sbuf tb = {0}; /* the TMA form's launch, indented a level */
  tl_sbuf_printf(&tb, "  tl_st = %s_function(%d, &tl_fn, &tl_ctas);\n  if (tl_st) return tl_st;\n", pfx, kindex);
  emit_launch(&tb, pfx, f, ki, offs + first_tma);
  for (const char *q = tb.data; q && *q;) {
    const char *e = strchr(q, '\n');
    size_t len = e ? (size_t)(e - q) + 1 : strlen(q);
    tl_sbuf_puts(b, "  ");
    tl_sbuf_putn(b, q, len);
    q += len;
  }
  if (tb.oom) b->oom = true;
  tl_sbuf_free(&tb);
  tl_sbuf_printf(b, "  }\n  tl_st = %s_notma_function(%d, &tl_fn, &tl_ctas);\n  if (tl_st) return tl_st;\n", pfx, nt->index);
  emit_launch(b, pfx, f, &nt->ki, NULL);
  tl_sbuf_puts(b, "}\n\n");
  return true;
}

/* The run time of a generated source: PFX is replaced by the prefix. */
static const char runtime_template[] =
    "#include <dlfcn.h>\n#include <pthread.h>\n#include <stdarg.h>\n#include <stdatomic.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "#include <string.h>\n\n"
    "typedef int CUresult;\n"
    "#if defined(__GNUC__) || defined(__clang__)\n#define PFX_UNUSED __attribute__((unused))\n#else\n#define PFX_UNUSED\n#endif\n"
    "static struct {\n"
    "  CUresult (*cuInit)(unsigned);\n"
    "  CUresult (*cuGetErrorName)(CUresult, const char **);\n"
    "  CUresult (*cuCtxGetCurrent)(void **);\n"
    "  CUresult (*cuCtxSetCurrent)(void *);\n"
    "  CUresult (*cuCtxGetDevice)(int *);\n"
    "  CUresult (*cuDeviceGetAttribute)(int *, int, int);\n"
    "  CUresult (*cuFuncGetAttribute)(int *, int, void *);\n"
    "  CUresult (*cuDeviceGet)(int *, int);\n"
    "  CUresult (*cuDevicePrimaryCtxRetain)(void **, int);\n"
    "  CUresult (*cuModuleLoadData)(void **, const void *);\n"
    "  CUresult (*cuModuleGetFunction)(void **, void *, const char *);\n"
    "  CUresult (*cuFuncSetAttribute)(void *, int, int);\n"
    "  CUresult (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,\n"
    "                             void **, void **);\n"
    "  CUresult (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *,\n"
    "                                     const unsigned *, const unsigned *, int, int, int, int);\n"
    "} PFX_cu;\n"
    "static pthread_once_t PFX_once = PTHREAD_ONCE_INIT;\n"
    "static int PFX_driver_status = PFX_ERROR_CUDA;\n"
    "static char PFX_driver_error[300];\n"
    "static _Thread_local char PFX_err[512];\n\n"
    "const char *PFX_last_error(void) { return PFX_err; }\n\n"
    "PFX_UNUSED static int PFX_fail(int st, const char *fmt, ...) {\n"
    "  va_list ap;\n  va_start(ap, fmt);\n  vsnprintf(PFX_err, sizeof PFX_err, fmt, ap);\n  va_end(ap);\n  return st;\n}\n\n"
    "PFX_UNUSED static const char *PFX_result(CUresult r) {\n"
    "  static _Thread_local char t[64];\n  const char *s = NULL;\n"
    "  if (PFX_cu.cuGetErrorName && PFX_cu.cuGetErrorName(r, &s) == 0 && s) return s;\n"
    "  snprintf(t, sizeof t, \"CUDA error %d\", r);\n  return t;\n}\n\n"
    "/* libcuda.so.1 (or $TILEC_LIBCUDA), entry points for the CUDA 12.0 ABI, as libtilec loads them. */\n"
    "static void PFX_load_driver(void) {\n"
    "  const char *path = getenv(\"TILEC_LIBCUDA\");\n"
    "  if (!path || !*path) path = \"libcuda.so.1\";\n"
    "  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);\n"
    "  if (!lib) {\n    snprintf(PFX_driver_error, sizeof PFX_driver_error, \"%.200s not found (no NVIDIA driver)\", path);\n    return;\n  }\n"
    "  CUresult (*gpa)(const char *, void **, int, uint64_t, int *) =\n"
    "      (CUresult (*)(const char *, void **, int, uint64_t, int *))dlsym(lib, \"cuGetProcAddress_v2\");\n"
    "  struct { const char *name, *v2; void **slot; int optional; } t[] = {\n"
    "      {\"cuInit\", NULL, (void **)&PFX_cu.cuInit, 0},\n"
    "      {\"cuGetErrorName\", NULL, (void **)&PFX_cu.cuGetErrorName, 0},\n"
    "      {\"cuCtxGetCurrent\", NULL, (void **)&PFX_cu.cuCtxGetCurrent, 0},\n"
    "      {\"cuCtxSetCurrent\", NULL, (void **)&PFX_cu.cuCtxSetCurrent, 0},\n"
    "      {\"cuCtxGetDevice\", NULL, (void **)&PFX_cu.cuCtxGetDevice, 0},\n"
    "      {\"cuDeviceGetAttribute\", NULL, (void **)&PFX_cu.cuDeviceGetAttribute, 0},\n"
    "      {\"cuFuncGetAttribute\", NULL, (void **)&PFX_cu.cuFuncGetAttribute, 0},\n"
    "      {\"cuDeviceGet\", NULL, (void **)&PFX_cu.cuDeviceGet, 0},\n"
    "      {\"cuDevicePrimaryCtxRetain\", NULL, (void **)&PFX_cu.cuDevicePrimaryCtxRetain, 0},\n"
    "      {\"cuModuleLoadData\", NULL, (void **)&PFX_cu.cuModuleLoadData, 0},\n"
    "      {\"cuModuleGetFunction\", NULL, (void **)&PFX_cu.cuModuleGetFunction, 0},\n"
    "      {\"cuFuncSetAttribute\", NULL, (void **)&PFX_cu.cuFuncSetAttribute, 0},\n"
    "      {\"cuLaunchKernel\", NULL, (void **)&PFX_cu.cuLaunchKernel, 0},\n"
    "      {\"cuTensorMapEncodeTiled\", NULL, (void **)&PFX_cu.cuTensorMapEncodeTiled, 1},\n"
    "  };\n"
    "  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {\n"
    "    int qs = 0;\n    *t[i].slot = NULL;\n"
    "    if (!gpa || gpa(t[i].name, t[i].slot, 12000, 0, &qs) != 0) *t[i].slot = NULL;\n"
    "    if (!*t[i].slot) *t[i].slot = dlsym(lib, t[i].v2 ? t[i].v2 : t[i].name);\n"
    "    if (!*t[i].slot && !t[i].optional) {\n"
    "      snprintf(PFX_driver_error, sizeof PFX_driver_error, \"%.200s: driver entry point %s not found\", path, t[i].name);\n"
    "      return;\n    }\n  }\n"
    "  CUresult r = PFX_cu.cuInit(0);\n"
    "  if (r) {\n    snprintf(PFX_driver_error, sizeof PFX_driver_error, \"cuInit failed: %s\", PFX_result(r));\n"
    "    PFX_driver_status = r == 100 ? PFX_ERROR_NO_DEVICE : PFX_ERROR_CUDA;\n    return;\n  }\n"
    "  PFX_driver_status = PFX_OK;\n}\n\n"
    "/* One module per CUDA context (the context current at the call; with none, device 0's primary context),\n"
    " * loaded under PFX_lock at the first launch in it and looked up without a lock after that; a TMA kernel's\n"
    " * no-TMA image (PFX_notma) loaded into the context at the first launch that needs it (docs/aot.md). */\n"
    "#define PFX_MAX_CONTEXTS 16\n"
    "static struct {\n"
    "  void *ctx, *fn[PFX_NKERNELS > 0 ? PFX_NKERNELS : 1];\n  int64_t ctas[PFX_NKERNELS > 0 ? PFX_NKERNELS : 1];\n"
    "  void *_Atomic nfn[PFX_NNOTMA > 0 ? PFX_NNOTMA : 1]; /* set once, after nctas */\n"
    "  int64_t nctas[PFX_NNOTMA > 0 ? PFX_NNOTMA : 1];\n"
    "} PFX_mods[PFX_MAX_CONTEXTS];\n"
    "static _Atomic int PFX_nmods; /* entries below it are complete and never change (but nfn, nctas) */\n"
    "static pthread_mutex_t PFX_lock = PTHREAD_MUTEX_INITIALIZER;\n\n"
    "/* An image as a module: its cubin, else (another GPU) its PTX, which the driver JIT-compiles. */\n"
    "static int PFX_module(void **mod, const unsigned char *cubin, size_t cubin_size, const unsigned char *ptx,\n"
    "                      const char *what) {\n"
    "  CUresult r = 1, rp = 1;\n"
    "  if (cubin_size > 1) r = PFX_cu.cuModuleLoadData(mod, cubin);\n"
    "  if (r) rp = PFX_cu.cuModuleLoadData(mod, ptx);\n"
    "  if (r && rp) return PFX_fail(PFX_ERROR_CUDA, \"cannot load %s: cubin (%s): %s; PTX: %s\", what, PFX_ARCH,\n"
    "                               cubin_size > 1 ? PFX_result(r) : \"not embedded\", PFX_result(rp));\n"
    "  return PFX_OK;\n}\n\n"
    "/* Function `entry` of mod with its dynamic shared memory allowed, and the CTAs it launches: 1, or for a\n"
    " * persistent kernel SMs x CTAs per SM (registers, threads, shared memory: lib/api/jit.c). */\n"
    "static int PFX_entry(void *mod, const char *entry, int smem, int threads, int persist, void **fn, int64_t *ctas) {\n"
    "  CUresult r = PFX_cu.cuModuleGetFunction(fn, mod, entry);\n"
    "  if (r) return PFX_fail(PFX_ERROR_CUDA, \"cuModuleGetFunction(%s): %s\", entry, PFX_result(r));\n"
    "  if (smem > 48 * 1024 && (r = PFX_cu.cuFuncSetAttribute(*fn, 8, smem)) != 0)\n"
    "    return PFX_fail(PFX_ERROR_CUDA, \"cannot raise dynamic shared memory of %s to %d bytes: %s\", entry, smem,\n"
    "                    PFX_result(r));\n"
    "  *ctas = 1;\n"
    "  if (persist) {\n"
    "    int dev = 0, sms = 1, optin = 0, regs = 0, st = 0;\n"
    "    PFX_cu.cuCtxGetDevice(&dev);\n"
    "    PFX_cu.cuDeviceGetAttribute(&sms, 16, dev);\n    PFX_cu.cuDeviceGetAttribute(&optin, 97, dev);\n"
    "    PFX_cu.cuFuncGetAttribute(&regs, 4, *fn);\n    PFX_cu.cuFuncGetAttribute(&st, 1, *fn);\n"
    "    int64_t n = ((int64_t)optin + 1024) / ((int64_t)smem + st + 1024), t = 2048 / threads;\n"
    "    if (t < n) n = t;\n"
    "    if (regs > 0 && 65536 / ((int64_t)regs * threads) < n) n = 65536 / ((int64_t)regs * threads);\n"
    "    *ctas = (int64_t)(sms > 0 ? sms : 1) * (n < 1 ? 1 : n);\n  }\n"
    "  return PFX_OK;\n}\n\n"
    "static int PFX_load_locked(void *ctx, int *slot) {\n"
    "  int n = atomic_load_explicit(&PFX_nmods, memory_order_relaxed);\n"
    "  for (int i = 0; i < n; i++)\n    if (PFX_mods[i].ctx == ctx) { *slot = i; return PFX_OK; }\n"
    "  if (n == PFX_MAX_CONTEXTS) return PFX_fail(PFX_ERROR_CUDA, \"more than %d CUDA contexts\", PFX_MAX_CONTEXTS);\n"
    "  void *mod = NULL;\n"
    "  int st = PFX_module(&mod, PFX_cubin, sizeof PFX_cubin, PFX_ptx, \"the module\");\n"
    "  for (int k = 0; k < PFX_NKERNELS && !st; k++)\n"
    "    st = PFX_entry(mod, PFX_entries[k], PFX_smem[k], PFX_threads[k], PFX_persist[k], &PFX_mods[n].fn[k], &PFX_mods[n].ctas[k]);\n"
    "  if (st) return st;\n"
    "  PFX_mods[n].ctx = ctx;\n"
    "  atomic_store_explicit(&PFX_nmods, n + 1, memory_order_release);\n"
    "  *slot = n;\n  return PFX_OK;\n}\n\n"
    "/* The slot of the current context (made current: device 0's primary context when none), its module loaded. */\n"
    "static int PFX_context(int *slot) {\n"
    "  pthread_once(&PFX_once, PFX_load_driver);\n"
    "  if (PFX_driver_status) return PFX_fail(PFX_driver_status, \"%s\", PFX_driver_error);\n"
    "  void *ctx = NULL;\n  CUresult r = PFX_cu.cuCtxGetCurrent(&ctx);\n"
    "  if (r) return PFX_fail(PFX_ERROR_CUDA, \"cuCtxGetCurrent: %s\", PFX_result(r));\n"
    "  if (!ctx) {\n    int dev = 0;\n"
    "    if ((r = PFX_cu.cuDeviceGet(&dev, 0)) || (r = PFX_cu.cuDevicePrimaryCtxRetain(&ctx, dev)) ||\n"
    "        (r = PFX_cu.cuCtxSetCurrent(ctx)))\n"
    "      return PFX_fail(r == 100 || r == 101 ? PFX_ERROR_NO_DEVICE : PFX_ERROR_CUDA, \"device 0's context: %s\", PFX_result(r));\n  }\n"
    "  int n = atomic_load_explicit(&PFX_nmods, memory_order_acquire);\n"
    "  for (int i = 0; i < n; i++)\n    if (PFX_mods[i].ctx == ctx) { *slot = i; return PFX_OK; }\n"
    "  pthread_mutex_lock(&PFX_lock);\n  int st = PFX_load_locked(ctx, slot);\n  pthread_mutex_unlock(&PFX_lock);\n  return st;\n}\n\n"
    "static int PFX_function(int k, void **fn, int64_t *ctas) {\n"
    "  int slot = -1, st = PFX_context(&slot);\n"
    "  if (st == PFX_OK) *fn = PFX_mods[slot].fn[k], *ctas = PFX_mods[slot].ctas[k];\n  return st;\n}\n\n"
    "/* No-TMA image j's function in the current context, the image loaded (under PFX_lock) at its first use there. */\n"
    "PFX_UNUSED static int PFX_notma_function(int j, void **fn, int64_t *ctas) {\n"
    "  int slot = -1, st = PFX_context(&slot);\n"
    "  if (st) return st;\n"
    "  void *f = atomic_load_explicit(&PFX_mods[slot].nfn[j], memory_order_acquire);\n"
    "  if (!f) {\n"
    "    pthread_mutex_lock(&PFX_lock);\n"
    "    if (!(f = atomic_load_explicit(&PFX_mods[slot].nfn[j], memory_order_relaxed))) {\n"
    "      char what[300];\n      void *mod = NULL;\n"
    "      snprintf(what, sizeof what, \"the no-TMA image of %s\", PFX_notma[j].entry);\n"
    "      st = PFX_module(&mod, PFX_notma[j].cubin, PFX_notma[j].cubin_size, PFX_notma[j].ptx, what);\n"
    "      if (!st) st = PFX_entry(mod, PFX_notma[j].entry, PFX_notma[j].smem, PFX_notma[j].threads, PFX_notma[j].persist,\n"
    "                              &f, &PFX_mods[slot].nctas[j]);\n"
    "      if (!st) atomic_store_explicit(&PFX_mods[slot].nfn[j], f, memory_order_release);\n"
    "    }\n"
    "    pthread_mutex_unlock(&PFX_lock);\n"
    "    if (st) return st;\n  }\n"
    "  *fn = f, *ctas = PFX_mods[slot].nctas[j];\n  return PFX_OK;\n}\n\n"
    "int PFX_load(void) {\n  int slot;\n  return PFX_NKERNELS ? PFX_context(&slot) : PFX_OK;\n}\n\n"
    "int PFX_load_all(void) {\n  void *fn;\n  int64_t ctas;\n  int st = PFX_load();\n"
    "  for (int j = 0; j < PFX_NNOTMA && !st; j++) st = PFX_notma_function(j, &fn, &ctas);\n  return st;\n}\n\n"
    "/* Integer ops of the grid clause, as the interpreter does them (lib/interp.c int_binop). */\n"
    "PFX_UNUSED static int64_t PFX_wrap(int64_t x, int bits) {\n"
    "  uint64_t u = (uint64_t)x;\n"
    "  switch (bits) {\n  case 1: return x != 0;\n  case 8: return (int8_t)(uint8_t)u;\n  case 16: return (int16_t)(uint16_t)u;\n"
    "  case 32: return (int32_t)(uint32_t)u;\n  case -8: return (uint8_t)u;\n  default: return x;\n  }\n}\n"
    "PFX_UNUSED static int64_t PFX_binop(int op, int bits, int sgn, int64_t a, int64_t b) {\n"
    "  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;\n"
    "  switch (op) {\n  case '+': return (int64_t)(ua + ub);\n  case '-': return (int64_t)(ua - ub);\n"
    "  case '*': return (int64_t)(ua * ub);\n"
    "  case '/': return b == 0 ? 0 : b == -1 ? (int64_t)(0 - ua) : a / b;\n"
    "  case '%': return b == 0 || b == -1 ? 0 : a % b;\n"
    "  case '<': return a < b ? a : b;\n  case '>': return a > b ? a : b;\n"
    "  case '&': return a & b;\n  case '|': return a | b;\n  case '^': return a ^ b;\n"
    "  case 'L': return b < 0 || b >= bits ? 0 : (int64_t)(ua << b);\n"
    "  default: return b < 0 || b >= bits ? (sgn && a < 0 ? -1 : 0) : sgn ? a >> b : (int64_t)(ua >> b);\n  }\n}\n\n"
    "PFX_UNUSED static void PFX_row_major(const int64_t *shape, const int64_t *strides, int64_t *out, int rank) {\n"
    "  int64_t s = 1;\n"
    "  for (int d = rank - 1; d >= 0; d--) {\n    out[d] = strides ? strides[d] : s;\n    s *= shape[d] > 0 ? shape[d] : 1;\n  }\n}\n"
    "PFX_UNUSED static int64_t PFX_numel(const int64_t *shape, int rank) {\n"
    "  int64_t n = 1;\n  for (int d = 0; d < rank; d++) n *= shape[d];\n  return n;\n}\n"
    "/* the largest byte offset of an element fits in 64 bits */\n"
    "PFX_UNUSED static int PFX_span_ok(const int64_t *shape, const int64_t *st, int rank, int esize) {\n"
    "  uint64_t max = 0;\n"
    "  for (int d = 0; d < rank; d++) {\n    if (shape[d] <= 1) continue;\n"
    "    uint64_t s = st[d] < 0 ? (uint64_t)0 - (uint64_t)st[d] : (uint64_t)st[d], n = (uint64_t)shape[d] - 1;\n"
    "    if (s && n > ((uint64_t)INT64_MAX - max) / s) return 0;\n    max += n * s;\n  }\n"
    "  return max <= (uint64_t)INT64_MAX / (uint64_t)esize;\n}\n\n"
    "/* The kernel's own test of a tensor map (codegen.h; runtime/pack.c tl_tma_fits; ranks 1..5): the last\n"
    " * stride 1, the data and every other byte stride 16-byte aligned (below 2^40), no size 0. */\n"
    "PFX_UNUSED static int PFX_tma_fits(const void *data, const int64_t *shape, const int64_t *st, int R, int eb) {\n"
    "  if (R < 1 || R > 5 || st[R - 1] != 1 || (uintptr_t)data % 16) return 0;\n"
    "  for (int d = 0; d + 1 < R; d++) {\n    int64_t sb = st[d] * eb;\n"
    "    if (sb <= 0 || sb % 16 || sb >= ((int64_t)1 << 40)) return 0;\n  }\n"
    "  for (int d = 0; d < R; d++)\n    if (shape[d] <= 0) return 0;\n"
    "  return 1;\n}\n\n"
    "/* A tensor map (runtime/pack.c tl_tma_encode): encoded when the kernel's own test holds, else zeros. */\n"
    "PFX_UNUSED static int PFX_tma(void *map, const void *data, const int64_t *shape, const int64_t *st, int R, int eb, int dt,\n"
    "                   int box_inner, int box_rows, int swizzle) {\n"
    "  memset(map, 0, 128);\n"
    "  if (!PFX_tma_fits(data, shape, st, R, eb)) return PFX_OK;\n"
    "  if (!PFX_cu.cuTensorMapEncodeTiled)\n"
    "    return PFX_fail(PFX_ERROR_CUDA, \"the driver has no cuTensorMapEncodeTiled (CUDA 12.0+), which this kernel needs\");\n"
    "  uint64_t dims[5], strides[4];\n  unsigned box[5], estr[5];\n"
    "  for (int i = 0; i < R; i++) {\n    dims[i] = (uint64_t)shape[R - 1 - i];\n"
    "    box[i] = i == 0 ? (unsigned)box_inner : i == 1 ? (unsigned)box_rows : 1u;\n    estr[i] = 1;\n"
    "    if (i + 1 < R) strides[i] = (uint64_t)(st[R - 2 - i] * eb);\n  }\n"
    "  int swz = swizzle == 128 ? 3 : swizzle == 64 ? 2 : swizzle == 32 ? 1 : 0;\n"
    "  CUresult r = PFX_cu.cuTensorMapEncodeTiled(map, dt, (unsigned)R, (void *)data, dims, strides, box, estr, 0, swz, 3, 0);\n"
    "  if (r) return PFX_fail(PFX_ERROR_CUDA, \"cuTensorMapEncodeTiled failed: %s\", PFX_result(r));\n"
    "  return PFX_OK;\n}\n\n";

/* s with every "PFX" replaced by pfx, appended to b. */
static void put_template(tl_sbuf *b, const char *s, const char *pfx) {
  for (const char *at; (at = strstr(s, "PFX")); s = at + 3) {
    tl_sbuf_putn(b, s, (size_t)(at - s));
    tl_sbuf_puts(b, pfx);
  }
  tl_sbuf_puts(b, s);
}

typedef struct emit_args {
  const char *name;
  char **header, **source;
  notma_image *notma; /* one per TMA form of p */
  int nnotma;
} emit_args;

static tilec_status emit_in_guard(tilec_program *p, void *arg) {
  emit_args *a = arg;
  const char *pfx = a->name;
  char err[512] = "";
  const tl_source *src = &p->ctx.files.data[p->file];
  char arch[32] = "";
  if (!tl_ptx_read_target(p->text[TILEC_STAGE_PTX], arch, sizeof arch)) snprintf(arch, sizeof arch, "?");
  tl_module *m = p->module;
  tl_sbuf h = {0}, c = {0};
  char src_name_buf[1024];
  const char *src_name = comment_text(src->name, src_name_buf, sizeof src_name_buf);
  char upper[200];
  size_t un = 0;
  for (const char *q = pfx; *q && un + 1 < sizeof upper; q++) upper[un++] = (*q >= 'a' && *q <= 'z') ? (char)(*q - 32) : *q;
  upper[un] = 0;
  tl_sbuf_printf(&h,
                 "/* %s.h: launchers generated by tilec %s from %s for %s (%s embedded); do not edit.\n"
                 " * Needs only the NVIDIA driver at run time (libcuda.so.1, dlopen'd; $TILEC_LIBCUDA overrides);\n"
                 " * link with -ldl -lpthread.  docs/aot.md. */\n"
                 "#ifndef %s_TILEC_H\n#define %s_TILEC_H\n\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
                 "/* Statuses (tilec's numbers): 0 ok; a launch's arguments rejected; the driver missing or a\n"
                 " * driver call failed; no CUDA device.  %s_last_error() says why (per thread). */\n"
                 "enum { %s_OK = 0, %s_ERROR_CUDA = 7, %s_ERROR_NO_DEVICE = 8, %s_ERROR_LAUNCH = 9 };\n"
                 "const char *%s_last_error(void);\n"
                 "/* Load the module into the current CUDA context (device 0's primary context when none is\n"
                 " * current); optional: the first launch in a context does it.  _load_all also loads the\n"
                 " * no-TMA images (each loaded otherwise at the first launch that needs it: before capturing\n"
                 " * such launches in a CUDA graph, say). */\n"
                 "int %s_load(void);\nint %s_load_all(void);\n\n",
                 pfx, TILEC_VERSION_STRING, src_name, arch, p->cubin ? "cubin + PTX" : "PTX only", upper, upper, pfx,
                 pfx, pfx, pfx, pfx, pfx, pfx, pfx);
  tl_sbuf_printf(&c, "/* %s.c: generated by tilec %s from %s for %s; do not edit (docs/aot.md). */\n#include \"%s.h\"\n\n#include <stddef.h>\n\n",
                 pfx, TILEC_VERSION_STRING, src_name, arch, pfx);
  int nk = 0;
  for (int i = 0; i < m->funcs.len; i++)
    if (info_of(&p->cg, m->funcs.data[i]->name)) nk++;
  tl_sbuf_printf(&c, "#define %s_NKERNELS %d\n#define %s_ARCH \"%s\"\n", pfx, nk, pfx, arch);
  tl_sbuf_printf(&c, "static const char *const %s_entries[%d] = {", pfx, nk ? nk : 1);
  for (int i = 0, k = 0; i < m->funcs.len; i++) {
    const tl_kernel_info *ki = info_of(&p->cg, m->funcs.data[i]->name);
    if (ki) tl_sbuf_printf(&c, "%s\"%s\"", k++ ? ", " : "", ki->entry);
  }
  tl_sbuf_printf(&c, "%s};\nstatic const int %s_smem[%d] = {", nk ? "" : "0", pfx, nk ? nk : 1);
  for (int i = 0, k = 0; i < m->funcs.len; i++) {
    const tl_kernel_info *ki = info_of(&p->cg, m->funcs.data[i]->name);
    if (ki) tl_sbuf_printf(&c, "%s%d", k++ ? ", " : "", ki->smem_bytes);
  }
  tl_sbuf_printf(&c, "%s};\n", nk ? "" : "0");
  /* threads and the persistent flag (docs/pipelines.md "Persistent CTAs"): the CTAs a
   * persistent kernel launches come from its resources on the context's device */
  tl_sbuf_printf(&c, "static const int %s_threads[%d] = {", pfx, nk ? nk : 1);
  for (int i = 0, k = 0; i < m->funcs.len; i++) {
    const tl_kernel_info *ki = info_of(&p->cg, m->funcs.data[i]->name);
    if (ki) tl_sbuf_printf(&c, "%s%d", k++ ? ", " : "", ki->threads);
  }
  tl_sbuf_printf(&c, "%s};\nstatic const int %s_persist[%d] = {", nk ? "" : "0", pfx, nk ? nk : 1);
  for (int i = 0, k = 0; i < m->funcs.len; i++) {
    const tl_kernel_info *ki = info_of(&p->cg, m->funcs.data[i]->name);
    if (ki) tl_sbuf_printf(&c, "%s%d", k++ ? ", " : "", ki->persist ? 1 : 0);
  }
  tl_sbuf_printf(&c, "%s};\n", nk ? "" : "0");
  char nm[256];
  snprintf(nm, sizeof nm, "%s_cubin", pfx);
  emit_bytes(&c, nm, p->cubin, p->cubin ? p->cubin_size : 0, false);
  snprintf(nm, sizeof nm, "%s_ptx", pfx);
  emit_bytes(&c, nm, (const unsigned char *)p->text[TILEC_STAGE_PTX], strlen(p->text[TILEC_STAGE_PTX]), true);
  /* the TMA forms' no-TMA images (docs/aot.md "Two images") */
  tl_sbuf_printf(&c, "#define %s_NNOTMA %d\n", pfx, a->nnotma);
  for (int j = 0; j < a->nnotma; j++) {
    const notma_image *nt = &a->notma[j];
    snprintf(nm, sizeof nm, "%s_notma%d_cubin", pfx, j);
    emit_bytes(&c, nm, (const unsigned char *)nt->cubin, nt->cubin ? nt->cubin_size : 0, false);
    snprintf(nm, sizeof nm, "%s_notma%d_ptx", pfx, j);
    emit_bytes(&c, nm, (const unsigned char *)nt->ptx, strlen(nt->ptx), true);
  }
  tl_sbuf_printf(&c,
                 "static const struct {\n  const unsigned char *cubin, *ptx;\n  size_t cubin_size;\n  const char *entry;\n"
                 "  int smem, threads, persist;\n} %s_notma[%d] = {", pfx, a->nnotma ? a->nnotma : 1);
  for (int j = 0; j < a->nnotma; j++) {
    const notma_image *nt = &a->notma[j];
    tl_sbuf_printf(&c, "%s\n    {%s_notma%d_cubin, %s_notma%d_ptx, sizeof %s_notma%d_cubin, \"%s\", %d, %d, %d}", j ? "," : "",
                   pfx, j, pfx, j, pfx, j, nt->ki.entry, nt->ki.smem_bytes, nt->ki.threads, nt->ki.persist ? 1 : 0);
  }
  tl_sbuf_puts(&c, a->nnotma ? "};\n" : "{NULL, NULL, 0, NULL, 0, 0, 0}};\n");
  put_template(&c, runtime_template, pfx);
  bool ok = true;
  for (int i = 0, k = 0; i < m->funcs.len && ok; i++) {
    const tl_func *f = m->funcs.data[i];
    const tl_kernel_info *ki = info_of(&p->cg, f->name);
    if (!ki) continue;
    const notma_image *nt = NULL;
    for (int j = 0; j < a->nnotma; j++)
      if (!strcmp(a->notma[j].name, f->name)) nt = &a->notma[j];
    emit_doc(&h, f, ki, nt);
    emit_signature(&h, pfx, f);
    tl_sbuf_puts(&h, ";\n\n");
    ok = emit_launcher(&c, pfx, f, k++, ki, nt, err, sizeof err);
  }
  tl_sbuf_puts(&h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
  if (!ok || h.oom || c.oom) {
    tl_sbuf_free(&h);
    tl_sbuf_free(&c);
    if (!ok) {
      tl_sbuf_printf(&p->log, "tilec: error: emit C: %s\n", err);
      return TILEC_ERROR_UNSUPPORTED;
    }
    return TILEC_ERROR_NOMEM;
  }
  *a->header = tl_sbuf_take(&h);
  *a->source = tl_sbuf_take(&c);
  return TILEC_OK;
}

tilec_status tilec_program_emit_c(tilec_program *p, const char *name, char **header, char **source) {
  if (header) *header = NULL;
  if (source) *source = NULL;
  if (!p || !header || !source) return TILEC_ERROR_USAGE;
  if (!is_ident(name) || strlen(name) > 100) {
    tl_sbuf_printf(&p->log, "tilec: error: emit C: the name '%s' is not a C identifier of at most 100 characters\n",
                   name ? name : "(null)");
    return TILEC_ERROR_USAGE;
  }
  /* the program as its options compile it: TMA forms by default (a no-TMA image each, below),
   * self-contained kernels with the option tma-fallback=inline (docs/aot.md "Two images") */
  tilec_status st = tilec_program_compile(p, TILEC_STAGE_PTX);
  if (st != TILEC_OK) return st;
  /* each TMA form's no-TMA form (TL_TMA_OFF; the JIT's notma variant, lib/api/form_launch.c) */
  notma_image notma[64];
  int nnotma = 0;
  for (int i = 0; i < p->cg.nkernels && st == TILEC_OK; i++) {
    const tl_kernel_info *ki = &p->cg.kernels[i];
    if (!ki->tma_form) continue;
    if (nnotma == (int)(sizeof notma / sizeof notma[0])) {
      tl_sbuf_printf(&p->log, "tilec: error: emit C: more than %d TMA kernels in one file\n", nnotma);
      st = TILEC_ERROR_UNSUPPORTED;
      break;
    }
    tl_codegen_result one;
    st = tl_api_codegen_kernel(p, ki->name, 0, true, &one);
    if (st != TILEC_OK) break;
    notma_image *nt = &notma[nnotma++];
    *nt = (notma_image){.name = ki->name, .index = nnotma - 1, .ki = one.kernels[0], .ptx = one.ptx};
    one.ptx = NULL;
    tl_codegen_result_free(&one);
  }
  /* the cubins: the no-TMA images' ptxas in threads beside the main image's */
  char ptxas[4096];
  bool have_ptxas = st == TILEC_OK && tl_api_find_ptxas(ptxas, sizeof ptxas);
  for (int j = 0; j < nnotma && have_ptxas; j++) {
    notma[j].arch = p->opts.arch, notma[j].opt_level = p->opts.opt_level;
    notma[j].started = pthread_create(&notma[j].thread, NULL, notma_ptxas, &notma[j]) == 0;
    if (!notma[j].started) notma_ptxas(&notma[j]);
  }
  if (st == TILEC_OK && !p->cubin && have_ptxas) {
    st = tilec_program_compile(p, TILEC_STAGE_CUBIN);
  } else if (st == TILEC_OK && !p->cubin) {
    tl_sbuf_printf(&p->log, "tilec: note: emit C: no ptxas found ($TILEC_PTXAS, PATH, /usr/local/cuda/bin): "
                            "PTX only, JIT-compiled by the driver at the first load\n");
  }
  for (int j = 0; j < nnotma && have_ptxas; j++) {
    if (notma[j].started) pthread_join(notma[j].thread, NULL);
    if (notma[j].log.data) tl_sbuf_puts(&p->log, notma[j].log.data);
    if (notma[j].st != TILEC_OK && st == TILEC_OK) {
      tl_sbuf_printf(&p->log, "tilec: error: emit C: ptxas on the no-TMA form of kernel '%s': %s\n", notma[j].name,
                     notma[j].why.data ? notma[j].why.data : "failed");
      st = notma[j].st;
    }
    tl_sbuf_free(&notma[j].log);
    tl_sbuf_free(&notma[j].why);
  }
  emit_args a = {name, header, source, notma, nnotma};
  if (st == TILEC_OK) st = tl_api_guard(p, emit_in_guard, &a);
  for (int j = 0; j < nnotma; j++) {
    free(notma[j].ptx);
    free(notma[j].cubin);
  }
  return st;
}
