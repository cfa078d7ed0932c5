/* row_stream: requires verified IR and f->warps (row_warps); keeps every op and value; sets
 * f->row_ahead for kernels without a dot whose body has loads lib/rows.h plans AHEAD: codegen
 * (lib/codegen/emit_rows.c) then launches persistent CTAs (as many as fit on the device) that
 * loop over the tiles of the grid clause, issue the AHEAD loads of the tile row_ahead steps
 * later before the current tile's work (its reductions, its stores), and load the HOISTED ones
 * (the same for every tile) once.  Only when asked for: row_ahead = stages - 1 where the stages
 * option / attribute is 2 or more (route_pipeline leaves these kernels at 1); by default off, as
 * measured on the H200 (bench/RESULTS.md 2026-12-01, rows: 0.70-0.86x of the plain launch on 6
 * of 8 kernels).  Off when the loads kept in flight would take more than ROW_RING_BYTES
 * registers a thread.  Breaks nothing.  docs/rows.md. */
#include "rows.h"

enum { ROW_RING_BYTES = 160 };

static bool run_row_stream(tl_func *f, const tl_pass_opts *o) {
  tl_sbuf *ex = o->explain && o->explain_out ? o->explain_out : NULL;
  f->row_ahead = 0;
  tl_row_plan p;
  const char *why = NULL;
  if (f->persist || f->ws) why = "its main loop is persistent already";
  else tl_row_plan_make(f, &p, &why);
  if (!why && f->stages < 2)
    why = "not asked for: stages=2 or more turns it on (measured slower than the plain launch by default)";
  int threads = (f->warps > 0 ? f->warps : 4) * 32;
  int ahead = f->stages >= 2 ? f->stages - 1 : 1;
  int64_t ring = 0;
  if (!why) {
    for (int32_t id = 0; id < f->ops.len; id++)
      if (p.role[id] == TL_ROW_AHEAD) {
        const tl_type *t = &tl_val(f, tl_op_at(f, id)->res[0])->type;
        int64_t bytes = tl_type_numel(t) * tl_dtype_bytes((tl_dtype)t->dtype);
        ring += (bytes + threads - 1) / threads * tl_row_distance(&p, id, ahead);
      }
    if (ring > ROW_RING_BYTES) why = "the loads kept in flight would take too many registers";
  }
  if (!why) f->row_ahead = ahead;
  if (!ex) return true;
  if (why) {
    tl_sbuf_printf(ex, "row_stream: kernel '%s': off (%s", f->name, why);
    if (ring) tl_sbuf_printf(ex, ": %lld bytes a thread, limit %d", (long long)ring, ROW_RING_BYTES);
    tl_sbuf_puts(ex, ")\n");
    return true;
  }
  tl_sbuf_printf(ex, "row_stream: kernel '%s': persistent CTAs over the grid's tiles; %d AHEAD load%s (%lld bytes a tile",
                 f->name, p.nahead, p.nahead == 1 ? "" : "s", (long long)p.ahead_bytes);
  if (p.max_level) tl_sbuf_printf(ex, ", %d level%s of gathers", p.max_level, p.max_level == 1 ? "" : "s");
  tl_sbuf_printf(ex, ") issued %d tile%s ahead (%lld bytes a thread in flight)", ahead + p.max_level,
                 ahead + p.max_level == 1 ? "" : "s", (long long)ring);
  if (p.nhoisted)
    tl_sbuf_printf(ex, "; %d HOISTED load%s (%lld bytes, the same for every tile) loaded once", p.nhoisted,
                   p.nhoisted == 1 ? "" : "s", (long long)p.hoisted_bytes);
  const char *sep = ":";
  for (int32_t id = 0; id < f->ops.len; id++)
    if (p.role[id]) {
      tl_op *op = tl_op_at(f, id);
      tl_sbuf_printf(ex, "%s %s at %d:%d", sep, p.role[id] == TL_ROW_AHEAD ? "ahead" : "hoisted",
                     op->loc.line, op->loc.col);
      if (p.role[id] == TL_ROW_AHEAD && p.max_level) tl_sbuf_printf(ex, " (level %d)", p.level[id]);
      sep = ",";
    }
  tl_sbuf_puts(ex, "\n");
  return true;
}

const tl_pass tl_pass_row_stream = {
    "row_stream",
    "requires verified IR and f->warps; keeps ops and values; sets f->row_ahead (persistent CTAs, loads issued ahead)",
    run_row_stream,
};
