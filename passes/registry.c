/* registry.c: every pass of passes/passes.def, found by name. */
#include <string.h>

#include "ir.h"

#define PASS(name) extern const tl_pass tl_pass_##name;
#include "passes.def"
#undef PASS

static const tl_pass *const all_passes[] = {
#define PASS(name) &tl_pass_##name,
#include "passes.def"
#undef PASS
};

const tl_pass *const *tl_pass_all(int *n) {
  if (n) *n = (int)(sizeof all_passes / sizeof all_passes[0]);
  return all_passes;
}

const tl_pass *tl_pass_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof all_passes / sizeof all_passes[0]; i++)
    if (strcmp(all_passes[i]->name, name) == 0) return all_passes[i];
  return NULL;
}
