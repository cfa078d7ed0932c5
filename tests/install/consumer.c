/* consumer.c: a user of the installed tilec: headers, library and version
 * agree, and a kernel compiles to tile IR through the public API. */
#include <stdio.h>
#include <string.h>
#include <tilec.h>

static const char source[] =
    "kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N], s: f32)\n"
    "    tiles(B = 128)\n"
    "    grid(cdiv(N, B))\n"
    "{\n"
    "    i = program_id(0) * B;\n"
    "    store(Y[i : i + B], load(X[i : i + B]) * s);\n"
    "}\n";

int main(void) {
  if (tilec_version() != TILEC_VERSION_NUM) {
    fprintf(stderr, "consumer: header says %d, library %d\n", TILEC_VERSION_NUM, tilec_version());
    return 1;
  }
  tilec_program *p = NULL;
  tilec_status st = tilec_program_create(&p, source, "consumer.tile", NULL);
  if (st == TILEC_OK) st = tilec_program_compile(p, TILEC_STAGE_IR);
  if (st != TILEC_OK) {
    fprintf(stderr, "consumer: %s\n%s", tilec_status_string(st), p ? tilec_program_log(p) : "");
    tilec_program_destroy(p);
    return 1;
  }
  const char *name = tilec_program_kernel_name(p, 0);
  int ok = tilec_program_num_kernels(p) == 1 && name && strcmp(name, "scale") == 0;
  printf("consumer: %s, kernel %s\n", tilec_version_string(), name ? name : "(none)");
  tilec_program_destroy(p);
  return ok ? 0 : 1;
}
