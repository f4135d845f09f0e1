/*
 * pgfuncs.c -- PostgreSQL's catalog functions over sluice's catalog, the
 * array functions over the text form of the catalog's vector columns
 * (int2vector, oidvector: pg_index.indkey, pg_proc.proargtypes are text),
 * and the input and output functions of the reg* casts.  Real arrays
 * (TYPE_ARRAY) are src/functions/arrayfuncs.c's.
 *
 *   pgcat_register_functions   add them to the executor's function table
 *
 *   version(), current_database(), current_schema(), current_schemas(),
 *   current_user / session_user, pg_backend_pid(),
 *   format_type(), pg_table_is_visible(), pg_type_is_visible(),
 *   pg_function_is_visible(), pg_get_expr(), obj_description(),
 *   col_description(), shobj_description(), pg_get_viewdef(),
 *   pg_encoding_to_char(),
 *   pg_get_indexdef(), pg_get_constraintdef(), pg_get_function_result(),
 *   pg_get_function_arguments(), pg_relation_is_publishable(),
 *   pg_get_statisticsobjdef_columns(), pg_get_functiondef(),
 *   pg_get_function_identity_arguments(), pg_get_function_sqlbody(),
 *   pg_get_serial_sequence(), pg_size_pretty(), pg_relation_size(),
 *   pg_table_size(), pg_total_relation_size(), pg_indexes_size(),
 *   pg_database_size(), json_build_object() (refused)
 *   array_to_string(), array_subscript (a[i]), array_upper/length/lower(),
 *   array_any_eq / array_any_ne (x = ANY (a), x <> ANY (a))
 *   regclassin/out, regtypein/out, regnamespacein/out, regprocin/out,
 *   to_regclass(), to_regtype(), to_regnamespace(), to_regproc()
 *
 * They run on the loop's thread, with the statement's Syscat
 * (EvalCtx.system_arg: its catalog, relations and session).  Without one
 * (an expression outside a client statement) they see no relation and no
 * session: current_user is "sluice" (a continuous query's: its owner, the
 * role its hooks name), regclass input finds nothing.
 * docs/sql-reference.md, "Catalog functions".
 */
#include "pgcatalog_int.h"
#include "functions/kernels.h"
#include "sql/keywords.h"
#include "types/numeric.h"
#include "sluice/acl.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/* ------------------------------------------------------------ functions */

/* The Syscat of the statement evaluating (NULL: none). */
static const Syscat *sys_of(const EvalCtx *cx)
{
    return cx->system_arg;
}

static void out_text(EvalCtx *cx, Vector *out, uint32_t i, const char *s)
{
    if (s == NULL) {
        out->nulls[i] = 1;
        return;
    }
    out->v.str[i].ptr = arena_strdup(cx->arena, s);
    out->v.str[i].len = (uint32_t)strlen(s);
}

static KERNEL(k_version)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    FOR_SEL(sel, n, { out_text(cx, out, i, SERVER_VERSION_TEXT); });
    return 0;
}

static KERNEL(k_current_database)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    FOR_SEL(sel, n, { out_text(cx, out, i, pgcat_database_name(sys_of(cx))); });
    return 0;
}

static KERNEL(k_current_schema)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    FOR_SEL(sel, n, { out_text(cx, out, i, "public"); });
    return 0;
}

static KERNEL(k_pg_backend_pid)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    SL_UNUSED(cx);
    const RtSession *s = syscat_session_current(sys_of(cx));
    FOR_SEL(sel, n, { out->v.i32[i] = s ? s->pid : 0; });
    return 0;
}

/* The session's user; in a continuous query (no session, the hooks name
 * a role) its owner. */
static KERNEL(k_current_user)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    const RtSession *s = syscat_session_current(sys_of(cx));
    const char *user = s && s->user ? s->user : NULL;
    const ExFnHooks *h = cx->hooks;
    if (user == NULL && h != NULL && h->role != 0 && h->acl != NULL)
        user = h->acl->role_name(h->acl_arg, h->role, cx->arena);
    if (user == NULL)
        user = "sluice";
    FOR_SEL(sel, n, { out_text(cx, out, i, user); });
    return 0;
}

/* current_schemas(include_implicit): the search path as an array literal. */
static KERNEL(k_current_schemas)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        out_text(cx, out, i, args[0].v.b[i] ? "{pg_catalog,public}" : "{public}");
    });
    return 0;
}


/* format_type(type oid, typmod): NULL type is NULL, NULL typmod is none. */
static KERNEL(k_format_type)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        if (vector_is_null(&args[0], i)) {
            out->nulls[i] = 1;
            continue;
        }
        out->nulls[i] = 0;
        int64_t oid = args[0].v.i64[i];
        SlTypeId id = pgcat_type_by_oid(oid);
        int32_t mod = vector_is_null(&args[1], i) ? -1 : args[1].v.i32[i];
        char buf[96];
        bool arr = false;
        if (id == TYPE_UNKNOWN) {
            /* an array type: its element's name and modifier, then [] */
            for (int k = 1; k < TYPE__NSCALAR && !arr; k++) {
                if ((int64_t)pgcat_array_oid((SlTypeId)k) == oid) {
                    id = (SlTypeId)k;
                    arr = true;
                }
            }
            if (!arr) {
                out_text(cx, out, i, "???");
                continue;
            }
        }
        SlType t = sl_type(id);
        if (mod >= 4 && (id == TYPE_VARCHAR || id == TYPE_NUMERIC))
            t.typmod = mod - 4;
        else if (mod >= 0 && id == TYPE_INTERVAL)
            t.typmod = mod;
        if (arr)
            t = sl_array_type(id, t.typmod);
        out_text(cx, out, i, type_format(t, buf, sizeof(buf)));
    });
    return 0;
}

/* pg_table_is_visible: the relations of public and pg_catalog are on the
 * search path; information_schema's and sys's are not. */
static KERNEL(k_pg_table_is_visible)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        int64_t oid = args[0].v.i64[i];
        const CatRelation *rel = pgcat_relation_by_oid(sys_of(cx), oid);
        if (rel == NULL)
            rel = pgcat_table_of_index(sys_of(cx), oid);
        if (rel == NULL) {
            out->nulls[i] = 1;
            continue;
        }
        uint32_t ns = pgcat_namespace_of(sys_of(cx), rel);
        out->v.b[i] = ns == VREL_NS_PUBLIC || ns == VREL_NS_PG_CATALOG;
    });
    return 0;
}

static KERNEL(k_pg_type_is_visible)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        int64_t oid = args[0].v.i64[i];
        bool known = pgcat_type_by_oid(oid) != TYPE_UNKNOWN;
        for (int k = 1; k < TYPE__COUNT && !known; k++)
            known = (int64_t)pgcat_array_oid((SlTypeId)k) == oid;
        if (known)
            out->v.b[i] = true;
        else
            out->nulls[i] = 1;
    });
    return 0;
}

/* pg_get_expr(expression tree, relation): sluice keeps no expression
 * trees (no column defaults, partition bounds or index expressions), so
 * every tree it is given is its own text. */
static KERNEL(k_pg_get_expr)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        out->v.str[i] = args[0].v.str[i];
    });
    return 0;
}

/* obj_description(oid, catalog): the comment of a system relation. */
static KERNEL(k_obj_description)
{
    FOR_SEL(sel, n, {
        const CatRelation *rel = pgcat_relation_by_oid(sys_of(cx), args[0].v.i64[i]);
        bool on_class = e->nargs < 2 || (args[1].v.str[i].len == 8 &&
                                         memcmp(args[1].v.str[i].ptr, "pg_class", 8) == 0);
        const char *c = rel != NULL && on_class && rel->kind == REL_SYSTEM
                             ? vrel_comment(sys_of(cx), rel)
                             : NULL;
        out_text(cx, out, i, c);
    });
    return 0;
}

/* pg_get_viewdef(oid [, pretty]): a view's query as its CREATE VIEW wrote
 * it (PostgreSQL prints the query it parsed back instead), a continuous
 * query's statement (its result table is the "materialized view");
 * system views have none. */
static KERNEL(k_pg_get_viewdef)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const CatRelation *rel = pgcat_relation_by_oid(sys_of(cx), args[0].v.i64[i]);
        out_text(cx, out, i,
                 rel == NULL                ? NULL
                 : rel->kind == REL_VIEW    ? sql_view_query(cx->arena, rel)
                 : rel->kind == REL_QUERY   ? sql_redact_secrets(cx->arena, rel->sql)
                                            : NULL);
    });
    return 0;
}

/* col_description, shobj_description: sluice has no column or shared
 * object comments; pg_get_function_sqlbody: no function has a SQL body. */
static KERNEL(k_no_description)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    SL_UNUSED(cx);
    FOR_SEL(sel, n, { out->nulls[i] = 1; });
    return 0;
}

/* json_build_object(VARIADIC "any"): sluice has no json type (jsonb
 * only).  The name resolves, so that a catalog query calling it over rows
 * it never has runs (SQLAlchemy's reflection builds a column's identity
 * options from pg_sequence, which has no rows); a call on a row is refused
 * with 0A000 rather than answered with another type. */
static KERNEL(k_json_unsupported)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    SL_UNUSED(out);
    if (n == 0)
        return 0;
    sl_error(cx->err, ERRCODE_FEATURE_NOT_SUPPORTED, "type json is not supported");
    sl_error_hint(cx->err, "Use jsonb.");
    return -1;
}

/* The function of a pg_proc oid (20000 + its position), or NULL. */
static const FuncDesc *func_by_oid(int64_t oid)
{
    const FuncDesc *f = oid >= 20000 ? ex_func_at((size_t)(oid - 20000)) : NULL;
    return f != NULL && !f->is_op ? f : NULL;
}

static const char *sig_type_name(SlTypeId id)
{
    return id < TYPE__COUNT ? type_name(id) : "anyelement";
}

/* pg_get_function_result(oid): the result type's name. */
static KERNEL(k_pg_get_function_result)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const FuncDesc *f = func_by_oid(args[0].v.i64[i]);
        out_text(cx, out, i, f ? sig_type_name(f->ret) : NULL);
    });
    return 0;
}

/* A function's arguments as PostgreSQL lists them: "text, integer"
 * (VARIADIC last). */
static void put_arguments(StrBuf *b, const FuncDesc *f)
{
    for (int k = 0; k < f->nargs; k++)
        strbuf_printf(b, "%s%s%s", k ? ", " : "",
                      (f->flags & FUNC_VARIADIC) && k == f->nargs - 1 ? "VARIADIC " : "",
                      sig_type_name(f->args[k]));
}

/* pg_get_function_arguments(oid): "text, integer" (VARIADIC last). */
static KERNEL(k_pg_get_function_arguments)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const FuncDesc *f = func_by_oid(args[0].v.i64[i]);
        if (f == NULL) {
            out->nulls[i] = 1;
            continue;
        }
        StrBuf b;
        strbuf_init(&b);
        put_arguments(&b, f);
        out->v.str[i].ptr = arena_strndup(cx->arena, b.data ? b.data : "", b.len);
        out->v.str[i].len = (uint32_t)b.len;
        strbuf_free(&b);
    });
    return 0;
}

/* pg_function_is_visible(oid): every function is in pg_catalog. */
static KERNEL(k_pg_function_is_visible)
{
    SL_UNUSED(e);
    SL_UNUSED(cx);
    FOR_SEL(sel, n, {
        if (func_by_oid(args[0].v.i64[i]) != NULL)
            out->v.b[i] = true;
        else
            out->nulls[i] = 1;
    });
    return 0;
}

/* pg_relation_is_publishable: sluice has no logical replication. */
static KERNEL(k_false)
{
    SL_UNUSED(e);
    SL_UNUSED(args);
    SL_UNUSED(cx);
    FOR_SEL(sel, n, { out->v.b[i] = false; });
    return 0;
}

static KERNEL(k_pg_encoding_to_char)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, { out_text(cx, out, i, args[0].v.i32[i] == 6 ? "UTF8" : ""); });
    return 0;
}

/* pg_get_indexdef(index oid[, column, pretty]): a primary key's index. */
static KERNEL(k_pg_get_indexdef)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const CatRelation *rel = pgcat_table_of_index(sys_of(cx), args[0].v.i64[i]);
        if (rel == NULL) {
            out->nulls[i] = 1;
            continue;
        }
        out_text(cx, out, i,
                 arena_printf(cx->arena, "CREATE UNIQUE INDEX %s_pkey ON public.%s USING btree %s",
                              rel->name, rel->name, pgcat_pk_columns(cx->arena, rel)));
    });
    return 0;
}

static KERNEL(k_pg_get_constraintdef)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        int64_t oid = args[0].v.i64[i];
        const CatRelation *rel = oid >= CONSTRAINT_OID(0)
                                     ? pgcat_relation_by_oid(sys_of(cx), oid - CONSTRAINT_OID(0))
                                     : NULL;
        if (rel == NULL || rel->npk == 0) {
            out->nulls[i] = 1;
            continue;
        }
        out_text(cx, out, i,
                 arena_printf(cx->arena, "PRIMARY KEY %s", pgcat_pk_columns(cx->arena, rel)));
    });
    return 0;
}

typedef struct JoinArg {
    StrBuf      *out;
    const SlStr *delim;
    bool         first;
} JoinArg;

static bool join_cb(const SlStr *el, void *arg)
{
    JoinArg *j = arg;
    if (el == NULL)
        return true;
    if (!j->first)
        strbuf_append(j->out, j->delim->ptr, j->delim->len);
    strbuf_append(j->out, el->ptr, el->len);
    j->first = false;
    return true;
}

/* array_to_string(array, delimiter): the elements joined, NULLs skipped. */
static KERNEL(k_array_to_string)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        StrBuf b;
        strbuf_init(&b);
        JoinArg j = {&b, &args[1].v.str[i], true};
        if (!ex_array_elems(&args[0].v.str[i], join_cb, &j)) {
            strbuf_free(&b);
            return sl_error(cx->err, ERRCODE_INVALID_TEXT_REPRESENTATION,
                            "malformed array literal: \"%.*s\"", (int)args[0].v.str[i].len,
                            args[0].v.str[i].ptr);
        }
        out->v.str[i].ptr = arena_strndup(cx->arena, b.data ? b.data : "", b.len);
        out->v.str[i].len = (uint32_t)b.len;
        strbuf_free(&b);
    });
    return 0;
}

typedef struct AnyArg {
    const SlStr *x;
    bool         eq;        /* looking for an equal element (else unequal) */
    bool         found, saw_null;
} AnyArg;

static bool any_cb(const SlStr *el, void *arg)
{
    AnyArg *a = arg;
    if (el == NULL) {
        a->saw_null = true;
        return true;
    }
    bool same = el->len == a->x->len && memcmp(el->ptr, a->x->ptr, el->len) == 0;
    if (same == a->eq)
        a->found = true;
    return !a->found;
}

/* x = ANY (array), x <> ANY (array): true if some element is (un)equal,
 * else NULL if an element is NULL, else false. */
static int any_rows(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                    uint32_t n, bool eq)
{
    FOR_SEL(sel, n, {
        AnyArg a = {&args[0].v.str[i], eq, false, false};
        if (!ex_array_elems(&args[1].v.str[i], any_cb, &a))
            return sl_error(cx->err, ERRCODE_INVALID_TEXT_REPRESENTATION,
                            "malformed array literal: \"%.*s\"", (int)args[1].v.str[i].len,
                            args[1].v.str[i].ptr);
        out->v.b[i] = a.found;
        out->nulls[i] = !a.found && a.saw_null;
    });
    return 0;
}

typedef struct NthArg {
    int32_t  want, seen;
    Arena   *a;
    SlStr    found;
    bool     ok, null;
} NthArg;

static bool nth_cb(const SlStr *el, void *arg)
{
    NthArg *n = arg;
    if (++n->seen != n->want)
        return true;
    n->ok = true;
    n->null = el == NULL;
    if (el != NULL) {
        n->found.ptr = arena_strndup(n->a, el->ptr, el->len);
        n->found.len = el->len;
    }
    return false;
}

static bool count_cb(const SlStr *el, void *arg)
{
    SL_UNUSED(el);
    (*(int32_t *)arg)++;
    return true;
}

static int bad_array(EvalCtx *cx, const SlStr *s)
{
    return sl_error(cx->err, ERRCODE_INVALID_TEXT_REPRESENTATION,
                    "malformed array literal: \"%.*s\"", (int)s->len, s->ptr);
}

/* array[i]: the i-th element, from 1; NULL outside the array. */
static KERNEL(k_array_subscript)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        NthArg a = {args[1].v.i32[i], 0, cx->arena, {"", 0}, false, false};
        if (!ex_array_elems(&args[0].v.str[i], nth_cb, &a))
            return bad_array(cx, &args[0].v.str[i]);
        if (!a.ok || a.null)
            out->nulls[i] = 1;
        else
            out->v.str[i] = a.found;
    });
    return 0;
}

/* array_upper(array, 1), array_length(array, 1): the element count (NULL
 * for an empty array or another dimension); array_lower: 1. */
static int array_bound(EvalCtx *cx, const Vector *args, Vector *out, const uint32_t *sel,
                       uint32_t n, bool lower)
{
    FOR_SEL(sel, n, {
        int32_t count = 0;
        if (!ex_array_elems(&args[0].v.str[i], count_cb, &count))
            return bad_array(cx, &args[0].v.str[i]);
        if (count == 0 || args[1].v.i32[i] != 1)
            out->nulls[i] = 1;
        else
            out->v.i32[i] = lower ? 1 : count;
    });
    return 0;
}

static KERNEL(k_array_upper) { SL_UNUSED(e); return array_bound(cx, args, out, sel, n, false); }
static KERNEL(k_array_lower) { SL_UNUSED(e); return array_bound(cx, args, out, sel, n, true); }

static KERNEL(k_array_any_eq) { SL_UNUSED(e); return any_rows(cx, args, out, sel, n, true); }
static KERNEL(k_array_any_ne) { SL_UNUSED(e); return any_rows(cx, args, out, sel, n, false); }

/* ---- the reg* types' input (name -> oid) and output (oid -> name) */

static bool all_digits(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* "a.b" -> schema a, name b (either may be quoted); NULL schema if none. */
static void split_qualified(Arena *a, const char *s, const char **schema, const char **name)
{
    const char *dot = NULL;
    bool q = false;
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            q = !q;
        else if (*p == '.' && !q && dot == NULL)
            dot = p;
    }
    const char *parts[2] = {dot ? arena_strndup(a, s, (size_t)(dot - s)) : NULL,
                            dot ? dot + 1 : s};
    for (int i = 0; i < 2; i++) {
        const char *p = parts[i];
        if (p == NULL)
            continue;
        size_t n = strlen(p);
        char *o = arena_alloc(a, n + 1), *w = o;
        if (p[0] == '"' && n >= 2 && p[n - 1] == '"') {
            for (size_t k = 1; k + 1 < n; k++) {
                *w++ = p[k];
                if (p[k] == '"' && p[k + 1] == '"')
                    k++;
            }
        } else {
            for (size_t k = 0; k < n; k++)
                *w++ = (char)(p[k] >= 'A' && p[k] <= 'Z' ? p[k] + 32 : p[k]);
        }
        *w = '\0';
        parts[i] = o;
    }
    *schema = parts[0];
    *name = parts[1];
}

/* The input of a reg type: a number is the oid itself (true, *oid set);
 * otherwise the text, split into schema and name (false). */
static bool reg_input(EvalCtx *cx, const SlStr *in, const char **s, const char **schema,
                      const char **name, int64_t *oid)
{
    *s = arena_strndup(cx->arena, in->ptr, in->len);
    if (all_digits(*s)) {
        *oid = strtoll(*s, NULL, 10);
        return true;
    }
    split_qualified(cx->arena, *s, schema, name);
    return false;
}

/* regclass's input: the oid of a relation's name (or of a number), 0; -1
 * with 42P01 when there is no such relation. */
static int regclass_of(EvalCtx *cx, const SlStr *in, int64_t *oid)
{
    const char *s, *schema, *name;
    if (reg_input(cx, in, &s, &schema, &name, oid))
        return 0;
    const CatRelation *rel = NULL;
    if (schema == NULL || strcmp(schema, "public") != 0)
        rel = vrel_lookup(sys_of(cx), schema, name);
    if (rel == NULL && (schema == NULL || strcmp(schema, "public") == 0) &&
        sys_of(cx) != NULL && sys_of(cx)->cat != NULL)
        rel = cat_lookup(sys_of(cx)->cat, name);
    if (rel == NULL)
        return sl_error(cx->err, ERRCODE_UNDEFINED_TABLE, "relation \"%s\" does not exist", s);
    *oid = rel->oid;
    return 0;
}

static KERNEL(k_regclassin)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        if (regclass_of(cx, &args[0].v.str[i], &out->v.i64[i]) < 0)
            return -1;
    });
    return 0;
}

/* pg_get_serial_sequence(table, column): sluice has no sequences, so no
 * column owns one; the table must exist (42P01), as in PostgreSQL. */
static KERNEL(k_no_serial_sequence)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        int64_t oid;
        if (regclass_of(cx, &args[0].v.str[i], &oid) < 0)
            return -1;
        out->nulls[i] = 1;
    });
    return 0;
}

static KERNEL(k_regclassout)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        int64_t oid = args[0].v.i64[i];
        const CatRelation *rel = pgcat_relation_by_oid(sys_of(cx), oid);
        const CatRelation *tbl = rel ? NULL : pgcat_table_of_index(sys_of(cx), oid);
        if (rel == NULL && tbl == NULL) {
            out_text(cx, out, i, arena_printf(cx->arena, "%lld", (long long)oid));
            continue;
        }
        const char *nm = rel ? rel->name : arena_printf(cx->arena, "%s_pkey", tbl->name);
        uint32_t ns = pgcat_namespace_of(sys_of(cx), rel ? rel : tbl);
        bool visible = ns == VREL_NS_PUBLIC || ns == VREL_NS_PG_CATALOG;
        out_text(cx, out, i, visible ? nm : arena_printf(cx->arena, "%s.%s", pgcat_namespace_name(ns),
                                                         nm));
    });
    return 0;
}

static KERNEL(k_regtypein)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const char *s, *schema, *name;
        if (reg_input(cx, &args[0].v.str[i], &s, &schema, &name, &out->v.i64[i]))
            continue;
        size_t len = strlen(name);
        bool array = len > 2 && strcmp(name + len - 2, "[]") == 0;
        if (array)
            name = arena_strndup(cx->arena, name, len - 2);
        else if (name[0] == '_') {
            array = true;
            name++;
        }
        SlTypeId id = type_by_name(name);
        for (int k = 1; k < TYPE__COUNT && id == TYPE_UNKNOWN; k++)
            if (strcmp(type_name((SlTypeId)k), name) == 0)
                id = (SlTypeId)k;
        if (id == TYPE_UNKNOWN && strcmp(name, "integer") == 0)
            id = TYPE_INT4;
        if (id == TYPE_UNKNOWN || (schema != NULL && strcmp(schema, "pg_catalog") != 0) ||
            (array && pgcat_array_oid(id) == 0))
            return sl_error(cx->err, ERRCODE_UNDEFINED_OBJECT, "type \"%s\" does not exist", s);
        out->v.i64[i] = array ? pgcat_array_oid(id) : type_oid(id);
    });
    return 0;
}

static KERNEL(k_regtypeout)
{
    SL_UNUSED(e);
    /* format_type(oid, NULL), which is what regtype prints */
    Vector mods;
    vector_init(&mods, cx->arena, sl_type(TYPE_INT4), args[0].len ? args[0].len : 1, true);
    memset(mods.nulls, 1, args[0].len ? args[0].len : 1);
    Vector two[2] = {args[0], mods};
    return k_format_type(cx, e, two, out, sel, n);
}

static KERNEL(k_regnamespacein)
{
    SL_UNUSED(e);
    static const uint32_t oids[] = {VREL_NS_PG_CATALOG, VREL_NS_PUBLIC, VREL_NS_INFO_SCHEMA,
                                    VREL_NS_SYS};
    FOR_SEL(sel, n, {
        const char *s, *schema, *name;
        if (reg_input(cx, &args[0].v.str[i], &s, &schema, &name, &out->v.i64[i]))
            continue;
        int64_t found = -1;
        for (size_t k = 0; k < SL_ARRAY_LEN(oids) && schema == NULL; k++)
            if (strcmp(pgcat_namespace_name(oids[k]), name) == 0)
                found = oids[k];
        if (found < 0)
            return sl_error(cx->err, ERRCODE_INVALID_SCHEMA_NAME,
                            "schema \"%s\" does not exist", s);
        out->v.i64[i] = found;
    });
    return 0;
}

static KERNEL(k_regnamespaceout)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        int64_t oid = args[0].v.i64[i];
        const char *nm = oid >= 0 && oid <= UINT32_MAX ? pgcat_namespace_name((uint32_t)oid) : NULL;
        out_text(cx, out, i, nm ? nm : arena_printf(cx->arena, "%lld", (long long)oid));
    });
    return 0;
}

/* Functions are pg_proc rows 20000 + their position in the tables. */
/* The pg_proc oid of "name" (regproc: the first function of that name) or
 * "name(type, ...)" (regprocedure: the one with those argument types,
 * named as format_type or pg_type names them), or -1. */
static int64_t func_oid_by_signature(Arena *a, const char *sig)
{
    const char *open = strchr(sig, '(');
    size_t nlen = open ? (size_t)(open - sig) : strlen(sig);
    while (nlen > 0 && sig[nlen - 1] == ' ')
        nlen--;
    const char *types[FUNC_MAX_ARGS + 1];
    int ntypes = 0;
    if (open != NULL) {
        char *list = arena_strdup(a, open + 1);
        char *close = strrchr(list, ')');
        if (close == NULL)
            return -1;
        *close = '\0';
        for (char *t = list; *t != '\0' && ntypes <= FUNC_MAX_ARGS;) {
            char *comma = strchr(t, ',');
            if (comma != NULL)
                *comma = '\0';
            while (*t == ' ')
                t++;
            size_t tl = strlen(t);
            while (tl > 0 && t[tl - 1] == ' ')
                t[--tl] = '\0';
            if (tl == 0)
                return -1;
            types[ntypes++] = t;
            if (comma == NULL)
                break;
            t = comma + 1;
        }
    }
    for (size_t k = 0; ex_func_at(k) != NULL; k++) {
        const FuncDesc *f = ex_func_at(k);
        if (f->is_op || strlen(f->name) != nlen || strncmp(f->name, sig, nlen) != 0)
            continue;
        if (open == NULL)
            return 20000 + (int64_t)k;
        if (f->nargs != ntypes)
            continue;
        bool same = true;
        for (int i = 0; i < ntypes && same; i++) {
            SlTypeId id = f->args[i];
            same = id < TYPE__COUNT ? strcasecmp(types[i], type_name(id)) == 0 ||
                                          strcasecmp(types[i], type_typname(id)) == 0 ||
                                          type_by_name(types[i]) == id
                                    : strcmp(types[i], "anyelement") == 0;
        }
        if (same)
            return 20000 + (int64_t)k;
    }
    return -1;
}

/* The pg_type.typinput oid of a type input function's name, or -1. */
static int64_t type_input_oid(const char *name)
{
    if (strcmp(name, "array_in") == 0)
        return PGCAT_ARRAY_IN_OID;
    size_t n = strlen(name);
    for (int id = 1; n > 2 && id < TYPE__NSCALAR; id++) {
        const char *t = type_typname((SlTypeId)id);
        if (strlen(t) == n - 2 && strncmp(name, t, n - 2) == 0 && strcmp(name + n - 2, "in") == 0)
            return PGCAT_TYPE_IN_OID(id);
    }
    return -1;
}

/* The name of a type input function's oid (type_input_oid), or NULL. */
static const char *type_input_name(Arena *a, int64_t oid)
{
    if (oid == PGCAT_ARRAY_IN_OID)
        return "array_in";
    if (oid > PGCAT_TYPE_IN_OID(0) && oid < PGCAT_TYPE_IN_OID(TYPE__NSCALAR))
        return arena_printf(a, "%sin", type_typname((SlTypeId)(oid - PGCAT_TYPE_IN_OID(0))));
    return NULL;
}

static KERNEL(k_regprocin)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const char *s, *schema, *name;
        if (reg_input(cx, &args[0].v.str[i], &s, &schema, &name, &out->v.i64[i]))
            continue;
        int64_t found = schema == NULL || strcmp(schema, "pg_catalog") == 0
                            ? func_oid_by_signature(cx->arena, name) : -1;
        if (found < 0 && (schema == NULL || strcmp(schema, "pg_catalog") == 0))
            found = type_input_oid(name);
        if (found < 0)
            return sl_error(cx->err, ERRCODE_UNDEFINED_FUNCTION,
                            "function \"%s\" does not exist", s);
        out->v.i64[i] = found;
    });
    return 0;
}

static KERNEL(k_regprocout)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        int64_t oid = args[0].v.i64[i];
        const FuncDesc *f = oid >= 20000 && oid < PGCAT_TYPE_IN_OID(0)
                                ? ex_func_at((size_t)(oid - 20000)) : NULL;
        const char *in = type_input_name(cx->arena, oid);
        out_text(cx, out, i, f ? f->name : in ? in : oid == 0 ? "-"
                                         : arena_printf(cx->arena, "%lld", (long long)oid));
    });
    return 0;
}

/* to_regclass(text) and friends: the oid, or NULL when there is no such
 * object (the casts' input functions, row by row, their error dropped). */
static int to_reg_rows(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                       const uint32_t *sel, uint32_t n, ExprFn in)
{
    SlError *saved = cx->err;
    FOR_SEL(sel, n, {
        SlError err = {0};
        cx->err = &err;
        uint32_t one = i;
        if (in(cx, e, args, out, &one, 1) < 0)
            out->nulls[i] = 1;
        sl_error_clear(&err);
    });
    cx->err = saved;
    return 0;
}

static KERNEL(k_to_regclass) { return to_reg_rows(cx, e, args, out, sel, n, k_regclassin); }
static KERNEL(k_to_regtype) { return to_reg_rows(cx, e, args, out, sel, n, k_regtypein); }
static KERNEL(k_to_regnamespace)
{
    return to_reg_rows(cx, e, args, out, sel, n, k_regnamespacein);
}
static KERNEL(k_to_regproc) { return to_reg_rows(cx, e, args, out, sel, n, k_regprocin); }

/* ------------------------------------------------------ relation sizes */

/* PostgreSQL 15's pg_size_pretty units: each used below its limit, the
 * ones after bytes rounded half away from zero (size_pretty_units). */
static const struct {
    const char *name;
    int64_t     limit;
    bool        round;
    int         bits;
} size_units[] = {{"bytes", 10 * 1024, false, 0}, {"kB", 20 * 1024 - 1, true, 10},
                  {"MB", 20 * 1024 - 1, true, 20}, {"GB", 20 * 1024 - 1, true, 30},
                  {"TB", 20 * 1024 - 1, true, 40}, {"PB", 20 * 1024 - 1, true, 50}};

/* size in units, as PostgreSQL's pg_size_pretty(bigint) writes it, in a;
 * __int128 so that pg_size_pretty(numeric) shares it. */
static const char *size_pretty(Arena *a, __int128 size)
{
    size_t nunits = SL_ARRAY_LEN(size_units);
    for (size_t u = 0;; u++) {
        __int128 mag = size < 0 ? -size : size;
        if (u + 1 == nunits || mag < size_units[u].limit) {
            if (size_units[u].round)
                size = (size + (size < 0 ? -1 : 1)) / 2;
            char digits[48];
            int n = 0;
            bool neg = size < 0;
            unsigned __int128 v = neg ? (unsigned __int128)(-(size + 1)) + 1
                                      : (unsigned __int128)size;
            do {
                digits[n++] = (char)('0' + (int)(v % 10));
                v /= 10;
            } while (v != 0);
            StrBuf b;
            strbuf_init(&b);
            if (neg)
                strbuf_putc(&b, '-');
            while (n > 0)
                strbuf_putc(&b, digits[--n]);
            strbuf_printf(&b, " %s", size_units[u].name);
            const char *out = arena_strndup(a, b.data, b.len);
            strbuf_free(&b);
            return out;
        }
        int bits = size_units[u + 1].bits - size_units[u].bits -
                   (size_units[u + 1].round ? 1 : 0) + (size_units[u].round ? 1 : 0);
        size /= (__int128)1 << bits;
    }
}

/* pg_size_pretty(bigint) */
static KERNEL(k_pg_size_pretty)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, { out_text(cx, out, i, size_pretty(cx->arena, args[0].v.i64[i])); });
    return 0;
}

/* pg_size_pretty(numeric): below 10 kB the number as it is written
 * ("1.5 bytes"); above, its integer part as the bigint form's (22003 past
 * 38 digits, about 10^14 PB); NaN and the infinities in PB, as
 * PostgreSQL's. */
static KERNEL(k_pg_size_pretty_num)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const SlNumeric *x = &args[0].v.num[i];
        if (x->sign == NUM_NAN || x->sign == NUM_PINF || x->sign == NUM_NINF) {
            /* above every limit (NaN sorts above every number): the last unit */
            StrBuf b;
            strbuf_init(&b);
            num_format(x, &b);
            strbuf_puts(&b, " PB");
            out_text(cx, out, i, b.data);
            strbuf_free(&b);
            continue;
        }
        int intdigits = x->ndigits - x->scale;
        if (intdigits > 38)
            return sl_error(cx->err, ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value out of range for pg_size_pretty");
        __int128 v = 0;
        for (int k = 0; k < intdigits; k++)
            v = v * 10 + (k < x->ndigits ? x->digits[k] : 0);
        if (x->sign == NUM_NEG)
            v = -v;
        if (v > -size_units[0].limit && v < size_units[0].limit) {
            StrBuf b;
            strbuf_init(&b);
            num_format(x, &b);
            strbuf_puts(&b, " bytes");
            out_text(cx, out, i, b.data);
            strbuf_free(&b);
            continue;
        }
        out_text(cx, out, i, size_pretty(cx->arena, v));
    });
    return 0;
}

/* Which size a relation function reports. */
typedef enum SizeKind { SIZE_RELATION, SIZE_TABLE, SIZE_TOTAL, SIZE_INDEXES } SizeKind;

/* The bytes of the relation or index with this oid, or -1 when there is
 * none (the functions' NULL, as PostgreSQL's for an oid it does not know).
 * A user relation's are the state store's (relstore.h, rel_disk_bytes):
 * relation, table and total size are the same, as a primary key is the
 * table's own key order, not a second structure; an index and a system
 * relation (rows made when read) take none. */
static int64_t relation_size(const Syscat *sc, int64_t oid, SizeKind kind)
{
    const CatRelation *rel = pgcat_relation_by_oid(sc, oid);
    if (rel == NULL)
        return pgcat_table_of_index(sc, oid) != NULL ? 0 : -1;
    if (rel->kind == REL_SYSTEM || kind == SIZE_INDEXES || sc->hooks == NULL ||
        sc->hooks->relation_bytes == NULL)
        return 0;
    return (int64_t)sc->hooks->relation_bytes(sc->hooks_arg, rel);
}

/* The sizes of the relations whose oids are in oids (which may be out),
 * into out. */
static int size_rows(EvalCtx *cx, const int64_t *oids, Vector *out, const uint32_t *sel,
                     uint32_t n, SizeKind kind)
{
    FOR_SEL(sel, n, {
        int64_t bytes = relation_size(sys_of(cx), oids[i], kind);
        if (bytes < 0)
            out->nulls[i] = 1;
        else
            out->v.i64[i] = bytes;
    });
    return 0;
}

/* The text forms (pg_table_size('users')): the name as regclass reads it
 * (42P01 when there is none), then the oid's. */
static int size_rows_text(EvalCtx *cx, const Expr *e, const Vector *args, Vector *out,
                          const uint32_t *sel, uint32_t n, SizeKind kind)
{
    if (k_regclassin(cx, e, args, out, sel, n) < 0)
        return -1;
    return size_rows(cx, out->v.i64, out, sel, n, kind);
}

/* Each size function, on an oid and on a name. */
#define SIZE_KERNELS(fn, kind)                                                  \
    static KERNEL(k_##fn)                                                       \
    {                                                                           \
        SL_UNUSED(e);                                                           \
        return size_rows(cx, args[0].v.i64, out, sel, n, kind);                 \
    }                                                                           \
    static KERNEL(k_##fn##_t) { return size_rows_text(cx, e, args, out, sel, n, kind); }

SIZE_KERNELS(pg_relation_size, SIZE_RELATION)
SIZE_KERNELS(pg_table_size, SIZE_TABLE)
SIZE_KERNELS(pg_total_relation_size, SIZE_TOTAL)
SIZE_KERNELS(pg_indexes_size, SIZE_INDEXES)

/* pg_database_size(name | oid): the state store's table files, for the one
 * database there is (NULL for an oid that is not a database's, 3D000 for a
 * name that is not). */
/* The bytes of the state store's table files (the runtime's hook). */
static int64_t store_bytes(const Syscat *sc)
{
    return sc != NULL && sc->hooks != NULL && sc->hooks->relation_bytes != NULL
               ? (int64_t)sc->hooks->relation_bytes(sc->hooks_arg, NULL)
               : 0;
}

static KERNEL(k_pg_database_size)
{
    SL_UNUSED(e);
    const Syscat *sc = sys_of(cx);
    int64_t bytes = store_bytes(sc);
    FOR_SEL(sel, n, {
        int64_t oid = args[0].v.i64[i];
        if (oid == PGCAT_DATABASE_OID ||
            (oid == PGCAT_DATABASE_OID + 1 && strcmp(pgcat_database_name(sc), "sluice") != 0))
            out->v.i64[i] = bytes;
        else
            out->nulls[i] = 1;
    });
    return 0;
}

static KERNEL(k_pg_database_size_name)
{
    SL_UNUSED(e);
    const Syscat *sc = sys_of(cx);
    int64_t bytes = store_bytes(sc);
    FOR_SEL(sel, n, {
        const SlStr *name = &args[0].v.str[i];
        const char *cur = pgcat_database_name(sc);
        if ((name->len == 6 && memcmp(name->ptr, "sluice", 6) == 0) ||
            (name->len == strlen(cur) && memcmp(name->ptr, cur, name->len) == 0))
            out->v.i64[i] = bytes;
        else
            return sl_error(cx->err, ERRCODE_UNDEFINED_DATABASE,
                            "database \"%.*s\" does not exist", (int)name->len, name->ptr);
    });
    return 0;
}

/* ------------------------------------------------------------ functions */

/* pg_get_functiondef(oid): the CREATE FUNCTION a built-in function reads
 * as, in PostgreSQL 15's form for one of its own (LANGUAGE internal, the
 * body the function's name); NULL for an oid that is no function's. */
static KERNEL(k_pg_get_functiondef)
{
    SL_UNUSED(e);
    FOR_SEL(sel, n, {
        const FuncDesc *f = func_by_oid(args[0].v.i64[i]);
        if (f == NULL) {
            out->nulls[i] = 1;
            continue;
        }
        char vol = pgcat_func_volatility(f);
        StrBuf b;
        strbuf_init(&b);
        strbuf_printf(&b, "CREATE OR REPLACE FUNCTION pg_catalog.%s(", f->name);
        put_arguments(&b, f);
        strbuf_printf(&b, ")\n RETURNS %s%s\n LANGUAGE internal\n %s PARALLEL SAFE%s\n"
                          "AS $function$%s$function$\n",
                      (f->flags & FUNC_SRF) ? "SETOF " : "", sig_type_name(f->ret),
                      vol == 'v' ? "VOLATILE" : vol == 's' ? "STABLE" : "IMMUTABLE",
                      (f->flags & FUNC_NONSTRICT) ? "" : " STRICT", f->name);
        out->v.str[i].ptr = arena_strndup(cx->arena, b.data, b.len);
        out->v.str[i].len = (uint32_t)b.len;
        strbuf_free(&b);
    });
    return 0;
}

#define I8  TYPE_INT8
#define I4  TYPE_INT4
#define TXT TYPE_TEXT
#define B   TYPE_BOOL
#define NUM TYPE_NUMERIC
#define F0(nm, r, f)             {nm, false, 0, {0, 0, 0}, {0, 0, 0}, r, f, 0}
#define F1(nm, a, r, f)          {nm, false, 1, {a, 0, 0}, {a, 0, 0}, r, f, 0}
#define F2(nm, a, b, r, f)       {nm, false, 2, {a, b, 0}, {a, b, 0}, r, f, 0}
#define F3(nm, a, b, c, r, f)    {nm, false, 3, {a, b, c}, {a, b, c}, r, f, 0}

static const FuncDesc pg_funcs[] = {
    F0("version", TXT, k_version),
    F0("current_database", TXT, k_current_database),
    F0("current_schema", TXT, k_current_schema),
    F0("current_user", TXT, k_current_user),
    F0("session_user", TXT, k_current_user),
    F0("pg_backend_pid", I4, k_pg_backend_pid),
    F1("current_schemas", B, TXT, k_current_schemas),
    {"format_type", false, 2, {I8, I4, 0}, {I8, I4, 0}, TXT, k_format_type, FUNC_NONSTRICT},
    F1("pg_table_is_visible", I8, B, k_pg_table_is_visible),
    F1("pg_type_is_visible", I8, B, k_pg_type_is_visible),
    F2("pg_get_expr", TXT, I8, TXT, k_pg_get_expr),
    F3("pg_get_expr", TXT, I8, B, TXT, k_pg_get_expr),
    F1("obj_description", I8, TXT, k_obj_description),
    F2("obj_description", I8, TXT, TXT, k_obj_description),
    F2("col_description", I8, I4, TXT, k_no_description),
    F1("pg_get_viewdef", I8, TXT, k_pg_get_viewdef),
    F2("pg_get_viewdef", I8, B, TXT, k_pg_get_viewdef),
    F2("shobj_description", I8, TXT, TXT, k_no_description),
    F1("pg_encoding_to_char", I4, TXT, k_pg_encoding_to_char),
    F1("pg_get_indexdef", I8, TXT, k_pg_get_indexdef),
    F3("pg_get_indexdef", I8, I4, B, TXT, k_pg_get_indexdef),
    F1("pg_get_constraintdef", I8, TXT, k_pg_get_constraintdef),
    F2("pg_get_constraintdef", I8, B, TXT, k_pg_get_constraintdef),
    F2("array_to_string", TXT, TXT, TXT, k_array_to_string),
    F2("array_any_eq", TXT, TXT, B, k_array_any_eq),
    F2("array_subscript", TXT, I4, TXT, k_array_subscript),
    F2("array_upper", TXT, I4, I4, k_array_upper),
    F2("array_length", TXT, I4, I4, k_array_upper),
    F2("array_lower", TXT, I4, I4, k_array_lower),
    F2("array_any_ne", TXT, TXT, B, k_array_any_ne),
    F1("pg_relation_is_publishable", I8, B, k_false),
    F1("pg_get_function_result", I8, TXT, k_pg_get_function_result),
    F1("pg_get_function_arguments", I8, TXT, k_pg_get_function_arguments),
    F1("pg_get_function_identity_arguments", I8, TXT, k_pg_get_function_arguments),
    F1("pg_get_functiondef", I8, TXT, k_pg_get_functiondef),
    F1("pg_get_function_sqlbody", I8, TXT, k_no_description),
    F2("pg_get_serial_sequence", TXT, TXT, TXT, k_no_serial_sequence),
    {"json_build_object", false, 1, {TYPE__COUNT, 0, 0}, {TYPE__COUNT, 0, 0}, TXT,
     k_json_unsupported, FUNC_NONSTRICT | FUNC_VARIADIC},
    F1("pg_size_pretty", I8, TXT, k_pg_size_pretty),
    F1("pg_size_pretty", NUM, TXT, k_pg_size_pretty_num),
    F1("pg_relation_size", I8, I8, k_pg_relation_size),
    F1("pg_relation_size", TXT, I8, k_pg_relation_size_t),
    F1("pg_table_size", I8, I8, k_pg_table_size),
    F1("pg_table_size", TXT, I8, k_pg_table_size_t),
    F1("pg_total_relation_size", I8, I8, k_pg_total_relation_size),
    F1("pg_total_relation_size", TXT, I8, k_pg_total_relation_size_t),
    F1("pg_indexes_size", I8, I8, k_pg_indexes_size),
    F1("pg_indexes_size", TXT, I8, k_pg_indexes_size_t),
    F1("pg_database_size", I8, I8, k_pg_database_size),
    F1("pg_database_size", TXT, I8, k_pg_database_size_name),
    F1("pg_function_is_visible", I8, B, k_pg_function_is_visible),
    F1("pg_get_statisticsobjdef_columns", I8, TXT, k_no_description),
    /* the reg* casts (analyze.c, OID_TYPMOD) */
    F1("regclassin", TXT, I8, k_regclassin),
    F1("regclassout", I8, TXT, k_regclassout),
    F1("regtypein", TXT, I8, k_regtypein),
    F1("regtypeout", I8, TXT, k_regtypeout),
    F1("regnamespacein", TXT, I8, k_regnamespacein),
    F1("regnamespaceout", I8, TXT, k_regnamespaceout),
    F1("regprocin", TXT, I8, k_regprocin),
    F1("regprocout", I8, TXT, k_regprocout),
    F1("to_regclass", TXT, I8, k_to_regclass),
    F1("to_regtype", TXT, I8, k_to_regtype),
    F1("to_regnamespace", TXT, I8, k_to_regnamespace),
    F1("to_regproc", TXT, I8, k_to_regproc),
};

/* A function's volatility as pg_proc.provolatile says it: 'v' for those
 * whose answer changes within a statement (random, clock_timestamp, ...),
 * 's' for those that read the transaction, the session or the catalog
 * (now, current_setting, the catalog functions of this file), 'i' for the
 * rest. */
char pgcat_func_volatility(const FuncDesc *f)
{
    static const char *const stable_fns[] = {
        "now", "statement_timestamp", "transaction_timestamp", "current_setting",
        "current_timestamp", "localtimestamp", "current_date", "age", "to_char",
        "to_timestamp", "date_trunc", "timezone", "date_part", "extract"};
    if (ex_func_volatile(f))
        return 'v';
    for (size_t k = 0; k < SL_ARRAY_LEN(stable_fns); k++)
        if (strcmp(f->name, stable_fns[k]) == 0)
            return 's';
    return f >= pg_funcs && f < pg_funcs + SL_ARRAY_LEN(pg_funcs) ? 's' : 'i';
}

void pgcat_register_functions(void)
{
    /* they read the catalog and the sessions: their statements run on the loop */
    ex_func_register_loop(pg_funcs, SL_ARRAY_LEN(pg_funcs));
}
