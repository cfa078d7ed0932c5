/* ctx_fixture.h: the unit tests' shared compiler context.  TL_CTX_FIXTURE()
 * defines `ctx` (fresh per test, freed after it) and `jb`, where a fatal
 * error (TL_INTERNAL / a diagnostic limit) lands, and setup / teardown for
 * TestSuite(name, .init = setup, .fini = teardown). */
#ifndef TILEC_TESTS_CTX_FIXTURE_H
#define TILEC_TESTS_CTX_FIXTURE_H

#include <setjmp.h>

#include "util.h"

#define TL_CTX_FIXTURE()                          \
  static tl_ctx ctx;                              \
  static jmp_buf jb;                              \
  static void setup(void) {                       \
    tl_ctx_init(&ctx);                            \
    ctx.on_fatal = &jb;                           \
  }                                               \
  static void teardown(void) { tl_ctx_free(&ctx); }

#endif
