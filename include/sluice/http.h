/*
 * http.h -- a small HTTP/1.1 listener on the loop, for /metrics, /healthz
 * and the query pages (docs/operations.md "Observability").
 *
 *   http_init    bind and listen; NULL with err set on failure (also for
 *                an address that is not loopback when no token is set)
 *   http_route   serve a path (exact) or a prefix (ending in '/')
 *   http_port    the bound port
 *   http_close   stop listening, close every connection; cb(arg) once all
 *                handles are closed and the HttpServer is freed
 *   http_pages_start, http_pages_port, http_pages_close
 *                sluiced's listener with its pages (server/observe.c)
 *
 * Only GET and HEAD; one request per connection (Connection: close); a
 * request head over 8 KiB gets 431 and one not complete in 10 seconds is
 * closed.  Handlers run on the loop and must be quick.
 *
 * Authentication: with a token (http_init's, at least HTTP_TOKEN_MIN
 * bytes), a request that carries "Authorization: Bearer <token>" is
 * authenticated (compared in constant time); a route registered as not
 * public answers anything else 401 with WWW-Authenticate: Bearer.  Without
 * a token no request is authenticated and every route is served: handlers
 * show data values (errors, rows) only to authenticated requests, and the
 * listener refuses an address that is not loopback.
 */
#ifndef SLUICE_HTTP_H
#define SLUICE_HTTP_H

#include <uv.h>

#include "sluice/error.h"
#include "sluice/strbuf.h"

typedef struct HttpServer HttpServer;

/* The shortest token http_init accepts. */
#define HTTP_TOKEN_MIN 16

typedef struct HttpRequest {
    const char *method;     /* "GET" or "HEAD" */
    const char *path;       /* without the query string, percent-decoded */
    const char *query;      /* after '?', raw; "" if none */
    bool        authenticated;  /* it carried the configured bearer token */
} HttpRequest;

typedef struct HttpResponse {
    int         status;             /* 200 unless the handler says otherwise */
    const char *content_type;       /* default text/plain; charset=utf-8 */
    const char *headers;            /* more header lines, each ending in \r\n; NULL: none */
    StrBuf      body;
} HttpResponse;

typedef void (*http_handler_fn)(const HttpRequest *req, HttpResponse *resp, void *arg);
typedef void (*http_close_cb)(void *arg);

/* token: NULL or "" for none (then listen must be loopback). */
HttpServer *http_init(uv_loop_t *loop, const char *listen, int port, const char *token,
                      SlError *err);
/* public: served without the token too (when one is set). */
void        http_route(HttpServer *hs, const char *path, http_handler_fn fn, void *arg,
                       bool public);
int         http_port(const HttpServer *hs);
void        http_close(HttpServer *hs, http_close_cb cb, void *arg);

/* sluiced's HTTP listener (observe.c; after rt_cq_init) with /healthz,
 * /metrics, the overview and the query pages (pages.c), on rt's loop and
 * its own address, kept in rt->observe; token: NULL, or the bearer token
 * every page but /healthz then needs (without one, listen must be
 * loopback); version: the line the overview shows (main's version and
 * commit).  http_pages_port is
 * the bound port, -1 when not started; http_pages_close calls cb(rt) once
 * its handles are closed. */
struct Runtime;
int  http_pages_start(struct Runtime *rt, const char *listen, int port, const char *token,
                      const char *version, SlError *err);
int  http_pages_port(const struct Runtime *rt);
void http_pages_close(struct Runtime *rt, void (*cb)(struct Runtime *rt));

#endif /* SLUICE_HTTP_H */
