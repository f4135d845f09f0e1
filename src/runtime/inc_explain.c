/*
 * inc_explain.c -- EXPLAIN CONTINUOUS QUERY: the incremental plan as text
 * (docs/sql-reference.md, "EXPLAIN CONTINUOUS QUERY").
 *
 *   inc_plan_explain   one line per operator, from the output down to the
 *                      sources (joins and UNION ALL arms too), with the
 *                      state each keeps and what bounds it
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
    if (us == 0)
        return "0 s";
    if (us % 3600000000 == 0)
        return arena_printf(a, "%" PRId64 " h", us / 3600000000);
    if (us % 60000000 == 0)
        return arena_printf(a, "%" PRId64 " min", us / 60000000);
    if (us % 1000000 == 0)
        return arena_printf(a, "%" PRId64 " s", us / 1000000);
    if (us % 1000 == 0)
        return arena_printf(a, "%" PRId64 " ms", us / 1000);
    return arena_printf(a, "%" PRId64 " us", us);
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

const char *inc_plan_unbounded_ops(IncPlan *p, Arena *a)
{
    return p->graph != NULL ? inc_graph_unbounded(p, a) : NULL;
}

/* A stream read by the query, and its watermark. */
static void explain_source(Arena *a, List **lines, int d, const CatRelation *rel, int wm_col,
                           int64_t delay_us, bool part_wm, const SourceParts *parts)
{
    Options o;
    SlError e = {0};
    const char *connector = NULL;
    if (opts_parse(a, rel->options, &o, &e) == 0)
        connector = opts_get(&o, "connector");
    sl_error_clear(&e);
    line(a, lines, d, "-> Source: stream %s (%s)", rel->name, connector ? connector : "internal");
    if (wm_col >= 0)
        line(a, lines, d + 1, "Watermark: max(%s) - %s%s", rel->cols[wm_col].name,
             interval_text(a, delay_us), part_wm ? ", the minimum over partitions" : "");
    else
        line(a, lines, d + 1, "Watermark: none");
    if (parts->n > 1)
        line(a, lines, d + 1, "Partitions: %d%s", parts->n,
             parts->idle_us > 0
                 ? arena_printf(a, ", idle_timeout %s", interval_text(a, parts->idle_us))
                 : "");
}

static const char *join_name(JoinType t)
{
    return t == JOIN_LEFT ? "left" : t == JOIN_RIGHT ? "right" : t == JOIN_FULL ? "full"
           : t == JOIN_CROSS ? "cross" : "inner";
}

/* The join's equal keys as text. */
static const char *join_keys(Arena *a, const Plan *n)
{
    if (n->u.join.nkeys == 0)
        return "none";
    StrBuf b;
    strbuf_init(&b);
    for (int k = 0; k < n->u.join.nkeys; k++) {
        if (k > 0)
            strbuf_puts(&b, ", ");
        plan_expr_deparse(n->u.join.lkeys[k], n->child->cols, n->child->quals, &b);
        strbuf_puts(&b, " = ");
        plan_expr_deparse(n->u.join.rkeys[k], n->right->cols, n->right->quals, &b);
    }
    const char *s = arena_strndup(a, b.data, b.len);
    strbuf_free(&b);
    return s;
}

/* The input tree: streams (each with its watermark), tables, joins and
 * UNION ALL arms. */
static void explain_inputs(const IncPlan *p, Arena *a, List **lines, int d, const Plan *n)
{
    switch (n->kind) {
    case PLAN_SCAN:
        if (n->u.scan.rel->kind != REL_STREAM) {
            line(a, lines, d, "-> Table: %s (read as it is at each batch; rows emitted are "
                              "not retracted when it changes)", n->u.scan.rel->name);
            return;
        }
        for (int i = 0; i < p->ins.n; i++)
            if (p->ins.in[i].scan == n)
                explain_source(a, lines, d, n->u.scan.rel, p->ins.in[i].wm_col,
                               p->ins.in[i].wm_delay_us, p->in_part_wm[i], &p->in_parts[i]);
        return;
    case PLAN_FILTER:
    case PLAN_PROJECT:
        line(a, lines, d, "-> %s (stateless)", n->kind == PLAN_FILTER ? "Filter" : "Project");
        explain_inputs(p, a, lines, d + 1, n->child);
        return;
    case PLAN_SETOP:
        line(a, lines, d, "-> Union all (stateless; each arm's stream has its own offsets)");
        explain_inputs(p, a, lines, d + 1, n->child);
        explain_inputs(p, a, lines, d + 1, n->right);
        return;
    case PLAN_JOIN:
        if (p->sjoin != NULL && n == p->ins.sjoin) {
            int64_t lo, hi;
            const char *tl, *tr;
            inc_join_bound(p->sjoin, &lo, &hi, &tl, &tr);
            line(a, lines, d, "-> Interval join (%s, stream-stream)", join_name(n->u.join.type));
            line(a, lines, d + 1, "Keys: %s", join_keys(a, n));
            line(a, lines, d + 1, "Time bound: %s%s <= right.%s - left.%s <= %s%s",
                 lo < 0 ? "-" : "", interval_text(a, lo < 0 ? -lo : lo), tr, tl,
                 hi < 0 ? "-" : "", interval_text(a, hi < 0 ? -hi : hi));
            line(a, lines, d + 1, "State: the rows of each side, in RocksDB ('J' + query oid), "
                                  "a chunk per %s of event time and batch",
                 interval_text(a, inc_join_bucket(p->sjoin)));
            line(a, lines, d + 1, "Bounded by: the watermarks: a left row is evicted once the "
                                  "right watermark passes its time %s %s, a right row once the "
                                  "left watermark passes its time %s %s (a chunk when it has "
                                  "passed its end)%s",
                 hi < 0 ? "-" : "+", interval_text(a, hi < 0 ? -hi : hi), lo < 0 ? "+" : "-",
                 interval_text(a, lo < 0 ? -lo : lo),
                 n->u.join.type != JOIN_INNER ? " (an outer side's unmatched rows are "
                                                "emitted NULL-padded then)" : "");
        } else {
            line(a, lines, d, "-> Join (%s, stream-table: a hash join on the table's current "
                              "version, stateless)", join_name(n->u.join.type));
            line(a, lines, d + 1, "Keys: %s", join_keys(a, n));
        }
        explain_inputs(p, a, lines, d + 1, n->child);
        explain_inputs(p, a, lines, d + 1, n->right);
        return;
    default:
        line(a, lines, d, "-> Operator (stateless)");
        return;
    }
}

void inc_plan_explain(IncPlan *p, Arena *a, List **lines)
{
    if (p->graph != NULL) {
        inc_graph_explain(p, a, lines);
        return;
    }
    int d = 0;
    if (p->into != NULL)
        line(a, lines, d, "Sink: INTO stream %s (appended with the state, exactly once)",
             p->into->name);
    else if (p->sink != NULL)
        line(a, lines, d, "Sink: INTO sink %s (one file per batch and a manifest)",
             p->sink->name);
    else
        line(a, lines, d, "Sink: result table %s (%s)", p->query->name,
             p->agg != NULL ? "keyed by the group keys"
                            : "an append log of chunks keyed by batch");
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
    explain_chain(a, lines, d, p->lower, p->nlower,
                  p->plain ? "on the stream's rows" : "on the joined rows");
    if (!p->plain) {
        explain_inputs(p, a, lines, d, p->inputs);
        if (p->agg != NULL || p->distinct != NULL || p->sjoin != NULL)
            line(a, lines, d + 1, "Late rows: dropped and counted");
        return;
    }
    explain_source(a, lines, d, p->stream, p->wm_col, p->wm_delay_us, p->part_wm, &p->parts);
    if (p->agg != NULL || p->distinct != NULL)
        line(a, lines, d + 1, "Late rows: %s",
             p->late != NULL ? arena_printf(a, "appended to stream %s", p->late->name)
                             : "dropped and counted");
}
