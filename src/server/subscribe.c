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
 *   subscribe_drained  the client read its output: send the batches held
 *                      back (COPY form)
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
 * COPY (SUBSCRIBE name ...) TO STDOUT (subscribe_start with copy): the
 * same rows and columns, each a CopyData line in COPY's text format
 * (rt_copy_text_line), after the CopyOutResponse the session sent; a batch
 * with no changes sends nothing.  Its backpressure holds back instead of
 * failing at once: while more than max_output_buffer bytes wait for the
 * client, a batch's lines wait in the subscription (formatted), and go out
 * once the client has read (subscribe_drained); when more than
 * SUBSCRIBE_COPY_PENDING batches wait, the COPY ends with 53200.  A COPY
 * never ends by itself: cancel (57014), DROP of the query (57P01), a REVOKE
 * (42501) or that limit end it with an ErrorResponse, as PostgreSQL ends a
 * failed COPY TO.
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

/* COPY (SUBSCRIBE): how many committed batches may wait, held back, for a
 * client that does not read (docs/sql-reference.md, "COPY (SUBSCRIBE)"). */
#define SUBSCRIBE_COPY_PENDING 64

struct Subscription {
    Conn  *c;
    RtSub *sub;                 /* NULL once the runtime ended it */
    bool   extended;
    bool   copy;                /* COPY (SUBSCRIBE ...) TO STDOUT */
    char  *name;
    int64_t batches, rows;
    StrBuf  held;               /* copy: CopyData of the batches held back */
    int     nheld;              /* ... and how many batches they are */
};

static size_t output_waiting(const Conn *c)
{
    return c->out.len + c->out_inflight + c->tls_out.len;
}

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
    strbuf_free(&s->held);
    sl_free(s->name);
    sl_free(s);
    if (e == NULL)
        return;
    session_statement_failed(c, e, extended);
    conn_resume_later(c);   /* the input that waited, once the caller is done */
}

static const char *kind_name(char k)
{
    return k == 'U' ? "update" : k == 'D' ? "delete" : "insert";
}

/* The COPY form: the batches held back go out while the client's output
 * is under max_output_buffer. */
static void copy_send_held(Subscription *s)
{
    Conn *c = s->c;
    if (s->held.len == 0 || output_waiting(c) > c->server->cfg.max_output_buffer)
        return;
    strbuf_append(&c->out, s->held.data, s->held.len);
    strbuf_reset(&s->held);
    s->nheld = 0;
    conn_flush_now(c);
}

/* One batch's changes as CopyData lines: batch_id, kind, the columns. */
static void deliver_copy(Subscription *s, int64_t batch_id, const char *kinds,
                         const Batch *rows)
{
    Conn *c = s->c;
    if (rows->nrows == 0)
        return;
    StrBuf line, val;
    strbuf_init(&line);
    strbuf_init(&val);
    for (uint32_t i = 0; i < rows->nrows; i++) {
        strbuf_reset(&line);
        strbuf_printf(&line, "%" PRId64 "\t%s\t", batch_id, kind_name(kinds[i]));
        rt_copy_text_line(&line, &val, rows, i);
        size_t m = pgw_begin(&s->held, PGW_MSG_COPY_DATA);
        pgw_put_bytes(&s->held, line.data, line.len);
        pgw_end(&s->held, m);
    }
    strbuf_free(&line);
    strbuf_free(&val);
    s->nheld++;
    s->batches++;
    s->rows += rows->nrows;
    copy_send_held(s);
    if (s->nheld > SUBSCRIBE_COPY_PENDING) {
        SlError err = {0};
        sl_error(&err, ERRCODE_OUT_OF_MEMORY,
                 "COPY (SUBSCRIBE %s) fell behind: more than %d batches wait for the client",
                 s->name, SUBSCRIBE_COPY_PENDING);
        sl_error_detail(&err, "%zu bytes of the client's output are unread; at most %d "
                              "committed batches are held back for it.",
                        output_waiting(c), SUBSCRIBE_COPY_PENDING);
        sl_error_hint(&err, "Read the rows as they come, or raise max_output_buffer.");
        sub_end(c, &err);
        sl_error_clear(&err);
    }
}

void subscribe_drained(Conn *c)
{
    if (c->sub != NULL && c->sub->copy)
        copy_send_held(c->sub);
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
    if (s->copy) {
        deliver_copy(s, batch_id, kinds, rows);
        return;
    }
    size_t pending = output_waiting(c);
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
        const char *k = kind_name(kinds[i]);
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

int subscribe_start(Conn *c, const char *name, bool snapshot, bool extended, bool copy,
                    SlError *err)
{
    Subscription *s = sl_calloc(1, sizeof(Subscription));
    s->c = c;
    s->extended = extended;
    s->copy = copy;
    strbuf_init(&s->held);
    s->name = sl_strdup(name);
    if (rt_subscribe(c->server->rt->cq, name, snapshot, deliver, s, &s->sub, err) < 0) {
        strbuf_free(&s->held);
        sl_free(s->name);
        sl_free(s);
        return -1;
    }
    c->sub = s;
    sl_log(LOG_INFO, "subscribe started", "pid=%d query=%s snapshot=%s copy=%s", c->pid,
           log_value(name), snapshot ? "true" : "false", copy ? "true" : "false");
    conn_mark_dirty(c);     /* the RowDescription or CopyOutResponse */
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
