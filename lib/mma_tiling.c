/* mma_tiling.c: enumerate tensor-core instructions x warp tilings of a dot's
 * CTA tile, rank them by the cost model of docs/mma_tiling.md, and express
 * instruction tiles in base mma.sync pieces.  Contract: pure functions of
 * their arguments (no allocation, no I/O); invalid inputs come back as
 * reasons, never as failures. */
#include "mma_tiling.h"

#include "util.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool is_fp8(tl_dtype t) { return tl_dtype_is_fp8(t); }
static bool is_16bit(tl_dtype t) { return t == TL_F16 || t == TL_BF16; }
static int32_t operand_bytes(tl_dtype t) { return tl_dtype_bytes(t); }
/* the N of an integer wgmma (m64nNk32.s32): 8, 24 or a multiple of 16 up to 224 */
static bool int_wgmma_n(int32_t n) { return n == 8 || n == 24 || (n % 16 == 0 && n > 0 && n <= 224); }

bool tl_mma_parse_arch(const char *arch, int32_t *sm, bool *arch_specific) {
  if (!arch || strncmp(arch, "sm_", 3) != 0) return false;
  const char *p = arch + 3;
  int32_t v = 0;
  int digits = 0;
  while (*p >= '0' && *p <= '9' && digits < 4) v = v * 10 + (*p++ - '0'), digits++;
  if (digits < 2) return false;
  bool a = false;
  if (*p == 'a') a = true, p++;
  if (*p) return false;
  *sm = v;
  *arch_specific = a;
  return true;
}

void tl_mma_instr_str(tl_mma_instr in, char *buf, size_t n) {
  const char *fam = in.family == TL_MMA_WGMMA ? "wgmma" : in.family == TL_MMA_WMMA ? "wmma" : "mma.sync";
  snprintf(buf, n, "%s.m%dn%dk%d", fam, (int)in.m, (int)in.n, (int)in.k);
}

tl_mma_instr tl_mma_base_instr(tl_dtype dtype) {
  tl_mma_instr in = {TL_MMA_SYNC, 16, 8, tl_dot_kstep(dtype) ? tl_dot_kstep(dtype) : 16};
  return in;
}

const char *tl_mma_instr_unavailable(const tl_mma_problem *p, tl_mma_instr in) {
  int32_t kstep = tl_dot_kstep(p->dtype);
  if (!kstep) return "operand type has no tensor-core instruction here";
  switch (in.family) {
  case TL_MMA_SYNC:
    if (in.m != 16 || in.n != 8) return "not an mma.sync shape (m16n8k16 / m16n8k32 / m16n8k8)";
    if (in.k != kstep)
      return is_fp8(p->dtype) ? "fp8 mma.sync is m16n8k32"
             : p->dtype == TL_I8 ? "i8 mma.sync is m16n8k32"
             : p->dtype == TL_F32 ? "tf32 mma.sync is m16n8k8"
                                  : "f16/bf16 mma.sync is m16n8k16";
    if (is_fp8(p->dtype) && p->sm < 89) return "fp8 mma.sync needs sm_89";
    if (!is_fp8(p->dtype) && p->sm < 80) return is_16bit(p->dtype) ? "mma.sync m16n8k16 needs sm_80" : "this mma.sync needs sm_80";
    return NULL;
  case TL_MMA_WMMA: {
    if (!is_16bit(p->dtype)) return "wmma is used for f16/bf16 only";
    bool shape = in.k == 16 && ((in.m == 16 && in.n == 16) || (in.m == 32 && in.n == 8) ||
                                (in.m == 8 && in.n == 32));
    if (!shape) return "not a wmma shape (m16n16k16, m32n8k16, m8n32k16)";
    if (p->sm < (p->dtype == TL_BF16 ? 80 : 70)) return "wmma for this type needs a newer arch";
    return NULL;
  }
  case TL_MMA_WGMMA:
    if (p->sm != 90 || !p->arch_specific) return "wgmma needs sm_90a";
    if (in.m != 64 || in.n < 8 || in.n > 256 || in.n % 8) return "wgmma is m64nN with N a multiple of 8 up to 256";
    if (in.k != kstep) return "wgmma k is 16 for f16/bf16, 32 for fp8 and i8, 8 for tf32";
    if (p->dtype == TL_I8 && !int_wgmma_n(in.n)) return "i8 wgmma N is 8, 24 or a multiple of 16 up to 224";
    if (p->warps % 4) return "wgmma needs whole warpgroups (a multiple of 4 warps)";
    return NULL;
  default: return "unknown instruction family";
  }
}

int32_t tl_wgmma_instr_n(tl_dtype dtype, int32_t N) {
  if (dtype != TL_I8) return N;
  if (int_wgmma_n(N)) return N;
  return N % 2 == 0 && int_wgmma_n(N / 2) ? N / 2 : 0;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

const char *tl_mma_evaluate(const tl_mma_problem *p, tl_mma_instr in, int32_t units_m,
                            int32_t units_n, tl_mma_tiling *t) {
  memset(t, 0, sizeof *t);
  t->instr = in;
  t->units_m = units_m;
  t->units_n = units_n;
  if (p->M <= 0 || p->N <= 0 || p->K <= 0 || p->warps <= 0) return "tile and warps must be positive";
  const char *why = tl_mma_instr_unavailable(p, in);
  if (why) return why;
  bool wg = in.family == TL_MMA_WGMMA;
  t->unit_threads = wg ? 128 : 32;
  t->units = wg ? p->warps / 4 : p->warps;
  if (units_m <= 0 || units_n <= 0 || t->units % (units_m * units_n))
    return "units_m * units_n must divide the warps (warpgroups)";
  t->replication = t->units / (units_m * units_n);
  if (p->M % units_m || p->N % units_n) return "the tile does not split evenly over the units";
  t->sub_m = p->M / units_m;
  t->sub_n = p->N / units_n;
  if (t->sub_m % in.m || t->sub_n % in.n) return "a unit's tile is not a multiple of the instruction";
  if (p->K % in.k) return "K is not a multiple of the instruction k";

  int64_t units = t->units, eb = operand_bytes(p->dtype), K = p->K;
  int64_t hw_k = tl_dot_kstep(p->dtype);
  t->acc_regs = t->sub_m * t->sub_n / t->unit_threads;
  t->mma_instrs = units * (t->sub_m / in.m) * (t->sub_n / in.n) * (K / in.k);
  t->hw_mmas = units * t->sub_m * t->sub_n * K / (16 * 8 * hw_k);
  t->smem_operand_bytes = units * (t->sub_m + t->sub_n) * K * eb;
  t->a_reuse = t->sub_n / in.n;
  t->b_reuse = t->sub_m / in.m;
  if (!wg) {
    /* Fragments come through registers: 8x8 b16 matrices (128 B) four to an
     * ldmatrix.x4; per 32 bytes of K, A takes one .x4 per 16 rows and B one
     * .x4 per 16 columns (a lone 8 columns: one .x2). */
    int64_t kslabs = K * eb / 32;
    t->ldmatrix_mats = t->smem_operand_bytes / 128;
    t->ldmatrix_instrs = units * kslabs * (ceil_div(t->sub_m, 16) + ceil_div(t->sub_n, 16));
    t->frag_regs = (int32_t)((t->sub_m + t->sub_n) * in.k * eb / (4 * 32));
    t->loads_per_mma = (double)t->ldmatrix_mats / 4.0 / (double)t->hw_mmas;
  }
  int32_t budget = p->acc_reg_budget > 0 ? p->acc_reg_budget : TL_MMA_DEFAULT_ACC_BUDGET;
  if (t->acc_regs > budget) return "accumulator registers per thread over the budget";
  return NULL;
}

static int family_rank(int32_t family) {
  return family == TL_MMA_WGMMA ? 0 : family == TL_MMA_SYNC ? 1 : 2;
}

/* Keys of the model in order; *key is the index of the deciding one (-1: equal). */
static const char *const KEY_NAMES[] = {"replication", "instruction family", "shared-memory operand traffic",
                                        "instructions issued", "warps along M", "instruction n",
                                        "instruction m"};

static int compare_keys(const tl_mma_tiling *a, const tl_mma_tiling *b, int *key) {
  int64_t ka[7] = {a->replication, family_rank(a->instr.family), a->smem_operand_bytes,
                   a->mma_instrs + a->ldmatrix_instrs, -(int64_t)a->units_m, -(int64_t)a->instr.n,
                   -(int64_t)a->instr.m};
  int64_t kb[7] = {b->replication, family_rank(b->instr.family), b->smem_operand_bytes,
                   b->mma_instrs + b->ldmatrix_instrs, -(int64_t)b->units_m, -(int64_t)b->instr.n,
                   -(int64_t)b->instr.m};
  for (int i = 0; i < 7; i++)
    if (ka[i] != kb[i]) {
      *key = i;
      return ka[i] < kb[i] ? -1 : 1;
    }
  *key = -1;
  return 0;
}

int tl_mma_compare(const tl_mma_tiling *a, const tl_mma_tiling *b) {
  int key;
  return compare_keys(a, b, &key);
}

/* Every instruction tilec knows, for every dtype and arch (availability is
 * checked by tl_mma_evaluate). */
static int32_t instruction_list(tl_mma_instr *out) {
  int32_t n = 0;
  out[n++] = (tl_mma_instr){TL_MMA_SYNC, 16, 8, 16};
  out[n++] = (tl_mma_instr){TL_MMA_SYNC, 16, 8, 32};
  out[n++] = (tl_mma_instr){TL_MMA_SYNC, 16, 8, 8};
  out[n++] = (tl_mma_instr){TL_MMA_WMMA, 16, 16, 16};
  out[n++] = (tl_mma_instr){TL_MMA_WMMA, 32, 8, 16};
  out[n++] = (tl_mma_instr){TL_MMA_WMMA, 8, 32, 16};
  for (int32_t k = 8; k <= 32; k *= 2)
    for (int32_t wn = 8; wn <= 256; wn += 8) out[n++] = (tl_mma_instr){TL_MMA_WGMMA, 64, wn, k};
  return n;
}
#define INSTR_MAX (6 + 3 * 32)

typedef struct scan_state {
  tl_mma_tiling *out;
  int32_t cap, count;
  /* for tl_mma_choose */
  bool have_best, have_second;
  tl_mma_tiling best, second;
  int32_t min_over_budget; /* smallest acc_regs among tilings rejected only by the budget */
  const char *unavailable; /* why the base instruction is unavailable, if it is */
} scan_state;

static void scan(const tl_mma_problem *p, scan_state *s) {
  tl_mma_instr instrs[INSTR_MAX];
  int32_t ni = instruction_list(instrs);
  s->min_over_budget = 0;
  s->unavailable = tl_mma_instr_unavailable(p, tl_mma_base_instr(p->dtype));
  for (int32_t i = 0; i < ni; i++) {
    if (tl_mma_instr_unavailable(p, instrs[i])) continue;
    int32_t units = instrs[i].family == TL_MMA_WGMMA ? p->warps / 4 : p->warps;
    for (int32_t um = 1; um <= units; um++)
      for (int32_t un = 1; um * un <= units; un++) {
        if (units % (um * un)) continue;
        tl_mma_tiling t;
        const char *why = tl_mma_evaluate(p, instrs[i], um, un, &t);
        if (why) {
          if (t.acc_regs > 0 && strcmp(why, "accumulator registers per thread over the budget") == 0 &&
              (s->min_over_budget == 0 || t.acc_regs < s->min_over_budget))
            s->min_over_budget = t.acc_regs;
          continue;
        }
        if (s->count < s->cap) s->out[s->count] = t;
        s->count++;
        if (!s->have_best || tl_mma_compare(&t, &s->best) < 0) {
          if (s->have_best) s->second = s->best, s->have_second = true;
          s->best = t;
          s->have_best = true;
        } else if (!s->have_second || tl_mma_compare(&t, &s->second) < 0) {
          s->second = t;
          s->have_second = true;
        }
      }
  }
}

int32_t tl_mma_enumerate(const tl_mma_problem *p, tl_mma_tiling *out, int32_t cap) {
  scan_state s;
  memset(&s, 0, sizeof s);
  s.out = out;
  s.cap = out ? cap : 0;
  scan(p, &s);
  return s.count;
}

bool tl_mma_remap_block(int32_t m, int32_t n, int32_t k, tl_mma_instr piece, tl_mma_remap *out) {
  memset(out, 0, sizeof *out);
  out->piece = piece;
  char pname[40];
  tl_mma_instr_str(piece, pname, sizeof pname);
  if (m <= 0 || n <= 0 || k <= 0 || piece.m <= 0 || piece.n <= 0 || piece.k <= 0 || k % piece.k) {
    snprintf(out->text, sizeof out->text, "m%dn%dk%d does not split into %s", (int)m, (int)n, (int)k, pname);
    return false;
  }
  out->count_k = k / piece.k;
  if (m % piece.m == 0 && n % piece.n == 0) {
    out->count_m = m / piece.m;
    out->count_n = n / piece.n;
    snprintf(out->text, sizeof out->text, "m%dn%dk%d = %dx%dx%d %s (M x N x K)", (int)m, (int)n, (int)k,
             (int)out->count_m, (int)out->count_n, (int)out->count_k, pname);
    return true;
  }
  if (n % piece.m == 0 && m % piece.n == 0) {
    out->transposed = true;
    out->count_m = m / piece.n;
    out->count_n = n / piece.m;
    snprintf(out->text, sizeof out->text,
             "m%dn%dk%d = %dx%dx%d %s (M x N x K) on the transposed product D^T = B^T A^T", (int)m,
             (int)n, (int)k, (int)out->count_m, (int)out->count_n, (int)out->count_k, pname);
    return true;
  }
  snprintf(out->text, sizeof out->text, "m%dn%dk%d does not split into %s", (int)m, (int)n, (int)k, pname);
  return false;
}


static void describe(const tl_mma_tiling *t, char *buf, size_t cap) {
  char iname[40];
  tl_mma_instr_str(t->instr, iname, sizeof iname);
  const char *unit = t->instr.family == TL_MMA_WGMMA ? "warpgroups" : "warps";
  tl_appendf(buf, cap, "%s, %dx%d %s of %dx%d", iname, (int)t->units_m, (int)t->units_n, unit,
          (int)t->sub_m, (int)t->sub_n);
  if (t->replication > 1) tl_appendf(buf, cap, " (x%d replicated)", (int)t->replication);
}

bool tl_mma_choose(const tl_mma_problem *p, tl_mma_choice *out) {
  memset(out, 0, sizeof *out);
  scan_state s;
  memset(&s, 0, sizeof s);
  scan(p, &s);
  out->candidates = s.count;
  int32_t budget = p->acc_reg_budget > 0 ? p->acc_reg_budget : TL_MMA_DEFAULT_ACC_BUDGET;
  if (!s.have_best) {
    snprintf(out->reason, sizeof out->reason, "no tensor-core tiling for %dx%dx%d %s with %d warps on sm_%d%s: ",
             (int)p->M, (int)p->N, (int)p->K, tl_dtype_name(p->dtype), (int)p->warps, (int)p->sm,
             p->arch_specific ? "a" : "");
    if (s.unavailable)
      tl_appendf(out->reason, sizeof out->reason, "%s", s.unavailable);
    else if (p->K % tl_mma_base_instr(p->dtype).k)
      tl_appendf(out->reason, sizeof out->reason, "K=%d is not a multiple of the instruction k=%d",
              (int)p->K, (int)tl_mma_base_instr(p->dtype).k);
    else if (s.min_over_budget)
      tl_appendf(out->reason, sizeof out->reason,
              "the accumulator needs at least %d registers per thread, over the budget of %d "
              "(use more warps or a smaller tile)", (int)s.min_over_budget, (int)budget);
    else
      tl_appendf(out->reason, sizeof out->reason,
              "M, N must split into multiples of the instruction (m16n8) and K into its k");
    return false;
  }
  out->found = true;
  out->best = s.best;
  const tl_mma_tiling *b = &s.best;
  if (b->instr.family == TL_MMA_WGMMA)
    tl_mma_remap_block(16, b->instr.n, b->instr.k, tl_mma_base_instr(p->dtype), &out->remap);
  else
    tl_mma_remap_block(b->instr.m, b->instr.n, b->instr.k, tl_mma_base_instr(p->dtype), &out->remap);

  char *r = out->reason;
  size_t cap = sizeof out->reason;
  tl_appendf(r, cap, "%dx%dx%d %s, %d warps: ", (int)p->M, (int)p->N, (int)p->K, tl_dtype_name(p->dtype),
          (int)p->warps);
  describe(b, r, cap);
  tl_appendf(r, cap, "; per unit %dx%dx%d instructions per tile", (int)(b->sub_m / b->instr.m),
          (int)(b->sub_n / b->instr.n), (int)(p->K / b->instr.k));
  tl_appendf(r, cap, "; acc %d regs/thread (budget %d)", (int)b->acc_regs, (int)budget);
  if (b->instr.family == TL_MMA_WGMMA)
    tl_appendf(r, cap, "; operands read from shared memory by the tensor cores (%lld B), %lld wgmma issued",
            (long long)b->smem_operand_bytes, (long long)b->mma_instrs);
  else
    tl_appendf(r, cap, "; %.3f ldmatrix.x4 per mma (%lld ldmatrix, %lld mma), A reused x%d, B x%d",
            b->loads_per_mma, (long long)b->ldmatrix_instrs, (long long)b->mma_instrs, (int)b->a_reuse,
            (int)b->b_reuse);
  tl_appendf(r, cap, "; remap: %s%s", out->remap.text,
          b->instr.family == TL_MMA_WGMMA ? " per warp of the warpgroup" : "");
  if (s.have_second) {
    int key;
    compare_keys(b, &s.second, &key);
    tl_appendf(r, cap, "; beats ");
    describe(&s.second, r, cap);
    tl_appendf(r, cap, " on %s", key >= 0 ? KEY_NAMES[key] : "nothing (equal)");
    if (key == 1 && s.second.instr.family == TL_MMA_WMMA)
      tl_appendf(r, cap, " (wmma accumulators have an opaque layout: the epilogue goes through shared memory)");
  }
  tl_appendf(r, cap, "; %d candidates", (int)s.count);
  return true;
}
