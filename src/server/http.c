/*
 * http.c -- the HTTP listener (see http.h).
 *
 * Each connection reads into a fixed 8 KiB buffer until the blank line
 * that ends the request head, parses the request line and the
 * Authorization header, runs the handler of the longest matching route
 * (or answers 401 for a route that is not public when a token is set and
 * the request does not carry it), writes one response with Content-Length
 * and closes.  Request bodies are never read: GET and HEAD have none.
 */
#include "sluice/http.h"
#include "sluice/log.h"
#include "sluice/server.h"

#include <openssl/crypto.h>
#include <strings.h>

#define HTTP_HEAD_MAX   8192
#define HTTP_TIMEOUT_MS 10000
#define HTTP_MAX_ROUTES 16

typedef struct HttpConn HttpConn;

typedef struct Route {
    char           *path;
    bool            prefix;     /* path ends in '/' */
    bool            public;     /* served without the token */
    http_handler_fn fn;
    void           *arg;
} Route;

struct HttpServer {
    uv_loop_t    *loop;
    uv_tcp_t      listener;
    HttpConn     *conns;
    Route         routes[HTTP_MAX_ROUTES];
    int           nroutes;
    char         *token;        /* NULL: none */
    int           port;
    int           open_handles;     /* listener + each connection's two */
    bool          closing;
    http_close_cb close_cb;
    void         *close_arg;
};

struct HttpConn {
    HttpConn   *next, **prevp;
    HttpServer *hs;
    uv_tcp_t    tcp;
    uv_timer_t  timer;
    uv_write_t  write;
    uv_shutdown_t shutdown;
    char       *out;            /* the response, until written */
    size_t      len;
    bool        done;           /* a response is on its way */
    bool        closing;
    int         open_handles;   /* the socket and the timer */
    char        buf[HTTP_HEAD_MAX];
};

static void maybe_finish_close(HttpServer *hs)
{
    if (!hs->closing || hs->open_handles > 0)
        return;
    for (int i = 0; i < hs->nroutes; i++)
        sl_free(hs->routes[i].path);
    if (hs->token != NULL) {
        OPENSSL_cleanse(hs->token, strlen(hs->token));
        sl_free(hs->token);
    }
    http_close_cb cb = hs->close_cb;
    void *arg = hs->close_arg;
    sl_free(hs);
    if (cb != NULL)
        cb(arg);
}

static void on_handle_closed(uv_handle_t *h)
{
    HttpConn *c = h->data;
    HttpServer *hs = c->hs;
    hs->open_handles--;
    if (--c->open_handles == 0) {
        sl_free(c->out);
        sl_free(c);
    }
    maybe_finish_close(hs);
}

static void conn_close(HttpConn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    *c->prevp = c->next;
    if (c->next != NULL)
        c->next->prevp = c->prevp;
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

static void on_timeout(uv_timer_t *t)
{
    conn_close(t->data);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    HttpConn *c = req->data;
    if (status < 0)
        conn_close(c);
}

/* The response is out: half-close, and keep reading (discarding) until the
 * client closes or a second passes, so that unread request bytes do not
 * turn the close into a reset that loses the response (a lingering close,
 * as web servers do). */
static void on_written(uv_write_t *w, int status)
{
    HttpConn *c = w->data;
    if (status < 0 || c->closing) {
        conn_close(c);
        return;
    }
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) < 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_timeout, 1000, 0);
}

static const char *status_text(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default:  return "Internal Server Error";
    }
}

static void respond(HttpConn *c, bool head_only, HttpResponse *r)
{
    StrBuf out;
    strbuf_init(&out);
    strbuf_printf(&out,
                  "HTTP/1.1 %d %s\r\n"
                  "%s%s"
                  "Content-Type: %s\r\n"
                  "Content-Length: %zu\r\n"
                  "Cache-Control: no-store\r\n"
                  "Connection: close\r\n\r\n",
                  r->status, status_text(r->status),
                  r->status == 401 ? "WWW-Authenticate: Bearer realm=\"sluice\"\r\n" : "",
                  r->headers != NULL ? r->headers : "",
                  r->content_type ? r->content_type : "text/plain; charset=utf-8",
                  r->body.len);
    if (!head_only)
        strbuf_append(&out, r->body.data, r->body.len);
    c->out = strbuf_steal(&out, &c->len);
    c->done = true;
    uv_buf_t b = uv_buf_init(c->out, (unsigned)c->len);
    c->write.data = c;
    if (uv_write(&c->write, (uv_stream_t *)&c->tcp, &b, 1, on_written) < 0)
        conn_close(c);
}

static void respond_error(HttpConn *c, int status, const char *msg)
{
    HttpResponse r = {.status = status};
    strbuf_init(&r.body);
    strbuf_printf(&r.body, "%s\n", msg);
    respond(c, false, &r);
    strbuf_free(&r.body);
}

/* Decodes %XX in place; returns -1 on a bad escape or an encoded NUL. */
static int percent_decode(char *s)
{
    char *w = s;
    for (char *p = s; *p != '\0'; p++) {
        if (*p == '%') {
            int hi = sl_hexval(p[1]), lo = hi < 0 ? -1 : sl_hexval(p[2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return -1;
            *w++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
    return 0;
}

static const Route *find_route(HttpServer *hs, const char *path)
{
    const Route *best = NULL;
    size_t best_len = 0;
    for (int i = 0; i < hs->nroutes; i++) {
        const Route *r = &hs->routes[i];
        size_t n = strlen(r->path);
        bool match = r->prefix ? strncmp(path, r->path, n) == 0 : strcmp(path, r->path) == 0;
        if (match && n >= best_len) {
            best = r;
            best_len = n;
        }
    }
    return best;
}

/* Does the header block (lines after the request line, each ending in
 * CRLF) carry "Authorization: Bearer <token>"?  The token is compared in
 * constant time. */
static bool carries_token(const HttpServer *hs, const char *headers)
{
    if (hs->token == NULL)
        return false;
    size_t tl = strlen(hs->token);
    for (const char *p = headers; p != NULL && *p != '\0';) {
        const char *eol = strstr(p, "\r\n");
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > 14 && strncasecmp(p, "authorization:", 14) == 0) {
            const char *v = p + 14, *end = p + len;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
            if (end - v > 7 && strncasecmp(v, "bearer ", 7) == 0) {
                v += 7;
                while (v < end && *v == ' ')
                    v++;
                return (size_t)(end - v) == tl && CRYPTO_memcmp(v, hs->token, tl) == 0;
            }
            return false;
        }
        p = eol ? eol + 2 : NULL;
    }
    return false;
}

/* The head is complete in c->buf (NUL-terminated at the blank line). */
static void handle_request(HttpConn *c)
{
    char *line = c->buf;
    char *eol = strstr(line, "\r\n");
    const char *headers = "";
    if (eol != NULL) {
        *eol = '\0';
        headers = eol + 2;
    }
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (sp1 == NULL || sp2 == NULL || strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
        respond_error(c, 400, "bad request line");
        return;
    }
    *sp1 = '\0';
    *sp2 = '\0';
    HttpRequest req = {.method = line, .path = sp1 + 1, .query = "",
                       .authenticated = carries_token(c->hs, headers)};
    bool head = strcmp(req.method, "HEAD") == 0;
    if (!head && strcmp(req.method, "GET") != 0) {
        respond_error(c, 405, "only GET and HEAD");
        return;
    }
    char *q = strchr(sp1 + 1, '?');
    if (q != NULL) {
        *q = '\0';
        req.query = q + 1;
    }
    if (req.path[0] != '/' || percent_decode(sp1 + 1) < 0) {
        respond_error(c, 400, "bad request target");
        return;
    }
    const Route *r = find_route(c->hs, req.path);
    if (r == NULL) {
        respond_error(c, 404, "not found");
        return;
    }
    if (c->hs->token != NULL && !r->public && !req.authenticated) {
        respond_error(c, 401, "this page needs the HTTP token: Authorization: Bearer <token>");
        return;
    }
    HttpResponse resp = {.status = 200};
    strbuf_init(&resp.body);
    r->fn(&req, &resp, r->arg);
    respond(c, head, &resp);
    strbuf_free(&resp.body);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    HttpConn *c = h->data;
    /* One byte stays free for the terminating NUL. */
    if (c->done)
        c->len = 0;     /* after the response, input is read and dropped */
    buf->base = c->buf + c->len;
    buf->len = sizeof(c->buf) - 1 - c->len;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    HttpConn *c = s->data;
    if (n < 0) {
        conn_close(c);
        return;
    }
    if (c->done || n == 0)
        return;
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    char *end = strstr(c->buf, "\r\n\r\n");
    if (end != NULL) {
        end[2] = '\0';
        handle_request(c);
    } else if (c->len >= sizeof(c->buf) - 1) {
        respond_error(c, 431, "request head too large");
    }
}

static void on_connection(uv_stream_t *listener, int status)
{
    HttpServer *hs = listener->data;
    if (status < 0 || hs->closing)
        return;
    HttpConn *c = sl_calloc(1, sizeof(HttpConn));
    c->hs = hs;
    uv_tcp_init(hs->loop, &c->tcp);
    uv_timer_init(hs->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->open_handles = 2;
    hs->open_handles += 2;
    c->next = hs->conns;
    c->prevp = &hs->conns;
    if (hs->conns != NULL)
        hs->conns->prevp = &c->next;
    hs->conns = c;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) < 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_timeout, HTTP_TIMEOUT_MS, 0);
}

HttpServer *http_init(uv_loop_t *loop, const char *listen, int port, const char *token,
                      SlError *err)
{
    struct sockaddr_storage addr;
    int rc;
    if (token != NULL && *token == '\0')
        token = NULL;
    if (token != NULL && strlen(token) < HTTP_TOKEN_MIN) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "the HTTP token is too short: %zu bytes, at least %d", strlen(token),
                 HTTP_TOKEN_MIN);
        return NULL;
    }
    if (token == NULL && !server_address_is_loopback(listen)) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE,
                 "refusing to serve HTTP on %s without an HTTP token", listen);
        sl_error_hint(err, "Set http_token (a random string of %d bytes or more) in the "
                           "configuration file, or listen for HTTP on 127.0.0.1.",
                      HTTP_TOKEN_MIN);
        return NULL;
    }
    if (strchr(listen, ':') != NULL)
        rc = uv_ip6_addr(listen, port, (struct sockaddr_in6 *)&addr);
    else
        rc = uv_ip4_addr(listen, port, (struct sockaddr_in *)&addr);
    if (rc < 0) {
        sl_error(err, ERRCODE_INVALID_PARAMETER_VALUE, "invalid HTTP listen address \"%s\": %s",
                 listen, uv_strerror(rc));
        return NULL;
    }
    HttpServer *hs = sl_calloc(1, sizeof(HttpServer));
    hs->loop = loop;
    hs->token = token ? sl_strdup(token) : NULL;
    uv_tcp_init(loop, &hs->listener);
    hs->listener.data = hs;
    hs->open_handles = 1;
    rc = uv_tcp_bind(&hs->listener, (struct sockaddr *)&addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&hs->listener, 128, on_connection);
    if (rc < 0) {
        sl_error(err, ERRCODE_CONNECTION_EXCEPTION, "cannot listen for HTTP on %s:%d: %s",
                 listen, port, uv_strerror(rc));
        http_close(hs, NULL, NULL);
        return NULL;
    }
    struct sockaddr_storage bound;
    int namelen = sizeof(bound);
    uv_tcp_getsockname(&hs->listener, (struct sockaddr *)&bound, &namelen);
    hs->port = ntohs(bound.ss_family == AF_INET6
                         ? ((struct sockaddr_in6 *)&bound)->sin6_port
                         : ((struct sockaddr_in *)&bound)->sin_port);
    return hs;
}

void http_route(HttpServer *hs, const char *path, http_handler_fn fn, void *arg, bool public)
{
    if (hs->nroutes == HTTP_MAX_ROUTES)
        sl_panic("too many HTTP routes");
    Route *r = &hs->routes[hs->nroutes++];
    r->path = sl_strdup(path);
    r->prefix = path[0] != '\0' && path[strlen(path) - 1] == '/' && strlen(path) > 1;
    r->fn = fn;
    r->arg = arg;
    r->public = public;
}

int http_port(const HttpServer *hs)
{
    return hs->port;
}

static void on_listener_closed(uv_handle_t *h)
{
    HttpServer *hs = h->data;
    hs->open_handles--;
    maybe_finish_close(hs);
}

void http_close(HttpServer *hs, http_close_cb cb, void *arg)
{
    hs->closing = true;
    hs->close_cb = cb;
    hs->close_arg = arg;
    while (hs->conns != NULL)
        conn_close(hs->conns);
    uv_close((uv_handle_t *)&hs->listener, on_listener_closed);
}
