/* gen_corpus.c: writes generated kernels (tests/gen/tilegen.c) as .tile files,
 * to read one seed's kernel or to seed the libFuzzer corpus of
 * fuzz_frontend with valid programs.  Standalone (no tilec library):
 *
 *   cc -std=c11 -O2 -Itests/gen tests/fuzz/gen_corpus.c tests/gen/tilegen.c -lm -o gen_corpus
 *   ./gen_corpus 42                 # the kernel of seed 42 and its sizes, on stdout
 *   ./gen_corpus 1 500 corpus-dir   # seeds 1..500 into corpus-dir/gen_<seed>.tile
 */
#include <stdio.h>
#include <stdlib.h>

#include "tilegen.h"

static void describe(FILE *out, const tg_kernel *k) {
  fprintf(out, "// grid (%lld, %lld, %lld); parameters:\n", (long long)k->grid[0], (long long)k->grid[1],
          (long long)k->grid[2]);
  for (int i = 0; i < k->nparams; i++) {
    const tg_param *p = &k->params[i];
    if (!p->is_tensor) {
      if (p->dtype == TG_I32) fprintf(out, "//   %s: i32 = %lld\n", p->name, (long long)p->ival);
      else fprintf(out, "//   %s: %s = %g\n", p->name, tg_dtype_name(p->dtype), p->fval);
      continue;
    }
    fprintf(out, "//   %s: %s %s[", p->name, p->is_output ? "output" : "input", tg_dtype_name(p->dtype));
    for (int d = 0; d < p->rank; d++) fprintf(out, "%s%lld", d ? ", " : "", (long long)p->shape[d]);
    fprintf(out, "]\n");
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SEED [COUNT DIR]\n", argv[0]);
    return 2;
  }
  unsigned long long first = strtoull(argv[1], NULL, 10);
  if (argc < 4) {
    tg_kernel k;
    if (!tg_generate(first, NULL, &k)) return 1;
    fputs(k.source, stdout);
    describe(stdout, &k);
    tg_kernel_free(&k);
    return 0;
  }
  unsigned long long count = strtoull(argv[2], NULL, 10);
  for (unsigned long long s = first; s < first + count; s++) {
    tg_kernel k;
    if (!tg_generate(s, NULL, &k)) return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/gen_%llu.tile", argv[3], s);
    FILE *f = fopen(path, "w");
    if (!f) {
      perror(path);
      tg_kernel_free(&k);
      return 1;
    }
    fputs(k.source, f);
    fclose(f);
    tg_kernel_free(&k);
  }
  return 0;
}
