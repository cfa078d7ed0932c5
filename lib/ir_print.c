/* ir_print.c: tile IR -> text (docs/ir.md).  Deterministic: values are
 * numbered in print order; a value's name hint prints as %hint.N.  Floats
 * print in the shortest form that strtod reads back exactly. */
#include "ir.h"
#include "schedule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct printer {
  tl_sbuf *b;
  const tl_func *f;
  const tl_print_opts *o;
  int32_t *num; /* printed number + 1 per value id; 0 = not yet numbered */
  int32_t next;
} printer;

static const char *const pipeline_names[] = {"auto", "simple", "multistage", "cutlass"};
static const char *const cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
static const char *const reduce_names[] = {"sum", "max", "min"};
static const char *const atomic_names[] = {"add", "max", "min", "fetch_add"};
static const char *const rand_names[] = {"uniform", "normal", "int"};
static const char *const scan_names[] = {"sum", "max"};
static const char *const arg_names[] = {"max", "min"};
static const char *const sort_names[] = {"ascending", "descending"};

/* Identifier characters of the text form; anything else becomes '_'. */
static void put_ident(tl_sbuf *b, const char *s, bool allow_dot) {
  if (!s || !*s) {
    tl_sbuf_puts(b, "_");
    return;
  }
  if (s[0] >= '0' && s[0] <= '9') tl_sbuf_puts(b, "_");
  for (const char *p = s; *p; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              (allow_dot && c == '.');
    tl_sbuf_putn(b, ok ? &c : "_", 1);
  }
}

void tl_print_double(tl_sbuf *b, double v) {
  if (isnan(v)) {
    tl_sbuf_puts(b, "nan");
    return;
  }
  if (isinf(v)) {
    tl_sbuf_puts(b, v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  /* keep a float literal recognisable: 1 -> 1.0 */
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  tl_sbuf_puts(b, buf);
}

static void put_type(printer *p, const tl_type *t) {
  tl_sbuf *b = p->b;
  const char *dt = tl_dtype_name((tl_dtype)t->dtype);
  switch (t->kind) {
  case TL_KIND_SCALAR: tl_sbuf_puts(b, dt); break;
  case TL_KIND_TILE:
    tl_sbuf_puts(b, "tile<");
    for (int i = 0; i < t->rank && i < TL_MAX_RANK; i++) tl_sbuf_printf(b, "%dx", (int)t->shape[i]);
    tl_sbuf_puts(b, dt);
    if (p->f->print_layouts && t->layout >= 0) tl_sbuf_printf(b, ", #L%d", (int)t->layout);
    tl_sbuf_puts(b, ">");
    break;
  case TL_KIND_TENSOR: tl_sbuf_printf(b, "tensor<%s, %d>", dt, (int)t->rank); break;
  default: tl_sbuf_puts(b, "none"); break;
  }
}

static void put_value(printer *p, int32_t v) {
  const tl_func *f = p->f;
  if (v < 0 || v >= f->values.len) {
    tl_sbuf_printf(p->b, "%%<bad:%d>", (int)v);
    return;
  }
  const tl_value *val = &f->values.data[v];
  if (val->def < 0 && val->region_owner < 0 && val->index >= 0 && val->index < f->params.len &&
      f->params.data[val->index].value == v) {
    tl_sbuf_puts(p->b, "%");
    put_ident(p->b, f->params.data[val->index].name, false);
    return;
  }
  if (!p->num[v]) p->num[v] = ++p->next;
  tl_sbuf_puts(p->b, "%");
  if (val->name && *val->name) {
    put_ident(p->b, val->name, false);
    tl_sbuf_puts(p->b, ".");
  }
  tl_sbuf_printf(p->b, "%d", (int)(p->num[v] - 1));
}

static void put_loc(printer *p, tl_loc loc) {
  if (!p->o || !p->o->print_loc || loc.line <= 0) return;
  tl_ctx *c = p->f->ctx;
  tl_sbuf_puts(p->b, " loc(");
  if (loc.file >= 0 && loc.file < c->files.len) {
    tl_sbuf_puts(p->b, "\"");
    for (const char *s = c->files.data[loc.file].name; *s; s++)
      if (*s != '"' && *s != '\\' && (unsigned char)*s >= 32) tl_sbuf_putn(p->b, s, 1);
    tl_sbuf_puts(p->b, "\":");
  }
  tl_sbuf_printf(p->b, "%d:%d)", (int)loc.line, (int)loc.col);
}

static void indent(printer *p, int depth) {
  for (int i = 0; i < depth; i++) tl_sbuf_puts(p->b, "  ");
}

static void put_operands(printer *p, const tl_op *o, int from, int to) {
  for (int i = from; i < to && i < o->nopnd; i++) {
    if (i > from) tl_sbuf_puts(p->b, ", ");
    put_value(p, o->opnd[i]);
  }
}

static void put_result_types(printer *p, const tl_op *o) {
  tl_sbuf_puts(p->b, " -> (");
  for (int i = 0; i < o->nres; i++) {
    if (i) tl_sbuf_puts(p->b, ", ");
    put_type(p, &p->f->values.data[o->res[i]].type);
  }
  tl_sbuf_puts(p->b, ")");
}

static void put_region(printer *p, const tl_region *r, int depth);

/* `[%i, %j : 64]`: one index per tensor dim, `: len` where the view keeps it. */
static int put_view(printer *p, const tl_op *o, int nidx) {
  tl_sbuf_puts(p->b, "[");
  for (int i = 0; i < nidx; i++) {
    if (i) tl_sbuf_puts(p->b, ", ");
    put_value(p, o->opnd[1 + i]);
    if (i < TL_MAX_RANK && o->dims[i]) tl_sbuf_printf(p->b, " : %d", (int)o->dims[i]);
  }
  tl_sbuf_puts(p->b, "]");
  return 1 + nidx;
}

static int view_rank(printer *p, const tl_op *o, int trailing) {
  int n = o->nopnd - 1 - trailing;
  if (n < 0) n = 0;
  if (o->nopnd > 0) {
    int32_t t = o->opnd[0];
    if (t >= 0 && t < p->f->values.len && p->f->values.data[t].type.kind == TL_KIND_TENSOR &&
        p->f->values.data[t].type.rank < n)
      n = p->f->values.data[t].type.rank;
  }
  if (n > TL_MAX_RANK) n = TL_MAX_RANK;
  return n;
}

/* The scheduling passes' decisions for dot `id` (lib/schedule.h), one group
 * per pass that ran; nothing when none did. */
static void put_sched(printer *p, int32_t id) {
  const tl_dot_sched *d = p->f->sched ? tl_sched_dot((tl_func *)p->f, id, false) : NULL;
  if (!d || !(d->remapped || d->swizzled || d->pipelined || d->scheduled)) return;
  tl_sbuf *b = p->b;
  const char *sep = "";
  tl_sbuf_puts(b, " sched(");
  if (d->remapped) {
    const char *in = tl_sched_instr_name(d->instr);
    if (d->instr == TL_SCHED_MMA_WGMMA) {
      tl_func *pf = (tl_func *)p->f; /* k: 32 bytes of a row */
      int dt = tl_val(pf, tl_op_at(pf, id)->opnd[0])->type.dtype;
      tl_sbuf_printf(b, "mma=wgmma_m64n%dk%d", d->wgmma_n, tl_dot_kstep((tl_dtype)dt) ? tl_dot_kstep((tl_dtype)dt) : 16);
    }
    else tl_sbuf_printf(b, "mma=%s", in ? in : "none");
    tl_sbuf_printf(b, " warps=%dx%d", d->warps_m, d->warps_n);
    sep = " ";
  }
  if (d->swizzled) {
    tl_sbuf_printf(b, "%sswizzle=%d,%d", sep, d->swizzle_bytes[0], d->swizzle_bytes[1]);
    if (d->pad_bytes[0] || d->pad_bytes[1]) tl_sbuf_printf(b, " pad=%d,%d", d->pad_bytes[0], d->pad_bytes[1]);
    tl_sbuf_printf(b, " conflicts=%d/%d,%d/%d", d->conflicts[0][0], d->conflicts[0][1], d->conflicts[1][0],
                   d->conflicts[1][1]);
    sep = " ";
  }
  if (d->pipelined) {
    const char *st = d->streamed[0] && d->streamed[1] ? "a,b" : d->streamed[0] ? "a" : d->streamed[1] ? "b" : "none";
    tl_sbuf_printf(b, "%sstream=%s stages=%d", sep, st, d->stages);
    if (d->prologue[0] || d->prologue[1]) tl_sbuf_printf(b, " prologue=%d,%d", d->prologue[0], d->prologue[1]);
    sep = " ";
  }
  if (d->scheduled) tl_sbuf_printf(b, "%s%s", sep, d->lookahead ? "lookahead" : "nolookahead");
  tl_sbuf_puts(b, ")");
}

/* A string attribute (require's text and message) in double quotes: '"' and '\\' escaped with '\\',
 * other bytes outside printable ASCII as \xHH (ir_parse.c reads them back). */
static void put_string(tl_sbuf *b, const char *s) {
  tl_sbuf_puts(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') tl_sbuf_printf(b, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f) tl_sbuf_printf(b, "\\x%02x", c);
    else tl_sbuf_printf(b, "%c", c);
  }
  tl_sbuf_puts(b, "\"");
}

static void put_op(printer *p, int32_t id, int depth) {
  const tl_func *f = p->f;
  const tl_op *o = &f->ops.data[id];
  tl_sbuf *b = p->b;
  indent(p, depth);
  for (int i = 0; i < o->nres; i++) {
    if (i) tl_sbuf_puts(b, ", ");
    put_value(p, o->res[i]);
  }
  if (o->nres) tl_sbuf_puts(b, " = ");
  const char *name = o->opc < TL_NUM_OPS ? tl_opinfo_table[o->opc].name : "?";
  tl_sbuf_puts(b, name);
  bool type_suffix = o->nres == 1;
  switch (o->opc) {
  case TL_OP_const: {
    const tl_type *t = &f->values.data[o->res[0]].type;
    tl_sbuf_puts(b, " ");
    if (o->nres == 1 && tl_dtype_is_float((tl_dtype)t->dtype)) tl_print_double(b, o->fval);
    else tl_sbuf_printf(b, "%lld", (long long)o->ival);
    break;
  }
  case TL_OP_dim:
    tl_sbuf_puts(b, " ");
    put_operands(p, o, 0, o->nopnd);
    tl_sbuf_printf(b, ", %d", (int)o->axis);
    break;
  case TL_OP_program_id:
  case TL_OP_num_programs: tl_sbuf_printf(b, " %d", (int)o->axis); break;
  case TL_OP_cmp:
    tl_sbuf_printf(b, " %s ", (unsigned)o->kind < 6 ? cmp_names[o->kind] : "?");
    put_operands(p, o, 0, o->nopnd);
    break;
  case TL_OP_reduce:
    tl_sbuf_printf(b, " %s ", (unsigned)o->kind < 3 ? reduce_names[o->kind] : "?");
    put_operands(p, o, 0, o->nopnd);
    tl_sbuf_printf(b, ", axis=%d", (int)o->axis);
    break;
  case TL_OP_expand_dims:
    tl_sbuf_puts(b, " ");
    put_operands(p, o, 0, o->nopnd);
    tl_sbuf_printf(b, ", axis=%d", (int)o->axis);
    break;
  case TL_OP_load: {
    if (o->nopnd < 1) break;
    tl_sbuf_puts(b, " ");
    put_value(p, o->opnd[0]);
    int used = put_view(p, o, view_rank(p, o, 0));
    if (used < o->nopnd) {
      tl_sbuf_puts(b, ", other ");
      put_operands(p, o, used, o->nopnd);
    }
    break;
  }
  case TL_OP_permute:
  case TL_OP_slice: {
    tl_sbuf_puts(b, " ");
    put_operands(p, o, 0, o->nopnd);
    const tl_type *t = &f->values.data[o->res[0]].type;
    tl_sbuf_puts(b, o->opc == TL_OP_slice ? ", starts=[" : ", order=[");
    for (int d = 0; d < t->rank && d < TL_MAX_RANK; d++) tl_sbuf_printf(b, "%s%d", d ? ", " : "", (int)o->dims[d]);
    tl_sbuf_puts(b, "]");
    break;
  }
  case TL_OP_cat:
    tl_sbuf_puts(b, " ");
    put_operands(p, o, 0, o->nopnd);
    tl_sbuf_printf(b, ", axis=%d", (int)o->axis);
    break;
  case TL_OP_sort:
  case TL_OP_scan:
  case TL_OP_argreduce:
    tl_sbuf_printf(b, " %s ", (unsigned)o->kind < 2 ? (o->opc == TL_OP_scan ? scan_names : o->opc == TL_OP_sort ? sort_names : arg_names)[o->kind] : "?");
    put_operands(p, o, 0, o->nopnd);
    tl_sbuf_printf(b, ", axis=%d", (int)o->axis);
    break;
  case TL_OP_require:
    tl_sbuf_puts(b, " ");
    put_operands(p, o, 0, o->nopnd);
    tl_sbuf_puts(b, ", ");
    put_string(b, o->req_text ? o->req_text : "");
    if (o->req_msg) {
      tl_sbuf_puts(b, ", ");
      put_string(b, o->req_msg);
    }
    break;
  case TL_OP_dot:
    tl_sbuf_puts(b, o->kind == TL_DOT_TF32 ? " tf32 " : " ");
    put_operands(p, o, 0, o->nopnd);
    break;
  case TL_OP_rand:
    tl_sbuf_printf(b, " %s ", (unsigned)o->kind < 3 ? rand_names[o->kind] : "?");
    put_operands(p, o, 0, o->nopnd);
    break;
  case TL_OP_atomic:
  case TL_OP_store: {
    if (o->nopnd < 1) break;
    if (o->opc == TL_OP_atomic) tl_sbuf_printf(b, " %s", (unsigned)o->kind < 4 ? atomic_names[o->kind] : "?");
    tl_sbuf_puts(b, " ");
    put_value(p, o->opnd[0]);
    int used = put_view(p, o, view_rank(p, o, 1));
    if (used < o->nopnd) {
      tl_sbuf_puts(b, ", ");
      put_operands(p, o, used, o->nopnd);
    }
    break;
  }
  case TL_OP_for: {
    type_suffix = false;
    const tl_region *r = o->nregions > 0 ? &o->regions[0] : NULL;
    tl_sbuf_puts(b, " ");
    if (r && r->args.len > 0) put_value(p, r->args.data[0]);
    else tl_sbuf_puts(b, "%_");
    tl_sbuf_puts(b, " = ");
    put_operands(p, o, 0, 1);
    tl_sbuf_puts(b, " to ");
    put_operands(p, o, 1, 2);
    tl_sbuf_puts(b, " step ");
    put_operands(p, o, 2, 3);
    if (o->nopnd > 3) {
      tl_sbuf_puts(b, " iter(");
      for (int i = 3; i < o->nopnd; i++) {
        if (i > 3) tl_sbuf_puts(b, ", ");
        if (r && i - 2 < r->args.len) put_value(p, r->args.data[i - 2]);
        else tl_sbuf_puts(b, "%_");
        tl_sbuf_puts(b, " = ");
        put_value(p, o->opnd[i]);
      }
      tl_sbuf_puts(b, ")");
    }
    if (o->nres) put_result_types(p, o);
    tl_sbuf_puts(b, " {\n");
    if (r) put_region(p, r, depth + 1);
    indent(p, depth);
    tl_sbuf_puts(b, "}");
    break;
  }
  case TL_OP_if: {
    type_suffix = false;
    tl_sbuf_puts(b, " ");
    put_operands(p, o, 0, o->nopnd);
    if (o->nres) put_result_types(p, o);
    tl_sbuf_puts(b, " {\n");
    if (o->nregions > 0) put_region(p, &o->regions[0], depth + 1);
    indent(p, depth);
    tl_sbuf_puts(b, "} else {\n");
    if (o->nregions > 1) put_region(p, &o->regions[1], depth + 1);
    indent(p, depth);
    tl_sbuf_puts(b, "}");
    break;
  }
  default:
    if (o->nopnd) {
      tl_sbuf_puts(b, " ");
      put_operands(p, o, 0, o->nopnd);
    }
    break;
  }
  if (type_suffix) {
    tl_sbuf_puts(b, " : ");
    put_type(p, &f->values.data[o->res[0]].type);
  }
  if (o->opc == TL_OP_dot) put_sched(p, id);
  put_loc(p, o->loc);
  tl_sbuf_puts(b, "\n");
}

static void put_region(printer *p, const tl_region *r, int depth) {
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    if (id < 0 || id >= p->f->ops.len) continue;
    put_op(p, id, depth);
  }
}

static void put_dimspec(printer *p, const tl_dimspec *d) {
  if (d->is_const) tl_sbuf_printf(p->b, "%lld", (long long)d->value);
  else if (d->sym >= 0 && d->sym < p->f->syms.len) put_ident(p->b, p->f->syms.data[d->sym].name, false);
  else tl_sbuf_puts(p->b, "?");
}

void tl_print_func_opts(tl_sbuf *b, const tl_func *f, const tl_print_opts *o) {
  static const tl_print_opts none = {0};
  printer p = {b, f, o ? o : &none, NULL, 0};
  p.num = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(f->values.len + 1));
  tl_sbuf_puts(b, "kernel @");
  put_ident(b, f->name, false);
  tl_sbuf_puts(b, "(");
  for (int i = 0; i < f->params.len; i++) {
    const tl_param *pa = &f->params.data[i];
    if (i) tl_sbuf_puts(b, ", ");
    tl_sbuf_puts(b, "%");
    put_ident(b, pa->name, false);
    tl_sbuf_puts(b, ": ");
    if (pa->is_tensor) {
      tl_sbuf_printf(b, "tensor<%s>[", tl_dtype_name(pa->dtype));
      for (int d = 0; d < pa->rank && d < TL_MAX_RANK; d++) {
        if (d) tl_sbuf_puts(b, ", ");
        put_dimspec(&p, &pa->dims[d]);
      }
      tl_sbuf_puts(b, "]");
      if (pa->zeroed) tl_sbuf_puts(b, " zeroed");
    } else {
      tl_sbuf_puts(b, tl_dtype_name(pa->dtype));
    }
    put_loc(&p, pa->loc);
  }
  tl_sbuf_puts(b, ")");
  put_loc(&p, f->loc);
  if (f->consts.len) {
    tl_sbuf_puts(b, "\n    tiles(");
    for (int i = 0; i < f->consts.len; i++) {
      const tl_tileconst *tc = &f->consts.data[i];
      if (i) tl_sbuf_puts(b, ", ");
      put_ident(b, tc->name, false);
      tl_sbuf_printf(b, " = %lld", (long long)tc->value);
      if (tc->overridden) tl_sbuf_puts(b, " overridden");
      put_loc(&p, tc->loc);
    }
    tl_sbuf_puts(b, ")");
  }
  if (f->pipeline || f->warps || f->stages || f->maxnreg || f->access_split || f->row_ahead) {
    tl_sbuf_puts(b, f->consts.len ? " attrs(" : "\n    attrs(");
    const char *sep = "";
    if (f->pipeline) {
      if ((unsigned)f->pipeline < 4) tl_sbuf_printf(b, "pipeline = %s", pipeline_names[f->pipeline]);
      else tl_sbuf_printf(b, "pipeline = %d", f->pipeline);
      sep = ", ";
    }
    if (f->warps) {
      tl_sbuf_printf(b, "%swarps = %d", sep, f->warps);
      sep = ", ";
    }
    if (f->stages) {
      tl_sbuf_printf(b, "%sstages = %d", sep, f->stages);
      sep = ", ";
    }
    if (f->maxnreg) {
      tl_sbuf_printf(b, "%smaxnreg = %d", sep, f->maxnreg);
      sep = ", ";
    }
    if (f->access_split) {
      tl_sbuf_printf(b, "%saccess_split = 1", sep);
      sep = ", ";
    }
    if (f->row_ahead) tl_sbuf_printf(b, "%srow_ahead = %d", sep, f->row_ahead);
    tl_sbuf_puts(b, ")");
  }
  tl_sbuf_puts(b, " {\ngrid {\n");
  put_region(&p, &f->grid, 1);
  tl_sbuf_puts(b, "}\nbody {\n");
  put_region(&p, &f->body, 1);
  tl_sbuf_puts(b, "}\n");
  if (f->print_layouts) f->print_layouts(b, f);
  tl_sbuf_puts(b, "}\n");
}

void tl_print_func(tl_sbuf *b, const tl_func *f) { tl_print_func_opts(b, f, NULL); }

void tl_print_module_opts(tl_sbuf *b, const tl_module *m, const tl_print_opts *o) {
  for (int i = 0; i < m->funcs.len; i++) {
    if (i) tl_sbuf_puts(b, "\n");
    tl_print_func_opts(b, m->funcs.data[i], o);
  }
}

void tl_print_module(tl_sbuf *b, const tl_module *m) { tl_print_module_opts(b, m, NULL); }
