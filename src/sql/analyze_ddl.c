/*
 * analyze_ddl.c -- CREATE, DROP, EXPLAIN, continuous queries, and the
 * statements the analyzer refuses (EXPLAIN ANALYZE; SUBSCRIBE, which the
 * server runs from its parse tree, never from this Query).
 *
 *   an_create_stmt   CREATE TABLE / STREAM / SINK -> the relation to create
 *   an_drop_stmt     DROP TABLE / STREAM / SINK / CONTINUOUS QUERY
 *                    [IF EXISTS] names
 *   an_other_stmt    EXPLAIN; ALTER TABLE / VIEW (tagged, run by the runtime
 *                    from the parse tree); CREATE VIEW (analyze_view.c);
 *                    CREATE CONTINUOUS QUERY (its query analyzed,
 *                    windows included), ALTER ... PAUSE/RESUME, SUBSCRIBE,
 *                    EXPLAIN CONTINUOUS QUERY; SUBSCRIBE -> refused
 *
 * A relation's definition is checked as PostgreSQL checks CREATE TABLE
 * (42701 duplicate column, 42P16 two primary keys, 42703 a key column that
 * does not exist, 54011 past MAX_RELATION_COLUMNS, PostgreSQL's 1,600).  A stream's WATERMARK FOR col AS col [- INTERVAL '...']
 * and its WITH options go into the relation's options as a JSON object:
 * {"watermark_column": "ts", "watermark_delay_us": 10000000, "k": "v", ...}
 * (WITH may not set those two: 22023);
 * the statement's text is kept as the relation's sql.
 */
#include "sql/analyze_int.h"
#include "types/datetime.h"
#include "sluice/rowcodec.h"

#include <stdio.h>

/* PostgreSQL's MaxHeapAttributeNumber. */
#define MAX_RELATION_COLUMNS 1600

static int refuse(Analyze *an, Query *q, int loc, const char *what)
{
    q->kind = QUERY_REFUSED;
    q->refusal = arena_printf(an->a, "%s is not supported yet", what);
    q->refusal_pos = loc;
    return 0;
}

static int check_schema(Analyze *an, RangeVar *rv)
{
    if (rv->schema != NULL && strcmp(rv->schema, "public") != 0)
        return sl_error_at(an->err, ERRCODE_INVALID_SCHEMA_NAME, rv->hdr.location,
                           "schema \"%s\" does not exist", rv->schema);
    return 0;
}

/* WITH (k = v, ...) as JSON members appended to b (after prefix members). */
static int options_json(Analyze *an, List *options, StrBuf *b, bool first)
{
    for (int i = 0; i < list_len(options); i++) {
        DefElem *d = list_nth(options, i);
        for (int k = 0; k < i; k++)
            if (strcmp(((DefElem *)list_nth(options, k))->name, d->name) == 0)
                return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, d->hdr.location,
                                   "conflicting or redundant options");
        if (!first)
            strbuf_puts(b, ", ");
        first = false;
        strbuf_put_json_string(b, d->name, strlen(d->name));
        strbuf_puts(b, ": ");
        Node *v = d->arg;
        if (v == NULL) {
            strbuf_puts(b, "true");
        } else if (IS_A(v, ColumnRef)) {
            const char *w = list_nth(((ColumnRef *)v)->names, 0);
            strbuf_put_json_string(b, w, strlen(w));
        } else {
            A_Const *c = (A_Const *)v;
            switch (c->kind) {
            case CONST_STRING:
                strbuf_put_json_string(b, c->text, (size_t)c->len);
                break;
            case CONST_INTEGER:
            case CONST_DECIMAL:
                strbuf_puts(b, c->text);
                break;
            case CONST_BOOL:
                strbuf_puts(b, c->bval ? "true" : "false");
                break;
            case CONST_NULL:
                strbuf_puts(b, "null");
                break;
            }
        }
    }
    return 0;
}

/* WATERMARK FOR col AS col [- interval]: the delay in microseconds. */
static int watermark_delay(Analyze *an, WatermarkDef *w, int64_t *delay)
{
    Node *e = w->expr;
    const char *bad = "the WATERMARK expression must be the column itself or the column minus "
                      "a constant interval, as in: WATERMARK FOR ts AS ts - INTERVAL '5 seconds'";
    if (IS_A(e, ColumnRef)) {
        ColumnRef *cr = (ColumnRef *)e;
        if (list_len(cr->names) != 1 || strcmp(list_nth(cr->names, 0), w->column) != 0)
            return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, e->location, "%s", bad);
        *delay = 0;
        return 0;
    }
    if (!IS_A(e, A_Expr) || ((A_Expr *)e)->kind != AEXPR_OP ||
        strcmp(((A_Expr *)e)->op, "-") != 0 || !IS_A(((A_Expr *)e)->lexpr, ColumnRef))
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, e->location, "%s", bad);
    A_Expr *ax = (A_Expr *)e;
    ColumnRef *cr = (ColumnRef *)ax->lexpr;
    if (list_len(cr->names) != 1 || strcmp(list_nth(cr->names, 0), w->column) != 0)
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, e->location, "%s", bad);
    Scope none = {.parent = NULL};
    Scope *saved = an->scope;
    an->scope = &none;
    Expr *iv = an_transform(an, ax->rexpr);
    an->scope = saved;
    if (iv == NULL)
        return -1;
    if (iv->kind == EXPR_CONST && iv->type.id == TYPE_UNKNOWN)
        iv = an_coerce(an, iv, sl_type(TYPE_INTERVAL), COERCE_IMPLICIT, iv->location);
    if (iv == NULL)
        return -1;
    if (iv->kind != EXPR_CONST || iv->type.id != TYPE_INTERVAL ||
        vector_is_null(&iv->value, 0))
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, ax->rexpr->location, "%s",
                           bad);
    const SlInterval *v = &iv->value.v.iv[0];
    if (v->months != 0)
        return sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, ax->rexpr->location,
                           "a WATERMARK delay must not contain months or years");
    __int128 us = (__int128)v->usec + (__int128)v->days * USECS_PER_DAY;
    if (us < 0 || us > INT64_MAX / 4)
        return sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, ax->rexpr->location,
                           "a WATERMARK delay must not be negative");
    *delay = (int64_t)us;
    return 0;
}

static int find_col(const CatRelation *def, const char *name)
{
    for (int c = 0; c < def->ncols; c++)
        if (strcmp(def->cols[c].name, name) == 0)
            return c;
    return -1;
}

static int add_pk(Analyze *an, CatRelation *def, Constraint *con, List *keys, List *nodes,
                  const char *relname)
{
    if (def->npk > 0)
        return sl_error_at(an->err, ERRCODE_INVALID_TABLE_DEFINITION, con->hdr.location,
                           "multiple primary keys for table \"%s\" are not allowed", relname);
    int n = list_len(keys);
    def->pk = ARENA_ARRAY(an->a, int, n ? n : 1);
    SL_UNUSED(nodes);
    for (int i = 0; i < n; i++) {
        const char *name = list_nth(keys, i);
        int loc = con->hdr.location;
        int c = find_col(def, name);
        if (c < 0)
            return sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, loc,
                               "column \"%s\" named in key does not exist", name);
        for (int k = 0; k < i; k++)
            if (def->pk[k] == c)
                return sl_error_at(an->err, ERRCODE_DUPLICATE_COLUMN, loc,
                                   "column \"%s\" appears twice in primary key constraint",
                                   name);
        if (!key_type_ok(def->cols[c].type.id))
            return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, loc,
                               "a primary key column of type %s is not supported yet",
                               type_name(def->cols[c].type.id));
        def->pk[i] = c;
        def->cols[c].not_null = true;
    }
    def->npk = n;
    return 0;
}

static int unsupported_constraint(Analyze *an, const Constraint *con)
{
    static const char *const names[] = {
        [CONSTR_UNIQUE] = "UNIQUE constraints", [CONSTR_CHECK] = "CHECK constraints",
        [CONSTR_DEFAULT] = "column defaults", [CONSTR_FOREIGN] = "FOREIGN KEY constraints",
        [CONSTR_IDENTITY] = "identity columns", [CONSTR_GENERATED] = "generated columns",
    };
    return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, con->hdr.location,
                       "%s are not supported yet", names[con->type]);
}

/* A column's DEFAULT, checked at CREATE TABLE as INSERT will use it
 * (analyze_dml.c).  A literal that is no value of its type fails here
 * (22P02, 22007, 22008: PostgreSQL reads it at CREATE), but what folding
 * its expression finds (too long for varchar(n), out of range, division
 * by zero: the rest of class 22) fails each INSERT that takes it, as
 * PostgreSQL evaluates it there. */
static int check_default(Analyze *an, Node *expr, const CatColumn *col)
{
    if (an_default_expr(an, expr, col) != NULL)
        return 0;
    const char *s = an->err->sqlstate;
    if (strncmp(s, "22", 2) != 0 || strcmp(s, "22P02") == 0 || strcmp(s, "22007") == 0 ||
        strcmp(s, "22008") == 0)
        return -1;
    sl_error_clear(an->err);
    return 0;
}

/* serial, bigserial, smallserial and their other names: PostgreSQL's
 * shorthand for a column with a sequence, which sluice does not have. */
static bool is_serial(const TypeName *t)
{
    static const char *const names[] = {"serial", "serial4", "bigserial", "serial8",
                                        "smallserial", "serial2"};
    if (t->qualified || t->array)
        return false;
    for (size_t i = 0; i < SL_ARRAY_LEN(names); i++)
        if (strcmp(t->name, names[i]) == 0)
            return true;
    return false;
}

/* The end of a CREATE: the options text (b, freed here) and the
 * statement's text into def, def into q. */
static void finish_create(Analyze *an, Query *q, CatRelation *def, StrBuf *b, const char *tag,
                          bool if_not_exists)
{
    def->options = arena_strndup(an->a, b->data, b->len);
    strbuf_free(b);
    const RawStmt *raw = an->raw;
    def->sql = raw ? arena_strndup(an->a, an->sql + raw->start, (size_t)(raw->end - raw->start))
                   : "";
    q->kind = QUERY_CREATE;
    q->tag = tag;
    q->create = def;
    q->if_not_exists = if_not_exists;
}

/* CREATE SINK name WITH (options): a relation without columns (a sink
 * takes the columns of the query that writes into it); the runtime checks
 * the options of its connector. */
static int an_create_sink(Analyze *an, CreateStmt *s, Query *q)
{
    StrBuf b;
    strbuf_init(&b);
    strbuf_putc(&b, '{');
    int rc = options_json(an, s->options, &b, true);
    strbuf_putc(&b, '}');
    if (rc < 0) {
        strbuf_free(&b);
        return -1;
    }
    CatRelation *def = ARENA_NEW(an->a, CatRelation);
    def->name = s->relation->name;
    def->kind = REL_SINK;
    def->cols = ARENA_ARRAY(an->a, CatColumn, 1);
    finish_create(an, q, def, &b, "CREATE SINK", s->if_not_exists);
    return 0;
}

int an_create_stmt(Analyze *an, CreateStmt *s, Query *q)
{
    RangeVar *rv = s->relation;
    if (check_schema(an, rv) < 0)
        return -1;
    bool stream = s->kind == OBJECT_STREAM;
    if (s->kind == OBJECT_SINK)
        return an_create_sink(an, s, q);
    const char *what = stream ? "stream" : "table";
    CatRelation *def = ARENA_NEW(an->a, CatRelation);
    def->name = rv->name;
    def->kind = stream ? REL_STREAM : REL_TABLE;
    int n = 0;
    for (int i = 0; i < list_len(s->elts); i++)
        n += IS_A(list_nth(s->elts, i), ColumnDef);
    if (n > MAX_RELATION_COLUMNS)
        return sl_error_at(an->err, ERRCODE_TOO_MANY_COLUMNS, s->hdr.location,
                           "%ss can have at most %d columns", what, MAX_RELATION_COLUMNS);
    def->cols = ARENA_ARRAY(an->a, CatColumn, n ? n : 1);
    /* columns first, so table constraints can name later ones */
    for (int i = 0; i < list_len(s->elts); i++) {
        ColumnDef *cd = list_nth(s->elts, i);
        if (!IS_A(cd, ColumnDef))
            continue;
        if (find_col(def, cd->name) >= 0)
            return sl_error(an->err, ERRCODE_DUPLICATE_COLUMN,
                            "column \"%s\" specified more than once", cd->name);
        CatColumn *col = &def->cols[def->ncols++];
        col->name = cd->name;
        col->not_null = false;
        if (is_serial(cd->type)) {
            sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, cd->type->hdr.location,
                        "type %s is not supported yet", cd->type->name);
            sl_error_hint(an->err, "sluice has no sequences yet: use integer or bigint with "
                                   "values the client gives.");
            return -1;
        }
        if (!an_resolve_type(an, cd->type, &col->type))
            return -1;
    }
    WatermarkDef *wm = NULL;
    for (int i = 0; i < list_len(s->elts); i++) {
        Node *e = list_nth(s->elts, i);
        if (IS_A(e, ColumnDef)) {
            ColumnDef *cd = (ColumnDef *)e;
            int c = find_col(def, cd->name);
            bool saw_null = false, saw_notnull = false, saw_default = false;
            for (int k = 0; k < list_len(cd->constraints); k++) {
                Constraint *con = list_nth(cd->constraints, k);
                switch (con->type) {
                case CONSTR_NOTNULL:
                case CONSTR_NULL:
                    if ((con->type == CONSTR_NULL && saw_notnull) ||
                        (con->type == CONSTR_NOTNULL && saw_null))
                        return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, con->hdr.location,
                                           "conflicting NULL/NOT NULL declarations for column "
                                           "\"%s\" of table \"%s\"",
                                           cd->name, rv->name);
                    saw_null |= con->type == CONSTR_NULL;
                    saw_notnull |= con->type == CONSTR_NOTNULL;
                    def->cols[c].not_null |= con->type == CONSTR_NOTNULL;
                    break;
                case CONSTR_DEFAULT:
                    if (stream)
                        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                           con->hdr.location,
                                           "column defaults on streams are not supported yet");
                    if (saw_default)
                        return sl_error_at(an->err, ERRCODE_SYNTAX_ERROR, con->hdr.location,
                                           "multiple default values specified for column "
                                           "\"%s\" of table \"%s\"",
                                           cd->name, rv->name);
                    saw_default = true;
                    if (check_default(an, con->expr, &def->cols[c]) < 0)
                        return -1;
                    break;
                case CONSTR_CHECK:
                    if (stream)
                        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                           con->hdr.location,
                                           "CHECK constraints on streams are not supported "
                                           "yet");
                    break;      /* checked with the table's others, below */
                case CONSTR_PRIMARY: {
                    if (stream)
                        goto stream_pk;
                    List *keys = list_append(an->a, NULL, (void *)cd->name);
                    if (add_pk(an, def, con, keys, NULL, rv->name) < 0)
                        return -1;
                    break;
                }
                default:
                    return unsupported_constraint(an, con);
                }
            }
        } else if (IS_A(e, Constraint)) {
            Constraint *con = (Constraint *)e;
            if (con->type == CONSTR_CHECK && stream)
                return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, con->hdr.location,
                                   "CHECK constraints on streams are not supported yet");
            if (con->type == CONSTR_CHECK)
                continue;       /* checked with the table's others, below */
            if (con->type != CONSTR_PRIMARY)
                return unsupported_constraint(an, con);
            if (stream)
                goto stream_pk;
            if (add_pk(an, def, con, con->keys, con->key_nodes, rv->name) < 0)
                return -1;
        } else if (IS_A(e, WatermarkDef)) {
            if (!stream)
                return sl_error_at(an->err, ERRCODE_INVALID_TABLE_DEFINITION, e->location,
                                   "only a stream can have a WATERMARK");
            if (wm != NULL)
                return sl_error_at(an->err, ERRCODE_INVALID_TABLE_DEFINITION, e->location,
                                   "multiple WATERMARK clauses for stream \"%s\" are not "
                                   "allowed",
                                   rv->name);
            wm = (WatermarkDef *)e;
        }
    }
    if (def->ncols == 0)
        return sl_error_at(an->err, ERRCODE_INVALID_TABLE_DEFINITION, s->hdr.location,
                           "a %s must have at least one column", what);
    /* the CHECK constraints as INSERT and UPDATE will use them */
    Expr **checks;
    const char **check_names;
    if (!stream && an_table_checks(an, def, s, &checks, &check_names) < 0)
        return -1;
    /* the WATERMARK clause's members of the options: only it sets them */
    for (int i = 0; i < list_len(s->options); i++) {
        DefElem *d = list_nth(s->options, i);
        if (strcmp(d->name, "watermark_column") == 0 ||
            strcmp(d->name, "watermark_delay_us") == 0) {
            sl_error_at(an->err, ERRCODE_INVALID_PARAMETER_VALUE, d->hdr.location,
                        "option \"%s\" is set by the WATERMARK clause", d->name);
            sl_error_hint(an->err, "Add WATERMARK FOR ts AS ts - INTERVAL '5 seconds' to the "
                                   "columns.");
            return -1;
        }
    }
    StrBuf b;
    strbuf_init(&b);
    strbuf_putc(&b, '{');
    bool first = true;
    if (wm != NULL) {
        int c = find_col(def, wm->column);
        int64_t delay = 0;
        if (c < 0) {
            strbuf_free(&b);
            return sl_error_at(an->err, ERRCODE_UNDEFINED_COLUMN, wm->column_loc,
                               "column \"%s\" named in WATERMARK does not exist", wm->column);
        }
        SlTypeId t = def->cols[c].type.id;
        if (t != TYPE_TIMESTAMP && t != TYPE_TIMESTAMPTZ) {
            strbuf_free(&b);
            return sl_error_at(an->err, ERRCODE_DATATYPE_MISMATCH, wm->column_loc,
                               "WATERMARK column \"%s\" must be of type timestamp or timestamp "
                               "with time zone, not type %s",
                               wm->column, type_name(t));
        }
        if (watermark_delay(an, wm, &delay) < 0) {
            strbuf_free(&b);
            return -1;
        }
        strbuf_puts(&b, "\"watermark_column\": ");
        strbuf_put_json_string(&b, wm->column, strlen(wm->column));
        strbuf_printf(&b, ", \"watermark_delay_us\": %lld", (long long)delay);
        first = false;
    }
    if (options_json(an, s->options, &b, first) < 0) {
        strbuf_free(&b);
        return -1;
    }
    strbuf_putc(&b, '}');
    finish_create(an, q, def, &b, stream ? "CREATE STREAM" : "CREATE TABLE", s->if_not_exists);
    return 0;

stream_pk:
    sl_error_at(an->err, ERRCODE_INVALID_TABLE_DEFINITION, s->hdr.location,
                "a stream cannot have a primary key");
    sl_error_hint(an->err, "Streams are append-only; use a TABLE for keyed data.");
    return -1;
}

/* CREATE CONTINUOUS QUERY: the relation of its result table -- the
 * SELECT's output columns, the statement's text and its WITH options.
 * Whether it can run incrementally is the runtime's check (it needs the
 * plan cut by the incremental rewriter, src/runtime/incremental.c). */
static int an_create_cq(Analyze *an, CreateCqStmt *c, Query *q)
{
    if (check_schema(an, c->name) < 0)
        return -1;
    StrBuf b;
    strbuf_init(&b);
    strbuf_putc(&b, '{');
    int rc = options_json(an, c->options, &b, true);
    strbuf_putc(&b, '}');
    Plan *plan = rc < 0 ? NULL : an_select(an, c->query, NULL);
    if (plan == NULL) {
        strbuf_free(&b);
        return -1;
    }
    CatRelation *def = ARENA_NEW(an->a, CatRelation);
    def->name = c->name->name;
    def->kind = REL_QUERY;
    def->ncols = plan->ncols;
    def->cols = ARENA_ARRAY(an->a, CatColumn, plan->ncols > 0 ? plan->ncols : 1);
    for (int i = 0; i < plan->ncols; i++) {
        for (int k = 0; k < i; k++) {
            if (strcmp(plan->cols[k].name, plan->cols[i].name) == 0) {
                strbuf_free(&b);
                sl_error_at(an->err, ERRCODE_DUPLICATE_COLUMN, c->query->hdr.location,
                            "column \"%s\" specified more than once", plan->cols[i].name);
                sl_error_hint(an->err, "Give the result columns distinct names with AS.");
                return -1;
            }
        }
        def->cols[i].name = plan->cols[i].name;
        def->cols[i].type = plan->cols[i].type;
        def->cols[i].not_null = false;
    }
    finish_create(an, q, def, &b, "CREATE CONTINUOUS QUERY", c->if_not_exists);
    q->or_replace = c->or_replace;
    q->plan = plan;
    return 0;
}

int an_drop_stmt(Analyze *an, DropStmt *s, Query *q)
{
    int n = list_len(s->objects);
    for (int i = 0; i < n; i++)
        if (check_schema(an, list_nth(s->objects, i)) < 0)
            return -1;
    q->kind = QUERY_DROP;
    q->tag = s->kind == OBJECT_SINK ? "DROP SINK" : s->kind == OBJECT_STREAM ? "DROP STREAM"
             : s->kind == OBJECT_QUERY ? "DROP CONTINUOUS QUERY"
             : s->kind == OBJECT_VIEW  ? "DROP VIEW" : "DROP TABLE";
    q->drop_kind = s->kind;
    q->ndrop = n;
    q->drop_names = ARENA_ARRAY(an->a, const char *, n ? n : 1);
    for (int i = 0; i < n; i++)
        q->drop_names[i] = ((RangeVar *)list_nth(s->objects, i))->name;
    q->missing_ok = s->missing_ok;
    q->cascade = s->cascade;
    return 0;
}

static void attach_init(Analyze *an, Query *q)
{
    q->ninit = list_len(an->init);
    q->init = ARENA_ARRAY(an->a, InitPlan, q->ninit ? q->ninit : 1);
    for (int i = 0; i < q->ninit; i++)
        q->init[i] = *(InitPlan *)list_nth(an->init, i);
}

int an_other_stmt(Analyze *an, Node *stmt, Query *q)
{
    switch (stmt->tag) {
    case T_ExplainStmt: {
        ExplainStmt *e = (ExplainStmt *)stmt;
        Query *inner = ARENA_NEW(an->a, Query);
        if (e->cq != NULL) {
            /* the running query's plan and figures: read on the loop */
            if (check_schema(an, e->cq) < 0)
                return -1;
            inner->kind = QUERY_UTILITY;
            inner->tag = "EXPLAIN CONTINUOUS QUERY";
            q->explain_cq = e->cq->name;
            an->on_loop = true;
        } else {
            if (an_statement(an, e->stmt, inner) < 0)
                return -1;
            if (e->analyze)
                return refuse(an, q, stmt->location, "EXPLAIN ANALYZE");
            attach_init(an, inner);
        }
        q->kind = QUERY_EXPLAIN;
        q->tag = "EXPLAIN";
        q->explain = inner;
        q->ntargets = 1;
        q->names = ARENA_ARRAY(an->a, const char *, 1);
        q->types = ARENA_ARRAY(an->a, SlType, 1);
        q->names[0] = "QUERY PLAN";
        q->types[0] = sl_type(TYPE_TEXT);
        return 0;
    }
    case T_CreateCqStmt:
        return an_create_cq(an, (CreateCqStmt *)stmt, q);
    case T_CreateViewStmt:
        return an_create_view(an, (CreateViewStmt *)stmt, q);
    case T_AlterTableStmt: {
        /* checked and run from the parse tree by the runtime (alter.c) */
        AlterTableStmt *s = (AlterTableStmt *)stmt;
        const char *what = s->kind == OBJECT_VIEW ? "ALTER VIEW" : "ALTER TABLE";
        if (s->cmd == ALTER_REFUSED)
            return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, s->cmd_loc,
                               "%s ... %s is not supported yet", what, s->refused);
        if (check_schema(an, s->relation) < 0)
            return -1;
        q->kind = QUERY_ALTER;
        q->tag = what;
        return 0;
    }
    case T_AlterCqStmt: {
        AlterCqStmt *s = (AlterCqStmt *)stmt;
        if (check_schema(an, s->name) < 0)
            return -1;
        q->kind = QUERY_ALTER_CQ;
        q->tag = "ALTER CONTINUOUS QUERY";
        q->ndrop = 1;
        q->drop_names = ARENA_ARRAY(an->a, const char *, 1);
        q->drop_names[0] = s->name->name;
        q->pause = s->pause;
        return 0;
    }
    case T_SubscribeStmt:
        return refuse(an, q, stmt->location, "SUBSCRIBE");
    default:
        return sl_error_at(an->err, ERRCODE_FEATURE_NOT_SUPPORTED, stmt->location,
                           "this statement is not supported yet");
    }
}
