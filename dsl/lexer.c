/* lexer.c: source text -> tokens with line:col.
 * requires: a NUL-terminated source in ctx->files; keeps: every token's
 * location is its first character (1-based line and byte column); reports:
 * bad characters, unterminated comments/strings, integer literals that do
 * not fit i64, float literals that overflow to infinity, over-long names. */
#include "ast.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct lexer {
  tl_ctx *ctx;
  int32_t file;
  const char *src, *p, *end;
  int line;
  const char *line_start;
  fe_token_vec *out;
} lexer;

static const struct { const char *word; fe_tok_kind kind; } keywords[] = {
  {"kernel", TK_KERNEL}, {"tiles", TK_TILES}, {"grid", TK_GRID}, {"for", TK_FOR},
  {"in", TK_IN}, {"if", TK_IF}, {"else", TK_ELSE}, {"None", TK_NONE},
  {"tensor", TK_TENSOR}, {"true", TK_TRUE}, {"false", TK_FALSE}, {"inf", TK_INF},
};

const char *fe_tok_name(fe_tok_kind k) {
  static const char *names[TK_NUM_KINDS] = {
    [TK_EOF] = "end of file", [TK_IDENT] = "identifier", [TK_INT] = "integer literal",
    [TK_FLOAT] = "float literal", [TK_STRING] = "string literal",
    [TK_LPAREN] = "'('", [TK_RPAREN] = "')'", [TK_LBRACK] = "'['", [TK_RBRACK] = "']'",
    [TK_LBRACE] = "'{'", [TK_RBRACE] = "'}'", [TK_COMMA] = "','", [TK_SEMI] = "';'",
    [TK_COLON] = "':'", [TK_QUESTION] = "'?'", [TK_AT] = "'@'", [TK_ASSIGN] = "'='",
    [TK_PLUS_ASSIGN] = "'+='", [TK_MINUS_ASSIGN] = "'-='", [TK_STAR_ASSIGN] = "'*='",
    [TK_SLASH_ASSIGN] = "'/='", [TK_PLUS] = "'+'", [TK_MINUS] = "'-'", [TK_STAR] = "'*'",
    [TK_SLASH] = "'/'", [TK_PERCENT] = "'%'", [TK_EQ] = "'=='", [TK_NE] = "'!='",
    [TK_LT] = "'<'", [TK_LE] = "'<='", [TK_GT] = "'>'", [TK_GE] = "'>='",
    [TK_ANDAND] = "'&&'", [TK_OROR] = "'||'", [TK_NOT] = "'!'", [TK_AMP] = "'&'", [TK_PIPE] = "'|'",
    [TK_CARET] = "'^'", [TK_SHL] = "'<<'", [TK_SHR] = "'>>'",
    [TK_KERNEL] = "'kernel'", [TK_TILES] = "'tiles'", [TK_GRID] = "'grid'", [TK_FOR] = "'for'",
    [TK_IN] = "'in'", [TK_IF] = "'if'", [TK_ELSE] = "'else'", [TK_NONE] = "'None'",
    [TK_TENSOR] = "'tensor'", [TK_TRUE] = "'true'", [TK_FALSE] = "'false'", [TK_INF] = "'inf'",
  };
  return (unsigned)k < TK_NUM_KINDS && names[k] ? names[k] : "token";
}

static tl_loc here(lexer *L, const char *at) {
  tl_loc loc = {L->file, L->line, (int32_t)(at - L->line_start) + 1};
  return loc;
}

static fe_token *push(lexer *L, fe_tok_kind k, const char *start, tl_loc loc) {
  fe_token t;
  memset(&t, 0, sizeof t);
  t.kind = k;
  t.loc = loc;
  t.text = start;
  t.len = (int32_t)(L->p - start);
  tl_vec_push(&L->ctx->arena, L->out, t);
  return &L->out->data[L->out->len - 1];
}

static bool is_ident_start(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }
static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool is_ident_char(char ch) { return is_ident_start(ch) || is_digit(ch); }

static void newline(lexer *L) {
  L->line++;
  L->line_start = L->p;
}

/* Skip blanks and comments; false at end of input. */
static void skip_space(lexer *L) {
  for (;;) {
    if (L->p >= L->end) return;
    char ch = *L->p;
    if (ch == '\n') {
      L->p++;
      newline(L);
    } else if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
      L->p++;
    } else if (ch == '/' && L->p + 1 < L->end && L->p[1] == '/') {
      if (L->out->len > 0) {
        fe_token *last = &L->out->data[L->out->len - 1];
        fe_tok_kind k = last->kind;
        if (last->loc.line == L->line && (k == TK_IDENT || k == TK_INT || k == TK_FLOAT || k == TK_RPAREN ||
                                          k == TK_RBRACK))
          last->slash_col = here(L, L->p).col;
      }
      while (L->p < L->end && *L->p != '\n') L->p++;
    } else if (ch == '/' && L->p + 1 < L->end && L->p[1] == '*') {
      tl_loc start = here(L, L->p);
      L->p += 2;
      bool closed = false;
      while (L->p < L->end) {
        if (*L->p == '*' && L->p + 1 < L->end && L->p[1] == '/') {
          L->p += 2;
          closed = true;
          break;
        }
        if (*L->p++ == '\n') newline(L);
      }
      if (!closed) tl_error(L->ctx, start, "unterminated comment");
    } else {
      return;
    }
  }
}

static void lex_number(lexer *L) {
  const char *start = L->p;
  tl_loc loc = here(L, start);
  bool is_float = false;
  if (L->p[0] == '0' && L->p + 1 < L->end && (L->p[1] == 'x' || L->p[1] == 'X')) {
    L->p += 2;
    while (L->p < L->end && (is_digit(*L->p) || (*L->p >= 'a' && *L->p <= 'f') || (*L->p >= 'A' && *L->p <= 'F')))
      L->p++;
  } else {
    while (L->p < L->end && is_digit(*L->p)) L->p++;
    if (L->p < L->end && *L->p == '.' && L->p + 1 <= L->end) {
      is_float = true;
      L->p++;
      while (L->p < L->end && is_digit(*L->p)) L->p++;
    }
    if (L->p < L->end && (*L->p == 'e' || *L->p == 'E')) {
      const char *q = L->p + 1;
      if (q < L->end && (*q == '+' || *q == '-')) q++;
      if (q < L->end && is_digit(*q)) {
        is_float = true;
        L->p = q;
        while (L->p < L->end && is_digit(*L->p)) L->p++;
      }
    }
  }
  if (L->p < L->end && is_ident_char(*L->p)) {
    const char *s = L->p;
    while (L->p < L->end && is_ident_char(*L->p)) L->p++;
    tl_error(L->ctx, here(L, s), "invalid suffix '%.*s' on numeric literal", (int)(L->p - s), s);
  }
  fe_token *t = push(L, is_float ? TK_FLOAT : TK_INT, start, loc);
  char buf[512];
  size_t n = (size_t)(L->p - start);
  if (n >= sizeof buf) n = sizeof buf - 1;
  memcpy(buf, start, n);
  buf[n] = 0;
  errno = 0;
  if (is_float) {
    double v = strtod(buf, NULL);
    if (errno == ERANGE && isinf(v)) {
      tl_error(L->ctx, loc, "float literal '%s' is out of range (not finite)", buf);
      v = 0;
    }
    t->fval = v;
  } else {
    char *endp;
    unsigned long long v = strtoull(buf, &endp, 0);
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX) {
      tl_error(L->ctx, loc, "integer literal '%s' does not fit in i64", buf);
      v = 0;
    } else if (*endp) {
      tl_error(L->ctx, loc, "malformed integer literal '%s'", buf);
      v = 0;
    }
    t->ival = (int64_t)v;
  }
}

void fe_lex(tl_ctx *c, int32_t file, fe_token_vec *out) {
  lexer L;
  memset(&L, 0, sizeof L);
  L.ctx = c;
  L.file = file;
  L.src = c->files.data[file].text;
  L.p = L.src;
  L.end = L.src + c->files.data[file].len;
  L.line = 1;
  L.line_start = L.src;
  L.out = out;
  bool said_prefix = false; /* (the note on Triton's tl. prefix: once a file) */
  const char *prefix_end = NULL; /* (just after the last prefix dropped) */
  for (;;) {
    skip_space(&L);
    if (L.p >= L.end) break;
    const char *start = L.p;
    tl_loc loc = here(&L, start);
    char ch = *L.p;
    if (is_ident_start(ch)) {
      while (L.p < L.end && is_ident_char(*L.p)) L.p++;
      size_t n = (size_t)(L.p - start);
      fe_tok_kind k = TK_IDENT;
      for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strlen(keywords[i].word) == n && memcmp(keywords[i].word, start, n) == 0) k = keywords[i].kind;
      if (n > FE_MAX_IDENT) {
        tl_error(c, loc, "identifier is %zu characters long; the limit is %d", n, FE_MAX_IDENT);
        n = FE_MAX_IDENT;
      }
      fe_token *t = push(&L, k, start, loc);
      t->str = tl_strndup(&c->arena, start, n);
      continue;
    }
    if (is_digit(ch) || (ch == '.' && L.p + 1 < L.end && is_digit(L.p[1]))) {
      lex_number(&L);
      continue;
    }
    if (ch == '"') {
      L.p++;
      while (L.p < L.end && *L.p != '"' && *L.p != '\n') L.p++;
      if (L.p >= L.end || *L.p != '"') {
        tl_error(c, loc, "unterminated string literal");
        continue;
      }
      L.p++;
      fe_token *t = push(&L, TK_STRING, start, loc);
      t->str = tl_strndup(&c->arena, start + 1, (size_t)(L.p - start - 2));
      continue;
    }
    char nx = L.p + 1 < L.end ? L.p[1] : 0;
    fe_tok_kind k = TK_EOF;
    int len = 1;
    switch (ch) {
    case '(': k = TK_LPAREN; break;
    case ')': k = TK_RPAREN; break;
    case '[': k = TK_LBRACK; break;
    case ']': k = TK_RBRACK; break;
    case '{': k = TK_LBRACE; break;
    case '}': k = TK_RBRACE; break;
    case ',': k = TK_COMMA; break;
    case ';': k = TK_SEMI; break;
    case ':': k = TK_COLON; break;
    case '?': k = TK_QUESTION; break;
    case '@': k = TK_AT; break;
    case '%': k = TK_PERCENT; break;
    case '=': if (nx == '=') { k = TK_EQ; len = 2; } else k = TK_ASSIGN; break;
    case '!': if (nx == '=') { k = TK_NE; len = 2; } else k = TK_NOT; break;
    case '<': if (nx == '=') { k = TK_LE; len = 2; } else if (nx == '<') { k = TK_SHL; len = 2; } else k = TK_LT; break;
    case '>': if (nx == '=') { k = TK_GE; len = 2; } else if (nx == '>') { k = TK_SHR; len = 2; } else k = TK_GT; break;
    case '+': if (nx == '=') { k = TK_PLUS_ASSIGN; len = 2; } else k = TK_PLUS; break;
    case '-': if (nx == '=') { k = TK_MINUS_ASSIGN; len = 2; } else k = TK_MINUS; break;
    case '*': if (nx == '=') { k = TK_STAR_ASSIGN; len = 2; } else k = TK_STAR; break;
    case '/': if (nx == '=') { k = TK_SLASH_ASSIGN; len = 2; } else k = TK_SLASH; break;
    case '&': if (nx == '&') { k = TK_ANDAND; len = 2; } else k = TK_AMP; break;
    case '|': if (nx == '|') { k = TK_OROR; len = 2; } else k = TK_PIPE; break;
    case '^': k = TK_CARET; break;
    default: break;
    }
    /* Triton's module prefix, tl.load / tl.program_id: one error naming it, and the prefix dropped (the
     * identifier before it popped, the '.' skipped) so the rest of the line parses as written here */
    fe_token *prev = L.out->len ? &L.out->data[L.out->len - 1] : NULL;
    bool name_dot = k == TK_EOF && ch == '.' && is_ident_start(nx) && prev && prev->kind == TK_IDENT && prev->str &&
                    prev->text + prev->len == L.p;
    if (name_dot && prev->text == prefix_end && !strcmp(prev->str, "language")) {
      L.out->len--; /* (triton.language.NAME: the second half of the prefix, said already) */
      L.p++;
      continue;
    }
    if (name_dot && (!strcmp(prev->str, "tl") || !strcmp(prev->str, "triton"))) {
      tl_error(c, prev->loc, "'%s.' is Triton's module prefix: builtins are called by their names here (load, "
               "program_id, ...)", prev->str);
      prefix_end = L.p + 1;
      if (!said_prefix)
        tl_note(c, prev->loc, "a view takes the place of a pointer and its offsets: load(X[i0 : i0 + B]), "
                "store(Y[i0 : i0 + B], y); the bounds are checked without a mask (docs/first_use.md)");
      said_prefix = true;
      L.out->len--;
      L.p++;
      continue;
    }
    if (k == TK_EOF) {
      unsigned char uc = (unsigned char)ch;
      if (uc >= 0x20 && uc < 0x7f)
        tl_error(c, loc, "unexpected character '%c'", ch);
      else
        tl_error(c, loc, "unexpected byte 0x%02x", uc);
      if (ch == '.' && is_ident_start(nx))
        tl_note(c, loc, "there are no methods or attributes here: x.to(T) is cast<T>(x), x.T is trans(x)");
      L.p++;
      continue;
    }
    L.p += len;
    push(&L, k, start, loc);
  }
  push(&L, TK_EOF, L.p, here(&L, L.p));
}
