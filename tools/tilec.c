/* tilec: the command-line compiler and kernel runner, a thin user of the
 * public API (include/tilec.h) and nothing else of tilec.
 *
 *   tilec FILE.tile [-o OUT] [--emit=ast|ir|llvm|ptx|cubin|c] [options]
 *   tilec run FILE.tile [--kernel K] [--size SYM=N]... [--scalar NAME=V]...
 *             [--range NAME=LO,HI]... [--seed S] [--atol A] [--rtol R] [--device|--interp]
 *   tilec tune FILE.tile [--kernel K] [--size SYM=N]... [--scalar NAME=V]...
 *             [--space NAME=V1,V2,...]... [--device N] [--no-cache]
 *
 * Exit status: 0 success, 1 errors in the input (diagnostics on stderr) or a
 * failed comparison, 2 bad usage, 77 `run --device` or `tune` without a GPU. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec.h"
#include "run_tolerance.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_SKIP = 77 };


static const char usage_text[] =
    "usage: tilec FILE.tile [-o OUT] [--emit=ast|ir|llvm|ptx|cubin|c] [options]\n"
    "       tilec run FILE.tile [--kernel K] [-D NAME=VALUE]... [--size SYM=N]...\n"
    "                 [--scalar NAME=V]... [--range NAME=LO,HI]... [--seed S] [--atol A] [--rtol R]\n"
    "                 [--device|--interp]\n"
    "       tilec tune FILE.tile [--kernel K] [-D NAME=VALUE]... [--size SYM=N]...\n"
    "                 [--scalar NAME=V]... [--space NAME=V1,V2,...]... [--device N] [--no-cache]\n"
    "       tilec --version | --help\n"
    "\n"
    "Compile a .tile file.  FILE '-' reads standard input; OUT '-' (or no -o) writes\n"
    "standard output.  Without --emit the extension of OUT decides: .ast, .ir/.tir,\n"
    ".ll, .ptx, .cubin; anything else gives PTX.\n"
    "\n"
    "options:\n"
    "  -o OUT                 output file ('-' = stdout)\n"
    "  --emit=STAGE           ast | ir | llvm | ptx | cubin (cubin needs ptxas) | c (OUT.h + OUT.c:\n"
    "                         a C launcher per kernel, cubin + PTX embedded; docs/aot.md)\n"
    "  -D NAME=VALUE          override tile constant NAME (repeatable)\n"
    "  --arch=sm_XX           target (sm_80, sm_86, sm_89, sm_90, sm_90a; default: the GPU found, else sm_90a)\n"
    "  -O0 .. -O3             optimization level (default -O3)\n"
    "  -g0                    no .loc line information in the PTX\n"
    "  --pipeline=P           force a main-loop pipeline: simple | multistage | cutlass\n"
    "  --warps=N              warps per program of every kernel (1, 2, 4, 8, 16; overrides @warps)\n"
    "  --stages=N             main-loop pipeline stages (1..8; overrides @stages)\n"
    "  --maxnreg=N            registers a thread at most (24..255, `.maxnreg`; overrides @maxnreg)\n"
    "  --fp8-acc=MODE         8-bit dots: promote (default; f32 adds every <= 128 K) | fast (tensor core's)\n"
    "  --split-k=HALF         with --kernel=K (needed): compile K as the partial | reduce half of its split-K form\n"
    "  --hoist-operand=form|pre  with --kernel=K: K's materialize-once form (B a load of `hoisted` [K, N]) or its\n"
    "                         pre-kernel (B's tiles stored into it): lib/hoist_operand.h\n"
    "  --kmajor-b=PARAM       with --kernel=K (needed): compile K's K-major-B form (PARAM [K, N] stored [N, K])\n"
    "  --ws=SCHEDULE          a wgmma GEMM's warp-specialized schedule (sm_90a): off (the TMA ring) | coop\n"
    "                         (a producer warpgroup, the consumers on one tile) | pingpong (the consumer\n"
    "                         warpgroups on alternate tiles of 4 warps); unset: TILEC_WS, then the defaults\n"
    "  --attn-ws=FORM         wgmma attention (sm_90a): off | producer | pingpong | fa3 (FlashAttention-3's\n"
    "                         combination; what a D128 kernel's launch-time form at long S is compiled with)\n"
    "  --attn-sched=N         causal fa3 attention (sm_90a): 1 | 2 its tiles from a global counter (the values of\n"
    "                         TILEC_ATTN_SCHED; a hidden last parameter the JIT launcher fills), O through the last\n"
    "                         ring stage every tile; 0 off\n"
    "  --attn-o-slot-k=N      fa3 attention (sm_90a): 1 O through the last ring stage's K slot where it goes through the\n"
    "                         stage (the values of TILEC_ATTN_O_SLOT_K; 1 is a causal D128 kernel's short launch-time\n"
    "                         form), 0 V's slot\n"
    "  --attn-persist=N       wgmma attention without a producer (sm_90a), not causal: 1 | 2 | 3 persistent (the\n"
    "                         values of TILEC_ATTN_PERSIST; 1 is a D256 kernel's launch-time form at S <= 2048), 0 off\n"
    "  --cluster=MxN          cutlass GEMM on sm_90a: 1x1 (default) | 2x1 | 1x2 CTA clusters sharing B / A by TMA multicast\n"
    "  --tma-fallback=MODE    kernels fed by TMA (sm_90a): entry (the default of .ptx / .cubin files: the TMA form\n"
    "                         as the entry KERNEL and its no-TMA form as a second entry KERNEL__notma with the same\n"
    "                         parameters, launched where a tensor fails the map test; docs/cli.md \"Two entries\")\n"
    "                         | inline (one entry with both paths behind a branch) | form (the TMA entry alone, the\n"
    "                         default of `run`, of libtilec's JIT, whose launcher runs a no-TMA form for tensors a\n"
    "                         map cannot take, and of --emit=c, whose launchers embed that no-TMA form beside it)\n"
    "                         | notma (no TMA at all: each kernel its no-TMA form alone)\n"
    "  --kernel=NAME          compile only this kernel of the file (one .entry)\n"
    "  --entry-name=NAME      PTX .entry name (single-kernel files, or with --kernel)\n"
    "  --print-after=PASS     print the IR after PASS to stderr\n"
    "  --print-after-all      print the IR after every pass\n"
    "  --disable-pass=P[,P]   skip these passes of the pipeline (e.g. swpipe)\n"
    "  --time-passes          per-stage and per-pass milliseconds on stderr\n"
    "  --verify-each          run the IR verifier after every pass\n"
    "  --explain              say why each pipeline/alignment decision was taken, and\n"
    "                         per kernel threads, registers, spills, shared memory\n"
    "  --max-errors=N         stop after N errors (0 = no limit)\n"
    "  --version, --help\n"
    "\n"
    "run: make random inputs for every tensor parameter (zeros for a @zeroed one;\n"
    "floats in [-1, 1), integers in [-8, 8], --range NAME=LO,HI for an index or a\n"
    "positive tensor; sizes from --size for shape symbols, constants from the kernel), run the CPU\n"
    "interpreter, and with\n"
    "--device also the kernel on GPU 0, comparing every written tensor (max abs/rel\n"
    "error, PASS/FAIL per tensor; exit 1 on FAIL, 77 when no GPU is present).\n"
    "\n"
    "tune: the same random inputs on GPU N (default 0); every combination of the\n"
    "--space values (tile constants, warps, stages) is compiled, launched and timed\n"
    "(@zeroed tensors zeroed before every launch, outside the timed interval);\n"
    "prints one line per configuration and the winner (cached per kernel, shape\n"
    "class and device; see docs/autotune.md).  Exit 77 when no GPU is present.\n"
    "\n"
    "exit status: 0 ok, 1 errors in the input or FAIL, 2 bad usage, 77 skipped.\n";

static void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "tilec: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(run 'tilec --help' for usage)\n");
}

/* ---- shared option parsing ------------------------------------------------------- */
typedef struct cli {
  const char *input, *output, *emit, *kernel;
  tilec_options *opts;
  bool run_mode, device, interp;
  /* tune: --space NAME=v1,v2,... and --device N */
  bool tune_mode, no_cache;
  int tune_device, nspace;
  char space_name[16][64];
  int64_t space_values[16][64];
  int space_nvalues[16];
  uint64_t seed;
  /* run: --atol / --rtol replace the per-dtype tolerances (< 0: not given) */
  double atol, rtol;
  /* run: --size SYM=N and --scalar NAME=V */
  int nsizes, nscalars;
  const char *size_name[64], *scalar_name[64];
  int64_t size_value[64];
  double scalar_value[64];
  /* -D NAME=V given so far (a second value for a name is a warning) */
  int ndefs;
  char def_name[64][128];
  int64_t def_value[64];
  /* run: --range NAME=LO,HI (a tensor's random data drawn from [LO, HI]) */
  int nranges;
  const char *range_name[16];
  double range_lo[16], range_hi[16];
} cli;

static bool parse_i64(const char *s, int64_t *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 0);
  if (errno || *end) return false;
  *out = v;
  return true;
}

static bool parse_f64(const char *s, double *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end) return false;
  *out = v;
  return true;
}

/* "NAME=VALUE" -> name copy in buf, value text. */
static bool split_assign(const char *s, char *name, size_t n, const char **value) {
  const char *eq = strchr(s, '=');
  if (!eq || eq == s || (size_t)(eq - s) >= n) return false;
  memcpy(name, s, (size_t)(eq - s));
  name[eq - s] = 0;
  *value = eq + 1;
  return true;
}

/* Value of "--flag=V" or "--flag V" (advancing *i); NULL when arg is not flag. */
static const char *flag_value(int argc, char **argv, int *i, const char *flag, bool *missing) {
  size_t n = strlen(flag);
  const char *a = argv[*i];
  if (strncmp(a, flag, n) != 0) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n] != 0) return NULL;
  if (*i + 1 >= argc) {
    *missing = true;
    return NULL;
  }
  return argv[++*i];
}

static bool opt_ok(tilec_status st, const char *what, const char *value) {
  if (st == TILEC_OK) return true;
  /* the values the option takes (the library's table: tilec_options_takes), where the key is one of it */
  const char *takes = strncmp(what, "--", 2) == 0 ? tilec_options_takes(what + 2) : NULL;
  char msg[768];
  snprintf(msg, sizeof msg, "invalid %s '%s'%s%s%s", what, value ? value : "", takes ? " (it takes " : "",
           takes ? takes : "", takes ? ")" : "");
  usage_error("%s", msg);
  return false;
}

/* Returns -1 when parsed, else the exit status to leave with. */
static int parse_args(int argc, char **argv, cli *c) {
  int i = 1;
  if (argc > 1 && strcmp(argv[1], "run") == 0) {
    c->run_mode = true;
    i = 2;
  } else if (argc > 1 && strcmp(argv[1], "tune") == 0) {
    c->run_mode = c->tune_mode = true; /* tune takes run's input options too */
    i = 2;
  }
  static char names[128][128];
  int nnames = 0;
  bool tma_given = false;
  for (; i < argc; i++) {
    const char *a = argv[i], *v;
    bool missing = false;
    char name[128];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_text, stdout);
      return 0;
    }
    if (!strcmp(a, "--version")) {
      printf("%s\n", tilec_version_string());
      return 0;
    }
    if (!strcmp(a, "-o")) {
      if (i + 1 >= argc) return usage_error("%s needs an argument", a), EXIT_USAGE;
      c->output = argv[++i];
    } else if ((v = flag_value(argc, argv, &i, "--emit", &missing))) {
      c->emit = v;
    } else if (!strncmp(a, "-D", 2)) {
      const char *def = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
      int64_t value;
      if (!def || !split_assign(def, name, sizeof name, &v) || !parse_i64(v, &value))
        return usage_error("-D wants NAME=INTEGER, got '%s'", def ? def : ""), EXIT_USAGE;
      if (!opt_ok(tilec_options_define(c->opts, name, value), "-D name", name)) return EXIT_USAGE;
      /* (the last of two -D of one name wins, as with a C compiler: said, since a script that appends its own
       * -D to a user's meets it silently otherwise) */
      int seen = -1;
      for (int d = 0; d < c->ndefs; d++)
        if (!strcmp(c->def_name[d], name)) seen = d;
      if (seen >= 0 && c->def_value[seen] != value)
        fprintf(stderr, "tilec: warning: -D %s given twice (%lld, then %lld): the last is used\n", name,
                (long long)c->def_value[seen], (long long)value);
      if (seen >= 0) c->def_value[seen] = value;
      else if (c->ndefs < 64) {
        snprintf(c->def_name[c->ndefs], sizeof c->def_name[0], "%s", name);
        c->def_value[c->ndefs++] = value;
      }
    } else if ((v = flag_value(argc, argv, &i, "--arch", &missing))) {
      if (!opt_ok(tilec_options_set_arch(c->opts, v), "--arch", v)) return EXIT_USAGE;
    } else if (!strncmp(a, "-O", 2) && a[2] >= '0' && a[2] <= '3' && !a[3]) {
      tilec_options_set_opt_level(c->opts, a[2] - '0');
    } else if (!strcmp(a, "-g0")) {
      tilec_options_set_line_info(c->opts, 0);
    } else if (!strcmp(a, "-g")) {
      tilec_options_set_line_info(c->opts, 1);
    } else if ((v = flag_value(argc, argv, &i, "--pipeline", &missing))) {
      if (!opt_ok(tilec_options_set_pipeline(c->opts, v), "--pipeline", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--maxnreg", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "maxnreg", v), "--maxnreg", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--warps", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "warps", v), "--warps", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--stages", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "stages", v), "--stages", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--cluster", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "cluster", v), "--cluster", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--split-k", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "split-k", v), "--split-k", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--tma-fallback", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "tma-fallback", v), "--tma-fallback", v)) return EXIT_USAGE;
      tma_given = true;
    } else if ((v = flag_value(argc, argv, &i, "--ws", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "ws", v), "--ws", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--attn-ws", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "attn-ws", v), "--attn-ws", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--attn-sched", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "attn-sched", v), "--attn-sched", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--attn-o-slot-k", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "attn-o-slot-k", v), "--attn-o-slot-k", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--attn-persist", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "attn-persist", v), "--attn-persist", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--hoist-operand", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "hoist-operand", v), "--hoist-operand", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--kmajor-b", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "kmajor-b", v), "--kmajor-b", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--fp8-acc", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "fp8-acc", v), "--fp8-acc", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--entry-name", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "entry-name", v), "--entry-name", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--print-after", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "print-after", v), "--print-after", v)) return EXIT_USAGE;
    } else if ((v = flag_value(argc, argv, &i, "--disable-pass", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "disable-pass", v), "--disable-pass", v)) return EXIT_USAGE;
    } else if (!strcmp(a, "--print-after-all")) {
      tilec_options_set(c->opts, "print-after", "all");
    } else if (!strcmp(a, "--time-passes")) {
      tilec_options_set(c->opts, "time-passes", "1");
    } else if (!strcmp(a, "--verify-each")) {
      tilec_options_set(c->opts, "verify-each", "1");
    } else if (!strcmp(a, "--explain")) {
      tilec_options_set(c->opts, "explain", "1");
    } else if ((v = flag_value(argc, argv, &i, "--max-errors", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "max-errors", v), "--max-errors", v)) return EXIT_USAGE;
    } else if (c->run_mode && (v = flag_value(argc, argv, &i, "--kernel", &missing))) {
      c->kernel = v;
    } else if ((v = flag_value(argc, argv, &i, "--kernel", &missing))) {
      if (!opt_ok(tilec_options_set(c->opts, "kernel", v), "--kernel", v)) return EXIT_USAGE;
    } else if (c->run_mode && (v = flag_value(argc, argv, &i, "--seed", &missing))) {
      int64_t s;
      if (!parse_i64(v, &s)) return usage_error("--seed wants an integer, got '%s'", v), EXIT_USAGE;
      c->seed = (uint64_t)s;
    } else if (c->run_mode && ((v = flag_value(argc, argv, &i, "--atol", &missing)) ||
                               (v = flag_value(argc, argv, &i, "--rtol", &missing)))) {
      double x;
      bool is_atol = !strncmp(a, "--atol", 6);
      if (!parse_f64(v, &x) || !(x >= 0))
        return usage_error(is_atol ? "--atol wants a number >= 0, got '%s'" : "--rtol wants a number >= 0, got '%s'", v),
               EXIT_USAGE;
      if (is_atol) c->atol = x;
      else c->rtol = x;
    } else if (c->run_mode && (v = flag_value(argc, argv, &i, "--size", &missing))) {
      const char *val;
      int64_t n;
      if (!split_assign(v, name, sizeof name, &val) || !parse_i64(val, &n) || n < 0 || c->nsizes == 64 ||
          nnames == 128)
        return usage_error("--size wants SYM=N (N >= 0), got '%s'", v), EXIT_USAGE;
      snprintf(names[nnames], sizeof names[0], "%s", name);
      c->size_name[c->nsizes] = names[nnames++];
      c->size_value[c->nsizes++] = n;
    } else if (c->run_mode && (v = flag_value(argc, argv, &i, "--scalar", &missing))) {
      const char *val;
      double x;
      if (!split_assign(v, name, sizeof name, &val) || !parse_f64(val, &x) || c->nscalars == 64 ||
          nnames == 128)
        return usage_error("--scalar wants NAME=NUMBER, got '%s'", v), EXIT_USAGE;
      snprintf(names[nnames], sizeof names[0], "%s", name);
      c->scalar_name[c->nscalars] = names[nnames++];
      c->scalar_value[c->nscalars++] = x;
    } else if (c->run_mode && (v = flag_value(argc, argv, &i, "--range", &missing))) {
      const char *val, *comma;
      double lo, hi;
      char lo_text[64];
      if (!split_assign(v, name, sizeof name, &val) || !(comma = strchr(val, ',')) ||
          (size_t)(comma - val) >= sizeof lo_text || c->nranges == 16 || nnames == 128)
        return usage_error("--range wants NAME=LO,HI, got '%s'", v), EXIT_USAGE;
      memcpy(lo_text, val, (size_t)(comma - val));
      lo_text[comma - val] = 0;
      if (!parse_f64(lo_text, &lo) || !parse_f64(comma + 1, &hi) || !(lo <= hi))
        return usage_error("--range wants NAME=LO,HI with LO <= HI, got '%s'", v), EXIT_USAGE;
      snprintf(names[nnames], sizeof names[0], "%s", name);
      c->range_name[c->nranges] = names[nnames++];
      c->range_lo[c->nranges] = lo;
      c->range_hi[c->nranges++] = hi;
    } else if (c->tune_mode && (v = flag_value(argc, argv, &i, "--space", &missing))) {
      /* NAME=v1,v2,... */
      const char *list;
      if (!split_assign(v, name, sizeof name, &list) || c->nspace == 16 || strlen(name) >= 64)
        return usage_error("--space wants NAME=V1,V2,..., got '%s'", v), EXIT_USAGE;
      int k = c->nspace++;
      snprintf(c->space_name[k], sizeof c->space_name[k], "%s", name);
      char item[64];
      for (const char *at = list; at;) {
        const char *comma = strchr(at, ',');
        size_t len = comma ? (size_t)(comma - at) : strlen(at);
        int64_t x;
        if (len == 0 || len >= sizeof item || c->space_nvalues[k] == 64)
          return usage_error("--space wants NAME=V1,V2,... (at most 64 integers), got '%s'", v), EXIT_USAGE;
        memcpy(item, at, len);
        item[len] = 0;
        if (!parse_i64(item, &x)) return usage_error("--space: '%s' is not an integer", item), EXIT_USAGE;
        c->space_values[k][c->space_nvalues[k]++] = x;
        at = comma ? comma + 1 : NULL;
      }
    } else if (c->tune_mode && (v = flag_value(argc, argv, &i, "--device", &missing))) {
      int64_t d;
      if (!parse_i64(v, &d) || d < 0 || d > 1023) return usage_error("--device wants a GPU number, got '%s'", v), EXIT_USAGE;
      c->tune_device = (int)d;
    } else if (c->tune_mode && !strcmp(a, "--no-cache")) {
      c->no_cache = true;
    } else if (c->run_mode && !c->tune_mode && !strcmp(a, "--device")) {
      c->device = true;
    } else if (c->run_mode && !c->tune_mode && !strcmp(a, "--interp")) {
      c->interp = true;
    } else if (a[0] == '-' && a[1] != 0) {
      return usage_error(missing ? "%s needs an argument" : "unknown option '%s'", a), EXIT_USAGE;
    } else if (!c->input) {
      c->input = a;
    } else {
      return usage_error("more than one input file ('%s')", a), EXIT_USAGE;
    }
    if (missing) return usage_error("%s needs an argument", a), EXIT_USAGE;
  }
  /* The PTX and cubin files the compiler writes are self-contained: a TMA-fed kernel's no-TMA
   * form is a second entry of the file, KERNEL__notma, which whoever loads the file launches for
   * tensors a map cannot take (docs/cli.md "Two entries"; tilec_kernel_load_ptx does).  `tilec run`
   * / `tune` launch through libtilec, and --emit=c's launchers embed each TMA form's no-TMA form
   * beside it (docs/aot.md "Two images"): both default to the TMA form (docs/cli.md --tma-fallback). */
  bool emit_c = c->emit && !strcmp(c->emit, "c");
  if (!tma_given && !c->run_mode && !emit_c) tilec_options_set(c->opts, "tma-fallback", "entry");
  if (!c->input) return usage_error("%s", "no input file"), EXIT_USAGE;
  if (c->tune_mode && !strcmp(c->input, "-")) return usage_error("%s", "tune reads a file, not standard input"), EXIT_USAGE;
  if (c->device && c->interp) return usage_error("%s", "--device and --interp exclude each other"), EXIT_USAGE;
  return -1;
}

/* ---- program creation and compile ------------------------------------------------- */
static char *read_stdin(size_t *len) {
  size_t cap = 65536, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t r = fread(buf + n, 1, cap - n, stdin);
    n += r;
    if (r == 0) break;
    if (n == cap) {
      if (cap > ((size_t)32 << 20)) break; /* the library rejects it as too large */
      char *g = realloc(buf, cap * 2 + 1);
      if (!g) {
        free(buf);
        return NULL;
      }
      buf = g;
      cap *= 2;
    }
  }
  if (buf) buf[n] = 0;
  *len = n;
  return buf;
}

/* Create the program, printing why not; NULL + *exit_code on failure. */
static tilec_program *open_program(const cli *c, int *exit_code) {
  tilec_program *p = NULL;
  tilec_status st;
  if (!strcmp(c->input, "-")) {
    size_t len = 0;
    char *text = read_stdin(&len);
    if (!text) {
      fprintf(stderr, "tilec: error: cannot read standard input\n");
      *exit_code = EXIT_INPUT;
      return NULL;
    }
    if (strlen(text) != len) {
      /* Let the library report the NUL byte's place: keep the prefix, then flag it. */
      fprintf(stderr, "<stdin>: error: source contains a NUL byte\n");
      free(text);
      *exit_code = EXIT_INPUT;
      return NULL;
    }
    st = tilec_program_create(&p, text, "<stdin>", c->opts);
    free(text);
  } else {
    st = tilec_program_create_from_file(&p, c->input, c->opts);
  }
  if (st == TILEC_OK) return p;
  if (st == TILEC_ERROR_IO) {
    FILE *f = fopen(c->input, "rb");
    const char *why = f ? "is a directory or unreadable" : strerror(errno);
    if (f) fclose(f);
    fprintf(stderr, "tilec: error: cannot read '%s': %s\n", c->input, why);
  } else {
    fprintf(stderr, "tilec: error: %s\n", tilec_status_string(st));
  }
  *exit_code = st == TILEC_ERROR_USAGE ? EXIT_USAGE : EXIT_INPUT;
  return NULL;
}

static int exit_code_of(tilec_status st) {
  if (st == TILEC_OK) return 0;
  return st == TILEC_ERROR_USAGE ? EXIT_USAGE : EXIT_INPUT;
}

/* The log (diagnostics, timings, dumps) to stderr, then for a failed `st` the count of its errors ("1 error
 * generated.") or, where no diagnostic says what failed, the status itself. */
static void report(tilec_program *p, tilec_status st) {
  fputs(tilec_program_log(p), stderr);
  if (st == TILEC_OK) return;
  int errors = 0;
  for (int i = 0; i < tilec_program_num_diagnostics(p); i++) {
    tilec_diagnostic d;
    if (tilec_program_diagnostic(p, i, &d) == TILEC_OK && d.severity == TILEC_SEV_ERROR) errors++;
  }
  if (errors) fprintf(stderr, "%d error%s generated.\n", errors, errors == 1 ? "" : "s");
  else fprintf(stderr, "tilec: error: %s\n", tilec_status_string(st));
}

/* Compile to `stage`, reported as above. */
static tilec_status compile_to(tilec_program *p, tilec_stage stage) {
  tilec_status st = tilec_program_compile(p, stage);
  report(p, st);
  return st;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

static int stage_of(const char *emit, const char *output, tilec_stage *out) {
  static const char *names[] = {"ast", "ir", "llvm", "ptx", "cubin"};
  if (emit) {
    for (int i = 0; i < 5; i++)
      if (!strcmp(emit, names[i])) {
        *out = (tilec_stage)i;
        return 0;
      }
    usage_error("unknown --emit stage '%s' (ast, ir, llvm, ptx, cubin, c)", emit);
    return EXIT_USAGE;
  }
  *out = TILEC_STAGE_PTX;
  if (!output) return 0;
  if (ends_with(output, ".ast")) *out = TILEC_STAGE_AST;
  else if (ends_with(output, ".ir") || ends_with(output, ".tir")) *out = TILEC_STAGE_IR;
  else if (ends_with(output, ".ll")) *out = TILEC_STAGE_LLVM;
  else if (ends_with(output, ".cubin")) *out = TILEC_STAGE_CUBIN;
  return 0;
}

/* --emit=c: OUT.h and OUT.c (OUT without a .c/.h extension); the symbol prefix
 * is OUT's base name made a C identifier. */
static int emit_c_main(cli *c) {
  if (!c->output || !strcmp(c->output, "-"))
    return usage_error("%s", "--emit=c writes two files: give -o NAME (NAME.h and NAME.c)"), EXIT_USAGE;
  char base[4096];
  snprintf(base, sizeof base, "%s", c->output);
  size_t bl = strlen(base);
  if (bl > 2 && (ends_with(base, ".c") || ends_with(base, ".h"))) base[bl - 2] = 0;
  const char *slash = strrchr(base, '/');
  char name[101];
  size_t n = 0;
  for (const char *q = slash ? slash + 1 : base; *q && n < sizeof name - 1; q++) {
    char ch = *q;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (n && ch >= '0' && ch <= '9');
    if (!n && ch >= '0' && ch <= '9') name[n++] = '_';
    if (n < sizeof name - 1) name[n++] = ok || (ch >= '0' && ch <= '9') ? ch : '_';
  }
  name[n] = 0;
  if (!n) return usage_error("--emit=c: no file name in '%s'", c->output), EXIT_USAGE;
  int rc = 0;
  tilec_program *p = open_program(c, &rc);
  if (!p) return rc;
  char *h = NULL, *src = NULL;
  tilec_status st = tilec_program_emit_c(p, name, &h, &src);
  report(p, st);
  if (st != TILEC_OK) {
    tilec_program_destroy(p);
    return exit_code_of(st);
  }
  char path[4200];
  const char *texts[2] = {h, src}, *exts[2] = {".h", ".c"};
  for (int i = 0; i < 2 && !rc; i++) {
    snprintf(path, sizeof path, "%s%s", base, exts[i]);
    FILE *f = fopen(path, "wb");
    size_t len = strlen(texts[i]);
    if (!f || fwrite(texts[i], 1, len, f) != len || fclose(f) != 0) {
      fprintf(stderr, "tilec: error: cannot write '%s': %s\n", path, strerror(errno));
      rc = EXIT_INPUT;
    }
  }
  tilec_free(h);
  tilec_free(src);
  tilec_program_destroy(p);
  return rc;
}

static int compile_main(cli *c) {
  if (c->emit && !strcmp(c->emit, "c")) return emit_c_main(c);
  tilec_stage stage;
  int rc = stage_of(c->emit, c->output, &stage);
  if (rc) return rc;
  tilec_program *p = open_program(c, &rc);
  if (!p) return rc;
  tilec_status st = compile_to(p, stage);
  if (st != TILEC_OK) {
    tilec_program_destroy(p);
    return exit_code_of(st);
  }
  const void *data;
  size_t size;
  tilec_program_get_binary(p, stage, &data, &size);
  bool to_stdout = !c->output || !strcmp(c->output, "-");
  FILE *f = to_stdout ? stdout : fopen(c->output, "wb");
  rc = 0;
  if (!f || fwrite(data, 1, size, f) != size || (to_stdout ? fflush(f) : fclose(f)) != 0) {
    fprintf(stderr, "tilec: error: cannot write '%s': %s\n", to_stdout ? "<stdout>" : c->output, strerror(errno));
    rc = EXIT_INPUT;
  }
  tilec_program_destroy(p);
  return rc;
}

/* ---- tilec run: random inputs, the interpreter, the GPU ----------------------------- */
static uint64_t rng_state;
static uint64_t rng_next(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double rng_uniform(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0); }

static int elem_bytes(const char *dtype) {
  if (!strcmp(dtype, "f32") || !strcmp(dtype, "i32")) return 4;
  if (!strcmp(dtype, "i64")) return 8;
  if (!strcmp(dtype, "f16") || !strcmp(dtype, "bf16") || !strcmp(dtype, "i16")) return 2;
  return 1; /* i1 i8 u8 f8e4m3 f8e5m2 */
}

static float bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Value of a float of `mant` mantissa bits and exponent bias `bias` (no
 * infinities: used for fp8 e4m3fn where S.1111.111 is NaN, and e5m2). */
static double small_float_value(unsigned bits, int exp_bits, int mant_bits, int bias, bool e4m3fn) {
  unsigned sign = bits >> (exp_bits + mant_bits) & 1;
  unsigned e = bits >> mant_bits & ((1u << exp_bits) - 1);
  unsigned m = bits & ((1u << mant_bits) - 1);
  double v;
  if (e4m3fn && e == 15 && m == 7) return NAN;
  if (!e4m3fn && e == (1u << exp_bits) - 1) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - bias - mant_bits);
  else v = ldexp((double)(m | (1u << mant_bits)), (int)e - bias - mant_bits);
  return sign ? -v : v;
}

static double load_elem(const char *dtype, const unsigned char *p) {
  if (!strcmp(dtype, "f32")) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  if (!strcmp(dtype, "bf16")) {
    uint16_t h;
    memcpy(&h, p, 2);
    return bits_to_f32((uint32_t)h << 16);
  }
  if (!strcmp(dtype, "f16")) {
    uint16_t h;
    memcpy(&h, p, 2);
    return small_float_value(h, 5, 10, 15, false);
  }
  if (!strcmp(dtype, "f8e4m3")) return small_float_value(*p, 4, 3, 7, true);
  if (!strcmp(dtype, "f8e5m2")) return small_float_value(*p, 5, 2, 15, false);
  if (!strcmp(dtype, "i64")) {
    int64_t v;
    memcpy(&v, p, 8);
    return (double)v;
  }
  if (!strcmp(dtype, "i32")) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  if (!strcmp(dtype, "i16")) {
    int16_t v;
    memcpy(&v, p, 2);
    return v;
  }
  if (!strcmp(dtype, "i8")) return (int8_t)*p;
  return *p; /* u8, i1 */
}

/* A random, nonzero-ish element: floats uniform in [-1, 1) rounded to the
 * type (fp8 codes drawn directly from a safe exponent range), small ints. */
static void random_elem(const char *dtype, unsigned char *p) {
  double x = rng_uniform() * 2.0 - 1.0;
  if (!strcmp(dtype, "f32")) {
    float f = (float)x;
    memcpy(p, &f, 4);
  } else if (!strcmp(dtype, "bf16")) {
    uint32_t u = f32_to_bits((float)x);
    uint16_t h = (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16); /* round to nearest even */
    memcpy(p, &h, 2);
  } else if (!strcmp(dtype, "f16")) {
    /* |x| in [2^-11, 1): sign, exponent 4..14, random 10-bit mantissa. */
    uint16_t h = (uint16_t)((rng_next() & 1) << 15 | (4 + rng_next() % 11) << 10 | (rng_next() & 0x3FF));
    memcpy(p, &h, 2);
  } else if (!strcmp(dtype, "f8e4m3")) {
    *p = (unsigned char)((rng_next() & 1) << 7 | (4 + rng_next() % 5) << 3 | (rng_next() & 7)); /* 2^-3..2^1 */
  } else if (!strcmp(dtype, "f8e5m2")) {
    *p = (unsigned char)((rng_next() & 1) << 7 | (12 + rng_next() % 5) << 2 | (rng_next() & 3));
  } else if (!strcmp(dtype, "i1")) {
    *p = (unsigned char)(rng_next() & 1);
  } else {
    int64_t v = (int64_t)(rng_next() % 17) - 8;
    if (!strcmp(dtype, "u8")) v += 8;
    int n = elem_bytes(dtype);
    if (n == 1) *p = (unsigned char)(int8_t)v;
    else if (n == 2) { int16_t s = (int16_t)v; memcpy(p, &s, 2); }
    else if (n == 4) { int32_t s = (int32_t)v; memcpy(p, &s, 4); }
    else memcpy(p, &v, 8);
  }
}

/* --range NAME=LO,HI's element: integers uniform in [ceil(LO), floor(HI)], f32 / bf16 uniform in [LO, HI) rounded
 * to the type (range_fits said the type takes the range). */
static void ranged_elem(const char *dtype, double lo, double hi, unsigned char *p) {
  if (!strcmp(dtype, "f32") || !strcmp(dtype, "bf16")) {
    float f = (float)(lo + rng_uniform() * (hi - lo));
    if (dtype[0] == 'f') memcpy(p, &f, 4);
    else {
      uint32_t u = f32_to_bits(f);
      uint16_t h = (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
      memcpy(p, &h, 2);
    }
    return;
  }
  double a = ceil(lo), b = floor(hi); /* (range_fits: a <= b, both within the type) */
  int n = elem_bytes(dtype);
  double w = b - a;
  uint64_t span = w >= 18446744073709551615.0 ? 0 : (uint64_t)w + 1; /* (0: the whole of i64 / u64) */
  /* (in u64, wrapping: a u64 range above 2^63 has no int64 start) */
  uint64_t base = a < 0 ? (uint64_t)(int64_t)a : (uint64_t)a;
  int64_t v = (int64_t)(base + (span ? rng_next() % span : rng_next()));
  if (n == 1) *p = (unsigned char)v;
  else if (n == 2) { int16_t x = (int16_t)v; memcpy(p, &x, 2); }
  else if (n == 4) { int32_t x = (int32_t)v; memcpy(p, &x, 4); }
  else memcpy(p, &v, 8);
}

/* A --range the tensor's type takes: f32 / bf16, or an integer type holding an integer inside it. */
static bool range_fits(const char *dtype, double lo, double hi) {
  if (!strcmp(dtype, "f32") || !strcmp(dtype, "bf16")) return true;
  if (dtype[0] == 'f' || !strcmp(dtype, "i1") || ceil(lo) > floor(hi)) return false;
  int bits = elem_bytes(dtype) * 8;
  bool u = dtype[0] == 'u';
  double min = u ? 0 : -ldexp(1, bits - 1), max = u ? ldexp(1, bits) - 1 : ldexp(1, bits - 1) - 1;
  return ceil(lo) >= min && floor(hi) <= max;
}

typedef struct run_param {
  tilec_param_info info;
  int64_t shape[4];
  size_t numel, bytes;
  unsigned char *host;   /* the random input, then the interpreter's result */
  unsigned char *device_result;
  DLTensor t;
  unsigned long long dptr;
} run_param;

/* The few driver entry points `run --device` needs (the same primary context
 * as the library's runtime).  Loaded with dlopen: no CUDA at build time. */
typedef struct cuda_fns {
  void *lib;
  int (*cuInit)(unsigned);
  int (*cuDeviceGetCount)(int *);
  int (*cuDeviceGet)(int *, int);
  int (*cuDevicePrimaryCtxRetain)(void **, int);
  int (*cuCtxSetCurrent)(void *);
  int (*cuMemAlloc)(unsigned long long *, size_t);
  int (*cuMemFree)(unsigned long long);
  int (*cuMemcpyHtoD)(unsigned long long, const void *, size_t);
  int (*cuMemcpyDtoH)(void *, unsigned long long, size_t);
  int (*cuCtxSynchronize)(void);
} cuda_fns;

/* 0 when a GPU is ready; else prints why (`tool`: "run" or "tune", what the lines name) and returns the exit status. */
static int cuda_open(cuda_fns *cu, int device, const char *tool) {
  const char *libname = getenv("TILEC_LIBCUDA") ? getenv("TILEC_LIBCUDA") : "libcuda.so.1";
  const char *needs = strcmp(tool, "tune") ? "--device needs a GPU" : "tuning times kernels on a GPU";
  cu->lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
  if (!cu->lib) {
    const char *why = dlerror(); /* (it names the library: "libcuda.so.1: cannot open shared object file: ...") */
    fprintf(stderr, "tilec %s: no NVIDIA driver (%s): %s; skipped\n", tool, why ? why : libname, needs);
    return EXIT_SKIP;
  }
#define LOAD(field, sym)                                                             \
  do {                                                                               \
    *(void **)&cu->field = dlsym(cu->lib, sym);                                      \
    if (!cu->field) {                                                                \
      fprintf(stderr, "tilec %s: error: %s lacks %s\n", tool, libname, sym);         \
      return EXIT_INPUT;                                                             \
    }                                                                                \
  } while (0)
  LOAD(cuInit, "cuInit");
  LOAD(cuDeviceGetCount, "cuDeviceGetCount");
  LOAD(cuDeviceGet, "cuDeviceGet");
  LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  LOAD(cuCtxSetCurrent, "cuCtxSetCurrent");
  LOAD(cuMemAlloc, "cuMemAlloc_v2");
  LOAD(cuMemFree, "cuMemFree_v2");
  LOAD(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  LOAD(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  LOAD(cuCtxSynchronize, "cuCtxSynchronize");
#undef LOAD
  int count = 0, dev = 0;
  void *ctx = NULL;
  if (cu->cuInit(0) != 0 || cu->cuDeviceGetCount(&count) != 0 || count == 0) {
    fprintf(stderr, "tilec %s: no CUDA device found: %s; skipped\n", tool, needs);
    return EXIT_SKIP;
  }
  if (device >= count) {
    fprintf(stderr, "tilec: no GPU %d (%d present); skipped\n", device, count);
    return EXIT_SKIP;
  }
  if (cu->cuDeviceGet(&dev, device) || cu->cuDevicePrimaryCtxRetain(&ctx, dev) || cu->cuCtxSetCurrent(ctx)) {
    fprintf(stderr, "tilec %s: error: cannot make a context on GPU %d\n", tool, device);
    return EXIT_INPUT;
  }
  return 0;
}

static void describe_shape(const run_param *rp, char *buf, size_t n) {
  size_t used = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < rp->info.rank && used < n; d++)
    used += (size_t)snprintf(buf + used, n - used, "%s%lld", d ? "," : "", (long long)rp->shape[d]);
  if (used < n) snprintf(buf + used, n - used, "]");
}

/* Compare the device result with the interpreter's; prints one line (two where the kernel's 8-bit
 * float dot widened the tolerance: f8_dot, run_tolerance.h). */
static bool compare_tensor(const run_param *rp, run_f8_dot f8_dot, double atol_opt, double rtol_opt) {
  double max_abs = 0, max_rel = 0, max_ref = 0;
  size_t bad = 0, nbytes = (size_t)elem_bytes(rp->info.dtype);
  for (size_t i = 0; i < rp->numel; i++) {
    double want = fabs(load_elem(rp->info.dtype, rp->host + i * nbytes));
    if (isfinite(want) && want > max_ref) max_ref = want;
  }
  run_tolerance tol = run_tolerance_of(rp->info.dtype, f8_dot, max_ref, atol_opt, rtol_opt);
  double atol = tol.atol, rtol = tol.rtol;
  if (tol.of_max > 0)
    printf("%s: 8-bit float dot: atol widened to %.3g (2^%d of max |reference| %.4g: the tensor cores sum "
           "fp8 products with ~13 bits%s; --atol overrides)\n", rp->info.name, atol, (int)lround(log2(tol.of_max)),
           max_ref, f8_dot == RUN_F8_DOT_FAST ? ", over all of K with --fp8-acc=fast" : "");
  for (size_t i = 0; i < rp->numel; i++) {
    double want = load_elem(rp->info.dtype, rp->host + i * nbytes);
    double got = load_elem(rp->info.dtype, rp->device_result + i * nbytes);
    if (isnan(want) && isnan(got)) continue;
    double err = fabs(got - want);
    if (isnan(err)) err = INFINITY;
    double rel = err / fmax(fabs(want), 1e-30);
    if (err > max_abs) max_abs = err;
    if (rel > max_rel && fabs(want) > atol) max_rel = rel;
    if (!(err <= atol + rtol * fabs(want))) bad++;
  }
  char shape[96];
  describe_shape(rp, shape, sizeof shape);
  printf("%s %s %s: max abs err %.3g, max rel err %.3g (atol %.3g, rtol %.3g): %s",
         rp->info.name, rp->info.dtype, shape, max_abs, max_rel, atol, rtol, bad ? "FAIL" : "PASS");
  if (bad) printf(" (%zu of %zu elements out of tolerance)", bad, rp->numel);
  printf("\n");
  return bad == 0;
}

static int lookup_size(const cli *c, const char *sym, int64_t *out) {
  for (int i = c->nsizes - 1; i >= 0; i--)
    if (!strcmp(c->size_name[i], sym)) {
      *out = c->size_value[i];
      return 1;
    }
  return 0;
}

/* tilec tune: progress lines on stdout. */
static int print_progress(const tilec_tune_config *cfg, void *user) {
  (void)user;
  if (cfg->skip_reason)
    printf("[%d/%d] %s: skipped: %s\n", cfg->index + 1, cfg->count, cfg->desc, cfg->skip_reason);
  else
    printf("[%d/%d] %s: %.4f ms (median of %d)\n", cfg->index + 1, cfg->count, cfg->desc, cfg->ms, cfg->runs);
  fflush(stdout);
  return 0;
}

/* Tune on GPU c->tune_device with the random inputs of rps copied there. */
static int tune_with(const cli *c, const char *kname, run_param *rps, tilec_arg *args, int np, cuda_fns *cu) {
  tilec_tune_param params[16];
  for (int k = 0; k < c->nspace; k++)
    params[k] = (tilec_tune_param){c->space_name[k], c->space_values[k], c->space_nvalues[k]};
  tilec_tune_space space = {params, c->nspace, 0, c->no_cache};
  int rc = cuda_open(cu, c->tune_device, "tune");
  if (rc == EXIT_SKIP) {
    /* no GPU: a space wrong in itself (a misspelt constant) is still an error, said first (the library judges it
     * without a device) */
    tilec_tune_result r;
    if (tilec_autotune(c->input, 1, c->opts, kname, &space, NULL, 0, c->tune_device, NULL, NULL, &r) ==
        TILEC_ERROR_USAGE) {
      fputs(r.log, stderr);
      return EXIT_USAGE;
    }
  }
  if (rc != 0) return rc;
  for (int i = 0; i < np; i++) {
    run_param *rp = &rps[i];
    if (!rp->info.is_tensor) continue;
    if (cu->cuMemAlloc(&rp->dptr, rp->bytes ? rp->bytes : 1) || cu->cuMemcpyHtoD(rp->dptr, rp->host, rp->bytes)) {
      fprintf(stderr, "tilec tune: error: cannot place '%s' on the GPU\n", rp->info.name);
      return EXIT_INPUT;
    }
    rp->t.device.device_type = kDLCUDA;
    rp->t.device.device_id = c->tune_device;
    rp->t.data = (void *)(uintptr_t)rp->dptr;
  }
  tilec_tune_result r;
  tilec_status st = tilec_autotune(c->input, 1, c->opts, kname, &space, args, np, c->tune_device, print_progress, NULL, &r);
  if (r.log[0] && st != TILEC_OK) fputs(r.log, stderr);
  if (st == TILEC_ERROR_NO_DEVICE) {
    fprintf(stderr, "tilec tune: no CUDA device %d; skipped\n", c->tune_device);
    return EXIT_SKIP;
  }
  if (st != TILEC_OK) {
    fprintf(stderr, "tilec tune: error: %s\n", tilec_status_string(st));
    return st == TILEC_ERROR_USAGE ? EXIT_USAGE : EXIT_INPUT;
  }
  printf("%s: shape class %s\n", kname, r.shape_class);
  printf("%s\n", r.summary);
  return 0;
}

/* A --size or --scalar that names nothing of the kernel run: a warning (a typo would otherwise leave a
 * scalar at its default, with only a note), not an error (scripts pass one set of sizes to several
 * kernels of a file). */
static void warn_unused_sizes(const cli *c, const char *kname, const run_param *rps, int np) {
  for (int k = 0; k < c->nranges; k++) {
    bool used = false;
    for (int i = 0; i < np; i++) used |= rps[i].info.is_tensor && !strcmp(rps[i].info.name, c->range_name[k]);
    if (!used)
      fprintf(stderr, "tilec run: warning: --range %s: kernel '%s' has no tensor parameter of that name\n",
              c->range_name[k], kname);
  }
  for (int s = 0; s < c->nsizes + c->nscalars; s++) {
    bool size = s < c->nsizes;
    const char *name = size ? c->size_name[s] : c->scalar_name[s - c->nsizes];
    bool used = false;
    char have[512] = "";
    for (int i = 0; i < np; i++) {
      const tilec_param_info *in = &rps[i].info;
      if (!size && !in->is_tensor) {
        used |= !strcmp(in->name, name);
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", have[0] ? ", " : "", in->name);
      }
      for (int d = 0; size && in->is_tensor && d < in->rank; d++) {
        const char *sym = in->dim_symbol[d];
        if (!sym) continue;
        used |= !strcmp(sym, name);
        /* each symbol once in the list */
        bool seen = false;
        for (int j = 0; j <= i && !seen; j++)
          for (int e = 0; e < (j < i ? rps[j].info.rank : d) && !seen; e++)
            seen = rps[j].info.is_tensor && rps[j].info.dim_symbol[e] && !strcmp(rps[j].info.dim_symbol[e], sym);
        if (!seen) snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", have[0] ? ", " : "", sym);
      }
    }
    if (!used)
      fprintf(stderr, "tilec run: warning: --%s %s: kernel '%s' has no %s of that name (%s: %s)\n",
              size ? "size" : "scalar", name, kname, size ? "shape symbol" : "scalar parameter",
              size ? "symbols" : "scalars", have[0] ? have : "none");
  }
}

static int run_main(cli *c) {
  int rc = 0;
  tilec_program *p = open_program(c, &rc);
  if (!p) return rc;
  tilec_status st = compile_to(p, TILEC_STAGE_IR);
  if (st != TILEC_OK) {
    tilec_program_destroy(p);
    return exit_code_of(st);
  }
  int kernel = 0, nk = tilec_program_num_kernels(p);
  if (c->kernel) {
    for (kernel = 0; kernel < nk && strcmp(tilec_program_kernel_name(p, kernel), c->kernel); kernel++) {
    }
    if (kernel == nk) {
      char names[512] = "";
      for (int k = 0; k < nk; k++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "",
                 tilec_program_kernel_name(p, k));
      char msg[700];
      snprintf(msg, sizeof msg, "no kernel named '%s' in the file (kernels: %s)", c->kernel, names);
      usage_error("%s", msg);
      tilec_program_destroy(p);
      return EXIT_USAGE;
    }
  }
  const char *kname = tilec_program_kernel_name(p, kernel);
  int np = tilec_program_num_params(p, kernel);
  run_param *rps = calloc((size_t)(np > 0 ? np : 1), sizeof *rps);
  tilec_arg *args = calloc((size_t)(np > 0 ? np : 1), sizeof *args);
  cuda_fns cu = {0};
  bool all_pass = true;
  rng_state = c->seed ? c->seed : 1;
  if (!rps || !args) {
    fprintf(stderr, "tilec run: error: out of memory\n");
    rc = EXIT_INPUT;
    goto done;
  }
  /* Make every argument. */
  for (int i = 0; i < np; i++) {
    run_param *rp = &rps[i];
    tilec_program_param(p, kernel, i, &rp->info);
    if (!rp->info.is_tensor) {
      double v = !strcmp(rp->info.dtype, "f32") || !strcmp(rp->info.dtype, "f16") ||
                         !strcmp(rp->info.dtype, "bf16") ? 0.5 : 1;
      bool given = false;
      for (int s = c->nscalars - 1; s >= 0 && !given; s--)
        if (!strcmp(c->scalar_name[s], rp->info.name)) v = c->scalar_value[s], given = true;
      if (!given) fprintf(stderr, "tilec run: note: scalar '%s' not given (--scalar), using %g\n", rp->info.name, v);
      bool is_int = rp->info.dtype[0] == 'i' || rp->info.dtype[0] == 'u';
      if (is_int && !(v == trunc(v) && fabs(v) < 0x1p63)) { /* 1.5 was truncated, 1e30 undefined */
        char msg[160];
        snprintf(msg, sizeof msg, "--scalar %s=%g: '%s' is %s, give an integer", rp->info.name, v, rp->info.name,
                 rp->info.dtype);
        usage_error("%s", msg);
        rc = EXIT_USAGE;
        goto done;
      }
      args[i].kind = is_int ? TILEC_ARG_I64 : TILEC_ARG_F64;
      if (is_int) args[i].u.i64 = (int64_t)v;
      else args[i].u.f64 = v;
      continue;
    }
    rp->numel = 1;
    for (int d = 0; d < rp->info.rank; d++) {
      if (rp->info.dim_symbol[d]) {
        if (!lookup_size(c, rp->info.dim_symbol[d], &rp->shape[d])) {
          usage_error("size symbol '%s' has no value: give --size SYM=N", rp->info.dim_symbol[d]);
          rc = EXIT_USAGE;
          goto done;
        }
      } else {
        rp->shape[d] = rp->info.dim_value[d];
      }
      /* the library's limit on a dimension (a launch would refuse it), said before a host buffer is asked for */
      if (rp->shape[d] < 0 || rp->shape[d] >= ((int64_t)1 << 31)) {
        char msg[200];
        snprintf(msg, sizeof msg, "'%s' dimension %d (%s) has size %lld, outside [0, 2^31)", rp->info.name, d,
                 rp->info.dim_symbol[d] ? rp->info.dim_symbol[d] : "a constant", (long long)rp->shape[d]);
        usage_error("%s", msg);
        rc = EXIT_USAGE;
        goto done;
      }
      if (__builtin_mul_overflow(rp->numel, (size_t)rp->shape[d], &rp->numel)) rp->numel = SIZE_MAX;
    }
    if (__builtin_mul_overflow(rp->numel, (size_t)elem_bytes(rp->info.dtype), &rp->bytes)) rp->bytes = SIZE_MAX;
    rp->host = rp->bytes == SIZE_MAX ? NULL : malloc(rp->bytes ? rp->bytes : 1);
    if (!rp->host) {
      fprintf(stderr, "tilec run: error: out of memory for '%s' (%zu elements of %s%s)\n", rp->info.name, rp->numel,
              rp->info.dtype, rp->bytes == SIZE_MAX ? ": more bytes than a size_t holds" : "");
      rc = EXIT_INPUT;
      goto done;
    }
    /* @zeroed tensors hold zeros on entry (the kernel's contract); every other one random data */
    if (tilec_program_param_flags(p, kernel, i) & TILEC_PARAM_ZEROED) memset(rp->host, 0, rp->bytes ? rp->bytes : 1);
    else {
      int r = -1;
      for (int k = 0; k < c->nranges; k++)
        if (!strcmp(c->range_name[k], rp->info.name)) r = k;
      const char *dt = rp->info.dtype;
      if (r >= 0 && !range_fits(dt, c->range_lo[r], c->range_hi[r])) {
        char msg[320];
        snprintf(msg, sizeof msg,
                 "--range %s=%g,%g: '%s' is %s; a range takes f32 and bf16 tensors, and integer ones with an integer "
                 "inside it that the type holds", rp->info.name, c->range_lo[r], c->range_hi[r], rp->info.name, dt);
        usage_error("%s", msg);
        rc = EXIT_USAGE;
        goto done;
      }
      for (size_t e = 0; e < rp->numel; e++) {
        unsigned char *at = rp->host + e * (size_t)elem_bytes(dt);
        if (r >= 0) ranged_elem(dt, c->range_lo[r], c->range_hi[r], at);
        else random_elem(dt, at);
      }
    }
    rp->t.device.device_type = kDLCPU;
    rp->t.ndim = rp->info.rank;
    rp->t.dtype = rp->info.dl_dtype;
    rp->t.shape = rp->shape;
    args[i].kind = TILEC_ARG_TENSOR;
    args[i].u.tensor = &rp->t;
  }
  warn_unused_sizes(c, kname, rps, np);
  if (c->tune_mode) {
    rc = tune_with(c, kname, rps, args, np, &cu);
    goto done;
  }
  /* The GPU first, on copies of the inputs, as the interpreter overwrites them. */
  if (c->device) {
    if ((rc = cuda_open(&cu, 0, "run")) != 0) goto done;
    tilec_kernel *k = NULL;
    st = tilec_kernel_load(p, kname, 0, &k);
    if (st != TILEC_OK) {
      fputs(tilec_program_log(p), stderr);
      fprintf(stderr, "tilec run: error: loading '%s': %s\n", kname, tilec_status_string(st));
      rc = st == TILEC_ERROR_NO_DEVICE ? EXIT_SKIP : EXIT_INPUT;
      goto done;
    }
    for (int i = 0; i < np; i++) {
      run_param *rp = &rps[i];
      if (!rp->info.is_tensor) continue;
      if (cu.cuMemAlloc(&rp->dptr, rp->bytes ? rp->bytes : 1) || cu.cuMemcpyHtoD(rp->dptr, rp->host, rp->bytes)) {
        fprintf(stderr, "tilec run: error: cannot place '%s' on the GPU\n", rp->info.name);
        rc = EXIT_INPUT;
        tilec_kernel_destroy(k);
        goto done;
      }
      rp->t.device.device_type = kDLCUDA;
      rp->t.data = (void *)(uintptr_t)rp->dptr;
    }
    size_t log_mark = strlen(tilec_program_log(p));
    st = tilec_kernel_launch(k, args, np, NULL);
    /* what the launch said (the form it ran and why, a repack, a no-TMA form: docs/small_m.md "Waves") */
    const char *launch_log = tilec_program_log(p);
    if (strlen(launch_log) > log_mark) fputs(launch_log + log_mark, stderr);
    if (st != TILEC_OK || cu.cuCtxSynchronize() != 0) {
      fprintf(stderr, "tilec run: error: launch of '%s' failed: %s\n", kname,
              st != TILEC_OK ? tilec_kernel_error(k) : "the kernel faulted");
      rc = EXIT_INPUT;
      tilec_kernel_destroy(k);
      goto done;
    }
    tilec_kernel_destroy(k);
    for (int i = 0; i < np; i++) {
      run_param *rp = &rps[i];
      if (!rp->info.is_tensor) continue;
      rp->device_result = malloc(rp->bytes ? rp->bytes : 1);
      if (!rp->device_result || cu.cuMemcpyDtoH(rp->device_result, rp->dptr, rp->bytes)) {
        fprintf(stderr, "tilec run: error: cannot read '%s' back from the GPU\n", rp->info.name);
        rc = EXIT_INPUT;
        goto done;
      }
      rp->t.device.device_type = kDLCPU;
      rp->t.data = rp->host;
    }
  } else {
    for (int i = 0; i < np; i++) rps[i].t.data = rps[i].host;
  }
  st = tilec_interpret(p, kname, args, np);
  if (st != TILEC_OK) {
    fputs(tilec_program_log(p), stderr);
    fprintf(stderr, "tilec run: error: interpreting '%s': %s\n", kname, tilec_status_string(st));
    rc = exit_code_of(st);
    goto done;
  }
  /* a dot of 8-bit floats: the GPU's sums carry ~13 bits, its outputs a wider atol (run_tolerance.h) */
  int kflags = tilec_program_kernel_flags(p, kernel);
  run_f8_dot f8_dot = kflags <= 0 || !(kflags & TILEC_KERNEL_DOT_F8) ? RUN_NO_F8_DOT
                      : kflags & TILEC_KERNEL_DOT_F8_FAST                ? RUN_F8_DOT_FAST
                                                                         : RUN_F8_DOT;
  for (int i = 0; i < np; i++) {
    run_param *rp = &rps[i];
    if (!rp->info.is_tensor || !rp->info.written) continue;
    if (c->device) {
      all_pass &= compare_tensor(rp, f8_dot, c->atol, c->rtol);
    } else {
      double sum = 0, sum_abs = 0;
      for (size_t e = 0; e < rp->numel; e++) {
        double v = load_elem(rp->info.dtype, rp->host + e * (size_t)elem_bytes(rp->info.dtype));
        sum += v;
        sum_abs += fabs(v);
      }
      char shape[96];
      describe_shape(rp, shape, sizeof shape);
      printf("%s %s %s: interpreted, sum %.6g, mean |x| %.6g\n", rp->info.name, rp->info.dtype, shape, sum,
             rp->numel ? sum_abs / (double)rp->numel : 0.0);
    }
  }
  if (c->device) printf("%s: %s\n", kname, all_pass ? "PASS" : "FAIL");
  if (!all_pass) rc = EXIT_INPUT;
done:
  for (int i = 0; rps && i < np; i++) {
    free(rps[i].host);
    free(rps[i].device_result);
    if (rps[i].dptr && cu.cuMemFree) cu.cuMemFree(rps[i].dptr);
  }
  free(rps);
  free(args);
  tilec_program_destroy(p);
  return rc;
}

int main(int argc, char **argv) {
  cli c = {0};
  c.atol = c.rtol = -1;
  if (tilec_options_create(&c.opts) != TILEC_OK) {
    fprintf(stderr, "tilec: error: out of memory\n");
    return EXIT_INPUT;
  }
  int rc = parse_args(argc, argv, &c);
  if (rc < 0) rc = c.run_mode ? run_main(&c) : compile_main(&c);
  tilec_options_destroy(c.opts);
  return rc;
}
