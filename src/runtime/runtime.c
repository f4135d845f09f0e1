/*
 * runtime.c -- what the server hands statements to (see runtime.h).
 *
 *   rt_init, rt_shutdown   statements started on a Runtime's catalog and state
 *                          store; the system catalog made with them
 *                          (syscat_create, with the SysHooks the runtime
 *                          answers, into rt->syscat)
 *   rt_ctx_hooks  a statement's ExCtx: the system relations' scan, the
 *                 system catalog its catalog functions read, and the
 *                 answers of the privilege and stream functions
 *   rt_fn_hooks   those answers alone (continuous queries' batches too)
 *   rt_session_set, rt_session_current, rt_session_lister, rt_session_foreach,
 *   rt_setting_set
 *                 the server's sessions and main's settings, handed to the
 *                 system catalog of the Runtime they are given
 *   rt_parse      query string -> RawStmts (the sql module's parser)
 *   rt_prepare    RawStmt -> Prepared (analysis into a Query and its plan)
 *   rt_describe   result columns and parameter types
 *   rt_returns_rows  RowDescription (even of no columns) or NoData
 *   rt_execute    parameters in, rows out to a ResultSink, the tag
 *   rt_subscribe_name  the query a prepared SUBSCRIBE names
 *   rt_subscribe_copy  is it COPY (SUBSCRIBE ...) TO STDOUT
 *   rt_statement  the parse tree of a statement the server runs itself
 *                 (transaction statements, DEALLOCATE)
 *   rt_write_command  what a read-only transaction refuses
 *   rt_block_refused  what a transaction block refuses (25001: DDL, roles)
 *   rt_run_set_xact   the transaction block a run's writes go to
 *   rt_setting    what a SET / RESET / SHOW asks of the session
 *   rt_on_worker, rt_runnable, rt_run_begin, rt_run_exec, rt_run_fetch,
 *   rt_run_set_copy_out, rt_run_copy_progress,
 *   rt_run_end    a statement run on a worker thread, in three steps; the
 *                 run (rt_run_fetch) may come a piece at a time, a SELECT's
 *                 operator tree kept in the RtRun between pieces and closed
 *                 on the worker by the piece that ends it (or fails)
 *   rt_run_open, rt_run_close  whether a run dropped before its end still
 *                 holds its operators, and their close (on a worker: it
 *                 may block)
 *                 (INSERT / UPDATE / DELETE of tables one at a time: the
 *                 wait for the lock ends at a cancel or timeout)
 *
 * Each RtRun owns a memory account (memacct.h) with the session's
 * statement_mem, entered on the thread while a piece runs: its arenas and
 * the operators' are charged to it, and an error the budget caused is
 * reported as 53200, whatever noticed it first.
 *
 * A Prepared keeps the Runtime it was prepared in (rt_prepare), and
 * everything that runs it (rt_execute, rt_run_*, rt_copy_*) reaches the
 * catalog, the state store and the modify lock through it, never through
 * a global.  This file keeps no file-level state: what is not handed a
 * Prepared gets its Runtime as a parameter or an arg (the SysHooks, the
 * sessions and settings, a client statement's ExCtx.open_scan_arg);
 * docs/architecture.md, "The Runtime context".
 *
 * Statements that read no relation (SELECT 1, SET, BEGIN) work without a
 * catalog; the others fail with 55000.  A prepared
 * statement whose relations were dropped or recreated is analyzed again
 * when it runs.
 *
 * Parameters in text format go through the types' input functions, as a
 * cast from text does; binary format through their recv functions
 * (value_recv_binary, types/binary.c).  rt_execute works in
 * an arena of its own, destroyed before it returns.
 */
#include "runtime_int.h"
#include "source.h"
#include "sluice/cq.h"
#include "sluice/ast.h"
#include "sluice/expr.h"
#include "sluice/ingest.h"
#include "sql/parser.h"
#include "sluice/memacct.h"
#include "sluice/settings.h"
#include "sluice/vrel.h"

#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

struct Prepared {
    Query         *q;
    int            ncols;
    ColumnDesc    *cols;
    const char    *sql;
    const RawStmt *raw;
    bool           snapshot;    /* SUBSCRIBE ... WITH (snapshot) */
    /* per relation of q->dep_names: the catalog entry it was analysed with
     * and that entry's definition text (a CREATE OR REPLACE keeps the oid,
     * not the entry) */
    const CatRelation **dep_rels;
    const char        **dep_sqls;
    Runtime           *rt;          /* where it was prepared, and runs */
};

/* What the system relations ask of the runtime (syscat.h). */
/* arg: the Runtime (rt_init). */
static int sys_check_select(void *arg, const CatRelation *rel, SlError *err)
{
    const Runtime *rt = arg;
    return rt_check_select(rt != NULL ? rt->cat : NULL, rel, err);
}

static struct CqRuntime *sys_cq_runtime(void *arg)
{
    const Runtime *rt = arg;
    return rt != NULL ? rt->cq : NULL;
}

static uint64_t sys_relation_bytes(void *arg, const CatRelation *rel)
{
    const Runtime *rt = arg;
    if (rt == NULL || rt->st == NULL)
        return 0;
    return rel != NULL ? rel_disk_bytes(rt->st, rel) : state_disk_bytes(rt->st);
}

static const SysHooks sys_hooks = {sys_check_select, sys_cq_runtime, sys_relation_bytes};

int rt_init(Runtime *rt)
{
    rt->syscat = syscat_create(rt->cat, &sys_hooks, rt);
    return 0;
}

void rt_shutdown(Runtime *rt)
{
    syscat_destroy(rt->syscat);
    rt->syscat = NULL;
}

ExFnHooks rt_fn_hooks(Runtime *rt)
{
    Catalog *cat = rt != NULL ? rt->cat : NULL;
    return (ExFnHooks){.acl = cat != NULL ? &rt_acl_hooks : NULL, .acl_arg = cat,
                       .stream_stats = ingest_stats_by_name, .stream_arg = rt};
}

void rt_ctx_hooks(Runtime *rt, ExCtx *cx)
{
    cx->system_scan = vrel_open;
    cx->system_arg = rt != NULL ? rt->syscat : NULL;
    cx->hooks = rt_fn_hooks(rt);
}

/* The system catalog of rt (NULL without rt, before rt_init and after
 * rt_shutdown). */
static Syscat *syscat_of(const Runtime *rt)
{
    return rt != NULL ? rt->syscat : NULL;
}

/* The sessions and settings the server and main give rt's system catalog
 * (without one: ignored). */
void rt_session_set(Runtime *rt, const RtSession *s)
{
    if (syscat_of(rt) != NULL)
        syscat_session_set(syscat_of(rt), s);
}

const RtSession *rt_session_current(Runtime *rt)
{
    return syscat_session_current(syscat_of(rt));
}

void rt_session_lister(Runtime *rt, rt_session_list_fn list, void *arg)
{
    if (syscat_of(rt) != NULL)
        syscat_session_lister(syscat_of(rt), list, arg);
}

void rt_session_foreach(Runtime *rt, rt_session_emit_fn emit, void *emit_arg)
{
    if (syscat_of(rt) != NULL)
        syscat_session_foreach(syscat_of(rt), emit, emit_arg);
}

void rt_setting_set(Runtime *rt, const char *name, const char *value, const char *description)
{
    if (syscat_of(rt) != NULL)
        syscat_setting_set(syscat_of(rt), name, value, description);
}

const Query *rt_prepared_query(const Prepared *p)
{
    return p->q;
}

Runtime *rt_prepared_runtime(const Prepared *p)
{
    return p->rt;
}

/* rt's catalog and state store, NULL without them. */
static Catalog *cat_of(const Runtime *rt)
{
    return rt != NULL ? rt->cat : NULL;
}

static StateStore *st_of(const Runtime *rt)
{
    return rt != NULL ? rt->st : NULL;
}

/* rt's registry of continuous queries, NULL without one (rt_cq_* and
 * cq_layouts take NULL: no query is running). */
static CqRuntime *cq_of(const Runtime *rt)
{
    return rt != NULL ? rt->cq : NULL;
}

static const CatRelation *lookup_cb(void *ctx, const char *name)
{
    return cat_lookup(ctx, name);
}

static const CatRelation *lookup_system_cb(void *system_ctx, const char *schema,
                                           const char *name)
{
    return vrel_lookup(system_ctx, schema, name);
}

int rt_parse(Arena *a, const char *sql, size_t len, List **stmts, SlError *err)
{
    if (len > (size_t)INT_MAX / 2)
        return sl_error(err, ERRCODE_PROGRAM_LIMIT_EXCEEDED, "query string is too long");
    return sql_parse(a, sql, (int)len, stmts, err);
}

static int analyze(const Runtime *rt, Arena *a, const char *sql, const RawStmt *raw,
                   const SlType *param_types, int nparam_types, Query **q, SlError *err)
{
    Catalog *c = cat_of(rt);
    SqlCatalog cat = {c ? lookup_cb : NULL, c, c ? lookup_system_cb : NULL,
                      rt != NULL ? rt->syscat : NULL};
    return sql_analyze_with(a, &cat, sql, raw, param_types, nparam_types, q, err);
}

int rt_analyze_text(const Runtime *rt, Arena *a, const char *sql, Query **q, SlError *err)
{
    List *stmts = NULL;
    if (rt_parse(a, sql, strlen(sql), &stmts, err) < 0)
        return -1;
    if (list_len(stmts) < 1)
        return sl_error(err, ERRCODE_SYNTAX_ERROR, "no statement to analyze");
    return analyze(rt, a, sql, list_nth(stmts, 0), NULL, 0, q, err);
}

/* The SubscribeStmt of a prepared SUBSCRIBE or COPY (SUBSCRIBE ...), or
 * NULL. */
static const SubscribeStmt *subscribe_stmt(const Prepared *p)
{
    if (p == NULL || p->raw == NULL)
        return NULL;
    if (IS_A(p->raw->stmt, CopyStmt))
        return ((const CopyStmt *)p->raw->stmt)->subscribe;
    if (IS_A(p->raw->stmt, SubscribeStmt))
        return (const SubscribeStmt *)p->raw->stmt;
    return NULL;
}

/* SUBSCRIBE's options: WITH (snapshot [= true | false]). */
static int subscribe_options(const SubscribeStmt *s, bool *snapshot, SlError *err)
{
    *snapshot = false;
    for (int i = 0; i < list_len(s->options); i++) {
        const DefElem *d = list_nth(s->options, i);
        const A_Const *c = (const A_Const *)d->arg;
        if (strcmp(d->name, "snapshot") != 0)
            return sl_error_at(err, ERRCODE_SYNTAX_ERROR, d->hdr.location,
                               "unrecognized SUBSCRIBE option \"%s\"", d->name);
        if (c == NULL)
            *snapshot = true;
        else if (IS_A(c, A_Const) && c->kind == CONST_BOOL)
            *snapshot = c->bval;
        else if (IS_A(c, A_Const) && c->kind == CONST_STRING &&
                 (strcmp(c->text, "true") == 0 || strcmp(c->text, "false") == 0))
            *snapshot = strcmp(c->text, "true") == 0;
        else
            return sl_error_at(err, ERRCODE_INVALID_PARAMETER_VALUE, d->hdr.location,
                               "snapshot must be true or false");
    }
    return 0;
}

bool rt_subscribe_snapshot(const Prepared *p)
{
    return p->snapshot;
}

int rt_prepare(Runtime *rt, Arena *a, const char *sql, const RawStmt *raw,
               const SlType *param_types, int nparam_types, Prepared **out, SlError *err)
{
    Query *q;
    Catalog *cat = cat_of(rt);
    /* The analysis and its plan are charged to an account of their own,
     * with statement_mem and the server's max_memory, for as long as the
     * prepared statement lives (its arena holds the account): a plan that
     * grows past either (a join of thousands of FROM items) ends with
     * 53200 (the analyzer checks as it builds a FROM list), and the
     * statements prepared at once cannot hold more than max_memory. */
    SlMemAccount *acct = sl_mem_account_new(settings_statement_mem(settings_current()));
    arena_set_account(a, acct);
    sl_mem_account_unref(acct);         /* the arena's reference keeps it */
    int rc = analyze(rt, a, sql, raw, param_types, nparam_types, &q, err);
    if (rc == 0 && sl_mem_exceeded(acct) != SL_MEM_OK)
        rc = ex_out_of_memory(err, acct);
    if (rc < 0)
        return -1;
    Prepared *p = ARENA_NEW(a, Prepared);
    p->rt = rt;
    p->q = q;
    p->sql = sql;
    p->raw = raw;
    p->dep_rels = ARENA_ARRAY(a, const CatRelation *, q->ndeps ? q->ndeps : 1);
    p->dep_sqls = ARENA_ARRAY(a, const char *, q->ndeps ? q->ndeps : 1);
    for (int i = 0; i < q->ndeps; i++) {
        const CatRelation *rel = cat ? cat_lookup(cat, q->dep_names[i]) : NULL;
        p->dep_rels[i] = rel;
        p->dep_sqls[i] = rel != NULL && rel->sql != NULL ? arena_strdup(a, rel->sql) : NULL;
    }
    p->ncols = q->ntargets;
    p->cols = ARENA_ARRAY(a, ColumnDesc, q->ntargets ? q->ntargets : 1);
    for (int i = 0; i < q->ntargets; i++) {
        p->cols[i].name = q->names[i];
        p->cols[i].type = q->types[i];
    }
    const char *sub = rt_subscribe_name(p);
    if (sub != NULL && (subscribe_options(subscribe_stmt(p), &p->snapshot,
                                          err) < 0 ||
                        rt_subscribe_columns(rt != NULL ? rt->cq : NULL, sub, a, &p->ncols, &p->cols,
                                             err) < 0))
        return -1;
    *out = p;
    return 0;
}

void rt_describe(const Prepared *p, int *ncols, const ColumnDesc **cols, int *nparams,
                 const SlType **param_types)
{
    *ncols = p->ncols;
    *cols = p->cols;
    *nparams = p->q->nparams;
    *param_types = p->q->param_types;
}

bool rt_returns_rows(const Prepared *p)
{
    if (rt_subscribe_copy(p))
        return false;   /* its rows go out as CopyData */
    return p->ncols > 0 || p->q->kind == QUERY_SELECT;
}

/* The query to run: the prepared one, or -- when a relation it uses was
 * dropped, recreated or replaced since -- the statement analyzed again
 * (PostgreSQL re-plans too, and refuses a result of another shape).  A
 * replaced entry (CREATE OR REPLACE CONTINUOUS QUERY: the same oid) is
 * another pointer, or -- its address reused -- another definition text:
 * the prepared plan's pointer to the former entry is never followed. */
static int current_query(const Prepared *p, Arena *work, const Query **out, SlError *err)
{
    const Query *q = p->q;
    Catalog *cat = cat_of(p->rt);
    bool stale = false;
    for (int i = 0; i < q->ndeps && !stale; i++) {
        const CatRelation *rel = cat ? cat_lookup(cat, q->dep_names[i]) : NULL;
        stale = rel == NULL || rel->oid != q->dep_oids[i] || rel != p->dep_rels[i] ||
                (rel->sql == NULL) != (p->dep_sqls[i] == NULL) ||
                (rel->sql != NULL && strcmp(rel->sql, p->dep_sqls[i]) != 0);
    }
    if (!stale) {
        *out = q;
        return 0;
    }
    Query *nq;
    if (analyze(p->rt, work, p->sql, p->raw, q->param_types, q->nparams, &nq, err) < 0)
        return -1;
    bool same = nq->ntargets == q->ntargets && nq->nparams == q->nparams;
    for (int i = 0; same && i < q->ntargets; i++)
        same = nq->types[i].id == q->types[i].id;
    if (!same)
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                        "cached plan must not change result type");
    *out = nq;
    return 0;
}

/* One parameter into a one-row vector of type t. */
static int bind_param(Arena *a, SlType t, const ParamValue *pv, Vector *v, int param,
                      SlError *err)
{
    vector_init(v, a, t, 1, true);
    if (pv->data == NULL) {
        v->nulls[0] = 1;
        return 0;
    }
    if (pv->format == 0 && pv->len >= 0)
        return value_parse_text(a, t, pv->data, (size_t)pv->len, v, 0, -1, err);
    return value_recv_binary(a, t, pv->data, pv->len, v, 0, param, err);
}

RtSetKind rt_setting(const Prepared *p, const char **name, const char **value, bool *local)
{
    const Query *q = p->q;
    if (q->kind != QUERY_UTILITY || q->setting == NULL)
        return RT_SET_NONE;
    *name = q->setting;
    *value = q->set_value;
    *local = q->set_local;
    return strcmp(q->tag, "SHOW") == 0 ? RT_SHOW : strcmp(q->tag, "RESET") == 0 ? RT_RESET
                                                                                 : RT_SET;
}

static ExSource *rt_open_connector_scan(ExCtx *cx, const Plan *scan);

struct RtRun {
    Runtime     *rt;            /* the Prepared's */
    Arena        work;          /* the statement's memory */
    SlMemAccount *mem;          /* its budget: statement_mem (memacct.h) */
    const Query *q;             /* the query to run (re-analyzed if stale) */
    Vector      *params;
    int          nparams;
    int64_t      now;
    int          npinned;
    const CatRelation **pinned; /* referenced until rt_run_end */
    uint32_t     role;          /* the session's role, for the worker thread */
    /* between rt_run_fetch calls: a SELECT's operators and its progress */
    ExCtx        cx;
    SlError      err;           /* cx.err: the operators keep pointing at it */
    RtCursor     cur;
    bool         open;          /* cur was opened */
    uint64_t     rows;          /* rows sent so far */
    char         tag[64];       /* EXPLAIN's, a DML's: set when its rows are made */
    RtBackup    *backup;        /* BACKUP's snapshot (backup.c), until rt_run_end */
    /* COPY TO: its lines' maker (made at the first fetch, in work) and
     * where the lines go */
    CopyOut     *copy;
    rt_copy_out_cb copy_cb;
    void        *copy_ctx;
};

/* INSERT / UPDATE / DELETE and COPY FROM into a table one at a time: a key
 * check and its write are not atomic against another session's.  Takes
 * rt->modify_mu, waiting in slices of 20 ms so that a cancel or
 * statement_timeout of the waiting statement ends its wait (57014) while
 * another one holds the lock for long.  0, or -1 with err set.  Never on
 * the loop thread: the holder may run for long. */
int rt_modify_lock(Runtime *rt, SlError *err)
{
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000 * 1000;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        if (pthread_mutex_timedlock(&rt->modify_mu, &ts) == 0)
            return 0;
        if (ex_check_interrupt(err) < 0)
            return -1;
    }
}

void rt_modify_unlock(Runtime *rt)
{
    pthread_mutex_unlock(&rt->modify_mu);
}

/* A COPY TO STDOUT whose rows need nothing of the loop's: not of a system
 * relation, not a query over one, not COPY (SUBSCRIBE). */
static bool copy_out_off_loop(const Prepared *p)
{
    const Query *q = p->q;
    if (q->kind != QUERY_COPY || !q->copy->to || rt_subscribe_copy(p) || q->on_loop)
        return false;
    if (q->copy->query != NULL)
        return !q->copy->query->on_loop;
    return q->copy->rel != NULL && q->copy->rel->kind != REL_SYSTEM;
}

bool rt_on_worker(const Prepared *p)
{
    if (copy_out_off_loop(p))
        return true;
    QueryKind k = p->q->kind;
    /* system relations and catalog functions read the loop's state */
    return (k == QUERY_SELECT || k == QUERY_EXPLAIN || k == QUERY_MODIFY ||
            k == QUERY_BACKUP) && !p->q->on_loop;
}

bool rt_runnable(const Prepared *p)
{
    if (copy_out_off_loop(p))
        return true;
    QueryKind k = p->q->kind;
    return k == QUERY_SELECT || k == QUERY_EXPLAIN || k == QUERY_MODIFY || k == QUERY_BACKUP;
}

int rt_run_begin(const Prepared *p, const ParamValue *params, int nparams, RtRun **out,
                 SlError *err)
{
    const Query *q = p->q;
    Runtime *rt = p->rt;
    if (nparams != q->nparams)
        return sl_error(err, ERRCODE_PROTOCOL_VIOLATION,
                        "bind message supplies %d parameters, but prepared statement requires %d",
                        nparams, q->nparams);
    if (q->kind == QUERY_MODIFY && (cat_of(rt) == NULL || st_of(rt) == NULL))
        return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "no catalog is open: the runtime was not initialized (rt_init)");
    RtRun *r = sl_calloc(1, sizeof(RtRun));
    r->rt = rt;
    arena_init(&r->work, 64 * 1024);
    r->mem = sl_mem_account_new(settings_statement_mem(settings_current()));
    arena_set_account(&r->work, r->mem);
    int rc = 0;
    r->nparams = nparams;
    r->params = ARENA_ARRAY(&r->work, Vector, nparams ? nparams : 1);
    for (int i = 0; i < nparams && rc == 0; i++)
        rc = bind_param(&r->work, q->param_types[i], &params[i], &r->params[i], i + 1, err);
    if (rc == 0)
        rc = current_query(p, &r->work, &q, err);
    /* privileges are checked when the statement runs (roles.c) */
    if (rc == 0)
        rc = rt_check_query(rt, q, err);
    if (rc < 0) {
        arena_destroy(&r->work);
        sl_mem_account_unref(r->mem);
        sl_free(r);
        return -1;
    }
    if (rc == 0 && q->kind == QUERY_BACKUP)
        rc = rt_backup_begin(rt, q->backup_target, &r->backup, err);
    if (rc < 0) {
        arena_destroy(&r->work);
        sl_mem_account_unref(r->mem);
        sl_free(r);
        return -1;
    }
    r->q = q;
    r->role = rt_current_role();
    /* now() is the statement's start time in every operator, as PostgreSQL's
     * transaction time is outside a block (inside one too, here: sluice
     * differs there, docs/sql-reference.md "Transactions"). */
    r->now = ex_clock_now();
    r->cx = (ExCtx){.arena = &r->work, .err = &r->err, .st = st_of(rt), .endable_scans = true,
                    .params = r->params, .nparams = r->nparams, .now = r->now,
                    .open_scan = rt_open_connector_scan, .open_scan_arg = rt};
    rt_ctx_hooks(rt, &r->cx);
    r->pinned = ARENA_ARRAY(&r->work, const CatRelation *, q->ndeps ? q->ndeps : 1);
    for (int i = 0; i < q->ndeps && cat_of(rt) != NULL; i++) {
        const CatRelation *rel = cat_lookup(rt->cat, q->dep_names[i]);
        if (rel != NULL) {
            cat_relation_ref(rel);
            r->pinned[r->npinned++] = rel;
        }
    }
    *out = r;
    return 0;
}

/* One step of r on the calling thread: see rt_run_fetch.  Errors are left
 * in r->err. */
static int run_step(RtRun *r, ResultSink *sink, int64_t maxrows, uint64_t *sent, char *tag,
                    size_t tagsize)
{
    const Query *q = r->q;
    ExCtx *cx = &r->cx;
    uint64_t rows = 0;
    int rc;
    *sent = 0;
    switch (q->kind) {
    case QUERY_SELECT:
        if (!r->open) {
            r->open = true;
            if (rt_cursor_open(r->rt, q, cx, &r->cur) < 0)
                return -1;
        }
        rc = rt_cursor_fetch(&r->cur, cx, sink, maxrows > 0 ? (uint64_t)maxrows : 0, sent);
        r->rows += *sent;
        if (rc == 0)
            snprintf(tag, tagsize, "SELECT %llu", (unsigned long long)r->rows);
        return rc;
    case QUERY_COPY:
        /* COPY TO: the SELECT's rows become lines, which go to copy_cb;
         * nothing goes to sink */
        if (!r->open) {
            if (r->copy_cb == NULL)
                return sl_error(cx->err, ERRCODE_INTERNAL_ERROR,
                                "COPY TO run without rt_run_set_copy_out");
            r->copy = rt_copy_out_new(r->rt, q, &r->work, cx->err);
            if (r->copy == NULL)
                return -1;
            rt_copy_out_set_cb(r->copy, r->copy_cb, r->copy_ctx);
            if (rt_copy_out_header(r->copy) < 0)
                return -1;
            r->open = true;
            if (rt_cursor_open(r->rt, rt_copy_out_query(r->copy), cx, &r->cur) < 0)
                return -1;
        }
        rc = rt_cursor_fetch(&r->cur, cx, rt_copy_out_sink(r->copy), 0, sent);
        if (rc == 0) {
            uint32_t relid;
            int64_t bytes, lines;
            rt_copy_out_progress(r->copy, &relid, &bytes, &lines);
            snprintf(tag, tagsize, "COPY %lld", (long long)lines);
        }
        return rc;
    case QUERY_BACKUP:
    case QUERY_EXPLAIN:
    case QUERY_MODIFY:
        /* the rows are made at once (EXPLAIN's lines, RETURNING's rows
         * after the commit) and handed out as a SELECT's are */
        if (!r->open) {
            r->open = true;
            ResultSink hold;
            rt_cursor_open_held(&r->cur, &hold);
            if (q->kind == QUERY_BACKUP) {
                /* no rows: the copy, then the tag */
                rc = rt_backup_copy(r->backup, cx->err);
                snprintf(r->tag, sizeof(r->tag), "BACKUP");
            } else if (q->kind == QUERY_EXPLAIN) {
                rc = rt_run_explain(cq_of(r->rt), q, cx, &hold, &rows);
                snprintf(r->tag, sizeof(r->tag), "EXPLAIN");
            } else {
                /* A table's key checks and writes go one statement at a
                 * time; an append to a stream needs no check, and
                 * concurrent appends may share an fsync (group commit,
                 * relstore.h). */
                bool serial = q->modify->rel->kind != REL_STREAM;
                if (serial && rt_modify_lock(r->rt, cx->err) < 0)
                    return -1;
                rc = rt_run_modify(q, cx, &hold, &rows);
                if (serial)
                    rt_modify_unlock(r->rt);
                if (q->modify->kind == MODIFY_INSERT)
                    snprintf(r->tag, sizeof(r->tag), "INSERT 0 %llu", (unsigned long long)rows);
                else
                    snprintf(r->tag, sizeof(r->tag), "%s %llu", q->tag,
                             (unsigned long long)rows);
            }
            if (rc < 0)
                return -1;
        }
        rc = rt_cursor_fetch(&r->cur, cx, sink, maxrows > 0 ? (uint64_t)maxrows : 0, sent);
        if (rc == 0)
            snprintf(tag, tagsize, "%s", r->tag);
        return rc;
    default:
        rc = sl_error(cx->err, ERRCODE_INTERNAL_ERROR, "unexpected statement kind %d", q->kind);
        break;
    }
    *sent = rows;
    return rc < 0 ? -1 : 0;
}

/* Closes r's operators, once. */
static void run_close(RtRun *r)
{
    if (r->open) {
        r->open = false;
        rt_cursor_close(&r->cur);
    }
}

int rt_run_fetch(RtRun *r, ResultSink *sink, int64_t maxrows, uint64_t *sent, char *tag,
                 size_t tagsize, SlError *err)
{
    rt_set_role(r->role);
    /* the session's statement_mem, read on the thread that runs it */
    sl_mem_account_set_limit(r->mem, settings_statement_mem(settings_current()));
    SlMemAccount *old_mem = sl_mem_account_enter(r->mem);
    int rc = run_step(r, sink, maxrows, sent, tag, tagsize);
    /* an error the budget caused says so, whatever noticed it first */
    if (rc < 0 && sl_mem_exceeded(r->mem) != SL_MEM_OK &&
        strcmp(r->err.sqlstate, ERRCODE_OUT_OF_MEMORY) != 0) {
        sl_error_clear(&r->err);
        ex_out_of_memory(&r->err, r->mem);
    }
    /* the sink's own error (it records into err) comes first */
    if (rc < 0 && !sl_error_set(err))
        sl_error_move(err, &r->err);
    /* At the end or an error the operators close here, on the worker: a
     * Kafka scan's close joins its poller and waits for its consumer. */
    if (rc <= 0)
        run_close(r);
    sl_error_clear(&r->err);
    sl_mem_account_enter(old_mem);
    return rc;
}

void rt_run_set_copy_out(RtRun *r, rt_copy_out_cb cb, void *ctx)
{
    r->copy_cb = cb;
    r->copy_ctx = ctx;
}

void rt_run_copy_progress(const RtRun *r, uint32_t *relid, int64_t *bytes, int64_t *rows)
{
    *relid = 0;
    *bytes = *rows = 0;
    if (r != NULL && r->copy != NULL)
        rt_copy_out_progress(r->copy, relid, bytes, rows);
    else if (r != NULL && r->q->kind == QUERY_COPY && r->q->copy->rel != NULL)
        *relid = r->q->copy->rel->oid;
}

bool rt_run_open(const RtRun *r)
{
    /* one that reads the loop's state closes there, as it ran there */
    return r != NULL && r->open && !r->q->on_loop;
}

void rt_run_close(RtRun *r)
{
    SlMemAccount *old_mem = sl_mem_account_enter(r->mem);
    run_close(r);
    sl_error_clear(&r->err);
    sl_mem_account_enter(old_mem);
}

int rt_run_exec(RtRun *r, ResultSink *sink, char *tag, size_t tagsize, SlError *err)
{
    uint64_t sent;
    int rc;
    while ((rc = rt_run_fetch(r, sink, 0, &sent, tag, tagsize, err)) > 0)
        ;
    return rc;
}

void rt_run_end(RtRun *r)
{
    if (r == NULL)
        return;
    run_close(r);
    rt_backup_end(r->backup);       /* on the loop, as its begin */
    rt_copy_out_free(r->copy);
    sl_error_clear(&r->err);
    for (int i = 0; i < r->npinned; i++)
        cat_relation_unref(r->pinned[i]);
    arena_destroy(&r->work);
    sl_mem_account_unref(r->mem);
    sl_free(r);
}

/* Streams fed by Kafka are read from the topics (source.c), the result
 * tables of continuous queries through cq_layout_scan; every other
 * relation gets the default scan (NULL, no error). */
static ExSource *rt_open_connector_scan(ExCtx *cx, const Plan *scan)
{
    const CatRelation *rel = scan->u.scan.rel;
    /* A continuous query's result table: only rows written for the
     * definition this statement was analysed with (cq_layout.c). */
    if (rel->kind == REL_QUERY)
        return cq_layout_scan(cq_layouts(cq_of(cx->open_scan_arg)), cx->st, rel, cx->err);
    if (rel->kind != REL_STREAM || !rt_connector_is(rel, "kafka"))
        return NULL;
    return source_scan_kafka(cx->open_scan_arg, cx->st, rel, cx->err);
}

static _Thread_local char  g_warning[512];
static _Thread_local const char *g_warning_state;

void rt_warn(const char *sqlstate, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_warning, sizeof(g_warning), fmt, ap);
    va_end(ap);
    g_warning_state = sqlstate;
}

const char *rt_take_warning(const char **sqlstate)
{
    if (g_warning_state == NULL)
        return NULL;
    *sqlstate = g_warning_state;
    g_warning_state = NULL;
    return g_warning;
}

int rt_execute(const Prepared *p, const ParamValue *params, int nparams, ResultSink *sink,
               char *tag, size_t tagsize, SlError *err)
{
    const Query *q = p->q;
    /* SELECT, EXPLAIN and DML: the three steps a worker runs, here in a row
     * (a statement that must stay on the loop, Query.on_loop, comes here) */
    if (q->kind == QUERY_SELECT || q->kind == QUERY_EXPLAIN || q->kind == QUERY_MODIFY) {
        RtRun *r;
        if (rt_run_begin(p, params, nparams, &r, err) < 0)
            return -1;
        int rc = rt_run_exec(r, sink, tag, tagsize, err);
        rt_run_end(r);
        return rc;
    }
    if (nparams != q->nparams)
        return sl_error(err, ERRCODE_PROTOCOL_VIOLATION,
                        "bind message supplies %d parameters, but prepared statement requires %d",
                        nparams, q->nparams);
    switch (q->kind) {
    case QUERY_UTILITY:
        snprintf(tag, tagsize, "%s", q->tag);
        return 0;
    case QUERY_REFUSED:
        return sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED, "%s", q->refusal);
    case QUERY_COPY:
        return sl_error(err, ERRCODE_INTERNAL_ERROR,
                        "COPY runs through rt_copy_begin / rt_copy_out, not rt_execute");
    case QUERY_CREATE:
    case QUERY_DROP:
    case QUERY_ALTER_CQ:
    case QUERY_ALTER:
    case QUERY_ROLE:
        if (cat_of(p->rt) == NULL || st_of(p->rt) == NULL)
            return sl_error(err, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                            "no catalog is open: the runtime was not initialized (rt_init)");
        break;
    default:
        break;
    }
    /* privileges: a continuous query's sources and target (roles.c) */
    if (rt_check_query(p->rt, q, err) < 0)
        return -1;
    int rc;
    switch (q->kind) {
    case QUERY_CREATE:
        rc = rt_run_create(p->rt, q, err);
        break;
    case QUERY_DROP:
        rc = rt_run_drop(p->rt, q, err);
        break;
    case QUERY_ALTER_CQ:
        rc = rt_cq_alter(cq_of(p->rt), q->drop_names[0], q->pause, err);
        break;
    case QUERY_ALTER:
        rc = rt_run_alter(p->rt, (const AlterTableStmt *)q->ast, err);
        break;
    case QUERY_ROLE:
        rc = rt_run_role(p->rt, q, err);
        break;
    default:
        rc = sl_error(err, ERRCODE_INTERNAL_ERROR, "unexpected statement kind %d", q->kind);
        break;
    }
    if (rc == 0)
        snprintf(tag, tagsize, "%s", q->tag);
    return rc < 0 ? -1 : 0;
}

const Node *rt_statement(const Prepared *p)
{
    return p != NULL && p->raw != NULL ? p->raw->stmt : NULL;
}

const char *rt_write_command(const Prepared *p)
{
    const Query *q = p->q;
    switch (q->kind) {
    case QUERY_MODIFY:
    case QUERY_CREATE:
    case QUERY_DROP:
    case QUERY_ALTER_CQ:
    case QUERY_ALTER:
    case QUERY_ROLE:
        return q->tag;
    case QUERY_COPY:
        return q->copy->to ? NULL : "COPY FROM";
    default:
        return NULL;
    }
}

const char *rt_block_refused(const Prepared *p)
{
    switch (p->q->kind) {
    case QUERY_BACKUP:
    case QUERY_CREATE:
    case QUERY_DROP:
    case QUERY_ALTER_CQ:
    case QUERY_ALTER:
    case QUERY_ROLE:
        return p->q->tag;
    default:
        return NULL;
    }
}

void rt_run_set_xact(RtRun *r, struct StateTx *tx)
{
    r->cx.tx = tx;
}

const char *rt_subscribe_name(const Prepared *p)
{
    const SubscribeStmt *s = subscribe_stmt(p);
    return s != NULL ? s->name->name : NULL;
}

bool rt_subscribe_copy(const Prepared *p)
{
    return p != NULL && p->raw != NULL && IS_A(p->raw->stmt, CopyStmt) &&
           ((const CopyStmt *)p->raw->stmt)->subscribe != NULL;
}
