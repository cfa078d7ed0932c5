/* test_back_runtime_fake.c: the JIT paths without a GPU, against a fake
 * driver injected with tl_rt_driver_inject (it "links" PTX into a cubin that
 * is the PTX behind a magic line, and records every call):
 *  - tilec_device_init: cuInit + primary context once, errors for bad devices;
 *  - the warm path: a second program loading the same kernel from the disk
 *    cache runs no LLVM (no PTX text), only the module load (and, with the PTX cached where
 *    no ptxas made a cubin, the driver's whole-kernel compile at load);
 *  - the assembler: ptxas's cubin cached (tests/fakecuda/fake_ptxas), a failing ptxas left to the
 *    driver under auto and an error under "ptxas", "link" through cuLink, bad values refused;
 *    the memory cache; a corrupt entry is recompiled;
 *  - tilec_kernel_load_ptx: the PTX given reaches the driver unchanged, the
 *    launch uses the program's configuration, the handle owns its module;
 *    PTX with another entry, other parameter types or no .target is refused;
 *    every example kernel accepts its own PTX;
 *  - a row kernel's launch variant (docs/rows.md "rows5"): compiled only where the default keeps
 *    few warps an SM, launched for aligned arguments, the default kernel for the others. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "tilec.h"

/* ---- the fake driver (tests/unit/fake_cuda.h) + a launch that records itself ---------------- */
#define FAKE_NDEVICES 2
#include "fake_cuda.h"

static void **last_params; /* the last launch's parameter pointers (valid until the next launch) */
static unsigned prev_grid[3], prev_block; /* the launch before the last */
static uint64_t prev_param0;              /* its first parameter's first 8 bytes */
static size_t allocs, alloc_bytes, frees;  /* cuMemAlloc calls, the last one's size; cuMemFree calls */
static CUresult f_mem_alloc(CUdeviceptr *p, size_t n) {
  allocs++;
  alloc_bytes = n;
  *p = 0x7f3000000000ull + 0x100000000ull * allocs;
  return 0;
}
static CUresult f_mem_free(CUdeviceptr p) { (void)p; frees++; return 0; }
/* TILEC_PITCH_REPACK=1's stream-ordered calls (lib/api/pitch_repack.c): their order in `seq`
 * ('A' cuMemAllocAsync, 'C' cuMemcpy2DAsync, 'L' cuLaunchKernel, 'F' cuMemFreeAsync), each one's
 * arguments and stream; the fake's allocations are 8 bytes past a 16-byte boundary, so that the
 * copy's base is the launcher's rounding */
static struct {
  char seq[64];
  int nseq, nallocs, ncopies, nfrees;
  CUdeviceptr alloc_ptr[8], freed[8];
  size_t alloc_bytes[8];
  CUDA_MEMCPY2D copy[8];
  CUstream alloc_stream, copy_stream, free_stream, launch_stream;
} rp;
static void rp_note(char c) {
  if (rp.nseq + 1 < (int)sizeof rp.seq) rp.seq[rp.nseq++] = c;
}
static CUresult f_alloc_async(CUdeviceptr *p, size_t n, CUstream s) {
  rp_note('A');
  *p = 0x7f5000000008ull + 0x100000000ull * (uint64_t)rp.nallocs;
  rp.alloc_bytes[rp.nallocs % 8] = n;
  rp.alloc_ptr[rp.nallocs++ % 8] = *p;
  rp.alloc_stream = s;
  return 0;
}
static CUresult f_free_async(CUdeviceptr p, CUstream s) {
  rp_note('F');
  rp.freed[rp.nfrees++ % 8] = p;
  rp.free_stream = s;
  return 0;
}
static CUresult f_copy2d_async(const CUDA_MEMCPY2D *c, CUstream s) {
  rp_note('C');
  rp.copy[rp.ncopies++ % 8] = *c;
  rp.copy_stream = s;
  return 0;
}
static CUfunction last_fn;  /* the last launch's function */
static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned smem, CUstream s, void **params, void **extra) {
  (void)extra;
  rp_note('L');
  rp.launch_stream = s;
  last_fn = f;
  calls.launches++;
  memcpy(prev_grid, calls.grid, sizeof prev_grid);
  prev_block = calls.block[0];
  prev_param0 = calls.param0;
  calls.grid[0] = gx; calls.grid[1] = gy; calls.grid[2] = gz;
  calls.block[0] = bx; calls.block[1] = by; calls.block[2] = bz;
  calls.smem = smem;
  memcpy(&calls.param0, params[0], 8);
  last_params = params;
  return 0;
}

/* TILEC_ATTN_SCHED=1's tile counters (lib/api/sched_slot.c): each cuMemsetD32Async's address, words,
 * value and stream, and the capture state cuStreamIsCapturing reports (for every stream) */
static struct {
  int n;
  CUdeviceptr addr[16];
  size_t words[16];
  unsigned value[16];
  CUstream stream[16];
  int capturing;
} ms32;
static CUresult f_memset32_async(CUdeviceptr p, unsigned v, size_t n, CUstream s) {
  int i = ms32.n++ % 16;
  ms32.addr[i] = p, ms32.words[i] = n, ms32.value[i] = v, ms32.stream[i] = s;
  return 0;
}
static CUresult f_is_capturing(CUstream s, int *status) {
  (void)s;
  *status = ms32.capturing;
  return 0;
}

static const tl_cuda fake = {FAKE_CUDA_ENTRIES, .cuLaunchKernel = f_launch, .cuMemAlloc = f_mem_alloc,
                             .cuMemFree = f_mem_free, .cuMemAllocAsync = f_alloc_async,
                             .cuMemFreeAsync = f_free_async, .cuMemcpy2DAsync = f_copy2d_async,
                             .cuMemsetD32Async = f_memset32_async, .cuStreamIsCapturing = f_is_capturing};

/* ---- helpers --------------------------------------------------------------------------- */
static const char source[] =
    "kernel vadd(X: tensor<f32>[N], Y: tensor<f32>[N], Z: tensor<f32>[N], a: f32)\n"
    "    tiles(B = 128)\n"
    "    grid(cdiv(N, B))\n"
    "{\n"
    "    i = program_id(0) * B;\n"
    "    store(Z[i : i + B], load(X[i : i + B]) * a + load(Y[i : i + B]));\n"
    "}\n";

static char cache_dir[64];
static void setup(void) {
  cr_assert(tl_rt_driver_inject(&fake));
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tilec-fake-cache-XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("TILEC_CACHE_DIR", cache_dir, 1);
  unsetenv("TILEC_CACHE");
}
static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", cache_dir);
}

/* time-passes on: the log says whether codegen ran ("codegen.llvm-opt") */
static tilec_program *program(void) {
  tilec_program *p = NULL;
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "time-passes", "1"), TILEC_OK);
  cr_assert_eq(tilec_program_create(&p, source, "vadd.tile", o), TILEC_OK);
  tilec_options_destroy(o);
  return p;
}
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Launch k (on `device`) with N elements at fake device addresses. */
static void launch(tilec_kernel *k, int device, int64_t n, uint64_t base) {
  int64_t shape[1] = {n};
  DLTensor t[3];
  tilec_arg args[4];
  for (int i = 0; i < 3; i++) {
    t[i] = (DLTensor){.data = (void *)(uintptr_t)(base + 0x100000u * (uint64_t)i), .device = {kDLCUDA, device},
                      .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  args[3] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 0.75f};
  cr_assert_eq(tilec_kernel_launch(k, args, 4, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
}

/* ---- tests ------------------------------------------------------------------------------- */
TestSuite(fake_driver, .init = setup, .fini = teardown);

Test(fake_driver, device_init_once) {
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  cr_assert_eq(calls.retains, 1);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  cr_assert_eq(calls.retains, 1, "the primary context is retained once per device");
  cr_assert_eq(current, (CUcontext)(uintptr_t)0x1000, "device 0's context is current");
  cr_assert_eq(tilec_device_init(1), TILEC_OK);
  cr_assert_eq(calls.retains, 2);
  cr_assert_eq(current, (CUcontext)(uintptr_t)0x1010);
  cr_assert_eq(tilec_device_init(2), TILEC_ERROR_NO_DEVICE);
  cr_assert_eq(tilec_device_init(-1), TILEC_ERROR_NO_DEVICE);
}

Test(fake_driver, warm_load_runs_no_llvm_and_no_jit) {
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  tilec_program *cold = program();
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(cold, "vadd", 0, &k), TILEC_OK, "%s", tilec_program_log(cold));
  cr_assert_str_eq(tilec_kernel_origin(k), "compiled");
  cr_assert_eq(calls.links, 1);
  /* one kernel's own PTX went to the driver; the program's text stays unmade */
  cr_assert_null(tilec_program_text(cold, TILEC_STAGE_PTX));
  cr_assert(strstr(calls.last_linked_ptx, ".entry vadd("), "%s", calls.last_linked_ptx);
  cr_assert(strstr(tilec_program_log(cold), "codegen.llvm-opt"), "%s", tilec_program_log(cold));
  int threads = 0, smem = -1;
  const char *entry = NULL;
  cr_assert_eq(tilec_kernel_config(k, &threads, &smem, &entry), TILEC_OK);
  launch(k, 0, 1000, 0x7f0000000000ull);
  cr_assert_eq(calls.grid[0], 8u); /* cdiv(1000, 128) */
  cr_assert_eq(calls.block[0], (unsigned)threads);

  /* a new program on the other device: the memory cache cannot serve it, the disk can */
  int loads_before = calls.module_loads;
  tilec_program *warm = program();
  tilec_kernel *k2 = NULL;
  double t0 = now_ms();
  cr_assert_eq(tilec_kernel_load(warm, "vadd", 1, &k2), TILEC_OK, "%s", tilec_program_log(warm));
  double ms = now_ms() - t0;
  cr_log_info("warm load (front-end, passes, key, cache read, fake module load): %.3f ms", ms);
  cr_assert_str_eq(tilec_kernel_origin(k2), "disk-cache");
  /* no ptxas (fake_cuda.h): the cache holds the PTX, which the driver compiles whole at load
   * (its own cache serves it); the link path's cubin needs no compile at all (below) */
  cr_assert_eq(calls.links, 2, "the warm path did not hand the cached PTX to the driver");
  cr_assert_eq(calls.link_creates, 0, "the default assembler used cuLink");
  cr_assert_null(strstr(tilec_program_log(warm), "codegen"), "the warm path ran LLVM: %s", tilec_program_log(warm));
  cr_assert_null(tilec_program_text(warm, TILEC_STAGE_PTX), "the warm path ran LLVM");
  cr_assert_null(tilec_program_text(warm, TILEC_STAGE_LLVM), "the warm path ran LLVM");
  cr_assert_eq(calls.module_loads, loads_before + 1);
  int threads2 = 0, smem2 = -1;
  const char *entry2 = NULL;
  cr_assert_eq(tilec_kernel_config(k2, &threads2, &smem2, &entry2), TILEC_OK);
  cr_assert_eq(threads2, threads);
  cr_assert_eq(smem2, smem);
  cr_assert_str_eq(entry2, entry);
  launch(k2, 1, 129, 0x7f1000000000ull);
  cr_assert_eq(calls.grid[0], 2u);
  cr_assert_eq(calls.param0, 0x7f1000000000ull);

  /* the same device again: memory cache, not even a module load */
  tilec_program *hot = program();
  tilec_kernel *k3 = NULL;
  cr_assert_eq(tilec_kernel_load(hot, "vadd", 0, &k3), TILEC_OK);
  cr_assert_str_eq(tilec_kernel_origin(k3), "memory-cache");
  cr_assert_eq(calls.module_loads, loads_before + 1);
  cr_assert_eq(calls.unloads, 0, "cached modules stay loaded");
  tilec_kernel_destroy(k3); tilec_kernel_destroy(k2); tilec_kernel_destroy(k);
  tilec_program_destroy(hot); tilec_program_destroy(warm); tilec_program_destroy(cold);
  cr_assert_eq(calls.unloads, 0);
}

/* Loading one kernel of a two-kernel file compiles that kernel only (the
 * passes run once for the program); the second load compiles the other; a
 * program whose PTX was made (tilec_program_compile) gives the JIT that text. */

/* ---- the assembler (jit.c `assemble`) ----------------------------------------------------- */
static tilec_program *program_with(const char *key, const char *value) {
  tilec_program *p = NULL;
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "time-passes", "1"), TILEC_OK);
  if (key) cr_assert_eq(tilec_options_set(o, key, value), TILEC_OK);
  cr_assert_eq(tilec_program_create(&p, source, "vadd.tile", o), TILEC_OK);
  tilec_options_destroy(o);
  return p;
}

Test(fake_driver, ptxas_cubin_is_cached_and_its_warm_load_compiles_nothing) {
  setenv("TILEC_PTXAS", TILEC_SOURCE_DIR "/tests/fakecuda/fake_ptxas", 1);
  unsetenv("FAKE_PTXAS_FAIL");
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  tilec_program *cold = program();
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(cold, "vadd", 0, &k), TILEC_OK, "%s", tilec_program_log(cold));
  cr_assert_str_eq(tilec_kernel_origin(k), "compiled");
  cr_assert_eq(calls.links, 0, "the driver compiled PTX although ptxas was found");
  cr_assert_eq(calls.cubin_loads, 1, "ptxas's cubin was not what got loaded");
  tilec_program *warm = program();
  tilec_kernel *k2 = NULL;
  cr_assert_eq(tilec_kernel_load(warm, "vadd", 1, &k2), TILEC_OK, "%s", tilec_program_log(warm));
  cr_assert_str_eq(tilec_kernel_origin(k2), "disk-cache");
  cr_assert_eq(calls.links, 0, "the warm path compiled");
  cr_assert_eq(calls.cubin_loads, 2);
  launch(k2, 1, 1000, 0x7f1000000000ull);
  cr_assert_eq(calls.grid[0], 8u);
  tilec_kernel_destroy(k2); tilec_kernel_destroy(k);
  tilec_program_destroy(warm); tilec_program_destroy(cold);
}

Test(fake_driver, a_ptxas_that_fails_leaves_the_ptx_to_the_driver_under_auto_and_is_an_error_when_asked_for) {
  setenv("TILEC_PTXAS", TILEC_SOURCE_DIR "/tests/fakecuda/fake_ptxas", 1);
  setenv("FAKE_PTXAS_FAIL", "1", 1);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  tilec_program *p = program();
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "vadd", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_eq(calls.links, 1, "the driver did not compile the PTX");
  cr_assert_eq(calls.cubin_loads, 0);
  cr_assert(strstr(tilec_program_log(p), "the driver compiles its PTX"), "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  tilec_program *strict = program_with("assembler", "ptxas");
  tilec_kernel *k2 = NULL;
  cr_assert_neq(tilec_kernel_load(strict, "vadd", 0, &k2), TILEC_OK);
  cr_assert_null(k2);
  cr_assert(strstr(tilec_program_log(strict), "ptxas rejected the generated PTX"), "%s", tilec_program_log(strict));
  cr_assert(strstr(tilec_program_log(strict), "Unsupported .version (fake)"), "%s", tilec_program_log(strict));
  tilec_program_destroy(strict);
  unsetenv("FAKE_PTXAS_FAIL");
}

Test(fake_driver, assembler_link_compiles_through_culink_and_caches_its_cubin) {
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  tilec_program *p = program_with("assembler", "link");
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "vadd", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_eq(calls.link_creates, 1);
  tilec_program *warm = program_with("assembler", "link");
  tilec_kernel *k2 = NULL;
  cr_assert_eq(tilec_kernel_load(warm, "vadd", 1, &k2), TILEC_OK, "%s", tilec_program_log(warm));
  cr_assert_str_eq(tilec_kernel_origin(k2), "disk-cache");
  cr_assert_eq(calls.links, 1, "the linked cubin's warm load compiled");
  /* another assembler is another cache entry: the default does not load cuLink's cubin */
  tilec_program *dflt = program();
  tilec_kernel *k3 = NULL;
  cr_assert_eq(tilec_kernel_load(dflt, "vadd", 1, &k3), TILEC_OK, "%s", tilec_program_log(dflt));
  cr_assert_str_eq(tilec_kernel_origin(k3), "compiled");
  cr_assert_eq(calls.link_creates, 1);
  tilec_kernel_destroy(k3); tilec_kernel_destroy(k2); tilec_kernel_destroy(k);
  tilec_program_destroy(dflt); tilec_program_destroy(warm); tilec_program_destroy(p);
}

Test(fake_driver, assembler_values) {
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  const char *good[] = {"auto", "ptxas", "driver", "link"};
  for (int i = 0; i < 4; i++) cr_assert_eq(tilec_options_set(o, "assembler", good[i]), TILEC_OK, "%s", good[i]);
  cr_assert_eq(tilec_options_set(o, "assembler", "nvcc"), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_options_set(o, "assembler", ""), TILEC_ERROR_USAGE);
  tilec_options_destroy(o);
}

/* ARCH is fixed by the program's first compile (docs/language.md 5.1): a program compiled without an
 * arch is device 0's (sm_90a here); a load on a device of another target (device 1 as sm_89) is refused
 * with advice, where a program not yet compiled, or given that arch, compiles for the load's device. */
Test(fake_driver, arch_fixed_by_the_first_compile) {
  static const char src[] =
      "kernel k(X: tensor<f32>[N])\n    tiles(B = ARCH_SPECIFIC == 90 ? 256 : 128)\n    grid(cdiv(N, B))\n"
      "{\n    i = program_id(0) * B;\n    store(X[i : i + B], load(X[i : i + B]) * 2.0);\n}\n";
  fake_cc[1] = 89;
  tilec_program *p = NULL;
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_program_create(&p, src, "arch.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_eq(tilec_kernel_load(p, "k", 1, &k), TILEC_ERROR_USAGE);
  cr_assert(strstr(tilec_program_log(p), "compiled for sm_90a") && strstr(tilec_program_log(p), "device 1 is sm_89"),
            "%s", tilec_program_log(p));
  cr_assert_eq(tilec_kernel_load(p, "k", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert(strstr(calls.last_linked_ptx, ".target sm_90a"));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  /* not compiled yet: the load's device decides */
  cr_assert_eq(tilec_program_create(&p, src, "arch.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_kernel_load(p, "k", 1, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert(strstr(calls.last_linked_ptx, ".target sm_89"));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  /* the arch given: compiled first, loaded on its device */
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set_arch(o, "sm_89"), TILEC_OK);
  cr_assert_eq(tilec_program_create(&p, src, "arch.tile", o), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_IR), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_eq(tilec_kernel_load(p, "k", 1, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert(strstr(calls.last_linked_ptx, ".target sm_89"));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  tilec_options_destroy(o);
}

Test(fake_driver, load_compiles_the_kernel_only) {
  static const char two[] =
      "kernel first_k(X: tensor<f32>[N], Y: tensor<f32>[N])\n"
      "    tiles(B = 128)\n    grid(cdiv(N, B))\n"
      "{\n    i = program_id(0) * B;\n    store(Y[i : i + B], load(X[i : i + B]) * 2.0);\n}\n"
      "kernel second_k(X: tensor<f32>[N], Y: tensor<f32>[N])\n"
      "    tiles(B = 256)\n    grid(cdiv(N, B))\n"
      "{\n    i = program_id(0) * B;\n    store(Y[i : i + B], exp(load(X[i : i + B])));\n}\n";
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, two, "two.tile", NULL), TILEC_OK);
  tilec_kernel *k1 = NULL, *k2 = NULL;
  cr_assert_eq(tilec_kernel_load(p, "second_k", 0, &k1), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert(strstr(calls.last_linked_ptx, ".entry second_k("));
  cr_assert_null(strstr(calls.last_linked_ptx, "first_k"), "the other kernel was compiled too");
  cr_assert_null(tilec_program_text(p, TILEC_STAGE_PTX));
  cr_assert_eq(tilec_kernel_load(p, "first_k", 0, &k2), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert(strstr(calls.last_linked_ptx, ".entry first_k("));
  cr_assert_null(strstr(calls.last_linked_ptx, "second_k"));
  int threads = 0, smem = -1;
  const char *entry = NULL;
  cr_assert_eq(tilec_kernel_config(k1, &threads, &smem, &entry), TILEC_OK);
  cr_assert_str_eq(entry, "second_k");
  cr_assert_eq(threads, 128); /* the simple pipeline's 4 warps */
  tilec_kernel_destroy(k2); tilec_kernel_destroy(k1);
  tilec_program_destroy(p);

  /* whole-program PTX first: the JIT takes it (both entries).  Another
   * source text (a comment) so that no cache has the kernel. */
  char two_b[sizeof two + 16];
  snprintf(two_b, sizeof two_b, "// b\n%s", two);
  int links = calls.links;
  cr_assert_eq(tilec_program_create(&p, two_b, "two.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK);
  cr_assert_eq(tilec_kernel_load(p, "first_k", 0, &k1), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_eq(calls.links, links + 1);
  cr_assert(strstr(calls.last_linked_ptx, ".entry first_k(") && strstr(calls.last_linked_ptx, ".entry second_k("));
  tilec_kernel_destroy(k1);
  tilec_program_destroy(p);

  /* option "kernel": the program's PTX holds first_k only; loading second_k compiles it alone */
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "kernel", "first_k"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "kernel", "not an identifier"), TILEC_ERROR_USAGE);
  snprintf(two_b, sizeof two_b, "// c\n%s", two);
  cr_assert_eq(tilec_program_create(&p, two_b, "two.tile", o), TILEC_OK);
  tilec_options_destroy(o);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK);
  const char *text = tilec_program_text(p, TILEC_STAGE_PTX);
  cr_assert(strstr(text, ".entry first_k(") && !strstr(text, "second_k"), "%s", text);
  /* its tile passes ran on first_k alone (api.c stage_passes): the IR text is first_k's; the AST
   * text (printed on demand) has both */
  text = tilec_program_text(p, TILEC_STAGE_IR);
  cr_assert(strstr(text, "kernel @first_k(") && !strstr(text, "second_k"), "%s", text);
  text = tilec_program_text(p, TILEC_STAGE_AST);
  cr_assert(text && strstr(text, "kernel first_k ") && strstr(text, "kernel second_k "), "%s", text ? text : "(null)");
  cr_assert_eq(tilec_program_text(p, TILEC_STAGE_AST), text, "the AST text is printed once");
  cr_assert_eq(tilec_kernel_load(p, "second_k", 0, &k2), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert(strstr(calls.last_linked_ptx, ".entry second_k(") && !strstr(calls.last_linked_ptx, "first_k"));
  tilec_kernel_destroy(k2);
  tilec_program_destroy(p);
}

/* A codegen switch from the environment (TILEC_TMA, TILEC_WGMMA_INFLIGHT, the
 * TILEC_LLVM_* measuring knobs) is part of the kernel cache key: the same
 * source under another setting is another kernel, and back is a hit again. */
Test(fake_driver, codegen_env_switches_are_in_the_key) {
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  tilec_program *a = program(), *b = program(), *c = program();
  tilec_kernel *ka = NULL, *kb = NULL, *kc = NULL;
  cr_assert_eq(tilec_kernel_load(a, "vadd", 0, &ka), TILEC_OK, "%s", tilec_program_log(a));
  setenv("TILEC_WGMMA_INFLIGHT", "0", 1);
  cr_assert_eq(tilec_kernel_load(b, "vadd", 0, &kb), TILEC_OK, "%s", tilec_program_log(b));
  unsetenv("TILEC_WGMMA_INFLIGHT");
  cr_assert_str_eq(tilec_kernel_origin(kb), "compiled", "a TILEC_WGMMA_INFLIGHT=0 load took the default's kernel");
  cr_assert_eq(tilec_kernel_load(c, "vadd", 0, &kc), TILEC_OK, "%s", tilec_program_log(c));
  cr_assert_str_eq(tilec_kernel_origin(kc), "memory-cache");
  tilec_kernel_destroy(kc); tilec_kernel_destroy(kb); tilec_kernel_destroy(ka);
  tilec_program_destroy(c); tilec_program_destroy(b); tilec_program_destroy(a);
}

Test(fake_driver, corrupt_entry_is_recompiled) {
  tilec_program *p = program();
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, NULL, 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  /* flip one byte in the middle of the only entry */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "ls %s/*.tlk", cache_dir);
  FILE *ls = popen(cmd, "r");
  char path[512] = "";
  cr_assert(fgets(path, sizeof path, ls));
  pclose(ls);
  path[strcspn(path, "\n")] = 0;
  FILE *f = fopen(path, "r+b");
  cr_assert(f);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, size / 2, SEEK_SET);
  int c = fgetc(f);
  fseek(f, size / 2, SEEK_SET);
  fputc(c ^ 0x10, f);
  fclose(f);
  tilec_program *q = program();
  cr_assert_eq(tilec_kernel_load(q, NULL, 1, &k), TILEC_OK, "%s", tilec_program_log(q));
  cr_assert_str_eq(tilec_kernel_origin(k), "compiled");
  cr_assert(strstr(tilec_program_log(q), "checksum mismatch") != NULL, "%s", tilec_program_log(q));
  cr_assert_eq(calls.links, 2);
  tilec_kernel_destroy(k);
  tilec_program_destroy(q);
}

/* p's PTX with the first occurrence of `from` replaced by `to` (malloc'd). */
static char *edited_ptx(tilec_program *p, const char *from, const char *to) {
  const char *ptx = tilec_program_text(p, TILEC_STAGE_PTX);
  const char *at = strstr(ptx, from);
  cr_assert_not_null(at, "no '%s' in the PTX", from);
  size_t head = (size_t)(at - ptx), n = strlen(ptx) - strlen(from) + strlen(to);
  char *out = malloc(n + 1);
  memcpy(out, ptx, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  return out;
}

Test(fake_driver, load_user_ptx) {
  tilec_program *p = program();
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK, "%s", tilec_program_log(p));
  char *ptx = strdup(tilec_program_text(p, TILEC_STAGE_PTX));
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load_ptx(p, "vadd", ptx, 1, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_str_eq(tilec_kernel_origin(k), "user-ptx");
  cr_assert_eq(calls.links, 1);
  cr_assert_str_eq(calls.last_linked_ptx, ptx, "the driver got other PTX than the user's");
  launch(k, 1, 257, 0x7f2000000000ull);
  cr_assert_eq(calls.grid[0], 3u);
  tilec_kernel *jit = NULL;
  cr_assert_eq(tilec_kernel_load(p, "vadd", 1, &jit), TILEC_OK, "%s", tilec_program_log(p));
  int t1, s1, t2, s2;
  const char *e1, *e2;
  tilec_kernel_config(k, &t1, &s1, &e1);
  tilec_kernel_config(jit, &t2, &s2, &e2);
  cr_assert_eq(t1, t2);
  cr_assert_eq(s1, s2);
  cr_assert_str_eq(e1, e2);
  cr_assert_eq(calls.block[0], (unsigned)t1);
  cr_assert_eq(calls.unloads, 0);
  tilec_kernel_destroy(k);
  cr_assert_eq(calls.unloads, 1, "the user PTX module is the handle's");
  tilec_kernel_destroy(jit);
  cr_assert_eq(calls.unloads, 1);

  /* refused before the driver sees it */
  int links = calls.links;
  char *other_entry = edited_ptx(p, ".entry vadd(", ".entry vsub(");
  cr_assert_eq(tilec_kernel_load_ptx(p, "vadd", other_entry, 0, &k), TILEC_ERROR_USAGE);
  cr_assert_null(k);
  cr_assert(strstr(tilec_program_log(p), "no .entry vadd") != NULL, "%s", tilec_program_log(p));
  char *other_params = edited_ptx(p, ".param .f32", ".param .u32");
  cr_assert_eq(tilec_kernel_load_ptx(p, "vadd", other_params, 0, &k), TILEC_ERROR_USAGE);
  cr_assert(strstr(tilec_program_log(p), "the program's kernel takes") != NULL, "%s", tilec_program_log(p));
  char *no_target = edited_ptx(p, ".target", "//target");
  cr_assert_eq(tilec_kernel_load_ptx(p, "vadd", no_target, 0, &k), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_kernel_load_ptx(p, "vadd", NULL, 0, &k), TILEC_ERROR_USAGE);
  cr_assert_eq(tilec_kernel_load_ptx(p, "nosuch", ptx, 0, &k), TILEC_ERROR_USAGE);
  cr_assert_eq(calls.links, links);
  free(other_entry); free(other_params); free(no_target); free(ptx);
  tilec_program_destroy(p);
}

Test(fake_driver, user_ptx_compiles_the_program_for_its_configuration) {
  /* a program not compiled yet: load_ptx compiles it (for the launch
   * configuration) and then loads the user's text, not its own */
  tilec_program *ref = program();
  cr_assert_eq(tilec_program_compile(ref, TILEC_STAGE_PTX), TILEC_OK);
  char *ptx = strdup(tilec_program_text(ref, TILEC_STAGE_PTX));
  tilec_program_destroy(ref);
  /* same code, a comment only the user's copy has */
  size_t n = strlen(ptx);
  char *user = malloc(n + 64);
  snprintf(user, n + 64, "// compiled offline\n%s", ptx);
  tilec_program *p = program();
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load_ptx(p, NULL, user, 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_str_eq(calls.last_linked_ptx, user);
  cr_assert_str_eq(tilec_program_text(p, TILEC_STAGE_PTX), ptx, "the program's own PTX differs from a fresh compile");
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  free(user);
  free(ptx);
}

Test(fake_driver, user_ptx_of_every_example_kernel) {
  /* every example's own PTX passes the entry/parameter check for each of its kernels */
  FILE *ls = popen("ls " TILEC_SOURCE_DIR "/examples/*.tile", "r");
  char path[4096];
  int kernels = 0;
  while (fgets(path, sizeof path, ls)) {
    path[strcspn(path, "\n")] = 0;
    tilec_program *p = NULL;
    cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK, "%s", path);
    cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK, "%s: %s", path, tilec_program_log(p));
    char *ptx = strdup(tilec_program_text(p, TILEC_STAGE_PTX));
    for (int i = 0; i < tilec_program_num_kernels(p); i++, kernels++) {
      tilec_kernel *k = NULL;
      const char *name = tilec_program_kernel_name(p, i);
      cr_assert_eq(tilec_kernel_load_ptx(p, name, ptx, 0, &k), TILEC_OK, "%s:%s: %s", path, name, tilec_program_log(p));
      cr_assert_str_eq(calls.last_linked_ptx, ptx);
      tilec_kernel_destroy(k);
    }
    free(ptx);
    tilec_program_destroy(p);
  }
  pclose(ls);
  cr_assert_geq(kernels, 9);
  cr_assert_eq(calls.unloads, kernels);
}

/* A launch of gemm.tile's cutlass_gemm (sm_90a, TMA ring): two hidden
 * tensor maps after the 15 ABI parameters, encoded with the tile's boxes,
 * once per (pointer, sizes, strides); a tensor failing the map test gets a
 * zeroed map and no encode (with tma-fallback=inline the kernel takes its
 * cp.async ring; a TMA form, the default, runs its no-TMA form instead). */
static void gemm_launch(tilec_kernel *k, uint64_t a, int64_t M, int64_t N, int64_t K, int64_t ldb) {
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N}, stb[2] = {ldb, 1};
  DLTensor ta = {.data = (void *)(uintptr_t)a, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = sa};
  DLTensor tb = {.data = (void *)(uintptr_t)0x20000000u, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1},
                 .shape = sb, .strides = stb};
  DLTensor tc = {.data = (void *)(uintptr_t)0x30000000u, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = sc};
  tilec_arg args[3] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &ta}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &tb},
                       {.kind = TILEC_ARG_TENSOR, .u.tensor = &tc}};
  cr_assert_eq(tilec_kernel_launch(k, args, 3, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
}

/* Load `kernel` of examples/FILE; its PTX must declare the two hidden maps
 * as parameters `first` and `first + 1`.  The small-M forms in order (TILEC_FORM_THREADS=0), so
 * that the PTX the fake saw last is the same on every run (the last form's). */
static tilec_kernel *load_tma_example(const char *file, const char *kernel, int first, const char *fallback,
                                      tilec_program **pp) {
  char path[1024], decl[256];
  setenv("TILEC_FORM_THREADS", "0", 1);
  snprintf(path, sizeof path, "%s/examples/%s", TILEC_SOURCE_DIR, file);
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  if (fallback) cr_assert_eq(tilec_options_set(o, "tma-fallback", fallback), TILEC_OK);
  cr_assert_eq(tilec_program_create_from_file(pp, path, o), TILEC_OK);
  tilec_options_destroy(o);
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(*pp, kernel, 0, &k), TILEC_OK, "%s", tilec_program_log(*pp));
  for (int i = first; i < first + 2; i++) {
    snprintf(decl, sizeof decl, ".param .align 64 .b8 %s_param_%d[128]", kernel, i);
    cr_assert(strstr(calls.last_linked_ptx, decl), "no %s", decl);
  }
  return k;
}

Test(fake_driver, tma_maps_encoded_once_per_tensor) {
  tilec_program *p = NULL;
  tilec_kernel *k = load_tma_example("gemm.tile", "cutlass_gemm", 15, "inline", &p);
  cr_assert_null(strstr(calls.last_linked_ptx, "trap;"), "the kernel with its fallback inline has no trap");
  int e0 = calls.encodes;
  cr_assert(strstr(calls.last_linked_ptx, ".param .align 64 .b8 cutlass_gemm_param_17[128]"),
            "no map for C (the epilogue's TMA store)");
  gemm_launch(k, 0x10000000u, 300, 520, 4096, 520);
  cr_assert_eq(calls.encodes - e0, 3);
  /* A [300][4096] bf16: dims innermost first, row stride in bytes, box 64 x 128 rows, 128-byte swizzle */
  cr_assert_eq(calls.enc[e0 % 4].dtype, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  cr_assert_eq(calls.enc[e0 % 4].addr, (void *)(uintptr_t)0x10000000u);
  cr_assert_eq(calls.enc[e0 % 4].dims[0], 4096);
  cr_assert_eq(calls.enc[e0 % 4].dims[1], 300);
  cr_assert_eq(calls.enc[e0 % 4].stride, 8192);
  cr_assert_eq(calls.enc[e0 % 4].box[0], 64);
  cr_assert_eq(calls.enc[e0 % 4].box[1], 128);
  cr_assert_eq(calls.enc[e0 % 4].estr[0], 1);
  cr_assert_eq(calls.enc[e0 % 4].swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  cr_assert_eq(calls.enc[e0 % 4].oob, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  cr_assert_eq(calls.enc[e0 % 4].interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  /* B [4096][520] N-major: one box per 64-column atom, 64 columns x 64 k-rows */
  cr_assert_eq(calls.enc[(e0 + 1) % 4].dims[0], 520);
  cr_assert_eq(calls.enc[(e0 + 1) % 4].dims[1], 4096);
  cr_assert_eq(calls.enc[(e0 + 1) % 4].stride, 1040);
  cr_assert_eq(calls.enc[(e0 + 1) % 4].box[0], 64);
  cr_assert_eq(calls.enc[(e0 + 1) % 4].box[1], 64);
  /* C [300][520], the epilogue's TMA store (docs/pipelines.md "Epilogue sub-tiles"): box 64
   * columns x 128 rows, 128-byte swizzle */
  cr_assert_eq(calls.enc[(e0 + 2) % 4].addr, (void *)(uintptr_t)0x30000000u);
  cr_assert_eq(calls.enc[(e0 + 2) % 4].dims[0], 520);
  cr_assert_eq(calls.enc[(e0 + 2) % 4].dims[1], 300);
  cr_assert_eq(calls.enc[(e0 + 2) % 4].stride, 1040);
  cr_assert_eq(calls.enc[(e0 + 2) % 4].box[0], 64);
  cr_assert_eq(calls.enc[(e0 + 2) % 4].box[1], 128);
  cr_assert_eq(calls.enc[(e0 + 2) % 4].swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  /* the maps are the last three parameters, as encoded */
  int m15 = 0, m16 = 0;
  memcpy(&m15, last_params[15], sizeof m15);
  memcpy(&m16, last_params[16], sizeof m16);
  cr_assert_eq(m15, e0 + 1);
  cr_assert_eq(m16, e0 + 2);
  cr_assert_eq(((unsigned char *)last_params[15])[127], 0xAB);
  /* the same tensors again: no encode; another A pointer: A's map only */
  gemm_launch(k, 0x10000000u, 300, 520, 4096, 520);
  cr_assert_eq(calls.encodes - e0, 3);
  gemm_launch(k, 0x10010000u, 300, 520, 4096, 520);
  cr_assert_eq(calls.encodes - e0, 4);
  /* B with a row stride of 517 elements (1034 bytes, not a multiple of 16),
   * and C [300][517] with it: no maps, zeroed; A's is kept */
  gemm_launch(k, 0x10010000u, 300, 517, 4096, 517);
  cr_assert_eq(calls.encodes - e0, 4);
  unsigned char zero[128] = {0};
  cr_assert(memcmp(last_params[16], zero, 128) == 0);
  cr_assert(memcmp(last_params[17], zero, 128) == 0);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* A launch of attn.tile's cutlass_attn_fwd (sm_90a, TMA ring of K and V,
 * rank 4): two hidden rank-4 maps after the 37 ABI parameters, dims
 * innermost first {D, S, H, Z}, the three outer byte strides, box
 * {64, BN, 1, 1} (box 1 in the dims indexed by z and h); an attention in
 * the [Z, S, H, D] memory layout (a permuted view) gets its own strides;
 * a K whose D stride is not 1 gets a zeroed map (the kernel's cp.async ring). */
static void attn_launch(tilec_kernel *k, const int64_t *kstrides) {
  int64_t shape[4] = {2, 3, 1000, 64};
  DLTensor t[4];
  tilec_arg args[5];
  for (int i = 0; i < 4; i++) {
    t[i] = (DLTensor){.data = (void *)(uintptr_t)(0x10000000u * (i + 1)), .device = {kDLCUDA, 0}, .ndim = 4,
                      .dtype = {kDLBfloat, 16, 1}, .shape = shape, .strides = i == 1 ? (int64_t *)kstrides : NULL};
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  args[4] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 0.125f};
  cr_assert_eq(tilec_kernel_launch(k, args, 5, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
}

Test(fake_driver, tma_rank4_maps_of_attention) {
  tilec_program *p = NULL;
  tilec_kernel *k = load_tma_example("attn.tile", "cutlass_attn_fwd", 37, "inline", &p);
  cr_assert(strstr(calls.last_linked_ptx, "cp.async.bulk.tensor.4d.shared::cluster.global.tile"));
  int e0 = calls.encodes;
  int64_t contiguous[4] = {3 * 1000 * 64, 1000 * 64, 64, 1};
  attn_launch(k, contiguous);
  cr_assert_eq(calls.encodes - e0, 2);
  for (int m = 0; m < 2; m++) { /* K, then V: [2][3][1000][64] bf16, contiguous */
    int i = (e0 + m) % 4;
    cr_assert_eq(calls.enc[i].rank, 4);
    cr_assert_eq(calls.enc[i].addr, (void *)(uintptr_t)(0x10000000u * (m + 2)));
    cr_assert_eq(calls.enc[i].dtype, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    cr_assert_eq(calls.enc[i].dims[0], 64);
    cr_assert_eq(calls.enc[i].dims[1], 1000);
    cr_assert_eq(calls.enc[i].dims[2], 3);
    cr_assert_eq(calls.enc[i].dims[3], 2);
    cr_assert_eq(calls.enc[i].strides[0], 128);
    cr_assert_eq(calls.enc[i].strides[1], 128000);
    cr_assert_eq(calls.enc[i].strides[2], 384000);
    cr_assert_eq(calls.enc[i].box[0], 64);
    cr_assert_eq(calls.enc[i].box[1], 128); /* BN = 128 for D = 64 (two programs an SM) */
    cr_assert_eq(calls.enc[i].box[2], 1);
    cr_assert_eq(calls.enc[i].box[3], 1);
    for (int d = 0; d < 4; d++) cr_assert_eq(calls.enc[i].estr[d], 1);
    cr_assert_eq(calls.enc[i].swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
    cr_assert_eq(calls.enc[i].oob, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  int m37 = 0, m38 = 0;
  memcpy(&m37, last_params[37], sizeof m37);
  memcpy(&m38, last_params[38], sizeof m38);
  cr_assert_eq(m37, e0 + 1);
  cr_assert_eq(m38, e0 + 2);
  /* the same tensors again: no encode */
  attn_launch(k, contiguous);
  cr_assert_eq(calls.encodes - e0, 2);
  /* K as a [Z, S, H, D] buffer seen as [Z, H, S, D]: strides {S*H*D, D, H*D, 1} */
  int64_t bshd[4] = {1000 * 3 * 64, 64, 3 * 64, 1};
  attn_launch(k, bshd);
  cr_assert_eq(calls.encodes - e0, 3);
  int i = (e0 + 2) % 4;
  cr_assert_eq(calls.enc[i].strides[0], 384);
  cr_assert_eq(calls.enc[i].strides[1], 128);
  cr_assert_eq(calls.enc[i].strides[2], 384000);
  /* K with a D stride of 2: fails the map test, zeroed map, no encode */
  int64_t odd[4] = {3 * 1000 * 128, 1000 * 128, 128, 2};
  attn_launch(k, odd);
  cr_assert_eq(calls.encodes - e0, 3);
  unsigned char zero[128] = {0};
  cr_assert(memcmp(last_params[37], zero, 128) == 0);
  cr_assert(memcmp(last_params[38], zero, 128) != 0);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* The default: cutlass_gemm is a TMA form (codegen.h, docs/codegen.md "Round 9"), its TMA path
 * alone with a trap for a launch whose tensors fail the map test.  Such a launch (B's row
 * stride 1034 bytes) runs the kernel's no-TMA form, compiled and loaded at the first one (no
 * tensor maps: 15 parameters, no bulk tensor copy), with no encode and no zeroed map; the next
 * one reuses it without a compile; tensors that fit run the TMA form again.  PTX given by the
 * user that is a TMA form refuses such a launch (nothing launched) instead of trapping. */
Test(fake_driver, tma_form_runs_its_no_tma_form_for_tensors_a_map_cannot_take) {
  tilec_program *p = NULL;
  tilec_kernel *k = load_tma_example("gemm.tile", "cutlass_gemm", 15, NULL, &p);
  cr_assert(strstr(calls.last_linked_ptx, "@p trap; } // tilec: TMA form"), "no trap in the TMA form");
  cr_assert(strstr(calls.last_linked_ptx, "cp.async.bulk.tensor"));
  char *form_ptx = strdup(calls.last_linked_ptx);
  int e0 = calls.encodes, links0 = calls.links, launches0 = calls.launches;
  gemm_launch(k, 0x10000000u, 300, 520, 4096, 520);
  cr_assert_eq(calls.encodes - e0, 3);
  CUfunction tma_fn = last_fn;
  cr_assert_eq(calls.links, links0, "a fitting launch compiled something");
  gemm_launch(k, 0x10000000u, 300, 517, 4096, 517);
  cr_assert_eq(calls.links - links0, 1, "the no-TMA form was not compiled once");
  cr_assert_eq(calls.encodes - e0, 3, "a map was encoded for a tensor that fails the test");
  cr_assert_neq(last_fn, tma_fn);
  cr_assert_null(strstr(calls.last_linked_ptx, "cp.async.bulk.tensor"), "the no-TMA form copies by TMA");
  cr_assert_null(strstr(calls.last_linked_ptx, "trap;"));
  cr_assert_null(strstr(calls.last_linked_ptx, "cutlass_gemm_param_15"), "the no-TMA form has tensor maps");
  cr_assert(strstr(calls.last_linked_ptx, "cp.async.cg.shared.global"));
  CUfunction notma_fn = last_fn;
  gemm_launch(k, 0x10000000u, 300, 517, 4096, 517);
  cr_assert_eq(last_fn, notma_fn);
  cr_assert_eq(calls.links - links0, 1, "the no-TMA form was compiled again");
  gemm_launch(k, 0x10000000u, 300, 520, 4096, 520);
  cr_assert_eq(last_fn, tma_fn);
  cr_assert_eq(calls.launches - launches0, 4);
  cr_assert(strstr(tilec_program_log(p), "its no-TMA form"), "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  /* the same PTX given as the user's: a launch it has no path for is refused */
  tilec_kernel *u = NULL;
  cr_assert_eq(tilec_kernel_load_ptx(p, "cutlass_gemm", form_ptx, 0, &u), TILEC_OK, "%s", tilec_program_log(p));
  int before = calls.launches;
  int64_t sa[2] = {300, 4096}, sb[2] = {4096, 517}, sc[2] = {300, 517};
  DLTensor ta = {.data = (void *)(uintptr_t)0x10000000u, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = sa};
  DLTensor tb = {.data = (void *)(uintptr_t)0x20000000u, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = sb};
  DLTensor tc = {.data = (void *)(uintptr_t)0x30000000u, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = sc};
  tilec_arg args[3] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &ta}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &tb},
                       {.kind = TILEC_ARG_TENSOR, .u.tensor = &tc}};
  cr_assert_eq(tilec_kernel_launch(u, args, 3, NULL), TILEC_ERROR_LAUNCH);
  cr_assert(strstr(tilec_kernel_error(u), "TMA form"), "%s", tilec_kernel_error(u));
  cr_assert_eq(calls.launches, before, "a launch the PTX has no path for was made");
  tilec_kernel_destroy(u);
  free(form_ptx);
  tilec_program_destroy(p);
}

/* The CLI's PTX (option tma-fallback=entry, its default; docs/cli.md "Two entries"): cutlass_gemm's
 * TMA form, then its no-TMA form as the entry cutlass_gemm__notma with the same 18 parameters (the
 * three maps declared, never read).  Loaded with tilec_kernel_load_ptx: tensors that fit run
 * cutlass_gemm (maps encoded); B with a row stride of 1034 bytes, then A as a view 2 bytes into its
 * buffer, run cutlass_gemm__notma of the same module (nothing linked: no compiled form), maps zero
 * and none encoded, with the block and shared memory of the JIT's no-TMA form; tensors that fit run
 * cutlass_gemm again.  A second entry whose parameters are not the first's is refused at load. */
Test(fake_driver, user_ptx_with_a_no_tma_entry) {
  setenv("TILEC_PITCH_REPACK", "0", 1); /* (else the launcher copies a read-only A or B and runs the TMA kernel) */
  setenv("TILEC_FORM_THREADS", "0", 1);
  tilec_program *p = NULL;
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "tma-fallback", "entry"), TILEC_OK);
  cr_assert_eq(tilec_options_set(o, "kernel", "cutlass_gemm"), TILEC_OK);
  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/gemm.tile", o), TILEC_OK);
  tilec_options_destroy(o);
  cr_assert_eq(tilec_program_compile(p, TILEC_STAGE_PTX), TILEC_OK, "%s", tilec_program_log(p));
  char *ptx = strdup(tilec_program_text(p, TILEC_STAGE_PTX));
  tilec_program_destroy(p);
  const char *e1 = strstr(ptx, ".entry cutlass_gemm("), *e2 = strstr(ptx, ".entry cutlass_gemm__notma(");
  cr_assert(e1 && e2 && e1 < e2, "not both entries, the TMA form first");
  cr_assert(strstr(ptx, ".param .align 64 .b8 cutlass_gemm__notma_param_17[128]\n)"), "the second entry has no maps");
  cr_assert(strstr(e2, "cp.async.cg.shared.global") && !strstr(e2, "cp.async.bulk.tensor"), "the second entry copies by TMA");
  cr_assert(strstr(e1, "cp.async.bulk.tensor") && strstr(e1, "// tilec: TMA form"));
  /* the reference: the JIT's own no-TMA form at N = 517 */
  tilec_program *pj = NULL;
  tilec_kernel *kj = NULL;
  cr_assert_eq(tilec_program_create_from_file(&pj, TILEC_SOURCE_DIR "/examples/gemm.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_kernel_load(pj, "cutlass_gemm", 0, &kj), TILEC_OK, "%s", tilec_program_log(pj));
  gemm_launch(kj, 0x10000000u, 4096, 517, 4096, 517);
  unsigned notma_block = calls.block[0], notma_smem = calls.smem, notma_grid = calls.grid[0];
  gemm_launch(kj, 0x10000000u, 4096, 520, 4096, 520);
  unsigned tma_block = calls.block[0], tma_smem = calls.smem;
  tilec_kernel_destroy(kj);
  tilec_program_destroy(pj);
  cr_assert(notma_block != tma_block || notma_smem != tma_smem, "the test cannot tell the forms' configurations apart");

  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/gemm.tile", NULL), TILEC_OK);
  tilec_kernel *u = NULL;
  cr_assert_eq(tilec_kernel_load_ptx(p, "cutlass_gemm", ptx, 0, &u), TILEC_OK, "%s", tilec_program_log(p));
  int links0 = calls.links, e0 = calls.encodes, l0 = calls.launches;
  unsigned char zero[128] = {0};
  gemm_launch(u, 0x10000000u, 4096, 520, 4096, 520);
  cr_assert_str_eq(last_fn->name, "cutlass_gemm");
  cr_assert_eq(calls.block[0], tma_block);
  cr_assert_eq(calls.smem, tma_smem);
  cr_assert_eq(calls.encodes - e0, 3);
  cr_assert(memcmp(last_params[15], zero, 128) != 0 && memcmp(last_params[16], zero, 128) != 0 &&
            memcmp(last_params[17], zero, 128) != 0);
  gemm_launch(u, 0x10000000u, 4096, 517, 4096, 517); /* B's rows 1034 bytes apart: no map */
  cr_assert_str_eq(last_fn->name, "cutlass_gemm__notma");
  cr_assert_eq(calls.block[0], notma_block);
  cr_assert_eq(calls.smem, notma_smem);
  cr_assert_eq(calls.grid[0], notma_grid);
  cr_assert_eq(calls.encodes - e0, 3, "a map was encoded for the no-TMA entry");
  cr_assert(memcmp(last_params[15], zero, 128) == 0 && memcmp(last_params[16], zero, 128) == 0 &&
            memcmp(last_params[17], zero, 128) == 0, "its maps are not zero");
  CUfunction second = last_fn;
  gemm_launch(u, 0x10000002u, 4096, 520, 4096, 520); /* A 2 bytes into its buffer: no map */
  cr_assert_eq(last_fn, second, "an offset view did not run the no-TMA entry");
  gemm_launch(u, 0x10000000u, 4096, 520, 4096, 520);
  cr_assert_str_eq(last_fn->name, "cutlass_gemm", "tensors that fit did not run the TMA entry again");
  cr_assert_eq(calls.block[0], tma_block);
  cr_assert_eq(calls.launches - l0, 4);
  cr_assert_eq(calls.links, links0, "a no-TMA form was compiled and linked instead of the PTX's entry");
  cr_assert(strstr(tilec_program_log(p), "no-TMA entry cutlass_gemm__notma runs such launches"), "%s", tilec_program_log(p));
  tilec_kernel_destroy(u);
  /* a second entry with other parameters (a map made a u32) is refused at load */
  char *bad = strdup(ptx);
  char *m = strstr(bad, ".param .align 64 .b8 cutlass_gemm__notma_param_16[128]");
  memcpy(m, ".param .u32      ", 17);
  cr_assert_eq(tilec_kernel_load_ptx(p, "cutlass_gemm", bad, 0, &u), TILEC_ERROR_USAGE);
  cr_assert(strstr(tilec_program_log(p), "a no-TMA entry takes the TMA entry's parameters"), "%s", tilec_program_log(p));
  free(bad);
  free(ptx);
  tilec_program_destroy(p);
  unsetenv("TILEC_PITCH_REPACK");
}

/* TILEC_NARROW_COPY=1 (emit_narrow_copy.c): A of K = 4100 bf16 (rows of 8200 bytes: 8-byte
 * aligned, not 16) fails the map test, so the launch runs the no-TMA form, whose cp.async ring
 * then holds 8- and 4-byte cp.async.ca copies beside the 16-byte ones and the element loop; the
 * small-M form a launch at M = 61 picks likewise.  Without the switch the same launches' no-TMA
 * forms have no cp.async.ca (the element copy alone). */
static char *narrow_notma_ptx(bool on, int64_t M) {
  if (on) setenv("TILEC_NARROW_COPY", "1", 1);
  else unsetenv("TILEC_NARROW_COPY");
  setenv("TILEC_PITCH_REPACK", "0", 1); /* (else the launcher copies A and runs the TMA kernel) */
  tilec_program *p = NULL;
  tilec_kernel *k = NULL;
  setenv("TILEC_FORM_THREADS", "0", 1);
  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/gemm.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_kernel_load(p, "cutlass_gemm", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  int links0 = calls.links;
  gemm_launch(k, 0x10000000u, M, 520, 4100, 520);
  cr_assert_eq(calls.links - links0, 1, "the no-TMA form was not compiled once");
  cr_assert_null(strstr(calls.last_linked_ptx, "cp.async.bulk.tensor"), "the no-TMA form copies by TMA");
  cr_assert(strstr(calls.last_linked_ptx, "cp.async.cg.shared.global"));
  char *ptx = strdup(calls.last_linked_ptx);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  unsetenv("TILEC_NARROW_COPY");
  unsetenv("TILEC_PITCH_REPACK");
  return ptx;
}

Test(fake_driver, narrow_copy_in_the_no_tma_form_of_an_8_byte_pitch) {
  for (int m = 0; m < 2; m++) {
    int64_t M = m ? 61 : 300;
    char *on = narrow_notma_ptx(true, M), *off = narrow_notma_ptx(false, M);
    cr_assert(strstr(on, "cp.async.ca.shared.global [%r") && strstr(on, "], 8, %r"), "M %d: no 8-byte copy", (int)M);
    cr_assert(strstr(on, "], 4, %r"), "M %d: no 4-byte copy", (int)M);
    cr_assert_null(strstr(off, "cp.async.ca."), "M %d: narrow copies with the switch off", (int)M);
    free(on);
    free(off);
  }
}

/* ---- TILEC_PITCH_REPACK=1 (lib/api/pitch_repack.c, docs/runtime.md "Pitch repack") ----------- */
/* C = A @ B of gemm.tile's cutlass_gemm (a TMA form) on stream `stream`: A [M, K] at 0x10000000,
 * B [K, N] of row stride ldb at 0x20000000, C [M, N] at 0x30000000, bf16, compact rows but B's. */
static void gemm_launch_on(tilec_kernel *k, int64_t M, int64_t N, int64_t K, int64_t ldb, void *stream) {
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N}, stb[2] = {ldb, 1};
  DLTensor ta = {.data = (void *)(uintptr_t)0x10000000u, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = sa};
  DLTensor tb = {.data = (void *)(uintptr_t)0x20000000u, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1},
                 .shape = sb, .strides = stb};
  DLTensor tc = {.data = (void *)(uintptr_t)0x30000000u, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLBfloat, 16, 1}, .shape = sc};
  tilec_arg args[3] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &ta}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &tb},
                       {.kind = TILEC_ARG_TENSOR, .u.tensor = &tc}};
  memset(rp.seq, 0, sizeof rp.seq);
  rp.nseq = 0;
  cr_assert_eq(tilec_kernel_launch(k, args, 3, stream), TILEC_OK, "%s", tilec_kernel_error(k));
}

static tilec_kernel *load_gemm(bool repack, tilec_program **pp) {
  if (repack) unsetenv("TILEC_PITCH_REPACK"); /* (the default) */
  else setenv("TILEC_PITCH_REPACK", "0", 1);
  setenv("TILEC_FORM_THREADS", "0", 1);
  cr_assert_eq(tilec_program_create_from_file(pp, TILEC_SOURCE_DIR "/examples/gemm.tile", NULL), TILEC_OK);
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(*pp, "cutlass_gemm", 0, &k), TILEC_OK, "%s", tilec_program_log(*pp));
  unsetenv("TILEC_PITCH_REPACK");
  return k;
}

/* The copy of A [rows, 4100] bf16 (rows of 8200 bytes) the last repacking launch made: one 2-D copy
 * device to device, source pitch 8200, destination pitch 8208 (16-byte multiple) at a 16-byte
 * aligned base inside the stream-ordered allocation (at least rows x 8208 bytes), on `stream`;
 * the kernel's A pointer, its strides {4104, 1} and A's tensor map (row stride 8208 bytes) all the
 * copy; then the allocation freed on the stream after the launch. */
static void check_a_repacked(int64_t rows, void *stream, int a0, int a1, int a2) {
  cr_assert_str_eq(rp.seq, "ACLF", "driver calls in order: %s", rp.seq);
  CUdeviceptr mem = rp.alloc_ptr[(rp.nallocs - 1) % 8];
  size_t bytes = rp.alloc_bytes[(rp.nallocs - 1) % 8];
  const CUDA_MEMCPY2D *c = &rp.copy[(rp.ncopies - 1) % 8];
  cr_assert_eq(c->srcMemoryType, CU_MEMORYTYPE_DEVICE);
  cr_assert_eq(c->dstMemoryType, CU_MEMORYTYPE_DEVICE);
  cr_assert_eq(c->srcDevice, 0x10000000u);
  cr_assert_eq(c->srcPitch, 8200);
  cr_assert_eq(c->dstPitch, 8208);
  cr_assert_eq(c->WidthInBytes, 8200);
  cr_assert_eq(c->Height, (size_t)rows);
  cr_assert_eq(c->srcXInBytes + c->srcY + c->dstXInBytes + c->dstY, 0);
  cr_assert_eq(c->dstDevice % 16, 0, "the copy's base 0x%llx", (unsigned long long)c->dstDevice);
  cr_assert(c->dstDevice >= mem && c->dstDevice + (size_t)rows * 8208 <= mem + bytes,
            "the copy [0x%llx, + %lld rows) outside its allocation 0x%llx + %zu", (unsigned long long)c->dstDevice,
            (long long)rows, (unsigned long long)mem, bytes);
  cr_assert(rp.alloc_stream == stream && rp.copy_stream == stream && rp.launch_stream == stream &&
            rp.free_stream == stream, "not all on the launch's stream");
  cr_assert_eq(rp.freed[(rp.nfrees - 1) % 8], mem, "the allocation freed is not the copy's");
  uint64_t ptr = 0;
  int64_t s0 = 0, s1 = 0;
  memcpy(&ptr, last_params[a0], 8);
  memcpy(&s0, last_params[a1], 8);
  memcpy(&s1, last_params[a2], 8);
  cr_assert_eq(ptr, c->dstDevice, "the kernel's A is 0x%llx", (unsigned long long)ptr);
  cr_assert(s0 == 4104 && s1 == 1, "the kernel's A strides {%lld, %lld}", (long long)s0, (long long)s1);
  int e = (calls.encodes - 1) % 4;
  bool found = false; /* A's map among the last encodes: the copy's base, row stride 8208 bytes */
  for (int i = 0; i < 4 && i < calls.encodes; i++, e = (e + 3) % 4)
    if ((uint64_t)(uintptr_t)calls.enc[e].addr == c->dstDevice) {
      found = true;
      cr_assert_eq(calls.enc[e].stride, 8208);
      cr_assert_eq(calls.enc[e].dims[0], 4100);
      cr_assert_eq(calls.enc[e].dims[1], (uint64_t)rows);
    }
  cr_assert(found, "no tensor map encoded for the copy");
}

/* A [300, 4100] bf16 (rows of 8200 bytes: 8-byte aligned, not 16) is only read by cutlass_gemm:
 * with the switch each launch copies it (check_a_repacked) and runs the TMA kernel (no no-TMA
 * form compiled), saying so once in the program log; the M = 61 launch's small-M form likewise
 * (through the same launcher).  Aligned tensors (K = 4096) are untouched: no allocation, no copy.
 * Without the switch the same launch runs the no-TMA form and copies nothing, its log line naming
 * the switch.  Forms loaded late, on their threads, repack as the kernel they belong to. */
Test(fake_driver, pitch_repack_copies_a_read_only_operand) {
  void *stream = (void *)(uintptr_t)0x5150;
  tilec_program *p = NULL;
  tilec_kernel *k = load_gemm(true, &p);
  int links0 = calls.links;
  gemm_launch_on(k, 300, 520, 4096, 520, stream);
  cr_assert_str_eq(rp.seq, "L", "an aligned launch made %s", rp.seq);
  CUfunction tma_fn = last_fn;
  gemm_launch_on(k, 300, 520, 4100, 520, stream);
  check_a_repacked(300, stream, 0, 3, 4);
  cr_assert_eq(last_fn, tma_fn, "the repacked launch did not run the TMA kernel");
  cr_assert_eq(calls.links, links0, "a no-TMA form was compiled");
  cr_assert(strstr(tilec_program_log(p), "the launcher copies it"), "%s", tilec_program_log(p));
  CUdeviceptr first = rp.copy[(rp.ncopies - 1) % 8].dstDevice;
  gemm_launch_on(k, 300, 520, 4100, 520, stream); /* a copy every launch, into new memory */
  check_a_repacked(300, stream, 0, 3, 4);
  cr_assert_neq(rp.copy[(rp.ncopies - 1) % 8].dstDevice, first);
  gemm_launch_on(k, 61, 520, 4100, 520, stream); /* the small-M form */
  check_a_repacked(61, stream, 0, 3, 4);
  cr_assert_eq(calls.links, links0, "a no-TMA form was compiled");
  gemm_launch_on(k, 300, 520, 4096, 520, stream);
  cr_assert_str_eq(rp.seq, "L", "an aligned launch made %s", rp.seq);
  cr_assert_eq(last_fn, tma_fn);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  /* with the switch off (=0): the no-TMA form, nothing copied */
  k = load_gemm(false, &p);
  links0 = calls.links;
  int allocs0 = rp.nallocs, copies0 = rp.ncopies;
  gemm_launch_on(k, 300, 520, 4100, 520, stream);
  cr_assert_str_eq(rp.seq, "L");
  cr_assert_eq(calls.links - links0, 1, "the no-TMA form was not compiled");
  cr_assert(rp.nallocs == allocs0 && rp.ncopies == copies0);
  cr_assert(strstr(tilec_program_log(p), "without TILEC_PITCH_REPACK=0 it would be copied"), "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);  /* forms loaded on their threads, after the switch is gone from the environment: a first launch at
   * M = 61 (the small-M form) repacks as the kernel would, its note in the user's program log */
  setenv("TILEC_PITCH_REPACK", "1", 1);
  unsetenv("TILEC_FORM_THREADS");
  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/gemm.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_kernel_load(p, "cutlass_gemm", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  unsetenv("TILEC_PITCH_REPACK");
  links0 = calls.links;
  gemm_launch_on(k, 61, 520, 4100, 520, stream);
  check_a_repacked(61, stream, 0, 3, 4);
  cr_assert(strstr(tilec_program_log(p), "the launcher copies it"), "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* C [300, 517] bf16 (rows of 1034 bytes), which cutlass_gemm writes, fails the map test: with the
 * switch nothing is copied (a copy of a written tensor would lose the writes) and the launch runs
 * the no-TMA form; so does one where B [4096, 517] (read, repackable) fails beside it (a copy of
 * B alone would not spare the no-TMA form). */
Test(fake_driver, pitch_repack_never_copies_a_written_operand) {
  void *stream = (void *)(uintptr_t)0x5150;
  tilec_program *p = NULL;
  tilec_kernel *k = load_gemm(true, &p);
  int links0 = calls.links, allocs0 = rp.nallocs, copies0 = rp.ncopies;
  gemm_launch_on(k, 300, 517, 4096, 520, stream); /* C alone fails */
  cr_assert_str_eq(rp.seq, "L", "driver calls: %s", rp.seq);
  cr_assert_eq(calls.links - links0, 1, "the no-TMA form was not compiled");
  gemm_launch_on(k, 300, 517, 4096, 517, stream); /* B and C fail */
  cr_assert_str_eq(rp.seq, "L", "driver calls: %s", rp.seq);
  cr_assert(rp.nallocs == allocs0 && rp.ncopies == copies0, "a copy was made");
  cr_assert_null(strstr(tilec_program_log(p), "the launcher copies"), "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* A rank-4 K of attn.tile's cutlass_attn_fwd [2, 3, 1000, 64] bf16 with rows 68 elements apart
 * (136 bytes): heads 68000 elements apart but batches twice as far (a view of a larger buffer), so
 * the outer dims do not collapse: one 2-D copy per (z, h) slice, 1000 rows each, at source offsets
 * z * 408000 + h * 68000 elements, into rows of 128 bytes; the kernel's K strides {192000, 64000,
 * 64, 1}.  Contiguous batches (z stride 204000) collapse into one copy of 6000 rows. */
Test(fake_driver, pitch_repack_copies_each_slice_of_a_batched_operand) {
  setenv("TILEC_PITCH_REPACK", "1", 1);
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create_from_file(&p, TILEC_SOURCE_DIR "/examples/attn.tile", NULL), TILEC_OK);
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "cutlass_attn_fwd", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  unsetenv("TILEC_PITCH_REPACK");
  int links0 = calls.links;
  for (int collapsed = 0; collapsed < 2; collapsed++) {
    int64_t ks[4] = {collapsed ? 3 * 68000 : 2 * 3 * 68000, 68000, 68, 1};
    memset(rp.seq, 0, sizeof rp.seq);
    rp.nseq = 0;
    int c0 = rp.ncopies;
    attn_launch(k, ks);
    cr_assert_str_eq(rp.seq, collapsed ? "ACLF" : "ACCCCCCLF", "driver calls: %s", rp.seq);
    cr_assert_eq(calls.links, links0, "a no-TMA form was compiled");
    for (int i = c0; i < rp.ncopies; i++) {
      const CUDA_MEMCPY2D *c = &rp.copy[i % 8];
      int s = i - c0;
      cr_assert_eq(c->srcDevice, 0x20000000u + (uint64_t)(collapsed ? 0 : ((s / 3) * 408000 + (s % 3) * 68000) * 2));
      cr_assert_eq(c->srcPitch, 136);
      cr_assert_eq(c->dstPitch, 128);
      cr_assert_eq(c->WidthInBytes, 128);
      cr_assert_eq(c->Height, collapsed ? 6000u : 1000u);
      cr_assert_eq(c->dstDevice, rp.copy[c0 % 8].dstDevice + (uint64_t)s * 128000);
      cr_assert_eq(c->dstDevice % 16, 0);
    }
    /* K is parameter 1: pointer slot 9 (after Q's pointer, 4 sizes, 4 strides), then 4 sizes, 4 strides */
    uint64_t ptr = 0;
    int64_t st[4];
    memcpy(&ptr, last_params[9], 8);
    for (int d = 0; d < 4; d++) memcpy(&st[d], last_params[14 + d], 8);
    cr_assert_eq(ptr, rp.copy[c0 % 8].dstDevice);
    cr_assert(st[0] == 192000 && st[1] == 64000 && st[2] == 64 && st[3] == 1, "K strides {%lld, %lld, %lld, %lld}",
              (long long)st[0], (long long)st[1], (long long)st[2], (long long)st[3]);
  }
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* ---- small-M forms (passes/small_m.c, docs/small_m.md) ------------------------------------- */
/* C = A @ B of examples/gemm.tile at M rows (N = K = 4096, bf16): the launch the driver saw. */
/* The i-th tensor argument of a fake launch: a distinct device address a tensor (the fake driver never
 * dereferences it), on device 0. */
static DLTensor fake_tensor(int i, int ndim, DLDataType dtype, int64_t *shape, int64_t *strides) {
  return (DLTensor){.data = (void *)(uintptr_t)(0x7f2000000000ull + 0x10000000ull * (uint64_t)i),
                    .device = {kDLCUDA, 0}, .ndim = ndim, .dtype = dtype, .shape = shape, .strides = strides};
}

static void launch_gemm_mn(tilec_kernel *k, int64_t m, int64_t n) {
  int64_t sa[2] = {m, 4096}, sb[2] = {4096, n}, sc[2] = {m, n};
  int64_t *shapes[3] = {sa, sb, sc};
  DLTensor t[3];
  tilec_arg args[3];
  for (int i = 0; i < 3; i++) {
    t[i] = fake_tensor(i, 2, (DLDataType){kDLBfloat, 16, 1}, shapes[i], NULL);
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  cr_assert_eq(tilec_kernel_launch(k, args, 3, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
}
static void launch_gemm(tilec_kernel *k, int64_t m) { launch_gemm_mn(k, m, 4096); }

/* The ninth session's table (TILEC_SMALL_M_FORMS): the split-K forms' launches and workspaces. */
static const char split_forms[] =
    "16=16x32x256/multistage/5,64=64x64x64/cutlass/8/split,128=64x128x64/cutlass/6/split,256=64x128x64/cutlass/6";

/* One load of cutlass_gemm also loads its forms (the table split_forms: a 16-row mma.sync form, two
 * split-K wgmma forms of two halves each, a 64x128 wgmma form); each launch runs the form its M
 * falls in through the same launcher: M <= 16 4 warps on cdiv(M, 16) x cdiv(N, 32) programs;
 * M = 17 the split form's partial half (persistent, 64 tiles x SPLIT 2) then its reduce half
 * (cdiv(M, 64) x cdiv(N, 64) programs) with a workspace of SPLIT x M x N f32, grown for M = 100
 * (the smaller one kept until the handle goes);
 * M = 257 the kernel itself (8 consumer warps and a producer warpgroup, persistent).  With the small_m
 * pass disabled every M runs
 * the kernel. */
Test(fake_driver, small_m_forms_picked_by_m) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/gemm.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  for (int off = 0; off < 2; off++) {
    tilec_options *o = NULL;
    cr_assert_eq(tilec_options_create(&o), TILEC_OK);
    if (off) cr_assert_eq(tilec_options_set(o, "disable-pass", "small_m"), TILEC_OK);
    tilec_program *p = NULL;
    setenv("TILEC_SMALL_M_FORMS", split_forms, 1);
    cr_assert_eq(tilec_program_create_from_file(&p, path, o), TILEC_OK);
    tilec_options_destroy(o);
    int links = calls.links;
    size_t allocs0 = allocs, frees0 = frees;
    tilec_kernel *k = NULL;
    tilec_status st = tilec_kernel_load(p, "cutlass_gemm", 0, &k);
    unsetenv("TILEC_SMALL_M_FORMS");
    cr_assert_eq(st, TILEC_OK, "%s", tilec_program_log(p));
    launch_gemm(k, 5000); /* the kernel: 8 consumer warps + the producer warpgroup, persistent (at most 132 CTAs) */
    cr_assert_eq(calls.block[0], 384u);
    cr_assert_eq(calls.grid[0], 132u);
    launch_gemm(k, 16); /* the first launch that needs a form: the late forms are joined here */
    cr_assert_eq(calls.links - links, off ? 1 : 7, "the kernel and its forms' six kernels: %d", calls.links - links);
    cr_assert_eq(calls.block[0], off ? 384u : 128u);
    if (!off) cr_assert(calls.grid[0] == 1u && calls.grid[1] == 128u, "grid %u x %u", calls.grid[0], calls.grid[1]);
    launch_gemm(k, 3);
    cr_assert_eq(calls.block[0], off ? 384u : 128u);
    int before = calls.launches;
    launch_gemm(k, 17);
    cr_assert_eq(calls.launches - before, off ? 1 : 2, "split K: the partial and the reduce half");
    if (!off) {
      cr_assert(prev_grid[0] == 128u && prev_grid[1] == 1u && prev_block == 128u, "partial grid %u x %u block %u",
                prev_grid[0], prev_grid[1], prev_block);
      cr_assert(calls.grid[0] == 1u && calls.grid[1] == 64u && calls.grid[2] == 1u, "reduce grid %u x %u x %u",
                calls.grid[0], calls.grid[1], calls.grid[2]);
      cr_assert_eq(allocs - allocs0, 1u);
      cr_assert_eq(alloc_bytes, (size_t)2 * 17 * 4096 * 4);
      launch_gemm(k, 17); /* the same workspace */
      cr_assert_eq(allocs - allocs0, 1u);
      launch_gemm(k, 100); /* the 64x128 split form: 2 x 32 tiles x SPLIT 2, a larger workspace */
      cr_assert(prev_grid[0] == 128u && prev_block == 128u, "partial grid %u block %u", prev_grid[0], prev_block);
      cr_assert_eq(allocs - allocs0, 2u);
      cr_assert_eq(frees - frees0, 0u, "the smaller workspace is kept (a captured graph may use it)");
      cr_assert_eq(alloc_bytes, (size_t)2 * 100 * 4096 * 4);
      launch_gemm(k, 200); /* 64x128, unsplit: 4 x 32 tiles, one warpgroup */
      cr_assert(calls.grid[0] == 128u && calls.block[0] == 128u, "grid %u block %u", calls.grid[0], calls.block[0]);
    } else {
      cr_assert_eq(allocs, allocs0);
    }
    launch_gemm(k, 257);
    cr_assert_eq(calls.block[0], 384u);
    cr_assert_eq(calls.grid[0], 3u * 16u); /* cdiv(257, 128) x cdiv(4096, 256) tiles */
    tilec_kernel_destroy(k);
    cr_assert_eq(frees - frees0, off ? 0u : 2u, "both workspaces freed with the handle");
    tilec_program_destroy(p);
  }
}

/* The default table (passes/small_m.c): M <= 16 the 16-row mma.sync form, M = 17..128 the unsplit
 * 64x64x128 wgmma form (persistent: one CTA a tile here, 64 or 128 tiles at N = 4096), M = 129..256
 * the 64x128x128 one; one launch each, no workspace. */
Test(fake_driver, small_m_default_forms_unsplit) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/gemm.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  unsetenv("TILEC_SMALL_M_FORMS");
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK);
  int links = calls.links;
  size_t allocs0 = allocs;
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "cutlass_gemm", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  launch_gemm(k, 16);
  cr_assert_eq(calls.links - links, 5, "the kernel, its three forms and the waves form (the default): %d", calls.links - links);
  cr_assert(calls.block[0] == 128u && calls.grid[0] == 1u && calls.grid[1] == 128u, "M 16: grid %u x %u", calls.grid[0],
            calls.grid[1]);
  int before = calls.launches;
  launch_gemm(k, 17);
  cr_assert_eq(calls.launches - before, 1, "unsplit: one launch");
  cr_assert(calls.grid[0] == 64u && calls.block[0] == 128u, "M 17: grid %u block %u", calls.grid[0], calls.block[0]);
  launch_gemm(k, 100);
  cr_assert(calls.grid[0] == 128u && calls.block[0] == 128u, "M 100: grid %u block %u", calls.grid[0], calls.block[0]);
  launch_gemm(k, 200); /* 64x128: 4 x 32 tiles */
  cr_assert(calls.grid[0] == 128u && calls.block[0] == 128u, "M 200: grid %u block %u", calls.grid[0], calls.block[0]);
  cr_assert_eq(allocs, allocs0, "no workspace");
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* Late forms (forms.c tl_late_forms_on, docs/small_m.md "Late forms"): tilec_kernel_load returns once
 * the kernel itself is loaded, and a launch at a large M runs it without waiting for the forms; the
 * first launch whose M a form takes joins them (every form compiled and loaded once by then, none
 * again later).  TILEC_LATE_FORMS=0 (the next test): the load itself waits for every form.  A handle
 * destroyed before any form was needed joins them (no thread outlives it; the sanitizer build's
 * leak check sees the forms' programs freed). */
static void late_forms(bool late) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/gemm.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  unsetenv("TILEC_SMALL_M_FORMS");
  if (!late) setenv("TILEC_LATE_FORMS", "0", 1);
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK);
  int links = calls.links;
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "cutlass_gemm", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  if (!late) cr_assert_eq(calls.links - links, 5, "the load waited for the four forms: %d", calls.links - links);
  launch_gemm(k, 5000); /* the kernel itself, its forms loading or not */
  cr_assert(calls.block[0] == 384u && calls.grid[0] == 132u, "M 5000: block %u grid %u", calls.block[0], calls.grid[0]);
  launch_gemm(k, 100); /* a form's M: joined here */
  cr_assert_eq(calls.links - links, 5, "the kernel and its four forms: %d", calls.links - links);
  cr_assert(calls.grid[0] == 128u && calls.block[0] == 128u, "M 100: grid %u block %u", calls.grid[0], calls.block[0]);
  launch_gemm(k, 16);
  cr_assert_eq(calls.links - links, 5, "no form compiled twice: %d", calls.links - links);
  tilec_kernel_destroy(k);
  k = NULL; /* destroyed before any form was needed (from the memory cache now, still on threads) */
  cr_assert_eq(tilec_kernel_load(p, "cutlass_gemm", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  unsetenv("TILEC_LATE_FORMS");
  tilec_program_destroy(p);
}

Test(fake_driver, small_m_late_forms) { late_forms(true); }
Test(fake_driver, small_m_forms_at_load) { late_forms(false); }

/* ---- the waves form (lib/small_m_waves.c, docs/small_m.md "Waves") ---------------------------- */
/* cutlass_gemm loaded under TILEC_SMALL_M_WAVES=`waves` (NULL: unset) on a fake device of `sms` SMs. */
static tilec_kernel *load_waves(tilec_program **p, const char *waves, int sms) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/gemm.tile", TILEC_SOURCE_DIR);
  fake_limits.sm_count = sms;
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  unsetenv("TILEC_SMALL_M_FORMS");
  if (waves) setenv("TILEC_SMALL_M_WAVES", waves, 1);
  else unsetenv("TILEC_SMALL_M_WAVES");
  cr_assert_eq(tilec_program_create_from_file(p, path, NULL), TILEC_OK);
  tilec_kernel *k = NULL;
  tilec_status st = tilec_kernel_load(*p, "cutlass_gemm", 0, &k); /* (the passes run here: the switch read) */
  unsetenv("TILEC_SMALL_M_WAVES");
  cr_assert_eq(st, TILEC_OK, "%s", tilec_program_log(*p));
  return k;
}

/* The launch at M x N ran the kernel itself (its 128x256 tiles, persistent: min(tiles, SMs) CTAs,
 * its shared memory kernel_smem) or the waves form (128x128 tiles: min(tiles, SMs) CTAs, less shared
 * memory, the same 384 threads). */
static void expect_gemm(tilec_kernel *k, int64_t m, int64_t n, bool form, unsigned kernel_smem, int64_t sms) {
  launch_gemm_mn(k, m, n);
  int64_t tiles = (m + 127) / 128 * ((n + (form ? 127 : 255)) / (form ? 128 : 256));
  unsigned grid = (unsigned)(tiles < sms ? tiles : sms);
  cr_assert(calls.block[0] == 384u && calls.grid[0] == grid && (calls.smem == kernel_smem) == !form,
            "M %lld N %lld: want the %s (grid %u), got grid %u block %u smem %u (the kernel's %u)", (long long)m,
            (long long)n, form ? "waves form" : "kernel", grid, calls.grid[0], calls.block[0], calls.smem, kernel_smem);
}

/* TILEC_SMALL_M_WAVES=1 on 132 SMs: the 128x128 form where both grids are one wave (the kernel's tiles
 * at most half the SMs), the kernel elsewhere, whatever M (257 .. 5000) and N (4096, 4000, 4224 / 4232 the
 * N boundary at M 512, 14336 and 28672 where the kernel's grid fills the SMs already); every launch
 * above M 256 has its note in the program log (the first eight launches whose shape differs from the one
 * before, the first while the forms still load); the late forms are all loaded by the first launch the
 * model gives the form. */
Test(fake_driver, small_m_waves_picked_by_model) {
  tilec_program *p = NULL;
  int links = calls.links;
  tilec_kernel *k = load_waves(&p, "1", 132);
  launch_gemm(k, 5000); /* the kernel; nothing joined */
  unsigned kernel_smem = calls.smem;
  cr_assert(calls.grid[0] == 132u && calls.block[0] == 384u);
  expect_gemm(k, 1024, 4096, false, kernel_smem, 132); /* 128 tiles, the form's 256 two waves: the kernel */
  expect_gemm(k, 512, 4096, true, kernel_smem, 132); /* 64 tiles, the form's 128 one wave: the form */
  cr_assert_eq(calls.links - links, 5, "the kernel and its four forms: %d", calls.links - links);
  const int64_t form_ms[] = {257, 383, 384, 511, 512}, kernel_ms[] = {513, 640, 768, 769, 1024, 1152, 5000};
  for (size_t i = 0; i < sizeof form_ms / sizeof *form_ms; i++) expect_gemm(k, form_ms[i], 4096, true, kernel_smem, 132);
  for (size_t i = 0; i < sizeof kernel_ms / sizeof *kernel_ms; i++)
    expect_gemm(k, kernel_ms[i], 4096, false, kernel_smem, 132);
  expect_gemm(k, 511, 4000, true, kernel_smem, 132);   /* a ragged N: 16 / 32 tiles a row as at 4096 */
  expect_gemm(k, 512, 4224, true, kernel_smem, 132);   /* 68 tiles, the form's 132: one wave */
  expect_gemm(k, 512, 4232, false, kernel_smem, 132);  /* 68 tiles, the form's 136: two waves */
  expect_gemm(k, 512, 14336, false, kernel_smem, 132); /* 224 tiles (2 waves), the form's 448 (4) */
  expect_gemm(k, 512, 28672, false, kernel_smem, 132);
  launch_gemm(k, 200); /* the 64x128 form of the table, as before (not the waves form) */
  cr_assert(calls.grid[0] == 128u && calls.block[0] == 128u, "M 200: grid %u block %u", calls.grid[0], calls.block[0]);
  const char *log = tilec_program_log(p);
  cr_assert(strstr(log, "kernel 'cutlass_gemm': M 512, N 4096 on 132 SMs: its 128x256 tiles 64 (1 a SM at most), the "
                        "waves form's 128x128 128 (1 a SM): the form's model time 0.68 of the kernel's (picked at <= "
                        "0.85): the form runs it") != NULL,
            "%s", log);
  cr_assert(strstr(log, "M 1024, N 4096 on 132 SMs: its 128x256 tiles 128 (1 a SM at most), the waves form's 128x128 "
                        "256 (2 a SM): the form's model time 1.16 of the kernel's (picked at <= 0.85): the kernel runs it") != NULL,
            "%s", log);
  int notes = 0;
  for (const char *q = log; (q = strstr(q, "docs/small_m.md \"Waves\"")) != NULL; q++) notes++;
  cr_assert_eq(notes, 8, "a note for each of the first eight shapes, then none: %d\n%s", notes, log);
  cr_assert(strstr(log, "(the last such note for this kernel handle)") != NULL);
  cr_assert(strstr(log, "M 5000, N 4096 on 132 SMs: its 128x256 tiles 640 (5 a SM at most), the waves form's 128x128 "
                        "1280 (10 a SM): the form's model time 1.19 of the kernel's (picked at <= 0.85): the kernel runs "
                        "it") != NULL,
            "the first launch (the forms still loading) says its pick too: %s", log);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* The pick follows the device's SM count: on 66 SMs M 512 (64 tiles, the form's 128 two waves) runs the
 * kernel; on 264 M 1024 (128 tiles, the form's 256 one wave) runs the form. */
Test(fake_driver, small_m_waves_by_sm_count) {
  tilec_program *p = NULL;
  tilec_kernel *k = load_waves(&p, "1", 66);
  launch_gemm(k, 5000);
  unsigned kernel_smem = calls.smem;
  expect_gemm(k, 512, 4096, false, kernel_smem, 66);
  expect_gemm(k, 257, 4096, false, kernel_smem, 66);
  expect_gemm(k, 257, 2048, true, kernel_smem, 66); /* 24 tiles, the form's 48 */
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

Test(fake_driver, small_m_waves_by_sm_count_264) {
  tilec_program *p = NULL;
  tilec_kernel *k = load_waves(&p, "1", 264);
  launch_gemm(k, 5000);
  unsigned kernel_smem = calls.smem;
  expect_gemm(k, 1024, 4096, true, kernel_smem, 264);
  expect_gemm(k, 1025, 4096, false, kernel_smem, 264);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* Off (TILEC_SMALL_M_WAVES=0): the kernel above M 256, no fourth form loaded, no note.  Unset is on since
 * the twenty-third session (passes/small_m.c WAVES_DEFAULT): the form at M 257 and 512, N 4096 on 132 SMs,
 * the kernel at 1024, every form loaded. */
static void waves_off_or_default(const char *waves, bool on) {
  tilec_program *p = NULL;
  int links = calls.links;
  tilec_kernel *k = load_waves(&p, waves, 132);
  launch_gemm(k, 5000);
  unsigned kernel_smem = calls.smem;
  expect_gemm(k, 1024, 4096, false, kernel_smem, 132);
  expect_gemm(k, 512, 4096, on, kernel_smem, 132);
  expect_gemm(k, 257, 4096, on, kernel_smem, 132);
  launch_gemm(k, 16);
  cr_assert_eq(calls.links - links, on ? 5 : 4, "the kernel and its forms: %d", calls.links - links);
  if (!on) cr_assert(strstr(tilec_program_log(p), "Waves") == NULL, "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}
Test(fake_driver, small_m_waves_off) { waves_off_or_default("0", false); }
Test(fake_driver, small_m_waves_unset) { waves_off_or_default(NULL, true); }

/* ---- the FlashAttention-3 form (passes/attn_form.c, lib/attn_form.h) ------------------------- */
/* cutlass_attn_fwd of examples/attn.tile at Z x H x S x 128 (bf16): the launch the driver saw. */
static void launch_attn_d_on(tilec_kernel *k, int64_t z, int64_t h, int64_t s, int64_t d, void *stream) {
  int64_t shape[4] = {z, h, s, d};
  DLTensor t[4];
  tilec_arg args[5];
  for (int i = 0; i < 4; i++) {
    t[i] = fake_tensor(i, 4, (DLDataType){kDLBfloat, 16, 1}, shape, NULL);
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  args[4] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 0.088f};
  cr_assert_eq(tilec_kernel_launch(k, args, 5, stream), TILEC_OK, "%s", tilec_kernel_error(k));
}
static void launch_attn_d(tilec_kernel *k, int64_t z, int64_t h, int64_t s, int64_t d) {
  launch_attn_d_on(k, z, h, s, d, NULL);
}

static void launch_attn(tilec_kernel *k, int64_t z, int64_t h, int64_t s) { launch_attn_d(k, z, h, s, 128); }

/* Kernel `kname` of the example at `path` compiled with -D D=d (and BN=bn, CAUSAL=1, disable-pass=disable
 * where given: bn 0, causal false, disable NULL leave them out) and loaded; *pp the program. */
static tilec_kernel *load_attn_kernel(const char *path, const char *kname, int64_t d, int64_t bn, bool causal,
                                      const char *disable, tilec_program **pp) {
  tilec_options *o = NULL;
  cr_assert_eq(tilec_options_create(&o), TILEC_OK);
  cr_assert_eq(tilec_options_define(o, "D", d), TILEC_OK);
  if (bn) cr_assert_eq(tilec_options_define(o, "BN", bn), TILEC_OK);
  if (causal) cr_assert_eq(tilec_options_define(o, "CAUSAL", 1), TILEC_OK);
  if (disable) cr_assert_eq(tilec_options_set(o, "disable-pass", disable), TILEC_OK);
  cr_assert_eq(tilec_program_create_from_file(pp, path, o), TILEC_OK);
  tilec_options_destroy(o);
  tilec_kernel *k = NULL;
  tilec_status st = tilec_kernel_load(*pp, kname, 0, &k);
  cr_assert_eq(st, TILEC_OK, "%s", tilec_program_log(*pp));
  return k;
}

/* One load of the D128 kernel also loads its FlashAttention-3 form (BN 128, attn-ws=fa3); a launch
 * with S below the bound runs the kernel (256 threads, cdiv(S, 128) x Z*H programs), one at or above
 * it the form (384 threads: the producer warpgroup; persistent, at most one CTA an SM); with the
 * pass disabled, TILEC_ATTN_FORM=0, or at D64, every S runs the kernel; TILEC_ATTN_FORM_MIN_S moves
 * the bound. */
Test(fake_driver, attn_form_picked_by_s) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  for (int mode = 0; mode < 4; mode++) { /* 0 on, 1 disable-pass, 2 TILEC_ATTN_FORM=0, 3 bound 4096 */
    if (mode == 2) setenv("TILEC_ATTN_FORM", "0", 1);
    if (mode == 3) setenv("TILEC_ATTN_FORM_MIN_S", "4096", 1);
    tilec_program *p = NULL;
    int links = calls.links;
    tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", 128, 0, false, mode == 1 ? "attn_form" : NULL, &p);
    unsetenv("TILEC_ATTN_FORM");
    unsetenv("TILEC_ATTN_FORM_MIN_S");
    bool on = mode == 0 || mode == 3;
    launch_attn(k, 2, 3, 100);
    cr_assert(calls.block[0] == 256u && calls.grid[0] == 1u && calls.grid[1] == 6u, "S 100: block %u grid %u x %u",
              calls.block[0], calls.grid[0], calls.grid[1]);
    launch_attn(k, 1, 2, 128); /* (the bound of a full kernel at D128: 128 since the thirtieth session, 1024 before) */
    cr_assert_eq(calls.block[0], mode == 0 ? 384u : 256u, "S 128: block %u", calls.block[0]);
    launch_attn(k, 16, 16, 4097);
    cr_assert_eq(calls.block[0], on ? 384u : 256u, "S 4097: block %u", calls.block[0]);
    /* (counted after a launch that needs the form: late forms, docs/small_m.md) mode 0 compiles
     * both; disable-pass is in the kernel's cache key (a compile), the switches are not (the memory
     * cache has both kernels) */
    cr_assert_eq(calls.links - links, mode == 0 ? 2 : mode == 1 ? 1 : 0, "kernels compiled: %d", calls.links - links);
    if (on) cr_assert(calls.grid[0] <= 132u && calls.grid[1] == 1u, "the form persistent: grid %u x %u",
                      calls.grid[0], calls.grid[1]);
    else cr_assert(calls.grid[0] == 33u && calls.grid[1] == 256u, "grid %u x %u", calls.grid[0], calls.grid[1]);
    launch_attn(k, 2, 3, 100); /* back to the kernel */
    cr_assert_eq(calls.block[0], 256u);
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
  /* D64: no form (fa3 measured 0.75-1.00x the two-program kernel there) */
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK);
  int links = calls.links;
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "cutlass_attn_fwd", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_eq(calls.links - links, 1);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  /* causal D128: the bound is 128 (1024 until the thirtieth session) with the form's tiles from the counter (the default: persistent, at most 132
   * CTAs, the counter after the maps), 4096 with TILEC_ATTN_SCHED=0 (the form lost 4 % at S 2048 and tied at 4096,
   * H200; one tile a CTA) */
  for (int sched = 0; sched < 2; sched++) {
    if (!sched) setenv("TILEC_ATTN_SCHED", "0", 1);
    k = load_attn_kernel(path, "cutlass_attn_fwd", 128, 0, true, NULL, &p);
    launch_attn(k, 1, 2, 100);
    cr_assert_eq(calls.block[0], 256u, "causal S 100: block %u", calls.block[0]);
    launch_attn(k, 1, 2, 2048);
    cr_assert_eq(calls.block[0], sched ? 384u : 256u, "causal S 2048 sched %d: block %u", sched, calls.block[0]);
    if (sched) cr_assert(calls.grid[0] <= 132u && calls.grid[1] == 1u, "causal S 2048: grid %u x %u", calls.grid[0],
                         calls.grid[1]);
    /* (the short form, O into K's slot, at 1024 <= S < 4096 with the counter: no "bar.sync 9, 256" before O's store) */
    if (sched) cr_assert(!strstr(last_fn->mod->text, "bar.sync 9, 256"), "causal S 2048: K's slot");
    launch_attn(k, 1, 2, 4096);
    cr_assert_eq(calls.block[0], 384u, "causal S 4096: block %u", calls.block[0]);
    cr_assert_eq(strstr(last_fn->mod->text, "atom.relaxed.gpu.global.add.u32") != NULL, sched, "sched %d", sched);
    if (sched) cr_assert(strstr(last_fn->mod->text, "bar.sync 9, 256"), "causal S 4096: V's slot");
    unsetenv("TILEC_ATTN_SCHED");
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
  /* the short form's range: 1024 in, 1023 and 4096 out; TILEC_ATTN_FORM_KSLOT=0 none (one link fewer); the
   * program's attn-o-slot-k decides for every form, none short */
  for (int mode = 0; mode < 3; mode++) {
    if (mode == 1) setenv("TILEC_ATTN_FORM_KSLOT", "0", 1);
    if (mode == 2) {
      tilec_options *o = NULL;
      cr_assert_eq(tilec_options_create(&o), TILEC_OK);
      cr_assert_eq(tilec_options_define(o, "D", 128), TILEC_OK);
      cr_assert_eq(tilec_options_define(o, "CAUSAL", 1), TILEC_OK);
      cr_assert_eq(tilec_options_set(o, "attn-o-slot-k", "0"), TILEC_OK);
      cr_assert_eq(tilec_program_create_from_file(&p, path, o), TILEC_OK);
      tilec_options_destroy(o);
      cr_assert_eq(tilec_kernel_load(p, "cutlass_attn_fwd", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
    } else {
      k = load_attn_kernel(path, "cutlass_attn_fwd", 128, 0, true, NULL, &p);
    }
    unsetenv("TILEC_ATTN_FORM_KSLOT");
    launch_attn(k, 1, 2, 1023);
    cr_assert(calls.block[0] == 384u && strstr(last_fn->mod->text, "bar.sync 9, 256"), "S 1023 mode %d", mode);
    launch_attn(k, 1, 2, 1024);
    cr_assert_eq(!strstr(last_fn->mod->text, "bar.sync 9, 256"), mode == 0, "S 1024 mode %d", mode);
    launch_attn(k, 1, 2, 4095);
    cr_assert_eq(!strstr(last_fn->mod->text, "bar.sync 9, 256"), mode == 0, "S 4095 mode %d", mode);
    launch_attn(k, 1, 2, 4096);
    cr_assert(strstr(last_fn->mod->text, "bar.sync 9, 256"), "S 4096 mode %d", mode);
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
}

/* fa3's q by TMA (TILEC_ATTN_Q_TMA, on by default since the twentieth session; lib/codegen/emit_q_tma.c):
 * a launch of the form (S 4097) encodes a third map, Q's: rank 4 {D, S, H, Z}, box 64 x 128 rows,
 * 128-byte swizzle (q's slot of [D/64][128][64] atoms); with the switch off (=0) only K's and V's; the
 * kernel below the bound has none for Q either way (not the fa3 form).  The switch is in the cache key
 * (a second compile). */
Test(fake_driver, attn_fa3_q_by_tma) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  const uint64_t q_addr = 0x7f2000000000ull; /* (launch_attn: Q, K, V, O 0x10000000 apart) */
  setenv("TILEC_ATTN_O_TMA", "0", 1); /* (O's map counted in attn_fa3_o_by_tma) */
  for (int on = 0; on < 2; on++) {
    if (!on) setenv("TILEC_ATTN_Q_TMA", "0", 1);
    tilec_program *p = NULL;
    int links = calls.links;
    tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", 128, 0, false, NULL, &p);
    int e0 = calls.encodes;
    launch_attn(k, 2, 3, 100); /* the two-program kernel */
    cr_assert_eq(calls.block[0], 256u);
    for (int i = e0; i < calls.encodes; i++) cr_assert_neq((uint64_t)(uintptr_t)calls.enc[i % 4].addr, q_addr);
    e0 = calls.encodes;
    launch_attn(k, 16, 16, 4097); /* the form */
    unsetenv("TILEC_ATTN_Q_TMA");
    cr_assert_eq(calls.block[0], 384u);
    cr_assert_eq(calls.links - links, 2, "kernels compiled: %d", calls.links - links);
    cr_assert_eq(calls.encodes - e0, on ? 3 : 2, "maps encoded: %d", calls.encodes - e0);
    int q = -1;
    for (int i = e0; i < calls.encodes; i++)
      if ((uint64_t)(uintptr_t)calls.enc[i % 4].addr == q_addr) q = i % 4;
    cr_assert_eq(q >= 0, on == 1, "Q's map %s", q >= 0 ? "encoded" : "missing");
    if (on) {
      cr_assert_eq(calls.enc[q].rank, 4u);
      cr_assert(calls.enc[q].dims[0] == 128 && calls.enc[q].dims[1] == 4097 && calls.enc[q].dims[2] == 16 &&
                calls.enc[q].dims[3] == 16, "dims %llu %llu %llu %llu", (unsigned long long)calls.enc[q].dims[0],
                (unsigned long long)calls.enc[q].dims[1], (unsigned long long)calls.enc[q].dims[2],
                (unsigned long long)calls.enc[q].dims[3]);
      cr_assert(calls.enc[q].box[0] == 64 && calls.enc[q].box[1] == 128 && calls.enc[q].box[2] == 1 &&
                calls.enc[q].box[3] == 1);
      cr_assert_eq(calls.enc[q].swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
      cr_assert_eq(calls.enc[q].dtype, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    }
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
  unsetenv("TILEC_ATTN_O_TMA");
}

/* TILEC_ATTN_O_TMA (emit_o_tma.c; on by default since the twenty-first session, =0 off): the fa3 form (S 4097 at Z 16, H 16) stores O by TMA from q's
 * slot: a 4th map, O's (rank 4, dims D, S, H, Z: rows past S clipped; box 64 x 64 rows, one
 * consumer warpgroup's half of the tile; 128-byte swizzle, bf16), D128 and D256; =0: 3 maps, K,
 * V and Q's, none at O's address. */
Test(fake_driver, attn_fa3_o_by_tma) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  const uint64_t o_addr = 0x7f2000000000ull + 3 * 0x10000000ull; /* (launch_attn_d: Q, K, V, O) */
  for (int mode = 0; mode < 4; mode++) { /* D128 / D256 x {off, on} */
    int64_t d = mode < 2 ? 128 : 256;
    bool on = mode % 2 == 1;
    if (!on) setenv("TILEC_ATTN_O_TMA", "0", 1);
    tilec_program *p = NULL;
    tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", d, 0, false, NULL, &p);
    int e0 = calls.encodes;
    launch_attn_d(k, 16, 16, 4097, d); /* the form */
    unsetenv("TILEC_ATTN_O_TMA");
    cr_assert_eq(calls.block[0], 384u);
    cr_assert_eq(calls.encodes - e0, on ? 4 : 3, "maps encoded: %d", calls.encodes - e0);
    int m = -1;
    for (int i = e0; i < calls.encodes; i++)
      if ((uint64_t)(uintptr_t)calls.enc[i % 4].addr == o_addr) m = i % 4;
    cr_assert_eq(m >= 0, on, "O's map %s", m >= 0 ? "encoded" : "missing");
    if (on) {
      cr_assert_eq(calls.enc[m].rank, 4u);
      cr_assert(calls.enc[m].dims[0] == (uint64_t)d && calls.enc[m].dims[1] == 4097 && calls.enc[m].dims[2] == 16 &&
                calls.enc[m].dims[3] == 16, "dims %llu %llu %llu %llu", (unsigned long long)calls.enc[m].dims[0],
                (unsigned long long)calls.enc[m].dims[1], (unsigned long long)calls.enc[m].dims[2],
                (unsigned long long)calls.enc[m].dims[3]);
      cr_assert(calls.enc[m].box[0] == 64 && calls.enc[m].box[1] == 64 && calls.enc[m].box[2] == 1 &&
                calls.enc[m].box[3] == 1, "box %u %u", calls.enc[m].box[0], calls.enc[m].box[1]);
      cr_assert_eq(calls.enc[m].swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
      cr_assert_eq(calls.enc[m].dtype, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    }
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
}

/* The fa3 switch tests' case `mode` (D128 / D256 x {unset, on}): `sw` set to 1 when on, examples/attn.tile's
 * cutlass_attn_fwd loaded at D (causal or not) and launched at Z 16, H 16, S 4097 (the form); the caller
 * unsets `sw`. */
static tilec_kernel *fa3_switch_case(const char *sw, int mode, bool causal, int64_t *d, bool *on, tilec_program **p) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn.tile", TILEC_SOURCE_DIR);
  *d = mode < 2 ? 128 : 256;
  *on = mode % 2 == 1;
  if (*on) setenv(sw, "1", 1);
  tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", *d, 0, causal, NULL, p);
  launch_attn_d(k, 16, 16, 4097, *d); /* the form */
  return k;
}

/* TILEC_ATTN_O_SLOT=1 (emit_o_slot.c): the fa3 form (S 4097 at Z 16, H 16) stores O through its last ring stage:
 * the launched module's PTX has bar.sync 9 and the count-4 releases; D128 keeps its 229440 bytes of shared memory
 * (O in V's slot), D256 launches with 230400 (the 32 KiB region of O's second half after 196688); persistent (384
 * threads, at most one CTA an SM: 132 on the fake's device).  Unset (the default since the twenty-eighth session): at
 * D128 O through the last stage for a tile of at most 10 steps, since the thirtieth session into K's slot after "q
 * empty" (TILEC_ATTN_O_SLOT_K's default for full attention), so no bar.sync 9 but the count-4 releases; at D256
 * neither (O larger than V's slot: not taken by default). */
Test(fake_driver, attn_fa3_o_slot) {
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  for (int mode = 0; mode < 4; mode++) { /* D128 / D256 x {unset, on} */
    int64_t d;
    bool on;
    tilec_program *p = NULL;
    tilec_kernel *k = fa3_switch_case("TILEC_ATTN_O_SLOT", mode, false, &d, &on, &p);
    unsetenv("TILEC_ATTN_O_SLOT");
    cr_assert_eq(calls.block[0], 384u);
    cr_assert(calls.grid[0] <= 132u && calls.grid[1] == 1u, "grid %u x %u", calls.grid[0], calls.grid[1]);
    unsigned want = d == 128 ? 229440u : on ? 230400u : 196688u;
    cr_assert_eq(calls.smem, want, "D%d %s: %u bytes of shared memory", (int)d, on ? "on" : "unset", calls.smem);
    const char *text = last_fn->mod->text; /* (the launched form's module: the form links on a thread) */
    bool slot = on || d == 128; /* (unset: the bounded default at D128) */
    cr_assert_eq(strstr(text, "bar.sync 9, 256;") != NULL, on, "D%d %s: V's slot", (int)d, on ? "on" : "unset");
    cr_assert_null(strstr(text, "@p bar.sync 9, 256;"), "D%d %s: no bounded V slot", (int)d, on ? "on" : "unset");
    cr_assert_eq(strstr(text, "], 4; }") != NULL, slot);
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
}

/* TILEC_ATTN_SCHED=1 (attn_sched.c; the option attn-sched; by default in the D128 causal form a launch picks): the
 * causal fa3 form (D128 and D256 at S 4097, Z 16, H 16:
 * 33 x 256 tiles) launches persistent (384 threads, at most one CTA an SM: 132 on the fake's device, one
 * along y), its entry taking the counter's address last (a u64 after the maps) and the producer's take; at Z 2,
 * H 3, S 4097 (198 tiles) 132 CTAs, at S 1000 with the form at every S (48 tiles) 48; =0: the
 * one-tile-a-CTA grid cdiv(S, 128) x Z H and no counter. */
Test(fake_driver, attn_sched) {
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  for (int mode = 0; mode < 4; mode++) { /* D128 / D256 x {=0, on} */
    int64_t d;
    bool on;
    setenv("TILEC_ATTN_FORM_MIN_S", "1", 1);
    if (mode % 2 == 0) setenv("TILEC_ATTN_SCHED", "0", 1); /* (off; unset is on for a D128 launch-time form) */
    tilec_program *p = NULL;
    tilec_kernel *k = fa3_switch_case("TILEC_ATTN_SCHED", mode, true, &d, &on, &p);
    cr_assert_eq(calls.block[0], 384u);
    if (on)
      cr_assert(calls.grid[0] >= 1u && calls.grid[0] <= 132u && calls.grid[1] == 1u, "D%d on: grid %u x %u", (int)d,
                calls.grid[0], calls.grid[1]);
    else
      cr_assert(calls.grid[0] == 33u && calls.grid[1] == 256u, "D%d =0: grid %u x %u", (int)d, calls.grid[0],
                calls.grid[1]);
    const char *text = last_fn->mod->text; /* (the launched form's module) */
    cr_assert_null(strstr(text, "_sched[8];"), "D%d %s: a module global counter", (int)d, on ? "on" : "=0");
    cr_assert_eq(strstr(text, "[128],\n\t.param .u64 cutlass_attn_fwd_param_") != NULL, on, "D%d %s: the counter parameter", (int)d,
                 on ? "on" : "=0");
    cr_assert_eq(strstr(text, "atom.relaxed.gpu.global.add.u32") != NULL, on);
    launch_attn_d(k, 2, 3, 4097, d);
    cr_assert(on ? calls.grid[0] == 132u && calls.grid[1] == 1u : calls.grid[0] == 33u && calls.grid[1] == 6u,
              "D%d %s, 198 tiles: grid %u x %u", (int)d, on ? "on" : "=0", calls.grid[0], calls.grid[1]);
    launch_attn_d(k, 2, 3, 1000, d);
    cr_assert(on ? calls.grid[0] == 48u && calls.grid[1] == 1u : calls.grid[0] == 8u && calls.grid[1] == 6u,
              "D%d %s, 48 tiles: grid %u x %u", (int)d, on ? "on" : "=0", calls.grid[0], calls.grid[1]);
    unsetenv("TILEC_ATTN_SCHED");
    unsetenv("TILEC_ATTN_FORM_MIN_S");
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
}

/* The last launch's tile counter (TILEC_ATTN_SCHED=1): its last parameter, after the .entry's others. */
static CUdeviceptr last_counter(void) {
  char want[300];
  snprintf(want, sizeof want, ".entry %s(", last_fn->name);
  const char *e = strstr(last_fn->mod->text, want), *end = e ? strchr(e, ')') : NULL;
  cr_assert(e && end, "no .entry %s", last_fn->name);
  int n = 0;
  for (const char *q = strstr(e, ".param"); q && q < end; q = strstr(q + 1, ".param")) n++;
  cr_assert(n > 0 && strstr(e, ".param .u64") && n < 256);
  char last_decl[300];
  snprintf(last_decl, sizeof last_decl, ".param .u64 %s_param_%d\n", last_fn->name, n - 1);
  cr_assert(strstr(e, last_decl) && strstr(e, last_decl) < end, "the last parameter is not the counter's u64 (%s)",
            last_decl);
  CUdeviceptr a;
  memcpy(&a, last_params[n - 1], 8);
  return a;
}

static void launch_attn_on(tilec_kernel *k, int64_t z, int64_t h, int64_t s, void *stream) {
  launch_attn_d_on(k, z, h, s, 128, stream);
}

/* TILEC_ATTN_SCHED=1's tile counters (lib/api/sched_slot.c, docs/runtime.md "Tile counters"): the causal
 * fa3 form takes the counter's address as its last parameter (u64, after the tensor maps); each stream
 * gets its own pair of u32 words, zeroed by one cuMemsetD32Async (2 words, 0) on that stream before its
 * first launch and never again (the kernel leaves it zero); a stream keeps its address across launches
 * and shapes; a new stream's pair differs from every other; a first launch while the stream captures
 * puts the memset in the graph and the next direct launch zeroes again; one block of pairs (one
 * cuMemAlloc of 512 bytes) when the form is loaded, a second at the 65th stream; =0: no counter, no memset,
 * no block (unset: the launch-time causal form's default, the counter). */
Test(fake_driver, attn_sched_streams) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  setenv("TILEC_ATTN_FORM_MIN_S", "1", 1);
  setenv("TILEC_ATTN_FORM_KSLOT", "0", 1); /* (one form: the short one, 1024 <= S < 4096, would hold a block of its own) */
  void *A = (void *)(uintptr_t)0x5100, *B = (void *)(uintptr_t)0x5200, *C = (void *)(uintptr_t)0x5300;
  { /* =0 */
    setenv("TILEC_ATTN_SCHED", "0", 1);
    tilec_program *p = NULL;
    size_t a0 = allocs;
    tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", 128, 0, true, NULL, &p);
    int m0 = ms32.n;
    launch_attn_on(k, 2, 3, 4097, A);
    launch_attn_on(k, 2, 3, 4097, B);
    cr_assert_eq(ms32.n, m0, "=0: a counter memset");
    cr_assert_eq(allocs, a0, "=0: device memory allocated");
    cr_assert_null(strstr(last_fn->mod->text, "atom.relaxed.gpu.global.add.u32"));
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
  setenv("TILEC_ATTN_SCHED", "1", 1);
  tilec_program *p = NULL;
  size_t a0 = allocs;
  tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", 128, 0, true, NULL, &p);
  int m0 = ms32.n;
  launch_attn_on(k, 2, 3, 4097, A);
  cr_assert_eq(allocs, a0 + 1, "one block of counters (%zu allocations)", allocs - a0);
  cr_assert_eq(alloc_bytes, 512u);
  cr_assert(strstr(last_fn->mod->text, "atom.relaxed.gpu.global.add.u32"));
  cr_assert_null(strstr(last_fn->mod->text, "_sched[8]"), "a module global counter is back");
  CUdeviceptr ca = last_counter();
  cr_assert_eq(ms32.n, m0 + 1, "stream A's first launch: one memset (%d)", ms32.n - m0);
  int i = (ms32.n - 1) % 16;
  cr_assert(ms32.addr[i] == ca && ms32.words[i] == 2 && ms32.value[i] == 0 && ms32.stream[i] == (CUstream)A,
            "memset 0x%llx x %zu = %u on %p; the counter 0x%llx", (unsigned long long)ms32.addr[i], ms32.words[i],
            ms32.value[i], (void *)ms32.stream[i], (unsigned long long)ca);
  launch_attn_on(k, 2, 3, 4097, A);
  cr_assert_eq(last_counter(), ca, "stream A's second launch moved its counter");
  launch_attn_on(k, 2, 3, 1000, A); /* another shape */
  cr_assert_eq(last_counter(), ca);
  cr_assert_eq(ms32.n, m0 + 1, "stream A zeroed again");
  launch_attn_on(k, 2, 3, 4097, B);
  CUdeviceptr cb = last_counter();
  cr_assert_neq(cb, ca, "streams A and B share a counter");
  cr_assert(cb + 8 <= ca || ca + 8 <= cb, "the pairs overlap");
  cr_assert_eq(ms32.n, m0 + 2);
  i = (ms32.n - 1) % 16;
  cr_assert(ms32.addr[i] == cb && ms32.stream[i] == (CUstream)B && ms32.words[i] == 2);
  launch_attn_on(k, 2, 3, 4097, A);
  cr_assert_eq(last_counter(), ca);
  launch_attn_on(k, 2, 3, 4097, B);
  cr_assert_eq(last_counter(), cb);
  cr_assert_eq(ms32.n, m0 + 2, "a stream's pair zeroed twice");
  /* stream C's first launch captured: the memset goes into the graph, the next direct launch zeroes */
  ms32.capturing = 1;
  launch_attn_on(k, 2, 3, 4097, C);
  CUdeviceptr cc = last_counter();
  cr_assert(cc != ca && cc != cb);
  cr_assert_eq(ms32.n, m0 + 3);
  ms32.capturing = 0;
  launch_attn_on(k, 2, 3, 4097, C);
  cr_assert_eq(last_counter(), cc);
  cr_assert_eq(ms32.n, m0 + 4, "the direct launch after a captured first one did not zero");
  launch_attn_on(k, 2, 3, 4097, C);
  cr_assert_eq(ms32.n, m0 + 4);
  cr_assert_eq(allocs, a0 + 1);
  /* 64 pairs a block: streams 4..64 fit, the 65th takes another block */
  CUdeviceptr seen[70] = {ca, cb, cc};
  for (int sidx = 3; sidx < 65; sidx++) {
    launch_attn_on(k, 2, 3, 4097, (void *)(uintptr_t)(0x6000 + 16 * sidx));
    seen[sidx] = last_counter();
    for (int j = 0; j < sidx; j++) cr_assert_neq(seen[j], seen[sidx], "streams %d and %d share a counter", j, sidx);
  }
  cr_assert_eq(allocs, a0 + 2, "the 65th stream: %zu blocks", allocs - a0);
  launch_attn_on(k, 2, 3, 4097, A);
  cr_assert_eq(last_counter(), ca);
  size_t f0 = frees;
  tilec_kernel_destroy(k);
  cr_assert(frees >= f0 + 2, "the blocks were not freed (%zu)", frees - f0);
  tilec_program_destroy(p);
  unsetenv("TILEC_ATTN_SCHED");
  unsetenv("TILEC_ATTN_FORM_MIN_S");
  unsetenv("TILEC_ATTN_FORM_KSLOT");
}

/* TILEC_ROW_STREAM (emit_ring_rows.c; default on since the twenty-first session): attn_bwd_dkdv's per-step LSE and Dl rows are boxes of its TMA
 * ring: two more maps after Q's and dO's, each over the [Z, H, S] f32 tensor (rank 3, dims S, H, Z
 * innermost first, byte strides 4 S and 4 S H, box BM x 1 x 1, no swizzle, f32), and the kernel
 * issues rank-3 copies; =0: Q's and dO's maps alone. */
static void launch_dkdv(tilec_kernel *k, int64_t z, int64_t h, int64_t s, int64_t d) {
  int64_t shape[4] = {z, h, s, d}, rshape[3] = {z, h, s};
  DLTensor t[8];
  tilec_arg args[9];
  for (int i = 0; i < 8; i++) { /* Q, K, V, dO, LSE, Dl, dK, dV */
    bool row = i == 4 || i == 5;
    t[i] = fake_tensor(i, row ? 3 : 4, row ? (DLDataType){kDLFloat, 32, 1} : (DLDataType){kDLBfloat, 16, 1},
                       row ? rshape : shape, NULL);
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  args[8] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 0.125f};
  cr_assert_eq(tilec_kernel_launch(k, args, 9, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
}

Test(fake_driver, attn_bwd_rows_through_the_ring) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn_bwd.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  const uint64_t lse_addr = 0x7f2000000000ull + 4 * 0x10000000ull, dl_addr = lse_addr + 0x10000000ull;
  for (int mode = 0; mode < 3; mode++) { /* D64 on, D128 on, D64 off */
    int64_t d = mode == 1 ? 128 : 64, bm = 64; /* the example's sm_90a tiles: 64 queries a step at D64 and D128 */
    bool on = mode < 2;
    if (!on) setenv("TILEC_ROW_STREAM", "0", 1);
    tilec_program *p = NULL;
    tilec_kernel *k = load_attn_kernel(path, "attn_bwd_dkdv", d, 0, false, NULL, &p);
    cr_assert_eq(strstr(calls.last_linked_ptx, "cp.async.bulk.tensor.3d.shared::cluster.global.tile") != NULL, on);
    int e0 = calls.encodes;
    launch_dkdv(k, 2, 3, 1000, d);
    unsetenv("TILEC_ROW_STREAM");
    cr_assert_eq(calls.encodes - e0, on ? 4 : 2, "maps encoded: %d", calls.encodes - e0);
    for (int r = 0; r < 2 && on; r++) {
      int m = -1;
      for (int i = e0; i < calls.encodes; i++)
        if ((uint64_t)(uintptr_t)calls.enc[i % 4].addr == (r ? dl_addr : lse_addr)) m = i % 4;
      cr_assert(m >= 0, "the %s map missing", r ? "Dl" : "LSE");
      cr_assert_eq(calls.enc[m].rank, 3u);
      cr_assert_eq(calls.enc[m].dtype, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
      cr_assert(calls.enc[m].dims[0] == 1000 && calls.enc[m].dims[1] == 3 && calls.enc[m].dims[2] == 2);
      cr_assert(calls.enc[m].strides[0] == 4000 && calls.enc[m].strides[1] == 12000);
      cr_assert(calls.enc[m].box[0] == (unsigned)bm && calls.enc[m].box[1] == 1 && calls.enc[m].box[2] == 1,
                "box %u %u %u", calls.enc[m].box[0], calls.enc[m].box[1], calls.enc[m].box[2]);
      cr_assert_eq(calls.enc[m].swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
      cr_assert_eq(calls.enc[m].oob, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    }
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
}

/* TILEC_ATTN_PERSIST=1 (route_pipeline, tile_prefetch.c, emit_q_tma.c): the full kernel without a
 * producer (D128: two programs an SM; D256: one) runs persistent: at Z 16, H 16, S 1000 (2048 tiles)
 * a grid of at most 2 (D256: 1) CTAs an SM along x and 1 along y, 256 threads, and a third map, Q's
 * (box 64 x 128 rows, 128-byte swizzle: thread 0's q by TMA); at Z 2, H 3 (48 tiles) min(tiles, CTAs)
 * = 48.  Causal (the range moves with program_id(0)) and the switch unset (D256: =0, else its
 * persistent form takes S 1000) keep cdiv(S, 128) x Z H and K's and V's maps alone. */
Test(fake_driver, attn_persist) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  const uint64_t q_addr = 0x7f2000000000ull; /* (launch_attn_d: Q, K, V, O 0x10000000 apart) */
  for (int mode = 0; mode < 6; mode++) { /* D128 / D256 x {on, causal on, off} */
    int64_t d = mode < 3 ? 128 : 256;
    bool on = mode % 3 == 0, causal = mode % 3 == 1;
    if (mode % 3 != 2) setenv("TILEC_ATTN_PERSIST", "1", 1);
    else if (d == 256) setenv("TILEC_ATTN_PERSIST", "0", 1); /* (unset: the persistent form at S 1000) */
    tilec_program *p = NULL; /* (attn_form off, the kernel alone: its fa3 form runs from S 256 at D128, 512 at D256) */
    tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", d, 0, causal, "attn_form", &p);
    int e0 = calls.encodes;
    launch_attn_d(k, 16, 16, 1000, d);
    unsetenv("TILEC_ATTN_PERSIST");
    cr_assert_eq(calls.block[0], 256u);
    unsigned per_sm = d == 128 ? 2u : 1u;
    if (on)
      cr_assert(calls.grid[0] >= 1u && calls.grid[0] <= 132u * per_sm && calls.grid[0] < 2048u && calls.grid[1] == 1u,
                "mode %d: persistent grid %u x %u", mode, calls.grid[0], calls.grid[1]);
    else
      cr_assert(calls.grid[0] == 8u && calls.grid[1] == 256u, "mode %d: grid %u x %u", mode, calls.grid[0],
                calls.grid[1]);
    cr_assert_eq(calls.encodes - e0, on ? 3 : 2, "mode %d: maps encoded: %d", mode, calls.encodes - e0);
    int q = -1;
    for (int i = e0; i < calls.encodes; i++)
      if ((uint64_t)(uintptr_t)calls.enc[i % 4].addr == q_addr) q = i % 4;
    cr_assert_eq(q >= 0, on, "mode %d: Q's map %s", mode, q >= 0 ? "encoded" : "missing");
    if (on) {
      cr_assert(calls.enc[q].rank == 4u && calls.enc[q].box[0] == 64 && calls.enc[q].box[1] == 128);
      cr_assert_eq(calls.enc[q].swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
      launch_attn_d(k, 2, 3, 1000, d);
      cr_assert(calls.grid[0] == 48u && calls.grid[1] == 1u, "mode %d: 48 tiles: grid %u x %u", mode, calls.grid[0],
                calls.grid[1]);
    }
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
}

/* The persistent form of a D256 full kernel (passes/attn_persist_form.c, lib/attn_persist_form.h): one
 * load also loads the kernel with attn-persist=1; at Z 16, H 16 a launch with S <= 2048 (1024, 2048)
 * runs the form (at most one CTA an SM along x, 1 along y, Q's map encoded: q by TMA), one with
 * S > 2048 (2049, 4096) the kernel (cdiv(S, 128) x Z H, K's and V's maps alone), and a later short
 * launch the form again; with the pass disabled, TILEC_ATTN_PERSIST=0 or causal every S runs the
 * kernel; TILEC_ATTN_PERSIST_MAX_S moves the bound; D128 has no such form. */
Test(fake_driver, attn_persist_form_picked_by_s) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  const uint64_t q_addr = 0x7f2000000000ull; /* (launch_attn_d: Q, K, V, O 0x10000000 apart) */
  /* 0 on, 1 disable-pass, 2 TILEC_ATTN_PERSIST=0, 3 causal, 4 bound 1024, 5 D128; the D256 fa3 form
   * (S >= 1024, attn_kv_split_form_d256 below) off: TILEC_ATTN_KV_SPLIT=0, the persistent form alone */
  setenv("TILEC_ATTN_KV_SPLIT", "0", 1);
  for (int mode = 0; mode < 6; mode++) {
    int64_t d = mode == 5 ? 128 : 256;
    if (mode == 2) setenv("TILEC_ATTN_PERSIST", "0", 1);
    if (mode == 4) setenv("TILEC_ATTN_PERSIST_MAX_S", "1024", 1);
    /* (mode 5: attn_form off, the kernel alone) */
    const char *disable = mode == 1 ? "attn_persist_form" : mode == 5 ? "attn_form" : NULL;
    tilec_program *p = NULL;
    int links = calls.links;
    tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", d, 0, mode == 3, disable, &p);
    unsetenv("TILEC_ATTN_PERSIST");
    unsetenv("TILEC_ATTN_PERSIST_MAX_S");
    const int64_t sizes[] = {1024, 2048, 2049, 4096, 1000};
    for (int i = 0; i < 5; i++) {
      int64_t s = sizes[i];
      bool form = (mode == 0 && s <= 2048) || (mode == 4 && s <= 1024);
      int e0 = calls.encodes;
      launch_attn_d(k, 16, 16, s, d);
      cr_assert_eq(calls.block[0], 256u, "mode %d S %lld: block %u", mode, (long long)s, calls.block[0]);
      if (form)
        cr_assert(calls.grid[0] >= 1u && calls.grid[0] <= 132u && calls.grid[1] == 1u,
                  "mode %d S %lld: the persistent form: grid %u x %u", mode, (long long)s, calls.grid[0], calls.grid[1]);
      else
        cr_assert(calls.grid[0] == (unsigned)((s + 127) / 128) && calls.grid[1] == 256u,
                  "mode %d S %lld: the kernel: grid %u x %u", mode, (long long)s, calls.grid[0], calls.grid[1]);
      int q = -1;
      for (int j = e0; j < calls.encodes; j++)
        if ((uint64_t)(uintptr_t)calls.enc[j % 4].addr == q_addr) q = j;
      cr_assert_eq(q >= 0, form, "mode %d S %lld: Q's map %s", mode, (long long)s, q >= 0 ? "encoded" : "missing");
    }
    /* (counted after launches that needed the form: late forms) mode 0 compiles both; the other modes
     * the kernel alone (disable-pass, the switch and CAUSAL are in its cache key), mode 4 (the bound is
     * not) none: both from the memory cache */
    int want = mode == 0 ? 2 : mode == 4 ? 0 : 1;
    cr_assert_eq(calls.links - links, want, "mode %d: kernels compiled: %d", mode, calls.links - links);
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
  unsetenv("TILEC_ATTN_KV_SPLIT");
}

/* fa3 at D256 with K and V of a stage apart (TILEC_ATTN_KV_SPLIT, on 2-stage rings by default since the
 * twentieth session; passes/attn_form.c, lib/codegen/emit_ws.c): one load of the D256 kernel also loads
 * its FlashAttention-3 form at the kernel's BN (64), so at Z 4, H 16 a launch with S >= 256 runs it
 * (384 threads: the producer warpgroup; full: persistent, at most one CTA an SM; causal: a tile a CTA, and at
 * 512 <= S < 2048 the short form, persistent with its tiles from the counter, unless TILEC_ATTN_FORM_COUNTER=0)
 * and a shorter full one the persistent form (256 threads); with =0 S 4096 runs the kernel (256 threads, 32 x 64)
 * and no form is compiled for it. */
Test(fake_driver, attn_kv_split_form_d256) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  for (int mode = 0; mode < 4; mode++) { /* 0 on (unset), 1 on causal, 2 off, 3 causal without its short form */
    if (mode == 2) setenv("TILEC_ATTN_KV_SPLIT", "0", 1);
    if (mode == 3) setenv("TILEC_ATTN_FORM_COUNTER", "0", 1);
    bool causal = mode == 1 || mode == 3;
    tilec_program *p = NULL;
    tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_fwd", 256, 0, causal, NULL, &p);
    launch_attn_d(k, 4, 16, 4096, 256); /* (the late form compiles under the switch: unset after) */
    unsetenv("TILEC_ATTN_KV_SPLIT");
    unsetenv("TILEC_ATTN_FORM_COUNTER");
    if (mode == 0)
      cr_assert(calls.block[0] == 384u && calls.grid[0] <= 132u && calls.grid[1] == 1u,
                "S 4096: the form, persistent: block %u grid %u x %u", calls.block[0], calls.grid[0], calls.grid[1]);
    else if (causal) /* (causal: a tile a CTA -- D256's form takes no counter by default, passes/attn_form.c) */
      cr_assert(calls.block[0] == 384u && calls.grid[0] == 32u && calls.grid[1] == 64u,
                "S 4096 causal: the form, a tile a CTA: block %u grid %u x %u", calls.block[0], calls.grid[0], calls.grid[1]);
    else
      cr_assert(calls.block[0] == 256u && calls.grid[0] == 32u && calls.grid[1] == 64u,
                "S 4096 off: the kernel: block %u grid %u x %u", calls.block[0], calls.grid[0], calls.grid[1]);
    /* causal 512 <= S < 2048: the short form (thirty-fifth session), its tiles from the counter (persistent) */
    const int64_t s_of[] = {2048, 2047, 512, 511};
    for (int i = 0; i < 4; i++) {
      launch_attn_d(k, 4, 16, s_of[i], 256); /* (D256's bound: 256 since the thirtieth session) */
      cr_assert_eq(calls.block[0], mode != 2 ? 384u : 256u, "S %lld: block %u", (long long)s_of[i], calls.block[0]);
      bool counter = strstr(last_fn->mod->text, "atom.relaxed.gpu.global.add.u32") != NULL;
      cr_assert_eq(counter, mode == 1 && (i == 1 || i == 2), "mode %d S %lld: the counter %d", mode,
                   (long long)s_of[i], counter);
      if (counter) cr_assert(calls.grid[0] <= 132u && calls.grid[1] == 1u, "S %lld: grid %u x %u", (long long)s_of[i],
                             calls.grid[0], calls.grid[1]);
    }
    launch_attn_d(k, 4, 16, 200, 256);
    cr_assert_eq(calls.block[0], 256u, "S 200: block %u", calls.block[0]);
    if (!causal) /* (full: the persistent form below its bound) */
      cr_assert(calls.grid[0] <= 132u && calls.grid[1] == 1u, "S 200: grid %u x %u", calls.grid[0], calls.grid[1]);
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
}

/* k of attn_rope rotated by fa3's producer (TILEC_ROPE_PRODUCER=1 with TILEC_ATTN_WS=fa3, D128 BN128;
 * lib/codegen/emit_rope.c): cutlass_attn_rope_fwd at Z 2, H 3, S 1000 launches 384 threads (the producer
 * warpgroup) with 229448 B of shared memory (a 3-stage ring of k's halves and V, q's slots, the
 * mbarriers) and encodes three maps: K's two (box 64 x 128, 128-byte swizzle: the halves at columns 0
 * and 64) and V's, none for the tables (the producer reads them from global memory); without the switch
 * the same kernel is the 256-thread one. */
Test(fake_driver, attn_rope_producer) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/attn_rope.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  const uint64_t base = 0x7f2000000000ull, step = 0x10000000ull; /* Q, K, V, COS, SIN, O */
  for (int on = 0; on < 2; on++) {
    setenv("TILEC_ATTN_WS", "fa3", 1);
    if (on) setenv("TILEC_ROPE_PRODUCER", "1", 1);
    tilec_program *p = NULL;
    tilec_kernel *k = load_attn_kernel(path, "cutlass_attn_rope_fwd", 128, 128, false, NULL, &p);
    int64_t qs[4] = {2, 3, 1000, 128}, ts[2] = {1000, 64};
    DLTensor t[6];
    tilec_arg args[7];
    for (int i = 0; i < 6; i++) {
      bool table = i == 3 || i == 4;
      t[i] = (DLTensor){.data = (void *)(uintptr_t)(base + step * (uint64_t)i), .device = {kDLCUDA, 0},
                        .ndim = table ? 2 : 4, .dtype = table ? (DLDataType){kDLFloat, 32, 1} : (DLDataType){kDLBfloat, 16, 1},
                        .shape = table ? ts : qs};
      args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
    }
    args[6] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 0.088f};
    int e0 = calls.encodes;
    cr_assert_eq(tilec_kernel_launch(k, args, 7, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
    unsetenv("TILEC_ROPE_PRODUCER");
    unsetenv("TILEC_ATTN_WS");
    if (!on) {
      cr_assert_eq(calls.block[0], 256u, "off: block %u", calls.block[0]);
    } else {
      cr_assert(calls.block[0] == 384u && calls.smem == 229448u, "on: block %u smem %u", calls.block[0], calls.smem);
      cr_assert_eq(calls.encodes - e0, 3, "maps encoded: %d", calls.encodes - e0);
      int kmaps = 0, vmaps = 0;
      for (int i = e0; i < calls.encodes; i++) {
        uint64_t a = (uint64_t)(uintptr_t)calls.enc[i % 4].addr;
        cr_assert(a == base + step || a == base + 2 * step, "a map of neither K nor V: %llx", (unsigned long long)a);
        kmaps += a == base + step, vmaps += a == base + 2 * step;
        cr_assert(calls.enc[i % 4].rank == 4u && calls.enc[i % 4].box[0] == 64 && calls.enc[i % 4].box[1] == 128);
        cr_assert_eq(calls.enc[i % 4].swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
      }
      cr_assert(kmaps == 2 && vmaps == 1, "K maps %d, V maps %d", kmaps, vmaps);
    }
    tilec_kernel_destroy(k);
    tilec_program_destroy(p);
  }
}

/* ---- the K-major-B form (passes/kmajor_form.c, lib/kmajor_b.h) ---------------------------- */
/* cutlass_gemm_fp8_nn of examples/gemm_fp8.tile at M x K x N, B's strides bs (NULL: compact
 * [K, N]); A, B and C at fixed fake addresses; the launch must succeed. */
#define FP8_B_ADDR 0x7f2010000000ull
static tilec_status launch_fp8(tilec_kernel *k, int64_t m, int64_t kk, int64_t n, int64_t *bs) {
  int64_t sa[2] = {m, kk}, sb[2] = {kk, n}, sc[2] = {m, n};
  /* A's rows padded to 16 bytes, so that A is a tensor map and the TMA forms run themselves */
  int64_t as[2] = {(kk + 15) / 16 * 16, 1};
  int64_t *shapes[3] = {sa, sb, sc};
  DLDataType dt[3] = {{kDLUInt, 8, 1}, {kDLUInt, 8, 1}, {kDLBfloat, 16, 1}};
  DLTensor t[3];
  tilec_arg args[5];
  for (int i = 0; i < 3; i++) {
    t[i] = fake_tensor(i, 2, dt[i], shapes[i], i == 1 ? bs : i == 0 ? as : NULL);
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  args[3] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 0.5f};
  args[4] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 2.0f};
  return tilec_kernel_launch(k, args, 5, NULL);
}

/* The last 4 tensor maps encoded: the one of address addr, or NULL. */
static const void *enc_of(uint64_t addr, int *at) {
  for (int i = 0; i < 4 && i < calls.encodes; i++)
    if ((uint64_t)(uintptr_t)calls.enc[i].addr == addr) return *at = i, &calls.enc[i];
  return NULL;
}

/* Whether the last launch ran cutlass_gemm_fp8_nn itself (its in-kernel transpose: ldmatrix.trans of
 * the [K][N] slot), not its K-major-B form (the TN loop, no transpose). */
static bool launched_in_kernel_transpose(void) { return last_fn && strstr(last_fn->mod->text, "ldmatrix.sync.aligned.m8n8.x4.trans") != NULL; }

/* One load of cutlass_gemm_fp8_nn compiles 3 kernels: the kernel (B [K, N] transposed in shared
 * memory each k-step: 128x128, 230400 B of shared memory), its K-major-B form (the TN loop at TN's
 * sm_90a tile, 128x256 x 4 stages: 230400 B, B's box 256 rows of 128; TILEC_KMAJOR_B_TILE=0 the
 * kernel's tile: 164864 B, 128 rows) and the transpose kernel (64x64 tiles, 4 warps).  An N-major B
 * at M = 5000 (> 128) launches the
 * transpose (grid cdiv(N, 64) x cdiv(K, 64)), X = B itself, into a workspace of N x 1008 bytes (K =
 * 1000 padded to 16), then the form, whose B tensor map is that workspace [N][K] with a row pitch
 * of 1008; the same shapes again reuse it.  M = 128 (one tile row) runs the kernel itself; a
 * K-major view (strides (1, 1024)) runs the form on B's own memory at any M, no transpose, as does
 * a compact B of one column (no strides given); a view contiguous along neither runs the kernel.  A B of the wrong size is refused by the kernel's own
 * checks.  TILEC_KMAJOR_B=0: the kernel alone (from the memory cache), every launch the kernel. */
Test(fake_driver, kmajor_b_form_picked_by_strides) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/gemm_fp8.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  /* mode 0: the defaults; 1: TILEC_KMAJOR_B=0; 2: TILEC_KMAJOR_B_TILE=0 (the form at the kernel's tile) */
  for (int mode = 0; mode < 3; mode++) {
    bool off = mode == 1;
    if (off) setenv("TILEC_KMAJOR_B", "0", 1);
    if (mode == 2) setenv("TILEC_KMAJOR_B_TILE", "0", 1);
    tilec_program *p = NULL;
    cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK);
    int links = calls.links;
    size_t allocs0 = allocs, frees0 = frees;
    tilec_kernel *k = NULL;
    tilec_status st = tilec_kernel_load(p, "cutlass_gemm_fp8_nn", 0, &k);
    unsetenv("TILEC_KMAJOR_B");
    cr_assert_eq(st, TILEC_OK, "%s", tilec_program_log(p));
    const unsigned kernel_smem = 230400u, form_smem = mode == 2 ? 164864u : 230400u, form_rows = mode == 2 ? 128u : 256u;
    int before = calls.launches;
    cr_assert_eq(launch_fp8(k, 5000, 1000, 4096, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
    /* off: the kernel from the memory cache (the switch changes no kernel's code), nothing compiled;
     * on: the late forms joined by that first launch */
    if (mode < 2)
      cr_assert_eq(calls.links - links, off ? 0 : 3, "the kernel, its K-major-B form, the transpose: %d",
                   calls.links - links);
    if (!off) {
      cr_assert_eq(calls.launches - before, 2, "the transpose, then the form");
      cr_assert(prev_grid[0] == 64u && prev_grid[1] == 16u && prev_block == 128u, "transpose grid %u x %u block %u",
                prev_grid[0], prev_grid[1], prev_block);
      cr_assert_eq(prev_param0, FP8_B_ADDR, "the transpose reads B: 0x%llx", (unsigned long long)prev_param0);
      cr_assert_eq(allocs - allocs0, 1u);
      cr_assert_eq(alloc_bytes, (size_t)4096 * 1008);
      cr_assert(calls.block[0] == 384u && calls.grid[0] == 132u && calls.smem == form_smem && !launched_in_kernel_transpose(),
                "form block %u grid %u smem %u", calls.block[0], calls.grid[0], calls.smem);
      int i = -1;
      uint64_t ws = 0x7f3000000000ull + 0x100000000ull * allocs;
      cr_assert(enc_of(ws, &i), "a tensor map of the workspace 0x%llx", (unsigned long long)ws);
      cr_assert(calls.enc[i].dims[0] == 1000u && calls.enc[i].dims[1] == 4096u && calls.enc[i].stride == 1008u,
                "B [N][K]: dims %llu x %llu pitch %llu", (unsigned long long)calls.enc[i].dims[0],
                (unsigned long long)calls.enc[i].dims[1], (unsigned long long)calls.enc[i].stride);
      cr_assert(calls.enc[i].box[0] == 128u && calls.enc[i].box[1] == form_rows, "B's box %u x %u (form rows %u)",
                calls.enc[i].box[0], calls.enc[i].box[1], form_rows);
      before = calls.launches;
      cr_assert_eq(launch_fp8(k, 5000, 1000, 4096, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
      cr_assert_eq(calls.launches - before, 2);
      cr_assert_eq(allocs - allocs0, 1u, "the same workspace");
    } else {
      cr_assert_eq(calls.launches - before, 1);
      cr_assert(calls.smem == kernel_smem && launched_in_kernel_transpose());
    }
    before = calls.launches;
    cr_assert_eq(launch_fp8(k, 128, 1000, 4096, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
    cr_assert(calls.launches - before == 1 && calls.smem == kernel_smem && launched_in_kernel_transpose(),
              "M 128: the kernel (smem %u)", calls.smem);
    int64_t kmajor[2] = {1, 1024};
    before = calls.launches;
    cr_assert_eq(launch_fp8(k, 100, 1000, 4096, kmajor), TILEC_OK, "%s", tilec_kernel_error(k));
    cr_assert_eq(calls.launches - before, 1);
    /* (off: the kernel, whose B of last stride 1024 is no tensor map: its no-TMA form) */
    if (off) cr_assert(launched_in_kernel_transpose(), "a K-major B, the form off: the kernel (smem %u)", calls.smem);
    else cr_assert(calls.smem == form_smem && !launched_in_kernel_transpose(), "a K-major B: the form (smem %u)", calls.smem);
    if (!off) {
      int i = -1;
      cr_assert(enc_of(FP8_B_ADDR, &i), "a tensor map of B itself");
      cr_assert(calls.enc[i].dims[0] == 1000u && calls.enc[i].dims[1] == 4096u && calls.enc[i].stride == 1024u,
                "B [N][K]: dims %llu x %llu pitch %llu", (unsigned long long)calls.enc[i].dims[0],
                (unsigned long long)calls.enc[i].dims[1], (unsigned long long)calls.enc[i].stride);
    }
    /* N = 1, compact (NULL strides): [K, 1] is K-major too: the form on B, its one row's pitch
     * padded to 16 bytes (a tensor map) */
    before = calls.launches;
    cr_assert_eq(launch_fp8(k, 5000, 1000, 1, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
    cr_assert_eq(calls.launches - before, 1);
    /* (C [M, 1] bf16 is no tensor map: the form, or the kernel when off, runs its no-TMA form) */
    cr_assert(launched_in_kernel_transpose() == off, "N = 1: the form, or the kernel when off (smem %u)", calls.smem);
    int64_t neither[2] = {8192, 2};
    before = calls.launches;
    cr_assert_eq(launch_fp8(k, 5000, 1000, 4096, neither), TILEC_OK, "%s", tilec_kernel_error(k));
    /* (B of stride 2 is no tensor map: the kernel runs its no-TMA form, TILEC_TMA_FORM; not the K-major form) */
    cr_assert(calls.launches - before == 1 && launched_in_kernel_transpose(), "neither: the kernel (smem %u)", calls.smem);
    before = calls.launches;
    int64_t m = 5000, kk = 1000;
    int64_t sa[2] = {m, kk}, sb[2] = {kk + 1, 4096}, sc[2] = {m, 4096};
    DLTensor t[3] = {{.data = (void *)(uintptr_t)0x7f2000000000ull, .device = {kDLCUDA, 0}, .ndim = 2,
                      .dtype = {kDLUInt, 8, 1}, .shape = sa},
                     {.data = (void *)(uintptr_t)FP8_B_ADDR, .device = {kDLCUDA, 0}, .ndim = 2,
                      .dtype = {kDLUInt, 8, 1}, .shape = sb},
                     {.data = (void *)(uintptr_t)0x7f2020000000ull, .device = {kDLCUDA, 0}, .ndim = 2,
                      .dtype = {kDLBfloat, 16, 1}, .shape = sc}};
    tilec_arg bad[5] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &t[0]}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &t[1]},
                        {.kind = TILEC_ARG_TENSOR, .u.tensor = &t[2]}, {.kind = TILEC_ARG_F32, .u.f32 = 1.0f},
                        {.kind = TILEC_ARG_F32, .u.f32 = 1.0f}};
    cr_assert_eq(tilec_kernel_launch(k, bad, 5, NULL), TILEC_ERROR_LAUNCH);
    cr_assert(strstr(tilec_kernel_error(k), "launch cutlass_gemm_fp8_nn: ") && strstr(tilec_kernel_error(k), "B"),
              "%s", tilec_kernel_error(k));
    tilec_kernel_destroy(k);
    cr_assert_eq(frees - frees0, off ? 0u : 1u, "the workspace freed with the handle");
    tilec_program_destroy(p);
    unsetenv("TILEC_KMAJOR_B_TILE");
  }
}

/* The PTX module the K-major-B form of cutlass_gemm_fp8_nn launches (B given K-major: the form on B
 * itself) is cutlass_gemm_fp8_tn's at its default tile, names aside, under promote and fast alike:
 * the form takes TN's sm_90a tile (passes/kmajor_form.c), so NN after the transpose runs TN's code. */
Test(fake_driver, kmajor_b_form_is_tn_code) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/gemm_fp8.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  for (int fast = 0; fast < 2; fast++) {
    char *text[2] = {NULL, NULL};
    for (int tn = 0; tn < 2; tn++) {
      tilec_options *o = NULL;
      cr_assert_eq(tilec_options_create(&o), TILEC_OK);
      cr_assert_eq(tilec_options_set_line_info(o, 0), TILEC_OK);
      if (fast) cr_assert_eq(tilec_options_set(o, "fp8-acc", "fast"), TILEC_OK);
      tilec_program *p = NULL;
      cr_assert_eq(tilec_program_create_from_file(&p, path, o), TILEC_OK);
      tilec_options_destroy(o);
      tilec_kernel *k = NULL;
      cr_assert_eq(tilec_kernel_load(p, tn ? "cutlass_gemm_fp8_tn" : "cutlass_gemm_fp8_nn", 0, &k), TILEC_OK, "%s",
                   tilec_program_log(p));
      /* NN: B [K, N] viewed K-major (strides (1, K)); TN: BT [N, K] compact -- the same bytes */
      int64_t m = 5000, kk = 1024, n = 4096;
      int64_t sa[2] = {m, kk}, sb[2] = {kk, n}, sbt[2] = {n, kk}, sc[2] = {m, n}, bs[2] = {1, kk};
      DLTensor t[3] = {{.data = (void *)(uintptr_t)0x7f2000000000ull, .device = {kDLCUDA, 0}, .ndim = 2,
                        .dtype = {kDLUInt, 8, 1}, .shape = sa},
                       {.data = (void *)(uintptr_t)FP8_B_ADDR, .device = {kDLCUDA, 0}, .ndim = 2,
                        .dtype = {kDLUInt, 8, 1}, .shape = tn ? sbt : sb, .strides = tn ? NULL : bs},
                       {.data = (void *)(uintptr_t)0x7f2020000000ull, .device = {kDLCUDA, 0}, .ndim = 2,
                        .dtype = {kDLBfloat, 16, 1}, .shape = sc}};
      tilec_arg args[5] = {{.kind = TILEC_ARG_TENSOR, .u.tensor = &t[0]}, {.kind = TILEC_ARG_TENSOR, .u.tensor = &t[1]},
                           {.kind = TILEC_ARG_TENSOR, .u.tensor = &t[2]}, {.kind = TILEC_ARG_F32, .u.f32 = 1.0f},
                           {.kind = TILEC_ARG_F32, .u.f32 = 1.0f}};
      cr_assert_eq(tilec_kernel_launch(k, args, 5, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
      cr_assert(last_fn && last_fn->mod->text);
      text[tn] = strdup(last_fn->mod->text);
      tilec_kernel_destroy(k);
      tilec_program_destroy(p);
    }
    /* the names aside: NN's text with cutlass_gemm_fp8_nn spelled as TN's (the same length) */
    for (char *q = text[0]; (q = strstr(q, "cutlass_gemm_fp8_nn")) != NULL; q += 19) memcpy(q, "cutlass_gemm_fp8_tn", 19);
    cr_assert(strstr(text[1], "m64n128k32") || strstr(text[1], "m64n256k32"), "a wgmma kernel");
    cr_assert_str_eq(text[0], text[1], "fp8-acc=%s: the K-major-B form is TN's code", fast ? "fast" : "promote");
    free(text[0]);
    free(text[1]);
  }
}

/* A kernel the rule widens whose form does not compile at TN's tile (its epilogue's bias view is a
 * literal 128 columns: [128, 256] + [1, 128] does not broadcast): the load still succeeds, the program
 * log says why, and a launch with a K-major B runs the form at the kernel's tile (B's box 128 rows). */
Test(fake_driver, kmajor_b_form_falls_back_to_the_kernels_tile) {
  static const char src[] =
      "@warps(8) @stages(4) kernel cutlass_bias(A: tensor<f8e4m3>[M, K], B: tensor<f8e4m3>[K, N], Bias: tensor<f32>[N],\n"
      "                                         C: tensor<bf16>[M, N])\n"
      "    tiles(BM = 128, BN = 128, BK = 128)\n"
      "    grid(cdiv(M, BM), cdiv(N, BN))\n"
      "{\n"
      "    m0 = program_id(0) * BM;\n"
      "    n0 = program_id(1) * BN;\n"
      "    acc = zeros<f32>[BM, BN];\n"
      "    for k0 in range(0, K, BK) {\n"
      "        acc = dot(load(A[m0 : m0 + BM, k0 : k0 + BK]), load(B[k0 : k0 + BK, n0 : n0 + BN]), acc);\n"
      "    }\n"
      "    bias = load(Bias[n0 : n0 + 128]);\n"
      "    store(C[m0 : m0 + BM, n0 : n0 + BN], cast<bf16>(acc + bias[None, :]));\n"
      "}\n";
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  tilec_program *p = NULL;
  cr_assert_eq(tilec_program_create(&p, src, "bias.tile", NULL), TILEC_OK);
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "cutlass_bias", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  int64_t m = 5000, kk = 1024, n = 4096;
  int64_t sa[2] = {m, kk}, sb[2] = {kk, n}, sbias[1] = {n}, sc[2] = {m, n}, bs[2] = {1, kk};
  DLTensor t[4] = {{.data = (void *)(uintptr_t)0x7f2000000000ull, .device = {kDLCUDA, 0}, .ndim = 2,
                    .dtype = {kDLUInt, 8, 1}, .shape = sa},
                   {.data = (void *)(uintptr_t)FP8_B_ADDR, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLUInt, 8, 1},
                    .shape = sb, .strides = bs},
                   {.data = (void *)(uintptr_t)0x7f2030000000ull, .device = {kDLCUDA, 0}, .ndim = 1,
                    .dtype = {kDLFloat, 32, 1}, .shape = sbias},
                   {.data = (void *)(uintptr_t)0x7f2020000000ull, .device = {kDLCUDA, 0}, .ndim = 2,
                    .dtype = {kDLBfloat, 16, 1}, .shape = sc}};
  tilec_arg args[4];
  for (int i = 0; i < 4; i++) args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  cr_assert_eq(tilec_kernel_launch(k, args, 4, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert(!launched_in_kernel_transpose(), "a K-major B: the form");
  int i = -1;
  cr_assert(enc_of(FP8_B_ADDR, &i), "a tensor map of B itself");
  cr_assert(calls.enc[i].box[0] == 128u && calls.enc[i].box[1] == 128u, "the kernel's tile: B's box %u x %u",
            calls.enc[i].box[0], calls.enc[i].box[1]);
  const char *log = tilec_program_log(p);
  cr_assert(strstr(log, "its K-major-B form at TN's tile (BN=256, 4 stages) did not load; the form runs at the "
                        "kernel's tile") && strstr(log, "do not broadcast"), "%s", log);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* Launch k with N f32 elements whose first tensor starts at base (others 16-byte aligned). */
static void launch_at(tilec_kernel *k, int64_t n, uint64_t base) {
  int64_t shape[1] = {n};
  DLTensor t[3];
  tilec_arg args[4];
  for (int i = 0; i < 3; i++) {
    t[i] = (DLTensor){.data = (void *)(uintptr_t)(i ? 0x200000u * (uint64_t)i : base), .device = {kDLCUDA, 0},
                      .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  args[3] = (tilec_arg){.kind = TILEC_ARG_F32, .u.f32 = 0.75f};
  cr_assert_eq(tilec_kernel_launch(k, args, 4, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
}
/* the per-element fallback's group PTX (emit_memory.c group_ptx) is in the launched module */
static bool launched_fallback(void) { return last_fn && strstr(last_fn->mod->text, ".reg .pred pr, pv") != NULL; }

Test(fake_driver, row_kernel_launch_variant) {
  int regs = fake_limits.num_regs;
  /* 40 registers: 12 CTAs of 4 warps an SM, no variant compiled (one module) */
  tilec_program *p = program();
  int loads0 = calls.module_loads;
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_kernel_load(p, "vadd", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  cr_assert_eq(calls.module_loads - loads0, 1);
  launch_at(k, 1000, 0x100000u);
  cr_assert(launched_fallback(), "the default kernel has the fallback");
  cr_assert_null(strstr(tilec_program_log(p), "launch variant"));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  /* 120 registers: 4 CTAs (16 warps) an SM: the variant is compiled and kept */
  fake_limits.num_regs = 120;
  p = program();
  loads0 = calls.module_loads;
  cr_assert_eq(tilec_kernel_load(p, "vadd", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  fake_limits.num_regs = regs;
  cr_assert_eq(calls.module_loads - loads0, 1); /* the default from the memory cache, the variant compiled */
  cr_assert(strstr(tilec_program_log(p), "launch variant without the per-element fallback: 4 -> 4 CTAs an SM"), "%s",
            tilec_program_log(p));
  launch_at(k, 1000, 0x100000u); /* aligned, 1000 % 4 == 0: the variant */
  cr_assert(!launched_fallback(), "aligned arguments run the variant");
  launch_at(k, 1000, 0x100004u); /* X 4 bytes off 16: the default kernel */
  cr_assert(launched_fallback(), "a misaligned tensor runs the default kernel");
  launch_at(k, 1001, 0x100000u); /* a last size not a multiple of 4 f32: the default kernel */
  cr_assert(launched_fallback(), "a ragged size runs the default kernel");
  launch_at(k, 1000, 0x100000u);
  cr_assert(!launched_fallback());
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  /* a kernel that combines its tiles (a reduce): its straight-line variant is kept only where it
   * fits more CTAs an SM than the default (the fake driver gives both 120 registers: 4 -> 4) */
  fake_limits.num_regs = 120;
  static const char rsum[] = "kernel rsum(X: tensor<f32>[R, C], Y: tensor<f32>[R])\n"
                             "    tiles(BC = 1024)\n    grid(R)\n{\n"
                             "    r = program_id(0);\n    store(Y[r], reduce_sum(load(X[r, 0 : BC]), 0));\n}\n";
  cr_assert_eq(tilec_program_create(&p, rsum, "rsum.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_kernel_load(p, "rsum", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  fake_limits.num_regs = regs;
  cr_assert(strstr(tilec_program_log(p), "launch variant without the per-element fallback: 4 -> 4 CTAs an SM") &&
                strstr(tilec_program_log(p), "; not used"),
            "%s", tilec_program_log(p));
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  /* TILEC_LAUNCH_VARIANTS=0: the default kernel alone */
  fake_limits.num_regs = 120;
  setenv("TILEC_LAUNCH_VARIANTS", "0", 1);
  p = program();
  loads0 = calls.module_loads;
  cr_assert_eq(tilec_kernel_load(p, "vadd", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  unsetenv("TILEC_LAUNCH_VARIANTS");
  fake_limits.num_regs = regs;
  cr_assert_eq(calls.module_loads - loads0, 1);
  launch_at(k, 1000, 0x100000u);
  cr_assert(launched_fallback());
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}

/* ---- the materialize-once form (passes/hoist_form.c, lib/hoist_operand.h) ------------------------ */
/* gemm_w4a16 of examples/gemm_w4a16.tile at M x K x N (G 128): A, Wq, S, Z, C at fixed fake addresses. */
#define W4_WQ_ADDR 0x7f2010000000ull
static tilec_status launch_w4a16(tilec_kernel *k, int64_t m, int64_t kk, int64_t n) {
  int64_t sa[2] = {m, kk}, sw[2] = {kk / 8, n}, sg[2] = {kk / 128, n}, sc[2] = {m, n};
  int64_t *shapes[5] = {sa, sw, sg, sg, sc};
  int64_t cs[2] = {(n + 7) / 8 * 8, 1}; /* C's rows padded to 16 bytes: a tensor map, so the form runs itself */
  DLDataType bf = {kDLBfloat, 16, 1}, i32 = {kDLInt, 32, 1};
  DLTensor t[5];
  tilec_arg args[5];
  for (int i = 0; i < 5; i++) {
    t[i] = fake_tensor(i, 2, i == 1 ? i32 : bf, shapes[i], i == 4 ? cs : NULL);
    args[i] = (tilec_arg){.kind = TILEC_ARG_TENSOR, .u.tensor = &t[i]};
  }
  return tilec_kernel_launch(k, args, 5, NULL);
}

/* The default (TILEC_HOIST_OPERAND unset): one load of gemm_w4a16 compiles 3 kernels (the kernel; its materialize-once
 * form at cutlass_gemm's tile: TMA + wgmma, warp-specialized, persistent; the pre-kernel).  M = 300
 * (>= 256) launches the pre-kernel (grid cdiv(K, 128) x cdiv(N, 64), its first parameter A) into a
 * workspace of K x N x 2 bytes (N = 1004: rows padded to 2016 bytes), then the form, whose B tensor
 * map is that workspace; the same shapes again reuse it; M = 64 runs the kernel itself (grid
 * cdiv(M, 16) x cdiv(N, 64), 4 warps); each choice said once in the program log.
 * TILEC_HOIST_OPERAND_MIN_M=1000 keeps M = 300 on the kernel.  Off (TILEC_HOIST_OPERAND=0): the kernel alone
 * (from the memory cache), every launch the kernel. */
Test(fake_driver, hoist_operand_form_picked_by_m) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/gemm_w4a16.tile", TILEC_SOURCE_DIR);
  cr_assert_eq(tilec_device_init(0), TILEC_OK);
  for (int mode = 0; mode < 3; mode++) { /* 0 on, 1 on with the bound at 1000, 2 off */
    bool off = mode == 2;
    if (off) setenv("TILEC_HOIST_OPERAND", "0", 1);
    if (mode == 1) setenv("TILEC_HOIST_OPERAND_MIN_M", "1000", 1);
    tilec_program *p = NULL;
    cr_assert_eq(tilec_program_create_from_file(&p, path, NULL), TILEC_OK);
    int links = calls.links;
    size_t allocs0 = allocs, frees0 = frees;
    tilec_kernel *k = NULL;
    tilec_status st = tilec_kernel_load(p, "gemm_w4a16", 0, &k);
    unsetenv("TILEC_HOIST_OPERAND");
    cr_assert_eq(st, TILEC_OK, "%s", tilec_program_log(p));
    int before = calls.launches;
    cr_assert_eq(launch_w4a16(k, 300, 512, 1004), TILEC_OK, "%s", tilec_kernel_error(k));
    if (mode == 0) cr_assert_eq(calls.links - links, 3, "the kernel, its form, the pre-kernel: %d", calls.links - links);
    if (mode == 2) cr_assert_eq(calls.links - links, 0, "off: the kernel from the memory cache: %d", calls.links - links);
    if (mode == 0) {
      cr_assert_eq(calls.launches - before, 2, "the pre-kernel, then the form");
      cr_assert(prev_grid[0] == 4u && prev_grid[1] == 16u, "pre-kernel grid %u x %u", prev_grid[0], prev_grid[1]);
      cr_assert_eq(prev_param0, 0x7f2000000000ull, "the pre-kernel's first parameter is A: 0x%llx",
                   (unsigned long long)prev_param0);
      cr_assert_eq(allocs - allocs0, 1u);
      cr_assert_eq(alloc_bytes, (size_t)512 * 2016, "workspace bytes %zu", alloc_bytes);
      cr_assert(calls.block[0] == 384u && strstr(last_fn->mod->text, "wgmma.mma_async") != NULL,
                "the form: block %u, wgmma; log:\n%s", calls.block[0], tilec_program_log(p));
      int i = -1;
      uint64_t ws = 0x7f3000000000ull + 0x100000000ull * allocs;
      cr_assert(enc_of(ws, &i), "a tensor map of the workspace 0x%llx", (unsigned long long)ws);
      cr_assert(calls.enc[i].dims[0] == 1004u && calls.enc[i].dims[1] == 512u && calls.enc[i].stride == 2016u,
                "hoisted [K][N]: dims %llu x %llu pitch %llu", (unsigned long long)calls.enc[i].dims[0],
                (unsigned long long)calls.enc[i].dims[1], (unsigned long long)calls.enc[i].stride);
      before = calls.launches;
      cr_assert_eq(launch_w4a16(k, 300, 512, 1004), TILEC_OK, "%s", tilec_kernel_error(k));
      cr_assert_eq(calls.launches - before, 2);
      cr_assert_eq(allocs - allocs0, 1u, "the same workspace");
      cr_assert(strstr(tilec_program_log(p), "M 300 >= 256 (TILEC_HOIST_OPERAND_MIN_M): its materialize-once form runs it"),
                "%s", tilec_program_log(p));
    } else {
      cr_assert_eq(calls.launches - before, 1);
      cr_assert(calls.block[0] == 128u && calls.grid[0] == 19u && calls.grid[1] == 16u, "the kernel: block %u grid %u x %u",
                calls.block[0], calls.grid[0], calls.grid[1]);
    }
    before = calls.launches;
    cr_assert_eq(launch_w4a16(k, 64, 512, 1004), TILEC_OK, "%s", tilec_kernel_error(k));
    cr_assert(calls.launches - before == 1 && calls.block[0] == 128u && calls.grid[0] == 4u && calls.grid[1] == 16u,
              "M 64: the kernel (block %u grid %u x %u)", calls.block[0], calls.grid[0], calls.grid[1]);
    /* (mode 1: no launch needed a form, so the late forms were never joined and nothing is said) */
    if (mode == 0)
      cr_assert(strstr(tilec_program_log(p), "M 64 < 256 (TILEC_HOIST_OPERAND_MIN_M): the kernel itself runs it"), "%s",
                tilec_program_log(p));
    else cr_assert(!strstr(tilec_program_log(p), "materialize-once"), "%s", tilec_program_log(p));
    tilec_kernel_destroy(k);
    cr_assert_eq(frees - frees0, mode == 0 ? 1u : 0u, "the workspace freed with the handle");
    tilec_program_destroy(p);
    unsetenv("TILEC_HOIST_OPERAND_MIN_M");
  }
}

/* ---- require (docs/language.md "Launch-time checks") ---------------------------------------------- */
/* A launch whose require() is false is refused before the driver sees it: TILEC_ERROR_LAUNCH, no
 * cuLaunchKernel, the diagnostic (kernel, condition with values, message, place, source line, caret)
 * in tilec_kernel_error; refused again with the same shapes (a refusal is not the "same as last time"
 * a launch skips its checks for), a given grid too; a launch that holds goes through. */
Test(fake_driver, require_refuses_a_launch) {
  static const char src[] = "kernel rsum(X: tensor<f32>[R, C], Y: tensor<f32>[R])\n"
                            "    tiles(BC = 1024)\n    grid(R)\n{\n"
                            "    require(C <= BC, \"one tile covers a row\");\n"
                            "    r = program_id(0);\n    store(Y[r], reduce_sum(load(X[r, 0 : BC]), 0));\n}\n";
  tilec_program *p = NULL;
  tilec_kernel *k = NULL;
  cr_assert_eq(tilec_program_create(&p, src, "rsum.tile", NULL), TILEC_OK);
  cr_assert_eq(tilec_kernel_load(p, "rsum", 0, &k), TILEC_OK, "%s", tilec_program_log(p));
  int64_t sx[2] = {3, 1000}, sy[1] = {3};
  DLTensor t[2] = {fake_tensor(0, 2, (DLDataType){kDLFloat, 32, 1}, sx, NULL),
                   fake_tensor(1, 1, (DLDataType){kDLFloat, 32, 1}, sy, NULL)};
  tilec_arg args[2] = {{TILEC_ARG_TENSOR, {.tensor = &t[0]}}, {TILEC_ARG_TENSOR, {.tensor = &t[1]}}};
  int launches = calls.launches;
  cr_assert_eq(tilec_kernel_launch(k, args, 2, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert_eq(calls.launches, launches + 1);
  cr_assert_eq(calls.grid[0], 3u);
  static const char want[] = "rsum.tile:5:5: error: require failed in kernel 'rsum': C <= BC (C = 5000, BC = 1024): "
                             "\"one tile covers a row\"\n    require(C <= BC, \"one tile covers a row\");\n    ^";
  sx[1] = 5000;
  for (int round = 0; round < 2; round++) {
    cr_assert_eq(tilec_kernel_launch(k, args, 2, NULL), TILEC_ERROR_LAUNCH, "round %d", round);
    cr_assert_eq(calls.launches, launches + 1, "a refused launch reached the driver");
    cr_assert_str_eq(tilec_kernel_error(k), want);
  }
  int64_t grid[3] = {3, 1, 1};
  cr_assert_eq(tilec_kernel_launch_grid(k, args, 2, grid, NULL), TILEC_ERROR_LAUNCH);
  cr_assert_eq(calls.launches, launches + 1);
  cr_assert_str_eq(tilec_kernel_error(k), want);
  sx[1] = 1024; /* C = BC holds */
  cr_assert_eq(tilec_kernel_launch(k, args, 2, NULL), TILEC_OK, "%s", tilec_kernel_error(k));
  cr_assert_eq(calls.launches, launches + 2);
  cr_assert_str_eq(tilec_kernel_error(k), "");
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
}
