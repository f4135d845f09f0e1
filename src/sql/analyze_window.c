/*
 * analyze_window.c -- window function calls, f(...) OVER (...), into
 * Window nodes.
 *
 *   an_window_clause WINDOW name AS (...), ...: checked and kept for the
 *                    calls (OVER name, OVER (name ...))
 *   an_window_call   one call -> a Project (the input's columns, then the
 *                    call's arguments, PARTITION BY and ORDER BY values
 *                    and RANGE bounds), a Sort by the partition and order
 *                    keys, and a Window node over them; the call's value is
 *                    the Window's last column
 *
 * The query level's AnWindows (simple_select sets it) holds the plan the
 * select list and ORDER BY read: each call stacks its nodes on it.  The
 * nodes keep the input's columns at their positions, so the column
 * references made before and after stay valid.  Each call sorts on its
 * own (several windows: several sorts).
 *
 * The checks and their SQLSTATEs are PostgreSQL 15's (parse_func.c,
 * parse_clause.c, gram.y's frame rules): 42P20 for misplaced calls and bad
 * frames, 0A000 for DISTINCT / ORDER BY / FILTER where PostgreSQL does not
 * implement them, 42P10 for an offset that reads a column.  Window
 * functions in a query level with aggregates (sum(sum(x)) OVER ()) are not
 * supported yet: 0A000 (here, or simple_select's check).  RANGE with an
 * offset takes one ORDER BY key of a numeric, date, timestamp[tz] or
 * interval type (PostgreSQL's in_range support functions); the bounds are
 * computed in numeric for the integer types, so they never overflow.
 */
#include "sql/analyze_int.h"

typedef struct WinFuncInfo {
    const char *name;
    WindowFunc  func;
    int         min_args, max_args;
} WinFuncInfo;

static const WinFuncInfo win_funcs[] = {
    {"row_number", WINDOW_FUNC_ROW_NUMBER, 0, 0},
    {"rank", WINDOW_FUNC_RANK, 0, 0},
    {"dense_rank", WINDOW_FUNC_DENSE_RANK, 0, 0},
    {"percent_rank", WINDOW_FUNC_PERCENT_RANK, 0, 0},
    {"cume_dist", WINDOW_FUNC_CUME_DIST, 0, 0},
    {"ntile", WINDOW_FUNC_NTILE, 1, 1},
    {"lag", WINDOW_FUNC_LAG, 1, 3},
    {"lead", WINDOW_FUNC_LEAD, 1, 3},
    {"first_value", WINDOW_FUNC_FIRST_VALUE, 1, 1},
    {"last_value", WINDOW_FUNC_LAST_VALUE, 1, 1},
    {"nth_value", WINDOW_FUNC_NTH_VALUE, 2, 2},
};

static const WinFuncInfo *win_func(const char *name)
{
    for (size_t i = 0; i < sizeof(win_funcs) / sizeof(win_funcs[0]); i++)
        if (strcmp(win_funcs[i].name, name) == 0)
            return &win_funcs[i];
    return NULL;
}

/* Does e read a column of a row (its own query's or an outer one's)? */
static bool reads_columns(const Expr *e)
{
    if (e == NULL)
        return false;
    if (e->kind == EXPR_COLUMN || e->kind == EXPR_OUTER)
        return true;
    if (e->kind == EXPR_SUBPLAN && e->subplan != NULL)
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (reads_columns(e->args[i]))
            return true;
    return false;
}

static int no_such_function(Analyze *an, FuncCall *f, Expr **args, int n)
{
    return an_no_such_function(an, f->name, args, n, f->hdr.location);
}

/* gram.y's checks of a frame's bounds. */
static int check_bounds(Analyze *an, const WindowFrameDef *fr)
{
    bool single = fr->end.location < 0;
    FrameBoundKind s = fr->start.kind, e = fr->end.kind;
    if (s == BOUND_UNBOUNDED_FOLLOWING)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, fr->start.location,
                           "frame start cannot be UNBOUNDED FOLLOWING");
    if (single && s == BOUND_FOLLOWING)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, fr->start.location,
                           "frame starting from following row cannot end with current row");
    if (single)
        return 0;
    if (e == BOUND_UNBOUNDED_PRECEDING)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, fr->end.location,
                           "frame end cannot be UNBOUNDED PRECEDING");
    if (s == BOUND_CURRENT_ROW && e == BOUND_PRECEDING)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, fr->end.location,
                           "frame starting from current row cannot have preceding rows");
    if (s == BOUND_FOLLOWING && (e == BOUND_PRECEDING || e == BOUND_CURRENT_ROW))
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, fr->end.location,
                           "frame starting from following row cannot have preceding rows");
    return 0;
}

/* A frame offset: transformed, free of columns; ROWS and GROUPS: bigint. */
static Expr *frame_offset(Analyze *an, const FrameBound *b, FrameMode mode)
{
    const char *what = mode == FRAME_ROWS ? "ROWS" : mode == FRAME_GROUPS ? "GROUPS" : "RANGE";
    Expr *e = an_transform(an, b->offset);
    if (e == NULL)
        return NULL;
    if (reads_columns(e)) {
        sl_error_at(an->err, ERRCODE_INVALID_COLUMN_REFERENCE, b->offset->location,
                    "argument of %s must not contain variables", what);
        return NULL;
    }
    if (mode != FRAME_RANGE && e->type.id != TYPE_INT8) {
        SlTypeId t = e->type.id;
        if (t != TYPE_UNKNOWN && t != TYPE_INT2 && t != TYPE_INT4) {
            sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, b->offset->location,
                        "argument of %s must be type bigint, not type %s", what, type_name(t));
            return NULL;
        }
        e = an_coerce(an, e, sl_type(TYPE_INT8), COERCE_IMPLICIT, b->offset->location);
    }
    return e;
}

static bool is_int_type(SlTypeId t)
{
    return t == TYPE_INT2 || t == TYPE_INT4 || t == TYPE_INT8;
}

/* RANGE with an offset: the type the key and its bounds are compared in,
 * and the offset's, as PostgreSQL's in_range functions take them. */
static int range_types(Analyze *an, SlTypeId key, SlTypeId off, int loc, SlTypeId *cmp,
                       SlTypeId *offt)
{
    bool ok;
    if (is_int_type(key)) {
        *cmp = TYPE_NUMERIC;
        *offt = TYPE_NUMERIC;
        ok = is_int_type(off) || off == TYPE_UNKNOWN;
    } else if (key == TYPE_NUMERIC) {
        *cmp = *offt = TYPE_NUMERIC;
        ok = is_int_type(off) || off == TYPE_NUMERIC || off == TYPE_UNKNOWN;
    } else if (key == TYPE_FLOAT4 || key == TYPE_FLOAT8) {
        *cmp = *offt = TYPE_FLOAT8;
        ok = is_int_type(off) || off == TYPE_NUMERIC || off == TYPE_FLOAT4 ||
             off == TYPE_FLOAT8 || off == TYPE_UNKNOWN;
    } else if (key == TYPE_DATE || key == TYPE_TIMESTAMP || key == TYPE_TIMESTAMPTZ ||
               key == TYPE_INTERVAL) {
        *cmp = key == TYPE_DATE ? TYPE_TIMESTAMP : key;
        *offt = TYPE_INTERVAL;
        ok = off == TYPE_INTERVAL || off == TYPE_UNKNOWN;
    } else {
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                           "RANGE with offset PRECEDING/FOLLOWING is not supported for column "
                           "type %s", type_name(key));
    }
    if (!ok) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s "
                    "and offset type %s", type_name(key), type_name(off));
        sl_error_hint(an->err, "Cast the offset value to an appropriate type.");
        return -1;
    }
    return 0;
}

/* What the call's Project adds after the input's columns. */
typedef struct Extra {
    Expr      **exprs;
    const char **names;
    int         n, cap;
} Extra;

static int extra_add(Analyze *an, Extra *x, Expr *e)
{
    if (x->n == x->cap) {
        int cap = x->cap ? 2 * x->cap : 16;
        Expr **ne = ARENA_ARRAY(an->a, Expr *, cap);
        const char **nn = ARENA_ARRAY(an->a, const char *, cap);
        if (x->n) {
            memcpy(ne, x->exprs, sizeof(Expr *) * (size_t)x->n);
            memcpy(nn, x->names, sizeof(const char *) * (size_t)x->n);
        }
        x->exprs = ne;
        x->names = nn;
        x->cap = cap;
    }
    x->exprs[x->n] = e;
    x->names[x->n] = "?column?";
    return x->n++;
}

/* The arguments of a built-in window function, coerced; the value's type. */
static int window_args(Analyze *an, FuncCall *f, const WinFuncInfo *wf, Expr **args,
                       SlType *type)
{
    int n = list_len(f->args);
    for (int i = 0; i < n; i++)
        if ((args[i] = an_transform(an, list_nth(f->args, i))) == NULL)
            return -1;
    bool hypothetical = wf->func == WINDOW_FUNC_RANK || wf->func == WINDOW_FUNC_DENSE_RANK ||
                        wf->func == WINDOW_FUNC_PERCENT_RANK || wf->func == WINDOW_FUNC_CUME_DIST;
    if (hypothetical && n > 0)     /* PostgreSQL's hypothetical-set aggregates */
        return sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, f->hdr.location,
                           "WITHIN GROUP is required for ordered-set aggregate %s", f->name);
    if (f->star || n < wf->min_args || n > wf->max_args)
        return no_such_function(an, f, args, f->star ? 0 : n);
    switch (wf->func) {
    case WINDOW_FUNC_ROW_NUMBER:
    case WINDOW_FUNC_RANK:
    case WINDOW_FUNC_DENSE_RANK:
        *type = sl_type(TYPE_INT8);
        return 0;
    case WINDOW_FUNC_PERCENT_RANK:
    case WINDOW_FUNC_CUME_DIST:
        *type = sl_type(TYPE_FLOAT8);
        return 0;
    default:
        break;
    }
    /* the int argument: ntile's first, lag/lead/nth_value's second */
    int ia = wf->func == WINDOW_FUNC_NTILE ? 0 : 1;
    if (ia < n) {
        SlTypeId t = args[ia]->type.id;
        if (t != TYPE_INT4 && t != TYPE_INT2 && t != TYPE_UNKNOWN)
            return no_such_function(an, f, args, n);
        if ((args[ia] = an_coerce(an, args[ia], sl_type(TYPE_INT4), COERCE_IMPLICIT,
                                  args[ia]->location)) == NULL)
            return -1;
    }
    if (wf->func == WINDOW_FUNC_NTILE) {
        *type = sl_type(TYPE_INT4);
        return 0;
    }
    /* the value (and lag/lead's default): their common type */
    Expr *vals[2] = {args[0], n == 3 ? args[2] : NULL};
    int nv = n == 3 ? 2 : 1;
    SlType t;
    if (!an_common_type(an, vals, nv, f->name, &t))
        return -1;
    if (t.id == TYPE_UNKNOWN)
        t = sl_type(TYPE_TEXT);
    for (int k = 0; k < nv; k++) {
        int ai = k == 0 ? 0 : 2;
        if (args[ai]->type.id != t.id &&
            (args[ai] = an_coerce(an, args[ai], t, COERCE_IMPLICIT, args[ai]->location)) == NULL)
            return -1;
    }
    *type = args[0]->type;
    if (nv == 2 && args[2]->type.typmod != type->typmod)
        type->typmod = -1;
    return 0;
}

/* An aggregate over the frame: the AggCall an_aggregate makes for it. */
static int window_agg(Analyze *an, FuncCall *f, AggCall *call)
{
    AggCollect tmp = {0};
    AggCollect *saved = an->agg;
    const char *saved_ref = an->agg_refusal;
    an->agg = &tmp;
    an->agg_refusal = NULL;
    Expr *e = an_aggregate(an, f);
    an->agg = saved;
    an->agg_refusal = saved_ref;
    if (e == NULL && strcmp(an->err->sqlstate, ERRCODE_GROUPING_ERROR) == 0 &&
        an->err->message != NULL &&
        strcmp(an->err->message, "aggregate function calls cannot be nested") == 0) {
        /* sum(sum(x)) OVER (): an aggregate of the query level inside */
        int pos = an->err->position;
        sl_error_clear(an->err);
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, pos > 0 ? pos - 1 : -1,
                    "window functions over aggregates are not supported yet");
        sl_error_hint(an->err, "Aggregate in a subquery and apply the window function to "
                               "its result.");
        return -1;
    }
    if (e == NULL)
        return -1;
    *call = tmp.calls[0];
    return 0;
}

/* The sort direction of a window's ORDER BY item. */
static SortSpec order_spec(const SortBy *sb, int col)
{
    SortSpec sp = {.col = col};
    an_sort_dir(sb, &sp);
    return sp;
}

static int frame_clause(Analyze *an, FuncCall *f, Plan *w, Extra *x, int nb, Expr *key,
                        const SortSpec *key_spec)
{
    const WindowFrameDef *fr = f->over_frame;
    int no = list_len(f->over_order);
    w->u.window.mode = FRAME_RANGE;
    w->u.window.start = BOUND_UNBOUNDED_PRECEDING;
    w->u.window.end = BOUND_CURRENT_ROW;
    w->u.window.exclude = EXCLUDE_NO_OTHERS;
    w->u.window.range_key = w->u.window.range_start = w->u.window.range_end = -1;
    if (fr == NULL)
        return 0;
    if (check_bounds(an, fr) < 0)
        return -1;
    w->u.window.mode = fr->mode;
    w->u.window.start = fr->start.kind;
    w->u.window.end = fr->end.kind;
    w->u.window.exclude = fr->exclude;
    bool offs = fr->start.offset != NULL || fr->end.offset != NULL;
    if (fr->mode == FRAME_GROUPS && no == 0)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, fr->location,
                           "GROUPS mode requires an ORDER BY clause");
    if (fr->mode == FRAME_RANGE && offs && no != 1)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, fr->location,
                           "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY "
                           "column");
    const FrameBound *bounds[2] = {&fr->start, &fr->end};
    Expr **outs[2] = {&w->u.window.start_off, &w->u.window.end_off};
    Expr **negs[2] = {&w->u.window.start_neg, &w->u.window.end_neg};
    int *cols[2] = {&w->u.window.range_start, &w->u.window.range_end};
    for (int k = 0; k < 2; k++) {
        const FrameBound *b = bounds[k];
        if (b->offset == NULL)
            continue;
        Expr *off = frame_offset(an, b, fr->mode);
        if (off == NULL)
            return -1;
        *outs[k] = off;
        if (fr->mode != FRAME_RANGE)
            continue;
        SlTypeId cmp, offt;
        if (range_types(an, key->type.id, off->type.id, b->offset->location, &cmp, &offt) < 0)
            return -1;
        if ((off = an_coerce(an, off, sl_type(offt), COERCE_IMPLICIT, b->location)) == NULL)
            return -1;
        *outs[k] = off;
        Expr *zero = an_make_op(an, "-", off, off, b->location);
        if (zero == NULL || (*negs[k] = an_make_op(an, "<", off, zero, b->location)) == NULL)
            return -1;
        Expr *kc = key->type.id == cmp ? key
                                       : an_coerce(an, key, sl_type(cmp), COERCE_EXPLICIT, -1);
        if (kc == NULL)
            return -1;
        if (w->u.window.range_key < 0)
            w->u.window.range_key = nb + extra_add(an, x, kc);
        /* PostgreSQL's in_range "sub": subtract for PRECEDING, flipped by DESC */
        bool sub = (b->kind == BOUND_PRECEDING) != key_spec->desc;
        Expr *bound = an_make_op(an, sub ? "-" : "+", kc, off, b->location);
        if (bound == NULL)
            return -1;
        if (bound->type.id != cmp &&
            (bound = an_coerce(an, bound, sl_type(cmp), COERCE_EXPLICIT, -1)) == NULL)
            return -1;
        *cols[k] = nb + extra_add(an, x, bound);
    }
    return 0;
}

/* A window with what it copies from a WINDOW clause's definition resolved
 * (PostgreSQL's rules: PARTITION BY comes only from the named window, its
 * ORDER BY cannot be overridden, and one with a frame is only used bare). */
typedef struct WinSpec {
    List           *partition, *order;
    WindowFrameDef *frame;
} WinSpec;

static int resolve_spec(Analyze *an, List *defs, int upto, const char *ref, bool bare,
                        const WinSpec *own, int loc, WinSpec *out)
{
    if (ref == NULL) {
        *out = *own;
        return 0;
    }
    int k;
    for (k = upto - 1; k >= 0; k--)
        if (strcmp(((WindowDef *)list_nth(defs, k))->name, ref) == 0)
            break;
    if (k < 0)
        return sl_error_at(an->err, ERRCODE_UNDEFINED_OBJECT, loc,
                           "window \"%s\" does not exist", ref);
    const WindowDef *d = list_nth(defs, k);
    WinSpec dspec = {d->partition, d->order, d->frame}, base;
    if (resolve_spec(an, defs, k, d->refname, false, &dspec, d->location, &base) < 0)
        return -1;
    if (bare) {
        *out = base;
        return 0;
    }
    if (own->partition != NULL)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, loc,
                           "cannot override PARTITION BY clause of window \"%s\"", ref);
    if (own->order != NULL && base.order != NULL)
        return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, loc,
                           "cannot override ORDER BY clause of window \"%s\"", ref);
    if (base.frame != NULL) {
        sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, loc,
                    "cannot copy window \"%s\" because it has a frame clause", ref);
        if (own->order == NULL && own->frame == NULL)
            sl_error_hint(an->err, "Omit the parentheses in this OVER clause.");
        return -1;
    }
    out->partition = base.partition;
    out->order = own->order != NULL ? own->order : base.order;
    out->frame = own->frame;
    return 0;
}

int an_window_clause(Analyze *an, List *defs)
{
    AnWindows *win = an->win;
    for (int i = 0; i < list_len(defs); i++) {
        const WindowDef *d = list_nth(defs, i);
        for (int k = 0; k < i; k++)
            if (strcmp(((WindowDef *)list_nth(defs, k))->name, d->name) == 0)
                return sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, d->location,
                                   "window \"%s\" is already defined", d->name);
        WinSpec own = {d->partition, d->order, d->frame}, spec;
        if (resolve_spec(an, defs, i, d->refname, false, &own, d->location, &spec) < 0)
            return -1;
        /* its expressions are checked even when no call uses it */
        win->inside = win->in_def = true;
        int np = list_len(d->partition), no = list_len(d->order);
        for (int k = 0; k < np + no; k++) {
            Node *n = k < np ? list_nth(d->partition, k)
                             : ((SortBy *)list_nth(d->order, k - np))->node;
            if (an_transform(an, n) == NULL) {
                win->inside = win->in_def = false;
                return -1;
            }
        }
        win->inside = win->in_def = false;
    }
    win->defs = defs;
    return 0;
}

Expr *an_window_call(Analyze *an, FuncCall *call)
{
    int loc = call->hdr.location;
    AnWindows *win = an->win;
    if (an->agg != NULL && an->agg->in_args) {
        sl_error_at(an->err, ERRCODE_GROUPING_ERROR, loc,
                    "aggregate function calls cannot contain window function calls");
        return NULL;
    }
    if (win == NULL || win->refusal != NULL || an->agg_refusal != NULL) {
        const char *where = an->agg_refusal != NULL ? an->agg_refusal
                            : win != NULL           ? win->refusal : "this context";
        sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, loc,
                    "window functions are not allowed in %s", where);
        return NULL;
    }
    if (win->inside) {
        sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, loc,
                    win->in_def ? "window functions are not allowed in window definitions"
                                : "window function calls cannot be nested");
        return NULL;
    }
    if (call->distinct) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "DISTINCT is not implemented for window functions");
        return NULL;
    }
    if (call->agg_order != NULL) {
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                    "aggregate ORDER BY is not implemented for window functions");
        return NULL;
    }
    /* the call with its window's definition resolved */
    FuncCall copy = *call, *f = &copy;
    WinSpec own = {call->over_partition, call->over_order, call->over_frame}, spec;
    if (resolve_spec(an, win->defs, list_len(win->defs), call->over_ref, call->over_bare, &own,
                     call->over_loc, &spec) < 0)
        return NULL;
    f->over_partition = spec.partition;
    f->over_order = spec.order;
    f->over_frame = spec.frame;
    const WinFuncInfo *wf = win_func(f->name);
    bool agg = wf == NULL && an_is_aggregate_name(f);
    if (wf == NULL && !agg) {
        if (ex_func_exists(f->name, false)) {
            sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, loc,
                        "OVER specified, but %s is not a window function nor an aggregate "
                        "function", f->name);
            return NULL;
        }
    }

    Plan *base = win->base;
    int nb = base->ncols;
    Extra x = {0};
    Plan *w = plan_new(an->a, PLAN_WINDOW, NULL, 0);
    w->u.window.name = f->name;
    SlType type = sl_type(TYPE_INT8);
    win->inside = true;
    win->in_def = false;
    if (agg) {
        if (window_agg(an, f, &w->u.window.agg) < 0)
            goto fail;
        w->u.window.func = WINDOW_FUNC_AGG;
        type = w->u.window.agg.type;
    } else {
        Expr *args[3];
        if (wf == NULL) {
            int n = list_len(f->args);
            Expr **a = ARENA_ARRAY(an->a, Expr *, n ? n : 1);
            for (int i = 0; i < n; i++)
                if ((a[i] = an_transform(an, list_nth(f->args, i))) == NULL)
                    goto fail;
            no_such_function(an, f, a, n);
            goto fail;
        }
        if (window_args(an, f, wf, args, &type) < 0)
            goto fail;
        if (f->filter != NULL) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                        "FILTER is not implemented for non-aggregate window functions");
            goto fail;
        }
        w->u.window.func = wf->func;
        w->u.window.nargs = list_len(f->args);
        for (int i = 0; i < w->u.window.nargs; i++)
            w->u.window.args[i] = nb + extra_add(an, &x, args[i]);
    }

    /* PARTITION BY and ORDER BY */
    win->in_def = true;
    int np = list_len(f->over_partition), no = list_len(f->over_order);
    SortSpec *specs = ARENA_ARRAY(an->a, SortSpec, np + no + 1);
    Expr *key = NULL;
    for (int k = 0; k < np + no; k++) {
        SortBy *sb = k >= np ? list_nth(f->over_order, k - np) : NULL;
        Node *n = sb ? sb->node : list_nth(f->over_partition, k);
        Expr *e = an_transform(an, n);
        if (e == NULL)
            goto fail;
        if (e->type.id == TYPE_UNKNOWN &&
            (e = an_coerce(an, e, sl_type(TYPE_TEXT), COERCE_IMPLICIT, e->location)) == NULL)
            goto fail;
        int col = nb + extra_add(an, &x, e);
        specs[k] = sb ? order_spec(sb, col) : (SortSpec){.col = col};
        if (k == np)
            key = e;
    }
    w->u.window.npart = np;
    w->u.window.norder = no;
    w->u.window.part = ARENA_ARRAY(an->a, int, np ? np : 1);
    w->u.window.order = ARENA_ARRAY(an->a, int, no ? no : 1);
    for (int k = 0; k < np; k++)
        w->u.window.part[k] = specs[k].col;
    for (int k = 0; k < no; k++)
        w->u.window.order[k] = specs[np + k].col;
    if (no > 0) {
        w->u.window.desc = specs[np].desc;
        w->u.window.nulls_first = specs[np].nulls_first;
    }
    if (frame_clause(an, f, w, &x, nb, key, no > 0 ? &specs[np] : NULL) < 0)
        goto fail;
    win->inside = win->in_def = false;

    /* Project -> Sort -> Window over the input so far */
    Expr **exprs = ARENA_ARRAY(an->a, Expr *, nb + x.n + 1);
    const char **names = ARENA_ARRAY(an->a, const char *, nb + x.n + 1);
    for (int c = 0; c < nb; c++) {
        exprs[c] = an_column_expr(an, base, c, -1);
        names[c] = base->cols[c].name;
    }
    for (int k = 0; k < x.n; k++) {
        exprs[nb + k] = x.exprs[k];
        names[nb + k] = x.names[k];
    }
    Plan *proj = an_project(an, base, exprs, names, nb + x.n);
    for (int c = 0; c < nb; c++)
        proj->quals[c] = base->quals[c];
    Plan *sorted = np + no > 0 ? an_sort_plan(an, proj, specs, np + no) : proj;
    Plan *node = plan_new(an->a, PLAN_WINDOW, sorted, sorted->ncols + 1);
    node->u = w->u;
    for (int c = 0; c < sorted->ncols; c++)
        plan_set_col(node, c, sorted->cols[c].name, sorted->cols[c].type, sorted->quals[c]);
    plan_set_col(node, sorted->ncols, f->name, type, NULL);
    win->base = node;
    win->n++;
    Expr *e = an_mk(an, EXPR_COLUMN, type, loc, 0, NULL);
    e->index = sorted->ncols;
    return e;
fail:
    win->inside = win->in_def = false;
    return NULL;
}
