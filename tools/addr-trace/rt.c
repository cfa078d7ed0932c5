/* rt.c: the host side of the address traces (docs/testing.md, "Address
 * traces of two builds").  Runs kernel argv[1] for every thread (argv[2] of them)
 * of the CTAs given (3 by default) one after the other and prints one line per inline asm call
 * (stub id, operands), per shared store (offset, bits) and per thread. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char tl_smem[];
static uint64_t h;
static int tid, cx, cy, nx = 3, ny = 3;

void rec_begin(int id) { h = 1469598103934665603ull ^ (uint64_t)id; printf("A%d", id); }
void rec_arg(uint64_t v) { printf(" %llx", (unsigned long long)v); h = (h ^ v) * 1099511628211ull; }
uint64_t rec_end(void) { printf("\n"); return h; }
void rec_store(uint64_t p, uint64_t v) {
  printf("S %llx %llx\n", (unsigned long long)(p - (uint64_t)(uintptr_t)tl_smem), (unsigned long long)v);
}
uint16_t f2bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
/* inline asm with a meaning (xform.py SEM): thread index, lane, opaque 1, min */
int rt_tid(void) { return tid; }
int rt_laneid(void) { return tid & 31; }
int rt_one(void) { return 1; }
int rt_min_s32(int a, int b) { return a < b ? a : b; }
/* NVVM intrinsics: deterministic stand-ins (a shuffle cannot see other lanes) */
int llvm_nvvm_read_ptx_sreg_tid_x(void) { return tid; }
int llvm_nvvm_read_ptx_sreg_ctaid_x(void) { return cx; }
int llvm_nvvm_read_ptx_sreg_ctaid_y(void) { return cy; }
int llvm_nvvm_read_ptx_sreg_nctaid_x(void) { return nx; }
int llvm_nvvm_read_ptx_sreg_nctaid_y(void) { return ny; }
void llvm_nvvm_barrier0(void) {}
float llvm_maximum_f32(float a, float b) { return a > b ? a : b; }
float llvm_nvvm_shfl_sync_bfly_f32(int m, float v, int x, int c) { (void)m; (void)x; (void)c; return v * 0.5f + 1.0f; }
float llvm_nvvm_ex2_approx_f(float x) { return exp2f(x); }
float llvm_nvvm_ex2_approx_ftz_f(float x) { return exp2f(x); }

void run_kernel(int k);
/* argv: kernel, threads, then the CTAs as X Y pairs (default (0,0) (1,1) (2,0)); grid 3 x 3
 * unless TRACE_GRID says */
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int k = atoi(argv[1]), threads = atoi(argv[2]);
  /* the grid (num_programs), from the config: TRACE_GRID="X Y" */
  const char *gr = getenv("TRACE_GRID");
  if (gr) sscanf(gr, "%d %d", &nx, &ny);
  int ctas[16][2] = {{0, 0}, {1, 1}, {2, 0}}, nc = 3;
  if (argc > 3) {
    nc = 0;
    for (int i = 3; i + 1 < argc && nc < 16; i += 2, nc++) {
      ctas[nc][0] = atoi(argv[i]);
      ctas[nc][1] = atoi(argv[i + 1]);
    }
  }
  for (int c = 0; c < nc; c++)
    for (tid = 0; tid < threads; tid++) {
      cx = ctas[c][0];
      cy = ctas[c][1];
      printf("T %d %d %d\n", cx, cy, tid);
      run_kernel(k);
    }
  return 0;
}
