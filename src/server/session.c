/*
 * session.c -- the protocol state machine of one connection.
 *
 *   session_init, session_free   per-connection protocol state
 *   session_consume              handle every whole packet in c->in
 *   session_send_error           ErrorResponse (ERROR or FATAL; 57P01 at
 *                                shutdown is FATAL: it ends the session)
 *   session_fatal                FATAL ErrorResponse from a format
 *   session_auth_ok              finish the startup once auth.c accepted
 *   session_send_text_rows       DataRows in text (SUBSCRIBE's rows)
 *   session_statement_failed     end a SUBSCRIBE with its error
 *
 * Startup: SSLRequest is answered 'S' when TLS is configured (and the
 * handshake follows, tls.c), 'N' otherwise; bytes that came after an
 * SSLRequest in the same read were sent before encryption and are refused
 * (CVE-2021-23214).  GSSENCRequest is answered 'N'.  CancelRequest is
 * matched against BackendKeyData.  A StartupMessage goes to auth.c, which
 * picks the hba rule and runs the password exchange; then AuthenticationOk,
 * the ParameterStatus set clients need, BackendKeyData and ReadyForQuery.
 *
 * Simple query: the string is parsed whole (a syntax error anywhere runs
 * nothing, as in PostgreSQL), then each statement is prepared, described and
 * run; the first error ends the string.  Extended query: Parse, Bind,
 * Describe, Execute, Close, Flush and Sync over named and unnamed prepared
 * statements and portals; after an error everything up to Sync is skipped.
 *
 * Results stream: a statement's rows are computed a piece at a time
 * (rt_run_fetch) and go to the client as they come.  A job on the thread
 * pool pauses once it encoded JOB_YIELD_BYTES of DataRows; the loop queues
 * them and runs the job again while the connection's unsent output is
 * under max_output_buffer, or parks it until the client has read
 * (session_output_drained).  Memory for any result size is then bounded,
 * and a client that stops reading holds no worker thread.
 *
 * COPY FROM STDIN: CopyData goes to rt_copy_data_deferred; a full part of
 * a COPY into a stream is written by the engine's pool, and one of a COPY
 * into a table sorted into a run file by the statements' pool, while the
 * session reads none of the client's input (WAIT_COPY), then the copy goes
 * on.  A connection that ends meanwhile leaves a table's copy to the wait,
 * which frees it when the worker is done with it.
 * statement_timeout runs from the COPY's start to its answer, the wait for
 * the client's data included; it and a CancelRequest end the COPY with
 * 57014 in copy-in mode, while a table's write waits for the lock or a
 * worker, and while a stream's last part waits in the engine pool's queue
 * (copy_in_interrupt), never while a worker writes a stream's part.
 *
 * Execute with a row limit sends up to maxrows rows and ends with
 * PortalSuspended when it sent maxrows, CommandComplete when it sent fewer
 * -- PostgreSQL's rule, so a result of exactly maxrows rows takes one more
 * Execute that returns "SELECT 0".  A suspended portal keeps its RtRun
 * (the operator tree) and computes nothing more until the next Execute;
 * closing the portal (Close, Sync outside a block) ends the statement.
 * Operators are never closed on the loop (a Kafka scan's close blocks for
 * seconds): the worker's last piece closes them, and a run dropped while
 * suspended or paused goes to the statement pool to be closed (run_drop).
 *
 * Transactions: the transaction statements and DEALLOCATE come parsed
 * (ast.h's TransactionStmt and DeallocateStmt, through rt_statement) and
 * run here, as they act on the session.  BEGIN / COMMIT / ROLLBACK [AND
 * CHAIN] set the status byte of ReadyForQuery ('I', 'T', 'E'), with
 * PostgreSQL's warnings (25001, 25P01); after an error inside a block
 * every statement but COMMIT / ROLLBACK is refused with 25P02 until the
 * block ends.  The block holds its writes (c->tx, txbuf.h: each run gets
 * it through rt_run_set_xact), SET LOCAL, the portals and its modes, fixed
 * at its first query: READ ONLY (25006 for a statement that writes) and
 * the isolation level (REPEATABLE READ and SERIALIZABLE, which sluice
 * cannot give, are refused with 0A000).  COMMIT of a block that wrote
 * waits for rt_xact_commit on the statements' pool (wait_for; its error,
 * 23505 or 40001 when another session committed first, ends the block
 * all the same); ROLLBACK, COMMIT of a failed block and a closed
 * connection drop the writes.  Inside a block, statements sluice cannot
 * roll back (rt_block_refused: CREATE, DROP, ALTER, roles and GRANT) are
 * refused with 25001; a COPY into a stream adds its rows to the block
 * (copy_begin), one into a table and a COPY TO after the block wrote are
 * refused with 0A000.  At Sync outside a block the portals are dropped,
 * as the implicit transaction that held them ends.
 *
 * Turns: session_consume handles a connection's whole messages for at most
 * TURN_BUDGET_NS of one loop turn; the rest waits for the next turn
 * (conn_resume_later), so a client that pipelines thousands of messages
 * does not hold the others up.
 *
 * Statements are handed to the runtime (runtime.h); this file never calls
 * the SQL layer or the executor directly.  Those that read or write rows run
 * on the statement pool (ServerConfig.statements, pool.h), one job per
 * connection at most; while all its workers are busy, jobs wait in its
 * queue, and statement_timeout counts that wait too.
 */
#include "pgw.h"
#include "sluice/ast.h"
#include "sluice/exec.h"
#include "sluice/log.h"
#include "sluice/settings.h"
#include "sluice/utf8.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#define SERVER_VERSION "15.0"
/* How long one connection may handle messages in one loop turn before the
 * others get theirs (20,000 pipelined Parses must not hold the loop). */
#define TURN_BUDGET_NS (2 * 1000 * 1000)
/* The largest message accepted while authenticating. */
#define AUTH_MAX_MESSAGE 65540

struct PreparedStmt {
    NameEntry     e;            /* first: c->stmts holds it by e.name */
    Arena         arena;        /* owns sql, the parse tree and the plan */
    char         *sql;
    Prepared     *prep;         /* NULL for an empty query */
    int           refs;         /* portals using it, plus 1 while named */
    bool          xact_end;     /* COMMIT / ROLLBACK: allowed in a failed block */
};

struct Portal {
    NameEntry     e;            /* first: c->portals holds it by e.name */
    PreparedStmt *stmt;
    Arena         arena;        /* owns the parameter values and formats */
    ParamValue   *params;
    int           nparams;
    int16_t      *formats;      /* result column formats */
    int           nformats;
    bool          done;
    RtRun        *run;          /* suspended by an Execute row limit, or NULL */
    Pool         *pool;         /* the statement pool, where run is closed */
};

/* A run dropped on the loop: one still holding its operators is closed on
 * the statement pool, then ended back on the loop. */
typedef struct RunDrop {
    PoolWork req;
    RtRun   *run;
} RunDrop;

static void run_drop_work_cb(PoolWork *req)
{
    rt_run_close(((RunDrop *)req->data)->run);
}

static void run_drop_after_cb(PoolWork *req)
{
    RunDrop *d = req->data;
    rt_run_end(d->run);
    sl_free(d);
}

static void run_drop(Pool *pool, RtRun *run)
{
    if (!rt_run_open(run)) {
        rt_run_end(run);
        return;
    }
    RunDrop *d = sl_calloc(1, sizeof(RunDrop));
    d->req.data = d;
    d->run = run;
    pool_submit(pool, &d->req, run_drop_work_cb, run_drop_after_cb);
}

/* ---------------------------------------------------------------------- */
/* Output helpers                                                          */

static void send_simple(Conn *c, char type)
{
    size_t m = pgw_begin(&c->out, type);
    pgw_end(&c->out, m);
}

static void send_param_status(Conn *c, const char *name, const char *value)
{
    size_t m = pgw_begin(&c->out, PGW_MSG_PARAM_STATUS);
    pgw_put_cstr(&c->out, name);
    pgw_put_cstr(&c->out, value);
    pgw_end(&c->out, m);
}

static void on_idle_timeout(uv_timer_t *t);

/* ReadyForQuery, after a ParameterStatus for each reported parameter that
 * changed (PostgreSQL reports them just before ReadyForQuery too); starts
 * the idle timeout of the state the session is now in. */
static void send_ready(Conn *c)
{
    if (c->close_after_flush)
        return;             /* nothing follows a FATAL */
    activity_idle(c);
    int iter = 0;
    const char *name, *value;
    while (c->settings != NULL && settings_next_report(c->settings, &iter, &name, &value))
        send_param_status(c, name, value);
    size_t m = pgw_begin(&c->out, PGW_MSG_READY);
    pgw_put_byte(&c->out, (uint8_t)c->xact);
    pgw_end(&c->out, m);
    conn_mark_dirty(c);
    int ms = settings_timeout_ms(c->settings, c->xact == 'I' ? TIMEOUT_IDLE_SESSION
                                                             : TIMEOUT_IDLE_IN_TRANSACTION);
    if (ms > 0 && c->phase == PHASE_READY)
        uv_timer_start(&c->idle_timer, on_idle_timeout, (uint64_t)ms, 0);
    else
        uv_timer_stop(&c->idle_timer);
}

/* idle_session_timeout / idle_in_transaction_session_timeout: the client
 * sent nothing for that long after ReadyForQuery. */
static void on_idle_timeout(uv_timer_t *t)
{
    Conn *c = t->data;
    if (c->phase != PHASE_READY || c->job != NULL || c->close_after_flush)
        return;
    if (c->xact == 'I')
        session_fatal(c, ERRCODE_IDLE_SESSION_TIMEOUT,
                      "terminating connection due to idle-session timeout");
    else
        session_fatal(c, ERRCODE_IDLE_IN_TRANSACTION_SESSION_TIMEOUT,
                      "terminating connection due to idle-in-transaction timeout");
    conn_mark_dirty(c);
}

/* A NoticeResponse (a WARNING from SET LOCAL outside a block). */
static void send_notice(Conn *c, const char *severity, const char *sqlstate, const char *msg)
{
    size_t m = pgw_begin(&c->out, PGW_MSG_NOTICE);
    pgw_put_byte(&c->out, 'S');
    pgw_put_cstr(&c->out, severity);
    pgw_put_byte(&c->out, 'V');
    pgw_put_cstr(&c->out, severity);
    pgw_put_byte(&c->out, 'C');
    pgw_put_cstr(&c->out, sqlstate);
    pgw_put_byte(&c->out, 'M');
    pgw_put_cstr(&c->out, msg);
    pgw_put_byte(&c->out, 0);
    pgw_end(&c->out, m);
}

/* The 1-based character position of a 1-based byte position in sql. */
static int char_position(const char *sql, int bytepos)
{
    int chars = 0;
    size_t n = strlen(sql);
    for (size_t i = 0; i < (size_t)(bytepos - 1) && i < n; i++)
        if (((unsigned char)sql[i] & 0xC0) != 0x80)
            chars++;
    return chars + 1;
}

void session_send_error(Conn *c, const SlError *e, const char *sql, bool fatal)
{
    /* a statement that shutdown cancelled ends its session: one FATAL
     * 57P01, as in PostgreSQL, not an ERROR and then the FATAL */
    if (!fatal && c->server->closing && strcmp(e->sqlstate, ERRCODE_ADMIN_SHUTDOWN) == 0)
        fatal = true;
    const char *sev = fatal ? "FATAL" : "ERROR";
    size_t m = pgw_begin(&c->out, PGW_MSG_ERROR);
    pgw_put_byte(&c->out, 'S');
    pgw_put_cstr(&c->out, sev);
    pgw_put_byte(&c->out, 'V');
    pgw_put_cstr(&c->out, sev);
    pgw_put_byte(&c->out, 'C');
    pgw_put_cstr(&c->out, e->sqlstate[0] ? e->sqlstate : ERRCODE_INTERNAL_ERROR);
    pgw_put_byte(&c->out, 'M');
    pgw_put_cstr(&c->out, e->message ? e->message : "unknown error");
    if (e->detail) {
        pgw_put_byte(&c->out, 'D');
        pgw_put_cstr(&c->out, e->detail);
    }
    if (e->hint) {
        pgw_put_byte(&c->out, 'H');
        pgw_put_cstr(&c->out, e->hint);
    }
    if (e->context) {
        pgw_put_byte(&c->out, 'W');
        pgw_put_cstr(&c->out, e->context);
    }
    if (e->position > 0 && sql != NULL) {
        char pos[16];
        snprintf(pos, sizeof(pos), "%d", char_position(sql, e->position));
        pgw_put_byte(&c->out, 'P');
        pgw_put_cstr(&c->out, pos);
    }
    pgw_put_byte(&c->out, 0);
    pgw_end(&c->out, m);
    conn_mark_dirty(c);
    if (fatal) {
        c->close_after_flush = true;
    } else if (c->xact == 'T') {
        /* The block fails, and its modes go with it, as PostgreSQL's abort
         * undoes SET TRANSACTION: AND CHAIN then starts a block with the
         * defaults. */
        c->xact = 'E';
        c->xact_read_only = false;
        c->xact_isolation = XACT_READ_COMMITTED;
    }
}

void session_fatal(Conn *c, const char *sqlstate, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    SlError e = {0};
    sl_error(&e, sqlstate, "%s", msg);
    session_send_error(c, &e, NULL, true);
    sl_error_clear(&e);
    sl_log(LOG_INFO, "connection closed", "peer=%s reason=\"%s\"", c->peer, log_quote(msg));
}

/* A FATAL error from a fixed message: protocol violations and the like. */
static void fatal(Conn *c, const char *sqlstate, const char *msg)
{
    session_fatal(c, sqlstate, "%s", msg);
}

static void send_row_description(Conn *c, int ncols, const ColumnDesc *cols,
                                 const int16_t *formats, int nformats)
{
    size_t m = pgw_begin(&c->out, PGW_MSG_ROW_DESC);
    pgw_put_int16(&c->out, (int16_t)ncols);
    for (int i = 0; i < ncols; i++) {
        pgw_put_cstr(&c->out, cols[i].name);
        pgw_put_int32(&c->out, 0);          /* table OID */
        pgw_put_int16(&c->out, 0);          /* column number */
        pgw_put_int32(&c->out, (int32_t)type_oid_of(cols[i].type));
        pgw_put_int16(&c->out, type_len(cols[i].type.id));
        pgw_put_int32(&c->out, cols[i].type.typmod);
        int16_t f = nformats == 0 ? 0 : nformats == 1 ? formats[0] : formats[i];
        pgw_put_int16(&c->out, f);
    }
    pgw_end(&c->out, m);
}

/* ---------------------------------------------------------------------- */
/* Result rows                                                             */

typedef struct RowSink {
    ResultSink     base;
    Conn          *conn;
    StrBuf        *out;         /* c->out, or a job's rows */
    const int16_t *formats;
    int            nformats;
    SlError       *err;
    size_t         pause_at;    /* ask the statement to pause past this many bytes */
    size_t         max_out;     /* on the loop: bytes out may grow by (statement_mem) */
    size_t         out_start;   /* out->len when the statement began */
} RowSink;

static int row_sink_batch_cb(ResultSink *sink, const Batch *b)
{
    RowSink *rs = (RowSink *)sink;
    StrBuf *out = rs->out;
    for (uint32_t r = 0; r < b->nrows; r++) {
        size_t m = pgw_begin(out, PGW_MSG_DATA_ROW);
        pgw_put_int16(out, (int16_t)b->ncols);
        for (uint32_t col = 0; col < b->ncols; col++) {
            const Vector *v = &b->cols[col];
            if (vector_is_null(v, r)) {
                pgw_put_int32(out, -1);
                continue;
            }
            int16_t f = rs->nformats == 0 ? 0
                        : rs->nformats == 1 ? rs->formats[0] : rs->formats[col];
            size_t lenpos = out->len;
            pgw_put_int32(out, 0);
            size_t start = out->len;
            if (f == 1) {
                if (value_send_binary(v, r, out) < 0) {
                    out->len = m - 1;   /* drop the partial DataRow */
                    return sl_error(rs->err, ERRCODE_FEATURE_NOT_SUPPORTED,
                                    "binary output format is not supported for type %s",
                                    type_name(v->type.id));
                }
            } else {
                value_format_text(v, r, out);
            }
            uint32_t n = (uint32_t)(out->len - start);
            uint8_t *p = (uint8_t *)out->data + lenpos;
            p[0] = (uint8_t)(n >> 24);
            p[1] = (uint8_t)(n >> 16);
            p[2] = (uint8_t)(n >> 8);
            p[3] = (uint8_t)n;
        }
        pgw_end(out, m);
    }
    if (rs->conn != NULL && out == &rs->conn->out)
        conn_mark_dirty(rs->conn);
    if (rs->max_out > 0 && out->len - rs->out_start > rs->max_out) {
        /* a statement on the loop cannot pause: its result is held whole */
        sl_error(rs->err, ERRCODE_OUT_OF_MEMORY, "out of memory");
        sl_error_detail(rs->err, "The result of a statement over system relations is held "
                                 "whole, and it passed statement_mem (%zu kB).",
                        rs->max_out / 1024);
        sl_error_hint(rs->err, "Select fewer rows (a WHERE or LIMIT), or raise statement_mem.");
        return -1;
    }
    return rs->pause_at > 0 && out->len >= rs->pause_at ? 1 : 0;
}

static void send_command_complete(Conn *c, const char *tag)
{
    size_t m = pgw_begin(&c->out, PGW_MSG_COMMAND_COMPLETE);
    pgw_put_cstr(&c->out, tag);
    pgw_end(&c->out, m);
}

/* The statements a failed transaction block accepts: COMMIT, ROLLBACK
 * (END, ABORT) and ROLLBACK TO SAVEPOINT (PostgreSQL's
 * IsTransactionExitStmt). */
static bool is_xact_exit(const Node *stmt)
{
    if (!IS_A(stmt, TransactionStmt))
        return false;
    TransactionKind k = ((const TransactionStmt *)stmt)->kind;
    return k == TRANS_COMMIT || k == TRANS_ROLLBACK || k == TRANS_ROLLBACK_TO;
}

/* Checks a statement's transaction modes against what sluice gives: each
 * statement commits on its own and sees what committed before it started,
 * which is READ COMMITTED (READ UNCOMMITTED behaves as it, as in
 * PostgreSQL); DEFERRABLE only matters to SERIALIZABLE READ ONLY.  Returns
 * 0, or -1 with err set (0A000). */
static int xact_modes_check(const XactModes *m, SlError *err)
{
    if (m->isolation == XACT_REPEATABLE_READ || m->isolation == XACT_SERIALIZABLE) {
        sl_error_at(err, ERRCODE_FEATURE_NOT_SUPPORTED, m->isolation_loc,
                    "transaction isolation level %s is not supported",
                    m->isolation == XACT_SERIALIZABLE ? "SERIALIZABLE" : "REPEATABLE READ");
        sl_error_hint(err, "Each statement commits on its own and sees the rows committed "
                           "before it started, as in READ COMMITTED.");
        return -1;
    }
    return 0;
}

/* A savepoint of the open block: its name and what the block had done
 * when it was set (its buffer's writes, the session's setting changes),
 * which ROLLBACK TO compares with now. */
struct Savepoint {
    char     *name;
    uint64_t  writes;
    uint64_t  sets;
};

/* Forgets the block's savepoints (its end, or a new block). */
static void savepoints_clear(Conn *c)
{
    for (int i = 0; i < c->nsavepoints; i++)
        sl_free(c->savepoints[i].name);
    c->nsavepoints = 0;
}

/* The newest savepoint named name, or -1 (3B001 in err). */
static int savepoint_find(const Conn *c, const char *name, SlError *err)
{
    for (int i = c->nsavepoints - 1; i >= 0; i--)
        if (strcmp(c->savepoints[i].name, name) == 0)
            return i;
    sl_error(err, ERRCODE_S_E_INVALID_SPECIFICATION, "savepoint \"%s\" does not exist", name);
    return -1;
}

/* SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO [SAVEPOINT], as
 * PostgreSQL's: only in a block (25P01); RELEASE forgets the savepoint and
 * the ones after it, ROLLBACK TO the ones after it and ends the failure of
 * a failed block.  The block's buffer has no undo (txbuf.h): ROLLBACK TO a
 * savepoint after which the block wrote rows or changed a setting (SET,
 * set_config) is refused
 * (0A000), as the block cannot be put back as it was; ROLLBACK of the whole
 * block can.  Returns 0 with tag set, or -1 with err set. */
static int run_savepoint(Conn *c, const TransactionStmt *s, char *tag, size_t tagsize,
                         SlError *err)
{
    static const char *const what[] = {[TRANS_SAVEPOINT] = "SAVEPOINT",
                                       [TRANS_RELEASE] = "RELEASE SAVEPOINT",
                                       [TRANS_ROLLBACK_TO] = "ROLLBACK TO SAVEPOINT"};
    if (c->xact == 'I')
        return sl_error(err, ERRCODE_NO_ACTIVE_SQL_TRANSACTION,
                        "%s can only be used in transaction blocks", what[s->kind]);
    if (s->kind == TRANS_SAVEPOINT) {
        if (c->nsavepoints == c->capsavepoints) {
            c->capsavepoints = c->capsavepoints ? c->capsavepoints * 2 : 4;
            c->savepoints = sl_realloc(c->savepoints,
                                       sizeof(struct Savepoint) * (size_t)c->capsavepoints);
        }
        c->savepoints[c->nsavepoints++] =
            (struct Savepoint){sl_strdup(s->savepoint), rt_xact_writes(c->tx),
                               settings_changes(c->settings)};
        snprintf(tag, tagsize, "SAVEPOINT");
        return 0;
    }
    int i = savepoint_find(c, s->savepoint, err);
    if (i < 0)
        return -1;
    if (s->kind == TRANS_RELEASE) {
        for (int k = i; k < c->nsavepoints; k++)
            sl_free(c->savepoints[k].name);
        c->nsavepoints = i;
        snprintf(tag, tagsize, "RELEASE");
        return 0;
    }
    const struct Savepoint *sp = &c->savepoints[i];
    bool set = settings_changes(c->settings) != sp->sets;
    if (rt_xact_writes(c->tx) != sp->writes || set) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "ROLLBACK TO SAVEPOINT is not supported after the block %s since the savepoint",
                 set ? "changed a setting" : "wrote rows");
        sl_error_hint(err, "ROLLBACK the whole transaction block.");
        return -1;
    }
    for (int k = i + 1; k < c->nsavepoints; k++)
        sl_free(c->savepoints[k].name);
    c->nsavepoints = i + 1;
    c->xact = 'T';
    snprintf(tag, tagsize, "ROLLBACK");
    return 0;
}

/* The isolation levels in the order of settings_xact_value's choices. */
static const XactIsolation xact_levels[] = {XACT_SERIALIZABLE, XACT_REPEATABLE_READ,
                                            XACT_READ_COMMITTED, XACT_READ_UNCOMMITTED};

/* Makes transaction_isolation and transaction_read_only (SHOW,
 * current_setting) say the block's modes, or outside a block the defaults
 * the next one gets. */
static void xact_show(Conn *c)
{
    static const char *const names[] = {"serializable", "repeatable read", "read committed",
                                        "read uncommitted"};
    const char *iso = settings_get(c->settings, "default_transaction_isolation", NULL, NULL);
    bool ro = false;
    if (c->xact != 'I') {
        for (size_t k = 0; k < SL_ARRAY_LEN(xact_levels); k++)
            if ((int)xact_levels[k] == c->xact_isolation)
                iso = names[k];
        ro = c->xact_read_only;
    }
    settings_set_fixed(c->settings, "transaction_isolation", iso);
    settings_set_fixed(c->settings, "transaction_read_only", ro ? "on" : "off");
}

/* Starts a transaction block: BEGIN's, or the next one of AND CHAIN,
 * which keeps the modes of the one before; BEGIN's isolation level is
 * default_transaction_isolation. */
static void xact_start(Conn *c, bool chain)
{
    rt_xact_free(c->tx);
    c->tx = rt_xact_new();
    savepoints_clear(c);
    settings_xact_begin(c->settings);
    c->xact = 'T';
    c->xact_queried = false;
    if (!chain) {
        const char *def = settings_get(c->settings, "default_transaction_isolation", NULL, NULL);
        SlError ignored = {0};
        int k = settings_xact_value("transaction_isolation", def, &ignored);
        sl_error_clear(&ignored);
        c->xact_read_only = false;
        c->xact_isolation = k == 3 ? XACT_READ_UNCOMMITTED : XACT_READ_COMMITTED;
    }
    xact_show(c);
}

/* Applies modes to the block, with PostgreSQL's checks: once a query ran
 * in it, its isolation level cannot change, nor READ ONLY become READ
 * WRITE (25001).  Returns 0, or -1 with err set. */
static int xact_modes_apply(Conn *c, const XactModes *m, SlError *err)
{
    if (m->isolation != XACT_ISO_DEFAULT && m->isolation != (XactIsolation)c->xact_isolation) {
        if (c->xact_queried)
            return sl_error(err, ERRCODE_ACTIVE_SQL_TRANSACTION,
                            "SET TRANSACTION ISOLATION LEVEL must be called before any query");
        c->xact_isolation = m->isolation;
    }
    if (m->read_only == XACT_OFF && c->xact_read_only && c->xact_queried)
        return sl_error(err, ERRCODE_ACTIVE_SQL_TRANSACTION,
                        "transaction read-write mode must be set before any query");
    if (m->read_only != XACT_UNSET)
        c->xact_read_only = m->read_only == XACT_ON;
    xact_show(c);
    return 0;
}

/* Runs a transaction statement: the session's transaction state, the
 * status byte and its warnings, as PostgreSQL's xact.c does.  Returns 0
 * with tag set, or -1 with err set. */
static int run_transaction(Conn *c, const TransactionStmt *s, char *tag, size_t tagsize,
                           struct StateTx **commit_tx, SlError *err)
{
    bool in_block = c->xact != 'I';
    switch (s->kind) {
    case TRANS_SAVEPOINT:
    case TRANS_RELEASE:
    case TRANS_ROLLBACK_TO:
        return run_savepoint(c, s, tag, tagsize, err);
    case TRANS_BEGIN:
    case TRANS_START:
        if (xact_modes_check(&s->modes, err) < 0)
            return -1;
        if (in_block)
            send_notice(c, "WARNING", ERRCODE_ACTIVE_SQL_TRANSACTION,
                        "there is already a transaction in progress");
        else
            xact_start(c, false);
        if (xact_modes_apply(c, &s->modes, err) < 0)
            return -1;
        snprintf(tag, tagsize, "%s", s->kind == TRANS_BEGIN ? "BEGIN" : "START TRANSACTION");
        return 0;
    case TRANS_COMMIT:
    case TRANS_ROLLBACK: {
        const char *what = s->kind == TRANS_COMMIT ? "COMMIT" : "ROLLBACK";
        if (!in_block) {
            if (s->chain)
                return sl_error(err, ERRCODE_NO_ACTIVE_SQL_TRANSACTION,
                                "%s AND CHAIN can only be used in transaction blocks", what);
            send_notice(c, "WARNING", ERRCODE_NO_ACTIVE_SQL_TRANSACTION,
                        "there is no transaction in progress");
            snprintf(tag, tagsize, "%s", what);
            return 0;
        }
        /* COMMIT of a failed block is a ROLLBACK.  SET LOCAL ends with the
         * block; ROLLBACK also undoes its SETs. */
        bool commit = s->kind == TRANS_COMMIT && c->xact == 'T';
        settings_xact_end(c->settings, commit);
        savepoints_clear(c);
        c->xact = 'I';
        /* the block's writes: the caller commits them; ROLLBACK drops them */
        if (commit && !rt_xact_empty(c->tx))
            *commit_tx = c->tx;
        else
            rt_xact_free(c->tx);
        c->tx = NULL;
        if (s->chain)
            xact_start(c, true);
        else
            c->xact_read_only = false;
        xact_show(c);
        snprintf(tag, tagsize, "%s", commit ? "COMMIT" : "ROLLBACK");
        return 0;
    }
    case TRANS_SET:
        if (xact_modes_check(&s->modes, err) < 0)
            return -1;
        if (!in_block)
            send_notice(c, "WARNING", ERRCODE_NO_ACTIVE_SQL_TRANSACTION,
                        "SET TRANSACTION can only be used in transaction blocks");
        else if (xact_modes_apply(c, &s->modes, err) < 0)
            return -1;
        snprintf(tag, tagsize, "SET");
        return 0;
    case TRANS_SET_SESSION:
        if (xact_modes_check(&s->modes, err) < 0)
            return -1;
        if (s->modes.read_only == XACT_ON) {
            /* default_transaction_read_only is off and read-only */
            sl_error_at(err, ERRCODE_FEATURE_NOT_SUPPORTED, s->modes.read_only_loc,
                        "read-only sessions are not supported");
            sl_error_hint(err, "Use BEGIN READ ONLY for a read-only transaction block.");
            return -1;
        }
        if (s->modes.isolation != XACT_ISO_DEFAULT) {
            /* default_transaction_isolation, as a SET of it (ROLLBACK undoes it) */
            const char *level = s->modes.isolation == XACT_READ_UNCOMMITTED ? "read uncommitted"
                                                                            : "read committed";
            if (settings_set(c->settings, "default_transaction_isolation", level, SET_SESSION,
                             in_block, NULL, err) < 0)
                return -1;
            xact_show(c);
        }
        snprintf(tag, tagsize, "SET");
        return 0;
    }
    return sl_error(err, ERRCODE_INTERNAL_ERROR, "unexpected transaction statement %d",
                    (int)s->kind);
}

/* A statement other than the session's own is about to run: in a block it
 * is the block's first query (whose modes are then fixed), and in a READ
 * ONLY block one that writes is refused with 25006, as PostgreSQL's
 * PreventCommandIfReadOnly does.  Returns 0, or -1 with err set. */
static int xact_statement_check(Conn *c, const Prepared *prep, SlError *err)
{
    if (rt_block_refused(prep) != NULL)
        activity_log_ddl(c);
    const char *cmd = c->xact != 'I' && c->xact_read_only ? rt_write_command(prep) : NULL;
    if (cmd != NULL)
        return sl_error(err, ERRCODE_READ_ONLY_SQL_TRANSACTION,
                        "cannot execute %s in a read-only transaction", cmd);
    if (c->xact != 'I' && (cmd = rt_block_refused(prep)) != NULL) {
        sl_error(err, ERRCODE_ACTIVE_SQL_TRANSACTION, "%s cannot run inside a transaction block",
                 cmd);
        sl_error_hint(err, "sluice cannot roll back %s: run it outside BEGIN ... COMMIT.", cmd);
        return -1;
    }
    if (c->xact != 'I' && rt_copy_kind(prep) == RT_COPY_OUT && !rt_xact_empty(c->tx)) {
        sl_error(err, ERRCODE_FEATURE_NOT_SUPPORTED,
                 "COPY TO cannot run in a transaction block after it wrote rows");
        sl_error_hint(err, "Use SELECT inside the block, or COPY after COMMIT.");
        return -1;
    }
    if (c->xact == 'T')
        c->xact_queried = true;
    return 0;
}

static void stmt_unlink(Conn *c, PreparedStmt *ps);
static PreparedStmt *stmt_find(Conn *c, const char *name);
static void stmt_release_entry(NameEntry *e);

/* DEALLOCATE [PREPARE] name | ALL: prepared statements belong to the
 * session, so the server runs it (psycopg 3 sends DEALLOCATE ALL to drop
 * its cached statements, over the extended protocol in pipeline mode).
 * ALL keeps the unnamed statement, as PostgreSQL does.  Returns 0 with tag
 * set, or -1 with err set (26000). */
static int run_deallocate(Conn *c, const DeallocateStmt *s, char *tag, size_t tagsize,
                          SlError *err)
{
    if (s->name == NULL) {
        NameEntry *unnamed = names_find(&c->stmts, "");
        if (unnamed != NULL)
            names_remove(&c->stmts, unnamed);
        names_clear(&c->stmts, stmt_release_entry);
        if (unnamed != NULL)
            names_add(&c->stmts, unnamed);
        snprintf(tag, tagsize, "DEALLOCATE ALL");
        return 0;
    }
    PreparedStmt *ps = s->name[0] != '\0' ? stmt_find(c, s->name) : NULL;
    if (ps == NULL)
        return sl_error(err, ERRCODE_UNDEFINED_PSTATEMENT,
                        "prepared statement \"%s\" does not exist", s->name);
    stmt_unlink(c, ps);
    snprintf(tag, tagsize, "DEALLOCATE");
    return 0;
}

/* One text value as a DataRow field. */
static void put_text_field(StrBuf *out, const char *s)
{
    pgw_put_int32(out, (int32_t)strlen(s));
    pgw_put_bytes(out, s, strlen(s));
}

/* SET / RESET / SHOW: the session's parameters (settings.h).  SHOW's rows
 * go to out (text is the same in both formats).  Returns 0 with tag set,
 * or -1 with err set. */
static int run_setting(Conn *c, RtSetKind kind, const char *name, const char *value,
                       bool local, StrBuf *out, char *tag, size_t tagsize, SlError *err)
{
    bool in_block = c->xact != 'I';
    const char *warning = NULL;
    if (kind == RT_SHOW) {
        bool all = strcmp(name, "all") == 0;
        int n = all ? settings_count() : 1;
        for (int i = 0; i < n; i++) {
            const char *nm, *v, *desc;
            if (all) {
                settings_nth(c->settings, i, &nm, &v, &desc);
            } else if ((v = settings_get(c->settings, name, NULL, err)) == NULL) {
                return -1;
            }
            size_t m = pgw_begin(out, PGW_MSG_DATA_ROW);
            pgw_put_int16(out, (int16_t)(all ? 3 : 1));
            if (all)
                put_text_field(out, nm);
            put_text_field(out, v);
            if (all)
                put_text_field(out, desc);
            pgw_end(out, m);
        }
        snprintf(tag, tagsize, "SHOW");
        return 0;
    }
    if (kind == RT_SET && value != NULL && (strcasecmp(name, "transaction_isolation") == 0 ||
                                            strcasecmp(name, "transaction_read_only") == 0)) {
        /* SET TRANSACTION's: the block's mode, and outside a block nothing */
        int k = settings_xact_value(name, value, err);
        if (k < 0)
            return -1;
        XactModes m = {XACT_ISO_DEFAULT, -1, XACT_UNSET, -1, XACT_UNSET};
        if (strcasecmp(name, "transaction_isolation") == 0)
            m.isolation = xact_levels[k];
        else
            m.read_only = k ? XACT_ON : XACT_OFF;
        if (xact_modes_check(&m, err) < 0 || (in_block && xact_modes_apply(c, &m, err) < 0))
            return -1;
        snprintf(tag, tagsize, "SET");
        return 0;
    }
    int rc;
    if (kind == RT_RESET && strcmp(name, "all") == 0) {
        settings_reset_all(c->settings, in_block);
        rc = 0;
    } else {
        rc = settings_set(c->settings, name, kind == RT_RESET ? NULL : value,
                          local ? SET_LOCAL : SET_SESSION, in_block, &warning, err);
    }
    if (rc < 0)
        return -1;
    if (warning != NULL)
        send_notice(c, "WARNING", ERRCODE_NO_ACTIVE_SQL_TRANSACTION, warning);
    xact_show(c);       /* a new default_transaction_isolation */
    snprintf(tag, tagsize, "%s", kind == RT_RESET ? "RESET" : "SET");
    return 0;
}

/* Once a statement succeeded: the runtime's warning, if it left one. */
static void statement_done(Conn *c)
{
    const char *state, *warning = rt_take_warning(&state);
    if (warning != NULL)
        send_notice(c, "WARNING", state, warning);
}

/* ---------------------------------------------------------------------- */
/* Statements on the thread pool                                           */

/* What to do when a job ends: go on with a simple Query's statements, or
 * finish an Execute (without a row limit, or with one). */
typedef enum JobKind { JOB_SIMPLE, JOB_EXECUTE, JOB_EXECUTE_LIMIT } JobKind;

/* A job pauses once it made this many bytes of DataRows (rt_run_fetch). */
#define JOB_YIELD_BYTES (256 * 1024)

struct Job {
    PoolWork       req;         /* on the server's statement pool */
    Conn          *conn;
    SlSettings    *settings;
    RtRun         *run;
    _Atomic int    interrupt;   /* EX_RUNNING, EX_CANCEL_USER, EX_CANCEL_TIMEOUT */
    JobKind        kind;
    StrBuf         rows;        /* DataRows made on the worker, not yet queued */
    bool           parked;      /* paused: waits for the client to read */
    int64_t        sent;        /* rows this job sent (an Execute's count) */
    const int16_t *formats;
    int            nformats;
    Portal        *portal;
    int32_t        maxrows;
    const char    *sql;         /* the text error positions refer to */
    char           tag[64];
    SlError        err;
    int            rc;
    bool           copy_out;    /* COPY TO STDOUT: rows holds CopyData, then CopyDone */
};

/* The loop's state for c's statements: the role they run as
 * (rt_set_role, which rt_prepare checks and rt_run_begin hands to the
 * worker), c's settings and c's session (rt_session_current).  dispatch
 * sets them for each message; work that goes on later on the loop
 * (job_after_cb, wait_done_cb: the rest of a Query string) sets them again,
 * as other connections' messages may have run in between.  Leaving gives
 * back what was set before, so a scope may nest. */
typedef struct ConnScope {
    RtSession          rs;
    char               addr[64];
    SlSettings        *settings;
    const RtSession   *session;
    uint32_t           role;
    bool               active;
} ConnScope;

static void conn_scope_enter(Conn *c, ConnScope *s)
{
    s->role = rt_current_role();
    s->session = rt_session_current(c->server->rt);
    s->active = c->active;
    rt_set_role(c->role_oid);
    s->settings = settings_enter(c->settings);
    c->active = true;
    session_describe(c, &s->rs, s->addr, sizeof(s->addr));
    rt_session_set(c->server->rt, &s->rs);
}

static void conn_scope_leave(Conn *c, ConnScope *s)
{
    rt_session_set(c->server->rt, s->session);
    c->active = s->active;
    settings_enter(s->settings);
    rt_set_role(s->role);
}

static void job_work_cb(PoolWork *req)
{
    Job *j = req->data;
    SlSettings *old = settings_enter(j->settings);
    const _Atomic int *old_flag = ex_interrupt_enter(&j->interrupt);
    RowSink rs = {{NULL, row_sink_batch_cb}, NULL, &j->rows, j->formats, j->nformats, &j->err,
                  JOB_YIELD_BYTES, 0, 0};
    int64_t limit = j->kind == JOB_EXECUTE_LIMIT ? j->maxrows - j->sent : 0;
    uint64_t sent = 0;
    j->rc = rt_run_fetch(j->run, &rs.base, limit, &sent, j->tag, sizeof(j->tag), &j->err);
    j->sent += (int64_t)sent;
    ex_interrupt_enter(old_flag);
    settings_enter(old);
}

static void job_after_cb(PoolWork *req);

/* A COPY TO's line, on the worker: one CopyData into the job's rows; asks
 * the run to pause once JOB_YIELD_BYTES wait there, as a SELECT's rows do. */
static int job_copy_line_cb(void *ctx, const char *data, size_t len)
{
    Job *j = ctx;
    size_t m = pgw_begin(&j->rows, PGW_MSG_COPY_DATA);
    pgw_put_bytes(&j->rows, data, len);
    pgw_end(&j->rows, m);
    return j->rows.len >= JOB_YIELD_BYTES ? 1 : 0;
}

/* Sets the job's interrupt flag (EX_CANCEL_USER, _TIMEOUT or _SHUTDOWN); a
 * job still waiting in the statement pool's queue never runs: it ends at
 * once with the error ex_check_interrupt gives for that reason
 * (job_after_cb on a later loop turn). */
static void job_interrupt(Conn *c, int why)
{
    Job *j = c->job;
    atomic_store(&j->interrupt, why);
    if (pool_cancel(c->server->cfg.statements, &j->req) == 0) {
        const _Atomic int *old = ex_interrupt_enter(&j->interrupt);
        j->rc = ex_check_interrupt(&j->err);
        ex_interrupt_enter(old);
    }
}

/* Runs a parked job again (it goes on where it paused). */
static void job_unpark(Conn *c)
{
    Job *j = c->job;
    if (j == NULL || !j->parked)
        return;
    j->parked = false;
    pool_submit(c->server->cfg.statements, &j->req, job_work_cb, job_after_cb);
}

/* The client's unsent output, and whether there is room for more. */
static bool output_room(const Conn *c)
{
    return c->out_inflight + c->out.len + c->tls_out.len < c->server->cfg.max_output_buffer;
}

void session_output_drained(Conn *c)
{
    if (c->job != NULL && c->job->parked && c->phase != PHASE_CLOSING && output_room(c))
        job_unpark(c);
    if (c->phase != PHASE_CLOSING)
        subscribe_drained(c);
}

static bool copy_in_interrupt(Conn *c, int why);
static bool wait_interrupt(Conn *c, int why);

/* statement_timeout: the job of the statement running, or the COPY FROM
 * STDIN in progress (armed by copy_in_start), ends with 57014. */
static void on_statement_timeout(uv_timer_t *t)
{
    Conn *c = t->data;
    if (c->job != NULL) {
        job_interrupt(c, EX_CANCEL_TIMEOUT);
        job_unpark(c);      /* it ends at once, with 57014 */
        return;
    }
    copy_in_interrupt(c, EX_CANCEL_TIMEOUT);
}

bool session_cancel(Conn *c)
{
    if (subscribe_cancel(c))
        return true;        /* it ended with 57014 */
    if (copy_in_interrupt(c, EX_CANCEL_USER))
        return true;
    if (c->job == NULL)
        return false;
    job_interrupt(c, EX_CANCEL_USER);
    job_unpark(c);
    return true;
}

/* The FATAL that ends a session at shutdown. */
static void shutdown_fatal(Conn *c)
{
    session_fatal(c, ERRCODE_ADMIN_SHUTDOWN,
                  "terminating connection due to administrator command");
}

void session_shutdown(Conn *c)
{
    if (c->phase == PHASE_CLOSING || c->close_after_flush)
        return;
    if (c->phase != PHASE_READY) {
        conn_close(c);      /* not through authentication: nothing to answer */
        return;
    }
    if (c->job != NULL || c->wait != NULL)
        return;             /* answered first; then conn_resume ends it */
    subscribe_free(c);      /* the FATAL below says why */
    if (c->copy != NULL) {
        rt_copy_abort(c->copy);     /* nothing more of an unfinished COPY is written */
        c->copy = NULL;
    }
    conn_resume(c);         /* a Sync that waited, then the FATAL */
}

void session_shutdown_cancel(Conn *c)
{
    wait_interrupt(c, EX_CANCEL_SHUTDOWN);
    if (c->job != NULL) {
        job_interrupt(c, EX_CANCEL_SHUTDOWN);
        job_unpark(c);      /* a result waiting for its reader ends too */
    }
}

void session_closing(Conn *c)
{
    subscribe_free(c);      /* silently: nobody reads its error */
    if (c->job != NULL) {
        job_interrupt(c, EX_CANCEL_USER);
        job_unpark(c);      /* job_after_cb frees the connection */
    }
}

/* An Execute's CommandComplete tag: a SELECT counts the rows this Execute
 * sent, as in PostgreSQL. */
static void execute_tag(char *tag, size_t tagsize, int64_t sent)
{
    if (strncmp(tag, "SELECT ", 7) == 0)
        snprintf(tag, tagsize, "SELECT %lld", (long long)sent);
}

static void wait_for(Conn *c, RtAppend *ap, int kind, const char *tag, Portal *p);

/* COMMIT of a block that wrote: its writes in one durable write, on the
 * statements' pool (wait_for; the answer comes from wait_done_cb), or here
 * when the Runtime has no pool.  Takes tx.  Returns 0 (done here), 3
 * (waiting) or -1 with err set. */
static int xact_commit(Conn *c, struct StateTx *tx, JobKind kind, Portal *portal,
                       const char *tag, SlError *err)
{
    Runtime *rt = c->server->rt;
    if (rt_xact_check_relations(rt, tx, err) < 0) {
        rt_xact_free(tx);
        return -1;
    }
    if (!rt_xact_commit_async(rt)) {
        int rc = rt_xact_commit(rt, tx, err);
        rt_xact_free(tx);
        return rc;
    }
    wait_for(c, rt_append_new_xact(rt, tx), kind == JOB_SIMPLE ? 0 : 1, tag, portal);
    return 3;
}

/* Runs prep: SET / SHOW and statements that touch the catalog here, the
 * others (rt_on_worker) on the thread pool; resume, when not NULL, is a
 * portal's suspended run to go on with.  Rows go to c->out as DataRows in
 * the given formats.  Returns 0 when it ran here to the end (tag set), 2
 * when it ran here up to maxrows rows and the portal is suspended
 * (portal->run), 1 when a job started (job_after_cb goes on), 3 when a
 * COMMIT waits for its write (wait_done_cb goes on), -1 with err set. */
static int start_statement(Conn *c, const Prepared *prep, const ParamValue *params,
                           int nparams, const int16_t *formats, int nformats, char *tag,
                           size_t tagsize, SlError *err, JobKind kind, Portal *portal,
                           int32_t maxrows, const char *sql, RtRun *resume)
{
    StrBuf *out = &c->out;
    bool here = !rt_on_worker(prep);
    RtRun *run = resume;
    if (run == NULL) {
        const char *name, *value;
        bool local;
        RtSetKind sk = rt_setting(prep, &name, &value, &local);
        if (sk != RT_SET_NONE) {
            if (run_setting(c, sk, name, value, local, out, tag, tagsize, err) < 0)
                return -1;
            statement_done(c);
            return 0;
        }
        const Node *stmt = rt_statement(prep);
        if (IS_A(stmt, TransactionStmt)) {
            struct StateTx *commit_tx = NULL;
            if (run_transaction(c, (const TransactionStmt *)stmt, tag, tagsize, &commit_tx,
                                err) < 0)
                return -1;
            return commit_tx != NULL ? xact_commit(c, commit_tx, kind, portal, tag, err) : 0;
        }
        if (IS_A(stmt, DeallocateStmt))
            return run_deallocate(c, (const DeallocateStmt *)stmt, tag, tagsize, err);
        if (xact_statement_check(c, prep, err) < 0)
            return -1;
        if (here && !rt_runnable(prep)) {
            RowSink rs = {{NULL, row_sink_batch_cb}, c, out, formats, nformats, err, 0,
                          settings_statement_mem(c->settings), out->len};
            if (rt_execute(prep, params, nparams, &rs.base, tag, tagsize, err) < 0)
                return -1;
            statement_done(c);
            return 0;
        }
        if (rt_run_begin(prep, params, nparams, &run, err) < 0)
            return -1;
    }
    /* the block it runs in now: a portal suspended in a block that ended
     * since reads committed rows only (its open scans keep their copies) */
    rt_run_set_xact(run, c->xact == 'T' ? c->tx : NULL);
    if (here) {
        /* a statement that reads the loop's state (with a row limit, or
         * run to its end) */
        RowSink rs = {{NULL, row_sink_batch_cb}, c, out, formats, nformats, err, 0,
                      settings_statement_mem(c->settings), out->len};
        uint64_t sent = 0;
        int rc = rt_run_fetch(run, &rs.base, maxrows, &sent, tag, tagsize, err);
        if (rc > 0) {
            portal->run = run;
            return 2;
        }
        rt_run_end(run);
        if (rc < 0)
            return -1;
        statement_done(c);
        execute_tag(tag, tagsize, (int64_t)sent);
        return 0;
    }
    Job *j = sl_calloc(1, sizeof(Job));
    j->req.data = j;
    j->conn = c;
    j->settings = c->settings;
    j->run = run;
    j->kind = kind;
    strbuf_init(&j->rows);
    j->formats = formats;
    j->nformats = nformats;
    j->portal = portal;
    j->maxrows = maxrows;
    j->sql = sql;
    if (rt_copy_kind(prep) == RT_COPY_OUT) {
        /* its CopyOutResponse is sent; CopyDone follows the last line */
        j->copy_out = true;
        rt_run_set_copy_out(run, job_copy_line_cb, j);
        activity_copy_out(c, run);
    }
    atomic_init(&j->interrupt, EX_RUNNING);
    pool_submit(c->server->cfg.statements, &j->req, job_work_cb, job_after_cb);
    c->job = j;
    int ms = settings_timeout_ms(c->settings, TIMEOUT_STATEMENT);
    if (ms > 0)
        uv_timer_start(&c->stmt_timer, on_statement_timeout, (uint64_t)ms, 0);
    return 1;
}

void session_send_text_rows(Conn *c, const Batch *b)
{
    SlError err = {0};
    RowSink rs = {.conn = c, .out = &c->out, .err = &err};
    row_sink_batch_cb(&rs.base, b);     /* text never fails */
    sl_error_clear(&err);
}

static void failed_xact_error(SlError *err)
{
    sl_error(err, ERRCODE_IN_FAILED_SQL_TRANSACTION,
             "current transaction is aborted, commands ignored until end of transaction block");
}

/* ---------------------------------------------------------------------- */
/* Simple query                                                            */

/* A simple Query in progress: its statements and the next one to run.  It
 * outlives the Query message only while a COPY FROM STDIN takes CopyData
 * (PostgreSQL runs the rest of the string after the copy ends). */
typedef struct SimpleQuery {
    Arena  arena;
    char  *sql;
    List  *stmts;
    int    next;
} SimpleQuery;

static void simple_query_end(Conn *c)
{
    if (c->sq != NULL) {
        arena_destroy(&c->sq->arena);
        sl_free(c->sq);
        c->sq = NULL;
    }
    send_ready(c);
}

void session_statement_failed(Conn *c, const SlError *e, bool extended)
{
    session_send_error(c, e, NULL, false);
    if (extended)
        c->skip_to_sync = true;
    else
        simple_query_end(c);
    conn_mark_dirty(c);
}

/* The copy-in and copy-out responses: the overall format (text, or binary
 * for FORMAT binary) and each column's, the same. */
static void send_copy_response_of(Conn *c, char type, int ncols, uint8_t f)
{
    size_t m = pgw_begin(&c->out, type);
    pgw_put_byte(&c->out, f);
    pgw_put_int16(&c->out, (int16_t)ncols);
    for (int i = 0; i < ncols; i++)
        pgw_put_int16(&c->out, f);
    pgw_end(&c->out, m);
}

static void send_copy_response(Conn *c, char type, const Prepared *prep)
{
    send_copy_response_of(c, type, rt_copy_ncols(prep), rt_copy_binary(prep) ? 1 : 0);
}

/* SUBSCRIBE, or COPY (SUBSCRIBE ...) TO STDOUT after its CopyOutResponse
 * (text, its columns those of SUBSCRIBE): runs on the loop until it ends
 * (subscribe.c). */
static int start_subscribe(Conn *c, const Prepared *prep, bool extended, SlError *err)
{
    bool copy = rt_subscribe_copy(prep);
    if (copy) {
        int ncols, nparams;
        const ColumnDesc *cols;
        const SlType *ptypes;
        rt_describe(prep, &ncols, &cols, &nparams, &ptypes);
        send_copy_response_of(c, PGW_MSG_COPY_OUT_RESPONSE, ncols, 0);
    }
    return subscribe_start(c, rt_subscribe_name(prep), rt_subscribe_snapshot(prep), extended,
                           copy, err);
}

static int copy_out_cb(void *ctx, const char *data, size_t len)
{
    Conn *c = ctx;
    size_t m = pgw_begin(&c->out, PGW_MSG_COPY_DATA);
    pgw_put_bytes(&c->out, data, len);
    pgw_end(&c->out, m);
    return 0;
}

static void extended_error(Conn *c, SlError *err, const char *sql);

/* ---------------------------------------------------------------------- */
/* Deferred appends: in group commit mode an INSERT into a stream or a COPY
 * into one hands its durable write to the thread pool (runtime.h, RtAppend).
 * The session stops consuming input (session_consume) until the write is
 * done, then answers as it would have, and goes on.  A COPY into a stream
 * hands over each part it writes before its end the same way (WAIT_COPY):
 * done answers nothing unless the part failed. */

typedef enum WaitKind { WAIT_SIMPLE, WAIT_EXECUTE, WAIT_COPY } WaitKind;

typedef struct SessionWait {
    Conn     *c;            /* NULL once the connection is gone */
    WaitKind  kind;
    Portal   *portal;       /* WAIT_EXECUTE */
    RtAppend *ap;           /* until wait_done_cb */
    RtCopy   *copy;         /* a table COPY whose part a worker sorts, left
                             * by its gone connection: freed when it ends */
    char      tag[64];
} SessionWait;

/* Cancels what c waits for, if it can be: a COPY into a table waiting for
 * the table lock (or for a statements' worker), or a stream's append still
 * queued for an engine worker, ends with 57014 (57P01 at shutdown),
 * nothing written, as does a table COPY's part being sorted (when its sort
 * ends); a stream's append that a worker took is not
 * interrupted, nor a stream COPY's part before its end, queued or not: the COPY
 * ends at once (copy_in_cancel) and its error counts that part's rows as
 * appended, which they then are. */
static bool wait_interrupt(Conn *c, int why)
{
    return c->wait != NULL &&
           (c->wait->kind != WAIT_COPY || rt_append_is_copy(c->wait->ap)) &&
           rt_append_interrupt(c->wait->ap, why);
}

static void run_simple(Conn *c);
static void extended_error(Conn *c, SlError *err, const char *sql);
static void copy_in_failed(Conn *c, SlError *err, bool drop);
static void copy_in_start(Conn *c, const Prepared *prep);

static void wait_done_cb(void *arg, int rc, const SlError *err)
{
    SessionWait *w = arg;
    Conn *c = w->c;
    if (c == NULL) {
        if (w->copy != NULL)
            rt_copy_abort(w->copy);
        sl_free(w);
        return;
    }
    c->wait = NULL;
    if (w->kind != WAIT_COPY)
        uv_timer_stop(&c->stmt_timer);  /* a COPY's last write: it ended */
    ConnScope scope;
    conn_scope_enter(c, &scope);
    SlError e = {0};
    if (rc < 0) {
        /* the whole error: a COPY's 23505 names its key in the detail */
        sl_error(&e, err->sqlstate, "%s", err->message ? err->message : "append failed");
        if (err->detail != NULL)
            sl_error_detail(&e, "%s", err->detail);
        if (err->hint != NULL)
            sl_error_hint(&e, "%s", err->hint);
        if (err->context != NULL)
            sl_error_context(&e, "%s", err->context);
    }
    if (w->kind == WAIT_COPY) {
        /* a part of a COPY: it goes on, unless the part failed (and the
         * COPY was not ended meanwhile, by a CancelRequest) */
        RtAppend *part = NULL;
        if (c->copy != NULL && rc == 0 &&
            rt_copy_data_deferred(c->copy, NULL, 0, &part, &e) == 0) {
            activity_copy(c);
            if (part != NULL)
                wait_for(c, part, WAIT_COPY, "", NULL);
        } else if (c->copy != NULL) {
            rt_copy_abort(c->copy);
            c->copy = NULL;
            copy_in_failed(c, &e, true);
        }
    } else if (w->kind == WAIT_EXECUTE) {
        if (rc == 0) {
            w->portal->done = true;
            send_command_complete(c, w->tag);
        } else {
            extended_error(c, &e, NULL);
        }
    } else if (c->copy_extended) {
        /* a COPY from an Execute: the client's Sync follows */
        c->copy_extended = false;
        if (rc == 0)
            send_command_complete(c, w->tag);
        else
            extended_error(c, &e, NULL);
    } else if (rc == 0) {
        send_command_complete(c, w->tag);
        run_simple(c);
    } else {
        session_send_error(c, &e, NULL, false);
        simple_query_end(c);
    }
    conn_scope_leave(c, &scope);
    sl_error_clear(&e);
    sl_free(w);
    conn_resume(c);
}

static void wait_for(Conn *c, RtAppend *ap, int kind, const char *tag, Portal *p)
{
    SessionWait *w = sl_calloc(1, sizeof(SessionWait));
    w->c = c;
    w->kind = (WaitKind)kind;
    w->portal = p;
    w->ap = ap;
    snprintf(w->tag, sizeof(w->tag), "%s", tag);
    c->wait = w;
    rt_append_start(ap, wait_done_cb, w);
}

/* rt_copy_begin, and inside a transaction block the COPY's rows go to the
 * block (a table's COPY is refused there).  0, or -1 with err set and no
 * copy. */
static int copy_begin(Conn *c, const Prepared *prep, SlError *err)
{
    if (rt_copy_begin(prep, &c->copy, err) < 0)
        return -1;
    if (c->xact == 'T' && rt_copy_set_xact(c->copy, c->tx, err) < 0) {
        rt_copy_abort(c->copy);
        c->copy = NULL;
        return -1;
    }
    activity_copy(c);
    return 0;
}

/* Runs the statements of c->sq from sq->next; stops at a COPY FROM STDIN
 * (copy-in mode), at a deferred append (group commit: wait_done_cb goes
 * on), or at the first error, and otherwise ends the Query. */
static void run_simple(Conn *c)
{
    SimpleQuery *sq = c->sq;
    const char *sql = sq->sql;
    SlError err = {0};
    for (; sq->next < list_len(sq->stmts); sq->next++) {
        if (c->server->closing)
            return;         /* shutting down: the rest is not run (the FATAL) */
        Prepared *prep;
        const RawStmt *raw = list_nth(sq->stmts, sq->next);
        if (c->xact == 'E' && !is_xact_exit(raw->stmt)) {
            failed_xact_error(&err);
            session_send_error(c, &err, NULL, false);
            break;
        }
        if (rt_prepare(c->server->rt, &sq->arena, sql, raw, NULL, 0, &prep, &err) < 0) {
            session_send_error(c, &err, sql, false);
            break;
        }
        int ncols, nparams;
        const ColumnDesc *cols;
        const SlType *ptypes;
        rt_describe(prep, &ncols, &cols, &nparams, &ptypes);
        if (nparams > 0) {
            sl_error(&err, ERRCODE_UNDEFINED_PARAMETER, "there is no parameter $1");
            session_send_error(c, &err, sql, false);
            break;
        }
        char tag[64];
        RtCopyKind kind = rt_copy_kind(prep);
        if (kind != RT_COPY_NONE && xact_statement_check(c, prep, &err) < 0) {
            session_send_error(c, &err, sql, false);
            break;
        }
        if (kind == RT_COPY_IN) {
            if (copy_begin(c, prep, &err) < 0) {
                session_send_error(c, &err, sql, false);
                break;
            }
            copy_in_start(c, prep);
            conn_mark_dirty(c);
            sq->next++;
            return;         /* CopyData, then CopyDone or CopyFail */
        }
        if (kind == RT_COPY_OUT && rt_on_worker(prep)) {
            /* on the statements' pool, a piece at a time (job_after_cb) */
            send_copy_response(c, PGW_MSG_COPY_OUT_RESPONSE, prep);
            if (start_statement(c, prep, NULL, 0, NULL, 0, tag, sizeof(tag), &err, JOB_SIMPLE,
                                NULL, 0, sql, NULL) < 0) {
                session_send_error(c, &err, sql, false);
                break;
            }
            return;         /* job_after_cb goes on from the next statement */
        }
        if (kind == RT_COPY_OUT) {
            /* one that reads the loop's state: here, whole */
            send_copy_response(c, PGW_MSG_COPY_OUT_RESPONSE, prep);
            if (rt_copy_out(prep, copy_out_cb, c, tag, sizeof(tag), &err) < 0) {
                session_send_error(c, &err, sql, false);
                break;
            }
            send_simple(c, PGW_MSG_COPY_DONE);
            send_command_complete(c, tag);
            continue;
        }
        if (rt_returns_rows(prep))
            send_row_description(c, ncols, cols, NULL, 0);
        if (rt_subscribe_name(prep) != NULL) {
            /* Runs on the loop until cancelled (session_cancel); the rest
             * of the string is not run. */
            if (start_subscribe(c, prep, false, &err) < 0) {
                session_send_error(c, &err, sql, false);
                break;
            }
            return;
        }
        int rc = start_statement(c, prep, NULL, 0, NULL, 0, tag, sizeof(tag), &err, JOB_SIMPLE,
                                 NULL, 0, sql, NULL);
        if (rc < 0) {
            session_send_error(c, &err, sql, false);
            break;
        }
        if (rc == 3) {
            sq->next++;
            return;         /* wait_done_cb goes on from the next statement */
        }
        if (rc > 0)
            return;         /* job_after_cb goes on from the next statement */
        send_command_complete(c, tag);
    }
    sl_error_clear(&err);
    simple_query_end(c);
}

static void handle_query(Conn *c, PgwReader *r)
{
    const char *sql = pgw_get_cstr(r);
    if (!pgw_reader_done(r)) {
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Query message");
        return;
    }
    SimpleQuery *sq = sl_calloc(1, sizeof(SimpleQuery));
    arena_init(&sq->arena, 16384);
    sq->sql = arena_strdup(&sq->arena, sql);
    c->sq = sq;
    activity_start(c, sq->sql);
    SlError err = {0};
    if (rt_parse(&sq->arena, sq->sql, strlen(sq->sql), &sq->stmts, &err) < 0) {
        session_send_error(c, &err, sq->sql, false);
        sl_error_clear(&err);
        simple_query_end(c);
    } else if (list_len(sq->stmts) == 0) {
        send_simple(c, PGW_MSG_EMPTY_QUERY);
        simple_query_end(c);
    } else {
        run_simple(c);
    }
}

/* Copy-in mode: CopyData feeds the COPY, CopyDone ends it and the Query
 * string goes on, CopyFail or an error ends the Query; Flush and Sync are
 * ignored, as PostgreSQL does. */
static void copy_in_message(Conn *c, uint8_t type, const uint8_t *body, size_t len)
{
    SlError err = {0};
    char tag[64];
    switch (type) {
    case PGW_MSG_COPY_DATA: {
        RtAppend *part = NULL;
        if (rt_copy_data_deferred(c->copy, (const char *)body, len, &part, &err) == 0) {
            activity_copy(c);
            if (part != NULL)
                wait_for(c, part, WAIT_COPY, "", NULL);
            return;
        }
        rt_copy_abort(c->copy);
        break;
    }
    case PGW_MSG_COPY_DONE: {
        RtAppend *ap = NULL;
        int rc = rt_copy_end_deferred(c->copy, tag, sizeof(tag), &ap, &err);
        c->copy = NULL;
        activity_copy(c);
        if (rc == 0 && ap != NULL) {
            wait_for(c, ap, WAIT_SIMPLE, tag, NULL);
            return;
        }
        if (rc == 0) {
            uv_timer_stop(&c->stmt_timer);
            send_command_complete(c, tag);
            if (c->copy_extended)
                c->copy_extended = false;   /* the client's Sync follows */
            else
                run_simple(c);
            return;
        }
        break;
    }
    case PGW_MSG_COPY_FAIL: {
        PgwReader r;
        pgw_reader_init(&r, body, len);
        const char *why = pgw_get_cstr(&r);
        sl_error(&err, ERRCODE_QUERY_CANCELED, "COPY from stdin failed: %s",
                 why ? why : "(no message)");
        rt_copy_abort_with(c->copy, &err);
        break;
    }
    case PGW_MSG_FLUSH:
    case PGW_MSG_SYNC:
        return;
    default:
        rt_copy_abort(c->copy);
        sl_error(&err, ERRCODE_PROTOCOL_VIOLATION,
                 "unexpected message type 0x%02X during COPY from stdin", type);
        break;
    }
    c->copy = NULL;
    activity_copy(c);
    copy_in_failed(c, &err, type == PGW_MSG_COPY_DATA);
}

/* A COPY FROM STDIN ended with err (c->copy already aborted): the error,
 * and with drop the CopyData the client still sends is dropped. */
static void copy_in_failed(Conn *c, SlError *err, bool drop)
{
    uv_timer_stop(&c->stmt_timer);
    c->copy_drop = drop;
    if (c->copy_extended) {
        /* Extended protocol: the error, then everything up to Sync. */
        c->copy_extended = false;
        extended_error(c, err, NULL);
        return;
    }
    session_send_error(c, err, NULL, false);
    sl_error_clear(err);
    simple_query_end(c);
}

/* Enters copy-in mode for prep, a COPY FROM STDIN begun (c->copy): the
 * CopyInResponse, and statement_timeout counts from now, the time the
 * client takes to send its data included, as in PostgreSQL. */
static void copy_in_start(Conn *c, const Prepared *prep)
{
    send_copy_response(c, PGW_MSG_COPY_IN_RESPONSE, prep);
    int ms = settings_timeout_ms(c->settings, TIMEOUT_STATEMENT);
    if (ms > 0)
        uv_timer_start(&c->stmt_timer, on_statement_timeout, (uint64_t)ms, 0);
}

/* A CancelRequest (why: EX_CANCEL_USER) or statement_timeout
 * (EX_CANCEL_TIMEOUT) during copy-in, while the client sends its data or a
 * part of it is being written: the COPY ends now with 57014, nothing more
 * is written (into a stream, the parts written before stay, the one being
 * written too), and the CopyData the client still sends is dropped. */
static void copy_in_cancel(Conn *c, int why)
{
    SlError err = {0};
    _Atomic int flag;
    atomic_init(&flag, why);
    const _Atomic int *old = ex_interrupt_enter(&flag);
    ex_check_interrupt(&err);           /* the message for why */
    ex_interrupt_enter(old);
    rt_copy_abort_with(c->copy, &err);
    c->copy = NULL;
    copy_in_failed(c, &err, true);
}

/* Ends c's COPY FROM STDIN for why, if one is in progress: in copy-in mode
 * (copy_in_cancel), or after CopyDone, a COPY into a table waiting for the
 * modify lock, or a COPY into a stream whose last part waits in the engine
 * pool's queue (its wait ends with 57014, nothing more written).  A COPY
 * into a stream whose last part a worker writes is not interrupted: it
 * ends as that write does.  Whether it ended one. */
static bool copy_in_interrupt(Conn *c, int why)
{
    if (wait_interrupt(c, why))
        return true;
    if (c->copy != NULL && c->phase == PHASE_READY) {
        copy_in_cancel(c, why);
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------------- */
/* Extended query                                                          */

static void stmt_release(PreparedStmt *ps)
{
    if (--ps->refs > 0)
        return;
    sl_free(ps->e.name);
    arena_destroy(&ps->arena);
    sl_free(ps);
}

static void stmt_release_entry(NameEntry *e)
{
    stmt_release((PreparedStmt *)e);
}

static PreparedStmt *stmt_find(Conn *c, const char *name)
{
    return (PreparedStmt *)names_find(&c->stmts, name);
}

static void stmt_unlink(Conn *c, PreparedStmt *ps)
{
    names_remove(&c->stmts, &ps->e);
    stmt_release(ps);
}

static void portal_free(Portal *p)
{
    run_drop(p->pool, p->run);
    stmt_release(p->stmt);
    sl_free(p->e.name);
    arena_destroy(&p->arena);
    sl_free(p);
}

static void portal_free_entry(NameEntry *e)
{
    portal_free((Portal *)e);
}

static Portal *portal_find(Conn *c, const char *name)
{
    return (Portal *)names_find(&c->portals, name);
}

static void portal_unlink(Conn *c, Portal *p)
{
    names_remove(&c->portals, &p->e);
    portal_free(p);
}

/* 53400 when one more named prepared statement (what "prepared
 * statements"), or portal, would pass max_prepared_statements. */
static bool too_many_names(Conn *c, const NameTable *t, const char *name, const char *what,
                           SlError *err)
{
    int max = c->server->cfg.max_prepared_statements;
    if (*name == '\0' || max <= 0 || t->named < (uint32_t)max)
        return false;
    sl_error(err, ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
             "too many %s on this connection", what);
    sl_error_detail(err, "A connection may hold at most %d named %s "
                    "(max_prepared_statements).", max, what);
    sl_error_hint(err, "Close or DEALLOCATE the ones no longer needed, or use the "
                  "unnamed one.");
    return true;
}

/* Maps a type OID from Parse to a type; 0 means "infer". */
static int type_from_oid(uint32_t oid, SlType *out)
{
    if (oid == 0 || oid == 705 /* unknown */) {
        *out = sl_type(TYPE_UNKNOWN);
        return 0;
    }
    for (int t = TYPE_BOOL; t < TYPE__NSCALAR; t++) {
        if (type_oid((SlTypeId)t) == oid) {
            *out = sl_type((SlTypeId)t);
            return 0;
        }
        if (type_array_oid((SlTypeId)t) == oid) {
            *out = sl_array_type((SlTypeId)t, -1);
            return 0;
        }
    }
    return -1;
}

/* An error in extended mode: report it and skip to the next Sync. */
static void extended_error(Conn *c, SlError *err, const char *sql)
{
    session_send_error(c, err, sql, false);
    sl_error_clear(err);
    c->skip_to_sync = true;
}

static void handle_parse(Conn *c, PgwReader *r)
{
    const char *name = pgw_get_cstr(r);
    const char *sql = pgw_get_cstr(r);
    int16_t ntypes = pgw_get_int16(r);
    SlError err = {0};
    if (r->err || ntypes < 0) {
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Parse message");
        return;
    }
    SlType types[ntypes > 0 ? ntypes : 1];
    for (int i = 0; i < ntypes; i++) {
        uint32_t oid = (uint32_t)pgw_get_int32(r);
        if (!r->err && type_from_oid(oid, &types[i]) < 0) {
            sl_error(&err, ERRCODE_UNDEFINED_OBJECT, "type with OID %u does not exist", oid);
            extended_error(c, &err, NULL);
            return;
        }
    }
    if (!pgw_reader_done(r)) {
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Parse message");
        return;
    }
    if (*name && stmt_find(c, name) != NULL) {
        sl_error(&err, ERRCODE_DUPLICATE_PSTATEMENT,
                 "prepared statement \"%s\" already exists", name);
        extended_error(c, &err, NULL);
        return;
    }
    if (too_many_names(c, &c->stmts, name, "prepared statements", &err)) {
        extended_error(c, &err, NULL);
        return;
    }
    PreparedStmt *ps = sl_calloc(1, sizeof(PreparedStmt));
    arena_init(&ps->arena, 8192);
    ps->e.name = sl_strdup(name);
    ps->sql = arena_strdup(&ps->arena, sql);
    activity_start(c, ps->sql);
    ps->refs = 1;
    List *stmts = NULL;
    if (rt_parse(&ps->arena, ps->sql, strlen(ps->sql), &stmts, &err) == 0) {
        if (list_len(stmts) == 1) {
            const RawStmt *raw = list_nth(stmts, 0);
            ps->xact_end = is_xact_exit(raw->stmt);
        }
        if (list_len(stmts) == 1 && c->xact == 'E' && !ps->xact_end)
            failed_xact_error(&err);
        else if (list_len(stmts) > 1)
            sl_error(&err, ERRCODE_SYNTAX_ERROR,
                     "cannot insert multiple commands into a prepared statement");
        else if (list_len(stmts) == 1)
            rt_prepare(c->server->rt, &ps->arena, ps->sql, list_nth(stmts, 0), types,
                       ntypes, &ps->prep, &err);
    }
    if (sl_error_set(&err)) {
        /* The error's position refers to the statement's text. */
        session_send_error(c, &err, ps->sql, false);
        sl_error_clear(&err);
        c->skip_to_sync = true;
        stmt_release(ps);
        return;
    }
    if (*name == '\0') {
        PreparedStmt *old = stmt_find(c, "");
        if (old != NULL)
            stmt_unlink(c, old);
    }
    names_add(&c->stmts, &ps->e);
    send_simple(c, PGW_MSG_PARSE_COMPLETE);
}

static void handle_bind(Conn *c, PgwReader *r)
{
    const char *pname = pgw_get_cstr(r);
    const char *sname = pgw_get_cstr(r);
    SlError err = {0};
    if (r->err) {
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Bind message");
        return;
    }
    PreparedStmt *ps = stmt_find(c, sname);
    if (ps == NULL) {
        sl_error(&err, ERRCODE_UNDEFINED_PSTATEMENT,
                 "prepared statement \"%s\" does not exist", sname);
        extended_error(c, &err, NULL);
        return;
    }
    if (c->xact == 'E' && !ps->xact_end && ps->prep != NULL) {
        failed_xact_error(&err);
        extended_error(c, &err, NULL);
        return;
    }
    if (*pname && portal_find(c, pname) != NULL) {
        sl_error(&err, ERRCODE_DUPLICATE_CURSOR, "portal \"%s\" already exists", pname);
        extended_error(c, &err, NULL);
        return;
    }
    if (too_many_names(c, &c->portals, pname, "portals", &err)) {
        extended_error(c, &err, NULL);
        return;
    }
    Portal *p = sl_calloc(1, sizeof(Portal));
    p->pool = c->server->cfg.statements;
    arena_init(&p->arena, 4096);
    p->e.name = sl_strdup(pname);
    p->stmt = ps;
    ps->refs++;

    int16_t npf = pgw_get_int16(r);
    int16_t *pformats = npf > 0 ? ARENA_ARRAY(&p->arena, int16_t, npf) : NULL;
    for (int i = 0; i < npf; i++)
        pformats[i] = pgw_get_int16(r);
    int16_t nparams = pgw_get_int16(r);
    if (r->err || npf < 0 || nparams < 0 || (npf > 1 && npf != nparams)) {
        portal_free(p);
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Bind message");
        return;
    }
    p->nparams = nparams;
    p->params = ARENA_ARRAY(&p->arena, ParamValue, nparams > 0 ? nparams : 1);
    for (int i = 0; i < nparams; i++) {
        int32_t len = pgw_get_int32(r);
        ParamValue *pv = &p->params[i];
        pv->format = npf == 0 ? 0 : npf == 1 ? pformats[0] : pformats[i];
        if (len == -1) {
            pv->data = NULL;
            pv->len = 0;
        } else if (len < 0) {
            r->err = true;
        } else {
            const uint8_t *bytes = pgw_get_bytes(r, (size_t)len);
            if (bytes != NULL) {
                /* Copied with a NUL after it, so text values are C strings. */
                char *copy = arena_alloc(&p->arena, (size_t)len + 1);
                memcpy(copy, bytes, (size_t)len);
                copy[len] = '\0';
                pv->data = copy;
                pv->len = len;
            }
        }
    }
    int16_t nrf = pgw_get_int16(r);
    if (nrf > 0) {
        p->formats = ARENA_ARRAY(&p->arena, int16_t, nrf);
        for (int i = 0; i < nrf; i++)
            p->formats[i] = pgw_get_int16(r);
    }
    p->nformats = nrf;
    if (!pgw_reader_done(r) || nrf < 0) {
        portal_free(p);
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Bind message");
        return;
    }
    int ncols = 0, nptypes = 0;
    const ColumnDesc *cols = NULL;
    const SlType *ptypes = NULL;
    if (ps->prep)
        rt_describe(ps->prep, &ncols, &cols, &nptypes, &ptypes);
    if (nparams != nptypes) {
        sl_error(&err, ERRCODE_PROTOCOL_VIOLATION,
                 "bind message supplies %d parameters, but prepared statement \"%s\" requires %d",
                 nparams, sname, nptypes);
    } else if (nrf > 1 && nrf != ncols) {
        sl_error(&err, ERRCODE_PROTOCOL_VIOLATION,
                 "bind message has %d result formats but query has %d columns",
                 nrf, ncols);
    } else {
        for (int i = 0; i < nrf; i++)
            if (p->formats[i] != 0 && p->formats[i] != 1)
                sl_error(&err, ERRCODE_INVALID_PARAMETER_VALUE,
                         "unsupported format code: %d", p->formats[i]);
        for (int i = 0; i < nparams; i++)
            if (p->params[i].format != 0 && p->params[i].format != 1)
                sl_error(&err, ERRCODE_INVALID_PARAMETER_VALUE,
                         "unsupported format code: %d", p->params[i].format);
    }
    if (sl_error_set(&err)) {
        portal_free(p);
        extended_error(c, &err, NULL);
        return;
    }
    if (*pname == '\0') {
        Portal *old = portal_find(c, "");
        if (old != NULL)
            portal_unlink(c, old);
    }
    names_add(&c->portals, &p->e);
    send_simple(c, PGW_MSG_BIND_COMPLETE);
}

static void handle_describe(Conn *c, PgwReader *r)
{
    uint8_t kind = pgw_get_byte(r);
    const char *name = pgw_get_cstr(r);
    SlError err = {0};
    if (!pgw_reader_done(r) || (kind != 'S' && kind != 'P')) {
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Describe message");
        return;
    }
    int ncols = 0, nparams = 0;
    const ColumnDesc *cols = NULL;
    const SlType *ptypes = NULL;
    if (kind == 'S') {
        PreparedStmt *ps = stmt_find(c, name);
        if (ps == NULL) {
            sl_error(&err, ERRCODE_UNDEFINED_PSTATEMENT,
                     "prepared statement \"%s\" does not exist", name);
            extended_error(c, &err, NULL);
            return;
        }
        if (ps->prep)
            rt_describe(ps->prep, &ncols, &cols, &nparams, &ptypes);
        size_t m = pgw_begin(&c->out, PGW_MSG_PARAM_DESC);
        pgw_put_int16(&c->out, (int16_t)nparams);
        for (int i = 0; i < nparams; i++)
            pgw_put_int32(&c->out, (int32_t)type_oid_of(ptypes[i]));
        pgw_end(&c->out, m);
        if (ps->prep != NULL && rt_returns_rows(ps->prep))
            send_row_description(c, ncols, cols, NULL, 0);
        else
            send_simple(c, PGW_MSG_NO_DATA);
        return;
    }
    Portal *p = portal_find(c, name);
    if (p == NULL) {
        sl_error(&err, ERRCODE_UNDEFINED_CURSOR, "portal \"%s\" does not exist", name);
        extended_error(c, &err, NULL);
        return;
    }
    if (p->stmt->prep)
        rt_describe(p->stmt->prep, &ncols, &cols, &nparams, &ptypes);
    if (p->stmt->prep != NULL && rt_returns_rows(p->stmt->prep))
        send_row_description(c, ncols, cols, p->formats, p->nformats);
    else
        send_simple(c, PGW_MSG_NO_DATA);
}


/* Execute of a COPY: FROM STDIN enters copy-in mode (CopyData, then
 * CopyDone or CopyFail; the client's Sync follows), TO STDOUT sends
 * CopyOutResponse, the rows as CopyData, CopyDone and CommandComplete. */
static void execute_copy(Conn *c, Portal *p, RtCopyKind ck)
{
    SlError err = {0};
    const Prepared *prep = p->stmt->prep;
    if (p->done) {
        send_command_complete(c, "COPY 0");
        return;
    }
    p->done = true;
    if (xact_statement_check(c, prep, &err) < 0) {
        extended_error(c, &err, p->stmt->sql);
        return;
    }
    if (ck == RT_COPY_IN) {
        if (copy_begin(c, prep, &err) < 0) {
            extended_error(c, &err, p->stmt->sql);
            return;
        }
        c->copy_extended = true;
        copy_in_start(c, prep);
        conn_mark_dirty(c);
        return;
    }
    char tag[64];
    send_copy_response(c, PGW_MSG_COPY_OUT_RESPONSE, prep);
    if (rt_on_worker(prep)) {
        /* on the statements' pool (job_after_cb ends the Execute) */
        if (start_statement(c, prep, p->params, p->nparams, NULL, 0, tag, sizeof(tag), &err,
                            JOB_EXECUTE, p, 0, p->stmt->sql, NULL) < 0)
            extended_error(c, &err, p->stmt->sql);
        return;
    }
    if (rt_copy_out(prep, copy_out_cb, c, tag, sizeof(tag), &err) < 0) {
        extended_error(c, &err, p->stmt->sql);
        return;
    }
    send_simple(c, PGW_MSG_COPY_DONE);
    send_command_complete(c, tag);
}

static void handle_execute(Conn *c, PgwReader *r)
{
    const char *name = pgw_get_cstr(r);
    int32_t maxrows = pgw_get_int32(r);
    SlError err = {0};
    if (!pgw_reader_done(r)) {
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Execute message");
        return;
    }
    Portal *p = portal_find(c, name);
    if (p == NULL) {
        sl_error(&err, ERRCODE_UNDEFINED_CURSOR, "portal \"%s\" does not exist", name);
        extended_error(c, &err, NULL);
        return;
    }
    activity_start(c, p->stmt->sql);
    if (p->stmt->prep == NULL) {
        send_simple(c, PGW_MSG_EMPTY_QUERY);
        return;
    }
    if (c->xact == 'E' && !p->stmt->xact_end) {
        failed_xact_error(&err);
        extended_error(c, &err, NULL);
        return;
    }
    if (p->run == NULL && rt_subscribe_name(p->stmt->prep) != NULL) {
        /* Runs on the loop until cancelled (a row limit does not apply). */
        if (start_subscribe(c, p->stmt->prep, true, &err) < 0)
            extended_error(c, &err, p->stmt->sql);
        p->done = true;
        return;
    }
    RtCopyKind ck = rt_copy_kind(p->stmt->prep);
    if (ck != RT_COPY_NONE) {
        execute_copy(c, p, ck);
        return;
    }
    if (p->done) {
        /* A second Execute of a finished portal returns no more rows. */
        send_command_complete(c, "SELECT 0");
        return;
    }
    char tag[64];
    RtRun *resume = p->run;
    p->run = NULL;
    int rc = start_statement(c, p->stmt->prep, p->params, p->nparams, p->formats, p->nformats,
                             tag, sizeof(tag), &err,
                             maxrows > 0 ? JOB_EXECUTE_LIMIT : JOB_EXECUTE, p, maxrows,
                             p->stmt->sql, resume);
    if (rc < 0) {
        p->done = true;
        extended_error(c, &err, p->stmt->sql);
        return;
    }
    if (rc == 1 || rc == 3)
        return;     /* job_after_cb or wait_done_cb finishes it */
    if (rc == 2) {
        send_simple(c, PGW_MSG_PORTAL_SUSPENDED);
        return;
    }
    p->done = true;
    send_command_complete(c, tag);
}

static void handle_close(Conn *c, PgwReader *r)
{
    uint8_t kind = pgw_get_byte(r);
    const char *name = pgw_get_cstr(r);
    if (!pgw_reader_done(r) || (kind != 'S' && kind != 'P')) {
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid Close message");
        return;
    }
    /* Closing something that does not exist is not an error. */
    if (kind == 'S') {
        PreparedStmt *ps = stmt_find(c, name);
        if (ps != NULL)
            stmt_unlink(c, ps);
    } else {
        Portal *p = portal_find(c, name);
        if (p != NULL)
            portal_unlink(c, p);
    }
    send_simple(c, PGW_MSG_CLOSE_COMPLETE);
}

/* A job ended or paused (on the loop): its rows go out.  A pause for
 * output room runs it again (now, or once the client has read); otherwise
 * what its kind says next, then the messages that waited meanwhile. */
static void job_after_cb(PoolWork *req)
{
    Job *j = req->data;
    Conn *c = j->conn;
    bool closing = c->phase == PHASE_CLOSING;
    if (!closing && j->rows.len > 0) {
        strbuf_append(&c->out, j->rows.data, j->rows.len);
        conn_mark_dirty(c);
    }
    strbuf_reset(&j->rows);
    if (j->copy_out && !closing)
        activity_copy_out(c, j->rc > 0 ? j->run : NULL);     /* pg_stat_progress_copy */
    Portal *p = j->portal;
    bool suspended = j->rc > 0 && j->kind == JOB_EXECUTE_LIMIT && j->sent >= j->maxrows;
    if (!closing && j->rc > 0 && !suspended) {
        j->parked = true;
        session_output_drained(c);
        return;
    }
    c->job = NULL;
    if (suspended && !closing) {
        p->run = j->run;
        j->run = NULL;
    }
    run_drop(c->server->cfg.statements, j->run);
    if (closing) {
        if (c->orphaned && !conn_busy(c))
            conn_free(c);
    } else {
        uv_timer_stop(&c->stmt_timer);
        ConnScope scope;
        conn_scope_enter(c, &scope);
        if (j->rc < 0) {
            if (j->kind == JOB_SIMPLE) {
                session_send_error(c, &j->err, j->sql, false);
                simple_query_end(c);
            } else {
                p->done = true;
                extended_error(c, &j->err, j->sql);
            }
        } else if (suspended) {
            send_simple(c, PGW_MSG_PORTAL_SUSPENDED);
        } else if (j->kind == JOB_SIMPLE) {
            statement_done(c);
            if (j->copy_out)
                send_simple(c, PGW_MSG_COPY_DONE);
            send_command_complete(c, j->tag);
            c->sq->next++;
            run_simple(c);
        } else {
            statement_done(c);
            execute_tag(j->tag, sizeof(j->tag), j->sent);
            p->done = true;
            if (j->copy_out)
                send_simple(c, PGW_MSG_COPY_DONE);
            send_command_complete(c, j->tag);
        }
        conn_scope_leave(c, &scope);
    }
    sl_error_clear(&j->err);
    strbuf_free(&j->rows);
    sl_free(j);
    if (!closing)
        conn_resume(c);
}

static void handle_sync(Conn *c)
{
    c->skip_to_sync = false;
    /* Portals live until the end of the transaction; outside a block, Sync
     * ends the implicit one. */
    if (c->xact == 'I')
        names_clear(&c->portals, portal_free_entry);
    send_ready(c);
}

/* ---------------------------------------------------------------------- */
/* Startup                                                                 */

/* CancelRequest: the session with that process id and secret key gets its
 * statement cancelled; a wrong key does nothing (and says nothing, as in
 * PostgreSQL). */
static void cancel_request(Conn *c, const PgwStartup *st)
{
    for (Conn *o = c->server->conns; o != NULL; o = o->next) {
        if (o != c && o->pid == st->cancel_pid && o->phase == PHASE_READY) {
            if (o->secret != st->cancel_key) {
                sl_log(LOG_DEBUG, "cancel key mismatch", "pid=%d", o->pid);
                break;
            }
            bool running = session_cancel(o);
            sl_log(LOG_INFO, "cancel request", "pid=%d running=%s", o->pid,
                   running ? "yes" : "no");
            break;
        }
    }
    conn_close(c);
}

/* One startup parameter: a bad value is FATAL, an unknown name ignored. */
static int startup_setting(Conn *c, const char *name, const char *value)
{
    SlError e = {0};
    if (strcasecmp(name, "log_min_duration_statement") == 0) {
        /* superuser-only (SET checks it); the role is not known yet */
        sl_log(LOG_DEBUG, "startup parameter ignored", "name=\"%s\"", name);
        return 0;
    }
    if (settings_set(c->settings, name, value, SET_STARTUP, false, NULL, &e) == 0)
        return 0;
    if (strcmp(e.sqlstate, ERRCODE_UNDEFINED_OBJECT) == 0) {
        sl_log(LOG_DEBUG, "startup parameter ignored", "name=\"%s\"", name);
        sl_error_clear(&e);
        return 0;
    }
    session_send_error(c, &e, NULL, true);
    sl_error_clear(&e);
    return -1;
}

/* The "options" startup parameter: -c name=value and --name=value, split
 * at blanks (a backslash escapes the next character). */
static int startup_options(Conn *c, const char *opts)
{
    char word[1024];
    const char *p = opts;
    bool want_c = false;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0')
            break;
        size_t n = 0;
        while (*p && !isspace((unsigned char)*p) && n + 1 < sizeof(word)) {
            if (*p == '\\' && p[1] != '\0')
                p++;
            word[n++] = *p++;
        }
        word[n] = '\0';
        const char *assign = NULL;
        if (want_c) {
            assign = word;
            want_c = false;
        } else if (strcmp(word, "-c") == 0) {
            want_c = true;
            continue;
        } else if (strncmp(word, "-c", 2) == 0) {
            assign = word + 2;
        } else if (strncmp(word, "--", 2) == 0) {
            assign = word + 2;
        }
        char *eq = assign ? strchr(assign, '=') : NULL;
        if (eq == NULL)
            continue;
        *eq = '\0';
        for (char *d = (char *)assign; *d; d++)
            if (*d == '-')
                *d = '_';
        if (startup_setting(c, assign, eq + 1) < 0)
            return -1;
    }
    return 0;
}

static void startup(Conn *c, const PgwStartup *st)
{
    const char *user = NULL, *database = NULL, *appname = "";
    for (int i = 0; i < st->nparams; i++) {
        if (strcmp(st->names[i], "user") == 0)
            user = st->values[i];
        else if (strcmp(st->names[i], "database") == 0)
            database = st->values[i];
        else if (strcmp(st->names[i], "application_name") == 0)
            appname = st->values[i];
    }
    if (c->too_many) {
        fatal(c, ERRCODE_TOO_MANY_CONNECTIONS, "sorry, too many clients already");
        return;
    }
    /* Names and values become text (a role name, a database name,
     * settings): UTF-8, as every text entering the server.  application_name
     * is not refused: it is cleaned to printable ASCII, as PostgreSQL does. */
    for (int i = 0; i < st->nparams; i++) {
        int parts = strcmp(st->names[i], "application_name") == 0 ? 1 : 2;
        for (int k = 0; k < parts; k++) {
            const char *s = k == 0 ? st->names[i] : st->values[i];
            size_t n = strlen(s), bad = sl_utf8_invalid(s, n);
            if (bad < n) {
                char msg[96];
                sl_utf8_message(s + bad, n - bad, msg, sizeof(msg));
                fatal(c, ERRCODE_CHARACTER_NOT_IN_REPERTOIRE, msg);
                return;
            }
        }
    }
    if (user == NULL || *user == '\0') {
        fatal(c, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
              "no PostgreSQL user name specified in startup packet");
        return;
    }
    c->user = sl_strdup(user);
    c->database = sl_strdup(database && *database ? database : user);
    c->application_name = sl_strdup(appname);
    /* The other options set parameters, as PGOPTIONS's -c name=value do;
     * what RESET returns to.  Unknown names are ignored (PostgreSQL refuses
     * them): drivers send parameters sluice does not have. */
    c->settings = settings_new(c->user);
    if (c->server->cfg.log_min_duration_statement != -1) {
        char ms[16];
        snprintf(ms, sizeof(ms), "%d", c->server->cfg.log_min_duration_statement);
        SlError e = {0};
        settings_set(c->settings, "log_min_duration_statement", ms, SET_STARTUP, false, NULL,
                     &e);
        sl_error_clear(&e);
    }
    for (int i = 0; i < st->nparams; i++) {
        const char *nm = st->names[i];
        if (strcmp(nm, "user") == 0 || strcmp(nm, "database") == 0 ||
            strncmp(nm, "_pq_.", 5) == 0 || strcmp(nm, "replication") == 0)
            continue;
        if (strcmp(nm, "options") == 0) {
            if (startup_options(c, st->values[i]) < 0)
                return;
            continue;
        }
        if (startup_setting(c, nm, st->values[i]) < 0)
            return;
    }

    /* A client asking for a newer minor version gets told we speak 3.0. */
    int minor = st->code & 0xFFFF;
    int unknown_opts = 0;
    for (int i = 0; i < st->nparams; i++)
        if (strncmp(st->names[i], "_pq_.", 5) == 0)
            unknown_opts++;
    if (minor > 0 || unknown_opts > 0) {
        size_t m = pgw_begin(&c->out, PGW_MSG_NEGOTIATE_VERSION);
        pgw_put_int32(&c->out, 0);
        pgw_put_int32(&c->out, unknown_opts);
        for (int i = 0; i < st->nparams; i++)
            if (strncmp(st->names[i], "_pq_.", 5) == 0)
                pgw_put_cstr(&c->out, st->names[i]);
        pgw_end(&c->out, m);
    }
    auth_start(c);
}

void session_describe(Conn *c, RtSession *out, char *addr, size_t addrsize)
{
    memset(out, 0, sizeof(*out));
    out->pid = c->pid;
    out->user = c->user;
    out->database = c->database;
    out->application_name = c->application_name ? c->application_name : "";
    snprintf(addr, addrsize, "%s", c->peer);
    char *colon = strrchr(addr, ':');
    if (colon != NULL) {
        *colon = '\0';
        out->client_port = atoi(colon + 1);
    }
    out->client_addr = addr[0] ? addr : NULL;
    out->connected_at = c->connected_us;
    out->role_oid = c->role_oid;
    out->state = c->active || c->act_running ? "active" : c->xact == 'T' ? "idle in transaction"
               : c->xact == 'E' ? "idle in transaction (aborted)" : "idle";
}

void session_auth_ok(Conn *c)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    pthread_mutex_lock(&c->server->activity_mu);
    c->connected_us = (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
    c->phase = PHASE_READY;
    pthread_mutex_unlock(&c->server->activity_mu);
    size_t m = pgw_begin(&c->out, PGW_MSG_AUTHENTICATION);
    pgw_put_int32(&c->out, 0);              /* AuthenticationOk */
    pgw_end(&c->out, m);
    settings_set_fixed(c->settings, "is_superuser", c->superuser ? "on" : "off");
    /* Every reported parameter (application_name, client_encoding,
     * DateStyle, IntervalStyle, TimeZone, server_version, ...). */
    int iter = 0;
    const char *name, *value;
    while (settings_next_report(c->settings, &iter, &name, &value))
        send_param_status(c, name, value);
    m = pgw_begin(&c->out, PGW_MSG_BACKEND_KEY);
    pgw_put_int32(&c->out, c->pid);
    pgw_put_int32(&c->out, c->secret);
    pgw_end(&c->out, m);
    sl_log(LOG_INFO, "session started", "peer=%s pid=%d user=\"%s\" database=\"%s\" tls=%s",
           c->peer, c->pid, log_quote(c->user), log_quote(c->database),
           c->ssl != NULL ? "on" : "off");
    send_ready(c);
}

/* Handles one startup-phase packet; more: bytes follow it in the input.
 * Returns false if the connection ends. */
static bool consume_startup(Conn *c, const uint8_t *pkt, size_t len, bool more)
{
    PgwStartup st;
    const char *why = NULL;
    if (pgw_parse_startup(pkt, len, &st, &why) < 0) {
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, why);
        return false;
    }
    switch (st.code) {
    case PGW_SSL_REQUEST_CODE:
        if (c->ssl != NULL) {
            fatal(c, ERRCODE_PROTOCOL_VIOLATION,
                  "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0");
            return false;
        }
        if (c->server->ssl_ctx == NULL) {
            strbuf_putc(&c->out, 'N');
            conn_mark_dirty(c);
            return true;
        }
        if (more) {
            /* Sent before the handshake, so in clear: a man in the middle
             * may have put it there (CVE-2021-23214). */
            SlError e = {0};
            sl_error(&e, ERRCODE_PROTOCOL_VIOLATION,
                     "received unencrypted data after SSL request");
            sl_error_detail(&e, "This could be either a client-software bug or evidence "
                                "of an attempted man-in-the-middle attack.");
            session_send_error(c, &e, NULL, true);
            sl_error_clear(&e);
            sl_log(LOG_WARN, "connection closed", "peer=%s reason=\"%s\"", c->peer,
                   "received unencrypted data after SSL request");
            return false;
        }
        strbuf_putc(&c->out, 'S');
        conn_start_tls(c);
        return false;       /* nothing more in c->in: the client waits */
    case PGW_GSSENC_REQUEST_CODE:
        strbuf_putc(&c->out, 'N');
        conn_mark_dirty(c);
        return true;
    case PGW_CANCEL_REQUEST_CODE:
        cancel_request(c, &st);
        return false;
    default:
        startup(c, &st);
        return c->phase != PHASE_STARTUP;
    }
}

/* ---------------------------------------------------------------------- */
/* Dispatch                                                                */

static void dispatch(Conn *c, uint8_t type, const uint8_t *body, size_t len)
{
    PgwReader r;
    pgw_reader_init(&r, body, len);
    rt_set_role(c->role_oid);   /* the role this message's statements run as */
    if (c->copy != NULL && type != PGW_MSG_TERMINATE) {
        copy_in_message(c, type, body, len);
        return;
    }
    /* After a failed copy-in the client may still be sending its data. */
    if (type == PGW_MSG_COPY_DATA || type == PGW_MSG_COPY_DONE || type == PGW_MSG_COPY_FAIL) {
        if (c->copy_drop)
            return;
    } else {
        c->copy_drop = false;
    }
    if (c->skip_to_sync && type != PGW_MSG_SYNC && type != PGW_MSG_TERMINATE)
        return;
    switch (type) {
    case PGW_MSG_QUERY:     handle_query(c, &r); break;
    case PGW_MSG_PARSE:     handle_parse(c, &r); break;
    case PGW_MSG_BIND:      handle_bind(c, &r); break;
    case PGW_MSG_DESCRIBE:  handle_describe(c, &r); break;
    case PGW_MSG_EXECUTE:   handle_execute(c, &r); break;
    case PGW_MSG_CLOSE:     handle_close(c, &r); break;
    case PGW_MSG_SYNC:      handle_sync(c); break;
    case PGW_MSG_FLUSH:     conn_mark_dirty(c); break;
    case PGW_MSG_TERMINATE: conn_close(c); break;
    default: {
        char msg[64];
        snprintf(msg, sizeof(msg), "invalid frontend message type %d", type);
        fatal(c, ERRCODE_PROTOCOL_VIOLATION, msg);
        break;
    }
    }
}

size_t session_consume(Conn *c)
{
    size_t used = 0;
    uint64_t start = uv_hrtime();
    SlSettings *old = settings_enter(c->settings);
    c->yielded = false;
    while (c->phase != PHASE_CLOSING && !c->close_after_flush && c->job == NULL &&
           c->wait == NULL && !c->auth_busy && c->sub == NULL) {
        const uint8_t *p = c->in + used;
        size_t avail = c->in_len - used;
        size_t total = 0;
        if (c->phase == PHASE_STARTUP) {
            PgwFrame f = pgw_frame_startup(p, avail, &total);
            if (f == PGW_FRAME_NEED_MORE)
                break;
            if (f == PGW_FRAME_BAD_LENGTH) {
                fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid length of startup packet");
                break;
            }
            used += total;
            if (!consume_startup(c, p, total, used < c->in_len))
                break;
            continue;
        }
        if (c->phase == PHASE_AUTH) {
            PgwFrame f = pgw_frame_message(p, avail, AUTH_MAX_MESSAGE, &total);
            if (f == PGW_FRAME_NEED_MORE)
                break;
            if (f == PGW_FRAME_BAD_LENGTH) {
                fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid message length");
                break;
            }
            used += total;
            if (p[0] == PGW_MSG_TERMINATE) {
                conn_close(c);
                break;
            }
            auth_message(c, p[0], p + 5, total - 5);
            continue;
        }
        PgwFrame f = pgw_frame_message(p, avail, c->server->cfg.max_message_size, &total);
        if (c->server->closing && (f != PGW_FRAME_OK || (p[0] != PGW_MSG_SYNC &&
                                                        p[0] != PGW_MSG_FLUSH))) {
            /* Shutting down: the statement in flight was answered (and
             * its Sync, if it waited); nothing new starts. */
            shutdown_fatal(c);
            break;
        }
        if (f == PGW_FRAME_NEED_MORE)
            break;
        if (f == PGW_FRAME_BAD_LENGTH) {
            fatal(c, ERRCODE_PROTOCOL_VIOLATION, "invalid message length");
            break;
        }
        used += total;
        RtSession rs;
        char addr[64];
        c->active = true;
        session_describe(c, &rs, addr, sizeof(addr));
        rt_session_set(c->server->rt, &rs);
        uv_timer_stop(&c->idle_timer);
        dispatch(c, p[0], p + 5, total - 5);
        rt_session_set(c->server->rt, NULL);
        c->active = false;
        if (used < c->in_len && uv_hrtime() - start > TURN_BUDGET_NS &&
            c->phase == PHASE_READY && !c->close_after_flush && c->job == NULL &&
            c->wait == NULL && c->sub == NULL) {
            /* The rest next turn: other clients are served in between. */
            c->yielded = true;
            conn_resume_later(c);
            break;
        }
    }
    settings_enter(old);
    if (c->out.len > 0)
        conn_mark_dirty(c);
    return used;
}

void session_init(Conn *c)
{
    c->phase = PHASE_STARTUP;
    c->xact = 'I';
}

void session_free(Conn *c)
{
    subscribe_free(c);
    if (c->wait != NULL) {
        c->wait->c = NULL;      /* the append finishes without us */
        if (c->wait->kind == WAIT_COPY && rt_append_is_copy(c->wait->ap)) {
            c->wait->copy = c->copy;    /* a worker sorts its part: freed after */
            c->copy = NULL;
        }
    }
    if (c->copy != NULL)
        rt_copy_abort(c->copy);
    if (c->sq != NULL) {
        arena_destroy(&c->sq->arena);
        sl_free(c->sq);
    }
    names_clear(&c->portals, portal_free_entry);
    names_clear(&c->stmts, stmt_release_entry);
    rt_xact_free(c->tx);       /* an open block's writes are dropped */
    c->tx = NULL;
    savepoints_clear(c);
    sl_free(c->savepoints);
    c->savepoints = NULL;
    auth_conn_free(c);
    settings_free(c->settings);
    sl_free(c->user);
    sl_free(c->database);
    sl_free(c->application_name);
    sl_free(c->act_query);
}
