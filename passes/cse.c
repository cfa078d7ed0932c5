/* cse: requires verified IR; keeps semantics and verification; merges pure
 * ops equal in opcode, operands (either order when commutative), attributes
 * and result types (layouts included) into the first one that dominates them
 * structurally: earlier in the same region or in an enclosing one.  Never
 * merges loads or any op that is not TL_PURE. */
#include <string.h>

#include "ir.h"

/* A scoped hash table: entries are pushed on a stack; each bucket points at
 * its newest entry, each entry at the older one of the same bucket; leaving a
 * region pops back to its mark and restores bucket heads. */
typedef struct entry {
  int32_t op;
  uint32_t hash;
  int32_t older; /* previous entry in the same bucket, -1 = none */
} entry;

typedef struct cse {
  tl_func *f;
  int32_t *repl; /* value -> replacement value, -1 = itself */
  TL_VEC(entry) stack;
  int32_t *heads; /* bucket -> newest entry index, -1 */
  uint32_t nbuckets;
} cse;

static uint32_t mix(uint32_t h, uint64_t x) {
  h ^= (uint32_t)x + 0x9e3779b9u + (h << 6) + (h >> 2);
  h ^= (uint32_t)(x >> 32) + 0x9e3779b9u + (h << 6) + (h >> 2);
  return h;
}

static uint64_t fbits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static uint32_t hash_op(tl_func *f, const tl_op *o) {
  uint32_t h = mix(0, o->opc);
  bool comm = (tl_opinfo_table[o->opc].flags & TL_COMM) && o->nopnd == 2;
  if (comm) {
    /* order-independent */
    h = mix(h, (uint64_t)(uint32_t)o->opnd[0] * 0x9e37u + (uint64_t)(uint32_t)o->opnd[1] * 0x9e37u);
  } else {
    for (int i = 0; i < o->nopnd; i++) h = mix(h, (uint32_t)o->opnd[i]);
  }
  h = mix(h, (uint64_t)o->ival);
  h = mix(h, fbits(o->fval));
  h = mix(h, ((uint64_t)(uint32_t)o->axis << 32) | (uint32_t)o->kind);
  for (int i = 0; i < TL_MAX_RANK; i++) h = mix(h, (uint32_t)o->dims[i]);
  for (int i = 0; i < o->nres; i++) {
    const tl_type *t = &f->values.data[o->res[i]].type;
    h = mix(h, ((uint64_t)t->kind << 16) | ((uint64_t)t->dtype << 8) | t->rank);
    for (int k = 0; k < t->rank && k < TL_MAX_RANK; k++) h = mix(h, (uint32_t)t->shape[k]);
    h = mix(h, (uint32_t)t->layout);
  }
  return h;
}

static bool same_op(tl_func *f, const tl_op *a, const tl_op *b) {
  if (a->opc != b->opc || a->nopnd != b->nopnd || a->nres != b->nres || a->nregions || b->nregions) return false;
  bool operands_equal = true;
  for (int i = 0; i < a->nopnd; i++)
    if (a->opnd[i] != b->opnd[i]) operands_equal = false;
  if (!operands_equal) {
    bool comm = (tl_opinfo_table[a->opc].flags & TL_COMM) && a->nopnd == 2;
    if (!comm || a->opnd[0] != b->opnd[1] || a->opnd[1] != b->opnd[0]) return false;
  }
  if (a->ival != b->ival || fbits(a->fval) != fbits(b->fval) || a->axis != b->axis || a->kind != b->kind ||
      memcmp(a->dims, b->dims, sizeof a->dims) != 0)
    return false;
  for (int i = 0; i < a->nres; i++) {
    const tl_type *ta = &f->values.data[a->res[i]].type, *tb = &f->values.data[b->res[i]].type;
    if (!tl_type_eq(ta, tb) || ta->layout != tb->layout) return false;
  }
  return true;
}

static int32_t resolve(cse *s, int32_t v) {
  while (s->repl[v] >= 0) v = s->repl[v];
  return v;
}

static void walk(cse *s, tl_region *r) {
  tl_func *f = s->f;
  int mark = s->stack.len;
  int out = 0;
  for (int i = 0; i < r->ops.len; i++) {
    int32_t id = r->ops.data[i];
    tl_op *o = tl_op_at(f, id);
    for (int k = 0; k < o->nopnd; k++) o->opnd[k] = resolve(s, o->opnd[k]);
    if (o->nregions) {
      for (int k = 0; k < o->nregions; k++) walk(s, &tl_op_at(f, id)->regions[k]);
      r->ops.data[out++] = id;
      continue;
    }
    o = tl_op_at(f, id);
    if (!(tl_opinfo_table[o->opc].flags & TL_PURE) || o->nres == 0) {
      r->ops.data[out++] = id;
      continue;
    }
    uint32_t h = hash_op(f, o);
    uint32_t b = h & (s->nbuckets - 1);
    int32_t found = -1;
    for (int32_t e = s->heads[b]; e >= 0; e = s->stack.data[e].older)
      if (s->stack.data[e].hash == h && same_op(f, tl_op_at(f, s->stack.data[e].op), o)) {
        found = s->stack.data[e].op;
        break;
      }
    if (found >= 0) {
      tl_op *keep = tl_op_at(f, found);
      for (int k = 0; k < o->nres; k++) s->repl[o->res[k]] = keep->res[k];
      tl_op_mark_dead(f, id);
      continue;
    }
    entry e = {id, h, s->heads[b]};
    s->heads[b] = s->stack.len;
    tl_vec_push(&f->ctx->arena, &s->stack, e);
    r->ops.data[out++] = id;
  }
  r->ops.len = out;
  /* leave the scope */
  while (s->stack.len > mark) {
    entry *e = &s->stack.data[--s->stack.len];
    s->heads[e->hash & (s->nbuckets - 1)] = e->older;
  }
}

static bool run_cse(tl_func *f, const tl_pass_opts *o) {
  (void)o;
  cse s;
  memset(&s, 0, sizeof s);
  s.f = f;
  s.repl = tl_alloc(&f->ctx->arena, sizeof(int32_t) * (size_t)(f->values.len + 1));
  for (int i = 0; i <= f->values.len; i++) s.repl[i] = -1;
  s.nbuckets = 64;
  while (s.nbuckets < (uint32_t)f->ops.len * 2 && s.nbuckets < (1u << 24)) s.nbuckets *= 2;
  s.heads = tl_alloc(&f->ctx->arena, sizeof(int32_t) * s.nbuckets);
  for (uint32_t i = 0; i < s.nbuckets; i++) s.heads[i] = -1;
  walk(&s, &f->grid);
  walk(&s, &f->body);
  return true;
}

const tl_pass tl_pass_cse = {
    "cse",
    "requires verified IR; keeps semantics; merges identical pure ops under structured dominance (never loads)",
    run_cse,
};
