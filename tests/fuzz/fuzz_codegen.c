/* fuzz_codegen.c: libFuzzer target over the whole compiler, source to PTX
 * (and to a cubin through ptxas where ptxas is found).  The input does not
 * become source text: it drives the random kernel generator (tests/gen/),
 * so every input is a valid kernel and must compile.
 *
 * Input layout: byte 0 picks the options (bit 0: no transcendental functions,
 * bit 1: no dot, bit 2: read-after-write stores, bits 3-4: the arch, sm_90a /
 * sm_80 / sm_89 / sm_90, bit 5: -O0 instead of -O3, bit 6: line info), byte 1 the statement count
 * (2..33), bytes 2-9 the seed, and the rest are the generator's decisions
 * (tg_options.choices: one byte a decision; when they run out, the seed's
 * generator goes on).  Short inputs take zeros for the missing header bytes.
 *
 * A finding (__builtin_trap, so libFuzzer saves the input): any status but
 * TILEC_OK from tilec_program_compile (a diagnostic on a generated kernel is a
 * generator or front-end bug, TILEC_ERROR_INTERNAL a compiler bug,
 * TILEC_ERROR_UNSUPPORTED a construct of the language the back end lacks,
 * ptxas rejecting the PTX is an internal error too), or a sanitizer report.
 * The kernel, the options and the log are printed first (stderr), so a crash
 * file can be triaged without rerunning it; `gen_corpus` prints the kernel of a
 * plain seed, and FUZZ_CODEGEN_PRINT=1 prints every kernel.
 *
 * ptxas: $TILEC_PTXAS, else PATH, else /usr/local/cuda/bin/ptxas (as the
 * library looks it up); where none is found the target stops at PTX.
 * FUZZ_CODEGEN_PTXAS=0 stops at PTX anyway (faster). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec.h"
#include "../gen/tilegen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static bool have_ptxas;

/* Where the library would find ptxas (api.c, find_ptxas): executable or not. */
static bool find_ptxas(void) {
  const char *env = getenv("TILEC_PTXAS");
  if (env && *env) return access(env, X_OK) == 0;
  const char *path = getenv("PATH");
  char buf[4096];
  while (path && *path) {
    const char *colon = strchr(path, ':');
    size_t len = colon ? (size_t)(colon - path) : strlen(path);
    snprintf(buf, sizeof buf, "%.*s/ptxas", (int)len, path);
    if (len && access(buf, X_OK) == 0) return true;
    path = colon ? colon + 1 : NULL;
  }
  return access("/usr/local/cuda/bin/ptxas", X_OK) == 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *off = getenv("FUZZ_CODEGEN_PTXAS");
  have_ptxas = !(off && !strcmp(off, "0")) && find_ptxas();
  fprintf(stderr, "fuzz_codegen: %s\n", have_ptxas ? "PTX assembled by ptxas" : "no ptxas: stops at PTX");
  setenv("TILEC_CACHE", "0", 1); /* the compiler, not the disk cache, is under test */
  return 0;
}

static const char *const arches[4] = {"sm_90a", "sm_80", "sm_89", "sm_90"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0; /* more decisions than a kernel makes */
  uint8_t head[10] = {0};
  memcpy(head, data, size < sizeof head ? size : sizeof head);
  tg_options o;
  memset(&o, 0, sizeof o);
  o.no_transcendental = head[0] & 1;
  o.no_dot = head[0] & 2;
  o.read_after_write = head[0] & 4;
  o.max_stmts = 2 + head[1] % 32;
  uint64_t seed = 0;
  for (int i = 0; i < 8; i++) seed = seed << 8 | head[2 + i];
  if (size > sizeof head) {
    o.choices = data + sizeof head;
    o.nchoices = size - sizeof head;
  }
  const char *arch = arches[(head[0] >> 3) & 3];
  int opt_level = head[0] & 32 ? 0 : 3;
  bool line_info = head[0] & 64;

  tg_kernel k;
  if (!tg_generate(seed, &o, &k)) return 0; /* out of memory */
  if (getenv("FUZZ_CODEGEN_PRINT")) fprintf(stderr, "--- %s -O%d\n%s", arch, opt_level, k.source);
  tilec_options *opts = NULL;
  tilec_program *prog = NULL;
  tilec_status st = tilec_options_create(&opts);
  if (st == TILEC_OK) st = tilec_options_set_arch(opts, arch);
  if (st == TILEC_OK) st = tilec_options_set_opt_level(opts, opt_level);
  if (st == TILEC_OK) st = tilec_options_set_line_info(opts, line_info);
  if (st == TILEC_OK) st = tilec_program_create(&prog, k.source, "fuzz_codegen.tile", opts);
  if (st == TILEC_OK) st = tilec_program_compile(prog, have_ptxas ? TILEC_STAGE_CUBIN : TILEC_STAGE_PTX);
  if (st == TILEC_OK) {
    const char *ptx = tilec_program_text(prog, TILEC_STAGE_PTX);
    if (!ptx || !strstr(ptx, ".entry")) {
      fprintf(stderr, "fuzz_codegen: compiled, but the PTX has no .entry\n");
      st = TILEC_ERROR_INTERNAL;
    }
  }
  if (st != TILEC_OK && st != TILEC_ERROR_NOMEM) {
    fprintf(stderr,
            "fuzz_codegen: %s (arch %s, -O%d%s, seed %llu, %zu decision bytes)\n--- log:\n%s\n--- kernel:\n%s",
            tilec_status_string(st), arch, opt_level, line_info ? ", line info" : "", (unsigned long long)seed,
            o.nchoices,
            prog ? tilec_program_log(prog) : "", k.source);
    __builtin_trap();
  }
  tilec_program_destroy(prog);
  tilec_options_destroy(opts);
  tg_kernel_free(&k);
  return 0;
}
