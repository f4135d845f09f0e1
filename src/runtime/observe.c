/*
 * observe.c -- the HTTP side of observability (docs/operations.md
 * "Observability"): the routes of the HTTP listener and the collectors
 * of /metrics that read the runtime.
 *
 *   rt_http_start   listen for HTTP and serve /healthz, /metrics and /
 *   rt_http_port    the bound port (-1 when off)
 *   rt_http_close   stop it (cb once its handles are closed)
 *
 * /metrics is the Prometheus text format: process figures, connections
 * (the server's collector, server.c) and one series per continuous query.
 * Everything runs on the loop thread.
 */
#include "runtime_int.h"

#include "sluice/cq.h"
#include "sluice/http.h"
#include "sluice/log.h"
#include "sluice/metrics.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Microseconds between 1970-01-01 and 2000-01-01, PostgreSQL's epoch. */
#define PG_EPOCH_OFFSET_US INT64_C(946684800000000)

static HttpServer *g_http;
static int64_t     g_start_us;
static void      (*g_close_cb)(void);

/* ------------------------------------------------------------ collectors */

static void collect_process(StrBuf *out, void *arg)
{
    SL_UNUSED(arg);
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
    metrics_sample(out, "process_start_time_seconds", "", (double)(g_start_us / 1000000));
}

typedef struct QueryFamily {
    const char *name, *type, *help;
} QueryFamily;

static const QueryFamily query_families[] = {
    {"sluice_query_status", "gauge",
     "1 for the status a continuous query is in (running, paused, failed, finished)."},
    {"sluice_query_last_batch_id", "gauge", "Id of the last committed micro-batch, -1 if none."},
    {"sluice_query_input_rows_total", "counter",
     "Rows read by the query's micro-batches since the server started."},
    {"sluice_query_watermark_seconds", "gauge",
     "The query's event-time watermark, seconds since the Unix epoch."},
};

typedef struct QueryCollect {
    StrBuf *out;
    int     family;
} QueryCollect;

static void collect_one_query(const CqStatus *s, void *arg)
{
    QueryCollect *qc = arg;
    StrBuf labels;
    strbuf_init(&labels);
    metrics_label(&labels, "query", s->name);
    const char *name = query_families[qc->family].name;
    switch (qc->family) {
    case 0:
        metrics_label(&labels, "status", s->status);
        metrics_sample(qc->out, name, labels.data, 1);
        break;
    case 1:
        metrics_sample(qc->out, name, labels.data, (double)s->last_batch_id);
        break;
    case 2:
        metrics_sample(qc->out, name, labels.data, (double)s->input_rows);
        break;
    default:
        if (s->has_watermark)
            metrics_sample(qc->out, name, labels.data,
                           (double)(s->watermark_us + PG_EPOCH_OFFSET_US) / 1e6);
        break;
    }
    strbuf_free(&labels);
}

static void collect_queries(StrBuf *out, void *arg)
{
    SL_UNUSED(arg);
    CqRuntime *rt = rt_cq_runtime();
    if (rt == NULL)
        return;
    for (int f = 0; f < (int)SL_ARRAY_LEN(query_families); f++) {
        metrics_family(out, query_families[f].name, query_families[f].type,
                       query_families[f].help);
        QueryCollect qc = {out, f};
        cq_foreach(rt, collect_one_query, &qc);
    }
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

static void serve_index(const HttpRequest *req, HttpResponse *resp, void *arg)
{
    SL_UNUSED(req);
    SL_UNUSED(arg);
    resp->content_type = "text/plain; charset=utf-8";
    strbuf_puts(&resp->body, "sluice\n\n/healthz\n/metrics\n");
}

int rt_http_start(uv_loop_t *loop, const char *listen, int port, SlError *err)
{
    g_http = http_init(loop, listen, port, err);
    if (g_http == NULL)
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    g_start_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    http_route(g_http, "/", serve_index, NULL);
    http_route(g_http, "/healthz", serve_healthz, NULL);
    http_route(g_http, "/metrics", serve_metrics, NULL);
    metrics_register(collect_process, NULL);
    metrics_register(collect_queries, NULL);
    return 0;
}

int rt_http_port(void)
{
    return g_http != NULL ? http_port(g_http) : -1;
}

static void on_http_closed(HttpServer *hs)
{
    SL_UNUSED(hs);
    g_http = NULL;
    if (g_close_cb != NULL)
        g_close_cb();
}

void rt_http_close(void (*cb)(void))
{
    if (g_http == NULL) {
        if (cb != NULL)
            cb();
        return;
    }
    metrics_unregister(collect_process, NULL);
    metrics_unregister(collect_queries, NULL);
    g_close_cb = cb;
    http_close(g_http, on_http_closed);
}
