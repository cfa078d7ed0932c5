/* require.h: the text of a failed launch-time check, `require(cond, "msg")` (docs/language.md
 * "Launch-time checks"), shared by every launcher: the interpreter's grid evaluation (the JIT
 * launcher's, tilec run's, Python's, tilec_interpret's) fills in the values, the AOT generator
 * (lib/api/aot.c) leaves a placeholder for the generated C to fill.  No allocation: a failed launch
 * formats into the caller's buffer. */
#ifndef TILEC_REQUIRE_H
#define TILEC_REQUIRE_H

#include "ir.h"

typedef enum { TL_REQ_SYM, TL_REQ_PARAM, TL_REQ_CONST } tl_require_kind;

/* A name the condition's text uses whose value the message shows. */
typedef struct tl_require_name {
  const char *name; /* into the text; len bytes */
  int len;
  tl_require_kind kind;
  int32_t param, axis; /* SYM: the tensor parameter and axis that bind it; PARAM: the scalar parameter */
  int64_t value;       /* CONST: the tile constant's value */
} tl_require_name;

enum { TL_REQ_MAX_NAMES = 16 };

/* The shape symbols, scalar parameters and tile constants named in `text` (a require's condition as
 * written), each once, in order of first use; other words (min, cdiv, ARCH) are skipped.  Returns
 * how many were written to out (at most max). */
int tl_require_names(const tl_func *f, const char *text, tl_require_name *out, int max);

/* "FILE:LINE:COL: error: require failed in kernel 'K': TEXT (N = V, ...): "MSG"", then the source
 * line and a caret under the column where the source is known; vals[i] is the text of names[i]'s
 * value.  Into buf (n bytes; truncated, always terminated). */
void tl_require_format(const tl_func *f, const tl_op *op, const tl_require_name *names, const char *const *vals,
                       int nnames, char *buf, size_t n);

/* Whether err (from the interpreter or its grid evaluation) is a failed require's diagnostic, which a
 * caller passes on as it is (it names the kernel and the place) rather than behind its own prefix. */
bool tl_require_is_failure(const char *err);

#endif
