/*
 * pages.c -- the HTML pages of the HTTP listener (pages.h; docs/operations.md,
 * "The pages"): an overview and a page per continuous query.
 *
 *   pages_new, pages_close   the context: the Runtime, the version line,
 *                            the streams' row counts sampled each second
 *   pages_overview            "/"
 *   pages_query               "/queries/NAME"
 *
 * Everything is drawn here, on the loop, from figures the server keeps:
 * the queries' statuses and last batches (cq.h: cq_foreach, cq_progress,
 * cq_source_lag, cq_state, cq_explain), the streams' counts
 * (ingest_stream_figures) and the sessions (rt_session_foreach).  A page
 * loads nothing else: its style and its one script are inline, its plots
 * inline SVG (svgchart.c); it reloads itself every 5 s (?refresh=N: every
 * N s, 0: never).
 *
 * What a reader without the HTTP token sees (http.h): names, statuses and
 * figures.  A query's SQL, plan and error text can quote data values, and
 * a session's client address and state are its owner's: they are written
 * only for a request that carries the token.  Every name is escaped.
 *
 * The rates of the overview are over the last RATE_WINDOW_S seconds: a
 * query's from its batches that started then (input: their rows over the
 * window; processed: their rows over their durations), a stream's from its
 * row count now and the oldest sample the sampler kept (at most
 * SAMPLES - 1 seconds old).
 */
#include "pages.h"

#include "sluice/cq.h"
#include "sluice/expr.h"
#include "sluice/ingest.h"
#include "sluice/runtime.h"
#include "svgchart.h"

#include <stdarg.h>

#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SAMPLES       11        /* one a second: the streams' rates over 10 s */
#define RATE_WINDOW_S 30        /* the queries' rates on the overview */

/* The pages' one script: after layout, each line records the length the
 * browser drew, so a headless browser's DOM shows whether the plots were
 * drawn with data.  The Content-Security-Policy lets only this script run
 * (by its hash) and the page load nothing at all. */
#define PAGE_SCRIPT                                                                      \
    "for(const l of document.querySelectorAll('polyline'))"                              \
    "l.setAttribute('data-drawn-length',l.getTotalLength().toFixed(1));"

typedef struct StreamCount {
    char   *stream;
    int64_t rows;               /* -1: not stored here */
} StreamCount;

typedef struct Sample {
    int64_t      t_us;          /* 0: empty */
    StreamCount *s;
    int          n;
} Sample;

struct Pages {
    Runtime   *rt;
    char      *version;
    char      *headers;         /* the pages' Content-Security-Policy */
    uv_timer_t timer;
    Sample     ring[SAMPLES];
    int        next;            /* the slot the next sample takes */
    void     (*closed)(void *arg);
    void      *closed_arg;
};

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ------------------------------------------------------------ the sampler */

static void sample_clear(Sample *s)
{
    for (int i = 0; i < s->n; i++)
        sl_free(s->s[i].stream);
    sl_free(s->s);
    *s = (Sample){0};
}

static void gather_stream(const IngestFigures *f, void *arg)
{
    StreamList *l = arg;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->f = sl_realloc(l->f, sizeof(IngestFigures) * (size_t)l->cap);
    }
    l->f[l->n] = *f;
    l->f[l->n].stream = sl_strdup(f->stream);
    l->f[l->n].connector = sl_strdup(f->connector);
    l->n++;
}

void pages_streams(Runtime *rt, StreamList *out)
{
    ingest_stream_figures(rt, gather_stream, out);
}

void pages_streams_free(StreamList *l)
{
    for (int i = 0; i < l->n; i++) {
        sl_free((char *)l->f[i].stream);
        sl_free((char *)l->f[i].connector);
    }
    sl_free(l->f);
}

static void on_sample(uv_timer_t *t)
{
    Pages *p = t->data;
    StreamList l = {0};
    pages_streams(p->rt, &l);
    Sample *s = &p->ring[p->next];
    sample_clear(s);
    s->t_us = now_us();
    s->n = l.n;
    s->s = sl_malloc(sizeof(StreamCount) * (size_t)(l.n > 0 ? l.n : 1));
    for (int i = 0; i < l.n; i++)
        s->s[i] = (StreamCount){sl_strdup(l.f[i].stream), l.f[i].rows};
    p->next = (p->next + 1) % SAMPLES;
    pages_streams_free(&l);
}

/* Rows per second of stream (the at'th of the catalog now) over the time
 * since the oldest sample that counted it; NAN when none did or its rows
 * are not stored here.  A sample lists the streams in the catalog's order
 * too: the stream is looked for at its place first. */
static double stream_rate(const Pages *p, const char *stream, int at, int64_t rows,
                          int64_t now)
{
    if (rows < 0)
        return NAN;
    for (int k = 0; k < SAMPLES; k++) {
        const Sample *s = &p->ring[(p->next + k) % SAMPLES];    /* oldest first */
        if (s->t_us == 0 || now - s->t_us < 500000)
            continue;
        for (int j = 0; j < s->n; j++) {
            int i = (at + j) % s->n;
            if (strcmp(s->s[i].stream, stream) == 0 && s->s[i].rows >= 0)
                return (double)(rows - s->s[i].rows) * 1e6 / (double)(now - s->t_us);
        }
    }
    return NAN;
}

/* No source at all but the inline style and PAGE_SCRIPT, by its SHA-256:
 * a name that escaped its escaping could still run nothing. */
static char *csp_header(void)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(PAGE_SCRIPT, strlen(PAGE_SCRIPT), md, &mdlen, EVP_sha256(), NULL) != 1)
        sl_panic("cannot hash the pages' script");
    unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    EVP_EncodeBlock(b64, md, (int)mdlen);
    StrBuf h;
    strbuf_init(&h);
    strbuf_printf(&h, "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; "
                      "script-src 'sha256-%s'; base-uri 'none'; form-action 'none'\r\n"
                      "X-Content-Type-Options: nosniff\r\n", b64);
    size_t len;
    return strbuf_steal(&h, &len);
}

Pages *pages_new(Runtime *rt, const char *version)
{
    Pages *p = sl_calloc(1, sizeof(Pages));
    p->rt = rt;
    p->version = sl_strdup(version != NULL ? version : "");
    p->headers = csp_header();
    uv_timer_init(&rt->loop, &p->timer);
    p->timer.data = p;
    uv_timer_start(&p->timer, on_sample, 0, 1000);
    uv_unref((uv_handle_t *)&p->timer);
    return p;
}

static void on_timer_closed(uv_handle_t *h)
{
    Pages *p = h->data;
    for (int i = 0; i < SAMPLES; i++)
        sample_clear(&p->ring[i]);
    void (*cb)(void *) = p->closed;
    void *arg = p->closed_arg;
    sl_free(p->version);
    sl_free(p->headers);
    sl_free(p);
    if (cb != NULL)
        cb(arg);
}

void pages_close(Pages *p, void (*cb)(void *arg), void *arg)
{
    p->closed = cb;
    p->closed_arg = arg;
    uv_timer_stop(&p->timer);
    uv_close((uv_handle_t *)&p->timer, on_timer_closed);
}

/* ------------------------------------------------------------- HTML bits */

#define html svgchart_html

/* A path segment: unreserved bytes as they are, others %XX. */
static void put_url_segment(StrBuf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~')
            strbuf_putc(b, (char)c);
        else
            strbuf_printf(b, "%%%02X", c);
    }
}

/* qs: the query string the page was asked with ("" or "?refresh=N"). */
static void put_query_link(StrBuf *b, const char *name, const char *qs)
{
    strbuf_puts(b, "<a href=\"/queries/");
    put_url_segment(b, name);
    strbuf_printf(b, "%s\">", qs);
    html(b, name);
    strbuf_puts(b, "</a>");
}

/* A figure in a right-aligned cell; NAN (or a negative count) is a dash. */
static void td_value(StrBuf *b, double v)
{
    if (isnan(v) || v < 0) {
        strbuf_puts(b, "<td class=\"n\">&ndash;</td>");
        return;
    }
    char t[32];
    svgchart_value(t, sizeof(t), v);
    strbuf_printf(b, "<td class=\"n\">%s</td>", t);
}

static void td_count(StrBuf *b, int64_t v)
{
    if (v < 0)
        strbuf_puts(b, "<td class=\"n\">&ndash;</td>");
    else
        strbuf_printf(b, "<td class=\"n\">%lld</td>", (long long)v);
}

static void put_utc(StrBuf *b, int64_t unix_us)
{
    time_t t = (time_t)(unix_us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[40];
    strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S UTC", &tm);
    strbuf_puts(b, s);
}

static void put_duration(StrBuf *b, double sec)
{
    if (isnan(sec)) {
        strbuf_puts(b, "&ndash;");
        return;
    }
    const char *sign = sec < 0 ? "-" : "";
    double a = fabs(sec);
    long long s = (long long)a;
    if (a < 60)
        strbuf_printf(b, "%s%.3g s", sign, a);
    else if (a < 3600)
        strbuf_printf(b, "%s%lldm %02llds", sign, s / 60, s % 60);
    else if (a < 86400)
        strbuf_printf(b, "%s%lldh %02lldm %02llds", sign, s / 3600, s / 60 % 60, s % 60);
    else
        strbuf_printf(b, "%s%lldd %02lldh %02lldm", sign, s / 86400, s / 3600 % 24, s / 60 % 60);
}

static void put_status(StrBuf *b, const char *status)
{
    strbuf_printf(b, "<span class=\"status s-%s\">%s</span>", status, status);
}

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "%s<link rel=\"icon\" href=\"data:,\">"
    "<title>%s</title><style>"
    "body{font-family:'DejaVu Sans',system-ui,sans-serif;margin:1.2em 2em;color:#222}"
    "h1{font-size:1.45em;margin:.2em 0}h2{font-size:1.1em;margin:1.3em 0 .4em}"
    "h3{font-size:.95em;margin:.2em 0}"
    "table{border-collapse:collapse;font-size:.88em}"
    "th,td{padding:3px 10px;text-align:left;border-bottom:1px solid #e6e6e6}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".status{padding:1px 6px;border-radius:3px}"
    ".s-running{background:#dff2df}.s-retrying{background:#fff0c2}"
    ".s-failed{background:#f6d0d0}.s-paused{background:#e8e8e8}"
    ".s-finished{background:#dde8f6}"
    ".behind{color:#b71c1c;font-weight:bold}"
    ".error{background:#fdecea;border:1px solid #e5a3a3;border-left:6px solid #c62828;"
    "padding:.5em 1em;margin:.8em 0;white-space:pre-wrap}"
    "pre{background:#f5f5f5;padding:.6em 1em;font-size:.85em;white-space:pre-wrap}"
    ".meta,.note{color:#555}"
    ".chart{display:inline-block;vertical-align:top;margin:0 1em 1em 0}"
    ".tick{fill:#555}"
    ".legend{font-size:.82em}.legend span{margin-right:1.2em;white-space:nowrap}"
    ".legend i{display:inline-block;width:10px;height:10px;margin-right:4px}"
    "</style></head><body>\n";

/* How often the page reloads itself: ?refresh=N seconds (0: never; up to
 * an hour), REFRESH_S without; qs gets the query string that keeps it in
 * the page's links, meta the <meta> element. */
#define REFRESH_S 5

static void refresh_of(const HttpRequest *req, char *qs, size_t qsn, char *meta, size_t metan)
{
    int refresh = REFRESH_S;
    for (const char *p = req->query; p != NULL && *p != '\0';) {
        const char *end = strchr(p, '&');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > 8 && len <= 12 && strncmp(p, "refresh=", 8) == 0 &&
            strspn(p + 8, "0123456789") >= len - 8)
            refresh = atoi(p + 8) > 3600 ? 3600 : atoi(p + 8);
        p = end != NULL ? end + 1 : NULL;
    }
    if (refresh == REFRESH_S)
        snprintf(qs, qsn, "%s", "");
    else
        snprintf(qs, qsn, "?refresh=%d", refresh);
    if (refresh > 0)
        snprintf(meta, metan, "<meta http-equiv=\"refresh\" content=\"%d\">", refresh);
    else
        snprintf(meta, metan, "%s", "");
}

static const char page_tail[] = "<script>" PAGE_SCRIPT "</script></body></html>\n";

#define TOKEN_NOTE "shown only to a request with the HTTP token"

/* --------------------------------------------------------------- overview */

static void gather_query(const CqStatus *s, void *arg)
{
    QueryList *l = arg;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->st = sl_realloc(l->st, sizeof(CqStatus) * (size_t)l->cap);
    }
    l->st[l->n++] = *s;
}

void pages_queries(CqRuntime *cq, QueryList *out)
{
    if (cq != NULL)
        cq_foreach(cq, gather_query, out);
}

/* The records every query's sources are behind, summed, in the order of
 * the QueryList. */
typedef struct LagSum {
    const QueryList *q;
    int64_t         *lag;
} LagSum;

static void add_lag(const CqSourceLag *l, void *arg)
{
    LagSum *ls = arg;
    for (int i = 0; i < ls->q->n; i++)
        if (strcmp(ls->q->st[i].name, l->query) == 0) {
            ls->lag[i] += l->lag;
            return;
        }
}

/* The query's input and processed rows per second over the batches that
 * started in the last RATE_WINDOW_S seconds (p: newest first). */
static void recent_rates(const CqStatus *s, const CqProgress *p, int n, int64_t now,
                         double *in, double *done)
{
    int64_t from = now - (int64_t)RATE_WINDOW_S * 1000000;
    if (s->started_us > from)
        from = s->started_us;
    int64_t rows = 0, busy = 0;
    for (int i = 0; i < n && p[i].started_us >= from; i++) {
        rows += p[i].input_rows;
        busy += p[i].total_us;
    }
    *in = now > from ? (double)rows * 1e6 / (double)(now - from) : NAN;
    *done = busy > 0 ? (double)rows * 1e6 / (double)busy : NAN;
}

static double watermark_lag_s(const CqStatus *s, int64_t now)
{
    if (!s->has_watermark || s->watermark_us == CQ_WATERMARK_END)
        return NAN;
    return (double)(now - (s->watermark_us + SL_PG_EPOCH_UNIX_US)) / 1e6;
}

static void overview_queries(StrBuf *b, Pages *pg, int64_t now, const char *qs)
{
    QueryList ql = {0};
    CqRuntime *cq = pg->rt->cq;
    pages_queries(cq, &ql);
    int64_t *lag = sl_calloc((size_t)(ql.n > 0 ? ql.n : 1), sizeof(int64_t));
    LagSum ls = {&ql, lag};
    if (cq != NULL)
        cq_source_lag(cq, add_lag, &ls);
    strbuf_printf(b, "<h2>Continuous queries (%d)</h2>\n", ql.n);
    strbuf_printf(b, "<table id=\"queries\"><tr><th>query</th><th>status</th>"
                     "<th>falling behind</th><th>input rows/s</th><th>processed rows/s</th>"
                     "<th>source lag (records)</th><th>backlog rows</th>"
                     "<th>watermark lag</th><th>last batch</th><th>state rows</th></tr>\n");
    CqProgress *ring = sl_malloc(sizeof(CqProgress) * CQ_PROGRESS_KEEP);
    for (int i = 0; i < ql.n; i++) {
        const CqStatus *s = &ql.st[i];
        SlError err = {0};
        int n = cq_progress(cq, s->name, ring, CQ_PROGRESS_KEEP, &err);
        sl_error_clear(&err);
        double in, done;
        recent_rates(s, ring, n > 0 ? n : 0, now, &in, &done);
        strbuf_puts(b, "<tr class=\"query\"><td>");
        put_query_link(b, s->name, qs);
        strbuf_puts(b, "</td><td>");
        put_status(b, s->status);
        strbuf_printf(b, "</td><td%s>%s</td>", s->falling_behind ? " class=\"behind\"" : "",
                      s->falling_behind ? "yes" : "no");
        td_value(b, in);
        td_value(b, done);
        td_count(b, lag[i]);
        td_count(b, s->backlog_rows);
        strbuf_puts(b, "<td class=\"n\">");
        put_duration(b, watermark_lag_s(s, now));
        strbuf_puts(b, "</td>");
        td_count(b, s->last_batch_id);
        td_count(b, s->state_rows);
        strbuf_puts(b, "</tr>\n");
    }
    strbuf_puts(b, "</table>\n");
    /* Sinks: each query that writes INTO one opens it for itself. */
    strbuf_puts(b, "<h2>Sinks</h2>\n<table id=\"sinks\"><tr><th>sink</th><th>query</th>"
                   "<th>commits</th><th>commit failures</th><th>retried commits</th></tr>\n");
    int sinks = 0;
    for (int i = 0; i < ql.n; i++) {
        const CqStatus *s = &ql.st[i];
        if (s->sink == NULL)
            continue;
        sinks++;
        strbuf_puts(b, "<tr class=\"sink\"><td>");
        html(b, s->sink);
        strbuf_puts(b, "</td><td>");
        put_query_link(b, s->name, qs);
        strbuf_puts(b, "</td>");
        td_count(b, s->sink_commits);
        strbuf_printf(b, "<td class=\"n%s\">%lld</td>", s->sink_failures > 0 ? " behind" : "",
                      (long long)s->sink_failures);
        td_count(b, s->sink_retries);
        strbuf_puts(b, "</tr>\n");
    }
    if (sinks == 0)
        strbuf_puts(b, "<tr><td colspan=\"5\" class=\"note\">no query writes into a sink"
                       "</td></tr>\n");
    strbuf_puts(b, "</table>\n");
    sl_free(ring);
    sl_free(lag);
    sl_free(ql.st);
}

static void overview_streams(StrBuf *b, Pages *pg, int64_t now)
{
    StreamList l = {0};
    pages_streams(pg->rt, &l);
    strbuf_printf(b, "<h2>Streams (%d)</h2>\n<table id=\"streams\"><tr><th>stream</th>"
                     "<th>connector</th><th>rows</th><th>ingest rows/s (10 s)</th>"
                     "<th>dead letters</th><th>bytes read</th></tr>\n", l.n);
    for (int i = 0; i < l.n; i++) {
        const IngestFigures *f = &l.f[i];
        strbuf_puts(b, "<tr class=\"stream\"><td>");
        html(b, f->stream);
        strbuf_puts(b, "</td><td>");
        html(b, f->connector);
        strbuf_puts(b, "</td>");
        td_count(b, f->rows);
        td_value(b, stream_rate(pg, f->stream, i, f->rows, now));
        if (f->dead_letters > 0)
            strbuf_printf(b, "<td class=\"n behind\">%lld</td>", (long long)f->dead_letters);
        else
            td_count(b, f->dead_letters);
        td_count(b, f->bytes);
        strbuf_puts(b, "</tr>\n");
    }
    strbuf_puts(b, "</table>\n");
    pages_streams_free(&l);
}

typedef struct ConnWalk {
    StrBuf *b;
    bool    authenticated;
    int     n;
} ConnWalk;

static void conn_row(const RtSession *s, void *arg)
{
    ConnWalk *w = arg;
    StrBuf *b = w->b;
    w->n++;
    strbuf_printf(b, "<tr class=\"connection\"><td class=\"n\">%d</td><td>", (int)s->pid);
    html(b, s->user != NULL ? s->user : "");
    strbuf_puts(b, "</td><td>");
    html(b, s->database != NULL ? s->database : "");
    strbuf_puts(b, "</td><td>");
    html(b, s->application_name != NULL ? s->application_name : "");
    strbuf_puts(b, "</td><td>");
    if (s->connected_at > 0)
        put_utc(b, s->connected_at);
    strbuf_puts(b, "</td>");
    if (w->authenticated) {
        strbuf_puts(b, "<td>");
        if (s->client_addr != NULL) {
            html(b, s->client_addr);
            strbuf_printf(b, ":%d", (int)s->client_port);
        }
        strbuf_puts(b, "</td><td>");
        html(b, s->state != NULL ? s->state : "");
        strbuf_puts(b, "</td>");
    }
    strbuf_puts(b, "</tr>\n");
}

static void overview_connections(StrBuf *b, Pages *pg, bool authenticated)
{
    StrBuf rows;
    strbuf_init(&rows);
    ConnWalk w = {&rows, authenticated, 0};
    rt_session_foreach(pg->rt, conn_row, &w);
    strbuf_printf(b, "<h2>Connections (%d)</h2>\n<table id=\"connections\"><tr><th>pid</th>"
                     "<th>user</th><th>database</th><th>application</th><th>connected</th>%s"
                     "</tr>\n", w.n,
                  authenticated ? "<th>client</th><th>state</th>" : "");
    strbuf_append(b, rows.data, rows.len);
    strbuf_puts(b, "</table>\n");
    if (!authenticated)
        strbuf_puts(b, "<p class=\"note\">Client addresses and states are " TOKEN_NOTE
                       ".</p>\n");
    strbuf_free(&rows);
}

void pages_overview(const HttpRequest *req, HttpResponse *resp, void *arg)
{
    Pages *pg = arg;
    int64_t now = now_us();
    resp->content_type = "text/html; charset=utf-8";
    resp->headers = pg->headers;
    StrBuf *b = &resp->body;
    char qs[32], meta[64];
    refresh_of(req, qs, sizeof(qs), meta, sizeof(meta));
    strbuf_printf(b, page_head, meta, "sluice");
    strbuf_puts(b, "<h1>sluice</h1>\n<p class=\"meta\" id=\"server\">version <b>");
    html(b, pg->version);
    strbuf_puts(b, "</b> &middot; up <b>");
    put_duration(b, (double)(now - pg->rt->started_us) / 1e6);
    strbuf_puts(b, "</b> (since ");
    put_utc(b, pg->rt->started_us);
    strbuf_puts(b, ") &middot; <a href=\"/metrics\">/metrics</a> &middot; "
                   "<a href=\"/healthz\">/healthz</a></p>\n");
    overview_queries(b, pg, now, qs);
    overview_streams(b, pg, now);
    overview_connections(b, pg, req->authenticated);
    strbuf_puts(b, page_tail);
}

/* ------------------------------------------------------------- query page */

static void fact(StrBuf *b, const char *name, const char *fmt, ...) SL_PRINTF(3, 4);

static void fact(StrBuf *b, const char *name, const char *fmt, ...)
{
    char v[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    strbuf_printf(b, "<tr><th>%s</th><td>%s</td></tr>", name, v);
}

typedef struct PartWalk {
    StrBuf     *b;
    const char *query;
    int         n;
} PartWalk;

static void partition_row(const CqSourceLag *l, void *arg)
{
    PartWalk *w = arg;
    if (strcmp(l->query, w->query) != 0)
        return;
    if (w->n++ == 0)
        strbuf_puts(w->b, "<h2>Sources</h2>\n<table id=\"sources\"><tr><th>source</th>"
                          "<th>topic</th><th>partition</th><th>next offset</th>"
                          "<th>latest offset</th><th>lag (records)</th></tr>\n");
    strbuf_puts(w->b, "<tr><td>");
    html(w->b, l->source);
    strbuf_puts(w->b, "</td><td>");
    html(w->b, l->topic != NULL ? l->topic : "");
    strbuf_printf(w->b, "</td><td class=\"n\">%d</td>", (int)l->partition);
    td_count(w->b, l->committed);
    td_count(w->b, l->latest);
    td_count(w->b, l->lag);
    strbuf_puts(w->b, "</tr>\n");
}

/* The five plots over the kept batches (ring: newest first). */
static void query_charts(StrBuf *b, const CqStatus *st, const CqProgress *ring, int n,
                         int64_t now)
{
    enum { IN, DONE, PLAN, READ, EXEC, SINK, WRITE, COMMIT, WAIT, TRIG, LAG, BACKLOG, SROWS,
           SBYTES, NCOLS };
    int64_t *t = sl_malloc(sizeof(int64_t) * (size_t)(n + 1));
    double *y = sl_malloc(sizeof(double) * (size_t)(NCOLS * (n + 1)));
    double *col[NCOLS];
    for (int c = 0; c < NCOLS; c++)
        col[c] = y + (size_t)c * (size_t)(n + 1);
    for (int i = 0; i < n; i++) {
        const CqProgress *p = &ring[n - 1 - i], *prev = i > 0 ? &ring[n - i] : NULL;
        t[i] = p->started_us;
        int64_t gap = prev != NULL ? p->started_us - prev->started_us : 0;
        col[IN][i] = gap > 0 ? (double)p->input_rows * 1e6 / (double)gap : NAN;
        col[DONE][i] = p->total_us > 0 ? (double)p->input_rows * 1e6 / (double)p->total_us
                                       : NAN;
        col[PLAN][i] = (double)p->plan_us / 1000.0;
        col[READ][i] = (double)p->read_us / 1000.0;
        col[EXEC][i] = (double)p->execute_us / 1000.0;
        col[SINK][i] = (double)p->sink_us / 1000.0;
        col[WRITE][i] = (double)p->write_us / 1000.0;
        col[COMMIT][i] = (double)p->commit_us / 1000.0;
        int64_t rest = p->total_us - p->plan_us - p->read_us - p->execute_us - p->sink_us -
                       p->write_us - p->commit_us;
        col[WAIT][i] = rest > 0 ? (double)rest / 1000.0 : 0;
        col[TRIG][i] = st->trigger_ms > 0 ? (double)st->trigger_ms : NAN;
        col[LAG][i] = p->has_watermark && p->watermark_us != CQ_WATERMARK_END
                          ? (double)(p->started_us - (p->watermark_us + SL_PG_EPOCH_UNIX_US)) /
                                1e6
                          : NAN;
        col[BACKLOG][i] = (double)p->backlog_rows;
        col[SROWS][i] = (double)p->state_rows;
        col[SBYTES][i] = (double)p->state_bytes;
    }
    /* the time axis: from the oldest kept batch (10 s at least) to now */
    int64_t t0 = n > 0 ? t[0] : now - 10 * 1000000LL;
    if (now - t0 < 10 * 1000000LL)
        t0 = now - 10 * 1000000LL;
    const SvgSeries rates[] = {
        {"input rows/s", "#1f77b4", col[IN], 0, SVG_LINE},
        {"processed rows/s", "#2ca02c", col[DONE], 1, SVG_LINE},
    };
    const SvgSeries phases[] = {
        {"plan", "#8c564b", col[PLAN], 0, SVG_BAR},
        {"read", "#1f77b4", col[READ], 0, SVG_BAR},
        {"execute", "#ff7f0e", col[EXEC], 0, SVG_BAR},
        {"sink commit", "#e377c2", col[SINK], 0, SVG_BAR},
        {"state write", "#2ca02c", col[WRITE], 0, SVG_BAR},
        {"commit log", "#9467bd", col[COMMIT], 0, SVG_BAR},
        {"waiting", "#bcbd22", col[WAIT], 0, SVG_BAR},
        {"trigger interval", "#d62728", col[TRIG], 0, SVG_DASHED},
    };
    const SvgSeries lag[] = {{"watermark lag", "#9467bd", col[LAG], 0, SVG_LINE}};
    const SvgSeries backlog[] = {{"backlog rows", "#8c564b", col[BACKLOG], 0, SVG_LINE}};
    const SvgSeries state[] = {
        {"state rows", "#ff7f0e", col[SROWS], 0, SVG_LINE},
        {"state bytes", "#17becf", col[SBYTES], 1, SVG_LINE},
    };
    const SvgChart charts[] = {
        {"rates", "Input and processed rate", {"input rows/s", "processed rows/s"}, t, n, t0,
         now, rates, 2},
        {"duration", "Batch duration by phase, and the trigger", {"ms", NULL}, t, n, t0, now,
         phases, st->trigger_ms > 0 ? 8 : 7},
        {"watermark", "Watermark lag (batch start minus watermark)", {"seconds", NULL}, t, n,
         t0, now, lag, 1},
        {"backlog", "Backlog (rows left for later batches)", {"rows", NULL}, t, n, t0, now,
         backlog, 1},
        {"state", "State", {"rows", "bytes"}, t, n, t0, now, state, 2},
    };
    strbuf_printf(b, "<h2>The last %d batches</h2>\n<div id=\"charts\">", n);
    for (size_t c = 0; c < SL_ARRAY_LEN(charts); c++)
        svgchart_put(b, &charts[c]);
    strbuf_puts(b, "</div>\n");
    sl_free(y);
    sl_free(t);
}

/* The SQL, the plan and the operators' state. */
static void query_definition(StrBuf *b, Pages *pg, const HttpRequest *req,
                             const CqStatus *st)
{
    CqRuntime *cq = pg->rt->cq;
    strbuf_puts(b, "<h2>SQL</h2>\n");
    Arena a;
    arena_init(&a, 8192);
    if (req->authenticated && st->sql != NULL) {
        strbuf_puts(b, "<pre id=\"sql\">");
        html(b, sql_redact_secrets(&a, st->sql));
        strbuf_puts(b, "</pre>\n");
    } else {
        strbuf_puts(b, "<p class=\"note\" id=\"sql\">(" TOKEN_NOTE ": it can quote data "
                       "values; sys.queries has it)</p>\n");
    }
    strbuf_puts(b, "<h2>EXPLAIN CONTINUOUS QUERY</h2>\n");
    List *lines = NULL;
    SlError err = {0};
    if (!req->authenticated) {
        strbuf_puts(b, "<p class=\"note\" id=\"plan\">(" TOKEN_NOTE ": its expressions can "
                       "quote data values)</p>\n");
    } else if (cq_explain(cq, st->name, &a, &lines, &err) == 0) {
        strbuf_puts(b, "<pre id=\"plan\">");
        for (int i = 0; i < list_len(lines); i++) {
            html(b, list_nth(lines, i));
            strbuf_putc(b, '\n');
        }
        strbuf_puts(b, "</pre>\n");
    }
    sl_error_clear(&err);
    CqOpState ops[CQ_MAX_OPS];
    int nops = cq_state(cq, st->name, ops, &err);
    sl_error_clear(&err);
    strbuf_puts(b, "<h3>State per operator (as the last batch left it)</h3>\n"
                   "<table id=\"operators\"><tr><th>operator</th><th>rows</th><th>bytes</th>"
                   "<th>on disk</th><th>in cache</th><th>evicted rows</th>"
                   "<th>oldest window</th></tr>\n");
    for (int i = 0; i < nops; i++) {
        strbuf_printf(b, "<tr class=\"operator\"><td>%s</td>", ops[i].op);
        td_count(b, ops[i].rows);
        td_count(b, ops[i].bytes);
        td_count(b, (int64_t)ops[i].disk_bytes);
        td_count(b, (int64_t)ops[i].cache_bytes);
        td_count(b, ops[i].evicted);
        strbuf_puts(b, "<td>");
        if (ops[i].has_oldest_window)
            put_utc(b, ops[i].oldest_window_us + SL_PG_EPOCH_UNIX_US);
        strbuf_puts(b, "</td></tr>\n");
    }
    if (nops <= 0)
        strbuf_puts(b, "<tr><td colspan=\"7\" class=\"note\">no operator keeps state</td>"
                       "</tr>\n");
    strbuf_puts(b, "</table>\n");
    arena_destroy(&a);
}

void pages_query(const HttpRequest *req, HttpResponse *resp, void *arg)
{
    Pages *pg = arg;
    const char *name = req->path + strlen("/queries/");
    CqRuntime *cq = pg->rt->cq;
    CqStatus st;
    if (cq == NULL || !cq_status_of(cq, name, &st)) {
        resp->status = 404;
        strbuf_puts(&resp->body, "no such continuous query\n");
        return;
    }
    int64_t now = now_us();
    CqProgress *ring = sl_malloc(sizeof(CqProgress) * CQ_PROGRESS_KEEP);
    SlError err = {0};
    int n = cq_progress(cq, name, ring, CQ_PROGRESS_KEEP, &err);
    sl_error_clear(&err);
    if (n < 0)
        n = 0;
    resp->content_type = "text/html; charset=utf-8";
    resp->headers = pg->headers;
    StrBuf *b = &resp->body;
    StrBuf title;
    strbuf_init(&title);
    html(&title, name);
    char qs[32], meta[64];
    refresh_of(req, qs, sizeof(qs), meta, sizeof(meta));
    strbuf_printf(b, page_head, meta, title.data);
    strbuf_printf(b, "<p><a href=\"/%s\">&larr; overview</a></p><h1>%s</h1>\n", qs,
                  title.data);
    strbuf_free(&title);
    strbuf_puts(b, "<p>");
    put_status(b, st.status);
    if (st.falling_behind)
        strbuf_puts(b, " <span class=\"behind\">falling behind</span>");
    strbuf_puts(b, "</p>\n");
    /* An error message can quote the data it failed on: only a reader
     * with the HTTP token sees it (sys.queries shows it over SQL). */
    if (st.error != NULL) {
        strbuf_puts(b, "<div class=\"error\" id=\"last-error\"><b>Last error:</b> ");
        if (req->authenticated)
            html(b, st.error);
        else
            strbuf_puts(b, "(" TOKEN_NOTE "; see sys.queries.last_error)");
        strbuf_puts(b, "</div>\n");
    }
    strbuf_puts(b, "<table id=\"figures\">");
    if (st.trigger_ms > 0)
        fact(b, "trigger", "%lld ms", (long long)st.trigger_ms);
    else if (st.trigger_ms == 0)
        fact(b, "trigger", "0 (back to back)");
    else
        fact(b, "trigger", "once / available now");
    strbuf_puts(b, "<tr><th>started</th><td>");
    put_utc(b, st.started_us);
    strbuf_puts(b, "</td></tr>");
    fact(b, "last batch", "%lld", (long long)st.last_batch_id);
    fact(b, "batches", "%lld", (long long)st.batches);
    fact(b, "input rows", "%lld", (long long)st.input_rows);
    fact(b, "output rows", "%lld", (long long)st.output_rows);
    fact(b, "late rows", "%lld", (long long)st.late_rows);
    fact(b, "retries", "%lld", (long long)st.retries);
    fact(b, "backlog rows", "%lld", (long long)st.backlog_rows);
    strbuf_puts(b, "<tr><th>watermark lag</th><td>");
    put_duration(b, watermark_lag_s(&st, now));
    strbuf_puts(b, "</td></tr>");
    fact(b, "state rows", "%lld", (long long)st.state_rows);
    fact(b, "state bytes", "%lld", (long long)st.state_bytes);
    fact(b, "falling behind", "%s", st.falling_behind ? "yes" : "no");
    if (st.sink != NULL) {
        strbuf_puts(b, "<tr><th>sink</th><td>");
        html(b, st.sink);
        strbuf_printf(b, ": %lld commits, %lld failed, %lld retried</td></tr>",
                      (long long)st.sink_commits, (long long)st.sink_failures,
                      (long long)st.sink_retries);
    }
    strbuf_puts(b, "</table>\n");
    PartWalk pw = {b, name, 0};
    cq_source_lag(cq, partition_row, &pw);
    if (pw.n > 0)
        strbuf_puts(b, "</table>\n");
    query_charts(b, &st, ring, n, now);
    query_definition(b, pg, req, &st);
    strbuf_puts(b, page_tail);
    sl_free(ring);
}
