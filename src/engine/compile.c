/*
 * compile.c -- the rewriter (compile.h): walks a batch-engine plan bottom
 * up and gives each node its operator.
 *
 *   eng_compile, eng_compile_time, eng_compile_query
 *
 * Rules (docs/engine-graph.md, "Compiling a plan"):
 *   SCAN      a source of the graph (the relation's changes as deltas),
 *             its event-time column the caller's (EngScanTimeFn); a scan
 *             that asks for storage keys is refused
 *   FILTER    filter (op_filter.c): the input's time columns
 *   PROJECT   project (op_project.c): the time columns its output
 *             references bare
 *   AGG       aggregate (op_aggregate.c): no window or a tumbling one,
 *             given its child's time columns; calls it cannot keep
 *             exactly over retractions are refused by its constructor
 *   JOIN      join (op_join.c, eng_op_join_plan): a stream (a stream's
 *             scan under filters and projects) joined to a table (the
 *             same over a table) is a lookup join; any other a regular
 *             one, bounded by an interval over its inputs' time columns
 *             when its condition has one, else unbounded
 *   DISTINCT  distinct (op_distinct.c, eng_op_distinct_plan): DISTINCT ON
 *             (keys fewer than the columns) is refused by it
 *   SETOP     union all / union / intersect [all] / except [all]
 *             (op_setop.c, eng_op_setop_plan)
 *   WINDOW    OVER (op_over.c) over the node's input, the Sort under it
 *             left out (the operator orders each partition by the Sort's
 *             keys itself); a FILTER that bounds a WINDOW node's
 *             row_number() or rank() by a constant (`rn <= N`, `rn < N`,
 *             `rn = 1`),
 *             through PROJECTs that pass rn on bare, is Top-N (op_topn.c)
 *             in the WINDOW node's place with the PROJECTs over it and no
 *             FILTER; an aggregate's arguments and FILTER and the frame's
 *             offsets are checked as every expression is
 *   each operator gets its inputs' EngEdgeTime: a source's from the
 *   caller, an operator's its out_time
 *   a graph whose output would be a source itself gets a project of its
 *             columns, so the output is an operator's
 * Every other node is refused with 0A000 "the operator graph does not yet
 * run <kind>" (LATERAL and WITH RECURSIVE named so).  An expression whose value may differ between a row's
 * insertion and its retraction (random(), now() and the other clock
 * functions, the settings, the session's user, the privilege and
 * catalog functions, the stream counters) or that reads a parameter or a
 * subquery is refused too: its retraction would not cancel its insertion.
 * Subqueries in FROM (derived tables, CTEs however often referenced) are
 * nested plans and compile as any other node.  An uncorrelated scalar
 * subquery in a FILTER's condition or a PROJECT's expressions (given the
 * query's InitPlans: eng_compile_query) whose plan always has one row (an
 * aggregate without GROUP BY under projections) is a cross join of the
 * node's input with that subquery's subgraph, the subquery's value a
 * column of the joined row (a FILTER then projects back to its input's
 * columns); any other subquery in an expression (one that may return no
 * row or several, EXISTS, IN, ARRAY, correlated; any in an aggregate's
 * arguments or a join's condition) is refused with 0A000.
 */
#include "compile.h"
#include "op_join.h"
#include "op_over.h"
#include "op_set.h"
#include "ops.h"

#include <string.h>

typedef struct Walk {
    EngGraph    *g;
    Arena       *a;
    const Plan **scans;
    int          nscans, cap;
    EngEdgeTime *src_time;      /* per source, parallel to scans */
    EngScanTimeFn time_fn;
    void        *time_arg;
    const InitPlan *init;       /* the query's uncorrelated subqueries */
    int          ninit;
    SlError     *err;
} Walk;

/* The event-time columns of producer p's output (an operator or
 * -1 - source). */
static const EngEdgeTime *time_of(const Walk *w, int p)
{
    return p < 0 ? &w->src_time[-1 - p] : &w->g->ops[p]->out_time;
}

static int refuse_kind(Walk *w, const char *what)
{
    return sl_error(w->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                    "the operator graph does not yet run %s", what);
}

/* A subquery in an expression: a correlated one, or an uncorrelated one
 * (an InitPlan, which the batch engine runs once before the query: over
 * a stream its value changes as rows come, so every row it was compared
 * with would have to be compared again).  Refused; the hint says how to
 * write a scalar one as a join, which the graph runs. */
static int refuse_subquery(Walk *w, const Expr *e)
{
    const char *what = e->kind == EXPR_OUTER || e->subplan != NULL ? "correlated subqueries"
                     : e->subkind == SUBLINK_EXISTS               ? "EXISTS (subquery)"
                     : e->subkind == SUBLINK_IN                   ? "IN / ANY (subquery)"
                     : e->subkind == SUBLINK_ALL                  ? "ALL (subquery)"
                     : e->subkind == SUBLINK_ARRAY                ? "ARRAY(subquery)"
                                                                  : "scalar subqueries";
    sl_error(w->err, ERRCODE_FEATURE_NOT_SUPPORTED,
             "the operator graph does not yet run %s in expressions", what);
    sl_error_hint(w->err, "a scalar subquery over an aggregate can be joined in FROM: "
                          "FROM t CROSS JOIN (SELECT avg(x) AS m FROM s) q ... WHERE t.x > q.m");
    return -1;
}

/* Functions whose value for the same arguments may change over time. */
static bool unstable(const char *name)
{
    static const char *const names[] = {
        "random", "now", "clock_timestamp", "current_date", "current_timestamp",
        "localtimestamp", "statement_timestamp", "transaction_timestamp", "timeofday",
        "current_setting", "current_user", "session_user", "pg_sleep",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return strncmp(name, "has_", 4) == 0 || strncmp(name, "pg_", 3) == 0 ||
           strncmp(name, "sluice_", 7) == 0;
}

static int check_expr(Walk *w, const Expr *e)
{
    if (e == NULL)
        return 0;
    switch (e->kind) {
    case EXPR_PARAM:
        return refuse_kind(w, "a query with parameters");
    case EXPR_SUBPLAN:
    case EXPR_OUTER:
        return refuse_subquery(w, e);
    case EXPR_FUNC:
        if (e->fn && unstable(e->fn->name))
            return sl_error(w->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                            "the operator graph cannot run %s(): its value may change between "
                            "a row's insertion and its retraction", e->fn->name);
        break;
    default:
        break;
    }
    for (int i = 0; i < e->nargs; i++)
        if (check_expr(w, e->args[i]) < 0)
            return -1;
    return 0;
}

static int add_n(Walk *w, EngOp *op, const int *producers)
{
    if (op == NULL)
        return INT32_MIN;
    int id = eng_graph_add(w->g, op, producers);
    if (id < 0) {
        eng_op_free(op);
        sl_error(w->err, ERRCODE_INTERNAL_ERROR, "operator graph built out of order");
        return INT32_MIN;
    }
    return id;
}

static int add(Walk *w, EngOp *op, int producer)
{
    return add_n(w, op, &producer);
}

/* A bare reference to column index (of type t), in a. */
static Expr *col_ref(Arena *a, int index, SlType t)
{
    Expr *e = arena_zalloc(a, sizeof(Expr));
    e->kind = EXPR_COLUMN;
    e->type = t;
    e->location = -1;
    e->index = index;
    return e;
}

/* GROUP BY SESSION(ts, gap), g...: a session operator over the child
 * (producer in), tagging each row with its session's window_start and
 * window_end, and an aggregate over it grouped by g..., window_start,
 * window_end (without a window): the plan's output columns in the plan's
 * order.  The aggregate's producer, or INT32_MIN. */
static int session_agg(Walk *w, const Plan *p, int in, const EngAggSpec *spec)
{
    int nin = p->child->ncols, ng = spec->ngroups;
    int s = add(w, eng_op_session_new(p->child->cols, nin, spec->groups, ng, spec->window.time,
                                      spec->window.gap_us, time_of(w, in), w->err),
                in);
    if (s == INT32_MIN)
        return INT32_MIN;
    const EngOp *so = w->g->ops[s];
    Expr **groups = ARENA_ARRAY(w->a, Expr *, ng + 2);
    for (int c = 0; c < ng; c++)
        groups[c] = spec->groups[c];
    groups[ng] = col_ref(w->a, nin, so->out_cols[nin].type);
    groups[ng + 1] = col_ref(w->a, nin + 1, so->out_cols[nin + 1].type);
    EngAggSpec gs = {ng + 2, groups, spec->naggs, spec->aggs, {.kind = WINDOW_NONE}, false};
    return add(w, eng_op_aggregate_new(so->out_cols, so->out_ncols, p->cols, p->ncols, &gs,
                                       time_of(w, s), w->err), s);
}

/* p reads a table's rows as they are: a SCAN of a table under FILTERs and
 * PROJECTs (the side a lookup join keeps as the table). */
static bool table_read(const Plan *p)
{
    while (p->kind == PLAN_FILTER || p->kind == PLAN_PROJECT)
        p = p->child;
    return p->kind == PLAN_SCAN && p->u.scan.rel != NULL && p->u.scan.rel->kind == REL_TABLE;
}

bool eng_plan_inserts_only(const Plan *p)
{
    while (p->kind == PLAN_FILTER || p->kind == PLAN_PROJECT)
        p = p->child;
    return p->kind == PLAN_SCAN && p->u.scan.rel != NULL && p->u.scan.rel->kind == REL_STREAM;
}

static int walk(Walk *w, const Plan *p);
static int project(Walk *w, const Plan *p, int in);

/* A WINDOW node's operator over its input (the Sort under it left out:
 * the operator orders each partition itself): OVER, or Top-N when limit
 * >= 0.  The producer, or INT32_MIN with w->err set. */
static int walk_window(Walk *w, const Plan *p, int64_t limit)
{
    const Plan *below = p->child;
    const SortKey *keys = NULL;
    int nkeys = 0;
    if (below->kind == PLAN_SORT) {
        keys = below->u.sort.keys;
        nkeys = below->u.sort.nkeys;
        below = below->child;
    }
    const AggCall *c = &p->u.window.agg;
    if (p->u.window.func == WINDOW_FUNC_AGG) {
        if (check_expr(w, c->filter) < 0)
            return INT32_MIN;
        for (int k = 0; k < c->nargs; k++)
            if (check_expr(w, c->args[k]) < 0)
                return INT32_MIN;
    }
    if (check_expr(w, p->u.window.start_off) < 0 || check_expr(w, p->u.window.end_off) < 0 ||
        check_expr(w, p->u.window.start_neg) < 0 || check_expr(w, p->u.window.end_neg) < 0)
        return INT32_MIN;
    int in = walk(w, below);
    if (in == INT32_MIN)
        return INT32_MIN;
    EngOp *op = limit >= 0 ? eng_op_topn_new(p, keys, nkeys, limit, time_of(w, in), w->err)
                           : eng_op_over_new(p, keys, nkeys, time_of(w, in), w->err);
    return add(w, op, in);
}

/* p: the PROJECTs of a Top-N shape down to its WINDOW node win. */
static int walk_topn(Walk *w, const Plan *p, const Plan *win, int64_t limit)
{
    if (p == win)
        return walk_window(w, win, limit);
    int in = walk_topn(w, p->child, win, limit);
    return in == INT32_MIN ? INT32_MIN : project(w, p, in);
}

/* Does e read no column, parameter or subquery (a constant to evaluate)? */
static bool constant_expr(const Expr *e)
{
    if (e->kind == EXPR_COLUMN || e->kind == EXPR_PARAM || e->kind == EXPR_SUBPLAN ||
        e->kind == EXPR_OUTER)
        return false;
    for (int i = 0; i < e->nargs; i++)
        if (!constant_expr(e->args[i]))
            return false;
    return true;
}

/* The Top-N shape: a FILTER `rn <= N` (or `rn < N`, `N >= rn`, `N > rn`,
 * `rn = 1`)
 * whose rn is, through PROJECTs passing it on bare, the value of a WINDOW
 * node's row_number() or rank(), N a constant.  Sets *win, *limit (the
 * largest value kept, -1 when none is) and *top (the PROJECT right over the
 * WINDOW node, or the FILTER's child itself when it is the WINDOW). */
static bool topn_shape(Walk *w, const Plan *f, const Plan **win, int64_t *limit)
{
    const Expr *e = f->u.filter.cond;
    if (e->kind != EXPR_FUNC || e->nargs != 2 || e->fn == NULL)
        return false;
    const char *op = e->fn->name;
    int side;                       /* the argument that is the column */
    if (e->args[0]->kind == EXPR_COLUMN && constant_expr(e->args[1]))
        side = 0;
    else if (e->args[1]->kind == EXPR_COLUMN && constant_expr(e->args[0]))
        side = 1;
    else
        return false;
    bool le = strcmp(op, side == 0 ? "<=" : ">=") == 0;
    bool lt = strcmp(op, side == 0 ? "<" : ">") == 0;
    bool eq = strcmp(op, "=") == 0;     /* rn = 1: both functions start at 1 */
    if (!le && !lt && !eq)
        return false;
    int col = e->args[side]->index;
    const Plan *p = f->child;
    while (p->kind == PLAN_PROJECT) {
        const Expr *x = p->u.project.exprs[col];
        if (x->kind != EXPR_COLUMN)
            return false;
        col = x->index;
        p = p->child;
    }
    if (p->kind != PLAN_WINDOW || col != p->ncols - 1 ||
        (p->u.window.func != WINDOW_FUNC_ROW_NUMBER && p->u.window.func != WINDOW_FUNC_RANK))
        return false;
    EvalCtx ecx = {.arena = w->a, .err = w->err};
    Vector v;
    const Expr *k = e->args[1 - side];
    if (ex_eval(&ecx, k, NULL, 1, &v) < 0) {
        sl_error_clear(w->err);
        return false;
    }
    if (vector_is_null(&v, 0))
        return false;
    int64_t n;
    switch (v.type.id) {
    case TYPE_INT2: n = v.v.i16[0]; break;
    case TYPE_INT4: n = v.v.i32[0]; break;
    case TYPE_INT8: n = v.v.i64[0]; break;
    default: return false;
    }
    if (eq && n != 1)
        return false;
    if (lt)
        n = n == INT64_MIN ? n : n - 1;
    *win = p;
    *limit = n < 0 ? -1 : n;
    return true;
}

/* A PROJECT node p over producer in. */
static int project(Walk *w, const Plan *p, int in)
{
    for (int c = 0; c < p->ncols; c++)
        if (check_expr(w, p->u.project.exprs[c]) < 0)
            return INT32_MIN;
    return add(w, eng_op_project_new(p->child->cols, p->child->ncols, p->cols, p->ncols,
                                     p->u.project.exprs, time_of(w, in)), in);
}

/* ------------------------------------------------ scalar subqueries */

/* Whether e reads an uncorrelated scalar subquery (an InitPlan). */
static bool reads_init(const Expr *e)
{
    if (e == NULL)
        return false;
    if (e->kind == EXPR_SUBPLAN && e->subplan == NULL && e->subkind == SUBLINK_EXPR)
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (reads_init(e->args[i]))
            return true;
    return false;
}

/* Whether p always has exactly one row: projections over an aggregate
 * without GROUP BY and without a window. */
static bool one_row(const Plan *p)
{
    while (p->kind == PLAN_PROJECT)
        p = p->child;
    return p->kind == PLAN_AGG && p->u.agg.ngroups == 0 && p->u.agg.window.kind == WINDOW_NONE;
}

/* Marks in col_of[] (-1: not read) the InitPlans e reads; refuses one
 * that is not a one-row relation of one column of e's type. */
static int find_inits(Walk *w, const Expr *e, int *col_of)
{
    if (e == NULL)
        return 0;
    if (e->kind == EXPR_SUBPLAN && e->subplan == NULL && e->subkind == SUBLINK_EXPR) {
        const InitPlan *ip = e->index >= 0 && e->index < w->ninit ? &w->init[e->index] : NULL;
        if (ip == NULL || ip->plan->ncols != 1 || ip->plan->cols[0].type.id != e->type.id)
            return sl_error(w->err, ERRCODE_INTERNAL_ERROR,
                            "a scalar subquery's plan is not the query's");
        if (!one_row(ip->plan)) {
            sl_error(w->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                     "the operator graph runs a scalar subquery in an expression only over an "
                     "aggregate without GROUP BY (exactly one row)");
            sl_error_hint(w->err, "a subquery that may return no row or several is not a "
                                  "join; write the join in FROM");
            return -1;
        }
        col_of[e->index] = 0;
        return 0;
    }
    for (int i = 0; i < e->nargs; i++)
        if (find_inits(w, e->args[i], col_of) < 0)
            return -1;
    return 0;
}

/* e with each scalar subquery replaced by its column of the joined row
 * (col_of[index]); e itself where it reads none.  Copies in w->a. */
static Expr *subst_inits(Walk *w, Expr *e, const int *col_of)
{
    if (!reads_init(e))
        return e;
    if (e->kind == EXPR_SUBPLAN)
        return col_ref(w->a, col_of[e->index], e->type);
    Expr *c = arena_memdup(w->a, e, sizeof(Expr));
    c->args = ARENA_ARRAY(w->a, Expr *, e->nargs + 1);
    for (int i = 0; i < e->nargs; i++)
        c->args[i] = subst_inits(w, e->args[i], col_of);
    return c;
}

/* The scalar subqueries exprs[0..n) read, each a one-row aggregate,
 * cross-joined to the rows of child (producer in): each a subgraph of
 * its own, the join a regular one (the subquery's row changes, so every
 * row is joined again: both sides kept).  exprs[] are replaced by their
 * copies over the joined columns, *joined is the joined relation (its
 * columns: child's, then one per subquery).  Returns the last join's
 * producer (in when nothing is read), or INT32_MIN. */
static int join_inits(Walk *w, const Plan *child, int in, Expr **exprs, int n,
                      const Plan **joined)
{
    *joined = child;
    int *col_of = ARENA_ARRAY(w->a, int, w->ninit + 1);
    for (int i = 0; i < w->ninit; i++)
        col_of[i] = -1;
    for (int c = 0; c < n; c++)
        if (find_inits(w, exprs[c], col_of) < 0)
            return INT32_MIN;
    const Plan *cur = child;
    for (int i = 0; i < w->ninit; i++) {
        if (col_of[i] < 0)
            continue;
        Plan *sub = w->init[i].plan;
        Plan *j = plan_new(w->a, PLAN_JOIN, (Plan *)cur, cur->ncols + 1);
        memcpy(j->cols, cur->cols, sizeof(ColumnDesc) * (size_t)cur->ncols);
        j->cols[cur->ncols] = sub->cols[0];
        j->right = sub;
        j->u.join.type = JOIN_CROSS;
        int pr[2] = {in, walk(w, sub)};
        if (pr[1] == INT32_MIN)
            return INT32_MIN;
        in = add_n(w, eng_op_join_plan(j, time_of(w, pr[0]), time_of(w, pr[1]), -1, w->err), pr);
        if (in == INT32_MIN)
            return INT32_MIN;
        col_of[i] = cur->ncols;
        cur = j;
    }
    for (int c = 0; c < n; c++)
        exprs[c] = subst_inits(w, exprs[c], col_of);
    *joined = cur;
    return in;
}

/* FILTER whose condition reads scalar subqueries: the filter over the
 * rows joined to them, then a project back to the child's columns. */
static int filter_inits(Walk *w, const Plan *p, int in)
{
    Expr *cond = p->u.filter.cond;
    const Plan *j;
    in = join_inits(w, p->child, in, &cond, 1, &j);
    if (in == INT32_MIN || check_expr(w, cond) < 0)
        return INT32_MIN;
    in = add(w, eng_op_filter_new(j->cols, j->ncols, cond, time_of(w, in)), in);
    if (in == INT32_MIN)
        return INT32_MIN;
    Expr **cols = ARENA_ARRAY(w->a, Expr *, p->ncols + 1);
    for (int c = 0; c < p->ncols; c++)
        cols[c] = col_ref(w->a, c, p->cols[c].type);
    return add(w, eng_op_project_new(j->cols, j->ncols, p->cols, p->ncols, cols, time_of(w, in)),
               in);
}

/* PROJECT whose expressions read scalar subqueries: over the rows joined
 * to them. */
static int project_inits(Walk *w, const Plan *p, int in)
{
    Expr **exprs = arena_memdup(w->a, p->u.project.exprs, sizeof(Expr *) * (size_t)p->ncols);
    const Plan *j;
    in = join_inits(w, p->child, in, exprs, p->ncols, &j);
    if (in == INT32_MIN)
        return INT32_MIN;
    for (int c = 0; c < p->ncols; c++)
        if (check_expr(w, exprs[c]) < 0)
            return INT32_MIN;
    return add(w, eng_op_project_new(j->cols, j->ncols, p->cols, p->ncols, exprs,
                                     time_of(w, in)), in);
}

/* The producer of p's rows (an operator index, or -1 - source), or
 * INT32_MIN with w->err set. */
static int walk(Walk *w, const Plan *p)
{
    switch (p->kind) {
    case PLAN_SCAN: {
        if (p->u.scan.with_key) {
            refuse_kind(w, "a scan of storage keys");
            return INT32_MIN;
        }
        if (w->nscans == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 4;
            const Plan **s = ARENA_ARRAY(w->a, const Plan *, w->cap);
            EngEdgeTime *t = ARENA_ARRAY(w->a, EngEdgeTime, w->cap);
            if (w->nscans) {
                memcpy(s, w->scans, sizeof(const Plan *) * (size_t)w->nscans);
                memcpy(t, w->src_time, sizeof(EngEdgeTime) * (size_t)w->nscans);
            }
            w->scans = s;
            w->src_time = t;
        }
        w->scans[w->nscans] = p;
        memset(&w->src_time[w->nscans], 0, sizeof(EngEdgeTime));
        if (w->time_fn)
            w->time_fn(w->time_arg, p, &w->src_time[w->nscans]);
        return -1 - w->nscans++;
    }
    case PLAN_FILTER: {
        const Plan *win;
        int64_t limit;
        if (topn_shape(w, p, &win, &limit)) {
            /* Top-N in the WINDOW node's place, the PROJECTs over it again */
            if (limit < 0)
                limit = 0;
            return walk_topn(w, p->child, win, limit);
        }
        int in = walk(w, p->child);
        if (in != INT32_MIN && reads_init(p->u.filter.cond))
            return filter_inits(w, p, in);
        if (in == INT32_MIN || check_expr(w, p->u.filter.cond) < 0)
            return INT32_MIN;
        return add(w, eng_op_filter_new(p->cols, p->ncols, p->u.filter.cond, time_of(w, in)),
                   in);
    }
    case PLAN_PROJECT: {
        int in = walk(w, p->child);
        if (in == INT32_MIN)
            return INT32_MIN;
        for (int c = 0; c < p->ncols; c++)
            if (reads_init(p->u.project.exprs[c]))
                return project_inits(w, p, in);
        return project(w, p, in);
    }
    case PLAN_AGG: {
        int in = walk(w, p->child);
        if (in == INT32_MIN)
            return INT32_MIN;
        for (int c = 0; c < p->u.agg.ngroups; c++)
            if (check_expr(w, p->u.agg.groups[c]) < 0)
                return INT32_MIN;
        for (int j = 0; j < p->u.agg.naggs; j++) {
            const AggCall *c = &p->u.agg.aggs[j];
            if (check_expr(w, c->filter) < 0)
                return INT32_MIN;
            for (int k = 0; k < c->nargs; k++)
                if (check_expr(w, c->args[k]) < 0)
                    return INT32_MIN;
        }
        if (check_expr(w, p->u.agg.window.time) < 0)
            return INT32_MIN;
        EngAggSpec spec = {p->u.agg.ngroups, p->u.agg.groups, p->u.agg.naggs, p->u.agg.aggs,
                           p->u.agg.window, eng_plan_inserts_only(p->child)};
        if (p->u.agg.window.kind == WINDOW_SESSION)
            return session_agg(w, p, in, &spec);
        return add(w, eng_op_aggregate_new(p->child->cols, p->child->ncols, p->cols, p->ncols,
                                           &spec, time_of(w, in), w->err), in);
    }
    case PLAN_JOIN: {
        int in[2] = {walk(w, p->child), INT32_MIN};
        if (in[0] == INT32_MIN || (in[1] = walk(w, p->right)) == INT32_MIN)
            return INT32_MIN;
        for (int k = 0; k < p->u.join.nkeys; k++)
            if (check_expr(w, p->u.join.lkeys[k]) < 0 || check_expr(w, p->u.join.rkeys[k]) < 0)
                return INT32_MIN;
        if (check_expr(w, p->u.join.residual) < 0)
            return INT32_MIN;
        int lookup = table_read(p->right) && eng_plan_inserts_only(p->child)   ? 1
                     : table_read(p->child) && eng_plan_inserts_only(p->right) ? 0
                                                                     : -1;
        return add_n(w, eng_op_join_plan(p, time_of(w, in[0]), time_of(w, in[1]), lookup, w->err),
                     in);
    }
    case PLAN_DISTINCT: {
        /* checked first, so DISTINCT ON is refused as itself, not as the
         * Sort under it; made once the child's time columns are known */
        EngEdgeTime none = {0};
        EngOp *op = eng_op_distinct_plan(p, &none, w->err);
        if (op == NULL)
            return INT32_MIN;
        eng_op_free(op);
        int in = walk(w, p->child);
        if (in == INT32_MIN)
            return INT32_MIN;
        return add(w, eng_op_distinct_plan(p, time_of(w, in), w->err), in);
    }
    case PLAN_SETOP: {
        int in[2] = {walk(w, p->child), INT32_MIN};
        if (in[0] == INT32_MIN || (in[1] = walk(w, p->right)) == INT32_MIN)
            return INT32_MIN;
        return add_n(w, eng_op_setop_plan(p, time_of(w, in[0]), time_of(w, in[1]), w->err), in);
    }
    case PLAN_WINDOW:
        return walk_window(w, p, -1);
    case PLAN_LATERAL:
        refuse_kind(w, "LATERAL: a FROM item (a subquery, a set-returning function) that reads "
                       "the FROM items before it");
        return INT32_MIN;
    case PLAN_RECURSIVE:
        refuse_kind(w, "WITH RECURSIVE");
        return INT32_MIN;
    case PLAN_CTE_SCAN:
        /* a WITH query shared for a volatile function: refused there */
        return walk(w, p->child);
    default:
        refuse_kind(w, plan_kind_name(p->kind));
        return INT32_MIN;
    }
}

EngGraph *eng_compile(const Plan *plan, uint32_t query_oid, Arena *a, const Plan ***scans,
                      int *nscans, SlError *err)
{
    return eng_compile_time(plan, query_oid, a, NULL, NULL, scans, nscans, err);
}

EngGraph *eng_compile_time(const Plan *plan, uint32_t query_oid, Arena *a,
                           EngScanTimeFn time_fn, void *time_arg, const Plan ***scans,
                           int *nscans, SlError *err)
{
    return eng_compile_query(plan, NULL, 0, query_oid, a, time_fn, time_arg, scans, nscans, err);
}

EngGraph *eng_compile_query(const Plan *plan, const InitPlan *init, int ninit,
                            uint32_t query_oid, Arena *a, EngScanTimeFn time_fn, void *time_arg,
                            const Plan ***scans, int *nscans, SlError *err)
{
    Walk w = {eng_graph_new(query_oid), a, NULL, 0, 0, NULL, time_fn, time_arg, init, ninit,
              err};
    int out = walk(&w, plan);
    if (out != INT32_MIN && out < 0) {
        /* the output is a source: project its columns */
        Expr **cols = ARENA_ARRAY(&w.g->arena, Expr *, plan->ncols + 1);
        for (int c = 0; c < plan->ncols; c++)
            cols[c] = col_ref(&w.g->arena, c, plan->cols[c].type);
        out = add(&w, eng_op_project_new(plan->cols, plan->ncols, plan->cols, plan->ncols, cols,
                                         time_of(&w, out)),
                  out);
    }
    if (out == INT32_MIN) {
        eng_graph_free(w.g);
        return NULL;
    }
    *scans = w.scans;
    *nscans = w.nscans;
    return w.g;
}
