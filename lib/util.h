/* util.h: arenas, growable arrays, string buffers, diagnostics and the
 * internal-error channel shared by every part of tilec.
 *
 * Memory policy: everything a compilation makes lives in one arena (tl_arena)
 * owned by the program handle and freed at once with it.  Nothing in the
 * library prints, exits or aborts: user errors are diagnostics (tl_diag_*),
 * broken invariants are TL_INTERNAL() which records an internal-error
 * diagnostic and longjmps to the API boundary (tl_try). */
#ifndef TILEC_UTIL_H
#define TILEC_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#if defined(__GNUC__)
#define TL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TL_NORETURN __attribute__((noreturn))
#else
#define TL_PRINTF(a, b)
#define TL_NORETURN
#endif

/* ---- arena ---------------------------------------------------------- */
typedef struct tl_arena_chunk tl_arena_chunk;
typedef struct tl_arena {
  tl_arena_chunk *head;
  size_t total;      /* bytes handed out, for limits and stats */
  size_t limit;      /* 0 = none; past it allocation fails -> internal error */
  struct tl_ctx *ctx; /* where an out-of-memory failure is reported */
} tl_arena;

void tl_arena_init(tl_arena *a, struct tl_ctx *ctx);
void tl_arena_free(tl_arena *a);
/* Zeroed, 16-byte aligned.  On out-of-memory raises TL_ERR_NOMEM (longjmp). */
void *tl_alloc(tl_arena *a, size_t n);
void *tl_realloc(tl_arena *a, void *p, size_t oldn, size_t newn);
char *tl_strdup(tl_arena *a, const char *s);
char *tl_strndup(tl_arena *a, const char *s, size_t n);
char *tl_sprintf(tl_arena *a, const char *fmt, ...) TL_PRINTF(2, 3);

/* ---- growable array in an arena ----------------------------------------
 *   TL_VEC(int) v = {0};  tl_vec_push(arena, &v, 42);  v.data[i], v.len   */
#define TL_VEC(T) struct { T *data; int len, cap; }
#define tl_vec_push(A, V, X)                                                  \
  do {                                                                        \
    if ((V)->len == (V)->cap) {                                               \
      int nc_ = (V)->cap ? (V)->cap * 2 : 8;                                  \
      (V)->data = tl_realloc((A), (V)->data, sizeof(*(V)->data) * (V)->cap,   \
                             sizeof(*(V)->data) * nc_);                       \
      (V)->cap = nc_;                                                         \
    }                                                                         \
    (V)->data[(V)->len++] = (X);                                              \
  } while (0)

/* ---- string buffer (heap, malloc'd; used for output text) ------------- */
typedef struct tl_sbuf {
  char *data;
  size_t len, cap;
  bool oom; /* set when growth failed; later appends are dropped */
} tl_sbuf;
void tl_sbuf_printf(tl_sbuf *b, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_sbuf_vprintf(tl_sbuf *b, const char *fmt, va_list ap);
void tl_sbuf_puts(tl_sbuf *b, const char *s);
void tl_sbuf_putn(tl_sbuf *b, const char *s, size_t n);
void tl_sbuf_free(tl_sbuf *b);
char *tl_sbuf_take(tl_sbuf *b); /* returns data (NUL-terminated, malloc'd), resets b */
/* Append formatted text to the NUL-terminated string in buf[cap] (fixed-size
 * explanation fields); silently truncates. */
void tl_appendf(char *buf, size_t cap, const char *fmt, ...) TL_PRINTF(3, 4);

/* ---- source locations and diagnostics --------------------------------- */
typedef struct tl_loc {
  int32_t file; /* index into ctx->files, -1 = none */
  int32_t line; /* 1-based; 0 = unknown */
  int32_t col;  /* 1-based */
} tl_loc;

#define TL_NOLOC ((tl_loc){-1, 0, 0})

typedef enum tl_severity { TL_SEV_ERROR, TL_SEV_WARNING, TL_SEV_NOTE, TL_SEV_REMARK } tl_severity;

typedef struct tl_diag {
  tl_severity severity;
  tl_loc loc;
  char *message;   /* the message alone, no location prefix */
  char *rendered;  /* "file:line:col: error: msg\n<source line>\n   ^\n" */
} tl_diag;

typedef struct tl_source {
  char *name;   /* file name as given, "<string>" for strings */
  char *text;   /* NUL-terminated */
  size_t len;
} tl_source;

/* Error codes shared with the public API (tilec_status mirrors these). */
enum {
  TL_OK = 0,
  TL_ERR_INPUT = 1,     /* diagnostics in the user's input */
  TL_ERR_USAGE = 2,     /* bad argument to an API call */
  TL_ERR_NOMEM = 3,
  TL_ERR_INTERNAL = 4,  /* a broken invariant inside tilec */
  TL_ERR_UNSUPPORTED = 5,
  TL_ERR_IO = 6,
  TL_ERR_CUDA = 7,      /* driver missing or a driver call failed */
  TL_ERR_NO_DEVICE = 8,
  TL_ERR_LAUNCH = 9     /* launch-time check failed (shape, dtype, alignment) */
};

/* Per-compilation context: sources, diagnostics, arena, error recovery. */
typedef struct tl_ctx {
  tl_arena arena;
  TL_VEC(tl_source) files;
  TL_VEC(tl_diag) diags;
  int nerrors;
  int max_errors;     /* stop adding errors after this many (default 20) */
  jmp_buf *on_fatal;  /* set by tl_try; NULL = no handler (record only) */
  int fatal_status;
} tl_ctx;

void tl_ctx_init(tl_ctx *c);
void tl_ctx_free(tl_ctx *c);
int32_t tl_ctx_add_source(tl_ctx *c, const char *name, const char *text, size_t len);

void tl_diag_at(tl_ctx *c, tl_severity s, tl_loc loc, const char *fmt, ...) TL_PRINTF(4, 5);
void tl_vdiag_at(tl_ctx *c, tl_severity s, tl_loc loc, const char *fmt, va_list ap);
#define tl_error(C, LOC, ...) tl_diag_at((C), TL_SEV_ERROR, (LOC), __VA_ARGS__)
#define tl_warning(C, LOC, ...) tl_diag_at((C), TL_SEV_WARNING, (LOC), __VA_ARGS__)
#define tl_note(C, LOC, ...) tl_diag_at((C), TL_SEV_NOTE, (LOC), __VA_ARGS__)

/* Raise a fatal condition: records a diagnostic (for INTERNAL/NOMEM) and
 * longjmps to the innermost tl_try.  Never returns. */
TL_NORETURN void tl_fatal(tl_ctx *c, int status, const char *fmt, ...) TL_PRINTF(3, 4);
TL_NORETURN void tl_internal_at(tl_ctx *c, const char *file, int line, const char *fmt, ...) TL_PRINTF(4, 5);
#define TL_INTERNAL(C, ...) tl_internal_at((C), __FILE__, __LINE__, __VA_ARGS__)
#define TL_CHECK(C, COND) do { if (!(COND)) TL_INTERNAL((C), "check failed: %s", #COND); } while (0)

/* All diagnostics rendered, joined, malloc'd (caller frees). */
char *tl_ctx_render_diags(tl_ctx *c);

/* Monotonic clock in milliseconds (for --time-passes). */
double tl_now_ms(void);

#endif
