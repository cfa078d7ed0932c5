/* schedule.c: the table of main-loop scheduling decisions (lib/schedule.h). */
#include "schedule.h"

tl_dot_sched *tl_sched_dot(tl_func *f, int32_t op, bool create) {
  tl_sched *s = f->sched;
  if (s)
    for (int i = 0; i < s->dots.len; i++)
      if (s->dots.data[i].op == op) return &s->dots.data[i];
  if (!create) return NULL;
  if (!s) {
    s = tl_alloc(&f->ctx->arena, sizeof *s);
    f->sched = s;
  }
  tl_dot_sched d = {0};
  d.op = op;
  d.stages = 1;
  tl_vec_push(&f->ctx->arena, &s->dots, d);
  return &s->dots.data[s->dots.len - 1];
}
