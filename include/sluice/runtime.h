/*
 * runtime.h -- what the server hands statements to.
 *
 * The server module (src/server/) never reaches into sql/, plan/ or exec/:
 * it parses a query string into statements with rt_parse(), prepares each
 * with rt_prepare(), asks rt_describe() for the shape of its result, and runs
 * it with rt_execute(), which streams the result to a ResultSink.
 *
 * Lifetimes: everything rt_parse() and rt_prepare() return lives in the
 * arena the caller passes (the statement's or the prepared statement's).
 * rt_execute() allocates its working memory in an arena of its own and
 * frees it before returning; batches handed to the sink are valid only
 * during the callback.
 */
#ifndef SLUICE_RUNTIME_H
#define SLUICE_RUNTIME_H

#include <pthread.h>
#include <uv.h>

#include "sluice/arena.h"
#include "sluice/error.h"
#include "sluice/expr.h"
#include "sluice/list.h"
#include "sluice/pool.h"
#include "sluice/syscat.h"
#include "sluice/types.h"

typedef struct RawStmt RawStmt;
typedef struct Node Node;
typedef struct Prepared Prepared;
typedef struct Catalog Catalog;
typedef struct StateStore StateStore;

/* The server's context (docs/architecture.md, "The Runtime context"):
 * whatever lives as long as the server lives, made by main with
 * rt_create and closed with rt_destroy after the loop has stopped, and
 * passed down as an explicit parameter.  A lower floor's state is a struct
 * of that floor held here (CqRuntime, Syscat), so no lower file sees
 * Runtime.  Two Runtimes over two data directories may live in one
 * process (tests/unit/test_runtime_two.c).  The fields are set once while
 * the server starts, on the loop's thread, and only read after, except
 * where a field says otherwise. */
typedef struct Runtime Runtime;
typedef struct RuntimeOptions {
    int engine_workers;         /* threads of the engine's pool */
    int statement_workers;      /* threads of the statements' pool */
} RuntimeOptions;

struct Runtime {
    uv_loop_t          loop;        /* owns sockets, timers, catalog writes */
    Pool              *engine;      /* batches, ingestion, deferred appends */
    Pool              *statements;  /* client statements */
    Catalog           *cat;         /* opened by main (cat_open), closed after rt_destroy */
    StateStore        *st;          /* opened by main (state_open), likewise */
    int64_t            started_us;  /* wall clock at rt_create, microseconds */
    /* what roles may reach on the server host (hostaccess.c, roles.c) */
    struct {
        char *files_root;       /* --files-root resolved, or NULL: none */
        char *data_dir;         /* the data directory resolved, or NULL: unknown */
        bool  keep_md5;         /* md5 password hashes are made and kept */
    } host;
    /* makes INSERT, UPDATE, DELETE and COPY FROM into tables one at a
     * time (runtime.c's rt_modify_lock) */
    pthread_mutex_t    modify_mu;
    /* the streams' ingesters (ingest.c; ingest_init, ingest_close) */
    struct {
        struct Ingester *list;      /* the running ones, under mu */
        pthread_mutex_t  mu;        /* guards list and what readers see */
        bool             open;      /* between ingest_init and ingest_close */
    } ingest;
    /* who may set which librdkafka property and name which broker
     * (kafka.h; made by rt_host_init, handed to every Kafka source and
     * sink opened and to their checks) */
    struct KafkaPolicy *kafka;
    /* the HTTP pages (server/observe.c: http_pages_start, _close) */
    struct {
        struct HttpServer *http;            /* NULL: not listening */
        struct Pages      *pages;           /* the pages' context (server/pages.c) */
        void (*closed)(struct Runtime *rt); /* http_pages_close's cb */
    } observe;
    /* the running continuous queries: main sets it from rt_cq_init and
     * clears it when rt_cq_free frees the registry, after the pools have
     * stopped; statements, the system relations (SysHooks), SUBSCRIBE and
     * the HTTP pages read it */
    struct CqRuntime  *cq;
    /* the system relations' context (syscat.h): made by rt_init
     * (syscat_create), freed by rt_shutdown */
    struct Syscat     *syscat;
    /* a BACKUP holds its staging directory (backup.c; on the loop) */
    bool               backup_running;
};

/* A Runtime with its loop and its two pools; cat and st are main's to set.
 * Out of memory is fatal; never NULL. */
Runtime *rt_create(const RuntimeOptions *opts);
/* Closes the pools and the loop (after uv_run has ended) and frees rt;
 * the catalog and the state store are main's to close after. */
void     rt_destroy(Runtime *rt);

/* A parameter value as it came off the wire (Bind). */
typedef struct ParamValue {
    const char *data;   /* NULL for SQL NULL */
    int32_t     len;
    int16_t     format; /* 0 text, 1 binary */
} ParamValue;

/* A durable append a statement left to its caller (group commit). */
typedef struct RtAppend RtAppend;

/* Where rt_execute() sends a statement's result. */
typedef struct ResultSink ResultSink;
struct ResultSink {
    void *ctx;
    /* Called once per batch of rows, in order; returns 0 to go on, 1 to
     * pause (rt_run_fetch returns; others treat it as 0) or a negative
     * value to stop the statement (the client went away). */
    int  (*batch_cb)(ResultSink *sink, const Batch *batch);
};

/* Called on the loop once the append is durable (rc 0) or failed (rc -1,
 * err set); the RtAppend is freed after it returns. */
typedef void (*rt_append_done_cb)(void *arg, int rc, const SlError *err);
/* Runs the append on its Runtime's engine pool, a COPY into a table on
 * its statements' pool. */
void rt_append_start(RtAppend *ap, rt_append_done_cb done, void *arg);
/* Cancels a started COPY into a table while it waits for the table lock,
 * or for a worker, and a stream append (a COPY's part, a deferred INSERT)
 * still queued for a worker, which then writes nothing (why:
 * EX_CANCEL_USER, _TIMEOUT, _SHUTDOWN; done gets the error, on a later
 * loop turn).  False for a stream append a worker took: it is not
 * interrupted.  On the loop, before done was called. */
bool rt_append_interrupt(RtAppend *ap, int why);
/* Does ap run on a COPY into a table (its end, or a part of it being
 * sorted: the copy is in use until done)? */
bool rt_append_is_copy(const RtAppend *ap);

/* Starts statements on rt's catalog and state store (main: after
 * cat_open and state_open succeed into rt->cat and rt->st, before
 * server_init, which registers its sessions; rt_shutdown before
 * state_close and cat_close), and makes the system catalog over them
 * (syscat_create, syscat.h, into rt->syscat).  Statements prepared in a
 * Runtime without a catalog (or in none: rt NULL) that touch a relation
 * fail with 55000. */
int  rt_init(Runtime *rt);
void rt_shutdown(Runtime *rt);

/* The session whose statements are prepared and run now in rt (the server
 * sets it before it hands over a message; NULL: none; borrowed until the
 * next call), the lister of sessions rt's sys.connections calls (the
 * server's), and a server setting for rt's sys.settings and pg_settings
 * (main, at start): given to the system catalog rt_init made
 * (rt->syscat: syscat.h's syscat_session_*, syscat_setting_set); with rt
 * NULL, before rt_init or after rt_shutdown they are dropped, and
 * rt_session_current is NULL. */
void rt_session_set(Runtime *rt, const RtSession *s);
const RtSession *rt_session_current(Runtime *rt);
void rt_session_lister(Runtime *rt, rt_session_list_fn list, void *arg);
/* Calls emit once per client session, through the lister (the HTTP
 * overview's connections; on the loop). */
void rt_session_foreach(Runtime *rt, rt_session_emit_fn emit, void *emit_arg);
void rt_setting_set(Runtime *rt, const char *name, const char *value, const char *description);

/* What roles may reach on the server host (hostaccess.c, into rt->host):
 * files_root (NULL or "": none) is the directory below which non-superusers may use files
 * connectors and sinks; data_dir is never used by either; kafka_hosts
 * (NULL or "": any) lists the brokers non-superusers may name.  Fails
 * (58P01) when files_root does not resolve.  Called after rt_init; also
 * makes rt->kafka, the Kafka connector's policy (its owner check and
 * kafka_hosts). */
int  rt_host_init(Runtime *rt, const char *files_root, const char *data_dir,
                  const char *kafka_hosts, SlError *err);
void rt_host_free(Runtime *rt);

/* A WARNING the statement that just ran on this thread left for the client
 * (a NoticeResponse before its CommandComplete), or NULL; taking it clears
 * it.  sqlstate gets its code. */
const char *rt_take_warning(const char **sqlstate);

/* Makes the registry of continuous queries (cq.h's CqRuntime) on rt's loop
 * and catalog (after rt_init) and starts the queries of the catalog, their
 * micro-batches on the engine's pool (pool.h).  rt_cq_close stops them and
 * calls cb(arg) once no micro-batch is in flight (at once when cq is NULL
 * or already closing); rt_cq_free frees the registry after the pools have
 * stopped (before rt_shutdown).  Both take NULL. */
typedef struct CqRuntime CqRuntime;
CqRuntime *rt_cq_init(Runtime *rt);
void rt_cq_close(CqRuntime *cq, void (*cb)(void *arg), void *arg);
void rt_cq_free(CqRuntime *cq);
/* sys.source_lag's rows: per running query of cq, source and partition
 * (cq.h's CqSourceLag); nothing when cq is NULL. */
struct CqSourceLag;
void rt_source_lag(CqRuntime *cq, void (*fn)(const struct CqSourceLag *l, void *arg),
                   void *arg);

/* Parses a query string into RawStmts (a List of RawStmt *) in arena a.
 * An empty string gives an empty list.  On a syntax error returns -1 with
 * err set (42601 and the byte offset of the bad token). */
int rt_parse(Arena *a, const char *sql, size_t len, List **stmts, SlError *err);

/* Analyzes one statement against rt's catalog.  param_types may give the
 * types of $1..$n (TYPE_UNKNOWN to infer).  The result lives in arena a
 * and keeps rt: rt_execute, rt_run_* and rt_copy_* run it there. */
int rt_prepare(Runtime *rt, Arena *a, const char *sql, const RawStmt *raw,
               const SlType *param_types, int nparam_types,
               Prepared **out, SlError *err);

/* The result columns and the parameter types, after inference.  ncols = 0
 * is a statement that returns no rows, or a SELECT with no columns
 * (rt_returns_rows tells them apart). */
void rt_describe(const Prepared *p, int *ncols, const ColumnDesc **cols,
                 int *nparams, const SlType **param_types);
/* Whether p returns rows (RowDescription, even of zero fields, as for
 * `SELECT;`) or not (NoData). */
bool rt_returns_rows(const Prepared *p);

/* Runs a prepared statement with its parameters.  Rows go to sink; on
 * success tag receives the CommandComplete tag ("SELECT 3").  Returns 0,
 * or -1 with err set. */
int rt_execute(const Prepared *p, const ParamValue *params, int nparams,
               ResultSink *sink, char *tag, size_t tagsize, SlError *err);
/* SET / RESET / SHOW belong to the session (settings.h): rt_execute only
 * answers their tag, and the server applies them.  rt_setting says which
 * one p is (RT_SET_NONE for other statements) and gives the parameter as
 * written ("all" for RESET ALL / SHOW ALL), SET's value (NULL for DEFAULT)
 * and whether it is SET LOCAL. */
typedef enum RtSetKind { RT_SET_NONE, RT_SET, RT_RESET, RT_SHOW } RtSetKind;
RtSetKind rt_setting(const Prepared *p, const char **name, const char **value, bool *local);

/* Transaction statements and DEALLOCATE belong to the session too:
 * rt_statement gives p's parse tree (ast.h: TransactionStmt,
 * DeallocateStmt), which the server runs itself.  rt_write_command: the
 * command a read-only transaction refuses (PostgreSQL's
 * PreventCommandIfReadOnly: "INSERT", "CREATE TABLE", "COPY FROM", ...),
 * NULL for a statement that writes nothing. */
const Node *rt_statement(const Prepared *p);
const char *rt_write_command(const Prepared *p);
/* The command tag of a statement that cannot take part in a transaction
 * block (CREATE, DROP, ALTER, GRANT, ...: sluice cannot roll them back),
 * which the server refuses inside one with 25001; NULL for the others. */
const char *rt_block_refused(const Prepared *p);

/* Transaction blocks (txbuf.h's StateTx, one per open block of a
 * session): rt_run_set_xact makes a run's INSERT / UPDATE / DELETE buffer
 * their writes in tx and its scans see them (NULL: each statement commits
 * on its own).  rt_xact_commit writes a block's buffer in one durable
 * write, one at a time with other table writers, after checking its keys
 * against what others committed meanwhile (23505 for a key both
 * inserted, 40001 for a row changed or deleted meanwhile); on the calling
 * thread, which must not be the loop's unless rt_xact_commit_async says
 * there is no pool.  rt_append_new_xact: that commit as an RtAppend run
 * on the statements' pool (interruptible while it waits for the lock);
 * it takes tx and frees it. */
struct StateTx;
struct RtRun;
/* A block's buffer for the server, which does not reach into state/:
 * made at BEGIN, freed at its end; rt_xact_empty: nothing to write. */
struct StateTx *rt_xact_new(void);
void      rt_xact_free(struct StateTx *tx);
bool      rt_xact_empty(const struct StateTx *tx);
/* How many writes the block's buffer took so far (txbuf.h's
 * state_tx_writes): a savepoint's mark. */
uint64_t  rt_xact_writes(const struct StateTx *tx);
void      rt_run_set_xact(struct RtRun *r, struct StateTx *tx);
/* On the loop, where DDL runs, before the commit: 40001 (-1, err set)
 * when a relation the block wrote was dropped or replaced since. */
int       rt_xact_check_relations(Runtime *rt, const struct StateTx *tx, SlError *err);
int       rt_xact_commit(Runtime *rt, struct StateTx *tx, SlError *err);
bool      rt_xact_commit_async(const Runtime *rt);
RtAppend *rt_append_new_xact(Runtime *rt, struct StateTx *tx);

/* COPY TO's output, a line at a time (rt_copy_out, rt_run_set_copy_out). */
typedef int (*rt_copy_out_cb)(void *ctx, const char *data, size_t len);

/* Statements on a worker thread.  rt_execute runs a statement on the
 * calling thread; the server instead runs the ones rt_on_worker accepts
 * (SELECT, EXPLAIN, INSERT / UPDATE / DELETE) in three steps:
 * rt_run_begin on the loop (parameters bound, a stale statement analyzed
 * again, the relations it uses pinned against a concurrent DROP),
 * rt_run_exec on any thread (one at a time per RtRun; it may be
 * interrupted through ex_interrupt_enter's flag), rt_run_end on the loop
 * (unpins, frees).  INSERT / UPDATE / DELETE of different sessions run one
 * at a time, as they did on the loop. */
typedef struct RtRun RtRun;
bool rt_on_worker(const Prepared *p);
/* Whether p runs through rt_run_begin (SELECT, EXPLAIN, INSERT / UPDATE /
 * DELETE), on a worker or, for one that reads the loop's state, on the loop. */
bool rt_runnable(const Prepared *p);
int  rt_run_begin(const Prepared *p, const ParamValue *params, int nparams, RtRun **out,
                  SlError *err);
int  rt_run_exec(RtRun *r, ResultSink *sink, char *tag, size_t tagsize, SlError *err);
/* rt_run_exec a piece at a time, for results streamed as the client reads
 * them: rows go to sink until the statement ends (returns 0, tag set),
 * until maxrows rows went (maxrows > 0: an Execute row limit) or the sink
 * asked to pause by returning 1 from batch_cb (returns 1: call again, on
 * any thread, for the rest; a SELECT's operators wait in r meanwhile and
 * compute nothing more), or -1 with err set.  *sent gets the rows this
 * call sent.  rt_run_end may come after any call.  A call that returns 0
 * or -1 closes the operators on its own thread. */
int  rt_run_fetch(RtRun *r, ResultSink *sink, int64_t maxrows, uint64_t *sent, char *tag,
                  size_t tagsize, SlError *err);
/* Whether r, paused or suspended, still holds its operators: their close
 * may block (a Kafka scan joins its poller, waits for its consumer), so
 * rt_run_close runs it on a worker before rt_run_end on the loop.  A run
 * of a statement that reads the loop's state (run on the loop) says false:
 * rt_run_end closes it there. */
bool rt_run_open(const RtRun *r);
/* COPY ... TO STDOUT on a worker: rt_on_worker accepts one whose rows need
 * nothing of the loop's (not a system relation's).  Its run sends no rows
 * to rt_run_fetch's sink: each line of its output goes to cb (set before
 * the first fetch; cb returns >0 to pause the run after the batch, as a
 * sink's batch_cb does), and its tag is "COPY n".  rt_run_copy_progress,
 * between fetches: the relation's oid (0 for COPY (query)), the bytes and
 * rows sent so far (pg_stat_progress_copy). */
void rt_run_set_copy_out(RtRun *r, rt_copy_out_cb cb, void *ctx);
void rt_run_copy_progress(const RtRun *r, uint32_t *relid, int64_t *bytes, int64_t *rows);
void rt_run_close(RtRun *r);
void rt_run_end(RtRun *r);

/* SUBSCRIBE (cq_ddl.c, runtime.c).  rt_subscribe_name: the continuous query a
 * prepared SUBSCRIBE names, or NULL when p is not a SUBSCRIBE (its
 * rt_describe columns are rt_subscribe_columns': batch_id, kind, then the
 * query's result columns).  rt_subscribe: fn is called on the loop after
 * each committed batch of the query (cq.h's cq_changes_fn) until
 * rt_unsubscribe, or once with rows NULL (batch id -1) when the query goes
 * away; after that call the subscription is over. */
typedef void (*rt_changes_fn)(void *arg, int64_t batch_id, const char *kinds,
                              const Batch *rows);
typedef struct RtSub RtSub;
const char *rt_subscribe_name(const Prepared *p);
/* COPY (SUBSCRIBE name ...) TO STDOUT: the same subscription, its rows
 * (the same columns) sent as CopyData lines (rt_copy_text_line); such a
 * statement returns no rows (rt_returns_rows is false). */
bool rt_subscribe_copy(const Prepared *p);
/* WITH (snapshot): the result table's rows first, as inserts. */
bool rt_subscribe_snapshot(const Prepared *p);
int  rt_subscribe_columns(CqRuntime *cq, const char *name, Arena *a, int *ncols,
                          ColumnDesc **cols, SlError *err);
int  rt_subscribe(CqRuntime *cq, const char *name, bool snapshot, rt_changes_fn fn, void *arg,
                  RtSub **out, SlError *err);
/* Before each batch delivered to a subscriber of role `role`: may it still
 * SELECT from query `name` in rt's catalog?  -1 with 42501 (its privilege
 * was revoked) ends the subscription. */
int  rt_subscribe_check(Runtime *rt, const char *name, uint32_t role, SlError *err);
/* Starts delivering (the snapshot first, once no batch is in flight); fn
 * may be called before it returns, and may end the subscription. */
void rt_subscribe_go(RtSub *s);
void rt_unsubscribe(RtSub *s);

/* COPY (copy.c).  A prepared COPY is not run by rt_execute: the server
 * asks rt_copy_kind which way it goes and the number of its columns, then
 * for FROM STDIN feeds the CopyData bytes to rt_copy_data between
 * rt_copy_begin and rt_copy_end (which writes what is left, and frees the
 * RtCopy) or rt_copy_abort; for TO STDOUT, rt_copy_out calls cb with each
 * line of the output.  Into a table nothing is written before
 * rt_copy_end; into a stream the rows are written in parts as they come
 * (copy.c). */
typedef struct RtCopy RtCopy;
typedef enum RtCopyKind { RT_COPY_NONE, RT_COPY_IN, RT_COPY_OUT } RtCopyKind;
RtCopyKind rt_copy_kind(const Prepared *p);
/* FORMAT binary (COPY FROM only): CopyInResponse says format 1. */
bool rt_copy_binary(const Prepared *p);
int  rt_copy_ncols(const Prepared *p);
int  rt_copy_begin(const Prepared *p, RtCopy **out, SlError *err);
/* A COPY FROM inside a transaction block (right after rt_copy_begin): into
 * a stream, its rows go to the block's buffer tx, written at its COMMIT;
 * into a table, -1 with err set (0A000), the caller aborts the copy. */
struct StateTx;
int  rt_copy_set_xact(RtCopy *cp, struct StateTx *tx, SlError *err);
int  rt_copy_data(RtCopy *cp, const char *data, size_t len, SlError *err);
/* How far a COPY FROM got (pg_stat_progress_copy): the relation's oid, the
 * bytes received and the rows decoded so far. */
void rt_copy_progress(const RtCopy *cp, uint32_t *relid, int64_t *bytes, int64_t *rows);
/* The same, but where the engine's pool runs appends, a part of a COPY
 * into a stream is left in *part (NULL otherwise) instead of written on
 * the calling thread: run it with rt_append_start, and once it is done
 * call this again with no data (len 0: the input held is decoded further,
 * maybe leaving another part) before feeding more; a failed part fails
 * the COPY (rt_copy_abort). */
int  rt_copy_data_deferred(RtCopy *cp, const char *data, size_t len, RtAppend **part,
                           SlError *err);
int  rt_copy_end(RtCopy *cp, char *tag, size_t tagsize, SlError *err);
/* The same, but in group commit mode a COPY into a stream may leave its
 * one durable append in *deferred (NULL otherwise), as rt_execute does. */
int  rt_copy_end_deferred(RtCopy *cp, char *tag, size_t tagsize, RtAppend **deferred,
                          SlError *err);
void rt_copy_abort(RtCopy *cp);
/* The same, ending the COPY with err (CopyFail, a CancelRequest): into a
 * stream that wrote parts already, err's detail gets how many rows stay. */
void rt_copy_abort_with(RtCopy *cp, SlError *err);
int  rt_copy_out(const Prepared *p, rt_copy_out_cb cb, void *ctx, char *tag, size_t tagsize,
                 SlError *err);
/* Appends row r of b to line as one line of COPY's text format (tab
 * between fields, \\N for NULL, backslash escapes, a newline at the end);
 * val is scratch. */
struct StrBuf;
void rt_copy_text_line(struct StrBuf *line, struct StrBuf *val, const Batch *b, uint32_t r);

/* Roles (roles.c; docs/operations.md).
 *
 * rt_set_role: the role whose statements this thread runs -- the server
 * sets the session's before it handles each message (a worker thread that
 * runs a session's statement must set it too).  Privileges are checked
 * against it when a statement runs, and new relations are owned by it.
 * 0 means internal work: no checks, owner the bootstrap superuser. */
void     rt_set_role(uint32_t role_oid);
uint32_t rt_current_role(void);
/* Whether the current role may see the query text and client of a
 * session logged in as role (pg_stat_activity, sys.connections): the same
 * role, a superuser, or internal work. */
bool     rt_role_sees_session(Runtime *rt, uint32_t role);

/* A startup user that passed authentication logs in to rt's catalog:
 * *oid and *superuser of its role.  A user with no role yet (trusted, or known from the
 * config file) gets a plain LOGIN role made for it (never a superuser:
 * the bootstrap superuser is in every catalog from the start); a NOLOGIN
 * role is refused (28000).  Without a catalog: oid 0, superuser. */
int  rt_role_login(Runtime *rt, const char *name, uint32_t *oid, bool *superuser,
                   SlError *err);

/* Whether rt's catalog keeps md5 password hashes (rt->host.keep_md5):
 * only while an hba rule uses md5 (server_md5_rules).  Called once at
 * start, after rt_init;
 * without md5 rules every stored md5 hash is dropped (a role whose only
 * secret it was is left without a password, and logged), new passwords
 * get a SCRAM verifier only, and one given as an md5 hash is refused. */
int  rt_roles_md5(Runtime *rt, bool keep, SlError *err);

/* The password a role has in rt's catalog, for authentication: copies of
 * its SCRAM verifier and md5 hash (either may be NULL; free with sl_free).
 * RT_SECRET_NONE: no role, or no password (the config file's counts);
 * RT_SECRET_EXPIRED: past VALID UNTIL, no password may succeed. */
typedef enum RtSecret { RT_SECRET_NONE, RT_SECRET_SET, RT_SECRET_EXPIRED } RtSecret;
RtSecret rt_role_secret(Runtime *rt, const char *name, char **scram, char **md5);

#endif /* SLUICE_RUNTIME_H */
