/*
 * resolve.c -- operator and function resolution (PostgreSQL's
 * parse_oper.c / parse_func.c, func_select_candidate).
 *
 *   an_resolve(an, name, is_op, args, nargs, loc)    pick a FuncDesc
 *   an_apply_func(an, fd, args, nargs, loc)          build the call
 *
 * The steps, as PostgreSQL takes them:
 *   0. a binary operator with one unknown argument: try the other
 *      argument's type for both (binary_oper_exact);
 *   1. keep the rows every argument can be implicitly cast to;
 *   2. keep those with the most exact type matches;
 *   3. keep those with the most preferred types where a cast is needed;
 *   4. for unknown arguments, prefer the string category if any row takes
 *      it there, else the one category all rows agree on, and its preferred
 *      type;
 *   5. if the known arguments all have one type, keep rows that take it at
 *      the unknown positions.
 * One row left wins; none is 42883, several 42725.
 */
#include "sql/analyze_int.h"

#include <stdio.h>

#define MAX_CANDIDATES 64
#define ANY TYPE__COUNT

static bool can_take(SlTypeId input, SlTypeId decl)
{
    if (decl == ANY)
        return input != TYPE_UNKNOWN;
    return ex_can_coerce(input, decl);
}

static char category_of(SlTypeId t)
{
    return t == ANY ? 'P' : type_category(t);
}

static bool preferred(SlTypeId t)
{
    return t != ANY && type_is_preferred(t);
}

/* Keeps the candidates whose score is the maximum; returns how many. */
static int keep_best(const FuncDesc **c, int n, const int *score)
{
    int best = -1, m = 0;
    for (int i = 0; i < n; i++)
        best = SL_MAX(best, score[i]);
    for (int i = 0; i < n; i++)
        if (score[i] == best)
            c[m++] = c[i];
    return m;
}

static const FuncDesc *select_candidate(const FuncDesc **c, int n, const SlTypeId *in,
                                        int nargs, bool *ambiguous)
{
    int score[MAX_CANDIDATES];
    *ambiguous = false;
    if (n == 1)
        return c[0];
    /* 2: most exact matches */
    for (int i = 0; i < n; i++) {
        score[i] = 0;
        for (int k = 0; k < nargs; k++)
            score[i] += in[k] != TYPE_UNKNOWN && c[i]->args[k] == in[k];
    }
    n = keep_best(c, n, score);
    if (n == 1)
        return c[0];
    /* 3: most preferred types (of the input's category) where cast */
    for (int i = 0; i < n; i++) {
        score[i] = 0;
        for (int k = 0; k < nargs; k++)
            if (in[k] != TYPE_UNKNOWN &&
                (c[i]->args[k] == in[k] ||
                 (preferred(c[i]->args[k]) && category_of(c[i]->args[k]) == type_category(in[k]))))
                score[i]++;
    }
    n = keep_best(c, n, score);
    if (n == 1)
        return c[0];
    /* 4: unknown arguments */
    bool any_unknown = false;
    char slot_cat[FUNC_MAX_ARGS] = {0};
    bool slot_pref[FUNC_MAX_ARGS] = {false};
    bool resolved = true;
    for (int k = 0; k < nargs; k++) {
        if (in[k] != TYPE_UNKNOWN)
            continue;
        any_unknown = true;
        char cat = 0;
        bool pref = false, conflict = false;
        for (int i = 0; i < n; i++) {
            SlTypeId t = c[i]->args[k];
            char tc = category_of(t);
            if (cat == 0) {
                cat = tc;
                pref = preferred(t);
            } else if (tc == cat) {
                pref |= preferred(t);
            } else if (tc == 'S') {
                cat = 'S';
                pref = preferred(t);
                conflict = false;
            } else if (cat != 'S') {
                conflict = true;
            }
        }
        if (conflict && cat != 'S') {
            resolved = false;
            break;
        }
        slot_cat[k] = cat;
        slot_pref[k] = pref;
    }
    if (any_unknown && resolved) {
        int m = 0;
        const FuncDesc *keep[MAX_CANDIDATES];
        for (int i = 0; i < n; i++) {
            bool ok = true;
            for (int k = 0; k < nargs; k++) {
                if (in[k] != TYPE_UNKNOWN)
                    continue;
                SlTypeId t = c[i]->args[k];
                if (category_of(t) != slot_cat[k] || (slot_pref[k] && !preferred(t)))
                    ok = false;
            }
            if (ok)
                keep[m++] = c[i];
        }
        if (m > 0) {
            memcpy(c, keep, sizeof(*c) * (size_t)m);
            n = m;
        }
        if (n == 1)
            return c[0];
    }
    /* 5: unknowns take the one type the known arguments share */
    SlTypeId known = TYPE_UNKNOWN;
    bool same = true;
    for (int k = 0; k < nargs; k++) {
        if (in[k] == TYPE_UNKNOWN)
            continue;
        if (known == TYPE_UNKNOWN)
            known = in[k];
        else if (known != in[k])
            same = false;
    }
    if (any_unknown && known != TYPE_UNKNOWN && same) {
        int m = 0;
        const FuncDesc *keep[MAX_CANDIDATES];
        for (int i = 0; i < n; i++) {
            bool ok = true;
            for (int k = 0; k < nargs; k++)
                if (in[k] == TYPE_UNKNOWN && !can_take(known, c[i]->args[k]))
                    ok = false;
            if (ok)
                keep[m++] = c[i];
        }
        if (m == 1)
            return keep[0];
    }
    *ambiguous = true;
    return NULL;
}

static void describe_call(const char *name, bool is_op, const SlTypeId *in, int nargs,
                          char *buf, size_t size)
{
    size_t off = 0;
    if (is_op) {
        if (nargs == 2)
            snprintf(buf, size, "%s %s %s", type_name(in[0]), name, type_name(in[1]));
        else
            snprintf(buf, size, "%s %s", name, type_name(in[0]));
        return;
    }
    off += (size_t)snprintf(buf, size, "%s(", name);
    for (int k = 0; k < nargs && off < size; k++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s", k ? ", " : "", type_name(in[k]));
    if (off < size)
        snprintf(buf + off, size - off, ")");
}

static const FuncDesc *resolve(Analyze *an, const char *name, bool is_op, Expr **args,
                               int nargs, int loc);

/* A function that reads the loop's state (the catalog, the sessions) makes
 * its statement run on the loop (Query.on_loop). */
const FuncDesc *an_resolve(Analyze *an, const char *name, bool is_op, Expr **args, int nargs,
                           int loc)
{
    if (an_array_routes(name, is_op, args, nargs)) {
        /* arrays: typed by analyze_array.c, the arguments cast there */
        Expr *e = an_array_call(an, name, is_op, args, nargs, loc);
        if (e == NULL)
            return NULL;
        for (int k = 0; k < nargs; k++)
            args[k] = e->args[k];
        return e->fn;
    }
    const FuncDesc *fd = resolve(an, name, is_op, args, nargs, loc);
    if (fd != NULL && ex_func_on_loop(fd))
        an->on_loop = true;
    if (fd == NULL && an_array_no_such(an, name, is_op, args, nargs, loc))
        return NULL;    /* the error names the array types: integer[] */
    return fd;
}

static const FuncDesc *resolve(Analyze *an, const char *name, bool is_op, Expr **args,
                               int nargs, int loc)
{
    const FuncDesc *c[MAX_CANDIDATES];
    SlTypeId *in = ARENA_ARRAY(an->a, SlTypeId, nargs > FUNC_MAX_ARGS ? nargs : FUNC_MAX_ARGS);
    for (int k = 0; k < FUNC_MAX_ARGS; k++)
        in[k] = TYPE_UNKNOWN;
    for (int k = 0; k < nargs; k++)
        in[k] = args[k]->type.id;
    int n = nargs <= FUNC_MAX_ARGS ? ex_func_candidates(name, is_op, nargs, c, MAX_CANDIDATES)
                                   : 0;

    /* 0: exact match, with an unknown argument of a binary operator taking
     * the other's type */
    for (int i = 0; i < n; i++) {
        bool exact = true;
        for (int k = 0; k < nargs; k++) {
            SlTypeId t = in[k];
            if (t == TYPE_UNKNOWN && is_op && nargs == 2)
                t = in[1 - k];
            if (c[i]->args[k] != t)
                exact = false;
        }
        if (exact)
            return c[i];
    }
    /* 1: implicit casts */
    int m = 0;
    for (int i = 0; i < n; i++) {
        bool ok = true;
        for (int k = 0; k < nargs; k++)
            ok &= can_take(in[k], c[i]->args[k]);
        if (ok)
            c[m++] = c[i];
    }
    bool ambiguous = false;
    const FuncDesc *fd = m > 0 ? select_candidate(c, m, in, nargs, &ambiguous) : NULL;
    if (fd != NULL)
        return fd;

    char call[1024];
    describe_call(name, is_op, in, nargs, call, sizeof(call));
    const char *what = is_op ? "operator" : "function";
    if (ambiguous) {
        if (is_op)
            sl_error_at(an->err, ERRCODE_AMBIGUOUS_FUNCTION, loc, "operator is not unique: %s",
                        call);
        else
            sl_error_at(an->err, ERRCODE_AMBIGUOUS_FUNCTION, loc, "function %s is not unique",
                        call);
        sl_error_hint(an->err,
                      "Could not choose a best candidate %s. You might need to add explicit "
                      "type casts.",
                      what);
        return NULL;
    }
    if (!is_op) {
        sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc, "function %s does not exist", call);
        sl_error_hint(an->err, "No function matches the given name and argument types. You "
                               "might need to add explicit type casts.");
    } else if (nargs == 1) {
        sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc, "operator does not exist: %s", call);
        sl_error_hint(an->err, "No operator matches the given name and argument type. You "
                               "might need to add an explicit type cast.");
    } else {
        sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, loc, "operator does not exist: %s", call);
        sl_error_hint(an->err, "No operator matches the given name and argument types. You "
                               "might need to add explicit type casts.");
    }
    return NULL;
}

Expr *an_apply_func(Analyze *an, const FuncDesc *fd, Expr **args, int nargs, int loc)
{
    Expr *cast[FUNC_MAX_ARGS];
    for (int k = 0; k < nargs; k++) {
        SlTypeId want = fd->args[k] == ANY ? TYPE_TEXT : fd->kargs[k];
        CoerceCtx ctx = fd->args[k] == ANY ? COERCE_EXPLICIT : COERCE_IMPLICIT;
        if (fd->args[k] == ANY && (fd->flags & FUNC_ANY_ASIS) && args[k]->type.id != TYPE_UNKNOWN) {
            cast[k] = args[k];
            continue;
        }
        /* TYPE_ARRAY in a row of funcs.c is text[] (ex_func_ret) */
        SlType wt = want == TYPE_ARRAY ? sl_array_type(TYPE_TEXT, -1) : sl_type(want);
        cast[k] = an_coerce(an, args[k], wt, ctx, args[k]->location);
        if (cast[k] == NULL)
            return NULL;
    }
    Expr *e = an_mk(an, EXPR_FUNC, ex_func_ret(fd), loc, nargs, cast);
    e->fn = fd;
    return e;
}
