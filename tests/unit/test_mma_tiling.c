/* test_mma_tiling.c: lib/mma_tiling.
 * Brute force over every M, N in {16..256}, K in {16..128} (powers of two),
 * warps in {1,2,4,8}, dtypes bf16/f16/e4m3 and arches sm_80/sm_89/sm_90a:
 * the test enumerates instructions and tilings itself (its own availability
 * table and cover rules), recomputes the model quantities from the formulas
 * of docs/mma_tiling.md, and checks that the library accepts exactly the
 * valid tilings, reports the same quantities, and chooses a tiling that
 * covers the tile exactly, fits the budget and no candidate beats. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "mma_tiling.h"

typedef struct own_cand {
  tl_mma_instr in;
  int32_t um, un, sub_m, sub_n, repl, acc;
  int64_t smem_bytes, mma_instrs, ldm_instrs;
} own_cand;

static bool fp8(tl_dtype t) { return t == TL_F8E4M3 || t == TL_F8E5M2; }

/* Availability, from the PTX ISA tables (independent of the library). */
static bool own_available(tl_mma_instr in, tl_dtype dt, int32_t sm, bool a, int32_t warps) {
  int32_t k = fp8(dt) ? 32 : 16;
  switch (in.family) {
  case TL_MMA_SYNC: return in.m == 16 && in.n == 8 && in.k == k && sm >= (fp8(dt) ? 89 : 80);
  case TL_MMA_WMMA:
    return !fp8(dt) && in.k == 16 && in.m * in.n == 256 && (in.m == 16 || in.m == 32 || in.m == 8) &&
           sm >= (dt == TL_BF16 ? 80 : 70);
  default: return sm == 90 && a && in.m == 64 && in.n % 8 == 0 && in.n <= 256 && in.k == k && warps % 4 == 0;
  }
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The documented order: replication, family (wgmma < mma.sync < wmma),
 * smem operand bytes, instructions issued, then more warps along M, larger
 * n, larger m. */
static int own_compare(const own_cand *a, const own_cand *b) {
  static const int rank[3] = {1, 2, 0}; /* indexed by tl_mma_family: SYNC, WMMA, WGMMA */
  int64_t ka[7] = {a->repl, rank[a->in.family], a->smem_bytes, a->mma_instrs + a->ldm_instrs, -a->um, -a->in.n,
                   -a->in.m};
  int64_t kb[7] = {b->repl, rank[b->in.family], b->smem_bytes, b->mma_instrs + b->ldm_instrs, -b->um, -b->in.n,
                   -b->in.m};
  for (int i = 0; i < 7; i++)
    if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
  return 0;
}

/* Superset of instructions: every family x shape the test knows, valid or not. */
static int instr_superset(tl_mma_instr *out) {
  int n = 0;
  for (int k = 16; k <= 32; k += 16) {
    out[n++] = (tl_mma_instr){TL_MMA_SYNC, 16, 8, k};
    out[n++] = (tl_mma_instr){TL_MMA_WMMA, 16, 16, k};
    out[n++] = (tl_mma_instr){TL_MMA_WMMA, 32, 8, k};
    out[n++] = (tl_mma_instr){TL_MMA_WMMA, 8, 32, k};
    for (int wn = 8; wn <= 256; wn += 8) out[n++] = (tl_mma_instr){TL_MMA_WGMMA, 64, wn, k};
  }
  out[n++] = (tl_mma_instr){TL_MMA_SYNC, 16, 16, 16}; /* the document's non-existent m16n16k16 mma.sync */
  out[n++] = (tl_mma_instr){TL_MMA_WGMMA, 64, 264, 16};
  return n;
}

/* Exact cover: every element of [M, N] is computed by exactly `repl` unit
 * instruction tiles. */
static void check_cover(const tl_mma_problem *p, const tl_mma_tiling *t) {
  unsigned char *hits = calloc((size_t)p->M * (size_t)p->N, 1);
  cr_assert(hits);
  for (int32_t u = 0; u < t->units; u++) {
    int32_t grid = u % (t->units_m * t->units_n); /* replicas repeat the grid */
    int32_t i = grid / t->units_n, j = grid % t->units_n;
    for (int32_t a = 0; a < t->sub_m; a += t->instr.m)
      for (int32_t b = 0; b < t->sub_n; b += t->instr.n)
        for (int32_t x = 0; x < t->instr.m; x++)
          for (int32_t y = 0; y < t->instr.n; y++) {
            int32_t m = i * t->sub_m + a + x, n = j * t->sub_n + b + y;
            cr_assert(m < p->M && n < p->N);
            hits[(size_t)m * (size_t)p->N + (size_t)n]++;
          }
  }
  for (size_t e = 0; e < (size_t)p->M * (size_t)p->N; e++)
    cr_assert_eq(hits[e], t->replication, "element %zu covered %d times", e, hits[e]);
  free(hits);
}

Test(mma_tiling, brute_force_all_combinations) {
  static const tl_dtype DT[] = {TL_BF16, TL_F16, TL_F8E4M3};
  static const struct { int32_t sm; bool a; } ARCH[] = {{80, false}, {89, false}, {90, true}};
  tl_mma_instr instrs[160];
  int ni = instr_superset(instrs);
  static tl_mma_tiling lib_list[1024];
  int problems = 0, found = 0, none = 0, wgmma_chosen = 0, sync_chosen = 0, replicated = 0;
  for (int32_t M = 16; M <= 256; M *= 2)
    for (int32_t N = 16; N <= 256; N *= 2)
      for (int32_t K = 16; K <= 128; K *= 2)
        for (int32_t warps = 1; warps <= 8; warps *= 2)
          for (int d = 0; d < 3; d++)
            for (int ar = 0; ar < 3; ar++) {
              tl_mma_problem p = {M, N, K, DT[d], warps, ARCH[ar].sm, ARCH[ar].a, 0};
              int32_t eb = fp8(p.dtype) ? 1 : 2;
              own_cand best = {0};
              int own_count = 0;
              for (int i = 0; i < ni; i++) {
                tl_mma_instr in = instrs[i];
                bool avail = own_available(in, p.dtype, p.sm, p.arch_specific, warps);
                bool wg = in.family == TL_MMA_WGMMA;
                int32_t units = wg ? warps / 4 : warps, threads = wg ? 128 : 32;
                if (!avail) {
                  tl_mma_tiling t;
                  cr_assert_not_null(tl_mma_evaluate(&p, in, 1, 1, &t), "unavailable instr accepted");
                  continue;
                }
                for (int32_t um = 1; um <= units; um++)
                  for (int32_t un = 1; un <= units; un++) {
                    own_cand c = {in, um, un, 0, 0, 0, 0, 0, 0, 0};
                    bool ok = units % (um * un) == 0 && M % um == 0 && N % un == 0;
                    if (ok) {
                      c.sub_m = M / um, c.sub_n = N / un, c.repl = units / (um * un);
                      ok = c.sub_m % in.m == 0 && c.sub_n % in.n == 0 && K % in.k == 0;
                    }
                    if (ok) {
                      c.acc = c.sub_m * c.sub_n / threads;
                      ok = c.acc <= 128;
                    }
                    tl_mma_tiling t;
                    const char *why = tl_mma_evaluate(&p, in, um, un, &t);
                    cr_assert_eq(why == NULL, ok, "M%d N%d K%d w%d dt%d sm%d instr %d m%dn%dk%d %dx%d: %s", M, N,
                                 K, warps, d, p.sm, in.family, in.m, in.n, in.k, um, un, why ? why : "accepted");
                    if (!ok) continue;
                    c.smem_bytes = (int64_t)units * (c.sub_m + c.sub_n) * K * eb;
                    c.mma_instrs = (int64_t)units * (c.sub_m / in.m) * (c.sub_n / in.n) * (K / in.k);
                    c.ldm_instrs = wg ? 0 : (int64_t)units * (K * eb / 32) * (cdiv(c.sub_m, 16) + cdiv(c.sub_n, 16));
                    cr_assert_eq(t.replication, c.repl);
                    cr_assert_eq(t.acc_regs, c.acc);
                    cr_assert_eq(t.sub_m, c.sub_m);
                    cr_assert_eq(t.sub_n, c.sub_n);
                    cr_assert_eq(t.smem_operand_bytes, c.smem_bytes);
                    cr_assert_eq(t.mma_instrs, c.mma_instrs);
                    cr_assert_eq(t.ldmatrix_instrs, c.ldm_instrs);
                    cr_assert_eq(t.hw_mmas, (int64_t)units * c.sub_m * c.sub_n * K / (16 * 8 * (fp8(p.dtype) ? 32 : 16)));
                    cr_assert_eq(t.a_reuse, c.sub_n / in.n);
                    cr_assert_eq(t.b_reuse, c.sub_m / in.m);
                    if (!wg) cr_assert_eq(t.ldmatrix_mats * 128, c.smem_bytes);
                    if (own_count == 0 || own_compare(&c, &best) < 0) best = c;
                    own_count++;
                  }
              }
              problems++;
              int32_t listed = tl_mma_enumerate(&p, lib_list, 1024);
              cr_assert_eq(listed, own_count);
              tl_mma_choice ch;
              bool got = tl_mma_choose(&p, &ch);
              cr_assert_eq(got, own_count > 0, "M%d N%d K%d w%d dt%d sm%d: %s", M, N, K, warps, d, p.sm, ch.reason);
              if (!got) {
                none++;
                cr_assert(strstr(ch.reason, "no tensor-core tiling"), "%s", ch.reason);
                continue;
              }
              found++;
              cr_assert_eq(ch.candidates, own_count);
              const tl_mma_tiling *b = &ch.best;
              own_cand chosen = {b->instr, b->units_m, b->units_n, b->sub_m, b->sub_n, b->replication, b->acc_regs,
                                 b->smem_operand_bytes, b->mma_instrs, b->ldmatrix_instrs};
              /* Never beaten: the test's own minimum is not better. */
              cr_assert_eq(own_compare(&chosen, &best), 0, "M%d N%d K%d w%d dt%d sm%d: chose %s", M, N, K, warps, d,
                           p.sm, ch.reason);
              for (int32_t i = 0; i < listed; i++) cr_assert_leq(tl_mma_compare(b, &lib_list[i]), 0);
              cr_assert_leq(b->acc_regs, 128);
              cr_assert_eq(b->sub_m * b->units_m, M);
              cr_assert_eq(b->sub_n * b->units_n, N);
              cr_assert_eq(K % b->instr.k, 0);
              check_cover(&p, b);
              wgmma_chosen += b->instr.family == TL_MMA_WGMMA;
              sync_chosen += b->instr.family == TL_MMA_SYNC;
              replicated += b->replication > 1;
              cr_assert(ch.remap.count_m > 0 && ch.remap.count_n > 0, "%s", ch.remap.text);
            }
  cr_assert_eq(problems, 5 * 5 * 4 * 4 * 3 * 3);
  /* The sweep exercises every outcome. */
  cr_assert_gt(found, 1000);
  cr_assert_gt(none, 100);
  cr_assert_gt(wgmma_chosen, 100);
  cr_assert_gt(sync_chosen, 100);
  cr_assert_gt(replicated, 10);
}

Test(mma_tiling, classic_tiles_by_hand) {
  /* 128x128x64 bf16, 4 warps, sm_80.  Operand bytes 4 * (sub_m + sub_n) * 64
   * * 2: 2x2 warps (64x64): 65536; 4x1 (32x128) or 1x4: 81920.  So 2x2, 4x8
   * mma per k16 per warp, acc 64*64/32 = 128 registers (the budget). */
  tl_mma_problem p = {128, 128, 64, TL_BF16, 4, 80, false, 0};
  tl_mma_choice ch;
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.instr.family, TL_MMA_SYNC);
  cr_assert_eq(ch.best.units_m, 2);
  cr_assert_eq(ch.best.units_n, 2);
  cr_assert_eq(ch.best.acc_regs, 128);
  cr_assert_eq(ch.best.smem_operand_bytes, 65536);
  /* per warp per k16: A 4 x4 loads, B 4 x4 loads (8 n8 tiles), 32 mma:
   * 8 / 32 = 0.25 ldmatrix.x4 per mma. */
  cr_assert_float_eq(ch.best.loads_per_mma, 0.25, 1e-9);
  cr_assert_eq(ch.best.a_reuse, 8);
  cr_assert_eq(ch.best.b_reuse, 4);
  cr_assert(strstr(ch.reason, "mma.sync.m16n8k16") && strstr(ch.reason, "beats"), "%s", ch.reason);
  /* sm_90a: one warpgroup, m64n128k16 twice along M. */
  p.sm = 90, p.arch_specific = true;
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.instr.family, TL_MMA_WGMMA);
  cr_assert_eq(ch.best.instr.n, 128);
  cr_assert_eq(ch.best.mma_instrs, 2 * 4);
  cr_assert_eq(ch.remap.count_n, 16); /* a warp's 16x128 slab = 16 m16n8k16 */
  /* sm_90 without "a": no wgmma. */
  p.arch_specific = false;
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.instr.family, TL_MMA_SYNC);
  /* 256x128 over 4 warps: 256*128/128 = 256 accumulators per thread. */
  p = (tl_mma_problem){256, 128, 64, TL_BF16, 4, 80, false, 0};
  cr_assert_not(tl_mma_choose(&p, &ch));
  cr_assert(strstr(ch.reason, "256 registers"), "%s", ch.reason);
  p.acc_reg_budget = 256;
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.acc_regs, 256);
}

Test(mma_tiling, fp8_rules) {
  tl_mma_problem p = {128, 128, 64, TL_F8E4M3, 4, 80, false, 0};
  tl_mma_choice ch;
  cr_assert_not(tl_mma_choose(&p, &ch));
  cr_assert(strstr(ch.reason, "sm_89"), "%s", ch.reason);
  p.sm = 89;
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.instr.k, 32);
  cr_assert_eq(ch.best.instr.family, TL_MMA_SYNC);
  p.K = 16;
  cr_assert_not(tl_mma_choose(&p, &ch));
  cr_assert(strstr(ch.reason, "K=16"), "%s", ch.reason);
  /* e5m2 behaves as e4m3. */
  p = (tl_mma_problem){64, 256, 128, TL_F8E5M2, 4, 90, true, 0};
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.instr.family, TL_MMA_WGMMA);
  cr_assert_eq(ch.best.instr.n, 256);
  cr_assert_eq(ch.best.instr.k, 32);
  tl_mma_tiling t;
  cr_assert_not_null(tl_mma_evaluate(&p, (tl_mma_instr){TL_MMA_WMMA, 16, 16, 16}, 1, 1, &t));
  p.dtype = TL_I16;
  cr_assert_not(tl_mma_choose(&p, &ch));
}

/* i8 (m16n8k32.s32, sm_80; wgmma N = 8, 24 or multiples of 16 up to 224) and
 * f32 read as tf32 (m16n8k8, wgmma k8). */
Test(mma_tiling, int8_tf32_rules) {
  tl_mma_problem p = {128, 128, 128, TL_I8, 8, 80, false, 0};
  tl_mma_choice ch;
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.instr.family, TL_MMA_SYNC);
  cr_assert_eq(ch.best.instr.k, 32);
  tl_mma_tiling t;
  cr_assert_null(tl_mma_evaluate(&p, (tl_mma_instr){TL_MMA_SYNC, 16, 8, 32}, 4, 2, &t));
  cr_assert_not_null(tl_mma_evaluate(&p, (tl_mma_instr){TL_MMA_SYNC, 16, 8, 16}, 4, 2, &t));
  p = (tl_mma_problem){128, 256, 128, TL_I8, 8, 90, true, 0};
  cr_assert_not_null(tl_mma_evaluate(&p, (tl_mma_instr){TL_MMA_WGMMA, 64, 256, 32}, 2, 1, &t));
  cr_assert_null(tl_mma_evaluate(&p, (tl_mma_instr){TL_MMA_WGMMA, 64, 128, 32}, 2, 1, &t));
  cr_assert_eq(tl_wgmma_instr_n(TL_I8, 256), 128);
  cr_assert_eq(tl_wgmma_instr_n(TL_I8, 224), 224);
  cr_assert_eq(tl_wgmma_instr_n(TL_I8, 40), 0);
  cr_assert_eq(tl_wgmma_instr_n(TL_BF16, 256), 256);
  p = (tl_mma_problem){128, 128, 32, TL_F32, 4, 80, false, 0};
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.instr.k, 8);
  p.sm = 75;
  cr_assert_not(tl_mma_choose(&p, &ch));
}

Test(mma_tiling, small_tiles_replicate_warps) {
  /* 16x16 over 4 warps: at most two m16n8 tiles, so 1x2 warps, x2 replicated. */
  tl_mma_problem p = {16, 16, 32, TL_F16, 4, 80, false, 0};
  tl_mma_choice ch;
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.best.replication, 2);
  cr_assert_eq(ch.best.units_m * ch.best.units_n, 2);
  cr_assert(strstr(ch.reason, "replicated"), "%s", ch.reason);
}

Test(mma_tiling, remap_views) {
  tl_mma_instr base = tl_mma_base_instr(TL_BF16);
  tl_mma_remap r;
  /* m16n16k16 = two m16n8k16 side by side along N. */
  cr_assert(tl_mma_remap_block(16, 16, 16, base, &r));
  cr_assert(!r.transposed && r.count_m == 1 && r.count_n == 2 && r.count_k == 1, "%s", r.text);
  /* m32n8k16 = two stacked along M. */
  cr_assert(tl_mma_remap_block(32, 8, 16, base, &r));
  cr_assert(!r.transposed && r.count_m == 2 && r.count_n == 1, "%s", r.text);
  /* m8n32k16: M = 8 is no multiple of 16; D^T = B^T A^T is 32x8: two pieces
   * along the block's N, one along its M. */
  cr_assert(tl_mma_remap_block(8, 32, 16, base, &r));
  cr_assert(r.transposed && r.count_m == 1 && r.count_n == 2, "%s", r.text);
  cr_assert(strstr(r.text, "transposed"), "%s", r.text);
  /* A 64x256 wgmma tile = 4 x 32 m16n8k16; k32 fp8 pieces for fp8. */
  cr_assert(tl_mma_remap_block(64, 256, 16, base, &r));
  cr_assert(r.count_m == 4 && r.count_n == 32);
  cr_assert(tl_mma_remap_block(64, 64, 64, tl_mma_base_instr(TL_F8E4M3), &r));
  cr_assert(r.count_k == 2 && r.piece.k == 32);
  cr_assert_not(tl_mma_remap_block(8, 8, 16, base, &r));
  cr_assert_not(tl_mma_remap_block(16, 8, 24, base, &r));
  /* The choice carries the remap of its instruction. */
  tl_mma_problem p = {64, 64, 32, TL_BF16, 2, 80, false, 0};
  tl_mma_choice ch;
  cr_assert(tl_mma_choose(&p, &ch));
  cr_assert_eq(ch.remap.piece.m, 16);
  cr_assert(strstr(ch.reason, "remap:"), "%s", ch.reason);
}

Test(mma_tiling, arch_parsing_and_names) {
  int32_t sm = 0;
  bool a = true;
  cr_assert(tl_mma_parse_arch("sm_90a", &sm, &a));
  cr_assert(sm == 90 && a);
  cr_assert(tl_mma_parse_arch("sm_80", &sm, &a));
  cr_assert(sm == 80 && !a);
  cr_assert(tl_mma_parse_arch("sm_100a", &sm, &a));
  cr_assert(sm == 100 && a);
  cr_assert_not(tl_mma_parse_arch("sm_9", &sm, &a));
  cr_assert_not(tl_mma_parse_arch("sm_90b", &sm, &a));
  cr_assert_not(tl_mma_parse_arch("compute_90", &sm, &a));
  cr_assert_not(tl_mma_parse_arch(NULL, &sm, &a));
  char buf[48];
  tl_mma_instr_str((tl_mma_instr){TL_MMA_WGMMA, 64, 192, 16}, buf, sizeof buf);
  cr_assert_str_eq(buf, "wgmma.m64n192k16");
  tl_mma_instr_str((tl_mma_instr){TL_MMA_WMMA, 32, 8, 16}, buf, sizeof buf);
  cr_assert_str_eq(buf, "wmma.m32n8k16");
}
