/* smem.h: shared-memory layouts of 2-D tiles (plain, padded, XOR-swizzled),
 * an exact bank-conflict analyzer for one warp's shared access, and a chooser
 * that picks the layout a tile should get from the accesses made to it.
 *
 * Pure functions: no LLVM, no CUDA, no allocation, no printing.  The maths
 * (bank formula, phases, the swizzle bit formula with a worked table) is in
 * docs/smem.md.  Vocabulary shared with lib/layout.h: a tile is
 * [rows, cols], element (r, c); the "storage line" is the dimension that is
 * contiguous in memory (a row for row-major, a column for column-major).
 *
 * Hardware model (checked facts):
 *   bank(byte address) = (address / 4) mod 32.
 *   A warp access is split into phases: accesses of <= 4 bytes per lane are
 *   one phase of 32 lanes; 8 bytes: two phases of 16 lanes (0-15, 16-31);
 *   16 bytes (ld/st.shared.v4, ldmatrix): four phases of 8 lanes (lanes
 *   8p..8p+7; for ldmatrix phase p is matrix p's 8 row addresses).
 *   In a phase, lanes touching the same 4-byte word share it (broadcast);
 *   distinct words in one bank serialize: cost(phase) = max over banks of
 *   the number of distinct words in that bank.  wavefronts = sum of the
 *   costs of the phases that have an active lane; conflicts = sum of
 *   (cost - 1) over them.
 *
 * Swizzle (TMA / wgmma modes 32B, 64B, 128B = CUTLASS Swizzle<B, 4, 3>,
 * B = log2(mode / 16)), applied to the tile's linear byte offset `a`:
 *     swizzled(a) = a ^ (((a >> 7) & (2^B - 1)) << 4)
 * i.e. the 16-byte chunk index inside each 128-byte row (bits 4..4+B-1) is
 * XORed with the index of that 128-byte row mod 2^B (bits 7..7+B-1).  The
 * "row" of the formula is the 128-byte row of the address, not the tile row:
 * for 64B mode on 64-byte lines, tile rows 2i and 2i+1 share an XOR value.
 * The linear (pre-swizzle) offset splits each storage line into segments of
 * `mode` bytes ("swizzle atoms", as TMA boxes / wgmma canonical layouts do):
 *     linear = seg * (nlines * mode) + line * mode + (byte in segment)
 * The tile's base address must be aligned to the swizzle repeat
 * (2^(7+B) bytes: 256 / 512 / 1024); the analyzer takes base 0. */
#ifndef TILEC_SMEM_H
#define TILEC_SMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TL_SMEM_BANKS 32
#define TL_SMEM_BANK_BYTES 4
#define TL_SMEM_WARP 32

typedef enum tl_smem_order {
  TL_SMEM_ROW_MAJOR = 0, /* (r, c) and (r, c+1) adjacent */
  TL_SMEM_COL_MAJOR = 1  /* (r, c) and (r+1, c) adjacent */
} tl_smem_order;

typedef enum tl_smem_kind {
  TL_SMEM_PLAIN = 0,
  TL_SMEM_PADDED,  /* pad_bytes of unused memory after every storage line */
  TL_SMEM_SWIZZLED /* XOR swizzle, swizzle_bytes = 32 / 64 / 128 */
} tl_smem_kind;

typedef struct tl_smem_layout {
  int32_t rows, cols;    /* logical tile shape */
  int32_t elem_bytes;    /* 1, 2, 4, 8 */
  int32_t order;         /* tl_smem_order */
  int32_t kind;          /* tl_smem_kind */
  int32_t pad_bytes;     /* PADDED only */
  int32_t swizzle_bytes; /* SWIZZLED only */
} tl_smem_layout;

tl_smem_layout tl_smem_plain(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order);
tl_smem_layout tl_smem_padded(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order,
                              int32_t pad_bytes);
tl_smem_layout tl_smem_swizzled(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order,
                                int32_t swizzle_bytes);

/* NULL when l is a usable layout, else a static reason.  Requirements:
 * positive dims, elem_bytes in {1,2,4,8}; PADDED: pad_bytes >= 0 and a
 * multiple of elem_bytes; SWIZZLED: mode in {32,64,128}, line bytes a
 * multiple of the mode, and nlines * mode a multiple of 128 (whole 128-byte
 * rows, so the XOR never leaves the tile). */
const char *tl_smem_check(const tl_smem_layout *l);

/* Swizzle parameters of a mode: B = log2(mode/16), M = 4, S = 3. */
int tl_smem_swizzle_bits(int32_t swizzle_bytes); /* B; 0 for an unknown mode */
/* The XOR formula above, on a byte offset (identity for mode 0). */
int64_t tl_smem_swizzle(int64_t linear_byte, int32_t swizzle_bytes);

/* Byte offset of element (r, c) from the tile base; r, c must be in range
 * and l valid (checked by the caller with tl_smem_check). */
int64_t tl_smem_offset(const tl_smem_layout *l, int32_t r, int32_t c);
/* Bytes the layout occupies: rows*cols*elem_bytes, plus nlines*pad_bytes. */
int64_t tl_smem_footprint(const tl_smem_layout *l);
static inline int32_t tl_smem_bank(int64_t byte_offset) {
  return (int32_t)((byte_offset / TL_SMEM_BANK_BYTES) % TL_SMEM_BANKS);
}
/* "plain[64x32 b2 row]", "pad16[...]", "swizzle128[...]" into buf. */
void tl_smem_layout_str(const tl_smem_layout *l, char *buf, size_t n);

/* ---- one warp's shared access ------------------------------------------------ */
typedef enum tl_smem_access_kind {
  TL_SMEM_ACCESS_LANES = 0, /* each lane's own element coordinates + width */
  TL_SMEM_ACCESS_LDMATRIX   /* ldmatrix.m8n8.x{1,2,4}[.trans].b16 */
} tl_smem_access_kind;

typedef struct tl_smem_access {
  int32_t kind;   /* tl_smem_access_kind */
  int32_t count;  /* how many times it runs per tile (weight in the chooser); 0 = 1 */
  const char *name; /* for explanations; may be NULL */
  /* LANES: lane i touches `width` bytes (1/2/4/8/16, a multiple of
   * elem_bytes) starting at element (row[i], col[i]) and running along the
   * storage line: width/elem_bytes consecutive elements of that line.
   * Lanes whose bit in `active` is clear do not take part. */
  int32_t width;
  uint32_t active;
  int32_t row[TL_SMEM_WARP], col[TL_SMEM_WARP];
  /* LDMATRIX: nmat 8x8 b16 matrices.  Matrix m is 8 consecutive storage
   * lines of 16 bytes each, starting at element (mat_row[m], mat_col[m]):
   * row-major storage: rows mat_row..+7, columns mat_col..+16/elem_bytes-1;
   * column-major: columns mat_col..+7, rows mat_row..+16/elem_bytes-1.
   * Lane 8m+j gives the address of matrix m's line j.  .trans only changes
   * how the data is distributed to registers, not the addresses read. */
  int32_t nmat;
  bool trans;
  int32_t mat_row[4], mat_col[4];
} tl_smem_access;

/* Helpers that build common accesses (they zero *a first). */
/* `width`-byte vectors of a blocked layout over a [*, cols] row-major view:
 * thread t = warp*32 + lane takes vector t: row t / (cols / v), column
 * (t % (cols / v)) * v with v = width / elem_bytes (lanes along the row
 * first, then rows: tl_layout_blocked's first register). */
void tl_smem_access_blocked(tl_smem_access *a, int32_t cols, int32_t elem_bytes, int32_t width,
                            int32_t warp);
/* ldmatrix.x4 of a 16 x (32 / elem_bytes) block at (r0, c0): matrices
 * (r0, c0), (r0+8, c0), (r0, c0+h), (r0+8, c0+h), h = 16 / elem_bytes: the
 * mma.sync A operand fragment a0..a3 (m16 x k16 bf16, m16 x k32 fp8), or a B
 * operand pair of n8 fragments read with .trans from [K, N] storage. */
void tl_smem_access_ldmatrix_x4(tl_smem_access *a, int32_t r0, int32_t c0, int32_t elem_bytes,
                                bool trans);

typedef enum tl_smem_status {
  TL_SMEM_OK = 0,
  TL_SMEM_BAD_LAYOUT,  /* tl_smem_check failed */
  TL_SMEM_BAD_ACCESS,  /* out of the tile, bad width, or elements of a vector not adjacent */
  TL_SMEM_MISALIGNED   /* a lane's address is not a multiple of its width */
} tl_smem_status;

typedef struct tl_smem_cost {
  int32_t status;      /* tl_smem_status */
  int32_t phases;      /* phases with an active lane */
  int32_t wavefronts;  /* sum of phase costs */
  int32_t conflicts;   /* wavefronts - phases */
  int32_t worst_phase, worst_bank, worst_ways; /* -1, -1, 0 when no lane is active */
  char explain[256];   /* "2 wavefronts, 1 conflict; worst: phase 0 bank 4 2-way (lanes 0,16)" */
} tl_smem_cost;

/* Exact cost of access a on layout l (see the model above).  Returns
 * cost->status == TL_SMEM_OK; otherwise explain says what is wrong. */
bool tl_smem_analyze(const tl_smem_layout *l, const tl_smem_access *a, tl_smem_cost *cost);
/* The same numbers without the explanation text (cost->explain empty): for
 * callers that analyze many accesses and explain only the worst. */
bool tl_smem_analyze_quiet(const tl_smem_layout *l, const tl_smem_access *a, tl_smem_cost *cost);

/* ---- the chooser ------------------------------------------------------------------ */
typedef struct tl_smem_choose_opts {
  bool no_padding;      /* TMA / wgmma operands cannot be padded */
  bool require_swizzle; /* only swizzle modes are candidates */
  int32_t max_pad_bytes;/* largest padding tried; 0 = 128 */
} tl_smem_choose_opts;

typedef struct tl_smem_choice {
  tl_smem_layout layout;
  int64_t conflicts;   /* weighted (by count) sum over the accesses */
  int64_t wavefronts;
  int32_t candidates;  /* layouts tried that were valid for every access */
  int32_t worst_access;/* index of the access with most conflicts; -1 if none conflicts */
  char reason[640];
} tl_smem_choice;

/* Candidates: plain; padded by k * unit bytes (unit = the widest access,
 * at least 4 and elem_bytes) up to max_pad_bytes; swizzle 32/64/128 where
 * valid.  A candidate counts only if every access analyzes OK on it.
 * Order: fewest weighted conflicts; then plain < swizzle (widest mode
 * first) < padding (smallest first): padding wastes memory and TMA/wgmma
 * need swizzle.  Returns false (reason says why) when no candidate is
 * valid.  opts may be NULL. */
bool tl_smem_choose(int32_t rows, int32_t cols, int32_t elem_bytes, tl_smem_order order,
                    const tl_smem_access *accesses, int32_t naccesses,
                    const tl_smem_choose_opts *opts, tl_smem_choice *out);

#endif
