/* ast_dump.c: the AST as an indented tree (--emit=ast).
 * requires: a parsed program (checked or not); keeps: the AST unchanged;
 * prints each expression's type (": tile<...>") once the checker set it. */
#include "ast.h"

#include <string.h>

static void indent(tl_sbuf *b, int depth) {
  for (int i = 0; i < depth; i++) tl_sbuf_puts(b, "  ");
}

static const char *tok_text(fe_tok_kind k) {
  const char *s = fe_tok_name(k);
  return s;
}

static void put_type(tl_sbuf *b, const fe_expr *e) {
  if (e->type.kind == TL_KIND_NONE) {
    tl_sbuf_puts(b, "\n");
    return;
  }
  char buf[96];
  tl_type_str(&e->type, buf, sizeof buf);
  tl_sbuf_printf(b, " : %s", buf);
  if (e->is_const && e->type.kind == TL_KIND_SCALAR) {
    if (tl_dtype_is_float((tl_dtype)e->type.dtype))
      tl_sbuf_printf(b, " = %g", e->cfval);
    else
      tl_sbuf_printf(b, " = %lld", (long long)e->cival);
  }
  tl_sbuf_puts(b, "\n");
}

static void dump_expr(tl_sbuf *b, const fe_expr *e, int d);

static void dump_item(tl_sbuf *b, const fe_item *it, int d) {
  indent(b, d);
  switch (it->kind) {
  case IT_ALL: tl_sbuf_puts(b, "all ':'\n"); break;
  case IT_NEWAXIS: tl_sbuf_puts(b, "None\n"); break;
  case IT_EXPR:
    tl_sbuf_puts(b, "index\n");
    dump_expr(b, it->lo, d + 1);
    break;
  case IT_RANGE:
    tl_sbuf_puts(b, "range\n");
    dump_expr(b, it->lo, d + 1);
    dump_expr(b, it->hi, d + 1);
    break;
  }
}

static void dump_expr(tl_sbuf *b, const fe_expr *e, int d) {
  if (!e) return;
  indent(b, d);
  switch (e->kind) {
  case EX_ERROR: tl_sbuf_puts(b, "<error>\n"); return;
  case EX_INT: tl_sbuf_printf(b, "int %lld", (long long)e->ival); break;
  case EX_FLOAT: tl_sbuf_printf(b, "float %.17g", e->fval); break;
  case EX_BOOL: tl_sbuf_printf(b, "bool %s", e->ival ? "true" : "false"); break;
  case EX_STRING: tl_sbuf_printf(b, "string \"%s\"\n", e->name); return;
  case EX_NAME: tl_sbuf_printf(b, "name %s", e->name); break;
  case EX_UNARY: tl_sbuf_printf(b, "unary %s", tok_text(e->op)); break;
  case EX_BINARY: tl_sbuf_printf(b, "binary %s", tok_text(e->op)); break;
  case EX_TERNARY: tl_sbuf_puts(b, "ternary"); break;
  case EX_CALL:
    tl_sbuf_printf(b, "call %s", e->name);
    if (e->has_targ) tl_sbuf_printf(b, "<%s>", tl_dtype_name(e->targ));
    break;
  case EX_INDEX: tl_sbuf_puts(b, "index"); break;
  case EX_LIST: tl_sbuf_puts(b, "list"); break;
  }
  tl_sbuf_printf(b, " @%d:%d", e->loc.line, e->loc.col);
  put_type(b, e);
  dump_expr(b, e->a, d + 1);
  dump_expr(b, e->b, d + 1);
  dump_expr(b, e->c, d + 1);
  if (e->kind == EX_LIST)
    for (int i = 0; i < e->nargs; i++) dump_expr(b, e->args[i], d + 1);
  if (e->kind == EX_CALL) {
    if (e->has_shape) {
      indent(b, d + 1);
      tl_sbuf_puts(b, "shape\n");
      for (int i = 0; i < e->nshape; i++) dump_expr(b, e->shape[i], d + 2);
    }
    for (int i = 0; i < e->nargs; i++) dump_expr(b, e->args[i], d + 1);
    for (int i = 0; i < e->nkw; i++) {
      indent(b, d + 1);
      tl_sbuf_printf(b, "keyword %s\n", e->kwnames[i]);
      dump_expr(b, e->kwargs[i], d + 2);
    }
  }
  for (int i = 0; i < e->nitems; i++) dump_item(b, &e->items[i], d + 1);
}

static void dump_block(tl_sbuf *b, const fe_block *blk, int d);

static void dump_stmt(tl_sbuf *b, const fe_stmt *s, int d) {
  indent(b, d);
  switch (s->kind) {
  case ST_ASSIGN:
    tl_sbuf_printf(b, "assign %s %s @%d:%d\n", s->name, tok_text(s->op), s->loc.line, s->loc.col);
    dump_expr(b, s->expr, d + 1);
    break;
  case ST_EXPR:
    tl_sbuf_printf(b, "expr @%d:%d\n", s->loc.line, s->loc.col);
    dump_expr(b, s->expr, d + 1);
    break;
  case ST_FOR:
    tl_sbuf_printf(b, "for %s @%d:%d\n", s->name, s->loc.line, s->loc.col);
    dump_expr(b, s->lo, d + 1);
    dump_expr(b, s->hi, d + 1);
    if (s->step) dump_expr(b, s->step, d + 1);
    dump_block(b, s->body, d + 1);
    break;
  case ST_IF:
    tl_sbuf_printf(b, "if @%d:%d\n", s->loc.line, s->loc.col);
    dump_expr(b, s->expr, d + 1);
    dump_block(b, s->body, d + 1);
    if (s->els) {
      indent(b, d);
      tl_sbuf_puts(b, "else\n");
      dump_block(b, s->els, d + 1);
    }
    break;
  }
}

static void dump_block(tl_sbuf *b, const fe_block *blk, int d) {
  indent(b, d);
  tl_sbuf_puts(b, "block\n");
  if (!blk) return;
  for (int i = 0; i < blk->n; i++) dump_stmt(b, blk->stmts[i], d + 1);
}

void fe_dump_ast(tl_sbuf *b, tl_ctx *c, const fe_program *p) {
  (void)c;
  for (int i = 0; i < p->kernels.len; i++) {
    const fe_kernel *k = p->kernels.data[i];
    tl_sbuf_printf(b, "kernel %s @%d:%d\n", k->name, k->loc.line, k->loc.col);
    for (int j = 0; j < k->attrs.len; j++) {
      const fe_attr *a = &k->attrs.data[j];
      if (a->has_int) {
        tl_sbuf_printf(b, "  attr @%s(%lld)\n", a->name, (long long)a->ival);
      } else if (a->word) {
        tl_sbuf_printf(b, "  attr @%s(%s)\n", a->name, a->word);
      } else {
        tl_sbuf_printf(b, "  attr @%s =\n", a->name);
        dump_expr(b, a->value, 2);
      }
    }
    for (int j = 0; j < k->params.len; j++) {
      const fe_param *p2 = &k->params.data[j];
      if (!p2->is_tensor) {
        tl_sbuf_printf(b, "  param %s: %s\n", p2->name, tl_dtype_name(p2->dtype));
        continue;
      }
      tl_sbuf_printf(b, "  param %s: tensor<%s>[", p2->name, tl_dtype_name(p2->dtype));
      for (int d = 0; d < p2->rank; d++) {
        if (d) tl_sbuf_puts(b, ", ");
        if (p2->dims[d].name)
          tl_sbuf_puts(b, p2->dims[d].name);
        else
          tl_sbuf_printf(b, "%lld", (long long)p2->dims[d].value);
      }
      tl_sbuf_puts(b, "]\n");
    }
    for (int j = 0; j < k->consts.len; j++) {
      tl_sbuf_printf(b, "  tile %s =\n", k->consts.data[j].name);
      dump_expr(b, k->consts.data[j].value, 2);
    }
    if (k->has_grid) {
      tl_sbuf_puts(b, "  grid\n");
      for (int j = 0; j < k->grid.len; j++) dump_expr(b, k->grid.data[j], 2);
    }
    dump_block(b, k->body, 1);
  }
}
