/* Unit tests of the IR core (lib/ir.c): types, opcode table, building. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ctx_fixture.h"

TL_CTX_FIXTURE()

TestSuite(ir_build, .init = setup, .fini = teardown);

Test(ir_build, dtype_names_round_trip) {
  for (int t = TL_I1; t < TL_NUM_DTYPES; t++) {
    const char *n = tl_dtype_name((tl_dtype)t);
    cr_assert_eq(tl_dtype_from_name(n, strlen(n)), t, "%s", n);
  }
  cr_assert_eq(tl_dtype_from_name("bf1", 3), TL_VOID);
  cr_assert_eq(tl_dtype_from_name("bf16x", 5), TL_VOID);
  cr_assert_eq(tl_dtype_bytes(TL_I1), 1);
  cr_assert_eq(tl_dtype_bits(TL_I1), 1);
  cr_assert_eq(tl_dtype_bytes(TL_BF16), 2);
  cr_assert_eq(tl_dtype_bytes(TL_F8E5M2), 1);
  cr_assert(tl_dtype_is_float(TL_F8E4M3));
  cr_assert(!tl_dtype_is_float(TL_U8));
  cr_assert(tl_dtype_is_int(TL_U8));
  cr_assert(!tl_dtype_is_signed(TL_U8));
  cr_assert(tl_dtype_is_signed(TL_I8));
  cr_assert(!tl_dtype_is_signed(TL_I1));
}

Test(ir_build, opcode_table_matches_names) {
  for (int i = 0; i < TL_NUM_OPS; i++) {
    const char *n = tl_opinfo_table[i].name;
    cr_assert_not_null(n);
    cr_assert_eq(tl_opcode_from_name(n, strlen(n)), i, "%s", n);
  }
  cr_assert_eq(tl_opcode_from_name("adds", 4), TL_NUM_OPS);
  cr_assert(tl_opinfo_table[TL_OP_add].flags & TL_COMM);
  cr_assert_eq(tl_opinfo_table[TL_OP_select].nopnd, 3);
  cr_assert_eq(tl_opinfo_table[TL_OP_load].nopnd, -1);
}

Test(ir_build, type_helpers) {
  srand(7);
  for (int trial = 0; trial < 50; trial++) {
    int rank = 1 + rand() % TL_MAX_RANK;
    int32_t shape[TL_MAX_RANK];
    int64_t numel = 1;
    for (int i = 0; i < rank; i++) {
      shape[i] = 1 << (rand() % 5);
      numel *= shape[i];
    }
    tl_type t = tl_tile_type(TL_F16, rank, shape);
    cr_assert_eq(tl_type_numel(&t), numel);
    tl_type u = t;
    u.layout = 3;
    cr_assert(tl_type_eq(&t, &u), "layout must be ignored");
    u.shape[rank - 1] *= 2;
    cr_assert(!tl_type_eq(&t, &u));
  }
  int32_t s[2] = {128, 64};
  tl_type t = tl_tile_type(TL_BF16, 2, s);
  char buf[64];
  cr_assert_str_eq(tl_type_str(&t, buf, sizeof buf), "tile<128x64xbf16>");
  tl_type sc = tl_scalar_type(TL_I32);
  cr_assert_str_eq(tl_type_str(&sc, buf, sizeof buf), "i32");
  tl_type te = tl_tensor_type(TL_BF16, 2);
  cr_assert_str_eq(tl_type_str(&te, buf, sizeof buf), "tensor<bf16, 2>");
  cr_assert(!tl_type_eq(&sc, &te));
  char tiny[5];
  tl_type_str(&t, tiny, sizeof tiny); /* truncates, stays terminated */
  cr_assert_eq(strlen(tiny), 4);
}

Test(ir_build, build_ids_survive_growth) {
  if (setjmp(jb)) cr_assert_fail("internal error: %s", tl_ctx_render_diags(&ctx));
  tl_module *m = tl_module_new(&ctx);
  tl_func *f = tl_func_new(m, "k", TL_NOLOC);
  cr_assert_eq(m->funcs.len, 1);
  tl_param p = {.name = "X", .is_tensor = true, .dtype = TL_F32, .rank = 1};
  int32_t pi = tl_func_add_param(f, &p);
  int32_t xv = f->params.data[pi].value;
  cr_assert_eq(tl_val(f, xv)->type.kind, TL_KIND_TENSOR);
  cr_assert_eq(tl_val(f, xv)->def, -1);

  int32_t shape[1] = {64};
  tl_type tt = tl_tile_type(TL_F32, 1, shape);
  int32_t c1 = tl_build_const_f(f, &f->body, tt, 1.5, TL_NOLOC);
  int32_t first = c1;
  /* many ops: forces f->ops and f->values to grow several times */
  int n = 300 + rand() % 37;
  for (int i = 0; i < n; i++) c1 = tl_build_binary(f, &f->body, TL_OP_add, c1, first, TL_NOLOC);
  cr_assert_eq(f->body.ops.len, n + 1);
  cr_assert_eq(tl_val(f, c1)->def, f->body.ops.data[n]);
  cr_assert(tl_type_eq(&tl_val(f, c1)->type, &tt));
  int32_t *uses = tl_count_uses(f);
  cr_assert_eq(uses[first], n + 1); /* both operands of the first add + one per later add */
  cr_assert_eq(uses[c1], 0);

  int32_t cmpv = tl_build_binary(f, &f->body, TL_OP_cmp, c1, first, TL_NOLOC);
  cr_assert_eq(tl_val(f, cmpv)->type.dtype, TL_I1);
  cr_assert_eq(tl_val(f, cmpv)->type.shape[0], 64);

  /* a for op with a region: parent links */
  int32_t i32s = 0;
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t lo = tl_build_const_i(f, &f->body, i32, 0, TL_NOLOC);
  int32_t ops[4] = {lo, lo, lo, first};
  tl_type rt[1] = {tt};
  int32_t forop = tl_op_new(f, &f->body, TL_OP_for, ops, 4, rt, 1, TL_NOLOC);
  tl_op_add_regions(f, forop, 1);
  tl_region *body = &tl_op_at(f, forop)->regions[0];
  cr_assert_eq(body->owner, forop);
  int32_t iv = tl_region_add_arg(f, body, forop, i32);
  int32_t acc = tl_region_add_arg(f, body, forop, tt);
  cr_assert_eq(tl_val(f, iv)->region_owner, forop);
  cr_assert_eq(tl_val(f, acc)->index, 1);
  int32_t sum = tl_build_binary(f, body, TL_OP_add, acc, first, TL_NOLOC);
  int32_t y = tl_op_new(f, body, TL_OP_yield, &sum, 1, NULL, 0, TL_NOLOC);
  cr_assert_eq(tl_op_at(f, y)->parent, forop);
  cr_assert_eq(tl_op_at(f, forop)->parent, -1);
  (void)i32s;

  /* replace uses, then erase */
  int32_t before = tl_count_uses(f)[first];
  tl_replace_uses(f, first, c1);
  int32_t *u2 = tl_count_uses(f);
  cr_assert_eq(u2[first], 0);
  cr_assert(u2[c1] >= before);
  int pos = f->body.ops.len - 1;
  cr_assert_eq(f->body.ops.data[pos], forop);
  tl_op_erase(f, &f->body, pos);
  cr_assert(tl_op_at(f, forop)->flags & TL_OPF_DEAD);
  cr_assert(tl_op_at(f, y)->flags & TL_OPF_DEAD);
  cr_assert_eq(tl_count_uses(f)[sum], 0);
}

Test(ir_build, region_insert_positions) {
  if (setjmp(jb)) cr_assert_fail("internal error");
  tl_module *m = tl_module_new(&ctx);
  tl_func *f = tl_func_new(m, "k", TL_NOLOC);
  tl_type i32 = tl_scalar_type(TL_I32);
  int32_t a = tl_build_const_i(f, &f->body, i32, 11, TL_NOLOC);
  int32_t b = tl_build_const_i(f, &f->body, i32, 13, TL_NOLOC);
  int32_t op = tl_op_new(f, NULL, TL_OP_const, NULL, 0, &i32, 1, TL_NOLOC);
  tl_region_insert(f, &f->body, 1, op);
  cr_assert_eq(f->body.ops.len, 3);
  cr_assert_eq(f->body.ops.data[0], tl_val(f, a)->def);
  cr_assert_eq(f->body.ops.data[1], op);
  cr_assert_eq(f->body.ops.data[2], tl_val(f, b)->def);
  tl_region_insert(f, &f->body, 0, op);
  cr_assert_eq(f->body.ops.data[0], op);
  tl_region_remove(&f->body, 0);
  tl_region_remove(&f->body, 1);
  cr_assert_eq(f->body.ops.len, 2);
  cr_assert_eq(f->body.ops.data[1], tl_val(f, b)->def);
  tl_region_insert(f, &f->body, -1, op);
  cr_assert_eq(f->body.ops.data[2], op);
}
