/* Unit tests of lib/axisinfo.c: the transfer functions on hand-written IR
 * (expected facts worked out from the definitions), a randomized soundness
 * check against concrete evaluation, the access facts of align_check and the
 * launch specialization key. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axisinfo.h"
#include "ctx_fixture.h"

TL_CTX_FIXTURE()

TestSuite(axisinfo, .init = setup, .fini = teardown);

static tl_func *parse_one(const char *text) {
  int32_t file = tl_ctx_add_source(&ctx, "<test>", text, strlen(text));
  tl_module *m = tl_parse_ir(&ctx, file);
  cr_assert_not_null(m, "parse failed");
  cr_assert_eq(ctx.nerrors, 0);
  cr_assert(tl_verify_module(m), "the test IR is invalid");
  return m->funcs.data[0];
}

static int32_t named(tl_func *f, const char *name) {
  for (int v = 0; v < f->values.len; v++)
    if (f->values.data[v].name && strcmp(f->values.data[v].name, name) == 0) return v;
  cr_assert_fail("no value named %s", name);
  return -1;
}

static tl_axis_info facts(const tl_axis_analysis *A, tl_func *f, const char *name) {
  return tl_axis_get(A, named(f, name));
}

Test(axisinfo, pow2_divisor) {
  cr_assert_eq(tl_axis_pow2_divisor(1), 1);
  cr_assert_eq(tl_axis_pow2_divisor(7), 1);
  cr_assert_eq(tl_axis_pow2_divisor(96), 32);
  cr_assert_eq(tl_axis_pow2_divisor(-64), 64);
  cr_assert_eq(tl_axis_pow2_divisor(0), TL_AXIS_DIV_MAX);
  cr_assert_eq(tl_axis_pow2_divisor(INT64_MIN), TL_AXIS_DIV_MAX);
  srand(11);
  for (int i = 0; i < 1000; i++) {
    int64_t x = (int64_t)(rand() % 100000) - 50000;
    if (x == 0) continue;
    int64_t d = tl_axis_pow2_divisor(x);
    cr_assert_eq(x % d, 0);
    cr_assert_neq((x / d) % 2, 0, "%lld / %lld is even", (long long)x, (long long)d);
  }
}

static const char *scalar_ir =
    "kernel @k(%X: tensor<f32>[M, 64], %Y: tensor<f32>[M, N], %s: i32) {\n"
    "grid {\n  %g = const 1 : i32\n  yield %g\n}\n"
    "body {\n"
    "  %pid = program_id 0 : i32\n"
    "  %c128 = const 128 : i32\n"
    "  %c12 = const 12 : i32\n"
    "  %c3 = const 3 : i32\n"
    "  %m0 = mul %pid, %c128 : i32\n"
    "  %m1 = mul %m0, %c12 : i32\n"
    "  %a1 = add %m0, %c12 : i32\n"
    "  %a2 = add %m0, %c3 : i32\n"
    "  %sh = shl %pid, %c3 : i32\n"
    "  %dv = div %m0, %c12 : i32\n"
    "  %q = div %m0, %c3 : i32\n"
    "  %r = rem %m0, %c128 : i32\n"
    "  %folded = mul %c12, %c3 : i32\n"
    "  %dm = dim %X, 0 : i32\n"
    "  %d64 = dim %X, 1 : i32\n"
    "  %dn = dim %Y, 1 : i32\n"
    "  %sm = mul %s, %c3 : i32\n"
    "}\n}\n";

Test(axisinfo, scalar_transfer_functions) {
  tl_func *f = parse_one(scalar_ir);
  tl_axis_analysis *A = tl_axis_analyze(f, NULL);
  cr_assert_eq(facts(A, f, "pid").div[0], 1);
  cr_assert_eq(facts(A, f, "m0").div[0], 128);
  cr_assert_eq(facts(A, f, "m1").div[0], 512); /* 128 * 4 */
  cr_assert_eq(facts(A, f, "a1").div[0], 4);   /* gcd(128, 4) */
  cr_assert_eq(facts(A, f, "a2").div[0], 1);
  cr_assert_eq(facts(A, f, "sh").div[0], 8);
  cr_assert_eq(facts(A, f, "q").div[0], 1); /* 3 is no power of two */
  tl_axis_info r = facts(A, f, "r");
  cr_assert(r.is_const && r.value == 0, "128k %% 128 is 0");
  tl_axis_info folded = facts(A, f, "folded");
  cr_assert(folded.is_const && folded.value == 36 && folded.div[0] == 4);
  cr_assert_eq(facts(A, f, "dm").div[0], 1, "an unknown size");
  tl_axis_info d64 = facts(A, f, "d64");
  cr_assert(d64.is_const && d64.value == 64, "a constant dim is known");
  cr_assert_eq(facts(A, f, "sm").div[0], 1);
  for (int i = 0; i < 4; i++) cr_assert_eq(facts(A, f, "m0").contig[0], 1);

  /* a launch that specializes: M % 16 == 0, N % 8 == 0, s % 32 == 0 */
  int64_t sym_div[2] = {16, 8};
  int64_t param_div[3] = {0, 0, 32};
  tl_axis_assume as = {sym_div, param_div};
  tl_axis_analysis *B = tl_axis_analyze(f, &as);
  cr_assert_eq(facts(B, f, "dm").div[0], 16);
  cr_assert_eq(facts(B, f, "dn").div[0], 8);
  cr_assert_eq(facts(B, f, "sm").div[0], 32);
  cr_assert_eq(facts(B, f, "dv").div[0], 1, "m0 / 12: 12 is no power of two");
}

static const char *tile_ir =
    "kernel @k(%s: i32) {\n"
    "grid {\n  %g = const 1 : i32\n  yield %g\n}\n"
    "body {\n"
    "  %pid = program_id 0 : i32\n"
    "  %c64 = const 64 : i32\n"
    "  %m0 = mul %pid, %c64 : i32\n"
    "  %io = iota : tile<64xi32>\n"
    "  %spl = splat %m0 : tile<64xi32>\n"
    "  %offs = add %io, %spl : tile<64xi32>\n"
    "  %subd = sub %offs, %spl : tile<64xi32>\n"
    "  %negd = sub %spl, %io : tile<64xi32>\n"
    "  %c4t = const 4 : tile<64xi32>\n"
    "  %scaled = mul %io, %c4t : tile<64xi32>\n"
    "  %c1t = const 1 : tile<64xi32>\n"
    "  %same = mul %offs, %c1t : tile<64xi32>\n"
    "  %row = expand_dims %io, axis=1 : tile<64x1xi32>\n"
    "  %col = expand_dims %offs, axis=0 : tile<1x64xi32>\n"
    "  %rowb = broadcast %row : tile<64x64xi32>\n"
    "  %colb = broadcast %col : tile<64x64xi32>\n"
    "  %c128t = const 128 : tile<64x64xi32>\n"
    "  %rows = mul %rowb, %c128t : tile<64x64xi32>\n"
    "  %ptr = add %rows, %colb : tile<64x64xi32>\n"
    "  %tr = trans %ptr : tile<64x64xi32>\n"
    "  %small = iota : tile<16xi32>\n"
    "  %c3t = const 3 : tile<16xi32>\n"
    "  %shifted = add %small, %c3t : tile<16xi32>\n"
    "  %both = add %small, %small : tile<16xi32>\n"
    "  %red = reduce sum %rows, axis=1 : tile<64xi32>\n"
    "  %c8t = const 8 : tile<64xi32>\n"
    "  %q8 = div %io, %c8t : tile<64xi32>\n"
    "  %q8o = div %offs, %c8t : tile<64xi32>\n"
    "  %sm = mul %s, %c64 : i32\n"
    "  %sms = splat %sm : tile<64xi32>\n"
    "  %offn = add %io, %sms : tile<64xi32>\n"
    "  %q8n = div %offn, %c8t : tile<64xi32>\n"
    "  %c4s = const 4 : tile<64xi32>\n"
    "  %s16 = shr %offs, %c4s : tile<64xi32>\n"
    "  %c6t = const 6 : tile<64xi32>\n"
    "  %q6 = div %io, %c6t : tile<64xi32>\n"
    "  %q8r = expand_dims %q8, axis=1 : tile<64x1xi32>\n"
    "  %q8b = broadcast %q8r : tile<64x64xi32>\n"
    "}\n}\n";

Test(axisinfo, tile_transfer_functions) {
  tl_func *f = parse_one(tile_ir);
  tl_axis_analysis *A = tl_axis_analyze(f, NULL);
  tl_axis_info io = facts(A, f, "io");
  cr_assert(io.rank == 1 && io.contig[0] == 64 && io.constancy[0] == 1 && io.div[0] == TL_AXIS_DIV_MAX);
  tl_axis_info spl = facts(A, f, "spl");
  cr_assert(spl.contig[0] == 1 && spl.constancy[0] == 64 && spl.div[0] == 64);
  tl_axis_info offs = facts(A, f, "offs");
  cr_assert(offs.contig[0] == 64 && offs.constancy[0] == 1 && offs.div[0] == 64);
  cr_assert_eq(facts(A, f, "subd").contig[0], 64);
  cr_assert_eq(facts(A, f, "negd").contig[0], 1, "m0 - iota runs downwards");
  tl_axis_info scaled = facts(A, f, "scaled");
  cr_assert(scaled.contig[0] == 1 && scaled.div[0] == 4);
  tl_axis_info same = facts(A, f, "same");
  cr_assert(same.contig[0] == 64 && same.div[0] == 64, "x * 1 keeps x");
  tl_axis_info row = facts(A, f, "row");
  cr_assert(row.rank == 2 && row.contig[0] == 64 && row.contig[1] == 1 && row.constancy[1] == 1);
  tl_axis_info rowb = facts(A, f, "rowb");
  cr_assert(rowb.contig[0] == 64 && rowb.constancy[1] == 64 && rowb.contig[1] == 1);
  tl_axis_info colb = facts(A, f, "colb");
  cr_assert(colb.contig[1] == 64 && colb.div[1] == 64 && colb.constancy[0] == 64);
  tl_axis_info ptr = facts(A, f, "ptr");
  cr_assert(ptr.contig[1] == 64 && ptr.div[1] == 64, "row*128 + (m0 + j) is contiguous along the columns");
  cr_assert(ptr.contig[0] == 1 && ptr.constancy[0] == 1 && ptr.constancy[1] == 1);
  tl_axis_info tr = facts(A, f, "tr");
  cr_assert(tr.contig[0] == 64 && tr.div[0] == 64 && tr.contig[1] == 1);
  tl_axis_info shifted = facts(A, f, "shifted");
  cr_assert(shifted.contig[0] == 16 && shifted.div[0] == 1);
  cr_assert_eq(facts(A, f, "both").contig[0], 1);
  tl_axis_info red = facts(A, f, "red");
  cr_assert(red.rank == 1 && red.div[0] == 128 && red.contig[0] == 1);
  /* a quotient by a power of two of a non-negative run: runs of equal elements (W4A16's kk / 8) */
  cr_assert_eq(facts(A, f, "q8").constancy[0], 8, "iota / 8: runs of 8");
  cr_assert_eq(facts(A, f, "q8o").constancy[0], 8, "(m0 + iota) / 8, m0 a multiple of 64");
  cr_assert_eq(facts(A, f, "offn").contig[0], 64);
  cr_assert_eq(facts(A, f, "q8n").constancy[0], 1, "s * 64 + iota may be negative: truncation is no floor");
  cr_assert_eq(facts(A, f, "s16").constancy[0], 16, "an arithmetic shift is a floor at any sign");
  cr_assert_eq(facts(A, f, "q6").constancy[0], 1, "6 is no power of two");
  tl_axis_info q8b = facts(A, f, "q8b");
  cr_assert(q8b.constancy[0] == 8 && q8b.constancy[1] == 64);
}

static const char *loop_ir =
    "kernel @k(%X: tensor<f32>[M, K], %n: i32) {\n"
    "grid {\n  %g = const 1 : i32\n  yield %g\n}\n"
    "body {\n"
    "  %K = dim %X, 1 : i32\n"
    "  %c0 = const 0 : i32\n"
    "  %c8 = const 8 : i32\n"
    "  %c16 = const 16 : i32\n"
    "  %c32 = const 32 : i32\n"
    "  %c64 = const 64 : i32\n"
    "  %c2 = const 2 : i32\n"
    "  %r1, %r2, %r3 = for %k0 = %c0 to %K step %c64 iter(%a = %c32, %b = %c64, %h = %c0) -> (i32, i32, i32) {\n"
    "    for %j = %c8 to %n step %c64 {\n"
    "      yield\n"
    "    }\n"
    "    %an = add %a, %c16 : i32\n"
    "    %bn = mul %b, %c2 : i32\n"
    "    %hn = add %h, %c2 : i32\n"
    "    %k3 = add %k0, %c8 : i32\n"
    "    %other = add %k3, %c2 : i32\n"
    "    yield %an, %bn, %hn\n"
    "  }\n"
    "}\n}\n";

Test(axisinfo, loops_reach_a_fixed_point) {
  tl_func *f = parse_one(loop_ir);
  tl_axis_analysis *A = tl_axis_analyze(f, NULL);
  cr_assert_eq(facts(A, f, "k0").div[0], 64, "lo 0, step 64");
  cr_assert_eq(facts(A, f, "j").div[0], 8, "lo 8, step 64");
  cr_assert_eq(facts(A, f, "a").div[0], 16, "32, 48, 64, ...");
  cr_assert(!facts(A, f, "a").is_const);
  cr_assert_eq(facts(A, f, "b").div[0], 64, "64, 128, 256, ...");
  cr_assert_eq(facts(A, f, "h").div[0], 2);
  cr_assert_eq(facts(A, f, "r1").div[0], 16);
  cr_assert_eq(facts(A, f, "r2").div[0], 64);
  cr_assert_eq(facts(A, f, "k3").div[0], 8);
  int64_t r = -1;
  cr_assert(tl_axis_residue(A, named(f, "other"), 8, &r));
  cr_assert_eq(r, 2, "k0 + 8 + 2 = 2 mod 8");
  cr_assert(tl_axis_residue(A, named(f, "k3"), 64, &r));
  cr_assert_eq(r, 8);
  cr_assert(!tl_axis_residue(A, named(f, "K"), 8, &r), "an unknown size has no known residue");
}

/* ---- randomized soundness: facts must hold of concrete values ----------------------- */

typedef struct rnd_fn {
  tl_func *f;
  tl_type i32;
  int32_t pid[2];
  int32_t sparam;   /* a scalar parameter assumed divisible by 16 */
  int32_t dim_sym;  /* dim of a symbol assumed divisible by 8 */
  int32_t dim_cst;  /* a constant dim, 48 */
} rnd_fn;

static tl_type tile_of(int rank, int n0, int n1) {
  int32_t shape[2] = {n0, n1};
  return rank ? tl_tile_type(TL_I32, rank, shape) : tl_scalar_type(TL_I32);
}

static int32_t gen(rnd_fn *R, int rank, int n0, int n1, int depth);

static int32_t gen_leaf(rnd_fn *R, int rank, int n0, int n1) {
  tl_func *f = R->f;
  static const int64_t consts[] = {0, 1, 2, 3, 7, 8, 12, 16, 31, 48, 64, 96, 128, -8, -5, 1024};
  int64_t c = consts[rand() % (int)(sizeof consts / sizeof consts[0])];
  tl_type t = tile_of(rank, n0, n1);
  if (rank == 0) {
    switch (rand() % 5) {
    case 0: return tl_build_const_i(f, &f->body, t, c, TL_NOLOC);
    case 1: return R->pid[rand() % 2];
    case 2: return R->sparam;
    case 3: return R->dim_sym;
    default: return R->dim_cst;
    }
  }
  int choice = rand() % 4;
  if (choice == 0) return tl_build_const_i(f, &f->body, t, c, TL_NOLOC);
  if (choice == 1) {
    int32_t s = gen(R, 0, 1, 1, 1);
    int32_t op = tl_op_new(f, &f->body, TL_OP_splat, &s, 1, &t, 1, TL_NOLOC);
    return tl_op_result(f, op, 0);
  }
  if (rank == 1) {
    int32_t op = tl_op_new(f, &f->body, TL_OP_iota, NULL, 0, &t, 1, TL_NOLOC);
    return tl_op_result(f, op, 0);
  }
  if (choice == 2) { /* expand a 1-D value along one axis and broadcast it */
    int axis = rand() % 2;
    int n = axis == 0 ? n1 : n0;
    int32_t v = gen(R, 1, n, 1, 1);
    tl_type et = axis == 0 ? tile_of(2, 1, n1) : tile_of(2, n0, 1);
    int32_t e = tl_op_new(f, &f->body, TL_OP_expand_dims, &v, 1, &et, 1, TL_NOLOC);
    tl_op_at(f, e)->axis = axis;
    int32_t ev = tl_op_result(f, e, 0);
    if (tl_type_eq(&et, &t)) return ev;
    int32_t b = tl_op_new(f, &f->body, TL_OP_broadcast, &ev, 1, &t, 1, TL_NOLOC);
    return tl_op_result(f, b, 0);
  }
  int32_t v = gen(R, 2, n1, n0, 1);
  int32_t op = tl_op_new(f, &f->body, TL_OP_trans, &v, 1, &t, 1, TL_NOLOC);
  return tl_op_result(f, op, 0);
}

static int32_t gen(rnd_fn *R, int rank, int n0, int n1, int depth) {
  tl_func *f = R->f;
  if (depth <= 0 || rand() % 4 == 0) return gen_leaf(R, rank, n0, n1);
  tl_type t = tile_of(rank, n0, n1);
  int32_t a = gen(R, rank, n0, n1, depth - 1);
  switch (rand() % 7) {
  case 0: return tl_build_binary(f, &f->body, TL_OP_add, a, gen(R, rank, n0, n1, depth - 1), TL_NOLOC);
  case 1: return tl_build_binary(f, &f->body, TL_OP_sub, a, gen(R, rank, n0, n1, depth - 1), TL_NOLOC);
  case 2: { /* multiply by a small constant (no overflow) */
    int64_t k = 1 + rand() % 16;
    return tl_build_binary(f, &f->body, TL_OP_mul, a, tl_build_const_i(f, &f->body, t, k, TL_NOLOC), TL_NOLOC);
  }
  case 3: {
    int64_t k = rand() % 5;
    return tl_build_binary(f, &f->body, TL_OP_shl, a, tl_build_const_i(f, &f->body, t, k, TL_NOLOC), TL_NOLOC);
  }
  case 4: {
    int64_t k = (int64_t)1 << (rand() % 5);
    tl_opcode opc = rand() % 2 ? TL_OP_rem : TL_OP_div;
    return tl_build_binary(f, &f->body, opc, a, tl_build_const_i(f, &f->body, t, k, TL_NOLOC), TL_NOLOC);
  }
  case 5: {
    int32_t b = gen(R, rank, n0, n1, depth - 1);
    tl_type bt = t;
    bt.dtype = TL_I1;
    int32_t ops[2] = {a, b};
    int32_t c = tl_op_new(f, &f->body, TL_OP_cmp, ops, 2, &bt, 1, TL_NOLOC);
    tl_op_at(f, c)->kind = TL_CMP_LT;
    int32_t sel[3] = {tl_op_result(f, c, 0), a, gen(R, rank, n0, n1, depth - 1)};
    int32_t s = tl_op_new(f, &f->body, TL_OP_select, sel, 3, &t, 1, TL_NOLOC);
    return tl_op_result(f, s, 0);
  }
  default: return tl_build_binary(f, &f->body, rand() % 2 ? TL_OP_min : TL_OP_max, a,
                                  gen(R, rank, n0, n1, depth - 1), TL_NOLOC);
  }
}

static int64_t wrap32(int64_t x) { return (int64_t)(int32_t)(uint32_t)(uint64_t)x; }

static void eval_func(tl_func *f, int64_t **vals, const int64_t *pid, int64_t s, int64_t dsym) {
  for (int i = 0; i < f->body.ops.len; i++) {
    tl_op *o = tl_op_at(f, f->body.ops.data[i]);
    tl_type *t = &tl_val(f, o->res[0])->type;
    int64_t n = tl_type_numel(t);
    int64_t *out = calloc((size_t)n, sizeof(int64_t));
    int32_t cols = t->kind == TL_KIND_TILE && t->rank == 2 ? t->shape[1] : 1;
    for (int64_t e = 0; e < n; e++) {
      int64_t r = e / cols, c = e % cols, x = 0;
      int64_t a = 0, b = 0;
      /* elementwise operands: same element count as the result, or a scalar
       * (shape ops such as broadcast read their operand themselves below) */
      for (int k = 0; k < 2 && k < o->nopnd; k++) {
        if (!vals[o->opnd[k]]) continue;
        int64_t on = tl_type_numel(&tl_val(f, o->opnd[k])->type);
        int64_t v = on == 1 ? vals[o->opnd[k]][0] : on == n ? vals[o->opnd[k]][e] : 0;
        if (k == 0) a = v; else b = v;
      }
      switch (o->opc) {
      case TL_OP_const: x = o->ival; break;
      case TL_OP_program_id: x = pid[o->axis]; break;
      case TL_OP_dim: x = o->axis == 0 ? dsym : 48; break;
      case TL_OP_iota: x = e; break;
      case TL_OP_splat: x = vals[o->opnd[0]][0]; break;
      case TL_OP_add: x = a + b; break;
      case TL_OP_sub: x = a - b; break;
      case TL_OP_mul: x = a * b; break;
      case TL_OP_shl: x = a * ((int64_t)1 << b); break;
      case TL_OP_div: x = a / b; break;
      case TL_OP_rem: x = a % b; break;
      case TL_OP_min: x = a < b ? a : b; break;
      case TL_OP_max: x = a > b ? a : b; break;
      case TL_OP_cmp: x = a < b; break;
      case TL_OP_select: x = vals[o->opnd[0]][e] ? vals[o->opnd[1]][e] : vals[o->opnd[2]][e]; break;
      case TL_OP_expand_dims: x = vals[o->opnd[0]][e]; break;
      case TL_OP_broadcast: {
        tl_type *st = &tl_val(f, o->opnd[0])->type;
        int64_t sr = st->shape[0] == 1 ? 0 : r, sc = st->shape[1] == 1 ? 0 : c;
        x = vals[o->opnd[0]][sr * st->shape[1] + sc];
        break;
      }
      case TL_OP_trans: x = vals[o->opnd[0]][c * t->shape[0] + r]; break;
      default: cr_assert_fail("unexpected op %s", tl_opinfo_table[o->opc].name);
      }
      cr_assert_eq(wrap32(x), x, "the random expression overflowed i32");
      out[e] = x;
    }
    vals[o->res[0]] = out;
  }
  (void)s;
}

static void check_facts(tl_func *f, int32_t v, const int64_t *x, const tl_axis_info *in) {
  tl_type *t = &tl_val(f, v)->type;
  int rank = t->kind == TL_KIND_TILE ? t->rank : 0;
  int32_t shape[2] = {rank ? t->shape[0] : 1, rank == 2 ? t->shape[1] : 1};
  int dims = rank ? rank : 1;
  if (in->is_const)
    for (int64_t e = 0; e < tl_type_numel(t); e++) cr_assert_eq(x[e], in->value, "value %d is not constant", v);
  for (int d = 0; d < dims; d++) {
    int64_t C = in->contig[d], K = in->constancy[d], D = in->div[d];
    cr_assert(C >= 1 && K >= 1 && D >= 1 && C <= shape[d] && K <= shape[d]);
    int64_t stride = (rank == 2 && d == 0) ? shape[1] : 1;
    for (int64_t e = 0; e < tl_type_numel(t); e++) {
      int64_t i = rank == 2 ? (d == 0 ? e / shape[1] : e % shape[1]) : e;
      int64_t run = e - (i % C) * stride, krun = e - (i % K) * stride;
      cr_assert_eq(x[e], x[run] + i % C, "value %d: not contiguous in runs of %lld along %d", v, (long long)C, d);
      cr_assert_eq(x[e], x[krun], "value %d: not constant in runs of %lld along %d", v, (long long)K, d);
      if (i % C == 0) cr_assert_eq(x[e] % D, 0, "value %d: %lld not divisible by %lld", v, (long long)x[e], (long long)D);
    }
  }
}

Test(axisinfo, random_expressions_are_sound) {
  srand(2024);
  static const int sizes[] = {1, 2, 4, 8, 16, 32};
  int checked = 0, nontrivial = 0;
  for (int trial = 0; trial < 300; trial++) {
    tl_module *m = tl_module_new(&ctx);
    tl_func *f = tl_func_new(m, "rnd", TL_NOLOC);
    tl_sym sym = {"M", 0, 0};
    tl_vec_push(&ctx.arena, &f->syms, sym);
    tl_param x = {.name = "X", .is_tensor = true, .dtype = TL_F32, .rank = 2};
    x.dims[0].sym = 0;
    x.dims[1].is_const = true;
    x.dims[1].value = 48;
    int32_t xi = tl_func_add_param(f, &x);
    int32_t xv = f->params.data[xi].value;
    tl_param sp = {.name = "s", .dtype = TL_I32};
    int32_t si = tl_func_add_param(f, &sp);
    rnd_fn R = {f, tl_scalar_type(TL_I32), {0, 0}, f->params.data[si].value, 0, 0};
    for (int a = 0; a < 2; a++) {
      int32_t op = tl_op_new(f, &f->body, TL_OP_program_id, NULL, 0, &R.i32, 1, TL_NOLOC);
      tl_op_at(f, op)->axis = a;
      R.pid[a] = tl_op_result(f, op, 0);
    }
    for (int a = 0; a < 2; a++) {
      int32_t op = tl_op_new(f, &f->body, TL_OP_dim, &xv, 1, &R.i32, 1, TL_NOLOC);
      tl_op_at(f, op)->axis = a;
      if (a == 0) R.dim_sym = tl_op_result(f, op, 0);
      else R.dim_cst = tl_op_result(f, op, 0);
    }
    int rank = rand() % 3;
    int n0 = sizes[rand() % 6], n1 = sizes[rand() % 6];
    gen(&R, rank, rank ? n0 : 1, rank == 2 ? n1 : 1, 4);
    int64_t sym_div[1] = {8}, param_div[2] = {0, 16};
    tl_axis_assume as = {sym_div, param_div};
    tl_axis_analysis *A = tl_axis_analyze(f, &as);
    for (int run = 0; run < 4; run++) {
      int64_t **vals = calloc((size_t)f->values.len, sizeof(int64_t *));
      int64_t pid[2] = {rand() % 1000, rand() % 7};
      int64_t s = 16 * (int64_t)(rand() % 101 - 50), dsym = 8 * (int64_t)(1 + rand() % 50);
      int64_t sv[1] = {s};
      vals[R.sparam] = sv;
      eval_func(f, vals, pid, s, dsym);
      for (int v = 0; v < f->values.len; v++) {
        if (!vals[v] || tl_val(f, v)->type.dtype != TL_I32) continue;
        tl_axis_info in = tl_axis_get(A, v);
        check_facts(f, v, vals[v], &in);
        checked++;
        if (in.contig[0] > 1 || tl_axis_elem_div(&in) > 1 || (in.rank == 2 && in.contig[1] > 1)) nontrivial++;
      }
      for (int v = 0; v < f->values.len; v++)
        if (vals[v] && v != R.sparam) free(vals[v]);
      free(vals);
    }
  }
  cr_assert_gt(checked, 1000);
  cr_assert_gt(nontrivial, checked / 4, "the facts should often say something (%d of %d)", nontrivial, checked);
}

/* ---- access facts (align_check) -------------------------------------------------------- */

extern const tl_pass tl_pass_align_check;

static const char *access_ir =
    "kernel @k(%A: tensor<bf16>[M, K], %B: tensor<f32>[N], %C: tensor<bf16>[M, 100], %n: f32) {\n"
    "grid {\n  %g = const 1 : i32\n  yield %g\n}\n"
    "body {\n"
    "  %K = dim %A, 1 : i32\n"
    "  %pid = program_id 0 : i32\n"
    "  %c128 = const 128 : i32\n"
    "  %m0 = mul %pid, %c128 : i32\n"
    "  %c0 = const 0 : i32\n"
    "  %c2 = const 2 : i32\n"
    "  %c64 = const 64 : i32\n"
    "  %la = load %A[%m0 : 128, %c2 : 64] : tile<128x64xbf16>\n"
    "  %lb = load %B[%m0 : 128] : tile<128xf32>\n"
    "  %lc = load %C[%pid, %c0 : 64] : tile<64xbf16>\n"
    "  %ld = load %A[%m0 : 16, %pid] : tile<16xbf16>\n"
    "  %le = load %A[%pid, %c64 : 4] : tile<4xbf16>\n"
    "}\n}\n";

Test(axisinfo, access_facts_of_align_check) {
  tl_func *f = parse_one(access_ir);
  cr_assert_null(tl_access_facts_get(f, 0));
  cr_assert_eq(tl_func_required_key(f), 0);
  tl_pass_opts o = {0};
  cr_assert(tl_pass_align_check.run(f, &o));
  const tl_access_facts *la = tl_access_facts_get(f, tl_val(f, named(f, "la"))->def);
  const tl_access_facts *lb = tl_access_facts_get(f, tl_val(f, named(f, "lb"))->def);
  const tl_access_facts *lc = tl_access_facts_get(f, tl_val(f, named(f, "lc"))->def);
  const tl_access_facts *ld = tl_access_facts_get(f, tl_val(f, named(f, "ld"))->def);
  const tl_access_facts *le = tl_access_facts_get(f, tl_val(f, named(f, "le"))->def);
  cr_assert(la && lb && lc && ld && le);
  cr_assert_null(tl_access_facts_get(f, tl_val(f, named(f, "m0"))->def), "not an access");
  /* A[m0:+128, 2:+64] bf16: 16-byte vectors want 8, the start proves 2 */
  cr_assert(la->param == 0 && la->tensor == 0 && la->len == 64 && la->vec_want == 8);
  cr_assert(la->vec == 2 && la->misaligned);
  cr_assert_eq(la->requires, TL_SPEC_BASE16 | TL_SPEC_LAST_STRIDE1 | TL_SPEC_STRIDES16 | TL_SPEC_LASTDIM16);
  /* B[m0:+128] f32: 4 a vector, rank 1 needs no stride bit */
  cr_assert(lb->tensor == 1 && lb->vec_want == 4 && lb->vec == 4 && !lb->misaligned && lb->start_div == 128);
  cr_assert_eq(lb->requires, TL_SPEC_BASE16 | TL_SPEC_LAST_STRIDE1 | TL_SPEC_LASTDIM16);
  /* C's last dim is the constant 100: vectors of 4 at most, decided now */
  cr_assert(lc->tensor == 2 && lc->vec == 4);
  cr_assert_eq(lc->requires, TL_SPEC_BASE16 | TL_SPEC_LAST_STRIDE1 | TL_SPEC_STRIDES16);
  /* last dim indexed: no vectors, nothing required */
  cr_assert(ld->len == 0 && ld->vec == 1 && ld->requires == 0);
  /* a 4-long view: an 8-byte vector at most */
  cr_assert(le->vec_want == 4 && le->vec == 4);
  uint32_t want = TL_SPEC_TENSOR_BITS(0, la->requires | le->requires) | TL_SPEC_TENSOR_BITS(1, lb->requires) |
                  TL_SPEC_TENSOR_BITS(2, lc->requires);
  cr_assert_eq(tl_func_required_key(f), want);
}

/* ---- the specialization key ------------------------------------------------------------ */

static uint32_t bits_of(uint32_t key, int t) { return (key >> (TL_SPEC_BITS_PER_TENSOR * t)) & 0xf; }

Test(axisinfo, spec_key_for_args) {
  int64_t shape2[2] = {37, 64}, strides_padded[2] = {72, 1}, strides_odd[2] = {65, 1}, strides_colmajor[2] = {1, 37};
  int64_t shape_ragged[2] = {5, 63};
  tl_spec_arg args[6] = {
      {true, 0x10000, 2, shape2, NULL, 2},             /* compact bf16 64-wide rows: all bits */
      {false, 0, 0, NULL, NULL, 0},                    /* a scalar takes no ordinal */
      {true, 0x10008, 2, shape2, strides_padded, 2},   /* base only 8-byte aligned */
      {true, 0x20000, 2, shape2, strides_odd, 2},      /* odd row stride */
      {true, 0x30000, 2, shape2, strides_colmajor, 2}, /* column-major */
      {true, 0x40000, 2, shape_ragged, NULL, 2},       /* 63 columns */
  };
  uint32_t key = tl_spec_key_for_args(args, 6);
  uint32_t all = TL_SPEC_BASE16 | TL_SPEC_LAST_STRIDE1 | TL_SPEC_STRIDES16 | TL_SPEC_LASTDIM16;
  cr_assert_eq(bits_of(key, 0), all);
  cr_assert_eq(bits_of(key, 1), all & ~(uint32_t)TL_SPEC_BASE16);
  cr_assert_eq(bits_of(key, 2), all & ~(uint32_t)TL_SPEC_STRIDES16);
  cr_assert_eq(bits_of(key, 3), TL_SPEC_BASE16 | TL_SPEC_LASTDIM16, "stride[-1] = 37, stride[0] = 1");
  cr_assert_eq(bits_of(key, 4), TL_SPEC_BASE16 | TL_SPEC_LAST_STRIDE1, "63 columns: rows of 126 bytes");
  cr_assert_eq(key >> 20, 0);

  /* random tensors: each bit must match its definition */
  srand(99);
  for (int trial = 0; trial < 2000; trial++) {
    int eb = 1 << (rand() % 4), rank = 1 + rand() % 3;
    int64_t shape[3], strides[3];
    for (int d = 0; d < rank; d++) {
      static const int64_t pick[] = {1, 2, 7, 8, 16, 17, 31, 64, 127, 128};
      shape[d] = pick[rand() % 10];
      strides[d] = rand() % 3 == 0 ? pick[rand() % 10] : 0;
    }
    int64_t run = 1;
    for (int d = rank - 1; d >= 0; d--) {
      if (!strides[d]) strides[d] = run;
      run *= shape[d] * 2;
    }
    uint64_t addr = 0x7f0000000000ull + (uint64_t)(rand() % 4) * 4 * (uint64_t)eb;
    tl_spec_arg a = {true, addr, rank, shape, strides, eb};
    uint32_t b = tl_spec_key_for_args(&a, 1);
    bool base = addr % 16 == 0, last = strides[rank - 1] == 1 || shape[rank - 1] == 1, others = true;
    for (int d = 0; d + 1 < rank; d++)
      if (shape[d] > 1 && (strides[d] * eb) % 16) others = false;
    bool edge = (shape[rank - 1] * eb) % 16 == 0;
    cr_assert_eq(!!(b & TL_SPEC_BASE16), base);
    cr_assert_eq(!!(b & TL_SPEC_LAST_STRIDE1), last);
    cr_assert_eq(!!(b & TL_SPEC_STRIDES16), others);
    cr_assert_eq(!!(b & TL_SPEC_LASTDIM16), edge);
  }

  /* more tensors than the key has room for: the extra ones take no bits */
  tl_spec_arg many[10];
  for (int i = 0; i < 10; i++) many[i] = (tl_spec_arg){true, 0x1000, 2, shape2, NULL, 2};
  uint32_t k10 = tl_spec_key_for_args(many, 10);
  cr_assert_eq(k10, 0xffffffffu);
  cr_assert_eq(tl_spec_key_for_args(many, 0), 0);
}

Test(axisinfo, tensors_past_the_key_stay_scalar) {
  /* nine tensors: the ninth has no slot in the key, so no vector variant */
  char text[2048];
  int n = snprintf(text, sizeof text, "kernel @k(");
  for (int t = 0; t < 9; t++) n += snprintf(text + n, sizeof text - (size_t)n, "%s%%T%d: tensor<f32>[N]", t ? ", " : "", t);
  snprintf(text + n, sizeof text - (size_t)n,
           ") {\ngrid {\n  %%g = const 1 : i32\n  yield %%g\n}\nbody {\n  %%c0 = const 0 : i32\n"
           "  %%l7 = load %%T7[%%c0 : 64] : tile<64xf32>\n  %%l8 = load %%T8[%%c0 : 64] : tile<64xf32>\n}\n}\n");
  tl_func *f = parse_one(text);
  tl_pass_opts o = {0};
  cr_assert(tl_pass_align_check.run(f, &o));
  const tl_access_facts *l7 = tl_access_facts_get(f, tl_val(f, named(f, "l7"))->def);
  const tl_access_facts *l8 = tl_access_facts_get(f, tl_val(f, named(f, "l8"))->def);
  cr_assert(l7->tensor == 7 && l7->vec == 4 && l7->requires != 0);
  cr_assert(l8->tensor == -1 && l8->vec_want == 4 && l8->vec == 1 && l8->requires == 0);
  cr_assert_eq(tl_func_required_key(f), TL_SPEC_TENSOR_BITS(7, l7->requires));
}
