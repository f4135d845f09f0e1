/*
 * inc_explain.c -- EXPLAIN CONTINUOUS QUERY: the incremental plan as text
 * (docs/sql-reference.md, "EXPLAIN CONTINUOUS QUERY").
 *
 *   inc_plan_explain   one line per operator, from the output down to the
 *                      source, with the state each keeps and what bounds it
 *
 * The scheduler (cq_explain) adds the live figures.  The text of windows,
 * grouping keys and aggregates is the plan's shape (the same text its
 * fingerprint is made of, incremental.c).
 */
#include "inc_int.h"

#include "sluice/options.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

static void line(Arena *a, List **lines, int depth, const char *fmt, ...) SL_PRINTF(4, 5);

static void line(Arena *a, List **lines, int depth, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    *lines = list_append(a, *lines, arena_printf(a, "%*s%s", depth * 2, "", buf));
}

static const char *interval_text(Arena *a, int64_t us)
{
    if (us % 3600000000 == 0)
        return arena_printf(a, "%" PRId64 " h", us / 3600000000);
    if (us % 60000000 == 0)
        return arena_printf(a, "%" PRId64 " min", us / 60000000);
    if (us % 1000000 == 0)
        return arena_printf(a, "%" PRId64 " s", us / 1000000);
    return arena_printf(a, "%" PRId64 " ms", us / 1000);
}

static const char *mode_name(OutputMode m)
{
    return m == MODE_APPEND ? "append" : m == MODE_UPDATE ? "update" : "complete";
}

/* What bounds the state of an aggregation. */
static const char *agg_bound(Arena *a, const IncPlan *p)
{
    if (p->wkind == WINDOW_NONE)
        return p->ttl_us > 0
                   ? arena_printf(a, "state_ttl %s: groups idle that long are evicted",
                                  interval_text(a, p->ttl_us))
                   : "unbounded: one row per group for ever (WARNING: add a window or "
                     "state_ttl if the groups keep coming)";
    if (p->mode == MODE_APPEND)
        return "the watermark: a window's state is evicted when its row is emitted";
    return "the watermark: a window's state is evicted once the watermark passes its end";
}

static void explain_chain(Arena *a, List **lines, int depth, Plan *const *chain, int n,
                          const char *what)
{
    for (int i = 0; i < n; i++) {
        const char *kind = chain[i]->kind == PLAN_FILTER    ? "Filter"
                           : chain[i]->kind == PLAN_PROJECT ? "Project"
                                                            : "Operator";
        line(a, lines, depth, "-> %s (%s, stateless)", kind, what);
    }
}

bool inc_plan_complete_unbounded(IncPlan *p)
{
    return p->agg != NULL && p->mode == MODE_COMPLETE && p->wkind == WINDOW_NONE &&
           p->ttl_us == 0 && p->agg->u.agg.ngroups > 0;
}

void inc_plan_explain(IncPlan *p, Arena *a, List **lines)
{
    int d = 0;
    if (p->into != NULL)
        line(a, lines, d, "Sink: INTO stream %s (appended with the state, exactly once)",
             p->into->name);
    else if (p->sink != NULL)
        line(a, lines, d, "Sink: INTO sink %s (one file per batch and a manifest)",
             p->sink->name);
    else
        line(a, lines, d, "Sink: result table %s (%s)", p->query->name,
             p->agg != NULL && p->mode != MODE_APPEND ? "keyed by the group keys"
                                                      : "an append log keyed by batch and row");
    line(a, lines, d, "Output mode: %s", mode_name(p->mode));
    d++;
    explain_chain(a, lines, d, p->upper, p->nupper, "above the aggregation");
    if (p->agg != NULL) {
        const char *w = p->wkind == WINDOW_TUMBLE    ? "tumbling window"
                        : p->wkind == WINDOW_SLIDE   ? "sliding window, computed per slice"
                        : p->wkind == WINDOW_SESSION ? "session window"
                                                     : "no window";
        line(a, lines, d, "-> Aggregate (%s)", w);
        line(a, lines, d + 1, "Window: %s", p->shape[INC_SHAPE_WINDOW]);
        if (p->wkind == WINDOW_SLIDE)
            line(a, lines, d + 1, "Slice: %s", interval_text(a, p->pane_us));
        line(a, lines, d + 1, "Group keys: %s", p->shape[INC_SHAPE_GROUPS]);
        line(a, lines, d + 1, "Aggregates: %s", p->shape[INC_SHAPE_AGGS]);
        line(a, lines, d + 1, "State: one row per group and %s, in RocksDB ('Q' + query oid)",
             p->wkind == WINDOW_SESSION ? "session"
             : p->wkind == WINDOW_NONE  ? "key"
                                        : "window slice");
        line(a, lines, d + 1, "Bounded by: %s", agg_bound(a, p));
        d++;
    }
    if (p->distinct != NULL) {
        line(a, lines, d, "-> Deduplicate (SELECT DISTINCT)");
        line(a, lines, d + 1, "State: one key per distinct row, in RocksDB");
        line(a, lines, d + 1, "Bounded by: %s",
             p->dedup_time_col >= 0 ? "the watermark on the event-time column"
             : p->ttl_us > 0        ? arena_printf(a, "state_ttl %s", interval_text(a, p->ttl_us))
                                    : "unbounded");
        d++;
    }
    explain_chain(a, lines, d, p->lower, p->nlower, "on the stream's rows");
    Options o;
    SlError e = {0};
    const char *connector = NULL;
    if (opts_parse(a, p->stream->options, &o, &e) == 0)
        connector = opts_get(&o, "connector");
    sl_error_clear(&e);
    line(a, lines, d, "-> Source: stream %s (%s)", p->stream->name,
         connector ? connector : "internal");
    if (p->wm_col >= 0)
        line(a, lines, d + 1, "Watermark: max(%s) - %s%s", p->stream->cols[p->wm_col].name,
             interval_text(a, p->wm_delay_us),
             p->part_wm ? ", the minimum over partitions" : "");
    else
        line(a, lines, d + 1, "Watermark: none");
    if (p->parts.n > 1)
        line(a, lines, d + 1, "Partitions: %d%s", p->parts.n,
             p->parts.idle_us > 0
                 ? arena_printf(a, ", idle_timeout %s", interval_text(a, p->parts.idle_us))
                 : "");
    if (p->agg != NULL || p->distinct != NULL)
        line(a, lines, d + 1, "Late rows: %s",
             p->late != NULL ? arena_printf(a, "appended to stream %s", p->late->name)
                             : "dropped and counted");
}
