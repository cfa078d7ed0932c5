/* layout.h: distributed tile layouts as linear maps (Triton's "linear layouts").
 *
 * A layout of a tile (power-of-two dims) says which thread holds which
 * element.  Its input is the bits of (register index r, lane l in 0..31, warp
 * w); every input bit has a basis vector of tile coordinates, and the element
 * held is the XOR of the bases of the set bits:
 *
 *     coord(r, l, w) = XOR_i r_i*reg[i]  ^  XOR_j l_j*lane[j]  ^  XOR_k w_k*warp[k]
 *
 * Invariant of every layout built here: each basis is zero (that input bit
 * replicates: two threads / registers hold the same element) or a single
 * power of two in a single dimension, and no two non-zero bases are equal.
 * So the XOR is also a sum, a coordinate has exactly one owner bit pattern
 * (up to replication), and the inverse map is a bit lookup.  See
 * docs/codegen.md for the maths and pictures.
 *
 * The implementation is lib/layout.c (front-end library: the passes and
 * codegen share it, tile-opt runs without LLVM).  f->layouts points to a
 * tl_layout_table after layout assignment; tl_type.layout indexes it. */
#ifndef TILEC_LAYOUT_H
#define TILEC_LAYOUT_H

#include "ir.h"

#define TL_LAYOUT_MAX_BITS 24 /* register bits (tiles are at most 2^20 elements, plus replication) */
#define TL_LAYOUT_LANE_BITS 5 /* 32 lanes */
#define TL_LAYOUT_MAX_WARP_BITS 5

typedef enum tl_layout_kind {
  TL_LAYOUT_BLOCKED = 0, /* vectors along the fastest dim, lanes then warps over the rest */
  TL_LAYOUT_MMA,         /* mma.sync m16n8 accumulator */
  TL_LAYOUT_SLICE,       /* a parent with one dim removed (reduce results) */
  TL_LAYOUT_DERIVED      /* expand_dims / broadcast source / trans / reshape of another */
} tl_layout_kind;

typedef struct tl_layout {
  int32_t kind;  /* tl_layout_kind */
  int32_t rank;
  int32_t shape[TL_MAX_RANK];
  int32_t nreg, nwarp; /* input bit counts; lanes always TL_LAYOUT_LANE_BITS */
  int32_t reg[TL_LAYOUT_MAX_BITS][TL_MAX_RANK];
  int32_t lane[TL_LAYOUT_LANE_BITS][TL_MAX_RANK];
  int32_t warp[TL_LAYOUT_MAX_WARP_BITS][TL_MAX_RANK];
  /* Where it came from: the full-rank layout this one is a slice / broadcast
   * source of (an index into the table), or -1.  Only a hint: a broadcast
   * whose result has this layout's origin shape is free. */
  int32_t origin;
  /* MMA only: warps along M and N (the rest replicate). */
  int32_t mma_wm, mma_wn;
  /* MMA only: 1 = the column-paired form of tl_layout_mma_pairs (a dot whose
   * B is 8-bit and kept [K][N]); 0 = the plain m16n8 form. */
  int32_t mma_npair;
} tl_layout;

typedef struct tl_layout_table {
  TL_VEC(tl_layout) items;
  int32_t warps;
} tl_layout_table;

/* ---- construction (pure functions of their inputs) ------------------------ */
/* Coalesced blocked layout: per thread a vector of up to 16 bytes along the
 * last dim, lanes then warps from the last dim to the first, the rest in
 * registers.  Bits with nothing left to cover replicate. */
tl_layout tl_layout_blocked(int rank, const int32_t *shape, int elem_bytes, int warps);
/* mma.sync m16n8 accumulator for an [M, N] tile: lane/4 = row, lane%4*2 +
 * r%2 = col, r bit 1 = row + 8; warps tiled over M first, then N; repeats in
 * registers (N repeats in the lower bits, then M).  Needs M >= 16, N >= 8. */
tl_layout tl_layout_mma(int32_t M, int32_t N, int warps);
/* The same with wm warps along M (0: as many as fit, M first), the rest of
 * the warps along N. */
tl_layout tl_layout_mma_split(int32_t M, int32_t N, int warps, int wm);
/* The accumulator of a dot whose 8-bit B is kept [K][N] (emit_dot reads it
 * with ldmatrix .trans of byte pairs + prmt): n-blocks 2j and 2j+1 of a warp
 * take the even and the odd columns of one 16-column segment (mma column c
 * is real column 2c + parity), warps along N own 16-column segments.  Same
 * warps as tl_layout_mma_split(M, N, warps, wm); when N has fewer than two
 * n-blocks per warp the plain layout is returned (mma_npair == 0). */
tl_layout tl_layout_mma_pairs(int32_t M, int32_t N, int warps, int wm);
/* The registers of the mma.sync m16n8k16 B fragments (16-bit) of a [K, N]
 * operand of a dot whose accumulator has the plain layout acc: lane % 4 ->
 * k 2, 4; lane / 4 -> n 1, 2, 4; register bit 0 -> k 1 (b0 / b1 of one
 * 32-bit register), bit 1 -> k 8 (the second register); acc's warps along N
 * and its n-block registers; then the k16 slices.  acc's warps along M
 * replicate.  Kind TL_LAYOUT_DERIVED, origin -1; nreg 0 when acc is not a
 * plain mma layout or K is not a multiple of 16. */
tl_layout tl_layout_mma_b(const tl_layout *acc, int32_t K);
/* Remove dim `dim` (reduce result). */
tl_layout tl_layout_slice(const tl_layout *p, int dim);
/* Insert a size-1 dim at `axis` (expand_dims). */
tl_layout tl_layout_expand(const tl_layout *l, int axis);
/* Drop a size-1 dim at `axis` (inverse of expand). */
tl_layout tl_layout_squeeze(const tl_layout *l, int axis);
/* The layout the source of a broadcast to l must have for the broadcast to
 * be free: l with the components of dims where src_shape is 1 zeroed. */
tl_layout tl_layout_project(const tl_layout *l, const int32_t *src_shape);
/* The layout operand `a` (of shape a_shape) of op o must have for o's result to be in l without moving
 * data: squeezed through an expand_dims, projected through a broadcast, l itself for an elementwise op
 * (a load's index tiles, a select's operands).  layout_assign's retargets and convert_hoist use it. */
tl_layout tl_layout_for_operand(const tl_layout *l, const tl_op *o, const int32_t *a_shape);
/* 2-D transpose. */
tl_layout tl_layout_trans(const tl_layout *l);
/* Row-major reshape to a new shape of the same element count. */
tl_layout tl_layout_reshape(const tl_layout *l, int rank, const int32_t *shape);

/* ---- queries ----------------------------------------------------------------- */
int32_t tl_layout_nregs(const tl_layout *l); /* 1 << nreg */
/* Basis b (rank components) is zero: its input bit replicates. */
bool tl_layout_basis_zero(const int32_t *b, int rank);
/* Coordinates of register r's element (lane 0, warp 0). */
void tl_layout_reg_coords(const tl_layout *l, int32_t r, int32_t *coords);
/* Full map: coordinates held by (r, lane, warp). */
void tl_layout_coords(const tl_layout *l, int32_t r, int32_t lane, int32_t warp, int32_t *coords);
/* The first register holding the same element as r (registers replicate when
 * a register basis is zero). */
int32_t tl_layout_canon_reg(const tl_layout *l, int32_t r);
/* Register index holding coordinates c, given that the lane/warp part is
 * removed (c must be a pure register-part coordinate): -1 if none. */
int32_t tl_layout_find_reg(const tl_layout *l, const int32_t *c);
/* Number of contiguous elements along the last dim in registers 0,1,2..:
 * the largest 2^k with reg[i] = e_last * 2^i for i < k. */
int32_t tl_layout_contig(const tl_layout *l);
/* Elements of one vector access of a thread along the last dim (at most 16 bytes: registers
 * contiguous in memory that no lane or warp interleaves), 1 when under 4 bytes: what codegen's
 * loads and stores of a row-major view use (lib/codegen/emit_memory.c). */
int32_t tl_layout_vector(const tl_layout *l, int elem_bytes);
bool tl_layout_eq(const tl_layout *a, const tl_layout *b);
/* Check the invariant (single power-of-two bases, all distinct, within the
 * shape) and that the map covers every element: NULL or a reason. */
const char *tl_layout_check(const tl_layout *l);
/* "blocked[128x64] reg=(0,1)(0,2) lane=... warp=..." into b. */
void tl_layout_print(tl_sbuf *b, const tl_layout *l);

/* ---- table ------------------------------------------------------------------------ */
tl_layout_table *tl_layout_table_get(tl_func *f); /* creates it (arena) when missing */
/* Index of an equal layout, added when missing. */
int32_t tl_layout_intern(tl_func *f, const tl_layout *l);
static inline const tl_layout *tl_layout_at(const tl_func *f, int32_t id) {
  return &((const tl_layout_table *)f->layouts)->items.data[id];
}
/* The printer hook set into f->print_layouts. */
void tl_layout_print_table(tl_sbuf *b, const tl_func *f);

#endif
