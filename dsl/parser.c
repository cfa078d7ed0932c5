/* parser.c: tokens -> AST by recursive descent (grammar in docs/language.md).
 * requires: a token stream ending in TK_EOF; keeps: every node located at
 * its naming token; reports: syntax errors, then resynchronizes at ';' and
 * '}' (one error per bad statement), nesting deeper than FE_MAX_DEPTH. */
#include "ast.h"

#include <stdio.h>
#include <string.h>

typedef struct parser {
  tl_ctx *ctx;
  const fe_token *toks;
  int ntoks, pos;
  int depth;   /* expression nesting */
  int bdepth;  /* block nesting */
  bool panic;  /* an error was reported; quiet until resynchronized */
} parser;

static const fe_token *peek(parser *P) { return &P->toks[P->pos]; }
static const fe_token *peek_at(parser *P, int k) {
  int i = P->pos + k;
  return &P->toks[i < P->ntoks ? i : P->ntoks - 1];
}
static bool at(parser *P, fe_tok_kind k) { return peek(P)->kind == k; }
static const fe_token *advance(parser *P) {
  const fe_token *t = peek(P);
  if (t->kind != TK_EOF) P->pos++;
  return t;
}
static bool accept(parser *P, fe_tok_kind k) {
  if (!at(P, k)) return false;
  advance(P);
  return true;
}

static void describe(const fe_token *t, char *buf, size_t n) {
  if (t->kind == TK_EOF)
    snprintf(buf, n, "end of file");
  else
    snprintf(buf, n, "'%.*s'", t->len > 40 ? 40 : (int)t->len, t->text);
}

/* After a syntax error at a later line than the previous token, which a '//' comment followed: a
 * Python user's floor division `n // 2` made the rest of the line a comment. */
static void note_slash_comment(parser *P) {
  if (P->pos == 0) return;
  const fe_token *prev = &P->toks[P->pos - 1];
  if (!prev->slash_col || prev->loc.line >= peek(P)->loc.line) return;
  tl_loc at = prev->loc;
  at.col = prev->slash_col;
  tl_note(P->ctx, at, "'//' starts a comment; division is '/' (it truncates toward zero for integers)");
}

/* Report "expected WHAT, found X" at the current token (once per panic). */
static void error_expected(parser *P, const char *what) {
  if (P->panic) return;
  char found[64];
  describe(peek(P), found, sizeof found);
  tl_error(P->ctx, peek(P)->loc, "expected %s, found %s", what, found);
  note_slash_comment(P);
  P->panic = true;
}

static bool expect(parser *P, fe_tok_kind k, const char *what) {
  if (accept(P, k)) return true;
  /* A missing ';' at the end of a line is reported where it belongs: just
   * after the previous token (as clang does), not at the next line's token. */
  if (k == TK_SEMI && !P->panic && P->pos > 0) {
    const fe_token *prev = &P->toks[P->pos - 1];
    if (prev->loc.line > 0 && prev->loc.line < peek(P)->loc.line) {
      char found[64];
      describe(peek(P), found, sizeof found);
      tl_loc at = prev->loc;
      at.col += prev->len;
      tl_error(P->ctx, at, "expected %s, found %s", what ? what : fe_tok_name(k), found);
      note_slash_comment(P);
      P->panic = true;
      return false;
    }
  }
  error_expected(P, what ? what : fe_tok_name(k));
  return false;
}

/* expect(), and when it reports the token missing now (not in a panic) at a Python (Triton) form on the
 * statement's line, a note with this language's form.  expr_stmt: the statement so far is an expression,
 * so an '=' here assigns into a tile (not after an assignment: x = y = 0 is another mistake). */
static bool expect_noting_python(parser *P, fe_tok_kind k, const char *what, bool expr_stmt) {
  int errors = P->ctx->nerrors;
  if (expect(P, k, what)) return true;
  const fe_token *t = peek(P);
  if (P->ctx->nerrors == errors) return false;                                /* (a panic was on) */
  if (P->pos > 0 && P->toks[P->pos - 1].loc.line < t->loc.line) return false; /* (a ';' missing at a line's end) */
  const char *note = NULL;
  if (t->kind == TK_AT) note = "there is no '@' operator: dot(a, b) multiplies two tiles (dot(a, b, acc) adds to acc)";
  else if (t->kind == TK_IF) note = "Python's 'a if c else b' is 'c ? a : b' for a scalar c, where(c, a, b) for a tile";
  else if (t->kind == TK_ASSIGN && expr_stmt)
    note = "tiles are values: no element or slice of one is assigned; where(mask, v, t) makes the changed tile";
  else if (t->kind == TK_COLON) note = "a block is '{ ... }', with no ':' before it (indentation is not read)";
  if (note) tl_note(P->ctx, t->loc, "%s", note);
  return false;
}

/* Skip to just after the next ';' or to the next '}' / EOF at this level. */
static void sync_stmt(parser *P) {
  int nest = 0;
  while (!at(P, TK_EOF)) {
    fe_tok_kind k = peek(P)->kind;
    if (k == TK_SEMI && nest == 0) {
      advance(P);
      break;
    }
    if (k == TK_LBRACE) nest++;
    if (k == TK_RBRACE) {
      if (nest == 0) break;
      nest--;
      advance(P);
      if (nest == 0 && !at(P, TK_ELSE)) break; /* a whole nested block was skipped */
      continue;
    }
    advance(P);
  }
  P->panic = false;
}

static void *new0(parser *P, size_t n) { return tl_alloc(&P->ctx->arena, n); }

static fe_expr *new_expr(parser *P, fe_expr_kind k, tl_loc loc) {
  fe_expr *e = new0(P, sizeof *e);
  e->kind = k;
  e->loc = loc;
  return e;
}

static fe_expr *parse_expr(parser *P);

static bool enter_at(parser *P, int *depth, tl_loc loc, const char *what) {
  if (++*depth > FE_MAX_DEPTH) {
    if (!P->panic) tl_error(P->ctx, loc, "%s nested too deeply (the limit is %d levels)", what, FE_MAX_DEPTH);
    P->panic = true;
    return false;
  }
  return true;
}
static bool enter(parser *P, tl_loc loc, const char *what) { return enter_at(P, &P->depth, loc, what); }
static void leave(parser *P) { P->depth--; }

/* dtype name at the current token, or TL_VOID (no error). */
static tl_dtype peek_dtype(parser *P) {
  const fe_token *t = peek(P);
  if (t->kind != TK_IDENT) return TL_VOID;
  return tl_dtype_from_name(t->text, (size_t)t->len);
}

/* The element type a Triton / NumPy / torch spelling means, for a note (NULL: none). */
static const char *dtype_alias(const char *name) {
  static const char *const aliases[][2] = {
      {"float16", "f16"}, {"half", "f16"}, {"fp16", "f16"}, {"bfloat16", "bf16"}, {"float32", "f32"},
      {"float", "f32"}, {"fp32", "f32"}, {"int8", "i8"}, {"int16", "i16"}, {"int32", "i32"}, {"int", "i32"},
      {"int64", "i64"}, {"uint8", "u8"}, {"bool", "i1"}, {"int1", "i1"}, {"float8e4nv", "f8e4m3"},
      {"float8_e4m3fn", "f8e4m3"}, {"float8e5", "f8e5m2"}, {"float8_e5m2", "f8e5m2"},
  };
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcmp(aliases[i][0], name)) return aliases[i][1];
  return NULL;
}

static tl_dtype parse_dtype(parser *P, tl_loc *loc) {
  *loc = peek(P)->loc;
  tl_dtype d = peek_dtype(P);
  if (d == TL_VOID) {
    bool quiet = P->panic;
    error_expected(P, "an element type (i1 i8 i16 i32 i64 u8 f16 bf16 f32 f8e4m3 f8e5m2)");
    const fe_token *t = peek(P);
    const char *alias = t->kind == TK_IDENT ? dtype_alias(t->str) : NULL;
    if (!quiet && alias) tl_note(P->ctx, t->loc, "'%s' is %s here", t->str, alias);
    if (!quiet && t->kind == TK_IDENT && !strcmp(t->str, "constexpr"))
      tl_note(P->ctx, t->loc, "compile-time constants (Triton's tl.constexpr) are declared after the parameters: "
                              "tiles(NAME = value)");
    return TL_VOID;
  }
  advance(P);
  return d;
}

static bool takes_type_arg(const char *name) {
  return !strcmp(name, "cast") || !strcmp(name, "zeros") || !strcmp(name, "full") || !strcmp(name, "iota") ||
         !strcmp(name, "bitcast");
}

typedef TL_VEC(fe_expr *) expr_vec;

/* '(' args ')' with optional `name = value` keyword arguments. */
static void parse_call_args(parser *P, fe_expr *e) {
  expr_vec args = {0}, kws = {0};
  TL_VEC(const char *) kwn = {0};
  TL_VEC(tl_loc) kwl = {0};
  if (!at(P, TK_RPAREN)) {
    do {
      if (at(P, TK_IDENT) && peek_at(P, 1)->kind == TK_ASSIGN) {
        const fe_token *n = advance(P);
        advance(P);
        tl_vec_push(&P->ctx->arena, &kwn, n->str);
        tl_vec_push(&P->ctx->arena, &kwl, n->loc);
        tl_vec_push(&P->ctx->arena, &kws, parse_expr(P));
      } else {
        if (kws.len && !P->panic) {
          tl_error(P->ctx, peek(P)->loc, "positional argument after a keyword argument");
          P->panic = true;
        }
        tl_vec_push(&P->ctx->arena, &args, parse_expr(P));
      }
    } while (accept(P, TK_COMMA));
  }
  expect(P, TK_RPAREN, "')' after the arguments");
  e->args = args.data;
  e->nargs = args.len;
  e->kwargs = kws.data;
  e->kwnames = kwn.data;
  e->kwlocs = kwl.data;
  e->nkw = kws.len;
}

static fe_expr *parse_primary(parser *P) {
  const fe_token *t = peek(P);
  fe_expr *e;
  switch (t->kind) {
  case TK_INT:
    advance(P);
    e = new_expr(P, EX_INT, t->loc);
    e->ival = t->ival;
    return e;
  case TK_FLOAT:
    advance(P);
    e = new_expr(P, EX_FLOAT, t->loc);
    e->fval = t->fval;
    return e;
  case TK_INF:
    advance(P);
    e = new_expr(P, EX_FLOAT, t->loc);
    e->fval = __builtin_inf();
    return e;
  case TK_TRUE:
  case TK_FALSE:
    advance(P);
    e = new_expr(P, EX_BOOL, t->loc);
    e->ival = t->kind == TK_TRUE;
    return e;
  case TK_STRING:
    advance(P);
    e = new_expr(P, EX_STRING, t->loc);
    e->name = t->str;
    return e;
  case TK_LPAREN: {
    advance(P);
    e = parse_expr(P);
    expect(P, TK_RPAREN, "')'");
    return e;
  }
  case TK_IDENT: {
    advance(P);
    if (takes_type_arg(t->str) && at(P, TK_LT)) {
      e = new_expr(P, EX_CALL, t->loc);
      e->name = t->str;
      advance(P);
      e->has_targ = true;
      e->targ = parse_dtype(P, &e->targ_loc);
      expect(P, TK_GT, "'>' after the element type");
      if (at(P, TK_LBRACK) && strcmp(t->str, "cast") != 0) {
        advance(P);
        e->has_shape = true;
        expr_vec shape = {0};
        do tl_vec_push(&P->ctx->arena, &shape, parse_expr(P));
        while (accept(P, TK_COMMA));
        expect(P, TK_RBRACK, "']' after the shape");
        e->shape = shape.data;
        e->nshape = shape.len;
      }
      if (accept(P, TK_LPAREN)) parse_call_args(P, e);
      return e;
    }
    if (at(P, TK_LPAREN)) {
      advance(P);
      e = new_expr(P, EX_CALL, t->loc);
      e->name = t->str;
      parse_call_args(P, e);
      return e;
    }
    e = new_expr(P, EX_NAME, t->loc);
    e->name = t->str;
    return e;
  }
  case TK_LBRACK: { /* [e, ...]: a list, an argument of reshape() / permute() */
    advance(P);
    e = new_expr(P, EX_LIST, t->loc);
    expr_vec items = {0};
    if (!at(P, TK_RBRACK)) {
      do tl_vec_push(&P->ctx->arena, &items, parse_expr(P));
      while (accept(P, TK_COMMA));
    }
    expect(P, TK_RBRACK, "']' after the list");
    e->args = items.data;
    e->nargs = items.len;
    return e;
  }
  default:
    error_expected(P, "an expression");
    return new_expr(P, EX_ERROR, t->loc);
  }
}

static fe_item parse_item(parser *P) {
  fe_item it;
  memset(&it, 0, sizeof it);
  it.loc = peek(P)->loc;
  if (at(P, TK_COLON) && (peek_at(P, 1)->kind == TK_COMMA || peek_at(P, 1)->kind == TK_RBRACK)) {
    advance(P);
    it.kind = IT_ALL;
    return it;
  }
  if (accept(P, TK_NONE)) {
    it.kind = IT_NEWAXIS;
    return it;
  }
  it.lo = parse_expr(P);
  if (accept(P, TK_COLON)) {
    it.kind = IT_RANGE;
    it.hi = parse_expr(P);
  } else {
    it.kind = IT_EXPR;
  }
  return it;
}

static fe_expr *parse_postfix(parser *P) {
  fe_expr *e = parse_primary(P);
  while (at(P, TK_LBRACK)) {
    const fe_token *lb = advance(P);
    fe_expr *ix = new_expr(P, EX_INDEX, lb->loc);
    ix->a = e;
    TL_VEC(fe_item) items = {0};
    do tl_vec_push(&P->ctx->arena, &items, parse_item(P));
    while (accept(P, TK_COMMA));
    expect(P, TK_RBRACK, "']'");
    ix->items = items.data;
    ix->nitems = items.len;
    e = ix;
  }
  return e;
}

static fe_expr *parse_unary(parser *P) {
  const fe_token *t = peek(P);
  fe_tok_kind nk = peek_at(P, 1)->kind;
  if (t->kind == TK_IDENT && !strcmp(t->str, "not") &&
      (nk == TK_IDENT || nk == TK_TRUE || nk == TK_FALSE || nk == TK_NOT)) {
    /* Python's `not x`: an error naming '!', then parsed as '!' */
    if (!P->panic) tl_error(P->ctx, t->loc, "'not' is not an operator here: write '!'");
    advance(P);
    fe_expr *e = new_expr(P, EX_UNARY, t->loc);
    e->op = TK_NOT;
    e->a = parse_unary(P);
    return e;
  }
  if (t->kind == TK_MINUS || t->kind == TK_NOT || t->kind == TK_PLUS) {
    advance(P);
    if (!enter(P, t->loc, "expression")) {
      leave(P);
      return new_expr(P, EX_ERROR, t->loc);
    }
    fe_expr *a = parse_unary(P);
    leave(P);
    if (t->kind == TK_PLUS) return a;
    fe_expr *e = new_expr(P, EX_UNARY, t->loc);
    e->op = t->kind;
    e->a = a;
    return e;
  }
  return parse_postfix(P);
}

/* Binary precedence, low to high (C's): || && | ^ & (== !=) (< <= > >=)
 * (<< >>) (+ -) (* / %). */
static int precedence(fe_tok_kind k) {
  switch (k) {
  case TK_OROR: return 1;
  case TK_ANDAND: return 2;
  case TK_PIPE: return 3;
  case TK_CARET: return 4;
  case TK_AMP: return 5;
  case TK_EQ: case TK_NE: return 6;
  case TK_LT: case TK_LE: case TK_GT: case TK_GE: return 7;
  case TK_SHL: case TK_SHR: return 8;
  case TK_PLUS: case TK_MINUS: return 9;
  case TK_STAR: case TK_SLASH: case TK_PERCENT: return 10;
  default: return 0;
  }
}

/* Python's `and` / `or` where an operator is expected: an error naming the operator to write, then
 * parsed as that operator (one error, not a cascade). */
static fe_tok_kind python_logical(const fe_token *t) {
  if (t->kind != TK_IDENT || (strcmp(t->str, "and") != 0 && strcmp(t->str, "or") != 0)) return TK_EOF;
  return t->str[0] == 'a' ? TK_ANDAND : TK_OROR;
}

static fe_expr *parse_binary(parser *P, int min_prec) {
  fe_expr *lhs = parse_unary(P);
  for (;;) {
    const fe_token *t = peek(P);
    fe_tok_kind kind = t->kind;
    fe_tok_kind py = python_logical(t);
    if (py != TK_EOF) kind = py;
    int prec = precedence(kind);
    if (prec == 0 || prec < min_prec) return lhs;
    advance(P);
    if (py != TK_EOF && !P->panic)
      tl_error(P->ctx, t->loc, "'%s' is not an operator here: write '%s' (i1 scalars and tiles alike; Triton's '%s')",
               t->str, py == TK_ANDAND ? "&&" : "||", py == TK_ANDAND ? "&" : "|");
    if (t->kind == TK_STAR && at(P, TK_STAR) && peek(P)->loc.line == t->loc.line &&
        peek(P)->loc.col == t->loc.col + 1) {
      if (!P->panic)
        tl_error(P->ctx, t->loc, "'**' is not an operator here: write x * x, or exp2(y * log2(x)) for x > 0");
      advance(P); /* parsed as '*' */
    }
    fe_expr *rhs = parse_binary(P, prec + 1);
    fe_expr *e = new_expr(P, EX_BINARY, t->loc);
    e->op = kind;
    e->a = lhs;
    e->b = rhs;
    lhs = e;
  }
}

static fe_expr *parse_expr(parser *P) {
  tl_loc loc = peek(P)->loc;
  if (!enter(P, loc, "expression")) {
    leave(P);
    return new_expr(P, EX_ERROR, loc);
  }
  fe_expr *c = parse_binary(P, 1);
  if (at(P, TK_QUESTION)) {
    const fe_token *q = advance(P);
    fe_expr *e = new_expr(P, EX_TERNARY, q->loc);
    e->a = c;
    e->b = parse_expr(P);
    expect(P, TK_COLON, "':' in the conditional expression");
    e->c = parse_expr(P);
    c = e;
  }
  leave(P);
  return c;
}

/* ---- statements --------------------------------------------------------- */
static fe_block *parse_block(parser *P);

static fe_stmt *new_stmt(parser *P, fe_stmt_kind k, tl_loc loc) {
  fe_stmt *s = new0(P, sizeof *s);
  s->kind = k;
  s->loc = loc;
  return s;
}

static fe_stmt *parse_if(parser *P) {
  const fe_token *kw = advance(P);
  fe_stmt *s = new_stmt(P, ST_IF, kw->loc);
  s->expr = parse_expr(P);
  s->body = parse_block(P);
  if (accept(P, TK_ELSE)) {
    if (at(P, TK_IF)) {
      fe_block *b = new0(P, sizeof *b);
      b->loc = peek(P)->loc;
      b->stmts = new0(P, sizeof(fe_stmt *));
      b->stmts[0] = parse_if(P);
      b->n = 1;
      s->els = b;
    } else {
      s->els = parse_block(P);
    }
  }
  return s;
}

static fe_stmt *parse_stmt(parser *P) {
  const fe_token *t = peek(P);
  if (t->kind == TK_FOR) {
    advance(P);
    fe_stmt *s = new_stmt(P, ST_FOR, t->loc);
    s->name_loc = peek(P)->loc;
    if (at(P, TK_IDENT)) s->name = advance(P)->str;
    else error_expected(P, "a loop variable name");
    if (!P->panic) expect(P, TK_IN, "'in'");
    if (!P->panic) {
      if (at(P, TK_IDENT) && !strcmp(peek(P)->str, "range")) advance(P);
      else error_expected(P, "'range'");
    }
    if (!P->panic) expect(P, TK_LPAREN, "'(' after 'range'");
    bool one_arg = false;
    if (!P->panic) {
      s->lo = parse_expr(P);
      if (at(P, TK_RPAREN)) { /* range(hi), Python's: range(0, hi) */
        advance(P);
        s->hi = s->lo;
        s->lo = new_expr(P, EX_INT, s->hi->loc);
        s->lo->ival = 0;
        one_arg = true;
      } else {
        expect(P, TK_COMMA, "',' or ')' after the range's first bound");
      }
    }
    if (!P->panic && !one_arg) {
      s->hi = parse_expr(P);
      if (accept(P, TK_COMMA)) s->step = parse_expr(P);
      expect(P, TK_RPAREN, "')' after the range");
    }
    if (P->panic) {
      /* skip the rest of the header; parse the body so its braces match */
      while (!at(P, TK_LBRACE) && !at(P, TK_SEMI) && !at(P, TK_RBRACE) && !at(P, TK_EOF)) advance(P);
      P->panic = false;
      if (!at(P, TK_LBRACE)) return NULL;
      parse_block(P);
      return NULL;
    }
    s->body = parse_block(P);
    return s;
  }
  if (t->kind == TK_IF) return parse_if(P);
  if (t->kind == TK_SEMI) {
    advance(P);
    return NULL;
  }
  fe_tok_kind nk = peek_at(P, 1)->kind;
  bool assign = nk == TK_ASSIGN || nk == TK_PLUS_ASSIGN || nk == TK_MINUS_ASSIGN || nk == TK_STAR_ASSIGN ||
                nk == TK_SLASH_ASSIGN;
  if (t->kind == TK_IDENT && !assign) {
    /* Python statements the language does not have: say so, then skip the statement */
    static const char *const missing[][2] = {
        {"return", "there is no 'return' here: a program runs its body to the end (put the rest in an 'if'; "
                   "loads and stores outside the tensors are masked already)"},
        {"while", "there is no 'while' loop here: for i in range(lo, hi[, step]) { ... }"},
        {"break", "there is no 'break' here: a loop runs its whole range (guard its body with 'if')"},
        {"continue", "there is no 'continue' here: guard the rest of the body with 'if'"},
        {"pass", "there is no 'pass' here: an empty block is '{ }'"},
        {"elif", "there is no 'elif' here: else if c { ... }"},
        {"assert", "there is no 'assert' here: static_assert(cond, \"msg\") checks constants when compiling, "
                   "require(cond, \"msg\") sizes and scalars at launch"},
        {"def", "there is no 'def' here: a kernel is kernel NAME(params) tiles(...) grid(...) { ... }"},
    };
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++)
      if (!strcmp(t->str, missing[i][0])) {
        if (!P->panic) tl_error(P->ctx, t->loc, "%s", missing[i][1]);
        P->panic = true;
        return NULL;
      }
  }
  if (t->kind == TK_IDENT && assign) {
    advance(P);
    const fe_token *op = advance(P);
    fe_stmt *s = new_stmt(P, ST_ASSIGN, op->loc);
    s->name = t->str;
    s->name_loc = t->loc;
    s->op = op->kind;
    s->expr = parse_expr(P);
    expect_noting_python(P, TK_SEMI, "';' after the assignment", false);
    return s;
  }
  fe_stmt *s = new_stmt(P, ST_EXPR, t->loc);
  s->expr = parse_expr(P);
  expect_noting_python(P, TK_SEMI, "';' after the expression", true);
  return s;
}

static fe_block *parse_block(parser *P) {
  fe_block *b = new0(P, sizeof *b);
  b->loc = peek(P)->loc;
  if (!expect_noting_python(P, TK_LBRACE, "'{'", false)) return b;
  if (!enter_at(P, &P->bdepth, b->loc, "block")) {
    /* skip the block by matching braces, without recursion */
    int nest = 1;
    while (nest > 0 && !at(P, TK_EOF)) {
      fe_tok_kind k = advance(P)->kind;
      if (k == TK_LBRACE) nest++;
      if (k == TK_RBRACE) nest--;
    }
    P->bdepth--;
    P->panic = false;
    return b;
  }
  TL_VEC(fe_stmt *) stmts = {0};
  while (!at(P, TK_RBRACE) && !at(P, TK_EOF)) {
    int before = P->pos;
    fe_stmt *s = parse_stmt(P);
    if (P->panic) {
      /* the statement may already have reached its ';' */
      if (P->pos > before && P->toks[P->pos - 1].kind == TK_SEMI) P->panic = false;
      else sync_stmt(P);
      s = NULL;
    }
    if (s) tl_vec_push(&P->ctx->arena, &stmts, s);
    if (P->pos == before) advance(P); /* always progress */
  }
  P->bdepth--;
  expect(P, TK_RBRACE, "'}'");
  b->stmts = stmts.data;
  b->n = stmts.len;
  return b;
}

/* ---- kernels ------------------------------------------------------------ */
static void parse_param(parser *P, fe_kernel *k) {
  fe_param p;
  memset(&p, 0, sizeof p);
  p.loc = peek(P)->loc;
  if (!at(P, TK_IDENT)) {
    error_expected(P, "a parameter name");
    return;
  }
  p.name = advance(P)->str;
  if (!expect(P, TK_COLON, "':' after the parameter name")) return;
  p.type_loc = peek(P)->loc;
  if (accept(P, TK_TENSOR)) {
    p.is_tensor = true;
    if (!expect(P, TK_LT, "'<' after 'tensor'")) return;
    tl_loc dl;
    p.dtype = parse_dtype(P, &dl);
    if (!expect(P, TK_GT, "'>' after the element type")) return;
    if (!expect(P, TK_LBRACK, "'[' and the tensor's dimensions")) return;
    do {
      fe_dim d;
      memset(&d, 0, sizeof d);
      d.loc = peek(P)->loc;
      if (at(P, TK_IDENT)) {
        d.name = advance(P)->str;
      } else if (at(P, TK_INT)) {
        d.value = advance(P)->ival;
      } else {
        error_expected(P, "a dimension (a shape symbol, tile constant or integer)");
        return;
      }
      if (p.rank == TL_MAX_RANK) {
        tl_error(P->ctx, d.loc, "tensor '%s' has more than %d dimensions", p.name, TL_MAX_RANK);
        p.rank++;
      } else if (p.rank < TL_MAX_RANK) {
        p.dims[p.rank++] = d;
      }
    } while (accept(P, TK_COMMA));
    if (p.rank > TL_MAX_RANK) p.rank = TL_MAX_RANK;
    if (!expect(P, TK_RBRACK, "']' after the dimensions")) return;
  } else {
    tl_loc dl;
    p.dtype = parse_dtype(P, &dl);
    if (p.dtype == TL_VOID) return;
  }
  tl_vec_push(&P->ctx->arena, &k->params, p);
}

/* Skip tokens until `stop` at nesting level 0 (for recovery inside a header). */
static void skip_until(parser *P, fe_tok_kind stop1, fe_tok_kind stop2) {
  int nest = 0;
  while (!at(P, TK_EOF) && !at(P, TK_LBRACE) && !at(P, TK_KERNEL)) {
    fe_tok_kind k = peek(P)->kind;
    if (nest == 0 && (k == stop1 || k == stop2)) break;
    if (k == TK_LPAREN || k == TK_LBRACK) nest++;
    if ((k == TK_RPAREN || k == TK_RBRACK) && nest > 0) nest--;
    advance(P);
  }
  P->panic = false;
}

static fe_kernel *parse_kernel(parser *P) {
  fe_kernel *k = new0(P, sizeof *k);
  while (at(P, TK_AT)) {
    advance(P);
    fe_attr a;
    memset(&a, 0, sizeof a);
    a.loc = peek(P)->loc;
    if (!at(P, TK_IDENT)) {
      error_expected(P, "an attribute name after '@'");
      skip_until(P, TK_AT, TK_KERNEL);
      continue;
    }
    a.name = advance(P)->str;
    if (expect(P, TK_LPAREN, "'(' after the attribute name")) {
      a.arg_loc = peek(P)->loc;
      /* a constant expression (`@stages(ARCH_SPECIFIC == 90 ? 4 : 5)`); a bare name is also the
       * word of @pipeline / @zeroed, an integer literal its value */
      if (at(P, TK_RPAREN)) {
        error_expected(P, "an attribute argument");
      } else {
        a.value = parse_expr(P);
        if (a.value && a.value->kind == EX_NAME) a.word = a.value->name;
        if (a.value && a.value->kind == EX_INT) a.ival = a.value->ival, a.has_int = true;
      }
      if (!P->panic) expect(P, TK_RPAREN, "')' after the attribute argument");
    }
    if (P->panic) skip_until(P, TK_AT, TK_KERNEL);
    else tl_vec_push(&P->ctx->arena, &k->attrs, a);
  }
  if (!expect(P, TK_KERNEL, "'kernel'")) return NULL;
  k->loc = peek(P)->loc;
  if (!at(P, TK_IDENT)) {
    error_expected(P, "a kernel name");
    return NULL;
  }
  k->name = advance(P)->str;
  if (expect(P, TK_LPAREN, "'(' and the kernel's parameters")) {
    if (!at(P, TK_RPAREN)) {
      do {
        parse_param(P, k);
        if (P->panic) skip_until(P, TK_COMMA, TK_RPAREN);
      } while (accept(P, TK_COMMA));
    }
    expect(P, TK_RPAREN, "')' after the parameters");
  }
  if (P->panic) skip_until(P, TK_TILES, TK_GRID);
  if (accept(P, TK_TILES)) {
    if (expect(P, TK_LPAREN, "'(' after 'tiles'")) {
      do {
        fe_const c;
        memset(&c, 0, sizeof c);
        c.loc = peek(P)->loc;
        if (!at(P, TK_IDENT)) {
          error_expected(P, "a tile constant name");
          break;
        }
        c.name = advance(P)->str;
        if (!expect(P, TK_ASSIGN, "'=' and the constant's value")) break;
        c.value = parse_expr(P);
        tl_vec_push(&P->ctx->arena, &k->consts, c);
      } while (accept(P, TK_COMMA));
      if (!P->panic) expect(P, TK_RPAREN, "')' after the tile constants");
    }
    if (P->panic) skip_until(P, TK_GRID, TK_GRID);
  }
  if (at(P, TK_GRID)) {
    k->grid_loc = advance(P)->loc;
    k->has_grid = true;
    if (expect(P, TK_LPAREN, "'(' after 'grid'")) {
      do tl_vec_push(&P->ctx->arena, &k->grid, parse_expr(P));
      while (accept(P, TK_COMMA));
      if (!P->panic) expect(P, TK_RPAREN, "')' after the grid");
    }
    if (P->panic) skip_until(P, TK_LBRACE, TK_LBRACE);
  }
  if (!at(P, TK_LBRACE)) {
    error_expected(P, k->has_grid ? "'{' and the kernel body" : "'grid(...)' or the kernel body");
    P->panic = false;
    while (!at(P, TK_LBRACE) && !at(P, TK_EOF) && !at(P, TK_KERNEL) && !at(P, TK_AT)) advance(P);
    if (!at(P, TK_LBRACE)) return NULL;
  }
  k->body = parse_block(P);
  P->panic = false;
  return k;
}

fe_program *fe_parse(tl_ctx *c, const fe_token *toks, int ntoks) {
  parser P;
  memset(&P, 0, sizeof P);
  P.ctx = c;
  P.toks = toks;
  P.ntoks = ntoks;
  fe_program *prog = tl_alloc(&c->arena, sizeof *prog);
  while (!at(&P, TK_EOF)) {
    int before = P.pos;
    fe_kernel *k = parse_kernel(&P);
    if (k) tl_vec_push(&c->arena, &prog->kernels, k);
    if (P.panic || !k) {
      /* skip to the next kernel */
      P.panic = false;
      if (P.pos == before) advance(&P);
      while (!at(&P, TK_EOF) && !at(&P, TK_KERNEL) && !at(&P, TK_AT)) advance(&P);
    }
  }
  return prog;
}
