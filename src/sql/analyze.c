/*
 * analyze.c -- parse analysis: RawStmt -> Query with typed expressions.
 *
 *   sql_analyze(arena, sql, raw, param_types, n, &query, err)
 *   sql_analyze_with   the same, with the catalog to look relations up in
 *   an_statement       the dispatch over statement kinds; SET / RESET / SHOW,
 *                      the transaction statements and DEALLOCATE are only
 *                      tagged (QUERY_UTILITY): the server runs them
 *
 * What PostgreSQL 15's parse analysis does, for the statements sluice has:
 *   - literals: an integer that fits int4 is int4, else int8, else numeric;
 *     a decimal is numeric; a string is "unknown" until its context gives it
 *     a type (and text if nothing does);
 *   - operators and functions are resolved against funcs.c's rows with
 *     PostgreSQL's rules (func_select_candidate): exact matches, implicit
 *     casts, preferred types, unknown literals taking the other argument's
 *     type or the string category (resolve.c);
 *   - CASE, COALESCE, GREATEST/LEAST pick a common type (select_common_type);
 *   - an untyped literal cast to a type is converted here, so its errors
 *     point at it (22P02 invalid input syntax ...);
 *   - result columns are named as FigureColname() names them.
 * Sub-expressions that PostgreSQL's rewrites duplicate (BETWEEN, IN, CASE x
 * WHEN) are analyzed once and shared; a cost bound keeps such sharing from
 * blowing up evaluation, and a depth bound keeps recursion on the C stack
 * small (54001).  Everything is allocated in the arena passed.
 */
#include "sql/analyze_int.h"
#include "sluice/settings.h"

#include <stdio.h>
#include <stdlib.h>

#define MAX_DEPTH 1000
#define MAX_COST  1000000

static Expr *transform(Analyze *an, Node *n);

/* ---------------------------------------------------------------- nodes */

Expr *an_mk(Analyze *an, ExprKind kind, SlType type, int loc, int nargs, Expr **args)
{
    Expr *e = ARENA_NEW(an->a, Expr);
    e->kind = kind;
    e->type = type;
    e->location = loc;
    e->nargs = nargs;
    uint64_t cost = 1;
    if (nargs) {
        e->args = ARENA_ARRAY(an->a, Expr *, nargs);
        memcpy(e->args, args, sizeof(Expr *) * (size_t)nargs);
        for (int i = 0; i < nargs; i++)
            cost += args[i]->cost;
    }
    e->cost = cost > MAX_COST ? MAX_COST : (uint32_t)cost;
    return e;
}

static bool too_costly(Analyze *an, const Expr *e)
{
    if (e->cost < MAX_COST)
        return false;
    sl_error(an->err, ERRCODE_STATEMENT_TOO_COMPLEX, "statement too complex");
    return true;
}

/* A one-row constant; its value is written by the caller. */
Expr *an_const(Analyze *an, SlType type, int loc, bool null)
{
    Expr *e = an_mk(an, EXPR_CONST, type, loc, 0, NULL);
    vector_init(&e->value, an->a, type, 1, true);
    e->value.nulls[0] = null;
    return e;
}

static Expr *const_str(Analyze *an, SlType type, const char *s, int len, int loc)
{
    Expr *e = an_const(an, type, loc, false);
    e->value.v.str[0].ptr = s;
    e->value.v.str[0].len = (uint32_t)len;
    return e;
}

/* Evaluates e, a function call or cast of constants, now into a CONST
 * (ex_fold_call: the function library runs its kernel, no evaluator). */
Expr *an_fold(Analyze *an, Expr *e)
{
    EvalCtx cx = {.arena = an->a, .err = an->err,
                  .system_arg = an->cat != NULL ? an->cat->system_ctx : NULL};
    Expr *c = an_mk(an, EXPR_CONST, e->type, e->location, 0, NULL);
    if (ex_fold_call(&cx, e, &c->value) < 0)
        return NULL;
    return c;
}

static bool is_unknown_const(const Expr *e)
{
    return e->kind == EXPR_CONST && e->type.id == TYPE_UNKNOWN;
}

/* ------------------------------------------------------------- coercion */

/* Coerces e to type t (with its typmod).  Unknown literals are converted
 * now, unknown parameters take the type.  Returns NULL with an error when
 * there is no such cast (ctx decides whether explicit casts count). */
Expr *an_coerce(Analyze *an, Expr *e, SlType t, CoerceCtx ctx, int loc)
{
    if (t.id == TYPE_ARRAY || (e->type.id == TYPE_ARRAY && t.id != TYPE__COUNT))
        return an_array_coerce(an, e, t, ctx, loc);
    if (e->type.id == t.id && (t.typmod < 0 || e->type.typmod == t.typmod))
        return e;
    if (t.id == TYPE__COUNT)
        return an_coerce(an, e, sl_type(TYPE_TEXT), COERCE_EXPLICIT, loc);
    if (is_unknown_const(e)) {
        Expr *c = an_const(an, sl_type(t.id), e->location, e->value.nulls[0]);
        if (!e->value.nulls[0]) {
            const SlStr *s = &e->value.v.str[0];
            /* an interval's fields qualify its input (INTERVAL '5' MINUTE) */
            SlType pt = t.id == TYPE_INTERVAL ? t : sl_type(t.id);
            if (value_parse_text(an->a, pt, s->ptr, s->len, &c->value, 0,
                                 e->location, an->err) < 0)
                return NULL;
        }
        if (t.typmod < 0)
            return c;
        e = c;
    } else if (e->kind == EXPR_PARAM && e->type.id == TYPE_UNKNOWN) {
        an->params[e->index] = sl_type(t.id);
        e->type = sl_type(t.id);
        if (t.typmod < 0)
            return e;
    }
    ExprFn fn = ex_cast_fn(e->type.id, t.id, ctx == COERCE_IMPLICIT);
    if (fn == NULL) {
        char b1[64], b2[64];
        sl_error_at(an->err, ERRCODE_CANNOT_COERCE, loc, "cannot cast type %s to %s",
                    type_format(e->type, b1, sizeof(b1)), type_format(t, b2, sizeof(b2)));
        return NULL;
    }
    Expr *c = an_mk(an, EXPR_CAST, t, loc, 1, &e);
    c->cast = fn;
    if (e->kind == EXPR_CONST)
        return an_fold(an, c);
    return c;
}

/* coerce_to_boolean: e must be boolean (or an unknown that reads as one). */
static Expr *to_boolean(Analyze *an, Expr *e, const char *construct)
{
    if (e == NULL)
        return NULL;
    if (e->type.id == TYPE_BOOL)
        return e;
    if (e->type.id == TYPE_UNKNOWN)
        return an_coerce(an, e, sl_type(TYPE_BOOL), COERCE_IMPLICIT, e->location);
    sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, e->location,
                "argument of %s must be type %s, not type %s", construct, "boolean",
                type_name(e->type.id));
    return NULL;
}

/* select_common_type + coercion of every expression to it.  what names the
 * construct in the error ("CASE", "COALESCE"). */
static bool common_type(Analyze *an, Expr **es, int n, const char *what, SlType *out)
{
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (es[i]->type.id != TYPE_UNKNOWN) {
            first = i;
            break;
        }
    }
    SlType pt = sl_type(TYPE_TEXT);
    if (first >= 0 && es[first]->type.id == TYPE_ARRAY)
        return an_array_common_type(an, es, n, what, out);
    if (first >= 0) {
        pt = es[first]->type;
        for (int i = first + 1; i < n; i++) {
            SlTypeId nt = es[i]->type.id;
            if (nt == TYPE_UNKNOWN || nt == pt.id)
                continue;
            if (type_category(nt) != type_category(pt.id)) {
                char b2[96];
                sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, es[i]->location,
                            "%s types %s and %s cannot be matched", what, type_name(pt.id),
                            type_display(es[i]->type, b2, sizeof(b2)));
                return false;
            }
            if (!type_is_preferred(pt.id) && ex_can_coerce(pt.id, nt) &&
                !ex_can_coerce(nt, pt.id))
                pt = es[i]->type;
        }
        /* a typmod survives only when every input agrees on it */
        for (int i = 0; i < n; i++)
            if (es[i]->type.id != pt.id || es[i]->type.typmod != pt.typmod)
                pt.typmod = -1;
    }
    for (int i = 0; i < n; i++) {
        if (es[i]->type.id != pt.id && !ex_can_coerce(es[i]->type.id, pt.id)) {
            char b1[64];
            sl_error_at(an->err, ERRCODE_CANNOT_COERCE, es[i]->location,
                        "%s could not convert type %s to %s", what, type_name(es[i]->type.id),
                        type_format(pt, b1, sizeof(b1)));
            return false;
        }
        es[i] = an_coerce(an, es[i], sl_type(pt.id), COERCE_IMPLICIT, es[i]->location);
        if (es[i] == NULL)
            return false;
    }
    *out = pt;
    return true;
}

/* ------------------------------------------------------------- literals */

static Expr *transform_const(Analyze *an, A_Const *c)
{
    int loc = c->hdr.location;
    switch (c->kind) {
    case CONST_INTEGER: {
        /* the lexer's ICONST / FCONST split, then make_const's int8 try */
        const char *s = c->text;
        bool neg = *s == '-';
        if (neg)
            s++;
        uint64_t u = 0;
        bool big = false;
        for (; *s; s++) {
            if (u > (UINT64_MAX - 9) / 10) {
                big = true;
                break;
            }
            u = u * 10 + (uint64_t)(*s - '0');
        }
        if (!big && u <= (uint64_t)INT32_MAX + (neg ? 1 : 0)) {
            Expr *e = an_const(an, sl_type(TYPE_INT4), loc, false);
            e->value.v.i32[0] = (int32_t)(neg ? (int64_t)0 - (int64_t)u : (int64_t)u);
            return e;
        }
        if (!big && u <= (uint64_t)INT64_MAX + (neg ? 1 : 0)) {
            Expr *e = an_const(an, sl_type(TYPE_INT8), loc, false);
            e->value.v.i64[0] = neg ? (int64_t)(0 - u) : (int64_t)u;
            return e;
        }
        goto as_numeric;
    }
    case CONST_DECIMAL:
    as_numeric: {
        Expr *e = an_const(an, sl_type(TYPE_NUMERIC), loc, false);
        int rc = num_parse(an->a, c->text, (size_t)c->len, &e->value.v.num[0]);
        if (rc == -2) {
            sl_error_at(an->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, loc,
                        "value overflows numeric format");
            return NULL;
        }
        if (rc < 0) {
            sl_error_at(an->err, ERRCODE_INVALID_TEXT_REPRESENTATION, loc,
                        "invalid input syntax for type numeric: \"%s\"", c->text);
            return NULL;
        }
        return e;
    }
    case CONST_STRING:
        return const_str(an, sl_type(TYPE_UNKNOWN), c->text, c->len, loc);
    case CONST_BOOL: {
        Expr *e = an_const(an, sl_type(TYPE_BOOL), loc, false);
        e->value.v.b[0] = c->bval;
        return e;
    }
    case CONST_NULL:
        return an_const(an, sl_type(TYPE_UNKNOWN), loc, true);
    }
    return NULL;
}

static Expr *transform_param(Analyze *an, ParamRef *p)
{
    int n = p->number;
    if (n > an->nparams) {
        if (n > an->cap) {
            int cap = SL_MAX(n, an->cap * 2);
            SlType *t = ARENA_ARRAY(an->a, SlType, cap);
            if (an->nparams)
                memcpy(t, an->params, sizeof(SlType) * (size_t)an->nparams);
            an->params = t;
            an->cap = cap;
        }
        for (int i = an->nparams; i < n; i++)
            an->params[i] = sl_type(TYPE_UNKNOWN);
        an->nparams = n;
    }
    Expr *e = an_mk(an, EXPR_PARAM, an->params[n - 1], p->hdr.location, 0, NULL);
    e->index = n - 1;
    return e;
}

/* ------------------------------------------------------------ type names */

static int reg_kind(const char *name);

/* TypeName -> SlType, with PostgreSQL's checks of the modifiers. */
static bool resolve_type(Analyze *an, const TypeName *tn, SlType *out)
{
    if (tn->array) {
        /* an array of the element type (reg* types: of their bigint) */
        TypeName elem = *tn;
        elem.array = false;
        if (reg_kind(tn->name) >= 0) {
            *out = sl_array_type(TYPE_INT8, -1);
            return true;
        }
        if (!resolve_type(an, &elem, out))
            return false;
        *out = sl_array_type(out->id, out->typmod);
        return true;
    }
    SlTypeId id = type_by_name(tn->name);
    /* PostgreSQL's name and "char" are text here (see OID_TYPMOD below) */
    if (id == TYPE_UNKNOWN && (strcmp(tn->name, "name") == 0 || strcmp(tn->name, "char") == 0))
        id = TYPE_TEXT;
    if (id == TYPE_UNKNOWN) {
        sl_error_at(an->err, ERRCODE_UNDEFINED_OBJECT, tn->hdr.location,
                    "type \"%s\" does not exist", tn->name);
        return false;
    }
    *out = sl_type(id);
    int nmods = list_len(tn->mods);
    if (nmods == 0)
        return true;
    long mods[2] = {0, 0};
    for (int i = 0; i < nmods; i++) {
        Node *m = list_nth(tn->mods, i);
        if (!IS_A(m, A_Const) || ((A_Const *)m)->kind != CONST_INTEGER || i >= 2) {
            sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, m->location,
                        "type modifiers must be simple constants or identifiers");
            return false;
        }
        const char *txt = ((A_Const *)m)->text;
        mods[i] = strlen(txt) > 9 ? (txt[0] == '-' ? -1000000000L : 1000000000L)
                                  : strtol(txt, NULL, 10);
    }
    int loc = tn->hdr.location;
    if (id == TYPE_NUMERIC) {
        if (mods[0] < 1 || mods[0] > 1000) {
            sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, loc,
                        "NUMERIC precision %ld must be between 1 and 1000", mods[0]);
            return false;
        }
        if (nmods == 2 && (mods[1] < 0 || mods[1] > mods[0])) {
            sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, loc,
                        "NUMERIC scale %ld must be between 0 and precision %ld", mods[1],
                        mods[0]);
            return false;
        }
        out->typmod = (int32_t)(mods[0] << 16 | (nmods == 2 ? mods[1] : 0));
        return true;
    }
    if ((id == TYPE_VARCHAR || id == TYPE_BPCHAR) && nmods == 1) {
        const char *tname = id == TYPE_VARCHAR ? "varchar" : "char";
        if (mods[0] < 1) {
            sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, loc,
                        "length for type %s must be at least 1", tname);
            return false;
        }
        if (mods[0] > 10485760) {
            sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, loc,
                        "length for type %s cannot exceed 10485760", tname);
            return false;
        }
        out->typmod = (int32_t)mods[0];
        return true;
    }
    if (id == TYPE_INTERVAL) {
        /* INTERVAL '...' DAY TO SECOND: the fields' mask (the grammar's),
         * PostgreSQL's typmod being range << 16 | precision */
        out->typmod = (int32_t)((mods[0] & 0x7FFF) << 16 | (nmods == 2 ? mods[1] : 0xFFFF));
        return true;
    }
    sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, loc, "type modifier is not allowed for type \"%s\"",
                tn->name);
    return false;
}

/*
 * PostgreSQL's object identifier types.  sluice keeps oids as bigint (and
 * name and "char" as text).  A cast to regclass, regtype, regnamespace or
 * regproc turns a name into its oid (the runtime's regclassin and
 * friends: 42P01 / 42704 when there is no such object) or keeps a number;
 * a cast of such a value to text turns the oid back into the name.  That
 * round trip is what the catalog queries of psql, pgJDBC and psycopg use
 * ('pg_class'::regclass, reloftype::regtype::text).  Which reg type a
 * bigint stands for rides on its typmod (OID_TYPMOD + the kind).
 */
#define OID_TYPMOD 0x7F000000
static const char *const reg_types[] = {"oid", "regclass", "regtype", "regnamespace", "regproc",
                                        "regprocedure"};
static const char *const reg_in[] = {NULL, "regclassin", "regtypein", "regnamespacein",
                                     "regprocin", "regprocin"};
static const char *const reg_out[] = {NULL, "regclassout", "regtypeout", "regnamespaceout",
                                      "regprocout", "regprocout"};

static int reg_kind(const char *name)
{
    for (size_t k = 0; k < SL_ARRAY_LEN(reg_types); k++)
        if (strcmp(name, reg_types[k]) == 0)
            return (int)k;
    return -1;
}

/* arg::<reg type k>, or NULL when arg cannot become one. */
static Expr *cast_to_reg(Analyze *an, Expr *arg, int k, int loc)
{
    SlTypeId from = arg->type.id;
    Expr *e;
    if (k > 0 && (from == TYPE_TEXT || from == TYPE_VARCHAR || from == TYPE_UNKNOWN)) {
        if ((arg = an_coerce(an, arg, sl_type(TYPE_TEXT), COERCE_EXPLICIT, loc)) == NULL)
            return NULL;
        const FuncDesc *fd = an_resolve(an, reg_in[k], false, &arg, 1, loc);
        if (fd == NULL || (e = an_apply_func(an, fd, &arg, 1, loc)) == NULL)
            return NULL;
        if (arg->kind == EXPR_CONST && (e = an_fold(an, e)) == NULL)
            return NULL;
    } else if (from == TYPE_UNKNOWN || from == TYPE_TEXT || from == TYPE_VARCHAR ||
               from == TYPE_INT2 || from == TYPE_INT4 || from == TYPE_INT8) {
        if ((arg = an_coerce(an, arg, sl_type(TYPE_INT8), COERCE_EXPLICIT, loc)) == NULL)
            return NULL;
        e = ARENA_NEW(an->a, Expr);
        *e = *arg;
    } else {
        sl_error_at(an->err, ERRCODE_CANNOT_COERCE, loc, "cannot cast type %s to %s",
                    type_name(from), reg_types[k]);
        return NULL;
    }
    e->type = sl_type(TYPE_INT8);
    if (k > 0)
        e->type.typmod = OID_TYPMOD + k;
    return e;
}

static Expr *transform_typecast(Analyze *an, TypeCast *tc)
{
    if (tc->type->array && IS_A(tc->arg, A_Expr) && ((A_Expr *)tc->arg)->kind == AEXPR_ARRAY &&
        ((A_Expr *)tc->arg)->list == NULL) {
        /* ARRAY[]::t[]: the empty array of t */
        SlType t;
        if (!resolve_type(an, tc->type, &t))
            return NULL;
        Expr *e = an_const(an, t, tc->arg->location, false);
        ArrayBuild b;
        array_build_begin(&b, t.elem);
        array_build_finish(&b, an->a, &e->value.v.str[0]);
        return e;
    }
    Expr *arg = transform(an, tc->arg);
    if (arg == NULL)
        return NULL;
    int k = reg_kind(tc->type->name);
    if (tc->type->array) {
        SlType t;
        if (!resolve_type(an, tc->type, &t))
            return NULL;
        int loc = tc->hdr.location >= 0 ? tc->hdr.location : arg->location;
        return an_coerce(an, arg, t, COERCE_EXPLICIT, loc);
    }
    if (k >= 0 && tc->type->mods == NULL)
        return cast_to_reg(an, arg, k, tc->hdr.location >= 0 ? tc->hdr.location : arg->location);
    SlType t;
    if (!resolve_type(an, tc->type, &t))
        return NULL;
    if (arg->type.id == TYPE_INT8 && arg->type.typmod > OID_TYPMOD &&
        arg->type.typmod < OID_TYPMOD + (int)SL_ARRAY_LEN(reg_types) &&
        (t.id == TYPE_TEXT || t.id == TYPE_VARCHAR)) {
        /* regclass -> text: the name */
        int loc = tc->hdr.location >= 0 ? tc->hdr.location : arg->location;
        const FuncDesc *fd = an_resolve(an, reg_out[arg->type.typmod - OID_TYPMOD], false, &arg,
                                        1, loc);
        return fd ? an_apply_func(an, fd, &arg, 1, loc) : NULL;
    }
    int loc = tc->hdr.location >= 0 ? tc->hdr.location : arg->location;
    if (type_same(arg->type, t) && t.typmod < 0)
        return arg;
    return an_coerce(an, arg, t, COERCE_EXPLICIT, loc);
}

/* ---------------------------------------------------------- expressions */

static Expr *transform_bool(Analyze *an, BoolExpr *b)
{
    static const char *const names[] = {"AND", "OR", "NOT"};
    static const ExprKind kinds[] = {EXPR_AND, EXPR_OR, EXPR_NOT};
    int n = list_len(b->args);
    Expr **args = ARENA_ARRAY(an->a, Expr *, n);
    for (int i = 0; i < n; i++) {
        args[i] = to_boolean(an, transform(an, list_nth(b->args, i)), names[b->op]);
        if (args[i] == NULL)
            return NULL;
    }
    return an_mk(an, kinds[b->op], sl_type(TYPE_BOOL), b->hdr.location, n, args);
}

/* An operator expression on already analyzed arguments (l may be NULL). */
Expr *an_make_op(Analyze *an, const char *op, Expr *l, Expr *r, int loc)
{
    Expr *args[2] = {l, r};
    Expr **a = l ? args : args + 1;
    int n = l ? 2 : 1;
    if (l != NULL && an_array_routes(op, true, a, n))
        return an_array_call(an, op, true, a, n, loc);
    if (l != NULL && r != NULL && r->type.id == TYPE_ARRAY && r->type.elem == TYPE_TEXT &&
        (strcmp(op, "#>") == 0 || strcmp(op, "#>>") == 0)) {
        /* jsonb's path operators read the path's text form ('{a,b}') */
        if ((a[1] = an_coerce(an, r, sl_type(TYPE_TEXT), COERCE_EXPLICIT, loc)) == NULL)
            return NULL;
    }
    const FuncDesc *fd = an_resolve(an, op, true, a, n, loc);
    if (fd == NULL)
        return NULL;
    return an_apply_func(an, fd, a, n, loc);
}

static Expr *transform_aexpr(Analyze *an, A_Expr *ax);

/* concat(...) and concat_ws(sep, ...), PostgreSQL's VARIADIC "any": the
 * fixed arguments are cast as the function declares them, the variadic
 * ones go to the kernel as they are (untyped literals as text), which
 * prints each with its type's output function.  The call is not strict. */
static Expr *transform_variadic(Analyze *an, const FuncDesc *fd, Expr **args, int n, int loc)
{
    for (int k = 0; k < n; k++) {
        SlTypeId want = k < fd->nargs - 1 ? fd->kargs[k] : TYPE_UNKNOWN;
        if (want == TYPE_UNKNOWN && args[k]->type.id != TYPE_UNKNOWN)
            continue;
        if (want == TYPE_UNKNOWN)
            want = TYPE_TEXT;
        args[k] = an_coerce(an, args[k], sl_type(want), COERCE_IMPLICIT, args[k]->location);
        if (args[k] == NULL)
            return NULL;
    }
    Expr *e = an_mk(an, EXPR_FUNC, sl_type(fd->ret), loc, n, args);
    e->fn = fd;
    return e;
}

/* The functions that take arguments in named notation (name => value):
 * their parameters' names as PostgreSQL 15's pg_proc has them, and how
 * many are required (the rest default: make_interval's to 0). */
static const struct {
    const char *fn;
    int         nparams, nrequired;
    const char *names[FUNC_MAX_ARGS];
} named_fns[] = {
    {"make_interval", 7, 0, {"years", "months", "weeks", "days", "hours", "mins", "secs"}},
    {"make_timestamp", 6, 6, {"year", "month", "mday", "hour", "min", "sec"}},
    {"make_timestamptz", 7, 6, {"year", "month", "mday", "hour", "min", "sec", "timezone"}},
};

/* 42883 for a call in named notation that matches no function, named as
 * PostgreSQL prints it: f(integer, name => integer). */
static int no_named_match(Analyze *an, FuncCall *f, Expr **args, int n)
{
    char call[512];
    size_t off = (size_t)snprintf(call, sizeof(call), "%s(", f->name);
    for (int i = 0; i < n && off < sizeof(call); i++) {
        Node *raw = list_nth(f->args, i);
        const char *nm = raw->tag == T_NamedArgExpr ? ((NamedArgExpr *)raw)->name : NULL;
        off += (size_t)snprintf(call + off, sizeof(call) - off, "%s%s%s%s", i ? ", " : "",
                                nm ? nm : "", nm ? " => " : "", type_name(args[i]->type.id));
    }
    if (off < sizeof(call))
        snprintf(call + off, sizeof(call) - off, ")");
    sl_error_at(an->err, ERRCODE_UNDEFINED_FUNCTION, f->hdr.location,
                "function %s does not exist", call);
    sl_error_hint(an->err, "No function matches the given name and argument types. You "
                           "might need to add explicit type casts.");
    return -1;
}

/* The arguments of a call with some in named notation put in their
 * parameters' places, the left-out ones their defaults: their count, or
 * -1 with the error (42601 a positional argument after a named one or a
 * name twice, 42883 no such function). */
static int named_args(Analyze *an, FuncCall *f, Expr **args, int n, Expr ***out)
{
    int npos = 0;
    while (npos < n && ((Node *)list_nth(f->args, npos))->tag != T_NamedArgExpr)
        npos++;
    for (int i = npos; i < n; i++)
        if (((Node *)list_nth(f->args, i))->tag != T_NamedArgExpr)
            return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, args[i]->location,
                               "positional argument cannot follow named argument");
    int k = 0;
    while (k < (int)SL_ARRAY_LEN(named_fns) && strcmp(named_fns[k].fn, f->name) != 0)
        k++;
    if (k == (int)SL_ARRAY_LEN(named_fns) || f->qual != NULL)
        return no_named_match(an, f, args, n);
    Expr **pos = arena_zalloc(an->a, sizeof(Expr *) * FUNC_MAX_ARGS);
    for (int i = 0; i < n; i++) {
        int at = i;
        if (i >= npos) {
            NamedArgExpr *na = list_nth(f->args, i);
            for (at = 0; at < named_fns[k].nparams; at++)
                if (strcmp(named_fns[k].names[at], na->name) == 0)
                    break;
            if (at < named_fns[k].nparams && pos[at] != NULL)
                return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, na->hdr.location,
                                   "argument name \"%s\" used more than once", na->name);
        }
        if (at >= named_fns[k].nparams)
            return no_named_match(an, f, args, n);
        pos[at] = args[i];
    }
    int count = named_fns[k].nrequired;
    for (int at = 0; at < named_fns[k].nparams; at++)
        if (pos[at] != NULL && at + 1 > count)
            count = at + 1;
    for (int at = 0; at < count; at++) {
        if (pos[at] != NULL)
            continue;
        if (at < named_fns[k].nrequired)
            return no_named_match(an, f, args, n);
        pos[at] = an_const(an, sl_type(TYPE_INT4), f->hdr.location, false);
        pos[at]->value.v.i32[0] = 0;
    }
    *out = pos;
    return count;
}

static Expr *transform_func(Analyze *an, FuncCall *f)
{
    int loc = f->hdr.location;
    if (f->qual != NULL && strcmp(list_nth(f->qual, 0), "pg_catalog") != 0) {
        sl_error_at(an->err, ERRCODE_INVALID_SCHEMA_NAME, loc, "schema \"%s\" does not exist",
                    (const char *)list_nth(f->qual, 0));
        return NULL;
    }
    if (f->agg_within_group || (f->over && an_is_ordered_set_name(f->name))) {
        /* ordered-set aggregates: only as plain aggregates */
        if (f->over && f->agg_within_group && an_is_ordered_set_name(f->name)) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                        "OVER is not supported for ordered-set aggregate %s", f->name);
            return NULL;
        }
        if (f->agg_within_group && !f->over &&
            (strcmp(f->name, "rank") == 0 || strcmp(f->name, "dense_rank") == 0 ||
             strcmp(f->name, "percent_rank") == 0 || strcmp(f->name, "cume_dist") == 0)) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                        "the hypothetical-set aggregate %s(...) WITHIN GROUP is not supported "
                        "yet", f->name);
            return NULL;
        }
        if (f->over || !an_is_ordered_set_name(f->name)) {
            an_ordered_set_misuse(an, f);
            return NULL;
        }
    }
    if (f->over)
        return an_window_call(an, f);
    if (an_is_aggregate_name(f))
        return an_aggregate(an, f);
    if (f->qual == NULL && strcmp(f->name, "grouping") == 0)
        return an_grouping_call(an, f);
    if ((f->distinct || f->filter || f->agg_order) && ex_func_exists(f->name, false)) {
        const char *what = f->distinct ? "DISTINCT" : f->filter ? "FILTER" : "ORDER BY";
        sl_error_at(an->err, ERRCODE_WRONG_OBJECT_TYPE, loc,
                    "%s specified, but %s is not an aggregate function", what, f->name);
        return NULL;
    }
    if (f->qual == NULL && (strcmp(f->name, "window") == 0 || strcmp(f->name, "session") == 0) &&
        !ex_func_exists(f->name, false)) {
        sl_error_at(an->err, ERRCODE_WINDOWING_ERROR, loc,
                    "%s(...) can only be used in GROUP BY",
                    strcmp(f->name, "window") == 0 ? "WINDOW" : "SESSION");
        return NULL;
    }
    int n = list_len(f->args);
    Expr **args = ARENA_ARRAY(an->a, Expr *, n ? n : 1);
    bool named = false;
    for (int i = 0; i < n; i++) {
        Node *raw = list_nth(f->args, i);
        named |= raw->tag == T_NamedArgExpr;
        if (raw->tag == T_NamedArgExpr)
            raw = ((NamedArgExpr *)raw)->arg;
        if ((args[i] = transform(an, raw)) == NULL)
            return NULL;
    }
    if (named && (n = named_args(an, f, args, n, &args)) < 0)
        return NULL;
    if (strcmp(f->name, "pg_typeof") == 0 && n == 1) {
        /* the argument's type name; PostgreSQL's result is regtype, which
         * reads the same in text (and has no typmod: numeric, not
         * numeric(10,2)) */
        char tb[96];
        const char *tn = type_display(args[0]->type, tb, sizeof(tb));
        return const_str(an, sl_type(TYPE_TEXT), arena_strdup(an->a, tn), (int)strlen(tn), loc);
    }
    const FuncDesc *vd = ex_func_variadic(f->name);
    if (vd != NULL && n >= vd->nargs)
        return transform_variadic(an, vd, args, n, loc);
    if (an_array_routes(f->name, false, args, n))
        return an_array_call(an, f->name, false, args, n, loc);
    const FuncDesc *fd = an_resolve(an, f->name, false, args, n, loc);
    if (fd == NULL || ((fd->flags & FUNC_SRF) && an_srf_check(an, fd, loc) < 0))
        return NULL;
    return an_apply_func(an, fd, args, n, loc);
}

static Expr *transform_case_srf(Analyze *an, CaseExpr *c);

/* CASE and COALESCE run their arms only when needed: no set-returning
 * call in them (PostgreSQL 10). */
static Expr *transform_case(Analyze *an, CaseExpr *c)
{
    bool saved_ok = an->srf_ok;
    const char *saved_ref = an->srf_refusal;
    an->srf_ok = false;
    an->srf_refusal = "CASE";
    Expr *e = transform_case_srf(an, c);
    an->srf_ok = saved_ok;
    an->srf_refusal = saved_ref;
    return e;
}

static Expr *transform_case_srf(Analyze *an, CaseExpr *c)
{
    int nw = list_len(c->whens);
    bool has_else = c->defresult != NULL;
    Expr *arg = NULL;
    if (c->arg && (arg = transform(an, c->arg)) == NULL)
        return NULL;
    int nargs = nw * 2 + 1;
    Expr **args = ARENA_ARRAY(an->a, Expr *, nargs);
    /* results: ELSE first, as PostgreSQL orders them for select_common_type */
    Expr **res = ARENA_ARRAY(an->a, Expr *, nw + 1);
    int nres = 0;
    if (has_else) {
        if ((res[nres++] = transform(an, c->defresult)) == NULL)
            return NULL;
    }
    for (int i = 0; i < nw; i++) {
        CaseWhen *w = list_nth(c->whens, i);
        Expr *cond = transform(an, w->expr);
        if (cond == NULL)
            return NULL;
        if (arg != NULL)
            cond = an_make_op(an, "=", arg, cond, w->expr->location);
        cond = to_boolean(an, cond, "CASE/WHEN");
        if (cond == NULL)
            return NULL;
        args[2 * i] = cond;
        if ((res[nres++] = transform(an, w->result)) == NULL)
            return NULL;
    }
    SlType t;
    if (!common_type(an, res, nres, "CASE", &t))
        return NULL;
    for (int i = 0; i < nw; i++)
        args[2 * i + 1] = res[i + (has_else ? 1 : 0)];
    if (has_else)
        args[2 * nw] = res[0];
    Expr *e = an_mk(an, EXPR_CASE, t, c->hdr.location, nw * 2 + (has_else ? 1 : 0), args);
    e->has_else = has_else;
    return e;
}

static Expr *transform_list_common(Analyze *an, List *l, ExprKind kind, const char *what,
                                   int loc)
{
    int n = list_len(l);
    Expr **args = ARENA_ARRAY(an->a, Expr *, n);
    bool saved_ok = an->srf_ok;
    const char *saved_ref = an->srf_refusal;
    if (kind == EXPR_COALESCE) {
        an->srf_ok = false;
        an->srf_refusal = "COALESCE";
    }
    int i = 0;
    while (i < n && (args[i] = transform(an, list_nth(l, i))) != NULL)
        i++;
    an->srf_ok = saved_ok;
    an->srf_refusal = saved_ref;
    if (i < n)
        return NULL;
    SlType t;
    if (!common_type(an, args, n, what, &t))
        return NULL;
    return an_mk(an, kind, t, loc, n, args);
}

static Expr *transform_minmax(Analyze *an, MinMaxExpr *m)
{
    const char *what = m->is_greatest ? "GREATEST" : "LEAST";
    Expr *e = transform_list_common(an, m->args, EXPR_MINMAX, what, m->hdr.location);
    if (e == NULL)
        return NULL;
    Expr *probe[2] = {e->args[0], e->args[0]};
    e->fn = an_resolve(an, m->is_greatest ? ">" : "<", true, probe, 2, m->hdr.location);
    if (e->fn == NULL)
        return NULL;
    /* the arguments as the comparison reads them */
    for (int i = 0; i < e->nargs; i++)
        if ((e->args[i] = an_coerce(an, e->args[i], sl_type(e->fn->kargs[0]), COERCE_IMPLICIT,
                                    e->args[i]->location)) == NULL)
            return NULL;
    if (e->fn->kargs[0] != e->type.id) {
        /* compare in the kernel's type, return the common type */
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, m->hdr.location,
                    "%s over type %s is not supported yet", what, type_name(e->type.id));
        return NULL;
    }
    return e;
}

/* NULLIF(a, b) and a IS [NOT] DISTINCT FROM b: the "=" operator's kernel
 * over both arguments as it reads them. */
static Expr *transform_eq_based(Analyze *an, A_Expr *ax, ExprKind kind)
{
    Expr *l = transform(an, ax->lexpr), *r = transform(an, ax->rexpr);
    if (l == NULL || r == NULL)
        return NULL;
    Expr *args[2] = {l, r};
    const FuncDesc *fd = an_resolve(an, "=", true, args, 2, ax->hdr.location);
    if (fd == NULL)
        return NULL;
    l = args[0];    /* arrays: typed by an_resolve */
    r = args[1];
    Expr *cl = an_coerce(an, l, sl_type(fd->kargs[0]), COERCE_IMPLICIT, l->location);
    Expr *cr = cl ? an_coerce(an, r, sl_type(fd->kargs[1]), COERCE_IMPLICIT, r->location) : NULL;
    if (cr == NULL)
        return NULL;
    if (fd->ret != TYPE_BOOL) {
        sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, ax->hdr.location,
                    "%s requires = operator to yield boolean",
                    kind == EXPR_NULLIF ? "NULLIF" : "IS DISTINCT FROM");
        return NULL;
    }
    Expr *e;
    if (kind == EXPR_NULLIF) {
        /* the value is the first argument as the operator reads it */
        Expr *a3[3] = {cl, cl, cr};
        e = an_mk(an, EXPR_NULLIF, cl->type, ax->hdr.location, 3, a3);
    } else {
        Expr *a2[2] = {cl, cr};
        e = an_mk(an, EXPR_DISTINCT, sl_type(TYPE_BOOL), ax->hdr.location, 2, a2);
        e->negate = ax->kind == AEXPR_NOT_DISTINCT;
    }
    e->fn = fd;
    return e;
}

static Expr *bool_pair(Analyze *an, ExprKind kind, Expr *a, Expr *b, int loc)
{
    Expr *args[2] = {a, b};
    return an_mk(an, kind, sl_type(TYPE_BOOL), loc, 2, args);
}

/* BETWEEN as PostgreSQL rewrites it: a >= lo AND a <= hi (and variants). */
static Expr *transform_between(Analyze *an, A_Expr *ax)
{
    int loc = ax->hdr.location;
    Expr *a = transform(an, ax->lexpr);
    Expr *lo = a ? transform(an, list_nth(ax->list, 0)) : NULL;
    Expr *hi = lo ? transform(an, list_nth(ax->list, 1)) : NULL;
    if (hi == NULL)
        return NULL;
    bool negate = ax->kind == AEXPR_NOT_BETWEEN || ax->kind == AEXPR_NOT_BETWEEN_SYM;
    bool sym = ax->kind == AEXPR_BETWEEN_SYM || ax->kind == AEXPR_NOT_BETWEEN_SYM;
    const char *o1 = negate ? "<" : ">=", *o2 = negate ? ">" : "<=";
    ExprKind join = negate ? EXPR_OR : EXPR_AND;
    Expr *c1 = an_make_op(an, o1, a, lo, loc);
    Expr *c2 = c1 ? an_make_op(an, o2, a, hi, loc) : NULL;
    if (c2 == NULL)
        return NULL;
    Expr *e = bool_pair(an, join, to_boolean(an, c1, "BETWEEN"), to_boolean(an, c2, "BETWEEN"), loc);
    if (e->args[0] == NULL || e->args[1] == NULL)
        return NULL;
    if (sym) {
        Expr *d1 = an_make_op(an, o1, a, hi, loc);
        Expr *d2 = d1 ? an_make_op(an, o2, a, lo, loc) : NULL;
        if (d2 == NULL)
            return NULL;
        Expr *f = bool_pair(an, join, d1, d2, loc);
        e = bool_pair(an, negate ? EXPR_AND : EXPR_OR, e, f, loc);
    }
    return e;
}

/* x IN (a, b): x = a OR x = b; x NOT IN (a, b): x <> a AND x <> b.  An
 * x that calls a volatile function is evaluated once, as PostgreSQL's
 * x = ANY (ARRAY[a, b]) does (it evaluates each OR'ed comparison's copy
 * of x otherwise, which answers random() IN (...) wrong): x = ANY
 * (ARRAY[a, b]), x <> ALL (ARRAY[a, b]). */
static Expr *transform_in(Analyze *an, A_Expr *ax)
{
    bool neg = strcmp(ax->op, "<>") == 0;
    Expr *x = transform(an, ax->lexpr);
    if (x == NULL)
        return NULL;
    int n = list_len(ax->list);
    if (n > 1 && plan_expr_has(x, plan_expr_volatile, NULL)) {
        Expr **items = ARENA_ARRAY(an->a, Expr *, n);
        for (int i = 0; i < n; i++)
            if ((items[i] = transform(an, list_nth(ax->list, i))) == NULL)
                return NULL;
        Expr *arr = an_array_ctor(an, items, n, ax->hdr.location);
        return arr ? an_array_any(an, ax->op, neg, x, arr, ax->hdr.location) : NULL;
    }
    Expr **args = ARENA_ARRAY(an->a, Expr *, n);
    for (int i = 0; i < n; i++) {
        Node *item = list_nth(ax->list, i);
        Expr *v = transform(an, item);
        if (v == NULL)
            return NULL;
        args[i] = to_boolean(an, an_make_op(an, ax->op, x, v, ax->hdr.location), "IN");
        if (args[i] == NULL)
            return NULL;
    }
    if (n == 1)
        return args[0];
    return an_mk(an, neg ? EXPR_AND : EXPR_OR, sl_type(TYPE_BOOL), ax->hdr.location, n, args);
}

/* x [NOT] LIKE / ILIKE / SIMILAR TO y [ESCAPE e]: LIKE and ILIKE without
 * ESCAPE are their operators; the rest call an internal function ("like
 * escape", "similar to", ...) whose kernel reads e->negate. */
static Expr *transform_like(Analyze *an, A_Expr *ax)
{
    if (ax->escape == NULL && ax->kind != AEXPR_SIMILAR) {
        Expr *l = transform(an, ax->lexpr), *r = l ? transform(an, ax->rexpr) : NULL;
        return r ? an_make_op(an, ax->op, l, r, ax->hdr.location) : NULL;
    }
    Expr *args[3];
    int nargs = ax->escape != NULL ? 3 : 2;
    args[0] = transform(an, ax->lexpr);
    args[1] = args[0] ? transform(an, ax->rexpr) : NULL;
    if (args[1] == NULL || (nargs == 3 && (args[2] = transform(an, ax->escape)) == NULL))
        return NULL;
    const char *name = ax->kind == AEXPR_SIMILAR ? (nargs == 3 ? "similar to escape" : "similar to")
                       : ax->kind == AEXPR_ILIKE ? "ilike escape"
                                                 : "like escape";
    const FuncDesc *fd = an_resolve(an, name, false, args, nargs, ax->hdr.location);
    if (fd == NULL)
        return NULL;
    Expr *e = an_apply_func(an, fd, args, nargs, ax->hdr.location);
    if (e != NULL)
        e->negate = ax->op[0] == '!';
    return e;
}

/* x = ANY (subquery) is x IN (subquery); x op ANY / ALL (array) compare x
 * with each element (analyze_array.c).  The catalog's int2vector and
 * oidvector columns are text ('1 2'): x = ANY of them compares text
 * (the runtime's array_any_eq / array_any_ne). */
static Expr *transform_any(Analyze *an, A_Expr *ax)
{
    int loc = ax->hdr.location;
    if (IS_A(ax->rexpr, SubLink) && ((SubLink *)ax->rexpr)->type == SUBLINK_EXPR) {
        /* x op ANY / ALL (subquery) */
        SubLink *s = ARENA_NEW(an->a, SubLink);
        *s = *(SubLink *)ax->rexpr;
        s->type = ax->kind == AEXPR_OP_ALL ? SUBLINK_ALL : SUBLINK_IN;
        s->op = ax->op;
        s->testexpr = ax->lexpr;
        s->hdr.location = loc;
        return an_sublink(an, s);
    }
    Expr *args[2];
    if ((args[0] = transform(an, ax->lexpr)) == NULL || (args[1] = transform(an, ax->rexpr)) == NULL)
        return NULL;
    if (ax->kind == AEXPR_OP_ALL || args[1]->type.id != TYPE_TEXT || args[0]->type.id == TYPE_ARRAY)
        return an_array_any(an, ax->op, ax->kind == AEXPR_OP_ALL, args[0], args[1], loc);
    /* a catalog column that keeps a vector as text (int2vector, oidvector):
     * its elements compare as text */
    if ((args[0] = an_coerce(an, args[0], sl_type(TYPE_TEXT), COERCE_EXPLICIT, loc)) == NULL)
        return NULL;
    const char *fn = strcmp(ax->op, "=") == 0 ? "array_any_eq" : "array_any_ne";
    const FuncDesc *fd = an_resolve(an, fn, false, args, 2, loc);
    return fd ? an_apply_func(an, fd, args, 2, loc) : NULL;
}

/* a[i]: the i-th element (from 1), NULL outside the array
 * (analyze_array.c). */
static Expr *transform_subscript(Analyze *an, A_Expr *ax)
{
    int loc = ax->hdr.location;
    Expr *args[2];
    if ((args[0] = transform(an, ax->lexpr)) == NULL || (args[1] = transform(an, ax->rexpr)) == NULL)
        return NULL;
    if (args[0]->type.id != TYPE_TEXT)
        return an_array_subscript(an, args[0], args[1], NULL, false, loc);
    /* a catalog vector kept as text (int2vector, oidvector) */
    if ((args[1] = an_coerce(an, args[1], sl_type(TYPE_INT4), COERCE_EXPLICIT, loc)) == NULL)
        return NULL;
    const FuncDesc *fd = an_resolve(an, "array_subscript", false, args, 2, loc);
    return fd ? an_apply_func(an, fd, args, 2, loc) : NULL;
}

static Expr *transform_aexpr(Analyze *an, A_Expr *ax)
{
    if ((ax->kind == AEXPR_SUBSCRIPT || ax->kind == AEXPR_SLICE) && IS_A(ax->lexpr, A_Expr) &&
        (((A_Expr *)ax->lexpr)->kind == AEXPR_SUBSCRIPT ||
         ((A_Expr *)ax->lexpr)->kind == AEXPR_SLICE)) {
        /* a[i][j]: PostgreSQL's subscripts of several dimensions */
        sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, ax->hdr.location,
                    "multidimensional subscripts are not supported yet");
        return NULL;
    }
    switch (ax->kind) {
    case AEXPR_OP: {
        Expr *l = NULL, *r;
        if (ax->lexpr && (l = transform(an, ax->lexpr)) == NULL)
            return NULL;
        if ((r = transform(an, ax->rexpr)) == NULL)
            return NULL;
        return an_make_op(an, ax->op, l, r, ax->hdr.location);
    }
    case AEXPR_DISTINCT:
    case AEXPR_NOT_DISTINCT:
        return transform_eq_based(an, ax, EXPR_DISTINCT);
    case AEXPR_NULLIF:
        return transform_eq_based(an, ax, EXPR_NULLIF);
    case AEXPR_IN:
        return transform_in(an, ax);
    case AEXPR_LIKE:
    case AEXPR_ILIKE:
    case AEXPR_SIMILAR:
        return transform_like(an, ax);
    case AEXPR_BETWEEN:
    case AEXPR_NOT_BETWEEN:
    case AEXPR_BETWEEN_SYM:
    case AEXPR_NOT_BETWEEN_SYM:
        return transform_between(an, ax);
    case AEXPR_OP_ANY:
    case AEXPR_OP_ALL:
        return transform_any(an, ax);
    case AEXPR_SUBSCRIPT:
        return transform_subscript(an, ax);
    case AEXPR_SLICE: {
        Expr *arr, *lo = NULL, *hi = NULL;
        if ((arr = transform(an, ax->lexpr)) == NULL ||
            (ax->rexpr && (lo = transform(an, ax->rexpr)) == NULL) ||
            (ax->escape && (hi = transform(an, ax->escape)) == NULL))
            return NULL;
        return an_array_subscript(an, arr, lo, hi, true, ax->hdr.location);
    }
    case AEXPR_ARRAY: {
        if (strcmp(ax->op, "ARRAY[[]]") == 0) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, ax->hdr.location,
                        "multidimensional arrays are not supported yet");
            return NULL;
        }
        int n = list_len(ax->list);
        Expr **args = ARENA_ARRAY(an->a, Expr *, n ? n : 1);
        for (int i = 0; i < n; i++)
            if ((args[i] = transform(an, list_nth(ax->list, i))) == NULL)
                return NULL;
        return an_array_ctor(an, args, n, ax->hdr.location);
    }
    }
    return NULL;
}

static Expr *transform_node(Analyze *an, Node *n)
{
    switch (n->tag) {
    case T_A_Const:
        return transform_const(an, (A_Const *)n);
    case T_ParamRef:
        return transform_param(an, (ParamRef *)n);
    case T_ColumnRef:
        if (an->no_columns != NULL) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, n->location,
                        "cannot use column reference in %s", an->no_columns);
            return NULL;
        }
        return an_column_ref(an, (ColumnRef *)n);
    case T_SubLink:
        if (an->no_columns != NULL || an->no_subquery != NULL) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, n->location,
                        "cannot use subquery in %s",
                        an->no_columns != NULL ? an->no_columns : an->no_subquery);
            return NULL;
        }
        return an_sublink(an, (SubLink *)n);
    case T_SetToDefault:
        sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, n->location,
                    "DEFAULT is not allowed in this context");
        return NULL;
    case T_A_Expr:
        return transform_aexpr(an, (A_Expr *)n);
    case T_BoolExpr:
        return transform_bool(an, (BoolExpr *)n);
    case T_TypeCast:
        return transform_typecast(an, (TypeCast *)n);
    case T_FuncCall:
        return transform_func(an, (FuncCall *)n);
    case T_NullTest: {
        NullTest *t = (NullTest *)n;
        Expr *arg = transform(an, t->arg);
        if (arg == NULL)
            return NULL;
        Expr *e = an_mk(an, EXPR_NULLTEST, sl_type(TYPE_BOOL), n->location, 1, &arg);
        e->negate = t->is_not;
        return e;
    }
    case T_BooleanTest: {
        static const char *const names[] = {"IS TRUE", "IS NOT TRUE", "IS FALSE",
                                            "IS NOT FALSE", "IS UNKNOWN", "IS NOT UNKNOWN"};
        BooleanTest *t = (BooleanTest *)n;
        Expr *arg = to_boolean(an, transform(an, t->arg), names[t->test]);
        if (arg == NULL)
            return NULL;
        Expr *e = an_mk(an, EXPR_BOOLTEST, sl_type(TYPE_BOOL), n->location, 1, &arg);
        e->subkind = t->test;
        return e;
    }
    case T_CaseExpr:
        return transform_case(an, (CaseExpr *)n);
    case T_CoalesceExpr:
        return transform_list_common(an, ((CoalesceExpr *)n)->args, EXPR_COALESCE, "COALESCE",
                                     n->location);
    case T_MinMaxExpr:
        return transform_minmax(an, (MinMaxExpr *)n);
    default:
        break;
    }
    sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, n->location,
                "this kind of expression is not supported yet");
    return NULL;
}

static Expr *transform(Analyze *an, Node *n)
{
    if (n == NULL)
        return NULL;
    if (++an->depth > MAX_DEPTH) {
        sl_error_at(an->err, ERRCODE_STATEMENT_TOO_COMPLEX, n->location,
                    "stack depth limit exceeded");
        an->depth--;
        return NULL;
    }
    Expr *e = transform_node(an, n);
    an->depth--;
    if (e != NULL && too_costly(an, e))
        return NULL;
    return e;
}

/* ---------------------------------------------------------- column names */

/* FigureColnameInternal: the name and its strength (2 strong, 1 weak). */
static int figure_colname(Node *n, const char **name)
{
    if (n == NULL)
        return 0;
    switch (n->tag) {
    case T_ColumnRef: {
        ColumnRef *c = (ColumnRef *)n;
        const char *last = list_nth(c->names, list_len(c->names) - 1);
        if (strcmp(last, "*") != 0) {
            *name = last;
            return 2;
        }
        return 0;
    }
    case T_FuncCall:
        *name = ((FuncCall *)n)->name;
        return 2;
    case T_A_Expr:
        if (((A_Expr *)n)->kind == AEXPR_NULLIF) {
            *name = "nullif";
            return 2;
        }
        if (((A_Expr *)n)->kind == AEXPR_ARRAY) {
            *name = "array";
            return 2;
        }
        if (((A_Expr *)n)->kind == AEXPR_SUBSCRIPT || ((A_Expr *)n)->kind == AEXPR_SLICE)
            return figure_colname(((A_Expr *)n)->lexpr, name);
        return 0;
    case T_TypeCast: {
        int s = figure_colname(((TypeCast *)n)->arg, name);
        if (s <= 1) {
            *name = ((TypeCast *)n)->type->name;
            return 1;
        }
        return s;
    }
    case T_CaseExpr: {
        int s = figure_colname(((CaseExpr *)n)->defresult, name);
        if (s <= 1) {
            *name = "case";
            return 1;
        }
        return s;
    }
    case T_CoalesceExpr:
        *name = "coalesce";
        return 2;
    case T_MinMaxExpr:
        *name = ((MinMaxExpr *)n)->is_greatest ? "greatest" : "least";
        return 2;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------ exported */

Expr *an_transform(Analyze *an, Node *n)
{
    return transform(an, n);
}

Expr *an_to_boolean(Analyze *an, Expr *e, const char *construct)
{
    return to_boolean(an, e, construct);
}

bool an_common_type(Analyze *an, Expr **es, int n, const char *what, SlType *out)
{
    return common_type(an, es, n, what, out);
}

bool an_resolve_type(Analyze *an, const TypeName *tn, SlType *out)
{
    return resolve_type(an, tn, out);
}

int an_figure_colname(Node *n, const char **name)
{
    return figure_colname(n, name);
}

/* ------------------------------------------------------------ statements */

int sql_analyze(Arena *a, const char *sql, const RawStmt *raw, const SlType *param_types,
                int nparam_types, Query **out, SlError *err)
{
    return sql_analyze_with(a, NULL, sql, raw, param_types, nparam_types, out, err);
}

int sql_analyze_with(Arena *a, const SqlCatalog *cat, const char *sql, const RawStmt *raw,
                     const SlType *param_types, int nparam_types, Query **out, SlError *err)
{
    Analyze an = {.a = a, .err = err, .cat = cat, .sql = sql, .raw = raw};
    if (nparam_types > 0) {
        an.params = ARENA_ARRAY(a, SlType, nparam_types);
        memcpy(an.params, param_types, sizeof(SlType) * (size_t)nparam_types);
        an.nparams = an.cap = nparam_types;
    }
    Query *q = ARENA_NEW(a, Query);
    int rc = an_statement(&an, raw->stmt, q);
    if (rc < 0 || sl_error_set(err))
        return -1;
    for (int i = 0; i < an.nparams; i++) {
        if (an.params[i].id == TYPE_UNKNOWN)
            return sl_error(err, ERRCODE_INDETERMINATE_DATATYPE,
                            "could not determine data type of parameter $%d", i + 1);
    }
    q->nparams = an.nparams;
    q->param_types = an.params;
    q->ninit = list_len(an.init);
    q->ncorrelated = an.ncorrelated;
    q->on_loop = an.on_loop;
    q->init = ARENA_ARRAY(a, InitPlan, q->ninit ? q->ninit : 1);
    for (int i = 0; i < q->ninit; i++)
        q->init[i] = *(InitPlan *)list_nth(an.init, i);
    q->ndeps = list_len(an.deps);
    q->dep_names = ARENA_ARRAY(a, const char *, q->ndeps ? q->ndeps : 1);
    q->dep_oids = ARENA_ARRAY(a, uint32_t, q->ndeps ? q->ndeps : 1);
    q->dep_as = ARENA_ARRAY(a, uint32_t, q->ndeps ? q->ndeps : 1);
    for (int i = 0; i < q->ndeps; i++) {
        const CatRelation *rel = list_nth(an.deps, i);
        q->dep_names[i] = arena_strdup(a, rel->name);
        q->dep_oids[i] = rel->oid;
        q->dep_as[i] = (uint32_t)(uintptr_t)list_nth(an.dep_as, i);
    }
    *out = q;
    return 0;
}

/* SET [LOCAL] name TO value | DEFAULT, RESET name | ALL: the session
 * applies it (settings.h); here only its words are checked and flattened. */
static int an_variable_set(Analyze *an, VariableSetStmt *s, Query *q)
{
    q->kind = QUERY_UTILITY;
    q->tag = s->is_reset ? "RESET" : "SET";
    q->setting = s->name;
    q->set_local = s->is_local;
    if (s->is_reset)
        return 0;
    int end = an->raw ? an->raw->end : (int)strlen(an->sql);
    if (settings_parse_args(an->a, s->name, an->sql + s->value_offset,
                            (size_t)(end - s->value_offset), &q->set_value, an->err) < 0) {
        if (an->err->position == 0)
            an->err->position = s->value_offset + 1;
        return -1;
    }
    return 0;
}

/* SHOW name: one text column named as the parameter is; SHOW ALL: name,
 * setting and description.  An unknown name is 42704 here already. */
static int an_show(Analyze *an, ShowStmt *s, Query *q)
{
    q->kind = QUERY_UTILITY;
    q->tag = "SHOW";
    q->setting = s->name;
    bool all = strcmp(s->name, "all") == 0;
    q->ntargets = all ? 3 : 1;
    q->names = ARENA_ARRAY(an->a, const char *, q->ntargets);
    q->types = ARENA_ARRAY(an->a, SlType, q->ntargets);
    for (int i = 0; i < q->ntargets; i++)
        q->types[i] = sl_type(TYPE_TEXT);
    if (all) {
        q->names[0] = "name";
        q->names[1] = "setting";
        q->names[2] = "description";
        return 0;
    }
    const char *canon;
    if (settings_get(NULL, s->name, &canon, an->err) == NULL)
        return -1;
    q->names[0] = canon;
    return 0;
}

/* One statement into q (also the statement EXPLAIN shows). */
int an_statement(Analyze *an, Node *stmt, Query *q)
{
    q->ast = stmt;
    switch (stmt->tag) {
    case T_SelectStmt:
        return an_select_stmt(an, (SelectStmt *)stmt, q);
    case T_InsertStmt:
        return an_insert_stmt(an, (InsertStmt *)stmt, q);
    case T_UpdateStmt:
        return an_update_stmt(an, (UpdateStmt *)stmt, q);
    case T_DeleteStmt:
        return an_delete_stmt(an, (DeleteStmt *)stmt, q);
    case T_CreateStmt:
        return an_create_stmt(an, (CreateStmt *)stmt, q);
    case T_DropStmt:
        return an_drop_stmt(an, (DropStmt *)stmt, q);
    case T_CopyStmt:
        return an_copy_stmt(an, (CopyStmt *)stmt, q);
    case T_ExplainStmt:
    case T_CreateCqStmt:
    case T_CreateViewStmt:
    case T_AlterTableStmt:
    case T_AlterCqStmt:
    case T_SubscribeStmt:
        return an_other_stmt(an, stmt, q);
    case T_TransactionStmt: {
        /* Run by the server (src/server/session.c), which owns the
         * transaction state. */
        static const char *const tags[] = {"BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION",
                                           "SET", "SET", "SAVEPOINT", "RELEASE", "ROLLBACK"};
        q->kind = QUERY_UTILITY;
        q->tag = tags[((TransactionStmt *)stmt)->kind];
        return 0;
    }
    case T_DeallocateStmt:
        /* Run by the server, which owns the session's prepared statements. */
        q->kind = QUERY_UTILITY;
        q->tag = ((DeallocateStmt *)stmt)->name == NULL ? "DEALLOCATE ALL" : "DEALLOCATE";
        return 0;
    case T_RoleStmt: {
        /* Checked and run by the runtime (src/runtime/roles.c). */
        static const char *const tags[] = {"CREATE ROLE", "ALTER ROLE", "ALTER ROLE",
                                           "DROP ROLE"};
        q->kind = QUERY_ROLE;
        q->tag = tags[((RoleStmt *)stmt)->kind];
        return 0;
    }
    case T_BackupStmt:
        /* Checked and run by the runtime (src/runtime/backup.c). */
        q->kind = QUERY_BACKUP;
        q->tag = "BACKUP";
        q->backup_target = ((BackupStmt *)stmt)->target;
        return 0;
    case T_GrantStmt:
        q->kind = QUERY_ROLE;
        q->tag = ((GrantStmt *)stmt)->is_grant ? "GRANT" : "REVOKE";
        return 0;
    case T_VariableSetStmt:
        return an_variable_set(an, (VariableSetStmt *)stmt, q);
    case T_ShowStmt:
        return an_show(an, (ShowStmt *)stmt, q);
    case T_UnsupportedStmt:
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, stmt->location,
                           "%s is not supported yet", ((UnsupportedStmt *)stmt)->command);
    default:
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, stmt->location,
                           "this statement is not supported yet");
    }
}
