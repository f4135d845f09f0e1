/*
 * subscribe.c -- SUBSCRIBE name: the committed changes of a continuous
 * query's result, pushed to the client as they happen (docs/sql-reference.md,
 * "SUBSCRIBE").
 *
 *   subscribe_start    begin, once the RowDescription went out (a simple
 *                      Query, or Describe before an Execute); WITH
 *                      (snapshot): the result table's rows first
 *   subscribe_cancel   a CancelRequest for the connection: end with 57014
 *   subscribe_free     the connection is closing: drop the subscription
 *
 * A subscription is a statement that runs until the client cancels it or
 * goes away: from its start, after each committed batch of the query the
 * runtime calls deliver (on the loop), which appends one DataRow per change
 * -- batch_id, kind ('insert' or 'update'), then the query's result
 * columns, in text -- to the connection's output.  Nothing runs on behalf
 * of the subscriber between batches, so it never holds the loop or other
 * clients.  While it runs the connection consumes no input (a pipelined
 * Sync waits in the input buffer, as it would behind any long statement);
 * disconnecting is seen by the socket and frees the subscription.
 *
 * The rows of a batch are written to the socket as soon as they are
 * formatted (conn_flush_now), not at the end of the loop turn.
 *
 * Privileges: before each batch the subscriber's role must still have
 * SELECT on the query (rt_subscribe_check); a REVOKE ends the subscription
 * with 42501 at the next batch.
 *
 * Backpressure: when a batch arrives while more than max_output_buffer
 * bytes wait for the client (not yet written, in flight, or TLS records),
 * the subscription fails with 54000 instead of buffering without bound.
 *
 * An ended subscription sends its ErrorResponse and then, over the simple
 * protocol, ReadyForQuery (the rest of the query string is not run, as
 * after any error); over the extended protocol it skips to Sync.  Then the
 * input that waited is consumed in the next loop turn (conn_resume_later): a
 * subscription often ends inside the runtime's delivery to its query's
 * subscribers (or its DDL), which must not run the client's next
 * statements in the middle.
 *
 * Lifetime: the runtime's subscriber entry points at the Subscription (not
 * the Conn).  The entry is removed either by rt_unsubscribe (any end on
 * our side, including the connection closing) or by the runtime itself,
 * which then calls deliver once with rows NULL; a Subscription is freed
 * only after one of the two, so no entry outlives its Conn.
 */
#include "pgw.h"
#include "sluice/log.h"

#include <inttypes.h>
#include <stdio.h>

struct Subscription {
    Conn  *c;
    RtSub *sub;                 /* NULL once the runtime ended it */
    bool   extended;
    char  *name;
    int64_t batches, rows;
};

/* Ends c's subscription with error e (NULL: silently, the connection is
 * going away).  The runtime's entry goes first, unless it ended it. */
static void sub_end(Conn *c, const SlError *e)
{
    Subscription *s = c->sub;
    if (s == NULL)
        return;
    c->sub = NULL;
    if (s->sub != NULL)
        rt_unsubscribe(s->sub);
    sl_log(LOG_INFO, "subscribe ended",
           "pid=%d query=%s batches=%" PRId64 " rows=%" PRId64 " sqlstate=%s", c->pid,
           log_value(s->name), s->batches, s->rows, e ? e->sqlstate : "none");
    bool extended = s->extended;
    sl_free(s->name);
    sl_free(s);
    if (e == NULL)
        return;
    session_statement_failed(c, e, extended);
    conn_resume_later(c);   /* the input that waited, once the caller is done */
}

static void deliver(void *arg, int64_t batch_id, const char *kinds, const Batch *rows)
{
    Subscription *s = arg;
    Conn *c = s->c;
    SlError err = {0};
    if (rows == NULL) {
        s->sub = NULL;      /* the runtime freed its entry */
        sl_error(&err, ERRCODE_ADMIN_SHUTDOWN,
                 "continuous query \"%s\" stopped: the subscription ends", s->name);
        sub_end(c, &err);
        sl_error_clear(&err);
        return;
    }
    if (rt_subscribe_check(c->server->rt, s->name, c->role_oid, &err) < 0) {
        sub_end(c, &err);
        sl_error_clear(&err);
        return;
    }
    size_t pending = c->out.len + c->out_inflight + c->tls_out.len;
    if (pending > c->server->cfg.max_output_buffer) {
        sl_error(&err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                 "SUBSCRIBE to \"%s\" fell behind: %zu bytes wait for the client", s->name,
                 pending);
        sl_error_detail(&err, "At most max_output_buffer (%zu bytes) may wait.",
                        c->server->cfg.max_output_buffer);
        sl_error_hint(&err, "Read the rows as they come, or raise max_output_buffer.");
        sub_end(c, &err);
        sl_error_clear(&err);
        return;
    }
    uint32_t n = rows->nrows;
    Arena a;
    arena_init(&a, 4096);
    Batch b = {n, rows->ncols + 2, ARENA_ARRAY(&a, Vector, rows->ncols + 2)};
    vector_init(&b.cols[0], &a, sl_type(TYPE_INT8), n ? n : 1, true);
    vector_init(&b.cols[1], &a, sl_type(TYPE_TEXT), n ? n : 1, true);
    for (uint32_t i = 0; i < n; i++) {
        b.cols[0].nulls[i] = b.cols[1].nulls[i] = 0;
        b.cols[0].v.i64[i] = batch_id;
        const char *k = kinds[i] == 'U' ? "update" : kinds[i] == 'D' ? "delete" : "insert";
        b.cols[1].v.str[i] = (SlStr){k, (uint32_t)strlen(k)};
    }
    b.cols[0].len = b.cols[1].len = n;
    for (uint32_t col = 0; col < rows->ncols; col++)
        b.cols[col + 2] = rows->cols[col];
    session_send_text_rows(c, &b);
    arena_destroy(&a);
    s->batches++;
    s->rows += n;
    /* Out now, not at the end of the turn: the batch is committed, and the
     * loop's next step may be a synced write (the commit-log entry, the
     * next batch's offset-log entry) that would hold the rows back. */
    conn_flush_now(c);
}

int subscribe_start(Conn *c, const char *name, bool snapshot, bool extended, SlError *err)
{
    Subscription *s = sl_calloc(1, sizeof(Subscription));
    s->c = c;
    s->extended = extended;
    s->name = sl_strdup(name);
    if (rt_subscribe(c->server->rt->cq, name, snapshot, deliver, s, &s->sub, err) < 0) {
        sl_free(s->name);
        sl_free(s);
        return -1;
    }
    c->sub = s;
    sl_log(LOG_INFO, "subscribe started", "pid=%d query=%s snapshot=%s", c->pid,
           log_value(name), snapshot ? "true" : "false");
    conn_mark_dirty(c);     /* the RowDescription */
    rt_subscribe_go(s->sub);    /* the snapshot may be sent (or fail) here */
    return 0;
}

bool subscribe_cancel(Conn *c)
{
    if (c->sub == NULL)
        return false;
    SlError err = {0};
    sl_error(&err, ERRCODE_QUERY_CANCELED, "canceling statement due to user request");
    sub_end(c, &err);
    sl_error_clear(&err);
    return true;
}

void subscribe_free(Conn *c)
{
    sub_end(c, NULL);
}
