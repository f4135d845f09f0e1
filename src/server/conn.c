/*
 * conn.c -- one client connection's socket I/O.
 *
 *   conn_accept     accept a pending connection on the server's listener
 *   conn_mark_dirty queue the connection for the end-of-turn flush
 *   conn_flush_all  write every dirty connection's output (uv_check hook)
 *   conn_flush_now  write one connection's output now (SUBSCRIBE: a batch's
 *                   rows, before the loop does its next blocking step)
 *   conn_start_tls  write the queued 'S' in clear, then switch to TLS
 *   conn_close      close the socket; memory is freed in the close callback
 *   conn_resume     go on with input that waited while the session did
 *                   (a deferred append, session.c)
 *   conn_resume_later  the same next loop turn, from the server's idle
 *                   handle: after a session used its turn (session.c), or
 *                   ended a SUBSCRIBE inside the runtime's delivery
 *                   (subscribe.c)
 *   conn_resume_all the idle handle's work: resume those connections
 *
 * Input is kept in one growable buffer; the session consumes whole packets
 * from its front.  Output is built as whole messages in c->out and handed to
 * uv_write once per loop turn.  When a client stops reading and the bytes in
 * flight pass max_output_buffer, we stop reading from it until they drain:
 * a slow reader slows only itself.  After each write, the session hears
 * that output drained (session_output_drained): a statement paused for a
 * slow reader goes on.
 *
 * A connection that ends with a message (close_after_flush: a FATAL,
 * shutdown's 57P01 among them) is closed lingering, as web servers close:
 * once the message is written, the write side is shut (FIN) and whatever
 * the client still sends -- its next query, already on the way -- is read
 * and dropped until it closes, or for a second (LINGER_MS).  Closing at
 * once with unread input makes the kernel send a reset, which makes the
 * client's kernel drop the FATAL it had not read yet: the client would see
 * "connection reset" instead of the reason (tests/test_shutdown.py).
 *
 * With TLS (tls.c) the socket's bytes are read into raw_in and fed to
 * OpenSSL, which appends the plaintext to the same input buffer; at flush
 * time c->out is encrypted into tls_out, which is what goes to uv_write.
 */
#include "pgw.h"
#include "sluice/log.h"

#include <openssl/rand.h>

typedef struct WriteReq {
    uv_write_t req;
    Conn      *conn;
    size_t     len;
    char      *data;
} WriteReq;

void server_conn_gone(Server *s);

#define RAW_IN_SIZE 65536
/* How long a closing connection's input is read and dropped. */
#define LINGER_MS 1000
/* The input a connection keeps while its statement runs. */
#define QUEUED_INPUT_MAX (256 * 1024)

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    Conn *c = h->data;
    if (c->ssl != NULL) {
        buf->base = (char *)c->raw_in;
        buf->len = RAW_IN_SIZE;
        return;
    }
    size_t want = suggested < 65536 ? 65536 : suggested;
    if (c->in_cap - c->in_len < want) {
        size_t cap = c->in_cap ? c->in_cap : 65536;
        while (cap - c->in_len < want)
            cap *= 2;
        c->in = sl_realloc(c->in, cap);
        c->in_cap = cap;
    }
    buf->base = (char *)c->in + c->in_len;
    buf->len = c->in_cap - c->in_len;
}

static void update_reading(Conn *c);

/* TLS failed or the client closed it: send the alert OpenSSL queued,
 * nothing more, then close. */
static void tls_failed(Conn *c)
{
    strbuf_reset(&c->out);
    c->close_after_flush = true;
    c->tls_dead = true;
    conn_mark_dirty(c);
    update_reading(c);
}

/* Hands the whole packets in c->in to the session and drops them from the
 * buffer; -1 when the connection closed meanwhile. */
static int consume_input(Conn *c)
{
    size_t used = session_consume(c);
    if (c->phase == PHASE_CLOSING)
        return -1;
    if (used > 0) {
        memmove(c->in, c->in + used, c->in_len - used);
        c->in_len -= used;
    }
    return 0;
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    Conn *c = stream->data;
    SL_UNUSED(buf);
    if (c->lingering) {
        if (nread < 0)
            conn_close(c);  /* the client closed too (or reset) */
        return;             /* dropped: on_alloc's buffer is reused */
    }
    if (nread < 0) {
        if (nread != UV_EOF)
            sl_log(LOG_DEBUG, "read error", "peer=%s error=\"%s\"", c->peer,
                   uv_strerror((int)nread));
        conn_close(c);
        return;
    }
    if (nread == 0 || c->phase == PHASE_CLOSING)
        return;
    if (c->ssl != NULL && (!c->tls_up || c->tls_busy)) {
        /* The handshake: on the thread pool (tls.c), then conn_tls_step_done. */
        tls_handshake_feed(c, (const uint8_t *)buf->base, (size_t)nread);
        update_reading(c);
        return;
    }
    if (c->ssl != NULL) {
        int rc = tls_conn_read(c, (const uint8_t *)buf->base, (size_t)nread, &c->tls_out);
        if (c->tls_out.len > 0)
            conn_mark_dirty(c);
        if (rc < 0) {
            tls_failed(c);
            return;
        }
    } else {
        c->in_len += (size_t)nread;
    }
    if (consume_input(c) < 0)
        return;
    /* Give back memory a huge message left behind. */
    if (c->in_len == 0 && c->in_cap > (1u << 20)) {
        sl_free(c->in);
        c->in = NULL;
        c->in_cap = 0;
    }
    update_reading(c);
}

static void update_reading(Conn *c)
{
    if (c->phase == PHASE_CLOSING || c->lingering)
        return;
    /* While a statement (or a SUBSCRIBE, or a deferred append: a COPY's
     * part) runs, messages wait in c->in, up to 256 KiB. */
    bool want = !c->close_after_flush && !(c->tls_busy && c->tls_pending.len >= RAW_IN_SIZE) &&
                c->out_inflight + c->out.len + c->tls_out.len <=
                    c->server->cfg.max_output_buffer &&
                ((c->job == NULL && c->wait == NULL && c->sub == NULL && !c->yielded) ||
                 c->in_len < QUEUED_INPUT_MAX);
    if (want && !c->reading) {
        if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
            c->reading = true;
    } else if (!want && c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
    }
}

static void on_closed(uv_handle_t *h)
{
    Conn *c = h->data;
    if (--c->open_handles > 0)
        return;
    if (conn_busy(c)) {
        c->orphaned = true;     /* the job's end frees it */
        return;
    }
    conn_free(c);
}

void conn_free(Conn *c)
{
    Server *s = c->server;
    if (c->in_dirty) {
        Conn **pp = &s->dirty;
        while (*pp != c)
            pp = &(*pp)->next_dirty;
        *pp = c->next_dirty;
    }
    if (c->in_resume) {
        Conn **pp = &s->resume;
        while (*pp != c)
            pp = &(*pp)->next_resume;
        *pp = c->next_resume;
    }
    session_free(c);
    tls_conn_free(c);
    strbuf_free(&c->out);
    strbuf_free(&c->tls_out);
    strbuf_free(&c->tls_pending);
    sl_free(c->raw_in);
    sl_free(c->in);
    sl_free(c);
    s->nconns--;
    server_conn_gone(s);
}

void conn_close(Conn *c)
{
    if (c->phase == PHASE_CLOSING)
        return;
    Server *s = c->server;
    c->phase = PHASE_CLOSING;
    activity_unlink(s, c);
    activity_end(c);
    session_closing(c);
    /* It may still sit in the dirty list; conn_flush_all skips it. */
    c->open_handles = 3;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
    uv_close((uv_handle_t *)&c->stmt_timer, on_closed);
    uv_close((uv_handle_t *)&c->idle_timer, on_closed);
}

void conn_tls_step_done(Conn *c, int rc)
{
    if (c->tls_out.len > 0)
        conn_mark_dirty(c);
    if (rc < 0) {
        tls_failed(c);
        return;
    }
    /* Bytes that came during the step: the handshake's next flight, or
     * (once it is up) the first application data. */
    size_t n = c->tls_pending.len;
    char *pending = n > 0 ? strbuf_steal(&c->tls_pending, &n) : NULL;
    if (!c->tls_up) {
        if (pending != NULL)
            tls_handshake_feed(c, (const uint8_t *)pending, n);
        sl_free(pending);
        update_reading(c);
        return;
    }
    int r = tls_conn_read(c, (const uint8_t *)pending, pending ? n : 0, &c->tls_out);
    sl_free(pending);
    if (c->tls_out.len > 0)
        conn_mark_dirty(c);
    if (r < 0) {
        tls_failed(c);
        return;
    }
    conn_resume(c);
}

void conn_resume(Conn *c)
{
    if (c->phase == PHASE_CLOSING || consume_input(c) < 0)
        return;
    update_reading(c);
}

static void on_resume_idle(uv_idle_t *h)
{
    conn_resume_all(h->data);
}

void conn_resume_later(Conn *c)
{
    Server *s = c->server;
    if (c->in_resume || c->phase == PHASE_CLOSING)
        return;
    c->in_resume = true;
    c->next_resume = s->resume;
    s->resume = c;
    uv_idle_start(&s->resume_idle, on_resume_idle);
}

void conn_resume_all(Server *s)
{
    Conn *c = s->resume;
    s->resume = NULL;
    uv_idle_stop(&s->resume_idle);
    /* A connection closed meanwhile is freed only in a close callback (a
     * later phase of the loop), never under conn_resume: the list holds. */
    while (c != NULL) {
        Conn *next = c->next_resume;
        c->in_resume = false;
        c->next_resume = NULL;
        conn_resume(c);
        c = next;
    }
}

void conn_accept(Server *s)
{
    Conn *c = sl_calloc(1, sizeof(Conn));
    c->server = s;
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    uv_timer_init(s->loop, &c->stmt_timer);
    c->stmt_timer.data = c;
    uv_timer_init(s->loop, &c->idle_timer);
    c->idle_timer.data = c;
    strbuf_init(&c->out);
    strbuf_init(&c->tls_out);
    strbuf_init(&c->tls_pending);
    s->nconns++;
    activity_link(s, c);
    if (uv_accept((uv_stream_t *)&s->listener, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);

    struct sockaddr_storage peer;
    int len = sizeof(peer);
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&peer, &len) == 0) {
        c->peer_addr = peer;
        char host[48] = "?";
        int port = 0;
        if (peer.ss_family == AF_INET) {
            uv_ip4_name((struct sockaddr_in *)&peer, host, sizeof(host));
            port = ntohs(((struct sockaddr_in *)&peer)->sin_port);
        } else if (peer.ss_family == AF_INET6) {
            uv_ip6_name((struct sockaddr_in6 *)&peer, host, sizeof(host));
            port = ntohs(((struct sockaddr_in6 *)&peer)->sin6_port);
        }
        snprintf(c->peer, sizeof(c->peer), "%s:%d", host, port);
    }
    c->accepted_ms = uv_now(s->loop);
    c->pid = s->next_pid++;
    if (RAND_bytes((unsigned char *)&c->secret, sizeof(c->secret)) != 1)
        sl_panic("RAND_bytes failed");
    session_init(c);
    sl_log(LOG_DEBUG, "connection accepted", "peer=%s pid=%d", c->peer, c->pid);
    /* Refused at its StartupMessage, after any SSL negotiation, as in
     * PostgreSQL: a client that starts with SSLRequest expects 'S' or 'N'
     * first.  A CancelRequest still goes through. */
    c->too_many = s->nconns > s->cfg.max_connections;
    update_reading(c);
}

void conn_mark_dirty(Conn *c)
{
    if (c->in_dirty)
        return;
    Server *s = c->server;
    c->in_dirty = true;
    c->next_dirty = s->dirty;
    s->dirty = c;
}

static void on_linger_done(uv_timer_t *t)
{
    conn_close(t->data);
}

static void on_linger_shutdown(uv_shutdown_t *req, int status)
{
    if (status < 0)
        conn_close(req->data);
}

/* The last message (a FATAL) is written: shut the write side and read and
 * drop the client's input until it closes or LINGER_MS pass. */
static void conn_linger(Conn *c)
{
    if (c->lingering)
        return;
    c->lingering = true;
    uv_timer_stop(&c->stmt_timer);
    c->shutdown_req.data = c;
    if (uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, on_linger_shutdown) < 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->idle_timer, on_linger_done, LINGER_MS, 0);
    if (!c->reading && uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = true;
}

static void on_written(uv_write_t *req, int status)
{
    WriteReq *w = (WriteReq *)req;
    Conn *c = w->conn;
    c->out_inflight -= w->len;
    sl_free(w->data);
    sl_free(w);
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (c->close_after_flush && c->out_inflight == 0 && c->out.len == 0 &&
        c->tls_out.len == 0) {
        conn_linger(c);
        return;
    }
    update_reading(c);
    session_output_drained(c);
}

/* With TLS: encrypts c->out into tls_out (and a close_notify when the
 * connection is to close).  Returns the buffer to write. */
static StrBuf *tls_encrypt(Conn *c)
{
    if (c->tls_dead || !c->tls_up)
        return &c->tls_out;
    if (c->out.len > 0) {
        if (tls_conn_write(c, c->out.data, c->out.len, &c->tls_out) < 0) {
            c->tls_dead = true;
            c->close_after_flush = true;
        }
        /* Give back the memory of a big result; keep a small buffer. */
        if (c->out.cap > (1u << 20))
            strbuf_free(&c->out);
        else
            strbuf_reset(&c->out);
    }
    if (c->close_after_flush && !c->tls_dead) {
        tls_conn_shutdown(c, &c->tls_out);
        c->tls_dead = true;
    }
    return &c->tls_out;
}

static void flush_one(Conn *c)
{
    if (c->phase == PHASE_CLOSING)
        return;
    StrBuf *src = c->ssl != NULL ? tls_encrypt(c) : &c->out;
    if (src->len > 0) {
        WriteReq *w = sl_malloc(sizeof(WriteReq));
        w->conn = c;
        w->data = strbuf_steal(src, &w->len);
        c->out_inflight += w->len;
        uv_buf_t buf = uv_buf_init(w->data, (unsigned)w->len);
        int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_written);
        if (rc != 0) {
            c->out_inflight -= w->len;
            sl_free(w->data);
            sl_free(w);
            conn_close(c);
            return;
        }
    } else if (c->close_after_flush && c->out_inflight == 0) {
        conn_linger(c);
        return;
    }
    update_reading(c);
}

void conn_flush_all(Server *s)
{
    Conn *c = s->dirty;
    s->dirty = NULL;
    while (c != NULL) {
        Conn *next = c->next_dirty;
        c->in_dirty = false;
        c->next_dirty = NULL;
        flush_one(c);
        c = next;
    }
}

void conn_flush_now(Conn *c)
{
    flush_one(c);
}

void conn_start_tls(Conn *c)
{
    flush_one(c);
    if (c->phase == PHASE_CLOSING)
        return;
    c->raw_in = sl_malloc(RAW_IN_SIZE);
    tls_conn_start(c);
}
