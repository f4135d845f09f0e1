/*
 * runtime_int.h -- what the files of src/runtime/ share for running
 * ordinary (non-continuous) statements.  Not for use outside the module.
 *
 *   rt_prepared_query, rt_prepared_runtime   a Prepared's query and Runtime
 *   rt_ctx_hooks                  what a statement's ExCtx asks of the
 *                                 floors above: the system relations' scan,
 *                                 the system catalog, the functions' answers
 *   rt_fn_hooks                   the functions' answers alone (ExFnHooks:
 *                                 a continuous query's batch gets them too)
 *   rt_run_select                 a query's plan, rows to a sink (statement.c)
 *   rt_cursor_open, _open_held, _fetch, _close  the same a piece at a time
 *                                 (statement.c)
 *   rt_run_explain                EXPLAIN's lines as rows (statement.c)
 *   rt_run_modify                 INSERT / UPDATE / DELETE (statement.c)
 *   rt_run_create, rt_run_drop    DDL (ddl.c)
 *   rt_view_create, rt_view_dependents  views (view.c)
 *   rt_cq_create, rt_cq_stop, rt_cq_alter   continuous queries (cq_ddl.c)
 *   rt_csv_field                  one CSV field, quoted as COPY CSV quotes (copy.c)
 *   rt_append_can_defer, rt_append_new       deferred appends (append.c)
 *   rt_append_has_pool, rt_append_new_copy, rt_append_new_copy_part   a
 *                                 table COPY's parts and end run off the loop
 *   rt_copy_insert, rt_copy_sort_part   a table COPY's rows checked and
 *                                 written, a full part sorted (copy.c)
 *   rt_modify_lock, rt_modify_unlock   one table write at a time (runtime.c)
 *   rt_run_role, rt_check_query, rt_check_owner, rt_check_select, rt_owner,
 *   rt_cq_privileges, rt_acl_hooks   roles (roles.c)
 *   rt_cq_dependent, rt_cq_dependent_not_owned   queries that use a relation
 *                   (cq_ddl.c)
 *   rt_role_is_superuser, rt_files_resolve, rt_files_check_fd
 *                   what a relation's owner may reach on the host (hostaccess.c)
 *   rt_backup_begin, rt_backup_copy, rt_backup_end, rt_backup_clean
 *                   BACKUP TO (backup.c)
 *   rt_copy_out_new, ..._free   COPY TO a piece at a time (copy.c)
 */
#ifndef SLUICE_RUNTIME_INT_H
#define SLUICE_RUNTIME_INT_H

#include "sluice/acl.h"
#include "sluice/catalog.h"
#include "sluice/exec.h"
#include "sluice/runtime.h"
#include "sluice/state.h"

/* Sets in cx, a client statement's context of rt, what its scans and
 * functions ask of the floors above (runtime.c): the system relations'
 * scan and the Syscat it and the catalog functions read (NULL before
 * rt_init), and rt_fn_hooks' answers. */
void        rt_ctx_hooks(Runtime *rt, ExCtx *cx);
/* The answers of the functions that ask the runtime (expr.h's ExFnHooks):
 * the privilege functions over rt's catalog (roles.c's rt_acl_hooks; rt
 * NULL: 55000), the stream counters from rt's ingesters (ingest.c). */
ExFnHooks   rt_fn_hooks(Runtime *rt);
/* The analyzed statement of a prepared one, and the Runtime it was
 * prepared in (rt_prepare). */
const Query *rt_prepared_query(const Prepared *p);
Runtime     *rt_prepared_runtime(const Prepared *p);

/* Deferred appends (append.c): may a statement of rt leave its append to
 * the caller now (group commit mode, a pool to run on)?  And one of
 * chunks (sl_malloc'ed, taken over) into rel. */
bool      rt_append_can_defer(const Runtime *rt);
/* Is there a pool at all (a COPY's parts go there in either mode)? */
bool      rt_append_can_run(const Runtime *rt);
RtAppend *rt_append_new(Runtime *rt, const CatRelation *rel, StrBuf *chunks, int nchunks);
/* And (append.c) is there a pool to run one on; a COPY FROM into a table
 * whose input ended well (taken over: rt_copy_insert runs on the pool, and
 * the copy is freed after). */
bool      rt_append_has_pool(const Runtime *rt);
RtAppend *rt_append_new_copy(Runtime *rt, RtCopy *cp);
/* A table COPY's full part, sorted (rt_copy_sort_part) on the statements'
 * pool while the session reads no input; the copy stays the caller's. */
RtAppend *rt_append_new_copy_part(Runtime *rt, RtCopy *cp);
/* The rows of a COPY FROM into a table: its sorted runs merged, their
 * keys checked and the rows written in one atomic step under the modify
 * lock (copy.c; on a worker thread). */
int       rt_copy_insert(RtCopy *cp, uint64_t *rows, SlError *err);
/* A table COPY's decoded rows to its sort (a full part: sorted and written
 * to a run file); copy.c, on a worker thread. */
int       rt_copy_sort_part(RtCopy *cp, SlError *err);
/* The lock that makes INSERT / UPDATE / DELETE and COPY FROM into tables
 * one at a time (runtime.c): waits (cancellable, 57014), never on the loop. */
int       rt_modify_lock(Runtime *rt, SlError *err);
void      rt_modify_unlock(Runtime *rt);

int rt_run_select(Runtime *rt, const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows);
/* A SELECT run a piece at a time (statement.c).  rt_cursor_fetch sends rows
 * until the end (returns 0), until maxrows rows went (maxrows > 0) or the
 * sink asked to pause (returns 1: call again for the rest), or -1 with
 * cx->err set; *rows gets the rows this call sent.  rt_cursor_close may
 * come at any point, also after a failed open. */
typedef struct RtCursor {
    ExOp        *op;            /* NULL: the rows come from held */
    Arena        scratch;       /* the batch being handed out, compacted */
    const Batch *pend;          /* that batch; rows before pend_off went */
    uint32_t     pend_off;
    bool         done;          /* the operators have no more batches */
    bool         open;          /* scratch is initialized */
    const Batch **held;         /* rt_cursor_hold: the rows, made already */
    int          nheld, capheld, next_held;
} RtCursor;
int  rt_cursor_open(Runtime *rt, const Query *q, ExCtx *cx, RtCursor *cur);
/* A cursor over rows made already (EXPLAIN's, RETURNING's): rt_cursor_hold
 * is a ResultSink's batch_cb whose ctx is the cursor, keeping each batch
 * (its values must outlive the cursor) for rt_cursor_fetch. */
void rt_cursor_open_held(RtCursor *cur, ResultSink *hold);
int  rt_cursor_fetch(RtCursor *cur, ExCtx *cx, ResultSink *sink, uint64_t maxrows,
                     uint64_t *rows);
void rt_cursor_close(RtCursor *cur);
/* EXPLAIN [CONTINUOUS QUERY]; cq: the registry the query's plan is read
 * from (NULL: none running). */
int rt_run_explain(CqRuntime *cq, const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows);
int rt_run_modify(const Query *q, ExCtx *cx, ResultSink *sink, uint64_t *rows);
int rt_run_create(Runtime *rt, const Query *q, SlError *err);
/* Whether rel's connector option is `name` (ingest.c). */
bool rt_connector_is(const CatRelation *rel, const char *name);
int rt_run_drop(Runtime *rt, const Query *q, SlError *err);
/* alter.c: ALTER TABLE / VIEW (the statement's parse tree). */
int rt_run_alter(Runtime *rt, const AlterTableStmt *s, SlError *err);
/* "table", "stream", "sink", "continuous query", "view" (ddl.c). */
const char *rt_relkind_noun(RelKind kind);
/* view.c: CREATE [OR REPLACE] VIEW; the views (other than rel) whose
 * queries read rel, directly or through other views (a list of const
 * CatRelation *, in a), all found before any is dropped: a view read
 * through another stops analyzing once that one is gone. */
int rt_view_create(Runtime *rt, const Query *q, SlError *err);
/* 2BP01 when q, a CREATE OR REPLACE CONTINUOUS QUERY, changes the result
 * columns of a query that a view reads. */
int rt_view_check_replace(Runtime *rt, const Query *q, SlError *err);
List *rt_view_dependents(Runtime *rt, const CatRelation *rel, Arena *a);
/* runtime.c: the first statement of sql parsed and analyzed in a with rt's
 * catalog (no parameters). */
int rt_analyze_text(const Runtime *rt, Arena *a, const char *sql, Query **q, SlError *err);
/* Continuous queries' statements on registry cq (the statement's
 * Runtime.cq); NULL or a closing registry: not running. */
int rt_cq_create(CqRuntime *cq, const Query *q, SlError *err);
int rt_cq_stop(CqRuntime *cq, const char *name, SlError *err);
int rt_cq_alter(CqRuntime *cq, const char *name, bool pause, SlError *err);
int rt_cq_check_drop(CqRuntime *cq, const CatRelation *rel, const char *const *dropped,
                     int ndropped, SlError *err);
int rt_cq_explain(CqRuntime *cq, const char *name, Arena *a, List **lines, SlError *err);
/* Leaves a WARNING for the client of the statement running on this thread. */
void rt_warn(const char *sqlstate, const char *fmt, ...) SL_PRINTF(2, 3);
/* A running continuous query that reads or writes rel, or NULL. */
const char *rt_cq_dependent(CqRuntime *cq, const CatRelation *rel);
/* One of those whose owner is not role `owner`, or NULL. */
const char *rt_cq_dependent_not_owned(CqRuntime *cq, const CatRelation *rel, uint32_t owner);
void rt_csv_field(StrBuf *o, const char *s, size_t n, char delimiter, const char *null_string);

/* roles.c: CREATE / ALTER / DROP ROLE, GRANT, REVOKE; the privileges a
 * statement needs (42501 "permission denied for table x"); ownership of a
 * relation for DROP and ALTER (42501 "must be owner of ..."); the owner of
 * a relation made now (the current role, else the bootstrap superuser). */
int      rt_run_role(Runtime *rt, const Query *q, SlError *err);
int      rt_check_query(Runtime *rt, const Query *q, SlError *err);
int      rt_check_owner(Catalog *cat, const CatRelation *rel, SlError *err);
/* A continuous query's owner may still read every relation it reads and
 * write INTO its target and its late_rows stream (cq_check_fn, before each
 * batch; arg: the Catalog of the registry's Runtime): 42501 naming the
 * first it may not. */
int      rt_cq_privileges(void *arg, const CatRelation *query, const CatRelation *into,
                          const CatRelation *late, bool (*reads)(void *plan, uint32_t oid),
                          void *plan, SlError *err);
/* SELECT on rel in cat (SUBSCRIBE reads a query's result): 42501 without
 * it. */
int      rt_check_select(Catalog *cat, const CatRelation *rel, SlError *err);
uint32_t rt_owner(void);
/* The privilege functions' answers (acl.h), called with the Catalog they
 * read as their argument (ExFnHooks.acl_arg; NULL: 55000). */
extern const ExAclHooks rt_acl_hooks;

/* hostaccess.c, each over rt's files root, data directory and catalog (a
 * NULL rt refuses every path).  Whether role oid is a superuser now (any
 * thread).  A files connector's or sink's directory `path` resolved into
 * out (PATH_MAX bytes; *exists: whether all of it exists) and checked for
 * the owner: 42501 for "..", the data directory, or a place outside the
 * files root for a non-superuser; `what` names it in the message ("files
 * sink path").  And an opened file checked by where it really is. */
bool rt_role_is_superuser(const Runtime *rt, uint32_t oid);
int  rt_files_resolve(const Runtime *rt, const char *path, const char *what, uint32_t owner,
                      char *out, bool *exists, SlError *err);
int  rt_files_check_fd(const Runtime *rt, int fd, const char *what, const char *shown,
                       uint32_t owner, SlError *err);

/* BACKUP TO (backup.c).  rt_backup_begin, on the loop: the checks (42501
 * for a role that is not a superuser, 42602, 58P02, 55006, the files
 * checks' 42501) and the snapshot into <data_dir>/backup.tmp; 0 with *out,
 * or -1 with err and nothing left.  rt_backup_copy, on a worker: the copy
 * into the target, synced, and the staging removed; 0, or -1 with err
 * (57014 on cancel) and no half-written target left.  rt_backup_end, on
 * the loop after either: frees b, allows the next BACKUP.  rt_backup_clean,
 * at start-up: removes a staging directory a crash left. */
typedef struct RtBackup RtBackup;
int  rt_backup_begin(Runtime *rt, const char *target, RtBackup **out, SlError *err);
int  rt_backup_copy(RtBackup *b, SlError *err);
void rt_backup_end(RtBackup *b);
void rt_backup_clean(Runtime *rt);

/* COPY ... TO STDOUT a piece at a time (copy.c), for an RtRun on a worker
 * (runtime.c): rt_copy_out_new makes, in a, the SELECT that gives the rows
 * (rt_copy_out_query) and the sink that turns them into lines, handed to
 * cb (rt_copy_out_set_cb; cb returns <0 to stop, >0 to ask the run to
 * pause after the batch); rt_copy_out_header sends the HEADER line once;
 * rt_copy_out_progress: the relation's oid (0 for a query), the bytes and
 * rows sent so far; rt_copy_out_free frees its buffers.  NULL with err
 * (55000) when there is no store to read. */
typedef struct CopyOut CopyOut;
CopyOut     *rt_copy_out_new(Runtime *rt, const Query *q, Arena *a, SlError *err);
void         rt_copy_out_set_cb(CopyOut *co, rt_copy_out_cb cb, void *ctx);
const Query *rt_copy_out_query(const CopyOut *co);
ResultSink  *rt_copy_out_sink(CopyOut *co);
int          rt_copy_out_header(CopyOut *co);
void         rt_copy_out_progress(const CopyOut *co, uint32_t *relid, int64_t *bytes,
                                  int64_t *rows);
void         rt_copy_out_free(CopyOut *co);

#endif /* SLUICE_RUNTIME_INT_H */
