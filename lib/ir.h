/* ir.h: tile IR.  SSA values in per-function tables, referenced by int32 ids
 * (QBE style); ops in per-function tables; structured regions (for/if) with
 * block arguments for loop-carried values.  See docs/ir.md for the text form.
 *
 * Ownership: a tl_module and everything in it live in the arena of its
 * tl_ctx.  Ids stay valid for the life of the function; an op that is
 * removed is marked TL_OPF_DEAD and unlinked from its region. */
#ifndef TILEC_IR_H
#define TILEC_IR_H

#include "util.h"

#define TL_MAX_RANK 4
#define TL_MAX_TILE_ELEMS (1 << 20)  /* largest tile, in elements */

/* ---- element types ------------------------------------------------------ */
typedef enum tl_dtype {
  TL_VOID = 0,
  TL_I1, TL_I8, TL_I16, TL_I32, TL_I64, TL_U8,
  TL_F16, TL_BF16, TL_F32, TL_F8E4M3, TL_F8E5M2,
  TL_NUM_DTYPES
} tl_dtype;

const char *tl_dtype_name(tl_dtype t);        /* "bf16" */
tl_dtype tl_dtype_from_name(const char *s, size_t n); /* TL_VOID if none */
int tl_dtype_bits(tl_dtype t);                /* i1 -> 1 (stored as 8) */
int tl_dtype_bytes(tl_dtype t);               /* storage bytes: i1 -> 1 */
bool tl_dtype_is_float(tl_dtype t);
bool tl_dtype_is_int(tl_dtype t);             /* i1..i64, u8 */
bool tl_dtype_is_signed(tl_dtype t);          /* i8..i64 */

/* dot operand types (docs/language.md 8.3, "dot"): the k of one tensor-core
 * instruction, which is always 32 bytes of a K row: 16 for f16 / bf16, 32 for
 * the 8-bit types (f8e4m3, f8e5m2, i8), 8 for f32 (read as tf32); 0 for a type
 * a dot does not take.  The accumulator is i32 for i8 operands, else f32. */
int tl_dot_kstep(tl_dtype t);
tl_dtype tl_dot_acc_dtype(tl_dtype operand);
bool tl_dtype_is_fp8(tl_dtype t);             /* f8e4m3, f8e5m2 */

/* ---- types -------------------------------------------------------------- */
typedef enum tl_kind {
  TL_KIND_NONE = 0,
  TL_KIND_SCALAR, /* one value, uniform across the program (CTA) */
  TL_KIND_TILE,   /* compile-time shape, each dim a power of two */
  TL_KIND_TENSOR  /* global-memory tensor parameter; rank, run-time sizes */
} tl_kind;

typedef struct tl_type {
  uint8_t kind;  /* tl_kind */
  uint8_t dtype; /* tl_dtype */
  uint8_t rank;  /* tiles and tensors */
  uint8_t pad_;
  int32_t shape[TL_MAX_RANK]; /* tiles only */
  int32_t layout;             /* index into tl_func.layouts after layout assignment; -1 = none */
} tl_type;

tl_type tl_scalar_type(tl_dtype dt);
tl_type tl_tile_type(tl_dtype dt, int rank, const int32_t *shape);
tl_type tl_tensor_type(tl_dtype dt, int rank);
bool tl_type_eq(const tl_type *a, const tl_type *b); /* ignores layout */
int64_t tl_type_numel(const tl_type *t);             /* tiles: product; scalars: 1 */
/* "tile<128x64xbf16>", "i32", "tensor<bf16, 2>"; into buf, returns buf. */
char *tl_type_str(const tl_type *t, char *buf, size_t n);

/* ---- opcodes ------------------------------------------------------------- */
enum { TL_PURE = 1, TL_COMM = 2, TL_EW = 4, TL_TERM = 8, TL_REGION = 16, TL_READ = 32 };

typedef enum tl_opcode {
#define OP(id, text, nopnd, nres, flags) TL_OP_##id,
#include "ops.def"
#undef OP
  TL_NUM_OPS
} tl_opcode;

typedef struct tl_opinfo {
  const char *name;
  int nopnd, nres; /* -1 variadic */
  int flags;
} tl_opinfo;
extern const tl_opinfo tl_opinfo_table[TL_NUM_OPS];
tl_opcode tl_opcode_from_name(const char *s, size_t n); /* TL_NUM_OPS if none */

typedef enum { TL_CMP_EQ, TL_CMP_NE, TL_CMP_LT, TL_CMP_LE, TL_CMP_GT, TL_CMP_GE } tl_cmp_pred;
typedef enum { TL_RED_SUM, TL_RED_MAX, TL_RED_MIN } tl_reduce_kind;
/* FETCH_ADD: a scalar i32 view, one result (the old value), once per program, acq_rel at
 * device scope over the program's accesses (docs/language.md 7); the others have no result. */
typedef enum { TL_ATOMIC_ADD, TL_ATOMIC_MAX, TL_ATOMIC_MIN, TL_ATOMIC_FETCH_ADD } tl_atomic_kind;
typedef enum { TL_RAND_UNIFORM, TL_RAND_NORMAL, TL_RAND_INT } tl_rand_kind;
typedef enum { TL_SCAN_SUM, TL_SCAN_MAX } tl_scan_kind;
typedef enum { TL_ARG_MAX, TL_ARG_MIN } tl_arg_kind;
/* dot's `kind`: the operands as given, or f32 operands rounded to tf32 (the
 * `precision = "tf32"` of the language; text form `dot tf32 %a, %b, %acc`) */
typedef enum { TL_DOT_EXACT, TL_DOT_TF32 } tl_dot_precision;

/* ---- values, ops, regions ------------------------------------------------- */
typedef struct tl_value {
  tl_type type;
  int32_t def;    /* defining op id; -1 for a region argument or a parameter */
  int32_t index;  /* result index, region-argument index, or parameter index */
  int32_t region_owner; /* for region args: owning op id; for params: -1 */
  const char *name;     /* user's name, a hint for printing; may be NULL */
} tl_value;

typedef struct tl_region {
  TL_VEC(int32_t) args; /* value ids of block arguments */
  TL_VEC(int32_t) ops;  /* op ids in program order */
  int32_t owner;        /* op owning this region; -1 for f->grid and f->body.
                           Set by tl_func_new / tl_op_add_regions; tl_op_new and
                           tl_region_insert copy it into the op's `parent`. */
} tl_region;

enum { TL_OPF_DEAD = 1 };

typedef struct tl_op {
  uint16_t opc;   /* tl_opcode */
  uint16_t flags; /* TL_OPF_* */
  int32_t nopnd, nres, nregions;
  int32_t *opnd;  /* value ids */
  int32_t *res;   /* value ids */
  tl_region *regions;
  int32_t parent; /* op owning the region this op is in; -1 = function level */
  /* attributes */
  int64_t ival;
  double fval;
  int32_t axis;
  int32_t kind;
  int32_t dims[TL_MAX_RANK];
  /* require: the condition as written (names the values an error shows) and the message (NULL: none);
   * arena strings, shared by copies of the op */
  const char *req_text, *req_msg;
  tl_loc loc;
} tl_op;

/* ---- kernels ---------------------------------------------------------------- */
typedef struct tl_dimspec {
  bool is_const;   /* a literal or tile constant: checked at launch */
  int64_t value;   /* the constant */
  int32_t sym;     /* else: index into tl_func.syms */
} tl_dimspec;

typedef struct tl_param {
  const char *name;
  bool is_tensor;
  tl_dtype dtype;
  int rank;
  tl_dimspec dims[TL_MAX_RANK];
  int32_t value;   /* the value id standing for this parameter */
  tl_loc loc;
  /* @zeroed(NAME): the kernel needs this tensor to hold zeros on entry (a counter or an atomic
   * accumulator it leaves as it found it); tools that make data zero it before every launch
   * (docs/language.md "Zeroed tensors").  Changes no code. */
  bool zeroed;
  /* Per dimension, which tile constant every range view `x : x + C` of this tensor takes as its
   * length (the front end: C spelled as that constant's name): 0 no range view, i + 1 consts[i],
   * -1 views of other lengths or lengths not named by a constant.  What a form of the kernel with
   * another tile sets by name (passes/kmajor_form.c).  Not in the text IR; changes no code. */
  int16_t view_const[TL_MAX_RANK];
} tl_param;

typedef struct tl_sym {       /* a shape symbol, e.g. M */
  const char *name;
  int32_t param, axis;        /* where it is first bound */
} tl_sym;

typedef struct tl_tileconst { /* tiles(BM = 128) */
  const char *name;
  int64_t value;
  bool overridden;            /* by -D / options */
  tl_loc loc;
  /* used as a number somewhere (an expression's value, a require, another constant's definition), not only
   * as a tile extent (a shape, a range view's length, a loop's step) or in the tiling (the grid clause,
   * program_id(a) * C): a launch-time form that sets the constant to another value (lib/attn_form.h,
   * lib/small_m.h) would change what the kernel computes */
  bool value_use;
} tl_tileconst;

typedef enum { TL_PIPE_AUTO = 0, TL_PIPE_SIMPLE, TL_PIPE_MULTISTAGE, TL_PIPE_CUTLASS } tl_pipeline;
/* Warp specialization of a cutlass main loop (route_pipeline; docs/pipelines.md). */
typedef enum { TL_WS_OFF = 0, TL_WS_COOP, TL_WS_PINGPONG } tl_ws;
/* Thread-block clusters of a cutlass GEMM (route_pipeline, lib/codegen/emit_cluster.c):
 * two CTAs on tiles adjacent along program_id(0) (2x1, sharing the operand that does
 * not depend on program_id(0), B of a GEMM) or program_id(1) (1x2, sharing A). */
typedef enum { TL_CLUSTER_UNSET = 0, TL_CLUSTER_1X1, TL_CLUSTER_2X1, TL_CLUSTER_1X2 } tl_cluster;

typedef struct tl_func {
  struct tl_ctx *ctx;
  const char *name;
  tl_loc loc;
  TL_VEC(tl_param) params;
  TL_VEC(tl_sym) syms;
  TL_VEC(tl_tileconst) consts;
  /* attributes: 0 = unset, the compiler chooses */
  int pipeline;   /* tl_pipeline */
  int warps, stages;
  /* registers a thread the PTX asks for at most (`.maxnreg`): the @maxnreg attribute / option; 0 = unset */
  int maxnreg;
  /* chosen by route_pipeline (not attributes): warp specialization (tl_ws;
   * warps then counts the consumer warps) and persistent CTAs over tiles */
  int ws;
  bool persist;
  /* chosen by route_pipeline: wgmma attention whose ring was cut to two programs' share
   * (TILEC_ATTN_TWO); codegen asks for two programs an SM (.minnctapersm 2) */
  bool two_programs;
  /* clusters (tl_cluster): cluster_opt is the option "cluster" (set before the
   * passes; TL_CLUSTER_UNSET: TILEC_CLUSTER or the default), cluster what
   * route_pipeline asks codegen for (TL_CLUSTER_2X1 / 1X2, else 1X1) */
  int cluster_opt, cluster;
  /* chosen by the row passes for kernels without a dot (docs/rows.md): each vector access
   * one branch between its vector and its scalar form (access_split), and persistent
   * CTAs issuing the loads of the tile row_ahead steps later before the current tile's
   * work (row_stream; 0 = off) */
  bool access_split;
  int row_ahead;
  TL_VEC(tl_value) values;
  TL_VEC(tl_op) ops;
  tl_region grid; /* computes the grid: ends in yield of 1..3 i32 scalars */
  tl_region body; /* the program; no terminator */
  void *layouts;  /* owned by layout assignment / codegen (lib/layout.h) */
  /* Set by layout assignment: prints the layout table (after the body) and
   * one layout's short name (for types: "tile<128x64xbf16, #L2>"). */
  void (*print_layouts)(tl_sbuf *b, const struct tl_func *f);
  /* Set by align_check: a tl_access_table (lib/axisinfo.h), per-op memory
   * access facts and the launch specialization requirements; NULL before. */
  void *access_facts;
  void *sched;       /* tl_sched of lib/schedule.h: main-loop scheduling decisions */
  void *small_m;     /* tl_small_m_plan of lib/small_m.h (passes/small_m.c): the forms a launch picks by M */
  void *hoist_form;  /* tl_hoist_plan of lib/hoist_operand.h (passes/hoist_form.c, TILEC_HOIST_OPERAND=1): the materialize-once form a launch picks by M */
  void *kmajor_b;    /* tl_kmajor_plan of lib/kmajor_b.h (passes/kmajor_form.c): the K-major-B form a launch picks by B's strides */
  void *attn_form;   /* tl_attn_form_plan of lib/attn_form.h (passes/attn_form.c): the FlashAttention-3 form a launch picks by S */
  void *attn_persist_form; /* tl_attn_persist_plan of lib/attn_persist_form.h (passes/attn_persist_form.c): the persistent form a launch picks by S */
  /* route_pipeline: wgmma attention in FlashAttention-3's combination (attn-ws / TILEC_ATTN_WS = fa3:
   * the producer, the turns, and emit_overlap.c's value dot a step late inside them) */
  bool attn_fa3;
  /* route_pipeline: the option attn-sched's value ('0'..'2'), 0 unset (TILEC_ATTN_SCHED decides): codegen's
   * attn_sched.c reads it */
  char attn_sched;
  /* route_pipeline: the option attn-o-slot-k's value ('0', '1'), 0 unset (TILEC_ATTN_O_SLOT_K, then the default,
   * decides): codegen's emit_o_slot.c reads it */
  char attn_o_slot_k;
  /* route_pipeline (TILEC_ATTN_ORDER, default on, =0 off): for an attention kernel whose main loop's trip count
   * grows or shrinks with program_id(0) (causal), a non-persistent grid's last heads (about
   * attn_order CTAs) run program_id(1) fastest, so the source's order along program_id(0) (attn.tile:
   * heaviest first) holds across them and the grid ends with light blocks; attn_order is that span
   * in CTAs, 0 = off (lib/codegen/attn_order.c) */
  int attn_order;
  /* route_pipeline (TILEC_ATTN_PERSIST or the option attn-persist = 1 | 2 | 3; 0 off): wgmma attention
   * without a producer warpgroup whose every tile weighs the same (not causal), made persistent; at 1
   * and 3 its ring's next tile's first stages issued at the main loop's exit under this tile's
   * epilogue (lib/codegen/tile_prefetch.c), at 1 also the next tile's q by TMA (emit_q_tma.c) */
  int attn_persist;
  /* route_pipeline: whether such a kernel could be made so (wgmma attention, no producer, the main
   * loop's range independent of program_id(0)), whatever the switch; passes/attn_persist_form.c */
  bool attn_persist_fits;
} tl_func;

typedef struct tl_module {
  struct tl_ctx *ctx;
  TL_VEC(tl_func *) funcs;
} tl_module;

/* ---- building ---------------------------------------------------------------- */
tl_module *tl_module_new(tl_ctx *c);
tl_func *tl_func_new(tl_module *m, const char *name, tl_loc loc);
/* New parameter; returns its index; creates its value (tensor or scalar). */
int32_t tl_func_add_param(tl_func *f, const tl_param *p);
int32_t tl_value_new(tl_func *f, tl_type t, int32_t def, int32_t index);
/* Append a region argument of type t; returns its value id. */
int32_t tl_region_add_arg(tl_func *f, tl_region *r, int32_t owner_op, tl_type t);

/* Create an op and append it to region r (r may be NULL: the caller links
 * it later with tl_region_insert).  Result values are made from restypes. */
int32_t tl_op_new(tl_func *f, tl_region *r, tl_opcode opc, const int32_t *opnd, int nopnd,
                  const tl_type *restypes, int nres, tl_loc loc);
/* Give op `op` n empty regions (for/if). */
void tl_op_add_regions(tl_func *f, int32_t op, int n);
void tl_region_insert(tl_func *f, tl_region *r, int pos, int32_t op); /* pos -1 = end */
/* A new op like src (opcode, attributes, location) on operands opnd (src->nopnd of them) with
 * the single result type t; not yet in a region.  Returns its id. */
int32_t tl_op_clone(tl_func *f, const tl_op *src, const int32_t *opnd, const tl_type *t);
/* Append operand v to op `op` (a yield's value, a for's carried init). */
void tl_op_append_opnd(tl_func *f, int32_t op, int32_t v);
/* The kernel parameter whose load value v is, looking through convert_layout and trans (each
 * trans flips *transposed), or -1 (not a load of a parameter). */
int32_t tl_loaded_param(tl_func *f, int32_t v, bool *transposed);
/* How kernel parameter `param` (a tensor) is written: 0 only read (no live store or atomic names
 * it), 1 stored into, 2 only updated by atomics (its contents on entry matter).  The API's
 * tilec_param_info.written and the launcher's TILEC_PITCH_REPACK=1 (which copies only tensors
 * never written) both ask it. */
int tl_param_written(const tl_func *f, int32_t param);
void tl_region_remove(tl_region *r, int pos);
/* Unlink the op at r->ops[pos] and mark it, and every op nested in its
 * regions, TL_OPF_DEAD (so tl_count_uses no longer sees their operands). */
void tl_op_erase(tl_func *f, tl_region *r, int pos);
/* Mark op and every op nested in its regions dead (does not unlink it). */
void tl_op_mark_dead(tl_func *f, int32_t op);

static inline tl_op *tl_op_at(tl_func *f, int32_t id) { return &f->ops.data[id]; }
static inline tl_value *tl_val(tl_func *f, int32_t id) { return &f->values.data[id]; }
static inline int32_t tl_op_result(tl_func *f, int32_t op, int i) { return f->ops.data[op].res[i]; }

/* Convenience builders (append to r; return the result value id). */
int32_t tl_build_const_i(tl_func *f, tl_region *r, tl_type t, int64_t v, tl_loc loc);
int32_t tl_build_const_f(tl_func *f, tl_region *r, tl_type t, double v, tl_loc loc);
int32_t tl_build_unary(tl_func *f, tl_region *r, tl_opcode opc, int32_t a, tl_loc loc);
int32_t tl_build_binary(tl_func *f, tl_region *r, tl_opcode opc, int32_t a, int32_t b, tl_loc loc);

/* Replace every use of value `from` by `to` in the whole function. */
void tl_replace_uses(tl_func *f, int32_t from, int32_t to);
/* The position of op id in region r, or -1. */
int tl_pos_in(const tl_region *r, int32_t id);
/* The region that holds op id (the function body for a top-level op), or NULL. */
tl_region *tl_region_of(tl_func *f, int32_t id);
/* Op `first`'s start is reached on every path to op `op` and before it: `op` is `first`'s later sibling in
 * `first`'s region, or nested (at any depth) in one. */
bool tl_op_runs_before(tl_func *f, int32_t first, int32_t op);
/* Some live op of opcode opc is nested (at any depth) in a region of op `ancestor`. */
bool tl_op_holds(const tl_func *f, int32_t ancestor, int opc);
/* op is nested (at any depth) in a region of op `ancestor`; false for op < 0. */
bool tl_op_inside(const tl_func *f, int32_t op, int32_t ancestor);
/* Value v is defined outside region-owning op L: a parameter, an op not in
 * L's regions, or an argument of a region that is not L's or inside L. */
bool tl_defined_outside(const tl_func *f, int32_t v, int32_t L);
/* v is a constant zero (+0.0, or integer 0): a dot's accumulator that adds nothing. */
bool tl_is_zero_const(const tl_func *f, int32_t v);
/* Count uses of each value (array of f->values.len ints, arena). */
int32_t *tl_count_uses(tl_func *f);

/* ---- text form, verifier ----------------------------------------------------- */
/* Print module/function as text (docs/ir.md); appends to b. */
void tl_print_module(tl_sbuf *b, const tl_module *m);
void tl_print_func(tl_sbuf *b, const tl_func *f);
typedef struct tl_print_opts {
  bool print_loc; /* append `loc("file":line:col)` / `loc(line:col)` to ops, params, tile consts */
} tl_print_opts;
void tl_print_module_opts(tl_sbuf *b, const tl_module *m, const tl_print_opts *o);
void tl_print_func_opts(tl_sbuf *b, const tl_func *f, const tl_print_opts *o);
/* Shortest decimal that reads back to exactly v ("1.0", "0.1", "inf", "nan"). */
void tl_print_double(tl_sbuf *b, double v);
/* Layouts in the text form: when f->print_layouts is set, a tile type with
 * layout >= 0 prints as "tile<128x64xbf16, #L2>" (2 = the layout index) and
 * the hook is called after the body, inside the kernel's braces.  Its text
 * must be a `layouts { ... }` block (balanced braces) or `//` comment lines:
 * the parser reads "#L<n>" back into tl_type.layout and skips the block. */
/* Parse the text form; errors are diagnostics in c (file = source index).
 * Returns NULL on error. */
tl_module *tl_parse_ir(tl_ctx *c, int32_t file);
/* Check every structural and type rule; violations are diagnostics
 * (errors) prefixed "verifier: ".  Returns true when valid. */
bool tl_verify_func(tl_func *f);
bool tl_verify_module(tl_module *m);
/* Whether value v is computed from an op of opcode opc (a program_id of axis `axis`, -1: any) (ir.c);
 * tl_from_program_id: from program_id(axis). */
bool tl_computed_from(tl_func *f, int32_t v, int opc, int axis);
bool tl_from_program_id(tl_func *f, int32_t v, int axis);
/* The tile constant named `name` of f, or NULL (ir.c). */
tl_tileconst *tl_tileconst_named(tl_func *f, const char *name);

/* ---- passes ------------------------------------------------------------------- */
typedef struct tl_pass_opts {
  const char *arch;  /* "sm_90a" */
  int opt_level;
  int pipeline;      /* tl_pipeline forced by options; 0 = none */
  bool explain;      /* passes append decisions to explain */
  tl_sbuf *explain_out;
  bool fp8_acc_fast; /* "fp8-acc=fast": 8-bit dots keep the tensor core's accumulation (mma_remap says which) */
  /* "split-k" (a small-M form's halves, passes/split_k.c): 0 none, 1 partial, 2 reduce, applied to
   * the kernel named split_k_kernel (the option "kernel") */
  int split_k_role;
  const char *split_k_kernel;
  /* "kmajor-b" (the K-major-B form, passes/kmajor_b.c): the parameter stored [N, K] in the kernel
   * named kmajor_b_kernel (the option "kernel"); NULL none */
  const char *kmajor_b_param;
  const char *kmajor_b_kernel;
  /* "hoist-operand" (the materialize-once form, passes/hoist_operand.c): 0 none, 1 form, 2 pre,
   * applied to the kernel named hoist_operand_kernel (the option "kernel") */
  int hoist_operand_role;
  const char *hoist_operand_kernel;
  /* "attn-ws" (off | producer | pingpong | fa3): wgmma attention's warp-specialized form, in
   * every kernel; NULL = TILEC_ATTN_WS decides (route_pipeline) */
  const char *attn_ws;
  /* "ws" (off | coop | pingpong): a wgmma GEMM's warp-specialized schedule, in every kernel; NULL =
   * TILEC_WS decides, then route_pipeline's defaults */
  const char *ws;
  /* "attn-persist" (0 | 1 | 2 | 3): wgmma attention without a producer made persistent, in every
   * kernel; NULL = TILEC_ATTN_PERSIST decides (route_pipeline) */
  const char *attn_persist;
  /* "attn-sched" (0 | 1 | 2): a causal fa3 kernel's tiles from a counter (codegen attn_sched.c); NULL =
   * TILEC_ATTN_SCHED decides (route_pipeline records it in f->attn_sched) */
  const char *attn_sched;
  /* "attn-o-slot-k" (0 | 1): fa3's O through the last stage's K slot (codegen emit_o_slot.c); NULL =
   * TILEC_ATTN_O_SLOT_K, then the default, decides (route_pipeline records it in f->attn_o_slot_k) */
  const char *attn_o_slot_k;
} tl_pass_opts;

typedef struct tl_pass {
  const char *name;     /* "cse" */
  const char *contract; /* one line: requires / keeps / breaks */
  /* Returns false when it reported errors (diagnostics in f->ctx). */
  bool (*run)(tl_func *f, const tl_pass_opts *o);
} tl_pass;

/* Running passes (passes/pipeline.c): used by tile-opt and the API alike. */
typedef struct tl_run_hooks {
  const char *print_after; /* pass name, "all", or NULL */
  bool time_passes;        /* append "pass NAME: X.XXX ms" lines */
  bool verify_each;        /* verifier after every pass; a failure is an error */
  tl_sbuf *log;            /* where print-after and timings go */
  /* Comma-separated names of passes tl_run_passes skips (--disable-pass);
   * NULL or "" = none.  Names are checked by the caller (tl_pass_list_check). */
  const char *disabled;
  /* The name of the one function the passes run on (NULL = every function of the module): a
   * program compiling one kernel (option "kernel", lib/api/api.c) passes only that one. */
  const char *only;
} tl_run_hooks;
/* Whether pass `name` is in the comma-separated `list` (NULL = empty). */
bool tl_pass_in_list(const char *list, const char *name);
/* NULL when every name of the comma-separated `list` is a registered pass,
 * else the first unknown (or empty) name, copied into buf. */
const char *tl_pass_list_check(const char *list, char *buf, size_t n);
/* Run passes[0..n) over every function of m (or h->only), in order.  Returns false when a
 * pass or the verifier reported errors (diagnostics in m->ctx). */
bool tl_run_passes(tl_module *m, const tl_pass *const *passes, int n, const tl_pass_opts *o,
                   const tl_run_hooks *h);

/* A form-recording pass's end (passes/form_record.c): on, a copy of plan (size bytes) in f's arena,
 * returned; off, NULL and, under --explain, the line "PASS: kernel 'F': WHY" (none when why is
 * empty: not a kernel the pass is about). */
void *tl_form_record(tl_func *f, const tl_pass_opts *o, const char *pass, bool on, const char *why,
                     const void *plan, size_t size);
/* The attention forms' kernel (passes/form_record.c): whether f's live dots are two in one loop body,
 * both on wgmma (f->sched), dots[0] the score dot (its B trans(load) of a parameter), dots[1] the
 * value dot. */
bool tl_attn_wgmma_dots(tl_func *f, int32_t dots[2]);
/* Whether every program_id of f is used only as `program_id(a) * C` with C em or en (a GEMM dot's M
 * or N extent: the tile's first row or column), so that a form with other tiles computes the same
 * result (passes/form_record.c; small_m, kmajor_form). */
bool tl_program_ids_tile_only(tl_func *f, int64_t em, int64_t en);
/* The keys' length S that an attention form is picked by: the shape symbol of the keys' axis (the load's
 * first ranged axis, *key_axis when not NULL) of the tensor whose trans(load) is the score dot's B; NULL when
 * that B is not such a load. */
const tl_sym *tl_attn_key_len_sym(tl_func *f, int32_t score_dot, int *key_axis);

const tl_pass *tl_pass_find(const char *name); /* NULL if unknown */
const tl_pass *const *tl_pass_all(int *n);       /* every registered pass */
/* The default pipeline, in order (passes/pipeline.c). */
const tl_pass *const *tl_pipeline_default(int *n);

#endif
