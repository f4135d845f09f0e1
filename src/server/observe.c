/*
 * observe.c -- the HTTP side of observability (docs/operations.md
 * "Observability"): the routes of the HTTP listener and the collectors
 * of /metrics that read the runtime.
 *
 *   http_pages_start   listen for HTTP (its own address, loopback by
 *                      default; an optional bearer token) and serve
 *                      /healthz, /metrics, / (the overview) and
 *                      /queries/NAME (a query's page): the pages are
 *                      pages.c's, drawn there with no script library and
 *                      no CDN
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
#include "pages.h"
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
static void sink_families(StrBuf *out, const QueryList *qc)
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
    QueryList qc = {0};
    pages_queries(rt, &qc);
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

/* Per stream: the figures are gathered once (pages_streams), then written
 * family by family. */
static void collect_streams(StrBuf *out, void *arg)
{
    Runtime *run = arg;
    StreamList sc = {0};
    pages_streams(run, &sc);
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
            int64_t v = k == 0 ? sc.f[i].rows : k == 1 ? sc.f[i].dead_letters : sc.f[i].bytes;
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
    pages_streams_free(&sc);
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

int http_pages_start(Runtime *rt, const char *listen, int port, const char *token,
                     const char *version, SlError *err)
{
    HttpServer *hs = http_init(&rt->loop, listen, port, token, err);
    if (hs == NULL)
        return -1;
    rt->observe.http = hs;
    rt->observe.pages = pages_new(rt, version);
    /* With a token, only /healthz is served without it. */
    http_route(hs, "/", pages_overview, rt->observe.pages, false);
    http_route(hs, "/healthz", serve_healthz, rt, true);
    http_route(hs, "/metrics", serve_metrics, rt, false);
    http_route(hs, "/queries/", pages_query, rt->observe.pages, false);
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

static void on_pages_closed(void *arg)
{
    Runtime *rt = arg;
    rt->observe.pages = NULL;
    if (rt->observe.closed != NULL)
        rt->observe.closed(rt);
}

/* No page is served once the listener is closed: then the pages go. */
static void on_http_closed(void *arg)
{
    Runtime *rt = arg;
    rt->observe.http = NULL;
    pages_close(rt->observe.pages, on_pages_closed, rt);
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
