/*
 * analyze_agg.c -- aggregate calls, GROUP BY windows, and the check that
 * every column of an aggregate query is grouped.
 *
 *   an_is_aggregate_name   is this call an aggregate (count, sum, ...)?
 *   an_aggregate           an aggregate call -> an AggCall of the query level,
 *                          referenced by an EXPR_COLUMN of subkind COLREF_AGG
 *   an_no_such_function    42883 for a call no signature matches
 *   an_window_spec         WINDOW(ts, size [, slide]) / SESSION(ts, gap)
 *   an_agg_finish          the Aggregate node's columns, after adding the
 *                          columns functionally dependent on a grouped key
 *   an_agg_rewrite         an expression over the FROM output -> the same
 *                          over the Aggregate node's output (grouping()
 *                          calls: analyze_grouping.c's columns, or 0)
 *
 * As in PostgreSQL (parse_agg.c): aggregates cannot nest, are refused in
 * WHERE, JOIN conditions, GROUP BY, FILTER and VALUES (42803), and a column
 * outside an aggregate must be a GROUP BY expression or part of one -- or,
 * as PostgreSQL allows, a column of a table whose primary key is grouped.
 */
#include "sql/analyze_int.h"
#include "types/datetime.h"

#include <stdio.h>

bool an_is_aggregate_name(const FuncCall *f)
{
    if (f->qual != NULL && strcmp(list_nth(f->qual, 0), "pg_catalog") != 0)
        return false;
    return ex_agg_exists(f->name);
}

static bool agg_call_equal(const AggCall *a, const AggCall *b)
{
    if (a->sig != b->sig || a->distinct != b->distinct || a->star != b->star ||
        a->nargs != b->nargs)
        return false;
    for (int i = 0; i < a->nargs; i++)
        if (!plan_expr_equal(a->args[i], b->args[i]))
            return false;
    if (a->norder != b->norder)
        return false;
    for (int i = 0; i < a->norder; i++)
        if (a->order[i].desc != b->order[i].desc ||
            a->order[i].nulls_first != b->order[i].nulls_first ||
            !plan_expr_equal(a->order[i].expr, b->order[i].expr))
            return false;
    if ((a->filter == NULL) != (b->filter == NULL))
        return false;
    return a->filter == NULL || plan_expr_equal(a->filter, b->filter);
}

int an_no_such_function(Analyze *an, const char *name, Expr *const *args, int n, int loc)
{
    char call[256];
    int off = snprintf(call, sizeof(call), "%s(", name);
    for (int i = 0; i < n && off < (int)sizeof(call); i++) {
        char tb[96];
        off += snprintf(call + off, sizeof(call) - (size_t)off, "%s%s", i ? ", " : "",
                        type_display(args[i]->type, tb, sizeof(tb)));
    }
    if (off < (int)sizeof(call))
        snprintf(call + off, sizeof(call) - (size_t)off, ")");
    sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc, "function %s does not exist", call);
    sl_error_hint(an->err, "No function matches the given name and argument types. You "
                           "might need to add explicit type casts.");
    return -1;
}

static Expr *add_call(Analyze *an, AggCollect *ac, const AggCall *c, int loc);
static Expr *ordered_set_call(Analyze *an, AggCollect *ac, FuncCall *f);

/* A call's FILTER (WHERE ...) as a boolean (aggregates refused in it) into
 * *out (NULL: none): 0, or -1. */
static int agg_filter(Analyze *an, FuncCall *f, Expr **out)
{
    *out = NULL;
    if (f->filter == NULL)
        return 0;
    const char *saved = an->agg_refusal;
    an->agg_refusal = "FILTER";
    *out = an_to_boolean(an, an_transform(an, f->filter), "FILTER");
    an->agg_refusal = saved;
    return *out != NULL ? 0 : -1;
}

bool an_is_ordered_set_name(const char *name)
{
    return strcmp(name, "percentile_cont") == 0 || strcmp(name, "percentile_disc") == 0 ||
           strcmp(name, "mode") == 0;
}

int an_ordered_set_misuse(Analyze *an, FuncCall *f)
{
    int loc = f->hdr.location;
    int n = list_len(f->args) + (f->agg_within_group ? list_len(f->agg_order) : 0);
    int want = strcmp(f->name, "mode") == 0 ? 1 : 2;
    /* PostgreSQL finds the function by its argument count first */
    if (!f->agg_within_group && an_is_ordered_set_name(f->name) && n == want)
        return sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, loc,
                           "WITHIN GROUP is required for ordered-set aggregate %s", f->name);
    sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc,
                "function %s with %d argument%s does not exist", f->name, n, n == 1 ? "" : "s");
    sl_error_hint(an->err, "No function matches the given name and argument types. You "
                           "might need to add explicit type casts.");
    return -1;
}

Expr *an_aggregate(Analyze *an, FuncCall *f)
{
    int loc = f->hdr.location;
    if (an->agg_refusal != NULL || an->agg == NULL) {
        sl_error_at(an->err, ERRCODE_GROUPING_ERROR, loc,
                    "aggregate functions are not allowed in %s",
                    an->agg_refusal ? an->agg_refusal : "this context");
        return NULL;
    }
    AggCollect *ac = an->agg;
    if (ac->in_args) {
        sl_error_at(an->err, ERRCODE_GROUPING_ERROR, loc,
                    "aggregate function calls cannot be nested");
        return NULL;
    }
    if (an_is_ordered_set_name(f->name) != f->agg_within_group) {
        an_ordered_set_misuse(an, f);
        return NULL;
    }
    if (f->agg_within_group)
        return ordered_set_call(an, ac, f);
    int n = f->star ? 0 : list_len(f->args);
    Expr **args = ARENA_ARRAY(an->a, Expr *, n ? n : 1);
    SlTypeId types[2] = {TYPE_UNKNOWN, TYPE_UNKNOWN};
    ac->in_args = true;
    for (int i = 0; i < n; i++) {
        if ((args[i] = an_transform(an, list_nth(f->args, i))) == NULL) {
            ac->in_args = false;
            return NULL;
        }
        if (i < 2)
            types[i] = args[i]->type.id;
    }
    if (an_reads_outer_only(args, n)) {
        /* PostgreSQL's agglevelsup: an aggregate of the enclosing query */
        ac->in_args = false;
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "an aggregate over only an enclosing query's columns is not supported yet");
        return NULL;
    }
    int norder = list_len(f->agg_order);
    AggOrder *order = norder ? ARENA_ARRAY(an->a, AggOrder, norder) : NULL;
    for (int i = 0; i < norder; i++) {
        SortBy *sb = list_nth(f->agg_order, i);
        SortSpec sp;
        an_sort_dir(sb, &sp);
        Expr *e = an_transform(an, sb->node);
        if (e != NULL && e->type.id == TYPE_UNKNOWN)
            e = an_coerce(an, e, sl_type(TYPE_TEXT), COERCE_IMPLICIT, e->location);
        if (e == NULL) {
            ac->in_args = false;
            return NULL;
        }
        order[i] = (AggOrder){e, sp.desc, sp.nulls_first};
    }
    Expr *filter = NULL;
    if (agg_filter(an, f, &filter) < 0) {
        ac->in_args = false;
        return NULL;
    }
    ac->in_args = false;
    if (f->star && strcmp(f->name, "count") != 0) {
        /* no other aggregate takes no argument (PostgreSQL's answer) */
        sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc, "function %s(*) does not exist",
                    f->name);
        sl_error_hint(an->err, "No function matches the given name and argument types. You "
                               "might need to add explicit type casts.");
        return NULL;
    }
    if (strcmp(f->name, "array_agg") == 0 && n == 1 &&
        (types[0] == TYPE_UNKNOWN || types[0] == TYPE_ARRAY)) {
        /* array_agg(unknown) is ambiguous; of arrays, 2-D arrays */
        if (types[0] == TYPE_UNKNOWN) {
            /* PostgreSQL has array_agg(anynonarray) and array_agg(anyarray) */
            sl_error_at(an->err, ERRCODE_AMBIGUOUS_FUNCTION, loc,
                        "function array_agg(unknown) is not unique");
            sl_error_hint(an->err, "Could not choose a best candidate function. You might "
                                   "need to add explicit type casts.");
        } else
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                        "multidimensional arrays are not supported yet");
        return NULL;
    }
    SlTypeId cast[2];
    const AggSig *sig = n <= 2 ? ex_agg_lookup(f->name, n, types, cast) : NULL;
    if (sig == NULL) {
        an_no_such_function(an, f->name, args, n, loc);
        return NULL;
    }
    if (sig->id == AGG_JSONB_AGG || sig->id == AGG_JSONB_OBJECT_AGG) {
        /* the types agg.c turns into JSON as to_jsonb does */
        for (int i = 0; i < n; i++) {
            SlType t = args[i]->type;
            SlTypeId e = t.id == TYPE_ARRAY ? t.elem : t.id;
            if (e == TYPE_TIMESTAMP || e == TYPE_TIMESTAMPTZ) {
                sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, args[i]->location,
                            "%s of timestamp values is not supported yet", f->name);
                return NULL;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        if (args[i]->type.id == cast[i])
            continue;
        if ((args[i] = an_coerce(an, args[i], sl_type(cast[i]), COERCE_IMPLICIT,
                                 args[i]->location)) == NULL)
            return NULL;
    }
    if (f->distinct) {
        /* the keys must be arguments (they order the distinct rows) */
        for (int i = 0; i < norder; i++) {
            bool found = false;
            for (int k = 0; k < n && !found; k++)
                found = plan_expr_equal(order[i].expr, args[k]);
            if (!found) {
                sl_error_at(an->err, ERRCODE_INVALID_COLUMN_REFERENCE, order[i].expr->location,
                            "in an aggregate with DISTINCT, ORDER BY expressions must appear "
                            "in argument list");
                return NULL;
            }
        }
    }
    AggCall call = {
        .sig = sig, .name = f->name, .nargs = n, .args = args, .filter = filter,
        .distinct = f->distinct, .star = f->star, .norder = norder, .order = order,
        .type = sig->ret == TYPE__COUNT ? args[0]->type
                : sig->ret == TYPE_ARRAY  ? sl_array_type(args[0]->type.id, -1)
                                          : sl_type(sig->ret),
    };
    if (sig->ret == TYPE__COUNT)
        call.type.typmod = -1;
    return add_call(an, ac, &call, loc);
}

/* The call's column among the query level's aggregates (an equal call
 * already there is reused). */
static Expr *add_call(Analyze *an, AggCollect *ac, const AggCall *c, int loc)
{
    AggCall call = *c;
    int k;
    for (k = 0; k < ac->n; k++)
        if (agg_call_equal(&ac->calls[k], &call))
            break;
    if (k == ac->n) {
        if (ac->n == ac->cap) {
            int cap = ac->cap ? ac->cap * 2 : 8;
            AggCall *more = ARENA_ARRAY(an->a, AggCall, cap);
            if (ac->n)
                memcpy(more, ac->calls, sizeof(AggCall) * (size_t)ac->n);
            ac->calls = more;
            ac->cap = cap;
        }
        ac->calls[ac->n++] = call;
    }
    Expr *e = an_mk(an, EXPR_COLUMN, call.type, loc, 0, NULL);
    e->subkind = COLREF_AGG;
    e->index = k;
    return e;
}

/* ---------------------------------------------------- ordered-set calls */

static bool refers_to_columns(const Expr *e)
{
    if (e == NULL)
        return false;
    if (e->kind == EXPR_COLUMN || e->kind == EXPR_OUTER)
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (refers_to_columns(e->args[i]))
            return true;
    return false;
}

/* percentile_cont / percentile_disc (fraction or array of fractions) and
 * mode() WITHIN GROUP (ORDER BY x): an AggCall of arguments (x, fraction)
 * ordered by x, so aggset.c feeds the aggregate its rows sorted. */
static Expr *ordered_set_call(Analyze *an, AggCollect *ac, FuncCall *f)
{
    int loc = f->hdr.location;
    bool mode = strcmp(f->name, "mode") == 0, cont = strcmp(f->name, "percentile_cont") == 0;
    if (f->distinct || f->star) {
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc,
                    f->distinct ? "cannot use DISTINCT with WITHIN GROUP"
                                : "syntax error at or near \"*\"");
        return NULL;
    }
    int nd = list_len(f->args), nk = list_len(f->agg_order);
    Expr **all = ARENA_ARRAY(an->a, Expr *, nd + nk);
    ac->in_args = true;
    for (int i = 0; i < nd; i++)
        if ((all[i] = an_transform(an, list_nth(f->args, i))) == NULL)
            goto fail;
    for (int i = 0; i < nk; i++)
        if ((all[nd + i] = an_transform(an, ((SortBy *)list_nth(f->agg_order, i))->node)) ==
            NULL)
            goto fail;
    Expr *filter = NULL;
    if (agg_filter(an, f, &filter) < 0)
        goto fail;
    ac->in_args = false;
    Expr *d = nd == 1 ? all[0] : NULL, *x = nk == 1 ? all[nd] : NULL;
    bool multi = d != NULL && d->type.id == TYPE_ARRAY;
    bool ok = (mode ? nd == 0 : nd == 1) && nk == 1;
    if (ok && d != NULL && !multi && d->type.id != TYPE_UNKNOWN &&
        !ex_can_coerce(d->type.id, TYPE_FLOAT8))
        ok = false;
    if (ok && multi && !ex_can_coerce(d->type.elem, TYPE_FLOAT8))
        ok = false;
    if (ok && cont && x->type.id != TYPE_UNKNOWN && x->type.id != TYPE_INTERVAL &&
        !ex_can_coerce(x->type.id, TYPE_FLOAT8))
        ok = false;
    if (!ok) {
        an_no_such_function(an, f->name, all, nd + nk, loc);
        return NULL;
    }
    if (d != NULL && refers_to_columns(d)) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, d->location,
                    "the fraction of %s must be a constant or a parameter", f->name);
        return NULL;
    }
    if (cont && x->type.id == TYPE_INTERVAL) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "percentile_cont of interval is not supported yet");
        return NULL;
    }
    SlType xt = cont ? sl_type(TYPE_FLOAT8) : x->type.id == TYPE_UNKNOWN ? sl_type(TYPE_TEXT)
                                                                          : x->type;
    if (x->type.id != xt.id &&
        (x = an_coerce(an, x, xt, COERCE_IMPLICIT, x->location)) == NULL)
        return NULL;
    SlType dt = multi ? sl_array_type(TYPE_FLOAT8, -1) : sl_type(TYPE_FLOAT8);
    if (d != NULL && !(d->type.id == dt.id && (!multi || d->type.elem == TYPE_FLOAT8)) &&
        (d = an_coerce(an, d, dt, COERCE_IMPLICIT, d->location)) == NULL)
        return NULL;
    AggId id = mode ? AGG_MODE
               : cont ? (multi ? AGG_PERCENTILE_CONT_MULTI : AGG_PERCENTILE_CONT)
                      : (multi ? AGG_PERCENTILE_DISC_MULTI : AGG_PERCENTILE_DISC);
    SortSpec sp;
    an_sort_dir(list_nth(f->agg_order, 0), &sp);
    Expr **args = ARENA_ARRAY(an->a, Expr *, 2);
    args[0] = x;
    args[1] = d;
    AggOrder *order = ARENA_NEW(an->a, AggOrder);
    *order = (AggOrder){x, sp.desc, sp.nulls_first};
    SlType type = cont ? (multi ? sl_array_type(TYPE_FLOAT8, -1) : sl_type(TYPE_FLOAT8))
                  : multi ? sl_array_type(x->type.id, -1)
                          : x->type;
    if (!multi)
        type.typmod = -1;
    AggCall call = {
        .sig = ex_agg_sig(id), .name = f->name, .nargs = d != NULL ? 2 : 1, .args = args,
        .filter = filter, .norder = 1, .order = order, .type = type,
    };
    return add_call(an, ac, &call, loc);
fail:
    ac->in_args = false;
    return NULL;
}

/* ---------------------------------------------------------------- windows */

/* A constant positive interval without months, in microseconds. */
static int interval_arg(Analyze *an, Node *n, const char *what, const char *part,
                        int64_t *usec)
{
    Expr *e = an_transform(an, n);
    if (e == NULL)
        return -1;
    if (e->type.id == TYPE_UNKNOWN && e->kind == EXPR_CONST)
        e = an_coerce(an, e, sl_type(TYPE_INTERVAL), COERCE_IMPLICIT, e->location);
    if (e == NULL)
        return -1;
    if (e->type.id != TYPE_INTERVAL || e->kind != EXPR_CONST)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, n->location,
                           "the %s of %s must be a constant interval", part, what);
    if (vector_is_null(&e->value, 0))
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, n->location,
                           "the %s of %s must not be NULL", part, what);
    const SlInterval *iv = &e->value.v.iv[0];
    if (iv->months != 0)
        return sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, n->location,
                           "the %s of %s must not contain months or years", part, what);
    __int128 us = (__int128)iv->usec + (__int128)iv->days * USECS_PER_DAY;
    if (us <= 0 || us > INT64_MAX / 4)
        return sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, n->location,
                           "the %s of %s must be positive", part, what);
    *usec = (int64_t)us;
    return 0;
}

int an_window_spec(Analyze *an, FuncCall *f, WindowSpec *w)
{
    bool session = strcmp(f->name, "session") == 0;
    const char *what = session ? "SESSION" : "WINDOW";
    int n = list_len(f->args);
    if (f->star || f->distinct || f->filter || (session ? n != 2 : (n != 2 && n != 3)))
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, f->hdr.location,
                           session ? "SESSION takes a time column and a gap: SESSION(ts, gap)"
                                   : "WINDOW takes a time column, a size and optionally a "
                                     "slide: WINDOW(ts, size [, slide])");
    Expr *t = an_transform(an, list_nth(f->args, 0));
    if (t == NULL)
        return -1;
    if (t->type.id != TYPE_TIMESTAMP && t->type.id != TYPE_TIMESTAMPTZ)
        return sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, t->location,
                           "the time column of %s must be of type timestamp or timestamp with "
                           "time zone, not type %s",
                           what, type_name(t->type.id));
    memset(w, 0, sizeof(*w));
    w->time = t;
    if (session) {
        w->kind = WINDOW_SESSION;
        return interval_arg(an, list_nth(f->args, 1), what, "gap", &w->gap_us);
    }
    if (interval_arg(an, list_nth(f->args, 1), what, "size", &w->size_us) < 0)
        return -1;
    w->kind = WINDOW_TUMBLE;
    if (n == 3) {
        if (interval_arg(an, list_nth(f->args, 2), what, "slide", &w->slide_us) < 0)
            return -1;
        if (w->slide_us > w->size_us)
            return sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE,
                               ((Node *)list_nth(f->args, 2))->location,
                               "the slide of WINDOW must not be larger than its size");
        if (w->slide_us != w->size_us)
            w->kind = WINDOW_SLIDE;
    }
    return 0;
}

/* ----------------------------------------------------- grouping checks */

static int group_index(const Plan *agg, const Expr *e)
{
    for (int g = 0; g < agg->u.agg.ngroups; g++)
        if (plan_expr_equal(agg->u.agg.groups[g], e))
            return g;
    return -1;
}

/* Is group g in every grouping set (true without sets)? */
static bool in_every_set(const AggCollect *calls, int g)
{
    if (calls->sets == NULL)
        return true;
    for (int s = 0; s < calls->sets->n; s++) {
        const AnGroupSet *set = &calls->sets->sets[s];
        bool has = false;
        for (int i = 0; i < set->n && !has; i++)
            has = set->idx[i] == g;
        if (!has)
            return false;
    }
    return true;
}

/* Is input column colidx a group key (of every grouping set)? */
static bool grouped_column(const Plan *agg, const AggCollect *calls, int colidx)
{
    for (int g = 0; g < agg->u.agg.ngroups; g++) {
        const Expr *ge = agg->u.agg.groups[g];
        if (ge->kind == EXPR_COLUMN && ge->subkind == COLREF_PLAIN && ge->index == colidx &&
            in_every_set(calls, g))
            return true;
    }
    return false;
}

/* Is column colidx of a table whose whole primary key is grouped (in
 * every grouping set, as PostgreSQL asks)? */
static bool functionally_dependent(const Plan *agg, const AggCollect *calls,
                                   const Scope *scope, int colidx)
{
    for (int i = 0; i < list_len(scope->items); i++) {
        const ScopeItem *it = list_nth(scope->items, i);
        if (it->rel == NULL || it->is_join || it->rel->kind != REL_TABLE || it->rel->npk == 0)
            continue;
        bool mine = false;
        for (int c = 0; c < it->ncols; c++)
            mine |= it->colidx[c] == colidx;
        if (!mine)
            continue;
        bool all = true;
        for (int k = 0; k < it->rel->npk && all; k++)
            all = grouped_column(agg, calls, it->colidx[it->rel->pk[k]]);
        if (all)
            return true;
    }
    return false;
}

static void add_group(Analyze *an, Plan *agg, Expr *e)
{
    int n = agg->u.agg.ngroups;
    Expr **g = ARENA_ARRAY(an->a, Expr *, n + 1);
    if (n)
        memcpy(g, agg->u.agg.groups, sizeof(Expr *) * (size_t)n);
    g[n] = e;
    agg->u.agg.groups = g;
    agg->u.agg.ngroups = n + 1;
}

static int check_grouped(Analyze *an, Plan *agg, const AggCollect *calls, const Scope *scope,
                         const Expr *e)
{
    if (e == NULL || e->kind == EXPR_CONST || e->kind == EXPR_PARAM)
        return 0;
    if (e->kind == EXPR_COLUMN && e->subkind != COLREF_PLAIN)
        return 0;
    if (group_index(agg, e) >= 0)
        return 0;
    if (e->kind == EXPR_COLUMN) {
        if (functionally_dependent(agg, calls, scope, e->index)) {
            add_group(an, agg, (Expr *)e);
            return 0;
        }
        const Plan *from = scope->from;
        const char *qual = from->quals[e->index];
        if (qual != NULL)
            return sl_error_at(an->err, ERRCODE_GROUPING_ERROR, e->location,
                               "column \"%s.%s\" must appear in the GROUP BY clause or be used "
                               "in an aggregate function",
                               qual, from->cols[e->index].name);
        return sl_error_at(an->err, ERRCODE_GROUPING_ERROR, e->location,
                           "column \"%s\" must appear in the GROUP BY clause or be used in an "
                           "aggregate function",
                           from->cols[e->index].name);
    }
    for (int i = 0; i < e->nargs; i++)
        if (check_grouped(an, agg, calls, scope, e->args[i]) < 0)
            return -1;
    return 0;
}

int an_agg_finish(Analyze *an, Plan *agg, const Scope *scope, Expr **check, int ncheck,
                  const AggCollect *calls)
{
    int ng0 = agg->u.agg.ngroups;
    for (int i = 0; i < ncheck; i++)
        if (check_grouped(an, agg, calls, scope, check[i]) < 0)
            return -1;
    if (calls->sets != NULL && agg->u.agg.ngroups > ng0) {
        /* columns dependent on a key of every set join every set */
        for (int s = 0; s < calls->sets->n; s++) {
            AnGroupSet *set = &calls->sets->sets[s];
            int *idx = ARENA_ARRAY(an->a, int, set->n + agg->u.agg.ngroups - ng0);
            if (set->n)
                memcpy(idx, set->idx, sizeof(int) * (size_t)set->n);
            for (int g = ng0; g < agg->u.agg.ngroups; g++)
                idx[set->n++] = g;
            set->idx = idx;
        }
    }
    agg->u.agg.naggs = calls->n;
    agg->u.agg.aggs = calls->calls;
    bool win = agg->u.agg.window.kind != WINDOW_NONE;
    int ngr = calls->sets != NULL ? calls->ngrouping : 0;
    int ng = agg->u.agg.ngroups, n = ng + (win ? 2 : 0) + calls->n + ngr;
    agg->ncols = n;
    agg->cols = ARENA_ARRAY(an->a, ColumnDesc, n ? n : 1);
    agg->quals = arena_zalloc(an->a, sizeof(const char *) * (size_t)(n ? n : 1));
    const Plan *child = agg->child;
    for (int g = 0; g < ng; g++) {
        const Expr *ge = agg->u.agg.groups[g];
        if (ge->kind == EXPR_COLUMN) {
            plan_set_col(agg, g, child->cols[ge->index].name, ge->type, child->quals[ge->index]);
        } else {
            StrBuf b;
            strbuf_init(&b);
            plan_expr_deparse(ge, child->cols, child->quals, &b);
            plan_set_col(agg, g, arena_strndup(an->a, b.data ? b.data : "", b.len), ge->type,
                         NULL);
            strbuf_free(&b);
        }
    }
    if (win) {
        SlType t = agg->u.agg.window.time->type;
        t.typmod = -1;
        plan_set_col(agg, ng, "window_start", t, NULL);
        plan_set_col(agg, ng + 1, "window_end", t, NULL);
    }
    for (int k = 0; k < calls->n; k++) {
        StrBuf b;
        strbuf_init(&b);
        plan_agg_call_deparse(&calls->calls[k], child->cols, child->quals, &b);
        plan_set_col(agg, ng + (win ? 2 : 0) + k, arena_strndup(an->a, b.data, b.len),
                     calls->calls[k].type, NULL);
        strbuf_free(&b);
    }
    for (int k = 0; k < ngr; k++)
        plan_set_col(agg, ng + calls->n + k, "grouping", sl_type(TYPE_INT4), NULL);
    return 0;
}

Expr *an_agg_rewrite(Analyze *an, Expr *e, const Plan *agg, const AggCollect *calls,
                     Scope *scope)
{
    if (e == NULL || e->kind == EXPR_CONST || e->kind == EXPR_PARAM)
        return e;
    int ng = agg->u.agg.ngroups;
    bool win = agg->u.agg.window.kind != WINDOW_NONE;
    int idx = -1;
    if (e->kind == EXPR_COLUMN && e->subkind == COLREF_GROUPING) {
        if (calls->sets == NULL) {
            /* without grouping sets every key is in the one set */
            Expr *c = an_const(an, sl_type(TYPE_INT4), e->location, false);
            c->value.v.i32[0] = 0;
            return c;
        }
        idx = ng + (win ? 2 : 0) + calls->n + e->index;
    } else if (e->kind == EXPR_COLUMN && e->subkind == COLREF_AGG)
        idx = ng + (win ? 2 : 0) + e->index;
    else if (e->kind == EXPR_COLUMN && e->subkind == COLREF_WINDOW_START)
        idx = ng;
    else if (e->kind == EXPR_COLUMN && e->subkind == COLREF_WINDOW_END)
        idx = ng + 1;
    else
        idx = group_index(agg, e);
    if (idx >= 0) {
        Expr *c = an_mk(an, EXPR_COLUMN, e->type, e->location, 0, NULL);
        c->index = idx;
        return c;
    }
    if (e->kind == EXPR_COLUMN) {
        /* check_grouped reported it already; never reached */
        sl_error_at(an->err, ERRCODE_GROUPING_ERROR, e->location,
                    "column must appear in the GROUP BY clause or be used in an aggregate "
                    "function");
        return NULL;
    }
    Expr *c = ARENA_NEW(an->a, Expr);
    *c = *e;
    if (e->nargs > 0) {
        c->args = ARENA_ARRAY(an->a, Expr *, e->nargs);
        for (int i = 0; i < e->nargs; i++)
            if ((c->args[i] = an_agg_rewrite(an, e->args[i], agg, calls, scope)) == NULL)
                return NULL;
    }
    return c;
}
