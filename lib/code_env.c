/* code_env.c: requires nothing; keeps the one list of the code-changing environment switches
 * (code_env.h). */
#include "code_env.h"

#include <stdlib.h>
#include <string.h>

static const char *const code_env_names[] = {
    "TILEC_TMA",        "TILEC_SHARED_SLOTS", "TILEC_PROLOGUE",      "TILEC_PROLOGUE_FRAG", "TILEC_WGMMA_INFLIGHT",
    "TILEC_WS",         "TILEC_ATTN_WS",      "TILEC_PERSIST",       "TILEC_EPI",           "TILEC_EPI_LOAD",
    "TILEC_RCP",        "TILEC_I2F",          "TILEC_ROW_LAYOUT",    "TILEC_RAND_BLOCK",    "TILEC_BF16_WORDS",
    "TILEC_GATHER_LAYOUT", "TILEC_PHILOX_ASM", "TILEC_LLVM_ARGS",    "TILEC_LLVM_CGLEVEL",  "TILEC_LLVM_PASSES",
    "TILEC_CLUSTER",    "TILEC_CLUSTER_SCOPE", "TILEC_TILE_GROUP",   "TILEC_EPI_PACK",      "TILEC_TILE_PREFETCH",
    "TILEC_SLOT_CSE",   "TILEC_EXACT_FMA",    "TILEC_MAXNREG",       "TILEC_ATTN_OVERLAP",  "TILEC_NVPTX_IR",
    "TILEC_REDUCE_ILP", "TILEC_REDUCE_FMA",   "TILEC_FALLBACK_BLOCKS", "TILEC_GRID_ORDER", "TILEC_ATOMIC_VEC",
    "TILEC_STAGED_WGMMA", "TILEC_PROLOGUE_TMA", "TILEC_ATTN_TWO",
    "TILEC_PROMOTE_OVERLAP", "TILEC_PROMOTE_PARTS", "TILEC_WS_TRANSPOSE", "TILEC_WS_PRODUCER_REGS",
    "TILEC_VEC_ONLY",   "TILEC_LAUNCH_VARIANTS", "TILEC_VARIANT_FORM", "TILEC_RAND_CMP", "TILEC_RAND_FOLLOW", "TILEC_RAND_LANES", "TILEC_RING_OVERLAP", "TILEC_UNDER_WGMMA",
    "TILEC_RED_SLOTS",  "TILEC_ASSEMBLER",  "TILEC_INDEX_PREFETCH", "TILEC_TMA_FORM", "TILEC_STORE_TRANS",
    "TILEC_TRANSFER_PAD", "TILEC_ROW_HINTS", "TILEC_ROW_PREFETCH", "TILEC_ROW_STREAM_L2", "TILEC_ATTN_RED_CHAINS",
    "TILEC_LATE_REFILL", "TILEC_STAGED_DOUBLE", "TILEC_DEQUANT_BF16X2", "TILEC_DEQUANT_BYTE",
    "TILEC_WGMMA_MERGE", "TILEC_ATTN_Q_TMA", "TILEC_EPI_HALVES", "TILEC_TANH_APPROX",
    "TILEC_SCRATCH_OVER_RING", "TILEC_ATOMIC_TMA", "TILEC_ATOM_B", "TILEC_MASK_DIFF",
    "TILEC_ROPE_PRODUCER", "TILEC_LOAD_AHEAD", "TILEC_ATTN_ORDER", "TILEC_NARROW_COPY",
    "TILEC_ATTN_PERSIST", "TILEC_LOOP_SPLIT_LOAD", "TILEC_ATTN_KV_SPLIT", "TILEC_DEQUANT_HALVES",
    "TILEC_FRAG_SHARED_LOAD", "TILEC_WGMMA_LAZY", "TILEC_WGMMA_STAGED_A", "TILEC_ROW_RELOAD",
    "TILEC_ROPE_FUSE",  "TILEC_ATTN_TURNS", "TILEC_ROPE_AHEAD",
    "TILEC_ATTN_O_TMA", "TILEC_ROW_STREAM", "TILEC_WGMMA_LAZY_WIDE", "TILEC_GATHER_RUNS",
    "TILEC_ATTN_O_SLOT", "TILEC_ATTN_O_SLOT_MAX", "TILEC_ATTN_SCHED", "TILEC_RING_IN_RANGE", "TILEC_WARP_CONVERGE",
    "TILEC_ATTN_SKIP0", "TILEC_ATTN_O_SLOT_K", "TILEC_ALIGN_TERMS", "TILEC_WHOLE_ONCE",
    "TILEC_ATTN_Q_PREFETCH", "TILEC_CONVERT_HOIST", "TILEC_PROLOGUE_A_FRAG", "TILEC_ROWS64",
};

const char *tl_code_env_name(size_t i) {
  return i < sizeof code_env_names / sizeof code_env_names[0] ? code_env_names[i] : NULL;
}

const char *tl_code_env(const char *name) {
  for (size_t i = 0; tl_code_env_name(i); i++)
    if (!strcmp(code_env_names[i], name)) return getenv(name);
  return NULL;
}

bool tl_code_env_off(const char *name) {
  const char *e = tl_code_env(name);
  return e && e[0] == '0';
}

bool tl_env_off(const char *name) {
  const char *e = getenv(name);
  return e && e[0] == '0';
}

bool tl_code_env_on(const char *name) {
  const char *e = tl_code_env(name);
  return e && e[0] == '1';
}
