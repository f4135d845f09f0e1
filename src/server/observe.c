/*
 * observe.c -- the HTTP side of observability (docs/operations.md
 * "Observability"): the routes of the HTTP listener and the collectors
 * of /metrics that read the runtime.
 *
 *   http_pages_start   listen for HTTP (its own address, loopback by
 *                      default; an optional bearer token) and serve
 *                      /healthz, /metrics, / (the queries) and
 *                      /queries/NAME (a page of plots, plain SVG drawn
 *                      here: no script library, no CDN)
 *   http_pages_port    the bound port (-1 when off)
 *   http_pages_close   stop it (cb once its handles are closed)
 *
 * /metrics is the Prometheus text format (docs/operations.md, "The
 * metrics"): process figures and uptime, connections (the server's
 * collector, server.c), per continuous query its status, counters, gauges
 * and batch-duration histogram (cq.h's CqStatus), per query and source
 * partition the lag (cq_source_lag), per stream its rows, dead letters
 * and bytes read (ingest.h's ingest_stream_figures), per sink its commits,
 * failures and retries.  Everything runs on the loop thread, which is also
 * where the scheduler updates the queries' figures between batches: a
 * scrape takes no lock a batch holds.  The listener and the close callback
 * are the Runtime's (rt->observe), and every route and collector gets the
 * Runtime as its argument: nothing here is global.
 *
 * What an unauthenticated reader sees (docs/operations.md, "The HTTP
 * listener"): names, statuses and figures, never a data value -- a query's
 * error text (which can quote the row it failed on) only with the token.
 * With a token set, every page but /healthz needs it (http.h).
 *
 * It is the server's (docs/architecture.md, "Who calls whom"): it reads the
 * running queries through the Runtime (runtime.h: Runtime.cq, the routes'
 * and collectors' arg) and cq.h, and the streams through ingest.h,
 * downward.
 */
#include "sluice/cq.h"
#include "sluice/http.h"
#include "sluice/ingest.h"
#include "sluice/log.h"
#include "sluice/metrics.h"
#include "sluice/runtime.h"

#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ collectors */

static int64_t wall_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void collect_process(StrBuf *out, void *arg)
{
    const Runtime *rt = arg;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    metrics_family(out, "process_cpu_seconds_total", "counter",
                   "Total user and system CPU time spent in seconds.");
    metrics_sample(out, "process_cpu_seconds_total", "", cpu);
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        long size;
        if (fscanf(f, "%ld %ld", &size, &pages) != 2)
            pages = 0;
        fclose(f);
    }
    metrics_family(out, "process_resident_memory_bytes", "gauge",
                   "Resident memory size in bytes.");
    metrics_sample(out, "process_resident_memory_bytes", "",
                   (double)pages * (double)sysconf(_SC_PAGESIZE));
    metrics_family(out, "process_start_time_seconds", "gauge",
                   "Start time of the process since unix epoch in seconds.");
    metrics_sample(out, "process_start_time_seconds", "", (double)(rt->started_us / 1000000));
    metrics_family(out, "sluice_uptime_seconds", "gauge",
                   "Seconds since the server started.");
    metrics_sample(out, "sluice_uptime_seconds", "",
                   (double)(wall_now_us() - rt->started_us) / 1e6);
}

typedef struct QueryFamily {
    const char *name, *type, *help;
} QueryFamily;

/* The families of each continuous query, in the order written; QF_ names
 * their places. */
enum {
    QF_STATUS, QF_LAST_BATCH, QF_BATCHES, QF_DURATION, QF_INPUT, QF_OUTPUT, QF_LATE,
    QF_RETRIES, QF_BACKLOG, QF_BEHIND, QF_WATERMARK, QF_WATERMARK_LAG, QF_STATE_ROWS,
    QF_STATE_BYTES, QF_COUNT
};

static const QueryFamily query_families[QF_COUNT] = {
    [QF_STATUS] = {"sluice_query_status", "gauge",
                   "1 for the status a continuous query is in, 0 for the others (running, "
                   "retrying, paused, failed, finished)."},
    [QF_LAST_BATCH] = {"sluice_query_last_batch_id", "gauge",
                       "Id of the last committed micro-batch, -1 if none."},
    [QF_BATCHES] = {"sluice_query_batches_total", "counter",
                    "Micro-batches the query committed since the server started it."},
    [QF_DURATION] = {"sluice_query_batch_duration_seconds", "histogram",
                     "Duration of the committed micro-batches, from plan to the state "
                     "write, in seconds."},
    [QF_INPUT] = {"sluice_query_input_rows_total", "counter",
                  "Rows read by the query's micro-batches since the server started."},
    [QF_OUTPUT] = {"sluice_query_output_rows_total", "counter",
                   "Rows the query's micro-batches wrote to its result table, stream or "
                   "sink since the server started."},
    [QF_LATE] = {"sluice_query_late_rows_total", "counter",
                 "Rows dropped or routed as late since the server started."},
    [QF_RETRIES] = {"sluice_query_retries_total", "counter",
                    "Micro-batches and log writes tried again after a transient error "
                    "since the server started."},
    [QF_BACKLOG] = {"sluice_query_backlog_rows", "gauge",
                    "Source rows available at the last plan but left for later batches."},
    [QF_BEHIND] = {"sluice_query_falling_behind", "gauge",
                   "1 while the query falls behind its input or its trigger (sys.queries)."},
    [QF_WATERMARK] = {"sluice_query_watermark_seconds", "gauge",
                      "The query's event-time watermark, seconds since the Unix epoch."},
    [QF_WATERMARK_LAG] = {"sluice_query_watermark_lag_seconds", "gauge",
                          "Wall-clock time now minus the query's event-time watermark, "
                          "in seconds."},
    [QF_STATE_ROWS] = {"sluice_query_state_rows", "gauge",
                       "Rows the query keeps in its state (sys.state)."},
    [QF_STATE_BYTES] = {"sluice_query_state_bytes", "gauge",
                        "Bytes of the keys and values the query keeps in its state "
                        "(sys.state)."},
};

static const char *const query_statuses[] = {"running", "retrying", "paused", "failed",
                                             "finished"};

typedef struct QueryCollect {
    CqStatus *st;
    int       n, cap;
} QueryCollect;

static void gather_query(const CqStatus *s, void *arg)
{
    QueryCollect *qc = arg;
    if (qc->n == qc->cap) {
        qc->cap = qc->cap ? qc->cap * 2 : 16;
        qc->st = sl_realloc(qc->st, sizeof(CqStatus) * (size_t)qc->cap);
    }
    qc->st[qc->n++] = *s;       /* its strings stay valid during this scrape */
}

/* The histogram's series of one query: cumulative buckets, +Inf, sum,
 * count. */
static void duration_samples(StrBuf *out, const char *query_label, const CqStatus *s)
{
    const char *name = query_families[QF_DURATION].name;
    StrBuf n, labels;
    strbuf_init(&n);
    strbuf_init(&labels);
    strbuf_printf(&n, "%s_bucket", name);
    int64_t cum = 0;
    for (int k = 0; k <= CQ_DURATION_BUCKETS; k++) {
        cum += s->duration_count[k];
        strbuf_reset(&labels);
        strbuf_puts(&labels, query_label);
        char le[32];
        if (k < CQ_DURATION_BUCKETS)
            snprintf(le, sizeof(le), "%g", cq_duration_bounds[k]);
        else
            snprintf(le, sizeof(le), "+Inf");
        metrics_label(&labels, "le", le);
        metrics_sample(out, n.data, labels.data, (double)cum);
    }
    strbuf_reset(&n);
    strbuf_printf(&n, "%s_sum", name);
    metrics_sample(out, n.data, query_label, s->duration_sum_s);
    strbuf_reset(&n);
    strbuf_printf(&n, "%s_count", name);
    metrics_sample(out, n.data, query_label, (double)cum);
    strbuf_free(&labels);
    strbuf_free(&n);
}

static void query_sample(StrBuf *out, int family, const CqStatus *s, int64_t now_us)
{
    StrBuf labels;
    strbuf_init(&labels);
    metrics_label(&labels, "query", s->name);
    const char *name = query_families[family].name;
    bool wm = s->has_watermark && s->watermark_us != CQ_WATERMARK_END;
    switch (family) {
    case QF_STATUS:
        for (int i = 0; i < (int)SL_ARRAY_LEN(query_statuses); i++) {
            StrBuf l;
            strbuf_init(&l);
            strbuf_puts(&l, labels.data);
            metrics_label(&l, "status", query_statuses[i]);
            metrics_sample(out, name, l.data, strcmp(s->status, query_statuses[i]) == 0);
            strbuf_free(&l);
        }
        break;
    case QF_LAST_BATCH:
        metrics_sample(out, name, labels.data, (double)s->last_batch_id);
        break;
    case QF_BATCHES:
        metrics_sample(out, name, labels.data, (double)s->batches);
        break;
    case QF_DURATION:
        duration_samples(out, labels.data, s);
        break;
    case QF_INPUT:
        metrics_sample(out, name, labels.data, (double)s->input_rows);
        break;
    case QF_OUTPUT:
        metrics_sample(out, name, labels.data, (double)s->output_rows);
        break;
    case QF_LATE:
        metrics_sample(out, name, labels.data, (double)s->late_rows);
        break;
    case QF_RETRIES:
        metrics_sample(out, name, labels.data, (double)s->retries);
        break;
    case QF_BACKLOG:
        metrics_sample(out, name, labels.data, (double)s->backlog_rows);
        break;
    case QF_BEHIND:
        metrics_sample(out, name, labels.data, s->falling_behind ? 1 : 0);
        break;
    case QF_WATERMARK:
        if (s->has_watermark)
            metrics_sample(out, name, labels.data,
                           !wm ? INFINITY      /* every input ended: +Inf */
                               : (double)(s->watermark_us + SL_PG_EPOCH_UNIX_US) / 1e6);
        break;
    case QF_WATERMARK_LAG:
        /* none once every input ended: nothing is left to wait for */
        if (wm)
            metrics_sample(out, name, labels.data,
                           (double)(now_us - (s->watermark_us + SL_PG_EPOCH_UNIX_US)) / 1e6);
        break;
    case QF_STATE_ROWS:
        if (s->state_rows >= 0)
            metrics_sample(out, name, labels.data, (double)s->state_rows);
        break;
    default:
        if (s->state_bytes >= 0)
            metrics_sample(out, name, labels.data, (double)s->state_bytes);
        break;
    }
    strbuf_free(&labels);
}

/* Per sink a query writes INTO (CREATE SINK): its commits, failures and
 * retries, labelled with the sink and the query (each query opens the sink
 * for itself). */
static void sink_families(StrBuf *out, const QueryCollect *qc)
{
    static const struct {
        const char *name, *help;
    } fams[] = {
        {"sluice_sink_commits_total",
         "Batches a continuous query committed to the sink since the server started it."},
        {"sluice_sink_commit_failures_total",
         "Commits to the sink that failed (the batch is retried or the query fails)."},
        {"sluice_sink_commit_retries_total",
         "Commits to the sink of a batch tried before (run again after a failure)."},
    };
    for (int k = 0; k < (int)SL_ARRAY_LEN(fams); k++) {
        metrics_family(out, fams[k].name, "counter", fams[k].help);
        for (int i = 0; i < qc->n; i++) {
            const CqStatus *s = &qc->st[i];
            if (s->sink == NULL)
                continue;
            StrBuf labels;
            strbuf_init(&labels);
            metrics_label(&labels, "sink", s->sink);
            metrics_label(&labels, "query", s->name);
            int64_t v = k == 0 ? s->sink_commits : k == 1 ? s->sink_failures : s->sink_retries;
            metrics_sample(out, fams[k].name, labels.data, (double)v);
            strbuf_free(&labels);
        }
    }
}

/* The queries' statuses are read once per scrape (each reads its state
 * row count from RocksDB: one read, no lock a batch holds; the other
 * figures are the registry's, on this loop thread), then written family by
 * family. */
static void collect_queries(StrBuf *out, void *arg)
{
    const Runtime *run = arg;
    CqRuntime *rt = run->cq;
    if (rt == NULL)
        return;
    QueryCollect qc = {0};
    cq_foreach(rt, gather_query, &qc);
    int64_t now = wall_now_us();
    for (int f = 0; f < QF_COUNT; f++) {
        metrics_family(out, query_families[f].name, query_families[f].type,
                       query_families[f].help);
        for (int i = 0; i < qc.n; i++)
            query_sample(out, f, &qc.st[i], now);
    }
    sink_families(out, &qc);
    sl_free(qc.st);
}

/* sluice_source_lag_records: one sample per query, source and partition
 * (sys.source_lag), written as the registry walks them. */
static void source_lag_sample(const CqSourceLag *l, void *arg)
{
    StrBuf *out = arg;
    StrBuf labels;
    strbuf_init(&labels);
    char part[16];
    snprintf(part, sizeof(part), "%d", (int)l->partition);
    metrics_label(&labels, "query", l->query);
    metrics_label(&labels, "source", l->source);
    metrics_label(&labels, "topic", l->topic != NULL ? l->topic : "");
    metrics_label(&labels, "partition", part);
    metrics_sample(out, "sluice_source_lag_records", labels.data, (double)l->lag);
    strbuf_free(&labels);
}

static void collect_sources(StrBuf *out, void *arg)
{
    const Runtime *run = arg;
    if (run->cq == NULL)
        return;
    metrics_family(out, "sluice_source_lag_records", "gauge",
                   "Records of a source partition behind its latest offset, per continuous "
                   "query (sys.source_lag).");
    cq_source_lag(run->cq, source_lag_sample, out);
}

/* Per stream: the figures are gathered once, then written family by
 * family. */
typedef struct StreamFig {
    char   *stream;
    char   *connector;
    int64_t rows, dead, bytes;
} StreamFig;

typedef struct StreamCollect {
    StreamFig *f;
    int        n, cap;
} StreamCollect;

static void gather_stream(const IngestFigures *f, void *arg)
{
    StreamCollect *sc = arg;
    if (sc->n == sc->cap) {
        sc->cap = sc->cap ? sc->cap * 2 : 16;
        sc->f = sl_realloc(sc->f, sizeof(StreamFig) * (size_t)sc->cap);
    }
    sc->f[sc->n++] = (StreamFig){sl_strdup(f->stream), sl_strdup(f->connector), f->rows,
                                 f->dead_letters, f->bytes};
}

static void collect_streams(StrBuf *out, void *arg)
{
    Runtime *run = arg;
    StreamCollect sc = {0};
    ingest_stream_figures(run, gather_stream, &sc);
    static const struct {
        const char *name, *help;
    } fams[] = {
        {"sluice_stream_rows_total",
         "Rows ever appended to the stream (INSERT, COPY, the files connector, queries "
         "writing INTO it): its end offset."},
        {"sluice_stream_dead_letters_total",
         "Records of the stream that could not be decoded, ever appended to "
         "<stream>_dead_letters."},
        {"sluice_stream_ingest_bytes_total",
         "Bytes of whole records the files connector read into the stream since the "
         "server started."},
    };
    for (int k = 0; k < (int)SL_ARRAY_LEN(fams); k++) {
        metrics_family(out, fams[k].name, "counter", fams[k].help);
        for (int i = 0; i < sc.n; i++) {
            int64_t v = k == 0 ? sc.f[i].rows : k == 1 ? sc.f[i].dead : sc.f[i].bytes;
            if (v < 0)
                continue;
            StrBuf labels;
            strbuf_init(&labels);
            metrics_label(&labels, "stream", sc.f[i].stream);
            metrics_label(&labels, "connector", sc.f[i].connector);
            metrics_sample(out, fams[k].name, labels.data, (double)v);
            strbuf_free(&labels);
        }
    }
    for (int i = 0; i < sc.n; i++) {
        sl_free(sc.f[i].stream);
        sl_free(sc.f[i].connector);
    }
    sl_free(sc.f);
}

/* ---------------------------------------------------------------- routes */

static void serve_healthz(const HttpRequest *req, HttpResponse *resp, void *arg)
{
    SL_UNUSED(req);
    SL_UNUSED(arg);
    strbuf_puts(&resp->body, "ok\n");
}

static void serve_metrics(const HttpRequest *req, HttpResponse *resp, void *arg)
{
    SL_UNUSED(req);
    SL_UNUSED(arg);
    resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
    metrics_render(&resp->body);
}

/* ----------------------------------------------------------------- pages */

static void put_html(StrBuf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '<': strbuf_puts(b, "&lt;"); break;
        case '>': strbuf_puts(b, "&gt;"); break;
        case '&': strbuf_puts(b, "&amp;"); break;
        case '"': strbuf_puts(b, "&quot;"); break;
        case '\'': strbuf_puts(b, "&#39;"); break;
        default: strbuf_putc(b, *s); break;
        }
    }
}

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

static const char page_head[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
    "<meta http-equiv=\"refresh\" content=\"5\">"
    "<title>%s</title><style>"
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left}"
    ".chart{display:inline-block;margin:0 1em 1em 0}"
    ".legend span{margin-right:1em}"
    "</style></head><body>\n";

/* After layout, each line records the length the browser drew, so a
 * headless browser's DOM shows whether the plots were drawn with data. */
static const char page_tail[] =
    "<script>for(const l of document.querySelectorAll('polyline'))"
    "l.setAttribute('data-drawn-length',l.getTotalLength().toFixed(1));</script>"
    "</body></html>\n";

typedef struct IndexWalk {
    StrBuf *b;
} IndexWalk;

static void index_row(const CqStatus *s, void *arg)
{
    StrBuf *b = ((IndexWalk *)arg)->b;
    strbuf_puts(b, "<tr><td><a href=\"/queries/");
    put_url_segment(b, s->name);
    strbuf_puts(b, "\">");
    put_html(b, s->name);
    strbuf_printf(b, "</a></td><td>%s</td><td>%lld</td><td>%s</td></tr>\n", s->status,
                  (long long)s->last_batch_id, s->falling_behind ? "yes" : "no");
}

static void serve_index(const HttpRequest *req, HttpResponse *resp, void *arg)
{
    SL_UNUSED(req);
    resp->content_type = "text/html; charset=utf-8";
    StrBuf *b = &resp->body;
    strbuf_printf(b, page_head, "sluice");
    strbuf_puts(b, "<h1>sluice</h1><p><a href=\"/metrics\">/metrics</a> &middot; "
                   "<a href=\"/healthz\">/healthz</a></p>\n"
                   "<h2>Continuous queries</h2><table><tr><th>query</th><th>status</th>"
                   "<th>last batch</th><th>falling behind</th></tr>\n");
    IndexWalk w = {b};
    const Runtime *run = arg;
    if (run->cq != NULL)
        cq_foreach(run->cq, index_row, &w);
    strbuf_puts(b, "</table>\n");
    strbuf_puts(b, page_tail);
}

/* One plotted line: n values, NAN where there is none. */
typedef struct Series {
    const char   *name;
    const char   *color;
    const double *y;
} Series;

#define CHART_W 460
#define CHART_H 220
#define CHART_L 70      /* left margin: the axis labels */
#define CHART_B 30      /* bottom margin */
#define CHART_T 10

static void fmt_value(char *buf, size_t n, double v)
{
    double a = fabs(v);
    if (a >= 1e9)
        snprintf(buf, n, "%.3gG", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, n, "%.3gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(buf, n, "%.3gk", v / 1e3);
    else
        snprintf(buf, n, "%.4g", v);
}

/* An SVG line chart of the series over batch ids x[0..n). */
static void put_chart(StrBuf *b, const char *id, const char *title, const char *unit,
                      const int64_t *x, int n, const Series *ss, int ns)
{
    double lo = 0, hi = 0;
    bool any = false;
    for (int s = 0; s < ns; s++)
        for (int i = 0; i < n; i++) {
            double v = ss[s].y[i];
            if (isnan(v))
                continue;
            if (!any || v > hi)
                hi = v;
            if (!any || v < lo)
                lo = v;
            any = true;
        }
    if (lo > 0)
        lo = 0;
    if (hi <= lo)
        hi = lo + 1;
    double x0 = n > 0 ? (double)x[0] : 0, x1 = n > 1 ? (double)x[n - 1] : x0 + 1;
    if (x1 <= x0)
        x1 = x0 + 1;
    const int pw = CHART_W - CHART_L - 10, ph = CHART_H - CHART_B - CHART_T;
    char lo_s[32], hi_s[32];
    fmt_value(lo_s, sizeof(lo_s), lo);
    fmt_value(hi_s, sizeof(hi_s), hi);
    strbuf_printf(b, "<div class=\"chart\" id=\"%s\"><h3>%s</h3>", id, title);
    strbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">",
                  CHART_W, CHART_H);
    strbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
                     "stroke=\"#999\"/>", CHART_L, CHART_T, pw, ph);
    strbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>",
                  CHART_L - 4, CHART_T + 10, hi_s);
    strbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>",
                  CHART_L - 4, CHART_T + ph, lo_s);
    strbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\">batch %.0f</text>", CHART_L,
                  CHART_H - 8, x0);
    strbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">"
                     "batch %.0f (%s)</text>", CHART_L + pw, CHART_H - 8, x1, unit);
    for (int s = 0; s < ns; s++) {
        strbuf_printf(b, "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" "
                         "stroke=\"%s\" stroke-width=\"2\" points=\"", ss[s].name, ss[s].color);
        for (int i = 0; i < n; i++) {
            if (isnan(ss[s].y[i]))
                continue;
            double px = CHART_L + ((double)x[i] - x0) / (x1 - x0) * pw;
            double py = CHART_T + ph - (ss[s].y[i] - lo) / (hi - lo) * ph;
            strbuf_printf(b, "%.1f,%.1f ", px, py);
        }
        strbuf_puts(b, "\"/>");
    }
    strbuf_puts(b, "</svg><div class=\"legend\">");
    for (int s = 0; s < ns; s++)
        strbuf_printf(b, "<span style=\"color:%s\">&#9632; %s</span>", ss[s].color, ss[s].name);
    strbuf_puts(b, "</div></div>\n");
}

/* /queries/NAME: the query's status and four plots over its recent
 * batches: input and processed rates, batch duration against the trigger
 * interval, watermark lag, state rows. */
static void serve_query(const HttpRequest *req, HttpResponse *resp, void *arg)
{
    const Runtime *run = arg;
    const char *name = req->path + strlen("/queries/");
    CqRuntime *rt = run->cq;
    CqStatus st;
    if (rt == NULL || !cq_status_of(rt, name, &st)) {
        resp->status = 404;
        strbuf_puts(&resp->body, "no such continuous query\n");
        return;
    }
    CqProgress *ring = sl_malloc(sizeof(CqProgress) * CQ_PROGRESS_KEEP);
    SlError err = {0};
    int n = cq_progress(rt, name, ring, CQ_PROGRESS_KEEP, &err);
    sl_error_clear(&err);
    if (n < 0)
        n = 0;
    /* oldest first */
    int64_t *x = sl_malloc(sizeof(int64_t) * (size_t)(n + 1));
    double *y = sl_malloc(sizeof(double) * (size_t)(6 * (n + 1)));
    double *in_rate = y, *done_rate = y + n, *dur = y + 2 * n, *trig = y + 3 * n,
           *lag = y + 4 * n, *state = y + 5 * n;
    for (int i = 0; i < n; i++) {
        const CqProgress *p = &ring[n - 1 - i], *prev = i > 0 ? &ring[n - i] : NULL;
        x[i] = p->batch_id;
        int64_t gap = prev ? p->started_us - prev->started_us : 0;
        in_rate[i] = gap > 0 ? (double)p->input_rows * 1e6 / (double)gap : NAN;
        done_rate[i] = p->total_us > 0 ? (double)p->input_rows * 1e6 / (double)p->total_us : NAN;
        dur[i] = (double)p->total_us / 1000.0;
        trig[i] = st.trigger_ms > 0 ? (double)st.trigger_ms : NAN;
        lag[i] = p->has_watermark && p->watermark_us != CQ_WATERMARK_END
                     ? (double)(p->started_us - (p->watermark_us + SL_PG_EPOCH_UNIX_US)) / 1e6
                     : NAN;
        state[i] = (double)p->state_rows;
    }
    resp->content_type = "text/html; charset=utf-8";
    StrBuf *b = &resp->body;
    StrBuf title;
    strbuf_init(&title);
    put_html(&title, name);
    strbuf_printf(b, page_head, title.data);
    strbuf_printf(b, "<p><a href=\"/\">all queries</a></p><h1>%s</h1>", title.data);
    strbuf_free(&title);
    strbuf_printf(b, "<table><tr><th>status</th><td>%s</td></tr>"
                     "<tr><th>last batch</th><td>%lld</td></tr>"
                     "<tr><th>input rows</th><td>%lld</td></tr>"
                     "<tr><th>late rows</th><td>%lld</td></tr>"
                     "<tr><th>falling behind</th><td>%s</td></tr>",
                  st.status, (long long)st.last_batch_id, (long long)st.input_rows,
                  (long long)st.late_rows, st.falling_behind ? "yes" : "no");
    /* An error message can quote the data it failed on: only a reader
     * with the HTTP token sees it (sys.queries shows it over SQL). */
    if (st.error != NULL && req->authenticated) {
        strbuf_puts(b, "<tr><th>error</th><td>");
        put_html(b, st.error);
        strbuf_puts(b, "</td></tr>");
    } else if (st.error != NULL) {
        strbuf_puts(b, "<tr><th>error</th><td>(shown only to a request with the HTTP "
                       "token; see sys.queries.last_error)</td></tr>");
    }
    strbuf_printf(b, "</table><p>The last %d batches.</p>\n", n);
    Series rates[] = {{"input rows/s", "#1f77b4", in_rate},
                      {"processed rows/s", "#2ca02c", done_rate}};
    Series durs[] = {{"batch duration", "#d62728", dur}, {"trigger interval", "#7f7f7f", trig}};
    Series lags[] = {{"watermark lag", "#9467bd", lag}};
    Series states[] = {{"state rows", "#ff7f0e", state}};
    put_chart(b, "rates", "Input and processed rate", "rows/s", x, n, rates, 2);
    put_chart(b, "duration", "Batch duration and trigger", "ms", x, n, durs,
              st.trigger_ms > 0 ? 2 : 1);
    put_chart(b, "watermark", "Watermark lag", "s", x, n, lags, 1);
    put_chart(b, "state", "State size", "rows", x, n, states, 1);
    strbuf_puts(b, page_tail);
    sl_free(y);
    sl_free(x);
    sl_free(ring);
}

int http_pages_start(Runtime *rt, const char *listen, int port, const char *token,
                     SlError *err)
{
    HttpServer *hs = http_init(&rt->loop, listen, port, token, err);
    if (hs == NULL)
        return -1;
    rt->observe.http = hs;
    /* With a token, only /healthz is served without it. */
    http_route(hs, "/", serve_index, rt, false);
    http_route(hs, "/healthz", serve_healthz, rt, true);
    http_route(hs, "/metrics", serve_metrics, rt, false);
    http_route(hs, "/queries/", serve_query, rt, false);
    metrics_register(collect_process, rt);
    metrics_register(collect_queries, rt);
    metrics_register(collect_sources, rt);
    metrics_register(collect_streams, rt);
    return 0;
}

int http_pages_port(const Runtime *rt)
{
    return rt->observe.http != NULL ? http_port(rt->observe.http) : -1;
}

static void on_http_closed(void *arg)
{
    Runtime *rt = arg;
    rt->observe.http = NULL;
    if (rt->observe.closed != NULL)
        rt->observe.closed(rt);
}

void http_pages_close(Runtime *rt, void (*cb)(Runtime *rt))
{
    if (rt->observe.http == NULL) {
        if (cb != NULL)
            cb(rt);
        return;
    }
    metrics_unregister(collect_process, rt);
    metrics_unregister(collect_queries, rt);
    metrics_unregister(collect_sources, rt);
    metrics_unregister(collect_streams, rt);
    rt->observe.closed = cb;
    http_close(rt->observe.http, on_http_closed, rt);
}
