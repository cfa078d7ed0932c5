/* carry_ahead.h: issuing a loop body's load one iteration ahead and carrying its value into the
 * next iteration (passes/loop_prefetch.c: dot-free reducing loops; passes/load_ahead.c: the small
 * loads of a wgmma main loop, TILEC_LOAD_AHEAD=1).
 *
 * The load of iteration i + 1 is issued during iteration i (the first before the loop, at the
 * loop's lo); the body reads the value carried from the previous iteration.  The copy issued in the
 * last iteration reads iteration n's view: a load is masked to its tensor, so past the tensor's end
 * it reads nothing, and inside it its value is never used.  Semantics are kept. */
#ifndef TILEC_CARRY_AHEAD_H
#define TILEC_CARRY_AHEAD_H

#include "ir.h"

enum { TL_AHEAD_CHAIN_MAX = 32 };

/* The scalar index math of the loop body that a load's operands need, in body order. */
typedef struct tl_ahead_chain {
  int32_t op[TL_AHEAD_CHAIN_MAX];
  int n;
} tl_ahead_chain;

/* Whether load `ld` of loop L's body can be issued one iteration ahead: each operand is L's
 * induction variable, defined outside L, or index math of the body on such values (collected into
 * c).  *uses_iv: the iv is an operand of the load or of its chain (else the view is the same every
 * iteration: nothing to issue ahead). */
bool tl_ahead_chain_of(tl_func *f, int32_t L, int32_t ld, tl_ahead_chain *c, bool *uses_iv);

/* Issues load ld of loop L one iteration ahead: a copy with its chain at lo just before L, and one
 * with its chain at iv + step at body position pos (before the op now there), carried (a new loop
 * result, region argument and yield operand); ld's uses read the carried value and ld is erased.
 * Returns the op id of the body's copy (the last op inserted). */
int32_t tl_issue_ahead(tl_func *f, int32_t L, int32_t ld, const tl_ahead_chain *c, int pos);

/* (tl_pos_in, the position of an op in a region: lib/ir.h) */

#endif
