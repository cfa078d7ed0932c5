/* axisinfo.h: integer value facts per tile dimension (Triton's AxisInfo),
 * the memory-access facts that align_check derives from them, and the
 * launch-time specialization key.  See docs/alignment.md.
 *
 * Facts, per dimension d of an integer value (a scalar has one dimension):
 *   contig[d]    the dim splits into aligned runs of this length in which each
 *                element is the previous one plus 1 (iota<N> gives N);
 *   constancy[d] the dim splits into aligned runs of this length of equal
 *                elements (a splat gives the whole dim);
 *   div[d]       the first element of every contig run along d is a multiple
 *                of this power of two (when contig[d] == 1: every element).
 * Runs are aligned: they start at indices that are multiples of their length.
 * All three are powers of two, at least 1; 1 means "nothing known".  A value
 * known to be 0 has div TL_AXIS_DIV_MAX.  Index arithmetic is assumed not to
 * overflow (as Triton assumes) for contiguity; divisibility by powers of two
 * stays true under two's-complement wrap anyway.
 *
 * Ownership: results live in the arena of f->ctx. */
#ifndef TILEC_AXISINFO_H
#define TILEC_AXISINFO_H

#include "ir.h"

#define TL_AXIS_DIV_MAX ((int64_t)1 << 62)

typedef struct tl_axis_info {
  int64_t div[TL_MAX_RANK];
  int64_t contig[TL_MAX_RANK];
  int64_t constancy[TL_MAX_RANK];
  int8_t rank;      /* 0 for scalars: index 0 holds their facts */
  bool is_const;    /* every element equals `value` */
  int64_t value;
} tl_axis_info;

/* Launch-time knowledge the analysis may assume (a specialization): NULL
 * arrays or entries <= 1 mean "unknown".  sym_div is indexed like f->syms
 * (the size bound to that shape symbol is a multiple of it), param_div like
 * f->params (an integer scalar parameter is a multiple of it). */
typedef struct tl_axis_assume {
  const int64_t *sym_div;
  const int64_t *param_div;
} tl_axis_assume;

typedef struct tl_axis_analysis {
  tl_func *f;
  int32_t nvalues;     /* values that existed when it ran */
  tl_axis_info *info;  /* indexed by value id */
} tl_axis_analysis;

/* Analyse every value of f (loops to a fixed point).  a may be NULL. */
tl_axis_analysis *tl_axis_analyze(tl_func *f, const tl_axis_assume *a);
/* Facts of value v; values made after the analysis get "unknown". */
tl_axis_info tl_axis_get(const tl_axis_analysis *A, int32_t v);

/* Helpers of the lattice (exported for passes and tests). */
int64_t tl_axis_pow2_divisor(int64_t x);     /* largest power of two dividing x; 0 -> DIV_MAX */
int64_t tl_axis_elem_div(const tl_axis_info *i); /* a power of two dividing every element */
/* Residue of every element of scalar v modulo m (a power of two), when known:
 * from constants, divisibility, and add/sub/mul/shl of those.  Used to prove
 * that a start index is misaligned (e.g. k0 + 3 with k0 % 64 == 0). */
bool tl_axis_residue(const tl_axis_analysis *A, int32_t v, int64_t m, int64_t *r);

/* ---- memory-access facts (align_check) -------------------------------------- */
/* Specialization key: 4 bits per tensor parameter, by tensor ordinal t (the
 * t-th tensor among the parameters, t < TL_SPEC_MAX_TENSORS), at bit 4*t. */
enum {
  TL_SPEC_BASE16 = 1,       /* data pointer (with byte offset) 16-byte aligned */
  TL_SPEC_LAST_STRIDE1 = 2, /* last dim contiguous: stride[-1] == 1 (or size 1) */
  TL_SPEC_STRIDES16 = 4,    /* every other stride * elem bytes % 16 == 0 (or size 1) */
  TL_SPEC_LASTDIM16 = 8,    /* size[-1] * elem bytes % 16 == 0 (no vector straddles the edge) */
  TL_SPEC_BITS_PER_TENSOR = 4,
  TL_SPEC_MAX_TENSORS = 8
};
#define TL_SPEC_TENSOR_BITS(t, bits) ((uint32_t)(bits) << (TL_SPEC_BITS_PER_TENSOR * (t)))

typedef struct tl_access_facts {
  int32_t op;          /* the load/store; -1 = not a memory access */
  int32_t param;       /* index into f->params of its tensor */
  int32_t tensor;      /* its tensor ordinal (the key's t), -1 if >= TL_SPEC_MAX_TENSORS */
  int32_t len;         /* view length along the last dim; 0 = last dim indexed */
  int64_t start_div;   /* proven divisibility of the start index along the last dim */
  int32_t vec_want;    /* elements per 16-byte vector the tile shape would use (1 = none) */
  int32_t vec;         /* elements per vector in the specialized variant (1 = scalar) */
  uint32_t requires;   /* TL_SPEC_* bits of this tensor the vector variant needs */
  bool misaligned;     /* the start is provably not a multiple of vec_want */
} tl_access_facts;

/* The table align_check hangs on tl_func.access_facts. */
typedef struct tl_access_table {
  int32_t nops;             /* f->ops.len when computed */
  tl_access_facts *by_op;   /* indexed by op id */
  uint32_t required_key;    /* OR of every access's requirement, placed per tensor */
} tl_access_table;

/* Facts of op (NULL when align_check has not run or op is no access). */
const tl_access_facts *tl_access_facts_get(const tl_func *f, int32_t op);
/* The key bits the fully vectorized variant needs (0 when align_check has not run). */
uint32_t tl_func_required_key(const tl_func *f);

/* One launch argument, as the runtime sees it. */
typedef struct tl_spec_arg {
  bool is_tensor;          /* scalars take no bits and no ordinal */
  uint64_t addr;           /* data pointer + byte offset */
  int rank;
  const int64_t *shape;
  const int64_t *strides;  /* in elements; NULL = compact row-major */
  int elem_bytes;
} tl_spec_arg;

/* The key of actual arguments.  The launcher runs the vector variant when
 * (key & required) == required, required = tl_func_required_key(f), and the
 * scalar variant otherwise. */
uint32_t tl_spec_key_for_args(const tl_spec_arg *args, int nargs);

#endif
