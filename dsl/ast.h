/* ast.h: tokens and the abstract syntax tree of the tile language, shared by
 * the lexer, parser, checker/lowering and the AST printer (all in dsl/).
 * Every node carries the location of the token that names it; everything
 * lives in the tl_ctx arena. */
#ifndef TILEC_AST_H
#define TILEC_AST_H

#include "frontend.h"

/* ---- limits (docs/language.md, "Limits") ------------------------------- */
#define FE_MAX_SOURCE (16u << 20) /* bytes */
#define FE_MAX_DEPTH 64           /* nesting of blocks and of expressions */
#define FE_MAX_IDENT 255          /* characters */
#define FE_MAX_PARAMS 64
#define FE_MAX_GRID 3

/* ---- tokens -------------------------------------------------------------- */
typedef enum fe_tok_kind {
  TK_EOF = 0, TK_IDENT, TK_INT, TK_FLOAT, TK_STRING,
  /* punctuation */
  TK_LPAREN, TK_RPAREN, TK_LBRACK, TK_RBRACK, TK_LBRACE, TK_RBRACE,
  TK_COMMA, TK_SEMI, TK_COLON, TK_QUESTION, TK_AT,
  TK_ASSIGN, TK_PLUS_ASSIGN, TK_MINUS_ASSIGN, TK_STAR_ASSIGN, TK_SLASH_ASSIGN,
  TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT,
  TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, TK_ANDAND, TK_OROR, TK_NOT,
  TK_AMP, TK_PIPE, TK_CARET, TK_SHL, TK_SHR,
  /* keywords */
  TK_KERNEL, TK_TILES, TK_GRID, TK_FOR, TK_IN, TK_IF, TK_ELSE, TK_NONE,
  TK_TENSOR, TK_TRUE, TK_FALSE, TK_INF,
  TK_NUM_KINDS
} fe_tok_kind;

typedef struct fe_token {
  fe_tok_kind kind;
  tl_loc loc;
  const char *text; /* into the source; not NUL-terminated */
  int32_t len;
  int64_t ival;     /* TK_INT */
  double fval;      /* TK_FLOAT */
  const char *str;  /* TK_STRING / TK_IDENT: arena copy, NUL-terminated */
  int32_t slash_col; /* a '//' comment follows this operand on its line, at this column (0: none):
                      * Python's floor division, for a note on the syntax error it causes */
} fe_token;

/* Spelling of a token kind for messages ("'('", "identifier"). */
const char *fe_tok_name(fe_tok_kind k);

typedef TL_VEC(fe_token) fe_token_vec;
/* Tokenize source `file` of c; always ends with TK_EOF.  Lexical errors are
 * diagnostics; the bad characters are skipped. */
void fe_lex(tl_ctx *c, int32_t file, fe_token_vec *out);

/* ---- expressions ------------------------------------------------------- */
typedef enum fe_expr_kind {
  EX_ERROR = 0, /* a parse error stood here; checking it is silent */
  EX_INT, EX_FLOAT, EX_BOOL, EX_STRING, EX_NAME,
  EX_UNARY,   /* op a */
  EX_BINARY,  /* a op b */
  EX_TERNARY, /* a ? b : c */
  EX_CALL,    /* name<targ>[shape](args, kw = v) */
  EX_INDEX,   /* a[items] */
  EX_LIST     /* [args] (the shape of reshape(), the order of permute()) */
} fe_expr_kind;

typedef enum fe_item_kind { IT_EXPR, IT_RANGE, IT_ALL, IT_NEWAXIS } fe_item_kind;

typedef struct fe_item {
  fe_item_kind kind;
  struct fe_expr *lo, *hi; /* IT_EXPR: lo; IT_RANGE: lo : hi */
  tl_loc loc;
} fe_item;

typedef struct fe_expr {
  fe_expr_kind kind;
  tl_loc loc;               /* the operator / name / literal token */
  fe_tok_kind op;           /* unary / binary operator */
  int64_t ival;             /* EX_INT, EX_BOOL */
  double fval;              /* EX_FLOAT */
  const char *name;         /* EX_NAME, EX_CALL; EX_STRING text */
  struct fe_expr *a, *b, *c;
  /* calls */
  bool has_targ, has_shape;
  tl_dtype targ;
  tl_loc targ_loc;
  struct fe_expr **shape; int nshape;
  struct fe_expr **args; int nargs;
  const char **kwnames; struct fe_expr **kwargs; tl_loc *kwlocs; int nkw;
  /* indexing */
  fe_item *items; int nitems;
  /* filled by the checker: the type (kind NONE when unchecked or in error)
   * and, for compile-time constants, the value */
  tl_type type;
  bool is_const;
  int64_t cival;
  double cfval;
} fe_expr;

/* ---- statements -------------------------------------------------------- */
typedef enum fe_stmt_kind { ST_ASSIGN, ST_EXPR, ST_FOR, ST_IF } fe_stmt_kind;

struct fe_block;
typedef struct fe_stmt {
  fe_stmt_kind kind;
  tl_loc loc;
  const char *name;        /* assign target, loop variable */
  tl_loc name_loc;
  fe_tok_kind op;          /* TK_ASSIGN or a compound assignment */
  fe_expr *expr;           /* assigned value, expression, if condition */
  fe_expr *lo, *hi, *step; /* for: range(lo, hi[, step]); step may be NULL */
  struct fe_block *body, *els; /* for body; if then/else (els may be NULL) */
} fe_stmt;

typedef struct fe_block {
  fe_stmt **stmts;
  int n;
  tl_loc loc;              /* the '{' */
} fe_block;

/* ---- kernels ----------------------------------------------------------- */
typedef struct fe_dim {
  const char *name;        /* a symbol or tile constant; NULL for a literal */
  int64_t value;
  tl_loc loc;
} fe_dim;

typedef struct fe_param {
  const char *name;
  tl_loc loc;
  bool is_tensor;
  tl_dtype dtype;
  tl_loc type_loc;
  int rank;
  fe_dim dims[TL_MAX_RANK];
} fe_param;

typedef struct fe_const {
  const char *name;
  tl_loc loc;
  fe_expr *value;
} fe_const;

typedef struct fe_attr {
  const char *name;
  tl_loc loc;
  fe_expr *value;          /* the argument: a constant expression (@warps, @stages, @maxnreg) */
  const char *word;        /* the argument when it is a bare name (@pipeline(word), @zeroed(T)) */
  int64_t ival;            /* the argument when it is an integer literal */
  bool has_int;
  tl_loc arg_loc;
} fe_attr;

typedef struct fe_kernel {
  const char *name;
  tl_loc loc;              /* the name */
  TL_VEC(fe_attr) attrs;
  TL_VEC(fe_param) params;
  TL_VEC(fe_const) consts;
  TL_VEC(fe_expr *) grid;
  tl_loc grid_loc;
  bool has_grid;
  fe_block *body;
} fe_kernel;

typedef struct fe_program {
  TL_VEC(fe_kernel *) kernels;
} fe_program;

/* Parse a token stream (ending in TK_EOF).  Syntax errors are diagnostics;
 * the parser resynchronizes at ';' and '}' and keeps going. */
fe_program *fe_parse(tl_ctx *c, const fe_token *toks, int ntoks);

/* Check and lower every kernel of p for target arch (tl_frontend) into a new module (lower.c).  Returns
 * NULL when errors were reported. */
tl_module *fe_lower(tl_ctx *c, fe_program *p, const char *arch, const tl_define *defs, int ndefs);

/* Print the (checked) AST as an indented tree (ast_dump.c). */
void fe_dump_ast(tl_sbuf *b, tl_ctx *c, const fe_program *p);

/* Names that cannot be bound by the user: builtins, type names and the predefined constants. */
bool fe_is_reserved(const char *name);
/* The predefined constants' names (ARCH, ARCH_SPECIFIC): reserved, bound in every kernel. */
bool fe_is_predefined(const char *name);

#endif
